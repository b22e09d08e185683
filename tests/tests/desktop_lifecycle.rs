//! The app as an installed desktop app lives: started at login, logging to a file, closed
//! and quit, its window's size kept. The real window in a private session (see
//! util/desktop.rs); the close button is pressed the way a window manager presses it, with a
//! `WM_DELETE_WINDOW` message to the real X window.

use std::path::PathBuf;
use std::process::Command;
use std::time::{Duration, Instant};

use serde_json::json;
use x11rb::protocol::xproto::{ClientMessageEvent, ConnectionExt, EventMask};

use crate::util::desktop::{app_binary, Desktop, STEP};
use crate::util::{code, stdout};

/// The tray host's well-known name: while the test owns it, a tray is "there".
const TRAY_WATCHER: &str = "org.kde.StatusNotifierWatcher";

/// A tray host's watcher, as far as the app's tray library can tell: it answers at once.
/// (Holding the name without answering is not enough: libayatana then waits on its call for
/// D-Bus's 25 s timeout, and the app's main loop with it, so the close button went unheard.)
struct TrayWatcher;

#[zbus::interface(name = "org.kde.StatusNotifierWatcher")]
impl TrayWatcher {
    fn register_status_notifier_item(&self, _service: &str) {}

    fn register_status_notifier_host(&self, _service: &str) {}

    #[zbus(property)]
    fn registered_status_notifier_items(&self) -> Vec<String> {
        Vec::new()
    }

    #[zbus(property)]
    fn is_status_notifier_host_registered(&self) -> bool {
        true
    }

    #[zbus(property)]
    fn protocol_version(&self) -> i32 {
        0
    }
}

#[tokio::test]
async fn start_at_login_adds_and_removes_the_autostart_entry_and_the_log_has_a_file() {
    let d = Desktop::start().await;
    d.nav("Settings").await;
    let switch = d.find("[data-testid=settings-start-at-login]").await;
    assert_eq!(
        switch.prop("checked").await.unwrap().as_deref(),
        Some("false")
    );

    // auto-launch writes to $HOME/.config/autostart whatever XDG_CONFIG_HOME says.
    let entry = d.root().join("home/.config/autostart/Answer Inbox.desktop");
    assert!(!entry.exists());
    d.click("[data-testid=settings-start-at-login]").await;
    // The autostart library creates the file and then writes it: wait for the whole entry
    // (its Exec line), not merely for the file, or the read can see it empty.
    wait_until("the autostart entry to be written", || {
        std::fs::read_to_string(&entry).is_ok_and(|text| text.contains("Exec="))
    })
    .await;
    let text = std::fs::read_to_string(&entry).unwrap();
    assert!(text.contains("[Desktop Entry]"), "{text}");
    assert!(text.contains("Type=Application"), "{text}");
    assert!(text.contains("Name=Answer Inbox"), "{text}");
    let exec = text
        .lines()
        .find_map(|line| line.strip_prefix("Exec="))
        .unwrap_or_else(|| panic!("no Exec line: {text}"));
    // The very binary that runs, started hidden in the tray at login where there is one.
    let binary = std::fs::canonicalize(app_binary()).unwrap();
    assert_eq!(exec.trim(), format!("{} --at-login", binary.display()));
    d.wait_js(
        "the switch to show it is on",
        STEP,
        "return document.querySelector('[data-testid=settings-start-at-login]').checked || null",
    )
    .await;

    d.click("[data-testid=settings-start-at-login]").await;
    wait_until("the autostart entry to go", || !entry.exists()).await;

    // The log folder Settings names has today's file, with the start-up line in it.
    let shown = d.text("[data-testid=settings-log-dir]").await;
    let logs = d.root().join("home/.local/state/answer-inbox/logs");
    assert_eq!(PathBuf::from(shown.trim()), logs);
    let file = logs.join(format!(
        "answer-inbox-desktop.{}.log",
        chrono::Utc::now().format("%Y-%m-%d")
    ));
    let started = |text: &str| text.contains("INFO") && text.contains("Answer Inbox 0.1.0 started");
    let waited = wait_for(STEP, || {
        std::fs::read_to_string(&file).is_ok_and(|text| started(&text))
    })
    .await;
    assert!(
        waited,
        "no start-up line in {}; the folder has {:?}; the file: {:?}",
        file.display(),
        std::fs::read_dir(&logs).map(|e| e.flatten().map(|e| e.file_name()).collect::<Vec<_>>()),
        std::fs::read_to_string(&file)
    );
    d.scroll_to("[data-testid=settings-start-at-login]").await;
    d.screenshot("settings-app").await;
    d.finish().await;
}

#[tokio::test]
async fn without_a_tray_closing_says_once_that_it_quits_then_quits() {
    let d = Desktop::start().await;
    let window = main_window(&d).await;
    let pid = window_pid(&d, window);

    // No tray host on this session's bus: the first close keeps the window and explains.
    close_heard(&d, window).await;
    let explained = wait_for(STEP, || {
        let log = d.logs_tail();
        log.contains("close button: Explain")
    })
    .await;
    assert!(explained, "the close was not explained:\n{}", d.logs_tail());
    d.find("[data-testid=closing-quits]").await;
    let told = d.text("[data-testid=closing-quits]").await;
    assert!(
        told.contains("Closing the window quits Answer Inbox"),
        "{told}"
    );
    d.screenshot("closing-quits").await;
    d.click("[data-testid=closing-keep]").await;
    d.wait_gone("[data-testid=closing-quits]").await;
    assert!(alive(pid), "Keep open keeps the app");
    assert!(d
        .root()
        .join("home/.local/state/answer-inbox/closing-quits-explained")
        .exists());

    // Said once: the next close quits at once.
    press_close(&d, window);
    wait_until("the app to quit", || !alive(pid)).await;
}

#[tokio::test]
async fn with_a_tray_closing_hides_a_second_launch_shows_and_ctrl_q_quits_keeping_the_size() {
    // The size an earlier run left, in the window-state plugin's file.
    let d = Desktop::start_prepared(|root| {
        let dir = root.join("config/dev.answer-inbox.desktop");
        std::fs::create_dir_all(&dir).unwrap();
        let state = json!({"main": {"width": 900, "height": 600, "x": 10, "y": 20,
            "prev_x": 10, "prev_y": 20, "maximized": false, "visible": true,
            "decorated": true, "fullscreen": false}});
        std::fs::write(dir.join(".window-state.json"), state.to_string()).unwrap();
    })
    .await;
    let window = main_window(&d).await;
    let pid = window_pid(&d, window);
    assert_eq!(window_size(&d, window), (900, 600), "the size restored");

    // A tray host: closing hides the window, and the app stays.
    let _tray = zbus::blocking::connection::Builder::address(d.session.bus_address.as_str())
        .unwrap()
        .name(TRAY_WATCHER)
        .unwrap()
        .serve_at("/StatusNotifierWatcher", TrayWatcher)
        .unwrap()
        .build()
        .unwrap();
    close_heard(&d, window).await;
    wait_until("the window to hide", || visible_windows(&d).is_empty()).await;
    assert!(alive(pid), "a hidden app keeps running in the tray");

    // Launching it again brings the window back (the first instance shows it; the second
    // hands over and ends).
    let mut again = Command::new(app_binary());
    d.apply_app_env(&mut again);
    let second = again.output().unwrap();
    assert_eq!(code(&second), 0, "{}", stdout(&second));
    wait_until("the window to come back", || {
        !visible_windows(&d).is_empty()
    })
    .await;

    // Another size, then Ctrl+Q: the app quits and keeps the size for next time.
    let resized = d
        .session
        .command("xdotool")
        .args(["windowsize", &window.to_string(), "1000", "640"])
        .output()
        .unwrap();
    assert_eq!(code(&resized), 0);
    wait_until("the new size", || window_size(&d, window) == (1000, 640)).await;
    // The app ends while WebDriver still waits for the key press's reply: its error is the
    // quit, not a failure.
    let ctrl_q = format!("{}q", char::from(fantoccini::key::Key::Control));
    let focused = d.client().active_element().await.unwrap();
    let _ = focused.send_keys(&ctrl_q).await;
    wait_until("Ctrl+Q to quit the app", || !alive(pid)).await;
    let saved: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(
            d.root()
                .join("config/dev.answer-inbox.desktop/.window-state.json"),
        )
        .unwrap(),
    )
    .unwrap();
    assert_eq!(
        (&saved["main"]["width"], &saved["main"]["height"]),
        (&json!(1000), &json!(640)),
        "{saved}"
    );
}

/// The app's visible top-level window, once it is there.
async fn main_window(d: &Desktop) -> u32 {
    let mut found = Vec::new();
    wait_until("the app's window", || {
        found = visible_windows(d);
        !found.is_empty()
    })
    .await;
    found[0]
}

/// The visible X windows titled Answer Inbox on this test's display.
fn visible_windows(d: &Desktop) -> Vec<u32> {
    let out = d
        .session
        .command("xdotool")
        .args(["search", "--onlyvisible", "--name", "^Answer Inbox"])
        .output()
        .unwrap();
    stdout(&out)
        .lines()
        .filter_map(|line| line.trim().parse().ok())
        .collect()
}

fn window_pid(d: &Desktop, window: u32) -> u32 {
    let out = d
        .session
        .command("xdotool")
        .args(["getwindowpid", &window.to_string()])
        .output()
        .unwrap();
    stdout(&out)
        .trim()
        .parse()
        .unwrap_or_else(|_| panic!("no pid for window {window}: {}", stdout(&out)))
}

/// The window's inner size, as X has it.
fn window_size(d: &Desktop, window: u32) -> (u32, u32) {
    let out = d
        .session
        .command("xdotool")
        .args(["getwindowgeometry", &window.to_string()])
        .output()
        .unwrap();
    let text = stdout(&out);
    let geometry = text
        .lines()
        .find_map(|line| line.trim().strip_prefix("Geometry: "))
        .unwrap_or_else(|| panic!("no geometry: {text}"));
    let (width, height) = geometry.split_once('x').unwrap();
    (
        width.trim().parse().unwrap(),
        height.trim().parse().unwrap(),
    )
}

/// Presses the close button and waits for the app's log to say what the button did.
async fn close_heard(d: &Desktop, window: u32) {
    let heard = || {
        std::fs::read_to_string(d.app_log())
            .unwrap_or_default()
            .matches(CLOSE_LOGGED)
            .count()
    };
    let before = heard();
    press_close(d, window);
    assert!(
        wait_for(STEP, || heard() > before).await,
        "the app never heard its close button:\n{}",
        d.logs_tail()
    );
}

/// What the app logs when its close button is pressed (src-tauri/src/lib.rs).
const CLOSE_LOGGED: &str = "the window's close button: ";

/// Presses the window's close button the way a window manager does: `WM_DELETE_WINDOW`
/// under `WM_PROTOCOLS`, sent to the window itself.
fn press_close(d: &Desktop, window: u32) {
    let (x, _screen) = x11rb::connect(Some(&d.session.display)).unwrap();
    let atom = |name: &[u8]| x.intern_atom(false, name).unwrap().reply().unwrap().atom;
    let (protocols, delete) = (atom(b"WM_PROTOCOLS"), atom(b"WM_DELETE_WINDOW"));
    let message = ClientMessageEvent::new(
        32,
        window,
        protocols,
        [delete, x11rb::CURRENT_TIME, 0, 0, 0],
    );
    x.send_event(false, window, EventMask::NO_EVENT, message)
        .unwrap();
    // A round trip before the connection closes: the X server drops a closed client's
    // requests that it has not read yet, so a message sent just before the close was lost
    // whenever the server was slow to read (on a loaded machine, most of them).
    x.get_input_focus().unwrap().reply().unwrap();
}

fn alive(pid: u32) -> bool {
    // A process that ended but was not yet reaped by its parent is a zombie: gone for us.
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .is_ok_and(|stat| !stat.split(") ").nth(1).is_some_and(|s| s.starts_with('Z')))
}

async fn wait_until(what: &str, done: impl FnMut() -> bool) {
    assert!(wait_for(STEP, done).await, "waited {STEP:?} for {what}");
}

/// Whether `done` came true within `timeout`.
async fn wait_for(timeout: Duration, mut done: impl FnMut() -> bool) -> bool {
    let deadline = Instant::now() + timeout;
    while !done() {
        if Instant::now() > deadline {
            return false;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    true
}
