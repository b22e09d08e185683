//! The protocol's integration tests, as one test binary: each module is one area.

mod answers;
mod dialects;
mod fixtures;
mod roundtrip;
mod schemas;
