//! Who the operator is, as every surface records it: `answered_by` is `operator:<account>`,
//! the OS account, for the CLI and the app alike, so one person's answers read the same in
//! history whichever surface they used, and match the owner of the files written.

/// The prefix of every answer a person gave (policies write `policy:<name>`).
pub const PREFIX: &str = "operator:";

/// The operator's name: the OS account this process runs as. Not `$USER` or a flag: the
/// account is what owns the outcome files this process writes, and other inboxes check
/// that `answered_by` names the file's owner, so nobody can answer in another's name.
pub fn account() -> String {
    inbox_spool::current_account()
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
