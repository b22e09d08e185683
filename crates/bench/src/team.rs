//! `inbox-bench team`: the long run of the team harness (`inbox_harness::team`): two
//! operators, each an OS account with its own inbox and database, answer one spool through
//! sshfs over a loopback OpenSSH server, every request raced by both. The same code as the
//! CI test (tests/tests/team.rs), with recorded sizes, on the release `answer-inbox` next to
//! this binary. Needs root and FUSE.
//!
//! ```text
//! inbox-bench team [--requests N=500] [--workers N=2] [--seed S]
//! ```

use anyhow::bail;
use inbox_harness::team;

use crate::reliability::{binary, describe, Options};

pub const USAGE: &str = "  team [--requests N=500] [--workers N=2] [--seed S]
                           two operators (OS accounts inbox-op-a and inbox-op-b, group
                           inbox-team) answer one spool over sshfs from a loopback sshd, every
                           request raced by both; one outcome per request, attributed to the
                           account that wrote it (root and FUSE; the release `answer-inbox`
                           next to this binary)";

pub fn run(args: &[String], options: &[String]) -> anyhow::Result<()> {
    let mut options = Options::parse(options, &["--requests", "--workers", "--seed"], &[])?;
    if let Some(reason) = team::unavailable() {
        bail!("team mode over sshfs cannot run here: {reason}");
    }
    let mut config = team::Config::new(binary()?, options.number("--requests", 500)?);
    config.workers = options.number("--workers", config.workers)?;
    config.seed = options.seed(config.seed)?;
    config.verbose = true;
    crate::header(args);
    println!("## Team mode over sshfs: two operators, one spool, `--poll`\n");
    println!("- binary: {}", describe(&config.binary));
    println!(
        "- accounts {} and {} (group {}), {} outside it; sshd on a loopback port, one sshfs \
         mount per operator (sshfs defaults); {} workers race the two answerers of a request \
         once both inboxes have reported it",
        team::OPERATORS[0],
        team::OPERATORS[1],
        team::TEAM_GROUP,
        team::OUTSIDER,
        config.workers
    );
    println!("- sshfs: {}", version("sshfs"));
    let report = team::run(&config).map_err(anyhow::Error::msg)?;
    println!("\nAll checks passed.\n\n```text\n{report}```\n");
    crate::footer();
    Ok(())
}

/// The first line of `TOOL --version` (sshfs prints its own and libfuse's).
fn version(tool: &str) -> String {
    std::process::Command::new(tool)
        .arg("--version")
        .output()
        .ok()
        .map(|out| {
            let text = String::from_utf8_lossy(&out.stdout).into_owned()
                + &String::from_utf8_lossy(&out.stderr);
            text.lines()
                .filter(|l| !l.trim().is_empty())
                .take(2)
                .collect::<Vec<_>>()
                .join("; ")
        })
        .unwrap_or_else(|| "unknown".to_owned())
}
