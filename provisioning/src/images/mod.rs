//! Container images built without Docker, and imported into a containerd.
//!
//! Real kubelets here run on containerd with no Docker engine and no
//! registry, so an image is written by hand as a *docker-archive* tarball
//! (one layer, a config, `manifest.json`) and imported into each node's
//! containerd with `ctr images import`. This module owns:
//!
//! - [`ImageSpec`] and [`ImageFile`]: what an image holds and runs;
//! - [`write_docker_archive`]: the tarball, byte-identical for the same
//!   spec and written atomically;
//! - [`glibc_program_image`]: the spec of an image that runs one host
//!   program, with the shared libraries `ldd` says it needs;
//! - [`import_command`]: the `ctr` command that imports a tarball, run
//!   like every other external command through [`crate::external`].

mod archive;
mod glibc;
mod import;

pub use archive::{ArchiveFacts, host_architecture, write_docker_archive};
pub use glibc::{
    HOST_CA_BUNDLE, NONROOT_GID, NONROOT_UID, glibc_program_image, parse_ldd, program_image, shared_libraries,
};
pub use import::{K8S_NAMESPACE, import_command};

use crate::external::ExternalError;
use std::path::PathBuf;

/// What an image holds and runs. Entries of [`files`](ImageSpec::files) may
/// come in any order: the layer sorts them and adds missing parent
/// directories.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ImageSpec {
    /// the reference the image is imported as, e.g. `schedlab/scheduler:dev`
    pub tag: String,
    /// the program and its first words; never empty, since a pod's `command`
    /// replaces only this and its `args` replace only `cmd`
    pub entrypoint: Vec<String>,
    /// default arguments after the entrypoint
    pub cmd: Vec<String>,
    /// `KEY=value` words
    pub env: Vec<String>,
    /// `uid[:gid]` or a name in the image's `/etc/passwd`
    pub user: Option<String>,
    pub working_dir: Option<String>,
    pub files: Vec<ImageFile>,
}

impl ImageSpec {
    /// An image that runs `entrypoint`, with nothing else set.
    pub fn new(tag: impl Into<String>, entrypoint: Vec<String>) -> ImageSpec {
        ImageSpec {
            tag: tag.into(),
            entrypoint,
            cmd: Vec::new(),
            env: Vec::new(),
            user: None,
            working_dir: None,
            files: Vec::new(),
        }
    }
}

/// One entry of an image's filesystem. Every entry is owned by root (uid and
/// gid 0) with modification time 0, so the layer depends on the spec only.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ImageFile {
    /// absolute path in the image, e.g. `/usr/local/bin/scheduler`
    pub path: String,
    pub contents: FileContents,
    /// permission bits (at most `0o7777`); ignored for a symlink
    pub mode: u32,
}

/// Where an [`ImageFile`]'s contents come from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FileContents {
    /// a file on this machine, read when the archive is written (a symlink
    /// is followed: the image gets the file it points to)
    Host(PathBuf),
    Bytes(Vec<u8>),
    Directory,
    /// a symbolic link to this target, as written (absolute or relative)
    Symlink(String),
}

impl ImageFile {
    /// `path` in the image holding the contents of the host file `source`.
    pub fn host(path: impl Into<String>, source: impl Into<PathBuf>, mode: u32) -> ImageFile {
        ImageFile {
            path: path.into(),
            contents: FileContents::Host(source.into()),
            mode,
        }
    }

    /// `path` in the image holding `contents`.
    pub fn bytes(path: impl Into<String>, contents: impl Into<Vec<u8>>, mode: u32) -> ImageFile {
        ImageFile {
            path: path.into(),
            contents: FileContents::Bytes(contents.into()),
            mode,
        }
    }

    /// A directory at `path` (only needed for a mode other than `0o755` or
    /// an empty directory: parents of other entries are added anyway).
    pub fn directory(path: impl Into<String>, mode: u32) -> ImageFile {
        ImageFile {
            path: path.into(),
            contents: FileContents::Directory,
            mode,
        }
    }

    /// A symbolic link at `path` to `target`.
    pub fn symlink(path: impl Into<String>, target: impl Into<String>) -> ImageFile {
        ImageFile {
            path: path.into(),
            contents: FileContents::Symlink(target.into()),
            mode: 0o777,
        }
    }
}

/// An error building or describing an image. Each names the image, path,
/// file or command at fault.
#[derive(Debug, thiserror::Error)]
pub enum ImageError {
    #[error("image tag {tag:?}: {reason}")]
    BadTag { tag: String, reason: &'static str },
    #[error("image {tag}: no entrypoint (the program must be in Entrypoint, or a pod's args would replace it)")]
    NoEntrypoint { tag: String },
    #[error("image {tag}: path {path:?}: {reason}")]
    BadPath {
        tag: String,
        path: String,
        reason: &'static str,
    },
    #[error("image {tag}: {path} is given twice")]
    DuplicatePath { tag: String, path: String },
    #[error("image {tag}: {path} is not a directory, but {inside} is inside it")]
    NotADirectory { tag: String, path: String, inside: String },
    #[error("image {tag}: {path}: mode {mode:#o} is more than permission bits (at most 0o7777)")]
    BadMode { tag: String, path: String, mode: u32 },
    #[error("{}: {reason}", program.display())]
    BadProgram { program: PathBuf, reason: &'static str },
    #[error("cannot read {} ({what}): {source}", path.display())]
    Read {
        path: PathBuf,
        what: String,
        #[source]
        source: std::io::Error,
    },
    #[error("cannot write the image archive {}: {source}", out.display())]
    Write {
        out: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("image {tag}: cannot encode {what}: {source}")]
    Json {
        tag: String,
        what: &'static str,
        #[source]
        source: serde_json::Error,
    },
    #[error("{library}, needed by {}, is not on this machine (ldd says not found)", program.display())]
    LibraryNotFound { program: PathBuf, library: String },
    #[error("`ldd {}` printed a line that is not a library: {line:?}", program.display())]
    LddOutput { program: PathBuf, line: String },
    #[error(transparent)]
    Command(#[from] ExternalError),
}

impl ImageError {
    /// Whether the user's input is at fault (exit code 2).
    pub fn is_input_error(&self) -> bool {
        match self {
            // The image asked for cannot exist whatever the machine holds:
            // whoever wrote the spec (or named its tag) must change it.
            ImageError::BadTag { .. }
            | ImageError::NoEntrypoint { .. }
            | ImageError::BadPath { .. }
            | ImageError::DuplicatePath { .. }
            | ImageError::NotADirectory { .. }
            | ImageError::BadMode { .. } => true,
            // A program the user named that is missing or is no program.
            ImageError::BadProgram { .. } => true,
            // The machine: files that cannot be read or written, a library
            // the program needs but this machine lacks, ldd or ctr failing.
            ImageError::Read { .. }
            | ImageError::Write { .. }
            | ImageError::Json { .. }
            | ImageError::LibraryNotFound { .. }
            | ImageError::LddOutput { .. }
            | ImageError::Command(_) => false,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn image_errors_fold_into_the_crate_error_and_keep_their_class() {
        let missing = crate::Error::from(ImageError::BadProgram {
            program: PathBuf::from("/no/such/scheduler"),
            reason: "no such file",
        });
        assert!(missing.is_input_error());
        assert!(missing.to_string().contains("/no/such/scheduler"), "{missing}");

        let unreadable = crate::Error::from(ImageError::Read {
            path: PathBuf::from("/lib/libc.so.6"),
            what: "for /lib/libc.so.6 in image x:dev".into(),
            source: std::io::Error::from(std::io::ErrorKind::PermissionDenied),
        });
        assert!(!unreadable.is_input_error());
        assert!(unreadable.to_string().contains("/lib/libc.so.6"), "{unreadable}");
    }
}
