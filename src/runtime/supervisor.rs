//! The one event loop: turns signals, reaped exits, probe results and timers
//! into lifecycle events, and carries out the actions the lifecycle returns.
//!
//! It decides nothing (that is `lifecycle/`); it owns every side effect:
//! spawning, signalling process groups, probe and hook tasks, timers, output
//! pumps, and the final clean-up (docs/reference.md, "Lifecycle in short"): kill and reap every leftover
//! descendant, then let the output drain, bounded in time so that podinit never
//! hangs on a pipe that a stray process still holds.
//!
//! It runs on a current-thread runtime: one thread owns every state, so the
//! reaper's child table needs no lock, and no wake-up happens unless a signal, a
//! child's output, a probe or a timer asks for one.
//!
//! It takes one event at a time and, while more are queued, lets the runtime
//! look at signals, exits, pipes and timers before the next one; every turn
//! of the loop steps one queued event and takes at most one other thing (a
//! signal, a watchdog tick, a probe result, a status request, a timer), so
//! neither can starve the other. A spawn's result comes back as an ordinary
//! queued event, never handled inside the batch that asked for the spawn: so
//! no chain of events (a crash loop with a zero backoff, a storm of spawn
//! failures) can keep SIGTERM or reaping from being seen.

use std::collections::HashMap;
use std::os::fd::OwnedFd;
use std::path::PathBuf;
use std::rc::Rc;
use std::time::{Duration, Instant};

use tokio::sync::mpsc;
use tokio::task::AbortHandle;

use crate::config::LogMode;
use crate::config::Signal;
use crate::config::{EntrySpec, HookSpec, PodSpec};
use crate::lifecycle::exit_status::Exit;
use crate::lifecycle::{
    Action, Driver, Effects, EntryId, Event, HookKind, Instance, Level, Note, Pod, ProbeKind,
};
use crate::output::{Framing, Output, Stream};
use crate::runtime::announce::Announcements;
use crate::runtime::perform::Carrier;
use crate::runtime::reaper::{Reaper, Waiter};
use crate::runtime::signals::Caught;
use crate::runtime::spawn::{command, spawn_passing, Stdio3};
use crate::runtime::task::CatchPanic;
use crate::runtime::teardown::kill_and_reap_leftovers;

/// Signals podinit acts on itself: SIGCHLD (reap), SIGTERM and SIGINT
/// (terminate). It also catches every signal it forwards to the mains
/// ([`crate::config::signal::forwarded`]); everything else keeps its default disposition.
pub const OWN_SIGNALS: [Signal; 3] = [Signal::CHLD, Signal::TERM, Signal::INT];

/// After how many spawn failures in a row of one entry its message is
/// repeated: the 1st, 2nd, 4th, 8th... (a crash loop logs in log time).
fn worth_repeating(failures_in_a_row: u32) -> bool {
    failures_in_a_row.is_power_of_two()
}

/// How long the end of podinit waits for output still in pipes and buffers
/// after every process is gone; less when a signal began termination and its
/// grace period ends sooner ([`Pod::signal_grace_end`]), but never less
/// than [`MIN_DRAIN`].
const DRAIN_LIMIT: Duration = Duration::from_secs(2);

/// The least time the end of podinit gives output to drain.
const MIN_DRAIN: Duration = Duration::from_millis(100);

/// Runs the pod to the end and returns podinit's exit status.
///
/// `signals` must have been taken in hand before this is called, so that no
/// SIGCHLD or SIGTERM between start-up and the loop is missed.
pub async fn run(
    spec: PodSpec,
    config: Option<PathBuf>,
    load_options: crate::config::LoadOptions,
    signals: Caught,
) -> i32 {
    let mut signals = signals;
    let mut sup = Supervisor::new(spec, config, load_options);
    let status = sup.event_loop(&mut signals).await;
    sup.finish().await;
    status
}

struct Supervisor {
    pod: Pod,
    driver: Driver,
    fx: Runtime,
    rx: mpsc::UnboundedReceiver<Event>,
    status_rx: crate::status::RequestQueue,
    /// The status socket's path and server task, removed at exit.
    status_socket: Option<(std::path::PathBuf, AbortHandle)>,
    /// The config file the pod came from, for `podinit status` and
    /// `podinit reload`, and how it was read.
    config: Option<PathBuf>,
    load_options: crate::config::LoadOptions,
    /// The HTTP endpoint's task, if it has one.
    http: Option<AbortHandle>,
    /// The service manager that started podinit, when its environment names
    /// one (`NOTIFY_SOCKET`, `service.rs`).
    service: Option<crate::runtime::service::Service>,
    /// When its next `WATCHDOG=1` is due, when it asks for them.
    watchdog: Option<tokio::time::Interval>,
}

/// What carries out the lifecycle's actions: every side effect of podinit.
struct Runtime {
    reaper: Rc<Reaper>,
    output: Option<Output>,
    prefixes: Vec<Vec<u8>>,
    /// The entry that gets podinit's stdin (the first main).
    stdin_entry: Option<EntryId>,
    /// podinit's stdin is a terminal: the first main gets it as its
    /// controlling terminal's foreground group, unprefixed.
    terminal: bool,
    tx: mpsc::UnboundedSender<Event>,
    timers: crate::runtime::Timers,
    probes: HashMap<(EntryId, ProbeKind), AbortHandle>,
    hooks: HashMap<(EntryId, HookKind), AbortHandle>,
    /// Spawn failures in a row, per entry (for [`worth_repeating`]).
    spawn_failures: Vec<u32>,
    /// Where inits write `KEY=VALUE` lines for the entries after them
    /// (`PODINIT_ENV_FILE`); `None` without inits, or when no private
    /// directory could be made.
    env_dir: Option<PathBuf>,
    /// What the inits that succeeded wrote (a later one wins).
    init_env: std::collections::BTreeMap<String, String>,
    /// Push probes' sockets, pipes and watches (`announce.rs`).
    announcements: Announcements,
    /// What `GET /metrics` counts.
    counters: crate::metrics::Counters,
}

/// The variable that names an init's env file.
pub const ENV_FILE_VAR: &str = "PODINIT_ENV_FILE";

/// A new private directory (mode 0700) for the inits' env files.
fn make_env_dir() -> Option<PathBuf> {
    let dir = crate::runtime::private_dir("env", 0o700);
    if dir.is_none() {
        tracing::warn!("no directory for the inits' env files: {ENV_FILE_VAR} is not set");
    }
    dir
}

impl Supervisor {
    fn new(spec: PodSpec, config: Option<PathBuf>, load_options: crate::config::LoadOptions) -> Self {
        // Read before anything is started: from here on no process inherits
        // the service manager's variables.
        let service = crate::runtime::service::Service::from_env();
        let watchdog =
            service.as_ref().and_then(crate::runtime::service::Service::watchdog_period).map(|p| {
                let mut every = tokio::time::interval(p.max(Duration::from_millis(1)));
                every.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
                every
            });
        let width = spec.entries.iter().map(|e| e.name.len()).max().unwrap_or(0);
        let prefixes = spec.entries.iter().map(|e| format!("{:width$} | ", e.name).into_bytes()).collect();
        let stdin_entry = spec.entries.iter().position(|e| e.role == crate::config::Role::Main);
        let (tx, rx) = mpsc::unbounded_channel();
        let (status_tx, status_rx) = crate::status::request_queue();
        let requests = status_tx.clone();
        let configured = crate::status::configured_path(spec.status_socket.as_deref());
        // A plain init (no config file) has no socket unless one is named, as
        // tini has none: nothing to ask or control beyond its one command.
        let wanted = config.is_some() || configured.is_some();
        let status_socket =
            wanted.then(|| crate::status::bind(configured.as_deref())).flatten().map(|(listener, path)| {
                // Said when it is not where a client looks first, so that a
                // second podinit on one host can be found.
                let first = crate::status::default_paths().into_iter().next();
                if configured.is_none() && first.as_ref() != Some(&path) {
                    let taken =
                        first.map_or_else(String::new, |f| format!(" ({} could not be used)", f.display()));
                    tracing::info!("status socket at {}{taken}", path.display());
                } else {
                    tracing::debug!("status socket at {}", path.display());
                }
                let task = crate::runtime::task::spawn(crate::status::serve_forever(listener, status_tx));
                // Absolute: podinit leaves its start directory, and removes
                // the socket at exit.
                (std::path::absolute(&path).unwrap_or(path), task.abort_handle())
            });
        let fx = Runtime {
            reaper: Rc::new(Reaper::default()),
            output: Some(Output::start()),
            prefixes,
            stdin_entry,
            terminal: crate::sys::fd::is_terminal(0),
            tx,
            timers: crate::runtime::Timers::default(),
            probes: HashMap::new(),
            hooks: HashMap::new(),
            spawn_failures: vec![0; spec.entries.len()],
            env_dir: spec
                .entries
                .iter()
                .any(|e| e.role == crate::config::Role::Init)
                .then(make_env_dir)
                .flatten(),
            init_env: std::collections::BTreeMap::new(),
            announcements: Announcements::default(),
            counters: crate::metrics::Counters::new(spec.entries.len()),
        };
        let http = match crate::http::address(spec.http) {
            Ok(addr) => addr.and_then(crate::http::bind).map(|listener| {
                tracing::info!(
                    "HTTP endpoint on {}",
                    listener.local_addr().map_or_else(|_| "?".into(), |a| a.to_string())
                );
                crate::runtime::task::spawn(crate::http::serve(listener, requests.clone())).abort_handle()
            }),
            Err(e) => {
                tracing::error!("{e}; running without the HTTP endpoint");
                None
            }
        };
        Supervisor {
            pod: Pod::new(spec),
            driver: Driver::new(),
            fx,
            rx,
            status_rx,
            status_socket,
            config,
            load_options,
            http,
            service,
            watchdog,
        }
    }

    async fn event_loop(&mut self, signals: &mut Caught) -> i32 {
        self.driver.start(&mut self.pod, &mut self.fx, Instant::now());
        // Every path podinit keeps is absolute by now (the config's, the
        // status socket's); processes go on starting in its start directory.
        crate::runtime::spawn::leave_start_dir(true);
        loop {
            if let Some(status) = self.driver.exit() {
                // The last news: termination began in the step that ended it.
                if let Some(service) = &mut self.service {
                    service.update(&self.pod);
                }
                return status;
            }
            if self.driver.is_busy() {
                // One queued lifecycle event on every turn, whatever else is
                // ready: a steady stream of signals, probe results or status
                // requests cannot hold the lifecycle back, nor it them.
                self.driver.step(&mut self.pod, &mut self.fx, Instant::now());
                if self.driver.exit().is_some() {
                    continue;
                }
                // With more queued, let the runtime poll its descriptors and
                // timers (and reset its cooperative budget) before the next
                // one; with none, the select below waits anyway.
                if self.driver.is_busy() {
                    tokio::task::yield_now().await;
                }
            }
            // Before the loop may sleep: what this turn changed is told now.
            if let Some(service) = &mut self.service {
                service.update(&self.pod);
            }
            self.fx.timers.follow_wall_clock();
            let next_timer = self.fx.timers.next();
            let busy = self.driver.is_busy();
            // At most one of these per turn, signals first (SIGCHLD, SIGTERM).
            tokio::select! {
                biased;
                Some(sig) = signals.next() => self.on_signal(sig),
                () = tick(self.watchdog.as_mut()) => {
                    if let Some(service) = &mut self.service {
                        service.watchdog();
                    }
                }
                Some(event) = self.rx.recv() => {
                    if let Event::Probe { entry, kind, ok: false, .. } = &event {
                        self.fx.counters.probe_failed(*entry, *kind);
                    }
                    self.driver.push(event);
                }
                Some(request) = self.status_rx.recv() => self.on_request(request),
                () = sleep_until(next_timer) => {
                    let now = Instant::now();
                    for event in self.fx.timers.take_due(now) {
                        self.driver.push(event);
                    }
                }
                // Nothing else ready and events still queued: the next turn.
                () = std::future::ready(()), if busy => {}
            }
        }
    }

    /// Ends the events streams (once they have written every event), removes
    /// the status socket, then kills, reaps and drains what is left.
    async fn finish(&mut self) {
        let grace_end = self.pod.signal_grace_end();
        crate::output::log::close_events();
        let until = drain_until(Duration::from_millis(500), grace_end);
        while crate::output::log::streams_open() > 0 && Instant::now() < until {
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
        if let Some((path, task)) = self.status_socket.take() {
            task.abort();
            let _ = std::fs::remove_file(path);
        }
        if let Some(task) = self.http.take() {
            task.abort();
        }
        self.fx.finish(grace_end);
    }

    /// A request from the status socket: a report, or a control verb, which
    /// the lifecycle decides at once (docs/control.md).
    fn on_request(&mut self, request: crate::status::Request) {
        match request {
            crate::status::Request::Status(reply) => {
                let _ = reply.send(self.report());
            }
            crate::status::Request::Control(verb, reply) => {
                let _ = reply.send(self.control(verb));
            }
            crate::status::Request::Alive(reply) => {
                let _ = reply.send(());
            }
            crate::status::Request::Ready(reply) => {
                let ready = self.pod.is_ready();
                let unready = crate::status::unready(&self.entries());
                let waiting = crate::status::WaitReport::of(&self.pod, Instant::now()).map(|w| w.text());
                let _ = reply.send(crate::status::Readiness { ready, unready, waiting });
            }
            crate::status::Request::Metrics(reply) => {
                let pod = &self.pod;
                let text = crate::metrics::render(
                    &self.entries(),
                    &pod.spec().entries,
                    &self.fx.counters,
                    pod.phase(),
                    pod.is_ready(),
                    pod.pod_restarts(),
                );
                let _ = reply.send(text);
            }
        }
    }

    /// Every entry's status. Not inlined: the requests that ask for it
    /// share one copy of it.
    #[inline(never)]
    fn entries(&self) -> Vec<crate::lifecycle::EntryStatus> {
        self.pod.status()
    }

    fn report(&self) -> crate::status::Report {
        let pod = &self.pod;
        let now = Instant::now();
        let deadline_in = pod.deadline_at().map(|at| at.saturating_duration_since(now));
        let said = self.fx.announcements.status_texts(pod.spec().entries.len());
        let about = crate::status::About {
            pid: std::process::id(),
            config: self.config.clone(),
            socket: self.status_socket.as_ref().map(|(p, _)| p.clone()),
        };
        let next_runs: Vec<Option<Instant>> =
            (0..pod.spec().entries.len()).map(|i| self.fx.timers.run_at(i)).collect();
        crate::status::render(
            &about,
            &self.entries(),
            &said,
            &next_runs,
            &crate::status::PodFacts {
                phase: pod.phase(),
                ready: pod.is_ready(),
                deadline_in,
                pod_restarts: pod.pod_restarts(),
                termination: pod.termination_deadline().map(|at| at.saturating_duration_since(now)),
                waiting: crate::status::WaitReport::of(pod, now),
                origin: crate::status::started_at(),
                chain: pod.critical_chain(),
            },
            now,
        )
    }

    fn control(&mut self, verb: crate::status::Verb) -> Result<String, String> {
        use crate::lifecycle::Control;
        use crate::status::Verb;
        let entry = |name: &str| {
            self.pod.entry_named(name).ok_or_else(|| {
                let names: Vec<&str> = self.pod.spec().entries.iter().map(|e| e.name.as_str()).collect();
                format!("no entry named {name:?} (the entries: {})", names.join(", "))
            })
        };
        let request = match &verb {
            Verb::Restart(n) => Control::Restart(entry(n)?),
            Verb::Stop(n) => Control::Stop(entry(n)?),
            Verb::Start(n) => Control::Start(entry(n)?),
            Verb::Signal(n, s) => Control::Signal(entry(n)?, *s),
            Verb::Shutdown => Control::Shutdown,
            Verb::Reload => return self.reload(),
            Verb::Trigger(n) => Control::Trigger(entry(n)?),
            Verb::Suspend(n) => Control::Suspend(entry(n)?),
            Verb::Resume(n) => Control::Resume(entry(n)?),
        };
        self.driver.control(&mut self.pod, &mut self.fx, request, Instant::now())?;
        Ok(match request {
            Control::Restart(e)
            | Control::Stop(e)
            | Control::Start(e)
            | Control::Signal(e, _)
            | Control::Trigger(e)
            | Control::Suspend(e)
            | Control::Resume(e) => {
                let status = &self.entries()[e];
                format!("{}: {}", status.name, crate::status::state_name(status))
            }
            Control::Shutdown => "pod: terminating".into(),
        })
    }

    /// `podinit reload`: the config file read again and validated as at
    /// start; an invalid one is refused with its errors, and nothing changes.
    fn reload(&mut self) -> Result<String, String> {
        let Some(path) = self.config.clone() else {
            return Err(
                "podinit runs without a config file (a plain init): there is nothing to reload".into()
            );
        };
        // A relative working_dir is taken from the start directory, which
        // podinit has left.
        let options = crate::config::LoadOptions {
            start_dir: crate::runtime::spawn::start_dir().map(std::path::Path::to_path_buf),
            ..self.load_options.clone()
        };
        let spec = crate::config::load(Some(&path), &options).map_err(|e| {
            let lines: Vec<String> = e.0.iter().map(|i| format!("config error: {i}")).collect();
            format!("{} is not valid; nothing changed:\n{}", path.display(), lines.join("\n"))
        })?;
        let said = self.driver.reload(&mut self.pod, &mut self.fx, spec, Instant::now())?;
        Ok(said.join("\n"))
    }

    fn on_signal(&mut self, sig: i32) {
        match sig {
            libc::SIGCHLD => {
                let reaped = self.fx.reaper.drain();
                for (entry, instance, exit) in reaped.entries {
                    let exit = self.fx.take_init_env(self.pod.spec(), entry, exit);
                    self.driver.push(Event::Exited { entry, instance, exit });
                }
            }
            _ => {
                if let Some(event) = signal_event(sig) {
                    self.driver.push(event);
                }
            }
        }
    }
}

/// The lifecycle event of a signal podinit took, other than SIGCHLD:
/// SIGTERM and SIGINT terminate the pod, the others are passed on to the mains.
pub(crate) fn signal_event(sig: i32) -> Option<Event> {
    match Signal::new(sig) {
        Some(signal @ (Signal::TERM | Signal::INT)) => Some(Event::Terminate { signal }),
        Some(signal) => Some(Event::Forward { signal }),
        None => {
            tracing::debug!("signal {sig} ignored");
            None
        }
    }
}

/// Writes one of the lifecycle's notes to podinit's log, straight from its
/// data (no round trip through `tracing`), with its fields for
/// `--log-format json` and `podinit events`. This is the edge where a note
/// becomes words: its sentence is rendered with the entry names of `spec`,
/// and only once the log level passes (`write_note`).
pub(crate) fn log_note(spec: &PodSpec, n: &Note) {
    use crate::output::log::NoteValue::{Number, Text};
    let process = n.entry.map(|e| spec.entries[e].name.as_str());
    let signal = n.signal().map(|s| s.to_string());
    // A debug note has no field: nothing is allocated for it.
    let mut fields = Vec::new();
    let event = n.event();
    if !event.is_empty() {
        fields.push(("event", Text(event)));
    }
    if let Some(pid) = n.pid() {
        fields.push(("pid", Number(pid.into())));
    }
    if let Some(status) = n.status() {
        fields.push(("status", Number(status.into())));
    }
    if let Some(signal) = &signal {
        fields.push(("signal", Text(signal)));
    }
    if let Some(delay) = n.delay() {
        fields.push(("delay_ms", Number(i64::try_from(delay.as_millis()).unwrap_or(i64::MAX))));
    }
    if let Some(what) = n.waiting_for() {
        fields.push(("for", Text(what.as_str())));
    }
    if let Some(waited) = n.waited() {
        fields.push(("waited_ms", Number(i64::try_from(waited.as_millis()).unwrap_or(i64::MAX))));
    }
    if let Some(probe) = n.probe() {
        fields.push(("probe", Text(probe.as_str())));
    }
    if let Some(hook) = n.hook() {
        fields.push(("hook", Text(hook.as_str())));
    }
    if let Some(reason) = n.reason() {
        fields.push(("reason", Text(reason)));
    }
    let level = match n.level() {
        Level::Debug => tracing::Level::DEBUG,
        Level::Info => tracing::Level::INFO,
        Level::Warn => tracing::Level::WARN,
    };
    crate::output::log::write_note(level, process, &fields, &n.text(spec));
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
        Runtime::spawn_entry(self, pod, entry, instance)
    }

    fn start_probe(
        &mut self,
        pod: &PodSpec,
        entry: EntryId,
        instance: Instance,
        kind: ProbeKind,
        not_before: Instant,
    ) {
        Runtime::start_probe(self, pod, entry, instance, kind, not_before);
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
        Runtime::run_hook(self, pod, entry, instance, hook);
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
    fn grow(&mut self, pod: &PodSpec) {
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
    fn take_init_env(&mut self, pod: &PodSpec, entry: EntryId, exit: Exit) -> Exit {
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

    fn run_hook(&mut self, pod: &PodSpec, entry: EntryId, instance: Instance, hook: HookKind) {
        let spec = self.with_init_env(&pod.entries[entry]);
        let Some(handler) = spec.hook(hook).cloned() else { return };
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
    }

    /// Kills and reaps every leftover descendant, then writes out all output
    /// still buffered, by `grace_end` if a signal's grace period ends then
    /// ([`drain_until`]).
    fn finish(&mut self, grace_end: Option<Instant>) {
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

/// Until when the end of podinit may wait for output: `usual` from now, cut
/// to `grace_end` (the end of a signal's grace period, when whoever sent it
/// SIGKILLs podinit: a status lost to that SIGKILL would be 137), but never
/// less than [`MIN_DRAIN`] from now.
fn drain_until(usual: Duration, grace_end: Option<Instant>) -> Instant {
    let now = Instant::now();
    let until = now + usual;
    grace_end.map_or(until, |end| until.min(end.max(now + MIN_DRAIN)))
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

/// The next tick of `every`; never without one.
async fn tick(every: Option<&mut tokio::time::Interval>) {
    match every {
        Some(every) => {
            every.tick().await;
        }
        None => std::future::pending().await,
    }
}

async fn sleep_until(at: Option<Instant>) {
    match at {
        Some(at) => tokio::time::sleep_until(at.into()).await,
        None => std::future::pending().await,
    }
}
