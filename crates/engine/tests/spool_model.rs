//! A state-machine test of the spool and the inbox: random sequences of what askers,
//! operators, other inboxes and crashes do, run against a real spool directory, a real
//! SQLite file and [`Engine`], and compared after every step with a reference model small
//! enough to be obviously right.
//!
//! The model keeps two layers per request, because the real system has them: what the spool
//! holds (the truth: an outcome, a tombstone) and what this inbox's database has recorded
//! (which may lag behind the spool until an engine looks). The system under test has one
//! long-lived engine, the daemon, driven the way the watcher loop drives it, and runs every
//! operator or asker command on an engine of its own over the same database, as the CLI does.
//!
//! Checked after every step: the database agrees with the model (state, who settled, the
//! pending list), the spool agrees with the model (outcome files, tombstones, no leftovers in
//! `tmp/`), every outcome belongs to the request file it names, and no outcome file is ever
//! rewritten. Each command's result is checked against the model's prediction, including
//! `AlreadySettled` naming the outcome that won.

use std::collections::{BTreeMap, HashMap};
use std::path::PathBuf;

use chrono::{DateTime, TimeDelta, Utc};
use inbox_engine::spool::Area;
use inbox_engine::{Engine, Placed, SettleError, Spool, State, Store, Wake};
use inbox_protocol::{Outcome, OutcomeStatus, Surface};
use proptest::prelude::*;
use proptest_state_machine::{prop_state_machine, ReferenceStateMachine, StateMachineTest};
use serde_json::{json, Map, Value};

/// A person's answer through this machine's engines: the account the tests run as.
fn operator() -> String {
    inbox_engine::operator::answered_by(&inbox_engine::operator::account())
}

/// The same account, answering through another inbox (told apart by its instance).
fn other_operator() -> String {
    format!("{}{OTHER_HOST_MARK}", operator())
}

/// Another inbox's instance begins with this; [`settlement`] marks what it wrote.
const OTHER_HOST: &str = "other-host/";
const OTHER_HOST_MARK: &str = " (other inbox)";
/// The shipped policy's rule for file askers at normal priority, which every template is:
/// it honours autonomous mode and lets expiry take the defaults.
const AUTONOMOUS: &str = "policy:rule:file-askers";
const EXPIRY: &str = "policy:rule:file-askers";
const VALIDATION: &str = "policy:validation";
/// An id no request ever has.
const MISSING: &str = "missing-1";

/// The requests askers place: each exercises a different path of the engine.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Template {
    /// One required confirm without a default: expiry gives `expired`.
    Confirm,
    /// A required choice with a default and an optional text: expiry gives `defaulted`.
    Pick,
    /// Autonomous, every required question has a default: settled at once by policy.
    AutoFull,
    /// Autonomous, but a required question has no default: waits like an interactive one.
    AutoBlocked,
    /// A choice without options: rejected at once.
    Invalid,
}

impl Template {
    fn questions(self) -> Value {
        match self {
            Template::Confirm => json!([{"id": "go", "question": "Go?", "type": "confirm"}]),
            Template::Pick => json!([
                {"id": "env", "question": "Where?", "type": "choice",
                 "options": ["staging", "prod"], "default": "staging"},
                {"id": "note", "question": "Anything else?", "type": "text", "required": false}
            ]),
            Template::AutoFull => {
                json!([{"id": "go", "question": "Go?", "type": "yes_no", "default": true}])
            }
            Template::AutoBlocked => json!([
                {"id": "go", "question": "Go?", "type": "confirm", "default": true},
                {"id": "why", "question": "Why?", "type": "free_text"}
            ]),
            Template::Invalid => json!([{"id": "pick", "question": "Which?", "type": "choice"}]),
        }
    }

    fn autonomous(self) -> bool {
        matches!(self, Template::AutoFull | Template::AutoBlocked)
    }

    /// Answers `check_answers` accepts.
    fn valid_answers(self) -> Value {
        match self {
            Template::Confirm | Template::Invalid => json!({"go": true}),
            Template::Pick => json!({"env": "prod"}),
            Template::AutoFull => json!({"go": false}),
            Template::AutoBlocked => json!({"go": true, "why": "because"}),
        }
    }

    /// What expiry makes of it: defaults answer every required question, or not.
    fn expiry_status(self) -> OutcomeStatus {
        match self {
            Template::Pick | Template::AutoFull => OutcomeStatus::Defaulted,
            _ => OutcomeStatus::Expired,
        }
    }
}

/// When a request expires, in whole days after the test started (placement is within the
/// same hour, so `timeout_seconds` and `expires_at` compare alike).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Deadline {
    TimeoutDays(u32),
    AtDay(u32),
}

impl Deadline {
    fn days(self) -> u32 {
        match self {
            Deadline::TimeoutDays(days) | Deadline::AtDay(days) => days,
        }
    }
}

/// (status, answered_by) of an outcome.
type Settlement = (OutcomeStatus, String);

/// What this inbox's database says about a request.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Db {
    Unknown,
    Pending,
    Settled(Settlement),
    Cancelled,
}

#[derive(Debug, Clone)]
struct ModelRequest {
    template: Template,
    deadline: Option<Deadline>,
    /// `answers/<id>.json` in the spool.
    outcome: Option<Settlement>,
    /// `cancel/<id>` in the spool.
    tombstone: bool,
    db: Db,
}

#[derive(Debug, Clone, Default)]
struct Model {
    requests: BTreeMap<String, ModelRequest>,
    placed: usize,
}

#[derive(Debug, Clone)]
enum Transition {
    /// An asker places a request; with `notify`, the daemon gets the file's event.
    Place {
        template: Template,
        deadline: Option<Deadline>,
        notify: bool,
    },
    /// The daemon's periodic full scan, then its policies for what it found.
    Sync,
    /// `answer-inbox answer ID --answers ...`, with answers that are valid or not.
    Answer { id: String, valid: bool },
    /// `answer-inbox answer ID --decline REASON`, the reason maybe blank.
    Decline { id: String, blank: bool },
    /// `answer-inbox cancel ID`.
    Cancel { id: String },
    /// Another inbox sharing the spool settles the request first, writing its outcome file
    /// directly; with `notify`, the daemon gets the file's event.
    SecondWriter { id: String, notify: bool },
    /// The daemon's deadline timer, at `days` days and an hour after the test started.
    Expire { days: u32 },
    /// The daemon dies; the database maybe lost with it; a new daemon starts on the spool.
    Crash { delete_db: bool },
}

/// What a command should return.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Expected {
    Settled(Settlement),
    NotFound,
    AlreadySettled(Settlement),
    Cancelled,
    Invalid,
    Tombstone(Placed),
}

impl Model {
    fn id_of(n: usize) -> String {
        format!("r{n}")
    }

    /// An engine reads a request it has not recorded (ingest).
    fn see(request: &mut ModelRequest) {
        if request.template == Template::Invalid && request.outcome.is_none() {
            request.outcome = Some((OutcomeStatus::Rejected, VALIDATION.to_owned()));
        }
        request.db = match (&request.outcome, request.tombstone) {
            (Some(outcome), _) => Db::Settled(outcome.clone()),
            (None, true) => Db::Cancelled,
            (None, false) => Db::Pending,
        };
    }

    /// An engine settles a pending request: its outcome, unless one is already in the
    /// spool, which then stands and is recorded.
    fn settle(request: &mut ModelRequest, status: OutcomeStatus, by: &str) {
        assert_eq!(
            request.db,
            Db::Pending,
            "the model settles pending requests only"
        );
        let outcome = request
            .outcome
            .get_or_insert_with(|| (status, by.to_owned()))
            .clone();
        request.db = Db::Settled(outcome);
    }

    /// The daemon's autonomous policy, at the end of each of its turns, over every pending
    /// request no policy has judged yet: those it has just opened, and those a command read
    /// first (a judged one that could settle itself already did).
    fn autonomy(&mut self) {
        for request in self.requests.values_mut() {
            if request.db == Db::Pending && request.template == Template::AutoFull {
                Model::settle(request, OutcomeStatus::Defaulted, AUTONOMOUS);
            }
        }
    }

    /// A full scan: unknown requests are read; outcomes and tombstones of pending ones are
    /// recorded; then the policies.
    fn scan(&mut self) {
        for request in self.requests.values_mut() {
            match request.db {
                Db::Unknown => Model::see(request),
                Db::Pending => match (&request.outcome, request.tombstone) {
                    (Some(outcome), _) => request.db = Db::Settled(outcome.clone()),
                    (None, true) => request.db = Db::Cancelled,
                    (None, false) => {}
                },
                _ => {}
            }
        }
        self.autonomy();
    }

    /// The common start of `answer`, `decline` and `cancel`: the request must exist, is
    /// read if not yet known, and must not be settled. `Err` is the command's result.
    fn open(&mut self, id: &str) -> Result<&mut ModelRequest, Expected> {
        let request = self.requests.get_mut(id).ok_or(Expected::NotFound)?;
        if request.db == Db::Unknown {
            Model::see(request);
        }
        match &request.outcome {
            Some(outcome) => Err(Expected::AlreadySettled(outcome.clone())),
            None => Ok(request),
        }
    }

    /// Applies a transition; returns what the command should return, if it is one.
    fn step(&mut self, transition: &Transition) -> Option<Expected> {
        match transition {
            Transition::Place {
                template,
                deadline,
                notify,
            } => {
                let id = Model::id_of(self.placed);
                self.placed += 1;
                let mut request = ModelRequest {
                    template: *template,
                    deadline: *deadline,
                    outcome: None,
                    tombstone: false,
                    db: Db::Unknown,
                };
                if *notify {
                    Model::see(&mut request);
                }
                self.requests.insert(id.clone(), request);
                if *notify {
                    self.autonomy();
                }
                None
            }
            Transition::Sync => {
                self.scan();
                None
            }
            Transition::Answer { id, valid } => Some(match self.open(id) {
                Err(result) => result,
                Ok(request) if request.tombstone => Expected::Cancelled,
                Ok(_) if !valid => Expected::Invalid,
                Ok(request) => {
                    Model::settle(request, OutcomeStatus::Answered, &operator());
                    Expected::Settled((OutcomeStatus::Answered, operator()))
                }
            }),
            Transition::Decline { id, blank } => Some(match self.open(id) {
                Err(result) => result,
                Ok(request) if request.tombstone => Expected::Cancelled,
                Ok(_) if *blank => Expected::Invalid,
                Ok(request) => {
                    Model::settle(request, OutcomeStatus::Declined, &operator());
                    Expected::Settled((OutcomeStatus::Declined, operator()))
                }
            }),
            Transition::Cancel { id } => Some(match self.open(id) {
                Err(result) => result,
                Ok(request) if request.tombstone => Expected::Tombstone(Placed::AlreadyThere),
                Ok(request) => {
                    request.tombstone = true;
                    request.db = Db::Cancelled;
                    Expected::Tombstone(Placed::Written)
                }
            }),
            Transition::SecondWriter { id, notify } => {
                let request = self.requests.get_mut(id).expect("precondition");
                request.outcome = Some(second_writer_settlement(request.template));
                if *notify {
                    match request.db {
                        Db::Unknown => Model::see(request),
                        Db::Pending => {
                            request.db = Db::Settled(request.outcome.clone().unwrap());
                        }
                        // Settled by the file itself: nothing is left for the policies.
                        _ => {}
                    }
                    self.autonomy();
                }
                None
            }
            Transition::Expire { days } => {
                for request in self.requests.values_mut() {
                    let due = request.deadline.is_some_and(|d| d.days() <= *days);
                    if request.db == Db::Pending && due {
                        let status = request.template.expiry_status();
                        Model::settle(request, status, EXPIRY);
                    }
                }
                self.autonomy();
                None
            }
            Transition::Crash { delete_db } => {
                if *delete_db {
                    for request in self.requests.values_mut() {
                        request.db = Db::Unknown;
                    }
                }
                self.scan();
                None
            }
        }
    }
}

/// What another inbox writes: it rejects what is invalid, as every inbox does, and
/// otherwise its operator answered.
fn second_writer_settlement(template: Template) -> Settlement {
    if template == Template::Invalid {
        (OutcomeStatus::Rejected, VALIDATION.to_owned())
    } else {
        (OutcomeStatus::Answered, other_operator())
    }
}

struct SpoolModel;

impl ReferenceStateMachine for SpoolModel {
    type State = Model;
    type Transition = Transition;

    fn init_state() -> BoxedStrategy<Model> {
        Just(Model::default()).boxed()
    }

    fn transitions(state: &Model) -> BoxedStrategy<Transition> {
        let template = prop_oneof![
            Just(Template::Confirm),
            Just(Template::Pick),
            Just(Template::AutoFull),
            Just(Template::AutoBlocked),
            Just(Template::Invalid),
        ];
        let deadline = proptest::option::of(prop_oneof![
            (1u32..=3).prop_map(Deadline::TimeoutDays),
            (1u32..=3).prop_map(Deadline::AtDay),
        ]);
        let place = (template, deadline, any::<bool>()).prop_map(|(template, deadline, notify)| {
            Transition::Place {
                template,
                deadline,
                notify,
            }
        });
        let ids: Vec<String> = state.requests.keys().cloned().collect();
        if ids.is_empty() {
            return prop_oneof![
                4 => place,
                1 => Just(Transition::Sync),
                1 => (0u32..=3).prop_map(|days| Transition::Expire { days }),
                1 => any::<bool>().prop_map(|delete_db| Transition::Crash { delete_db }),
            ]
            .boxed();
        }
        // Now and then a command names a request that does not exist.
        let target = prop_oneof![
            9 => proptest::sample::select(ids.clone()),
            1 => Just(MISSING.to_owned()),
        ];
        prop_oneof![
            4 => place,
            2 => Just(Transition::Sync),
            4 => (target.clone(), any::<bool>())
                .prop_map(|(id, valid)| Transition::Answer { id, valid }),
            1 => (target.clone(), any::<bool>())
                .prop_map(|(id, blank)| Transition::Decline { id, blank }),
            1 => target.prop_map(|id| Transition::Cancel { id }),
            2 => (proptest::sample::select(ids), any::<bool>())
                .prop_map(|(id, notify)| Transition::SecondWriter { id, notify }),
            1 => (0u32..=3).prop_map(|days| Transition::Expire { days }),
            1 => any::<bool>().prop_map(|delete_db| Transition::Crash { delete_db }),
        ]
        .boxed()
    }

    fn preconditions(state: &Model, transition: &Transition) -> bool {
        let exists = |id: &str| id == MISSING || state.requests.contains_key(id);
        match transition {
            Transition::Answer { id, .. }
            | Transition::Decline { id, .. }
            | Transition::Cancel { id } => exists(id),
            // A writer only links an outcome where none is (link() refuses otherwise), and
            // one that sees the tombstone does not answer: see "Exactly one outcome" and
            // "cancel" in docs/PROTOCOL.md.
            Transition::SecondWriter { id, .. } => state
                .requests
                .get(id)
                .is_some_and(|r| r.outcome.is_none() && !r.tombstone),
            _ => true,
        }
    }

    fn apply(mut state: Model, transition: &Transition) -> Model {
        state.step(transition);
        state
    }
}

/// The real system: a spool, a database file, the daemon's engine.
struct System {
    _dir: tempfile::TempDir,
    spool: Spool,
    db: PathBuf,
    daemon: Engine,
    /// When the test started: deadlines count in days from here.
    started: DateTime<Utc>,
    /// The model before the current transition, to predict command results.
    before: Model,
    /// Each outcome file's bytes when first seen: it must never change.
    outcome_bytes: HashMap<String, Vec<u8>>,
}

impl System {
    fn engine(&self) -> Engine {
        let store = Store::open(&self.db).expect("the database opens");
        Engine::new(self.spool.clone(), store).expect("an engine starts")
    }

    /// The watcher loop's start: track what is open, scan, policies.
    fn start_daemon(spool: &Spool, db: &std::path::Path) -> Engine {
        let store = Store::open(db).expect("the database opens");
        let mut daemon = Engine::new(spool.clone(), store).expect("an engine starts");
        daemon.turn(Wake::Start).unwrap();
        daemon
    }

    fn request_body(&self, template: Template, deadline: Option<Deadline>) -> Vec<u8> {
        let mut body = json!({"inbox": 1, "title": format!("{template:?}"),
            "questions": template.questions()});
        if template.autonomous() {
            body["mode"] = json!("autonomous");
        }
        match deadline {
            Some(Deadline::TimeoutDays(days)) => {
                body["timeout_seconds"] = json!(u64::from(days) * 86_400)
            }
            Some(Deadline::AtDay(days)) => {
                let at = self.started + TimeDelta::days(i64::from(days));
                body["expires_at"] = json!(at.to_rfc3339());
            }
            None => {}
        }
        serde_json::to_vec_pretty(&body).unwrap()
    }
}

fn settlement(outcome: &Outcome) -> Settlement {
    // A person's answer says which inbox took it; a rejection reads the same from any.
    let by = if outcome.instance.starts_with(OTHER_HOST)
        && outcome.answered_by.starts_with("operator:")
    {
        format!("{}{OTHER_HOST_MARK}", outcome.answered_by)
    } else {
        outcome.answered_by.clone()
    };
    (outcome.status, by)
}

/// A command's result, in the terms of [`Expected`].
fn observed(result: Result<Outcome, SettleError>) -> Expected {
    match result {
        Ok(outcome) => Expected::Settled(settlement(&outcome)),
        Err(SettleError::NotFound(_)) => Expected::NotFound,
        Err(SettleError::AlreadySettled(winner)) => Expected::AlreadySettled(settlement(&winner)),
        Err(SettleError::Cancelled(_)) => Expected::Cancelled,
        Err(SettleError::Invalid(_)) => Expected::Invalid,
        Err(other) => panic!("unexpected error: {other}"),
    }
}

struct SpoolTest;

impl StateMachineTest for SpoolTest {
    type SystemUnderTest = System;
    type Reference = SpoolModel;

    fn init_test(model: &Model) -> System {
        let dir = tempfile::tempdir().unwrap();
        let spool = Spool::open(dir.path().join("spool")).unwrap();
        // Never inside the spool: see ARCHITECTURE.md, "The spool is the truth".
        let db = dir.path().join("inbox.sqlite3");
        let daemon = System::start_daemon(&spool, &db);
        System {
            _dir: dir,
            spool,
            db,
            daemon,
            started: Utc::now(),
            before: model.clone(),
            outcome_bytes: HashMap::new(),
        }
    }

    fn apply(mut sys: System, model: &Model, transition: Transition) -> System {
        let expected = sys.before.clone().step(&transition);
        let actual = match &transition {
            Transition::Place {
                template,
                deadline,
                notify,
            } => {
                let id = Model::id_of(sys.before.placed);
                let body = sys.request_body(*template, *deadline);
                let path = sys.spool.place_request(&id, &body).unwrap();
                if *notify {
                    sys.daemon.turn(Wake::Paths(vec![path])).unwrap();
                }
                None
            }
            Transition::Sync => {
                sys.daemon.turn(Wake::Rescan).unwrap();
                None
            }
            Transition::Answer { id, valid } => {
                let template = sys.before.requests.get(id).map(|r| r.template);
                let given = match (template, valid) {
                    (Some(template), true) => template.valid_answers(),
                    _ => json!({"go": "maybe", "env": "moon"}),
                };
                let given: Map<String, Value> = given.as_object().unwrap().clone();
                let mut cli = sys.engine();
                Some(observed(cli.answer(id, &given, None, Surface::Cli)))
            }
            Transition::Decline { id, blank } => {
                let reason = if *blank { "  " } else { "not this week" };
                let mut cli = sys.engine();
                Some(observed(cli.decline(id, reason, None, Surface::Cli)))
            }
            Transition::Cancel { id } => {
                let mut cli = sys.engine();
                Some(match cli.cancel(id, "withdrawn") {
                    Ok(placed) => Expected::Tombstone(placed),
                    Err(error) => observed(Err(error)),
                })
            }
            Transition::SecondWriter { id, notify } => {
                let template = sys.before.requests[id].template;
                let (status, _) = second_writer_settlement(template);
                let request_bytes = sys.spool.read(Area::Questions, id).unwrap();
                // Another inbox writes what any inbox would: the version it answers, its
                // operator's account, answers that fit the questions, and their reply.
                let mut outcome = Outcome::new(
                    id.as_str(),
                    status,
                    if status == OutcomeStatus::Rejected {
                        VALIDATION.to_owned()
                    } else {
                        operator()
                    },
                    format!("{OTHER_HOST}01JOTHERINBOX0000000000000"),
                    Utc::now(),
                )
                .with_request_sha256(Some(inbox_protocol::sha256_hex(&request_bytes)));
                if let Ok(request) = inbox_protocol::parse_request(&request_bytes, Some(id)) {
                    let given = template.valid_answers().as_object().unwrap().clone();
                    let set = inbox_protocol::check_answers(&request, &given).unwrap();
                    outcome = outcome.with_answers(set).with_reply(&request);
                }
                // Another inbox has a spool handle of its own, and no part in our database.
                let other = Spool::open(sys.spool.root()).unwrap();
                assert_eq!(
                    other.write_outcome(id, &outcome.to_file_bytes()).unwrap(),
                    Placed::Written,
                    "the model says no outcome stands yet"
                );
                if *notify {
                    let path = sys.spool.path(Area::Answers, id);
                    sys.daemon.turn(Wake::Paths(vec![path])).unwrap();
                }
                None
            }
            Transition::Expire { days } => {
                let now = sys.started + TimeDelta::days(i64::from(*days)) + TimeDelta::hours(1);
                sys.daemon.turn(Wake::Deadline(now)).unwrap();
                None
            }
            Transition::Crash { delete_db } => {
                // Dropping the engine closes the database as a killed process would leave it:
                // whatever was committed is there, nothing else.
                let System {
                    _dir,
                    spool,
                    db,
                    daemon,
                    started,
                    before,
                    outcome_bytes,
                } = sys;
                drop(daemon);
                if *delete_db {
                    for suffix in ["", "-wal", "-shm"] {
                        let mut path = db.clone().into_os_string();
                        path.push(suffix);
                        let _ = std::fs::remove_file(PathBuf::from(path));
                    }
                }
                let daemon = System::start_daemon(&spool, &db);
                sys = System {
                    _dir,
                    spool,
                    db,
                    daemon,
                    started,
                    before,
                    outcome_bytes,
                };
                None
            }
        };
        assert_eq!(actual, expected, "result of {transition:?}");
        sys.before = model.clone();
        // Outcome files as first seen, to prove later that none is ever rewritten.
        for id in model.requests.keys() {
            if !sys.outcome_bytes.contains_key(id) {
                if let Ok(bytes) = sys.spool.read(Area::Answers, id) {
                    sys.outcome_bytes.insert(id.clone(), bytes);
                }
            }
        }
        sys
    }

    fn check_invariants(sys: &System, model: &Model) {
        let store = sys.daemon.queries();

        // The database agrees with the model.
        for (id, request) in &model.requests {
            let state = store.state(id).unwrap();
            let want = match &request.db {
                Db::Unknown => None,
                Db::Pending => Some(State::Pending),
                Db::Cancelled => Some(State::Cancelled),
                Db::Settled((status, _)) => Some(State::Settled(*status)),
            };
            assert_eq!(state, want, "database state of {id}");
            if let Db::Settled((status, by)) = &request.db {
                let detail = store
                    .detail(id)
                    .unwrap()
                    .expect("a settled request has a row");
                let outcome = detail.outcome.expect("a settled request has its outcome");
                assert_eq!(
                    settlement(&outcome),
                    (*status, by.clone()),
                    "recorded outcome of {id}"
                );
                assert_eq!(
                    detail.summary.answered_by.as_deref(),
                    Some(outcome.answered_by.as_str())
                );
            }
            // What the database records, the spool holds.
            match &request.db {
                Db::Settled(settled) => assert_eq!(request.outcome.as_ref(), Some(settled)),
                Db::Cancelled => assert!(request.tombstone && request.outcome.is_none()),
                _ => {}
            }
        }
        let mut pending: Vec<String> = store.pending().unwrap().into_iter().map(|r| r.id).collect();
        pending.sort();
        let want_pending: Vec<String> = model
            .requests
            .iter()
            .filter(|(_, r)| r.db == Db::Pending)
            .map(|(id, _)| id.clone())
            .collect();
        assert_eq!(pending, want_pending, "the pending list");

        // The spool agrees with the model: one outcome file per settled request, holding
        // what the model says, for the request file it names.
        let names = |area: Area| -> Vec<String> {
            let mut names: Vec<String> = std::fs::read_dir(sys.spool.dir(area))
                .unwrap()
                .map(|e| e.unwrap().file_name().into_string().unwrap())
                .collect();
            names.sort();
            names
        };
        let mut want_outcomes: Vec<String> = model
            .requests
            .iter()
            .filter(|(_, r)| r.outcome.is_some())
            .map(|(id, _)| format!("{id}.json"))
            .collect();
        want_outcomes.sort();
        assert_eq!(names(Area::Answers), want_outcomes, "outcome files");
        let mut want_tombstones: Vec<String> = model
            .requests
            .iter()
            .filter(|(_, r)| r.tombstone)
            .map(|(id, _)| id.clone())
            .collect();
        want_tombstones.sort();
        assert_eq!(names(Area::Cancel), want_tombstones, "tombstones");
        assert_eq!(names(Area::Questions).len(), model.requests.len());
        assert!(
            std::fs::read_dir(sys.spool.tmp_dir())
                .unwrap()
                .next()
                .is_none(),
            "files left in tmp/"
        );

        for (id, request) in &model.requests {
            let Some(want) = &request.outcome else {
                continue;
            };
            let bytes = sys.spool.read(Area::Answers, id).unwrap();
            let outcome = Outcome::from_file_bytes(&bytes).unwrap();
            assert_eq!(outcome.id, *id);
            assert_eq!(&settlement(&outcome), want, "outcome file of {id}");
            let request_bytes = sys.spool.read(Area::Questions, id).unwrap();
            assert_eq!(
                outcome.request_sha256.as_deref(),
                Some(inbox_protocol::sha256_hex(&request_bytes).as_str()),
                "the outcome of {id} names another request file"
            );
            if let Some(first) = sys.outcome_bytes.get(id) {
                assert_eq!(first, &bytes, "the outcome of {id} was rewritten");
            }
        }
    }
}

prop_state_machine! {
    #![proptest_config(ProptestConfig {
        cases: 64,
        // Each step writes and fsyncs real files; shrinking a failure still ends quickly.
        max_shrink_iters: 2048,
        ..ProptestConfig::default()
    })]

    #[test]
    fn the_inbox_follows_the_model(sequential 1..30 => SpoolTest);
}
