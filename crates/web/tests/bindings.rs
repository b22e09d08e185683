//! The UI's TypeScript types are generated from the Rust view models (ts-rs): the service's
//! (inbox-app) and the web server's own (this crate, which sees both). They are committed in
//! `ui/src/lib/bindings/`; this fails when they drift, or when a file there is no longer
//! generated. `UPDATE_BINDINGS=1 cargo test -p inbox-web --test integration bindings::` rewrites them.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use inbox_app::*;
use inbox_web::errors::WebErrorCode;
use inbox_web::views::{PairingView, RemoteView};
use ts_rs::TS;

fn generate(into: &Path) {
    HistoryView::export_all_to(into).unwrap();
    RequestView::export_all_to(into).unwrap();
    SpoolProblemView::export_all_to(into).unwrap();
    SubmitResult::export_all_to(into).unwrap();
    Settings::export_all_to(into).unwrap();
    StatusView::export_all_to(into).unwrap();
    UiEvent::export_all_to(into).unwrap();
    IpcError::export_all_to(into).unwrap();
    SnoozeView::export_all_to(into).unwrap();
    RemoteView::export_all_to(into).unwrap();
    PairingView::export_all_to(into).unwrap();
    AlikeMemberView::export_all_to(into).unwrap();
    AlikeTarget::export_all_to(into).unwrap();
    AlikeAnswerView::export_all_to(into).unwrap();
    PolicyView::export_all_to(into).unwrap();
    AppView::export_all_to(into).unwrap();
    WebErrorCode::export_all_to(into).unwrap();
    write_command_names(into);
}

/// The window's command names as TypeScript unions, from inbox-app's one list, so `ipc.ts`
/// cannot call a command that does not exist.
fn write_command_names(into: &Path) {
    let union = |names: &[&str]| {
        names
            .iter()
            .map(|name| format!("\"{name}\""))
            .collect::<Vec<_>>()
            .join(" | ")
    };
    let text = format!(
        "// Generated from crates/app/src/command_names.rs by inbox-web's bindings test. Do not \
         edit this file manually.\n\n\
         /**\n * The commands the window and a paired device both have.\n */\n\
         export type ServedCommand = {};\n\n\
         /**\n * The commands only the desktop window has.\n */\n\
         export type WindowOnlyCommand = {};\n\n\
         /**\n * Every command of the window.\n */\n\
         export type CommandName = ServedCommand | WindowOnlyCommand;\n",
        union(SERVED_COMMANDS),
        union(WINDOW_ONLY_COMMANDS)
    );
    std::fs::write(into.join("CommandName.ts"), text).unwrap();
}

/// Every `.ts` file under `dir`, by its path relative to `dir`.
fn read_dir(dir: &Path) -> BTreeMap<PathBuf, String> {
    let mut files = BTreeMap::new();
    let mut todo = vec![dir.to_owned()];
    while let Some(next) = todo.pop() {
        for entry in std::fs::read_dir(&next).into_iter().flatten().flatten() {
            let path = entry.path();
            if path.is_dir() {
                todo.push(path);
            } else if path.extension().is_some_and(|ext| ext == "ts") {
                let text = std::fs::read_to_string(&path).unwrap();
                files.insert(path.strip_prefix(dir).unwrap().to_owned(), text);
            }
        }
    }
    files
}

#[test]
fn typescript_bindings_match_the_rust_types() {
    let committed = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../ui/src/lib/bindings");
    let fresh = tempfile::tempdir().unwrap();
    generate(fresh.path());
    let generated = read_dir(fresh.path());
    assert!(
        generated.len() >= 10,
        "ts-rs wrote {} files",
        generated.len()
    );
    if std::env::var_os("UPDATE_BINDINGS").is_some() {
        let _ = std::fs::remove_dir_all(&committed);
        std::fs::create_dir_all(&committed).unwrap();
        for (name, text) in &generated {
            let path = committed.join(name);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, text).unwrap();
        }
        return;
    }
    assert_eq!(
        read_dir(&committed),
        generated,
        "ui/src/lib/bindings is stale: run UPDATE_BINDINGS=1 cargo test -p inbox-web --test \
         integration bindings::"
    );
}
