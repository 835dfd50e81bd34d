//! The docker-archive tarball of an [`ImageSpec`]: one layer tar, the image
//! config naming that layer's digest, and `manifest.json` naming both, as
//! `ctr images import` (and `docker load`) read them.

use super::{FileContents, ImageError, ImageFile, ImageSpec};
use serde::Serialize;
use sha2::{Digest, Sha256};
use std::collections::BTreeMap;
use std::fs::File;
use std::io::{self, BufWriter, Read, Seek, SeekFrom, Write};
use std::path::Path;
use tar::{EntryType, Header};

/// What [`write_docker_archive`] wrote.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ArchiveFacts {
    /// `sha256:<hex>` of the config: the image id containerd and docker show
    pub image_id: String,
    /// `sha256:<hex>` of the uncompressed layer tar (the config's `diff_ids`)
    pub layer_digest: String,
    /// bytes of the layer tar
    pub layer_size: u64,
    /// bytes of the whole archive
    pub size: u64,
}

/// The image's platform architecture, as Go names it (`amd64`, `arm64`):
/// the one of this machine, whose programs the images hold. containerd
/// unpacks an imported image only for a platform it runs.
pub fn host_architecture() -> &'static str {
    match std::env::consts::ARCH {
        "x86_64" => "amd64",
        "aarch64" => "arm64",
        "x86" => "386",
        "powerpc64" if cfg!(target_endian = "little") => "ppc64le",
        "powerpc64" => "ppc64",
        "loongarch64" => "loong64",
        other => other,
    }
}

/// Writes `spec` as a docker-archive tarball at `out`. The same spec (and
/// the same host files) gives byte-identical tarballs: entries sorted, owned
/// by root, modification time 0. The tarball appears at `out` only once it
/// is complete (written beside it, then renamed), so an interrupted build
/// leaves the previous tarball or none, never a truncated one.
pub fn write_docker_archive(spec: &ImageSpec, out: &Path) -> Result<ArchiveFacts, ImageError> {
    check_tag(&spec.tag)?;
    if spec.entrypoint.is_empty() {
        return Err(ImageError::NoEntrypoint { tag: spec.tag.clone() });
    }
    let entries = layer_entries(spec)?;

    let write_error = |source| ImageError::Write {
        out: out.to_path_buf(),
        source,
    };
    // Beside `out`, so the final rename stays on one filesystem.
    let dir = match out.parent() {
        Some(dir) if !dir.as_os_str().is_empty() => dir,
        _ => Path::new("."),
    };
    // Unnamed (unlinked) on Linux: nothing is left behind if this is killed.
    let mut layer = tempfile::tempfile_in(dir).map_err(write_error)?;
    let (layer_hex, layer_size) = write_layer(spec, &entries, &mut layer, out)?;
    layer.seek(SeekFrom::Start(0)).map_err(write_error)?;

    let config = config_json(spec, &layer_hex)?;
    let config_hex = sha256_hex(&config);
    let manifest = manifest_json(spec, &config_hex, &layer_hex)?;

    let mut tmp = tempfile::Builder::new()
        .prefix(".schedlab-image-")
        .suffix(".tmp")
        .tempfile_in(dir)
        .map_err(write_error)?;
    {
        let mut archive = tar::Builder::new(BufWriter::new(tmp.as_file_mut()));
        let mut add = |name: &str, size: u64, data: &mut dyn Read| {
            let mut header = header(EntryType::Regular, 0o644, size);
            archive.append_data(&mut header, name, data)
        };
        add(
            &format!("{layer_hex}/layer.tar"),
            layer_size,
            &mut (&mut layer).take(layer_size),
        )
        .map_err(write_error)?;
        add(
            &format!("{config_hex}.json"),
            config.len() as u64,
            &mut config.as_slice(),
        )
        .map_err(write_error)?;
        add("manifest.json", manifest.len() as u64, &mut manifest.as_slice()).map_err(write_error)?;
        archive.into_inner().and_then(|mut w| w.flush()).map_err(write_error)?;
    }
    // On disk before the rename, so a crash cannot leave the name on an
    // empty or partial file either.
    tmp.as_file().sync_all().map_err(write_error)?;
    let size = tmp.as_file().metadata().map_err(write_error)?.len();
    tmp.persist(out).map_err(|e| write_error(e.error))?;
    Ok(ArchiveFacts {
        image_id: format!("sha256:{config_hex}"),
        layer_digest: format!("sha256:{layer_hex}"),
        layer_size,
        size,
    })
}

/// A tag containerd and the kubelet can both name: no spaces or control
/// characters (the full reference grammar is theirs to judge).
fn check_tag(tag: &str) -> Result<(), ImageError> {
    let bad = |reason| {
        Err(ImageError::BadTag {
            tag: tag.to_string(),
            reason,
        })
    };
    if tag.is_empty() {
        return bad("empty");
    }
    if tag.chars().any(|c| c.is_whitespace() || c.is_control()) {
        return bad("has spaces or control characters");
    }
    if tag.starts_with(['/', ':', '@']) || tag.ends_with(['/', ':', '@']) {
        return bad("a tag names a repository, then optionally `:tag`");
    }
    Ok(())
}

/// One layer entry; a directory either given in the spec or added as the
/// parent of one.
#[derive(Debug)]
enum Entry<'a> {
    Given(&'a ImageFile),
    Parent,
}

impl Entry<'_> {
    fn is_directory(&self) -> bool {
        match self {
            Entry::Given(file) => file.contents == FileContents::Directory,
            Entry::Parent => true,
        }
    }
}

/// The layer's entries by their path in the tar (relative, `a/b`). Sorted
/// byte-wise, a directory comes before everything inside it.
fn layer_entries(spec: &ImageSpec) -> Result<BTreeMap<String, Entry<'_>>, ImageError> {
    let mut entries = BTreeMap::new();
    for file in &spec.files {
        let name = tar_name(&spec.tag, &file.path)?;
        if file.mode > 0o7777 {
            return Err(ImageError::BadMode {
                tag: spec.tag.clone(),
                path: file.path.clone(),
                mode: file.mode,
            });
        }
        let bad_target = match &file.contents {
            FileContents::Symlink(target) => target.is_empty() || target.contains('\0'),
            _ => false,
        };
        if bad_target {
            return Err(ImageError::BadPath {
                tag: spec.tag.clone(),
                path: file.path.clone(),
                reason: "a symlink needs a target without NUL",
            });
        }
        if entries.insert(name, Entry::Given(file)).is_some() {
            return Err(ImageError::DuplicatePath {
                tag: spec.tag.clone(),
                path: file.path.clone(),
            });
        }
    }
    let names: Vec<String> = entries.keys().cloned().collect();
    for name in &names {
        let mut end = 0;
        while let Some(slash) = name[end..].find('/') {
            end += slash;
            let parent = &name[..end];
            match entries.get(parent) {
                Some(entry) if !entry.is_directory() => {
                    return Err(ImageError::NotADirectory {
                        tag: spec.tag.clone(),
                        path: format!("/{parent}"),
                        inside: format!("/{name}"),
                    });
                }
                Some(_) => {}
                None => {
                    entries.insert(parent.to_string(), Entry::Parent);
                }
            }
            end += 1;
        }
    }
    Ok(entries)
}

/// `path` (absolute, in the image) as a tar entry name: relative, each
/// component a plain name.
fn tar_name(tag: &str, path: &str) -> Result<String, ImageError> {
    let bad = |reason| ImageError::BadPath {
        tag: tag.to_string(),
        path: path.to_string(),
        reason,
    };
    let Some(relative) = path.strip_prefix('/') else {
        return Err(bad("not absolute"));
    };
    if relative.is_empty() {
        return Err(bad("the root is not an entry"));
    }
    if relative.contains('\0') {
        return Err(bad("has a NUL"));
    }
    for component in relative.split('/') {
        match component {
            "" => return Err(bad("has an empty component (`//` or a trailing `/`)")),
            "." | ".." => return Err(bad("has a `.` or `..` component")),
            _ => {}
        }
    }
    Ok(relative.to_string())
}

/// The header every entry gets: owner root, time 0, so only the spec
/// decides the bytes.
fn header(entry_type: EntryType, mode: u32, size: u64) -> Header {
    let mut header = Header::new_gnu();
    header.set_entry_type(entry_type);
    header.set_mode(mode);
    header.set_size(size);
    header.set_uid(0);
    header.set_gid(0);
    header.set_mtime(0);
    header
}

/// Writes the layer tar into `file`; returns its sha256 (hex) and size.
fn write_layer(
    spec: &ImageSpec,
    entries: &BTreeMap<String, Entry<'_>>,
    file: &mut File,
    out: &Path,
) -> Result<(String, u64), ImageError> {
    let write_error = |source| ImageError::Write {
        out: out.to_path_buf(),
        source,
    };
    let mut layer = tar::Builder::new(Digesting::new(BufWriter::new(file)));
    for (name, entry) in entries {
        let file = match entry {
            Entry::Parent => {
                let mut header = header(EntryType::Directory, 0o755, 0);
                layer
                    .append_data(&mut header, format!("{name}/"), io::empty())
                    .map_err(write_error)?;
                continue;
            }
            Entry::Given(file) => file,
        };
        match &file.contents {
            FileContents::Directory => {
                let mut header = header(EntryType::Directory, file.mode, 0);
                layer
                    .append_data(&mut header, format!("{name}/"), io::empty())
                    .map_err(write_error)?;
            }
            FileContents::Bytes(bytes) => {
                let mut header = header(EntryType::Regular, file.mode, bytes.len() as u64);
                layer
                    .append_data(&mut header, name, bytes.as_slice())
                    .map_err(write_error)?;
            }
            FileContents::Symlink(target) => {
                let mut header = header(EntryType::Symlink, 0o777, 0);
                layer.append_link(&mut header, name, target).map_err(write_error)?;
            }
            FileContents::Host(source) => {
                let read_error = |e| ImageError::Read {
                    path: source.clone(),
                    what: format!("for {} in image {}", file.path, spec.tag),
                    source: e,
                };
                let host = File::open(source).map_err(read_error)?;
                let meta = host.metadata().map_err(read_error)?;
                if !meta.is_file() {
                    return Err(read_error(io::Error::new(
                        io::ErrorKind::InvalidInput,
                        "not a regular file",
                    )));
                }
                let mut reader = Exactly::new(host, meta.len());
                let mut header = header(EntryType::Regular, file.mode, meta.len());
                layer
                    .append_data(&mut header, name, &mut reader)
                    .map_err(|e| if reader.failed { read_error(e) } else { write_error(e) })?;
            }
        }
    }
    let digesting = layer.into_inner().map_err(write_error)?;
    let (mut writer, hex, size) = digesting.finish();
    writer.flush().map_err(write_error)?;
    Ok((hex, size))
}

/// The image config: platform, how to run it, and its one layer.
fn config_json(spec: &ImageSpec, layer_hex: &str) -> Result<Vec<u8>, ImageError> {
    #[derive(Serialize)]
    struct Config<'a> {
        architecture: &'static str,
        os: &'static str,
        config: RunConfig<'a>,
        rootfs: RootFs,
        history: [History; 1],
    }
    #[derive(Serialize)]
    #[serde(rename_all = "PascalCase")]
    struct RunConfig<'a> {
        #[serde(skip_serializing_if = "Option::is_none")]
        user: Option<&'a str>,
        #[serde(skip_serializing_if = "<[_]>::is_empty")]
        env: &'a [String],
        entrypoint: &'a [String],
        #[serde(skip_serializing_if = "<[_]>::is_empty")]
        cmd: &'a [String],
        #[serde(skip_serializing_if = "Option::is_none")]
        working_dir: Option<&'a str>,
    }
    #[derive(Serialize)]
    struct RootFs {
        #[serde(rename = "type")]
        kind: &'static str,
        diff_ids: [String; 1],
    }
    #[derive(Serialize)]
    struct History {
        created_by: &'static str,
    }
    let config = Config {
        architecture: host_architecture(),
        os: "linux",
        config: RunConfig {
            user: spec.user.as_deref(),
            env: &spec.env,
            entrypoint: &spec.entrypoint,
            cmd: &spec.cmd,
            working_dir: spec.working_dir.as_deref(),
        },
        rootfs: RootFs {
            kind: "layers",
            diff_ids: [format!("sha256:{layer_hex}")],
        },
        history: [History {
            created_by: "schedlab provisioning::images",
        }],
    };
    serde_json::to_vec(&config).map_err(|source| ImageError::Json {
        tag: spec.tag.clone(),
        what: "the image config",
        source,
    })
}

/// `manifest.json`: the one image of the archive, by its file names.
fn manifest_json(spec: &ImageSpec, config_hex: &str, layer_hex: &str) -> Result<Vec<u8>, ImageError> {
    #[derive(Serialize)]
    #[serde(rename_all = "PascalCase")]
    struct Manifest<'a> {
        config: String,
        repo_tags: [&'a str; 1],
        layers: [String; 1],
    }
    let manifest = [Manifest {
        config: format!("{config_hex}.json"),
        repo_tags: [&spec.tag],
        layers: [format!("{layer_hex}/layer.tar")],
    }];
    serde_json::to_vec(&manifest).map_err(|source| ImageError::Json {
        tag: spec.tag.clone(),
        what: "manifest.json",
        source,
    })
}

fn sha256_hex(bytes: &[u8]) -> String {
    format!("{:x}", Sha256::digest(bytes))
}

/// A writer that hashes and counts what passes through it.
struct Digesting<W> {
    inner: W,
    sha: Sha256,
    len: u64,
}

impl<W> Digesting<W> {
    fn new(inner: W) -> Self {
        Digesting {
            inner,
            sha: Sha256::new(),
            len: 0,
        }
    }

    /// The writer, the sha256 (hex) and the count of the bytes written.
    fn finish(self) -> (W, String, u64) {
        (self.inner, format!("{:x}", self.sha.finalize()), self.len)
    }
}

impl<W: Write> Write for Digesting<W> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let n = self.inner.write(buf)?;
        self.sha.update(&buf[..n]);
        self.len += n as u64;
        Ok(n)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.inner.flush()
    }
}

/// Reads exactly `len` bytes of a host file. The tar header already holds
/// the size seen when it was opened; a file that shrinks meanwhile must fail
/// rather than shift every later entry. Marks whether the failure was its own
/// (a read) rather than the archive's (a write).
struct Exactly {
    inner: io::Take<File>,
    left: u64,
    failed: bool,
}

impl Exactly {
    fn new(file: File, len: u64) -> Self {
        Exactly {
            inner: file.take(len),
            left: len,
            failed: false,
        }
    }
}

impl Read for Exactly {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if self.left == 0 {
            return Ok(0);
        }
        match self.inner.read(buf) {
            Ok(0) => {
                self.failed = true;
                Err(io::Error::new(
                    io::ErrorKind::UnexpectedEof,
                    "the file shrank while it was being read",
                ))
            }
            Ok(n) => {
                self.left -= n as u64;
                Ok(n)
            }
            Err(e) if e.kind() == io::ErrorKind::Interrupted => Err(e),
            Err(e) => {
                self.failed = true;
                Err(e)
            }
        }
    }
}

/// Every entry of a tar, read back in order: path, header, contents (for tests).
#[cfg(test)]
pub(super) fn read_tar(bytes: &[u8]) -> Vec<(std::path::PathBuf, Header, Vec<u8>)> {
    let mut archive = tar::Archive::new(bytes);
    archive
        .entries()
        .unwrap()
        .map(|entry| {
            let mut entry = entry.unwrap();
            let path = entry.path().unwrap().into_owned();
            let header = entry.header().clone();
            let mut contents = Vec::new();
            entry.read_to_end(&mut contents).unwrap();
            (path, header, contents)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;
    use std::path::PathBuf;

    fn spec(host_file: &Path) -> ImageSpec {
        let mut spec = ImageSpec::new("schedlab/probe:dev", vec!["/usr/local/bin/probe".into()]);
        spec.cmd = vec!["--serve".into()];
        spec.env = vec!["PATH=/usr/local/bin:/usr/bin:/bin".into()];
        spec.user = Some("65532:65532".into());
        spec.working_dir = Some("/work".into());
        spec.files = vec![
            ImageFile::host("/usr/local/bin/probe", host_file, 0o755),
            ImageFile::bytes("/etc/probe/config.yaml", "a: 1\n", 0o600),
            ImageFile::directory("/tmp", 0o1777),
            ImageFile::directory("/work", 0o750),
            ImageFile::symlink("/bin/probe", "../usr/local/bin/probe"),
        ];
        spec
    }

    fn host_file(dir: &Path) -> PathBuf {
        let path = dir.join("probe");
        std::fs::write(&path, b"#!/bin/true\nnot really a program\n").unwrap();
        path
    }

    fn entries(archive: &Path) -> BTreeMap<String, Vec<u8>> {
        read_tar(&std::fs::read(archive).unwrap())
            .into_iter()
            .map(|(path, _, contents)| (path.to_string_lossy().into_owned(), contents))
            .collect()
    }

    #[test]
    fn manifest_config_and_layer_digests_agree() {
        let dir = tempfile::tempdir().unwrap();
        let spec = spec(&host_file(dir.path()));
        let out = dir.path().join("probe.tar");
        let facts = write_docker_archive(&spec, &out).unwrap();
        let files = entries(&out);
        assert_eq!(files.len(), 3, "{:?}", files.keys());

        let manifest: serde_json::Value = serde_json::from_slice(&files["manifest.json"]).unwrap();
        let manifest = &manifest.as_array().unwrap()[0];
        assert_eq!(manifest["RepoTags"], serde_json::json!(["schedlab/probe:dev"]));

        let config_name = manifest["Config"].as_str().unwrap();
        let config_bytes = &files[config_name];
        let config_hex = sha256_hex(config_bytes);
        assert_eq!(config_name, format!("{config_hex}.json"));
        assert_eq!(facts.image_id, format!("sha256:{config_hex}"));

        let layer_name = manifest["Layers"][0].as_str().unwrap();
        let layer_bytes = &files[layer_name];
        let layer_hex = sha256_hex(layer_bytes);
        assert_eq!(layer_name, format!("{layer_hex}/layer.tar"));
        assert_eq!(facts.layer_digest, format!("sha256:{layer_hex}"));
        assert_eq!(facts.layer_size, layer_bytes.len() as u64);
        assert_eq!(facts.size, std::fs::metadata(&out).unwrap().len());

        let config: serde_json::Value = serde_json::from_slice(config_bytes).unwrap();
        assert_eq!(config["rootfs"]["type"], "layers");
        assert_eq!(config["rootfs"]["diff_ids"], serde_json::json!([facts.layer_digest]));
        assert_eq!(config["os"], "linux");
        assert_eq!(config["architecture"], host_architecture());
        let run = &config["config"];
        assert_eq!(run["Entrypoint"], serde_json::json!(["/usr/local/bin/probe"]));
        assert_eq!(run["Cmd"], serde_json::json!(["--serve"]));
        assert_eq!(run["Env"], serde_json::json!(["PATH=/usr/local/bin:/usr/bin:/bin"]));
        assert_eq!(run["User"], "65532:65532");
        assert_eq!(run["WorkingDir"], "/work");
    }

    #[test]
    fn the_same_spec_gives_byte_identical_archives_whatever_the_file_order() {
        let dir = tempfile::tempdir().unwrap();
        let spec = spec(&host_file(dir.path()));
        let first = dir.path().join("first.tar");
        let second = dir.path().join("second.tar");
        let a = write_docker_archive(&spec, &first).unwrap();
        let mut reversed = spec.clone();
        reversed.files.reverse();
        let b = write_docker_archive(&reversed, &second).unwrap();
        assert_eq!(a, b);
        assert_eq!(std::fs::read(&first).unwrap(), std::fs::read(&second).unwrap());

        // Rewriting over an existing tarball replaces it whole.
        std::fs::write(&second, b"stale").unwrap();
        write_docker_archive(&spec, &second).unwrap();
        assert_eq!(std::fs::read(&first).unwrap(), std::fs::read(&second).unwrap());
        let left: Vec<_> = std::fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(left.len(), 3, "no temp files left: {left:?}");
    }

    #[test]
    fn files_keep_their_mode_and_parent_directories_come_first() {
        let dir = tempfile::tempdir().unwrap();
        let host = host_file(dir.path());
        // The host file's own mode does not leak into the image.
        std::fs::set_permissions(&host, std::fs::Permissions::from_mode(0o600)).unwrap();
        let out = dir.path().join("probe.tar");
        let facts = write_docker_archive(&spec(&host), &out).unwrap();
        let files = entries(&out);
        let layer_name = format!("{}/layer.tar", facts.layer_digest.trim_start_matches("sha256:"));
        let layer = read_tar(&files[&layer_name]);

        let names: Vec<String> = layer
            .iter()
            .map(|(p, _, _)| p.to_string_lossy().trim_end_matches('/').to_string())
            .collect();
        assert_eq!(
            names,
            [
                "bin",
                "bin/probe",
                "etc",
                "etc/probe",
                "etc/probe/config.yaml",
                "tmp",
                "usr",
                "usr/local",
                "usr/local/bin",
                "usr/local/bin/probe",
                "work",
            ]
        );
        let by_name: BTreeMap<&str, &(PathBuf, Header, Vec<u8>)> =
            names.iter().map(String::as_str).zip(layer.iter()).collect();
        let mode = |name: &str| by_name[name].1.mode().unwrap();
        let kind = |name: &str| by_name[name].1.entry_type();
        assert_eq!(
            (kind("usr/local/bin/probe"), mode("usr/local/bin/probe")),
            (EntryType::Regular, 0o755)
        );
        assert_eq!(by_name["usr/local/bin/probe"].2, std::fs::read(&host).unwrap());
        assert_eq!(
            (kind("etc/probe/config.yaml"), mode("etc/probe/config.yaml")),
            (EntryType::Regular, 0o600)
        );
        assert_eq!(by_name["etc/probe/config.yaml"].2, b"a: 1\n");
        assert_eq!((kind("tmp"), mode("tmp")), (EntryType::Directory, 0o1777));
        assert_eq!((kind("work"), mode("work")), (EntryType::Directory, 0o750));
        assert_eq!((kind("usr/local"), mode("usr/local")), (EntryType::Directory, 0o755));
        assert_eq!(kind("bin/probe"), EntryType::Symlink);
        assert_eq!(
            by_name["bin/probe"].1.link_name().unwrap().unwrap(),
            Path::new("../usr/local/bin/probe")
        );
        for (name, header, _) in &layer {
            assert_eq!(
                (header.uid().unwrap(), header.gid().unwrap(), header.mtime().unwrap()),
                (0, 0, 0),
                "{}",
                name.display()
            );
        }
    }

    #[test]
    fn long_paths_survive() {
        let dir = tempfile::tempdir().unwrap();
        let deep = format!("/{}/{}", "d".repeat(90), "f".repeat(90));
        let mut spec = ImageSpec::new("x:dev", vec!["/x".into()]);
        spec.files = vec![ImageFile::bytes(deep.clone(), "deep", 0o644)];
        let out = dir.path().join("x.tar");
        let facts = write_docker_archive(&spec, &out).unwrap();
        let files = entries(&out);
        let layer = read_tar(&files[&format!("{}/layer.tar", &facts.layer_digest[7..])]);
        let last = layer.last().unwrap();
        assert_eq!(Path::new("/").join(&last.0), Path::new(&deep));
        assert_eq!(last.2, b"deep");
    }

    #[test]
    fn impossible_specs_are_input_errors_that_name_the_path() {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("x.tar");
        let with = |files: Vec<ImageFile>| {
            let mut spec = ImageSpec::new("x:dev", vec!["/x".into()]);
            spec.files = files;
            spec
        };
        let cases = [
            (with(vec![ImageFile::bytes("x", "", 0o644)]), "\"x\""),
            (with(vec![ImageFile::bytes("/a/../x", "", 0o644)]), "/a/../x"),
            (with(vec![ImageFile::bytes("/a//x", "", 0o644)]), "/a//x"),
            (with(vec![ImageFile::directory("/", 0o755)]), "\"/\""),
            (
                with(vec![
                    ImageFile::bytes("/x", "", 0o644),
                    ImageFile::directory("/x", 0o755),
                ]),
                "/x",
            ),
            (with(vec![ImageFile::bytes("/x", "", 0o10644)]), "0o10644"),
            (
                with(vec![
                    ImageFile::bytes("/a/b", "", 0o644),
                    ImageFile::bytes("/a/b/c", "", 0o644),
                ]),
                "/a/b is not a directory, but /a/b/c",
            ),
            (
                with(vec![
                    ImageFile::symlink("/lib64", "usr/lib64"),
                    ImageFile::bytes("/lib64/ld.so", "", 0o755),
                ]),
                "/lib64 is not a directory",
            ),
            (ImageSpec::new("x:dev", Vec::new()), "no entrypoint"),
            (ImageSpec::new("", vec!["/x".into()]), "empty"),
            (ImageSpec::new("x dev", vec!["/x".into()]), "\"x dev\""),
        ];
        for (spec, named) in cases {
            let err = write_docker_archive(&spec, &out).unwrap_err();
            assert!(err.is_input_error(), "{err:?}");
            assert!(err.to_string().contains(named), "{err} should name {named}");
            assert!(!out.exists());
        }
    }

    #[test]
    fn an_unreadable_host_file_fails_naming_it_and_leaves_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("x.tar");
        let missing = dir.path().join("no-such-binary");
        let mut spec = ImageSpec::new("x:dev", vec!["/x".into()]);
        spec.files = vec![ImageFile::host("/x", &missing, 0o755)];
        let err = write_docker_archive(&spec, &out).unwrap_err();
        assert!(matches!(err, ImageError::Read { .. }), "{err:?}");
        assert!(err.to_string().contains(&*missing.to_string_lossy()), "{err}");
        assert!(err.to_string().contains("for /x in image x:dev"), "{err}");

        spec.files = vec![ImageFile::host("/x", dir.path(), 0o755)];
        let err = write_docker_archive(&spec, &out).unwrap_err();
        assert!(err.to_string().contains("not a regular file"), "{err}");
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0, "nothing written");
    }

    #[test]
    fn an_unwritable_destination_names_it() {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("no/such/folder/x.tar");
        let err = write_docker_archive(&ImageSpec::new("x:dev", vec!["/x".into()]), &out).unwrap_err();
        assert!(matches!(err, ImageError::Write { .. }), "{err:?}");
        assert!(!err.is_input_error());
        assert!(err.to_string().contains("no/such/folder/x.tar"), "{err}");
    }
}
