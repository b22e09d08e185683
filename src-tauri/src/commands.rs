//! The window's commands: each a one-line call into `inbox-desk`. `async` so that Tauri runs
//! them off the main thread: a list of 10,000 rows must not freeze the window while it is
//! read and serialised.

use std::sync::Arc;

use inbox_desk::{
    Desk, HistoryView, IpcError, ProblemView, RequestView, RowView, Settings, SpoolProblemView,
    StatusView, SubmitResult,
};
use serde_json::{Map, Value};
use tauri::{AppHandle, State};
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

#[tauri::command]
pub async fn save_settings(desk: State<'_, Arc<Desk>>, settings: Settings) -> Answer<Settings> {
    desk.save_settings(settings)
}

#[tauri::command]
pub async fn open_link(app: AppHandle, desk: State<'_, Arc<Desk>>, url: String) -> Answer<()> {
    desk.open_link(&url, |url| {
        app.opener()
            .open_url(url, None::<&str>)
            .map_err(|e| e.to_string())
    })
}
