//! Withdrawal: whether a tombstone (`cancel/<id>`) withdraws its request. Only the account
//! that placed a request may withdraw it. In a team spool every member can write into
//! `cancel/`, and in a private spool left group-writable so can the group: a tombstone of
//! another account's making would let it take someone else's request off the operator's
//! list unseen. So a tombstone counts only when the spool may read it ([`Spool::read_file`]:
//! a regular file of one name, from an account the spool trusts) and its owner is the
//! request's placer; any other is a spool problem naming both accounts, and the request
//! stays pending and answerable.
//!
//! Apart from ingest because every place that asks "was it withdrawn?" (ingest, answering,
//! retrying a kept outcome, the `cancel` command) must ask it the same way.
//!
//! [`Spool::read_file`]: inbox_spool::Spool::read_file

use std::fmt;

use inbox_spool::accounts::{account_name, current_uid, describe_account};
use inbox_spool::{Area, ReadError};

use super::Engine;
use crate::results::{EngineError, SettleError};

/// The account that placed a request, as the inbox knows it.
enum Placer {
    /// By name: the owner of its file when it was ingested (`placed_by`). A file put in its
    /// place later by another account does not change who placed the request.
    Named(String),
    /// By number: a request recorded without a name (an account without one, or a
    /// database from before names were kept), compared with its file's owner now.
    Uid(u32),
}

impl Placer {
    fn is(&self, uid: u32) -> bool {
        match self {
            Placer::Named(name) => account_name(uid).as_deref() == Some(name.as_str()),
            Placer::Uid(placer) => *placer == uid,
        }
    }
}

impl fmt::Display for Placer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Placer::Named(name) => f.write_str(name),
            Placer::Uid(uid) => f.write_str(&describe_account(*uid)),
        }
    }
}

impl Engine {
    /// Who placed request `id`, if the inbox can tell.
    fn placer(&self, id: &str) -> Result<Option<Placer>, EngineError> {
        let named = self
            .store
            .detail(id)?
            .and_then(|detail| detail.summary.placed_by);
        if let Some(name) = named {
            return Ok(Some(Placer::Named(name)));
        }
        Ok(self
            .spool
            .read_file(Area::Questions, id)
            .ok()
            .map(|file| Placer::Uid(file.owner)))
    }

    /// The reason the tombstone of `id` gives, when there is one that withdraws the
    /// request (see the module docs); otherwise `None`, with a tombstone that does not
    /// count recorded as a spool problem.
    pub(super) fn withdrawal(&mut self, id: &str) -> Result<Option<String>, EngineError> {
        let path = self.spool.path(Area::Cancel, id);
        let file = match self.spool.read_file(Area::Cancel, id) {
            Ok(file) => file,
            Err(ReadError::Missing) => return Ok(None),
            // A transient failure: the next scan reads it again.
            Err(ReadError::Io(error)) => {
                tracing::warn!("cannot read {}: {error}; will retry", path.display());
                return Ok(None);
            }
            Err(other) => {
                let reason = format!(
                    "this tombstone is not read, so it withdraws nothing and request {id} \
                     stays pending: {other}"
                );
                self.problem(&path, &reason)?;
                return Ok(None);
            }
        };
        if let Some(placer) = self.placer(id)? {
            if !placer.is(file.owner) {
                let reason = format!(
                    "this tombstone was written by {}, but request {id} was placed by \
                     {placer}: only the account that placed a request may withdraw it, so it \
                     stays pending. Remove the file: rm {}",
                    describe_account(file.owner),
                    path.display()
                );
                self.problem(&path, &reason)?;
                return Ok(None);
            }
        }
        Ok(Some(String::from_utf8_lossy(&file.bytes).trim().to_owned()))
    }

    /// Refuses to withdraw `id` from this account when another placed it: its tombstone
    /// would withdraw nothing, and would stand in the way of the placer's own.
    pub(super) fn may_withdraw(&self, id: &str) -> Result<(), SettleError> {
        let me = current_uid();
        match self.placer(id)? {
            Some(placer) if !placer.is(me) => Err(SettleError::Blocked {
                id: id.to_owned(),
                reason: format!(
                    "only {placer}, who placed it, may withdraw it; a tombstone written by {} \
                     would withdraw nothing, so none was placed",
                    describe_account(me)
                ),
            }),
            _ => Ok(()),
        }
    }
}
