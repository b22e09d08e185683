//! `answer-inbox hook claude-code`, as Claude Code runs it: a recorded hook payload on
//! standard input (tests/data/claude-code), the operator answering through `answer-inbox
//! answer`, and the decision JSON on standard output.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};

use serde_json::{json, Value};

use crate::util::{code, eventually, stderr, stdout, Inbox};

fn fixture(name: &str) -> Vec<u8> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("data/claude-code")
        .join(name);
    std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// Where the hook keeps session allowances for this inbox's account.
fn state_dir(inbox: &Inbox) -> PathBuf {
    inbox.dir.path().join("xdg-state")
}

fn hook_command(inbox: &Inbox, timeout: &str) -> Command {
    agent_hook_command(inbox, "claude-code", timeout)
}

fn agent_hook_command(inbox: &Inbox, agent: &str, timeout: &str) -> Command {
    let mut cmd = inbox.cmd(&["hook", agent, "--timeout", timeout]);
    // Never the account's own state directory.
    cmd.env("XDG_STATE_HOME", state_dir(inbox))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    cmd
}

/// Starts the hook with `payload` on its standard input, as Claude Code does.
fn start_hook(inbox: &Inbox, payload: &[u8], timeout: &str) -> Child {
    let mut child = hook_command(inbox, timeout).spawn().unwrap();
    child.stdin.take().unwrap().write_all(payload).unwrap();
    child
}

/// Runs the hook to its end, for calls that must not wait for anyone.
fn run_hook(inbox: &Inbox, payload: &[u8], timeout: &str) -> Output {
    start_hook(inbox, payload, timeout)
        .wait_with_output()
        .unwrap()
}

fn placed_ids(inbox: &Inbox) -> Vec<String> {
    let Ok(entries) = std::fs::read_dir(inbox.spool().join("questions")) else {
        return Vec::new();
    };
    entries
        .map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned())
        .filter_map(|name| name.strip_suffix(".json").map(str::to_owned))
        .collect()
}

/// Waits for the hook's request to be placed; its id and its body.
fn placed_request(inbox: &Inbox) -> (String, Value) {
    eventually("the hook to place its request", || {
        placed_ids(inbox).len() == 1
    });
    let id = placed_ids(inbox).remove(0);
    let path = inbox.spool().join("questions").join(format!("{id}.json"));
    (
        id,
        serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap(),
    )
}

fn answer(inbox: &Inbox, id: &str, args: &[&str]) {
    let mut all = vec!["answer", id];
    all.extend_from_slice(args);
    let out = inbox.run(&all);
    assert_eq!(code(&out), 0, "answer {args:?}: {}", stderr(&out));
}

/// The decision the hook printed, parsed.
fn printed(out: &Output) -> Value {
    assert_eq!(code(out), 0, "the hook failed: {}", stderr(out));
    serde_json::from_str(&stdout(out)).unwrap_or_else(|e| panic!("{e}: {}", stdout(out)))
}

fn pre_tool_use(out: &Output) -> (String, String) {
    let value = printed(out);
    let specific = &value["hookSpecificOutput"];
    assert_eq!(specific["hookEventName"], "PreToolUse", "{value}");
    (
        specific["permissionDecision"].as_str().unwrap().to_owned(),
        specific["permissionDecisionReason"]
            .as_str()
            .unwrap_or_default()
            .to_owned(),
    )
}

#[test]
fn allow_once_allows_the_call() {
    let inbox = Inbox::new();
    let hook = start_hook(&inbox, &fixture("pre-tool-use-bash.json"), "60s");
    let (id, request) = placed_request(&inbox);
    assert_eq!(request["source"]["app"], "claude-code");
    assert_eq!(
        request["source"]["run"],
        "3f9c2a7e-5b1d-4e8a-9c6f-0d2b4a8e1c37"
    );
    assert_eq!(request["source"]["project"], "shop");
    assert_eq!(request["timeout_seconds"], 60);
    answer(&inbox, &id, &["--set", "decision=Allow once"]);
    let (verdict, _) = pre_tool_use(&hook.wait_with_output().unwrap());
    assert_eq!(verdict, "allow");
}

#[test]
fn deny_carries_the_operators_reason_to_claude() {
    let inbox = Inbox::new();
    let hook = start_hook(&inbox, &fixture("pre-tool-use-bash.json"), "60s");
    let (id, _) = placed_request(&inbox);
    answer(
        &inbox,
        &id,
        &[
            "--set",
            "decision=Deny",
            "--set",
            "reason=no force pushes to shared branches",
        ],
    );
    let (verdict, reason) = pre_tool_use(&hook.wait_with_output().unwrap());
    assert_eq!(verdict, "deny");
    assert_eq!(reason, "no force pushes to shared branches");
}

#[test]
fn a_permission_request_gets_its_own_decision_shape() {
    let inbox = Inbox::new();
    let hook = start_hook(&inbox, &fixture("permission-request-bash.json"), "60s");
    let (id, _) = placed_request(&inbox);
    answer(&inbox, &id, &["--set", "decision=Deny"]);
    let value = printed(&hook.wait_with_output().unwrap());
    let specific = &value["hookSpecificOutput"];
    assert_eq!(specific["hookEventName"], "PermissionRequest");
    assert_eq!(specific["decision"]["behavior"], "deny");
    assert!(
        specific["decision"]["message"]
            .as_str()
            .is_some_and(|message| message.contains("denied")),
        "a deny without a reason still tells Claude: {value}"
    );
}

#[test]
fn allow_for_the_session_allows_the_same_command_again_without_asking() {
    let inbox = Inbox::new();
    let payload = fixture("pre-tool-use-bash.json");
    let hook = start_hook(&inbox, &payload, "60s");
    let (id, _) = placed_request(&inbox);
    answer(
        &inbox,
        &id,
        &[
            "--set",
            "decision=Allow this command for this session: \
             git push --force-with-lease origin feature/checkout-v2",
        ],
    );
    assert_eq!(pre_tool_use(&hook.wait_with_output().unwrap()).0, "allow");

    let memory = state_dir(&inbox)
        .join("answer-inbox/claude-code-sessions/3f9c2a7e-5b1d-4e8a-9c6f-0d2b4a8e1c37.json");
    let mode = std::fs::metadata(&memory).unwrap().permissions();
    assert_eq!(
        std::os::unix::fs::PermissionsExt::mode(&mode) & 0o777,
        0o600
    );

    // The same call again: allowed at once, nothing placed. A timeout of a second would
    // turn a placed request into "ask", so "allow" proves no one was asked.
    let again = run_hook(&inbox, &payload, "1s");
    assert_eq!(pre_tool_use(&again).0, "allow");
    assert_eq!(placed_ids(&inbox), vec![id.clone()], "no second request");

    // Another command in the same session is asked about (and, unanswered, falls back).
    let other = String::from_utf8(payload)
        .unwrap()
        .replace("git push --force-with-lease", "git push --force");
    let asked = run_hook(&inbox, other.as_bytes(), "1s");
    assert_eq!(pre_tool_use(&asked).0, "ask");
    assert_eq!(placed_ids(&inbox).len(), 2, "the other command was asked");
}

#[test]
fn declining_denies_with_the_decline_reason() {
    let inbox = Inbox::new();
    let hook = start_hook(&inbox, &fixture("pre-tool-use-edit.json"), "60s");
    let (id, _) = placed_request(&inbox);
    answer(&inbox, &id, &["--decline", "not during the release freeze"]);
    let (verdict, reason) = pre_tool_use(&hook.wait_with_output().unwrap());
    assert_eq!(verdict, "deny");
    assert_eq!(reason, "not during the release freeze");
}

#[test]
fn no_answer_in_time_falls_back_to_asking_in_the_terminal() {
    let inbox = Inbox::new();
    let out = run_hook(&inbox, &fixture("pre-tool-use-bash.json"), "1s");
    let (verdict, reason) = pre_tool_use(&out);
    assert_eq!(verdict, "ask");
    assert!(reason.contains("no answer"), "{reason}");
    // Withdrawn, so nobody answers a question Claude Code no longer waits for.
    let ids = placed_ids(&inbox);
    assert_eq!(ids.len(), 1);
    assert!(inbox.spool().join("cancel").join(&ids[0]).exists());

    // A PermissionRequest falls back by printing no decision at all.
    let out = run_hook(&inbox, &fixture("permission-request-bash.json"), "1s");
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert_eq!(stdout(&out), "");
}

#[test]
fn malformed_payloads_print_no_decision_and_exit_non_blocking() {
    let inbox = Inbox::new();
    let cases: [(&str, Vec<u8>, &str); 4] = [
        (
            "truncated JSON",
            fixture("malformed.json"),
            "not a JSON object",
        ),
        (
            "no tool_name",
            json!({"session_id": "s-1", "hook_event_name": "PreToolUse", "tool_input": {}})
                .to_string()
                .into_bytes(),
            "tool_name",
        ),
        (
            "another event",
            json!({"session_id": "s-1", "hook_event_name": "PostToolUse",
                "tool_name": "Bash", "tool_input": {"command": "ls"}})
            .to_string()
            .into_bytes(),
            "PostToolUse",
        ),
        (
            "a session id that is not a file name",
            json!({"session_id": "../../x", "hook_event_name": "PreToolUse",
                "tool_name": "Bash", "tool_input": {"command": "ls"}})
            .to_string()
            .into_bytes(),
            "session_id",
        ),
    ];
    for (case, payload, why) in cases {
        let out = run_hook(&inbox, &payload, "1s");
        // Exit 1: a non-blocking error, Claude Code shows its own prompt. Never 0 (its
        // output would be read) nor 2 (it would block a call nobody saw).
        assert_eq!(code(&out), 1, "{case}: {}", stderr(&out));
        assert_eq!(stdout(&out), "", "{case}: nothing to read as a decision");
        assert!(stderr(&out).contains(why), "{case}: {}", stderr(&out));
    }
    assert!(placed_ids(&inbox).is_empty(), "nothing was asked");
}

#[test]
fn the_description_shows_the_command_or_the_diff() {
    let inbox = Inbox::new();
    let description = |request: &Value| {
        request["questions"][0]["description"]
            .as_str()
            .unwrap()
            .to_owned()
    };

    let hook = start_hook(&inbox, &fixture("pre-tool-use-bash.json"), "60s");
    let (id, request) = placed_request(&inbox);
    let text = description(&request);
    assert!(
        text.contains("```sh\ngit push --force-with-lease origin feature/checkout-v2\n```"),
        "{text}"
    );
    assert!(text.contains("/home/dana/src/shop"), "{text}");
    answer(&inbox, &id, &["--set", "decision=Deny"]);
    hook.wait_with_output().unwrap();

    let inbox = Inbox::new();
    let hook = start_hook(&inbox, &fixture("pre-tool-use-edit.json"), "60s");
    let (id, request) = placed_request(&inbox);
    let text = description(&request);
    assert!(text.contains("/home/dana/src/shop/src/cart.rs"), "{text}");
    assert!(text.contains("```diff\n"), "{text}");
    assert!(
        text.contains(
            "-    items.iter().map(|i| i.price).sum()\n\
             +    items.iter().map(|i| i.price * i.quantity).sum()\n"
        ),
        "{text}"
    );
    assert!(
        text.contains(" fn total(items: &[Item]) -> u64 {\n"),
        "unchanged lines are context: {text}"
    );
    answer(&inbox, &id, &["--set", "decision=Deny"]);
    hook.wait_with_output().unwrap();

    let inbox = Inbox::new();
    let hook = start_hook(&inbox, &fixture("pre-tool-use-write.json"), "60s");
    let (id, request) = placed_request(&inbox);
    let text = description(&request);
    assert!(text.contains("release.yml"), "{text}");
    assert!(text.contains("cargo publish --token"), "{text}");
    answer(&inbox, &id, &["--set", "decision=Deny"]);
    hook.wait_with_output().unwrap();
}

/// Everything in the call that changes what runs reaches the operator: running outside the
/// sandbox, in the background, and any field the hook does not know, as `name: value`.
#[test]
fn the_description_shows_every_field_that_changes_what_runs() {
    let inbox = Inbox::new();
    let payload = json!({
        "session_id": "s-1", "hook_event_name": "PreToolUse", "cwd": "/w",
        "tool_name": "Bash",
        "tool_input": {"command": "make deploy", "dangerouslyDisableSandbox": true,
            "run_in_background": true, "env": {"LD_PRELOAD": "/tmp/x.so"}}
    });
    let hook = start_hook(&inbox, payload.to_string().as_bytes(), "60s");
    let (id, request) = placed_request(&inbox);
    let text = request["questions"][0]["description"].as_str().unwrap();
    assert!(text.contains("Runs outside the sandbox"), "{text}");
    assert!(
        text.contains("Run a shell command in the background"),
        "{text}"
    );
    assert!(
        text.contains("env: {\"LD_PRELOAD\":\"/tmp/x.so\"}"),
        "{text}"
    );
    answer(&inbox, &id, &["--set", "decision=Deny"]);
    hook.wait_with_output().unwrap();
}

/// Codex's PermissionRequest payload (codex-rs/hooks: the same fields as Claude Code's, plus
/// turn_id and model), answered with the same decision shape; the request names Codex.
#[test]
fn codex_permission_requests_are_answered_in_the_same_shape_and_name_codex() {
    let inbox = Inbox::new();
    let mut hook = agent_hook_command(&inbox, "codex", "60s").spawn().unwrap();
    hook.stdin
        .take()
        .unwrap()
        .write_all(&fixture("codex-permission-request-bash.json"))
        .unwrap();
    let (id, request) = placed_request(&inbox);
    assert_eq!(request["source"]["app"], "codex", "{request}");
    assert!(
        request["title"]
            .as_str()
            .is_some_and(|t| t.starts_with("Codex wants to run: rm -f /tmp/example")),
        "{request}"
    );
    answer(&inbox, &id, &["--set", "decision=Allow once"]);
    let value = printed(&hook.wait_with_output().unwrap());
    let specific = &value["hookSpecificOutput"];
    assert_eq!(specific["hookEventName"], "PermissionRequest");
    assert_eq!(specific["decision"]["behavior"], "allow", "{value}");

    // Codex's PreToolUse hook can only block, so it is refused (nothing printed, exit 1).
    let pre = String::from_utf8(fixture("pre-tool-use-bash.json")).unwrap();
    let out = agent_hook_command(&inbox, "codex", "60s")
        .spawn()
        .and_then(|mut child| {
            child.stdin.take().unwrap().write_all(pre.as_bytes())?;
            child.wait_with_output()
        })
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(out.stdout.is_empty(), "nothing that could read as allow");
    assert!(String::from_utf8_lossy(&out.stderr).contains("PermissionRequest"));
}

/// A command too long to show whole is never put to the operator: an "Allow once" given to
/// the part shown would allow all of it. Claude Code asks in its terminal instead.
#[test]
fn a_call_too_long_to_show_whole_falls_back_without_asking() {
    let inbox = Inbox::new();
    let command = format!("echo {}", "x".repeat(7_000));
    let payload = serde_json::json!({
        "session_id": "s-long", "cwd": "/home/dana/src/shop",
        "hook_event_name": "PreToolUse", "tool_name": "Bash",
        "tool_input": {"command": command}
    });
    let out = run_hook(&inbox, payload.to_string().as_bytes(), "60s");
    let (decision, _) = pre_tool_use(&out);
    assert_eq!(decision, "ask");
    assert!(placed_ids(&inbox).is_empty(), "nothing was placed");
    assert!(String::from_utf8_lossy(&out.stderr).contains("too long to show in full"));
}

/// Sends `signal` (a `kill` name: TERM, KILL, ...) to process `pid`.
fn send_signal(pid: u32, signal: &str) {
    let status = Command::new("kill")
        .args([&format!("-{signal}"), &pid.to_string()])
        .status()
        .unwrap();
    assert!(status.success(), "kill -{signal} {pid}");
}

/// Claude Code stops the hook when the operator answers in the terminal, presses Esc, or the
/// session ends: the request must not outlive its asker, and nothing printed allows.
#[test]
fn a_hook_stopped_by_a_signal_withdraws_its_request_and_allows_nothing() {
    let inbox = Inbox::new();
    for signal in ["TERM", "INT", "HUP"] {
        let hook = start_hook(&inbox, &fixture("pre-tool-use-bash.json"), "10m");
        let open = || {
            placed_ids(&inbox)
                .into_iter()
                .find(|id| !inbox.spool().join("cancel").join(id).exists())
        };
        eventually("the hook to place its request", || open().is_some());
        let id = open().unwrap();
        send_signal(hook.id(), signal);
        let out = hook.wait_with_output().unwrap();
        assert!(
            inbox.spool().join("cancel").join(&id).exists(),
            "SIG{signal}: the request is withdrawn: {}",
            stderr(&out)
        );
        assert!(
            !stdout(&out).contains("allow"),
            "SIG{signal}: {}",
            stdout(&out)
        );
        assert!(stderr(&out).contains("stopped waiting"), "{}", stderr(&out));
        let listed = stdout(&inbox.run(&["list"]));
        assert!(!listed.contains(&id), "SIG{signal}: still listed: {listed}");
    }
}

/// An agent that dies without stopping its hook (killed, crashed) leaves no question behind
/// either: the hook hears its parent's death.
#[test]
fn a_hook_whose_agent_dies_withdraws_its_request() {
    let inbox = Inbox::new();
    let hook = hook_command(&inbox, "10m");
    // A shell in the agent's place: it waits for the hook (`; true` keeps it from becoming
    // the hook), and is killed outright.
    let mut agent = Command::new("sh");
    agent
        .args(["-c", "\"$@\"; true", "sh"])
        .arg(hook.get_program())
        .args(hook.get_args())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    for (name, value) in hook.get_envs() {
        match value {
            Some(value) => agent.env(name, value),
            None => agent.env_remove(name),
        };
    }
    let mut agent = agent.spawn().unwrap();
    agent
        .stdin
        .take()
        .unwrap()
        .write_all(&fixture("pre-tool-use-bash.json"))
        .unwrap();
    let (id, _) = placed_request(&inbox);
    send_signal(agent.id(), "KILL");
    let _ = agent.wait();
    eventually("the orphaned hook to withdraw its request", || {
        inbox.spool().join("cancel").join(&id).exists()
    });
}

/// The options of the decision question, as placed.
fn options(request: &Value) -> Vec<String> {
    request["questions"][0]["options"]
        .as_array()
        .unwrap()
        .iter()
        .map(|option| option.as_str().unwrap().to_owned())
        .collect()
}

/// "Allow for this session" of a Write covers that file only: after allowing a Write to one
/// path, a Write to another (here ~/.bashrc) is asked about again. The choice says so.
#[test]
fn a_session_allowance_for_a_write_covers_that_file_only() {
    let inbox = Inbox::new();
    let payload = fixture("pre-tool-use-write.json");
    let hook = start_hook(&inbox, &payload, "60s");
    let (id, request) = placed_request(&inbox);
    let label = "Allow Write on /home/dana/src/shop/.github/workflows/release.yml for this session";
    assert_eq!(
        options(&request),
        ["Allow once", "Deny", label],
        "{request}"
    );
    answer(&inbox, &id, &["--set", &format!("decision={label}")]);
    assert_eq!(pre_tool_use(&hook.wait_with_output().unwrap()).0, "allow");

    // The same file again, other content: allowed without asking.
    let again = String::from_utf8(payload.clone())
        .unwrap()
        .replace("cargo publish --token", "cargo publish --locked --token");
    assert_eq!(
        pre_tool_use(&run_hook(&inbox, again.as_bytes(), "1s")).0,
        "allow"
    );
    assert_eq!(placed_ids(&inbox).len(), 1, "nothing asked");

    // Another file of the same session: asked (and, unanswered, back to the terminal).
    let bashrc = String::from_utf8(payload).unwrap().replace(
        "/home/dana/src/shop/.github/workflows/release.yml",
        "/home/dana/.bashrc",
    );
    assert_eq!(
        pre_tool_use(&run_hook(&inbox, bashrc.as_bytes(), "1s")).0,
        "ask"
    );
    assert_eq!(
        placed_ids(&inbox).len(),
        2,
        "the other file was asked about"
    );
}

/// Claude Code's own suggestions are offered as its dialog words them, with the exact rule;
/// the one chosen comes back as `updatedPermissions`, exactly as shown. The rule saved to a
/// settings file is offered for this session too; a suggestion that cannot be shown whole
/// is not offered, so it can never be returned.
#[test]
fn permission_suggestions_are_offered_and_the_chosen_one_returned() {
    let session_rule = "Yes, and don't ask again this session for: npm test *";
    let saved_rule =
        "Yes, and don't ask again for: npm test * (saved in .claude/settings.local.json)";
    let directory = "Yes, and allow access to /home/dana/src/shared-fixtures for this session";
    let mut payload: Value =
        serde_json::from_slice(&fixture("permission-request-suggestions.json")).unwrap();
    // A third suggestion with a field the operator would not see: never offered.
    payload["permission_suggestions"]
        .as_array_mut()
        .unwrap()
        .push(json!({"type": "addRules", "rules": [{"toolName": "Bash"}],
            "behavior": "allow", "destination": "userSettings", "note": "unseen"}));
    let payload = payload.to_string();

    let cases = [
        (
            session_rule,
            json!({"type": "addRules", "rules": [{"toolName": "Bash", "ruleContent": "npm test *"}],
                "behavior": "allow", "destination": "session"}),
        ),
        (
            saved_rule,
            json!({"type": "addRules", "rules": [{"toolName": "Bash", "ruleContent": "npm test *"}],
                "behavior": "allow", "destination": "localSettings"}),
        ),
        (
            directory,
            json!({"type": "addDirectories", "directories": ["/home/dana/src/shared-fixtures"],
                "destination": "session"}),
        ),
    ];
    for (chosen, returned) in cases {
        let inbox = Inbox::new();
        let hook = start_hook(&inbox, payload.as_bytes(), "60s");
        let (id, request) = placed_request(&inbox);
        assert_eq!(
            options(&request),
            ["Allow once", "Deny", session_rule, saved_rule, directory],
            "{request}"
        );
        answer(&inbox, &id, &["--set", &format!("decision={chosen}")]);
        let value = printed(&hook.wait_with_output().unwrap());
        let decision = &value["hookSpecificOutput"]["decision"];
        assert_eq!(decision["behavior"], "allow", "{value}");
        assert_eq!(
            decision["updatedPermissions"],
            json!([returned]),
            "{chosen}"
        );
    }

    // Allow once allows this call only: no rule goes back.
    let inbox = Inbox::new();
    let hook = start_hook(&inbox, payload.as_bytes(), "60s");
    let (id, _) = placed_request(&inbox);
    answer(&inbox, &id, &["--set", "decision=Allow once"]);
    let value = printed(&hook.wait_with_output().unwrap());
    assert_eq!(
        value["hookSpecificOutput"]["decision"],
        json!({"behavior": "allow"})
    );
    // Claude Code keeps these allowances itself: the inbox remembers nothing for it.
    assert!(!state_dir(&inbox).join("answer-inbox").exists());
}

/// Without suggestions a PermissionRequest offers what Claude Code's dialog would: a
/// one-time answer, no session choice.
#[test]
fn a_permission_request_without_suggestions_offers_no_session_choice() {
    let inbox = Inbox::new();
    let mut payload: Value =
        serde_json::from_slice(&fixture("permission-request-bash.json")).unwrap();
    payload
        .as_object_mut()
        .unwrap()
        .remove("permission_suggestions");
    let hook = start_hook(&inbox, payload.to_string().as_bytes(), "60s");
    let (id, request) = placed_request(&inbox);
    assert_eq!(options(&request), ["Allow once", "Deny"]);
    answer(&inbox, &id, &["--set", "decision=Deny"]);
    hook.wait_with_output().unwrap();
}

/// The Elicitation hook's output, parsed.
fn elicitation(out: &Output) -> Value {
    let value = printed(out);
    assert_eq!(
        value["hookSpecificOutput"]["hookEventName"], "Elicitation",
        "{value}"
    );
    value["hookSpecificOutput"].clone()
}

/// An MCP server's form, put to the operator through Claude Code's Elicitation hook: the
/// answers go back as the form's content, typed as its schema says; a decline declines.
#[test]
fn an_elicitation_form_is_answered_in_the_inbox() {
    let inbox = Inbox::new();
    let hook = start_hook(&inbox, &fixture("elicitation-form.json"), "60s");
    let (id, request) = placed_request(&inbox);
    assert_eq!(request["source"]["app"], "claude-code");
    assert_eq!(request["source"]["tool"], "mcp:deploy");
    assert!(
        request["title"]
            .as_str()
            .is_some_and(|title| title.starts_with("deploy asks: Deploy shop 2.4.1")),
        "{request}"
    );
    assert_eq!(
        request["requestedSchema"]["required"],
        json!(["environment", "replicas"])
    );
    answer(
        &inbox,
        &id,
        &[
            "--set",
            "environment=staging",
            "--set",
            "replicas=3",
            "--set",
            "notify=false",
        ],
    );
    let specific = elicitation(&hook.wait_with_output().unwrap());
    assert_eq!(specific["action"], "accept");
    assert_eq!(
        specific["content"],
        json!({"environment": "staging", "replicas": 3, "notify": false})
    );

    let hook = start_hook(&inbox, &fixture("elicitation-form.json"), "60s");
    let open = || placed_ids(&inbox).into_iter().find(|other| *other != id);
    eventually("the second request", || open().is_some());
    answer(&inbox, &open().unwrap(), &["--decline", "not on a Friday"]);
    let specific = elicitation(&hook.wait_with_output().unwrap());
    assert_eq!(
        specific,
        json!({"hookEventName": "Elicitation", "action": "decline"})
    );
}

/// No answer in time, URL mode, or a form the protocol cannot express: Claude Code's own
/// dialog asks (nothing printed, exit 0). A payload that cannot be read exits 1.
#[test]
fn an_elicitation_the_inbox_cannot_answer_falls_back_to_claude_codes_dialog() {
    let inbox = Inbox::new();
    let out = run_hook(&inbox, &fixture("elicitation-form.json"), "1s");
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert_eq!(stdout(&out), "", "a timeout answers nothing");
    let ids = placed_ids(&inbox);
    assert_eq!(ids.len(), 1);
    assert!(
        inbox.spool().join("cancel").join(&ids[0]).exists(),
        "withdrawn"
    );

    let form: Value = serde_json::from_slice(&fixture("elicitation-form.json")).unwrap();
    let mut url = form.clone();
    url["mode"] = json!("url");
    url["url"] = json!("https://auth.example.com/login");
    url.as_object_mut().unwrap().remove("requested_schema");
    let mut nested = form.clone();
    nested["requested_schema"]["properties"]["target"] =
        json!({"type": "object", "properties": {"region": {"type": "string"}}});
    for (case, payload) in [("URL mode", url), ("a nested object", nested)] {
        let out = run_hook(&inbox, payload.to_string().as_bytes(), "60s");
        assert_eq!(code(&out), 0, "{case}: {}", stderr(&out));
        assert_eq!(stdout(&out), "", "{case}");
        assert!(
            stderr(&out).contains("Claude Code asks"),
            "{case}: {}",
            stderr(&out)
        );
    }
    assert_eq!(
        placed_ids(&inbox).len(),
        1,
        "neither was put to the operator"
    );

    let mut unreadable = form;
    unreadable
        .as_object_mut()
        .unwrap()
        .remove("mcp_server_name");
    let out = run_hook(&inbox, unreadable.to_string().as_bytes(), "60s");
    assert_eq!(code(&out), 1, "{}", stderr(&out));
    assert_eq!(stdout(&out), "");
    assert!(stderr(&out).contains("mcp_server_name"), "{}", stderr(&out));
}
