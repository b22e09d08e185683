//! Teams (docs/TEAMS.md): who may answer a request, and requests that need several
//! people.
//!
//! A rule's `assign` names accounts and `@group`s. Only their answers count: an outcome or
//! approval file written by anyone else is refused, shown as a spool problem, and an
//! outcome of that kind blocks its request as any untrusted outcome does. Another member
//! may answer only where the rule says `takeover = true`, and the outcome (or approval)
//! then says `taken_over`, which the audit log records too. With `approvals = N` each
//! assignee's answer is an approval file; the request settles when N distinct accounts
//! approved the same version with the same answers, by the outcome that the inbox of the
//! approval completing it writes (or, when two complete at once, whichever links first).
//!
//! What a request's team is for this operator is kept with its judgement
//! ([`crate::policy::Judgement::team`]), so views show the assignees, whether this operator
//! is one, and the approvals so far.

use chrono::{DateTime, Utc};
use inbox_policy::{IfUnassigned, System, Verdict};
use inbox_protocol::approval::{verify_approval, verify_approvals, Approval, ApprovalRef};
use inbox_protocol::verify::OPERATOR_PREFIX;
use inbox_protocol::{AnswerSet, Outcome, OutcomeStatus, Request, Surface, Via};
use serde::{Deserialize, Serialize};

use super::settle::Settled;
use super::Engine;
use crate::event::Event;
use crate::results::{EngineError, SettleError};
use crate::store::State;

/// A request's team, as this operator's inbox sees it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Team {
    /// The rule's `assign`, as written ("alice", "@ops").
    pub assign: Vec<String>,
    /// The accounts that may answer, groups expanded.
    pub assignees: Vec<String>,
    /// Entries that name nobody here.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub unknown: Vec<String>,
    /// Whether this operator is an assignee.
    pub mine: bool,
    /// Whether another member may take it over.
    pub takeover: bool,
    /// How many distinct accounts must approve.
    pub approvals_needed: u32,
    /// The approvals so far that count (this version, an assignee's, their own file).
    #[serde(default)]
    pub approvals: Vec<ApprovalRef>,
    /// Set when none of its assignees exists here: what the rule's if_unassigned does.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub nobody: Option<IfUnassigned>,
}

impl Team {
    /// The team of a request under `verdict` for the operator `me`; `None` when the rule
    /// assigns nobody (any member answers, as before teams).
    pub fn of(verdict: &Verdict, me: &str) -> Option<Team> {
        if verdict.assign.is_empty() {
            return None;
        }
        let resolved = verdict.assign.resolve(&System);
        let nobody = resolved
            .accounts
            .is_empty()
            .then_some(verdict.if_unassigned);
        Some(Team {
            assign: verdict.assign.0.clone(),
            mine: verdict.assign.includes(me, &System),
            assignees: resolved.accounts,
            unknown: resolved.unknown,
            takeover: verdict.takeover,
            approvals_needed: verdict.approvals,
            approvals: Vec::new(),
            nobody,
        })
    }

    /// "1 of 2: approved by alice".
    pub fn progress(&self) -> String {
        let by: Vec<&str> = self
            .approvals
            .iter()
            .map(|a| a.by.strip_prefix(OPERATOR_PREFIX).unwrap_or(&a.by))
            .collect();
        let mut text = format!("{} of {}", by.len(), self.approvals_needed);
        if !by.is_empty() {
            text.push_str(&format!(": approved by {}", by.join(", ")));
        }
        text
    }

    /// Whether this operator's inbox tells them about the request (bubbles, pushes,
    /// reminders): only an assignee's does, except where none of the assignees exists and
    /// the rule escalates, which announces it to every member. The others list it silently:
    /// an announcement's buttons would only be refused there.
    pub fn announced_here(&self) -> bool {
        self.mine || self.nobody == Some(IfUnassigned::Escalate)
    }
}

/// [`Team::announced_here`] for a request judged `judgement`; a request whose rule assigns
/// nobody is announced by every inbox, as before teams. The one check of both the first
/// announcement (`notify_new`) and the rule's escalation reminders (`remind`).
pub(crate) fn announced_here(judgement: Option<&crate::policy::Judgement>) -> bool {
    judgement
        .and_then(|j| j.team.as_ref())
        .is_none_or(Team::announced_here)
}

/// Whether `account`'s answer (or approval) counts under `verdict`: it is an assignee, or
/// it took the request over where the rule allows. A rule that assigns nobody, or whose
/// assignees do not exist while it says `if_unassigned = "escalate"`, lets every member
/// answer. `Ok(true)` when it counts as a take-over.
pub fn eligible(verdict: &Verdict, account: &str, taken_over: bool) -> Result<bool, String> {
    if verdict.assign.is_empty() {
        return Ok(false);
    }
    let resolved = verdict.assign.resolve(&System);
    if resolved.accounts.is_empty() && verdict.if_unassigned == IfUnassigned::Escalate {
        return Ok(false);
    }
    if verdict.assign.includes(account, &System) {
        return Ok(false);
    }
    if verdict.takeover && taken_over {
        return Ok(true);
    }
    Err(format!(
        "operator:{} is not among the assignees of rule {} ({}){}",
        inbox_protocol::text::one_line(account),
        verdict.rule,
        verdict.assign.describe(),
        if verdict.takeover {
            " and did not take it over"
        } else {
            ", and the rule allows no take-over"
        }
    ))
}

/// Why an answer refuses, when it does: a tool call's Deny ([`ToolDecision`]: "denied by
/// alice", with the reason given), or No to a request whose only question is a yes/no
/// ("alice answered No"). Where a request needs several approvals such an answer settles it
/// at once as this one person's decline ([`Engine::answer`]): any assignee may decline alone
/// anyway, so a refusal that waited for a second identical one would only keep the asker
/// waiting (an agent until its call expires) on a request already refused.
///
/// [`ToolDecision`]: inbox_protocol::decision::ToolDecision
pub(crate) fn refusal(request: &Request, set: &AnswerSet, account: &str) -> Option<String> {
    use inbox_protocol::decision::{ToolDecision, DECISION_ID, DENY, REASON_ID};
    let account = inbox_protocol::text::one_line(account);
    let answer = |id: &str| set.answers.get(id);
    if ToolDecision::of(request).is_some() {
        if answer(DECISION_ID).and_then(|v| v.as_str()) != Some(DENY) {
            return None;
        }
        let why = answer(REASON_ID)
            .and_then(|v| v.as_str())
            .map(str::trim)
            .filter(|why| !why.is_empty());
        return Some(match why {
            Some(why) => format!("denied by {account}: {why}"),
            None => format!("denied by {account}"),
        });
    }
    match request.questions.as_slice() {
        [only] if only.kind == inbox_protocol::QuestionKind::Confirm => (answer(&only.id)
            == Some(&serde_json::Value::Bool(false)))
        .then(|| format!("{account} answered No")),
        _ => None,
    }
}

/// The account in an `operator:<account>`.
fn account_of(answered_by: &str) -> &str {
    answered_by
        .strip_prefix(OPERATOR_PREFIX)
        .unwrap_or(answered_by)
}

impl Engine {
    /// This operator's account.
    pub(crate) fn account(&self) -> &str {
        account_of(&self.operator)
    }

    /// The verdict on a known request, by the policy in force.
    pub(crate) fn verdict_on(&self, id: &str) -> Result<Option<(Request, Verdict)>, EngineError> {
        Ok(self.store.detail(id)?.and_then(|detail| {
            let request = detail.request?;
            let verdict = self.judge(
                &request,
                detail.summary.placed_by.as_deref(),
                detail.summary.placed_at,
            );
            Some((request, verdict))
        }))
    }

    /// The team checks of an outcome file that passed the protocol's (integrity.rs): a
    /// person's answer or decline is an assignee's (or a take-over where allowed), and an
    /// answer to a request that needs N approvals lists at least N, each an assignee's own
    /// approval file of this version with these answers. Policies' outcomes are held to
    /// the protocol's rules only.
    pub(crate) fn check_team(&self, outcome: &Outcome) -> Result<(), String> {
        let Some(account) = inbox_protocol::operator_account(outcome) else {
            return Ok(());
        };
        let verdict = match self.verdict_on(&outcome.id) {
            Ok(Some((_, verdict))) => verdict,
            _ => return Ok(()),
        };
        eligible(&verdict, account, outcome.taken_over)?;
        let read = |approver: &str| {
            let (approval, owner, uid) = self.spool.approval_as_read(&outcome.id, approver)?;
            eligible(&verdict, approver, approval.taken_over)?;
            Ok((approval, owner, uid))
        };
        verify_approvals(outcome, read)?;
        let needed = verdict.approvals as usize;
        let listed = outcome.approvals.as_ref().map_or(0, Vec::len);
        let counts = eligible_team(&verdict);
        if counts && outcome.status == OutcomeStatus::Answered && listed < needed {
            return Err(format!(
                "rule {} needs {needed} approvals and it lists {listed}",
                verdict.rule
            ));
        }
        Ok(())
    }

    /// Refuses an answer or decline from this operator where it would not count; `Ok(true)`
    /// when it is a take-over (the rule allows it: answering is taking over, and says so).
    pub(crate) fn may_answer_here(&self, id: &str, verdict: &Verdict) -> Result<bool, SettleError> {
        match eligible(verdict, self.account(), true) {
            Ok(taken_over) => Ok(taken_over),
            Err(reason) => Err(SettleError::NotAssigned {
                id: id.to_owned(),
                reason,
            }),
        }
    }

    /// This operator's approval of a request that needs several: its approval file is
    /// placed (its first approval stands; approving again counts once), then the request
    /// settles if enough agree. Else [`SettleError::AwaitingApprovals`] says how far it is.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn approve(
        &mut self,
        id: &str,
        request: &Request,
        set: AnswerSet,
        via: Via,
        verdict: &Verdict,
        taken_over: bool,
    ) -> Result<Outcome, SettleError> {
        let approval = Approval {
            inbox: inbox_protocol::PROTOCOL_VERSION,
            id: id.to_owned(),
            request_sha256: request.sha256.clone(),
            approved_by: self.operator.clone(),
            approved_at: Utc::now(),
            answers: set.answers,
            custom: set.custom,
            defaulted: set.defaulted,
            surface: Some(via.surface),
            device: via.device,
            taken_over,
            instance: self.instance.clone(),
        };
        let account = self.account().to_owned();
        let placed = self
            .spool
            .place_approval(id, &account, &approval.to_file_bytes())?;
        if placed == inbox_spool::Placed::AlreadyThere {
            // This operator's name is taken: by an approval of theirs (an earlier one stands,
            // as the first outcome does), or by a file someone else put there, which must
            // not pass for theirs nor keep their approval from counting unsaid.
            let theirs =
                self.spool
                    .approval_as_read(id, &account)
                    .and_then(|(approval, owner, uid)| {
                        inbox_protocol::approval::verify_approval(
                            &approval,
                            id,
                            &request.sha256,
                            owner.as_deref(),
                            uid,
                        )
                    });
            if let Err(why) = theirs {
                let path = self
                    .spool
                    .approval_path(id, &account)
                    .map_or_else(String::new, |path| format!(" {}", path.display()));
                return Err(SettleError::Blocked {
                    id: id.to_owned(),
                    reason: format!(
                        "an approval file in your name is already there and is not your \
                         approval of this version ({why}); nothing was recorded: remove the \
                         file{path} and answer again"
                    ),
                });
            }
        }
        if placed == inbox_spool::Placed::Written {
            self.in_batch(|engine| {
                let detail = serde_json::json!({
                    "by": approval.approved_by, "version": approval.request_sha256,
                    "surface": approval.surface, "taken_over": taken_over,
                    "needed": verdict.approvals,
                });
                engine
                    .store
                    .log_event(Some(id), "approved", &detail, Utc::now())?;
                Ok(())
            })?;
        }
        match self.complete(id, request, verdict)? {
            Some(outcome) => Ok(outcome),
            None => Err(SettleError::AwaitingApprovals {
                id: id.to_owned(),
                progress: self
                    .store
                    .detail(id)?
                    .and_then(|d| d.summary.judgement?.team)
                    .map_or_else(String::new, |team| team.progress()),
                needed: verdict.approvals,
            }),
        }
    }

    /// Reads a request's approvals, records those that count with its judgement (and the
    /// files that do not as spool problems, saying why), and, when this operator approved
    /// and enough accounts agree with it, writes the outcome listing them. `None` while it
    /// waits for more.
    fn complete(
        &mut self,
        id: &str,
        request: &Request,
        verdict: &Verdict,
    ) -> Result<Option<Outcome>, SettleError> {
        let me = self.account().to_owned();
        let mut counted: Vec<Approval> = Vec::new();
        let mut problems = Vec::new();
        for (account, read) in self.spool.approvals_read(id)? {
            let path = self.spool.approval_path(id, &account).unwrap_or_default();
            let checked = read.map_err(|e| e.to_string()).and_then(|file| {
                let approval = Approval::from_file_bytes(&file.bytes)?;
                let owner = inbox_spool::account_name(file.owner);
                verify_approval(&approval, id, &request.sha256, owner.as_deref(), file.owner)?;
                eligible(verdict, &account, approval.taken_over)?;
                if approval.account() != Some(account.as_str()) {
                    return Err("its name and its approved_by differ".to_owned());
                }
                Ok(approval)
            });
            match checked {
                Ok(approval) => counted.push(approval),
                Err(reason) => {
                    problems.push((path, format!("an approval that does not count: {reason}")))
                }
            }
        }
        let mine = counted
            .iter()
            .find(|a| a.account() == Some(me.as_str()))
            .cloned();
        let agreeing: Vec<&Approval> = match &mine {
            Some(mine) => counted
                .iter()
                .filter(|a| a.answers == mine.answers)
                .collect(),
            None => Vec::new(),
        };
        let refs: Vec<ApprovalRef> = counted.iter().map(Approval::reference).collect();
        self.in_batch(|engine| {
            for (path, reason) in &problems {
                engine.problem(path, reason)?;
            }
            engine.keep_approvals(id, refs)?;
            Ok(())
        })?;
        let (Some(mine), true) = (mine, agreeing.len() >= verdict.approvals as usize) else {
            return Ok(None);
        };
        let placed_at = self
            .store
            .detail(id)?
            .map_or_else(Utc::now, |detail| detail.summary.placed_at);
        let via = Via {
            surface: mine.surface.unwrap_or(Surface::Cli),
            device: mine.device.clone(),
        };
        let set = AnswerSet {
            answers: mine.answers.clone(),
            custom: mine.custom.clone(),
            defaulted: mine.defaulted.clone(),
        };
        let approvals = Some(agreeing.iter().map(|a| a.reference()).collect());
        let outcome =
            self.answered_outcome(id, request, set, via, placed_at, mine.taken_over, approvals);
        match self.in_batch(|engine| engine.settle(outcome))? {
            Settled::Written(outcome) => Ok(Some(outcome)),
            Settled::Lost(winner) => Err(SettleError::AlreadySettled(Box::new(winner))),
            Settled::Kept { outcome, error } => Err(SettleError::Unwritten {
                outcome: Box::new(outcome),
                error,
            }),
        }
    }

    /// Keeps the approvals that count with the request's judgement (for views).
    fn keep_approvals(&mut self, id: &str, approvals: Vec<ApprovalRef>) -> Result<(), EngineError> {
        let Some(mut judgement) = self.store.detail(id)?.and_then(|d| d.summary.judgement) else {
            return Ok(());
        };
        let Some(team) = judgement.team.as_mut() else {
            return Ok(());
        };
        if team.approvals == approvals {
            return Ok(());
        }
        // Every open view of the request shows the new count ("1 of 2: approved by ann").
        self.outbox.push(Event::Approved {
            id: id.to_owned(),
            by: approvals.iter().map(|a| a.by.clone()).collect(),
            needed: team.approvals_needed,
        });
        team.approvals = approvals;
        self.store.set_judgement_only(id, &judgement)?;
        Ok(())
    }

    /// Completes, where this operator approved, every pending request whose approvals
    /// another inbox added to meanwhile: of two approvals placed at once, each inbox saw
    /// only its own, and this is where one of them writes the outcome. Cheap when no
    /// request needs approvals (one query).
    pub(crate) fn complete_approvals(&mut self) -> Result<(), EngineError> {
        let pending = self.store.pending_facts(crate::store::Due::All)?;
        for facts in pending {
            let needs = facts
                .judgement
                .as_ref()
                .and_then(|j| j.team.as_ref())
                .is_some_and(|team| team.approvals_needed > 1);
            let Some(id) = facts.request.id.clone().filter(|_| needs) else {
                continue;
            };
            if self.store.state(&id)? != Some(State::Pending) {
                continue;
            }
            let verdict = self.judge(&facts.request, facts.placed_by.as_deref(), facts.placed_at);
            match self.complete(&id, &facts.request, &verdict) {
                Ok(_) | Err(SettleError::AlreadySettled(_) | SettleError::Unwritten { .. }) => {}
                Err(SettleError::Engine(error)) => return Err(error),
                Err(other) => tracing::warn!("cannot complete the approvals of {id}: {other}"),
            }
        }
        Ok(())
    }

    /// The if_unassigned of a request none of whose assignees exists: `expire` settles it
    /// now (the outcome says why); `hold` keeps it waiting, answerable by nobody but a
    /// take-over; `escalate` tells every member critically and lets any answer.
    pub(crate) fn unassigned_outcome(
        &self,
        id: &str,
        request: &Request,
        verdict: &Verdict,
        placed_at: DateTime<Utc>,
    ) -> Option<Outcome> {
        let team = Team::of(verdict, self.account())?;
        if team.nobody != Some(IfUnassigned::Expire) {
            return None;
        }
        Some(
            Outcome::new(
                id,
                OutcomeStatus::Expired,
                verdict.answered_by(),
                &self.instance,
                Utc::now(),
            )
            .with_reason(format!(
                "nobody can answer it: rule {} assigns it to {}, and none of them exists on \
                 this machine (if_unassigned = \"expire\")",
                verdict.rule,
                verdict.assign.describe()
            ))
            .with_request_sha256(Some(request.sha256.clone()))
            .with_decision(Surface::Policy, placed_at),
        )
    }
}

/// Whether a verdict's assignment binds answers (it assigns, and does not fall back to
/// every member because nobody exists and it escalates).
fn eligible_team(verdict: &Verdict) -> bool {
    let falls_back_to_all = verdict.if_unassigned == IfUnassigned::Escalate
        && verdict.assign.resolve(&System).accounts.is_empty();
    !verdict.assign.is_empty() && !falls_back_to_all
}
