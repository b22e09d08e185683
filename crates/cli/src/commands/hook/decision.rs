//! What the hook tells Claude Code, in the output each event expects (see the module comment
//! of `hook` for the documented shapes). Only a person's allow becomes an allow; everything
//! that is not a clear answer is `Fallback`: Claude Code asks in its own terminal.

use serde_json::{json, Value};

use super::payload::HookEvent;
use super::suggestions::Update;

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Decision {
    /// Run the tool; `reason` says who allowed it (Claude Code logs it). `permissions` is
    /// the one suggestion the operator chose, if any, returned as `updatedPermissions`
    /// (PermissionRequest only: PreToolUse never offers one).
    Allow {
        reason: String,
        permissions: Vec<Update>,
    },
    /// Do not run it; `message` is told to Claude.
    Deny { message: String },
    /// No decision here: Claude Code's own permission prompt decides. `reason` is shown in
    /// that prompt (PreToolUse) so the person at the terminal knows why they are asked.
    Fallback { reason: String },
}

/// The JSON to print on standard output, or `None` when printing nothing is the answer (a
/// PermissionRequest falls back by saying nothing: its own dialog then shows as usual).
pub fn output(event: HookEvent, decision: &Decision) -> Option<Value> {
    match event {
        HookEvent::PreToolUse => {
            let (verdict, reason) = match decision {
                Decision::Allow { reason, .. } => ("allow", reason),
                Decision::Deny { message } => ("deny", message),
                Decision::Fallback { reason } => ("ask", reason),
            };
            Some(json!({"hookSpecificOutput": {
                "hookEventName": event.name(),
                "permissionDecision": verdict,
                "permissionDecisionReason": reason,
            }}))
        }
        HookEvent::PermissionRequest => {
            let decision = match decision {
                Decision::Allow { permissions, .. } if permissions.is_empty() => {
                    json!({"behavior": "allow"})
                }
                Decision::Allow { permissions, .. } => {
                    json!({"behavior": "allow", "updatedPermissions": permissions})
                }
                Decision::Deny { message } => json!({"behavior": "deny", "message": message}),
                Decision::Fallback { .. } => return None,
            };
            Some(json!({"hookSpecificOutput": {
                "hookEventName": event.name(),
                "decision": decision,
            }}))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_event_gets_its_own_shape() {
        let deny = Decision::Deny {
            message: "not on main".into(),
        };
        let pre = output(HookEvent::PreToolUse, &deny).unwrap();
        assert_eq!(pre["hookSpecificOutput"]["permissionDecision"], "deny");
        assert_eq!(
            pre["hookSpecificOutput"]["permissionDecisionReason"],
            "not on main"
        );
        let request = output(HookEvent::PermissionRequest, &deny).unwrap();
        assert_eq!(
            request["hookSpecificOutput"]["decision"],
            json!({"behavior": "deny", "message": "not on main"})
        );
    }

    #[test]
    fn a_fallback_never_reads_as_allow() {
        let fallback = Decision::Fallback {
            reason: "timed out".into(),
        };
        let pre = output(HookEvent::PreToolUse, &fallback).unwrap();
        assert_eq!(pre["hookSpecificOutput"]["permissionDecision"], "ask");
        assert_eq!(output(HookEvent::PermissionRequest, &fallback), None);
    }
}
