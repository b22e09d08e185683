//! From policy text to rules: TOML first (a syntax error or unknown key stops there, as one
//! problem), then the meaning of every rule, collecting every problem found.

use std::collections::HashMap;
use std::ops::Range;
use std::time::Duration;

use inbox_protocol::{Priority, QuestionKind};
use toml::Spanned;

use crate::agents::{AGENT_APPS, AGENT_TOOLS};
use crate::file::{OneOrMany, RawPolicy, RawQuietHours, RawRule, RawStep};
use crate::matching::{Conditions, Globs};
use crate::problem::{line_and_column, PolicyProblem};
use crate::quiet::{parse_time, QuietHours};
use crate::team::{well_formed, Assign, Directory, IfUnassigned};
use crate::verdict::{
    After, Autonomy, Loudness, OnExpiry, Step, StepAction, Then, Verdict, NO_RULE_MATCHED,
};

/// The longest rule name: it is shown in lists and written into outcomes' `answered_by`.
pub const MAX_RULE_NAME_LEN: usize = 64;

/// One rule: when it applies, and what it says then.
#[derive(Debug, Clone)]
pub(crate) struct Rule {
    pub(crate) conditions: Conditions,
    pub(crate) verdict: Verdict,
}

/// A policy file's meaning.
pub(crate) struct Parsed {
    pub(crate) rules: Vec<Rule>,
    pub(crate) quiet_hours: Option<QuietHours>,
    pub(crate) warnings: Vec<PolicyProblem>,
}

pub(crate) fn parse(text: &str, directory: &dyn Directory) -> Result<Parsed, Vec<PolicyProblem>> {
    let raw: RawPolicy = toml::from_str(text).map_err(|err| {
        let problem = match err.span() {
            Some(span) => PolicyProblem::at(text, span.start, err.message().trim()),
            None => PolicyProblem::unplaced(err.message().trim()),
        };
        vec![problem]
    })?;
    let mut checker = Checker {
        text,
        problems: Vec::new(),
        warnings: Vec::new(),
        first_line_of_name: HashMap::new(),
        directory,
    };
    let quiet_hours = raw
        .quiet_hours
        .and_then(|quiet_hours| checker.quiet_hours(quiet_hours));
    let rules: Vec<Rule> = raw
        .rule
        .into_iter()
        .enumerate()
        .filter_map(|(index, rule)| checker.rule(index + 1, rule))
        .collect();
    let mut problems = checker.problems;
    if problems.is_empty() {
        Ok(Parsed {
            rules,
            quiet_hours,
            warnings: checker.warnings,
        })
    } else {
        problems.sort_by_key(|problem| (problem.line, problem.column));
        Err(problems)
    }
}

const PRIORITIES: &[(&str, Priority)] = &[
    ("low", Priority::Low),
    ("normal", Priority::Normal),
    ("high", Priority::High),
    ("critical", Priority::Critical),
];
const KINDS: &[(&str, QuestionKind)] = &[
    ("confirm", QuestionKind::Confirm),
    ("choice", QuestionKind::Choice),
    ("multi_choice", QuestionKind::MultiChoice),
    ("text", QuestionKind::Text),
];
const AUTONOMY: &[(&str, Autonomy)] = &[("honour", Autonomy::Honour), ("hold", Autonomy::Hold)];
const ON_EXPIRY: &[(&str, OnExpiry)] =
    &[("default", OnExpiry::Default), ("expire", OnExpiry::Expire)];
const IF_UNASSIGNED: &[(&str, IfUnassigned)] = &[
    ("escalate", IfUnassigned::Escalate),
    ("expire", IfUnassigned::Expire),
    ("hold", IfUnassigned::Hold),
];
/// More approvals than this is no workflow a spool serves.
const MAX_APPROVALS: i64 = 16;
const THEN: &[(&str, Then)] = &[
    ("default", Then::Default),
    ("expire", Then::Expire),
    ("escalate", Then::Escalate),
];
const LOUDNESS: &[(&str, Loudness)] = &[
    ("silent", Loudness::Silent),
    ("normal", Loudness::Normal),
    ("critical", Loudness::Critical),
];
/// A step re-notifies; doing so silently would be no step at all.
const STEP_LOUDNESS: &[(&str, Loudness)] = &[
    ("normal", Loudness::Normal),
    ("critical", Loudness::Critical),
];

/// Checks the meaning of a parsed file, collecting problems as it goes.
struct Checker<'t> {
    text: &'t str,
    problems: Vec<PolicyProblem>,
    /// Not wrong, but worth saying (assignees unknown here).
    warnings: Vec<PolicyProblem>,
    /// Where assignees are looked up.
    directory: &'t dyn Directory,
    /// Each rule name seen so far, and the line it was first given on.
    first_line_of_name: HashMap<String, usize>,
}

impl Checker<'_> {
    fn problem(&mut self, span: Range<usize>, message: impl Into<String>) {
        self.problems
            .push(PolicyProblem::at(self.text, span.start, message));
    }

    fn line_of(&self, span: &Range<usize>) -> usize {
        line_and_column(self.text, span.start).0
    }

    fn quiet_hours(&mut self, raw: Spanned<RawQuietHours>) -> Option<QuietHours> {
        let span = raw.span();
        let raw = raw.into_inner();
        let from = self.time("quiet_hours.from", &raw.from);
        let to = self.time("quiet_hours.to", &raw.to);
        let (from, to) = (from?, to?);
        if from == to {
            self.problem(
                span,
                format!(
                    "quiet_hours: from and to are both {:?}: give the quiet stretch a length",
                    raw.from.get_ref()
                ),
            );
            return None;
        }
        Some(QuietHours { from, to })
    }

    fn time(&mut self, key: &str, value: &Spanned<String>) -> Option<chrono::NaiveTime> {
        let time = parse_time(value.get_ref());
        if time.is_none() {
            self.problem(
                value.span(),
                format!(
                    "{key} = {:?} is not a time of day like \"22:00\" (24-hour clock, HH:MM)",
                    value.get_ref()
                ),
            );
        }
        time
    }

    /// A rule's meaning, or `None` if anything about it is wrong (its problems recorded).
    fn rule(&mut self, ordinal: usize, raw: Spanned<RawRule>) -> Option<Rule> {
        let problems_before = self.problems.len();
        let span = raw.span();
        let raw = raw.into_inner();
        let name = self.rule_name(&span, raw.name.as_ref());
        let context = match &raw.name {
            Some(name) => format!("rule {:?}", name.get_ref()),
            None => format!("rule #{ordinal}"),
        };

        let conditions = Conditions {
            app: self.globs(&context, "app", raw.app.as_ref()),
            run: self.globs(&context, "run", raw.run.as_ref()),
            project: self.globs(&context, "project", raw.project.as_ref()),
            host: self.globs(&context, "host", raw.host.as_ref()),
            tool: self.globs(&context, "tool", raw.tool.as_ref()),
            account: self.globs(&context, "account", raw.account.as_ref()),
            title: self.globs(&context, "title", raw.title.as_ref()),
            priority: self.enum_list(&context, "priority", raw.priority.as_ref(), PRIORITIES),
            kinds: self.enum_list(&context, "kinds", raw.kinds.as_ref(), KINDS),
        };

        let mut verdict = Verdict::safe_defaults(name.as_deref().unwrap_or(""));
        // A bad value is recorded as a problem and the rest of the rule is still checked.
        if let Some(value) = &raw.autonomous {
            verdict.autonomous = self
                .one_of(&context, "autonomous", value, AUTONOMY)
                .unwrap_or(verdict.autonomous);
        }
        if let Some(value) = &raw.on_expiry {
            verdict.on_expiry = self
                .one_of(&context, "on_expiry", value, ON_EXPIRY)
                .unwrap_or(verdict.on_expiry);
        }
        if let Some(value) = &raw.notify {
            verdict.notify = self
                .one_of(&context, "notify", value, LOUDNESS)
                .unwrap_or(verdict.notify);
        }
        verdict.never_auto = raw.never_auto.as_ref().is_some_and(|v| *v.get_ref());
        verdict.min_timeout = self.min_timeout(&context, &raw, &conditions, &verdict);
        verdict.buttons = raw.buttons.unwrap_or(true);
        verdict.after = self.after(&context, &raw);
        verdict.escalate = self.escalation(&context, &raw, verdict.after.as_ref());
        self.team(&context, &span, &raw, &mut verdict);

        if self.problems.len() > problems_before {
            return None;
        }
        Some(Rule {
            conditions,
            verdict,
        })
    }

    /// `assign`, `takeover`, `approvals` and `if_unassigned` (team.rs). The last three
    /// mean nothing without assignees, so they need `assign`; a rule may not ask for more
    /// approvals than it has assignees (groups expanded), which nobody could ever give; an
    /// assignee unknown here is a warning (the account may be made later), not a problem.
    fn team(&mut self, context: &str, span: &Range<usize>, raw: &RawRule, verdict: &mut Verdict) {
        if let Some(value) = &raw.if_unassigned {
            verdict.if_unassigned = self
                .one_of(context, "if_unassigned", value, IF_UNASSIGNED)
                .unwrap_or(verdict.if_unassigned);
        }
        verdict.takeover = raw.takeover.as_ref().is_some_and(|v| *v.get_ref());
        if let Some(approvals) = &raw.approvals {
            match u32::try_from(*approvals.get_ref()) {
                Ok(n) if (1..=MAX_APPROVALS).contains(&i64::from(n)) => verdict.approvals = n,
                _ => self.problem(
                    approvals.span(),
                    format!(
                        "{context}: approvals = {} must be a whole number from 1 to \
                         {MAX_APPROVALS}",
                        approvals.get_ref()
                    ),
                ),
            }
        }
        let Some(assign) = &raw.assign else {
            let needs: Vec<(&str, Range<usize>)> = [
                raw.takeover.as_ref().map(|v| ("takeover", v.span())),
                raw.approvals.as_ref().map(|v| ("approvals", v.span())),
                raw.if_unassigned
                    .as_ref()
                    .map(|v| ("if_unassigned", v.span())),
            ]
            .into_iter()
            .flatten()
            .collect();
            for (key, at) in needs {
                self.problem(
                    at,
                    format!(
                        "{context}: {key} is about a rule's assignees, and it names none; add \
                         assign = [\"account\", \"@group\"]"
                    ),
                );
            }
            return;
        };
        let Some((at, entries)) = self.non_empty(context, "assign", assign) else {
            return;
        };
        let bad: Vec<&String> = entries.iter().filter(|e| !well_formed(e)).collect();
        for entry in &bad {
            self.problem(
                at.clone(),
                format!(
                    "{context}: assign {entry:?} is neither an account name nor @group \
                     (letters, digits, ., _ and -)"
                ),
            );
        }
        if !bad.is_empty() {
            return;
        }
        verdict.assign = Assign(entries.to_vec());
        let resolved = verdict.assign.resolve(self.directory);
        for unknown in &resolved.unknown {
            let what = match unknown.strip_prefix('@') {
                Some(group) => format!("group {group:?} does not exist or has no members"),
                None => format!("account {unknown:?} does not exist"),
            };
            self.warnings.push(PolicyProblem::at(
                self.text,
                at.start,
                format!(
                    "{context}: assign: {what} on this machine; while no assignee exists, \
                     if_unassigned applies"
                ),
            ));
        }
        let count = resolved.accounts.len();
        // One approval from nobody is if_unassigned's case (warned about above).
        if verdict.approvals > 1 && verdict.approvals as usize > count {
            let place = raw.approvals.as_ref().map_or(span.clone(), Spanned::span);
            self.problem(
                place,
                format!(
                    "{context}: approvals = {} asks for more approvals than the rule has \
                     assignees ({count}: {}), so its requests could never settle; lower \
                     approvals or assign more people",
                    verdict.approvals,
                    if resolved.accounts.is_empty() {
                        "none exists here".to_owned()
                    } else {
                        resolved.accounts.join(", ")
                    }
                ),
            );
        }
    }

    /// The rule's name if it is well formed and not used before.
    fn rule_name(
        &mut self,
        rule_span: &Range<usize>,
        name: Option<&Spanned<String>>,
    ) -> Option<String> {
        let Some(name) = name else {
            self.problem(
                rule_span.clone(),
                "a rule needs a name: name = \"...\" (lower-case letters, digits, - and _)",
            );
            return None;
        };
        let span = name.span();
        let text = name.get_ref();
        let well_formed = !text.is_empty()
            && text.len() <= MAX_RULE_NAME_LEN
            && text
                .bytes()
                .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-' || b == b'_');
        if !well_formed {
            self.problem(
                span,
                format!(
                    "rule name {text:?} must be 1 to {MAX_RULE_NAME_LEN} lower-case letters, \
                     digits, - or _"
                ),
            );
            return None;
        }
        if text == NO_RULE_MATCHED {
            self.problem(
                span,
                format!("rule name {text:?} is the built-in verdict's name; choose another"),
            );
            return None;
        }
        let line = self.line_of(&span);
        if let Some(first) = self.first_line_of_name.get(text) {
            let first = *first;
            self.problem(
                span,
                format!("rule name {text:?} is used twice (first on line {first})"),
            );
            return None;
        }
        self.first_line_of_name.insert(text.clone(), line);
        Some(text.clone())
    }

    /// The values of a match key and where they stand, or a problem when the list is empty
    /// (it would match nothing, which is never what leaving a key out means).
    fn non_empty<'v>(
        &mut self,
        context: &str,
        key: &str,
        value: &'v Spanned<OneOrMany>,
    ) -> Option<(std::ops::Range<usize>, &'v [String])> {
        let span = value.span();
        let values = &value.get_ref().0;
        if values.is_empty() {
            self.problem(
                span,
                format!(
                    "{context}: {key} is an empty list, which matches nothing; leave {key} out \
                     to match any value"
                ),
            );
            return None;
        }
        Some((span, values))
    }

    fn globs(
        &mut self,
        context: &str,
        key: &str,
        value: Option<&Spanned<OneOrMany>>,
    ) -> Option<Globs> {
        let (span, patterns) = self.non_empty(context, key, value?)?;
        match Globs::new(patterns) {
            Ok(globs) => Some(globs),
            Err(messages) => {
                for message in messages {
                    self.problem(span.clone(), format!("{context}: {key}: {message}"));
                }
                None
            }
        }
    }

    fn enum_list<T: Copy>(
        &mut self,
        context: &str,
        key: &str,
        value: Option<&Spanned<OneOrMany>>,
        options: &[(&str, T)],
    ) -> Option<Vec<T>> {
        let (span, words) = self.non_empty(context, key, value?)?;
        let mut chosen = Vec::new();
        for word in words {
            match lookup(word, options) {
                Some(value) => chosen.push(value),
                None => self.problem(
                    span.clone(),
                    format!(
                        "{context}: {key} {word:?} is not one of {}",
                        option_names(options)
                    ),
                ),
            }
        }
        (chosen.len() == words.len()).then_some(chosen)
    }

    fn one_of<T: Copy>(
        &mut self,
        context: &str,
        key: &str,
        value: &Spanned<String>,
        options: &[(&str, T)],
    ) -> Option<T> {
        let chosen = lookup(value.get_ref(), options);
        if chosen.is_none() {
            self.problem(
                value.span(),
                format!(
                    "{context}: {key} = {:?} is not one of {}",
                    value.get_ref(),
                    option_names(options)
                ),
            );
        }
        chosen
    }

    fn duration(&mut self, context: &str, key: &str, value: &Spanned<String>) -> Option<Duration> {
        match humantime::parse_duration(value.get_ref()) {
            Ok(duration) => Some(duration),
            Err(err) => {
                self.problem(
                    value.span(),
                    format!(
                        "{context}: {key} = {:?} is not a duration like \"10m\" or \"1h 30m\": \
                         {err}",
                        value.get_ref()
                    ),
                );
                None
            }
        }
    }

    /// `min_timeout`, which only `on_expiry = "default"` takes; and which a rule that names
    /// agents in its conditions and lets their requests default at expiry must give: without
    /// it, an agent's own timeout would make its own defaults an answer (see `agents.rs`),
    /// so the engine would let such requests expire without answers instead, and the rule
    /// would not do what it says.
    fn min_timeout(
        &mut self,
        context: &str,
        raw: &RawRule,
        conditions: &Conditions,
        verdict: &Verdict,
    ) -> Option<Duration> {
        let defaults = verdict.expiry_may_default();
        let Some(value) = &raw.min_timeout else {
            if let Some(marker) = defaults.then(|| names_agents(conditions)).flatten() {
                let span = raw.on_expiry.as_ref().map_or(0..0, Spanned::span);
                self.problem(
                    span,
                    format!(
                        "{context}: on_expiry = \"default\" for agents' requests ({marker}) \
                         needs min_timeout = \"<duration>\", the shortest timeout an agent's \
                         request must allow for its defaults to answer it at expiry: an agent \
                         picks its own timeout and default, and without a minimum a \
                         one-second timeout would approve whatever it proposed. Add \
                         min_timeout (for example \"15m\"), or use on_expiry = \"expire\""
                    ),
                );
            }
            return None;
        };
        if !defaults {
            self.problem(
                value.span(),
                format!(
                    "{context}: min_timeout is used only with on_expiry = \"default\" and \
                     without never_auto (it says how long a request must have allowed for its \
                     defaults to answer it at expiry)"
                ),
            );
            return None;
        }
        let min = self.duration(context, "min_timeout", value)?;
        if min.is_zero() {
            self.problem(
                value.span(),
                format!(
                    "{context}: min_timeout = {:?} allows any timeout, so an asker's own \
                     one-second timeout would answer with its defaults; give a real minimum \
                     like \"15m\"",
                    value.get_ref()
                ),
            );
            return None;
        }
        Some(min)
    }

    /// `after` and `then`, which come together or not at all.
    fn after(&mut self, context: &str, raw: &RawRule) -> Option<After> {
        match (&raw.after, &raw.then) {
            (None, None) => None,
            (Some(after), None) => {
                self.problem(
                    after.span(),
                    format!(
                        "{context}: after needs then = \"default\", \"expire\" or \"escalate\" \
                         (they come together)"
                    ),
                );
                None
            }
            (None, Some(then)) => {
                self.problem(
                    then.span(),
                    format!("{context}: then needs after = \"<delay>\" (they come together)"),
                );
                None
            }
            (Some(after), Some(then)) => {
                let delay = self.duration(context, "after", after);
                let then_value = self.one_of(context, "then", then, THEN);
                if then_value == Some(Then::Default)
                    && raw.never_auto.as_ref().is_some_and(|v| *v.get_ref())
                {
                    self.problem(
                        then.span(),
                        format!(
                            "{context}: never_auto = true contradicts then = \"default\": \
                             nothing automatic may answer it; use \"expire\" or \"escalate\""
                        ),
                    );
                    return None;
                }
                Some(After {
                    delay: delay?,
                    then: then_value?,
                })
            }
        }
    }

    /// The escalation steps, checked; the one default step when `then = "escalate"` gives
    /// none; empty when the rule does not escalate.
    fn escalation(&mut self, context: &str, raw: &RawRule, after: Option<&After>) -> Vec<Step> {
        let escalates = raw
            .then
            .as_ref()
            .is_some_and(|then| then.get_ref() == "escalate");
        if !escalates {
            if let Some(first) = raw.escalate.first() {
                self.problem(
                    first.span(),
                    format!(
                        "{context}: escalation steps are given, but they are used only with \
                         then = \"escalate\""
                    ),
                );
            }
            return Vec::new();
        }
        if raw.escalate.is_empty() {
            return match after {
                Some(_) => vec![Step {
                    after: Duration::ZERO,
                    action: StepAction::Notify(Loudness::Critical),
                }],
                None => Vec::new(),
            };
        }
        let mut steps = Vec::new();
        let mut previous: Option<Duration> = None;
        for (index, step) in raw.escalate.iter().enumerate() {
            let step_context = format!("{context}, escalation step {}", index + 1);
            let Some(step) = self.step(&step_context, step) else {
                continue;
            };
            if let Some(previous) = previous.filter(|previous| step.after < *previous) {
                let span = raw.escalate[index]
                    .get_ref()
                    .after
                    .as_ref()
                    .map_or_else(|| raw.escalate[index].span(), Spanned::span);
                self.problem(
                    span,
                    format!(
                        "{step_context}: steps go in order of after, but {} comes after {}",
                        humantime::format_duration(step.after),
                        humantime::format_duration(previous)
                    ),
                );
            }
            previous = Some(step.after);
            steps.push(step);
        }
        steps
    }

    fn step(&mut self, context: &str, raw: &Spanned<RawStep>) -> Option<Step> {
        let span = raw.span();
        let raw = raw.get_ref();
        let after = match &raw.after {
            Some(after) => self.duration(context, "after", after),
            None => {
                self.problem(
                    span.clone(),
                    format!(
                        "{context}: a step needs after = \"<delay from the start of escalation>\""
                    ),
                );
                None
            }
        };
        let action = match (&raw.notify, &raw.run) {
            (Some(notify), None) => self
                .one_of(context, "notify", notify, STEP_LOUDNESS)
                .map(StepAction::Notify),
            (None, Some(run)) => {
                let argv = run.get_ref();
                if argv.first().is_none_or(|program| program.is_empty()) {
                    self.problem(
                        run.span(),
                        format!("{context}: run needs a program: [\"/path/to/program\", args...]"),
                    );
                    None
                } else {
                    Some(StepAction::Run(argv.clone()))
                }
            }
            (Some(_), Some(_)) | (None, None) => {
                self.problem(
                    span,
                    format!("{context}: a step has exactly one of notify or run"),
                );
                None
            }
        };
        Some(Step {
            after: after?,
            action: action?,
        })
    }
}

/// Which agent marker a rule's own conditions match, in words, if any: the rule names agents
/// (`tool = "ask_operator"`, `app = "claude-code"`, or a glob that matches them).
fn names_agents(conditions: &Conditions) -> Option<String> {
    let tools = AGENT_TOOLS
        .iter()
        .map(|tool| (&conditions.tool, "tool", tool));
    let apps = AGENT_APPS.iter().map(|app| (&conditions.app, "app", app));
    tools
        .chain(apps)
        .find(|(globs, _, marker)| globs.as_ref().is_some_and(|g| g.matches(Some(marker))))
        .map(|(_, key, marker)| format!("its {key} matches {marker:?}"))
}

fn lookup<T: Copy>(word: &str, options: &[(&str, T)]) -> Option<T> {
    options
        .iter()
        .find(|(name, _)| *name == word)
        .map(|(_, value)| *value)
}

fn option_names<T>(options: &[(&str, T)]) -> String {
    options
        .iter()
        .map(|(name, _)| format!("{name:?}"))
        .collect::<Vec<_>>()
        .join(", ")
}
