//! The window's commands: each a one-line call into `inbox-desk`'s `Desk` or `inbox-app`'s `Inbox`. `async` so that Tauri runs
//! them off the main thread: a list of 10,000 rows must not freeze the window while it is
//! read and serialised.

use std::sync::Arc;

use inbox_app::{
    AlikeAnswerView, AlikeMemberView, AlikeTarget, AppView, ErrorCode, HistoryView, IpcError,
    PolicyProblemView, PolicyView, ProblemView, RequestView, RowView, Settings, SnoozeView,
    SpoolProblemView, StatusView, SubmitResult,
};
use inbox_desk::Desk;
use inbox_web::{PairingView, Remote, RemoteView};
use serde_json::{Map, Value};
use tauri::{AppHandle, State};
use tauri_plugin_autostart::ManagerExt;
use tauri_plugin_opener::OpenerExt;

type Answer<T> = Result<T, IpcError>;

#[tauri::command]
pub async fn list_pending(desk: State<'_, Arc<Desk>>) -> Answer<Vec<RowView>> {
    desk.inbox().pending()
}

#[tauri::command]
pub async fn list_history(desk: State<'_, Arc<Desk>>) -> Answer<Vec<HistoryView>> {
    desk.inbox().history()
}

#[tauri::command]
pub async fn list_problems(desk: State<'_, Arc<Desk>>) -> Answer<Vec<SpoolProblemView>> {
    desk.inbox().problems()
}

#[tauri::command]
pub async fn open_request(desk: State<'_, Arc<Desk>>, id: String) -> Answer<RequestView> {
    desk.inbox().request(&id)
}

/// `version`: the `RequestView::version` the window showed; a request file that no longer
/// has it is not answered (`changed`).
#[tauri::command]
pub async fn submit_answers(
    desk: State<'_, Arc<Desk>>,
    id: String,
    answers: Map<String, Value>,
    version: String,
) -> Answer<SubmitResult> {
    desk.answer(&id, &answers, &version)
}

#[tauri::command]
pub async fn decline_request(
    desk: State<'_, Arc<Desk>>,
    id: String,
    reason: String,
    version: String,
) -> Answer<SubmitResult> {
    desk.decline(&id, &reason, &version)
}

/// The problems the answers given so far would be refused for; empty when they can be
/// submitted. Nothing is written.
#[tauri::command]
pub async fn check_answers(
    desk: State<'_, Arc<Desk>>,
    id: String,
    answers: Map<String, Value>,
) -> Answer<Vec<ProblemView>> {
    desk.inbox().check_answers(&id, &answers)
}

/// Snoozed requests, the soonest back first.
#[tauri::command]
pub async fn list_snoozed(desk: State<'_, Arc<Desk>>) -> Answer<Vec<RowView>> {
    desk.inbox().snoozed()
}

/// `duration`: "15m", "1h", "1h 30m"; cut to the request's expiry if that is sooner.
#[tauri::command]
pub async fn snooze_request(
    desk: State<'_, Arc<Desk>>,
    id: String,
    duration: String,
) -> Answer<SnoozeView> {
    desk.inbox().snooze(&id, &duration)
}

#[tauri::command]
pub async fn unsnooze_request(desk: State<'_, Arc<Desk>>, id: String) -> Answer<bool> {
    desk.inbox().unsnooze(&id)
}

/// The pending requests asking exactly what `id` asks, itself included, with the versions
/// an answer to all of them sends back.
#[tauri::command]
pub async fn list_alike(desk: State<'_, Arc<Desk>>, id: String) -> Answer<Vec<AlikeMemberView>> {
    desk.inbox().alike(&id)
}

/// One answer per member, each bound to the version the window listed.
#[tauri::command]
pub async fn answer_alike(
    desk: State<'_, Arc<Desk>>,
    members: Vec<AlikeTarget>,
    answers: Map<String, Value>,
) -> Answer<Vec<AlikeAnswerView>> {
    desk.answer_alike(&members, &answers)
}

#[tauri::command]
pub async fn get_policy(desk: State<'_, Arc<Desk>>) -> Answer<PolicyView> {
    desk.policy()
}

/// The problems of policy text as typed, each with its line; nothing is written.
#[tauri::command]
pub async fn check_policy(
    desk: State<'_, Arc<Desk>>,
    text: String,
) -> Answer<Vec<PolicyProblemView>> {
    Ok(desk.check_policy(&text))
}

#[tauri::command]
pub async fn save_policy(desk: State<'_, Arc<Desk>>, text: String) -> Answer<PolicyView> {
    desk.save_policy(&text)
}

/// Opens the policy file in the system's editor for it (called from Rust only: the page
/// has no opener permission).
#[tauri::command]
pub async fn open_policy_file(app: AppHandle, desk: State<'_, Arc<Desk>>) -> Answer<()> {
    desk.open_policy(|path| {
        app.opener()
            .open_path(path.to_string_lossy(), None::<&str>)
            .map_err(|e| e.to_string())
    })
}

#[tauri::command]
pub async fn add_demo_requests(desk: State<'_, Arc<Desk>>) -> Answer<u32> {
    desk.inbox().add_demo_requests()
}

#[tauri::command]
pub async fn get_status(desk: State<'_, Arc<Desk>>) -> Answer<StatusView> {
    desk.status()
}

#[tauri::command]
pub async fn get_settings(desk: State<'_, Arc<Desk>>) -> Answer<Settings> {
    Ok(desk.settings())
}

/// Saves the settings, then starts, restarts or stops answering from other devices as
/// they say.
#[tauri::command]
pub async fn save_settings(
    desk: State<'_, Arc<Desk>>,
    remote: State<'_, Arc<Remote>>,
    settings: Settings,
) -> Answer<Settings> {
    let saved = desk.save_settings(settings)?;
    remote.apply(&saved.remote);
    Ok(saved)
}

/// Whether the server for other devices runs, where, and the paired devices.
#[tauri::command]
pub async fn get_remote_access(remote: State<'_, Arc<Remote>>) -> Answer<RemoteView> {
    Ok(remote.view())
}

/// A pairing link (and its QR code) for one more device.
#[tauri::command]
pub async fn pair_device(remote: State<'_, Arc<Remote>>) -> Answer<PairingView> {
    remote.pair()
}

#[tauri::command]
pub async fn rename_device(
    remote: State<'_, Arc<Remote>>,
    id: String,
    name: String,
) -> Answer<RemoteView> {
    remote.rename_device(&id, &name)
}

#[tauri::command]
pub async fn revoke_device(remote: State<'_, Arc<Remote>>, id: String) -> Answer<RemoteView> {
    remote.revoke_device(&id)
}

#[tauri::command]
pub async fn open_link(app: AppHandle, desk: State<'_, Arc<Desk>>, url: String) -> Answer<()> {
    desk.open_link(&url, |url| {
        app.opener()
            .open_url(url, None::<&str>)
            .map_err(|e| e.to_string())
    })
}

/// Start at login, the log folder and whether a tray is there, for Settings.
#[tauri::command]
pub async fn get_app(app: AppHandle, logs: State<'_, crate::LogDir>) -> Answer<AppView> {
    Ok(AppView {
        start_at_login: start_at_login(&app)?,
        log_dir: logs.0.as_ref().map(|dir| dir.display().to_string()),
        tray: inbox_desk::closing::tray_host_present(),
    })
}

/// Adds the app to the desktop's autostart, or removes it; returns what holds now.
#[tauri::command]
pub async fn set_start_at_login(app: AppHandle, on: bool) -> Answer<bool> {
    let autostart = app.autolaunch();
    let changed = if on {
        autostart.enable()
    } else {
        autostart.disable()
    };
    changed.map_err(|error| {
        IpcError::new(
            ErrorCode::Storage,
            format!("cannot change the desktop's autostart entry: {error}"),
        )
    })?;
    start_at_login(&app)
}

fn start_at_login(app: &AppHandle) -> Answer<bool> {
    app.autolaunch().is_enabled().map_err(|error| {
        IpcError::new(
            ErrorCode::Storage,
            format!("cannot read the desktop's autostart entry: {error}"),
        )
    })
}

/// Opens the log folder in the file manager: that directory and no other path (the page
/// names none).
#[tauri::command]
pub async fn open_log_folder(app: AppHandle, logs: State<'_, crate::LogDir>) -> Answer<()> {
    let dir = logs.0.as_ref().ok_or_else(|| {
        IpcError::bad_input("this app writes no log file (see its standard error)")
    })?;
    app.opener()
        .open_path(dir.to_string_lossy(), None::<&str>)
        .map_err(|error| {
            IpcError::new(
                ErrorCode::Storage,
                format!("cannot open {}: {error}", dir.display()),
            )
        })
}

/// Ctrl+Q: quits the app (the tray's Quit does the same).
#[tauri::command]
pub async fn quit_app(app: AppHandle) -> Answer<()> {
    app.exit(0);
    Ok(())
}
