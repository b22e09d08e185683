//! What the operator approved is what runs: answers bound to the version shown, request files
//! that change after they were placed, and outcome files that must not be trusted. Each case
//! is an attack someone who can write into the spool could make, on a real spool directory
//! and a real SQLite file.

use std::fs;
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::Path;

use chrono::Utc;
use crossbeam_channel::Receiver;
use inbox_engine::spool::Area;
use inbox_engine::{Engine, Event, SettleError, Spool, State, Store, Wake};
use inbox_protocol::{check_answers, parse_request, sha256_hex, Outcome, OutcomeStatus, Surface};
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

    fn engine(&self) -> (Engine, Receiver<Event>) {
        let (tx, rx) = crossbeam_channel::unbounded();
        let store = Store::open(&self.db()).unwrap();
        let engine = Engine::new(self.spool.clone(), store)
            .unwrap()
            .with_events(tx);
        (engine, rx)
    }

    fn db(&self) -> std::path::PathBuf {
        self.dir.path().join("inbox.sqlite3")
    }

    /// Replaces a request file the way an attacker would: a new file renamed over it.
    fn swap(&self, id: &str, bytes: &[u8]) {
        let staged = self.dir.path().join("staged.json");
        fs::write(&staged, bytes).unwrap();
        fs::set_permissions(&staged, fs::Permissions::from_mode(0o600)).unwrap();
        fs::rename(&staged, self.spool.path(Area::Questions, id)).unwrap();
    }

    /// Writes an outcome file directly, as anyone who can write `answers/` could.
    fn forge(&self, id: &str, bytes: &[u8]) {
        let path = self.spool.path(Area::Answers, id);
        fs::write(&path, bytes).unwrap();
        fs::set_permissions(&path, fs::Permissions::from_mode(0o600)).unwrap();
    }

    fn version(&self, id: &str) -> String {
        sha256_hex(&self.spool.read(Area::Questions, id).unwrap())
    }
}

fn deploy(id: &str, target: &str) -> Vec<u8> {
    json!({"inbox": 1, "id": id, "title": format!("Deploy build 7 to {target}?"),
        "questions": [{"id": "go", "question": format!("Deploy to {target}?"), "type": "confirm"}]})
    .to_string()
    .into_bytes()
}

fn yes() -> Map<String, Value> {
    json!({"go": true}).as_object().unwrap().clone()
}

fn me() -> String {
    inbox_engine::operator::answered_by(&inbox_engine::operator::account())
}

/// A well-formed outcome for the request as placed: what an honest inbox writes.
fn honest_outcome(spool: &Spool, id: &str, answers: Value) -> Outcome {
    let bytes = spool.read(Area::Questions, id).unwrap();
    let request = parse_request(&bytes, Some(id)).unwrap();
    let set = check_answers(&request, answers.as_object().unwrap()).unwrap();
    Outcome::new(id, OutcomeStatus::Answered, me(), "other/1", Utc::now())
        .with_answers(set)
        .with_request_sha256(Some(request.sha256.clone()))
        .with_reply(&request)
}

fn blocked(engine: &Engine, id: &str) -> Option<String> {
    engine
        .queries()
        .detail(id)
        .unwrap()
        .unwrap()
        .summary
        .blocked
}

fn no_outcome(spool: &Spool, id: &str) -> bool {
    !spool.path(Area::Answers, id).exists()
}

#[test]
fn a_request_swapped_after_it_was_shown_is_not_answered() {
    let fx = Fixture::new();
    fx.spool
        .place_request("deploy-7", &deploy("deploy-7", "staging"))
        .unwrap();
    let (mut engine, events) = fx.engine();
    engine.turn(Wake::Start).unwrap();
    let shown = fx.version("deploy-7");

    // Between `show` and `answer`, the file becomes a PRODUCTION request.
    fx.swap("deploy-7", &deploy("deploy-7", "PRODUCTION"));
    match engine.answer("deploy-7", &yes(), Some(&shown), Surface::Cli) {
        Err(SettleError::Changed { id, reason }) => {
            assert_eq!(id, "deploy-7");
            assert!(reason.contains("changed after it was placed"), "{reason}");
        }
        other => panic!("expected Changed, got {other:?}"),
    }
    assert!(no_outcome(&fx.spool, "deploy-7"), "nothing was written");
    assert!(
        blocked(&engine, "deploy-7").is_some(),
        "the request is blocked"
    );
    assert!(events
        .try_iter()
        .any(|e| matches!(e, Event::Blocked { id, .. } if id == "deploy-7")));

    // Without a version (the CLI's default: the version the inbox holds), just the same.
    assert!(matches!(
        engine.answer("deploy-7", &yes(), None, Surface::Cli),
        Err(SettleError::Blocked { .. })
    ));
    assert!(matches!(
        engine.decline("deploy-7", "no", None, Surface::Cli),
        Err(SettleError::Blocked { .. })
    ));
    // History still says what was shown: staging.
    let detail = engine.queries().detail("deploy-7").unwrap().unwrap();
    assert!(detail.summary.title.contains("staging"));
    assert_eq!(detail.summary.state, State::Pending);
}

#[test]
fn a_swap_seen_by_the_watcher_blocks_the_request_at_once() {
    let fx = Fixture::new();
    fx.spool
        .place_request("d", &deploy("d", "staging"))
        .unwrap();
    let (mut engine, events) = fx.engine();
    engine.turn(Wake::Start).unwrap();
    fx.swap("d", &deploy("d", "PRODUCTION"));
    engine
        .turn(Wake::Paths(vec![fx.spool.path(Area::Questions, "d")]))
        .unwrap();
    let reason = blocked(&engine, "d").expect("blocked");
    assert!(reason.contains("changed after it was placed"), "{reason}");
    let problems = engine.queries().problems().unwrap();
    assert!(problems
        .iter()
        .any(|(path, reason, _)| path.ends_with("d.json") && reason.contains("changed")));
    assert!(events
        .try_iter()
        .any(|e| matches!(e, Event::Blocked { id, .. } if id == "d")));
}

#[test]
fn an_answer_for_another_version_is_refused_and_writes_nothing() {
    let fx = Fixture::new();
    fx.spool
        .place_request("d", &deploy("d", "staging"))
        .unwrap();
    let (mut engine, _events) = fx.engine();
    engine.sync().unwrap();
    let wrong = sha256_hex(b"another request");
    assert!(matches!(
        engine.answer("d", &yes(), Some(&wrong), Surface::Cli),
        Err(SettleError::Changed { .. })
    ));
    assert!(
        matches!(
            engine.answer("d", &yes(), Some("abc"), Surface::Cli),
            Err(SettleError::Changed { .. })
        ),
        "too short a prefix names no version"
    );
    assert!(no_outcome(&fx.spool, "d"));
    assert!(
        blocked(&engine, "d").is_none(),
        "the file itself did not change"
    );
    // The version shown, in full or as a 12-digit prefix, answers.
    let shown = fx.version("d");
    let outcome = engine
        .answer("d", &yes(), Some(&shown[..12]), Surface::Cli)
        .unwrap();
    assert_eq!(outcome.request_sha256.as_deref(), Some(shown.as_str()));
    assert_eq!(outcome.answered_by, me());
}

/// Writes the bytes of a forged outcome for a request (the spool, the id).
type Forger = Box<dyn Fn(&Spool, &str) -> Vec<u8>>;

#[test]
fn forged_outcomes_block_the_request_instead_of_answering_it() {
    let fx = Fixture::new();
    let (mut engine, _events) = fx.engine();
    let cases: Vec<(&str, Forger, &str)> = vec![
        (
            "garbage",
            Box::new(|_, _| b"{not json".to_vec()),
            "not a valid outcome",
        ),
        (
            "wrong-version",
            Box::new(|spool, id| {
                let mut o = honest_outcome(spool, id, json!({"go": true}));
                o.request_sha256 = Some(sha256_hex(b"another request"));
                o.to_file_bytes()
            }),
            "another version",
        ),
        (
            "no-version",
            Box::new(|spool, id| {
                let mut o = honest_outcome(spool, id, json!({"go": true}));
                o.request_sha256 = None;
                o.to_file_bytes()
            }),
            "which version",
        ),
        (
            "answers-that-do-not-fit",
            Box::new(|spool, id| {
                let mut o = honest_outcome(spool, id, json!({"go": true}));
                o.answers.insert("go".into(), json!("launch the missiles"));
                o.answers.insert("extra".into(), json!(1));
                o.to_file_bytes()
            }),
            "do not fit",
        ),
        (
            "someone-else",
            Box::new(|spool, id| {
                let mut o = honest_outcome(spool, id, json!({"go": true}));
                o.answered_by = "operator:the-ceo".into();
                o.to_file_bytes()
            }),
            "written by",
        ),
        (
            "policy-that-chose",
            Box::new(|spool, id| {
                let mut o = honest_outcome(spool, id, json!({"go": true}));
                o.status = OutcomeStatus::Defaulted;
                o.answered_by = "policy:expiry".into();
                o.to_file_bytes()
            }),
            "other than the request's defaults",
        ),
        (
            "free-form-name",
            Box::new(|spool, id| {
                let mut o = honest_outcome(spool, id, json!({"go": true}));
                o.answered_by = "the boss".into();
                o.to_file_bytes()
            }),
            "neither operator",
        ),
        (
            "policy-approval",
            Box::new(|spool, id| {
                let mut o = honest_outcome(spool, id, json!({"go": true}));
                o.answered_by = "policy:autonomous".into();
                o.to_file_bytes()
            }),
            "a policy cannot",
        ),
        (
            "forged-reply",
            Box::new(|spool, id| {
                let mut o = honest_outcome(spool, id, json!({"go": true}));
                o.reply = Some(json!({"action": "accept", "content": {"go": true}}));
                o.to_file_bytes()
            }),
            "reply",
        ),
        (
            "forged-rejection",
            Box::new(|spool, id| {
                let mut o = honest_outcome(spool, id, json!({"go": true}));
                o.status = OutcomeStatus::Rejected;
                o.answers.clear();
                o.answered_by = "policy:validation".into();
                o.errors = Some(vec![inbox_protocol::Problem::new("", "made up")]);
                o.to_file_bytes()
            }),
            "cannot have been rejected",
        ),
    ];
    for (id, forge, why) in &cases {
        fx.spool.place_request(id, &deploy(id, "staging")).unwrap();
        engine.sync().unwrap();
        fx.forge(id, &forge(&fx.spool, id));
        engine
            .turn(Wake::Paths(vec![fx.spool.path(Area::Answers, id)]))
            .unwrap();
        assert_eq!(
            engine.queries().state(id).unwrap(),
            Some(State::Pending),
            "{id}: a forged outcome is not an answer"
        );
        let reason = blocked(&engine, id).unwrap_or_else(|| panic!("{id} is not blocked"));
        assert!(
            reason.starts_with("an invalid outcome file blocks this request")
                && reason.contains(why),
            "{id}: {reason}"
        );
        match engine.answer(id, &yes(), None, Surface::Cli) {
            Err(SettleError::Blocked { reason, .. }) => {
                assert!(reason.contains(why), "{id}: {reason}")
            }
            other => panic!("{id}: expected Blocked, got {other:?}"),
        }
    }
    let problems = engine.queries().problems().unwrap();
    assert!(problems.len() >= cases.len(), "{problems:?}");

    // A rebuilt database (another inbox on the same spool) agrees: nothing is answered.
    drop(engine);
    fs::remove_file(fx.db()).unwrap();
    let (mut rebuilt, _) = fx.engine();
    rebuilt.sync().unwrap();
    for (id, _, _) in &cases {
        assert_eq!(
            rebuilt.queries().state(id).unwrap(),
            Some(State::Pending),
            "{id}"
        );
    }
}

#[test]
fn an_honest_outcome_from_another_inbox_is_adopted() {
    let fx = Fixture::new();
    fx.spool
        .place_request("d", &deploy("d", "staging"))
        .unwrap();
    let (mut engine, _events) = fx.engine();
    engine.sync().unwrap();
    fx.forge(
        "d",
        &honest_outcome(&fx.spool, "d", json!({"go": true})).to_file_bytes(),
    );
    engine.sync().unwrap();
    assert_eq!(
        engine.queries().state("d").unwrap(),
        Some(State::Settled(OutcomeStatus::Answered))
    );
    assert!(blocked(&engine, "d").is_none());
}

#[test]
fn once_the_invalid_outcome_is_gone_the_operator_can_answer() {
    let fx = Fixture::new();
    fx.spool
        .place_request("d", &deploy("d", "staging"))
        .unwrap();
    let (mut engine, _events) = fx.engine();
    engine.sync().unwrap();
    fx.forge("d", b"garbage");
    engine.sync().unwrap();
    assert!(blocked(&engine, "d").is_some());
    fs::remove_file(fx.spool.path(Area::Answers, "d")).unwrap();
    let outcome = engine.answer("d", &yes(), None, Surface::Cli).unwrap();
    assert_eq!(outcome.status, OutcomeStatus::Answered);
    assert!(blocked(&engine, "d").is_none());
}

#[test]
fn an_outcome_owned_by_another_account_is_never_read() {
    let fx = Fixture::new();
    fx.spool
        .place_request("d", &deploy("d", "staging"))
        .unwrap();
    let (mut engine, _events) = fx.engine();
    engine.sync().unwrap();
    fx.forge(
        "d",
        &honest_outcome(&fx.spool, "d", json!({"go": true})).to_file_bytes(),
    );
    let path = fx.spool.path(Area::Answers, "d");
    if std::os::unix::fs::chown(&path, Some(65534), Some(65534)).is_err() {
        eprintln!("SKIPPED: changing a file's owner needs root");
        return;
    }
    engine.sync().unwrap();
    assert_eq!(engine.queries().state("d").unwrap(), Some(State::Pending));
    assert!(blocked(&engine, "d").is_some());
}

#[test]
fn a_cancel_is_not_stopped_by_an_invalid_outcome() {
    let fx = Fixture::new();
    fx.spool
        .place_request("d", &deploy("d", "staging"))
        .unwrap();
    let (mut engine, _events) = fx.engine();
    engine.sync().unwrap();
    fx.forge("d", b"garbage");
    engine.sync().unwrap();
    engine.cancel("d", "no longer needed").unwrap();
    assert_eq!(engine.queries().state("d").unwrap(), Some(State::Cancelled));
}

#[test]
fn blocked_requests_are_left_alone_by_expiry() {
    let fx = Fixture::new();
    let mut body: Value = serde_json::from_slice(&deploy("d", "staging")).unwrap();
    body["timeout_seconds"] = json!(60);
    body["questions"][0]["default"] = json!(true);
    fx.spool
        .place_request("d", body.to_string().as_bytes())
        .unwrap();
    let (mut engine, _events) = fx.engine();
    engine.sync().unwrap();
    fx.swap("d", &deploy("d", "PRODUCTION"));
    engine
        .turn(Wake::Paths(vec![fx.spool.path(Area::Questions, "d")]))
        .unwrap();
    engine
        .turn(Wake::Deadline(Utc::now() + chrono::TimeDelta::hours(1)))
        .unwrap();
    assert!(
        no_outcome(&fx.spool, "d"),
        "no policy settles a changed request"
    );
}

#[test]
fn the_database_is_private_whatever_the_umask() {
    let fx = Fixture::new();
    let db = fx.db();
    fs::write(&db, b"").unwrap();
    fs::set_permissions(&db, fs::Permissions::from_mode(0o644)).unwrap();
    let (_engine, _events) = fx.engine();
    assert_eq!(mode(&db), 0o600);
}

fn mode(path: &Path) -> u32 {
    fs::metadata(path).unwrap().mode() & 0o777
}
