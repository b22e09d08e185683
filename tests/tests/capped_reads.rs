//! Every local file a command reads (the policy it shows, settings.json, an audit export,
//! an answers file) is read without blocking and up to a cap (inbox_policy::capped_read): a
//! FIFO nobody writes to is refused at once, not waited on forever; a device that never
//! ends, or a file over the cap, is refused with the cap named, not read into memory.
//!
//! Each command runs under a deadline, so a reader that blocks again fails the test instead
//! of hanging it.

use std::io::{Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::util::Inbox;

/// Far longer than any of these commands takes, far shorter than forever.
const DEADLINE: Duration = Duration::from_secs(20);

/// Exit code and standard error of `cmd`, which must finish within [`DEADLINE`].
fn run_within_deadline(mut cmd: Command) -> (i32, String) {
    // A file, not a pipe, so a long message never stalls the child.
    let mut err = tempfile::tempfile().unwrap();
    let mut child = cmd
        .stdout(Stdio::null())
        .stderr(err.try_clone().unwrap())
        .spawn()
        .expect("the answer-inbox binary runs");
    let start = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if start.elapsed() > DEADLINE {
            child.kill().unwrap();
            child.wait().unwrap();
            panic!("{cmd:?} still running after {DEADLINE:?}: it blocked on the file");
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let mut stderr = String::new();
    err.seek(SeekFrom::Start(0)).unwrap();
    err.read_to_string(&mut stderr).unwrap();
    (status.code().unwrap_or(-1), stderr)
}

fn mkfifo(path: &Path) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    let made = Command::new("mkfifo").arg(path).status().unwrap();
    assert!(made.success(), "mkfifo {}", path.display());
}

/// A sparse file of `len` bytes: over a cap without writing that much.
fn oversized(path: &Path, len: u64) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::File::create(path).unwrap().set_len(len).unwrap();
}

fn settings_path(inbox: &Inbox) -> PathBuf {
    inbox
        .dir
        .path()
        .join("xdg-config/answer-inbox/settings.json")
}

#[test]
fn policy_show_refuses_a_fifo_a_device_and_an_oversized_policy_promptly() {
    let inbox = Inbox::new();
    let policy = inbox.policy_file();

    mkfifo(&policy);
    let (code, err) = run_within_deadline(inbox.cmd(&["policy", "show"]));
    assert_ne!(code, 0, "{err}");
    assert!(
        err.contains(&policy.display().to_string()),
        "names it: {err}"
    );
    assert!(
        err.contains("FIFO") && err.contains("not a plain file"),
        "{err}"
    );

    std::fs::remove_file(&policy).unwrap();
    oversized(&policy, 2 * 1024 * 1024);
    let (code, err) = run_within_deadline(inbox.cmd(&["policy", "show"]));
    assert_ne!(code, 0, "{err}");
    assert!(
        err.contains(&policy.display().to_string()),
        "names it: {err}"
    );
    assert!(
        err.contains("2097152 bytes, larger than the limit of 1048576 bytes (1 MiB)"),
        "names the cap: {err}"
    );

    // A device that never ends is refused for what it is, never read into memory.
    let mut cmd = inbox.cmd(&["policy", "show"]);
    cmd.env("ANSWER_INBOX_POLICY", "/dev/zero");
    let (code, err) = run_within_deadline(cmd);
    assert_ne!(code, 0, "{err}");
    assert!(
        err.contains("/dev/zero") && err.contains("character device"),
        "{err}"
    );
}

#[test]
fn a_fifo_or_an_oversized_settings_file_is_warned_about_and_the_defaults_apply() {
    let inbox = Inbox::new();
    let settings = settings_path(&inbox);

    mkfifo(&settings);
    let (code, err) = run_within_deadline(inbox.cmd(&["config"]));
    assert_eq!(code, 0, "the defaults apply: {err}");
    assert!(
        err.contains(&format!("the settings file {}", settings.display())),
        "names it: {err}"
    );
    assert!(
        err.contains("FIFO") && err.contains("not a plain file"),
        "{err}"
    );

    std::fs::remove_file(&settings).unwrap();
    oversized(&settings, 2 * 1024 * 1024);
    let (code, err) = run_within_deadline(inbox.cmd(&["config"]));
    assert_eq!(code, 0, "the defaults apply: {err}");
    assert!(
        err.contains(&format!("the settings file {}", settings.display())),
        "names it: {err}"
    );
    assert!(
        err.contains("larger than the limit of 1048576 bytes (1 MiB)"),
        "names the cap: {err}"
    );
}

#[test]
fn audit_verify_file_refuses_a_fifo_and_an_oversized_export_promptly() {
    let inbox = Inbox::new();
    let export = inbox.dir.path().join("export.jsonl");
    let verify = || inbox.cmd(&["audit", "verify", "--file", export.to_str().unwrap()]);

    mkfifo(&export);
    let (code, err) = run_within_deadline(verify());
    assert_ne!(code, 0, "{err}");
    assert!(
        err.contains(&format!("cannot read the export {}", export.display())),
        "names it: {err}"
    );
    assert!(
        err.contains("FIFO") && err.contains("not a plain file"),
        "{err}"
    );

    std::fs::remove_file(&export).unwrap();
    oversized(&export, 300 * 1024 * 1024);
    let (code, err) = run_within_deadline(verify());
    assert_ne!(code, 0, "{err}");
    assert!(
        err.contains("314572800 bytes, larger than the limit of 268435456 bytes (256 MiB)"),
        "names the cap: {err}"
    );
}

#[test]
fn answer_answers_from_a_fifo_or_an_oversized_file_is_refused_promptly() {
    let inbox = Inbox::new();
    let answers = inbox.dir.path().join("answers.json");
    let arg = format!("@{}", answers.display());
    let answer = || inbox.cmd(&["answer", "some-request", "--answers", &arg]);

    mkfifo(&answers);
    let (code, err) = run_within_deadline(answer());
    assert_ne!(code, 0, "{err}");
    assert!(
        err.contains(&format!("cannot read --answers from {}", answers.display())),
        "names it: {err}"
    );
    assert!(
        err.contains("FIFO") && err.contains("not a plain file"),
        "{err}"
    );

    std::fs::remove_file(&answers).unwrap();
    oversized(&answers, 2 * 1024 * 1024);
    let (code, err) = run_within_deadline(answer());
    assert_ne!(code, 0, "{err}");
    assert!(
        err.contains("larger than the limit of"),
        "names the cap: {err}"
    );
}
