//! `audit export [--output FILE]` and `audit verify [--file FILE] [--head HASH]`: the
//! hash-chained event log (inbox_engine::audit), written out and checked.

use std::path::Path;

use anyhow::{bail, Context, Result};
use inbox_engine::audit::{self, Broken, Entry, Fault};
use inbox_engine::inbox_policy::capped_read;
use inbox_engine::Store;

use crate::args::{AuditArgs, AuditCommand, AuditExportArgs, AuditVerifyArgs, LocationArgs};
use crate::{exit, locations, output};

pub fn run(locations: &LocationArgs, args: &AuditArgs) -> Result<u8> {
    match &args.command {
        AuditCommand::Export(args) => export(locations, args),
        AuditCommand::Verify(args) => verify(locations, args),
    }
}

fn export(locations: &LocationArgs, args: &AuditExportArgs) -> Result<u8> {
    let lines = audit::to_json_lines(&stored_entries(locations)?);
    match &args.output {
        Some(path) => std::fs::write(path, output::json_escaped(&lines))
            .with_context(|| format!("cannot write the audit log to {}", path.display()))?,
        None => output::json_text(&lines)?,
    }
    Ok(exit::OK)
}

fn verify(locations: &LocationArgs, args: &AuditVerifyArgs) -> Result<u8> {
    let (entries, what) = match &args.file {
        Some(path) => {
            let what = format!("the export {}", path.display());
            // An entry the format does not allow (an added field, an edited `at`) is a
            // broken export, said as every other break is.
            match audit::parse_export(&read_export(path)?) {
                Ok(entries) => (entries, what),
                Err(problem) => return broken(args, &what, None, &problem.to_string()),
            }
        }
        None => (stored_entries(locations)?, "the audit log".to_owned()),
    };
    let checked = match &args.head {
        Some(head) => audit::verify_with_head(&entries, head),
        None => audit::verify(&entries),
    };
    match checked {
        Ok(intact) if args.json => {
            output::json(&serde_json::json!({
                "intact": true,
                "entries": intact.entries,
                "head": intact.head,
            }))?;
            Ok(exit::OK)
        }
        Ok(intact) => {
            output::stdout(&format!(
                "{what} is intact: {} entries; head {}\n",
                intact.entries, intact.head
            ))?;
            Ok(exit::OK)
        }
        Err(fault) => broken(args, &what, Some(&fault), &fault.to_string()),
    }
}

/// A broken chain (or an export that cannot be read as one): exit 1, said on standard error,
/// or with --json as `{"intact": false, ...}` on standard output, where a script reads it.
fn broken(args: &AuditVerifyArgs, what: &str, fault: Option<&Broken>, message: &str) -> Result<u8> {
    if args.json {
        output::json(&serde_json::json!({
            "intact": false,
            "seq": fault.map(|broken| broken.seq),
            "fault": fault.map_or("unreadable", |broken| fault_name(&broken.fault)),
            "message": message,
        }))?;
    } else {
        output::stderr(&format!("answer-inbox: {what} is broken: {message}"));
    }
    Ok(exit::FAILURE)
}

/// A stable name for each fault, for scripts (the message says it for people).
fn fault_name(fault: &Fault) -> &'static str {
    match fault {
        Fault::Edited => "edited",
        Fault::Deleted => "deleted",
        Fault::Reordered { .. } => "reordered",
        Fault::OutOfOrder { .. } => "out_of_order",
        Fault::WrongPrevious => "wrong_previous",
        Fault::HeadMissing { .. } => "head_missing",
    }
}

/// The database's log. A database that does not exist is an error, not an empty log: the
/// wrong --db should not look like a clean history.
fn stored_entries(locations: &LocationArgs) -> Result<Vec<Entry>> {
    let path = locations::db_path(locations)?;
    if !path.exists() {
        bail!(
            "no inbox database at {} (give --db FILE or ANSWER_INBOX_DB)",
            path.display()
        );
    }
    let store = Store::open(&path)
        .with_context(|| format!("cannot open the database {}", path.display()))?;
    store
        .audit_entries()
        .with_context(|| format!("cannot read the audit log from {}", path.display()))
}

/// The largest audit export read. An entry is a few hundred bytes, so 256 MiB holds
/// hundreds of thousands of settled requests, more than an inbox gathers in years; past it
/// a file is not an export (and the database itself can be verified without --file).
const MAX_EXPORT_BYTES: u64 = 256 * 1024 * 1024;

/// The export at `path`, or on standard input for `-`: a plain file or the piped stream,
/// never a FIFO or device named as a file (which would hang or never end), at most
/// MAX_EXPORT_BYTES either way (inbox_policy::capped_read).
fn read_export(path: &Path) -> Result<String> {
    if path == Path::new("-") {
        Ok(capped_read::read_stream_text(
            std::io::stdin().lock(),
            "the export from standard input",
            MAX_EXPORT_BYTES,
        )?)
    } else {
        capped_read::read_text(path, MAX_EXPORT_BYTES).map_err(|error| {
            anyhow::anyhow!(
                "cannot read the export {}: {}",
                path.display(),
                error.problem()
            )
        })
    }
}
