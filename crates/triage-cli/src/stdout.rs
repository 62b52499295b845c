//! Standard output that a reader may close early.
//!
//! `println!` panics when stdout is a pipe whose reader has gone (`triage page analyze FILE |
//! head -1`): Rust ignores SIGPIPE, so the write fails with `BrokenPipe` instead of killing the
//! process as it would a C tool. Every line the CLI prints goes through `outln!` / `out!`
//! instead, which end the process quietly with status 0 on a broken pipe (the reader has what
//! it asked for) and with an error on any other write failure (a full disk, say).

use std::io::Write;

/// Writes formatted text to stdout; exits on failure as described in the module doc.
pub fn write_fmt(args: std::fmt::Arguments<'_>) {
    let mut out = std::io::stdout().lock();
    if let Err(e) = out.write_fmt(args) {
        fail(e);
    }
}

/// Ends the process after a failed write to stdout.
pub fn fail(e: std::io::Error) -> ! {
    if e.kind() == std::io::ErrorKind::BrokenPipe {
        std::process::exit(0);
    }
    eprintln!("error: writing to standard output: {e}");
    std::process::exit(1);
}

/// `print!` that exits quietly when the reader of stdout has gone.
macro_rules! out {
    ($($arg:tt)*) => { $crate::stdout::write_fmt(format_args!($($arg)*)) };
}

/// `println!` that exits quietly when the reader of stdout has gone.
macro_rules! outln {
    () => { $crate::stdout::write_fmt(format_args!("\n")) };
    ($($arg:tt)*) => { $crate::stdout::write_fmt(format_args!("{}\n", format_args!($($arg)*))) };
}
