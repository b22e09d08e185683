//! The smallest Tauri app: one window showing one static page. inbox-bench measures its
//! memory next to the desktop app's.

fn main() {
    tauri::Builder::default()
        .run(tauri::generate_context!())
        .unwrap_or_else(|error| {
            eprintln!("inbox-bare-window: {error}");
            std::process::exit(2);
        });
}
