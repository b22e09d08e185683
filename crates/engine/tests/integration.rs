//! The engine's integration tests, as one test binary: each module is one area. The fault
//! tests (faults.rs) are a binary of their own: the fault points they turn on are global to
//! the process.

mod audit;
mod engine;
mod integrity;
mod policy;
mod spool_model;
mod team;
mod watcher;
