//! A request's version: the SHA-256 of its file's bytes, in lower-case hex. Outcomes name
//! it (`request_sha256`), answers are bound to it, and askers check it.

use sha2::{Digest, Sha256};

/// Hex SHA-256 of a file's bytes.
pub fn sha256_hex(bytes: &[u8]) -> String {
    Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}
