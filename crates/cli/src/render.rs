//! Text for people: tables, request details, problem lists. Pure functions from values to
//! strings, so they are testable without a terminal; machines get `--json` instead.
//!
//! A leaf: it renders the engine's and the protocol's types, never a command's own (those
//! render themselves, using the pieces here), so commands import it and not the reverse.
//!
//! Every string from a request or an outcome file goes through the protocol's text policy
//! (`inbox_protocol::text`): one-line fields (ids, titles, labels, source fields, answers,
//! reasons, who answered) through [`line`], so a newline cannot forge a row of `list` or a
//! field of `show`; descriptions and question texts through [`lines`], which keeps their
//! newlines. Either way nothing invisible or terminal-controlling is printed raw.

use std::fmt::Write as _;

use chrono::{DateTime, Local, TimeDelta, Utc};
use inbox_engine::alike::AlikeGroup;
use inbox_engine::store::LoggedEvent;
use inbox_engine::{RequestDetail, RequestSummary, State};
use inbox_protocol::text::{multi_line, one_line};
use inbox_protocol::{
    AnswerSet, Outcome, Problem, Question, QuestionKind, Request, Rules, Source, TextFormat,
};
use serde_json::Value;

/// Widest title shown in the list.
const TITLE_WIDTH: usize = 48;
const NONE: &str = "—";

/// One indented line per problem: `  /pointer: message`. Both parts may quote a request
/// (a label, a key), so each is kept to one line.
pub fn problem_lines(problems: &[Problem]) -> String {
    problems
        .iter()
        .map(|problem| format!("  {}", problem_line(problem)))
        .collect::<Vec<_>>()
        .join("\n")
}

/// `/pointer: message` on one line, with nothing hidden.
pub fn problem_line(problem: &Problem) -> String {
    line(&problem.to_string())
}

/// A one-line field from a file, as shown: see the module's introduction.
pub fn line(text: &str) -> String {
    one_line(text).into_owned()
}

/// Text from a file that may span lines, as shown: see the module's introduction.
pub fn lines(text: &str) -> String {
    multi_line(text).into_owned()
}

/// The `list` table. `with_status` adds a STATUS column (for `--all`).
pub fn summary_table(rows: &[RequestSummary], with_status: bool, now: DateTime<Utc>) -> String {
    let mut header = vec!["ID"];
    if with_status {
        header.push("STATUS");
    }
    header.extend(["PRIORITY", "TITLE", "SOURCE", "Q", "AGE", "EXPIRES"]);
    let mut table: Vec<Vec<String>> = vec![header.into_iter().map(str::to_owned).collect()];
    for row in rows {
        let mut cells = vec![line(&row.id)];
        if with_status {
            cells.push(row.state.as_str().to_owned());
        }
        let expires = match (row.state, row.deadline) {
            (State::Pending, Some(deadline)) => until(deadline, now),
            _ => NONE.to_owned(),
        };
        // An answer the spool has not taken yet must not look like a request still waiting;
        // one the policy holds (its autonomous mode, or a delay's default) says so, since its
        // asker may be expecting it to settle itself; a snoozed one says when it returns.
        let held =
            row.state == State::Pending && row.judgement.as_ref().is_some_and(|j| j.held.is_some());
        let snoozed = row.snoozed_until.filter(|until| *until > now);
        let title = match (&row.blocked, &row.unwritten, snoozed) {
            (Some(_), _, _) => format!("[blocked] {}", line(&row.title)),
            (None, Some(_), _) => format!("[answer not yet written] {}", line(&row.title)),
            (None, None, Some(back)) => {
                format!("[snoozed, back {}] {}", until(back, now), line(&row.title))
            }
            (None, None, None) if held => format!("[held] {}", line(&row.title)),
            (None, None, None) => line(&row.title),
        };
        cells.extend([
            enum_text(&row.priority),
            truncate(&title, TITLE_WIDTH),
            source_short(&row.source),
            row.question_count.to_string(),
            age(row.placed_at, now),
            expires,
        ]);
        table.push(cells);
    }
    align(&table)
}

/// Left-aligned columns, two spaces apart, no trailing blanks.
pub fn align(table: &[Vec<String>]) -> String {
    let columns = table.first().map_or(0, Vec::len);
    let widths: Vec<usize> = (0..columns)
        .map(|c| {
            table
                .iter()
                .map(|row| row[c].chars().count())
                .max()
                .unwrap_or(0)
        })
        .collect();
    let mut text = String::new();
    for row in table {
        let mut line = String::new();
        for (cell, width) in row.iter().zip(&widths) {
            let _ = write!(line, "{cell:<width$}  ");
        }
        text.push_str(line.trim_end());
        text.push('\n');
    }
    text
}

/// `app/run/tool`, or a dash.
pub fn source_short(source: &Source) -> String {
    let parts: Vec<String> = [&source.project, &source.app, &source.run, &source.tool]
        .iter()
        .filter_map(|part| part.as_deref())
        .map(line)
        .collect();
    if parts.is_empty() {
        NONE.to_owned()
    } else {
        parts.join("/")
    }
}

/// Every source field, `app planu · run r-7 · host ci-3 · team ops`.
fn source_long(source: &Source) -> String {
    let mut parts: Vec<String> = [
        ("app", &source.app),
        ("run", &source.run),
        ("tool", &source.tool),
        ("host", &source.host),
        ("project", &source.project),
        ("cwd", &source.cwd),
        ("url", &source.url),
    ]
    .iter()
    .filter_map(|(key, value)| value.as_deref().map(|v| format!("{key} {}", line(v))))
    .collect();
    parts.extend(
        source
            .extra
            .iter()
            .map(|(key, value)| format!("{} {}", line(key), line(&value_text(value)))),
    );
    if parts.is_empty() {
        NONE.to_owned()
    } else {
        parts.join(" · ")
    }
}

/// How long ago: `42s`, `5m`, `2h`, `3d`.
pub fn age(then: DateTime<Utc>, now: DateTime<Utc>) -> String {
    span(now - then)
}

/// Until a deadline: `in 4m`, or `overdue 2m`.
pub fn until(deadline: DateTime<Utc>, now: DateTime<Utc>) -> String {
    let left = deadline - now;
    if left < TimeDelta::zero() {
        format!("overdue {}", span(-left))
    } else {
        format!("in {}", span(left))
    }
}

fn span(delta: TimeDelta) -> String {
    let seconds = delta.num_seconds().max(0);
    match seconds {
        0..60 => format!("{seconds}s"),
        60..3_600 => format!("{}m", seconds / 60),
        3_600..86_400 => format!("{}h", seconds / 3_600),
        _ => format!("{}d", seconds / 86_400),
    }
}

/// A local time for people: `2026-12-03 10:42:17 +01:00`.
pub fn local_time(at: DateTime<Utc>) -> String {
    at.with_timezone(&Local)
        .format("%Y-%m-%d %H:%M:%S %:z")
        .to_string()
}

fn truncate(text: &str, width: usize) -> String {
    if text.chars().count() <= width {
        return text.to_owned();
    }
    let mut cut: String = text.chars().take(width - 1).collect();
    cut.push('…');
    cut
}

/// `1 question`, `3 questions`.
pub fn count(n: usize, noun: &str) -> String {
    if n == 1 {
        format!("1 {noun}")
    } else {
        format!("{n} {noun}s")
    }
}

/// A serde enum's wire name (`high`, `interactive`, `multiChoice`).
fn enum_text<T: serde::Serialize>(value: &T) -> String {
    match serde_json::to_value(value) {
        Ok(Value::String(text)) => text,
        Ok(other) => other.to_string(),
        Err(_) => String::new(),
    }
}

/// A JSON value for people: strings bare, everything else as compact JSON.
fn value_text(value: &Value) -> String {
    match value {
        Value::String(text) => text.clone(),
        other => other.to_string(),
    }
}

fn indent(text: &str, by: &str) -> String {
    text.lines()
        .map(|line| {
            if line.is_empty() {
                String::new()
            } else {
                format!("{by}{line}")
            }
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// The `show` page: the request, its questions, its outcome, its history.
pub fn detail(detail: &RequestDetail, events: &[LoggedEvent], now: DateTime<Utc>) -> String {
    let summary = &detail.summary;
    let mut text = String::new();
    let _ = writeln!(text, "{}", line(&summary.title));
    let mut fields: Vec<(&str, String)> = vec![
        ("id", line(&summary.id)),
        ("status", summary.state.as_str().to_owned()),
        ("source", source_long(&summary.source)),
        ("priority", enum_text(&summary.priority)),
    ];
    if let Some(request) = &detail.request {
        fields.push(("mode", enum_text(&request.mode)));
        // What `answer --version` binds to: the first 12 hex digits name it.
        fields.push(("version", request.sha256.clone()));
    }
    if let Some(reason) = &summary.blocked {
        fields.push(("blocked", line(reason)));
    }
    if let Some(by) = &summary.placed_by {
        fields.push(("placed by", line(by)));
    }
    // What the operator's policy says of it, while that still matters.
    if let (Some(judged), State::Pending) = (&summary.judgement, summary.state) {
        // The summary names its rule ("rule NAME: ...").
        fields.push(("policy", line(&judged.summary)));
        if let Some(reason) = &judged.held {
            fields.push(("held", line(reason)));
        }
        if let Some(next) = &judged.next {
            fields.push((
                "next",
                format!(
                    "{} ({}): {}",
                    local_time(next.at),
                    until(next.at, now),
                    line(&next.what)
                ),
            ));
        }
    }
    if let Some(back) = summary.snoozed_until.filter(|at| *at > now) {
        fields.push((
            "snoozed",
            format!(
                "until {} ({}; answer-inbox unsnooze {} ends it)",
                local_time(back),
                until(back, now),
                line(&summary.id)
            ),
        ));
    }
    fields.push((
        "placed",
        format!(
            "{} ({} ago)",
            local_time(summary.placed_at),
            age(summary.placed_at, now)
        ),
    ));
    if let Some(deadline) = summary.deadline {
        let when = if summary.state == State::Pending {
            format!("{} ({})", local_time(deadline), until(deadline, now))
        } else {
            local_time(deadline)
        };
        fields.push(("expires", when));
    }
    if let Some(settled) = summary.settled_at {
        fields.push(("settled", local_time(settled)));
    }
    text.push_str(&key_values(&fields, "  "));

    if let Some(request) = &detail.request {
        text.push('\n');
        text.push_str(&questions(request));
    }
    if let Some(outcome) = &detail.outcome {
        text.push('\n');
        text.push_str(&outcome_text(outcome));
    }
    if !events.is_empty() {
        let _ = writeln!(text, "\nHistory");
        for event in events {
            let _ = writeln!(
                text,
                "  {}  {}",
                local_time(event.at),
                event_text(&event.kind, &event.detail)
            );
        }
    }
    match (&detail.request, &summary.blocked) {
        (Some(request), None) if summary.state == State::Pending => {
            let _ = writeln!(
                text,
                "\nAnswer with: answer-inbox answer {} --version {} --set QID=VALUE ... \
                 (or --decline REASON)",
                line(&summary.id),
                &request.sha256[..request.sha256.len().min(12)]
            );
        }
        (_, Some(_)) if summary.state == State::Pending => {
            let _ = writeln!(
                text,
                "\nNobody can answer this request here; its asker may cancel it and ask again."
            );
        }
        _ => {}
    }
    text
}

fn key_values(fields: &[(&str, String)], prefix: &str) -> String {
    let width = fields.iter().map(|(k, _)| k.len()).max().unwrap_or(0) + 1;
    fields
        .iter()
        .map(|(key, value)| format!("{prefix}{:<width$} {value}\n", format!("{key}:")))
        .collect()
}

fn questions(request: &Request) -> String {
    let mut text = String::from("Questions\n");
    for (index, question) in request.questions.iter().enumerate() {
        if index > 0 {
            text.push('\n');
        }
        text.push_str(&question_text(index + 1, question));
    }
    if request.confirm_title.is_some() || request.confirm_description.is_some() {
        let _ = writeln!(text, "\nBefore submitting");
        if let Some(title) = &request.confirm_title {
            let _ = writeln!(text, "  {}", line(title));
        }
        if let Some(description) = &request.confirm_description {
            let _ = writeln!(text, "{}", indent(&lines(description), "    "));
        }
    }
    text
}

fn question_text(number: usize, question: &Question) -> String {
    let mut text = String::new();
    let required = match &question.rules.required_if {
        _ if question.required => "required".to_owned(),
        Some(condition) => format!(
            "required when {} is {}",
            line(&condition.question),
            answer_value(&condition.equals)
        ),
        None => "optional".to_owned(),
    };
    let label = question
        .label
        .as_deref()
        .map(|l| format!(" \"{}\"", line(l)))
        .unwrap_or_default();
    let _ = writeln!(
        text,
        "  {number}. {}{label}  [{}, {required}]",
        line(&question.id),
        question.wire_type.as_str()
    );
    let _ = writeln!(text, "{}", indent(&lines(&question.question), "     "));
    if let Some(description) = &question.description {
        let _ = writeln!(text, "{}", indent(&lines(description), "       "));
    }
    let default = question.default.as_ref();
    // A default among the listed choices is marked there; any other is printed below.
    let mut default_marked = false;
    match question.kind {
        QuestionKind::Confirm => {
            let _ = writeln!(text, "     answer: yes or no");
        }
        QuestionKind::Choice | QuestionKind::MultiChoice => {
            let what = if question.kind == QuestionKind::MultiChoice {
                "options (any of them; repeat --set for each):"
            } else {
                "options (one of them):"
            };
            let _ = writeln!(text, "     {what}");
            let defaults: Vec<&str> = match default {
                Some(Value::String(one)) => vec![one.as_str()],
                Some(Value::Array(many)) => many.iter().filter_map(Value::as_str).collect(),
                _ => Vec::new(),
            };
            default_marked =
                !defaults.is_empty() && defaults.iter().all(|id| question.choice(id).is_some());
            for choice in &question.choices {
                let mut shown = format!("       - {}", line(&choice.id));
                if choice.label != choice.id {
                    let _ = write!(shown, " ({})", line(&choice.label));
                }
                if defaults.contains(&choice.id.as_str()) {
                    shown.push_str("  [default]");
                }
                let _ = writeln!(text, "{shown}");
                if let Some(description) = &choice.description {
                    let _ = writeln!(text, "{}", indent(&lines(description), "           "));
                }
            }
            if question.allow_custom {
                let _ = writeln!(text, "     fill-in answers allowed");
            }
        }
        QuestionKind::Text => {
            if let Some(pattern) = &question.pattern {
                let _ = writeln!(text, "     must match: {}", line(pattern));
            }
        }
    }
    let rules = rules_in_words(&question.rules);
    if !rules.is_empty() {
        let _ = writeln!(text, "     rules: {}", rules.join(", "));
    }
    match default.filter(|_| !default_marked) {
        Some(Value::Array(none)) if none.is_empty() => {
            let _ = writeln!(text, "     default: none of them");
        }
        Some(value) => {
            let value = answer_value(value);
            match value.split_once('\n') {
                // A multi-line default (JSON to edit, a template) keeps its shape, indented.
                Some(_) => {
                    let _ = writeln!(text, "     default:\n{}", indent(&value, "       "));
                }
                None => {
                    let _ = writeln!(text, "     default: {value}");
                }
            }
        }
        None => {}
    }
    text
}

/// A question's rules beyond its type and pattern, as a CLI user must meet them with `--set`.
fn rules_in_words(rules: &Rules) -> Vec<String> {
    let mut words = Vec::new();
    if let Some(format) = rules.format {
        words.push(
            match format {
                TextFormat::Integer => "an integer",
                TextFormat::Number => "a number",
                TextFormat::Email => "an email address",
                TextFormat::Uri => "an absolute URI",
                TextFormat::Date => "a date (YYYY-MM-DD)",
                TextFormat::DateTime => "a date and time (RFC 3339)",
                TextFormat::JsonObject => "a JSON object",
            }
            .to_owned(),
        );
    }
    let mut bound = |what: &str, value: Option<String>| {
        if let Some(value) = value {
            words.push(format!("{what} {value}"));
        }
    };
    bound("at least", rules.minimum.map(|n| n.to_string()));
    bound("at most", rules.maximum.map(|n| n.to_string()));
    let count =
        |noun: &'static str| move |n: u64| format!("{n} {noun}{}", if n == 1 { "" } else { "s" });
    bound("at least", rules.min_length.map(count("character")));
    bound("at most", rules.max_length.map(count("character")));
    bound("at least", rules.min_items.map(count("pick")));
    bound("at most", rules.max_items.map(count("pick")));
    words
}

/// An answer value: `yes`/`no`, a quoted string, or a list. A string keeps its newlines
/// (callers show a multi-line value as an indented block); nothing hidden is shown raw.
fn answer_value(value: &Value) -> String {
    match value {
        Value::Bool(true) => "yes".to_owned(),
        Value::Bool(false) => "no".to_owned(),
        Value::String(text) => format!("\"{}\"", lines(text)),
        Value::Array(items) => {
            let items: Vec<String> = items.iter().map(answer_value).collect();
            format!("[{}]", items.join(", "))
        }
        other => other.to_string(),
    }
}

fn outcome_text(outcome: &Outcome) -> String {
    let mut text = String::from("Outcome\n");
    let fields = vec![
        ("status", outcome.status.as_str().to_owned()),
        ("by", line(&outcome.answered_by)),
        ("at", local_time(outcome.answered_at)),
        ("instance", line(&outcome.instance)),
    ];
    text.push_str(&key_values(&fields, "  "));
    if let Some(reason) = &outcome.reason {
        let _ = writeln!(text, "  reason:   {}", line(reason));
    }
    if !outcome.answers.is_empty() {
        let _ = writeln!(text, "  answers:");
        let width = outcome
            .answers
            .keys()
            .map(|k| line(k).chars().count())
            .max()
            .unwrap_or(0);
        for (id, value) in &outcome.answers {
            let mut marks = Vec::new();
            if outcome.custom.contains(id) {
                marks.push("fill-in");
            }
            if outcome.defaulted.contains(id) {
                marks.push("default");
            }
            let marks = if marks.is_empty() {
                String::new()
            } else {
                format!("  ({})", marks.join(", "))
            };
            let shown_id = line(id);
            let value = answer_value(value);
            if value.contains('\n') {
                // A long answer keeps its shape, indented under its id: no line of it can
                // pass for another answer.
                let _ = writeln!(
                    text,
                    "    {shown_id}:{marks}\n{}",
                    indent(&value, "        ")
                );
            } else {
                let _ = writeln!(text, "    {shown_id:<width$}  {value}{marks}");
            }
            if let Some(note) = outcome.notes.as_ref().and_then(|n| n.get(id)) {
                let _ = writeln!(text, "    {:<width$}  note: {}", "", line(note));
            }
        }
    }
    if let Some(errors) = &outcome.errors {
        let _ = writeln!(text, "  errors:\n{}", indent(&problem_lines(errors), "  "));
    }
    text
}

/// One history entry: `answered by operator:ann on host/instance`, `cancelled, reason: ...`.
fn event_text(kind: &str, detail: &Value) -> String {
    let mut text = line(kind);
    let Value::Object(map) = detail else {
        return text;
    };
    if let Some(Value::String(by)) = map.get("answered_by") {
        let _ = write!(text, " by {}", line(by));
    }
    if let Some(Value::String(instance)) = map.get("instance") {
        let _ = write!(text, " on {}", line(instance));
    }
    for (key, value) in map {
        match (key.as_str(), value) {
            (_, Value::Null) => {}
            (_, Value::String(s)) if s.is_empty() => {}
            // Shown above, or on the page already.
            ("answered_by" | "instance" | "title", _) => {}
            ("errors", Value::Array(errors)) => {
                let messages: Vec<String> = errors
                    .iter()
                    .filter_map(|e| serde_json::from_value::<Problem>(e.clone()).ok())
                    .map(|p| problem_line(&p))
                    .collect();
                let _ = write!(text, ": {}", messages.join("; "));
            }
            (key, value) => {
                let _ = write!(text, ", {}: {}", line(key), line(&value_text(value)));
            }
        }
    }
    text
}

/// The end of the `list` table when requests ask the same questions: one line per group,
/// its size and every id in it, oldest first, and how to answer them at once.
pub fn alike_lines(groups: &[AlikeGroup]) -> String {
    let mut text = String::from(
        "\nAlike (the same questions; `answer-inbox answer ID --alike` answers a group at once):\n",
    );
    for group in groups {
        let ids: Vec<String> = group.members.iter().map(|m| line(&m.id)).collect();
        let _ = writeln!(text, "  {} alike: {}", group.members.len(), ids.join(", "));
    }
    text
}

/// The screen `answer --alike` shows before it answers: every request it will settle
/// (id, title, source, the version each answer is bound to) and the answers each gets.
/// `members` pairs each request with its version (SHA-256 hex).
pub fn alike_screen(
    fingerprint: &str,
    members: &[(&RequestSummary, &str)],
    answers: &AnswerSet,
) -> String {
    let mut text = if members.len() == 1 {
        "No other pending request asks the same questions; this one is answered alone, \
         bound to the version listed:\n\n"
            .to_owned()
    } else {
        format!(
            "{} requests ask the same questions (fingerprint {}); each gets its own \
             outcome, bound to the version listed:\n\n",
            members.len(),
            short_hex(fingerprint)
        )
    };
    let mut table = vec![["ID", "TITLE", "SOURCE", "VERSION"]
        .map(str::to_owned)
        .to_vec()];
    for (summary, version) in members {
        table.push(vec![
            line(&summary.id),
            truncate(&line(&summary.title), TITLE_WIDTH),
            source_short(&summary.source),
            short_hex(version).to_owned(),
        ]);
    }
    text.push_str(&indent(&align(&table), "  "));
    text.push_str("\n\nThe answers, the same for each:\n");
    let width = answers
        .answers
        .keys()
        .map(|k| line(k).chars().count())
        .max()
        .unwrap_or(0);
    for (id, value) in &answers.answers {
        let mark = if answers.defaulted.contains(id) {
            "  (default)"
        } else if answers.custom.contains(id) {
            "  (fill-in)"
        } else {
            ""
        };
        let value = answer_value(value);
        if value.contains('\n') {
            let _ = writeln!(text, "  {}:{mark}\n{}", line(id), indent(&value, "      "));
        } else {
            let _ = writeln!(text, "  {:<width$}  {value}{mark}", line(id));
        }
    }
    text
}

/// A hash as people read it: its first 12 hex digits (what `--version` needs at least).
fn short_hex(hex: &str) -> &str {
    hex.get(..12).unwrap_or(hex)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spans_are_short() {
        let now = Utc::now();
        assert_eq!(age(now - TimeDelta::seconds(42), now), "42s");
        assert_eq!(age(now - TimeDelta::minutes(5), now), "5m");
        assert_eq!(age(now - TimeDelta::hours(2), now), "2h");
        assert_eq!(age(now - TimeDelta::days(3), now), "3d");
        assert_eq!(until(now + TimeDelta::minutes(4), now), "in 4m");
        assert_eq!(until(now - TimeDelta::minutes(2), now), "overdue 2m");
    }

    #[test]
    fn columns_line_up() {
        let table = vec![
            vec!["ID".to_owned(), "TITLE".to_owned()],
            vec!["a-long-id".to_owned(), "x".to_owned()],
        ];
        assert_eq!(align(&table), "ID         TITLE\na-long-id  x\n");
    }

    #[test]
    fn long_titles_are_cut() {
        assert_eq!(truncate("abcdef", 4), "abc…");
        assert_eq!(truncate("abc", 4), "abc");
    }
}
