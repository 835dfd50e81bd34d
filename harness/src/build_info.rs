//! What the manifests say about this binary.

use results::run_folder::Build;

/// This binary's version and the git revision it was built from (see build.rs).
pub fn current() -> Build {
    Build {
        schedlab_version: env!("CARGO_PKG_VERSION"),
        git_revision: env!("SCHEDLAB_GIT_REVISION"),
    }
}
