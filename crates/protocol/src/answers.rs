//! Checking answers against a request, and filling in defaults.
//!
//! Every path that produces an outcome goes through here: the operator's form, the CLI's
//! `answer`, notification buttons, and the policies. So a value in an outcome is always one
//! the request allows, and `custom`/`defaulted` always say where a value came from.

use std::collections::BTreeMap;
use std::sync::OnceLock;

use regex::Regex;
use serde_json::{Map, Number, Value};

use crate::limits::MAX_ANSWER_CHARS;
use crate::model::{Question, QuestionKind, Request, Rules, TextFormat};
use crate::problem::{pointer_token, Problem};

pub use crate::outcome::AnswerSet;

/// What defaults alone can answer.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Filled {
    pub set: AnswerSet,
    /// Required questions without a default: only a person can answer them.
    pub missing_required: Vec<String>,
}

/// Checks one value against one question. Returns the value to record (a choice given by its
/// label becomes its id) and whether it is fill-in text. The error is a plain sentence.
pub fn check_value(question: &Question, value: &Value) -> Result<(Value, bool), String> {
    match question.kind {
        QuestionKind::Confirm => match value {
            Value::Bool(_) => Ok((value.clone(), false)),
            _ => Err(format!("expected true or false, got {}", describe(value))),
        },
        QuestionKind::Choice => match value {
            Value::String(text) => {
                let (id, custom) = check_choice(question, text)?;
                Ok((Value::String(id), custom))
            }
            _ => Err(format!(
                "expected one of the options as a string, got {}",
                describe(value)
            )),
        },
        QuestionKind::MultiChoice => {
            let Value::Array(items) = value else {
                return Err(format!(
                    "expected an array of options, got {}",
                    describe(value)
                ));
            };
            let mut picked: Vec<Value> = Vec::with_capacity(items.len());
            let mut any_custom = false;
            for item in items {
                let Value::String(text) = item else {
                    return Err(format!(
                        "expected every entry to be an option string, got {}",
                        describe(item)
                    ));
                };
                let (id, custom) = check_choice(question, text)?;
                if picked.iter().any(|p| p.as_str() == Some(id.as_str())) {
                    return Err(format!("\"{id}\" is picked more than once"));
                }
                any_custom |= custom;
                picked.push(Value::String(id));
            }
            check_item_count(&question.rules, picked.len())?;
            Ok((Value::Array(picked), any_custom))
        }
        QuestionKind::Text => match value {
            Value::String(text) => {
                check_length(text)?;
                // Before the pattern: "expected an integer" says more than the pattern that
                // stands for it.
                check_text_rules(&question.rules, text)?;
                if let Some(pattern) = &question.pattern {
                    let regex = regex::Regex::new(pattern)
                        .map_err(|_| "the question's pattern does not compile".to_owned())?;
                    if !regex.is_match(text) {
                        return Err(format!(
                            "\"{}\" does not match the pattern {}",
                            shortened(text),
                            shortened(pattern)
                        ));
                    }
                }
                Ok((value.clone(), false))
            }
            _ => Err(format!("expected a string, got {}", describe(value))),
        },
    }
}

fn check_choice(question: &Question, text: &str) -> Result<(String, bool), String> {
    if question.choice(text).is_some() {
        return Ok((text.to_owned(), false));
    }
    // Operators think in labels ("PostgreSQL"); outcomes carry ids ("pg").
    let mut by_label = question.choices.iter().filter(|c| c.label == text);
    if let (Some(choice), None) = (by_label.next(), by_label.next()) {
        return Ok((choice.id.clone(), false));
    }
    if question.allow_custom {
        if text.trim().is_empty() {
            return Err("fill-in text is empty".to_owned());
        }
        check_length(text)?;
        return Ok((text.to_owned(), true));
    }
    if question.choices.is_empty() {
        return Err(format!(
            "\"{text}\" is not one of the options (the question has none)"
        ));
    }
    let options: Vec<String> = question
        .choices
        .iter()
        .map(|c| format!("\"{}\"", c.id))
        .collect();
    Err(format!(
        "\"{text}\" is not one of the options: {}",
        options.join(", ")
    ))
}

fn check_length(text: &str) -> Result<(), String> {
    let chars = text.chars().count();
    if chars > MAX_ANSWER_CHARS {
        return Err(format!(
            "the text is {chars} characters, over the limit of {MAX_ANSWER_CHARS}"
        ));
    }
    Ok(())
}

/// Patterns for text questions in the `integer` and `number` formats, so a form can check
/// as the operator types; [`check_text_rules`] checks the same and more (range, bounds).
pub(crate) const INTEGER_PATTERN: &str = r"^[+-]?[0-9]+$";
pub(crate) const NUMBER_PATTERN: &str = r"^[+-]?([0-9]+([.][0-9]*)?|[.][0-9]+)([eE][+-]?[0-9]+)?$";
/// Patterns that give a form a hint for the other formats; the real check is in code.
pub(crate) const EMAIL_PATTERN: &str = r"^[^@\s]+@[^@\s]+$";
pub(crate) const URI_PATTERN: &str = r"^[A-Za-z][A-Za-z0-9+.-]*:\S+$";
pub(crate) const DATE_PATTERN: &str = r"^[0-9]{4}-[0-9]{2}-[0-9]{2}$";
pub(crate) const DATE_TIME_PATTERN: &str = r"^[0-9]{4}-[0-9]{2}-[0-9]{2}[Tt ][0-9]{2}:[0-9]{2}:[0-9]{2}([.][0-9]+)?([Zz]|[+-][0-9]{2}:[0-9]{2})$";
pub(crate) const JSON_OBJECT_PATTERN: &str = r"^\s*\{[\s\S]*\}\s*$";

fn regex_of(cell: &'static OnceLock<Regex>, pattern: &str) -> &'static Regex {
    cell.get_or_init(|| Regex::new(pattern).expect("the built-in patterns compile"))
}

fn matches(format: TextFormat, text: &str) -> bool {
    static INTEGER: OnceLock<Regex> = OnceLock::new();
    static NUMBER: OnceLock<Regex> = OnceLock::new();
    static EMAIL: OnceLock<Regex> = OnceLock::new();
    static URI: OnceLock<Regex> = OnceLock::new();
    static DATE: OnceLock<Regex> = OnceLock::new();
    let (cell, pattern) = match format {
        TextFormat::Integer => (&INTEGER, INTEGER_PATTERN),
        TextFormat::Number => (&NUMBER, NUMBER_PATTERN),
        TextFormat::Email => (&EMAIL, EMAIL_PATTERN),
        TextFormat::Uri => (&URI, URI_PATTERN),
        TextFormat::Date => (&DATE, DATE_PATTERN),
        // Checked by parsing instead: a pattern cannot tell a real date-time or JSON object.
        TextFormat::DateTime | TextFormat::JsonObject => return true,
    };
    regex_of(cell, pattern).is_match(text)
}

/// The number a text answer in the `integer` or `number` format stands for, as JSON writes
/// it: integers stay integers (`"+007"` is 7), anything else is a float.
pub fn parse_number(text: &str, integer_only: bool) -> Result<Number, String> {
    let format = if integer_only {
        TextFormat::Integer
    } else {
        TextFormat::Number
    };
    if !matches(format, text) {
        return Err(if integer_only {
            format!(
                "expected a whole number (digits, optionally signed), got \"{}\"",
                shortened(text)
            )
        } else {
            format!(
                "expected a number such as 42 or -1.5, got \"{}\"",
                shortened(text)
            )
        });
    }
    if matches(TextFormat::Integer, text) {
        if let Ok(n) = text.parse::<i64>() {
            return Ok(n.into());
        }
        if let Ok(n) = text.trim_start_matches('+').parse::<u64>() {
            return Ok(n.into());
        }
        if integer_only {
            return Err(format!("{} is too large", shortened(text)));
        }
    }
    text.parse::<f64>()
        .ok()
        .and_then(Number::from_f64)
        .ok_or_else(|| format!("{} is too large", shortened(text)))
}

fn check_text_rules(rules: &Rules, text: &str) -> Result<(), String> {
    if rules.is_empty() {
        return Ok(());
    }
    let chars = text.chars().count() as u64;
    if let Some(min) = rules.min_length.filter(|&min| chars < min) {
        return Err(format!(
            "the text is {chars} characters; at least {min} are needed"
        ));
    }
    if let Some(max) = rules.max_length.filter(|&max| chars > max) {
        return Err(format!(
            "the text is {chars} characters; at most {max} are allowed"
        ));
    }
    let Some(format) = rules.format else {
        return Ok(());
    };
    match format {
        TextFormat::Integer | TextFormat::Number => {
            let number = parse_number(text, format == TextFormat::Integer)?;
            let value = number.as_f64().unwrap_or(f64::NAN);
            if let Some(min) = rules.minimum.filter(|&min| value < min) {
                return Err(format!("{number} is less than the minimum, {min}"));
            }
            if let Some(max) = rules.maximum.filter(|&max| value > max) {
                return Err(format!("{number} is more than the maximum, {max}"));
            }
            Ok(())
        }
        TextFormat::Email if !matches(format, text) => Err(format!(
            "expected an email address (name@domain), got \"{}\"",
            shortened(text)
        )),
        TextFormat::Uri if !matches(format, text) => Err(format!(
            "expected an absolute URI such as https://example.com/, got \"{}\"",
            shortened(text)
        )),
        TextFormat::Date
            if !matches(format, text)
                || chrono::NaiveDate::parse_from_str(text, "%Y-%m-%d").is_err() =>
        {
            Err(format!(
                "expected a date as YYYY-MM-DD, got \"{}\"",
                shortened(text)
            ))
        }
        TextFormat::DateTime if chrono::DateTime::parse_from_rfc3339(text).is_err() => {
            Err(format!(
                "expected a date and time as RFC 3339 (2026-12-03T10:00:00Z), got \"{}\"",
                shortened(text)
            ))
        }
        TextFormat::JsonObject => match serde_json::from_str::<Value>(text) {
            Ok(Value::Object(_)) => Ok(()),
            Ok(other) => Err(format!(
                "expected a JSON object {{...}}, got {}",
                describe(&other)
            )),
            Err(error) => Err(format!(
                "expected a JSON object {{...}}, but it is not valid JSON: {error}"
            )),
        },
        TextFormat::Email | TextFormat::Uri | TextFormat::Date | TextFormat::DateTime => Ok(()),
    }
}

fn check_item_count(rules: &Rules, picked: usize) -> Result<(), String> {
    let picked = picked as u64;
    if let Some(min) = rules.min_items.filter(|&min| picked < min) {
        return Err(format!("{picked} picked; pick at least {min}"));
    }
    if let Some(max) = rules.max_items.filter(|&max| picked > max) {
        return Err(format!("{picked} picked; pick at most {max}"));
    }
    Ok(())
}

/// A long answer quoted in an error message: its start, so that a 10,000-character answer
/// does not become a 10,000-character message.
fn shortened(text: &str) -> String {
    const SHOWN: usize = 60;
    match text.char_indices().nth(SHOWN) {
        Some((cut, _)) => format!("{}…", &text[..cut]),
        None => text.to_owned(),
    }
}

fn describe(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// Whether a given value counts as "no answer" for this question.
fn is_blank(question: &Question, value: &Value) -> bool {
    match value {
        Value::Null => true,
        Value::String(text) => question.kind == QuestionKind::Text && text.is_empty(),
        Value::Array(items) => question.kind == QuestionKind::MultiChoice && items.is_empty(),
        _ => false,
    }
}

/// Checks an operator's answers (an object keyed by question id) against the request.
///
/// Skipped non-required questions take their default when they have one; required questions
/// must be answered. Every problem is reported, with a pointer into the answers object.
pub fn check_answers(
    request: &Request,
    given: &Map<String, Value>,
) -> Result<AnswerSet, Vec<Problem>> {
    let mut problems = Vec::new();
    for key in given.keys() {
        if request.question(key).is_none() {
            problems.push(Problem::new(
                format!("/{}", pointer_token(key)),
                format!("there is no question \"{key}\" in this request"),
            ));
        }
    }
    let mut set = AnswerSet::default();
    for question in &request.questions {
        let at = format!("/{}", pointer_token(&question.id));
        match given.get(&question.id) {
            Some(value) if !is_blank(question, value) => match check_value(question, value) {
                Ok((value, custom)) => {
                    if custom {
                        set.custom.push(question.id.clone());
                    }
                    set.answers.insert(question.id.clone(), value);
                }
                Err(message) => problems.push(Problem::new(at, message)),
            },
            _ if question.required => problems.push(Problem::new(
                at,
                format!("question \"{}\" is required and has no answer", question.id),
            )),
            _ => {
                if let Some(default) = &question.default {
                    set.answers.insert(question.id.clone(), default.clone());
                    set.defaulted.push(question.id.clone());
                }
            }
        }
    }
    for id in unmet_conditions(request, &set.answers) {
        let question = request.question(&id).expect("listed from the request");
        // A value that was given but refused has its problem already.
        if given
            .get(&id)
            .is_some_and(|value| !is_blank(question, value))
        {
            continue;
        }
        let condition = question.rules.required_if.as_ref().expect("listed for it");
        problems.push(Problem::new(
            format!("/{}", pointer_token(&id)),
            format!(
                "question \"{id}\" is required when \"{}\" is {}",
                condition.question, condition.equals
            ),
        ));
    }
    if problems.is_empty() {
        Ok(set)
    } else {
        Err(problems)
    }
}

/// Answers every question that has a default with it; lists required questions without one.
pub fn fill_defaults(request: &Request) -> Filled {
    let mut filled = Filled::default();
    for question in &request.questions {
        match &question.default {
            Some(default) => {
                filled
                    .set
                    .answers
                    .insert(question.id.clone(), default.clone());
                filled.set.defaulted.push(question.id.clone());
            }
            None if question.required => filled.missing_required.push(question.id.clone()),
            None => {}
        }
    }
    let unmet = unmet_conditions(request, &filled.set.answers);
    filled.missing_required.extend(unmet);
    filled
}

/// Questions without an answer that are required because another question has the answer
/// their `required_if` names.
fn unmet_conditions(request: &Request, answers: &BTreeMap<String, Value>) -> Vec<String> {
    request
        .questions
        .iter()
        .filter(|q| !answers.contains_key(&q.id))
        .filter(|q| {
            q.rules
                .required_if
                .as_ref()
                .is_some_and(|c| answers.get(&c.question) == Some(&c.equals))
        })
        .map(|q| q.id.clone())
        .collect()
}

/// Turns command-line text (`--set QID=VALUE`, repeated for multi-choice) into the JSON value
/// the question takes. The value is checked later, with everything else.
pub fn coerce_cli_values(question: &Question, raw: &[String]) -> Result<Value, String> {
    let single = || match raw {
        [one] => Ok(one.clone()),
        _ => Err(format!(
            "question \"{}\" takes one value, got {}",
            question.id,
            raw.len()
        )),
    };
    Ok(match question.kind {
        QuestionKind::Confirm => {
            let text = single()?;
            match text.to_ascii_lowercase().as_str() {
                "y" | "yes" | "true" | "1" => Value::Bool(true),
                "n" | "no" | "false" | "0" => Value::Bool(false),
                _ => {
                    return Err(format!(
                        "question \"{}\" is yes/no: give yes or no, not \"{text}\"",
                        question.id
                    ))
                }
            }
        }
        QuestionKind::Choice | QuestionKind::Text => Value::String(single()?),
        QuestionKind::MultiChoice => {
            // `--set tags=` means "none of them".
            Value::Array(
                raw.iter()
                    .filter(|s| !s.is_empty())
                    .cloned()
                    .map(Value::String)
                    .collect(),
            )
        }
    })
}
