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
    Ok(waited(
        reply,
        stopped.is_cancelled(),
        agent.name(),
        args.timeout,
    ))
}

/// What the hook makes of the wait's end. `stopped`: the host stopped the hook (a signal,
/// its parent gone) before or while the wait ended.
fn waited(reply: Reply, stopped: bool, agent: &str, timeout: Duration) -> Waited {
    let id = reply.id().to_owned();
    match reply {
        // Stopped while an outcome landed: the host has gone on without us (it answered in
        // its own dialog, or ended), so nothing that allows is printed, whatever was chosen.
        Reply::Settled(outcome) if stopped => Waited::Nothing(format!(
            "{agent} stopped waiting; request {id} was {} meanwhile, not passed on",
            outcome.status
        )),
        Reply::Settled(outcome) => Waited::Settled(Box::new(outcome)),
        // Stopped: whatever is printed now is read by nobody, and it allows nothing.
        Reply::CancelledByAsker { .. } if stopped => {
            Waited::Nothing(format!("{agent} stopped waiting; request {id} withdrawn"))
        }
        Reply::CancelledByAsker { .. } => Waited::Nothing(format!(
            "no answer to request {id} within {} s; asking in the terminal",
            timeout.as_secs()
        )),
        // Unreachable in place_and_wait (a timeout is turned into a withdrawal), and
        // allowing nothing if it ever were reached.
        Reply::TimedOut { .. } => Waited::Nothing(format!(
            "no answer to request {id} within {} s; asking in the terminal",
            timeout.as_secs()
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn allowed() -> Reply {
        let outcome = serde_json::json!({
            "inbox": 1,
            "id": "r1",
            "status": "answered",
            "answered_by": "operator:ann",
            "answers": {"decision": "allow_once"},
            "answered_at": "2026-12-06T00:00:00Z",
            "instance": "test",
        });
        Reply::Settled(serde_json::from_value(outcome).expect("an outcome"))
    }

    /// An outcome that lands as the host stops the hook is not passed on: the host has
    /// answered in its own dialog, or ended, and an allow printed now decides nothing it
    /// asked for.
    #[test]
    fn a_stopped_hook_passes_on_no_outcome() {
        let timeout = Duration::from_secs(600);
        match waited(allowed(), true, "claude-code", timeout) {
            Waited::Nothing(said) => assert!(said.contains("not passed on"), "{said}"),
            Waited::Settled(_) => panic!("a stopped hook passed on an outcome"),
        }
        assert!(matches!(
            waited(allowed(), false, "claude-code", timeout),
            Waited::Settled(_)
        ));
    }
}
