//! `answer ID --answers JSON | --set QID=VALUE... | --decline REASON`: settle a request as
//! the operator. The engine checks the answers and writes the outcome file itself, first
//! writer wins; this module turns the command line into answers and results into exit codes.

use std::io::Read;

use anyhow::{bail, Context, Result};
use chrono::SecondsFormat;
use inbox_engine::{Area, Engine, SettleError, Spool};
use inbox_protocol::problem::pointer_token;
use inbox_protocol::text::one_line;
use inbox_protocol::{coerce_cli_values, parse_request, Outcome, Problem, Surface};
use serde_json::{Map, Value};

use crate::args::{AnswerArgs, LocationArgs};
use crate::{exit, locations, output, render};

pub fn run(locations: &LocationArgs, args: &AnswerArgs) -> Result<u8> {
    let id = args.id.as_str();
    super::ensure_valid_id(id)?;
    let version = args.version.as_deref().map(check_version).transpose()?;
    // Malformed input fails before anything is opened.
    let given = match &args.answers {
        Some(text) => Some(answers_object(text)?),
        None => None,
    };
    let pairs = parse_set(&args.set)?;

    let mut engine = locations::open_engine(locations)?;
    let result = if let Some(reason) = &args.decline {
        engine.decline(id, reason, version, Surface::Cli)
    } else {
        let given = match given {
            Some(given) => given,
            None => match coerce(engine.spool(), id, &pairs) {
                Ok(given) => given,
                // A settled request is reported as such, whatever was wrong with the values.
                Err(problems) => {
                    let error = settled_or(&mut engine, id, version, problems);
                    return report(&engine, id, Err(error));
                }
            },
        };
        engine.answer(id, &given, version, Surface::Cli)
    };
    report(&engine, id, result)
}

/// `--version`: hex digits, at least as many as the engine needs to tell versions apart.
fn check_version(text: &str) -> Result<&str> {
    let text = text.trim();
    let min = inbox_engine::MIN_VERSION_PREFIX;
    if text.len() < min || text.len() > 64 || !text.chars().all(|c| c.is_ascii_hexdigit()) {
        bail!("--version takes the request's version as `show` prints it: {min} to 64 hex digits");
    }
    Ok(text)
}

/// `--answers`: a JSON object, given inline, as `@FILE`, or as `-` (standard input).
fn answers_object(text: &str) -> Result<Map<String, Value>> {
    let (json, from) = if text == "-" {
        let mut json = String::new();
        std::io::stdin()
            .read_to_string(&mut json)
            .context("cannot read --answers from standard input")?;
        (json, "standard input".to_owned())
    } else if let Some(path) = text.strip_prefix('@') {
        let json = std::fs::read_to_string(path)
            .with_context(|| format!("cannot read --answers from {path}"))?;
        (json, path.to_owned())
    } else {
        (text.to_owned(), "--answers".to_owned())
    };
    match serde_json::from_str::<Value>(&json) {
        Ok(Value::Object(map)) => Ok(map),
        Ok(_) => bail!(
            "{from} must be a JSON object keyed by question id, e.g. {{\"go\": true, \"env\": \"staging\"}}"
        ),
        Err(error) => bail!("{from} is not valid JSON: {error}"),
    }
}

/// `--set QID=VALUE` pairs, grouped by question id in the order given.
fn parse_set(raw: &[String]) -> Result<Vec<(String, Vec<String>)>> {
    let mut pairs: Vec<(String, Vec<String>)> = Vec::new();
    for item in raw {
        let Some((qid, value)) = item.split_once('=') else {
            bail!("--set \"{item}\" is not QID=VALUE (the question id, '=', then the answer)");
        };
        let qid = qid.trim();
        if qid.is_empty() {
            bail!("--set \"{item}\" has no question id before '='");
        }
        match pairs.iter_mut().find(|(known, _)| known == qid) {
            Some((_, values)) => values.push(value.to_owned()),
            None => pairs.push((qid.to_owned(), vec![value.to_owned()])),
        }
    }
    Ok(pairs)
}

/// Turns `--set` values into typed answers, using the request's questions. The values are
/// checked (options, patterns, required questions) by the engine afterwards. When the
/// request is missing, unreadable or invalid, the values go to the engine as plain text: it
/// refuses to answer such a request and says why (unknown, already settled, unreadable).
fn coerce(
    spool: &Spool,
    id: &str,
    pairs: &[(String, Vec<String>)],
) -> Result<Map<String, Value>, Vec<Problem>> {
    let request = spool
        .read(Area::Questions, id)
        .ok()
        .and_then(|bytes| parse_request(&bytes, Some(id)).ok());
    let Some(request) = request else {
        return Ok(pairs
            .iter()
            .map(|(qid, values)| {
                let value = match values.as_slice() {
                    [one] => Value::String(one.clone()),
                    many => Value::Array(many.iter().cloned().map(Value::String).collect()),
                };
                (qid.clone(), value)
            })
            .collect());
    };
    let mut given = Map::new();
    let mut problems = Vec::new();
    for (qid, values) in pairs {
        let at = format!("/{}", pointer_token(qid));
        match request.question(qid) {
            None => problems.push(Problem::new(
                at,
                format!("there is no question \"{qid}\" in this request"),
            )),
            Some(question) => match coerce_cli_values(question, values) {
                Ok(value) => {
                    given.insert(qid.clone(), value);
                }
                Err(message) => problems.push(Problem::new(at, message)),
            },
        }
    }
    if problems.is_empty() {
        Ok(given)
    } else {
        Err(problems)
    }
}

/// The error to report when the `--set` values are unusable: "already settled",
/// "cancelled", "changed" or "blocked" if that is so (it matters more), else the problems.
fn settled_or(
    engine: &mut Engine,
    id: &str,
    version: Option<&str>,
    problems: Vec<Problem>,
) -> SettleError {
    match engine.answerable(id, version) {
        Ok(_) => SettleError::Invalid(problems),
        Err(error) => error,
    }
}

fn report(engine: &Engine, id: &str, result: Result<Outcome, SettleError>) -> Result<u8> {
    match result {
        Ok(outcome) => {
            output::stderr(&format!(
                "{} {id} as {}; outcome written to {}",
                outcome.status,
                one_line(&outcome.answered_by),
                engine.spool().path(Area::Answers, id).display()
            ));
            output::json(&outcome)?;
            Ok(exit::OK)
        }
        Err(SettleError::Invalid(problems)) => {
            output::stderr(&format!(
                "nothing written for {id}:\n{}",
                render::problem_lines(&problems)
            ));
            Ok(exit::FAILURE)
        }
        Err(SettleError::AlreadySettled(outcome)) => {
            output::stderr(&already_settled(&outcome));
            Ok(exit::ALREADY_SETTLED)
        }
        Err(SettleError::Cancelled(_)) => {
            output::stderr(&format!(
                "request {id} was cancelled by its asker; it takes no answer"
            ));
            Ok(exit::ALREADY_SETTLED)
        }
        Err(error @ SettleError::Unwritten { .. }) => {
            output::stderr(&format!(
                "{error}: by `answer-inbox watch`, the desktop app, or the next answer-inbox \
                 command, whichever runs first."
            ));
            Ok(exit::KEPT)
        }
        Err(error @ SettleError::Changed { .. }) => {
            output::stderr(&format!("{error}; nothing written"));
            Ok(exit::CHANGED)
        }
        Err(error @ SettleError::Blocked { .. }) => {
            output::stderr(&format!("{error}; nothing written"));
            Ok(exit::BLOCKED)
        }
        Err(SettleError::NotFound(_)) => bail!(
            "no request \"{id}\" in the spool {}",
            engine.spool().root().display()
        ),
        Err(error) => Err(error.into()),
    }
}

/// `request X is already settled: answered by operator:ann at 2026-12-03T10:42:17Z`.
pub fn already_settled(outcome: &Outcome) -> String {
    format!(
        "request {} is already settled: {} by {} at {}",
        one_line(&outcome.id),
        outcome.status,
        one_line(&outcome.answered_by),
        outcome
            .answered_at
            .to_rfc3339_opts(SecondsFormat::Secs, true)
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn set_pairs_group_by_question() {
        let raw = ["tags=a", "go=yes", "tags=b", "note=x=y"].map(String::from);
        let pairs = parse_set(&raw).unwrap();
        assert_eq!(
            pairs,
            vec![
                ("tags".to_owned(), vec!["a".to_owned(), "b".to_owned()]),
                ("go".to_owned(), vec!["yes".to_owned()]),
                ("note".to_owned(), vec!["x=y".to_owned()]),
            ]
        );
        assert!(parse_set(&["novalue".to_owned()]).is_err());
        assert!(parse_set(&["=x".to_owned()]).is_err());
    }

    #[test]
    fn answers_must_be_an_object() {
        assert!(answers_object(r#"{"go": true}"#).is_ok());
        assert!(answers_object("[1]").is_err());
        assert!(answers_object("{").is_err());
    }
}
