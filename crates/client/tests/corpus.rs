//! The hostile outcome corpus (tests/data/hostile/outcomes; its README.md says how it is laid
//! out), read by this client. The inbox's black-box test and the Python client's tests run
//! the same cases: a check made where outcomes are written is made where they are read.
//!
//! Each case's request is placed with the client, the case's outcome written into
//! `answers/` as a forger would, and one look at the files (`wait` with no time to wait) must
//! give the case's verdict: a genuine outcome comes back with its status, a `blocked` one is
//! `AskError::BadOutcome` naming the problem. Unless refusing it needs what this client does
//! not know (the case's `needs`): the request's questions, its dialect and whether it is
//! valid only with the `validate` feature. Such a file is taken as the status it claims, and
//! this test says so. Who owns the file it always knows: a case's `writer` is the account
//! the file is given to (see accounts.rs), in a team spool of that account's group.

use std::collections::BTreeMap;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::time::Duration;

use inbox_client::{AskError, AskOptions, Asker, Reply};
use inbox_protocol::shape::{detect_shape, Shape};
use inbox_protocol::{verify_outcome, Outcome};
use serde_json::Value;

use crate::accounts::{self, Crew};

struct Case {
    /// The outcome template's file name.
    name: String,
    verdict: String,
    /// For `blocked`: words the refusal must contain.
    reason: Option<String>,
    /// For `blocked`: what a reader must know to refuse it.
    needs: String,
    /// Who owns the outcome file: `asker` (the account the test runs as), `member` (another
    /// member of the spool's team) or `outsider` (an account outside it).
    writer: String,
    /// The request it answers, as placed.
    request: String,
    /// The outcome file, as written.
    outcome: String,
    /// The approval files placed before it (the case's `approvals`).
    approvals: Vec<ApprovalFile>,
}

/// One approval file a case places: `approvals/<id>+<account of by>.json`, given to the
/// account of `owner` (the role `by` unless the case says otherwise).
struct ApprovalFile {
    by: String,
    owner: String,
    bytes: String,
}

impl Case {
    fn id(&self) -> &str {
        self.name.trim_end_matches(".json")
    }

    fn blocked(&self) -> bool {
        self.verdict == "blocked"
    }

    /// The account the file is given to, if not the test's own; `Err` when there are no
    /// other accounts here (see [`accounts::crew`]), for the outcome or any approval file.
    fn owner(&self) -> Result<Option<u32>, String> {
        for approval in &self.approvals {
            role_uid(&approval.owner)?;
        }
        role_uid(&self.writer)
    }

    /// The status the file claims (for a case this client cannot refuse).
    fn claimed_status(&self) -> String {
        let value: Value = serde_json::from_str(&self.outcome)
            .unwrap_or_else(|error| panic!("{}: {error}", self.name));
        value["status"].as_str().unwrap_or_default().to_owned()
    }
}

fn corpus_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../tests/data/hostile/outcomes")
}

fn operator() -> String {
    format!("operator:{}", inbox_spool::current_account())
}

/// The account name of a role (a case's `writer`, an approval's `by` and `owner`).
fn writer_account(writer: &str) -> String {
    match writer {
        "member" => accounts::MEMBERS[0].to_owned(),
        "second-member" => accounts::MEMBERS[1].to_owned(),
        "outsider" => accounts::OUTSIDER.to_owned(),
        _ => inbox_spool::current_account(),
    }
}

/// The uid a role's files are given to, if not the test's own account's.
fn role_uid(role: &str) -> Result<Option<u32>, String> {
    match role {
        "asker" => Ok(None),
        "member" => Ok(Some(accounts::crew()?.members[0])),
        "second-member" => Ok(Some(accounts::crew()?.members[1])),
        "outsider" => Ok(Some(accounts::crew()?.outsider)),
        other => panic!("unknown role {other}"),
    }
}

/// A template with the case's names filled in: `{{id}}`, `{{sha256}}` (of the request as
/// placed), `{{operator}}`, `{{writer}}` and `{{member}}`, `{{second-member}}`
/// (`operator:<account>` each).
fn fill(template: &str, id: &str, request: &str, writer: &str) -> String {
    template
        .replace("{{id}}", id)
        .replace(
            "{{sha256}}",
            &inbox_protocol::sha256_hex(request.as_bytes()),
        )
        .replace("{{operator}}", &operator())
        .replace(
            "{{writer}}",
            &format!("operator:{}", writer_account(writer)),
        )
        .replace(
            "{{member}}",
            &format!("operator:{}", writer_account("member")),
        )
        .replace(
            "{{second-member}}",
            &format!("operator:{}", writer_account("second-member")),
        )
}

/// Every case, its templates filled in for request id `<case>`.
fn cases() -> Vec<Case> {
    let dir = corpus_dir();
    let manifest: BTreeMap<String, Value> =
        serde_json::from_slice(&std::fs::read(dir.join("verdicts.json")).unwrap()).unwrap();
    let cases: Vec<Case> = manifest
        .into_iter()
        .map(|(name, entry)| {
            let text = |key: &str| entry[key].as_str().map(str::to_owned);
            let id = name.trim_end_matches(".json").to_owned();
            let request_name = text("request").unwrap_or_else(|| "confirm".into());
            let writer = text("writer").unwrap_or_else(|| "asker".into());
            let request =
                std::fs::read_to_string(dir.join("requests").join(format!("{request_name}.json")))
                    .unwrap()
                    .replace("{{id}}", &id);
            let outcome = fill(
                &std::fs::read_to_string(dir.join(&name)).unwrap(),
                &id,
                &request,
                &writer,
            );
            let approvals = entry["approvals"]
                .as_array()
                .into_iter()
                .flatten()
                .map(|approval| {
                    let by = approval["by"].as_str().unwrap().to_owned();
                    let file = approval["file"].as_str().unwrap();
                    let template =
                        std::fs::read_to_string(dir.join("approvals").join(format!("{file}.json")))
                            .unwrap();
                    ApprovalFile {
                        bytes: fill(&template, &id, &request, &writer)
                            .replace("{{approver}}", &format!("operator:{}", writer_account(&by))),
                        owner: approval["owner"].as_str().unwrap_or(&by).to_owned(),
                        by,
                    }
                })
                .collect();
            Case {
                verdict: text("verdict").unwrap(),
                reason: text("reason"),
                needs: text("needs").unwrap_or_else(|| "outcome".into()),
                writer,
                request,
                outcome,
                approvals,
                name,
            }
        })
        .collect();
    assert!(cases.len() >= 19, "the corpus has {} cases", cases.len());
    cases
}

/// Whether this client knows what refusing a case needs.
fn knows(needs: &str) -> bool {
    match needs {
        "outcome" => true,
        "questions" | "dialect" | "validity" => cfg!(feature = "validate"),
        "owner" | "approvals" => true,
        other => panic!("unknown needs {other}"),
    }
}

/// A team directory of the crew's group at `root`, which the asker takes for a team spool:
/// the files of the group's members are read, anyone else's are not.
fn team_spool(root: &Path, crew: &Crew) {
    std::fs::create_dir(root).unwrap();
    std::os::unix::fs::chown(root, None, Some(crew.gid)).unwrap();
    std::fs::set_permissions(root, std::fs::Permissions::from_mode(0o2770)).unwrap();
}

#[test]
fn the_client_gives_every_case_its_verdict() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("spool");
    match accounts::crew() {
        Ok(crew) => team_spool(&root, crew),
        Err(why) => eprintln!("SKIPPED: the cases written by other accounts ({why})"),
    }
    let asker = Asker::open(&root).unwrap();
    let cases: Vec<Case> = cases()
        .into_iter()
        .filter(|case| case.owner().is_ok())
        .collect();
    for case in &cases {
        asker.place(case.request.as_str(), None).unwrap();
        // The approvals first, as their inboxes place them before the outcome.
        for approval in &case.approvals {
            let account = writer_account(&approval.by);
            asker
                .spool()
                .place_approval(case.id(), &account, approval.bytes.as_bytes())
                .unwrap();
            if let Some(uid) = role_uid(&approval.owner).unwrap() {
                let path = asker.spool().approval_path(case.id(), &account).unwrap();
                std::os::unix::fs::chown(path, Some(uid), None).unwrap();
            }
        }
        asker
            .spool()
            .write_outcome(case.id(), case.outcome.as_bytes())
            .unwrap();
        if let Some(uid) = case.owner().unwrap() {
            // Given away after it is in place: what a reader sees is the owner `fstat` reports.
            let path = asker.spool().path(inbox_spool::Area::Answers, case.id());
            std::os::unix::fs::chown(path, Some(uid), None).unwrap();
        }
    }
    let look = AskOptions::default().with_timeout(Duration::ZERO);
    let mut wrong = Vec::new();
    for case in &cases {
        let got = asker.wait(case.id(), &look);
        let refuses = case.blocked() && knows(&case.needs);
        let verdict = match &got {
            Ok(Reply::Settled(outcome)) if !refuses => {
                let expected = if case.blocked() {
                    case.claimed_status()
                } else {
                    case.verdict.clone()
                };
                (outcome.status.as_str() == expected).then_some(())
            }
            Err(AskError::BadOutcome { reason, .. }) if refuses => {
                let words = case.reason.as_deref().unwrap_or_default();
                reason.contains(words).then_some(())
            }
            _ => None,
        };
        if verdict.is_none() {
            wrong.push(format!(
                "{} ({}, needs {}): {got:?}",
                case.name, case.verdict, case.needs
            ));
        }
    }
    assert!(wrong.is_empty(), "wrong verdicts:\n{}", wrong.join("\n"));
}

/// `needs` is exact: a case marked `outcome` is refused by the checks that need nothing but
/// the file (`verify_outcome`, what this client runs without `validate`), and only those
/// cases are; `dialect` is for requests in another system's dialect, `questions` for the
/// inbox's own shapes; `owner` cases are refused for who wrote them (`verify_owner`, or an
/// outsider's file, which a spool never reads), and only they are; `approvals` cases for
/// the approval files they list, and only they are; with `validate`, `verify_outcome_for`
/// refuses every case but those that need the file's owner or its approvals.
#[test]
fn what_each_case_needs_is_what_refuses_it() {
    for case in cases() {
        let name = &case.name;
        let parsed = Outcome::from_file_bytes(case.outcome.as_bytes());
        let sha = inbox_protocol::sha256_hex(case.request.as_bytes());
        let by_file = parsed
            .as_ref()
            .map_err(String::clone)
            .and_then(|outcome| verify_outcome(outcome, case.id(), Some(&sha)));
        assert_eq!(
            by_file.is_err(),
            case.blocked() && case.needs == "outcome",
            "{name}: {by_file:?}"
        );
        let by_owner = case.writer == "outsider"
            || parsed.as_ref().is_ok_and(|outcome| {
                let writer = writer_account(&case.writer);
                inbox_protocol::verify::verify_owner(outcome, Some(&writer), 0).is_err()
            });
        assert_eq!(
            by_owner,
            case.blocked() && case.needs == "owner",
            "{name}: refused for its writer {}",
            case.writer
        );
        // `approvals` cases are refused for the approval files they list (`verify_approvals`,
        // each file read as placed, with the account it is given to), and only they are.
        let by_approvals = parsed.as_ref().is_ok_and(|outcome| {
            let read = |account: &str| -> inbox_protocol::approval::ReadApproval {
                let file = case
                    .approvals
                    .iter()
                    .find(|a| writer_account(&a.by) == account)
                    .ok_or("the file does not exist")?;
                let approval =
                    inbox_protocol::approval::Approval::from_file_bytes(file.bytes.as_bytes())?;
                Ok((approval, Some(writer_account(&file.owner)), 0))
            };
            inbox_protocol::approval::verify_approvals(outcome, read).is_err()
        });
        assert_eq!(
            by_approvals,
            case.blocked() && case.needs == "approvals",
            "{name}: refused for its approvals"
        );
        let request: Value = serde_json::from_str(&case.request).unwrap();
        let own = matches!(
            detect_shape(&request),
            Ok(Shape::Envelope | Shape::Interactive | Shape::Questions)
        );
        match case.needs.as_str() {
            "questions" => assert!(own, "{name}: its request is in another dialect"),
            "dialect" => assert!(!own, "{name}: its request is in the inbox's own shape"),
            "validity" => assert_eq!(
                parsed.as_ref().map(|o| o.status.as_str()),
                Ok("rejected"),
                "{name}: only a rejection needs to know the request is valid"
            ),
            _ => {}
        }
        #[cfg(feature = "validate")]
        {
            let request = inbox_protocol::parse_request(case.request.as_bytes(), Some(case.id()))
                .unwrap_or_else(|problems| panic!("{name}: the request is invalid: {problems:?}"));
            let verified = parsed.and_then(|outcome| {
                inbox_protocol::verify_outcome_for(&outcome, &request).map(|()| outcome)
            });
            assert_eq!(
                verified.is_err(),
                case.blocked() && !["owner", "approvals"].contains(&case.needs.as_str()),
                "{name}: {verified:?}"
            );
        }
    }
}
