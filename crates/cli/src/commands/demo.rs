//! `demo`: drops realistic requests into the spool (`inbox_engine::demo`), so an operator
//! can try the inbox without a pipeline.

use anyhow::{Context, Result};
use inbox_engine::demo;

use crate::args::LocationArgs;
use crate::{exit, locations, output};

pub fn run(locations: &LocationArgs) -> Result<u8> {
    let spool = locations::open_spool(locations)?;
    let ids = demo::place_demo(&spool).context("cannot place the demo requests")?;
    let mut placed = ids.join("\n");
    placed.push('\n');
    output::stdout(&placed)?;
    eprintln!(
        "placed {} demo requests in {}; see them with `answer-inbox list` (the nightly \
         cleanup is autonomous: a running `answer-inbox watch` settles it at once)",
        ids.len(),
        spool.root().display()
    );
    Ok(exit::OK)
}
