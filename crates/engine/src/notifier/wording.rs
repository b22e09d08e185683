//! What a bubble says, and whether it may carry answer buttons: [`compose`] words the
//! requests of one bubble, [`offer`] decides the answers its buttons may give (or why the
//! request must be answered in the window, [`NeedsWindow`]), within the `MAX_*` limits.
//!
//! A bubble says what its buttons do. Its summary is the request's title; its body names who
//! asks and shows the question, and a bubble with answer buttons lists, one per line, each
//! answer a button gives ("• Yes", "• No", or each choice's label), with nothing cut: when a
//! request cannot be shown that way (see [`offer`] for the rule and its limits), or is of
//! high or critical priority, its bubble has no answer buttons and clicking it opens the
//! window on the request. An agent's tool-call decision (high priority, its call in a
//! markdown description) has a rule of its own, in [`super::decision`]: its bubble shows the
//! call whole, as plain text, with every option as a numbered button, or opens the window.
//! Every button is bound to the version of the request the bubble
//! was worded from ([`Offer::version`], the file's SHA-256), so a press can never answer a
//! file that changed after it was shown. All request text goes through the one text policy
//! ([`inbox_protocol::text`]): hidden characters are shown escaped and one-line fields stay
//! one line. The body is plain text; the sender escapes it for daemons that read markup.

use std::borrow::{Borrow, Cow};

use inbox_protocol::decision::ToolDecision;
use inbox_protocol::text::one_line;
use inbox_protocol::{Priority, QuestionKind, Request};
use serde_json::{Map, Value};

use super::decision::decision_bubble;
use super::notice::{source_line, NeedsWindow, Notice, Offer, OfferedAnswer};
use super::notice::{MAX_BODY_CHARS, MAX_BUTTONS, MAX_LABEL_CHARS, MAX_SHOWN_QUESTION_CHARS};
use super::Announcement;

impl Announcement {
    /// The bubble's title: the request's, and for an escalation's reminder, saying so.
    pub(super) fn title(&self) -> String {
        let title = one_line(&self.summary.title);
        match self.escalation {
            Some(_) => format!("Still waiting: {title}"),
            None => title.into_owned(),
        }
    }
}

/// Turns the requests of one bubble into what it says. With `buttons` (the front end takes
/// presses: the desktop app), a bubble for one request offers its answers as buttons when
/// [`offer`] allows, and otherwise says why it must be answered in the window; without
/// (`watch`), it only tells.
pub fn compose<A: Borrow<Announcement>>(items: &[A], buttons: bool) -> Option<Notice> {
    match items {
        [] => None,
        [one] => {
            let one = one.borrow();
            Some(match buttons.then(|| with_buttons(one)) {
                Some(Ok(notice)) => notice,
                Some(Err(why)) => without_buttons(one, Some(why)),
                None => without_buttons(one, None),
            })
        }
        many => {
            let critical = many.iter().any(|a| a.borrow().is_critical());
            let mut body: Vec<String> = many
                .iter()
                .take(3)
                .map(|a| format!("• {}", one_line(&a.borrow().summary.title)))
                .collect();
            if many.len() > 3 {
                body.push(format!("and {} more", many.len() - 3));
            }
            Some(Notice {
                summary: format!("{} new requests need an answer", many.len()),
                body: body.join("\n"),
                critical,
                offer: None,
            })
        }
    }
}

/// The answers a bubble for `announcement` may offer as buttons, or why it may not.
///
/// The rule: one press must be a whole answer to a question the bubble shows whole. So the
/// request has normal or low priority, exactly one question, a confirm (Yes, No) or a choice
/// of at most [`MAX_BUTTONS`] options, nothing to read beyond the question and the labels
/// (no description on the question or an option, no confirmation text), a question of one
/// line, labels of at most [`MAX_LABEL_CHARS`] and a body of at most [`MAX_BODY_CHARS`]
/// characters as shown. An agent's tool-call decision follows its own rule instead (see
/// [`super::decision`]): not critical, its call and every option shown whole.
pub fn offer(announcement: &Announcement) -> Result<Offer, NeedsWindow> {
    with_buttons(announcement).map(|notice| notice.offer.expect("a bubble with buttons"))
}

fn with_buttons(announcement: &Announcement) -> Result<Notice, NeedsWindow> {
    let summary = &announcement.summary;
    let request: &Request = announcement.request.as_ref().ok_or(NeedsWindow::Unread)?;
    if !announcement.buttons {
        return Err(NeedsWindow::PolicySaysNo);
    }
    // An agent's tool-call decision has a rule of its own (see `decision`): its bubble shows
    // the call whole and every option, or opens the window.
    if let Some(decision) = ToolDecision::of(request) {
        return decision_bubble(announcement, request, decision);
    }
    if matches!(request.priority, Priority::High | Priority::Critical) {
        return Err(NeedsWindow::Priority(request.priority));
    }
    let [question] = request.questions.as_slice() else {
        return Err(NeedsWindow::SeveralQuestions);
    };
    if question.description.is_some()
        || request.confirm_title.is_some()
        || request.confirm_description.is_some()
    {
        return Err(NeedsWindow::DetailsToRead);
    }
    if question.question.contains(['\n', '\r']) {
        return Err(NeedsWindow::SeveralLines);
    }
    let answer = |value: Value| Map::from_iter([(question.id.clone(), value)]);
    let options: Vec<OfferedAnswer> = match question.kind {
        QuestionKind::Confirm => [("yes", "Yes", true), ("no", "No", false)]
            .into_iter()
            .map(|(key, label, value)| OfferedAnswer {
                key: key.into(),
                label: label.into(),
                answers: answer(Value::Bool(value)),
            })
            .collect(),
        QuestionKind::Choice => {
            if question.choices.len() > MAX_BUTTONS {
                return Err(NeedsWindow::TooManyOptions);
            }
            if question.choices.iter().any(|c| c.description.is_some()) {
                return Err(NeedsWindow::DetailsToRead);
            }
            question
                .choices
                .iter()
                .enumerate()
                .map(|(index, choice)| OfferedAnswer {
                    key: index.to_string(),
                    label: one_line(&choice.label).into_owned(),
                    answers: answer(Value::String(choice.id.clone())),
                })
                .collect()
        }
        QuestionKind::MultiChoice | QuestionKind::Text => return Err(NeedsWindow::NotOnePress),
    };
    if options
        .iter()
        .any(|o| o.label.chars().count() > MAX_LABEL_CHARS)
    {
        return Err(NeedsWindow::TooLong);
    }
    // Every line is one line of text (the policy escapes line breaks in the source and the
    // labels; the question has none): the options below cannot be forged by what is above.
    let mut lines: Vec<Cow<str>> = source_line(summary).into_iter().map(Cow::Owned).collect();
    lines.push(one_line(&question.question));
    lines.extend(options.iter().map(|o| Cow::Owned(format!("• {}", o.label))));
    let body = lines.join("\n");
    if body.chars().count() > MAX_BODY_CHARS {
        return Err(NeedsWindow::TooLong);
    }
    Ok(Notice {
        summary: announcement.title(),
        body,
        critical: announcement.is_critical(),
        offer: Some(Offer {
            id: summary.id.clone(),
            version: request.sha256.clone(),
            options,
        }),
    })
}

/// A bubble that only tells: who asks, the question (cut if long) or how many there are,
/// and, where presses are taken, why it must be answered in the window.
fn without_buttons(announcement: &Announcement, why: Option<NeedsWindow>) -> Notice {
    let summary = &announcement.summary;
    let mut lines: Vec<String> = source_line(summary).into_iter().collect();
    let question = match announcement
        .request
        .as_ref()
        .map(|r| r.questions.as_slice())
    {
        Some([only]) => Some(cut(&one_line(&only.question), MAX_SHOWN_QUESTION_CHARS)),
        _ => None,
    };
    lines.push(question.unwrap_or_else(|| match summary.question_count {
        1 => "1 question".to_owned(),
        n => format!("{n} questions"),
    }));
    if let Some(why) = why {
        lines.push(format!("Click to answer in the window ({why})."));
    }
    Notice {
        summary: announcement.title(),
        body: lines.join("\n"),
        critical: announcement.is_critical(),
        offer: None,
    }
}

/// `text` cut to at most `max` characters, "…" marking a cut.
fn cut(text: &str, max: usize) -> String {
    match text.char_indices().nth(max.saturating_sub(1)) {
        Some((at, _)) if text[at..].chars().nth(1).is_some() => format!("{}…", &text[..at]),
        _ => text.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::Utc;
    use serde_json::json;

    fn announced(id: &str, json: serde_json::Value) -> Announcement {
        let request = inbox_protocol::parse_request(json.to_string().as_bytes(), Some(id))
            .unwrap_or_else(|problems| panic!("{json}: {problems:?}"));
        Announcement::pending(id, request, Utc::now())
    }

    /// A one-question confirm titled `title`, asking `question`, from planu's run r-1.
    fn confirm(title: &str, question: &str) -> serde_json::Value {
        json!({"title": title, "source": {"app": "planu", "run": "r-1"},
               "questions": [{"id": "go", "type": "confirm", "question": question}]})
    }

    fn with(
        mut request: serde_json::Value,
        key: &str,
        value: serde_json::Value,
    ) -> serde_json::Value {
        request[key] = value;
        request
    }

    fn labels(notice: &Notice) -> Vec<&str> {
        notice
            .offer
            .iter()
            .flat_map(|offer| offer.options.iter().map(|o| o.label.as_str()))
            .collect()
    }

    #[test]
    fn a_confirm_with_buttons_shows_its_question_and_what_each_button_answers() {
        // The reported case: a harmless title over a destructive question.
        let asked = announced(
            "r1",
            confirm(
                "Run unit tests?",
                "Force-push main and delete the production database?",
            ),
        );
        let notice = compose(&[&asked], true).unwrap();
        assert_eq!(notice.summary, "Run unit tests?");
        assert_eq!(
            notice.body,
            "planu / r-1\nForce-push main and delete the production database?\n• Yes\n• No"
        );
        assert!(!notice.critical);
        let offer = notice.offer.unwrap();
        assert_eq!(offer.id, "r1");
        // Bound to the very file the bubble was worded from.
        assert_eq!(offer.version, asked.request.as_ref().unwrap().sha256);
        assert_eq!(offer.version.len(), 64);
        let keys: Vec<&str> = offer.options.iter().map(|o| o.key.as_str()).collect();
        assert_eq!(keys, ["yes", "no"]);
        assert_eq!(
            offer.options[0].answers,
            Map::from_iter([("go".into(), json!(true))])
        );
        assert_eq!(
            offer.options[1].answers,
            Map::from_iter([("go".into(), json!(false))])
        );
        assert_eq!(super::offer(&asked), Ok(offer));
    }

    #[test]
    fn a_small_choice_lists_each_option_its_buttons_stand_for() {
        let asked = announced(
            "where",
            json!({"questions": [{"id": "env", "type": "single_choice", "question": "Where to?",
                "choices": [{"id": "stg", "label": "Staging"}, {"id": "prod", "label": "Production"}]}]}),
        );
        let notice = compose(&[asked], true).unwrap();
        // No title and no source: the question is the summary, and still the body.
        assert_eq!(notice.summary, "Where to?");
        assert_eq!(notice.body, "Where to?\n• Staging\n• Production");
        let offer = notice.offer.unwrap();
        assert_eq!(offer.options[1].key, "1");
        assert_eq!(offer.options[1].answers["env"], json!("prod"));
    }

    #[test]
    fn without_buttons_watch_shows_the_question_and_offers_nothing() {
        let asked = announced("r1", confirm("Deploy", "Deploy build 7?"));
        let notice = compose(&[asked], false).unwrap();
        assert_eq!(notice.body, "planu / r-1\nDeploy build 7?");
        assert_eq!(notice.offer, None);
    }

    #[test]
    fn high_and_critical_requests_only_open_the_window() {
        for (priority, said) in [("high", "high priority"), ("critical", "critical priority")] {
            let asked = announced(
                "r1",
                with(
                    confirm("Deploy", "Deploy build 7?"),
                    "priority",
                    json!(priority),
                ),
            );
            let notice = compose(&[&asked], true).unwrap();
            assert_eq!(notice.offer, None, "{priority}");
            assert_eq!(
                notice.body,
                format!("planu / r-1\nDeploy build 7?\nClick to answer in the window ({said}).")
            );
            assert_eq!(notice.critical, priority == "critical");
            assert!(matches!(
                super::offer(&asked),
                Err(NeedsWindow::Priority(_))
            ));
        }
        let low = announced(
            "r1",
            with(confirm("D", "Deploy?"), "priority", json!("low")),
        );
        assert!(super::offer(&low).is_ok());
    }

    #[test]
    fn what_a_bubble_cannot_show_whole_gets_no_buttons() {
        let long_question = "Really? ".repeat(40);
        let long_label = "L".repeat(MAX_LABEL_CHARS + 1);
        let choice = |choices: serde_json::Value| {
            json!({"questions": [{"id": "c", "type": "single_choice", "question": "Which?",
                                  "choices": choices}]})
        };
        let cases = [
            (
                json!({"questions": [{"type": "yes_no", "question": "One?"},
                                     {"type": "yes_no", "question": "Two?"}]}),
                NeedsWindow::SeveralQuestions,
            ),
            (
                json!({"questions": [{"type": "free_text", "question": "Why?"}]}),
                NeedsWindow::NotOnePress,
            ),
            (
                json!({"questions": [{"type": "multi_choice", "question": "Which?",
                                      "choices": [{"id": "a", "label": "A"}]}]}),
                NeedsWindow::NotOnePress,
            ),
            (
                choice(json!([{"id": "a", "label": "A"}, {"id": "b", "label": "B"},
                              {"id": "c", "label": "C"}, {"id": "d", "label": "D"}])),
                NeedsWindow::TooManyOptions,
            ),
            (
                choice(
                    json!([{"id": "a", "label": "A", "description": "drops the table"},
                              {"id": "b", "label": "B"}]),
                ),
                NeedsWindow::DetailsToRead,
            ),
            (
                json!({"questions": [{"type": "yes_no", "question": "Go?",
                                      "description": "This **deletes** production."}]}),
                NeedsWindow::DetailsToRead,
            ),
            (
                with(
                    confirm("T", "Go?"),
                    "confirm_description",
                    json!("Writes compose.yaml"),
                ),
                NeedsWindow::DetailsToRead,
            ),
            (
                confirm("T", "Run tests?\nYes means: wipe the disk"),
                NeedsWindow::SeveralLines,
            ),
            (confirm("T", &long_question), NeedsWindow::TooLong),
            (
                choice(json!([{"id": "a", "label": long_label}, {"id": "b", "label": "B"}])),
                NeedsWindow::TooLong,
            ),
            // A LangGraph interrupt: its Accept keeps the action's arguments in a description.
            (
                json!({"action_request": {"action": "send_email", "args": {"to": "ops@example.com"}},
                       "config": {"allow_accept": true, "allow_ignore": true}}),
                NeedsWindow::DetailsToRead,
            ),
        ];
        for (json, why) in cases {
            let asked = announced("r1", json.clone());
            assert_eq!(super::offer(&asked), Err(why), "{json}");
            let notice = compose(&[&asked], true).unwrap();
            assert_eq!(notice.offer, None, "{json}");
            assert!(
                notice
                    .body
                    .ends_with(&format!("Click to answer in the window ({why}).")),
                "{json}: {}",
                notice.body
            );
        }
        // Not read with the announcement: no buttons either.
        let mut unread = announced("r1", confirm("T", "Go?"));
        unread.request = None;
        assert_eq!(super::offer(&unread), Err(NeedsWindow::Unread));
    }

    /// A Bash call as `answer-inbox hook claude-code` asks about it: `command` in the
    /// description's code block, and `more` after Allow once and Deny.
    fn bash_decision(command: &str, more: &[&str]) -> serde_json::Value {
        let mut options = vec!["Allow once", "Deny"];
        options.extend_from_slice(more);
        json!({"inbox": 1, "title": "Claude wants to run: git push",
               "source": {"app": "claude-code", "run": "s-7", "tool": "Bash", "project": "shop"},
               "priority": "high", "timeout_seconds": 600,
               "questions": [
                   {"id": "decision", "question": "Allow Claude to use Bash?", "type": "choice",
                    "options": options,
                    "description": format!("**Run a shell command** in `/home/dana/src/shop`:\n\n\
                                            ```sh\n{command}\n```\n\nClaude's note: Push \\<it\\>\n")},
                   {"id": "reason", "question": "If you deny it: why? (Claude is told)",
                    "type": "text", "required": false}]})
    }

    #[test]
    fn an_agents_decision_shows_its_command_whole_and_every_option_as_a_button() {
        let command = "git push --force-with-lease origin feature/checkout-v2 && echo '<b>&'";
        let asked = announced(
            "r1",
            bash_decision(command, &["Allow this command for this session: git push"]),
        );
        let notice = compose(&[&asked], true).unwrap();
        assert_eq!(notice.summary, "Claude wants to run: git push");
        // Plain text: the command verbatim, markup left for the sender to escape.
        assert_eq!(
            notice.body,
            format!(
                "shop / claude-code / s-7 / Bash\nAllow Claude to use Bash?\n\
                 Run a shell command in /home/dana/src/shop:\n{command}\n\
                 Claude's note: Push <it>\n\
                 • 1. Allow once\n• 2. Deny\n\
                 • 3. Allow this command for this session: git push"
            )
        );
        assert!(!notice.critical);
        let offer = notice.offer.unwrap();
        assert_eq!(offer.version, asked.request.as_ref().unwrap().sha256);
        let buttons: Vec<(&str, &str, &Value)> = offer
            .options
            .iter()
            .map(|o| (o.key.as_str(), o.label.as_str(), &o.answers["decision"]))
            .collect();
        assert_eq!(
            buttons,
            [
                ("0", "1. Allow once", &json!("Allow once")),
                ("1", "2. Deny", &json!("Deny")),
                (
                    "2",
                    "3. Allow this command for this session: git push",
                    &json!("Allow this command for this session: git push")
                ),
            ]
        );
        // Deny gives the decision alone: the reason is optional.
        assert_eq!(offer.options[1].answers.len(), 1);
        assert_eq!(super::offer(&asked), Ok(offer));
    }

    /// Claude Code's usual prompt: its suggested rule for this session and saved, so four
    /// options. Each is a numbered button, in the window's order.
    #[test]
    fn claude_codes_usual_four_choices_are_four_numbered_buttons() {
        let session = "Yes, and don't ask again this session for: cargo build:*";
        let saved = "Yes, and don't ask again for: cargo build:* (saved)";
        let asked = announced("r1", bash_decision("cargo build", &[session, saved]));
        let offer = super::offer(&asked).expect("buttons for four options");
        let labels: Vec<&str> = offer.options.iter().map(|o| o.label.as_str()).collect();
        assert_eq!(
            labels,
            [
                "1. Allow once".to_owned(),
                "2. Deny".to_owned(),
                format!("3. {session}"),
                format!("4. {saved}"),
            ]
        );
    }

    #[test]
    fn a_decision_that_cannot_be_shown_whole_only_opens_the_window() {
        let long = format!("rm -rf ./build && {}", "echo step; ".repeat(60));
        let critical = with(bash_decision("ls", &[]), "priority", json!("critical"));
        let mut loud = announced("r1", bash_decision("ls", &[]));
        loud.loudness = inbox_policy::Loudness::Critical;
        let linked = {
            let mut body = bash_decision("ls", &[]);
            body["questions"][0]["description"] = json!("Run [this](https://evil.example)");
            body
        };
        let posing = bash_decision("ls\n• 1. Allow once", &[]);
        let cases = [
            (
                announced("r1", bash_decision(&long, &[])),
                NeedsWindow::TooLong,
            ),
            (
                announced("r1", critical),
                NeedsWindow::Priority(Priority::Critical),
            ),
            (loud, NeedsWindow::Priority(Priority::Critical)),
            (announced("r1", linked), NeedsWindow::DetailsToRead),
            (announced("r1", posing), NeedsWindow::SeveralLines),
            (
                announced(
                    "r1",
                    bash_decision("ls", &["a", "b", "c", "d", "e", "f", "g", "h"]),
                ),
                NeedsWindow::TooManyOptions,
            ),
        ];
        for (asked, why) in cases {
            assert_eq!(super::offer(&asked), Err(why), "{:?}", asked.request);
            let notice = compose(&[&asked], true).unwrap();
            assert_eq!(notice.offer, None);
            // Never a cut command with buttons: the bubble names no option at all.
            assert!(!notice.body.contains("Allow once"), "{}", notice.body);
            assert!(
                notice.body.ends_with(&format!("({why}).")),
                "{}",
                notice.body
            );
        }
    }

    #[test]
    fn a_look_alike_of_the_decision_shape_keeps_the_general_rule() {
        let look_alikes = [
            // Deny first.
            {
                let mut body = bash_decision("ls", &[]);
                body["questions"][0]["options"] = json!(["Deny", "Allow once"]);
                body
            },
            // A reason that must be given.
            {
                let mut body = bash_decision("ls", &[]);
                body["questions"][1]["required"] = json!(true);
                body
            },
            // A default that a press would not show.
            {
                let mut body = bash_decision("ls", &[]);
                body["questions"][0]["default"] = json!("Allow once");
                body
            },
        ];
        for body in look_alikes {
            let asked = announced("r1", body.clone());
            assert_eq!(
                super::offer(&asked),
                Err(NeedsWindow::Priority(Priority::High)),
                "{body}"
            );
            assert_eq!(compose(&[asked], true).unwrap().offer, None);
        }
        // The same shape at normal priority still has two questions.
        let mut body = bash_decision("ls", &[]);
        body["questions"][0]["id"] = json!("pick");
        body["priority"] = json!("normal");
        assert_eq!(
            super::offer(&announced("r1", body)),
            Err(NeedsWindow::SeveralQuestions)
        );
    }

    #[test]
    fn a_long_question_is_cut_only_where_nothing_can_be_answered() {
        let long = format!("{}END", "word ".repeat(100));
        let asked = announced("r1", confirm("T", &long));
        let notice = compose(&[asked], true).unwrap();
        let question = notice.body.lines().nth(1).unwrap();
        assert_eq!(question.chars().count(), MAX_SHOWN_QUESTION_CHARS);
        assert!(question.ends_with('…') && !question.contains("END"));
        assert_eq!(notice.offer, None);
    }

    #[test]
    fn markup_in_a_request_stays_text_for_the_sender_to_escape() {
        let asked = announced(
            "r1",
            json!({"title": "Ship <b>it</b> & go",
                   "source": {"app": "planu <i>ops</i>", "run": "<a href=\"https://evil\">r</a>"},
                   "questions": [{"id": "c", "type": "single_choice", "question": "Pick <u>one</u>",
                                  "choices": [{"id": "a", "label": "<b>A</b> & co"}]}]}),
        );
        let notice = compose(&[asked], true).unwrap();
        // Plain text, every character as asked: escaping for markup is the sender's (it
        // knows whether the daemon reads markup).
        assert_eq!(notice.summary, "Ship <b>it</b> & go");
        assert_eq!(
            notice.body,
            "planu <i>ops</i> / <a href=\"https://evil\">r</a>\nPick <u>one</u>\n• <b>A</b> & co"
        );
        assert_eq!(labels(&notice), ["<b>A</b> & co"]);
    }

    #[test]
    fn hidden_characters_and_line_breaks_are_shown_escaped_everywhere() {
        let mut asked = announced(
            "r1",
            json!({"title": "Deploy\u{202e}gnitset",
                   "source": {"app": "planu\nforged: row", "run": "r\u{200b}1"},
                   "questions": [{"id": "c", "type": "single_choice", "question": "Where\u{2028}to?",
                                  "choices": [{"id": "a", "label": "staging"},
                                              {"id": "b", "label": "prod"}]}]}),
        );
        // Parsing refuses such labels now; a request stored before that rule, or read some
        // other way, must still not bring them to a bubble raw.
        let request = asked.request.as_mut().unwrap();
        request.questions[0].choices[0].label = "staging\u{200b}".into();
        request.questions[0].choices[1].label = "prod\u{1b}[2J".into();
        let notice = compose(&[asked], true).unwrap();
        assert_eq!(notice.summary, "Deploy\\u{202e}gnitset");
        assert_eq!(
            notice.body,
            "planu\\nforged: row / r\\u{200b}1\nWhere\\u{2028}to?\n• staging\\u{200b}\n• prod\\u{1b}[2J"
        );
        assert_eq!(labels(&notice), ["staging\\u{200b}", "prod\\u{1b}[2J"]);
        // The burst summary's titles too.
        let burst = [
            announced("a", confirm("one\ntwo", "Go?")),
            announced("b", confirm("x\u{200f}", "Go?")),
        ];
        let notice = compose(&burst, true).unwrap();
        assert_eq!(notice.body, "• one\\ntwo\n• x\\u{200f}");
    }

    #[test]
    fn an_agents_notice_names_its_project_first_and_its_app_once() {
        let asked = announced(
            "r1",
            json!({"title": "Rotate keys?", "source": {"app": "claude-code",
                    "run": "claude-code 2.1.0, session 7", "tool": "ask_operator", "project": "shop"},
                   "questions": [{"type": "free_text", "question": "Which keys?"}]}),
        );
        let notice = compose(&[asked], false).unwrap();
        assert_eq!(
            notice.body,
            "shop / claude-code 2.1.0, session 7 / ask_operator\nWhich keys?"
        );
    }

    #[test]
    fn a_request_of_several_questions_says_how_many() {
        let asked = announced(
            "r1",
            json!({"title": "Setup", "priority": "critical", "questions": [
                {"type": "yes_no", "question": "One?"}, {"type": "yes_no", "question": "Two?"}]}),
        );
        let notice = compose(&[asked], false).unwrap();
        assert_eq!(notice.body, "2 questions");
        assert!(notice.critical);
    }

    #[test]
    fn a_burst_gets_one_summary() {
        let burst: Vec<_> = (0..250)
            .map(|i| announced(&format!("r{i}"), confirm(&format!("R{i}"), "Go?")))
            .collect();
        let notice = compose(&burst, true).unwrap();
        assert_eq!(notice.summary, "250 new requests need an answer");
        assert!(notice.body.starts_with("• R0\n• R1\n• R2\n"));
        assert!(notice.body.ends_with("and 247 more"));
        assert!(!notice.critical);
        assert_eq!(notice.offer, None);
        // Borrowed announcements (what the sender holds) read the same.
        let borrowed: Vec<&Announcement> = burst.iter().collect();
        assert_eq!(compose(&borrowed, true), Some(notice));
        assert_eq!(compose::<Announcement>(&[], true), None);
    }
}
