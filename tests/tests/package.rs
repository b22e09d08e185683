//! The packages, used for real.
//!
//! - The two `.deb`s: `dpkg -i` of both on this machine, the installed command and app run
//!   from /usr/bin, the desktop entry checked with `desktop-file-validate`, then `dpkg -r`,
//!   after which nothing of them is left. Installing needs root, or sudo without a password.
//!   The test refuses to run over an Answer Inbox already installed on the machine: it would
//!   remove it.
//! - The AppImage: unpacked, its desktop entry and notices checked; then started as a user
//!   starts one (its runtime mounts it with FUSE), its window appears, and the app runs on the
//!   WebKit and GTK inside the image, not the machine's; stopping it unmounts the image. Given
//!   a subcommand, or started by the name `answer-inbox`, it is the command instead.
//! - scripts/package itself refuses a dirty or unbuilt tree, and the third-party notices it
//!   ships are those of the locked dependencies.
//!
//! The packages are the ones `scripts/package --debug` built (scripts/test builds them before
//! the tests); `ANSWER_INBOX_DEB_DIR` (a directory with both `.deb`s) and
//! `ANSWER_INBOX_APPIMAGE` name others.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use inbox_harness::desktop::AppDirs;
use inbox_harness::process::{descendants, eventually, Running};
use inbox_harness::session::{NotifyCall, Session};
use serde_json::{json, Value};

use crate::util::{code, stderr, stdout, Inbox};

/// The command's package, and the window's (which depends on the command's).
const CLI_PACKAGE: &str = "answer-inbox";
const DESKTOP_PACKAGE: &str = "answer-inbox-desktop";

/// The app's identifier (src-tauri/tauri.conf.json), which names its desktop entry and
/// AppStream metainfo, and which its bubbles give as their `desktop-entry` hint.
const APP_ID: &str = "dev.answer-inbox.desktop";
const DESKTOP_ENTRY: &str = "/usr/share/applications/dev.answer-inbox.desktop.desktop";

/// What the command's package must put on the machine.
const CLI_FILES: &[&str] = &[
    "/usr/bin/answer-inbox",
    "/usr/share/man/man1/answer-inbox.1.gz",
    "/usr/share/man/man1/answer-inbox-watch.1.gz",
    "/usr/share/bash-completion/completions/answer-inbox",
    "/usr/share/zsh/vendor-completions/_answer-inbox",
    "/usr/share/fish/vendor_completions.d/answer-inbox.fish",
    "/usr/lib/systemd/user/answer-inbox.service",
    "/usr/share/doc/answer-inbox/copyright",
    "/usr/share/doc/answer-inbox/changelog.gz",
    "/usr/share/doc/answer-inbox/THIRD-PARTY-NOTICES.txt.gz",
];

/// What the window's package must put on the machine.
const DESKTOP_FILES: &[&str] = &[
    "/usr/bin/answer-inbox-desktop",
    DESKTOP_ENTRY,
    "/usr/share/metainfo/dev.answer-inbox.desktop.metainfo.xml",
    "/usr/share/icons/hicolor/scalable/apps/answer-inbox-desktop.svg",
    "/usr/share/icons/hicolor/128x128/apps/answer-inbox-desktop.png",
    "/usr/share/icons/hicolor/32x32/apps/answer-inbox-desktop.png",
    "/usr/share/man/man1/answer-inbox-desktop.1.gz",
    "/usr/share/doc/answer-inbox-desktop/copyright",
    "/usr/share/doc/answer-inbox-desktop/changelog.gz",
    "/usr/share/doc/answer-inbox-desktop/THIRD-PARTY-NOTICES.txt.gz",
];

#[test]
fn the_debs_install_run_and_remove_cleanly() {
    let cli_deb = built_deb(CLI_PACKAGE);
    let desktop_deb = built_deb(DESKTOP_PACKAGE);
    let sudo = as_root();
    for package in [CLI_PACKAGE, DESKTOP_PACKAGE] {
        let status = run(Command::new("dpkg-query").args(["-W", "-f=${Status}", package]));
        assert!(
            !stdout(&status).contains("installed") || stdout(&status).contains("not-installed"),
            "{package} is already installed on this machine; this test installs and removes \
             it, so it will not run over yours (dpkg -r {package} first)"
        );
    }

    // What a server gets: the command alone, which needs nothing but the C library (and
    // GCC's unwinder, libgcc_s, which Rust's panics use; both in every Debian system).
    let depends = field(&cli_deb, "Depends");
    assert!(
        depends.contains("libc6 (>= ")
            && depends.split(", ").all(|dependency| {
                dependency.starts_with("libc6 (>= ") || dependency.starts_with("libgcc-s1 (>= ")
            }),
        "{CLI_PACKAGE} depends on {depends:?}: a server would need more than the C library"
    );
    let desktop_depends = field(&desktop_deb, "Depends");
    let version = env!("CARGO_PKG_VERSION");
    for needed in [
        format!("{CLI_PACKAGE} (= {version})"),
        "libwebkit2gtk-4.1-0".to_owned(),
        "libayatana-appindicator3-1".to_owned(),
    ] {
        assert!(
            desktop_depends.contains(&needed),
            "{DESKTOP_PACKAGE} depends on {desktop_depends:?}, without {needed}"
        );
    }
    let maintainer = field(&cli_deb, "Maintainer");
    assert!(
        maintainer.contains('<') && maintainer.ends_with('>') && maintainer.contains('@'),
        "the Maintainer field has no address: {maintainer:?}"
    );

    let installing = run(sudo_cmd(&sudo, "dpkg")
        .arg("-i")
        .arg(&cli_deb)
        .arg(&desktop_deb));
    // From here on, whatever happens, the packages go again.
    let removal = Removal { sudo: sudo.clone() };
    assert_eq!(
        code(&installing),
        0,
        "dpkg -i: {}{}",
        stdout(&installing),
        stderr(&installing)
    );
    for path in CLI_FILES.iter().chain(DESKTOP_FILES) {
        assert!(Path::new(path).is_file(), "the packages have no {path}");
    }
    for binary in ["/usr/bin/answer-inbox", "/usr/bin/answer-inbox-desktop"] {
        let sections = run(Command::new("readelf").args(["-S", "-W", binary]));
        assert!(
            !stdout(&sections).contains(".debug_info") && !stdout(&sections).contains(".symtab"),
            "{binary} is not stripped"
        );
    }
    for package in [CLI_PACKAGE, DESKTOP_PACKAGE] {
        let copyright =
            std::fs::read_to_string(format!("/usr/share/doc/{package}/copyright")).unwrap();
        assert!(
            copyright.starts_with(
                "Format: https://www.debian.org/doc/packaging-manuals/copyright-format/1.0/\n"
            ) && copyright.contains("\nLicense: MIT\n"),
            "{package}'s copyright file is not machine-readable MIT:\n{copyright}"
        );
    }

    // The installed command is on the PATH, is this build's, and does its work.
    let shown = run(Command::new("answer-inbox").arg("--version"));
    assert_eq!(code(&shown), 0, "{}", stderr(&shown));
    assert_eq!(stdout(&shown).trim(), format!("answer-inbox {version}"));
    let inbox = Inbox::new();
    inbox.place(
        "installed-cli",
        &json!({"inbox": 1, "title": "From the package?", "source": {"app": "package-test"},
            "questions": [{"id": "q1", "type": "confirm", "question": "Yes?"}]})
        .to_string(),
    );
    let listed = run(Command::new("answer-inbox")
        .args(["list", "--json"])
        .env("ANSWER_INBOX_DIR", inbox.spool())
        .env("ANSWER_INBOX_DB", inbox.db())
        .env("HOME", inbox.dir.path()));
    assert!(
        code(&listed) == 0 && stdout(&listed).contains("From the package?"),
        "the installed answer-inbox list: {}{}",
        stdout(&listed),
        stderr(&listed)
    );

    // The app menu's entry: valid by the specification, and starting the installed app.
    let validated = run(Command::new("desktop-file-validate").arg(DESKTOP_ENTRY));
    assert!(
        code(&validated) == 0 && stdout(&validated).trim().is_empty(),
        "desktop-file-validate {DESKTOP_ENTRY}: {}{}",
        stdout(&validated),
        stderr(&validated)
    );
    let text = std::fs::read_to_string(DESKTOP_ENTRY).unwrap();
    for line in [
        "Name=Answer Inbox",
        "Exec=answer-inbox-desktop",
        "Icon=answer-inbox-desktop",
        "Type=Application",
        "X-GNOME-UsesNotifications=true",
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

    drop(removal);
    for path in CLI_FILES.iter().chain(DESKTOP_FILES) {
        assert!(!Path::new(path).exists(), "dpkg -r left {path} behind");
    }
}

/// A field of a package's control file (`dpkg-deb --field`).
fn field(deb: &Path, name: &str) -> String {
    let out = run(Command::new("dpkg-deb").arg("--field").arg(deb).arg(name));
    assert_eq!(code(&out), 0, "dpkg-deb --field: {}", stderr(&out));
    stdout(&out).trim().to_owned()
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
        hint.is_some_and(|value| value.starts_with("variant")
            && value.ends_with(&format!("string \"{APP_ID}\""))),
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
    let entry = unpacked.join(format!("{APP_ID}.desktop"));
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
    // The notices: the project's, and the copyright file of each Debian package whose
    // libraries it carries (WebKitGTK's and GTK's among them, LGPL).
    for notice in [
        "usr/share/doc/answer-inbox/copyright",
        "usr/share/doc/answer-inbox/THIRD-PARTY-NOTICES.txt.gz",
        "usr/share/doc/libwebkit2gtk-4.1-0/copyright",
        "usr/share/doc/libgtk-3-0/copyright",
        "usr/share/doc/BUNDLED-LIBRARIES.txt",
    ] {
        assert!(unpacked.join(notice).is_file(), "no {notice} in the image");
    }
    let bundled =
        std::fs::read_to_string(unpacked.join("usr/share/doc/BUNDLED-LIBRARIES.txt")).unwrap();
    for library in std::fs::read_dir(unpacked.join("usr/lib"))
        .unwrap()
        .flatten()
    {
        let name = library.file_name().into_string().unwrap();
        if name.contains(".so") {
            let package = bundled
                .lines()
                .find_map(|line| line.strip_prefix(&format!("{name}  ")))
                .and_then(|rest| rest.split(' ').next())
                .unwrap_or_else(|| panic!("BUNDLED-LIBRARIES.txt names no package for {name}"));
            assert!(
                unpacked
                    .join(format!("usr/share/doc/{package}/copyright"))
                    .is_file(),
                "no copyright file of {package}, whose {name} is in the image"
            );
        }
    }
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

/// The package `name` that scripts/package built, in its directory or the one
/// `ANSWER_INBOX_DEB_DIR` names.
fn built_deb(name: &str) -> PathBuf {
    let dir = std::env::var_os("ANSWER_INBOX_DEB_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| crate::util::sibling_binary("bundle").join("deb"));
    let prefix = format!("{name}_{}_", env!("CARGO_PKG_VERSION"));
    std::fs::read_dir(&dir)
        .into_iter()
        .flatten()
        .flatten()
        .map(|entry| entry.path())
        .find(|path| {
            let file = path.file_name().unwrap().to_string_lossy();
            file.starts_with(&prefix) && file.ends_with(".deb")
        })
        .unwrap_or_else(|| {
            panic!(
                "no {prefix}*.deb in {}: build it first with `scripts/package --debug` \
                 (scripts/test does), or name the directory with ANSWER_INBOX_DEB_DIR",
                dir.display()
            )
        })
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

/// Removes the packages when dropped, also when the test fails half way.
struct Removal {
    sudo: Option<String>,
}

impl Drop for Removal {
    fn drop(&mut self) {
        let removed = run(sudo_cmd(&self.sudo, "dpkg").args(["-r", DESKTOP_PACKAGE, CLI_PACKAGE]));
        if code(&removed) != 0 && !std::thread::panicking() {
            panic!("dpkg -r: {}{}", stdout(&removed), stderr(&removed));
        }
    }
}

/// The AppImage with the inbox's variables, as an agent's host would start it.
fn appimage_cmd(appimage: &Path, inbox: &Inbox, args: &[&str]) -> Command {
    let mut cmd = Command::new(appimage);
    cmd.args(args)
        .env("ANSWER_INBOX_DIR", inbox.spool())
        .env("ANSWER_INBOX_DB", inbox.db())
        .env("HOME", inbox.dir.path())
        .env("XDG_CONFIG_HOME", inbox.dir.path().join("xdg-config"))
        .env_remove("DBUS_SESSION_BUS_ADDRESS")
        .stdin(Stdio::null());
    cmd
}

/// One image, two programs: a subcommand, or the name `answer-inbox`, runs the command from
/// the image, so agents on other distributions have `mcp`, `hook`, `ask` and the rest.
#[test]
fn the_appimage_is_the_command_too() {
    let appimage = built("appimage", "AppImage", "ANSWER_INBOX_APPIMAGE");
    let inbox = Inbox::new();
    let version = format!("answer-inbox {}", env!("CARGO_PKG_VERSION"));

    // `mcp` serves MCP over its standard streams: the handshake, then the tools.
    let mut mcp = appimage_cmd(&appimage, &inbox, &["mcp"]);
    mcp.stdin(Stdio::piped());
    let mut server = Running::spawn(mcp);
    let mut input = server.child.stdin.take().unwrap();
    let mut send = |message: Value| {
        use std::io::Write;
        writeln!(input, "{message}").unwrap();
        input.flush().unwrap();
    };
    send(
        json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {},
        "clientInfo": {"name": "package-test", "version": "0"}}}),
    );
    server.wait_line("\"id\":1");
    send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
    send(json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"}));
    let tools: Value = serde_json::from_str(&server.wait_line("\"id\":2")).unwrap();
    assert!(
        tools["result"]["tools"]
            .as_array()
            .is_some_and(|tools| tools.iter().any(|tool| tool["name"] == "ask_operator")),
        "tools/list from the image: {tools}"
    );
    server.stop();

    // Options of the command's own, and any other subcommand.
    let shown = run(&mut appimage_cmd(&appimage, &inbox, &["--version"]));
    assert_eq!(stdout(&shown).trim(), version, "{}", stderr(&shown));
    let listed = run(&mut appimage_cmd(&appimage, &inbox, &["list", "--json"]));
    assert_eq!(code(&listed), 0, "{}", stderr(&listed));
    assert_eq!(stdout(&listed).trim(), "[]");
    // The command's global options before its subcommand: still the command, not the window.
    let spool = inbox.spool();
    let spool = spool.to_str().unwrap();
    let listed = run(&mut appimage_cmd(
        &appimage,
        &inbox,
        &["--spool", spool, "list", "--json"],
    ));
    assert_eq!(code(&listed), 0, "{}", stderr(&listed));
    assert_eq!(stdout(&listed).trim(), "[]");

    // An unknown subcommand gets the command's usage, and exit status 2.
    let unknown = run(&mut appimage_cmd(&appimage, &inbox, &["frobnicate"]));
    assert_eq!(code(&unknown), 2, "{}", stderr(&unknown));
    assert!(
        stderr(&unknown).contains("unrecognized subcommand 'frobnicate'")
            && stderr(&unknown).contains("Usage: answer-inbox"),
        "{}",
        stderr(&unknown)
    );

    // A link named answer-inbox is the command, whatever the arguments: `--help` is its.
    let link = inbox.dir.path().join("bin/answer-inbox");
    std::fs::create_dir_all(link.parent().unwrap()).unwrap();
    std::os::unix::fs::symlink(&appimage, &link).unwrap();
    let shown = run(&mut appimage_cmd(&link, &inbox, &["--version"]));
    assert_eq!(stdout(&shown).trim(), version, "{}", stderr(&shown));
    let helped = run(&mut appimage_cmd(&link, &inbox, &["hook", "--help"]));
    assert!(
        code(&helped) == 0 && stdout(&helped).contains("Usage: answer-inbox hook"),
        "{}{}",
        stdout(&helped),
        stderr(&helped)
    );
}

/// A scratch git repository holding scripts/package, committed: the script's checks run
/// before it builds anything, so they need nothing else.
fn scratch_checkout() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let repo = Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap();
    std::fs::create_dir_all(dir.path().join("scripts")).unwrap();
    std::fs::copy(
        repo.join("scripts/package"),
        dir.path().join("scripts/package"),
    )
    .unwrap();
    std::fs::write(dir.path().join("README.md"), "scratch\n").unwrap();
    for args in [
        &["init", "-q"][..],
        &["add", "."],
        &[
            "-c",
            "user.name=t",
            "-c",
            "user.email=t@example.com",
            "commit",
            "-qm",
            "x",
        ],
    ] {
        let git = run(Command::new("git").args(args).current_dir(dir.path()));
        assert_eq!(code(&git), 0, "git {args:?}: {}", stderr(&git));
    }
    dir
}

fn package_in(checkout: &Path, args: &[&str]) -> Output {
    run(Command::new(checkout.join("scripts/package"))
        .args(args)
        .env("CARGO_TARGET_DIR", checkout.join("target")))
}

#[test]
fn a_dirty_tree_is_not_packaged() {
    let checkout = scratch_checkout();
    std::fs::write(checkout.path().join("README.md"), "changed\n").unwrap();
    std::fs::write(checkout.path().join("new.rs"), "fn main() {}\n").unwrap();
    let out = package_in(checkout.path(), &["--deb"]);
    assert_eq!(code(&out), 1, "{}{}", stdout(&out), stderr(&out));
    let said = stderr(&out);
    assert!(
        said.contains("changes no commit holds")
            && said.contains("README.md")
            && said.contains("new.rs")
            && said.contains("--allow-dirty"),
        "{said}"
    );
}

#[test]
fn an_unbuilt_tree_is_not_packaged() {
    let checkout = scratch_checkout();
    let dir = checkout.path();
    let out = package_in(dir, &["--no-build"]);
    assert_eq!(code(&out), 1, "{}{}", stdout(&out), stderr(&out));
    assert!(
        stderr(&out).contains("ui/dist has no index.html"),
        "{}",
        stderr(&out)
    );

    std::fs::create_dir_all(dir.join("ui/dist")).unwrap();
    std::fs::write(dir.join("ui/dist/index.html"), "").unwrap();
    let out = package_in(dir, &["--no-build", "--allow-dirty"]);
    assert_eq!(code(&out), 1, "{}{}", stdout(&out), stderr(&out));
    let expected = format!(
        "no {}: build it first",
        dir.join("target/release/answer-inbox").display()
    );
    assert!(stderr(&out).contains(&expected), "{}", stderr(&out));

    // Binaries built before a change to what goes into them (here the window's config,
    // not a Rust source) are refused too.
    let release = dir.join("target/release");
    std::fs::create_dir_all(&release).unwrap();
    for binary in ["answer-inbox", "answer-inbox-desktop"] {
        let file = release.join(binary);
        std::fs::write(&file, "#!/bin/sh\necho 'answer-inbox 0.1.0'\n").unwrap();
        std::fs::set_permissions(&file, std::os::unix::fs::PermissionsExt::from_mode(0o755))
            .unwrap();
    }
    let old = [
        release.join("answer-inbox"),
        release.join("answer-inbox-desktop"),
        dir.join("ui/dist/index.html"),
    ];
    let touched = run(Command::new("touch").args(["-d", "2020-01-01"]).args(&old));
    assert_eq!(code(&touched), 0, "{}", stderr(&touched));
    std::fs::create_dir_all(dir.join("src-tauri")).unwrap();
    std::fs::write(dir.join("src-tauri/tauri.conf.json"), "{}\n").unwrap();
    let added = run(Command::new("git")
        .args(["add", "src-tauri/tauri.conf.json"])
        .current_dir(dir));
    assert_eq!(code(&added), 0, "{}", stderr(&added));
    let out = package_in(dir, &["--no-build", "--allow-dirty"]);
    assert_eq!(code(&out), 1, "{}{}", stdout(&out), stderr(&out));
    assert!(
        stderr(&out).contains("is older than src-tauri/tauri.conf.json"),
        "{}",
        stderr(&out)
    );
}

/// Where THIRD-PARTY-NOTICES.txt lists what it was generated from (scripts/notices).
const LOCKED_HEADING: &str = "Locked packages this file was generated from";

/// The notices the packages ship were generated from the dependencies now locked: every
/// third-party crate in Cargo.lock, and the npm packages bundled into ui/dist at the
/// versions ui/package-lock.json holds (with every runtime dependency of ui/ among them).
#[test]
fn the_notices_are_those_of_the_locked_packages() {
    let repo = Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap();
    let regenerate = "regenerate them with `scripts/notices` and commit THIRD-PARTY-NOTICES.txt";
    let notices = std::fs::read_to_string(repo.join("THIRD-PARTY-NOTICES.txt")).unwrap();
    let listed: Vec<&str> = notices
        .split_once(LOCKED_HEADING)
        .unwrap_or_else(|| {
            panic!("THIRD-PARTY-NOTICES.txt has no {LOCKED_HEADING:?}; {regenerate}")
        })
        .1
        .lines()
        .skip(1)
        .filter(|line| !line.is_empty())
        .collect();

    let lock: toml::Table = std::fs::read_to_string(repo.join("Cargo.lock"))
        .unwrap()
        .parse()
        .unwrap();
    let locked: BTreeSet<String> = lock["package"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|package| package.get("source").is_some())
        .map(|package| {
            format!(
                "crate {} {}",
                package["name"].as_str().unwrap(),
                package["version"].as_str().unwrap()
            )
        })
        .collect();
    let in_notices: BTreeSet<String> = listed
        .iter()
        .filter(|line| line.starts_with("crate "))
        .map(|line| line.to_string())
        .collect();
    let missing: Vec<&String> = locked.difference(&in_notices).take(10).collect();
    let gone: Vec<&String> = in_notices.difference(&locked).take(10).collect();
    assert!(
        missing.is_empty() && gone.is_empty(),
        "THIRD-PARTY-NOTICES.txt is stale against Cargo.lock: locked but not in it: \
         {missing:?}; in it but no longer locked: {gone:?}; {regenerate}"
    );

    let npm_lock: Value =
        serde_json::from_str(&std::fs::read_to_string(repo.join("ui/package-lock.json")).unwrap())
            .unwrap();
    let mut npm_listed = BTreeSet::new();
    for line in listed.iter().filter(|line| line.starts_with("npm ")) {
        let mut words = line.split(' ').skip(1);
        let (name, version) = (words.next().unwrap(), words.next().unwrap());
        let locked = &npm_lock["packages"][format!("node_modules/{name}")]["version"];
        assert_eq!(
            locked.as_str(),
            Some(version),
            "THIRD-PARTY-NOTICES.txt has the npm package {name} {version}, \
             ui/package-lock.json has {locked}; {regenerate}"
        );
        npm_listed.insert(name.to_owned());
    }
    let manifest: Value =
        serde_json::from_str(&std::fs::read_to_string(repo.join("ui/package.json")).unwrap())
            .unwrap();
    for name in manifest["dependencies"].as_object().unwrap().keys() {
        assert!(
            npm_listed.contains(name),
            "ui/package.json depends on {name}, which THIRD-PARTY-NOTICES.txt does not list; \
             {regenerate}"
        );
    }
}
