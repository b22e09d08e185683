//! inbox-web's integration tests, as one test binary: each module is one area.

mod bindings;
mod limits;
mod remote;
