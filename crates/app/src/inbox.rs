//! The operations behind the window's commands, as plain methods: list, open, answer,
//! decline, snooze, answer many alike. The Tauri commands are one-line wrappers over these, so everything here is
//! tested without a window.
//!
//! An `Inbox` is one running loop on one spool and database ([`Background`]): the only
//! engine the app has. Writes (answers, declines, demo requests) go into that loop as
//! [`Command`]s and wait for its reply, so the app never races itself on its own database,
//! and hears of its own answers once, from the loop that wrote them. Reads go through a
//! [`Reader`], a connection of its own beside the loop.
//!
//! Every answer and decline carries the version (the file's SHA-256) of the request the
//! window showed, and the loop refuses to settle a file that no longer has it: what is
//! answered is what the operator saw. Who answered is the engine's to record (the OS
//! account running the app), never a name the app makes up. Answering a group of alike
//! requests is one answer per member, each bound to the version of it the window listed.
//!
//! The loop's engine applies the operator's policy file (the one the command line uses); a
//! broken file is reported by the loop, and kept here for the window to show until fixed.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use crossbeam_channel::{Receiver, Sender};
use inbox_engine::notifier::Notifier;
use inbox_engine::{locations, Command, PolicySource, Queries, Reader, SettleError, Trust};
use inbox_protocol::Via;
use serde_json::{Map, Value};

use crate::errors::{ErrorCode, IpcError};
use crate::ui_events::Background;
use crate::views::{
    AlikeAnswerView, AlikeMemberView, AlikeTarget, HistoryView, OutcomeView, ProblemView,
    RequestView, RowView, SnoozeView, SpoolProblemView, SubmitResult, UiEvent,
};

/// How many settled requests the History view loads.
pub const HISTORY_LIMIT: usize = 5000;

/// How long a command waits for the loop. The loop answers within milliseconds, unless it is
/// waiting out a failure (a database locked by another process: up to its 10 s busy
/// timeout, then pauses of up to 30 s), and then the window must hear why, not hang.
pub const COMMAND_TIMEOUT: Duration = Duration::from_secs(45);

pub struct Inbox {
    reader: Mutex<Reader>,
    commands: Sender<Command>,
    spool: inbox_engine::Spool,
    db_path: PathBuf,
    trust: Trust,
    /// What the loop last said of the policy file: set while it is broken.
    policy_trouble: Arc<Mutex<Option<String>>>,
    /// Dropped last: stops the loop once nothing can send it commands.
    _background: Background,
}

impl Inbox {
    /// Opens (creating if needed) the spool, private or shared with a team as `trust`
    /// says, and the database, and starts the loop on them, with `notifier` and the
    /// operator's policy file at `policy` (the shipped policy while there is none); every
    /// change reaches `sink`. A directory that is not a spool is refused, untouched.
    pub fn start(
        spool_dir: &Path,
        db_path: &Path,
        trust: Trust,
        policy: &Path,
        notifier: Box<dyn Notifier>,
        sink: Arc<dyn Fn(UiEvent) + Send + Sync>,
    ) -> Result<Inbox, IpcError> {
        let storage = |e: String| IpcError::new(ErrorCode::Storage, e);
        let engine = locations::open_engine_with(spool_dir, db_path, trust.clone())
            .map_err(|e| storage(e.to_string()))?
            .with_policy(PolicySource::file(policy));
        // Known now, before the loop's first turn reports it to a window that may not listen
        // yet; the loop's reports keep it current.
        let policy_trouble = Arc::new(Mutex::new(
            engine
                .policy()
                .trouble()
                .map(|t| inbox_protocol::text::one_line(t).into_owned()),
        ));
        let sink = {
            let policy_trouble = Arc::clone(&policy_trouble);
            Arc::new(move |event: UiEvent| {
                if let UiEvent::Policy { trouble } = &event {
                    *policy_trouble.lock().unwrap_or_else(|p| p.into_inner()) = trouble.clone();
                }
                sink(event);
            }) as Arc<dyn Fn(UiEvent) + Send + Sync>
        };
        let spool = engine.spool().clone();
        let reader = Reader::open(db_path).map_err(|e| {
            storage(format!(
                "cannot read the database {}: {e}",
                db_path.display()
            ))
        })?;
        let (commands, inbox) = crossbeam_channel::unbounded();
        let background =
            Background::start(engine, inbox, notifier, db_path, sink).map_err(storage)?;
        Ok(Inbox {
            reader: Mutex::new(reader),
            commands,
            spool,
            db_path: db_path.to_owned(),
            trust,
            policy_trouble,
            _background: background,
        })
    }

    pub fn spool_dir(&self) -> &Path {
        self.spool.root()
    }

    pub fn db_path(&self) -> &Path {
        &self.db_path
    }

    pub fn trust(&self) -> &Trust {
        &self.trust
    }

    /// What the operator should know about the spool: writable by others, owned by another
    /// account. Looked at afresh each time, so a fixed permission stops being reported.
    pub fn spool_warnings(&self) -> Vec<String> {
        self.spool.warnings()
    }

    /// While the policy file is broken: what is wrong with it and what stands instead.
    pub fn policy_trouble(&self) -> Option<String> {
        self.policy_trouble
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }

    /// Runs `read` over the read side. A panic while holding the lock leaves nothing
    /// half-done (reads change nothing), so a poisoned lock is still usable.
    fn read<T>(&self, read: impl FnOnce(Queries<'_>) -> T) -> T {
        let reader: MutexGuard<'_, Reader> = self
            .reader
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        read(reader.queries())
    }

    /// Sends a command into the loop and waits for its reply.
    fn ask<T>(&self, (command, reply): (Command, Receiver<T>)) -> Result<T, IpcError> {
        self.commands.send(command).map_err(|_| {
            IpcError::new(
                ErrorCode::Storage,
                "the inbox is not running (its loop stopped)",
            )
        })?;
        reply.recv_timeout(COMMAND_TIMEOUT).map_err(|_| {
            IpcError::new(
                ErrorCode::Storage,
                "the inbox did not answer in time: it is waiting out a failure (see the \
                 message above). Your request is queued and is carried out when it recovers, \
                 unless the request was settled first; the list shows what stands",
            )
        })
    }

    /// Pending requests, most urgent first, then oldest first.
    pub fn pending(&self) -> Result<Vec<RowView>, IpcError> {
        Ok(self
            .read(|q| q.pending())?
            .iter()
            .map(RowView::of)
            .collect())
    }

    pub fn pending_count(&self) -> Result<u32, IpcError> {
        let count = self.read(|q| q.pending_count())?;
        Ok(u32::try_from(count).unwrap_or(u32::MAX))
    }

    /// Pending requests the operator snoozed, the soonest back first.
    pub fn snoozed(&self) -> Result<Vec<RowView>, IpcError> {
        Ok(self
            .read(|q| q.snoozed())?
            .iter()
            .map(RowView::of)
            .collect())
    }

    /// Takes a pending request out of the Pending list for `duration` ("15m", "1h 30m"), or
    /// until it expires if that is sooner; it comes back, and is announced again, then.
    pub fn snooze(&self, id: &str, duration: &str) -> Result<SnoozeView, IpcError> {
        let duration = snooze_duration(duration)?;
        let snoozed = self
            .ask(Command::snooze(id, duration))?
            .map_err(not_snoozable)?;
        Ok(SnoozeView {
            until: snoozed
                .until
                .to_rfc3339_opts(chrono::SecondsFormat::Millis, true),
            capped: snoozed.capped,
        })
    }

    /// Ends a request's snooze now; false when it was not snoozed.
    pub fn unsnooze(&self, id: &str) -> Result<bool, IpcError> {
        self.ask(Command::unsnooze(id))?.map_err(not_snoozable)
    }

    /// The pending requests that ask exactly what `id` asks and may be answered now, `id`
    /// included, oldest first, each with the version the window answers: a group when there
    /// are two or more. Empty when `id` itself cannot be answered now.
    pub fn alike(&self, id: &str) -> Result<Vec<AlikeMemberView>, IpcError> {
        let members = self.read(|q| {
            let Some(group) = inbox_engine::alike::alike_of(&q, id)? else {
                return Ok(Vec::new());
            };
            let mut members = Vec::with_capacity(group.members.len());
            for summary in &group.members {
                // A member whose file cannot be read has no version to bind an answer to.
                let Some(request) = q.detail(&summary.id)?.and_then(|d| d.request) else {
                    continue;
                };
                members.push(AlikeMemberView {
                    row: RowView::of(summary),
                    version: request.sha256,
                });
            }
            Ok::<_, inbox_engine::StoreError>(members)
        })?;
        Ok(members)
    }

    /// Answers every member with the same answers, each bound to the version the window
    /// listed (see [`Inbox::alike`]): one outcome per member, each checked against its own
    /// request. A member that is refused does not stop the others; each gets its result.
    /// `via`: where the operator answered, as for [`Inbox::answer`].
    pub fn answer_alike(
        &self,
        members: &[AlikeTarget],
        answers: &Map<String, Value>,
        via: impl Into<Via>,
    ) -> Result<Vec<AlikeAnswerView>, IpcError> {
        if members.is_empty() {
            return Err(IpcError::bad_input("no requests to answer"));
        }
        let mut seen = std::collections::HashSet::new();
        if let Some(twice) = members.iter().find(|m| !seen.insert(m.id.as_str())) {
            return Err(IpcError::bad_input(format!(
                "request \"{}\" is listed twice; nothing was answered",
                twice.id
            )));
        }
        let pairs = members
            .iter()
            .map(|m| (m.id.clone(), m.version.clone()))
            .collect();
        let results = self.ask(Command::answer_alike(pairs, answers.clone(), via))?;
        Ok(results
            .into_iter()
            .map(|(id, result)| match self.submitted(&id, result) {
                Ok(submitted) => AlikeAnswerView {
                    id,
                    submitted: Some(submitted),
                    refused: None,
                },
                Err(error) => AlikeAnswerView {
                    id,
                    submitted: None,
                    refused: Some(error.message),
                },
            })
            .collect())
    }

    /// Settled and cancelled requests with their answers, newest first.
    pub fn history(&self) -> Result<Vec<HistoryView>, IpcError> {
        Ok(self
            .read(|q| q.history_detailed(HISTORY_LIMIT))?
            .iter()
            .map(HistoryView::of)
            .collect())
    }

    /// Files that could not be read as requests: invalid requests (which got a `rejected`
    /// outcome) and files that are not requests at all, newest first.
    pub fn problems(&self) -> Result<Vec<SpoolProblemView>, IpcError> {
        let (stray, rejected) = self.read(|q| {
            Ok::<_, inbox_engine::StoreError>((q.problems()?, q.rejected_detailed(HISTORY_LIMIT)?))
        })?;
        let mut problems: Vec<SpoolProblemView> = stray
            .into_iter()
            // File names and reasons come from the spool: shown by the one text policy.
            .map(|(path, reason, seen)| SpoolProblemView {
                id: None,
                path: inbox_protocol::text::one_line(&path).into_owned(),
                reasons: vec![inbox_protocol::text::one_line(&reason).into_owned()],
                seen_at: seen.to_rfc3339_opts(chrono::SecondsFormat::Millis, true),
            })
            .collect();
        for detail in rejected {
            let Some(outcome) = &detail.outcome else {
                continue;
            };
            let id = detail.summary.id.clone();
            problems.push(SpoolProblemView {
                path: self
                    .spool
                    .path(inbox_engine::Area::Questions, &id)
                    .display()
                    .to_string(),
                id: Some(id),
                reasons: outcome
                    .errors
                    .iter()
                    .flatten()
                    .map(|problem| {
                        inbox_protocol::text::one_line(&problem.to_string()).into_owned()
                    })
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
        match self.read(|q| q.detail(id))? {
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
            .read(|q| q.detail(id))?
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
        let ids = self.ask(Command::place_demo())?.map_err(|e| {
            IpcError::new(
                ErrorCode::Storage,
                format!("cannot place the demo requests: {e}"),
            )
        })?;
        Ok(u32::try_from(ids.len()).unwrap_or(u32::MAX))
    }

    /// Writes the operator's answers as the request's outcome, unless someone settled it
    /// first: then theirs is returned and stands. `version` is [`RequestView::version`] of
    /// the request the operator answered; a file that no longer has it is not answered
    /// ([`ErrorCode::Changed`]).
    /// `via`: where the operator answered: the window, a notification's button, a paired
    /// device's browser (by its name).
    pub fn answer(
        &self,
        id: &str,
        answers: &Map<String, Value>,
        version: &str,
        via: impl Into<Via>,
    ) -> Result<SubmitResult, IpcError> {
        let result = self.ask(Command::answer(id, answers.clone(), version, via))?;
        self.submitted(id, result)
    }

    /// Declines a request; the reason goes to the asker. `version` and `via` as for
    /// [`Inbox::answer`].
    pub fn decline(
        &self,
        id: &str,
        reason: &str,
        version: &str,
        via: impl Into<Via>,
    ) -> Result<SubmitResult, IpcError> {
        let result = self.ask(Command::decline(id, reason, version, via))?;
        self.submitted(id, result)
    }

    fn submitted(
        &self,
        id: &str,
        result: Result<inbox_protocol::Outcome, SettleError>,
    ) -> Result<SubmitResult, IpcError> {
        let request = self.read(|q| q.detail(id))?.and_then(|d| d.request);
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
            Err(SettleError::AwaitingApprovals {
                progress, needed, ..
            }) => Ok(SubmitResult::Approved {
                progress: inbox_protocol::text::one_line(&progress).into_owned(),
                needed,
            }),
            Err(error) => Err(error.into()),
        }
    }
}

/// Why a snooze was not taken. A settled request is no failure of the inbox: the window is
/// told who settled it, as a refusal of what it asked.
fn not_snoozable(error: SettleError) -> IpcError {
    match error {
        SettleError::AlreadySettled(_) => IpcError::bad_input(error.to_string()),
        other => other.into(),
    }
}

/// The longest snooze the window takes: a request put away for longer is better declined.
pub const MAX_SNOOZE: Duration = Duration::from_secs(30 * 24 * 3600);

/// A snooze's length as the window writes it ("15m", "1h 30m", "2days"), checked.
pub fn snooze_duration(text: &str) -> Result<Duration, IpcError> {
    let text = text.trim();
    let duration = humantime::parse_duration(text).map_err(|error| {
        IpcError::bad_input(format!(
            "\"{text}\" is not a length of time like 15m, 1h or 1h 30m: {error}"
        ))
    })?;
    if duration.is_zero() {
        return Err(IpcError::bad_input("a snooze must last longer than 0s"));
    }
    if duration > MAX_SNOOZE {
        return Err(IpcError::bad_input(format!(
            "a snooze lasts at most {}; decline the request instead",
            humantime::format_duration(MAX_SNOOZE)
        )));
    }
    Ok(duration)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn snooze_lengths_are_read_as_the_policy_writes_them() {
        assert_eq!(snooze_duration("15m").unwrap(), Duration::from_secs(900));
        assert_eq!(
            snooze_duration(" 1h 30m ").unwrap(),
            Duration::from_secs(5400)
        );
        for bad in ["", "soon", "0s", "-5m", "90days"] {
            let error = snooze_duration(bad).unwrap_err();
            assert_eq!(error.code, ErrorCode::BadInput, "{bad}: {error:?}");
        }
    }
}
