//! Where the spool and the database are, from the command line or the defaults the desktop
//! app shares (`inbox_engine::locations`).

use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use inbox_engine::{locations, Engine, PolicySource, Spool, Trust};

use crate::args::LocationArgs;

/// The spool directory: `--spool`, `ANSWER_INBOX_DIR`, or the default.
pub fn spool_path(args: &LocationArgs) -> Result<PathBuf> {
    given_or_default(
        args.spool.as_deref(),
        locations::default_spool,
        "data",
        "--spool DIR or ANSWER_INBOX_DIR",
    )
}

/// The database file: `--db`, `ANSWER_INBOX_DB`, or the default.
pub fn db_path(args: &LocationArgs) -> Result<PathBuf> {
    given_or_default(
        args.db.as_deref(),
        locations::default_db,
        "data",
        "--db FILE or ANSWER_INBOX_DB",
    )
}

fn given_or_default(
    given: Option<&Path>,
    default: fn() -> Option<PathBuf>,
    kind: &str,
    how: &str,
) -> Result<PathBuf> {
    // An empty variable (`ANSWER_INBOX_DIR=`) means "not set", as it does for most tools.
    match given.filter(|path| !path.as_os_str().is_empty()) {
        Some(path) => Ok(path.to_owned()),
        None => default().with_context(|| {
            format!("cannot find the user's {kind} directory (is HOME set?); give {how}")
        }),
    }
}

/// The policy file: `--policy`, `ANSWER_INBOX_POLICY`, or the default place (which may not
/// exist: then the shipped policy applies).
pub fn policy_path(args: &LocationArgs) -> Result<PathBuf> {
    given_or_default(
        args.policy.as_deref(),
        locations::default_policy,
        "config",
        "--policy FILE or ANSWER_INBOX_POLICY",
    )
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

/// Who the spool is for: `--team GROUP` (or `ANSWER_INBOX_TEAM`), else private.
pub fn trust(args: &LocationArgs) -> Trust {
    match args.team.as_deref().map(str::trim) {
        Some(group) if !group.is_empty() => Trust::Team {
            group: group.to_owned(),
        },
        _ => Trust::Private,
    }
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
