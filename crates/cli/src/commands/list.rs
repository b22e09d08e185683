//! `list [--all | --snoozed | --problems] [--json]`: what is waiting for the operator (a
//! request the policy holds is marked), which pending requests ask the same questions
//! (groups that `answer ID --alike` answers at once), what is snoozed, and the files in the
//! spool that are never read (a request dropped there must not be invisible).

use std::collections::HashMap;
use std::path::Path;

use anyhow::{Context, Result};
use chrono::{DateTime, SecondsFormat, Utc};
use inbox_app::SpoolProblemView;
use inbox_engine::alike::{alike_groups, AlikeGroup};
use inbox_engine::engine::Team;
use inbox_engine::spool::classify;
use inbox_engine::{Area, Engine, RequestSummary, State};
use inbox_protocol::approval::ApprovalRef;
use inbox_protocol::text::one_line;
use serde::Serialize;

use crate::args::{ListArgs, LocationArgs};
use crate::{exit, locations, output, render};

/// A `--json` row: the summary, its group when it has one, who is on it (when its rule
/// assigns people) and how long it has waited.
#[derive(Serialize)]
struct Row<'a> {
    #[serde(flatten)]
    summary: &'a RequestSummary,
    #[serde(skip_serializing_if = "Option::is_none")]
    alike: Option<Alike<'a>>,
    /// The accounts whose answers count (groups expanded); only when its rule assigns.
    #[serde(skip_serializing_if = "Option::is_none")]
    assignees: Option<&'a [String]>,
    #[serde(skip_serializing_if = "Option::is_none")]
    approvals_needed: Option<u32>,
    /// The approvals so far that count: `{by, at, surface}` each.
    #[serde(skip_serializing_if = "Option::is_none")]
    approvals: Option<&'a [ApprovalRef]>,
    /// "1 of 2: approved by alice", where it needs several approvals.
    #[serde(skip_serializing_if = "Option::is_none")]
    approvals_progress: Option<String>,
    /// From its placing to its settling, or to now while it waits.
    waited_ms: i64,
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
    let problems = spool_problems(&engine)?;
    if args.problems {
        return list_problems(&problems, args.json);
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
    let teams: Vec<Option<Team>> = rows.iter().map(|row| team_of(&engine, row)).collect();
    if args.json {
        output::json(&json_rows(&rows, &teams, &groups))?;
    } else if rows.is_empty() {
        let none = if args.all {
            "No requests."
        } else {
            "No pending requests."
        };
        output::stdout(&format!("{none}\n"))?;
    } else {
        let now = Utc::now();
        let mut text = render::summary_table(&rows, args.all, now);
        text.push_str(&assigned_lines(&rows, &teams, now));
        if !groups.is_empty() {
            text.push_str(&render::alike_lines(&groups));
        }
        output::stdout(&text)?;
    }
    if !problems.is_empty() {
        if args.json {
            // The array of requests is what scripts read; the problems have their own.
            output::stderr(&format!(
                "{} in the spool not read (answer-inbox list --problems --json)",
                render::count(problems.len(), "file")
            ));
        } else {
            output::stdout(&format!("\n{}", problems_text(&problems)))?;
        }
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
    list_only(rows, json, "No snoozed requests.", |rows| {
        render::summary_table(rows, false, Utc::now())
    })
}

/// One kind of row alone: as JSON, as `text` gives it, or `none` when there are none.
fn list_only<T: Serialize>(
    rows: &[T],
    json: bool,
    none: &str,
    text: impl FnOnce(&[T]) -> String,
) -> Result<u8> {
    if json {
        output::json(&rows)?;
    } else if rows.is_empty() {
        output::stdout(&format!("{none}\n"))?;
    } else {
        output::stdout(&text(rows))?;
    }
    Ok(exit::OK)
}

/// The files in the spool that are not read, as the window's Problems view has them (its
/// rejected requests are `list --all`'s rows here): those still there, less a request file
/// read since (its second name removed, say).
fn spool_problems(engine: &Engine) -> Result<Vec<SpoolProblemView>> {
    let queries = engine.queries();
    let stored = queries.problems().context("cannot list spool problems")?;
    let known = queries.known().context("cannot list requests")?;
    let questions = engine.spool().dir(Area::Questions);
    let read_since = |path: &Path| {
        path.parent() == Some(questions.as_path())
            && path
                .file_name()
                .and_then(|name| classify(Area::Questions, name).ok())
                .is_some_and(|id| known.contains_key(&id))
    };
    Ok(stored
        .into_iter()
        .filter(|(path, _, _)| {
            let path = Path::new(path);
            path.symlink_metadata().is_ok() && !read_since(path)
        })
        // Names and reasons come from the spool: one line each, by the one text policy.
        .map(|(path, reason, seen)| SpoolProblemView {
            id: None,
            path: one_line(&path).into_owned(),
            reasons: vec![one_line(&reason).into_owned()],
            seen_at: seen.to_rfc3339_opts(SecondsFormat::Millis, true),
        })
        .collect())
}

/// `list --problems`: the files not read, and nothing else.
fn list_problems(problems: &[SpoolProblemView], json: bool) -> Result<u8> {
    list_only(
        problems,
        json,
        "No problems: every file in the spool is a valid request.",
        problems_text,
    )
}

/// The Problems section, in the window's words.
fn problems_text(problems: &[SpoolProblemView]) -> String {
    let mut text = String::from("Problems: files in the spool that are not valid requests\n");
    for problem in problems {
        text.push_str(&format!(
            "  {}\n    Not read: no outcome was written\n",
            problem.path
        ));
        for reason in &problem.reasons {
            text.push_str(&format!("    {reason}\n"));
        }
    }
    text
}

/// Every row, with `alike` on the pending ones that are in a group.
fn json_rows<'a>(
    rows: &'a [RequestSummary],
    teams: &'a [Option<Team>],
    groups: &'a [AlikeGroup],
) -> Vec<Row<'a>> {
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
    let now = Utc::now();
    rows.iter()
        .zip(teams)
        .map(|(summary, team)| {
            let team = team.as_ref();
            Row {
                summary,
                alike: if summary.state == State::Pending {
                    alike.remove(summary.id.as_str())
                } else {
                    None
                },
                assignees: team.map(|team| team.assignees.as_slice()),
                approvals_needed: team.map(|team| team.approvals_needed),
                approvals: team.map(|team| team.approvals.as_slice()),
                approvals_progress: team
                    .filter(|team| team.approvals_needed > 1)
                    .map(Team::progress),
                waited_ms: (summary.settled_at.unwrap_or(now) - summary.placed_at)
                    .num_milliseconds()
                    .max(0),
            }
        })
        .collect()
}

/// A request's team as this operator's inbox sees it, when its rule assigns people: the
/// one kept with its judgement (with the approvals so far), else, for a pending request no
/// running inbox has judged yet (commands leave policies to `watch`), what the policy in
/// force makes of it now, with no approvals counted.
pub(crate) fn team_of(engine: &Engine, summary: &RequestSummary) -> Option<Team> {
    if let Some(judgement) = &summary.judgement {
        return judgement.team.clone();
    }
    if summary.state != State::Pending {
        return None;
    }
    let request = engine.queries().detail(&summary.id).ok()??.request?;
    let verdict = engine.judge(&request, summary.placed_by.as_deref(), summary.placed_at);
    Team::of(&verdict, &inbox_engine::operator::account())
}

/// Who is on each assigned pending request, after the table: its assignees (and whether
/// this operator is one, or may take it over), the approvals so far where it needs several,
/// and how long it has waited.
fn assigned_lines(rows: &[RequestSummary], teams: &[Option<Team>], now: DateTime<Utc>) -> String {
    let mut text = String::new();
    for (row, team) in rows.iter().zip(teams) {
        let Some(team) = team.as_ref().filter(|_| row.state == State::Pending) else {
            continue;
        };
        let who = if team.assignees.is_empty() {
            format!("{} (none of them exists here)", team.assign.join(", "))
        } else {
            team.assignees.join(", ")
        };
        let you = match (team.mine, team.takeover) {
            (true, _) => "you are one",
            (false, true) => "not you; you may take it over",
            (false, false) => "not you",
        };
        let mut line = format!("  {}: assigned to {who} ({you})", row.id);
        if team.approvals_needed > 1 {
            line.push_str(&format!("; {}", team.progress()));
        }
        line.push_str(&format!("; waiting {}", render::age(row.placed_at, now)));
        text.push_str(&render::line(&line));
        text.push('\n');
    }
    if text.is_empty() {
        return text;
    }
    format!("\nAssigned:\n{text}")
}
