//! `ask FILE|-`: validate a request, place it in the spool, print its id; with `--wait`,
//! block until its outcome and exit with a code that tells the status. The asking itself is
//! `inbox_client`'s; this module reads the file and turns its results into messages and exit
//! codes.

use anyhow::{bail, Result};
use inbox_client::{prepare, AskError, AskOptions, Asker, Reply};

use crate::args::{AskArgs, LocationArgs};
use crate::input::{self, ReadFailure};
use crate::{exit, locations, output, render};

pub fn run(locations: &LocationArgs, args: &AskArgs) -> Result<u8> {
    let name = input::display_name(&args.file);
    let bytes = match input::read_request(&args.file) {
        Ok(bytes) => bytes,
        Err(failure @ ReadFailure::TooLarge(_)) => {
            output::stderr(&format!(
                "{name}: the request is invalid and was not placed:\n  /: {failure}"
            ));
            return Ok(invalid_exit(args));
        }
        Err(ReadFailure::Io(error)) => bail!("cannot read {name}: {error}"),
    };
    // Validated before the spool is opened: an invalid request creates nothing.
    let prepared = match prepare(bytes, args.id.as_deref()) {
        Ok(prepared) => prepared,
        Err(AskError::Invalid(problems)) => {
            output::stderr(&format!(
                "{name}: the request is invalid and was not placed:\n{}",
                render::problem_lines(&problems)
            ));
            return Ok(invalid_exit(args));
        }
        Err(AskError::InvalidId(flag)) => bail!(
            "--id \"{flag}\" is not a valid request id: use letters, digits, '.', '_' or \
             '-', starting with a letter or digit, at most 128 characters"
        ),
        Err(AskError::IdMismatch { body, given }) => bail!(
            "the request's body has id \"{body}\" but --id says \"{given}\"; give one of them, \
             or make them equal"
        ),
        Err(error) => return Err(error.into()),
    };
    let id = prepared.id();

    let asker = Asker::open(locations::spool_path(locations)?)?;
    asker.place_prepared(&prepared)?;
    if !args.wait {
        output::stdout(&format!("{id}\n"))?;
        return Ok(exit::OK);
    }

    // Standard output is for the outcome alone, so `> outcome.json` captures just that.
    output::stderr(&format!("placed {id}; waiting for its outcome"));
    let options = AskOptions {
        timeout: args.timeout,
        cancel: None,
        require_person: args.require_person,
    };
    let reply = match asker.wait(id, &options) {
        Ok(reply) => reply,
        // Someone wrote an outcome file that does not answer this request: never taken as
        // the answer, and said so with its own code.
        Err(error @ AskError::BadOutcome { .. }) => {
            output::stderr(&format!("{error}; it is not taken as an answer"));
            return Ok(exit::BAD_OUTCOME);
        }
        // `--require-person`: defaults a policy gave are not an answer. The outcome is still
        // printed, so a script can see which policy settled it.
        Err(AskError::SettledByPolicy { outcome }) => {
            output::json(&outcome)?;
            output::stderr(&format!(
                "request {id} was {} by {}, not by a person; --require-person refuses it",
                outcome.status, outcome.answered_by
            ));
            return Ok(exit::SETTLED_BY_POLICY);
        }
        Err(error) => {
            return Err(
                anyhow::Error::new(error).context(format!("waiting for the outcome of \"{id}\""))
            )
        }
    };
    Ok(match reply {
        Reply::Settled(outcome) => {
            output::json(&outcome)?;
            exit::for_status(outcome.status)
        }
        Reply::CancelledByAsker { .. } => {
            output::stderr(&format!(
                "request {id} was cancelled by its asker; there is no outcome"
            ));
            exit::CANCELLED
        }
        Reply::TimedOut { .. } => {
            let seconds = args.timeout.unwrap_or_default().as_secs_f64();
            output::stderr(&format!(
                "no outcome for {id} within {seconds} s; the request stays pending (its \
                 outcome will appear as {}; `answer-inbox cancel {id}` withdraws it)",
                asker.outcome_path(id)?.display()
            ));
            exit::TIMED_OUT
        }
    })
}

/// An invalid request is never placed. A script waiting for an outcome learns it the same
/// way it would learn the inbox's rejection: exit 12.
fn invalid_exit(args: &AskArgs) -> u8 {
    if args.wait {
        exit::REJECTED
    } else {
        exit::FAILURE
    }
}
