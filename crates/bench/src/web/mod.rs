//! Issue 14, the web page: `answer-inbox serve` (the binary next to this one) as a black
//! box, paired and used through its API the way the page uses it. See docs/BENCHMARKS.md,
//! "Issue 14: the web page".
//!
//! - [`live`]: a request placed → its `changed` event on an open page's stream, and → the
//!   page's `list_pending` refetch holding it, next to the engine's ingest.
//! - [`idle`]: the server's resident memory with 0, N and 2N idle pages connected.
//!
//! Here: starting the server on a free loopback port in a home of its own, pairing one
//! device through `POST /api/pair`, the device's API calls, and its event streams read raw
//! (`GET /api/events`, the lines as they arrive).

mod idle;
mod live;

use std::fs::File;
use std::io::{BufRead, BufReader, Read};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{bail, Context};
use crossbeam_channel::{Receiver, RecvTimeoutError};
use inbox_harness::desktop::AppDirs;
use inbox_harness::process::Running;
use serde_json::{json, Value};

use crate::harness::{Scratch, PATIENCE};

pub use idle::{run as run_idle, DEFAULT_N as DEFAULT_IDLE_N};
pub use live::{run as run_live, DEFAULT_N as DEFAULT_LIVE_N};

/// The operator name the server runs as.
const USER: &str = "bench";
/// How long the server may take to print its pairing link.
const START: Duration = Duration::from_secs(30);

/// `answer-inbox` next to this binary.
fn answer_inbox() -> anyhow::Result<PathBuf> {
    let exe = std::env::current_exe()?;
    let path = exe
        .parent()
        .context("no directory around this binary")?
        .join("answer-inbox");
    anyhow::ensure!(
        path.is_file(),
        "{} is missing: run `cargo build --release -p answer-inbox` first (the same profile \
         as this benchmark)",
        path.display()
    );
    Ok(path)
}

/// `answer-inbox serve --listen 127.0.0.1:0 --no-notify` on `spool` and `db`, its standard
/// output read line by line, each line stamped when this process read it. Stopped
/// (SIGTERM) when dropped.
pub struct Served {
    running: Running,
    /// `http://127.0.0.1:PORT`, from the pairing link; also the page's Origin.
    pub base: String,
    /// The pairing code of the link printed at start.
    code: String,
    lines: Receiver<(Instant, String)>,
    stderr: PathBuf,
    _dirs: Scratch,
}

impl Served {
    pub fn start(spool: &Path, db: &Path, label: &str) -> anyhow::Result<Served> {
        let binary = answer_inbox()?;
        let dirs = Scratch::new(label)?;
        let app_dirs = AppDirs::create(dirs.dir.path());
        let stderr = app_dirs.logs().join("serve.err");
        let mut cmd = Command::new(&binary);
        cmd.args(["serve", "--listen", "127.0.0.1:0", "--no-notify"]);
        app_dirs.apply(&mut cmd, spool, db, USER);
        // Nothing of the machine's own inbox, nothing pushed anywhere, no desktop session;
        // warnings only, so the server's figures do not include writing its log.
        for name in [
            "ANSWER_INBOX_POLICY",
            "ANSWER_INBOX_TEAM",
            "ANSWER_INBOX_NTFY",
            "ANSWER_INBOX_NTFY_TOKEN",
            "DBUS_SESSION_BUS_ADDRESS",
            "DISPLAY",
        ] {
            cmd.env_remove(name);
        }
        cmd.env("RUST_LOG", "warn")
            .stdout(Stdio::piped())
            .stderr(File::create(&stderr)?);
        let mut child = cmd
            .spawn()
            .with_context(|| format!("start {} serve", binary.display()))?;
        let stdout = child.stdout.take().context("serve's standard output")?;
        let running = Running::adopt(child);
        let (tx, lines) = crossbeam_channel::unbounded();
        std::thread::Builder::new()
            .name("serve-stdout".into())
            .spawn(move || {
                for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                    if tx.send((Instant::now(), line)).is_err() {
                        break;
                    }
                }
            })?;
        let mut served = Served {
            running,
            base: String::new(),
            code: String::new(),
            lines,
            stderr,
            _dirs: dirs,
        };
        let (_, link) = served.line_starting("open: ", Instant::now() + START)?;
        let (base, code) = pairing_link(&link)?;
        (served.base, served.code) = (base, code);
        Ok(served)
    }

    pub fn pid(&self) -> u32 {
        self.running.child.id()
    }

    /// Fails if the server has exited, with its standard error.
    pub fn check_running(&mut self) -> anyhow::Result<()> {
        if let Ok(Some(status)) = self.running.child.try_wait() {
            bail!(
                "answer-inbox serve exited ({status}); its standard error:\n{}",
                std::fs::read_to_string(&self.stderr).unwrap_or_default()
            );
        }
        Ok(())
    }

    /// The next standard output line starting with `prefix` (others are dropped), with
    /// when it was read; the rest of the line.
    pub fn line_starting(
        &mut self,
        prefix: &str,
        deadline: Instant,
    ) -> anyhow::Result<(Instant, String)> {
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match self
                .lines
                .recv_timeout(Duration::from_millis(200).min(left))
            {
                Ok((at, line)) => {
                    if let Some(rest) = line.strip_prefix(prefix) {
                        return Ok((at, rest.to_owned()));
                    }
                }
                Err(RecvTimeoutError::Timeout) => {
                    self.check_running()?;
                    anyhow::ensure!(
                        Instant::now() < deadline,
                        "answer-inbox serve printed no {prefix:?} line in time"
                    );
                }
                Err(RecvTimeoutError::Disconnected) => {
                    self.check_running()?;
                    bail!("answer-inbox serve closed its standard output before {prefix:?}");
                }
            }
        }
    }

    /// Drops the standard output lines read so far.
    pub fn drain_lines(&self) {
        while self.lines.try_recv().is_ok() {}
    }

    /// Pairs a device with the code of the link printed at start (once).
    pub fn pair(&self) -> anyhow::Result<Device> {
        let agent = api_agent();
        let mut response = agent
            .post(format!("{}/api/pair", self.base))
            .header("Origin", &self.base)
            .send_json(json!({"code": self.code, "name": "inbox-bench"}))
            .context("POST /api/pair")?;
        let status = response.status();
        let cookie = response
            .headers()
            .get_all("set-cookie")
            .iter()
            .filter_map(|v| v.to_str().ok())
            .find_map(device_cookie);
        let body: Value = response
            .body_mut()
            .read_json()
            .context("the answer to POST /api/pair")?;
        anyhow::ensure!(status == 200, "pairing was refused ({status}): {body}");
        let cookie = cookie.context("no inbox_device cookie in the pairing answer")?;
        let csrf = body["csrf"]
            .as_str()
            .with_context(|| format!("no csrf in the pairing answer: {body}"))?
            .to_owned();
        Ok(Device {
            base: self.base.clone(),
            cookie,
            csrf,
            agent,
            streams: stream_agent(),
        })
    }
}

/// `http://127.0.0.1:PORT` and the code, from `http://127.0.0.1:PORT/#pair=CODE`.
fn pairing_link(link: &str) -> anyhow::Result<(String, String)> {
    let (base, code) = link
        .trim()
        .split_once("/#pair=")
        .with_context(|| format!("not a pairing link: {link:?}"))?;
    anyhow::ensure!(
        base.starts_with("http://") && !code.is_empty() && !code.contains('&'),
        "not a plain-HTTP pairing link: {link:?}"
    );
    Ok((base.to_owned(), code.to_owned()))
}

/// `inbox_device=TOKEN` from a Set-Cookie header that sets it.
fn device_cookie(set_cookie: &str) -> Option<String> {
    let pair = set_cookie.split(';').next()?.trim();
    let token = pair.strip_prefix("inbox_device=")?;
    (!token.is_empty()).then(|| pair.to_owned())
}

/// For the API's calls: a connection kept alive between them, as a browser keeps one, and
/// error statuses returned as answers so their message can be shown.
fn api_agent() -> ureq::Agent {
    ureq::Agent::config_builder()
        .http_status_as_error(false)
        .timeout_global(Some(PATIENCE))
        .build()
        .new_agent()
}

/// For event streams: no limit on reading the body, which lasts as long as the page.
fn stream_agent() -> ureq::Agent {
    ureq::Agent::config_builder()
        .http_status_as_error(false)
        .timeout_connect(Some(PATIENCE))
        .timeout_recv_response(Some(PATIENCE))
        .build()
        .new_agent()
}

/// A paired device: its cookie and CSRF token.
pub struct Device {
    base: String,
    cookie: String,
    csrf: String,
    agent: ureq::Agent,
    streams: ureq::Agent,
}

impl Device {
    /// `POST /api/<command>` with `args`, as the page sends it (cookie, Origin, CSRF
    /// token); the JSON it returns.
    pub fn command(&self, command: &str, args: Value) -> anyhow::Result<Value> {
        let mut response = self
            .agent
            .post(format!("{}/api/{command}", self.base))
            .header("Origin", &self.base)
            .header("Cookie", &self.cookie)
            .header("X-Inbox-CSRF", &self.csrf)
            .send_json(args)
            .with_context(|| format!("POST /api/{command}"))?;
        let status = response.status();
        let body: Value = response
            .body_mut()
            .with_config()
            .limit(64 * 1024 * 1024)
            .read_json()
            .with_context(|| format!("the answer to POST /api/{command}"))?;
        anyhow::ensure!(status == 200, "{command} failed ({status}): {body}");
        Ok(body)
    }

    /// `list_pending`: the ids of the rows.
    pub fn list_pending(&self) -> anyhow::Result<Vec<String>> {
        let body = self.command("list_pending", json!({}))?;
        let rows = body
            .as_array()
            .with_context(|| format!("list_pending did not return a list: {body}"))?;
        Ok(rows
            .iter()
            .filter_map(|row| row["id"].as_str().map(str::to_owned))
            .collect())
    }

    /// Declines `id` from the page, as the operator would: `open_request` for the version
    /// shown, then `decline_request` bound to it.
    pub fn decline(&self, id: &str) -> anyhow::Result<()> {
        let request = self.command("open_request", json!({ "id": id }))?;
        let version = request["version"]
            .as_str()
            .with_context(|| format!("no version in open_request's answer: {request}"))?;
        self.command(
            "decline_request",
            json!({ "id": id, "reason": "benchmark probe", "version": version }),
        )?;
        Ok(())
    }

    /// Opens the page's event stream (`GET /api/events`); returns once the server has
    /// answered with its headers, which it does after subscribing the page to the feed.
    pub fn open_page(&self) -> anyhow::Result<Page> {
        let response = self
            .streams
            .get(format!("{}/api/events", self.base))
            .header("Cookie", &self.cookie)
            .header("Accept", "text/event-stream")
            .call()
            .context("GET /api/events")?;
        let status = response.status();
        let kind = response
            .headers()
            .get("content-type")
            .and_then(|v| v.to_str().ok())
            .unwrap_or_default()
            .to_owned();
        anyhow::ensure!(
            status == 200 && kind.starts_with("text/event-stream"),
            "GET /api/events answered {status} ({kind})"
        );
        Ok(Page {
            lines: BufReader::new(Box::new(response.into_body().into_reader())),
            parser: SseParser::default(),
        })
    }
}

/// An open page: its event stream, read as it arrives.
pub struct Page {
    lines: BufReader<Box<dyn Read + Send>>,
    parser: SseParser,
}

impl Page {
    /// Blocks until the next event on the stream (keep-alive comments are skipped).
    pub fn next_event(&mut self) -> anyhow::Result<SseEvent> {
        let mut line = String::new();
        loop {
            line.clear();
            let read = self
                .lines
                .read_line(&mut line)
                .context("reading the event stream")?;
            anyhow::ensure!(read > 0, "the server closed the event stream");
            if let Some(event) = self
                .parser
                .line(line.trim_end_matches(['\r', '\n']), Instant::now())
            {
                return Ok(event);
            }
        }
    }

    /// Reads the stream on a thread of its own, which sends every event (stamped when its
    /// first line arrived) until the stream ends or the receiver is dropped.
    pub fn listen(mut self) -> anyhow::Result<Receiver<SseEvent>> {
        let (tx, events) = crossbeam_channel::unbounded();
        std::thread::Builder::new()
            .name("page-events".into())
            .spawn(move || {
                while let Ok(event) = self.next_event() {
                    if tx.send(event).is_err() {
                        break;
                    }
                }
            })?;
        Ok(events)
    }
}

/// One server-sent event.
#[derive(Debug, Clone)]
pub struct SseEvent {
    /// When its first line (`event: ...`) was read.
    pub at: Instant,
    /// The `event:` field (`inbox` for the inbox's).
    pub name: String,
    /// The `data:` lines, joined.
    pub data: String,
}

impl SseEvent {
    /// The inbox event's `kind` (`changed`, `settled`, ...), if it is one.
    pub fn kind(&self) -> Option<String> {
        if self.name != "inbox" {
            return None;
        }
        let value: Value = serde_json::from_str(&self.data).ok()?;
        value["kind"].as_str().map(str::to_owned)
    }

    /// The `id` an inbox event is about (`settled`, `cancelled`).
    pub fn id(&self) -> Option<String> {
        let value: Value = serde_json::from_str(&self.data).ok()?;
        value["id"].as_str().map(str::to_owned)
    }
}

/// The event-stream format, line by line: fields up to a blank line make an event;
/// lines starting with `:` are comments (the server's keep-alives).
#[derive(Default)]
struct SseParser {
    started: Option<Instant>,
    name: String,
    data: Vec<String>,
}

impl SseParser {
    fn line(&mut self, line: &str, at: Instant) -> Option<SseEvent> {
        if line.is_empty() {
            let started = self.started.take()?;
            return Some(SseEvent {
                at: started,
                name: std::mem::take(&mut self.name),
                data: std::mem::take(&mut self.data).join("\n"),
            });
        }
        if line.starts_with(':') {
            return None;
        }
        let (field, value) = line.split_once(':').unwrap_or((line, ""));
        let value = value.strip_prefix(' ').unwrap_or(value);
        match field {
            "event" => self.name = value.to_owned(),
            "data" => self.data.push(value.to_owned()),
            // `id`, `retry`: nothing the benchmark needs.
            _ => {}
        }
        self.started.get_or_insert(at);
        None
    }
}

/// Memory (KiB) and threads of a process, from `/proc/PID/status`, and its open file
/// descriptors (each page's connection is one).
#[derive(Debug, Clone, Copy, Default)]
pub struct ProcessStatus {
    pub rss: u64,
    pub anon: u64,
    pub threads: u64,
    pub fds: usize,
}

impl ProcessStatus {
    pub fn read(pid: u32) -> anyhow::Result<ProcessStatus> {
        let text = std::fs::read_to_string(format!("/proc/{pid}/status"))
            .with_context(|| format!("read /proc/{pid}/status"))?;
        let fds = std::fs::read_dir(format!("/proc/{pid}/fd"))
            .with_context(|| format!("list /proc/{pid}/fd"))?
            .count();
        let status = ProcessStatus::parse(&text)
            .with_context(|| format!("no VmRSS, RssAnon or Threads in /proc/{pid}/status"))?;
        Ok(ProcessStatus { fds, ..status })
    }

    fn parse(status: &str) -> Option<ProcessStatus> {
        let field = |name: &str| -> Option<u64> {
            status.lines().find_map(|line| {
                let rest = line.strip_prefix(name)?.strip_prefix(':')?;
                rest.trim().trim_end_matches("kB").trim().parse().ok()
            })
        };
        Some(ProcessStatus {
            rss: field("VmRSS")?,
            anon: field("RssAnon")?,
            threads: field("Threads")?,
            fds: 0,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn events_are_parsed_from_the_raw_stream() {
        let mut parser = SseParser::default();
        let t0 = Instant::now();
        let t1 = t0 + Duration::from_millis(1);
        let mut events = Vec::new();
        // A keep-alive comment, then an event as axum writes it, then one with two data
        // lines and no space after the colon.
        for (line, at) in [
            (":", t0),
            ("", t0),
            ("event: inbox", t0),
            (r#"data: {"kind":"changed","pending":11}"#, t1),
            ("", t1),
            ("event:inbox", t1),
            ("data:a", t1),
            ("data:b", t1),
            ("", t1),
        ] {
            events.extend(parser.line(line, at));
        }
        assert_eq!(events.len(), 2, "{events:?}");
        assert_eq!(events[0].at, t0, "stamped at its first line");
        assert_eq!(events[0].kind().as_deref(), Some("changed"));
        assert_eq!(events[1].data, "a\nb");
        assert_eq!(events[1].kind(), None, "not JSON");
    }

    #[test]
    fn settled_events_name_their_request() {
        let event = SseEvent {
            at: Instant::now(),
            name: "inbox".into(),
            data: r#"{"kind":"settled","id":"web-000001","status":"answered","answered_by":"x"}"#
                .into(),
        };
        assert_eq!(event.kind().as_deref(), Some("settled"));
        assert_eq!(event.id().as_deref(), Some("web-000001"));
    }

    #[test]
    fn the_pairing_link_and_the_cookie() {
        let (base, code) = pairing_link("http://127.0.0.1:41234/#pair=abc-DEF_1\n").unwrap();
        assert_eq!(base, "http://127.0.0.1:41234");
        assert_eq!(code, "abc-DEF_1");
        assert!(pairing_link("https://127.0.0.1:1/#pair=x&fp=00").is_err());
        assert!(pairing_link("http://127.0.0.1:1/").is_err());
        assert_eq!(
            device_cookie("inbox_device=tok_en; Path=/; HttpOnly; SameSite=Strict").as_deref(),
            Some("inbox_device=tok_en")
        );
        assert_eq!(device_cookie("inbox_device=; Max-Age=0"), None);
        assert_eq!(device_cookie("other=1"), None);
    }

    #[test]
    fn process_status_fields() {
        let status = "Name:\tanswer-inbox\nVmHWM:\t   30000 kB\nVmRSS:\t   25124 kB\n\
                      RssAnon:\t    9000 kB\nRssFile:\t   16124 kB\nThreads:\t7\n";
        let parsed = ProcessStatus::parse(status).unwrap();
        assert_eq!((parsed.rss, parsed.anon, parsed.threads), (25124, 9000, 7));
        assert!(ProcessStatus::parse("Name:\tx\n").is_none());
    }

    #[test]
    fn this_process_has_a_status() {
        let own = ProcessStatus::read(std::process::id()).unwrap();
        assert!(own.rss > 0 && own.threads >= 1 && own.fds >= 3, "{own:?}");
    }
}
