//! What a push says: [`compose_message`] turns one delivery into ntfy's "publish as JSON"
//! message (title, message, priority, tags, a click and at most [`MAX_ACTIONS`] actions),
//! with answer buttons as one-time URLs that the server makes ([`Links`]).
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
//! A decision an agent asks for (`inbox_protocol::decision`) gets the same choices as its
//! bubble and the window, in the same order: its Allow once, Deny and the agent's rule, each
//! numbered as the window's keys. ntfy shows at most three actions, so when the answers take
//! all three the "Open" action is left out (tapping the push still opens the request: its
//! `click`); a decision with more options than that has no answer buttons at all (the
//! engine offers none), never some of them.
//!
//! Every push carries an ntfy sequence id made from its request's id ([`sequence_id`]), so
//! that the publisher can replace it once the request is no longer waiting (see
//! [`taken_back`]).
//!
//! With [`NtfyConfig::titles_only`] nothing but the request's own title leaves the machine:
//! no source, no question, no option labels, and so no answer buttons either (a press must
//! never answer a question the push did not show).
//!
//! [`offer`]: inbox_engine::notifier::offer

use std::borrow::Cow;

use chrono::{DateTime, Utc};
use inbox_engine::inbox_policy::Loudness;
use inbox_engine::notifier::{compose, Announcement, Notice};
use inbox_protocol::text::one_line;
use inbox_protocol::Priority;
use serde_json::{json, Map, Value};

use super::config::NtfyConfig;

/// Most actions ntfy shows on one message ("up to three user actions").
pub const MAX_ACTIONS: usize = 3;

/// Longest message, in bytes. ntfy's limit is 4,096 bytes: a longer message is turned into
/// an attachment, which a phone shows as a file to download, not as text. A message with
/// answer buttons is never cut (it is far shorter: the engine's offer caps it); one without
/// is cut with "…" (the page shows the request whole).
pub const MAX_MESSAGE_BYTES: usize = 4000;

/// Longest title, in bytes. A request's title is at most 200 characters, but hidden
/// characters are shown escaped and may make it several times longer; a phone shows one
/// line of it anyway.
pub const MAX_TITLE_BYTES: usize = 512;

/// The message of a push for one request under [`NtfyConfig::titles_only`].
pub const TITLES_ONLY_MESSAGE: &str = "A new request is waiting";

/// The message of a summary under [`NtfyConfig::titles_only`].
pub const TITLES_ONLY_SUMMARY: &str = "Open the inbox to read and answer them";

/// What a summary push says once none of its requests waits for an answer any more (one
/// request's own push says who settled it or why it went:
/// [`inbox_engine::notifier::Departure::line`]).
pub const NO_LONGER_WAITING: &str = "No longer waiting for an answer";

/// The title of a push under [`NtfyConfig::titles_only`] for a request without a title of
/// its own (its list title would be its first question, which must not leave the machine).
pub const UNTITLED: &str = "New request";

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

/// The ntfy sequence id of the push for the request `id` (or, for a summary, of its
/// requests' ids, one a line): `inbox-` and 40 hex digits of their SHA-256. Stable, so the
/// publisher can replace the push later (and a reminder replaces the first push); of the
/// characters ntfy takes in a sequence id (letters, digits, `-`, `_`), whatever the
/// request's id; and it tells the ntfy server nothing of the id.
pub fn sequence_id(key: &str) -> String {
    use sha2::{Digest, Sha256};
    let digest = Sha256::digest(key.as_bytes());
    let hex: String = digest.iter().map(|byte| format!("{byte:02x}")).collect();
    format!("inbox-{}", &hex[..40])
}

/// The message that replaces a push (ntfy's "updating notifications": the same
/// `sequence_id`, published again): its title as published, `says` (who settled it, or
/// [`NO_LONGER_WAITING`]), the lowest priority (silent on a phone) and no actions, so no
/// answer button stays on it. `click` still opens the request (or the list), where it is
/// shown as it ended.
pub fn taken_back(
    config: &NtfyConfig,
    sequence_id: &str,
    title: &str,
    click: &str,
    says: &str,
) -> Value {
    json!({
        "topic": config.topic(),
        "sequence_id": sequence_id,
        "title": title,
        "message": says,
        "priority": 1,
        "tags": ["heavy_check_mark"],
        "click": click,
    })
}

/// The push for one request.
fn one_request(
    config: &NtfyConfig,
    announcement: &Announcement,
    links: &dyn Links,
) -> Option<Value> {
    let open = links.open_url(&announcement.summary.id);
    let mut actions = Vec::new();
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
    // "Open" where there is room beside the answers; tapping the push opens it anyway.
    if actions.len() < MAX_ACTIONS {
        actions.insert(0, view_action("Open", &open));
    }
    let priority = ntfy_priority(announcement);
    Some(json!({
        "topic": config.topic(),
        "title": cut_to_bytes(title, MAX_TITLE_BYTES),
        "message": cut_to_bytes(message, MAX_MESSAGE_BYTES),
        "priority": priority,
        "tags": tags("question", priority),
        "click": open,
        "actions": actions,
        "sequence_id": sequence_id(&announcement.summary.id),
    }))
}

/// The bubble with answer buttons the engine words for `announcement`, and one `http`
/// action per offered answer; `None` when it has none, they are more than ntfy shows, its
/// message would have to be cut, or a one-time URL could not be made.
fn answer_buttons(announcement: &Announcement, links: &dyn Links) -> Option<(Notice, Vec<Value>)> {
    let notice = compose(std::slice::from_ref(announcement), true)?;
    let offer = notice.offer.as_ref()?;
    if offer.options.len() > MAX_ACTIONS || notice.body.len() > MAX_MESSAGE_BYTES {
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
        "sequence_id": summary_sequence_id(many.iter().map(|a| a.summary.id.as_str())),
    }))
}

/// The sequence id of a summary push for the requests `ids`.
pub fn summary_sequence_id<'a>(ids: impl IntoIterator<Item = &'a str>) -> String {
    let ids: Vec<&str> = ids.into_iter().collect();
    sequence_id(&format!("summary\n{}", ids.join("\n")))
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
pub(super) fn cut_to_bytes(text: String, max: usize) -> String {
    if text.len() <= max {
        return text;
    }
    let mut end = max.saturating_sub('…'.len_utf8());
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}…", &text[..end])
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ntfy::fakes::{
        actions, assert_ntfy_publish_format, http_actions, FakeLinks, Minted,
    };
    use crate::testing::{announced, confirm};

    fn config(titles_only: bool) -> NtfyConfig {
        NtfyConfig::parse("https://ntfy.example/inbox-topic", None, titles_only).unwrap()
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
                "sequence_id": sequence_id("r1"),
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
                "sequence_id": summary_sequence_id(["r1", "r2", "r3"]),
            })
        );
        assert!(links.minted.lock().unwrap().is_empty());
        // With only one left to tell, it is that request's own push.
        let message = compose_message(&config(false), &burst[2..], &links).unwrap();
        assert_eq!(message["title"], "Request 3");
    }

    #[test]
    fn a_choice_gets_a_button_for_every_option_and_open_only_where_there_is_room() {
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

        // Three options take the three actions ntfy shows: "Open" gives way (tapping the
        // push opens the request all the same), never one of the options.
        let links = FakeLinks::default();
        let three = compose_message(
            &config(false),
            &[choice(&["Dev", "Staging", "Prod"])],
            &links,
        )
        .unwrap();
        assert_ntfy_publish_format(&three);
        let labels: Vec<&Value> = actions(&three).iter().map(|a| &a["label"]).collect();
        assert_eq!(labels, [&json!("Dev"), &json!("Staging"), &json!("Prod")]);
        assert_eq!(three["click"], "https://inbox.test/#/request/c");
        assert_eq!(three["message"], "Deploy where?\n• Dev\n• Staging\n• Prod");
        assert_eq!(links.minted.lock().unwrap().len(), 3);
    }

    /// What `answer-inbox hook claude-code` places for a Bash call, with `more` options.
    fn decision(more: &[&str]) -> Announcement {
        let mut options = vec!["Allow once", "Deny"];
        options.extend_from_slice(more);
        announced(
            "d1",
            json!({"title": "Claude wants to run: npm test", "priority": "high",
                   "source": {"app": "claude-code", "run": "s-1", "tool": "Bash"},
                   "questions": [
                       {"id": "decision", "question": "Allow Claude to use Bash?",
                        "type": "choice", "options": options,
                        "description": "**Run a shell command**:\n\n```sh\nnpm test\n```\n"},
                       {"id": "reason", "question": "Why?", "type": "text", "required": false}]}),
        )
    }

    #[test]
    fn an_agents_decision_offers_the_windows_choices_in_its_order() {
        let links = FakeLinks::default();
        let message = compose_message(
            &config(false),
            &[decision(&["Allow this command for this session: npm test"])],
            &links,
        )
        .unwrap();
        assert_ntfy_publish_format(&message);
        let labels: Vec<&Value> = actions(&message).iter().map(|a| &a["label"]).collect();
        assert_eq!(
            labels,
            [
                &json!("1. Allow once"),
                &json!("2. Deny"),
                &json!("3. Allow this command for this session: npm test")
            ]
        );
        assert_eq!(
            message["message"],
            "claude-code / s-1 / Bash\nAllow Claude to use Bash?\nRun a shell command:\nnpm test\n\
             • 1. Allow once\n• 2. Deny\n• 3. Allow this command for this session: npm test"
        );
        let minted = links.minted.lock().unwrap().clone();
        let given: Vec<&Value> = minted.iter().map(|m| &m.answers["decision"]).collect();
        assert_eq!(
            given,
            [
                &json!("Allow once"),
                &json!("Deny"),
                &json!("Allow this command for this session: npm test")
            ]
        );
        // Four options are more than ntfy shows: none of them, and the page opens it.
        let links = FakeLinks::default();
        let four = compose_message(&config(false), &[decision(&["a", "b"])], &links).unwrap();
        assert!(http_actions(&four).is_empty());
        assert_eq!(actions(&four)[0]["label"], "Open");
        assert!(links.minted.lock().unwrap().is_empty());
    }

    #[test]
    fn a_push_has_a_stable_sequence_id_of_safe_characters() {
        let id = sequence_id("01J9Z/../weird id\n");
        assert_eq!(id, sequence_id("01J9Z/../weird id\n"));
        assert_ne!(id, sequence_id("01J9Z"));
        assert_eq!(id.len(), 46);
        assert!(id
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_'));
        let back = taken_back(
            &config(true),
            &id,
            "Deploy?",
            "https://inbox.test/",
            NO_LONGER_WAITING,
        );
        assert_ntfy_publish_format(&back);
        assert_eq!(back["message"], NO_LONGER_WAITING);
        assert_eq!(back["sequence_id"], id.as_str());
        assert!(back.get("actions").is_none());
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
}
