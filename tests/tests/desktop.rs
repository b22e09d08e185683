//! The desktop app end to end: request files go into the spool, the real window (WebKit,
//! driven over WebDriver) and real notifications (dunst, on a private bus) answer them, and
//! outcome files come out. See `util/desktop.rs` for the harness.
//!
//! Needs the built binaries (`cargo build --workspace --bins`), tauri-driver
//! (`cargo install tauri-driver --locked`), WebKitWebDriver (Debian: webkit2gtk-driver), Xvfb,
//! dbus-daemon, dunst and dunstctl. `UPDATE_SCREENSHOTS=1` refreshes docs/screenshots/.

use std::time::Duration;

use serde_json::{json, Value};

use crate::util::desktop::{self, css_str, Desktop, STEP};
use crate::util::requests::{MIGRATE, RELEASE, STORAGE};
use crate::util::waiting_hook::{hook_request_id, WaitingHook};

/// A single yes/no question in the structured dialect: answered as `q1`.
const DEPLOY: &str = r#"{"inbox": 1, "title": "Deploy SPEC-042",
  "source": {"app": "planu", "run": "run-7f3a", "tool": "deploy_spec"},
  "questions": [{"label": "Deploy", "type": "yes_no",
                 "question": "Deploy SPEC-042 to production now?"}]}"#;

/// One confirm (interactive dialect) with the id `q1`: gets Yes/No notification buttons.
const APPROVE: &str = r#"{"inbox": 1, "title": "Approve SPEC-017",
  "source": {"app": "planu", "run": "run-9"},
  "questions": [{"id": "q1", "type": "confirm",
                 "question": "SPEC-017 has 0 passing acceptance criteria. Approve it anyway?"}]}"#;

fn confirm(title: &str) -> String {
    json!({"inbox": 1, "title": title, "source": {"app": "planu"},
           "questions": [{"id": "q1", "type": "confirm", "question": format!("{title}?")}]})
    .to_string()
}

/// Who the app records as answering: the OS account it runs as (the tests' own), whatever
/// `$USER` says.
fn me() -> String {
    inbox_engine::operator::answered_by(&inbox_engine::operator::account())
}

/// The outcome's fields that a person's answer decides, the rest checked for shape.
fn assert_answered(outcome: &Value, id: &str, answers: Value, custom: Value) {
    assert_eq!(outcome["id"], id, "{outcome:#}");
    assert_eq!(outcome["status"], "answered", "{outcome:#}");
    assert_eq!(outcome["answers"], answers, "{outcome:#}");
    assert_eq!(outcome["custom"], custom, "{outcome:#}");
    assert_eq!(outcome["answered_by"], me().as_str(), "{outcome:#}");
    assert_eq!(outcome["defaulted"], json!([]), "{outcome:#}");
}

/// The plumbing alone, whatever the page shows: the window opens in the private session, the
/// WebDriver session works, the app's tree is stopped afterwards, and a request dropped
/// into the spool raises a notification with answer buttons.
#[tokio::test]
async fn the_window_opens_and_a_dropped_request_notifies() {
    let d = Desktop::start_bare().await;
    let ready = d.js("return document.readyState").await;
    assert!(ready == "complete" || ready == "interactive", "{ready}");
    let shot = d.capture("e2e-smoke").await;
    assert!(std::fs::metadata(&shot).unwrap().len() > 1000);

    d.place_request("approve-17", APPROVE);
    let call = d.wait_notify("Approve SPEC-017").await;
    assert!(call.body.contains("planu / run-9"), "{}", call.raw);
    assert_eq!(call.action_keys(), ["default", "answer:yes", "answer:no"]);
    d.press_notification_action("Approve SPEC-017", "answer:no");
    let outcome = d.wait_for_outcome("approve-17").await;
    assert_answered(&outcome, "approve-17", json!({"q1": false}), json!([]));
    d.finish().await;
}

#[tokio::test]
async fn a_dropped_request_is_listed_notified_and_answered_in_the_window() {
    let d = Desktop::start().await;
    d.place_request("deploy-1", DEPLOY);

    let row = d.row("deploy-1").await;
    let row_text = d.text_of(&row).await;
    assert!(row_text.contains("Deploy SPEC-042"), "row: {row_text}");

    let call = d.wait_notify("Deploy SPEC-042").await;
    assert_eq!(call.app_name, "Answer Inbox");
    assert!(
        call.body.contains("planu / run-7f3a"),
        "body: {}",
        call.body
    );
    for (key, label) in [
        ("default", "Open"),
        ("answer:yes", "Yes"),
        ("answer:no", "No"),
    ] {
        assert!(
            call.actions.contains(&(key.to_owned(), label.to_owned())),
            "button {key}/{label} in {:?}",
            call.actions
        );
    }

    d.open("deploy-1").await;
    d.click("[data-testid=yes]").await;
    d.submit().await;

    let outcome = d.wait_for_outcome("deploy-1").await;
    assert_answered(&outcome, "deploy-1", json!({"q1": true}), json!([]));
    let result = d.result_text().await;
    assert!(!result.trim().is_empty(), "the result is shown");
    d.finish().await;
}

#[tokio::test]
async fn every_question_kind_in_both_dialects_with_fill_in_and_pattern() {
    let d = Desktop::start().await;
    d.place_request("release-24", RELEASE);
    d.place_request("storage-91c2", STORAGE);

    // Interactive dialect: confirm, choice with a fill-in, multiChoice, text with a pattern.
    d.open("release-24").await;
    let ship = d.question(0, "ship").await;
    let yes = d.find_in(&ship, "[data-testid=yes]").await;
    d.click_element(&yes).await;

    let env = d.question(1, "env").await;
    let fill_in = d.find_in(&env, "[data-testid=fill-in]").await;
    d.type_into(&fill_in, "hotfix-7").await;

    let tags = d.question(2, "tags").await;
    for value in ["payments", "urgent"] {
        let css = format!("input[type=checkbox][value={}]", css_str(value));
        let checkbox = tags
            .find(fantoccini::Locator::Css(&css))
            .await
            .unwrap_or_else(|e| panic!("{css}: {e}"));
        d.click_element(&checkbox).await;
    }

    let ticket = d.question(3, "ticket").await;
    let text = d.find_in(&ticket, "[data-testid=text-input]").await;
    d.type_into(&text, "ops 12").await;
    let error = d.text("[data-testid=field-error]").await;
    assert!(!error.trim().is_empty(), "a pattern error is shown");

    // A batch is submitted from its review step: there, Submit is disabled and says why.
    d.click("[data-testid=review]").await;
    d.find("[data-testid=confirm-screen]").await;
    let submit = d.find("[data-testid=submit]").await;
    assert!(
        !submit.is_enabled().await.unwrap(),
        "submit is disabled while an answer does not match its pattern"
    );
    let reason = d.text("[data-testid=submit-reason]").await;
    assert!(
        !reason.trim().is_empty(),
        "the disabled submit says why: {reason:?}"
    );
    eprintln!("pattern error: {error:?}; submit reason: {reason:?}");

    // Back goes to the last question, the ticket: fix it.
    d.click("[data-testid=back]").await;
    let ticket = d.question(3, "ticket").await;
    let text = d.find_in(&ticket, "[data-testid=text-input]").await;
    d.clear_field(&text).await;
    text.send_keys("OPS-12").await.unwrap();
    d.wait_gone("[data-testid=field-error]").await;

    d.click("[data-testid=review]").await;
    d.find("[data-testid=confirm-screen]").await;
    assert!(
        d.count("[data-testid=submit-reason]").await == 0,
        "no reason is given once the answers are valid"
    );
    let lines = d.all("[data-testid=summary-line]").await;
    assert_eq!(lines.len(), 4, "one summary line per question");
    let mut summary = String::new();
    for line in &lines {
        summary.push_str(&d.text_of(line).await);
        summary.push('\n');
    }
    for shown in ["hotfix-7", "payments", "urgent", "OPS-12"] {
        assert!(
            summary.contains(shown),
            "{shown} in the summary:\n{summary}"
        );
    }
    d.submit().await;
    let outcome = d.wait_for_outcome("release-24").await;
    assert_answered(
        &outcome,
        "release-24",
        json!({"ship": true, "env": "hotfix-7", "tags": ["payments", "urgent"], "ticket": "OPS-12"}),
        json!(["env"]),
    );

    // Structured dialect: single_choice with a fill-in, yes_no, multi_choice, free_text.
    d.click("[data-testid=back-to-list]").await;
    d.open("storage-91c2").await;
    let database = d.question(0, "q1").await;
    let fill_in = d.find_in(&database, "[data-testid=fill-in]").await;
    d.type_into(&fill_in, "CockroachDB").await;
    let caching = d.question(1, "q2").await;
    let no = d.find_in(&caching, "[data-testid=no]").await;
    d.click_element(&no).await;
    let extras = d.question(2, "q3").await;
    assert!(
        extras
            .find_all(fantoccini::Locator::Css("[data-testid=fill-in]"))
            .await
            .unwrap()
            .is_empty(),
        "allow_custom: false offers no fill-in"
    );
    for value in ["read", "pitr"] {
        let css = format!("input[type=checkbox][value={}]", css_str(value));
        let checkbox = extras.find(fantoccini::Locator::Css(&css)).await.unwrap();
        d.click_element(&checkbox).await;
    }
    let concerns = d.question(3, "q4").await;
    let text = d.find_in(&concerns, "[data-testid=text-input]").await;
    d.type_into(&text, "Keep the old cluster for a week.").await;

    d.click("[data-testid=review]").await;
    let screen = d.find("[data-testid=confirm-screen]").await;
    let screen_text = d.text_of(&screen).await;
    assert!(
        screen_text.contains("Ready to configure?"),
        "the request's confirm_title heads the confirmation: {screen_text}"
    );
    assert_eq!(d.all("[data-testid=summary-line]").await.len(), 4);
    // Back to the form and forward again keeps the answers.
    d.click("[data-testid=back]").await;
    d.wait_gone("[data-testid=confirm-screen]").await;
    d.click("[data-testid=review]").await;
    d.find("[data-testid=confirm-screen]").await;
    d.submit().await;
    let outcome = d.wait_for_outcome("storage-91c2").await;
    assert_answered(
        &outcome,
        "storage-91c2",
        json!({"q1": "CockroachDB", "q2": false, "q3": ["read", "pitr"],
               "q4": "Keep the old cluster for a week."}),
        json!(["q1"]),
    );
    d.finish().await;
}

#[tokio::test]
async fn declining_with_a_reason_writes_a_declined_outcome() {
    let d = Desktop::start().await;
    d.place_request("migrate-513", MIGRATE);
    d.open("migrate-513").await;
    d.click("[data-testid=decline]").await;
    let reason = d.find("[data-testid=decline-reason]").await;
    d.type_into(&reason, "Not during the freeze.").await;
    d.click("[data-testid=decline-confirm]").await;

    let outcome = d.wait_for_outcome("migrate-513").await;
    assert_eq!(outcome["status"], "declined", "{outcome:#}");
    assert_eq!(outcome["reason"], "Not during the freeze.", "{outcome:#}");
    assert_eq!(outcome["answers"], json!({}), "{outcome:#}");
    assert_eq!(outcome["answered_by"], me().as_str(), "{outcome:#}");
    d.find("[data-testid=result]").await;
    d.finish().await;
}

#[tokio::test]
async fn notification_buttons_answer_and_open_requests() {
    let d = Desktop::start().await;
    d.place_request("approve-17", APPROVE);
    d.row("approve-17").await;
    let call = d.wait_notify("Approve SPEC-017").await;
    assert_eq!(
        call.action_keys(),
        ["default", "answer:yes", "answer:no"],
        "{:?}",
        call.actions
    );

    d.press_notification_action("Approve SPEC-017", "answer:yes");
    let outcome = d.wait_for_outcome("approve-17").await;
    assert_answered(&outcome, "approve-17", json!({"q1": true}), json!([]));
    // The window hears of it: the row leaves Pending and shows in History.
    d.wait_gone("[data-testid=row][data-id=\"approve-17\"]")
        .await;
    d.nav("History").await;
    let row = d
        .find("[data-testid=history-list] [data-testid=history-row][data-id=\"approve-17\"]")
        .await;
    let row_text = d.text_of(&row).await;
    assert!(
        row_text.contains("Approve SPEC-017") && row_text.contains("Answered"),
        "History shows it answered: {row_text}"
    );

    // The bubble's default action ("Open") shows that request in the window.
    d.place_request("deploy-2", DEPLOY);
    let call = d.wait_notify("Deploy SPEC-042").await;
    assert!(
        call.action_keys().contains(&"default"),
        "{:?}",
        call.actions
    );
    d.press_notification_action("Deploy SPEC-042", "default");
    d.find("[data-testid=answer-view][data-id=\"deploy-2\"]")
        .await;
    assert!(
        !d.outcome_path("deploy-2").exists(),
        "opening answers nothing"
    );
    d.finish().await;
}

#[tokio::test]
async fn descriptions_cannot_run_script() {
    let d = Desktop::start().await;
    let request = json!({
        "inbox": 1,
        "title": "Review <img src=x onerror=\"window.__pwned='title'\"> notes",
        "source": {"app": "planu"},
        "questions": [{
            "label": "Notes", "type": "yes_no", "question": "Publish these release notes?",
            "description": "Release notes follow.\n\n\
                <script>window.__pwned = 'script'; document.title = 'pwned';</script>\n\n\
                <img src=x onerror=\"window.__pwned = 'img'; document.title = 'pwned'\">\n\n\
                [click me](javascript:window.__pwned='link';document.title='pwned')\n\n\
                <a href=\"javascript:window.__pwned='a'\">raw link</a> \
                <iframe src=\"javascript:parent.__pwned='iframe'\"></iframe>\n\n\
                <svg onload=\"window.__pwned='svg'\"></svg> **bold stays**"
        }]
    });
    d.place_request("notes-1", &request.to_string());

    let row = d.row("notes-1").await;
    let row_text = d.text_of(&row).await;
    assert!(
        row_text.contains("<img"),
        "the title is shown as text, not markup: {row_text}"
    );
    d.open("notes-1").await;
    let description = d.find("[data-testid=description]").await;
    assert!(d.text_of(&description).await.contains("bold stays"));

    // Click every link in it: none may run anything or leave the app.
    for link in description
        .find_all(fantoccini::Locator::Css("a"))
        .await
        .unwrap()
    {
        let _ = link.click().await;
    }
    tokio::time::sleep(Duration::from_millis(500)).await;

    let state = d
        .js(r#"const html = (document.querySelector('[data-testid=description]') || {}).innerHTML || '';
               return {pwned: window.__pwned === undefined ? null : String(window.__pwned),
                       title: document.title, html, url: location.href};"#)
        .await;
    assert_eq!(state["pwned"], Value::Null, "a payload ran: {state:#}");
    let url = state["url"].as_str().unwrap();
    assert!(
        url.starts_with("tauri://") || url.contains("tauri.localhost"),
        "the window stayed on the app: {url}"
    );
    let title = state["title"].as_str().unwrap();
    assert!(
        title.starts_with("Answer Inbox"),
        "document.title untouched: {state:#}"
    );
    let html = state["html"].as_str().unwrap().to_lowercase();
    for bad in ["<script", "onerror", "onload", "javascript:", "<iframe"] {
        assert!(!html.contains(bad), "{bad} in the description: {html}");
    }
    assert!(
        html.contains("<strong>bold stays</strong>"),
        "markdown still renders: {html}"
    );
    d.find("[data-testid=answer-view][data-id=\"notes-1\"]")
        .await;
    d.finish().await;
}

#[tokio::test]
async fn the_keyboard_alone_answers_a_request() {
    let d = Desktop::start().await;
    for (id, title) in [("kb-1", "First"), ("kb-2", "Second"), ("kb-3", "Third")] {
        d.place_request(id, &confirm(title));
    }
    let rows = desktop::eventually("three Pending rows", STEP, || async {
        let ids = d.row_ids().await;
        (ids.len() == 3).then_some(ids)
    })
    .await;

    // Whether the first row starts selected or none does, j k j ends on the second row.
    for key in ["j", "k", "j"] {
        d.press_keys(key).await;
    }
    d.press_keys(&char::from(fantoccini::key::Key::Enter).to_string())
        .await;
    let chosen = &rows[1];
    d.find(&format!(
        "[data-testid=answer-view][data-id={}]",
        css_str(chosen)
    ))
    .await;

    d.press_keys("y").await;
    d.press_keys(
        &(fantoccini::key::Key::Control + &char::from(fantoccini::key::Key::Enter).to_string()),
    )
    .await;
    let outcome = d.wait_for_outcome(chosen).await;
    assert_answered(&outcome, chosen, json!({"q1": true}), json!([]));
    for other in rows.iter().filter(|id| *id != chosen) {
        assert!(!d.outcome_path(other).exists(), "{other} was not answered");
    }
    d.finish().await;
}

#[tokio::test]
async fn an_answer_from_another_instance_wins_and_is_shown() {
    let d = Desktop::start().await;
    d.place_request("deploy-3", DEPLOY);
    d.open("deploy-3").await;
    d.click("[data-testid=yes]").await;

    // Another inbox (its own database; the same account, as answers are recorded under the
    // OS account) settles it first.
    let other_db = d.root().join("other/inbox.sqlite3");
    let out = d.cli(&other_db, &["answer", "deploy-3", "--set", "q1=no"]);
    assert!(
        out.status.success(),
        "the other instance answers: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let written = std::fs::read(d.outcome_path("deploy-3")).unwrap();

    // The window hears of it at once: the form closes and says who settled it; nothing can
    // be submitted over it.
    let notice = d.text("[data-testid=notice]").await;
    assert!(
        notice.contains(&me()),
        "the notice names who settled it: {notice}"
    );
    let submit = d.find("[data-testid=submit]").await;
    assert!(
        !submit.is_enabled().await.unwrap(),
        "submit is closed once another inbox settled the request"
    );
    // "Show the outcome" shows the one that stands.
    let show = d
        .client()
        .find(fantoccini::Locator::XPath(
            "//*[@data-testid='notice']//button[contains(., 'Show the outcome')]",
        ))
        .await
        .unwrap();
    d.click_element(&show).await;
    let shown = d.find("[data-testid=outcome]").await;
    let by = d
        .find_in(&shown, "[data-testid=answered-by]")
        .await
        .attr("title")
        .await
        .unwrap();
    assert_eq!(by, Some(me()));
    let answer = d
        .find_in(&shown, "[data-testid=outcome-answer][data-qid=\"q1\"]")
        .await;
    let answer = d.text_of(&answer).await;
    assert!(
        answer.starts_with("No"),
        "the other's answer is shown: {answer}"
    );
    assert_eq!(
        std::fs::read(d.outcome_path("deploy-3")).unwrap(),
        written,
        "the outcome file is unchanged"
    );
    let outcome: Value = serde_json::from_slice(&written).unwrap();
    assert_eq!(outcome["answers"], json!({"q1": false}));

    // Its notification does not stay to offer a decision that no longer decides anything:
    // the app closes its bubble (CloseNotification on the bus).
    d.wait_notify("Deploy SPEC-042").await;
    crate::util::eventually("the settled request's bubble closed", || {
        !d.session.close_calls().is_empty()
    });
    assert_eq!(
        std::fs::read(d.outcome_path("deploy-3")).unwrap(),
        written,
        "the outcome file is still unchanged"
    );
    d.finish().await;
}

/// "Deploy build 7 to staging?", and the request swapped in for it under the same id.
const STAGING: &str = r#"{"inbox": 1, "title": "Deploy build 7",
  "source": {"app": "planu", "run": "run-7"},
  "questions": [{"id": "go", "type": "confirm", "question": "Deploy build 7 to staging?"}]}"#;
const PRODUCTION: &str = r#"{"inbox": 1, "title": "Deploy build 7",
  "source": {"app": "planu", "run": "run-7"},
  "questions": [{"id": "go", "type": "confirm", "question": "Deploy build 7 to PRODUCTION?"}]}"#;

/// The window shows a request; its file is then replaced by another request under the same
/// id; the operator answers what the window shows. The answer is refused (it would approve
/// what the operator never saw), the window says why on the request, no outcome is written,
/// and the request shows as blocked, there and in the list.
#[tokio::test]
async fn a_request_swapped_after_it_was_shown_is_refused_and_shown_blocked() {
    let d = Desktop::start().await;
    d.place_request("deploy-7", STAGING);
    d.open("deploy-7").await;
    let question = d.question(0, "go").await;
    let shown = d.text_of(&question).await;
    assert!(shown.contains("to staging?"), "shown: {shown}");
    d.click("[data-testid=yes]").await;

    // A different body renamed over the file the window shows.
    d.place_request("deploy-7", PRODUCTION);
    d.submit().await;

    // "changed" when the answer found the swap first, "blocked" when the loop saw it first.
    let refused = d.text("[data-testid=refused]").await;
    assert!(
        refused.contains("changed after you opened it")
            || refused.contains("blocked after you opened it"),
        "the window says why: {refused}"
    );
    assert!(
        refused.contains("not answered") || refused.contains("nothing was sent"),
        "the window says nothing was sent: {refused}"
    );
    let blocked = d.text("[data-testid=blocked-notice]").await;
    assert!(
        blocked.contains("changed after it was placed"),
        "the request shows as blocked, with the reason: {blocked}"
    );
    d.find("[data-testid=request-blocked]").await;
    let submit = d.find("[data-testid=submit]").await;
    assert!(
        !submit.is_enabled().await.unwrap(),
        "a blocked request cannot be answered"
    );
    let decline = d.find("[data-testid=decline]").await;
    assert!(!decline.is_enabled().await.unwrap(), "nor declined");
    let page = d.text("[data-testid=answer-view]").await;
    assert!(
        !page.contains("PRODUCTION"),
        "the swapped-in question is never shown as the one to answer: {page}"
    );
    d.capture("swapped-request-refused").await;
    assert!(
        !d.outcome_path("deploy-7").exists(),
        "no outcome is written"
    );

    // In the list, too.
    d.click("[data-testid=back-to-list]").await;
    let row = d.row("deploy-7").await;
    let badge = d.find_in(&row, "[data-testid=row-blocked]").await;
    let badge = d.text_of(&badge).await;
    assert!(badge.contains("blocked"), "the row's badge: {badge}");
    d.capture("swapped-request-blocked-row").await;
    assert!(!d.outcome_path("deploy-7").exists());
    d.finish().await;
}

const AMBIGUOUS: &str = r#"[
  {"id": "pick-spec", "question": "Several specs match \"checkout flow\". Which one did you mean?",
   "type": "choice",
   "options": ["SPEC-031 Checkout flow v1", "SPEC-058 Checkout flow redesign", "SPEC-060 Guest checkout"]},
  {"id": "also-tag", "question": "Tag the chosen spec with any of these?", "type": "multiChoice",
   "options": ["payments", "frontend", "urgent"], "required": false, "default": []},
  {"id": "ticket", "question": "Tracking ticket?", "type": "text", "pattern": "^[A-Z]+-[0-9]+$",
   "required": false}
]"#;

const LOW_CRITERIA: &str = r#"{"interactiveQuestions": [
  {"id": "confirm-low-criteria", "question": "SPEC-017 has 0 passing acceptance criteria. Approve it anyway?",
   "type": "confirm", "default": false, "required": true}]}"#;

const DEPLOY_TARGET: &str = r#"{"inbox": 1, "id": "deploy-spec-042", "title": "Deploy SPEC-042",
  "source": {"app": "planu", "run": "run-7f3a", "tool": "deploy_spec", "host": "ci-runner-3"},
  "priority": "high",
  "questions": [{"id": "confirm-target-env", "question": "Which environment should this deploy to?",
                 "type": "choice", "options": ["staging", "production"], "default": "staging"}]}"#;

const NIGHTLY: &str = r#"{"inbox": 1, "id": "nightly-cleanup-2026-12-02", "title": "Nightly cleanup",
  "source": {"app": "ops-pipeline", "run": "nightly-512", "tool": "cleanup"},
  "mode": "autonomous", "timeout_seconds": 900,
  "questions": [
    {"id": "prune-branches", "question": "Prune 14 merged branches?", "type": "confirm", "default": true},
    {"id": "retention", "question": "Keep build artifacts for how long?", "type": "choice",
     "options": ["7 days", "30 days", "90 days"], "default": "30 days", "required": false}]}"#;

const INVALID: &str = r#"{"inbox": 1, "questions": [
  {"id": "env", "question": "Which environment?", "type": "choice", "default": "qa"}]}"#;

#[tokio::test]
async fn screenshots_of_the_main_views() {
    let d = Desktop::start().await;
    d.place_request("ambiguous-spec", AMBIGUOUS);
    d.place_request("approve-low-criteria", LOW_CRITERIA);
    d.place_request(
        "configure-db",
        &STORAGE.replace("\"allow_custom\": false,", ""),
    );
    d.place_request("deploy-spec-042", DEPLOY_TARGET);
    d.place_request("nightly-cleanup-2026-12-02", NIGHTLY);
    d.place_request("env-check", INVALID);
    d.place_file("README.txt", b"not a request\n");

    desktop::eventually("four pending rows", STEP, || async {
        (d.row_ids().await.len() == 4).then_some(())
    })
    .await;
    d.screenshot("pending").await;

    d.open("configure-db").await;
    let database = d.question(0, "q1").await;
    let pg = database
        .find(fantoccini::Locator::Css("input[type=radio][value=\"pg\"]"))
        .await
        .unwrap();
    d.click_element(&pg).await;
    let caching = d.question(1, "q2").await;
    let yes = d.find_in(&caching, "[data-testid=yes]").await;
    d.click_element(&yes).await;
    let extras = d.question(2, "q3").await;
    let backup = extras
        .find(fantoccini::Locator::Css(
            "input[type=checkbox][value=\"backup\"]",
        ))
        .await
        .unwrap();
    d.click_element(&backup).await;
    let concerns = d.question(3, "q4").await;
    let text = d.find_in(&concerns, "[data-testid=text-input]").await;
    d.type_into(&text, "Staging has 512 MB for the cache at most.")
        .await;
    d.question(0, "q1").await;
    d.screenshot("answer").await;

    d.click("[data-testid=review]").await;
    d.find("[data-testid=confirm-screen]").await;
    d.screenshot("confirm").await;
    d.submit().await;
    d.wait_for_outcome("configure-db").await;
    d.find("[data-testid=result]").await;

    d.nav("History").await;
    desktop::eventually("three History rows", STEP, || async {
        // configure-db (answered), nightly cleanup (defaulted), env-check (rejected).
        (d.count("[data-testid=history-row]").await >= 3).then_some(())
    })
    .await;
    d.screenshot("history").await;

    d.nav("Problems").await;
    desktop::eventually("two problems", STEP, || async {
        (d.count("[data-testid=problem-row]").await >= 2).then_some(())
    })
    .await;
    let problems = d
        .js("return Array.from(document.querySelectorAll('[data-testid=problem-row]')).map(r => r.innerText).join('\\n')")
        .await;
    let problems = problems.as_str().unwrap();
    assert!(problems.contains("README.txt"), "{problems}");
    assert!(problems.contains("env-check"), "{problems}");
    d.screenshot("problems").await;

    d.nav("Settings").await;
    d.find("[data-testid=settings]").await;
    let spool = d.find("[data-testid=settings-spool]").await;
    let shown = spool.prop("value").await.unwrap().unwrap_or_default();
    assert_eq!(shown, d.spool().display().to_string());
    d.screenshot("settings").await;

    // Do-not-disturb is saved to the settings file.
    d.click("[data-testid=settings-dnd]").await;
    d.click("[data-testid=settings-save]").await;
    let path = d.settings_path();
    desktop::eventually("settings.json with do_not_disturb", STEP, || async {
        let bytes = std::fs::read(&path).ok()?;
        let settings: Value = serde_json::from_slice(&bytes).ok()?;
        (settings["do_not_disturb"] == true).then_some(())
    })
    .await;
    d.finish().await;
}

#[tokio::test]
async fn an_empty_inbox_offers_demo_requests_and_do_not_disturb_silences_notifications() {
    let d = Desktop::start().await;

    // The empty state offers the demo requests; they arrive like any others.
    d.click("[data-testid=add-demo]").await;
    let demo_ids = desktop::eventually("the demo requests", STEP, || async {
        let ids = d.row_ids().await;
        (ids.len() >= 4).then_some(ids)
    })
    .await;
    assert!(
        demo_ids.iter().all(|id| id.starts_with("demo-")),
        "{demo_ids:?}"
    );

    d.nav("Settings").await;
    d.click("[data-testid=settings-dnd]").await;
    d.click("[data-testid=settings-save]").await;
    desktop::eventually("do-not-disturb saved", STEP, || async {
        let saved = std::fs::read_to_string(d.settings_path()).ok()?;
        let saved: Value = serde_json::from_str(&saved).ok()?;
        (saved["do_not_disturb"] == json!(true)).then_some(())
    })
    .await;

    // Silenced: the request is listed, but no bubble appears. A lone request's bubble comes
    // at once, so two seconds is ample.
    d.place_request("quiet-1", &confirm("Quiet request"));
    d.nav("Pending").await;
    d.row("quiet-1").await;
    tokio::time::sleep(Duration::from_secs(2)).await;
    let quiet: Vec<_> = d
        .notify_calls()
        .into_iter()
        .filter(|call| call.summary == "Quiet request")
        .collect();
    assert!(quiet.is_empty(), "do-not-disturb let through {quiet:?}");

    // Back on: the next request notifies again.
    d.nav("Settings").await;
    d.click("[data-testid=settings-dnd]").await;
    d.click("[data-testid=settings-save]").await;
    // Bubbles go out at once now: the request must come after the switch is back on.
    desktop::eventually("do-not-disturb off saved", STEP, || async {
        let saved = std::fs::read_to_string(d.settings_path()).ok()?;
        let saved: Value = serde_json::from_str(&saved).ok()?;
        (saved["do_not_disturb"] == json!(false)).then_some(())
    })
    .await;
    d.place_request("loud-1", &confirm("Loud request"));
    d.wait_notify("Loud request").await;
    d.finish().await;
}

#[tokio::test]
async fn a_second_launch_hands_over_to_the_running_app() {
    let d = Desktop::start().await;
    let mut second = std::process::Command::new(desktop::app_binary());
    d.apply_app_env(&mut second);
    let mut second = second
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::fs::File::create(d.root().join("second.log")).unwrap())
        .spawn()
        .expect("start a second app");
    let deadline = std::time::Instant::now() + STEP;
    let status = loop {
        if let Some(status) = second.try_wait().unwrap() {
            break status;
        }
        if std::time::Instant::now() > deadline {
            let _ = second.kill();
            panic!("the second launch was still running after {STEP:?}");
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    assert!(status.success(), "the second launch exited with {status}");
    // It handed over before Tauri started GTK (handover.rs), not from the plugin's setup.
    let said = std::fs::read_to_string(d.root().join("second.log")).unwrap();
    assert!(said.contains("handed over to it"), "{said}");

    // The first one still runs its inbox and its window.
    d.place_request("after-second", &confirm("After the second launch"));
    d.row("after-second").await;
    d.finish().await;
}

/// With no notification service on the bus the app says so, and nothing waits on it: a
/// request is listed and answered as usual.
#[tokio::test]
async fn without_a_notification_service_the_app_says_so_and_works() {
    let d = Desktop::start_with(false).await;
    let state = d
        .wait_js(
            "the notification status",
            Duration::from_secs(20),
            "const el = document.querySelector('[data-testid=notifications]'); \
             return el && el.dataset.state === 'unavailable' ? el.textContent : null",
        )
        .await;
    assert!(
        state.as_str().unwrap_or_default().contains("unavailable"),
        "{state}"
    );
    d.place_request("deploy-1", DEPLOY);
    d.open("deploy-1").await;
    d.click("[data-testid=yes]").await;
    d.submit().await;
    let outcome = d.wait_for_outcome("deploy-1").await;
    assert_answered(&outcome, "deploy-1", json!({"q1": true}), json!([]));
    d.finish().await;
}

/// An answers directory that takes no files: the window says the answer is kept, the row
/// says it waits for the spool, and once the directory takes files again the answer is
/// written by the running app without anyone doing anything.
#[tokio::test]
async fn an_answer_the_spool_cannot_take_yet_is_kept_and_written_later() {
    let d = Desktop::start().await;
    d.place_request("deploy-1", DEPLOY);
    d.row("deploy-1").await;
    let read_only = inbox_harness::read_only::ReadOnly::make(&d.spool().join("answers"));

    d.open("deploy-1").await;
    d.click("[data-testid=yes]").await;
    d.submit().await;
    let kept = d.text("[data-testid=kept]").await;
    assert!(kept.contains("kept in the inbox"), "{kept}");
    d.screenshot("answer-kept").await;
    assert!(!d.outcome_path("deploy-1").exists());
    d.nav("Pending").await;
    d.find("[data-testid=unwritten]").await;

    drop(read_only);
    let outcome = d.wait_for_outcome("deploy-1").await;
    assert_answered(&outcome, "deploy-1", json!({"q1": true}), json!([]));
    d.wait_gone("[data-testid=unwritten]").await;
    d.finish().await;
}

/// A pattern built to make a backtracking engine take forever (JavaScript's would need
/// years for 40 characters): the window hands the check to Rust's linear-time regex, so the
/// mismatch is shown at once and the window stays responsive.
#[tokio::test]
async fn a_catastrophic_pattern_cannot_freeze_the_window() {
    let d = Desktop::start().await;
    d.place_request(
        "redos",
        r#"{"inbox": 1, "title": "Name the branch", "source": {"app": "planu"},
            "questions": [{"id": "branch", "type": "text", "question": "Branch?",
                           "pattern": "^(a|a)*b$"}]}"#,
    );
    d.open("redos").await;
    let field = d.question(0, "branch").await;
    let input = d.find_in(&field, "[data-testid=text-input]").await;
    d.type_into(&input, &"a".repeat(40)).await;
    let error = d.text("[data-testid=field-error]").await;
    assert!(error.contains("match"), "{error}");
    // Still responsive: the page answers a script, and the right answer is accepted.
    assert_eq!(d.js("return 1 + 1").await, json!(2));
    d.clear_field(&input).await;
    d.type_into(&input, "aab").await;
    d.wait_gone("[data-testid=field-error]").await;
    d.submit().await;
    let outcome = d.wait_for_outcome("redos").await;
    assert_eq!(outcome["answers"]["branch"], "aab");
    d.finish().await;
}

/// An agent asking through MCP elicitation is answered in the window like any request, and
/// gets its answer back in its own shape: `accept` with typed content.
#[tokio::test]
async fn an_mcp_elicitation_is_answered_in_the_window_and_replied_in_its_shape() {
    let d = Desktop::start().await;
    d.place_request(
        "elicit-1",
        r#"{"source": {"app": "claude-code", "project": "shop", "cwd": "/home/dana/src/shop"},
            "message": "Create the **billing** service.",
            "requestedSchema": {"type": "object", "properties": {
              "name": {"type": "string", "title": "Service name"},
              "replicas": {"type": "integer", "title": "Replicas", "minimum": 1, "maximum": 10},
              "public": {"type": "boolean", "title": "Reachable from the internet?"},
              "tier": {"type": "string", "title": "Tier", "enum": ["s", "m", "l"],
                       "enumNames": ["Small", "Medium", "Large"]}},
            "required": ["name", "replicas", "public", "tier"]}}"#,
    );
    d.open("elicit-1").await;
    let source = d.text("[data-testid=source]").await;
    assert!(
        source.contains("shop") && source.contains("claude-code"),
        "{source}"
    );
    assert!(d
        .text("[data-testid=source-cwd]")
        .await
        .contains("/home/dana/src/shop"));

    let name = d.question(0, "name").await;
    let input = d.find_in(&name, "[data-testid=text-input], textarea").await;
    d.type_into(&input, "billing").await;
    let replicas = d.question(1, "replicas").await;
    let input = d
        .find_in(&replicas, "[data-testid=text-input], textarea")
        .await;
    d.type_into(&input, "3").await;
    let public = d.question(2, "public").await;
    let no = d.find_in(&public, "[data-testid=no]").await;
    d.click_element(&no).await;
    let tier = d.question(3, "tier").await;
    let large = tier
        .find(fantoccini::Locator::Css("input[type=radio][value=l]"))
        .await
        .unwrap();
    d.click_element(&large).await;
    d.screenshot("elicitation").await;
    d.click("[data-testid=review]").await;
    d.submit().await;

    let outcome = d.wait_for_outcome("elicit-1").await;
    assert_eq!(outcome["status"], "answered", "{outcome:#}");
    assert_eq!(
        outcome["reply"],
        json!({"action": "accept", "content":
               {"name": "billing", "replicas": 3, "public": false, "tier": "l"}}),
        "{outcome:#}"
    );
    d.finish().await;
}

/// A LangGraph HumanInterrupt is answered in the window: choosing Respond makes the response
/// text required at once (the window asks Rust's checker, it does not mirror the rule), and
/// the outcome carries the HumanResponse the graph resumes with.
#[tokio::test]
async fn a_langgraph_interrupt_is_answered_in_the_window_and_replied_as_a_human_response() {
    let d = Desktop::start().await;
    d.place_request(
        "interrupt-1",
        r#"{"source": {"app": "langgraph", "run": "email-agent thread 7", "project": "ops"},
            "action_request": {"action": "send_email",
                               "args": {"to": "ops@example.com", "subject": "Rollout done"}},
            "config": {"allow_accept": true, "allow_edit": true, "allow_respond": true,
                       "allow_ignore": true},
            "description": "The agent wants to tell **ops** the rollout is done."}"#,
    );
    d.open("interrupt-1").await;
    let decision = d.question(0, "decision").await;
    let respond = decision
        .find(fantoccini::Locator::Css(
            "input[type=radio][value=response]",
        ))
        .await
        .unwrap();
    d.click_element(&respond).await;
    d.click("[data-testid=review]").await;
    d.find("[data-testid=confirm-screen]").await;
    let what = "Submit to wait for the response text";
    let reason = desktop::eventually(what, STEP, || async {
        let submit = d.find("[data-testid=submit]").await;
        if submit.is_enabled().await.unwrap_or(true) {
            return None;
        }
        Some(d.text("[data-testid=submit-reason]").await)
    })
    .await;
    assert!(reason.contains("required"), "{reason}");

    let response = d.question(2, "response").await;
    let when = d.text("[data-testid=required-when]").await;
    assert!(when.contains("when Decision is"), "{when}");
    let error = d.text("[data-testid=field-error]").await;
    assert!(error.contains("required when Decision is"), "{error}");
    d.capture("interrupt-needs-response").await;
    let text = d
        .find_in(&response, "[data-testid=text-input], textarea")
        .await;
    d.type_into(&text, "Send it tomorrow at 9:00 instead.")
        .await;
    d.wait_gone("[data-testid=field-error]").await;
    d.click("[data-testid=review]").await;
    d.find("[data-testid=confirm-screen]").await;
    d.screenshot("interrupt").await;
    d.submit().await;

    let outcome = d.wait_for_outcome("interrupt-1").await;
    assert_eq!(outcome["status"], "answered", "{outcome:#}");
    assert_eq!(
        outcome["reply"],
        json!({"type": "response", "args": "Send it tomorrow at 9:00 instead."}),
        "{outcome:#}"
    );
    d.finish().await;
}

/// Asks to settle itself (autonomous, a default for its one question) but is marked critical:
/// the shipped policy's first rule, critical-needs-a-person, holds it for a person.
const HELD: &str = r#"{"inbox": 1, "title": "Rotate the signing key",
  "source": {"app": "keyring", "run": "rotate-31"},
  "priority": "critical", "mode": "autonomous", "timeout_seconds": 7200,
  "questions": [{"id": "go", "type": "confirm", "default": false,
                 "question": "Rotate the production signing key now?"}]}"#;

/// A request held by the operator's policy is shown held, with the reason and the
/// rule, in the list and on the request; the policy is edited in Settings, where an invalid
/// text is listed by line and cannot be saved, and a valid one saved there is in force at
/// once: the held request's own autonomous mode now settles it.
#[tokio::test]
async fn a_request_the_policy_holds_is_shown_held_and_the_policy_is_edited_in_settings() {
    let d = Desktop::start().await;
    d.place_request("rotate-key", HELD);

    let row = d.row("rotate-key").await;
    let badge = d.find_in(&row, "[data-testid=held]").await;
    let label = d.text_of(&badge).await;
    assert!(label.contains("critical-needs-a-person"), "badge: {label}");
    let title = badge.attr("title").await.unwrap().unwrap_or_default();
    assert!(
        title.contains("autonomous mode is held for a person"),
        "title: {title}"
    );

    d.open("rotate-key").await;
    let held = d.text("[data-testid=policy-held]").await;
    assert!(held.contains("held for a person"), "{held}");
    assert!(held.contains("critical-needs-a-person"), "{held}");
    assert_eq!(
        d.text("[data-testid=policy-rule]").await.trim(),
        "critical-needs-a-person"
    );
    // The policy takes no timed step of its own here; the request's expiry is counted down.
    d.find("[data-testid=answer-view] [data-testid=countdown]")
        .await;
    d.screenshot("held").await;
    assert!(
        !d.outcome_path("rotate-key").exists(),
        "nothing settled the held request"
    );

    // Settings: no policy file yet, so the shipped policy is shown.
    d.nav("Settings").await;
    let editor = d.find("[data-testid=policy-text]").await;
    let shipped = inbox_engine::inbox_policy::SHIPPED;
    assert_eq!(
        editor.prop("value").await.unwrap().unwrap_or_default(),
        shipped
    );
    let policy_file = d.root().join("config/answer-inbox/policy.toml");
    assert_eq!(
        d.text("[data-testid=policy-path]").await.trim(),
        policy_file.display().to_string()
    );

    // An unknown key in the last rule: listed with its line, and Save refused.
    let broken = format!("{shipped}bogus = 1\n");
    let bad_line = broken.lines().count();
    set_policy_text(&d, &broken).await;
    let problem = d.find("[data-testid=policy-problem]").await;
    assert_eq!(
        problem.attr("data-line").await.unwrap().as_deref(),
        Some(bad_line.to_string().as_str())
    );
    let text = d.text_of(&problem).await;
    assert!(text.contains(&format!("line {bad_line}")), "{text}");
    let save = d.find("[data-testid=policy-save]").await;
    assert!(
        !save.is_enabled().await.unwrap(),
        "Save is refused while invalid"
    );
    assert!(!d.text("[data-testid=policy-save-reason]").await.is_empty());
    // The problem's place puts the cursor on its line, which scrolls the editor there.
    let place = d.find_in(&problem, "button").await;
    d.click_element(&place).await;
    d.js("document.getElementById('policy-title').scrollIntoView({block: 'start'}); return true")
        .await;
    d.screenshot("policy-settings").await;
    assert!(!policy_file.exists(), "an invalid policy is never written");

    // A valid policy that honours autonomous mode: saved, and in force within seconds.
    let honour =
        "[[rule]]\nname = \"let-it-go\"\nautonomous = \"honour\"\non_expiry = \"default\"\n";
    set_policy_text(&d, honour).await;
    d.click("[data-testid=policy-save]").await;
    d.find("[data-testid=policy-saved]").await;
    assert_eq!(std::fs::read_to_string(&policy_file).unwrap(), honour);
    let outcome = d.wait_for_outcome("rotate-key").await;
    assert_eq!(outcome["status"], "defaulted", "{outcome:#}");
    assert_eq!(outcome["answers"], json!({"go": false}), "{outcome:#}");
    d.finish().await;
}

/// Replaces the policy editor's text as typing would (Svelte hears the input event).
async fn set_policy_text(d: &Desktop, text: &str) {
    let editor = d.find("[data-testid=policy-text]").await;
    d.js_with(
        "const [el, text] = arguments; el.value = text; \
         el.dispatchEvent(new Event('input', {bubbles: true})); return true",
        vec![json!(editor), json!(text)],
    )
    .await;
}

/// A snoozed request leaves the Pending list for the Snoozed section, with when it is back,
/// and Unsnooze brings it back.
#[tokio::test]
async fn snoozing_puts_a_request_away_until_it_is_unsnoozed() {
    let d = Desktop::start().await;
    d.place_request("migrate-1", MIGRATE);
    d.open("migrate-1").await;
    d.click("[data-testid=snooze][data-duration='1h']").await;
    let note = d.text("[data-testid=snoozed-note]").await;
    assert!(note.contains("Snoozed until"), "{note}");

    d.click("[data-testid=back-to-list]").await;
    d.wait_gone("[data-testid=row][data-id=migrate-1]").await;
    d.click("[data-testid=snoozed-toggle]").await;
    let snoozed = d.find("[data-testid=snoozed-row][data-id=migrate-1]").await;
    let until = d
        .text_of(&d.find_in(&snoozed, "[data-testid=snoozed-until]").await)
        .await;
    assert!(
        until.contains("back in 59 min") || until.contains("back in 1 h"),
        "{until}"
    );

    let unsnooze = d.find_in(&snoozed, "[data-testid=unsnooze]").await;
    d.click_element(&unsnooze).await;
    d.row("migrate-1").await;
    d.wait_gone("[data-testid=snoozed-section]").await;
    d.finish().await;
}

/// Requests that ask the same are answered together from one of them, after a screen that
/// lists every request id it will settle; each gets its own outcome.
#[tokio::test]
async fn alike_requests_are_answered_together_after_listing_each() {
    let d = Desktop::start().await;
    let ids = ["ship-run-1", "ship-run-2", "ship-run-3"];
    for (n, id) in ids.iter().enumerate() {
        let body = json!({"inbox": 1, "title": format!("Ship build {n}"),
            "source": {"app": "ci", "run": id},
            "questions": [{"id": "q1", "type": "confirm", "question": "Ship this build?"}]});
        d.place_request(id, &body.to_string());
        d.row(id).await;
    }
    d.open("ship-run-2").await;
    let offer = d.text("[data-testid=alike-offer]").await;
    assert!(offer.contains('3'), "{offer}");
    d.click("[data-testid=yes]").await;
    d.click("[data-testid=answer-alike]").await;
    d.find("[data-testid=alike-confirm]").await;
    let mut listed: Vec<String> = Vec::new();
    for member in d.all("[data-testid=alike-member]").await {
        listed.push(member.attr("data-id").await.unwrap().unwrap_or_default());
    }
    listed.sort();
    assert_eq!(listed, ids, "every request it will settle is listed first");
    for id in ids {
        assert!(!d.outcome_path(id).exists(), "nothing is sent before Send");
    }

    d.click("[data-testid=alike-send]").await;
    d.find("[data-testid=alike-results]").await;
    for id in ids {
        let outcome = d.wait_for_outcome(id).await;
        assert_answered(&outcome, id, json!({"q1": true}), json!([]));
    }
    let tally = d.text("[data-testid=alike-tally]").await;
    assert!(tally.contains("3 answered"), "{tally}");
    d.finish().await;
}

/// Settings → "Answer from other devices": switched on over loopback, the app's own server
/// runs at an `http://127.0.0.1` address; "Pair a device" shows a one-time link and its QR
/// code; a browser that pairs with that link through the real server is listed by the name
/// it gave, and Revoke, once confirmed, marks it revoked and locks it out at once.
#[tokio::test]
async fn answering_from_other_devices_is_switched_on_and_a_paired_device_is_listed_and_revoked() {
    let d = Desktop::start().await;
    d.nav("Settings").await;
    d.click("#remote-enabled").await;
    let listen = d.find("#remote-listen").await;
    d.clear_field(&listen).await;
    // Port 0: whichever port is free; the section shows the one it got.
    listen.send_keys("127.0.0.1:0").await.unwrap();
    d.click("[data-testid=settings-save]").await;

    let url = desktop::eventually("the server to run", STEP, || async {
        let status = d.shown("[data-testid=remote-status]", None).await;
        let status = d.text_of(status.first()?).await;
        if status.trim() != "Running" {
            return None;
        }
        Some(d.text("[data-testid=remote-url]").await.trim().to_owned())
    })
    .await;
    let port: u16 = url
        .strip_prefix("http://127.0.0.1:")
        .and_then(|port| port.parse().ok())
        .unwrap_or_else(|| panic!("a plain HTTP loopback address: {url}"));
    assert_ne!(port, 0, "{url}");
    let saved: Value =
        serde_json::from_str(&std::fs::read_to_string(d.settings_path()).unwrap()).unwrap();
    assert_eq!(saved["remote"]["enabled"], true, "{saved:#}");
    assert_eq!(saved["remote"]["listen"], "127.0.0.1:0", "{saved:#}");
    let reach = d.text("[data-testid=remote-reach]").await;
    assert!(reach.contains("this machine only"), "{reach}");

    d.click("#pair-device").await;
    let link = d.text("#pairing-link").await.trim().to_owned();
    assert!(
        link.starts_with(&format!("{url}/")) && link.contains("#pair="),
        "the link {link} opens {url} with a pairing code"
    );
    d.find("#pairing-qr svg").await;
    let expiry = d.text("[data-testid=pairing-expiry]").await;
    assert!(expiry.contains("works once, expires in"), "{expiry}");

    // The phone's side: its page POSTs the link's code from the server's own origin.
    let code = link.split("#pair=").nth(1).unwrap();
    let code = code.split('&').next().unwrap().to_owned();
    let origin = url.clone();
    let (status, cookie, session) =
        tokio::task::spawn_blocking(move || pair_through_the_server(&origin, &code, "Test phone"))
            .await
            .unwrap();
    assert_eq!(status, 200, "pairing: {session}");
    assert_eq!(session["device_name"], "Test phone", "{session}");
    assert!(
        cookie.starts_with("inbox_device="),
        "the device cookie: {cookie}"
    );
    let device_id = session["device_id"].as_str().unwrap().to_owned();

    // Nothing tells the window that a browser paired: Refresh reads the devices again.
    d.click("#remote-refresh").await;
    let row_css = format!("[data-testid=device-row][data-id={}]", css_str(&device_id));
    let row = d.find(&row_css).await;
    let name = d.find_in(&row, "[data-testid=device-name]").await;
    assert_eq!(d.text_of(&name).await.trim(), "Test phone");
    let when = d
        .text_of(&d.find_in(&row, "[data-testid=device-when]").await)
        .await;
    assert!(when.contains("paired"), "{when}");

    // Renamed in place: Enter saves the name, and does not submit the Settings form around
    // the field (a save would replace settings.json with a new file).
    let settings_file =
        || std::os::unix::fs::MetadataExt::ino(&d.settings_path().metadata().unwrap());
    let settings_before = settings_file();
    let rename = d.find_in(&row, "[data-testid=device-rename]").await;
    d.click_element(&rename).await;
    let field = d.find_in(&row, "[data-testid=device-rename-input]").await;
    d.clear_field(&field).await;
    field
        .send_keys(&format!(
            "Work phone{}",
            char::from(fantoccini::key::Key::Enter)
        ))
        .await
        .unwrap();
    d.wait_gone("[data-testid=device-rename-input]").await;
    let row = d.find(&row_css).await;
    let name = d.find_in(&row, "[data-testid=device-name]").await;
    assert_eq!(d.text_of(&name).await.trim(), "Work phone");
    assert_eq!(
        settings_file(),
        settings_before,
        "the settings were not saved again"
    );

    // A second link for the picture: the QR code with the device paired so far below it.
    d.click("#pair-device").await;
    d.find("#pairing-qr svg").await;
    // The window is short: the server's state, the link and the devices fill it.
    d.js(
        "document.querySelector('[data-testid=remote-state]').scrollIntoView({block: 'start'}); \
          return true",
    )
    .await;
    d.screenshot("remote-settings").await;

    let row = d.find(&row_css).await;
    let revoke = d.find_in(&row, "[data-testid=device-revoke]").await;
    d.click_element(&revoke).await;
    // A confirm step: nothing is revoked by the first press.
    assert_eq!(
        session_status(&url, &cookie).await,
        200,
        "still paired before the revoke is confirmed"
    );
    let confirm = d.find_in(&row, "[data-testid=device-revoke-confirm]").await;
    d.click_element(&confirm).await;
    let revoked = d
        .find(&format!(
            "{row_css}[data-revoked=true] [data-testid=device-revoked]"
        ))
        .await;
    let revoked = d.text_of(&revoked).await;
    assert!(revoked.starts_with("revoked"), "{revoked}");
    d.capture("remote-device-revoked").await;
    assert_eq!(
        session_status(&url, &cookie).await,
        401,
        "a revoked device is refused at once"
    );
    d.finish().await;
}

/// A client that reads every status as it is: a refusal is what the test checks.
fn http_agent() -> ureq::Agent {
    ureq::Agent::config_builder()
        .http_status_as_error(false)
        .max_redirects(0)
        .timeout_global(Some(STEP))
        .build()
        .into()
}

/// Pairs as the served page does: `POST <origin>/api/pair` from the page's own origin.
/// Returns the status, the device cookie (`inbox_device=…`) and the JSON body.
fn pair_through_the_server(origin: &str, code: &str, name: &str) -> (u16, String, Value) {
    let mut response = http_agent()
        .post(format!("{origin}/api/pair"))
        .header("Origin", origin)
        .send_json(json!({"code": code, "name": name}))
        .unwrap_or_else(|e| panic!("POST {origin}/api/pair: {e}"));
    let cookie = response
        .headers()
        .get("set-cookie")
        .and_then(|value| value.to_str().ok())
        .and_then(|value| value.split(';').next())
        .unwrap_or_default()
        .to_owned();
    let body = response.body_mut().read_to_string().unwrap();
    let body = serde_json::from_str(&body).unwrap_or(Value::String(body));
    (response.status().as_u16(), cookie, body)
}

/// The status of `GET /api/session` for the device with `cookie`: 200 while it is paired.
async fn session_status(origin: &str, cookie: &str) -> u16 {
    let (origin, cookie) = (origin.to_owned(), cookie.to_owned());
    tokio::task::spawn_blocking(move || {
        http_agent()
            .get(format!("{origin}/api/session"))
            .header("Cookie", &cookie)
            .call()
            .unwrap_or_else(|e| panic!("GET {origin}/api/session: {e}"))
            .status()
            .as_u16()
    })
    .await
    .unwrap()
}

/// Claude Code asks through the real hook and the operator answers in the real window: a
/// Bash call shows its command in a code block and "Allow once" lets it run; an Edit shows
/// its diff and "Deny" with a reason stops it, and Claude is told the reason.
#[tokio::test]
async fn claude_code_permission_requests_are_answered_in_the_window() {
    let d = Desktop::start().await;

    let hook = WaitingHook::start(&d, "pre-tool-use-bash.json");
    let bash_id = hook_request_id(&d, &[]).await;
    d.open(&bash_id).await;
    // Shown as the agent's prompt (its options one key each) until the whole form is asked
    // for: this test answers through the form.
    d.click("[data-testid=answer-in-full]").await;
    let decision = d.question(0, "decision").await;
    let code = d.text("[data-testid=description] pre code").await;
    assert!(
        code.contains("git push --force-with-lease origin feature/checkout-v2"),
        "the command in a code block: {code:?}"
    );
    d.screenshot("permission-bash").await;
    let css = format!("input[type=radio][value={}]", css_str("Allow once"));
    let allow = d.find_in(&decision, &css).await;
    d.click_element(&allow).await;
    d.click("[data-testid=review]").await;
    d.find("[data-testid=confirm-screen]").await;
    d.submit().await;
    let printed = hook.decision().await;
    let specific = &printed["hookSpecificOutput"];
    assert_eq!(specific["hookEventName"], "PreToolUse", "{printed}");
    assert_eq!(specific["permissionDecision"], "allow", "{printed}");

    d.click("[data-testid=back-to-list]").await;
    let hook = WaitingHook::start(&d, "pre-tool-use-edit.json");
    let edit_id = hook_request_id(&d, &[bash_id]).await;
    d.open(&edit_id).await;
    d.click("[data-testid=answer-in-full]").await;
    let decision = d.question(0, "decision").await;
    let diff = d.text("[data-testid=description] pre code").await;
    for line in [
        "-    items.iter().map(|i| i.price).sum()",
        "+    items.iter().map(|i| i.price * i.quantity).sum()",
    ] {
        assert!(diff.contains(line), "{line:?} in the diff: {diff:?}");
    }
    d.screenshot("permission-edit").await;
    let css = format!("input[type=radio][value={}]", css_str("Deny"));
    let deny = d.find_in(&decision, &css).await;
    d.click_element(&deny).await;
    let reason = d.question(1, "reason").await;
    let text = d
        .find_in(&reason, "[data-testid=text-input], textarea")
        .await;
    d.type_into(&text, "Quantities are applied in checkout, not here.")
        .await;
    d.click("[data-testid=review]").await;
    d.find("[data-testid=confirm-screen]").await;
    d.submit().await;
    let printed = hook.decision().await;
    let specific = &printed["hookSpecificOutput"];
    assert_eq!(specific["hookEventName"], "PreToolUse", "{printed}");
    assert_eq!(specific["permissionDecision"], "deny", "{printed}");
    assert_eq!(
        specific["permissionDecisionReason"], "Quantities are applied in checkout, not here.",
        "{printed}"
    );
    d.finish().await;
}
