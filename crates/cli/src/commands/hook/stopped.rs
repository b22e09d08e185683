//! When the agent stops waiting. An agent runs the hook while its own permission prompt is
//! open: when the operator answers there, presses Esc, or the session ends, the agent stops
//! the hook (SIGTERM, or SIGINT/SIGHUP from a terminal) or simply dies. A request left
//! pending then would keep offering a decision that no longer decides anything, on every
//! surface, until its timeout. So the hook withdraws it: a signal, or the death of the
//! process that started the hook (the kernel sends SIGTERM then, `PR_SET_PDEATHSIG`),
//! cancels the wait's token, which places the tombstone unless an outcome already stands.

use inbox_client::CancelToken;

/// Cancels `token` when the hook is stopped or its parent dies, naming `agent` in the
/// tombstone's reason. Call once, before placing the request.
pub fn withdraw_when_stopped(token: &CancelToken, agent: &str) -> anyhow::Result<()> {
    let reason = format!("{agent} stopped waiting");
    let on_signal = token.clone();
    let said = reason.clone();
    // SIGINT, SIGTERM and SIGHUP (ctrlc's `termination` feature): the wait wakes at once.
    ctrlc::set_handler(move || {
        on_signal.cancel(said.clone());
    })?;
    // The parent's death becomes a SIGTERM, which the handler above takes.
    rustix::process::set_parent_process_death_signal(Some(rustix::process::Signal::TERM))?;
    // A parent that died before that call is not noticed by the kernel: an orphan is
    // re-parented (to init or a subreaper), so a parent that is already gone means stop.
    if !parent_alive() {
        token.cancel(reason);
    }
    Ok(())
}

/// Whether the process that started this one is still its parent: not re-parented to init.
fn parent_alive() -> bool {
    rustix::process::getppid().is_some_and(|parent| !parent.is_init())
}
