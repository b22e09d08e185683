//! Declares the app's own commands, so that each gets an `allow-<command>` permission and
//! the window may call only those its capability grants (capabilities/default.json). The
//! names come from the one list in inbox-app (crates/app/src/command_names.rs); the
//! capability file is checked against it here, so a command added there and not granted
//! (or granted and gone) stops the build with the fix to make.

include!("../crates/app/src/command_names.rs");

/// A list of command names as a `&[&str]`.
macro_rules! names {
    ($($command:ident),* $(,)?) => {
        &[$(stringify!($command)),*] as &[&str]
    };
}

fn main() {
    // The window's pages are embedded at compile time; without them Tauri's own error is
    // cryptic, so say what to run.
    let dist =
        std::path::Path::new(&std::env::var("CARGO_MANIFEST_DIR").unwrap()).join("../ui/dist");
    if !dist.join("index.html").exists() {
        panic!("ui/dist/index.html is missing: build the UI first with scripts/ui");
    }
    println!("cargo:rerun-if-changed=../ui/dist");
    // 'static, as tauri-build wants it: a build script runs once, so the leak is nothing.
    let commands: &'static [&'static str] =
        Vec::leak([served_commands!(names), window_only_commands!(names)].concat());
    println!("cargo:rerun-if-changed=../crates/app/src/command_names.rs");
    check_capability(commands);
    tauri_build::try_build(
        tauri_build::Attributes::new()
            .app_manifest(tauri_build::AppManifest::new().commands(commands)),
    )
    .expect("tauri-build");
}

/// The window's capability grants `allow-<command>` for exactly the app's commands.
fn check_capability(commands: &[&str]) {
    const FILE: &str = "capabilities/default.json";
    println!("cargo:rerun-if-changed={FILE}");
    let text = std::fs::read_to_string(FILE).expect("capabilities/default.json");
    let granted: std::collections::BTreeSet<String> = text
        .split('"')
        .filter_map(|word| word.strip_prefix("allow-"))
        .map(str::to_owned)
        .collect();
    let wanted: std::collections::BTreeSet<String> =
        commands.iter().map(|name| name.replace('_', "-")).collect();
    let missing: Vec<_> = wanted.difference(&granted).collect();
    let extra: Vec<_> = granted.difference(&wanted).collect();
    if !missing.is_empty() || !extra.is_empty() {
        panic!(
            "{FILE} does not grant exactly the app's commands (crates/app/src/command_names.rs): \
             add \"allow-<name>\" for {missing:?}, remove it for {extra:?}"
        );
    }
}
