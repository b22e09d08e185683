//! The API's handlers. Every one but pairing and one-time links needs a paired device's
//! cookie; every POST also needs the page's own Origin and the device's CSRF token. The
//! commands are the window's own (same names, same arguments, same results), run on the
//! same `Inbox`, so an answer from a phone is checked, bound to the version shown and
//! recorded exactly as one from the window is, with the device's name as where it came from.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Instant;

use axum::extract::{ConnectInfo, Path, State};
use axum::http::header::{COOKIE, SET_COOKIE};
use axum::http::{HeaderMap, HeaderValue};
use axum::response::{IntoResponse, Response};
use axum::Json;
use chrono::Utc;
use inbox_app::{AlikeTarget, ErrorCode, Inbox, IpcError};
use inbox_protocol::{Surface, Via};
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::devices::{Authenticated, DeviceError};
use crate::errors::{HttpError, WebErrorCode};
use crate::guard::{same_origin, secrets_equal, Source};
use crate::state::Shared;

/// The cookie that carries a device's token.
pub const COOKIE_NAME: &str = "inbox_device";

/// The header that carries the device's CSRF token on a POST.
pub const CSRF_HEADER: &str = "x-inbox-csrf";

type SharedState = State<Arc<Shared>>;
type Peer = ConnectInfo<SocketAddr>;

/// What the page learns about itself.
#[derive(Debug, Serialize)]
pub struct SessionView {
    pub device_id: String,
    pub device_name: String,
    pub csrf: String,
}

impl From<&Authenticated> for SessionView {
    fn from(auth: &Authenticated) -> SessionView {
        SessionView {
            device_id: auth.device.id.clone(),
            device_name: auth.device.name.clone(),
            csrf: auth.csrf.clone(),
        }
    }
}

fn token_of(headers: &HeaderMap) -> Option<&str> {
    headers
        .get_all(COOKIE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(';'))
        .find_map(|pair| pair.trim().strip_prefix(COOKIE_NAME)?.strip_prefix('='))
}

/// The device behind a request, or why not. A right token is honoured whatever others
/// failed from the same network, unless the device itself has failed too often (wrong CSRF
/// tokens); a wrong one counts against the network it came from.
fn device(
    shared: &Shared,
    headers: &HeaderMap,
    peer: SocketAddr,
) -> Result<Authenticated, HttpError> {
    let Some(token) = token_of(headers) else {
        return Err(refused(shared, peer, HttpError::unauthorized(), Count::No));
    };
    match shared
        .devices
        .authenticate(token, Utc::now())
        .map_err(storage)?
    {
        Some(auth)
            if shared
                .failures
                .blocked(&Source::device(&auth.device.id), Instant::now()) =>
        {
            Err(HttpError::rate_limited())
        }
        Some(auth) => Ok(auth),
        None => Err(refused(shared, peer, HttpError::unauthorized(), Count::Yes)),
    }
}

/// Whether a refusal is a failure to count (a wrong secret) or only a missing one.
#[derive(PartialEq)]
enum Count {
    Yes,
    No,
}

/// A request without a right secret from `peer`: "too many" while its network is over its
/// limit (and then not counted again, so a window ends), else `refusal`, counted if asked.
fn refused(shared: &Shared, peer: SocketAddr, refusal: HttpError, count: Count) -> HttpError {
    let source = Source::network(peer.ip());
    let now = Instant::now();
    if shared.failures.blocked(&source, now) {
        return HttpError::rate_limited();
    }
    if count == Count::Yes {
        shared.failures.record(source, now);
    }
    refusal
}

/// A state-changing request: a device, from the page's own origin, with its CSRF token.
/// A wrong CSRF token comes with the device's own cookie: it counts against the device.
fn device_for_change(
    shared: &Shared,
    headers: &HeaderMap,
    peer: SocketAddr,
) -> Result<Authenticated, HttpError> {
    let auth = device(shared, headers, peer)?;
    if !same_origin(headers, shared.scheme(), shared.public_origin.as_deref()) {
        return Err(HttpError::forbidden(
            "this request did not come from the inbox's own page (Origin); nothing was done",
        ));
    }
    let sent = headers.get(CSRF_HEADER).and_then(|v| v.to_str().ok());
    if !sent.is_some_and(|sent| secrets_equal(sent, &auth.csrf)) {
        shared
            .failures
            .record(Source::device(&auth.device.id), Instant::now());
        return Err(HttpError::forbidden(
            "the CSRF token is missing or wrong; reload the page. Nothing was done",
        ));
    }
    Ok(auth)
}

fn storage(error: DeviceError) -> HttpError {
    HttpError::storage(error.to_string())
}

pub(crate) async fn session(
    State(shared): SharedState,
    ConnectInfo(peer): Peer,
    headers: HeaderMap,
) -> Response {
    match device(&shared, &headers, peer) {
        Ok(auth) => Json(SessionView::from(&auth)).into_response(),
        Err(error) => error.into_response(),
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PairBody {
    code: String,
    name: String,
}

fn cookie(shared: &Shared, value: &str, max_age: u64) -> HeaderValue {
    let secure = if shared.tls { "; Secure" } else { "" };
    HeaderValue::from_str(&format!(
        "{COOKIE_NAME}={value}; Path=/; HttpOnly; SameSite=Strict; Max-Age={max_age}{secure}"
    ))
    .unwrap_or_else(|_| HeaderValue::from_static(""))
}

/// Exchanges a pairing code (once) for a device token in an HttpOnly cookie. A right code
/// pairs whatever others failed from the same network; a wrong one counts against it.
pub(crate) async fn pair(
    State(shared): SharedState,
    ConnectInfo(peer): Peer,
    headers: HeaderMap,
    body: axum::body::Bytes,
) -> Response {
    if !same_origin(&headers, shared.scheme(), shared.public_origin.as_deref()) {
        return HttpError::forbidden("pairing must come from the inbox's own page (Origin)")
            .into_response();
    }
    let body: PairBody = match parse_body(&body) {
        Ok(body) => body,
        Err(error) => return error.into_response(),
    };
    match shared.devices.pair(&body.code, &body.name, Utc::now()) {
        Ok(session) => {
            tracing::info!("paired a new device: {}", session.device.name);
            let view = SessionView {
                device_id: session.device.id.clone(),
                device_name: session.device.name.clone(),
                csrf: session.csrf.clone(),
            };
            let mut response = Json(view).into_response();
            response
                .headers_mut()
                .insert(SET_COOKIE, cookie(&shared, &session.token, 400 * 24 * 3600));
            response
        }
        Err(DeviceError::PairingRefused(why)) => refused(
            &shared,
            peer,
            HttpError::web(WebErrorCode::PairingRefused, why),
            Count::Yes,
        )
        .into_response(),
        Err(DeviceError::BadName(why)) => HttpError::bad_input(why).into_response(),
        Err(error) => storage(error).into_response(),
    }
}

/// Revokes the calling device and clears its cookie.
pub(crate) async fn forget(
    State(shared): SharedState,
    ConnectInfo(peer): Peer,
    headers: HeaderMap,
) -> Response {
    let auth = match device_for_change(&shared, &headers, peer) {
        Ok(auth) => auth,
        Err(error) => return error.into_response(),
    };
    if let Err(error) = shared.devices.revoke(&auth.device.id, Utc::now()) {
        return storage(error).into_response();
    }
    let mut response = Json(Value::Null).into_response();
    response
        .headers_mut()
        .insert(SET_COOKIE, cookie(&shared, "", 0));
    response
}

/// The live stream of changes for an open page.
pub(crate) async fn events(
    State(shared): SharedState,
    ConnectInfo(peer): Peer,
    headers: HeaderMap,
) -> Response {
    let auth = match device(&shared, &headers, peer) {
        Ok(auth) => auth,
        Err(error) => return error.into_response(),
    };
    let token = token_of(&headers).unwrap_or_default().to_owned();
    let devices = Arc::clone(&shared.devices);
    let still_valid = move || matches!(devices.authenticate(&token, Utc::now()), Ok(Some(_)));
    tracing::debug!("events for {}", auth.device.name);
    let inbox = Arc::clone(&shared.inbox);
    let pending = move || inbox().pending_count().unwrap_or(0);
    crate::events::stream(shared.feed.subscribe(), still_valid, pending).into_response()
}

/// A one-time answer link (an ntfy `http` action): answers its request once, with the
/// answer it was made for, if the request is still the version it was made for. The
/// unguessable token is the authority; a browser page elsewhere cannot use it either way.
/// A right token answers whatever others failed from the same network (the phone pressing
/// the button may share it with them); a wrong one counts against it.
pub(crate) async fn act(
    State(shared): SharedState,
    ConnectInfo(peer): Peer,
    headers: HeaderMap,
    Path(token): Path<String>,
) -> Response {
    // ntfy's app sends no Origin; a browser does, and then it must be this page.
    if headers.contains_key(axum::http::header::ORIGIN)
        && !same_origin(&headers, shared.scheme(), shared.public_origin.as_deref())
    {
        return HttpError::forbidden("a one-time link cannot be used from another page")
            .into_response();
    }
    let action = match shared.devices.redeem_action(&token, Utc::now()) {
        Ok(action) => action,
        Err(DeviceError::ActionRefused(why)) => {
            let refusal = HttpError::web(WebErrorCode::LinkRefused, why);
            return refused(&shared, peer, refusal, Count::Yes).into_response();
        }
        Err(error) => return storage(error).into_response(),
    };
    let inbox = (shared.inbox)();
    let result = blocking(move || {
        inbox.answer(
            &action.request_id,
            &action.answers,
            &action.version,
            Surface::Push,
        )
    })
    .await;
    respond(result)
}

/// The window's commands, as far as a paired device may use them: reading and answering.
/// Settings, the policy, demo requests and opening links stay with the desktop.
pub(crate) async fn command(
    State(shared): SharedState,
    ConnectInfo(peer): Peer,
    headers: HeaderMap,
    Path(command): Path<String>,
    body: axum::body::Bytes,
) -> Response {
    let auth = match device_for_change(&shared, &headers, peer) {
        Ok(auth) => auth,
        Err(error) => return error.into_response(),
    };
    let inbox = (shared.inbox)();
    let via = Via::device(auth.device.name.clone());
    match run(&command, &body, inbox, via).await {
        Ok(response) => response,
        Err(error) => error.into_response(),
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct IdArgs {
    id: String,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct SubmitArgs {
    id: String,
    answers: Map<String, Value>,
    version: String,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct DeclineArgs {
    id: String,
    reason: String,
    version: String,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct CheckArgs {
    id: String,
    answers: Map<String, Value>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct SnoozeArgs {
    id: String,
    duration: String,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct AlikeArgs {
    members: Vec<AlikeTarget>,
    answers: Map<String, Value>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct NoArgs {}

async fn run(
    command: &str,
    body: &[u8],
    inbox: Arc<Inbox>,
    via: Via,
) -> Result<Response, HttpError> {
    let body = if body.iter().all(u8::is_ascii_whitespace) {
        b"{}".as_slice()
    } else {
        body
    };
    Ok(match command {
        "list_pending" => {
            let NoArgs {} = parse_body(body)?;
            respond(blocking(move || inbox.pending()).await)
        }
        "list_history" => {
            let NoArgs {} = parse_body(body)?;
            respond(blocking(move || inbox.history()).await)
        }
        "list_problems" => {
            let NoArgs {} = parse_body(body)?;
            respond(blocking(move || inbox.problems()).await)
        }
        "list_snoozed" => {
            let NoArgs {} = parse_body(body)?;
            respond(blocking(move || inbox.snoozed()).await)
        }
        "get_status" => {
            let NoArgs {} = parse_body(body)?;
            respond(blocking(move || status(&inbox)).await)
        }
        "open_request" => {
            let IdArgs { id } = parse_body(body)?;
            respond(blocking(move || inbox.request(&id)).await)
        }
        "list_alike" => {
            let IdArgs { id } = parse_body(body)?;
            respond(blocking(move || inbox.alike(&id)).await)
        }
        "unsnooze_request" => {
            let IdArgs { id } = parse_body(body)?;
            respond(blocking(move || inbox.unsnooze(&id)).await)
        }
        "snooze_request" => {
            let SnoozeArgs { id, duration } = parse_body(body)?;
            respond(blocking(move || inbox.snooze(&id, &duration)).await)
        }
        "check_answers" => {
            let CheckArgs { id, answers } = parse_body(body)?;
            respond(blocking(move || inbox.check_answers(&id, &answers)).await)
        }
        "submit_answers" => {
            let SubmitArgs {
                id,
                answers,
                version,
            } = parse_body(body)?;
            respond(blocking(move || inbox.answer(&id, &answers, &version, via)).await)
        }
        "decline_request" => {
            let DeclineArgs {
                id,
                reason,
                version,
            } = parse_body(body)?;
            respond(blocking(move || inbox.decline(&id, &reason, &version, via)).await)
        }
        "answer_alike" => {
            let AlikeArgs { members, answers } = parse_body(body)?;
            respond(blocking(move || inbox.answer_alike(&members, &answers, via)).await)
        }
        other => {
            return Err(HttpError::not_found(format!(
                "\"{}\" is not something a paired device can do",
                inbox_protocol::text::one_line(other)
            )))
        }
    })
}

/// The status line of the page, without the desktop's own parts (notification switches,
/// settings warnings).
fn status(inbox: &Inbox) -> Result<inbox_app::StatusView, IpcError> {
    Ok(inbox_app::StatusView {
        pending: inbox.pending_count()?,
        spool_dir: inbox.spool_dir().display().to_string(),
        db_path: inbox.db_path().display().to_string(),
        notifications: "unavailable".to_owned(),
        operator: inbox_app::operator_shown(),
        trust: inbox_app::settings::trust_in_words(inbox.trust()),
        warnings: inbox.spool_warnings(),
        policy_trouble: inbox.policy_trouble(),
    })
}

fn parse_body<T: DeserializeOwned>(body: &[u8]) -> Result<T, HttpError> {
    serde_json::from_slice(body).map_err(|e| {
        HttpError::bad_input(format!(
            "the request body is not what this route takes: {e}"
        ))
    })
}

/// The inbox's calls wait on its loop (milliseconds, or up to its command timeout while it
/// waits out a failure): off the runtime's workers.
async fn blocking<T: Send + 'static>(
    call: impl FnOnce() -> Result<T, IpcError> + Send + 'static,
) -> Result<T, IpcError> {
    tokio::task::spawn_blocking(call).await.unwrap_or_else(|e| {
        Err(IpcError::new(
            ErrorCode::Storage,
            format!("the call failed: {e}"),
        ))
    })
}

fn respond<T: Serialize>(result: Result<T, IpcError>) -> Response {
    match result {
        Ok(value) => {
            let mut response = Json(value).into_response();
            response.headers_mut().insert(
                axum::http::header::CACHE_CONTROL,
                HeaderValue::from_static("no-store"),
            );
            response
        }
        Err(error) => HttpError::from(error).into_response(),
    }
}
