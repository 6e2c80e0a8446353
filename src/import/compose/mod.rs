//! Compose files (the Compose Specification, github.com/compose-spec/compose-spec,
//! and docs.docker.com/reference/compose-file/): every service becomes one
//! `[[process]]` of one pod (docs/import.md, "Compose").
//!
//! The file is read as `docker compose config` reads it: YAML anchors and
//! merge keys (by [`super::yaml`]), then interpolation of every value from
//! the environment and the `.env` beside the file (`interpolate_tree`),
//! then profiles. The roles come from `depends_on`: what a service waits for
//! decides what the service it waits on becomes (`roles`), and the
//! dependencies decide the order (`order`). The mapping of each service key
//! is the one `match` in `read_service`.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::time::Duration;

use super::draft::{Draft, Process, Table, Value};
use super::yaml::{self, Node};
use super::{place, split_words, Ctx, NoteKind};
use crate::config::envfile;
use crate::config::locate::Place;

/// Compose's `healthcheck` defaults (docs.docker.com/reference/dockerfile/#healthcheck):
/// interval 30 s, timeout 30 s, 3 retries, no start period, 5 s start interval.
mod service;
use service::*;

const HEALTH_INTERVAL: Duration = Duration::from_secs(30);
const HEALTH_TIMEOUT: Duration = Duration::from_secs(30);
const HEALTH_RETRIES: i64 = 3;
const HEALTH_START_INTERVAL: Duration = Duration::from_secs(5);
/// Compose's default `stop_grace_period`.
const STOP_GRACE: Duration = Duration::from_secs(10);

/// What a service waits for in one of its `depends_on`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Condition {
    Started,
    Healthy,
    Completed,
}

struct Dep {
    target: String,
    condition: Condition,
    required: bool,
    at: Place,
}

/// A service's `healthcheck`, read.
struct Health {
    /// `exec.command` of the probe: an argv, or a string for `/bin/sh -c`.
    command: Value,
    interval: Duration,
    timeout: Duration,
    retries: i64,
    start_period: Duration,
    start_interval: Duration,
    at: Place,
}

/// One service as read, before its role is known.
struct Service {
    raw: String,
    name: String,
    at: Place,
    profiles: Vec<String>,
    deps: Vec<Dep>,
    table: Table,
    entrypoint: Option<(Vec<String>, Place)>,
    command: Option<(Vec<String>, Place)>,
    image: Option<String>,
    health: Option<Health>,
    /// `healthcheck` written without a `test`: the image's own check.
    health_from_image: bool,
    restart: Option<(String, Place)>,
    stop_grace: Option<(Duration, Place)>,
    /// Values of `env_file`s read at import (several files, or an optional one).
    file_env: Option<(Table, Place)>,
}

/// Reads a Compose file into the pod it describes.
pub fn read(text: &str, ctx: &mut Ctx) -> Draft {
    let mut draft = Draft::default();
    let mut docs = match yaml::parse(text) {
        Ok(docs) => docs,
        Err(e) => {
            ctx.error(Some(&place(e.at, "")), e.message);
            return draft;
        }
    };
    if docs.is_empty() {
        ctx.error(None, "the file is empty: a Compose file has services");
        return draft;
    }
    if docs.len() != 1 {
        ctx.error(None, format!("a Compose file is one YAML document, this one has {}", docs.len()));
        return draft;
    }
    let env = environment(ctx);
    let root = interpolate_tree(docs.remove(0), "", &env, &mut BTreeSet::new(), ctx);
    let Some(top) = root.as_map() else {
        ctx.error(Some(&place(root.at, "")), format!("a Compose file is a mapping, not {}", root.kind()));
        return draft;
    };
    let mut services = Vec::new();
    for (key, value) in top {
        let at = place(key.at, key.name.clone());
        match key.name.as_str() {
            "services" => match value.as_map() {
                Some(entries) => {
                    for (k, v) in entries {
                        if let Some(s) = read_service(&k.name, place(k.at, format!("services.{}", k.name)), v, ctx) {
                            services.push(s);
                        }
                    }
                }
                None if value.is_null() => {}
                None => ctx.error(Some(&at), format!("expected a mapping of services, found {}", value.kind())),
            },
            "version" => ctx.note(NoteKind::Ignored, Some(&at), "obsolete in the Compose Specification, and read as such"),
            "name" => ctx.note(NoteKind::Ignored, Some(&at), "the project name names containers; podinit has one"),
            "networks" | "volumes" | "configs" | "secrets" | "models" => ctx.note(
                NoteKind::Ignored,
                Some(&at),
                "one container: its services share podinit's network, file system and secrets",
            ),
            "include" => ctx.note(
                NoteKind::Dropped,
                Some(&at),
                "other Compose files are not read: import each one, or merge them with `docker compose config`",
            ),
            k if k.starts_with("x-") => ctx.note(NoteKind::Ignored, Some(&at), "an extension field"),
            other => ctx.error(
                Some(&at),
                format!("unknown top-level key {other:?} (Compose has services, networks, volumes, configs, secrets, include, name, version, x-*)"),
            ),
        }
    }
    if services.is_empty() && ctx.errors.is_empty() {
        ctx.error(None, "the file has no services");
    }
    if !ctx.errors.is_empty() {
        return draft;
    }
    let every: Vec<(String, String)> = services.iter().map(|s| (s.raw.clone(), s.name.clone())).collect();
    let services = active(services, &env, ctx);
    // A `--command` for no service is a typo; for a left-out one, a note.
    let opts = ctx.opts;
    for (name, _) in &opts.commands {
        let is = |(raw, entry): &(String, String)| raw == name || entry == name;
        if services.iter().any(|s| &s.raw == name || &s.name == name) {
            continue;
        }
        if every.iter().any(is) {
            ctx.note(
                NoteKind::Ignored,
                None,
                format!("--command {name}=...: {name} is left out (its profiles are not active)"),
            );
        } else {
            ctx.error(None, format!("--command {name}=...: no service of this file has this name"));
        }
    }
    let Some(roles) = roles(&services, ctx) else { return draft };
    let mains: Vec<bool> = roles.iter().map(|(role, _)| *role == "main").collect();
    let Some(order) = order(&services, &mains, ctx) else { return draft };

    draft.comment.push(format!(
        "Imported from {} (Compose) by podinit import: docs/import.md, \"Compose\".",
        Path::new(&ctx.file).file_name().map_or(ctx.file.clone(), |n| n.to_string_lossy().into_owned())
    ));
    if services.iter().any(|s| s.entrypoint.is_none() && s.command.is_some() && s.image.is_some()) {
        draft.comment.push(
            "Commands are as the file writes them: an image's ENTRYPOINT, which Compose would put before a `command`, is not known here."
                .to_owned(),
        );
    }
    stop_budget(&services, &mut draft, ctx);
    for i in order {
        let (role, hold) = roles[i];
        draft.processes.push(process(&services[i], role, hold, ctx));
    }
    draft
}

/// The variables interpolation reads: the environment, over the `.env` beside
/// the file (docs.docker.com/compose/how-tos/environment-variables/envvars-precedence/).
fn environment(ctx: &mut Ctx) -> BTreeMap<String, String> {
    let mut env = BTreeMap::new();
    let path = ctx.dir.join(".env");
    if let Ok(text) = std::fs::read_to_string(&path) {
        match envfile::parse_with(&text, &mut |name| std::env::var(name).ok()) {
            Ok(pairs) => env.extend(pairs),
            Err(e) => ctx.error(None, format!("{}: {e}", path.display())),
        }
    }
    env.extend(std::env::vars());
    env
}

/// The tree with every scalar value interpolated (keys are not). An unset
/// variable without a default becomes the empty string, with a note, as
/// Compose warns.
/// Each unset variable is noted once (`noted`).
fn interpolate_tree(
    node: Node,
    path: &str,
    env: &BTreeMap<String, String>,
    noted: &mut BTreeSet<String>,
    ctx: &mut Ctx,
) -> Node {
    let at = node.at;
    let value = match node.value {
        yaml::Value::Scalar { text, quoted } if text.contains('$') => {
            let mut missing = Vec::new();
            let mut lookup = |name: &str| {
                let v = env.get(name).cloned();
                if v.is_none() {
                    missing.push(name.to_owned());
                }
                v
            };
            match envfile::interpolate(&text, &mut lookup) {
                Ok(t) => {
                    for name in missing {
                        if !has_default(&text, &name) && noted.insert(name.clone()) {
                            ctx.note(
                                NoteKind::Decision,
                                Some(&place(at, path)),
                                format!("the variable {name} is not set: it is an empty string here, as Compose substitutes it"),
                            );
                        }
                    }
                    // An empty result is an empty string, not YAML's null.
                    let quoted = quoted || t.is_empty();
                    yaml::Value::Scalar { text: t, quoted }
                }
                Err(e) => {
                    ctx.error(Some(&place(at, path)), e);
                    yaml::Value::Scalar { text, quoted }
                }
            }
        }
        yaml::Value::Seq(items) => yaml::Value::Seq(
            items
                .into_iter()
                .enumerate()
                .map(|(i, n)| interpolate_tree(n, &format!("{path}[{i}]"), env, noted, ctx))
                .collect(),
        ),
        yaml::Value::Map(entries) => yaml::Value::Map(
            entries
                .into_iter()
                .map(|(k, n)| {
                    let p = if path.is_empty() { k.name.clone() } else { format!("{path}.{}", k.name) };
                    let n = interpolate_tree(n, &p, env, noted, ctx);
                    (k, n)
                })
                .collect(),
        ),
        scalar => scalar,
    };
    Node { at, value }
}

/// Whether every use of `name` in `text` has an operator (a default, an
/// alternative, an error): then an unset `name` is not worth a note.
fn has_default(text: &str, name: &str) -> bool {
    let bare = format!("${name}");
    let plain = text.match_indices(&bare).any(|(i, _)| {
        !text[i + bare.len()..].starts_with(|c: char| c.is_ascii_alphanumeric() || c == '_')
            && (i == 0 || !text[..i].ends_with('$'))
    });
    !plain && !text.contains(&format!("${{{name}}}"))
}

/// The services of the active profiles: a service with `profiles` runs only
/// when one of them is active (`--profile`, `COMPOSE_PROFILES`; `*` is all).
fn active(services: Vec<Service>, env: &BTreeMap<String, String>, ctx: &mut Ctx) -> Vec<Service> {
    let mut on: BTreeSet<String> = ctx.opts.profiles.iter().cloned().collect();
    if let Some(list) = env.get("COMPOSE_PROFILES") {
        on.extend(list.split(',').map(str::trim).filter(|p| !p.is_empty()).map(str::to_owned));
    }
    let all = on.contains("*");
    let mut kept = Vec::new();
    let mut left_out = BTreeMap::new();
    for s in services {
        if s.profiles.is_empty() || all || s.profiles.iter().any(|p| on.contains(p)) {
            kept.push(s);
        } else {
            ctx.note(
                NoteKind::Ignored,
                Some(&s.at),
                format!(
                    "left out: its profiles ({}) are not active; `--profile {}` includes it",
                    s.profiles.join(", "),
                    s.profiles[0]
                ),
            );
            left_out.insert(s.raw.clone(), s.profiles.clone());
        }
    }
    for s in &mut kept {
        let mut deps = Vec::new();
        for d in std::mem::take(&mut s.deps) {
            if let Some(profiles) = left_out.get(&d.target) {
                if d.required {
                    ctx.error(
                        Some(&d.at),
                        format!(
                            "{} depends on {}, which is left out: its profiles ({}) are not active; `--profile {}` includes it",
                            s.raw,
                            d.target,
                            profiles.join(", "),
                            profiles[0]
                        ),
                    );
                } else {
                    ctx.note(
                        NoteKind::Ignored,
                        Some(&d.at),
                        format!("{} is left out (profile) and not required", d.target),
                    );
                }
                continue;
            }
            deps.push(d);
        }
        s.deps = deps;
    }
    let names: BTreeSet<String> = kept.iter().map(|s| s.raw.clone()).collect();
    for s in &mut kept {
        let raw = s.raw.clone();
        s.deps.retain(|d| {
            if names.contains(&d.target) {
                return true;
            }
            if d.required {
                ctx.error(
                    Some(&d.at),
                    format!("{raw} depends on {:?}, which is not a service of this file", d.target),
                );
            } else {
                ctx.note(
                    NoteKind::Ignored,
                    Some(&d.at),
                    format!("{} is not a service here, and not required", d.target),
                );
            }
            false
        });
    }
    kept
}

/// The start order: every service after what it depends on, otherwise in
/// file order; mains last. `None` (with an error) for a cycle.
fn order(services: &[Service], mains: &[bool], ctx: &mut Ctx) -> Option<Vec<usize>> {
    if !ctx.errors.is_empty() {
        return None;
    }
    let index: BTreeMap<&str, usize> =
        services.iter().enumerate().map(|(i, s)| (s.raw.as_str(), i)).collect();
    let deps: Vec<Vec<usize>> =
        services.iter().map(|s| s.deps.iter().map(|d| index[d.target.as_str()]).collect()).collect();
    // A cycle, found by a depth-first walk, is named in full.
    let mut state = vec![0u8; services.len()];
    let mut path = Vec::new();
    fn walk(i: usize, deps: &[Vec<usize>], state: &mut [u8], path: &mut Vec<usize>) -> Option<Vec<usize>> {
        if state[i] == 2 {
            return None;
        }
        if state[i] == 1 {
            let from = path.iter().position(|&p| p == i).unwrap_or(0);
            let mut cycle = path[from..].to_vec();
            cycle.push(i);
            return Some(cycle);
        }
        state[i] = 1;
        path.push(i);
        for &d in &deps[i] {
            if let Some(c) = walk(d, deps, state, path) {
                return Some(c);
            }
        }
        path.pop();
        state[i] = 2;
        None
    }
    for i in 0..services.len() {
        if let Some(cycle) = walk(i, &deps, &mut state, &mut path) {
            let names: Vec<&str> = cycle.iter().map(|&c| services[c].raw.as_str()).collect();
            let first = &services[cycle[0]];
            let at = first.deps.iter().find(|d| d.target == names[1]).map_or(&first.at, |d| &d.at);
            ctx.error(
                Some(at),
                format!("depends_on has a cycle: {}; Compose cannot start it either", names.join(" -> ")),
            );
            return None;
        }
    }
    // Kahn's order, the first ready service in file order each time.
    let mut placed = vec![false; services.len()];
    let mut out = Vec::new();
    while out.len() < services.len() {
        let next = (0..services.len()).find(|&i| !placed[i] && deps[i].iter().all(|&d| placed[d]))?;
        placed[next] = true;
        out.push(next);
    }
    // Mains (nothing depends on them) last, in file order: podinit starts
    // them together after the rest.
    let (mains, mut first): (Vec<usize>, Vec<usize>) = out.into_iter().partition(|&i| mains[i]);
    let chain = first.windows(2).all(|w| deps[w[1]].contains(&w[0]));
    if !chain {
        let names: Vec<&str> = first.iter().map(|&i| services[i].raw.as_str()).collect();
        ctx.note(
            NoteKind::Decision,
            None,
            format!(
                "the dependencies are not one chain: Compose starts services whose dependencies are met in parallel, podinit starts them one at a time in this order: {} (each after what it depends on, then in file order)",
                names.join(", ")
            ),
        );
    }
    first.extend(mains);
    Some(first)
}

/// Each service's role, and for a sidecar its `hold_until`: what the
/// services that depend on it wait for (the strongest condition wins).
/// `None` (with an error) when `--main` names a service badly.
fn roles(services: &[Service], ctx: &mut Ctx) -> Option<Vec<(&'static str, Option<&'static str>)>> {
    if !ctx.errors.is_empty() {
        return None;
    }
    // Only what will run decides: a service written out commented (no
    // command) waits for nothing, so the pod keeps a main to run.
    let mut wanted: BTreeMap<&str, Condition> = BTreeMap::new();
    for s in services {
        if !runnable(s, ctx) {
            if !s.deps.is_empty() {
                ctx.note(
                    NoteKind::Decision,
                    Some(&s.at),
                    format!("{} has no command here, so what it depends on is started as if nothing waited for it", s.raw),
                );
            }
            continue;
        }
        for d in &s.deps {
            let w = wanted.entry(d.target.as_str()).or_insert(d.condition);
            *w = (*w).max(d.condition);
        }
    }
    let opts = ctx.opts;
    let mains = &opts.mains;
    for m in mains {
        match services.iter().find(|s| &s.raw == m || &s.name == m) {
            None => ctx.error(None, format!("--main {m}: no active service has this name")),
            Some(s) if wanted.contains_key(s.raw.as_str()) => {
                let by: Vec<&str> = services
                    .iter()
                    .filter(|o| o.deps.iter().any(|d| d.target == s.raw))
                    .map(|o| o.raw.as_str())
                    .collect();
                ctx.error(
                    None,
                    format!(
                        "--main {m}: {} depend on it, and mains start after every other entry",
                        by.join(", ")
                    ),
                );
            }
            Some(_) => {}
        }
    }
    if !ctx.errors.is_empty() {
        return None;
    }
    Some(
        services
            .iter()
            .map(|s| match wanted.get(s.raw.as_str()) {
                Some(Condition::Completed) => ("init", None),
                Some(Condition::Healthy) => ("sidecar", Some("ready")),
                Some(Condition::Started) => ("sidecar", Some("started")),
                None if mains.is_empty() || mains.iter().any(|m| m == &s.raw || m == &s.name) => {
                    ("main", None)
                }
                None => ("sidecar", Some("started")),
            })
            .collect(),
    )
}

/// Whether `s` has a command: its own, or one from `--command`.
fn runnable(s: &Service, ctx: &Ctx) -> bool {
    s.entrypoint.iter().chain(&s.command).any(|(w, _)| !w.is_empty())
        || ctx.command_for(&s.raw).or_else(|| ctx.command_for(&s.name)).is_some()
}

/// `[pod] termination_grace_period`: the largest `stop_grace_period` (10 s
/// where a service sets none), when the file sets any.
fn stop_budget(services: &[Service], draft: &mut Draft, ctx: &mut Ctx) {
    let Some((_, at)) = services.iter().filter_map(|s| s.stop_grace.as_ref()).max_by_key(|(d, _)| *d) else {
        return;
    };
    let largest = services
        .iter()
        .map(|s| s.stop_grace.as_ref().map_or(STOP_GRACE, |(d, _)| *d))
        .max()
        .unwrap_or(STOP_GRACE);
    draft
        .pod
        .set("termination_grace_period", Value::duration(largest), Some(at))
        .note("The largest stop_grace_period of the services (Compose's default is 10s).");
    ctx.note(
        NoteKind::Approximated,
        Some(at),
        format!(
            "termination_grace_period = {:?}: Compose gives each service its own stop_grace_period as it stops them in reverse dependency order; podinit has one budget for the whole pod (stopped in the same order)",
            fmt_duration(largest)
        ),
    );
}

fn fmt_duration(d: Duration) -> String {
    match Value::duration(d) {
        Value::Str(s) => s,
        _ => String::new(),
    }
}

/// The `[[process]]` of one service in its role.
fn process(s: &Service, role: &str, hold: Option<&str>, ctx: &mut Ctx) -> Process {
    let mut p = Process::new(&s.name, role, Some(&s.at));
    if let Some(hold) = hold {
        p.table.set("hold_until", hold, Some(&s.at));
    }
    // argv: the entrypoint, then the command (Compose: an `entrypoint`
    // replaces the image's ENTRYPOINT and clears its CMD).
    let argv: Vec<String> = s.entrypoint.iter().chain(&s.command).flat_map(|(w, _)| w.clone()).collect();
    let from = s.entrypoint.as_ref().or(s.command.as_ref()).map(|(_, at)| at.clone());
    if !argv.is_empty() {
        p.table.set("command", Value::argv(&argv), from.as_ref());
    } else if let Some(cmd) = ctx.command_for(&s.raw).or_else(|| ctx.command_for(&s.name)).map(str::to_owned)
    {
        p.table.set("command", cmd, Some(&s.at)).note("From --command.");
    } else {
        let image = s.image.as_deref().map_or("its image".to_owned(), |i| format!("image {i}"));
        p.commented_out = true;
        p.comment.push(format!(
            "{} has no command of its own: it runs the default command of {image}. Give one with --command {}=CMD.",
            s.raw, s.name
        ));
        ctx.note(
            NoteKind::Dropped,
            Some(&s.at),
            format!("no command or entrypoint: it runs the default command of {image}; written commented out (--command {}=CMD gives one)", s.name),
        );
    }
    for item in &s.table.0 {
        p.table.0.push(item.clone());
    }

    // restart: the role decides what podinit can honour.
    let restart = s.restart.as_ref();
    let policy =
        restart.map(|(r, at)| (r.split(':').next().unwrap_or(""), r.split_once(':').map(|(_, n)| n), at));
    match (role, policy) {
        ("sidecar", Some(("always" | "unless-stopped", _, _))) => {}
        ("sidecar", other) => {
            let said = other.map_or("no (Compose's default)".to_owned(), |(r, _, _)| r.to_owned());
            ctx.note(
                NoteKind::Approximated,
                other.map_or(Some(&s.at), |(_, _, at)| Some(at)),
                format!("{} is a sidecar, and podinit restarts a sidecar after every exit; the file says restart: {said}", s.raw),
            );
        }
        (_, None | Some(("no", _, _))) => {}
        (_, Some((kind, n, at))) => {
            let policy = match kind {
                "always" | "unless-stopped" if role == "init" => "OnFailure",
                "always" | "unless-stopped" => "Always",
                _ => "OnFailure",
            };
            p.table.set("restart_policy", policy, Some(at));
            if kind == "unless-stopped" {
                ctx.note(
                    NoteKind::Approximated,
                    Some(at),
                    "unless-stopped is always here: podinit has no daemon restart to survive",
                );
            }
            if role == "init" && matches!(kind, "always" | "unless-stopped") {
                ctx.note(
                    NoteKind::Approximated,
                    Some(at),
                    format!("{} is an init: it runs to completion, so {kind} acts as on-failure", s.raw),
                );
            }
            if let Some(n) = n {
                match n.parse::<i64>() {
                    Ok(n) if n >= 0 && kind == "on-failure" => {
                        p.table.set("max_restarts", n, Some(at));
                    }
                    _ => ctx.error(
                        Some(at),
                        format!(
                            "restart {:?}: expected on-failure:N with N a count",
                            restart.map_or("", |(r, _)| r)
                        ),
                    ),
                }
            }
        }
    }

    // healthcheck: a probe of the entry.
    if let Some(h) = &s.health {
        let probe = |period: Duration, failures: i64| {
            let mut t = Table::default();
            let mut exec = Table::default();
            exec.set("command", h.command.clone(), Some(&h.at));
            t.set("exec", exec, Some(&h.at));
            t.set("period", Value::duration(period), Some(&h.at));
            t.set("timeout", Value::duration(h.timeout), Some(&h.at));
            t.set("failure_threshold", failures, Some(&h.at));
            t
        };
        match (role, hold) {
            ("init", _) => ctx.note(NoteKind::Dropped, Some(&h.at), format!("{} is an init (service_completed_successfully): it is waited for to exit, not to be healthy", s.raw)),
            (_, Some("ready")) => {
                let period = if h.start_period.is_zero() { h.interval } else { h.start_interval };
                let grace = h.start_period.as_millis().div_ceil(period.as_millis().max(1));
                let failures = h.retries.saturating_add(i64::try_from(grace).unwrap_or(i64::MAX));
                p.table.set("startup_probe", probe(period, failures), Some(&h.at)).note(
                    "The healthcheck, until it first passes (start_period counted as failures allowed).",
                );
                p.table.set("readiness_probe", probe(h.interval, h.retries), Some(&h.at)).note(
                    "The healthcheck, then on: the start sequence waits until it passes (service_healthy).",
                );
                ctx.note(
                    NoteKind::Approximated,
                    Some(&h.at),
                    format!("{}'s healthcheck is its startup and readiness probe: if it never passes, podinit restarts {}, where Compose marks it unhealthy and does not start what depends on it", s.raw, s.name),
                );
            }
            _ => {
                p.table.set("readiness_probe", probe(h.interval, h.retries), Some(&h.at)).note("The healthcheck.");
            }
        }
    } else if hold == Some("ready") {
        p.table.set("hold_until", "started", Some(&s.at));
        ctx.note(
            NoteKind::Approximated,
            Some(&s.at),
            if s.health_from_image {
                format!("something waits for {} to be healthy, and its healthcheck is the image's (not known here): it is held until started", s.raw)
            } else {
                format!("something waits for {} to be healthy, and it has no healthcheck here (the image may have one): it is held until started", s.raw)
            },
        );
    }
    p
}

#[cfg(test)]
mod tests {
    use super::parse_duration;
    use std::time::Duration;

    #[test]
    fn durations_read_as_compose_writes_them() {
        assert_eq!(parse_duration("1m30s"), Some(Duration::from_secs(90)));
        assert_eq!(parse_duration("500ms"), Some(Duration::from_millis(500)));
        assert_eq!(parse_duration("1.5s"), Some(Duration::from_millis(1500)));
        assert_eq!(parse_duration("2h"), Some(Duration::from_secs(7200)));
        assert_eq!(parse_duration("0"), Some(Duration::ZERO));
        assert_eq!(parse_duration("10"), None);
        assert_eq!(parse_duration("s"), None);
        assert_eq!(parse_duration("5x"), None);
    }
}
