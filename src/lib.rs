//! podinit: a small init process (PID 1) that gives one container the lifecycle
//! Kubernetes gives a pod with native sidecar containers (KEP-753).
//!
//! The crate is layered; each layer uses only the ones above it in this list:
//!
//! 1. `config`: the TOML file into the validated model of the pod (`PodSpec`).
//!    It reads files but starts nothing. `import` beside it reads other
//!    tools' files (a Kubernetes manifest, Compose, supervisord, Procfile,
//!    process-compose) into the same TOML, which `config` then validates; a
//!    manifest given as the config file goes through it.
//! 2. `lifecycle`: the pure state machine of the pod (events in, actions and
//!    notes out, the time passed in): the `podinit-lifecycle` crate in
//!    crates/lifecycle, re-exported here. It holds the validated model too
//!    (`config` re-exports it as its own). Its `Cargo.toml` names no async
//!    runtime, no libc, no nix and no logging crate: no I/O, no clock.
//! 3. `output` (child output lanes, podinit's own log sink), `probe`
//!    (probe attempts and hooks: exec, tcp, http(s), grpc, sleep; push probes)
//!    and `metrics` (what `GET /metrics` counts and shows).
//! 4. `runtime`: the event loop that carries out the lifecycle's actions, the
//!    reaper (the one waiter for children), spawning, signal dispositions. The
//!    only layer that controls processes; `probe`'s exec attempts start theirs
//!    through it.
//! 5. `status` (the status socket: `podinit status`, the control verbs,
//!    `podinit events`), `http` (the read-only HTTP endpoint), `connections`
//!    (how many connections each of those two holds), `cli`, and `main.rs`,
//!    the only place that prints a fatal error and picks the exit status.
//!
//! `procfs` (one reader of small `/proc` files) is used by every layer but
//! `lifecycle`.
//!
//! `sys` is the one module that talks to the kernel: every `unsafe` block and
//! every system call made through `nix` or `libc` is there, behind safe
//! functions (signals and waits for `runtime`, descriptors and the hot
//! path's copies for `output`, sockets and pipes for `probe`, ids for
//! `status`, `procfs`, `main.rs`...). It uses no other module of the crate;
//! `lifecycle` and `config` do not use it. The compiler enforces the first
//! half: `unsafe_code` is denied everywhere but in `sys`;
//! `tests/layers.rs` checks that no other module calls a `libc` function or
//! names a `nix` path (libc's constants and types may be named anywhere).
//!
//! A lifecycle rule lives in crates/lifecycle and nowhere else, with its unit
//! tests and the property tests of its invariants.

// No unwrap/expect on a path input or the system can reach: as PID 1 a panic
// kills the container. Tests may.
#![cfg_attr(not(test), deny(clippy::unwrap_used, clippy::expect_used))]
// Only `sys` may write `unsafe` (see above).
#![deny(unsafe_code)]

pub mod cli;
pub mod config;
pub mod connections;
pub mod http;
#[cfg(feature = "import")]
pub mod import;
pub mod lifecycle;
pub mod metrics;
pub mod output;
pub mod probe;
pub mod procfs;
pub mod runtime;
pub mod status;
#[allow(unsafe_code)]
pub mod sys;
