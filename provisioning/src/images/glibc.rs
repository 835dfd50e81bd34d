//! The image of one dynamically linked glibc program: the program, the
//! shared libraries `ldd` says it loads (at the paths it loads them from),
//! a non-root user, and the host's CA bundle. Nothing else: no shell, no
//! package manager.

use super::{ImageError, ImageFile, ImageSpec};
use crate::external::{self, ExternalCommand};
use std::io::Read;
use std::path::{Path, PathBuf};

/// The user the image runs as (distroless's `nonroot`). Numeric in the
/// config, so the kubelet can check `runAsNonRoot` without the image.
pub const NONROOT_UID: u32 = 65532;
/// The group of [`NONROOT_UID`].
pub const NONROOT_GID: u32 = 65532;
/// Where Debian keeps the CA bundle; the image keeps it at the same path.
pub const HOST_CA_BUNDLE: &str = "/etc/ssl/certs/ca-certificates.crt";

/// The spec of an image running the host program `binary`, copied to
/// `program` (an absolute path in the image) and made the entrypoint, with
/// the shared libraries `ldd` lists for it (none for a static program), an
/// `/etc/passwd` and `/etc/group` with [`NONROOT_UID`], a world-writable
/// `/tmp`, and [`HOST_CA_BUNDLE`] when this machine has it. It runs as
/// `65532:65532`. Libraries a program opens itself (`dlopen`) are not
/// listed by `ldd` and so not included.
pub fn glibc_program_image(binary: &Path, tag: impl Into<String>, program: &str) -> Result<ImageSpec, ImageError> {
    check_program(binary)?;
    let libraries = shared_libraries(binary)?;
    let ca_bundle = Path::new(HOST_CA_BUNDLE);
    program_image(
        binary,
        tag.into(),
        program,
        &libraries,
        ca_bundle.is_file().then_some(ca_bundle),
    )
}

/// [`glibc_program_image`] with the libraries and CA bundle already found.
pub fn program_image(
    binary: &Path,
    tag: String,
    program: &str,
    libraries: &[PathBuf],
    ca_bundle: Option<&Path>,
) -> Result<ImageSpec, ImageError> {
    let mut spec = ImageSpec::new(tag, vec![program.to_string()]);
    spec.env = vec!["PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin".into()];
    spec.user = Some(format!("{NONROOT_UID}:{NONROOT_GID}"));
    spec.files.push(ImageFile::host(program, binary, 0o755));
    for library in libraries {
        // The loader finds each library where ldd found it: same path, and
        // the contents behind any symlink (e.g. /lib64 -> usr/lib64).
        let Some(path) = library.to_str() else {
            return Err(ImageError::BadPath {
                tag: spec.tag,
                path: library.to_string_lossy().into_owned(),
                reason: "a library path that is not UTF-8",
            });
        };
        spec.files.push(ImageFile::host(path, library, 0o755));
    }
    spec.files.push(ImageFile::bytes(
        "/etc/passwd",
        format!(
            "root:x:0:0:root:/root:/sbin/nologin\n\
             nonroot:x:{NONROOT_UID}:{NONROOT_GID}:nonroot:/nonexistent:/sbin/nologin\n"
        ),
        0o644,
    ));
    spec.files.push(ImageFile::bytes(
        "/etc/group",
        format!("root:x:0:\nnonroot:x:{NONROOT_GID}:\n"),
        0o644,
    ));
    // Every entry is root's, so the non-root user can write only here.
    spec.files.push(ImageFile::directory("/tmp", 0o1777));
    if let Some(bundle) = ca_bundle {
        spec.files.push(ImageFile::host(HOST_CA_BUNDLE, bundle, 0o644));
    }
    Ok(spec)
}

/// A program the user named must be an ELF file: ldd would call a script
/// "not a dynamic executable" and the image would lack its interpreter.
fn check_program(binary: &Path) -> Result<(), ImageError> {
    let bad = |reason| ImageError::BadProgram {
        program: binary.to_path_buf(),
        reason,
    };
    let mut file = match std::fs::File::open(binary) {
        Ok(file) => file,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Err(bad("no such file")),
        Err(source) => {
            return Err(ImageError::Read {
                path: binary.to_path_buf(),
                what: "the program of an image".into(),
                source,
            });
        }
    };
    let read_error = |source| ImageError::Read {
        path: binary.to_path_buf(),
        what: "the program of an image".into(),
        source,
    };
    if !file.metadata().map_err(read_error)?.is_file() {
        return Err(bad("not a regular file"));
    }
    let mut magic = [0u8; 4];
    match file.read_exact(&mut magic) {
        Ok(()) if magic == *b"\x7fELF" => Ok(()),
        Ok(()) => Err(bad(
            "not an ELF program (a script would need its interpreter in the image)",
        )),
        Err(e) if e.kind() == std::io::ErrorKind::UnexpectedEof => Err(bad("too short to be a program")),
        Err(e) => Err(read_error(e)),
    }
}

/// The shared libraries `binary` loads, as `ldd` lists them (the dynamic
/// loader included); empty for a static program.
pub fn shared_libraries(binary: &Path) -> Result<Vec<PathBuf>, ImageError> {
    let command = ExternalCommand::new(
        "ldd",
        [binary.as_os_str()],
        format!("list the shared libraries of {}", binary.display()),
    );
    let output = external::output(&command)?;
    if !output.status.success() {
        let stderr = String::from_utf8_lossy(&output.stderr);
        // glibc's ldd exits 1 for a static program, saying so on stderr.
        if stderr.contains(NOT_DYNAMIC) {
            return Ok(Vec::new());
        }
        let text = if stderr.trim().is_empty() {
            String::from_utf8_lossy(&output.stdout)
        } else {
            stderr
        };
        return Err(command
            .failed(output.status.code(), external::tail(&text, external::TAIL_LINES))
            .into());
    }
    parse_ldd(binary, &String::from_utf8_lossy(&output.stdout))
}

const NOT_DYNAMIC: &str = "not a dynamic executable";

/// The libraries in `ldd`'s output for `binary` (named in errors only), in
/// its order without repeats:
///
/// - `libc.so.6 => /lib/x86_64-linux-gnu/libc.so.6 (0x...)`: the path;
/// - `/lib64/ld-linux-x86-64.so.2 (0x...)`: the loader, by its path;
/// - `linux-vdso.so.1 (0x...)`: the kernel's, no file: skipped;
/// - `statically linked` or `not a dynamic executable`: no libraries;
/// - `libfoo.so.1 => not found`: an error, the program could not start.
pub fn parse_ldd(binary: &Path, output: &str) -> Result<Vec<PathBuf>, ImageError> {
    let mut libraries: Vec<PathBuf> = Vec::new();
    for raw in output.lines() {
        let line = raw.trim();
        if line.is_empty() {
            continue;
        }
        if line == NOT_DYNAMIC || line == "statically linked" {
            return Ok(Vec::new());
        }
        let unparsed = || ImageError::LddOutput {
            program: binary.to_path_buf(),
            line: raw.to_string(),
        };
        let path = match line.split_once(" => ") {
            Some((name, "not found")) => {
                return Err(ImageError::LibraryNotFound {
                    program: binary.to_path_buf(),
                    library: name.trim().to_string(),
                });
            }
            // An old ldd's vdso: `linux-gate.so.1 =>  (0x...)`.
            Some((_, resolved)) if resolved.trim_start().starts_with("(0x") => continue,
            Some((_, resolved)) => without_address(resolved).ok_or_else(unparsed)?,
            None => {
                let name = without_address(line).ok_or_else(unparsed)?;
                if !name.starts_with('/') {
                    // The vdso: mapped by the kernel, no file to copy.
                    continue;
                }
                name
            }
        };
        if !path.starts_with('/') {
            return Err(unparsed());
        }
        let path = PathBuf::from(path);
        if !libraries.contains(&path) {
            libraries.push(path);
        }
    }
    Ok(libraries)
}

/// `text` without its trailing ` (0x...)` load address.
fn without_address(text: &str) -> Option<&str> {
    let (before, address) = text.rsplit_once(" (0x")?;
    let hex = address.strip_suffix(')')?;
    (!hex.is_empty() && hex.chars().all(|c| c.is_ascii_hexdigit())).then(|| before.trim())
}

#[cfg(test)]
mod tests {
    use super::super::archive::read_tar;
    use super::super::{FileContents, write_docker_archive};
    use super::*;

    const DYNAMIC: &str = "\tlinux-vdso.so.1 (0x00007ffd5a1f2000)
\tlibgcc_s.so.1 => /lib/x86_64-linux-gnu/libgcc_s.so.1 (0x00007f0c8a5e1000)
\tlibm.so.6 => /lib/x86_64-linux-gnu/libm.so.6 (0x00007f0c8a502000)
\tlibc.so.6 => /lib/x86_64-linux-gnu/libc.so.6 (0x00007f0c8a321000)
\t/lib64/ld-linux-x86-64.so.2 (0x00007f0c8a62c000)
";

    fn paths(libraries: &[PathBuf]) -> Vec<&str> {
        libraries.iter().map(|p| p.to_str().unwrap()).collect()
    }

    #[test]
    fn ldd_of_a_dynamic_program_lists_its_libraries_and_the_loader() {
        let libraries = parse_ldd(Path::new("/bin/scheduler"), DYNAMIC).unwrap();
        assert_eq!(
            paths(&libraries),
            [
                "/lib/x86_64-linux-gnu/libgcc_s.so.1",
                "/lib/x86_64-linux-gnu/libm.so.6",
                "/lib/x86_64-linux-gnu/libc.so.6",
                "/lib64/ld-linux-x86-64.so.2",
            ]
        );
    }

    #[test]
    fn ldd_vdso_lines_have_no_file() {
        let old = "\tlinux-gate.so.1 =>  (0xb7fd8000)\n\tlibc.so.6 => /lib/i386-linux-gnu/libc.so.6 (0xb7e1e000)\n\t/lib/ld-linux.so.2 (0xb7fd9000)\n";
        let libraries = parse_ldd(Path::new("/bin/x"), old).unwrap();
        assert_eq!(
            paths(&libraries),
            ["/lib/i386-linux-gnu/libc.so.6", "/lib/ld-linux.so.2"]
        );
        let only_vdso = parse_ldd(Path::new("/bin/x"), "\tlinux-vdso.so.1 (0x00007ffc8b5f6000)\n").unwrap();
        assert!(only_vdso.is_empty());
    }

    #[test]
    fn ldd_of_a_static_program_lists_nothing() {
        for output in ["\tnot a dynamic executable\n", "\tstatically linked\n", ""] {
            assert!(parse_ldd(Path::new("/bin/x"), output).unwrap().is_empty(), "{output:?}");
        }
    }

    #[test]
    fn ldd_repeats_are_listed_once() {
        let twice = format!("{DYNAMIC}\tlibc.so.6 => /lib/x86_64-linux-gnu/libc.so.6 (0x00007f0c8a321000)\n");
        assert_eq!(parse_ldd(Path::new("/bin/x"), &twice).unwrap().len(), 4);
    }

    #[test]
    fn ldd_missing_library_and_odd_lines_are_errors_naming_them() {
        let missing = "\tlinux-vdso.so.1 (0x00007ffd5a1f2000)\n\tlibfoo.so.1 => not found\n";
        let err = parse_ldd(Path::new("/bin/x"), missing).unwrap_err();
        assert!(matches!(err, ImageError::LibraryNotFound { .. }), "{err:?}");
        assert!(!err.is_input_error());
        assert!(
            err.to_string().contains("libfoo.so.1") && err.to_string().contains("/bin/x"),
            "{err}"
        );

        for odd in [
            "ldd: warning: something\n",
            "\tlibc.so.6 => /lib/libc.so.6\n",
            "\tlibc.so.6 => libc.so.6 (0x1)\n",
        ] {
            let err = parse_ldd(Path::new("/bin/x"), odd).unwrap_err();
            assert!(matches!(err, ImageError::LddOutput { .. }), "{odd:?}: {err:?}");
            assert!(err.to_string().contains(odd.trim()), "{err}");
        }
    }

    #[test]
    fn program_image_holds_the_program_its_libraries_a_user_and_certificates() {
        let libraries = parse_ldd(Path::new("/bin/scheduler"), DYNAMIC).unwrap();
        let spec = program_image(
            Path::new("/build/scheduler"),
            "schedlab/scheduler:dev".into(),
            "/usr/local/bin/scheduler",
            &libraries,
            Some(Path::new("/host/ca.crt")),
        )
        .unwrap();
        assert_eq!(spec.entrypoint, ["/usr/local/bin/scheduler"]);
        assert!(spec.cmd.is_empty());
        assert_eq!(spec.user.as_deref(), Some("65532:65532"));
        let find = |path: &str| spec.files.iter().find(|f| f.path == path).unwrap();
        assert_eq!(
            find("/usr/local/bin/scheduler").contents,
            FileContents::Host("/build/scheduler".into())
        );
        assert_eq!(
            find("/lib64/ld-linux-x86-64.so.2").contents,
            FileContents::Host("/lib64/ld-linux-x86-64.so.2".into())
        );
        assert_eq!(find(HOST_CA_BUNDLE).contents, FileContents::Host("/host/ca.crt".into()));
        let FileContents::Bytes(passwd) = &find("/etc/passwd").contents else {
            panic!("passwd is written by the spec");
        };
        assert!(
            String::from_utf8_lossy(passwd).contains("nonroot:x:65532:65532:"),
            "{passwd:?}"
        );

        let without_bundle = program_image(Path::new("/b"), "x:dev".into(), "/b", &[], None).unwrap();
        assert!(without_bundle.files.iter().all(|f| f.path != HOST_CA_BUNDLE));
    }

    fn true_program() -> &'static Path {
        ["/usr/bin/true", "/bin/true"]
            .into_iter()
            .map(Path::new)
            .find(|p| p.is_file())
            .expect("a `true` program on this machine")
    }

    #[test]
    fn glibc_program_image_of_true_finds_libc_and_the_loader() {
        let binary = true_program();
        let spec = glibc_program_image(binary, "schedlab/true:dev", "/bin/true").unwrap();
        let paths: Vec<&str> = spec.files.iter().map(|f| f.path.as_str()).collect();
        assert!(paths.iter().any(|p| p.ends_with("/libc.so.6")), "{paths:?}");
        assert!(paths.iter().any(|p| p.contains("/ld-linux")), "{paths:?}");
        if cfg!(all(target_arch = "x86_64", target_env = "gnu")) {
            assert!(paths.contains(&"/lib64/ld-linux-x86-64.so.2"), "{paths:?}");
        }

        // The loader is a regular file in the layer (its host symlink
        // followed), inside a real /lib64 directory.
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("true.tar");
        let facts = write_docker_archive(&spec, &out).unwrap();
        let outer = read_tar(&std::fs::read(&out).unwrap());
        let layer_name = format!("{}/layer.tar", &facts.layer_digest["sha256:".len()..]);
        let (_, _, layer) = outer
            .iter()
            .find(|(p, _, _)| p.to_str() == Some(layer_name.as_str()))
            .unwrap();
        let layer = read_tar(layer);
        let loader = layer
            .iter()
            .find(|(p, _, _)| p.to_string_lossy().contains("ld-linux"))
            .unwrap();
        assert_eq!(loader.1.entry_type(), tar::EntryType::Regular);
        assert!(loader.2.starts_with(b"\x7fELF"));
        let program = layer.iter().find(|(p, _, _)| p == Path::new("bin/true")).unwrap();
        assert_eq!(program.2, std::fs::read(binary).unwrap());
    }

    #[test]
    fn a_missing_or_non_program_binary_is_an_input_error() {
        let dir = tempfile::tempdir().unwrap();
        let missing = dir.path().join("scheduler");
        let err = glibc_program_image(&missing, "x:dev", "/x").unwrap_err();
        assert!(matches!(err, ImageError::BadProgram { .. }), "{err:?}");
        assert!(err.is_input_error());
        assert!(err.to_string().contains(&*missing.to_string_lossy()), "{err}");

        let script = dir.path().join("run.sh");
        std::fs::write(&script, "#!/bin/sh\necho hi\n").unwrap();
        let err = glibc_program_image(&script, "x:dev", "/x").unwrap_err();
        assert!(
            err.is_input_error() && err.to_string().contains("not an ELF program"),
            "{err}"
        );

        let err = glibc_program_image(dir.path(), "x:dev", "/x").unwrap_err();
        assert!(
            err.is_input_error() && err.to_string().contains("not a regular file"),
            "{err}"
        );
    }
}
