//! The black-box tests, as one test binary: each module is one area, and nextest selects by
//! module (`cargo nextest run -p inbox-tests -E 'test(/^crash::/)'`).

mod util;

mod alike;
mod architecture;
mod attack_review;
mod audit;
mod capped_reads;
mod cli;
mod config;
mod crash;
mod desktop;
mod desktop_keys;
mod desktop_lifecycle;
mod examples;
mod faults;
mod hooks;
mod hostile;
mod hostile_outcomes;
mod mcp;
mod notifications;
mod onboarding;
mod overflow;
mod package;
mod policy;
mod race;
mod readme;
mod service;
mod spool_safety;
mod team;
mod web;
mod web_api;
