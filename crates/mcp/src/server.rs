//! The rmcp handler: `ask_operator`, and `ask_operator_start` / `ask_operator_wait`, over an
//! [`Asker`].

use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};

use inbox_client::{AskError, AskOptions, Asker, CancelToken, Reply};
use inbox_protocol::Expiry;
use rmcp::handler::server::router::tool::ToolRouter;
use rmcp::handler::server::wrapper::Parameters;
use rmcp::model::{
    CallToolResult, Implementation, JsonObject, ProgressNotificationParam, ServerCapabilities,
    ServerConfig,
};
use rmcp::service::RequestContext;
use rmcp::{tool, tool_handler, tool_router, ErrorData, RoleServer, ServerHandler};
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

use super::autonomy::Autonomy;
use super::origin::{Origin, TOOL};
use super::placed::{Placed, PlacedRequests};
use super::reply::{AskOperatorOutput, StartOutput};
use super::{input, reply, Settings};

/// What a model reads to decide whether to call the tool: when, when not, and how.
const TOOL_DESCRIPTION: &str = "\
Ask the human operator one or more structured questions and wait for their answer. The \
questions reach the operator's Answer Inbox (a desktop notification, the inbox window or the \
command line); the call returns once they answer or decline, which may take minutes or hours.

Use it when you need a person's decision before going on:
- before an irreversible, destructive or costly action: deploying to production, deleting or \
migrating data, force-pushing, sending messages or emails, spending money;
- when a request is ambiguous and several candidates match (which spec, which file, which \
environment, which customer) and a wrong guess would waste work or do harm;
- at a policy gate that requires a person's approval;
- when information is missing that only a person has: a business priority, a preference, a \
name or value you cannot look up.

Do not use it:
- for questions you can answer yourself by reading code, docs or files, or by running a \
command;
- for trivia, for confirming what the user already told you, or for \"shall I continue?\";
- for progress updates, reports or summaries: there is nothing to decide;
- for anything reversible and low-risk: choose sensibly, go on, and say what you chose.

How to ask well:
- batch related questions into one call (one `questions` list) instead of calling several \
times;
- yes_no for approvals, single_choice to pick one, multi_choice to pick several, free_text only \
when the options cannot be listed;
- keep choices few (2 to 5), concrete and distinct; the operator may still type their own \
answer unless allow_custom is false;
- put the context needed to decide (what will happen, risks, the candidates, what you \
recommend and why) in each question's `description` (markdown), and keep `question` to one \
sentence;
- give a `default` where a safe one exists, and `timeout_seconds` when you cannot wait forever.

The result's `status`: answered (use `answers`, keyed by question id: q1, q2, ... unless you \
set ids; `custom` lists answers in the operator's own words), defaulted (nobody answered; your \
defaults were used), declined (the operator refused: do not go ahead; see `reason`), expired \
(nobody answered in time: not a yes), cancelled (withdrawn; no answer).";

const INSTRUCTIONS: &str = "\
Answer Inbox connects you to the human operator who supervises your work. Call ask_operator \
when you need their decision: before irreversible or risky actions, to resolve a real \
ambiguity between several candidates, at approval gates, or for information only they have. \
Do not ask what you can find out yourself, and do not use it for status updates. Batch related \
questions into one call and give the context in each question's description. The call blocks \
until the operator answers; follow a decline. If your tool calls are cut off after a minute \
or so, ask with ask_operator_start instead and then call ask_operator_wait with its \
request_id until it returns the outcome.";

/// The first two-step tool's name (its input schema follows the operator's choice too).
const START_TOOL: &str = "ask_operator_start";

/// The longest one `ask_operator_wait` call waits: below the one-minute limit some hosts put
/// on a tool call.
pub const LONGEST_WAIT: Duration = Duration::from_secs(50);

const START_DESCRIPTION: &str = "\
ask_operator in two steps, for hosts that cut tool calls off after a minute or so: takes \
exactly ask_operator's arguments (the same questions, the same advice on when to ask and how), \
places the request in the operator's inbox and returns at once with its request_id. Then call \
ask_operator_wait with that request_id until it returns the outcome. Use ask_operator itself \
when your tool calls may take as long as the operator does.";

const WAIT_DESCRIPTION: &str = "\
Waits up to wait_seconds (at most 50, the default) for the outcome of a request placed with \
ask_operator_start. Returns exactly what ask_operator would (status answered, defaulted, \
declined, expired, rejected or cancelled, with the answers), or status \"pending\" if nobody \
has answered yet: then call it again with the same request_id. Works across calls and \
restarts of this server, for the requests ask_operator_start placed for you (not for anyone \
else's request).";

/// Sleeps until `at`; never, without one (the `select!` branch is off then anyway).
async fn sleep_until(at: Option<tokio::time::Instant>) {
    match at {
        Some(at) => tokio::time::sleep_until(at).await,
        None => std::future::pending().await,
    }
}

/// The server: cheap to clone (rmcp clones it per call).
#[derive(Clone)]
pub struct Server {
    asker: Asker,
    origin: Arc<Origin>,
    settings: Settings,
    /// Cancelled when the client has gone (end of input) or the process is told to stop.
    shutdown: CancellationToken,
    /// Why the process was told to stop, set before `shutdown` is cancelled by a signal; the
    /// reason written into the tombstones of the calls it ends.
    stopped: Arc<OnceLock<String>>,
    /// The calls in progress, so that the process ends only after each has withdrawn its
    /// request.
    calls: TaskTracker,
    /// The requests `ask_operator_start` placed.
    placed: PlacedRequests,
    tool_router: ToolRouter<Server>,
}

#[tool_router]
impl Server {
    pub fn new(
        asker: Asker,
        origin: Origin,
        settings: Settings,
        shutdown: CancellationToken,
        stopped: Arc<OnceLock<String>>,
        calls: TaskTracker,
    ) -> Server {
        let mut tool_router = Server::tool_router();
        // The attribute's schema is the one without `mode`; the operator's choice replaces it.
        for tool in [TOOL, START_TOOL] {
            tool_router
                .map
                .get_mut(tool)
                .expect("the router serves ask_operator and ask_operator_start")
                .attr
                .input_schema = input::schema(settings.autonomy);
        }
        Server {
            asker,
            origin: Arc::new(origin),
            settings,
            shutdown,
            stopped,
            calls,
            placed: PlacedRequests::new(PlacedRequests::ledger_in_state_dir()),
            tool_router,
        }
    }

    /// What this session does with a call's `mode`. Only the operator's flag decides, for
    /// now; when the policy file exists (issue 13, part 1) it may allow autonomous mode for
    /// some clients (by `client_info`'s name, say): decide here, and have the listed schema
    /// follow (a `list_tools` of our own instead of the router's, which is fixed per
    /// session).
    fn autonomy(&self) -> Autonomy {
        self.settings.autonomy
    }

    /// A call's arguments as a request from this client, or the tool result that says what
    /// is wrong with them (`tool`: which tool to call again). Both asking tools start here.
    fn translate(
        &self,
        arguments: &JsonObject,
        ctx: &RequestContext<RoleServer>,
        tool: &str,
    ) -> Result<input::Translated, CallToolResult> {
        let source = self.origin.source(ctx.client_info().as_ref());
        let translated = input::prepare_request(arguments, source, self.autonomy())
            .map_err(|problems| reply::invalid(tool, &problems))?;
        if !translated.notices.is_empty() {
            // For the operator reading the server's log: an agent tried to settle its own
            // question.
            tracing::warn!(
                id = %translated.prepared.id(),
                "the call asked for a mode this server does not allow (autonomous mode needs \
                 --allow-autonomous); the request is placed interactive"
            );
        }
        Ok(translated)
    }

    #[tool(
        name = "ask_operator",
        title = "Ask the operator",
        description = TOOL_DESCRIPTION,
        input_schema = input::schema(Autonomy::Withheld),
        output_schema = reply::schema(),
        annotations(
            title = "Ask the operator",
            read_only_hint = false,
            destructive_hint = false,
            idempotent_hint = false,
            open_world_hint = true
        )
    )]
    async fn ask_operator(
        &self,
        Parameters(arguments): Parameters<JsonObject>,
        ctx: RequestContext<RoleServer>,
    ) -> Result<CallToolResult, ErrorData> {
        let _in_progress = self.calls.token();
        let input::Translated { prepared, notices } = match self.translate(&arguments, &ctx, TOOL) {
            Ok(translated) => translated,
            Err(invalid) => return Ok(invalid),
        };
        let id = prepared.id().to_owned();
        tracing::debug!(%id, "asking the operator");

        let cancel = CancelToken::new();
        let options = AskOptions {
            timeout: None,
            cancel: Some(cancel.clone()),
            require_person: false,
        };
        let asking = self.asker.ask_prepared_async(&prepared, &options);
        tokio::pin!(asking);
        let progress = ctx.meta.get_progress_token();
        let started = Instant::now();
        // Expiry is the inbox's to apply; without an inbox on the spool nothing would, and the
        // agent was promised the wait ends. So past the deadline and a grace, the call withdraws
        // its request (an outcome that wins that race still counts).
        let give_up = prepared.request().expiry.map(|expiry| match expiry {
            Expiry::After { seconds } => Duration::from_secs(seconds),
            Expiry::At(at) => (at - chrono::Utc::now()).to_std().unwrap_or_default(),
        });
        let give_up_at = give_up.map(|after| {
            tokio::time::Instant::from_std(started + after + self.settings.expiry_grace)
        });
        let mut sent = 0u64;
        // interval() refuses a zero period. The first tick comes one period in: by then the
        // request is placed, so "asked the operator" is true when it is said.
        let period = self.settings.progress_every.max(Duration::from_millis(50));
        let mut ticks = tokio::time::interval_at(tokio::time::Instant::now() + period, period);
        ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        let asked = loop {
            tokio::select! {
                asked = &mut asking => break asked,
                // rmcp tells of the client's `notifications/cancelled` by cancelling `ct`; the
                // call keeps running, so it withdraws the request and ends. The specification
                // (https://modelcontextprotocol.io/specification/2025-11-25/basic/utilities/cancellation)
                // says the receiver SHOULD stop processing, free associated resources and
                // not send a response for the cancelled request: the request is the
                // resource here, and rmcp drops whatever this call returns, so nothing the
                // operator may still answer reaches an agent that no longer listens.
                () = ctx.ct.cancelled(), if !cancel.is_cancelled() => {
                    // A stopping server also ends its session, which cancels `ct`: then the
                    // stop is the true reason.
                    cancel.cancel(self.stopped.get().cloned().unwrap_or_else(|| {
                        format!("the agent's MCP client cancelled the {TOOL} call")
                    }));
                }
                () = sleep_until(give_up_at), if give_up_at.is_some() && !cancel.is_cancelled() => {
                    cancel.cancel(format!(
                        "nobody answered within timeout_seconds ({} s), and no inbox on this \
                         spool expired the request: is `answer-inbox watch` or the desktop app \
                         running on it?",
                        give_up.unwrap_or_default().as_secs()
                    ));
                }
                () = self.shutdown.cancelled(), if !cancel.is_cancelled() => {
                    cancel.cancel(self.stopped.get().cloned().unwrap_or_else(|| {
                        format!("the agent's MCP client went away during the {TOOL} call")
                    }));
                }
                _ = ticks.tick(), if !cancel.is_cancelled() => {
                    // Only clients that sent a progress token asked for progress.
                    let Some(token) = progress.clone() else { continue };
                    let waited = started.elapsed();
                    sent += 1;
                    let message = if sent == 1 {
                        format!("asked the operator (request {id}); waiting for the answer")
                    } else {
                        format!("waiting for the operator ({} s)", waited.as_secs())
                    };
                    // A client that cannot take the notification still gets the answer.
                    let _ = ctx
                        .peer
                        .notify_progress(
                            ProgressNotificationParam::new(token, waited.as_secs_f64())
                                .with_message(message),
                        )
                        .await;
                }
            }
        };
        Ok(outcome_result(asked, prepared.request(), notices))
    }

    #[tool(
        name = "ask_operator_start",
        title = "Ask the operator (start)",
        description = START_DESCRIPTION,
        input_schema = input::schema(Autonomy::Withheld),
        output_schema = reply::start_schema(),
        annotations(
            title = "Ask the operator (start)",
            read_only_hint = false,
            destructive_hint = false,
            idempotent_hint = false,
            open_world_hint = true
        )
    )]
    async fn ask_operator_start(
        &self,
        Parameters(arguments): Parameters<JsonObject>,
        ctx: RequestContext<RoleServer>,
    ) -> Result<CallToolResult, ErrorData> {
        let _in_progress = self.calls.token();
        let input::Translated { prepared, notices } =
            match self.translate(&arguments, &ctx, START_TOOL) {
                Ok(translated) => translated,
                Err(invalid) => return Ok(invalid),
            };
        let id = prepared.id().to_owned();
        let asker = self.asker.clone();
        let placing = prepared.clone();
        let placed = tokio::task::spawn_blocking(move || asker.place_prepared(&placing)).await;
        match placed {
            Ok(Ok(_)) => {}
            Ok(Err(error)) => {
                return Ok(reply::error(format!(
                    "The question could not be asked: {error}"
                )))
            }
            Err(error) => std::panic::resume_unwind(error.into_panic()),
        }
        tracing::debug!(%id, "asked the operator; the agent waits with ask_operator_wait");
        // Remembered after placing: a request that was never placed is not waited for.
        self.placed.remember(
            self.asker.spool().root(),
            prepared.request().clone(),
            prepared.bytes(),
            notices.clone(),
        );
        Ok(reply::started(
            &StartOutput {
                request_id: id,
                notices,
            },
            LONGEST_WAIT,
        ))
    }

    #[tool(
        name = "ask_operator_wait",
        title = "Wait for the operator's answer",
        description = WAIT_DESCRIPTION,
        input_schema = input::wait_schema(),
        output_schema = reply::wait_schema(),
        annotations(
            title = "Wait for the operator's answer",
            read_only_hint = false,
            destructive_hint = false,
            idempotent_hint = true,
            open_world_hint = true
        )
    )]
    async fn ask_operator_wait(
        &self,
        Parameters(arguments): Parameters<JsonObject>,
        ctx: RequestContext<RoleServer>,
    ) -> Result<CallToolResult, ErrorData> {
        let _in_progress = self.calls.token();
        let wait = match input::wait_input(&arguments) {
            Ok(wait) => wait,
            Err(problem) => return Ok(reply::error(problem)),
        };
        let id = wait.request_id;
        let placed = {
            let (placed, spool, id) = (
                self.placed.clone(),
                self.asker.spool().root().to_owned(),
                id.clone(),
            );
            // The agent asking now, as the request would name it: a request placed for
            // another agent is not this one's to read.
            let source = self.origin.source(ctx.client_info().as_ref());
            match tokio::task::spawn_blocking(move || placed.recall(&spool, &source, &id)).await {
                Ok(Ok(placed)) => placed,
                Ok(Err(problem)) => return Ok(reply::error(problem)),
                Err(error) => std::panic::resume_unwind(error.into_panic()),
            }
        };
        let mut longest = wait
            .wait_seconds
            .map_or(LONGEST_WAIT, Duration::from_secs)
            .min(LONGEST_WAIT);
        // As ask_operator does: past the request's expiry and the grace, with no inbox to
        // expire it, the request is withdrawn rather than waited for forever.
        let give_up_at = placed.give_up_at(self.settings.expiry_grace);
        if let Some(at) = give_up_at {
            let left = at
                .duration_since(std::time::SystemTime::now())
                .unwrap_or_default();
            longest = longest.min(left);
        }
        let options = AskOptions {
            timeout: Some(longest),
            cancel: None,
            require_person: false,
        };
        let asked = tokio::select! {
            asked = self.asker.wait_async(&id, &options) => asked,
            // The caller no longer reads the result, or the server stops: stop waiting. The
            // request stays pending for the next wait.
            () = ctx.ct.cancelled() => Ok(Reply::TimedOut { id: id.clone() }),
            () = self.shutdown.cancelled() => Ok(Reply::TimedOut { id: id.clone() }),
        };
        let asked = match asked {
            Ok(Reply::TimedOut { .. })
                if give_up_at.is_some_and(|at| std::time::SystemTime::now() >= at) =>
            {
                let reason = "nobody answered within timeout_seconds, and no inbox on this \
                              spool expired the request: is `answer-inbox watch` or the \
                              desktop app running on it?"
                    .to_owned();
                let (asker, withdrawn) = (self.asker.clone(), id.clone());
                match tokio::task::spawn_blocking(move || asker.withdraw(&withdrawn, &reason)).await
                {
                    Ok(withdrawn) => withdrawn,
                    Err(error) => std::panic::resume_unwind(error.into_panic()),
                }
            }
            asked => asked,
        };
        Ok(match asked {
            Ok(Reply::TimedOut { .. }) => reply::pending(&id),
            asked => outcome_result(
                asked.and_then(|reply| checked(reply, &placed)),
                &placed.request,
                placed.notices.clone(),
            ),
        })
    }
}

/// The reply, if its outcome answers the request as this server placed it (its SHA-256 and
/// questions), as `inbox_client` checks the outcome of a request it placed. The client's
/// own check read the request from `questions/`, which need not be what was placed.
fn checked(reply: Reply, placed: &Placed) -> Result<Reply, AskError> {
    if let Reply::Settled(outcome) = &reply {
        inbox_protocol::verify_outcome_for(outcome, &placed.request).map_err(|reason| {
            AskError::BadOutcome {
                id: outcome.id.clone(),
                reason,
            }
        })?;
    }
    Ok(reply)
}

/// The tool result for how a wait for `request` ended.
fn outcome_result(
    asked: Result<Reply, AskError>,
    request: &inbox_protocol::Request,
    notices: Vec<String>,
) -> CallToolResult {
    match asked {
        Ok(answer) => match AskOperatorOutput::new(&answer) {
            Some(output) => reply::result(request, &output.with_notices(notices)),
            None => reply::error(format!(
                "request {} is still pending: the wait ended without an outcome",
                answer.id()
            )),
        },
        // Someone wrote an outcome file that does not answer this request: never passed to
        // the agent as the operator's answer.
        Err(error @ AskError::BadOutcome { .. }) => reply::error(format!(
            "No trustworthy answer: {error}. It was not taken as the operator's answer; do \
             not proceed as if it were."
        )),
        Err(error) => reply::error(format!(
            "The question could not be asked or its answer not be read: {error}"
        )),
    }
}

#[tool_handler(router = self.tool_router)]
impl ServerHandler for Server {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(
                Implementation::new("answer-inbox", env!("CARGO_PKG_VERSION"))
                    .with_title("Answer Inbox"),
            )
            .with_instructions(INSTRUCTIONS)
    }
}
