//! Writing results. Standard output carries the result (ids, JSON, tables); standard error
//! carries confirmations, problems and progress, so `> outcome.json` captures only data.

use std::io::{self, Write};

use anyhow::{Context, Result};
use serde::Serialize;

/// Writes `text` to standard output. A reader that went away (`| head`) is not an error.
pub fn stdout(text: &str) -> Result<()> {
    let mut out = io::stdout().lock();
    match out.write_all(text.as_bytes()).and_then(|()| out.flush()) {
        Err(error) if error.kind() != io::ErrorKind::BrokenPipe => {
            Err(error).context("cannot write to standard output")
        }
        _ => Ok(()),
    }
}

/// Pretty JSON and a final newline, on standard output.
pub fn json<T: Serialize + ?Sized>(value: &T) -> Result<()> {
    let mut text = serde_json::to_string_pretty(value).context("cannot serialise the result")?;
    text.push('\n');
    stdout(&text)
}
