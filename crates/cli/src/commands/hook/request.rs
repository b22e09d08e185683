//! The request placed for one tool call, in the native `inbox: 1` shape: who asks (source
//! app `claude-code`, the session as the run, the working directory and project), what the
//! agent wants to do (a markdown description to judge at a glance), and one decision.

use std::time::Duration;

use serde_json::{json, Value};

use super::diff;
use super::payload::ToolCall;

/// The decision's ids and first two options: the protocol's tool-call decision shape, which
/// every one-key surface recognises (`inbox_protocol::decision`).
pub use inbox_protocol::decision::{ALLOW_ONCE, DECISION_ID, DENY, REASON_ID};

/// Any one shown text is cut at this many characters; the protocol allows 20,000 for the
/// whole description, and a person judges from the start anyway.
const MAX_SHOWN_CHARS: usize = 6_000;
/// A title shows this much of a command.
const MAX_COMMAND_IN_TITLE: usize = 80;
/// The protocol's limits on a title and on one source field.
pub(super) const MAX_TITLE_CHARS: usize = 200;
pub(super) const MAX_SOURCE_CHARS: usize = 200;

/// The request JSON for `call`, expiring after `timeout`, offering Allow once, Deny and then
/// `more` (each a whole option text).
pub fn build(call: &ToolCall, timeout: Duration, more: &[&str]) -> Value {
    let mut options = vec![ALLOW_ONCE, DENY];
    options.extend_from_slice(more);
    // Every field within the protocol's limits, so an odd payload (a long MCP tool name, a
    // deep path) is still asked about rather than refused as an invalid request.
    let mut source = json!({
        "app": call.agent.app(),
        "run": call.session_id,
        "tool": shorten(&call.tool_name, MAX_SOURCE_CHARS),
    });
    if let Some(cwd) = &call.cwd {
        source["cwd"] = json!(cwd);
    }
    if let Some(project) = call.project() {
        source["project"] = json!(shorten(&project, MAX_SOURCE_CHARS));
    }
    json!({
        "inbox": 1,
        "title": shorten(&title(call), MAX_TITLE_CHARS),
        "source": source,
        // The agent is stopped until someone answers: more urgent than a routine question.
        "priority": "high",
        // Whole seconds, at least one: the protocol's timeout is a positive integer.
        "timeout_seconds": timeout.as_secs_f64().ceil().max(1.0) as u64,
        "questions": [
            {
                "id": DECISION_ID,
                "question": format!(
                    "Allow {} to use {}?",
                    call.agent.name(),
                    shorten(&call.tool_name, MAX_SOURCE_CHARS)
                ),
                "type": "choice",
                "options": options,
                "description": description(call),
            },
            {
                // The native shape has no "required if": the reason is optional, and a deny
                // without one tells Claude a standard message.
                "id": REASON_ID,
                "question": format!("If you deny it: why? ({} is told)", call.agent.name()),
                "type": "text",
                "required": false,
            }
        ]
    })
}

fn title(call: &ToolCall) -> String {
    if let Some(command) = call.bash_command() {
        let first_line = command.lines().next().unwrap_or("");
        let mut shown = cut_chars(first_line, MAX_COMMAND_IN_TITLE).0.to_owned();
        if shown.len() < command.trim_end().len() {
            shown.push('…');
        }
        return format!("{} wants to run: {shown}", call.agent.name());
    }
    let agent = call.agent.name();
    match (call.tool_name.as_str(), call.input_str("file_path")) {
        ("Edit" | "MultiEdit", Some(path)) => format!("{agent} wants to edit {path}"),
        ("Write", Some(path)) => format!("{agent} wants to write {path}"),
        (tool, _) => format!("{agent} wants to use {tool}"),
    }
}

/// What the operator reads to decide: the call itself, first, in the form that shows it best.
pub fn description(call: &ToolCall) -> String {
    shown(call).0
}

/// Whether the operator would see the whole call: a command, diff or content cut to fit
/// the request would be allowed whole on an answer given to a part of it, so such a call is
/// not asked about here (the agent's own prompt shows it).
pub fn shows_whole(call: &ToolCall) -> bool {
    shown(call).1
}

/// The description, and whether nothing in it was cut.
fn shown(call: &ToolCall) -> (String, bool) {
    let mut whole = true;
    let mut fenced = |language: &str, text: &str| {
        let (block, cut) = fenced(language, text);
        whole &= !cut;
        block
    };
    let mut text = String::new();
    match (call.tool_name.as_str(), call.input_str("file_path")) {
        ("Bash", _) if call.bash_command().is_some() => {
            let command = call.bash_command().unwrap_or_default();
            text.push_str("**Run a shell command**");
            push_where(&mut text, call);
            text.push_str(&fenced("sh", command));
            if let Some(note) = call.input_str("description") {
                text.push_str(&format!("\nClaude's note: {}\n", plain(note)));
            }
        }
        ("Edit", Some(path)) => {
            text.push_str(&format!("**Edit** {}", inline_code(path)));
            if call.tool_input.get("replace_all") == Some(&Value::Bool(true)) {
                text.push_str(" (every occurrence)");
            }
            text.push_str(":\n\n");
            let old = call.input_str("old_string").unwrap_or("");
            let new = call.input_str("new_string").unwrap_or("");
            text.push_str(&fenced("diff", &unified(path, &[(old, new)])));
        }
        ("MultiEdit", Some(path)) => {
            let edits: Vec<(&str, &str)> = call
                .tool_input
                .get("edits")
                .and_then(Value::as_array)
                .map(|edits| {
                    edits
                        .iter()
                        .map(|edit| {
                            let field = |key| edit.get(key).and_then(Value::as_str).unwrap_or("");
                            (field("old_string"), field("new_string"))
                        })
                        .collect()
                })
                .unwrap_or_default();
            text.push_str(&format!(
                "**Edit** {} ({} changes):\n\n",
                inline_code(path),
                edits.len()
            ));
            text.push_str(&fenced("diff", &unified(path, &edits)));
        }
        ("Write", Some(path)) => {
            let content = call.input_str("content").unwrap_or("");
            text.push_str(&format!(
                "**Write** {} ({} lines, replacing the file if it exists):\n\n",
                inline_code(path),
                content.lines().count()
            ));
            text.push_str(&fenced("", content));
        }
        (tool, _) => {
            text.push_str(&format!("**Use the tool** {} with:\n\n", inline_code(tool)));
            let pretty = serde_json::to_string_pretty(&call.tool_input).unwrap_or_default();
            text.push_str(&fenced("json", &pretty));
        }
    }
    if let Some(mode) = &call.permission_mode {
        text.push_str(&format!("\nPermission mode: {}\n", inline_code(mode)));
    }
    (text, whole)
}

fn push_where(text: &mut String, call: &ToolCall) {
    match &call.cwd {
        Some(cwd) => text.push_str(&format!(" in {}:\n\n", inline_code(cwd))),
        None => text.push_str(":\n\n"),
    }
}

/// A unified diff of each (old, new) pair, one hunk each.
fn unified(path: &str, edits: &[(&str, &str)]) -> String {
    let mut out = format!("--- {path}\n+++ {path}\n");
    for (old, new) in edits {
        out.push_str("@@\n");
        out.push_str(&diff::lines(old, new));
    }
    out
}

/// `text` in a fenced code block whose fence is longer than any run of backticks inside,
/// so the content cannot close it; cut at `MAX_SHOWN_CHARS` (then the second value is true).
fn fenced(language: &str, text: &str) -> (String, bool) {
    let (shown, cut) = cut_chars(text, MAX_SHOWN_CHARS);
    let fence = "`".repeat(longest_backtick_run(shown).max(2) + 1);
    let mut block = format!("{fence}{language}\n{shown}");
    if !shown.ends_with('\n') {
        block.push('\n');
    }
    if cut {
        block.push_str("… (cut: too long to show in full)\n");
    }
    block.push_str(&fence);
    block.push('\n');
    (block, cut)
}

/// `text` as an inline code span that its own backticks cannot end.
pub(super) fn inline_code(text: &str) -> String {
    let one_line = inbox_protocol::text::one_line(text);
    let ticks = "`".repeat(longest_backtick_run(&one_line) + 1);
    // A space keeps a backtick at either end from joining the fence; markdown drops it.
    if one_line.starts_with('`') || one_line.ends_with('`') {
        format!("{ticks} {one_line} {ticks}")
    } else {
        format!("{ticks}{one_line}{ticks}")
    }
}

/// Free text from the agent shown as plain text: markdown characters escaped, so Claude's
/// note cannot pose as something the inbox says (a heading, a link).
fn plain(text: &str) -> String {
    let one_line = inbox_protocol::text::one_line(cut_chars(text, MAX_COMMAND_IN_TITLE * 4).0);
    let mut out = String::with_capacity(one_line.len());
    for c in one_line.chars() {
        if "\\`*_{}[]()#+-.!<>|~".contains(c) {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

fn longest_backtick_run(text: &str) -> usize {
    text.split(|c| c != '`').map(str::len).max().unwrap_or(0)
}

/// `text` in at most `max` characters, ending in '…' when cut.
pub(super) fn shorten(text: &str, max: usize) -> String {
    match cut_chars(text, max) {
        (_, true) => format!("{}…", cut_chars(text, max.saturating_sub(1)).0),
        (kept, false) => kept.to_owned(),
    }
}

/// At most `max` characters of `text`, and whether it was cut.
fn cut_chars(text: &str, max: usize) -> (&str, bool) {
    match text.char_indices().nth(max) {
        Some((at, _)) => (&text[..at], true),
        None => (text, false),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_fence_is_longer_than_the_backticks_inside() {
        let (block, _) = fenced("sh", "echo ```x```");
        assert!(block.starts_with("````sh\n"), "{block}");
        assert!(block.ends_with("\n````\n"), "{block}");
    }

    #[test]
    fn a_deep_path_still_makes_a_valid_request() {
        let path = format!("/{}/file.rs", "d".repeat(1_000));
        let call = super::super::payload::parse(
            json!({"session_id": "s-1", "hook_event_name": "PreToolUse", "cwd": "/w",
                "tool_name": "Write", "tool_input": {"file_path": path, "content": "x"}})
            .to_string()
            .as_bytes(),
        )
        .unwrap();
        let body = build(&call, Duration::from_secs(60), &[]);
        inbox_client::prepare(serde_json::to_vec(&body).unwrap(), None)
            .expect("within the protocol's limits");
        assert!(body["title"].as_str().unwrap().ends_with('…'));
    }

    /// An answer to part of a call would allow all of it: a call too long to show whole is
    /// not one the inbox may answer.
    #[test]
    fn a_call_too_long_to_show_whole_is_said_so() {
        let write = |content: &str| {
            super::super::payload::parse(
                json!({"session_id": "s-1", "hook_event_name": "PreToolUse",
                    "tool_name": "Write", "tool_input": {"file_path": "/w/f", "content": content}})
                .to_string()
                .as_bytes(),
            )
            .unwrap()
        };
        let short: String = (0..100).map(|n| format!("line {n}\n")).collect();
        assert!(shows_whole(&write(&short)));
        assert!(description(&write(&short)).contains("line 99"));
        let long = "x".repeat(MAX_SHOWN_CHARS + 1);
        assert!(!shows_whole(&write(&long)));
        assert!(description(&write(&long)).contains("cut: too long to show in full"));
    }
}
