//! A spool is opened safely or not at all, through the real `answer-inbox` binary: a
//! directory that is not a spool is refused and left exactly as it was, links are never
//! followed (not to reap, not to read), and request files with a second name or another
//! account's owner are problems, never answered.

use std::fs::{self, File};
use std::os::unix::fs::{chown, symlink};
use std::path::Path;
use std::time::{Duration, SystemTime};

use inbox_engine::Store;

use crate::util::{code, stderr, stdout, Inbox};

const FIVE_DAYS: Duration = Duration::from_secs(5 * 24 * 3600);
const SECRET: &str = "sk-live-7f3a9c-do-not-leak";

fn backdate(path: &Path, age: Duration) {
    File::options()
        .write(true)
        .open(path)
        .unwrap()
        .set_modified(SystemTime::now() - age)
        .unwrap();
}

/// Every path under `dir`, relative to it, sorted; links are listed, not followed.
fn tree(dir: &Path) -> Vec<String> {
    fn walk(base: &Path, dir: &Path, out: &mut Vec<String>) {
        for entry in fs::read_dir(dir).unwrap() {
            let entry = entry.unwrap();
            let path = entry.path();
            out.push(path.strip_prefix(base).unwrap().display().to_string());
            if entry.file_type().unwrap().is_dir() {
                walk(base, &path, out);
            }
        }
    }
    let mut out = Vec::new();
    walk(dir, dir, &mut out);
    out.sort();
    out
}

fn request(id: &str) -> String {
    format!(
        r#"{{"inbox": 1, "id": "{id}", "title": "Deploy?", "questions": [{{"id": "go", "question": "Deploy build 7 to staging?", "type": "confirm"}}]}}"#
    )
}

/// The spool problem recorded for `path`, if any.
fn problem_for(inbox: &Inbox, path: &Path) -> Option<String> {
    let store = Store::open(&inbox.db()).unwrap();
    store
        .problems()
        .unwrap()
        .into_iter()
        .find(|(at, _, _)| Path::new(at) == path)
        .map(|(_, reason, _)| reason)
}

fn pending_ids(inbox: &Inbox) -> Vec<String> {
    let out = inbox.run(&["list", "--json"]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let rows: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    rows.as_array()
        .unwrap()
        .iter()
        .map(|row| row["id"].as_str().unwrap().to_owned())
        .collect()
}

#[test]
fn a_project_directory_is_refused_and_nothing_in_it_is_touched() {
    let inbox = Inbox::new();
    let project = inbox.dir.path().join("some-project");
    fs::create_dir_all(project.join("tmp")).unwrap();
    fs::write(project.join("Cargo.toml"), b"[package]\nname = \"x\"\n").unwrap();
    fs::write(project.join("tmp/build-cache.o"), b"object code").unwrap();
    backdate(&project.join("tmp/build-cache.o"), FIVE_DAYS);
    let before = tree(&project);

    let out = inbox.run(&["--spool", project.to_str().unwrap(), "list"]);
    assert_ne!(code(&out), 0, "a project is not a spool: {}", stdout(&out));
    let err = stderr(&out);
    for words in ["is not a spool", "Cargo.toml", "Nothing was touched"] {
        assert!(err.contains(words), "{words:?} in: {err}");
    }
    assert_eq!(tree(&project), before, "nothing created, nothing deleted");
    assert_eq!(
        fs::read(project.join("tmp/build-cache.o")).unwrap(),
        b"object code"
    );
}

#[test]
fn a_tmp_link_is_refused_and_its_target_keeps_its_files() {
    let inbox = Inbox::new();
    let victim = inbox.dir.path().join("victim");
    fs::create_dir(&victim).unwrap();
    fs::write(victim.join("old-report.txt"), b"keep me").unwrap();
    backdate(&victim.join("old-report.txt"), FIVE_DAYS);
    let spool = inbox.spool();
    for sub in ["questions", "answers", "cancel"] {
        fs::create_dir_all(spool.join(sub)).unwrap();
    }
    symlink(&victim, spool.join("tmp")).unwrap();

    let out = inbox.run(&["list"]);
    assert_ne!(code(&out), 0, "{}", stdout(&out));
    let err = stderr(&out);
    assert!(err.contains("symbolic link"), "{err}");
    assert!(
        err.contains(&spool.join("tmp").display().to_string()),
        "{err}"
    );
    assert_eq!(fs::read(victim.join("old-report.txt")).unwrap(), b"keep me");
    assert_eq!(tree(&victim), ["old-report.txt"]);
}

#[test]
fn a_questions_link_is_refused_and_the_secret_goes_nowhere() {
    let inbox = Inbox::new();
    let secrets = inbox.dir.path().join("secrets");
    fs::create_dir(&secrets).unwrap();
    fs::write(
        secrets.join("creds.json"),
        format!(r#"{{"api_key": "{SECRET}"}}"#),
    )
    .unwrap();
    let spool = inbox.spool();
    fs::create_dir(&spool).unwrap();
    symlink(&secrets, spool.join("questions")).unwrap();

    for args in [
        &["list"][..],
        &["list", "--all", "--json"],
        &["show", "creds"],
    ] {
        let out = inbox.run(args);
        assert_ne!(code(&out), 0, "{args:?}: {}", stdout(&out));
        assert!(stderr(&out).contains("symbolic link"), "{}", stderr(&out));
        assert!(!stdout(&out).contains(SECRET) && !stderr(&out).contains(SECRET));
    }
    assert_eq!(
        tree(&secrets),
        ["creds.json"],
        "nothing written beside the secret"
    );
    assert_eq!(tree(&spool), ["questions"], "nothing created in the spool");
    // No outcome, and no database row, carries the secret anywhere.
    for file in tree(inbox.dir.path()) {
        let path = inbox.dir.path().join(&file);
        if path.starts_with(&secrets) || !path.is_file() || path.is_symlink() {
            continue;
        }
        let bytes = fs::read(&path).unwrap();
        assert!(
            !String::from_utf8_lossy(&bytes).contains(SECRET),
            "{file} holds the secret"
        );
    }
}

#[test]
fn a_hard_linked_request_is_a_problem_and_never_answered() {
    let inbox = Inbox::new();
    inbox.place("linked", &request("linked"));
    let placed = inbox.spool().join("questions/linked.json");
    fs::hard_link(&placed, inbox.dir.path().join("second-name.json")).unwrap();

    assert!(!pending_ids(&inbox).contains(&"linked".to_owned()));
    let reason = problem_for(&inbox, &placed).expect("a problem is recorded for the file");
    assert!(reason.contains("hard link"), "{reason}");
    let out = inbox.run(&["answer", "linked", "--set", "go=true"]);
    assert_ne!(code(&out), 0, "{}", stdout(&out));
    assert!(
        !inbox.outcome_path("linked").exists(),
        "no outcome is written"
    );
}

#[test]
fn a_request_of_another_account_is_a_problem_in_a_private_spool() {
    if effective_uid() != 0 {
        eprintln!("skipped: giving a file to another account (chown) needs root");
        return;
    }
    let inbox = Inbox::new();
    inbox.place("foreign", &request("foreign"));
    let placed = inbox.spool().join("questions/foreign.json");
    chown(&placed, Some(65534), None).unwrap();

    assert!(!pending_ids(&inbox).contains(&"foreign".to_owned()));
    let reason = problem_for(&inbox, &placed).expect("a problem is recorded for the file");
    assert!(reason.contains("65534"), "{reason}");
    let out = inbox.run(&["answer", "foreign", "--set", "go=true"]);
    assert_ne!(code(&out), 0, "{}", stdout(&out));
    assert!(
        !inbox.outcome_path("foreign").exists(),
        "no outcome is written"
    );
}

/// This process's effective uid: the owner of a file it creates.
fn effective_uid() -> u32 {
    let probe = tempfile::tempdir().unwrap();
    let path = probe.path().join("probe");
    fs::write(&path, b"").unwrap();
    std::os::unix::fs::MetadataExt::uid(&fs::metadata(&path).unwrap())
}

/// In a team spool every member can write `cancel/`, so a tombstone withdraws a request
/// only when the account that placed the request wrote it (issue 25). Bob's tombstone for
/// Ann's request is refused: the request stays pending and answerable, a spool problem
/// names both accounts, and `list` shows it. `cancel` as another account places nothing.
/// The control: Ann's own tombstone withdraws her other request.
#[test]
fn a_tombstone_of_another_member_does_not_withdraw_a_request() {
    use crate::team::accounts;
    let crew = match accounts::crew() {
        Ok(crew) => crew,
        Err(why) => {
            eprintln!("SKIPPED: a tombstone of another account needs other accounts ({why})");
            return;
        }
    };
    let [ann, bob] = crew.members;
    let inbox = Inbox::new();
    let team = |args: &[&str]| inbox.run(&[&["--team", accounts::GROUP], args].concat());
    let out = team(&["list"]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let spool = inbox.spool();
    // Each file as its account writes it: Ann's requests, Bob's and Ann's tombstones.
    let place = |area: &str, name: &str, body: &str, owner: u32| {
        let tmp = spool.join("tmp").join(name);
        fs::write(&tmp, body).unwrap();
        chown(&tmp, Some(owner), Some(crew.gid)).unwrap();
        fs::rename(&tmp, spool.join(area).join(name)).unwrap();
    };
    place("questions", "deploy.json", &request("deploy"), ann);
    place("questions", "rollback.json", &request("rollback"), ann);
    let out = team(&["list"]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));

    place("cancel", "deploy", "not needed", bob);
    place("cancel", "rollback", "not needed", ann);
    let out = team(&["list", "--all", "--json"]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let rows: serde_json::Value = serde_json::from_str(&stdout(&out)).unwrap();
    let state = |id: &str| {
        rows.as_array()
            .unwrap()
            .iter()
            .find(|row| row["id"] == id)
            .unwrap_or_else(|| panic!("{id} is not listed: {rows}"))["state"]
            .clone()
    };
    assert_eq!(
        state("deploy"),
        "pending",
        "Bob's tombstone withdrew Ann's request"
    );
    assert_eq!(state("rollback"), "cancelled", "Ann's own tombstone counts");

    let tombstone = spool.join("cancel/deploy");
    let reason = problem_for(&inbox, &tombstone).expect("a problem names the tombstone");
    for name in accounts::MEMBERS {
        assert!(reason.contains(name), "{reason}");
    }
    let listed = stdout(&team(&["list"]));
    assert!(
        listed.contains(&tombstone.display().to_string()),
        "{listed}"
    );

    // `cancel` as root, not Ann: refused, and nothing placed.
    place("questions", "restart.json", &request("restart"), ann);
    let out = team(&["cancel", "restart"]);
    assert_ne!(code(&out), 0, "{}", stderr(&out));
    assert!(
        stderr(&out).contains(accounts::MEMBERS[0]),
        "{}",
        stderr(&out)
    );
    assert!(
        !spool.join("cancel/restart").exists(),
        "a tombstone was placed"
    );

    // The refused tombstone does not stand in the way of an answer.
    let out = team(&["answer", "deploy", "--set", "go=true"]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert!(inbox.outcome_path("deploy").exists());
}

/// The mode bits of `path` (not following a link).
fn mode_of(path: &Path) -> u32 {
    use std::os::unix::fs::PermissionsExt;
    fs::symlink_metadata(path).unwrap().permissions().mode() & 0o7777
}

/// `--db` through a link: refused, naming the path, whether the link leads into the spool's
/// `tmp/` (where the reaper deletes files, and which an asker can write) or to a file of the
/// operator's elsewhere; nothing is created behind the link and nothing it points to is
/// chmodded (issue 25).
#[test]
fn a_database_path_that_is_a_link_is_refused_and_nothing_behind_it_is_touched() {
    let inbox = Inbox::new();
    inbox.place("r1", &request("r1"));
    let into_tmp = inbox.dir.path().join("into-tmp.sqlite3");
    let target = inbox.spool().join("tmp/inbox.sqlite3");
    symlink(&target, &into_tmp).unwrap();
    let out = inbox.run(&["--db", into_tmp.to_str().unwrap(), "list"]);
    assert_ne!(code(&out), 0, "{}", stdout(&out));
    let said = stderr(&out);
    assert!(
        said.contains(&into_tmp.display().to_string()) && said.contains("symbolic link"),
        "{said}"
    );
    assert!(!target.exists(), "a database was made inside the spool");

    let elsewhere = inbox.dir.path().join("elsewhere.txt");
    fs::write(&elsewhere, "a file of the operator's").unwrap();
    std::fs::set_permissions(
        &elsewhere,
        std::os::unix::fs::PermissionsExt::from_mode(0o644),
    )
    .unwrap();
    let link = inbox.dir.path().join("link.sqlite3");
    symlink(&elsewhere, &link).unwrap();
    let out = inbox.run(&["--db", link.to_str().unwrap(), "list"]);
    assert_ne!(code(&out), 0, "{}", stdout(&out));
    assert!(stderr(&out).contains("symbolic link"), "{}", stderr(&out));
    assert_eq!(mode_of(&elsewhere), 0o644, "chmodded through the link");
    assert_eq!(
        fs::read_to_string(&elsewhere).unwrap(),
        "a file of the operator's"
    );
}

/// Under umask 000 the data directory (and the spool and database in it) are still the
/// operator's alone: directories 0700, the database 0600 (issue 25).
#[test]
fn the_data_directory_is_private_whatever_the_umask() {
    let inbox = Inbox::new();
    let data = inbox.dir.path().join("data");
    let out = std::process::Command::new("/bin/sh")
        .args(["-c", "umask 000 && exec \"$0\" \"$@\""])
        .arg(crate::util::binary())
        .arg("list")
        .env_clear()
        .env("PATH", "/usr/bin:/bin")
        .env("HOME", inbox.dir.path())
        .env("XDG_DATA_HOME", &data)
        .env("XDG_CONFIG_HOME", inbox.dir.path().join("config"))
        .output()
        .unwrap();
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    for dir in [data.clone(), data.join("answer-inbox")] {
        assert_eq!(mode_of(&dir), 0o700, "{}", dir.display());
    }
    let db = data.join("answer-inbox/inbox.sqlite3");
    assert_eq!(mode_of(&db), 0o600, "{}", db.display());
}

/// A database another account could have written is not used: one owned by another
/// account, or writable by the group or everyone. The error names the file and how to fix
/// it; the inbox changes nothing (issue 25).
#[test]
fn a_database_others_could_write_is_refused() {
    use std::os::unix::fs::PermissionsExt;
    let inbox = Inbox::new();
    inbox.place("r1", &request("r1"));
    let out = inbox.run(&["list"]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let db = inbox.db();
    // `list` fails, naming the database and saying `fix`.
    let refused = |fix: &str| {
        let out = inbox.run(&["list"]);
        assert_ne!(code(&out), 0, "{}", stdout(&out));
        let said = stderr(&out);
        assert!(
            said.contains(&db.display().to_string()) && said.contains(fix),
            "{said}"
        );
    };

    for mode in [0o660, 0o606] {
        fs::set_permissions(&db, fs::Permissions::from_mode(mode)).unwrap();
        refused("chmod 600");
        assert_eq!(mode_of(&db), mode, "the mode was changed");
    }
    fs::set_permissions(&db, fs::Permissions::from_mode(0o644)).unwrap();
    let out = inbox.run(&["list"]);
    assert_eq!(
        code(&out),
        0,
        "readable by others is made private: {}",
        stderr(&out)
    );
    assert_eq!(mode_of(&db), 0o600);

    if effective_uid() != 0 {
        eprintln!("skipped: giving the database to another account (chown) needs root");
        return;
    }
    chown(&db, Some(65534), None).unwrap();
    refused("65534");
    refused("chown");
}
