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
use std::path::PathBuf;
use std::rc::Rc;
use std::time::{Duration, Instant};

use tokio::sync::mpsc;
use tokio::task::AbortHandle;

use crate::config::PodSpec;
use crate::config::Signal;
use crate::lifecycle::{Driver, Event, Level, Note, Pod};
use crate::output::Output;
use crate::runtime::announce::Announcements;
pub(crate) use crate::runtime::carry::spawn_failed;
pub use crate::runtime::carry::ENV_FILE_VAR;
use crate::runtime::carry::{make_env_dir, Runtime};
use crate::runtime::reaper::Reaper;
use crate::runtime::signals::Caught;

/// Signals podinit acts on itself: SIGCHLD (reap), SIGTERM and SIGINT
/// (terminate). It also catches every signal it forwards to the mains
/// ([`crate::config::signal::forwarded`]); everything else keeps its default disposition.
pub const OWN_SIGNALS: [Signal; 3] = [Signal::CHLD, Signal::TERM, Signal::INT];

/// How long the end of podinit waits for output still in pipes and buffers
/// after every process is gone; less when a signal began termination and its
/// grace period ends sooner ([`Pod::signal_grace_end`]), but never less
/// than [`MIN_DRAIN`].
pub(super) const DRAIN_LIMIT: Duration = Duration::from_secs(2);

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
        // Room for an extra run's `#2` where runs may overlap, so that its
        // lines line up with the others.
        let overlaps = |e: &crate::config::EntrySpec| {
            e.schedule
                .as_ref()
                .is_some_and(|s| s.concurrency_policy == crate::config::ConcurrencyPolicy::Allow)
        };
        let width =
            spec.entries.iter().map(|e| e.name.len() + if overlaps(e) { 2 } else { 0 }).max().unwrap_or(0);
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

/// Until when the end of podinit may wait for output: `usual` from now, cut
/// to `grace_end` (the end of a signal's grace period, when whoever sent it
/// SIGKILLs podinit: a status lost to that SIGKILL would be 137), but never
/// less than [`MIN_DRAIN`] from now.
pub(super) fn drain_until(usual: Duration, grace_end: Option<Instant>) -> Instant {
    let now = Instant::now();
    let until = now + usual;
    grace_end.map_or(until, |end| until.min(end.max(now + MIN_DRAIN)))
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
