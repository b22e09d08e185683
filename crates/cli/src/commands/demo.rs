//! `demo`: drops realistic requests into the spool, covering both question dialects and all
//! three request shapes, so an operator can try the inbox without a pipeline.

use anyhow::{Context, Result};

use crate::args::LocationArgs;
use crate::{exit, locations, output};

/// (id prefix, request body). Bodies carry no id: each run places them under fresh ids.
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

pub fn run(locations: &LocationArgs) -> Result<u8> {
    let spool = locations::open_spool(locations)?;
    let mut placed = String::new();
    for (prefix, body) in REQUESTS {
        let id = format!("{prefix}-{}", ulid::Ulid::new());
        spool
            .place_request(&id, body.as_bytes())
            .with_context(|| format!("cannot place demo request {id}"))?;
        placed.push_str(&id);
        placed.push('\n');
    }
    output::stdout(&placed)?;
    eprintln!(
        "placed {} demo requests in {}; see them with `answer-inbox list` (the nightly \
         cleanup is autonomous: a running `answer-inbox watch` settles it at once)",
        REQUESTS.len(),
        spool.root().display()
    );
    Ok(exit::OK)
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
