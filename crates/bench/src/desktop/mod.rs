//! The desktop app (`answer-inbox-desktop`): its memory next to a bare Tauri window, the time
//! from launch to a painted list and from a keystroke in search to the updated list, and the
//! time from a request file landing to its desktop notification, next to the engine's ingest
//! latency. See docs/BENCHMARKS.md, "Desktop app".
//!
//! Everything runs in one private desktop session (Xvfb, a session bus, dunst and a bus
//! monitor, from the `inbox-harness` crate), with homes, XDG directories, spools and
//! databases of its own under `$TMPDIR`, and everything started is stopped by PID.
//! The binaries are the ones next to this one: build them with the same profile first.

mod breakdown;
mod keys;
mod memory;
mod notify;
mod visible;
mod window;

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use anyhow::Context;
use inbox_engine::{Engine, Spool, Store, Wake};
use inbox_harness::desktop::AppDirs;
use inbox_harness::process::{Running, Tree};
use inbox_harness::session::Session;

use crate::fixtures;
use crate::harness::Scratch;

/// Pending requests in the large inbox.
pub const DEFAULT_N: usize = 10_000;
pub use keys::DEFAULT_N as DEFAULT_KEYS_N;
pub use notify::DEFAULT_N as DEFAULT_NOTIFY_N;

/// The operator name the app records.
const USER: &str = "bench";
/// How long the app may take to start and show what it is asked to show.
const START: Duration = Duration::from_secs(120);

/// `inbox-bench desktop [N]`: the three desktop benchmarks, the inbox holding N requests.
pub fn run(n: usize) -> anyhow::Result<()> {
    let bench = DesktopBench::new()?;
    memory::run(&bench, n)?;
    window::run(&bench, n)?;
    notify::run(&bench, notify::DEFAULT_N)
}

pub fn run_memory(n: usize) -> anyhow::Result<()> {
    memory::run(&DesktopBench::new()?, n)
}

pub fn run_window(n: usize) -> anyhow::Result<()> {
    window::run(&DesktopBench::new()?, n)
}

pub fn run_notify(n: usize) -> anyhow::Result<()> {
    notify::run(&DesktopBench::new()?, n)
}

/// `desktop-visible [N]`: request placed → row in the window, on 10 and on N pending.
pub fn run_visible(n: usize) -> anyhow::Result<()> {
    visible::run(&DesktopBench::new()?, visible::DEFAULT_PROBES, n)
}

/// `desktop-keys [N]`: keys from the Pending list to a written outcome, and last key →
/// outcome, N repetitions per row (issue 24).
pub fn run_keys(n: usize) -> anyhow::Result<()> {
    keys::run(&DesktopBench::new()?, n)
}

/// `desktop-memory-breakdown [N]`: the app's PSS with N pending by process and mapping,
/// and under variants of its environment.
pub fn run_breakdown(n: usize) -> anyhow::Result<()> {
    breakdown::run(&DesktopBench::new()?, n)
}

/// The built binaries and the private session every desktop benchmark runs in.
pub struct DesktopBench {
    pub app: PathBuf,
    pub bare: PathBuf,
    pub session: Session,
    /// Holds the session's files (bus log, dunst's configuration); removed at the end.
    _session_dir: Scratch,
}

impl DesktopBench {
    fn new() -> anyhow::Result<DesktopBench> {
        let exe = std::env::current_exe()?;
        let dir = exe.parent().context("no directory around this binary")?;
        let find = |name: &str| -> anyhow::Result<PathBuf> {
            let path = dir.join(name);
            anyhow::ensure!(
                path.is_file(),
                "{} is missing: run `scripts/ui` and `cargo build --release -p \
                 answer-inbox-desktop -p inbox-bare-window` first (the same profile as this \
                 benchmark)",
                path.display()
            );
            Ok(path)
        };
        let (app, bare) = (find("answer-inbox-desktop")?, find("inbox-bare-window")?);
        let session_dir = Scratch::new("desktop-session")?;
        eprintln!("desktop: starting Xvfb, a session bus and dunst");
        let session = Session::start(session_dir.dir.path(), true);
        let bench = DesktopBench {
            app,
            bare,
            session,
            _session_dir: session_dir,
        };
        bench.describe();
        Ok(bench)
    }

    /// What the figures depend on besides the machine: the binaries and WebKitGTK.
    fn describe(&self) {
        let about = |path: &Path| {
            let meta = std::fs::metadata(path).ok();
            let size = meta.as_ref().map_or(0, |m| m.len());
            let built = meta
                .and_then(|m| m.modified().ok())
                .map(|t| chrono::DateTime::<chrono::Utc>::from(t).format("%Y-%m-%d %H:%M UTC"))
                .map_or_else(|| "?".to_owned(), |t| t.to_string());
            format!(
                "`{}` ({:.1} MiB, built {built})",
                path.display(),
                size as f64 / 1048576.0
            )
        };
        let webkit = Command::new("dpkg-query")
            .args(["-W", "-f", "${Version}", "libwebkit2gtk-4.1-0"])
            .output()
            .ok()
            .filter(|o| o.status.success())
            .map(|o| String::from_utf8_lossy(&o.stdout).into_owned())
            .unwrap_or_else(|| "unknown".into());
        println!("- desktop app: {}", about(&self.app));
        println!("- bare window: {}", about(&self.bare));
        println!(
            "- WebKitGTK {webkit}; Xvfb 1280x800x24 without a window manager; dunst as the \
             notification daemon; a private session bus"
        );
        println!();
    }

    /// Starts `binary` directly (no WebDriver) in the session, with its own home and XDG
    /// directories and the inbox `inbox`.
    fn launch(&self, binary: &Path, inbox: &Inbox, label: &str) -> anyhow::Result<Launched> {
        self.launch_with(binary, inbox, label, &[])
    }

    /// [`DesktopBench::launch`], with `env` added to the app's environment (and so to
    /// WebKit's processes, which inherit it).
    fn launch_with(
        &self,
        binary: &Path,
        inbox: &Inbox,
        label: &str,
        env: &[(&str, &str)],
    ) -> anyhow::Result<Launched> {
        let scratch = Scratch::new(label)?;
        let dirs = AppDirs::create(scratch.dir.path());
        let log = dirs.logs().join("app.log");
        let mut cmd = self.session.command(binary);
        dirs.apply(&mut cmd, &inbox.spool, &inbox.db, USER);
        cmd.envs(env.iter().copied());
        let out = std::fs::File::create(&log)?;
        cmd.stdout(out.try_clone()?).stderr(out);
        let child = cmd
            .spawn()
            .with_context(|| format!("start {}", binary.display()))?;
        Ok(Launched {
            started: Instant::now(),
            running: Running::adopt(child),
            tree: Tree::default(),
            log,
            _scratch: scratch,
        })
    }

    /// Whether a window titled exactly `title` is mapped on the display.
    fn window_titled(&self, title: &str) -> bool {
        let pattern = format!("^{}$", regex_escape(title));
        self.session
            .command("xdotool")
            .args(["search", "--onlyvisible", "--name", &pattern])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .is_ok_and(|status| status.success())
    }

    /// Waits until a window titled `title` is shown by `launched`.
    fn wait_title(&self, launched: &mut Launched, title: &str) -> anyhow::Result<Duration> {
        loop {
            if self.window_titled(title) {
                return Ok(launched.started.elapsed());
            }
            launched.check_running()?;
            anyhow::ensure!(
                launched.started.elapsed() < START,
                "no window titled {title:?} within {START:?}; the log:\n{}",
                launched.log_tail()
            );
            std::thread::sleep(Duration::from_millis(100));
        }
    }
}

/// One app started directly; stopped (SIGTERM, then its remaining tree) when dropped.
struct Launched {
    started: Instant,
    running: Running,
    tree: Tree,
    log: PathBuf,
    _scratch: Scratch,
}

impl Launched {
    fn pid(&self) -> u32 {
        self.running.child.id()
    }

    fn check_running(&mut self) -> anyhow::Result<()> {
        if let Ok(Some(status)) = self.running.child.try_wait() {
            anyhow::bail!("the app exited ({status}); its log:\n{}", self.log_tail());
        }
        Ok(())
    }

    fn log_tail(&self) -> String {
        let text = std::fs::read_to_string(&self.log).unwrap_or_default();
        let lines: Vec<&str> = text.lines().collect();
        lines[lines.len().saturating_sub(30)..].join("\n")
    }
}

impl Drop for Launched {
    fn drop(&mut self) {
        self.tree.remember(self.pid());
        self.running.stop();
        // WebKit's helpers end with their parent; whatever did not is stopped here.
        self.tree.terminate(Duration::from_secs(5));
    }
}

/// A spool and database for the app. With requests, they are already known to the
/// database and announced, as after a restart of an app that had them pending, so that
/// every launch on it starts from the same state.
pub struct Inbox {
    pub spool: PathBuf,
    pub db: PathBuf,
    _scratch: Scratch,
}

impl Inbox {
    pub fn with_pending(n: usize) -> anyhow::Result<Inbox> {
        let scratch = Scratch::new(&format!("desktop-inbox-{n}"))?;
        let (spool, db) = (scratch.spool_dir(), scratch.db());
        let mut engine = Engine::new(Spool::open(&spool)?, Store::open(&db)?)?;
        for i in 0..n {
            let id = fixtures::id("desk", i);
            let path = engine.spool().path(inbox_engine::Area::Questions, &id);
            std::fs::write(path, fixtures::varied_request(&id, i))?;
        }
        if n > 0 {
            let started = Instant::now();
            engine.turn(Wake::Rescan)?;
            let pending = engine.queries().pending_count()?;
            anyhow::ensure!(pending == n, "{pending} of {n} requests became pending");
            eprintln!(
                "desktop: {n} pending requests prepared in {:.1} s",
                started.elapsed().as_secs_f64()
            );
        }
        Ok(Inbox {
            spool,
            db,
            _scratch: scratch,
        })
    }
}

/// The window title the app shows for `pending` requests.
fn app_title(pending: usize) -> String {
    if pending > 0 {
        format!("Answer Inbox ({pending})")
    } else {
        "Answer Inbox".to_owned()
    }
}

fn regex_escape(text: &str) -> String {
    text.chars()
        .flat_map(|c| {
            let special = "\\^$.|?*+()[]{}".contains(c);
            special.then_some('\\').into_iter().chain([c])
        })
        .collect()
}

/// Milliseconds since the Unix epoch: the clock the page's `performance.timeOrigin` and
/// dbus-monitor's stamps use.
fn epoch_ms() -> f64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0.0, |d| d.as_secs_f64() * 1e3)
}

/// Milliseconds as a Duration (negative values, from clock steps, become zero).
fn from_ms(ms: f64) -> Duration {
    Duration::from_secs_f64(ms.max(0.0) / 1e3)
}

/// "p50 / p95 / max" of `samples`, each in ms.
fn p50_p95_max(samples: &[Duration]) -> [Duration; 3] {
    let mut sorted = samples.to_vec();
    sorted.sort_unstable();
    [
        crate::stats::percentile(&sorted, 50.0),
        crate::stats::percentile(&sorted, 95.0),
        sorted[sorted.len() - 1],
    ]
}
