//! The `.deb`, installed for real: `dpkg -i` on this machine, the installed command and app
//! run from /usr/bin, the desktop entry checked with `desktop-file-validate`, then
//! `dpkg -r`, after which nothing of it is left.
//!
//! The package is the one `scripts/package --debug --deb` built (scripts/test builds it
//! before the tests; `ANSWER_INBOX_DEB` names another). Installing needs root, or sudo
//! without a password. The test refuses to run over an Answer Inbox already installed on the
//! machine: it would remove it.

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use inbox_harness::desktop::AppDirs;
use inbox_harness::process::Running;
use inbox_harness::session::Session;

use crate::util::{code, stderr, stdout, Inbox};

/// The package's name, as Tauri's bundler derives it from the product name.
const PACKAGE: &str = "answer-inbox";

/// What the package must put on the machine.
const INSTALLED: &[&str] = &[
    "/usr/bin/answer-inbox",
    "/usr/bin/answer-inbox-desktop",
    "/usr/share/applications/Answer Inbox.desktop",
    "/usr/share/icons/hicolor/128x128/apps/answer-inbox-desktop.png",
    "/usr/share/icons/hicolor/32x32/apps/answer-inbox-desktop.png",
    "/usr/share/man/man1/answer-inbox.1.gz",
    "/usr/share/man/man1/answer-inbox-watch.1.gz",
    "/usr/share/bash-completion/completions/answer-inbox",
    "/usr/share/zsh/vendor-completions/_answer-inbox",
    "/usr/share/fish/vendor_completions.d/answer-inbox.fish",
    "/usr/lib/systemd/user/answer-inbox.service",
];

#[test]
fn the_deb_installs_runs_and_removes_cleanly() {
    let deb = built_deb();
    let sudo = as_root();
    let installed_before = run(Command::new("dpkg-query").args(["-W", "-f=${Status}", PACKAGE]));
    assert!(
        !stdout(&installed_before).contains("installed")
            || stdout(&installed_before).contains("not-installed"),
        "{PACKAGE} is already installed on this machine; this test installs and removes it, so \
         it will not run over yours (dpkg -r {PACKAGE} first)"
    );

    let installing = run(sudo_cmd(&sudo, "dpkg").arg("-i").arg(&deb));
    // From here on, whatever happens, the package goes again.
    let _removal = Removal { sudo: sudo.clone() };
    assert_eq!(
        code(&installing),
        0,
        "dpkg -i {}: {}{}",
        deb.display(),
        stdout(&installing),
        stderr(&installing)
    );
    for path in INSTALLED {
        assert!(Path::new(path).is_file(), "the package has no {path}");
    }

    // The installed command is on the PATH and is this build's.
    let version = run(Command::new("answer-inbox").arg("--version"));
    assert_eq!(code(&version), 0, "{}", stderr(&version));
    assert_eq!(
        stdout(&version).trim(),
        format!("answer-inbox {}", env!("CARGO_PKG_VERSION"))
    );

    // The app menu's entry: valid by the specification, and starting the installed app.
    let entry = "/usr/share/applications/Answer Inbox.desktop";
    let validated = run(Command::new("desktop-file-validate").arg(entry));
    assert!(
        code(&validated) == 0 && stdout(&validated).trim().is_empty(),
        "desktop-file-validate {entry}: {}{}",
        stdout(&validated),
        stderr(&validated)
    );
    let text = std::fs::read_to_string(entry).unwrap();
    for line in [
        "Name=Answer Inbox",
        "Exec=answer-inbox-desktop",
        "Icon=answer-inbox-desktop",
        "Type=Application",
    ] {
        assert!(text.lines().any(|l| l == line), "no {line:?} in:\n{text}");
    }

    // The user unit for the headless inbox names the installed command.
    let unit = std::fs::read_to_string("/usr/lib/systemd/user/answer-inbox.service").unwrap();
    assert!(
        unit.contains("ExecStart=/usr/bin/answer-inbox watch"),
        "the packaged unit: {unit}"
    );

    the_installed_app_opens_its_window_and_says_who_it_is();

    drop(_removal);
    for path in INSTALLED {
        assert!(!Path::new(path).exists(), "dpkg -r left {path} behind");
    }
}

/// Starts /usr/bin/answer-inbox-desktop in a private session (Xvfb, a bus, dunst) with a
/// request waiting: its window appears, and its bubble carries the installed desktop entry
/// and icon names.
fn the_installed_app_opens_its_window_and_says_who_it_is() {
    let inbox = Inbox::new();
    let root = inbox.dir.path();
    let dirs = AppDirs::create(root);
    let session = Session::start(&root.join("session"), true);
    inbox.place(
        "installed-check",
        r#"{"inbox": 1, "title": "Installed?", "source": {"app": "package-test"},
            "questions": [{"id": "q1", "type": "confirm", "question": "Installed?"}]}"#,
    );

    let mut app = session.command("/usr/bin/answer-inbox-desktop");
    dirs.apply(&mut app, &inbox.spool(), &inbox.db(), "package-test");
    let log = std::fs::File::create(dirs.logs().join("app.log")).unwrap();
    app.stdout(log.try_clone().unwrap()).stderr(log);
    let _app = Running::spawn(app);

    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let found = run(session
            .command("xdotool")
            .args(["search", "--name", "Answer Inbox"]));
        if code(&found) == 0 && !stdout(&found).trim().is_empty() {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "the installed app showed no window in 60 s; its log:\n{}",
            std::fs::read_to_string(dirs.logs().join("app.log")).unwrap_or_default()
        );
        std::thread::sleep(Duration::from_millis(200));
    }

    let bubble = session.wait_notify("Installed?");
    assert_eq!(bubble.app_name, "Answer Inbox");
    let lines: Vec<&str> = bubble.raw.lines().map(str::trim).collect();
    let hint = lines
        .iter()
        .position(|line| *line == "string \"desktop-entry\"")
        .and_then(|at| lines.get(at + 1));
    assert!(
        hint.is_some_and(
            |value| value.starts_with("variant") && value.ends_with("string \"Answer Inbox\"")
        ),
        "the bubble names not the installed desktop entry: {}",
        bubble.raw
    );
    // The installed icon, by its theme name (a source build would give a path instead).
    let icon_arg = bubble
        .raw
        .lines()
        .map(str::trim)
        .filter(|line| line.starts_with("string "))
        .nth(1);
    assert_eq!(
        icon_arg,
        Some("string \"answer-inbox-desktop\""),
        "app_icon: {}",
        bubble.raw
    );
}

/// The package scripts/package built, or the one `ANSWER_INBOX_DEB` names.
fn built_deb() -> PathBuf {
    if let Some(path) = std::env::var_os("ANSWER_INBOX_DEB") {
        return PathBuf::from(path);
    }
    let dir = crate::util::sibling_binary("bundle").join("deb");
    let mut debs: Vec<PathBuf> = std::fs::read_dir(&dir)
        .map(|entries| {
            entries
                .flatten()
                .map(|entry| entry.path())
                .filter(|path| path.extension().is_some_and(|ext| ext == "deb"))
                .collect()
        })
        .unwrap_or_default();
    // The newest, should several versions lie there.
    debs.sort_by_key(|path| std::fs::metadata(path).and_then(|m| m.modified()).ok());
    debs.pop().unwrap_or_else(|| {
        panic!(
            "no .deb in {}: build it first with `scripts/package --debug --deb` (scripts/test \
             does), or name one with ANSWER_INBOX_DEB",
            dir.display()
        )
    })
}

/// `None` when this process is root; `Some("sudo")` when sudo works without a password.
fn as_root() -> Option<String> {
    let id = run(Command::new("id").arg("-u"));
    if stdout(&id).trim() == "0" {
        return None;
    }
    let sudo = run(Command::new("sudo").args(["-n", "true"]));
    assert_eq!(
        code(&sudo),
        0,
        "installing the package needs root: run the tests as root, or with sudo that needs no \
         password"
    );
    Some("sudo".to_owned())
}

fn sudo_cmd(sudo: &Option<String>, program: &str) -> Command {
    match sudo {
        Some(sudo) => {
            let mut cmd = Command::new(sudo);
            cmd.args(["-n", program]);
            cmd
        }
        None => Command::new(program),
    }
}

fn run(cmd: &mut Command) -> Output {
    cmd.stdin(Stdio::null())
        .output()
        .unwrap_or_else(|error| panic!("cannot run {cmd:?}: {error}"))
}

/// Removes the package when dropped, also when the test fails half way.
struct Removal {
    sudo: Option<String>,
}

impl Drop for Removal {
    fn drop(&mut self) {
        let removed = run(sudo_cmd(&self.sudo, "dpkg").args(["-r", PACKAGE]));
        if code(&removed) != 0 && !std::thread::panicking() {
            panic!(
                "dpkg -r {PACKAGE}: {}{}",
                stdout(&removed),
                stderr(&removed)
            );
        }
    }
}
