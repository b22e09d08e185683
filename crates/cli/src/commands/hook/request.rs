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
///
/// Every field of the tool's input that can change what runs is shown: the ones the inbox
/// knows in their own words (a command, a diff, "runs outside the sandbox"), and every
/// other one, or a known one of a type it does not expect, listed as `name: value` after
/// them. An answer allows the call as it is, so nothing in it may be left out of what the
/// operator reads.
fn shown(call: &ToolCall) -> (String, bool) {
    let mut whole = true;
    let mut fenced = |language: &str, text: &str| {
        let (block, cut) = fenced(language, text);
        whole &= !cut;
        block
    };
    let input = &call.tool_input;
    // The fields shown in their own words; each branch names those it showed.
    let mut known: Vec<&str> = Vec::new();
    // Fields inside a MultiEdit's edits that the inbox does not know, named by their place.
    let mut nested: Vec<(String, &Value)> = Vec::new();
    let mut text = String::new();
    match (call.tool_name.as_str(), call.input_str("file_path")) {
        ("Bash", _) if call.bash_command().is_some() => {
            let command = call.bash_command().unwrap_or_default();
            known.push("command");
            let flag = |key| input.get(key).and_then(Value::as_bool);
            let outside = flag("dangerouslyDisableSandbox");
            let background = flag("run_in_background");
            known.extend(outside.map(|_| "dangerouslyDisableSandbox"));
            known.extend(background.map(|_| "run_in_background"));
            if outside == Some(true) {
                text.push_str("**⚠ Runs outside the sandbox** (`dangerouslyDisableSandbox`)\n\n");
            }
            text.push_str("**Run a shell command");
            if background == Some(true) {
                text.push_str(" in the background");
            }
            text.push_str("**");
            push_where(&mut text, call);
            text.push_str(&fenced("sh", command));
            if let Some(limit) = input.get("timeout").and_then(Value::as_u64) {
                known.push("timeout");
                text.push_str(&format!("\nTime limit: {}\n", milliseconds(limit)));
            }
            if let Some(note) = call.input_str("description") {
                known.push("description");
                text.push_str(&format!(
                    "\n{}'s note: {}\n",
                    call.agent.name(),
                    plain(note)
                ));
            }
        }
        ("Edit", Some(path)) => {
            known.push("file_path");
            let edit = Edit::of(input, "", &mut known, &mut nested);
            text.push_str(&format!("**Edit** {}", inline_code(path)));
            if edit.every {
                text.push_str(" (every occurrence)");
            }
            text.push_str(":\n\n");
            text.push_str(&fenced("diff", &unified(path, &[edit])));
        }
        ("MultiEdit", Some(path)) => {
            known.push("file_path");
            let edits: Vec<Edit> = match input.get("edits").and_then(Value::as_array) {
                Some(edits) => {
                    known.push("edits");
                    edits
                        .iter()
                        .enumerate()
                        .filter_map(|(n, edit)| match edit.as_object() {
                            Some(edit) => Some(Edit::of(
                                edit,
                                &format!("edits[{n}]."),
                                &mut Vec::new(),
                                &mut nested,
                            )),
                            None => {
                                nested.push((format!("edits[{n}]"), edit));
                                None
                            }
                        })
                        .collect()
                }
                None => Vec::new(),
            };
            let every = edits.iter().filter(|edit| edit.every).count();
            text.push_str(&format!(
                "**Edit** {} ({} changes",
                inline_code(path),
                edits.len()
            ));
            if every > 0 {
                text.push_str(&format!(", {every} of them to every occurrence"));
            }
            text.push_str("):\n\n");
            text.push_str(&fenced("diff", &unified(path, &edits)));
        }
        ("Write", Some(path)) => {
            known.push("file_path");
            let content = call.input_str("content");
            known.extend(content.map(|_| "content"));
            let content = content.unwrap_or("");
            text.push_str(&format!(
                "**Write** {} ({} lines, replacing the file if it exists):\n\n",
                inline_code(path),
                content.lines().count()
            ));
            text.push_str(&fenced("", content));
        }
        (tool, _) => {
            known.extend(input.keys().map(String::as_str));
            text.push_str(&format!("**Use the tool** {} with:\n\n", inline_code(tool)));
            let pretty = serde_json::to_string_pretty(input).unwrap_or_default();
            text.push_str(&fenced("json", &pretty));
        }
    }
    let others: Vec<String> = input
        .iter()
        .filter(|(key, _)| !known.contains(&key.as_str()))
        .map(|(key, value)| (key.clone(), value))
        .chain(nested)
        .map(|(key, value)| format!("{key}: {value}"))
        .collect();
    if !others.is_empty() {
        text.push_str(
            "\n**Also in the call** (fields the inbox does not know; they may change what \
             it does):\n\n",
        );
        text.push_str(&fenced("", &others.join("\n")));
    }
    if let Some(mode) = &call.permission_mode {
        text.push_str(&format!("\nPermission mode: {}\n", inline_code(mode)));
    }
    (text, whole)
}

/// One replacement of an Edit or of a MultiEdit's `edits`.
struct Edit<'a> {
    old: &'a str,
    new: &'a str,
    /// `replace_all`: every occurrence of `old`, not only the one.
    every: bool,
}

impl<'a> Edit<'a> {
    /// The replacement `fields` describe. The keys it shows are added to `known`; every
    /// other key (or one of a type it does not expect) goes to `unknown`, named with
    /// `prefix` (`edits[2].`), unless the caller lists the object's leftovers itself (an
    /// Edit's fields are the tool input's own, so `prefix` is empty and they are listed
    /// with the rest of the input).
    fn of(
        fields: &'a serde_json::Map<String, Value>,
        prefix: &str,
        known: &mut Vec<&'a str>,
        unknown: &mut Vec<(String, &'a Value)>,
    ) -> Edit<'a> {
        let text = |key: &'static str| fields.get(key).and_then(Value::as_str);
        let (old, new) = (text("old_string"), text("new_string"));
        let every = fields.get("replace_all").and_then(Value::as_bool);
        known.extend(old.map(|_| "old_string"));
        known.extend(new.map(|_| "new_string"));
        known.extend(every.map(|_| "replace_all"));
        if !prefix.is_empty() {
            unknown.extend(
                fields
                    .iter()
                    .filter(|(key, _)| !known.contains(&key.as_str()))
                    .map(|(key, value)| (format!("{prefix}{key}"), value)),
            );
        }
        Edit {
            old: old.unwrap_or(""),
            new: new.unwrap_or(""),
            every: every.unwrap_or(false),
        }
    }
}

/// A Bash time limit (milliseconds) as a person reads it: `2 min`, `90 s`, `1500 ms`.
fn milliseconds(ms: u64) -> String {
    match ms {
        ms if ms % 60_000 == 0 && ms > 0 => format!("{} min", ms / 60_000),
        ms if ms % 1_000 == 0 && ms > 0 => format!("{} s", ms / 1_000),
        ms => format!("{ms} ms"),
    }
}

fn push_where(text: &mut String, call: &ToolCall) {
    match &call.cwd {
        Some(cwd) => text.push_str(&format!(" in {}:\n\n", inline_code(cwd))),
        None => text.push_str(":\n\n"),
    }
}

/// A unified diff of each edit, one hunk each; the hunk of an edit of every occurrence
/// says so in its header.
fn unified(path: &str, edits: &[Edit]) -> String {
    let mut out = format!("--- {path}\n+++ {path}\n");
    for edit in edits {
        out.push_str(if edit.every {
            "@@ every occurrence @@\n"
        } else {
            "@@\n"
        });
        out.push_str(&diff::lines(edit.old, edit.new));
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

    fn call(tool: &str, input: Value) -> ToolCall {
        super::super::payload::parse(
            json!({"session_id": "s-1", "hook_event_name": "PreToolUse", "cwd": "/w",
                "tool_name": tool, "tool_input": input})
            .to_string()
            .as_bytes(),
        )
        .unwrap()
    }

    /// What changes how a command runs is said in words, first: outside the sandbox, in
    /// the background, its time limit.
    #[test]
    fn a_command_run_outside_the_sandbox_or_in_the_background_says_so() {
        let text = description(&call(
            "Bash",
            json!({"command": "make deploy", "dangerouslyDisableSandbox": true,
                "run_in_background": true, "timeout": 600_000, "description": "Deploys"}),
        ));
        assert!(
            text.starts_with("**⚠ Runs outside the sandbox** (`dangerouslyDisableSandbox`)\n"),
            "{text}"
        );
        assert!(
            text.contains("**Run a shell command in the background** in `/w`"),
            "{text}"
        );
        assert!(text.contains("Time limit: 10 min"), "{text}");
        assert!(
            !text.contains("Also in the call"),
            "every field was known: {text}"
        );

        let text = description(&call(
            "Bash",
            json!({"command": "ls", "dangerouslyDisableSandbox": false, "run_in_background": false}),
        ));
        assert!(!text.contains("sandbox"), "{text}");
        assert!(!text.contains("background"), "{text}");
    }

    /// A MultiEdit's edit of every occurrence is marked on its own hunk and counted.
    #[test]
    fn a_multi_edit_says_which_edits_replace_every_occurrence() {
        let text = description(&call(
            "MultiEdit",
            json!({"file_path": "/w/a.rs", "edits": [
                {"old_string": "a", "new_string": "b"},
                {"old_string": "unwrap()", "new_string": "expect(\"x\")", "replace_all": true},
                {"old_string": "c", "new_string": "d", "replace_all": false},
            ]}),
        ));
        assert!(
            text.contains("(3 changes, 1 of them to every occurrence)"),
            "{text}"
        );
        assert_eq!(text.matches("@@ every occurrence @@").count(), 1, "{text}");
        assert!(
            text.contains("@@ every occurrence @@\n-unwrap()\n+expect(\"x\")\n"),
            "{text}"
        );
    }

    /// Fields the inbox does not know, and known ones of a type it does not expect, are
    /// listed as `name: value` (JSON, in a block their own backticks cannot close).
    #[test]
    fn every_field_the_description_does_not_know_is_listed() {
        let cases = [
            (
                call(
                    "Bash",
                    json!({"command": "ls", "env": {"LD_PRELOAD": "/tmp/x.so"},
                        "run_in_background": "yes"}),
                ),
                vec![
                    r#"env: {"LD_PRELOAD":"/tmp/x.so"}"#,
                    r#"run_in_background: "yes""#,
                ],
            ),
            (
                call(
                    "Edit",
                    json!({"file_path": "/w/a", "old_string": "a", "new_string": "b",
                        "replace_all": "true", "encoding": "latin1"}),
                ),
                vec![r#"replace_all: "true""#, r#"encoding: "latin1""#],
            ),
            (
                call(
                    "MultiEdit",
                    json!({"file_path": "/w/a", "dry_run": false, "edits": [
                        {"old_string": "a", "new_string": "b", "regex": true}, "not an edit"]}),
                ),
                vec![
                    "dry_run: false",
                    "edits[0].regex: true",
                    r#"edits[1]: "not an edit""#,
                ],
            ),
            (
                call(
                    "Write",
                    json!({"file_path": "/w/a", "content": "x", "mode": "```0777\n```"}),
                ),
                vec![r#"mode: "```0777\n```""#],
            ),
        ];
        for (call, fields) in cases {
            let text = description(&call);
            let (_, listed) = text
                .split_once("**Also in the call**")
                .unwrap_or_else(|| panic!("no other fields listed: {text}"));
            for field in fields {
                assert!(listed.contains(&format!("\n{field}\n")), "{field}: {text}");
            }
            assert!(shows_whole(&call), "{text}");
        }
        let text = description(&call(
            "Write",
            json!({"file_path": "/w/a", "content": "x", "mode": "```"}),
        ));
        assert!(
            text.ends_with("````\nmode: \"```\"\n````\n"),
            "a fence longer than the value's backticks: {text}"
        );
        assert!(!description(&call(
            "Edit",
            json!({"file_path": "/w/a", "old_string": "a",
            "new_string": "b", "replace_all": true})
        ))
        .contains("Also in the call"));
    }

    /// A field too long to show whole makes the call one the inbox does not answer.
    #[test]
    fn an_unknown_field_too_long_to_show_makes_the_call_not_shown_whole() {
        let long = call(
            "Bash",
            json!({"command": "ls", "script": "x".repeat(MAX_SHOWN_CHARS)}),
        );
        assert!(!shows_whole(&long));
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
