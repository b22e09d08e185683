//! `cancel ID [--reason TEXT]`: withdraw a pending request by placing its tombstone.

use anyhow::{bail, Result};
use inbox_engine::{Placed, SettleError};

use crate::args::{CancelArgs, LocationArgs};
use crate::commands::answer::already_settled;
use crate::{exit, locations, output, render};

pub fn run(locations: &LocationArgs, args: &CancelArgs) -> Result<u8> {
    let id = args.id.as_str();
    super::ensure_valid_id(id)?;
    let mut engine = locations::open_engine(locations)?;
    match engine.cancel(id, args.reason.trim()) {
        Ok(Placed::Written) => {
            output::stderr(&format!(
                "cancelled {id}: its tombstone is placed. An inbox that was already writing \
                 an answer at this very moment may still finish; that outcome would stand"
            ));
            Ok(exit::OK)
        }
        Ok(Placed::AlreadyThere) => {
            output::stderr(&format!("request {id} was already cancelled"));
            Ok(exit::OK)
        }
        Err(SettleError::AlreadySettled(outcome)) => {
            // The outcome file is anyone's to write: who answered is shown on one line.
            output::stderr(&format!(
                "{}; its outcome stands",
                render::line(&already_settled(&outcome))
            ));
            Ok(exit::ALREADY_SETTLED)
        }
        // Not the request's placer, or another account's tombstone in the way: the engine
        // says which (its withdrawal rule).
        Err(SettleError::Blocked { reason, .. }) => bail!("cannot cancel {id}: {reason}"),
        Err(SettleError::NotFound(_)) => bail!(
            "no request \"{id}\" in the spool {}",
            engine.spool().root().display()
        ),
        Err(error) => Err(error.into()),
    }
}
