//! One key from the Pending list, in the real window: the reading pane shows the selected
//! request whole, one key answers a simple one (an agent's permission prompt, a yes/no, a
//! single choice), and a key that comes before the request has been on screen for the
//! arming time, or that is typed into a field, decides nothing. See `util/desktop.rs` for
//! the harness.

use std::time::Duration;

use fantoccini::key::Key;
use serde_json::json;

use crate::util::desktop::{self, css_str, Desktop, STEP};
use crate::util::waiting_hook::{hook_request_id, WaitingHook};

/// The pane shows request `id` and takes keys for it.
async fn armed_on(d: &Desktop, id: &str) {
    d.find(&format!(
        "[data-testid=reading-pane][data-id={}][data-armed=true]",
        css_str(id)
    ))
    .await;
}

fn confirm(id: &str) -> String {
    json!({"inbox": 1, "title": format!("Confirm {id}"), "source": {"app": "planu"},
           "questions": [{"id": "q1", "type": "confirm", "question": format!("Go on with {id}?")}]})
    .to_string()
}

fn enter() -> String {
    char::from(Key::Enter).to_string()
}

/// Claude Code's permission prompt through the real hook: one key allows it (the first
/// option), one key picks Claude Code's own suggested rule, and Deny takes its reason in
/// place (Enter sends it; Esc denies with none).
#[tokio::test]
async fn a_permission_request_is_answered_with_one_key_from_the_list() {
    let d = Desktop::start().await;

    // 1: Allow once.
    let hook = WaitingHook::start(&d, "permission-request-suggestions.json");
    let first = hook_request_id(&d, &[]).await;
    armed_on(&d, &first).await;
    let code = d
        .text("[data-testid=reading-pane] [data-testid=description] pre code")
        .await;
    assert!(code.contains("npm test -- --watch=false"), "{code:?}");
    let labels: Vec<String> = {
        let mut labels = Vec::new();
        for option in d
            .all("[data-testid=reading-pane] [data-testid=quick-option]")
            .await
        {
            let text = d.text_of(&option).await;
            labels.push(text.split_whitespace().collect::<Vec<_>>().join(" "));
        }
        labels
    };
    assert_eq!(labels.len(), 5, "{labels:?}");
    // The window's keys, on Claude Code's own choices, in its order.
    assert_eq!(labels[0], "1 Allow once", "{labels:?}");
    assert_eq!(labels[1], "2 Deny", "{labels:?}");
    assert!(
        labels[3].starts_with("4 Yes, and don't ask again for: npm test *"),
        "{labels:?}"
    );
    d.screenshot("reading-pane-permission").await;
    d.press_keys("1").await;
    let printed = hook.decision().await;
    assert_eq!(
        printed["hookSpecificOutput"]["decision"],
        json!({"behavior": "allow"}),
        "{printed}"
    );

    // 4: Claude Code's own rule for the project ("don't ask again"), as its dialog offers it.
    let hook = WaitingHook::start(&d, "permission-request-suggestions.json");
    let second = hook_request_id(&d, std::slice::from_ref(&first)).await;
    armed_on(&d, &second).await;
    d.press_keys("4").await;
    let printed = hook.decision().await;
    let decision = &printed["hookSpecificOutput"]["decision"];
    assert_eq!(decision["behavior"], "allow", "{printed}");
    assert_eq!(
        decision["updatedPermissions"][0]["destination"], "localSettings",
        "{printed}"
    );

    // 2, a reason, Enter: denied, and Claude is told why.
    let answered = [first.clone(), second.clone()];
    let hook = WaitingHook::start(&d, "pre-tool-use-edit.json");
    let third = hook_request_id(&d, &answered).await;
    armed_on(&d, &third).await;
    d.press_keys("2").await;
    let reason = d.find("[data-testid=quick-reason]").await;
    d.type_into(&reason, "Quantities are applied in checkout.")
        .await;
    d.press_keys(&enter()).await;
    let printed = hook.decision().await;
    let specific = &printed["hookSpecificOutput"];
    assert_eq!(specific["permissionDecision"], "deny", "{printed}");
    assert_eq!(
        specific["permissionDecisionReason"], "Quantities are applied in checkout.",
        "{printed}"
    );

    // 2, Esc: denied without a reason.
    let answered = [first, second, third];
    let hook = WaitingHook::start(&d, "pre-tool-use-bash.json");
    let fourth = hook_request_id(&d, &answered).await;
    armed_on(&d, &fourth).await;
    d.press_keys("2").await;
    d.find("[data-testid=quick-reason]").await;
    d.press_keys(&char::from(Key::Escape).to_string()).await;
    let printed = hook.decision().await;
    assert_eq!(
        printed["hookSpecificOutput"]["permissionDecision"], "deny",
        "{printed}"
    );
    d.finish().await;
}

/// A yes/no takes `y`; a single choice takes its number; the next request is then selected
/// and waits its own arming time.
#[tokio::test]
async fn a_yes_no_and_a_choice_take_one_key_each() {
    let d = Desktop::start().await;
    d.place_request("one-confirm", &confirm("one-confirm"));
    armed_on(&d, "one-confirm").await;
    d.press_keys("y").await;
    let outcome = d.wait_for_outcome("one-confirm").await;
    assert_eq!(outcome["answers"], json!({"q1": true}), "{outcome}");

    d.place_request(
        "one-choice",
        &json!({"inbox": 1, "title": "Pick a region", "questions": [{"id": "region",
            "type": "single_choice", "question": "Which region?", "choices": [
                {"id": "eu", "label": "Europe"}, {"id": "us", "label": "Americas"},
                {"id": "ap", "label": "Asia"}]}]})
        .to_string(),
    );
    armed_on(&d, "one-choice").await;
    d.press_keys("2").await;
    let outcome = d.wait_for_outcome("one-choice").await;
    assert_eq!(outcome["answers"], json!({"region": "us"}), "{outcome}");
    d.finish().await;
}

/// A key 100 ms after a new request appeared under the selection is ignored (the pane says
/// so) and never queued: nothing is written, then or later, until a key after arming.
#[tokio::test]
async fn a_key_before_arming_writes_nothing() {
    let d = Desktop::start().await;
    // The page's own clock: when the pane first showed the request, as it saw it.
    d.js(
        "window.__shown = null; new MutationObserver(() => { \
           const pane = document.querySelector('[data-testid=reading-pane]'); \
           if (!window.__shown && pane && pane.dataset.id === 'early') window.__shown = performance.now(); \
         }).observe(document.body, {subtree: true, attributes: true, childList: true});",
    )
    .await;
    d.place_request("early", &confirm("early"));
    d.wait_js(
        "the pane to show the new request",
        STEP,
        "return window.__shown !== null;",
    )
    .await;
    // Pressed 100 ms after it appeared, by the page's clock.
    d.js_async(
        "const done = arguments[arguments.length - 1]; \
         const wait = Math.max(0, window.__shown + 100 - performance.now()); \
         setTimeout(done, wait);",
    )
    .await;
    d.press_keys("y").await;
    let pressed_after = d
        .js("return performance.now() - window.__shown;")
        .await
        .as_f64()
        .unwrap();
    assert!(
        pressed_after < 700.0,
        "the key came {pressed_after} ms after the request: not early (a slow machine?)"
    );
    let said = d.text("[data-testid=arming]").await;
    assert!(
        said.contains("Too soon"),
        "the pane says the key was ignored: {said:?}"
    );
    // Never queued: still nothing well after arming.
    tokio::time::sleep(Duration::from_millis(1500)).await;
    assert!(
        !d.outcome_path("early").exists(),
        "an early key wrote an outcome"
    );
    armed_on(&d, "early").await;
    d.press_keys("n").await;
    let outcome = d.wait_for_outcome("early").await;
    assert_eq!(outcome["answers"], json!({"q1": false}), "{outcome}");
    d.finish().await;
}

/// Keys typed into the search box while requests arrive stay in the search box: none
/// answers anything, armed or not.
#[tokio::test]
async fn typing_while_a_request_arrives_answers_nothing() {
    let d = Desktop::start().await;
    d.place_request("typed-1", &confirm("typed-1"));
    armed_on(&d, "typed-1").await;
    let search = d.find("[data-testid=search]").await;
    d.click_element(&search).await;
    let mut typed = String::new();
    for (i, key) in "yny1y2n".chars().enumerate() {
        if i == 2 {
            d.place_request("typed-2", &confirm("typed-2"));
        }
        d.press_keys(&key.to_string()).await;
        typed.push(key);
        tokio::time::sleep(Duration::from_millis(150)).await;
    }
    let value = d
        .js("return document.querySelector('[data-testid=search]').value;")
        .await;
    assert_eq!(value, json!(typed), "every key went into the search box");
    // Past any arming time: still nothing.
    tokio::time::sleep(Duration::from_millis(800)).await;
    for id in ["typed-1", "typed-2"] {
        assert!(!d.outcome_path(id).exists(), "{id} was answered by typing");
    }
    // Esc leaves the search box; then a key answers the request shown.
    d.press_keys(&char::from(Key::Escape).to_string()).await;
    let shown = desktop::eventually("a request in the pane", STEP, || async {
        let id = d
            .js("return document.querySelector('[data-testid=reading-pane][data-armed=true]')?.dataset.id ?? null;")
            .await;
        id.as_str().map(str::to_owned)
    })
    .await;
    d.press_keys("y").await;
    d.wait_for_outcome(&shown).await;
    d.finish().await;
}

/// Claude Code stops waiting (the operator answered in its own dialog, pressed Esc, or the
/// session ended) and stops the hook with SIGTERM: within a second the request is gone from
/// the list and its bubble is closed on the bus (CloseNotification), and the hook printed
/// nothing that allows.
#[tokio::test]
async fn a_prompt_the_agent_stopped_waiting_for_leaves_every_surface() {
    let d = Desktop::start().await;
    let hook = WaitingHook::start(&d, "permission-request-bash.json");
    let id = hook_request_id(&d, &[]).await;
    d.wait_notify("Claude Code wants to run: rm -rf target/ && cargo build --release")
        .await;
    assert!(d.session.close_calls().is_empty());
    let stopped = std::time::Instant::now();
    let (_, printed) = hook.terminate();
    // Nothing printed: Claude Code's own dialog decides, as if the hook had not been there.
    assert_eq!(printed, "", "a stopped hook allows nothing");
    loop {
        if !d.session.close_calls().is_empty() {
            break;
        }
        assert!(
            stopped.elapsed() < Duration::from_secs(1),
            "no CloseNotification within 1 s of SIGTERM"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let listed = d.cli(&d.db(), &["list", "--json"]);
    let listed = String::from_utf8_lossy(&listed.stdout);
    assert!(!listed.contains(&id), "{id} is no longer listed: {listed}");
    desktop::eventually("the row gone from the window", STEP, || async {
        (!d.row_ids().await.contains(&id)).then_some(())
    })
    .await;
    d.finish().await;
}

/// A batch of five keeps its tabs and review step, at one key per question: a key that
/// answers a yes/no or a single choice moves on to the next question, the last one to the
/// review step, where every answer is shown before Ctrl+Enter sends them (7 keys from the
/// list, within the two per question plus one the agent's terminal would need).
#[tokio::test]
async fn a_batch_takes_a_key_per_question_and_keeps_its_review() {
    let d = Desktop::start().await;
    d.place_request(
        "batch-5",
        &json!({"inbox": 1, "title": "Release checklist", "questions": [
            {"id": "tests", "question": "Did the release tests pass?", "type": "confirm"},
            {"id": "channel", "question": "Which channel?", "type": "choice",
             "options": ["stable", "beta", "nightly"]},
            {"id": "notes", "question": "Publish the release notes now?", "type": "confirm"},
            {"id": "window", "question": "When should it go out?", "type": "choice",
             "options": ["now", "tonight", "tomorrow"]},
            {"id": "announce", "question": "Announce it in the team channel?", "type": "confirm"}]})
        .to_string(),
    );
    armed_on(&d, "batch-5").await;
    // A batch is not answered from the pane: a number there does nothing.
    d.press_keys("2").await;
    d.press_keys(&enter()).await;
    d.find("[data-testid=answer-view][data-id=batch-5]").await;
    for key in ["y", "2", "n", "3", "y"] {
        d.press_keys(key).await;
    }
    let review = d.find("[data-testid=confirm-screen]").await;
    let shown = d.text_of(&review).await;
    for answer in ["beta", "tomorrow"] {
        assert!(
            shown.contains(answer),
            "{answer} on the review step: {shown}"
        );
    }
    assert!(
        !d.outcome_path("batch-5").exists(),
        "nothing is sent before the review"
    );
    d.press_keys(&(Key::Control + &enter())).await;
    let outcome = d.wait_for_outcome("batch-5").await;
    assert_eq!(
        outcome["answers"],
        json!({"tests": true, "channel": "beta", "notes": false, "window": "tomorrow",
               "announce": true}),
        "{outcome}"
    );
    d.finish().await;
}

/// Teams (docs/TEAMS.md) in the window: a request the team's policy assigns to another member
/// is shown read-only, with who answers it; one that needs two people's approval records this
/// operator's as "1 of 2" and stays pending. The app's operator is root; the other member is
/// the system account `daemon`, in a team spool of the group `daemon`.
#[tokio::test]
async fn a_request_assigned_to_another_is_read_only_and_two_person_approval_counts() {
    use std::os::unix::fs::{MetadataExt, PermissionsExt};
    // The account database as `getent group daemon` has it.
    let groups = std::fs::read_to_string("/etc/group").unwrap();
    let daemon_gid: u32 = groups
        .lines()
        .find_map(|line| line.strip_prefix("daemon:"))
        .and_then(|rest| rest.split(':').nth(1)?.parse().ok())
        .expect("the daemon group");
    if tempfile::tempdir()
        .unwrap()
        .path()
        .metadata()
        .unwrap()
        .uid()
        != 0
    {
        eprintln!("SKIPPED: a team spool of another group needs root");
        return;
    }
    let d = Desktop::start_prepared(|root| {
        let spool = root.join("spool");
        std::fs::create_dir_all(&spool).unwrap();
        std::os::unix::fs::chown(&spool, None, Some(daemon_gid)).unwrap();
        std::fs::set_permissions(&spool, std::fs::Permissions::from_mode(0o2770)).unwrap();
        // The team's policy: the spool owner's file, read by every member's inbox alike.
        std::fs::write(
            spool.join("team-policy.toml"),
            "[[rule]]\nname = \"rotations-are-daemons\"\ntitle = \"*Rotate*\"\nassign = [\"daemon\"]\n\n\
             [[rule]]\nname = \"deploys-need-two\"\ntitle = \"*Deploy*\"\nassign = [\"root\", \"daemon\"]\n\
             approvals = 2\n",
        )
        .unwrap();
        let settings = root.join("config/answer-inbox/settings.json");
        std::fs::create_dir_all(settings.parent().unwrap()).unwrap();
        std::fs::write(
            &settings,
            json!({"spool_dir": spool.display().to_string(), "team": "daemon"}).to_string(),
        )
        .unwrap();
    })
    .await;
    d.place_request("rotate-1", &confirm("Rotate the signing keys"));
    d.place_request("deploy-1", &confirm("Deploy to production"));
    desktop::eventually("both rows", STEP, || async {
        (d.row_ids().await.len() == 2).then_some(())
    })
    .await;
    let badge = d.text("[data-id=rotate-1] [data-testid=assigned]").await;
    assert_eq!(badge, "assigned to daemon");

    d.open("rotate-1").await;
    let notice = d.text("[data-testid=assigned-notice]").await;
    assert!(notice.contains("Assigned to daemon"), "{notice}");
    assert!(
        d.all("[data-testid=submit]:not([disabled])")
            .await
            .is_empty(),
        "no submit for a request assigned to another"
    );
    d.screenshot("team-assigned").await;
    d.click("[data-testid=back-to-list]").await;

    d.open("deploy-1").await;
    d.click("[data-testid=yes]").await;
    d.submit().await;
    let approved = d.text("[data-testid=approved]").await;
    assert!(approved.contains("1 of 2: approved by root"), "{approved}");
    d.screenshot("team-approvals").await;
    assert!(
        !d.outcome_path("deploy-1").exists(),
        "one approval of two settles nothing"
    );
    d.finish().await;
}
