//! Whether the model may choose autonomous mode.
//!
//! A request in autonomous mode whose every question has a default is settled by an inbox at
//! once with those defaults: nobody is asked. Offered to a model, that lets an agent approve
//! its own question, so it is the operator's to allow, not the model's to take: by default
//! the tool does not offer `mode`, and a call that sends it anyway is asked of a person.

use serde_json::Value;

/// What the server does with a call's `mode`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Autonomy {
    /// The operator started the server with `--allow-autonomous`: the schema offers `mode`
    /// and the call's choice stands.
    Allowed,
    /// The schema does not offer `mode`, and every request is placed interactive, whatever
    /// the call sends: its questions reach a person.
    #[default]
    Withheld,
}

impl Autonomy {
    /// From the `--allow-autonomous` flag.
    pub fn allowed_if(flag: bool) -> Autonomy {
        if flag {
            Autonomy::Allowed
        } else {
            Autonomy::Withheld
        }
    }
}

/// Said to the model when a call's `mode` was not honoured: what was sent, that it was not
/// honoured and why, and what happened instead (so it neither retries in a loop nor reads a
/// person's answer as its defaults).
pub fn withheld_notice(sent: &Value) -> String {
    format!(
        "\"mode\": {sent} was not honoured: this server does not let the caller choose \
         autonomous mode (the operator did not start it with --allow-autonomous). The \
         questions were asked of the operator like any others."
    )
}
