//! Reading a file a user named, bounded: whatever the file system reports
//! about it, at most a cap is read, and only regular files are read at all
//! (`/dev/zero` never ends, a FIFO blocks until someone writes to it).

use std::io::{Error, ErrorKind, Read};
use std::path::Path;

/// The bytes of the regular file `path`, refused with an error of kind
/// `InvalidInput` when it is not a regular file (after following symbolic
/// links) or holds more than `max_bytes`.
pub fn read_bounded(path: &Path, max_bytes: u64) -> Result<Vec<u8>, Error> {
    let meta = std::fs::metadata(path)?;
    if !meta.is_file() {
        return Err(Error::new(
            ErrorKind::InvalidInput,
            "not a regular file (devices, pipes and folders are not read)",
        ));
    }
    let mut bytes = Vec::with_capacity(meta.len().min(max_bytes) as usize);
    // one byte past the cap tells a file at the cap from a longer one
    std::fs::File::open(path)?
        .take(max_bytes.saturating_add(1))
        .read_to_end(&mut bytes)?;
    if bytes.len() as u64 > max_bytes {
        return Err(Error::new(
            ErrorKind::InvalidInput,
            format!("larger than the cap of {}", human(max_bytes)),
        ));
    }
    Ok(bytes)
}

/// [`read_bounded`] as UTF-8 text.
pub fn read_bounded_string(path: &Path, max_bytes: u64) -> Result<String, Error> {
    String::from_utf8(read_bounded(path, max_bytes)?).map_err(|_| Error::new(ErrorKind::InvalidData, "not UTF-8 text"))
}

fn human(bytes: u64) -> String {
    if bytes >= 1 << 20 && bytes.is_multiple_of(1 << 20) {
        format!("{} MiB", bytes >> 20)
    } else {
        format!("{bytes} bytes")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_regular_files_up_to_the_cap_and_refuses_the_rest() {
        let tmp = tempfile::tempdir().unwrap();
        let at_cap = tmp.path().join("a");
        std::fs::write(&at_cap, vec![b'x'; 64]).unwrap();
        assert_eq!(read_bounded(&at_cap, 64).unwrap().len(), 64);
        let err = read_bounded(&at_cap, 63).unwrap_err();
        assert_eq!(err.kind(), ErrorKind::InvalidInput);
        assert!(err.to_string().contains("63 bytes"), "{err}");
        // a folder, a device that never ends, a FIFO that would block
        assert!(
            read_bounded(tmp.path(), 1 << 20)
                .unwrap_err()
                .to_string()
                .contains("not a regular file")
        );
        if Path::new("/dev/zero").exists() {
            let err = read_bounded(Path::new("/dev/zero"), 4 << 20).unwrap_err();
            assert!(err.to_string().contains("not a regular file"), "{err}");
        }
        let fifo = tmp.path().join("fifo");
        if std::process::Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .is_ok_and(|s| s.success())
        {
            let err = read_bounded(&fifo, 1 << 20).unwrap_err();
            assert!(err.to_string().contains("not a regular file"), "{err}");
        }
        assert_eq!(
            read_bounded(&tmp.path().join("missing"), 1).unwrap_err().kind(),
            ErrorKind::NotFound
        );
        std::fs::write(&at_cap, [0xff, 0xfe]).unwrap();
        assert_eq!(
            read_bounded_string(&at_cap, 64).unwrap_err().kind(),
            ErrorKind::InvalidData
        );
        assert!(human(4 << 20) == "4 MiB" && human(10) == "10 bytes");
    }
}
