//! `policy check [FILE]`, `policy explain REQUEST_FILE`, `policy show [--shipped]`: the
//! operator's policy (inbox_policy), checked, applied to one request, printed.

use std::fmt::Write as _;
use std::os::unix::fs::MetadataExt;

use anyhow::{bail, Context, Result};
use chrono::Utc;
use inbox_engine::inbox_policy::{LoadError, Policy, PolicyProblem, Then};
use inbox_engine::policy::{self as decide, Timed};
use inbox_protocol::{fill_defaults, parse_request, Mode};

use crate::args::{LocationArgs, PolicyArgs, PolicyCheckArgs, PolicyCommand, PolicyExplainArgs};
use crate::input::{self, ReadFailure};
use crate::{exit, locations, output, render};

pub fn run(locations: &LocationArgs, args: &PolicyArgs) -> Result<u8> {
    match &args.command {
        PolicyCommand::Check(args) => check(locations, args),
        PolicyCommand::Explain(args) => explain(locations, args),
        PolicyCommand::Show(args) => show(locations, args.shipped),
    }
}

fn check(locations: &LocationArgs, args: &PolicyCheckArgs) -> Result<u8> {
    let (path, given) = match &args.file {
        Some(path) => (path.clone(), true),
        None => (locations::policy_path(locations)?, false),
    };
    let shown = render::line(&path.display().to_string());
    // What --json prints: the same verdict as the text, for scripts.
    let report = |valid: bool, shipped: bool, rules: &[String], problems: &[PolicyProblem]| {
        output::json(&serde_json::json!({
            "file": path.display().to_string(),
            "valid": valid,
            "shipped": shipped,
            "rules": rules,
            "problems": problems.iter().map(|problem| serde_json::json!({
                "line": problem.line,
                "column": problem.column,
                "message": problem.message,
            })).collect::<Vec<_>>(),
        }))
    };
    match Policy::load(&path) {
        Ok(policy) => {
            let names = policy.rule_names();
            if args.json {
                let names: Vec<String> = names.iter().map(|name| name.to_string()).collect();
                report(true, false, &names, &[])?;
                return Ok(exit::OK);
            }
            let rules = match names.len() {
                // No rule matches anything: every request waits for a person.
                0 => "no rules: every request waits for a person".to_owned(),
                n => format!("{}: {}", render::count(n, "rule"), names.join(", ")),
            };
            output::stdout(&format!("{shown}: ok, {rules}\n"))?;
            Ok(exit::OK)
        }
        Err(LoadError::Io { source, .. })
            if !given && source.kind() == std::io::ErrorKind::NotFound =>
        {
            if args.json {
                report(true, true, &[], &[])?;
                return Ok(exit::OK);
            }
            output::stdout(&format!(
                "{shown}: no policy file; the shipped policy applies (`answer-inbox policy show \
                 --shipped` prints it)\n"
            ))?;
            Ok(exit::OK)
        }
        Err(LoadError::Invalid { problems, .. }) => {
            if args.json {
                report(false, false, &[], &problems)?;
                return Ok(exit::FAILURE);
            }
            let mut text = format!("{shown}: invalid, {} problem(s)\n", problems.len());
            for problem in &problems {
                let _ = writeln!(text, "  {}", render::line(&problem.to_string()));
            }
            output::stderr(text.trim_end());
            Ok(exit::FAILURE)
        }
        Err(error) => bail!("{error}"),
    }
}

fn explain(locations: &LocationArgs, args: &PolicyExplainArgs) -> Result<u8> {
    let shown = input::display_name(&args.file);
    let bytes = input::read_request(&args.file).map_err(|failure| match failure {
        ReadFailure::Io(error) => anyhow::anyhow!("cannot read {shown}: {error}"),
        other => anyhow::anyhow!("{shown}: {other}"),
    })?;
    let request = parse_request(&bytes, None).map_err(|errors| {
        anyhow::anyhow!(
            "{shown} is not a valid request, so the inbox would reject it:\n{}",
            render::problem_lines(&errors)
        )
    })?;
    let account = match &args.account {
        Some(name) => Some(name.clone()),
        None if input::is_stdin(&args.file) => None,
        None => std::fs::metadata(&args.file)
            .ok()
            .and_then(|meta| inbox_engine::account_name(meta.uid())),
    };
    let source = locations::policy(locations)?;
    let origin = match source.path().filter(|path| path.exists()) {
        Some(path) if source.trouble().is_none() => path.display().to_string(),
        Some(_) => "every request held for a person (the policy file is broken)".to_owned(),
        None => "the shipped policy".to_owned(),
    };
    let verdict = source.current().judge(&inbox_engine::inbox_policy::Facts {
        request: &request,
        placed_by: account.as_deref(),
    });
    if args.json {
        output::json(&serde_json::json!({ "policy": origin, "verdict": verdict }))?;
        return Ok(exit::OK);
    }
    let now = Utc::now();
    let mut text = String::new();
    let _ = writeln!(text, "Policy:  {}", render::line(&origin));
    let _ = writeln!(
        text,
        "Request: \"{}\" (priority {}, {}{})",
        render::line(request.display_title()),
        serde_json::to_value(request.priority)?
            .as_str()
            .unwrap_or_default(),
        if request.mode == Mode::Autonomous {
            "autonomous"
        } else {
            "interactive"
        },
        account
            .as_deref()
            .map(|name| format!(", placed by {}", render::line(name)))
            .unwrap_or_default()
    );
    let _ = writeln!(text, "Rule:    {}", render::line(&verdict.rule));
    let _ = writeln!(text, "         {}", render::line(&verdict.describe()));
    let held = decide::autonomy_held(&request, &verdict);
    let happens = if request.mode == Mode::Autonomous && held.is_none() {
        format!(
            "it settles itself at once with its defaults, recorded as answered by {}",
            verdict.answered_by()
        )
    } else {
        let mut happens = match &held {
            Some(reason) => format!("it waits for a person ({reason})"),
            None => "it waits for a person".to_owned(),
        };
        let mut taken = 0;
        while let Some((at, timed)) = decide::next_step(&verdict, now, taken) {
            let after = humantime::format_duration((at - now).to_std().unwrap_or_default());
            let what = match &timed {
                Timed::After(Then::Default)
                    if !fill_defaults(&request).missing_required.is_empty() =>
                {
                    "its defaults would answer it, but a required question has none, so it \
                     goes on waiting"
                        .to_owned()
                }
                other => decide::describe_timed(other),
            };
            let _ = write!(happens, "; after {after}, {what}");
            taken += 1;
            if matches!(timed, Timed::After(_)) {
                break;
            }
        }
        if request.expiry.is_some() {
            let on_expiry = if !verdict.expiry_may_default() {
                "it expires without answers"
            } else if fill_defaults(&request).missing_required.is_empty() {
                "its defaults answer it"
            } else {
                "it expires (a required question has no default)"
            };
            let _ = write!(happens, "; when it expires, {on_expiry}");
        }
        happens
    };
    let _ = writeln!(text, "Happens: {}", render::line(&happens));
    output::stdout(&text)?;
    Ok(exit::OK)
}

fn show(locations: &LocationArgs, shipped: bool) -> Result<u8> {
    if shipped {
        output::stdout(inbox_engine::inbox_policy::SHIPPED)?;
        return Ok(exit::OK);
    }
    let path = locations::policy_path(locations)?;
    match std::fs::read_to_string(&path) {
        Ok(text) => {
            output::stderr(&format!("# {}", render::line(&path.display().to_string())));
            output::stdout(&text)?;
        }
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => {
            output::stderr(&format!(
                "# no policy file at {}; the shipped policy applies:",
                render::line(&path.display().to_string())
            ));
            output::stdout(inbox_engine::inbox_policy::SHIPPED)?;
        }
        Err(error) => return Err(error).with_context(|| format!("cannot read {}", path.display())),
    }
    Ok(exit::OK)
}
