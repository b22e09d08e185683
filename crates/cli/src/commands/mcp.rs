//! `mcp`: the `ask_operator` MCP server on standard input and output (the server itself is
//! the `inbox-mcp` crate): the flags, and the runtime it runs on.

use std::time::Duration;

use anyhow::{Context, Result};
use inbox_client::Asker;
use inbox_mcp::{Autonomy, Origin, Settings};

use crate::args::{LocationArgs, McpArgs};
use crate::{exit, locations};

pub fn run(locations: &LocationArgs, args: &McpArgs) -> Result<u8> {
    // Opened before serving: a host that starts the server with a bad spool sees the error
    // on standard error at once, not a tool that fails on every call.
    let asker = Asker::open(locations::spool_path(locations)?)?;
    let origin = Origin::detect(args.cwd.as_deref(), args.project.as_deref());
    let settings = Settings {
        progress_every: args.progress_every,
        expiry_grace: args.expiry_grace,
        autonomy: Autonomy::allowed_if(args.allow_autonomous),
    };
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .context("cannot start the async runtime")?;
    let served = runtime.block_on(inbox_mcp::serve(asker, origin, settings));
    // Standard input may be read by a blocking thread that no one can interrupt (when it is
    // not a pipe); waiting for it would keep the process alive after the session ended.
    runtime.shutdown_timeout(Duration::from_millis(500));
    served?;
    Ok(exit::OK)
}
