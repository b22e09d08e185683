//! What the crate's unit tests share: requests as the engine announces them, and an engine
//! that announces more than a notifier's queue holds.

use std::time::{Duration, Instant};

use inbox_engine::notifier::{Announcement, Notifier};
use serde_json::{json, Value};

use crate::queue::QUEUE_CAPACITY;

/// A request as the engine announces it: `json` is the request file.
pub fn announced(id: &str, json: Value) -> Announcement {
    let request = inbox_protocol::parse_request(json.to_string().as_bytes(), Some(id))
        .unwrap_or_else(|problems| panic!("{json}: {problems:?}"));
    Announcement::pending(id, request, chrono::Utc::now())
}

/// A one-question confirm titled `title`, asking `question`, from planu's run r-1.
pub fn confirm(title: &str, question: &str) -> Value {
    json!({"title": title, "source": {"app": "planu", "run": "r-1"},
           "questions": [{"id": "go", "type": "confirm", "question": question}]})
}

/// Announces `QUEUE_CAPACITY + 500` batches of one request each (`r0`, `r1`, ...) as fast as
/// the engine could; returns how long the engine's side took.
pub fn flood(notifier: &dyn Notifier) -> Duration {
    let batches: Vec<Vec<Announcement>> = (0..QUEUE_CAPACITY + 500)
        .map(|i| vec![announced(&format!("r{i}"), confirm("T", "Go?"))])
        .collect();
    let started = Instant::now();
    for batch in batches {
        notifier.announce(batch);
    }
    started.elapsed()
}
