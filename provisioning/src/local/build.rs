//! Building kube-apiserver, kube-scheduler, kube-controller-manager,
//! kubectl and the kubelet from the unpacked Debian source, offline, the way
//! upstream 1.20 built them (GOPATH mode; module mode fails on this source),
//! and the pause program every pod sandbox runs.

use super::error::ProvisionError;
use super::layout::CacheLayout;
use crate::external::{self, ExternalCommand};
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

/// The binaries built into the cache: what the local control plane runs,
/// kubectl, whose embedded kustomize (v2.0.3) renders the project's
/// manifests the way a 1.20 cluster's users would, and the kubelet of real nodes.
pub const BINARIES: &[&str] = &[
    "kube-apiserver",
    "kube-scheduler",
    "kube-controller-manager",
    "kubectl",
    "kubelet",
];

/// The pause program (a static C binary from the same source), built beside them.
pub const PAUSE: &str = "pause";
const PAUSE_SOURCE: &str = "build/pause/linux/pause.c";

/// The version stamped into the binaries (what the Debian source really is).
const GIT_VERSION: &str = "v1.20.2";
const GIT_COMMIT: &str = "faecb196815e248d3ecfb03c680a4507229c2a56";
const BUILD_DATE: &str = "2021-01-13T13:20:00Z";

/// Debian's reflect2 1.0.2, which replaces the vendored 1.0.1: with Go >= 1.18
/// the vendored one makes kube-apiserver panic inside json-iterator.
const DEBIAN_REFLECT2: &str = "/usr/share/gocode/src/github.com/modern-go/reflect2";
const VENDORED_REFLECT2: &str = "vendor/github.com/modern-go/reflect2";
const REFLECT2_MARKER: &str = ".schedlab-replaced";

const OPENAPI_OUT: &str = "pkg/generated/openapi/zz_generated.openapi.go";

/// Whether every binary is already in the cache.
pub fn binaries_present(cache: &CacheLayout) -> bool {
    BINARIES.iter().chain([&PAUSE]).all(|b| cache.binary(b).is_file())
}

/// Builds whatever binary is missing; returns whether anything was built.
pub fn ensure(cache: &CacheLayout) -> Result<bool, ProvisionError> {
    if binaries_present(cache) {
        return Ok(false);
    }
    let gopath_src = cache.gopath_src();
    link_gopath(&cache.src(), &gopath_src)?;
    replace_reflect2(&cache.src())?;
    let bin = cache.bin();
    std::fs::create_dir_all(&bin).map_err(ProvisionError::io("cannot create", &bin))?;
    let log = cache.build_log();
    if !cache.src().join(OPENAPI_OUT).is_file() {
        generate_openapi(cache, &log)?;
    }
    let ldflags = ldflags();
    for name in BINARIES {
        let target = cache.binary(name);
        if target.is_file() {
            continue;
        }
        // Build beside the target and rename, so a killed build never leaves a binary that looks complete.
        let partial = bin.join(format!("{name}.partial"));
        tracing::info!(binary = name, "building (minutes on a cold cache)");
        external::run_logged(
            &go(
                cache,
                ["build", "-trimpath", "-ldflags", &ldflags, "-o"],
                format!("build {name}"),
            )
            .arg(&partial)
            .arg(format!("./cmd/{name}")),
            &log,
        )?;
        std::fs::rename(&partial, &target).map_err(ProvisionError::io("cannot rename to", &target))?;
    }
    build_pause(cache, &log)?;
    Ok(true)
}

fn build_pause(cache: &CacheLayout, log: &Path) -> Result<(), ProvisionError> {
    let target = cache.binary(PAUSE);
    if target.is_file() {
        return Ok(());
    }
    let partial = cache.bin().join(format!("{PAUSE}.partial"));
    external::run_logged(
        &ExternalCommand::new("gcc", ["-Os", "-static", "-o"], "build the pause program")
            .arg(&partial)
            .arg(cache.src().join(PAUSE_SOURCE)),
        log,
    )?;
    std::fs::rename(&partial, &target).map_err(ProvisionError::io("cannot rename to", &target))
}

/// A `go` command in GOPATH mode, offline, static, run inside the GOPATH view of the source.
fn go<'a>(cache: &CacheLayout, args: impl IntoIterator<Item = &'a str>, why: String) -> ExternalCommand {
    let dir = cache.gopath_src();
    ExternalCommand::new("go", args, why)
        .in_dir(&dir)
        // The kernel resolves the symlinked working directory; go trusts $PWD when it names
        // the same directory, which keeps the GOPATH import path k8s.io/kubernetes.
        .with_env("PWD", &dir)
        .with_env("GO111MODULE", "off")
        .with_env("GOPATH", cache.gopath())
        .with_env("GOCACHE", cache.gocache())
        .with_env("GOPROXY", "off")
        .with_env("GOFLAGS", "")
        .with_env("CGO_ENABLED", "0")
}

/// The version stamps, as upstream's hack/lib/version.sh sets them.
pub fn ldflags() -> String {
    let mut flags = vec!["-s".to_owned(), "-w".to_owned()];
    for pkg in ["client-go/pkg/version", "component-base/version"] {
        let var = |name: &str, value: &str| format!("-X k8s.io/kubernetes/vendor/k8s.io/{pkg}.{name}={value}");
        flags.push(var("gitVersion", GIT_VERSION));
        flags.push(var("gitMajor", "1"));
        flags.push(var("gitMinor", "20"));
        flags.push(var("gitTreeState", "clean"));
        flags.push(var("gitCommit", GIT_COMMIT));
        flags.push(var("buildDate", BUILD_DATE));
    }
    flags.join(" ")
}

fn link_gopath(src: &Path, link: &Path) -> Result<(), ProvisionError> {
    if let Some(parent) = link.parent() {
        std::fs::create_dir_all(parent).map_err(ProvisionError::io("cannot create", parent))?;
    }
    if std::fs::read_link(link).is_ok_and(|target| target == src) {
        return Ok(());
    }
    if link.symlink_metadata().is_ok() {
        std::fs::remove_file(link).map_err(ProvisionError::io("cannot remove", link))?;
    }
    std::os::unix::fs::symlink(src, link).map_err(ProvisionError::io("cannot link", link))
}

fn replace_reflect2(src: &Path) -> Result<(), ProvisionError> {
    let vendored = src.join(VENDORED_REFLECT2);
    if vendored.join(REFLECT2_MARKER).is_file() {
        return Ok(());
    }
    let debian = Path::new(DEBIAN_REFLECT2);
    if !debian.is_dir() {
        return Err(ProvisionError::NotFound {
            what: "Debian's reflect2 (golang-github-modern-go-reflect2-dev)",
            dir: debian.into(),
        });
    }
    if vendored.exists() {
        std::fs::remove_dir_all(&vendored).map_err(ProvisionError::io("cannot remove", &vendored))?;
    }
    copy_dir(debian, &vendored)?;
    std::fs::write(
        vendored.join(REFLECT2_MARKER),
        "reflect2 1.0.2 from Debian (Go >= 1.18)\n",
    )
    .map_err(ProvisionError::io("cannot write", &vendored))
}

/// Copies a folder tree, following symlinks (Debian's gocode tree links some files).
fn copy_dir(from: &Path, to: &Path) -> Result<(), ProvisionError> {
    std::fs::create_dir_all(to).map_err(ProvisionError::io("cannot create", to))?;
    for entry in std::fs::read_dir(from).map_err(ProvisionError::io("cannot read", from))? {
        let entry = entry.map_err(ProvisionError::io("cannot read", from))?;
        let (src, dst) = (entry.path(), to.join(entry.file_name()));
        if src.is_dir() {
            copy_dir(&src, &dst)?;
        } else {
            std::fs::copy(&src, &dst).map_err(ProvisionError::io("cannot copy", &src))?;
        }
    }
    Ok(())
}

/// Generates `pkg/generated/openapi/zz_generated.openapi.go`, missing from the
/// source package, with the vendored openapi-gen over the same inputs as
/// upstream's Makefile.generated_files (gen_openapi).
fn generate_openapi(cache: &CacheLayout, log: &Path) -> Result<(), ProvisionError> {
    let tool = cache.binary("openapi-gen");
    external::run_logged(
        &go(cache, ["build", "-o"], "build openapi-gen".into())
            .arg(&tool)
            .arg("./vendor/k8s.io/kube-openapi/cmd/openapi-gen"),
        log,
    )?;
    let inputs = openapi_inputs(&cache.src())?;
    if inputs.is_empty() {
        return Err(ProvisionError::NotFound {
            what: "packages tagged +k8s:openapi-gen=",
            dir: cache.src(),
        });
    }
    tracing::info!(packages = inputs.len(), "generating openapi definitions");
    let command = ExternalCommand::new(
        &tool,
        ["--logtostderr", "-i"],
        "generate the openapi definitions the source package lacks",
    )
    .in_dir(cache.gopath_src())
    .with_env("PWD", cache.gopath_src())
    .with_env("GO111MODULE", "off")
    .with_env("GOPATH", cache.gopath())
    .arg(inputs.join(","))
    .args([
        "-p",
        "k8s.io/kubernetes/pkg/generated/openapi",
        "-O",
        "zz_generated.openapi",
        "-h",
        "vendor/k8s.io/code-generator/hack/boilerplate.go.txt",
        "-r",
    ]);
    external::run_logged(&command.arg(cache.root.join("openapi-violations.report")), log)?;
    Ok(())
}

/// The Go packages (as `k8s.io/kubernetes/...` import paths) that openapi-gen
/// must read: every package with a file that carries a `// +k8s:` tag line and
/// mentions `+k8s:openapi-gen=`. Staging packages are named through `vendor/`,
/// and the code-generator and sample-apiserver trees are left out, as upstream does.
pub fn openapi_inputs(src: &Path) -> Result<Vec<String>, ProvisionError> {
    let mut packages = BTreeSet::new();
    let mut stack: Vec<PathBuf> = vec![src.to_path_buf()];
    while let Some(dir) = stack.pop() {
        let rel = dir.strip_prefix(src).unwrap_or(&dir).to_string_lossy().into_owned();
        let mut tagged = false;
        for entry in std::fs::read_dir(&dir).map_err(ProvisionError::io("cannot read", &dir))? {
            let entry = entry.map_err(ProvisionError::io("cannot read", &dir))?;
            let name = entry.file_name().to_string_lossy().into_owned();
            let file_type = entry
                .file_type()
                .map_err(ProvisionError::io("cannot stat", entry.path()))?;
            // Symlinks are not followed (vendor/k8s.io points into staging, read once from there).
            if file_type.is_dir() {
                if !skip_dir(&rel, &name) {
                    stack.push(entry.path());
                }
            } else if file_type.is_file() && name.ends_with(".go") && !tagged {
                let text = std::fs::read_to_string(entry.path()).unwrap_or_default();
                tagged = openapi_tagged(&text);
            }
        }
        if tagged && let Some(package) = package_name(&rel) {
            packages.insert(package);
        }
    }
    Ok(packages.into_iter().collect())
}

fn skip_dir(parent_rel: &str, name: &str) -> bool {
    // Upstream prunes ./_*, ./.* and ./vendor at the top only.
    parent_rel.is_empty() && (name.starts_with('.') || name.starts_with('_') || name == "vendor")
}

/// The import path of a source folder, staging named through vendor; `None`
/// for the trees upstream leaves out.
pub fn package_name(rel: &str) -> Option<String> {
    if rel.is_empty() {
        return None;
    }
    let rel = match rel.strip_prefix("staging/src/") {
        Some(rest) => format!("vendor/{rest}"),
        None => rel.to_owned(),
    };
    let excluded = ["vendor/k8s.io/code-generator/", "vendor/k8s.io/sample-apiserver/"];
    if excluded.iter().any(|e| rel.starts_with(e) || format!("{rel}/") == *e) {
        return None;
    }
    Some(format!("k8s.io/kubernetes/{rel}"))
}

/// Whether a Go file takes part in openapi generation.
pub fn openapi_tagged(text: &str) -> bool {
    let has_tag_line = text.lines().any(|l| {
        l.strip_prefix("//")
            .is_some_and(|r| r.trim_start_matches(' ').starts_with("+k8s:"))
    });
    has_tag_line && text.contains("+k8s:openapi-gen=")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn openapi_tag_needs_a_tag_line_and_the_openapi_tag() {
        assert!(openapi_tagged("// +k8s:openapi-gen=true\npackage v1\n"));
        assert!(openapi_tagged(
            "//+k8s:deepcopy-gen=package\n// x\n// +k8s:openapi-gen=true\n"
        ));
        assert!(!openapi_tagged("// +k8s:deepcopy-gen=package\npackage v1\n"));
        assert!(!openapi_tagged("/* +k8s:openapi-gen=true */\n"));
    }

    #[test]
    fn staging_is_named_through_vendor_and_exclusions_hold() {
        assert_eq!(
            package_name("pkg/apis/core").as_deref(),
            Some("k8s.io/kubernetes/pkg/apis/core")
        );
        assert_eq!(
            package_name("staging/src/k8s.io/api/core/v1").as_deref(),
            Some("k8s.io/kubernetes/vendor/k8s.io/api/core/v1")
        );
        assert_eq!(package_name("staging/src/k8s.io/code-generator/x"), None);
        assert_eq!(package_name("staging/src/k8s.io/sample-apiserver/pkg/apis"), None);
        assert_eq!(package_name(""), None);
    }

    #[test]
    fn inputs_walk_the_tree_skipping_vendor_and_hidden() {
        let root = std::env::temp_dir().join(format!("schedlab-openapi-test-{}", std::process::id()));
        let write = |rel: &str, text: &str| {
            let p = root.join(rel);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(p, text).unwrap();
        };
        let tag = "// +k8s:openapi-gen=true\npackage x\n";
        write("pkg/apis/a/doc.go", tag);
        write("pkg/apis/b/doc.go", "// +k8s:deepcopy-gen=package\npackage b\n");
        write("staging/src/k8s.io/api/core/v1/doc.go", tag);
        write("vendor/github.com/x/y/doc.go", tag);
        write("_output/z/doc.go", tag);
        write(".git/q/doc.go", tag);
        let inputs = openapi_inputs(&root).unwrap();
        assert_eq!(
            inputs,
            vec![
                "k8s.io/kubernetes/pkg/apis/a",
                "k8s.io/kubernetes/vendor/k8s.io/api/core/v1"
            ]
        );
        std::fs::remove_dir_all(&root).unwrap();
    }

    #[test]
    fn ldflags_stamp_both_version_packages() {
        let flags = ldflags();
        assert!(flags.contains("-X k8s.io/kubernetes/vendor/k8s.io/component-base/version.gitVersion=v1.20.2"));
        assert!(flags.contains("-X k8s.io/kubernetes/vendor/k8s.io/client-go/pkg/version.gitMinor=20"));
    }

    #[test]
    fn present_binaries_skip_the_build() {
        let root = std::env::temp_dir().join(format!("schedlab-build-test-{}", std::process::id()));
        let cache = CacheLayout::new(&root);
        assert!(!binaries_present(&cache));
        std::fs::create_dir_all(cache.bin()).unwrap();
        for b in BINARIES {
            std::fs::write(cache.binary(b), "").unwrap();
        }
        // a cache from before real nodes lacks the pause program: not complete
        assert!(!binaries_present(&cache));
        std::fs::write(cache.binary(PAUSE), "").unwrap();
        assert!(binaries_present(&cache));
        // No Go, no source: ensure must not try to build anything.
        assert!(!ensure(&cache).unwrap());
        std::fs::remove_dir_all(&root).unwrap();
    }
}
