//! A finished cell's folder as text lines: how a pod hands its cell back
//! through the one channel every cluster has, the pod's log, without a
//! storage class. The folder is a gzipped tar, in base64 lines framed by a
//! header (the cell's id, the archive's size and SHA-256) and a trailer, so
//! the reader finds it among the cell's other output and refuses it cut
//! short or changed.

use crate::Result;
use crate::error::{While, input};
use base64::Engine;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};

const BEGIN: &str = "schedlab-cell-archive v1";
const END: &str = "schedlab-cell-archive end";
/// Each archive line starts with this, so lines of other output are never read as archive.
const LINE: &str = "@sca ";
/// Base64 characters a line: well under a pipe's atomic write, so a line is never split by other output.
const LINE_CHARS: usize = 1024;

/// The gzipped tar of the folder `dir`, its entries in name order with fixed times and owners, so the same folder
/// gives the same bytes.
pub fn pack(dir: &Path) -> Result<Vec<u8>> {
    let gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    let mut tar = tar::Builder::new(gz);
    tar.mode(tar::HeaderMode::Deterministic);
    let mut files = Vec::new();
    collect(dir, dir, &mut files)?;
    files.sort();
    for rel in files {
        let path = dir.join(&rel);
        tar.append_path_with_name(&path, &rel)
            .while_doing(|| format!("archiving {}", path.display()))?;
    }
    let gz = tar.into_inner().while_doing(|| "finishing a cell's archive".into())?;
    gz.finish().while_doing(|| "compressing a cell's archive".into())
}

fn collect(root: &Path, dir: &Path, out: &mut Vec<PathBuf>) -> Result<()> {
    for entry in std::fs::read_dir(dir).while_doing(|| format!("reading {}", dir.display()))? {
        let entry = entry.while_doing(|| format!("reading {}", dir.display()))?;
        let path = entry.path();
        let kind = entry
            .file_type()
            .while_doing(|| format!("reading {}", path.display()))?;
        if kind.is_dir() {
            collect(root, &path, out)?;
        } else if kind.is_file() {
            out.push(path.strip_prefix(root).unwrap_or(&path).to_path_buf());
        }
    }
    Ok(())
}

/// Writes the cell `id`'s archive `bytes` as framed lines.
pub fn write_framed(id: &str, bytes: &[u8], out: &mut impl Write) -> std::io::Result<()> {
    let sha = schedlab_core::digest::sha256_hex(bytes);
    writeln!(out, "{BEGIN} id={id} bytes={} sha256={sha}", bytes.len())?;
    let text = base64::engine::general_purpose::STANDARD.encode(bytes);
    for chunk in text.as_bytes().chunks(LINE_CHARS) {
        out.write_all(LINE.as_bytes())?;
        out.write_all(chunk)?;
        out.write_all(b"\n")?;
    }
    writeln!(out, "{END} id={id}")?;
    out.flush()
}

/// The archive of cell `id` in `log` (the last one, if a retried pod wrote several), checked against its header.
pub fn read_framed(log: &str, id: &str) -> Result<Vec<u8>> {
    let begin = format!("{BEGIN} id={id} ");
    let end = format!("{END} id={id}");
    let lines: Vec<&str> = log.lines().collect();
    let Some(start) = lines.iter().rposition(|l| l.starts_with(&begin)) else {
        return Err(input(format!(
            "cell {id}: its log holds no archive of the cell (did it finish?)"
        )));
    };
    let header = &lines[start][begin.len()..];
    let field = |name: &str| {
        header
            .split_whitespace()
            .find_map(|w| w.strip_prefix(name).and_then(|v| v.strip_prefix('=')))
    };
    let (Some(size), Some(sha)) = (field("bytes").and_then(|b| b.parse::<usize>().ok()), field("sha256")) else {
        return Err(input(format!(
            "cell {id}: its archive's header is malformed: {}",
            lines[start]
        )));
    };
    let mut text = String::new();
    let mut ended = false;
    for line in &lines[start + 1..] {
        if let Some(chunk) = line.strip_prefix(LINE) {
            text.push_str(chunk.trim_end());
        } else if line.trim_end() == end {
            ended = true;
            break;
        }
    }
    if !ended {
        return Err(input(format!(
            "cell {id}: its archive in the log is cut short (a kubelet keeps at most its containerLogMaxSize, 10 MiB \
             by default, of a container's log): run such cells with --volume-claim"
        )));
    }
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(text.as_bytes())
        .map_err(|e| input(format!("cell {id}: its archive is not base64: {e}")))?;
    let found = schedlab_core::digest::sha256_hex(&bytes);
    if bytes.len() != size || found != sha {
        return Err(input(format!(
            "cell {id}: its archive is {} bytes with SHA-256 {found}, where its header says {size} bytes and {sha}",
            bytes.len()
        )));
    }
    Ok(bytes)
}

/// Unpacks an archive into `into` (made if missing); entries reaching outside it are refused.
pub fn unpack(bytes: &[u8], into: &Path) -> Result<()> {
    std::fs::create_dir_all(into).while_doing(|| format!("creating {}", into.display()))?;
    let mut gz = flate2::read::GzDecoder::new(bytes);
    let mut raw = Vec::new();
    gz.read_to_end(&mut raw)
        .while_doing(|| "decompressing a cell's archive".into())?;
    let mut archive = tar::Archive::new(raw.as_slice());
    for entry in archive.entries().while_doing(|| "reading a cell's archive".into())? {
        let mut entry = entry.while_doing(|| "reading a cell's archive".into())?;
        // unpack_in refuses absolute paths and `..`
        let placed = entry
            .unpack_in(into)
            .while_doing(|| format!("unpacking into {}", into.display()))?;
        if !placed {
            return Err(input(format!(
                "a cell's archive has an entry outside its folder: {:?}",
                entry.path()
            )));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn folder() -> tempfile::TempDir {
        let tmp = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(tmp.path().join("runs/default/seed-1")).unwrap();
        std::fs::write(tmp.path().join("manifest.json"), "{}\n").unwrap();
        let records: String = (0..5000).map(|i| format!("{{\"t\":{i}}}\n")).collect();
        std::fs::write(tmp.path().join("runs/default/seed-1/records.jsonl"), records).unwrap();
        tmp
    }

    #[test]
    fn a_folder_goes_through_a_log_among_other_output_and_comes_back_the_same() {
        let src = folder();
        let bytes = pack(src.path()).unwrap();
        assert_eq!(
            bytes,
            pack(src.path()).unwrap(),
            "the same folder gives the same archive"
        );
        let mut log = b"some output\nerror: a warning line\n".to_vec();
        write_framed("abc", &bytes, &mut log).unwrap();
        log.extend_from_slice(b"a trailing line\n");
        let text = String::from_utf8(log).unwrap();
        assert!(text.lines().all(|l| l.len() <= LINE_CHARS + LINE.len()));
        let back = read_framed(&text, "abc").unwrap();
        assert_eq!(back, bytes);
        let out = tempfile::tempdir().unwrap();
        unpack(&back, &out.path().join("cell")).unwrap();
        for rel in ["manifest.json", "runs/default/seed-1/records.jsonl"] {
            assert_eq!(
                std::fs::read(src.path().join(rel)).unwrap(),
                std::fs::read(out.path().join("cell").join(rel)).unwrap()
            );
        }
    }

    #[test]
    fn an_archive_cut_short_changed_or_missing_is_refused() {
        let src = folder();
        let bytes = pack(src.path()).unwrap();
        let mut log = Vec::new();
        write_framed("abc", &bytes, &mut log).unwrap();
        let text = String::from_utf8(log).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        // cut short: no trailer
        let cut = lines[..lines.len() - 2].join("\n");
        assert!(read_framed(&cut, "abc").unwrap_err().to_string().contains("cut short"));
        // one line changed
        let mut changed: Vec<String> = lines.iter().map(|l| l.to_string()).collect();
        changed[1] = format!("{LINE}{}", "A".repeat(changed[1].len() - LINE.len()));
        let err = read_framed(&changed.join("\n"), "abc").unwrap_err().to_string();
        assert!(err.contains("SHA-256"), "{err}");
        // another cell's archive is not this one's
        assert!(
            read_framed(&text, "abd")
                .unwrap_err()
                .to_string()
                .contains("no archive")
        );
    }
}
