//! The rows the store gives out: a request's [`State`], its [`RequestSummary`] for lists
//! and its [`RequestDetail`], and how one database row becomes them. Shared by every file
//! that reads requests, so they live apart from any one table's writes.

use chrono::{DateTime, Utc};
use inbox_protocol::{Mode, Outcome, OutcomeStatus, Priority, Request, Source};
use serde::Serialize;

use super::{from_ms, StoreError};
use crate::policy::Judgement;

/// A request's state in the store.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum State {
    Pending,
    Cancelled,
    Settled(OutcomeStatus),
}

impl State {
    /// `pending`, `cancelled`, or the outcome status.
    pub fn as_str(self) -> &'static str {
        match self {
            State::Pending => "pending",
            State::Cancelled => "cancelled",
            State::Settled(status) => status.as_str(),
        }
    }

    pub(super) fn parse(text: &str) -> Option<State> {
        match text {
            "pending" => Some(State::Pending),
            "cancelled" => Some(State::Cancelled),
            other => OutcomeStatus::parse(other).map(State::Settled),
        }
    }
}

impl Serialize for State {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.as_str())
    }
}

/// A summary row, for lists.
#[derive(Debug, Clone, Serialize)]
pub struct RequestSummary {
    pub id: String,
    pub state: State,
    pub title: String,
    pub source: Source,
    pub priority: Priority,
    /// `autonomous` requests that are still pending are blocked on a person.
    pub mode: Mode,
    pub question_count: usize,
    pub placed_at: DateTime<Utc>,
    pub deadline: Option<DateTime<Utc>>,
    pub settled_at: Option<DateTime<Utc>>,
    pub answered_by: Option<String>,
    /// Set while an outcome decided for this pending request waits to be written to the
    /// spool: why the last attempt failed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub unwritten: Option<String>,
    /// Set while a pending request is blocked: nobody may answer it here, and why (its file
    /// changed after it was placed, or an invalid outcome file stands in its place).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub blocked: Option<String>,
    /// The OS account that owns the request file (who placed it), when known.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub placed_by: Option<String>,
    /// What the operator's policy made of a pending request: which rule, whether its
    /// autonomous mode was held and why, what happens next.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub judgement: Option<Judgement>,
    /// Set while the operator has snoozed the request: it is out of the pending list until
    /// then, and announced again when the snooze ends.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub snoozed_until: Option<DateTime<Utc>>,
}

/// Everything known about one request.
#[derive(Debug, Clone, Serialize)]
pub struct RequestDetail {
    #[serde(flatten)]
    pub summary: RequestSummary,
    pub request: Option<Request>,
    pub outcome: Option<Outcome>,
}

pub(super) fn priority_rank(priority: Priority) -> i64 {
    match priority {
        Priority::Low => 0,
        Priority::Normal => 1,
        Priority::High => 2,
        Priority::Critical => 3,
    }
}

fn priority_of(rank: i64) -> Priority {
    match rank {
        0 => Priority::Low,
        2 => Priority::High,
        3 => Priority::Critical,
        _ => Priority::Normal,
    }
}

pub(super) const SUMMARY_COLUMNS: &str = "r.id, r.status, r.title, r.source_json, r.priority, \
     r.question_count, r.placed_at, r.deadline, r.settled_at, o.answered_by, r.mode, \
     u.last_error, r.blocked, r.placed_by, r.judgement, r.snoozed_until";

/// The tables every summary reads from.
pub(super) const SUMMARY_FROM: &str = "requests r LEFT JOIN outcomes o ON o.request_id = r.id \
     LEFT JOIN unwritten u ON u.request_id = r.id";

pub(super) fn summary_from_row(r: &rusqlite::Row<'_>) -> rusqlite::Result<RequestSummary> {
    let status: String = r.get(1)?;
    let source_json: String = r.get(3)?;
    Ok(RequestSummary {
        id: r.get(0)?,
        state: State::parse(&status).unwrap_or(State::Pending),
        title: r.get(2)?,
        source: serde_json::from_str(&source_json).unwrap_or_default(),
        priority: priority_of(r.get(4)?),
        question_count: r.get::<_, i64>(5)? as usize,
        placed_at: from_ms(r.get(6)?),
        deadline: r.get::<_, Option<i64>>(7)?.map(from_ms),
        settled_at: r.get::<_, Option<i64>>(8)?.map(from_ms),
        answered_by: r.get(9)?,
        mode: if r.get::<_, String>(10)? == "autonomous" {
            Mode::Autonomous
        } else {
            Mode::Interactive
        },
        unwritten: r.get(11)?,
        blocked: r.get(12)?,
        placed_by: r.get(13)?,
        judgement: r
            .get::<_, Option<String>>(14)?
            .and_then(|json| serde_json::from_str(&json).ok()),
        snoozed_until: r.get::<_, Option<i64>>(15)?.map(from_ms),
    })
}

/// Builds a [`RequestDetail`] from a summary and the stored JSON of its request and outcome.
pub(super) fn detail_from_json(
    summary: RequestSummary,
    request_json: Option<String>,
    outcome_json: Option<String>,
) -> Result<RequestDetail, StoreError> {
    let corrupt = |message: String| StoreError::Corrupt {
        id: summary.id.clone(),
        message,
    };
    let request = request_json
        .map(|json| serde_json::from_str(&json).map_err(|e| corrupt(e.to_string())))
        .transpose()?;
    let outcome = outcome_json
        .map(|json| serde_json::from_str(&json).map_err(|e| corrupt(e.to_string())))
        .transpose()?;
    Ok(RequestDetail {
        summary,
        request,
        outcome,
    })
}
