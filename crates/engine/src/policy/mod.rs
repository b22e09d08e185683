//! The operator's policy (`inbox-policy`) applied to one request: pure decisions about
//! autonomous mode, expiry, a rule's delay and escalation. The engine carries them out.
//!
//! A policy only ever stands in the request's own defaults: it never chooses an answer.
//! A timeout is never reported as a refusal, and a required question without a default
//! always reaches a person unless time runs out.
//!
//! Everything the engine does with the policy is in this folder:
//! - this file: the pure decisions (what a verdict allows, holds, and does next) and the
//!   [`Judgement`] kept with a request;
//! - [`source`]: where the policy comes from, kept in force and noticed when it changes;
//! - `apply.rs`: the engine's steps that judge requests and take the timed steps;
//! - [`escalation`]: running an escalation step's command.

mod apply;
pub mod escalation;
pub mod source;

use chrono::{DateTime, Utc};
use inbox_policy::{Loudness, Step, StepAction, Then, Verdict};
use inbox_protocol::{fill_defaults, Mode, Outcome, OutcomeStatus, Request, Surface, Trigger};
use serde::{Deserialize, Serialize};

/// `answered_by` of rejections: the request failed validation (no rule is involved).
pub use inbox_protocol::BY_VALIDATION as VALIDATION;

/// What the policy made of a pending request, kept with it so every front end can say
/// which rule applies, why its autonomous mode did not settle it, and what happens next.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Judgement {
    /// The name of the rule that matched.
    pub rule: String,
    /// The rule's verdict in words.
    pub summary: String,
    /// How loudly the operator is told.
    pub notify: Loudness,
    /// Whether a notification may carry answer buttons.
    pub buttons: bool,
    /// Set when the request asked for autonomous mode (or a rule's delay would default
    /// it) and the policy held it for a person: why.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub held: Option<String>,
    /// The policy's next timed step, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub next: Option<NextStep>,
    /// Who answers it, when its rule assigns people (docs/TEAMS.md).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub team: Option<crate::engine::Team>,
}

/// A timed step the policy will take unless a person answers first.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct NextStep {
    pub at: DateTime<Utc>,
    /// In words: "its defaults answer it", "it expires", "escalation step 1: ...".
    pub what: String,
}

/// A timed step: the rule's `after` (default or expire), or one escalation step.
#[derive(Debug, Clone, PartialEq)]
pub enum Timed {
    After(Then),
    /// The escalation step with this index (0-based).
    Escalate(usize, Step),
}

/// Why the request's own autonomous mode does not settle it now, or `None` if it does.
/// `None` too for a request that did not ask for autonomous mode.
pub fn autonomy_held(request: &Request, verdict: &Verdict) -> Option<String> {
    if request.mode != Mode::Autonomous {
        return None;
    }
    if !verdict.honours_autonomy() {
        return Some(if verdict.never_auto {
            format!(
                "rule {}: nothing automatic may settle it; it waits for a person",
                verdict.rule
            )
        } else {
            format!(
                "rule {}: its autonomous mode is held for a person",
                verdict.rule
            )
        });
    }
    let missing = fill_defaults(request).missing_required;
    (!missing.is_empty()).then(|| {
        format!(
            "autonomous, but no default for the required question{} {}: it waits for a person",
            if missing.len() == 1 { "" } else { "s" },
            missing.join(", ")
        )
    })
}

/// The outcome autonomous mode gives at once, if the request asked for it, the rule
/// honours it, and every required question has a default. `placed_at`: when the request
/// was placed, for the decision time.
pub fn autonomous(
    request: &Request,
    verdict: &Verdict,
    instance: &str,
    now: DateTime<Utc>,
    placed_at: DateTime<Utc>,
) -> Option<Outcome> {
    if request.mode != Mode::Autonomous || autonomy_held(request, verdict).is_some() {
        return None;
    }
    Some(defaulted(
        request,
        verdict,
        Trigger::Autonomous,
        None,
        instance,
        now,
        placed_at,
    ))
}

/// The outcome of a request whose own expiry passed: `defaulted` if the rule lets its
/// defaults answer and they answer every required question, else `expired` (with what
/// defaults could fill where the rule allows defaults, with no answers where it does not).
pub fn expire(
    request: &Request,
    verdict: &Verdict,
    instance: &str,
    now: DateTime<Utc>,
    placed_at: DateTime<Utc>,
) -> Outcome {
    let filled = fill_defaults(request);
    if !verdict.expiry_may_default() {
        let why = verdict
            .expiry_refused
            .clone()
            .unwrap_or_else(|| "it does not let defaults answer it".to_owned());
        return expired(
            request,
            verdict,
            Trigger::Expiry,
            format!(
                "the request expired before the operator answered; rule {}: {why}",
                verdict.rule
            ),
            instance,
            now,
            placed_at,
        );
    }
    if filled.missing_required.is_empty() {
        return defaulted(
            request,
            verdict,
            Trigger::Expiry,
            Some("the request expired; its defaults answered it".to_owned()),
            instance,
            now,
            placed_at,
        );
    }
    Outcome::new(
        request_id(request),
        OutcomeStatus::Expired,
        verdict.answered_by(),
        instance,
        now,
    )
    .with_answers(filled.set)
    .with_reason(format!(
        "the request expired before the operator answered; no default for: {}",
        filled.missing_required.join(", ")
    ))
    .with_request_sha256(Some(request.sha256.clone()))
    .with_decision(Surface::Policy, placed_at)
    .with_trigger(Trigger::Expiry)
    .with_reply(request)
}

/// The outcome a rule's delay gives (`after` with `then = "default"` or `"expire"`), or
/// `None` when it gives none: defaults that do not answer every required question leave
/// the request to a person, and escalation never answers.
pub fn delayed(
    request: &Request,
    verdict: &Verdict,
    then: Then,
    instance: &str,
    now: DateTime<Utc>,
    placed_at: DateTime<Utc>,
) -> Option<Outcome> {
    let delay = verdict
        .after
        .as_ref()
        .map(|after| humantime::format_duration(after.delay).to_string())
        .unwrap_or_default();
    match then {
        Then::Default if !verdict.never_auto => {
            fill_defaults(request).missing_required.is_empty().then(|| {
                defaulted(
                    request,
                    verdict,
                    Trigger::Delay,
                    Some(format!(
                        "nobody answered within {delay}; rule {} let its defaults answer it",
                        verdict.rule
                    )),
                    instance,
                    now,
                    placed_at,
                )
            })
        }
        Then::Default | Then::Escalate => None,
        Then::Expire => Some(expired(
            request,
            verdict,
            Trigger::Delay,
            format!(
                "nobody answered within {delay}; rule {} expires it",
                verdict.rule
            ),
            instance,
            now,
            placed_at,
        )),
    }
}

/// Why a rule's delay that would default a request leaves it to a person instead.
pub fn delay_held(request: &Request, verdict: &Verdict) -> String {
    format!(
        "rule {}: its defaults would answer it now, but there is no default for: {}; it \
         waits for a person",
        verdict.rule,
        fill_defaults(request).missing_required.join(", ")
    )
}

/// The escalation steps of a verdict: its own, or one critical re-notification.
pub fn escalation_steps(verdict: &Verdict) -> Vec<Step> {
    if verdict.escalate.is_empty() {
        vec![Step {
            after: std::time::Duration::ZERO,
            action: StepAction::Notify(Loudness::Critical),
        }]
    } else {
        verdict.escalate.clone()
    }
}

/// The policy's next timed step for a request placed at `placed_at` that has taken
/// `taken` of them, and when it is due.
pub fn next_step(
    verdict: &Verdict,
    placed_at: DateTime<Utc>,
    taken: u32,
) -> Option<(DateTime<Utc>, Timed)> {
    let after = verdict.after.as_ref()?;
    let start = placed_at + chrono::Duration::from_std(after.delay).ok()?;
    match after.then {
        Then::Escalate => {
            let steps = escalation_steps(verdict);
            let index = usize::try_from(taken).ok()?;
            let step = steps.get(index)?.clone();
            let at = start + chrono::Duration::from_std(step.after).ok()?;
            Some((at, Timed::Escalate(index, step)))
        }
        then if taken == 0 => Some((start, Timed::After(then))),
        _ => None,
    }
}

/// A timed step in words, for the judgement and the history.
pub fn describe_timed(timed: &Timed) -> String {
    match timed {
        Timed::After(Then::Default) => "its defaults answer it".to_owned(),
        Timed::After(Then::Expire) => "it expires".to_owned(),
        Timed::After(Then::Escalate) => "escalation begins".to_owned(),
        Timed::Escalate(index, step) => {
            format!(
                "escalation step {}: {}",
                index + 1,
                describe_action(&step.action)
            )
        }
    }
}

/// An escalation action in words.
pub fn describe_action(action: &StepAction) -> String {
    match action {
        StepAction::Notify(Loudness::Critical) => "notify again, critically".to_owned(),
        StepAction::Notify(_) => "notify again".to_owned(),
        StepAction::Run(argv) => format!("run {}", argv.join(" ")),
    }
}

/// The judgement to keep with a pending request.
pub fn judgement(
    verdict: &Verdict,
    held: Option<String>,
    next: Option<&(DateTime<Utc>, Timed)>,
) -> Judgement {
    Judgement {
        rule: verdict.rule.clone(),
        summary: verdict.describe(),
        notify: verdict.notify,
        buttons: verdict.buttons,
        held,
        next: next.map(|(at, timed)| NextStep {
            at: *at,
            what: describe_timed(timed),
        }),
        team: None,
    }
}

fn request_id(request: &Request) -> &str {
    request.id.as_deref().unwrap_or_default()
}

fn defaulted(
    request: &Request,
    verdict: &Verdict,
    trigger: Trigger,
    reason: Option<String>,
    instance: &str,
    now: DateTime<Utc>,
    placed_at: DateTime<Utc>,
) -> Outcome {
    let mut outcome = Outcome::new(
        request_id(request),
        OutcomeStatus::Defaulted,
        verdict.answered_by(),
        instance,
        now,
    )
    .with_answers(fill_defaults(request).set);
    if let Some(reason) = reason {
        outcome = outcome.with_reason(reason);
    }
    outcome
        .with_request_sha256(Some(request.sha256.clone()))
        .with_decision(Surface::Policy, placed_at)
        .with_trigger(trigger)
        // Last: the dialect's own answer shape is built from everything above.
        .with_reply(request)
}

fn expired(
    request: &Request,
    verdict: &Verdict,
    trigger: Trigger,
    reason: String,
    instance: &str,
    now: DateTime<Utc>,
    placed_at: DateTime<Utc>,
) -> Outcome {
    Outcome::new(
        request_id(request),
        OutcomeStatus::Expired,
        verdict.answered_by(),
        instance,
        now,
    )
    .with_reason(reason)
    .with_request_sha256(Some(request.sha256.clone()))
    .with_decision(Surface::Policy, placed_at)
    .with_trigger(trigger)
    .with_reply(request)
}

#[cfg(test)]
mod tests {
    use super::*;
    use inbox_policy::{Facts, Policy};
    use inbox_protocol::{parse_request, verify_outcome_for, DecidedBy};

    fn request(body: &str) -> Request {
        parse_request(body.as_bytes(), Some("r")).unwrap()
    }

    fn verdict(policy: &str, request: &Request) -> Verdict {
        Policy::parse(policy).unwrap().judge(&Facts {
            request,
            placed_by: None,
        })
    }

    const HONOUR: &str =
        "[[rule]]\nname = \"all\"\nautonomous = \"honour\"\non_expiry = \"default\"\n";
    const HOLD: &str = "[[rule]]\nname = \"all\"\nautonomous = \"hold\"\n";

    #[test]
    fn autonomous_answers_only_when_honoured_and_every_required_question_has_a_default() {
        let now = Utc::now();
        let full = request(
            r#"{"mode": "autonomous", "questions": [
            {"id": "a", "question": "A?", "type": "confirm", "default": true},
            {"id": "b", "question": "B?", "type": "text", "required": false}]}"#,
        );
        let outcome = autonomous(&full, &verdict(HONOUR, &full), "h/i", now, now).unwrap();
        assert_eq!(outcome.status, OutcomeStatus::Defaulted);
        assert_eq!(outcome.answered_by, "policy:rule:all");
        assert_eq!(outcome.decided_by, Some(DecidedBy::Policy));
        assert_eq!(outcome.rule.as_deref(), Some("policy:rule:all"));
        assert_eq!(outcome.trigger, Some(Trigger::Autonomous));
        assert_eq!(outcome.surface, Some(Surface::Policy));
        assert_eq!(outcome.defaulted, vec!["a".to_owned()]);
        verify_outcome_for(&outcome, &full).unwrap();

        let held = verdict(HOLD, &full);
        assert!(autonomous(&full, &held, "h/i", now, now).is_none());
        assert!(autonomy_held(&full, &held).unwrap().contains("rule all"));

        let blocked = request(
            r#"{"mode": "autonomous", "questions": [
            {"id": "a", "question": "A?", "type": "confirm"}]}"#,
        );
        let honour = verdict(HONOUR, &blocked);
        assert!(autonomous(&blocked, &honour, "h/i", now, now).is_none());
        assert!(autonomy_held(&blocked, &honour)
            .unwrap()
            .contains("no default for the required question a"));
        let interactive =
            request(r#"[{"id": "a", "question": "A?", "type": "confirm", "default": true}]"#);
        assert!(autonomous(
            &interactive,
            &verdict(HONOUR, &interactive),
            "h/i",
            now,
            now
        )
        .is_none());
        assert_eq!(
            autonomy_held(&interactive, &verdict(HOLD, &interactive)),
            None
        );
    }

    #[test]
    fn expiry_defaults_only_where_the_rule_allows() {
        let now = Utc::now();
        let with_default =
            request(r#"[{"id": "a", "question": "A?", "type": "confirm", "default": false}]"#);
        let allowed = expire(
            &with_default,
            &verdict(HONOUR, &with_default),
            "h/i",
            now,
            now,
        );
        assert_eq!(allowed.status, OutcomeStatus::Defaulted);
        assert_eq!(allowed.trigger, Some(Trigger::Expiry));
        verify_outcome_for(&allowed, &with_default).unwrap();

        let refused = expire(
            &with_default,
            &verdict(HOLD, &with_default),
            "h/i",
            now,
            now,
        );
        assert_eq!(refused.status, OutcomeStatus::Expired);
        assert!(refused.answers.is_empty());
        assert!(refused.reason.as_deref().unwrap().contains("rule all"));
        verify_outcome_for(&refused, &with_default).unwrap();

        let without = request(r#"[{"id": "a", "question": "A?", "type": "confirm"}]"#);
        let outcome = expire(&without, &verdict(HONOUR, &without), "h/i", now, now);
        assert_eq!(outcome.status, OutcomeStatus::Expired);
        assert!(outcome.reason.unwrap().contains("no default for: a"));
    }

    #[test]
    fn a_delay_defaults_expires_or_escalates_and_escalation_never_answers() {
        let now = Utc::now();
        let r = request(r#"[{"id": "a", "question": "A?", "type": "confirm", "default": true}]"#);
        let policy =
            |then: &str| format!("[[rule]]\nname = \"late\"\nafter = \"10m\"\nthen = \"{then}\"\n");
        let to_default = verdict(&policy("default"), &r);
        let outcome = delayed(&r, &to_default, Then::Default, "h/i", now, now).unwrap();
        assert_eq!(outcome.status, OutcomeStatus::Defaulted);
        assert_eq!(outcome.trigger, Some(Trigger::Delay));
        verify_outcome_for(&outcome, &r).unwrap();

        let to_expire = verdict(&policy("expire"), &r);
        let outcome = delayed(&r, &to_expire, Then::Expire, "h/i", now, now).unwrap();
        assert_eq!(outcome.status, OutcomeStatus::Expired);
        verify_outcome_for(&outcome, &r).unwrap();

        let escalate = verdict(&policy("escalate"), &r);
        assert!(delayed(&r, &escalate, Then::Escalate, "h/i", now, now).is_none());
        let (at, timed) = next_step(&escalate, now, 0).unwrap();
        assert_eq!(at, now + chrono::Duration::minutes(10));
        assert!(matches!(timed, Timed::Escalate(0, _)));
        assert!(next_step(&escalate, now, 1).is_none());

        let (at, timed) = next_step(&to_default, now, 0).unwrap();
        assert_eq!(at, now + chrono::Duration::minutes(10));
        assert_eq!(timed, Timed::After(Then::Default));
        assert!(next_step(&to_default, now, 1).is_none());

        let no_default = request(r#"[{"id": "a", "question": "A?", "type": "confirm"}]"#);
        assert!(delayed(&no_default, &to_default, Then::Default, "h/i", now, now).is_none());
        assert!(delay_held(&no_default, &to_default).contains("no default for: a"));
    }
}
