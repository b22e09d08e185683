//! The headless inbox as a user service, run by a real systemd user manager: `answer-inbox
//! service install` enables and starts it, the service answers a pipeline by the operator's
//! policy, systemd restarts it when it dies, and `service uninstall` stops it cleanly.
//!
//! The manager is systemd's own `systemd --user`, started for this test with the test's home
//! (util/user_manager.rs says how it runs in a container, and that it needs root).
//!
//! tests/tests/service.rs covers the commands where no manager answers.

use std::path::Path;
use std::process::Command;
use std::time::Duration;

use inbox_harness::process::ProcessId;
use serde_json::Value;

use crate::util::user_manager::{wait_for, UserManager, UNIT};
use crate::util::{code, stderr, stdout, Inbox};

#[test]
fn a_real_user_manager_runs_the_installed_service_restarts_it_and_uninstall_stops_it() {
    let inbox = Inbox::new();
    std::fs::create_dir_all(inbox.spool()).unwrap();
    let manager = UserManager::start(&inbox);

    // The service's output in a file the test reads (there is no journald here); the rest of
    // the unit is what `service install` writes.
    let service_log = inbox.dir.path().join("service.log");
    let drop_in = inbox
        .dir
        .path()
        .join("xdg-config/systemd/user")
        .join(format!("{UNIT}.d"));
    std::fs::create_dir_all(&drop_in).unwrap();
    std::fs::write(
        drop_in.join("test-output.conf"),
        format!(
            "[Service]\nStandardOutput=append:{}\nStandardError=inherit\n",
            service_log.display()
        ),
    )
    .unwrap();

    let out = manager.answer_inbox(&inbox, &["service", "install"]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert!(
        stderr(&out).contains("enabled and started answer-inbox.service"),
        "{}",
        stderr(&out)
    );
    assert_eq!(manager.property(&inbox, "ActiveState"), "active");
    assert_eq!(manager.property(&inbox, "UnitFileState"), "enabled");
    let status = service_status(&manager, &inbox);
    assert_eq!(status["manager"]["reachable"], true, "{status}");
    assert_eq!(status["active"], "active", "{status}");
    assert_eq!(status["enabled"], "enabled", "{status}");
    let first = main_pid(&manager, &inbox);

    // The service is the inbox: a pipeline's autonomous request is settled by the shipped
    // policy with its defaults, with nothing else running.
    let request = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("data/nightly-cleanup-autonomous.json"),
    )
    .unwrap();
    let out = inbox.run_with_stdin(
        &["ask", "--wait", "--timeout", "30", "-"],
        request.as_bytes(),
    );
    assert_eq!(code(&out), 0, "{}\n{}", stderr(&out), log_of(&service_log));
    let outcome: Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!(outcome["status"], "defaulted", "{outcome}");
    assert_eq!(outcome["answered_by"], "policy:rule:file-askers");
    // The outcome file comes first; the service's line about it follows.
    let id = outcome["id"].as_str().unwrap();
    let settled = format!("defaulted {id} by policy:rule:file-askers");
    assert!(
        wait_for(Duration::from_secs(10), || log_of(&service_log)
            .contains(&settled)),
        "the service settled it: {}",
        log_of(&service_log)
    );
    let log = log_of(&service_log);
    assert!(
        log.contains(&format!("watching {}", inbox.spool().display())),
        "{log}"
    );
    assert!(
        !log.contains('\u{1b}'),
        "no colour codes in the log: {log:?}"
    );

    // Killed: systemd starts it again (Restart=on-failure, after RestartSec=10s).
    // (SIGKILL: on SIGTERM `watch` ends cleanly, with exit 0, and is rightly not restarted.)
    let kill = Command::new("kill")
        .args(["-KILL", &first.to_string()])
        .status()
        .unwrap();
    assert!(kill.success());
    // One `show` for all of them: read one by one, they could come from either side of the
    // restart.
    let restarted = wait_for(Duration::from_secs(40), || {
        let now = manager.properties(&inbox, &["ActiveState", "MainPID", "NRestarts"]);
        now["ActiveState"] == "active"
            && now["NRestarts"] == "1"
            && !["0", first.to_string().as_str()].contains(&now["MainPID"].as_str())
    });
    assert!(
        restarted,
        "the killed service was not restarted once: {:?}\n{}",
        service_status(&manager, &inbox),
        log_of(&service_log)
    );
    let second = main_pid(&manager, &inbox);

    // Uninstall: stopped with SIGTERM (watch ends cleanly, saying so), disabled, removed.
    let out = manager.answer_inbox(&inbox, &["service", "uninstall"]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let gone = wait_for(Duration::from_secs(20), || ProcessId::of(second).is_none());
    assert!(gone, "the service's process {second} is still running");
    let state = manager.systemctl(&inbox, &["is-active", UNIT]);
    assert_eq!(stdout(&state).trim(), "inactive", "{}", stderr(&state));
    assert!(
        log_of(&service_log).trim_end().ends_with("stopped"),
        "watch stopped cleanly on SIGTERM:\n{}",
        log_of(&service_log)
    );
    let units = inbox.dir.path().join("xdg-config/systemd/user");
    assert!(!units.join(UNIT).exists());
    assert!(std::fs::symlink_metadata(units.join("default.target.wants").join(UNIT)).is_err());
}

fn service_status(manager: &UserManager, inbox: &Inbox) -> Value {
    let out = manager.answer_inbox(inbox, &["service", "status", "--json"]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    serde_json::from_str(&stdout(&out)).unwrap()
}

fn main_pid(manager: &UserManager, inbox: &Inbox) -> u32 {
    let pid: u32 = manager.property(inbox, "MainPID").parse().unwrap_or(0);
    assert_ne!(pid, 0, "the service has no main process");
    pid
}

fn log_of(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_default()
}
