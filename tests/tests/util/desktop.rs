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
//! Screenshots go to `<target>/e2e-screenshots/`, and also to `docs/screenshots/` when
//! `UPDATE_SCREENSHOTS=1`.

use std::future::Future;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::{Mutex, MutexGuard};
use std::time::{Duration, Instant};

use fantoccini::elements::{Element, ElementRef};
use fantoccini::{Client, Locator};
use inbox_harness::desktop::{AppDirs, Driver};
use inbox_harness::session::{NotifyCall, Session};
use serde_json::{json, Value};

use crate::util::Inbox;

/// How long one step (an element to appear, an outcome to be written) may take. Generous:
/// two cores, and others may be compiling.
pub const STEP: Duration = Duration::from_secs(20);
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

/// The built binaries next to this test's target directory (`CARGO_TARGET_DIR` respected,
/// since the test binary itself lives there).
pub fn target_profile_dir() -> PathBuf {
    let exe = std::env::current_exe().unwrap();
    exe.parent().and_then(Path::parent).unwrap().to_owned()
}

pub fn app_binary() -> PathBuf {
    let bin = target_profile_dir().join("answer-inbox-desktop");
    assert!(
        bin.exists(),
        "{} is missing: run `cargo build --workspace --bins` first",
        bin.display()
    );
    bin
}

/// Quotes `value` as a CSS string, for attribute selectors.
pub fn css_str(value: &str) -> String {
    serde_json::to_string(value).unwrap()
}

/// Polls `probe` until it gives `Some`, for at most `timeout`; panics naming `what`.
pub async fn eventually<T, F, Fut>(what: &str, timeout: Duration, mut probe: F) -> T
where
    F: FnMut() -> Fut,
    Fut: Future<Output = Option<T>>,
{
    let deadline = Instant::now() + timeout;
    loop {
        if let Some(value) = probe().await {
            return value;
        }
        if Instant::now() > deadline {
            panic!("timed out after {timeout:?} waiting for {what}");
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

pub struct Desktop {
    client: Option<Client>,
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
        let desktop = Desktop::start_bare_with(notification_service).await;
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

    async fn start_bare_with(notification_service: bool) -> Desktop {
        let turn = TURN.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        let started = Instant::now();
        let app = app_binary();
        let inbox = Inbox::new();
        let root = inbox.dir.path();
        let dirs = AppDirs::create(root);
        let session = Session::start(&root.join("session"), notification_service);
        let driver_log = dirs.logs().join("tauri-driver.log");
        let driver = Driver::start(&session, &driver_log, |cmd| {
            dirs.apply(cmd, &inbox.spool(), &inbox.db(), USER)
        });

        let mut desktop = Desktop {
            client: None,
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
                dirs.apply(cmd, &inbox.spool(), &inbox.db(), USER)
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
        desktop.client = Some(client);
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
        if let Some(client) = self.client.take() {
            let _ = tokio::time::timeout(Duration::from_secs(10), client.close()).await;
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

    pub fn client(&self) -> &Client {
        self.client.as_ref().expect("the WebDriver session is open")
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

    fn app_log(&self) -> PathBuf {
        self.dirs.logs().join("app.log")
    }

    /// The last lines of tauri-driver's log and the app's, for a failed test's report.
    fn logs_tail(&self) -> String {
        let tail = |path: &Path| {
            let text = std::fs::read_to_string(path).unwrap_or_default();
            let lines: Vec<&str> = text.lines().collect();
            lines[lines.len().saturating_sub(60)..].join("\n")
        };
        format!(
            "--- tauri-driver ---\n{}\n--- the app ---\n{}",
            tail(&self.driver_log),
            tail(&self.app_log())
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
        let path = self.outcome_path(id);
        eventually(&format!("the outcome {}", path.display()), STEP, || {
            let path = path.clone();
            async move {
                let bytes = std::fs::read(&path).ok()?;
                serde_json::from_slice(&bytes).ok()
            }
        })
        .await
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

    // ---- the window ----

    /// Runs `script` (a function body: use `return`) in the page.
    pub async fn js(&self, script: &str) -> Value {
        self.client()
            .execute(script, Vec::new())
            .await
            .unwrap_or_else(|e| panic!("script failed: {e}\n{script}"))
    }

    /// Runs `script` with arguments (elements serialise as element references).
    pub async fn js_with(&self, script: &str, args: Vec<Value>) -> Value {
        self.client()
            .execute(script, args)
            .await
            .unwrap_or_else(|e| panic!("script failed: {e}\n{script}"))
    }

    /// Waits until `script` returns something truthy; returns it.
    pub async fn wait_js(&self, what: &str, timeout: Duration, script: &str) -> Value {
        eventually(what, timeout, || async {
            match self.client().execute(script, Vec::new()).await {
                Ok(Value::Null) | Ok(Value::Bool(false)) | Err(_) => None,
                Ok(Value::String(s)) if s.is_empty() => None,
                Ok(value) => Some(value),
            }
        })
        .await
    }

    /// Every element matching `css` now, shown or not (no waiting).
    pub async fn all(&self, css: &str) -> Vec<Element> {
        self.client()
            .find_all(Locator::Css(css))
            .await
            .unwrap_or_default()
    }

    pub async fn count(&self, css: &str) -> usize {
        self.all(css).await.len()
    }

    /// The elements matching `css` (inside `scope`, if given) that are shown now.
    ///
    /// "Shown" is decided in the page (`checkVisibility`), not by WebDriver's displayedness
    /// check: WebKitWebDriver's atom calls text in an `overflow: hidden` box (an ellipsised
    /// title, a scrolling tab bar) hidden although it is on screen.
    pub async fn shown(&self, css: &str, scope: Option<&Element>) -> Vec<Element> {
        let script = r#"
            const [css, scope] = arguments;
            const shown = (el) => el.checkVisibility
                ? el.checkVisibility({ visibilityProperty: true, opacityProperty: true })
                : el.getClientRects().length > 0;
            return Array.from((scope || document).querySelectorAll(css)).filter(shown);
        "#;
        let scope = scope.map(|el| json!(el)).unwrap_or(Value::Null);
        let found = match self.client().execute(script, vec![json!(css), scope]).await {
            Ok(Value::Array(found)) => found,
            _ => return Vec::new(),
        };
        found
            .into_iter()
            .filter_map(|reference| {
                let id = reference.as_object()?.values().next()?.as_str()?.to_owned();
                Some(Element::from_element_id(
                    self.client().clone(),
                    ElementRef::from(id),
                ))
            })
            .collect()
    }

    /// Waits for a shown element matching `css`.
    pub async fn find(&self, css: &str) -> Element {
        let what = format!("{css} to be shown");
        eventually(&what, STEP, || async {
            self.shown(css, None).await.into_iter().next()
        })
        .await
    }

    /// Waits until nothing shown matches `css`.
    pub async fn wait_gone(&self, css: &str) {
        let what = format!("{css} to go away");
        eventually(&what, STEP, || async {
            self.shown(css, None).await.is_empty().then_some(())
        })
        .await
    }

    /// Waits for a shown `css` element inside `parent`.
    pub async fn find_in(&self, parent: &Element, css: &str) -> Element {
        let what = format!("{css} inside its parent to be shown");
        eventually(&what, STEP, || async {
            self.shown(css, Some(parent)).await.into_iter().next()
        })
        .await
    }

    /// The text of `element` as shown (`innerText`).
    pub async fn text_of(&self, element: &Element) -> String {
        self.js_with("return arguments[0].innerText", vec![json!(element)])
            .await
            .as_str()
            .unwrap_or_default()
            .to_owned()
    }

    /// Clicks `element`, as a person would. An input hidden behind a styled label is not
    /// interactable over WebDriver; its label is clicked instead.
    pub async fn click_element(&self, element: &Element) {
        match element.click().await {
            Ok(()) => {}
            Err(e) if e.is_element_not_interactable() => {
                let label = json!(element);
                self.js_with(
                    "const el = arguments[0]; (el.closest('label') || el).click(); return true;",
                    vec![label],
                )
                .await;
            }
            Err(e) => panic!("cannot click: {e}"),
        }
    }

    /// Waits for `css` to be shown and enabled, then clicks it.
    pub async fn click(&self, css: &str) {
        let element = self.find(css).await;
        let what = format!("{css} to be enabled");
        eventually(&what, STEP, || async {
            element.is_enabled().await.unwrap_or(false).then_some(())
        })
        .await;
        self.click_element(&element).await;
    }

    /// Waits for `css` to be shown and returns its text.
    pub async fn text(&self, css: &str) -> String {
        let element = self.find(css).await;
        self.text_of(&element).await
    }

    /// Types into the element (after clicking it, so it has focus).
    pub async fn type_into(&self, element: &Element, text: &str) {
        self.click_element(element).await;
        element
            .send_keys(text)
            .await
            .unwrap_or_else(|e| panic!("cannot type {text:?}: {e}"));
    }

    /// Empties a text field with Backspace, as a person would (so the page hears input events).
    pub async fn clear_field(&self, element: &Element) {
        let value = element
            .prop("value")
            .await
            .ok()
            .flatten()
            .unwrap_or_default();
        let backspaces: String = value
            .chars()
            .map(|_| char::from(fantoccini::key::Key::Backspace))
            .collect();
        self.click_element(element).await;
        element
            .send_keys(&(fantoccini::key::Key::End + &backspaces))
            .await
            .unwrap();
    }

    /// Sends keys to whatever has focus (the page itself when nothing does).
    pub async fn press_keys(&self, keys: &str) {
        let target = self.client().active_element().await.unwrap();
        target
            .send_keys(keys)
            .await
            .unwrap_or_else(|e| panic!("cannot press {keys:?}: {e}"));
    }

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

    /// Waits for the Pending row of `id`.
    pub async fn row(&self, id: &str) -> Element {
        self.find(&format!("[data-testid=row][data-id={}]", css_str(id)))
            .await
    }

    /// Opens `id` from the Pending list and waits for its answer view.
    pub async fn open(&self, id: &str) -> Element {
        let row = self.row(id).await;
        self.click_element(&row).await;
        self.find(&format!(
            "[data-testid=answer-view][data-id={}]",
            css_str(id)
        ))
        .await
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

    /// Waits for the submit button to be enabled and clicks it. (A single question has it
    /// under the form, a batch on its review step.)
    pub async fn submit(&self) {
        self.click("[data-testid=submit]").await;
    }

    /// Waits for the result panel and returns its text.
    pub async fn result_text(&self) -> String {
        self.text("[data-testid=result]").await
    }

    /// A screenshot for the docs: [`Desktop::capture`], and also written to
    /// `docs/screenshots/<name>.png` when `UPDATE_SCREENSHOTS=1`.
    pub async fn screenshot(&self, name: &str) -> PathBuf {
        let path = self.capture(name).await;
        if std::env::var_os("UPDATE_SCREENSHOTS").is_some_and(|v| v == "1") {
            let docs = Path::new(env!("CARGO_MANIFEST_DIR")).join("../docs/screenshots");
            std::fs::create_dir_all(&docs).unwrap();
            std::fs::copy(&path, docs.join(format!("{name}.png"))).unwrap();
        }
        path
    }

    /// A WebDriver screenshot of the window, once the picture is steady (so the frame is
    /// current), written to `<target>/e2e-screenshots/<name>.png`; returns that path.
    pub async fn capture(&self, name: &str) -> PathBuf {
        // WebKit paints a little after the DOM changes (later still on a busy machine): take
        // pictures until two in a row are the same.
        let mut last: Option<Vec<u8>> = None;
        let deadline = Instant::now() + Duration::from_secs(5);
        let png = loop {
            tokio::time::sleep(Duration::from_millis(300)).await;
            let png = self
                .client()
                .screenshot()
                .await
                .unwrap_or_else(|e| panic!("screenshot {name}: {e}"));
            if last.as_ref() == Some(&png) || Instant::now() > deadline {
                break png;
            }
            last = Some(png);
        };
        assert!(png.starts_with(b"\x89PNG"), "a screenshot is a PNG");
        let dir = target_profile_dir().join("e2e-screenshots");
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join(format!("{name}.png"));
        std::fs::write(&path, &png).unwrap();
        path
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
            let shot = target_profile_dir()
                .join("e2e-screenshots")
                .join(format!("FAILED-{name}.png"));
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
        self.client.take();
        self.driver.take();
        // The session (dunst, monitor, bus, X server) and the temporary directory go when
        // their fields are dropped, after this.
    }
}
