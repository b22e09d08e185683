//! The operator's writes: a person's answer, decline, and the asker's cancel, each
//! through this engine, recorded as [`Engine::operator`]; and one answer for a group of
//! alike requests ([`crate::alike`]), which is still one checked answer per request.
//!
//! Apart from the loop's own steps because front ends call these directly (one-shot CLI
//! commands) or through a [`crate::Command`], and every one is checked by
//! [`Engine::answerable`]'s rules before anything is written.

use chrono::{DateTime, Utc};
use inbox_protocol::approval::ApprovalRef;
use inbox_protocol::{check_answers, AnswerSet, Outcome, OutcomeStatus, Problem, Request, Via};
use inbox_spool::{Area, Placed};
use serde_json::{Map, Value};

use super::settle::Settled;
use super::{Engine, Team};
use crate::results::SettleError;
use crate::store::State;

impl Engine {
    /// Writes the operator's answers (an object keyed by question id) as the outcome,
    /// recorded as this engine's [`Engine::operator`].
    ///
    /// `version` is the SHA-256 (hex, or a prefix of at least [`MIN_VERSION_PREFIX`]
    /// digits) of the request as the operator was shown it; the answer is refused
    /// ([`SettleError::Changed`]) unless the file still is that version. `None` binds to the
    /// version the inbox holds (what `list` and `show` display), which the file must still
    /// be.
    ///
    /// `via` is where the operator answered (the window, a notification's button, the
    /// command line, a paired device's browser by name); the outcome records it, with how
    /// long the decision took.
    ///
    /// [`MIN_VERSION_PREFIX`]: crate::MIN_VERSION_PREFIX
    pub fn answer(
        &mut self,
        id: &str,
        given: &Map<String, Value>,
        version: Option<&str>,
        via: impl Into<Via>,
    ) -> Result<Outcome, SettleError> {
        let (request, placed_at) = self.open_pending_placed(id, version)?;
        let set = check_answers(&request, given).map_err(SettleError::Invalid)?;
        let (verdict, taken_over) = self.team_gate(id)?;
        let via = via.into();
        if verdict.approvals > 1 && Team::of(&verdict, self.account()).is_some() {
            // A refusal is not an approval: it declines at once, as a decline would.
            if let Some(reason) = super::team::refusal(&request, &set, self.account()) {
                return self.write_decline(id, &request, placed_at, &reason, via, taken_over);
            }
            return self.approve(id, &request, set, via, &verdict, taken_over);
        }
        let outcome = self.answered_outcome(id, &request, set, via, placed_at, taken_over, None);
        self.settle_as_operator(outcome)
    }

    /// This operator's answer `set` to `request` as its outcome: bound to the version
    /// answered, with how and when it was decided, a take-over and the approvals that
    /// settled it where there are any, and last the asker's own dialect's `reply` (MCP
    /// elicitation, AskUserQuestion, HumanInterrupt), built from everything above. One
    /// builder for an answer and for the approval that completes a request.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn answered_outcome(
        &self,
        id: &str,
        request: &Request,
        set: AnswerSet,
        via: Via,
        placed_at: DateTime<Utc>,
        taken_over: bool,
        approvals: Option<Vec<ApprovalRef>>,
    ) -> Outcome {
        let mut outcome = Outcome::new(
            id,
            OutcomeStatus::Answered,
            self.operator.clone(),
            &self.instance,
            Utc::now(),
        )
        .with_answers(set)
        .with_request_sha256(Some(request.sha256.clone()))
        .with_decision(via, placed_at);
        outcome.taken_over = taken_over;
        outcome.approvals = approvals;
        outcome.with_reply(request)
    }

    /// Declines a request with a reason; `version` and `via` as for [`Engine::answer`].
    pub fn decline(
        &mut self,
        id: &str,
        reason: &str,
        version: Option<&str>,
        via: impl Into<Via>,
    ) -> Result<Outcome, SettleError> {
        let (request, placed_at) = self.open_pending_placed(id, version)?;
        let reason = reason.trim();
        if reason.is_empty() {
            return Err(SettleError::Invalid(vec![Problem::new(
                "/reason",
                "a decline needs a reason",
            )]));
        }
        // A decline by any assignee declines, approvals or not.
        let (_, taken_over) = self.team_gate(id)?;
        self.write_decline(id, &request, placed_at, reason, via.into(), taken_over)
    }

    /// Writes this operator's decline of `request` (checked by the caller: the version, the
    /// team) with `reason`.
    fn write_decline(
        &mut self,
        id: &str,
        request: &Request,
        placed_at: DateTime<Utc>,
        reason: &str,
        via: Via,
        taken_over: bool,
    ) -> Result<Outcome, SettleError> {
        let mut outcome = Outcome::new(
            id,
            OutcomeStatus::Declined,
            self.operator.clone(),
            &self.instance,
            Utc::now(),
        )
        .with_reason(reason)
        .with_request_sha256(Some(request.sha256.clone()))
        .with_decision(via, placed_at);
        outcome.taken_over = taken_over;
        // Last: the asker's own dialect (MCP elicitation, AskUserQuestion, HumanInterrupt)
        // gets its answer shape in `reply`, built from everything above.
        let outcome = outcome.with_reply(request);
        self.settle_as_operator(outcome)
    }

    /// Places a cancel tombstone for a request (the asker's side of withdrawing it).
    pub fn cancel(&mut self, id: &str, reason: &str) -> Result<Placed, SettleError> {
        self.ensure_known(id)?;
        if let Some(Ok(outcome)) = self.standing_outcome(id)? {
            return Err(SettleError::AlreadySettled(Box::new(outcome)));
        }
        self.may_withdraw(id)?;
        let placed = self.spool.place_tombstone(id, reason)?;
        self.in_batch(|engine| engine.ingest_tombstone(id))?;
        // A tombstone already there that does not count (another account's) takes the
        // name this one needed: say so rather than "already cancelled".
        if placed == Placed::AlreadyThere && self.store.state(id)? == Some(State::Pending) {
            return Err(SettleError::Blocked {
                id: id.to_owned(),
                reason: format!(
                    "{} is already there and does not withdraw it (see answer-inbox list); \
                     remove it and cancel again",
                    self.spool.path(Area::Cancel, id).display()
                ),
            });
        }
        // A writer that read the request before the tombstone existed may have linked its
        // outcome meanwhile; that outcome stands (see `ingest_outcome`), so say so.
        if let Some(Ok(outcome)) = self.standing_outcome(id)? {
            self.in_batch(|engine| engine.ingest_outcome(id))?;
            return Err(SettleError::AlreadySettled(Box::new(outcome)));
        }
        Ok(placed)
    }

    /// [`Engine::open_pending`] with when the request was placed, for the outcome's
    /// decision time.
    fn open_pending_placed(
        &mut self,
        id: &str,
        version: Option<&str>,
    ) -> Result<(Request, DateTime<Utc>), SettleError> {
        let request = self.open_pending(id, version)?;
        let placed_at = self
            .store
            .detail(id)?
            .map_or_else(Utc::now, |detail| detail.summary.placed_at);
        Ok((request, placed_at))
    }

    /// The verdict on a request this operator is about to answer, once it is known that the
    /// answer counts here (team.rs); whether it is a take-over, which is then recorded.
    fn team_gate(&mut self, id: &str) -> Result<(inbox_policy::Verdict, bool), SettleError> {
        let Some((_, verdict)) = self.verdict_on(id)? else {
            return Err(SettleError::NotFound(id.to_owned()));
        };
        let taken_over = self.may_answer_here(id, &verdict)?;
        if taken_over {
            let detail = serde_json::json!({
                "by": self.operator(), "rule": verdict.rule, "assign": verdict.assign,
            });
            self.in_batch(|engine| {
                engine
                    .store
                    .log_event(Some(id), "taken_over", &detail, Utc::now())?;
                Ok(())
            })?;
        }
        Ok((verdict, taken_over))
    }

    fn settle_as_operator(&mut self, outcome: Outcome) -> Result<Outcome, SettleError> {
        match self.in_batch(|engine| engine.settle(outcome))? {
            Settled::Written(outcome) => Ok(outcome),
            Settled::Lost(winner) => Err(SettleError::AlreadySettled(Box::new(winner))),
            Settled::Kept { outcome, error } => Err(SettleError::Unwritten {
                outcome: Box::new(outcome),
                error,
            }),
        }
    }

    /// Answers each of `members` (request id, the version of it the operator was shown)
    /// with the same `answers`, one [`Engine::answer`] each, in the order given. A member
    /// that is refused (it changed, was settled or cancelled meanwhile, is blocked, or the
    /// answers do not fit it) does not stop the others: every member gets its own result.
    pub fn answer_alike(
        &mut self,
        members: &[(String, String)],
        answers: &Map<String, Value>,
        via: impl Into<Via>,
    ) -> Vec<(String, Result<Outcome, SettleError>)> {
        let via = via.into();
        members
            .iter()
            .map(|(id, version)| {
                let result = self.answer(id, answers, Some(version), via.clone());
                (id.clone(), result)
            })
            .collect()
    }
}
