//! A request that left the pending list, and why: what a notifier takes back, and what a
//! push that stays on a phone says in its place ("Answered by ann: Allow once" rather than
//! only that nobody waits any more).

use inbox_protocol::outcome::{OPERATOR_PREFIX, POLICY_PREFIX};
use inbox_protocol::text::one_line;
use inbox_protocol::OutcomeStatus;

/// Longest name shown for who settled a request, in characters; a longer one is cut with
/// "…". An account name or a rule's name is far shorter; `answered_by` in an outcome file
/// another writer placed is not bounded by anything else.
pub const MAX_DECIDER_CHARS: usize = 64;

/// One request that left the pending list.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Gone {
    pub id: String,
    pub why: Departure,
}

/// Why a request left the pending list.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Departure {
    /// It got its outcome (here, in another inbox, or by a policy), or one was decided and
    /// waits to be written: its status and `answered_by` as the outcome has them.
    Settled {
        status: OutcomeStatus,
        answered_by: String,
    },
    /// Its asker withdrew it (the agent stopped waiting).
    Withdrawn,
    /// Nobody may answer it here any more (its file changed, or a forged outcome stands).
    Blocked,
    /// Its file was not a valid request.
    Rejected,
    /// The operator put it away until later.
    Snoozed,
}

impl Gone {
    pub fn new(id: impl Into<String>, why: Departure) -> Gone {
        Gone { id: id.into(), why }
    }

    /// Withdrawn by its asker: what tests and front ends that know no more say.
    pub fn withdrawn(id: impl Into<String>) -> Gone {
        Gone::new(id, Departure::Withdrawn)
    }
}

impl Departure {
    /// One line for a surface that stays on screen: who settled it and how, or why it is
    /// gone. `answered_by` is shown by name (`operator:ann` is "ann", `policy:x` is "policy
    /// x"); it names an account or a rule, never the request's content.
    pub fn line(&self) -> String {
        match self {
            Departure::Settled {
                status,
                answered_by,
            } => {
                let by = decider(answered_by);
                match status {
                    OutcomeStatus::Answered => format!("Answered by {by}"),
                    OutcomeStatus::Defaulted => format!("Settled by its defaults ({by})"),
                    OutcomeStatus::Declined => format!("Declined by {by}"),
                    OutcomeStatus::Expired => "Expired without an answer".to_owned(),
                    OutcomeStatus::Rejected => "Rejected: the request was not valid".to_owned(),
                }
            }
            Departure::Withdrawn => "Withdrawn: its asker stopped waiting".to_owned(),
            Departure::Blocked => "Can no longer be answered here".to_owned(),
            Departure::Rejected => "Rejected: the request was not valid".to_owned(),
            Departure::Snoozed => "Snoozed: it comes back later".to_owned(),
        }
    }
}

/// `operator:ann` as "ann", `policy:expiry` as "policy expiry", anything else as written;
/// on one line, hidden characters escaped, at most [`MAX_DECIDER_CHARS`].
fn decider(answered_by: &str) -> String {
    let name = if let Some(name) = answered_by.strip_prefix(OPERATOR_PREFIX) {
        name.to_owned()
    } else if let Some(name) = answered_by.strip_prefix(POLICY_PREFIX) {
        format!("policy {name}")
    } else {
        answered_by.to_owned()
    };
    let shown = one_line(&name);
    if shown.chars().count() <= MAX_DECIDER_CHARS {
        return shown.into_owned();
    }
    let mut cut: String = shown.chars().take(MAX_DECIDER_CHARS - 1).collect();
    cut.push('…');
    cut
}

#[cfg(test)]
mod tests {
    use super::*;

    fn settled(status: OutcomeStatus, answered_by: &str) -> String {
        Departure::Settled {
            status,
            answered_by: answered_by.to_owned(),
        }
        .line()
    }

    #[test]
    fn each_departure_says_who_or_why_in_one_line() {
        assert_eq!(
            settled(OutcomeStatus::Answered, "operator:ann"),
            "Answered by ann"
        );
        assert_eq!(
            settled(OutcomeStatus::Declined, "operator:bob"),
            "Declined by bob"
        );
        assert_eq!(
            settled(OutcomeStatus::Defaulted, "policy:autonomous"),
            "Settled by its defaults (policy autonomous)"
        );
        assert_eq!(
            settled(OutcomeStatus::Expired, "policy:expiry"),
            "Expired without an answer"
        );
        assert_eq!(
            Departure::Withdrawn.line(),
            "Withdrawn: its asker stopped waiting"
        );
        assert_eq!(Departure::Snoozed.line(), "Snoozed: it comes back later");
        // An answered_by in no known form is shown as written.
        assert_eq!(settled(OutcomeStatus::Answered, "ann"), "Answered by ann");
    }

    /// `answered_by` comes from an outcome file, which another writer may have placed: it
    /// stays one visible line of bounded length.
    #[test]
    fn a_crafted_decider_stays_one_short_visible_line() {
        let line = settled(
            OutcomeStatus::Answered,
            "operator:ann\nApproved by root\u{202e}",
        );
        assert!(!line.contains('\n') && !line.contains('\u{202e}'), "{line}");
        assert!(line.contains("\\u{202e}"), "{line}");
        let long = format!("operator:{}", "a".repeat(500));
        let line = settled(OutcomeStatus::Answered, &long);
        assert_eq!(
            line.chars().count(),
            "Answered by ".len() + MAX_DECIDER_CHARS
        );
        assert!(line.ends_with('…'));
    }
}
