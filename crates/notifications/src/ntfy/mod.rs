//! Pushes to the operator's phone through [ntfy](https://ntfy.sh): each new request, or one
//! summary for a burst, published as JSON to the operator's topic, with a link that opens
//! the request in the served page and, where the engine's rule allows, answer buttons that
//! answer through one-time URLs.
//!
//! [`NtfyPublisher`] is a notifier like the desktop's: it runs on the crate's one
//! coalescing queue ([`crate::queue`]), so `announce` never waits (a full queue drops that
//! push with a warning, never a request: the inbox still lists it) and a burst is its first
//! push plus one summary. Its thread words each delivery ([`message`]) and POSTs it. A push
//! that fails is logged and dropped, never retried: the request stays in the inbox, and a
//! phone told twice, late, helps nobody. Neither a slow nor a missing server ever stalls
//! the engine.
//!
//! A push is taken back once its requests no longer wait for an answer (settled here or
//! elsewhere, withdrawn, expired, snoozed: the engine's `withdraw`): every push carries an
//! ntfy sequence id made from its request's id, and the publisher publishes again under
//! that id a message saying who settled it or why it went ("Answered by ann", "Withdrawn:
//! its asker stopped waiting"; a summary: "No longer waiting for an answer"), without
//! actions, which replaces the push on the phone. This is ntfy's "Updating notifications" (ntfy 2.16 and later, Android app
//! 1.22 and later: <https://docs.ntfy.sh/publish/#updating-deleting-notifications>; the
//! JSON field `sequence_id`). A server before 2.16 ignores the field it does not know and
//! delivers the replacement as a second push, at the lowest priority (silent), under the
//! first; the first keeps its buttons, whose one-time links then find the request settled
//! and change nothing. A summary is taken back once all of its requests are gone.
//!
//! - [`config`]: the topic URL and token, checked ([`NtfyConfig`], [`NtfyError`]).
//! - [`message`]: what a push says, titles only or not, with answer buttons as one-time URLs
//!   the server makes ([`Links`]).

pub mod config;
#[cfg(test)]
mod fakes;
pub mod message;

use std::collections::VecDeque;
use std::sync::Arc;
use std::time::Duration;

use inbox_engine::notifier::{Announcement, Delivery, Gone, Notifier};
use inbox_protocol::text::one_line;
use serde_json::Value;
use url::Url;

use crate::queue::{CoalescingQueue, Deliver};

pub use config::{NtfyConfig, NtfyError, MAX_TOPIC_CHARS};
pub use message::{
    compose_message, sequence_id, taken_back, Links, MAX_ACTIONS, MAX_MESSAGE_BYTES,
    MAX_TITLE_BYTES, NO_LONGER_WAITING, TITLES_ONLY_MESSAGE, TITLES_ONLY_SUMMARY, UNTITLED,
};

/// Published pushes remembered for taking back, at most: the oldest is forgotten first (it
/// then stays on the phone, its links harmless). Requests leave the pending list within
/// their timeout, so more than this many at once means a topic nobody reads.
pub const MAX_REMEMBERED_PUSHES: usize = 1024;

/// How long connecting to the ntfy server may take (name lookup aside).
pub const CONNECT_TIMEOUT: Duration = Duration::from_secs(5);

/// How long one publish may take in all: a server that hangs costs the publisher this much,
/// never the engine.
pub const REQUEST_TIMEOUT: Duration = Duration::from_secs(10);

/// Pushes new requests to an ntfy topic: hand it to the engine (alone, or beside the
/// desktop notifier). Dropping it ends its thread (after the push under way, if any).
pub struct NtfyPublisher {
    queue: CoalescingQueue,
}

impl NtfyPublisher {
    /// Checks the settings and starts the publisher's thread. Nothing is sent until a
    /// request is announced.
    pub fn start(config: NtfyConfig, links: Arc<dyn Links>) -> Result<NtfyPublisher, NtfyError> {
        // The fields are public: check what `parse` would have.
        config.check()?;
        let publisher = Publisher {
            server: config.server_url(),
            config,
            links,
            agent: publishing_agent(),
            published: VecDeque::new(),
        };
        let queue = CoalescingQueue::start("ntfy", "push", publisher).map_err(NtfyError::Spawn)?;
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
        self.queue.announce(fresh);
    }

    /// A request settled before its push went out (held in a burst's summary) is not
    /// pushed; one already published is replaced by who settled it or why it went (see the
    /// module's documentation), a summary once all of its requests are gone.
    fn withdraw(&self, gone: Vec<Gone>) {
        self.queue.withdraw(gone);
    }
}

/// What the publisher's thread works with.
struct Publisher {
    config: NtfyConfig,
    server: Url,
    links: Arc<dyn Links>,
    agent: ureq::Agent,
    /// Pushes on the phone whose requests may still be pending, oldest first.
    published: VecDeque<Published>,
}

/// One push as published, to replace it later.
struct Published {
    sequence_id: String,
    title: String,
    click: String,
    /// Its requests that are still pending.
    pending: Vec<String>,
    /// Whether it was one request's own push (not a summary): its replacement then says
    /// who settled that request, or why it went.
    own: bool,
}

impl Deliver for Publisher {
    /// Publishes one delivery, once: a failure is logged and the push dropped.
    fn deliver(&mut self, delivery: Delivery<Announcement>) {
        let Some(message) = compose_message(&self.config, delivery.items(), &*self.links) else {
            return;
        };
        match self.publish(&message) {
            Ok(()) => {
                tracing::debug!(
                    "pushed {} request(s) to ntfy at {}",
                    delivery.items().len(),
                    self.server
                );
                self.remember(&message, delivery.items());
            }
            Err(error) => tracing::warn!(
                "no ntfy push for {} request(s) (they are still in the inbox): {error}",
                delivery.items().len()
            ),
        }
    }

    /// Replaces each push all of whose requests are gone.
    fn withdraw(&mut self, gone: &[Gone]) {
        let mut done = Vec::new();
        self.published.retain_mut(|push| {
            let mut last = None;
            push.pending
                .retain(|id| match gone.iter().find(|g| &g.id == id) {
                    Some(left) => {
                        last = Some(left);
                        false
                    }
                    None => true,
                });
            let all_gone = push.pending.is_empty();
            if let (true, Some(left)) = (all_gone, last) {
                let says = if push.own {
                    left.why.line()
                } else {
                    NO_LONGER_WAITING.to_owned()
                };
                done.push(taken_back(
                    &self.config,
                    &push.sequence_id,
                    &push.title,
                    &push.click,
                    &says,
                ));
            }
            !all_gone
        });
        for message in done {
            // Once, like any push: a phone that keeps a stale push is told by its links.
            if let Err(error) = self.publish(&message) {
                tracing::warn!("cannot take back an ntfy push: {error}");
            }
        }
    }
}

impl Publisher {
    /// Keeps what is needed to replace `message` once `items` are gone.
    fn remember(&mut self, message: &Value, items: &[Announcement]) {
        let field = |name: &str| message[name].as_str().unwrap_or_default().to_owned();
        // A reminder replaces its first push on the phone: one entry per sequence id.
        let sequence_id = field("sequence_id");
        self.published
            .retain(|push| push.sequence_id != sequence_id);
        self.published.push_back(Published {
            sequence_id,
            title: field("title"),
            click: field("click"),
            pending: items.iter().map(|a| a.summary.id.clone()).collect(),
            own: items.len() == 1,
        });
        while self.published.len() > MAX_REMEMBERED_PUSHES {
            self.published.pop_front();
        }
    }
}

impl Publisher {
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
            .map(|error| {
                format!(
                    ": {}",
                    message::cut_to_bytes(one_line(&error).into_owned(), 200)
                )
            })
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
    use crate::ntfy::fakes::{assert_ntfy_publish_format, http_actions, FakeLinks};
    use crate::testing::{announced, confirm, flood};
    use crossbeam_channel::Receiver;
    use inbox_engine::notifier::{Departure, QUIET_WINDOW};
    use inbox_protocol::OutcomeStatus;
    use serde_json::json;
    use std::io::{BufRead, BufReader, Read, Write};
    use std::net::{TcpListener, TcpStream};

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

    /// The reported gap: a push stayed on the phone, buttons and all, after its request was
    /// settled elsewhere. Now it is replaced under its sequence id, once, and a summary
    /// once all of its requests are gone.
    #[test]
    fn a_push_is_replaced_under_its_sequence_id_once_its_requests_are_gone() {
        let (port, received) = ntfy_server(vec!["200 OK"; 4]);
        let config =
            NtfyConfig::parse(&format!("http://127.0.0.1:{port}/inbox"), None, false).unwrap();
        let publisher = NtfyPublisher::start(config, Arc::new(FakeLinks::default())).unwrap();
        publisher.announce(vec![
            announced("a", confirm("Deploy build 7?", "Deploy?")),
            announced("b", confirm("Rotate keys?", "Rotate?")),
            announced("c", confirm("Drop the cache?", "Drop?")),
        ]);
        let wait = Duration::from_secs(10);
        let first = received.recv_timeout(wait).expect("a's push");
        let summary = received.recv_timeout(wait).expect("the summary");
        assert_eq!(first.body["sequence_id"], sequence_id("a"));
        assert_eq!(http_actions(&first.body).len(), 2);
        assert_eq!(summary.body["title"], "2 new requests need an answer");
        let summary_id = summary.body["sequence_id"].as_str().unwrap().to_owned();
        assert_ne!(summary_id, sequence_id("b"));

        // Gone elsewhere: a's push is replaced, saying who answered; the summary still
        // stands for c.
        let answered = |id: &str| {
            Gone::new(
                id,
                Departure::Settled {
                    status: OutcomeStatus::Answered,
                    answered_by: "operator:ann".into(),
                },
            )
        };
        publisher.withdraw(vec![answered("a"), answered("b"), answered("unknown")]);
        let back = received.recv_timeout(wait).expect("a's replacement");
        assert_eq!(back.request_line, "POST / HTTP/1.1");
        assert_ntfy_publish_format(&back.body);
        assert_eq!(back.body["sequence_id"], sequence_id("a"));
        assert_eq!(back.body["title"], "Deploy build 7?");
        assert_eq!(back.body["message"], "Answered by ann");
        assert_eq!(back.body["priority"], 1);
        assert!(back.body.get("actions").is_none(), "{}", back.body);
        assert!(received.recv_timeout(Duration::from_millis(500)).is_err());

        publisher.withdraw(vec![Gone::withdrawn("c")]);
        let back = received
            .recv_timeout(wait)
            .expect("the summary's replacement");
        assert_eq!(back.body["sequence_id"], summary_id.as_str());
        assert_eq!(back.body["title"], "2 new requests need an answer");
        assert_eq!(back.body["message"], NO_LONGER_WAITING);
        // Each once.
        publisher.withdraw(vec![answered("a"), Gone::withdrawn("c")]);
        assert!(received.recv_timeout(Duration::from_millis(500)).is_err());
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
        let publisher = Publisher {
            server: config.server_url(),
            config,
            links: Arc::new(FakeLinks::default()),
            agent: publishing_agent(),
            published: VecDeque::new(),
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
        let publisher = Publisher {
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
        let took = flood(&publisher);
        // The publisher is stuck on its first push (up to REQUEST_TIMEOUT); the engine's
        // side filled the queue and dropped the rest without waiting.
        assert!(took < Duration::from_secs(2), "{took:?}");
        held.recv_timeout(Duration::from_secs(10))
            .expect("the publisher connected");
    }
}
