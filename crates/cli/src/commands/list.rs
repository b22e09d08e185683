//! `list [--all] [--json]`: what is waiting for the operator.

use anyhow::{Context, Result};
use chrono::Utc;

use crate::args::{ListArgs, LocationArgs};
use crate::{exit, locations, output, render};

pub fn run(locations: &LocationArgs, args: &ListArgs) -> Result<u8> {
    let mut engine = locations::open_engine(locations)?;
    // Ingest what arrived while no inbox ran; policies stay with `watch`.
    engine.sync().context("cannot scan the spool")?;
    let mut rows = engine.queries().pending().context("cannot list requests")?;
    if args.all {
        let history = engine
            .queries()
            .history(i64::MAX as usize)
            .context("cannot list settled requests")?;
        rows.extend(history);
    }
    let unwritten: Vec<_> = rows.iter().filter(|r| r.unwritten.is_some()).collect();
    if let Some(first) = unwritten.first() {
        output::stderr(&format!(
            "{} answer(s) could not be written to the spool yet and are kept for retry; \
             the last error: {}",
            unwritten.len(),
            render::line(first.unwritten.as_deref().unwrap_or_default())
        ));
    }
    if args.json {
        output::json(&rows)?;
    } else if rows.is_empty() {
        let none = if args.all {
            "No requests."
        } else {
            "No pending requests."
        };
        output::stdout(&format!("{none}\n"))?;
    } else {
        output::stdout(&render::summary_table(&rows, args.all, Utc::now()))?;
    }
    Ok(exit::OK)
}
