//! The one piece of cluster configuration the control plane needs at start:
//! schedlab's own scheduler identity (`agmarl`) bound to the roles the
//! default scheduler has.

use super::error::ProvisionError;
use crate::external::ExternalCommand;
use std::io::Write;
use std::path::Path;
use std::process::{Command, Stdio};

/// (binding name, cluster role) pairs for the `agmarl` user.
pub const AGMARL_BINDINGS: &[(&str, &str)] = &[
    ("agmarl-kube-scheduler", "system:kube-scheduler"),
    ("agmarl-volume-scheduler", "system:volume-scheduler"),
];

/// The ClusterRoleBinding object binding `user` to `role`.
pub fn binding_json(name: &str, role: &str, user: &str) -> String {
    serde_json::json!({
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": "ClusterRoleBinding",
        "metadata": {"name": name},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": role},
        "subjects": [{"apiGroup": "rbac.authorization.k8s.io", "kind": "User", "name": user}],
    })
    .to_string()
}

/// (binding name, cluster role) for the kubelets of real nodes: the role
/// 1.20 grants a kubelet (there is no Node authorizer here).
pub const KUBELET_BINDINGS: &[(&str, &str)] = &[("schedlab-kubelets", "system:node")];

/// Creates the `agmarl` user's bindings through the API (an existing one is left as it is).
pub fn bind_agmarl(server: &str, ca_file: &Path, admin_token: &str, user: &str) -> Result<(), ProvisionError> {
    bind_user(server, ca_file, admin_token, user, AGMARL_BINDINGS)
}

/// Creates `bindings` of `user` through the API (an existing one is left as it is).
pub fn bind_user(
    server: &str,
    ca_file: &Path,
    admin_token: &str,
    user: &str,
    bindings: &[(&str, &str)],
) -> Result<(), ProvisionError> {
    let url = format!("{server}/apis/rbac.authorization.k8s.io/v1/clusterrolebindings");
    for (name, role) in bindings {
        let body = binding_json(name, role, user);
        let mut command = Command::new("curl");
        command
            .args([
                "--silent",
                "--show-error",
                "--max-time",
                "10",
                "--output",
                "/dev/null",
                "--write-out",
                "%{http_code}",
            ])
            .arg("--cacert")
            .arg(ca_file)
            .args(["-H", "Content-Type: application/json", "-H"])
            .arg(format!("Authorization: Bearer {admin_token}"))
            .args(["-X", "POST", "--data-binary", "@-"])
            .arg(&url)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        // described without its arguments: one of them holds the admin token
        let described = ExternalCommand::new("curl", ["-X", "POST", url.as_str()], format!("create {name}"));
        let mut child = command.spawn().map_err(|e| described.spawn_error(e))?;
        if let Some(mut stdin) = child.stdin.take() {
            stdin.write_all(body.as_bytes()).map_err(|e| described.spawn_error(e))?;
        }
        let output = child.wait_with_output().map_err(|e| described.spawn_error(e))?;
        let http = String::from_utf8_lossy(&output.stdout).trim().to_owned();
        // 201 created; 409 already there (a reused etcd).
        if !(output.status.success() && (http == "201" || http == "409")) {
            let stderr = String::from_utf8_lossy(&output.stderr);
            return Err(described
                .failed(output.status.code(), format!("HTTP {http} {}", stderr.trim()))
                .into());
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn binding_names_role_and_user() {
        let v: serde_json::Value = serde_json::from_str(&binding_json("b", "system:kube-scheduler", "agmarl")).unwrap();
        assert_eq!(v["kind"], "ClusterRoleBinding");
        assert_eq!(v["roleRef"]["name"], "system:kube-scheduler");
        assert_eq!(v["roleRef"]["kind"], "ClusterRole");
        assert_eq!(v["subjects"][0]["kind"], "User");
        assert_eq!(v["subjects"][0]["name"], "agmarl");
    }
}
