//! `podinit export`: the pod as a Kubernetes manifest (docs/kubernetes.md,
//! "Export"), for a user who takes it to a cluster: inits as
//! `initContainers`, sidecars as `initContainers` with `restartPolicy:
//! Always` (KEP-753), mains as `containers`, all in one image.
//!
//! What Kubernetes has no field for (push probes, `max_restarts`,
//! `hold_until = "ready"`, `restart_during_termination`, the output mode, an
//! OOM score) is written as the closest thing Kubernetes has, reported, and
//! carried in the annotations `podinit.io/process.<container>` and
//! `podinit.io/pod` (JSON objects), which the manifest reader applies
//! again: reading the export back gives the same pod. A scheduled entry is
//! a CronJob of its own, written after the pod; reading back leaves it out.

use std::fmt::Write as _;
use std::time::Duration;

use super::draft::{json, string, Table, Value};
use crate::config::{
    Completion, EntrySpec, HoldUntil, HookSpec, HttpGet, LineMatch, LogMode, PodSpec, ProbeAction, ProbeSpec,
    Role, RuleAction, Scheme, Signal, When,
};

/// The Kubernetes version whose API the export follows (its fields are
/// those of core/v1 and batch/v1 there; `lifecycle.stopSignal` and
/// `restartPolicyRules` are alpha features of it).
pub const KUBERNETES_VERSION: &str = "1.34";

/// What to write.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Kind {
    Pod,
    Job,
}

/// A YAML node being written.
enum Y {
    Str(String),
    Int(i64),
    Bool(bool),
    Map(Vec<(&'static str, Y)>),
    /// A mapping whose keys are data (annotations).
    Dict(Vec<(String, Y)>),
    Seq(Vec<Y>),
}

fn s(v: impl Into<String>) -> Y {
    Y::Str(v.into())
}

/// The manifest of `spec` and the report of what changed on the way.
pub fn export(spec: &PodSpec, kind: Kind, image: &str, name: &str) -> (String, Vec<String>) {
    let mut report = Vec::new();
    let mut annotations: Vec<(String, Y)> = Vec::new();
    let mut pod_extra = Table::default();
    if spec.completion == Completion::Any {
        pod_extra.set("completion", "any", None);
        report.push("completion = \"any\": Kubernetes ends a pod when all its containers have ended; kept in the annotation podinit.io/pod".to_owned());
    }
    if spec.backoff != crate::config::BackoffSpec::default() {
        let mut b = Table::default();
        b.set("initial", Value::duration(spec.backoff.initial), None);
        b.set("max", Value::duration(spec.backoff.max), None);
        b.set("reset_after", Value::duration(spec.backoff.reset_after), None);
        pod_extra.set("backoff", b, None);
        report.push("backoff: the kubelet's restart backoff is fixed (10 s doubling to 5 min); podinit's is kept in the annotation podinit.io/pod".to_owned());
    }
    if spec.log != LogMode::Prefixed {
        pod_extra.set("log", spec.log.as_str(), None);
    }
    if let Some(socket) = &spec.status_socket {
        pod_extra.set("status_socket", socket.display().to_string(), None);
    }
    if let Some(http) = &spec.http {
        pod_extra.set("http", http.to_string(), None);
    }
    // What one container gives its processes and a pod of many does not.
    report.push("each container of the manifest has its own file system: a file one entry writes for another needs a volume both mount (an emptyDir)".to_owned());
    if spec.entries.iter().any(|e| e.role == Role::Init) {
        report.push("$PODINIT_ENV_FILE is set by podinit only: on a cluster an init passes variables to later containers through a file on a shared volume (KEP-3721, env[].valueFrom.fileKeyRef)".to_owned());
    }
    let on_loopback = |p: &ProbeSpec| match &p.action {
        ProbeAction::TcpSocket { host, .. } | ProbeAction::Grpc { host, .. } => host == "127.0.0.1",
        ProbeAction::HttpGet(h) => h.host == "127.0.0.1",
        _ => false,
    };
    for e in &spec.entries {
        if [&e.startup_probe, &e.readiness_probe, &e.liveness_probe].into_iter().flatten().any(on_loopback) {
            report.push(format!("{}: the kubelet probes the pod's address, not 127.0.0.1: a process that listens on 127.0.0.1 only fails these probes on a cluster", e.name));
        }
    }
    let grace = whole_seconds(spec.termination_grace_period, "termination_grace_period", &mut report);
    let mut pod: Vec<(&'static str, Y)> = Vec::new();
    let restart = match (kind, spec.restart_policy.as_str()) {
        (Kind::Job, "Always") => {
            pod_extra.set("restart_policy", "Always", None);
            report.push("restart_policy = \"Always\": a Job's pod must be Never or OnFailure; written as OnFailure, Always kept in the annotation podinit.io/pod".to_owned());
            "OnFailure"
        }
        (_, p) => p,
    };
    pod.push(("restartPolicy", s(restart)));
    pod.push(("terminationGracePeriodSeconds", Y::Int(grace)));
    if let Some(d) = spec.active_deadline {
        pod.push(("activeDeadlineSeconds", Y::Int(whole_seconds(d, "active_deadline", &mut report).max(1))));
    }
    let mut inits = Vec::new();
    let mut mains = Vec::new();
    let mut stop_signals = false;
    for e in &spec.entries {
        if e.role == Role::Scheduled {
            // Written after the pod, as a CronJob of its own (see below).
            continue;
        }
        let mut extra = Table::default();
        let c = container(e, spec, image, &mut extra, &mut report);
        stop_signals |= e.stop_signal != Signal::TERM && e.role != Role::Init;
        if !extra.is_empty() {
            let mut text = String::new();
            json(&mut text, &Value::Table(extra));
            annotations.push((format!("podinit.io/process.{}", e.name), Y::Str(text)));
        }
        if e.role == Role::Main {
            mains.push(c);
        } else {
            inits.push(c);
        }
    }
    if stop_signals {
        // lifecycle.stopSignal needs the pod's OS (kubernetes.io "Container
        // Lifecycle Hooks", "Stop signals").
        pod.push(("os", Y::Map(vec![("name", s("linux"))])));
    }
    if !inits.is_empty() {
        pod.push(("initContainers", Y::Seq(inits)));
    }
    pod.push(("containers", Y::Seq(mains)));
    if !pod_extra.is_empty() {
        let mut text = String::new();
        json(&mut text, &Value::Table(pod_extra));
        annotations.push(("podinit.io/pod".to_owned(), Y::Str(text)));
    }
    let mut meta: Vec<(&'static str, Y)> = vec![("name", s(name))];
    if !annotations.is_empty() {
        meta.push(("annotations", Y::Dict(annotations)));
    }
    let doc = match kind {
        Kind::Pod => Y::Map(vec![
            ("apiVersion", s("v1")),
            ("kind", s("Pod")),
            ("metadata", Y::Map(meta)),
            ("spec", Y::Map(pod)),
        ]),
        Kind::Job => Y::Map(vec![
            ("apiVersion", s("batch/v1")),
            ("kind", s("Job")),
            ("metadata", Y::Map(vec![("name", s(name))])),
            (
                "spec",
                Y::Map(vec![
                    // podinit runs the pod once; a Job would retry it 6 times.
                    ("backoffLimit", Y::Int(0)),
                    ("template", Y::Map(vec![("metadata", Y::Map(meta)), ("spec", Y::Map(pod))])),
                ]),
            ),
        ]),
    };
    let mut out = format!(
        "# Written by `podinit export` for Kubernetes {KUBERNETES_VERSION}: one image ({}) runs every container.\n",
        image.escape_debug()
    );
    render(&mut out, &doc, 0);
    for e in spec.entries.iter().filter(|e| e.role == Role::Scheduled) {
        if let Some(cron_job) = cron_job(e, spec, image, name, grace, &mut report) {
            out.push_str("---\n");
            render(&mut out, &cron_job, 0);
        }
    }
    (out, report)
}

/// The annotation on an exported CronJob that names the pod and the
/// scheduled entry it was written from (`<pod>/<entry>`): the manifest
/// reader leaves such a CronJob out when it reads the pod back.
pub const SCHEDULED_OF: &str = "podinit.io/scheduled-of";

/// A CronJob's name: the pod's and the entry's, joined by `-`, as a DNS
/// label (lower case, letters, digits and `-`), at most 52 characters (the
/// API's limit for a CronJob, whose Jobs get 11 more).
pub fn cron_job_name(pod: &str, entry: &str) -> String {
    let mut n: String = format!("{pod}-{entry}")
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c.to_ascii_lowercase() } else { '-' })
        .collect();
    n.truncate(52);
    let n = n.trim_matches('-');
    if n.is_empty() {
        "scheduled".to_owned()
    } else {
        n.to_owned()
    }
}

/// A scheduled entry's `schedule` or `every` as a CronJob's `schedule`, or
/// why it cannot be one. A six-field expression loses its seconds (a
/// CronJob runs at most once a minute): the report says so. croner's `L`,
/// `W`, `#` and `+` have no CronJob form: the CronJob controller reads its
/// schedule with robfig/cron's standard parser, which refuses them.
fn cron_schedule(e: &EntrySpec, when: &When, report: &mut Vec<String>) -> Result<String, String> {
    match when {
        When::Cron { text } => {
            // The config reader has read it: it cannot fail here.
            let cron = crate::config::schedule::parse_cron(text).ok();
            if cron.as_ref().is_some_and(crate::config::schedule::Cron::has_extensions) {
                return Err(format!("schedule {text:?} uses croner's `L`, `W`, `#` or `+`, which a CronJob's schedule does not accept (Kubernetes reads it with robfig/cron's standard parser)"));
            }
            let words: Vec<&str> = text.split_whitespace().collect();
            if words.len() != 6 {
                return Ok(text.trim().to_owned());
            }
            let minute = words[1..].join(" ");
            if cron.is_some_and(|c| c.has_seconds()) {
                report.push(format!("{}: schedule {text:?} has a seconds field, which a CronJob has not (it runs at most once a minute): written as {minute:?}, at second 0 of each minute it names", e.name));
            }
            Ok(minute)
        }
        When::Every(d) => {
            let secs = d.as_secs();
            let (m, h) = (secs / 60, secs / 3600);
            if d.subsec_nanos() == 0 && secs % 60 == 0 && (1..60).contains(&m) && 60 % m == 0 {
                Ok(if m == 1 { "* * * * *".to_owned() } else { format!("*/{m} * * * *") })
            } else if d.subsec_nanos() == 0 && secs % 3600 == 0 && (1..=24).contains(&h) && 24 % h == 0 {
                Ok(match h {
                    1 => "0 * * * *".to_owned(),
                    24 => "0 0 * * *".to_owned(),
                    _ => format!("0 */{h} * * *"),
                })
            } else {
                Err(format!(
                    "every = {:?} is not a whole number of minutes dividing an hour nor of hours dividing a day, which is what a cron schedule can repeat",
                    humantime::format_duration(*d).to_string()
                ))
            }
        }
    }
}

/// A scheduled entry as a `batch/v1` CronJob (kubernetes.io "CronJob"):
/// each run a Job of one pod of one container, tried again as the entry's
/// runs are (`restart_policy`, `max_restarts`); `None`, with
/// the reason in the report, when its `every` has no cron form.
fn cron_job(
    e: &EntrySpec,
    spec: &PodSpec,
    image: &str,
    pod: &str,
    grace: i64,
    report: &mut Vec<String>,
) -> Option<Y> {
    let sched = e.schedule.as_ref()?;
    let name = cron_job_name(pod, &e.name);
    let schedule = match cron_schedule(e, &sched.when, report) {
        Ok(s) => s,
        Err(why) => {
            report.push(format!(
                "{}: a scheduled entry is a CronJob on a cluster, but {why}; left out",
                e.name
            ));
            return None;
        }
    };
    if let When::Every(_) = sched.when {
        report.push(format!("{}: every counts from when the mains were reached, a CronJob's schedule from the clock: written as {schedule:?}", e.name));
    }
    report.push(format!("{}: a scheduled entry has no container of its own in a pod: written as the CronJob {name:?}, a further document after the pod", e.name));
    if sched.run_on_start {
        report.push(format!(
            "{}: run_on_start has no CronJob equivalent: the CronJob runs on its schedule only",
            e.name
        ));
    }
    if let Some(max) = sched.max_concurrent {
        report.push(format!(
            "{}: max_concurrent = {max} has no CronJob equivalent (under Allow a CronJob's runs are not limited); left out",
            e.name
        ));
    }
    let mut extra = Table::default();
    let c = container(e, spec, image, &mut extra, report);
    let mut template_meta: Vec<(&'static str, Y)> = Vec::new();
    if !extra.is_empty() {
        let mut text = String::new();
        json(&mut text, &Value::Table(extra));
        template_meta
            .push(("annotations", Y::Dict(vec![(format!("podinit.io/process.{}", e.name), Y::Str(text))])));
    }
    // Tries within a run are the Job's: its pod's restartPolicy and its
    // backoffLimit (kubernetes.io "Jobs"); without them a run is not tried
    // again, podinit starts the next at its next time.
    let on_failure = e.restart_policy == Some(crate::config::RestartPolicy::OnFailure);
    let policy = if on_failure { "OnFailure" } else { "Never" };
    let mut pod_spec: Vec<(&'static str, Y)> =
        vec![("restartPolicy", s(policy)), ("terminationGracePeriodSeconds", Y::Int(grace))];
    if e.stop_signal != Signal::TERM {
        pod_spec.push(("os", Y::Map(vec![("name", s("linux"))])));
    }
    pod_spec.push(("containers", Y::Seq(vec![c])));
    let mut template: Vec<(&'static str, Y)> = Vec::new();
    if !template_meta.is_empty() {
        template.push(("metadata", Y::Map(template_meta)));
    }
    template.push(("spec", Y::Map(pod_spec)));
    let tries = if on_failure { e.max_restarts.unwrap_or(0) } else { 0 };
    let mut job: Vec<(&'static str, Y)> = vec![("backoffLimit", Y::Int(i64::from(tries)))];
    if let Some(d) = sched.active_deadline {
        job.push(("activeDeadlineSeconds", Y::Int(whole_seconds(d, "active_deadline", report).max(1))));
    }
    job.push(("template", Y::Map(template)));
    // Without timeZone a CronJob reads its schedule in the controller's zone.
    let zone = if sched.time_zone == "UTC" { "Etc/UTC" } else { sched.time_zone.as_str() };
    let mut cron: Vec<(&'static str, Y)> = vec![
        ("schedule", s(schedule)),
        ("timeZone", s(zone)),
        ("concurrencyPolicy", s(sched.concurrency_policy.as_str())),
    ];
    if let Some(d) = sched.starting_deadline {
        cron.push(("startingDeadlineSeconds", Y::Int(whole_seconds(d, "starting_deadline", report))));
    }
    cron.push(("suspend", Y::Bool(sched.suspend)));
    cron.push(("jobTemplate", Y::Map(vec![("spec", Y::Map(job))])));
    Some(Y::Map(vec![
        ("apiVersion", s("batch/v1")),
        ("kind", s("CronJob")),
        (
            "metadata",
            Y::Map(vec![
                ("name", s(name)),
                ("annotations", Y::Dict(vec![(SCHEDULED_OF.to_owned(), s(format!("{pod}/{}", e.name)))])),
            ]),
        ),
        ("spec", Y::Map(cron)),
    ]))
}

/// A duration in whole seconds, rounded up, with a line in the report when
/// it was not whole.
fn whole_seconds(d: Duration, key: &str, report: &mut Vec<String>) -> i64 {
    let secs = d.as_secs() + u64::from(d.subsec_nanos() > 0);
    if d.subsec_nanos() > 0 {
        report.push(format!(
            "{key}: Kubernetes counts whole seconds; {} is written as {secs}s",
            humantime::format_duration(d)
        ));
    }
    i64::try_from(secs).unwrap_or(i64::MAX)
}

/// Every `$` before `$` or `(` doubled: Kubernetes reads `$$` as `$` and
/// expands `$(VAR)` in commands and values (kubernetes.io "Define Dependent
/// Environment Variables"); podinit does neither, so the kubelet must pass
/// the text on as podinit would.
fn escaped(v: &str) -> String {
    let mut out = String::with_capacity(v.len());
    let mut chars = v.chars().peekable();
    while let Some(c) = chars.next() {
        out.push(c);
        if c == '$' && matches!(chars.peek(), Some('$' | '(')) {
            out.push('$');
        }
    }
    out
}

/// A container's command, `$(` escaped.
fn argv(words: impl Iterator<Item = String>) -> Y {
    Y::Seq(words.map(|w| Y::Str(escaped(&w))).collect())
}

/// A probe's or hook's command: Kubernetes expands nothing there.
fn exec_argv(words: impl Iterator<Item = String>) -> Y {
    Y::Seq(words.map(Y::Str).collect())
}

fn container(e: &EntrySpec, spec: &PodSpec, image: &str, extra: &mut Table, report: &mut Vec<String>) -> Y {
    let mut c: Vec<(&'static str, Y)> = vec![("name", s(&e.name)), ("image", s(image))];
    if e.role == Role::Sidecar {
        c.push(("restartPolicy", s("Always")));
    }
    c.push(("command", argv(e.argv.iter().map(|a| a.to_string_lossy().into_owned()))));
    if let Some(dir) = &e.working_dir {
        c.push(("workingDir", s(dir.display().to_string())));
    }
    if !e.env.is_empty() {
        let env = e.env.iter().map(|(k, v)| Y::Map(vec![("name", s(k)), ("value", s(escaped(v)))])).collect();
        c.push(("env", Y::Seq(env)));
    }
    for (key, toml_key, probe) in [
        ("startupProbe", "startup_probe", &e.startup_probe),
        ("readinessProbe", "readiness_probe", &e.readiness_probe),
        ("livenessProbe", "liveness_probe", &e.liveness_probe),
    ] {
        let Some(p) = probe else { continue };
        let whole = [p.initial_delay, p.period, p.timeout]
            .into_iter()
            .chain(p.termination_grace_period)
            .all(|d| d.subsec_nanos() == 0);
        match k8s_probe(p) {
            Some(y) => {
                c.push((key, y));
                if !whole {
                    extra.set(toml_key, toml_probe(p), None);
                    report.push(format!("{}: {toml_key} has times in fractions of a second; Kubernetes counts whole seconds (rounded up in {key}), the exact probe is kept in the annotation podinit.io/process.{}", e.name, e.name));
                }
            }
            None => {
                extra.set(toml_key, toml_probe(p), None);
                report.push(format!("{}: {toml_key} is a push probe (notify, fd, log_line), which Kubernetes has not; the container has no {key} there, and the probe is kept in the annotation podinit.io/process.{}", e.name, e.name));
            }
        }
    }
    let mut lifecycle: Vec<(&'static str, Y)> = Vec::new();
    for (key, toml_key, hook) in
        [("postStart", "post_start", &e.post_start), ("preStop", "pre_stop", &e.pre_stop)]
    {
        if let Some(h) = hook {
            lifecycle.push((key, k8s_hook(h)));
            if let HookSpec::Sleep(d) = h {
                if d.subsec_nanos() != 0 {
                    let mut t = Table::default();
                    t.set("sleep", Value::duration(*d), None);
                    extra.set(toml_key, t, None);
                    report.push(format!("{}: {toml_key} sleeps a fraction of a second; Kubernetes counts whole seconds (rounded up in {key}), the exact hook is kept in the annotation podinit.io/process.{}", e.name, e.name));
                }
            }
        }
    }
    if e.stop_signal != Signal::TERM {
        if e.role == Role::Init {
            // The API refuses `lifecycle` on an init container.
            extra.set("stop_signal", e.stop_signal.to_string(), None);
        } else {
            lifecycle.push(("stopSignal", s(e.stop_signal.to_string())));
        }
    }
    if !lifecycle.is_empty() {
        c.push(("lifecycle", Y::Map(lifecycle)));
    }
    if e.role == Role::Main {
        // restartPolicyRules need the container's own restartPolicy.
        let own = e.restart_policy.filter(|p| *p != spec.restart_policy || !e.restart_rules.is_empty());
        let own = own.or_else(|| (!e.restart_rules.is_empty()).then_some(spec.restart_policy));
        if let Some(policy) = own {
            c.push(("restartPolicy", s(policy.as_str())));
        } else if let Some(policy) = e.restart_policy {
            // The pod's own policy, written out on the entry: the same on a
            // cluster; kept so that reading back gives the same plan
            // (a container's restartPolicy is an alpha field).
            extra.set("restart_policy", policy.as_str(), None);
        }
    } else if e.role == Role::Init && e.restart_policy.is_some() {
        extra.set("restart_policy", e.restart_policy.map_or("", |p| p.as_str()), None);
        report.push(format!(
            "{}: an init container's own restart policy has no field in Kubernetes; kept in the annotation",
            e.name
        ));
    }
    if !e.restart_rules.is_empty() {
        let rules = e
            .restart_rules
            .iter()
            .map(|r| {
                let action = match r.action {
                    RuleAction::Restart => "Restart",
                    RuleAction::RestartAll => "RestartAllContainers",
                };
                let op = match r.operator {
                    crate::config::Operator::In => "In",
                    crate::config::Operator::NotIn => "NotIn",
                };
                let values = r.values.iter().map(|v| Y::Int(i64::from(*v))).collect();
                Y::Map(vec![
                    ("action", s(action)),
                    ("exitCodes", Y::Map(vec![("operator", s(op)), ("values", Y::Seq(values))])),
                ])
            })
            .collect();
        c.push(("restartPolicyRules", Y::Seq(rules)));
    }
    let mut security: Vec<(&'static str, Y)> = Vec::new();
    if let Some(u) = &e.user {
        security.push(("runAsUser", Y::Int(i64::from(u.uid))));
        security.push(("runAsGroup", Y::Int(i64::from(u.gid))));
        report.push(format!("{}: its user is written as runAsUser {} and runAsGroup {}, the numbers this machine's /etc/passwd and /etc/group give; the image's must match", e.name, u.uid, u.gid));
    }
    if e.no_new_privileges {
        security.push(("allowPrivilegeEscalation", Y::Bool(false)));
    }
    if !security.is_empty() {
        c.push(("securityContext", Y::Map(security)));
    }
    if e.role == Role::Sidecar && e.hold_until == HoldUntil::Ready {
        extra.set("hold_until", "ready", None);
        if e.readiness_probe.is_some() {
            report.push(format!("{}: hold_until = \"ready\": the kubelet starts the next container once a sidecar is started, not ready; kept in the annotation", e.name));
        }
    }
    // A scheduled entry's is its Job's backoffLimit (`cron_job`).
    if let Some(n) = e.max_restarts.filter(|_| e.role != Role::Scheduled) {
        extra.set("max_restarts", i64::from(n), None);
        report.push(format!("{}: max_restarts has no Kubernetes field (the kubelet restarts without end); kept in the annotation", e.name));
    }
    if e.restart_during_termination {
        extra.set("restart_during_termination", true, None);
        report.push(format!(
            "{}: restart_during_termination has no Kubernetes field; kept in the annotation",
            e.name
        ));
    }
    if let Some(adj) = e.oom_score_adj {
        extra.set("oom_score_adj", i64::from(adj), None);
    }
    if e.log != spec.log {
        extra.set("log", e.log.as_str(), None);
    }
    Y::Map(c)
}

fn k8s_probe(p: &ProbeSpec) -> Option<Y> {
    let mut m: Vec<(&'static str, Y)> = match &p.action {
        ProbeAction::Exec { argv: a } => {
            vec![("exec", Y::Map(vec![("command", exec_argv(a.iter().cloned()))]))]
        }
        ProbeAction::TcpSocket { host, port } => {
            vec![("tcpSocket", Y::Map(with_host(vec![("port", Y::Int(i64::from(*port)))], host)))]
        }
        ProbeAction::HttpGet(h) => vec![("httpGet", http_get(h))],
        ProbeAction::Grpc { port, service, .. } => {
            let mut g = vec![("port", Y::Int(i64::from(*port)))];
            if !service.is_empty() {
                g.push(("service", s(service)));
            }
            vec![("grpc", Y::Map(g))]
        }
        ProbeAction::Notify | ProbeAction::Fd { .. } | ProbeAction::LogLine(_) => return None,
    };
    let defaults = ProbeSpec::new(p.action.clone());
    let secs = |d: Duration| {
        Y::Int(i64::try_from(d.as_secs() + u64::from(d.subsec_nanos() > 0)).unwrap_or(i64::MAX))
    };
    if p.initial_delay != defaults.initial_delay {
        m.push(("initialDelaySeconds", secs(p.initial_delay)));
    }
    if p.period != defaults.period {
        m.push(("periodSeconds", secs(p.period)));
    }
    if p.timeout != defaults.timeout {
        m.push(("timeoutSeconds", secs(p.timeout)));
    }
    if p.success_threshold != defaults.success_threshold {
        m.push(("successThreshold", Y::Int(i64::from(p.success_threshold))));
    }
    if p.failure_threshold != defaults.failure_threshold {
        m.push(("failureThreshold", Y::Int(i64::from(p.failure_threshold))));
    }
    if let Some(g) = p.termination_grace_period {
        m.push(("terminationGracePeriodSeconds", secs(g)));
    }
    Some(Y::Map(m))
}

/// The kubelet probes the pod's IP; podinit's default host is 127.0.0.1,
/// which on a cluster is the pod's own loopback too: left out either way.
fn with_host(mut m: Vec<(&'static str, Y)>, host: &str) -> Vec<(&'static str, Y)> {
    if host != "127.0.0.1" {
        m.push(("host", s(host)));
    }
    m
}

fn http_get(h: &HttpGet) -> Y {
    let mut m = with_host(vec![("port", Y::Int(i64::from(h.port)))], &h.host);
    if h.path != "/" {
        m.push(("path", s(&h.path)));
    }
    if h.scheme == Scheme::Https {
        m.push(("scheme", s("HTTPS")));
    }
    if !h.headers.is_empty() {
        let headers = h.headers.iter().map(|(k, v)| Y::Map(vec![("name", s(k)), ("value", s(v))])).collect();
        m.push(("httpHeaders", Y::Seq(headers)));
    }
    Y::Map(m)
}

fn k8s_hook(h: &HookSpec) -> Y {
    match h {
        HookSpec::Exec { argv: a } => {
            Y::Map(vec![("exec", Y::Map(vec![("command", exec_argv(a.iter().cloned()))]))])
        }
        HookSpec::HttpGet(g) => Y::Map(vec![("httpGet", http_get(g))]),
        HookSpec::Sleep(d) => {
            let secs = i64::try_from(d.as_secs() + u64::from(d.subsec_nanos() > 0)).unwrap_or(i64::MAX);
            Y::Map(vec![("sleep", Y::Map(vec![("seconds", Y::Int(secs))]))])
        }
    }
}

/// A probe as podinit's TOML table, for the annotation.
fn toml_probe(p: &ProbeSpec) -> Table {
    let mut t = Table::default();
    let port = |port: u16| Value::Int(i64::from(port));
    let http = |h: &HttpGet| {
        let mut g = Table::default();
        g.set("port", port(h.port), None);
        g.set("host", h.host.as_str(), None);
        g.set("path", h.path.as_str(), None);
        g.set("scheme", h.scheme.as_str(), None);
        if !h.headers.is_empty() {
            let mut headers = Table::default();
            for (k, v) in &h.headers {
                headers.set(k, v.as_str(), None);
            }
            g.set("headers", headers, None);
        }
        g
    };
    match &p.action {
        ProbeAction::Exec { argv } => {
            let mut e = Table::default();
            e.set("command", Value::argv(&argv.iter().collect::<Vec<_>>()), None);
            t.set("exec", e, None);
        }
        ProbeAction::TcpSocket { host, port: n } => {
            let mut tcp = Table::default();
            tcp.set("port", port(*n), None);
            tcp.set("host", host.as_str(), None);
            t.set("tcp_socket", tcp, None);
        }
        ProbeAction::HttpGet(h) => {
            t.set("http_get", http(h), None);
        }
        ProbeAction::Grpc { port: n, service, .. } => {
            let mut g = Table::default();
            g.set("port", port(*n), None);
            g.set("service", service.as_str(), None);
            t.set("grpc", g, None);
        }
        ProbeAction::Notify => {
            t.set("notify", true, None);
        }
        ProbeAction::Fd { fd } => {
            t.set("fd", i64::from(*fd), None);
        }
        ProbeAction::LogLine(m) => {
            let mut l = Table::default();
            match m {
                LineMatch::Contains(text) => l.set("contains", text.as_str(), None),
                LineMatch::Regex(r) => l.set("regex", r.source.as_str(), None),
            };
            t.set("log_line", l, None);
        }
    }
    let defaults = ProbeSpec::new(p.action.clone());
    for (key, d, default) in [
        ("initial_delay", p.initial_delay, defaults.initial_delay),
        ("period", p.period, defaults.period),
        ("timeout", p.timeout, defaults.timeout),
    ] {
        if d != default {
            t.set(key, Value::duration(d), None);
        }
    }
    if p.success_threshold != defaults.success_threshold {
        t.set("success_threshold", i64::from(p.success_threshold), None);
    }
    if p.failure_threshold != defaults.failure_threshold {
        t.set("failure_threshold", i64::from(p.failure_threshold), None);
    }
    if let Some(g) = p.termination_grace_period {
        t.set("termination_grace_period", Value::duration(g), None);
    }
    t
}

/// Whether `v` can be written as a plain YAML scalar that reads back as the
/// same string (not a number, boolean or null; no special characters).
fn plain(v: &str) -> bool {
    !v.is_empty()
        && v.bytes().all(|b| b.is_ascii_alphanumeric() || b"_./-".contains(&b))
        && !v.starts_with(['-', '.'])
        && !v.bytes().all(|b| b.is_ascii_digit() || b"._-+eE".contains(&b))
        && !matches!(
            v.to_ascii_lowercase().as_str(),
            "true" | "false" | "null" | "yes" | "no" | "on" | "off" | "y" | "n" | "~"
        )
        && !v.starts_with("0x")
        && !v.starts_with("0o")
}

fn scalar(out: &mut String, y: &Y) -> bool {
    match y {
        Y::Str(v) if plain(v) => out.push_str(v),
        Y::Str(v) => string(out, v),
        Y::Int(n) => {
            let _ = write!(out, "{n}");
        }
        Y::Bool(b) => {
            let _ = write!(out, "{b}");
        }
        Y::Map(m) if m.is_empty() => out.push_str("{}"),
        Y::Seq(v) if v.is_empty() => out.push_str("[]"),
        _ => return false,
    }
    true
}

/// Block-style YAML, two spaces per level; list items as `- ` at their
/// parent's indentation.
fn render(out: &mut String, y: &Y, indent: usize) {
    let pad = " ".repeat(indent);
    let entries: Vec<(String, &Y)> = match y {
        Y::Map(m) => m.iter().map(|(k, v)| ((*k).to_owned(), v)).collect(),
        Y::Dict(m) => m
            .iter()
            .map(|(k, v)| {
                let mut key = String::new();
                if plain(k) {
                    key.push_str(k)
                } else {
                    string(&mut key, k)
                }
                (key, v)
            })
            .collect(),
        Y::Seq(items) => {
            for item in items {
                let mut body = String::new();
                if scalar(&mut body, item) {
                    let _ = writeln!(out, "{pad}- {body}");
                } else {
                    let mut nested = String::new();
                    render(&mut nested, item, indent + 2);
                    // The first line of the item goes after the dash.
                    let _ = write!(out, "{pad}- {}", &nested[indent + 2..]);
                }
            }
            return;
        }
        _ => {
            let mut body = String::new();
            scalar(&mut body, y);
            let _ = writeln!(out, "{pad}{body}");
            return;
        }
    };
    for (k, v) in entries {
        let mut body = String::new();
        if scalar(&mut body, v) {
            let _ = writeln!(out, "{pad}{k}: {body}");
        } else {
            let _ = writeln!(out, "{pad}{k}:");
            let child = if matches!(v, Y::Seq(_)) { indent } else { indent + 2 };
            render(out, v, child);
        }
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn escaped_text_comes_back_through_the_kubelet_expansion_unchanged() {
        let none = |_: &str| Some("X".to_owned());
        for text in ["echo $(date) $$", "$$$(X)", "a$$b", "$", "$$$$(A)", "$HOME $(", "plain"] {
            let e = super::escaped(text);
            assert_eq!(crate::import::kubernetes::expand(&e, &none), text, "{text} written as {e}");
        }
    }
}
