//! What a new user meets first (issue 27): shell completions from the command, `--json` on
//! `devices`, `policy check` and `audit verify`, the pairing QR code of `serve`, the agent
//! integrations shipped in integrations/ naming commands that exist, and scripts/setup
//! installing only what was asked.

use std::fs::File;
use std::path::{Path, PathBuf};

use serde_json::{json, Value};

use crate::util::{self, code, stderr, stdout, Inbox, Running};

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .unwrap()
        .to_owned()
}

fn json_of(out: &std::process::Output) -> Value {
    serde_json::from_str(&stdout(out))
        .unwrap_or_else(|e| panic!("not JSON ({e}): {}{}", stdout(out), stderr(out)))
}

#[test]
fn completions_print_the_script_packages_install() {
    let inbox = Inbox::new();
    for (shell, asset) in [
        ("bash", "answer-inbox.bash"),
        ("zsh", "_answer-inbox"),
        ("fish", "answer-inbox.fish"),
    ] {
        let out = inbox.run(&["completions", shell]);
        assert_eq!(code(&out), 0, "{shell}: {}", stderr(&out));
        let shipped =
            std::fs::read_to_string(repo().join("crates/cli/assets/completions").join(asset))
                .unwrap();
        let printed = stdout(&out);
        // The first line that differs, not two whole scripts.
        let differs = printed
            .lines()
            .zip(shipped.lines())
            .find(|(a, b)| a != b)
            .map(|(a, b)| format!("printed {a:?}, packaged {b:?}"));
        assert!(
            printed == shipped,
            "{shell}: not the packaged script: {}",
            differs.unwrap_or_else(|| "one is longer".to_owned())
        );
    }
    let out = inbox.run(&["completions", "tcsh"]);
    assert_eq!(code(&out), 2);
    assert!(stderr(&out).contains("tcsh"), "{}", stderr(&out));
}

#[test]
fn policy_check_json_reports_the_verdict() {
    let inbox = Inbox::new();
    // No policy file at the default place: the shipped policy applies.
    let out = inbox.run(&["policy", "check", "--json"]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let report = json_of(&out);
    assert_eq!(report["valid"], json!(true));
    assert_eq!(report["shipped"], json!(true));

    let good = inbox.dir.path().join("good.toml");
    std::fs::write(
        &good,
        "[[rule]]\nname = \"nightly\"\npriority = \"low\"\nautonomous = \"honour\"\n",
    )
    .unwrap();
    let out = inbox.run(&["policy", "check", "--json", good.to_str().unwrap()]);
    let report = json_of(&out);
    assert_eq!(code(&out), 0, "{report}");
    assert_eq!(report["valid"], json!(true));
    assert_eq!(report["shipped"], json!(false));
    assert_eq!(report["rules"], json!(["nightly"]));
    assert_eq!(report["problems"], json!([]));
    assert_eq!(report["file"], json!(good.to_str().unwrap()));

    let bad = inbox.dir.path().join("bad.toml");
    std::fs::write(&bad, "[[rule]]\nname = \"x\"\nautonomous = \"sometimes\"\n").unwrap();
    let out = inbox.run(&["policy", "check", "--json", bad.to_str().unwrap()]);
    assert_eq!(code(&out), 1, "invalid is still exit 1");
    let report = json_of(&out);
    assert_eq!(report["valid"], json!(false));
    let problems = report["problems"].as_array().unwrap();
    assert!(!problems.is_empty(), "{report}");
    assert!(problems[0]["line"].as_u64().unwrap() >= 1, "{report}");
    assert!(
        problems[0]["message"].as_str().unwrap().len() > 5,
        "{report}"
    );
}

#[test]
fn audit_verify_json_says_intact_or_where_it_broke() {
    let inbox = Inbox::new();
    let request = r#"{"inbox": 1, "title": "Deploy", "source": {"app": "planu"},
      "questions": [{"id": "go", "question": "Deploy?", "type": "confirm"}]}"#;
    for id in ["a1", "a2"] {
        let out = inbox.run_with_stdin(&["ask", "--id", id, "-"], request.as_bytes());
        assert_eq!(code(&out), 0, "{}", stderr(&out));
        let out = inbox.run(&["answer", id, "--set", "go=yes"]);
        assert_eq!(code(&out), 0, "{}", stderr(&out));
    }
    let out = inbox.run(&["audit", "verify", "--json"]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let report = json_of(&out);
    assert_eq!(report["intact"], json!(true));
    assert!(report["entries"].as_u64().unwrap() >= 4, "{report}");
    assert_eq!(report["head"].as_str().unwrap().len(), 64, "{report}");

    let file = inbox.dir.path().join("audit.jsonl");
    let out = inbox.run(&["audit", "export", "--output", file.to_str().unwrap()]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let text = std::fs::read_to_string(&file).unwrap();
    let mut lines: Vec<String> = text.lines().map(str::to_owned).collect();
    let mut forged: Value = serde_json::from_str(&lines[1]).unwrap();
    forged["detail"] = json!({"forged": true});
    lines[1] = forged.to_string();
    std::fs::write(&file, lines.join("\n")).unwrap();
    let out = inbox.run(&[
        "audit",
        "verify",
        "--json",
        "--file",
        file.to_str().unwrap(),
    ]);
    assert_eq!(code(&out), 1);
    let report = json_of(&out);
    assert_eq!(report["intact"], json!(false));
    assert_eq!(report["seq"], json!(2));
    assert_eq!(report["fault"], json!("edited"));
    assert!(report["message"]
        .as_str()
        .unwrap()
        .contains("entry 2 was edited"));

    std::fs::write(&file, "not json\n").unwrap();
    let out = inbox.run(&[
        "audit",
        "verify",
        "--json",
        "--file",
        file.to_str().unwrap(),
    ]);
    assert_eq!(code(&out), 1);
    let report = json_of(&out);
    assert_eq!(report["fault"], json!("unreadable"), "{report}");
    assert_eq!(report["seq"], Value::Null);
}

/// `serve` with its standard error in a file: its stdout lines and that file.
fn serve(inbox: &Inbox, extra: &[&str]) -> (Running, String, PathBuf) {
    let log = inbox.dir.path().join(format!("serve{}.log", extra.len()));
    let args = [&["serve", "--listen", "127.0.0.1:0", "--no-notify"], extra].concat();
    let mut process = Running::spawn_with_stderr(inbox.cmd(&args), File::create(&log).unwrap());
    let link = process.wait_line("open: ");
    let link = link.trim().strip_prefix("open: ").unwrap().to_owned();
    // The hint follows the code on standard error: once it is there, the code is whole.
    util::eventually("the pairing hint after the code", || {
        std::fs::read_to_string(&log)
            .unwrap()
            .contains("open the link on the device")
    });
    (process, link, log)
}

/// The QR code's lines: only blocks and spaces, all as wide, at least 21 modules each way.
fn qr_lines(log: &str) -> Vec<&str> {
    let lines: Vec<&str> = log
        .lines()
        .filter(|line| !line.is_empty() && line.chars().all(|c| " ▀▄█".contains(c)))
        .collect();
    lines
}

#[test]
fn serve_draws_the_pairing_link_as_a_qr_code_and_keeps_stdout_a_log() {
    let inbox = Inbox::new();
    let (mut process, link, log) = serve(&inbox, &[]);
    // Scripts read the link from the first line of the log.
    assert!(
        process.seen[0].starts_with("open: "),
        "the first line on standard output: {:?}",
        process.seen
    );
    assert!(
        process.seen.iter().all(|line| !line.contains('█')),
        "the code is not on standard output: {:?}",
        process.seen
    );
    let text = std::fs::read_to_string(&log).unwrap();
    let code_lines = qr_lines(&text);
    // 21 modules at the least (version 1) and a quiet zone, two rows a line.
    assert!(
        code_lines.len() >= 14,
        "no QR code on standard error:\n{text}"
    );
    let width = code_lines[0].chars().count();
    assert!(width >= 29, "{width} columns");
    assert!(code_lines.iter().all(|l| l.chars().count() == width));
    assert!(link.contains("#pair="), "{link}");
    drop(process.child.kill());

    let (_process, _, log) = serve(&inbox, &["--no-qr"]);
    let text = std::fs::read_to_string(&log).unwrap();
    assert!(qr_lines(&text).is_empty(), "--no-qr drew one:\n{text}");
}

#[test]
fn devices_json_lists_renames_and_revokes() {
    let inbox = Inbox::new();
    let out = inbox.run(&["devices", "--json"]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert_eq!(json_of(&out), json!([]));

    let (_process, link, _) = serve(&inbox, &["--no-qr"]);
    let (origin, fragment) = link.split_once("/#").unwrap();
    let code_value = fragment.strip_prefix("pair=").unwrap();
    let reply = ureq::post(format!("{origin}/api/pair"))
        .header("Origin", origin)
        .header("Content-Type", "application/json")
        .send(json!({"code": code_value, "name": "phone"}).to_string())
        .unwrap();
    assert_eq!(reply.status().as_u16(), 200);

    let out = inbox.run(&["devices", "list", "--json"]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let devices = json_of(&out);
    let device = &devices[0];
    assert_eq!(devices.as_array().unwrap().len(), 1, "{devices}");
    assert_eq!(device["name"], json!("phone"));
    assert!(device["created_at"].as_str().unwrap().ends_with("+00:00"));
    assert_eq!(device["revoked_at"], Value::Null);
    let id = device["id"].as_str().unwrap();

    let out = inbox.run(&["devices", "rename", id, "tablet", "--json"]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert_eq!(json_of(&out)["name"], json!("tablet"));
    let out = inbox.run(&["devices", "--json", "revoke", id]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert!(json_of(&out)["revoked_at"].is_string());

    let out = inbox.run(&["devices", "pair", "--json"]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert!(json_of(&out)["link"].as_str().unwrap().contains("#pair="));
}

/// `scripts/setup MODE --dry-run`: the apt packages it wants, and everything it said.
fn setup_plan(mode: &str, path_first: Option<&Path>) -> (Vec<String>, String) {
    let mut cmd = std::process::Command::new("bash");
    cmd.arg(repo().join("scripts/setup"))
        .args([mode, "--dry-run"]);
    if let Some(dir) = path_first {
        let path = std::env::var("PATH").unwrap_or_default();
        cmd.env("PATH", format!("{}:{path}", dir.display()));
    }
    // A cache of its own, so a Node.js fetched by an earlier run does not answer for it.
    let cache = tempfile::tempdir().unwrap();
    let out = cmd.env("XDG_CACHE_HOME", cache.path()).output().unwrap();
    let said = stderr(&out);
    assert_eq!(code(&out), 0, "setup {mode} --dry-run: {said}");
    let wanted = said
        .lines()
        .find_map(|line| line.split_once("apt packages wanted: "))
        .unwrap_or_else(|| panic!("setup {mode} names no packages: {said}"))
        .1
        .split_whitespace()
        .map(str::to_owned)
        .collect();
    (wanted, said)
}

/// The test machinery is the tests' own: building and running the app installs none of it
/// (a browser, its driver, an sshd that Debian starts, a headless X server ...).
#[test]
fn setup_installs_only_what_the_job_needs() {
    let test_only = [
        "chromium",
        "chromium-driver",
        "sshfs",
        "openssh-server",
        "xvfb",
        "dunst",
        "webkit2gtk-driver",
    ];
    let (run, said) = setup_plan("run", None);
    for package in test_only {
        assert!(!run.iter().any(|p| p == package), "run wants {package}");
    }
    assert!(run.iter().any(|p| p == "libwebkit2gtk-4.1-dev"), "{run:?}");
    assert!(
        !said.contains("pytest"),
        "run makes the pytest venv: {said}"
    );
    let (package, _) = setup_plan("package", None);
    assert!(package.iter().any(|p| p == "patchelf"), "{package:?}");
    assert!(!package.iter().any(|p| p == "chromium"), "{package:?}");
    let (test, _) = setup_plan("test", None);
    for package in test_only {
        assert!(test.iter().any(|p| p == package), "test lacks {package}");
    }

    let out = std::process::Command::new("bash")
        .arg(repo().join("scripts/setup"))
        .arg("everything")
        .output()
        .unwrap();
    assert_eq!(code(&out), 2);
    assert!(stderr(&out).contains("'everything'"), "{}", stderr(&out));
}

/// Debian 12 ships Node.js 18 and Ubuntu 22.04 Node.js 12, both too old for Vite: setup
/// fetches a pinned one itself instead of sending the operator off to find one.
#[test]
fn setup_fetches_a_node_when_the_distributions_one_is_too_old() {
    let dir = tempfile::tempdir().unwrap();
    for (old, fetches) in [("v18.19.0", true), ("v12.22.9", true), ("v20.19.0", false)] {
        let node = dir.path().join("node");
        std::fs::write(&node, format!("#!/bin/sh\necho {old}\n")).unwrap();
        std::fs::set_permissions(&node, std::os::unix::fs::PermissionsExt::from_mode(0o755))
            .unwrap();
        let (_, said) = setup_plan("run", Some(dir.path()));
        assert_eq!(
            said.contains("would fetch Node.js 22."),
            fetches,
            "with node {old}: {said}"
        );
    }
}

fn read_json(path: &str) -> Value {
    let full = repo().join(path);
    let text = std::fs::read_to_string(&full).unwrap_or_else(|e| panic!("{path}: {e}"));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{path} is not JSON: {e}"))
}

/// `answer-inbox ARGS... --help` exits 0: each subcommand and option named exists (clap
/// refuses an unknown one before it reaches --help).
fn assert_command_exists(inbox: &Inbox, words: &[String], named_in: &str) {
    assert_eq!(words[0], "answer-inbox", "{named_in} runs {words:?}");
    let mut args: Vec<&str> = words[1..].iter().map(String::as_str).collect();
    args.push("--help");
    let out = inbox.run(&args);
    assert_eq!(
        code(&out),
        0,
        "{named_in} names `{}`, which answer-inbox refuses: {}",
        words.join(" "),
        stderr(&out)
    );
}

/// The Claude Code plugin: a manifest, hooks for the events `hook claude-code` answers with
/// a hook timeout longer than the inbox's, and the MCP server, each naming a real command;
/// and the marketplace that installs it from a local path.
#[test]
fn the_claude_code_plugin_parses_and_names_real_commands() {
    let inbox = Inbox::new();
    let plugin = "integrations/claude-code-plugin";
    let manifest = read_json(&format!("{plugin}/.claude-plugin/plugin.json"));
    let name = manifest["name"].as_str().unwrap();
    assert!(
        name.chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-'),
        "plugin names are kebab-case: {name}"
    );

    let hooks = read_json(&format!("{plugin}/hooks/hooks.json"));
    let events = hooks["hooks"]
        .as_object()
        .expect("hooks.json has a hooks object");
    assert!(events.contains_key("PermissionRequest") && events.contains_key("Elicitation"));
    for (event, entries) in events {
        assert!(
            ["PermissionRequest", "PreToolUse", "Elicitation"].contains(&event.as_str()),
            "`hook claude-code` does not answer {event}"
        );
        for entry in entries.as_array().unwrap() {
            assert!(entry["matcher"].is_string(), "{event}: {entry}");
            for hook in entry["hooks"].as_array().unwrap() {
                assert_eq!(hook["type"], json!("command"));
                let words: Vec<String> = hook["command"]
                    .as_str()
                    .unwrap()
                    .split_whitespace()
                    .map(str::to_owned)
                    .collect();
                assert_eq!(&words[1..3], ["hook", "claude-code"], "{event}");
                assert_command_exists(&inbox, &words, &format!("{event} hook"));
                // Claude Code's hook timeout (seconds) outlasts --timeout, or it stops first.
                let wait = words
                    .iter()
                    .position(|w| w == "--timeout")
                    .map(|i| humantime_secs(&words[i + 1]))
                    .unwrap();
                assert!(hook["timeout"].as_u64().unwrap() > wait, "{event}: {hook}");
            }
        }
    }

    let mcp = read_json(&format!("{plugin}/.mcp.json"));
    let servers = mcp["mcpServers"].as_object().unwrap();
    assert!(!servers.is_empty());
    for (server, config) in servers {
        let mut words = vec![config["command"].as_str().unwrap().to_owned()];
        for arg in config["args"].as_array().unwrap() {
            words.push(arg.as_str().unwrap().to_owned());
        }
        assert_eq!(words, ["answer-inbox", "mcp"], "{server}");
        assert_command_exists(&inbox, &words, &format!(".mcp.json {server}"));
    }

    // The marketplace installs the plugin from a path relative to itself.
    let market = read_json("integrations/.claude-plugin/marketplace.json");
    assert!(market["name"].is_string() && market["owner"]["name"].is_string());
    let listed = &market["plugins"][0];
    assert_eq!(listed["name"], json!(name));
    let source = listed["source"].as_str().unwrap();
    assert!(source.starts_with("./"), "{source}");
    let found = repo().join("integrations").join(source);
    assert_eq!(
        found.canonicalize().unwrap(),
        repo().join(plugin).canonicalize().unwrap()
    );
}

/// "10m" -> 600: the hook's --timeout, in seconds.
fn humantime_secs(text: &str) -> u64 {
    let (number, unit) = text.split_at(text.len() - 1);
    let number: u64 = number.parse().unwrap();
    match unit {
        "s" => number,
        "m" => number * 60,
        "h" => number * 3600,
        _ => panic!("a --timeout in s, m or h: {text}"),
    }
}

/// The MCP registry entry: the rules of the registry's server.json schema this file can
/// break (name pattern, description length, a fixed package version, a stdio transport,
/// positional arguments with a value), and the command it makes exists.
#[test]
fn the_mcp_registry_entry_follows_the_schema_and_runs_the_server() {
    let inbox = Inbox::new();
    let server = read_json("integrations/mcp-registry/server.json");
    assert!(server["$schema"]
        .as_str()
        .unwrap()
        .ends_with("/server.schema.json"));
    let name = server["name"].as_str().unwrap();
    let (namespace, short) = name.split_once('/').unwrap();
    assert!(
        !short.contains('/') && namespace.starts_with("io.github."),
        "{name}"
    );
    let description = server["description"].as_str().unwrap();
    assert!(
        (1..=100).contains(&description.chars().count()),
        "description: 1 to 100 characters"
    );
    let workspace = std::fs::read_to_string(repo().join("Cargo.toml")).unwrap();
    let version = server["version"].as_str().unwrap();
    assert!(
        workspace.contains(&format!("version = \"{version}\"")),
        "server.json's version {version} is not the workspace's"
    );
    let package = &server["packages"][0];
    assert_eq!(package["registryType"], json!("cargo"));
    assert_eq!(package["identifier"], json!("answer-inbox"));
    assert_eq!(package["version"], json!(version));
    assert_eq!(package["transport"]["type"], json!("stdio"));
    let mut words = vec![String::from("answer-inbox")];
    for argument in package["packageArguments"].as_array().unwrap() {
        assert_eq!(argument["type"], json!("positional"));
        words.push(argument["value"].as_str().unwrap().to_owned());
    }
    assert_command_exists(&inbox, &words, "server.json");
    for variable in package["environmentVariables"].as_array().unwrap() {
        let name = variable["name"].as_str().unwrap();
        assert!(
            name.starts_with("ANSWER_INBOX_"),
            "{name} is not a variable answer-inbox reads"
        );
    }
}

/// The README's one-line Codex set-up (`codex mcp add NAME -- COMMAND...`, Codex's own
/// syntax) starts a command that exists.
#[test]
fn the_readmes_codex_line_runs_a_real_command() {
    let readme = std::fs::read_to_string(repo().join("README.md")).unwrap();
    let line = readme
        .split('`')
        .find_map(|code| code.strip_prefix("codex mcp add answer-inbox -- "))
        .expect("the README gives `codex mcp add answer-inbox -- ...`");
    let words: Vec<String> = line.split_whitespace().map(str::to_owned).collect();
    assert_command_exists(&Inbox::new(), &words, "the README's codex line");
}
