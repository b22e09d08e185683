//! Stand-ins the ntfy tests share: links into a made-up page ([`FakeLinks`]), and ntfy's
//! documented "publish as JSON" format as a check ([`assert_ntfy_publish_format`]).

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

use chrono::{DateTime, Utc};
use serde_json::{Map, Value};
use url::Url;

use super::message::{Links, MAX_ACTIONS};

/// One call to [`Links::one_time_url`].
#[derive(Debug, Clone, PartialEq)]
pub struct Minted {
    pub id: String,
    pub version: String,
    pub answers: Map<String, Value>,
    pub label: String,
    pub expires_at: Option<DateTime<Utc>>,
}

/// Links into a made-up page; one-time URLs numbered as they are made.
#[derive(Default)]
pub struct FakeLinks {
    pub minted: Mutex<Vec<Minted>>,
    pub count: AtomicUsize,
    /// Makes no one-time URL after this many.
    pub limit: Option<usize>,
}

impl Links for FakeLinks {
    fn open_url(&self, request_id: &str) -> String {
        format!("https://inbox.test/#/request/{request_id}")
    }

    fn page_url(&self) -> String {
        "https://inbox.test/".into()
    }

    fn one_time_url(
        &self,
        request_id: &str,
        version: &str,
        answers: &Map<String, Value>,
        label: &str,
        expires_at: Option<DateTime<Utc>>,
    ) -> Option<String> {
        let n = self.count.fetch_add(1, Ordering::SeqCst);
        if self.limit.is_some_and(|limit| n >= limit) {
            return None;
        }
        self.minted.lock().unwrap().push(Minted {
            id: request_id.into(),
            version: version.into(),
            answers: answers.clone(),
            label: label.into(),
            expires_at,
        });
        Some(format!("https://inbox.test/api/act/token-{n}"))
    }
}

pub fn actions(message: &Value) -> &Vec<Value> {
    message["actions"].as_array().expect("actions")
}

pub fn http_actions(message: &Value) -> Vec<&Value> {
    actions(message)
        .iter()
        .filter(|action| action["action"] == "http")
        .collect()
}

/// Checks `message` against ntfy's documented "publish as JSON" format: only its fields,
/// `topic` required, `priority` 1 to 5, at most three actions, each with the fields its
/// type takes.
pub fn assert_ntfy_publish_format(message: &Value) {
    let message = message.as_object().expect("a JSON object");
    let documented = [
        "topic",
        "message",
        "title",
        "tags",
        "priority",
        "actions",
        "click",
        "attach",
        "markdown",
        "icon",
        "filename",
        "delay",
        "email",
        "call",
        "sequence_id",
    ];
    for key in message.keys() {
        assert!(documented.contains(&key.as_str()), "not ntfy's: {key}");
    }
    let topic = message["topic"].as_str().expect("topic");
    assert!(!topic.is_empty() && topic.len() <= 64);
    for text in ["title", "message", "click"] {
        assert!(message.get(text).is_none_or(Value::is_string), "{text}");
    }
    let priority = message["priority"].as_u64().expect("priority");
    assert!((1..=5).contains(&priority), "priority {priority}");
    let tags = message["tags"].as_array().expect("tags");
    assert!(tags.iter().all(Value::is_string));
    // ntfy 2.16's sequence id: letters, digits, `-` and `_`, as a topic.
    if let Some(sequence_id) = message.get("sequence_id") {
        let sequence_id = sequence_id.as_str().expect("a string sequence id");
        assert!((1..=64).contains(&sequence_id.len()), "{sequence_id}");
        assert!(sequence_id
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_'));
    }
    // A push taken back has none.
    let no_actions = Vec::new();
    let actions = message
        .get("actions")
        .map_or(&no_actions, |actions| actions.as_array().expect("actions"));
    assert!(actions.len() <= MAX_ACTIONS);
    for action in actions {
        let action = action.as_object().expect("an action object");
        let allowed: &[&str] = match action["action"].as_str() {
            Some("view") => &["action", "label", "url", "clear"],
            Some("http") => &[
                "action", "label", "url", "method", "headers", "body", "clear",
            ],
            other => panic!("not an action type we use: {other:?}"),
        };
        for key in action.keys() {
            assert!(allowed.contains(&key.as_str()), "{key} in {action:?}");
        }
        assert!(!action["label"].as_str().expect("label").is_empty());
        Url::parse(action["url"].as_str().expect("url")).expect("an absolute URL");
        if let Some(method) = action.get("method") {
            assert!(["GET", "POST", "PUT"].contains(&method.as_str().unwrap()));
        }
        if let Some(headers) = action.get("headers") {
            assert!(headers.as_object().unwrap().values().all(Value::is_string));
        }
        assert!(action.get("body").is_none_or(Value::is_string));
        assert!(action.get("clear").is_none_or(Value::is_boolean));
    }
}
