//! The operator's policy, as a pure library: which requests may settle themselves
//! (autonomous mode, expiry), what happens after a delay (default, expire, escalate), how
//! loudly to notify, and quiet hours.
//!
//! The policy is a TOML file of rules; the first rule that matches a request gives its
//! [`Verdict`]. Every key has a safe default (a person decides), so a rule only loosens
//! what it names. Problems with the file come back all at once, each with its line, so the
//! operator can fix them in one go. The only I/O is [`Policy::load`] reading one file, and
//! only if it is the operator's own (`trusted_read.rs`), through [`capped_read`]: the reader
//! every surface uses for a local file (without blocking, a plain file only, up to a cap).
//! The engine applies verdicts, the CLI prints them.

mod agents;
pub mod capped_read;
mod file;
mod matching;
mod parse;
mod policy;
mod problem;
mod quiet;
mod team;
mod trusted_read;
mod verdict;

pub use agents::{agent_marker, is_agent, AGENT_APPS, AGENT_TOOLS};
pub use matching::Facts;
pub use parse::MAX_RULE_NAME_LEN;
pub use policy::{problems_of, LoadError, Policy, HOLD_EVERYTHING, SHIPPED};
pub use problem::PolicyProblem;
pub use quiet::QuietHours;
pub use team::{Assign, Assignees, Directory, IfUnassigned, System};
pub use trusted_read::{check_program, read_to_show, MAX_POLICY_BYTES};
pub use verdict::{
    After, Autonomy, Loudness, OnExpiry, Step, StepAction, Then, Verdict, NO_RULE_MATCHED,
};
