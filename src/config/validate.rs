//! Validation: the TOML shapes of `raw.rs` into the model of `model.rs`.
//!
//! Every rule that a TOML schema cannot say lives here (docs/reference.md, "Configuration"): names are DNS
//! labels and unique, probes only on sidecars and mains (KEP-753), a
//! `success_threshold` of 1 on liveness and startup probes (as the Kubernetes API
//! validation), non-empty commands, `user` only when podinit is root, exactly one
//! handler per probe or hook, at least one main. All errors are collected and
//! reported at once, each with file, line, column and key; nothing is started
//! when there is one. This module reads files (the config, `env_file`,
//! /etc/passwd) but starts nothing.

use std::collections::BTreeMap;
use std::ffi::OsString;
use std::fmt;
use std::path::{Path, PathBuf};
use std::time::Duration;

use toml::Spanned;

use super::locate::locate;
use super::model::*;
use super::raw::{
    RawCommand, RawConfig, RawExec, RawHook, RawHttpGet, RawLogLine, RawPort, RawProbe, RawProcess,
    RawRestartRule,
};

/// Most `restart_rules` of one entry, and most exit codes in one rule
/// (the Kubernetes API's limits for container restart rules, KEP-5307).
const MAX_RESTART_RULES: usize = 20;
const MAX_EXIT_CODES: usize = 255;
/// Highest descriptor an `fd` probe may name.
pub const MAX_NOTIFICATION_FD: i32 = 1023;
use super::signal::Signal;

/// Where the start plan came from, for messages.
#[derive(Debug, Clone, Default)]
pub struct Source {
    /// The config file as named on the command line; `None` for a plain init.
    pub path: Option<PathBuf>,
    pub text: String,
    /// Set when `text` is TOML that podinit wrote from another format (a
    /// Kubernetes manifest): errors are placed in that file.
    pub origin: Option<super::locate::Origin>,
}

/// One problem in the configuration, with its place.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConfigIssue {
    pub file: String,
    pub line: usize,
    pub col: usize,
    pub key: String,
    pub message: String,
}

impl fmt::Display for ConfigIssue {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.line == 0 {
            write!(f, "{}: {}", self.file, self.message)
        } else if self.key.is_empty() {
            write!(f, "{}:{}:{}: {}", self.file, self.line, self.col, self.message)
        } else {
            write!(f, "{}:{}:{}: {}: {}", self.file, self.line, self.col, self.key, self.message)
        }
    }
}

/// Every problem found in one configuration; the pod was not started.
#[derive(Debug, Clone, thiserror::Error)]
#[error("{}", .0.iter().map(ToString::to_string).collect::<Vec<_>>().join("\n"))]
pub struct ConfigError(pub Vec<ConfigIssue>);

/// Settings that come from outside the file.
#[derive(Debug, Clone, Default)]
pub struct LoadOptions {
    /// The command after `--`, added as a main named `main` (bytes, as given).
    pub command: Vec<OsString>,
    /// Whether podinit runs as root (decides if `user` is allowed).
    pub is_root: bool,
    /// The directory a relative `working_dir` is taken from: podinit's start
    /// directory, once podinit has left it for `/` (a `podinit reload`);
    /// `None`: the current directory.
    pub start_dir: Option<PathBuf>,
    /// Which workload of a multi-document Kubernetes manifest is the pod
    /// (`--pod`, `PODINIT_POD`).
    pub pod: Option<String>,
    /// Commands for entries of an imported file that have none
    /// (`--command NAME=CMD`, run by `/bin/sh -c`).
    pub commands: Vec<(String, String)>,
    /// Check only what the file says, not what this machine has: a `user`,
    /// a `working_dir` or an `env_file` that may exist only in the image
    /// (`podinit import`, which writes a file for another machine).
    pub portable: bool,
}

/// Reads and validates the config file at `path` (if any) plus the command line.
///
/// # Errors
/// A [`ConfigError`] listing every problem: unreadable file, TOML syntax, unknown
/// key, bad value, or a broken rule (docs/reference.md, "Configuration").
pub fn load(path: Option<&Path>, opts: &LoadOptions) -> Result<PodSpec, ConfigError> {
    let source = match path {
        Some(p) => read_source(p, opts)?,
        None => Source::default(),
    };
    from_source(&source, opts)
}

/// The config file at `path` as podinit TOML: the file itself, or, for
/// another tool's file (a Kubernetes manifest, Compose, supervisord,
/// Procfile, process-compose: recognised by content, docs/import.md), the
/// TOML that `podinit import` would write for it, with its places.
///
/// # Errors
/// A [`ConfigError`]: the file cannot be read, or cannot be imported.
pub fn read_source(path: &Path, opts: &LoadOptions) -> Result<Source, ConfigError> {
    let text = read_config(path)?;
    #[cfg(feature = "import")]
    {
        let format = crate::import::detect(path, &text);
        if format != crate::import::Format::Toml {
            let import = crate::import::ImportOptions {
                pod: opts.pod.clone(),
                commands: opts.commands.clone(),
                for_run: true,
                ..Default::default()
            };
            let imported = crate::import::import(format, path, &text, &import)?;
            return Ok(Source {
                path: Some(path.to_owned()),
                text: imported.toml,
                origin: Some(imported.origin),
            });
        }
    }
    #[cfg(not(feature = "import"))]
    let _ = opts;
    Ok(Source { path: Some(path.to_owned()), text, origin: None })
}

/// Largest config file read (bytes); a larger one (or an endless one such as
/// /dev/zero) is refused rather than read into memory.
pub const MAX_CONFIG_BYTES: u64 = 4 << 20;

/// Why a file could not be read as text.
#[derive(Debug, thiserror::Error)]
pub enum ReadError {
    #[error("{0}")]
    Io(#[from] std::io::Error),
    #[error("larger than {} MiB", MAX_CONFIG_BYTES >> 20)]
    TooLarge,
    /// Not UTF-8; `line` and `col` (from 1) of the first bad byte.
    #[error("not UTF-8 text")]
    NotUtf8 { line: usize, col: usize },
}

/// Reads a UTF-8 text file of at most [`MAX_CONFIG_BYTES`]: the config, an
/// `env_file`, /etc/passwd. A larger one, or an endless one such as
/// /dev/zero, is refused after reading one byte past the limit.
///
/// # Errors
/// [`ReadError`]: the file cannot be read, is too large, or is not UTF-8.
pub fn read_text(path: &Path) -> Result<String, ReadError> {
    read_text_from(path, false)
}

/// As [`read_text`], for a file someone else wrote: a symbolic link is refused
/// (`O_NOFOLLOW`) instead of followed.
///
/// # Errors
/// As [`read_text`], and ELOOP for a symbolic link.
pub fn read_text_no_symlink(path: &Path) -> Result<String, ReadError> {
    read_text_from(path, true)
}

fn read_text_from(path: &Path, no_symlink: bool) -> Result<String, ReadError> {
    use std::io::Read as _;
    use std::os::unix::fs::{FileTypeExt, OpenOptionsExt};
    // O_NONBLOCK: opening a FIFO must not wait for a writer (it would hang
    // podinit); a read that would block fails at once instead of waiting.
    let flags = libc::O_NONBLOCK | if no_symlink { libc::O_NOFOLLOW } else { 0 };
    let file = std::fs::OpenOptions::new().read(true).custom_flags(flags).open(path)?;
    let kind = file.metadata()?.file_type();
    if kind.is_fifo() || kind.is_socket() {
        return Err(ReadError::Io(std::io::Error::other("a FIFO or socket, not a file")));
    }
    let mut bytes = Vec::new();
    file.take(MAX_CONFIG_BYTES + 1).read_to_end(&mut bytes)?;
    if bytes.len() as u64 > MAX_CONFIG_BYTES {
        return Err(ReadError::TooLarge);
    }
    String::from_utf8(bytes).map_err(|e| {
        let good = &e.as_bytes()[..e.utf8_error().valid_up_to()];
        let line = good.iter().filter(|&&b| b == b'\n').count() + 1;
        let start = good.iter().rposition(|&b| b == b'\n').map_or(0, |i| i + 1);
        let col = String::from_utf8_lossy(&good[start..]).chars().count() + 1;
        ReadError::NotUtf8 { line, col }
    })
}

fn read_config(path: &Path) -> Result<String, ConfigError> {
    let fail = |line: usize, col: usize, message: String| {
        ConfigError(vec![ConfigIssue {
            file: path.display().to_string(),
            line,
            col,
            key: String::new(),
            message,
        }])
    };
    read_text(path).map_err(|e| match e {
        ReadError::Io(e) => fail(0, 0, format!("cannot read config file: {e}")),
        ReadError::TooLarge => fail(0, 0, format!("config file is {e}")),
        ReadError::NotUtf8 { line, col } => {
            fail(line, col, "the config file is not UTF-8 text (TOML must be)".into())
        }
    })
}

/// Validates config text (already read) plus the command line.
///
/// # Errors
/// As [`load`].
pub fn from_source(source: &Source, opts: &LoadOptions) -> Result<PodSpec, ConfigError> {
    let file = match &source.origin {
        Some(o) => o.file.clone(),
        None => source.path.as_ref().map_or_else(|| "<command line>".to_owned(), |p| p.display().to_string()),
    };
    let dir = source.path.as_deref().and_then(Path::parent).filter(|d| !d.as_os_str().is_empty());
    let mut v =
        Validator { src: &source.text, origin: source.origin.as_ref(), dir, file, issues: Vec::new(), opts };
    let raw: RawConfig = match toml::from_str(&source.text) {
        Ok(raw) => raw,
        Err(e) => {
            let offset = e.span().map_or(0, |s| s.start);
            v.at(offset, e.message().trim().to_owned());
            return Err(ConfigError(v.issues));
        }
    };
    let spec = v.pod(raw);
    if v.issues.is_empty() {
        Ok(spec)
    } else {
        v.issues.sort_by_key(|i| (i.line, i.col));
        Err(ConfigError(v.issues))
    }
}

struct Validator<'a> {
    src: &'a str,
    origin: Option<&'a super::locate::Origin>,
    /// The config file's directory, for relative `env_file` paths.
    dir: Option<&'a Path>,
    file: String,
    issues: Vec<ConfigIssue>,
    opts: &'a LoadOptions,
}

impl Validator<'_> {
    fn at(&mut self, offset: usize, message: String) {
        let place = self.place(offset);
        self.issues.push(ConfigIssue {
            file: self.file.clone(),
            line: place.line,
            col: place.col,
            key: place.key,
            message,
        });
    }

    /// The place of TOML byte `offset`, in the file the user wrote.
    fn place(&self, offset: usize) -> super::locate::Place {
        match self.origin.and_then(|o| o.place(offset)) {
            Some(p) => p.clone(),
            None => locate(self.src, offset),
        }
    }

    fn nowhere(&mut self, message: String) {
        self.issues.push(ConfigIssue {
            file: self.file.clone(),
            line: 0,
            col: 0,
            key: String::new(),
            message,
        });
    }

    fn pod(&mut self, raw: RawConfig) -> PodSpec {
        let pod = raw.pod.unwrap_or_default();
        let backoff = pod.backoff.unwrap_or_default();
        let defaults = BackoffSpec::default();
        let backoff = BackoffSpec {
            initial: backoff.initial.map_or(defaults.initial, |d| d.into_inner().0),
            max: backoff.max.map_or(defaults.max, |d| d.into_inner().0),
            reset_after: backoff.reset_after.map_or(defaults.reset_after, |d| d.into_inner().0),
        };
        if backoff.initial > backoff.max {
            self.nowhere(format!(
                "pod.backoff: initial ({}) is longer than max ({})",
                humantime::format_duration(backoff.initial),
                humantime::format_duration(backoff.max)
            ));
        }
        let raw_pod_log = pod.log;
        let log = pod.log.unwrap_or(LogMode::Prefixed);
        let mut entries = Vec::new();
        let mut seen: BTreeMap<String, usize> = BTreeMap::new();
        for p in raw.process {
            let start = p.span().start;
            if let Some(e) = self.entry(p.into_inner(), start, log) {
                if let Some(&first) = seen.get(&e.name) {
                    let line = self.place(first).line;
                    let at = self.name_offset(start);
                    self.at(at, format!("duplicate name {:?} (first used on line {line})", e.name));
                } else {
                    seen.insert(e.name.clone(), self.name_offset(start));
                }
                entries.push(e);
            }
        }
        if !self.opts.command.is_empty() {
            // With no config file at all podinit is a plain init, like `tini --`:
            // the command's output passes untouched (no copy, no prefix).
            let log = if self.src.trim().is_empty() && raw_pod_log.is_none() { LogMode::Raw } else { log };
            if seen.contains_key("main") {
                let at = seen["main"];
                self.at(
                    at,
                    "the name \"main\" is taken by the command given after `--`; rename this entry".into(),
                );
            }
            if let Some(argv) = Argv::new(self.opts.command.clone()) {
                let mut main = EntrySpec::new("main", Role::Main, argv, log);
                main.stop_with_received_signal = true;
                entries.push(main);
            }
        }
        // Read only when there is a sidecar to protect: a plain init has none.
        if entries.iter().any(|e| e.role == Role::Sidecar) {
            protect_sidecars_from_oom(&mut entries, inherited_oom_score_adj());
        }
        if self.issues.is_empty() && !entries.iter().any(|e| e.role == Role::Main) {
            self.nowhere(
                "no main to run: give a [[process]] with role = \"main\" (the default role) or a command after `--`".into(),
            );
        }
        PodSpec {
            restart_policy: pod.restart_policy.unwrap_or(RestartPolicy::Never),
            termination_grace_period: pod
                .termination_grace_period
                .map_or(DEFAULT_GRACE, |d| d.into_inner().0),
            completion: pod.completion.unwrap_or(Completion::All),
            backoff,
            log,
            status_socket: pod.status_socket.and_then(|s| {
                // sun_path holds 108 bytes, the terminating NUL included.
                if s.get_ref().len() > 107 || s.get_ref().is_empty() {
                    self.at(
                        s.span().start,
                        "status_socket must be 1 to 107 bytes long (a Unix socket path)".into(),
                    );
                    None
                } else {
                    Some(PathBuf::from(s.into_inner()))
                }
            }),
            http: pod.http.and_then(|h| {
                let at = h.span().start;
                match h.get_ref().parse::<std::net::SocketAddr>() {
                    Ok(addr) => Some(addr),
                    Err(_) => {
                        self.at(
                            at,
                            format!(
                                "{:?} is not an address and port such as \"0.0.0.0:9090\" or \"[::]:9090\"",
                                h.get_ref()
                            ),
                        );
                        None
                    }
                }
            }),
            active_deadline: pod.active_deadline.and_then(|d| {
                let at = d.span().start;
                let d = d.into_inner().0;
                if d.is_zero() {
                    self.at(at, "active_deadline must be more than 0".into());
                    None
                } else {
                    Some(d)
                }
            }),
            entries,
        }
    }

    /// Offset of the `name` value of the process table at `start`, for messages.
    fn name_offset(&self, start: usize) -> usize {
        self.src[start..].find("name").map_or(start, |i| start + i)
    }

    fn entry(&mut self, p: RawProcess, start: usize, pod_log: LogMode) -> Option<EntrySpec> {
        let before = self.issues.len();
        let name = match p.name {
            Some(n) => {
                let at = n.span().start;
                let n = n.into_inner();
                if let Err(why) = check_name(&n) {
                    self.at(at, format!("bad name {n:?}: {why}"));
                }
                n
            }
            None => {
                self.at(start, "missing key `name`".into());
                String::new()
            }
        };
        let role = p.role.as_ref().map_or(Role::Main, |r| *r.get_ref());
        let argv = match p.command {
            Some(c) => self.command(c).map(|w| OsString::from(w)),
            None => {
                self.at(start, format!("process {name:?}: missing key `command`"));
                Argv::program_only(OsString::new())
            }
        };
        if role == Role::Init {
            for (key, probe) in [
                ("startup_probe", p.startup_probe.as_ref().map(Spanned::span)),
                ("readiness_probe", p.readiness_probe.as_ref().map(Spanned::span)),
                ("liveness_probe", p.liveness_probe.as_ref().map(Spanned::span)),
                ("post_start", p.post_start.as_ref().map(Spanned::span)),
                ("pre_stop", p.pre_stop.as_ref().map(Spanned::span)),
            ] {
                if let Some(span) = probe {
                    self.at(span.start, format!("{key} is not allowed on an init entry (as in Kubernetes, only sidecars and mains have probes and hooks)"));
                }
            }
            if let Some(h) = &p.hold_until {
                self.at(h.span().start, "hold_until applies to sidecars only".into());
            }
        }
        if role == Role::Main {
            if let Some(h) = &p.hold_until {
                self.at(h.span().start, "hold_until applies to sidecars only".into());
            }
        }
        let log = p.log.unwrap_or(pod_log);
        let startup_probe = p.startup_probe.map(|s| self.probe(s, ProbeKind::Startup, log));
        let liveness_probe = p.liveness_probe.map(|s| self.probe(s, ProbeKind::Liveness, log));
        let readiness_probe = p.readiness_probe.map(|s| self.probe(s, ProbeKind::Readiness, log));
        let fds: Vec<i32> = [&startup_probe, &readiness_probe]
            .into_iter()
            .flatten()
            .filter_map(|p| match p.action {
                ProbeAction::Fd { fd } => Some(fd),
                _ => None,
            })
            .collect();
        if fds.windows(2).any(|w| w[0] != w[1]) {
            self.at(start, format!("process {name:?}: its startup and readiness probes name different notification descriptors ({} and {}); one process has one", fds[0], fds[1]));
        }
        let post_start = p.post_start.map(|h| self.hook(h));
        let pre_stop = p.pre_stop.map(|h| self.hook(h));

        let mut env = Vec::new();
        if let Some(f) = p.env_file.filter(|_| !self.opts.portable) {
            let at = f.span().start;
            // Relative to the config file's directory, as Compose reads env_file.
            let path = match self.dir {
                Some(dir) if Path::new(f.get_ref()).is_relative() => dir.join(f.get_ref()),
                _ => PathBuf::from(f.get_ref()),
            };
            match read_text(&path) {
                Ok(text) => match crate::config::envfile::parse(&text) {
                    Ok(pairs) => env.extend(pairs),
                    Err(e) => self.at(at, format!("env_file {:?}: {e}", f.get_ref())),
                },
                Err(e) => self.at(at, format!("cannot read env_file {:?}: {e}", f.get_ref())),
            }
        }
        for (key, value) in p.env.iter().flatten() {
            // The environment is `KEY=VALUE` C strings: these would be cut or misread.
            if key.is_empty() || key.contains('=') || key.contains('\0') || value.contains('\0') {
                self.at(
                    start,
                    format!("env {key:?}: a name must be non-empty without `=` or NUL, a value without NUL"),
                );
            }
        }
        env.extend(p.env.unwrap_or_default());
        let working_dir = p.working_dir.and_then(|w| {
            let at = w.span().start;
            let dir = PathBuf::from(w.into_inner());
            let seen_from =
                self.opts.start_dir.as_ref().map_or_else(|| dir.clone(), |start| start.join(&dir));
            if seen_from.is_dir() || self.opts.portable {
                Some(dir)
            } else {
                self.at(at, format!("working_dir {:?} is not a directory", dir.display().to_string()));
                None
            }
        });
        let user = p.user.filter(|_| !self.opts.portable).and_then(|u| {
            let at = u.span().start;
            if !self.opts.is_root {
                self.at(at, "`user` needs podinit to run as root (it is not)".into());
                return None;
            }
            match crate::config::users::resolve(
                u.get_ref(),
                Path::new("/etc/passwd"),
                Path::new("/etc/group"),
            ) {
                Ok(user) => Some(user),
                Err(e) => {
                    self.at(at, format!("user {:?}: {e}", u.get_ref()));
                    None
                }
            }
        });
        let restart_policy = p.restart_policy.and_then(|r| {
            if role == Role::Sidecar {
                self.at(
                    r.span().start,
                    "restart_policy is not allowed on a sidecar: it restarts after every exit".into(),
                );
                return None;
            }
            Some(r.into_inner())
        });
        let restart_rules = p.restart_rules.map_or_else(Vec::new, |rules| self.restart_rules(role, rules));
        let restart_during_termination = p.restart_during_termination.is_some_and(|r| {
            if role != Role::Sidecar {
                self.at(r.span().start, "restart_during_termination applies to sidecars only".into());
            }
            role == Role::Sidecar && r.into_inner()
        });
        let oom_score_adj = p.oom_score_adj.and_then(|o| {
            let v = *o.get_ref();
            if (-1000..=1000).contains(&v) {
                Some(v)
            } else {
                self.at(o.span().start, format!("oom_score_adj {v} is outside -1000..=1000"));
                None
            }
        });
        if self.issues.len() > before {
            return None;
        }
        Some(EntrySpec {
            name,
            role,
            argv,
            env,
            working_dir,
            user,
            hold_until: p.hold_until.map_or(HoldUntil::Ready, |h| h.into_inner()),
            stop_signal: p.stop_signal.map_or(Signal::TERM, |s| s.0),
            stop_with_received_signal: false,
            log,
            startup_probe,
            readiness_probe,
            liveness_probe,
            post_start,
            pre_stop,
            oom_score_adj,
            no_new_privileges: p.no_new_privileges.unwrap_or(false),
            max_restarts: p.max_restarts.map(Spanned::into_inner),
            restart_policy,
            restart_rules,
            restart_during_termination,
        })
    }

    /// An entry's `restart_rules` (KEP-5307): inits and mains only, at most 20
    /// rules of at most 255 exit codes, each 0 to 255.
    fn restart_rules(
        &mut self,
        role: Role,
        rules: Spanned<Vec<Spanned<RawRestartRule>>>,
    ) -> Vec<RestartRule> {
        let at = rules.span().start;
        let rules = rules.into_inner();
        if rules.len() > MAX_RESTART_RULES {
            self.at(at, format!("at most {MAX_RESTART_RULES} restart_rules (found {})", rules.len()));
        }
        let mut out = Vec::new();
        for rule in rules {
            let rule = rule.into_inner();
            let values_at = rule.exit_codes.values.span().start;
            let values = rule.exit_codes.values.into_inner();
            if values.is_empty() || values.len() > MAX_EXIT_CODES {
                self.at(
                    values_at,
                    format!(
                        "exit_codes.values needs 1 to {MAX_EXIT_CODES} exit codes (found {})",
                        values.len()
                    ),
                );
            }
            let mut codes = Vec::new();
            for v in values {
                match u8::try_from(*v.get_ref()) {
                    Ok(code) => codes.push(code),
                    Err(_) => {
                        self.at(v.span().start, format!("exit code {} is outside 0..=255", v.get_ref()))
                    }
                }
            }
            if role == Role::Sidecar && rule.action != RuleAction::RestartAll {
                self.at(
                    at,
                    "a sidecar restarts after every exit: its restart_rules can only say restart_all".into(),
                );
            }
            out.push(RestartRule { action: rule.action, operator: rule.exit_codes.operator, values: codes });
        }
        out
    }

    /// The command of `c`; with an error recorded for an empty one (and a
    /// placeholder returned, as the pod is refused anyway).
    fn command(&mut self, c: Spanned<RawCommand>) -> Argv<String> {
        let at = c.span().start;
        let argv = match c.into_inner() {
            RawCommand::Argv(argv) if argv.first().is_some_and(|a| !a.is_empty()) => Argv::new(argv),
            RawCommand::Shell(s) if !s.trim().is_empty() => Argv::new(vec!["/bin/sh".into(), "-c".into(), s]),
            _ => None,
        };
        let Some(argv) = argv else {
            self.at(at, "empty command".into());
            return Argv::program_only(String::new());
        };
        // exec(2) takes C strings: a NUL would end an argument early.
        if argv.iter().any(|a| a.contains('\0')) {
            self.at(at, "a command must not contain a NUL character".into());
        }
        argv
    }

    fn exec(&mut self, e: RawExec) -> Argv<String> {
        self.command(e.command)
    }

    /// A probe of `kind` on an entry whose output is `log`.
    fn probe(&mut self, s: Spanned<RawProbe>, kind: ProbeKind, log: LogMode) -> ProbeSpec {
        let single_success = kind != ProbeKind::Readiness;
        let at = s.span().start;
        let p = s.into_inner();
        let handlers = [
            p.exec.is_some(),
            p.tcp_socket.is_some(),
            p.http_get.is_some(),
            p.grpc.is_some(),
            p.notify.is_some(),
            p.fd.is_some(),
            p.log_line.is_some(),
        ];
        let count = handlers.iter().filter(|&&h| h).count();
        if count != 1 {
            self.at(
                at,
                format!("a probe needs exactly one of exec, tcp_socket, http_get, grpc, notify, fd, log_line (found {count})"),
            );
        }
        let action = if let Some(e) = p.exec {
            ProbeAction::Exec { argv: self.exec(e) }
        } else if let Some(t) = p.tcp_socket {
            let port = self.port(t.port);
            let host = self.host(t.host, at);
            ProbeAction::TcpSocket { host, port }
        } else if let Some(h) = p.http_get {
            ProbeAction::HttpGet(self.http_get(h))
        } else if let Some(g) = p.grpc {
            if !cfg!(feature = "grpc") {
                self.at(
                    at,
                    "grpc probes need the `grpc` feature, which this podinit was built without".into(),
                );
            }
            let port = self.port(g.port);
            ProbeAction::Grpc { host: "127.0.0.1".into(), port, service: g.service.unwrap_or_default() }
        } else if let Some(n) = p.notify {
            if !n.get_ref() {
                self.at(n.span().start, "notify must be true (leave the probe out to have none)".into());
            }
            ProbeAction::Notify
        } else if let Some(fd) = p.fd {
            self.push_kind(fd.span().start, "fd", kind);
            let n = *fd.get_ref();
            let fd = i32::try_from(n).ok().filter(|n| (3..=MAX_NOTIFICATION_FD).contains(n)).unwrap_or_else(|| {
                self.at(fd.span().start, format!("must be a descriptor from 3 to {MAX_NOTIFICATION_FD} (found {n}; 0-2 are stdin, stdout and stderr)"));
                3
            });
            ProbeAction::Fd { fd }
        } else if let Some(l) = p.log_line {
            self.push_kind(l.span().start, "log_line", kind);
            if log == LogMode::Raw {
                self.at(l.span().start, "log_line needs the entry's output to pass through podinit (log = \"prefixed\" or \"json\"; raw output does not)".into());
            }
            ProbeAction::LogLine(self.log_line(l))
        } else {
            ProbeAction::Exec { argv: Argv::program_only(String::new()) }
        };
        // Kubernetes' defaults live in ProbeSpec::new alone.
        let defaults = ProbeSpec::new(action);
        let mut positive = |v: Option<Spanned<u32>>, default: u32, key: &str| match v {
            Some(n) if *n.get_ref() == 0 => {
                self.at(n.span().start, format!("{key} must be at least 1"));
                default
            }
            Some(n) => n.into_inner(),
            None => default,
        };
        let success_span = p.success_threshold.as_ref().map(|s| (s.span().start, *s.get_ref()));
        let success_threshold =
            positive(p.success_threshold, defaults.success_threshold, "success_threshold");
        let failure_threshold =
            positive(p.failure_threshold, defaults.failure_threshold, "failure_threshold");
        if single_success {
            if let Some((at, n)) = success_span.filter(|&(_, n)| n != 1) {
                self.at(at, format!("success_threshold must be 1 on liveness and startup probes (found {n}), as in Kubernetes"));
            }
        }
        let mut nonzero = |d: Option<Spanned<super::raw::RawDuration>>, default: Duration, key: &str| match d
        {
            Some(d) if d.get_ref().0.is_zero() => {
                self.at(d.span().start, format!("{key} must be more than 0"));
                default
            }
            Some(d) => d.into_inner().0,
            None => default,
        };
        let period = nonzero(p.period, defaults.period, "period");
        let timeout = nonzero(p.timeout, defaults.timeout, "timeout");
        let termination_grace_period = match p.termination_grace_period {
            Some(d) if !single_success => {
                self.at(
                    d.span().start,
                    "termination_grace_period is allowed on liveness and startup probes only".into(),
                );
                None
            }
            Some(d) => Some(d.into_inner().0),
            None => None,
        };
        ProbeSpec {
            initial_delay: p.initial_delay.map_or(defaults.initial_delay, |d| d.0),
            period,
            timeout,
            success_threshold,
            failure_threshold,
            termination_grace_period,
            ..defaults
        }
    }

    /// `fd` and `log_line` say "ready" once: they serve startup and readiness
    /// probes, never liveness.
    fn push_kind(&mut self, at: usize, handler: &str, kind: ProbeKind) {
        if kind == ProbeKind::Liveness {
            self.at(at, format!("{handler} serves startup and readiness probes only: it says \"ready\" once and cannot say \"still alive\" (use notify, whose WATCHDOG=1 can)"));
        }
    }

    /// `log_line = { contains }` or `{ regex }`: exactly one, not empty.
    fn log_line(&mut self, l: Spanned<RawLogLine>) -> LineMatch {
        let at = l.span().start;
        match l.into_inner() {
            RawLogLine { contains: Some(text), regex: None } => {
                if text.get_ref().is_empty() {
                    self.at(text.span().start, "must not be empty (every line would match)".into());
                }
                LineMatch::Contains(text.into_inner())
            }
            RawLogLine { contains: None, regex: Some(source) } => {
                match regex_lite::Regex::new(source.get_ref()) {
                    Ok(regex) => LineMatch::Regex(Pattern { source: source.into_inner(), regex }),
                    Err(e) => {
                        let first = e
                            .to_string()
                            .lines()
                            .find(|l| !l.trim().is_empty())
                            .unwrap_or_default()
                            .to_owned();
                        self.at(source.span().start, format!("not a regular expression: {}", first.trim()));
                        LineMatch::Contains(source.into_inner())
                    }
                }
            }
            _ => {
                self.at(at, "log_line needs exactly one of contains, regex".into());
                LineMatch::Contains(String::new())
            }
        }
    }

    fn hook(&mut self, h: Spanned<RawHook>) -> HookSpec {
        let at = h.span().start;
        let h = h.into_inner();
        let count =
            [h.exec.is_some(), h.http_get.is_some(), h.sleep.is_some()].iter().filter(|&&x| x).count();
        if count != 1 {
            self.at(at, format!("a hook needs exactly one of exec, http_get, sleep (found {count})"));
        }
        if let Some(e) = h.exec {
            HookSpec::Exec { argv: self.exec(e) }
        } else if let Some(g) = h.http_get {
            HookSpec::HttpGet(self.http_get(g))
        } else {
            HookSpec::Sleep(h.sleep.map_or(Duration::ZERO, |d| d.0))
        }
    }

    /// A probe's port: a number 1-65535, or `"${NAME}"` / `"${NAME:-default}"`
    /// read from podinit's own environment (the one every command inherits).
    fn port(&mut self, p: Spanned<RawPort>) -> u16 {
        let at = p.span().start;
        let in_range = |n: i64| u16::try_from(n).ok().filter(|&n| n != 0);
        let port = match p.into_inner() {
            RawPort::Number(n) => in_range(n).ok_or_else(|| format!("must be 1-65535 (found {n})")),
            RawPort::Env(text) => port_from_env(&text, |name| std::env::var(name).ok()).and_then(|value| {
                value
                    .trim()
                    .parse()
                    .ok()
                    .and_then(in_range)
                    .ok_or_else(|| format!("must be 1-65535 (found {value:?}, from {text:?})"))
            }),
        };
        port.unwrap_or_else(|message| {
            self.at(at, message);
            0
        })
    }

    /// `host` of a probe: 127.0.0.1 by default; an empty one is an error.
    fn host(&mut self, host: Option<String>, at: usize) -> String {
        match host {
            Some(h) if h.trim().is_empty() || h.chars().any(|c| c.is_whitespace() || c.is_control()) => {
                self.at(at, format!("host {h:?} is not a host name or address"));
                h
            }
            Some(h) => h,
            None => "127.0.0.1".into(),
        }
    }

    fn http_get(&mut self, h: RawHttpGet) -> HttpGet {
        let at = h.port.span().start;
        let headers_at = h.headers.as_ref().map_or(at, |hs| hs.span().start);
        for (name, value) in h.headers.iter().flat_map(|hs| hs.get_ref()) {
            // RFC 9110 field names are tokens; a value must not end the line.
            let token = |c: char| c.is_ascii_alphanumeric() || "!#$%&'*+-.^_`|~".contains(c);
            if name.is_empty() || !name.chars().all(token) {
                self.at(headers_at, format!("header name {name:?} is not a valid HTTP field name"));
            }
            if value.contains(['\r', '\n', '\0']) {
                self.at(headers_at, format!("header {name:?}: the value must not contain CR, LF or NUL"));
            }
        }
        if let Some(path) = &h.path {
            if path.contains(|c: char| c.is_whitespace() || c.is_control()) {
                self.at(at, format!("path {path:?} must not contain spaces or control characters"));
            }
        }
        let host = self.host(h.host, at);
        let port = self.port(h.port);
        let path = h.path.unwrap_or_else(|| "/".into());
        let path = if path.starts_with('/') { path } else { format!("/{path}") };
        HttpGet {
            host,
            port,
            path,
            scheme: h.scheme.map_or(Scheme::Http, |s| {
                if *s.get_ref() == Scheme::Https && !cfg!(feature = "https") {
                    self.at(
                        s.span().start,
                        "https needs the `https` feature, which this podinit was built without".into(),
                    );
                }
                s.into_inner()
            }),
            headers: h.headers.map(Spanned::into_inner).unwrap_or_default().into_iter().collect(),
        }
    }
}

/// Resolves a port written as `"${NAME}"` or `"${NAME:-default}"` (the whole
/// string; the default is used when NAME is unset or empty, as in a POSIX
/// shell) through `lookup`.
///
/// # Errors
/// A message for any other text, a name that is not `[A-Za-z_][A-Za-z0-9_]*`,
/// or an unset variable without a default.
fn port_from_env(text: &str, lookup: impl Fn(&str) -> Option<String>) -> Result<String, String> {
    let usage =
        || format!("port {text:?} is neither a number nor \"${{VARIABLE}}\" or \"${{VARIABLE:-default}}\"");
    let inner = text.strip_prefix("${").and_then(|t| t.strip_suffix('}')).ok_or_else(usage)?;
    let (name, default) = match inner.split_once(":-") {
        Some((name, default)) => (name, Some(default)),
        None => (inner, None),
    };
    let mut chars = name.chars();
    let valid = chars.next().is_some_and(|c| c == '_' || c.is_ascii_alphabetic())
        && chars.all(|c| c == '_' || c.is_ascii_alphanumeric());
    if !valid {
        return Err(usage());
    }
    match (lookup(name).filter(|v| !v.is_empty()), default) {
        (Some(value), _) => Ok(value),
        (None, Some(default)) => Ok(default.to_owned()),
        (None, None) => {
            Err(format!("port {text:?}: {name} is not set (write \"${{{name}:-8080}}\" for a default)"))
        }
    }
}

/// podinit's own `oom_score_adj`, which children inherit (0 when unreadable).
fn inherited_oom_score_adj() -> i32 {
    crate::procfs::read("/proc/self/oom_score_adj").ok().and_then(|s| s.trim().parse().ok()).unwrap_or(0)
}

/// Lowers each sidecar's `oom_score_adj` to the lowest of the mains' when it
/// would otherwise be higher, so that a sidecar is never more likely to be
/// OOM-killed than a main (KEP-753 "sidecar containers" OOM adjustment, issue
/// kubernetes#111356). `inherited` is what an entry without a setting gets.
pub fn protect_sidecars_from_oom(entries: &mut [EntrySpec], inherited: i32) {
    let lowest_main =
        entries.iter().filter(|e| e.role == Role::Main).map(|e| e.oom_score_adj.unwrap_or(inherited)).min();
    let Some(lowest_main) = lowest_main else { return };
    for e in entries.iter_mut().filter(|e| e.role == Role::Sidecar) {
        if e.oom_score_adj.unwrap_or(inherited) > lowest_main {
            e.oom_score_adj = Some(lowest_main);
        }
    }
}

/// Checks a DNS label (RFC 1123, as Kubernetes container names):
/// `[a-z0-9]([-a-z0-9]*[a-z0-9])?`, at most 63 characters.
///
/// # Errors
/// Says what is wrong with the name.
pub fn check_name(name: &str) -> Result<(), &'static str> {
    if name.is_empty() {
        return Err("empty");
    }
    if name.len() > 63 {
        return Err("longer than 63 characters");
    }
    if !name.bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-') {
        return Err("only lowercase letters, digits and '-' are allowed (a DNS label)");
    }
    if name.starts_with('-') || name.ends_with('-') {
        return Err("must start and end with a letter or digit");
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(text: &str) -> Result<PodSpec, ConfigError> {
        let source = Source { path: Some("pod.toml".into()), text: text.into(), origin: None };
        from_source(
            &source,
            &LoadOptions { command: vec![], is_root: true, start_dir: None, ..Default::default() },
        )
    }

    fn first_error(text: &str) -> String {
        match check(text) {
            Ok(_) => panic!("accepted: {text}"),
            Err(e) => e.0[0].to_string(),
        }
    }

    #[test]
    fn full_example_of_spec_is_accepted() {
        let text = r#"
[pod]
restart_policy = "Never"
termination_grace_period = "7s"
completion = "all"
backoff = { initial = "1s", max = "60s", reset_after = "10m" }
log = "prefixed"
status_socket = "/run/podinit.sock"

[[process]]
name = "migrate"
role = "init"
command = ["/app/migrate", "--up"]

[[process]]
name = "proxy"
role = "sidecar"
command = "exec envoy -c /etc/envoy.yaml"
env = { LOG_LEVEL = "info" }
working_dir = "/"
hold_until = "ready"
stop_signal = "SIGTERM"
log = "prefixed"
startup_probe   = { tcp_socket = { port = 15001 }, period = "100ms", failure_threshold = 300 }
readiness_probe = { http_get = { port = 15021, path = "/healthz/ready" } }
liveness_probe  = { exec = { command = ["/bin/check"] }, period = "10s", timeout = "1s", failure_threshold = 3 }
post_start = { exec = { command = ["/bin/warmup"] } }
pre_stop   = { sleep = "5s" }
oom_score_adj = 0

[[process]]
name = "app"
command = ["/app/server"]
"#;
        let spec = check(text).unwrap();
        assert_eq!(spec.entries.len(), 3);
        assert_eq!(
            spec.entries[1].argv.iter().collect::<Vec<_>>(),
            ["/bin/sh", "-c", "exec envoy -c /etc/envoy.yaml"]
        );
        let sp = spec.entries[1].startup_probe.as_ref().unwrap();
        assert_eq!(sp.period, Duration::from_millis(100));
        assert_eq!(sp.failure_threshold, 300);
        assert_eq!(sp.timeout, Duration::from_secs(1));
        assert_eq!(spec.entries[2].role, Role::Main);
        assert_eq!(spec.backoff.reset_after, Duration::from_secs(600));
    }

    #[test]
    fn integer_seconds_are_durations() {
        let spec = check("[pod]\ntermination_grace_period = 3\n[[process]]\nname=\"a\"\ncommand=\"true\"\n")
            .unwrap();
        assert_eq!(spec.termination_grace_period, Duration::from_secs(3));
    }

    #[test]
    fn errors_name_file_line_col_and_key() {
        let e = first_error("[[process]]\nname = \"a\"\ncommand = \"x\"\nstartup_probe = { exec = { command = [\"x\"] }, perod = \"1s\" }\n");
        assert!(e.starts_with("pod.toml:4:"), "{e}");
        assert!(e.contains("process[1].startup_probe.perod"), "{e}");
        let e =
            first_error("[pod]\nrestart_policy = \"Sometimes\"\n[[process]]\nname=\"a\"\ncommand=\"x\"\n");
        assert!(e.starts_with("pod.toml:2:18: pod.restart_policy:"), "{e}");
        let e = first_error("[[process]]\nname = \"a\"\ncommand = \"x\"\nstop_signal = \"SIGFOO\"\n");
        assert!(e.contains("pod.toml:4:15: process[1].stop_signal: unknown signal name"), "{e}");
        let e = first_error(
            "[pod]\ntermination_grace_period = \"10parsecs\"\n[[process]]\nname=\"a\"\ncommand=\"x\"\n",
        );
        assert!(
            e.contains(":2:") && e.contains("termination_grace_period") && e.contains("invalid duration"),
            "{e}"
        );
    }

    #[test]
    fn every_validation_rule_of_the_config_is_enforced() {
        let cases = [
            ("[[process]]\nname=\"A\"\ncommand=\"x\"\n", "bad name"),
            (&format!("[[process]]\nname=\"{}\"\ncommand=\"x\"\n", "a".repeat(64)), "longer than 63"),
            ("[[process]]\nname=\"-a\"\ncommand=\"x\"\n", "bad name"),
            ("[[process]]\nname=\"a\"\ncommand=\"x\"\n[[process]]\nname=\"a\"\ncommand=\"y\"\n", "duplicate name"),
            ("[[process]]\nname=\"i\"\nrole=\"init\"\ncommand=\"x\"\nreadiness_probe={exec={command=[\"x\"]}}\n[[process]]\nname=\"a\"\ncommand=\"x\"\n", "not allowed on an init"),
            ("[[process]]\nname=\"a\"\ncommand=\"x\"\nliveness_probe={exec={command=[\"x\"]}, success_threshold=2}\n", "success_threshold must be 1"),
            ("[[process]]\nname=\"a\"\ncommand=\"x\"\nstartup_probe={exec={command=[\"x\"]}, success_threshold=2}\n", "success_threshold must be 1"),
            ("[[process]]\nname=\"a\"\ncommand=[]\n", "empty command"),
            ("[[process]]\nname=\"a\"\ncommand=\"  \"\n", "empty command"),
            ("[[process]]\nname=\"a\"\nrole=\"sidecar\"\ncommand=\"x\"\n", "no main"),
            ("[[process]]\nname=\"a\"\nrole=\"helper\"\ncommand=\"x\"\n", "unknown variant"),
            ("[[process]]\nname=\"a\"\ncommand=\"x\"\nuser=\"nosuchuser-podinit\"\n", "no user \"nosuchuser-podinit\" in /etc/passwd"),
            ("[pod]\nbogus=1\n", "unknown field"),
            ("[[process]]\nname=\"a\"\ncommand=\"x\"\nrestart_during_termination=true\n", "restart_during_termination applies to sidecars only"),
            ("[[process]]\nname=\"s\"\nrole=\"sidecar\"\ncommand=\"x\"\nrestart_policy=\"Never\"\n[[process]]\nname=\"a\"\ncommand=\"x\"\n", "restart_policy is not allowed on a sidecar"),
            ("[[process]]\nname=\"s\"\nrole=\"sidecar\"\ncommand=\"x\"\nrestart_rules=[{action=\"restart\",exit_codes={operator=\"in\",values=[1]}}]\n[[process]]\nname=\"a\"\ncommand=\"x\"\n", "its restart_rules can only say restart_all"),
            ("[[process]]\nname=\"a\"\ncommand=\"x\"\nrestart_rules=[{action=\"restart\",exit_codes={operator=\"in\",values=[1,256]}}]\n", "pod.toml:4:70: process[1].restart_rules.exit_codes.256: exit code 256 is outside 0..=255"),
            ("[[process]]\nname=\"a\"\ncommand=\"x\"\nrestart_rules=[{action=\"restart\",exit_codes={operator=\"in\",values=[]}}]\n", "exit_codes.values needs 1 to 255 exit codes (found 0)"),
            ("[[process]]\nname=\"a\"\ncommand=\"x\"\nrestart_rules=[{action=\"restart_some\",exit_codes={operator=\"in\",values=[1]}}]\n", "unknown variant `restart_some`, expected `restart` or `restart_all`"),
            ("[[process]]\nname=\"a\"\ncommand=[\"a\\u0000b\"]\n", "pod.toml:3:9: process[1].command: a command must not contain a NUL"),
            ("[[process]]\nname=\"a\"\ncommand=\"x\"\nenv={\"A=B\"=\"x\"}\n", "env \"A=B\": a name must be non-empty without `=` or NUL"),
            ("[[process]]\nname=\"a\"\ncommand=\"x\"\nenv={\"\"=\"x\"}\n", "env \"\": a name must be non-empty"),
            ("[pod]\nbackoff={initial=\"5s\",max=\"1s\"}\n[[process]]\nname=\"a\"\ncommand=\"x\"\n", "pod.backoff: initial (5s) is longer than max (1s)"),
            ("bogus=1\n", "unknown field"),
            ("[[process]\n", "pod.toml:1:11: process: unclosed array table"),
        ];
        for (text, want) in cases {
            let e = first_error(text);
            assert!(e.contains(want), "{text:?}: {e}");
        }
        // `user` by name is accepted when podinit is root.
        let spec = check("[[process]]\nname=\"a\"\ncommand=\"x\"\nuser=\"root\"\n").unwrap();
        assert_eq!(spec.entries[0].user.as_ref().map(|u| (u.uid, u.gid)), Some((0, 0)));
        // `user` is refused when podinit is not root.
        let source = Source {
            path: Some("p.toml".into()),
            text: "[[process]]\nname=\"a\"\ncommand=\"x\"\nuser=\"0\"\n".into(),
            origin: None,
        };
        let e = from_source(
            &source,
            &LoadOptions { command: vec![], is_root: false, start_dir: None, ..Default::default() },
        )
        .unwrap_err();
        assert!(
            e.to_string().contains("p.toml:4:6: process[1].user: `user` needs podinit to run as root"),
            "{e}"
        );
    }

    #[test]
    fn all_errors_are_reported_at_once() {
        let e = check("[[process]]\nname=\"A\"\ncommand=[]\n[[process]]\nname=\"b\"\ncommand=\"x\"\nliveness_probe={exec={command=[\"x\"]}, success_threshold=2}\n").unwrap_err();
        assert_eq!(e.0.len(), 3, "{e}");
    }

    #[test]
    fn sidecars_are_never_more_oom_killable_than_mains() {
        let text = "[[process]]\nname=\"s1\"\nrole=\"sidecar\"\ncommand=\"x\"\n[[process]]\nname=\"s2\"\nrole=\"sidecar\"\ncommand=\"x\"\noom_score_adj=-900\n[[process]]\nname=\"m\"\ncommand=\"x\"\noom_score_adj=-500\n";
        let mut spec = check(text).unwrap();
        protect_sidecars_from_oom(&mut spec.entries, 0);
        assert_eq!(spec.entries[0].oom_score_adj, Some(-500));
        assert_eq!(spec.entries[1].oom_score_adj, Some(-900));
        assert_eq!(spec.entries[2].oom_score_adj, Some(-500));
    }

    #[test]
    fn command_line_adds_a_main() {
        let source = Source::default();
        let spec = from_source(
            &source,
            &LoadOptions {
                command: vec!["true".into()],
                is_root: false,
                start_dir: None,
                ..Default::default()
            },
        )
        .unwrap();
        assert_eq!(spec.entries[0].name, "main");
        assert_eq!(spec.entries[0].argv.iter().collect::<Vec<_>>(), ["true"]);
        let e = from_source(&Source::default(), &LoadOptions::default()).unwrap_err();
        assert!(e.to_string().contains("no main"));
    }

    #[test]
    fn ports_come_from_the_environment_or_a_default() {
        let env = |name: &str| match name {
            "SET" => Some("8081".to_owned()),
            "EMPTY" => Some(String::new()),
            _ => None,
        };
        assert_eq!(port_from_env("${SET}", env), Ok("8081".into()));
        assert_eq!(port_from_env("${SET:-9}", env), Ok("8081".into()));
        assert_eq!(port_from_env("${UNSET:-9}", env), Ok("9".into()));
        assert_eq!(port_from_env("${EMPTY:-9}", env), Ok("9".into()));
        assert!(port_from_env("${UNSET}", env).unwrap_err().contains("UNSET is not set"));
        for bad in ["8080", "$SET", "${}", "${1X}", "${SET", "x${SET}", "${SE T}"] {
            assert!(port_from_env(bad, env).unwrap_err().contains("neither a number"), "{bad}");
        }
        let text = "[[process]]\nname = \"a\"\ncommand = \"true\"\n\
            readiness_probe = { tcp_socket = { port = \"${PODINIT_TEST_SURELY_UNSET:-70000}\" } }\n";
        assert_eq!(
            first_error(text),
            "pod.toml:4:43: process[1].readiness_probe.tcp_socket.port: must be 1-65535 (found \"70000\", from \"${PODINIT_TEST_SURELY_UNSET:-70000}\")"
        );
        let text = text.replace("70000", "8080");
        let spec = check(&text).unwrap_or_else(|e| panic!("{e}"));
        let probe = spec.entries[0].readiness_probe.as_ref().map(|p| &p.action);
        assert!(matches!(probe, Some(ProbeAction::TcpSocket { port: 8080, .. })), "{probe:?}");
    }
}
