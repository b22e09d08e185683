//! A request before it is placed: its bytes, its id, and the proof that it is valid.

use inbox_protocol::is_valid_id;
#[cfg(not(feature = "validate"))]
use inbox_protocol::{limits::MAX_FILE_BYTES, Problem};
#[cfg(feature = "validate")]
use inbox_protocol::{parse_request, Request};
use serde_json::Value;

use crate::AskError;

/// The bytes of a request file. Built from JSON text (`&str`, `String`, bytes) or a
/// [`serde_json::Value`]; text is placed exactly as given, a value as pretty JSON.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RequestBody(Vec<u8>);

impl RequestBody {
    pub fn as_bytes(&self) -> &[u8] {
        &self.0
    }

    pub fn into_bytes(self) -> Vec<u8> {
        self.0
    }
}

impl From<Vec<u8>> for RequestBody {
    fn from(bytes: Vec<u8>) -> Self {
        RequestBody(bytes)
    }
}

impl From<&[u8]> for RequestBody {
    fn from(bytes: &[u8]) -> Self {
        RequestBody(bytes.to_vec())
    }
}

impl<const N: usize> From<&[u8; N]> for RequestBody {
    fn from(bytes: &[u8; N]) -> Self {
        RequestBody(bytes.to_vec())
    }
}

impl From<String> for RequestBody {
    fn from(text: String) -> Self {
        RequestBody(text.into_bytes())
    }
}

impl From<&str> for RequestBody {
    fn from(text: &str) -> Self {
        RequestBody(text.as_bytes().to_vec())
    }
}

impl From<&Value> for RequestBody {
    fn from(value: &Value) -> Self {
        // Pretty, with a final newline: the file is read by people and `jq` too.
        let mut bytes = serde_json::to_vec_pretty(value).expect("a JSON value serialises");
        bytes.push(b'\n');
        RequestBody(bytes)
    }
}

impl From<Value> for RequestBody {
    fn from(value: Value) -> Self {
        RequestBody::from(&value)
    }
}

/// A checked request with its id, ready to be placed (see [`prepare`]).
#[derive(Debug, Clone, PartialEq)]
pub struct Prepared {
    id: String,
    bytes: Vec<u8>,
    #[cfg(feature = "validate")]
    request: Request,
}

impl Prepared {
    /// The id the request will be placed under: the file is `questions/<id>.json`.
    pub fn id(&self) -> &str {
        &self.id
    }

    /// The file's bytes, exactly as they will be placed.
    pub fn bytes(&self) -> &[u8] {
        &self.bytes
    }

    /// The request as the inbox will see it (normalised): question ids, kinds, choices.
    #[cfg(feature = "validate")]
    pub fn request(&self) -> &Request {
        &self.request
    }
}

/// Chooses the request's id and checks the request, without touching any spool.
///
/// The id is the body's `id`, else `id`, else a new ULID; when both are given they must be
/// equal. With the `validate` feature the request is validated as the inbox will validate
/// it, and an invalid one is refused with every problem found ([`AskError::Invalid`]), so it
/// is never placed. Without it only the id, the size and the JSON syntax are checked here:
/// the inbox validates every request anyway, and answers an invalid one with a `rejected`
/// outcome that names its problems.
///
/// ```
/// let prepared = inbox_client::prepare(
///     r#"{"inbox": 1, "questions": [{"id": "go", "question": "Ship it?", "type": "confirm"}]}"#,
///     Some("ship-7"),
/// )
/// .unwrap();
/// assert_eq!(prepared.id(), "ship-7");
///
/// let invalid = inbox_client::prepare(r#"[{"question": "Which?", "type": "choice"}]"#, None);
/// if cfg!(feature = "validate") {
///     let Err(inbox_client::AskError::Invalid(problems)) = invalid else { panic!() };
///     assert_eq!(problems[0].pointer, "/0/options");
/// }
/// ```
pub fn prepare(request: impl Into<RequestBody>, id: Option<&str>) -> Result<Prepared, AskError> {
    let bytes = request.into().into_bytes();
    let id = choose_id(&bytes, id)?;
    #[cfg(feature = "validate")]
    {
        let request = parse_request(&bytes, Some(&id)).map_err(AskError::Invalid)?;
        Ok(Prepared { id, bytes, request })
    }
    #[cfg(not(feature = "validate"))]
    {
        check_placeable(&bytes, &id)?;
        Ok(Prepared { id, bytes })
    }
}

/// Without validation: what the inbox would refuse before reading a request at all (a name
/// that is not an id, too many bytes, text that is not JSON), so that such a file is never
/// placed.
#[cfg(not(feature = "validate"))]
fn check_placeable(bytes: &[u8], id: &str) -> Result<(), AskError> {
    if !is_valid_id(id) {
        return Err(AskError::InvalidId(id.to_owned()));
    }
    if bytes.len() as u64 > MAX_FILE_BYTES {
        return Err(AskError::Invalid(vec![Problem::new(
            "",
            format!(
                "the request is {} bytes; at most {MAX_FILE_BYTES} are read",
                bytes.len()
            ),
        )]));
    }
    serde_json::from_slice::<Value>(bytes)
        .map(drop)
        .map_err(|error| AskError::Invalid(vec![Problem::new("", format!("not JSON: {error}"))]))
}

/// The body's `id`, else `given`, else a new ULID. Both given must agree.
fn choose_id(bytes: &[u8], given: Option<&str>) -> Result<String, AskError> {
    let body_id = serde_json::from_slice::<Value>(bytes)
        .ok()
        .and_then(|value| inbox_protocol::body_id(&value).map(str::to_owned));
    if let Some(given) = given {
        if !is_valid_id(given) {
            return Err(AskError::InvalidId(given.to_owned()));
        }
    }
    Ok(match (body_id, given) {
        (Some(body), Some(given)) if body != given => {
            return Err(AskError::IdMismatch {
                body,
                given: given.to_owned(),
            })
        }
        // An invalid id in the body is reported with the other problems by the parser.
        (Some(body), _) => body,
        (None, Some(given)) => given.to_owned(),
        (None, None) => ulid::Ulid::new().to_string(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_id_comes_from_the_body_then_the_given_one_then_a_ulid() {
        let with_id = br#"{"inbox": 1, "id": "abc", "questions": []}"#;
        assert_eq!(choose_id(with_id, None).unwrap(), "abc");
        assert_eq!(choose_id(with_id, Some("abc")).unwrap(), "abc");
        assert!(matches!(
            choose_id(with_id, Some("xyz")),
            Err(AskError::IdMismatch { .. })
        ));
        assert_eq!(choose_id(b"[]", Some("xyz")).unwrap(), "xyz");
        assert!(matches!(
            choose_id(b"[]", Some("../x")),
            Err(AskError::InvalidId(_))
        ));
        assert_eq!(choose_id(b"[]", None).unwrap().len(), 26);
    }

    #[test]
    #[cfg(feature = "validate")]
    fn a_human_interrupt_list_names_its_id_in_its_one_element() {
        let list = br#"[{"id": "intr-1", "action_request": {"action": "rm", "args": {}},
                         "config": {"allow_accept": true}}]"#;
        assert_eq!(choose_id(list, None).unwrap(), "intr-1");
        let prepared = prepare(&list[..], None).unwrap();
        assert_eq!(prepared.id(), "intr-1");
    }

    #[test]
    #[cfg(feature = "validate")]
    fn an_invalid_id_in_the_body_is_a_problem_of_the_request() {
        let body =
            r#"{"inbox": 1, "id": "../x", "questions": [{"question": "Ok?", "type": "confirm"}]}"#;
        let Err(AskError::Invalid(problems)) = prepare(body, None) else {
            panic!("accepted")
        };
        assert!(problems.iter().any(|p| p.pointer == "/id"), "{problems:?}");
    }

    #[test]
    #[cfg(feature = "validate")]
    fn a_value_is_placed_as_pretty_json() {
        let value = serde_json::json!([{"question": "Ok?", "type": "yes_no"}]);
        let prepared = prepare(value, None).unwrap();
        assert!(prepared.bytes().ends_with(b"]\n"));
        assert_eq!(prepared.request().questions[0].id, "q1");
    }

    #[test]
    #[cfg(not(feature = "validate"))]
    fn without_validation_only_what_the_inbox_cannot_read_is_refused() {
        assert!(prepare(r#"[{"question": "Which?", "type": "choice"}]"#, None).is_ok());
        assert!(matches!(
            prepare("{not json", Some("r1")),
            Err(AskError::Invalid(_))
        ));
        assert!(matches!(
            prepare(r#"{"id": "../x"}"#, None),
            Err(AskError::InvalidId(_))
        ));
    }
}
