//! The warnings of `podinit check` (docs/configuration.md, "Warnings"): a
//! configuration that is valid but most likely not what its author meant.
//! Each has a name, which `allow_warnings` (in `[pod]` or in one
//! `[[process]]`) and `podinit check --allow NAME` silence. Only `podinit
//! check` looks for them: a run starts whatever they say. Each is placed
//! as the errors are (file:line:col and key), in the file the user wrote.
//!
//! This module reads the config text again (already validated) for the
//! places, and the validated model for the values as podinit will use them;
//! it looks at files only to find the programs of commands.

use std::ffi::OsStr;
use std::fmt;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::time::Duration;

use toml::Spanned;

use super::model::{Argv, EntrySpec, HoldUntil, HookSpec, PodSpec, ProbeAction, ProbeKind, Role};
use super::raw::{RawConfig, RawProcess};
use super::validate::{ConfigIssue, Source};

/// One kind of warning.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Lint {
    /// A sidecar held until "started" with a readiness probe and no startup
    /// probe.
    ReadinessGatesNothing,
    /// A probe whose `timeout` is longer than its `period`.
    TimeoutOverPeriod,
    /// A `termination_grace_period` longer than `docker stop` waits.
    GraceOverDockerStop,
    /// A liveness probe, no startup probe, and little time to come up.
    LivenessWithoutStartup,
    /// A command whose program is not found on this machine.
    ProgramNotFound,
}

impl Lint {
    /// Every warning, in the order docs/configuration.md lists them.
    pub const ALL: &'static [Lint] = &[
        Lint::ReadinessGatesNothing,
        Lint::TimeoutOverPeriod,
        Lint::GraceOverDockerStop,
        Lint::LivenessWithoutStartup,
        Lint::ProgramNotFound,
    ];

    /// The name `allow_warnings` and `--allow` take.
    pub const fn name(self) -> &'static str {
        match self {
            Lint::ReadinessGatesNothing => "readiness-gates-nothing",
            Lint::TimeoutOverPeriod => "timeout-over-period",
            Lint::GraceOverDockerStop => "grace-over-docker-stop",
            Lint::LivenessWithoutStartup => "liveness-without-startup",
            Lint::ProgramNotFound => "program-not-found",
        }
    }

    /// The warning of this name.
    pub fn from_name(name: &str) -> Option<Lint> {
        Lint::ALL.iter().copied().find(|l| l.name() == name)
    }

    /// Every name, for messages: `a, b, c`.
    pub fn names() -> String {
        Lint::ALL.iter().map(|l| l.name()).collect::<Vec<_>>().join(", ")
    }
}

impl fmt::Display for Lint {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// How long `docker stop` (and Compose's default `stop_grace_period`) waits
/// after SIGTERM before it sends SIGKILL.
pub const DOCKER_STOP_WAIT: Duration = Duration::from_secs(10);

/// `liveness-without-startup` warns when a liveness probe without a startup
/// probe gives a process less than this to come up.
pub const SLOW_START: Duration = Duration::from_secs(10);

/// One warning: which, and where.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Warning {
    pub lint: Lint,
    pub issue: ConfigIssue,
}

impl fmt::Display for Warning {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} [{}]", self.issue, self.lint)
    }
}

/// Settings from outside the file.
#[derive(Debug, Clone, Default)]
pub struct LintOptions {
    /// Silenced everywhere (`podinit check --allow NAME`).
    pub allow: Vec<Lint>,
    /// The file is a Compose file: Docker starts a healthcheck an interval
    /// after the previous one ended, so a timeout longer than the interval
    /// is usual there (Compose's default timeout is 30 s): no
    /// `timeout-over-period` for its probes.
    pub compose: bool,
    /// The file is a Kubernetes manifest: its grace period is the one a
    /// kubelet gives the Pod (`terminationGracePeriodSeconds`), not `docker
    /// stop`'s: no `grace-over-docker-stop`.
    pub kubernetes: bool,
}

/// The warnings of `spec`, the validated model of `source`, in file order.
pub fn lint(source: &Source, spec: &PodSpec, opts: &LintOptions) -> Vec<Warning> {
    // The text has been validated: it reads. An empty one (a plain init) has
    // no place to point at but the command line.
    let raw: RawConfig = toml::from_str(&source.text).unwrap_or(RawConfig { pod: None, process: Vec::new() });
    let mut l = Linter { source, file: source.file_name(), out: Vec::new() };
    let mut pod_allowed = opts.allow.clone();
    let pod = raw.pod.unwrap_or_default();
    pod_allowed.extend(names(pod.allow_warnings.as_ref()));
    if let Some(g) = pod.termination_grace_period.as_ref().filter(|_| !opts.kubernetes) {
        l.grace(spec.termination_grace_period, g.span().start, &pod_allowed);
    }
    let mut seen = Vec::new();
    for p in &raw.process {
        let p = p.get_ref();
        let Some(entry) = p.name.as_ref().and_then(|n| spec.entries.iter().find(|e| e.name == *n.get_ref()))
        else {
            continue;
        };
        seen.push(entry.name.as_str());
        let mut allowed = pod_allowed.clone();
        allowed.extend(names(p.allow_warnings.as_ref()));
        l.entry(p, entry, &allowed, opts);
    }
    // The command after `--`: on the command line, not in the file.
    for e in spec.entries.iter().filter(|e| !seen.contains(&e.name.as_str())) {
        if pod_allowed.contains(&Lint::ProgramNotFound) {
            continue;
        }
        if let Err(why) = find_program(e.argv.program(), &path_of(e), e.working_dir.as_deref()) {
            l.out.push(Warning {
                lint: Lint::ProgramNotFound,
                issue: ConfigIssue {
                    file: "<command line>".into(),
                    line: 0,
                    col: 0,
                    key: String::new(),
                    message: format!("the command after `--`: {why}{ON_THIS_MACHINE}"),
                },
            });
        }
    }
    l.out.sort_by_key(|w| (w.issue.line == 0, w.issue.line, w.issue.col));
    l.out
}

/// The lints named in an `allow_warnings` (validated: unknown ones are
/// errors).
fn names(list: Option<&Spanned<Vec<Spanned<String>>>>) -> impl Iterator<Item = Lint> + '_ {
    list.into_iter().flat_map(|l| l.get_ref()).filter_map(|n| Lint::from_name(n.get_ref()))
}

const ON_THIS_MACHINE: &str = " (looked for on this machine: an image built elsewhere may have it)";

struct Linter<'a> {
    source: &'a Source,
    file: String,
    out: Vec<Warning>,
}

impl Linter<'_> {
    fn warn(&mut self, lint: Lint, offset: usize, allowed: &[Lint], message: String) {
        if allowed.contains(&lint) {
            return;
        }
        let place = self.source.place(offset);
        self.out.push(Warning {
            lint,
            issue: ConfigIssue {
                file: self.file.clone(),
                line: place.line,
                col: place.col,
                key: place.key,
                message,
            },
        });
    }

    /// Whether the value at TOML byte `offset` is written in the user's
    /// file: always in podinit's TOML; in an imported file, only when it was
    /// read from the file rather than filled in from its tool's defaults.
    fn written(&self, offset: usize) -> bool {
        match &self.source.origin {
            None => true,
            Some(o) => o.own_place(&self.source.text, offset).is_some(),
        }
    }

    /// `grace-over-docker-stop`.
    fn grace(&mut self, grace: Duration, at: usize, allowed: &[Lint]) {
        if grace <= DOCKER_STOP_WAIT || !self.written(at) {
            return;
        }
        let whole =
            grace.as_secs() + u64::from(grace.subsec_nanos() > 0) + super::model::MIN_STOP_GRACE.as_secs();
        self.warn(
            Lint::GraceOverDockerStop,
            at,
            allowed,
            format!(
                "{} is longer than the {} s `docker stop` waits before it kills the container (SIGKILL): its processes would be killed before their grace ends; stop the container with `docker stop -t {whole}` (Compose: `stop_grace_period: {whole}s`: the grace and the 2 s every stop signal is given), or shorten it",
                dur(grace),
                DOCKER_STOP_WAIT.as_secs()
            ),
        );
    }

    fn entry(&mut self, p: &RawProcess, e: &EntrySpec, allowed: &[Lint], opts: &LintOptions) {
        // readiness-gates-nothing: in podinit's own TOML only. An importer
        // holds a sidecar until started by its tool's rule (a Kubernetes
        // sidecar's readiness feeds only the pod's, exactly as there).
        if let Some(r) = &p.readiness_probe {
            if e.role == Role::Sidecar
                && e.hold_until == HoldUntil::Started
                && e.startup_probe.is_none()
                && self.source.origin.is_none()
            {
                self.warn(
                    Lint::ReadinessGatesNothing,
                    r.span().start,
                    allowed,
                    "a sidecar held until \"started\" with a readiness probe and no startup probe: the start sequence goes on as soon as its process has started, so this probe holds nothing back (it only makes the pod unready); write hold_until = \"ready\" to wait for it, or add a startup_probe".into(),
                );
            }
        }
        for (kind, raw) in [
            (ProbeKind::Startup, &p.startup_probe),
            (ProbeKind::Readiness, &p.readiness_probe),
            (ProbeKind::Liveness, &p.liveness_probe),
        ] {
            let (Some(raw), Some(probe)) = (raw, e.probe(kind)) else { continue };
            if let Some(t) = raw.get_ref().timeout.as_ref() {
                let at = t.span().start;
                if probe.timeout > probe.period
                    && !probe.action.is_push()
                    && !opts.compose
                    && self.written(at)
                {
                    let worst = probe.timeout.saturating_mul(probe.failure_threshold);
                    self.warn(
                        Lint::TimeoutOverPeriod,
                        at,
                        allowed,
                        format!(
                            "timeout {} is longer than period {}: attempts never overlap, so while the target hangs each one takes the whole timeout and the {kind} probe fails only after {} × {} = {}, not after {} × {}; make the timeout at most the period",
                            dur(probe.timeout),
                            dur(probe.period),
                            probe.failure_threshold,
                            dur(probe.timeout),
                            dur(worst),
                            probe.failure_threshold,
                            dur(probe.period)
                        ),
                    );
                }
            }
            if let (ProbeAction::Exec { argv }, Some(exec)) = (&probe.action, &raw.get_ref().exec) {
                self.program(argv, exec.command.span().start, e, allowed);
            }
        }
        if let (Some(raw), Some(probe), None) = (&p.liveness_probe, &e.liveness_probe, &e.startup_probe) {
            let window =
                probe.initial_delay.saturating_add(probe.period.saturating_mul(probe.failure_threshold));
            if window < SLOW_START {
                self.warn(
                    Lint::LivenessWithoutStartup,
                    raw.span().start,
                    allowed,
                    format!(
                        "a liveness probe and no startup probe: a process that takes {} or more to come up (initial_delay + failure_threshold × period) is killed before it is up, and again after each restart; add a startup_probe that allows for the slowest start (kubernetes.io \"Configure Liveness, Readiness and Startup Probes\"), or a longer initial_delay",
                        dur(window)
                    ),
                );
            }
        }
        if let Some(c) = &p.command {
            self.program(&e.argv, c.span().start, e, allowed);
        }
        for (hook, raw) in [(&e.post_start, &p.post_start), (&e.pre_stop, &p.pre_stop)] {
            if let (Some(HookSpec::Exec { argv }), Some(raw)) = (hook, raw) {
                if let Some(exec) = &raw.get_ref().exec {
                    self.program(argv, exec.command.span().start, e, allowed);
                }
            }
        }
    }

    /// `program-not-found` for one command of entry `e`.
    fn program<S: AsRef<OsStr>>(&mut self, argv: &Argv<S>, at: usize, e: &EntrySpec, allowed: &[Lint]) {
        if allowed.contains(&Lint::ProgramNotFound) {
            return;
        }
        if let Err(why) = find_program(argv.program().as_ref(), &path_of(e), e.working_dir.as_deref()) {
            self.warn(Lint::ProgramNotFound, at, allowed, format!("{why}{ON_THIS_MACHINE}"));
        }
    }
}

/// The `PATH` an entry's commands are looked up on: its `env` (or
/// `env_file`) sets it, else podinit's own, else the C library's default
/// (musl's, which the static podinit is built with).
fn path_of(e: &EntrySpec) -> std::ffi::OsString {
    e.env
        .iter()
        .rev()
        .find(|(k, _)| k == "PATH")
        .map(|(_, v)| v.into())
        .or_else(|| std::env::var_os("PATH"))
        .unwrap_or_else(|| "/usr/local/bin:/bin:/usr/bin".into())
}

/// Whether `program` can be executed as `execvp(3)` finds it: a name with a
/// `/` as a path (relative to `dir`, the entry's working directory, when it
/// has one), else the first executable file of that name on `path`.
///
/// # Errors
/// Says what is missing.
fn find_program(program: &OsStr, path: &OsStr, dir: Option<&Path>) -> Result<(), String> {
    let shown = Path::new(program).display().to_string();
    let executable =
        |p: &Path| p.metadata().is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0);
    if program.as_encoded_bytes().contains(&b'/') {
        let p = Path::new(program);
        let full = match dir {
            Some(d) if p.is_relative() => d.join(p),
            _ => p.to_owned(),
        };
        return match full.metadata() {
            Err(_) => Err(format!("program {shown:?} does not exist")),
            Ok(m) if m.is_dir() => Err(format!("program {shown:?} is a directory")),
            Ok(_) if !executable(&full) => Err(format!("program {shown:?} is not executable")),
            Ok(_) => Ok(()),
        };
    }
    if std::env::split_paths(path).any(|d| executable(&d.join(program))) {
        Ok(())
    } else {
        Err(format!("program {shown:?} is not found on PATH ({})", Path::new(path).display()))
    }
}

fn dur(d: Duration) -> String {
    humantime::format_duration(d).to_string()
}

#[cfg(test)]
mod tests {
    use super::find_program;
    use std::ffi::OsStr;

    #[test]
    fn programs_are_looked_up_as_execvp_does() {
        let path = OsStr::new("/nonexistent:/bin:/usr/bin");
        assert!(find_program(OsStr::new("sh"), path, None).is_ok());
        assert!(find_program(OsStr::new("/bin/sh"), path, None).is_ok());
        assert!(find_program(OsStr::new("../bin/sh"), path, Some("/usr".as_ref())).is_ok());
        let missing = find_program(OsStr::new("no-such-program-here"), path, None).unwrap_err();
        assert!(missing.contains("not found on PATH (/nonexistent:/bin:/usr/bin)"), "{missing}");
        let missing = find_program(OsStr::new("/no/such/binary"), path, None).unwrap_err();
        assert!(missing.contains("does not exist"), "{missing}");
        assert!(find_program(OsStr::new("/etc/passwd"), path, None).unwrap_err().contains("not executable"));
        assert!(find_program(OsStr::new("/bin"), path, None).unwrap_err().contains("a directory"));
    }
}
