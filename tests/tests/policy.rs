//! The operator's policy through the command line (issue 13): `policy check` names every
//! problem's line, `policy explain` says which rule a request meets and what will happen,
//! the shipped policy's promises hold in a running `watch`, a broken file never allows more,
//! a changed file judges pending requests again, and `snooze` puts a request away and back.

use serde_json::Value;

use crate::util::{code, stderr, stdout, Inbox, Running};

/// An autonomous request whose one required question has a default: it settles itself
/// wherever a rule honours autonomous mode. `extra` is spliced into the envelope.
fn autonomous(id: &str, extra: &str) -> String {
    format!(
        r#"{{"inbox": 1, "id": "{id}", "title": "Rotate {id}", "mode": "autonomous", {extra}
            "questions": [{{"id": "go", "question": "Rotate now?", "type": "confirm", "default": true}}]}}"#
    )
}

fn write_policy(inbox: &Inbox, text: &str) {
    let path = inbox.policy_file();
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    // Written aside and renamed, as an editor saves: `watch` never reads half a file.
    let staged = path.with_extension("toml.new");
    std::fs::write(&staged, text).unwrap();
    std::fs::rename(&staged, &path).unwrap();
}

/// `answer-inbox watch` on the inbox's spool, ready.
fn watch(inbox: &Inbox) -> Running {
    std::fs::create_dir_all(inbox.spool()).unwrap();
    let mut watch = Running::spawn(inbox.cmd(&["watch", "--no-notify"]));
    watch.wait_line("ready");
    watch
}

/// Places `id`, then a plain request after it, and waits until `watch` took both in: a
/// turn judges what it took in, so by then the policy has had its chance at `id`.
fn place_and_let_it_judge(inbox: &Inbox, watch: &mut Running, id: &str, body: &str) {
    inbox.place(id, body);
    watch.wait_line(&format!("ingested {id}"));
    let marker = format!("{id}-after");
    inbox.place(
        &marker,
        r#"{"inbox": 1, "questions": [{"id": "ok", "question": "Ok?", "type": "confirm"}]}"#,
    );
    watch.wait_line(&format!("ingested {marker}"));
}

fn pending_ids(inbox: &Inbox, args: &[&str]) -> Vec<String> {
    let out = inbox.run(&[&["list", "--json"], args].concat());
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let rows: Vec<Value> = serde_json::from_str(&stdout(&out)).unwrap();
    rows.iter()
        .map(|row| row["id"].as_str().unwrap().to_owned())
        .collect()
}

#[test]
fn policy_check_names_every_problem_by_its_line() {
    let inbox = Inbox::new();
    // No file at the default place: the shipped policy, and that is fine.
    let out = inbox.run(&["policy", "check"]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert!(
        stdout(&out).contains("the shipped policy applies"),
        "{}",
        stdout(&out)
    );

    let dir = tempfile::tempdir().unwrap();
    let bad = dir.path().join("bad.toml");
    std::fs::write(
        &bad,
        "[[rule]]\n\
         name = \"twice\"\n\
         colour = \"red\"\n\
         after = \"soon\"\n\
         then = \"default\"\n\
         \n\
         [[rule]]\n\
         name = \"twice\"\n\
         title = \"deploy[\"\n\
         notify = \"loud\"\n",
    )
    .unwrap();
    let out = inbox.run(&["policy", "check", bad.to_str().unwrap()]);
    assert_eq!(code(&out), 1, "{}", stdout(&out));
    let err = stderr(&out);
    assert!(err.contains("invalid"), "{err}");
    // The unknown key is a problem of the file's shape, so the whole parse stops there and
    // the meaning checks wait: fix it, then check again.
    assert!(err.contains("line 3") && err.contains("colour"), "{err}");

    std::fs::write(
        &bad,
        "[[rule]]\n\
         name = \"twice\"\n\
         after = \"soon\"\n\
         then = \"default\"\n\
         \n\
         [[rule]]\n\
         name = \"twice\"\n\
         title = \"deploy[\"\n\
         notify = \"loud\"\n",
    )
    .unwrap();
    let out = inbox.run(&["policy", "check", bad.to_str().unwrap()]);
    assert_eq!(code(&out), 1, "{}", stdout(&out));
    let err = stderr(&out);
    for (line, what) in [
        ("line 3", "soon"),
        ("line 7", "twice"),
        ("line 8", "deploy["),
        ("line 9", "loud"),
    ] {
        assert!(
            err.lines().any(|l| l.contains(line) && l.contains(what)),
            "{line} should name {what}: {err}"
        );
    }

    // A syntax error names its line too.
    std::fs::write(&bad, "[[rule]]\nname = \"x\"\nautonomous = \n").unwrap();
    let out = inbox.run(&["policy", "check", bad.to_str().unwrap()]);
    assert_eq!(code(&out), 1);
    assert!(stderr(&out).contains("line 3"), "{}", stderr(&out));

    let good = dir.path().join("good.toml");
    std::fs::write(
        &good,
        "[[rule]]\nname = \"nightly\"\napp = \"housekeeping\"\nautonomous = \"honour\"\n",
    )
    .unwrap();
    let out = inbox.run(&["policy", "check", good.to_str().unwrap()]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert!(
        stdout(&out).contains("ok, 1 rule: nightly"),
        "{}",
        stdout(&out)
    );
}

#[test]
fn policy_explain_says_which_rule_and_what_happens() {
    let inbox = Inbox::new();
    let dir = tempfile::tempdir().unwrap();
    let explain = |body: &str, extra: &[&str]| {
        let file = dir.path().join("request.json");
        std::fs::write(&file, body).unwrap();
        let out = inbox.run(&[&["policy", "explain", file.to_str().unwrap()], extra].concat());
        assert_eq!(code(&out), 0, "{}", stderr(&out));
        stdout(&out)
    };

    let text = explain(&autonomous("c", r#""priority": "critical","#), &[]);
    assert!(text.contains("Policy:  the shipped policy"), "{text}");
    assert!(text.contains("Rule:    critical-needs-a-person"), "{text}");
    assert!(text.contains("it waits for a person"), "{text}");

    let text = explain(&autonomous("n", ""), &[]);
    assert!(text.contains("Rule:    file-askers"), "{text}");
    assert!(
        text.contains("settles itself at once") && text.contains("policy:rule:file-askers"),
        "{text}"
    );

    let agent = autonomous(
        "a",
        r#""source": {"app": "claude", "tool": "ask_operator"},"#,
    );
    let text = explain(&agent, &[]);
    assert!(text.contains("Rule:    agents-ask-a-person"), "{text}");
    assert!(text.contains("it waits for a person"), "{text}");

    // The account that placed the file is a fact an asker cannot choose; --account stands
    // in for the file's owner.
    write_policy(
        &inbox,
        "[[rule]]\nname = \"ci-account\"\naccount = \"ci\"\nautonomous = \"honour\"\n",
    );
    let json: Value = serde_json::from_str(&explain(
        &autonomous("n", ""),
        &["--account", "ci", "--json"],
    ))
    .unwrap();
    assert_eq!(json["verdict"]["rule"], "ci-account", "{json}");
    let json: Value = serde_json::from_str(&explain(
        &autonomous("n", ""),
        &["--account", "someone-else", "--json"],
    ))
    .unwrap();
    assert_eq!(json["verdict"]["rule"], "no-rule-matched", "{json}");
}

/// The shipped policy's promises, in a running inbox: a critical request's autonomous mode
/// is held (and `list` and `show` say so and why), an ordinary file asker's is honoured and
/// names its rule.
#[test]
fn the_shipped_policy_holds_a_critical_autonomous_request_for_a_person() {
    let inbox = Inbox::new();
    let mut watch = watch(&inbox);
    let critical = autonomous("drop-db", r#""priority": "critical","#);
    place_and_let_it_judge(&inbox, &mut watch, "drop-db", &critical);
    assert!(!inbox.outcome_path("drop-db").exists(), "a person decides");

    let out = inbox.run(&["list"]);
    let list = stdout(&out);
    let row = list.lines().find(|l| l.starts_with("drop-db")).unwrap();
    assert!(row.contains("[held]"), "{list}");
    let out = inbox.run(&["show", "drop-db"]);
    let show = stdout(&out);
    assert!(
        show.contains("rule critical-needs-a-person") && show.contains("held"),
        "{show}"
    );

    let ordinary = autonomous("rotate", "");
    inbox.place("rotate", &ordinary);
    let outcome = inbox.wait_outcome("rotate");
    assert_eq!(outcome["status"], "defaulted");
    assert_eq!(outcome["answered_by"], "policy:rule:file-askers");
    assert_eq!(outcome["trigger"], "autonomous");
    assert!(!inbox.outcome_path("drop-db").exists());
    assert_eq!(watch.stop(), Some(0));
}

/// A policy file broken when the inbox starts holds everything for a person, loudly; once
/// fixed, the pending requests are judged again by it and the change is in the log.
#[test]
fn a_broken_policy_holds_everything_until_a_good_one_judges_again() {
    let inbox = Inbox::new();
    write_policy(
        &inbox,
        "[[rule]]\nname = \"oops\"\nautonomous = \"maybe\"\n",
    );
    let out = inbox.run(&["policy", "check"]);
    assert_eq!(code(&out), 1);
    assert!(stderr(&out).contains("line 3"), "{}", stderr(&out));

    let mut watch = watch(&inbox);
    let trouble = watch.wait_line("POLICY PROBLEM");
    assert!(trouble.contains("held for a person"), "{trouble}");
    place_and_let_it_judge(&inbox, &mut watch, "nightly", &autonomous("nightly", ""));
    assert!(
        !inbox.outcome_path("nightly").exists(),
        "a broken policy allows nothing"
    );

    write_policy(
        &inbox,
        "[[rule]]\nname = \"trust-files\"\nautonomous = \"honour\"\n",
    );
    watch.wait_line("policy: now");
    let outcome = inbox.wait_outcome("nightly");
    assert_eq!(outcome["answered_by"], "policy:rule:trust-files");
    assert_eq!(watch.stop(), Some(0));
}

#[test]
fn snooze_puts_a_request_away_and_unsnooze_brings_it_back() {
    let inbox = Inbox::new();
    inbox.place(
        "later",
        r#"{"inbox": 1, "timeout_seconds": 600,
            "questions": [{"id": "go", "question": "Go?", "type": "confirm"}]}"#,
    );
    assert_eq!(pending_ids(&inbox, &[]), ["later"]);

    // Longer than the request lives: cut to its expiry, and said.
    let out = inbox.run(&["snooze", "later", "2h"]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert!(
        stdout(&out).contains("cut to its expiry"),
        "{}",
        stdout(&out)
    );
    assert!(pending_ids(&inbox, &[]).is_empty());
    let out = inbox.run(&["list"]);
    assert!(
        stderr(&out).contains("1 request snoozed"),
        "{}",
        stderr(&out)
    );
    assert_eq!(pending_ids(&inbox, &["--snoozed"]), ["later"]);
    let show = stdout(&inbox.run(&["show", "later"]));
    assert!(
        show.contains("snoozed") && show.contains("unsnooze later"),
        "{show}"
    );

    let out = inbox.run(&["unsnooze", "later"]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert_eq!(pending_ids(&inbox, &[]), ["later"]);
    assert!(pending_ids(&inbox, &["--snoozed"]).is_empty());

    // Bad input: an unknown id, a duration that is not one, a settled request.
    let out = inbox.run(&["snooze", "nobody", "30m"]);
    assert_eq!(code(&out), 1);
    assert!(
        stderr(&out).contains("no request \"nobody\""),
        "{}",
        stderr(&out)
    );
    let out = inbox.run(&["snooze", "later", "soon"]);
    assert_eq!(code(&out), 2);
    assert!(stderr(&out).contains("soon"), "{}", stderr(&out));
    let out = inbox.run(&["answer", "later", "--set", "go=yes"]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let out = inbox.run(&["snooze", "later", "30m"]);
    assert_eq!(code(&out), 3, "{}", stderr(&out));
    assert!(stderr(&out).contains("already settled"), "{}", stderr(&out));
}

/// A snooze ends by itself: the running inbox announces the request again (its log says so).
#[test]
fn a_snooze_that_ends_brings_the_request_back_in_a_running_inbox() {
    let inbox = Inbox::new();
    let mut watch = watch(&inbox);
    inbox.place(
        "brief",
        r#"{"inbox": 1, "questions": [{"id": "go", "question": "Go?", "type": "confirm"}]}"#,
    );
    watch.wait_line("ingested brief");
    let out = inbox.run(&["snooze", "brief", "2s"]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    // The snooze is in the database; the running inbox takes it into account at its next
    // turn (a file event, or its periodic scan): give it one now.
    place_and_let_it_judge(
        &inbox,
        &mut watch,
        "other",
        r#"{"inbox": 1, "questions": [{"id": "go", "question": "Go?", "type": "confirm"}]}"#,
    );
    watch.wait_line("snooze of brief ended");
    assert!(pending_ids(&inbox, &[]).contains(&"brief".to_owned()));
    assert_eq!(watch.stop(), Some(0));
}

/// Issue 25: a rule that lets agents' requests default at expiry must name `min_timeout`;
/// `policy check` says so, and `policy explain` says that a catch-all's expiry defaults do
/// not reach an agent's request.
#[test]
fn agents_expiry_defaults_need_min_timeout_and_explain_says_so() {
    let inbox = Inbox::new();
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("agents.toml");
    std::fs::write(
        &file,
        "[[rule]]\nname = \"agents-low-stakes\"\ntool = \"ask_operator\"\non_expiry = \"default\"\n",
    )
    .unwrap();
    let out = inbox.run(&["policy", "check", file.to_str().unwrap()]);
    assert_eq!(code(&out), 1, "{}", stdout(&out));
    let said = stdout(&out) + &stderr(&out);
    assert!(
        said.contains("line 4")
            && said.contains("rule \"agents-low-stakes\"")
            && said.contains("needs min_timeout"),
        "{said}"
    );

    write_policy(
        &inbox,
        "[[rule]]\nname = \"everyone\"\non_expiry = \"default\"\n",
    );
    let request = dir.path().join("agent.json");
    std::fs::write(
        &request,
        r#"{"inbox": 1, "timeout_seconds": 1, "source": {"app": "hasty", "tool": "ask_operator"},
            "questions": [{"id": "go", "question": "Force-push main?", "type": "confirm", "default": true}]}"#,
    )
    .unwrap();
    let out = inbox.run(&["policy", "explain", request.to_str().unwrap()]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let text = stdout(&out);
    assert!(
        text.contains("Rule:    everyone")
            && text.contains("agent's request (source tool \"ask_operator\")")
            && text.contains("when it expires, it expires without answers"),
        "{text}"
    );
}

/// `policy check` refuses the operator's file when its folder is open to others, even once
/// the file is gone (another account removed it: not "the shipped policy"), names the
/// folder, and `--json` reports every refused file as an object, exit 1, never a bare
/// error line.
#[test]
fn policy_check_refuses_a_file_in_a_shared_folder_and_json_says_why() {
    use std::os::unix::fs::PermissionsExt;
    let inbox = Inbox::new();
    write_policy(&inbox, "[[rule]]\nname = \"strict\"\n");
    let path = inbox.policy_file();
    let folder = path.parent().unwrap().to_owned();
    let chmod = |path: &std::path::Path, mode: u32| {
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).unwrap()
    };
    let refused = |out: &std::process::Output, words: &str| {
        assert_eq!(code(out), 1, "{}{}", stdout(out), stderr(out));
        let report: Value = serde_json::from_str(&stdout(out))
            .unwrap_or_else(|_| panic!("no JSON: {}{}", stdout(out), stderr(out)));
        assert_eq!(report["valid"], false, "{report}");
        assert_eq!(report["shipped"], false, "{report}");
        assert_eq!(report["file"], path.display().to_string(), "{report}");
        let message = report["problems"][0]["message"].as_str().unwrap();
        assert!(message.contains(words), "{report}");
    };

    // The file itself open to others (refused before this, but without JSON).
    chmod(&path, 0o666);
    refused(
        &inbox.run(&["policy", "check", "--json"]),
        "may write to it",
    );
    chmod(&path, 0o644);
    assert_eq!(code(&inbox.run(&["policy", "check"])), 0);

    chmod(&folder, 0o777);
    std::fs::remove_file(&path).unwrap();
    let shown = folder.display().to_string();
    refused(&inbox.run(&["policy", "check", "--json"]), &shown);
    let out = inbox.run(&["policy", "check"]);
    assert_eq!(code(&out), 1);
    assert!(
        stderr(&out).contains("not used")
            && stderr(&out).contains(&shown)
            && stderr(&out).contains("another account may change"),
        "{}",
        stderr(&out)
    );
    assert!(!stdout(&out).contains("shipped"), "{}", stdout(&out));

    // Sticky, as /tmp: nobody else can remove the file, so no file is the shipped policy.
    chmod(&folder, 0o1777);
    let out = inbox.run(&["policy", "check"]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert!(stdout(&out).contains("the shipped policy applies"));
}

/// Issue 26: `policy check` warns about assignees that do not exist on this machine, and in
/// a team spool checks the team's `team-policy.toml` as every member's inbox loads it and
/// says which file is in force.
#[test]
fn policy_check_warns_about_unknown_assignees_and_checks_the_team_file() {
    let inbox = Inbox::new();
    write_policy(
        &inbox,
        "[[rule]]\nname = \"ghosts\"\nassign = [\"no-such-account-26\"]\n",
    );
    let out = inbox.run(&["policy", "check"]);
    assert_eq!(
        code(&out),
        0,
        "a warning is not a problem: {}",
        stderr(&out)
    );
    assert!(
        stdout(&out).contains("ok, 1 rule: ghosts"),
        "{}",
        stdout(&out)
    );
    assert!(
        stderr(&out)
            .lines()
            .any(|line| line.starts_with("warning: ")
                && line.contains("line 3")
                && line.contains("\"no-such-account-26\" does not exist on this machine")),
        "{}",
        stderr(&out)
    );
    let out = inbox.run(&["policy", "check", "--json"]);
    let report: Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!(report["valid"], true);
    assert_eq!(report["warnings"][0]["line"], 3, "{report}");
    assert_eq!(report["governs"], inbox.policy_file().display().to_string());
    assert!(report.get("team").is_none(), "not a team spool: {report}");

    // A team spool (made by a first command) with no team file: each member's own applies.
    let team = |args: &[&str]| inbox.run(&[&["--team", "daemon"], args].concat());
    assert_eq!(code(&team(&["list"])), 0);
    let out = team(&["policy", "check"]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert!(
        stdout(&out).contains("has no team-policy.toml, so each member's own policy applies"),
        "{}",
        stdout(&out)
    );

    // The team's file governs, and is checked as the inboxes load it.
    let team_file = inbox.spool().join("team-policy.toml");
    std::fs::write(
        &team_file,
        "[[rule]]\nname = \"prod\"\nassign = [\"daemon\"]\napprovals = 2\n",
    )
    .unwrap();
    let out = team(&["policy", "check"]);
    assert_eq!(
        code(&out),
        1,
        "more approvals than assignees: {}",
        stderr(&out)
    );
    assert!(
        stderr(&out).contains("team-policy.toml: invalid")
            && stderr(&out).contains("more approvals than the rule has assignees"),
        "{}",
        stderr(&out)
    );
    assert!(stdout(&out).contains("In force here:") && stdout(&out).contains("broken"));

    std::fs::write(
        &team_file,
        "[[rule]]\nname = \"prod\"\nassign = [\"daemon\"]\n",
    )
    .unwrap();
    let out = team(&["policy", "check"]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let shown = format!(
        "In force here: {} (a team spool's policy",
        team_file.display()
    );
    assert!(stdout(&out).contains(&shown), "{}", stdout(&out));
    let out = team(&["policy", "check", "--json"]);
    let report: Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!(report["governs"], team_file.display().to_string());
    assert_eq!(report["team"]["rules"], serde_json::json!(["prod"]));
    assert_eq!(report["team"]["valid"], true);

    // Another account's team file is never used; with no chown (not root) this part is moot.
    if std::os::unix::fs::chown(&team_file, Some(1), None).is_ok() {
        let out = team(&["policy", "check"]);
        assert_eq!(code(&out), 1, "{}", stderr(&out));
        assert!(
            stderr(&out).contains("team-policy.toml: not used"),
            "{}",
            stderr(&out)
        );
    }
}
