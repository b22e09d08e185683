//! Approvals: how a request that needs several people settles (docs/TEAMS.md).
//!
//! A rule with `approvals = N` (N of at least 2) makes each assignee's answer an approval
//! file, `approvals/<id>+<account>.json`, placed atomically by that account's inbox like an
//! outcome, and owned by that account. The request settles only when N distinct accounts
//! approved the same version with the same answers; then one inbox writes the outcome,
//! which lists every approval it stands on ([`Outcome::approvals`]). Every reader of that
//! outcome (each inbox, inbox-client, the Python client) reads the approval files it names
//! and checks them with [`verify_approvals`]: distinct accounts, each file owned by the
//! account it names, for the version the outcome answers, with the outcome's answers.
//!
//! `+` separates the id from the account: an id never holds one (`id.rs`) and an account
//! name here never does ([`is_valid_account`]), so a name has exactly one reading.

use std::collections::BTreeMap;

use chrono::{DateTime, Utc};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

pub use crate::outcome::ApprovalRef;
use crate::outcome::{Outcome, OutcomeStatus, Surface, OPERATOR_PREFIX, PROTOCOL_VERSION};

/// The spool's directory of approval files.
pub const APPROVALS_DIR: &str = "approvals";

/// The longest account name an approval file may carry (Linux allows 32; NSS more).
pub const MAX_ACCOUNT_CHARS: usize = 64;

/// One approval, as its approver's inbox wrote it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[schemars(title = "Answer Inbox approval")]
pub struct Approval {
    /// Protocol version, 1.
    pub inbox: u32,
    /// The request's id.
    pub id: String,
    /// The version (SHA-256 of the request file) this approval is for.
    pub request_sha256: String,
    /// `operator:<account>`: the account that approved, which must own the file.
    pub approved_by: String,
    pub approved_at: DateTime<Utc>,
    /// The answers approved, as an outcome carries them.
    #[serde(default)]
    pub answers: BTreeMap<String, Value>,
    #[serde(default)]
    pub custom: Vec<String>,
    #[serde(default)]
    pub defaulted: Vec<String>,
    /// Where the approver answered.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub surface: Option<Surface>,
    /// For surface `web`: the paired device's name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub device: Option<String>,
    /// The approver is not an assignee and took the request over (allowed only where the
    /// rule says `takeover = true`).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub taken_over: bool,
    /// Which inbox wrote it: `<host>/<instance id>`.
    pub instance: String,
}

impl Approval {
    /// The file's bytes: pretty JSON with a final newline.
    pub fn to_file_bytes(&self) -> Vec<u8> {
        crate::duplicate_keys::json_file_bytes(self)
    }

    /// Reads an approval file (a key given twice is refused, as in an outcome).
    pub fn from_file_bytes(bytes: &[u8]) -> Result<Approval, String> {
        let approval: Approval = crate::duplicate_keys::read_json_file(bytes, "approval")?;
        if approval.inbox != PROTOCOL_VERSION {
            return Err(format!("unsupported approval version {}", approval.inbox));
        }
        Ok(approval)
    }

    /// The account in `approved_by`, if it names one.
    pub fn account(&self) -> Option<&str> {
        self.approved_by
            .strip_prefix(OPERATOR_PREFIX)
            .filter(|name| !name.is_empty())
    }

    /// How the outcome lists it.
    pub fn reference(&self) -> ApprovalRef {
        ApprovalRef {
            by: self.approved_by.clone(),
            at: self.approved_at,
            surface: self.surface,
        }
    }
}

/// Whether `name` can be the account part of an approval file's name: 1 to
/// [`MAX_ACCOUNT_CHARS`] of letters, digits, `.`, `_`, `-`, not starting with `.` or `-`
/// (the portable account names of POSIX, which is what `useradd` makes).
pub fn is_valid_account(name: &str) -> bool {
    let bytes = name.as_bytes();
    !bytes.is_empty()
        && bytes.len() <= MAX_ACCOUNT_CHARS
        && !matches!(bytes[0], b'.' | b'-')
        && bytes
            .iter()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'-'))
}

/// `<id>+<account>.json`, or `None` when the account cannot be part of a file name.
pub fn approval_file_name(id: &str, account: &str) -> Option<String> {
    (crate::is_valid_id(id) && is_valid_account(account)).then(|| format!("{id}+{account}.json"))
}

/// The id and account an approval file's name gives, if it is one.
pub fn parse_approval_file_name(name: &str) -> Option<(&str, &str)> {
    let stem = name.strip_suffix(".json")?;
    let (id, account) = stem.split_once('+')?;
    (crate::is_valid_id(id) && is_valid_account(account)).then_some((id, account))
}

/// Whether an approval file may count for the request `id` in version `sha256`: it parses,
/// names the request, is for that very version (an approval of an older version does not
/// count, and says so), and names the account that owns the file (`owner`: its name, `None`
/// when the account database does not know it; `uid` for the message).
pub fn verify_approval(
    approval: &Approval,
    id: &str,
    sha256: &str,
    owner: Option<&str>,
    uid: u32,
) -> Result<(), String> {
    if approval.id != id {
        return Err(format!(
            "it names request \"{}\", not \"{id}\"",
            crate::text::one_line(&approval.id)
        ));
    }
    let Some(account) = approval.account() else {
        return Err(format!(
            "approved_by \"{}\" is not operator:<account>",
            crate::text::one_line(&approval.approved_by)
        ));
    };
    if owner != Some(account) {
        return Err(format!(
            "it says operator:{} approved, but the file was written by {}",
            crate::text::one_line(account),
            owner.map_or_else(
                || format!("uid {uid}"),
                |name| crate::text::one_line(name).into_owned()
            )
        ));
    }
    if !approval.request_sha256.eq_ignore_ascii_case(sha256) {
        return Err(format!(
            "operator:{} approved another version of the request (request_sha256 {}), not the \
             one it asks now; an approval counts only for the version it was given to",
            crate::text::one_line(account),
            crate::text::one_line(approval.request_sha256.get(..12).unwrap_or("?"))
        ));
    }
    Ok(())
}

/// What a reader found at an approval file an outcome names: the approval and its owner
/// (name, uid), or why it could not be read.
pub type ReadApproval = Result<(Approval, Option<String>, u32), String>;

/// The checks of an outcome that lists approvals ([`Outcome::approvals`]): it is an
/// answer; the approvals are distinct accounts; the account in `answered_by` is one of
/// them; and each approval file (`read(account)`) is owned by its account, for the version
/// the outcome answers, with exactly the outcome's answers. An outcome without approvals
/// passes (how many a request needs is the policy's, which only inboxes know).
pub fn verify_approvals(
    outcome: &Outcome,
    read: impl Fn(&str) -> ReadApproval,
) -> Result<(), String> {
    let Some(listed) = &outcome.approvals else {
        return Ok(());
    };
    if outcome.status != OutcomeStatus::Answered {
        return Err(format!(
            "it is {} yet lists approvals (only an answer stands on approvals)",
            outcome.status
        ));
    }
    if listed.is_empty() {
        return Err("it lists no approvals in its approvals".into());
    }
    let sha256 = outcome
        .request_sha256
        .as_deref()
        .ok_or("it does not say which version of the request it answers")?;
    let mut seen: Vec<&str> = Vec::new();
    for reference in listed {
        let account = reference
            .by
            .strip_prefix(OPERATOR_PREFIX)
            .filter(|name| is_valid_account(name))
            .ok_or_else(|| {
                format!(
                    "approval by \"{}\" names no account",
                    crate::text::one_line(&reference.by)
                )
            })?;
        if seen.contains(&account) {
            return Err(format!(
                "operator:{account} is listed as approving twice; an account counts once"
            ));
        }
        seen.push(account);
        let (approval, owner, uid) =
            read(account).map_err(|why| format!("the approval of operator:{account}: {why}"))?;
        verify_approval(&approval, &outcome.id, sha256, owner.as_deref(), uid)
            .map_err(|why| format!("the approval of operator:{account}: {why}"))?;
        if approval.answers != outcome.answers {
            return Err(format!(
                "operator:{account} approved other answers than the outcome carries"
            ));
        }
    }
    let by = crate::verify::operator_account(outcome).unwrap_or_default();
    if !seen.contains(&by) {
        return Err(format!(
            "it was written by {} answering, who is not among its approvers",
            crate::text::one_line(&outcome.answered_by)
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn approval(by: &str, sha: &str) -> Approval {
        Approval {
            inbox: 1,
            id: "r".into(),
            request_sha256: sha.into(),
            approved_by: format!("operator:{by}"),
            approved_at: Utc::now(),
            answers: BTreeMap::from([("go".into(), Value::Bool(true))]),
            custom: vec![],
            defaulted: vec![],
            surface: Some(Surface::Cli),
            device: None,
            taken_over: false,
            instance: "h/i".into(),
        }
    }

    fn outcome(by: &str, approvers: &[&str]) -> Outcome {
        let mut outcome = Outcome::new(
            "r",
            OutcomeStatus::Answered,
            format!("operator:{by}"),
            "h/i",
            Utc::now(),
        );
        outcome.request_sha256 = Some("ab".repeat(32));
        outcome.answers.insert("go".into(), Value::Bool(true));
        outcome.approvals = Some(
            approvers
                .iter()
                .map(|a| approval(a, "").reference())
                .collect(),
        );
        outcome
    }

    /// Files as each account wrote them, for the current version.
    fn honest(account: &str) -> ReadApproval {
        Ok((approval(account, &"ab".repeat(32)), Some(account.into()), 1))
    }

    #[test]
    fn names_have_one_reading() {
        assert_eq!(
            approval_file_name("deploy.7", "ann").as_deref(),
            Some("deploy.7+ann.json")
        );
        assert_eq!(
            parse_approval_file_name("deploy.7+ann.json"),
            Some(("deploy.7", "ann"))
        );
        for bad in ["", "a/b", "a+b", "-x", ".x", &"x".repeat(65)] {
            assert_eq!(approval_file_name("r", bad), None, "{bad:?}");
        }
        assert_eq!(parse_approval_file_name("r+a+b.json"), None);
        assert_eq!(parse_approval_file_name("r.json"), None);
    }

    #[test]
    fn two_distinct_owners_of_their_files_stand() {
        assert_eq!(
            verify_approvals(&outcome("ann", &["ann", "bob"]), honest),
            Ok(())
        );
    }

    #[test]
    fn the_same_account_twice_is_refused() {
        let error = verify_approvals(&outcome("ann", &["ann", "ann"]), honest).unwrap_err();
        assert!(error.contains("approving twice"), "{error}");
    }

    #[test]
    fn an_approval_file_written_by_another_account_is_refused() {
        let forged = |account: &str| -> ReadApproval {
            let (approval, _, _) = honest(account)?;
            Ok((approval, Some("mallory".into()), 7))
        };
        let error = verify_approvals(&outcome("ann", &["ann", "bob"]), forged).unwrap_err();
        assert!(error.contains("written by mallory"), "{error}");
    }

    #[test]
    fn an_approval_of_an_older_version_does_not_count() {
        let old = |account: &str| -> ReadApproval {
            Ok((approval(account, &"cd".repeat(32)), Some(account.into()), 1))
        };
        let error = verify_approvals(&outcome("ann", &["ann", "bob"]), old).unwrap_err();
        assert!(error.contains("another version"), "{error}");
    }

    #[test]
    fn other_answers_a_missing_file_and_an_outside_writer_are_refused() {
        let other = |account: &str| -> ReadApproval {
            let (mut approval, owner, uid) = honest(account)?;
            approval.answers.insert("go".into(), Value::Bool(false));
            Ok((approval, owner, uid))
        };
        assert!(verify_approvals(&outcome("ann", &["ann", "bob"]), other)
            .unwrap_err()
            .contains("other answers"));
        let missing = |_: &str| -> ReadApproval { Err("there is no such file".into()) };
        assert!(verify_approvals(&outcome("ann", &["ann", "bob"]), missing)
            .unwrap_err()
            .contains("no such file"));
        let error = verify_approvals(&outcome("carol", &["ann", "bob"]), honest).unwrap_err();
        assert!(error.contains("not among its approvers"), "{error}");
        let mut declined = outcome("ann", &["ann", "bob"]);
        declined.status = OutcomeStatus::Declined;
        assert!(verify_approvals(&declined, honest).is_err());
    }
}
