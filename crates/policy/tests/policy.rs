//! The policy language end to end: parsing, problems by line, matching, verdicts, quiet
//! hours and the shipped policy's promises.

use std::time::Duration;

use chrono::NaiveTime;
use inbox_policy::{
    problems_of, After, Autonomy, Facts, LoadError, Loudness, OnExpiry, Policy, PolicyProblem,
    Step, StepAction, Then, Verdict, SHIPPED,
};
use inbox_protocol::{parse_request, Request};

fn request(json: &str) -> Request {
    parse_request(json.as_bytes(), Some("r")).unwrap()
}

/// A request with the given envelope fields (JSON object members, without braces) and one
/// confirm question.
fn request_with(fields: &str) -> Request {
    let separator = if fields.is_empty() { "" } else { "," };
    request(&format!(
        r#"{{{fields}{separator} "questions": [{{"id": "a", "question": "Go on?", "type": "confirm", "default": true}}]}}"#
    ))
}

fn policy(text: &str) -> Policy {
    Policy::parse(text).unwrap_or_else(|problems| panic!("{text}\n{problems:#?}"))
}

fn judge(policy: &Policy, request: &Request) -> Verdict {
    policy.judge(&Facts {
        request,
        placed_by: None,
    })
}

/// Whether a one-rule policy with `condition` matches `request`.
fn matches(condition: &str, request: &Request) -> bool {
    matches_placed_by(condition, request, None)
}

fn matches_placed_by(condition: &str, request: &Request, placed_by: Option<&str>) -> bool {
    let policy = policy(&format!("[[rule]]\nname = \"r\"\n{condition}\n"));
    policy.judge(&Facts { request, placed_by }).rule == "r"
}

fn problems(text: &str) -> Vec<PolicyProblem> {
    let problems = problems_of(text);
    assert!(!problems.is_empty(), "expected problems in:\n{text}");
    problems
}

/// The one problem in `text`, checked to be on `line` and to mention `needle`.
fn one_problem(text: &str, line: usize, needle: &str) -> PolicyProblem {
    let found = problems(text);
    assert_eq!(found.len(), 1, "{found:#?}");
    let problem = found.into_iter().next().unwrap();
    assert_eq!(problem.line, line, "{problem}");
    assert!(problem.column >= 1, "{problem}");
    assert!(
        problem.message.contains(needle),
        "{problem} does not mention {needle:?}"
    );
    problem
}

// ---------------------------------------------------------------------------------------
// Matching

#[test]
fn source_globs_match_and_do_not_match() {
    let full = request_with(
        r#""source": {"app": "ci-build", "run": "run-42", "project": "Answer-Inbox",
            "host": "build.example.org", "tool": "ask_operator"}"#,
    );
    for (key, yes, no) in [
        ("app", "ci-*", "cd-*"),
        ("run", "run-4?", "run-5*"),
        ("project", "answer-inbox", "other"),
        ("host", "*.example.org", "*.example.com"),
        ("tool", "ask_operator", "ask_*x"),
    ] {
        assert!(matches(&format!("{key} = {yes:?}"), &full), "{key} {yes}");
        assert!(!matches(&format!("{key} = {no:?}"), &full), "{key} {no}");
        assert!(
            matches(&format!("{key} = [{no:?}, {yes:?}]"), &full),
            "{key}: any glob of a list"
        );
        assert!(!matches(&format!("{key} = [{no:?}]"), &full), "{key} list");
    }
}

#[test]
fn a_missing_source_field_never_matches_a_glob() {
    let bare = request_with("");
    for key in ["app", "run", "project", "host", "tool"] {
        assert!(!matches(&format!("{key} = \"*\""), &bare), "{key}");
    }
    assert!(!matches_placed_by("account = \"*\"", &bare, None));
}

#[test]
fn account_matches_who_placed_the_file() {
    let request = request_with("");
    assert!(matches_placed_by(
        "account = \"ci-*\"",
        &request,
        Some("ci-runner")
    ));
    assert!(!matches_placed_by(
        "account = \"ci-*\"",
        &request,
        Some("alice")
    ));
}

#[test]
fn priority_matches_one_or_any_of_a_list() {
    let high = request_with(r#""priority": "high""#);
    let normal = request_with("");
    assert!(matches("priority = \"high\"", &high));
    assert!(!matches("priority = \"high\"", &normal));
    assert!(matches("priority = [\"low\", \"normal\"]", &normal));
    assert!(!matches("priority = [\"low\", \"critical\"]", &high));
}

#[test]
fn kinds_match_when_any_question_has_one() {
    let mixed = request(
        r#"{"questions": [
            {"id": "a", "question": "A?", "type": "confirm"},
            {"id": "b", "question": "B?", "type": "choice", "options": ["x", "y"]}]}"#,
    );
    assert!(matches("kinds = \"confirm\"", &mixed));
    assert!(matches("kinds = [\"text\", \"choice\"]", &mixed));
    assert!(!matches("kinds = [\"text\", \"multi_choice\"]", &mixed));
    let text = request(r#"[{"id": "t", "question": "Why?", "type": "text"}]"#);
    assert!(matches("kinds = \"text\"", &text));
    assert!(!matches("kinds = \"confirm\"", &text));
}

#[test]
fn title_matches_the_display_title() {
    let titled = request_with(r#""title": "Deploy to production""#);
    assert!(matches("title = \"deploy*\"", &titled));
    assert!(!matches("title = \"Deploy\"", &titled), "the whole value");
    // Without a title, the first question stands for it.
    let untitled = request_with("");
    assert!(matches("title = \"Go on?\"", &untitled));
    assert!(!matches("title = \"Deploy*\"", &untitled));
}

#[test]
fn every_condition_must_hold() {
    let request = request_with(r#""source": {"app": "ci"}, "priority": "high""#);
    assert!(matches("app = \"ci\"\npriority = \"high\"", &request));
    assert!(!matches("app = \"ci\"\npriority = \"low\"", &request));
    assert!(!matches("app = \"cd\"\npriority = \"high\"", &request));
}

#[test]
fn a_rule_without_conditions_matches_everything() {
    assert!(matches("", &request_with("")));
    assert!(matches(
        "",
        &request_with(r#""priority": "critical", "source": {"app": "x"}"#)
    ));
}

#[test]
fn the_first_matching_rule_wins() {
    let policy = policy(
        r#"
[[rule]]
name = "ci"
app = "ci-*"
notify = "silent"

[[rule]]
name = "high"
priority = "high"
notify = "critical"

[[rule]]
name = "rest"
"#,
    );
    assert_eq!(policy.rule_names(), ["ci", "high", "rest"]);
    let ci_high = request_with(r#""source": {"app": "ci-x"}, "priority": "high""#);
    let verdict = judge(&policy, &ci_high);
    assert_eq!(verdict.rule, "ci");
    assert_eq!(verdict.notify, Loudness::Silent);
    assert_eq!(
        judge(&policy, &request_with(r#""priority": "high""#)).rule,
        "high"
    );
    assert_eq!(judge(&policy, &request_with("")).rule, "rest");
}

#[test]
fn no_matching_rule_gives_the_safe_built_in_verdict() {
    let policy = policy("[[rule]]\nname = \"ci\"\napp = \"ci-*\"\nautonomous = \"honour\"\n");
    let verdict = judge(&policy, &request_with(""));
    assert_eq!(verdict, Verdict::no_rule_matched());
    assert_eq!(verdict.rule, "no-rule-matched");
    // An empty file has no rules at all.
    let empty = policy_of_empty_file();
    assert!(empty.rule_names().is_empty());
    assert_eq!(judge(&empty, &request_with("")), Verdict::no_rule_matched());
}

fn policy_of_empty_file() -> Policy {
    policy("# nothing but a comment\n")
}

// ---------------------------------------------------------------------------------------
// What a rule says

#[test]
fn a_rule_that_says_nothing_keeps_the_safe_defaults() {
    let verdict = judge(&policy("[[rule]]\nname = \"quiet\"\n"), &request_with(""));
    let expected = Verdict {
        rule: "quiet".to_owned(),
        ..Verdict::no_rule_matched()
    };
    assert_eq!(verdict, expected);
    assert_eq!(verdict.autonomous, Autonomy::Hold);
    assert_eq!(verdict.on_expiry, OnExpiry::Expire);
    assert!(!verdict.never_auto && verdict.buttons && verdict.after.is_none());
    assert_eq!(verdict.answered_by(), "policy:rule:quiet");
}

#[test]
fn every_action_key_is_read() {
    let verdict = judge(
        &policy(
            r#"
[[rule]]
name = "everything"
autonomous = "honour"
on_expiry = "default"
min_timeout = "10m"
after = "1h 30m"
then = "default"
notify = "silent"
buttons = false
"#,
        ),
        &request_with(""),
    );
    assert_eq!(
        verdict,
        Verdict {
            rule: "everything".to_owned(),
            autonomous: Autonomy::Honour,
            never_auto: false,
            on_expiry: OnExpiry::Default,
            min_timeout: Some(Duration::from_secs(600)),
            expiry_refused: None,
            after: Some(After {
                delay: Duration::from_secs(5400),
                then: Then::Default,
            }),
            escalate: Vec::new(),
            notify: Loudness::Silent,
            buttons: false,
            ..Verdict::no_rule_matched()
        }
    );
    assert!(verdict.honours_autonomy());
    assert!(verdict.expiry_may_default());

    for (word, loudness) in [
        ("silent", Loudness::Silent),
        ("normal", Loudness::Normal),
        ("critical", Loudness::Critical),
    ] {
        let text = format!("[[rule]]\nname = \"n\"\nnotify = \"{word}\"\n");
        assert_eq!(judge(&policy(&text), &request_with("")).notify, loudness);
    }
    let hold = policy(
        "[[rule]]\nname = \"h\"\nautonomous = \"hold\"\non_expiry = \"expire\"\nbuttons = true\n",
    );
    let verdict = judge(&hold, &request_with(""));
    assert_eq!(verdict.autonomous, Autonomy::Hold);
    assert_eq!(verdict.on_expiry, OnExpiry::Expire);
    assert!(verdict.buttons);
}

#[test]
fn never_auto_overrides_autonomy_and_expiry() {
    let verdict = judge(
        &policy(
            r#"
[[rule]]
name = "never"
autonomous = "honour"
on_expiry = "default"
never_auto = true
after = "10m"
then = "expire"
"#,
        ),
        &request_with(""),
    );
    assert!(verdict.never_auto);
    assert!(!verdict.honours_autonomy());
    assert!(!verdict.expiry_may_default());
    assert_eq!(
        verdict.after,
        Some(After {
            delay: Duration::from_secs(600),
            then: Then::Expire,
        })
    );
}

#[test]
fn escalation_steps_are_read_in_order() {
    let verdict = judge(
        &policy(
            r#"
[[rule]]
name = "deploys-need-a-person"
title = "Deploy*"
after = "10m"
then = "escalate"
notify = "critical"
buttons = false

[[rule.escalate]]
after = "0s"
notify = "critical"

[[rule.escalate]]
after = "20m"
run = ["/usr/local/bin/page-me", "--team", "ops"]

[[rule.escalate]]
after = "20m"
notify = "normal"
"#,
        ),
        &request_with(r#""title": "Deploy web""#),
    );
    assert_eq!(
        verdict.after,
        Some(After {
            delay: Duration::from_secs(600),
            then: Then::Escalate,
        })
    );
    assert_eq!(
        verdict.escalate,
        vec![
            Step {
                after: Duration::ZERO,
                action: StepAction::Notify(Loudness::Critical),
            },
            Step {
                after: Duration::from_secs(1200),
                action: StepAction::Run(vec![
                    "/usr/local/bin/page-me".to_owned(),
                    "--team".to_owned(),
                    "ops".to_owned(),
                ]),
            },
            Step {
                after: Duration::from_secs(1200),
                action: StepAction::Notify(Loudness::Normal),
            },
        ]
    );
    assert_eq!(
        verdict.describe(),
        "rule deploys-need-a-person: holds autonomous mode; escalates after 10m; \
         notifies critically, no buttons"
    );
}

#[test]
fn escalating_without_steps_is_one_critical_notification() {
    let verdict = judge(
        &policy("[[rule]]\nname = \"e\"\nafter = \"5m\"\nthen = \"escalate\"\n"),
        &request_with(""),
    );
    assert_eq!(
        verdict.escalate,
        vec![Step {
            after: Duration::ZERO,
            action: StepAction::Notify(Loudness::Critical),
        }]
    );
}

// ---------------------------------------------------------------------------------------
// Problems, each on its line

#[test]
fn a_toml_syntax_error_is_one_problem_on_its_line() {
    one_problem("[[rule]]\nname = \"a\"\nnotify = \n", 3, "");
    one_problem("[[rule]\nname = \"a\"\n", 1, "");
}

#[test]
fn an_unknown_key_is_named_on_its_line() {
    one_problem("[[rule]]\nname = \"a\"\nnotfy = \"silent\"\n", 3, "notfy");
    one_problem("colour = \"blue\"\n", 1, "colour");
    one_problem(
        "[quiet_hours]\nfrom = \"22:00\"\nto = \"07:00\"\nuntil = \"08:00\"\n",
        4,
        "until",
    );
    one_problem(
        "[[rule]]\nname = \"a\"\nafter = \"1m\"\nthen = \"escalate\"\n[[rule.escalate]]\nafter = \"0s\"\nnotify = \"normal\"\nemail = \"me\"\n",
        8,
        "email",
    );
}

#[test]
fn a_wrongly_typed_value_is_a_problem_on_its_line() {
    one_problem(
        "[[rule]]\nname = \"a\"\napp = 3\n",
        3,
        "a string or a list of strings",
    );
    one_problem("[[rule]]\nname = \"a\"\nbuttons = \"no\"\n", 3, "");
}

#[test]
fn bad_globs_are_reported_on_their_line() {
    one_problem(
        "[[rule]]\nname = \"a\"\napp = \"[ci\"\n",
        3,
        "\"[ci\" is not a valid glob",
    );
    one_problem(
        "[[rule]]\nname = \"a\"\n\ntitle = [\"ok\", \"{unclosed\"]\n",
        4,
        "\"{unclosed\" is not a valid glob",
    );
}

#[test]
fn empty_lists_are_reported() {
    one_problem("[[rule]]\nname = \"a\"\nhost = []\n", 3, "empty list");
    one_problem("[[rule]]\nname = \"a\"\npriority = []\n", 3, "empty list");
}

#[test]
fn bad_words_are_reported_with_what_is_allowed() {
    one_problem(
        "[[rule]]\nname = \"a\"\npriority = [\"high\", \"urgent\"]\n",
        3,
        "priority \"urgent\" is not one of \"low\", \"normal\", \"high\", \"critical\"",
    );
    one_problem(
        "[[rule]]\nname = \"a\"\nkinds = \"yes_no\"\n",
        3,
        "kinds \"yes_no\"",
    );
    one_problem(
        "[[rule]]\nname = \"a\"\nautonomous = \"honor\"\n",
        3,
        "\"honour\", \"hold\"",
    );
    one_problem(
        "[[rule]]\nname = \"a\"\non_expiry = \"answer\"\n",
        3,
        "on_expiry",
    );
    one_problem(
        "[[rule]]\nname = \"a\"\nnotify = \"loud\"\n",
        3,
        "notify = \"loud\"",
    );
    one_problem(
        "[[rule]]\nname = \"a\"\nafter = \"1m\"\nthen = \"page\"\n",
        4,
        "then = \"page\"",
    );
}

#[test]
fn bad_durations_are_reported_on_their_line() {
    one_problem(
        "[[rule]]\nname = \"a\"\nafter = \"ten minutes\"\nthen = \"expire\"\n",
        3,
        "is not a duration",
    );
    one_problem(
        "[[rule]]\nname = \"a\"\nafter = \"1m\"\nthen = \"escalate\"\n[[rule.escalate]]\nafter = \"soon\"\nnotify = \"normal\"\n",
        6,
        "escalation step 1: after = \"soon\" is not a duration",
    );
}

#[test]
fn bad_quiet_hours_are_reported_on_their_line() {
    one_problem(
        "[quiet_hours]\nfrom = \"10pm\"\nto = \"07:00\"\n",
        2,
        "quiet_hours.from = \"10pm\" is not a time of day",
    );
    one_problem(
        "[quiet_hours]\nfrom = \"22:00\"\nto = \"25:00\"\n",
        3,
        "quiet_hours.to",
    );
    let same = problems("\n[quiet_hours]\nfrom = \"22:00\"\nto = \"22:00\"\n");
    assert_eq!(same.len(), 1, "{same:#?}");
    assert!((2..=4).contains(&same[0].line), "{}", same[0]);
    assert!(same[0].message.contains("from and to are both"));
}

#[test]
fn a_duplicate_name_names_both_lines() {
    let problem = one_problem(
        "[[rule]]\nname = \"x\"\n\n[[rule]]\nname = \"y\"\n\n[[rule]]\nname = \"x\"\n",
        8,
        "",
    );
    assert_eq!(
        problem.message,
        "rule name \"x\" is used twice (first on line 2)"
    );
    // Names are case-sensitive, but upper case is not allowed at all.
    one_problem(
        "[[rule]]\nname = \"x\"\n[[rule]]\nname = \"X\"\n",
        4,
        "lower-case",
    );
}

#[test]
fn bad_names_are_reported() {
    one_problem("[[rule]]\nname = \"has space\"\n", 2, "lower-case letters");
    one_problem("[[rule]]\nname = \"\"\n", 2, "1 to 64");
    let long = "a".repeat(65);
    one_problem(&format!("[[rule]]\nname = \"{long}\"\n"), 2, "1 to 64");
    assert!(problems_of(&format!("[[rule]]\nname = \"{}\"\n", "a".repeat(64))).is_empty());
    assert!(problems_of("[[rule]]\nname = \"a-b_c9\"\n").is_empty());
    one_problem("[[rule]]\nname = \"no-rule-matched\"\n", 2, "built-in");
    let missing = one_problem("\n[[rule]]\napp = \"x\"\n", 2, "a rule needs a name");
    assert_eq!(missing.line, 2);
}

#[test]
fn after_and_then_come_together() {
    one_problem(
        "[[rule]]\nname = \"a\"\nafter = \"10m\"\n",
        3,
        "after needs then",
    );
    one_problem(
        "[[rule]]\nname = \"a\"\nthen = \"expire\"\n",
        3,
        "then needs after",
    );
}

#[test]
fn never_auto_with_then_default_is_a_contradiction() {
    one_problem(
        "[[rule]]\nname = \"a\"\nnever_auto = true\nafter = \"10m\"\nthen = \"default\"\n",
        5,
        "never_auto = true contradicts then = \"default\"",
    );
    // Expiring settles without answers, so it is allowed; so is never_auto = false.
    assert!(problems_of(
        "[[rule]]\nname = \"a\"\nnever_auto = true\nafter = \"10m\"\nthen = \"expire\"\n"
    )
    .is_empty());
    assert!(problems_of(
        "[[rule]]\nname = \"a\"\nnever_auto = false\nafter = \"10m\"\nthen = \"default\"\n"
    )
    .is_empty());
}

const ESCALATE_HEAD: &str = "[[rule]]\nname = \"a\"\nafter = \"1m\"\nthen = \"escalate\"\n";

#[test]
fn escalation_steps_are_checked() {
    // Line 5 is the step's header, line 6 onwards its keys.
    one_problem(
        &format!("{ESCALATE_HEAD}[[rule.escalate]]\nafter = \"0s\"\nnotify = \"critical\"\nrun = [\"x\"]\n"),
        5,
        "exactly one of notify or run",
    );
    one_problem(
        &format!("{ESCALATE_HEAD}[[rule.escalate]]\nafter = \"0s\"\n"),
        5,
        "exactly one of notify or run",
    );
    one_problem(
        &format!("{ESCALATE_HEAD}[[rule.escalate]]\nnotify = \"critical\"\n"),
        5,
        "a step needs after",
    );
    one_problem(
        &format!("{ESCALATE_HEAD}[[rule.escalate]]\nafter = \"0s\"\nnotify = \"silent\"\n"),
        7,
        "\"normal\", \"critical\"",
    );
    one_problem(
        &format!("{ESCALATE_HEAD}[[rule.escalate]]\nafter = \"0s\"\nrun = []\n"),
        7,
        "run needs a program",
    );
    one_problem(
        &format!("{ESCALATE_HEAD}[[rule.escalate]]\nafter = \"0s\"\nrun = [\"\"]\n"),
        7,
        "run needs a program",
    );
}

#[test]
fn escalation_steps_must_be_in_order() {
    one_problem(
        &format!(
            "{ESCALATE_HEAD}[[rule.escalate]]\nafter = \"10m\"\nnotify = \"normal\"\n\
             [[rule.escalate]]\nafter = \"5m\"\nnotify = \"critical\"\n"
        ),
        9,
        "steps go in order of after, but 5m comes after 10m",
    );
}

#[test]
fn escalation_steps_without_then_escalate_are_a_problem() {
    one_problem(
        "[[rule]]\nname = \"a\"\nafter = \"1m\"\nthen = \"expire\"\n[[rule.escalate]]\nafter = \"0s\"\nnotify = \"normal\"\n",
        5,
        "used only with then = \"escalate\"",
    );
    one_problem(
        "[[rule]]\nname = \"a\"\n[[rule.escalate]]\nafter = \"0s\"\nnotify = \"normal\"\n",
        3,
        "used only with then = \"escalate\"",
    );
}

#[test]
fn every_semantic_problem_is_reported_at_once_in_line_order() {
    let text = r#"[quiet_hours]
from = "late"
to = "07:00"

[[rule]]
name = "first"
app = "[bad"
after = "forever"
then = "expire"

[[rule]]
name = "first"
priority = "urgent"
notify = "loud"

[[rule]]
name = "fine"
"#;
    let found = problems(text);
    let lines: Vec<usize> = found.iter().map(|problem| problem.line).collect();
    assert_eq!(lines, [2, 7, 8, 12, 13, 14], "{found:#?}");
    assert!(found[3].message.contains("used twice (first on line 6)"));
    assert_eq!(Policy::parse(text).unwrap_err(), found);
}

// ---------------------------------------------------------------------------------------
// Quiet hours

#[test]
fn quiet_hours_wrap_past_midnight() {
    let policy = policy("[quiet_hours]\nfrom = \"22:00\"\nto = \"07:00\"\n");
    let at = |text: &str| NaiveTime::parse_from_str(text, "%H:%M").unwrap();
    for quiet in ["22:00", "23:30", "00:00", "03:00", "06:59"] {
        assert!(policy.is_quiet(at(quiet)), "{quiet}");
    }
    for loud in ["07:00", "12:00", "21:59"] {
        assert!(!policy.is_quiet(at(loud)), "{loud}");
    }
    let hours = policy.quiet_hours().unwrap();
    assert_eq!((hours.from, hours.to), (at("22:00"), at("07:00")));
}

#[test]
fn only_critical_requests_notify_in_quiet_hours() {
    let policy = policy(
        "[quiet_hours]\nfrom = \"09:00\"\nto = \"17:00\"\n\n[[rule]]\nname = \"loud\"\npriority = \"critical\"\nnotify = \"critical\"\n",
    );
    let noon = NaiveTime::from_hms_opt(12, 0, 0).unwrap();
    let evening = NaiveTime::from_hms_opt(18, 0, 0).unwrap();
    let critical = judge(&policy, &request_with(r#""priority": "critical""#));
    let normal = judge(&policy, &request_with(""));
    assert_eq!(policy.loudness_at(&critical, noon), Loudness::Critical);
    assert_eq!(policy.loudness_at(&normal, noon), Loudness::Silent);
    assert_eq!(policy.loudness_at(&normal, evening), Loudness::Normal);
}

#[test]
fn without_quiet_hours_it_is_never_quiet() {
    let policy = policy("[[rule]]\nname = \"a\"\n");
    assert!(policy.quiet_hours().is_none());
    assert!(!policy.is_quiet(NaiveTime::from_hms_opt(3, 0, 0).unwrap()));
}

// ---------------------------------------------------------------------------------------
// The shipped policy and the fallback

fn shipped_verdict(fields: &str) -> Verdict {
    judge(&Policy::shipped(), &request_with(fields))
}

#[test]
fn the_shipped_policy_parses_with_its_rules_in_order() {
    assert!(problems_of(SHIPPED).is_empty());
    assert_eq!(
        Policy::shipped().rule_names(),
        [
            "critical-needs-a-person",
            "agents-ask-a-person",
            "high-priority",
            "file-askers",
        ]
    );
    assert!(Policy::shipped().quiet_hours().is_none());
}

#[test]
fn shipped_critical_requests_need_a_person() {
    for source in ["", r#", "source": {"tool": "ask_operator"}"#] {
        let verdict = shipped_verdict(&format!(r#""priority": "critical"{source}"#));
        assert_eq!(verdict.rule, "critical-needs-a-person");
        assert!(!verdict.honours_autonomy());
        assert!(!verdict.expiry_may_default());
        assert_eq!(verdict.notify, Loudness::Critical);
        assert!(!verdict.buttons);
    }
}

#[test]
fn shipped_autonomy_is_honoured_for_file_askers_only() {
    let priorities = ["low", "normal", "high", "critical"];
    for priority in priorities {
        let agent = shipped_verdict(&format!(
            r#""priority": "{priority}", "mode": "autonomous", "source": {{"tool": "ask_operator"}}"#
        ));
        assert!(!agent.honours_autonomy(), "agent at {priority}: {agent:?}");

        let file = shipped_verdict(&format!(
            r#""priority": "{priority}", "mode": "autonomous", "source": {{"app": "nightly"}}"#
        ));
        assert_eq!(
            file.honours_autonomy(),
            priority != "critical",
            "file asker at {priority}: {file:?}"
        );
    }
    assert_eq!(shipped_verdict("").rule, "file-askers");
    assert_eq!(
        shipped_verdict(r#""priority": "high""#).rule,
        "high-priority"
    );
}

/// Issue 25: the shipped policy never lets an agent's own timeout answer with its defaults,
/// at any priority, whether it asks through the MCP server (tool `ask_operator`) or a hook
/// (app `claude-code`, `codex`); a file asker's expiry defaults only at low or normal.
#[test]
fn shipped_expiry_defaults_only_file_askers_at_low_or_normal_priority() {
    let timeout = r#""timeout_seconds": 1, "#;
    for (source, agent) in [
        ("", false),
        (r#", "source": {"tool": "other"}"#, false),
        (r#", "source": {"tool": "ask_operator"}"#, true),
        (r#", "source": {"tool": "Ask_Operator", "app": "x"}"#, true),
        (
            r#", "source": {"app": "claude-code", "tool": "Bash"}"#,
            true,
        ),
        (r#", "source": {"app": "codex"}"#, true),
    ] {
        for priority in ["low", "normal", "high", "critical"] {
            let fields = format!(r#"{timeout}"priority": "{priority}"{source}"#);
            let verdict = shipped_verdict(&fields);
            assert_eq!(
                verdict.expiry_may_default(),
                !agent && matches!(priority, "low" | "normal"),
                "{fields}: {verdict:?}"
            );
        }
    }
    for priority in ["low", "normal", "high"] {
        let agent = shipped_verdict(&format!(
            r#""priority": "{priority}", "source": {{"tool": "ask_operator"}}"#
        ));
        assert_eq!(agent.rule, "agents-ask-a-person");
        assert_eq!(agent.on_expiry, OnExpiry::Expire);
    }
    // A hook's request that falls through to the catch-all is refused there, and says why.
    let hook = shipped_verdict(&format!(r#"{timeout}"source": {{"app": "claude-code"}}"#));
    assert_eq!(hook.rule, "file-askers");
    assert_eq!(hook.on_expiry, OnExpiry::Expire);
    let refused = hook.expiry_refused.as_deref().unwrap();
    assert!(
        refused.contains("agent's request (source app \"claude-code\")")
            && refused.contains("no min_timeout"),
        "{refused}"
    );
    assert!(hook.describe().contains(refused), "{}", hook.describe());
}

#[test]
fn the_shipped_rules_explain_themselves() {
    // Every rule is preceded by a comment saying why it is safe.
    let lines: Vec<&str> = SHIPPED.lines().collect();
    let headers: Vec<usize> = lines
        .iter()
        .enumerate()
        .filter(|(_, line)| line.trim() == "[[rule]]")
        .map(|(index, _)| index)
        .collect();
    assert_eq!(headers.len(), 4);
    for header in headers {
        assert!(
            lines[header - 1].trim_start().starts_with('#'),
            "no comment before the rule on line {}",
            header + 1
        );
    }
}

#[test]
fn hold_everything_holds_everything() {
    let policy = Policy::hold_everything();
    assert_eq!(policy.rule_names(), ["hold-everything"]);
    assert_eq!(policy.digest(), "");
    for fields in [
        "",
        r#""mode": "autonomous", "priority": "low""#,
        r#""priority": "critical", "source": {"tool": "ask_operator"}"#,
    ] {
        let verdict = judge(&policy, &request_with(fields));
        assert_eq!(
            verdict,
            Verdict {
                rule: "hold-everything".to_owned(),
                autonomous: Autonomy::Hold,
                never_auto: true,
                on_expiry: OnExpiry::Expire,
                min_timeout: None,
                expiry_refused: None,
                after: None,
                escalate: Vec::new(),
                notify: Loudness::Normal,
                buttons: true,
                ..Verdict::no_rule_matched()
            }
        );
        assert!(!verdict.honours_autonomy() && !verdict.expiry_may_default());
    }
    assert!(!policy.is_quiet(NaiveTime::from_hms_opt(3, 0, 0).unwrap()));
}

// ---------------------------------------------------------------------------------------
// Digest and loading

#[test]
fn the_digest_is_the_sha256_of_the_text() {
    let text = "[[rule]]\nname = \"a\"\n";
    assert_eq!(
        policy(text).digest(),
        inbox_protocol::sha256_hex(text.as_bytes())
    );
    assert_ne!(policy(text).digest(), policy(&format!("{text}\n")).digest());
    assert_eq!(Policy::shipped().digest().len(), 64);
}

#[test]
fn load_reads_a_file_and_names_it_in_errors() {
    let dir = tempfile::tempdir().unwrap();
    let good = dir.path().join("policy.toml");
    std::fs::write(&good, SHIPPED).unwrap();
    assert_eq!(
        Policy::load(&good).unwrap().digest(),
        Policy::shipped().digest()
    );

    let bad = dir.path().join("bad.toml");
    std::fs::write(
        &bad,
        "[[rule]]\nname = \"a\"\nnotify = \"loud\"\n[[rule]]\nname = \"a\"\n",
    )
    .unwrap();
    let err = Policy::load(&bad).unwrap_err();
    let LoadError::Invalid { path, problems } = &err else {
        panic!("{err:?}");
    };
    assert_eq!(path, &bad);
    assert_eq!(problems.len(), 2);
    let message = err.to_string();
    assert!(message.contains(&bad.display().to_string()), "{message}");
    assert!(message.contains("line 3, column"), "{message}");
    assert!(
        message.contains("line 5, column 8: rule name \"a\" is used twice (first on line 2)"),
        "{message}"
    );

    let missing = dir.path().join("missing.toml");
    let err = Policy::load(&missing).unwrap_err();
    assert!(matches!(err, LoadError::Io { .. }), "{err:?}");
    assert!(err.to_string().contains(&missing.display().to_string()));
}

fn untrusted_reason(path: &std::path::Path) -> String {
    match Policy::load(path) {
        Err(LoadError::Untrusted { reason, .. }) => reason,
        other => panic!("{} was not refused as untrusted: {other:?}", path.display()),
    }
}

/// The policy decides what settles without a person and which programs run as the
/// operator: a file another account could have written is not read at all.
#[test]
fn a_policy_file_others_could_write_is_refused() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("policy.toml");
    std::fs::write(&path, SHIPPED).unwrap();
    for mode in [0o666, 0o620, 0o602] {
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(mode)).unwrap();
        let reason = untrusted_reason(&path);
        assert!(reason.contains("may write to it"), "{mode:o}: {reason}");
    }
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o644)).unwrap();
    assert!(Policy::load(&path).is_ok(), "readable by others is fine");

    // Another account's file, or a link another account owns (root can make both here; an
    // ordinary account cannot give a file away, so there the check is the mode's alone).
    if rustix::process::geteuid().is_root() {
        let nobody = Some(65534);
        let theirs = dir.path().join("theirs.toml");
        std::fs::write(&theirs, SHIPPED).unwrap();
        std::os::unix::fs::chown(&theirs, nobody, nobody).unwrap();
        let reason = untrusted_reason(&theirs);
        assert!(reason.contains("owned by another account"), "{reason}");
        // A link another account owns, to a file of one's own.
        let link = dir.path().join("link.toml");
        std::os::unix::fs::symlink(&path, &link).unwrap();
        std::os::unix::fs::lchown(&link, nobody, nobody).unwrap();
        let reason = untrusted_reason(&link);
        assert!(reason.contains("another account"), "{reason}");
    }
}

/// A folder another account may write lets that account remove the policy file (the
/// shipped, looser policy would then apply unnoticed) or put its own in its place: the file
/// is refused, missing or not, by the rule escalation programs' folders are held to (a sticky
/// folder, where nobody else can remove or rename the file, is fine). A team's file has its
/// own rule (docs/TEAMS.md: it lives in the group-writable spool root) and keeps it.
#[test]
fn a_policy_file_in_a_folder_others_may_change_is_refused_even_when_missing() {
    use std::os::unix::fs::PermissionsExt;
    let chmod = |path: &std::path::Path, mode: u32| {
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).unwrap()
    };
    let dir = tempfile::tempdir().unwrap();
    let folder = dir.path().join("answer-inbox");
    std::fs::create_dir(&folder).unwrap();
    let path = folder.join("policy.toml");
    std::fs::write(&path, SHIPPED).unwrap();
    chmod(&path, 0o644);
    let names_folder = |reason: &str| {
        assert!(
            reason.contains(&folder.display().to_string())
                && reason.contains("another account may change"),
            "{reason}"
        )
    };
    for mode in [0o777, 0o775, 0o757] {
        chmod(&folder, mode);
        names_folder(&untrusted_reason(&path));
    }
    // Removed by whoever shares the folder: refused loudly, not "no file, the shipped one".
    std::fs::remove_file(&path).unwrap();
    chmod(&folder, 0o777);
    names_folder(&untrusted_reason(&path));
    // Sticky (like /tmp): others may add files, never remove or replace this one.
    chmod(&folder, 0o1777);
    assert!(matches!(Policy::load(&path), Err(LoadError::Io { .. })));
    std::fs::write(&path, SHIPPED).unwrap();
    chmod(&path, 0o644);
    assert!(Policy::load(&path).is_ok(), "a sticky folder");
    chmod(&folder, 0o755);
    assert!(Policy::load(&path).is_ok(), "a private folder");

    // Every folder on the way counts: one holding a link to the file, and the file's own
    // behind a link.
    let private = dir.path().join("private");
    std::fs::create_dir(&private).unwrap();
    chmod(&private, 0o755);
    let link = private.join("link.toml");
    std::os::unix::fs::symlink(&path, &link).unwrap();
    assert!(Policy::load(&link).is_ok());
    chmod(&folder, 0o777);
    names_folder(&untrusted_reason(&link));
    chmod(&folder, 0o755);
    let through = folder.join("through.toml");
    std::os::unix::fs::symlink(&path, &through).unwrap();
    chmod(&folder, 0o777);
    names_folder(&untrusted_reason(&through));
    chmod(&folder, 0o755);

    if rustix::process::geteuid().is_root() {
        // Another account's folder, whatever its mode.
        std::os::unix::fs::chown(&folder, Some(65534), Some(65534)).unwrap();
        names_folder(&untrusted_reason(&path));
        std::os::unix::fs::chown(&folder, Some(0), Some(0)).unwrap();
    }

    // A team's file sits in the team-writable spool root, owned by the root's owner.
    let me = rustix::process::geteuid().as_raw();
    chmod(&folder, 0o2770);
    Policy::load_team(&path, me).expect("a team's file in its group-writable spool root");
}

#[test]
fn a_policy_file_that_is_no_plain_file_or_too_big_is_refused_without_hanging() {
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("fifo.toml");
    let made = std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap();
    assert!(made.success());
    // Nobody writes to it: a blocking open would hang here.
    assert!(untrusted_reason(&fifo).contains("not a plain file"));

    let huge = dir.path().join("huge.toml");
    let line = "# a comment line to make the file large\n";
    let count = (inbox_policy::MAX_POLICY_BYTES as usize) / line.len() + 2;
    std::fs::write(&huge, line.repeat(count)).unwrap();
    assert!(untrusted_reason(&huge).contains("larger than"));
    // A device that never ends is refused for what it is, not read to its end.
    assert!(untrusted_reason(std::path::Path::new("/dev/zero")).contains("not a plain file"));
}

#[test]
fn verdicts_serialize_for_the_cli_and_the_window() {
    let verdict = shipped_verdict(r#""priority": "critical""#);
    let json = serde_json::to_value(&verdict).unwrap();
    assert_eq!(json["rule"], "critical-needs-a-person");
    assert_eq!(json["autonomous"], "hold");
    assert_eq!(json["on_expiry"], "expire");
    assert_eq!(json["notify"], "critical");
    assert_eq!(json["buttons"], false);
    let problem = serde_json::to_value(&problems("x = 1\n")[0]).unwrap();
    assert_eq!(problem["line"], 1);
    assert!(problem["message"].as_str().unwrap().contains('x'));
}

#[test]
fn every_verdict_of_a_policy_is_listed_in_order() {
    let shipped = Policy::shipped();
    let described: Vec<String> = shipped.verdicts().iter().map(|v| v.describe()).collect();
    assert_eq!(described.len(), 4);
    assert_eq!(
        described[0],
        "rule critical-needs-a-person: holds autonomous mode; notifies critically, no buttons"
    );
    assert_eq!(
        described[3],
        "rule file-askers: honours autonomous mode; answers with defaults at expiry (not \
         agents' requests); notifies normally, with buttons"
    );
}

#[test]
fn the_policy_guide_quotes_the_shipped_policy_whole() {
    // docs/POLICY.md shows operators the shipped policy; it must be the one that ships.
    let guide = std::fs::read_to_string(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/POLICY.md"),
    )
    .unwrap();
    assert!(
        guide.contains(SHIPPED.trim_end()),
        "docs/POLICY.md no longer quotes crates/policy/shipped-policy.toml as it is"
    );
}

// ---------------------------------------------------------------------------------------
// Issue 25: an asker's own timeout, and agents

/// The verdict about `request` placed at `placed_at`.
fn judged(policy: &Policy, request: &Request, placed_at: chrono::DateTime<chrono::Utc>) -> Verdict {
    policy.judge_placed(
        &Facts {
            request,
            placed_by: None,
        },
        placed_at,
    )
}

/// A request with `fields`, one confirm question whose default is yes, placed by the MCP
/// server.
fn agent_request(fields: &str) -> Request {
    request_with(&format!(
        r#"{fields}, "source": {{"tool": "ask_operator"}}"#
    ))
}

#[test]
fn a_rule_that_lets_agents_default_at_expiry_must_name_min_timeout() {
    // Named by tool, by app, or by a glob that takes them in: refused, on on_expiry's line.
    for condition in [
        "tool = \"ask_operator\"",
        "tool = [\"deploy\", \"ask_*\"]",
        "app = \"claude-code\"",
        "app = \"CODEX\"",
        "tool = \"*\"",
    ] {
        let text = format!(
            "[[rule]]\nname = \"agents-low-stakes\"\n{condition}\non_expiry = \"default\"\n"
        );
        let problem = one_problem(&text, 4, "needs min_timeout = \"<duration>\"");
        assert!(
            problem
                .message
                .starts_with("rule \"agents-low-stakes\": on_expiry = \"default\"")
                && problem.message.contains("one-second timeout")
                && problem.message.contains("on_expiry = \"expire\""),
            "{condition}: {problem}"
        );
    }
    // With a minimum it is what the operator said; a rule that names no agent, or does
    // not default at expiry, needs none.
    for fine in [
        "tool = \"ask_operator\"\non_expiry = \"default\"\nmin_timeout = \"15m\"",
        "app = \"nightly\"\non_expiry = \"default\"",
        "on_expiry = \"default\"",
        "tool = \"ask_operator\"\non_expiry = \"expire\"",
        "tool = \"ask_operator\"\non_expiry = \"default\"\nnever_auto = true",
    ] {
        let text = format!("[[rule]]\nname = \"r\"\n{fine}\n");
        assert!(
            problems_of(&text).is_empty(),
            "{text}: {:?}",
            problems_of(&text)
        );
    }
}

#[test]
fn min_timeout_is_checked() {
    one_problem(
        "[[rule]]\nname = \"r\"\nmin_timeout = \"10m\"\n",
        3,
        "min_timeout is used only with on_expiry = \"default\"",
    );
    one_problem(
        "[[rule]]\nname = \"r\"\non_expiry = \"default\"\nnever_auto = true\nmin_timeout = \"10m\"\n",
        5,
        "without never_auto",
    );
    one_problem(
        "[[rule]]\nname = \"r\"\non_expiry = \"default\"\nmin_timeout = \"10\"\n",
        4,
        "min_timeout = \"10\" is not a duration",
    );
    one_problem(
        "[[rule]]\nname = \"r\"\non_expiry = \"default\"\nmin_timeout = \"0s\"\n",
        4,
        "allows any timeout",
    );
}

#[test]
fn an_agents_request_defaults_at_expiry_only_under_a_rule_with_min_timeout() {
    let placed_at = chrono::Utc::now();
    let catch_all = policy("[[rule]]\nname = \"all\"\non_expiry = \"default\"\n");
    let agent = agent_request(r#""timeout_seconds": 3600"#);
    let verdict = judged(&catch_all, &agent, placed_at);
    assert_eq!(verdict.rule, "all");
    assert_eq!(verdict.on_expiry, OnExpiry::Expire);
    assert!(!verdict.expiry_may_default());
    assert!(verdict
        .expiry_refused
        .as_deref()
        .unwrap()
        .contains("source tool \"ask_operator\""));
    // A file asker under the same rule keeps its defaults, and so does a request without
    // an expiry, which the rule has nothing to say about.
    let file = request_with(r#""timeout_seconds": 1"#);
    assert!(judged(&catch_all, &file, placed_at).expiry_may_default());
    let forever = agent_request(r#""priority": "low""#);
    let verdict = judged(&catch_all, &forever, placed_at);
    assert_eq!(verdict.expiry_refused, None);

    // The operator's explicit leave: at least ten minutes.
    let leave = policy(
        "[[rule]]\nname = \"agents-slow\"\ntool = \"ask_operator\"\non_expiry = \"default\"\n\
         min_timeout = \"10m\"\n",
    );
    for (seconds, defaults) in [(1, false), (599, false), (600, true), (3600, true)] {
        let request = agent_request(&format!(r#""timeout_seconds": {seconds}"#));
        let verdict = judged(&leave, &request, placed_at);
        assert_eq!(
            verdict.expiry_may_default(),
            defaults,
            "{seconds}: {verdict:?}"
        );
        if !defaults {
            let refused = verdict.expiry_refused.unwrap();
            assert!(
                refused.contains("less than the rule's min_timeout of 10m"),
                "{refused}"
            );
        }
    }
    // expires_at counts from when the request was placed.
    let at = |after: i64| {
        agent_request(&format!(
            r#""expires_at": "{}""#,
            (placed_at + chrono::Duration::seconds(after)).to_rfc3339()
        ))
    };
    assert!(!judged(&leave, &at(30), placed_at).expiry_may_default());
    assert!(judged(&leave, &at(900), placed_at).expiry_may_default());
    // The minimum holds for file askers too, where a rule names one.
    let any = policy("[[rule]]\nname = \"r\"\non_expiry = \"default\"\nmin_timeout = \"1m\"\n");
    let short = request_with(r#""timeout_seconds": 5"#);
    assert!(!judged(&any, &short, placed_at).expiry_may_default());
}

#[test]
fn min_timeout_is_described_and_serialised_as_written() {
    let verdict = judge(
        &policy(
            "[[rule]]\nname = \"agents-slow\"\ntool = \"ask_operator\"\non_expiry = \"default\"\n\
             min_timeout = \"1h 30m\"\n",
        ),
        &agent_request(r#""timeout_seconds": 7200"#),
    );
    assert_eq!(
        verdict.describe(),
        "rule agents-slow: holds autonomous mode; answers with defaults at expiry if it \
         allowed at least 1h 30m; notifies normally, with buttons"
    );
    let json = serde_json::to_value(&verdict).unwrap();
    assert_eq!(json["min_timeout"], "1h 30m");
    assert!(json.get("expiry_refused").is_none(), "{json}");
}

/// An escalation step's program runs as the operator: it is held to the policy file's own
/// rule, or the whole policy is refused (everything is then held for a person, and `policy
/// check` says why).
#[test]
fn an_escalation_program_others_could_change_is_refused() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    let bin = dir.path().join("bin");
    std::fs::create_dir(&bin).unwrap();
    std::fs::set_permissions(&bin, std::fs::Permissions::from_mode(0o755)).unwrap();
    let program = bin.join("page-me");
    std::fs::write(&program, "#!/bin/sh\n").unwrap();
    std::fs::set_permissions(&program, std::fs::Permissions::from_mode(0o755)).unwrap();
    let policy_with = |run: &str| {
        let path = dir.path().join("policy.toml");
        let text = format!(
            "[[rule]]\nname = \"page\"\nafter = \"10m\"\nthen = \"escalate\"\n\n\
             [[rule.escalate]]\nafter = \"0s\"\nrun = [{run:?}, \"--team\", \"ops\"]\n"
        );
        std::fs::write(&path, text).unwrap();
        path
    };
    let ours = program.display().to_string();
    // The temporary directory's ancestors are the system's own (root's, sticky /tmp).
    Policy::load(&policy_with(&ours)).expect("the operator's own program in a private folder");

    let reason = untrusted_reason(&policy_with("page-me"));
    assert!(reason.contains("not an absolute path"), "{reason}");

    std::fs::set_permissions(&program, std::fs::Permissions::from_mode(0o777)).unwrap();
    let reason = untrusted_reason(&policy_with(&ours));
    assert!(reason.contains("may change its program"), "{reason}");
    std::fs::set_permissions(&program, std::fs::Permissions::from_mode(0o755)).unwrap();

    std::fs::set_permissions(&bin, std::fs::Permissions::from_mode(0o777)).unwrap();
    let reason = untrusted_reason(&policy_with(&ours));
    assert!(reason.contains("could be removed or replaced"), "{reason}");
    std::fs::set_permissions(&bin, std::fs::Permissions::from_mode(0o755)).unwrap();

    if rustix::process::geteuid().is_root() {
        std::os::unix::fs::chown(&program, Some(65534), Some(65534)).unwrap();
        let reason = untrusted_reason(&policy_with(&ours));
        assert!(reason.contains("owned by another account"), "{reason}");
    }
}
