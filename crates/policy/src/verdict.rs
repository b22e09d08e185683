//! What a policy says about one request: the verdict of the first rule that matches it.

use std::time::Duration;

use chrono::{DateTime, Utc};
use inbox_protocol::Request;
use serde::{Deserialize, Serialize, Serializer};

use crate::agents::agent_marker;
use crate::team::{Assign, IfUnassigned};

/// The name of the verdict that stands when no rule matches.
pub const NO_RULE_MATCHED: &str = "no-rule-matched";

/// Whether a request's own `mode = "autonomous"` is honoured.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Autonomy {
    Honour,
    /// The safe default: the request waits for a person.
    Hold,
}

/// What happens when a request's own expiry passes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum OnExpiry {
    /// Its defaults may answer it.
    Default,
    /// The safe default: it expires without answers.
    Expire,
}

/// What happens once a rule's `after` delay has passed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Then {
    /// Settle with the request's defaults.
    Default,
    /// Settle as expired, without answers.
    Expire,
    /// Run the escalation steps.
    Escalate,
}

/// How loudly to tell the operator.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Loudness {
    Silent,
    Normal,
    Critical,
}

/// A delay counted from when the request was placed, and what happens then.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct After {
    #[serde(serialize_with = "human_duration")]
    pub delay: Duration,
    pub then: Then,
}

/// One escalation step: `after` is counted from the start of escalation.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Step {
    #[serde(serialize_with = "human_duration")]
    pub after: Duration,
    pub action: StepAction,
}

/// What an escalation step does.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum StepAction {
    /// Notify again, at this loudness.
    Notify(Loudness),
    /// Run this program (argv, non-empty); the request JSON goes to its stdin.
    Run(Vec<String>),
}

/// What the policy says about one request.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Verdict {
    /// The rule that matched, or [`NO_RULE_MATCHED`].
    pub rule: String,
    pub autonomous: Autonomy,
    /// Nothing automatic settles the request with answers; overrides `autonomous`,
    /// `on_expiry` and `after`'s `then = default`.
    pub never_auto: bool,
    pub on_expiry: OnExpiry,
    /// With `on_expiry` default: the shortest timeout a request must have allowed for its
    /// defaults to answer it at expiry. Without it, an agent's request never defaults at
    /// expiry (`crate::agents`).
    #[serde(
        serialize_with = "human_duration_opt",
        skip_serializing_if = "Option::is_none"
    )]
    pub min_timeout: Option<Duration>,
    /// Set on the verdict about one request when the rule's `on_expiry = "default"` does
    /// not reach it (its `on_expiry` is then `Expire`): why, in words that follow "rule
    /// <name>: ". See [`Verdict::expiry_refusal`].
    #[serde(skip_serializing_if = "Option::is_none")]
    pub expiry_refused: Option<String>,
    pub after: Option<After>,
    /// The escalation steps, in order of `after`; empty unless `after.then` is `Escalate`.
    pub escalate: Vec<Step>,
    pub notify: Loudness,
    /// Whether a notification bubble may carry answer buttons.
    pub buttons: bool,
    /// Who answers its requests (accounts, `@group`s); empty: any member, as before.
    #[serde(skip_serializing_if = "Assign::is_empty")]
    pub assign: Assign,
    /// Whether a member who is not an assignee may take a request over (recorded).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub takeover: bool,
    /// How many distinct assignees must approve the same version with the same answers.
    #[serde(skip_serializing_if = "is_one")]
    pub approvals: u32,
    /// What happens when none of its assignees exists here.
    #[serde(skip_serializing_if = "is_expire")]
    pub if_unassigned: IfUnassigned,
}

fn is_one(n: &u32) -> bool {
    *n == 1
}

fn is_expire(choice: &IfUnassigned) -> bool {
    *choice == IfUnassigned::Expire
}

impl Verdict {
    /// The verdict when no rule matches: every safe default.
    pub fn no_rule_matched() -> Verdict {
        Verdict::safe_defaults(NO_RULE_MATCHED)
    }

    /// The verdict of a rule that states nothing: the safe defaults, under its name.
    pub(crate) fn safe_defaults(rule: &str) -> Verdict {
        Verdict {
            rule: rule.to_owned(),
            autonomous: Autonomy::Hold,
            never_auto: false,
            on_expiry: OnExpiry::Expire,
            min_timeout: None,
            expiry_refused: None,
            after: None,
            escalate: Vec::new(),
            notify: Loudness::Normal,
            buttons: true,
            assign: Assign::default(),
            takeover: false,
            approvals: 1,
            if_unassigned: IfUnassigned::Expire,
        }
    }

    /// Why this rule's `on_expiry = "default"` must not answer `request` (placed at
    /// `placed_at`) with its defaults, or `None` when it may or the rule does not default
    /// at expiry anyway. The asker chose its own timeout, so that timeout is consent only
    /// where the operator said how short it may be: a request that allowed less than the
    /// rule's `min_timeout` is refused, and so is an agent's request under a rule that
    /// names none (`crate::agents`).
    pub fn expiry_refusal(&self, request: &Request, placed_at: DateTime<Utc>) -> Option<String> {
        if !self.expiry_may_default() {
            return None;
        }
        let deadline = request.deadline(placed_at)?;
        // Whole seconds: the protocol's timeouts are whole seconds, and so is what is said.
        let allowed = Duration::from_secs(
            (deadline - placed_at)
                .to_std()
                .unwrap_or_default()
                .as_secs(),
        );
        match self.min_timeout {
            Some(min) if allowed < min => Some(format!(
                "its defaults do not answer it at expiry: it allowed only {}, less than the \
                 rule's min_timeout of {}",
                humantime::format_duration(allowed),
                humantime::format_duration(min)
            )),
            Some(_) => None,
            None => agent_marker(request).map(|marker| {
                format!(
                    "its defaults do not answer it at expiry: it is an agent's request \
                     ({marker}) and the rule names no min_timeout (an agent's own timeout \
                     never makes its own defaults an answer)"
                )
            }),
        }
    }

    /// The answered_by of an automatic settlement this verdict made: "policy:rule:<name>".
    pub fn answered_by(&self) -> String {
        format!("policy:rule:{}", self.rule)
    }

    /// Whether the request's own autonomous mode settles it now (honoured and not
    /// never_auto). (The engine also checks that every required question has a default.)
    pub fn honours_autonomy(&self) -> bool {
        self.autonomous == Autonomy::Honour && !self.never_auto
    }

    /// Whether expiry may answer with defaults (on_expiry default and not never_auto).
    pub fn expiry_may_default(&self) -> bool {
        self.on_expiry == OnExpiry::Default && !self.never_auto
    }

    /// One line for people, describing what the verdict does in effect: "rule
    /// deploys-need-a-person: holds autonomous mode; escalates after 10m; notifies
    /// critically, no buttons". Expiry and never_auto are named only when they differ from
    /// the safe defaults' wording, so the common case stays short.
    pub fn describe(&self) -> String {
        let mut parts = vec![if self.honours_autonomy() {
            "honours autonomous mode".to_owned()
        } else {
            "holds autonomous mode".to_owned()
        }];
        if self.never_auto {
            parts.push("never settles with answers automatically".to_owned());
        }
        if self.expiry_may_default() {
            parts.push(match self.min_timeout {
                Some(min) => format!(
                    "answers with defaults at expiry if it allowed at least {}",
                    humantime::format_duration(min)
                ),
                None => "answers with defaults at expiry (not agents' requests)".to_owned(),
            });
        }
        if let Some(refused) = &self.expiry_refused {
            parts.push(refused.clone());
        }
        if let Some(after) = &self.after {
            let verb = match after.then {
                Then::Default => "answers with defaults",
                Then::Expire => "expires",
                Then::Escalate => "escalates",
            };
            parts.push(format!(
                "{verb} after {}",
                humantime::format_duration(after.delay)
            ));
        }
        let loudness = match self.notify {
            Loudness::Silent => "notifies silently",
            Loudness::Normal => "notifies normally",
            Loudness::Critical => "notifies critically",
        };
        let buttons = if self.buttons {
            "with buttons"
        } else {
            "no buttons"
        };
        parts.push(format!("{loudness}, {buttons}"));
        if !self.assign.is_empty() {
            let mut team = format!("assigned to {}", self.assign.describe());
            if self.approvals > 1 {
                team.push_str(&format!(", needs {} approvals", self.approvals));
            }
            if self.takeover {
                team.push_str(", others may take over");
            }
            parts.push(team);
        }
        format!("rule {}: {}", self.rule, parts.join("; "))
    }
}

/// A duration as people write it in the policy file ("10m", "1h 30m").
fn human_duration<S: Serializer>(duration: &Duration, serializer: S) -> Result<S::Ok, S::Error> {
    serializer.collect_str(&humantime::format_duration(*duration))
}

fn human_duration_opt<S: Serializer>(
    duration: &Option<Duration>,
    serializer: S,
) -> Result<S::Ok, S::Error> {
    match duration {
        Some(duration) => human_duration(duration, serializer),
        None => serializer.serialize_none(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn no_rule_matched_is_every_safe_default() {
        let verdict = Verdict::no_rule_matched();
        assert_eq!(verdict.rule, "no-rule-matched");
        assert_eq!(verdict.autonomous, Autonomy::Hold);
        assert!(!verdict.never_auto);
        assert_eq!(verdict.on_expiry, OnExpiry::Expire);
        assert_eq!(verdict.after, None);
        assert!(verdict.escalate.is_empty());
        assert_eq!(verdict.notify, Loudness::Normal);
        assert!(verdict.buttons);
        assert!(!verdict.honours_autonomy());
        assert!(!verdict.expiry_may_default());
        assert_eq!(verdict.answered_by(), "policy:rule:no-rule-matched");
    }

    #[test]
    fn never_auto_overrides_autonomy_and_expiry() {
        let mut verdict = Verdict::safe_defaults("r");
        verdict.autonomous = Autonomy::Honour;
        verdict.on_expiry = OnExpiry::Default;
        assert!(verdict.honours_autonomy());
        assert!(verdict.expiry_may_default());
        verdict.never_auto = true;
        assert!(!verdict.honours_autonomy());
        assert!(!verdict.expiry_may_default());
    }

    #[test]
    fn describe_reads_as_the_contract_shows() {
        let mut verdict = Verdict::safe_defaults("deploys-need-a-person");
        verdict.after = Some(After {
            delay: Duration::from_secs(600),
            then: Then::Escalate,
        });
        verdict.notify = Loudness::Critical;
        verdict.buttons = false;
        assert_eq!(
            verdict.describe(),
            "rule deploys-need-a-person: holds autonomous mode; escalates after 10m; \
             notifies critically, no buttons"
        );

        let mut lenient = Verdict::safe_defaults("lenient");
        lenient.autonomous = Autonomy::Honour;
        lenient.on_expiry = OnExpiry::Default;
        lenient.notify = Loudness::Silent;
        assert_eq!(
            lenient.describe(),
            "rule lenient: honours autonomous mode; answers with defaults at expiry (not \
             agents' requests); notifies silently, with buttons"
        );

        let mut strict = Verdict::safe_defaults("strict");
        strict.autonomous = Autonomy::Honour;
        strict.never_auto = true;
        strict.after = Some(After {
            delay: Duration::from_secs(5400),
            then: Then::Expire,
        });
        assert_eq!(
            strict.describe(),
            "rule strict: holds autonomous mode; never settles with answers automatically; \
             expires after 1h 30m; notifies normally, with buttons"
        );
    }

    #[test]
    fn serializes_durations_as_people_write_them() {
        let mut verdict = Verdict::safe_defaults("r");
        verdict.after = Some(After {
            delay: Duration::from_secs(90),
            then: Then::Escalate,
        });
        verdict.escalate = vec![
            Step {
                after: Duration::ZERO,
                action: StepAction::Notify(Loudness::Critical),
            },
            Step {
                after: Duration::from_secs(1200),
                action: StepAction::Run(vec!["page-me".to_owned()]),
            },
        ];
        let json = serde_json::to_value(&verdict).unwrap();
        assert_eq!(
            json,
            serde_json::json!({
                "rule": "r",
                "autonomous": "hold",
                "never_auto": false,
                "on_expiry": "expire",
                "after": {"delay": "1m 30s", "then": "escalate"},
                "escalate": [
                    {"after": "0s", "action": {"notify": "critical"}},
                    {"after": "20m", "action": {"run": ["page-me"]}}
                ],
                "notify": "normal",
                "buttons": true
            })
        );
    }
}
