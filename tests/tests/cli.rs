//! The `answer-inbox` command, black-box: files go into a spool, outcomes come out, and the
//! exit codes scripts depend on hold.

use std::path::Path;

use serde_json::{json, Value};

use crate::util::{self, code, eventually, stderr, stdout, Inbox, Running};

const CONFIRM: &str = r#"{"inbox": 1, "title": "Deploy SPEC-042", "source": {"app": "planu", "run": "run-7f3a"},
  "questions": [{"id": "go", "question": "Deploy to production?", "type": "confirm"}]}"#;

fn examples() -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("data")
}

fn ask(inbox: &Inbox, body: &str) -> String {
    let out = inbox.run_with_stdin(&["ask", "-"], body.as_bytes());
    assert_eq!(code(&out), 0, "ask failed: {}", stderr(&out));
    let id = stdout(&out).trim().to_owned();
    assert!(inbox
        .spool()
        .join("questions")
        .join(format!("{id}.json"))
        .exists());
    id
}

#[test]
fn check_reports_every_problem_and_exits_by_validity() {
    let inbox = Inbox::new();
    let valid = examples().join("deploy-target.json");
    let invalid = examples().join("invalid-choice-without-options.json");
    let out = inbox.run(&["check", valid.to_str().unwrap()]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));

    let out = inbox.run(&["check", valid.to_str().unwrap(), invalid.to_str().unwrap()]);
    assert_eq!(code(&out), 1);
    let text = stdout(&out) + &stderr(&out);
    assert!(text.contains("/questions/0/options"), "{text}");
    assert!(
        text.contains("/questions/0/default"),
        "the default problem is reported too: {text}"
    );

    let out = inbox.run(&["check", "--json", invalid.to_str().unwrap()]);
    assert_eq!(code(&out), 1);
    let report: Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!(report[0]["valid"], json!(false));
    assert!(report[0]["errors"].as_array().unwrap().len() >= 2);

    let out = inbox.run(&["check", "/no/such/file.json"]);
    assert_eq!(code(&out), 1);
    assert!((stdout(&out) + &stderr(&out)).contains("/no/such/file.json"));
}

#[test]
fn answer_writes_one_outcome_and_refuses_a_second() {
    let inbox = Inbox::new();
    let id = ask(&inbox, CONFIRM);

    let out = inbox.run(&["answer", &id, "--set", "go=maybe"]);
    assert_eq!(code(&out), 1, "an invalid value is refused");
    assert!(stderr(&out).contains("go"), "{}", stderr(&out));
    assert!(!inbox.outcome_path(&id).exists(), "nothing written");

    // Nobody answers in another's name: there is no flag for it.
    let out = inbox.run(&["answer", &id, "--as", "someone-else", "--set", "go=yes"]);
    assert_eq!(code(&out), 2, "{}", stderr(&out));
    assert!(!inbox.outcome_path(&id).exists(), "nothing written");

    let out = inbox.run(&["answer", &id, "--set", "go=yes"]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let outcome = inbox.outcome(&id);
    assert_eq!(outcome["status"], "answered");
    assert_eq!(outcome["answers"], json!({"go": true}));
    assert_eq!(
        outcome["answered_by"],
        json!(util::operator()),
        "the OS account, not $USER"
    );

    let out = inbox.run(&["answer", &id, "--answers", r#"{"go": false}"#]);
    assert_eq!(code(&out), 3);
    assert!(
        stderr(&out).contains(&util::operator()),
        "says by whom: {}",
        stderr(&out)
    );
    assert_eq!(
        inbox.outcome(&id)["answers"],
        json!({"go": true}),
        "first writer wins"
    );
}

#[test]
fn answers_cover_every_question_type_and_fill_in() {
    let inbox = Inbox::new();
    let body = r#"{"inbox": 1, "questions": [
        {"id": "env", "question": "Where?", "type": "choice", "options": ["staging", "production"]},
        {"id": "tags", "question": "Tags?", "type": "multiChoice", "options": ["a", "b", "c"], "required": false},
        {"id": "ticket", "question": "Ticket?", "type": "text", "pattern": "^T-[0-9]+$"},
        {"type": "single_choice", "question": "Which database?", "choices": [{"id": "pg", "label": "PostgreSQL"}]},
        {"type": "free_text", "question": "Notes?", "required": false, "default": "none"}
    ]}"#;
    let id = ask(&inbox, body);
    let out = inbox.run(&[
        "answer",
        &id,
        "--set",
        "ticket=nope",
        "--set",
        "env=qa",
        "--set",
        "q4=pg",
    ]);
    assert_eq!(code(&out), 1);
    let err = stderr(&out);
    assert!(
        err.contains("ticket") && err.contains("env"),
        "each problem named: {err}"
    );

    let out = inbox.run(&[
        "answer",
        &id,
        "--set",
        "env=production",
        "--set",
        "tags=a",
        "--set",
        "tags=c",
        "--set",
        "ticket=T-42",
        "--set",
        "q4=SQLite",
    ]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let outcome = inbox.outcome(&id);
    assert_eq!(
        outcome["answers"],
        json!({"env": "production", "tags": ["a", "c"], "ticket": "T-42", "q4": "SQLite", "q5": "none"})
    );
    assert_eq!(outcome["custom"], json!(["q4"]));
    assert_eq!(outcome["defaulted"], json!(["q5"]));
}

#[test]
fn ask_wait_exit_codes_follow_the_outcome() {
    let inbox = Inbox::new();
    let cases: [(&str, i32); 3] = [("answer", 0), ("decline", 10), ("cancel", 13)];
    for (action, expected) in cases {
        let body = CONFIRM.replacen(
            "{\"inbox\": 1,",
            &format!("{{\"inbox\": 1, \"id\": \"wait-{action}\","),
            1,
        );
        let id = format!("wait-{action}");
        let mut waiting = Running::spawn({
            let mut cmd = inbox.cmd(&["ask", "--wait", "-"]);
            cmd.stdin(std::process::Stdio::piped());
            cmd
        });
        {
            use std::io::Write;
            let mut stdin = waiting.child.stdin.take().unwrap();
            stdin.write_all(body.as_bytes()).unwrap();
        }
        let placed = inbox.spool().join("questions").join(format!("{id}.json"));
        eventually("the request to be placed", || placed.exists());
        let out = match action {
            "answer" => inbox.run(&["answer", &id, "--set", "go=no"]),
            "decline" => inbox.run(&["answer", &id, "--decline", "change freeze"]),
            _ => inbox.run(&["cancel", &id]),
        };
        assert_eq!(code(&out), 0, "{action}: {}", stderr(&out));
        let status = waiting.child.wait().unwrap();
        assert_eq!(status.code(), Some(expected), "ask --wait after {action}");
        if action != "cancel" {
            let printed = waiting.wait_line("\"status\"");
            assert!(
                printed.contains(if action == "answer" {
                    "answered"
                } else {
                    "declined"
                }),
                "{printed}"
            );
        }
    }
}

#[test]
fn ask_wait_times_out_with_124_and_leaves_the_request_pending() {
    let inbox = Inbox::new();
    let out = inbox.run_with_stdin(
        &["ask", "--wait", "--timeout", "1", "-"],
        CONFIRM.as_bytes(),
    );
    assert_eq!(code(&out), 124, "{}", stderr(&out));
    let out = inbox.run(&["list", "--json"]);
    assert_eq!(code(&out), 0);
    let pending: Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!(pending.as_array().unwrap().len(), 1);
}

#[test]
fn ask_refuses_invalid_bodies_and_mismatched_ids() {
    let inbox = Inbox::new();
    let bad = r#"{"inbox": 1, "questions": [{"id": "e", "question": "Env?", "type": "choice"}]}"#;
    let out = inbox.run_with_stdin(&["ask", "-"], bad.as_bytes());
    assert_eq!(code(&out), 1);
    assert!(
        stderr(&out).contains("/questions/0/options"),
        "{}",
        stderr(&out)
    );
    let out = inbox.run_with_stdin(&["ask", "--wait", "-"], bad.as_bytes());
    assert_eq!(
        code(&out),
        12,
        "an invalid request is a rejection for a waiting asker"
    );

    let with_id =
        r#"{"inbox": 1, "id": "abc", "questions": [{"question": "Ok?", "type": "confirm"}]}"#;
    let out = inbox.run_with_stdin(&["ask", "--id", "xyz", "-"], with_id.as_bytes());
    assert_ne!(code(&out), 0);
    let out = inbox.run_with_stdin(&["ask", "-"], with_id.as_bytes());
    assert_eq!(stdout(&out).trim(), "abc");
    let out = inbox.run_with_stdin(&["ask", "-"], with_id.as_bytes());
    assert_ne!(code(&out), 0, "an id already in the spool is refused");
}

/// `watch --json`: one JSON object per event, the engine's `Event` with `at`, for scripts;
/// a title with a newline stays inside its object's line.
#[test]
fn watch_json_prints_one_event_object_per_line() {
    let inbox = Inbox::new();
    std::fs::create_dir_all(inbox.spool()).unwrap();
    let mut watch = Running::spawn(inbox.cmd(&["watch", "--no-notify", "--json"]));
    let ready: Value = serde_json::from_str(&watch.wait_line("\"ready\"")).unwrap();
    assert_eq!(ready["kind"], "ready");
    assert!(
        ready["at"].as_str().is_some_and(|at| at.contains('T')),
        "{ready}"
    );
    inbox.place(
        "json-1",
        r#"{"inbox":1,"id":"json-1","title":"two\nlines","questions":[{"id":"go","type":"confirm","question":"Go?"}]}"#,
    );
    let line = watch.wait_line("json-1");
    let ingested: Value = serde_json::from_str(&line).unwrap();
    assert_eq!(ingested["kind"], "ingested", "{line}");
    assert_eq!(ingested["id"], "json-1");
    assert_eq!(ingested["title"], "two\nlines");
    watch.stop();
}

#[test]
fn watch_applies_policies_and_survives_bad_input() {
    let inbox = Inbox::new();
    std::fs::create_dir_all(inbox.spool()).unwrap();
    let mut watch = Running::spawn(inbox.cmd(&["watch", "--no-notify"]));
    watch.wait_line("ready");

    // Autonomous with defaults: answered by policy, `ask --wait` exits 0.
    let auto = std::fs::read_to_string(examples().join("nightly-cleanup-autonomous.json")).unwrap();
    let out = inbox.run_with_stdin(&["ask", "--wait", "--timeout", "20", "-"], auto.as_bytes());
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let outcome: Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!(outcome["status"], "defaulted");
    // The shipped policy: a file asker's autonomous mode is honoured, by its rule.
    assert_eq!(outcome["answered_by"], "policy:rule:file-askers");
    assert_eq!(outcome["trigger"], "autonomous");
    assert_eq!(
        outcome["answers"],
        json!({"prune-branches": true, "retention": "30 days"})
    );

    // Expiry without defaults: exit 11.
    let short = r#"{"inbox": 1, "timeout_seconds": 1, "questions": [{"id": "go", "question": "Go?", "type": "confirm"}]}"#;
    let out = inbox.run_with_stdin(&["ask", "--wait", "--timeout", "20", "-"], short.as_bytes());
    assert_eq!(code(&out), 11, "{}", stderr(&out));

    // Hostile and broken files: the engine logs them and goes on.
    let questions = inbox.spool().join("questions");
    std::os::unix::fs::symlink("/etc/passwd", questions.join("link.json")).unwrap();
    std::fs::create_dir(questions.join("dir.json")).unwrap();
    assert!(std::process::Command::new("mkfifo")
        .arg(questions.join("fifo.json"))
        .status()
        .unwrap()
        .success());
    inbox.place("bad name", "[]");
    inbox.place("broken", "{\"inbox\": 1, \"questions\": [");
    let rejected = inbox.wait_outcome("broken");
    assert_eq!(rejected["status"], "rejected");
    assert!(rejected["errors"][0]["message"]
        .as_str()
        .unwrap()
        .contains("not valid JSON"));
    watch.wait_line("link.json");
    watch.wait_line("fifo.json");
    for id in ["link", "dir", "fifo"] {
        assert!(
            !inbox.outcome_path(id).exists(),
            "{id} is never read as a request"
        );
    }

    inbox.place("after", CONFIRM);
    watch.wait_line("ingested after");
    let out = inbox.run(&["answer", "after", "--set", "go=yes"]);
    assert_eq!(code(&out), 0);
    watch.wait_line(&format!("answered after by {}", util::operator()));
    assert_eq!(watch.stop(), Some(0), "watch exits cleanly on SIGTERM");
}

/// `ask --wait --require-person`: defaults a policy gave exit 15 (with the outcome printed),
/// a person's answer exits 0; every outcome says who decided, where and how fast.
#[test]
fn ask_wait_require_person_exits_15_when_a_policy_settled_it() {
    let inbox = Inbox::new();
    std::fs::create_dir_all(inbox.spool()).unwrap();
    let mut watch = Running::spawn(inbox.cmd(&["watch", "--no-notify"]));
    watch.wait_line("ready");

    let auto = std::fs::read_to_string(examples().join("nightly-cleanup-autonomous.json")).unwrap();
    let out = inbox.run_with_stdin(
        &["ask", "--wait", "--require-person", "--timeout", "20", "-"],
        auto.as_bytes(),
    );
    assert_eq!(code(&out), 15, "{}", stderr(&out));
    assert!(stderr(&out).contains("not by a person"), "{}", stderr(&out));
    let outcome: Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!(outcome["status"], "defaulted");
    assert_eq!(outcome["decided_by"], "policy");
    assert_eq!(outcome["rule"], "policy:rule:file-askers");
    assert_eq!(outcome["surface"], "policy");
    assert!(outcome["decision_ms"].is_u64(), "{outcome}");
    assert_eq!(watch.stop(), Some(0));

    // --require-person needs --wait.
    let out = inbox.run_with_stdin(&["ask", "--require-person", "-"], CONFIRM.as_bytes());
    assert_eq!(code(&out), 2, "{}", stderr(&out));

    let id = "needs-a-person";
    let body = CONFIRM.replacen(
        "{\"inbox\": 1,",
        &format!("{{\"inbox\": 1, \"id\": \"{id}\","),
        1,
    );
    let mut waiting = Running::spawn({
        let mut cmd = inbox.cmd(&["ask", "--wait", "--require-person", "--timeout", "30", "-"]);
        cmd.stdin(std::process::Stdio::piped());
        cmd
    });
    {
        use std::io::Write;
        let mut stdin = waiting.child.stdin.take().unwrap();
        stdin.write_all(body.as_bytes()).unwrap();
    }
    let placed = inbox.spool().join("questions").join(format!("{id}.json"));
    eventually("the request to be placed", || placed.exists());
    let out = inbox.run(&["answer", id, "--set", "go=yes"]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert_eq!(waiting.child.wait().unwrap().code(), Some(0));
    let outcome: Value =
        serde_json::from_slice(&std::fs::read(inbox.outcome_path(id)).unwrap()).unwrap();
    assert_eq!(outcome["status"], "answered");
    assert_eq!(outcome["decided_by"], "person");
    assert_eq!(outcome["surface"], "cli");
    assert!(outcome.get("rule").is_none(), "{outcome}");
    assert!(outcome["decision_ms"].is_u64(), "{outcome}");
}

#[test]
fn list_and_show_describe_the_queue() {
    let inbox = Inbox::new();
    let id = ask(&inbox, CONFIRM);
    let out = inbox.run(&["list"]);
    assert_eq!(code(&out), 0);
    assert!(
        stdout(&out).contains(&id) && stdout(&out).contains("Deploy SPEC-042"),
        "{}",
        stdout(&out)
    );

    let out = inbox.run(&["show", &id, "--json"]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let detail: Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!(detail["id"], json!(id));
    let out = inbox.run(&["show", &id]);
    assert!(stdout(&out).contains("Deploy to production?"));

    inbox.run(&["answer", &id, "--set", "go=no"]);
    let out = inbox.run(&["list", "--json"]);
    assert_eq!(
        serde_json::from_str::<Value>(&stdout(&out)).unwrap(),
        json!([])
    );
    let out = inbox.run(&["list", "--all", "--json"]);
    let all: Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!(all[0]["id"], json!(id));

    let out = inbox.run(&["show", "no-such-id"]);
    assert_ne!(code(&out), 0);
    assert!(stderr(&out).contains("no-such-id"));
}

#[test]
fn demo_fills_the_spool_with_both_dialects_and_can_run_twice() {
    let inbox = Inbox::new();
    for _ in 0..2 {
        let out = inbox.run(&["demo"]);
        assert_eq!(code(&out), 0, "{}", stderr(&out));
    }
    let out = inbox.run(&["list", "--json"]);
    let pending: Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert!(pending.as_array().unwrap().len() >= 8, "{pending}");
    for file in std::fs::read_dir(inbox.spool().join("questions")).unwrap() {
        let path = file.unwrap().path();
        let out = inbox.run(&["check", path.to_str().unwrap()]);
        assert_eq!(code(&out), 0, "demo request {} is valid", path.display());
    }
}

#[test]
fn schema_prints_the_committed_schemas() {
    let inbox = Inbox::new();
    for kind in ["request", "outcome"] {
        let out = inbox.run(&["schema", kind]);
        assert_eq!(code(&out), 0);
        let committed = std::fs::read_to_string(
            Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("../schemas/{kind}.schema.json")),
        )
        .unwrap();
        assert_eq!(stdout(&out), committed);
    }
}

/// Places `body` (which names its id) with `ask --wait`, and returns the waiting command once
/// the request file is in place. Its `--timeout` ends it should the test fail first.
fn ask_waiting(inbox: &Inbox, id: &str, body: &str) -> std::process::Child {
    use std::io::Write;
    use std::process::Stdio;
    let mut waiting = inbox
        .cmd(&["ask", "--wait", "--timeout", "30", "-"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    waiting
        .stdin
        .take()
        .unwrap()
        .write_all(body.as_bytes())
        .unwrap();
    let placed = inbox.spool().join("questions").join(format!("{id}.json"));
    eventually("the request to be placed", || placed.exists());
    waiting
}

/// Puts `bytes` in `answers/<id>.json` whole (written in `tmp/`, then renamed), as a writer
/// outside the inbox could.
fn write_outcome_file(inbox: &Inbox, id: &str, bytes: &[u8]) {
    let tmp = inbox.spool().join("tmp").join(format!("{id}.forged"));
    std::fs::write(&tmp, bytes).unwrap();
    std::fs::rename(&tmp, inbox.outcome_path(id)).unwrap();
}

/// An outcome for `id` as an inbox would write it for the operator's `answers`, bound to
/// the version `sha256`.
fn outcome_json(id: &str, sha256: &str, answers: Value) -> Vec<u8> {
    serde_json::to_vec(&json!({
        "inbox": 1,
        "id": id,
        "status": "answered",
        "answers": answers,
        "answered_by": util::operator(),
        "answered_at": "2026-01-02T03:04:05Z",
        "request_sha256": sha256,
        "instance": "elsewhere/01J0000000000000000000000",
    }))
    .unwrap()
}

/// `ask --wait` takes an outcome file only if it answers the request as placed: garbage,
/// another version's outcome, or answers the questions do not allow exit 14 and print
/// nothing on standard output; the same file written correctly is the answer (exit 0), so
/// the refusals are for what is wrong, not for who wrote it.
#[test]
fn ask_wait_exits_14_on_an_outcome_it_cannot_trust() {
    let inbox = Inbox::new();
    type Forge = fn(&str, &str) -> Vec<u8>;
    let cases: [(&str, Forge, i32); 4] = [
        (
            "garbage",
            |_, _| b"{\"inbox\": 1, \"status\": ".to_vec(),
            14,
        ),
        (
            "other-version",
            |id, _| {
                let other = inbox_protocol::sha256_hex(b"the request someone else approved");
                outcome_json(id, &other, json!({"go": true}))
            },
            14,
        ),
        (
            "unfit-answers",
            |id, sha| outcome_json(id, sha, json!({"go": "maybe", "rm": true})),
            14,
        ),
        (
            "valid",
            |id, sha| outcome_json(id, sha, json!({"go": true})),
            0,
        ),
    ];
    for (case, forge, expected) in cases {
        let id = format!("forged-{case}");
        let body = CONFIRM.replacen(
            "{\"inbox\": 1,",
            &format!("{{\"inbox\": 1, \"id\": \"{id}\","),
            1,
        );
        let waiting = ask_waiting(&inbox, &id, &body);
        let placed =
            std::fs::read(inbox.spool().join("questions").join(format!("{id}.json"))).unwrap();
        let sha = inbox_protocol::sha256_hex(&placed);
        write_outcome_file(&inbox, &id, &forge(&id, &sha));
        let out = waiting.wait_with_output().unwrap();
        let (printed, said) = (stdout(&out), stderr(&out));
        assert_eq!(
            code(&out),
            expected,
            "{case}: stdout {printed}; stderr {said}"
        );
        if expected == 14 {
            assert_eq!(printed, "", "{case}: nothing is printed as the outcome");
            assert!(
                said.contains(&format!("\"{id}\"")) && said.contains("not taken as an answer"),
                "{case}: {said}"
            );
        } else {
            let printed: Value = serde_json::from_str(&printed).unwrap();
            assert_eq!(printed["answers"], json!({"go": true}), "{case}");
        }
    }
}

/// The version `show` tells the operator to answer with (`--version HEX`).
fn shown_version(inbox: &Inbox, id: &str) -> String {
    let out = inbox.run(&["show", id]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let text = stdout(&out);
    text.split("--version ")
        .nth(1)
        .and_then(|rest| rest.split_whitespace().next())
        .unwrap_or_else(|| panic!("show names no version to answer with:\n{text}"))
        .to_owned()
}

/// `answer --version` binds the answer to the request as it was shown: another version is
/// refused with exit 5 and nothing written; the one shown is answered, and the outcome
/// names the file's SHA-256.
#[test]
fn answer_is_bound_to_the_version_shown() {
    let inbox = Inbox::new();
    let id = ask(&inbox, CONFIRM);
    let shown = shown_version(&inbox, &id);
    assert!(
        shown.len() >= 12 && shown.chars().all(|c| c.is_ascii_hexdigit()),
        "{shown}"
    );

    let out = inbox.run(&[
        "answer",
        &id,
        "--version",
        "not-a-version",
        "--set",
        "go=yes",
    ]);
    assert_eq!(code(&out), 1, "{}", stderr(&out));
    assert!(stderr(&out).contains("--version"), "{}", stderr(&out));

    let other = if shown.starts_with("000000000000") {
        "111111111111"
    } else {
        "000000000000"
    };
    let out = inbox.run(&["answer", &id, "--version", other, "--set", "go=yes"]);
    assert_eq!(code(&out), 5, "{}", stderr(&out));
    assert!(stderr(&out).contains(other), "{}", stderr(&out));
    assert!(!inbox.outcome_path(&id).exists(), "nothing written");
    let out = inbox.run(&["answer", &id, "--version", other, "--decline", "no"]);
    assert_eq!(code(&out), 5, "a decline is bound too: {}", stderr(&out));
    assert!(!inbox.outcome_path(&id).exists(), "nothing written");

    let out = inbox.run(&["answer", &id, "--version", &shown, "--set", "go=yes"]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let placed = std::fs::read(inbox.spool().join("questions").join(format!("{id}.json"))).unwrap();
    let outcome = inbox.outcome(&id);
    assert_eq!(
        outcome["request_sha256"],
        json!(inbox_protocol::sha256_hex(&placed))
    );
    assert!(outcome["request_sha256"]
        .as_str()
        .unwrap()
        .starts_with(&shown));
}

/// A request whose file is replaced after the inbox took it in is never answered: the
/// first answer finds it changed (exit 5), and from then on it is blocked (exit 6), with
/// or without `--version`. Nothing is written.
#[test]
fn answer_refuses_a_request_swapped_after_it_was_shown() {
    let inbox = Inbox::new();
    inbox.place("swapped", CONFIRM);
    let shown = shown_version(&inbox, "swapped");
    inbox.place(
        "swapped",
        &CONFIRM.replace("Deploy to production?", "Delete the production database?"),
    );

    let out = inbox.run(&["answer", "swapped", "--version", &shown, "--set", "go=yes"]);
    assert_eq!(code(&out), 5, "{}", stderr(&out));
    assert!(
        stderr(&out).contains("changed after it was placed"),
        "{}",
        stderr(&out)
    );
    for args in [
        &["answer", "swapped", "--set", "go=yes"][..],
        &["answer", "swapped", "--version", &shown, "--set", "go=yes"],
    ] {
        let out = inbox.run(args);
        assert_eq!(code(&out), 6, "{args:?}: {}", stderr(&out));
        assert!(
            stderr(&out).contains("changed after it was placed"),
            "{}",
            stderr(&out)
        );
    }
    assert!(!inbox.outcome_path("swapped").exists(), "nothing written");
    let out = inbox.run(&["show", "swapped"]);
    assert!(stdout(&out).contains("blocked"), "{}", stdout(&out));
}

/// An outcome file that does not answer the request (here garbage) blocks it: `answer`
/// exits 6 naming why, and never reports it "already settled" (exit 3); the forged file is
/// left for the operator to look at. Once it is removed, the request can be answered.
#[test]
fn an_invalid_outcome_file_blocks_answers_until_it_is_removed() {
    let inbox = Inbox::new();
    let id = ask(&inbox, CONFIRM);
    assert_eq!(code(&inbox.run(&["list"])), 0);
    write_outcome_file(&inbox, &id, b"not an outcome");

    let out = inbox.run(&["answer", &id, "--set", "go=yes"]);
    assert_eq!(code(&out), 6, "{}", stderr(&out));
    assert!(
        stderr(&out).contains("an invalid outcome file blocks this request"),
        "{}",
        stderr(&out)
    );
    assert_eq!(
        std::fs::read(inbox.outcome_path(&id)).unwrap(),
        b"not an outcome",
        "the file is left as it was"
    );
    let out = inbox.run(&["list", "--json"]);
    let pending: Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!(pending[0]["id"], json!(id), "still pending: {pending}");

    std::fs::remove_file(inbox.outcome_path(&id)).unwrap();
    let out = inbox.run(&["answer", &id, "--set", "go=yes"]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert_eq!(inbox.outcome(&id)["answered_by"], json!(util::operator()));
}

/// A file in `questions/` that is never read (a link, a FIFO, a directory, a bad name, a
/// second hard link) leaves no row, so `list` says what it is, after the requests, as the
/// window's Problems view does; `list --problems --json` gives the same for scripts
/// (issue 25). Without this a dropped request was invisible from the command line.
#[test]
fn list_shows_the_files_in_the_spool_it_never_read() {
    let inbox = Inbox::new();
    let id = ask(&inbox, CONFIRM);
    let questions = inbox.spool().join("questions");
    std::os::unix::fs::symlink(inbox.dir.path().join("x"), questions.join("link.json")).unwrap();
    let made = std::process::Command::new("mkfifo")
        .arg(questions.join("fifo.json"))
        .status()
        .unwrap();
    assert!(made.success());
    std::fs::create_dir(questions.join("dir.json")).unwrap();
    inbox.place_file("bad name.txt", b"{}");
    inbox.place("linked", CONFIRM);
    std::fs::hard_link(
        questions.join("linked.json"),
        inbox.dir.path().join("second-name.json"),
    )
    .unwrap();
    let dropped = [
        ("link.json", "symbolic link"),
        ("fifo.json", "not a regular file"),
        ("dir.json", "not a regular file"),
        ("bad name.txt", ""),
        ("linked.json", "hard link"),
    ];

    let out = inbox.run(&["list"]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let text = stdout(&out);
    let section = text
        .find("Problems")
        .unwrap_or_else(|| panic!("no problems section: {text}"));
    assert!(
        text.find(&id).unwrap() < section,
        "after the requests: {text}"
    );
    for (name, reason) in dropped {
        let path = questions.join(name).display().to_string();
        let at = text[section..]
            .find(&path)
            .unwrap_or_else(|| panic!("{name} is not listed: {text}"));
        assert!(text[section + at..].contains(reason), "{name}: {text}");
    }
    assert!(text.contains("Not read: no outcome was written"), "{text}");

    let out = inbox.run(&["list", "--problems", "--json"]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let problems: Value = serde_json::from_str(&stdout(&out)).unwrap();
    for (name, reason) in dropped {
        let path = questions.join(name).display().to_string();
        let problem = problems
            .as_array()
            .unwrap()
            .iter()
            .find(|p| p["path"] == json!(path))
            .unwrap_or_else(|| panic!("{name} is not in {problems}"));
        assert!(
            problem["reasons"][0].as_str().unwrap().contains(reason),
            "{problem}"
        );
    }
    // `list --json` stays the array of requests scripts read, and says on standard error
    // that there is more to see.
    let out = inbox.run(&["list", "--json"]);
    let rows: Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!(rows.as_array().unwrap().len(), 1, "{rows}");
    assert!(stderr(&out).contains("list --problems"), "{}", stderr(&out));

    // Once a file is put right it is no longer a problem.
    std::fs::remove_file(inbox.dir.path().join("second-name.json")).unwrap();
    for name in ["link.json", "fifo.json", "bad name.txt"] {
        std::fs::remove_file(questions.join(name)).unwrap();
    }
    std::fs::remove_dir(questions.join("dir.json")).unwrap();
    let out = inbox.run(&["list"]);
    assert!(!stdout(&out).contains("Problems"), "{}", stdout(&out));
    assert!(stdout(&out).contains("linked"), "{}", stdout(&out));
}

/// Issue 26: the CLI side of teams. `policy` (TOML) becomes the operator's policy file.
fn write_policy(inbox: &Inbox, policy: &str) {
    let path = inbox.policy_file();
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, policy).unwrap();
}

/// The test's own account, as a policy's `assign` names it.
fn account() -> String {
    util::operator()
        .strip_prefix("operator:")
        .unwrap()
        .to_owned()
}

/// Whether the system account `daemon` exists (the second team member of these tests).
fn has_daemon() -> bool {
    let passwd = std::fs::read_to_string("/etc/passwd").unwrap_or_default();
    let found = passwd.lines().any(|line| line.starts_with("daemon:"));
    if !found {
        eprintln!("SKIPPED: no account daemon to assign requests to");
    }
    found
}

/// A one-question request with this id, title and `source.app`; `extra` is spliced into
/// the envelope.
fn team_request(id: &str, title: &str, app: &str, extra: &str) -> String {
    format!(
        r#"{{"inbox": 1, "id": "{id}", "title": "{title}", "source": {{"app": "{app}"}}, {extra}
            "questions": [{{"id": "go", "question": "Go?", "type": "confirm"}}]}}"#
    )
}

/// A running `watch` that has taken in and judged `id`: a turn judges what it took in, so
/// once a request placed after it is in, `id` has its judgement.
fn let_it_judge(inbox: &Inbox, watch: &mut Running, id: &str) {
    watch.wait_line(&format!("ingested {id}"));
    let marker = format!("{id}-after");
    inbox.place(&marker, &team_request(&marker, "marker", "marker", ""));
    watch.wait_line(&format!("ingested {marker}"));
}

#[test]
fn answer_refuses_a_request_assigned_to_others_with_exit_8_naming_them() {
    if !has_daemon() {
        return;
    }
    let inbox = Inbox::new();
    write_policy(
        &inbox,
        "[[rule]]\nname = \"theirs\"\ntitle = \"*theirs*\"\nassign = [\"daemon\"]\n\n\
         [[rule]]\nname = \"cover\"\ntitle = \"*cover*\"\nassign = [\"daemon\"]\ntakeover = true\n",
    );
    inbox.place("theirs-1", &team_request("theirs-1", "theirs", "ops", ""));
    inbox.place("cover-1", &team_request("cover-1", "cover", "ops", ""));

    let out = inbox.run(&["answer", "theirs-1", "--set", "go=yes"]);
    assert_eq!(code(&out), 8, "{}", stderr(&out));
    let said = stderr(&out);
    assert!(
        said.contains("assigned to daemon") && said.contains("allows no take-over"),
        "names the assignees and that no take-over is allowed: {said}"
    );
    assert!(!inbox.outcome_path("theirs-1").exists(), "nothing written");
    let out = inbox.run(&["answer", "theirs-1", "--decline", "not mine"]);
    assert_eq!(
        code(&out),
        8,
        "a decline is an answer too: {}",
        stderr(&out)
    );

    let out = inbox.run(&["list"]);
    let listed = stdout(&out);
    assert!(
        listed.contains("theirs-1: assigned to daemon (not you)")
            && listed.contains("cover-1: assigned to daemon (not you; you may take it over)"),
        "{listed}"
    );

    // Where the rule allows it, answering is taking over: no flag, and the outcome says so.
    let out = inbox.run(&["answer", "cover-1", "--set", "go=yes"]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let outcome = inbox.outcome("cover-1");
    assert_eq!(outcome["status"], "answered");
    assert_eq!(outcome["taken_over"], true, "{outcome}");
}

#[test]
fn an_approval_of_two_is_done_for_its_approver_and_list_shows_who_is_on_it() {
    if !has_daemon() {
        return;
    }
    let inbox = Inbox::new();
    let me = account();
    write_policy(
        &inbox,
        &format!(
            "[[rule]]\nname = \"two\"\ntitle = \"*prod*\"\nassign = [\"{me}\", \"daemon\"]\n\
             approvals = 2\n"
        ),
    );
    std::fs::create_dir_all(inbox.spool()).unwrap();
    let mut watch = Running::spawn(inbox.cmd(&["watch", "--no-notify"]));
    watch.wait_line("ready");
    inbox.place("prod-1", &team_request("prod-1", "Deploy prod", "ops", ""));
    let_it_judge(&inbox, &mut watch, "prod-1");

    let out = inbox.run(&["list", "--json"]);
    let rows: Value = serde_json::from_str(&stdout(&out)).unwrap();
    let row = rows
        .as_array()
        .unwrap()
        .iter()
        .find(|row| row["id"] == "prod-1")
        .unwrap();
    assert_eq!(row["assignees"], json!([me, "daemon"]), "{row}");
    assert_eq!(row["approvals_needed"], 2);
    assert_eq!(row["approvals"], json!([]));
    assert_eq!(row["approvals_progress"], "0 of 2");
    assert!(row["waited_ms"].as_i64().is_some_and(|ms| ms >= 0), "{row}");
    let marker = rows
        .as_array()
        .unwrap()
        .iter()
        .find(|row| row["id"] == "prod-1-after")
        .unwrap();
    assert!(marker.get("assignees").is_none(), "unassigned: {marker}");

    let out = inbox.run(&["answer", "prod-1", "--set", "go=yes"]);
    assert_eq!(code(&out), 0, "an approval is done: {}", stderr(&out));
    assert_eq!(
        stdout(&out).trim(),
        format!(
            "approved (1 of 2: approved by {me}); it settles when 2 assignees have approved \
             the same answers"
        )
    );
    assert!(
        !inbox.outcome_path("prod-1").exists(),
        "one approval of two"
    );

    let out = inbox.run(&["list"]);
    assert!(
        stdout(&out).contains(&format!(
            "prod-1: assigned to {me}, daemon (you are one); 1 of 2: approved by {me}; waiting"
        )),
        "{}",
        stdout(&out)
    );
    let out = inbox.run(&["list", "--json"]);
    let rows: Value = serde_json::from_str(&stdout(&out)).unwrap();
    let row = &rows[0];
    assert_eq!(row["id"], "prod-1");
    assert_eq!(row["approvals"][0]["by"], util::operator(), "{row}");
    assert_eq!(
        row["approvals_progress"],
        format!("1 of 2: approved by {me}")
    );
    watch.stop();
}

/// Places a request file whose mtime (when the inbox takes it as placed) is `secs` ago.
fn place_aged(inbox: &Inbox, id: &str, body: &str, secs: u64) {
    let tmp = inbox.spool().join("tmp").join(format!("{id}.json.writing"));
    std::fs::write(&tmp, body).unwrap();
    let placed = std::time::SystemTime::now() - std::time::Duration::from_secs(secs);
    std::fs::File::options()
        .write(true)
        .open(&tmp)
        .unwrap()
        .set_modified(placed)
        .unwrap();
    std::fs::rename(
        &tmp,
        inbox.spool().join("questions").join(format!("{id}.json")),
    )
    .unwrap();
}

#[test]
fn stats_count_and_time_the_answers_per_source_and_operator() {
    let inbox = Inbox::new();
    let me = account();
    // Requests titled "expiring" are the test account's to answer: their expiry is its.
    write_policy(
        &inbox,
        &format!("[[rule]]\nname = \"mine\"\ntitle = \"expiring\"\nassign = [\"{me}\"]\n"),
    );
    std::fs::create_dir_all(inbox.spool()).unwrap();
    let mut watch = Running::spawn(inbox.cmd(&["watch", "--no-notify"]));
    watch.wait_line("ready");
    // alpha: answered 60 s, 120 s and 600 s after their placing, declined after 300 s.
    for (id, secs) in [("a1", 60), ("a2", 120), ("a3", 600), ("a4", 300)] {
        place_aged(&inbox, id, &team_request(id, "alpha", "alpha", ""), secs);
        watch.wait_line(&format!("ingested {id}"));
    }
    for id in ["a1", "a2", "a3"] {
        let out = inbox.run(&["answer", id, "--set", "go=yes"]);
        assert_eq!(code(&out), 0, "{}", stderr(&out));
    }
    let out = inbox.run(&["answer", "a4", "--decline", "not now"]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    // beta: one expires (its expiry is the test account's), one its asker cancels.
    let expiring = team_request("b1", "expiring", "beta", r#""timeout_seconds": 1,"#);
    inbox.place("b1", &expiring);
    inbox.place("b2", &team_request("b2", "cancelled", "beta", ""));
    watch.wait_line("ingested b2");
    let out = inbox.run(&["cancel", "b2"]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert_eq!(inbox.wait_outcome("b1")["status"], "expired");
    eventually("b2 to be cancelled", || {
        let out = inbox.run(&["list", "--all", "--json"]);
        let rows: Value = serde_json::from_str(&stdout(&out)).unwrap();
        rows.as_array()
            .unwrap()
            .iter()
            .any(|row| row["id"] == "b2" && row["state"] == "cancelled")
    });
    watch.stop();

    let out = inbox.run(&["stats", "--json"]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let stats: Value = serde_json::from_str(&stdout(&out)).unwrap();
    let sources = stats["sources"].as_array().unwrap();
    let alpha = sources.iter().find(|s| s["app"] == "alpha").unwrap();
    let beta = sources.iter().find(|s| s["app"] == "beta").unwrap();
    let counts = |row: &Value| {
        ["count", "answered", "declined", "expired", "cancelled"].map(|key| row[key].clone())
    };
    assert_eq!(counts(alpha), [4, 3, 1, 0, 0].map(|n| json!(n)), "{alpha}");
    assert_eq!(counts(beta), [2, 0, 0, 1, 1].map(|n| json!(n)), "{beta}");
    assert_eq!(
        beta["median_ms"],
        Value::Null,
        "nobody answered beta: {beta}"
    );
    // Times from the aged files: the median of 60, 120, 300 and 600 s is 210 s; the p90,
    // by nearest rank, 600 s. The answers came a few seconds after the ageing.
    let near = |value: &Value, secs: i64| {
        let ms = value.as_i64().unwrap();
        (secs * 1000..secs * 1000 + 30_000).contains(&ms)
    };
    assert!(near(&alpha["median_ms"], 210), "{alpha}");
    assert!(near(&alpha["p90_ms"], 600), "{alpha}");
    let operators = stats["operators"].as_array().unwrap();
    assert_eq!(operators.len(), 1, "{operators:?}");
    let mine = &operators[0];
    assert_eq!(mine["operator"], json!(me));
    assert_eq!(
        ["count", "answered", "declined", "expired"].map(|key| mine[key].clone()),
        [4, 3, 1, 1].map(|n| json!(n)),
        "b1 was the test account's and expired: {mine}"
    );
    assert!(
        near(&mine["median_ms"], 210) && near(&mine["p90_ms"], 600),
        "{mine}"
    );

    let out = inbox.run(&["stats"]);
    let text = stdout(&out);
    assert!(text.contains("(30days): 6 requests"), "{text}");
    assert!(
        text.lines().any(|line| line.starts_with("alpha ")) && text.contains("OPERATOR"),
        "{text}"
    );

    // A period after all of them: nothing settled in it.
    let later = (chrono::Utc::now() - chrono::Duration::milliseconds(1)).to_rfc3339();
    let out = inbox.run(&["stats", "--since", &later, "--json"]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let stats: Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!(stats["sources"], json!([]), "{stats}");

    for (since, says) in [
        ("last week", "neither a duration"),
        ("2999-01-01", "not in the past"),
        ("0s", "empty period"),
    ] {
        let out = inbox.run(&["stats", "--since", since]);
        assert_eq!(code(&out), 1, "{since}");
        assert!(stderr(&out).contains(says), "{since}: {}", stderr(&out));
    }
}
