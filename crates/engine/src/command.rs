//! What a front end asks of the running loop: the one closed set of writes, each with a
//! reply channel (atuin's daemon does the same). The desktop app sends its window's and its
//! notification buttons' answers here, so one engine on one database connection decides
//! everything, in order with the spool's own events; reads go through [`crate::query`].
//!
//! Settings that change where the inbox is (another spool) start another loop; switches
//! that only change how loudly it notifies live with the notifier.

use crossbeam_channel::{Receiver, Sender};
use inbox_protocol::{Outcome, Via};
use serde_json::{Map, Value};

use std::time::Duration;

use crate::results::{SettleError, Snoozed};
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
        /// Where the operator answered: the window, a notification's button, a paired
        /// device's browser (named).
        via: Via,
        reply: Reply<Result<Outcome, SettleError>>,
    },
    /// Decline with a reason, which goes to the asker; `version` as for `Answer`.
    Decline {
        id: String,
        reason: String,
        version: String,
        via: Via,
        reply: Reply<Result<Outcome, SettleError>>,
    },
    /// Place the demo requests; replies with their ids.
    PlaceDemo {
        reply: Reply<Result<Vec<String>, SpoolError>>,
    },
    /// Snooze a pending request for a while (see [`crate::Engine::snooze`]).
    Snooze {
        id: String,
        duration: Duration,
        reply: Reply<Result<Snoozed, SettleError>>,
    },
    /// End a request's snooze now.
    Unsnooze {
        id: String,
        reply: Reply<Result<bool, SettleError>>,
    },
    /// Answer every member (request id, the version the operator was shown) with the same
    /// answers (see [`crate::Engine::answer_alike`]); each member gets its own result.
    AnswerAlike {
        members: Vec<(String, String)>,
        answers: Map<String, Value>,
        via: Via,
        reply: Reply<AlikeResults>,
    },
}

/// What [`Command::AnswerAlike`] replies: each member's id and what became of its answer.
pub type AlikeResults = Vec<(String, Result<Outcome, SettleError>)>;

impl Command {
    /// An answer command and the receiver of its reply.
    pub fn answer(
        id: &str,
        answers: Map<String, Value>,
        version: &str,
        via: impl Into<Via>,
    ) -> (Command, Receiver<Result<Outcome, SettleError>>) {
        let (reply, receiver) = crossbeam_channel::bounded(1);
        let command = Command::Answer {
            id: id.to_owned(),
            answers,
            version: version.to_owned(),
            via: via.into(),
            reply,
        };
        (command, receiver)
    }

    /// A decline command and the receiver of its reply.
    pub fn decline(
        id: &str,
        reason: &str,
        version: &str,
        via: impl Into<Via>,
    ) -> (Command, Receiver<Result<Outcome, SettleError>>) {
        let (reply, receiver) = crossbeam_channel::bounded(1);
        let command = Command::Decline {
            id: id.to_owned(),
            reason: reason.to_owned(),
            version: version.to_owned(),
            via: via.into(),
            reply,
        };
        (command, receiver)
    }

    /// A snooze command and the receiver of its reply.
    pub fn snooze(
        id: &str,
        duration: Duration,
    ) -> (Command, Receiver<Result<Snoozed, SettleError>>) {
        let (reply, receiver) = crossbeam_channel::bounded(1);
        let command = Command::Snooze {
            id: id.to_owned(),
            duration,
            reply,
        };
        (command, receiver)
    }

    /// An unsnooze command and the receiver of its reply.
    pub fn unsnooze(id: &str) -> (Command, Receiver<Result<bool, SettleError>>) {
        let (reply, receiver) = crossbeam_channel::bounded(1);
        let command = Command::Unsnooze {
            id: id.to_owned(),
            reply,
        };
        (command, receiver)
    }

    /// An answer-alike command and the receiver of its reply.
    pub fn answer_alike(
        members: Vec<(String, String)>,
        answers: Map<String, Value>,
        via: impl Into<Via>,
    ) -> (Command, Receiver<AlikeResults>) {
        let (reply, receiver) = crossbeam_channel::bounded(1);
        let command = Command::AnswerAlike {
            members,
            answers,
            via: via.into(),
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
