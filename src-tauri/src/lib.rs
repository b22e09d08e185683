//! The Answer Inbox desktop shell: wires `inbox-desk` into Tauri. Setup, one-line commands
//! (commands.rs), the tray (tray.rs), logging (logging.rs), the window. Everything testable
//! without a window lives in `inbox-desk`.

mod commands;
mod logging;
mod tray;

use std::sync::Arc;

use inbox_app::UiEvent;
use inbox_desk::closing::{on_close, tray_host_present, Explained, OnClose};
use inbox_desk::handover::{hand_over, Handover};
use inbox_desk::{Desk, DeskConfig, ShellHooks};
use inbox_web::{EventFeed, Remote};
use tauri::{AppHandle, Emitter, Manager, RunEvent, WebviewUrl, WebviewWindowBuilder, WindowEvent};

const MAIN: &str = "main";

/// The argument the start-at-login entry starts the app with: it then opens hidden in the
/// tray, where there is one.
const AT_LOGIN: &str = "--at-login";

/// Where the log files are, for Settings.
pub(crate) struct LogDir(pub Option<std::path::PathBuf>);

/// The handler of every command of the one list (crates/app/src/command_names.rs): the
/// served ones, then the window's own.
macro_rules! and_window_only_commands {
    ($($served:ident,)*) => {
        inbox_app::window_only_commands!(handler $($served,)*)
    };
}

macro_rules! handler {
    ($($command:ident),* $(,)?) => {
        tauri::generate_handler![$(commands::$command),*]
    };
}

pub fn run() {
    // First, while this is the only thread: in the AppImage's bundle, WebKit finds its
    // helpers relative to the working directory (bundle.rs).
    let entered_bundle = inbox_desk::bundle::enter_bundle();
    // Also before any thread (logging starts one): WebKit's compositing, off where there is
    // no GPU, through a variable WebKit's processes inherit (rendering.rs).
    let compositing = inbox_desk::rendering::apply();
    let logging = logging::init();
    tracing::info!("{compositing}");
    match entered_bundle {
        Ok(Some(usr)) => tracing::info!("running from the bundle in {}", usr.display()),
        Ok(None) => {}
        // Run anyway, and WebKit might start a program from wherever the app was started.
        Err(error) => {
            tracing::error!(
                "cannot run from the AppImage's bundle, so the app does not start: {error}"
            );
            std::process::exit(1);
        }
    }
    let at_login = std::env::args().any(|arg| arg == AT_LOGIN);

    // A second launch hands over to the running app before Tauri starts GTK (handover.rs).
    let context = tauri::generate_context!();
    let argv: Vec<String> = std::env::args_os()
        .map(|arg| arg.to_string_lossy().into_owned())
        .collect();
    let cwd = std::env::current_dir().unwrap_or_default();
    let identifier = context.config().identifier.clone();
    if hand_over(&identifier, &argv, &cwd.to_string_lossy()) == Handover::HandedOver {
        tracing::info!("Answer Inbox runs already: handed over to it (its window is shown)");
        return;
    }

    let app = tauri::Builder::default()
        // First, so that two launches at the same moment still end with one app: the one
        // that lost the name hands over from here.
        .plugin(tauri_plugin_single_instance::init(|app, _argv, _cwd| {
            show_main_window(app)
        }))
        .plugin(tauri_plugin_opener::init())
        // Start at login: an XDG autostart entry (~/.config/autostart/Answer Inbox.desktop)
        // that Settings adds and removes; never by default.
        .plugin(tauri_plugin_autostart::Builder::new().arg(AT_LOGIN).build())
        // Size, position and maximised state, saved when the app quits and restored when the
        // window opens. Not visibility: the window's being shown is decided here.
        .plugin(
            tauri_plugin_window_state::Builder::default()
                .with_state_flags(
                    tauri_plugin_window_state::StateFlags::SIZE
                        | tauri_plugin_window_state::StateFlags::POSITION
                        | tauri_plugin_window_state::StateFlags::MAXIMIZED,
                )
                .build(),
        )
        .invoke_handler(inbox_app::served_commands!(and_window_only_commands))
        .setup(move |app| {
            app.manage(LogDir(logging.dir.clone()));
            app.manage(logging);
            if let Err(message) = setup(app.handle(), at_login) {
                eprintln!("answer-inbox-desktop: {message}");
                std::process::exit(2);
            }
            Ok(())
        })
        .on_window_event(|window, event| {
            // Closing hides the window where a tray can bring it back, and quits where none
            // can (closing.rs); decided off the main thread, since it asks the session bus.
            if let WindowEvent::CloseRequested { api, .. } = event {
                api.prevent_close();
                let app = window.app_handle().clone();
                std::thread::spawn(move || close_main_window(&app));
            }
        })
        .build(context)
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

fn setup(app: &AppHandle, at_login: bool) -> Result<(), String> {
    let emit_handle = app.clone();
    let show_handle = app.clone();
    // Pages open on other devices hear what the window hears.
    let feed = EventFeed::new();
    let web_feed = feed.clone();
    let hooks = ShellHooks {
        emit: Arc::new(move |event: UiEvent| {
            if let UiEvent::Changed { pending, .. } = &event {
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
    tracing::info!(
        "Answer Inbox {} started, watching {}",
        env!("CARGO_PKG_VERSION"),
        desk.inbox().spool_dir().display()
    );
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

    // Started at login with a tray to stay in: no window until the operator asks for it
    // (or a request's notification is clicked). Without a tray, a hidden app could not be
    // reached, so the window opens.
    let visible = !(at_login && tray_host_present());
    WebviewWindowBuilder::new(app, MAIN, WebviewUrl::App("index.html".into()))
        .title("Answer Inbox")
        .visible(visible)
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

/// The window's close button: hide, quit, or say once that closing quits (closing.rs).
fn close_main_window(app: &AppHandle) {
    let explained = Explained::in_state_dir();
    let before = explained.as_ref().is_none_or(Explained::before);
    let tray_host = tray_host_present();
    let decision = on_close(tray_host, before);
    tracing::info!(
        "the window's close button: {decision:?} (tray host: {tray_host}, closing quits said \
         before: {before})"
    );
    match decision {
        OnClose::Hide => {
            if let Some(window) = app.get_webview_window(MAIN) {
                let _ = window.hide();
            }
        }
        OnClose::Quit => app.exit(0),
        OnClose::Explain => {
            if let Some(explained) = explained {
                explained.remember();
            }
            // Only the window hears this; pages on other devices have no app to quit.
            let _ = app.emit("inbox", UiEvent::ClosingQuits);
        }
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
