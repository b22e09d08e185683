//! Where the spool, the database, the policy file and the team are: a flag, else its
//! environment variable, else the settings file the desktop app's Settings write, else the
//! default. The rules are the app's own (`inbox_app::config`), so the command line and the
//! app use the same spool and open the same database for it.

use std::path::PathBuf;

use anyhow::{anyhow, Context, Result};
use inbox_app::config::{
    self, ConfigError, Defaults, Given, Resolved, SettingsFile, Source, Sourced,
};
use inbox_engine::{locations, Engine, PolicySource, Spool, Trust};

use crate::args::LocationArgs;

/// Every location with its source. The first call reads the settings file (never changing
/// it) and says on standard error when it cannot be used.
pub fn resolved(args: &LocationArgs) -> &Resolved {
    args.resolution.resolved.get_or_init(|| {
        let typed = args.resolution.typed;
        let given = Given {
            spool: sourced(
                args.spool.clone(),
                typed.spool,
                "--spool",
                config::SPOOL_VAR,
            ),
            db: sourced(args.db.clone(), typed.db, "--db", config::DB_VAR),
            policy: sourced(
                args.policy.clone(),
                typed.policy,
                "--policy",
                config::POLICY_VAR,
            ),
            team: sourced(args.team.clone(), typed.team, "--team", config::TEAM_VAR),
        };
        let defaults = Defaults::from_dirs();
        let file = defaults.settings_file.as_deref().map(SettingsFile::read);
        if let Some(warning) = file.as_ref().and_then(SettingsFile::warning) {
            crate::output::stderr(&format!("warning: {warning}"));
        }
        config::resolve(&given, &defaults, file)
    })
}

fn sourced<T>(
    value: Option<T>,
    typed: bool,
    flag: &'static str,
    var: &'static str,
) -> Option<Sourced<T>> {
    let source = if typed {
        Source::Flag { name: flag }
    } else {
        Source::Env { name: var }
    };
    value.map(|value| Sourced::new(value, source))
}

/// A location's value, or an error saying why there is none and how to give one.
pub fn value(found: &Result<Sourced<PathBuf>, ConfigError>, how: &str) -> Result<PathBuf> {
    match found {
        Ok(found) => Ok(found.value.clone()),
        Err(error) => Err(explain(error, how)),
    }
}

/// The error, with how to give the value when it is a missing directory.
pub fn explain(error: &ConfigError, how: &str) -> anyhow::Error {
    match error {
        ConfigError::NoDirectory { .. } => anyhow!("{error}; give {how}"),
        ConfigError::BadSettings(_) => anyhow!("{error}"),
    }
}

/// How to give the spool, the database and the policy file on the command line.
pub const SPOOL_HOW: &str = "--spool DIR or ANSWER_INBOX_DIR";
pub const DB_HOW: &str = "--db FILE or ANSWER_INBOX_DB";
pub const POLICY_HOW: &str = "--policy FILE or ANSWER_INBOX_POLICY";

/// The spool directory: `--spool`, `ANSWER_INBOX_DIR`, the settings file, or the default.
pub fn spool_path(args: &LocationArgs) -> Result<PathBuf> {
    value(&resolved(args).spool, SPOOL_HOW)
}

/// The database file: `--db`, `ANSWER_INBOX_DB`, or the spool's (the default database for
/// the default spool, `inbox-<digest>.sqlite3` beside it for another), as the app has it.
pub fn db_path(args: &LocationArgs) -> Result<PathBuf> {
    value(&resolved(args).db, DB_HOW)
}

/// The policy file: `--policy`, `ANSWER_INBOX_POLICY`, or the default place (which may not
/// exist: then the shipped policy applies).
pub fn policy_path(args: &LocationArgs) -> Result<PathBuf> {
    value(&resolved(args).policy, POLICY_HOW)
}

/// The operator's policy, from its file. A broken file is said on standard error every
/// time, and holds requests for a person (see `PolicySource`).
pub fn policy(args: &LocationArgs) -> Result<PolicySource> {
    let source = PolicySource::file(&policy_path(args)?);
    if let Some(trouble) = source.trouble() {
        crate::output::stderr(&format!("warning: {trouble}"));
    }
    Ok(source)
}

/// Who the spool is for: `--team GROUP` (or `ANSWER_INBOX_TEAM`), else the settings file's
/// team, else private.
pub fn trust(args: &LocationArgs) -> Trust {
    resolved(args).trust()
}

/// Opens (creating if needed) the spool.
pub fn open_spool(args: &LocationArgs) -> Result<Spool> {
    let path = spool_path(args)?;
    let spool = Spool::open_with(&path, trust(args))
        .with_context(|| format!("cannot open the spool {}", path.display()))?;
    warn(&spool);
    Ok(spool)
}

/// Opens the spool and the database as an engine, without events or notifications.
pub fn open_engine(args: &LocationArgs) -> Result<Engine> {
    let engine = locations::open_engine_with(&spool_path(args)?, &db_path(args)?, trust(args))?
        .with_policy(policy(args)?);
    warn(engine.spool());
    Ok(engine)
}

/// Says on standard error what makes the spool unsafe to trust (writable by others, owned
/// by another account), every time: a warning seen once is soon forgotten.
fn warn(spool: &Spool) {
    for warning in spool.warnings() {
        crate::output::stderr(&format!("warning: {warning}"));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::args::{Cli, Resolution};
    use clap::{CommandFactory, FromArgMatches};

    /// Parses as `main` does, with `env` as the only location variables set.
    fn parse(argv: &[&str]) -> Cli {
        let matches = Cli::command().try_get_matches_from(argv).unwrap();
        let mut cli = Cli::from_arg_matches(&matches).unwrap();
        cli.locations.resolution = Resolution::from_matches(&matches);
        cli
    }

    #[test]
    fn a_typed_flag_is_told_from_its_variable_before_or_after_the_subcommand() {
        for argv in [
            ["answer-inbox", "--spool", "/srv/s", "list"],
            ["answer-inbox", "list", "--spool", "/srv/s"],
        ] {
            let cli = parse(&argv);
            let typed = cli.locations.resolution.typed;
            assert!(typed.spool, "{argv:?}");
            assert!(!typed.db && !typed.policy && !typed.team, "{argv:?}");
        }
        let cli = parse(&["answer-inbox", "list"]);
        assert!(!cli.locations.resolution.typed.spool);
    }

    #[test]
    fn a_missing_directory_says_how_to_give_the_value() {
        let error = explain(&ConfigError::NoDirectory { kind: "data" }, SPOOL_HOW);
        assert_eq!(
            error.to_string(),
            "cannot find the user's data directory (is HOME set?); give --spool DIR or \
             ANSWER_INBOX_DIR"
        );
    }
}
