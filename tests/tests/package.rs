//! The packages, used for real.
//!
//! - The `.deb`: `dpkg -i` on this machine, the installed command and app run from /usr/bin,
//!   the desktop entry checked with `desktop-file-validate`, then `dpkg -r`, after which
//!   nothing of it is left. Installing needs root, or sudo without a password. The test
//!   refuses to run over an Answer Inbox already installed on the machine: it would remove it.
//! - The AppImage: unpacked, its desktop entry checked; then started as a user starts one
//!   (its runtime mounts it with FUSE), its window appears, and the app runs on the WebKit
//!   and GTK inside the image, not the machine's; stopping it unmounts the image.
//!
//! Both are the ones `scripts/package --debug` built (scripts/test builds them before the
//! tests); `ANSWER_INBOX_DEB` and `ANSWER_INBOX_APPIMAGE` name others.

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use inbox_harness::desktop::AppDirs;
use inbox_harness::process::{descendants, eventually, Running};
use inbox_harness::session::{NotifyCall, Session};
use serde_json::json;

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
    let started = start_with_a_request(
        &inbox,
        Path::new("/usr/bin/answer-inbox-desktop"),
        "Installed?",
        |_| {},
    );
    let bubble = &started.bubble;
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

/// The libraries the app must take from the image: WebKit and what it renders with. Were any
/// of them the machine's, the AppImage would work only where those happen to be installed.
const FROM_THE_IMAGE: &[&str] = &[
    "libwebkit2gtk-4.1.so",
    "libjavascriptcoregtk-4.1.so",
    "libgtk-3.so",
    "libsoup-3.0.so",
];

#[test]
fn the_appimage_runs_the_app_on_the_webkit_inside_it() {
    let appimage = built("appimage", "AppImage", "ANSWER_INBOX_APPIMAGE");
    let inbox = Inbox::new();
    let root = inbox.dir.path();

    // What AppImage tools read from it: a valid desktop entry at the root, and an icon.
    let unpacked = unpack(&appimage, root);
    let entry = unpacked.join("answer-inbox.desktop");
    let validated = run(Command::new("desktop-file-validate").arg(&entry));
    assert!(
        code(&validated) == 0 && stdout(&validated).trim().is_empty(),
        "desktop-file-validate {}: {}{}",
        entry.display(),
        stdout(&validated),
        stderr(&validated)
    );
    assert!(
        unpacked.join(".DirIcon").is_file(),
        "no .DirIcon in the image"
    );
    assert!(unpacked.join("AppRun").is_file(), "no AppRun in the image");
    std::fs::remove_dir_all(&unpacked).unwrap();

    // Started as a user starts it, with a request waiting, and the spool relative to where
    // it is started, as from a terminal: the app runs from inside the image, and must still
    // find it.
    let started = start_with_a_request(&inbox, &appimage, "From the AppImage?", |app| {
        app.current_dir(root).env("ANSWER_INBOX_DIR", "spool");
    });
    let mut app = started.app;

    // The runtime mounted the image and became the app: its program is the image's.
    let pid = app.child.id();
    let exe = std::fs::read_link(format!("/proc/{pid}/exe")).unwrap();
    let mount = exe
        .ancestors()
        .nth(3)
        .filter(|dir| dir.join("AppRun").is_file())
        .unwrap_or_else(|| {
            panic!(
                "the app runs {}, not a program in a mounted image",
                exe.display()
            )
        })
        .to_owned();
    assert!(
        exe.ends_with("usr/bin/answer-inbox-desktop") && !mount.starts_with("/usr"),
        "the app runs {}",
        exe.display()
    );

    // It, and WebKit's helper processes it started, run on the libraries in the image.
    let maps = std::fs::read_to_string(format!("/proc/{pid}/maps")).unwrap();
    for library in FROM_THE_IMAGE {
        let mapped: Vec<&str> = maps
            .lines()
            .filter_map(|line| line.split_whitespace().nth(5))
            .filter(|path| path.contains(library))
            .collect();
        assert!(
            !mapped.is_empty()
                && mapped
                    .iter()
                    .all(|path| path.starts_with(mount.to_str().unwrap())),
            "{library} is mapped from {mapped:?}, not from the image at {}",
            mount.display()
        );
    }
    for helper in webkit_helpers(pid) {
        assert!(
            helper.starts_with(&mount),
            "WebKit started {}, not the helper in the image at {}",
            helper.display(),
            mount.display()
        );
    }

    // Quitting the app unmounts the image.
    app.stop();
    eventually("the image to be unmounted", || {
        !std::fs::read_to_string("/proc/self/mountinfo")
            .unwrap()
            .contains(mount.to_str().unwrap())
    });
}

/// Unpacks the AppImage into `dir` with its own `--appimage-extract`; returns the bundle.
fn unpack(appimage: &Path, dir: &Path) -> PathBuf {
    let unpacked = run(Command::new(appimage)
        .arg("--appimage-extract")
        .current_dir(dir));
    assert_eq!(
        code(&unpacked),
        0,
        "--appimage-extract: {}",
        stderr(&unpacked)
    );
    dir.join("squashfs-root")
}

/// Someone else's programs where the bundled WebKit looks for its helpers, which is relative
/// to the working directory: the unpacked bundle's app, started by hand from that directory,
/// still runs the bundle's own helpers and never those programs.
#[test]
fn the_unpacked_app_never_runs_helpers_from_the_directory_it_was_started_in() {
    let appimage = built("appimage", "AppImage", "ANSWER_INBOX_APPIMAGE");
    let inbox = Inbox::new();
    let root = inbox.dir.path();
    let bundle = unpack(&appimage, root);

    // The planted helpers sit where ././/lib/<multiarch>/webkit2gtk-4.1 leads from `hostile`.
    let helpers_dir = std::fs::read_dir(bundle.join("usr/lib"))
        .unwrap()
        .flatten()
        .map(|entry| entry.path().join("webkit2gtk-4.1"))
        .find(|dir| dir.is_dir())
        .expect("the bundle has WebKit's helpers");
    let relative = helpers_dir.strip_prefix(bundle.join("usr")).unwrap();
    let hostile = root.join("hostile");
    let planted = hostile.join(relative);
    std::fs::create_dir_all(&planted).unwrap();
    let ran = root.join("planted-helper-ran");
    for name in ["WebKitWebProcess", "WebKitNetworkProcess"] {
        let path = planted.join(name);
        std::fs::write(
            &path,
            format!("#!/bin/sh\necho \"$0\" >> '{}'\n", ran.display()),
        )
        .unwrap();
        let mut permissions = std::fs::metadata(&path).unwrap().permissions();
        std::os::unix::fs::PermissionsExt::set_mode(&mut permissions, 0o755);
        std::fs::set_permissions(&path, permissions).unwrap();
    }

    let app_binary = bundle.join("usr/bin/answer-inbox-desktop");
    let started = start_with_a_request(&inbox, &app_binary, "Unpacked?", |app| {
        app.current_dir(&hostile);
    });
    let pid = started.app.child.id();
    let mut helpers = Vec::new();
    eventually("WebKit's helpers, the bundle's or the planted ones", || {
        helpers = running_webkit_helpers(pid);
        ran.exists() || both_helpers(&helpers)
    });
    assert!(
        !ran.exists(),
        "WebKit ran the planted helpers: {}",
        std::fs::read_to_string(&ran).unwrap_or_default()
    );
    for helper in helpers {
        assert!(
            helper.starts_with(&bundle),
            "WebKit started {}, not the bundle's helper",
            helper.display()
        );
    }
}

/// An app started in a private session (Xvfb, a bus, dunst), with its window up and the
/// bubble for the request it found waiting. Fields drop in order: the app, then the session.
struct Started {
    app: Running,
    bubble: NotifyCall,
    _session: Session,
}

/// Starts `program` in a private session with a request titled `title` waiting in `inbox`'s
/// spool (`adjust` changes the command before it starts); returns once the window is up and
/// the request's bubble has come, from the app's own identity.
fn start_with_a_request(
    inbox: &Inbox,
    program: &Path,
    title: &str,
    adjust: impl FnOnce(&mut Command),
) -> Started {
    let root = inbox.dir.path();
    let dirs = AppDirs::create(root);
    let session = Session::start(&root.join("session"), true);
    let request = json!({"inbox": 1, "title": title, "source": {"app": "package-test"},
        "questions": [{"id": "q1", "type": "confirm", "question": title}]});
    inbox.place("package-check", &request.to_string());

    let mut app = session.command(program);
    dirs.apply(&mut app, &inbox.spool(), &inbox.db(), "package-test");
    adjust(&mut app);
    let log = std::fs::File::create(dirs.logs().join("app.log")).unwrap();
    app.stdout(log.try_clone().unwrap()).stderr(log);
    let app = Running::spawn(app);
    wait_for_window(&session, &dirs, &program.display().to_string());
    let bubble = session.wait_notify(title);
    assert_eq!(bubble.app_name, "Answer Inbox");
    Started {
        app,
        bubble,
        _session: session,
    }
}

/// The programs of WebKit's web and network processes under `pid`, once both are running.
fn webkit_helpers(pid: u32) -> Vec<PathBuf> {
    let mut helpers = Vec::new();
    eventually("WebKit's web and network processes", || {
        helpers = running_webkit_helpers(pid);
        both_helpers(&helpers)
    });
    helpers
}

/// The programs of the WebKit helper processes under `pid` now.
fn running_webkit_helpers(pid: u32) -> Vec<PathBuf> {
    descendants(pid)
        .iter()
        .filter_map(|process| std::fs::read_link(format!("/proc/{}/exe", process.pid)).ok())
        .filter(|exe| exe.to_string_lossy().contains("/webkit2gtk-4.1/WebKit"))
        .collect()
}

/// Whether both the web and the network process are among `helpers`.
fn both_helpers(helpers: &[PathBuf]) -> bool {
    ["WebKitWebProcess", "WebKitNetworkProcess"]
        .iter()
        .all(|name| helpers.iter().any(|exe| exe.ends_with(name)))
}

/// Waits up to 60 s for a window titled "Answer Inbox" on the session's display.
fn wait_for_window(session: &Session, dirs: &AppDirs, what: &str) {
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let found = run(session
            .command("xdotool")
            .args(["search", "--name", "Answer Inbox"]));
        if code(&found) == 0 && !stdout(&found).trim().is_empty() {
            return;
        }
        assert!(
            Instant::now() < deadline,
            "{what} showed no window in 60 s; its log:\n{}",
            std::fs::read_to_string(dirs.logs().join("app.log")).unwrap_or_default()
        );
        std::thread::sleep(Duration::from_millis(200));
    }
}

/// The package scripts/package built, or the one `ANSWER_INBOX_DEB` names.
fn built_deb() -> PathBuf {
    built("deb", "deb", "ANSWER_INBOX_DEB")
}

/// The newest `*.{extension}` in the target directory's `bundle/{kind}/` (where
/// scripts/package puts it), or the file the environment variable `named_by` names.
fn built(kind: &str, extension: &str, named_by: &str) -> PathBuf {
    if let Some(path) = std::env::var_os(named_by) {
        return PathBuf::from(path);
    }
    let dir = crate::util::sibling_binary("bundle").join(kind);
    let mut found: Vec<PathBuf> = std::fs::read_dir(&dir)
        .map(|entries| {
            entries
                .flatten()
                .map(|entry| entry.path())
                .filter(|path| path.extension().is_some_and(|ext| ext == extension))
                .collect()
        })
        .unwrap_or_default();
    // The newest, should several versions lie there.
    found.sort_by_key(|path| std::fs::metadata(path).and_then(|m| m.modified()).ok());
    found.pop().unwrap_or_else(|| {
        panic!(
            "no .{extension} in {}: build it first with `scripts/package --debug` (scripts/test \
             does), or name one with {named_by}",
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
