//! The desktop app's surroundings: home and XDG directories of its own ([`AppDirs`]), and
//! tauri-driver, which starts the app for a WebDriver session ([`Driver`]). Used by the
//! end-to-end tests (tests/tests/util/desktop.rs) and by `inbox-bench desktop`. Opening a
//! WebDriver session ([`open_session`]) is shared with the served page's tests, over
//! chromedriver (tests/tests/util/browser.rs).

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use fantoccini::wd::Capabilities;
use fantoccini::{Client, ClientBuilder};
use serde_json::json;

use crate::process::Tree;
use crate::session::Session;

/// A home and XDG directories under one root, so that runs share no settings, caches or
/// WebKit state with each other or with the machine's user.
pub struct AppDirs {
    root: PathBuf,
}

impl AppDirs {
    /// Creates `home`, `config`, `data`, `cache`, `runtime` and `logs` under `root`.
    pub fn create(root: &Path) -> AppDirs {
        for dir in ["home", "config", "data", "cache", "runtime", "logs"] {
            std::fs::create_dir_all(root.join(dir)).unwrap();
        }
        // XDG requires the runtime directory to be its owner's alone; GLib warns otherwise.
        crate::set_mode(&root.join("runtime"), 0o700);
        AppDirs {
            root: root.to_owned(),
        }
    }

    pub fn root(&self) -> &Path {
        &self.root
    }

    /// Where logs of the processes started for this root go.
    pub fn logs(&self) -> PathBuf {
        self.root.join("logs")
    }

    /// The app's settings file under these dirs.
    pub fn settings_path(&self) -> PathBuf {
        self.root.join("config/answer-inbox/settings.json")
    }

    /// Gives `cmd` (the app, or tauri-driver, which passes its environment on to the app)
    /// these directories, the inbox at `spool` and `db`, and `user` as the operator's name.
    pub fn apply(&self, cmd: &mut Command, spool: &Path, db: &Path, user: &str) {
        let root = &self.root;
        cmd.env("HOME", root.join("home"))
            .env("XDG_CONFIG_HOME", root.join("config"))
            .env("XDG_DATA_HOME", root.join("data"))
            .env("XDG_CACHE_HOME", root.join("cache"))
            .env("XDG_RUNTIME_DIR", root.join("runtime"))
            .env("USER", user)
            .env("LOGNAME", user)
            .env("ANSWER_INBOX_DIR", spool)
            .env("ANSWER_INBOX_DB", db)
            .env("RUST_LOG", "info,rusqlite_migration=warn")
            .stdin(Stdio::null());
    }
}

/// `tauri-driver` on PATH, in `$CARGO_HOME/bin` or in `~/.cargo/bin`.
pub fn tauri_driver() -> PathBuf {
    let mut candidates: Vec<PathBuf> = std::env::var_os("PATH")
        .map(|path| std::env::split_paths(&path).collect())
        .unwrap_or_default();
    if let Some(cargo_home) = std::env::var_os("CARGO_HOME") {
        candidates.push(PathBuf::from(cargo_home).join("bin"));
    }
    if let Some(home) = std::env::var_os("HOME") {
        candidates.push(PathBuf::from(home).join(".cargo/bin"));
    }
    candidates
        .into_iter()
        .map(|dir| dir.join("tauri-driver"))
        .find(|path| path.is_file())
        .expect("tauri-driver is not installed: `cargo install tauri-driver --locked`")
}

/// A TCP port nobody listens on right now.
pub fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// Opens a WebDriver session with `capabilities` at `url`, where a driver (tauri-driver,
/// chromedriver) is starting, retrying every `every` until `timeout`. `exited` says why the
/// driver is gone, if it is: then retrying is pointless. The error says why the last attempt
/// failed.
pub async fn open_session(
    url: &str,
    capabilities: &Capabilities,
    timeout: Duration,
    every: Duration,
    mut exited: impl FnMut() -> Option<String>,
) -> Result<Client, String> {
    let deadline = Instant::now() + timeout;
    loop {
        let attempt = ClientBuilder::new(hyper_util::client::legacy::connect::HttpConnector::new())
            .capabilities(capabilities.clone())
            .connect(url)
            .await;
        let error = match attempt {
            Ok(client) => return Ok(client),
            Err(error) => error,
        };
        if let Some(exited) = exited() {
            return Err(format!("{exited} before a session opened: {error}"));
        }
        if Instant::now() > deadline {
            return Err(format!("no WebDriver session within {timeout:?}: {error}"));
        }
        tokio::time::sleep(every).await;
    }
}

/// tauri-driver in a private session. Dropping it stops tauri-driver with SIGTERM (which
/// stops WebKitWebDriver; SIGKILL would orphan it), then whatever of its process tree (the
/// app, WebKit's helpers) is still running.
pub struct Driver {
    child: Option<Child>,
    port: u16,
    tree: Tree,
}

impl Driver {
    /// Starts tauri-driver on free ports inside `session`, with Debian's WebKitWebDriver
    /// when it is there, its output going to `log`. `configure` adds what the app needs
    /// (see [`AppDirs::apply`]): tauri-driver's environment is the app's.
    pub fn start(session: &Session, log: &Path, configure: impl FnOnce(&mut Command)) -> Driver {
        let (port, native_port) = (free_port(), free_port());
        let log = std::fs::File::create(log).unwrap();
        let mut cmd = session.command(tauri_driver());
        cmd.args([
            "--port",
            &port.to_string(),
            "--native-port",
            &native_port.to_string(),
        ]);
        if Path::new("/usr/bin/WebKitWebDriver").exists() {
            cmd.args(["--native-driver", "/usr/bin/WebKitWebDriver"]);
        }
        configure(&mut cmd);
        cmd.stdout(log.try_clone().unwrap()).stderr(log);
        Driver {
            child: Some(cmd.spawn().expect("start tauri-driver")),
            port,
            tree: Tree::default(),
        }
    }

    pub fn url(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    /// Why tauri-driver is no longer running, if it is not.
    pub fn exited(&mut self) -> Option<String> {
        let child = self.child.as_mut()?;
        match child.try_wait() {
            Ok(Some(status)) => Some(format!("tauri-driver exited ({status})")),
            _ => None,
        }
    }

    /// Waits until tauri-driver accepts connections, so that the session request that
    /// follows is answered at once rather than retried.
    pub async fn wait_listening(&mut self, timeout: Duration) -> Result<(), String> {
        let deadline = Instant::now() + timeout;
        while std::net::TcpStream::connect(("127.0.0.1", self.port)).is_err() {
            if let Some(exited) = self.exited() {
                return Err(exited);
            }
            if Instant::now() > deadline {
                return Err(format!("tauri-driver not listening within {timeout:?}"));
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        Ok(())
    }

    /// Opens a WebDriver session for `application`, which tauri-driver starts, retrying
    /// until `timeout`; the error says why the last attempt failed.
    pub async fn connect(
        &mut self,
        application: &Path,
        timeout: Duration,
    ) -> Result<Client, String> {
        let mut capabilities = Capabilities::new();
        capabilities.insert(
            "tauri:options".into(),
            json!({ "application": application.display().to_string() }),
        );
        capabilities.insert("browserName".into(), json!("wry"));
        let url = self.url();
        let every = Duration::from_millis(200);
        let client = open_session(&url, &capabilities, timeout, every, || self.exited()).await?;
        self.remember_tree();
        Ok(client)
    }

    /// Notes tauri-driver's process tree as it is now (WebKitWebDriver, the app, WebKit's
    /// helpers), so that what outlives tauri-driver can be stopped.
    pub fn remember_tree(&mut self) {
        if let Some(child) = &self.child {
            self.tree.remember(child.id());
        }
    }

    /// SIGTERM, and a long wait; SIGKILL only as a last resort. Then the rest of the tree.
    pub fn stop(&mut self) {
        self.remember_tree();
        if let Some(mut driver) = self.child.take() {
            stop_driver(&mut driver);
        }
        self.tree.terminate(Duration::from_secs(5));
    }
}

impl Drop for Driver {
    fn drop(&mut self) {
        self.stop();
    }
}

fn stop_driver(driver: &mut Child) {
    if let Ok(Some(_)) = driver.try_wait() {
        return;
    }
    let _ = Command::new("kill")
        .args(["-TERM", &driver.id().to_string()])
        .status();
    let deadline = Instant::now() + Duration::from_secs(20);
    while Instant::now() < deadline {
        if let Ok(Some(_)) = driver.try_wait() {
            return;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    eprintln!("tauri-driver ignored SIGTERM for 20 s; killing it");
    let _ = driver.kill();
    let _ = driver.wait();
}
