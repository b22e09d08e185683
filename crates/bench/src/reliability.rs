//! The long, hand-run versions of the reliability harnesses (issue "Prove it holds", points 1
//! and 2): the same code as the CI tests (`inbox_harness::crash`, `inbox_harness::race`), with
//! recorded sizes, on the release build of `answer-inbox` next to this binary.
//!
//! ```text
//! inbox-bench crash [--kills N=200] [--workers N=3] [--seed S] [--no-cancel]
//! inbox-bench race [--engines N=4] [--requests N=1000] [--poll] [--seed S]
//! ```

use std::path::PathBuf;

use anyhow::{bail, Context};
use inbox_harness::{crash, race};

pub const USAGE: &str = "  crash [--kills N=200] [--workers N=3] [--seed S] [--no-cancel]
                           SIGKILL `answer-inbox watch` N times under a mixed workload (with
                           --no-cancel, no cancels), then check every outcome, tombstone,
                           answer and database row
  race [--engines N=4] [--requests N=1000] [--poll] [--seed S]
                           N daemons (own databases) on one spool race answerers, autonomous
                           mode and expiry; one outcome per request, everyone agrees
  (both need the release `answer-inbox` next to this binary: cargo build --release -p answer-inbox)";

/// Runs `crash` or `race`; `None` for any other command.
pub fn dispatch(args: &[String]) -> Option<anyhow::Result<()>> {
    let (command, options) = args.split_first()?;
    match command.as_str() {
        "crash" => Some(run_crash(args, options)),
        "race" => Some(run_race(args, options)),
        _ => None,
    }
}

fn run_crash(args: &[String], options: &[String]) -> anyhow::Result<()> {
    let mut options = Options::parse(
        options,
        &["--kills", "--workers", "--seed"],
        &["--no-cancel"],
    )?;
    let mut config = crash::Config::new(binary()?, options.number("--kills", 200)?);
    config.workers = options.number("--workers", config.workers)?;
    config.seed = options.seed(config.seed)?;
    config.cancels = !options.flag("--no-cancel");
    config.verbose = true;
    crate::header(args);
    println!("## Crash consistency: `watch` SIGKILLed at random moments\n");
    println!("- binary: {}", describe(&config.binary));
    println!(
        "- {} worker threads; kills at random moments up to {} ms after each start",
        config.workers,
        config.max_life.as_millis()
    );
    let report = crash::run(&config).map_err(anyhow::Error::msg)?;
    println!("\nAll checks passed.\n\n```text\n{report}```\n");
    crate::footer();
    Ok(())
}

fn run_race(args: &[String], options: &[String]) -> anyhow::Result<()> {
    let mut options = Options::parse(options, &["--engines", "--requests", "--seed"], &["--poll"])?;
    let mut config = race::Config::new(
        binary()?,
        options.number("--engines", 4)?,
        options.number("--requests", 1000)?,
        options.flag("--poll"),
    );
    config.seed = options.seed(config.seed)?;
    config.verbose = true;
    crate::header(args);
    println!(
        "## Several inboxes on one spool: {} daemons, {}\n",
        config.engines,
        if config.poll { "`--poll`" } else { "inotify" }
    );
    println!("- binary: {}", describe(&config.binary));
    println!(
        "- {} workers start the answerers, at most {} requests in flight",
        config.workers, config.in_flight
    );
    let report = race::run(&config).map_err(anyhow::Error::msg)?;
    println!("\nAll checks passed.\n\n```text\n{report}```\n");
    crate::footer();
    Ok(())
}

/// The release `answer-inbox` next to this binary: the same profile as the benchmark.
pub(crate) fn binary() -> anyhow::Result<PathBuf> {
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

/// The binary's path, size and build time: which build the figures belong to.
pub(crate) fn describe(path: &std::path::Path) -> String {
    let meta = std::fs::metadata(path).ok();
    let built = meta
        .as_ref()
        .and_then(|m| m.modified().ok())
        .map(|t| chrono::DateTime::<chrono::Utc>::from(t).format("%Y-%m-%d %H:%M:%S UTC"))
        .map_or_else(|| "?".to_owned(), |t| t.to_string());
    format!(
        "`{}` ({:.1} MiB, built {built})",
        path.display(),
        meta.map_or(0, |m| m.len()) as f64 / 1048576.0
    )
}

/// `--name VALUE` options and `--flag` switches, each at most once.
pub(crate) struct Options {
    values: Vec<(String, String)>,
    flags: Vec<String>,
}

impl Options {
    pub(crate) fn parse(
        args: &[String],
        valued: &[&str],
        switches: &[&str],
    ) -> anyhow::Result<Options> {
        let mut options = Options {
            values: Vec::new(),
            flags: Vec::new(),
        };
        let mut args = args.iter();
        while let Some(arg) = args.next() {
            if switches.contains(&arg.as_str()) {
                options.flags.push(arg.clone());
            } else if valued.contains(&arg.as_str()) {
                let value = args
                    .next()
                    .with_context(|| format!("{arg} needs a value"))?;
                options.values.push((arg.clone(), value.clone()));
            } else {
                bail!("unknown option {arg}; usage:\n{USAGE}");
            }
        }
        Ok(options)
    }

    fn value(&mut self, name: &str) -> Option<String> {
        let position = self.values.iter().position(|(n, _)| n == name)?;
        Some(self.values.remove(position).1)
    }

    /// A positive number (`_` separators allowed).
    pub(crate) fn number(&mut self, name: &str, default: usize) -> anyhow::Result<usize> {
        match self.value(name) {
            None => Ok(default),
            Some(text) => text
                .replace('_', "")
                .parse::<usize>()
                .ok()
                .filter(|&n| n > 0)
                .with_context(|| format!("{name} must be a positive number: {text}")),
        }
    }

    pub(crate) fn seed(&mut self, default: u64) -> anyhow::Result<u64> {
        match self.value("--seed") {
            None => Ok(default),
            Some(text) => text
                .parse()
                .with_context(|| format!("--seed must be a number: {text}")),
        }
    }

    fn flag(&self, name: &str) -> bool {
        self.flags.iter().any(|f| f == name)
    }
}
