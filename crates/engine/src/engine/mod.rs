//! The engine: keeps the store in step with the spool, applies policies, writes outcomes and
//! reports every state change as one [`Event`].
//!
//! Both front ends drive the same engine: `answer-inbox watch` and the desktop app run its
//! loop ([`crate::watcher::run`]), a sequence of [`Engine::turn`]s, and the app sends its
//! writes into that loop as [`Command`]s; one-shot CLI commands call [`Engine::sync`] and the
//! answer/decline/cancel methods directly. Ingest is idempotent: a file seen twice (by an
//! event and a rescan, or by two processes) is one request.
//!
//! `Engine` is one type; its methods live beside what they are about:
//! - this file: the struct, construction, the loop step [`Engine::turn`], commands, the
//!   notices, and the batch every change runs in;
//! - `ingest.rs`: scans and watcher hints into the store (requests, outcomes, tombstones,
//!   problems), and the set of requests reported open; a request from an event skips
//!   looking for its outcome or tombstone when the watch is complete;
//! - `completeness.rs`: whether the loop's watcher reports every change (or its loss),
//!   which that skip relies on;
//! - `operator_writes.rs`: a person's answer (also one for a group of alike requests),
//!   decline, and cancel;
//! - `snooze.rs`: putting a request aside for a while, and its end;
//! - `withdrawal.rs`: whether a tombstone withdraws its request (only its placer's does);
//! - `integrity.rs`: whether a request may still be answered in the version shown, and
//!   whether an outcome file may be trusted; blocking when not;
//! - `settle.rs`: writing outcomes to the spool and recording whichever stands, and the
//!   outcomes the spool refused, kept and retried;
//! - the policy's part (judging, timed steps, escalation) is in [`crate::policy`].

mod completeness;
mod ingest;
mod integrity;
mod operator_writes;
mod settle;
mod snooze;
pub(crate) mod team;
#[cfg(test)]
mod tests;
mod withdrawal;

pub use completeness::Completeness;
pub use integrity::MIN_VERSION_PREFIX;
pub use team::{eligible, Team};

use std::collections::HashSet;
use std::path::PathBuf;

use chrono::{DateTime, Utc};
use crossbeam_channel::Sender;
use inbox_policy::Loudness;
use inbox_spool::{Area, Spool};

use crate::command::Command;
use crate::event::Event;
use crate::notifier::{Announcement, Gone, Notifier, Silent};
use crate::policy::source::PolicySource;
use crate::query::Queries;
use crate::results::EngineError;
use crate::store::{Due, PendingFacts, Store};

/// Why the loop takes a turn ([`Engine::turn`]).
#[derive(Debug)]
pub enum Wake {
    /// The first turn: remember what is open, scan everything, apply the policies to every
    /// pending request (others may have queued them while no inbox ran), tell the operator.
    Start,
    /// The watcher saw these files change.
    Paths(Vec<PathBuf>),
    /// Events may have been lost, or it is time for the periodic scan: scan everything and
    /// expire what is due.
    Rescan,
    /// Requests' deadlines have passed, as of this time (the loop gives the clock's).
    Deadline(DateTime<Utc>),
    /// Time to try again to write the outcomes the spool refused.
    RetryUnwritten,
    /// A front end's command, answered on its reply channel.
    Command(Command),
}

/// The one engine over a spool and its database. The fields the policy's steps use
/// (`crate::policy`'s `apply.rs`, an `impl Engine` of its own) are `pub(crate)`; the rest
/// are this module's.
pub struct Engine {
    spool: Spool,
    pub(crate) store: Store,
    pub(crate) instance: String,
    /// `answered_by` of what a person answers through this engine: `operator:<account>`,
    /// the OS account this process runs as, which is also the owner of the files it
    /// writes (other inboxes check that they agree).
    operator: String,
    events: Option<Sender<Event>>,
    pub(crate) notifier: Box<dyn Notifier>,
    /// Events of the current batch, sent only after it commits.
    pub(crate) outbox: Vec<Event>,
    /// Requests ingested since the caller last took them, for the policy to judge.
    fresh: Vec<PendingFacts>,
    /// The operator's policy in force, and the file it comes from.
    pub(crate) policy: PolicySource,
    /// When this engine runs the loop ([`Engine::track_open`]): the requests it has reported
    /// open. Another process sharing the database (a CLI command) may ingest, settle or
    /// cancel a request and record that first; the file's event still arrives here, and this
    /// set tells the loop that it has not reported the change yet. `None` for one-shot use.
    open: Option<HashSet<String>>,
    /// When the loop runs over a watcher: whether that watcher reports every change in the
    /// spool, or else its loss ([`Engine::rely_on_events`]).
    watch: Option<Completeness>,
    /// Ids whose outcome or tombstone was seen in the spool (by the last full scan, or by an
    /// event since) while their request was unknown: a request of these, when it arrives,
    /// is the one whose outcome or tombstone no later event will report. Rebuilt by every
    /// full scan.
    unmatched: HashSet<String>,
}

impl Engine {
    pub fn new(spool: Spool, store: Store) -> Result<Engine, EngineError> {
        let host = gethostname::gethostname().to_string_lossy().into_owned();
        let instance = format!("{host}/{}", store.instance_id()?);
        Ok(Engine {
            spool,
            store,
            instance,
            operator: crate::operator::answered_by(&crate::operator::account()),
            events: None,
            notifier: Box::new(Silent),
            outbox: Vec::new(),
            fresh: Vec::new(),
            policy: PolicySource::shipped(),
            open: None,
            watch: None,
            unmatched: HashSet::new(),
        })
    }

    /// Judges requests by this policy (the operator's file, see [`PolicySource::file`])
    /// instead of the shipped one.
    ///
    /// In a team spool that holds the team's policy file (`team-policy.toml`, see
    /// docs/TEAMS.md), that file is the policy instead: every member's inbox must judge
    /// alike who may answer what.
    pub fn with_policy(mut self, policy: PolicySource) -> Engine {
        self.policy = policy;
        if matches!(self.spool.trust(), inbox_spool::Trust::Team { .. }) {
            use std::os::unix::fs::MetadataExt;
            let path = self.spool.root().join(inbox_spool::TEAM_POLICY);
            if let (Ok(_), Ok(root)) = (path.symlink_metadata(), self.spool.root().metadata()) {
                self.policy = PolicySource::team(&path, root.uid());
            }
        }
        self
    }

    /// The policy in force and where it comes from.
    pub fn policy(&self) -> &PolicySource {
        &self.policy
    }

    /// Sends every event to `events` from now on.
    pub fn with_events(mut self, events: Sender<Event>) -> Engine {
        self.events = Some(events);
        self
    }

    pub fn with_notifier(mut self, notifier: Box<dyn Notifier>) -> Engine {
        self.notifier = notifier;
        self
    }

    pub fn spool(&self) -> &Spool {
        &self.spool
    }

    /// The read side of this engine's database (see [`crate::query`]).
    pub fn queries(&self) -> Queries<'_> {
        Queries::new(&self.store)
    }

    /// One turn of the loop: what woke it, then the policies for the requests that arrived,
    /// then the notices. The loop ([`crate::watcher::run`]) is a sequence of these; tests and
    /// benchmarks drive an engine the same way, without a watcher.
    pub fn turn(&mut self, wake: Wake) -> Result<(), EngineError> {
        if !matches!(wake, Wake::Start) {
            self.refresh_policy()?;
        }
        match wake {
            Wake::Start => {
                self.track_open()?;
                self.sync()?;
                if let Some(trouble) = self.policy.trouble().map(str::to_owned) {
                    self.policy_trouble(trouble)?;
                }
                self.judge_all_pending()?;
                // Every pending request was judged just now.
                self.take_fresh();
                self.due_by(Utc::now())?;
            }
            Wake::Paths(paths) => {
                self.handle_paths(&paths)?;
                // Approvals are not watched: another member's may have come meanwhile.
                self.complete_approvals()?;
            }
            Wake::Rescan => {
                self.sync()?;
                self.due_by(Utc::now())?;
                self.complete_approvals()?;
            }
            Wake::Deadline(now) => self.due_by(now)?,
            Wake::RetryUnwritten => {
                // Nearly always nothing is kept: then there is nothing else to do either.
                if self.store.all_unwritten()?.is_empty() {
                    return Ok(());
                }
                self.retry_unwritten()?;
            }
            Wake::Command(command) => self.execute(command),
        }
        let fresh = self.take_fresh();
        if !fresh.is_empty() {
            self.apply_policy(&fresh)?;
        }
        // What a CLI command took in meanwhile: it syncs but leaves judging to the inbox
        // that runs the policy. Asked after this turn's own were judged, so it is nearly
        // always empty and nothing is read twice.
        let unjudged = self.store.pending_facts(Due::Unjudged)?;
        if !unjudged.is_empty() {
            self.apply_policy(&unjudged)?;
        }
        self.notify_new()
    }

    /// Everything due by `now`: expiries, the policy's timed steps, snoozes that end.
    fn due_by(&mut self, now: DateTime<Utc>) -> Result<(), EngineError> {
        self.expire_due(now)?;
        self.end_snoozes(now)?;
        self.run_policy_steps(now)
    }

    /// Does a front end's command and replies. A front end that stopped waiting is no
    /// reason to stop: the work is done either way.
    fn execute(&mut self, command: Command) {
        match command {
            Command::Answer {
                id,
                answers,
                version,
                via,
                reply,
            } => {
                let _ = reply.send(self.answer(&id, &answers, Some(&version), via));
            }
            Command::Decline {
                id,
                reason,
                version,
                via,
                reply,
            } => {
                let _ = reply.send(self.decline(&id, &reason, Some(&version), via));
            }
            Command::Snooze {
                id,
                duration,
                reply,
            } => {
                let _ = reply.send(self.snooze(&id, duration));
            }
            Command::Unsnooze { id, reply } => {
                let _ = reply.send(self.unsnooze(&id));
            }
            Command::AnswerAlike {
                members,
                answers,
                via,
                reply,
            } => {
                let _ = reply.send(self.answer_alike(&members, &answers, via));
            }
            Command::PlaceDemo { reply } => {
                let placed = crate::demo::place_demo(&self.spool);
                if let Ok(ids) = &placed {
                    // Ingested at once, not when their file events come back; only these
                    // files, not a scan of the whole spool.
                    let paths: Vec<PathBuf> = ids
                        .iter()
                        .map(|id| self.spool.path(Area::Questions, id))
                        .collect();
                    if let Err(error) = self.handle_paths(&paths) {
                        tracing::warn!("demo requests placed, but not yet ingested: {error}");
                    }
                }
                let _ = reply.send(placed);
            }
        }
    }

    /// `operator:<account>`: how a person's answer through this engine is recorded.
    pub fn operator(&self) -> &str {
        &self.operator
    }

    /// `<host>/<instance id>`, written into every outcome this engine decides.
    pub fn instance(&self) -> &str {
        &self.instance
    }

    /// The earliest deadline of a pending request.
    pub(crate) fn next_deadline(&self) -> Result<Option<DateTime<Utc>>, EngineError> {
        Ok(self.store.next_deadline()?)
    }

    /// Tells the operator about pending requests not announced yet, as loudly as the
    /// policy says: a silent one is only listed, and in quiet hours only critical ones are
    /// announced (the rest wait for the end of quiet hours).
    fn notify_new(&mut self) -> Result<(), EngineError> {
        let now = Utc::now();
        let unnotified = self.store.unnotified(now)?;
        if unnotified.is_empty() {
            return Ok(());
        }
        let quiet = self.is_quiet();
        let (mut told, mut silent) = (Vec::new(), Vec::new());
        for detail in unnotified {
            // Only the assignees' inboxes announce an assigned request; the others list it.
            let not_mine = !team::announced_here(detail.summary.judgement.as_ref());
            let announcement = Announcement::from(detail);
            if announcement.loudness == Loudness::Silent || not_mine {
                silent.push(announcement.summary.id);
            } else if !quiet || announcement.is_critical() {
                told.push(announcement);
            }
        }
        self.in_batch(|engine| {
            let ids: Vec<&str> = told.iter().map(|a| a.summary.id.as_str()).collect();
            engine.store.mark_notified(&ids, true, now)?;
            let ids: Vec<&str> = silent.iter().map(String::as_str).collect();
            engine.store.mark_notified(&ids, false, now)?;
            Ok(())
        })?;
        if !told.is_empty() {
            // The notifier reports `Event::Notified` itself, when a bubble is really shown.
            self.notifier.announce(told);
        }
        Ok(())
    }

    /// Runs `work` in one store transaction and sends its events once it has committed.
    pub(crate) fn in_batch<T>(
        &mut self,
        work: impl FnOnce(&mut Engine) -> Result<T, EngineError>,
    ) -> Result<T, EngineError> {
        self.store.batch_begin()?;
        match work(self) {
            Ok(value) => {
                self.store.batch_commit()?;
                let events = std::mem::take(&mut self.outbox);
                // What left the pending list, by whoever: its bubbles and pushes are taken
                // back, so none keeps offering a decision that no longer decides anything.
                let gone: Vec<Gone> = events.iter().filter_map(Event::left_pending).collect();
                if !gone.is_empty() {
                    self.notifier.withdraw(gone);
                }
                for event in events {
                    self.emit(event);
                }
                Ok(value)
            }
            Err(error) => {
                self.store.batch_rollback();
                self.outbox.clear();
                self.fresh.clear();
                Err(error)
            }
        }
    }

    /// Sends an event that is not the result of a batch (e.g. `Ready`).
    pub(crate) fn emit_external(&self, event: Event) {
        self.emit(event);
    }

    fn emit(&self, event: Event) {
        if let Some(events) = &self.events {
            let _ = events.send(event);
        }
    }
}
