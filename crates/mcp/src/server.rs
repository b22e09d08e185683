//! The rmcp handler: one tool, `ask_operator`, over an [`Asker`].

use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};

use inbox_client::{AskOptions, Asker, CancelToken};
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
use super::reply::AskOperatorOutput;
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
until the operator answers; follow a decline.";

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
        tool_router
            .map
            .get_mut(TOOL)
            .expect("the router serves ask_operator")
            .attr
            .input_schema = input::schema(settings.autonomy);
        Server {
            asker,
            origin: Arc::new(origin),
            settings,
            shutdown,
            stopped,
            calls,
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
        let source = self.origin.source(ctx.client_info().as_ref());
        let input::Translated { prepared, notices } =
            match input::prepare_request(&arguments, source, self.autonomy()) {
                Ok(translated) => translated,
                Err(problems) => return Ok(reply::invalid(&problems)),
            };
        let id = prepared.id().to_owned();
        tracing::debug!(%id, "asking the operator");
        if !notices.is_empty() {
            // For the operator reading the server's log: an agent tried to settle its own
            // question.
            tracing::warn!(
                %id,
                "the call asked for a mode this server does not allow (autonomous mode needs \
                 --allow-autonomous); the request is placed interactive"
            );
        }

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
                // call keeps running, so it withdraws the request and ends.
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
        Ok(match asked {
            Ok(answer) => match AskOperatorOutput::new(&answer) {
                Some(output) => reply::result(prepared.request(), &output.with_notices(notices)),
                None => reply::error(format!(
                    "request {id} is still pending: the wait ended without an outcome"
                )),
            },
            // Someone wrote an outcome file that does not answer this request: never passed
            // to the agent as the operator's answer.
            Err(error @ inbox_client::AskError::BadOutcome { .. }) => reply::error(format!(
                "No trustworthy answer: {error}. It was not taken as the operator's answer; \
                 do not proceed as if it were."
            )),
            Err(error) => reply::error(format!(
                "The question could not be asked or its answer not be read: {error}"
            )),
        })
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
