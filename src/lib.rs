//! podinit: a small init process (PID 1) that gives one container the lifecycle
//! Kubernetes gives a pod with native sidecar containers (KEP-753).
//!
//! The pieces, one job per file: `config` (TOML shapes), `spec` (validation),
//! `lifecycle` (the pure state machine of SPEC §2), `supervisor` (the one event
//! loop and all side effects), `reaper` (the only waiter), `spawn`, `probe`,
//! `output`, `signals`, `logging`, `plan` (`podinit check`), `status`
//! (the status socket and `podinit status`).

// No unwrap/expect on a path input or the system can reach: as PID 1 a panic
// kills the container (issue: hardening). Tests may.
#![cfg_attr(not(test), deny(clippy::unwrap_used, clippy::expect_used))]

pub mod backoff;
pub mod cli;
pub mod config;
pub mod envfile;
pub mod exit_status;
pub mod grpc;
pub mod lifecycle;
pub mod locate;
pub mod logging;
pub mod output;
pub mod plan;
pub mod probe;
pub mod reaper;
pub mod signals;
pub mod spawn;
pub mod spec;
pub mod status;
pub mod supervisor;
pub mod task;
pub mod tls;
pub mod users;
