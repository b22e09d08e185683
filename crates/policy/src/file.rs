//! The policy file as TOML says it, before its meaning is checked. Every value the meaning
//! checks look at keeps its span, so a problem names its line. Enumerated values are read
//! as plain strings and checked later, so that every bad one is reported, not only the
//! first (a serde error would stop the whole parse).

use std::fmt;

use serde::de::{self, Deserializer, SeqAccess, Visitor};
use serde::Deserialize;
use toml::Spanned;

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawPolicy {
    pub(crate) quiet_hours: Option<Spanned<RawQuietHours>>,
    #[serde(default)]
    pub(crate) rule: Vec<Spanned<RawRule>>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawQuietHours {
    pub(crate) from: Spanned<String>,
    pub(crate) to: Spanned<String>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawRule {
    pub(crate) name: Option<Spanned<String>>,
    // Match conditions.
    pub(crate) app: Option<Spanned<OneOrMany>>,
    pub(crate) run: Option<Spanned<OneOrMany>>,
    pub(crate) project: Option<Spanned<OneOrMany>>,
    pub(crate) host: Option<Spanned<OneOrMany>>,
    pub(crate) tool: Option<Spanned<OneOrMany>>,
    pub(crate) account: Option<Spanned<OneOrMany>>,
    pub(crate) priority: Option<Spanned<OneOrMany>>,
    pub(crate) kinds: Option<Spanned<OneOrMany>>,
    pub(crate) title: Option<Spanned<OneOrMany>>,
    // What it says.
    pub(crate) autonomous: Option<Spanned<String>>,
    pub(crate) on_expiry: Option<Spanned<String>>,
    pub(crate) min_timeout: Option<Spanned<String>>,
    pub(crate) never_auto: Option<Spanned<bool>>,
    pub(crate) after: Option<Spanned<String>>,
    pub(crate) then: Option<Spanned<String>>,
    pub(crate) notify: Option<Spanned<String>>,
    pub(crate) buttons: Option<bool>,
    #[serde(default)]
    pub(crate) escalate: Vec<Spanned<RawStep>>,
    // Who answers (team.rs).
    pub(crate) assign: Option<Spanned<OneOrMany>>,
    pub(crate) takeover: Option<Spanned<bool>>,
    pub(crate) approvals: Option<Spanned<i64>>,
    pub(crate) if_unassigned: Option<Spanned<String>>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawStep {
    pub(crate) after: Option<Spanned<String>>,
    pub(crate) notify: Option<Spanned<String>>,
    pub(crate) run: Option<Spanned<Vec<String>>>,
}

/// A string or a list of strings (`app = "ci-*"` or `app = ["ci-*", "cd-*"]`).
#[derive(Debug)]
pub(crate) struct OneOrMany(pub(crate) Vec<String>);

impl<'de> Deserialize<'de> for OneOrMany {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<OneOrMany, D::Error> {
        struct OneOrManyVisitor;

        impl<'de> Visitor<'de> for OneOrManyVisitor {
            type Value = OneOrMany;

            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a string or a list of strings")
            }

            fn visit_str<E: de::Error>(self, value: &str) -> Result<OneOrMany, E> {
                Ok(OneOrMany(vec![value.to_owned()]))
            }

            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<OneOrMany, A::Error> {
                let mut values = Vec::new();
                while let Some(value) = seq.next_element::<String>()? {
                    values.push(value);
                }
                Ok(OneOrMany(values))
            }
        }

        deserializer.deserialize_any(OneOrManyVisitor)
    }
}
