//! Who the operator is, as every surface records it: `answered_by` is `operator:<name>`,
//! and the name comes from the same place for the CLI and the app, so one person's answers
//! read the same in history whichever surface they used.

/// The prefix of every answer a person gave (policies write `policy:<name>`).
pub const PREFIX: &str = "operator:";

/// The operator's name from the environment: `$USER`, else `$LOGNAME` (set by login and
/// sshd where `USER` may not be, as under some cron and container setups), else
/// `operator`.
pub fn name_from_env() -> String {
    ["USER", "LOGNAME"]
        .iter()
        .filter_map(|var| std::env::var(var).ok())
        .map(|name| name.trim().to_owned())
        .find(|name| !name.is_empty())
        .unwrap_or_else(|| "operator".to_owned())
}

/// `answered_by` for an answer `name` gave.
pub fn answered_by(name: &str) -> String {
    format!("{PREFIX}{name}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_answer_is_recorded_as_the_operators() {
        assert_eq!(answered_by("ann"), "operator:ann");
    }
}
