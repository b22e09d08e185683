//! `snooze ID DURATION` and `unsnooze ID`: the operator puts a request aside for a while.

use anyhow::{bail, Context, Result};
use chrono::Local;
use inbox_engine::{Engine, SettleError};

use crate::args::{LocationArgs, SnoozeArgs, UnsnoozeArgs};
use crate::commands::answer::already_settled;
use crate::{exit, locations, output};

pub fn snooze(locations: &LocationArgs, args: &SnoozeArgs) -> Result<u8> {
    super::ensure_valid_id(&args.id)?;
    let mut engine = locations::open_engine(locations)?;
    engine.sync().context("cannot scan the spool")?;
    match engine.snooze(&args.id, args.duration) {
        Ok(snoozed) => {
            let until = snoozed
                .until
                .with_timezone(&Local)
                .format("%Y-%m-%d %H:%M:%S");
            let capped = if snoozed.capped {
                " (cut to its expiry: the request expires then)"
            } else {
                ""
            };
            output::stdout(&format!("snoozed {} until {until}{capped}\n", args.id))?;
            Ok(exit::OK)
        }
        Err(error) => refused(&engine, &args.id, error),
    }
}

pub fn unsnooze(locations: &LocationArgs, args: &UnsnoozeArgs) -> Result<u8> {
    super::ensure_valid_id(&args.id)?;
    let mut engine = locations::open_engine(locations)?;
    engine.sync().context("cannot scan the spool")?;
    match engine.unsnooze(&args.id) {
        Ok(true) => output::stdout(&format!("{} is pending again\n", args.id))?,
        Ok(false) => output::stdout(&format!("{} was not snoozed\n", args.id))?,
        Err(error) => return refused(&engine, &args.id, error),
    }
    Ok(exit::OK)
}

/// Why a request cannot be snoozed: it is settled or cancelled (exit 3), or unknown.
fn refused(engine: &Engine, id: &str, error: SettleError) -> Result<u8> {
    match error {
        SettleError::AlreadySettled(outcome) => {
            output::stderr(&already_settled(&outcome));
            Ok(exit::ALREADY_SETTLED)
        }
        SettleError::Cancelled(_) => {
            output::stderr(&format!("request {id} was cancelled by its asker"));
            Ok(exit::ALREADY_SETTLED)
        }
        SettleError::NotFound(_) => bail!(
            "no request \"{id}\" in the spool {}",
            engine.spool().root().display()
        ),
        other => Err(other.into()),
    }
}
