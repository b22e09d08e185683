//! Answer many alike, black-box: requests of parallel runs that ask the same questions are
//! grouped by `list`, and `answer ID --alike` answers the group once, after a screen naming
//! every request, each outcome bound to its own request's version.

use serde_json::{json, Value};

use crate::util::{code, stderr, stdout, Inbox};

/// A request of one run: the questions are the same for every run, the title and source
/// are the run's own.
fn run_request(run: &str) -> String {
    format!(
        r#"{{"inbox": 1, "title": "Deploy SPEC-042 ({run})", "source": {{"app": "planu", "run": "{run}"}},
  "questions": [
    {{"id": "go", "question": "Deploy to production?", "type": "confirm"}},
    {{"id": "env", "question": "Where?", "type": "choice", "options": ["staging", "production"]}}
  ]}}"#
    )
}

/// A request that asks something else.
const OTHER: &str = r#"{"inbox": 1, "title": "Drop the cache", "source": {"app": "planu"},
  "questions": [{"id": "go", "question": "Drop the cache?", "type": "confirm"}]}"#;

const RUNS: [&str; 3] = ["run-1", "run-2", "run-3"];

/// Three runs asking the same, and one request asking something else.
fn three_alike_and_one_other() -> Inbox {
    let inbox = Inbox::new();
    for run in RUNS {
        inbox.place(run, &run_request(run));
    }
    inbox.place("other", OTHER);
    inbox
}

fn request_sha256(inbox: &Inbox, id: &str) -> String {
    let bytes = std::fs::read(inbox.spool().join("questions").join(format!("{id}.json"))).unwrap();
    inbox_protocol::sha256_hex(&bytes)
}

/// The outcome of `id` answers it, bound to its own file's version.
fn assert_answered(inbox: &Inbox, id: &str, answers: &Value) {
    let outcome = inbox.outcome(id);
    assert_eq!(outcome["status"], "answered", "{id}: {outcome}");
    assert_eq!(&outcome["answers"], answers, "{id}");
    assert_eq!(
        outcome["request_sha256"],
        json!(request_sha256(inbox, id)),
        "{id} is bound to its own request"
    );
}

#[test]
fn list_shows_the_group_of_three_and_not_the_other() {
    let inbox = three_alike_and_one_other();
    let out = inbox.run(&["list"]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let text = stdout(&out);
    assert!(
        text.contains("3 alike: run-1, run-2, run-3"),
        "the group, oldest first:\n{text}"
    );
    assert!(text.contains("--alike"), "says how to answer it:\n{text}");
    let group_line = text.lines().find(|l| l.contains("alike:")).unwrap();
    assert!(!group_line.contains("other"), "{text}");

    let out = inbox.run(&["list", "--json"]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let rows: Vec<Value> = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!(rows.len(), 4);
    let alike = |id: &str| {
        rows.iter()
            .find(|row| row["id"] == id)
            .unwrap_or_else(|| panic!("{id} is listed"))
            .get("alike")
            .cloned()
    };
    let first = alike("run-1").expect("run-1 is in a group");
    assert_eq!(first["size"], 3);
    assert_eq!(first["fingerprint"].as_str().unwrap().len(), 64);
    for run in RUNS {
        assert_eq!(alike(run).as_ref(), Some(&first), "{run}");
    }
    assert_eq!(alike("other"), None, "a request alone in what it asks");
}

#[test]
fn answer_alike_writes_one_outcome_per_request_each_bound_to_its_own_version() {
    let inbox = three_alike_and_one_other();
    let out = inbox.run(&[
        "answer",
        "run-2",
        "--alike",
        "--yes",
        "--set",
        "go=yes",
        "--set",
        "env=staging",
    ]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let screen = stderr(&out);
    assert!(
        screen.contains("3 requests ask the same questions"),
        "{screen}"
    );
    for run in RUNS {
        assert!(screen.contains(run), "the screen names {run}:\n{screen}");
        let version = request_sha256(&inbox, run);
        assert!(
            screen.contains(&version[..12]),
            "the screen shows the version of {run}:\n{screen}"
        );
        assert!(
            screen.contains(&format!("Deploy SPEC-042 ({run})")),
            "and its title:\n{screen}"
        );
    }
    assert!(!screen.contains("other"), "{screen}");

    let answers = json!({"go": true, "env": "staging"});
    for run in RUNS {
        assert_answered(&inbox, run, &answers);
    }
    assert!(
        !inbox.outcome_path("other").exists(),
        "the other is untouched"
    );
    let written: Vec<Value> = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!(written.len(), 3, "every outcome written on standard output");

    let out = inbox.run(&["list"]);
    let text = stdout(&out);
    assert!(!text.contains("run-"), "the group is settled:\n{text}");
    assert!(text.contains("other"), "{text}");
}

#[test]
fn a_member_swapped_after_listing_is_refused_and_the_others_are_answered() {
    let inbox = three_alike_and_one_other();
    assert_eq!(code(&inbox.run(&["list"])), 0);
    // The file of run-2 is replaced after the operator saw the list.
    inbox.place(
        "run-2",
        &run_request("run-2").replace("Deploy to production?", "Delete production?"),
    );

    let out = inbox.run(&[
        "answer",
        "run-1",
        "--alike",
        "--yes",
        "--set",
        "go=no",
        "--set",
        "env=production",
    ]);
    assert_eq!(
        code(&out),
        5,
        "the code of the first refusal: changed\n{}",
        stderr(&out)
    );
    let text = stderr(&out);
    let refused = text
        .lines()
        .find(|l| l.contains("run-2:"))
        .unwrap_or_else(|| panic!("a line for run-2:\n{text}"));
    assert!(
        refused.contains("not answered") && refused.contains("changed after it was placed"),
        "{text}"
    );
    assert!(
        !inbox.outcome_path("run-2").exists(),
        "nothing written for it"
    );
    let answers = json!({"go": false, "env": "production"});
    assert_answered(&inbox, "run-1", &answers);
    assert_answered(&inbox, "run-3", &answers);
    assert!(!inbox.outcome_path("other").exists());
}

#[test]
fn without_a_terminal_or_yes_nothing_is_answered() {
    let inbox = three_alike_and_one_other();
    let out = inbox.run(&[
        "answer",
        "run-1",
        "--alike",
        "--set",
        "go=yes",
        "--set",
        "env=staging",
    ]);
    assert_eq!(code(&out), 1, "{}", stderr(&out));
    let text = stderr(&out);
    assert!(
        text.contains("not a terminal") && text.contains("--yes"),
        "{text}"
    );
    assert!(
        RUNS.iter().all(|run| text.contains(run)),
        "the screen still lists what would be answered:\n{text}"
    );
    for id in RUNS.iter().chain(&["other"]) {
        assert!(!inbox.outcome_path(id).exists(), "nothing written for {id}");
    }
}

#[test]
fn a_request_alone_in_what_it_asks_is_answered_alone_after_the_screen() {
    let inbox = three_alike_and_one_other();
    let out = inbox.run(&["answer", "other", "--alike", "--yes", "--set", "go=yes"]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let screen = stderr(&out);
    assert!(
        screen.contains("No other pending request asks the same questions"),
        "{screen}"
    );
    assert!(
        screen.contains(&request_sha256(&inbox, "other")[..12]),
        "{screen}"
    );
    assert!(!screen.contains("run-"), "{screen}");
    assert_answered(&inbox, "other", &json!({"go": true}));
    for run in RUNS {
        assert!(!inbox.outcome_path(run).exists(), "{run} is untouched");
    }
}

#[test]
fn invalid_answers_are_refused_before_the_screen() {
    let inbox = three_alike_and_one_other();
    let out = inbox.run(&[
        "answer", "run-1", "--alike", "--yes", "--set", "go=yes", "--set", "env=moon",
    ]);
    assert_eq!(code(&out), 1, "{}", stderr(&out));
    assert!(stderr(&out).contains("env"), "{}", stderr(&out));
    assert!(
        !stderr(&out).contains("ask the same questions"),
        "{}",
        stderr(&out)
    );
    for run in RUNS {
        assert!(
            !inbox.outcome_path(run).exists(),
            "nothing written for {run}"
        );
    }
}
