//! The served page end to end, on a phone: `answer-inbox serve` on a private spool, a
//! headless Chromium with a phone's screen pairs with it, lists and answers requests, and
//! outcome files come out, recorded as answered from the web by that device. See
//! `util/browser.rs` for the harness.
//!
//! Needs the built binaries (`cargo build --workspace --bins`), the built UI (scripts/ui) and
//! Debian's chromium and chromium-driver. `UPDATE_SCREENSHOTS=1` refreshes the phone-*.png
//! screenshots in docs/screenshots/.

use std::time::Duration;

use serde_json::{json, Value};

use crate::util::browser::Web;
use crate::util::desktop::{css_str, STEP};
use crate::util::requests::{MIGRATE, RELEASE, STORAGE};
use crate::util::{operator, stderr, stdout};

/// How soon a request placed in the spool must show in an open page, unasked: the page does
/// not poll, so only the server's event stream brings it (generous for a busy machine).
const LIVE: Duration = Duration::from_secs(10);

/// How long a revoked device's open page may keep its event stream: the server checks the
/// device at each keep-alive (15 s), then the browser reconnects, is refused and asks.
const STREAM_REVOKED: Duration = Duration::from_secs(40);

/// How long a page may take to notice that the server is back: the browser's own retry of
/// the event stream, or the page's (1 s, doubled after each failure).
const RECONNECT: Duration = Duration::from_secs(30);

/// A single yes/no question in the structured dialect: answered as `q1`.
fn deploy(title: &str) -> String {
    json!({"inbox": 1, "title": title,
           "source": {"app": "planu", "run": "run-7f3a", "tool": "deploy_spec"},
           "questions": [{"label": "Deploy", "type": "yes_no",
                          "question": format!("{title} to production now?")}]})
    .to_string()
}

/// What an answer given on the page records: the answers, who (the OS account, as for every
/// answer a person gives), where (`web`) and from which device.
fn assert_answered_from(outcome: &Value, id: &str, device: &str, answers: Value, custom: Value) {
    assert_eq!(outcome["id"], id, "{outcome:#}");
    assert_eq!(outcome["status"], "answered", "{outcome:#}");
    assert_eq!(outcome["answers"], answers, "{outcome:#}");
    assert_eq!(outcome["custom"], custom, "{outcome:#}");
    assert_eq!(outcome["defaulted"], json!([]), "{outcome:#}");
    assert_eq!(outcome["answered_by"], operator().as_str(), "{outcome:#}");
    assert_eq!(outcome["surface"], "web", "{outcome:#}");
    assert_eq!(outcome["device"], device, "{outcome:#}");
}

/// The id of the one device `answer-inbox devices` lists under `name`.
fn device_id(web: &Web, name: &str) -> String {
    let out = web.cli(&["devices"]);
    assert!(out.status.success(), "devices: {}", stderr(&out));
    let listing = stdout(&out);
    // A line is `<id>  <name>  paired …`; a name may itself hold a space.
    let ids: Vec<&str> = listing
        .lines()
        .filter_map(|line| line.split_once(char::is_whitespace))
        .filter(|(_, rest)| {
            rest.trim_start()
                .strip_prefix(name)
                .is_some_and(|after| after.starts_with("  "))
        })
        .map(|(id, _)| id)
        .collect();
    assert_eq!(ids.len(), 1, "one device named {name}:\n{listing}");
    ids[0].to_owned()
}

/// The pairing link opened on a phone: it asks for a name, pairs, drops the one-time code from
/// the address, and shows the empty inbox; a request placed afterwards shows up by itself,
/// without a reload. The device is then forgotten from its own page.
#[tokio::test]
async fn a_phone_pairs_from_the_link_and_sees_requests_arrive_live() {
    let web = Web::start().await;
    let link = web.server.pair_link.clone();
    web.goto(&link).await;
    let screen = web.find("[data-testid=pair-screen]").await;
    let text = web.text_of(&screen).await;
    assert!(text.contains("Name for this device"), "{text}");
    assert_eq!(
        web.count("[data-testid=pair-fingerprint]").await,
        0,
        "plain HTTP on loopback has no certificate to check"
    );
    let name = web.find("#pair-name").await;
    web.clear_field(&name).await;
    web.type_into(&name, "Phone").await;
    web.assert_fits("the pairing screen").await;
    web.screenshot("phone-pair").await;
    web.click("#pair-submit").await;

    web.wait_ready().await;
    web.find("[data-testid=pending-list]").await;
    let empty = web.text("[data-testid=empty]").await;
    assert!(!empty.trim().is_empty(), "the empty inbox says so");
    assert_eq!(web.count("[data-testid=row]").await, 0);
    assert_eq!(web.count("#pair-error").await, 0);
    let address = web.js("return location.href").await;
    assert_eq!(
        address,
        json!(format!("{}/", web.server.base)),
        "the spent code is dropped from the address"
    );
    let listing = stdout(&web.cli(&["devices"]));
    assert!(listing.contains("Phone"), "{listing}");

    // Live: the request shows without a reload (a reload would lose this marker).
    web.js("window.__sameDocument = true; return true").await;
    web.place_request("deploy-1", &deploy("Deploy SPEC-042"));
    let row = web
        .find_within("[data-testid=row][data-id=\"deploy-1\"]", LIVE)
        .await;
    let row_text = web.text_of(&row).await;
    assert!(row_text.contains("Deploy SPEC-042"), "{row_text}");
    assert_eq!(
        web.js("return window.__sameDocument === true").await,
        json!(true),
        "the page was not reloaded"
    );
    let count = web.text("[data-testid=pending-count]").await;
    assert!(count.contains('1'), "{count}");

    // "This device" takes the place of Settings: its name, and forgetting it.
    web.click("[data-testid=nav-device]").await;
    assert_eq!(web.text("#device-name").await.trim(), "Phone");
    web.assert_fits("This device").await;
    web.click("#forget-device").await;
    let unpaired = web.find("#unpaired").await;
    assert_eq!(
        unpaired.attr("data-why").await.unwrap().as_deref(),
        Some("forgotten")
    );
    let listing = stdout(&web.cli(&["devices"]));
    assert!(
        listing.contains("revoked"),
        "forgotten is revoked: {listing}"
    );
    web.finish().await;
}

/// Every kind of question in both dialects, answered on a phone through each batch's review
/// step: the outcomes carry the answers, `surface: "web"` and the device's name. The phone
/// layout fits the screen throughout (screenshots of the list, a question, the review).
#[tokio::test]
async fn every_question_kind_is_answered_on_a_phone() {
    let web = Web::paired("Phone").await;
    web.place_request("release-24", RELEASE);
    web.place_request("storage-91c2", STORAGE);
    web.row("release-24").await;
    web.row("storage-91c2").await;
    web.assert_fits("the pending list").await;
    web.screenshot("phone-list").await;

    // Interactive dialect: confirm, choice with a fill-in, multiChoice, text with a pattern.
    web.open("release-24").await;
    // The request has the phone's screen: no navigation, a way back at the top.
    web.wait_gone("[data-testid=nav-pending]").await;
    web.find("#back").await;
    let ship = web.question("ship").await;
    let yes = web.find_in(&ship, "[data-testid=yes]").await;
    web.click_element(&yes).await;

    let env = web.question("env").await;
    let fill_in = web.find_in(&env, "[data-testid=fill-in]").await;
    web.type_into(&fill_in, "hotfix-7").await;

    let tags = web.question("tags").await;
    for value in ["payments", "urgent"] {
        web.pick(&tags, value).await;
    }
    web.assert_fits("a question").await;
    web.screenshot("phone-answer").await;

    let ticket = web.question("ticket").await;
    let text = web.find_in(&ticket, "[data-testid=text-input]").await;
    web.type_into(&text, "ops 12").await;
    let error = web.text("[data-testid=field-error]").await;
    assert!(error.contains("match"), "a pattern error is shown: {error}");
    web.clear_field(&text).await;
    web.type_into(&text, "OPS-12").await;
    web.wait_gone("[data-testid=field-error]").await;

    web.click("[data-testid=review]").await;
    web.find("[data-testid=confirm-screen]").await;
    let lines = web.all("[data-testid=summary-line]").await;
    assert_eq!(lines.len(), 4, "one summary line per question");
    let mut summary = String::new();
    for line in &lines {
        summary.push_str(&web.text_of(line).await);
        summary.push('\n');
    }
    for shown in ["hotfix-7", "payments", "urgent", "OPS-12"] {
        assert!(
            summary.contains(shown),
            "{shown} in the summary:\n{summary}"
        );
    }
    web.assert_fits("the review step").await;
    // The picture shows the summary and Submit, not the request's header above them.
    web.scroll_to("[data-testid=confirm-screen]").await;
    web.screenshot("phone-review").await;
    web.submit().await;
    let outcome = web.wait_for_outcome("release-24").await;
    assert_answered_from(
        &outcome,
        "release-24",
        "Phone",
        json!({"ship": true, "env": "hotfix-7", "tags": ["payments", "urgent"], "ticket": "OPS-12"}),
        json!(["env"]),
    );
    let result = web.find("[data-testid=result]").await;
    assert_eq!(
        result.attr("data-status").await.unwrap().as_deref(),
        Some("answered")
    );
    let via = web
        .text("[data-testid=result] [data-testid=answered-via]")
        .await;
    assert!(via.contains("from Phone (web)"), "{via}");

    // Structured dialect: single_choice with a fill-in, yes_no, multi_choice, free_text.
    web.click("#back").await;
    web.wait_gone("[data-testid=row][data-id=\"release-24\"]")
        .await;
    web.open("storage-91c2").await;
    let database = web.question("q1").await;
    let fill_in = web.find_in(&database, "[data-testid=fill-in]").await;
    web.type_into(&fill_in, "CockroachDB").await;
    let caching = web.question("q2").await;
    let no = web.find_in(&caching, "[data-testid=no]").await;
    web.click_element(&no).await;
    let extras = web.question("q3").await;
    assert!(
        extras
            .find_all(fantoccini::Locator::Css("[data-testid=fill-in]"))
            .await
            .unwrap()
            .is_empty(),
        "allow_custom: false offers no fill-in"
    );
    for value in ["read", "pitr"] {
        web.pick(&extras, value).await;
    }
    let concerns = web.question("q4").await;
    let text = web.find_in(&concerns, "[data-testid=text-input]").await;
    web.type_into(&text, "Keep the old cluster for a week.")
        .await;
    web.assert_fits("a free-text question").await;

    web.click("[data-testid=review]").await;
    let screen = web.find("[data-testid=confirm-screen]").await;
    let screen_text = web.text_of(&screen).await;
    assert!(
        screen_text.contains("Ready to configure?"),
        "the request's confirm_title heads the review: {screen_text}"
    );
    assert_eq!(web.all("[data-testid=summary-line]").await.len(), 4);
    web.assert_fits("the structured request's review step")
        .await;
    web.submit().await;
    let outcome = web.wait_for_outcome("storage-91c2").await;
    assert_answered_from(
        &outcome,
        "storage-91c2",
        "Phone",
        json!({"q1": "CockroachDB", "q2": false, "q3": ["read", "pitr"],
               "q4": "Keep the old cluster for a week."}),
        json!(["q1"]),
    );
    web.finish().await;
}

#[tokio::test]
async fn declining_on_a_phone_writes_a_declined_outcome_with_the_reason() {
    let web = Web::paired("Phone").await;
    web.place_request("migrate-513", MIGRATE);
    web.open("migrate-513").await;
    web.click("[data-testid=decline]").await;
    let reason = web.find("[data-testid=decline-reason]").await;
    web.type_into(&reason, "Not during the freeze.").await;
    web.assert_fits("the decline box").await;
    web.click("[data-testid=decline-confirm]").await;

    let outcome = web.wait_for_outcome("migrate-513").await;
    assert_eq!(outcome["status"], "declined", "{outcome:#}");
    assert_eq!(outcome["reason"], "Not during the freeze.", "{outcome:#}");
    assert_eq!(outcome["answers"], json!({}), "{outcome:#}");
    assert_eq!(outcome["answered_by"], operator().as_str(), "{outcome:#}");
    assert_eq!(outcome["surface"], "web", "{outcome:#}");
    assert_eq!(outcome["device"], "Phone", "{outcome:#}");
    let result = web.find("[data-testid=result]").await;
    assert_eq!(
        result.attr("data-status").await.unwrap().as_deref(),
        Some("declined")
    );
    let shown = web.text_of(&result).await;
    assert!(shown.contains("Not during the freeze."), "{shown}");
    web.finish().await;
}

/// An agent's permission prompt on a phone: its options, one tap each, in the order the
/// window's keys and the desktop bubble give them (Allow once, Deny, the agent's own rules);
/// Deny takes its optional reason in place.
#[tokio::test]
async fn an_agents_permission_prompt_is_one_tap_on_a_phone() {
    let web = Web::paired("Phone").await;
    // The shape `answer-inbox hook claude-code` places for a PermissionRequest.
    let request = json!({"inbox": 1, "title": "Claude Code wants to run: npm test",
        "source": {"app": "claude-code", "run": "8d1e6b40", "tool": "Bash", "project": "shop"},
        "priority": "high",
        "questions": [
            {"id": "decision", "type": "choice", "question": "Allow Claude Code to use Bash?",
             "options": ["Allow once", "Deny",
                         "Yes, and don't ask again for: npm test * (saved in .claude/settings.local.json)"],
             "description": "**Run a shell command** in `/home/dana/src/shop`:\n\n```sh\nnpm test\n```"},
            {"id": "reason", "type": "text", "required": false,
             "question": "If you deny it: why? (Claude Code is told)"}]});
    web.place_request("perm-1", &request.to_string());
    web.open("perm-1").await;
    let strip = web.find("[data-testid=quick-panel]").await;
    let code = web
        .text("[data-testid=quick-panel] [data-testid=description] pre code")
        .await;
    assert_eq!(
        code.trim(),
        "npm test",
        "the call is shown above its options"
    );
    let mut labels = Vec::new();
    // A phone has no keys to show: the options' own words, in order.
    for option in web.all("[data-testid=quick-option] span").await {
        labels.push(web.text_of(&option).await);
    }
    assert_eq!(labels.len(), 3, "{labels:?}");
    assert_eq!(labels[0], "Allow once");
    assert_eq!(labels[1], "Deny");
    assert!(
        labels[2].starts_with("Yes, and don't ask again"),
        "{labels:?}"
    );
    web.find("[data-testid=quick][data-armed=true]").await;
    web.assert_fits("a permission prompt").await;
    web.scroll_to("[data-testid=quick-panel]").await;
    web.screenshot("phone-permission").await;
    let deny = web
        .find_in(&strip, "[data-testid=quick-option][data-key='2']")
        .await;
    web.click_element(&deny).await;
    let reason = web.find("[data-testid=quick-reason]").await;
    web.type_into(&reason, "Not on the shared runner.").await;
    web.press_keys(&char::from(fantoccini::key::Key::Enter).to_string())
        .await;
    let outcome = web.wait_for_outcome("perm-1").await;
    assert_answered_from(
        &outcome,
        "perm-1",
        "Phone",
        json!({"decision": "Deny", "reason": "Not on the shared runner."}),
        json!([]),
    );
    web.finish().await;
}

/// Another surface (the command line) answers first. While the page is only showing the
/// request, it hears so at once and closes the form; when its own submit crosses the other
/// answer, the page says who won, and the outcome that stands is the command line's.
#[tokio::test]
async fn an_answer_from_the_command_line_first_wins_and_the_page_says_so() {
    let web = Web::paired("Phone").await;

    // 1. The page hears of it while the request is open and closes the form.
    web.place_request("deploy-a", &deploy("Deploy SPEC-042"));
    web.open("deploy-a").await;
    web.click("[data-testid=yes]").await;
    let out = web.cli(&["answer", "deploy-a", "--set", "q1=no"]);
    assert!(out.status.success(), "the CLI answers: {}", stderr(&out));
    let written = std::fs::read(web.outcome_path("deploy-a")).unwrap();
    let notice = web.text("[data-testid=notice]").await;
    assert!(
        notice.contains(&operator()),
        "the notice names who settled it: {notice}"
    );
    let submit = web.find("[data-testid=submit]").await;
    assert!(
        !submit.is_enabled().await.unwrap(),
        "nothing can be submitted over the command line's answer"
    );
    let show = web
        .client()
        .find(fantoccini::Locator::XPath(
            "//*[@data-testid='notice']//button[contains(., 'Show the outcome')]",
        ))
        .await
        .unwrap();
    web.click_element(&show).await;
    let via = web
        .find("[data-testid=outcome] [data-testid=answered-via]")
        .await;
    assert_eq!(
        via.attr("data-surface").await.unwrap().as_deref(),
        Some("cli")
    );
    let via = web.text_of(&via).await;
    assert!(via.contains("on the command line"), "{via}");
    assert_eq!(
        std::fs::read(web.outcome_path("deploy-a")).unwrap(),
        written,
        "the outcome file is the command line's"
    );

    // 2. The page's submit crosses the command line's answer: the server is paused while the
    //    command line answers and the page submits, so the page hears of neither first.
    web.click("#back").await;
    web.place_request("deploy-b", &deploy("Deploy SPEC-043"));
    web.open("deploy-b").await;
    web.click("[data-testid=yes]").await;
    let css = "[data-testid=question][data-qid=\"q1\"][data-state=answered]";
    web.find(css).await;
    let submit = web.find("[data-testid=submit]").await;
    crate::util::desktop::eventually("Submit to be enabled", STEP, || async {
        submit.is_enabled().await.unwrap_or(false).then_some(())
    })
    .await;
    // The page's own check of the answer (a request to the server) has time to come back, so
    // the server is paused idle, not in the middle of something the command line waits for.
    tokio::time::sleep(Duration::from_millis(300)).await;
    let paused = web.server.pause();
    let out = web.cli(&["answer", "deploy-b", "--set", "q1=no"]);
    assert!(out.status.success(), "the CLI answers: {}", stderr(&out));
    let written = std::fs::read(web.outcome_path("deploy-b")).unwrap();
    web.click_element(&submit).await;
    drop(paused);

    let result = web.find("[data-testid=result]").await;
    let who = web.text("[data-testid=who-won]").await;
    assert!(
        who.contains(&operator()) && who.contains("on the command line"),
        "who won: {who}"
    );
    let result_text = web.text_of(&result).await;
    assert!(result_text.contains("was not recorded"), "{result_text}");
    let answer = web
        .text("[data-testid=result] [data-testid=outcome-answer][data-qid=\"q1\"]")
        .await;
    assert!(
        answer.starts_with("No"),
        "the CLI's answer is shown: {answer}"
    );
    assert_eq!(
        std::fs::read(web.outcome_path("deploy-b")).unwrap(),
        written,
        "the outcome file is still the command line's"
    );
    let outcome: Value = serde_json::from_slice(&written).unwrap();
    assert_eq!(outcome["answers"], json!({"q1": false}), "{outcome:#}");
    assert_eq!(outcome["surface"], "cli", "{outcome:#}");
    web.finish().await;
}

/// Markup in a request (its title, its markdown description) runs nothing in the browser,
/// links included, and the page is served with its Content-Security-Policy, which the browser
/// enforces.
#[tokio::test]
async fn a_request_cannot_run_script_in_the_browser() {
    let web = Web::paired("Phone").await;
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
                <svg onload=\"window.__pwned='svg'\"></svg> **bold stays** \
                [the docs](https://example.org/notes)"
        }]
    });
    web.place_request("notes-1", &request.to_string());

    let row = web.row("notes-1").await;
    let row_text = web.text_of(&row).await;
    assert!(
        row_text.contains("<img"),
        "the title is shown as text, not markup: {row_text}"
    );
    web.open("notes-1").await;
    let description = web.find("[data-testid=description]").await;
    assert!(web.text_of(&description).await.contains("bold stays"));
    let docs = description
        .find(fantoccini::Locator::Css("a[href^='https:']"))
        .await
        .unwrap();
    assert_eq!(
        docs.attr("target").await.unwrap().as_deref(),
        Some("_blank")
    );
    let rel = docs.attr("rel").await.unwrap().unwrap_or_default();
    assert!(
        rel.contains("noopener") && rel.contains("noreferrer"),
        "{rel}"
    );

    // Click every link but the web one (which would leave for the network): none may run
    // anything or leave the page.
    for link in description
        .find_all(fantoccini::Locator::Css("a:not([href^='https:'])"))
        .await
        .unwrap()
    {
        let _ = link.click().await;
    }
    tokio::time::sleep(Duration::from_millis(500)).await;

    let state = web
        .js(r#"const html = (document.querySelector('[data-testid=description]') || {}).innerHTML || '';
               return {pwned: window.__pwned === undefined ? null : String(window.__pwned),
                       title: document.title, html, url: location.href};"#)
        .await;
    assert_eq!(state["pwned"], Value::Null, "a payload ran: {state:#}");
    assert_eq!(
        state["url"],
        json!(format!("{}/", web.server.base)),
        "the page stayed: {state:#}"
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
    assert_eq!(
        web.client().windows().await.unwrap().len(),
        1,
        "no window was opened"
    );

    // The policy is sent, on the page and on the API, and the browser applies it.
    let csp = web
        .js_async(
            r#"const done = arguments[arguments.length - 1];
               Promise.all(['/', '/api/session'].map((path) =>
                   fetch(path, {cache: 'no-store'})
                     .then((r) => r.headers.get('content-security-policy'))))
                 .then(done, (e) => done('fetch failed: ' + e));"#,
        )
        .await;
    for policy in csp.as_array().unwrap_or_else(|| panic!("{csp}")) {
        let policy = policy.as_str().unwrap_or_default();
        for directive in [
            "script-src 'self'",
            "object-src 'none'",
            "frame-ancestors 'none'",
        ] {
            assert!(
                policy.contains(directive),
                "{directive} in the CSP: {csp:#}"
            );
        }
        assert!(!policy.contains("unsafe-inline"), "{policy}");
    }
    // Script the page itself would add inline is refused, and reported as the policy's doing.
    // (A WebDriver script is the browser's own, which the policy does not govern: it can
    // insert the element, not run it.)
    let enforced = web
        .js_async(
            r#"const done = arguments[arguments.length - 1];
               const violated = [];
               document.addEventListener('securitypolicyviolation',
                                         (e) => violated.push(e.effectiveDirective));
               const script = document.createElement('script');
               script.textContent = "window.__pwned = 'inline'";
               document.body.appendChild(script);
               setTimeout(() => done({violated,
                   pwned: window.__pwned === undefined ? null : window.__pwned}), 300);"#,
        )
        .await;
    assert_eq!(
        enforced,
        json!({"violated": ["script-src-elem"], "pwned": null}),
        "the browser enforces the CSP"
    );
    web.find("[data-testid=answer-view][data-id=\"notes-1\"]")
        .await;
    web.finish().await;
}

/// A browser that was never paired sees how to pair and nothing of the inbox. A paired one
/// revoked from the command line is signed out: at its next action, or, left alone, when
/// its event stream is refused.
#[tokio::test]
async fn an_unpaired_browser_sees_nothing_and_a_revoked_one_is_signed_out() {
    let web = Web::start().await;
    web.place_request("migrate-1", MIGRATE);

    // Never paired: the base address alone.
    web.goto(&format!("{}/", web.server.base)).await;
    let unpaired = web.find("#unpaired").await;
    assert_eq!(
        unpaired.attr("data-why").await.unwrap().as_deref(),
        Some("not-paired")
    );
    let text = web.text_of(&unpaired).await;
    assert!(text.contains("not paired"), "{text}");
    assert_eq!(web.count("[data-testid=row]").await, 0);
    assert_eq!(web.count("[data-testid=pending-list]").await, 0);
    let refused = web
        .js_async(
            r#"const done = arguments[arguments.length - 1];
               fetch('/api/list_pending', {method: 'POST', body: '{}',
                                            headers: {'content-type': 'application/json'}})
                 .then((r) => done(r.status), (e) => done('fetch failed: ' + e));"#,
        )
        .await;
    assert_eq!(refused, json!(401), "the API refuses an unpaired browser");
    web.assert_fits("the not-paired screen").await;

    // Paired, then revoked: the next action signs it out.
    let link = web.server.pair_link.clone();
    web.pair(&link, "Phone").await;
    web.row("migrate-1").await;
    let id = device_id(&web, "Phone");
    let out = web.cli(&["devices", "revoke", &id]);
    assert!(out.status.success(), "revoke: {}", stderr(&out));
    // Signed out at its next action, or sooner, when a fetch of its own (the list, the
    // event stream's reconnection) is refused first.
    let rows = web
        .shown("[data-testid=row][data-id=\"migrate-1\"]", None)
        .await;
    if let Some(row) = rows.into_iter().next() {
        // The row may be gone by the time it is clicked: the sign-out below is the check.
        let _ = row.click().await;
    }
    let unpaired = web.find("#unpaired").await;
    assert_eq!(
        unpaired.attr("data-why").await.unwrap().as_deref(),
        Some("signed-out")
    );
    assert_eq!(web.count("[data-testid=answer-view]").await, 0);

    // Paired again with a new link, then revoked and left alone: the event stream.
    let out = web.cli(&["devices", "pair"]);
    assert!(out.status.success(), "devices pair: {}", stderr(&out));
    let printed = stdout(&out);
    let link = printed
        .lines()
        .find_map(|line| line.strip_prefix("open: "))
        .unwrap_or_else(|| panic!("no link printed: {printed}"))
        .trim()
        .to_owned();
    assert!(
        link.starts_with(&format!("{}/#pair=", web.server.base)),
        "the link is for the running server: {link}"
    );
    web.pair(&link, "Phone 2").await;
    web.row("migrate-1").await;
    let id = device_id(&web, "Phone 2");
    let out = web.cli(&["devices", "revoke", &id]);
    assert!(out.status.success(), "revoke: {}", stderr(&out));
    let unpaired = web
        .find_within(
            &format!("#unpaired[data-why={}]", css_str("signed-out")),
            STREAM_REVOKED,
        )
        .await;
    let text = web.text_of(&unpaired).await;
    assert!(text.contains("signed out"), "{text}");
    assert!(
        !web.outcome_path("migrate-1").exists(),
        "nothing was answered"
    );
    web.finish().await;
}

/// The server goes away under an open page: the page says it is not hearing changes; once the
/// server is back (restarted on the same address) the page says nothing more, shows what
/// arrived meanwhile, and answers from it still count as the same device's.
#[tokio::test]
async fn the_page_says_when_the_server_is_gone_and_catches_up_when_it_is_back() {
    let mut web = Web::paired("Phone").await;
    web.server.stop();
    let banner = web.text("[data-testid=offline]").await;
    assert!(banner.contains("Reconnecting"), "{banner}");
    web.assert_fits("the offline banner").await;

    web.place_request("deploy-1", &deploy("Deploy SPEC-042"));
    web.server.restart(&web.inbox);
    web.wait_gone_within("[data-testid=offline]", RECONNECT)
        .await;
    web.row("deploy-1").await;

    web.open("deploy-1").await;
    web.click("[data-testid=yes]").await;
    web.submit().await;
    let outcome = web.wait_for_outcome("deploy-1").await;
    assert_answered_from(
        &outcome,
        "deploy-1",
        "Phone",
        json!({"q1": true}),
        json!([]),
    );
    web.find("[data-testid=result]").await;
    web.finish().await;
}
