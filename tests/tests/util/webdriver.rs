//! What the two WebDriver suites share: the desktop window over tauri-driver
//! ([`super::desktop`]) and the served page in a phone's browser over chromedriver
//! ([`super::browser`]) show the same UI, and are driven alike through a [`Page`]: waiting for
//! elements shown, clicking and typing as a person would, reading text, taking screenshots for
//! the docs.
//!
//! Each harness owns its [`Page`] and dereferences to it, so that a test calls `d.find(..)` or
//! `web.click(..)` on the harness itself with no trait to import.
//!
//! Screenshots go to `<target>/e2e-screenshots/`, and also to `docs/screenshots/` when
//! `UPDATE_SCREENSHOTS=1`.

use std::future::Future;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use fantoccini::elements::{Element, ElementRef};
use fantoccini::{Client, Locator};
use serde_json::{json, Value};

use crate::util::Inbox;

/// How long one step (an element to appear, an outcome to be written) may take. Generous:
/// two cores, and others may be compiling.
pub const STEP: Duration = Duration::from_secs(20);

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

/// Waits for the outcome `answers/<id>.json` of `inbox` and returns it, parsed.
pub async fn wait_for_outcome(inbox: &Inbox, id: &str) -> Value {
    let path = inbox.outcome_path(id);
    eventually(&format!("the outcome {}", path.display()), STEP, || {
        let path = path.clone();
        async move {
            let bytes = std::fs::read(&path).ok()?;
            serde_json::from_slice(&bytes).ok()
        }
    })
    .await
}

/// `<target>/e2e-screenshots/`, where the screenshots of these tests go (the test binary
/// lives in `<target>/debug/deps/`, `CARGO_TARGET_DIR` respected).
pub fn screenshots_dir() -> PathBuf {
    let exe = std::env::current_exe().unwrap();
    let profile = exe.parent().and_then(Path::parent).unwrap();
    profile.join("e2e-screenshots")
}

/// The last `lines` lines of a log file (empty when it cannot be read), for a failed test's
/// report.
pub fn log_tail(path: &Path, lines: usize) -> String {
    let text = std::fs::read_to_string(path).unwrap_or_default();
    let all: Vec<&str> = text.lines().collect();
    all[all.len().saturating_sub(lines)..].join("\n")
}

/// An open WebDriver session on the inbox's UI.
pub struct Page {
    client: Client,
    /// How long the browser is given to paint between two pictures of [`Page::capture`].
    repaint: Duration,
}

impl Page {
    /// The page of `client`'s session, whose browser paints a change within about `repaint`.
    pub fn new(client: Client, repaint: Duration) -> Page {
        Page { client, repaint }
    }

    pub fn client(&self) -> &Client {
        &self.client
    }

    /// Ends the WebDriver session (which ends the browser), giving up after 10 s.
    pub async fn close(self) {
        let _ = tokio::time::timeout(Duration::from_secs(10), self.client.close()).await;
    }

    pub async fn goto(&self, url: &str) {
        self.client
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
        self.client
            .execute(script, args)
            .await
            .unwrap_or_else(|e| panic!("script failed: {e}\n{script}"))
    }

    /// Runs `script`, which ends by calling its last argument with the result (for promises).
    pub async fn js_async(&self, script: &str) -> Value {
        self.client
            .execute_async(script, Vec::new())
            .await
            .unwrap_or_else(|e| panic!("script failed: {e}\n{script}"))
    }

    /// Waits until `script` returns something truthy; returns it.
    pub async fn wait_js(&self, what: &str, timeout: Duration, script: &str) -> Value {
        eventually(what, timeout, || async {
            match self.client.execute(script, Vec::new()).await {
                Ok(Value::Null) | Ok(Value::Bool(false)) | Err(_) => None,
                Ok(Value::String(s)) if s.is_empty() => None,
                Ok(value) => Some(value),
            }
        })
        .await
    }

    /// Every element matching `css` now, shown or not (no waiting).
    pub async fn all(&self, css: &str) -> Vec<Element> {
        self.client
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
        let found = match self.client.execute(script, vec![json!(css), scope]).await {
            Ok(Value::Array(found)) => found,
            _ => return Vec::new(),
        };
        found
            .into_iter()
            .filter_map(|reference| {
                let id = reference.as_object()?.values().next()?.as_str()?.to_owned();
                Some(Element::from_element_id(
                    self.client.clone(),
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

    /// Clicks `element`, as a person would (a tap, in the phone's browser). An input hidden
    /// behind a styled label is not interactable over WebDriver; its label is clicked instead.
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

    /// Sends keys to whatever has focus (the page itself when nothing does).
    pub async fn press_keys(&self, keys: &str) {
        let target = self.client.active_element().await.unwrap();
        target
            .send_keys(keys)
            .await
            .unwrap_or_else(|e| panic!("cannot press {keys:?}: {e}"));
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

    // ---- the inbox's UI, the same in the window and in the browser ----

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

    /// Waits for the submit button to be enabled and clicks it. (A single question has it
    /// under the form, a batch on its review step.)
    pub async fn submit(&self) {
        self.click("[data-testid=submit]").await;
    }

    // ---- screenshots ----

    /// A screenshot for the docs: [`Page::capture`], and also written to
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

    /// A WebDriver screenshot of the window (the browser's viewport), once the picture is
    /// steady (so the frame is current), written to `<target>/e2e-screenshots/<name>.png`;
    /// returns that path.
    pub async fn capture(&self, name: &str) -> PathBuf {
        // The browser paints a little after the DOM changes (later still on a busy machine):
        // take pictures until two in a row are the same.
        let mut last: Option<Vec<u8>> = None;
        let deadline = Instant::now() + Duration::from_secs(5);
        let png = loop {
            tokio::time::sleep(self.repaint).await;
            let png = self
                .client
                .screenshot()
                .await
                .unwrap_or_else(|e| panic!("screenshot {name}: {e}"));
            if last.as_ref() == Some(&png) || Instant::now() > deadline {
                break png;
            }
            last = Some(png);
        };
        assert!(png.starts_with(b"\x89PNG"), "a screenshot is a PNG");
        let dir = screenshots_dir();
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join(format!("{name}.png"));
        std::fs::write(&path, &png).unwrap();
        path
    }
}
