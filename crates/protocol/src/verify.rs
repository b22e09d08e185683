//! Whether an outcome file may be trusted as the answer to a request.
//!
//! Anyone who can write `answers/` can write a file there. An outcome is adopted (by an
//! inbox, and by the asker waiting for it) only if it names the request and the very
//! version of it that was asked (its SHA-256), says who decided in the protocol's terms, and,
//! with the `validate` feature, carries answers that pass the same check as an operator's
//! and a dialect `reply` that is exactly what those answers make. Anything else is a bad
//! outcome: reported as such, never as an answer.
//!
//! Who wrote the file (its owner) is the spool's business: the inbox checks that
//! `answered_by` names the account that owns the file, see `inbox-engine`.

use crate::outcome::{Outcome, OutcomeStatus, PROTOCOL_VERSION};

/// `answered_by` of an outcome a person decided: `operator:<account>`.
pub const OPERATOR_PREFIX: &str = "operator:";
/// `answered_by` of an outcome a policy decided: `policy:<name>`.
pub const POLICY_PREFIX: &str = "policy:";

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

/// The person an outcome names, if a person decided it: the account in
/// `operator:<account>`.
pub fn operator_account(outcome: &Outcome) -> Option<&str> {
    outcome.answered_by.strip_prefix(OPERATOR_PREFIX)
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
        if outcome.reply != crate::dialect_reply(request, outcome) {
            return Err("its reply does not match its answers".into());
        }
        Ok(())
    }
}

#[cfg(feature = "validate")]
pub use with_request::verify_outcome_for;
