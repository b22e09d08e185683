//! The server: where it listens, with or without TLS, its routes and the checks in front of
//! them, on a tokio runtime of its own (so the CLI and the desktop app start it the same
//! way, and a stop is one call).

use std::net::{SocketAddr, TcpListener, UdpSocket};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

use axum::extract::{ConnectInfo, Request, State};
use axum::http::StatusCode;
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::Router;
use chrono::Utc;
use url::Url;

use crate::connections::{Admit, Connections, PER_SOURCE, REQUEST_READ_TIMEOUT, TOTAL};
use crate::devices::{DeviceError, DeviceStore, PendingAction};
use crate::errors::HttpError;
use crate::events::EventFeed;
use crate::guard::{Failures, Hosts};
pub use crate::state::InboxSource;
use crate::state::Shared;
use crate::tls::Certificate;
use crate::{api, assets};

/// How long the pairing code in a printed link stays good.
pub const PAIRING_TTL: Duration = Duration::from_secs(10 * 60);

/// The most failed attempts one source (a network, or a device: [`crate::guard::Source`])
/// may make in [`FAILURE_WINDOW`].
pub const FAILURE_LIMIT: u32 = 10;
pub const FAILURE_WINDOW: Duration = Duration::from_secs(60);

/// The largest request body the API reads (answers are checked against the protocol's own
/// limits after).
const BODY_LIMIT: usize = 1024 * 1024;

/// How to serve.
#[derive(Debug, Clone)]
pub struct ServeOptions {
    pub listen: SocketAddr,
    /// The certificate to serve TLS with; `None` is plain HTTP, for loopback only.
    pub tls: Option<Certificate>,
    /// More host names the page may be reached by (a reverse proxy's, a DNS name).
    pub hosts: Vec<String>,
    /// The address devices use, when it is not the listen address (a reverse proxy, an
    /// SSH tunnel's local end). Links are made with it.
    pub public_url: Option<Url>,
}

#[derive(Debug, thiserror::Error)]
pub enum ServeError {
    #[error("cannot listen on {listen}: {source}")]
    Bind {
        listen: SocketAddr,
        source: std::io::Error,
    },
    #[error(
        "plain HTTP is only served on loopback (127.0.0.1 or ::1), where nobody else can \
         read it; {listen} is reachable from other machines, so serve it with TLS, or keep \
         it on loopback behind an SSH tunnel or a reverse proxy"
    )]
    PlainOffLoopback { listen: SocketAddr },
    #[error("{0}")]
    Tls(#[from] crate::tls::TlsError),
    #[error("cannot start the server: {0}")]
    Start(String),
    #[error("{0}")]
    Devices(#[from] DeviceError),
}

/// A running server; dropping it stops it.
pub struct WebServer {
    base: String,
    fingerprint: Option<String>,
    listen: SocketAddr,
    devices: Arc<DeviceStore>,
    handle: axum_server::Handle,
    thread: Option<JoinHandle<()>>,
}

/// A server bound to its address but not yet serving: its URL and links are known, so the
/// ntfy publisher (which the inbox's loop needs at its start) can be made before the inbox
/// the server answers for.
pub struct Listening {
    listener: TcpListener,
    bound: SocketAddr,
    base: String,
    options: ServeOptions,
    devices: Arc<DeviceStore>,
}

impl Listening {
    /// The address devices open.
    pub fn url(&self) -> &str {
        &self.base
    }

    /// What the ntfy publisher links to: this server's page and one-time answer URLs.
    pub fn links(&self) -> Arc<ServerLinks> {
        Arc::new(ServerLinks {
            base: self.base.clone(),
            devices: Arc::clone(&self.devices),
        })
    }

    /// Serves `inbox` on a thread of its own until stopped.
    pub fn serve(self, inbox: InboxSource, feed: EventFeed) -> Result<WebServer, ServeError> {
        let Listening {
            listener,
            bound,
            base,
            options,
            devices,
        } = self;
        let mut hosts = options.hosts.clone();
        if let Some(host) = options.public_url.as_ref().and_then(|u| u.host_str()) {
            hosts.push(host.to_owned());
        }
        let shared = Arc::new(Shared {
            inbox,
            devices: Arc::clone(&devices),
            feed,
            hosts: Hosts::for_listen(bound, &hosts),
            tls: options.tls.is_some(),
            public_origin: options
                .public_url
                .as_ref()
                .map(|u| u.origin().ascii_serialization()),
            failures: Failures::new(FAILURE_LIMIT, FAILURE_WINDOW),
        });
        let connections = Connections::new(PER_SOURCE, TOTAL, REQUEST_READ_TIMEOUT);
        let app = router(shared, Arc::clone(&connections))
            .into_make_service_with_connect_info::<SocketAddr>();
        let admit = Admit { connections };
        let handle = axum_server::Handle::new();
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .thread_name("web")
            .enable_all()
            .build()
            .map_err(|e| ServeError::Start(e.to_string()))?;
        let fingerprint = options.tls.as_ref().map(|c| c.fingerprint.clone());
        let serve_handle = handle.clone();
        let tls = match &options.tls {
            Some(cert) => Some(crate::tls::server_config(cert)?),
            None => None,
        };
        let thread = std::thread::Builder::new()
            .name("web-server".into())
            .spawn(move || {
                runtime.block_on(async move {
                    let result = match tls {
                        Some(config) => {
                            let config = axum_server::tls_rustls::RustlsConfig::from_config(config);
                            axum_server::from_tcp_rustls(listener, config)
                                .map(|tls| tls.acceptor(admit))
                                .handle(serve_handle)
                                .serve(app)
                                .await
                        }
                        None => {
                            axum_server::from_tcp(listener)
                                .acceptor(admit)
                                .handle(serve_handle)
                                .serve(app)
                                .await
                        }
                    };
                    if let Err(error) = result {
                        tracing::error!("the web server stopped: {error}");
                    }
                });
            })
            .map_err(|e| ServeError::Start(e.to_string()))?;
        devices.set_meta("url", &base)?;
        devices.set_meta("fingerprint", fingerprint.as_deref().unwrap_or(""))?;
        Ok(WebServer {
            base,
            fingerprint,
            listen: bound,
            devices,
            handle,
            thread: Some(thread),
        })
    }
}

impl WebServer {
    /// Binds (so a port in use is an error here, not later); [`Listening::serve`] then
    /// serves.
    pub fn bind(options: ServeOptions, devices: Arc<DeviceStore>) -> Result<Listening, ServeError> {
        let listen = options.listen;
        if options.tls.is_none() && !listen.ip().is_loopback() {
            return Err(ServeError::PlainOffLoopback { listen });
        }
        let listener =
            TcpListener::bind(listen).map_err(|source| ServeError::Bind { listen, source })?;
        let bound = listener
            .local_addr()
            .map_err(|source| ServeError::Bind { listen, source })?;
        listener
            .set_nonblocking(true)
            .map_err(|e| ServeError::Start(e.to_string()))?;
        let scheme = if options.tls.is_some() {
            "https"
        } else {
            "http"
        };
        let base = match &options.public_url {
            Some(url) => url.as_str().trim_end_matches('/').to_owned(),
            None => format!("{scheme}://{}", reachable(bound)),
        };
        Ok(Listening {
            listener,
            bound,
            base,
            options,
            devices,
        })
    }

    /// Binds and serves at once (when no ntfy publisher needs the links first).
    pub fn start(
        options: ServeOptions,
        inbox: InboxSource,
        feed: EventFeed,
        devices: Arc<DeviceStore>,
    ) -> Result<WebServer, ServeError> {
        WebServer::bind(options, devices)?.serve(inbox, feed)
    }

    /// The address devices open: `https://192.0.2.7:8443` (or the public URL).
    pub fn url(&self) -> &str {
        &self.base
    }

    /// The address the server is bound to (the port a `:0` listen got).
    pub fn listen(&self) -> SocketAddr {
        self.listen
    }

    /// Who can open the page, in words.
    pub fn who_can_reach(&self) -> String {
        who_can_reach(self.listen, self.fingerprint.is_some())
    }

    /// The certificate's SHA-256 fingerprint, when serving TLS.
    pub fn fingerprint(&self) -> Option<&str> {
        self.fingerprint.as_deref()
    }

    /// A new pairing link for one more device, good for [`PAIRING_TTL`].
    pub fn pairing_link(&self) -> Result<String, DeviceError> {
        new_pairing_link(&self.devices)
    }

    /// Stops serving: open pages lose their connection, requests in flight get a second.
    pub fn stop(mut self) {
        self.shutdown();
    }

    fn shutdown(&mut self) {
        self.handle.graceful_shutdown(Some(Duration::from_secs(1)));
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

impl Drop for WebServer {
    fn drop(&mut self) {
        self.shutdown();
    }
}

/// A pairing link made from what the running server recorded (its URL and certificate
/// fingerprint), for `answer-inbox devices pair` in another process.
pub fn new_pairing_link(devices: &DeviceStore) -> Result<String, DeviceError> {
    let base = devices.meta("url")?.ok_or_else(|| {
        DeviceError::Storage(
            "no server has run with this inbox yet: start `answer-inbox serve` first".into(),
        )
    })?;
    let fingerprint = devices.meta("fingerprint")?.filter(|f| !f.is_empty());
    let code = devices.new_pairing_code(
        chrono::Duration::from_std(PAIRING_TTL).unwrap_or(chrono::Duration::minutes(10)),
        Utc::now(),
    )?;
    Ok(pairing_link(&base, &code, fingerprint.as_deref()))
}

/// `<base>/#pair=<code>[&fp=<fingerprint>]`: in the fragment, so the code never reaches a
/// server log or a Referer header.
pub fn pairing_link(base: &str, code: &str, fingerprint: Option<&str>) -> String {
    match fingerprint {
        Some(fp) => format!("{base}/#pair={code}&fp={fp}"),
        None => format!("{base}/#pair={code}"),
    }
}

/// The host part of links for a bound address: itself, unless it is every address, then
/// the address this machine reaches the network by (a UDP "connect" sends nothing; it
/// only picks the route), or the host name when there is no route.
fn reachable(bound: SocketAddr) -> String {
    if !bound.ip().is_unspecified() {
        return bound.to_string();
    }
    let probe = UdpSocket::bind("0.0.0.0:0")
        .and_then(|socket| socket.connect("192.0.2.1:9").map(|()| socket))
        .and_then(|socket| socket.local_addr());
    match probe {
        Ok(local) if !local.ip().is_unspecified() => {
            SocketAddr::new(local.ip(), bound.port()).to_string()
        }
        _ => format!(
            "{}:{}",
            gethostname::gethostname().to_string_lossy(),
            bound.port()
        ),
    }
}

/// Links for the ntfy publisher: the page, and one-time answer URLs kept in the device
/// store.
pub struct ServerLinks {
    base: String,
    devices: Arc<DeviceStore>,
}

/// A one-time URL for a request without an expiry lasts this long.
const ACTION_CAP: chrono::Duration = chrono::Duration::hours(24);

impl inbox_notifications::Links for ServerLinks {
    fn open_url(&self, request_id: &str) -> String {
        format!("{}/#request={request_id}", self.base)
    }

    fn page_url(&self) -> String {
        format!("{}/", self.base)
    }

    fn one_time_url(
        &self,
        request_id: &str,
        version: &str,
        answers: &serde_json::Map<String, serde_json::Value>,
        label: &str,
        expires_at: Option<chrono::DateTime<Utc>>,
    ) -> Option<String> {
        let now = Utc::now();
        let cap = now + ACTION_CAP;
        let expires_at = expires_at.map_or(cap, |at| at.min(cap));
        let action = PendingAction {
            request_id: request_id.to_owned(),
            version: version.to_owned(),
            answers: answers.clone(),
            label: label.to_owned(),
        };
        match self.devices.new_action(&action, expires_at, now) {
            Ok(token) => Some(format!("{}/api/act/{token}", self.base)),
            Err(error) => {
                tracing::warn!("no answer buttons on the push: {error}");
                None
            }
        }
    }
}

fn router(shared: Arc<Shared>, connections: Arc<Connections>) -> Router {
    Router::new()
        .route("/api/session", get(api::session))
        .route("/api/pair", post(api::pair))
        .route("/api/forget", post(api::forget))
        .route("/api/events", get(api::events))
        .route("/api/act/{token}", post(api::act))
        .route("/api/{command}", post(api::command))
        .fallback(get(page))
        .layer(axum::extract::DefaultBodyLimit::max(BODY_LIMIT))
        // Inside the Host check, whose JSON errors then cover its 413 too.
        .layer(middleware::from_fn_with_state(
            (connections, BODY_LIMIT),
            crate::connections::hold,
        ))
        .layer(middleware::from_fn_with_state(
            Arc::clone(&shared),
            check_host,
        ))
        .with_state(shared)
}

/// The UI for every other path, but never for the API's: a mistyped API route is a JSON
/// 404, not the page.
async fn page(request: Request) -> Response {
    let path = request.uri().path();
    if path == "/api" || path.starts_with("/api/") {
        return HttpError::not_found("no such API route").into_response();
    }
    assets::file(path)
}

/// In front of everything: a Host this server answers to (no DNS rebinding), and the
/// page's security headers on every response.
async fn check_host(
    State(shared): State<Arc<Shared>>,
    ConnectInfo(peer): ConnectInfo<SocketAddr>,
    request: Request,
    next: Next,
) -> Response {
    let host = crate::guard::host_header(request.headers()).unwrap_or("");
    let api = request.uri().path().starts_with("/api/");
    let mut response = if shared.hosts.allows(host) {
        let response = next.run(request).await;
        if api {
            as_json_error(response)
        } else {
            response
        }
    } else {
        tracing::warn!(
            "refused a request from {peer} for host {:?}",
            inbox_protocol::text::one_line(host)
        );
        let mut refused = HttpError::forbidden(
            "this server does not answer to that host name (start it with --host NAME to add one)",
        );
        refused.status = StatusCode::MISDIRECTED_REQUEST;
        refused.into_response()
    };
    assets::security_headers(response.headers_mut());
    response
}

/// The names a new certificate is made for: localhost, this machine's name (and its
/// `.local` name), the listen address when it is a specific one or else the address this
/// machine reaches the network by, and the names given with `--host`.
pub fn certificate_names(listen: SocketAddr, hosts: &[String]) -> Vec<String> {
    let mut names = vec!["localhost".to_owned(), "127.0.0.1".to_owned()];
    let host = gethostname::gethostname().to_string_lossy().into_owned();
    if !host.is_empty() {
        names.push(format!("{host}.local"));
        names.push(host);
    }
    if !listen.ip().is_unspecified() {
        names.push(listen.ip().to_string());
    } else if let Some(ip) = reachable(listen)
        .rsplit_once(':')
        .map(|(ip, _)| ip.to_owned())
    {
        names.push(ip);
    }
    names.extend(hosts.iter().cloned());
    names
}

/// Says plainly who can open the page.
pub fn who_can_reach(listen: SocketAddr, tls: bool) -> String {
    let ip = listen.ip();
    let how = if tls { "HTTPS" } else { "plain HTTP" };
    if ip.is_loopback() {
        format!(
            "reachable from this machine only ({how} on {listen}); from elsewhere use an SSH \
             tunnel or a reverse proxy (docs/WEB.md)"
        )
    } else if ip.is_unspecified() {
        format!(
            "reachable by anyone on every network this machine is on ({how} on port {}); only \
             paired devices can see or answer anything",
            listen.port()
        )
    } else {
        format!(
            "reachable by anyone who can reach {ip} ({how} on port {}); only paired devices can \
             see or answer anything",
            listen.port()
        )
    }
}

/// The framework's own refusals (a wrong method, a body over the limit, a malformed path)
/// come as plain text; the API answers every error as `{code, message}`.
fn as_json_error(response: Response) -> Response {
    let status = response.status();
    let is_json = response
        .headers()
        .get(axum::http::header::CONTENT_TYPE)
        .is_some_and(|v| v.as_bytes().starts_with(b"application/json"));
    if !(status.is_client_error() || status.is_server_error()) || is_json {
        return response;
    }
    let message = match status {
        StatusCode::METHOD_NOT_ALLOWED => "this API route does not take that method".to_owned(),
        StatusCode::PAYLOAD_TOO_LARGE => {
            format!("the request body is over {} KiB", BODY_LIMIT / 1024)
        }
        StatusCode::NOT_FOUND => "no such API route".to_owned(),
        other => format!(
            "the request was refused: {}",
            other.canonical_reason().unwrap_or("error")
        ),
    };
    let code = if status == StatusCode::NOT_FOUND {
        inbox_app::ErrorCode::NotFound
    } else if status.is_server_error() {
        inbox_app::ErrorCode::Storage
    } else {
        inbox_app::ErrorCode::BadInput
    };
    HttpError::new(status, code, message).into_response()
}
