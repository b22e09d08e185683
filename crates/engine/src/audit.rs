//! The audit log: the store's event log as a hash chain, so that history cannot be rewritten
//! quietly.
//!
//! Every entry carries the hash of the entry before it (`prev_hash`; the first carries
//! [`GENESIS`]) and its own `hash`, a SHA-256 over its canonical form: its sequence number,
//! time, request, kind, detail and `prev_hash`. Editing an entry breaks its hash; deleting one
//! leaves a gap in the sequence numbers and a `prev_hash` that names no entry; moving one
//! changes the sequence number it is hashed with. [`verify`] walks the chain and names the
//! first entry that does not hold.
//!
//! An export ([`to_json_lines`]) also carries `at`, the time of `at_ms` for people. It is not
//! hashed itself (so the chains of every database written so far still verify) but it is
//! bound to what is: [`parse_export`] refuses an entry whose `at` is not exactly the time
//! its hashed `at_ms` gives, and an entry with a field the format does not have, which no
//! hash covers. Every field of an exported entry is so either hashed or checked.
//!
//! What it cannot see: someone who rewrites the whole chain after the point they changed,
//! with hashes of their own, or who cuts entries off its end. A head hash kept elsewhere
//! (`answer-inbox audit verify` prints it) catches both: an honest log only grows, so every
//! head it ever had stays in it ([`verify_with_head`]).

use std::fmt;

use chrono::{DateTime, Utc};
use inbox_protocol::sha256_hex;
use serde::{Deserialize, Serialize};

/// The `prev_hash` of the first entry: there is nothing before it.
pub const GENESIS: &str = "0000000000000000000000000000000000000000000000000000000000000000";

/// One entry of the audit log, as exported (one JSON object a line).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Entry {
    /// Its position in the log, from 1, with no gaps.
    pub seq: i64,
    /// When it was recorded, in milliseconds since the epoch (exact, unlike a formatted time).
    pub at_ms: i64,
    /// The same instant, for people. Not hashed itself: [`parse_export`] requires it to be
    /// exactly the time of `at_ms`, which is.
    #[serde(default, skip_deserializing)]
    pub at: Option<DateTime<Utc>>,
    pub request_id: Option<String>,
    /// What happened: `ingested`, `notified`, `answered`, `defaulted`, `declined`,
    /// `expired`, `cancelled`, `rejected`, `blocked`, ...
    pub kind: String,
    /// The event's details (who answered, which rule, why).
    pub detail: serde_json::Value,
    pub prev_hash: String,
    pub hash: String,
}

impl Entry {
    /// The hash this entry should carry, given its fields.
    pub fn computed_hash(&self) -> String {
        hash_of(
            self.seq,
            self.at_ms,
            self.request_id.as_deref(),
            &self.kind,
            &self.detail,
            &self.prev_hash,
        )
    }
}

/// The SHA-256 (hex) of an entry's canonical form: a JSON array of its fields in a fixed
/// order. An array, not an object, so that no key order can change the bytes; the detail's
/// own keys are written as `serde_json` writes them, which is how the store keeps them.
pub fn hash_of(
    seq: i64,
    at_ms: i64,
    request_id: Option<&str>,
    kind: &str,
    detail: &serde_json::Value,
    prev_hash: &str,
) -> String {
    let canonical = serde_json::json!([seq, at_ms, request_id, kind, detail, prev_hash]);
    sha256_hex(canonical.to_string().as_bytes())
}

/// A chain that holds: how long it is and the hash of its newest entry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Intact {
    pub entries: usize,
    /// The newest entry's hash ([`GENESIS`] for an empty log). Keep it elsewhere to detect a
    /// rewrite of the whole chain later.
    pub head: String,
}

/// Why an entry breaks the chain.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Fault {
    /// Its fields no longer give its hash: it was changed after it was written.
    Edited,
    /// It is missing: the sequence jumps past it. `Broken::seq` is the first missing number.
    Deleted,
    /// It holds the record written as entry `holds`: records were swapped or moved.
    Reordered { holds: i64 },
    /// In an export: entry `found` stands where this one belongs (lines were moved).
    OutOfOrder { found: i64 },
    /// Its own hash is right, but its `prev_hash` is not the hash of the entry before it: it
    /// was written for another chain or the entry before it was replaced.
    WrongPrevious,
    /// The head hash kept from an earlier look is not in the chain: it was rewritten or
    /// entries were cut off its end.
    HeadMissing { head: String },
}

/// The first entry that breaks the chain, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Broken {
    /// The sequence number of the first broken (or missing) entry.
    pub seq: i64,
    pub fault: Fault,
}

impl fmt::Display for Broken {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let seq = self.seq;
        match &self.fault {
            Fault::Edited => write!(
                f,
                "entry {seq} was edited: its contents no longer match its hash"
            ),
            Fault::Deleted => write!(f, "entry {seq} was deleted: the sequence has a gap there"),
            Fault::Reordered { holds } => write!(
                f,
                "entry {seq} was reordered: it holds entry {holds}'s record, out of place"
            ),
            Fault::OutOfOrder { found } => write!(
                f,
                "entry {seq} was reordered: entry {found} stands where it belongs"
            ),
            Fault::WrongPrevious => write!(
                f,
                "entry {seq} does not follow the entry before it: its previous hash is wrong"
            ),
            Fault::HeadMissing { head } => write!(
                f,
                "the kept head hash {head} is not in the chain (checked up to entry {seq}): \
                 the log was rewritten or cut short"
            ),
        }
    }
}

/// Walks the chain, oldest first, in the order given (a store's by sequence number, an
/// export's line by line), and names the first entry that does not hold.
pub fn verify(entries: &[Entry]) -> Result<Intact, Broken> {
    let mut expected_prev = GENESIS.to_owned();
    for (index, entry) in entries.iter().enumerate() {
        let expected_seq = index as i64 + 1;
        if entry.seq != expected_seq {
            let later = &entries[index + 1..];
            let moved = entry.seq < expected_seq || later.iter().any(|e| e.seq == expected_seq);
            let fault = if moved {
                Fault::OutOfOrder { found: entry.seq }
            } else {
                Fault::Deleted
            };
            return Err(Broken {
                seq: expected_seq,
                fault,
            });
        }
        if entry.computed_hash() != entry.hash {
            return Err(Broken {
                seq: entry.seq,
                fault: moved_from(entry, entries)
                    .map_or(Fault::Edited, |holds| Fault::Reordered { holds }),
            });
        }
        if entry.prev_hash != expected_prev {
            return Err(Broken {
                seq: entry.seq,
                fault: Fault::WrongPrevious,
            });
        }
        expected_prev = entry.hash.clone();
    }
    Ok(Intact {
        entries: entries.len(),
        head: expected_prev,
    })
}

/// [`verify`], and also that `head`, a head hash kept from an earlier look, is still in the
/// chain: a log only grows, so every head it had stays in it.
pub fn verify_with_head(entries: &[Entry], head: &str) -> Result<Intact, Broken> {
    let intact = verify(entries)?;
    let head = head.trim().to_ascii_lowercase();
    if head == GENESIS || entries.iter().any(|entry| entry.hash == head) {
        Ok(intact)
    } else {
        Err(Broken {
            seq: entries.last().map_or(0, |entry| entry.seq),
            fault: Fault::HeadMissing { head },
        })
    }
}

/// For an entry whose hash does not match: the sequence number it was written with, when its
/// record was moved whole from another position (its fields hash right with that number), or
/// when it is another entry's record under this entry's chain columns.
fn moved_from(entry: &Entry, entries: &[Entry]) -> Option<i64> {
    entries
        .iter()
        .filter(|other| other.seq != entry.seq)
        .find(|other| {
            let as_other = |prev: &str| {
                hash_of(
                    other.seq,
                    entry.at_ms,
                    entry.request_id.as_deref(),
                    &entry.kind,
                    &entry.detail,
                    prev,
                )
            };
            as_other(&entry.prev_hash) == entry.hash || as_other(&other.prev_hash) == other.hash
        })
        .map(|other| other.seq)
}

/// The fields of an exported entry, as [`to_json_lines`] writes them: the hashed ones and
/// `at`.
const EXPORT_FIELDS: [&str; 8] = [
    "seq",
    "at_ms",
    "at",
    "request_id",
    "kind",
    "detail",
    "prev_hash",
    "hash",
];

/// Reads an export (JSON Lines, as `answer-inbox audit export` writes it). Blank lines are
/// skipped; a line that is not an entry, an entry with a field the format does not have, or
/// one whose `at` is not the time of its `at_ms` is an error naming its line and entry.
pub fn parse_export(text: &str) -> Result<Vec<Entry>, String> {
    text.lines()
        .enumerate()
        .filter(|(_, line)| !line.trim().is_empty())
        .map(|(index, line)| parse_export_line(index + 1, line))
        .collect()
}

fn parse_export_line(number: usize, line: &str) -> Result<Entry, String> {
    let not_an_entry =
        |error: serde_json::Error| format!("line {number} is not an audit entry: {error}");
    // As an entry first: that also refuses a known field given twice.
    let entry: Entry = serde_json::from_str(line).map_err(not_an_entry)?;
    let fields: serde_json::Map<String, serde_json::Value> =
        serde_json::from_str(line).map_err(not_an_entry)?;
    let named = format!("entry {} (line {number})", entry.seq);
    // No hash covers a field the format does not have, so it could say anything ("approved
    // by ...") and the chain would still hold: such an entry is not one this log wrote.
    if let Some(unknown) = fields
        .keys()
        .find(|key| !EXPORT_FIELDS.contains(&key.as_str()))
    {
        return Err(format!(
            "{named} has a field the audit format does not have, \"{unknown}\": no hash \
             covers it, so it was added after the export was written (an entry holds only {})",
            EXPORT_FIELDS.join(", ")
        ));
    }
    // `at` is what people read: it must be the very time that the hashed `at_ms` gives.
    let expected = serde_json::to_value(DateTime::from_timestamp_millis(entry.at_ms))
        .expect("a time serialises");
    match fields.get("at") {
        Some(at) if *at == expected => Ok(entry),
        Some(at) => Err(format!(
            "{named} was edited: its time `at` {at} is not {expected}, the time of its \
             hashed at_ms {}",
            entry.at_ms
        )),
        None => Err(format!(
            "{named} has no time `at`: an export writes it on every entry, so it was removed"
        )),
    }
}

/// Writes entries as JSON Lines, one entry a line, oldest first.
pub fn to_json_lines(entries: &[Entry]) -> String {
    let mut out = String::new();
    for entry in entries {
        let mut entry = entry.clone();
        entry.at = DateTime::from_timestamp_millis(entry.at_ms);
        out.push_str(&serde_json::to_string(&entry).expect("audit entries serialise"));
        out.push('\n');
    }
    out
}
