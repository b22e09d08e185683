//! `answer-inbox mcp`, black-box: a real MCP client (rmcp) starts the real binary and talks to
//! it over its standard streams; the operator answers with the real `answer-inbox answer`.
//! The host configurations in examples/ are started the same way, as their hosts would.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use rmcp::model::{
    CallToolRequestParams, CallToolResult, ClientCapabilities, ClientConfig, ClientRequest,
    Implementation, ProgressNotificationParam, Request,
};
use rmcp::service::{NotificationContext, PeerRequestOptions, RunningService};
use rmcp::transport::TokioChildProcess;
use rmcp::{ClientHandler, RoleClient, ServiceExt};
use serde_json::{json, Value};

use crate::util::{self, code, stderr, Inbox, Running};

/// The MCP client: an agent with a name, recording the progress notifications it gets.
#[derive(Clone)]
struct Agent {
    name: String,
    progress: Arc<Mutex<Vec<ProgressNotificationParam>>>,
}

impl ClientHandler for Agent {
    fn get_info(&self) -> ClientConfig {
        ClientConfig::new(
            ClientCapabilities::default(),
            Implementation::new(self.name.clone(), "1.2.3"),
        )
    }

    async fn on_progress(
        &self,
        params: ProgressNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) {
        self.progress.lock().unwrap().push(params);
    }
}

/// One `answer-inbox mcp` process and the client connected to it.
struct Session {
    client: RunningService<RoleClient, Agent>,
    progress: Arc<Mutex<Vec<ProgressNotificationParam>>>,
}

impl Session {
    /// Starts the server in `workdir` (progress every 0.2 s, so a test sees several) and
    /// completes the MCP handshake as `name`.
    async fn start(inbox: &Inbox, name: &str, workdir: &Path) -> Session {
        Session::start_with(inbox, name, workdir, &[]).await
    }

    /// [`Session::start`] with more arguments for `answer-inbox mcp`.
    async fn start_with(inbox: &Inbox, name: &str, workdir: &Path, more: &[&str]) -> Session {
        let mut args = vec!["mcp", "--progress-every", "0.2"];
        args.extend_from_slice(more);
        let mut command = inbox.cmd(&args);
        command.current_dir(workdir);
        Session::start_command(command, name).await
    }

    /// Starts `command` as the server and completes the MCP handshake as `name`.
    async fn start_command(command: std::process::Command, name: &str) -> Session {
        let mut command = tokio::process::Command::from(command);
        // Stopped with the test even when it fails before closing the session.
        command.kill_on_drop(true);
        let transport = TokioChildProcess::new(command).expect("answer-inbox mcp starts");
        let agent = Agent {
            name: name.to_owned(),
            progress: Arc::default(),
        };
        let progress = agent.progress.clone();
        let client = agent.serve(transport).await.expect("the MCP handshake");
        Session { client, progress }
    }

    /// Calls `ask_operator` in the background.
    fn ask(&self, arguments: Value) -> tokio::task::JoinHandle<CallToolResult> {
        let peer = self.client.peer().clone();
        tokio::spawn(async move {
            peer.call_tool(call(arguments))
                .await
                .expect("the call completes")
        })
    }

    fn progress_messages(&self) -> Vec<String> {
        self.progress
            .lock()
            .unwrap()
            .iter()
            .filter_map(|p| p.message.clone())
            .collect()
    }

    /// Closes the client's end and waits for the server to exit (rmcp closes its input and
    /// waits up to 3 s before signalling it).
    async fn close(self) -> Duration {
        let started = Instant::now();
        self.client.cancel().await.expect("the session closes");
        started.elapsed()
    }
}

fn call(arguments: Value) -> CallToolRequestParams {
    CallToolRequestParams::new("ask_operator").with_arguments(
        arguments
            .as_object()
            .expect("arguments are an object")
            .clone(),
    )
}

/// A git repository `shop` in which the agent works in `shop/api`.
fn workdir(inbox: &Inbox) -> PathBuf {
    let root = inbox.dir.path().join("shop");
    std::fs::create_dir_all(root.join(".git")).unwrap();
    std::fs::create_dir_all(root.join("api")).unwrap();
    root.join("api")
}

/// Waits until `count` requests are in `questions/`; returns them by id.
async fn requests(inbox: &Inbox, count: usize) -> BTreeMap<String, Value> {
    let dir = inbox.spool().join("questions");
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let found: BTreeMap<String, Value> = std::fs::read_dir(&dir)
            .into_iter()
            .flatten()
            .flatten()
            .map(|entry| {
                let name = entry.file_name().to_string_lossy().into_owned();
                let body = std::fs::read(entry.path()).unwrap();
                (
                    name.trim_end_matches(".json").to_owned(),
                    serde_json::from_slice(&body).unwrap(),
                )
            })
            .collect();
        if found.len() >= count {
            assert_eq!(found.len(), count, "more requests than calls: {found:?}");
            return found;
        }
        assert!(Instant::now() < deadline, "only {found:?} placed");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// Waits (without blocking the runtime) until `check` holds.
async fn until(what: &str, mut check: impl FnMut() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(20);
    while !check() {
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

fn answer(inbox: &Inbox, args: &[&str]) {
    let mut all = vec!["answer"];
    all.extend_from_slice(args);
    let out = inbox.run(&all);
    assert_eq!(code(&out), 0, "answer {args:?}: {}", stderr(&out));
}

fn text(result: &CallToolResult) -> String {
    result
        .content
        .iter()
        .filter_map(|block| block.as_text())
        .map(|t| t.text.clone())
        .collect::<Vec<_>>()
        .join("\n")
}

fn tombstone(inbox: &Inbox, id: &str) -> PathBuf {
    inbox.spool().join("cancel").join(id)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_tool_is_listed_with_when_to_use_it_and_its_schemas() {
    let inbox = Inbox::new();
    let session = Session::start(&inbox, "lister", &workdir(&inbox)).await;
    let info = session
        .client
        .peer_info()
        .expect("the server introduced itself");
    assert_eq!(
        info.server_info.as_ref().map(|s| s.name.as_str()),
        Some("answer-inbox")
    );
    assert!(
        info.instructions
            .as_deref()
            .is_some_and(|i| i.contains("ask_operator")),
        "{:?}",
        info.instructions
    );

    let tools = session.client.list_all_tools().await.unwrap();
    assert_eq!(tool_names(&tools), TOOLS);
    let tool = tools.iter().find(|t| t.name == "ask_operator").unwrap();
    let description = tool.description.as_deref().unwrap_or_default();
    for expected in [
        "irreversible",
        "ambiguous",
        "Do not use it",
        "reversible and low-risk",
    ] {
        assert!(description.contains(expected), "{expected}: {description}");
    }
    let input = Value::Object((*tool.input_schema).clone());
    assert_eq!(input["required"], json!(["questions"]), "{input}");
    assert!(input["properties"]["questions"].is_object(), "{input}");
    let output = Value::Object((**tool.output_schema.as_ref().expect("an output schema")).clone());
    assert!(output["properties"]["status"].is_object(), "{output}");
    session.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_call_waits_for_the_operator_and_returns_the_answers() {
    let inbox = Inbox::new();
    let workdir = workdir(&inbox);
    let session = Session::start(&inbox, "test-agent", &workdir).await;
    let call = session.ask(json!({
        "title": "Release billing 2.14",
        "priority": "high",
        "questions": [
            {"type": "yes_no", "id": "go", "question": "Deploy to production?",
             "description": "23 commits since 2.13."},
            {"type": "single_choice", "id": "db", "question": "Which database?",
             "label": "Database",
             "choices": [{"label": "PostgreSQL", "description": "what prod runs"},
                         {"label": "SQLite"}]},
            {"type": "multi_choice", "question": "Notify whom?",
             "choices": [{"label": "ops"}, {"label": "sales"}]}
        ]
    }));

    let placed = requests(&inbox, 1).await;
    let (id, request) = placed.iter().next().unwrap();
    assert_eq!(request["title"], "Release billing 2.14");
    assert_eq!(request["priority"], "high");
    assert_eq!(request["questions"][0]["type"], "yes_no");
    assert_eq!(
        request["questions"][1]["choices"][0],
        json!({"id": "PostgreSQL", "label": "PostgreSQL", "description": "what prod runs"})
    );
    let source = &request["source"];
    assert_eq!(source["app"], "test-agent");
    assert_eq!(source["tool"], "ask_operator");
    assert!(
        source["run"]
            .as_str()
            .unwrap()
            .starts_with("test-agent 1.2.3"),
        "{source}"
    );
    assert!(
        !source["host"].as_str().unwrap_or_default().is_empty(),
        "{source}"
    );
    assert_eq!(source["cwd"], workdir.display().to_string());
    assert_eq!(source["project"], "shop");

    // Progress while nobody answers: the first names the request, the next count seconds.
    until("progress notifications", || {
        session.progress_messages().len() >= 3
    })
    .await;
    let messages = session.progress_messages();
    assert!(messages[0].contains(id.as_str()), "{messages:?}");
    assert!(
        messages[1..]
            .iter()
            .all(|m| m.starts_with("waiting for the operator (")),
        "{messages:?}"
    );
    assert!(!call.is_finished(), "the call waits for the operator");

    answer(
        &inbox,
        &[
            id,
            "--set",
            "go=yes",
            "--set",
            "db=MariaDB, as agreed",
            "--set",
            "q3=ops",
            "--set",
            "q3=sales",
        ],
    );
    let result = call.await.unwrap();
    assert_eq!(result.is_error, Some(false), "{result:?}");
    let structured = result
        .structured_content
        .clone()
        .expect("structured content");
    assert_eq!(structured["id"], id.as_str());
    assert_eq!(structured["status"], "answered");
    assert_eq!(structured["answered_by"], util::operator().as_str());
    assert_eq!(
        structured["answers"],
        json!({"go": true, "db": "MariaDB, as agreed", "q3": ["ops", "sales"]})
    );
    assert_eq!(structured["custom"], json!(["db"]));
    let text = text(&result);
    assert!(
        text.starts_with(&format!("The operator answered ({}):", util::operator())),
        "{text}"
    );
    assert!(text.contains("- Deploy to production? → Yes"), "{text}");
    assert!(
        text.contains("- Which database? → their own words: \"MariaDB, as agreed\""),
        "{text}"
    );
    assert!(text.contains("- Notify whom? → ops, sales"), "{text}");
    session.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cancelled_call_or_a_departed_client_withdraws_the_request() {
    let inbox = Inbox::new();
    let workdir = workdir(&inbox);
    let question = |text: &str| json!({"questions": [{"type": "yes_no", "question": text}]});
    let session = Session::start(&inbox, "canceller", &workdir).await;

    // notifications/cancelled for a call in progress.
    let handle = session
        .client
        .send_cancellable_request(
            ClientRequest::CallToolRequest(Request::new(call(question("Explicit cancel?")))),
            PeerRequestOptions::no_options(),
        )
        .await
        .unwrap();
    let first = requests(&inbox, 1).await.into_keys().next().unwrap();
    assert!(!tombstone(&inbox, &first).exists());
    handle
        .cancel(Some("the user pressed Escape".into()))
        .await
        .unwrap();
    until("the first tombstone", || tombstone(&inbox, &first).exists()).await;
    let reason = std::fs::read_to_string(tombstone(&inbox, &first)).unwrap();
    assert!(
        reason.contains("cancelled the ask_operator call"),
        "{reason}"
    );

    // A call future dropped by the client (rmcp sends the cancel itself).
    let dropped = tokio::time::timeout(
        Duration::from_millis(500),
        session.client.call_tool(call(question("Dropped?"))),
    )
    .await;
    assert!(
        dropped.is_err(),
        "nobody answered, so the call was still waiting"
    );
    let placed = requests(&inbox, 2).await;
    let second = placed.keys().find(|id| **id != first).unwrap().clone();
    until("the second tombstone", || {
        tombstone(&inbox, &second).exists()
    })
    .await;

    // The session still serves after its calls were cancelled.
    let still = session.ask(question("Still there?"));
    let placed = requests(&inbox, 3).await;
    let third = placed
        .keys()
        .find(|id| **id != first && **id != second)
        .unwrap()
        .clone();
    answer(&inbox, &[&third, "--set", "q1=no"]);
    let result = still.await.unwrap();
    assert_eq!(result.structured_content.unwrap()["answers"]["q1"], false);

    // The client goes away with a call pending: the server withdraws it, then exits by
    // itself (rmcp would signal it after 3 s).
    let _pending = session.ask(question("Abandoned?"));
    let placed = requests(&inbox, 4).await;
    let fourth = placed
        .keys()
        .find(|id| ![&first, &second, &third].contains(id))
        .unwrap()
        .clone();
    let took = session.close().await;
    assert!(
        took < Duration::from_millis(2500),
        "the server lingered {took:?}"
    );
    assert!(tombstone(&inbox, &fourth).exists());
    let reason = std::fs::read_to_string(tombstone(&inbox, &fourth)).unwrap();
    assert!(reason.contains("went away"), "{reason}");
    assert!(
        !tombstone(&inbox, &third).exists(),
        "an answered request stays answered"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_calls_from_two_clients_each_get_their_own_answer() {
    let inbox = Inbox::new();
    let workdir = workdir(&inbox);
    let alpha = Session::start(&inbox, "agent-alpha", &workdir).await;
    let beta = Session::start(&inbox, "agent-beta", &workdir).await;
    let ask = |session: &Session, topic: &str| {
        session.ask(json!({"questions": [
            {"type": "free_text", "question": format!("Name for the {topic}?")}
        ]}))
    };
    let calls = [
        ("agent-alpha", "service", ask(&alpha, "service")),
        ("agent-alpha", "queue", ask(&alpha, "queue")),
        ("agent-beta", "bucket", ask(&beta, "bucket")),
    ];

    let placed = requests(&inbox, 3).await;
    let mut answered = BTreeMap::new();
    for (id, request) in &placed {
        let question = request["questions"][0]["question"].as_str().unwrap();
        let topic = question
            .trim_start_matches("Name for the ")
            .trim_end_matches('?');
        let app = request["source"]["app"].as_str().unwrap();
        let answer_text = format!("{topic}-from-{app}");
        answer(&inbox, &[id, "--set", &format!("q1={answer_text}")]);
        answered.insert(id.clone(), answer_text);
    }
    for (app, topic, call) in calls {
        let result = call.await.unwrap();
        let structured = result.structured_content.expect("structured content");
        let id = structured["id"].as_str().unwrap();
        assert_eq!(structured["answers"]["q1"], format!("{topic}-from-{app}"));
        assert_eq!(answered[id], format!("{topic}-from-{app}"));
    }
    // Each session ran in its own process with its own session id.
    let runs: std::collections::BTreeSet<&str> = placed
        .values()
        .map(|r| r["source"]["run"].as_str().unwrap())
        .collect();
    assert_eq!(runs.len(), 2, "{runs:?}");
    alpha.close().await;
    beta.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_declined_request_reads_as_a_refusal() {
    let inbox = Inbox::new();
    let session = Session::start(&inbox, "decliner", &workdir(&inbox)).await;
    let call = session.ask(json!({"questions": [
        {"type": "yes_no", "question": "Drop the staging database?"}
    ]}));
    let id = requests(&inbox, 1).await.into_keys().next().unwrap();
    answer(&inbox, &[&id, "--decline", "not during the change freeze"]);
    let result = call.await.unwrap();
    assert_eq!(
        result.is_error,
        Some(false),
        "a decline is an answer, not a failure"
    );
    let structured = result.structured_content.clone().unwrap();
    assert_eq!(structured["status"], "declined");
    assert_eq!(structured["reason"], "not during the change freeze");
    assert_eq!(structured["answers"], json!({}));
    let text = text(&result);
    assert!(text.contains("DECLINED"), "{text}");
    assert!(text.contains("\"not during the change freeze\""), "{text}");
    assert!(text.contains("Do not go ahead"), "{text}");
    session.close().await;
}

/// An outcome file that does not answer the request as placed (here one for another
/// version of it, "approving" with the right account and a fitting answer) is never handed
/// to the agent as the operator's answer: the call ends as an error that says so.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_forged_outcome_is_an_error_never_an_answer() {
    let inbox = Inbox::new();
    let session = Session::start(&inbox, "trusting", &workdir(&inbox)).await;
    let call = session.ask(json!({"questions": [
        {"type": "yes_no", "question": "Drop the production database?"}
    ]}));
    let id = requests(&inbox, 1).await.into_keys().next().unwrap();
    let forged = json!({
        "inbox": 1,
        "id": id,
        "status": "answered",
        "answers": {"q1": true},
        "answered_by": util::operator(),
        "answered_at": "2026-01-02T03:04:05Z",
        "request_sha256": inbox_protocol::sha256_hex(b"the request someone else approved"),
        "instance": "elsewhere/01J0000000000000000000000",
    });
    // Whole, as a writer outside the inbox could place it.
    let tmp = inbox.spool().join("tmp").join(format!("{id}.forged"));
    std::fs::write(&tmp, serde_json::to_vec(&forged).unwrap()).unwrap();
    std::fs::rename(
        &tmp,
        inbox.spool().join("answers").join(format!("{id}.json")),
    )
    .unwrap();

    let result = call.await.unwrap();
    assert_eq!(result.is_error, Some(true), "{result:?}");
    let text = text(&result);
    assert!(
        text.contains("No trustworthy answer") && text.contains("request_sha256"),
        "{text}"
    );
    assert!(
        result
            .structured_content
            .is_none_or(|structured| structured["status"] != "answered"),
        "never reported as answered"
    );
    session.close().await;
}

/// With no inbox on the spool nothing expires a request, yet the agent was promised the wait
/// ends: past timeout_seconds and the grace, the call withdraws its request and says why.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_call_past_its_timeout_with_no_inbox_to_expire_it_withdraws() {
    let inbox = Inbox::new();
    let session = Session::start_with(
        &inbox,
        "patient",
        &workdir(&inbox),
        &["--expiry-grace", "0.5"],
    )
    .await;
    let started = Instant::now();
    let result = session
        .ask(json!({"timeout_seconds": 1, "questions": [
            {"type": "yes_no", "question": "Rotate the keys?"}
        ]}))
        .await
        .unwrap();
    assert!(started.elapsed() >= Duration::from_millis(1500));
    let structured = result.structured_content.clone().unwrap();
    assert_eq!(structured["status"], "cancelled", "{structured:#}");
    let reason = structured["reason"].as_str().unwrap();
    assert!(
        reason.contains("no inbox on this spool expired"),
        "{reason}"
    );
    let id = structured["id"].as_str().unwrap();
    assert!(tombstone(&inbox, id).exists());
    session.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn invalid_questions_are_a_tool_error_naming_every_problem() {
    let inbox = Inbox::new();
    let session = Session::start(&inbox, "sloppy", &workdir(&inbox)).await;
    let result = session
        .client
        .call_tool(call(json!({
            "colour": "red",
            "questions": [
                {"type": "single_choice", "question": "Which region?"},
                {"type": "maybe", "question": "Go?"}
            ]
        })))
        .await
        .expect("a tool error is a result, not a protocol error");
    assert_eq!(result.is_error, Some(true));
    let text = text(&result);
    for expected in ["/colour", "/questions/0/choices", "/questions/1/type"] {
        assert!(text.contains(expected), "{expected}: {text}");
    }
    assert!(text.contains("was not asked"), "{text}");
    let placed = std::fs::read_dir(inbox.spool().join("questions"))
        .unwrap()
        .count();
    assert_eq!(placed, 0, "nothing is placed");
    session.close().await;
}

/// Hosts stop their servers with a signal too; pending questions must not be left behind.
/// (Raw JSON-RPC here: the rmcp client does not expose its child's pid.)
#[test]
fn a_sigterm_withdraws_pending_questions_before_the_server_exits() {
    withdrawn_on_signal("TERM");
}

/// Issue 24: a terminal that closes sends SIGHUP, whose default action would end the server
/// with its questions left pending; it withdraws them like SIGTERM does.
#[test]
fn a_sighup_withdraws_pending_questions_before_the_server_exits() {
    withdrawn_on_signal("HUP");
}

/// Sends SIG`signal` to a server with an `ask_operator` call pending: it exits cleanly
/// after placing the request's tombstone, which names the signal, and answers nothing.
fn withdrawn_on_signal(signal: &str) {
    let inbox = Inbox::new();
    // Its standard input stays open to the end: closing it would be the client going away,
    // another path.
    let mut raw = RawServer::start(&inbox);
    raw.call(2, "ask_operator", yes_no("Still needed?"));
    let id = placed_besides(&inbox, &[]);
    let pid = raw.server.child.id().to_string();
    let sent = std::process::Command::new("kill")
        .args([&format!("-{signal}"), &pid])
        .status()
        .unwrap();
    assert!(sent.success());
    let mut exited = None;
    util::eventually("the server to exit", || {
        exited = raw.server.child.try_wait().unwrap();
        exited.is_some()
    });
    assert_eq!(
        exited.unwrap().code(),
        Some(0),
        "SIG{signal} ends it cleanly"
    );
    let reason = std::fs::read_to_string(tombstone(&inbox, &id)).expect("the tombstone");
    assert!(
        reason.contains(&format!("stopped (SIG{signal})")),
        "{reason}"
    );
    assert!(!raw.answered(2));
}

/// A call that would settle itself: autonomous mode and a default for every question, on a
/// question no default should settle.
fn self_settling() -> Value {
    json!({
        "title": "Deploy build 99 to PRODUCTION?",
        "priority": "critical",
        "mode": "autonomous",
        "questions": [
            {"type": "yes_no", "id": "deploy", "default": true,
             "question": "Deploy build 99 to production and drop the old database?"},
            {"type": "single_choice", "id": "window", "question": "When?",
             "choices": [{"label": "now"}, {"label": "tonight"}], "default": "now"}
        ]
    })
}

/// `answer-inbox watch` on the inbox's spool, ready.
fn watch(inbox: &Inbox) -> Running {
    std::fs::create_dir_all(inbox.spool()).unwrap();
    let mut watch = Running::spawn(inbox.cmd(&["watch", "--no-notify"]));
    watch.wait_line("ready");
    watch
}

/// The listed `ask_operator` input schema, after checking that `ask_operator_start` lists
/// the same one (it takes the same arguments, `mode` included or not).
async fn input_schema(session: &Session) -> Value {
    let tools = session.client.list_all_tools().await.unwrap();
    let schema_of = |name: &str| {
        let tool = tools.iter().find(|t| t.name == name).unwrap();
        Value::Object((*tool.input_schema).clone())
    };
    let schema = schema_of("ask_operator");
    assert_eq!(schema_of("ask_operator_start"), schema);
    schema
}

/// Issue 13: unless the operator allows it, a model cannot approve its own question by
/// sending autonomous mode with defaults. The schema does not offer `mode`; a call that sends
/// it anyway is asked of a person, and the result says so.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_allow_autonomous_a_call_cannot_settle_itself() {
    let inbox = Inbox::new();
    let mut watch = watch(&inbox);
    let session = Session::start(&inbox, "eager-agent", &workdir(&inbox)).await;
    let input = input_schema(&session).await;
    assert!(input["properties"].get("mode").is_none(), "{input:#}");
    assert!(
        !input.to_string().contains("\"autonomous\""),
        "nothing offers autonomous mode: {input:#}"
    );

    let call = session.ask(self_settling());
    let (id, request) = requests(&inbox, 1).await.into_iter().next().unwrap();
    assert_eq!(request["mode"], "interactive", "{request:#}");
    // The engine takes files in order, each turn applying its policies to what it took: once
    // a later request is in, autonomous mode has had its chance at this one.
    let later =
        r#"{"inbox": 1, "questions": [{"id": "go", "question": "Go?", "type": "confirm"}]}"#;
    tokio::task::block_in_place(|| {
        watch.wait_line(&format!("ingested {id}"));
        inbox.place("later", later);
        watch.wait_line("ingested later");
    });
    assert!(
        !watch
            .seen
            .iter()
            .any(|line| line.contains(&id) && line.contains("defaulted")),
        "{:#?}",
        watch.seen
    );
    assert!(!call.is_finished(), "the call waits for a person");

    answer(
        &inbox,
        &[&id, "--set", "deploy=no", "--set", "window=tonight"],
    );
    let result = call.await.unwrap();
    assert_eq!(result.is_error, Some(false), "{result:?}");
    let structured = result.structured_content.clone().unwrap();
    assert_eq!(structured["status"], "answered", "{structured:#}");
    assert_eq!(structured["answered_by"], util::operator().as_str());
    assert_eq!(
        structured["answers"],
        json!({"deploy": false, "window": "tonight"})
    );
    let notice = structured["notices"][0].as_str().unwrap_or_default();
    assert!(
        notice.contains("\"autonomous\"") && notice.contains("--allow-autonomous"),
        "{structured:#}"
    );
    let text = text(&result);
    assert!(text.starts_with("The operator answered"), "{text}");
    assert!(text.contains(&format!("Note: {notice}")), "{text}");
    session.close().await;
}

/// With the operator's leave, `mode` is offered, and autonomous mode works where the
/// operator's policy honours it for this client (the shipped policy holds every agent's).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn with_allow_autonomous_a_call_may_settle_by_its_defaults() {
    let inbox = Inbox::new();
    let policy = inbox.policy_file();
    std::fs::create_dir_all(policy.parent().unwrap()).unwrap();
    std::fs::write(
        &policy,
        "[[rule]]\nname = \"trusted-pipeline\"\ntool = \"ask_operator\"\n\
         app = \"trusted-pipeline\"\nautonomous = \"honour\"\n",
    )
    .unwrap();
    let _watch = watch(&inbox);
    let session = Session::start_with(
        &inbox,
        "trusted-pipeline",
        &workdir(&inbox),
        &["--allow-autonomous"],
    )
    .await;
    let input = input_schema(&session).await;
    let mode = &input["properties"]["mode"];
    assert!(mode.is_object(), "{input:#}");
    assert!(
        (mode.to_string() + &input["$defs"].to_string()).contains("\"autonomous\""),
        "{input:#}"
    );

    let result = session.ask(self_settling()).await.unwrap();
    let structured = result.structured_content.clone().unwrap();
    assert_eq!(structured["status"], "defaulted", "{structured:#}");
    assert_eq!(
        structured["answered_by"], "policy:rule:trusted-pipeline",
        "{structured:#}"
    );
    assert_eq!(
        structured["answers"],
        json!({"deploy": true, "window": "now"})
    );
    assert!(structured.get("notices").is_none(), "{structured:#}");
    session.close().await;
}

/// Every tool the server lists, by name.
const TOOLS: [&str; 3] = ["ask_operator", "ask_operator_start", "ask_operator_wait"];

/// The listed tools' names, sorted (the listing's order is the server's own).
fn tool_names(tools: &[rmcp::model::Tool]) -> Vec<String> {
    let mut names: Vec<String> = tools.iter().map(|t| t.name.to_string()).collect();
    names.sort();
    names
}

/// Calls `tool` and waits for its result.
async fn call_tool(session: &Session, tool: &'static str, arguments: Value) -> CallToolResult {
    session
        .client
        .call_tool(
            CallToolRequestParams::new(tool)
                .with_arguments(arguments.as_object().expect("an object").clone()),
        )
        .await
        .expect("a tool result, not a protocol error")
}

/// Issue 15: crush's `question` tool writes choices as `{id, label, description}`.
fn crush_style_questions() -> Value {
    json!({"title": "Pick the database", "questions": [
        {"type": "single_choice", "id": "db", "question": "Which database for billing?",
         "choices": [
             {"id": "pg", "label": "PostgreSQL", "description": "what prod runs"},
             {"id": "lite", "label": "SQLite", "description": "one file"}
         ]}
    ]})
}

/// Issue 15: for hosts that cut tool calls off after a minute, `ask_operator_start` places
/// the request and returns at once, and `ask_operator_wait` waits a bounded time per call,
/// across calls and across a restart of the server, returning what ask_operator would.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn start_returns_at_once_and_wait_returns_the_outcome_across_a_restart() {
    let inbox = Inbox::new();
    let workdir = workdir(&inbox);
    let first = Session::start(&inbox, "impatient-host", &workdir).await;

    let started = Instant::now();
    let result = call_tool(&first, "ask_operator_start", crush_style_questions()).await;
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "start returned after {:?}",
        started.elapsed()
    );
    assert_eq!(result.is_error, Some(false), "{result:?}");
    let id = result.structured_content.clone().unwrap()["request_id"]
        .as_str()
        .expect("a request_id")
        .to_owned();
    let said = text(&result);
    assert!(
        said.contains("ask_operator_wait") && said.contains(&id),
        "{said}"
    );
    let placed = requests(&inbox, 1).await;
    let request = &placed[&id];
    assert_eq!(
        request["questions"][0]["choices"][0],
        json!({"id": "pg", "label": "PostgreSQL", "description": "what prod runs"})
    );
    assert_eq!(request["source"]["app"], "impatient-host");

    // Nobody has answered: the wait ends after its wait_seconds, pending.
    let started = Instant::now();
    let pending = call_tool(
        &first,
        "ask_operator_wait",
        json!({"request_id": id, "wait_seconds": 1}),
    )
    .await;
    let took = started.elapsed();
    assert!(
        took >= Duration::from_millis(900) && took < Duration::from_secs(5),
        "{took:?}"
    );
    assert_eq!(pending.is_error, Some(false), "{pending:?}");
    let structured = pending.structured_content.clone().unwrap();
    assert_eq!(structured["status"], "pending", "{structured:#}");
    assert_eq!(structured["id"], id.as_str());
    assert!(
        text(&pending).contains("still pending"),
        "{}",
        text(&pending)
    );
    // The request outlives the session that placed it: closing it withdraws nothing.
    first.close().await;
    assert!(!tombstone(&inbox, &id).exists());

    // A new server (the host restarted it) knows the request from the spool.
    let second = Session::start(&inbox, "impatient-host", &workdir).await;
    let waiting = {
        let peer = second.client.peer().clone();
        let id = id.clone();
        tokio::spawn(async move {
            peer.call_tool(
                CallToolRequestParams::new("ask_operator_wait").with_arguments(
                    json!({"request_id": id, "wait_seconds": 30})
                        .as_object()
                        .unwrap()
                        .clone(),
                ),
            )
            .await
            .expect("the wait completes")
        })
    };
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert!(!waiting.is_finished(), "the wait waits for the operator");
    let answered_at = Instant::now();
    answer(&inbox, &[&id, "--set", "db=pg"]);
    let result = waiting.await.unwrap();
    assert!(
        answered_at.elapsed() < Duration::from_secs(10),
        "the wait ended with the answer, not its wait_seconds"
    );
    assert_eq!(result.is_error, Some(false), "{result:?}");
    let structured = result.structured_content.clone().unwrap();
    assert_eq!(structured["status"], "answered", "{structured:#}");
    assert_eq!(structured["id"], id.as_str());
    // Answered by the choice's id; the text reads it by the label the operator saw.
    assert_eq!(structured["answers"], json!({"db": "pg"}));
    assert_eq!(structured["answered_by"], util::operator().as_str());
    let said = text(&result);
    assert!(
        said.starts_with("The operator answered")
            && said.contains("- Which database for billing? → PostgreSQL"),
        "{said}"
    );

    // Waiting again returns the same outcome.
    let again = call_tool(
        &second,
        "ask_operator_wait",
        json!({"request_id": id, "wait_seconds": 0}),
    )
    .await;
    assert_eq!(
        again.structured_content.unwrap()["answers"],
        json!({"db": "pg"})
    );
    second.close().await;
}

/// ask_operator answers choices given with ids by those ids, too.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ask_operator_answers_choices_given_with_ids_by_id() {
    let inbox = Inbox::new();
    let session = Session::start(&inbox, "crush", &workdir(&inbox)).await;
    let call = session.ask(crush_style_questions());
    let id = requests(&inbox, 1).await.into_keys().next().unwrap();
    answer(&inbox, &[&id, "--set", "db=lite"]);
    let result = call.await.unwrap();
    let structured = result.structured_content.clone().unwrap();
    assert_eq!(
        structured["answers"],
        json!({"db": "lite"}),
        "{structured:#}"
    );
    assert!(text(&result).contains("→ SQLite"), "{}", text(&result));
    session.close().await;
}

/// Only requests ask_operator placed can be waited for, and each mistake says what is wrong.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn waiting_for_a_request_never_placed_is_a_tool_error() {
    let inbox = Inbox::new();
    let session = Session::start(&inbox, "confused", &workdir(&inbox)).await;
    // A request in the spool that ask_operator did not place (a CI gate's, say).
    inbox.place(
        "ci-gate-7",
        r#"{"inbox": 1, "questions": [{"id": "go", "question": "Deploy?", "type": "confirm"}]}"#,
    );
    for (arguments, expected) in [
        (
            json!({"request_id": "01NEVERPLACED"}),
            "refuses request \"01NEVERPLACED\": this server did not place it",
        ),
        (
            json!({"request_id": "ci-gate-7"}),
            "refuses request \"ci-gate-7\": this server did not place it",
        ),
        (
            json!({"request_id": "../../etc/passwd"}),
            "is not a request id",
        ),
        (json!({"wait_seconds": 5}), "request_id"),
        (json!({"request_id": "x", "colour": "red"}), "colour"),
    ] {
        let started = Instant::now();
        let result = call_tool(&session, "ask_operator_wait", arguments.clone()).await;
        assert_eq!(result.is_error, Some(true), "{arguments}: {result:?}");
        assert!(
            text(&result).contains(expected),
            "{arguments}: {}",
            text(&result)
        );
        assert!(
            started.elapsed() < Duration::from_secs(5),
            "said at once, not after a wait"
        );
    }
    session.close().await;
}

/// The outcome a wait returns must answer the request as the server placed it: an outcome
/// bound to other bytes is an error, never an answer.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_forged_outcome_is_an_error_for_wait_too() {
    let inbox = Inbox::new();
    let session = Session::start(&inbox, "trusting", &workdir(&inbox)).await;
    let result = call_tool(
        &session,
        "ask_operator_start",
        json!({"questions": [{"type": "yes_no", "question": "Drop the production database?"}]}),
    )
    .await;
    let id = result.structured_content.unwrap()["request_id"]
        .as_str()
        .unwrap()
        .to_owned();
    let forged = json!({
        "inbox": 1,
        "id": id,
        "status": "answered",
        "answers": {"q1": true},
        "answered_by": util::operator(),
        "answered_at": "2026-01-02T03:04:05Z",
        "request_sha256": inbox_protocol::sha256_hex(b"the request someone else approved"),
        "instance": "elsewhere/01J0000000000000000000000",
    });
    let tmp = inbox.spool().join("tmp").join(format!("{id}.forged"));
    std::fs::write(&tmp, serde_json::to_vec(&forged).unwrap()).unwrap();
    std::fs::rename(
        &tmp,
        inbox.spool().join("answers").join(format!("{id}.json")),
    )
    .unwrap();
    let result = call_tool(
        &session,
        "ask_operator_wait",
        json!({"request_id": id, "wait_seconds": 5}),
    )
    .await;
    assert_eq!(result.is_error, Some(true), "{result:?}");
    assert!(
        text(&result).contains("No trustworthy answer"),
        "{}",
        text(&result)
    );
    session.close().await;
}

/// The server checks a wait's outcome against the request as it placed it (kept in memory),
/// not against whatever `questions/` holds now: a request file swapped for another with a
/// matching outcome is an error, never an answer.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_swapped_request_with_its_own_outcome_is_an_error_for_wait() {
    let inbox = Inbox::new();
    let session = Session::start(&inbox, "trusting", &workdir(&inbox)).await;
    let result = call_tool(
        &session,
        "ask_operator_start",
        json!({"questions": [{"type": "yes_no", "question": "Drop the production database?"}]}),
    )
    .await;
    let id = result.structured_content.unwrap()["request_id"]
        .as_str()
        .unwrap()
        .to_owned();
    let placed = inbox.spool().join("questions").join(format!("{id}.json"));
    let mut swapped: Value = serde_json::from_slice(&std::fs::read(&placed).unwrap()).unwrap();
    swapped["questions"][0]["question"] = json!("Keep the production database?");
    let swapped = serde_json::to_vec_pretty(&swapped).unwrap();
    std::fs::remove_file(&placed).unwrap();
    inbox.place_file(&format!("{id}.json"), &swapped);
    let outcome = json!({
        "inbox": 1,
        "id": id,
        "status": "answered",
        "answers": {"q1": true},
        "answered_by": util::operator(),
        "answered_at": "2026-01-02T03:04:05Z",
        "request_sha256": inbox_protocol::sha256_hex(&swapped),
        "instance": "elsewhere/01J0000000000000000000000",
    });
    let tmp = inbox.spool().join("tmp").join(format!("{id}.swapped"));
    std::fs::write(&tmp, serde_json::to_vec(&outcome).unwrap()).unwrap();
    std::fs::rename(
        &tmp,
        inbox.spool().join("answers").join(format!("{id}.json")),
    )
    .unwrap();
    let result = call_tool(
        &session,
        "ask_operator_wait",
        json!({"request_id": id, "wait_seconds": 5}),
    )
    .await;
    assert_eq!(result.is_error, Some(true), "{result:?}");
    let said = text(&result);
    assert!(
        said.contains("No trustworthy answer") && said.contains("request_sha256"),
        "{said}"
    );
    session.close().await;
}

fn example(name: &str) -> String {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../examples")
        .join(name);
    std::fs::read_to_string(&path).unwrap_or_else(|error| panic!("{}: {error}", path.display()))
}

/// Starts the server a host configuration names (`answer-inbox` being the built binary) and
/// checks that it lists every tool.
async fn start_as_configured_and_list(inbox: &Inbox, program: &str, args: &[String]) {
    assert_eq!(program, "answer-inbox", "the example runs answer-inbox");
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    assert_eq!(args, ["mcp"]);
    let mut command = inbox.cmd(&args);
    command.current_dir(workdir(inbox));
    let session = Session::start_command(command, "example-host").await;
    let tools = session.client.list_all_tools().await.unwrap();
    assert_eq!(tool_names(&tools), TOOLS);
    session.close().await;
}

/// examples/mcp-vscode.json, a `.vscode/mcp.json`: its stdio server starts and lists the
/// tools.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_vscode_example_starts_a_server_listing_the_tools() {
    let config: Value = serde_json::from_str(&example("mcp-vscode.json")).unwrap();
    let server = &config["servers"]["answer-inbox"];
    assert_eq!(server["type"], "stdio", "{config:#}");
    let program = server["command"].as_str().expect("a command");
    let args: Vec<String> = serde_json::from_value(server["args"].clone()).expect("args");
    start_as_configured_and_list(&Inbox::new(), program, &args).await;
}

/// examples/mcp-codex.toml, a table for Codex's config.toml: its server starts and lists the
/// tools.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_codex_example_starts_a_server_listing_the_tools() {
    let config: Value = toml::from_str(&example("mcp-codex.toml")).unwrap();
    let table = config["mcp_servers"]["answer-inbox"].clone();
    let program: String = serde_json::from_value(table["command"].clone()).unwrap();
    let args: Vec<String> = serde_json::from_value(table["args"].clone()).unwrap();
    // The tool-call limit the example sets lets ask_operator wait for a person.
    let limit = table["tool_timeout_sec"]
        .as_u64()
        .expect("tool_timeout_sec");
    assert!(limit >= 600, "{limit}");
    start_as_configured_and_list(&Inbox::new(), &program, &args).await;
}

/// Issue 25, item 1: an agent cannot approve its own question through expiry. Without
/// `--allow-autonomous`, a yes/no question whose default is yes, asked with a one-second
/// timeout, used to come back `defaulted`, yes, a second later under the shipped policy: the
/// agent's own timeout made its own default count as consent. Now it expires with no
/// answers, and says which rule refused its defaults.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_agents_own_timeout_never_makes_its_default_an_answer() {
    let inbox = Inbox::new();
    let mut watch = watch(&inbox);
    let session = Session::start(&inbox, "hasty-agent", &workdir(&inbox)).await;
    let started = Instant::now();
    let result = session
        .ask(json!({"timeout_seconds": 1, "questions": [
            {"type": "yes_no", "id": "go", "default": true,
             "question": "Force-push main and delete prod DB?"}
        ]}))
        .await
        .unwrap();
    assert!(started.elapsed() >= Duration::from_millis(900));
    assert_eq!(result.is_error, Some(false), "{result:?}");
    let structured = result.structured_content.clone().unwrap();
    assert_eq!(structured["status"], "expired", "{structured:#}");
    assert_eq!(structured["answers"], json!({}), "{structured:#}");
    assert_eq!(
        structured["answered_by"], "policy:rule:agents-ask-a-person",
        "{structured:#}"
    );
    let said = text(&result);
    assert!(!said.contains("→ yes"), "{said}");
    let id = structured["id"].as_str().unwrap().to_owned();
    tokio::task::block_in_place(|| watch.wait_line(&format!("ingested {id}")));
    assert!(
        !watch.seen.iter().any(|line| line.contains("defaulted")),
        "{:#?}",
        watch.seen
    );
    session.close().await;
}

/// `answer-inbox mcp` driven by raw JSON-RPC lines, to send exactly what a host sends
/// (`notifications/cancelled`, a closed standard input, a signal) and to see every line it
/// answers with: the rmcp client hides both.
struct RawServer {
    server: Running,
    input: Option<std::process::ChildStdin>,
}

impl RawServer {
    /// Starts the server and completes the handshake.
    fn start(inbox: &Inbox) -> RawServer {
        let mut command = inbox.cmd(&["mcp"]);
        command
            .current_dir(workdir(inbox))
            .stdin(std::process::Stdio::piped());
        let mut server = Running::spawn(command);
        let input = server.child.stdin.take();
        let mut raw = RawServer { server, input };
        raw.send(
            json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": {"name": "raw-client", "version": "0"}}}),
        );
        raw.server.wait_line("\"id\":1");
        raw.send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
        raw
    }

    fn send(&mut self, message: Value) {
        use std::io::Write;
        let input = self.input.as_mut().expect("standard input is open");
        writeln!(input, "{message}").unwrap();
        input.flush().unwrap();
    }

    /// Sends `tools/call` of `tool` with `arguments`, as request `id`.
    fn call(&mut self, id: u64, tool: &str, arguments: Value) {
        self.send(json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
                         "params": {"name": tool, "arguments": arguments}}));
    }

    fn cancel(&mut self, id: u64) {
        self.send(
            json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
                         "params": {"requestId": id, "reason": "the user pressed Escape"}}),
        );
    }

    /// The response to request `id`.
    fn response(&mut self, id: u64) -> Value {
        let line = self.server.wait_line(&format!("\"id\":{id}"));
        serde_json::from_str(&line).unwrap()
    }

    /// Whether the server ever answered request `id` (a line carrying its id and a result or
    /// error), among everything it wrote so far.
    fn answered(&self, id: u64) -> bool {
        self.server.seen.iter().any(|line| {
            serde_json::from_str::<Value>(line).is_ok_and(|message| {
                message["id"] == json!(id)
                    && (message.get("result").is_some() || message.get("error").is_some())
            })
        })
    }
}

/// The ids `answer-inbox list` shows as pending.
fn listed(inbox: &Inbox) -> Vec<String> {
    let out = inbox.run(&["list", "--json"]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let rows: Vec<Value> = serde_json::from_str(&util::stdout(&out)).unwrap();
    rows.iter()
        .map(|row| row["id"].as_str().unwrap().to_owned())
        .collect()
}

/// The request in `questions/` that is none of `known`.
fn placed_besides(inbox: &Inbox, known: &[&str]) -> String {
    let questions = inbox.spool().join("questions");
    let mut found = None;
    util::eventually("a new request", || {
        found = std::fs::read_dir(&questions)
            .unwrap()
            .flatten()
            .find_map(|entry| {
                let name = entry.file_name().to_string_lossy().into_owned();
                let id = name.trim_end_matches(".json").to_owned();
                (!known.contains(&id.as_str())).then_some(id)
            });
        found.is_some()
    });
    found.unwrap()
}

/// Within a second of `what`, `id` has its tombstone and is gone from `answer-inbox list`.
fn withdrawn_within_a_second(inbox: &Inbox, id: &str, what: &str) {
    let since = Instant::now();
    let withdrawn = || tombstone(inbox, id).exists() && !listed(inbox).contains(&id.to_owned());
    while !withdrawn() {
        assert!(
            since.elapsed() < Duration::from_secs(1),
            "{id} still pending a second after {what}"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn yes_no(question: &str) -> Value {
    json!({"questions": [{"type": "yes_no", "question": question}]})
}

/// Issue 24: a host that cancels an `ask_operator` call (`notifications/cancelled`) or goes
/// away (closes the server's standard input) withdraws its request within a second, and
/// the cancelled call gets no response. A request `ask_operator_start` placed is meant to
/// outlive its calls: cancelling a wait for it, or closing the session, leaves it pending.
#[test]
fn cancel_or_departure_withdraws_ask_operator_but_not_ask_operator_start() {
    let inbox = Inbox::new();
    let mut watch = watch(&inbox);
    let mut raw = RawServer::start(&inbox);

    raw.call(2, "ask_operator_start", yes_no("Keep me?"));
    let started = raw.response(2);
    let kept = started["result"]["structuredContent"]["request_id"]
        .as_str()
        .unwrap()
        .to_owned();
    raw.call(
        3,
        "ask_operator_wait",
        json!({"request_id": kept, "wait_seconds": 30}),
    );
    raw.call(4, "ask_operator", yes_no("Cancel me?"));
    let cancelled = placed_besides(&inbox, &[&kept]);
    watch.wait_line(&format!("ingested {cancelled}"));
    assert!(listed(&inbox).contains(&cancelled));

    raw.cancel(4);
    withdrawn_within_a_second(&inbox, &cancelled, "notifications/cancelled");
    let reason = std::fs::read_to_string(tombstone(&inbox, &cancelled)).unwrap();
    assert!(
        reason.contains("cancelled the ask_operator call"),
        "{reason}"
    );

    // Cancelling the wait for the started request stops the wait, not the request.
    raw.cancel(3);
    raw.send(json!({"jsonrpc": "2.0", "id": 5, "method": "tools/list"}));
    raw.response(5);
    std::thread::sleep(Duration::from_millis(300));
    assert!(!raw.answered(4), "a cancelled call gets no response");
    assert!(!raw.answered(3), "a cancelled wait gets no response");
    assert!(!tombstone(&inbox, &kept).exists());

    // The host goes away with an ask_operator call pending.
    raw.call(6, "ask_operator", yes_no("Abandon me?"));
    let abandoned = placed_besides(&inbox, &[&kept, &cancelled]);
    watch.wait_line(&format!("ingested {abandoned}"));
    drop(raw.input.take());
    withdrawn_within_a_second(&inbox, &abandoned, "the end of standard input");
    let reason = std::fs::read_to_string(tombstone(&inbox, &abandoned)).unwrap();
    assert!(reason.contains("went away"), "{reason}");
    assert_eq!(raw.server.stop(), Some(0), "it exits by itself, cleanly");

    assert!(!tombstone(&inbox, &kept).exists());
    assert!(
        listed(&inbox).contains(&kept),
        "ask_operator_start's request outlives both"
    );
}

/// Issue 25, item 2: `ask_operator_wait` reads outcomes only of requests this server placed
/// (in this session, or by its ledger an earlier one of the same agent). A request whose
/// source merely says `ask_operator` (any asker can write that), or that another agent's
/// session placed, is refused, and its answer is never returned.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn wait_refuses_a_request_another_asker_placed() {
    let inbox = Inbox::new();
    let workdir = workdir(&inbox);
    // Another asker's request that claims to come from the MCP server.
    inbox.place(
        "01FORGEDASKOPERATOR0000000",
        r#"{"inbox": 1, "source": {"app": "curious-agent", "tool": "ask_operator"},
            "questions": [{"id": "token", "question": "Deploy token?", "type": "text"}]}"#,
    );
    answer(
        &inbox,
        &["01FORGEDASKOPERATOR0000000", "--set", "token=s3cret"],
    );
    // Another agent's session places a question of its own, and the operator answers it.
    let other = Session::start(&inbox, "other-agent", &workdir).await;
    let theirs = call_tool(
        &other,
        "ask_operator_start",
        json!({"questions": [
        {"type": "free_text", "id": "token", "question": "Which token for prod?"}]}),
    )
    .await;
    let theirs = theirs.structured_content.unwrap()["request_id"]
        .as_str()
        .unwrap()
        .to_owned();
    answer(&inbox, &[&theirs, "--set", "token=prod-s3cret"]);

    let curious = Session::start(&inbox, "curious-agent", &workdir).await;
    for (id, why) in [
        ("01FORGEDASKOPERATOR0000000", "this server did not place it"),
        (
            theirs.as_str(),
            "placed for another agent (its source app differs)",
        ),
    ] {
        let result = call_tool(
            &curious,
            "ask_operator_wait",
            json!({"request_id": id, "wait_seconds": 1}),
        )
        .await;
        assert_eq!(result.is_error, Some(true), "{id}: {result:?}");
        let said = text(&result);
        assert!(
            said.contains(&format!("refuses request \"{id}\"")) && said.contains(why),
            "{said}"
        );
        assert!(!said.contains("s3cret"), "{said}");
        assert!(result.structured_content.is_none(), "{result:?}");
    }
    // The agent that placed it still reads its answer, after a restart too.
    other.close().await;
    let again = Session::start(&inbox, "other-agent", &workdir).await;
    let result = call_tool(
        &again,
        "ask_operator_wait",
        json!({"request_id": theirs, "wait_seconds": 1}),
    )
    .await;
    assert_eq!(
        result.structured_content.unwrap()["answers"]["token"],
        "prod-s3cret"
    );
    curious.close().await;
    again.close().await;
}
