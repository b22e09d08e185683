//! Settling: an outcome this engine decided (a person's answer, a policy's default or
//! expiry, a rejection) is written to the spool and recorded, or, when another writer's
//! outcome got there first, that one is recorded instead. An outcome the spool refuses
//! (read-only, full) is kept in the store and retried ([`Engine::retry_unwritten`]), so a
//! decision is never dropped.
//!
//! Apart because every way of deciding ends here, and it is the one place that writes
//! outcome files.

use chrono::Utc;
use inbox_protocol::{Outcome, OutcomeStatus};
use inbox_spool::{Area, Placed, SpoolError};

use super::Engine;
use crate::event::Event;
use crate::results::EngineError;

/// What became of an outcome this engine decided.
#[derive(Debug)]
pub(crate) enum Settled {
    /// Its file is the outcome.
    Written(Outcome),
    /// Another writer's outcome stands (here).
    Lost(Outcome),
    /// The spool would not take it; it is kept in the store and retried.
    Kept { outcome: Outcome, error: String },
}

impl Engine {
    /// Tries again to write every kept outcome ([`SettleError::Unwritten`]). Returns how
    /// many still wait. A kept outcome loses to an outcome another writer placed meanwhile,
    /// and to the asker's cancel; both are reported as usual.
    ///
    /// [`SettleError::Unwritten`]: crate::SettleError::Unwritten
    pub(super) fn retry_unwritten(&mut self) -> Result<usize, EngineError> {
        let kept = self.store.all_unwritten()?;
        if kept.is_empty() {
            return Ok(0);
        }
        self.in_batch(|engine| {
            let mut waiting = 0;
            for unwritten in kept {
                let id = unwritten.outcome.id.clone();
                if !engine.spool.exists(Area::Answers, &id) && engine.withdrawal(&id)?.is_some() {
                    engine.ingest_tombstone(&id)?;
                    continue;
                }
                if let Settled::Kept { .. } = engine.settle(unwritten.outcome)? {
                    waiting += 1;
                }
            }
            Ok(waiting)
        })
    }

    /// Writes an outcome unless one exists, and records whichever outcome stands. When the
    /// spool will not take the file (a read-only or full answers directory, an I/O error),
    /// the outcome is kept in the store instead and retried by [`Engine::retry_unwritten`]:
    /// a decision is never dropped, and the loop goes on.
    pub(super) fn settle(&mut self, outcome: Outcome) -> Result<Settled, EngineError> {
        let mut settled = self.settle_all(vec![outcome])?;
        Ok(settled.pop().expect("one result per outcome"))
    }

    /// [`Engine::settle`] for several outcomes with one flush to disk for all of them
    /// ([`Spool::write_outcomes`]): a burst that policies settle costs one `syncfs` and one
    /// directory sync, not one of each per file. The caller's batch records them in one
    /// transaction.
    ///
    /// [`Spool::write_outcomes`]: inbox_spool::Spool::write_outcomes
    pub(crate) fn settle_all(
        &mut self,
        outcomes: Vec<Outcome>,
    ) -> Result<Vec<Settled>, EngineError> {
        let files: Vec<(String, Vec<u8>)> = outcomes
            .iter()
            .map(|outcome| (outcome.id.clone(), outcome.to_file_bytes()))
            .collect();
        let batch: Vec<(&str, &[u8])> = files
            .iter()
            .map(|(id, bytes)| (id.as_str(), bytes.as_slice()))
            .collect();
        let placed = self.spool.write_outcomes(&batch);
        outcomes
            .into_iter()
            .zip(placed)
            .map(|(outcome, placed)| self.settled(outcome, placed))
            .collect()
    }

    /// Records what became of one outcome's file.
    fn settled(
        &mut self,
        outcome: Outcome,
        placed: Result<Placed, SpoolError>,
    ) -> Result<Settled, EngineError> {
        let id = outcome.id.clone();
        let placed = match placed {
            Ok(placed) => placed,
            Err(SpoolError::Io { path, source }) => {
                let error = format!("{}: {source}", path.display());
                if self.store.keep_unwritten(&outcome, &error, Utc::now())? {
                    tracing::info!("cannot write the outcome of {id}: {error}; kept, will retry");
                    self.outbox.push(Event::Unwritten {
                        id: id.clone(),
                        status: outcome.status,
                        answered_by: outcome.answered_by.clone(),
                        error: error.clone(),
                    });
                }
                return Ok(Settled::Kept { outcome, error });
            }
            Err(other) => return Err(other.into()),
        };
        match placed {
            Placed::Written => {
                self.record(&outcome)?;
                Ok(Settled::Written(outcome))
            }
            Placed::AlreadyThere => match self.standing_outcome(&id)? {
                Some(Ok(standing)) => {
                    self.record(&standing)?;
                    Ok(Settled::Lost(standing))
                }
                Some(Err(reason)) => {
                    self.bad_outcome(&id, &reason)?;
                    Ok(Settled::Lost(outcome))
                }
                // Gone again already: the next event or scan sees what replaced it.
                None => Ok(Settled::Lost(outcome)),
            },
        }
    }

    pub(super) fn record(&mut self, outcome: &Outcome) -> Result<(), EngineError> {
        if self.store.record_outcome(outcome, Utc::now())?
            && outcome.status != OutcomeStatus::Rejected
        {
            self.close(&outcome.id);
            self.outbox.push(Event::Settled {
                id: outcome.id.clone(),
                status: outcome.status,
                answered_by: outcome.answered_by.clone(),
            });
        }
        Ok(())
    }
}
