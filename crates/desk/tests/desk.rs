//! The desk as the window uses it, without a window: a real spool, real SQLite files, the
//! real background loop. Notifications go to whatever session bus there is (none in CI's
//! test run, which the notifier copes with).

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use inbox_app::*;
use inbox_desk::*;
use inbox_protocol::Surface;
use serde_json::{json, Map, Value};

struct Fixture {
    _dir: tempfile::TempDir,
    spool: PathBuf,
    desk: Arc<Desk>,
    events: Arc<Mutex<Vec<UiEvent>>>,
    shown: Arc<Mutex<u32>>,
    config: DeskConfig,
}

fn config(dir: &Path) -> DeskConfig {
    DeskConfig {
        spool_override: None,
        db_override: None,
        default_spool: dir.join("data/spool"),
        default_db: dir.join("data/inbox.sqlite3"),
        settings_path: dir.join("config/settings.json"),
        policy_path: dir.join("config/policy.toml"),
        app_name: "Answer Inbox test",
    }
}

fn start() -> Fixture {
    start_with(|_| {})
}

/// [`start`], after `prepare` has set up files the desk reads at start (a policy file).
fn start_with(prepare: impl FnOnce(&DeskConfig)) -> Fixture {
    let dir = tempfile::tempdir().unwrap();
    let config = config(dir.path());
    prepare(&config);
    let events = Arc::new(Mutex::new(Vec::new()));
    let shown = Arc::new(Mutex::new(0));
    let hooks = ShellHooks {
        emit: {
            let events = Arc::clone(&events);
            Arc::new(move |event| events.lock().unwrap().push(event))
        },
        show_window: {
            let shown = Arc::clone(&shown);
            Arc::new(move || *shown.lock().unwrap() += 1)
        },
        also_notify: Default::default(),
    };
    let desk = Desk::start(config.clone(), hooks).unwrap();
    Fixture {
        spool: config.default_spool.clone(),
        _dir: dir,
        desk,
        events,
        shown,
        config,
    }
}

fn eventually<T>(what: &str, mut probe: impl FnMut() -> Option<T>) -> T {
    let until = Instant::now() + Duration::from_secs(10);
    loop {
        if let Some(value) = probe() {
            return value;
        }
        assert!(Instant::now() < until, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

impl Fixture {
    fn place(&self, id: &str, body: Value) {
        place_in(&self.spool, id, body);
    }

    fn wait_pending(&self, id: &str) -> RowView {
        eventually(&format!("{id} pending"), || {
            self.desk
                .inbox()
                .pending()
                .unwrap()
                .into_iter()
                .find(|row| row.id == id)
        })
    }

    /// The version of the request the window shows: what its answer sends back.
    fn version(&self, id: &str) -> String {
        let version = self.desk.inbox().request(id).unwrap().version;
        assert_eq!(version.len(), 64, "a SHA-256 in hex: {version:?}");
        version
    }

    /// Answers `id` as the window does: with the version it shows.
    fn answer(&self, id: &str, given: &Map<String, Value>) -> Result<SubmitResult, IpcError> {
        self.desk.answer(id, given, &self.version(id))
    }

    fn decline(&self, id: &str, reason: &str) -> Result<SubmitResult, IpcError> {
        self.desk.decline(id, reason, &self.version(id))
    }

    fn outcome_file(&self, id: &str) -> Value {
        let bytes = std::fs::read(self.spool.join("answers").join(format!("{id}.json"))).unwrap();
        serde_json::from_slice(&bytes).unwrap()
    }
}

fn place_in(spool: &Path, id: &str, body: Value) {
    let tmp = spool.join("tmp").join(format!("{id}.json"));
    std::fs::write(&tmp, serde_json::to_vec(&body).unwrap()).unwrap();
    std::fs::rename(&tmp, spool.join("questions").join(format!("{id}.json"))).unwrap();
}

fn answers(pairs: &[(&str, Value)]) -> Map<String, Value> {
    pairs
        .iter()
        .map(|(k, v)| ((*k).to_owned(), v.clone()))
        .collect()
}

fn batch() -> Value {
    json!({
        "title": "Release 4.2",
        "source": {"app": "planu", "run": "r-9", "url": "https://ci.example.com/r/9"},
        "priority": "critical",
        "confirm_title": "Ship it?",
        "questions": [
            {"type": "yes_no", "question": "Run the **migrations**?", "description": "See <script>alert(1)</script>[log](https://ci.example.com/log)"},
            {"type": "single_choice", "question": "Which region first?", "label": "Region",
             "choices": [{"id": "eu", "label": "Europe"}, {"id": "us", "label": "Americas"}]},
            {"type": "free_text", "question": "Ticket id", "pattern": "^[A-Z]+-[0-9]+$"}
        ]
    })
}

#[test]
fn a_placed_request_is_listed_opened_and_answered() {
    let fx = start();
    fx.place("rel-42", batch());
    let row = fx.wait_pending("rel-42");
    assert_eq!(row.title, "Release 4.2");
    assert_eq!(row.priority, "critical");
    assert_eq!(row.question_count, 3);
    assert_eq!(
        row.source.url.as_deref(),
        Some("https://ci.example.com/r/9")
    );

    let view = fx.desk.inbox().request("rel-42").unwrap();
    assert_eq!(view.questions.len(), 3);
    assert_eq!(view.questions[1].tab_label, "Region");
    assert_eq!(view.questions[2].tab_label, "Ticket id");
    let description = view.questions[0].description_html.as_deref().unwrap();
    assert!(!description.contains("<script"), "{description}");
    assert!(
        description.contains("https://ci.example.com/log"),
        "{description}"
    );

    // A wrong answer names the question and changes nothing.
    let error = fx
        .answer(
            "rel-42",
            &answers(&[
                ("q1", json!(true)),
                ("q2", json!("eu")),
                ("q3", json!("nope")),
            ]),
        )
        .unwrap_err();
    assert_eq!(error.code, ErrorCode::Invalid);
    assert!(
        error.problems.iter().any(|p| p.pointer.contains("q3")),
        "{error:?}"
    );

    let given = answers(&[
        ("q1", json!(true)),
        ("q2", json!("eu")),
        ("q3", json!("OPS-7")),
    ]);
    match fx.answer("rel-42", &given).unwrap() {
        SubmitResult::Settled { outcome } => {
            assert_eq!(outcome.status, "answered");
            // The OS account running the app, as the window says who answers here.
            assert_eq!(outcome.answered_by, fx.desk.status().unwrap().operator);
            assert!(outcome.answered_by.starts_with("operator:"));
            let words: Vec<_> = outcome.answers.iter().map(|a| a.answer.as_str()).collect();
            assert_eq!(words, ["Yes", "Europe", "OPS-7"]);
        }
        other => panic!("expected settled, got {other:?}"),
    }
    let file = fx.outcome_file("rel-42");
    assert_eq!(
        file["answers"],
        json!({"q1": true, "q2": "eu", "q3": "OPS-7"})
    );
    // The outcome says a person decided, in the window.
    assert_eq!(file["decided_by"], "person");
    assert_eq!(file["surface"], "window");

    // The loop reports it, and it moves from Pending to History.
    eventually("the settled event", || {
        fx.events
            .lock()
            .unwrap()
            .iter()
            .any(|e| matches!(e, UiEvent::Settled { id, .. } if id == "rel-42"))
            .then_some(())
    });
    assert!(fx.desk.inbox().pending().unwrap().is_empty());
    let history = fx.desk.inbox().history().unwrap();
    assert_eq!(history.len(), 1);
    assert_eq!(history[0].row.state, "answered");
    assert!(history[0].time_to_answer_ms.is_some());
    assert_eq!(history[0].outcome.as_ref().unwrap().answers.len(), 3);
}

#[test]
fn the_second_answer_gets_the_first_outcome_back() {
    let fx = start();
    fx.place(
        "dup",
        json!({"questions": [{"type": "confirm", "question": "Go?"}]}),
    );
    fx.wait_pending("dup");
    let first = fx.answer("dup", &answers(&[("q1", json!(false))])).unwrap();
    assert!(matches!(first, SubmitResult::Settled { .. }));
    match fx.answer("dup", &answers(&[("q1", json!(true))])).unwrap() {
        SubmitResult::AlreadySettled { outcome } => {
            assert_eq!(outcome.answers[0].answer, "No");
        }
        other => panic!("expected already settled, got {other:?}"),
    }
    assert_eq!(fx.outcome_file("dup")["answers"]["q1"], json!(false));
}

#[test]
fn decline_needs_a_reason_and_records_it() {
    let fx = start();
    fx.place(
        "dec",
        json!({"questions": [{"type": "confirm", "question": "Delete prod?"}]}),
    );
    fx.wait_pending("dec");
    let error = fx.decline("dec", "  ").unwrap_err();
    assert_eq!(error.code, ErrorCode::Invalid);
    fx.decline("dec", "not during the freeze").unwrap();
    let file = fx.outcome_file("dec");
    assert_eq!(file["status"], "declined");
    assert_eq!(file["reason"], "not during the freeze");
}

#[test]
fn unknown_requests_are_not_found() {
    let fx = start();
    assert_eq!(
        fx.desk.inbox().request("nope").unwrap_err().code,
        ErrorCode::NotFound
    );
    let error = fx.desk.answer("../etc", &Map::new(), "").unwrap_err();
    assert_eq!(error.code, ErrorCode::NotFound);
}

#[test]
fn problems_list_invalid_requests_and_stray_files() {
    let fx = start();
    fx.place(
        "bad",
        json!({"questions": [{"type": "choice", "question": "Which?"}]}),
    );
    std::fs::create_dir(fx.spool.join("questions/a-directory.json")).unwrap();
    let problems = eventually("two problems", || {
        let problems = fx.desk.inbox().problems().unwrap();
        (problems.len() == 2).then_some(problems)
    });
    let rejected = problems
        .iter()
        .find(|p| p.id.as_deref() == Some("bad"))
        .unwrap();
    assert!(!rejected.reasons.is_empty());
    assert!(problems.iter().any(|p| p.path.contains("a-directory")));
}

#[test]
fn a_notification_button_answers_and_a_click_opens_the_window() {
    let fx = start();
    fx.place(
        "n1",
        json!({"questions": [{"type": "yes_no", "question": "Restart the worker?"}]}),
    );
    fx.wait_pending("n1");
    let version = fx.version("n1");
    fx.desk.handle_choice(Chosen::Answer {
        id: "n1".into(),
        answers: answers(&[("q1", json!(true))]),
        version: version.clone(),
    });
    assert_eq!(fx.outcome_file("n1")["answers"], json!({"q1": true}));
    // A button's answer is recorded as the bubble's, not the window's.
    assert_eq!(fx.outcome_file("n1")["surface"], "bubble");
    assert_eq!(fx.outcome_file("n1")["decided_by"], "person");
    // Pressing again (a second bubble, another inbox) cannot write twice; the window is told.
    fx.desk.handle_choice(Chosen::Answer {
        id: "n1".into(),
        answers: answers(&[("q1", json!(false))]),
        version,
    });
    assert_eq!(fx.outcome_file("n1")["answers"], json!({"q1": true}));
    assert!(fx
        .events
        .lock()
        .unwrap()
        .iter()
        .any(|e| matches!(e, UiEvent::Error { message } if message.contains("already"))));

    fx.desk.handle_choice(Chosen::Open(Some("n1".into())));
    assert_eq!(*fx.shown.lock().unwrap(), 1);
    assert!(fx
        .events
        .lock()
        .unwrap()
        .iter()
        .any(|e| matches!(e, UiEvent::Focus { id: Some(id) } if id == "n1")));
}

#[test]
fn settings_switch_the_spool_and_are_kept() {
    let fx = start();
    fx.place(
        "old",
        json!({"questions": [{"type": "confirm", "question": "Old?"}]}),
    );
    fx.wait_pending("old");

    let elsewhere = fx.config.default_spool.with_file_name("other-spool");
    let mut settings = fx.desk.settings();
    settings.spool_dir = elsewhere.display().to_string();
    settings.do_not_disturb = true;
    fx.desk.save_settings(settings.clone()).unwrap();
    assert_eq!(fx.desk.status().unwrap().notifications, "do_not_disturb");
    assert_eq!(
        fx.desk.status().unwrap().spool_dir,
        elsewhere.display().to_string()
    );

    // The new spool is watched, and its inbox is its own.
    place_in(
        &elsewhere,
        "new",
        json!({"questions": [{"type": "confirm", "question": "New?"}]}),
    );
    eventually("the new spool's request", || {
        let ids: Vec<_> = fx
            .desk
            .inbox()
            .pending()
            .unwrap()
            .into_iter()
            .map(|r| r.id)
            .collect();
        (ids == ["new"]).then_some(())
    });
    let saved: Settings =
        serde_json::from_slice(&std::fs::read(&fx.config.settings_path).unwrap()).unwrap();
    assert_eq!(saved, settings);

    // A bad spool path is refused and nothing changes.
    let mut bad = fx.desk.settings();
    bad.spool_dir = "relative/spool".into();
    assert_eq!(
        fx.desk.save_settings(bad).unwrap_err().code,
        ErrorCode::BadInput
    );
    assert_eq!(fx.desk.settings(), settings);
}

#[test]
fn only_web_links_leave_the_app() {
    let fx = start();
    let mut opened = Vec::new();
    fx.desk
        .open_link("https://ci.example.com/r/1", |url| {
            opened.push(url.to_owned());
            Ok(())
        })
        .unwrap();
    let error = fx
        .desk
        .open_link("file:///etc/passwd", |_| panic!("must not open"))
        .unwrap_err();
    assert_eq!(error.code, ErrorCode::BadInput);
    assert_eq!(opened, ["https://ci.example.com/r/1"]);
}

/// The window checks the answers through Rust as the operator works: a pattern built to make
/// a backtracking engine take forever answers at once here, a mismatch is named, and a
/// question required by another answer is named too; nothing is written.
#[test]
fn answers_are_checked_as_on_submit_without_writing() {
    let fx = start();
    fx.place(
        "ticket",
        json!({"questions": [
            {"id": "t", "type": "text", "question": "Ticket?", "pattern": "^(a|a)*b$|(x+x+)+y"}]}),
    );
    fx.place(
        "interrupt",
        json!({"action_request": {"action": "send_email", "args": {"to": "ops@example.com"}},
               "config": {"allow_accept": true, "allow_respond": true}}),
    );
    fx.wait_pending("ticket");
    fx.wait_pending("interrupt");
    let inbox = fx.desk.inbox();
    let answers = |value: Value| value.as_object().unwrap().clone();

    let hostile = answers(json!({"t": "a".repeat(5_000)}));
    let problems = inbox.check_answers("ticket", &hostile).unwrap();
    assert_eq!(problems.len(), 1, "{problems:?}");
    assert_eq!(problems[0].pointer, "/t");
    assert!(
        problems[0].message.contains("does not match"),
        "{problems:?}"
    );
    assert!(inbox
        .check_answers("ticket", &answers(json!({"t": "aaab"})))
        .unwrap()
        .is_empty());
    let unknown = inbox
        .check_answers("ticket", &answers(json!({"t": "aaab", "nope": 1})))
        .unwrap();
    assert_eq!(unknown[0].pointer, "/nope");

    let respond = answers(json!({"decision": "response"}));
    let problems = inbox.check_answers("interrupt", &respond).unwrap();
    assert_eq!(problems.len(), 1, "{problems:?}");
    assert_eq!(problems[0].pointer, "/response");
    assert!(problems[0].message.contains("required"), "{problems:?}");
    assert!(inbox
        .check_answers("interrupt", &answers(json!({"decision": "accept"})))
        .unwrap()
        .is_empty());

    // The form says when the response is required, in the questions' words.
    let view = inbox.request("interrupt").unwrap();
    let when: Vec<Option<&str>> = view
        .questions
        .iter()
        .map(|q| q.required_when.as_deref())
        .collect();
    assert_eq!(
        when,
        [
            None,
            Some("when Decision is “Respond: send the agent a message…”")
        ]
    );

    assert!(inbox.check_answers("missing", &respond).is_err());
    assert!(!fx.spool.join("answers/ticket.json").exists());
    assert!(!fx.spool.join("answers/interrupt.json").exists());
}

/// A SHA-256 in hex that no request here has.
const OTHER_VERSION: &str = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef";

/// An answer sent for a version of the request other than the one the inbox holds (the
/// window showed an older or a different file) is refused as `changed`, and nothing is
/// written; the same answer with the version shown goes through.
#[test]
fn an_answer_for_another_version_is_refused_as_changed() {
    let fx = start();
    fx.place(
        "stale",
        json!({"questions": [{"type": "confirm", "question": "Deploy build 7 to staging?"}]}),
    );
    fx.wait_pending("stale");
    let given = answers(&[("q1", json!(true))]);

    let error = fx.desk.answer("stale", &given, OTHER_VERSION).unwrap_err();
    assert_eq!(error.code, ErrorCode::Changed, "{error:?}");
    assert!(error.message.contains("version"), "{}", error.message);
    let error = fx
        .desk
        .decline("stale", "not now", OTHER_VERSION)
        .unwrap_err();
    assert_eq!(error.code, ErrorCode::Changed, "{error:?}");
    // The window's IPC error says so in its code.
    let wire = serde_json::to_value(&error).unwrap();
    assert_eq!(wire["code"], "changed", "{wire}");
    assert!(!fx.spool.join("answers/stale.json").exists());

    assert!(matches!(
        fx.answer("stale", &given).unwrap(),
        SubmitResult::Settled { .. }
    ));
    assert_eq!(fx.outcome_file("stale")["answers"], json!({"q1": true}));
}

/// The file shown is swapped for another request under the same id (staging becomes
/// production): the answer given to what was shown is refused, no outcome is written, and
/// the request is blocked for good, in the list and in its view.
#[test]
fn a_swapped_request_is_not_answered_and_is_blocked() {
    let fx = start();
    fx.place(
        "deploy-7",
        json!({"title": "Deploy build 7", "questions": [
            {"type": "confirm", "question": "Deploy build 7 to staging?"}]}),
    );
    fx.wait_pending("deploy-7");
    let shown = fx.desk.inbox().request("deploy-7").unwrap();
    assert_eq!(shown.questions[0].question, "Deploy build 7 to staging?");
    assert_eq!(shown.row.blocked, None);

    fx.place(
        "deploy-7",
        json!({"title": "Deploy build 7", "questions": [
            {"type": "confirm", "question": "Deploy build 7 to PRODUCTION?"}]}),
    );
    let error = fx
        .desk
        .answer("deploy-7", &answers(&[("q1", json!(true))]), &shown.version)
        .unwrap_err();
    // Changed when the answer finds the swap first, blocked when the loop saw it first.
    assert!(
        matches!(error.code, ErrorCode::Changed | ErrorCode::Blocked),
        "{error:?}"
    );
    assert!(!fx.spool.join("answers/deploy-7.json").exists());

    let row = eventually("deploy-7 blocked", || {
        fx.desk
            .inbox()
            .pending()
            .unwrap()
            .into_iter()
            .find(|row| row.id == "deploy-7" && row.blocked.is_some())
    });
    assert!(row.blocked.unwrap().contains("changed"));
    let view = fx.desk.inbox().request("deploy-7").unwrap();
    assert!(view.row.blocked.is_some());
    // The view still shows what was shown, never the swapped-in question.
    assert_eq!(view.questions[0].question, "Deploy build 7 to staging?");
    assert_eq!(view.version, shown.version);

    let error = fx
        .desk
        .decline("deploy-7", "not this", &view.version)
        .unwrap_err();
    assert_eq!(error.code, ErrorCode::Blocked, "{error:?}");
    assert_eq!(serde_json::to_value(&error).unwrap()["code"], "blocked");
    assert!(!fx.spool.join("answers/deploy-7.json").exists());
}

/// Garbage in `answers/<id>.json` is not an answer: the request stays pending, shown as
/// blocked with the reason, and nobody can answer it here.
#[test]
fn an_invalid_outcome_file_blocks_the_request() {
    let fx = start();
    fx.place(
        "forged",
        json!({"questions": [{"type": "confirm", "question": "Merge?"}]}),
    );
    fx.wait_pending("forged");
    let version = fx.version("forged");
    let tmp = fx.spool.join("tmp/forged.out");
    std::fs::write(&tmp, b"{\"not\": \"an outcome\"}").unwrap();
    std::fs::rename(&tmp, fx.spool.join("answers/forged.json")).unwrap();

    let row = eventually("forged blocked", || {
        fx.desk
            .inbox()
            .pending()
            .unwrap()
            .into_iter()
            .find(|row| row.id == "forged" && row.blocked.is_some())
    });
    assert_eq!(row.state, "pending");
    let view = fx.desk.inbox().request("forged").unwrap();
    assert_eq!(view.row.blocked, row.blocked);
    assert!(view.outcome.is_none(), "{:?}", view.outcome);
    assert!(fx.desk.inbox().history().unwrap().is_empty());

    let error = fx
        .desk
        .answer("forged", &answers(&[("q1", json!(true))]), &version)
        .unwrap_err();
    assert_eq!(error.code, ErrorCode::Blocked, "{error:?}");
    assert_eq!(
        std::fs::read(fx.spool.join("answers/forged.json")).unwrap(),
        b"{\"not\": \"an outcome\"}"
    );
}

/// A directory that is not a spool (it holds other things) is refused from Settings with a
/// message naming what is in it; nothing in it is touched, and the inbox, its settings and
/// their file stay as they were.
#[test]
fn settings_refuse_a_directory_that_is_not_a_spool() {
    let fx = start();
    let before = fx.desk.settings();
    fx.desk.save_settings(before.clone()).unwrap();
    let saved = std::fs::read(&fx.config.settings_path).unwrap();

    let project = fx.config.default_spool.with_file_name("some-project");
    std::fs::create_dir_all(project.join("tmp")).unwrap();
    std::fs::write(project.join("tmp/build.o"), b"object").unwrap();
    std::fs::write(project.join("Cargo.toml"), b"[package]").unwrap();
    let listing = |dir: &Path| {
        let mut names: Vec<_> = walk(dir);
        names.sort();
        names
    };
    let untouched = listing(&project);

    let mut settings = before.clone();
    settings.spool_dir = project.display().to_string();
    let error = fx.desk.save_settings(settings).unwrap_err();
    assert_eq!(error.code, ErrorCode::BadInput, "{error:?}");
    assert!(error.message.contains("Cargo.toml"), "{}", error.message);
    assert!(
        error.message.contains("Nothing was changed"),
        "{}",
        error.message
    );
    assert_eq!(listing(&project), untouched);
    assert_eq!(fx.desk.settings(), before);
    assert_eq!(std::fs::read(&fx.config.settings_path).unwrap(), saved);
    assert_eq!(
        fx.desk.status().unwrap().spool_dir,
        fx.spool.display().to_string()
    );
}

/// Team mode is a setting: the spool is reopened for the group, the status says so, and an
/// unknown group is refused with everything left as it was.
#[test]
fn team_mode_is_a_setting() {
    let fx = start();
    assert_eq!(fx.desk.status().unwrap().trust, "private");

    let mut unknown = fx.desk.settings();
    unknown.team = Some("no-such-group-4711".into());
    let error = fx.desk.save_settings(unknown).unwrap_err();
    assert_eq!(error.code, ErrorCode::BadInput, "{error:?}");
    assert!(
        error.message.contains("no-such-group-4711"),
        "{}",
        error.message
    );
    assert_eq!(fx.desk.settings().team, None);
    assert_eq!(fx.desk.status().unwrap().trust, "private");

    // This account's own group, by number: always there, and this account is in it.
    let gid = primary_gid();
    let mut team = fx.desk.settings();
    team.team = Some(format!(" {gid} "));
    let saved = fx.desk.save_settings(team).unwrap();
    assert_eq!(saved.team.as_deref(), Some(gid.as_str()));
    assert_eq!(fx.desk.status().unwrap().trust, format!("team:{gid}"));
    fx.place(
        "shared",
        json!({"questions": [{"type": "confirm", "question": "Shared?"}]}),
    );
    fx.wait_pending("shared");
    assert!(matches!(
        fx.answer("shared", &answers(&[("q1", json!(true))]))
            .unwrap(),
        SubmitResult::Settled { .. }
    ));

    // Back to private with an empty group.
    let mut private = fx.desk.settings();
    private.team = Some(String::new());
    assert_eq!(fx.desk.save_settings(private).unwrap().team, None);
    assert_eq!(fx.desk.status().unwrap().trust, "private");
}

/// This process's real group id, from /proc.
fn primary_gid() -> String {
    let status = std::fs::read_to_string("/proc/self/status").unwrap();
    let line = status.lines().find(|l| l.starts_with("Gid:")).unwrap();
    line.split_whitespace().nth(1).unwrap().to_owned()
}

/// Every path under `dir`, relative to it.
fn walk(dir: &Path) -> Vec<PathBuf> {
    let mut found = Vec::new();
    let mut todo = vec![dir.to_owned()];
    while let Some(next) = todo.pop() {
        for entry in std::fs::read_dir(&next).unwrap().flatten() {
            let path = entry.path();
            found.push(path.strip_prefix(dir).unwrap().to_owned());
            if entry.file_type().unwrap().is_dir() {
                todo.push(path);
            }
        }
    }
    found
}

/// A spool others can write to is reported to the window (status warnings), for as long as
/// it stays so.
#[test]
fn an_unsafe_spool_is_reported_until_it_is_fixed() {
    use std::os::unix::fs::PermissionsExt;
    let fx = start();
    assert_eq!(fx.desk.status().unwrap().warnings, Vec::<String>::new());
    let questions = fx.spool.join("questions");
    std::fs::set_permissions(&questions, std::fs::Permissions::from_mode(0o777)).unwrap();
    let warnings = fx.desk.status().unwrap().warnings;
    assert!(
        warnings.iter().any(|w| w.contains("questions")),
        "{warnings:?}"
    );
    std::fs::set_permissions(&questions, std::fs::Permissions::from_mode(0o700)).unwrap();
    assert_eq!(fx.desk.status().unwrap().warnings, Vec::<String>::new());
}

/// An autonomous request with a default for every question, marked critical: the shipped
/// policy's first rule holds it for a person instead of letting it settle itself.
fn critical_autonomous() -> Value {
    json!({"title": "Rotate the signing key", "priority": "critical", "mode": "autonomous",
           "questions": [{"id": "go", "type": "confirm", "question": "Rotate now?",
                          "default": false}]})
}

/// The window sees why the policy holds a request and which rule did: nothing settled it.
#[test]
fn a_request_the_policy_holds_says_why_and_by_which_rule() {
    let fx = start();
    fx.place("rotate-key", critical_autonomous());
    let row = eventually("rotate-key judged", || {
        fx.desk
            .inbox()
            .pending()
            .unwrap()
            .into_iter()
            .find(|row| row.id == "rotate-key" && row.judgement.is_some())
    });
    let judgement = row.judgement.unwrap();
    assert_eq!(judgement.rule, "critical-needs-a-person");
    let held = judgement.held.expect("held for a person");
    assert!(held.contains("critical-needs-a-person"), "{held}");
    assert_eq!(judgement.notify, "critical");
    assert!(!judgement.buttons);
    assert!(row.autonomous);
    assert!(!fx.spool.join("answers/rotate-key.json").exists());
    let view = fx.desk.inbox().request("rotate-key").unwrap();
    assert_eq!(
        view.row.judgement.and_then(|j| j.held).as_deref(),
        Some(held.as_str())
    );
}

/// A snoozed request leaves the Pending list for the Snoozed one, with when it comes back;
/// unsnoozing brings it back at once. Lengths that are no length are refused.
#[test]
fn snoozing_takes_a_request_out_of_pending_until_unsnoozed() {
    let fx = start();
    fx.place(
        "later",
        json!({"title": "Later", "questions": [{"type": "confirm", "question": "Now?"}]}),
    );
    fx.wait_pending("later");
    let inbox = fx.desk.inbox();

    let snoozed = inbox.snooze("later", "1h").unwrap();
    assert!(!snoozed.capped);
    let until = chrono::DateTime::parse_from_rfc3339(&snoozed.until).unwrap();
    let left = until.signed_duration_since(chrono::Utc::now());
    assert!(
        left > chrono::Duration::minutes(59) && left <= chrono::Duration::minutes(60),
        "{left}"
    );
    assert!(inbox.pending().unwrap().iter().all(|row| row.id != "later"));
    let listed = inbox.snoozed().unwrap();
    assert_eq!(listed.len(), 1);
    assert_eq!(
        listed[0].snoozed_until.as_deref(),
        Some(snoozed.until.as_str())
    );
    assert_eq!(fx.desk.status().unwrap().pending, 0);

    for bad in ["soon", "0m"] {
        let error = inbox.snooze("later", bad).unwrap_err();
        assert_eq!(error.code, ErrorCode::BadInput, "{bad}: {error:?}");
    }
    let error = inbox.snooze("nobody", "1h").unwrap_err();
    assert_eq!(error.code, ErrorCode::NotFound, "{error:?}");

    assert!(inbox.unsnooze("later").unwrap());
    assert!(inbox.snoozed().unwrap().is_empty());
    fx.wait_pending("later");
    assert!(!inbox.unsnooze("later").unwrap(), "no longer snoozed");

    // A request that expires sooner is snoozed until it expires.
    fx.place(
        "soon",
        json!({"title": "Soon", "timeout_seconds": 600,
               "questions": [{"type": "confirm", "question": "Now?"}]}),
    );
    fx.wait_pending("soon");
    assert!(inbox.snooze("soon", "4h").unwrap().capped);
}

/// Requests asking the same are offered as one group, each with the version the window
/// answers; answering the group writes one outcome per member, and a member settled
/// meanwhile is reported as such while the others are answered.
#[test]
fn requests_alike_are_answered_together_each_bound_to_its_version() {
    let fx = start();
    for id in ["run-1", "run-2", "run-3"] {
        fx.place(
            id,
            json!({"title": format!("Ship ({id})"), "source": {"run": id},
                   "questions": [{"id": "go", "type": "confirm", "question": "Ship it?"}]}),
        );
        fx.wait_pending(id);
    }
    fx.place(
        "other",
        json!({"questions": [{"id": "go", "type": "confirm", "question": "Delete it?"}]}),
    );
    fx.wait_pending("other");
    let inbox = fx.desk.inbox();
    assert_eq!(
        inbox.alike("other").unwrap().len(),
        1,
        "alone in asking that"
    );
    assert!(inbox.alike("nobody").unwrap().is_empty());

    let group = inbox.alike("run-2").unwrap();
    let mut ids: Vec<&str> = group.iter().map(|m| m.row.id.as_str()).collect();
    ids.sort_unstable();
    assert_eq!(ids, ["run-1", "run-2", "run-3"]);
    for member in &group {
        assert_eq!(member.version, fx.version(&member.row.id));
    }
    let targets: Vec<AlikeTarget> = group
        .iter()
        .map(|m| AlikeTarget {
            id: m.row.id.clone(),
            version: m.version.clone(),
        })
        .collect();

    // run-3 is answered on its own after the group was listed.
    fx.answer("run-3", &answers(&[("go", json!(false))]))
        .unwrap();
    let results = inbox
        .answer_alike(&targets, &answers(&[("go", json!(true))]), Surface::Window)
        .unwrap();
    assert_eq!(results.len(), 3);
    for result in &results {
        match (result.id.as_str(), &result.submitted) {
            ("run-3", Some(SubmitResult::AlreadySettled { outcome })) => {
                assert_eq!(outcome.answers[0].answer, "No");
            }
            ("run-1" | "run-2", Some(SubmitResult::Settled { .. })) => {
                assert_eq!(fx.outcome_file(&result.id)["answers"], json!({"go": true}));
            }
            other => panic!("unexpected result {other:?}"),
        }
    }
    assert_eq!(fx.outcome_file("run-3")["answers"], json!({"go": false}));

    let twice = vec![targets[0].clone(), targets[0].clone()];
    let error = inbox
        .answer_alike(&twice, &answers(&[("go", json!(true))]), Surface::Window)
        .unwrap_err();
    assert_eq!(error.code, ErrorCode::BadInput, "{error:?}");
}

/// A broken policy file is reported from the start (it holds everything for a person) and
/// until a good one is saved from the window; an invalid one is never saved.
#[test]
fn a_broken_policy_is_reported_until_a_good_one_is_saved() {
    let fx = start_with(|config| {
        std::fs::create_dir_all(config.policy_path.parent().unwrap()).unwrap();
        std::fs::write(&config.policy_path, "[[rule]]\nname = \"x\"\nbogus = 1\n").unwrap();
    });
    let trouble = fx.desk.status().unwrap().policy_trouble.expect("trouble");
    assert!(trouble.contains("held for a person"), "{trouble}");
    let shown = fx.desk.policy().unwrap();
    assert!(shown.exists);
    assert_eq!(shown.problems.len(), 1, "{:?}", shown.problems);
    assert_eq!(shown.problems[0].line, 3);
    assert_eq!(shown.trouble.as_deref(), Some(trouble.as_str()));

    let error = fx.desk.save_policy("[[rule]]\nname = 7\n").unwrap_err();
    assert_eq!(error.code, ErrorCode::Invalid, "{error:?}");
    assert!(error.problems[0].pointer.starts_with("line 2"), "{error:?}");
    assert!(fx.desk.check_policy("[[rule]]\nname = 7\n")[0].line == 2);

    let good = "[[rule]]\nname = \"hold-all\"\nautonomous = \"hold\"\n";
    let saved = fx.desk.save_policy(good).unwrap();
    assert_eq!(saved.rules, ["hold-all"]);
    assert_eq!(saved.trouble, None);
    assert_eq!(
        std::fs::read_to_string(&fx.config.policy_path).unwrap(),
        good
    );
    // The loop takes the new file at its next turn (a tick every 2 s) and says so.
    eventually("the policy trouble to end", || {
        fx.events
            .lock()
            .unwrap()
            .iter()
            .any(|event| matches!(event, UiEvent::Policy { trouble: None }))
            .then_some(())
    });
    assert_eq!(fx.desk.status().unwrap().policy_trouble, None);
}

impl Fixture {
    /// The deltas of the `changed` events so far, in order (None: the refetch form).
    fn deltas(&self) -> Vec<Option<PendingDelta>> {
        self.events
            .lock()
            .unwrap()
            .iter()
            .filter_map(|event| match event {
                UiEvent::Changed { delta, .. } => Some(delta.clone()),
                _ => None,
            })
            .collect()
    }

    /// Waits until a window's copy of the Pending list, kept by the deltas of the `changed`
    /// events alone, holds exactly what `list_pending` holds, row for row (the order is the
    /// window's business, see ui/src/lib/pending.ts); returns it. The first event is the
    /// start's refetch form, when the inbox was empty; any other refetch form fails.
    fn window_copy_agrees(&self) -> Vec<RowView> {
        eventually("the window's copy to hold what list_pending holds", || {
            let mut copy = std::collections::BTreeMap::new();
            for (n, delta) in self.deltas().into_iter().enumerate() {
                let Some(delta) = delta else {
                    assert_eq!(n, 0, "a refetch form: {:#?}", self.deltas());
                    continue;
                };
                for id in &delta.gone {
                    copy.remove(id);
                }
                for row in delta.rows {
                    copy.insert(row.id.clone(), row);
                }
            }
            let listed: std::collections::BTreeMap<String, RowView> = self
                .desk
                .inbox()
                .pending()
                .unwrap()
                .into_iter()
                .map(|row| (row.id.clone(), row))
                .collect();
            (copy == listed).then(|| listed.into_values().collect())
        })
    }
}

/// The window patches its Pending list with what each `changed` event carries: a request
/// placed arrives as the very row `list_pending` returns for it (its policy judgement too),
/// one answered or snoozed leaves by its id, one back from its snooze arrives again, and the
/// count is the list's.
#[test]
fn the_pending_list_is_kept_by_what_each_change_carries() {
    let fx = start();
    // The loop's start, on an empty inbox, is the refetch form.
    eventually("the start", || (!fx.deltas().is_empty()).then_some(()));
    assert_eq!(fx.deltas(), [None]);
    assert!(fx.desk.inbox().pending().unwrap().is_empty());
    fx.place("rel-42", batch());
    fx.place(
        "later",
        json!({"title": "Later", "questions": [{"type": "confirm", "question": "Now?"}]}),
    );
    let placed = fx.wait_pending("rel-42");
    fx.wait_pending("later");
    let copy = fx.window_copy_agrees();
    assert_eq!(copy.len(), 2);
    assert!(copy.iter().all(|row| row.judgement.is_some()), "{copy:#?}");
    let counted =
        |fx: &Fixture| match fx
            .events
            .lock()
            .unwrap()
            .iter()
            .rev()
            .find_map(|e| match e {
                UiEvent::Changed { pending, .. } => Some(*pending),
                _ => None,
            }) {
            Some(pending) => pending,
            None => panic!("no changed event"),
        };
    assert_eq!(counted(&fx), 2, "{:#?}", fx.events.lock().unwrap());
    assert_eq!(placed.title, "Release 4.2");

    let given = answers(&[
        ("q1", json!(true)),
        ("q2", json!("eu")),
        ("q3", json!("OPS-7")),
    ]);
    fx.answer("rel-42", &given).unwrap();
    let copy = fx.window_copy_agrees();
    assert_eq!(copy.len(), 1);
    let gone = |fx: &Fixture, id: &str| {
        fx.deltas()
            .iter()
            .flatten()
            .filter(|delta| delta.gone.iter().any(|gone| gone == id))
            .count()
    };
    assert_eq!(gone(&fx, "rel-42"), 1, "{:#?}", fx.deltas());
    assert_eq!(counted(&fx), 1);

    fx.desk.inbox().snooze("later", "1h").unwrap();
    assert!(fx.window_copy_agrees().is_empty());
    let last = fx.deltas().pop().flatten().expect("a delta");
    assert_eq!(last.gone, ["later"]);
    assert!(last.snoozed, "the Snoozed list changed: {last:?}");

    fx.desk.inbox().unsnooze("later").unwrap();
    let copy = fx.window_copy_agrees();
    assert_eq!(copy.len(), 1);
    let last = fx.deltas().pop().flatten().expect("a delta");
    assert_eq!(last.rows.len(), 1);
    assert_eq!(last.rows[0], copy[0]);
    assert!(last.snoozed);
}

/// Requests of the same priority placed in the same millisecond are listed newest first,
/// which is where the window puts a new row among those it ties with
/// (`applyDelta` in ui/src/lib/pending.ts).
#[test]
fn requests_that_tie_are_listed_newest_first() {
    let fx = start();
    let body = |title: &str| json!({"title": title, "questions": [{"type": "confirm", "question": "Now?"}]});
    fx.place("first", body("First"));
    fx.wait_pending("first");
    let placed = std::fs::metadata(fx.spool.join("questions/first.json"))
        .unwrap()
        .modified()
        .unwrap();
    let tmp = fx.spool.join("tmp/second.json");
    std::fs::write(&tmp, serde_json::to_vec(&body("Second")).unwrap()).unwrap();
    std::fs::File::options()
        .write(true)
        .open(&tmp)
        .unwrap()
        .set_modified(placed)
        .unwrap();
    std::fs::rename(&tmp, fx.spool.join("questions/second.json")).unwrap();
    fx.wait_pending("second");
    let listed = fx.desk.inbox().pending().unwrap();
    assert_eq!(listed[0].placed_at, listed[1].placed_at, "{listed:#?}");
    let ids: Vec<&str> = listed.iter().map(|row| row.id.as_str()).collect();
    assert_eq!(ids, ["second", "first"]);
}
