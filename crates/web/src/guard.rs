//! What every request must pass before it reaches the inbox: the Host header names this
//! server (no DNS rebinding), a state-changing request comes from the page's own origin with
//! the device's CSRF token, and a source that keeps presenting wrong secrets is told to wait.
//!
//! Rebinding needs a name the attacker controls that resolves to this machine; an IP
//! literal cannot be rebound, so any IP literal is a fine Host, and names must be ones the
//! operator listed (or this machine's own names when it listens on every address).

use std::collections::HashMap;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use axum::http::HeaderMap;
use sha2::{Digest, Sha256};

/// The names a Host header may carry, decided once from the listen address.
#[derive(Debug, Clone)]
pub struct Hosts {
    names: Vec<String>,
}

impl Hosts {
    /// Loopback: `localhost`. Every address: also this machine's host name (and
    /// `<name>.local`, what mDNS answers to). Always: the names the operator gave (`--host`,
    /// the public URL's).
    pub fn for_listen(listen: SocketAddr, extra: &[String]) -> Hosts {
        let mut names = vec!["localhost".to_owned()];
        if listen.ip().is_unspecified() {
            let host = gethostname::gethostname().to_string_lossy().to_lowercase();
            if !host.is_empty() {
                names.push(format!("{host}.local"));
                names.push(host);
            }
        }
        names.extend(extra.iter().map(|n| n.to_lowercase()));
        Hosts { names }
    }

    /// Whether a Host header (`name`, `name:port`, `1.2.3.4:port`, `[::1]:port`) names this
    /// server.
    pub fn allows(&self, host: &str) -> bool {
        let name = host_name(host).to_lowercase();
        if name.is_empty() {
            return false;
        }
        if name.trim_matches(['[', ']']).parse::<IpAddr>().is_ok() {
            return true;
        }
        self.names.contains(&name)
    }
}

/// The host part of a Host header, without the port.
fn host_name(host: &str) -> &str {
    if let Some(rest) = host.strip_prefix('[') {
        // [v6]:port
        return rest.split(']').next().unwrap_or("");
    }
    match host.rsplit_once(':') {
        Some((name, port)) if port.chars().all(|c| c.is_ascii_digit()) => name,
        _ => host,
    }
}

/// The Host header, if one was sent (HTTP/1.1 requires it).
pub fn host_header(headers: &HeaderMap) -> Option<&str> {
    headers
        .get(axum::http::header::HOST)
        .and_then(|v| v.to_str().ok())
}

/// Whether the request's Origin is this page's own: `<scheme>://<Host>`, or the public URL's
/// origin behind a reverse proxy. A missing Origin is refused: every browser sends one on a
/// POST from script.
pub fn same_origin(headers: &HeaderMap, scheme: &str, public_origin: Option<&str>) -> bool {
    let Some(origin) = headers
        .get(axum::http::header::ORIGIN)
        .and_then(|v| v.to_str().ok())
    else {
        return false;
    };
    let own = host_header(headers).map(|host| format!("{scheme}://{host}"));
    own.as_deref() == Some(origin) || public_origin == Some(origin)
}

/// Compares two secrets without an early exit on the first differing byte (through their
/// digests, so lengths do not leak either).
pub fn secrets_equal(a: &str, b: &str) -> bool {
    let (a, b) = (Sha256::digest(a.as_bytes()), Sha256::digest(b.as_bytes()));
    a.iter()
        .zip(b.iter())
        .fold(0u8, |acc, (x, y)| acc | (x ^ y))
        == 0
}

/// Who failed attempts are counted against.
///
/// A wrong secret (a device token, a pairing code, a one-time link) is counted against the
/// network it came from: one IPv4 address, one IPv6 /64 (what one home or one host is
/// given, so rotating through it gains nothing), and this machine as one source, whichever
/// loopback address it uses (any of 127.0.0.0/8 or ::1 reaches the server, so each must not
/// be a budget of its own). A wrong CSRF token comes with a device's valid cookie, so it is
/// counted against that device instead: the cookie's holder is the one failing.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Source {
    /// This machine: 127.0.0.0/8, ::1 (and a reverse proxy or an SSH tunnel on it).
    ThisMachine,
    V4(Ipv4Addr),
    /// The /64 the address is in (its first 64 bits; the rest zero).
    V6Network(Ipv6Addr),
    /// A paired device, by its id.
    Device(String),
}

impl Source {
    /// The network a connection comes from; an IPv4 address written as IPv6
    /// (`::ffff:192.0.2.7`, what a dual-stack socket reports) is that IPv4 address.
    pub fn network(ip: IpAddr) -> Source {
        let ip = match ip {
            IpAddr::V6(v6) => v6.to_ipv4_mapped().map_or(ip, IpAddr::V4),
            v4 => v4,
        };
        match ip {
            ip if ip.is_loopback() => Source::ThisMachine,
            IpAddr::V4(v4) => Source::V4(v4),
            IpAddr::V6(v6) => {
                let prefix = u128::from(v6) & !u128::from(u64::MAX);
                Source::V6Network(Ipv6Addr::from(prefix))
            }
        }
    }

    pub fn device(id: &str) -> Source {
        Source::Device(id.to_owned())
    }
}

/// Failed attempts per [`Source`] in a fixed window; past the limit the source's wrong
/// secrets are refused as "too many" until the window ends. A right secret is always
/// honoured, whoever else failed from the same network: others' guesses never lock out a
/// paired device (or the phone pressing a push's button) behind the same NAT, proxy or
/// machine. Guessing a 256-bit secret is hopeless anyway; this keeps the log and the
/// database quiet.
pub struct Failures {
    limit: u32,
    window: Duration,
    seen: Mutex<HashMap<Source, (Instant, u32)>>,
}

impl Failures {
    pub fn new(limit: u32, window: Duration) -> Failures {
        Failures {
            limit,
            window,
            seen: Mutex::new(HashMap::new()),
        }
    }

    /// Whether `source` has used up its failures for now.
    pub fn blocked(&self, source: &Source, now: Instant) -> bool {
        let seen = self.seen.lock().unwrap_or_else(|p| p.into_inner());
        seen.get(source).is_some_and(|(since, count)| {
            now.duration_since(*since) < self.window && *count >= self.limit
        })
    }

    /// Counts one failure of `source`. Old windows are dropped as they are met, so the map
    /// holds at most the sources that failed within one window.
    pub fn record(&self, source: Source, now: Instant) {
        let mut seen = self.seen.lock().unwrap_or_else(|p| p.into_inner());
        seen.retain(|_, (since, _)| now.duration_since(*since) < self.window);
        let entry = seen.entry(source).or_insert((now, 0));
        entry.1 = entry.1.saturating_add(1);
    }
}

#[cfg(test)]
mod tests {
    use axum::http::HeaderValue;

    use super::*;

    fn addr(text: &str) -> SocketAddr {
        text.parse().unwrap()
    }

    #[test]
    fn loopback_allows_ip_literals_and_localhost_only() {
        let hosts = Hosts::for_listen(addr("127.0.0.1:8080"), &[]);
        for ok in [
            "127.0.0.1:8080",
            "localhost:8080",
            "LOCALHOST",
            "[::1]:8080",
            "10.0.0.2",
        ] {
            assert!(hosts.allows(ok), "{ok}");
        }
        for bad in [
            "evil.example:8080",
            "evil.example",
            "",
            "localhost.evil.example:8080",
        ] {
            assert!(!hosts.allows(bad), "{bad}");
        }
    }

    #[test]
    fn names_the_operator_gave_are_allowed() {
        let hosts = Hosts::for_listen(addr("127.0.0.1:8080"), &["inbox.example.org".into()]);
        assert!(hosts.allows("inbox.example.org"));
        assert!(hosts.allows("Inbox.Example.org:443"));
        assert!(!hosts.allows("example.org"));
    }

    #[test]
    fn origin_must_be_the_pages_own() {
        let mut headers = HeaderMap::new();
        headers.insert("host", HeaderValue::from_static("127.0.0.1:8080"));
        assert!(
            !same_origin(&headers, "http", None),
            "a missing Origin is refused"
        );
        headers.insert("origin", HeaderValue::from_static("http://127.0.0.1:8080"));
        assert!(same_origin(&headers, "http", None));
        assert!(!same_origin(&headers, "https", None));
        headers.insert("origin", HeaderValue::from_static("https://evil.example"));
        assert!(!same_origin(&headers, "http", None));
        headers.insert(
            "origin",
            HeaderValue::from_static("https://inbox.example.org"),
        );
        assert!(same_origin(
            &headers,
            "http",
            Some("https://inbox.example.org")
        ));
    }

    #[test]
    fn secrets_compare_by_value() {
        assert!(secrets_equal("abc", "abc"));
        assert!(!secrets_equal("abc", "abd"));
        assert!(!secrets_equal("abc", "abcd"));
    }

    #[test]
    fn a_source_is_blocked_after_its_failures_until_the_window_ends() {
        let failures = Failures::new(3, Duration::from_secs(60));
        let ip = Source::network("192.0.2.1".parse().unwrap());
        let other = Source::network("192.0.2.2".parse().unwrap());
        let start = Instant::now();
        for _ in 0..3 {
            assert!(!failures.blocked(&ip, start));
            failures.record(ip.clone(), start);
        }
        assert!(failures.blocked(&ip, start));
        assert!(!failures.blocked(&other, start), "only the failing address");
        assert!(
            !failures.blocked(&Source::device("phone"), start),
            "nor a device"
        );
        assert!(!failures.blocked(&ip, start + Duration::from_secs(61)));
    }

    /// Every loopback address is this machine, and an IPv6 /64 is one network: moving to
    /// another address within either gets no new budget.
    #[test]
    fn loopback_and_an_ipv6_64_are_each_one_source() {
        let source = |text: &str| Source::network(text.parse().unwrap());
        for machine in [
            "127.0.0.1",
            "127.0.0.2",
            "127.255.255.254",
            "::1",
            "::ffff:127.0.0.9",
        ] {
            assert_eq!(source(machine), Source::ThisMachine, "{machine}");
        }
        assert_eq!(source("2001:db8:1:2::1"), source("2001:db8:1:2:ffff:0:0:7"));
        assert_ne!(source("2001:db8:1:2::1"), source("2001:db8:1:3::1"));
        assert_eq!(source("::ffff:192.0.2.7"), source("192.0.2.7"));
        assert_ne!(source("192.0.2.7"), source("192.0.2.8"));

        let failures = Failures::new(3, Duration::from_secs(60));
        let now = Instant::now();
        for n in 2..5 {
            failures.record(source(&format!("127.0.0.{n}")), now);
        }
        assert!(failures.blocked(&source("127.0.0.200"), now));
    }
}
