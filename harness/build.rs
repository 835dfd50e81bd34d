//! Records the git revision the binary was built from, for run manifests.

use std::process::Command;

fn git(args: &[&str]) -> Option<String> {
    let out = Command::new("git").args(args).output().ok()?;
    out.status
        .success()
        .then(|| String::from_utf8_lossy(&out.stdout).trim().to_string())
}

fn main() {
    // an image build has no .git: it is told the revision (deploy/Dockerfile's build argument), so a sweep's cell
    // pods run as the same program as the schedlab that made the plan
    println!("cargo:rerun-if-env-changed=SCHEDLAB_GIT_REVISION");
    let given = std::env::var("SCHEDLAB_GIT_REVISION")
        .ok()
        .filter(|r| !r.trim().is_empty());
    let rev = given.unwrap_or_else(|| {
        let rev = git(&["rev-parse", "HEAD"]).unwrap_or_else(|| "unknown".to_string());
        let dirty = git(&["status", "--porcelain", "--untracked-files=no"]).is_some_and(|s| !s.is_empty());
        if dirty { format!("{rev}-dirty") } else { rev }
    });
    println!("cargo:rustc-env=SCHEDLAB_GIT_REVISION={rev}");
    if let Some(top) = git(&["rev-parse", "--git-dir"]) {
        println!("cargo:rerun-if-changed={top}/HEAD");
        println!("cargo:rerun-if-changed={top}/index");
        if let Some(head_ref) = git(&["symbolic-ref", "-q", "HEAD"]) {
            println!("cargo:rerun-if-changed={top}/{head_ref}");
        }
    }
}
