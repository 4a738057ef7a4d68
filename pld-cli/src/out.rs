//! Standard output that survives a closed pipe.
//!
//! `pld … | head` closes the pipe early; `println!` would then panic. Every line pld prints
//! to stdout goes through `outln!` / `out!` instead: the first write that fails with
//! `BrokenPipe` marks stdout closed, later output is dropped, and the command goes on to its
//! real end — output files are still written and the exit code is still the run's own
//! (a fault after a closed pipe still exits 3). Any other write error is reported once on
//! stderr, then treated the same way.

use std::fmt;
use std::io::{self, Write};
use std::sync::atomic::{AtomicBool, Ordering};

static CLOSED: AtomicBool = AtomicBool::new(false);

/// Writes `args` (and a newline when `newline`) to stdout unless stdout has been found closed.
pub fn write(args: fmt::Arguments<'_>, newline: bool) {
    if CLOSED.load(Ordering::Relaxed) {
        return;
    }
    let mut o = io::stdout().lock();
    let r = o.write_fmt(args).and_then(|()| if newline { o.write_all(b"\n") } else { Ok(()) });
    if let Err(e) = r.and_then(|()| if newline { o.flush() } else { Ok(()) }) {
        if !CLOSED.swap(true, Ordering::Relaxed) && e.kind() != io::ErrorKind::BrokenPipe {
            eprintln!("warning: cannot write to stdout ({e}); further output is dropped");
        }
    }
}

/// `println!` that stops quietly when stdout is closed.
macro_rules! outln {
    ($($t:tt)*) => { $crate::out::write(format_args!($($t)*), true) };
}

/// `print!` that stops quietly when stdout is closed.
macro_rules! out {
    ($($t:tt)*) => { $crate::out::write(format_args!($($t)*), false) };
}
