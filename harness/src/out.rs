//! The binary's standard output. Every command prints through [`outln!`] and
//! [`out!`], which return write errors (as [`StdoutError`]) instead of
//! panicking as `println!` does; `main` ends quietly with exit 0 when the
//! reader went away (a broken pipe: `schedlab ... | head -1`), and reports
//! any other write error (a full disk) with exit 1.

use std::fmt;
use std::io::Write;

/// Standard output could not be written.
#[derive(Debug, thiserror::Error)]
#[error("writing to standard output: {0}")]
pub struct StdoutError(pub std::io::Error);

impl StdoutError {
    /// The reader closed its end of the pipe: nobody wants the rest.
    pub fn is_broken_pipe(&self) -> bool {
        self.0.kind() == std::io::ErrorKind::BrokenPipe
    }
}

/// Writes `args` to standard output and flushes it, so that an error
/// surfaces here, in the command that printed, and not at exit.
pub fn write_fmt(args: fmt::Arguments<'_>) -> Result<(), StdoutError> {
    write_to(&mut std::io::stdout().lock(), args)
}

/// Writes `args` with its control characters escaped but for line breaks
/// and tabs ([`schedlab_core::text::escape_controls_except`]): what is printed
/// quotes names from outside (a scenario's, an arm's, a server's), and an
/// ESC, OSC or BEL in one must not reach the terminal raw.
fn write_to(w: &mut dyn Write, args: fmt::Arguments<'_>) -> Result<(), StdoutError> {
    let text = match args.as_str() {
        Some(text) => std::borrow::Cow::Borrowed(text),
        None => std::borrow::Cow::Owned(args.to_string()),
    };
    let text = schedlab_core::text::escape_controls_except(&text, &['\n', '\t']);
    w.write_all(text.as_bytes())
        .and_then(|()| w.flush())
        .map_err(StdoutError)
}

/// `print!` that returns `Result<(), StdoutError>`.
macro_rules! out {
    ($($arg:tt)*) => {
        $crate::out::write_fmt(format_args!($($arg)*))
    };
}

/// `println!` that returns `Result<(), StdoutError>`.
macro_rules! outln {
    () => {
        $crate::out::write_fmt(format_args!("\n"))
    };
    ($($arg:tt)*) => {
        $crate::out::write_fmt(format_args!("{}\n", format_args!($($arg)*)))
    };
}

/// A line to standard error (a warning, a note on progress), escaped like
/// standard output, and dropped when standard error is closed or full: a
/// note must never end a command, as `eprintln!`'s panic would.
pub fn note_fmt(args: fmt::Arguments<'_>) {
    let _ = write_to(&mut std::io::stderr().lock(), args);
}

/// `eprintln!` through [`note_fmt`].
macro_rules! noteln {
    ($($arg:tt)*) => {
        $crate::out::note_fmt(format_args!("{}\n", format_args!($($arg)*)))
    };
}

pub(crate) use {noteln, out, outln};

/// Whether `err` is, or was caused by, a broken pipe on standard output.
pub fn is_broken_pipe(err: &anyhow::Error) -> bool {
    err.chain().any(|cause| {
        cause
            .downcast_ref::<StdoutError>()
            .is_some_and(StdoutError::is_broken_pipe)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A writer that fails every write with `kind`.
    struct Failing(std::io::ErrorKind);
    impl Write for Failing {
        fn write(&mut self, _: &[u8]) -> std::io::Result<usize> {
            Err(self.0.into())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    #[test]
    fn write_errors_are_returned_and_only_a_broken_pipe_is_one() {
        let err = write_to(&mut Failing(std::io::ErrorKind::BrokenPipe), format_args!("x")).unwrap_err();
        assert!(err.is_broken_pipe());
        let wrapped = anyhow::Error::from(err).context("printing the table");
        assert!(is_broken_pipe(&wrapped));
        let full = write_to(&mut Failing(std::io::ErrorKind::StorageFull), format_args!("x")).unwrap_err();
        assert!(!full.is_broken_pipe());
        assert!(full.to_string().starts_with("writing to standard output: "), "{full}");
        assert!(!is_broken_pipe(&anyhow::Error::from(full)));
        // a broken pipe elsewhere (a connection) is not standard output's
        let other = anyhow::Error::from(std::io::Error::from(std::io::ErrorKind::BrokenPipe));
        assert!(!is_broken_pipe(&other));
    }

    #[test]
    fn what_is_written_arrives_whole() {
        let mut buf = Vec::new();
        write_to(&mut buf, format_args!("{}\n", format_args!("a {} c", "b"))).unwrap();
        assert_eq!(buf, b"a b c\n");
    }
}
