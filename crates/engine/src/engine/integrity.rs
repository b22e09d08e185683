//! Integrity: a request is answered only in the version the operator was shown, and an
//! outcome file stands only if it may be trusted (docs/SECURITY.md).
//!
//! [`Engine::answerable`] and every operator write go through `open_pending`: still open,
//! not blocked, the file unchanged since ingest, and the version given. A request file
//! that changed after ingest, or an outcome file that fails [`verified`], blocks its
//! request, and policies leave blocked requests alone. Apart from the writes because the
//! same checks guard ingest and settling too.

use chrono::Utc;
use inbox_protocol::{parse_request, Outcome, OutcomeStatus, Request};
use inbox_spool::{Area, ReadError, SpoolFile};

use super::Engine;
use crate::event::Event;
use crate::results::{EngineError, SettleError};
use crate::store::State;

impl Engine {
    /// The request as the spool holds it, if it is still open, may be answered here, and
    /// is the version the operator was shown (see [`Engine::answer`]).
    pub(super) fn open_pending(
        &mut self,
        id: &str,
        version: Option<&str>,
    ) -> Result<Request, SettleError> {
        self.ensure_known(id)?;
        match self.standing_outcome(id)? {
            Some(Ok(outcome)) => return Err(SettleError::AlreadySettled(Box::new(outcome))),
            Some(Err(reason)) => {
                let reason = bad_outcome_reason(&reason);
                self.in_batch(|engine| engine.block(id, &reason))?;
                return Err(SettleError::Blocked {
                    id: id.to_owned(),
                    reason,
                });
            }
            None => {}
        }
        if self.withdrawal(id)?.is_some() {
            return Err(SettleError::Cancelled(id.to_owned()));
        }
        if let Some(kept) = self.store.unwritten(id)? {
            return Err(SettleError::Unwritten {
                outcome: Box::new(kept.outcome),
                error: kept.last_error,
            });
        }
        let stored = self.store.detail(id)?.and_then(|detail| {
            let blocked = detail.summary.blocked;
            detail.request.map(|request| (request, blocked))
        });
        let Some((stored, blocked)) = stored else {
            return Err(SettleError::NotFound(id.to_owned()));
        };
        if let Some(reason) = blocked {
            if reason.starts_with(BAD_OUTCOME) {
                // The invalid outcome file is gone (checked above): the block is lifted.
                self.store.clear_blocked(id)?;
            } else {
                return Err(SettleError::Blocked {
                    id: id.to_owned(),
                    reason,
                });
            }
        }
        let bytes = match self.spool.read_file(Area::Questions, id) {
            Ok(file) => file.bytes,
            Err(ReadError::Missing) => return Err(SettleError::NotFound(id.to_owned())),
            Err(other) => {
                return Err(SettleError::Unreadable {
                    id: id.to_owned(),
                    reason: other.to_string(),
                })
            }
        };
        if inbox_protocol::sha256_hex(&bytes) != stored.sha256 {
            self.in_batch(|engine| engine.block(id, CHANGED))?;
            return Err(SettleError::Changed {
                id: id.to_owned(),
                reason: CHANGED.to_owned(),
            });
        }
        if let Some(version) = version {
            if !same_version(version, &stored.sha256) {
                return Err(SettleError::Changed {
                    id: id.to_owned(),
                    reason: format!(
                        "the version you were shown ({}) is not the request in the inbox \
                         (version {}); look at it again",
                        inbox_protocol::text::one_line(short_version(version)),
                        short_version(&stored.sha256)
                    ),
                });
            }
        }
        parse_request(&bytes, Some(id)).map_err(|errors| SettleError::Unreadable {
            id: id.to_owned(),
            reason: format!("the request is invalid: {}", errors[0]),
        })
    }

    /// The request, if it may be answered now in the version given (see
    /// [`Engine::answer`]); else why not. Writes nothing.
    pub fn answerable(&mut self, id: &str, version: Option<&str>) -> Result<Request, SettleError> {
        self.open_pending(id, version)
    }

    /// Blocks a pending request for `reason`, once, and reports it.
    fn block(&mut self, id: &str, reason: &str) -> Result<(), EngineError> {
        if self.store.mark_blocked(id, reason, Utc::now())? {
            self.outbox.push(Event::Blocked {
                id: id.to_owned(),
                reason: reason.to_owned(),
            });
        }
        Ok(())
    }

    /// A pending request's file was touched: if its content is not what was ingested, it
    /// is blocked for good. The changed version is never answered under the old one's
    /// approval, and no policy settles it.
    pub(super) fn check_unchanged(&mut self, id: &str) -> Result<(), EngineError> {
        let Some(stored) = self.store.detail(id)?.and_then(|detail| detail.request) else {
            return Ok(());
        };
        let path = self.spool.path(Area::Questions, id);
        match self.spool.read_file(Area::Questions, id) {
            Ok(file) if inbox_protocol::sha256_hex(&file.bytes) == stored.sha256 => Ok(()),
            Ok(_) => {
                self.problem(&path, CHANGED)?;
                self.block(id, CHANGED)
            }
            Err(ReadError::Missing | ReadError::Io(_)) => Ok(()),
            Err(other) => self.problem(&path, &other.to_string()),
        }
    }

    /// The outcome file standing for a request, if there is one: `Ok` if it may be
    /// trusted as the request's outcome, `Err(why)` if not (see [`verified`]).
    pub(super) fn standing_outcome(
        &self,
        id: &str,
    ) -> Result<Option<Result<Outcome, String>>, EngineError> {
        let file = match self.spool.read_file(Area::Answers, id) {
            Ok(file) => file,
            Err(ReadError::Missing) => return Ok(None),
            Err(error) => return Ok(Some(Err(error.to_string()))),
        };
        let request = self.store.detail(id)?.and_then(|detail| detail.request);
        Ok(Some(verified(&file, request.as_ref()).and_then(
            |outcome| {
                // Who may answer it, and how many (team.rs).
                self.check_team(&outcome)?;
                Ok(outcome)
            },
        )))
    }

    /// An outcome file that may not be trusted: a problem on its path, and its request is
    /// blocked (the file's name is taken, so no answer can be linked after it).
    pub(super) fn bad_outcome(&mut self, id: &str, reason: &str) -> Result<(), EngineError> {
        let reason = bad_outcome_reason(reason);
        let path = self.spool.path(Area::Answers, id);
        self.problem(&path, &reason)?;
        if self.store.state(id)? == Some(State::Pending) {
            self.block(id, &reason)?;
        }
        Ok(())
    }
}

/// The block of a request whose file changed after it was placed.
const CHANGED: &str = "its file changed after it was placed; the changed version is never \
     answered under the old one's approval (the asker may cancel it and ask again)";

/// How the block of an invalid outcome file begins (it is lifted when the file goes).
const BAD_OUTCOME: &str = "an invalid outcome file blocks this request";

/// The shortest version prefix an operator may give (`answer --version`): 48 bits.
pub const MIN_VERSION_PREFIX: usize = 12;

fn bad_outcome_reason(why: &str) -> String {
    format!("{BAD_OUTCOME}: {why}")
}

/// Whether `shown` (hex, maybe a prefix) names the request version `sha256`.
fn same_version(shown: &str, sha256: &str) -> bool {
    let shown = shown.trim();
    shown.len() >= MIN_VERSION_PREFIX
        && shown.len() <= sha256.len()
        && sha256[..shown.len()].eq_ignore_ascii_case(shown)
}

/// A version as people read it: the first 12 hex digits.
fn short_version(sha256: &str) -> &str {
    sha256.get(..MIN_VERSION_PREFIX).unwrap_or(sha256)
}

/// Whether an outcome file may be trusted: it parses, passes the protocol's checks against
/// the request it names (`inbox_protocol::verify_outcome_for`), and a person's answer
/// names the account that owns the file.
fn verified(file: &SpoolFile, request: Option<&Request>) -> Result<Outcome, String> {
    let outcome = Outcome::from_file_bytes(&file.bytes)?;
    let Some(request) = request else {
        // A request that never was valid: only a rejection can stand for it.
        return match outcome.status {
            OutcomeStatus::Rejected => Ok(outcome),
            other => Err(format!("it says {other}, but the request is not valid")),
        };
    };
    inbox_protocol::verify_outcome_for(&outcome, request)?;
    // The askers (inbox-client, the Python client) hold outcomes to the same rule.
    let owner = inbox_spool::account_name(file.owner);
    inbox_protocol::verify::verify_owner(&outcome, owner.as_deref(), file.owner)?;
    Ok(outcome)
}
