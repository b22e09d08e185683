//! Running an escalation step's command: the operator's own tool (a chat or pager client)
//! gets the request as JSON on its standard input.
//!
//! The command is started and left to run; the engine's loop never waits for it. Its exit
//! status is logged when it ends, and one that runs longer than [`RUN_LIMIT`] is killed, so
//! a hung pager client cannot pile up processes.

use std::io::Write;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// How long an escalation command may run before it is killed.
pub const RUN_LIMIT: Duration = Duration::from_secs(60);

/// Starts `argv` with `input` on its standard input. Returns the process id, or why it
/// could not be started.
pub fn run(argv: &[String], input: Vec<u8>, request_id: &str) -> Result<u32, String> {
    let (program, args) = argv
        .split_first()
        .ok_or_else(|| "the command is empty".to_owned())?;
    // Checked when the policy was loaded, and again now: the program may have changed hands
    // since, and it runs as the operator.
    inbox_policy::check_program(program)?;
    let mut child = Command::new(program)
        .args(args)
        .env("ANSWER_INBOX_REQUEST_ID", request_id)
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .spawn()
        .map_err(|error| format!("cannot start {program}: {error}"))?;
    let pid = child.id();
    let mut stdin = child.stdin.take();
    let program = program.clone();
    std::thread::Builder::new()
        .name("escalation".into())
        .spawn(move || {
            if let Some(stdin) = stdin.as_mut() {
                // A command that does not read its input is no failure.
                let _ = stdin.write_all(&input);
            }
            drop(stdin);
            let started = Instant::now();
            loop {
                match child.try_wait() {
                    Ok(Some(status)) if status.success() => return,
                    Ok(Some(status)) => {
                        tracing::warn!("escalation command {program} (pid {pid}) ended: {status}");
                        return;
                    }
                    Ok(None) if started.elapsed() > RUN_LIMIT => {
                        tracing::warn!(
                            "escalation command {program} (pid {pid}) ran over {}s; killed",
                            RUN_LIMIT.as_secs()
                        );
                        let _ = child.kill();
                        let _ = child.wait();
                        return;
                    }
                    Ok(None) => std::thread::sleep(Duration::from_millis(100)),
                    Err(error) => {
                        tracing::warn!("escalation command {program} (pid {pid}): {error}");
                        return;
                    }
                }
            }
        })
        .map_err(|error| format!("cannot watch {}: {error}", argv[0]))?;
    Ok(pid)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_command_gets_the_input_on_stdin() {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("got");
        let argv: Vec<String> = vec![
            "/bin/sh".into(),
            "-c".into(),
            format!(
                "cat > {}; echo \"$ANSWER_INBOX_REQUEST_ID\" >> {0}",
                out.display()
            ),
        ];
        run(&argv, b"{\"id\": \"r1\"}\n".to_vec(), "r1").unwrap();
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            let got = std::fs::read_to_string(&out).unwrap_or_default();
            if got.ends_with("r1\n") {
                assert_eq!(got, "{\"id\": \"r1\"}\nr1\n");
                break;
            }
            assert!(
                Instant::now() < deadline,
                "the command never wrote: {got:?}"
            );
            std::thread::sleep(Duration::from_millis(20));
        }
        let missing = run(&["/no/such/pager".to_owned()], Vec::new(), "r1").unwrap_err();
        assert!(
            missing.contains("/no/such/pager cannot be checked"),
            "{missing}"
        );
        assert_eq!(
            run(&[], Vec::new(), "r1").unwrap_err(),
            "the command is empty"
        );
    }
}
