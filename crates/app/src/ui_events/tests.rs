//! The forwarder's unit tests: what each event does to the Pending list, the cap, and a
//! real engine's changes as the window hears them.

use std::sync::Mutex;

use super::*;
use inbox_protocol::{OutcomeStatus, Priority, Source};

fn ingested(id: &str) -> Event {
    Event::Ingested {
        id: id.to_owned(),
        title: String::new(),
        source: Source::default(),
        priority: Priority::Normal,
        question_count: 1,
    }
}

fn quiet() -> impl Fn(UiEvent) + Send + Sync {
    |_| {}
}

#[test]
fn each_event_names_its_request_or_asks_for_a_refetch() {
    assert_eq!(pending_effect(&ingested("a")), PendingEffect::Request("a"));
    let settled = Event::Settled {
        id: "b".into(),
        status: OutcomeStatus::Answered,
        answered_by: "operator:x".into(),
    };
    assert_eq!(pending_effect(&settled), PendingEffect::Request("b"));
    let snoozed = Event::SnoozeEnded { id: "c".into() };
    assert_eq!(pending_effect(&snoozed), PendingEffect::Request("c"));
    for everything in [
        Event::Ready { pending: 3 },
        Event::Recovered,
        Event::PolicyChanged {
            origin: "file".into(),
            rules: vec![],
        },
        Event::PolicyTrouble {
            message: "broken".into(),
        },
    ] {
        assert_eq!(
            pending_effect(&everything),
            PendingEffect::Refetch,
            "{everything:?}"
        );
    }
    let notified = Event::Notified {
        ids: vec!["a".into()],
        merged: false,
    };
    assert_eq!(pending_effect(&notified), PendingEffect::Nothing);
    assert!(!changes_lists(&notified));
}

#[test]
fn a_request_named_twice_is_read_once_in_the_order_first_named() {
    let mut gathered = Gathered::default();
    let sink = quiet();
    for id in ["a", "b", "a", "c"] {
        gathered.take(ingested(id), &sink);
    }
    assert!(gathered.changed && !gathered.refetch);
    assert_eq!(gathered.order, ["a", "b", "c"]);
    assert!(!gathered.snoozed);
    gathered.take(
        Event::Snoozed {
            id: "b".into(),
            until: chrono::Utc::now(),
            capped: false,
        },
        &sink,
    );
    assert!(gathered.snoozed);
    assert_eq!(gathered.order, ["a", "b", "c"]);
}

#[test]
fn a_burst_past_the_cap_is_the_refetch_form() {
    let mut gathered = Gathered::default();
    let sink = quiet();
    for i in 0..DELTA_CAP {
        gathered.take(ingested(&format!("r{i}")), &sink);
    }
    assert!(!gathered.refetch, "{DELTA_CAP} requests fit one event");
    gathered.take(ingested("r0"), &sink);
    assert!(!gathered.refetch, "a request named again is no new row");
    gathered.take(ingested("one-more"), &sink);
    assert!(gathered.refetch);
    assert!(gathered.order.is_empty(), "nothing is kept for a delta");
    gathered.take(ingested("later"), &sink);
    assert!(gathered.refetch && gathered.order.is_empty());
}

/// A real engine on a spool and database in a temporary directory, its events kept for
/// a forwarder started later.
struct Rig {
    dir: tempfile::TempDir,
    engine: Engine,
    events: Receiver<Event>,
}

impl Rig {
    fn new() -> Rig {
        let dir = tempfile::tempdir().unwrap();
        let (tx, events) = crossbeam_channel::unbounded();
        let engine = inbox_engine::locations::open_engine(
            &dir.path().join("spool"),
            &dir.path().join("inbox.sqlite3"),
        )
        .unwrap()
        .with_events(tx);
        Rig {
            dir,
            engine,
            events,
        }
    }

    fn place(&self, id: &str, priority: &str) {
        let body = serde_json::json!({
            "title": format!("Request {id}"),
            "source": {"app": "ci", "run": "r-1"},
            "priority": priority,
            "questions": [{"type": "yes_no", "question": "Go on?"}],
        });
        let spool = self.dir.path().join("spool");
        let tmp = spool.join("tmp").join(format!("{id}.json"));
        std::fs::write(&tmp, serde_json::to_vec(&body).unwrap()).unwrap();
        std::fs::rename(&tmp, spool.join("questions").join(format!("{id}.json"))).unwrap();
    }

    /// The Pending list as `list_pending` returns it.
    fn pending(&self) -> Vec<RowView> {
        self.engine
            .queries()
            .pending()
            .unwrap()
            .iter()
            .map(RowView::of)
            .collect()
    }

    /// Starts the forwarder on the events so far and those to come; what it sends is
    /// collected.
    fn forward(&self) -> (Arc<Mutex<Vec<UiEvent>>>, JoinHandle<()>) {
        let sent = Arc::new(Mutex::new(Vec::new()));
        let events = self.events.clone();
        let db = self.dir.path().join("inbox.sqlite3");
        let into = Arc::clone(&sent);
        let thread = std::thread::spawn(move || {
            forward(&events, &db, &move |event| into.lock().unwrap().push(event));
        });
        (sent, thread)
    }
}

/// The `changed` events sent, once there are `n` of them (or after 5 s).
fn changes(sent: &Mutex<Vec<UiEvent>>, n: usize) -> Vec<(u32, Option<PendingDelta>)> {
    let until = Instant::now() + Duration::from_secs(5);
    loop {
        let changes: Vec<_> = sent
            .lock()
            .unwrap()
            .iter()
            .filter_map(|event| match event {
                UiEvent::Changed { pending, delta } => Some((*pending, delta.clone())),
                _ => None,
            })
            .collect();
        if changes.len() >= n || Instant::now() > until {
            return changes;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// Requests placed arrive as the rows `list_pending` returns for them, judgement
/// included, though the forwarder reads them while the loop is still judging them; one
/// withdrawn leaves by its id.
#[test]
fn placed_requests_arrive_as_their_pending_rows_and_leave_by_id() {
    let mut rig = Rig::new();
    let (sent, forwarder) = rig.forward();
    rig.place("urgent", "critical");
    rig.place("routine", "normal");
    rig.engine.turn(inbox_engine::Wake::Rescan).unwrap();
    let listed = rig.pending();
    assert_eq!(listed.len(), 2);
    assert!(listed.iter().all(|row| row.judgement.is_some()));
    // What the window holds once every delta is in: the last row sent for each id.
    let deadline = Instant::now() + Duration::from_secs(5);
    let held = loop {
        let mut held: HashMap<String, RowView> = HashMap::new();
        for (_, delta) in changes(&sent, 1) {
            for row in delta.expect("a delta, not the refetch form").rows {
                held.insert(row.id.clone(), row);
            }
        }
        let done = listed.iter().all(|row| held.get(&row.id) == Some(row));
        if done || Instant::now() > deadline {
            break held;
        }
        std::thread::sleep(Duration::from_millis(10));
    };
    for row in &listed {
        assert_eq!(held.get(&row.id), Some(row), "the row sent for {}", row.id);
    }
    let before = changes(&sent, 1).len();
    rig.engine.cancel("routine", "not needed").unwrap();
    let after = changes(&sent, before + 1);
    let (pending, delta) = after.last().cloned().unwrap();
    let delta = delta.expect("a delta");
    assert_eq!(delta.gone, ["routine"]);
    assert!(delta.rows.is_empty() && !delta.snoozed, "{delta:?}");
    assert_eq!(pending, 1);
    drop(rig);
    forwarder.join().unwrap();
}

/// More requests than one event may carry row by row: the refetch form, with the count.
#[test]
fn a_burst_past_the_cap_is_sent_as_the_refetch_form() {
    let mut rig = Rig::new();
    for i in 0..=DELTA_CAP {
        rig.place(&format!("burst-{i}"), "normal");
    }
    // One turn, its events all queued before the forwarder looks: one gathering.
    rig.engine.turn(inbox_engine::Wake::Rescan).unwrap();
    let (sent, forwarder) = rig.forward();
    let first = changes(&sent, 1).first().cloned().expect("a changed event");
    assert_eq!(first.0, u32::try_from(DELTA_CAP + 1).unwrap());
    assert_eq!(first.1, None, "the refetch form");
    drop(rig);
    forwarder.join().unwrap();
}

/// A request the loop has not judged yet (a command-line sync took it in) is sent as it
/// is, then again once the loop judged it, though the judging says nothing.
#[test]
fn a_row_sent_before_its_judgement_is_sent_again_once_judged() {
    let mut rig = Rig::new();
    rig.place("late", "high");
    rig.engine.sync().unwrap();
    assert!(rig.pending()[0].judgement.is_none());
    let (sent, forwarder) = rig.forward();
    let first = changes(&sent, 1);
    let rows = &first[0].1.as_ref().expect("a delta").rows;
    assert_eq!(rows.len(), 1);
    assert!(rows[0].judgement.is_none(), "sent as it stands: {rows:?}");
    rig.engine.turn(inbox_engine::Wake::Rescan).unwrap();
    let judged = rig.pending();
    assert!(judged[0].judgement.is_some());
    let second = changes(&sent, 2);
    assert_eq!(second.len(), 2, "sent again: {second:?}");
    let delta = second[1].1.as_ref().expect("a delta");
    assert_eq!(delta.rows, judged);
    drop(rig);
    forwarder.join().unwrap();
}

/// A change the events did not describe (here another process's, which this loop
/// never hears of) is found once things are quiet: the count no longer agrees, and the
/// window is told to fetch everything.
#[test]
fn a_count_that_no_longer_agrees_is_followed_by_the_refetch_form() {
    let mut rig = Rig::new();
    let (sent, forwarder) = rig.forward();
    rig.place("seen", "normal");
    rig.engine.turn(inbox_engine::Wake::Rescan).unwrap();
    let first = changes(&sent, 1);
    assert_eq!(first[0].0, 1);
    assert!(first[0].1.is_some());
    // Another engine on the same spool and database, whose events nobody hears.
    let mut other = inbox_engine::locations::open_engine(
        &rig.dir.path().join("spool"),
        &rig.dir.path().join("inbox.sqlite3"),
    )
    .unwrap();
    rig.place("unheard", "normal");
    other.sync().unwrap();
    let started = Instant::now();
    let until = started + VERIFY_AFTER + Duration::from_secs(5);
    let refetch = loop {
        let all = changes(&sent, 2);
        if let Some(found) = all.iter().find(|(_, delta)| delta.is_none()) {
            break found.clone();
        }
        assert!(Instant::now() < until, "no refetch form: {all:?}");
        std::thread::sleep(Duration::from_millis(50));
    };
    assert_eq!(refetch.0, 2);
    drop(other);
    drop(rig);
    forwarder.join().unwrap();
}

#[test]
fn a_row_watched_is_looked_at_less_often_then_given_up() {
    let mut watch = Watch::default();
    let start = Instant::now();
    assert_eq!(watch.next_due(), None);
    watch.add("a", start);
    assert_eq!(watch.next_due(), Some(start + RECHECK_FIRST));
    assert!(watch.due(start).is_empty());
    assert_eq!(watch.due(start + RECHECK_FIRST), ["a"]);
    watch.again("a", start + RECHECK_FIRST);
    assert_eq!(
        watch.next_due(),
        Some(start + RECHECK_FIRST + RECHECK_FIRST * 2)
    );
    watch.again("a", start + RECHECK_FOR);
    assert_eq!(watch.next_due(), None, "given up after {RECHECK_FOR:?}");
    watch.add("b", start);
    watch.remove("b");
    assert_eq!(watch.next_due(), None);
}
