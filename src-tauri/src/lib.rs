//! The Answer Inbox desktop shell: wires `inbox-desk` into Tauri. Setup, one-line commands
//! (commands.rs), the tray (tray.rs), the window. Everything testable without a window
//! lives in `inbox-desk`.

mod commands;
mod tray;

use std::sync::Arc;

use inbox_desk::{Desk, DeskConfig, ShellHooks, UiEvent};
use inbox_web::{EventFeed, Remote};
use tauri::{AppHandle, Emitter, Manager, RunEvent, WebviewUrl, WebviewWindowBuilder, WindowEvent};

const MAIN: &str = "main";

pub fn run() {
    tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env()
                .unwrap_or_else(|_| "info,rusqlite_migration=warn".into()),
        )
        .with_writer(std::io::stderr)
        .init();

    let app = tauri::Builder::default()
        // First, so that a second launch hands over before it opens anything itself.
        .plugin(tauri_plugin_single_instance::init(|app, _argv, _cwd| {
            show_main_window(app)
        }))
        .plugin(tauri_plugin_opener::init())
        .invoke_handler(tauri::generate_handler![
            commands::list_pending,
            commands::list_history,
            commands::list_problems,
            commands::open_request,
            commands::submit_answers,
            commands::decline_request,
            commands::check_answers,
            commands::list_snoozed,
            commands::snooze_request,
            commands::unsnooze_request,
            commands::list_alike,
            commands::answer_alike,
            commands::get_policy,
            commands::check_policy,
            commands::save_policy,
            commands::open_policy_file,
            commands::add_demo_requests,
            commands::get_status,
            commands::get_settings,
            commands::save_settings,
            commands::open_link,
            commands::get_remote_access,
            commands::pair_device,
            commands::rename_device,
            commands::revoke_device,
        ])
        .setup(|app| {
            if let Err(message) = setup(app.handle()) {
                eprintln!("answer-inbox-desktop: {message}");
                std::process::exit(2);
            }
            Ok(())
        })
        .on_window_event(|window, event| {
            // Closing the window keeps the inbox running in the tray.
            if let WindowEvent::CloseRequested { api, .. } = event {
                api.prevent_close();
                let _ = window.hide();
            }
        })
        .build(tauri::generate_context!())
        .unwrap_or_else(|error| {
            eprintln!("answer-inbox-desktop: cannot start: {error}");
            std::process::exit(2);
        });
    app.run(|_app, event| {
        // Only Quit in the tray (app.exit) ends the app; a closed window does not.
        if let RunEvent::ExitRequested { api, code, .. } = event {
            if code.is_none() {
                api.prevent_exit();
            }
        }
    });
}

fn setup(app: &AppHandle) -> Result<(), String> {
    let emit_handle = app.clone();
    let show_handle = app.clone();
    // Pages open on other devices hear what the window hears.
    let feed = EventFeed::new();
    let web_feed = feed.clone();
    let hooks = ShellHooks {
        emit: Arc::new(move |event: UiEvent| {
            if let UiEvent::Changed { pending } = &event {
                update_tray(&emit_handle, *pending);
            }
            let _ = emit_handle.emit("inbox", &event);
            web_feed.send(event);
        }),
        show_window: Arc::new(move || show_main_window(&show_handle)),
        also_notify: Default::default(),
    };
    let pushes = hooks.also_notify.clone();
    let config = DeskConfig::from_env("Answer Inbox").map_err(|e| e.message)?;
    let desk = Desk::start(config, hooks).map_err(|e| e.message)?;
    for warning in &desk.warnings {
        tracing::warn!("{warning}");
    }
    app.manage(Arc::clone(&desk));

    // Answering from other devices: the same server as `answer-inbox serve`, over the
    // desk's inbox (whichever spool it has now), as the Settings say.
    let inbox_of = Arc::clone(&desk);
    let state_dir = desk
        .inbox()
        .db_path()
        .parent()
        .map(std::path::Path::to_path_buf)
        .unwrap_or_default();
    let remote = Arc::new(Remote::new(
        Arc::new(move || inbox_of.inbox()),
        feed,
        pushes,
        state_dir,
    ));
    remote.apply(&desk.settings().remote);
    app.manage(remote);

    WebviewWindowBuilder::new(app, MAIN, WebviewUrl::App("index.html".into()))
        .title("Answer Inbox")
        .inner_size(1100.0, 720.0)
        .min_inner_size(640.0, 420.0)
        // The window shows the app and nothing else: links from requests go to the system
        // browser through `open_link`, never into this webview.
        .on_navigation(is_app_url)
        .build()
        .map_err(|e| format!("cannot open the window: {e}"))?;

    match tray::create(app, &desk) {
        Ok(tray) => {
            app.manage(tray);
            if let Ok(status) = desk.status() {
                update_tray(app, status.pending);
            }
        }
        // No tray host (a bare X session, some Wayland desktops): the window still works.
        Err(error) => tracing::warn!("no tray icon: {error}"),
    }
    Ok(())
}

/// The app's own pages: Tauri serves them as `tauri://localhost` (or `http://tauri.localhost`).
fn is_app_url(url: &tauri::Url) -> bool {
    url.scheme() == "tauri" || url.host_str() == Some("tauri.localhost")
}

fn update_tray(app: &AppHandle, pending: u32) {
    let Some(tray) = app.try_state::<tray::Tray>() else {
        return;
    };
    let do_not_disturb = app
        .try_state::<Arc<Desk>>()
        .is_some_and(|desk| desk.settings().do_not_disturb);
    tray.update(pending, do_not_disturb);
    if let Some(window) = app.get_webview_window(MAIN) {
        let title = if pending > 0 {
            format!("Answer Inbox ({pending})")
        } else {
            "Answer Inbox".to_owned()
        };
        let _ = window.set_title(&title);
    }
}

/// Shows, un-minimises and focuses the window (tray, notification click, second launch).
pub(crate) fn show_main_window(app: &AppHandle) {
    if let Some(window) = app.get_webview_window(MAIN) {
        let _ = window.show();
        let _ = window.unminimize();
        let _ = window.set_focus();
    }
}
