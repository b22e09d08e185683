//! The checkable claims of docs/ARCHITECTURE.md ("Invariants"), checked on the workspace's
//! own manifests and lock file with `cargo metadata` and `cargo tree`: no build, no network.
//!
//! - Dependencies between our crates run one way, down the layers below.
//! - Only the desktop shell (src-tauri) and the memory baseline (bare-window) know Tauri.
//! - The web server and the command line link no desktop crate, no Tauri and no tray code.
//! - No two modules of one crate import each other, directly or round a circle.

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

/// A crate's modules, each with the modules of the same crate it names (`crate::x`,
/// `crate::{x, y}`, `super::x`), leaving out its tests and its own ancestors (a child may use
/// what its parent declares). A text reading, enough for the house style: every import is a
/// `use` or a path spelt out.
fn module_imports(src: &Path) -> BTreeMap<String, Vec<String>> {
    let mut texts = BTreeMap::new();
    let mut todo = vec![src.to_owned()];
    while let Some(dir) = todo.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                todo.push(path);
            } else if path.extension().is_some_and(|ext| ext == "rs") {
                let relative = path.strip_prefix(src).unwrap().with_extension("");
                let mut parts: Vec<String> = relative
                    .iter()
                    .map(|part| part.to_string_lossy().into_owned())
                    .collect();
                if matches!(
                    parts.last().map(String::as_str),
                    Some("mod" | "lib" | "main")
                ) {
                    parts.pop();
                }
                let text = std::fs::read_to_string(&path).unwrap();
                // Tests may reach anywhere; they are not part of the shape.
                let text = text.split("#[cfg(test)]").next().unwrap_or("").to_owned();
                texts.insert(parts.join("::"), text);
            }
        }
    }
    let names = regex::Regex::new(r"[a-z_0-9]+").unwrap();
    let paths =
        regex::Regex::new(r"crate::([a-z_0-9:]+)|crate::\{([^}]*)\}|super::([a-z_0-9]+)").unwrap();
    let modules: Vec<String> = texts.keys().cloned().collect();
    texts
        .iter()
        .map(|(module, text)| {
            let mut imports = Vec::new();
            let code: String = text
                .lines()
                .filter(|line| !line.trim_start().starts_with("//"))
                .collect::<Vec<_>>()
                .join("\n");
            for found in paths.captures_iter(&code) {
                let candidates: Vec<String> = if let Some(path) = found.get(1) {
                    // The longest prefix of the path that is a module.
                    let parts: Vec<&str> = path.as_str().split("::").collect();
                    (1..=parts.len())
                        .rev()
                        .map(|n| parts[..n].join("::"))
                        .filter(|prefix| modules.contains(prefix))
                        .take(1)
                        .collect()
                } else if let Some(group) = found.get(2) {
                    names
                        .find_iter(group.as_str())
                        .map(|name| name.as_str().to_owned())
                        .collect()
                } else {
                    let parent = module.rsplit_once("::").map_or("", |(parent, _)| parent);
                    let name = &found[3];
                    vec![if parent.is_empty() {
                        name.to_owned()
                    } else {
                        format!("{parent}::{name}")
                    }]
                };
                for target in candidates {
                    let ancestor = module.starts_with(&format!("{target}::"));
                    if modules.contains(&target)
                        && target != *module
                        && !ancestor
                        && !imports.contains(&target)
                    {
                        imports.push(target);
                    }
                }
            }
            (module.clone(), imports)
        })
        .collect()
}

/// A circle of imports in `graph`, if there is one.
fn circle(graph: &BTreeMap<String, Vec<String>>) -> Option<Vec<String>> {
    fn visit(
        node: &str,
        graph: &BTreeMap<String, Vec<String>>,
        path: &mut Vec<String>,
        done: &mut Vec<String>,
    ) -> Option<Vec<String>> {
        if let Some(start) = path.iter().position(|seen| seen == node) {
            return Some(path[start..].to_vec());
        }
        if done.iter().any(|seen| seen == node) {
            return None;
        }
        path.push(node.to_owned());
        for next in graph.get(node).into_iter().flatten() {
            if let Some(found) = visit(next, graph, path, done) {
                return Some(found);
            }
        }
        path.pop();
        done.push(node.to_owned());
        None
    }
    let mut done = Vec::new();
    graph
        .keys()
        .find_map(|node| visit(node, graph, &mut Vec::new(), &mut done))
}

#[test]
fn no_two_modules_of_a_crate_import_each_other() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let mut crates: Vec<std::path::PathBuf> = std::fs::read_dir(root.join("crates"))
        .unwrap()
        .map(|entry| entry.unwrap().path().join("src"))
        .collect();
    crates.push(root.join("src-tauri/src"));
    let mut checked = 0;
    for src in crates.iter().filter(|src| src.is_dir()) {
        let imports = module_imports(src);
        checked += imports.len();
        assert_eq!(
            circle(&imports),
            None,
            "{}: these modules import each other in a circle",
            src.display()
        );
    }
    assert!(checked > 100, "only {checked} modules read");
}

#[test]
fn the_circle_finder_finds_a_circle() {
    let graph: BTreeMap<String, Vec<String>> = [
        ("a", vec!["b"]),
        ("b", vec!["c"]),
        ("c", vec!["a"]),
        ("d", vec![]),
    ]
    .into_iter()
    .map(|(node, next)| {
        (
            node.to_owned(),
            next.into_iter().map(str::to_owned).collect(),
        )
    })
    .collect();
    assert_eq!(
        circle(&graph).map(|mut found| {
            found.sort();
            found
        }),
        Some(vec!["a".to_owned(), "b".to_owned(), "c".to_owned()])
    );
}
