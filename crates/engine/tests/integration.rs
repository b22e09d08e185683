//! The engine's integration tests, as one test binary: each module is one area.

mod engine;
mod faults;
mod spool_model;
