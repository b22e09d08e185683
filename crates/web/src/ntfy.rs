//! Pushes to the operator's phone through [ntfy](https://ntfy.sh): each new request, or one
//! summary for a burst, published as JSON to the operator's topic, with a link that opens
//! the request in the served page and, where the engine's rule allows, answer buttons that
//! answer through one-time URLs.
//!
//! The design is the desktop notifier's (`inbox-notifications`): `announce` only puts the
//! engine's batch on a bounded queue (a full queue drops that push with a warning, never a
//! request: the inbox still lists it), and one thread of its own times the pushes with the
//! engine's [`Coalescer`] (a lone request at once, a burst as its first push plus one
//! summary), words them with the engine's [`compose`] and POSTs them. A push that fails is
//! logged and dropped, never retried: the request stays in the inbox, and a phone told
//! twice, late, helps nobody. Neither a slow nor a missing server ever stalls the engine.
//!
//! What a push says follows the desktop bubble's rules, so the phone and the desktop can
//! never disagree about what a button answers: its title is the request's, its message who
//! asks and the question, and its answer buttons are exactly the engine's [`offer`] (a
//! short confirm or choice of low or normal priority, shown whole), each listed in the
//! message. Each button is an ntfy `http` action that POSTs to a one-time URL made by the
//! server ([`Links::one_time_url`]) for that answer to that version (the request file's
//! SHA-256) of the request: the URL is the whole authority, so nothing else has to travel.
//! Everything else (a text question, several questions, high or critical priority, a
//! choice with too many options) only opens the page.
//!
//! With [`NtfyConfig::titles_only`] nothing but the request's own title leaves the machine:
//! no source, no question, no option labels, and so no answer buttons either (a press must
//! never answer a question the push did not show).

use std::borrow::Cow;
use std::sync::Arc;
use std::time::{Duration, Instant};

use chrono::{DateTime, Utc};
use crossbeam_channel::{Receiver, RecvTimeoutError, Sender};
use inbox_engine::inbox_policy::Loudness;
use inbox_engine::notifier::{
    compose, Announcement, Coalescer, Delivery, Notice, Notifier, QUIET_WINDOW,
};
use inbox_protocol::text::one_line;
use inbox_protocol::Priority;
use serde_json::{json, Map, Value};
use url::Url;

/// Most actions ntfy shows on one message ("up to three user actions").
pub const MAX_ACTIONS: usize = 3;

/// Longest topic name ntfy accepts.
pub const MAX_TOPIC_CHARS: usize = 64;

/// Longest message, in bytes. ntfy's limit is 4,096 bytes: a longer message is turned into
/// an attachment, which a phone shows as a file to download, not as text. A message with
/// answer buttons is never cut (it is far shorter: the engine's offer caps it); one without
/// is cut with "…" (the page shows the request whole).
pub const MAX_MESSAGE_BYTES: usize = 4000;

/// Longest title, in bytes. A request's title is at most 200 characters, but hidden
/// characters are shown escaped and may make it several times longer; a phone shows one
/// line of it anyway.
pub const MAX_TITLE_BYTES: usize = 512;

/// Batches of new requests that may wait for the publisher. A thousand batches behind means
/// the server is stuck; what comes next is dropped rather than held.
pub const QUEUE_CAPACITY: usize = 1024;

/// How long connecting to the ntfy server may take (name lookup aside).
pub const CONNECT_TIMEOUT: Duration = Duration::from_secs(5);

/// How long one publish may take in all: a server that hangs costs the publisher this much,
/// never the engine.
pub const REQUEST_TIMEOUT: Duration = Duration::from_secs(10);

/// The message of a push for one request under [`NtfyConfig::titles_only`].
pub const TITLES_ONLY_MESSAGE: &str = "A new request is waiting";

/// The message of a summary under [`NtfyConfig::titles_only`].
pub const TITLES_ONLY_SUMMARY: &str = "Open the inbox to read and answer them";

/// The title of a push under [`NtfyConfig::titles_only`] for a request without a title of
/// its own (its list title would be its first question, which must not leave the machine).
pub const UNTITLED: &str = "New request";

/// Why the ntfy publisher cannot be set up, or why a push failed.
///
/// None of these messages shows the topic or the token: the topic is the password of an
/// ntfy topic, and these messages end up in logs.
#[derive(Debug, thiserror::Error)]
pub enum NtfyError {
    /// The topic URL the operator gave cannot be published to.
    #[error("the ntfy topic URL {0}")]
    TopicUrl(String),
    /// The access token cannot be sent in an `Authorization` header.
    #[error("the ntfy access token {0}")]
    Token(&'static str),
    /// The publisher's thread could not be started.
    #[error("cannot start the ntfy publisher thread: {0}")]
    Spawn(#[source] std::io::Error),
    /// The server could not be reached, or did not answer in time.
    #[error("cannot reach the ntfy server {server}: {source}")]
    Unreachable {
        server: String,
        #[source]
        source: Box<ureq::Error>,
    },
    /// The server answered, but did not take the message.
    #[error("the ntfy server {server} refused the message: HTTP {status}{detail}")]
    Refused {
        server: String,
        status: u16,
        /// ntfy's own word for it (`: unauthorized`), when it gave one.
        detail: String,
    },
}

/// Where and how to publish.
#[derive(Clone)]
pub struct NtfyConfig {
    /// The topic URL the operator set, e.g. `https://ntfy.sh/my-secret-topic` or
    /// `http://127.0.0.1:8080/inbox`: the server is everything before the last path segment
    /// (scheme, host, port and any path prefix), the topic is that last segment. Checked by
    /// [`NtfyConfig::parse`] and again by [`NtfyPublisher::start`].
    pub topic_url: Url,
    /// An ntfy access token (`tk_...`), sent as `Authorization: Bearer <token>`.
    pub token: Option<String>,
    /// Send titles only: no source, no question text leaves the machine.
    pub titles_only: bool,
}

impl std::fmt::Debug for NtfyConfig {
    /// Without the token, which must never reach a log.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("NtfyConfig")
            .field("topic_url", &self.topic_url.as_str())
            .field("token", &self.token.as_ref().map(|_| "<hidden>"))
            .field("titles_only", &self.titles_only)
            .finish()
    }
}

impl NtfyConfig {
    /// Reads the operator's settings. The URL must be `http` or `https`, without a user
    /// name, password, query or fragment, and end in a topic of 1 to 64 letters, digits,
    /// `-` or `_` (ntfy's own rule; one trailing `/` is allowed). A blank token is no token
    /// (an environment variable set to nothing); any other must be printable ASCII without
    /// spaces.
    pub fn parse(
        topic_url: &str,
        token: Option<String>,
        titles_only: bool,
    ) -> Result<NtfyConfig, NtfyError> {
        let topic_url = Url::parse(topic_url.trim())
            .map_err(|error| NtfyError::TopicUrl(format!("is not a URL ({error})")))?;
        check_topic_url(&topic_url)?;
        let token = token
            .map(|token| token.trim().to_owned())
            .filter(|token| !token.is_empty());
        if let Some(token) = &token {
            check_token(token)?;
        }
        Ok(NtfyConfig {
            topic_url,
            token,
            titles_only,
        })
    }

    /// The topic: the URL's last path segment.
    pub fn topic(&self) -> &str {
        split_topic_url(&self.topic_url).1
    }

    /// The server's root URL, to which ntfy takes messages published as JSON (not the topic
    /// URL): scheme, host, port and any path prefix, ending in `/`.
    pub fn server_url(&self) -> Url {
        split_topic_url(&self.topic_url).0
    }
}

/// The server root and the topic of a topic URL, unchecked: the last non-empty path segment
/// is the topic, everything before it the server.
fn split_topic_url(topic_url: &Url) -> (Url, &str) {
    let segments: Vec<&str> = topic_url
        .path_segments()
        .map(|segments| segments.collect())
        .unwrap_or_default();
    // One trailing slash (`https://ntfy.sh/topic/`) leaves an empty last segment.
    let segments = match segments.split_last() {
        Some((&"", rest)) => rest,
        _ => &segments[..],
    };
    let (topic, prefix) = segments.split_last().unwrap_or((&"", &[]));
    let mut server = topic_url.clone();
    server.set_query(None);
    server.set_fragment(None);
    let path: String = prefix.iter().map(|segment| format!("{segment}/")).collect();
    server.set_path(&format!("/{path}"));
    (server, topic)
}

fn check_topic_url(topic_url: &Url) -> Result<(), NtfyError> {
    let problem = |problem: &str| Err(NtfyError::TopicUrl(problem.to_owned()));
    match topic_url.scheme() {
        "http" | "https" => {}
        other => {
            return Err(NtfyError::TopicUrl(format!(
                "must start with http:// or https://, not {other}:"
            )))
        }
    }
    if topic_url.host().is_none() {
        return problem("names no server");
    }
    if !topic_url.username().is_empty() || topic_url.password().is_some() {
        return problem(
            "must not carry a user name or password: give an access token instead \
             (it is sent as a bearer token)",
        );
    }
    if topic_url.query().is_some() || topic_url.fragment().is_some() {
        return problem("must not have a query (?...) or a fragment (#...)");
    }
    let topic = split_topic_url(topic_url).1;
    if topic.is_empty() {
        return problem("names no topic: it must end in one, as in https://ntfy.sh/your-topic");
    }
    let allowed = |c: char| c.is_ascii_alphanumeric() || c == '-' || c == '_';
    if topic.chars().count() > MAX_TOPIC_CHARS || !topic.chars().all(allowed) {
        return problem(
            "must end in a topic of 1 to 64 letters, digits, '-' or '_' (ntfy's rule for \
             topic names)",
        );
    }
    Ok(())
}

fn check_token(token: &str) -> Result<(), NtfyError> {
    if token.is_empty() {
        return Err(NtfyError::Token("is empty"));
    }
    if !token.chars().all(|c| c.is_ascii_graphic()) {
        return Err(NtfyError::Token(
            "must be printable ASCII without spaces (ntfy tokens look like tk_...)",
        ));
    }
    Ok(())
}

/// What the publisher needs from the server: the link that opens a request in the served
/// page, and a one-time URL that answers it. Implemented over the device store.
pub trait Links: Send + Sync {
    /// The served page, opened on this request.
    fn open_url(&self, request_id: &str) -> String;

    /// The served page, on the list of pending requests: where a summary's click goes.
    fn page_url(&self) -> String;

    /// A one-time URL for these answers to this request version, valid until `expires_at`
    /// (`None`: the request's own expiry is unknown; the implementation picks a cap).
    /// `None` if it could not be made (then no answer buttons at all).
    fn one_time_url(
        &self,
        request_id: &str,
        version: &str,
        answers: &Map<String, Value>,
        label: &str,
        expires_at: Option<DateTime<Utc>>,
    ) -> Option<String>;
}

/// The message for one delivery, as ntfy's "publish as JSON" takes it: `topic`, `title`,
/// `message`, `priority` (1 to 5), `tags`, `click` and at most [`MAX_ACTIONS`] `actions`.
/// `None` when there is nothing to publish (no announcement, or only silent ones).
///
/// One request: its title, who asks and its question (see the module's documentation for
/// titles only), its priority (low 2, normal 3, high 4, critical 5, and 5 whenever the
/// policy says critical), a click and an "Open" action that open it in the page, and, where
/// the engine's [`offer`] allows and every one-time URL could be made, one `http` action per
/// offered answer beside "Open". An offer that does not fit beside "Open" (a choice of three)
/// gets no answer buttons: a subset of the options would bias the answer.
///
/// Several requests: one summary ("3 new requests need an answer", the first titles unless
/// titles only) that opens the page, without answer buttons.
///
/// [`offer`]: inbox_engine::notifier::offer
pub fn compose_message(
    config: &NtfyConfig,
    delivery: &[Announcement],
    links: &dyn Links,
) -> Option<Value> {
    // The engine never announces silent requests; a front end's own announcement might.
    let told: Vec<&Announcement> = delivery
        .iter()
        .filter(|announcement| announcement.loudness != Loudness::Silent)
        .collect();
    match told.as_slice() {
        [] => None,
        [one] => one_request(config, one, links),
        many => summary(config, many, links),
    }
}

/// The push for one request.
fn one_request(
    config: &NtfyConfig,
    announcement: &Announcement,
    links: &dyn Links,
) -> Option<Value> {
    let open = links.open_url(&announcement.summary.id);
    let mut actions = vec![view_action("Open", &open)];
    let (title, message) = if config.titles_only {
        (own_title(announcement), TITLES_ONLY_MESSAGE.to_owned())
    } else {
        let notice = match answer_buttons(announcement, links) {
            Some((notice, buttons)) => {
                actions.extend(buttons);
                notice
            }
            None => compose(std::slice::from_ref(announcement), false)?,
        };
        (notice.summary, notice.body)
    };
    let priority = ntfy_priority(announcement);
    Some(json!({
        "topic": config.topic(),
        "title": cut_to_bytes(title, MAX_TITLE_BYTES),
        "message": cut_to_bytes(message, MAX_MESSAGE_BYTES),
        "priority": priority,
        "tags": tags("question", priority),
        "click": open,
        "actions": actions,
    }))
}

/// The bubble with answer buttons the engine words for `announcement`, and one `http`
/// action per offered answer; `None` when it has none, they do not fit beside "Open", its
/// message would have to be cut, or a one-time URL could not be made.
fn answer_buttons(announcement: &Announcement, links: &dyn Links) -> Option<(Notice, Vec<Value>)> {
    let notice = compose(std::slice::from_ref(announcement), true)?;
    let offer = notice.offer.as_ref()?;
    if offer.options.len() >= MAX_ACTIONS || notice.body.len() > MAX_MESSAGE_BYTES {
        return None;
    }
    let summary = &announcement.summary;
    let expires_at = summary.deadline.or_else(|| {
        announcement
            .request
            .as_ref()
            .and_then(|request| request.deadline(summary.placed_at))
    });
    // All or none: a push offering Yes without No would lean on the operator.
    let buttons = offer
        .options
        .iter()
        .map(|option| {
            let url = links.one_time_url(
                &offer.id,
                &offer.version,
                &option.answers,
                &option.label,
                expires_at,
            )?;
            Some(json!({
                "action": "http",
                "label": option.label,
                "url": url,
                "method": "POST",
                // Gone once answered; a failed request leaves it (ntfy's rule for `clear`).
                "clear": true,
            }))
        })
        .collect::<Option<Vec<Value>>>()?;
    Some((notice, buttons))
}

/// The push for a burst.
fn summary(config: &NtfyConfig, many: &[&Announcement], links: &dyn Links) -> Option<Value> {
    let notice = compose(many, false)?;
    let message = if config.titles_only {
        TITLES_ONLY_SUMMARY.to_owned()
    } else {
        notice.body
    };
    let priority = many.iter().map(|a| ntfy_priority(a)).max()?;
    let page = links.page_url();
    Some(json!({
        "topic": config.topic(),
        "title": cut_to_bytes(notice.summary, MAX_TITLE_BYTES),
        "message": cut_to_bytes(message, MAX_MESSAGE_BYTES),
        "priority": priority,
        "tags": tags("inbox_tray", priority),
        "click": page,
        "actions": [view_action("Open", &page)],
    }))
}

/// The title under titles only: the request's own title, never its first question (which
/// the list shows for a request without one).
fn own_title(announcement: &Announcement) -> String {
    let own = announcement
        .request
        .as_ref()
        .and_then(|request| request.title.as_deref())
        .map(one_line)
        .unwrap_or(Cow::Borrowed(UNTITLED));
    match announcement.escalation {
        Some(_) => format!("Still waiting: {own}"),
        None => own.into_owned(),
    }
}

/// An ntfy `view` action: opens `url` when tapped, and leaves the push (opening the page
/// answers nothing).
fn view_action(label: &str, url: &str) -> Value {
    json!({"action": "view", "label": label, "url": url, "clear": false})
}

/// ntfy's priority (1 min, 3 default, 5 max) for a request: low 2, normal 3, high 4,
/// critical 5; critical too when the policy says so. Nothing maps to 1 ("min" is silent on
/// a phone, and silent requests are not pushed at all).
fn ntfy_priority(announcement: &Announcement) -> u8 {
    if announcement.is_critical() {
        return 5;
    }
    match announcement.summary.priority {
        Priority::Low => 2,
        Priority::Normal => 3,
        Priority::High => 4,
        Priority::Critical => 5,
    }
}

/// Tags, which ntfy shows as emojis: what the push is, and a warning sign when urgent.
fn tags(kind: &str, priority: u8) -> Vec<&str> {
    let mut tags = vec![kind];
    match priority {
        5 => tags.push("rotating_light"),
        4 => tags.push("warning"),
        _ => {}
    }
    tags
}

/// `text` cut to at most `max` bytes at a character boundary, "…" marking a cut.
fn cut_to_bytes(text: String, max: usize) -> String {
    if text.len() <= max {
        return text;
    }
    let mut end = max.saturating_sub('…'.len_utf8());
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}…", &text[..end])
}

/// Pushes new requests to an ntfy topic: hand it to the engine (alone, or beside the
/// desktop notifier). Dropping it ends its thread (after the push under way, if any).
pub struct NtfyPublisher {
    queue: Sender<Vec<Announcement>>,
}

impl NtfyPublisher {
    /// Checks the settings and starts the publisher's thread. Nothing is sent until a
    /// request is announced.
    pub fn start(config: NtfyConfig, links: Arc<dyn Links>) -> Result<NtfyPublisher, NtfyError> {
        // The fields are public: check what `parse` would have.
        check_topic_url(&config.topic_url)?;
        if let Some(token) = &config.token {
            check_token(token)?;
        }
        let (queue, inbox) = crossbeam_channel::bounded(QUEUE_CAPACITY);
        let publisher = PublisherThread {
            server: config.server_url(),
            config,
            links,
            agent: publishing_agent(),
        };
        std::thread::Builder::new()
            .name("ntfy".into())
            .spawn(move || publisher.run(&inbox))
            .map_err(NtfyError::Spawn)?;
        Ok(NtfyPublisher { queue })
    }
}

/// The HTTP client of one publisher.
fn publishing_agent() -> ureq::Agent {
    ureq::Agent::config_builder()
        .timeout_connect(Some(CONNECT_TIMEOUT))
        .timeout_global(Some(REQUEST_TIMEOUT))
        // The status is read here, to log ntfy's reason with it.
        .http_status_as_error(false)
        // Publishing never redirects; following one would send the message, and perhaps
        // the token, somewhere the operator did not name.
        .max_redirects(0)
        .build()
        .into()
}

impl Notifier for NtfyPublisher {
    fn announce(&self, fresh: Vec<Announcement>) {
        inbox_engine::notifier::hand_over(&self.queue, fresh, "push");
    }
}

/// What the publisher's thread works with.
struct PublisherThread {
    config: NtfyConfig,
    server: Url,
    links: Arc<dyn Links>,
    agent: ureq::Agent,
}

impl PublisherThread {
    fn run(self, inbox: &Receiver<Vec<Announcement>>) {
        let mut coalescer = Coalescer::new(QUIET_WINDOW);
        loop {
            let received = match coalescer.deadline() {
                Some(deadline) => inbox.recv_deadline(deadline),
                None => inbox.recv().map_err(|_| RecvTimeoutError::Disconnected),
            };
            let now = Instant::now();
            let delivery = match received {
                Ok(batch) => coalescer.arrive(now, batch),
                Err(RecvTimeoutError::Timeout) => coalescer.due(now),
                // The publisher was dropped: what is held stays listed in the inbox.
                Err(RecvTimeoutError::Disconnected) => return,
            };
            if let Some(delivery) = delivery {
                self.deliver(&delivery);
            }
        }
    }

    /// Publishes one delivery, once: a failure is logged and the push dropped.
    fn deliver(&self, delivery: &Delivery<Announcement>) {
        let Some(message) = compose_message(&self.config, delivery.items(), &*self.links) else {
            return;
        };
        match self.publish(&message) {
            Ok(()) => tracing::debug!(
                "pushed {} request(s) to ntfy at {}",
                delivery.items().len(),
                self.server
            ),
            Err(error) => tracing::warn!(
                "no ntfy push for {} request(s) (they are still in the inbox): {error}",
                delivery.items().len()
            ),
        }
    }

    fn publish(&self, message: &Value) -> Result<(), NtfyError> {
        let server = self.server.to_string();
        let mut request = self.agent.post(server.as_str());
        if let Some(token) = &self.config.token {
            request = request.header("Authorization", format!("Bearer {token}"));
        }
        let mut response = request
            .send_json(message)
            .map_err(|source| NtfyError::Unreachable {
                server: server.clone(),
                source: Box::new(source),
            })?;
        let status = response.status();
        if status.is_success() {
            return Ok(());
        }
        // ntfy explains a refusal as JSON: {"code": 40101, "http": 401, "error": "..."}.
        let detail = response
            .body_mut()
            .with_config()
            .limit(4096)
            .read_to_string()
            .ok()
            .and_then(|body| serde_json::from_str::<Value>(&body).ok())
            .and_then(|body| body.get("error")?.as_str().map(str::to_owned))
            .map(|error| format!(": {}", cut_to_bytes(one_line(&error).into_owned(), 200)))
            .unwrap_or_default();
        Err(NtfyError::Refused {
            server,
            status: status.as_u16(),
            detail,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::{BufRead, BufReader, Read, Write};
    use std::net::{TcpListener, TcpStream};
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::Mutex;

    /// A request as the engine announces it: `json` is the request file.
    fn announced(id: &str, json: Value) -> Announcement {
        let request = inbox_protocol::parse_request(json.to_string().as_bytes(), Some(id))
            .unwrap_or_else(|problems| panic!("{json}: {problems:?}"));
        Announcement::pending(id, request, Utc::now())
    }

    /// A one-question confirm titled `title`, asking `question`, from planu's run r-1.
    fn confirm(title: &str, question: &str) -> Value {
        json!({"title": title, "source": {"app": "planu", "run": "r-1"},
               "questions": [{"id": "go", "type": "confirm", "question": question}]})
    }

    fn config(titles_only: bool) -> NtfyConfig {
        NtfyConfig::parse("https://ntfy.example/inbox-topic", None, titles_only).unwrap()
    }

    /// One call to [`Links::one_time_url`].
    #[derive(Debug, Clone, PartialEq)]
    struct Minted {
        id: String,
        version: String,
        answers: Map<String, Value>,
        label: String,
        expires_at: Option<DateTime<Utc>>,
    }

    /// Links into a made-up page; one-time URLs numbered as they are made.
    #[derive(Default)]
    struct FakeLinks {
        minted: Mutex<Vec<Minted>>,
        count: AtomicUsize,
        /// Makes no one-time URL after this many.
        limit: Option<usize>,
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

    fn actions(message: &Value) -> &Vec<Value> {
        message["actions"].as_array().expect("actions")
    }

    fn http_actions(message: &Value) -> Vec<&Value> {
        actions(message)
            .iter()
            .filter(|action| action["action"] == "http")
            .collect()
    }

    /// Checks `message` against ntfy's documented "publish as JSON" format: only its fields,
    /// `topic` required, `priority` 1 to 5, at most three actions, each with the fields its
    /// type takes.
    fn assert_ntfy_publish_format(message: &Value) {
        let message = message.as_object().expect("a JSON object");
        let documented = [
            "topic", "message", "title", "tags", "priority", "actions", "click", "attach",
            "markdown", "icon", "filename", "delay", "email", "call",
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
        let actions = message["actions"].as_array().expect("actions");
        assert!(!actions.is_empty() && actions.len() <= MAX_ACTIONS);
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

    #[test]
    fn a_topic_url_splits_into_server_and_topic() {
        let cases = [
            (
                "https://ntfy.sh/my-secret_topic1",
                "https://ntfy.sh/",
                "my-secret_topic1",
            ),
            (
                "http://127.0.0.1:8080/inbox",
                "http://127.0.0.1:8080/",
                "inbox",
            ),
            (
                "  https://example.com/ntfy/alerts/ ",
                "https://example.com/ntfy/",
                "alerts",
            ),
        ];
        for (url, server, topic) in cases {
            let config = NtfyConfig::parse(url, None, false).unwrap();
            assert_eq!(config.server_url().as_str(), server, "{url}");
            assert_eq!(config.topic(), topic, "{url}");
        }
    }

    #[test]
    fn a_bad_topic_url_or_token_is_refused_naming_the_problem() {
        let long = format!("https://ntfy.sh/{}", "a".repeat(65));
        let cases = [
            ("ntfy.sh/topic", "is not a URL"),
            ("ftp://ntfy.sh/topic", "http:// or https://, not ftp:"),
            ("https://ntfy.sh/", "names no topic"),
            ("https://ntfy.sh", "names no topic"),
            ("https://ntfy.sh/my%20topic", "1 to 64 letters"),
            ("https://ntfy.sh/top.ic", "1 to 64 letters"),
            (long.as_str(), "1 to 64 letters"),
            ("https://phil:secret@ntfy.sh/topic", "user name or password"),
            ("https://ntfy.sh/topic?auth=x", "query"),
            ("https://ntfy.sh/topic#x", "fragment"),
        ];
        for (url, problem) in cases {
            let error = NtfyConfig::parse(url, None, false).unwrap_err().to_string();
            assert!(error.contains(problem), "{url}: {error}");
        }
        // Exactly 64 characters is ntfy's limit, and allowed.
        let at_limit = format!("https://ntfy.sh/{}", "a".repeat(64));
        assert!(NtfyConfig::parse(&at_limit, None, false).is_ok());

        let token = |token: &str| NtfyConfig::parse("https://ntfy.sh/t", Some(token.into()), false);
        assert_eq!(token("  ").unwrap().token, None);
        assert_eq!(token(" tk_abc ").unwrap().token.as_deref(), Some("tk_abc"));
        for bad in ["s3cret abc", "s3cret\r\nX-Evil: 1", "s3cré"] {
            let error = token(bad).unwrap_err().to_string();
            assert!(error.contains("printable ASCII"), "{bad:?}: {error}");
            assert!(!error.contains("s3cr"), "the token leaked: {error}");
        }
        // Nor does the configuration show it.
        let debug = format!("{:?}", token("tk_secret").unwrap());
        assert!(
            !debug.contains("tk_secret") && debug.contains("<hidden>"),
            "{debug}"
        );
    }

    #[test]
    fn a_confirm_offers_yes_and_no_through_one_time_urls_beside_open() {
        let asked = announced(
            "r1",
            with_timeout(
                confirm("Deploy build 7?", "Deploy build 7 to staging?"),
                600,
            ),
        );
        let links = FakeLinks::default();
        let message = compose_message(&config(false), std::slice::from_ref(&asked), &links)
            .expect("a message");
        assert_eq!(
            message,
            json!({
                "topic": "inbox-topic",
                "title": "Deploy build 7?",
                "message": "planu / r-1\nDeploy build 7 to staging?\n• Yes\n• No",
                "priority": 3,
                "tags": ["question"],
                "click": "https://inbox.test/#/request/r1",
                "actions": [
                    {"action": "view", "label": "Open",
                     "url": "https://inbox.test/#/request/r1", "clear": false},
                    {"action": "http", "label": "Yes",
                     "url": "https://inbox.test/api/act/token-0", "method": "POST", "clear": true},
                    {"action": "http", "label": "No",
                     "url": "https://inbox.test/api/act/token-1", "method": "POST", "clear": true},
                ],
            })
        );
        assert_ntfy_publish_format(&message);
        // Each button's URL answers that button's answer to the very version shown, and
        // lives as long as the request does.
        let request = asked.request.as_ref().unwrap();
        let expires_at = request.deadline(asked.summary.placed_at);
        assert!(expires_at.is_some());
        let minted = links.minted.lock().unwrap().clone();
        let expected: Vec<Minted> = [("Yes", true), ("No", false)]
            .into_iter()
            .map(|(label, value)| Minted {
                id: "r1".into(),
                version: request.sha256.clone(),
                answers: Map::from_iter([("go".to_owned(), json!(value))]),
                label: label.into(),
                expires_at,
            })
            .collect();
        assert_eq!(minted, expected);
    }

    fn with_timeout(mut request: Value, seconds: u64) -> Value {
        request["timeout_seconds"] = json!(seconds);
        request
    }

    #[test]
    fn a_text_request_only_opens_the_page() {
        let asked = announced(
            "r2",
            json!({"title": "Release notes", "source": {"app": "planu"},
                   "questions": [{"id": "notes", "type": "free_text",
                                  "question": "What goes into the notes?"}]}),
        );
        let links = FakeLinks::default();
        let message = compose_message(&config(false), &[asked], &links).unwrap();
        assert_ntfy_publish_format(&message);
        assert_eq!(message["title"], "Release notes");
        // The desktop's words, without its "click to answer in the window".
        assert_eq!(message["message"], "planu\nWhat goes into the notes?");
        assert_eq!(
            actions(&message),
            &vec![json!({"action": "view", "label": "Open",
                         "url": "https://inbox.test/#/request/r2", "clear": false})]
        );
        assert!(links.minted.lock().unwrap().is_empty());
    }

    #[test]
    fn priorities_map_to_ntfys_levels_and_silent_requests_are_not_pushed() {
        let at = |priority: &str, loudness: Loudness| {
            let mut request = confirm("T", "Go?");
            request["priority"] = json!(priority);
            let mut asked = announced("r", request);
            asked.loudness = loudness;
            compose_message(&config(false), &[asked], &FakeLinks::default())
        };
        let cases = [
            ("low", Loudness::Normal, 2, json!(["question"]), 2),
            ("normal", Loudness::Normal, 3, json!(["question"]), 2),
            // High and critical are answered where the whole request can be read.
            (
                "high",
                Loudness::Normal,
                4,
                json!(["question", "warning"]),
                0,
            ),
            (
                "critical",
                Loudness::Normal,
                5,
                json!(["question", "rotating_light"]),
                0,
            ),
            // The policy may make any request critical.
            (
                "normal",
                Loudness::Critical,
                5,
                json!(["question", "rotating_light"]),
                2,
            ),
        ];
        for (priority, loudness, level, tags, buttons) in cases {
            let message = at(priority, loudness).unwrap();
            assert_ntfy_publish_format(&message);
            assert_eq!(message["priority"], level, "{priority} {loudness:?}");
            assert_eq!(message["tags"], tags, "{priority} {loudness:?}");
            assert_eq!(
                http_actions(&message).len(),
                buttons,
                "{priority} {loudness:?}"
            );
        }
        assert_eq!(at("critical", Loudness::Silent), None);
        assert_eq!(
            compose_message(&config(false), &[], &FakeLinks::default()),
            None
        );
    }

    #[test]
    fn titles_only_sends_neither_source_nor_question_nor_labels() {
        let private = [
            announced(
                "a",
                json!({"title": "Pick a target", "source": {"app": "secret-app", "run": "run-42",
                        "project": "hush-project", "host": "db-host"},
                       "questions": [{"id": "env", "type": "single_choice",
                                      "question": "Drop table customers?",
                                      "choices": [{"id": "s", "label": "staging-db"},
                                                  {"id": "p", "label": "prod-db"}]}]}),
            ),
            // No title of its own: the list shows its question, the push must not.
            announced(
                "b",
                json!({"source": {"app": "secret-app"},
                       "questions": [{"id": "go", "type": "confirm",
                                      "question": "Rotate the root password?"}]}),
            ),
        ];
        let secrets = [
            "secret-app",
            "run-42",
            "hush-project",
            "db-host",
            "Drop table",
            "staging-db",
            "prod-db",
            "Rotate",
        ];
        let links = FakeLinks::default();
        let config = config(true);
        let pushes = [
            compose_message(&config, &private[..1], &links).unwrap(),
            compose_message(&config, &private[1..], &links).unwrap(),
            compose_message(&config, &private, &links).unwrap(),
        ];
        for message in &pushes {
            assert_ntfy_publish_format(message);
            let text = message.to_string();
            for secret in secrets {
                assert!(!text.contains(secret), "{secret} in {text}");
            }
            // Nothing to answer from a push that does not show the question.
            assert!(http_actions(message).is_empty(), "{text}");
        }
        assert_eq!(pushes[0]["title"], "Pick a target");
        assert_eq!(pushes[0]["message"], TITLES_ONLY_MESSAGE);
        assert_eq!(pushes[1]["title"], UNTITLED);
        assert_eq!(pushes[2]["title"], "2 new requests need an answer");
        assert_eq!(pushes[2]["message"], TITLES_ONLY_SUMMARY);
        assert!(links.minted.lock().unwrap().is_empty());
    }

    #[test]
    fn a_burst_gets_one_summary_that_opens_the_page() {
        let mut burst: Vec<Announcement> = (1..=4)
            .map(|i| announced(&format!("r{i}"), confirm(&format!("Request {i}"), "Go?")))
            .collect();
        burst[2].loudness = Loudness::Critical;
        // A silent one is left out of the count.
        burst[3].loudness = Loudness::Silent;
        let links = FakeLinks::default();
        let message = compose_message(&config(false), &burst, &links).unwrap();
        assert_ntfy_publish_format(&message);
        assert_eq!(
            message,
            json!({
                "topic": "inbox-topic",
                "title": "3 new requests need an answer",
                "message": "• Request 1\n• Request 2\n• Request 3",
                "priority": 5,
                "tags": ["inbox_tray", "rotating_light"],
                "click": "https://inbox.test/",
                "actions": [{"action": "view", "label": "Open",
                             "url": "https://inbox.test/", "clear": false}],
            })
        );
        assert!(links.minted.lock().unwrap().is_empty());
        // With only one left to tell, it is that request's own push.
        let message = compose_message(&config(false), &burst[2..], &links).unwrap();
        assert_eq!(message["title"], "Request 3");
    }

    #[test]
    fn a_choice_gets_buttons_only_when_all_its_options_fit_beside_open() {
        let choice = |labels: &[&str]| {
            let choices: Vec<Value> = labels
                .iter()
                .map(|label| json!({"id": label.to_lowercase(), "label": label}))
                .collect();
            announced(
                "c",
                json!({"title": "Where?", "questions": [{"id": "env", "type": "single_choice",
                        "question": "Deploy where?", "choices": choices}]}),
            )
        };
        let links = FakeLinks::default();
        let two = compose_message(&config(false), &[choice(&["Staging", "Prod"])], &links).unwrap();
        assert_ntfy_publish_format(&two);
        let labels: Vec<&Value> = http_actions(&two).iter().map(|a| &a["label"]).collect();
        assert_eq!(labels, [&json!("Staging"), &json!("Prod")]);
        assert_eq!(two["message"], "Deploy where?\n• Staging\n• Prod");
        assert_eq!(
            links.minted.lock().unwrap()[1].answers,
            Map::from_iter([("env".to_owned(), json!("prod"))])
        );

        // Three options and Open make four: no subset of the options is offered.
        let links = FakeLinks::default();
        let three = compose_message(
            &config(false),
            &[choice(&["Dev", "Staging", "Prod"])],
            &links,
        )
        .unwrap();
        assert_ntfy_publish_format(&three);
        assert!(http_actions(&three).is_empty());
        assert_eq!(three["message"], "Deploy where?");
        assert!(links.minted.lock().unwrap().is_empty());
    }

    #[test]
    fn without_every_one_time_url_there_are_no_answer_buttons() {
        let asked = announced("r1", confirm("Deploy?", "Deploy build 7?"));
        // Yes could be made, No could not.
        let links = FakeLinks {
            limit: Some(1),
            ..FakeLinks::default()
        };
        let message = compose_message(&config(false), &[asked], &links).unwrap();
        assert!(http_actions(&message).is_empty());
        // And the message lists no answers it cannot give.
        assert_eq!(message["message"], "planu / r-1\nDeploy build 7?");
    }

    #[test]
    fn a_reminder_says_it_is_one() {
        let mut asked = announced("r1", confirm("Deploy?", "Deploy build 7?"));
        asked.escalation = Some(1);
        let message = compose_message(&config(false), &[asked.clone()], &FakeLinks::default());
        assert_eq!(message.unwrap()["title"], "Still waiting: Deploy?");
        let message = compose_message(&config(true), &[asked], &FakeLinks::default());
        assert_eq!(message.unwrap()["title"], "Still waiting: Deploy?");
    }

    #[test]
    fn an_overlong_message_is_cut_to_what_ntfy_shows_as_text() {
        let mut asked = announced("r1", confirm("Deploy?", "Deploy build 7?"));
        // Stored before the length rules, or escaped: hidden characters grow eightfold.
        let hidden = "\u{200b}".repeat(1000);
        asked.summary.source.app = Some(hidden.clone());
        asked.summary.source.run = Some(hidden);
        let message = compose_message(&config(false), &[asked], &FakeLinks::default()).unwrap();
        let text = message["message"].as_str().unwrap();
        assert!(text.len() <= MAX_MESSAGE_BYTES, "{}", text.len());
        assert!(text.ends_with('…'));
        assert!(text.starts_with("\\u{200b}"), "shown escaped, not raw");
        // Cut, so nothing to answer from it.
        assert!(http_actions(&message).is_empty());
        assert_eq!(cut_to_bytes("é".repeat(10), 8), "éé…");
        assert_eq!(cut_to_bytes("short".into(), 8), "short");
    }

    /// One HTTP request as the stand-in server received it.
    #[derive(Debug)]
    struct Received {
        request_line: String,
        /// Names in lower case.
        headers: Vec<(String, String)>,
        body: Value,
    }

    impl Received {
        fn header(&self, name: &str) -> Option<&str> {
            self.headers
                .iter()
                .find(|(n, _)| n == name)
                .map(|(_, value)| value.as_str())
        }
    }

    /// Reads one HTTP/1.1 request with a `Content-Length` body.
    fn read_request(stream: &TcpStream) -> Received {
        stream
            .set_read_timeout(Some(Duration::from_secs(10)))
            .unwrap();
        let mut reader = BufReader::new(stream);
        let mut line = String::new();
        reader.read_line(&mut line).unwrap();
        let request_line = line.trim_end().to_owned();
        let mut headers = Vec::new();
        loop {
            let mut line = String::new();
            reader.read_line(&mut line).unwrap();
            let line = line.trim_end();
            if line.is_empty() {
                break;
            }
            let (name, value) = line.split_once(':').expect("a header");
            headers.push((name.trim().to_lowercase(), value.trim().to_owned()));
        }
        let length: usize = headers
            .iter()
            .find(|(name, _)| name == "content-length")
            .expect("a Content-Length")
            .1
            .parse()
            .unwrap();
        let mut body = vec![0; length];
        reader.read_exact(&mut body).unwrap();
        Received {
            request_line,
            headers,
            body: serde_json::from_slice(&body).expect("a JSON body"),
        }
    }

    fn reply(mut stream: &TcpStream, status: &str, body: &str) {
        let response = format!(
            "HTTP/1.1 {status}\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\
             Connection: close\r\n\r\n{body}",
            body.len()
        );
        stream.write_all(response.as_bytes()).unwrap();
    }

    /// A stand-in ntfy server on a free local port: answers each request it receives with
    /// the next of `statuses` and hands it over.
    fn ntfy_server(statuses: Vec<&'static str>) -> (u16, Receiver<Received>) {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let (tx, rx) = crossbeam_channel::unbounded();
        std::thread::spawn(move || {
            for status in statuses {
                let Ok((stream, _)) = listener.accept() else {
                    return;
                };
                let received = read_request(&stream);
                reply(
                    &stream,
                    status,
                    r#"{"code":50001,"http":500,"error":"test failure"}"#,
                );
                if tx.send(received).is_err() {
                    return;
                }
            }
        });
        (port, rx)
    }

    #[test]
    fn the_publisher_posts_ntfys_json_to_the_server_root_with_the_token() {
        let (port, received) = ntfy_server(vec!["200 OK"]);
        let config = NtfyConfig::parse(
            &format!("http://127.0.0.1:{port}/inbox-test"),
            Some("tk_test".into()),
            false,
        )
        .unwrap();
        let publisher = NtfyPublisher::start(config, Arc::new(FakeLinks::default())).unwrap();
        publisher.announce(vec![announced(
            "r1",
            confirm("Deploy build 7?", "Deploy build 7 to staging?"),
        )]);
        let got = received
            .recv_timeout(Duration::from_secs(10))
            .expect("a push");
        assert_eq!(got.request_line, "POST / HTTP/1.1");
        assert_eq!(got.header("authorization"), Some("Bearer tk_test"));
        assert!(got
            .header("content-type")
            .is_some_and(|t| t.starts_with("application/json")));
        assert_ntfy_publish_format(&got.body);
        assert_eq!(got.body["topic"], "inbox-test");
        assert_eq!(got.body["title"], "Deploy build 7?");
        assert_eq!(http_actions(&got.body).len(), 2);
    }

    #[test]
    fn a_server_behind_a_path_prefix_gets_it_and_no_token_means_no_authorization() {
        let (port, received) = ntfy_server(vec!["200 OK"]);
        let config =
            NtfyConfig::parse(&format!("http://127.0.0.1:{port}/ntfy/inbox"), None, true).unwrap();
        let publisher = NtfyPublisher::start(config, Arc::new(FakeLinks::default())).unwrap();
        publisher.announce(vec![announced("r1", confirm("Deploy?", "Go?"))]);
        let got = received
            .recv_timeout(Duration::from_secs(10))
            .expect("a push");
        assert_eq!(got.request_line, "POST /ntfy/ HTTP/1.1");
        assert_eq!(got.header("authorization"), None);
        assert_eq!(got.body["topic"], "inbox");
        assert_eq!(got.body["message"], TITLES_ONLY_MESSAGE);
    }

    #[test]
    fn a_failed_push_is_dropped_not_retried() {
        let (port, received) = ntfy_server(vec!["500 Internal Server Error", "200 OK", "200 OK"]);
        let config =
            NtfyConfig::parse(&format!("http://127.0.0.1:{port}/inbox"), None, false).unwrap();
        let publisher = NtfyPublisher::start(config, Arc::new(FakeLinks::default())).unwrap();
        publisher.announce(vec![announced("a", confirm("First", "Go?"))]);
        let first = received.recv_timeout(Duration::from_secs(10)).unwrap();
        assert_eq!(first.body["title"], "First");
        // Past the quiet window, so the next one goes out on its own, at once.
        std::thread::sleep(QUIET_WINDOW + Duration::from_millis(100));
        publisher.announce(vec![announced("b", confirm("Second", "Go?"))]);
        let second = received.recv_timeout(Duration::from_secs(10)).unwrap();
        assert_eq!(second.body["title"], "Second");
        // And nothing comes back for the first.
        assert!(received
            .recv_timeout(QUIET_WINDOW * 3 + Duration::from_millis(500))
            .is_err());
    }

    #[test]
    fn a_failure_is_reported_with_ntfys_reason_and_without_the_topic() {
        let (port, received) = ntfy_server(vec!["401 Unauthorized"]);
        let config = NtfyConfig::parse(
            &format!("http://127.0.0.1:{port}/secret-topic"),
            Some("tk_wrong".into()),
            false,
        )
        .unwrap();
        let publisher = PublisherThread {
            server: config.server_url(),
            config,
            links: Arc::new(FakeLinks::default()),
            agent: publishing_agent(),
        };
        let message = json!({"topic": "secret-topic", "message": "hi"});
        let error = publisher.publish(&message).unwrap_err().to_string();
        assert_eq!(
            error,
            format!(
                "the ntfy server http://127.0.0.1:{port}/ refused the message: \
                 HTTP 401: test failure"
            )
        );
        assert!(received.recv_timeout(Duration::from_secs(10)).is_ok());

        // Nobody listening any more: unreachable, said at once.
        let closed = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = closed.local_addr().unwrap().port();
        drop(closed);
        let config = NtfyConfig::parse(
            &format!("http://127.0.0.1:{port}/secret-topic"),
            None,
            false,
        )
        .unwrap();
        let publisher = PublisherThread {
            server: config.server_url(),
            config,
            ..publisher
        };
        let error = publisher.publish(&message).unwrap_err().to_string();
        assert!(
            error.starts_with(&format!(
                "cannot reach the ntfy server http://127.0.0.1:{port}/: "
            )),
            "{error}"
        );
        assert!(!error.contains("secret-topic"), "{error}");
    }

    #[test]
    fn announcing_never_waits_for_a_stuck_server() {
        // Takes connections and never answers them.
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let (held_tx, held) = crossbeam_channel::unbounded();
        std::thread::spawn(move || {
            while let Ok((stream, _)) = listener.accept() {
                if held_tx.send(stream).is_err() {
                    return;
                }
            }
        });
        let config =
            NtfyConfig::parse(&format!("http://127.0.0.1:{port}/inbox"), None, false).unwrap();
        let publisher = NtfyPublisher::start(config, Arc::new(FakeLinks::default())).unwrap();
        let batches: Vec<Vec<Announcement>> = (0..QUEUE_CAPACITY + 500)
            .map(|i| vec![announced(&format!("r{i}"), confirm("T", "Go?"))])
            .collect();
        let started = Instant::now();
        for batch in batches {
            publisher.announce(batch);
        }
        // The publisher is stuck on its first push (up to REQUEST_TIMEOUT); the engine's
        // side filled the queue and dropped the rest without waiting.
        assert!(
            started.elapsed() < Duration::from_secs(2),
            "{:?}",
            started.elapsed()
        );
        held.recv_timeout(Duration::from_secs(10))
            .expect("the publisher connected");
    }
}
