//! The desktop app, end to end: the real `answer-inbox-desktop` in a private desktop session
//! (Xvfb, session bus, dunst; see [`Session`]), driven over WebDriver by `tauri-driver` and
//! `WebKitWebDriver`, with a spool, database, home and XDG directories of its own.
//!
//! One [`Desktop`] per test. Everything it starts is stopped by PID when it is dropped, also
//! when the test fails: tauri-driver with SIGTERM (SIGKILL would orphan WebKitWebDriver),
//! then whatever of its process tree (WebKitWebDriver, the app, WebKit's helpers) is still
//! there, then dunst, the bus monitor, the bus and the X server. Within one test process
//! desktops take turns (a WebKit each is heavy); nextest runs the desktop tests one at a time
//! anyway (`.config/nextest.toml`).
//!
//! The window is driven through its [`Page`] (waiting, finding, clicking, typing, screenshots;
//! [`super::webdriver`], shared with the browser suite), which a [`Desktop`] dereferences to.
//! Screenshots go to `<target>/e2e-screenshots/`, and also to `docs/screenshots/` when
//! `UPDATE_SCREENSHOTS=1`.

use std::ops::Deref;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::{Mutex, MutexGuard};
use std::time::{Duration, Instant};

use fantoccini::elements::Element;
use inbox_harness::desktop::{AppDirs, Driver};
use inbox_harness::session::{NotifyCall, Session};
use serde_json::{json, Value};

use crate::util::webdriver::{self, Page};
use crate::util::Inbox;

// The test files take these from here (`util::desktop::{css_str, STEP}`), the web suite too.
pub use crate::util::webdriver::{css_str, eventually, STEP};

/// How long the app may take to start and show its first list.
pub const START: Duration = Duration::from_secs(60);
/// How long the first tauri-driver gets to open a session before a second one is started
/// (a WebKit start takes 2 to 15 s on a busy 2-core machine).
const FIRST_TRY: Duration = Duration::from_secs(30);

/// `$USER` in the app's environment. Not what it records: a person's answer is
/// `operator:<the OS account>` whatever `$USER` says, which these tests check.
pub const USER: &str = "e2e";

/// One desktop at a time per test process.
static TURN: Mutex<()> = Mutex::new(());

/// The built desktop app, next to this test's target directory.
pub fn app_binary() -> PathBuf {
    crate::util::sibling_binary("answer-inbox-desktop")
}

/// WebKit paints a little after the DOM changes, later still on a busy machine: how long a
/// screenshot waits for the next frame ([`Page::capture`]).
const REPAINT: Duration = Duration::from_millis(300);

/// WebKit's compositing on, whatever the machine: on one without a GPU the app turns it off
/// (inbox-desk's `rendering`), and then WebKitWebDriver's screenshots never return under
/// Xvfb, so the window tests, which take pictures, run the app as a machine with a GPU does.
/// The decision itself is unit-tested in inbox-desk; the benchmarks measure the app as
/// shipped.
fn with_compositing(cmd: &mut std::process::Command) {
    cmd.env("WEBKIT_DISABLE_COMPOSITING_MODE", "0");
}

pub struct Desktop {
    /// The window, while the WebDriver session is open.
    page: Option<Page>,
    pub session: Session,
    /// The spool, database and temporary root (`inbox.dir`), as the CLI tests have them.
    pub inbox: Inbox,
    dirs: AppDirs,
    driver: Option<Driver>,
    driver_log: PathBuf,
    started: Instant,
    _turn: MutexGuard<'static, ()>,
}

impl Desktop {
    /// Starts the app on an empty spool and waits for its first list (`body[data-ready]`).
    pub async fn start() -> Desktop {
        Desktop::start_with(true).await
    }

    /// [`Desktop::start`], with or without a notification service on the session bus.
    pub async fn start_with(notification_service: bool) -> Desktop {
        Desktop::start_ready(Desktop::start_bare_with(notification_service).await).await
    }

    /// Waits for the started app's first list (`body[data-ready]`).
    async fn start_ready(desktop: Desktop) -> Desktop {
        let deadline = Instant::now() + START;
        let ready = "return !!document.body && document.body.dataset.ready === 'true'";
        while desktop.client().execute(ready, Vec::new()).await.ok() != Some(json!(true)) {
            if Instant::now() > deadline {
                let page = desktop
                    .client()
                    .execute(
                        "return document.documentElement.outerHTML.slice(0, 2000)",
                        Vec::new(),
                    )
                    .await;
                panic!("the window never became ready (body[data-ready=true]); the page: {page:?}");
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        eprintln!("desktop: ready after {:?}", desktop.started.elapsed());
        desktop
    }

    /// Starts the app and opens the WebDriver session, without waiting for the UI.
    pub async fn start_bare() -> Desktop {
        Desktop::start_bare_with(true).await
    }

    /// [`Desktop::start`], after `prepare` has put files under the app's directories (the
    /// temporary root: `home/`, `config/`, ...), as an earlier run would have left them.
    pub async fn start_prepared(prepare: impl FnOnce(&Path)) -> Desktop {
        Desktop::start_ready(Desktop::start_bare_prepared(true, prepare).await).await
    }

    async fn start_bare_with(notification_service: bool) -> Desktop {
        Desktop::start_bare_prepared(notification_service, |_| {}).await
    }

    async fn start_bare_prepared(
        notification_service: bool,
        prepare: impl FnOnce(&Path),
    ) -> Desktop {
        let turn = TURN.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        let started = Instant::now();
        let app = app_binary();
        let inbox = Inbox::new();
        let root = inbox.dir.path();
        let dirs = AppDirs::create(root);
        prepare(root);
        let session = Session::start(&root.join("session"), notification_service);
        let driver_log = dirs.logs().join("tauri-driver.log");
        let driver = Driver::start(&session, &driver_log, |cmd| {
            dirs.apply(cmd, &inbox.spool(), &inbox.db(), USER);
            with_compositing(cmd);
        });

        let mut desktop = Desktop {
            page: None,
            session,
            inbox,
            dirs,
            driver: Some(driver),
            driver_log,
            started,
            _turn: turn,
        };

        // WebKitWebDriver drops the app's output; a wrapper keeps it in logs/app.log.
        let wrapper = desktop.root().join("answer-inbox-desktop.sh");
        std::fs::write(
            &wrapper,
            format!(
                "#!/bin/sh\nexec '{}' \"$@\" >>'{log}' 2>&1\n",
                app.display(),
                log = desktop.app_log().display()
            ),
        )
        .unwrap();
        inbox_harness::set_mode(&wrapper, 0o755);
        let mut connected = desktop
            .driver
            .as_mut()
            .unwrap()
            .connect(&wrapper, FIRST_TRY)
            .await;
        if let Err(error) = &connected {
            // Now and then WebKitWebDriver closes every connection from its start ("connection
            // closed before message completed") however long one retries: a flake of the
            // machine's WebDriver, not of the app. A fresh tauri-driver gets a fresh one.
            eprintln!(
                "desktop: no WebDriver session within {FIRST_TRY:?} ({error}); starting \
                 tauri-driver again\n{}",
                desktop.logs_tail()
            );
            drop(desktop.driver.take());
            let (dirs, inbox) = (&desktop.dirs, &desktop.inbox);
            let driver = Driver::start(&desktop.session, &desktop.driver_log, |cmd| {
                dirs.apply(cmd, &inbox.spool(), &inbox.db(), USER);
                with_compositing(cmd);
            });
            desktop.driver = Some(driver);
            connected = desktop
                .driver
                .as_mut()
                .unwrap()
                .connect(&wrapper, START)
                .await;
        }
        let client = connected.unwrap_or_else(|error| panic!("{error}\n{}", desktop.logs_tail()));
        desktop.page = Some(Page::new(client, REPAINT));
        eprintln!(
            "desktop: session open after {:?} (display {}, {})",
            desktop.started.elapsed(),
            desktop.session.display,
            desktop.inbox.dir.path().display()
        );
        desktop
    }

    /// Ends the WebDriver session (which ends the app), then stops everything else.
    pub async fn finish(mut self) {
        if let Some(driver) = self.driver.as_mut() {
            driver.remember_tree();
        }
        if let Some(page) = self.page.take() {
            page.close().await;
        }
        eprintln!("desktop: test took {:?}", self.started.elapsed());
        // Drop does the rest.
    }

    /// The environment the app runs in: this test's display, bus, home, XDG directories,
    /// spool and database. tauri-driver passes it on to the app it starts.
    pub fn apply_app_env(&self, cmd: &mut Command) {
        self.session.apply(cmd);
        self.dirs.apply(cmd, &self.spool(), &self.db(), USER);
    }

    pub fn root(&self) -> &Path {
        self.inbox.dir.path()
    }

    pub fn spool(&self) -> PathBuf {
        self.inbox.spool()
    }

    pub fn db(&self) -> PathBuf {
        self.inbox.db()
    }

    pub fn settings_path(&self) -> PathBuf {
        self.dirs.settings_path()
    }

    pub fn app_log(&self) -> PathBuf {
        self.dirs.logs().join("app.log")
    }

    /// The last lines of tauri-driver's log and the app's, for a failed test's report.
    pub fn logs_tail(&self) -> String {
        format!(
            "--- tauri-driver ---\n{}\n--- the app ---\n{}",
            webdriver::log_tail(&self.driver_log, 60),
            webdriver::log_tail(&self.app_log(), 60)
        )
    }

    // ---- the spool ----

    /// Places a request file atomically (written in `tmp/`, then renamed into `questions/`).
    pub fn place_request(&self, id: &str, json: &str) {
        self.inbox.place(id, json);
    }

    /// Places any file in `questions/`, atomically.
    pub fn place_file(&self, name: &str, bytes: &[u8]) {
        self.inbox.place_file(name, bytes);
    }

    pub fn outcome_path(&self, id: &str) -> PathBuf {
        self.inbox.outcome_path(id)
    }

    /// Waits for `answers/<id>.json` and returns it, parsed.
    pub async fn wait_for_outcome(&self, id: &str) -> Value {
        webdriver::wait_for_outcome(&self.inbox, id).await
    }

    /// Runs the `answer-inbox` CLI on this spool with `db` as its database: another
    /// instance, when `db` is not [`Desktop::db`].
    pub fn cli(&self, db: &Path, args: &[&str]) -> Output {
        let mut cmd = self.inbox.cmd(&[]);
        cmd.arg("--db").arg(db).args(args);
        cmd.output().unwrap()
    }

    // ---- notifications ----

    pub fn notify_calls(&self) -> Vec<NotifyCall> {
        self.session.notify_calls()
    }

    /// Waits for the notification whose summary is `summary`.
    pub async fn wait_notify(&self, summary: &str) -> NotifyCall {
        let what = format!("a notification titled {summary:?}");
        eventually(&what, STEP, || async {
            self.notify_calls()
                .into_iter()
                .find(|c| c.summary == summary)
        })
        .await
    }

    /// Presses the button `key` of the notification titled `summary` in dunst.
    pub fn press_notification_action(&self, summary: &str, key: &str) {
        self.session.press_action(summary, key);
    }

    // ---- the window (the rest: [`Page`]) ----

    /// Clicks the navigation button whose text starts with `label` (Pending, History...).
    pub async fn nav(&self, label: &str) {
        let what = format!("the {label} navigation button");
        let button = eventually(&what, STEP, || async {
            for element in self.shown("nav button, nav a", None).await {
                if self.text_of(&element).await.trim().starts_with(label) {
                    return Some(element);
                }
            }
            None
        })
        .await;
        self.click_element(&button).await;
    }

    /// The ids of the Pending rows, top to bottom.
    pub async fn row_ids(&self) -> Vec<String> {
        let ids = self
            .js("return Array.from(document.querySelectorAll('[data-testid=row]')).map(r => r.dataset.id)")
            .await;
        serde_json::from_value(ids).unwrap_or_default()
    }

    /// The panel of question `qid` (the `index`th of its batch), switching tabs if needed.
    pub async fn question(&self, index: usize, qid: &str) -> Element {
        let css = format!("[data-testid=question][data-qid={}]", css_str(qid));
        if let Some(panel) = self.shown(&css, None).await.into_iter().next() {
            return panel;
        }
        let by_qid = format!("[data-testid=tab][data-qid={}]", css_str(qid));
        let tab = match self.shown(&by_qid, None).await.into_iter().next() {
            Some(tab) => tab,
            None => {
                let tabs = self.shown("[data-testid=tab]", None).await;
                assert!(
                    tabs.len() > index,
                    "question {qid} is not shown and there is no tab {index} for it ({} tabs)",
                    tabs.len()
                );
                tabs[index].clone()
            }
        };
        self.click_element(&tab).await;
        self.find(&css).await
    }

    /// Waits for the result panel and returns its text.
    pub async fn result_text(&self) -> String {
        self.text("[data-testid=result]").await
    }
}

/// The window's [`Page`]: a test calls `d.find(..)`, `d.click(..)`, `d.screenshot(..)` on the
/// desktop itself.
impl Deref for Desktop {
    type Target = Page;

    fn deref(&self) -> &Page {
        self.page.as_ref().expect("the WebDriver session is open")
    }
}

impl Drop for Desktop {
    fn drop(&mut self) {
        if let Some(driver) = self.driver.as_mut() {
            driver.remember_tree();
        }
        if std::thread::panicking() {
            // What the screen showed when it failed (ImageMagick's `import`, if installed).
            let name = std::thread::current()
                .name()
                .unwrap_or("desktop")
                .replace("::", "-");
            let shot = webdriver::screenshots_dir().join(format!("FAILED-{name}.png"));
            let _ = std::fs::create_dir_all(shot.parent().unwrap());
            let saved = self
                .session
                .command("import")
                .args(["-window", "root"])
                .arg(&shot)
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .status()
                .is_ok_and(|status| status.success());
            eprintln!(
                "desktop: the test failed after {:?}{}\n{}",
                self.started.elapsed(),
                if saved {
                    format!("; the screen: {}", shot.display())
                } else {
                    String::new()
                },
                self.logs_tail()
            );
        }
        // Without the session task's runtime the client cannot say goodbye; tauri-driver
        // ends the session when it stops. Dropping the driver stops it and whatever of its
        // tree outlived it (the app if WebKitWebDriver did not end it, WebKit helpers).
        self.page.take();
        self.driver.take();
        // The session (dunst, monitor, bus, X server) and the temporary directory go when
        // their fields are dropped, after this.
    }
}
