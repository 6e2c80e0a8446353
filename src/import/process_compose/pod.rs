//! From the processes read to the pod: replicas expanded, the dependency
//! graph checked (unknown names, cycles, conditions a process cannot meet)
//! and turned into roles and an order; then each entry's keys.

use std::collections::BTreeMap;
use std::path::Path;

use super::{Cond, Global, Proc, DEFAULT_BACKOFF_SECS, DEFAULT_SHUTDOWN_SECS};
use crate::import::draft::{Draft, Process, Table, Value};
use crate::import::{Ctx, NoteKind};

/// One entry to write: a process, or one replica of it.
struct Entry<'a> {
    p: &'a Proc,
    name: String,
    replica: Option<i64>,
}

/// The pod: replicas expanded, the dependency graph checked and turned into
/// roles and an order.
pub(super) fn build(procs: Vec<Proc>, g: &Global, ctx: &mut Ctx) -> Draft {
    let mut draft = Draft::default();
    // Entries, with replicas expanded (process-compose names them NAME-N, N
    // from 0, zero-padded to the width of the count).
    let mut entries: Vec<Entry> = Vec::new();
    let mut groups: BTreeMap<String, Vec<usize>> = BTreeMap::new();
    for p in &procs {
        if let Some(why) = &p.left_out {
            ctx.note(NoteKind::Dropped, Some(&p.at), format!("{} is not started: {why}", p.raw));
            continue;
        }
        let width = p.replicas.to_string().len();
        for n in 0..p.replicas {
            let raw = if p.replicas > 1 { format!("{}-{n:0width$}", p.raw) } else { p.raw.clone() };
            let name = ctx.name(&raw, Some(&p.at));
            groups.entry(p.raw.clone()).or_default().push(entries.len());
            if p.replicas > 1 {
                groups.entry(raw.clone()).or_default().push(entries.len());
            }
            entries.push(Entry { p, name, replica: Some(n) });
        }
    }
    for (i, e) in entries.iter().enumerate() {
        if let Some(j) = entries[..i].iter().position(|o| o.name == e.name) {
            let msg = format!(
                "{:?} is named {:?} in podinit, as {:?} is: rename one",
                e.p.raw, e.name, entries[j].p.raw
            );
            ctx.error(Some(&e.p.at), msg);
        }
    }
    // Edges: entry -> (dependency, condition).
    let mut deps: Vec<Vec<(usize, Cond)>> = vec![Vec::new(); entries.len()];
    for (i, e) in entries.iter().enumerate() {
        for (dep, cond, at) in &e.p.deps {
            if e.p.schedule.is_some() {
                ctx.note(
                    NoteKind::Dropped,
                    Some(at),
                    format!("{} is scheduled: its runs begin once the mains are reached, so it does not wait for {dep}", e.p.raw),
                );
                continue;
            }
            match groups.get(dep) {
                Some(targets) if targets.iter().any(|&t| entries[t].p.schedule.is_some()) => ctx.note(
                    NoteKind::Dropped,
                    Some(at),
                    format!("{dep} is scheduled: it runs on its schedule, so {} does not wait for it", e.p.raw),
                ),
                Some(targets) => {
                    for &t in targets {
                        let target = entries[t].p;
                        match cond {
                            Cond::Healthy if target.readiness.is_none() && target.liveness.is_none() => ctx.error(
                                Some(at),
                                format!("process_healthy: {dep} has no readiness_probe or liveness_probe (process-compose would not start {})", e.p.raw),
                            ),
                            Cond::LogReady if target.ready_log_line.is_none() => {
                                ctx.error(Some(at), format!("process_log_ready: {dep} has no ready_log_line"))
                            }
                            _ => {}
                        }
                        deps[i].push((t, *cond));
                    }
                }
                None if procs.iter().any(|p| &p.raw == dep) => ctx.note(
                    NoteKind::Dropped,
                    Some(at),
                    format!("{dep} is not started, so {} does not wait for it (process-compose logs an error and goes on)", e.p.raw),
                ),
                None => ctx.error(Some(at), format!("depends on {dep:?}, which is not a process of this file")),
            }
        }
    }
    if !ctx.errors.is_empty() {
        return draft;
    }
    let Some(order) = topological(&entries, &deps, ctx) else { return draft };

    // The strongest wait on each entry decides its role.
    let mut waited: Vec<Option<Cond>> = vec![None; entries.len()];
    for list in &deps {
        for &(t, c) in list {
            waited[t] = waited[t].max(Some(c));
        }
    }
    let named_mains = &ctx.opts.mains;
    for m in named_mains {
        if !entries.iter().any(|e| &e.name == m || &e.p.raw == m) {
            ctx.error(None, format!("--main {m}: no such process"));
        }
    }
    let scheduled = |i: usize| entries[i].p.schedule.is_some();
    for e in entries.iter().filter(|e| e.p.schedule.is_some() && e.p.exit_on_end) {
        ctx.note(
            NoteKind::Dropped,
            Some(&e.p.at),
            format!("{}: exit_on_end on a scheduled process: a run never ends the pod", e.p.raw),
        );
    }
    let exit_on_end: Vec<usize> =
        (0..entries.len()).filter(|&i| entries[i].p.exit_on_end && !scheduled(i)).collect();
    let is_main = |i: usize| -> bool {
        if scheduled(i) {
            false
        } else if !named_mains.is_empty() {
            named_mains.iter().any(|m| m == &entries[i].name || m == &entries[i].p.raw)
        } else if !exit_on_end.is_empty() {
            exit_on_end.contains(&i)
        } else {
            waited[i].is_none()
        }
    };
    let roles: Vec<&str> = (0..entries.len())
        .map(|i| match waited[i] {
            _ if scheduled(i) => "scheduled",
            Some(Cond::Completed | Cond::CompletedOk) => "init",
            _ if is_main(i) => "main",
            _ => "sidecar",
        })
        .collect();
    for i in 0..entries.len() {
        let e = &entries[i];
        if scheduled(i) && named_mains.iter().any(|m| m == &e.name || m == &e.p.raw) {
            ctx.error(
                Some(&e.p.at),
                format!(
                    "{} has a schedule: it runs on it, as a scheduled entry, and cannot be a main",
                    e.p.raw
                ),
            );
        }
        if roles[i] != "main" && is_main(i) {
            let e = &entries[i];
            ctx.error(
                Some(&e.p.at),
                format!("{} is waited on to complete, so it is an init task: it cannot be a main", e.p.raw),
            );
        }
    }
    if !ctx.errors.is_empty() {
        return draft;
    }
    if !roles.contains(&"main") {
        ctx.error(None, "no process is left to be a main");
        return draft;
    }

    draft.comment.push(format!("Imported from the process-compose file {} by `podinit import`.", ctx.file));
    draft.comment.push(
        "Processes others wait on to complete are inits; those they wait on to start or be ready are sidecars (held until then); the rest are mains."
            .into(),
    );
    if !exit_on_end.is_empty() && named_mains.is_empty() {
        draft.pod.set("completion", "any", None).note("exit_on_end: the pod ends when that process ends");
    }
    let grace = procs
        .iter()
        .filter_map(|p| p.shutdown_timeout.as_ref().map(|t| t.0))
        .max()
        .unwrap_or(DEFAULT_SHUTDOWN_SECS);
    draft
        .pod
        .set("termination_grace_period", Value::duration(std::time::Duration::from_secs(grace.unsigned_abs())), None)
        .note("process-compose's shutdown.timeout_seconds (10 s unless given; the longest of them): podinit has one budget for the pod");
    let restarts = procs.iter().any(|p| p.restart.as_ref().is_some_and(|r| r.0 != "no"));
    if restarts {
        let backoff = procs
            .iter()
            .filter_map(|p| p.backoff.as_ref().map(|b| b.0))
            .max()
            .unwrap_or(DEFAULT_BACKOFF_SECS);
        let d = Value::duration(std::time::Duration::from_secs(backoff.unsigned_abs()));
        let mut t = Table::default();
        t.set("initial", d.clone(), None);
        t.set("max", d, None);
        draft.pod.set("backoff", t, None).note(
            "availability.backoff_seconds: a constant wait (the longest given; podinit's first restart is immediate)",
        );
    }
    let dotenv = g.dotenv(ctx);

    for &i in &order {
        let e = &entries[i];
        let p = e.p;
        let role = roles[i];
        let mut out = Process::new(&e.name, role, Some(&p.at));
        if let Some(d) = &p.description {
            out.comment.push(d.clone());
        }
        match &p.command {
            Some((Value::Str(cmd), at)) if waited[i] == Some(Cond::Completed) => {
                out.table.set("command", format!("( {cmd}\n) || true"), Some(at)).note(
                    "process_completed: the others wait for it to end whatever its status, so a failure is not passed on",
                );
            }
            Some((cmd, at)) => {
                out.table.set("command", cmd.clone(), Some(at));
            }
            None => match ctx.command_for(&p.raw).or_else(|| ctx.command_for(&e.name)) {
                Some(c) => {
                    out.table.set("command", c, Some(&p.at));
                }
                None => {
                    out.commented_out = true;
                    out.comment
                        .push(format!("{} has no command: give one with `--command {}=CMD`.", p.raw, e.name));
                    ctx.note(
                        NoteKind::Dropped,
                        Some(&p.at),
                        format!(
                            "{} has no command; written commented out: give one with --command {}=CMD",
                            p.raw, e.name
                        ),
                    );
                }
            },
        }
        if let Some((dir, at)) = &p.working_dir {
            out.table.set("working_dir", dir.as_str(), Some(at));
        }
        if let Some((f, at)) = &p.env_file {
            let path = match &p.working_dir {
                Some((dir, _)) if !Path::new(f).is_absolute() => format!("{}/{f}", dir.trim_end_matches('/')),
                _ => f.clone(),
            };
            out.table.set("env_file", path, Some(at));
        } else if let (Some(d), false) = (&dotenv, p.dotenv_disabled) {
            out.table.set("env_file", d.as_str(), None);
        }
        let mut env = Table::default();
        for (k, v, at) in g.env.iter().chain(&p.env) {
            env.set(k, v.as_str(), Some(at));
            if g.expand && v.contains('$') {
                ctx.note(
                    NoteKind::Approximated,
                    Some(at),
                    format!("{k}: podinit passes the value as written; process-compose expands $VAR in it from its own environment when it reads the file"),
                );
            }
        }
        env.set("PC_PROC_NAME", p.raw.as_str(), Some(&p.at));
        if let Some(n) = e.replica {
            env.set("PC_REPLICA_NUM", n.to_string(), Some(&p.at));
        }
        if let Some((Value::Str(cmd), at)) = &p.command {
            if g.expand {
                for (k, _, _) in &p.env {
                    if mentions(cmd, k) {
                        ctx.note(
                            NoteKind::Approximated,
                            Some(at),
                            format!("${k}: the shell expands it from the entry's env (its `environment` value); process-compose expands it when it reads the file, from its own environment (write $${k} for the entry's value)"),
                        );
                    }
                }
            }
        }
        out.table.set("env", env, None);
        match role {
            "scheduled" => scheduled_keys(e, &mut out, ctx),
            "sidecar" => {
                let hold = if matches!(waited[i], Some(Cond::Healthy | Cond::LogReady)) {
                    "ready"
                } else {
                    "started"
                };
                out.table.set("hold_until", hold, None);
                if p.restart.as_ref().is_none_or(|r| r.0 == "no") {
                    ctx.note(
                        NoteKind::Approximated,
                        Some(&p.at),
                        format!("{} is a sidecar: podinit restarts it whenever it exits (process-compose: availability.restart, `no` unless given)", e.name),
                    );
                }
                if let Some((r, at)) = &p.restart {
                    if r == "exit_on_failure" {
                        out.table.set("max_restarts", 0, Some(at)).note(
                            "exit_on_failure: its exit ends the pod with its status (a sidecar's any exit)",
                        );
                    }
                }
            }
            _ => {
                if let Some((r, at)) = &p.restart {
                    match r.as_str() {
                        "always" => {
                            out.table.set("restart_policy", "Always", Some(at));
                        }
                        "on_failure" => {
                            out.table.set("restart_policy", "OnFailure", Some(at));
                        }
                        "exit_on_failure" => {
                            out.table.set("restart_policy", "OnFailure", Some(at));
                            out.table
                                .set("max_restarts", 0, Some(at))
                                .note("exit_on_failure: a failure ends the pod with its status");
                        }
                        _ => {
                            out.table.set("restart_policy", "Never", Some(at));
                        }
                    }
                }
            }
        }
        if let Some((n, at)) = p.max_restarts.as_ref().filter(|_| role != "scheduled") {
            if *n > 0 && out.table.get("max_restarts").is_none() {
                out.table.set("max_restarts", *n, Some(at));
                ctx.note(
                    NoteKind::Approximated,
                    Some(at),
                    "after max_restarts, podinit fails the pod (process-compose leaves the process stopped)",
                );
            }
        }
        if let Some((sig, at)) = &p.signal {
            out.table.set("stop_signal", *sig, Some(at));
        }
        if let Some((cmd, at)) = &p.pre_stop {
            let mut exec = Table::default();
            exec.set("command", cmd.as_str(), Some(at));
            let mut hook = Table::default();
            hook.set("exec", exec, Some(at));
            out.table.set("pre_stop", hook, Some(at));
            ctx.note(
                NoteKind::Approximated,
                Some(at),
                "shutdown.command runs as pre_stop, and the stop signal follows it (process-compose sends no signal after a shutdown command)",
            );
        }
        if role == "scheduled" {
            if p.readiness.is_some() || p.liveness.is_some() || p.ready_log_line.is_some() {
                ctx.note(
                    NoteKind::Dropped,
                    Some(&p.at),
                    "a scheduled entry has no probes: each run runs to its end",
                );
            }
        } else if role != "init" {
            if let Some((line, at)) = &p.ready_log_line {
                if p.readiness.is_some() {
                    ctx.error(Some(at), "ready_log_line and readiness_probe cannot both be given (process-compose refuses it too)");
                }
                let mut ll = Table::default();
                ll.set("contains", line.as_str(), Some(at));
                let mut probe = Table::default();
                probe.set("log_line", ll, Some(at));
                probe.set("period", "1s", Some(at));
                probe
                    .set("failure_threshold", 86400, Some(at))
                    .note("process-compose waits for the line without a limit");
                out.table.set("readiness_probe", probe, Some(at));
            }
            if let Some((t, at)) = &p.readiness {
                out.table.set("readiness_probe", t.clone(), Some(at));
                ctx.note(
                    NoteKind::Approximated,
                    Some(at),
                    "a failing readiness probe only marks the entry unready in podinit (process-compose restarts it by its availability)",
                );
            }
            if let Some((t, at)) = &p.liveness {
                out.table.set("liveness_probe", t.clone(), Some(at));
            }
        } else if p.readiness.is_some() || p.liveness.is_some() || p.ready_log_line.is_some() {
            ctx.note(NoteKind::Dropped, Some(&p.at), "an init task has no probes: it runs to completion");
        }
        draft.processes.push(out);
    }
    draft
}

/// A scheduled process's keys (f1bonacc1.github.io/process-compose,
/// "Scheduled Processes"): its schedule, and its `availability` as the tries
/// within a run.
fn scheduled_keys(e: &Entry, out: &mut Process, ctx: &mut Ctx) {
    let p = e.p;
    let Some(s) = &p.schedule else { return };
    match (&s.cron, &s.interval) {
        (Some((cron, at)), interval) => {
            out.table.set("schedule", cron.as_str(), Some(at));
            if let Some((_, _, at)) = interval {
                ctx.note(NoteKind::Ignored, Some(at), "cron is given too, and process-compose uses it");
            }
            match &s.timezone {
                Some((zone, at)) if zone != "Local" => {
                    out.table.set("time_zone", zone.as_str(), Some(at));
                }
                _ => {
                    out.table.set("time_zone", "UTC", Some(&s.at)).note(
                        "process-compose reads the cron in the machine's local time zone: set the zone it meant",
                    );
                    ctx.note(
                        NoteKind::Approximated,
                        Some(&s.at),
                        format!("{}: process-compose reads its cron in the local time zone (no timezone, or Local); podinit reads it in time_zone, written as UTC: set the zone it meant", e.name),
                    );
                }
            }
        }
        (None, Some((text, every, at))) => {
            if *every < std::time::Duration::from_secs(1) {
                ctx.note(
                    NoteKind::Approximated,
                    Some(at),
                    "podinit runs a scheduled entry at most once a second: written as 1s",
                );
                out.table.set("every", "1s", Some(at));
            } else {
                out.table.set("every", text.as_str(), Some(at));
            }
            if let Some((_, at)) = &s.timezone {
                ctx.note(NoteKind::Ignored, Some(at), "an interval does not read the wall clock");
            }
        }
        (None, None) => {}
    }
    if let Some(at) = &s.run_on_start {
        out.table.set("run_on_start", true, Some(at));
        ctx.note(
            NoteKind::Approximated,
            Some(at),
            "run_on_start: the run starts once the mains are reached (process-compose: when it starts)",
        );
    }
    // process-compose runs one at a time unless max_concurrent says more;
    // podinit's default is Allow (a CronJob's).
    match &s.max_concurrent {
        Some((n, at)) if *n > 1 => {
            out.table.set("max_concurrent", *n, Some(at));
        }
        Some((_, at)) => {
            out.table.set("concurrency_policy", "Forbid", Some(at));
        }
        None => {
            out.table.set("concurrency_policy", "Forbid", Some(&s.at)).note(
                "process-compose's max_concurrent is 1 unless given: a run due while one runs is skipped",
            );
        }
    }
    if let Some((r, at)) = &p.restart {
        match r.as_str() {
            "on_failure" => {
                out.table.set("restart_policy", "OnFailure", Some(at));
                match &p.max_restarts {
                    Some((n, at)) if *n > 0 => {
                        out.table.set("max_restarts", *n, Some(at));
                    }
                    // process-compose's 0 (its default) is no limit; podinit's
                    // 0 would be no try again.
                    limit => ctx.note(
                        NoteKind::Approximated,
                        Some(limit.as_ref().map_or(at, |(_, at)| at)),
                        "process-compose tries a failed run again without limit (max_restarts 0 or none); podinit tries it again at most max_restarts times, 6 unless given",
                    ),
                }
            }
            "no" => {}
            _ => ctx.note(
                NoteKind::Dropped,
                Some(at),
                format!("availability.restart {r} on a scheduled process: a run ends and never ends the pod; the next run is the schedule's (on_failure tries a failed run again)"),
            ),
        }
    }
}

/// Whether `cmd` names `$NAME` or `${NAME` unescaped (not `$$NAME`).
pub(super) fn mentions(cmd: &str, name: &str) -> bool {
    let bytes = cmd.as_bytes();
    let mut i = 0;
    while let Some(j) = cmd[i..].find('$') {
        let at = i + j;
        if bytes.get(at + 1) == Some(&b'$') {
            i = at + 2;
            continue;
        }
        let rest = &cmd[at + 1..];
        let rest = rest.strip_prefix('{').unwrap_or(rest);
        if rest.starts_with(name)
            && !rest[name.len()..].starts_with(|c: char| c.is_ascii_alphanumeric() || c == '_')
        {
            return true;
        }
        i = at + 1;
    }
    false
}

impl Global<'_> {
    /// The `.env` beside the file, which process-compose loads by default
    /// (from its working directory, "Configuration", ".env file") into every
    /// process: `env_file = ".env"`, relative to the TOML's directory.
    fn dotenv(&self, ctx: &mut Ctx) -> Option<String> {
        if !ctx.dir.join(".env").is_file() {
            return None;
        }
        ctx.note(
            NoteKind::Decision,
            None,
            ".env is read by every entry (env_file, relative to the TOML's directory: keep the TOML beside the process-compose file); process-compose reads the .env of its working directory",
        );
        Some(".env".to_owned())
    }
}

/// The entries in an order where each comes after everything it depends on,
/// file order otherwise; a cycle is one error naming it.
fn topological(entries: &[Entry], deps: &[Vec<(usize, Cond)>], ctx: &mut Ctx) -> Option<Vec<usize>> {
    let n = entries.len();
    let mut done = vec![false; n];
    let mut order = Vec::with_capacity(n);
    while order.len() < n {
        let next = (0..n).find(|&i| !done[i] && deps[i].iter().all(|&(d, _)| done[d]));
        match next {
            Some(i) => {
                done[i] = true;
                order.push(i);
            }
            None => {
                // Follow undone dependencies from the first undone entry until
                // one repeats: that is a cycle.
                let mut path = vec![(0..n).find(|&i| !done[i])?];
                loop {
                    let last = *path.last()?;
                    let d = deps[last].iter().map(|&(d, _)| d).find(|&d| !done[d])?;
                    if let Some(k) = path.iter().position(|&p| p == d) {
                        let names: Vec<&str> = path[k..]
                            .iter()
                            .chain(std::iter::once(&d))
                            .map(|&i| entries[i].name.as_str())
                            .collect();
                        let at = entries[path[k]]
                            .p
                            .deps
                            .iter()
                            .find(|(dn, _, _)| entries[d].p.raw == *dn || entries[d].name == *dn)
                            .map(|(_, _, at)| at.clone());
                        ctx.error(
                            at.as_ref().or(Some(&entries[path[k]].p.at)),
                            format!("depends_on makes a cycle: {}", names.join(" -> ")),
                        );
                        return None;
                    }
                    path.push(d);
                }
            }
        }
    }
    Some(order)
}
