//! `answer ID --answers JSON | --set QID=VALUE... | --decline REASON`: settle a request as
//! the operator. The engine checks the answers and writes the outcome file itself, first
//! writer wins; this module turns the command line into answers and results into exit codes.
//!
//! `answer ID --alike ...` answers ID's group instead (`inbox_engine::alike`): every pending
//! request that asks the same questions, after a screen that lists each one and a yes from
//! the operator (or `--yes`), each answer bound to the version the screen listed.

use std::io::{IsTerminal, Write};

use anyhow::{bail, Context, Result};
use chrono::SecondsFormat;
use inbox_engine::alike::alike_of;
use inbox_engine::inbox_policy::capped_read;
use inbox_engine::{Area, Engine, SettleError, Spool};
use inbox_protocol::problem::pointer_token;
use inbox_protocol::text::one_line;
use inbox_protocol::{check_answers, coerce_cli_values, parse_request, Outcome, Problem, Surface};
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
    if args.alike {
        return answer_alike(&mut engine, id, given, &pairs, args.yes);
    }
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

/// The largest --answers read, from a file or standard input: the protocol's cap on a
/// request file, since the answers to a request are never more than the request that holds
/// its questions (and an outcome file carrying them has the same cap).
const MAX_ANSWERS_BYTES: u64 = inbox_protocol::limits::MAX_FILE_BYTES;

/// `--answers`: a JSON object, given inline, as `@FILE`, or as `-` (standard input).
fn answers_object(text: &str) -> Result<Map<String, Value>> {
    let (json, from) = if text == "-" {
        let json = capped_read::read_stream_text(
            std::io::stdin().lock(),
            "--answers from standard input",
            MAX_ANSWERS_BYTES,
        )?;
        (json, "standard input".to_owned())
    } else if let Some(path) = text.strip_prefix('@') {
        // A plain file only, opened without blocking (a FIFO or device would hang or never
        // end), at most MAX_ANSWERS_BYTES (inbox_policy::capped_read).
        let json = capped_read::read_text(std::path::Path::new(path), MAX_ANSWERS_BYTES).map_err(
            |error| anyhow::anyhow!("cannot read --answers from {path}: {}", error.problem()),
        )?;
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
        // The answer counts, as one approval of several: done for this operator.
        Err(SettleError::AwaitingApprovals {
            progress, needed, ..
        }) => {
            output::stdout(&format!("{}\n", awaiting(&progress, needed)))?;
            Ok(exit::OK)
        }
        Err(error @ SettleError::NotAssigned { .. }) => {
            output::stderr(&format!(
                "{}; nothing written{}",
                render::line(&error.to_string()),
                assignees_of(engine, id)
            ));
            Ok(exit::NOT_ASSIGNED)
        }
        Err(SettleError::NotFound(_)) => bail!(
            "no request \"{id}\" in the spool {}",
            engine.spool().root().display()
        ),
        Err(error) => Err(error.into()),
    }
}

/// "approved (1 of 2: approved by alice); it settles when 2 have approved the same
/// answers": an answer recorded as one approval of a request that needs several.
fn awaiting(progress: &str, needed: u32) -> String {
    // No progress is known when no running inbox judged the request yet: the approvals
    // are counted with its judgement, which `watch` (or the desktop app) keeps.
    let progress = match progress {
        "" => "your approval is recorded".to_owned(),
        known => render::line(known),
    };
    format!(
        "approved ({progress}); it settles when {needed} assignees have approved the same answers"
    )
}

/// " It is assigned to alice, bob." (groups expanded), from the request's judgement; empty
/// when the inbox has no team for it. The refusal's reason names the rule's entries as
/// written; this says who they are now.
fn assignees_of(engine: &Engine, id: &str) -> String {
    let team = engine
        .queries()
        .detail(id)
        .ok()
        .flatten()
        .and_then(|detail| super::list::team_of(engine, &detail.summary));
    match team {
        Some(team) if !team.assignees.is_empty() => format!(
            ". It is assigned to {}",
            render::line(&team.assignees.join(", "))
        ),
        Some(_) => ". None of its assignees exists on this machine".to_owned(),
        None => String::new(),
    }
}

/// `--alike`: answers ID's group (see the module's introduction). The answers are checked
/// against ID's request before anything is shown (the members ask the same questions, and
/// each answer is checked again against its own request when it is written).
fn answer_alike(
    engine: &mut Engine,
    id: &str,
    given: Option<Map<String, Value>>,
    pairs: &[(String, Vec<String>)],
    yes: bool,
) -> Result<u8> {
    // The group is found in the inbox's database: take in what arrived while no inbox ran.
    engine.sync().context("cannot scan the spool")?;
    // ID itself must be answerable; if not, say why as `answer ID` would.
    let request = match engine.answerable(id, None) {
        Ok(request) => request,
        Err(error) => return report(engine, id, Err(error)),
    };
    let given = match given {
        Some(given) => given,
        None => match coerce(engine.spool(), id, pairs) {
            Ok(given) => given,
            Err(problems) => return report(engine, id, Err(SettleError::Invalid(problems))),
        },
    };
    let checked = match check_answers(&request, &given) {
        Ok(checked) => checked,
        Err(problems) => return report(engine, id, Err(SettleError::Invalid(problems))),
    };
    let Some(group) = alike_of(&engine.queries(), id).context("cannot find alike requests")? else {
        bail!(
            "request {id} may be answered, but it is not in the pending list, so it has no \
             group; answer it without --alike"
        );
    };
    // The version each member is bound to: the one the inbox holds, shown on the screen.
    let mut shown = Vec::with_capacity(group.members.len());
    for member in &group.members {
        let version = engine
            .queries()
            .detail(&member.id)
            .context("cannot read a request of the group")?
            .and_then(|detail| detail.request)
            .map(|request| request.sha256)
            .with_context(|| format!("request {} is no longer in the inbox", member.id))?;
        shown.push((member.id.clone(), version));
    }
    let screen: Vec<_> = group
        .members
        .iter()
        .zip(&shown)
        .map(|(member, (_, version))| (member, version.as_str()))
        .collect();
    output::stderr(&render::alike_screen(&group.fingerprint, &screen, &checked));

    if !yes && !confirmed(shown.len())? {
        output::stderr("Nothing answered.");
        return Ok(exit::FAILURE);
    }
    let results = engine.answer_alike(&shown, &given, Surface::Cli);
    let mut first_failure = None;
    let mut written = Vec::new();
    for (member, result) in results {
        match result {
            Ok(outcome) => {
                output::stderr(&format!(
                    "  {member}: {} as {}; outcome written to {}",
                    outcome.status,
                    one_line(&outcome.answered_by),
                    engine.spool().path(Area::Answers, &member).display()
                ));
                written.push(outcome);
            }
            Err(SettleError::AwaitingApprovals {
                progress, needed, ..
            }) => {
                output::stderr(&format!("  {member}: {}", awaiting(&progress, needed)));
            }
            Err(error) => {
                output::stderr(&format!(
                    "  {member}: not answered: {}",
                    refusal(engine, &error)
                ));
                first_failure.get_or_insert(failure_code(&error));
            }
        }
    }
    output::json(&written)?;
    Ok(first_failure.unwrap_or(exit::OK))
}

/// Asks the operator on the terminal whether to answer `n` requests. Without a terminal
/// nobody can answer the question: that is refused, never taken as a yes.
fn confirmed(n: usize) -> Result<bool> {
    if !std::io::stdin().is_terminal() {
        bail!(
            "standard input is not a terminal, so nobody can confirm answering these \
             requests; nothing was answered. Check the list above and run again with --yes"
        );
    }
    let question = if n == 1 {
        "Answer this request? [y/N] ".to_owned()
    } else {
        format!("Answer these {n} requests? [y/N] ")
    };
    let mut err = std::io::stderr().lock();
    write!(err, "{question}")
        .and_then(|()| err.flush())
        .context("cannot ask on standard error")?;
    drop(err);
    let mut reply = String::new();
    std::io::stdin()
        .read_line(&mut reply)
        .context("cannot read the reply from standard input")?;
    Ok(matches!(
        reply.trim().to_ascii_lowercase().as_str(),
        "y" | "yes"
    ))
}

/// Why one member of a group was not answered, on one line.
fn refusal(engine: &Engine, error: &SettleError) -> String {
    match error {
        SettleError::Invalid(problems) => {
            let problems: Vec<String> = problems.iter().map(render::problem_line).collect();
            format!("the answers do not fit it: {}", problems.join("; "))
        }
        SettleError::AlreadySettled(outcome) => already_settled(outcome),
        SettleError::Cancelled(_) => "it was cancelled by its asker".to_owned(),
        SettleError::NotFound(_) => format!(
            "it is no longer in the spool {}",
            engine.spool().root().display()
        ),
        other => render::line(&other.to_string()),
    }
}

/// The exit code of a refused answer, as `answer ID` exits for it.
fn failure_code(error: &SettleError) -> u8 {
    match error {
        SettleError::AlreadySettled(_) | SettleError::Cancelled(_) => exit::ALREADY_SETTLED,
        SettleError::Unwritten { .. } => exit::KEPT,
        SettleError::Changed { .. } => exit::CHANGED,
        SettleError::Blocked { .. } => exit::BLOCKED,
        SettleError::NotAssigned { .. } => exit::NOT_ASSIGNED,
        _ => exit::FAILURE,
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
