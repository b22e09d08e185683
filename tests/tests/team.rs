//! Team mode on a real shared filesystem, short version: two operators (the OS accounts
//! `inbox-op-a` and `inbox-op-b`, each with its own inbox and database) answer one spool
//! through sshfs over a loopback OpenSSH server, with `watch --poll`, requests placed on
//! either side and every request raced by both: exactly one outcome per request, attributed
//! to the account that wrote it, nothing lost, and a request from an account outside the
//! team refused (see `inbox_harness::team`). The long run is `inbox-bench team --requests
//! 500`.
//!
//! It needs root (accounts, mounts) and FUSE. Where either is missing it says so on
//! standard error and passes: the only skip the suite allows (scripts/setup installs sshfs
//! and the OpenSSH server; the CI runs as root).

use inbox_harness::team;

use crate::util;

/// The accounts of the tests about who wrote an outcome file, shared with the client's
/// corpus test (one list of them, not one per crate).
#[path = "../../crates/client/tests/accounts.rs"]
pub(crate) mod accounts;

const REQUESTS: usize = 60;

#[test]
fn two_operators_over_sshfs() {
    if let Some(reason) = team::unavailable() {
        eprintln!("SKIPPED: team mode over sshfs needs FUSE, root and sshfs ({reason})");
        return;
    }
    let mut config = team::Config::new(util::binary(), REQUESTS);
    // A failure names its seed; INBOX_TEST_SEED replays the same placing.
    if let Some(seed) = std::env::var("INBOX_TEST_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
    {
        config.seed = seed;
    }
    let report = team::run(&config).unwrap_or_else(|message| panic!("{message}"));
    eprintln!("{report}");
    assert_eq!(report.requests, REQUESTS);
    assert_eq!(report.wins[0] + report.wins[1], REQUESTS);
    assert_eq!(report.losers_told, REQUESTS);
    // Both sides placed and both won somewhere, so the races really were races.
    assert!(report.placed_by.iter().all(|&n| n > 0), "{report}");
    assert!(report.wins.iter().all(|&n| n > 0), "{report}");
    assert!(!report.outsider_refusals.is_empty(), "{report}");
}

/// A member of a team, as a process of their own: `answer-inbox --team GROUP --spool S
/// --db <their own database> ARGS`, run as that account (setpriv, with its groups), with a
/// home of its own.
struct Member<'a> {
    name: &'a str,
    binary: &'a std::path::Path,
    spool: &'a std::path::Path,
    home: std::path::PathBuf,
}

impl Member<'_> {
    fn command(&self, program: &std::path::Path, args: &[&str]) -> std::process::Command {
        let mut cmd = std::process::Command::new("setpriv");
        cmd.arg(format!("--reuid={}", self.name))
            .arg(format!("--regid={}", self.name))
            .arg("--init-groups")
            .arg("--")
            .arg(program)
            .args(args)
            .env_clear()
            .env("PATH", "/usr/bin:/bin")
            .env("HOME", &self.home)
            .env("XDG_DATA_HOME", self.home.join("data"))
            .env("XDG_CONFIG_HOME", self.home.join("config"))
            .env("ANSWER_INBOX_DIR", self.spool)
            .env("ANSWER_INBOX_DB", self.home.join("inbox.sqlite3"))
            .env("ANSWER_INBOX_TEAM", accounts::GROUP)
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped());
        cmd
    }

    /// Runs `answer-inbox ARGS` as this member, `stdin` fed to it, to its end.
    fn inbox(&self, args: &[&str], stdin: &[u8]) -> std::process::Output {
        feed(self.command(self.binary, args).spawn().unwrap(), stdin)
    }
}

fn feed(mut child: std::process::Child, stdin: &[u8]) -> std::process::Output {
    use std::io::Write;
    child.stdin.take().unwrap().write_all(stdin).unwrap();
    child.wait_with_output().unwrap()
}

/// A member cannot answer in another member's name, on the asker's side either. Bob's
/// pipeline asks (`ask --wait`, as bob) for a person's approval; bob writes the outcome
/// himself, saying `operator:inbox-crew-ann` approved. `ask --wait` refuses it with the bad
/// outcome's exit code (14), naming both accounts, and prints no outcome; Ann's own inbox
/// shows the request blocked for the same reason. The control: Ann's real answer to the
/// next request is taken. Real accounts, real files, a local team spool (no sshfs).
#[test]
fn a_member_cannot_answer_in_another_members_name() {
    use std::os::unix::fs::PermissionsExt;

    let crew = match accounts::crew() {
        Ok(crew) => crew,
        Err(why) => {
            eprintln!("SKIPPED: answering in another's name needs other accounts ({why})");
            return;
        }
    };
    let dir = tempfile::tempdir().unwrap();
    let mode = |path: &std::path::Path, mode: u32| {
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).unwrap()
    };
    mode(dir.path(), 0o755);
    // The binary where the members can run it (the target dir may be in root's home).
    let binary = dir.path().join("answer-inbox");
    if std::fs::hard_link(util::binary(), &binary).is_err() {
        std::fs::copy(util::binary(), &binary).unwrap();
    }
    let spool = dir.path().join("spool");
    std::fs::create_dir(&spool).unwrap();
    std::os::unix::fs::chown(&spool, None, Some(crew.gid)).unwrap();
    mode(&spool, 0o2770);
    let [ann, bob] = [0, 1].map(|k| {
        let home = dir.path().join(accounts::MEMBERS[k]);
        std::fs::create_dir(&home).unwrap();
        std::os::unix::fs::chown(&home, Some(crew.members[k]), None).unwrap();
        mode(&home, 0o700);
        Member {
            name: accounts::MEMBERS[k],
            binary: &binary,
            spool: &spool,
            home,
        }
    });
    let request = |id: &str| {
        format!(
            r#"{{"inbox": 1, "id": "{id}", "title": "Deploy billing to production?",
                "questions": [{{"id": "go", "question": "Deploy now?", "type": "confirm"}}]}}"#
        )
    };
    let ask = |id: &str| {
        let child = bob
            .command(&binary, &["ask", "--wait", "--timeout", "60", "-"])
            .spawn()
            .unwrap();
        let placed = spool.join("questions").join(format!("{id}.json"));
        (child, placed)
    };

    // The forgery: bob's own file, in Ann's name.
    let (asking, placed) = ask("approve-deploy");
    let asked = std::thread::spawn(move || feed(asking, request("approve-deploy").as_bytes()));
    util::eventually("bob's request to be placed", || placed.exists());
    let sha = inbox_protocol::sha256_hex(&std::fs::read(&placed).unwrap());
    let forged = format!(
        r#"{{"inbox": 1, "id": "approve-deploy", "status": "answered", "answers": {{"go": true}},
            "custom": [], "defaulted": [], "answered_by": "operator:{ann}",
            "answered_at": "2026-12-05T10:00:00Z", "decided_by": "person", "surface": "cli",
            "request_sha256": "{sha}", "instance": "bobs-laptop/01JFORGED00000000000000000"}}"#,
        ann = ann.name
    );
    // Written as the inbox writes it: whole into tmp/, then linked into answers/.
    let mut writing = bob.command(
        std::path::Path::new("/bin/sh"),
        &[
            "-c",
            "umask 027 && cat > \"$1\" && ln \"$1\" \"$2\" && rm \"$1\"",
            "sh",
            spool.join("tmp/forged").to_str().unwrap(),
            spool.join("answers/approve-deploy.json").to_str().unwrap(),
        ],
    );
    let wrote = feed(writing.spawn().unwrap(), forged.as_bytes());
    assert!(wrote.status.success(), "{}", util::stderr(&wrote));
    let out = asked.join().unwrap();
    let said = util::stderr(&out);
    assert_eq!(util::code(&out), 14, "ask --wait took the forgery: {said}");
    assert!(
        said.contains(
            "it says operator:inbox-crew-ann answered, but the file was written by inbox-crew-bob"
        ) && said.contains("not taken as an answer"),
        "{said}"
    );
    assert!(
        util::stdout(&out).trim().is_empty(),
        "an outcome was printed"
    );
    // Ann's inbox: blocked, for the same reason.
    let listed = ann.inbox(&["list", "--all", "--json"], b"");
    let rows: serde_json::Value = serde_json::from_str(&util::stdout(&listed))
        .unwrap_or_else(|e| panic!("{e}: {}", util::stderr(&listed)));
    let row = rows
        .as_array()
        .unwrap()
        .iter()
        .find(|row| row["id"] == "approve-deploy")
        .unwrap_or_else(|| panic!("Ann's inbox does not list it: {rows}"));
    assert_eq!(row["state"], "pending", "{row}");
    assert!(
        row["blocked"]
            .as_str()
            .is_some_and(|why| why.contains("written by inbox-crew-bob")),
        "{row}"
    );

    // The control: Ann's own answer is taken.
    let (asking, placed) = ask("deploy-again");
    let asked = std::thread::spawn(move || feed(asking, request("deploy-again").as_bytes()));
    util::eventually("bob's second request to be placed", || placed.exists());
    let answered = ann.inbox(&["answer", "deploy-again", "--set", "go=yes"], b"");
    assert_eq!(util::code(&answered), 0, "{}", util::stderr(&answered));
    let out = asked.join().unwrap();
    assert_eq!(util::code(&out), 0, "{}", util::stderr(&out));
    let outcome: serde_json::Value = serde_json::from_str(&util::stdout(&out)).unwrap();
    assert_eq!(outcome["answered_by"], "operator:inbox-crew-ann");
}

/// Assignment and two-person approval (docs/TEAMS.md) with two real operators, each with an
/// inbox of their own over sshfs, on one team spool whose `team-policy.toml` (root's, the
/// spool's owner) gives migrations to `inbox-op-a` alone and needs both for a critical
/// production deploy (see `inbox_harness::team::run_approvals`): the migration is announced
/// by A's inbox only (its `notified` audit entry; B's is `silent`) and B's answer to it is
/// refused; each critical deploy settles only after both approved, the outcome names both
/// and `ask --wait` takes it; approvals forged by a third member whom the rule does not name
/// are spool problems in both inboxes, and the request stays pending. Prints the time from
/// the second approval file to the outcome file.
#[test]
fn assignment_and_two_approvals_over_sshfs() {
    if let Some(reason) = team::unavailable() {
        eprintln!("SKIPPED: team approvals over sshfs need FUSE, root and sshfs ({reason})");
        return;
    }
    // INBOX_APPROVAL_RUNS: more critical requests, for the figures in docs/TEAMS.md.
    let runs = std::env::var("INBOX_APPROVAL_RUNS")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(3);
    let report =
        team::run_approvals(&util::binary(), runs).unwrap_or_else(|message| panic!("{message}"));
    eprintln!("{report}");
    assert_eq!(report.runs, runs);
    assert_eq!(report.completion.len(), runs);
    assert_eq!(report.notified.len(), 2, "{report}");
    assert_eq!(report.forged.len(), 4, "{report}");
}
