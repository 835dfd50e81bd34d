//! SHA-256 digests, lowercase hex: what a sidecar or a manifest records so
//! that a file changed or swapped after it was written is refused, not read.

use sha2::{Digest, Sha256};
use std::io::Read;
use std::path::Path;

fn hex(digest: &[u8]) -> String {
    use std::fmt::Write;
    digest.iter().fold(String::with_capacity(64), |mut out, b| {
        // writing to a String cannot fail
        let _ = write!(out, "{b:02x}");
        out
    })
}

/// The SHA-256 of `bytes`.
pub fn sha256_hex(bytes: &[u8]) -> String {
    hex(&Sha256::digest(bytes))
}

/// The SHA-256 of the file at `path`, read in pieces (records files run to
/// gigabytes).
pub fn file_sha256(path: &Path) -> std::io::Result<String> {
    let mut file = std::fs::File::open(path)?;
    let mut hasher = Sha256::new();
    let mut buf = vec![0u8; 1 << 16];
    loop {
        let n = file.read(&mut buf)?;
        if n == 0 {
            break;
        }
        hasher.update(&buf[..n]);
    }
    Ok(hex(&hasher.finalize()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn digests_are_sha256_in_lowercase_hex() {
        assert_eq!(
            sha256_hex(b"hello world"),
            "b94d27b9934d3e08a52e52d7da7dabfac484efe37a5380ee9088f7ace2efcde9"
        );
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("f");
        // more than one read's worth
        let bytes: Vec<u8> = (0..200_000u32).map(|i| (i % 251) as u8).collect();
        std::fs::write(&path, &bytes).unwrap();
        assert_eq!(file_sha256(&path).unwrap(), sha256_hex(&bytes));
        assert!(file_sha256(&dir.path().join("missing")).is_err());
    }
}
