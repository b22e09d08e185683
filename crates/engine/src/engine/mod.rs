//! The engine: keeps the store in step with the spool, applies policies, writes outcomes and
//! reports every state change as one [`Event`].
//!
//! Both front ends drive the same engine: `answer-inbox watch` and the desktop app run its
//! loop ([`crate::watcher::run`]), a sequence of [`Engine::turn`]s, and the app sends its
//! writes into that loop as [`Command`]s; one-shot CLI commands call [`Engine::sync`] and the
//! answer/decline/cancel methods directly. Ingest is idempotent: a file seen twice (by an
//! event and a rescan, or by two processes) is one request.

use std::collections::HashSet;
use std::path::{Path, PathBuf};

use chrono::{DateTime, Utc};
use crossbeam_channel::Sender;
use inbox_protocol::{
    check_answers, parse_request, Outcome, OutcomeStatus, Problem, Request, Surface, Via,
};
use serde_json::{Map, Value};

use crate::command::Command;
use crate::event::Event;
use crate::notifier::{Announcement, Notifier, Silent};
use crate::policy::source::{PolicyChange, PolicySource};
use crate::policy::{self, Timed};
use crate::query::Queries;
use crate::store::{Due, PendingFacts, State, Store, StoreError};
use inbox_policy::{Facts, Loudness, StepAction, Verdict};
use inbox_spool::{classify, Area, Placed, ReadError, Spool, SpoolError, SpoolFile, TMP_MAX_AGE};

#[derive(Debug, thiserror::Error)]
pub enum EngineError {
    #[error(transparent)]
    Spool(#[from] SpoolError),
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error("file watcher: {0}")]
    Watch(#[from] notify::Error),
}

/// Why an answer, decline or cancel was not written.
#[derive(Debug, thiserror::Error)]
pub enum SettleError {
    #[error("no request \"{0}\" in the spool")]
    NotFound(String),
    #[error("the answers are not valid")]
    Invalid(Vec<Problem>),
    #[error("request \"{}\" is already settled: {} by {}", .0.id, .0.status, .0.answered_by)]
    AlreadySettled(Box<Outcome>),
    /// The request file is not the version the operator was shown (it was replaced, or
    /// changed after it was placed): nothing was written.
    #[error("request \"{id}\" was not answered: {reason}")]
    Changed { id: String, reason: String },
    /// Nobody may answer this request here (see `RequestSummary::blocked`).
    #[error("request \"{id}\" is blocked: {reason}")]
    Blocked { id: String, reason: String },
    #[error("request \"{0}\" was cancelled by its asker")]
    Cancelled(String),
    #[error("request \"{id}\" cannot be read: {reason}")]
    Unreadable { id: String, reason: String },
    /// The outcome is decided and kept in the database, but the spool would not take it
    /// yet (read-only or full): it is retried until written.
    #[error(
        "the outcome of \"{}\" ({} by {}) could not be written to the spool: {error}. \
         It is kept in the inbox's database and will be written as soon as the spool takes it",
        .outcome.id, .outcome.status, .outcome.answered_by
    )]
    Unwritten {
        outcome: Box<Outcome>,
        error: String,
    },
    #[error(transparent)]
    Engine(#[from] EngineError),
}

impl From<StoreError> for SettleError {
    fn from(error: StoreError) -> Self {
        SettleError::Engine(error.into())
    }
}

impl From<SpoolError> for SettleError {
    fn from(error: SpoolError) -> Self {
        SettleError::Engine(error.into())
    }
}

/// What became of an outcome this engine decided.
#[derive(Debug)]
enum Settled {
    /// Its file is the outcome.
    Written(Outcome),
    /// Another writer's outcome stands (here).
    Lost(Outcome),
    /// The spool would not take it; it is kept in the store and retried.
    Kept { outcome: Outcome, error: String },
}

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

pub struct Engine {
    spool: Spool,
    store: Store,
    instance: String,
    /// `answered_by` of what a person answers through this engine: `operator:<account>`,
    /// the OS account this process runs as, which is also the owner of the files it
    /// writes (other inboxes check that they agree).
    operator: String,
    events: Option<Sender<Event>>,
    notifier: Box<dyn Notifier>,
    /// Events of the current batch, sent only after it commits.
    outbox: Vec<Event>,
    /// Requests ingested since the caller last took them, for the policy to judge.
    fresh: Vec<PendingFacts>,
    /// The operator's policy in force, and the file it comes from.
    policy: PolicySource,
    /// When this engine runs the loop ([`Engine::track_open`]): the requests it has reported
    /// open. Another process sharing the database (a CLI command) may ingest, settle or
    /// cancel a request and record that first; the file's event still arrives here, and this
    /// set tells the loop that it has not reported the change yet. `None` for one-shot use.
    open: Option<HashSet<String>>,
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
        })
    }

    /// Judges requests by this policy (the operator's file, see [`PolicySource::file`])
    /// instead of the shipped one.
    pub fn with_policy(mut self, policy: PolicySource) -> Engine {
        self.policy = policy;
        self
    }

    /// The policy in force and where it comes from.
    pub fn policy(&self) -> &PolicySource {
        &self.policy
    }

    /// What the policy in force says of a request (placed by `placed_by`).
    pub fn judge(&self, request: &Request, placed_by: Option<&str>) -> Verdict {
        self.policy.current().judge(&Facts { request, placed_by })
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
            Wake::Paths(paths) => self.handle_paths(&paths)?,
            Wake::Rescan => {
                self.sync()?;
                self.due_by(Utc::now())?;
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

    /// Notices a change of the policy file: a new policy is logged and every pending
    /// request judged again by it; a broken file is reported (the policy in force stays).
    fn refresh_policy(&mut self) -> Result<(), EngineError> {
        match self.policy.refresh() {
            None => Ok(()),
            Some(PolicyChange::Broken { message }) => self.policy_trouble(message),
            Some(PolicyChange::Changed {
                origin,
                digest,
                rules,
            }) => {
                self.in_batch(|engine| {
                    let detail = serde_json::json!({
                        "origin": origin, "digest": digest, "rules": rules,
                    });
                    engine
                        .store
                        .log_event(None, "policy_changed", &detail, Utc::now())?;
                    engine.outbox.push(Event::PolicyChanged { origin, rules });
                    Ok(())
                })?;
                self.judge_all_pending()
            }
        }
    }

    fn policy_trouble(&mut self, message: String) -> Result<(), EngineError> {
        tracing::error!("{message}");
        self.in_batch(|engine| {
            let detail = serde_json::json!({ "message": message });
            engine
                .store
                .log_event(None, "policy_problem", &detail, Utc::now())?;
            engine.outbox.push(Event::PolicyTrouble { message });
            Ok(())
        })
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

    /// A full scan: ingests every request not yet known, and outcomes and tombstones of
    /// pending ones; records problems; reaps stale temp files. Known files are not read.
    pub fn sync(&mut self) -> Result<(), EngineError> {
        let listing = self.spool.scan()?;
        let known = self.store.known()?;
        self.in_batch(|engine| {
            for problem in &listing.problems {
                engine.problem(&problem.path, &problem.reason)?;
            }
            for entry in &listing.requests {
                match known.get(&entry.id) {
                    None => engine.ingest_request(&entry.id)?,
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
    fn handle_paths(&mut self, paths: &[PathBuf]) -> Result<(), EngineError> {
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
                            None => engine.ingest_request(&id)?,
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

    /// Starts keeping track of which requests this engine has reported open, beginning with
    /// every pending one, so that changes other processes record in the shared database
    /// first are still reported (as events) and seen by policies. The loop calls this.
    fn track_open(&mut self) -> Result<(), EngineError> {
        self.open = Some(self.store.open_ids()?.into_iter().collect());
        Ok(())
    }

    fn is_open(&self, id: &str) -> bool {
        self.open.as_ref().is_some_and(|open| open.contains(id))
    }

    /// Forgets an open request; true if it was open.
    fn close(&mut self, id: &str) -> bool {
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
        self.open_request(id, facts)
    }

    /// Reports a request as open, then settles it at once if its outcome or tombstone is
    /// already in the spool; otherwise hands it to the policies.
    fn open_request(&mut self, id: &str, facts: PendingFacts) -> Result<(), EngineError> {
        self.outbox.push(ingested_event(id, &facts.request));
        if let Some(open) = &mut self.open {
            open.insert(id.to_owned());
        }
        if self.spool.exists(Area::Answers, id) {
            self.ingest_outcome(id)
        } else if self.spool.exists(Area::Cancel, id) {
            self.ingest_tombstone(id)
        } else {
            self.fresh.push(facts);
            Ok(())
        }
    }

    /// Requests ingested since the last call: the ones policies have not looked at yet.
    fn take_fresh(&mut self) -> Vec<PendingFacts> {
        std::mem::take(&mut self.fresh)
    }

    /// Judges requests by the policy in force: settles at once those whose autonomous mode
    /// it honours (and whose every required question has a default), and keeps with the
    /// others what it made of them (held and why, what happens next).
    fn apply_policy(&mut self, requests: &[PendingFacts]) -> Result<(), EngineError> {
        let now = Utc::now();
        self.in_batch(|engine| {
            let mut outcomes = Vec::new();
            for facts in requests {
                let Some(id) = facts.request.id.as_deref() else {
                    continue;
                };
                let verdict = engine.judge(&facts.request, facts.placed_by.as_deref());
                if let Some(outcome) = policy::autonomous(
                    &facts.request,
                    &verdict,
                    &engine.instance,
                    now,
                    facts.placed_at,
                ) {
                    outcomes.push(outcome);
                    continue;
                }
                // The steps taken count for the rule that took them: a new rule starts
                // from its first.
                let step = match &facts.judgement {
                    Some(judged) if judged.rule != verdict.rule => 0,
                    _ => facts.policy_step,
                };
                // A hold made when a delay passed stands when judged again.
                let held = policy::autonomy_held(&facts.request, &verdict).or_else(|| {
                    let delay_passed = step > 0
                        && verdict
                            .after
                            .as_ref()
                            .is_some_and(|after| after.then == inbox_policy::Then::Default);
                    delay_passed.then(|| policy::delay_held(&facts.request, &verdict))
                });
                let next = policy::next_step(&verdict, facts.placed_at, step);
                engine.keep_judgement(id, facts, &verdict, held, next.as_ref(), step)?;
            }
            engine.settle_all(outcomes)?;
            Ok(())
        })
    }

    /// Keeps a judgement with a pending request, and reports a hold it did not have.
    fn keep_judgement(
        &mut self,
        id: &str,
        facts: &PendingFacts,
        verdict: &Verdict,
        held: Option<String>,
        next: Option<&(DateTime<Utc>, Timed)>,
        step: u32,
    ) -> Result<(), EngineError> {
        let judgement = policy::judgement(verdict, held, next);
        let was_held = facts.judgement.as_ref().and_then(|j| j.held.as_ref());
        if let Some(reason) = judgement.held.as_ref().filter(|r| Some(*r) != was_held) {
            let detail = serde_json::json!({ "rule": verdict.rule, "reason": reason });
            self.store
                .log_event(Some(id), "held", &detail, Utc::now())?;
            self.outbox.push(Event::Held {
                id: id.to_owned(),
                reason: reason.clone(),
            });
        }
        self.store
            .set_judgement(id, &judgement, next.map(|(at, _)| *at), step)?;
        Ok(())
    }

    /// Judges every pending request again (at start-up, when others may have queued
    /// requests while no engine ran, and when the policy changed).
    fn judge_all_pending(&mut self) -> Result<(), EngineError> {
        let pending = self.store.pending_facts(Due::All)?;
        self.apply_policy(&pending)
    }

    /// Settles every pending request whose own expiry has passed, as the policy says.
    fn expire_due(&mut self, now: DateTime<Utc>) -> Result<(), EngineError> {
        let due = self.store.pending_facts(Due::Expiry(now))?;
        if due.is_empty() {
            return Ok(());
        }
        self.in_batch(|engine| {
            let outcomes: Vec<Outcome> = due
                .iter()
                .map(|facts| {
                    let verdict = engine.judge(&facts.request, facts.placed_by.as_deref());
                    policy::expire(
                        &facts.request,
                        &verdict,
                        &engine.instance,
                        now,
                        facts.placed_at,
                    )
                })
                .collect();
            engine.settle_all(outcomes)?;
            Ok(())
        })
    }

    /// Takes the policy's timed steps that are due: a rule's delay (defaults or expiry)
    /// and escalation steps. Escalation never answers; it waits while the operator has the
    /// request snoozed.
    fn run_policy_steps(&mut self, now: DateTime<Utc>) -> Result<(), EngineError> {
        let due = self.store.pending_facts(Due::Step(now))?;
        if due.is_empty() {
            return Ok(());
        }
        let mut reminders = Vec::new();
        self.in_batch(|engine| {
            let mut outcomes = Vec::new();
            for facts in &due {
                let Some(id) = facts.request.id.as_deref() else {
                    continue;
                };
                let verdict = engine.judge(&facts.request, facts.placed_by.as_deref());
                let step = facts.policy_step;
                let keep_held = facts.judgement.as_ref().and_then(|j| j.held.clone());
                match policy::next_step(&verdict, facts.placed_at, step) {
                    // The policy changed since this was due: nothing left, or later.
                    None => engine.keep_judgement(id, facts, &verdict, keep_held, None, step)?,
                    Some(next) if next.0 > now => {
                        engine.keep_judgement(id, facts, &verdict, keep_held, Some(&next), step)?
                    }
                    Some((_, Timed::After(then))) => {
                        match policy::delayed(
                            &facts.request,
                            &verdict,
                            then,
                            &engine.instance,
                            now,
                            facts.placed_at,
                        ) {
                            Some(outcome) => outcomes.push(outcome),
                            None => {
                                let held = policy::delay_held(&facts.request, &verdict);
                                engine.keep_judgement(
                                    id,
                                    facts,
                                    &verdict,
                                    Some(held),
                                    None,
                                    step + 1,
                                )?
                            }
                        }
                    }
                    Some((_, Timed::Escalate(..)))
                        if facts.snoozed_until.is_some_and(|t| t > now) =>
                    {
                        let until = facts.snoozed_until.expect("checked");
                        let judgement = policy::judgement(&verdict, keep_held, None);
                        engine
                            .store
                            .set_judgement(id, &judgement, Some(until), step)?;
                    }
                    Some((_, Timed::Escalate(index, escalation))) => {
                        let action =
                            engine.escalate(id, facts, &verdict, index, &escalation.action);
                        if let StepAction::Notify(loudness) = escalation.action {
                            reminders.push((id.to_owned(), loudness, index));
                        }
                        let number = u32::try_from(index + 1).unwrap_or(u32::MAX);
                        let detail = serde_json::json!({
                            "rule": verdict.rule, "step": number, "action": action,
                        });
                        engine
                            .store
                            .log_event(Some(id), "escalated", &detail, now)?;
                        engine.outbox.push(Event::Escalated {
                            id: id.to_owned(),
                            step: number,
                            action,
                        });
                        let next = policy::next_step(&verdict, facts.placed_at, step + 1);
                        engine.keep_judgement(
                            id,
                            facts,
                            &verdict,
                            keep_held,
                            next.as_ref(),
                            step + 1,
                        )?;
                    }
                }
            }
            engine.settle_all(outcomes)?;
            Ok(())
        })?;
        self.remind(reminders)
    }

    /// Takes one escalation step's action; says what was done, for the history.
    fn escalate(
        &self,
        id: &str,
        facts: &PendingFacts,
        verdict: &Verdict,
        index: usize,
        action: &StepAction,
    ) -> String {
        match action {
            StepAction::Notify(_) => policy::describe_action(action),
            StepAction::Run(argv) => {
                let input = serde_json::json!({
                    "id": id,
                    "title": facts.request.display_title(),
                    "priority": facts.request.priority,
                    "source": facts.request.source,
                    "placed_at": facts.placed_at,
                    "placed_by": facts.placed_by,
                    "rule": verdict.rule,
                    "escalation_step": index + 1,
                    "request": facts.request,
                });
                let mut bytes = serde_json::to_vec_pretty(&input).expect("plain JSON");
                bytes.push(b'\n');
                match crate::policy::escalation::run(argv, bytes, id) {
                    Ok(pid) => format!("{} (started, pid {pid})", policy::describe_action(action)),
                    Err(error) => format!("{} failed: {error}", policy::describe_action(action)),
                }
            }
        }
    }

    /// Announces escalation reminders again, as loudly as their step says (quiet hours
    /// do not hold back a critical one).
    fn remind(&mut self, reminders: Vec<(String, Loudness, usize)>) -> Result<(), EngineError> {
        let quiet = self.is_quiet();
        let mut announcements = Vec::new();
        for (id, loudness, index) in reminders {
            if quiet && loudness != Loudness::Critical {
                continue;
            }
            if let Some(detail) = self.store.detail(&id)? {
                let mut announcement = Announcement::from(detail);
                announcement.loudness = loudness;
                announcement.escalation = u32::try_from(index + 1).ok();
                announcements.push(announcement);
            }
        }
        if !announcements.is_empty() {
            self.notifier.announce(announcements);
        }
        Ok(())
    }

    /// Whether it is quiet hours now (the policy's, in local time).
    fn is_quiet(&self) -> bool {
        self.policy.current().is_quiet(chrono::Local::now().time())
    }

    /// Ends the snoozes due by `now`: those requests are pending and announced again.
    fn end_snoozes(&mut self, now: DateTime<Utc>) -> Result<(), EngineError> {
        self.in_batch(|engine| {
            for id in engine.store.end_snoozes(now, None)? {
                engine.outbox.push(Event::SnoozeEnded { id });
            }
            Ok(())
        })
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
        for announcement in unnotified.into_iter().map(Announcement::from) {
            if announcement.loudness == Loudness::Silent {
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

    /// Snoozes a pending request for `duration`: it leaves the pending list and the count,
    /// and is announced again when the snooze ends. A snooze never reaches past the
    /// request's own expiry: it is cut to end there, and the result says so. Nothing is
    /// answered.
    pub fn snooze(
        &mut self,
        id: &str,
        duration: std::time::Duration,
    ) -> Result<Snoozed, SettleError> {
        self.ensure_known(id)?;
        let now = Utc::now();
        let detail = match self.store.detail(id)? {
            Some(detail) if detail.summary.state == State::Pending => detail,
            Some(detail) => match detail.outcome {
                Some(outcome) => return Err(SettleError::AlreadySettled(Box::new(outcome))),
                None => return Err(SettleError::Cancelled(id.to_owned())),
            },
            None => return Err(SettleError::NotFound(id.to_owned())),
        };
        let wanted = chrono::Duration::from_std(duration)
            .ok()
            .and_then(|d| now.checked_add_signed(d))
            .ok_or_else(|| {
                SettleError::Invalid(vec![Problem::new("/duration", "the snooze is too long")])
            })?;
        let (until, capped) = match detail.summary.deadline {
            Some(expiry) if expiry < wanted => (expiry, true),
            _ => (wanted, false),
        };
        let record = serde_json::json!({
            "until": until,
            "capped_at_expiry": capped,
        });
        self.in_batch(|engine| {
            if engine.store.snooze(id, until, &record, now)? {
                engine.outbox.push(Event::Snoozed {
                    id: id.to_owned(),
                    until,
                    capped,
                });
            }
            Ok(())
        })?;
        Ok(Snoozed { until, capped })
    }

    /// Ends a request's snooze now: it is pending again and announced anew. False if it
    /// was not snoozed.
    pub fn unsnooze(&mut self, id: &str) -> Result<bool, SettleError> {
        self.ensure_known(id)?;
        let ended = self.in_batch(|engine| {
            let ended = engine.store.end_snoozes(Utc::now(), Some(id))?;
            for id in &ended {
                engine.outbox.push(Event::SnoozeEnded { id: id.clone() });
            }
            Ok(!ended.is_empty())
        })?;
        Ok(ended)
    }

    /// Writes the operator's answers (an object keyed by question id) as the outcome,
    /// recorded as this engine's [`Engine::operator`].
    ///
    /// `version` is the SHA-256 (hex, or a prefix of at least [`MIN_VERSION_PREFIX`]
    /// digits) of the request as the operator was shown it; the answer is refused
    /// ([`SettleError::Changed`]) unless the file still is that version. `None` binds to the
    /// version the inbox holds (what `list` and `show` display), which the file must still
    /// be.
    ///
    /// `via` is where the operator answered (the window, a notification's button, the
    /// command line, a paired device's browser by name); the outcome records it, with how
    /// long the decision took.
    pub fn answer(
        &mut self,
        id: &str,
        given: &Map<String, Value>,
        version: Option<&str>,
        via: impl Into<Via>,
    ) -> Result<Outcome, SettleError> {
        let (request, placed_at) = self.open_pending_placed(id, version)?;
        let set = check_answers(&request, given).map_err(SettleError::Invalid)?;
        let outcome = Outcome::new(
            id,
            OutcomeStatus::Answered,
            self.operator.clone(),
            &self.instance,
            Utc::now(),
        )
        .with_answers(set)
        .with_request_sha256(Some(request.sha256.clone()))
        .with_decision(via, placed_at)
        // Last: the asker's own dialect (MCP elicitation, AskUserQuestion, HumanInterrupt)
        // gets its answer shape in `reply`, built from everything above.
        .with_reply(&request);
        self.settle_as_operator(outcome)
    }

    /// Declines a request with a reason; `version` and `via` as for [`Engine::answer`].
    pub fn decline(
        &mut self,
        id: &str,
        reason: &str,
        version: Option<&str>,
        via: impl Into<Via>,
    ) -> Result<Outcome, SettleError> {
        let (request, placed_at) = self.open_pending_placed(id, version)?;
        let reason = reason.trim();
        if reason.is_empty() {
            return Err(SettleError::Invalid(vec![Problem::new(
                "/reason",
                "a decline needs a reason",
            )]));
        }
        let outcome = Outcome::new(
            id,
            OutcomeStatus::Declined,
            self.operator.clone(),
            &self.instance,
            Utc::now(),
        )
        .with_reason(reason)
        .with_request_sha256(Some(request.sha256.clone()))
        .with_decision(via, placed_at)
        // Last: the asker's own dialect (MCP elicitation, AskUserQuestion, HumanInterrupt)
        // gets its answer shape in `reply`, built from everything above.
        .with_reply(&request);
        self.settle_as_operator(outcome)
    }

    /// Places a cancel tombstone for a request (the asker's side of withdrawing it).
    pub fn cancel(&mut self, id: &str, reason: &str) -> Result<Placed, SettleError> {
        self.ensure_known(id)?;
        if let Some(Ok(outcome)) = self.standing_outcome(id)? {
            return Err(SettleError::AlreadySettled(Box::new(outcome)));
        }
        let placed = self.spool.place_tombstone(id, reason)?;
        self.in_batch(|engine| engine.ingest_tombstone(id))?;
        // A writer that read the request before the tombstone existed may have linked its
        // outcome meanwhile; that outcome stands (see `ingest_outcome`), so say so.
        if let Some(Ok(outcome)) = self.standing_outcome(id)? {
            self.in_batch(|engine| engine.ingest_outcome(id))?;
            return Err(SettleError::AlreadySettled(Box::new(outcome)));
        }
        Ok(placed)
    }

    /// [`Engine::open_pending`] with when the request was placed, for the outcome's
    /// decision time.
    fn open_pending_placed(
        &mut self,
        id: &str,
        version: Option<&str>,
    ) -> Result<(Request, DateTime<Utc>), SettleError> {
        let request = self.open_pending(id, version)?;
        let placed_at = self
            .store
            .detail(id)?
            .map_or_else(Utc::now, |detail| detail.summary.placed_at);
        Ok((request, placed_at))
    }

    /// The request as the spool holds it, if it is still open, may be answered here, and
    /// is the version the operator was shown (see [`Engine::answer`]).
    fn open_pending(&mut self, id: &str, version: Option<&str>) -> Result<Request, SettleError> {
        self.ensure_known(id)?;
        match self.standing_outcome(id)? {
            Some(Ok(outcome)) => return Err(SettleError::AlreadySettled(Box::new(outcome))),
            Some(Err(reason)) => {
                let reason = bad_outcome_reason(&reason);
                self.in_batch(|engine| engine.block(id, &reason))?;
                return Err(SettleError::Blocked {
                    id: id.to_owned(),
                    reason,
                });
            }
            None => {}
        }
        if self.spool.exists(Area::Cancel, id) {
            return Err(SettleError::Cancelled(id.to_owned()));
        }
        if let Some(kept) = self.store.unwritten(id)? {
            return Err(SettleError::Unwritten {
                outcome: Box::new(kept.outcome),
                error: kept.last_error,
            });
        }
        let stored = self.store.detail(id)?.and_then(|detail| {
            let blocked = detail.summary.blocked;
            detail.request.map(|request| (request, blocked))
        });
        let Some((stored, blocked)) = stored else {
            return Err(SettleError::NotFound(id.to_owned()));
        };
        if let Some(reason) = blocked {
            if reason.starts_with(BAD_OUTCOME) {
                // The invalid outcome file is gone (checked above): the block is lifted.
                self.store.clear_blocked(id)?;
            } else {
                return Err(SettleError::Blocked {
                    id: id.to_owned(),
                    reason,
                });
            }
        }
        let bytes = match self.spool.read_file(Area::Questions, id) {
            Ok(file) => file.bytes,
            Err(ReadError::Missing) => return Err(SettleError::NotFound(id.to_owned())),
            Err(other) => {
                return Err(SettleError::Unreadable {
                    id: id.to_owned(),
                    reason: other.to_string(),
                })
            }
        };
        if inbox_protocol::sha256_hex(&bytes) != stored.sha256 {
            self.in_batch(|engine| engine.block(id, CHANGED))?;
            return Err(SettleError::Changed {
                id: id.to_owned(),
                reason: CHANGED.to_owned(),
            });
        }
        if let Some(version) = version {
            if !same_version(version, &stored.sha256) {
                return Err(SettleError::Changed {
                    id: id.to_owned(),
                    reason: format!(
                        "the version you were shown ({}) is not the request in the inbox \
                         (version {}); look at it again",
                        inbox_protocol::text::one_line(short_version(version)),
                        short_version(&stored.sha256)
                    ),
                });
            }
        }
        parse_request(&bytes, Some(id)).map_err(|errors| SettleError::Unreadable {
            id: id.to_owned(),
            reason: format!("the request is invalid: {}", errors[0]),
        })
    }

    /// The request, if it may be answered now in the version given (see
    /// [`Engine::answer`]); else why not. Writes nothing.
    pub fn answerable(&mut self, id: &str, version: Option<&str>) -> Result<Request, SettleError> {
        self.open_pending(id, version)
    }

    /// Blocks a pending request for `reason`, once, and reports it.
    fn block(&mut self, id: &str, reason: &str) -> Result<(), EngineError> {
        if self.store.mark_blocked(id, reason, Utc::now())? {
            self.outbox.push(Event::Blocked {
                id: id.to_owned(),
                reason: reason.to_owned(),
            });
        }
        Ok(())
    }

    /// A pending request's file was touched: if its content is not what was ingested, it
    /// is blocked for good. The changed version is never answered under the old one's
    /// approval, and no policy settles it.
    fn check_unchanged(&mut self, id: &str) -> Result<(), EngineError> {
        let Some(stored) = self.store.detail(id)?.and_then(|detail| detail.request) else {
            return Ok(());
        };
        let path = self.spool.path(Area::Questions, id);
        match self.spool.read_file(Area::Questions, id) {
            Ok(file) if inbox_protocol::sha256_hex(&file.bytes) == stored.sha256 => Ok(()),
            Ok(_) => {
                self.problem(&path, CHANGED)?;
                self.block(id, CHANGED)
            }
            Err(ReadError::Missing | ReadError::Io(_)) => Ok(()),
            Err(other) => self.problem(&path, &other.to_string()),
        }
    }

    /// The outcome file standing for a request, if there is one: `Ok` if it may be
    /// trusted as the request's outcome, `Err(why)` if not (see [`Engine::verified`]).
    fn standing_outcome(&self, id: &str) -> Result<Option<Result<Outcome, String>>, EngineError> {
        let file = match self.spool.read_file(Area::Answers, id) {
            Ok(file) => file,
            Err(ReadError::Missing) => return Ok(None),
            Err(error) => return Ok(Some(Err(error.to_string()))),
        };
        let request = self.store.detail(id)?.and_then(|detail| detail.request);
        Ok(Some(verified(&file, request.as_ref())))
    }

    /// Brings one request into the store, so history records who settled it.
    fn ensure_known(&mut self, id: &str) -> Result<(), SettleError> {
        if !inbox_protocol::is_valid_id(id) {
            return Err(SettleError::NotFound(id.to_owned()));
        }
        if self.store.state(id)?.is_none() {
            let path = self.spool.path(Area::Questions, id);
            if !self.spool.exists(Area::Questions, id) {
                return Err(SettleError::NotFound(id.to_owned()));
            }
            self.handle_paths(&[path])?;
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

    fn settle_as_operator(&mut self, outcome: Outcome) -> Result<Outcome, SettleError> {
        match self.in_batch(|engine| engine.settle(outcome))? {
            Settled::Written(outcome) => Ok(outcome),
            Settled::Lost(winner) => Err(SettleError::AlreadySettled(Box::new(winner))),
            Settled::Kept { outcome, error } => Err(SettleError::Unwritten {
                outcome: Box::new(outcome),
                error,
            }),
        }
    }

    /// Tries again to write every kept outcome ([`SettleError::Unwritten`]). Returns how
    /// many still wait. A kept outcome loses to an outcome another writer placed meanwhile,
    /// and to the asker's cancel; both are reported as usual.
    fn retry_unwritten(&mut self) -> Result<usize, EngineError> {
        let kept = self.store.all_unwritten()?;
        if kept.is_empty() {
            return Ok(0);
        }
        self.in_batch(|engine| {
            let mut waiting = 0;
            for unwritten in kept {
                let id = unwritten.outcome.id.clone();
                if !engine.spool.exists(Area::Answers, &id)
                    && engine.spool.exists(Area::Cancel, &id)
                {
                    engine.ingest_tombstone(&id)?;
                    continue;
                }
                if let Settled::Kept { .. } = engine.settle(unwritten.outcome)? {
                    waiting += 1;
                }
            }
            Ok(waiting)
        })
    }

    /// Writes an outcome unless one exists, and records whichever outcome stands. When the
    /// spool will not take the file (a read-only or full answers directory, an I/O error),
    /// the outcome is kept in the store instead and retried by [`Engine::retry_unwritten`]:
    /// a decision is never dropped, and the loop goes on.
    fn settle(&mut self, outcome: Outcome) -> Result<Settled, EngineError> {
        let mut settled = self.settle_all(vec![outcome])?;
        Ok(settled.pop().expect("one result per outcome"))
    }

    /// [`Engine::settle`] for several outcomes with one flush to disk for all of them
    /// ([`Spool::write_outcomes`]): a burst that policies settle costs one `syncfs` and one
    /// directory sync, not one of each per file. The caller's batch records them in one
    /// transaction.
    fn settle_all(&mut self, outcomes: Vec<Outcome>) -> Result<Vec<Settled>, EngineError> {
        let files: Vec<(String, Vec<u8>)> = outcomes
            .iter()
            .map(|outcome| (outcome.id.clone(), outcome.to_file_bytes()))
            .collect();
        let batch: Vec<(&str, &[u8])> = files
            .iter()
            .map(|(id, bytes)| (id.as_str(), bytes.as_slice()))
            .collect();
        let placed = self.spool.write_outcomes(&batch);
        outcomes
            .into_iter()
            .zip(placed)
            .map(|(outcome, placed)| self.settled(outcome, placed))
            .collect()
    }

    /// Records what became of one outcome's file.
    fn settled(
        &mut self,
        outcome: Outcome,
        placed: Result<Placed, SpoolError>,
    ) -> Result<Settled, EngineError> {
        let id = outcome.id.clone();
        let placed = match placed {
            Ok(placed) => placed,
            Err(SpoolError::Io { path, source }) => {
                let error = format!("{}: {source}", path.display());
                if self.store.keep_unwritten(&outcome, &error, Utc::now())? {
                    tracing::info!("cannot write the outcome of {id}: {error}; kept, will retry");
                    self.outbox.push(Event::Unwritten {
                        id: id.clone(),
                        status: outcome.status,
                        answered_by: outcome.answered_by.clone(),
                        error: error.clone(),
                    });
                }
                return Ok(Settled::Kept { outcome, error });
            }
            Err(other) => return Err(other.into()),
        };
        match placed {
            Placed::Written => {
                self.record(&outcome)?;
                Ok(Settled::Written(outcome))
            }
            Placed::AlreadyThere => match self.standing_outcome(&id)? {
                Some(Ok(standing)) => {
                    self.record(&standing)?;
                    Ok(Settled::Lost(standing))
                }
                Some(Err(reason)) => {
                    self.bad_outcome(&id, &reason)?;
                    Ok(Settled::Lost(outcome))
                }
                // Gone again already: the next event or scan sees what replaced it.
                None => Ok(Settled::Lost(outcome)),
            },
        }
    }

    fn record(&mut self, outcome: &Outcome) -> Result<(), EngineError> {
        if self.store.record_outcome(outcome, Utc::now())?
            && outcome.status != OutcomeStatus::Rejected
        {
            self.close(&outcome.id);
            self.outbox.push(Event::Settled {
                id: outcome.id.clone(),
                status: outcome.status,
                answered_by: outcome.answered_by.clone(),
            });
        }
        Ok(())
    }

    fn ingest_request(&mut self, id: &str) -> Result<(), EngineError> {
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
                self.open_request(id, facts)?;
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

    fn ingest_outcome(&mut self, id: &str) -> Result<(), EngineError> {
        match self.store.state(id)? {
            None => {
                // An outcome for a request we have not seen: take the request first; it
                // picks up this outcome itself.
                if self.spool.exists(Area::Questions, id) {
                    self.ingest_request(id)?;
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

    fn ingest_tombstone(&mut self, id: &str) -> Result<(), EngineError> {
        // An outcome placed before the tombstone stands: the asker may already have read it.
        match self.store.state(id)? {
            Some(State::Pending) if !matches!(self.standing_outcome(id)?, Some(Ok(_))) => {
                let reason = self
                    .spool
                    .read(Area::Cancel, id)
                    .ok()
                    .map(|b| String::from_utf8_lossy(&b).trim().to_owned());
                if self
                    .store
                    .mark_cancelled(id, reason.as_deref().unwrap_or(""), Utc::now())?
                {
                    self.close(id);
                    self.outbox.push(Event::Cancelled { id: id.to_owned() });
                }
            }
            // Cancelled by another process sharing the database (`answer-inbox cancel`).
            Some(State::Cancelled) if self.close(id) => {
                self.outbox.push(Event::Cancelled { id: id.to_owned() });
            }
            _ => {}
        }
        Ok(())
    }

    /// An outcome file that may not be trusted: a problem on its path, and its request is
    /// blocked (the file's name is taken, so no answer can be linked after it).
    fn bad_outcome(&mut self, id: &str, reason: &str) -> Result<(), EngineError> {
        let reason = bad_outcome_reason(reason);
        let path = self.spool.path(Area::Answers, id);
        self.problem(&path, &reason)?;
        if self.store.state(id)? == Some(State::Pending) {
            self.block(id, &reason)?;
        }
        Ok(())
    }

    fn problem(&mut self, path: &Path, reason: &str) -> Result<(), EngineError> {
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

    /// Runs `work` in one store transaction and sends its events once it has committed.
    fn in_batch<T>(
        &mut self,
        work: impl FnOnce(&mut Engine) -> Result<T, EngineError>,
    ) -> Result<T, EngineError> {
        self.store.batch_begin()?;
        match work(self) {
            Ok(value) => {
                self.store.batch_commit()?;
                for event in std::mem::take(&mut self.outbox) {
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

/// What a snooze came to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Snoozed {
    pub until: DateTime<Utc>,
    /// The snooze was cut to the request's own expiry.
    pub capped: bool,
}

/// The block of a request whose file changed after it was placed.
const CHANGED: &str = "its file changed after it was placed; the changed version is never \
     answered under the old one's approval (the asker may cancel it and ask again)";

/// How the block of an invalid outcome file begins (it is lifted when the file goes).
const BAD_OUTCOME: &str = "an invalid outcome file blocks this request";

/// The shortest version prefix an operator may give (`answer --version`): 48 bits.
pub const MIN_VERSION_PREFIX: usize = 12;

fn bad_outcome_reason(why: &str) -> String {
    format!("{BAD_OUTCOME}: {why}")
}

/// Whether `shown` (hex, maybe a prefix) names the request version `sha256`.
fn same_version(shown: &str, sha256: &str) -> bool {
    let shown = shown.trim();
    shown.len() >= MIN_VERSION_PREFIX
        && shown.len() <= sha256.len()
        && sha256[..shown.len()].eq_ignore_ascii_case(shown)
}

/// A version as people read it: the first 12 hex digits.
fn short_version(sha256: &str) -> &str {
    sha256.get(..MIN_VERSION_PREFIX).unwrap_or(sha256)
}

/// Whether an outcome file may be trusted: it parses, passes the protocol's checks against
/// the request it names (`inbox_protocol::verify_outcome_for`), and a person's answer
/// names the account that owns the file.
fn verified(file: &SpoolFile, request: Option<&Request>) -> Result<Outcome, String> {
    let outcome = Outcome::from_file_bytes(&file.bytes)?;
    let Some(request) = request else {
        // A request that never was valid: only a rejection can stand for it.
        return match outcome.status {
            OutcomeStatus::Rejected => Ok(outcome),
            other => Err(format!("it says {other}, but the request is not valid")),
        };
    };
    inbox_protocol::verify_outcome_for(&outcome, request)?;
    if let Some(name) = inbox_protocol::operator_account(&outcome) {
        let owner = inbox_spool::account_name(file.owner);
        if owner.as_deref() != Some(name) {
            return Err(format!(
                "it says operator:{} answered, but the file was written by {}",
                inbox_protocol::text::one_line(name),
                owner.unwrap_or_else(|| format!("uid {}", file.owner))
            ));
        }
    }
    Ok(outcome)
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
