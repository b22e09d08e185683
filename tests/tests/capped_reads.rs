//! Every local file a command reads (the policy it shows, settings.json, an audit export,
//! an answers file, the ntfy token file) is read without blocking and up to a cap
//! (inbox_policy::capped_read): a FIFO nobody writes to is refused at once, not waited on
//! forever; a device that never ends, or a file over the cap, is refused with the cap
//! named, not read into memory.
//!
//! Each command runs under a deadline, so a reader that blocks again fails the test instead
//! of hanging it.

use std::io::{Read, Seek, SeekFrom};
use std::path::Path;
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

/// What a command is to do with a file it cannot use: fail, or warn and go on.
#[derive(Clone, Copy)]
enum Then {
    Fails,
    WarnsAndGoesOn,
}

/// Runs `command` with a FIFO at `path`, then with a sparse file of `oversize` bytes there:
/// each time it must finish within the deadline, as `then` says, with a message holding
/// `names` (the file, as the command names it) and the problem (`FIFO`, then `cap`).
fn refuses_a_fifo_then_an_oversized_file(
    path: &Path,
    oversize: u64,
    command: impl Fn() -> Command,
    then: Then,
    names: &str,
    cap: &str,
) {
    mkfifo(path);
    for problem in ["FIFO, not a plain file", cap] {
        let (code, err) = run_within_deadline(command());
        match then {
            Then::Fails => assert_ne!(code, 0, "{err}"),
            Then::WarnsAndGoesOn => assert_eq!(code, 0, "the defaults apply: {err}"),
        }
        assert!(err.contains(names), "names {names}: {err}");
        assert!(err.contains(problem), "says {problem}: {err}");
        // The second round: no FIFO but a file over the cap.
        std::fs::remove_file(path).unwrap();
        oversized(path, oversize);
    }
}

#[test]
fn policy_show_refuses_a_fifo_a_device_and_an_oversized_policy_promptly() {
    let inbox = Inbox::new();
    let policy = inbox.policy_file();
    refuses_a_fifo_then_an_oversized_file(
        &policy,
        2 * 1024 * 1024,
        || inbox.cmd(&["policy", "show"]),
        Then::Fails,
        &format!("cannot read {}", policy.display()),
        "2097152 bytes, larger than the limit of 1048576 bytes (1 MiB)",
    );

    // A device that never ends is refused for what it is, never read into memory.
    let mut cmd = inbox.cmd(&["policy", "show"]);
    cmd.env("ANSWER_INBOX_POLICY", "/dev/zero");
    let (code, err) = run_within_deadline(cmd);
    assert_ne!(code, 0, "{err}");
    assert!(
        err.contains("cannot read /dev/zero: it is a character device, not a plain file"),
        "{err}"
    );
}

#[test]
fn a_fifo_or_an_oversized_settings_file_is_warned_about_and_the_defaults_apply() {
    let inbox = Inbox::new();
    let settings = inbox
        .dir
        .path()
        .join("xdg-config/answer-inbox/settings.json");
    refuses_a_fifo_then_an_oversized_file(
        &settings,
        2 * 1024 * 1024,
        || inbox.cmd(&["config"]),
        Then::WarnsAndGoesOn,
        &format!("the settings file {}", settings.display()),
        "larger than the limit of 1048576 bytes (1 MiB)",
    );
}

#[test]
fn audit_verify_file_refuses_a_fifo_and_an_oversized_export_promptly() {
    let inbox = Inbox::new();
    let export = inbox.dir.path().join("export.jsonl");
    refuses_a_fifo_then_an_oversized_file(
        &export,
        300 * 1024 * 1024,
        || inbox.cmd(&["audit", "verify", "--file", export.to_str().unwrap()]),
        Then::Fails,
        &format!("cannot read the export {}", export.display()),
        "314572800 bytes, larger than the limit of 268435456 bytes (256 MiB)",
    );
}

#[test]
fn answer_answers_from_a_fifo_or_an_oversized_file_is_refused_promptly() {
    let inbox = Inbox::new();
    let answers = inbox.dir.path().join("answers.json");
    let arg = format!("@{}", answers.display());
    refuses_a_fifo_then_an_oversized_file(
        &answers,
        2 * 1024 * 1024,
        || inbox.cmd(&["answer", "some-request", "--answers", &arg]),
        Then::Fails,
        &format!("cannot read --answers from {}", answers.display()),
        "2097152 bytes, larger than the limit of 1048576 bytes (1 MiB)",
    );
}

#[test]
fn serve_refuses_a_fifo_or_an_oversized_ntfy_token_file_promptly() {
    let inbox = Inbox::new();
    let token = inbox.dir.path().join("ntfy-token");
    refuses_a_fifo_then_an_oversized_file(
        &token,
        1024 * 1024,
        || {
            let mut serve = inbox.cmd(&[
                "serve",
                "--listen",
                "127.0.0.1:0",
                "--no-notify",
                "--ntfy",
                "https://ntfy.invalid/topic",
                "--ntfy-token-file",
                token.to_str().unwrap(),
            ]);
            // Were the token read, the server would run until stopped: the deadline ends it.
            serve.env_remove("ANSWER_INBOX_NTFY_TOKEN");
            serve
        },
        Then::Fails,
        &format!("cannot read the ntfy token file {}", token.display()),
        "1048576 bytes, larger than the limit of 65536 bytes (64 KiB)",
    );
}
