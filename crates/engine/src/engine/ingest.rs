//! Ingest: what the spool holds, brought into the store. A full scan ([`Engine::sync`]),
//! the watcher's hints, and one request on demand ([`Engine::ensure_known`]) take in new
//! requests, the outcomes and tombstones of open ones, and the files that are neither
//! (problems), and report each change as one event. Ingest is idempotent: a file seen twice
//! is one request.
//!
//! Apart from the engine's other steps because it is the only way in: everything else
//! works on what ingest recorded. It also keeps the set of requests the loop has reported
//! open, which is how changes that another process recorded first are still reported.

use std::path::{Path, PathBuf};

use chrono::{DateTime, Utc};
use inbox_protocol::{parse_request, Outcome, OutcomeStatus, Problem, Request, Surface};
use inbox_spool::{classify, Area, ReadError, TMP_MAX_AGE};

use super::{Completeness, Engine};
use crate::event::Event;
use crate::policy;
use crate::results::{EngineError, SettleError};
use crate::store::{PendingFacts, State};

impl Engine {
    /// A full scan: ingests every request not yet known, and outcomes and tombstones of
    /// pending ones; records problems; reaps stale temp files. Known files are not read.
    pub fn sync(&mut self) -> Result<(), EngineError> {
        let listing = self.spool.scan()?;
        let known = self.store.known()?;
        self.unmatched = listing
            .outcomes
            .iter()
            .chain(&listing.tombstones)
            .filter(|entry| !known.contains_key(&entry.id))
            .map(|entry| entry.id.clone())
            .collect();
        self.in_batch(|engine| {
            for problem in &listing.problems {
                engine.problem(&problem.path, &problem.reason)?;
            }
            for entry in &listing.requests {
                match known.get(&entry.id) {
                    None => engine.ingest_request(&entry.id, Look::InSpool)?,
                    Some(true) => engine.adopt(&entry.id)?,
                    Some(false) => {}
                }
            }
            let cancelled = engine.store.cancelled_ids()?;
            for entry in &listing.outcomes {
                if known.get(&entry.id) == Some(&true)
                    || engine.is_open(&entry.id)
                    || cancelled.contains(&entry.id)
                {
                    engine.ingest_outcome(&entry.id)?;
                }
            }
            for entry in &listing.tombstones {
                if known.get(&entry.id) == Some(&true) || engine.is_open(&entry.id) {
                    engine.ingest_tombstone(&entry.id)?;
                }
            }
            Ok(())
        })?;
        if let Err(error) = self.spool.reap_tmp(TMP_MAX_AGE) {
            tracing::warn!("could not reap stale temp files: {error}");
        }
        self.retry_unwritten()?;
        Ok(())
    }

    /// Handles files the watcher saw change. Paths outside the spool's areas are ignored.
    pub(super) fn handle_paths(&mut self, paths: &[PathBuf]) -> Result<(), EngineError> {
        self.take_in(paths, true)
    }

    /// [`Engine::handle_paths`]; `from_events` when the paths come from the watcher's
    /// events (or the engine's own placing), so that a new request may skip looking for an
    /// outcome or tombstone ([`Engine::look_for`]).
    fn take_in(&mut self, paths: &[PathBuf], from_events: bool) -> Result<(), EngineError> {
        let areas = [Area::Questions, Area::Answers, Area::Cancel].map(|a| (a, self.spool.dir(a)));
        self.in_batch(|engine| {
            for path in paths {
                let (Some(parent), Some(name)) = (path.parent(), path.file_name()) else {
                    continue;
                };
                let Some((area, _)) = areas.iter().find(|(_, dir)| dir == parent) else {
                    continue;
                };
                match classify(*area, name) {
                    Ok(id) => match area {
                        Area::Questions => match engine.store.state(&id)? {
                            None if from_events => {
                                let look = engine.look_for(&id);
                                engine.ingest_request(&id, look)?
                            }
                            None => engine.ingest_request(&id, Look::InSpool)?,
                            Some(State::Pending) => {
                                engine.check_unchanged(&id)?;
                                engine.adopt(&id)?;
                            }
                            Some(_) => {}
                        },
                        Area::Answers => engine.ingest_outcome(&id)?,
                        Area::Cancel => engine.ingest_tombstone(&id)?,
                    },
                    // A rename away or a deletion also raises an event: only existing files
                    // are problems.
                    Err(reason) if path.symlink_metadata().is_ok() => {
                        engine.problem(path, &reason)?
                    }
                    Err(_) => {}
                }
            }
            Ok(())
        })
    }

    /// Brings one request into the store, so history records who settled it.
    pub(super) fn ensure_known(&mut self, id: &str) -> Result<(), SettleError> {
        if !inbox_protocol::is_valid_id(id) {
            return Err(SettleError::NotFound(id.to_owned()));
        }
        if self.store.state(id)?.is_none() {
            let path = self.spool.path(Area::Questions, id);
            if !self.spool.exists(Area::Questions, id) {
                return Err(SettleError::NotFound(id.to_owned()));
            }
            // Asked for by a command, not an event: look for an outcome or tombstone.
            self.take_in(&[path], false)?;
            // Still unknown: the file is there but is never read (another account's, a
            // link); say why rather than "no such request".
            if self.store.state(id)?.is_none() {
                if let Err(error) = self.spool.read_file(Area::Questions, id) {
                    return Err(match error {
                        ReadError::Missing => SettleError::NotFound(id.to_owned()),
                        other => SettleError::Unreadable {
                            id: id.to_owned(),
                            reason: other.to_string(),
                        },
                    });
                }
            }
        }
        Ok(())
    }

    /// Tells the engine that its hints come from a watcher whose [`Completeness`] says
    /// whether it reports every change in the spool. The loop calls this.
    pub(crate) fn rely_on_events(&mut self, completeness: Completeness) {
        self.watch = Some(completeness);
    }

    /// Whether a request that a `questions/` event brought in must be looked for in
    /// `answers/` and `cancel/` (two `stat`s, about 7% of ingesting a burst).
    ///
    /// Not when the loop runs over a complete watch and no outcome or tombstone of the id
    /// was seen while its request was unknown. Then an outcome or tombstone already there
    /// was placed after the last full scan listed the spool (or it would be in `unmatched`),
    /// while the watch was on, and its event has not been handled yet (or it would be in
    /// `unmatched` too): that event comes, or, if the kernel's queue overflowed and lost
    /// it, the overflow does, and the rescan after it. Either one records the outcome or the
    /// tombstone, as the look would have, only a turn later: within that turn the request
    /// is pending, and an outcome or tombstone placed in it races the policy's decision, as
    /// one placed just after the look always has.
    fn look_for(&self, id: &str) -> Look {
        let events_complete = self.watch.as_ref().is_some_and(Completeness::holds);
        if self.open.is_some() && events_complete && !self.unmatched.contains(id) {
            Look::Skip
        } else {
            Look::InSpool
        }
    }

    /// Starts keeping track of which requests this engine has reported open, beginning with
    /// every pending one, so that changes other processes record in the shared database
    /// first are still reported (as events) and seen by policies. The loop calls this.
    pub(super) fn track_open(&mut self) -> Result<(), EngineError> {
        self.open = Some(self.store.open_ids()?.into_iter().collect());
        Ok(())
    }

    fn is_open(&self, id: &str) -> bool {
        self.open.as_ref().is_some_and(|open| open.contains(id))
    }

    /// Forgets an open request; true if it was open.
    pub(super) fn close(&mut self, id: &str) -> bool {
        self.open.as_mut().is_some_and(|open| open.remove(id))
    }

    /// A pending request another process ingested into the shared database first: report
    /// it and hand it to the policies, as if this engine had ingested it.
    fn adopt(&mut self, id: &str) -> Result<(), EngineError> {
        match &self.open {
            Some(open) if !open.contains(id) => {}
            _ => return Ok(()),
        }
        // A deletion raises an event too; only a request still in the spool is adopted.
        if !self.spool.exists(Area::Questions, id) {
            return Ok(());
        }
        let Some(facts) = self.store.detail(id)?.and_then(|detail| {
            Some(PendingFacts {
                request: detail.request?,
                placed_at: detail.summary.placed_at,
                placed_by: detail.summary.placed_by,
                policy_step: 0,
                snoozed_until: detail.summary.snoozed_until,
                judgement: detail.summary.judgement,
            })
        }) else {
            return Ok(());
        };
        self.open_request(id, facts, Look::InSpool)
    }

    /// Reports a request as open, then settles it at once if its outcome or tombstone is
    /// already in the spool (unless `look` says not to look); otherwise hands it to the
    /// policies.
    fn open_request(
        &mut self,
        id: &str,
        facts: PendingFacts,
        look: Look,
    ) -> Result<(), EngineError> {
        self.outbox.push(ingested_event(id, &facts.request));
        if let Some(open) = &mut self.open {
            open.insert(id.to_owned());
        }
        if look == Look::InSpool {
            if self.spool.exists(Area::Answers, id) {
                return self.ingest_outcome(id);
            }
            if self.spool.exists(Area::Cancel, id) {
                self.ingest_tombstone(id)?;
                // A tombstone that does not count leaves it pending, for the policies too.
                if self.store.state(id)? != Some(State::Pending) {
                    return Ok(());
                }
            }
        }
        self.fresh.push(facts);
        Ok(())
    }

    /// Requests ingested since the last call: the ones policies have not looked at yet.
    /// When the loop tracks open requests, not those settled or cancelled since (an outcome
    /// or tombstone later in the same batch): the policy must not decide them again.
    pub(super) fn take_fresh(&mut self) -> Vec<PendingFacts> {
        let mut fresh = std::mem::take(&mut self.fresh);
        if let Some(open) = &self.open {
            fresh.retain(|facts| {
                facts
                    .request
                    .id
                    .as_deref()
                    .is_some_and(|id| open.contains(id))
            });
        }
        fresh
    }

    fn ingest_request(&mut self, id: &str, look: Look) -> Result<(), EngineError> {
        let now = Utc::now();
        let path = self.spool.path(Area::Questions, id);
        let (parsed, placed_at, sha256, placed_by) = match self.spool.read_file(Area::Questions, id)
        {
            Ok(file) => (
                parse_request(&file.bytes, Some(id)),
                DateTime::<Utc>::from(file.modified),
                Some(inbox_protocol::sha256_hex(&file.bytes)),
                inbox_spool::account_name(file.owner),
            ),
            Err(ReadError::Missing) => return Ok(()),
            // Too big to read, but its name is a valid id: the asker gets a rejection.
            Err(error @ ReadError::TooLarge { .. }) => (
                Err(vec![Problem::new("", error.to_string())]),
                now,
                None,
                None,
            ),
            // A transient failure: the next scan tries again.
            Err(ReadError::Io(error)) => {
                tracing::warn!("cannot read {}: {error}; will retry", path.display());
                return Ok(());
            }
            // A link, a FIFO, a directory: never read as a request.
            Err(other) => return self.problem(&path, &other.to_string()),
        };
        match parsed {
            Ok(request) => {
                self.store
                    .insert_pending(id, &request, placed_at, placed_by.as_deref(), now)?;
                let facts = PendingFacts {
                    request,
                    placed_at,
                    placed_by,
                    policy_step: 0,
                    snoozed_until: None,
                    judgement: None,
                };
                self.open_request(id, facts, look)?;
            }
            Err(errors) => {
                self.store.insert_rejected(id, &errors, placed_at, now)?;
                self.outbox.push(Event::Rejected {
                    id: id.to_owned(),
                    errors: errors.clone(),
                });
                let outcome = Outcome::new(
                    id,
                    OutcomeStatus::Rejected,
                    policy::VALIDATION,
                    &self.instance,
                    now,
                )
                .with_errors(errors)
                .with_request_sha256(sha256)
                .with_decision(Surface::Policy, placed_at);
                self.settle(outcome)?;
            }
        }
        Ok(())
    }

    pub(super) fn ingest_outcome(&mut self, id: &str) -> Result<(), EngineError> {
        match self.store.state(id)? {
            None => {
                // An outcome for a request we have not seen: take the request first; it
                // picks up this outcome itself. If it is not there yet, its event must not
                // skip the look for this outcome.
                self.unmatched.insert(id.to_owned());
                if self.spool.exists(Area::Questions, id) {
                    self.ingest_request(id, Look::InSpool)?;
                }
                Ok(())
            }
            // An outcome file always stands, even one a racing writer linked after the
            // asker's tombstone: the asker reads `answers/` first, and a rebuild from the
            // spool must reach the same state as this engine.
            Some(State::Pending | State::Cancelled) => match self.standing_outcome(id)? {
                Some(Ok(outcome)) => self.record(&outcome),
                Some(Err(reason)) => self.bad_outcome(id, &reason),
                None => Ok(()),
            },
            // Another process sharing the database recorded it before this engine saw the
            // file: report what it recorded.
            Some(State::Settled(status)) if self.close(id) => {
                if status != OutcomeStatus::Rejected {
                    if let Some(outcome) = self.store.detail(id)?.and_then(|d| d.outcome) {
                        self.outbox.push(Event::Settled {
                            id: id.to_owned(),
                            status,
                            answered_by: outcome.answered_by,
                        });
                    }
                }
                Ok(())
            }
            Some(_) => Ok(()),
        }
    }

    pub(super) fn ingest_tombstone(&mut self, id: &str) -> Result<(), EngineError> {
        // An outcome placed before the tombstone stands: the asker may already have read it.
        match self.store.state(id)? {
            Some(State::Pending) if !matches!(self.standing_outcome(id)?, Some(Ok(_))) => {
                // Only a tombstone of the request's own placer withdraws it (withdrawal.rs).
                let Some(reason) = self.withdrawal(id)? else {
                    return Ok(());
                };
                if self.store.mark_cancelled(id, &reason, Utc::now())? {
                    self.close(id);
                    self.outbox.push(Event::Cancelled { id: id.to_owned() });
                }
            }
            // Cancelled by another process sharing the database (`answer-inbox cancel`).
            Some(State::Cancelled) if self.close(id) => {
                self.outbox.push(Event::Cancelled { id: id.to_owned() });
            }
            // The request is not known yet: when it comes, it must be looked for here.
            None => {
                self.unmatched.insert(id.to_owned());
            }
            _ => {}
        }
        Ok(())
    }

    pub(super) fn problem(&mut self, path: &Path, reason: &str) -> Result<(), EngineError> {
        if self
            .store
            .record_problem(&path.to_string_lossy(), reason, Utc::now())?
        {
            self.outbox.push(Event::Problem {
                path: path.to_owned(),
                reason: reason.to_owned(),
            });
        }
        Ok(())
    }
}

/// Whether ingesting a request looks for its outcome or tombstone in the spool.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Look {
    InSpool,
    /// Not needed: see [`Engine::look_for`].
    Skip,
}

fn ingested_event(id: &str, request: &Request) -> Event {
    Event::Ingested {
        id: id.to_owned(),
        title: request.display_title().to_owned(),
        source: request.source.clone(),
        priority: request.priority,
        question_count: request.questions.len(),
    }
}
