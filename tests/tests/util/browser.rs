//! The served page end to end, on a phone: the real `answer-inbox serve` on a spool and
//! database of its own ([`Server`]), and headless Chromium with a phone's screen (390 × 844 CSS
//! pixels, 3 device pixels each, a phone's user agent) driven over WebDriver by chromedriver
//! ([`Chromedriver`]), with a profile of its own.
//!
//! One [`Web`] per test: one server, one chromedriver, one browser. Everything it starts is
//! stopped by PID when it is dropped, also when the test fails: chromedriver, then whatever of
//! its process tree (Chromium and its helpers) outlived it, then the server.
//!
//! Needs the built `answer-inbox` (`cargo build --workspace --bins`), the built UI (scripts/ui)
//! and Debian's `chromium` and `chromium-driver` (scripts/setup installs them). Screenshots go
//! to `<target>/e2e-screenshots/`, and also to `docs/screenshots/` when `UPDATE_SCREENSHOTS=1`,
//! as the desktop suite's do.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::{Duration, Instant};

use fantoccini::elements::{Element, ElementRef};
use fantoccini::{Client, ClientBuilder, Locator};
use inbox_harness::desktop::free_port;
use inbox_harness::process::Tree;
use serde_json::{json, Value};

use crate::util::desktop::{css_str, eventually, target_profile_dir, STEP};
use crate::util::{Inbox, Running};

pub const CHROMIUM: &str = "/usr/bin/chromium";
pub const CHROMEDRIVER: &str = "/usr/bin/chromedriver";

/// The phone the browser pretends to be: its viewport in CSS pixels.
pub const PHONE_WIDTH: u32 = 390;
pub const PHONE_HEIGHT: u32 = 844;
/// A phone's Chrome, so that the page sees what a phone's browser shows it (touch, no hover).
const PHONE_USER_AGENT: &str = "Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 \
     (KHTML, like Gecko) Chrome/124.0.0.0 Mobile Safari/537.36";

/// How long chromedriver and Chromium may take to open a session (a cold start on a busy
/// 2-core machine takes a few seconds).
const START: Duration = Duration::from_secs(60);

/// `answer-inbox serve` on a test's inbox, on a free loopback port, without desktop
/// notifications. Stopped (SIGTERM, then SIGKILL) when dropped.
pub struct Server {
    process: Running,
    /// `http://127.0.0.1:PORT`, the page's origin.
    pub base: String,
    /// The pairing link it printed: `<base>/#pair=<code>`.
    pub pair_link: String,
    log: PathBuf,
}

impl Server {
    pub fn start(inbox: &Inbox) -> Server {
        Server::spawn(inbox, "127.0.0.1:0")
    }

    fn spawn(inbox: &Inbox, listen: &str) -> Server {
        let log = inbox.dir.path().join("serve.log");
        let cmd = inbox.cmd(&["serve", "--listen", listen, "--no-notify"]);
        // Appended to: a restarted server's log follows the first one's.
        let stderr = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&log)
            .unwrap();
        let mut process = Running::spawn_with_stderr(cmd, stderr);
        let line = process.wait_line("open: ");
        let pair_link = line.trim_start_matches("open: ").trim().to_owned();
        let base = pair_link
            .split_once("/#")
            .unwrap_or_else(|| panic!("the printed link has no fragment: {line}"))
            .0
            .to_owned();
        assert!(
            base.starts_with("http://127.0.0.1:"),
            "plain HTTP on loopback: {line}"
        );
        Server {
            process,
            base,
            pair_link,
            log,
        }
    }

    /// Stops the server as Ctrl-C would (SIGTERM) and waits for it.
    pub fn stop(&mut self) {
        self.process.stop();
    }

    /// Starts the server again on the same address (a page open on it keeps its origin), with
    /// the same inbox and the devices paired before.
    pub fn restart(&mut self, inbox: &Inbox) {
        self.stop();
        let listen = self.base.trim_start_matches("http://").to_owned();
        *self = Server::spawn(inbox, &listen);
    }

    pub fn pid(&self) -> u32 {
        self.process.child.id()
    }

    /// Stops the server's process (SIGSTOP) until the returned guard is dropped (SIGCONT):
    /// what arrives meanwhile (a page's request, a new outcome file) is handled only then.
    pub fn pause(&self) -> Paused {
        signal(self.pid(), "STOP");
        Paused { pid: self.pid() }
    }

    /// The last lines the server wrote to standard error, for a failed test's report.
    pub fn log_tail(&self) -> String {
        tail(&self.log, 40)
    }
}

/// A paused server (see [`Server::pause`]); dropping this lets it run on.
pub struct Paused {
    pid: u32,
}

impl Drop for Paused {
    fn drop(&mut self) {
        signal(self.pid, "CONT");
    }
}

fn signal(pid: u32, name: &str) {
    let status = Command::new("kill")
        .args([format!("-{name}"), pid.to_string()])
        .status()
        .unwrap();
    assert!(status.success(), "kill -{name} {pid}: {status}");
}

/// The last `lines` lines of a log file (empty when it cannot be read).
fn tail(path: &Path, lines: usize) -> String {
    let text = std::fs::read_to_string(path).unwrap_or_default();
    let all: Vec<&str> = text.lines().collect();
    all[all.len().saturating_sub(lines)..].join("\n")
}

/// chromedriver on a free port, logging to a file. Dropping it stops chromedriver, then
/// whatever of its process tree (Chromium, its zygotes and renderers) is still running.
pub struct Chromedriver {
    process: Running,
    port: u16,
    tree: Tree,
    log: PathBuf,
}

impl Chromedriver {
    pub fn start(log: &Path) -> Chromedriver {
        assert!(
            Path::new(CHROMEDRIVER).exists() && Path::new(CHROMIUM).exists(),
            "{CHROMEDRIVER} or {CHROMIUM} is missing: install Debian's chromium-driver and \
             chromium (scripts/setup)"
        );
        let port = free_port();
        let mut cmd = Command::new(CHROMEDRIVER);
        cmd.arg(format!("--port={port}"))
            .arg(format!("--log-path={}", log.display()));
        Chromedriver {
            process: Running::spawn_quiet(cmd),
            port,
            tree: Tree::default(),
            log: log.to_owned(),
        }
    }

    pub fn url(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    /// Opens a session with a phone-sized headless Chromium whose profile is `profile`,
    /// retrying while chromedriver starts; the error says why the last attempt failed.
    pub async fn connect(&mut self, profile: &Path) -> Result<Client, String> {
        let mut capabilities = serde_json::Map::new();
        capabilities.insert("browserName".into(), json!("chrome"));
        capabilities.insert(
            "goog:chromeOptions".into(),
            json!({
                "binary": CHROMIUM,
                "args": [
                    "--headless=new",
                    "--no-sandbox",
                    "--disable-gpu",
                    "--disable-dev-shm-usage",
                    "--no-first-run",
                    "--disable-background-networking",
                    "--disable-component-update",
                    "--disable-sync",
                    format!("--user-data-dir={}", profile.display()),
                    format!("--window-size={PHONE_WIDTH},{PHONE_HEIGHT}"),
                ],
                "mobileEmulation": {
                    "deviceMetrics": {"width": PHONE_WIDTH, "height": PHONE_HEIGHT, "pixelRatio": 3},
                    "userAgent": PHONE_USER_AGENT,
                },
            }),
        );
        let deadline = Instant::now() + START;
        loop {
            let attempt =
                ClientBuilder::new(hyper_util::client::legacy::connect::HttpConnector::new())
                    .capabilities(capabilities.clone())
                    .connect(&self.url())
                    .await;
            match attempt {
                Ok(client) => {
                    self.tree.remember(self.process.child.id());
                    return Ok(client);
                }
                Err(error) => {
                    if let Ok(Some(status)) = self.process.child.try_wait() {
                        return Err(format!("chromedriver exited ({status}): {error}"));
                    }
                    if Instant::now() > deadline {
                        return Err(format!("no WebDriver session within {START:?}: {error}"));
                    }
                    tokio::time::sleep(Duration::from_millis(100)).await;
                }
            }
        }
    }

    pub fn log_tail(&self) -> String {
        tail(&self.log, 30)
    }
}

impl Drop for Chromedriver {
    fn drop(&mut self) {
        // Chromium's processes are noted while chromedriver is still their ancestor.
        self.tree.remember(self.process.child.id());
        self.process.stop();
        self.tree.terminate(Duration::from_secs(5));
    }
}

/// A test's inbox, served, and a phone's browser on it.
pub struct Web {
    client: Option<Client>,
    driver: Option<Chromedriver>,
    pub server: Server,
    /// The spool, database and temporary root, as the CLI tests have them.
    pub inbox: Inbox,
    started: Instant,
}

impl Web {
    /// Serves an empty inbox and opens the browser (on no page yet).
    pub async fn start() -> Web {
        let started = Instant::now();
        let inbox = Inbox::new();
        let server = Server::start(&inbox);
        let root = inbox.dir.path().to_owned();
        let profile = root.join("chromium-profile");
        std::fs::create_dir_all(&profile).unwrap();
        let mut driver = Chromedriver::start(&root.join("chromedriver.log"));
        let client = driver.connect(&profile).await;
        let mut web = Web {
            client: None,
            driver: Some(driver),
            server,
            inbox,
            started,
        };
        match client {
            Ok(client) => web.client = Some(client),
            Err(error) => panic!("{error}\n{}", web.logs_tail()),
        }
        eprintln!(
            "web: browser open after {:?} ({}, {})",
            web.started.elapsed(),
            web.server.base,
            web.inbox.dir.path().display()
        );
        web
    }

    /// Serves an empty inbox and pairs the browser as `name` through the printed link; the
    /// (empty) inbox is shown.
    pub async fn paired(name: &str) -> Web {
        let web = Web::start().await;
        let link = web.server.pair_link.clone();
        web.pair(&link, name).await;
        web
    }

    /// Opens a pairing link and pairs under `name`, as a person would; waits for the inbox.
    pub async fn pair(&self, link: &str, name: &str) {
        self.goto(link).await;
        self.find("[data-testid=pair-screen]").await;
        let field = self.find("#pair-name").await;
        self.clear_field(&field).await;
        self.type_into(&field, name).await;
        self.click("#pair-submit").await;
        self.wait_ready().await;
    }

    /// Waits until the inbox has shown its first list (`body[data-ready=true]`).
    pub async fn wait_ready(&self) {
        self.wait_js(
            "the inbox's first list (body[data-ready=true])",
            STEP,
            "return document.body.dataset.ready === 'true'",
        )
        .await;
    }

    /// Ends the WebDriver session (which ends Chromium), then stops everything else.
    pub async fn finish(mut self) {
        if let Some(client) = self.client.take() {
            let _ = tokio::time::timeout(Duration::from_secs(10), client.close()).await;
        }
        eprintln!("web: test took {:?}", self.started.elapsed());
        // Drop does the rest.
    }

    pub fn client(&self) -> &Client {
        self.client.as_ref().expect("the WebDriver session is open")
    }

    pub fn logs_tail(&self) -> String {
        let driver = self
            .driver
            .as_ref()
            .map(Chromedriver::log_tail)
            .unwrap_or_default();
        format!(
            "--- answer-inbox serve ---\n{}\n--- chromedriver ---\n{driver}",
            self.server.log_tail()
        )
    }

    // ---- the spool and the command line ----

    /// Places a request file atomically (written in `tmp/`, then renamed into `questions/`).
    pub fn place_request(&self, id: &str, json: &str) {
        self.inbox.place(id, json);
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

    /// Runs the `answer-inbox` CLI on this inbox (the server's spool and database).
    pub fn cli(&self, args: &[&str]) -> Output {
        self.inbox.run(args)
    }

    // ---- the page ----

    pub async fn goto(&self, url: &str) {
        self.client()
            .goto(url)
            .await
            .unwrap_or_else(|e| panic!("cannot open {url}: {e}"));
    }

    /// Runs `script` (a function body: use `return`) in the page.
    pub async fn js(&self, script: &str) -> Value {
        self.js_with(script, Vec::new()).await
    }

    /// Runs `script` with arguments (elements serialise as element references).
    pub async fn js_with(&self, script: &str, args: Vec<Value>) -> Value {
        self.client()
            .execute(script, args)
            .await
            .unwrap_or_else(|e| panic!("script failed: {e}\n{script}"))
    }

    /// Runs `script`, which ends by calling its last argument with the result (for promises).
    pub async fn js_async(&self, script: &str) -> Value {
        self.client()
            .execute_async(script, Vec::new())
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

    /// The elements matching `css` (inside `scope`, if given) that are shown now, decided in
    /// the page (`checkVisibility`), as the desktop suite does.
    pub async fn shown(&self, css: &str, scope: Option<&Element>) -> Vec<Element> {
        let script = r#"
            const [css, scope] = arguments;
            const shown = (el) => el.checkVisibility({ visibilityProperty: true, opacityProperty: true });
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
        self.find_within(css, STEP).await
    }

    /// Waits up to `timeout` for a shown element matching `css`.
    pub async fn find_within(&self, css: &str, timeout: Duration) -> Element {
        let what = format!("{css} to be shown");
        eventually(&what, timeout, || async {
            self.shown(css, None).await.into_iter().next()
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

    /// Waits until nothing shown matches `css`.
    pub async fn wait_gone(&self, css: &str) {
        self.wait_gone_within(css, STEP).await;
    }

    /// Waits up to `timeout` until nothing shown matches `css`.
    pub async fn wait_gone_within(&self, css: &str, timeout: Duration) {
        let what = format!("{css} to go away");
        eventually(&what, timeout, || async {
            self.shown(css, None).await.is_empty().then_some(())
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

    /// Waits for `css` to be shown and returns its text.
    pub async fn text(&self, css: &str) -> String {
        let element = self.find(css).await;
        self.text_of(&element).await
    }

    /// Clicks `element` (a tap, to the page). An input hidden behind a styled label is not
    /// interactable over WebDriver; its label is clicked instead.
    pub async fn click_element(&self, element: &Element) {
        match element.click().await {
            Ok(()) => {}
            Err(e) if e.is_element_not_interactable() => {
                self.js_with(
                    "const el = arguments[0]; (el.closest('label') || el).click(); return true;",
                    vec![json!(element)],
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

    /// The panel of question `qid`, switching to its tab if another question is shown.
    pub async fn question(&self, qid: &str) -> Element {
        let css = format!("[data-testid=question][data-qid={}]", css_str(qid));
        if let Some(panel) = self.shown(&css, None).await.into_iter().next() {
            return panel;
        }
        self.click(&format!("[data-testid=tab][data-qid={}]", css_str(qid)))
            .await;
        self.find(&css).await
    }

    /// Ticks the checkbox (or picks the radio button) of `value` in a question's panel.
    pub async fn pick(&self, panel: &Element, value: &str) {
        let css = format!("input[value={}]", css_str(value));
        let input = panel
            .find(Locator::Css(&css))
            .await
            .unwrap_or_else(|e| panic!("{css}: {e}"));
        self.click_element(&input).await;
    }

    /// Scrolls the page so that the element matching `css` is at the top of the screen.
    pub async fn scroll_to(&self, css: &str) {
        let element = self.find(css).await;
        self.js_with(
            "arguments[0].scrollIntoView({block: 'start'}); return true",
            vec![json!(element)],
        )
        .await;
    }

    /// Waits for the submit button to be enabled and clicks it.
    pub async fn submit(&self) {
        self.click("[data-testid=submit]").await;
    }

    /// Asserts that the page fits the phone's width: the page does not scroll sideways and no
    /// element shown reaches past the right edge (inside a box that scrolls sideways, where
    /// the page itself would not grow, it would still be cut off).
    pub async fn assert_fits(&self, screen: &str) {
        let found = self
            .js(
                r#"const width = document.documentElement.clientWidth;
                   const past = Array.from(document.body.querySelectorAll('*'))
                     .filter((el) => el.checkVisibility() && !el.closest('.visually-hidden'))
                     .filter((el) => { const r = el.getBoundingClientRect();
                                       return r.width > 0 && r.right > width + 1; })
                     .slice(0, 10)
                     .map((el) => `${el.tagName.toLowerCase()}.${el.className} `
                                  + `[${el.dataset.testid || ''}] right=${Math.round(el.getBoundingClientRect().right)}`);
                   return {width, inner: window.innerWidth,
                           scroll: document.documentElement.scrollWidth, past};"#,
            )
            .await;
        assert_eq!(
            found["width"],
            json!(PHONE_WIDTH),
            "the phone's viewport on {screen}: {found:#}"
        );
        assert!(
            found["scroll"].as_u64() <= found["width"].as_u64(),
            "{screen} scrolls sideways on a phone: {found:#}"
        );
        assert_eq!(
            found["past"],
            json!([]),
            "{screen}: elements past the right edge of the phone's screen: {found:#}"
        );
    }

    /// A screenshot for the docs: [`Web::capture`], and also written to
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

    /// A WebDriver screenshot of the viewport once the picture is steady, written to
    /// `<target>/e2e-screenshots/<name>.png`; returns that path.
    pub async fn capture(&self, name: &str) -> PathBuf {
        // Chromium paints a little after the DOM changes: take pictures until two in a row
        // are the same.
        let mut last: Option<Vec<u8>> = None;
        let deadline = Instant::now() + Duration::from_secs(5);
        let png = loop {
            tokio::time::sleep(Duration::from_millis(200)).await;
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

impl Drop for Web {
    fn drop(&mut self) {
        if std::thread::panicking() {
            eprintln!(
                "web: the test failed after {:?}\n{}",
                self.started.elapsed(),
                self.logs_tail()
            );
        }
        // Without the session task's runtime the client cannot say goodbye; stopping
        // chromedriver and what is left of its tree ends the browser. Then the server, and
        // the temporary directory last.
        self.client.take();
        self.driver.take();
    }
}
