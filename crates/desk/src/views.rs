//! What the window shows: plain, serialisable view models built from the engine's rows.
//!
//! These are the one contract between Rust and the UI. ts-rs generates their TypeScript
//! twins into `ui/src/lib/bindings/`, and a test fails when the committed copies drift, so
//! the UI never guesses a field name. Fields that carry a protocol enum's word (priority,
//! status, question kind) are typed in TypeScript by that enum (`#[ts(as = ...)]`, from
//! inbox-protocol's `ts` feature), so the unions are generated too, never copied.

use chrono::{DateTime, Utc};
use inbox_engine::{RequestDetail, RequestSummary};
use inbox_protocol::limits::MAX_ANSWER_CHARS;
use inbox_protocol::{
    Choice, Mode, Outcome, OutcomeStatus, Priority, Question, QuestionKind, Request,
};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use ts_rs::TS;

use crate::markdown::render_markdown;

/// Who is asking.
#[derive(Debug, Clone, Serialize, TS)]
pub struct SourceView {
    pub app: Option<String>,
    pub run: Option<String>,
    pub tool: Option<String>,
    pub host: Option<String>,
    /// The project the asker works in, and its working directory (agents asking through
    /// `answer-inbox mcp` set both), so the operator sees which checkout is asking.
    pub project: Option<String>,
    pub cwd: Option<String>,
    /// Only `http`/`https` links survive; anything else is dropped.
    pub url: Option<String>,
}

/// One row of the Pending or History list.
#[derive(Debug, Clone, Serialize, TS)]
pub struct RowView {
    pub id: String,
    /// `pending`, `cancelled`, or the outcome status.
    #[ts(as = "RowState")]
    pub state: String,
    pub title: String,
    pub source: SourceView,
    /// `low`, `normal`, `high` or `critical` (a `Priority` in words).
    #[ts(as = "Priority")]
    pub priority: String,
    /// `autonomous` requests that are still pending are blocked on a person.
    pub autonomous: bool,
    pub question_count: u32,
    /// RFC 3339.
    pub placed_at: String,
    /// RFC 3339; when the request expires, if it does.
    pub deadline: Option<String>,
    pub settled_at: Option<String>,
    pub answered_by: Option<String>,
    /// Set while an answer given to this pending request waits for the spool to take its
    /// file (read-only or full): why the last attempt failed.
    pub unwritten: Option<String>,
}

/// What `RowView::state` holds (the engine's `State` in words): `pending`, `cancelled`, or
/// the `OutcomeStatus` it was settled with. Only its TypeScript type is used.
#[derive(TS)]
#[ts(rename_all = "lowercase")]
pub enum RowState {
    Pending,
    Cancelled,
    #[ts(untagged)]
    Settled(OutcomeStatus),
}

/// One answer, as a person reads it.
#[derive(Debug, Clone, Serialize, TS)]
pub struct AnswerLine {
    pub question_id: String,
    pub question: String,
    /// The answer in words: option labels, "Yes"/"No", the text given.
    pub answer: String,
    /// The operator's own fill-in text, not one of the options.
    pub custom: bool,
    /// Came from the question's default.
    pub defaulted: bool,
}

/// How a request was settled.
#[derive(Debug, Clone, Serialize, TS)]
pub struct OutcomeView {
    /// `answered`, `defaulted`, `declined`, `expired` or `rejected` (an `OutcomeStatus` in
    /// words).
    #[ts(as = "OutcomeStatus")]
    pub status: String,
    /// `operator:<name>` or `policy:<name>`.
    pub answered_by: String,
    pub answered_at: String,
    /// The inbox instance that wrote it.
    pub instance: String,
    pub answers: Vec<AnswerLine>,
    pub reason: Option<String>,
    pub errors: Vec<ProblemView>,
}

/// A settled request in the History view.
#[derive(Debug, Clone, Serialize, TS)]
pub struct HistoryView {
    pub row: RowView,
    /// None for a request its asker cancelled.
    pub outcome: Option<OutcomeView>,
    /// From placing the file to the outcome, in milliseconds.
    // A JSON number; ts-rs would call an `i64` a `bigint`.
    #[ts(as = "Option<f64>")]
    pub time_to_answer_ms: Option<i64>,
}

/// One problem with a file or an answer: where, and what is wrong.
#[derive(Debug, Clone, PartialEq, Serialize, TS)]
pub struct ProblemView {
    /// A JSON pointer, or a file path.
    pub pointer: String,
    pub message: String,
}

/// A file in the spool that could not be read as a request.
#[derive(Debug, Clone, Serialize, TS)]
pub struct SpoolProblemView {
    /// The request id, when the file had a usable name and got a `rejected` outcome.
    pub id: Option<String>,
    pub path: String,
    pub reasons: Vec<String>,
    pub seen_at: String,
}

/// One option of a choice question.
#[derive(Debug, Clone, Serialize, TS)]
pub struct ChoiceView {
    pub id: String,
    pub label: String,
    pub description: Option<String>,
}

/// One question, ready to render as a form.
#[derive(Debug, Clone, Serialize, TS)]
pub struct QuestionView {
    pub id: String,
    /// `confirm`, `choice`, `multi_choice` or `text` (a `QuestionKind` in words).
    #[ts(as = "QuestionKind")]
    pub kind: String,
    /// The type as its asker wrote it, e.g. `multiChoice` or `yes_no`.
    pub wire_type: String,
    pub question: String,
    /// The markdown description as sanitised HTML: no scripts, no remote images.
    pub description_html: Option<String>,
    /// The tab header in a batch: the label, else the first three words.
    pub tab_label: String,
    pub choices: Vec<ChoiceView>,
    /// Already a valid answer: a boolean, a choice id, an array of ids, or text.
    pub default: Option<Value>,
    pub required: bool,
    /// For a question another answer makes required: when, in words ("when Decision is
    /// “Respond”"), so the form says so instead of "optional".
    pub required_when: Option<String>,
    pub pattern: Option<String>,
    pub allow_custom: bool,
    /// The most characters the inbox takes in a text answer or a fill-in
    /// (`inbox_protocol::limits::MAX_ANSWER_CHARS`): the form refuses longer ones itself.
    pub max_answer_chars: u32,
}

/// Everything the answer view needs about one request.
#[derive(Debug, Clone, Serialize, TS)]
pub struct RequestView {
    pub row: RowView,
    pub questions: Vec<QuestionView>,
    pub confirm_title: Option<String>,
    pub confirm_description_html: Option<String>,
    pub outcome: Option<OutcomeView>,
}

/// What became of a submitted answer or decline.
#[derive(Debug, Clone, Serialize, TS)]
#[serde(tag = "result", rename_all = "snake_case")]
pub enum SubmitResult {
    /// This inbox wrote the outcome.
    Settled { outcome: OutcomeView },
    /// Someone else (another inbox, a policy, the CLI) settled it first; theirs stands.
    AlreadySettled { outcome: OutcomeView },
    /// The answer is decided and kept in the inbox's database, but the spool would not take
    /// its file yet (read-only or full): it is retried until written.
    Kept { outcome: OutcomeView, error: String },
}

/// The operator's settings, kept in `settings.json` in the config directory.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
pub struct Settings {
    /// The spool directory pipelines write to.
    pub spool_dir: String,
    /// Desktop notifications for new requests.
    pub notifications: bool,
    /// Silences notifications without turning them off.
    pub do_not_disturb: bool,
}

/// The state of the app shown in the header and the tray.
#[derive(Debug, Clone, Serialize, TS)]
pub struct StatusView {
    pub pending: u32,
    pub spool_dir: String,
    pub db_path: String,
    /// `available`, `unavailable` (no notification daemon on the session bus), `off`, or
    /// `do_not_disturb`.
    pub notifications: String,
    /// The name answers are recorded under: `operator:<name>`.
    pub operator: String,
}

/// Something the window should react to, pushed from Rust as the `inbox` event.
#[derive(Debug, Clone, Serialize, TS)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum UiEvent {
    /// The lists changed; fetch them again.
    Changed { pending: u32 },
    /// A request got its outcome, from anywhere.
    Settled {
        id: String,
        /// An `OutcomeStatus` in words.
        #[ts(as = "OutcomeStatus")]
        status: String,
        answered_by: String,
    },
    /// The asker withdrew a request.
    Cancelled { id: String },
    /// Show this request (a notification was clicked), or the list when `id` is null.
    Focus { id: Option<String> },
    /// Something the operator must know: the loop stopped, an answer from a notification
    /// could not be written.
    Error { message: String },
}

fn rfc3339(at: DateTime<Utc>) -> String {
    at.to_rfc3339_opts(chrono::SecondsFormat::Millis, true)
}

fn word<T: Serialize>(value: &T) -> String {
    match serde_json::to_value(value) {
        Ok(Value::String(text)) => text,
        _ => String::new(),
    }
}

impl SourceView {
    pub fn of(source: &inbox_protocol::Source) -> SourceView {
        SourceView {
            app: source.app.clone(),
            run: source.run.clone(),
            tool: source.tool.clone(),
            host: source.host.clone(),
            project: source.project.clone(),
            cwd: source.cwd.clone(),
            url: source
                .url
                .clone()
                .filter(|url| crate::links::is_web_link(url)),
        }
    }
}

impl RowView {
    pub fn of(summary: &RequestSummary) -> RowView {
        RowView {
            id: summary.id.clone(),
            state: summary.state.as_str().to_owned(),
            title: summary.title.clone(),
            source: SourceView::of(&summary.source),
            priority: word(&summary.priority),
            autonomous: summary.mode == Mode::Autonomous,
            question_count: u32::try_from(summary.question_count).unwrap_or(u32::MAX),
            placed_at: rfc3339(summary.placed_at),
            deadline: summary.deadline.map(rfc3339),
            settled_at: summary.settled_at.map(rfc3339),
            answered_by: summary.answered_by.clone(),
            unwritten: summary.unwritten.clone(),
        }
    }
}

impl ProblemView {
    pub fn of(problem: &inbox_protocol::Problem) -> ProblemView {
        ProblemView {
            pointer: problem.pointer.clone(),
            message: problem.message.clone(),
        }
    }
}

/// How much of the other answer `required_when` quotes.
const REQUIRED_WHEN_ANSWER_CHARS: usize = 40;

impl QuestionView {
    /// `request` holds the question, and the one its `required_if` names.
    pub fn of(question: &Question, request: &Request) -> QuestionView {
        QuestionView {
            id: question.id.clone(),
            kind: word(&question.kind),
            wire_type: word(&question.wire_type),
            question: question.question.clone(),
            description_html: question.description.as_deref().map(render_markdown),
            tab_label: question.tab_label(),
            choices: question.choices.iter().map(ChoiceView::of).collect(),
            default: question.default.clone(),
            required: question.required,
            required_when: required_when(question, request),
            pattern: question.pattern.clone(),
            allow_custom: question.allow_custom,
            max_answer_chars: u32::try_from(MAX_ANSWER_CHARS).unwrap_or(u32::MAX),
        }
    }
}

fn required_when(question: &Question, request: &Request) -> Option<String> {
    let condition = question.rules.required_if.as_ref()?;
    let position = request
        .questions
        .iter()
        .position(|q| q.id == condition.question)?;
    let other = &request.questions[position];
    let answer = answer_in_words(Some(other), &condition.equals);
    let answer = answer.trim();
    let answer = match answer.char_indices().nth(REQUIRED_WHEN_ANSWER_CHARS) {
        // Cut at a word's end where there is one: "Respond: send the agent a message…".
        Some((end, _)) => {
            let head = &answer[..end];
            let head = head.rfind(' ').map_or(head, |space| &head[..space]);
            format!("{}…", head.trim_end_matches([' ', ',', ';', ':']))
        }
        None => answer.to_owned(),
    };
    Some(format!(
        "when {} is “{answer}”",
        tab_name(&request.questions, position)
    ))
}

/// The name the window's tab gives question `position`: its tab label, "Question N" when that
/// is blank, numbered when an earlier question has the same ("Decision (2)"), as
/// `tabLabels` in ui/src/lib/form.ts names them.
fn tab_name(questions: &[Question], position: usize) -> String {
    let label_of = |index: usize| {
        let label = questions[index].tab_label();
        match label.trim() {
            "" => format!("Question {}", index + 1),
            trimmed => trimmed.to_owned(),
        }
    };
    let label = label_of(position);
    let count = (0..=position).filter(|&i| label_of(i) == label).count();
    if count == 1 {
        label
    } else {
        format!("{label} ({count})")
    }
}

impl ChoiceView {
    fn of(choice: &Choice) -> ChoiceView {
        ChoiceView {
            id: choice.id.clone(),
            label: choice.label.clone(),
            description: choice.description.clone(),
        }
    }
}

impl OutcomeView {
    /// `request` gives the questions' words; without it the raw ids and values are shown.
    pub fn of(outcome: &Outcome, request: Option<&Request>) -> OutcomeView {
        let answers = outcome
            .answers
            .iter()
            .map(|(id, value)| {
                let question = request.and_then(|r| r.question(id));
                AnswerLine {
                    question_id: id.clone(),
                    question: question
                        .map(|q| q.question.clone())
                        .unwrap_or_else(|| id.clone()),
                    answer: answer_in_words(question, value),
                    custom: outcome.custom.contains(id),
                    defaulted: outcome.defaulted.contains(id),
                }
            })
            .collect();
        OutcomeView {
            status: outcome.status.as_str().to_owned(),
            answered_by: outcome.answered_by.clone(),
            answered_at: rfc3339(outcome.answered_at),
            instance: outcome.instance.clone(),
            answers,
            reason: outcome.reason.clone(),
            errors: outcome
                .errors
                .iter()
                .flatten()
                .map(ProblemView::of)
                .collect(),
        }
    }
}

/// "Yes"/"No", option labels joined by commas, or the text itself.
pub fn answer_in_words(question: Option<&Question>, value: &Value) -> String {
    let label = |id: &str| -> String {
        question
            .and_then(|q| q.choice(id))
            .map(|c| c.label.clone())
            .unwrap_or_else(|| id.to_owned())
    };
    match value {
        Value::Bool(true) => "Yes".into(),
        Value::Bool(false) => "No".into(),
        Value::String(text) if question.is_some_and(|q| q.kind == QuestionKind::Text) => {
            text.clone()
        }
        Value::String(id) => label(id),
        Value::Array(items) => items
            .iter()
            .map(|item| match item {
                Value::String(id) => label(id),
                other => other.to_string(),
            })
            .collect::<Vec<_>>()
            .join(", "),
        other => other.to_string(),
    }
}

impl RequestView {
    pub fn of(detail: &RequestDetail) -> RequestView {
        let request = detail.request.as_ref();
        RequestView {
            row: RowView::of(&detail.summary),
            questions: request
                .map(|r| r.questions.iter().map(|q| QuestionView::of(q, r)).collect())
                .unwrap_or_default(),
            confirm_title: request.and_then(|r| r.confirm_title.clone()),
            confirm_description_html: request
                .and_then(|r| r.confirm_description.as_deref())
                .map(render_markdown),
            outcome: detail
                .outcome
                .as_ref()
                .map(|outcome| OutcomeView::of(outcome, request)),
        }
    }
}

impl HistoryView {
    pub fn of(detail: &RequestDetail) -> HistoryView {
        let summary = &detail.summary;
        HistoryView {
            row: RowView::of(summary),
            outcome: detail
                .outcome
                .as_ref()
                .map(|outcome| OutcomeView::of(outcome, detail.request.as_ref())),
            time_to_answer_ms: summary
                .settled_at
                .map(|settled| (settled - summary.placed_at).num_milliseconds().max(0)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `required_when` names the other question as its tab does, numbered like the window's.
    #[test]
    fn tab_names_follow_the_windows_numbering() {
        let request = inbox_protocol::parse_request(
            br#"{"questions": [
                {"type": "yes_no", "question": "First?", "label": "Check"},
                {"type": "yes_no", "question": "Second?", "label": "Check"},
                {"type": "yes_no", "question": "Third?", "label": "  "}]}"#,
            None,
        )
        .unwrap();
        let names: Vec<String> = (0..3).map(|i| tab_name(&request.questions, i)).collect();
        assert_eq!(names, ["Check", "Check (2)", "Question 3"]);
    }

    /// `RowState`, the TypeScript type of `RowView::state`, says what the engine's states
    /// are in words: `pending`, `cancelled`, or the outcome status as the protocol words it.
    #[test]
    fn row_state_matches_the_engines_words() {
        use inbox_engine::State;
        assert_eq!(State::Pending.as_str(), "pending");
        assert_eq!(State::Cancelled.as_str(), "cancelled");
        for status in [
            OutcomeStatus::Answered,
            OutcomeStatus::Defaulted,
            OutcomeStatus::Declined,
            OutcomeStatus::Expired,
            OutcomeStatus::Rejected,
        ] {
            assert_eq!(State::Settled(status).as_str(), word(&status));
        }
        assert_eq!(
            RowState::inline(),
            r#""pending" | "cancelled" | OutcomeStatus"#
        );
    }
}
