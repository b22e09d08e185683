//! What a policy says about one request: the verdict of the first rule that matches it.

use std::time::Duration;

use serde::{Deserialize, Serialize, Serializer};

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
    pub after: Option<After>,
    /// The escalation steps, in order of `after`; empty unless `after.then` is `Escalate`.
    pub escalate: Vec<Step>,
    pub notify: Loudness,
    /// Whether a notification bubble may carry answer buttons.
    pub buttons: bool,
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
            after: None,
            escalate: Vec::new(),
            notify: Loudness::Normal,
            buttons: true,
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
            parts.push("answers with defaults at expiry".to_owned());
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
        format!("rule {}: {}", self.rule, parts.join("; "))
    }
}

/// A duration as people write it in the policy file ("10m", "1h 30m").
fn human_duration<S: Serializer>(duration: &Duration, serializer: S) -> Result<S::Ok, S::Error> {
    serializer.collect_str(&humantime::format_duration(*duration))
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
            "rule lenient: honours autonomous mode; answers with defaults at expiry; \
             notifies silently, with buttons"
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
