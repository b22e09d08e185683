//! Team mode on a real shared filesystem: two operators, each an OS account with its own
//! inbox and database, answer one spool through sshfs over a loopback OpenSSH server.
//!
//! The harness builds everything it needs and stops all of it, by PID, even on a panic:
//! - accounts: `inbox-op-a` and `inbox-op-b` in the group `inbox-team`, and
//!   `inbox-outsider` outside it (created once with useradd, then reused);
//! - an `sshd` of its own on a free loopback port, with its own configuration and host key
//!   in the run's temp dir, key-only logins with keys generated for the run, and the
//!   in-process SFTP server, so the files each login creates are really owned by that
//!   account on the server side;
//! - the spool on the server side (a group directory, `inbox-team`, 02770), mounted once per
//!   operator with sshfs, logged in as that operator;
//! - per operator, `answer-inbox --team inbox-team --spool <its mount> --db <its own
//!   database> watch --poll`, run as that account (setpriv) with a home of its own.
//!
//! The run: requests are placed with `answer-inbox ask` by either operator through its own
//! mount; once both inboxes have reported a request, both operators answer it at the same
//! moment (`answer ID --set pick=<a|b>`, each as itself through its own mount), so every
//! request is a race that the server's `link()` decides. A request file owned by the outsider is dropped into the
//! spool as well. [`run`] then checks: exactly one outcome file per request and nothing
//! else; each outcome answered by `operator:<the owner of the outcome file>` with that
//! operator's answer; the winner's `answer` exited 0 and the loser's 3, naming the winner;
//! both daemons logged every settle with the winner, and each operator's own inbox (`list
//! --all --json` and its database) agrees with the spool; team permissions on every file
//! and directory; the outsider's request refused by both inboxes, never answered.
//!
//! The CI test (tests/tests/team.rs) runs it short; `inbox-bench team` runs it long. Both
//! need root (accounts, mounts) and FUSE: [`unavailable`] says why it cannot run here.

use std::collections::BTreeMap;
use std::fmt;
use std::fs;
use std::io::{BufRead, Write};
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use serde_json::{json, Value};

use crate::crash::{check_db, failure, settled_named, tail, wait_for, Snapshot};
use crate::process::Running;

/// The group of the team spool.
pub const TEAM_GROUP: &str = "inbox-team";
/// The two operators, both in [`TEAM_GROUP`]; operator k answers `pick` with `LETTERS[k]`.
pub const OPERATORS: [&str; 2] = ["inbox-op-a", "inbox-op-b"];
const LETTERS: [&str; 2] = ["a", "b"];
/// An account outside the group, whose request must be refused.
pub const OUTSIDER: &str = "inbox-outsider";
const OUTSIDER_REQUEST: &str = "from-outsider";
/// How long an inbox may take to report a request placed through the other mount: sshfs
/// caches directory listings (20 s by default) and `--poll` looks every few seconds, and
/// the engine rescans everything every 30 s regardless.
const INGEST_PATIENCE: Duration = Duration::from_secs(120);

/// The tools the harness runs, besides `answer-inbox`.
const TOOLS: &[&str] = &[
    "sshfs",
    "sshd",
    "ssh-keygen",
    "fusermount3",
    "setpriv",
    "useradd",
    "groupadd",
    "usermod",
    "getent",
];

/// What to run. [`Config::new`] gives the defaults for the rest.
#[derive(Debug, Clone)]
pub struct Config {
    /// The `answer-inbox` binary under test; every account must be able to run it.
    pub binary: PathBuf,
    pub requests: usize,
    /// Seeds which operator places each request.
    pub seed: u64,
    /// Threads racing the two answerers of a request; each runs one race at a time.
    pub workers: usize,
    /// Progress lines on standard error.
    pub verbose: bool,
}

impl Config {
    pub fn new(binary: PathBuf, requests: usize) -> Config {
        Config {
            binary,
            requests,
            seed: fastrand::u64(..),
            workers: 2,
            verbose: false,
        }
    }
}

/// The figures of one run.
#[derive(Debug, Clone, Default)]
pub struct Report {
    pub seed: u64,
    pub requests: usize,
    /// Requests placed through each operator's mount (by that account).
    pub placed_by: [usize; 2],
    /// Races won by each operator (its `answer` exited 0, and the outcome file is its own).
    pub wins: [usize; 2],
    /// Losers that exited 3 naming the winner.
    pub losers_told: usize,
    /// From the first request placed to the last race decided.
    pub race_time: Duration,
    /// From the last race decided until both daemons had logged every settle: how far the
    /// polling inboxes trail the spool through sshfs.
    pub catch_up: Duration,
    /// Per daemon, from a request placed (its `ask` returned) to the daemon's `ingested`
    /// line, median and largest: `[daemon][0]` for requests placed through the daemon's own
    /// mount, `[daemon][1]` through the other's (sshfs caches each mount's listings).
    pub ingest_lag: [[(Duration, Duration); 2]; 2],
    /// Per daemon, from the winning `answer` returning to the daemon's settle line, median
    /// and largest: `[daemon][0]` for races its own operator won, `[daemon][1]` for races
    /// the other won (the daemon learns of those from the spool alone).
    pub settle_lag: [[(Duration, Duration); 2]; 2],
    /// The whole run, accounts and mounts included.
    pub elapsed: Duration,
    /// What each daemon said of the outsider's request.
    pub outsider_refusals: Vec<String>,
    /// Warnings and errors the daemons printed (standard error), counted by text: not
    /// violations, but worth a look.
    pub warnings: BTreeMap<String, usize>,
}

impl Report {
    /// Settled requests per second of racing.
    pub fn outcomes_per_second(&self) -> f64 {
        self.requests as f64 / self.race_time.as_secs_f64().max(1e-9)
    }
}

impl fmt::Display for Report {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let ms = |d: Duration| d.as_millis();
        writeln!(
            f,
            "2 operators ({} and {}, group {TEAM_GROUP}) over sshfs, --poll, {} requests, \
             seed {}: {:.1} s in all",
            OPERATORS[0],
            OPERATORS[1],
            self.requests,
            self.seed,
            self.elapsed.as_secs_f64()
        )?;
        writeln!(
            f,
            "placed: {} via {}'s mount, {} via {}'s",
            self.placed_by[0], OPERATORS[0], self.placed_by[1], OPERATORS[1]
        )?;
        writeln!(
            f,
            "races won: {} {}, {} {}; losers told \"already settled\" (exit 3, winner \
             named): {}",
            OPERATORS[0], self.wins[0], OPERATORS[1], self.wins[1], self.losers_told
        )?;
        writeln!(
            f,
            "placed and raced in {:.1} s, {:.1} outcomes/s; both inboxes had logged every \
             settle {:.1} s after the last race",
            self.race_time.as_secs_f64(),
            self.outcomes_per_second(),
            self.catch_up.as_secs_f64()
        )?;
        for (k, [own, other]) in self.ingest_lag.iter().enumerate() {
            writeln!(
                f,
                "{}'s inbox, placed → ingested: through its own mount {} ms median, {} ms \
                 max; through the other's {} ms median, {} ms max",
                OPERATORS[k],
                ms(own.0),
                ms(own.1),
                ms(other.0),
                ms(other.1)
            )?;
        }
        for (k, [own, other]) in self.settle_lag.iter().enumerate() {
            writeln!(
                f,
                "{}'s inbox, outcome written → settle logged: its own operator's {} ms \
                 median, {} ms max; the other operator's {} ms median, {} ms max",
                OPERATORS[k],
                ms(own.0),
                ms(own.1),
                ms(other.0),
                ms(other.1)
            )?;
        }
        writeln!(f, "{OUTSIDER}'s request (a file it owns in questions/):")?;
        for refusal in &self.outsider_refusals {
            writeln!(f, "  {refusal}")?;
        }
        if self.warnings.is_empty() {
            writeln!(f, "daemon warnings: none")
        } else {
            writeln!(f, "daemon warnings: {}", crate::tally(&self.warnings))
        }
    }
}

/// Why the harness cannot run on this machine, or `None` when it can: it needs root (to
/// create accounts and mount), FUSE (`/dev/fuse` and the kernel's `fuse` filesystem) and
/// the OpenSSH server, sshfs and util-linux tools (scripts/setup installs them).
pub fn unavailable() -> Option<String> {
    if effective_uid() != Some(0) {
        return Some(
            "not running as root, so it cannot create the operators' accounts or mount".to_owned(),
        );
    }
    if !Path::new("/dev/fuse").exists() {
        return Some("/dev/fuse is missing".to_owned());
    }
    let kernel_fuse = fs::read_to_string("/proc/filesystems")
        .unwrap_or_default()
        .lines()
        .any(|line| line.split_whitespace().last() == Some("fuse"));
    if !kernel_fuse {
        return Some("the kernel has no fuse filesystem (/proc/filesystems)".to_owned());
    }
    let missing: Vec<&str> = TOOLS
        .iter()
        .copied()
        .filter(|tool| find_tool(tool).is_none())
        .collect();
    if !missing.is_empty() {
        return Some(format!(
            "missing {} (scripts/setup installs sshfs, openssh-server and fuse3)",
            missing.join(", ")
        ));
    }
    None
}

/// The effective user id, from /proc/self/status (`Uid: real effective saved fs`).
fn effective_uid() -> Option<u32> {
    fs::read_to_string("/proc/self/status")
        .ok()?
        .lines()
        .find_map(|line| line.strip_prefix("Uid:"))?
        .split_whitespace()
        .nth(1)?
        .parse()
        .ok()
}

/// A tool on PATH or in the sbin directories (root's tools are not always on PATH).
fn find_tool(name: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH").unwrap_or_default();
    std::env::split_paths(&path)
        .chain(["/usr/sbin", "/sbin", "/usr/bin", "/bin"].map(PathBuf::from))
        .map(|dir| dir.join(name))
        .find(|candidate| candidate.is_file())
}

fn tool(name: &str) -> Result<PathBuf, String> {
    find_tool(name).ok_or_else(|| format!("{name} is not installed (see scripts/setup)"))
}

/// Runs a command to its end; its standard output, or an error naming it and its stderr.
fn run_tool(cmd: &mut Command) -> Result<String, String> {
    let out = cmd
        .stdin(Stdio::null())
        .output()
        .map_err(|e| format!("cannot run {cmd:?}: {e}"))?;
    if out.status.success() {
        Ok(String::from_utf8_lossy(&out.stdout).into_owned())
    } else {
        Err(format!(
            "{cmd:?} failed ({}): {}",
            out.status,
            String::from_utf8_lossy(&out.stderr).trim()
        ))
    }
}

// ---- Accounts ----

/// An OS account: name, uid, primary gid.
#[derive(Debug, Clone)]
pub struct Account {
    pub name: String,
    pub uid: u32,
    pub gid: u32,
}

fn lookup(name: &str) -> Option<Account> {
    let line = run_tool(Command::new(tool("getent").ok()?).args(["passwd", name])).ok()?;
    let fields: Vec<&str> = line.trim().split(':').collect();
    Some(Account {
        name: name.to_owned(),
        uid: fields.get(2)?.parse().ok()?,
        gid: fields.get(3)?.parse().ok()?,
    })
}

/// The group's members, from `getent group` (supplementary membership).
fn group_members(group: &str) -> Result<(u32, Vec<String>), String> {
    let line = run_tool(Command::new(tool("getent")?).args(["group", group]))?;
    let fields: Vec<&str> = line.trim().split(':').collect();
    let gid = fields
        .get(2)
        .and_then(|g| g.parse().ok())
        .ok_or_else(|| format!("getent group {group}: {line}"))?;
    let members = fields
        .get(3)
        .map(|m| {
            m.split(',')
                .filter(|s| !s.is_empty())
                .map(str::to_owned)
                .collect()
        })
        .unwrap_or_default();
    Ok((gid, members))
}

/// The team's accounts, created when missing and reused otherwise.
struct Accounts {
    team_gid: u32,
    operators: [Account; 2],
    outsider: Account,
}

fn ensure_accounts() -> Result<Accounts, String> {
    if group_members(TEAM_GROUP).is_err() {
        // -f: another process creating it at the same moment is fine.
        run_tool(Command::new(tool("groupadd")?).args(["-f", TEAM_GROUP]))?;
    }
    let operators = [
        ensure_account(OPERATORS[0], true)?,
        ensure_account(OPERATORS[1], true)?,
    ];
    let outsider = ensure_account(OUTSIDER, false)?;
    let (team_gid, members) = group_members(TEAM_GROUP)?;
    if members.iter().any(|m| m == OUTSIDER) {
        return Err(format!(
            "{OUTSIDER} is a member of {TEAM_GROUP}; it must stay outside (gpasswd -d \
             {OUTSIDER} {TEAM_GROUP})"
        ));
    }
    Ok(Accounts {
        team_gid,
        operators,
        outsider,
    })
}

/// The account `name`, created when missing (in [`TEAM_GROUP`] when `team`, added to it
/// when it exists outside it), and reused otherwise.
fn ensure_account(name: &str, team: bool) -> Result<Account, String> {
    if lookup(name).is_none() {
        // No home and no shell: the accounts only log in for SFTP (the server's
        // internal-sftp needs neither). The password `*` is "no password" rather than
        // "locked" (`!`), which sshd without PAM refuses even for key logins.
        let mut cmd = Command::new(tool("useradd")?);
        cmd.args([
            "--no-create-home",
            "--home-dir",
            "/nonexistent",
            "--shell",
            "/usr/sbin/nologin",
            "--password",
            "*",
            "--user-group",
        ]);
        if team {
            cmd.args(["--groups", TEAM_GROUP]);
        }
        cmd.arg(name);
        if let Err(error) = run_tool(&mut cmd) {
            // Someone else may have created it meanwhile.
            if lookup(name).is_none() {
                return Err(error);
            }
        }
    }
    let (_, members) = group_members(TEAM_GROUP)?;
    if team && !members.iter().any(|m| m == name) {
        run_tool(Command::new(tool("usermod")?).args(["--append", "--groups", TEAM_GROUP, name]))?;
    }
    lookup(name).ok_or_else(|| format!("account {name} does not exist after useradd"))
}

fn chown(path: &Path, uid: u32, gid: u32) -> Result<(), String> {
    std::os::unix::fs::chown(path, Some(uid), Some(gid))
        .map_err(|e| format!("chown {}: {e}", path.display()))
}

fn chmod(path: &Path, mode: u32) -> Result<(), String> {
    fs::set_permissions(path, fs::Permissions::from_mode(mode))
        .map_err(|e| format!("chmod {}: {e}", path.display()))
}

fn mkdir(path: &Path) -> Result<(), String> {
    fs::create_dir_all(path).map_err(|e| format!("mkdir {}: {e}", path.display()))
}

// ---- The SSH server ----

/// An `sshd` of the harness's own on a loopback port; stopped when dropped.
struct Sshd {
    running: Running,
    port: u16,
}

fn start_sshd(dir: &Path, accounts: &Accounts) -> Result<Sshd, String> {
    let sshd = tool("sshd")?;
    let keygen = tool("ssh-keygen")?;
    let host_key = dir.join("host_key");
    run_tool(
        Command::new(&keygen)
            .args([
                "-q",
                "-t",
                "ed25519",
                "-N",
                "",
                "-C",
                "inbox-team-host",
                "-f",
            ])
            .arg(&host_key),
    )?;
    let keys = dir.join("authorized");
    mkdir(&keys)?;
    chmod(&keys, 0o755)?;
    for account in &accounts.operators {
        let key = dir.join(format!("{}.key", account.name));
        run_tool(
            Command::new(&keygen)
                .args(["-q", "-t", "ed25519", "-N", "", "-C", &account.name, "-f"])
                .arg(&key),
        )?;
        let public =
            fs::read_to_string(key.with_extension("key.pub")).map_err(|e| e.to_string())?;
        let authorized = keys.join(&account.name);
        fs::write(&authorized, public).map_err(|e| e.to_string())?;
        chmod(&authorized, 0o644)?;
    }
    // sshd's privilege separation directory; the distribution's service would create it.
    mkdir(Path::new("/run/sshd"))?;
    let mut last_error = String::new();
    // A free port, found by binding and letting go: another process may take it in
    // between, so a failed bind is retried on another one.
    for _ in 0..5 {
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.local_addr())
            .map_err(|e| format!("no free loopback port: {e}"))?
            .port();
        let config = dir.join("sshd_config");
        let users = accounts
            .operators
            .iter()
            .map(|a| a.name.as_str())
            .collect::<Vec<_>>()
            .join(" ");
        let text = format!(
            "# The team harness's own server: loopback only, keys only, SFTP only.\n\
             ListenAddress 127.0.0.1\n\
             Port {port}\n\
             HostKey {host_key}\n\
             PidFile none\n\
             UsePAM no\n\
             PasswordAuthentication no\n\
             KbdInteractiveAuthentication no\n\
             PubkeyAuthentication yes\n\
             AuthorizedKeysFile {keys}/%u\n\
             AllowUsers {users}\n\
             # The temp dir lives under /tmp (world-writable), which StrictModes refuses.\n\
             StrictModes no\n\
             X11Forwarding no\n\
             AllowTcpForwarding no\n\
             Subsystem sftp internal-sftp\n",
            host_key = host_key.display(),
            keys = keys.display(),
        );
        fs::write(&config, text).map_err(|e| e.to_string())?;
        let log_path = dir.join("sshd.log");
        let log = fs::File::create(&log_path).map_err(|e| e.to_string())?;
        let mut cmd = Command::new(&sshd);
        cmd.arg("-D").arg("-e").arg("-f").arg(&config);
        let mut running = Running::spawn_with_stderr(cmd, log);
        let listening = wait_for(Duration::from_secs(20), || {
            fs::read_to_string(&log_path)
                .unwrap_or_default()
                .contains("Server listening on")
                || matches!(running.child.try_wait(), Ok(Some(_)))
        });
        let text = fs::read_to_string(&log_path).unwrap_or_default();
        if listening && text.contains("Server listening on") {
            let host_public =
                fs::read_to_string(host_key.with_extension("pub")).map_err(|e| e.to_string())?;
            let key: Vec<&str> = host_public.split_whitespace().take(2).collect();
            fs::write(
                dir.join("known_hosts"),
                format!("[127.0.0.1]:{port} {}\n", key.join(" ")),
            )
            .map_err(|e| e.to_string())?;
            return Ok(Sshd { running, port });
        }
        running.stop();
        last_error = format!("sshd did not start on port {port}: {}", tail(&log_path));
    }
    Err(last_error)
}

// ---- The mounts ----

/// An sshfs mount of the server's spool, logged in as one operator; unmounted and its
/// sshfs stopped when dropped.
struct Mount {
    point: PathBuf,
    sshfs: Running,
}

fn is_mounted(point: &Path) -> bool {
    fs::read_to_string("/proc/self/mountinfo")
        .unwrap_or_default()
        .lines()
        .any(|line| line.split(' ').nth(4) == Some(&*point.to_string_lossy()))
}

fn mount(dir: &Path, sshd: &Sshd, account: &Account, spool: &Path) -> Result<Mount, String> {
    let point = dir.join(format!("mnt-{}", account.name));
    mkdir(&point)?;
    let log_path = dir.join(format!("sshfs-{}.log", account.name));
    let log = fs::File::create(&log_path).map_err(|e| e.to_string())?;
    // Mounted by root (the container's /dev/fuse is root's only), `allow_other` so the
    // operator's processes can use it, `default_permissions` so the kernel applies the
    // server's owners and modes to them. Every file is created by the SFTP server running
    // as the login account: ownership on the server is real. sshfs's caches are left at
    // their defaults, as a user would have them.
    let options = format!(
        "IdentityFile={key},IdentitiesOnly=yes,UserKnownHostsFile={known},\
         StrictHostKeyChecking=yes,BatchMode=yes,allow_other,default_permissions",
        key = dir.join(format!("{}.key", account.name)).display(),
        known = dir.join("known_hosts").display(),
    );
    let mut cmd = Command::new(tool("sshfs")?);
    cmd.arg("-f")
        .args([
            "-F",
            "/dev/null",
            "-p",
            &sshd.port.to_string(),
            "-o",
            &options,
        ])
        .arg(format!("{}@127.0.0.1:{}", account.name, spool.display()))
        .arg(&point);
    let mut sshfs = Running::spawn_with_stderr(cmd, log);
    let mounted = wait_for(Duration::from_secs(30), || {
        is_mounted(&point) || matches!(sshfs.child.try_wait(), Ok(Some(_)))
    });
    if !mounted || !is_mounted(&point) {
        sshfs.stop();
        return Err(format!(
            "sshfs did not mount {} for {}: {}",
            point.display(),
            account.name,
            tail(&log_path)
        ));
    }
    Ok(Mount { point, sshfs })
}

impl Drop for Mount {
    fn drop(&mut self) {
        if is_mounted(&self.point) {
            if let Ok(fusermount) = tool("fusermount3") {
                let _ = Command::new(fusermount)
                    .arg("-u")
                    .arg(&self.point)
                    .stderr(Stdio::null())
                    .status();
            }
            // sshfs ends by itself once unmounted.
            let sshfs = &mut self.sshfs;
            wait_for(Duration::from_secs(10), || {
                matches!(sshfs.child.try_wait(), Ok(Some(_)))
            });
        }
        // Running's own Drop stops it if it is still there.
    }
}

// ---- The operators ----

/// One operator: its account, its mount, its home and database (in its home, owned by it).
struct Operator {
    account: Account,
    letter: &'static str,
    mount: PathBuf,
    home: PathBuf,
    db: PathBuf,
}

impl Operator {
    /// `answer-inbox --team GROUP --spool <mount> --db <db> ARGS` as this account.
    fn command(&self, binary: &Path, args: &[&str]) -> Command {
        let mut cmd = Command::new("setpriv");
        cmd.arg(format!("--reuid={}", self.account.name))
            .arg(format!("--regid={}", self.account.gid))
            .arg("--init-groups")
            .arg("--")
            .arg(binary)
            .args(["--team", TEAM_GROUP, "--spool"])
            .arg(&self.mount)
            .arg("--db")
            .arg(&self.db)
            .args(args)
            .env_clear()
            .env("PATH", "/usr/bin:/bin")
            .env("HOME", &self.home)
            .env("USER", &self.account.name)
            .env("LOGNAME", &self.account.name)
            .env("XDG_DATA_HOME", self.home.join(".local/share"))
            .env("XDG_CONFIG_HOME", self.home.join(".config"))
            .env("XDG_STATE_HOME", self.home.join(".local/state"));
        cmd
    }
}

/// A daemon's standard output: each line with the moment it arrived, and when it reported
/// each request ingested.
#[derive(Default)]
struct DaemonLog {
    lines: Vec<(Instant, String)>,
    ingested: BTreeMap<String, Instant>,
}

impl DaemonLog {
    fn contains(&self, needle: &str) -> bool {
        self.lines.iter().any(|(_, l)| l.contains(needle))
    }
}

struct Daemon {
    running: Running,
    log: Arc<Mutex<DaemonLog>>,
    reader: Option<JoinHandle<()>>,
    stderr: PathBuf,
}

fn start_daemon(binary: &Path, operator: &Operator, dir: &Path) -> Result<Daemon, String> {
    let stderr = dir.join(format!("watch-{}.err", operator.account.name));
    let mut cmd = operator.command(binary, &["watch", "--poll", "--no-notify"]);
    cmd.stdout(Stdio::piped())
        .stderr(fs::File::create(&stderr).map_err(|e| e.to_string())?);
    let mut child = cmd
        .spawn()
        .map_err(|e| format!("cannot start {}: {e}", binary.display()))?;
    let stdout = child.stdout.take().expect("stdout is piped");
    let log = Arc::new(Mutex::new(DaemonLog::default()));
    let sink = log.clone();
    let reader = std::thread::spawn(move || {
        for line in std::io::BufReader::new(stdout)
            .lines()
            .map_while(Result::ok)
        {
            let now = Instant::now();
            let mut log = sink.lock().unwrap();
            if let Some(id) = ingested_id(&line) {
                log.ingested.entry(id.to_owned()).or_insert(now);
            }
            log.lines.push((now, line));
        }
    });
    Ok(Daemon {
        running: Running::adopt(child),
        log,
        reader: Some(reader),
        stderr,
    })
}

/// Everything the run started, stopped in reverse order when dropped: daemons, mounts,
/// then sshd.
struct Site {
    daemons: Vec<Daemon>,
    mounts: Vec<Mount>,
    sshd: Sshd,
}

impl Drop for Site {
    fn drop(&mut self) {
        for daemon in &mut self.daemons {
            if let Ok(None) = daemon.running.child.try_wait() {
                daemon.running.stop();
            }
            if let Some(reader) = daemon.reader.take() {
                let _ = reader.join();
            }
        }
        self.mounts.clear();
        // Each unmount ends a login, whose session process the listening sshd reaps:
        // stopping the listener before that would leave them to init.
        let listener = self.sshd.running.child.id();
        wait_for(Duration::from_secs(10), || {
            crate::process::descendants(listener).is_empty()
        });
    }
}

/// One answerer's result.
#[derive(Debug, Clone)]
struct Answered {
    /// When the command ended: for the winner, when its outcome stood.
    finished: Instant,
    code: Option<i32>,
    stdout: String,
    stderr: String,
}

/// Runs the team harness and its checks. `Err` names every violated invariant (up to a
/// limit), or why the set-up failed.
pub fn run(config: &Config) -> Result<Report, String> {
    if let Some(reason) = unavailable() {
        return Err(format!("team mode over sshfs cannot run here: {reason}"));
    }
    let dir = tempfile::Builder::new()
        .prefix("inbox-team-")
        .tempdir()
        .map_err(|e| format!("cannot create a temp dir: {e}"))?;
    let label = format!(
        "team harness (2 operators over sshfs, {} requests, seed {})",
        config.requests, config.seed
    );
    run_in(config, dir.path()).map_err(|message| {
        // Kept, so that the files behind the message can be looked at.
        let kept = dir.keep();
        format!(
            "{label}: {message}\n(spool, homes, databases and logs kept in {})",
            kept.display()
        )
    })
}

fn run_in(config: &Config, root: &Path) -> Result<Report, String> {
    let started = Instant::now();
    // The accounts must reach their homes, the keys' public halves and the mounts.
    chmod(root, 0o755)?;
    let accounts = ensure_accounts()?;
    let (mut site, operators, spool) = start_site(&config.binary, root, &accounts, 0o2770, "")?;
    place_outsider_request(&spool, &accounts)?;

    let mut report = Report {
        seed: config.seed,
        requests: config.requests,
        ..Report::default()
    };
    let mut violations = Vec::new();
    let race_started = Instant::now();
    let logs: Vec<_> = site.daemons.iter().map(|d| d.log.clone()).collect();
    let (placed, results) =
        place_and_race(config, &operators, &logs, &mut report, &mut violations)?;
    report.race_time = race_started.elapsed();

    // Both inboxes, polling through their own mounts, catch up with every settle.
    let decided = Instant::now();
    let caught_up = wait_for(Duration::from_secs(180), || {
        site.daemons.iter().all(|d| {
            let log = d.log.lock().unwrap();
            let settles = settle_lines(&log.lines);
            placed.iter().all(|p| settles.contains_key(p.id.as_str()))
        })
    });
    report.catch_up = decided.elapsed();
    if !caught_up {
        violations.push(
            "180 s after the last race, an inbox had still not logged the settle of every \
             request"
                .to_owned(),
        );
    }
    // The outsider's request: each inbox reports it as a problem and never ingests it.
    let refused = wait_for(Duration::from_secs(120), || {
        site.daemons.iter().all(|d| {
            d.log
                .lock()
                .unwrap()
                .lines
                .iter()
                .any(|(_, l)| l.contains(OUTSIDER_REQUEST) && !l.contains("ingested"))
        })
    });
    for (k, daemon) in site.daemons.iter().enumerate() {
        let log = daemon.log.lock().unwrap();
        for (_, line) in log
            .lines
            .iter()
            .filter(|(_, l)| l.contains(OUTSIDER_REQUEST))
        {
            report
                .outsider_refusals
                .push(format!("{}: {}", OPERATORS[k], without_time(line)));
        }
    }
    if !refused {
        violations.push(format!(
            "not every inbox said anything about {OUTSIDER}'s request within 120 s (saw: {:?})",
            report.outsider_refusals
        ));
    }

    // Each operator's own inbox, through its own CLI, against the spool.
    let snapshot = Snapshot::read(&spool)?;
    for operator in &operators {
        check_listing(config, operator, &placed, &snapshot, &mut violations);
        check_outsider_answer(config, operator, &spool, &mut report, &mut violations);
    }

    // Stop the daemons (they must end cleanly), then look at everything at rest.
    for (k, daemon) in site.daemons.iter_mut().enumerate() {
        let code = daemon.running.stop();
        if code != Some(0) {
            violations.push(format!(
                "{}'s inbox did not stop with exit 0 on SIGTERM but {code:?}; its stderr:\n{}",
                OPERATORS[k],
                tail(&daemon.stderr)
            ));
        }
        if let Some(reader) = daemon.reader.take() {
            let _ = reader.join();
        }
        let log = daemon.log.lock().unwrap();
        let lines: Vec<&str> = log.lines.iter().map(|(_, l)| l.as_str()).collect();
        let _ = fs::write(
            root.join(format!("watch-{}.out", OPERATORS[k])),
            lines.join("\n") + "\n",
        );
        for line in fs::read_to_string(&daemon.stderr)
            .unwrap_or_default()
            .lines()
        {
            let line = without_colours(line);
            if line.contains("WARN") || line.contains("ERROR") {
                *report
                    .warnings
                    .entry(line.trim().chars().take(160).collect())
                    .or_default() += 1;
            }
        }
    }
    let snapshot = Snapshot::read(&spool)?;
    check_outcomes(
        &accounts,
        &spool,
        &placed,
        &snapshot,
        &results,
        &mut report,
        &mut violations,
    )?;
    check_modes(&spool, accounts.team_gid, &mut violations)?;
    for (k, daemon) in site.daemons.iter().enumerate() {
        check_daemon_log(
            k,
            &daemon.log.lock().unwrap(),
            &placed,
            &results,
            &snapshot,
            &mut report,
            &mut violations,
        );
    }
    let mut ours = Snapshot::read(&spool)?;
    ours.requests.remove(OUTSIDER_REQUEST);
    ours.outcomes.remove(OUTSIDER_REQUEST);
    for operator in &operators {
        check_db(
            &operator.db,
            &ours,
            &format!("{}'s database", operator.account.name),
            &mut violations,
        )?;
    }
    drop(site);
    let leftover: Vec<String> = operators
        .iter()
        .filter(|o| is_mounted(&o.mount))
        .map(|o| o.mount.display().to_string())
        .collect();
    if !leftover.is_empty() {
        violations.push(format!("still mounted after the run: {leftover:?}"));
    }
    report.elapsed = started.elapsed();
    if violations.is_empty() {
        Ok(report)
    } else {
        Err(failure(&violations, root, &report))
    }
}

/// The server's spool (`mode`, and the team's `policy` in it unless empty), mounted once per
/// operator, and each operator's inbox (`watch --poll`) started and ready.
fn start_site(
    binary: &Path,
    root: &Path,
    accounts: &Accounts,
    mode: u32,
    policy: &str,
) -> Result<(Site, Vec<Operator>, PathBuf), String> {
    let sshd = start_sshd(root, accounts)?;
    // The server side: a group directory such as an administrator would make for a team.
    // The inbox creates the spool's own directories in it.
    let server = root.join("server");
    mkdir(&server)?;
    chmod(&server, 0o755)?;
    let spool = server.join("team-spool");
    mkdir(&spool)?;
    chown(&spool, 0, accounts.team_gid)?;
    chmod(&spool, mode)?;
    if !policy.is_empty() {
        // The team's policy, the spool owner's (root's) and writable by nobody else.
        let path = spool.join("team-policy.toml");
        fs::write(&path, policy).map_err(|e| format!("{}: {e}", path.display()))?;
        chmod(&path, 0o644)?;
    }
    let mut site = Site {
        daemons: Vec::new(),
        mounts: Vec::new(),
        sshd,
    };
    let mut operators = Vec::new();
    for (k, account) in accounts.operators.iter().enumerate() {
        let mount = mount(root, &site.sshd, account, &spool)?;
        let home = root.join(format!("home-{}", account.name));
        mkdir(&home)?;
        chown(&home, account.uid, account.gid)?;
        chmod(&home, 0o700)?;
        operators.push(Operator {
            account: account.clone(),
            letter: LETTERS[k],
            mount: mount.point.clone(),
            db: home.join("inbox.sqlite3"),
            home,
        });
        site.mounts.push(mount);
    }
    for operator in &operators {
        site.daemons.push(start_daemon(binary, operator, root)?);
    }
    for (k, daemon) in site.daemons.iter().enumerate() {
        let ready = wait_for(Duration::from_secs(60), || {
            daemon.log.lock().unwrap().contains(" ready: ")
        });
        if !ready {
            return Err(format!(
                "{}'s inbox did not get ready; its stderr:\n{}",
                OPERATORS[k],
                tail(&daemon.stderr)
            ));
        }
    }
    for area in ["tmp", "questions", "answers", "cancel"] {
        if !spool.join(area).is_dir() {
            return Err(format!(
                "the inboxes are ready but the spool has no {area}/ on the server side"
            ));
        }
    }
    Ok((site, operators, spool))
}

/// A log line without its terminal colour sequences (`ESC [ ... m`).
fn without_colours(line: &str) -> String {
    let mut plain = String::with_capacity(line.len());
    let mut chars = line.chars();
    while let Some(c) = chars.next() {
        if c == '\u{1b}' {
            for c in chars.by_ref() {
                if c.is_ascii_alphabetic() {
                    break;
                }
            }
        } else {
            plain.push(c);
        }
    }
    plain
}

/// `<RFC 3339 time> rest` → `rest`.
fn without_time(line: &str) -> &str {
    match line.split_once(' ') {
        Some((time, rest)) if time.contains('T') && time.contains(':') => rest,
        _ => line,
    }
}

fn request_body(id: &str) -> String {
    json!({"inbox": 1, "id": id, "title": format!("team {id}"),
        "source": {"app": "team-harness"},
        "questions": [{"id": "pick", "question": "Which operator answers?", "type": "choice",
            "options": LETTERS}]})
    .to_string()
}

/// A request file owned by the outsider (as a former member, or root moving a file in,
/// would leave it), placed on the server side: the only way an account without write
/// access to the group directory gets a file into it.
fn place_outsider_request(spool: &Path, accounts: &Accounts) -> Result<(), String> {
    let tmp = spool
        .join("tmp")
        .join(format!("{OUTSIDER_REQUEST}.harness"));
    fs::write(&tmp, request_body(OUTSIDER_REQUEST)).map_err(|e| e.to_string())?;
    chown(&tmp, accounts.outsider.uid, accounts.team_gid)?;
    chmod(&tmp, 0o640)?;
    fs::rename(
        &tmp,
        spool
            .join("questions")
            .join(format!("{OUTSIDER_REQUEST}.json")),
    )
    .map_err(|e| e.to_string())
}

/// Each request's two answerers' results (operator k's at index k), by request id.
type Races = BTreeMap<String, Vec<Answered>>;

/// A request placed by the harness: its id, which operator placed it, and when `ask`
/// returned.
#[derive(Debug, Clone)]
struct Placed {
    id: String,
    placer: usize,
    at: Instant,
}

/// Places every request (each through one operator's `ask`) while workers race both
/// operators' `answer` on each request once both inboxes have reported it, as two people
/// would answer what their inboxes show them. Returns what was placed and each request's
/// two answerers' results.
fn place_and_race(
    config: &Config,
    operators: &[Operator],
    logs: &[Arc<Mutex<DaemonLog>>],
    report: &mut Report,
    violations: &mut Vec<String>,
) -> Result<(Vec<Placed>, Races), String> {
    let queue: Mutex<Vec<Placed>> = Mutex::new(Vec::new());
    let placing_done = AtomicBool::new(false);
    let results: Mutex<Races> = Mutex::new(BTreeMap::new());
    let problems: Mutex<Vec<String>> = Mutex::new(Vec::new());
    let mut placed = Vec::new();
    let mut rng = fastrand::Rng::with_seed(config.seed);
    // The first request both inboxes have reported (or that waited too long), off the queue.
    let take_ready = || -> Option<Placed> {
        let mut queue = queue.lock().unwrap();
        let position = queue.iter().position(|job| {
            let seen = logs
                .iter()
                .all(|log| log.lock().unwrap().ingested.contains_key(&job.id));
            if !seen && job.at.elapsed() > INGEST_PATIENCE {
                problems.lock().unwrap().push(format!(
                    "{} was not reported by both inboxes within {} s of being placed",
                    job.id,
                    INGEST_PATIENCE.as_secs()
                ));
                return true;
            }
            seen
        })?;
        Some(queue.remove(position))
    };
    std::thread::scope(|scope| -> Result<(), String> {
        struct Done<'a>(&'a AtomicBool);
        impl Drop for Done<'_> {
            fn drop(&mut self) {
                self.0.store(true, Ordering::SeqCst);
            }
        }
        let done = Done(&placing_done);
        let workers: Vec<_> = (0..config.workers)
            .map(|_| {
                scope.spawn(|| loop {
                    match take_ready() {
                        Some(job) => {
                            let answered = race(config, operators, &job.id, &problems);
                            results.lock().unwrap().insert(job.id, answered);
                        }
                        None if placing_done.load(Ordering::SeqCst)
                            && queue.lock().unwrap().is_empty() =>
                        {
                            return
                        }
                        None => std::thread::sleep(Duration::from_millis(5)),
                    }
                })
            })
            .collect();
        for n in 0..config.requests {
            let id = format!("t{n:05}");
            let placer = rng.usize(0..operators.len());
            let mut cmd = operators[placer].command(&config.binary, &["ask", "-"]);
            let out = output_with_input(&mut cmd, request_body(&id).as_bytes(), "ask")?;
            if !out.status.success() || String::from_utf8_lossy(&out.stdout).trim() != id {
                return Err(format!(
                    "{} could not place {id} through its mount: exit {:?}, stdout {:?}, \
                     stderr {:?}",
                    OPERATORS[placer],
                    out.status.code(),
                    String::from_utf8_lossy(&out.stdout).trim(),
                    String::from_utf8_lossy(&out.stderr).trim()
                ));
            }
            report.placed_by[placer] += 1;
            let job = Placed {
                id,
                placer,
                at: Instant::now(),
            };
            placed.push(job.clone());
            queue.lock().unwrap().push(job);
            if config.verbose && (n + 1) % 100 == 0 {
                eprintln!(
                    "team: {} placed, {} raced",
                    n + 1,
                    results.lock().unwrap().len()
                );
            }
        }
        drop(done);
        for worker in workers {
            worker
                .join()
                .map_err(|_| "a racing worker panicked".to_owned())?;
        }
        Ok(())
    })?;
    violations.extend(problems.into_inner().unwrap());
    Ok((placed, results.into_inner().unwrap()))
}

/// Starts both operators' `answer` on one request at the same moment; waits for both.
fn race(
    config: &Config,
    operators: &[Operator],
    id: &str,
    problems: &Mutex<Vec<String>>,
) -> Vec<Answered> {
    let mut children = Vec::new();
    for operator in operators {
        let pick = format!("pick={}", operator.letter);
        let mut cmd = operator.command(&config.binary, &["answer", id, "--set", &pick]);
        cmd.stdout(Stdio::piped()).stderr(Stdio::piped());
        match cmd.spawn() {
            Ok(child) => children.push(Some(child)),
            Err(e) => {
                problems.lock().unwrap().push(format!(
                    "cannot start {}'s answer for {id}: {e}",
                    operator.account.name
                ));
                children.push(None);
            }
        }
    }
    children
        .into_iter()
        .map(|child| match child.map(|c| c.wait_with_output()) {
            Some(Ok(out)) => Answered {
                finished: Instant::now(),
                code: out.status.code(),
                stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
                stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
            },
            Some(Err(e)) => Answered {
                finished: Instant::now(),
                code: None,
                stdout: String::new(),
                stderr: format!("cannot wait: {e}"),
            },
            None => Answered {
                finished: Instant::now(),
                code: None,
                stdout: String::new(),
                stderr: "not started".to_owned(),
            },
        })
        .collect()
}

/// `<time> STATUS ID by WHO` lines (see `Event::log_line`), by id: (status, who) each.
fn settle_lines(lines: &[(Instant, String)]) -> BTreeMap<&str, Vec<(&str, &str)>> {
    let mut settles: BTreeMap<&str, Vec<(&str, &str)>> = BTreeMap::new();
    for (_, line) in lines {
        let words: Vec<&str> = line.split(' ').collect();
        if let [_, status, id, "by", who] = words.as_slice() {
            if matches!(
                *status,
                "answered" | "defaulted" | "declined" | "expired" | "rejected"
            ) {
                settles.entry(id).or_default().push((status, who));
            }
        }
    }
    settles
}

/// The account owning a file on the server side.
fn owner_name(path: &Path, accounts: &Accounts) -> Option<String> {
    let uid = fs::metadata(path).ok()?.uid();
    accounts
        .operators
        .iter()
        .chain(std::iter::once(&accounts.outsider))
        .find(|a| a.uid == uid)
        .map(|a| a.name.clone())
        .or_else(|| Some(format!("uid {uid}")))
}

/// One outcome file per request, nothing else; each answered by the owner of its file,
/// with that operator's answer, for this request's bytes; the winner's `answer` exited 0
/// and printed it, the loser's exited 3 naming the winner.
#[allow(clippy::too_many_arguments)]
fn check_outcomes(
    accounts: &Accounts,
    spool: &Path,
    placed: &[Placed],
    snapshot: &Snapshot,
    results: &Races,
    report: &mut Report,
    violations: &mut Vec<String>,
) -> Result<(), String> {
    for id in snapshot.outcomes.keys() {
        if !placed.iter().any(|p| p.id == *id) {
            let by = snapshot.outcomes[id].1["answered_by"].clone();
            violations.push(format!(
                "answers/{id}.json answers no raced request (by {by})"
            ));
        }
    }
    if !snapshot.tombstones.is_empty() {
        violations.push(format!("tombstones appeared: {:?}", snapshot.tombstones));
    }
    let tmp: Vec<String> = fs::read_dir(spool.join("tmp"))
        .map_err(|e| e.to_string())?
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    if !tmp.is_empty() {
        violations.push(format!("files left in tmp/: {tmp:?}"));
    }
    for Placed { id, .. } in placed {
        let Some(outcome) = snapshot.outcome(id) else {
            violations.push(format!("request {id} has no outcome: lost"));
            continue;
        };
        let path = spool.join("answers").join(format!("{id}.json"));
        let owner = owner_name(&path, accounts).unwrap_or_default();
        let Some(k) = OPERATORS.iter().position(|o| *o == owner) else {
            violations.push(format!(
                "answers/{id}.json is owned by {owner}, not an operator"
            ));
            continue;
        };
        let by = outcome["answered_by"].as_str().unwrap_or_default();
        if by != format!("operator:{owner}") {
            violations.push(format!(
                "answers/{id}.json is owned by {owner} but says answered_by {by}"
            ));
        }
        if outcome["status"] != json!("answered")
            || outcome["answers"] != json!({"pick": LETTERS[k]})
        {
            violations.push(format!("answers/{id}.json by {owner} is {outcome}"));
        }
        let expected_sha = inbox_protocol::sha256_hex(&snapshot.requests[id.as_str()].0);
        if outcome["request_sha256"] != json!(expected_sha) {
            violations.push(format!("answers/{id}.json names another request's sha256"));
        }
        let Some(answered) = results.get(id) else {
            violations.push(format!("request {id} was never raced"));
            continue;
        };
        for (j, a) in answered.iter().enumerate() {
            let said = format!(
                "{}'s answer for {id} exited {:?} (stderr: {})",
                OPERATORS[j],
                a.code,
                a.stderr.trim()
            );
            match (a.code, j == k) {
                (Some(0), true) => {
                    report.wins[k] += 1;
                    let printed: Value = serde_json::from_str(&a.stdout).unwrap_or(Value::Null);
                    if printed != *outcome {
                        violations.push(format!(
                            "{said}, printing {}, but the standing outcome is {outcome}",
                            a.stdout.trim()
                        ));
                    }
                }
                (Some(3), false) => match settled_named(&a.stderr) {
                    Some((status, named)) if status == "answered" && named == by => {
                        report.losers_told += 1;
                    }
                    _ => violations.push(format!("{said}, but the winner is {by}")),
                },
                _ => violations.push(format!("{said}; the outcome file is {owner}'s")),
            }
        }
    }
    // The outsider's request is never answered.
    if let Some(outcome) = snapshot.outcome(OUTSIDER_REQUEST) {
        if outcome["status"] != json!("rejected") {
            violations.push(format!("{OUTSIDER}'s request was settled: {outcome}"));
        }
    }
    Ok(())
}

/// Team permissions, on the server side: directories 02770 and files 0640 (at most), all
/// in the team's group.
fn check_modes(spool: &Path, team_gid: u32, violations: &mut Vec<String>) -> Result<(), String> {
    let mut bad = Vec::new();
    for area in ["tmp", "questions", "answers", "cancel"] {
        let dir = spool.join(area);
        let meta = fs::metadata(&dir).map_err(|e| e.to_string())?;
        if meta.mode() & 0o7777 != 0o2770 || meta.gid() != team_gid {
            bad.push(format!(
                "{area}/ is {:o} gid {}",
                meta.mode() & 0o7777,
                meta.gid()
            ));
        }
        for entry in fs::read_dir(&dir).map_err(|e| e.to_string())?.flatten() {
            let meta = entry.metadata().map_err(|e| e.to_string())?;
            if meta.is_file() && (meta.mode() & 0o7137 != 0 || meta.gid() != team_gid) {
                bad.push(format!(
                    "{area}/{} is {:o} gid {}",
                    entry.file_name().to_string_lossy(),
                    meta.mode() & 0o7777,
                    meta.gid()
                ));
            }
        }
    }
    if !bad.is_empty() {
        violations.push(format!(
            "{} files or directories without team permissions (directories 2770, files \
             0640 at most, group {TEAM_GROUP}), e.g. {:?}",
            bad.len(),
            &bad[..bad.len().min(5)]
        ));
    }
    Ok(())
}

/// Each daemon logged exactly one settle per request, naming the winner; its lag.
fn check_daemon_log(
    k: usize,
    log: &DaemonLog,
    placed: &[Placed],
    results: &Races,
    snapshot: &Snapshot,
    report: &mut Report,
    violations: &mut Vec<String>,
) {
    let settles = settle_lines(&log.lines);
    for Placed { id, .. } in placed {
        let Some(outcome) = snapshot.outcome(id) else {
            continue;
        };
        let winner = outcome["answered_by"].as_str().unwrap_or_default();
        match settles.get(id.as_str()).map(Vec::as_slice) {
            Some([("answered", who)]) if *who == winner => {}
            other => violations.push(format!(
                "{}'s inbox logged the settle of {id} as {other:?}; the outcome is answered \
                 by {winner}",
                OPERATORS[k]
            )),
        }
    }
    for (_, line) in &log.lines {
        if line.contains(" problem ") && !line.contains(OUTSIDER_REQUEST) {
            violations.push(format!("{}'s inbox logged: {line}", OPERATORS[k]));
        }
    }
    // Outcome written (the winner's answer returned) → settle logged, by who won.
    let mut logged: BTreeMap<&str, Instant> = BTreeMap::new();
    for (at, line) in &log.lines {
        if let [_, "answered", id, "by", _] = line.split(' ').collect::<Vec<_>>().as_slice() {
            logged.entry(id).or_insert(*at);
        }
    }
    for (side, own) in [(0, true), (1, false)] {
        let mut lags: Vec<Duration> = results
            .iter()
            .filter_map(|(id, answered)| {
                let winner = answered.iter().position(|a| a.code == Some(0))?;
                ((winner == k) == own).then_some(())?;
                Some(
                    logged
                        .get(id.as_str())?
                        .saturating_duration_since(answered[winner].finished),
                )
            })
            .collect();
        lags.sort();
        if let (Some(median), Some(max)) = (lags.get(lags.len() / 2), lags.last()) {
            report.settle_lag[k][side] = (*median, *max);
        }
    }
    // Placed (ask returned) → reported ingested by this inbox, by whose mount placed it.
    for (side, own) in [(0, true), (1, false)] {
        let mut lags: Vec<Duration> = placed
            .iter()
            .filter(|p| (p.placer == k) == own)
            .filter_map(|p| Some(log.ingested.get(&p.id)?.saturating_duration_since(p.at)))
            .collect();
        lags.sort();
        if let (Some(median), Some(max)) = (lags.get(lags.len() / 2), lags.last()) {
            report.ingest_lag[k][side] = (*median, *max);
        }
    }
}

/// `<time> ingested ID: "title" ...` → ID.
fn ingested_id(line: &str) -> Option<&str> {
    let rest = line.split_once(' ')?.1.strip_prefix("ingested ")?;
    Some(rest.split_once(':')?.0)
}

/// The operator's own `list --all --json` agrees with the spool: every request answered
/// by the outcome file's author, and the outsider's request not listed as answerable.
fn check_listing(
    config: &Config,
    operator: &Operator,
    placed: &[Placed],
    snapshot: &Snapshot,
    violations: &mut Vec<String>,
) {
    let name = &operator.account.name;
    let out = match operator
        .command(&config.binary, &["list", "--all", "--json"])
        .stdin(Stdio::null())
        .output()
    {
        Ok(out) => out,
        Err(e) => {
            violations.push(format!("cannot run {name}'s list: {e}"));
            return;
        }
    };
    let listed: Vec<Value> = match serde_json::from_slice(&out.stdout) {
        Ok(Value::Array(rows)) if out.status.success() => rows,
        _ => {
            violations.push(format!(
                "{name}'s list --all --json exited {:?}: {} {}",
                out.status.code(),
                String::from_utf8_lossy(&out.stdout).trim(),
                String::from_utf8_lossy(&out.stderr).trim()
            ));
            return;
        }
    };
    let by_id: BTreeMap<&str, &Value> = listed
        .iter()
        .filter_map(|row| Some((row["id"].as_str()?, row)))
        .collect();
    for Placed { id, .. } in placed {
        let Some(outcome) = snapshot.outcome(id) else {
            continue;
        };
        match by_id.get(id.as_str()) {
            Some(row)
                if row["state"] == json!("answered")
                    && row["answered_by"] == outcome["answered_by"] => {}
            Some(row) => violations.push(format!(
                "{name}'s inbox lists {id} as {} by {}; the spool says answered by {}",
                row["state"], row["answered_by"], outcome["answered_by"]
            )),
            None => violations.push(format!("{name}'s inbox does not list {id}")),
        }
    }
    if let Some(row) = by_id.get(OUTSIDER_REQUEST) {
        if row["state"] == json!("pending") || row["state"] == json!("answered") {
            violations.push(format!(
                "{name}'s inbox lists {OUTSIDER}'s request as {}: it must be refused",
                row["state"]
            ));
        }
    }
}

/// An operator told to answer the outsider's request is refused, and nothing is written.
fn check_outsider_answer(
    config: &Config,
    operator: &Operator,
    spool: &Path,
    report: &mut Report,
    violations: &mut Vec<String>,
) {
    let name = &operator.account.name;
    let pick = format!("pick={}", operator.letter);
    let out = operator
        .command(
            &config.binary,
            &["answer", OUTSIDER_REQUEST, "--set", &pick],
        )
        .stdin(Stdio::null())
        .output();
    match out {
        Ok(out) if out.status.code() == Some(0) => violations.push(format!(
            "{name} answered {OUTSIDER}'s request: {}",
            String::from_utf8_lossy(&out.stdout).trim()
        )),
        Ok(out) => report.outsider_refusals.push(format!(
            "{name}'s `answer` exited {:?}: {}",
            out.status.code(),
            String::from_utf8_lossy(&out.stderr).trim()
        )),
        Err(e) => violations.push(format!("cannot run {name}'s answer: {e}")),
    }
    let outcome = spool
        .join("answers")
        .join(format!("{OUTSIDER_REQUEST}.json"));
    if let Ok(text) = fs::read_to_string(outcome) {
        if !text.contains("\"rejected\"") {
            violations.push(format!("{OUTSIDER}'s request has an outcome: {text}"));
        }
    }
}

// ---- Assignment and two-person approval (docs/TEAMS.md) ----

/// A member of the team whom the policy assigns nothing: the forger of approvals. It never
/// logs in; it writes on the server side, as itself.
pub const BYSTANDER: &str = "inbox-op-c";

/// The team's policy of [`run_approvals`]: migrations are `inbox-op-a`'s alone; a critical
/// production deploy needs both operators.
pub const APPROVALS_POLICY: &str = r#"# The harness's team policy (docs/TEAMS.md).
[[rule]]
name = "migrations"
title = "*migration*"
assign = ["inbox-op-a"]

[[rule]]
name = "prod-deploys"
title = "*deploy*production*"
priority = "critical"
assign = ["inbox-op-a", "inbox-op-b"]
approvals = 2
"#;

/// What [`run_approvals`] saw.
#[derive(Debug, Clone, Default)]
pub struct ApprovalsReport {
    /// Critical requests settled by two approvals.
    pub runs: usize,
    /// Per run, on the server: from the second approval file appearing to the outcome file
    /// appearing.
    pub completion: Vec<Duration>,
    /// Per run: who wrote the outcome (the account whose approval completed it, or the other
    /// inbox when it saw both first).
    pub completed_by: Vec<String>,
    /// Each inbox's `notified` audit entry for the assigned request, as exported.
    pub notified: Vec<String>,
    /// What `answer` told the operator who is not assigned, and its exit code.
    pub not_assigned: String,
    /// What each inbox lists as problems of the forged approvals.
    pub forged: Vec<String>,
    pub elapsed: Duration,
}

impl ApprovalsReport {
    /// The median of [`ApprovalsReport::completion`].
    pub fn completion_p50(&self) -> Duration {
        let mut sorted = self.completion.clone();
        sorted.sort();
        sorted.get(sorted.len() / 2).copied().unwrap_or_default()
    }
}

impl fmt::Display for ApprovalsReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let ms: Vec<String> = self
            .completion
            .iter()
            .map(|d| format!("{:.1}", d.as_secs_f64() * 1e3))
            .collect();
        writeln!(
            f,
            "team approvals over sshfs: {} critical requests settled by two approvals",
            self.runs
        )?;
        writeln!(
            f,
            "second approval file -> outcome file (server side): p50 {:.1} ms, each [{}] ms; \
             written by {:?}",
            self.completion_p50().as_secs_f64() * 1e3,
            ms.join(", "),
            self.completed_by
        )?;
        for line in &self.notified {
            writeln!(f, "notified: {line}")?;
        }
        writeln!(f, "not assigned: {}", self.not_assigned)?;
        for line in &self.forged {
            writeln!(f, "forged approval: {line}")?;
        }
        write!(f, "elapsed: {:.1} s", self.elapsed.as_secs_f64())
    }
}

/// Two operators (`inbox-op-a`, `inbox-op-b`), each with an inbox of their own over sshfs,
/// on one team spool whose `team-policy.toml` (root's, the spool's owner) is
/// [`APPROVALS_POLICY`]; a third member, [`BYSTANDER`], assigned nothing. Checks:
/// - a migration (assigned to A alone) is announced by A's inbox only: A's audit log has a
///   `notified` entry for it, B's a `notified` entry marked `silent`; B's `answer` is refused
///   (exit 8) and writes nothing, A's counts;
/// - each of `runs` critical deploys, asked with `ask --wait` by A: A's `answer` is an
///   approval (exit 0, "1 of 2"), no outcome yet; B's completes it; the outcome lists both
///   approvers and is owned by the account it names; `ask --wait` takes it (exit 0);
/// - a critical deploy A approved, then two approval files forged by the bystander (one in
///   its own name, one in B's): both inboxes list each as a spool problem saying why, and
///   the request stays pending with no outcome.
pub fn run_approvals(binary: &Path, runs: usize) -> Result<ApprovalsReport, String> {
    if let Some(reason) = unavailable() {
        return Err(format!("team mode over sshfs cannot run here: {reason}"));
    }
    let dir = tempfile::Builder::new()
        .prefix("inbox-approvals-")
        .tempdir()
        .map_err(|e| format!("cannot create a temp dir: {e}"))?;
    approvals_in(binary, runs, dir.path()).map_err(|message| {
        let kept = dir.keep();
        format!(
            "team approvals harness: {message}\n(spool, homes, databases and logs kept in {})",
            kept.display()
        )
    })
}

/// The exit code `answer` gives when the operator is not an assignee (the CLI's
/// `exit::NOT_ASSIGNED`).
const NOT_ASSIGNED: i32 = 8;

fn approvals_in(binary: &Path, runs: usize, root: &Path) -> Result<ApprovalsReport, String> {
    let started = Instant::now();
    chmod(root, 0o755)?;
    // The binary where the accounts can run it (the target dir may be in root's home).
    let copy = root.join("answer-inbox");
    if fs::hard_link(binary, &copy).is_err() {
        fs::copy(binary, &copy).map_err(|e| format!("cannot copy {}: {e}", binary.display()))?;
    }
    let binary = copy.as_path();
    let accounts = ensure_accounts()?;
    let bystander = ensure_account(BYSTANDER, true)?;
    // Sticky, as docs/TEAMS.md advises: only the owner may remove the team's policy.
    let (mut site, operators, spool) =
        start_site(binary, root, &accounts, 0o3770, APPROVALS_POLICY)?;
    let (a, b) = (&operators[0], &operators[1]);
    let logs: Vec<_> = site.daemons.iter().map(|d| d.log.clone()).collect();
    let ingested = |id: &str| {
        wait_for(INGEST_PATIENCE, || {
            logs.iter()
                .all(|log| log.lock().unwrap().ingested.contains_key(id))
        })
    };
    let mut report = ApprovalsReport::default();

    // (a) The migration is A's alone.
    place(
        binary,
        a,
        &approval_request("migration-1", "run the billing migration", "high"),
    )?;
    if !ingested("migration-1") {
        return Err("migration-1 was not reported by both inboxes".into());
    }
    for (operator, silent) in [(a, false), (b, true)] {
        let mut entry = Value::Null;
        wait_for(Duration::from_secs(60), || {
            entry = notified(binary, operator, "migration-1").unwrap_or(Value::Null);
            !entry.is_null()
        });
        if entry.is_null() {
            return Err(format!(
                "{}'s audit log has no notified entry for migration-1",
                operator.account.name
            ));
        }
        if entry["detail"]["silent"].as_bool().unwrap_or(false) != silent {
            return Err(format!(
                "{}'s inbox {} migration-1, assigned to {}: {entry}",
                operator.account.name,
                if silent {
                    "announced"
                } else {
                    "did not announce"
                },
                OPERATORS[0]
            ));
        }
        report
            .notified
            .push(format!("{}: {entry}", operator.account.name));
    }
    let refused = answer(binary, b, "migration-1")?;
    report.not_assigned = format!("exit {:?}: {}", refused.code, refused.stderr.trim());
    if refused.code != Some(NOT_ASSIGNED) || spool.join("answers/migration-1.json").exists() {
        return Err(format!(
            "{} answered migration-1, which is {}'s: {}",
            OPERATORS[1], OPERATORS[0], report.not_assigned
        ));
    }
    let answered = answer(binary, a, "migration-1")?;
    if answered.code != Some(0) || !spool.join("answers/migration-1.json").exists() {
        return Err(format!(
            "the assignee's answer to migration-1 failed: {answered:?}"
        ));
    }

    // (b) Critical deploys: both must approve. All asked first (each inbox takes a while to
    // see a request placed through the other mount), then approved one by one.
    let ids: Vec<String> = (0..runs).map(|k| format!("deploy-{k}")).collect();
    let mut asks = Vec::new();
    for id in &ids {
        let mut cmd = a.command(binary, &["ask", "--wait", "--timeout", "600", "-"]);
        cmd.stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        let mut child = cmd.spawn().map_err(|e| format!("cannot start ask: {e}"))?;
        let body = approval_request(
            id,
            &format!("deploy billing to production ({id})"),
            "critical",
        );
        child
            .stdin
            .take()
            .expect("stdin is piped")
            .write_all(body.as_bytes())
            .map_err(|e| e.to_string())?;
        // Its output is one outcome, which the pipes hold until it is read.
        let stdout = child.stdout.take().expect("stdout is piped");
        let stderr = child.stderr.take().expect("stderr is piped");
        asks.push((Running::adopt(child), stdout, stderr));
    }
    for id in &ids {
        if !ingested(id) {
            return Err(format!("{id} was not reported by both inboxes"));
        }
    }
    for (id, asking) in ids.iter().zip(asks.iter_mut()) {
        let outcome_path = spool.join("answers").join(format!("{id}.json"));
        let first = answer(binary, a, id)?;
        if first.code != Some(0) || !first.stdout.contains("1 of 2") || outcome_path.exists() {
            return Err(format!(
                "A's approval of {id} is not 1 of 2 and pending: {first:?}"
            ));
        }
        let second_path = spool
            .join("approvals")
            .join(format!("{id}+{}.json", OPERATORS[1]));
        let seen = Arc::new(Mutex::new((None::<Instant>, None::<Instant>)));
        let stop = Arc::new(AtomicBool::new(false));
        let watcher = {
            let (seen, stop, outcome_path) = (seen.clone(), stop.clone(), outcome_path.clone());
            let second_path = second_path.clone();
            // On the server side, tightly: when each file appears.
            std::thread::spawn(move || {
                let deadline = Instant::now() + Duration::from_secs(120);
                while !stop.load(Ordering::SeqCst) && Instant::now() < deadline {
                    let now = Instant::now();
                    let mut seen = seen.lock().unwrap();
                    if seen.0.is_none() && second_path.exists() {
                        seen.0 = Some(now);
                    }
                    if seen.1.is_none() && outcome_path.exists() {
                        seen.1 = Some(now);
                        return;
                    }
                    drop(seen);
                    std::thread::sleep(Duration::from_micros(200));
                }
            })
        };
        let second = answer(binary, b, id)?;
        wait_for(Duration::from_secs(60), || seen.lock().unwrap().1.is_some());
        stop.store(true, Ordering::SeqCst);
        let _ = watcher.join();
        if second.code != Some(0) {
            return Err(format!("B's approval of {id} failed: {second:?}"));
        }
        let (Some(approved), Some(settled)) = *seen.lock().unwrap() else {
            return Err(format!(
                "{id}: B's approval file or the outcome never appeared on the server: {second:?}"
            ));
        };
        report
            .completion
            .push(settled.saturating_duration_since(approved));
        let outcome: Value = serde_json::from_slice(
            &fs::read(&outcome_path).map_err(|e| format!("{}: {e}", outcome_path.display()))?,
        )
        .map_err(|e| format!("{id}'s outcome: {e}"))?;
        let by = outcome["answered_by"]
            .as_str()
            .unwrap_or_default()
            .to_owned();
        let owner = owner_name(&outcome_path, &accounts).unwrap_or_default();
        let mut approvers: Vec<&str> = outcome["approvals"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|a| a["by"].as_str())
            .collect();
        approvers.sort();
        let both: Vec<String> = OPERATORS.iter().map(|o| format!("operator:{o}")).collect();
        if outcome["status"] != "answered" || approvers != both || by != format!("operator:{owner}")
        {
            return Err(format!(
                "{id}: the outcome does not name both approvers, or its writer does not own \
                 it (owner {owner}): {outcome}"
            ));
        }
        report.completed_by.push(owner);
        let (running, stdout, stderr) = asking;
        let mut status = None;
        wait_for(Duration::from_secs(60), || {
            status = running.child.try_wait().ok().flatten();
            status.is_some()
        });
        let (mut printed, mut said) = (Vec::new(), String::new());
        if status.is_some() {
            let _ = std::io::Read::read_to_end(stdout, &mut printed);
            let _ = std::io::Read::read_to_string(stderr, &mut said);
        }
        let taken: Value = serde_json::from_slice(&printed).unwrap_or(Value::Null);
        if !status.is_some_and(|s| s.success()) || taken["approvals"] != outcome["approvals"] {
            return Err(format!(
                "ask --wait did not take {id}'s outcome: {status:?}, stdout {:?}, stderr {:?}",
                String::from_utf8_lossy(&printed).trim(),
                said.trim()
            ));
        }
        report.runs += 1;
    }

    // (c) Forged approvals by a member the rule does not name.
    let id = "deploy-forged";
    place(
        binary,
        a,
        &approval_request(id, "deploy billing to production (forged)", "critical"),
    )?;
    if !ingested(id) {
        return Err(format!("{id} was not reported by both inboxes"));
    }
    let first = answer(binary, a, id)?;
    if first.code != Some(0) || !first.stdout.contains("1 of 2") {
        return Err(format!("A's approval of {id} failed: {first:?}"));
    }
    let sha = inbox_protocol::sha256_hex(
        &fs::read(spool.join("questions").join(format!("{id}.json"))).map_err(|e| e.to_string())?,
    );
    for named in [BYSTANDER, OPERATORS[1]] {
        forge_approval(&spool, &bystander, id, named, &sha)?;
    }
    let wanted = [
        (BYSTANDER, "is not among the assignees"),
        (OPERATORS[1], "but the file was written by inbox-op-c"),
    ];
    for operator in &operators {
        let mut problems = Value::Null;
        let shown = wait_for(Duration::from_secs(120), || {
            problems = listed(binary, operator, &["list", "--problems", "--json"]);
            wanted.iter().all(|(named, why)| {
                problem_of(&problems, &format!("{id}+{named}.json"))
                    .is_some_and(|r| r.contains(why))
            })
        });
        if !shown {
            return Err(format!(
                "{}'s inbox does not show both forged approvals as problems: {problems}",
                operator.account.name
            ));
        }
        for (named, _) in wanted {
            let reasons = problem_of(&problems, &format!("{id}+{named}.json")).unwrap_or_default();
            report.forged.push(format!(
                "{} lists {named}'s: {reasons}",
                operator.account.name
            ));
        }
        let rows = listed(binary, operator, &["list", "--all", "--json"]);
        let state = rows
            .as_array()
            .into_iter()
            .flatten()
            .find(|row| row["id"] == id)
            .map(|row| row["state"].clone());
        if state != Some(json!("pending")) {
            return Err(format!(
                "{}'s inbox has {id} as {state:?}, not pending",
                operator.account.name
            ));
        }
    }
    if spool.join("answers").join(format!("{id}.json")).exists() {
        return Err(format!("{id} has an outcome after forged approvals"));
    }

    for (k, daemon) in site.daemons.iter_mut().enumerate() {
        let code = daemon.running.stop();
        if code != Some(0) {
            return Err(format!(
                "{}'s inbox did not stop with exit 0 but {code:?}; its stderr:\n{}",
                OPERATORS[k],
                tail(&daemon.stderr)
            ));
        }
    }
    drop(site);
    report.elapsed = started.elapsed();
    Ok(report)
}

/// A request with one yes/no question, `go`.
fn approval_request(id: &str, title: &str, priority: &str) -> String {
    json!({"inbox": 1, "id": id, "title": title, "priority": priority,
        "source": {"app": "team-harness"},
        "questions": [{"id": "go", "question": "Go ahead?", "type": "confirm"}]})
    .to_string()
}

/// Runs `cmd` with `input` on its standard input; its output, however it ended. `what`
/// names the program when it cannot be started.
fn output_with_input(cmd: &mut Command, input: &[u8], what: &str) -> Result<Output, String> {
    cmd.stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = cmd
        .spawn()
        .map_err(|e| format!("cannot start {what}: {e}"))?;
    child
        .stdin
        .take()
        .expect("stdin is piped")
        .write_all(input)
        .map_err(|e| e.to_string())?;
    child.wait_with_output().map_err(|e| e.to_string())
}

/// `ask -` (placing only) as `operator`.
fn place(binary: &Path, operator: &Operator, body: &str) -> Result<(), String> {
    let mut cmd = operator.command(binary, &["ask", "-"]);
    let out = output_with_input(&mut cmd, body.as_bytes(), "ask")?;
    if !out.status.success() {
        return Err(format!(
            "{} could not place a request: {}",
            operator.account.name,
            String::from_utf8_lossy(&out.stderr).trim()
        ));
    }
    Ok(())
}

/// `answer ID --set go=yes` as `operator`, through its own mount and database.
fn answer(binary: &Path, operator: &Operator, id: &str) -> Result<Answered, String> {
    let out = operator
        .command(binary, &["answer", id, "--set", "go=yes"])
        .stdin(Stdio::null())
        .output()
        .map_err(|e| format!("cannot run answer: {e}"))?;
    Ok(Answered {
        finished: Instant::now(),
        code: out.status.code(),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    })
}

/// A command's JSON output as `operator` (`Null` when it gives none).
fn listed(binary: &Path, operator: &Operator, args: &[&str]) -> Value {
    operator
        .command(binary, args)
        .stdin(Stdio::null())
        .output()
        .ok()
        .and_then(|out| serde_json::from_slice(&out.stdout).ok())
        .unwrap_or(Value::Null)
}

/// The reasons `list --problems --json` gives for the file whose path ends with `name`.
fn problem_of(problems: &Value, name: &str) -> Option<String> {
    problems
        .as_array()?
        .iter()
        .find(|p| p["path"].as_str().is_some_and(|path| path.ends_with(name)))
        .map(|p| p["reasons"].to_string())
}

/// The `notified` audit entry of `operator`'s inbox that names `id`, if there is one yet.
fn notified(binary: &Path, operator: &Operator, id: &str) -> Option<Value> {
    let out = operator
        .command(binary, &["audit", "export"])
        .stdin(Stdio::null())
        .output()
        .ok()?;
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|line| serde_json::from_str::<Value>(line).ok())
        .find(|entry| {
            entry["kind"] == "notified"
                && entry["detail"]["ids"]
                    .as_array()
                    .is_some_and(|ids| ids.iter().any(|i| i == id))
        })
}

/// An approval of `id` in `named`'s name, written on the server side by `forger` as
/// itself (whole into `tmp/`, then linked, as an inbox places one).
fn forge_approval(
    spool: &Path,
    forger: &Account,
    id: &str,
    named: &str,
    sha: &str,
) -> Result<(), String> {
    let body = json!({"inbox": 1, "id": id, "request_sha256": sha,
        "approved_by": format!("operator:{named}"), "approved_at": "2026-12-05T10:00:00Z",
        "answers": {"go": true}, "custom": [], "defaulted": [], "surface": "cli",
        "instance": "forger/01JFORGED00000000000000000"})
    .to_string();
    let tmp = spool.join("tmp").join(format!("forged-{named}"));
    let target = spool.join("approvals").join(format!("{id}+{named}.json"));
    let mut cmd = Command::new(tool("setpriv")?);
    cmd.arg(format!("--reuid={}", forger.name))
        .arg(format!("--regid={}", forger.gid))
        .arg("--init-groups")
        .args([
            "--",
            "/bin/sh",
            "-c",
            "umask 027 && cat > \"$1\" && ln \"$1\" \"$2\" && rm \"$1\"",
            "sh",
        ])
        .arg(&tmp)
        .arg(&target);
    let out = output_with_input(&mut cmd, body.as_bytes(), "setpriv")?;
    if !out.status.success() {
        return Err(format!(
            "{} could not write {}: {}",
            forger.name,
            target.display(),
            String::from_utf8_lossy(&out.stderr).trim()
        ));
    }
    Ok(())
}
