//! `service install | uninstall | status`: the headless inbox (`watch`) as a systemd user
//! service, for installs from source (the .deb ships the same unit, assets/systemd/, to
//! /usr/lib/systemd/user/).
//!
//! `install` writes the shipped unit with its `ExecStart=` naming the running binary and the
//! locations given, to `<XDG config dir>/systemd/user/`, the user's own unit directory: a
//! file there takes precedence over the packaged one of the same name (systemd's search
//! order), so the two never run side by side. Everything that needs the user manager goes
//! through the real `systemctl --user`; when there is none to reach (no systemd, a container,
//! a shell without the user's session bus), the file stays written and the command prints
//! what to run later, exiting `exit::NO_SERVICE_MANAGER`.

use std::fs;
use std::io;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use anyhow::{bail, Context, Result};
use serde::Serialize;

use crate::args::{
    LocationArgs, ServiceArgs, ServiceCommand, ServiceInstallArgs, ServiceStatusArgs,
};
use crate::{exit, output};

/// The unit's name, for the packaged and the installed unit alike.
pub const UNIT_NAME: &str = "answer-inbox.service";

/// The unit the .deb installs; `install` writes it with another `ExecStart=`.
const SHIPPED_UNIT: &str = include_str!("../../assets/systemd/answer-inbox.service");

/// The shipped unit's command line, which `install` replaces.
const SHIPPED_EXEC_START: &str = "ExecStart=/usr/bin/answer-inbox watch";

/// The first line of every unit `install` writes. `install` replaces and `uninstall` removes
/// only a file that has it, so a unit the user wrote by hand is never lost.
pub const MARKER: &str =
    "# Written by `answer-inbox service install`, which may replace it; `answer-inbox service \
     uninstall` removes it.";

/// The directories outside the user's home where user units are found, in systemd's order
/// (systemd.unit(5), "User Unit Search Path"): the administrator's, then packages'. The
/// user's own directory comes before all of them.
const SYSTEM_UNIT_DIRS: [&str; 4] = [
    "/etc/xdg/systemd/user",
    "/etc/systemd/user",
    "/usr/local/lib/systemd/user",
    "/usr/lib/systemd/user",
];

/// How many journal lines `status` shows.
const JOURNAL_LINES: &str = "5";

pub fn run(locations: &LocationArgs, args: &ServiceArgs) -> Result<u8> {
    let path = user_unit_path()?;
    match &args.command {
        ServiceCommand::Install(install_args) => install(&path, locations, install_args),
        ServiceCommand::Uninstall => uninstall(&path),
        ServiceCommand::Status(status_args) => status(&path, status_args),
    }
}

/// `<XDG config dir>/systemd/user/answer-inbox.service`, where systemd looks for the user's
/// own units ($XDG_CONFIG_HOME when absolute, else ~/.config: the same rule as `dirs`).
fn user_unit_path() -> Result<PathBuf> {
    let config = dirs::config_dir()
        .context("cannot find the user's config directory (is HOME set?) for the unit file")?;
    Ok(config.join("systemd/user").join(UNIT_NAME))
}

/// The program the unit starts: this binary, or, run from an AppImage (which sets `APPIMAGE`
/// and `APPDIR`, its mount), the image itself: the mount's path is gone once the image exits,
/// and the image runs the command when given `watch`.
fn service_program(exe: PathBuf, image: Option<PathBuf>, mount: Option<PathBuf>) -> PathBuf {
    match (image, mount) {
        (Some(image), Some(mount)) if exe.starts_with(&mount) && image.is_file() => image,
        _ => exe,
    }
}

fn install(path: &Path, locations: &LocationArgs, args: &ServiceInstallArgs) -> Result<u8> {
    let exe = std::env::current_exe().context("cannot find the running answer-inbox binary")?;
    let exe = service_program(
        exe,
        std::env::var_os("APPIMAGE").map(PathBuf::from),
        std::env::var_os("APPDIR").map(PathBuf::from),
    );
    // Linux names a binary deleted or replaced since it started "<path> (deleted)".
    if !exe.is_file() {
        bail!(
            "the running binary {} is gone (rebuilt or removed?); run `service install` \
             again with the binary the service should start",
            exe.display()
        );
    }
    let command = WatchCommand::new(exe, locations, args)?;
    let unit = render_unit(&command)?;

    let before = match fs::read(path) {
        Ok(bytes) => Some(bytes),
        Err(error) if error.kind() == io::ErrorKind::NotFound => None,
        Err(error) if args.force => {
            output::stderr(&format!(
                "warning: cannot read {} ({error}); --force replaces it",
                path.display()
            ));
            Some(Vec::new())
        }
        Err(error) => {
            return Err(error).with_context(|| {
                format!(
                    "cannot read {} to see who wrote it; --force replaces it",
                    path.display()
                )
            })
        }
    };
    match &before {
        Some(bytes) if bytes.as_slice() == unit.as_bytes() => {
            output::stderr(&format!("{} is up to date", path.display()));
        }
        Some(bytes) if !written_by_install(bytes) && !args.force => bail!(
            "{} was not written by `answer-inbox service install` (it lacks the line \
             \"{MARKER}\"), so it is left alone; --force replaces it",
            path.display()
        ),
        _ => {
            write_atomically(path, unit.as_bytes())?;
            output::stderr(&format!("wrote {}", path.display()));
        }
    }
    if let Some(packaged) = system_units().first() {
        output::stderr(&format!(
            "it takes precedence over {} (a user's unit overrides the system's of the same \
             name)",
            packaged.display()
        ));
    }

    let later = if args.no_start {
        "systemctl --user daemon-reload".to_owned()
    } else {
        format!("systemctl --user daemon-reload && systemctl --user enable --now {UNIT_NAME}")
    };
    match systemctl(&["daemon-reload"]) {
        Call::NoManager(why) => return Ok(not_taken_yet(&why, &later)),
        call => call.check("daemon-reload")?,
    }
    if args.no_start {
        output::stderr(&format!(
            "not started (--no-start): `systemctl --user enable --now {UNIT_NAME}` starts it \
             and keeps it starting with your user manager"
        ));
        return Ok(exit::OK);
    }
    match systemctl(&["enable", "--now", UNIT_NAME]) {
        Call::NoManager(why) => return Ok(not_taken_yet(&why, &later)),
        call => call.check("enable --now").with_context(|| {
            format!(
                "the unit is written but did not start; see `systemctl --user status \
                 {UNIT_NAME}` and `journalctl --user -u {UNIT_NAME}`"
            )
        })?,
    }
    output::stderr(&format!(
        "enabled and started {UNIT_NAME}: it starts with your user manager from now on \
         (`loginctl enable-linger` keeps that running while you are logged out); logs: \
         journalctl --user -u {UNIT_NAME}"
    ));
    Ok(exit::OK)
}

fn uninstall(path: &Path) -> Result<u8> {
    let bytes = match fs::read(path) {
        Ok(bytes) => bytes,
        Err(error) if error.kind() == io::ErrorKind::NotFound => {
            output::stderr(&format!(
                "nothing to uninstall: there is no {}",
                path.display()
            ));
            if let Some(packaged) = system_units().first() {
                output::stderr(&format!(
                    "the packaged unit {} is there: `systemctl --user disable --now \
                     {UNIT_NAME}` turns it off",
                    packaged.display()
                ));
            }
            return Ok(exit::OK);
        }
        Err(error) => return Err(error).with_context(|| format!("cannot read {}", path.display())),
    };
    if !written_by_install(&bytes) {
        bail!(
            "{} was not written by `answer-inbox service install` (it lacks the line \
             \"{MARKER}\"), so it is left alone; remove it yourself if you mean to",
            path.display()
        );
    }
    // Without a manager `disable` still removes the enabling links (it works on the files),
    // and only the stop fails.
    let stopped = match systemctl(&["disable", "--now", UNIT_NAME]) {
        Call::NoManager(why) => Err(why),
        call => {
            call.check("disable --now")?;
            Ok(())
        }
    };
    fs::remove_file(path).with_context(|| format!("cannot remove {}", path.display()))?;
    output::stderr(&format!("removed {}", path.display()));
    let reloaded = match stopped {
        Err(why) => Err(why),
        Ok(()) => match systemctl(&["daemon-reload"]) {
            Call::NoManager(why) => Err(why),
            call => {
                call.check("daemon-reload")?;
                Ok(())
            }
        },
    };
    if let Err(why) = reloaded {
        return Ok(no_manager(
            &why,
            "The unit file is removed and no longer enabled",
            "if a user manager of yours still runs the service (in another session), there",
            &format!("systemctl --user daemon-reload && systemctl --user stop {UNIT_NAME}"),
        ));
    }
    output::stderr(&format!("stopped and disabled {UNIT_NAME}"));
    if let Some(packaged) = system_units().first() {
        output::stderr(&format!(
            "the packaged unit {} is in effect now, disabled: `systemctl --user enable --now \
             {UNIT_NAME}` turns it on",
            packaged.display()
        ));
    }
    Ok(exit::OK)
}

/// What `status` reports, as `--json` prints it.
#[derive(Debug, Serialize)]
struct Status {
    unit: &'static str,
    user_unit: UserUnit,
    /// Units of the same name outside the user's home (the package's), in systemd's order.
    system_units: Vec<PathBuf>,
    /// The file systemd uses: what the manager says, else the first by the search order.
    in_effect: Option<PathBuf>,
    manager: Manager,
    /// `systemctl --user is-enabled` (it reads the files, so it answers without a manager).
    enabled: Option<String>,
    /// `systemctl --user is-active`, when a manager answers.
    active: Option<String>,
    /// The last lines the service logged, oldest first.
    journal: Vec<String>,
    logs: String,
}

#[derive(Debug, Serialize)]
struct UserUnit {
    path: PathBuf,
    exists: bool,
    written_by_install: bool,
}

#[derive(Debug, Serialize)]
struct Manager {
    reachable: bool,
    /// Why not, when it is not.
    problem: Option<String>,
}

fn status(path: &Path, args: &ServiceStatusArgs) -> Result<u8> {
    let user_bytes = fs::read(path).ok();
    let system_units = system_units();
    let by_search_order = user_bytes
        .as_ref()
        .map(|_| path.to_owned())
        .or_else(|| system_units.first().cloned());

    // `show` needs the manager: its answer is the file in use, or that there is no manager.
    let (in_effect, manager) =
        match systemctl(&["show", "--property=FragmentPath", "--value", UNIT_NAME]) {
            Call::NoManager(why) => (
                by_search_order,
                Manager {
                    reachable: false,
                    problem: Some(why),
                },
            ),
            Call::Unstartable(error) => (
                by_search_order,
                Manager {
                    reachable: false,
                    problem: Some(format!("cannot run systemctl: {error}")),
                },
            ),
            call => (
                call.first_line().map(PathBuf::from).or(by_search_order),
                Manager {
                    reachable: true,
                    problem: None,
                },
            ),
        };
    let enabled = systemctl(&["is-enabled", UNIT_NAME]).first_line();
    let active = if manager.reachable {
        systemctl(&["is-active", UNIT_NAME]).first_line()
    } else {
        None
    };
    let status = Status {
        unit: UNIT_NAME,
        user_unit: UserUnit {
            path: path.to_owned(),
            exists: user_bytes.is_some(),
            written_by_install: user_bytes.as_deref().is_some_and(written_by_install),
        },
        system_units,
        in_effect,
        manager,
        enabled,
        active,
        journal: journal_tail(),
        logs: format!("journalctl --user -u {UNIT_NAME}"),
    };
    if args.json {
        output::json(&status)?;
    } else {
        output::stdout(&status_text(&status))?;
    }
    Ok(exit::OK)
}

fn status_text(status: &Status) -> String {
    let user = &status.user_unit;
    let mut text = format!(
        "user unit:  {} ({})\n",
        user.path.display(),
        match (user.exists, user.written_by_install) {
            (false, _) => "none; `answer-inbox service install` writes it",
            (true, true) => "written by `answer-inbox service install`",
            (true, false) => "written by someone else",
        }
    );
    for unit in &status.system_units {
        let overridden = if user.exists {
            " (overridden by the user unit)"
        } else {
            ""
        };
        text.push_str(&format!("packaged:   {}{overridden}\n", unit.display()));
    }
    let in_effect = status.in_effect.as_ref().map_or_else(
        || "none: the service is not installed".to_owned(),
        |path| path.display().to_string(),
    );
    text.push_str(&format!("in effect:  {in_effect}\n"));
    let unknown = || "unknown".to_owned();
    let enabled = match (&status.enabled, &status.in_effect) {
        (Some(enabled), _) => enabled.clone(),
        (None, None) => "no: not installed".to_owned(),
        (None, Some(_)) => unknown(),
    };
    text.push_str(&format!("enabled:    {enabled}\n"));
    match &status.manager.problem {
        None => text.push_str(&format!(
            "active:     {}\n",
            status.active.clone().unwrap_or_else(unknown)
        )),
        Some(why) => text.push_str(&format!("active:     unknown: {why}\n")),
    }
    if status.journal.is_empty() {
        text.push_str(&format!("logs:       {}\n", status.logs));
    } else {
        text.push_str(&format!("last log lines ({}):\n", status.logs));
        for line in &status.journal {
            text.push_str(&format!("  {}\n", output::terminal_safe(line, false)));
        }
    }
    text
}

/// The service's last journal lines, if journalctl can read any.
fn journal_tail() -> Vec<String> {
    let output = Command::new("journalctl")
        .args([
            "--user",
            "--unit",
            UNIT_NAME,
            "--lines",
            JOURNAL_LINES,
            "--no-pager",
            "--quiet",
            "--output=short-iso",
        ])
        .stdin(Stdio::null())
        .output();
    match output {
        Ok(output) if output.status.success() => String::from_utf8_lossy(&output.stdout)
            .lines()
            .map(str::to_owned)
            .collect(),
        _ => Vec::new(),
    }
}

/// Says that no user manager took the change (`why`), what is done all the same (`done`),
/// and the command to run (`later`, with `when` saying when).
fn no_manager(why: &str, done: &str, when: &str, later: &str) -> u8 {
    output::stderr(&format!("{why}. {done}; {when}, run:\n  {later}"));
    exit::NO_SERVICE_MANAGER
}

/// For `install`: the file is there for the manager to find.
fn not_taken_yet(why: &str, later: &str) -> u8 {
    no_manager(
        why,
        "The unit file stays written",
        "once your systemd user manager runs (a login session, or `loginctl enable-linger` \
         for a server)",
        later,
    )
}

/// Units of our name in the directories outside the user's home, in systemd's order.
fn system_units() -> Vec<PathBuf> {
    SYSTEM_UNIT_DIRS
        .iter()
        .map(|dir| Path::new(dir).join(UNIT_NAME))
        .filter(|path| path.exists())
        .collect()
}

fn written_by_install(unit: &[u8]) -> bool {
    String::from_utf8_lossy(unit)
        .lines()
        .any(|line| line == MARKER)
}

/// Writes the unit whole or not at all ([`inbox_app::atomic_file`]), readable by all as
/// systemd's own units are.
fn write_atomically(path: &Path, bytes: &[u8]) -> Result<()> {
    let dir = path.parent().context("the unit path has no directory")?;
    fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
    inbox_app::atomic_file::write_atomically(path, bytes, 0o644)
        .with_context(|| format!("cannot write {}", path.display()))
}

/// What `watch` the service runs: this binary, and the locations and options given to
/// `install`, so the service watches the spool the user meant.
#[derive(Debug)]
struct WatchCommand {
    exe: PathBuf,
    args: Vec<String>,
}

impl WatchCommand {
    fn new(exe: PathBuf, locations: &LocationArgs, options: &ServiceInstallArgs) -> Result<Self> {
        let mut args = vec!["watch".to_owned()];
        if options.poll {
            args.push("--poll".to_owned());
        }
        if options.no_notify {
            args.push("--no-notify".to_owned());
        }
        // Flags or ANSWER_INBOX_* variables alike (clap has merged them); relative paths are
        // made absolute here, as the service does not start in this directory.
        for (flag, path) in [
            ("--spool", &locations.spool),
            ("--db", &locations.db),
            ("--policy", &locations.policy),
        ] {
            let Some(path) = path.as_ref().filter(|path| !path.as_os_str().is_empty()) else {
                continue;
            };
            let absolute = std::path::absolute(path)
                .with_context(|| format!("cannot make {} absolute", path.display()))?;
            args.push(flag.to_owned());
            args.push(utf8(&absolute, flag)?.to_owned());
        }
        if let Some(group) = locations.team.as_deref().map(str::trim) {
            if !group.is_empty() {
                args.push("--team".to_owned());
                args.push(group.to_owned());
            }
        }
        Ok(WatchCommand { exe, args })
    }
}

fn utf8<'a>(path: &'a Path, what: &str) -> Result<&'a str> {
    path.to_str().with_context(|| {
        format!(
            "{what} {} is not UTF-8 text, which a unit file cannot hold",
            path.display()
        )
    })
}

/// The shipped unit, marked as ours, with `command` as its `ExecStart=`.
fn render_unit(command: &WatchCommand) -> Result<String> {
    let mut line = format!(
        "ExecStart={}",
        exec_path(utf8(&command.exe, "the binary")?)?
    );
    for arg in &command.args {
        line.push(' ');
        line.push_str(&exec_arg(arg)?);
    }
    let mut replaced = 0;
    let mut unit = format!("{MARKER}\n");
    for shipped in SHIPPED_UNIT.lines() {
        if shipped == SHIPPED_EXEC_START {
            unit.push_str(&line);
            replaced += 1;
        } else {
            unit.push_str(shipped);
        }
        unit.push('\n');
    }
    // A shipped unit edited without this file is a bug to catch in its tests, not here.
    anyhow::ensure!(
        replaced == 1,
        "the shipped unit has no single \"{SHIPPED_EXEC_START}\" line"
    );
    Ok(unit)
}

/// The program of an `ExecStart=`: systemd takes it literally (no `$` expansion) but
/// refuses one with quotes, backslashes or control characters in it; `%` starts a
/// specifier everywhere in a unit (systemd.unit(5)), so it is doubled, and a path with
/// spaces is quoted.
fn exec_path(path: &str) -> Result<String> {
    if let Some(c) = path
        .chars()
        .find(|&c| c.is_control() || matches!(c, '"' | '\'' | '\\'))
    {
        bail!(
            "systemd cannot start a program whose path holds {:?}: {path:?}; put the binary \
             (or a link to it) somewhere else and run `service install` from there",
            c
        );
    }
    let escaped = path.replace('%', "%%");
    Ok(if escaped.contains(' ') {
        format!("\"{escaped}\"")
    } else {
        escaped
    })
}

/// One argument of an `ExecStart=`, as systemd.service(5) "Command lines" reads it back:
/// `%%` for `%` (specifiers), `$$` for `$` (variable expansion), `\;` for a lone `;` (a
/// command separator), and double quotes, with `\\` and `\"` inside, around a word with
/// spaces, quotes or backslashes. Control characters cannot be written into a unit line.
fn exec_arg(arg: &str) -> Result<String> {
    if let Some(c) = arg.chars().find(|c| c.is_control()) {
        bail!("{arg:?} holds the control character {c:?}, which a unit file cannot hold");
    }
    if arg == ";" {
        return Ok("\\;".to_owned());
    }
    let escaped = arg.replace('%', "%%").replace('$', "$$");
    let needs_quotes = arg.is_empty() || arg.contains([' ', '"', '\'', '\\']);
    Ok(if needs_quotes {
        format!("\"{}\"", escaped.replace('\\', "\\\\").replace('"', "\\\""))
    } else {
        escaped
    })
}

/// What became of one `systemctl --user` call.
enum Call {
    /// It ran; is-enabled and is-active answer through the exit status and the output.
    Ran {
        success: bool,
        stdout: String,
        stderr: String,
    },
    /// There is no user manager to talk to: why, in words.
    NoManager(String),
    /// systemctl could not be started for another reason.
    Unstartable(io::Error),
}

/// Runs the real `systemctl --user ARGS`.
fn systemctl(args: &[&str]) -> Call {
    let output = Command::new("systemctl")
        .arg("--user")
        .args(args)
        .stdin(Stdio::null())
        .output();
    match output {
        Err(error) if error.kind() == io::ErrorKind::NotFound => {
            Call::NoManager("systemctl is not installed (it is not on PATH)".to_owned())
        }
        Err(error) => Call::Unstartable(error),
        Ok(output) => {
            let stderr = String::from_utf8_lossy(&output.stderr).trim().to_owned();
            // "Failed to connect to bus: No medium found" (no XDG_RUNTIME_DIR), "...: No
            // such file or directory" (no manager's socket), "Failed to connect to user
            // scope bus via local transport: ..." (newer systemd): nobody to talk to.
            if !output.status.success()
                && (stderr.contains("Failed to connect to")
                    || stderr.contains("not been booted with systemd"))
            {
                let reason = stderr.lines().next().unwrap_or_default();
                return Call::NoManager(format!(
                    "systemctl cannot reach your systemd user manager ({reason})"
                ));
            }
            Call::Ran {
                success: output.status.success(),
                stdout: String::from_utf8_lossy(&output.stdout).into_owned(),
                stderr,
            }
        }
    }
}

impl Call {
    /// The call succeeded, else an error naming it and what systemctl said.
    fn check(self, what: &str) -> Result<()> {
        match self {
            Call::Ran { success: true, .. } => Ok(()),
            Call::Ran { stderr, .. } => bail!("`systemctl --user {what}` failed: {stderr}"),
            Call::NoManager(why) => bail!("`systemctl --user {what}` failed: {why}"),
            Call::Unstartable(error) => {
                Err(error).with_context(|| format!("cannot run `systemctl --user {what}`"))
            }
        }
    }

    /// The first line of standard output, whatever the exit status (is-enabled says
    /// "disabled" with status 1), if any.
    fn first_line(self) -> Option<String> {
        match self {
            Call::Ran { stdout, .. } => stdout
                .lines()
                .next()
                .map(str::trim)
                .filter(|line| !line.is_empty())
                .map(str::to_owned),
            _ => None,
        }
    }
}

#[cfg(test)]
mod program_tests {
    use super::*;

    /// From an AppImage the unit starts the image, never its temporary mount.
    #[test]
    fn the_unit_starts_the_appimage_not_its_mount() {
        let dir = tempfile::tempdir().unwrap();
        let image = dir.path().join("Answer_Inbox.AppImage");
        fs::write(&image, b"").unwrap();
        let mount = PathBuf::from("/tmp/.mount_AnswerXYZ");
        let from_image =
            |exe: PathBuf| service_program(exe, Some(image.clone()), Some(mount.clone()));
        assert_eq!(from_image(mount.join("usr/bin/answer-inbox")), image);
        let installed = PathBuf::from("/usr/bin/answer-inbox");
        assert_eq!(from_image(installed.clone()), installed);
        assert_eq!(service_program(installed.clone(), None, None), installed);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn command(exe: &str, args: &[&str]) -> WatchCommand {
        WatchCommand {
            exe: PathBuf::from(exe),
            args: args.iter().map(|arg| (*arg).to_owned()).collect(),
        }
    }

    fn exec_start(unit: &str) -> Vec<&str> {
        unit.lines()
            .filter(|line| line.starts_with("ExecStart="))
            .collect()
    }

    #[test]
    fn the_shipped_unit_runs_the_packaged_binary_and_restarts_on_failure() {
        assert_eq!(exec_start(SHIPPED_UNIT), [SHIPPED_EXEC_START]);
        for line in [
            "Restart=on-failure",
            "Environment=NO_COLOR=1",
            "WantedBy=default.target",
            "Documentation=man:answer-inbox-watch(1)",
        ] {
            assert!(SHIPPED_UNIT.lines().any(|l| l == line), "missing {line}");
        }
        assert!(
            !written_by_install(SHIPPED_UNIT.as_bytes()),
            "the packaged unit must not pass for one `install` wrote"
        );
    }

    #[test]
    fn an_installed_unit_is_the_shipped_one_marked_with_this_binary_and_locations() {
        let unit = render_unit(&command(
            "/home/op/.cargo/bin/answer-inbox",
            &["watch", "--spool", "/srv/spool", "--team", "ops"],
        ))
        .unwrap();
        assert_eq!(unit.lines().next(), Some(MARKER));
        assert!(written_by_install(unit.as_bytes()));
        assert_eq!(
            exec_start(&unit),
            ["ExecStart=/home/op/.cargo/bin/answer-inbox watch --spool /srv/spool --team ops"]
        );
        // Every other line is the shipped unit's, in order.
        let rest: Vec<&str> = unit
            .lines()
            .skip(1)
            .filter(|line| !line.starts_with("ExecStart="))
            .collect();
        let shipped: Vec<&str> = SHIPPED_UNIT
            .lines()
            .filter(|line| !line.starts_with("ExecStart="))
            .collect();
        assert_eq!(rest, shipped);
    }

    #[test]
    fn a_program_path_is_quoted_for_spaces_and_specifiers_are_doubled() {
        assert_eq!(
            exec_path("/usr/bin/answer-inbox").unwrap(),
            "/usr/bin/answer-inbox"
        );
        assert_eq!(
            exec_path("/opt/My Apps/100% inbox/answer-inbox").unwrap(),
            "\"/opt/My Apps/100%% inbox/answer-inbox\""
        );
        // systemd takes the program literally: no `$` expansion, so no `$$`.
        assert_eq!(
            exec_path("/opt/$x/answer-inbox").unwrap(),
            "/opt/$x/answer-inbox"
        );
        for refused in ["/opt/a\"b/x", "/opt/it's/x", "/opt/a\\b/x", "/opt/a\nb/x"] {
            let error = exec_path(refused).unwrap_err().to_string();
            assert!(error.contains("systemd cannot start"), "{error}");
        }
    }

    #[test]
    fn arguments_are_escaped_as_systemd_reads_them_back() {
        assert_eq!(exec_arg("/srv/spool").unwrap(), "/srv/spool");
        assert_eq!(exec_arg("/srv/in box").unwrap(), "\"/srv/in box\"");
        assert_eq!(exec_arg("/srv/$HOME").unwrap(), "/srv/$$HOME");
        assert_eq!(exec_arg("/srv/%h").unwrap(), "/srv/%%h");
        assert_eq!(exec_arg("a\"b").unwrap(), "\"a\\\"b\"");
        assert_eq!(exec_arg("a\\b").unwrap(), "\"a\\\\b\"");
        assert_eq!(exec_arg("it's").unwrap(), "\"it's\"");
        assert_eq!(exec_arg("").unwrap(), "\"\"");
        assert_eq!(exec_arg(";").unwrap(), "\\;");
        assert_eq!(
            exec_arg("/a b/\"q\" \\x $HOME 100%").unwrap(),
            "\"/a b/\\\"q\\\" \\\\x $$HOME 100%%\""
        );
        let error = exec_arg("/srv/a\nExecStartPre=/bin/evil").unwrap_err();
        assert!(error.to_string().contains("control character"), "{error}");
    }

    #[test]
    fn only_a_file_with_the_marker_line_counts_as_written_by_install() {
        assert!(written_by_install(format!("{MARKER}\n[Unit]\n").as_bytes()));
        assert!(!written_by_install(b"[Unit]\nDescription=mine\n"));
        // A mention inside another line is not the marker.
        assert!(!written_by_install(format!("# not {MARKER}\n").as_bytes()));
    }

    #[test]
    fn locations_and_options_are_carried_into_the_command_absolute() {
        use clap::Parser;
        // Parsed as the command line is, so the flags land where `run` finds them.
        let cli = crate::args::Cli::try_parse_from([
            "answer-inbox",
            "--spool",
            "relative/spool",
            "--db",
            "/var/db/inbox.sqlite3",
            "--team",
            " ops ",
            "--policy",
            "",
            "service",
            "install",
            "--poll",
            "--no-notify",
        ])
        .unwrap();
        let crate::args::Command::Service(ServiceArgs {
            command: ServiceCommand::Install(options),
        }) = &cli.command
        else {
            panic!("not service install: {:?}", cli.command);
        };
        let command =
            WatchCommand::new(PathBuf::from("/bin/answer-inbox"), &cli.locations, options).unwrap();
        let spool = std::env::current_dir().unwrap().join("relative/spool");
        assert_eq!(
            command.args,
            [
                "watch",
                "--poll",
                "--no-notify",
                "--spool",
                spool.to_str().unwrap(),
                "--db",
                "/var/db/inbox.sqlite3",
                "--team",
                "ops"
            ],
            "an empty --policy means the default, and is not carried"
        );
    }
}
