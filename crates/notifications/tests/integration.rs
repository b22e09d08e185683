//! The notification crate's integration tests, as one test binary: `bus` runs a private
//! session bus with a stand-in daemon of our own, `dunst` a real daemon on a private
//! desktop session; `common` is what they share.

mod common;

mod bus;
mod dunst;
