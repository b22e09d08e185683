//! The one closed set of things the engine tells its front ends (the CLI daemon's log, the
//! desktop window). Every state change produces exactly one event, after it is committed.

use std::path::PathBuf;

use chrono::{DateTime, Utc};
use inbox_protocol::{OutcomeStatus, Priority, Problem, Source};
use serde::Serialize;

use crate::notifier::{Departure, Gone};

#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Event {
    /// The first full scan finished; the engine is watching.
    Ready { pending: usize },
    /// A valid request was queued for the operator.
    Ingested {
        id: String,
        title: String,
        source: Source,
        priority: Priority,
        question_count: usize,
    },
    /// A request file was invalid; a `rejected` outcome was written for it.
    Rejected { id: String, errors: Vec<Problem> },
    /// A file in the spool that is not a request (bad name, symlink, FIFO, ...).
    Problem { path: PathBuf, reason: String },
    /// A request got its one outcome (from this inbox or any other writer).
    Settled {
        id: String,
        status: OutcomeStatus,
        answered_by: String,
    },
    /// An outcome was decided but the spool would not take it (read-only, full): it is
    /// kept in the database and retried until written, then reported as `Settled`.
    Unwritten {
        id: String,
        status: OutcomeStatus,
        answered_by: String,
        error: String,
    },
    /// The loop hit a failure it waits out (a database locked by another process, a spool
    /// that cannot be read): nothing is lost, it retries.
    Trouble { message: String },
    /// The loop works again after [`Event::Trouble`].
    Recovered,
    /// The asker withdrew a pending request.
    Cancelled { id: String },
    /// A pending request that nobody may answer here, and why: its file changed after it
    /// was placed, or an invalid outcome file stands in its place.
    Blocked { id: String, reason: String },
    /// A bubble was shown for these requests: one request's own, or (`merged`) one summary
    /// standing for several. Sent by the notifier once the bubble went out, so never while
    /// notifications are off, silenced or unavailable.
    Notified { ids: Vec<String>, merged: bool },
    /// The operator's policy held a request for a person that asked to settle itself (its
    /// autonomous mode, or a rule's delay that would default it), and why.
    Held { id: String, reason: String },
    /// An escalation step was taken for a request nobody answered: notified again, or the
    /// operator's command started (`action` says which, and how it went).
    Escalated {
        id: String,
        step: u32,
        action: String,
    },
    /// The operator snoozed a request until `until` (`capped`: the snooze was cut to the
    /// request's own expiry).
    Snoozed {
        id: String,
        until: DateTime<Utc>,
        capped: bool,
    },
    /// A snooze ended: the request is pending again and announced anew.
    SnoozeEnded { id: String },
    /// The approvals that count for a request that needs several changed (another
    /// member approved, or one no longer counts): who approved so far, and how many are
    /// needed.
    Approved {
        id: String,
        by: Vec<String>,
        needed: u32,
    },
    /// A new policy is in force (the file was created, changed or removed); pending
    /// requests were judged again.
    PolicyChanged { origin: String, rules: Vec<String> },
    /// The policy file is broken: what is wrong and what stands instead.
    PolicyTrouble { message: String },
}

impl Event {
    /// The request this event takes off the pending list (settled, decided but not yet
    /// written, withdrawn, blocked, rejected, snoozed): whatever was shown for it, a bubble
    /// or a push, no longer offers a decision.
    pub fn left_pending(&self) -> Option<Gone> {
        let (id, why) = match self {
            Event::Settled {
                id,
                status,
                answered_by,
            }
            | Event::Unwritten {
                id,
                status,
                answered_by,
                ..
            } => (
                id,
                Departure::Settled {
                    status: *status,
                    answered_by: answered_by.clone(),
                },
            ),
            Event::Cancelled { id } => (id, Departure::Withdrawn),
            Event::Blocked { id, .. } => (id, Departure::Blocked),
            Event::Rejected { id, .. } => (id, Departure::Rejected),
            Event::Snoozed { id, .. } => (id, Departure::Snoozed),
            _ => return None,
        };
        Some(Gone::new(id.clone(), why))
    }

    /// One human-readable line, for the daemon's log.
    pub fn log_line(&self) -> String {
        match self {
            Event::Ready { pending } => format!("ready: {pending} pending"),
            Event::Ingested {
                id,
                title,
                source,
                question_count,
                priority,
                ..
            } => {
                let from = [&source.app, &source.run, &source.tool]
                    .iter()
                    .filter_map(|part| part.as_deref())
                    .collect::<Vec<_>>()
                    .join("/");
                let from = if from.is_empty() {
                    String::new()
                } else {
                    format!(" from {from}")
                };
                format!(
                    "ingested {id}: \"{title}\"{from}, {question_count} question(s), priority {}",
                    serde_json::to_value(priority)
                        .ok()
                        .and_then(|v| v.as_str().map(str::to_owned))
                        .unwrap_or_default()
                )
            }
            Event::Rejected { id, errors } => {
                let list: Vec<String> = errors.iter().map(ToString::to_string).collect();
                format!("rejected {id}: {}", list.join("; "))
            }
            Event::Problem { path, reason } => format!("problem {}: {reason}", path.display()),
            Event::Settled {
                id,
                status,
                answered_by,
            } => format!("{status} {id} by {answered_by}"),
            Event::Unwritten {
                id,
                status,
                answered_by,
                error,
            } => format!(
                "unwritten {id}: {status} by {answered_by} is kept and will be retried; \
                 the spool would not take it: {error}"
            ),
            Event::Trouble { message } => format!("trouble: {message}; retrying"),
            Event::Recovered => "recovered: the inbox works again".to_owned(),
            Event::Cancelled { id } => format!("cancelled {id} by its asker"),
            Event::Blocked { id, reason } => format!("blocked {id}: {reason}"),
            Event::Notified { ids, merged } => {
                let what = if *merged { " (one summary)" } else { "" };
                format!("notified{what}: {}", ids.join(", "))
            }
            Event::Held { id, reason } => format!("held {id}: {reason}"),
            Event::Escalated { id, step, action } => {
                format!("escalated {id}, step {step}: {action}")
            }
            Event::Snoozed { id, until, capped } => {
                let capped = if *capped { " (its expiry)" } else { "" };
                format!("snoozed {id} until {}{capped}", until.to_rfc3339())
            }
            Event::SnoozeEnded { id } => format!("snooze of {id} ended: pending again"),
            Event::Approved { id, by, needed } => format!(
                "{id}: {} of {needed} approvals ({})",
                by.len(),
                inbox_protocol::text::one_line(&by.join(", "))
            ),
            Event::PolicyChanged { origin, rules } => format!(
                "policy: now {origin}, rules {}; pending requests judged again",
                rules.join(", ")
            ),
            Event::PolicyTrouble { message } => format!("POLICY PROBLEM: {message}"),
        }
    }
}
