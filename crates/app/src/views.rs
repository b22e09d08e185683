//! What the window shows: plain, serialisable view models built from the engine's rows.
//!
//! These are the one contract between Rust and the UI. ts-rs generates their TypeScript
//! twins into `ui/src/lib/bindings/`, and a test fails when the committed copies drift, so
//! the UI never guesses a field name. Fields that carry a protocol enum's word (priority,
//! status, question kind) are typed in TypeScript by that enum (`#[ts(as = ...)]`, from
//! inbox-protocol's `ts` feature), so the unions are generated too, never copied.
//!
//! Every string from a request or an outcome that the window shows passes the protocol's
//! one text policy here (`inbox_protocol::text`): one-line fields (titles, labels, source
//! fields, who answered, problems) through `one_line`, text that may span lines (question
//! texts, answers typed as text, reasons, the sanitised description HTML) through
//! `multi_line`, so a bidi override or a zero-width character is shown as `\u{202e}`, never
//! obeyed. Ids and patterns the window sends back or runs are left exact: request ids and
//! choice ids cannot hold hidden characters (the protocol refuses them), and a pattern is
//! code, not text.

use chrono::{DateTime, Utc};
use inbox_engine::policy::Judgement;
use inbox_engine::{RequestDetail, RequestSummary};
use inbox_protocol::limits::MAX_ANSWER_CHARS;
use inbox_protocol::{
    Choice, Mode, Outcome, OutcomeStatus, Priority, Question, QuestionKind, Request,
};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use ts_rs::TS;

use inbox_protocol::text::{multi_line, one_line};

use crate::markdown::render_markdown;
use crate::quick::QuickView;

/// A one-line field from a file, as the window shows it.
fn line(text: &str) -> String {
    one_line(text).into_owned()
}

/// Text from a file that may span lines, as the window shows it.
fn lines(text: &str) -> String {
    multi_line(text).into_owned()
}

/// A markdown description as sanitised HTML with nothing hidden: the escaping runs on the
/// HTML, after sanitising, because markdown can spell a hidden character as an entity
/// (`&#x202e;`) that only the renderer turns into the character. It inserts nothing but
/// `\u{..}` (a backslash, letters, digits and braces), which means nothing to HTML, inside
/// a text node or an attribute alike.
fn description_html(markdown: &str) -> String {
    lines(&render_markdown(markdown))
}

/// Who is asking.
#[derive(Debug, Clone, PartialEq, Serialize, TS)]
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
#[derive(Debug, Clone, PartialEq, Serialize, TS)]
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
    /// Set while this pending request is blocked: nobody can answer it here, and why (its
    /// file changed after it was placed, or an invalid outcome file stands in its place).
    pub blocked: Option<String>,
    /// The OS account that owns the request file (who placed it), when known.
    pub placed_by: Option<String>,
    /// What the operator's policy made of this pending request: the rule, whether it holds
    /// the request for a person and why, what happens next.
    pub judgement: Option<JudgementView>,
    /// RFC 3339; set while the operator has snoozed the request (it is then out of the
    /// Pending list, in the Snoozed one, until this time).
    pub snoozed_until: Option<String>,
}

/// What the operator's policy made of a pending request (the engine's `Judgement`).
#[derive(Debug, Clone, PartialEq, Serialize, TS)]
pub struct JudgementView {
    /// The name of the rule that matched.
    pub rule: String,
    /// The rule's verdict in words.
    pub summary: String,
    /// How loudly the operator is told.
    #[ts(type = "\"silent\" | \"normal\" | \"critical\"")]
    pub notify: String,
    /// Whether a notification may carry answer buttons.
    pub buttons: bool,
    /// Set when the request asked to settle itself (its autonomous mode, or a rule's delay
    /// would default it) and the policy holds it for a person: why.
    pub held: Option<String>,
    /// The policy's next timed step, unless a person answers first.
    pub next: Option<NextStepView>,
    /// Who answers it, when its rule assigns people (docs/TEAMS.md).
    pub team: Option<TeamView>,
}

/// Who answers a request whose rule assigns people, and the approvals it has so far.
#[derive(Debug, Clone, PartialEq, Serialize, TS)]
pub struct TeamView {
    /// The rule's `assign`, as written ("alice", "@ops").
    pub assign: Vec<String>,
    /// The accounts that may answer, groups expanded.
    pub assignees: Vec<String>,
    /// Entries of `assign` that name nobody on this machine.
    pub unknown: Vec<String>,
    /// Whether the operator of this inbox is one of them.
    pub mine: bool,
    /// Whether another member may take it over (and answer it, recorded as a take-over).
    pub takeover: bool,
    /// How many distinct accounts must approve the same answers.
    pub approvals_needed: u32,
    /// The approvals that count so far.
    pub approvals: Vec<ApprovalView>,
    /// "1 of 2: approved by alice".
    pub progress: String,
    /// Set when none of its assignees exists here: what the rule does then (`escalate`,
    /// `expire`, `hold`).
    pub nobody: Option<String>,
}

/// One approval of a two-person request.
#[derive(Debug, Clone, PartialEq, Serialize, TS)]
pub struct ApprovalView {
    /// The account.
    pub by: String,
    /// RFC 3339.
    pub at: String,
    /// Where it was given (`window`, `cli`, `web`, ...), when known.
    pub surface: Option<String>,
}

/// A timed step the policy will take unless a person answers first.
#[derive(Debug, Clone, PartialEq, Serialize, TS)]
pub struct NextStepView {
    /// RFC 3339.
    pub at: String,
    /// In words: "its defaults answer it", "it expires", "escalation step 1: ...".
    pub what: String,
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
    /// Where it was decided: `window`, `bubble`, `cli`, `web`, `push`, `policy`; None in
    /// outcomes from before surfaces were recorded.
    pub surface: Option<String>,
    /// For `web`: the name of the paired device it was answered from.
    pub device: Option<String>,
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
    /// The SHA-256 (lower-case hex) of the request file as shown here. An answer or a
    /// decline sends it back, and the inbox refuses to settle a file that no longer has it,
    /// so what is answered is what the operator saw. Empty when the file could not be read.
    pub version: String,
    pub questions: Vec<QuestionView>,
    pub confirm_title: Option<String>,
    pub confirm_description_html: Option<String>,
    pub outcome: Option<OutcomeView>,
    /// How one key or one tap decides it, where one can ([`QuickView`]).
    pub quick: Option<QuickView>,
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
    /// The request needs more people's approval: this one is recorded (an approval file),
    /// and it settles when `needed` distinct assignees approved the same answers.
    Approved { progress: String, needed: u32 },
}

/// A snooze the inbox took.
#[derive(Debug, Clone, Serialize, TS)]
pub struct SnoozeView {
    /// RFC 3339: when the request comes back to the Pending list.
    pub until: String,
    /// The snooze was cut short to the request's own expiry.
    pub capped: bool,
}

/// One request of an "answer many alike" group: pending requests that ask exactly the same
/// questions.
#[derive(Debug, Clone, Serialize, TS)]
pub struct AlikeMemberView {
    pub row: RowView,
    /// The SHA-256 of the member's file as listed here (see [`RequestView::version`]): the
    /// answer to the group sends it back, and a member whose file is no longer this version
    /// is not answered.
    pub version: String,
}

/// A member of a group as the window answers it: its id and the version it was shown.
#[derive(Debug, Clone, PartialEq, Deserialize, TS)]
pub struct AlikeTarget {
    pub id: String,
    pub version: String,
}

/// What became of one member's answer when a group was answered.
#[derive(Debug, Clone, Serialize, TS)]
pub struct AlikeAnswerView {
    pub id: String,
    /// The member was settled (here, elsewhere first, or kept for the spool).
    pub submitted: Option<SubmitResult>,
    /// Nothing was written for the member, and why (it changed, was withdrawn, is blocked,
    /// the answers do not fit it).
    pub refused: Option<String>,
}

/// One problem with policy text, where the operator can find it.
#[derive(Debug, Clone, PartialEq, Serialize, TS)]
pub struct PolicyProblemView {
    /// 1-based; 0 when the place is unknown.
    pub line: u32,
    /// 1-based, in characters; 0 when the place is unknown.
    pub column: u32,
    pub message: String,
}

/// The operator's policy file, as the Settings view edits it.
#[derive(Debug, Clone, Serialize, TS)]
pub struct PolicyView {
    /// Where the policy file is (shared with the command line).
    pub path: String,
    /// Whether the file exists: without it the shipped policy applies, and saving creates it.
    pub exists: bool,
    /// The file's text, or the shipped policy's while there is no file.
    pub text: String,
    /// The shipped policy's text, to start again from.
    pub shipped: String,
    /// What is wrong with `text`, each with its line; empty when it is valid.
    pub problems: Vec<PolicyProblemView>,
    /// The rules of `text` in order (empty while it has problems).
    pub rules: Vec<String>,
    /// Set while the inbox reports the policy file broken: what is wrong, and what stands
    /// instead (the last good policy, or every request held for a person).
    pub trouble: Option<String>,
}

/// The operator's settings, kept in `settings.json` in the config directory.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
pub struct Settings {
    /// The spool directory pipelines write to.
    pub spool_dir: String,
    /// Desktop notifications for new requests. Absent in a file written by hand: on.
    #[serde(default = "notifications_on")]
    pub notifications: bool,
    /// Silences notifications without turning them off. Absent: off.
    #[serde(default)]
    pub do_not_disturb: bool,
    /// Team mode: the group whose members share the spool (group-readable files, requests
    /// from accounts outside the group refused). None (or absent) keeps the spool private.
    #[serde(default)]
    pub team: Option<String>,
    /// Answering from other devices (the app's own `answer-inbox serve`) and pushes to a
    /// phone. Absent in older files: off.
    #[serde(default)]
    pub remote: RemoteSettings,
}

fn notifications_on() -> bool {
    true
}

/// The app itself, for Settings: whether it starts at login, where its log files are, and
/// whether a tray is there to keep it in when the window closes.
#[derive(Debug, Clone, Serialize, TS)]
pub struct AppView {
    /// Whether the desktop's autostart has the app (an XDG autostart entry).
    pub start_at_login: bool,
    /// The directory of the daily log files, when there is one.
    pub log_dir: Option<String>,
    /// Whether a tray host is on the session bus: closing the window hides the app there,
    /// and quits it otherwise.
    pub tray: bool,
}

/// "Answer from other devices": off by default.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(default)]
pub struct RemoteSettings {
    pub enabled: bool,
    /// Where the server listens, `ADDR:PORT`; anything but loopback is served with TLS.
    pub listen: String,
    /// An ntfy topic URL to push new requests to; empty for none.
    pub ntfy_topic: String,
    /// The access token for a protected ntfy topic; empty for none.
    pub ntfy_token: String,
    /// Push titles only: no source and no question text leave the machine.
    pub ntfy_titles_only: bool,
}

impl Default for RemoteSettings {
    fn default() -> Self {
        RemoteSettings {
            enabled: false,
            listen: "0.0.0.0:8765".to_owned(),
            ntfy_topic: String::new(),
            ntfy_token: String::new(),
            ntfy_titles_only: false,
        }
    }
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
    /// Who answers here, as answers are recorded: `operator:<OS account>`.
    pub operator: String,
    /// `private`, or `team:<group>`.
    pub trust: String,
    /// What the operator should know about the spool and the app: a spool writable by
    /// others or owned by another account, a settings file that could not be read.
    pub warnings: Vec<String>,
    /// Set while the policy file is broken: what is wrong, and what stands instead.
    pub policy_trouble: Option<String>,
}

/// Something the window should react to, pushed from Rust as the `inbox` event.
#[derive(Debug, Clone, Serialize, TS)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum UiEvent {
    /// The lists changed. `pending` counts the Pending list as it stands now. `delta` says
    /// exactly how the Pending list changed, so a window showing it patches its copy; null
    /// (the refetch form, [`UiEvent::refetch`]) when too much changed or it is not known
    /// exactly what did: then every list shown is fetched again. Either way the other lists
    /// (History, Problems) may have changed too.
    Changed {
        pending: u32,
        delta: Option<PendingDelta>,
    },
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
    /// The policy file became broken (`trouble`: what is wrong and what stands instead), or
    /// a good policy is in force again (`trouble` null).
    Policy { trouble: Option<String> },
    /// The window's close button was pressed where no tray can bring the window back: the
    /// window says, this once, that closing quits the app (`inbox_desk::closing`).
    ClosingQuits,
}

impl UiEvent {
    /// "The lists changed, fetch them again": the `changed` event without a delta, for when
    /// what changed is not known exactly (a start, a new policy, a page that fell behind).
    pub fn refetch(pending: u32) -> UiEvent {
        UiEvent::Changed {
            pending,
            delta: None,
        }
    }
}

/// How the Pending list changed, request by request: what a window showing it needs to
/// patch its copy instead of fetching the whole list again.
#[derive(Debug, Clone, PartialEq, Serialize, TS)]
pub struct PendingDelta {
    /// Requests now in the Pending list that arrived (placed, back from a snooze) or
    /// changed (held, blocked, escalated, an answer waiting for the spool), each exactly as
    /// `list_pending` returns it. A window puts each in the list's order (most urgent
    /// first, then oldest first), replacing its row of the same id.
    pub rows: Vec<RowView>,
    /// Requests no longer in the Pending list (settled, withdrawn, rejected, snoozed), or
    /// never in it: a window drops the rows with these ids, if it has them.
    pub gone: Vec<String>,
    /// The Snoozed list changed too: a request was snoozed, came back, or changed while
    /// snoozed. (One settled while snoozed is in `gone`.)
    pub snoozed: bool,
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
            app: source.app.as_deref().map(line),
            run: source.run.as_deref().map(line),
            tool: source.tool.as_deref().map(line),
            host: source.host.as_deref().map(line),
            project: source.project.as_deref().map(line),
            cwd: source.cwd.as_deref().map(line),
            // A link with a hidden character in it cannot be shown as what it opens.
            url: source.url.clone().filter(|url| {
                crate::links::is_web_link(url) && !url.chars().any(inbox_protocol::text::is_hidden)
            }),
        }
    }
}

impl RowView {
    pub fn of(summary: &RequestSummary) -> RowView {
        RowView {
            id: summary.id.clone(),
            state: summary.state.as_str().to_owned(),
            title: line(&summary.title),
            source: SourceView::of(&summary.source),
            priority: word(&summary.priority),
            autonomous: summary.mode == Mode::Autonomous,
            question_count: u32::try_from(summary.question_count).unwrap_or(u32::MAX),
            placed_at: rfc3339(summary.placed_at),
            deadline: summary.deadline.map(rfc3339),
            settled_at: summary.settled_at.map(rfc3339),
            answered_by: summary.answered_by.as_deref().map(line),
            unwritten: summary.unwritten.as_deref().map(line),
            blocked: summary.blocked.as_deref().map(line),
            placed_by: summary.placed_by.as_deref().map(line),
            judgement: summary.judgement.as_ref().map(JudgementView::of),
            snoozed_until: summary.snoozed_until.map(rfc3339),
        }
    }
}

impl JudgementView {
    /// Rule names and the words of the policy come from the operator's file: one line each.
    pub fn of(judgement: &Judgement) -> JudgementView {
        JudgementView {
            rule: line(&judgement.rule),
            summary: line(&judgement.summary),
            notify: word(&judgement.notify),
            buttons: judgement.buttons,
            held: judgement.held.as_deref().map(line),
            next: judgement.next.as_ref().map(|next| NextStepView {
                at: rfc3339(next.at),
                what: line(&next.what),
            }),
            team: judgement.team.as_ref().map(TeamView::of),
        }
    }
}

impl TeamView {
    /// Account and group names come from the team's policy file: one line each.
    pub fn of(team: &inbox_engine::engine::Team) -> TeamView {
        let lines = |names: &[String]| names.iter().map(|name| line(name)).collect();
        TeamView {
            assign: lines(&team.assign),
            assignees: lines(&team.assignees),
            unknown: lines(&team.unknown),
            mine: team.mine,
            takeover: team.takeover,
            approvals_needed: team.approvals_needed,
            approvals: team
                .approvals
                .iter()
                .map(|approval| ApprovalView {
                    by: line(
                        approval
                            .by
                            .strip_prefix(inbox_protocol::outcome::OPERATOR_PREFIX)
                            .unwrap_or(&approval.by),
                    ),
                    at: rfc3339(approval.at),
                    surface: approval.surface.as_ref().map(word),
                })
                .collect(),
            progress: line(&team.progress()),
            nobody: team.nobody.as_ref().map(word),
        }
    }
}

impl PolicyProblemView {
    pub fn of(problem: &inbox_engine::inbox_policy::PolicyProblem) -> PolicyProblemView {
        PolicyProblemView {
            line: u32::try_from(problem.line).unwrap_or(u32::MAX),
            column: u32::try_from(problem.column).unwrap_or(u32::MAX),
            message: line(&problem.message),
        }
    }
}

impl ProblemView {
    pub fn of(problem: &inbox_protocol::Problem) -> ProblemView {
        ProblemView {
            pointer: line(&problem.pointer),
            message: line(&problem.message),
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
            question: lines(&question.question),
            description_html: question.description.as_deref().map(description_html),
            tab_label: line(&question.tab_label()),
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
    Some(line(&format!(
        "when {} is “{answer}”",
        tab_name(&request.questions, position)
    )))
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
            label: line(&choice.label),
            description: choice.description.as_deref().map(lines),
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
                    question: question.map_or_else(|| line(id), |q| lines(&q.question)),
                    answer: answer_in_words(question, value),
                    custom: outcome.custom.contains(id),
                    defaulted: outcome.defaulted.contains(id),
                }
            })
            .collect();
        OutcomeView {
            status: outcome.status.as_str().to_owned(),
            answered_by: line(&outcome.answered_by),
            answered_at: rfc3339(outcome.answered_at),
            instance: line(&outcome.instance),
            surface: outcome.surface.map(|s| s.as_str().to_owned()),
            device: outcome.device.as_deref().map(line),
            answers,
            reason: outcome.reason.as_deref().map(lines),
            errors: outcome
                .errors
                .iter()
                .flatten()
                .map(ProblemView::of)
                .collect(),
        }
    }
}

/// "Yes"/"No", option labels joined by commas, or the text itself, as shown: labels and
/// ids on one line, a text answer with its newlines, nothing hidden.
pub fn answer_in_words(question: Option<&Question>, value: &Value) -> String {
    let label = |id: &str| -> String {
        question
            .and_then(|q| q.choice(id))
            .map_or_else(|| line(id), |c| line(&c.label))
    };
    match value {
        Value::Bool(true) => "Yes".into(),
        Value::Bool(false) => "No".into(),
        Value::String(text) if question.is_some_and(|q| q.kind == QuestionKind::Text) => {
            lines(text)
        }
        Value::String(id) => label(id),
        Value::Array(items) => items
            .iter()
            .map(|item| match item {
                Value::String(id) => label(id),
                other => line(&other.to_string()),
            })
            .collect::<Vec<_>>()
            .join(", "),
        other => line(&other.to_string()),
    }
}

impl RequestView {
    pub fn of(detail: &RequestDetail) -> RequestView {
        let request = detail.request.as_ref();
        RequestView {
            row: RowView::of(&detail.summary),
            version: request.map(|r| r.sha256.clone()).unwrap_or_default(),
            questions: request
                .map(|r| r.questions.iter().map(|q| QuestionView::of(q, r)).collect())
                .unwrap_or_default(),
            confirm_title: request.and_then(|r| r.confirm_title.as_deref()).map(line),
            confirm_description_html: request
                .and_then(|r| r.confirm_description.as_deref())
                .map(description_html),
            outcome: detail
                .outcome
                .as_ref()
                .map(|outcome| OutcomeView::of(outcome, request)),
            quick: request.and_then(QuickView::of),
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

    /// What the window shows holds no hidden character raw, even one markdown spells as an
    /// entity; the values the window sends back (ids) stay exact.
    #[test]
    fn hidden_characters_reach_the_window_escaped() {
        let request = inbox_protocol::parse_request(
            r#"{"title": "Deploy \u202estaging", "questions": [
                {"id": "env", "type": "single_choice", "question": "Where?\u2028now",
                 "description": "a &#x202e; b\u200b", "choices": [
                    {"id": "s", "label": "staging", "description": "x\u200fy"},
                    {"id": "p", "label": "production"}]}]}"#
                .as_bytes(),
            Some("r1"),
        )
        .unwrap();
        let question = QuestionView::of(&request.questions[0], &request);
        assert_eq!(question.question, "Where?\\u{2028}now");
        let html = question.description_html.unwrap();
        assert!(html.contains("a \\u{202e} b\\u{200b}"), "{html}");
        assert_eq!(question.choices[0].id, "s");
        assert_eq!(
            question.choices[0].description.as_deref(),
            Some("x\\u{200f}y")
        );
        assert_eq!(
            answer_in_words(Some(&request.questions[0]), &Value::from("s")),
            "staging"
        );
        assert_eq!(
            line(request.title.as_deref().unwrap()),
            "Deploy \\u{202e}staging"
        );
    }

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
