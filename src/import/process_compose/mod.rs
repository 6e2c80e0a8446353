//! process-compose.yaml files (docs/import.md, "process-compose"), read as
//! process-compose documents them (f1bonacc1.github.io/process-compose:
//! "Processes Lifetime", "Health Checks", "Configuration").
//!
//! process-compose starts every process at once unless `depends_on` holds it,
//! and ends when every process has ended. podinit starts inits and sidecars
//! one at a time, then the mains together. So the dependency graph decides
//! the roles: a process others wait on to complete is an init; one others
//! wait on to start, be healthy or log a line is a sidecar, held until
//! started or ready; the rest are mains. Entries are written in an order that
//! respects every dependency (file order where the graph leaves it free).
//!
//! A process with a `schedule` is a scheduled entry (podinit's CronJob
//! inside the pod), outside the dependency graph: its runs begin once the
//! mains are reached.
//!
//! Every key of a process is mapped in `process_key`, every top-level key in
//! `top_key`: one row each, with the reason when podinit does not honour it.
//! The keys of its probes are mapped in `probe`; `pod` turns the processes
//! read into the pod (replicas, the dependency graph, roles and order).

use std::collections::BTreeMap;

use super::draft::{Draft, Table, Value};
use super::yaml::{self, Key, Node};
use super::{place, Ctx, NoteKind};

mod pod;
mod probe;
use crate::config::locate::Place;
use crate::import::text as string;
use pod::build;
use probe::probe;

/// process-compose's default wait before SIGKILL (`shutdown.timeout_seconds`).
pub const DEFAULT_SHUTDOWN_SECS: i64 = 10;
/// process-compose's default `availability.backoff_seconds`.
pub const DEFAULT_BACKOFF_SECS: i64 = 1;

/// How a process waits on one of its `depends_on`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Cond {
    /// `process_started`.
    Started,
    /// `process_healthy`.
    Healthy,
    /// `process_log_ready`.
    LogReady,
    /// `process_completed` (any exit status).
    Completed,
    /// `process_completed_successfully`.
    CompletedOk,
}

impl Cond {
    fn parse(s: &str) -> Option<Cond> {
        Some(match s {
            "process_started" => Cond::Started,
            "process_healthy" => Cond::Healthy,
            "process_log_ready" => Cond::LogReady,
            "process_completed" => Cond::Completed,
            "process_completed_successfully" => Cond::CompletedOk,
            _ => return None,
        })
    }
}

/// One process as read (after `extends`), before replicas and roles.
#[derive(Default)]
struct Proc {
    raw: String,
    at: At,
    command: Option<(Value, Place)>,
    description: Option<String>,
    working_dir: Option<(String, Place)>,
    env: Vec<(String, String, Place)>,
    env_file: Option<(String, Place)>,
    dotenv_disabled: bool,
    deps: Vec<(String, Cond, Place)>,
    restart: Option<(String, Place)>,
    backoff: Option<(i64, Place)>,
    max_restarts: Option<(i64, Place)>,
    exit_on_end: bool,
    readiness: Option<(Table, Place)>,
    liveness: Option<(Table, Place)>,
    ready_log_line: Option<(String, Place)>,
    pre_stop: Option<(String, Place)>,
    signal: Option<(i64, Place)>,
    shutdown_timeout: Option<(i64, Place)>,
    /// Why the process is not started (disabled, foreground).
    left_out: Option<String>,
    replicas: i64,
    /// Its `schedule`: a scheduled entry.
    schedule: Option<Schedule>,
}

/// A process's `schedule` (f1bonacc1.github.io/process-compose, "Scheduled
/// Processes").
struct Schedule {
    at: Place,
    cron: Option<(String, Place)>,
    /// As written (a Go duration, podinit's grammar too), and its length.
    interval: Option<(String, std::time::Duration, Place)>,
    timezone: Option<(String, Place)>,
    run_on_start: Option<Place>,
    /// process-compose's default is 1.
    max_concurrent: Option<(i64, Place)>,
}

/// A [`Place`] with a default (line 0: nowhere).
#[derive(Default, Clone)]
struct At(Option<Place>);

impl std::ops::Deref for At {
    type Target = Place;
    fn deref(&self) -> &Place {
        static NOWHERE: Place = Place { line: 0, col: 0, key: String::new() };
        self.0.as_ref().unwrap_or(&NOWHERE)
    }
}

/// Reads a process-compose.yaml into the pod it describes.
///
/// Errors, each at its line and column: YAML syntax, a key process-compose
/// does not have (a typo; `x-` keys excepted), a value of the wrong type, an
/// unknown `depends_on` condition or process, a dependency cycle, a
/// `process_healthy` dependency on a process without a probe, a
/// `process_log_ready` one without `ready_log_line`, `is_daemon`, and a
/// template podinit cannot render.
pub fn read(text: &str, ctx: &mut Ctx) -> Draft {
    let docs = match yaml::parse(text) {
        Ok(docs) => docs,
        Err(e) => {
            ctx.error(Some(&place(e.at, "")), e.message);
            return Draft::default();
        }
    };
    let Some(root) = docs.first() else {
        ctx.error(None, "the file is empty");
        return Draft::default();
    };
    if docs.len() > 1 {
        ctx.error(Some(&place(docs[1].at, "")), "more than one YAML document: process-compose reads one");
    }
    let Some(top) = root.as_map() else {
        ctx.error(Some(&place(root.at, "")), format!("expected a mapping, found {}", root.kind()));
        return Draft::default();
    };
    let mut g = Global { env: Vec::new(), vars: BTreeMap::new(), expand: true, processes: None };
    for (k, v) in top {
        top_key(k, v, &mut g, ctx);
    }
    let Some(processes) = g.processes else {
        ctx.error(None, "no `processes`: nothing to run");
        return Draft::default();
    };
    let Some(entries) = processes.as_map() else {
        ctx.error(
            Some(&place(processes.at, "processes")),
            format!("expected a mapping, found {}", processes.kind()),
        );
        return Draft::default();
    };
    let merged = resolve_extends(entries, ctx);
    let mut procs = Vec::new();
    for (k, entries) in &merged {
        if let Some(p) = read_process(k, entries, &g, ctx) {
            procs.push(p);
        }
    }
    if !ctx.errors.is_empty() {
        return Draft::default();
    }
    build(procs, &g, ctx)
}

/// What the top level gives every process.
struct Global<'a> {
    env: Vec<(String, String, Place)>,
    vars: BTreeMap<String, String>,
    /// `disable_env_expansion` is false.
    expand: bool,
    processes: Option<&'a Node>,
}

/// The top-level keys (f1bonacc1.github.io/process-compose, "Configuration").
fn top_key<'a>(k: &Key, v: &'a Node, g: &mut Global<'a>, ctx: &mut Ctx) {
    let at = place(k.at, k.name.clone());
    match k.name.as_str() {
        // The schema version: nothing to map.
        "version" | "name" => {}
        "processes" => g.processes = Some(v),
        // Added to every process's env; a process's own wins.
        "environment" => g.env = env_list(v, &at, ctx),
        // `{{.NAME}}` values for every process.
        "vars" => g.vars = vars(v, &at, ctx),
        "disable_env_expansion" => g.expand = !bool_of(v, &at, ctx),
        // process-compose's own log and TUI: podinit has its own output.
        "log_location" | "log_level" | "log_length" | "log_configuration" | "log_format" | "is_tui_disabled"
        | "mcp_server" => ctx.note(NoteKind::Ignored, Some(&at), "process-compose's own logging, TUI and server: podinit writes each entry's output on its own"),
        // Unknown keys are refused by podinit anyway.
        "is_strict" => {}
        "shell" => ctx.note(
            NoteKind::Approximated,
            Some(&at),
            "podinit runs a string command with /bin/sh -c (process-compose: this shell)",
        ),
        "ordered_shutdown" => ctx.note(
            NoteKind::Approximated,
            Some(&at),
            "podinit always stops the mains first, then sidecars in reverse start order",
        ),
        "env_cmds" => ctx.note(
            NoteKind::Dropped,
            Some(&at),
            "podinit does not run commands to compute variables; give the values in `environment`, or compute them in the command",
        ),
        "extends" => ctx.error(Some(&at), "a project that extends another file: podinit import reads one file (merge them first)"),
        other if other.starts_with("x-") => {
            ctx.note(NoteKind::Ignored, Some(&at), "an extension key");
        }
        other => ctx.error(Some(&at), format!("unknown key {other:?} (a typo?)")),
    }
}

/// Each process's keys with `extends` applied: the child's keys win, and
/// `environment` and `depends_on` are merged by name (process-compose,
/// "Processes Lifetime"; its loader merges them so). A chain is followed; an
/// unknown or circular `extends` is an error.
fn resolve_extends<'a>(entries: &'a [(Key, Node)], ctx: &mut Ctx) -> Vec<(&'a Key, Vec<(Key, Node)>)> {
    let find = |name: &str| entries.iter().find(|(k, _)| k.name == name);
    let mut out = Vec::new();
    for (k, v) in entries {
        let Some(own) = v.as_map() else {
            ctx.error(
                Some(&place(k.at, format!("processes.{}", k.name))),
                format!("expected a mapping, found {}", v.kind()),
            );
            continue;
        };
        let mut merged: Vec<(Key, Node)> = own.to_vec();
        let mut seen = vec![k.name.clone()];
        let mut current = own;
        while let Some(parent) = current.iter().find(|(k, _)| k.name == "extends").map(|(_, v)| v) {
            let at = place(parent.at, format!("processes.{}.extends", k.name));
            let Some(name) = parent.as_str() else {
                ctx.error(Some(&at), format!("expected a process name, found {}", parent.kind()));
                break;
            };
            if seen.iter().any(|s| s == name) {
                ctx.error(Some(&at), format!("circular extends: {} -> {name}", seen.join(" -> ")));
                break;
            }
            let Some((_, base)) = find(name) else {
                ctx.error(Some(&at), format!("extends an unknown process {name:?}"));
                break;
            };
            let Some(base) = base.as_map() else { break };
            seen.push(name.to_owned());
            for (bk, bv) in base {
                match merged.iter_mut().find(|(mk, _)| mk.name == bk.name) {
                    None => merged.push((bk.clone(), bv.clone())),
                    Some((_, mv)) if bk.name == "depends_on" || bk.name == "environment" => {
                        *mv = merge_by_name(bv, mv);
                    }
                    Some(_) => {}
                }
            }
            current = base;
        }
        merged.retain(|(k, _)| k.name != "extends");
        out.push((k, merged));
    }
    out
}

/// `child` over `base`: mappings by key, lists of `NAME=VALUE` by NAME.
fn merge_by_name(base: &Node, child: &Node) -> Node {
    match (&base.value, &child.value) {
        (yaml::Value::Map(b), yaml::Value::Map(c)) => {
            let mut m = c.clone();
            for (bk, bv) in b {
                if !m.iter().any(|(k, _)| k.name == bk.name) {
                    m.push((bk.clone(), bv.clone()));
                }
            }
            Node { at: child.at, value: yaml::Value::Map(m) }
        }
        (yaml::Value::Seq(b), yaml::Value::Seq(c)) => {
            let name = |n: &Node| n.as_str().map(|s| s.split('=').next().unwrap_or_default().to_owned());
            let mut s = c.clone();
            for bn in b {
                if !c.iter().any(|cn| name(cn) == name(bn)) {
                    s.push(bn.clone());
                }
            }
            Node { at: child.at, value: yaml::Value::Seq(s) }
        }
        _ => child.clone(),
    }
}

/// One process's keys (f1bonacc1.github.io/process-compose, "Processes
/// Lifetime", "Health Checks", "Configuration"); `None` on an error.
fn read_process(k: &Key, entries: &[(Key, Node)], g: &Global, ctx: &mut Ctx) -> Option<Proc> {
    let base = format!("processes.{}", k.name);
    let mut p =
        Proc { raw: k.name.clone(), at: At(Some(place(k.at, base.clone()))), replicas: 1, ..Proc::default() };
    // vars first: every rendered field may use them.
    let mut vars = g.vars.clone();
    let mut template_enabled = true;
    for (key, v) in entries {
        let at = place(key.at, format!("{base}.{}", key.name));
        match key.name.as_str() {
            "vars" => vars.extend(self::vars(v, &at, ctx)),
            "is_template_disabled" => template_enabled = !bool_of(v, &at, ctx),
            _ => {}
        }
    }
    let r = Render { vars: &vars, enabled: template_enabled, expand: g.expand };
    for (key, v) in entries {
        let at = place(key.at, format!("{base}.{}", key.name));
        process_key(&key.name, v, &at, &r, &mut p, ctx);
    }
    Some(p)
}

/// One key of a process: the mapping table of process-compose's process
/// fields, one row each.
fn process_key(key: &str, v: &Node, at: &Place, r: &Render, p: &mut Proc, ctx: &mut Ctx) {
    match key {
        // A string, run by process-compose's shell (bash -c by default):
        // podinit runs it with /bin/sh -c.
        "command" => {
            if let Some(s) = string(v, at, ctx) {
                if let Some(s) = r.command(&s, at, ctx) {
                    p.command = Some((Value::Str(s), at.clone()));
                }
            }
        }
        // An argv, used when there is no `command`.
        "entrypoint" => {
            if p.command.is_none() || !matches!(p.command, Some((Value::Str(_), _))) {
                if let Some(list) = strings(v, at, ctx) {
                    p.command = Some((Value::argv(&list), at.clone()));
                }
            } else {
                ctx.note(NoteKind::Ignored, Some(at), "`command` is set too, and process-compose uses it");
            }
        }
        "working_dir" => {
            if let Some(s) = string(v, at, ctx).and_then(|s| r.render(&s, at, ctx)) {
                if r.expand && s.contains('$') {
                    ctx.note(
                        NoteKind::Approximated,
                        Some(at),
                        "podinit takes working_dir as written; process-compose expands $VAR in it when it reads the file: write the path",
                    );
                }
                p.working_dir = Some((s, at.clone()));
            }
        }
        "environment" => {
            p.env = env_list(v, at, ctx)
                .into_iter()
                .filter_map(|(k, val, at)| r.render(&val, &at, ctx).map(|val| (k, val, at)))
                .collect();
        }
        "env_file" => {
            if let Some(s) = string(v, at, ctx) {
                p.env_file = Some((s, at.clone()));
            }
        }
        "is_dotenv_disabled" => p.dotenv_disabled = bool_of(v, at, ctx),
        "depends_on" => p.deps = depends_on(v, at, ctx),
        "availability" => availability(v, at, p, ctx),
        "readiness_probe" => p.readiness = probe(v, at, r, false, ctx).map(|t| (t, at.clone())),
        "liveness_probe" => p.liveness = probe(v, at, r, true, ctx).map(|t| (t, at.clone())),
        // process-compose: ready once a line contains it.
        "ready_log_line" => {
            if let Some(s) = string(v, at, ctx) {
                p.ready_log_line = Some((s, at.clone()));
            }
        }
        "shutdown" => shutdown(v, at, r, p, ctx),
        "disabled" => {
            if bool_of(v, at, ctx) {
                p.left_out = Some("disabled: process-compose lists it but does not start it".into());
            }
        }
        "is_disabled" => {
            if string(v, at, ctx).and_then(|s| r.render(&s, at, ctx)).is_some_and(|s| s.trim() == "true") {
                p.left_out = Some("is_disabled: process-compose lists it but does not start it".into());
            }
        }
        "is_foreground" => {
            if bool_of(v, at, ctx) {
                p.left_out =
                    Some("is_foreground: process-compose starts it only by hand, from its TUI".into());
            }
        }
        "schedule" => p.schedule = schedule(v, at, ctx),
        "is_daemon" => {
            if bool_of(v, at, ctx) {
                ctx.error(
                    Some(at),
                    "is_daemon: podinit supervises the process it starts; one that forks into the background and exits cannot be watched, stopped or restarted. Run it in the foreground (e.g. `docker run` without -d, `nginx -g 'daemon off;'`) and drop is_daemon",
                );
            }
        }
        "replicas" => match v.as_int() {
            Some(n) if (1..=100).contains(&n) => p.replicas = n,
            _ => ctx
                .error(Some(at), format!("expected a number of replicas from 1 to 100, found {}", v.kind())),
        },
        "description" => p.description = string(v, at, ctx),
        // Grouping for process-compose's TUI and commands.
        "namespace" => ctx.note(
            NoteKind::Ignored,
            Some(at),
            "namespaces group processes in process-compose's TUI and commands",
        ),
        // Read before the other keys.
        "vars" | "is_template_disabled" => {}
        "log_location"
        | "log_configuration"
        | "disable_ansi_colors"
        | "truncate_log"
        | "monitor_for"
        | "monitor_silence_threshold"
        | "mcp" => ctx.note(
            NoteKind::Ignored,
            Some(at),
            "process-compose's own logging and TUI: podinit writes each entry's output on its own",
        ),
        "launch_timeout_seconds" => ctx.note(NoteKind::Ignored, Some(at), "applies to daemons only"),
        "is_tty" | "is_interactive" | "is_elevated" | "watch" | "success_exit_codes" => ctx.note(
            NoteKind::Dropped,
            Some(at),
            "podinit has no such setting (a terminal, sudo, file watching, extra success statuses)",
        ),
        other if other.starts_with("x-") => ctx.note(NoteKind::Ignored, Some(at), "an extension key"),
        other => ctx.error(Some(at), format!("unknown key {other:?} (a typo?)")),
    }
}

/// `availability`.
fn availability(v: &Node, at: &Place, p: &mut Proc, ctx: &mut Ctx) {
    let Some(map) = map_of(v, at, ctx) else { return };
    for (k, v) in map {
        let at = place(k.at, format!("{}.{}", at.key, k.name));
        match k.name.as_str() {
            "restart" => match v.as_str() {
                Some(s @ ("always" | "on_failure" | "exit_on_failure" | "no")) => {
                    p.restart = Some((s.to_owned(), at))
                }
                _ => ctx.error(Some(&at), "expected always, on_failure, exit_on_failure or no"),
            },
            "backoff_seconds" => p.backoff = int(v, &at, 0, ctx).map(|n| (n, at)),
            "max_restarts" => p.max_restarts = int(v, &at, 0, ctx).map(|n| (n, at)),
            "exit_on_end" => p.exit_on_end = bool_of(v, &at, ctx),
            "exit_on_skipped" => {
                if bool_of(v, &at, ctx) {
                    ctx.note(
                        NoteKind::Dropped,
                        Some(&at),
                        "podinit never skips an entry: a failed init fails the pod",
                    );
                }
            }
            other => ctx.error(Some(&at), format!("unknown key {other:?} (a typo?)")),
        }
    }
}

/// `schedule`: `cron` or `interval` (a Go duration), `timezone`,
/// `run_on_start`, `max_concurrent`; `None` on an error.
fn schedule(v: &Node, at: &Place, ctx: &mut Ctx) -> Option<Schedule> {
    let map = map_of(v, at, ctx)?;
    let errors = ctx.errors.len();
    let mut s = Schedule {
        at: at.clone(),
        cron: None,
        interval: None,
        timezone: None,
        run_on_start: None,
        max_concurrent: None,
    };
    for (k, v) in map {
        let at = place(k.at, format!("{}.{}", at.key, k.name));
        match k.name.as_str() {
            "cron" => s.cron = string(v, &at, ctx).map(|c| (c, at)),
            "interval" => {
                let text = string(v, &at, ctx)?;
                let text = text.trim();
                match crate::config::raw::parse_duration(text) {
                    Ok(d) if d.is_zero() => ctx.error(Some(&at), "interval must be more than 0"),
                    Ok(d) => s.interval = Some((text.to_owned(), d, at)),
                    // A Go duration (process-compose parses it with Go's
                    // time.ParseDuration) has a unit.
                    Err(_) if text.parse::<f64>().is_ok() => ctx.error(
                        Some(&at),
                        format!("interval {text}: a duration needs its unit (process-compose reads a Go duration): write \"{text}s\""),
                    ),
                    Err(why) => ctx.error(Some(&at), format!("interval {text:?}: {why}")),
                }
            }
            "timezone" => s.timezone = string(v, &at, ctx).map(|z| (z, at)),
            "run_on_start" => {
                if bool_of(v, &at, ctx) {
                    s.run_on_start = Some(at);
                }
            }
            "max_concurrent" => s.max_concurrent = int(v, &at, 1, ctx).map(|n| (n, at)),
            other => ctx.error(Some(&at), format!("unknown key {other:?} (a typo?)")),
        }
    }
    if ctx.errors.len() > errors {
        return None;
    }
    if s.cron.is_none() && s.interval.is_none() {
        ctx.error(Some(at), "a schedule needs `cron` or `interval`");
        return None;
    }
    Some(s)
}

/// `shutdown`.
fn shutdown(v: &Node, at: &Place, r: &Render, p: &mut Proc, ctx: &mut Ctx) {
    let Some(map) = map_of(v, at, ctx) else { return };
    for (k, v) in map {
        let at = place(k.at, format!("{}.{}", at.key, k.name));
        match k.name.as_str() {
            "command" => {
                if let Some(s) = string(v, &at, ctx).and_then(|s| r.command(&s, &at, ctx)) {
                    p.pre_stop = Some((s, at));
                }
            }
            "signal" => p.signal = int(v, &at, 1, ctx).map(|n| (n, at)),
            "timeout_seconds" => p.shutdown_timeout = int(v, &at, 0, ctx).map(|n| (n, at)),
            "parent_only" => {
                if bool_of(v, &at, ctx) {
                    ctx.note(NoteKind::Dropped, Some(&at), "podinit signals the whole process group");
                }
            }
            "send_keys" => {
                ctx.note(NoteKind::Dropped, Some(&at), "podinit does not write to an entry's stdin")
            }
            other => ctx.error(Some(&at), format!("unknown key {other:?} (a typo?)")),
        }
    }
}

/// `depends_on`: name -> `{ condition }` (default `process_started`).
fn depends_on(v: &Node, at: &Place, ctx: &mut Ctx) -> Vec<(String, Cond, Place)> {
    let mut deps = Vec::new();
    for (k, d) in map_of(v, at, ctx).unwrap_or_default() {
        let dat = place(k.at, format!("{}.{}", at.key, k.name));
        let mut cond = Cond::Started;
        if !d.is_null() {
            for (ck, cv) in map_of(d, &dat, ctx).unwrap_or_default() {
                let cat = place(ck.at, format!("{}.{}", dat.key, ck.name));
                match ck.name.as_str() {
                    "condition" => match cv.as_str().and_then(Cond::parse) {
                        Some(c) => cond = c,
                        None => ctx.error(
                            Some(&cat),
                            "expected process_started, process_healthy, process_log_ready, process_completed or process_completed_successfully",
                        ),
                    },
                    other if other.starts_with("x-") => {}
                    other => ctx.error(Some(&cat), format!("unknown key {other:?} (a typo?)")),
                }
            }
        }
        deps.push((k.name.clone(), cond, dat));
    }
    deps
}

/// How strings are rendered: `{{.NAME}}` from `vars`, and `$$` as `$` where
/// process-compose expands variables.
struct Render<'a> {
    vars: &'a BTreeMap<String, String>,
    enabled: bool,
    expand: bool,
}

impl Render<'_> {
    /// `s` with each `{{.NAME}}` (or `{{ .NAME }}`) replaced by its var
    /// (process-compose renders these with Go's text/template). Anything else
    /// inside `{{ }}` is an error: podinit import renders variables only.
    fn render(&self, s: &str, at: &Place, ctx: &mut Ctx) -> Option<String> {
        if !self.enabled || !s.contains("{{") {
            return Some(s.to_owned());
        }
        let mut out = String::new();
        let mut rest = s;
        while let Some(i) = rest.find("{{") {
            out.push_str(&rest[..i]);
            let Some(j) = rest[i..].find("}}") else {
                ctx.error(Some(at), "a template `{{` is not closed");
                return None;
            };
            let inner = rest[i + 2..i + j].trim();
            let name = inner
                .strip_prefix('.')
                .filter(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_'));
            match name.and_then(|n| self.vars.get(n).map(|v| (n, v))) {
                Some((_, v)) => out.push_str(v),
                None if name.is_some() => {
                    ctx.error(Some(at), format!("{{{{{inner}}}}}: no such var (give it under `vars`)"));
                    return None;
                }
                None => {
                    ctx.error(
                        Some(at),
                        format!("{{{{{inner}}}}}: podinit import renders only {{{{.NAME}}}} of `vars`; write the value"),
                    );
                    return None;
                }
            }
            rest = &rest[i + j + 2..];
        }
        out.push_str(rest);
        Some(out)
    }

    /// A command: rendered, and with process-compose's `$$` escape undone.
    /// process-compose expands `$X` and `${X}` itself when it reads the file;
    /// podinit leaves them to the shell, which expands them when the command
    /// runs, from the entry's environment (docs/import.md says where that
    /// differs).
    fn command(&self, s: &str, at: &Place, ctx: &mut Ctx) -> Option<String> {
        let s = self.render(s, at, ctx)?;
        Some(if self.expand { s.replace("$$", "$") } else { s })
    }
}

/// `environment`: a list of `NAME=VALUE` (a mapping is accepted too).
fn env_list(v: &Node, at: &Place, ctx: &mut Ctx) -> Vec<(String, String, Place)> {
    let mut out = Vec::new();
    if let Some(map) = v.as_map() {
        for (k, val) in map {
            let text = val.as_str().unwrap_or_default().to_owned();
            out.push((k.name.clone(), text, place(k.at, format!("{}.{}", at.key, k.name))));
        }
        return out;
    }
    let Some(items) = v.as_seq() else {
        if !v.is_null() {
            ctx.error(Some(at), format!("expected a list of NAME=VALUE, found {}", v.kind()));
        }
        return out;
    };
    for item in items {
        let iat = place(item.at, at.key.clone());
        match item.as_str().and_then(|s| s.split_once('=')) {
            Some((k, val)) if !k.is_empty() => out.push((k.to_owned(), val.to_owned(), iat)),
            _ => ctx.error(Some(&iat), "expected NAME=VALUE"),
        }
    }
    out
}

/// `vars`: scalars by name, as their text.
fn vars(v: &Node, at: &Place, ctx: &mut Ctx) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    for (k, val) in map_of(v, at, ctx).unwrap_or_default() {
        match &val.value {
            yaml::Value::Scalar { text, .. } => {
                out.insert(k.name.clone(), text.clone());
            }
            _ => ctx.note(
                NoteKind::Dropped,
                Some(&place(k.at, format!("{}.{}", at.key, k.name))),
                "only scalar vars are rendered by podinit import",
            ),
        }
    }
    out
}

fn map_of<'a>(v: &'a Node, at: &Place, ctx: &mut Ctx) -> Option<&'a [(Key, Node)]> {
    if v.is_null() {
        return Some(&[]);
    }
    let m = v.as_map();
    if m.is_none() {
        ctx.error(Some(at), format!("expected a mapping, found {}", v.kind()));
    }
    m
}

fn strings(v: &Node, at: &Place, ctx: &mut Ctx) -> Option<Vec<String>> {
    let items = v.as_seq();
    let out: Option<Vec<String>> =
        items.and_then(|i| i.iter().map(|n| n.as_str().map(str::to_owned)).collect());
    if out.as_ref().is_none_or(Vec::is_empty) {
        ctx.error(Some(at), format!("expected a list of strings, found {}", v.kind()));
        return None;
    }
    out
}

fn bool_of(v: &Node, at: &Place, ctx: &mut Ctx) -> bool {
    v.as_bool().unwrap_or_else(|| {
        ctx.error(Some(at), format!("expected true or false, found {}", v.kind()));
        false
    })
}

fn int(v: &Node, at: &Place, min: i64, ctx: &mut Ctx) -> Option<i64> {
    match v.as_int() {
        Some(n) if n >= min => Some(n),
        Some(n) => {
            ctx.error(Some(at), format!("expected a whole number of at least {min}, found {n}"));
            None
        }
        None => {
            ctx.error(Some(at), format!("expected a whole number of at least {min}, found {}", v.kind()));
            None
        }
    }
}

#[cfg(test)]
mod tests {
    use super::pod::mentions;
    use super::*;

    #[test]
    fn a_variable_is_mentioned_unless_escaped() {
        assert!(mentions("echo $PORT", "PORT"));
        assert!(mentions("echo ${PORT:-1}", "PORT"));
        assert!(!mentions("echo $$PORT", "PORT"));
        assert!(!mentions("echo $PORTS", "PORT"));
    }

    #[test]
    fn templates_render_vars_only() {
        let vars: BTreeMap<String, String> = [("A".to_owned(), "1".to_owned())].into();
        let r = Render { vars: &vars, enabled: true, expand: true };
        let opts = crate::import::ImportOptions::default();
        let mut ctx =
            Ctx { file: "f".into(), dir: ".".into(), opts: &opts, notes: Vec::new(), errors: Vec::new() };
        let at = Place { line: 1, col: 1, key: "k".into() };
        assert_eq!(r.command("x {{.A}} {{ .A }} $$B $C", &at, &mut ctx).as_deref(), Some("x 1 1 $B $C"));
        assert!(ctx.errors.is_empty());
        assert!(r.render("{{ if .A }}y{{ end }}", &at, &mut ctx).is_none());
        assert!(ctx.errors[0].message.contains("renders only"));
    }
}
