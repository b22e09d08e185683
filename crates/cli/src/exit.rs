//! The exit codes scripts depend on. Keep them exactly: they are part of the protocol
//! (docs/PROTOCOL.md, README.md).

use inbox_protocol::OutcomeStatus;

/// Done: answered, defaulted, placed, valid.
pub const OK: u8 = 0;
/// Failed: invalid input, an unknown id, an unreadable file or spool.
pub const FAILURE: u8 = 1;
/// `answer` / `cancel`: the request already has its outcome (or was cancelled).
pub const ALREADY_SETTLED: u8 = 3;
/// `answer`: the answer is recorded in the inbox's database but the spool would not take
/// its outcome file yet (read-only or full); the inbox writes it as soon as it can.
pub const KEPT: u8 = 4;
/// `answer`: the request is not the version the operator was shown (`--version`), or its
/// file changed after it was placed; nothing was written.
pub const CHANGED: u8 = 5;
/// `answer`: nobody may answer the request here: an invalid outcome file stands in its
/// place, or its file changed after it was placed; nothing was written.
pub const BLOCKED: u8 = 6;
/// `service install` / `uninstall`: the unit file is written (or removed), but no systemd
/// user manager took the change: systemctl is missing, or it cannot reach a user manager
/// (no session bus, as in most containers). The command prints what to run once there is
/// one.
pub const NO_SERVICE_MANAGER: u8 = 7;
/// `answer`: the request's policy rule assigns it to others and this account is not among
/// them (and the rule allows no take-over); nothing was written (docs/TEAMS.md).
pub const NOT_ASSIGNED: u8 = 8;
/// `ask --wait`: the operator declined.
pub const DECLINED: u8 = 10;
/// `ask --wait`: time ran out and defaults could not answer.
pub const EXPIRED: u8 = 11;
/// `ask --wait`: the request was invalid.
pub const REJECTED: u8 = 12;
/// `ask --wait`: the asker cancelled the request.
pub const CANCELLED: u8 = 13;
/// `ask --wait`: the outcome file cannot be trusted (it does not answer this request, or
/// its answers do not fit the questions); it is reported, never taken as an answer.
pub const BAD_OUTCOME: u8 = 14;
/// `ask --wait --require-person`: a policy (autonomous mode, expiry), not a person,
/// settled the request with its defaults; the outcome is printed all the same.
pub const SETTLED_BY_POLICY: u8 = 15;
/// `ask --wait --timeout`: nothing came in time; the request stays pending.
pub const TIMED_OUT: u8 = 124;

/// What `ask --wait` exits with for an outcome.
pub fn for_status(status: OutcomeStatus) -> u8 {
    match status {
        OutcomeStatus::Answered | OutcomeStatus::Defaulted => OK,
        OutcomeStatus::Declined => DECLINED,
        OutcomeStatus::Expired => EXPIRED,
        OutcomeStatus::Rejected => REJECTED,
    }
}
