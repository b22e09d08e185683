//! A request's fingerprint: what it asks, without who asks it. Parallel runs of one pipeline
//! ask the same questions under different titles, sources and ids; requests with the same
//! fingerprint may be answered together ("answer many alike"), because one set of answers
//! means the same thing to each of them and is checked by each of them the same way.
//!
//! The fingerprint covers everything a person reads about the questions or that checks the
//! answers: every field of every [`Question`] (id, kind and type as written, text,
//! description, label, choices with their ids, labels and descriptions, default, required,
//! pattern, fill-in, the other dialects' rules), the confirmation screen's title and
//! description, and the [`Origin`] (another system's dialect decides the shape of the reply
//! written back, and the outcome check holds the reply to it). It leaves out what differs
//! between runs and is shown per request anyway: the id, title, source, priority, mode,
//! expiry and the file's own SHA-256.
//!
//! Every question field is included by serialising the model itself, so a field added to
//! [`Question`] later is covered without a change here. The encoding is canonical JSON
//! (object keys sorted at every level), so the fingerprint does not depend on whether
//! serde_json keeps insertion order in the build at hand (its `preserve_order` feature, which
//! another crate may switch on): the CLI and the desktop app compute the same value.

use serde::Serialize;
use serde_json::{Map, Value};

use crate::digest::sha256_hex;
use crate::model::{Origin, Question, Request};

/// Names the encoding, so a later change of what is covered cannot collide with this one.
const DOMAIN: &[u8] = b"answer-inbox fingerprint v1\n";

/// What the fingerprint covers, as it is encoded.
#[derive(Serialize)]
struct Asked<'a> {
    questions: &'a [Question],
    confirm_title: Option<&'a str>,
    confirm_description: Option<&'a str>,
    origin: Option<&'a Origin>,
}

/// The SHA-256 (lower-case hex) of a canonical encoding of what `request` asks (see the
/// module's introduction): equal for requests that ask the same questions the same way,
/// whoever asks them.
pub fn fingerprint(request: &Request) -> String {
    let asked = Asked {
        questions: &request.questions,
        confirm_title: request.confirm_title.as_deref(),
        confirm_description: request.confirm_description.as_deref(),
        origin: request.origin.as_ref(),
    };
    // The model is plain data (strings, numbers, booleans, JSON values): serialising it
    // cannot fail. Should it ever, the request gets a fingerprint of its own (its file's
    // hash), never one it shares with another request.
    let mut bytes = DOMAIN.to_vec();
    match serde_json::to_value(&asked).and_then(|value| serde_json::to_vec(&sorted(value))) {
        Ok(json) => bytes.extend(json),
        Err(_) => bytes.extend(request.sha256.as_bytes()),
    }
    sha256_hex(&bytes)
}

/// `value` with the keys of every object inserted in sorted order: serialised the same with
/// or without serde_json's `preserve_order`.
fn sorted(value: Value) -> Value {
    match value {
        Value::Object(map) => {
            let mut entries: Vec<(String, Value)> = map.into_iter().collect();
            entries.sort_by(|(a, _), (b, _)| a.cmp(b));
            Value::Object(
                entries
                    .into_iter()
                    .map(|(key, value)| (key, sorted(value)))
                    .collect::<Map<String, Value>>(),
            )
        }
        Value::Array(items) => Value::Array(items.into_iter().map(sorted).collect()),
        other => other,
    }
}

#[cfg(all(test, feature = "validate"))]
mod tests {
    use super::*;
    use crate::parse_request;

    /// An envelope asking three questions of every kind, with `title`, `source` and the
    /// other per-run fields filled in by the caller.
    fn request(id: &str, per_run: &str, questions: &str) -> Request {
        let body = format!(r#"{{"inbox": 1, "id": "{id}", {per_run} "questions": {questions}}}"#);
        parse_request(body.as_bytes(), Some(id))
            .unwrap_or_else(|problems| panic!("{body}: {problems:?}"))
    }

    const QUESTIONS: &str = r#"[
        {"id": "go", "question": "Ship it?", "type": "confirm", "default": false},
        {"id": "env", "question": "Where?", "type": "choice", "description": "The target.",
         "options": ["staging", "production"], "default": "staging", "allow_custom": true},
        {"id": "ticket", "question": "Change ticket?", "type": "text",
         "pattern": "^CHG-[0-9]+$", "required": false}
    ]"#;

    #[test]
    fn runs_that_ask_the_same_questions_share_a_fingerprint() {
        let first = request(
            "run-1",
            r#""title": "Release 4.2 (run 1)", "source": {"app": "release-bot", "run": "r-1"},
               "priority": "high", "mode": "autonomous", "timeout_seconds": 60,"#,
            QUESTIONS,
        );
        let second = request(
            "run-2",
            r#""title": "Release 4.2 (run 2)", "source": {"app": "other-bot", "host": "ci-9"},"#,
            QUESTIONS,
        );
        assert_ne!(first.sha256, second.sha256);
        assert_eq!(fingerprint(&first), fingerprint(&second));
        let hex = fingerprint(&first);
        assert_eq!(hex.len(), 64);
        assert!(hex.chars().all(|c| c.is_ascii_hexdigit()), "{hex}");
    }

    #[test]
    fn any_difference_in_what_is_asked_changes_the_fingerprint() {
        let base = fingerprint(&request("r", "", QUESTIONS));
        let variants = [
            (
                "question text",
                QUESTIONS.replace("Ship it?", "Ship it now?"),
            ),
            (
                "a hidden zero-width space",
                QUESTIONS.replace("Ship it?", "Ship\u{200b} it?"),
            ),
            ("question id", QUESTIONS.replace(r#""go""#, r#""go2""#)),
            ("description", QUESTIONS.replace("The target.", "The host.")),
            (
                "an option",
                QUESTIONS.replace(r#""production"]"#, r#""prod"]"#),
            ),
            (
                "the default",
                QUESTIONS.replace(r#""default": false"#, r#""default": true"#),
            ),
            (
                "required",
                QUESTIONS.replace(r#""required": false"#, r#""required": true"#),
            ),
            ("the pattern", QUESTIONS.replace("[0-9]+", "[0-9]{4}")),
            (
                "fill-in",
                QUESTIONS.replace(r#""allow_custom": true"#, r#""allow_custom": false"#),
            ),
        ];
        for (what, questions) in variants {
            assert_ne!(
                fingerprint(&request("r", "", &questions)),
                base,
                "{what} must change the fingerprint"
            );
        }
    }

    #[test]
    fn the_kind_of_question_is_part_of_it() {
        let of_kind = |kind: &str| {
            let questions = format!(
                r#"[{{"id": "pick", "question": "Which?", "type": "{kind}", "options": ["a", "b"]}}]"#
            );
            fingerprint(&request("r", "", &questions))
        };
        assert_eq!(of_kind("choice"), of_kind("choice"));
        assert_ne!(of_kind("choice"), of_kind("multiChoice"));
    }

    #[test]
    fn option_labels_and_the_confirmation_screen_are_part_of_it() {
        let structured = |label: &str, description: &str| {
            let questions = format!(
                r#"[{{"id": "env", "question": "Where?", "type": "single_choice",
                     "choices": [{{"id": "stg", "label": "{label}", "description": "{description}"}},
                                 {{"id": "prd", "label": "Production"}}]}}]"#
            );
            fingerprint(&request("r", "", &questions))
        };
        let base = structured("Staging", "Safe");
        assert_eq!(base, structured("Staging", "Safe"));
        assert_ne!(
            base,
            structured("Staging (EU)", "Safe"),
            "an option's label"
        );
        assert_ne!(
            base,
            structured("Staging", "Wipes data"),
            "an option's description"
        );

        let confirm = |title: &str| {
            request(
                "r",
                &format!(r#""confirm_title": "{title}", "confirm_description": "Check it.","#),
                QUESTIONS,
            )
        };
        assert_eq!(
            fingerprint(&confirm("Release?")),
            fingerprint(&confirm("Release?"))
        );
        assert_ne!(
            fingerprint(&confirm("Release?")),
            fingerprint(&confirm("Delete?"))
        );
        assert_ne!(
            fingerprint(&confirm("Release?")),
            fingerprint(&request("r", "", QUESTIONS))
        );
    }

    #[test]
    fn canonical_encoding_sorts_keys_at_every_level() {
        let value = serde_json::json!({"b": [{"d": 1, "c": 2}], "a": {"f": null, "e": "x"}});
        assert_eq!(
            serde_json::to_string(&sorted(value)).unwrap(),
            r#"{"a":{"e":"x","f":null},"b":[{"c":2,"d":1}]}"#
        );
    }
}
