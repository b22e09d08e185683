//! Placing a hook's request and waiting for a person's answer, the same for every event:
//! withdrawn when the agent stops waiting, withdrawn after the timeout, and a policy's
//! defaults never taken for an answer.

use std::time::Duration;

use anyhow::Result;
use inbox_client::{AskError, AskOptions, Asker, CancelToken, Outcome, Prepared, Reply};

use crate::args::{AgentHookArgs, LocationArgs};
use crate::locations;

use super::payload::Agent;
use super::stopped;

/// How long past the request's own expiry to wait for a running inbox to expire it, before
/// the hook withdraws the request itself (no inbox is running, or it is stuck).
const EXPIRY_GRACE: Duration = Duration::from_secs(2);

/// What came of asking: an outcome a person's hand may be on, or why there is none.
pub enum Waited {
    Settled(Box<Outcome>),
    /// No outcome to act on; the reason says why (for standard error).
    Nothing(String),
}

/// Places `prepared` and waits up to `args.timeout` (plus a grace) for its outcome.
pub fn place_and_wait(
    locations: &LocationArgs,
    args: &AgentHookArgs,
    prepared: &Prepared,
    agent: Agent,
) -> Result<Waited> {
    let id = prepared.id().to_owned();
    let asker = Asker::open(locations::spool_path(locations)?)?;
    let stopped = CancelToken::new();
    stopped::withdraw_when_stopped(&stopped, agent.name())?;
    let options = AskOptions {
        timeout: Some(args.timeout + EXPIRY_GRACE),
        cancel: Some(stopped.clone()),
        // Only a person decides for the agent: defaults a policy filled in are not an answer.
        require_person: true,
    };
    let reply = match asker.ask_prepared(prepared, &options) {
        Ok(reply) => reply,
        Err(AskError::SettledByPolicy { outcome }) => {
            return Ok(Waited::Nothing(format!(
                "request {id} was {} by {}, not by a person",
                outcome.status, outcome.answered_by
            )))
        }
        Err(error) => return Err(error.into()),
    };
    let reply = match reply {
        // Nobody expired it in time (no inbox running?): withdraw it, so nobody answers a
        // question the agent no longer waits for. An outcome written meanwhile still wins.
        Reply::TimedOut { .. } => {
            asker.withdraw(&id, &format!("{} stopped waiting", agent.name()))?
        }
        reply => reply,
    };
    Ok(match reply {
        Reply::Settled(outcome) => Waited::Settled(Box::new(outcome)),
        // Stopped: whatever is printed now is read by nobody, and it allows nothing.
        Reply::CancelledByAsker { .. } if stopped.is_cancelled() => Waited::Nothing(format!(
            "{} stopped waiting; request {id} withdrawn",
            agent.name()
        )),
        Reply::CancelledByAsker { .. } => Waited::Nothing(format!(
            "no answer to request {id} within {} s; asking in the terminal",
            args.timeout.as_secs()
        )),
        Reply::TimedOut { .. } => unreachable!("withdrawing never times out"),
    })
}
