//! What happens without the operator: autonomous mode and expiry. Pure decisions; the engine
//! carries them out. A timeout is never reported as a refusal, and a required question without
//! a default always reaches a person unless time runs out.

use chrono::{DateTime, Utc};
use inbox_protocol::{fill_defaults, Mode, Outcome, OutcomeStatus, Request, Surface};

// The policies' names in `answered_by`, defined by the protocol (a dialect's reply depends on
// who decided).
pub use inbox_protocol::{
    BY_AUTONOMOUS as AUTONOMOUS, BY_EXPIRY as EXPIRY, BY_VALIDATION as VALIDATION,
};

/// The outcome autonomous mode gives at once, if it may: only when every required question
/// has a default. `placed_at`: when the request was placed, for the decision time.
pub fn autonomous(
    request: &Request,
    id: &str,
    instance: &str,
    now: DateTime<Utc>,
    placed_at: DateTime<Utc>,
) -> Option<Outcome> {
    if request.mode != Mode::Autonomous {
        return None;
    }
    let filled = fill_defaults(request);
    filled.missing_required.is_empty().then(|| {
        Outcome::new(id, OutcomeStatus::Defaulted, AUTONOMOUS, instance, now)
            .with_answers(filled.set)
            .with_request_sha256(Some(request.sha256.clone()))
            .with_decision(Surface::Policy, placed_at)
            // Last: the dialect's own answer shape is built from everything above.
            .with_reply(request)
    })
}

/// The outcome of a request whose time ran out: `defaulted` if defaults answer every required
/// question, else `expired` with what defaults could fill. `placed_at` as for [`autonomous`].
pub fn expire(
    request: &Request,
    id: &str,
    instance: &str,
    now: DateTime<Utc>,
    placed_at: DateTime<Utc>,
) -> Outcome {
    let filled = fill_defaults(request);
    let (status, reason) = if filled.missing_required.is_empty() {
        (
            OutcomeStatus::Defaulted,
            "the request expired; its defaults answered it".to_owned(),
        )
    } else {
        (
            OutcomeStatus::Expired,
            format!(
                "the request expired before the operator answered; no default for: {}",
                filled.missing_required.join(", ")
            ),
        )
    };
    Outcome::new(id, status, EXPIRY, instance, now)
        .with_answers(filled.set)
        .with_reason(reason)
        .with_request_sha256(Some(request.sha256.clone()))
        .with_decision(Surface::Policy, placed_at)
        .with_reply(request)
}

#[cfg(test)]
mod tests {
    use super::*;
    use inbox_protocol::parse_request;

    fn request(body: &str) -> Request {
        parse_request(body.as_bytes(), Some("r")).unwrap()
    }

    #[test]
    fn autonomous_answers_only_when_every_required_question_has_a_default() {
        let now = Utc::now();
        let full = request(
            r#"{"mode": "autonomous", "questions": [
            {"id": "a", "question": "A?", "type": "confirm", "default": true},
            {"id": "b", "question": "B?", "type": "text", "required": false}]}"#,
        );
        let outcome = autonomous(&full, "r", "h/i", now, now).unwrap();
        assert_eq!(outcome.status, OutcomeStatus::Defaulted);
        assert_eq!(outcome.answered_by, AUTONOMOUS);
        assert_eq!(outcome.decided_by, Some(inbox_protocol::DecidedBy::Policy));
        assert_eq!(outcome.rule.as_deref(), Some(AUTONOMOUS));
        assert_eq!(outcome.surface, Some(Surface::Policy));
        assert_eq!(outcome.defaulted, vec!["a".to_owned()]);

        let blocked = request(
            r#"{"mode": "autonomous", "questions": [
            {"id": "a", "question": "A?", "type": "confirm"}]}"#,
        );
        assert!(autonomous(&blocked, "r", "h/i", now, now).is_none());
        let interactive =
            request(r#"[{"id": "a", "question": "A?", "type": "confirm", "default": true}]"#);
        assert!(autonomous(&interactive, "r", "h/i", now, now).is_none());
    }

    #[test]
    fn expiry_defaults_or_expires() {
        let now = Utc::now();
        let with_default =
            request(r#"[{"id": "a", "question": "A?", "type": "confirm", "default": false}]"#);
        assert_eq!(
            expire(&with_default, "r", "h/i", now, now).status,
            OutcomeStatus::Defaulted
        );
        let without = request(r#"[{"id": "a", "question": "A?", "type": "confirm"}]"#);
        let outcome = expire(&without, "r", "h/i", now, now);
        assert_eq!(outcome.status, OutcomeStatus::Expired);
        assert_eq!(outcome.rule.as_deref(), Some(EXPIRY));
        assert_eq!(outcome.surface, Some(Surface::Policy));
        assert!(outcome.reason.unwrap().contains("no default for: a"));
    }
}
