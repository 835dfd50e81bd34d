//! Kubeconfig files for the users of the local control plane.

use super::error::ProvisionError;
use std::path::Path;

/// A kubeconfig with one cluster (the CA file and server URL), one
/// token user, and that pair as the current context.
pub fn render(server: &str, ca_file: &Path, user: &str, token: &str) -> String {
    // JSON strings are valid YAML scalars and escape whatever a path holds.
    let q = |s: &str| serde_json::Value::String(s.to_owned()).to_string();
    format!(
        "apiVersion: v1\nkind: Config\nclusters:\n- name: local\n  cluster:\n    server: {}\n    certificate-authority: {}\nusers:\n- name: {}\n  user:\n    token: {}\ncontexts:\n- name: local\n  context:\n    cluster: local\n    user: {}\ncurrent-context: local\n",
        q(server),
        q(&ca_file.to_string_lossy()),
        q(user),
        q(token),
        q(user)
    )
}

/// Writes [`render`]'s text to `path`, readable by its owner only (it holds a token).
pub fn write(path: &Path, server: &str, ca_file: &Path, user: &str, token: &str) -> Result<(), ProvisionError> {
    use std::os::unix::fs::PermissionsExt;
    std::fs::write(path, render(server, ca_file, user, token)).map_err(ProvisionError::io("cannot write", path))?;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o600))
        .map_err(ProvisionError::io("cannot chmod", path))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kubeconfig_names_server_ca_and_token() {
        let text = render("https://127.0.0.1:16443", Path::new("/s/pki/ca.crt"), "admin", "abc123");
        assert_eq!(
            text,
            "apiVersion: v1\nkind: Config\nclusters:\n- name: local\n  cluster:\n    server: \"https://127.0.0.1:16443\"\n    certificate-authority: \"/s/pki/ca.crt\"\nusers:\n- name: \"admin\"\n  user:\n    token: \"abc123\"\ncontexts:\n- name: local\n  context:\n    cluster: local\n    user: \"admin\"\ncurrent-context: local\n"
        );
    }

    #[test]
    fn odd_characters_are_quoted() {
        let text = render(
            "https://127.0.0.1:1",
            Path::new("/a \"b\"/ca.crt"),
            "system:kube-scheduler",
            "t",
        );
        assert!(text.contains(r#"certificate-authority: "/a \"b\"/ca.crt""#), "{text}");
        assert!(text.contains("user: \"system:kube-scheduler\""), "{text}");
    }
}
