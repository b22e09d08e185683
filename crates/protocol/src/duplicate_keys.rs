//! Keys given twice in one JSON object, found in the text (serde_json keeps the last value
//! and says nothing). Requests and outcomes alike are refused for them: other readers keep
//! the first value, so such a file could say one thing to one reader and another to the next.
//! Plain serde, so an asker without the `validate` feature checks outcomes the same way.
//! The inbox's own files (outcomes, approvals) are read and written here, once.

use std::collections::HashSet;

use serde::de::{DeserializeOwned, DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};
use serde::Serialize;

use crate::problem::{pointer_token, short, Problem};

/// A file the inbox writes (an outcome, an approval), read strictly: JSON of `T`, and no key
/// given twice anywhere (two answers to one question are read differently by different
/// readers). `what` names the file in the error ("outcome", "approval").
pub(crate) fn read_json_file<T: DeserializeOwned>(bytes: &[u8], what: &str) -> Result<T, String> {
    let value: T = serde_json::from_slice(bytes).map_err(|e| format!("not a valid {what}: {e}"))?;
    // It parsed, so it is UTF-8.
    let text = std::str::from_utf8(bytes).unwrap_or_default();
    if let Some(twice) = duplicate_keys(text).first() {
        return Err(format!(
            "not a valid {what}: at {}: {}",
            twice.pointer, twice.message
        ));
    }
    Ok(value)
}

/// A file the inbox writes, as it writes it: pretty JSON with a final newline, readable by
/// people and `jq`.
pub(crate) fn json_file_bytes<T: Serialize>(value: &T) -> Vec<u8> {
    let mut bytes = serde_json::to_vec_pretty(value).expect("the inbox's files are plain JSON");
    bytes.push(b'\n');
    bytes
}

/// Every key given twice in one object. serde_json keeps the last value, other readers keep
/// the first, so such a request could say one thing to the asker's tools and another to the
/// inbox (`"mode"` twice: interactive for a reviewer, autonomous here): refused, not guessed.
pub(crate) fn duplicate_keys(text: &str) -> Vec<Problem> {
    let mut found = Vec::new();
    let check = KeyCheck {
        at: String::new(),
        found: &mut found,
    };
    // Only called on text that already parsed: an error here would tell nothing new.
    let _ = check.deserialize(&mut serde_json::Deserializer::from_str(text));
    found
}

/// Walks one JSON value (`at` is its pointer) without building it, noting duplicate keys.
/// Depth is bounded by the nesting check that ran before.
struct KeyCheck<'a> {
    at: String,
    found: &'a mut Vec<Problem>,
}

impl<'de> DeserializeSeed<'de> for KeyCheck<'_> {
    type Value = ();

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<(), D::Error> {
        deserializer.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for KeyCheck<'_> {
    type Value = ();

    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("any JSON value")
    }

    fn visit_bool<E>(self, _: bool) -> Result<(), E> {
        Ok(())
    }

    fn visit_i64<E>(self, _: i64) -> Result<(), E> {
        Ok(())
    }

    fn visit_u64<E>(self, _: u64) -> Result<(), E> {
        Ok(())
    }

    fn visit_f64<E>(self, _: f64) -> Result<(), E> {
        Ok(())
    }

    fn visit_str<E>(self, _: &str) -> Result<(), E> {
        Ok(())
    }

    fn visit_unit<E>(self) -> Result<(), E> {
        Ok(())
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        let mut index = 0usize;
        loop {
            let item = KeyCheck {
                at: format!("{}/{index}", self.at),
                found: &mut *self.found,
            };
            if seq.next_element_seed(item)?.is_none() {
                return Ok(());
            }
            index += 1;
        }
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        let mut seen = HashSet::new();
        while let Some(key) = map.next_key::<String>()? {
            let at = format!("{}/{}", self.at, pointer_token(&key));
            map.next_value_seed(KeyCheck {
                at: at.clone(),
                found: &mut *self.found,
            })?;
            if seen.contains(&key) {
                self.found.push(Problem::new(
                    at,
                    format!(
                        "the key \"{}\" appears more than once in this object; JSON readers \
                         disagree on which value counts, so give it once",
                        short(&key)
                    ),
                ));
            } else {
                seen.insert(key);
            }
        }
        Ok(())
    }
}
