//! Bytes in, a normalised [`Request`] or every problem out.
//!
//! Three passes, each reporting all it finds: the raw bytes (size, UTF-8, nesting depth,
//! JSON syntax), the structure (the generated JSON Schema of the request's shape), and the
//! meaning (choices present, defaults valid, patterns compile, ids unique and matching the
//! file name). Meaning is checked per question even when another question is structurally
//! broken, so an asker fixes everything in one go.
//!
//! The shape (the inbox's own three, or another system's dialect) is decided from the
//! top-level keys before the structure pass, which then checks against that shape's schema
//! only. The other dialects' meaning is in `src/dialects/`.

use std::collections::HashMap;

pub use crate::digest::sha256_hex;
use serde::Deserialize;
use serde_json::Value;

use crate::answers::check_value;
use crate::dialects::{ask_user, elicitation, interrupt, langchain};
use crate::duplicate_keys::duplicate_keys;
use crate::labels::{check_choice_labels, LabelAt};
use crate::limits::{MAX_DEPTH, MAX_FILE_BYTES};
use crate::model::{Choice, Expiry, Mode, Question, QuestionKind, Request};
use crate::problem::Problem;
use crate::schema::shape_validators;
use crate::shape::{detect_shape, Shape};
use crate::wire::{ElicitationMode, RequestFields, Source, WireQuestion};
use crate::wording::{check_pattern, default_message, positional_id, short};

/// Parses and validates one request file.
///
/// `file_id` is the id named by the file (`<id>.json`); when given, an `id` in the body must
/// equal it.
pub fn parse_request(bytes: &[u8], file_id: Option<&str>) -> Result<Request, Vec<Problem>> {
    let value = parse_json(bytes)?;
    // parse_json succeeded, so the bytes are UTF-8 JSON.
    let mut problems = std::str::from_utf8(bytes)
        .map(duplicate_keys)
        .unwrap_or_default();
    let shape = match detect_shape(&value) {
        Ok(shape) => shape,
        Err(problem) => {
            problems.push(problem);
            return Err(problems);
        }
    };
    problems.extend(
        shape_validators()
            .of(shape)
            .iter_errors(&value)
            .map(schema_problem),
    );

    let mut request = Request {
        id: file_id.map(str::to_owned),
        title: None,
        source: Source::default(),
        questions: Vec::new(),
        confirm_title: None,
        confirm_description: None,
        mode: Default::default(),
        expiry: None,
        priority: Default::default(),
        sha256: sha256_hex(bytes),
        origin: None,
    };
    match shape {
        Shape::Envelope => request.questions = own_questions(&value, "/questions", &mut problems),
        Shape::Interactive => {
            request.questions = own_questions(&value, "/interactiveQuestions", &mut problems)
        }
        Shape::Questions => request.questions = own_questions(&value, "", &mut problems),
        Shape::Elicitation => elicitation::normalise(&value, bytes, &mut request, &mut problems),
        Shape::AskUserQuestion => ask_user::normalise(&value, &mut request, &mut problems),
        Shape::HumanInterrupt => {
            interrupt::normalise(&value, bytes, "", &mut request, &mut problems)
        }
        Shape::HumanInterruptList => {
            interrupt::normalise(&value, bytes, "/0", &mut request, &mut problems)
        }
        Shape::LangChainHitl => langchain::normalise(&value, bytes, &mut request, &mut problems),
    }

    // Every shape but the two bare lists of questions may carry the envelope's fields.
    let fields_at = match shape {
        Shape::Interactive | Shape::Questions => None,
        Shape::HumanInterruptList => Some("/0"),
        _ => Some(""),
    };
    if let Some(at) = fields_at {
        let fields = value.pointer(at).unwrap_or(&Value::Null);
        check_envelope_fields(fields, at, file_id, &mut problems);
        if problems.is_empty() {
            match apply_fields(&mut request, fields, shape) {
                Ok(()) => {}
                // The schema pass accepts what serde accepts; this is a safety net.
                Err(error) => problems.push(Problem::new(at, error.to_string())),
            }
        }
    }

    if problems.is_empty() {
        Ok(request)
    } else {
        Err(problems)
    }
}

/// The questions of the inbox's own shapes (envelope, bare array, `interactiveQuestions`).
fn own_questions(value: &Value, questions_at: &str, problems: &mut Vec<Problem>) -> Vec<Question> {
    let raw_questions = questions_value(value, questions_at);
    let mut questions = Vec::new();
    check_question_ids(raw_questions, questions_at, problems);
    for (index, raw) in raw_questions.iter().enumerate() {
        let at = format!("{questions_at}/{index}");
        // Structure problems of this question were reported by the schema pass.
        if let Ok(wire) = serde_json::from_value::<WireQuestion>(raw.clone()) {
            if let Some(question) = normalise_question(wire, index, &at, problems) {
                questions.push(question);
            }
        }
    }
    questions
}

fn parse_json(bytes: &[u8]) -> Result<Value, Vec<Problem>> {
    let fail = |message: String| Err(vec![Problem::new("", message)]);
    if bytes.len() as u64 > MAX_FILE_BYTES {
        return fail(format!(
            "the file is {} bytes, over the limit of {MAX_FILE_BYTES} bytes (1 MiB)",
            bytes.len()
        ));
    }
    let text = match std::str::from_utf8(bytes) {
        Ok(text) => text,
        Err(error) => {
            return fail(format!(
                "the file is not UTF-8 text (invalid byte at offset {})",
                error.valid_up_to()
            ))
        }
    };
    if text.trim().is_empty() {
        return fail("the file is empty".to_owned());
    }
    // JSON forbids a BOM (RFC 8259 section 8.1) and the parser's "expected value at line 1
    // column 1" would not say why; editors on Windows add one silently.
    if text.starts_with('\u{feff}') {
        return fail(
            "the file starts with a byte-order mark (BOM), which JSON does not allow; save it \
             as UTF-8 without a BOM"
                .to_owned(),
        );
    }
    if nesting_depth(text) > MAX_DEPTH {
        return fail(format!("the JSON nests deeper than {MAX_DEPTH} levels"));
    }
    serde_json::from_str(text).or_else(|error| fail(format!("the file is not valid JSON: {error}")))
}

/// The deepest nesting of arrays and objects, counted without parsing, so a hostile file
/// cannot exhaust the parser's stack or memory before it is refused.
fn nesting_depth(text: &str) -> usize {
    let (mut depth, mut deepest) = (0usize, 0usize);
    let (mut in_string, mut escaped) = (false, false);
    for byte in text.bytes() {
        if in_string {
            match byte {
                _ if escaped => escaped = false,
                b'\\' => escaped = true,
                b'"' => in_string = false,
                _ => {}
            }
            continue;
        }
        match byte {
            b'"' => in_string = true,
            b'[' | b'{' => {
                depth += 1;
                deepest = deepest.max(depth);
            }
            b']' | b'}' => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    deepest
}

/// A schema error as a problem. Long offending values are not echoed back: a 1 MiB string
/// helps nobody in an error list.
fn schema_problem(error: jsonschema::ValidationError<'_>) -> Problem {
    let pointer = error.instance_path().to_string();
    let shown = error.instance().to_string();
    let message = match error.kind() {
        // The library shortens long lists of allowed values; an asker needs all of them.
        jsonschema::error::ValidationErrorKind::Enum { options } => {
            let allowed: Vec<String> = options
                .as_array()
                .map(|values| values.iter().map(Value::to_string).collect())
                .unwrap_or_default();
            format!("{} is not one of {}", short(&shown), allowed.join(", "))
        }
        _ if shown.len() <= 80 => error.to_string(),
        _ => error.masked().to_string(),
    };
    Problem::new(pointer, message)
}

fn questions_value<'a>(value: &'a Value, at: &str) -> &'a [Value] {
    value
        .pointer(at)
        .and_then(Value::as_array)
        .map(Vec::as_slice)
        .unwrap_or(&[])
}

/// Every question id, given or by position, must be unique: it is the key of its answer.
fn check_question_ids(raw: &[Value], questions_at: &str, problems: &mut Vec<Problem>) {
    let mut seen: HashMap<String, usize> = HashMap::new();
    for (index, question) in raw.iter().enumerate() {
        let (id, given) = match question.get("id").and_then(Value::as_str) {
            Some(id) => (id.to_owned(), true),
            None => (positional_id(index), false),
        };
        if let Some(first) = seen.get(&id) {
            let at = if given {
                format!("{questions_at}/{index}/id")
            } else {
                format!("{questions_at}/{index}")
            };
            problems.push(Problem::new(
                at,
                format!(
                    "question id \"{id}\" is already used by question {}",
                    first + 1
                ),
            ));
        } else {
            seen.insert(id, index);
        }
    }
}

fn normalise_question(
    wire: WireQuestion,
    index: usize,
    at: &str,
    problems: &mut Vec<Problem>,
) -> Option<Question> {
    let (kind, dialect) = QuestionKind::of(wire.kind);
    let before = problems.len();
    let type_name = wire.kind.as_str();

    let choices = if kind.has_choices() {
        normalise_choices(&wire, at, problems)
    } else {
        // The operator would never see them: refused, like a pattern on a non-text question,
        // so that an asker who meant a choice learns it at once.
        let choice_types = match dialect {
            crate::model::Dialect::Interactive => "choice or multiChoice",
            crate::model::Dialect::Structured => "single_choice or multi_choice",
        };
        // An empty list offers nothing either: tools often send `"choices": []` everywhere.
        for (field, given) in [
            (
                "options",
                wire.options.as_ref().is_some_and(|o| !o.is_empty()),
            ),
            (
                "choices",
                wire.choices.as_ref().is_some_and(|c| !c.is_empty()),
            ),
        ] {
            if given {
                problems.push(Problem::new(
                    format!("{at}/{field}"),
                    format!(
                        "{field} only apply to choice questions, not to {type_name}; use \
                         {choice_types} to offer them"
                    ),
                ));
            }
        }
        Vec::new()
    };

    let pattern = match (&wire.pattern, kind) {
        (Some(pattern), QuestionKind::Text) => {
            check_pattern(pattern, &format!("{at}/pattern"), problems);
            Some(pattern.clone())
        }
        (Some(_), _) => {
            problems.push(Problem::new(
                format!("{at}/pattern"),
                format!("a pattern only applies to text questions, not to {type_name}"),
            ));
            None
        }
        (None, _) => None,
    };

    let mut question = Question {
        id: wire.id.unwrap_or_else(|| positional_id(index)),
        kind,
        wire_type: wire.kind,
        dialect,
        question: wire.question,
        description: wire.description,
        label: wire.label,
        choices,
        default: None,
        required: wire.required.unwrap_or(true),
        pattern,
        allow_custom: wire
            .allow_custom
            .unwrap_or(dialect == crate::model::Dialect::Structured)
            && kind.has_choices(),
        rules: Default::default(),
    };

    // Checked even when the question has other problems (a choice without options and a
    // default of "qa" is two mistakes), so the asker sees everything at once.
    if let Some(default) = wire.default {
        match check_value(&question, &default) {
            Ok((value, _custom)) => question.default = Some(value),
            Err(message) => problems.push(Problem::new(
                format!("{at}/default"),
                default_message(message),
            )),
        }
    }
    (problems.len() == before).then_some(question)
}

fn normalise_choices(wire: &WireQuestion, at: &str, problems: &mut Vec<Problem>) -> Vec<Choice> {
    let type_name = wire.kind.as_str();
    let choices: Vec<Choice> = match (&wire.options, &wire.choices) {
        (Some(_), Some(_)) => {
            problems.push(Problem::new(
                at.to_owned(),
                "give either options (a list of strings) or choices ({id, label}), not both",
            ));
            return Vec::new();
        }
        (Some(options), None) => options
            .iter()
            .map(|o| Choice {
                id: o.clone(),
                label: o.clone(),
                description: None,
            })
            .collect(),
        (None, Some(choices)) => choices
            .iter()
            .map(|c| Choice {
                id: c.id.clone(),
                label: c.label.clone(),
                description: c.description.clone(),
            })
            .collect(),
        (None, None) => Vec::new(),
    };
    let field = if wire.choices.is_some() {
        "choices"
    } else {
        "options"
    };
    if choices.is_empty() {
        let wanted = if wire.options.is_none() && wire.choices.is_none() {
            match QuestionKind::of(wire.kind).1 {
                crate::model::Dialect::Interactive => "options",
                crate::model::Dialect::Structured => "choices",
            }
        } else {
            field
        };
        problems.push(Problem::new(
            format!("{at}/{wanted}"),
            format!("a {type_name} question needs at least one entry in {wanted}"),
        ));
    }
    let mut seen = std::collections::HashSet::new();
    for (index, choice) in choices.iter().enumerate() {
        if !seen.insert(choice.id.as_str()) {
            let what = if field == "options" {
                "option"
            } else {
                "choice id"
            };
            let suffix = if field == "options" {
                String::new()
            } else {
                "/id".to_owned()
            };
            problems.push(Problem::new(
                format!("{at}/{field}/{index}{suffix}"),
                format!("{what} \"{}\" appears more than once", choice.id),
            ));
        }
    }
    let label_at = if field == "options" { "" } else { "/label" };
    check_choice_labels(
        choices.iter().enumerate().map(|(index, choice)| LabelAt {
            pointer: format!("{at}/{field}/{index}{label_at}"),
            id: &choice.id,
            label: &choice.label,
        }),
        problems,
    );
    choices
}

/// Checks across envelope fields; `at` points at the object that holds them.
fn check_envelope_fields(
    value: &Value,
    at: &str,
    file_id: Option<&str>,
    problems: &mut Vec<Problem>,
) {
    if let (Some(body_id), Some(file_id)) = (value.get("id").and_then(Value::as_str), file_id) {
        if body_id != file_id {
            problems.push(Problem::new(
                format!("{at}/id"),
                format!(
                    "the id \"{body_id}\" differs from the file name's id \"{file_id}\"; they \
                     must be equal"
                ),
            ));
        }
    }
    if value.get("expires_at").is_some() && value.get("timeout_seconds").is_some() {
        problems.push(Problem::new(
            format!("{at}/timeout_seconds"),
            "give expires_at or timeout_seconds, not both",
        ));
    }
}

/// `mode`, as each shape spells it.
#[derive(Deserialize)]
struct ModeOf<M> {
    mode: Option<M>,
}

/// Applies the envelope fields (`value` is the object holding them) to a request whose
/// questions are already in place. A title the shape derived stays unless one is given.
fn apply_fields(request: &mut Request, value: &Value, shape: Shape) -> serde_json::Result<()> {
    let fields = RequestFields::deserialize(value)?;
    request.mode = if shape == Shape::Elicitation {
        match ModeOf::<ElicitationMode>::deserialize(value)?.mode {
            Some(ElicitationMode::Autonomous) => Mode::Autonomous,
            // `url` was refused earlier; `form` is MCP's word for what the inbox does anyway.
            _ => Mode::Interactive,
        }
    } else {
        ModeOf::<Mode>::deserialize(value)?.mode.unwrap_or_default()
    };
    if request.id.is_none() {
        request.id = fields.id;
    }
    if fields.title.is_some() {
        request.title = fields.title;
    }
    request.source = fields.source.unwrap_or_default();
    request.confirm_title = fields.confirm_title;
    request.confirm_description = fields.confirm_description;
    request.priority = fields.priority.unwrap_or_default();
    request.expiry = match (fields.expires_at, fields.timeout_seconds) {
        (Some(at), _) => Some(Expiry::At(at.to_utc())),
        (None, Some(seconds)) => Some(Expiry::After { seconds }),
        (None, None) => None,
    };
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    const ONE_QUESTION: &str =
        r#""questions": [{"id": "go", "question": "Go?", "type": "confirm"}]"#;

    #[test]
    fn a_byte_order_mark_is_named() {
        let text = format!("\u{feff}{{\"inbox\": 1, {ONE_QUESTION}}}");
        let problems = parse_request(text.as_bytes(), None).unwrap_err();
        assert_eq!(problems.len(), 1, "{problems:?}");
        assert!(
            problems[0].message.contains("byte-order mark"),
            "{problems:?}"
        );
        // A BOM-like character inside a string is just text.
        let text = format!("{{\"title\": \"\u{feff}x\", {ONE_QUESTION}}}");
        assert!(parse_request(text.as_bytes(), None).is_ok());
    }

    #[test]
    fn duplicate_keys_are_refused_wherever_they_are() {
        let text = format!(
            r#"{{"inbox": 1, "mode": "interactive", "mode": "autonomous", "\u0074itle": "a",
                "title": "b", "x": [{{"k": 1, "k": 2}}], {ONE_QUESTION}}}"#
        );
        let problems = parse_request(text.as_bytes(), None).unwrap_err();
        let pointers: Vec<&str> = problems.iter().map(|p| p.pointer.as_str()).collect();
        assert_eq!(pointers, ["/mode", "/title", "/x/0/k"], "{problems:?}");
        assert!(problems[0]
            .message
            .contains("\"mode\" appears more than once"));

        // The same key in different objects, and keys that only look alike, are fine.
        let text = format!(
            r#"{{"a": {{"k": 1}}, "b": {{"k": 1}}, "K": 1, "k": 1, "a~b/": 1, {ONE_QUESTION}}}"#
        );
        assert!(parse_request(text.as_bytes(), None).is_ok());
        // Pointers escape '~' and '/' (RFC 6901).
        let text = format!(r#"{{"a/b": 1, "a/b": 2, {ONE_QUESTION}}}"#);
        assert_eq!(
            parse_request(text.as_bytes(), None).unwrap_err()[0].pointer,
            "/a~1b"
        );
    }

    fn choice_problems(choices: &str) -> Vec<Problem> {
        let text = format!(
            r#"{{"questions": [{{"id": "env", "question": "Where?", "type": "single_choice",
                "choices": {choices}}}]}}"#
        );
        parse_request(text.as_bytes(), None).unwrap_err()
    }

    #[test]
    fn look_alike_labels_are_refused_naming_both() {
        for look_alike in [
            r"staging\u200b",
            r"\u0455taging",
            r"\uff53\uff54\uff41\uff47\uff49\uff4e\uff47",
            "staging ",
            r"st\u00adaging",
        ] {
            let problems = choice_problems(&format!(
                r#"[{{"id": "a", "label": "staging"}}, {{"id": "b", "label": "{look_alike}"}}]"#
            ));
            let look = problems
                .iter()
                .find(|p| p.message.contains("looks the same"))
                .unwrap_or_else(|| panic!("{look_alike}: {problems:?}"));
            assert_eq!(look.pointer, "/questions/0/choices/1/label");
            assert!(
                look.message.contains("as \"staging\" (choice 1)"),
                "{look:?}"
            );
            // Hidden characters are named escaped, never raw.
            assert!(
                !look.message.chars().any(crate::text::is_hidden),
                "{look:?}"
            );
        }
        let problems =
            choice_problems(r#"[{"id": "a", "label": "Yes"}, {"id": "b", "label": "Yes"}]"#);
        assert!(
            problems[0]
                .message
                .contains("already the label of choice 1"),
            "{problems:?}"
        );
    }

    #[test]
    fn options_that_look_alike_are_refused_and_duplicates_reported_once() {
        let text = r#"{"questions": [{"question": "Where?", "type": "choice",
            "options": ["staging", "\u0455taging", "staging"]}]}"#;
        let problems = parse_request(text.as_bytes(), None).unwrap_err();
        let pointers: Vec<&str> = problems.iter().map(|p| p.pointer.as_str()).collect();
        assert_eq!(
            pointers,
            ["/questions/0/options/2", "/questions/0/options/1"],
            "{problems:?}"
        );
        assert!(problems[1]
            .message
            .contains("\"ѕtaging\" looks the same as \"staging\""));
    }

    #[test]
    fn a_label_with_a_hidden_character_is_refused() {
        let problems = choice_problems(
            r#"[{"id": "a", "label": "prod\u202euction"}, {"id": "b", "label": "dev"}]"#,
        );
        assert_eq!(problems.len(), 1, "{problems:?}");
        assert_eq!(problems[0].pointer, "/questions/0/choices/0/label");
        assert!(
            problems[0].message.contains("prod\\u{202e}uction")
                && problems[0].message.contains("a bidirectional control"),
            "{problems:?}"
        );
    }

    #[test]
    fn labels_that_merely_resemble_each_other_are_fine() {
        let text = r#"{"questions": [{"id": "env", "question": "Where?", "type": "single_choice",
            "choices": [{"id": "s", "label": "staging"}, {"id": "S", "label": "Staging 2"},
                        {"id": "p", "label": "production"}, {"id": "j", "label": "日本"},
                        {"id": "h", "label": "❤\ufe0f"}]}]}"#;
        assert!(parse_request(text.as_bytes(), None).is_ok());
    }
}
