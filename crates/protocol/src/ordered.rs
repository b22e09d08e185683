//! JSON values with object keys in the order they were written.
//!
//! The workspace builds serde_json without `preserve_order`, so its `Map` sorts keys. Where
//! the order is meaning the asker wrote on purpose (an elicitation's properties are a form's
//! fields, top to bottom; an action's arguments read best as written), the file is read a
//! second time into this type.

use std::fmt;

use serde::de::{Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};
use serde::ser::{Serialize, SerializeMap, SerializeSeq, Serializer};
use serde_json::Number;

#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Ordered {
    Null,
    Bool(bool),
    Number(Number),
    String(String),
    Array(Vec<Ordered>),
    Object(Vec<(String, Ordered)>),
}

impl Ordered {
    /// Reads bytes that are already known to be valid JSON; `None` if they are not.
    pub(crate) fn read(bytes: &[u8]) -> Option<Ordered> {
        serde_json::from_slice(bytes).ok()
    }

    /// The value at an RFC 6901 pointer.
    pub(crate) fn pointer(&self, pointer: &str) -> Option<&Ordered> {
        if pointer.is_empty() {
            return Some(self);
        }
        let mut here = self;
        for token in pointer.strip_prefix('/')?.split('/') {
            let token = token.replace("~1", "/").replace("~0", "~");
            here = match here {
                Ordered::Object(entries) => {
                    entries.iter().find(|(k, _)| *k == token).map(|e| &e.1)?
                }
                Ordered::Array(items) => items.get(token.parse::<usize>().ok()?)?,
                _ => return None,
            };
        }
        Some(here)
    }

    /// An object's keys, as written.
    pub(crate) fn keys(&self) -> Vec<&str> {
        match self {
            Ordered::Object(entries) => entries.iter().map(|(k, _)| k.as_str()).collect(),
            _ => Vec::new(),
        }
    }
}

impl<'de> Deserialize<'de> for Ordered {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Ordered, D::Error> {
        deserializer.deserialize_any(OrderedVisitor)
    }
}

struct OrderedVisitor;

impl<'de> Visitor<'de> for OrderedVisitor {
    type Value = Ordered;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any JSON value")
    }

    fn visit_bool<E>(self, v: bool) -> Result<Ordered, E> {
        Ok(Ordered::Bool(v))
    }

    fn visit_i64<E>(self, v: i64) -> Result<Ordered, E> {
        Ok(Ordered::Number(v.into()))
    }

    fn visit_u64<E>(self, v: u64) -> Result<Ordered, E> {
        Ok(Ordered::Number(v.into()))
    }

    fn visit_f64<E>(self, v: f64) -> Result<Ordered, E> {
        // JSON text has no NaN or infinity, so this is always a number.
        Ok(Number::from_f64(v).map_or(Ordered::Null, Ordered::Number))
    }

    fn visit_str<E>(self, v: &str) -> Result<Ordered, E> {
        Ok(Ordered::String(v.to_owned()))
    }

    fn visit_string<E>(self, v: String) -> Result<Ordered, E> {
        Ok(Ordered::String(v))
    }

    fn visit_unit<E>(self) -> Result<Ordered, E> {
        Ok(Ordered::Null)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Ordered, A::Error> {
        let mut items = Vec::new();
        while let Some(item) = seq.next_element()? {
            items.push(item);
        }
        Ok(Ordered::Array(items))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Ordered, A::Error> {
        let mut entries = Vec::new();
        while let Some(entry) = map.next_entry()? {
            entries.push(entry);
        }
        Ok(Ordered::Object(entries))
    }
}

impl Serialize for Ordered {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self {
            Ordered::Null => serializer.serialize_unit(),
            Ordered::Bool(b) => serializer.serialize_bool(*b),
            Ordered::Number(n) => n.serialize(serializer),
            Ordered::String(s) => serializer.serialize_str(s),
            Ordered::Array(items) => {
                let mut seq = serializer.serialize_seq(Some(items.len()))?;
                for item in items {
                    seq.serialize_element(item)?;
                }
                seq.end()
            }
            Ordered::Object(entries) => {
                let mut map = serializer.serialize_map(Some(entries.len()))?;
                for (key, value) in entries {
                    map.serialize_entry(key, value)?;
                }
                map.end()
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_keep_their_written_order_through_a_round_trip() {
        let text = r#"{"z": 1, "a": {"y": [true, null, 1.5, "s"], "b": -2}, "m": {}}"#;
        let value = Ordered::read(text.as_bytes()).unwrap();
        assert_eq!(value.keys(), ["z", "a", "m"]);
        assert_eq!(value.pointer("/a").unwrap().keys(), ["y", "b"]);
        assert_eq!(
            value.pointer("/a/y/2"),
            Some(&Ordered::Number(Number::from_f64(1.5).unwrap()))
        );
        assert_eq!(value.pointer("/nope"), None);
        assert_eq!(
            serde_json::to_string(&value).unwrap(),
            r#"{"z":1,"a":{"y":[true,null,1.5,"s"],"b":-2},"m":{}}"#
        );
        let escaped = Ordered::read(br#"{"a/b": {"c~d": 1}}"#).unwrap();
        assert!(escaped.pointer("/a~1b/c~0d").is_some());
    }
}
