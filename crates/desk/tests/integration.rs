//! The desk's integration tests, as one test binary: each module is one area.

mod desk;
