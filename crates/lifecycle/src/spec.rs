//! The validated pod: what podinit will run. Every other layer reads the
//! configuration through these types only; the binary's `config/validate`
//! builds them from the TOML shapes of its `config/raw.rs` and is the only
//! place that does.
//!
//! Each config enum has one list of names (`named_enum!`): `podinit check`,
//! `podinit status`, the logs and the TOML reader all use its `as_str()`.

use std::ffi::OsString;
use std::fmt;
use std::path::PathBuf;
use std::time::Duration;

pub use crate::signal::Signal;

/// Defines a field-less enum whose values have one name each, written once:
/// `as_str()` gives it, `ALL` lists the values, `Display` prints it, and the
/// TOML reader accepts exactly these names (serde's own "unknown variant"
/// error otherwise).
macro_rules! named_enum {
    ($(#[$m:meta])* pub enum $name:ident { $($(#[$vm:meta])* $variant:ident = $text:literal,)+ }) => {
        $(#[$m])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub enum $name { $($(#[$vm])* $variant,)+ }

        impl $name {
            /// Every value, in declaration order.
            pub const ALL: &'static [$name] = &[$($name::$variant,)+];
            const NAMES: &'static [&'static str] = &[$($text,)+];

            /// The name, as the config file writes it.
            pub const fn as_str(self) -> &'static str {
                match self { $($name::$variant => $text,)+ }
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(self.as_str())
            }
        }

        impl<'de> serde::Deserialize<'de> for $name {
            fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                struct V;
                impl serde::de::Visitor<'_> for V {
                    type Value = $name;
                    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                        write!(f, "one of {:?}", $name::NAMES)
                    }
                    fn visit_str<E: serde::de::Error>(self, s: &str) -> Result<$name, E> {
                        $name::ALL
                            .iter()
                            .copied()
                            .find(|v| v.as_str() == s)
                            .ok_or_else(|| E::unknown_variant(s, $name::NAMES))
                    }
                }
                d.deserialize_str(V)
            }
        }
    };
}

named_enum! {
    /// `[pod] restart_policy`: applies to mains and init entries (sidecars
    /// always restart), as a Pod's `restartPolicy` (kubernetes.io "Pod
    /// Lifecycle", container restart policy).
    pub enum RestartPolicy {
        Never = "Never",
        OnFailure = "OnFailure",
        Always = "Always",
    }
}

named_enum! {
    /// `[pod] completion`: when the pod has completed.
    pub enum Completion {
        /// Every main has ended for good.
        All = "all",
        /// The first main has ended for good.
        Any = "any",
    }
}

named_enum! {
    /// An entry's role.
    pub enum Role {
        Init = "init",
        Sidecar = "sidecar",
        Main = "main",
        /// Runs on a schedule once the mains are reached, as a CronJob
        /// (kubernetes.io "CronJob"): its runs hold nothing and fail nothing.
        Scheduled = "scheduled",
    }
}

named_enum! {
    /// `concurrency_policy` of a scheduled entry: what a run that comes due
    /// while the previous one still runs does (a CronJob's
    /// `concurrencyPolicy`, kubernetes.io "CronJob").
    pub enum ConcurrencyPolicy {
        /// The new run starts beside the running one (CronJob's default),
        /// as an extra run of the entry (`NAME#2`...), up to
        /// [`ScheduleSpec::max_concurrent`].
        Allow = "Allow",
        /// The new run is skipped (and counted).
        Forbid = "Forbid",
        /// The running one is stopped through its stop path, then the new
        /// run starts.
        Replace = "Replace",
    }
}

named_enum! {
    /// How long the start sequence holds at a sidecar.
    pub enum HoldUntil {
        Started = "started",
        Ready = "ready",
    }
}

named_enum! {
    /// Output mode of an entry (docs/reference.md, "Output").
    pub enum LogMode {
        Prefixed = "prefixed",
        Raw = "raw",
        Json = "json",
    }
}

named_enum! {
    /// `http_get.scheme`.
    pub enum Scheme {
        Http = "http",
        Https = "https",
    }
}

named_enum! {
    /// What a restart rule does when it matches (KEP-5307, container restart
    /// rules).
    pub enum RuleAction {
        Restart = "restart",
        /// Restart the whole pod from its first init (KEP-5532).
        RestartAll = "restart_all",
    }
}

named_enum! {
    /// How a restart rule matches an exit code.
    pub enum Operator {
        In = "in",
        NotIn = "not_in",
    }
}

/// One of an entry's `restart_rules` (KEP-5307, container restart rules):
/// when the exit code is (or is not) one of `values`, `action` decides.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RestartRule {
    pub action: RuleAction,
    pub operator: Operator,
    /// Exit codes, 0 to 255 (a death by signal N counts as 128 + N).
    pub values: Vec<u8>,
}

impl RestartRule {
    /// Whether the rule matches a shell status (0-255).
    pub fn matches(&self, status: i32) -> bool {
        let listed = u8::try_from(status).is_ok_and(|s| self.values.contains(&s));
        match self.operator {
            Operator::In => listed,
            Operator::NotIn => !listed,
        }
    }
}

named_enum! {
    /// The three probe kinds (kubernetes.io "Container probes").
    pub enum ProbeKind {
        Startup = "startup",
        Readiness = "readiness",
        Liveness = "liveness",
    }
}

named_enum! {
    /// The two lifecycle hooks (kubernetes.io "Container Lifecycle Hooks").
    pub enum HookKind {
        PostStart = "post_start",
        PreStop = "pre_stop",
    }
}

/// Default `[pod] termination_grace_period`: 7 s, so that with the 2 s floor the
/// whole shutdown ends inside the 10 s that `docker stop` and Compose allow.
pub const DEFAULT_GRACE: Duration = Duration::from_secs(7);

/// Least time between a stop signal and SIGKILL (docs/lifecycle.md rule 15,
/// `minimumGracePeriodInSeconds` in the kubelet).
pub const MIN_STOP_GRACE: Duration = Duration::from_secs(2);

/// The whole pod, validated.
#[derive(Debug, Clone)]
pub struct PodSpec {
    pub restart_policy: RestartPolicy,
    /// Budget of a whole termination, all phases together.
    pub termination_grace_period: Duration,
    pub completion: Completion,
    pub backoff: BackoffSpec,
    pub log: LogMode,
    pub status_socket: Option<PathBuf>,
    /// Where the read-only HTTP endpoint listens (`[pod] http`; the
    /// `PODINIT_HTTP` variable wins); `None`: no endpoint (docs/control.md).
    pub http: Option<std::net::SocketAddr>,
    /// How long the pod may run, counted from podinit's start, before
    /// termination begins (a Pod's `activeDeadlineSeconds`, kubernetes.io
    /// "Pod Lifecycle"); `None`: no limit.
    pub active_deadline: Option<Duration>,
    /// Every entry in file order (the CLI's command, if any, last).
    pub entries: Vec<EntrySpec>,
}

/// `[pod] backoff`: first restart immediate, then `initial` doubling to `max`;
/// the count starts over after an instance ran `reset_after`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BackoffSpec {
    pub initial: Duration,
    pub max: Duration,
    pub reset_after: Duration,
}

impl Default for BackoffSpec {
    fn default() -> Self {
        BackoffSpec {
            initial: Duration::from_secs(1),
            max: Duration::from_secs(60),
            reset_after: Duration::from_secs(600),
        }
    }
}

/// A command: a program and its arguments. Never empty, by construction
/// ([`Argv::new`]), so there is always a program to run and name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Argv<S> {
    program: S,
    args: Vec<S>,
}

impl<S> Argv<S> {
    /// The command of `words`, the first being the program; `None` when
    /// there is none.
    pub fn new(words: Vec<S>) -> Option<Argv<S>> {
        let mut words = words.into_iter();
        let program = words.next()?;
        Some(Argv { program, args: words.collect() })
    }

    /// A program run without arguments.
    pub fn program_only(program: S) -> Argv<S> {
        Argv { program, args: Vec::new() }
    }

    /// The program (what `execvp` looks up on `PATH` when it has no `/`).
    pub fn program(&self) -> &S {
        &self.program
    }

    /// The arguments after the program.
    pub fn args(&self) -> &[S] {
        &self.args
    }

    /// The program, then its arguments.
    pub fn iter(&self) -> impl Iterator<Item = &S> {
        std::iter::once(&self.program).chain(&self.args)
    }

    /// The same command with each word converted by `f`.
    pub fn map<T>(&self, f: impl Fn(&S) -> T) -> Argv<T> {
        Argv { program: f(&self.program), args: self.args.iter().map(f).collect() }
    }
}

/// One process entry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EntrySpec {
    pub name: String,
    pub role: Role,
    /// Program and arguments; a shell string has become `["/bin/sh", "-c", s]`.
    /// Bytes: the command after `--` reaches the program as the kernel gave it.
    pub argv: Argv<OsString>,
    /// Added to podinit's own environment: `env_file` first, then `env`.
    pub env: Vec<(String, String)>,
    pub working_dir: Option<PathBuf>,
    pub user: Option<UserSpec>,
    pub hold_until: HoldUntil,
    pub stop_signal: Signal,
    /// The command given after `--`: during a termination that a signal
    /// began, it is stopped with that signal (SIGTERM or SIGINT) rather than
    /// `stop_signal`, as tini and dumb-init pass on the signal they receive
    /// (docs/signals.md).
    pub stop_with_received_signal: bool,
    pub log: LogMode,
    pub startup_probe: Option<ProbeSpec>,
    pub readiness_probe: Option<ProbeSpec>,
    pub liveness_probe: Option<ProbeSpec>,
    pub post_start: Option<HookSpec>,
    pub pre_stop: Option<HookSpec>,
    pub oom_score_adj: Option<i32>,
    /// Set `PR_SET_NO_NEW_PRIVS` before exec: setuid binaries and file
    /// capabilities grant nothing to the entry or its children.
    pub no_new_privileges: bool,
    /// After this many restarts, one more failure fails the pod with the
    /// entry's status (supervisord's `startretries`); `None`: no limit.
    pub max_restarts: Option<u32>,
    /// Sidecars: started again when they exit during termination before their
    /// turn (KEP-4438, alpha); off by default.
    pub restart_during_termination: bool,
    /// Inits and mains: overrides `[pod] restart_policy` (KEP-5307).
    pub restart_policy: Option<RestartPolicy>,
    /// Inits and mains: on each exit the first matching rule decides, else
    /// the restart policy (KEP-5307).
    pub restart_rules: Vec<RestartRule>,
    /// Scheduled entries (and only they): when their runs come due.
    pub schedule: Option<ScheduleSpec>,
}

/// When a scheduled entry runs, and the rules of its runs (a CronJob's,
/// kubernetes.io "CronJob"). The next run's wall-clock time is computed by
/// the runtime from this; the machine only hears that a run is due.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ScheduleSpec {
    pub when: When,
    /// The IANA time zone the cron fields are read in (`"UTC"` by default).
    pub time_zone: String,
    pub concurrency_policy: ConcurrencyPolicy,
    /// A run that comes due later than this after its scheduled time is
    /// skipped (a CronJob's `startingDeadlineSeconds`); `None`: never.
    pub starting_deadline: Option<Duration>,
    /// No run starts while set (a CronJob's `suspend`).
    pub suspend: bool,
    /// One run as soon as the mains are reached, besides the schedule.
    pub run_on_start: bool,
    /// A run still running after this is stopped through its stop path (a
    /// Job's `activeDeadlineSeconds`); `None`: no limit.
    pub active_deadline: Option<Duration>,
    /// Under `Allow`, at most this many runs at once: a run due when that
    /// many run is skipped and counted (process-compose's
    /// `schedule.max_concurrent`; a CronJob has no limit); `None`: no limit.
    pub max_concurrent: Option<u32>,
}

/// A scheduled entry's `schedule` or `every`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum When {
    /// A cron expression, as written (podinit's config reader has read it;
    /// its runtime reads it again to find the next run).
    Cron { text: String },
    /// Every this long, counted from when the mains were reached.
    Every(Duration),
}

impl EntrySpec {
    /// The entry's probe of this kind, if it has one.
    pub fn probe(&self, kind: ProbeKind) -> Option<&ProbeSpec> {
        match kind {
            ProbeKind::Startup => self.startup_probe.as_ref(),
            ProbeKind::Readiness => self.readiness_probe.as_ref(),
            ProbeKind::Liveness => self.liveness_probe.as_ref(),
        }
    }

    /// The entry's hook of this kind, if it has one.
    pub fn hook(&self, kind: HookKind) -> Option<&HookSpec> {
        match kind {
            HookKind::PostStart => self.post_start.as_ref(),
            HookKind::PreStop => self.pre_stop.as_ref(),
        }
    }

    /// An entry with every optional field at its documented default (docs/reference.md, "Configuration"): no probes or
    /// hooks, SIGTERM, `hold_until = "ready"`, the environment of podinit.
    pub fn new(name: &str, role: Role, argv: Argv<OsString>, log: LogMode) -> EntrySpec {
        EntrySpec {
            name: name.to_owned(),
            role,
            argv,
            env: Vec::new(),
            working_dir: None,
            user: None,
            hold_until: HoldUntil::Ready,
            stop_signal: Signal::TERM,
            stop_with_received_signal: false,
            log,
            startup_probe: None,
            readiness_probe: None,
            liveness_probe: None,
            post_start: None,
            pre_stop: None,
            oom_score_adj: None,
            no_new_privileges: false,
            max_restarts: None,
            restart_policy: None,
            restart_rules: Vec::new(),
            restart_during_termination: false,
            schedule: None,
        }
    }
}

/// Resolved `user`: uid, primary gid and supplementary groups.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UserSpec {
    pub uid: u32,
    pub gid: u32,
    pub groups: Vec<u32>,
}

/// A probe with Kubernetes' fields and defaults (kubernetes.io "Configure
/// Liveness, Readiness and Startup Probes").
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProbeSpec {
    pub action: ProbeAction,
    /// Time after the process started before the first probe. Default 0 s.
    pub initial_delay: Duration,
    /// Time between probes. Default 10 s.
    pub period: Duration,
    /// Time one attempt may take before it counts as a failure. Default 1 s.
    pub timeout: Duration,
    /// Consecutive successes to count as passing. Default 1.
    pub success_threshold: u32,
    /// Consecutive failures to count as failing. Default 3.
    pub failure_threshold: u32,
    /// Grace of the stop a liveness/startup failure causes; pod's when `None`.
    pub termination_grace_period: Option<Duration>,
}

impl ProbeSpec {
    /// A probe doing `action` with Kubernetes' defaults: no initial delay, every
    /// 10 s, 1 s timeout, thresholds 1 and 3, the pod's grace.
    pub fn new(action: ProbeAction) -> ProbeSpec {
        ProbeSpec {
            action,
            initial_delay: Duration::ZERO,
            period: Duration::from_secs(10),
            timeout: Duration::from_secs(1),
            success_threshold: 1,
            failure_threshold: 3,
            termination_grace_period: None,
        }
    }
}

/// What a probe does.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ProbeAction {
    Exec {
        argv: Argv<String>,
    },
    TcpSocket {
        host: String,
        port: u16,
    },
    HttpGet(HttpGet),
    Grpc {
        host: String,
        port: u16,
        service: String,
    },
    /// `notify = true`: the process says it is ready with `READY=1` on the
    /// socket podinit names in `NOTIFY_SOCKET` (systemd's sd_notify protocol),
    /// and alive with `WATCHDOG=1` (systemd's `WatchdogSec`).
    Notify,
    /// `fd = N`: the process writes a line to its descriptor N when it is
    /// ready (s6's notification-fd).
    Fd {
        fd: i32,
    },
    /// `log_line`: a line of the process's stdout or stderr says it is ready
    /// (process-compose's `ready_log_line`).
    LogLine(LineMatch),
}

impl ProbeAction {
    /// Whether the process reports to podinit (notify, fd, log_line) instead
    /// of podinit trying something each period.
    pub fn is_push(&self) -> bool {
        matches!(self, ProbeAction::Notify | ProbeAction::Fd { .. } | ProbeAction::LogLine(_))
    }
}

/// How a `log_line` probe matches a line (without its newline).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LineMatch {
    /// The line contains this text.
    Contains(String),
    /// The line matches this regular expression (regex-lite's syntax: the
    /// `regex` crate's without Unicode classes).
    Regex(Pattern),
}

impl LineMatch {
    /// Whether `line` (bytes, maybe not UTF-8) matches.
    pub fn matches(&self, line: &[u8]) -> bool {
        match self {
            LineMatch::Contains(text) => memchr::memmem::find(line, text.as_bytes()).is_some(),
            LineMatch::Regex(p) => p.regex.is_match(&String::from_utf8_lossy(line)),
        }
    }
}

/// A compiled regular expression with the text it came from (two patterns are
/// equal when their texts are).
#[derive(Debug, Clone)]
pub struct Pattern {
    pub source: String,
    pub regex: regex_lite::Regex,
}

impl PartialEq for Pattern {
    fn eq(&self, other: &Self) -> bool {
        self.source == other.source
    }
}

impl Eq for Pattern {}

/// An HTTP GET of a probe or hook. Success: status 200-399.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HttpGet {
    pub host: String,
    pub port: u16,
    pub path: String,
    pub scheme: Scheme,
    pub headers: Vec<(String, String)>,
}

/// A lifecycle hook (`post_start`, `pre_stop`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum HookSpec {
    Exec { argv: Argv<String> },
    HttpGet(HttpGet),
    Sleep(Duration),
}
