//! What carries out the lifecycle's actions for the event loop
//! (`supervisor.rs`): [`Runtime`] spawns entries with their output lanes,
//! signals process groups, runs probe and hook tasks on the loop's thread
//! (their results come back through its channel), arms timers, and keeps the
//! inits' env files and the push probes' sockets. The one perform step both
//! loops share is `perform.rs`; this is the event loop's side of it.

use std::collections::HashMap;
use std::os::fd::OwnedFd;
use std::path::PathBuf;
use std::rc::Rc;
use std::time::{Duration, Instant};

use tokio::sync::mpsc;
use tokio::task::AbortHandle;

use crate::config::LogMode;
use crate::config::{EntrySpec, HookSpec, PodSpec};
use crate::lifecycle::exit_status::Exit;
use crate::lifecycle::{Action, Effects, EntryId, Event, HookKind, Instance, Note, Pod, ProbeKind};
use crate::output::{Framing, Output, Stream};
use crate::runtime::announce::Announcements;
use crate::runtime::perform::Carrier;
use crate::runtime::reaper::{Reaper, Waiter};
use crate::runtime::spawn::{command, spawn_passing, Stdio3};
use crate::runtime::supervisor::{drain_until, DRAIN_LIMIT};
use crate::runtime::task::CatchPanic;
use crate::runtime::teardown::kill_and_reap_leftovers;

/// After how many spawn failures in a row of one entry its message is
/// repeated: the 1st, 2nd, 4th, 8th... (a crash loop logs in log time).
fn worth_repeating(failures_in_a_row: u32) -> bool {
    failures_in_a_row.is_power_of_two()
}

/// What carries out the lifecycle's actions: every side effect of podinit.
pub(crate) struct Runtime {
    pub(crate) reaper: Rc<Reaper>,
    pub(crate) output: Option<Output>,
    pub(crate) prefixes: Vec<Vec<u8>>,
    /// The entry that gets podinit's stdin (the first main).
    pub(crate) stdin_entry: Option<EntryId>,
    /// podinit's stdin is a terminal: the first main gets it as its
    /// controlling terminal's foreground group, unprefixed.
    pub(crate) terminal: bool,
    pub(crate) tx: mpsc::UnboundedSender<Event>,
    pub(crate) timers: crate::runtime::Timers,
    pub(crate) probes: HashMap<(EntryId, ProbeKind), AbortHandle>,
    pub(crate) hooks: HashMap<(EntryId, HookKind), AbortHandle>,
    /// Spawn failures in a row, per entry (for [`worth_repeating`]).
    pub(crate) spawn_failures: Vec<u32>,
    /// Where inits write `KEY=VALUE` lines for the entries after them
    /// (`PODINIT_ENV_FILE`); `None` without inits, or when no private
    /// directory could be made.
    pub(crate) env_dir: Option<PathBuf>,
    /// What the inits that succeeded wrote (a later one wins).
    pub(crate) init_env: std::collections::BTreeMap<String, String>,
    /// Push probes' sockets, pipes and watches (`announce.rs`).
    pub(crate) announcements: Announcements,
    /// What `GET /metrics` counts.
    pub(crate) counters: crate::metrics::Counters,
}

/// The variable that names an init's env file.
pub const ENV_FILE_VAR: &str = "PODINIT_ENV_FILE";

/// A new private directory (mode 0700) for the inits' env files.
pub(crate) fn make_env_dir() -> Option<PathBuf> {
    let dir = crate::runtime::private_dir("env", 0o700);
    if dir.is_none() {
        tracing::warn!("no directory for the inits' env files: {ENV_FILE_VAR} is not set");
    }
    dir
}

impl Effects for Runtime {
    fn say(&mut self, pod: &Pod, notes: Vec<Note>) {
        crate::runtime::perform::say(pod, &notes);
    }

    fn perform(&mut self, pod: &Pod, action: Action, _now: Instant) -> Option<Event> {
        crate::runtime::perform::perform(self, pod, action)
    }
}

/// The event loop has everything: spawns with output lanes, probe and hook
/// tasks on its thread, whose results come back through its channel.
impl Carrier for Runtime {
    fn reaper(&self) -> &Reaper {
        &self.reaper
    }

    fn timers(&mut self) -> &mut crate::runtime::Timers {
        &mut self.timers
    }

    fn spawn_entry(&mut self, pod: &PodSpec, entry: EntryId, instance: Instance) -> Event {
        self.grow(pod);
        let mut spec = self.with_init_env(&pod.entries[entry]);
        let prepared = self.announcements.prepare(entry, &spec);
        spec.env.extend(prepared.env.iter().cloned());
        let spec = &spec;
        let with_stdin = self.stdin_entry == Some(entry);
        let stdio = Stdio3::for_entry(spec.log, with_stdin, self.terminal);
        let mut cmd = command(spec, &spec.argv, stdio);
        let handoff = prepared.apply(&mut cmd);
        let waiter = Waiter::Entry { entry, instance };
        match spawn_passing(&self.reaper, cmd, spec.argv.program(), waiter, handoff.as_ref()) {
            Ok(mut child) => {
                self.spawn_failures[entry] = 0;
                let pid = i32::try_from(child.id()).unwrap_or(0);
                let line_watch = self.announcements.started(entry, instance, pid, spec, prepared);
                self.counters.started(entry);
                if let Some(adj) = spec.oom_score_adj {
                    // The child set it before exec; say so if it could not.
                    let got = crate::procfs::read(format!("/proc/{pid}/oom_score_adj"));
                    if got.as_deref().map(str::trim).is_ok_and(|v| v != adj.to_string()) {
                        tracing::warn!(
                            "{}: could not set oom_score_adj {adj} (lowering it needs CAP_SYS_RESOURCE)",
                            spec.name
                        );
                    }
                }
                if let Some(output) = &mut self.output {
                    let pipes = [
                        (child.stdout.take().map(OwnedFd::from), Stream::Stdout),
                        (child.stderr.take().map(OwnedFd::from), Stream::Stderr),
                    ];
                    for (fd, stream) in pipes {
                        let framing = match spec.log {
                            LogMode::Json => Framing::Json {
                                process: spec.name.clone(),
                                stream: if stream == Stream::Stdout { "stdout" } else { "stderr" },
                            },
                            _ => Framing::Prefixed(self.prefixes[entry].clone()),
                        };
                        if let Some(fd) = fd {
                            output.pump(fd, stream, framing, line_watch.clone());
                        }
                    }
                }
                // `child` is dropped without waiting: the reaper owns its exit.
                Event::Spawned { entry, instance, pid }
            }
            Err(error) => spawn_failed(spec, entry, instance, &error, &mut self.spawn_failures[entry]),
        }
    }

    fn start_probe(
        &mut self,
        pod: &PodSpec,
        entry: EntryId,
        instance: Instance,
        kind: ProbeKind,
        not_before: Instant,
    ) {
        let spec = self.with_init_env(&pod.entries[entry]);
        let Some(probe) = spec.probe(kind).cloned() else { return };
        let tx = self.tx.clone();
        if probe.action.is_push() {
            let Some(said) = self.announcements.subscribe(entry, instance) else { return };
            let task = crate::runtime::task::spawn(async move {
                tokio::time::sleep_until(not_before.into()).await;
                let mut results = crate::probe::Results::new(probe.success_threshold);
                let send = |ok: bool| {
                    if !results.worth_sending(ok) {
                        return !tx.is_closed();
                    }
                    let why = (!ok).then(|| crate::probe::push::missing(kind, &probe.action));
                    tx.send(Event::Probe { entry, instance, kind, ok, why }).is_ok()
                };
                crate::probe::push::watch(kind, &probe, said, send).await;
            });
            if let Some(old) = self.probes.insert((entry, kind), task.abort_handle()) {
                old.abort();
            }
            return;
        }
        let reaper = Rc::clone(&self.reaper);
        let task = crate::runtime::task::spawn(async move {
            tokio::time::sleep_until(not_before.into()).await;
            let mut results = crate::probe::Results::new(probe.success_threshold);
            loop {
                let began = tokio::time::Instant::now();
                if tx.is_closed() {
                    return;
                }
                let attempt = crate::probe::attempt(&reaper, &spec, &probe.action, probe.timeout);
                let result = CatchPanic::new(attempt).await.unwrap_or_else(|panic| {
                    tracing::error!(
                        "{} {kind} probe attempt panicked (a bug in podinit): {panic}",
                        spec.name
                    );
                    Err(crate::probe::Failure::Panicked(panic.0))
                });
                let ok = result.is_ok();
                // Each failed attempt at debug level; the lifecycle says what
                // a threshold crossing means, with this reason.
                let why = result.err().map(|why| {
                    tracing::debug!("{} {kind} probe failing: {why}", spec.name);
                    why.to_string()
                });
                if results.worth_sending(ok)
                    && tx.send(Event::Probe { entry, instance, kind, ok, why }).is_err()
                {
                    return;
                }
                tokio::time::sleep_until(began + probe.period).await;
            }
        });
        if let Some(old) = self.probes.insert((entry, kind), task.abort_handle()) {
            old.abort();
        }
    }

    fn stop_probe(&mut self, entry: EntryId, kind: ProbeKind) {
        if let Some(h) = self.probes.remove(&(entry, kind)) {
            h.abort();
        }
    }

    fn run_hook(
        &mut self,
        pod: &PodSpec,
        entry: EntryId,
        instance: Instance,
        hook: HookKind,
    ) -> Option<Event> {
        // Its result comes back through the channel when it is done.
        let spec = self.with_init_env(&pod.entries[entry]);
        let handler = spec.hook(hook).cloned()?;
        let reaper = Rc::clone(&self.reaper);
        let tx = self.tx.clone();
        let task = crate::runtime::task::spawn(async move {
            let which = hook.as_str();
            let run = async {
                match &handler {
                    HookSpec::Exec { argv } => crate::probe::exec(&reaper, &spec, argv, None).await,
                    HookSpec::HttpGet(get) => crate::probe::http_get(get).await,
                    HookSpec::Sleep(d) => {
                        tokio::time::sleep(*d).await;
                        Ok(())
                    }
                }
            };
            let result = CatchPanic::new(run).await.unwrap_or_else(|panic| {
                tracing::error!("{} {which} hook panicked (a bug in podinit): {panic}", spec.name);
                Err(crate::probe::Failure::Panicked(panic.0))
            });
            if let Err(why) = &result {
                tracing::info!("{} {which} hook: {why}", spec.name);
            }
            let ok = result.is_ok();
            let _ = tx.send(Event::Hook { entry, instance, hook, ok });
        });
        if let Some(old) = self.hooks.insert((entry, hook), task.abort_handle()) {
            old.abort();
        }
        None
    }

    fn stop_checks(&mut self, entry: EntryId) {
        self.probes.retain(|&(e, _), h| {
            if e == entry {
                h.abort();
            }
            e != entry
        });
        self.hooks.retain(|&(e, _), h| {
            if e == entry {
                h.abort();
            }
            e != entry
        });
    }
}

impl Runtime {
    /// Room for entries a `podinit reload` added (the lifecycle appends
    /// them to the pod's spec before it asks for their spawns).
    pub(super) fn grow(&mut self, pod: &PodSpec) {
        let width = self.prefixes.first().map_or(0, |p| p.len().saturating_sub(3));
        while let Some(e) = pod.entries.get(self.prefixes.len()) {
            let width = width.max(e.name.len());
            self.prefixes.push(format!("{:width$} | ", e.name).into_bytes());
        }
        if self.spawn_failures.len() < pod.entries.len() {
            self.spawn_failures.resize(pod.entries.len(), 0);
        }
        self.counters.grow(pod.entries.len());
    }

    /// The env file of an init that exited 0, read into what later entries
    /// get (the need behind KEP-3721). Bounded and parsed as `env_file`; one
    /// that cannot be read or parsed makes the init count as failed
    /// (status 1), with the reason in the log. Values are never logged.
    pub(super) fn take_init_env(&mut self, pod: &PodSpec, entry: EntryId, exit: Exit) -> Exit {
        let spec = &pod.entries[entry];
        let (Some(dir), true, true) = (&self.env_dir, spec.role == crate::config::Role::Init, exit.success())
        else {
            return exit;
        };
        let file = dir.join(format!("{}.env", spec.name));
        if !file.exists() {
            return exit;
        }
        let pairs = crate::config::validate::read_text_no_symlink(&file)
            .map_err(|e| e.to_string())
            .and_then(|text| crate::config::envfile::parse_literal(&text));
        match pairs {
            Ok(pairs) => {
                let names: Vec<&str> = pairs.iter().map(|(k, _)| k.as_str()).collect();
                tracing::info!("{} wrote {} for the entries after it", spec.name, names.join(", "));
                self.init_env.extend(pairs);
                exit
            }
            Err(why) => {
                tracing::error!(
                    "{}: its {ENV_FILE_VAR} {}: {why}; the init counts as failed",
                    spec.name,
                    file.display()
                );
                Exit::Code(1)
            }
        }
    }

    /// The entry as it runs: with what the inits before wrote, then its own
    /// environment (which wins), and an init's own `PODINIT_ENV_FILE`.
    fn with_init_env(&self, spec: &EntrySpec) -> EntrySpec {
        let mut spec = spec.clone();
        let mut env: Vec<(String, String)> =
            self.init_env.iter().map(|(k, v)| (k.clone(), v.clone())).collect();
        if let (Some(dir), crate::config::Role::Init) = (&self.env_dir, spec.role) {
            let file = dir.join(format!("{}.env", spec.name));
            let _ = std::fs::remove_file(&file);
            env.push((ENV_FILE_VAR.to_owned(), file.display().to_string()));
        }
        env.extend(spec.env);
        spec.env = env;
        spec
    }
    /// Kills and reaps every leftover descendant, then writes out all output
    /// still buffered, by `grace_end` if a signal's grace period ends then
    /// ([`drain_until`]).
    pub(super) fn finish(&mut self, grace_end: Option<Instant>) {
        if let Some(dir) = self.env_dir.take() {
            let _ = std::fs::remove_dir_all(dir);
        }
        self.announcements.finish();
        for h in self.probes.drain().map(|(_, h)| h).chain(self.hooks.drain().map(|(_, h)| h)) {
            h.abort();
        }
        let deadline = drain_until(DRAIN_LIMIT, grace_end);
        kill_and_reap_leftovers(&self.reaper);
        let deadline = deadline.max(drain_until(Duration::from_millis(500), grace_end));
        if let Some(output) = self.output.take() {
            output.close(deadline);
        }
        crate::output::flush_log(deadline.max(drain_until(Duration::from_millis(200), grace_end)));
    }
}

/// Says why an instance could not be started (the 1st, 2nd, 4th, 8th...
/// failure in a row, [`worth_repeating`]) and gives the lifecycle's event for
/// it; `in_a_row` counts the entry's failures and is set back to 0 by a spawn
/// that works.
pub(crate) fn spawn_failed(
    spec: &EntrySpec,
    entry: EntryId,
    instance: Instance,
    error: &crate::runtime::spawn::SpawnError,
    in_a_row: &mut u32,
) -> Event {
    let status = error.status();
    *in_a_row = in_a_row.saturating_add(1);
    let n = *in_a_row;
    if worth_repeating(n) {
        let times = if n > 1 { format!("; {n} times in a row") } else { String::new() };
        tracing::error!(
            event = "spawn_failed",
            process = spec.name,
            status,
            "{}: {error} (status {status}{times})",
            spec.name
        );
    }
    Event::SpawnFailed { entry, instance, status }
}
