//! The images every real node holds, written without Docker and imported
//! into each node's containerd (never pulled): the pause program's, which
//! every pod sandbox runs, and, when their programs are given, the
//! workload's (what a scenario's pods run) and the in-cluster scheduler's,
//! tagged as `deploy/kustomize` and the kube backend name them.

use super::error::KubeletError;
use crate::external::{self, ExternalCommand};
use crate::images::{ImageFile, ImageSpec, glibc_program_image, write_docker_archive};
use crate::local::CacheLayout;
use std::path::{Path, PathBuf};

/// The pause image every pod sandbox runs.
pub const PAUSE_IMAGE: &str = "docker.io/schedlab/pause:dev";
/// `schedlab/workload:dev` as the kubelet looks it up.
pub const WORKLOAD_IMAGE: &str = "docker.io/schedlab/workload:dev";
/// `schedlab/agmarl-scheduler:dev` as the kubelet looks it up.
pub const SCHEDULER_IMAGE: &str = "docker.io/schedlab/agmarl-scheduler:dev";

/// The programs of the workload and in-cluster scheduler images: this
/// machine's glibc builds (`workload-runner`, `agmarl-scheduler`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PodPrograms {
    pub workload: PathBuf,
    pub scheduler: PathBuf,
}

impl PodPrograms {
    pub const WORKLOAD: &'static str = "schedlab-workload";
    pub const SCHEDULER: &'static str = "agmarl-scheduler";

    /// The programs in `dir`, where cargo puts every binary of the workspace
    /// built with one profile (beside `schedlab` itself).
    pub fn beside(dir: &Path) -> Result<PodPrograms, KubeletError> {
        let programs = PodPrograms {
            workload: dir.join(Self::WORKLOAD),
            scheduler: dir.join(Self::SCHEDULER),
        };
        let missing: Vec<String> = [&programs.workload, &programs.scheduler]
            .into_iter()
            .filter(|p| !p.is_file())
            .map(|p| p.display().to_string())
            .collect();
        if missing.is_empty() {
            Ok(programs)
        } else {
            Err(KubeletError::MissingPrograms { missing })
        }
    }
}

/// Writes the images' tarballs (the pause image's into the cache, the
/// others into `dir`, from programs whose debug info is stripped) and
/// returns (tag, tarball) of each.
pub fn write_all(
    cache: &CacheLayout,
    dir: &Path,
    programs: Option<&PodPrograms>,
) -> crate::Result<Vec<(&'static str, PathBuf)>> {
    let mut out = vec![(PAUSE_IMAGE, pause_image(cache)?)];
    let Some(programs) = programs else {
        return Ok(out);
    };
    std::fs::create_dir_all(dir).map_err(KubeletError::io("cannot create", dir))?;
    for (tag, name, program) in [
        (WORKLOAD_IMAGE, PodPrograms::WORKLOAD, &programs.workload),
        (SCHEDULER_IMAGE, PodPrograms::SCHEDULER, &programs.scheduler),
    ] {
        out.push((tag, program_image(program, dir, tag, name)?));
    }
    Ok(out)
}

/// The tarball (in `dir`) of an image that runs `program` as `/usr/local/bin/<name>`, tagged `tag`, from a copy of
/// it without debug info: a debug build is hundreds of MB of debug info each node would import.
pub fn program_image(program: &Path, dir: &Path, tag: &str, name: &str) -> crate::Result<PathBuf> {
    std::fs::create_dir_all(dir).map_err(KubeletError::io("cannot create", dir))?;
    let stripped = dir.join(name);
    external::run(
        &ExternalCommand::new("objcopy", ["--strip-debug"], format!("strip the debug info of {name}"))
            .arg(program)
            .arg(&stripped),
    )?;
    let spec = glibc_program_image(&stripped, tag, &format!("/usr/local/bin/{name}"))?;
    let tarball = dir.join(format!("{name}.tar"));
    write_docker_archive(&spec, &tarball)?;
    Ok(tarball)
}

/// Imports the image `tarball` into the containerd of every real node recorded in `state_dir` whose containerd
/// runs (an image a pod's `imagePullPolicy: Never` finds there); the nodes' names.
pub fn import_into_nodes(state_dir: &Path, tarball: &Path) -> crate::Result<Vec<String>> {
    let mut imported = Vec::new();
    for node in super::recorded(state_dir) {
        let processes = node.processes();
        let running = crate::local::process::recorded(&processes, super::node::CONTAINERD)?
            .is_some_and(crate::local::process::is_ours);
        if !running {
            continue;
        }
        external::run(&crate::images::import_command(&node.containerd_socket(), tarball))?;
        imported.push(node.name.clone());
    }
    Ok(imported)
}

/// The pause image's tarball in the cache, written from the cached pause
/// program when missing.
pub fn pause_image(cache: &CacheLayout) -> crate::Result<PathBuf> {
    let program = cache.binary(crate::local::build::PAUSE);
    let tarball = cache.root.join("images/pause.tar");
    if tarball.is_file() {
        return Ok(tarball);
    }
    if let Some(dir) = tarball.parent() {
        std::fs::create_dir_all(dir).map_err(KubeletError::io("cannot create", dir))?;
    }
    let mut spec = ImageSpec::new(PAUSE_IMAGE, vec!["/pause".into()]);
    spec.files.push(ImageFile::host("/pause", program, 0o755));
    write_docker_archive(&spec, &tarball)?;
    Ok(tarball)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn missing_programs_are_named() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join(PodPrograms::WORKLOAD), "").unwrap();
        let err = PodPrograms::beside(dir.path()).unwrap_err();
        let text = err.to_string();
        assert!(text.contains("agmarl-scheduler"), "{text}");
        assert!(!text.contains("schedlab-workload,"), "{text}");
        assert!(
            text.contains("cargo build -p workload-runner -p agmarl-scheduler"),
            "{text}"
        );
        std::fs::write(dir.path().join(PodPrograms::SCHEDULER), "").unwrap();
        let programs = PodPrograms::beside(dir.path()).unwrap();
        assert_eq!(programs.workload, dir.path().join("schedlab-workload"));
    }

    #[test]
    fn tags_are_the_manifests_names_as_the_kubelet_looks_them_up() {
        assert_eq!(
            WORKLOAD_IMAGE,
            format!("docker.io/{}", crate::scheduler_deploy::DEV_WORKLOAD_IMAGE)
        );
        assert_eq!(
            SCHEDULER_IMAGE,
            format!("docker.io/{}", crate::scheduler_deploy::DEV_SCHEDULER_IMAGE)
        );
    }
}
