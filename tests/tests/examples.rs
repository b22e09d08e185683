//! The examples in examples/, run the way their users run them: the CI gate and the
//! Planu-style tool's driver against a private spool, answered by an operator through
//! `answer-inbox answer`; the MCP host configuration started as an MCP host starts it.
//!
//! The scripts find `answer-inbox` on PATH, as they would once it is installed: the tests
//! put the built binary's directory first on PATH.

use std::ffi::OsString;
use std::fs::File;
use std::io::{BufRead, BufReader, Write};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc::{Receiver, RecvTimeoutError};
use std::time::{Duration, Instant};

use serde_json::{json, Value};

use crate::util::{self, code, stderr, stdout, Inbox, Running};

fn examples() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples")
}

/// PATH with the built binaries' directory first.
fn path_with_binary() -> OsString {
    let mut dirs = vec![util::binary().parent().unwrap().to_path_buf()];
    dirs.extend(std::env::split_paths(
        &std::env::var_os("PATH").unwrap_or_default(),
    ));
    std::env::join_paths(dirs).unwrap()
}

/// Runs `program` with this inbox's spool, database and home, like `Inbox::cmd` does for
/// the binary, and without the variables the examples read from a CI system, so that the
/// machine running the tests cannot change what they do.
fn command(inbox: &Inbox, program: &Path) -> Command {
    let mut cmd = Command::new(program);
    cmd.env("ANSWER_INBOX_DIR", inbox.spool())
        .env("ANSWER_INBOX_DB", inbox.db())
        .env("HOME", inbox.dir.path())
        .env("XDG_DATA_HOME", inbox.dir.path().join("xdg"))
        .env_remove("DBUS_SESSION_BUS_ADDRESS")
        // Not the account: answers are attributed to the OS account whatever $USER says.
        .env("USER", "tester")
        .env("PATH", path_with_binary())
        .stdin(Stdio::null());
    for var in [
        "TIMEOUT",
        "EXPIRE_SECONDS",
        "BUILD",
        "CI_PIPELINE_IID",
        "GITHUB_RUN_NUMBER",
        "BUILD_NUMBER",
        "TOOL",
    ] {
        cmd.env_remove(var);
    }
    cmd
}

/// An example script, run in a process group of its own: stopping it must also stop the
/// `answer-inbox ask --wait` and python3 it starts, which a signal to the script alone
/// would leave behind.
struct Script {
    child: Child,
    out: PathBuf,
    err: PathBuf,
}

/// How a script ended.
struct Ended {
    code: i32,
    stdout: String,
    stderr: String,
}

impl Script {
    fn start(inbox: &Inbox, mut cmd: Command) -> Script {
        // Files, not pipes: nothing has to read while the script runs.
        let out = inbox.dir.path().join("script.out");
        let err = inbox.dir.path().join("script.err");
        cmd.stdout(File::create(&out).unwrap())
            .stderr(File::create(&err).unwrap())
            .process_group(0);
        Script {
            child: cmd.spawn().unwrap(),
            out,
            err,
        }
    }

    fn output(&self) -> (String, String) {
        let read = |path: &Path| std::fs::read_to_string(path).unwrap_or_default();
        (read(&self.out), read(&self.err))
    }

    /// The id of the one request the script placed, once it is in the spool.
    fn placed_request(&mut self, inbox: &Inbox) -> String {
        let questions = inbox.spool().join("questions");
        let deadline = Instant::now() + Duration::from_secs(20);
        loop {
            let ids: Vec<String> = std::fs::read_dir(&questions)
                .map(|entries| {
                    entries
                        .filter_map(|entry| {
                            let name = entry.ok()?.file_name().into_string().ok()?;
                            name.strip_suffix(".json").map(str::to_owned)
                        })
                        .collect()
                })
                .unwrap_or_default();
            match ids.as_slice() {
                [id] => return id.clone(),
                [] => {}
                more => panic!("one request expected, found {more:?}"),
            }
            if let Ok(Some(status)) = self.child.try_wait() {
                let (out, err) = self.output();
                panic!("the script ended ({status}) without placing a request:\n{out}\n{err}");
            }
            assert!(
                Instant::now() < deadline,
                "no request placed within 20 s:\n{:?}",
                self.output()
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// Waits (20 s at most) for the script to exit.
    fn finish(&mut self) -> Ended {
        let deadline = Instant::now() + Duration::from_secs(20);
        let status = loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                break status;
            }
            assert!(
                Instant::now() < deadline,
                "the script still runs after 20 s:\n{:?}",
                self.output()
            );
            std::thread::sleep(Duration::from_millis(20));
        };
        let (stdout, stderr) = self.output();
        Ended {
            code: status.code().expect("exited normally"),
            stdout,
            stderr,
        }
    }
}

impl Drop for Script {
    fn drop(&mut self) {
        // The group, not just the script: its id is the script's pid (process_group(0)).
        let group = format!("-{}", self.child.id());
        let _ = Command::new("kill")
            .args(["-TERM", "--", &group])
            .stderr(Stdio::null())
            .status();
        std::thread::sleep(Duration::from_millis(100));
        let _ = Command::new("kill")
            .args(["-KILL", "--", &group])
            .stderr(Stdio::null())
            .status();
        let _ = self.child.wait();
    }
}

fn run_ok(inbox: &Inbox, args: &[&str]) {
    let out = inbox.run(args);
    assert_eq!(code(&out), 0, "{args:?}: {}", stderr(&out));
}

fn start_gate(inbox: &Inbox, build: &str, timeout: &str, expire: Option<&str>) -> Script {
    let mut cmd = command(inbox, &examples().join("ci-gate.sh"));
    cmd.arg(build).env("TIMEOUT", timeout);
    if let Some(seconds) = expire {
        cmd.env("EXPIRE_SECONDS", seconds);
    }
    Script::start(inbox, cmd)
}

fn request(inbox: &Inbox, id: &str) -> Value {
    let path = inbox.spool().join("questions").join(format!("{id}.json"));
    serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap()
}

#[test]
fn ci_gate_deploys_once_the_operator_says_yes() {
    let inbox = Inbox::new();
    let mut gate = start_gate(&inbox, "1234", "20", None);
    let id = gate.placed_request(&inbox);
    let asked = request(&inbox, &id);
    assert_eq!(asked["title"], "Deploy build 1234 to production?");
    assert_eq!(asked["priority"], "high");
    assert_eq!(asked["source"]["app"], "ci");
    assert!(
        asked.get("timeout_seconds").is_none(),
        "no expiry unless asked"
    );

    run_ok(
        &inbox,
        &[
            "answer",
            &id,
            "--set",
            "deploy=yes",
            "--set",
            "rollout=all at once",
        ],
    );
    let ended = gate.finish();
    assert_eq!(ended.code, 0, "{}{}", ended.stdout, ended.stderr);
    assert!(
        ended
            .stdout
            .contains(&format!("approved by {}", util::operator()))
            && ended
                .stdout
                .contains("deploying build 1234 to production (rollout: all at once)"),
        "{}",
        ended.stdout
    );
}

#[test]
fn ci_gate_stops_when_the_operator_declines_or_says_no() {
    // A build name with quotes and a backslash: the request must stay valid JSON.
    let build = r#"r7 "hotfix" \ 2"#;
    let inbox = Inbox::new();
    let mut gate = start_gate(&inbox, build, "20", None);
    let id = gate.placed_request(&inbox);
    assert_eq!(
        request(&inbox, &id)["title"],
        format!("Deploy build {build} to production?")
    );
    run_ok(&inbox, &["answer", &id, "--decline", "release freeze"]);
    let ended = gate.finish();
    assert_eq!(ended.code, 1, "{}{}", ended.stdout, ended.stderr);
    assert!(
        ended
            .stdout
            .contains(&format!("declined by {}: release freeze", util::operator())),
        "{}",
        ended.stdout
    );
    assert!(!ended.stdout.contains("deploying"), "{}", ended.stdout);

    let inbox = Inbox::new();
    let mut gate = start_gate(&inbox, "1235", "20", None);
    let id = gate.placed_request(&inbox);
    run_ok(&inbox, &["answer", &id, "--set", "deploy=no"]);
    let ended = gate.finish();
    assert_eq!(ended.code, 1, "{}{}", ended.stdout, ended.stderr);
    assert!(
        ended
            .stdout
            .contains(&format!("{} answered no", util::operator())),
        "{}",
        ended.stdout
    );
    assert!(!ended.stdout.contains("deploying"), "{}", ended.stdout);
}

#[test]
fn ci_gate_fails_the_job_when_nobody_answers_in_time() {
    let inbox = Inbox::new();
    let mut gate = start_gate(&inbox, "1236", "1", None);
    let id = gate.placed_request(&inbox);
    let ended = gate.finish();
    assert_eq!(ended.code, 3, "{}{}", ended.stdout, ended.stderr);
    assert!(
        ended
            .stdout
            .contains(&format!("request {id} stays pending; failing the job")),
        "{}",
        ended.stdout
    );
    assert!(!ended.stdout.contains("deploying"), "{}", ended.stdout);

    // Still waiting for the operator, who can answer it late.
    assert!(!inbox.outcome_path(&id).exists());
    let out = inbox.run(&["list", "--json"]);
    let pending: Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!(pending[0]["id"], id.as_str(), "{pending}");
    assert_eq!(pending[0]["state"], "pending");
}

/// A cancelled CI job (SIGTERM to the script alone, as a runner may send it) withdraws its
/// question at once: nobody can approve a deploy that no longer waits.
#[test]
fn ci_gate_withdraws_its_question_when_the_job_is_stopped() {
    let inbox = Inbox::new();
    let mut gate = start_gate(&inbox, "1240", "600", None);
    let id = gate.placed_request(&inbox);
    let pid = gate.child.id().to_string();
    let signalled = Command::new("kill").args(["-TERM", &pid]).status().unwrap();
    assert!(signalled.success());
    let ended = gate.finish();
    assert_eq!(ended.code, 5, "{}{}", ended.stdout, ended.stderr);
    assert!(ended.stdout.contains("withdrawn"), "{}", ended.stdout);
    assert!(inbox.spool().join("cancel").join(&id).exists());
    let out = inbox.run(&["answer", &id, "--set", "deploy=yes"]);
    assert_ne!(code(&out), 0, "a withdrawn request cannot be approved");
}

#[test]
fn ci_gate_stops_when_the_request_expires() {
    let inbox = Inbox::new();
    std::fs::create_dir_all(inbox.spool()).unwrap();
    // Expiry is applied by a running inbox.
    let mut watch = Running::spawn(inbox.cmd(&["watch", "--no-notify"]));
    watch.wait_line("ready");

    let mut gate = start_gate(&inbox, "1237", "20", Some("1"));
    let id = gate.placed_request(&inbox);
    assert_eq!(request(&inbox, &id)["timeout_seconds"], 1);
    let ended = gate.finish();
    assert_eq!(ended.code, 2, "{}{}", ended.stdout, ended.stderr);
    assert!(ended.stdout.contains("expired"), "{}", ended.stdout);
    assert_eq!(inbox.outcome(&id)["status"], "expired");
}

fn tool() -> PathBuf {
    examples().join("planu-tool/deploy_spec.py")
}

#[test]
fn planu_tool_asks_first_then_acts_on_answers() {
    let inbox = Inbox::new();
    let out = command(&inbox, &tool()).arg("SPEC-042").output().unwrap();
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let response: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(response["status"], "needs_input");
    let questions = response["interactiveQuestions"].as_array().unwrap();
    let kinds: Vec<&str> = questions
        .iter()
        .map(|q| q["type"].as_str().unwrap())
        .collect();
    for kind in ["choice", "multiChoice", "text", "confirm"] {
        assert!(kinds.contains(&kind), "no {kind} question: {kinds:?}");
    }
    assert!(questions.iter().all(|q| q["id"].is_string()));
    assert!(questions.iter().any(|q| q["required"] == json!(false)));
    assert!(questions.iter().any(|q| q.get("default").is_some()));

    // Its response, unchanged, is a valid request.
    let checked = inbox.run_with_stdin(&["check", "-"], &out.stdout);
    assert_eq!(
        code(&checked),
        0,
        "{}",
        stdout(&checked) + &stderr(&checked)
    );

    // Answers left out take their defaults...
    let out = command(&inbox, &tool())
        .args(["SPEC-042", "--answers", r#"{"ticket": "CHG-1"}"#])
        .output()
        .unwrap();
    assert_eq!(code(&out), 0, "{}", stdout(&out));
    let done: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(done["status"], "done");
    assert_eq!(
        done["deployed"],
        json!({"target": "staging", "components": ["api", "worker"], "migrations": false,
               "ticket": "CHG-1", "note": null})
    );

    // ...but a required one without a default, or a wrong value, is an error.
    let out = command(&inbox, &tool())
        .args(["SPEC-042", "--answers", r#"{"target": "moon"}"#])
        .output()
        .unwrap();
    assert_eq!(code(&out), 2, "{}", stdout(&out));
    let text = stdout(&out);
    assert!(text.contains("ticket") && text.contains("target"), "{text}");
}

fn start_driver(inbox: &Inbox) -> Script {
    let mut cmd = command(inbox, &examples().join("planu-tool/run-with-inbox.sh"));
    cmd.arg("SPEC-042").env("TIMEOUT", "20");
    Script::start(inbox, cmd)
}

#[test]
fn planu_driver_runs_the_tool_again_with_the_operators_answers() {
    let inbox = Inbox::new();
    let mut driver = start_driver(&inbox);
    let id = driver.placed_request(&inbox);
    // The tool's response went in as it was: the interactiveQuestions shape.
    assert_eq!(
        request(&inbox, &id)["interactiveQuestions"]
            .as_array()
            .unwrap()
            .len(),
        5
    );
    run_ok(
        &inbox,
        &[
            "answer",
            &id,
            "--set",
            "target=production",
            "--set",
            "components=api",
            "--set",
            "components=frontend",
            "--set",
            "migrate=yes",
            "--set",
            "ticket=CHG-4711",
            "--set",
            "note=canary first",
        ],
    );
    let ended = driver.finish();
    assert_eq!(ended.code, 0, "{}{}", ended.stdout, ended.stderr);
    // Standard output is the tool's final output alone.
    let done: Value = serde_json::from_str(&ended.stdout).unwrap();
    assert_eq!(done["status"], "done", "{done}");
    assert_eq!(
        done["deployed"],
        json!({"target": "production", "components": ["api", "frontend"], "migrations": true,
               "ticket": "CHG-4711", "note": "canary first"})
    );
    assert!(
        ended
            .stderr
            .contains(&format!("answered by {}", util::operator())),
        "{}",
        ended.stderr
    );
}

#[test]
fn planu_driver_stops_when_the_operator_declines() {
    let inbox = Inbox::new();
    let mut driver = start_driver(&inbox);
    let id = driver.placed_request(&inbox);
    run_ok(&inbox, &["answer", &id, "--decline", "wrong spec"]);
    let ended = driver.finish();
    assert_eq!(ended.code, 10, "{}{}", ended.stdout, ended.stderr);
    assert!(
        ended
            .stderr
            .contains(&format!("declined by {}: wrong spec", util::operator())),
        "{}",
        ended.stderr
    );
    assert_eq!(ended.stdout, "", "the tool is not run again");
}

/// Newline-delimited JSON-RPC over a child's stdin and stdout: the MCP stdio transport.
struct Rpc {
    stdin: std::process::ChildStdin,
    lines: Receiver<String>,
    seen: Vec<String>,
    /// The server's standard error, shown when it does not answer.
    log: PathBuf,
}

impl Rpc {
    fn send(&mut self, message: Value) {
        if let Err(error) = writeln!(self.stdin, "{message}").and_then(|()| self.stdin.flush()) {
            panic!("cannot send {message}: {error}\n{}", self.stderr());
        }
    }

    fn stderr(&self) -> String {
        let text = std::fs::read_to_string(&self.log).unwrap_or_default();
        format!("the server's standard error:\n{text}")
    }

    /// The response to request `id`; notifications and log lines in between are skipped.
    fn response(&mut self, id: u64) -> Value {
        let deadline = Instant::now() + Duration::from_secs(20);
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.lines.recv_timeout(left) {
                Ok(line) => {
                    self.seen.push(line.clone());
                    let Ok(message) = serde_json::from_str::<Value>(&line) else {
                        continue;
                    };
                    if message["id"] == id {
                        assert!(message.get("error").is_none(), "error: {message}");
                        return message["result"].clone();
                    }
                }
                Err(RecvTimeoutError::Timeout) | Err(RecvTimeoutError::Disconnected) => {
                    panic!(
                        "no response to {id}; saw:\n{}\n{}",
                        self.seen.join("\n"),
                        self.stderr()
                    )
                }
            }
        }
    }
}

#[test]
fn mcp_host_config_starts_an_mcp_server_offering_ask_operator() {
    let config: Value =
        serde_json::from_slice(&std::fs::read(examples().join("mcp-host.json")).unwrap()).unwrap();
    let server = &config["mcpServers"]["answer-inbox"];
    let program = server["command"].as_str().expect("a command");
    let args: Vec<&str> = server["args"]
        .as_array()
        .expect("args")
        .iter()
        .map(|arg| arg.as_str().unwrap())
        .collect();
    let env = server["env"].as_object().expect("env");
    assert!(
        env.contains_key("ANSWER_INBOX_DIR"),
        "the example names the spool"
    );

    // As a host starts it: the configured command, found on PATH, with its arguments and
    // environment. Only the spool differs: the example's path is a placeholder, and the
    // test keeps to a private one.
    let inbox = Inbox::new();
    let mut cmd = command(&inbox, Path::new(program));
    cmd.args(&args);
    for (key, value) in env {
        if key != "ANSWER_INBOX_DIR" {
            cmd.env(key, value.as_str().expect("env values are strings"));
        }
    }
    let log = inbox.dir.path().join("mcp.err");
    let mut child = cmd
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(File::create(&log).unwrap())
        .spawn()
        .unwrap_or_else(|error| panic!("cannot start {program} {args:?}: {error}"));
    let stdin = child.stdin.take().unwrap();
    let stdout = child.stdout.take().unwrap();
    let mut server_process = Running::adopt(child);
    let (tx, lines) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    let mut rpc = Rpc {
        stdin,
        lines,
        seen: Vec::new(),
        log: log.clone(),
    };

    rpc.send(
        json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18",
            "capabilities": {},
            "clientInfo": {"name": "inbox-tests", "version": "0"}
        }}),
    );
    let init = rpc.response(1);
    assert!(init["protocolVersion"].is_string(), "{init}");
    assert!(init["capabilities"]["tools"].is_object(), "{init}");
    rpc.send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));

    rpc.send(json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list", "params": {}}));
    let tools = rpc.response(2);
    let ask = tools["tools"]
        .as_array()
        .expect("a list of tools")
        .iter()
        .find(|tool| tool["name"] == "ask_operator")
        .unwrap_or_else(|| panic!("no ask_operator tool: {tools}"));
    assert_eq!(ask["inputSchema"]["type"], "object", "{ask}");

    // The agent asks; the operator answers from the spool the configuration names.
    rpc.send(
        json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {
            "name": "ask_operator",
            "arguments": {"title": "Ship the release?", "questions": [
                {"id": "go", "type": "yes_no", "question": "Ship release 2.14 now?"}
            ]}
        }}),
    );
    let questions = inbox.spool().join("questions");
    let deadline = Instant::now() + Duration::from_secs(20);
    let id = loop {
        let placed = std::fs::read_dir(&questions)
            .into_iter()
            .flatten()
            .find_map(|entry| {
                let name = entry.ok()?.file_name().into_string().ok()?;
                name.strip_suffix(".json").map(str::to_owned)
            });
        if let Some(id) = placed {
            break id;
        }
        assert!(
            Instant::now() < deadline,
            "no request in the spool; {}",
            rpc.stderr()
        );
        std::thread::sleep(Duration::from_millis(20));
    };
    run_ok(&inbox, &["answer", &id, "--set", "go=yes"]);
    let called = rpc.response(3);
    assert_ne!(called["isError"], true, "{called}");
    assert_eq!(
        called["structuredContent"]["status"], "answered",
        "{called}"
    );
    assert_eq!(
        called["structuredContent"]["answers"],
        json!({"go": true}),
        "{called}"
    );

    // A host ends a stdio server by closing its standard input.
    drop(rpc);
    let deadline = Instant::now() + Duration::from_secs(10);
    while server_process.child.try_wait().unwrap().is_none() {
        assert!(
            Instant::now() < deadline,
            "the server still runs 10 s after its input closed:\n{}",
            std::fs::read_to_string(&log).unwrap_or_default()
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}
