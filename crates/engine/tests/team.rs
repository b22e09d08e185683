//! Teams (docs/TEAMS.md): only assignees' answers count, and a request that needs two
//! approvals settles only with both, every bad input refused and shown as a spool problem.
//!
//! The engine runs as the test's account (root in the CI); the second approver is the
//! system account `daemon`, whose files the test makes by writing them and giving them to
//! it, in a team spool of the group `daemon` (whose primary member it is). Without root
//! (no chown) the tests say so and pass.

use std::os::unix::fs::MetadataExt;

use chrono::Utc;
use inbox_engine::inbox_policy::Policy;
use inbox_engine::{Engine, PolicySource, SettleError, Spool, Store, Trust, Wake};
use inbox_protocol::approval::Approval;
use inbox_protocol::{Outcome, OutcomeStatus, Surface};
use serde_json::{json, Map, Value};

struct Team {
    dir: tempfile::TempDir,
    spool: Spool,
    daemon: u32,
}

fn team() -> Option<Team> {
    let dir = tempfile::tempdir().unwrap();
    if std::fs::metadata(dir.path()).unwrap().uid() != 0 {
        eprintln!("SKIPPED: the team tests give files to another account, which needs root");
        return None;
    }
    // The account database as `getent passwd daemon` has it.
    let passwd = std::fs::read_to_string("/etc/passwd").unwrap();
    let daemon = passwd
        .lines()
        .find_map(|line| line.strip_prefix("daemon:"))?
        .split(':')
        .nth(1)?
        .parse()
        .ok()?;
    let spool = Spool::open_with(
        dir.path().join("spool"),
        Trust::Team {
            group: "daemon".into(),
        },
    )
    .unwrap();
    Some(Team { dir, spool, daemon })
}

impl Team {
    fn engine(&self, policy: &str) -> Engine {
        let store = Store::open(&self.dir.path().join("inbox.sqlite3")).unwrap();
        let mut engine = Engine::new(self.spool.clone(), store)
            .unwrap()
            .with_policy(PolicySource::fixed(Policy::parse(policy).unwrap()));
        engine.turn(Wake::Start).unwrap();
        engine
    }

    fn place(&self, engine: &mut Engine, id: &str) -> String {
        let body = json!({"inbox": 1, "id": id, "title": "Deploy to production",
            "priority": "critical",
            "questions": [{"id": "go", "question": "Deploy?", "type": "confirm"}]});
        let path = self
            .spool
            .place_request(id, body.to_string().as_bytes())
            .unwrap();
        engine.turn(Wake::Paths(vec![path])).unwrap();
        inbox_protocol::sha256_hex(body.to_string().as_bytes())
    }

    /// An approval file as `account`'s inbox would write it, owned by `owner`.
    fn approval(&self, id: &str, account: &str, sha: &str, go: bool, owner: u32) {
        let approval = Approval {
            inbox: 1,
            id: id.into(),
            request_sha256: sha.into(),
            approved_by: format!("operator:{account}"),
            approved_at: Utc::now(),
            answers: [("go".to_owned(), json!(go))].into(),
            custom: vec![],
            defaulted: vec![],
            surface: Some(Surface::Cli),
            device: None,
            taken_over: false,
            instance: "elsewhere/1".into(),
        };
        self.spool
            .place_approval(id, account, &approval.to_file_bytes())
            .unwrap();
        let path = self.spool.approval_path(id, account).unwrap();
        std::os::unix::fs::chown(&path, Some(owner), None).unwrap();
    }

    fn outcome(&self, id: &str) -> Option<Outcome> {
        self.spool
            .read(inbox_engine::Area::Answers, id)
            .ok()
            .map(|bytes| Outcome::from_file_bytes(&bytes).unwrap())
    }

    fn problems(&self, engine: &Engine) -> Vec<String> {
        engine
            .queries()
            .problems()
            .unwrap()
            .into_iter()
            .map(|(path, reason, _)| format!("{path}: {reason}"))
            .collect()
    }
}

/// An outcome root writes itself, answering `go: true` to version `sha` of `id`, placed and
/// then read by `engine`.
fn forge_roots_outcome(
    team: &Team,
    engine: &mut Engine,
    id: &str,
    sha: &str,
    edit: impl FnOnce(&mut Outcome),
) {
    let mut forged = Outcome::new(
        id,
        OutcomeStatus::Answered,
        "operator:root",
        "h/1",
        Utc::now(),
    );
    forged.request_sha256 = Some(sha.to_owned());
    forged.answers.insert("go".into(), json!(true));
    edit(&mut forged);
    team.spool
        .write_outcome(id, &forged.to_file_bytes())
        .unwrap();
    engine.turn(Wake::Rescan).unwrap();
}

/// Why `id` is blocked, if it is.
fn blocked_reason(engine: &Engine, id: &str) -> Option<String> {
    engine
        .queries()
        .detail(id)
        .unwrap()
        .unwrap()
        .summary
        .blocked
}

fn yes() -> Map<String, Value> {
    json!({"go": true}).as_object().unwrap().clone()
}

const TWO: &str = "[[rule]]\nname = \"prod\"\npriority = \"critical\"\n\
                   assign = [\"root\", \"daemon\"]\napprovals = 2\n";

#[test]
fn two_approvals_settle_only_with_both_and_name_both() {
    let Some(team) = team() else { return };
    let mut engine = team.engine(TWO);
    let sha = team.place(&mut engine, "deploy");
    match engine.answer("deploy", &yes(), None, Surface::Cli) {
        Err(SettleError::AwaitingApprovals {
            progress, needed, ..
        }) => {
            assert_eq!(progress, "1 of 2: approved by root");
            assert_eq!(needed, 2);
        }
        other => panic!("one approval of two settled it: {other:?}"),
    }
    assert!(team.outcome("deploy").is_none());
    // Approving again counts once.
    assert!(matches!(
        engine.answer("deploy", &yes(), None, Surface::Cli),
        Err(SettleError::AwaitingApprovals { .. })
    ));
    // daemon's inbox approves the same answers: the next turn completes it.
    team.approval("deploy", "daemon", &sha, true, team.daemon);
    engine.turn(Wake::Rescan).unwrap();
    let outcome = team.outcome("deploy").expect("settled by both");
    assert_eq!(outcome.status, OutcomeStatus::Answered);
    let by: Vec<&str> = outcome
        .approvals
        .as_ref()
        .unwrap()
        .iter()
        .map(|a| a.by.as_str())
        .collect();
    assert_eq!(by, ["operator:daemon", "operator:root"]);
    // The audit log has the assignment and the approval.
    let log = engine.queries().events_of("deploy").unwrap();
    let kinds: Vec<String> = log.iter().map(|e| e.kind.clone()).collect();
    assert!(kinds.contains(&"assigned".to_owned()), "{kinds:?}");
    assert!(kinds.contains(&"approved".to_owned()), "{kinds:?}");
}

/// Another member's approval reaches every open view: when the approvals that count change,
/// the engine says who has approved so far and how many are needed (the window re-reads the
/// row: "1 of 2: approved by daemon"). Told once per change.
#[test]
fn another_members_approval_is_told_to_the_views() {
    let Some(team) = team() else { return };
    let (events, heard) = crossbeam_channel::unbounded();
    let store = Store::open(&team.dir.path().join("inbox.sqlite3")).unwrap();
    let mut engine = Engine::new(team.spool.clone(), store)
        .unwrap()
        .with_policy(PolicySource::fixed(Policy::parse(TWO).unwrap()))
        .with_events(events);
    engine.turn(Wake::Start).unwrap();
    let sha = team.place(&mut engine, "deploy");
    team.approval("deploy", "daemon", &sha, true, team.daemon);
    let path = team.spool.approval_path("deploy", "daemon").unwrap();
    engine.turn(Wake::Paths(vec![path.clone()])).unwrap();
    engine.turn(Wake::Paths(vec![path])).unwrap();
    let approved: Vec<inbox_engine::Event> = heard
        .try_iter()
        .filter(|e| matches!(e, inbox_engine::Event::Approved { .. }))
        .collect();
    assert_eq!(
        approved,
        [inbox_engine::Event::Approved {
            id: "deploy".into(),
            by: vec!["operator:daemon".into()],
            needed: 2,
        }]
    );
    assert!(team.outcome("deploy").is_none(), "one approval of two");
}

/// In a team spool the inbox watches approvals/ (made at start if missing), so another
/// member's approval wakes it when placed.
#[test]
fn a_team_inbox_watches_the_approvals_folder() {
    let Some(team) = team() else { return };
    assert!(!team.spool.approvals_dir().exists());
    let (hints, hinted) = crossbeam_channel::unbounded();
    let _watch = inbox_engine::watcher::watch_spool(
        &team.spool,
        &inbox_engine::WatchOptions::default(),
        hints,
    )
    .unwrap();
    assert!(team.spool.approvals_dir().is_dir(), "made to be watched");
    let sha = inbox_protocol::sha256_hex(b"{}");
    team.approval("deploy", "daemon", &sha, true, team.daemon);
    let woken = hinted
        .recv_timeout(std::time::Duration::from_secs(10))
        .expect("a hint for the approval");
    assert!(format!("{woken:?}").contains("approvals"), "{woken:?}");
}

#[test]
fn forged_older_and_outside_approvals_do_not_count_and_are_problems() {
    let Some(team) = team() else { return };
    let mut engine = team.engine(TWO);
    let sha = team.place(&mut engine, "deploy");
    assert!(matches!(
        engine.answer("deploy", &yes(), None, Surface::Cli),
        Err(SettleError::AwaitingApprovals { .. })
    ));
    // daemon's name, root's file: forged.
    team.approval("deploy", "daemon", &sha, true, 0);
    engine.turn(Wake::Rescan).unwrap();
    assert!(
        team.outcome("deploy").is_none(),
        "a forged approval settled it"
    );
    let problems = team.problems(&engine).join("\n");
    assert!(problems.contains("written by root"), "{problems}");

    // An approval of another version says why it does not count.
    let mut engine = team.engine(TWO);
    team.place(&mut engine, "deploy2");
    engine
        .answer("deploy2", &yes(), None, Surface::Cli)
        .unwrap_err();
    team.approval("deploy2", "daemon", &"0".repeat(64), true, team.daemon);
    engine.turn(Wake::Rescan).unwrap();
    assert!(team.outcome("deploy2").is_none());
    let problems = team.problems(&engine).join("\n");
    assert!(problems.contains("approved another version"), "{problems}");
}

#[test]
fn a_forged_outcome_of_one_approver_blocks_the_request() {
    let Some(team) = team() else { return };
    let mut engine = team.engine(TWO);
    let sha = team.place(&mut engine, "deploy");
    // root writes the outcome alone, listing itself twice.
    team.approval("deploy", "root", &sha, true, 0);
    let twice = || inbox_protocol::ApprovalRef {
        by: "operator:root".into(),
        at: Utc::now(),
        surface: None,
    };
    forge_roots_outcome(&team, &mut engine, "deploy", &sha, |forged| {
        forged.approvals = Some(vec![twice(), twice()]);
    });
    let blocked = blocked_reason(&engine, "deploy").expect("blocked");
    assert!(blocked.contains("approving twice"), "{blocked}");

    // With no approvals at all, a single answer is short of the two the rule needs.
    let mut engine = team.engine(TWO);
    let sha = team.place(&mut engine, "deploy3");
    forge_roots_outcome(&team, &mut engine, "deploy3", &sha, |_| {});
    let blocked = blocked_reason(&engine, "deploy3");
    assert!(blocked
        .unwrap()
        .contains("needs 2 approvals and it lists 0"));
}

#[test]
fn only_assignees_answer_and_an_unassigned_request_fails_closed() {
    let Some(team) = team() else { return };
    let mut engine = team.engine(
        "[[rule]]\nname = \"theirs\"\ntitle = \"Deploy*\"\nassign = \"daemon\"\n\
         [[rule]]\nname = \"nobody\"\nassign = \"no-such-account-here\"\n",
    );
    team.place(&mut engine, "deploy");
    match engine.answer("deploy", &yes(), None, Surface::Cli) {
        Err(SettleError::NotAssigned { reason, .. }) => {
            assert!(
                reason.contains("not among the assignees of rule theirs (daemon)"),
                "{reason}"
            )
        }
        other => panic!("a non-assignee answered: {other:?}"),
    }
    assert!(team.outcome("deploy").is_none());
    let team_view = engine
        .queries()
        .detail("deploy")
        .unwrap()
        .unwrap()
        .summary
        .judgement
        .unwrap()
        .team
        .unwrap();
    assert!(!team_view.mine);
    assert_eq!(team_view.assignees, ["daemon"]);
    // An outcome root writes anyway is refused and blocks the request.
    let sha = engine
        .queries()
        .detail("deploy")
        .unwrap()
        .unwrap()
        .request
        .unwrap()
        .sha256;
    forge_roots_outcome(&team, &mut engine, "deploy", &sha, |_| {});
    let blocked = blocked_reason(&engine, "deploy");
    assert!(blocked.unwrap().contains("not among the assignees"));

    // Assigned to nobody who exists: it expires at once (the default if_unassigned).
    let body = json!({"inbox": 1, "id": "other", "title": "Rotate keys",
        "questions": [{"id": "go", "question": "Rotate?", "type": "confirm"}]});
    let path = team
        .spool
        .place_request("other", body.to_string().as_bytes())
        .unwrap();
    engine.turn(Wake::Paths(vec![path])).unwrap();
    let outcome = team.outcome("other").expect("failed closed");
    assert_eq!(outcome.status, OutcomeStatus::Expired);
    assert!(outcome.reason.unwrap().contains("none of them exists"));
}

/// A file put in this operator's name before they approve (another member's, or of another
/// version) neither counts nor lets their answer pass for an approval: the answer says the
/// name is taken and what to remove, and nothing is recorded.
#[test]
fn an_approval_forged_in_my_name_beforehand_is_said_not_taken_for_mine() {
    let Some(team) = team() else { return };
    let mut engine = team.engine(TWO);
    let sha = team.place(&mut engine, "deploy");
    // root's name, daemon's file.
    team.approval("deploy", "root", &sha, true, team.daemon);
    engine.turn(Wake::Rescan).unwrap();
    match engine.answer("deploy", &yes(), None, Surface::Cli) {
        Err(SettleError::Blocked { reason, .. }) => {
            assert!(reason.contains("already there"), "{reason}");
            assert!(reason.contains("remove"), "{reason}");
        }
        other => panic!("a forged approval in my name passed for mine: {other:?}"),
    }
    assert!(team.outcome("deploy").is_none());
}

/// A request assigned to another: refused for this operator unless the rule allows a
/// take-over; where it does, the answer counts, the outcome says it was taken over, and the
/// audit log records the take-over.
#[test]
fn a_take_over_is_allowed_only_where_the_rule_says_and_is_recorded() {
    let Some(team) = team() else { return };
    let theirs = "[[rule]]\nname = \"daemons\"\nassign = [\"daemon\"]\n";
    let mut engine = team.engine(theirs);
    team.place(&mut engine, "rotate");
    assert!(matches!(
        engine.answer("rotate", &yes(), None, Surface::Cli),
        Err(SettleError::NotAssigned { .. })
    ));
    assert!(team.outcome("rotate").is_none());

    let mut engine =
        team.engine("[[rule]]\nname = \"daemons\"\nassign = [\"daemon\"]\ntakeover = true\n");
    team.place(&mut engine, "rotate2");
    let outcome = engine
        .answer("rotate2", &yes(), None, Surface::Cli)
        .expect("a take-over the rule allows");
    assert!(outcome.taken_over, "{outcome:?}");
    assert_eq!(outcome.answered_by, "operator:root");
    let written = team.outcome("rotate2").expect("written");
    assert!(written.taken_over);
    let kinds: Vec<String> = engine
        .queries()
        .events_of("rotate2")
        .unwrap()
        .iter()
        .map(|e| e.kind.clone())
        .collect();
    assert!(kinds.contains(&"taken_over".to_owned()), "{kinds:?}");
}

/// Records what the engine announces: each request's id and escalation step (`None` for
/// its first announcement).
#[derive(Clone, Default)]
struct Announced(std::sync::Arc<std::sync::Mutex<Vec<Told>>>);

/// A request's id and the escalation step it was announced for.
type Told = (String, Option<u32>);

impl inbox_engine::notifier::Notifier for Announced {
    fn announce(&self, fresh: Vec<inbox_engine::notifier::Announcement>) {
        let mut told = self.0.lock().unwrap();
        told.extend(fresh.into_iter().map(|a| (a.summary.id, a.escalation)));
    }
}

impl Announced {
    fn of(&self, id: &str) -> Vec<Option<u32>> {
        let told = self.0.lock().unwrap();
        told.iter()
            .filter(|(i, _)| i == id)
            .map(|(_, s)| *s)
            .collect()
    }
}

/// Only the assignees' inboxes announce an assigned request, and that holds for the rule's
/// escalation reminders too: root's inbox, not an assignee, neither announces nor reminds
/// about daemon's request (a reminder's buttons would be refused), while it reminds about
/// its own and, since that rule escalates, about one whose assignees do not exist.
#[test]
fn only_the_assignees_inboxes_are_reminded() {
    let Some(team) = team() else { return };
    let escalate = "after = \"1m\"\nthen = \"escalate\"\n\
                    [[rule.escalate]]\nafter = \"0s\"\nnotify = \"critical\"\n";
    let policy = format!(
        "[[rule]]\nname = \"theirs\"\ntitle = \"Theirs*\"\nassign = \"daemon\"\n{escalate}\
         [[rule]]\nname = \"mine\"\ntitle = \"Mine*\"\nassign = \"root\"\n{escalate}\
         [[rule]]\nname = \"nobody\"\ntitle = \"Nobody*\"\nassign = \"no-such-account-here\"\n\
         if_unassigned = \"escalate\"\n{escalate}"
    );
    let announced = Announced::default();
    let store = Store::open(&team.dir.path().join("inbox.sqlite3")).unwrap();
    let mut engine = Engine::new(team.spool.clone(), store)
        .unwrap()
        .with_policy(PolicySource::fixed(Policy::parse(&policy).unwrap()))
        .with_notifier(Box::new(announced.clone()));
    engine.turn(Wake::Start).unwrap();
    for (id, title) in [("theirs", "Theirs"), ("mine", "Mine"), ("nobody", "Nobody")] {
        let body = json!({"inbox": 1, "id": id, "title": title,
            "questions": [{"id": "go", "question": "Go?", "type": "confirm"}]});
        team.spool
            .place_request(id, body.to_string().as_bytes())
            .unwrap();
    }
    engine.turn(Wake::Rescan).unwrap();
    engine
        .turn(Wake::Deadline(Utc::now() + chrono::TimeDelta::minutes(5)))
        .unwrap();
    assert_eq!(announced.of("theirs"), [], "announced to a non-assignee");
    assert_eq!(announced.of("mine"), [None, Some(1)]);
    assert_eq!(announced.of("nobody"), [None, Some(1)]);
}

/// With `approvals = 2`, an answer that refuses settles the request at once, as a decline
/// by the one assignee who gave it: a tool call's Deny (the hook's shape; its reason is
/// kept for the agent), and No to a request's only yes/no. Waiting for a second identical
/// refusal would keep the agent waiting until expiry on a call one reviewer refused. An
/// Allow still waits for the second approval.
#[test]
fn one_refusal_settles_a_request_that_needs_two() {
    let Some(team) = team() else { return };
    let mut engine = team.engine(TWO);
    let tool_call = |id: &str| {
        json!({"inbox": 1, "id": id, "title": "Deploy to production", "priority": "critical",
            "questions": [
            {"id": "decision", "question": "Allow Bash?", "type": "choice",
             "options": ["Allow once", "Deny"]},
            {"id": "reason", "question": "If you deny it: why?", "type": "text",
             "required": false}]})
    };
    for id in ["denied", "allowed"] {
        let path = team
            .spool
            .place_request(id, tool_call(id).to_string().as_bytes())
            .unwrap();
        engine.turn(Wake::Paths(vec![path])).unwrap();
    }
    team.place(&mut engine, "no");
    let deny = json!({"decision": "Deny", "reason": "not on a Friday"});
    let outcome = engine
        .answer("denied", deny.as_object().unwrap(), None, Surface::Cli)
        .expect("one Deny settles it");
    assert_eq!(outcome.status, OutcomeStatus::Declined);
    assert_eq!(outcome.answered_by, "operator:root");
    assert_eq!(
        outcome.reason.as_deref(),
        Some("denied by root: not on a Friday")
    );
    assert_eq!(outcome.approvals, None);
    let no = json!({"go": false});
    let outcome = engine
        .answer("no", no.as_object().unwrap(), None, Surface::Cli)
        .expect("one No settles it");
    assert_eq!(outcome.status, OutcomeStatus::Declined);
    assert_eq!(outcome.reason.as_deref(), Some("root answered No"));
    // Every inbox (this one reading them back) takes both outcomes: neither blocks.
    engine.turn(Wake::Rescan).unwrap();
    for id in ["denied", "no"] {
        let written = team.outcome(id).unwrap();
        assert_eq!(written.status, OutcomeStatus::Declined);
        // And an asker, who does not know the rule, takes it by the checks every reader
        // makes (inbox-client's; the Python client's are the same): an ordinary decline.
        let sha = engine
            .queries()
            .detail(id)
            .unwrap()
            .unwrap()
            .request
            .unwrap()
            .sha256;
        inbox_protocol::verify::verify_outcome(&written, id, Some(&sha)).unwrap();
        inbox_protocol::verify::verify_owner(&written, Some("root"), 0).unwrap();
        inbox_protocol::approval::verify_approvals(&written, |_| Err("no file".into())).unwrap();
        assert_eq!(blocked_reason(&engine, id), None, "{id}");
        assert_eq!(
            engine.queries().state(id).unwrap(),
            Some(inbox_engine::State::Settled(OutcomeStatus::Declined)),
            "{id}"
        );
    }
    // Allow once is an approval, and waits for the second.
    let allow = json!({"decision": "Allow once"});
    assert!(matches!(
        engine.answer("allowed", allow.as_object().unwrap(), None, Surface::Cli),
        Err(SettleError::AwaitingApprovals { .. })
    ));
    assert!(team.outcome("allowed").is_none());
}
