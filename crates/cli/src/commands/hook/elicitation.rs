//! Claude Code's Elicitation hook: an MCP server asks the user to fill in a form, and the
//! form is answered in the inbox instead of Claude Code's dialog.
//!
//! The contract, from Claude Code's hooks reference, <https://code.claude.com/docs/en/hooks>
//! ("Elicitation", "Exit code 2 behavior per event"), read on 2026-12-05 through the mirror
//! github.com/thevibeworks/claude-code-docs (content/en/docs/claude-code/hooks.md, snapshot of
//! 2026-08-22):
//!
//! - Input: the common fields (`session_id`, `cwd`, ...) with `hook_event_name`
//!   `Elicitation`, `mcp_server_name`, `message`, and optional `mode` (`form` or `url`),
//!   `url`, `elicitation_id` and `requested_schema` (MCP's `requestedSchema`). The settings'
//!   matcher matches the server name.
//! - Output: `{"hookSpecificOutput": {"hookEventName": "Elicitation", "action": "accept" |
//!   "decline" | "cancel", "content": {...}}}`, `content` (the form's values) used only with
//!   `accept`. Printing nothing leaves Claude Code's own dialog to show; exit 2 declines.
//!
//! The form is placed as MCP elicitation params, which the protocol reads as its own
//! (`inbox_protocol`'s elicitation dialect), and the answer goes back as the protocol's
//! `dialect_reply` for it, an MCP ElicitResult. Only a person's answer accepts or declines:
//! a timeout, an expired or withdrawn request, a policy's defaults, URL mode, or a schema the
//! protocol cannot express all fall back to Claude Code's dialog (nothing printed, exit 0).
//! Input that cannot be read prints nothing and exits 1 (the dialog shows as well).

use anyhow::Result;
use inbox_client::{prepare, OutcomeStatus};
use serde_json::{json, Value};

use crate::args::{AgentHookArgs, LocationArgs};
use crate::{exit, output};

use super::payload::{Agent, Form};
use super::request;
use super::wait::{self, Waited};

const EVENT: &str = "Elicitation";

/// What Claude Code is told: the action (with the content for accept), or nothing.
#[derive(Debug, Clone, PartialEq)]
enum Answer {
    /// An MCP ElicitResult: `{"action": ..., "content": ...}`.
    Reply(Value),
    /// Claude Code's own dialog asks; the reason goes to standard error.
    Fallback(String),
}

/// Asks the operator to fill in `form` and prints the hook output.
pub fn answer(locations: &LocationArgs, args: &AgentHookArgs, form: &Form) -> Result<u8> {
    let answer = ask(locations, args, form).unwrap_or_else(|error| {
        Answer::Fallback(format!("could not ask through Answer Inbox: {error:#}"))
    });
    match answer {
        Answer::Reply(reply) => {
            let json = output_for(&reply);
            output::json_text(&format!("{json}\n"))?;
        }
        Answer::Fallback(reason) => output::stderr(&format!("answer-inbox: {reason}")),
    }
    Ok(exit::OK)
}

fn ask(locations: &LocationArgs, args: &AgentHookArgs, form: &Form) -> Result<Answer> {
    if form.mode != "form" {
        return Ok(Answer::Fallback(format!(
            "{} asks in {} mode, which Answer Inbox cannot answer; Claude Code asks",
            form.server, form.mode
        )));
    }
    let Some(schema) = &form.requested_schema else {
        return Ok(Answer::Fallback(format!(
            "{}'s form has no requested_schema; Claude Code asks",
            form.server
        )));
    };
    let body = build(form, schema, args.timeout);
    let prepared = match prepare(serde_json::to_vec(&body)?, None) {
        Ok(prepared) => prepared,
        // A form the protocol cannot express is not put to the operator.
        Err(error) => {
            return Ok(Answer::Fallback(format!(
                "{}'s form cannot be asked in Answer Inbox ({error}); Claude Code asks",
                form.server
            )))
        }
    };
    let outcome = match wait::place_and_wait(locations, args, &prepared, Agent::ClaudeCode)? {
        Waited::Settled(outcome) => outcome,
        Waited::Nothing(reason) => return Ok(Answer::Fallback(reason)),
    };
    let id = &outcome.id;
    Ok(match outcome.status {
        OutcomeStatus::Answered | OutcomeStatus::Declined => {
            match inbox_protocol::dialect_reply(prepared.request(), &outcome) {
                Some(reply) => Answer::Reply(reply),
                None => Answer::Fallback(format!("request {id} has no form answer")),
            }
        }
        OutcomeStatus::Expired => {
            Answer::Fallback(format!("request {id} expired unanswered; Claude Code asks"))
        }
        OutcomeStatus::Defaulted | OutcomeStatus::Rejected => Answer::Fallback(format!(
            "request {id} was {} by {}, not answered by a person",
            outcome.status, outcome.answered_by
        )),
    })
}

/// The request: MCP elicitation params with the envelope's fields beside them, the message
/// introduced by the server's name (the operator sees who asks).
fn build(form: &Form, schema: &Value, timeout: std::time::Duration) -> Value {
    let agent = Agent::ClaudeCode;
    let mut source = json!({
        "app": agent.app(),
        "run": form.session_id,
        "tool": request::shorten(&format!("mcp:{}", form.server), request::MAX_SOURCE_CHARS),
    });
    if let Some(cwd) = &form.cwd {
        source["cwd"] = json!(cwd);
        if let Some(project) = std::path::Path::new(cwd).file_name() {
            source["project"] = json!(request::shorten(
                &project.to_string_lossy(),
                request::MAX_SOURCE_CHARS
            ));
        }
    }
    let server = inbox_protocol::text::one_line(&form.server);
    let title = format!("{} asks: {}", server, first_line(&form.message));
    json!({
        "inbox": 1,
        "title": request::shorten(&title, request::MAX_TITLE_CHARS),
        "source": source,
        "priority": "high",
        "timeout_seconds": timeout.as_secs_f64().ceil().max(1.0) as u64,
        "message": format!(
            "**The MCP server {} asks** (through {}):\n\n{}",
            request::inline_code(&form.server),
            agent.name(),
            form.message
        ),
        "requestedSchema": schema,
        "mode": "form",
    })
}

fn first_line(text: &str) -> String {
    inbox_protocol::text::one_line(text.trim().lines().next().unwrap_or("")).into_owned()
}

/// The hook output for an ElicitResult: its action, and its content only with accept.
fn output_for(reply: &Value) -> Value {
    let action = reply
        .get("action")
        .and_then(Value::as_str)
        .unwrap_or("cancel");
    let mut specific = json!({"hookEventName": EVENT, "action": action});
    if action == "accept" {
        specific["content"] = reply.get("content").cloned().unwrap_or_else(|| json!({}));
    }
    json!({"hookSpecificOutput": specific})
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn content_goes_back_only_with_accept() {
        let accept = output_for(&json!({"action": "accept", "content": {"env": "staging"}}));
        assert_eq!(
            accept,
            json!({"hookSpecificOutput": {"hookEventName": "Elicitation", "action": "accept",
                "content": {"env": "staging"}}})
        );
        for action in ["decline", "cancel"] {
            let out = output_for(&json!({"action": action, "content": {"env": "x"}}));
            assert_eq!(
                out,
                json!({"hookSpecificOutput": {"hookEventName": "Elicitation", "action": action}})
            );
        }
    }

    #[test]
    fn the_request_is_the_servers_form_with_who_asks() {
        let form = Form {
            session_id: "s-1".into(),
            cwd: Some("/home/dana/src/shop".into()),
            server: "deploy".into(),
            message: "Deploy where?\nMore.".into(),
            mode: "form".into(),
            requested_schema: Some(json!({"type": "object", "properties": {
                "env": {"type": "string", "enum": ["staging", "production"]}}})),
        };
        let body = build(
            &form,
            form.requested_schema.as_ref().unwrap(),
            std::time::Duration::from_secs(60),
        );
        assert_eq!(body["title"], "deploy asks: Deploy where?");
        assert_eq!(body["source"]["tool"], "mcp:deploy");
        let prepared = prepare(serde_json::to_vec(&body).unwrap(), None).unwrap();
        assert_eq!(prepared.request().questions[0].id, "env");
    }
}
