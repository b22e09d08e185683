//! `list [--all | --snoozed] [--json]`: what is waiting for the operator (a request the
//! policy holds is marked), which pending requests ask the same questions (groups that
//! `answer ID --alike` answers at once), and what is snoozed.

use std::collections::HashMap;

use anyhow::{Context, Result};
use chrono::Utc;
use inbox_engine::alike::{alike_groups, AlikeGroup};
use inbox_engine::RequestSummary;
use serde::Serialize;

use crate::args::{ListArgs, LocationArgs};
use crate::{exit, locations, output, render};

/// A `--json` row: the summary, and its group when it has one.
#[derive(Serialize)]
struct Row<'a> {
    #[serde(flatten)]
    summary: &'a RequestSummary,
    #[serde(skip_serializing_if = "Option::is_none")]
    alike: Option<Alike<'a>>,
}

/// `"alike": {"fingerprint": HEX, "size": N}`: rows with one fingerprint are one group.
#[derive(Serialize)]
struct Alike<'a> {
    fingerprint: &'a str,
    size: usize,
}

pub fn run(locations: &LocationArgs, args: &ListArgs) -> Result<u8> {
    let mut engine = locations::open_engine(locations)?;
    // Ingest what arrived while no inbox ran; policies stay with `watch`.
    engine.sync().context("cannot scan the spool")?;
    let snoozed = engine
        .queries()
        .snoozed()
        .context("cannot list snoozed requests")?;
    if args.snoozed {
        return list_snoozed(&snoozed, args.json);
    }
    let mut rows = engine.queries().pending().context("cannot list requests")?;
    let groups = alike_groups(&engine.queries()).context("cannot find alike requests")?;
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
        output::json(&json_rows(&rows, &groups))?;
    } else if rows.is_empty() {
        let none = if args.all {
            "No requests."
        } else {
            "No pending requests."
        };
        output::stdout(&format!("{none}\n"))?;
    } else {
        let mut text = render::summary_table(&rows, args.all, Utc::now());
        if !groups.is_empty() {
            text.push_str(&render::alike_lines(&groups));
        }
        output::stdout(&text)?;
    }
    if !args.json && !snoozed.is_empty() {
        // Out of the list, not out of mind: say they exist and how to see them.
        output::stderr(&format!(
            "{} snoozed (answer-inbox list --snoozed)",
            render::count(snoozed.len(), "request")
        ));
    }
    Ok(exit::OK)
}

/// `list --snoozed`: the snoozed requests, soonest back first.
fn list_snoozed(rows: &[RequestSummary], json: bool) -> Result<u8> {
    if json {
        output::json(&rows)?;
    } else if rows.is_empty() {
        output::stdout("No snoozed requests.\n")?;
    } else {
        output::stdout(&render::summary_table(rows, false, Utc::now()))?;
    }
    Ok(exit::OK)
}

/// Every row, with `alike` on the pending ones that are in a group.
fn json_rows<'a>(rows: &'a [RequestSummary], groups: &'a [AlikeGroup]) -> Vec<Row<'a>> {
    let mut alike: HashMap<&str, Alike<'a>> = HashMap::new();
    for group in groups {
        for member in &group.members {
            alike.insert(
                member.id.as_str(),
                Alike {
                    fingerprint: &group.fingerprint,
                    size: group.members.len(),
                },
            );
        }
    }
    rows.iter()
        .map(|summary| Row {
            summary,
            alike: if summary.state == inbox_engine::State::Pending {
                alike.remove(summary.id.as_str())
            } else {
                None
            },
        })
        .collect()
}
