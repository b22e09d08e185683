//! inbox-mcp, behind `answer-inbox mcp`: Answer Inbox as an MCP server on standard input and output, for AI
//! agents. The tool `ask_operator`: a batch of structured questions in, the operator's
//! outcome out, asked through `inbox_client` like `answer-inbox ask --wait`. For hosts that
//! cut long tool calls, the same in two steps: `ask_operator_start` places the request and
//! returns its id at once, and `ask_operator_wait` waits a bounded time for its outcome
//! (again and again, across calls and server restarts, and only for requests this server
//! placed). The CLI only parses the flags and
//! starts the runtime; everything else is here.
//!
//! - [`input`]: the tool's input schema, and arguments → a request in the structured dialect.
//! - [`autonomy`]: whether the model may choose autonomous mode (only if the operator says).
//! - [`reply`]: the outcome → structured content (with its schema) and text.
//! - [`origin`]: the request's `source`: client, session, host, working directory, project.
//! - [`placed`]: the requests `ask_operator_start` placed (in memory and in this account's
//!   ledger), the only ones `ask_operator_wait` reads, and to check their outcomes by.
//! - [`server`]: the rmcp handler: placing, waiting, progress, cancellation.
//! - [`stdio`]: standard input that signals the client's departure at once.
//!
//! Each call is its own request with its own id, so calls run side by side. A call the
//! client cancels (`notifications/cancelled`), a client that goes away (the end of standard
//! input) and a SIGTERM, SIGINT or SIGHUP all withdraw the pending requests of
//! `ask_operator` calls (their tombstones are placed, as `answer-inbox cancel` does) before
//! the process ends; a cancelled call gets no response. A request `ask_operator_start`
//! placed outlives its call and the process: it stays pending until settled, for a later
//! `ask_operator_wait`.
//!
//! (The agent hooks withdraw their request on the same signals, through `ctrlc` and the
//! parent's death, in crates/cli/src/commands/hook/stopped.rs. That code is not shared: a
//! hook is one blocking wait, while this server must stop an async session, name the signal
//! in each tombstone, and already learns of its parent's death from its standard input,
//! which is the session itself.)

mod autonomy;
mod input;
mod origin;
mod placed;
mod reply;
mod server;
mod stdio;

use std::sync::{Arc, OnceLock};
use std::time::Duration;

use inbox_client::Asker;
use rmcp::ServiceExt;
use tokio::signal::unix::{signal, SignalKind};
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

pub use autonomy::Autonomy;
pub use origin::Origin;

/// Why a session could not be served.
#[derive(Debug, thiserror::Error)]
pub enum ServeError {
    #[error("cannot handle {signal}: {source}")]
    Signal {
        signal: &'static str,
        source: std::io::Error,
    },
    #[error("the MCP handshake failed: {0}")]
    Handshake(String),
    #[error("the MCP session failed: {0}")]
    Session(String),
}

/// How long pending calls may take to withdraw their requests when the session ends.
const WITHDRAW_GRACE: Duration = Duration::from_secs(10);

/// Tunables of the server.
#[derive(Debug, Clone, Copy)]
pub struct Settings {
    /// Time between progress notifications while a call waits.
    pub progress_every: Duration,
    /// How long past a request's expiry a call waits for an inbox to expire it before it
    /// withdraws the request itself (an inbox expires due requests within a second or so).
    pub expiry_grace: Duration,
    /// Whether the tool offers and honours `mode` (autonomous mode), as the operator said.
    pub autonomy: Autonomy,
}

/// Serves one MCP session on standard input and output, until the client closes its end or
/// the process is told to stop.
pub async fn serve(asker: Asker, origin: Origin, settings: Settings) -> Result<(), ServeError> {
    let shutdown = CancellationToken::new();
    let stopped = Arc::new(OnceLock::new());
    let calls = TaskTracker::new();
    let server = server::Server::new(
        asker,
        origin,
        settings,
        shutdown.clone(),
        stopped.clone(),
        calls.clone(),
    );
    // Signals are caught before serving, so that a stop during the handshake is orderly too.
    let mut terminate = signal(SignalKind::terminate()).map_err(|source| ServeError::Signal {
        signal: "SIGTERM",
        source,
    })?;
    let mut interrupt = signal(SignalKind::interrupt()).map_err(|source| ServeError::Signal {
        signal: "SIGINT",
        source,
    })?;
    // A terminal that closes (the host ran in it) hangs up: the agent is gone just the same,
    // and SIGHUP's default action would end the process without withdrawing anything.
    let mut hangup = signal(SignalKind::hangup()).map_err(|source| ServeError::Signal {
        signal: "SIGHUP",
        source,
    })?;
    // Non-blocking pipes when the host gives pipes (it usually does): a blocking read of
    // standard input could not be interrupted at shutdown.
    let (input, output) = rmcp::transport::io::stdio_pipes();
    let input = stdio::EofSignal::new(input, shutdown.clone());
    // The reason is recorded inside the signal's own future, before `select!` drops the
    // session: dropping it cancels every call's `ct`, and the calls must already see why.
    let stop_signal = async {
        let signal = tokio::select! {
            _ = terminate.recv() => "SIGTERM",
            _ = interrupt.recv() => "SIGINT",
            _ = hangup.recv() => "SIGHUP",
        };
        let _ = stopped.set(format!("the agent's MCP server was stopped ({signal})"));
        signal
    };
    let served = tokio::select! {
        served = serve_until_closed(server, input, output) => served,
        signal = stop_signal => {
            tracing::info!("{signal}: withdrawing pending questions");
            Ok(())
        }
    };
    shutdown.cancel();
    calls.close();
    if tokio::time::timeout(WITHDRAW_GRACE, calls.wait())
        .await
        .is_err()
    {
        tracing::warn!("some pending questions could not be withdrawn in time");
    }
    served
}

async fn serve_until_closed(
    server: server::Server,
    input: impl tokio::io::AsyncRead + Send + Unpin + 'static,
    output: impl tokio::io::AsyncWrite + Send + Unpin + 'static,
) -> Result<(), ServeError> {
    let service = server
        .serve((input, output))
        .await
        .map_err(|error| ServeError::Handshake(error.to_string()))?;
    let quit = service
        .waiting()
        .await
        .map_err(|error| ServeError::Session(error.to_string()))?;
    tracing::debug!(?quit, "MCP session ended");
    Ok(())
}
