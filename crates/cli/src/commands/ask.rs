//! `ask FILE|-`: validate a request, place it in the spool, print its id; with `--wait`,
//! block until its outcome and exit with a code that tells the status.

use anyhow::{bail, Context, Result};
use inbox_engine::wait::{wait_for_outcome, Waited};
use inbox_engine::{Area, SpoolError};
use inbox_protocol::{is_valid_id, parse_request};
use serde_json::Value;

use crate::args::{AskArgs, LocationArgs};
use crate::input::{self, ReadFailure};
use crate::{exit, locations, output, render};

pub fn run(locations: &LocationArgs, args: &AskArgs) -> Result<u8> {
    let name = input::display_name(&args.file);
    let bytes = match input::read_request(&args.file) {
        Ok(bytes) => bytes,
        Err(failure @ ReadFailure::TooLarge(_)) => {
            eprintln!("{name}: the request is invalid and was not placed:\n  /: {failure}");
            return Ok(invalid_exit(args));
        }
        Err(ReadFailure::Io(error)) => bail!("cannot read {name}: {error}"),
    };
    let id = choose_id(&bytes, args.id.as_deref())?;
    if let Err(problems) = parse_request(&bytes, Some(&id)) {
        eprintln!(
            "{name}: the request is invalid and was not placed:\n{}",
            render::problem_lines(&problems)
        );
        return Ok(invalid_exit(args));
    }

    let spool = locations::open_spool(locations)?;
    match spool.place_request(&id, &bytes) {
        Ok(_) => {}
        Err(SpoolError::RequestExists(_)) => bail!(
            "a request with id \"{id}\" is already in the spool {}; use a new id for a new \
             question",
            spool.root().display()
        ),
        Err(error) => {
            return Err(error).with_context(|| format!("cannot place request \"{id}\""));
        }
    }
    if !args.wait {
        output::stdout(&format!("{id}\n"))?;
        return Ok(exit::OK);
    }

    // Standard output is for the outcome alone, so `> outcome.json` captures just that.
    eprintln!("placed {id}; waiting for its outcome");
    let waited = wait_for_outcome(&spool, &id, args.timeout)
        .with_context(|| format!("waiting for the outcome of \"{id}\""))?;
    Ok(match waited {
        Waited::Settled(outcome) => {
            output::json(&outcome)?;
            exit::for_status(outcome.status)
        }
        Waited::Cancelled => {
            eprintln!("request {id} was cancelled by its asker; there is no outcome");
            exit::CANCELLED
        }
        Waited::TimedOut => {
            let seconds = args.timeout.unwrap_or_default().as_secs_f64();
            eprintln!(
                "no outcome for {id} within {seconds} s; the request stays pending (its \
                 outcome will appear as {}; `answer-inbox cancel {id}` withdraws it)",
                spool.path(Area::Answers, &id).display()
            );
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

/// The body's `id`, else `--id`, else a new ULID. Both given must agree.
fn choose_id(bytes: &[u8], flag: Option<&str>) -> Result<String> {
    let body_id = serde_json::from_slice::<Value>(bytes)
        .ok()
        .and_then(|value| value.get("id")?.as_str().map(str::to_owned));
    if let Some(flag) = flag {
        if !is_valid_id(flag) {
            bail!(
                "--id \"{flag}\" is not a valid request id: use letters, digits, '.', '_' or \
                 '-', starting with a letter or digit, at most 128 characters"
            );
        }
    }
    Ok(match (body_id, flag) {
        (Some(body), Some(flag)) if body != flag => bail!(
            "the request's body has id \"{body}\" but --id says \"{flag}\"; give one of them, \
             or make them equal"
        ),
        // An invalid id in the body is reported with the other problems by the parser.
        (Some(body), _) => body,
        (None, Some(flag)) => flag.to_owned(),
        (None, None) => ulid::Ulid::new().to_string(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_id_comes_from_the_body_then_the_flag_then_a_ulid() {
        let with_id = br#"{"inbox": 1, "id": "abc", "questions": []}"#;
        assert_eq!(choose_id(with_id, None).unwrap(), "abc");
        assert_eq!(choose_id(with_id, Some("abc")).unwrap(), "abc");
        assert!(choose_id(with_id, Some("xyz")).is_err());
        assert_eq!(choose_id(b"[]", Some("xyz")).unwrap(), "xyz");
        assert!(choose_id(b"[]", Some("../x")).is_err());
        assert_eq!(choose_id(b"[]", None).unwrap().len(), 26);
    }
}
