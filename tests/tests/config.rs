//! One configuration for the command line and the desktop app: the settings file the app's
//! Settings write moves the spool for `ask` and `list` too, the environment beats the file,
//! a flag beats the environment, `config` says which gave each value, and a broken settings
//! file is warned about by name and left exactly as it was.
//!
//! Every command runs with a private HOME and XDG directories and without the location
//! variables the other tests set, so only what each test writes or passes decides.

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use inbox_app::settings::save_settings;
use inbox_app::Settings;
use inbox_desk::DeskConfig;
use serde_json::Value;

use crate::util::{code, stderr, stdout, Inbox};

const CONFIRM: &str = r#"{"inbox": 1, "title": "Deploy SPEC-042",
  "questions": [{"id": "go", "question": "Deploy to production?", "type": "confirm"}]}"#;

/// `answer-inbox ARGS` for `inbox`, with no location variable set: its HOME and XDG
/// directories are the test's own, and `vars` are the only other variables given.
fn command(inbox: &Inbox, args: &[&str], vars: &[(&str, &Path)]) -> Command {
    let mut cmd = inbox.cmd(args);
    for name in [
        "ANSWER_INBOX_DIR",
        "ANSWER_INBOX_DB",
        "ANSWER_INBOX_POLICY",
        "ANSWER_INBOX_TEAM",
    ] {
        cmd.env_remove(name);
    }
    for (name, value) in vars {
        cmd.env(name, value);
    }
    cmd
}

fn run(inbox: &Inbox, args: &[&str], vars: &[(&str, &Path)]) -> Output {
    command(inbox, args, vars).output().unwrap()
}

/// Places the confirm request with `ask -` (which returns at once, printing the id).
fn ask(inbox: &Inbox, args: &[&str], vars: &[(&str, &Path)]) -> String {
    use std::io::Write;
    let mut argv = args.to_vec();
    argv.extend(["ask", "-"]);
    let mut child = command(inbox, &argv, vars)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(CONFIRM.as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert_eq!(code(&out), 0, "ask failed: {}", stderr(&out));
    stdout(&out).trim().to_owned()
}

/// The ids `list --json` shows.
fn listed(inbox: &Inbox, args: &[&str], vars: &[(&str, &Path)]) -> Vec<String> {
    let mut argv = args.to_vec();
    argv.extend(["list", "--json"]);
    let out = run(inbox, &argv, vars);
    assert_eq!(code(&out), 0, "list failed: {}", stderr(&out));
    let rows: Vec<Value> = serde_json::from_str(&stdout(&out)).unwrap();
    rows.iter()
        .map(|row| row["id"].as_str().unwrap().to_owned())
        .collect()
}

fn placed_in(spool: &Path, id: &str) -> bool {
    spool.join("questions").join(format!("{id}.json")).exists()
}

/// `config --json` as a value, exit code checked.
fn config_json(inbox: &Inbox, args: &[&str], vars: &[(&str, &Path)]) -> Value {
    let mut argv = args.to_vec();
    argv.extend(["config", "--json"]);
    let out = run(inbox, &argv, vars);
    assert_eq!(code(&out), 0, "config failed: {}", stderr(&out));
    serde_json::from_str(&stdout(&out)).unwrap()
}

/// Where the app and the command line keep things for this test's account.
struct Places {
    settings: PathBuf,
    default_spool: PathBuf,
    default_db: PathBuf,
}

fn places(inbox: &Inbox) -> Places {
    let dir = inbox.dir.path();
    Places {
        settings: dir.join("xdg-config/answer-inbox/settings.json"),
        default_spool: dir.join("xdg/answer-inbox/spool"),
        default_db: dir.join("xdg/answer-inbox/inbox.sqlite3"),
    }
}

/// Moves the spool as the app's Settings do: with the app's own code for writing the file.
fn move_spool_in_settings(inbox: &Inbox, spool: &Path) {
    save_settings(&places(inbox).settings, &Settings::with_spool(spool)).unwrap();
}

/// The database the desktop app opens for `spool` in this test's account.
fn apps_db_for(inbox: &Inbox, spool: &Path) -> PathBuf {
    let places = places(inbox);
    DeskConfig {
        spool_override: None,
        db_override: None,
        default_spool: places.default_spool,
        default_db: places.default_db,
        settings_path: places.settings,
        policy_path: inbox.policy_file(),
        app_name: "test",
    }
    .db_for(spool)
}

#[test]
fn the_apps_settings_moving_the_spool_moves_ask_and_list_and_the_database_with_it() {
    let inbox = Inbox::new();
    let places = places(&inbox);

    // Before any settings: the default spool and database.
    let first = ask(&inbox, &[], &[]);
    assert!(placed_in(&places.default_spool, &first));
    assert_eq!(listed(&inbox, &[], &[]), vec![first.clone()]);
    assert!(places.default_db.exists());

    let moved = inbox.dir.path().join("moved-spool");
    move_spool_in_settings(&inbox, &moved);
    let second = ask(&inbox, &[], &[]);
    assert!(placed_in(&moved, &second), "ask follows the settings file");
    assert!(!placed_in(&places.default_spool, &second));
    assert_eq!(
        listed(&inbox, &[], &[]),
        vec![second.clone()],
        "list shows the settings' spool, not the old one"
    );

    // The same database the app opens for that spool, not the default spool's.
    let db = apps_db_for(&inbox, &moved);
    assert_ne!(db, places.default_db);
    assert!(db.exists(), "{} was not opened", db.display());
    let config = config_json(&inbox, &[], &[]);
    assert_eq!(config["spool"]["value"], moved.display().to_string());
    assert_eq!(config["db"]["value"], db.display().to_string());
    assert_eq!(config["db"]["source"]["kind"], "default_for_spool");
}

#[test]
fn the_environment_beats_the_settings_file_and_a_flag_beats_the_environment() {
    let inbox = Inbox::new();
    let from_file = inbox.dir.path().join("settings-spool");
    let from_env = inbox.dir.path().join("env-spool");
    let from_flag = inbox.dir.path().join("flag-spool");
    move_spool_in_settings(&inbox, &from_file);
    let env = [("ANSWER_INBOX_DIR", from_env.as_path())];

    let id = ask(&inbox, &[], &env);
    assert!(placed_in(&from_env, &id));
    assert!(!placed_in(&from_file, &id));
    assert_eq!(listed(&inbox, &[], &env), vec![id.clone()]);

    let flag = ["--spool", from_flag.to_str().unwrap()];
    let id = ask(&inbox, &flag, &env);
    assert!(placed_in(&from_flag, &id));
    assert!(!placed_in(&from_env, &id));
    assert_eq!(listed(&inbox, &flag, &env), [id]);

    // Given after the subcommand, a flag wins just the same.
    let out = run(
        &inbox,
        &["config", "--json", "--spool", from_flag.to_str().unwrap()],
        &env,
    );
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let config: Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!(config["spool"]["value"], from_flag.display().to_string());
    assert_eq!(
        config["spool"]["source"],
        serde_json::json!({"kind": "flag", "name": "--spool"})
    );
    let config = config_json(&inbox, &[], &env);
    assert_eq!(config["spool"]["value"], from_env.display().to_string());
    assert_eq!(
        config["spool"]["source"],
        serde_json::json!({"kind": "env", "name": "ANSWER_INBOX_DIR"})
    );
}

#[test]
fn config_names_where_each_value_came_from() {
    let inbox = Inbox::new();
    let places = places(&inbox);

    // Nothing set: every value is the default, and the settings file does not exist.
    let out = run(&inbox, &["config"], &[]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let text = stdout(&out);
    let line = |name: &str| line_of(&text, name);
    assert!(line("settings file").contains(&places.settings.display().to_string()));
    assert!(line("settings file").contains("does not exist"), "{text}");
    assert!(
        line("spool").ends_with(&format!("{}   (default)", places.default_spool.display())),
        "{text}"
    );
    assert!(line("database").contains("(default)"), "{text}");
    assert!(
        line("policy").contains("the shipped policy applies"),
        "{text}"
    );
    assert!(line("team").contains("private   (default)"), "{text}");
    assert!(
        !places.default_spool.exists(),
        "config creates nothing: {text}"
    );

    // The spool and team from the settings file, the database from a flag, the policy from
    // its variable.
    let spool = inbox.dir.path().join("ops-spool");
    let settings = Settings {
        team: Some("ops".into()),
        ..Settings::with_spool(&spool)
    };
    save_settings(&places.settings, &settings).unwrap();
    let policy = inbox.dir.path().join("my-policy.toml");
    let db = inbox.dir.path().join("elsewhere.sqlite3");
    let out = run(
        &inbox,
        &["config", "--db", db.to_str().unwrap()],
        &[("ANSWER_INBOX_POLICY", policy.as_path())],
    );
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let text = stdout(&out);
    let line = |name: &str| line_of(&text, name);
    let from_file = format!("(settings file {})", places.settings.display());
    assert!(line("settings file").contains("(exists)"), "{text}");
    assert!(
        line("spool").contains(&spool.display().to_string()),
        "{text}"
    );
    assert!(line("spool").ends_with(&from_file), "{text}");
    assert!(
        line("database").ends_with(&format!("{}   (flag --db)", db.display())),
        "{text}"
    );
    assert!(
        line("policy").contains("(environment variable ANSWER_INBOX_POLICY"),
        "{text}"
    );
    assert!(line("team").contains("team:ops"), "{text}");
    assert!(line("team").ends_with(&from_file), "{text}");

    let out = run(&inbox, &["config", "path"], &[]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert_eq!(stdout(&out), format!("{}\n", places.settings.display()));
}

#[test]
fn a_broken_settings_file_is_warned_about_by_name_and_left_as_it_was() {
    use std::os::unix::fs::PermissionsExt;
    let inbox = Inbox::new();
    let places = places(&inbox);
    std::fs::create_dir_all(places.settings.parent().unwrap()).unwrap();
    let broken = b"{\"spool_dir\": \"/srv/half-written";
    std::fs::write(&places.settings, broken).unwrap();
    std::fs::set_permissions(&places.settings, std::fs::Permissions::from_mode(0o600)).unwrap();
    let before = std::fs::metadata(&places.settings).unwrap();

    for args in [&["list"][..], &["config"][..]] {
        let out = run(&inbox, args, &[]);
        assert_eq!(code(&out), 0, "{args:?}: {}", stderr(&out));
        let err = stderr(&out);
        assert!(
            err.contains(&format!(
                "warning: the settings file {}",
                places.settings.display()
            )),
            "{args:?} names the file: {err}"
        );
        assert!(
            err.contains("not valid settings"),
            "{args:?} says why: {err}"
        );
        assert_eq!(
            err.matches("warning:").count(),
            1,
            "{args:?} says it once: {err}"
        );
    }
    // The defaults applied meanwhile.
    let id = ask(&inbox, &[], &[]);
    assert!(placed_in(&places.default_spool, &id));

    // Byte for byte as it was, where it was, nothing beside it.
    assert_eq!(std::fs::read(&places.settings).unwrap(), broken);
    let after = std::fs::metadata(&places.settings).unwrap();
    assert_eq!(after.permissions().mode(), before.permissions().mode());
    let beside: Vec<_> = std::fs::read_dir(places.settings.parent().unwrap())
        .unwrap()
        .map(|entry| entry.unwrap().file_name())
        .collect();
    assert_eq!(beside, ["settings.json"], "nothing moved aside or added");
}

#[test]
fn a_relative_spool_in_the_settings_file_is_an_error_naming_the_file() {
    let inbox = Inbox::new();
    let places = places(&inbox);
    std::fs::create_dir_all(places.settings.parent().unwrap()).unwrap();
    std::fs::write(
        &places.settings,
        br#"{"spool_dir": "~/spool", "notifications": true, "do_not_disturb": false}"#,
    )
    .unwrap();

    for args in [&["list"][..], &["config"][..]] {
        let out = run(&inbox, args, &[]);
        assert_eq!(code(&out), 1, "{args:?}: {}", stdout(&out));
        let said = stdout(&out) + &stderr(&out);
        assert!(
            said.contains(&places.settings.display().to_string()),
            "{args:?} names the file: {said}"
        );
        assert!(said.contains("not an absolute path"), "{args:?}: {said}");
    }
    // The defaults are not fallen back on: the file's spool is wrong, not absent.
    assert!(!places.default_spool.exists());

    // A spool given otherwise makes the file's irrelevant.
    let spool = inbox.dir.path().join("given");
    let out = run(&inbox, &["list"], &[("ANSWER_INBOX_DIR", spool.as_path())]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
}

/// The line of `config`'s output for the value `name`.
fn line_of(text: &str, name: &str) -> String {
    text.lines()
        .find(|line| line.starts_with(name))
        .unwrap_or_else(|| panic!("no {name} line in:\n{text}"))
        .to_owned()
}
