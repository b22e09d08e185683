//! Whether an outcome file may be trusted as the answer to a request.
//!
//! Anyone who can write `answers/` can write a file there. An outcome is adopted (by an
//! inbox, and by the asker waiting for it) only if it names the request and the very
//! version of it that was asked (its SHA-256), says who decided in the protocol's terms, and,
//! with the `validate` feature, carries answers that pass the same check as an operator's
//! and a dialect `reply` that is exactly what those answers make. Anything else is a bad
//! outcome: reported as such, never as an answer.
//!
//! Who wrote the file (its owner) is the spool's to say (`stat`): given the owner's account,
//! [`verify_owner`] checks that a person's answer names that very account. The inbox and
//! every asker run it, so a member of a team cannot write an answer in another member's
//! name. Whether the owner may write into the spool at all (its own account, or a team
//! member) is the spool's read rule, which refuses anyone else's file before it is parsed.

use crate::outcome::{decider_of, DecidedBy, Outcome, OutcomeStatus, Surface, PROTOCOL_VERSION};

pub use crate::outcome::{OPERATOR_PREFIX, POLICY_PREFIX};

/// The checks that need nothing but the outcome and what the asker placed: the id, the
/// version of the request (`request_sha256`, when the caller knows the file it placed),
/// who decided, and what each status must carry. The message says what is wrong, for a
/// problem record or an asker's error.
pub fn verify_outcome(
    outcome: &Outcome,
    id: &str,
    request_sha256: Option<&str>,
) -> Result<(), String> {
    if outcome.inbox != PROTOCOL_VERSION {
        return Err(format!("it is of protocol version {}", outcome.inbox));
    }
    if outcome.id != id {
        return Err(format!(
            "it names request \"{}\", not \"{id}\"",
            crate::text::one_line(&outcome.id)
        ));
    }
    match (outcome.request_sha256.as_deref(), request_sha256) {
        (Some(sha), Some(placed)) if !sha.eq_ignore_ascii_case(placed) => {
            return Err("it answers another version of the request (request_sha256 differs)".into())
        }
        (Some(_), _) => {}
        // A rejection of a file too big to read names no version.
        (None, _) if outcome.status == OutcomeStatus::Rejected => {}
        (None, _) => return Err("it does not say which version of the request it answers".into()),
    }
    let by = outcome.answered_by.as_str();
    let person = by
        .strip_prefix(OPERATOR_PREFIX)
        .is_some_and(|name| !name.is_empty());
    let policy = by
        .strip_prefix(POLICY_PREFIX)
        .is_some_and(|name| !name.is_empty());
    if !person && !policy {
        return Err(format!(
            "answered_by \"{}\" is neither operator:<account> nor policy:<name>",
            crate::text::one_line(by)
        ));
    }
    check_decision(outcome)?;
    match outcome.status {
        OutcomeStatus::Answered | OutcomeStatus::Declined if !person => Err(format!(
            "a policy cannot have {} it (answered_by \"{}\")",
            outcome.status,
            crate::text::one_line(by)
        )),
        OutcomeStatus::Declined
            if outcome
                .reason
                .as_deref()
                .is_none_or(|r| r.trim().is_empty()) =>
        {
            Err("it is declined without a reason".into())
        }
        OutcomeStatus::Rejected if outcome.errors.as_ref().is_none_or(Vec::is_empty) || !policy => {
            Err("a rejection must come from validation and say what is wrong".into())
        }
        // An expiry may carry the defaults it could fill; a decline or rejection answers
        // nothing.
        OutcomeStatus::Declined | OutcomeStatus::Rejected if !outcome.answers.is_empty() => {
            Err(format!("it is {} yet carries answers", outcome.status))
        }
        _ => Ok(()),
    }
}

/// The decision fields, when present, must agree with `answered_by`: a person's outcome
/// cannot claim a policy decided it, nor the reverse (an asker requiring a person relies on
/// it).
fn check_decision(outcome: &Outcome) -> Result<(), String> {
    let by = outcome.answered_by.as_str();
    let named = decider_of(by);
    if let Some(claimed) = outcome.decided_by {
        if Some(claimed) != named {
            return Err(format!(
                "decided_by \"{}\" disagrees with answered_by \"{}\"",
                decided_by_word(claimed),
                crate::text::one_line(by)
            ));
        }
    }
    if let Some(rule) = outcome.rule.as_deref() {
        if named != Some(DecidedBy::Policy) || rule != by {
            return Err(format!(
                "rule \"{}\" is not the policy in answered_by \"{}\"",
                crate::text::one_line(rule),
                crate::text::one_line(by)
            ));
        }
    }
    if let Some(device) = outcome.device.as_deref() {
        check_device(device, outcome.surface)?;
    }
    match (outcome.surface, named) {
        (Some(Surface::Policy), Some(DecidedBy::Person)) => {
            Err("a person's decision cannot come from surface \"policy\"".into())
        }
        (Some(surface), Some(DecidedBy::Policy)) if surface != Surface::Policy => Err(format!(
            "a policy's decision cannot come from surface \"{surface}\""
        )),
        _ => Ok(()),
    }
}

/// A device name is the name of a paired browser: only with surface `web`, one short line.
fn check_device(device: &str, surface: Option<Surface>) -> Result<(), String> {
    if surface != Some(Surface::Web) {
        return Err(format!(
            "device \"{}\" given for a decision not made on surface \"web\"",
            crate::text::one_line(device)
        ));
    }
    if device.trim().is_empty() || device.chars().count() > crate::limits::MAX_DEVICE_NAME_CHARS {
        return Err(format!(
            "device name must be 1 to {} characters",
            crate::limits::MAX_DEVICE_NAME_CHARS
        ));
    }
    if crate::text::one_line(device) != device {
        return Err(format!(
            "device name \"{}\" holds control or invisible characters",
            crate::text::one_line(device)
        ));
    }
    Ok(())
}

fn decided_by_word(decided_by: DecidedBy) -> &'static str {
    match decided_by {
        DecidedBy::Person => "person",
        DecidedBy::Policy => "policy",
    }
}

/// The person an outcome names, if a person decided it: the account in
/// `operator:<account>`.
pub fn operator_account(outcome: &Outcome) -> Option<&str> {
    outcome.answered_by.strip_prefix(OPERATOR_PREFIX)
}

/// Whether the account that owns an outcome file may have written it: a person's answer
/// (`operator:<account>`) must be owned by the account it names, so nobody answers in
/// another's name. A policy's outcome names no person; who may write it is the spool's read
/// rule (the spool's own account, or a member of its team). `owner` is the name of the
/// account that owns the file (`None` when the account database does not know it), `uid`
/// its number, for the message.
pub fn verify_owner(outcome: &Outcome, owner: Option<&str>, uid: u32) -> Result<(), String> {
    let Some(named) = operator_account(outcome) else {
        return Ok(());
    };
    if owner == Some(named) {
        return Ok(());
    }
    Err(format!(
        "it says operator:{} answered, but the file was written by {}",
        crate::text::one_line(named),
        owner.map_or_else(
            || format!("uid {uid}"),
            |name| crate::text::one_line(name).into_owned()
        )
    ))
}

#[cfg(feature = "validate")]
mod with_request {
    use serde_json::{Map, Value};

    use super::verify_outcome;
    use crate::model::Request;
    use crate::outcome::{Outcome, OutcomeStatus};

    /// Every check: [`verify_outcome`], then the answers against the request's questions
    /// (the same check an operator's answers pass), then the dialect `reply` (an agent is
    /// handed `reply`, so it must be exactly what the answers make). A valid request is
    /// never `rejected`.
    pub fn verify_outcome_for(outcome: &Outcome, request: &Request) -> Result<(), String> {
        let id = request.id.as_deref().unwrap_or(&outcome.id);
        verify_outcome(outcome, id, Some(&request.sha256))?;
        match outcome.status {
            OutcomeStatus::Answered | OutcomeStatus::Defaulted => {
                let given: Map<String, Value> = outcome
                    .answers
                    .iter()
                    .map(|(k, v)| (k.clone(), v.clone()))
                    .collect();
                let set = crate::check_answers(request, &given).map_err(|problems| {
                    let first = problems
                        .first()
                        .map(ToString::to_string)
                        .unwrap_or_default();
                    format!("its answers do not fit the request's questions: {first}")
                })?;
                if set.answers != outcome.answers {
                    return Err("its answers are not what the request's questions allow".into());
                }
            }
            OutcomeStatus::Rejected => {
                return Err("the request is valid, so it cannot have been rejected".into())
            }
            OutcomeStatus::Declined | OutcomeStatus::Expired => {}
        }
        // A policy decides nothing of its own: it can only stand in the request's defaults
        // (or, when time ran out, give no answers at all), and autonomous mode only for a
        // request that asked for it. Otherwise a writer could record its own choice as "a
        // rule allowed it".
        if outcome.answered_by.starts_with(super::POLICY_PREFIX)
            && outcome.status != OutcomeStatus::Rejected
        {
            let none_given = outcome.status == OutcomeStatus::Expired && outcome.answers.is_empty();
            if !none_given && outcome.answers != crate::fill_defaults(request).set.answers {
                return Err(format!(
                    "{} answered with something other than the request's defaults",
                    crate::text::one_line(&outcome.answered_by)
                ));
            }
            let autonomous = outcome.answered_by == crate::outcome::BY_AUTONOMOUS
                || outcome.trigger == Some(crate::outcome::Trigger::Autonomous);
            if autonomous && request.mode != crate::model::Mode::Autonomous {
                return Err("autonomous mode settled a request that did not ask for it".into());
            }
        }
        if outcome.reply != crate::dialect_reply(request, outcome) {
            return Err("its reply does not match its answers".into());
        }
        Ok(())
    }
}

#[cfg(feature = "validate")]
pub use with_request::verify_outcome_for;

#[cfg(test)]
mod tests {
    use chrono::{TimeDelta, Utc};

    use super::*;
    #[cfg(feature = "validate")]
    use crate::outcome::{BY_AUTONOMOUS, BY_EXPIRY};

    fn outcome(status: OutcomeStatus, by: &str) -> Outcome {
        let mut outcome = Outcome::new("r", status, by, "h/i", Utc::now());
        outcome.request_sha256 = Some("ab".repeat(32));
        outcome
    }

    #[test]
    fn a_persons_answer_is_owned_by_the_account_it_names() {
        let by_ann = outcome(OutcomeStatus::Answered, "operator:ann");
        assert_eq!(verify_owner(&by_ann, Some("ann"), 1001), Ok(()));
        assert_eq!(
            verify_owner(&by_ann, Some("bob"), 1002),
            Err("it says operator:ann answered, but the file was written by bob".into())
        );
        // An owner the account database does not know is named by its number.
        assert_eq!(
            verify_owner(&by_ann, None, 4242),
            Err("it says operator:ann answered, but the file was written by uid 4242".into())
        );
        // A policy names no person: the spool's read rule says who may write it.
        let by_rule = outcome(OutcomeStatus::Defaulted, "policy:rule:file-askers");
        assert_eq!(verify_owner(&by_rule, Some("bob"), 1002), Ok(()));
    }

    #[test]
    fn decision_fields_are_derived_from_who_answered() {
        let placed = Utc::now() - TimeDelta::milliseconds(1500);
        let person =
            outcome(OutcomeStatus::Answered, "operator:ann").with_decision(Surface::Bubble, placed);
        assert_eq!(person.decided_by, Some(DecidedBy::Person));
        assert_eq!(person.rule, None);
        assert_eq!(person.surface, Some(Surface::Bubble));
        assert!(person.decision_ms.is_some_and(|ms| ms >= 1500));
        assert_eq!(verify_outcome(&person, "r", None), Ok(()));

        let policy = outcome(OutcomeStatus::Defaulted, "policy:autonomous")
            .with_decision(Surface::Policy, placed);
        assert_eq!(policy.decided_by, Some(DecidedBy::Policy));
        assert_eq!(policy.rule.as_deref(), Some("policy:autonomous"));
        assert_eq!(verify_outcome(&policy, "r", None), Ok(()));
    }

    #[test]
    fn decided_by_must_agree_with_answered_by() {
        let mut forged = outcome(OutcomeStatus::Defaulted, "policy:expiry");
        forged.decided_by = Some(DecidedBy::Person);
        let error = verify_outcome(&forged, "r", None).unwrap_err();
        assert!(error.contains("decided_by \"person\""), "{error}");

        let mut forged = outcome(OutcomeStatus::Answered, "operator:ann");
        forged.decided_by = Some(DecidedBy::Policy);
        assert!(verify_outcome(&forged, "r", None).is_err());

        let mut forged = outcome(OutcomeStatus::Answered, "operator:ann");
        forged.rule = Some("policy:autonomous".into());
        assert!(verify_outcome(&forged, "r", None).is_err());

        let mut forged = outcome(OutcomeStatus::Defaulted, "policy:expiry");
        forged.rule = Some("policy:autonomous".into());
        assert!(verify_outcome(&forged, "r", None).is_err());

        let mut forged = outcome(OutcomeStatus::Defaulted, "policy:expiry");
        forged.surface = Some(Surface::Window);
        assert!(verify_outcome(&forged, "r", None).is_err());

        let mut forged = outcome(OutcomeStatus::Answered, "operator:ann");
        forged.surface = Some(Surface::Policy);
        assert!(verify_outcome(&forged, "r", None).is_err());
    }

    #[test]
    fn a_device_is_named_only_for_web_answers_and_only_as_one_short_line() {
        let placed = Utc::now();
        let web = outcome(OutcomeStatus::Answered, "operator:ann")
            .with_decision(crate::Via::device("Phone"), placed);
        assert_eq!(web.surface, Some(Surface::Web));
        assert_eq!(web.device.as_deref(), Some("Phone"));
        assert_eq!(verify_outcome(&web, "r", None), Ok(()));

        let mut forged = web.clone();
        forged.surface = Some(Surface::Window);
        let error = verify_outcome(&forged, "r", None).unwrap_err();
        assert!(error.contains("not made on surface \"web\""), "{error}");
        for bad in ["", "a\nb", "Phone\u{202e}", &"x".repeat(41)] {
            let mut forged = web.clone();
            forged.device = Some(bad.to_owned());
            assert!(verify_outcome(&forged, "r", None).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn outcomes_without_decision_fields_still_read_and_verify() {
        let old = outcome(OutcomeStatus::Defaulted, "policy:autonomous");
        let read = Outcome::from_file_bytes(&old.to_file_bytes()).unwrap();
        assert_eq!(read.decided_by, None);
        assert_eq!(read.decider(), Some(DecidedBy::Policy));
        assert_eq!(verify_outcome(&read, "r", None), Ok(()));
        let text = String::from_utf8(old.to_file_bytes()).unwrap();
        assert!(
            !text.contains("decided_by"),
            "absent fields are not written"
        );
    }

    /// A policy can only stand in the defaults, and autonomous mode only where asked for.
    #[cfg(feature = "validate")]
    #[test]
    fn a_policy_outcome_carries_the_defaults_and_nothing_else() {
        let request = |mode: &str| {
            let body = serde_json::json!({"inbox": 1, "id": "r", "title": "Deploy", "mode": mode,
                "questions": [{"id": "go", "question": "Go?", "type": "confirm", "default": false}]});
            crate::parse_request(body.to_string().as_bytes(), Some("r")).unwrap()
        };
        let settled = |request: &crate::model::Request, by: &str, go: bool| {
            let mut outcome = Outcome::new("r", OutcomeStatus::Defaulted, by, "h/i", Utc::now());
            outcome.request_sha256 = Some(request.sha256.clone());
            outcome.answers.insert("go".into(), serde_json::json!(go));
            outcome
        };
        let autonomous = request("autonomous");
        assert!(
            verify_outcome_for(&settled(&autonomous, BY_AUTONOMOUS, false), &autonomous).is_ok()
        );
        let chose = verify_outcome_for(&settled(&autonomous, BY_AUTONOMOUS, true), &autonomous);
        assert!(chose
            .unwrap_err()
            .contains("other than the request's defaults"));
        let interactive = request("interactive");
        let unasked =
            verify_outcome_for(&settled(&interactive, BY_AUTONOMOUS, false), &interactive);
        assert!(unasked.unwrap_err().contains("did not ask for it"));
        assert!(verify_outcome_for(&settled(&interactive, BY_EXPIRY, false), &interactive).is_ok());
    }
}
