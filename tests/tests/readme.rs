//! The README's "Use it with your agent" blocks stay true: each configuration block is the
//! file in examples/ it names, byte for byte, and the Python block runs against a real spool
//! and prints what the operator answered.

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::util::{code, stderr, Inbox};

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// The fenced blocks that follow each `<!-- MARK -->` line: (mark, block text).
fn marked_blocks(readme: &str) -> Vec<(String, String)> {
    let lines: Vec<&str> = readme.lines().collect();
    let mut blocks = Vec::new();
    for (i, line) in lines.iter().enumerate() {
        let Some(mark) = line
            .strip_prefix("<!-- ")
            .and_then(|rest| rest.strip_suffix(" -->"))
        else {
            continue;
        };
        assert!(
            lines.get(i + 1).is_some_and(|l| l.starts_with("```")),
            "README line {}: a fenced block must follow {line}",
            i + 1
        );
        let body: Vec<&str> = lines[i + 2..]
            .iter()
            .take_while(|l| !l.starts_with("```"))
            .copied()
            .collect();
        blocks.push((mark.to_owned(), body.join("\n")));
    }
    blocks
}

fn readme_blocks() -> Vec<(String, String)> {
    let readme = std::fs::read_to_string(repo().join("README.md")).unwrap();
    let blocks = marked_blocks(&readme);
    assert!(blocks.len() >= 4, "the agent section's blocks are marked");
    blocks
}

#[test]
fn the_configuration_blocks_are_the_example_files() {
    let mut checked = 0;
    for (mark, block) in readme_blocks() {
        let Some(path) = mark.strip_prefix("file: ") else {
            continue;
        };
        let file = std::fs::read_to_string(repo().join(path))
            .unwrap_or_else(|e| panic!("README names {path}: {e}"));
        assert_eq!(
            block,
            file.trim_end_matches('\n'),
            "the README's block for {path} differs from the file"
        );
        checked += 1;
    }
    assert!(checked >= 3, "Claude Code, Codex and an MCP host");
}

/// The Python interpreter the tests installed pytest into (scripts/setup), else python3.
fn python() -> PathBuf {
    let target = std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| repo().join("target"));
    let venv = target.join("python-venv/bin/python");
    if venv.exists() {
        venv
    } else {
        PathBuf::from("python3")
    }
}

#[test]
fn the_python_block_asks_and_prints_the_operators_answer() {
    let (_, script) = readme_blocks()
        .into_iter()
        .find(|(mark, _)| mark == "run: python")
        .expect("the README has a Python block to run");
    let inbox = Inbox::new();
    // Create the spool as every command does.
    assert_eq!(code(&inbox.run(&["list"])), 0);
    let mut child = Command::new(python())
        .arg("-c")
        .arg(&script)
        .env("PYTHONPATH", repo().join("clients/python/src"))
        .env("ANSWER_INBOX_DIR", inbox.spool())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let questions = inbox.spool().join("questions");
    let deadline = Instant::now() + Duration::from_secs(20);
    let id = loop {
        let placed = std::fs::read_dir(&questions)
            .unwrap()
            .filter_map(|e| e.ok())
            .filter_map(|e| {
                e.file_name()
                    .to_str()?
                    .strip_suffix(".json")
                    .map(str::to_owned)
            })
            .next();
        if let Some(id) = placed {
            break id;
        }
        if let Some(status) = child.try_wait().unwrap() {
            let mut err = String::new();
            child
                .stderr
                .take()
                .unwrap()
                .read_to_string(&mut err)
                .unwrap();
            panic!("the Python block ended ({status}) before asking: {err}");
        }
        assert!(
            Instant::now() < deadline,
            "the Python block placed no request"
        );
        std::thread::sleep(Duration::from_millis(50));
    };
    let answered = inbox.run(&["answer", &id, "--set", "go=true"]);
    assert_eq!(code(&answered), 0, "{}", stderr(&answered));
    let out = child.wait_with_output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), "deploy");
}
