//! "Answer from other devices" in the desktop app: the same server `answer-inbox serve`
//! runs, started, restarted and stopped as the Settings say, over the app's own inbox
//! (looked up per request, so a switch of spool is followed), with pushes to ntfy put into
//! the inbox's notifier slot. The Settings view's state comes from here.

use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use chrono::Utc;
use inbox_app::{IpcError, RemoteSettings};
use inbox_engine::notifier::NotifierSlot;
use inbox_notifications::ntfy::{NtfyConfig, NtfyPublisher};

use crate::devices::{Device, DeviceError, DeviceStore};
use crate::events::EventFeed;
use crate::server::{certificate_names, InboxSource, ServeOptions, WebServer, PAIRING_TTL};
use crate::views::{DeviceView, PairingView, RemoteView};

/// The app's server, or why it is not running.
pub struct Remote {
    inbox: InboxSource,
    feed: EventFeed,
    pushes: NotifierSlot,
    /// Where the device store and the certificate live (beside the database).
    state_dir: PathBuf,
    devices: Mutex<Option<Arc<DeviceStore>>>,
    state: Mutex<State>,
}

#[derive(Default)]
struct State {
    applied: Option<RemoteSettings>,
    server: Option<WebServer>,
    problem: Option<String>,
    ntfy: Option<String>,
}

impl Remote {
    /// Nothing runs until [`Remote::apply`] is given settings that switch it on.
    pub fn new(
        inbox: InboxSource,
        feed: EventFeed,
        pushes: NotifierSlot,
        state_dir: PathBuf,
    ) -> Remote {
        Remote {
            inbox,
            feed,
            pushes,
            state_dir,
            devices: Mutex::new(None),
            state: Mutex::new(State::default()),
        }
    }

    fn devices(&self) -> Result<Arc<DeviceStore>, IpcError> {
        let mut devices = self.devices.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(store) = devices.as_ref() {
            return Ok(Arc::clone(store));
        }
        let store =
            Arc::new(DeviceStore::open(&self.state_dir.join("devices.sqlite3")).map_err(storage)?);
        *devices = Some(Arc::clone(&store));
        Ok(store)
    }

    /// Starts, restarts or stops the server and the pushes for `settings`; unchanged
    /// settings leave a running server alone. A server that cannot start is reported in
    /// the view (`problem`), not as an error: the settings are the operator's either way.
    pub fn apply(&self, settings: &RemoteSettings) -> RemoteView {
        let mut state = self.state.lock().unwrap_or_else(|p| p.into_inner());
        if state.applied.as_ref() == Some(settings) {
            drop(state);
            return self.view();
        }
        // Stop first: a restart on the same port must find it free.
        if let Some(server) = state.server.take() {
            server.stop();
        }
        self.pushes.set(None);
        state.problem = None;
        state.ntfy = None;
        state.applied = Some(settings.clone());
        if settings.enabled {
            match self.start(settings) {
                Ok((server, ntfy)) => {
                    state.server = Some(server);
                    state.ntfy = ntfy;
                }
                Err(problem) => {
                    tracing::warn!("answering from other devices is off: {problem}");
                    state.problem = Some(problem);
                }
            }
        }
        drop(state);
        self.view()
    }

    fn start(&self, settings: &RemoteSettings) -> Result<(WebServer, Option<String>), String> {
        let listen = settings
            .listen
            .parse()
            .map_err(|_| format!("\"{}\" is not ADDR:PORT", settings.listen))?;
        let devices = self.devices().map_err(|e| e.message)?;
        // The app always serves TLS off loopback; on loopback plain HTTP is for a tunnel.
        let tls = if std::net::SocketAddr::ip(&listen).is_loopback() {
            None
        } else {
            Some(
                crate::tls::load_or_make(&self.state_dir, &certificate_names(listen, &[]))
                    .map_err(|e| e.to_string())?,
            )
        };
        let options = ServeOptions {
            listen,
            tls,
            hosts: Vec::new(),
            public_url: None,
        };
        let listening = WebServer::bind(options, devices).map_err(|e| e.to_string())?;
        let mut ntfy = None;
        if !settings.ntfy_topic.is_empty() {
            let token = Some(settings.ntfy_token.clone()).filter(|t| !t.is_empty());
            let config = NtfyConfig::parse(&settings.ntfy_topic, token, settings.ntfy_titles_only)
                .map_err(|e| e.to_string())?;
            ntfy = Some(format!(
                "topic {} on {}",
                config.topic(),
                config.server_url()
            ));
            let publisher =
                NtfyPublisher::start(config, listening.links()).map_err(|e| e.to_string())?;
            self.pushes.set(Some(Box::new(publisher)));
        }
        let server = listening
            .serve(Arc::clone(&self.inbox), self.feed.clone())
            .map_err(|e| e.to_string())?;
        Ok((server, ntfy))
    }

    /// The state for the Settings view.
    pub fn view(&self) -> RemoteView {
        let state = self.state.lock().unwrap_or_else(|p| p.into_inner());
        let devices = self
            .devices()
            .and_then(|store| store.list().map_err(storage))
            .map(|list| list.iter().map(device_view).collect())
            .unwrap_or_default();
        RemoteView {
            running: state.server.is_some(),
            url: state.server.as_ref().map(|s| s.url().to_owned()),
            reach: state.server.as_ref().map(WebServer::who_can_reach),
            fingerprint: state
                .server
                .as_ref()
                .and_then(|s| s.fingerprint().map(str::to_owned)),
            problem: state.problem.clone(),
            ntfy: state.ntfy.clone(),
            devices,
        }
    }

    /// A pairing link for one more device, with its QR code.
    pub fn pair(&self) -> Result<PairingView, IpcError> {
        let state = self.state.lock().unwrap_or_else(|p| p.into_inner());
        let Some(server) = state.server.as_ref() else {
            return Err(IpcError::bad_input(
                "answering from other devices is off: switch it on in Settings first",
            ));
        };
        let link = server.pairing_link().map_err(storage)?;
        let qr_svg = crate::qr::svg(&link).unwrap_or_default();
        let expires = Utc::now()
            + chrono::Duration::from_std(PAIRING_TTL).unwrap_or(chrono::Duration::minutes(10));
        Ok(PairingView {
            link,
            qr_svg,
            expires_at: expires.to_rfc3339(),
        })
    }

    pub fn rename_device(&self, id: &str, name: &str) -> Result<RemoteView, IpcError> {
        self.devices()?.rename(id, name).map_err(storage)?;
        Ok(self.view())
    }

    /// Revokes a device: its browser can do nothing more from its next request on.
    pub fn revoke_device(&self, id: &str) -> Result<RemoteView, IpcError> {
        self.devices()?.revoke(id, Utc::now()).map_err(storage)?;
        Ok(self.view())
    }
}

fn device_view(device: &Device) -> DeviceView {
    let at = |t: chrono::DateTime<Utc>| t.to_rfc3339();
    DeviceView {
        id: device.id.clone(),
        name: device.name.clone(),
        paired_at: at(device.created_at),
        last_seen_at: device.last_seen_at.map(at),
        revoked_at: device.revoked_at.map(at),
    }
}

fn storage(error: DeviceError) -> IpcError {
    match error {
        DeviceError::BadName(why) => IpcError::bad_input(why),
        DeviceError::UnknownDevice(_) => {
            IpcError::new(inbox_app::ErrorCode::NotFound, error.to_string())
        }
        other => IpcError::new(inbox_app::ErrorCode::Storage, other.to_string()),
    }
}
