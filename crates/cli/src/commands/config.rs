//! `config [--json] | config path`: where the spool, the database, the policy file, the team
//! and the settings file are, and where each came from (`locations`). Reads only: nothing
//! is created, and the settings file is left as it is whatever it holds.

use std::path::{Path, PathBuf};

use anyhow::Result;
use inbox_app::config::{
    ConfigError, Defaults, FileState, Resolved, SettingsFile, Source, Sourced,
};
use inbox_app::settings::trust_in_words;
use serde::Serialize;

use crate::args::{ConfigArgs, ConfigCommand, LocationArgs};
use crate::locations::{self, DB_HOW, POLICY_HOW, SPOOL_HOW};
use crate::{exit, output};

pub fn run(location: &LocationArgs, args: &ConfigArgs) -> Result<u8> {
    if let Some(ConfigCommand::Path) = args.command {
        // Only the path: the file is not read, so a broken one is not warned about here.
        let Some(path) = Defaults::from_dirs().settings_file else {
            return Err(ConfigError::NoDirectory { kind: "config" }.into());
        };
        output::stdout(&format!("{}\n", path.display()))?;
        return Ok(exit::OK);
    }
    let resolved = locations::resolved(location);
    let report = Report::of(resolved);
    if args.json {
        output::json(&report)?;
    } else {
        output::stdout(&text(&report))?;
    }
    // A value that cannot be had fails here as it would fail every command that needs it.
    let complete = [&report.spool, &report.db, &report.policy]
        .iter()
        .all(|entry| entry.error.is_none());
    Ok(if complete { exit::OK } else { exit::FAILURE })
}

/// What `config` shows, and its `--json`.
#[derive(Debug, Serialize)]
struct Report {
    /// `null` when there is no config directory to hold one.
    settings_file: Option<FileReport>,
    spool: Entry,
    db: Entry,
    policy: Entry,
    team: TeamReport,
}

#[derive(Debug, Serialize)]
struct FileReport {
    path: PathBuf,
    exists: bool,
    /// `missing`, `read` or `unreadable` (with `problem`).
    #[serde(flatten)]
    state: FileState,
}

/// A path and where it came from, or why there is none.
#[derive(Debug, Serialize)]
struct Entry {
    #[serde(skip_serializing_if = "Option::is_none")]
    value: Option<PathBuf>,
    #[serde(skip_serializing_if = "Option::is_none")]
    source: Option<Source>,
    /// For the policy file: whether it is there (without it the shipped policy applies).
    #[serde(skip_serializing_if = "Option::is_none")]
    exists: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    error: Option<String>,
}

#[derive(Debug, Serialize)]
struct TeamReport {
    /// The group; `null` for a private spool.
    value: Option<String>,
    source: Source,
    /// `private` or `team:<group>`.
    trust: String,
}

impl Report {
    fn of(resolved: &Resolved) -> Report {
        Report {
            settings_file: resolved.settings_file.as_ref().map(file_report),
            spool: entry(&resolved.spool, SPOOL_HOW),
            db: entry(&resolved.db, DB_HOW),
            policy: Entry {
                exists: resolved.policy.as_ref().ok().map(|p| p.value.exists()),
                ..entry(&resolved.policy, POLICY_HOW)
            },
            team: TeamReport {
                value: resolved.team.value.clone(),
                source: resolved.team.source.clone(),
                trust: trust_in_words(&resolved.trust()),
            },
        }
    }
}

fn file_report(file: &SettingsFile) -> FileReport {
    FileReport {
        path: file.path.clone(),
        exists: file.state != FileState::Missing,
        state: file.state.clone(),
    }
}

fn entry(found: &Result<Sourced<PathBuf>, ConfigError>, how: &str) -> Entry {
    match found {
        Ok(found) => Entry {
            value: Some(found.value.clone()),
            source: Some(found.source.clone()),
            exists: None,
            error: None,
        },
        Err(error) => Entry {
            value: None,
            source: None,
            exists: None,
            error: Some(locations::explain(error, how).to_string()),
        },
    }
}

/// One line a value: its name, the value, and in brackets where it came from.
fn text(report: &Report) -> String {
    let mut lines = Vec::new();
    let mut row = |name: &str, value: &str, note: &str| {
        lines.push(format!("{name:<13}  {value}   ({note})"));
    };
    match &report.settings_file {
        Some(file) => {
            let state = match &file.state {
                FileState::Missing => "does not exist: the defaults apply".to_owned(),
                FileState::Read => "exists".to_owned(),
                FileState::Unreadable { problem } => {
                    format!("exists, not usable: {problem}; left as it is")
                }
            };
            row("settings file", &shown(&file.path), &state);
        }
        None => row("settings file", "—", "no config directory (is HOME set?)"),
    }
    for (name, entry) in [
        ("spool", &report.spool),
        ("database", &report.db),
        ("policy", &report.policy),
    ] {
        match (&entry.value, &entry.source) {
            (Some(value), Some(source)) => {
                let mut note = source.to_string();
                if entry.exists == Some(false) {
                    note.push_str("; no such file: the shipped policy applies");
                }
                row(name, &shown(value), &note);
            }
            _ => row(name, "—", entry.error.as_deref().unwrap_or("unknown")),
        }
    }
    row("team", &report.team.trust, &report.team.source.to_string());
    lines.join("\n") + "\n"
}

fn shown(path: &Path) -> String {
    path.display().to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_value_is_shown_with_its_source_and_a_missing_policy_is_explained() {
        let settings = PathBuf::from("/c/settings.json");
        let resolved = Resolved {
            settings_file: Some(SettingsFile {
                path: settings.clone(),
                state: FileState::Missing,
                settings: None,
            }),
            spool: Ok(Sourced::new(
                "/srv/spool".into(),
                Source::SettingsFile {
                    path: settings.clone(),
                },
            )),
            db: Ok(Sourced::new(
                "/d/inbox-x.sqlite3".into(),
                Source::DefaultForSpool,
            )),
            policy: Ok(Sourced::new(
                "/nonexistent/policy.toml".into(),
                Source::Flag { name: "--policy" },
            )),
            team: Sourced::new(None, Source::Default),
        };
        let shown = text(&Report::of(&resolved));
        let lines: Vec<&str> = shown.lines().collect();
        assert_eq!(
            lines,
            [
                "settings file  /c/settings.json   (does not exist: the defaults apply)",
                "spool          /srv/spool   (settings file /c/settings.json)",
                "database       /d/inbox-x.sqlite3   (default for this spool)",
                "policy         /nonexistent/policy.toml   (flag --policy; no such file: the \
                 shipped policy applies)",
                "team           private   (default)",
            ]
        );
    }

    #[test]
    fn a_value_that_cannot_be_had_is_shown_with_why() {
        let resolved = Resolved {
            settings_file: None,
            spool: Err(ConfigError::BadSettings(
                "the settings file /c/s.json has ...".into(),
            )),
            db: Err(ConfigError::BadSettings(
                "the settings file /c/s.json has ...".into(),
            )),
            policy: Err(ConfigError::NoDirectory { kind: "config" }),
            team: Sourced::new(
                Some("ops".into()),
                Source::Env {
                    name: "ANSWER_INBOX_TEAM",
                },
            ),
        };
        let report = Report::of(&resolved);
        let shown = text(&report);
        assert!(
            shown.contains("spool          —   (the settings file /c/s.json has ...)"),
            "{shown}"
        );
        assert!(
            shown.contains("give --policy FILE or ANSWER_INBOX_POLICY"),
            "{shown}"
        );
        assert!(
            shown.contains("team           team:ops   (environment variable ANSWER_INBOX_TEAM)"),
            "{shown}"
        );
        let json = serde_json::to_value(&report).unwrap();
        assert_eq!(json["settings_file"], serde_json::Value::Null);
        assert!(json["spool"]["error"].is_string());
        assert_eq!(json["team"]["value"], "ops");
    }
}
