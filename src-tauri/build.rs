//! Declares the app's own commands, so that each gets an `allow-<command>` permission and
//! the window may call only those its capability grants (capabilities/default.json).

fn main() {
    // The window's pages are embedded at compile time; without them Tauri's own error is
    // cryptic, so say what to run.
    let dist =
        std::path::Path::new(&std::env::var("CARGO_MANIFEST_DIR").unwrap()).join("../ui/dist");
    if !dist.join("index.html").exists() {
        panic!("ui/dist/index.html is missing: build the UI first with scripts/ui");
    }
    println!("cargo:rerun-if-changed=../ui/dist");
    let commands = &[
        "list_pending",
        "list_history",
        "list_problems",
        "open_request",
        "submit_answers",
        "decline_request",
        "check_answers",
        "list_snoozed",
        "snooze_request",
        "unsnooze_request",
        "list_alike",
        "answer_alike",
        "get_policy",
        "check_policy",
        "save_policy",
        "open_policy_file",
        "add_demo_requests",
        "get_status",
        "get_settings",
        "save_settings",
        "open_link",
        "get_remote_access",
        "pair_device",
        "rename_device",
        "revoke_device",
        "get_app",
        "set_start_at_login",
        "open_log_folder",
        "quit_app",
    ];
    tauri_build::try_build(
        tauri_build::Attributes::new()
            .app_manifest(tauri_build::AppManifest::new().commands(commands)),
    )
    .expect("tauri-build");
}
