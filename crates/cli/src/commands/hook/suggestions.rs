//! Claude Code's own "always allow" choices: the PermissionRequest payload's
//! `permission_suggestions`, offered as the native dialog words them, and the chosen one
//! returned as the decision's `updatedPermissions` (Claude Code's hooks reference,
//! <https://code.claude.com/docs/en/hooks>, "Permission update entries", read 2026-12-05
//! through the mirror github.com/thevibeworks/claude-code-docs, snapshot of 2026-08-22: a
//! hook may echo one of the suggestions it received, which is the same as the user picking
//! that option in the dialog).
//!
//! What is shown is exactly what is returned: each suggestion is read strictly into
//! [`Update`] (unknown fields or values make it unreadable), and what goes back to Claude
//! Code is that typed value serialised again, never the JSON as received. A suggestion that
//! cannot be read, that is not an allow, or whose rule text cannot be shown whole on one line
//! is not offered at all. Where a suggestion saves rules to a settings file, the same rules
//! for this session only are offered too ("Allow for this session" as a session-scoped rule).

use serde::{Deserialize, Serialize};

use super::payload::ToolCall;

/// At most this many of the agent's choices are offered; the native dialog shows a few.
const MAX_CHOICES: usize = 6;
/// The protocol's limit on one option's text.
const MAX_LABEL_CHARS: usize = 500;

/// One permission update entry, as Claude Code reads it in `updatedPermissions`. Only the
/// kinds that allow something are here; `replaceRules`, `removeRules` and
/// `removeDirectories` are never offered.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "camelCase", deny_unknown_fields)]
pub enum Update {
    AddRules {
        rules: Vec<Rule>,
        behavior: Behavior,
        destination: Destination,
    },
    SetMode {
        mode: Mode,
        destination: Destination,
    },
    AddDirectories {
        directories: Vec<String>,
        destination: Destination,
    },
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Rule {
    #[serde(rename = "toolName")]
    pub tool_name: String,
    /// Absent: the whole tool.
    #[serde(
        rename = "ruleContent",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub rule_content: Option<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum Behavior {
    Allow,
    Deny,
    Ask,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum Destination {
    Session,
    LocalSettings,
    ProjectSettings,
    UserSettings,
}

/// The modes a suggestion may switch to and be offered; `bypassPermissions` and `auto` are
/// not among them (a suggestion naming them is not offered).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum Mode {
    Default,
    AcceptEdits,
    Plan,
    DontAsk,
}

impl Mode {
    fn name(self) -> &'static str {
        match self {
            Mode::Default => "default",
            Mode::AcceptEdits => "acceptEdits",
            Mode::Plan => "plan",
            Mode::DontAsk => "dontAsk",
        }
    }
}

/// One choice from the agent's suggestions: the option's text and the entry it returns.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Suggested {
    pub label: String,
    pub update: Update,
}

/// The choices `call`'s suggestions offer, session-scoped ones first, in the payload's
/// order, without repeats.
pub fn choices(call: &ToolCall) -> Vec<Suggested> {
    let read: Vec<Update> = call
        .suggestions
        .iter()
        .filter_map(|value| Update::deserialize(value).ok())
        .filter(|update| match update {
            Update::AddRules {
                rules, behavior, ..
            } => *behavior == Behavior::Allow && !rules.is_empty(),
            Update::AddDirectories { directories, .. } => !directories.is_empty(),
            Update::SetMode { .. } => true,
        })
        .collect();
    let mut updates: Vec<Update> = Vec::new();
    for update in &read {
        // Rules saved to a file are offered for this session too.
        if let Update::AddRules {
            rules,
            behavior,
            destination,
        } = update
        {
            if *destination != Destination::Session {
                updates.push(Update::AddRules {
                    rules: rules.clone(),
                    behavior: *behavior,
                    destination: Destination::Session,
                });
            }
        }
    }
    updates.extend(read);
    let mut offered: Vec<Suggested> = Vec::new();
    for update in updates {
        let Some(label) = label(call, &update) else {
            continue;
        };
        if offered
            .iter()
            .any(|seen| seen.update == update || seen.label == label)
        {
            continue;
        }
        offered.push(Suggested { label, update });
        if offered.len() == MAX_CHOICES {
            break;
        }
    }
    offered
}

/// The option's text, worded as Claude Code's dialog words it, with every rule, directory
/// and mode in it written out exactly; `None` when that cannot be shown whole on one line.
pub fn label(call: &ToolCall, update: &Update) -> Option<String> {
    let text = match update {
        Update::AddRules {
            rules, destination, ..
        } => {
            let rules = rules_text(call, rules)?;
            match destination {
                Destination::Session => {
                    format!("Yes, and don't ask again this session for: {rules}")
                }
                saved => format!(
                    "Yes, and don't ask again for: {rules} ({})",
                    saved_in(*saved)?
                ),
            }
        }
        Update::SetMode {
            mode: Mode::AcceptEdits,
            destination: Destination::Session,
        } => "Yes, allow all edits during this session".to_owned(),
        Update::SetMode { mode, destination } => match destination {
            Destination::Session => {
                format!("Yes, and switch to {} mode for this session", mode.name())
            }
            saved => format!(
                "Yes, and switch to {} mode ({})",
                mode.name(),
                saved_in(*saved)?
            ),
        },
        Update::AddDirectories {
            directories,
            destination,
        } => {
            let shown: Vec<&str> = directories
                .iter()
                .map(|dir| shown_whole(dir))
                .collect::<Option<_>>()?;
            let shown = shown.join(", ");
            match destination {
                Destination::Session => {
                    format!("Yes, and allow access to {shown} for this session")
                }
                saved => format!(
                    "Yes, and always allow access to {shown} ({})",
                    saved_in(*saved)?
                ),
            }
        }
    };
    (text.chars().count() <= MAX_LABEL_CHARS).then_some(text)
}

/// The rules as the settings write them: a lone rule for the call's own tool is its content
/// (`npm test *`), anything else `Tool(content)` or `Tool`, joined with ", ".
fn rules_text(call: &ToolCall, rules: &[Rule]) -> Option<String> {
    if let [Rule {
        tool_name,
        rule_content: Some(content),
    }] = rules
    {
        if *tool_name == call.tool_name {
            return shown_whole(content).map(str::to_owned);
        }
    }
    let written: Vec<String> = rules
        .iter()
        .map(|rule| {
            let tool = shown_whole(&rule.tool_name)?;
            Some(match &rule.rule_content {
                Some(content) => format!("{tool}({})", shown_whole(content)?),
                None => tool.to_owned(),
            })
        })
        .collect::<Option<_>>()?;
    Some(written.join(", "))
}

/// Where a saved rule goes, in the words of the hooks reference's destination table.
fn saved_in(destination: Destination) -> Option<&'static str> {
    match destination {
        Destination::Session => None,
        Destination::LocalSettings => Some("saved in .claude/settings.local.json"),
        Destination::ProjectSettings => {
            Some("saved in .claude/settings.json, shared with the project")
        }
        Destination::UserSettings => Some("saved in ~/.claude/settings.json, for every project"),
    }
}

/// `text` when it shows as itself on one line: not empty, no line breaks, control or
/// invisible characters (which would hide part of a rule from the operator).
pub(super) fn shown_whole(text: &str) -> Option<&str> {
    let plain = !text.trim().is_empty()
        && !text.chars().any(inbox_protocol::text::is_hidden)
        && matches!(
            inbox_protocol::text::one_line(text),
            std::borrow::Cow::Borrowed(_)
        );
    plain.then_some(text)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::commands::hook::payload;
    use serde_json::{json, Value};

    fn call(suggestions: Value) -> ToolCall {
        payload::parse(
            json!({"session_id": "s-1", "hook_event_name": "PermissionRequest",
                "tool_name": "Bash", "tool_input": {"command": "npm test -- cart"},
                "permission_suggestions": suggestions})
            .to_string()
            .as_bytes(),
        )
        .unwrap()
    }

    #[test]
    fn a_rule_is_offered_for_the_session_and_as_suggested() {
        let call = call(json!([{"type": "addRules",
            "rules": [{"toolName": "Bash", "ruleContent": "npm test *"}],
            "behavior": "allow", "destination": "localSettings"}]));
        let offered = choices(&call);
        let labels: Vec<&str> = offered.iter().map(|c| c.label.as_str()).collect();
        assert_eq!(
            labels,
            [
                "Yes, and don't ask again this session for: npm test *",
                "Yes, and don't ask again for: npm test * (saved in .claude/settings.local.json)",
            ]
        );
        assert_eq!(
            serde_json::to_value(&offered[1].update).unwrap(),
            json!({"type": "addRules", "rules": [{"toolName": "Bash", "ruleContent": "npm test *"}],
                "behavior": "allow", "destination": "localSettings"})
        );
        assert_eq!(
            serde_json::to_value(&offered[0].update).unwrap()["destination"],
            "session"
        );
    }

    /// Nothing is offered that the label would not show whole: unknown fields, other
    /// behaviours, line breaks or invisible characters in a rule, modes that bypass asking.
    #[test]
    fn a_suggestion_that_cannot_be_shown_whole_is_not_offered() {
        let rule = |content: &str, extra: Value| {
            let mut entry = json!({"type": "addRules",
                "rules": [{"toolName": "Bash", "ruleContent": content}],
                "behavior": "allow", "destination": "session"});
            if let Value::Object(extra) = extra {
                entry.as_object_mut().unwrap().extend(extra);
            }
            entry
        };
        for suggestion in [
            rule("npm test *", json!({"also": "hidden"})),
            rule("npm test *", json!({"behavior": "deny"})),
            rule("npm test *\nrm -rf ~", json!({})),
            rule("npm test \u{202e}*", json!({})),
            rule(&"x".repeat(600), json!({})),
            json!({"type": "setMode", "mode": "bypassPermissions", "destination": "session"}),
            json!({"type": "removeRules", "rules": [], "behavior": "deny",
                "destination": "session"}),
            json!("addRules"),
        ] {
            assert_eq!(
                choices(&call(json!([suggestion.clone()]))),
                vec![],
                "{suggestion}"
            );
        }
        let other_tool = call(json!([{"type": "addRules",
            "rules": [{"toolName": "Read", "ruleContent": "//etc/**"}, {"toolName": "WebSearch"}],
            "behavior": "allow", "destination": "session"}]));
        assert_eq!(
            choices(&other_tool)[0].label,
            "Yes, and don't ask again this session for: Read(//etc/**), WebSearch"
        );
        let edits = call(json!([{"type": "setMode", "mode": "acceptEdits",
            "destination": "session"}]));
        assert_eq!(
            choices(&edits)[0].label,
            "Yes, allow all edits during this session"
        );
    }
}
