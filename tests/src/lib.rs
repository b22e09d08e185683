//! Black-box tests live in tests/*.rs; this library holds nothing.
