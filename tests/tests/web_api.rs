//! `answer-inbox serve` through its HTTP API, black-box: a real server on its own inbox, and
//! the test as the paired browser (and as ntfy's app). Pairing gives a cookie and a CSRF
//! token; every route refuses what lacks them, a foreign Origin or Host, a revoked device,
//! a network that keeps failing (but never a paired device for another's failures); idle
//! and half-sent requests are closed in time and never keep out a real one; answers are recorded as from the web and the device's
//! name, bound to the version shown; one-time push links answer once; the page carries the
//! window's CSP; TLS serves the certificate the pairing link names.

use std::fs::File;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::mpsc;
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::{json, Value};
use ureq::http::HeaderMap;

use crate::util::{self, code, eventually, stderr, stdout, Inbox, Running};

/// One confirm question: short and of normal priority, so a push offers answer buttons.
const CONFIRM: &str = r#"{"inbox": 1, "title": "Deploy?",
  "questions": [{"id": "go", "type": "confirm", "question": "Deploy now?"}]}"#;

/// Every command the server serves to a paired device: the window's reading and answering
/// ones (inbox-app's one list), and `forget`.
fn commands() -> impl Iterator<Item = &'static str> {
    inbox_app::SERVED_COMMANDS
        .iter()
        .copied()
        .chain(std::iter::once("forget"))
}

/// Failed attempts an address may make before it is refused (inbox-web's `FAILURE_LIMIT`).
const FAILURE_LIMIT: usize = 10;

/// What a pairing link says: `<origin>/#pair=<code>[&fp=<fingerprint>]`.
struct Link {
    origin: String,
    code: String,
    fingerprint: Option<String>,
}

impl Link {
    fn parse(line: &str) -> Link {
        let url = line
            .trim()
            .strip_prefix("open: ")
            .unwrap_or_else(|| panic!("not a pairing link line: {line:?}"));
        let (origin, fragment) = url
            .split_once("/#")
            .unwrap_or_else(|| panic!("the code is not in the fragment: {url}"));
        let (mut code, mut fingerprint) = (None, None);
        for part in fragment.split('&') {
            match part.split_once('=') {
                Some(("pair", value)) => code = Some(value.to_owned()),
                Some(("fp", value)) => fingerprint = Some(value.to_owned()),
                _ => panic!("{part:?} in the link {url}"),
            }
        }
        Link {
            origin: origin.to_owned(),
            code: code.unwrap_or_else(|| panic!("no pairing code in {url}")),
            fingerprint,
        }
    }
}

/// An HTTP response, read whole.
struct Reply {
    status: u16,
    headers: HeaderMap,
    body: String,
}

impl Reply {
    fn header(&self, name: &str) -> Option<&str> {
        self.headers.get(name).and_then(|v| v.to_str().ok())
    }

    fn json(&self) -> Value {
        serde_json::from_str(&self.body)
            .unwrap_or_else(|e| panic!("not JSON ({e}), status {}: {}", self.status, self.body))
    }

    /// The JSON body of a 200.
    fn ok(&self, what: &str) -> Value {
        assert_eq!(self.status, 200, "{what}: {}", self.body);
        self.json()
    }

    /// An error with this status and the `{code, message}` body the page branches on.
    fn assert_refused(&self, status: u16, code: &str, what: &str) {
        assert_eq!(self.status, status, "{what}: {}", self.body);
        let body = self.json();
        assert_eq!(body["code"], code, "{what}: {body}");
        assert!(
            body["message"].as_str().is_some_and(|m| !m.is_empty()),
            "{what}: a message says why: {body}"
        );
    }
}

fn read_reply(result: Result<ureq::http::Response<ureq::Body>, ureq::Error>, what: &str) -> Reply {
    let mut response = result.unwrap_or_else(|e| panic!("{what}: {e}"));
    let status = response.status().as_u16();
    let headers = response.headers().clone();
    let body = response
        .body_mut()
        .read_to_string()
        .unwrap_or_else(|e| panic!("{what}: reading the body: {e}"));
    Reply {
        status,
        headers,
        body,
    }
}

/// A client that shows every status as it is (a refusal is what these tests read) and
/// never follows a redirect (the API has none; one would be a finding).
fn agent() -> ureq::Agent {
    agent_with(ureq::tls::TlsConfig::default())
}

fn agent_with(tls: ureq::tls::TlsConfig) -> ureq::Agent {
    agent_giving_up(tls, Duration::from_secs(20))
}

/// Like [`agent`], giving up after `timeout`.
fn agent_with_timeout(timeout: Duration) -> ureq::Agent {
    agent_giving_up(ureq::tls::TlsConfig::default(), timeout)
}

fn agent_giving_up(tls: ureq::tls::TlsConfig, timeout: Duration) -> ureq::Agent {
    ureq::Agent::config_builder()
        .http_status_as_error(false)
        .max_redirects(0)
        .timeout_global(Some(timeout))
        .tls_config(tls)
        .build()
        .into()
}

/// A paired browser: its cookie (`inbox_device=<token>`) and CSRF token.
struct Device {
    id: String,
    name: String,
    cookie: String,
    csrf: String,
}

impl Device {
    fn of(reply: &Reply) -> Device {
        let body = reply.ok("pairing");
        let set_cookie = reply.header("set-cookie").expect("pairing sets a cookie");
        let cookie = set_cookie.split(';').next().unwrap().trim().to_owned();
        assert!(
            cookie.len() > "inbox_device=".len() && cookie.starts_with("inbox_device="),
            "{set_cookie}"
        );
        let text = |key: &str| {
            body[key]
                .as_str()
                .unwrap_or_else(|| panic!("{key}: {body}"))
        };
        Device {
            id: text("device_id").to_owned(),
            name: text("device_name").to_owned(),
            csrf: text("csrf").to_owned(),
            cookie,
        }
    }
}

/// A running `answer-inbox serve` on loopback, on its own inbox; stopped when dropped.
struct Server {
    inbox: Inbox,
    process: Running,
    /// The page's origin, `http://127.0.0.1:PORT` (or https).
    origin: String,
    /// The printed link: its code is good once.
    link: Link,
    agent: ureq::Agent,
}

impl Server {
    fn start(extra: &[&str]) -> Server {
        let inbox = Inbox::new();
        let args = [&["serve", "--listen", "127.0.0.1:0", "--no-notify"], extra].concat();
        let log = File::create(inbox.dir.path().join("serve.log")).unwrap();
        let mut process = Running::spawn_with_stderr(inbox.cmd(&args), log);
        let link = Link::parse(&process.wait_line("open: "));
        Server {
            inbox,
            process,
            origin: link.origin.clone(),
            link,
            agent: agent(),
        }
    }

    fn port(&self) -> u16 {
        self.origin.rsplit(':').next().unwrap().parse().unwrap()
    }

    fn get(&self, path: &str, headers: &[(&str, &str)]) -> Reply {
        let mut request = self.agent.get(format!("{}{path}", self.origin));
        for (name, value) in headers {
            request = request.header(*name, *value);
        }
        read_reply(request.call(), &format!("GET {path}"))
    }

    fn post(&self, path: &str, headers: &[(&str, &str)], body: &str) -> Reply {
        let mut request = self
            .agent
            .post(format!("{}{path}", self.origin))
            .header("Content-Type", "application/json");
        for (name, value) in headers {
            request = request.header(*name, *value);
        }
        read_reply(request.send(body), &format!("POST {path}"))
    }

    /// Pairing as the page does it, from its own origin.
    fn pair(&self, code: &str, name: &str) -> Reply {
        let body = json!({"code": code, "name": name}).to_string();
        self.post("/api/pair", &[("Origin", &self.origin)], &body)
    }

    /// A device paired with the code of the link the server printed.
    fn first_device(&self, name: &str) -> Device {
        Device::of(&self.pair(&self.link.code, name))
    }

    /// A window command as the page sends it: cookie, own Origin, CSRF token.
    fn command(&self, device: &Device, command: &str, args: Value) -> Reply {
        let headers = [
            ("Cookie", device.cookie.as_str()),
            ("Origin", self.origin.as_str()),
            ("X-Inbox-CSRF", device.csrf.as_str()),
        ];
        self.post(&format!("/api/{command}"), &headers, &args.to_string())
    }

    fn session(&self, cookie: &str) -> Reply {
        self.get("/api/session", &[("Cookie", cookie)])
    }

    /// Places a request and waits until the server's inbox lists it.
    fn place(&self, device: &Device, id: &str, body: &str) {
        self.inbox.place(id, body);
        eventually(&format!("{id} to be pending"), || {
            let pending = self.command(device, "list_pending", json!({})).ok("list");
            pending
                .as_array()
                .unwrap()
                .iter()
                .any(|row| row["id"] == id)
        });
    }

    /// The version (the request file's SHA-256) the page is shown.
    fn version(&self, device: &Device, id: &str) -> String {
        let view = self
            .command(device, "open_request", json!({"id": id}))
            .ok("open_request");
        view["version"].as_str().expect("a version").to_owned()
    }

    fn log(&self) -> String {
        std::fs::read_to_string(self.inbox.dir.path().join("serve.log")).unwrap_or_default()
    }

    fn stop(mut self) {
        self.process.stop();
    }
}

fn request_sha256(inbox: &Inbox, id: &str) -> String {
    let path = inbox.spool().join("questions").join(format!("{id}.json"));
    inbox_protocol::sha256_hex(&std::fs::read(path).unwrap())
}

#[test]
fn every_api_route_refuses_a_browser_without_a_paired_device() {
    let routes: Vec<(&str, String)> = [("GET", "/api/session"), ("GET", "/api/events")]
        .into_iter()
        .map(|(method, path)| (method, path.to_owned()))
        .chain(commands().map(|c| ("POST", format!("/api/{c}"))))
        .collect();
    let call = |server: &Server, method: &str, path: &str, cookie: Option<&str>| {
        // Everything else in order (own Origin, a CSRF header), so the token alone is why.
        let mut headers = vec![("Origin", server.origin.as_str()), ("X-Inbox-CSRF", "x")];
        headers.extend(cookie.map(|c| ("Cookie", c)));
        match method {
            "GET" => server.get(path, &headers),
            _ => server.post(path, &headers, "{}"),
        }
    };

    let server = Server::start(&[]);
    for (method, path) in &routes {
        call(&server, method, path, None).assert_refused(401, "unauthorized", path);
    }
    server.stop();

    // A made-up token counts as a failed attempt and an address is refused after ten:
    // each ten on a server of their own, so every one meets the token check itself.
    for chunk in routes.chunks(FAILURE_LIMIT) {
        let server = Server::start(&[]);
        for (method, path) in chunk {
            let made_up = "inbox_device=QmFkVG9rZW5CYWRUb2tlbkJhZFRva2VuQmFkVG9rZW4";
            call(&server, method, path, Some(made_up)).assert_refused(401, "unauthorized", path);
        }
        server.stop();
    }
}

#[test]
fn a_paired_device_answers_as_itself_and_only_the_version_it_was_shown() {
    let mut server = Server::start(&[]);
    let phone = server.first_device("Pixel 8");
    assert_eq!(phone.name, "Pixel 8");
    let session = server.session(&phone.cookie).ok("session");
    assert_eq!(session["device_id"], phone.id.as_str());
    assert_eq!(session["csrf"], phone.csrf.as_str());

    server.place(&phone, "deploy-1", CONFIRM);
    let version = server.version(&phone, "deploy-1");
    assert_eq!(version, request_sha256(&server.inbox, "deploy-1"));

    // A version the page was never shown: the request may have changed since.
    let stale = "0".repeat(64);
    let args = json!({"id": "deploy-1", "answers": {"go": true}, "version": stale});
    server
        .command(&phone, "submit_answers", args)
        .assert_refused(409, "changed", "a stale version");
    assert!(
        !server.inbox.outcome_path("deploy-1").exists(),
        "nothing written"
    );

    let args = json!({"id": "deploy-1", "answers": {"go": true}, "version": version});
    let result = server.command(&phone, "submit_answers", args).ok("submit");
    assert_eq!(result["result"], "settled", "{result}");
    assert_eq!(result["outcome"]["surface"], "web", "{result}");
    assert_eq!(result["outcome"]["device"], "Pixel 8", "{result}");

    let outcome = server.inbox.outcome("deploy-1");
    assert_eq!(outcome["status"], "answered", "{outcome}");
    assert_eq!(outcome["answers"], json!({"go": true}), "{outcome}");
    assert_eq!(outcome["surface"], "web", "{outcome}");
    assert_eq!(outcome["device"], "Pixel 8", "{outcome}");
    // The person behind the device is the account running the server, as in the window.
    assert_eq!(
        outcome["answered_by"],
        util::operator().as_str(),
        "{outcome}"
    );
    assert_eq!(outcome["request_sha256"], version.as_str(), "{outcome}");
    server.process.wait_line(&format!(
        "settled deploy-1: answered by {}",
        util::operator()
    ));
    server.stop();
}

#[test]
fn a_revoked_device_is_refused_at_once_and_a_renamed_one_answers_under_its_new_name() {
    let server = Server::start(&[]);
    let phone = server.first_device("old phone");
    server.command(&phone, "list_pending", json!({})).ok("list");

    let listed = stdout(&server.inbox.run(&["devices"]));
    let line = listed
        .lines()
        .find(|l| l.starts_with(&phone.id))
        .unwrap_or_else(|| panic!("{} is not listed: {listed}", phone.id));
    assert!(
        line.contains("old phone") && !line.contains("revoked"),
        "{line}"
    );

    let out = server.inbox.run(&["devices", "revoke", &phone.id]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    // The running server reads the device store on every request: no restart, no delay.
    server
        .command(&phone, "list_pending", json!({}))
        .assert_refused(401, "unauthorized", "a revoked device's command");
    server
        .session(&phone.cookie)
        .assert_refused(401, "unauthorized", "a revoked device's session");
    let listed = stdout(&server.inbox.run(&["devices", "list"]));
    let line = listed.lines().find(|l| l.starts_with(&phone.id)).unwrap();
    assert!(line.contains("revoked"), "{line}");

    let out = server.inbox.run(&["devices", "pair"]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let link = Link::parse(stdout(&out).lines().next().unwrap_or(""));
    let tablet = Device::of(&server.pair(&link.code, "tablet"));
    let out = server
        .inbox
        .run(&["devices", "rename", &tablet.id, "kitchen tablet"]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert!(stdout(&out).contains("kitchen tablet"), "{}", stdout(&out));
    let session = server.session(&tablet.cookie).ok("session");
    assert_eq!(session["device_name"], "kitchen tablet");

    server.place(&tablet, "deploy-1", CONFIRM);
    let version = server.version(&tablet, "deploy-1");
    let args = json!({"id": "deploy-1", "answers": {"go": false}, "version": version});
    server.command(&tablet, "submit_answers", args).ok("submit");
    assert_eq!(server.inbox.outcome("deploy-1")["device"], "kitchen tablet");

    // A device can also forget itself from its own page: revoked, its cookie cleared.
    let forgotten = server.command(&tablet, "forget", json!({}));
    assert_eq!(forgotten.ok("forget"), Value::Null);
    let cleared = forgotten
        .header("set-cookie")
        .expect("the cookie is cleared");
    assert!(
        cleared.starts_with("inbox_device=;") && cleared.contains("Max-Age=0"),
        "{cleared}"
    );
    server
        .session(&tablet.cookie)
        .assert_refused(401, "unauthorized", "a forgotten device");
    let listed = stdout(&server.inbox.run(&["devices"]));
    let line = listed.lines().find(|l| l.starts_with(&tablet.id)).unwrap();
    assert!(line.contains("revoked"), "{line}");
    server.stop();
}

#[test]
fn a_device_id_that_begins_with_a_dash_is_taken_as_listed() {
    let server = Server::start(&[]);
    let phone = server.first_device("phone");
    // Ids are random base64url, so one in 64 begins with '-', which a command line could
    // take for an option. Made so here rather than waited for: the operator pastes the id
    // as `devices` lists it.
    let dashed = format!("-{}", &phone.id[1..]);
    let store =
        rusqlite::Connection::open(server.inbox.db().with_file_name("devices.sqlite3")).unwrap();
    store
        .execute(
            "UPDATE devices SET id = ?1 WHERE id = ?2",
            [&dashed, &phone.id],
        )
        .unwrap();
    drop(store);
    let listed = stdout(&server.inbox.run(&["devices"]));
    assert!(listed.lines().any(|l| l.starts_with(&dashed)), "{listed}");

    let out = server.inbox.run(&["devices", "rename", &dashed, "renamed"]);
    assert_eq!(code(&out), 0, "rename {dashed}: {}", stderr(&out));
    let out = server.inbox.run(&["devices", "revoke", &dashed]);
    assert_eq!(code(&out), 0, "revoke {dashed}: {}", stderr(&out));
    server
        .session(&phone.cookie)
        .assert_refused(401, "unauthorized", "the revoked device");
    server.stop();
}

#[test]
fn a_change_needs_the_pages_own_origin_and_csrf_token_and_desktop_commands_are_not_served() {
    let server = Server::start(&[]);
    // Pairing from another page is refused before the code is looked at: it stays good.
    let body = json!({"code": server.link.code, "name": "evil"}).to_string();
    server
        .post("/api/pair", &[("Origin", "https://evil.example")], &body)
        .assert_refused(403, "forbidden", "pairing from another origin");
    let phone = server.first_device("phone");

    server.place(&phone, "deploy-1", CONFIRM);
    let version = server.version(&phone, "deploy-1");
    let submit = json!({"id": "deploy-1", "answers": {"go": true}, "version": version}).to_string();
    let cases: [(&str, Vec<(&str, &str)>); 4] = [
        (
            "another origin",
            vec![
                ("Origin", "https://evil.example"),
                ("X-Inbox-CSRF", &phone.csrf),
            ],
        ),
        ("no origin", vec![("X-Inbox-CSRF", &phone.csrf)]),
        ("no CSRF token", vec![("Origin", &server.origin)]),
        (
            "a wrong CSRF token",
            vec![("Origin", &server.origin), ("X-Inbox-CSRF", "guessed")],
        ),
    ];
    for (what, mut headers) in cases {
        headers.push(("Cookie", &phone.cookie));
        server
            .post("/api/submit_answers", &headers, &submit)
            .assert_refused(403, "forbidden", what);
        assert!(
            !server.inbox.outcome_path("deploy-1").exists(),
            "{what}: nothing written"
        );
    }

    // The window's own commands (settings, the policy, the server, and the app itself: a page
    // must not add it to autostart, open folders or quit it) are nothing a device can call.
    for command in inbox_app::WINDOW_ONLY_COMMANDS {
        server
            .command(&phone, command, json!({}))
            .assert_refused(404, "not_found", command);
    }
    // The same answer with everything in order is taken: the refusals were for what lacked.
    let result = server
        .post(
            "/api/submit_answers",
            &[
                ("Cookie", &phone.cookie),
                ("Origin", &server.origin),
                ("X-Inbox-CSRF", &phone.csrf),
            ],
            &submit,
        )
        .ok("submit");
    assert_eq!(result["result"], "settled", "{result}");
    // And every served command is there: a wrong argument at most, never an unknown command.
    for command in inbox_app::SERVED_COMMANDS {
        let reply = server.command(&phone, command, json!({"no such argument": true}));
        assert_ne!(reply.status, 404, "{command} is not served: {}", reply.body);
    }
    server.stop();
}

#[test]
fn a_pairing_code_pairs_once_and_devices_pair_prints_a_fresh_one() {
    let server = Server::start(&[]);
    let first = server.pair(&server.link.code, "laptop");
    let laptop = Device::of(&first);
    let set_cookie = first.header("set-cookie").unwrap();
    for attribute in ["HttpOnly", "SameSite=Strict", "Path=/"] {
        assert!(set_cookie.contains(attribute), "{attribute}: {set_cookie}");
    }
    assert!(
        !set_cookie.contains("Secure"),
        "plain HTTP on loopback: {set_cookie}"
    );

    let replayed = server.pair(&server.link.code, "someone else");
    replayed.assert_refused(403, "pairing_refused", "a used code");
    assert!(replayed.header("set-cookie").is_none(), "no cookie");

    let out = server.inbox.run(&["devices", "pair"]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let link = Link::parse(stdout(&out).lines().next().unwrap_or(""));
    assert_eq!(link.origin, server.origin, "the running server's address");
    assert_ne!(link.code, server.link.code);
    let phone = Device::of(&server.pair(&link.code, "phone"));
    assert_ne!(phone.id, laptop.id);
    server.session(&phone.cookie).ok("the new device's session");
    server.pair(&link.code, "phone again").assert_refused(
        403,
        "pairing_refused",
        "the fresh code, replayed",
    );
    server
        .pair("never-issued", "x")
        .assert_refused(403, "pairing_refused", "a made-up code");
    server.stop();
}

#[test]
fn a_host_header_naming_another_server_is_refused_even_with_a_valid_cookie() {
    let server = Server::start(&[]);
    let phone = server.first_device("phone");
    let evil = format!("evil.example:{}", server.port());
    // A rebound name: the attacker's page would send its own Host and Origin together.
    let evil_origin = format!("http://{evil}");

    let page = server.get("/", &[("Host", &evil)]);
    assert_eq!(page.status, 421, "the page: {}", page.body);
    assert!(!page.body.contains("<html"), "{}", page.body);
    let session = server.get(
        "/api/session",
        &[("Host", &evil), ("Cookie", &phone.cookie)],
    );
    assert_eq!(session.status, 421, "the session: {}", session.body);
    let headers = [
        ("Host", evil.as_str()),
        ("Origin", evil_origin.as_str()),
        ("Cookie", phone.cookie.as_str()),
        ("X-Inbox-CSRF", phone.csrf.as_str()),
    ];
    let list = server.post("/api/list_pending", &headers, "{}");
    assert_eq!(list.status, 421, "a command: {}", list.body);
    assert!(list.json()["code"].is_string(), "{}", list.body);

    // localhost cannot be rebound by anyone else: it is served, its origin matched.
    let localhost = format!("localhost:{}", server.port());
    let localhost_origin = format!("http://{localhost}");
    assert_eq!(server.get("/", &[("Host", &localhost)]).status, 200);
    server
        .get(
            "/api/session",
            &[("Host", &localhost), ("Cookie", &phone.cookie)],
        )
        .ok("session on localhost");
    let headers = [
        ("Host", localhost.as_str()),
        ("Origin", localhost_origin.as_str()),
        ("Cookie", phone.cookie.as_str()),
        ("X-Inbox-CSRF", phone.csrf.as_str()),
    ];
    server
        .post("/api/list_pending", &headers, "{}")
        .ok("a command on localhost");
    server.stop();
}

/// Guesses are limited per source network, and this machine is one source whichever
/// loopback address it uses; but another's guesses never lock out a paired device on the
/// same network (here the same machine: a reverse proxy, an SSH tunnel, a shared NAT), nor a
/// right pairing code. A device's own wrong CSRF tokens count against that device alone.
#[test]
fn others_guesses_from_the_same_network_never_lock_out_a_paired_device() {
    let server = Server::start(&[]);
    let phone = server.first_device("phone");
    let out = server.inbox.run(&["devices", "pair"]);
    let spare = Link::parse(stdout(&out).lines().next().unwrap_or(""));

    for attempt in 0..FAILURE_LIMIT {
        let made_up = format!("inbox_device=guess-{attempt}");
        server
            .session(&made_up)
            .assert_refused(401, "unauthorized", "a guess");
    }
    server.session("inbox_device=guess-more").assert_refused(
        429,
        "rate_limited",
        "the guesser after ten guesses",
    );
    server.pair("a-made-up-code", "tablet").assert_refused(
        429,
        "rate_limited",
        "a made-up pairing code",
    );

    server
        .session(&phone.cookie)
        .ok("the paired phone's session after another's ten guesses");
    server
        .command(&phone, "list_pending", json!({}))
        .ok("the paired phone's command after another's ten guesses");
    let tablet = Device::of(&server.pair(&spare.code, "tablet"));

    let wrong_csrf = [
        ("Cookie", phone.cookie.as_str()),
        ("Origin", server.origin.as_str()),
        ("X-Inbox-CSRF", "guessed"),
    ];
    for _ in 0..FAILURE_LIMIT {
        server
            .post("/api/list_pending", &wrong_csrf, "{}")
            .assert_refused(403, "forbidden", "a wrong CSRF token");
    }
    server
        .command(&phone, "list_pending", json!({}))
        .assert_refused(429, "rate_limited", "the phone after its ten wrong tokens");
    server
        .command(&tablet, "list_pending", json!({}))
        .ok("another device on the same network");
    server.stop();
}

/// Sets the soft and hard limits on open files of process `pid` with util-linux's prlimit
/// (the test has no binding to setrlimit; prlimit does the same for any process).
fn limit_open_files(pid: u32, soft: u64, hard: Option<u64>) {
    let hard = hard.map(|h| h.to_string()).unwrap_or_default();
    let out = std::process::Command::new("prlimit")
        .args([
            "--pid",
            &pid.to_string(),
            &format!("--nofile={soft}:{hard}"),
        ])
        .output()
        .expect("prlimit (util-linux) runs");
    assert!(out.status.success(), "prlimit: {}", stderr(&out));
}

/// The soft and hard limits on open files of this process.
fn open_files_limit() -> (u64, u64) {
    let limits = std::fs::read_to_string("/proc/self/limits").unwrap();
    let line = limits
        .lines()
        .find(|line| line.starts_with("Max open files"))
        .unwrap();
    let numbers: Vec<u64> = line
        .split_whitespace()
        .filter_map(|word| word.parse().ok())
        .collect();
    (numbers[0], numbers[1])
}

/// Half a request: a request line and one header, never the blank line that ends them.
const HALF_A_REQUEST: &[u8] = b"GET /api/session HTTP/1.1\r\nHost: 127.0.0.1\r\n";

/// Idle and half-sent requests (a slowloris) are closed when they have not sent a whole
/// request in ten seconds, and however many are open, a real request is answered: the
/// server, given the usual 1,024 descriptors, holds at most 64 from one source and closes
/// the oldest waiting one for a newer connection.
#[test]
fn idle_and_half_sent_requests_are_closed_and_never_keep_out_a_real_one() {
    const IDLE: usize = 1_100;
    let server = Server::start(&[]);
    let phone = server.first_device("phone");
    limit_open_files(server.process.child.id(), 1_024, Some(1_024));
    let (soft, hard) = open_files_limit();
    if soft < (IDLE + 200) as u64 {
        assert!(
            hard >= (IDLE + 200) as u64,
            "this test needs {} descriptors",
            IDLE + 200
        );
        limit_open_files(std::process::id(), hard, None);
    }
    let address = format!("127.0.0.1:{}", server.port());

    // A lone half-sent request is closed after the timeout: the read ends, nothing is sent.
    let started = Instant::now();
    let mut lone = TcpStream::connect(&address).unwrap();
    lone.write_all(HALF_A_REQUEST).unwrap();
    lone.set_read_timeout(Some(Duration::from_secs(30)))
        .unwrap();
    let mut sent = Vec::new();
    let end = lone.read_to_end(&mut sent);
    let waited = started.elapsed();
    assert!(
        end.is_ok()
            || end
                .as_ref()
                .is_err_and(|e| e.kind() == std::io::ErrorKind::ConnectionReset),
        "the server closes the connection rather than keep it open: {end:?} after {waited:?}"
    );
    assert!(
        (Duration::from_secs(9)..Duration::from_secs(20)).contains(&waited),
        "closed after the ten seconds a request may take, not before: {waited:?}"
    );

    // Many of them, more than the server has descriptors for.
    let idle: Vec<TcpStream> = (0..IDLE)
        .filter_map(|_| {
            let mut stream =
                TcpStream::connect_timeout(&address.parse().unwrap(), Duration::from_secs(2))
                    .ok()?;
            stream.write_all(HALF_A_REQUEST).ok()?;
            Some(stream)
        })
        .collect();
    assert!(idle.len() > 1_024, "only {} connected", idle.len());
    let impatient = agent_with_timeout(Duration::from_secs(5));
    let reply = read_reply(
        impatient
            .get(format!("{}/api/session", server.origin))
            .header("Cookie", &phone.cookie)
            .call(),
        &format!(
            "a real request while {} idle connections are open",
            idle.len()
        ),
    );
    assert_eq!(reply.ok("the session")["device_name"], "phone");
    drop(idle);
    server.stop();
}

#[test]
fn an_answer_from_the_web_after_the_cli_answered_gets_the_cli_outcome_and_writes_nothing() {
    let server = Server::start(&[]);
    let phone = server.first_device("phone");
    server.place(&phone, "deploy-1", CONFIRM);
    // The page shows the request, then the operator answers it in a terminal.
    let version = server.version(&phone, "deploy-1");
    let out = server.inbox.run(&["answer", "deploy-1", "--set", "go=no"]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let written = std::fs::read(server.inbox.outcome_path("deploy-1")).unwrap();

    let args = json!({"id": "deploy-1", "answers": {"go": true}, "version": version});
    let result = server
        .command(&phone, "submit_answers", args)
        .ok("a late submit");
    assert_eq!(result["result"], "already_settled", "{result}");
    assert_eq!(result["outcome"]["surface"], "cli", "{result}");
    assert_eq!(
        std::fs::read(server.inbox.outcome_path("deploy-1")).unwrap(),
        written,
        "the first outcome stands untouched"
    );
    assert_eq!(
        server.inbox.outcome("deploy-1")["answers"],
        json!({"go": false})
    );
    server.stop();
}

#[test]
fn the_page_is_served_with_the_windows_csp_and_no_framing() {
    let server = Server::start(&[]);
    for path in ["/", "/some/route/the/app/handles"] {
        let page = server.get(path, &[]);
        assert_eq!(page.status, 200, "{path}: {}", page.body);
        assert_eq!(
            page.header("content-type"),
            Some("text/html; charset=utf-8"),
            "{path}"
        );
        assert!(page.body.contains("<html"), "{path}: {}", page.body);
        let csp = page.header("content-security-policy").expect("a CSP");
        assert!(csp.contains("script-src 'self'"), "{csp}");
        assert!(
            !csp.contains("unsafe-inline") && !csp.contains("unsafe-eval"),
            "{csp}"
        );
        assert!(csp.contains("frame-ancestors 'none'"), "{csp}");
        assert_eq!(page.header("x-frame-options"), Some("DENY"));
        assert_eq!(page.header("x-content-type-options"), Some("nosniff"));
        // The CSP would block an inline script: the page must not need one.
        for tag in page.body.split("<script").skip(1) {
            let tag = tag.split('>').next().unwrap_or("");
            assert!(tag.contains("src="), "an inline script: <script{tag}>");
        }
    }
    // A mistyped API route is an API error the page can read, not the page: deeper than
    // `/api/<command>` it is not found; a command route asked with GET is the wrong method.
    server
        .get("/api/no/such/route", &[])
        .assert_refused(404, "not_found", "/api/no/such/route");
    server
        .get("/api/no_such_route", &[])
        .assert_refused(405, "bad_input", "/api/no_such_route");
    server.stop();
}

#[test]
fn a_paired_page_hears_a_new_request_on_the_event_stream() {
    let server = Server::start(&[]);
    let phone = server.first_device("phone");
    let response = server
        .agent
        .get(format!("{}/api/events", server.origin))
        .header("Cookie", &phone.cookie)
        .call()
        .expect("the event stream");
    assert_eq!(response.status().as_u16(), 200);
    let kind = response.headers()["content-type"].to_str().unwrap();
    assert!(kind.starts_with("text/event-stream"), "{kind}");

    // Lines are read on a thread of their own, so a silent stream fails after a bounded
    // wait instead of blocking the test.
    let (lines_tx, lines) = mpsc::channel();
    let reader = BufReader::new(response.into_body().into_reader());
    std::thread::spawn(move || {
        for line in reader.lines().map_while(Result::ok) {
            if lines_tx.send(line).is_err() {
                return;
            }
        }
    });

    server.inbox.place("deploy-1", CONFIRM);
    let deadline = Instant::now() + Duration::from_secs(10);
    let mut seen = Vec::new();
    let mut event = None;
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        let line = lines
            .recv_timeout(left)
            .unwrap_or_else(|_| panic!("no event within 10 s; the stream said:\n{seen:#?}"));
        seen.push(line.clone());
        match line.strip_prefix("event: ") {
            Some(name) => event = Some(name.to_owned()),
            None => {
                if let Some(data) = line.strip_prefix("data: ") {
                    assert_eq!(event.as_deref(), Some("inbox"), "{seen:#?}");
                    let data: Value = serde_json::from_str(data)
                        .unwrap_or_else(|e| panic!("the data is not JSON ({e}): {data}"));
                    // The change carries the new request's row for the page to patch in; or,
                    // when it came in one gathering with the loop's start (a slow start under
                    // load), the refetch form (no delta), after which the page reads the list.
                    let row = &data["delta"]["rows"][0];
                    let patched = row["id"] == "deploy-1";
                    let refetch = data["delta"].is_null();
                    if data["kind"] == "changed" && data["pending"] == 1 && (patched || refetch) {
                        break;
                    }
                }
            }
        }
    }
    server.stop();
}

/// A stand-in for an ntfy server: takes each request, answers 200 `{}` as ntfy does, and
/// passes on its request line and JSON body.
fn fake_ntfy() -> (u16, mpsc::Receiver<(String, Value)>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(stream) = stream else { return };
            let received = read_http_request(&stream);
            let reply = "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n\
                         Content-Length: 2\r\nConnection: close\r\n\r\n{}";
            let _ = (&stream).write_all(reply.as_bytes());
            if tx.send(received).is_err() {
                return;
            }
        }
    });
    (port, rx)
}

fn read_http_request(stream: &TcpStream) -> (String, Value) {
    stream
        .set_read_timeout(Some(Duration::from_secs(10)))
        .unwrap();
    let mut reader = BufReader::new(stream);
    let mut request_line = String::new();
    reader.read_line(&mut request_line).unwrap();
    let mut length = None;
    loop {
        let mut header = String::new();
        reader.read_line(&mut header).unwrap();
        if header.trim().is_empty() {
            break;
        }
        if let Some((name, value)) = header.split_once(':') {
            if name.eq_ignore_ascii_case("content-length") {
                length = value.trim().parse::<usize>().ok();
            }
        }
    }
    let mut body = vec![0; length.expect("the publisher sends a Content-Length")];
    reader.read_exact(&mut body).unwrap();
    let body = serde_json::from_slice(&body)
        .unwrap_or_else(|e| panic!("not JSON ({e}): {}", String::from_utf8_lossy(&body)));
    (request_line.trim_end().to_owned(), body)
}

#[test]
fn a_push_answer_button_answers_once_through_its_one_time_url() {
    let (port, pushes) = fake_ntfy();
    let topic = format!("http://127.0.0.1:{port}/inbox-topic");
    let server = Server::start(&["--ntfy", &topic]);
    server.inbox.place("deploy-1", CONFIRM);
    let (request_line, push) = pushes
        .recv_timeout(Duration::from_secs(20))
        .unwrap_or_else(|_| panic!("no push; the server said:\n{}", server.log()));
    let sha256 = request_sha256(&server.inbox, "deploy-1");

    // ntfy's "publish as JSON": a POST to the server's root naming the topic.
    assert_eq!(request_line, "POST / HTTP/1.1");
    assert_eq!(push["topic"], "inbox-topic", "{push}");
    assert_eq!(push["title"], "Deploy?", "{push}");
    let priority = push["priority"].as_u64().expect("a priority");
    assert!((1..=5).contains(&priority), "{push}");
    let actions = push["actions"].as_array().expect("actions");
    let of_kind =
        |kind: &str| -> Vec<&Value> { actions.iter().filter(|a| a["action"] == kind).collect() };
    let views = of_kind("view");
    assert_eq!(views.len(), 1, "{push}");
    assert!(
        views[0]["url"]
            .as_str()
            .is_some_and(|u| u.starts_with(&format!("{}/", server.origin))),
        "{push}"
    );
    let buttons = of_kind("http");
    assert_eq!(buttons.len(), 2, "{push}");
    let act_prefix = format!("{}/api/act/", server.origin);
    for button in &buttons {
        assert_eq!(button["method"], "POST", "{push}");
        let url = button["url"].as_str().unwrap();
        assert!(
            url.starts_with(&act_prefix) && url.len() > act_prefix.len(),
            "{push}"
        );
    }
    let url_of = |label: &str| {
        buttons
            .iter()
            .find(|b| b["label"] == label)
            .and_then(|b| b["url"].as_str())
            .unwrap_or_else(|| panic!("no {label} button: {push}"))
            .to_owned()
    };
    let (yes, no) = (url_of("Yes"), url_of("No"));

    // As ntfy's app presses it: no cookie, no Origin, no CSRF token.
    let press = |url: &str| read_reply(agent().post(url).send_empty(), url);
    let result = press(&yes).ok("the Yes button");
    assert_eq!(result["result"], "settled", "{result}");
    let outcome = server.inbox.outcome("deploy-1");
    assert_eq!(outcome["answers"], json!({"go": true}), "{outcome}");
    assert_eq!(outcome["surface"], "push", "{outcome}");
    assert_eq!(
        outcome["answered_by"],
        util::operator().as_str(),
        "{outcome}"
    );
    assert_eq!(outcome["request_sha256"], sha256.as_str(), "{outcome}");
    let written = std::fs::read(server.inbox.outcome_path("deploy-1")).unwrap();

    press(&yes).assert_refused(410, "link_refused", "the Yes button, again");
    // The other button's link is still unused, but its request is settled: the first
    // press's outcome is what it gets, or a refusal.
    let late = press(&no);
    match late.status {
        200 => assert_eq!(late.json()["result"], "already_settled", "{}", late.body),
        _ => late.assert_refused(410, "link_refused", "the No button after Yes"),
    }
    assert_eq!(
        std::fs::read(server.inbox.outcome_path("deploy-1")).unwrap(),
        written,
        "the first press stands"
    );
    server.stop();
}

#[test]
fn serve_on_a_port_already_taken_exits_naming_the_address() {
    let inbox = Inbox::new();
    let taken = TcpListener::bind("127.0.0.1:0").unwrap();
    let address = taken.local_addr().unwrap().to_string();
    let (out_path, err_path) = (inbox.dir.path().join("out"), inbox.dir.path().join("err"));
    let mut cmd = inbox.cmd(&["serve", "--listen", &address, "--no-notify"]);
    cmd.stdout(File::create(&out_path).unwrap())
        .stderr(File::create(&err_path).unwrap());
    // Adopted, so a server that wrongly keeps running is still stopped.
    let mut serve = Running::adopt(cmd.spawn().unwrap());
    let mut status = None;
    eventually("serve to give up", || {
        status = serve.child.try_wait().unwrap();
        status.is_some()
    });
    let err = std::fs::read_to_string(&err_path).unwrap();
    assert_ne!(status.unwrap().code(), Some(0), "{err}");
    assert!(
        err.contains("cannot listen") && err.contains(&address),
        "{err}"
    );
    let out = std::fs::read_to_string(&out_path).unwrap();
    assert!(
        !out.contains("open: "),
        "no link to a server that is not there: {out}"
    );
    drop(taken);
}

#[test]
fn tls_serves_the_certificate_the_pairing_link_names_and_a_secure_cookie() {
    let mut server = Server::start(&["--tls"]);
    assert!(
        server.origin.starts_with("https://127.0.0.1:"),
        "{}",
        server.origin
    );
    let named = server.link.fingerprint.clone().expect("fp= in the link");
    let cert_path = server.inbox.db().parent().unwrap().join("serve-cert.pem");
    let pem = std::fs::read(&cert_path).unwrap();
    let cert = ureq::tls::Certificate::from_pem(&pem).unwrap();
    // As browsers show it: upper-case hex pairs joined by colons.
    let hex = inbox_protocol::sha256_hex(cert.der()).to_uppercase();
    let fingerprint = hex
        .as_bytes()
        .chunks(2)
        .map(|pair| std::str::from_utf8(pair).unwrap())
        .collect::<Vec<_>>()
        .join(":");
    assert_eq!(named, fingerprint);

    // Self-signed: a client trusting only the public roots refuses it...
    assert!(
        agent().get(format!("{}/", server.origin)).call().is_err(),
        "the public roots do not vouch for a self-signed certificate"
    );
    // ...and one trusting only this certificate reaches the server: it presents this one.
    let roots = ureq::tls::RootCerts::Specific(Arc::new(vec![cert]));
    server.agent = agent_with(ureq::tls::TlsConfig::builder().root_certs(roots).build());
    let paired = server.pair(&server.link.code, "laptop");
    let laptop = Device::of(&paired);
    let set_cookie = paired.header("set-cookie").unwrap();
    for attribute in ["Secure", "HttpOnly", "SameSite=Strict"] {
        assert!(set_cookie.contains(attribute), "{attribute}: {set_cookie}");
    }
    server.session(&laptop.cookie).ok("the session over TLS");
    server
        .command(&laptop, "list_pending", json!({}))
        .ok("a command over TLS");
    server.stop();
}
