//! Importing an image tarball into a node's containerd.

use crate::external::ExternalCommand;
use std::ffi::OsStr;
use std::path::Path;

/// The containerd namespace the kubelet's CRI plugin keeps its images in:
/// an image imported anywhere else is invisible to pods.
pub const K8S_NAMESPACE: &str = "k8s.io";

/// `ctr --address <socket> -n k8s.io images import <tarball>`: imports the
/// docker-archive `tarball` into the containerd listening on
/// `containerd_socket`, where pods of that node find it by its tag (with an
/// `imagePullPolicy` that does not pull). Run it with
/// [`crate::external::run`] or a [`crate::external::CommandRunner`].
pub fn import_command(containerd_socket: &Path, tarball: &Path) -> ExternalCommand {
    ExternalCommand::new(
        "ctr",
        [
            OsStr::new("--address"),
            containerd_socket.as_os_str(),
            OsStr::new("-n"),
            OsStr::new(K8S_NAMESPACE),
            OsStr::new("images"),
            OsStr::new("import"),
            tarball.as_os_str(),
        ],
        format!(
            "import the image {} into the containerd at {}",
            tarball.display(),
            containerd_socket.display()
        ),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn import_runs_ctr_in_the_kubelets_namespace() {
        let command = import_command(
            Path::new("/run/schedlab/node-1/containerd.sock"),
            Path::new("/var/cache/schedlab/images/scheduler dev.tar"),
        );
        assert_eq!(
            command.shell(),
            "ctr --address /run/schedlab/node-1/containerd.sock -n k8s.io images import \
             '/var/cache/schedlab/images/scheduler dev.tar'"
        );
        assert!(command.why.contains("node-1/containerd.sock"), "{}", command.why);
    }
}
