//! The policy carried out: the [`Engine`] methods that judge requests by the policy in
//! force and take its timed steps. New requests and, after a change of the policy file,
//! every pending one are judged ([`super`]'s pure decisions say what a verdict allows);
//! autonomous and timed settlements go through one `settle_all` batch per turn; what the
//! policy made of a request is kept with it; escalation steps notify again or run a
//! command ([`super::escalation`]).
//!
//! Apart from the pure decisions because these write: the store, the spool, events, the
//! notifier.

use chrono::{DateTime, Utc};
use inbox_policy::{Facts, Loudness, StepAction, Verdict};
use inbox_protocol::{Outcome, Request};

use super::source::PolicyChange;
use super::{self as policy, Timed};
use crate::engine::Engine;
use crate::event::Event;
use crate::notifier::Announcement;
use crate::results::EngineError;
use crate::store::{Due, PendingFacts};

impl Engine {
    /// What the policy in force says of a request (placed by `placed_by` at `placed_at`:
    /// how long it allowed decides whether its defaults may answer at expiry).
    pub fn judge(
        &self,
        request: &Request,
        placed_by: Option<&str>,
        placed_at: DateTime<Utc>,
    ) -> Verdict {
        self.policy
            .current()
            .judge_placed(&Facts { request, placed_by }, placed_at)
    }

    /// Notices a change of the policy file: a new policy is logged and every pending
    /// request judged again by it; a broken file is reported (the policy in force stays).
    pub(crate) fn refresh_policy(&mut self) -> Result<(), EngineError> {
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

    pub(crate) fn policy_trouble(&mut self, message: String) -> Result<(), EngineError> {
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

    /// Judges requests by the policy in force: settles at once those whose autonomous mode
    /// it honours (and whose every required question has a default), and keeps with the
    /// others what it made of them (held and why, what happens next).
    pub(crate) fn apply_policy(&mut self, requests: &[PendingFacts]) -> Result<(), EngineError> {
        let now = Utc::now();
        self.in_batch(|engine| {
            let mut outcomes = Vec::new();
            for facts in requests {
                let Some(id) = facts.request.id.as_deref() else {
                    continue;
                };
                let verdict =
                    engine.judge(&facts.request, facts.placed_by.as_deref(), facts.placed_at);
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
                if let Some(outcome) =
                    engine.unassigned_outcome(id, &facts.request, &verdict, facts.placed_at)
                {
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
                let team = engine.team_judged(id, facts, &verdict)?;
                let held = held.or_else(|| {
                    (team.as_ref()?.nobody == Some(inbox_policy::IfUnassigned::Hold)).then(|| {
                        format!(
                            "nobody it is assigned to ({}) exists on this machine; it waits \
                             for its expiry (if_unassigned = \"hold\")",
                            verdict.assign.describe()
                        )
                    })
                });
                let mut verdict = verdict;
                if team.as_ref().and_then(|t| t.nobody)
                    == Some(inbox_policy::IfUnassigned::Escalate)
                {
                    // Nobody assigned exists: every member is told, urgently.
                    verdict.notify = Loudness::Critical;
                }
                engine.keep_judgement(id, facts, &verdict, held, next.as_ref(), step, team)?;
            }
            engine.settle_all(outcomes)?;
            Ok(())
        })
    }

    /// The request's team under `verdict` for this operator, its approvals so far kept;
    /// an assignment it did not have before is an entry in the audit log.
    fn team_judged(
        &mut self,
        id: &str,
        facts: &PendingFacts,
        verdict: &Verdict,
    ) -> Result<Option<crate::engine::Team>, EngineError> {
        let before = facts.judgement.as_ref().and_then(|j| j.team.clone());
        let Some(mut team) = crate::engine::Team::of(verdict, self.account()) else {
            return Ok(None);
        };
        let changed = before.as_ref().is_none_or(|b| {
            b.assign != team.assign || b.assignees != team.assignees || b.nobody != team.nobody
        });
        if changed {
            let detail = serde_json::json!({
                "rule": verdict.rule, "assign": team.assign, "assignees": team.assignees,
                "unknown": team.unknown, "approvals": team.approvals_needed,
                "takeover": team.takeover, "if_unassigned": team.nobody,
            });
            self.store
                .log_event(Some(id), "assigned", &detail, Utc::now())?;
        }
        if let Some(before) = before {
            team.approvals = before.approvals;
        }
        Ok(Some(team))
    }

    /// Keeps a judgement with a pending request, and reports a hold it did not have.
    #[allow(clippy::too_many_arguments)]
    fn keep_judgement(
        &mut self,
        id: &str,
        facts: &PendingFacts,
        verdict: &Verdict,
        held: Option<String>,
        next: Option<&(DateTime<Utc>, Timed)>,
        step: u32,
        team: Option<crate::engine::Team>,
    ) -> Result<(), EngineError> {
        let mut judgement = policy::judgement(verdict, held, next);
        judgement.team = team;
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
    pub(crate) fn judge_all_pending(&mut self) -> Result<(), EngineError> {
        let pending = self.store.pending_facts(Due::All)?;
        self.apply_policy(&pending)
    }

    /// Settles every pending request whose own expiry has passed, as the policy says.
    pub(crate) fn expire_due(&mut self, now: DateTime<Utc>) -> Result<(), EngineError> {
        let due = self.store.pending_facts(Due::Expiry(now))?;
        if due.is_empty() {
            return Ok(());
        }
        self.in_batch(|engine| {
            let outcomes: Vec<Outcome> = due
                .iter()
                .map(|facts| {
                    let verdict =
                        engine.judge(&facts.request, facts.placed_by.as_deref(), facts.placed_at);
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
    pub(crate) fn run_policy_steps(&mut self, now: DateTime<Utc>) -> Result<(), EngineError> {
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
                let verdict =
                    engine.judge(&facts.request, facts.placed_by.as_deref(), facts.placed_at);
                let step = facts.policy_step;
                let keep_held = facts.judgement.as_ref().and_then(|j| j.held.clone());
                match policy::next_step(&verdict, facts.placed_at, step) {
                    // The policy changed since this was due: nothing left, or later.
                    None => engine.keep_judgement(
                        id,
                        facts,
                        &verdict,
                        keep_held,
                        None,
                        step,
                        kept_team(facts),
                    )?,
                    Some(next) if next.0 > now => engine.keep_judgement(
                        id,
                        facts,
                        &verdict,
                        keep_held,
                        Some(&next),
                        step,
                        kept_team(facts),
                    )?,
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
                                    kept_team(facts),
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
                            kept_team(facts),
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
                match super::escalation::run(argv, bytes, id) {
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
            // A reminder is an announcement: only where the first one was made (team.rs).
            let detail = self.store.detail(&id)?.filter(|detail| {
                crate::engine::team::announced_here(detail.summary.judgement.as_ref())
            });
            if let Some(detail) = detail {
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
    pub(crate) fn is_quiet(&self) -> bool {
        self.policy.current().is_quiet(chrono::Local::now().time())
    }
}

/// The team kept with a request's judgement, for the steps that judge it again by the same
/// verdict.
fn kept_team(facts: &PendingFacts) -> Option<crate::engine::Team> {
    facts.judgement.as_ref().and_then(|j| j.team.clone())
}
