//! What a front end asks of the running loop: the one closed set of writes, each with a
//! reply channel (atuin's daemon does the same). The desktop app sends its window's and its
//! notification buttons' answers here, so one engine on one database connection decides
//! everything, in order with the spool's own events; reads go through [`crate::query`].
//!
//! Settings that change where the inbox is (another spool) start another loop; switches
//! that only change how loudly it notifies live with the notifier.

use crossbeam_channel::{Receiver, Sender};
use inbox_protocol::{Outcome, Surface};
use serde_json::{Map, Value};

use crate::engine::SettleError;
use crate::SpoolError;

/// The answer to a [`Command`], sent once the loop has done it.
pub type Reply<T> = Sender<T>;

#[derive(Debug)]
pub enum Command {
    /// Write the operator's answers (question id → value) as the outcome, if the request
    /// is still the version the operator was shown (`version`: its SHA-256, hex).
    Answer {
        id: String,
        answers: Map<String, Value>,
        version: String,
        /// Where the operator answered: the window, or a notification's button.
        surface: Surface,
        reply: Reply<Result<Outcome, SettleError>>,
    },
    /// Decline with a reason, which goes to the asker; `version` as for `Answer`.
    Decline {
        id: String,
        reason: String,
        version: String,
        surface: Surface,
        reply: Reply<Result<Outcome, SettleError>>,
    },
    /// Place the demo requests; replies with their ids.
    PlaceDemo {
        reply: Reply<Result<Vec<String>, SpoolError>>,
    },
}

impl Command {
    /// An answer command and the receiver of its reply.
    pub fn answer(
        id: &str,
        answers: Map<String, Value>,
        version: &str,
        surface: Surface,
    ) -> (Command, Receiver<Result<Outcome, SettleError>>) {
        let (reply, receiver) = crossbeam_channel::bounded(1);
        let command = Command::Answer {
            id: id.to_owned(),
            answers,
            version: version.to_owned(),
            surface,
            reply,
        };
        (command, receiver)
    }

    /// A decline command and the receiver of its reply.
    pub fn decline(
        id: &str,
        reason: &str,
        version: &str,
        surface: Surface,
    ) -> (Command, Receiver<Result<Outcome, SettleError>>) {
        let (reply, receiver) = crossbeam_channel::bounded(1);
        let command = Command::Decline {
            id: id.to_owned(),
            reason: reason.to_owned(),
            version: version.to_owned(),
            surface,
            reply,
        };
        (command, receiver)
    }

    /// A demo command and the receiver of its reply.
    pub fn place_demo() -> (Command, Receiver<Result<Vec<String>, SpoolError>>) {
        let (reply, receiver) = crossbeam_channel::bounded(1);
        (Command::PlaceDemo { reply }, receiver)
    }
}
