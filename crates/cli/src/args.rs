//! The command line, as clap derive types. Parsing only: what each command does lives in
//! `commands/`.

use std::path::PathBuf;
use std::time::Duration;

use std::sync::OnceLock;

use clap::builder::TypedValueParser;
use clap::parser::ValueSource;
use clap::{ArgMatches, Args, Parser, Subcommand, ValueEnum};
use inbox_app::config::Resolved;

/// The operator's side of a human-in-the-loop gate.
#[derive(Debug, Parser)]
#[command(
    name = "answer-inbox",
    version,
    about = "The operator's side of a human-in-the-loop gate: ask, answer and watch requests in a spool directory.",
    long_about = "The operator's side of a human-in-the-loop gate.\n\n\
        A pipeline or agent that must not go on alone drops a request file with structured \
        questions into a spool directory (or runs `answer-inbox ask`). The inbox queues it, \
        tells the operator, and writes exactly one outcome file back, which the pipeline reads.\n\n\
        Exit codes: 0 success; 1 failure (invalid input, unknown id, I/O); 2 usage error; \
        3 the request is already settled (answer, cancel); 4 the answer is kept, not yet \
        written: the spool would not take it (answer); 5 the request changed: not the version \
        shown (answer); 6 the request is blocked (answer); 7 the unit file is written or removed \
        but no systemd user manager took the change (service); for `ask --wait`: 10 declined, \
        11 expired, 12 rejected, 13 cancelled, 14 the outcome file cannot be trusted, \
        15 a policy settled it (--require-person), 124 timed out.",
    after_help = "The protocol: docs/PROTOCOL.md, or `answer-inbox schema request|outcome`."
)]
pub struct Cli {
    #[command(flatten)]
    pub locations: LocationArgs,

    #[command(subcommand)]
    pub command: Command,
}

/// Where the spool and the database are. Global, so they may follow the subcommand.
#[derive(Debug, Args)]
pub struct LocationArgs {
    /// The spool directory (created when missing) [default: the settings file's spool, else
    /// <XDG data dir>/answer-inbox/spool; see `answer-inbox config`].
    #[arg(
        long,
        global = true,
        env = "ANSWER_INBOX_DIR",
        value_name = "DIR",
        help_heading = "Global options",
        value_parser = path_or_empty()
    )]
    pub spool: Option<PathBuf>,

    /// The inbox's SQLite database, never inside the spool [default: <XDG data
    /// dir>/answer-inbox/inbox.sqlite3 for the default spool, inbox-<digest>.sqlite3 beside it
    /// for another, as the desktop app has it].
    #[arg(
        long,
        global = true,
        env = "ANSWER_INBOX_DB",
        value_name = "FILE",
        help_heading = "Global options",
        value_parser = path_or_empty()
    )]
    pub db: Option<PathBuf>,

    /// Team mode: the spool is shared by the members of GROUP (a setgid group directory,
    /// group-readable files); requests and outcomes from accounts outside the group are
    /// refused. Without it, the settings file's team, else the spool is private to your
    /// account (docs/SECURITY.md).
    #[arg(
        long,
        global = true,
        env = "ANSWER_INBOX_TEAM",
        value_name = "GROUP",
        help_heading = "Global options"
    )]
    pub team: Option<String>,

    /// The operator's policy file (TOML; see docs/POLICY.md) [default: <XDG config
    /// dir>/answer-inbox/policy.toml; without that file the shipped policy applies].
    #[arg(
        long,
        global = true,
        env = "ANSWER_INBOX_POLICY",
        value_name = "FILE",
        help_heading = "Global options",
        value_parser = path_or_empty()
    )]
    pub policy: Option<PathBuf>,

    /// Which of these were typed rather than taken from their variables, and what they
    /// resolve to (`locations`); set by `main` after parsing, not an argument.
    #[arg(skip)]
    pub resolution: Resolution,
}

/// Which location values were typed on the command line (clap merges each flag with its
/// variable), and the resolution, made once: the settings file is read once and a warning
/// about it said once, however many values a command asks for.
#[derive(Debug, Default)]
pub struct Resolution {
    pub(crate) typed: Typed,
    /// Made by `locations::resolved` on first use.
    pub(crate) resolved: OnceLock<Resolved>,
}

#[derive(Debug, Default, Clone, Copy)]
pub(crate) struct Typed {
    pub(crate) spool: bool,
    pub(crate) db: bool,
    pub(crate) policy: bool,
    pub(crate) team: bool,
}

impl Resolution {
    /// Notes which location values the parsed command line got from flags, not variables.
    pub fn from_matches(matches: &ArgMatches) -> Resolution {
        let typed = |id: &str| matches.value_source(id) == Some(ValueSource::CommandLine);
        Resolution {
            typed: Typed {
                spool: typed("spool"),
                db: typed("db"),
                policy: typed("policy"),
                team: typed("team"),
            },
            resolved: OnceLock::new(),
        }
    }
}

#[derive(Debug, Subcommand)]
pub enum Command {
    Check(CheckArgs),
    Ask(AskArgs),
    List(ListArgs),
    Show(ShowArgs),
    Answer(AnswerArgs),
    Cancel(CancelArgs),
    Watch(WatchArgs),
    Schema(SchemaArgs),
    Demo(DemoArgs),
    Mcp(McpArgs),
    Audit(AuditArgs),
    Stats(StatsArgs),
    Policy(PolicyArgs),
    Snooze(SnoozeArgs),
    Unsnooze(UnsnoozeArgs),
    Serve(ServeArgs),
    Devices(DevicesArgs),
    Hook(HookArgs),
    Service(ServiceArgs),
    Config(ConfigArgs),
    Completions(CompletionsArgs),
}

/// Print the shell completion script for bash, zsh, fish, elvish or PowerShell.
#[derive(Debug, Args)]
#[command(
    long_about = "Print the shell completion script on standard output. Packages install \
    them already; after a build from source, load them yourself:\n\n  \
    bash: answer-inbox completions bash > ~/.local/share/bash-completion/completions/answer-inbox\n  \
    zsh:  answer-inbox completions zsh > ~/.zfunc/_answer-inbox (with ~/.zfunc on $fpath)\n  \
    fish: answer-inbox completions fish > ~/.config/fish/completions/answer-inbox.fish"
)]
pub struct CompletionsArgs {
    /// The shell.
    #[arg(value_enum)]
    pub shell: clap_complete::Shell,
}

/// Show where the spool, the database, the policy file, the team and the settings file
/// are, and where each came from.
#[derive(Debug, Args)]
#[command(
    args_conflicts_with_subcommands = true,
    long_about = "Show where the spool, the database, the policy file, the team and the \
    settings file are, and where each came from: a flag (--spool, --db, --policy, --team), \
    its environment variable (ANSWER_INBOX_DIR, ANSWER_INBOX_DB, ANSWER_INBOX_POLICY, \
    ANSWER_INBOX_TEAM), the settings file the desktop app's Settings write, or the default, \
    in that order of precedence. The command line and the app share the settings file, so \
    both use the same spool and open the same database for it. Nothing is created or \
    changed. Exit 1 when a value cannot be had (a settings file whose spool is not an \
    absolute path, no HOME). See docs/CONFIG.md."
)]
pub struct ConfigArgs {
    #[command(subcommand)]
    pub command: Option<ConfigCommand>,

    /// Print one JSON object: each value with its source, and the settings file's state.
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Subcommand)]
pub enum ConfigCommand {
    /// Print the settings file's path only, whether or not it exists.
    Path,
}

/// The headless inbox (`watch`) as a systemd user service: install, uninstall, status.
#[derive(Debug, Args)]
#[command(
    long_about = "The headless inbox (`watch`) as a systemd user service, started with your \
    user manager and restarted when it fails; its log goes to the journal (`journalctl --user \
    -u answer-inbox`).\n\n\
    The .deb ships the unit as /usr/lib/systemd/user/answer-inbox.service: `systemctl --user \
    enable --now answer-inbox` turns it on. `service install` is for other installs: it \
    writes the same unit, running this binary with the --spool, --db, --policy and --team \
    given (or ANSWER_INBOX_*), to <XDG config dir>/systemd/user/answer-inbox.service, which \
    overrides a packaged unit of the same name (systemd's search order); `status` says which \
    is in effect. A user manager runs while you are logged in; `loginctl enable-linger` keeps \
    it running without a session, for a server.\n\n\
    Exit 0 done; 1 failure (a unit file not written by `service install` is refused, \
    systemctl failed); 7 the unit file is written or removed but no systemd user manager \
    could be reached (systemctl missing, or no user session bus, as in most containers): the \
    command says what to run once there is one."
)]
pub struct ServiceArgs {
    #[command(subcommand)]
    pub command: ServiceCommand,
}

#[derive(Debug, Subcommand)]
pub enum ServiceCommand {
    /// Write the user unit for this binary and the locations given, reload the user
    /// manager, and enable and start the service.
    Install(ServiceInstallArgs),
    /// Stop and disable the service, and remove the unit `service install` wrote (no other).
    Uninstall,
    /// Which unit file is in effect (the user's or the packaged one), whether the service is
    /// enabled and running, and its last log lines.
    Status(ServiceStatusArgs),
}

#[derive(Debug, Args)]
pub struct ServiceInstallArgs {
    /// Replace a unit file that `service install` did not write.
    #[arg(long)]
    pub force: bool,

    /// Write the unit and reload the user manager, but do not enable or start the service.
    #[arg(long)]
    pub no_start: bool,

    /// The service polls the directories instead of using inotify (`watch --poll`): for a
    /// spool on a network filesystem.
    #[arg(long)]
    pub poll: bool,

    /// The service sends no desktop notifications (`watch --no-notify`): when the desktop
    /// app, which has answer buttons, announces requests on this spool.
    #[arg(long)]
    pub no_notify: bool,
}

#[derive(Debug, Args)]
pub struct ServiceStatusArgs {
    /// Print the status as one JSON object.
    #[arg(long)]
    pub json: bool,
}

/// Answer an agent's permission hooks from the inbox: `hook claude-code`, `hook codex`.
#[derive(Debug, Args)]
pub struct HookArgs {
    #[command(subcommand)]
    pub agent: HookAgent,
}

#[derive(Debug, Subcommand)]
pub enum HookAgent {
    /// Claude Code's PreToolUse, PermissionRequest or Elicitation hook: ask the operator
    /// whether a tool call may run, or to fill in an MCP server's form.
    #[command(
        long_about = "Claude Code's PreToolUse, PermissionRequest or Elicitation hook: ask \
    the operator whether a tool call may run, or to fill in an MCP server's form.\n\n\
    Reads the hook input (JSON) on standard input and places a request: what the agent wants \
    to do (a Bash command, an Edit's diff, a Write's content, other tools' arguments), with \
    the choices Allow once, Deny (with a reason for Claude) and more. Then waits up to \
    --timeout and prints the decision JSON Claude Code reads.\n\n\
    PermissionRequest: the more are Claude Code's own permission_suggestions, worded as its \
    dialog words them with the exact rule (\"Yes, and don't ask again for: npm test *\"), a \
    rule saved to a settings file also for this session only; the one chosen is returned as \
    updatedPermissions. PreToolUse: one \"for this session\" choice that names what it \
    covers (the exact Bash command, the tool on one file path for Write and Edit, the exact \
    arguments of other tools), kept for that session, at most 24 hours, in \
    <XDG state dir>/answer-inbox/claude-code-sessions/.\n\n\
    Elicitation: the MCP server's form (its requested_schema) is asked field by field; the \
    answers are returned as the form's content (accept), a decline as decline. URL mode or a \
    schema the inbox cannot express prints nothing, and Claude Code shows its own dialog.\n\n\
    Declining the request denies the call with the decline reason. A timeout, an expired \
    request or any error falls back to Claude Code's own prompt, never to allow. Input that \
    is not a PreToolUse, PermissionRequest or Elicitation payload prints nothing and exits 1 \
    (Claude Code asks as usual).\n\n\
    Set it up in ~/.claude/settings.json (examples/claude-code/settings.json). As a \
    PermissionRequest hook it is asked only when Claude Code would show its own dialog:\n  \
    {\"hooks\": {\"PermissionRequest\": [{\"matcher\": \"*\", \"hooks\": [{\"type\": \
    \"command\", \"command\": \"answer-inbox hook claude-code\", \"timeout\": 660}]}]}}\n\
    The same entry under \"Elicitation\" answers MCP forms. Give the hook a `timeout` \
    (seconds) longer than --timeout, or Claude Code stops waiting first."
    )]
    ClaudeCode(AgentHookArgs),
    /// Codex's PermissionRequest hook: ask the operator whether a command Codex wants
    /// approved may run.
    #[command(
        long_about = "Codex's PermissionRequest hook: ask the operator whether a command \
    Codex wants approved may run (Codex 0.124 or later: hooks on by default). Codex's hooks \
    take Claude Code's input fields and, for PermissionRequest, its decision output, so this \
    behaves as `hook claude-code` does: Allow once, Deny (with a reason Codex is told), Allow \
    this exact command (or file, or call) for this session \
    (<XDG state dir>/answer-inbox/codex-sessions/). A timeout, an expired \
    request or any error prints nothing, and Codex shows its own approval prompt. Codex's \
    PreToolUse hook can only block, so it is refused here.\n\n\
    In ~/.codex/config.toml (examples/codex/config.toml):\n  \
    [[hooks.PermissionRequest]]\n  [[hooks.PermissionRequest.hooks]]\n  type = \"command\"\n  \
    command = \"answer-inbox hook codex\"\n  timeout = 660"
    )]
    Codex(AgentHookArgs),
}

#[derive(Debug, Args)]
pub struct AgentHookArgs {
    /// How long to wait for the operator (30s, 10m, 1h); then the request expires and the
    /// agent asks in the terminal.
    #[arg(long, value_name = "DURATION", default_value = "10m", value_parser = parse_duration)]
    pub timeout: Duration,
}

/// Answer from other devices: serve the inbox's page to a browser on your phone or another
/// laptop, with the engine's loop running here.
#[derive(Debug, Args)]
#[command(
    long_about = "Answer from other devices: serve the inbox's own page to a browser on a \
    phone or another laptop, and run the inbox's loop here (as `watch` does). On start it \
    prints `open: <link>`: open that link on the first device to pair it (the link holds a \
    one-time code, good for 10 minutes; `answer-inbox devices pair` makes another). Only \
    paired devices can see or answer anything; `answer-inbox devices` lists and revokes \
    them.\n\nBy default it listens on 127.0.0.1 only, over plain HTTP: reach it through an \
    SSH tunnel (`ssh -L 8765:127.0.0.1:8765 host`) or a reverse proxy that adds TLS \
    (--public-url). With --listen on another address it serves HTTPS with a self-signed \
    certificate made on first start; the pairing link carries its fingerprint, so you can \
    check that your browser shows the same one. See docs/WEB.md."
)]
pub struct ServeArgs {
    /// The address and port to listen on. Anything but loopback is reachable by others on
    /// the network, and is served with TLS only.
    #[arg(long, value_name = "ADDR:PORT", default_value = "127.0.0.1:8765")]
    pub listen: std::net::SocketAddr,

    /// Serve HTTPS with the self-signed certificate on loopback too (always on for other
    /// addresses).
    #[arg(long)]
    pub tls: bool,

    /// Another host name the page is reached by (a DNS name for this machine); may be
    /// repeated. IP addresses and localhost need none.
    #[arg(long = "host", value_name = "NAME")]
    pub hosts: Vec<String>,

    /// The address devices use when it is not the listen address: a reverse proxy's
    /// (https://inbox.example.org) or an SSH tunnel's local end. Links are made with it.
    #[arg(long, value_name = "URL")]
    pub public_url: Option<url::Url>,

    /// Publish each new request to this ntfy topic (https://ntfy.sh/<topic> or your own
    /// server's), with a link to the page and, where the policy allows buttons, answer
    /// buttons that work once. What leaves the machine: the title, who asks and the
    /// question (see --ntfy-titles-only).
    #[arg(long, value_name = "TOPIC_URL", env = "ANSWER_INBOX_NTFY")]
    pub ntfy: Option<String>,

    /// A file holding the ntfy access token (tk_...), for a protected topic. Also read from
    /// ANSWER_INBOX_NTFY_TOKEN.
    #[arg(long, value_name = "FILE")]
    pub ntfy_token_file: Option<PathBuf>,

    /// Send only titles to ntfy: no source, no question text leaves the machine.
    #[arg(long)]
    pub ntfy_titles_only: bool,

    /// Poll the directories instead of using inotify (network filesystems).
    #[arg(long)]
    pub poll: bool,

    /// Do not send desktop notifications on this machine.
    #[arg(long)]
    pub no_notify: bool,

    /// Do not draw the pairing link as a QR code (on standard error) for a phone to scan.
    #[arg(long)]
    pub no_qr: bool,
}

/// The browsers paired with `answer-inbox serve`: list, pair another, rename, revoke.
#[derive(Debug, Args)]
pub struct DevicesArgs {
    #[command(subcommand)]
    pub command: Option<DevicesCommand>,

    /// Print JSON: `list` an array of devices, `rename` and `revoke` the device, `pair`
    /// `{"link": ...}` (each device: id, name, created_at, last_seen_at, revoked_at; times
    /// in RFC 3339, UTC, or null).
    #[arg(long, global = true)]
    pub json: bool,
}

#[derive(Debug, Subcommand)]
pub enum DevicesCommand {
    /// List paired devices, revoked ones too (the default).
    List,
    /// Print a new pairing link for one more device (good for 10 minutes, once), for the
    /// server that last ran with this inbox.
    Pair,
    /// Give a device another name (answers from it are recorded under its name).
    Rename {
        /// The device's id, as `devices` lists it.
        #[arg(allow_hyphen_values = true)]
        id: String,
        name: String,
    },
    /// Revoke a device: its browser can do nothing more, at once, even with its page open.
    Revoke {
        /// The device's id, as `devices` lists it.
        #[arg(allow_hyphen_values = true)]
        id: String,
    },
}

/// The operator's policy: check it, see which rule a request meets, print it.
#[derive(Debug, Args)]
#[command(
    long_about = "The operator's policy: which askers may settle their requests themselves \
    (autonomous mode), what happens after a delay, escalation, how loudly to notify, quiet \
    hours. A TOML file of rules tried in order, the first match applies (docs/POLICY.md). \
    Without a policy file the shipped policy applies (`policy show --shipped`). A broken \
    file never allows everything: the inbox keeps the last good policy, or holds every \
    request for a person, and says so."
)]
pub struct PolicyArgs {
    #[command(subcommand)]
    pub command: PolicyCommand,
}

#[derive(Debug, Subcommand)]
pub enum PolicyCommand {
    /// Check a policy file (default: the one in force) and report every problem with its
    /// line, and a `warning:` for each assignee that does not exist on this machine. In a
    /// team spool (--team) the team's `<spool>/team-policy.toml` is checked too, as the
    /// inboxes load it, and the last line says which file is in force. Exit 0 when it is
    /// valid (both are), 1 otherwise.
    Check(PolicyCheckArgs),
    /// Which rule a request file meets and what will happen to it. The OS account that
    /// placed it is the file's owner (or --account).
    Explain(PolicyExplainArgs),
    /// Print the policy in force (the file, or the shipped policy when there is none).
    Show(PolicyShowArgs),
}

#[derive(Debug, Args)]
pub struct PolicyCheckArgs {
    /// The policy file to check [default: --policy, ANSWER_INBOX_POLICY or the default place].
    #[arg(value_name = "FILE")]
    pub file: Option<PathBuf>,

    /// Print the result as JSON: `{"file", "valid", "shipped", "rules": [names],
    /// "problems": [{"line", "column", "message"}], "warnings": [the same], "governs"}`
    /// (`shipped`: no policy file, so the shipped policy applies; `governs`: the file in
    /// force, or "the shipped policy"); in a team spool with a team file, `"team"` holds
    /// its report of the same shape. Same exit codes.
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Args)]
pub struct PolicyExplainArgs {
    /// The request file; `-` reads standard input.
    #[arg(value_name = "REQUEST_FILE")]
    pub file: PathBuf,

    /// Judge it as placed by this OS account [default: the file's owner].
    #[arg(long, value_name = "NAME")]
    pub account: Option<String>,

    /// Print the verdict as JSON.
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Args)]
pub struct PolicyShowArgs {
    /// Print the shipped policy, whatever is in force (a starting point for your own file).
    #[arg(long)]
    pub shipped: bool,
}

/// Who answers how fast: per source and per operator, over a period (default 30 days).
#[derive(Debug, Args)]
#[command(
    long_about = "Who answers how fast, from the inbox's database: for the requests settled \
    in a period (default: the last 30 days), per source (the request's `source.app`) and per \
    operator (the OS account that answered): how many, how many were answered, declined, \
    expired or cancelled, and the median and 90th percentile of the time from a request's \
    placing to a person's answer or decline. An operator's count is their answers, declines \
    and approvals (docs/TEAMS.md: each approver of a request that needed several counts, \
    timed by their own approval); their expired count is the requests assigned to them that \
    expired. Decisions by a policy (defaults, expiry) count for the source but have no time \
    to answer. Requests rejected as invalid are not counted. Exit 1 for a period that cannot \
    be read.",
    after_help = "Examples:\n  \
        answer-inbox stats\n  \
        answer-inbox stats --since 7d\n  \
        answer-inbox stats --since 2026-11-01 --json"
)]
pub struct StatsArgs {
    /// The period's start: a duration back from now (`7d`, `12h`, `90m`, `2weeks`) or a
    /// date (`2026-11-01`, local midnight; or RFC 3339, `2026-11-01T09:00:00Z`).
    #[arg(long, value_name = "DURATION|DATE", default_value = "30d")]
    pub since: String,

    /// Print one JSON object: `{"since", "until", "sources": [{"app", "count", "answered",
    /// "declined", "expired", "cancelled", "median_ms", "p90_ms"}], "operators":
    /// [{"operator", "count", "answered", "declined", "expired", "median_ms", "p90_ms"}]}`
    /// (`app` null for requests that name none; times null where no person decided).
    #[arg(long)]
    pub json: bool,
}

/// Snooze a pending request: it leaves the pending list and the tray count and is
/// announced again when the snooze ends.
#[derive(Debug, Args)]
#[command(
    long_about = "Snooze a pending request for a while: it leaves the pending list \
    and the tray count, and is announced again when the snooze ends. A snooze never answers, \
    and never reaches past the request's own expiry: it is cut to end there, and the output \
    says so. `list --snoozed` shows snoozed requests; `unsnooze ID` ends a snooze now."
)]
pub struct SnoozeArgs {
    /// The request id.
    pub id: String,

    /// How long: 30m, 2h, 1h 30m, 45s.
    #[arg(value_name = "DURATION", value_parser = parse_duration)]
    pub duration: Duration,
}

/// End a request's snooze now: it is pending again.
#[derive(Debug, Args)]
pub struct UnsnoozeArgs {
    /// The request id.
    pub id: String,
}

/// Validate request files without placing them.
#[derive(Debug, Args)]
#[command(long_about = "Validate request files without placing them.\n\n\
    Every problem of every file is listed, each with a JSON pointer into the file. A file in a \
    directory named `questions` (a spool file) must also carry a valid id in its name, and an \
    `id` in its body must equal that name. Exit 0 when every file is valid, 1 otherwise \
    (also when a file cannot be read).")]
pub struct CheckArgs {
    /// Request files to check; `-` reads standard input.
    #[arg(required = true, value_name = "FILE")]
    pub files: Vec<PathBuf>,

    /// Print a JSON array of {file, valid, errors: [{pointer, message}]} instead of text.
    #[arg(long)]
    pub json: bool,
}

/// Place a request in the spool and print its id; optionally wait for its outcome.
#[derive(Debug, Args)]
#[command(long_about = "Place a request in the spool and print its id.\n\n\
    The request is validated first; an invalid one is not placed (its problems go to standard \
    error; exit 1, or 12 with --wait). Its id is the body's `id`, else --id, else a new ULID.\n\n\
    With --wait, the id goes to standard error and the command blocks until the outcome \
    arrives, then prints the outcome JSON on standard output and exits: 0 answered or \
    defaulted, 10 declined, 11 expired, 12 rejected, 13 cancelled by its asker, 14 an outcome \
    file that cannot be trusted (invalid, for another version, or not written by the account it \
    names; it is not an answer), 15 settled by a policy with --require-person, 124 when \
    --timeout passed first (the request stays pending).")]
pub struct AskArgs {
    /// The request file; `-` reads standard input.
    #[arg(value_name = "FILE|-")]
    pub file: PathBuf,

    /// The request id, when the body has none (it must equal the body's `id` if both exist).
    #[arg(long, value_name = "ID")]
    pub id: Option<String>,

    /// Block until the outcome arrives and print it as JSON; the exit code tells the status.
    #[arg(long)]
    pub wait: bool,

    /// With --wait: give up after SECS seconds (fractions allowed) and exit 124.
    #[arg(long, value_name = "SECS", requires = "wait", value_parser = parse_seconds)]
    pub timeout: Option<Duration>,

    /// With --wait: only a person's decision counts. When a policy (autonomous mode,
    /// expiry) settled the request with its defaults, print the outcome and exit 15.
    #[arg(long, requires = "wait")]
    pub require_person: bool,
}

/// List pending requests (with --all, settled and cancelled ones too).
#[derive(Debug, Args)]
#[command(
    long_about = "List pending requests, most urgent first, then oldest first.\n\n\
    The spool is scanned first, so requests placed while no inbox ran are listed too. With \
    --all, settled and cancelled requests follow, newest first. Files in the spool that are \
    not read (a link, a FIFO, a directory, a bad name, a second hard link, another account's \
    file) are listed after the requests, under Problems. Requests whose policy rule assigns \
    people (docs/TEAMS.md) are listed again under Assigned: to whom, whether you are one \
    (or may take it over), the approvals so far and how long each has waited."
)]
pub struct ListArgs {
    /// Also list settled and cancelled requests.
    #[arg(long, conflicts_with_all = ["snoozed", "problems"])]
    pub all: bool,

    /// List the snoozed requests instead (see `snooze`), each with when it returns.
    #[arg(long, conflicts_with = "problems")]
    pub snoozed: bool,

    /// List only the files in the spool that are not read, each with why (with --json, an
    /// array of `{"path", "reasons", "seen_at"}`, as the window's Problems view has them).
    #[arg(long)]
    pub problems: bool,

    /// Print a JSON array of request summaries (each with `id`) instead of a table. A
    /// pending request that asks the same questions as others (see `answer --alike`) has
    /// `"alike": {"fingerprint": HEX, "size": N}`: equal fingerprints are one group of N.
    /// Each row has `waited_ms` (placed to settled, or to now); one whose policy rule
    /// assigns people has `assignees`, `approvals_needed`, `approvals` (`{by, at,
    /// surface}`) and, needing several, `approvals_progress` ("1 of 2: approved by alice").
    #[arg(long)]
    pub json: bool,
}

/// Show one request: its questions, its outcome once settled, and its history.
#[derive(Debug, Args)]
#[command(
    long_about = "Show one request: where it comes from, every question with its id, \
    type, options and default (what `answer --set QID=VALUE` needs), its outcome once settled, \
    and the inbox's log of what happened to it. Exit 1 when there is no such request."
)]
pub struct ShowArgs {
    /// The request id.
    pub id: String,

    /// Print the request, its outcome and its events as one JSON object.
    #[arg(long)]
    pub json: bool,
}

/// Answer or decline a request: writes its outcome file (no daemon needed).
#[derive(Debug, Args)]
#[command(
    long_about = "Answer or decline a request. The answers are checked against the request's \
    questions; the outcome file is written into the spool by this command itself, and the \
    first outcome written wins.\n\n\
    The answer is recorded as `operator:<your OS account>`, the owner of the file written.\n\n\
    Exit 0 written (the outcome JSON goes to standard output); 1 invalid answers (nothing is \
    written; each problem is named), a malformed --answers/--set, or an unknown request; \
    3 already settled (says by whom and how) or cancelled by its asker; 4 kept (the spool \
    would not take the file yet); 5 the request changed: it is not the version you were \
    shown (--version) or its file changed after it was placed, nothing written; 6 blocked: \
    an invalid outcome file or a changed file blocks the request, nothing written; 8 not \
    assigned: the policy rule assigns the request to others (the message names them and says \
    whether the rule allows a take-over), nothing written.\n\n\
    Teams (docs/TEAMS.md): where the rule says `takeover = true`, an answer by someone who is \
    not an assignee is a take-over, recorded as such in the outcome and the audit log; there \
    is no flag for it. Where the rule needs several approvals (`approvals = N`), your answer \
    is your approval: exit 0, and standard output says how far it is (\"approved (1 of 2: \
    approved by alice); it settles when 2 assignees have approved the same answers\"); the \
    outcome is written when the last approval comes in. A decline by any assignee declines.",
    after_help = "Examples:\n  \
        answer-inbox answer deploy-42 --set target=production --set migrate=yes\n  \
        answer-inbox answer pick-7 --set tags=payments --set tags=frontend\n  \
        answer-inbox answer deploy-42 --answers '{\"target\": \"staging\", \"migrate\": false}'\n  \
        answer-inbox answer deploy-42 --version 3f2a9c81d0e4 --set migrate=yes\n  \
        answer-inbox answer deploy-42 --alike --set migrate=yes\n  \
        answer-inbox answer deploy-42 --decline 'not during the freeze'"
)]
#[command(group(clap::ArgGroup::new("response").required(true).args(["answers", "set", "decline"])))]
pub struct AnswerArgs {
    /// The request id.
    pub id: String,

    /// All answers as a JSON object keyed by question id (`@FILE` reads a file, `-` stdin).
    #[arg(long, value_name = "JSON")]
    pub answers: Option<String>,

    /// One answer, QID=VALUE; repeatable. Repeat a QID for a multiple choice; yes/no takes
    /// yes, no, true or false; a choice takes an option (or its label).
    #[arg(long = "set", value_name = "QID=VALUE")]
    pub set: Vec<String>,

    /// Refuse the request, giving the asker this reason (outcome status `declined`).
    #[arg(long, value_name = "REASON")]
    pub decline: Option<String>,

    /// The version of the request you were shown (`show` prints it): its SHA-256, or the
    /// first 12 or more hex digits. The answer is refused (exit 5) if the request is not
    /// that version. Without it, the answer binds to the version the inbox holds, which is
    /// what `list` and `show` display.
    #[arg(long, value_name = "HASH")]
    pub version: Option<String>,

    /// Answer ID and every other pending request that asks the same questions (`list`
    /// shows these groups) with the same answers. First lists every request it will settle
    /// (id, title, source, version) and asks; then answers each, bound to the version
    /// listed, and prints one line per request. Exit 0 when all were answered, else the
    /// code of the first that was not (3, 4, 5, 6 or 1, as for one request).
    #[arg(long, conflicts_with_all = ["decline", "version"])]
    pub alike: bool,

    /// With --alike: answer without asking. Required when standard input is not a
    /// terminal; without it nothing is answered there.
    #[arg(long, requires = "alike")]
    pub yes: bool,
}

/// Withdraw a pending request (the asker's side): places its cancel tombstone.
#[derive(Debug, Args)]
#[command(
    long_about = "Withdraw a pending request, as its asker: places `cancel/<id>` in the \
    spool. No outcome is written; `ask --wait` on it exits 13. Exit 0 placed (or already \
    cancelled); 3 when the request already has an outcome (it stands); 1 unknown id."
)]
pub struct CancelArgs {
    /// The request id.
    pub id: String,

    /// Why, stored in the tombstone and shown in the inbox's history.
    #[arg(long, value_name = "TEXT", default_value = "")]
    pub reason: String,
}

/// Run the headless inbox: ingest, policies, notifications, one log line per change.
#[derive(Debug, Args)]
#[command(
    long_about = "Run the headless inbox until SIGINT or SIGTERM: ingest new requests, \
    write rejected outcomes for invalid ones, apply autonomous mode and expiry, pick up \
    outcomes and tombstones written by others, and send desktop notifications.\n\n\
    Each state change is printed on standard output as one line: `<RFC 3339 time> <what \
    happened>`. Warnings go to standard error (RUST_LOG tunes them)."
)]
pub struct WatchArgs {
    /// Poll the directories instead of using inotify: for NFS, SMB and other network
    /// filesystems, where change events do not cross machines.
    #[arg(long)]
    pub poll: bool,

    /// Do not send desktop notifications.
    #[arg(long)]
    pub no_notify: bool,

    /// One JSON object per event on standard output (the engine's `Event`, with `at`: when
    /// it was printed), for scripts; progress stays on standard error.
    #[arg(long)]
    pub json: bool,
}

/// Print the JSON Schema of request or outcome files.
#[derive(Debug, Args)]
pub struct SchemaArgs {
    /// Which schema.
    #[arg(value_enum)]
    pub which: SchemaKind,
}

#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum SchemaKind {
    /// A request file (all three shapes).
    Request,
    /// An outcome file.
    Outcome,
}

/// Drop realistic demo requests (both question dialects) into the spool.
#[derive(Debug, Args)]
#[command(
    long_about = "Drop five realistic demo requests into the spool, covering both \
    question dialects and all three request shapes: a production deploy, an ambiguous spec \
    pick, a structured batch, an autonomous nightly cleanup (settled at once by a running \
    inbox) and an approval gate. Ids are fresh on every run; each placed id is printed."
)]
pub struct DemoArgs {}

/// Serve the `ask_operator` tool to AI agents: an MCP server on standard input and output.
#[derive(Debug, Args)]
#[command(
    long_about = "Serve Answer Inbox to AI agents: an MCP (Model Context Protocol) server on \
    standard input and output, with the tool `ask_operator`, and `ask_operator_start` / \
    `ask_operator_wait` for hosts that cut long tool calls.\n\n\
    An agent calls it with a batch of structured questions (yes/no, single or multiple \
    choice, free text). The request is validated and placed in the spool as `ask` does, and \
    the call returns once the request is settled: the operator's answers (as structured \
    content and as text), or a clear decline, expiry or cancel. Invalid questions come back \
    as a tool error naming every problem. While a call waits, the server sends progress \
    notifications if the client asked for them; a call the client cancels, or a client that \
    disconnects, withdraws its request (its tombstone is placed).\n\n\
    Each request says who asks in its `source`: the MCP client's name (app), this session \
    (run), the tool, the host, the working directory and the project (the git repository \
    containing it, else its directory name).\n\n\
    The model cannot choose autonomous mode (settled at once by its own defaults, without a \
    person) unless the operator starts the server with --allow-autonomous.\n\n\
    Add it to an MCP host as a stdio server: command `answer-inbox`, arguments `mcp` (and \
    `--spool DIR` unless the default spool or ANSWER_INBOX_DIR is right). An inbox (`watch` \
    or the desktop app) on the same spool tells the operator. Standard output carries the \
    protocol only; warnings go to standard error.",
    after_help = "Example host configuration (Claude Desktop, Cursor, ...):\n  \
        {\"mcpServers\": {\"answer-inbox\": {\"command\": \"answer-inbox\", \"args\": [\"mcp\"]}}}"
)]
pub struct McpArgs {
    /// The project named in each request's source [default: the git repository containing
    /// the working directory, else the directory's name].
    #[arg(long, env = "ANSWER_INBOX_PROJECT", value_name = "NAME")]
    pub project: Option<String>,

    /// The working directory named in each request's source, for hosts that start servers
    /// elsewhere than the agent works [default: this process's working directory].
    #[arg(long, env = "ANSWER_INBOX_CWD", value_name = "DIR", value_parser = path_or_empty())]
    pub cwd: Option<PathBuf>,

    /// Seconds between progress notifications while a call waits (sent only to clients
    /// that asked for progress).
    #[arg(long, value_name = "SECS", default_value = "5", value_parser = parse_seconds)]
    pub progress_every: Duration,

    /// Seconds past a request's timeout_seconds to wait for an inbox to expire it; then the
    /// call withdraws the request itself and returns `cancelled` (no inbox is running on the
    /// spool, or it is stuck)
    #[arg(long, value_name = "SECS", default_value = "30", value_parser = parse_seconds)]
    pub expiry_grace: Duration,

    /// Let the model choose autonomous mode: the tool then offers `mode`, and a call with
    /// `"mode": "autonomous"` whose questions all have defaults is settled by the inbox with
    /// those defaults, asking no one. Without it, `mode` is not offered and every call is
    /// asked of a person, whatever it sends.
    // No environment variable: an agent's shell must not be able to turn it on.
    #[arg(long)]
    pub allow_autonomous: bool,
}

/// A path that may be empty: `ANSWER_INBOX_DIR=` means "not set", as for most tools, and
/// the default applies (clap's own path parser refuses empty values).
fn path_or_empty() -> impl TypedValueParser<Value = PathBuf> {
    clap::builder::OsStringValueParser::new().map(PathBuf::from)
}

/// Seconds as a non-negative number, fractions allowed.
fn parse_seconds(text: &str) -> Result<Duration, String> {
    let seconds: f64 = text
        .trim()
        .parse()
        .map_err(|_| format!("\"{text}\" is not a number of seconds"))?;
    Duration::try_from_secs_f64(seconds)
        .map_err(|_| format!("\"{text}\" is not a usable number of seconds"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;

    #[test]
    fn the_command_line_is_well_formed() {
        Cli::command().debug_assert();
    }

    #[test]
    fn seconds_parse() {
        assert_eq!(parse_seconds("1.5"), Ok(Duration::from_millis(1500)));
        assert_eq!(parse_seconds("3"), Ok(Duration::from_secs(3)));
        assert!(parse_seconds("-1").is_err());
        assert!(parse_seconds("soon").is_err());
    }
}

/// The audit log: every event, hash-chained so that history cannot be rewritten quietly.
#[derive(Debug, Args)]
#[command(
    long_about = "The audit log: every event the inbox records (ingested, notified, \
    answered, defaulted, declined, expired, cancelled, rejected, blocked, ...) in a hash chain: \
    each entry carries the hash of the one before, so an entry edited, deleted or moved is \
    detected. A whole chain rewritten with new hashes is detected only against a head hash kept \
    elsewhere (`verify` prints it; give it back with --head). See docs/SECURITY.md."
)]
pub struct AuditArgs {
    #[command(subcommand)]
    pub command: AuditCommand,
}

#[derive(Debug, Subcommand)]
pub enum AuditCommand {
    /// Write the whole log as JSON Lines, one entry a line, oldest first.
    Export(AuditExportArgs),
    /// Check the chain. Exit 0 intact (its length and head hash on standard output); 1 broken
    /// (the first broken entry, by sequence number, and why, on standard error).
    Verify(AuditVerifyArgs),
}

#[derive(Debug, Args)]
pub struct AuditExportArgs {
    /// Write to FILE instead of standard output.
    #[arg(long, short, value_name = "FILE")]
    pub output: Option<PathBuf>,
}

#[derive(Debug, Args)]
pub struct AuditVerifyArgs {
    /// Check an export (from `audit export`) instead of the database; `-` reads standard
    /// input.
    #[arg(long, value_name = "FILE")]
    pub file: Option<PathBuf>,

    /// A head hash printed by an earlier `verify`: it must still be in the chain (a log only
    /// grows), which detects a chain rewritten whole or cut short.
    #[arg(long, value_name = "HASH")]
    pub head: Option<String>,

    /// Print the result as JSON on standard output, intact or not: `{"intact": true,
    /// "entries", "head"}` or `{"intact": false, "seq", "fault", "message"}` (`seq` null
    /// when an export cannot be read as one). Same exit codes.
    #[arg(long)]
    pub json: bool,
}

/// A duration as people write it ("30m", "1h 30m"): at least one second.
fn parse_duration(text: &str) -> Result<Duration, String> {
    let duration = humantime::parse_duration(text.trim())
        .map_err(|error| format!("\"{text}\" is not a duration like 30m, 2h or 1h 30m: {error}"))?;
    if duration < Duration::from_secs(1) {
        return Err(format!("\"{text}\" is shorter than a second"));
    }
    Ok(duration)
}
