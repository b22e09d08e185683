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
//! and Debian's `chromium` and `chromium-driver` (scripts/setup installs them). The page is
//! driven through a [`Page`] ([`super::webdriver`], shared with the desktop suite), which a
//! [`Web`] dereferences to. Screenshots go to `<target>/e2e-screenshots/`, and also to
//! `docs/screenshots/` when `UPDATE_SCREENSHOTS=1`, as the desktop suite's do.

use std::ops::Deref;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::{Duration, Instant};

use fantoccini::elements::Element;
use fantoccini::wd::Capabilities;
use fantoccini::{Client, Locator};
use inbox_harness::desktop::{free_port, open_session};
use inbox_harness::process::Tree;
use serde_json::{json, Value};

use crate::util::webdriver::{self, css_str, Page, STEP};
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

/// Chromium paints a little after the DOM changes: how long a screenshot waits for the next
/// frame ([`Page::capture`]).
const REPAINT: Duration = Duration::from_millis(200);

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
        webdriver::log_tail(&self.log, 40)
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
        let mut capabilities = Capabilities::new();
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
        let url = self.url();
        let process = &mut self.process;
        let exited = || match process.child.try_wait() {
            Ok(Some(status)) => Some(format!("chromedriver exited ({status})")),
            _ => None,
        };
        let every = Duration::from_millis(100);
        let client = open_session(&url, &capabilities, START, every, exited).await?;
        self.tree.remember(self.process.child.id());
        Ok(client)
    }

    pub fn log_tail(&self) -> String {
        webdriver::log_tail(&self.log, 30)
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
    /// The browser's page, while the WebDriver session is open.
    page: Option<Page>,
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
            page: None,
            driver: Some(driver),
            server,
            inbox,
            started,
        };
        match client {
            Ok(client) => web.page = Some(Page::new(client, REPAINT)),
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
        if let Some(page) = self.page.take() {
            page.close().await;
        }
        eprintln!("web: test took {:?}", self.started.elapsed());
        // Drop does the rest.
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
        webdriver::wait_for_outcome(&self.inbox, id).await
    }

    /// Runs the `answer-inbox` CLI on this inbox (the server's spool and database).
    pub fn cli(&self, args: &[&str]) -> Output {
        self.inbox.run(args)
    }

    // ---- the page (the rest: [`Page`]) ----

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
}

/// The browser's [`Page`]: a test calls `web.find(..)`, `web.click(..)`, `web.screenshot(..)`
/// on the harness itself.
impl Deref for Web {
    type Target = Page;

    fn deref(&self) -> &Page {
        self.page.as_ref().expect("the WebDriver session is open")
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
        self.page.take();
        self.driver.take();
    }
}
