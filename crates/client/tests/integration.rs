//! The client's integration tests, as one test binary: each module is one area.

mod accounts;
mod ask;
mod corpus;
mod tombstones;
