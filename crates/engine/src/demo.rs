//! Realistic demo requests, covering both question dialects and all three request shapes,
//! so an operator can try the inbox without a pipeline. The CLI's `demo` and the desktop
//! app's "Add demo requests" both place these.

use inbox_spool::{Spool, SpoolError};

/// (id prefix, request body). Bodies carry no id: each placement gets fresh ids.
pub const REQUESTS: [(&str, &str); 5] = [
    ("demo-deploy", include_str!("../demo/deploy.json")),
    ("demo-spec-pick", include_str!("../demo/spec-pick.json")),
    ("demo-cache-setup", include_str!("../demo/cache-setup.json")),
    ("demo-nightly", include_str!("../demo/nightly-cleanup.json")),
    (
        "demo-approve",
        include_str!("../demo/approve-low-criteria.json"),
    ),
];

/// Places every demo request under a fresh id; returns the ids.
pub fn place_demo(spool: &Spool) -> Result<Vec<String>, SpoolError> {
    REQUESTS
        .iter()
        .map(|(prefix, body)| {
            let id = format!("{prefix}-{}", ulid::Ulid::new());
            spool.place_request(&id, body.as_bytes())?;
            Ok(id)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use inbox_protocol::parse_request;

    // A demo that the inbox rejects would be a poor demo.
    #[test]
    fn every_demo_request_is_valid() {
        for (prefix, body) in REQUESTS {
            let request = parse_request(body.as_bytes(), Some(&format!("{prefix}-x")));
            assert!(request.is_ok(), "{prefix}: {:?}", request.err());
        }
    }
}
