//! The operator's policy as the engine applies it, against a real spool directory and a
//! real SQLite file: which rule a request meets, what autonomous mode, expiry and a rule's
//! delay may do, escalation, snooze, notification loudness, and a policy file that changes
//! or breaks while requests wait.
//!
//! Time is driven through [`Wake::Deadline`], which takes the clock as a parameter: a
//! request placed now is "ten minutes old" at `Wake::Deadline(later(10))`, so no test
//! sleeps through a delay.

use std::fs;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use chrono::{DateTime, TimeDelta, Utc};
use crossbeam_channel::Receiver;
use inbox_engine::inbox_policy::{Loudness, Policy};
use inbox_engine::notifier::{Announcement, Notifier};
use inbox_engine::spool::Area;
use inbox_engine::store::RequestSummary;
use inbox_engine::{Engine, Event, PolicySource, Spool, State, Store, Wake};
use inbox_protocol::{DecidedBy, Outcome, OutcomeStatus, Surface, Trigger};
use serde_json::{json, Map, Value};

struct Fixture {
    dir: tempfile::TempDir,
    spool: Spool,
}

impl Fixture {
    fn new() -> Fixture {
        let dir = tempfile::tempdir().unwrap();
        let spool = Spool::open(dir.path().join("spool")).unwrap();
        Fixture { dir, spool }
    }

    /// An engine judging by `policy`, with its events and what it announced.
    fn engine(&self, policy: PolicySource) -> (Engine, Receiver<Event>, Announced) {
        let (tx, rx) = crossbeam_channel::unbounded();
        let announced = Announced::default();
        let store = Store::open(&self.dir.path().join("inbox.sqlite3")).unwrap();
        let engine = Engine::new(self.spool.clone(), store)
            .unwrap()
            .with_policy(policy)
            .with_events(tx)
            .with_notifier(Box::new(announced.clone()));
        (engine, rx, announced)
    }

    fn place(&self, id: &str, body: &Value) {
        self.spool
            .place_request(id, body.to_string().as_bytes())
            .unwrap();
    }

    /// The outcome in the spool, if the request is settled.
    fn outcome(&self, id: &str) -> Option<Outcome> {
        self.spool
            .exists(Area::Answers, id)
            .then(|| Outcome::from_file_bytes(&self.spool.read(Area::Answers, id).unwrap()))
            .map(Result::unwrap)
    }

    fn settled(&self, id: &str) -> Outcome {
        self.outcome(id)
            .unwrap_or_else(|| panic!("{id} has no outcome"))
    }

    fn policy_file(&self) -> PathBuf {
        self.dir.path().join("policy.toml")
    }
}

/// A policy that stays as written (no file behind it).
fn fixed(text: &str) -> PolicySource {
    PolicySource::fixed(Policy::parse(text).unwrap_or_else(|problems| panic!("{problems:?}")))
}

/// Records every announcement the engine hands to its notifier.
#[derive(Clone, Default)]
struct Announced(Arc<Mutex<Vec<Announcement>>>);

impl Notifier for Announced {
    fn announce(&self, fresh: Vec<Announcement>) {
        self.0.lock().unwrap().extend(fresh);
    }
}

impl Announced {
    /// Each announcement of `id` so far: how loud, whether with buttons, which escalation
    /// step (`None`: the announcement of a new or returning request).
    fn of(&self, id: &str) -> Vec<(Loudness, bool, Option<u32>)> {
        self.0
            .lock()
            .unwrap()
            .iter()
            .filter(|a| a.summary.id == id)
            .map(|a| (a.loudness, a.buttons, a.escalation))
            .collect()
    }
}

/// An autonomous request whose one required question has a default, so it settles itself
/// wherever a rule lets it. `extra` adds or replaces envelope fields; a null removes one.
fn request(id: &str, extra: Value) -> Value {
    let mut body = json!({"inbox": 1, "id": id, "title": "Rotate the logs", "mode": "autonomous",
        "questions": [{"id": "go", "question": "Rotate now?", "type": "confirm", "default": true}]});
    let fields = body.as_object_mut().unwrap();
    for (key, value) in extra.as_object().unwrap() {
        if value.is_null() {
            fields.remove(key);
        } else {
            fields.insert(key.clone(), value.clone());
        }
    }
    body
}

/// [`request`] without autonomous mode: it waits for the operator.
fn interactive(id: &str, extra: Value) -> Value {
    let mut body = request(id, extra);
    body.as_object_mut().unwrap().remove("mode");
    body
}

/// The one question without a default: nothing can answer it but a person.
const NO_DEFAULT: &str = r#"[{"id": "go", "question": "Rotate now?", "type": "confirm"}]"#;

fn no_default() -> Value {
    serde_json::from_str(NO_DEFAULT).unwrap()
}

fn summary(engine: &Engine, id: &str) -> RequestSummary {
    engine
        .queries()
        .detail(id)
        .unwrap()
        .unwrap_or_else(|| panic!("{id} is not in the store"))
        .summary
}

fn drain(events: &Receiver<Event>) -> Vec<Event> {
    events.try_iter().collect()
}

/// `minutes` from now: the clock a [`Wake::Deadline`] turn is given.
fn later(minutes: i64) -> DateTime<Utc> {
    Utc::now() + TimeDelta::minutes(minutes)
}

fn kinds_logged(engine: &Engine, id: &str) -> Vec<String> {
    engine
        .queries()
        .events_of(id)
        .unwrap()
        .into_iter()
        .map(|event| event.kind)
        .collect()
}

/// A string as TOML writes it (a JSON string is a valid TOML basic string).
fn toml_string(text: &str) -> String {
    serde_json::to_string(text).unwrap()
}

/// The OS account that owns a request file placed by this process, as a rule's `account`
/// matches it.
fn placing_account(fx: &Fixture) -> String {
    use std::os::unix::fs::MetadataExt;
    fx.place("whoami", &interactive("whoami", json!({})));
    let owner = fs::metadata(fx.spool.path(Area::Questions, "whoami"))
        .unwrap()
        .uid();
    fs::remove_file(fx.spool.path(Area::Questions, "whoami")).unwrap();
    inbox_engine::account_name(owner).expect("the account that runs the tests has a name")
}

/// Asserts that `id` was settled by its autonomous mode under `rule`.
fn assert_autonomous(fx: &Fixture, id: &str, rule: &str) {
    let outcome = fx.settled(id);
    assert_eq!(outcome.status, OutcomeStatus::Defaulted, "{id}");
    assert_eq!(outcome.answered_by, format!("policy:rule:{rule}"), "{id}");
    assert_eq!(outcome.trigger, Some(Trigger::Autonomous), "{id}");
    assert_eq!(outcome.answers["go"], json!(true), "{id}");
}

/// Asserts that `id` waits for a person, judged by `rule`, and returns why it was held.
fn assert_held(fx: &Fixture, engine: &Engine, id: &str, rule: &str) -> String {
    assert!(fx.outcome(id).is_none(), "{id} must not be settled");
    let summary = summary(engine, id);
    assert_eq!(summary.state, State::Pending, "{id}");
    let judgement = summary
        .judgement
        .unwrap_or_else(|| panic!("{id} was not judged"));
    assert_eq!(judgement.rule, rule, "{id}");
    judgement
        .held
        .unwrap_or_else(|| panic!("{id}: a held request says why"))
}

/// Every rule key matches as documented: text keys by case-insensitive glob over the whole
/// value (a missing value never matches), priority and kinds by list, title falling back to
/// the first question, and all of a rule's keys together. A matching request is settled by
/// the rule (it honours autonomous mode); the rest meet no rule and are held.
#[test]
fn every_rule_key_matches_as_documented() {
    let account = placing_account(&Fixture::new());
    let multi = json!([{"id": "go", "question": "Which?", "type": "multiChoice",
        "options": ["a", "b"], "default": ["a"]}]);
    let structured_multi = json!([{"id": "go", "question": "Which?", "type": "multi_choice",
        "choices": [{"id": "a", "label": "A"}, {"id": "b", "label": "B"}], "default": ["a"]}]);
    let confirm_and_text = json!([
        {"id": "go", "question": "Rotate now?", "type": "confirm", "default": true},
        {"id": "why", "question": "Why?", "type": "text", "required": false}]);
    // (the rule's conditions, [(a request's extra fields, whether the rule matches it)])
    let table: Vec<(String, Vec<(Value, bool)>)> = vec![
        (
            r#"app = "ci-*""#.into(),
            vec![
                (json!({"source": {"app": "ci-nightly"}}), true),
                (json!({"source": {"app": "CI-Nightly"}}), true),
                (json!({"source": {"app": "my-ci-nightly"}}), false),
                (json!({"source": {"run": "ci-nightly"}}), false),
                (json!({}), false),
            ],
        ),
        (
            r#"run = ["nightly-*", "weekly"]"#.into(),
            vec![
                (json!({"source": {"run": "nightly-42"}}), true),
                (json!({"source": {"run": "weekly"}}), true),
                (json!({"source": {"run": "weekly-2"}}), false),
                (json!({}), false),
            ],
        ),
        (
            r#"project = "infra""#.into(),
            vec![
                (json!({"source": {"project": "Infra"}}), true),
                (json!({"source": {"project": "infra-2"}}), false),
                (json!({"source": {"app": "infra"}}), false),
            ],
        ),
        (
            r#"host = "build-??""#.into(),
            vec![
                (json!({"source": {"host": "build-07"}}), true),
                (json!({"source": {"host": "build-7"}}), false),
                (json!({}), false),
            ],
        ),
        (
            r#"tool = "ask_operator""#.into(),
            vec![
                (json!({"source": {"tool": "ask_operator"}}), true),
                (json!({"source": {"tool": "ask_operator_2"}}), false),
                (json!({"source": {"app": "ask_operator"}}), false),
            ],
        ),
        // A "*" glob still needs a value: a request with no app meets no app rule.
        (
            r#"app = "*""#.into(),
            vec![
                (json!({"source": {"app": "anything"}}), true),
                (json!({"source": {"tool": "x"}}), false),
            ],
        ),
        (
            format!("account = {}", toml_string(&account)),
            vec![(json!({}), true)],
        ),
        (
            format!("account = {}", toml_string(&format!("not-{account}"))),
            vec![(json!({}), false)],
        ),
        (
            r#"priority = ["high", "critical"]"#.into(),
            vec![
                (json!({"priority": "high"}), true),
                (json!({"priority": "critical"}), true),
                (json!({"priority": "low"}), false),
                // No priority given is normal.
                (json!({}), false),
            ],
        ),
        (
            r#"priority = "normal""#.into(),
            vec![(json!({}), true), (json!({"priority": "high"}), false)],
        ),
        (
            r#"kinds = "multi_choice""#.into(),
            vec![
                (json!({"questions": multi}), true),
                (json!({"questions": structured_multi}), true),
                (json!({}), false),
            ],
        ),
        // kinds matches when any question is of a kind listed.
        (
            r#"kinds = ["text", "choice"]"#.into(),
            vec![
                (json!({"questions": confirm_and_text}), true),
                (json!({}), false),
            ],
        ),
        (
            r#"title = "rotate *""#.into(),
            vec![
                (json!({"title": "ROTATE the logs"}), true),
                (json!({"title": "Please rotate the logs"}), false),
                // Without a title, the first question stands for it.
                (json!({"title": null}), true),
            ],
        ),
        // Every key of a rule must hold.
        (
            "app = \"ci-*\"\npriority = \"high\"".into(),
            vec![
                (json!({"source": {"app": "ci-x"}, "priority": "high"}), true),
                (json!({"source": {"app": "ci-x"}}), false),
                (
                    json!({"source": {"app": "cd-x"}, "priority": "high"}),
                    false,
                ),
            ],
        ),
    ];

    for (conditions, requests) in &table {
        let fx = Fixture::new();
        let policy = format!("[[rule]]\nname = \"hit\"\n{conditions}\nautonomous = \"honour\"\n");
        let (mut engine, _events, _announced) = fx.engine(fixed(&policy));
        for (index, (extra, _)) in requests.iter().enumerate() {
            let id = format!("r{index}");
            fx.place(&id, &request(&id, extra.clone()));
        }
        engine.turn(Wake::Start).unwrap();
        for (index, (extra, matches)) in requests.iter().enumerate() {
            let id = format!("r{index}");
            let case = format!("rule {conditions:?}, request {extra}");
            if *matches {
                let outcome = fx
                    .outcome(&id)
                    .unwrap_or_else(|| panic!("{case}: unsettled"));
                assert_eq!(outcome.status, OutcomeStatus::Defaulted, "{case}");
                assert_eq!(outcome.answered_by, "policy:rule:hit", "{case}");
                assert_eq!(outcome.trigger, Some(Trigger::Autonomous), "{case}");
            } else {
                assert!(fx.outcome(&id).is_none(), "{case}: settled");
                let judgement = summary(&engine, &id).judgement.unwrap();
                assert_eq!(judgement.rule, "no-rule-matched", "{case}");
                assert!(judgement.held.is_some(), "{case}");
            }
        }
        if conditions.starts_with("account") {
            assert_eq!(summary(&engine, "r0").placed_by.as_deref(), Some(&*account));
        }
    }
}

/// The first rule that matches decides, even when a later one would say otherwise.
#[test]
fn the_first_rule_that_matches_decides() {
    let fx = Fixture::new();
    let policy = r#"
[[rule]]
name = "ci-waits"
app = "ci-*"
autonomous = "hold"

[[rule]]
name = "ci-nightly-goes"
app = "ci-nightly"
autonomous = "honour"

[[rule]]
name = "rest-go"
autonomous = "honour"
"#;
    let (mut engine, _events, _announced) = fx.engine(fixed(policy));
    fx.place(
        "ci",
        &request("ci", json!({"source": {"app": "ci-nightly"}})),
    );
    fx.place(
        "other",
        &request("other", json!({"source": {"app": "backup"}})),
    );
    engine.turn(Wake::Start).unwrap();

    assert_held(&fx, &engine, "ci", "ci-waits");
    assert_autonomous(&fx, "other", "rest-go");
}

/// `autonomous = "honour"` settles an autonomous request at once with its defaults;
/// `"hold"` keeps it pending, saying why in its judgement, the event and the log. A
/// required question without a default holds it even where the rule honours it.
#[test]
fn autonomous_mode_is_honoured_or_held() {
    let fx = Fixture::new();
    let policy = r#"
[[rule]]
name = "keep-for-me"
app = "careful"
autonomous = "hold"

[[rule]]
name = "let-it-go"
autonomous = "honour"
"#;
    let (mut engine, events, announced) = fx.engine(fixed(policy));
    fx.place("free", &request("free", json!({})));
    fx.place(
        "kept",
        &request("kept", json!({"source": {"app": "careful"}})),
    );
    fx.place(
        "no-default",
        &request("no-default", json!({"questions": no_default()})),
    );
    fx.place("asks", &interactive("asks", json!({})));
    engine.turn(Wake::Start).unwrap();

    assert_autonomous(&fx, "free", "let-it-go");
    let outcome = fx.settled("free");
    assert_eq!(outcome.decided_by, Some(DecidedBy::Policy));
    assert_eq!(outcome.rule.as_deref(), Some("policy:rule:let-it-go"));
    assert_eq!(outcome.surface, Some(Surface::Policy));
    assert_eq!(outcome.defaulted, ["go"]);
    assert_eq!(
        engine.queries().state("free").unwrap(),
        Some(State::Settled(OutcomeStatus::Defaulted))
    );

    let why = assert_held(&fx, &engine, "kept", "keep-for-me");
    assert_eq!(
        why,
        "rule keep-for-me: its autonomous mode is held for a person"
    );
    let why = assert_held(&fx, &engine, "no-default", "let-it-go");
    assert!(
        why.contains("no default for the required question go"),
        "{why}"
    );
    // An interactive request was never going to settle itself: nothing is held.
    assert!(fx.outcome("asks").is_none());
    assert_eq!(summary(&engine, "asks").judgement.unwrap().held, None);

    let seen = drain(&events);
    let mut held: Vec<&str> = seen
        .iter()
        .filter_map(|e| match e {
            Event::Held { id, .. } => Some(id.as_str()),
            _ => None,
        })
        .collect();
    held.sort_unstable();
    assert_eq!(held, ["kept", "no-default"]);
    assert!(seen.iter().any(|e| matches!(e,
        Event::Settled { id, status: OutcomeStatus::Defaulted, answered_by }
            if id == "free" && answered_by == "policy:rule:let-it-go")));
    assert_eq!(kinds_logged(&engine, "kept"), ["ingested", "held"]);
    let logged = engine.queries().events_of("kept").unwrap();
    assert_eq!(logged[1].detail["rule"], "keep-for-me");

    // Held requests are still announced to the operator, once.
    assert_eq!(announced.of("kept"), [(Loudness::Normal, true, None)]);
    assert!(announced.of("free").is_empty(), "a settled request is not");

    // Judged again (a start judges every pending request), the hold is not reported a
    // second time.
    engine.turn(Wake::Start).unwrap();
    assert!(!drain(&events)
        .iter()
        .any(|e| matches!(e, Event::Held { .. })));
    assert_eq!(kinds_logged(&engine, "kept"), ["ingested", "held"]);
}

/// `never_auto` overrides `autonomous = "honour"` and `on_expiry = "default"`: the request
/// waits, and at expiry it expires without answers. With `then = "default"` it is a
/// contradiction the policy refuses; `then = "expire"` still applies.
#[test]
fn never_auto_stops_everything_that_would_answer() {
    let fx = Fixture::new();
    let policy = r#"
[[rule]]
name = "hands-off"
app = "hands-off"
never_auto = true
autonomous = "honour"
on_expiry = "default"

[[rule]]
name = "hands-off-later"
never_auto = true
after = "10m"
then = "expire"
"#;
    let (mut engine, _events, _announced) = fx.engine(fixed(policy));
    fx.place(
        "auto",
        &request(
            "auto",
            json!({"source": {"app": "hands-off"}, "timeout_seconds": 600}),
        ),
    );
    fx.place(
        "delayed",
        &interactive("delayed", json!({"timeout_seconds": 3600})),
    );
    engine.turn(Wake::Start).unwrap();

    let why = assert_held(&fx, &engine, "auto", "hands-off");
    assert!(why.contains("nothing automatic may settle it"), "{why}");
    assert!(fx.outcome("delayed").is_none());

    engine.turn(Wake::Deadline(later(11))).unwrap();
    let expired = fx.settled("auto");
    assert_eq!(expired.status, OutcomeStatus::Expired);
    assert!(expired.answers.is_empty(), "{:?}", expired.answers);
    assert_eq!(expired.answered_by, "policy:rule:hands-off");
    assert_eq!(expired.trigger, Some(Trigger::Expiry));
    let delayed = fx.settled("delayed");
    assert_eq!(delayed.status, OutcomeStatus::Expired);
    assert!(delayed.answers.is_empty());
    assert_eq!(delayed.trigger, Some(Trigger::Delay));
    assert_eq!(delayed.answered_by, "policy:rule:hands-off-later");

    let contradiction =
        "[[rule]]\nname = \"x\"\nnever_auto = true\nafter = \"1m\"\nthen = \"default\"\n";
    let problems = Policy::parse(contradiction).unwrap_err();
    assert!(
        problems[0].to_string().contains("contradicts"),
        "{problems:?}"
    );
}

/// `on_expiry = "default"` lets the defaults answer an expired request (all required
/// questions must have one); `"expire"`, the safe default, settles it without answers.
#[test]
fn expiry_defaults_or_expires_as_the_rule_says() {
    let fx = Fixture::new();
    let policy = r#"
[[rule]]
name = "lenient"
app = "lenient"
on_expiry = "default"

[[rule]]
name = "strict"
on_expiry = "expire"
"#;
    let (mut engine, events, _announced) = fx.engine(fixed(policy));
    let lenient = json!({"source": {"app": "lenient"}, "timeout_seconds": 600});
    fx.place("lenient", &interactive("lenient", lenient.clone()));
    let mut without = lenient.clone();
    without["questions"] = no_default();
    fx.place(
        "lenient-no-default",
        &interactive("lenient-no-default", without),
    );
    fx.place(
        "strict",
        &interactive("strict", json!({"timeout_seconds": 600})),
    );
    engine.turn(Wake::Start).unwrap();

    engine.turn(Wake::Deadline(later(5))).unwrap();
    for id in ["lenient", "lenient-no-default", "strict"] {
        assert!(fx.outcome(id).is_none(), "{id} is not due yet");
    }

    engine.turn(Wake::Deadline(later(11))).unwrap();
    let defaulted = fx.settled("lenient");
    assert_eq!(defaulted.status, OutcomeStatus::Defaulted);
    assert_eq!(defaulted.answers["go"], json!(true));
    assert_eq!(defaulted.answered_by, "policy:rule:lenient");
    assert_eq!(defaulted.trigger, Some(Trigger::Expiry));

    let short = fx.settled("lenient-no-default");
    assert_eq!(short.status, OutcomeStatus::Expired);
    assert!(short.answers.is_empty());
    assert!(short
        .reason
        .as_deref()
        .unwrap()
        .contains("no default for: go"));

    let expired = fx.settled("strict");
    assert_eq!(expired.status, OutcomeStatus::Expired);
    assert!(expired.answers.is_empty());
    assert_eq!(expired.answered_by, "policy:rule:strict");
    assert_eq!(expired.trigger, Some(Trigger::Expiry));
    assert_eq!(
        engine.queries().state("strict").unwrap(),
        Some(State::Settled(OutcomeStatus::Expired))
    );
    let settled = drain(&events)
        .into_iter()
        .filter(|e| matches!(e, Event::Settled { .. }))
        .count();
    assert_eq!(settled, 3);
}

/// `after` + `then`: once the delay since the request was placed passes, its defaults
/// answer it, or it expires, or escalation begins (which answers nothing). Defaults that
/// miss a required question leave it to a person, and say so.
#[test]
fn a_rules_delay_defaults_expires_or_escalates() {
    let fx = Fixture::new();
    let policy = r#"
[[rule]]
name = "wait-then-default"
app = "d"
after = "10m"
then = "default"

[[rule]]
name = "wait-then-expire"
app = "e"
after = "10m"
then = "expire"

[[rule]]
name = "wait-then-escalate"
app = "x"
after = "10m"
then = "escalate"
"#;
    let (mut engine, events, announced) = fx.engine(fixed(policy));
    fx.place("d", &interactive("d", json!({"source": {"app": "d"}})));
    fx.place(
        "d-no-default",
        &interactive(
            "d-no-default",
            json!({"source": {"app": "d"}, "questions": no_default()}),
        ),
    );
    fx.place("e", &interactive("e", json!({"source": {"app": "e"}})));
    fx.place("x", &interactive("x", json!({"source": {"app": "x"}})));
    engine.turn(Wake::Start).unwrap();

    let placed_at = summary(&engine, "d").placed_at;
    let next = summary(&engine, "d").judgement.unwrap().next.unwrap();
    assert_eq!(next.at, placed_at + TimeDelta::minutes(10));
    assert_eq!(next.what, "its defaults answer it");
    assert_eq!(
        summary(&engine, "e").judgement.unwrap().next.unwrap().what,
        "it expires"
    );
    assert_eq!(
        summary(&engine, "x").judgement.unwrap().next.unwrap().what,
        "escalation step 1: notify again, critically"
    );
    drain(&events);

    engine.turn(Wake::Deadline(later(5))).unwrap();
    for id in ["d", "d-no-default", "e", "x"] {
        assert!(fx.outcome(id).is_none(), "{id} is not due yet");
    }
    assert!(drain(&events).is_empty());

    engine.turn(Wake::Deadline(later(11))).unwrap();
    let defaulted = fx.settled("d");
    assert_eq!(defaulted.status, OutcomeStatus::Defaulted);
    assert_eq!(defaulted.answers["go"], json!(true));
    assert_eq!(defaulted.answered_by, "policy:rule:wait-then-default");
    assert_eq!(defaulted.trigger, Some(Trigger::Delay));

    let expired = fx.settled("e");
    assert_eq!(expired.status, OutcomeStatus::Expired);
    assert!(expired.answers.is_empty());
    assert_eq!(expired.answered_by, "policy:rule:wait-then-expire");
    assert_eq!(expired.trigger, Some(Trigger::Delay));

    let why = assert_held(&fx, &engine, "d-no-default", "wait-then-default");
    assert!(why.contains("no default for: go"), "{why}");
    assert_eq!(
        summary(&engine, "d-no-default").judgement.unwrap().next,
        None
    );

    // Escalation without steps of its own: one critical reminder, and no answer.
    assert!(fx.outcome("x").is_none());
    assert_eq!(summary(&engine, "x").state, State::Pending);
    assert_eq!(
        announced.of("x"),
        [
            (Loudness::Normal, true, None),
            (Loudness::Critical, true, Some(1))
        ]
    );
    let seen = drain(&events);
    assert!(seen.contains(&Event::Held {
        id: "d-no-default".into(),
        reason: why.clone(),
    }));
    assert!(seen.contains(&Event::Escalated {
        id: "x".into(),
        step: 1,
        action: "notify again, critically".into(),
    }));

    // Nothing further is due: later turns leave them as they are.
    engine.turn(Wake::Deadline(later(120))).unwrap();
    assert!(fx.outcome("d-no-default").is_none());
    assert!(fx.outcome("x").is_none());
    assert!(!drain(&events)
        .iter()
        .any(|e| matches!(e, Event::Escalated { .. } | Event::Held { .. })));
}

/// A request a rule's delay left to a person (no default for a required question) keeps
/// saying why when it is judged again (at every start), and the hold is not reported anew.
#[test]
fn a_hold_by_a_rules_delay_survives_judging_again() {
    let fx = Fixture::new();
    let policy = "[[rule]]\nname = \"d\"\nafter = \"10m\"\nthen = \"default\"\n";
    let (mut engine, events, _announced) = fx.engine(fixed(policy));
    fx.place("r", &interactive("r", json!({"questions": no_default()})));
    engine.turn(Wake::Start).unwrap();
    engine.turn(Wake::Deadline(later(11))).unwrap();
    let why = assert_held(&fx, &engine, "r", "d");
    drain(&events);

    engine.turn(Wake::Start).unwrap();
    let judgement = summary(&engine, "r").judgement.unwrap();
    assert_eq!(
        judgement.held.as_deref(),
        Some(why.as_str()),
        "judged again, the request no longer says why it waits"
    );
    assert!(!drain(&events)
        .iter()
        .any(|e| matches!(e, Event::Held { .. })));
    assert!(fx.outcome("r").is_none());
}

/// Issue 25: an agent's request defaults at expiry only under a rule that names
/// `min_timeout`, and only when it allowed at least that long; otherwise it expires with no
/// answers, and the outcome says why. A file asker under the same catch-all keeps its
/// defaults.
#[test]
fn an_agents_timeout_defaults_only_past_the_rules_min_timeout() {
    let fx = Fixture::new();
    let policy = r#"
[[rule]]
name = "agents-slow"
tool = "ask_operator"
on_expiry = "default"
min_timeout = "10m"

[[rule]]
name = "everyone"
on_expiry = "default"
"#;
    let (mut engine, _events, _announced) = fx.engine(fixed(policy));
    let agent =
        |seconds: u64| json!({"source": {"tool": "ask_operator"}, "timeout_seconds": seconds});
    fx.place("agent-quick", &interactive("agent-quick", agent(60)));
    fx.place("agent-patient", &interactive("agent-patient", agent(600)));
    let hook = json!({"source": {"app": "codex"}, "timeout_seconds": 60});
    fx.place("hook", &interactive("hook", hook));
    fx.place("file", &interactive("file", json!({"timeout_seconds": 60})));
    engine.turn(Wake::Start).unwrap();
    let judgement = summary(&engine, "agent-quick").judgement.unwrap();
    assert!(
        judgement
            .summary
            .contains("less than the rule's min_timeout of 10m"),
        "{judgement:?}"
    );

    engine.turn(Wake::Deadline(later(11))).unwrap();
    for (id, rule, why) in [
        (
            "agent-quick",
            "agents-slow",
            "it allowed only 1m, less than the rule's min_timeout",
        ),
        ("hook", "everyone", "agent's request (source app \"codex\")"),
    ] {
        let outcome = fx.settled(id);
        assert_eq!(outcome.status, OutcomeStatus::Expired, "{id}");
        assert!(outcome.answers.is_empty(), "{id}: {outcome:?}");
        assert_eq!(outcome.answered_by, format!("policy:rule:{rule}"), "{id}");
        let reason = outcome.reason.unwrap();
        assert!(
            reason.contains(&format!("rule {rule}: its defaults do not answer it"))
                && reason.contains(why),
            "{id}: {reason}"
        );
    }
    for (id, rule) in [("agent-patient", "agents-slow"), ("file", "everyone")] {
        let outcome = fx.settled(id);
        assert_eq!(outcome.status, OutcomeStatus::Defaulted, "{id}");
        assert_eq!(outcome.answers["go"], json!(true), "{id}");
        assert_eq!(outcome.answered_by, format!("policy:rule:{rule}"), "{id}");
    }
}

/// The shipped policy's promises, as its comments state them.
#[test]
fn the_shipped_policy_keeps_its_promises() {
    let fx = Fixture::new();
    let (mut engine, _events, announced) = fx.engine(PolicySource::shipped());
    let agent = |priority: &str| json!({"source": {"tool": "ask_operator"}, "priority": priority, "timeout_seconds": 600});
    fx.place(
        "critical",
        &request(
            "critical",
            json!({"priority": "critical", "timeout_seconds": 600}),
        ),
    );
    fx.place("agent-auto", &request("agent-auto", agent("normal")));
    fx.place("agent-low", &interactive("agent-low", agent("low")));
    fx.place("agent-high", &request("agent-high", agent("high")));
    // An agent hook's request (source app claude-code) at low priority falls through to
    // the catch-all, which still does not let the agent's own timeout answer for it.
    fx.place(
        "hook-low",
        &interactive(
            "hook-low",
            json!({"source": {"app": "claude-code", "tool": "Bash"}, "priority": "low",
                   "timeout_seconds": 600}),
        ),
    );
    fx.place(
        "file-low",
        &interactive(
            "file-low",
            json!({"priority": "low", "timeout_seconds": 600}),
        ),
    );
    fx.place(
        "file-normal",
        &interactive("file-normal", json!({"timeout_seconds": 600})),
    );
    fx.place(
        "file-high",
        &interactive(
            "file-high",
            json!({"priority": "high", "timeout_seconds": 600}),
        ),
    );
    fx.place("file-auto", &request("file-auto", json!({})));
    fx.place(
        "pipeline-high-auto",
        &request("pipeline-high-auto", json!({"priority": "high"})),
    );
    engine.turn(Wake::Start).unwrap();

    // 1. A critical request waits for a person, notified critically, with no buttons.
    assert_held(&fx, &engine, "critical", "critical-needs-a-person");
    let judgement = summary(&engine, "critical").judgement.unwrap();
    assert_eq!(judgement.notify, Loudness::Critical);
    assert!(!judgement.buttons);
    assert_eq!(
        announced.of("critical"),
        [(Loudness::Critical, false, None)]
    );
    // 2. An agent (ask_operator) does not skip the operator, at any priority.
    assert_held(&fx, &engine, "agent-auto", "agents-ask-a-person");
    assert_held(&fx, &engine, "agent-high", "agents-ask-a-person");
    // 3, 4. A file asker's autonomous mode stands, high priority included.
    assert_autonomous(&fx, "file-auto", "file-askers");
    assert_autonomous(&fx, "pipeline-high-auto", "high-priority");
    assert_eq!(
        announced.of("file-normal"),
        [(Loudness::Normal, true, None)]
    );

    engine.turn(Wake::Deadline(later(11))).unwrap();
    // Expiry answers with defaults only a file asker's, at low or normal priority...
    for (id, rule) in [("file-low", "file-askers"), ("file-normal", "file-askers")] {
        let outcome = fx.settled(id);
        assert_eq!(outcome.status, OutcomeStatus::Defaulted, "{id}");
        assert_eq!(outcome.answers["go"], json!(true), "{id}");
        assert_eq!(outcome.trigger, Some(Trigger::Expiry), "{id}");
        assert_eq!(outcome.answered_by, format!("policy:rule:{rule}"), "{id}");
    }
    // ...at high and critical it expires, without answers, and so does every agent's
    // (issue 25: an agent's own timeout never makes its own default an answer).
    for (id, rule) in [
        ("critical", "critical-needs-a-person"),
        ("agent-auto", "agents-ask-a-person"),
        ("agent-low", "agents-ask-a-person"),
        ("agent-high", "agents-ask-a-person"),
        ("hook-low", "file-askers"),
        ("file-high", "high-priority"),
    ] {
        let outcome = fx.settled(id);
        assert_eq!(outcome.status, OutcomeStatus::Expired, "{id}");
        assert!(outcome.answers.is_empty(), "{id}");
        assert_eq!(outcome.trigger, Some(Trigger::Expiry), "{id}");
        assert_eq!(outcome.answered_by, format!("policy:rule:{rule}"), "{id}");
    }
}

/// Escalation steps are taken in order, each once, as events and in the request's log; a
/// `run` step gets the request as JSON on its standard input; a step that cannot run is
/// recorded; nothing in escalation answers the request, which a person still can.
#[test]
fn escalation_steps_run_in_order_and_never_answer() {
    let fx = Fixture::new();
    let out = fx.dir.path().join("paged.json");
    let page = toml_string(&format!("cat > '{}'", out.display()));
    let policy = format!(
        r#"
[[rule]]
name = "page-me"
after = "10m"
then = "escalate"

[[rule.escalate]]
after = "0s"
notify = "normal"

[[rule.escalate]]
after = "5m"
run = ["/bin/sh", "-c", {page}]

[[rule.escalate]]
after = "10m"
notify = "critical"

[[rule.escalate]]
after = "15m"
run = ["/no/such/pager"]
"#
    );
    let (mut engine, events, announced) = fx.engine(fixed(&policy));
    fx.place(
        "deploy",
        &interactive(
            "deploy",
            json!({"title": "Deploy prod", "source": {"app": "ci", "run": "42"}}),
        ),
    );
    engine.turn(Wake::Start).unwrap();
    drain(&events);

    // One step per step's time; the clock runs on between them.
    for minutes in [11, 16, 21, 26, 90] {
        engine.turn(Wake::Deadline(later(minutes))).unwrap();
    }
    let escalated: Vec<(u32, String)> = drain(&events)
        .into_iter()
        .filter_map(|e| match e {
            Event::Escalated { id, step, action } if id == "deploy" => Some((step, action)),
            _ => None,
        })
        .collect();
    let steps: Vec<u32> = escalated.iter().map(|(step, _)| *step).collect();
    assert_eq!(steps, [1, 2, 3, 4], "{escalated:?}");
    assert_eq!(escalated[0].1, "notify again");
    assert!(
        escalated[1].1.starts_with("run /bin/sh -c cat > ")
            && escalated[1].1.contains("(started, pid"),
        "{}",
        escalated[1].1
    );
    assert_eq!(escalated[2].1, "notify again, critically");
    assert!(
        escalated[3]
            .1
            .contains("failed: its program /no/such/pager cannot be checked"),
        "{}",
        escalated[3].1
    );

    let logged = engine.queries().events_of("deploy").unwrap();
    let kinds: Vec<&str> = logged.iter().map(|e| e.kind.as_str()).collect();
    assert_eq!(
        kinds,
        [
            "ingested",
            "escalated",
            "escalated",
            "escalated",
            "escalated"
        ]
    );
    for (entry, (step, action)) in logged[1..].iter().zip(&escalated) {
        assert_eq!(entry.detail["step"], json!(step));
        assert_eq!(entry.detail["action"], json!(action));
        assert_eq!(entry.detail["rule"], "page-me");
    }

    // The reminders went out as loudly as their steps say; the run steps notify nobody.
    assert_eq!(
        announced.of("deploy"),
        [
            (Loudness::Normal, true, None),
            (Loudness::Normal, true, Some(1)),
            (Loudness::Critical, true, Some(3)),
        ]
    );

    // The command got the request as JSON on its standard input.
    let paged = wait_for_json(&out);
    assert_eq!(paged["id"], "deploy");
    assert_eq!(paged["title"], "Deploy prod");
    assert_eq!(paged["rule"], "page-me");
    assert_eq!(paged["escalation_step"], 2);
    assert_eq!(paged["source"]["app"], "ci");
    assert_eq!(paged["request"]["questions"][0]["id"], "go");

    // Nothing answered it; a person still can.
    assert!(fx.outcome("deploy").is_none());
    assert_eq!(summary(&engine, "deploy").state, State::Pending);
    assert_eq!(summary(&engine, "deploy").judgement.unwrap().next, None);
    let mut yes = Map::new();
    yes.insert("go".into(), json!(false));
    let answered = engine.answer("deploy", &yes, None, Surface::Cli).unwrap();
    assert_eq!(answered.status, OutcomeStatus::Answered);
    assert_eq!(answered.decided_by, Some(DecidedBy::Person));
}

/// Reads the JSON a command writes, once it is whole (the command runs on its own).
fn wait_for_json(path: &Path) -> Value {
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let text = fs::read_to_string(path).unwrap_or_default();
        if let Ok(value) = serde_json::from_str::<Value>(&text) {
            return value;
        }
        assert!(
            Instant::now() < deadline,
            "the escalation command never wrote {}: {text:?}",
            path.display()
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// A snoozed request leaves the pending list and the count, is logged and reported, and
/// when the snooze ends it is pending again and announced anew. A snooze past the
/// request's expiry is cut to it.
#[test]
fn a_snooze_hides_a_request_until_it_ends() {
    let fx = Fixture::new();
    let (mut engine, events, announced) = fx.engine(PolicySource::shipped());
    fx.place("later", &interactive("later", json!({})));
    fx.place(
        "expiring",
        &interactive("expiring", json!({"timeout_seconds": 600})),
    );
    fx.place("other", &interactive("other", json!({})));
    engine.turn(Wake::Start).unwrap();
    assert_eq!(engine.queries().pending_count().unwrap(), 3);
    assert_eq!(announced.of("later"), [(Loudness::Normal, true, None)]);
    drain(&events);

    let snoozed = engine
        .snooze("later", Duration::from_secs(30 * 60))
        .unwrap();
    assert!(!snoozed.capped);
    let wanted = Utc::now() + TimeDelta::minutes(30);
    assert!(
        (wanted - snoozed.until).num_seconds().abs() < 60,
        "{snoozed:?}"
    );

    let capped = engine
        .snooze("expiring", Duration::from_secs(60 * 60))
        .unwrap();
    assert!(capped.capped);
    assert_eq!(Some(capped.until), summary(&engine, "expiring").deadline);

    let pending: Vec<String> = engine
        .queries()
        .pending()
        .unwrap()
        .into_iter()
        .map(|s| s.id)
        .collect();
    assert_eq!(pending, ["other"]);
    assert_eq!(engine.queries().pending_count().unwrap(), 1);
    let hidden: Vec<String> = engine
        .queries()
        .snoozed()
        .unwrap()
        .into_iter()
        .map(|s| s.id)
        .collect();
    assert_eq!(hidden, ["expiring", "later"], "the soonest back first");
    assert_eq!(
        drain(&events),
        [
            Event::Snoozed {
                id: "later".into(),
                until: snoozed.until,
                capped: false
            },
            Event::Snoozed {
                id: "expiring".into(),
                until: capped.until,
                capped: true
            },
        ]
    );
    assert_eq!(kinds_logged(&engine, "later"), ["ingested", "snoozed"]);

    // Before it ends: still hidden, not announced again.
    engine.turn(Wake::Deadline(later(5))).unwrap();
    assert_eq!(engine.queries().pending_count().unwrap(), 1);
    assert_eq!(announced.of("later").len(), 1);

    // Once it ends (the clock past its end), it is back and announced again. The capped
    // one ends with its expiry, which settles it as the policy says.
    engine.turn(Wake::Deadline(later(31))).unwrap();
    let events = drain(&events);
    assert!(
        events.contains(&Event::SnoozeEnded { id: "later".into() }),
        "{events:?}"
    );
    assert_eq!(
        announced.of("later"),
        [
            (Loudness::Normal, true, None),
            (Loudness::Normal, true, None)
        ]
    );
    assert_eq!(summary(&engine, "later").snoozed_until, None);
    assert!(engine
        .queries()
        .pending()
        .unwrap()
        .iter()
        .any(|s| s.id == "later"));
    assert_eq!(
        kinds_logged(&engine, "later"),
        ["ingested", "snoozed", "snooze_ended"]
    );
    assert!(fx.outcome("later").is_none(), "a snooze answers nothing");
    assert_eq!(fx.settled("expiring").trigger, Some(Trigger::Expiry));

    // The operator may end a snooze early.
    engine.snooze("other", Duration::from_secs(3600)).unwrap();
    assert_eq!(engine.queries().pending_count().unwrap(), 1);
    assert!(engine.unsnooze("other").unwrap());
    assert!(
        !engine.unsnooze("other").unwrap(),
        "it is no longer snoozed"
    );
    assert_eq!(engine.queries().pending_count().unwrap(), 2);
}

/// Escalation waits while the operator has the request snoozed, and goes on after.
#[test]
fn escalation_waits_for_a_snooze_to_end() {
    let fx = Fixture::new();
    let policy = "[[rule]]\nname = \"nag\"\nafter = \"10m\"\nthen = \"escalate\"\n";
    let (mut engine, events, _announced) = fx.engine(fixed(policy));
    fx.place("nagged", &interactive("nagged", json!({})));
    engine.turn(Wake::Start).unwrap();
    engine
        .snooze("nagged", Duration::from_secs(60 * 60))
        .unwrap();
    drain(&events);

    engine.turn(Wake::Deadline(later(11))).unwrap();
    assert!(!drain(&events)
        .iter()
        .any(|e| matches!(e, Event::Escalated { .. })));

    engine.turn(Wake::Deadline(later(61))).unwrap();
    let events = drain(&events);
    let ended = events
        .iter()
        .position(|e| matches!(e, Event::SnoozeEnded { .. }));
    let escalated = events
        .iter()
        .position(|e| matches!(e, Event::Escalated { step: 1, .. }));
    assert!(
        matches!((ended, escalated), (Some(a), Some(b)) if a < b),
        "{events:?}"
    );
    assert!(fx.outcome("nagged").is_none());
}

/// Ending a snooze early ends the wait of an escalation it deferred: the step is due, so
/// it is taken, not held back until the snooze would have ended.
#[test]
fn ending_a_snooze_early_lets_escalation_go_on() {
    let fx = Fixture::new();
    let policy = "[[rule]]\nname = \"nag\"\nafter = \"10m\"\nthen = \"escalate\"\n";
    let (mut engine, events, _announced) = fx.engine(fixed(policy));
    fx.place("nagged", &interactive("nagged", json!({})));
    engine.turn(Wake::Start).unwrap();
    engine
        .snooze("nagged", Duration::from_secs(60 * 60))
        .unwrap();
    engine.turn(Wake::Deadline(later(11))).unwrap();
    assert!(engine.unsnooze("nagged").unwrap());
    drain(&events);

    engine.turn(Wake::Deadline(later(13))).unwrap();
    let seen = drain(&events);
    assert!(
        seen.contains(&Event::Escalated {
            id: "nagged".into(),
            step: 1,
            action: "notify again, critically".into(),
        }),
        "the escalation step waits for the old snooze's end: {seen:?}, next deadline in {:?}",
        engine
            .queries()
            .next_deadline()
            .unwrap()
            .map(|at| at - Utc::now())
    );
}

/// How loudly: a silent rule never announces; within quiet hours only critical requests
/// are announced, the rest wait.
#[test]
fn notifications_follow_the_rules_loudness_and_quiet_hours() {
    let fx = Fixture::new();
    let silent = "[[rule]]\nname = \"hush\"\nnotify = \"silent\"\n";
    let (mut engine, _events, announced) = fx.engine(fixed(silent));
    fx.place("quiet", &interactive("quiet", json!({})));
    engine.turn(Wake::Start).unwrap();
    engine.turn(Wake::Rescan).unwrap();
    assert!(announced.of("quiet").is_empty());
    assert_eq!(
        summary(&engine, "quiet").judgement.unwrap().notify,
        Loudness::Silent
    );

    // Quiet hours around the present moment, in local time as the policy reads them.
    let fx = Fixture::new();
    let now = chrono::Local::now();
    let quiet = format!(
        "[quiet_hours]\nfrom = \"{}\"\nto = \"{}\"\n\n\
         [[rule]]\nname = \"urgent\"\ntitle = \"urgent*\"\nnotify = \"critical\"\n\n\
         [[rule]]\nname = \"rest\"\n",
        (now - TimeDelta::hours(2)).format("%H:%M"),
        (now + TimeDelta::hours(2)).format("%H:%M"),
    );
    let (mut engine, _events, announced) = fx.engine(fixed(&quiet));
    fx.place("routine", &interactive("routine", json!({})));
    fx.place(
        "urgent",
        &interactive("urgent", json!({"title": "Urgent: disk full"})),
    );
    fx.place(
        "critical",
        &interactive("critical", json!({"priority": "critical"})),
    );
    engine.turn(Wake::Start).unwrap();
    assert!(announced.of("routine").is_empty());
    assert_eq!(announced.of("urgent"), [(Loudness::Critical, true, None)]);
    assert_eq!(announced.of("critical"), [(Loudness::Normal, true, None)]);
    let critical = announced.0.lock().unwrap();
    assert!(critical
        .iter()
        .find(|a| a.summary.id == "critical")
        .unwrap()
        .is_critical());
}

fn write_policy(path: &Path, text: &str) {
    fs::write(path, text).unwrap();
}

/// The policy file changes while requests wait: the engine notices, says so, and judges
/// every pending request again (a held one settles, one that would have settled no longer
/// does). A broken file then keeps the last good policy and is reported once.
#[test]
fn a_changed_policy_file_judges_pending_requests_again() {
    let fx = Fixture::new();
    let path = fx.policy_file();
    write_policy(
        &path,
        r#"
[[rule]]
name = "patient"
app = "patient"
after = "10m"
then = "default"

[[rule]]
name = "hold-all"
autonomous = "hold"
"#,
    );
    let (mut engine, events, _announced) = fx.engine(PolicySource::file(&path));
    fx.place("auto", &request("auto", json!({})));
    fx.place(
        "patient",
        &interactive("patient", json!({"source": {"app": "patient"}})),
    );
    engine.turn(Wake::Start).unwrap();
    assert_held(&fx, &engine, "auto", "hold-all");
    assert!(summary(&engine, "patient")
        .judgement
        .unwrap()
        .next
        .is_some());
    drain(&events);

    write_policy(
        &path,
        "[[rule]]\nname = \"honour-all\"\nautonomous = \"honour\"\n",
    );
    engine.turn(Wake::Rescan).unwrap();
    let changed = drain(&events);
    assert!(
        changed.contains(&Event::PolicyChanged {
            origin: path.display().to_string(),
            rules: vec!["honour-all".into()],
        }),
        "{changed:?}"
    );
    assert_autonomous(&fx, "auto", "honour-all");
    let patient = summary(&engine, "patient").judgement.unwrap();
    assert_eq!(patient.rule, "honour-all");
    assert_eq!(patient.next, None);
    engine.turn(Wake::Deadline(later(11))).unwrap();
    assert!(
        fx.outcome("patient").is_none(),
        "the old rule's delay no longer applies"
    );
    drain(&events);

    write_policy(&path, "[[rule]]\nname = \"x\"\nbogus = 1\n");
    engine.turn(Wake::Rescan).unwrap();
    let broken = drain(&events);
    let troubles: Vec<&String> = broken
        .iter()
        .filter_map(|e| match e {
            Event::PolicyTrouble { message } => Some(message),
            _ => None,
        })
        .collect();
    assert_eq!(troubles.len(), 1, "{broken:?}");
    assert!(troubles[0].contains("last good policy"), "{}", troubles[0]);
    assert!(!broken
        .iter()
        .any(|e| matches!(e, Event::PolicyChanged { .. })));

    // The last good policy still decides.
    fx.place("auto-2", &request("auto-2", json!({})));
    engine.turn(Wake::Rescan).unwrap();
    assert_autonomous(&fx, "auto-2", "honour-all");
    assert!(!drain(&events)
        .iter()
        .any(|e| matches!(e, Event::PolicyTrouble { .. })));

    // Removing the file brings back the shipped policy.
    fs::remove_file(&path).unwrap();
    engine.turn(Wake::Rescan).unwrap();
    assert!(drain(&events).iter().any(|e| matches!(e,
        Event::PolicyChanged { origin, .. } if origin == "the shipped policy")));
    assert_eq!(
        summary(&engine, "patient").judgement.unwrap().rule,
        "file-askers"
    );
}

/// The count of a request's timed steps belongs to the rule that took them: after the
/// policy changed, a new rule's delay applies from its own first step.
#[test]
fn a_new_rule_counts_its_own_timed_steps() {
    let fx = Fixture::new();
    let path = fx.policy_file();
    write_policy(
        &path,
        "[[rule]]\nname = \"nag\"\nafter = \"10m\"\nthen = \"escalate\"\n",
    );
    let (mut engine, events, _announced) = fx.engine(PolicySource::file(&path));
    fx.place("r", &interactive("r", json!({})));
    engine.turn(Wake::Start).unwrap();
    engine.turn(Wake::Deadline(later(11))).unwrap();
    assert!(drain(&events)
        .iter()
        .any(|e| matches!(e, Event::Escalated { step: 1, .. })));

    write_policy(
        &path,
        "[[rule]]\nname = \"settle-it\"\nafter = \"10m\"\nthen = \"default\"\n",
    );
    engine.turn(Wake::Rescan).unwrap();
    let judgement = summary(&engine, "r").judgement.unwrap();
    assert_eq!(judgement.rule, "settle-it");
    assert_eq!(
        judgement.next.map(|next| next.what).as_deref(),
        Some("its defaults answer it"),
        "the old rule's escalation step must not count as the new rule's delay"
    );
    engine.turn(Wake::Deadline(later(12))).unwrap();
    let outcome = fx.settled("r");
    assert_eq!(outcome.status, OutcomeStatus::Defaulted);
    assert_eq!(outcome.trigger, Some(Trigger::Delay));
    assert_eq!(outcome.answered_by, "policy:rule:settle-it");
}

/// A policy file broken from the start never means "allow everything": every request
/// waits for a person, expiry answers nothing, and the trouble is reported. Fixing the
/// file puts it in force.
#[test]
fn a_policy_file_broken_from_the_start_holds_everything() {
    let fx = Fixture::new();
    let path = fx.policy_file();
    write_policy(&path, "[[rule]]\nname = \"oops\"\nautonomous = \"maybe\"\n");
    let (mut engine, events, _announced) = fx.engine(PolicySource::file(&path));
    fx.place("auto", &request("auto", json!({})));
    fx.place(
        "expiring",
        &interactive(
            "expiring",
            json!({"timeout_seconds": 600, "priority": "low"}),
        ),
    );
    engine.turn(Wake::Start).unwrap();

    let started = drain(&events);
    let trouble = started
        .iter()
        .find_map(|e| match e {
            Event::PolicyTrouble { message } => Some(message.clone()),
            _ => None,
        })
        .unwrap_or_else(|| panic!("the trouble is reported: {started:?}"));
    assert!(trouble.contains("held for a person"), "{trouble}");
    assert!(trouble.contains("maybe"), "{trouble}");
    let why = assert_held(&fx, &engine, "auto", "hold-everything");
    assert!(why.contains("nothing automatic may settle it"), "{why}");

    engine.turn(Wake::Deadline(later(11))).unwrap();
    let expired = fx.settled("expiring");
    assert_eq!(expired.status, OutcomeStatus::Expired);
    assert!(expired.answers.is_empty());
    assert_eq!(expired.answered_by, "policy:rule:hold-everything");
    assert!(fx.outcome("auto").is_none());

    write_policy(
        &path,
        "[[rule]]\nname = \"fixed\"\nautonomous = \"honour\"\n",
    );
    engine.turn(Wake::Rescan).unwrap();
    assert!(drain(&events).iter().any(|e| matches!(e,
        Event::PolicyChanged { rules, .. } if rules == &["fixed".to_owned()])));
    assert_autonomous(&fx, "auto", "fixed");
}

/// A CLI command (`list`, `show`) takes requests in without judging them; the running
/// inbox judges them on its next turn rather than treating them as already seen.
#[test]
fn a_request_another_process_took_in_is_still_judged() {
    let fx = Fixture::new();
    let (mut inbox, _events, _announced) = fx.engine(PolicySource::shipped());
    inbox.turn(Wake::Start).unwrap();

    fx.place("auto", &request("auto", json!({})));
    fx.place("held", &request("held", json!({"priority": "critical"})));
    // What `list` does: its own engine on the same database syncs and exits.
    let (mut cli, _cli_events, _) = fx.engine(PolicySource::shipped());
    cli.sync().unwrap();
    drop(cli);
    assert!(fx.outcome("auto").is_none(), "sync alone settles nothing");

    inbox.turn(Wake::Rescan).unwrap();
    assert_eq!(fx.settled("auto").answered_by, "policy:rule:file-askers");
    let held = inbox.queries().detail("held").unwrap().unwrap().summary;
    let judgement = held.judgement.expect("judged by the running inbox");
    assert_eq!(judgement.rule, "critical-needs-a-person");
    assert!(judgement.held.is_some(), "{judgement:?}");
}
