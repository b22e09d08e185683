//! The operations behind the window's commands, as plain methods: list, open, answer,
//! decline. The Tauri commands are one-line wrappers over these, so everything here is
//! tested without a window.
//!
//! The inbox holds its own engine (its own SQLite connection) for reads and for settling;
//! the background loop in [`crate::runtime`] holds another. Both are safe on one database
//! and one spool: outcomes are first-writer-wins files, and the loop reports what this
//! engine recorded (`Engine::track_open`).

use std::path::{Path, PathBuf};
use std::sync::{Mutex, MutexGuard};

use inbox_engine::{locations, Engine, SettleError};
use serde_json::{Map, Value};

use crate::errors::{ErrorCode, IpcError};
use crate::views::{
    HistoryView, OutcomeView, ProblemView, RequestView, RowView, SpoolProblemView, SubmitResult,
};

/// How many settled requests the History view loads.
pub const HISTORY_LIMIT: usize = 5000;

pub struct Inbox {
    engine: Mutex<Engine>,
    spool_dir: PathBuf,
    db_path: PathBuf,
    /// Recorded as `answered_by` on everything answered here.
    operator: String,
}

impl Inbox {
    /// Opens (creating if needed) the spool and the database.
    pub fn open(spool_dir: &Path, db_path: &Path, operator: &str) -> Result<Inbox, IpcError> {
        let engine = locations::open_engine(spool_dir, db_path)
            .map_err(|e| IpcError::new(ErrorCode::Storage, e.to_string()))?;
        Ok(Inbox {
            engine: Mutex::new(engine),
            spool_dir: spool_dir.to_owned(),
            db_path: db_path.to_owned(),
            operator: operator.to_owned(),
        })
    }

    pub fn spool_dir(&self) -> &Path {
        &self.spool_dir
    }

    pub fn db_path(&self) -> &Path {
        &self.db_path
    }

    pub fn operator(&self) -> &str {
        &self.operator
    }

    fn engine(&self) -> MutexGuard<'_, Engine> {
        // A panic while holding the lock leaves nothing half-written in the engine (every
        // change is a committed transaction or nothing), so a poisoned lock is still usable.
        self.engine
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// Pending requests, most urgent first, then oldest first.
    pub fn pending(&self) -> Result<Vec<RowView>, IpcError> {
        Ok(self
            .engine()
            .store()
            .pending()?
            .iter()
            .map(RowView::of)
            .collect())
    }

    pub fn pending_count(&self) -> Result<u32, IpcError> {
        let count = self.engine().store().pending_count()?;
        Ok(u32::try_from(count).unwrap_or(u32::MAX))
    }

    /// Settled and cancelled requests with their answers, newest first.
    pub fn history(&self) -> Result<Vec<HistoryView>, IpcError> {
        Ok(self
            .engine()
            .store()
            .history_detailed(HISTORY_LIMIT)?
            .iter()
            .map(HistoryView::of)
            .collect())
    }

    /// Files that could not be read as requests: invalid requests (which got a `rejected`
    /// outcome) and files that are not requests at all, newest first.
    pub fn problems(&self) -> Result<Vec<SpoolProblemView>, IpcError> {
        let engine = self.engine();
        let store = engine.store();
        let mut problems: Vec<SpoolProblemView> = store
            .problems()?
            .into_iter()
            .map(|(path, reason, seen)| SpoolProblemView {
                id: None,
                path,
                reasons: vec![reason],
                seen_at: seen.to_rfc3339_opts(chrono::SecondsFormat::Millis, true),
            })
            .collect();
        for detail in store.rejected_detailed(HISTORY_LIMIT)? {
            let Some(outcome) = &detail.outcome else {
                continue;
            };
            let id = detail.summary.id.clone();
            problems.push(SpoolProblemView {
                path: engine
                    .spool()
                    .path(inbox_engine::Area::Questions, &id)
                    .display()
                    .to_string(),
                id: Some(id),
                reasons: outcome
                    .errors
                    .iter()
                    .flatten()
                    .map(ToString::to_string)
                    .collect(),
                seen_at: outcome
                    .answered_at
                    .to_rfc3339_opts(chrono::SecondsFormat::Millis, true),
            });
        }
        problems.sort_by(|a, b| b.seen_at.cmp(&a.seen_at));
        Ok(problems)
    }

    /// One request with its questions (and its outcome, once settled).
    pub fn request(&self, id: &str) -> Result<RequestView, IpcError> {
        match self.engine().store().detail(id)? {
            Some(detail) => Ok(RequestView::of(&detail)),
            None => Err(IpcError::new(
                ErrorCode::NotFound,
                format!("no request \"{id}\" in the inbox"),
            )),
        }
    }

    /// Checks the answers given so far (question id → value, unanswered ones left out) the
    /// way a submit will, without writing anything: every problem, each pointing at its
    /// question; none when they can be submitted. The window asks this as the operator
    /// works, so every rule (patterns, lengths, formats, ranges, picks, questions required
    /// by another answer) is shown before Submit, from the one checker in Rust. Patterns
    /// above all must not run in the window: JavaScript's regular expressions backtrack, so
    /// a hostile pattern could freeze it, while Rust's `regex` runs in linear time.
    pub fn check_answers(
        &self,
        id: &str,
        answers: &Map<String, Value>,
    ) -> Result<Vec<ProblemView>, IpcError> {
        let request = self
            .engine()
            .store()
            .detail(id)?
            .and_then(|detail| detail.request)
            .ok_or_else(|| {
                IpcError::new(
                    ErrorCode::NotFound,
                    format!("no request \"{id}\" in the inbox"),
                )
            })?;
        Ok(inbox_protocol::answers::check_answers(&request, answers)
            .err()
            .unwrap_or_default()
            .iter()
            .map(ProblemView::of)
            .collect())
    }

    /// Places the demo requests (offered when the inbox is empty); returns how many.
    pub fn add_demo_requests(&self) -> Result<u32, IpcError> {
        let ids = inbox_engine::demo::place_demo(self.engine().spool()).map_err(|e| {
            IpcError::new(
                ErrorCode::Storage,
                format!("cannot place the demo requests: {e}"),
            )
        })?;
        Ok(u32::try_from(ids.len()).unwrap_or(u32::MAX))
    }

    /// Writes the operator's answers as the request's outcome, unless someone settled it
    /// first: then theirs is returned and stands.
    pub fn answer(&self, id: &str, answers: &Map<String, Value>) -> Result<SubmitResult, IpcError> {
        let result = self.engine().answer(id, answers, &self.answered_by());
        self.submitted(id, result)
    }

    /// Declines a request; the reason goes to the asker.
    pub fn decline(&self, id: &str, reason: &str) -> Result<SubmitResult, IpcError> {
        let result = self.engine().decline(id, reason, &self.answered_by());
        self.submitted(id, result)
    }

    fn answered_by(&self) -> String {
        format!("operator:{}", self.operator)
    }

    fn submitted(
        &self,
        id: &str,
        result: Result<inbox_protocol::Outcome, SettleError>,
    ) -> Result<SubmitResult, IpcError> {
        let request = self.engine().store().detail(id)?.and_then(|d| d.request);
        match result {
            Ok(outcome) => Ok(SubmitResult::Settled {
                outcome: OutcomeView::of(&outcome, request.as_ref()),
            }),
            Err(SettleError::AlreadySettled(outcome)) => Ok(SubmitResult::AlreadySettled {
                outcome: OutcomeView::of(&outcome, request.as_ref()),
            }),
            Err(SettleError::Unwritten { outcome, error }) => Ok(SubmitResult::Kept {
                outcome: OutcomeView::of(&outcome, request.as_ref()),
                error,
            }),
            Err(error) => Err(error.into()),
        }
    }
}

/// The operator's name: `$USER`, else `$LOGNAME`, else `operator`.
pub fn operator_name() -> String {
    ["USER", "LOGNAME"]
        .iter()
        .filter_map(|var| std::env::var(var).ok())
        .find(|name| !name.trim().is_empty())
        .unwrap_or_else(|| "operator".to_owned())
}
