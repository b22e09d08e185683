//! Fuzzes reading outcome files. Engines read outcomes other inboxes wrote (shared spools,
//! one-shot CLI commands), so the bytes are untrusted: reading must never panic, and an
//! outcome that reads must write back to bytes that read as the same outcome, byte for byte
//! stable from then on (what the engine records is what is on disk).

#![no_main]

use inbox_protocol::{Outcome, PROTOCOL_VERSION};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(outcome) = Outcome::from_file_bytes(data) else {
        return;
    };
    assert_eq!(outcome.inbox, PROTOCOL_VERSION);
    let bytes = outcome.to_file_bytes();
    let again = Outcome::from_file_bytes(&bytes).unwrap_or_else(|error| {
        panic!(
            "written outcome does not read back: {error}\n{}",
            String::from_utf8_lossy(&bytes)
        )
    });
    assert_eq!(again, outcome, "the outcome changed in a round trip");
    assert_eq!(
        again.to_file_bytes(),
        bytes,
        "writing the same outcome twice gave different bytes"
    );
    // The status name and its parser agree, as the store relies on them.
    assert_eq!(
        inbox_protocol::OutcomeStatus::parse(outcome.status.as_str()),
        Some(outcome.status)
    );
});
