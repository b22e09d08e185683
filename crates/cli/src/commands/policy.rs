//! `policy check [FILE]`, `policy explain REQUEST_FILE`, `policy show [--shipped]`: the
//! operator's policy (inbox_policy), checked, applied to one request, printed.

use std::fmt::Write as _;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

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
    let own = match Policy::load(&path) {
        Err(LoadError::Io { source, .. })
            if !given && source.kind() == std::io::ErrorKind::NotFound =>
        {
            Checked::Shipped
        }
        Ok(policy) => Checked::Valid(policy),
        Err(LoadError::Invalid { problems, .. }) => Checked::Invalid(problems),
        // Said as a problem of the file, so `--json` still prints its report (exit 1).
        Err(LoadError::Untrusted { reason, .. }) => Checked::Unusable(reason),
        Err(error) => Checked::Unusable(error.to_string()),
    };
    // In a team spool the team's file, where there is one, governs every member's inbox
    // (docs/TEAMS.md): check it too, and say which of the two is in force. A file named
    // on the command line is checked alone.
    let team = if given { None } else { team_file(locations)? };
    let governs = match &team {
        Some((team_path, _)) => team_path.display().to_string(),
        None if matches!(own, Checked::Shipped) => "the shipped policy".to_owned(),
        None => path.display().to_string(),
    };
    let valid = own.valid() && team.as_ref().is_none_or(|(_, team)| team.valid());
    let code = if valid { exit::OK } else { exit::FAILURE };
    if args.json {
        let mut report = own.json(&path);
        if let Some((team_path, team)) = &team {
            report["team"] = team.json(team_path);
        }
        report["governs"] = governs.into();
        output::json(&report)?;
        return Ok(code);
    }
    own.print(&path)?;
    if let Some((team_path, team)) = &team {
        team.print(team_path)?;
        let how = if team.valid() {
            "a team spool's policy: every member's inbox judges by it, not by its own file"
        } else {
            // As PolicySource has it: never "no team policy", never the member's own file.
            "broken: every member's inbox keeps the last good team policy it loaded, or \
             holds every request for a person"
        };
        output::stdout(&format!(
            "In force here: {} ({how})\n",
            render::line(&governs)
        ))?;
    } else if matches!(
        locations::trust(locations),
        inbox_engine::Trust::Team { .. }
    ) && !given
    {
        output::stdout(&format!(
            "In force here: {} (this team spool has no {}, so each member's own policy \
             applies)\n",
            render::line(&governs),
            inbox_engine::TEAM_POLICY
        ))?;
    }
    Ok(code)
}

/// A policy file as `policy check` found it.
enum Checked {
    Valid(Policy),
    /// No file at the default place: the shipped policy applies.
    Shipped,
    Invalid(Vec<PolicyProblem>),
    /// A file that may not be used (another account's, in a folder others may change, a
    /// team's that runs programs, one that cannot be read, ...).
    Unusable(String),
}

impl Checked {
    fn valid(&self) -> bool {
        matches!(self, Checked::Valid(_) | Checked::Shipped)
    }

    /// The `--json` report: `{"file", "valid", "shipped", "rules", "problems",
    /// "warnings"}`, the same verdict as the text.
    fn json(&self, path: &Path) -> serde_json::Value {
        let problems = |problems: &[PolicyProblem]| -> Vec<serde_json::Value> {
            problems
                .iter()
                .map(|problem| {
                    serde_json::json!({
                        "line": problem.line,
                        "column": problem.column,
                        "message": problem.message,
                    })
                })
                .collect()
        };
        let (rules, errors, warnings) = match self {
            Checked::Valid(policy) => (
                policy.rule_names().iter().map(|n| n.to_string()).collect(),
                Vec::new(),
                problems(policy.warnings()),
            ),
            Checked::Shipped => (Vec::new(), Vec::new(), Vec::new()),
            Checked::Invalid(found) => (Vec::new(), problems(found), Vec::new()),
            Checked::Unusable(reason) => (
                Vec::new(),
                vec![serde_json::json!({"line": 0, "column": 0, "message": reason})],
                Vec::new(),
            ),
        };
        serde_json::json!({
            "file": path.display().to_string(),
            "valid": self.valid(),
            "shipped": matches!(self, Checked::Shipped),
            "rules": rules,
            "problems": errors,
            "warnings": warnings,
        })
    }

    /// The text: "FILE: ok, N rules: ..." on standard output with a `warning:` line per
    /// assignee that does not exist here, or the problems on standard error.
    fn print(&self, path: &Path) -> Result<()> {
        let shown = render::line(&path.display().to_string());
        match self {
            Checked::Valid(policy) => {
                let names = policy.rule_names();
                let rules = match names.len() {
                    // No rule matches anything: every request waits for a person.
                    0 => "no rules: every request waits for a person".to_owned(),
                    n => format!("{}: {}", render::count(n, "rule"), names.join(", ")),
                };
                output::stdout(&format!("{shown}: ok, {rules}\n"))?;
                for warning in policy.warnings() {
                    output::stderr(&format!(
                        "warning: {shown}: {}",
                        render::line(&warning.to_string())
                    ));
                }
            }
            Checked::Shipped => output::stdout(&format!(
                "{shown}: no policy file; the shipped policy applies (`answer-inbox policy show \
                 --shipped` prints it)\n"
            ))?,
            Checked::Invalid(problems) => {
                let mut text = format!("{shown}: invalid, {} problem(s)\n", problems.len());
                for problem in problems {
                    let _ = writeln!(text, "  {}", render::line(&problem.to_string()));
                }
                output::stderr(text.trim_end());
            }
            Checked::Unusable(reason) => {
                output::stderr(&format!("{shown}: not used: {}", render::line(reason)))
            }
        }
        Ok(())
    }
}

/// The team's policy file of a team spool (`<spool>/team-policy.toml`), checked as every
/// member's inbox loads it (owned by the spool's owner, no programs); `None` outside a team
/// spool or when it has none. A team file that is broken is refused, never skipped: the
/// inboxes then hold every request for a person.
fn team_file(locations: &LocationArgs) -> Result<Option<(PathBuf, Checked)>> {
    if !matches!(
        locations::trust(locations),
        inbox_engine::Trust::Team { .. }
    ) {
        return Ok(None);
    }
    let root = locations::spool_path(locations)?;
    let path = root.join(inbox_engine::TEAM_POLICY);
    if path.symlink_metadata().is_err() {
        return Ok(None);
    }
    let owner = std::fs::metadata(&root)
        .with_context(|| format!("cannot read the spool {}", root.display()))?
        .uid();
    let checked = match Policy::load_team(&path, owner) {
        Ok(policy) => Checked::Valid(policy),
        Err(LoadError::Invalid { problems, .. }) => Checked::Invalid(problems),
        Err(LoadError::Untrusted { reason, .. }) => Checked::Unusable(reason),
        Err(error) => Checked::Unusable(error.to_string()),
    };
    Ok(Some((path, checked)))
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
    // Without blocking on a FIFO, a plain file of at most the size the loader reads
    // (inbox_policy::capped_read): what is shown is what the inbox would read.
    match inbox_engine::inbox_policy::read_to_show(&path) {
        Ok(Some(text)) => {
            output::stderr(&format!("# {}", render::line(&path.display().to_string())));
            output::stdout(&text)?;
        }
        Ok(None) => {
            output::stderr(&format!(
                "# no policy file at {}; the shipped policy applies:",
                render::line(&path.display().to_string())
            ));
            output::stdout(inbox_engine::inbox_policy::SHIPPED)?;
        }
        Err(problem) => bail!("cannot read {}: {problem}", path.display()),
    }
    Ok(exit::OK)
}
