//! The outcome file: exactly one per request, the asker's answer.

use std::collections::BTreeMap;

use chrono::{DateTime, Utc};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::problem::Problem;

/// The protocol version written into every outcome.
pub const PROTOCOL_VERSION: u32 = 1;

/// `answered_by` of outcomes that autonomous mode decides.
pub const BY_AUTONOMOUS: &str = "policy:autonomous";
/// `answered_by` of outcomes that expiry decides: nobody answered in time.
pub const BY_EXPIRY: &str = "policy:expiry";
/// `answered_by` of `rejected` outcomes: the request failed validation.
pub const BY_VALIDATION: &str = "policy:validation";

/// How a request was settled.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub enum OutcomeStatus {
    /// The operator answered.
    Answered,
    /// Defaults answered, by policy (autonomous mode, expiry) or for skipped questions only.
    Defaulted,
    /// The operator refused, with a reason.
    Declined,
    /// Time ran out and defaults could not answer every required question.
    Expired,
    /// The request file was invalid; `errors` says why.
    Rejected,
}

/// `answered_by` of an outcome a person decided: `operator:<account>`.
pub const OPERATOR_PREFIX: &str = "operator:";
/// `answered_by` of an outcome a policy decided: `policy:<name>`.
pub const POLICY_PREFIX: &str = "policy:";

/// Who an `answered_by` names: `operator:<account>` a person, `policy:<name>` a policy.
pub(crate) fn decider_of(answered_by: &str) -> Option<DecidedBy> {
    let named = |prefix: &str| {
        answered_by
            .strip_prefix(prefix)
            .is_some_and(|name| !name.is_empty())
    };
    if named(OPERATOR_PREFIX) {
        Some(DecidedBy::Person)
    } else if named(POLICY_PREFIX) {
        Some(DecidedBy::Policy)
    } else {
        None
    }
}

impl OutcomeStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            OutcomeStatus::Answered => "answered",
            OutcomeStatus::Defaulted => "defaulted",
            OutcomeStatus::Declined => "declined",
            OutcomeStatus::Expired => "expired",
            OutcomeStatus::Rejected => "rejected",
        }
    }

    pub fn parse(text: &str) -> Option<OutcomeStatus> {
        [
            Self::Answered,
            Self::Defaulted,
            Self::Declined,
            Self::Expired,
            Self::Rejected,
        ]
        .into_iter()
        .find(|s| s.as_str() == text)
    }
}

impl std::fmt::Display for OutcomeStatus {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Who settled a request: a person, or a policy acting without one.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum DecidedBy {
    /// An operator answered or declined (`answered_by` is `operator:<account>`).
    Person,
    /// A policy settled it: autonomous mode, expiry, validation, later an operator's rule
    /// (`answered_by` is `policy:<name>`).
    Policy,
}

/// What set off a policy's decision.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Trigger {
    /// The request asked for autonomous mode and a rule honoured it.
    Autonomous,
    /// The request's own expiry passed.
    Expiry,
    /// A rule's delay (`after`) passed.
    Delay,
}

/// Where a decision was made: the front end a person used, or `policy` for the automatic
/// ones. New surfaces may appear; readers should treat an unknown one as "elsewhere".
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Surface {
    /// The desktop app's window.
    Window,
    /// A button in a desktop notification.
    Bubble,
    /// The command line (`answer-inbox answer`).
    Cli,
    /// No person: a policy decided.
    Policy,
    /// A browser on a paired device (`answer-inbox serve`); `device` names it.
    Web,
    /// An answer button of a push notification on a phone (ntfy), through a one-time URL.
    Push,
}

impl Surface {
    pub fn as_str(self) -> &'static str {
        match self {
            Surface::Window => "window",
            Surface::Bubble => "bubble",
            Surface::Cli => "cli",
            Surface::Policy => "policy",
            Surface::Web => "web",
            Surface::Push => "push",
        }
    }
}

impl std::fmt::Display for Surface {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Where an answer came from: the surface and, for a paired device, the name the operator
/// gave it. Every surface but the web has no device, so a bare [`Surface`] converts.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Via {
    pub surface: Surface,
    pub device: Option<String>,
}

impl Via {
    /// A paired device's browser.
    pub fn device(name: impl Into<String>) -> Via {
        Via {
            surface: Surface::Web,
            device: Some(name.into()),
        }
    }
}

impl From<Surface> for Via {
    fn from(surface: Surface) -> Via {
        Via {
            surface,
            device: None,
        }
    }
}

/// Checked answers, ready for an outcome (`inbox_protocol::check_answers` makes them).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct AnswerSet {
    pub answers: BTreeMap<String, Value>,
    /// Question ids whose value is operator fill-in text rather than a choice.
    pub custom: Vec<String>,
    /// Question ids whose value was taken from the question's default.
    pub defaulted: Vec<String>,
}

/// One approval an outcome stands on, as the outcome lists it; the approval itself is a
/// file of its own, `approvals/<id>+<account>.json`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct ApprovalRef {
    /// `operator:<account>`.
    pub by: String,
    pub at: DateTime<Utc>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub surface: Option<Surface>,
}

/// An outcome file.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[schemars(title = "Answer Inbox outcome")]
pub struct Outcome {
    /// Protocol version, 1.
    pub inbox: u32,
    /// The request's id.
    pub id: String,
    pub status: OutcomeStatus,
    /// Question id to value: bool for confirm/yes_no, string for choice/single_choice and
    /// text/free_text, array of strings for multiChoice/multi_choice.
    #[serde(default)]
    pub answers: BTreeMap<String, Value>,
    /// Question ids whose value is the operator's fill-in text, not one of the options.
    #[serde(default)]
    pub custom: Vec<String>,
    /// Question ids whose value came from the question's default.
    #[serde(default)]
    pub defaulted: Vec<String>,
    /// Operator notes per question id.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub notes: Option<BTreeMap<String, String>>,
    /// Why the request was declined or expired.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// Why the request was rejected.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub errors: Option<Vec<Problem>>,
    /// `operator:<name>` or `policy:<name>`.
    pub answered_by: String,
    /// When the outcome was decided (RFC 3339).
    pub answered_at: DateTime<Utc>,
    /// Whether a person or a policy decided. Absent in outcomes written before it existed:
    /// then `answered_by`'s prefix says (see [`Outcome::decider`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub decided_by: Option<DecidedBy>,
    /// For a policy's decision, the policy or rule that made it, as in `answered_by`
    /// (`policy:rule:<name>` for an operator's rule; `policy:autonomous`, `policy:expiry`
    /// from inboxes before operator rules; `policy:validation`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rule: Option<String>,
    /// For a policy's decision, what set it off: the request's own autonomous mode, its
    /// expiry, or a rule's delay (`after`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trigger: Option<Trigger>,
    /// Where the decision was made: `window`, `bubble`, `cli`, `web`, `push` or `policy`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub surface: Option<Surface>,
    /// For surface `web`: the name of the paired device the operator answered from.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub device: Option<String>,
    /// Milliseconds from the request's placement to the decision.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub decision_ms: Option<u64>,
    /// SHA-256 of the request file the outcome answers, when it could be read.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub request_sha256: Option<String>,
    /// Which inbox wrote it: `<host>/<instance id>`.
    pub instance: String,
    /// For a request whose rule needs several approvals (`approvals = N`): every approval
    /// the answer stands on, one per account, each an approval file of its own
    /// (`approvals/<id>+<account>.json`) that readers check.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub approvals: Option<Vec<ApprovalRef>>,
    /// The person who answered is not among the rule's assignees and took the request
    /// over (only where the rule says `takeover = true`).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub taken_over: bool,
    /// For requests written in another system's dialect (MCP elicitation, AskUserQuestion,
    /// LangGraph HumanInterrupt, LangChain HITLRequest): the outcome in that dialect's own answer shape, ready to
    /// hand back to the agent. Absent for the inbox's own dialects and for rejected requests.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reply: Option<Value>,
}

impl Outcome {
    /// A bare outcome; add answers, a reason or errors with the `with_*` methods.
    pub fn new(
        id: impl Into<String>,
        status: OutcomeStatus,
        answered_by: impl Into<String>,
        instance: impl Into<String>,
        answered_at: DateTime<Utc>,
    ) -> Outcome {
        Outcome {
            inbox: PROTOCOL_VERSION,
            id: id.into(),
            status,
            answers: BTreeMap::new(),
            custom: Vec::new(),
            defaulted: Vec::new(),
            notes: None,
            reason: None,
            errors: None,
            answered_by: answered_by.into(),
            answered_at,
            decided_by: None,
            rule: None,
            trigger: None,
            surface: None,
            device: None,
            decision_ms: None,
            request_sha256: None,
            instance: instance.into(),
            approvals: None,
            taken_over: false,
            reply: None,
        }
    }

    pub fn with_answers(mut self, set: AnswerSet) -> Outcome {
        self.answers = set.answers;
        self.custom = set.custom;
        self.defaulted = set.defaulted;
        self
    }

    pub fn with_reason(mut self, reason: impl Into<String>) -> Outcome {
        self.reason = Some(reason.into());
        self
    }

    pub fn with_errors(mut self, errors: Vec<Problem>) -> Outcome {
        self.errors = Some(errors);
        self
    }

    /// Records how the decision was made: where (`surface`; [`Surface::Policy`] for a
    /// policy), by whom (from `answered_by`'s prefix), which rule for a policy, and how long
    /// after the request was placed (`placed_at`). Call it once `answered_by` and
    /// `answered_at` are final.
    pub fn with_decision(mut self, via: impl Into<Via>, placed_at: DateTime<Utc>) -> Outcome {
        let via = via.into();
        let decided_by = self.decider();
        self.rule = (decided_by == Some(DecidedBy::Policy)).then(|| self.answered_by.clone());
        self.decided_by = decided_by;
        self.surface = Some(via.surface);
        self.device = via.device;
        // A file's mtime can be a little ahead of this clock: never a negative duration.
        let elapsed = (self.answered_at - placed_at).num_milliseconds().max(0);
        self.decision_ms = u64::try_from(elapsed).ok();
        self
    }

    /// Who decided: `decided_by` when the outcome says, else what `answered_by`'s prefix
    /// says (older outcomes); `None` when neither does.
    pub fn decider(&self) -> Option<DecidedBy> {
        self.decided_by.or_else(|| decider_of(&self.answered_by))
    }

    /// Records what set off a policy's decision.
    pub fn with_trigger(mut self, trigger: Trigger) -> Outcome {
        self.trigger = Some(trigger);
        self
    }

    pub fn with_request_sha256(mut self, sha256: Option<String>) -> Outcome {
        self.request_sha256 = sha256;
        self
    }

    /// The file's bytes: pretty JSON with a final newline, readable by people and `jq`.
    pub fn to_file_bytes(&self) -> Vec<u8> {
        crate::duplicate_keys::json_file_bytes(self)
    }

    /// Reads an outcome file written by any inbox (a key given twice is refused).
    pub fn from_file_bytes(bytes: &[u8]) -> Result<Outcome, String> {
        let outcome: Outcome = crate::duplicate_keys::read_json_file(bytes, "outcome")?;
        if outcome.inbox != PROTOCOL_VERSION {
            return Err(format!("unsupported outcome version {}", outcome.inbox));
        }
        Ok(outcome)
    }
}

#[cfg(test)]
mod duplicate_key_tests {
    use super::*;

    /// Two answers to one question: serde_json keeps the last, a reader that keeps the first
    /// would act on an answer nobody chose; refused, as in a request.
    #[test]
    fn an_outcome_with_a_key_given_twice_is_refused() {
        let text = r#"{"inbox":1,"id":"d","status":"defaulted","answers":{"pick":"b","pick":"a"},
            "custom":[],"defaulted":["pick"],"answered_by":"policy:rule:x",
            "answered_at":"2026-12-05T10:00:00Z","instance":"x/y"}"#;
        let error = Outcome::from_file_bytes(text.as_bytes()).unwrap_err();
        assert!(error.contains("/answers/pick"), "{error}");
        assert!(error.contains("more than once"), "{error}");
        let once = text.replace(r#""pick":"b","#, "");
        assert!(Outcome::from_file_bytes(once.as_bytes()).is_ok());
        // An approval file is read the same way.
        let approval = r#"{"inbox":1,"id":"d","request_sha256":"x","approved_by":"operator:a",
            "approved_at":"2026-12-05T10:00:00Z","answers":{"go":true,"go":false},
            "instance":"x/y"}"#;
        let error = crate::approval::Approval::from_file_bytes(approval.as_bytes()).unwrap_err();
        assert!(error.contains("/answers/go"), "{error}");
    }
}
