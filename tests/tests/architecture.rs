//! The checkable claims of docs/ARCHITECTURE.md ("Invariants"), checked on the workspace's
//! own manifests and lock file with `cargo metadata` and `cargo tree`: no build, no network.
//!
//! - Dependencies between our crates run one way, down the layers below.
//! - Only the desktop shell (src-tauri) and the memory baseline (bare-window) know Tauri.
//! - The web server and the command line link no desktop crate, no Tauri and no tray code.

use std::collections::BTreeMap;
use std::path::Path;
use std::process::Command;

use serde_json::Value;

/// Each of our crates and its layer: a crate may depend only on crates of lower layers.
const LAYERS: &[(&str, u8)] = &[
    ("inbox-protocol", 0),
    ("inbox-spool", 1),
    ("inbox-policy", 1),
    ("inbox-engine", 2),
    ("inbox-client", 2),
    ("inbox-notifications", 3),
    ("inbox-app", 3),
    ("inbox-mcp", 3),
    ("inbox-harness", 3),
    ("inbox-desk", 4),
    ("inbox-web", 4),
    ("answer-inbox", 5),
    ("inbox-bench", 5),
    ("answer-inbox-desktop", 6),
    ("inbox-bare-window", 6),
    ("inbox-tests", 6),
];

/// Names of crates that are tray code: the tray icon and the indicator libraries under it.
const TRAY_CODE: &[&str] = &[
    "tray-icon",
    "libappindicator",
    "libappindicator-sys",
    "ksni",
];

fn cargo() -> Command {
    let mut cargo = Command::new(std::env::var("CARGO").unwrap_or_else(|_| "cargo".into()));
    cargo.current_dir(Path::new(env!("CARGO_MANIFEST_DIR")).join(".."));
    cargo
}

fn run(cmd: &mut Command) -> String {
    let out = cmd.output().unwrap();
    assert!(
        out.status.success(),
        "{cmd:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

/// Every workspace crate and the workspace crates it depends on (normal and build
/// dependencies; not dev ones, which only tests link).
fn workspace_dependencies() -> BTreeMap<String, Vec<String>> {
    let text = run(cargo().args([
        "metadata",
        "--no-deps",
        "--format-version",
        "1",
        "--offline",
    ]));
    let metadata: Value = serde_json::from_str(&text).unwrap();
    let packages = metadata["packages"].as_array().unwrap();
    let ours: Vec<&str> = packages
        .iter()
        .map(|p| p["name"].as_str().unwrap())
        .collect();
    packages
        .iter()
        .map(|package| {
            let deps = package["dependencies"]
                .as_array()
                .unwrap()
                .iter()
                .filter(|dep| dep["kind"].as_str() != Some("dev"))
                .map(|dep| dep["name"].as_str().unwrap())
                .filter(|name| ours.contains(name))
                .map(str::to_owned)
                .collect();
            (package["name"].as_str().unwrap().to_owned(), deps)
        })
        .collect()
}

/// The names of every crate `package` links (normal and build dependencies, transitively).
fn linked(package: &str) -> Vec<String> {
    let text = run(cargo().args([
        "tree",
        "--offline",
        "--locked",
        "-p",
        package,
        "-e",
        "normal,build",
        "--prefix",
        "none",
        "--format",
        "{p}",
    ]));
    text.lines()
        .filter_map(|line| line.split_whitespace().next())
        .map(str::to_owned)
        .collect()
}

fn layer(name: &str) -> u8 {
    LAYERS
        .iter()
        .find(|(crate_name, _)| *crate_name == name)
        .unwrap_or_else(|| panic!("{name} has no layer: add it to LAYERS and ARCHITECTURE.md"))
        .1
}

#[test]
fn dependencies_between_our_crates_run_down_the_layers() {
    let graph = workspace_dependencies();
    assert_eq!(
        graph.len(),
        LAYERS.len(),
        "every crate has a layer: {graph:?}"
    );
    for (package, deps) in &graph {
        for dep in deps {
            assert!(
                layer(dep) < layer(package),
                "{package} (layer {}) depends on {dep} (layer {}): imports must run down",
                layer(package),
                layer(dep)
            );
        }
    }
}

#[test]
fn only_the_desktop_shell_and_the_memory_baseline_know_tauri() {
    for (package, _) in LAYERS {
        if matches!(*package, "answer-inbox-desktop" | "inbox-bare-window") {
            assert!(
                linked(package).iter().any(|name| name == "tauri"),
                "{package}"
            );
            continue;
        }
        let tauri: Vec<String> = linked(package)
            .into_iter()
            .filter(|name| name.starts_with("tauri"))
            .collect();
        assert!(tauri.is_empty(), "{package} links {tauri:?}");
    }
}

#[test]
fn the_web_server_and_the_command_line_link_no_desktop_code() {
    for package in ["inbox-web", "answer-inbox", "inbox-app"] {
        let linked = linked(package);
        for desktop in ["inbox-desk", "tauri", "wry", "webkit2gtk", "gtk"]
            .iter()
            .chain(TRAY_CODE)
        {
            assert!(
                !linked.iter().any(|name| name == desktop),
                "{package} links {desktop}"
            );
        }
    }
}
