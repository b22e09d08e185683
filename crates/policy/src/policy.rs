//! The operator's policy: rules in order, quiet hours, and the digest of the text they came
//! from.

use std::fmt;
use std::path::{Path, PathBuf};

use chrono::{DateTime, NaiveTime, Utc};

use crate::matching::{Conditions, Facts};
use crate::parse::{parse, Rule};
use crate::problem::PolicyProblem;
use crate::quiet::QuietHours;
use crate::verdict::{Autonomy, Loudness, OnExpiry, StepAction, Verdict};

/// The shipped default policy, with comments explaining why each rule is safe.
pub const SHIPPED: &str = include_str!("../shipped-policy.toml");

/// The name of the one rule of [`Policy::hold_everything`].
pub const HOLD_EVERYTHING: &str = "hold-everything";

/// The operator's rules about requests. The first rule that matches a request decides its
/// verdict; when none does, [`Verdict::no_rule_matched`] stands.
#[derive(Debug, Clone)]
pub struct Policy {
    rules: Vec<Rule>,
    quiet_hours: Option<QuietHours>,
    digest: String,
    /// What `policy check` should say without refusing the file: assignees that do not
    /// exist on this machine.
    warnings: Vec<PolicyProblem>,
}

/// Why a policy file could not be loaded.
#[derive(Debug, thiserror::Error)]
pub enum LoadError {
    #[error("cannot read policy file {}: {source}", path.display())]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    /// The file is not one the operator alone could have written (another account owns
    /// it or a link to it, others may write to it), or not a plain text file of sensible
    /// size: it is not read at all.
    #[error("policy file {} is not used: {reason}", path.display())]
    Untrusted { path: PathBuf, reason: String },
    #[error("policy file {} is not valid: {}", path.display(), Problems(problems))]
    Invalid {
        path: PathBuf,
        problems: Vec<PolicyProblem>,
    },
}

/// Every problem on one line, so a log line tells the whole story.
struct Problems<'a>(&'a [PolicyProblem]);

impl fmt::Display for Problems<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (index, problem) in self.0.iter().enumerate() {
            if index > 0 {
                f.write_str("; ")?;
            }
            write!(f, "{problem}")?;
        }
        Ok(())
    }
}

impl Policy {
    /// Parses policy text, reporting every problem found (a TOML syntax error or an
    /// unknown key stops the parse, so it is then the only one).
    pub fn parse(text: &str) -> Result<Policy, Vec<PolicyProblem>> {
        Policy::parse_with(text, &crate::team::System)
    }

    /// [`Policy::parse`], with assignees looked up in `directory` instead of the system's
    /// account database.
    pub fn parse_with(
        text: &str,
        directory: &dyn crate::team::Directory,
    ) -> Result<Policy, Vec<PolicyProblem>> {
        let parsed = parse(text, directory)?;
        Ok(Policy {
            rules: parsed.rules,
            quiet_hours: parsed.quiet_hours,
            digest: inbox_protocol::sha256_hex(text.as_bytes()),
            warnings: parsed.warnings,
        })
    }

    /// What is worth knowing but not wrong: assignees that do not exist on this machine
    /// (their rule's `if_unassigned` applies while none of them does).
    pub fn warnings(&self) -> &[PolicyProblem] {
        &self.warnings
    }

    /// The shipped default policy ([`SHIPPED`]).
    pub fn shipped() -> Policy {
        Policy::parse(SHIPPED).expect("the shipped policy is valid (tested)")
    }

    /// What stands when the operator's file is broken and no good one was loaded before:
    /// every request waits for a person (one rule "hold-everything": autonomous hold,
    /// never_auto, on_expiry expire, notify normal, buttons true).
    pub fn hold_everything() -> Policy {
        let verdict = Verdict {
            rule: HOLD_EVERYTHING.to_owned(),
            autonomous: Autonomy::Hold,
            never_auto: true,
            on_expiry: OnExpiry::Expire,
            min_timeout: None,
            expiry_refused: None,
            after: None,
            escalate: Vec::new(),
            notify: Loudness::Normal,
            buttons: true,
            assign: crate::team::Assign::default(),
            takeover: false,
            approvals: 1,
            if_unassigned: crate::team::IfUnassigned::Expire,
        };
        Policy {
            rules: vec![Rule {
                conditions: Conditions::default(),
                verdict,
            }],
            quiet_hours: None,
            digest: String::new(),
            warnings: Vec::new(),
        }
    }

    /// Reads and parses the policy file at `path`, if it is the operator's own, in folders
    /// only the operator or root may change (see
    /// `trusted_read.rs`).
    pub fn load(path: &Path) -> Result<Policy, LoadError> {
        let policy = parse_file(path, crate::trusted_read::read_own(path))?;
        // Its programs run as the operator: held to the file's own rule.
        if let Some(reason) = policy.untrusted_program() {
            return Err(LoadError::Untrusted {
                path: path.to_owned(),
                reason: format!("an escalation step's {reason}"),
            });
        }
        Ok(policy)
    }

    /// Reads and parses a team's policy file (docs/TEAMS.md): held to the rule of the
    /// operator's own file, with the spool's owner (`owner`, a uid) in the operator's
    /// place, so that every member's inbox judges by the one file only that owner (or root)
    /// could have written. It may not run programs: a step's program would run as every
    /// member, from a file only one of them wrote.
    pub fn load_team(path: &Path, owner: u32) -> Result<Policy, LoadError> {
        let policy = parse_file(path, crate::trusted_read::read_trusted_by(path, owner))?;
        let runs = policy
            .rules
            .iter()
            .flat_map(|rule| &rule.verdict.escalate)
            .any(|step| matches!(step.action, StepAction::Run(_)));
        if runs {
            return Err(LoadError::Untrusted {
                path: path.to_owned(),
                reason: "a team's policy may not run programs (an escalation step's run would \
                         run as every member, from a file one account wrote); use notify steps"
                    .to_owned(),
            });
        }
        Ok(policy)
    }

    /// Why a program an escalation step runs is not the operator's alone to run
    /// ([`crate::check_program`]), for the first such step; `None` when every one is.
    pub fn untrusted_program(&self) -> Option<String> {
        self.rules
            .iter()
            .flat_map(|rule| &rule.verdict.escalate)
            .find_map(|step| match &step.action {
                StepAction::Run(argv) => crate::check_program(&argv[0]).err(),
                StepAction::Notify(_) => None,
            })
    }

    /// The verdict about a request placed now (`policy explain`): see
    /// [`Policy::judge_placed`].
    pub fn judge(&self, facts: &Facts<'_>) -> Verdict {
        self.judge_placed(facts, Utc::now())
    }

    /// The verdict of the first rule that matches a request placed at `placed_at`, else
    /// [`Verdict::no_rule_matched`]; when the rule's `on_expiry = "default"` does not reach
    /// this request ([`Verdict::expiry_refusal`]: an agent's, or one that allowed less than
    /// `min_timeout`), the verdict's `on_expiry` is `Expire` and `expiry_refused` says why,
    /// so whoever reads the verdict (the engine, `policy explain`) sees what will happen.
    pub fn judge_placed(&self, facts: &Facts<'_>, placed_at: DateTime<Utc>) -> Verdict {
        let mut verdict = self
            .rules
            .iter()
            .find(|rule| rule.conditions.hold_for(facts))
            .map_or_else(Verdict::no_rule_matched, |rule| rule.verdict.clone());
        if let Some(refused) = verdict.expiry_refusal(facts.request, placed_at) {
            verdict.on_expiry = OnExpiry::Expire;
            verdict.expiry_refused = Some(refused);
        }
        verdict
    }

    /// Whether `at` (local wall-clock time) is within quiet hours.
    pub fn is_quiet(&self, at: NaiveTime) -> bool {
        self.quiet_hours.is_some_and(|hours| hours.contains(at))
    }

    /// How loudly to notify about a request with this verdict at `at` (local time): within
    /// quiet hours only critical requests notify, the rest are silent.
    pub fn loudness_at(&self, verdict: &Verdict, at: NaiveTime) -> Loudness {
        if verdict.notify != Loudness::Critical && self.is_quiet(at) {
            Loudness::Silent
        } else {
            verdict.notify
        }
    }

    /// The quiet hours, if the file sets them.
    pub fn quiet_hours(&self) -> Option<QuietHours> {
        self.quiet_hours
    }

    /// The rules' names, in order.
    pub fn rule_names(&self) -> Vec<&str> {
        self.rules
            .iter()
            .map(|rule| rule.verdict.rule.as_str())
            .collect()
    }

    /// Each rule's verdict, in order (for printing the policy: see [`Verdict::describe`]).
    pub fn verdicts(&self) -> Vec<&Verdict> {
        self.rules.iter().map(|rule| &rule.verdict).collect()
    }

    /// SHA-256 hex of the text it was parsed from ("" for hold_everything), so a change is
    /// noticed and logged.
    pub fn digest(&self) -> &str {
        &self.digest
    }
}

/// The policy in the file at `path`, from its text as `trusted_read` read it (or why not).
fn parse_file(
    path: &Path,
    read: Result<String, crate::trusted_read::ReadRefusal>,
) -> Result<Policy, LoadError> {
    let text = read.map_err(|refusal| match refusal {
        crate::trusted_read::ReadRefusal::Io(source) => LoadError::Io {
            path: path.to_owned(),
            source,
        },
        crate::trusted_read::ReadRefusal::Untrusted(reason) => LoadError::Untrusted {
            path: path.to_owned(),
            reason,
        },
    })?;
    Policy::parse(&text).map_err(|problems| LoadError::Invalid {
        path: path.to_owned(),
        problems,
    })
}

/// Every problem with policy text; empty when it is fine.
pub fn problems_of(text: &str) -> Vec<PolicyProblem> {
    Policy::parse(text).err().unwrap_or_default()
}
