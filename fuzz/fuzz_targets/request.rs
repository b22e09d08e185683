//! Fuzzes everything a request file's bytes reach before an operator sees them: parsing and
//! validation, the normalised model's own serde round trip (the store keeps requests as
//! JSON), answer checking and default filling, and the markdown renderer of the desktop app.
//!
//! Crashes are panics, including the assertions below: each one states a property the rest
//! of the system relies on.

#![no_main]

use chrono::{DateTime, Utc};
use inbox_protocol::answers::check_value;
use inbox_protocol::{
    check_answers, coerce_cli_values, fill_defaults, parse_request, Problem, Question,
    QuestionKind, Request,
};
use libfuzzer_sys::fuzz_target;
use serde_json::{Map, Value};

/// The file id used when the body names none: any valid id would do.
const FILE_ID: &str = "fuzz-file";

fuzz_target!(|data: &[u8]| {
    match parse_request(data, None) {
        Ok(request) => check_valid_request(data, &request),
        Err(problems) => {
            check_problems(&problems);
            // Invalid requests never reach the renderer, but their bytes are as good a
            // source of hostile markdown as any: the sanitiser gets every input this way.
            if let Ok(text) = std::str::from_utf8(data) {
                render_and_check(text);
            }
        }
    }
});

fn check_problems(problems: &[Problem]) {
    assert!(!problems.is_empty(), "an error without problems");
    for problem in problems {
        assert!(
            problem.pointer.is_empty() || problem.pointer.starts_with('/'),
            "not a JSON pointer: {problem:?}"
        );
        assert!(!problem.message.is_empty(), "a problem without a message");
    }
}

fn check_valid_request(data: &[u8], request: &Request) {
    assert!(
        !request.questions.is_empty(),
        "a valid request without questions"
    );
    assert_eq!(request.sha256, inbox_protocol::sha256_hex(data));

    // The file name only adds the id check: naming the file after the body's id (or any
    // file name when the body has none) must give the same request.
    let file_id = request.id.as_deref().unwrap_or(FILE_ID);
    let named = parse_request(data, Some(file_id)).unwrap_or_else(|problems| {
        panic!("valid without a file id, not with {file_id}: {problems:?}")
    });
    assert_eq!(named.id.as_deref(), Some(file_id));
    assert_eq!(
        Request {
            id: request.id.clone(),
            ..named.clone()
        },
        *request
    );

    // The store keeps the normalised request as JSON and reads it back for policies and the
    // answer form: that must be lossless.
    let json = serde_json::to_string(&named).expect("a request serialises");
    let back: Request = serde_json::from_str(&json)
        .unwrap_or_else(|error| panic!("the stored form does not read back: {error}\n{json}"));
    assert_eq!(back, named, "the stored form changed the request");

    let _ = named.display_title();
    let _ = named.deadline(Utc::now());
    let _ = named.deadline(DateTime::<Utc>::MAX_UTC);

    let mut ids = std::collections::HashSet::new();
    for question in &named.questions {
        assert!(
            ids.insert(question.id.as_str()),
            "duplicate id {}",
            question.id
        );
        check_question(question);
    }

    let seed = seed_of(&named.sha256);
    check_valid_answers(&named, seed);
    check_junk_answers(&named, seed);
    check_defaults(&named);

    for markdown in named
        .questions
        .iter()
        .flat_map(|q| {
            q.description
                .iter()
                .chain(q.choices.iter().flat_map(|c| c.description.iter()))
        })
        .chain(named.confirm_description.iter())
    {
        render_and_check(markdown);
    }
}

fn check_question(question: &Question) {
    let _ = question.tab_label();
    assert_eq!(
        question.kind.has_choices(),
        !question.choices.is_empty(),
        "choices present exactly on choice questions: {question:?}"
    );
    if !question.kind.has_choices() {
        assert!(
            !question.allow_custom,
            "fill-in on a question without choices"
        );
    }
    if question.pattern.is_some() {
        assert_eq!(question.kind, QuestionKind::Text);
    }
    // A default is stored normalised: checking it again changes nothing.
    if let Some(default) = &question.default {
        let (again, _custom) = check_value(question, default)
            .unwrap_or_else(|message| panic!("stored default fails its own check: {message}"));
        assert_eq!(&again, default, "a stored default is not normalised");
    }
    // The CLI's `--set` coercion must never panic, whatever the operator types.
    let raw: Vec<String> = question
        .choices
        .iter()
        .take(3)
        .map(|c| c.label.clone())
        .chain(["yes".to_owned(), String::new()])
        .collect();
    let _ = coerce_cli_values(question, &raw);
    let _ = coerce_cli_values(question, &raw[..1]);
}

/// Deterministic choices for this input, so a crash reproduces from its file alone.
fn seed_of(sha256: &str) -> u64 {
    u64::from_str_radix(&sha256[..16], 16).expect("sha256 is hex")
}

fn pick(seed: u64, salt: usize, len: usize) -> usize {
    let mixed =
        seed.rotate_left((salt % 64) as u32) ^ (salt as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    (mixed % len.max(1) as u64) as usize
}

/// Answers built only from what the request allows must be accepted, and recorded as given.
fn check_valid_answers(request: &Request, seed: u64) {
    let mut given = Map::new();
    // Required questions that cannot be answered validly here: text with a pattern and no
    // usable default (inventing a string that matches an arbitrary regex is out of scope).
    let mut unanswerable = Vec::new();
    let mut skipped_with_rules = Vec::new();
    for (n, question) in request.questions.iter().enumerate() {
        // Questions with rules (lengths, bounds, formats, item counts, conditions: the MCP
        // elicitation and HumanInterrupt dialects) need answers built for those rules;
        // this target does not invent them, so it only checks such requests' refusals.
        // A rule can make even an optional question required (`required_if`), so skipping
        // one may rightly be refused, or rightly accepted.
        if !question.rules.is_empty() {
            if question.required && question.default.is_none() {
                unanswerable.push(question.id.clone());
            } else {
                skipped_with_rules.push(question.id.clone());
            }
            continue;
        }
        let value = match question.kind {
            QuestionKind::Confirm => Some(Value::Bool((seed >> (n % 64)) & 1 == 1)),
            QuestionKind::Choice => {
                let choice = &question.choices[pick(seed, n, question.choices.len())];
                Some(Value::String(choice.id.clone()))
            }
            QuestionKind::MultiChoice => {
                let first = pick(seed, n, question.choices.len());
                let count = 1 + pick(seed, n + 1, question.choices.len() - first);
                Some(Value::Array(
                    question.choices[first..first + count]
                        .iter()
                        .map(|c| Value::String(c.id.clone()))
                        .collect(),
                ))
            }
            QuestionKind::Text => match (&question.pattern, &question.default) {
                (None, _) => Some(Value::String("an answer".to_owned())),
                (Some(_), Some(Value::String(text))) if !text.is_empty() => {
                    Some(Value::String(text.clone()))
                }
                _ => None,
            },
        };
        match value {
            Some(value) => {
                given.insert(question.id.clone(), value);
            }
            None if question.required => unanswerable.push(question.id.clone()),
            None => {}
        }
    }
    match check_answers(request, &given) {
        Ok(set) => {
            assert!(
                unanswerable.is_empty(),
                "required {unanswerable:?} accepted unanswered"
            );
            assert!(
                set.custom.is_empty(),
                "options counted as fill-in: {:?}",
                set.custom
            );
            for (id, value) in &given {
                assert_eq!(set.answers.get(id), Some(value), "answer to {id} changed");
            }
            check_set(request, &set);
        }
        Err(problems) => {
            check_problems(&problems);
            assert!(
                !unanswerable.is_empty() || !skipped_with_rules.is_empty(),
                "valid answers refused: {problems:?}\ngiven {given:?}"
            );
        }
    }
}

/// Whatever the operator sends, the result is either problems or a set that only holds what
/// the request allows.
fn check_junk_answers(request: &Request, seed: u64) {
    let mut given = Map::new();
    for (n, question) in request.questions.iter().enumerate() {
        let label = |k: usize| {
            question
                .choices
                .get(pick(seed, k, question.choices.len()))
                .map(|c| Value::String(c.label.clone()))
                .unwrap_or(Value::Null)
        };
        let value = match pick(seed, n + 7, 12) {
            0 => continue,
            1 => Value::Null,
            2 => Value::String(String::new()),
            3 => Value::String(" \t".to_owned()),
            4 => label(n),
            5 => Value::Array(vec![label(n), label(n + 1), label(n + 2)]),
            6 => Value::String(question.question.clone()),
            7 => Value::Array(vec![Value::String(question.question.clone())]),
            8 => Value::from(n),
            9 => Value::String("x".repeat(10_001)),
            10 => question.default.clone().unwrap_or(Value::Bool(false)),
            _ => Value::Object(Map::new()),
        };
        given.insert(question.id.clone(), value);
    }
    if pick(seed, 99, 4) == 0 {
        given.insert("no-such-question/~".to_owned(), Value::Bool(true));
    }
    match check_answers(request, &given) {
        Ok(set) => check_set(request, &set),
        Err(problems) => check_problems(&problems),
    }
}

/// What an accepted answer set may contain.
fn check_set(request: &Request, set: &inbox_protocol::AnswerSet) {
    for id in set.answers.keys() {
        assert!(
            request.question(id).is_some(),
            "answer to unknown question {id}"
        );
    }
    for question in &request.questions {
        let value = set.answers.get(&question.id);
        if question.required {
            assert!(value.is_some(), "required {} has no answer", question.id);
        }
        let defaulted = set.defaulted.contains(&question.id);
        let custom = set.custom.contains(&question.id);
        if defaulted {
            assert!(!question.required && !custom);
            assert_eq!(
                value,
                question.default.as_ref(),
                "defaulted {} differs",
                question.id
            );
        }
        if custom {
            assert!(
                question.allow_custom,
                "fill-in on {} which allows none",
                question.id
            );
        }
        if let (Some(value), false) = (value, defaulted) {
            let (again, again_custom) = check_value(question, value)
                .unwrap_or_else(|m| panic!("recorded answer to {} fails: {m}", question.id));
            assert_eq!(
                &again, value,
                "recorded answer to {} not normalised",
                question.id
            );
            assert_eq!(
                again_custom, custom,
                "fill-in flag of {} wrong",
                question.id
            );
        }
    }
}

fn check_defaults(request: &Request) {
    let filled = fill_defaults(request);
    for question in &request.questions {
        match &question.default {
            Some(default) => {
                assert_eq!(filled.set.answers.get(&question.id), Some(default));
                assert!(filled.set.defaulted.contains(&question.id));
            }
            None => {
                assert!(!filled.set.answers.contains_key(&question.id));
                assert_eq!(
                    filled.missing_required.contains(&question.id),
                    question.required
                );
            }
        }
    }
}

/// Renders with the desktop app's renderer and checks that nothing executable or remote
/// survives. The output is HTML serialised by html5ever (via ammonia): text `<` is always
/// `&lt;`, so every literal `<` starts a tag, and attribute values are double-quoted. The
/// words "javascript:" may well appear as text ("see javascript: the good parts"); only
/// markup and URLs can make them run, so that is where they are looked for.
fn render_and_check(markdown: &str) {
    let html = inbox_app::markdown::render_markdown(markdown);
    assert!(
        !html.to_ascii_lowercase().contains("<script"),
        "script in {html:?} from {markdown:?}"
    );
    for tag in tags(&html) {
        check_tag(tag, &html, markdown);
    }
}

/// The inside of every `<...>` in serialised HTML, quote-aware.
fn tags(html: &str) -> Vec<&str> {
    let bytes = html.as_bytes();
    let mut found = Vec::new();
    let mut at = 0;
    while let Some(offset) = html[at..].find('<') {
        let start = at + offset + 1;
        let mut end = start;
        let mut quote = None;
        while end < bytes.len() {
            match (quote, bytes[end]) {
                (Some(q), b) if b == q => quote = None,
                (Some(_), _) => {}
                (None, b @ (b'"' | b'\'')) => quote = Some(b),
                (None, b'>') => break,
                (None, _) => {}
            }
            end += 1;
        }
        found.push(&html[start..end]);
        at = (end + 1).min(html.len());
    }
    found
}

const FORBIDDEN_TAGS: &[&str] = &[
    "script", "style", "iframe", "frame", "frameset", "object", "embed", "img", "svg", "math",
    "link", "meta", "base", "form", "input", "button", "textarea", "select", "template",
    "noscript", "audio", "video", "source", "picture",
];

const URL_ATTRIBUTES: &[&str] = &[
    "href",
    "src",
    "cite",
    "action",
    "formaction",
    "data",
    "poster",
    "background",
    "longdesc",
    "xlink:href",
    "srcset",
    "ping",
];

fn check_tag(tag: &str, html: &str, markdown: &str) {
    if tag.starts_with('/') || tag.starts_with('!') {
        return;
    }
    let name_end = tag
        .find(|c: char| c.is_ascii_whitespace() || c == '/')
        .unwrap_or(tag.len());
    let name = tag[..name_end].to_ascii_lowercase();
    assert!(
        !FORBIDDEN_TAGS.contains(&name.as_str()),
        "<{name}> survived in {html:?} from {markdown:?}"
    );
    for (attribute, value) in attributes(&tag[name_end..]) {
        let attribute = attribute.to_ascii_lowercase();
        assert!(
            !attribute.starts_with("on") && attribute != "style" && attribute != "srcdoc",
            "attribute {attribute} survived in {html:?} from {markdown:?}"
        );
        // What a browser makes of a URL: entities decoded, leading controls and spaces
        // dropped, tabs and newlines inside removed, scheme case-insensitive.
        let decoded = value
            .replace("&quot;", "\"")
            .replace("&nbsp;", "\u{a0}")
            .replace("&amp;", "&");
        let url: String = decoded
            .trim_start_matches(|c: char| c <= ' ')
            .chars()
            .filter(|c| !matches!(c, '\t' | '\n' | '\r'))
            .collect::<String>()
            .to_ascii_lowercase();
        assert!(
            !url.starts_with("javascript:") && !url.starts_with("vbscript:"),
            "script URL in {attribute} in {html:?} from {markdown:?}"
        );
        if URL_ATTRIBUTES.contains(&attribute.as_str()) {
            assert!(
                url.starts_with("http:") || url.starts_with("https:"),
                "non-web URL {value:?} in {attribute} in {html:?} from {markdown:?}"
            );
        }
    }
}

/// `name="value"` pairs (and bare names) of a serialised start tag, after its name.
fn attributes(mut rest: &str) -> Vec<(&str, &str)> {
    let mut found = Vec::new();
    loop {
        rest = rest.trim_start_matches(|c: char| c.is_ascii_whitespace() || c == '/');
        if rest.is_empty() {
            return found;
        }
        let name_end = rest
            .find(|c: char| c.is_ascii_whitespace() || c == '=' || c == '/')
            .unwrap_or(rest.len());
        let name = &rest[..name_end];
        rest = &rest[name_end..];
        if let Some(after) = rest.strip_prefix('=') {
            let quote = after.chars().next().filter(|c| *c == '"' || *c == '\'');
            let (value, tail) = match quote {
                Some(q) => {
                    let body = &after[1..];
                    let close = body.find(q).unwrap_or(body.len());
                    (&body[..close], body.get(close + 1..).unwrap_or(""))
                }
                None => {
                    let end = after
                        .find(|c: char| c.is_ascii_whitespace())
                        .unwrap_or(after.len());
                    (&after[..end], &after[end..])
                }
            };
            found.push((name, value));
            rest = tail;
        } else {
            found.push((name, ""));
        }
    }
}
