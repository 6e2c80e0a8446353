//! Compose files (the Compose Specification, github.com/compose-spec/compose-spec,
//! and docs.docker.com/reference/compose-file/): every service becomes one
//! `[[process]]` of one pod (docs/import.md, "Compose").
//!
//! The file is read as `docker compose config` reads it: YAML anchors and
//! merge keys (by [`super::yaml`]), then interpolation of every value from
//! the environment and the `.env` beside the file ([`interpolate_tree`]),
//! then profiles. The roles come from `depends_on`: what a service waits for
//! decides what the service it waits on becomes ([`roles`]), and the
//! dependencies decide the order ([`order`]). The mapping of each service key
//! is the one `match` in [`read_service`].

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

/// Reads one service; the mapping of its keys to podinit is this function's
/// `match`, one row per key.
fn read_service(raw: &str, at: Place, node: &Node, ctx: &mut Ctx) -> Option<Service> {
    let name = ctx.name(raw, Some(&at));
    let Some(map) = node.as_map() else {
        ctx.error(Some(&at), format!("a service is a mapping, not {}", node.kind()));
        return None;
    };
    let mut s = Service {
        raw: raw.to_owned(),
        name,
        at: at.clone(),
        profiles: Vec::new(),
        deps: Vec::new(),
        table: Table::default(),
        entrypoint: None,
        command: None,
        image: None,
        health: None,
        health_from_image: false,
        restart: None,
        stop_grace: None,
        file_env: None,
    };
    let base = at.key.clone();
    for (k, v) in map {
        let key_at = place(k.at, format!("{base}.{}", k.name));
        let val_at = place(v.at, format!("{base}.{}", k.name));
        let ignored = |ctx: &mut Ctx, why: &str| ctx.note(NoteKind::Ignored, Some(&key_at), why.to_owned());
        match k.name.as_str() {
            // The argv is `entrypoint` then `command`; a string is split into
            // words as a shell would, without expansion (no shell runs it).
            "command" => s.command = words(v, &val_at, ctx).map(|w| (w, val_at.clone())),
            "entrypoint" => s.entrypoint = words(v, &val_at, ctx).map(|w| (w, val_at.clone())),
            // `env`: a mapping, or a list of KEY=VALUE; a name without a value
            // passes the variable on, which podinit does for all anyway.
            "environment" => {
                if let Some(env) = environment_of(v, &val_at, ctx) {
                    s.table.set("env", env, Some(&val_at));
                }
            }
            // One file: podinit reads it at start (same syntax); several:
            // read here and written into `env`.
            "env_file" => env_files(v, &val_at, &mut s, ctx),
            "working_dir" => {
                if let Some(d) = string(v, &val_at, ctx) {
                    s.table.set("working_dir", d, Some(&val_at));
                }
            }
            // `user`: "name", "uid", "uid:gid", as podinit reads it.
            "user" => {
                if let Some(u) = string(v, &val_at, ctx) {
                    s.table.set("user", u, Some(&val_at));
                }
            }
            "stop_signal" => {
                if let Some(sig) = string(v, &val_at, ctx) {
                    s.table.set("stop_signal", sig, Some(&val_at));
                }
            }
            // The largest becomes [pod] termination_grace_period.
            "stop_grace_period" => s.stop_grace = duration(v, &val_at, ctx).map(|d| (d, val_at.clone())),
            // `restart_policy` (and `max_restarts` for on-failure:N), by role.
            "restart" => {
                if let Some(r) = string(v, &val_at, ctx) {
                    let kind = r.split(':').next().unwrap_or("");
                    if !matches!(kind, "no" | "always" | "on-failure" | "unless-stopped")
                        || (kind != "on-failure" && r.contains(':'))
                    {
                        ctx.error(Some(&val_at), format!("restart {r:?}: Compose has no, always, on-failure[:N], unless-stopped"));
                    } else {
                        s.restart = Some((r, val_at.clone()));
                    }
                }
            }
            "healthcheck" => health(v, &val_at, &mut s, ctx),
            // The roles and the order (see `roles`, `order`).
            "depends_on" => s.deps.extend(depends_on(v, &val_at, ctx)),
            "profiles" => s.profiles = strings(v, &val_at, ctx).unwrap_or_default(),
            // Compose lifecycle hooks: podinit has one exec hook of each.
            "post_start" | "pre_stop" => {
                if let Some(hook) = hook(v, &val_at, ctx) {
                    s.table.set(&k.name, hook, Some(&val_at));
                }
            }
            "oom_score_adj" => match v.as_int() {
                Some(n) => {
                    s.table.set("oom_score_adj", n, Some(&val_at));
                }
                None => ctx.error(Some(&val_at), format!("expected an integer, found {}", v.kind())),
            },
            // `no-new-privileges` of security_opt; the other options are the runtime's.
            "security_opt" => {
                for opt in strings(v, &val_at, ctx).unwrap_or_default() {
                    if matches!(opt.as_str(), "no-new-privileges" | "no-new-privileges:true" | "no-new-privileges=true") {
                        s.table.set("no_new_privileges", true, Some(&val_at));
                    } else {
                        ctx.note(NoteKind::Ignored, Some(&val_at), format!("security_opt {opt:?}: set by the container runtime, not an init"));
                    }
                }
            }
            // Implied dependencies (Compose starts the linked service first).
            "links" | "volumes_from" => {
                for l in strings(v, &val_at, ctx).unwrap_or_default() {
                    let target = l.split(':').next().unwrap_or("").to_owned();
                    if k.name == "volumes_from" && target == "container" {
                        continue;
                    }
                    s.deps.push(Dep { target, condition: Condition::Started, required: true, at: val_at.clone() });
                }
                ignored(ctx, "one container: shared already; kept only as a dependency (started first)");
            }
            "network_mode" => {
                if let Some(target) = v.as_str().and_then(|m| m.strip_prefix("service:")) {
                    s.deps.push(Dep { target: target.to_owned(), condition: Condition::Started, required: true, at: val_at.clone() });
                }
                ignored(ctx, "one container: every entry shares podinit's network");
            }
            "image" => {
                s.image = v.as_str().map(str::to_owned);
                ignored(ctx, "podinit runs in one image; the entry's programs must be in it");
            }
            "build" | "pull_policy" | "platform" => ignored(ctx, "podinit runs in one image; the entry's programs must be in it"),
            "ports" | "expose" | "networks" | "volumes" | "tmpfs" | "extra_hosts" | "dns" | "dns_opt" | "dns_search"
            | "hostname" | "domainname" | "mac_address" | "configs" | "secrets" | "devices" | "ipc" | "pid" | "uts"
            | "shm_size" | "sysctls" | "userns_mode" | "cgroup" | "cgroup_parent" | "isolation" | "runtime"
            | "external_links" | "container_name" | "use_api_socket" | "gpus" | "device_cgroup_rules" | "group_add"
            | "storage_opt" | "read_only" | "privileged" | "cap_add" | "cap_drop" | "credential_spec" | "models" => {
                ignored(ctx, "one container: the runtime sets this for the whole container, podinit does not")
            }
            "deploy" | "scale" | "cpus" | "cpu_count" | "cpu_percent" | "cpu_shares" | "cpu_period" | "cpu_quota"
            | "cpu_rt_runtime" | "cpu_rt_period" | "cpuset" | "mem_limit" | "mem_reservation" | "mem_swappiness"
            | "memswap_limit" | "oom_kill_disable" | "pids_limit" | "ulimits" | "blkio_config" => {
                ctx.note(NoteKind::Dropped, Some(&key_at), "resources and replicas are the container's: one copy runs, with the container's limits")
            }
            "labels" | "label_file" | "annotations" | "logging" | "develop" | "attach" | "provider" => {
                ignored(ctx, "metadata for Compose and the engine")
            }
            "tty" | "stdin_open" => ignored(ctx, "podinit gives entries no terminal or stdin"),
            "init" => ignored(ctx, "podinit is the init"),
            "extends" => ctx.note(
                NoteKind::Dropped,
                Some(&key_at),
                "extends is not followed: the keys of the extended service are not read (`docker compose config` writes them out)",
            ),
            other if other.starts_with("x-") => ignored(ctx, "an extension field"),
            other => ctx.error(Some(&key_at), format!("unknown service key {other:?} (not in the Compose Specification; a typo?)")),
        }
    }
    // `environment` wins over every env_file.
    if let Some((mut values, at)) = s.file_env.take() {
        if let Some(Value::Table(env)) = s.table.get_mut("env") {
            for item in std::mem::take(&mut env.0) {
                values.set(&item.key, item.value, item.from.as_ref());
            }
        }
        s.table.set("env", values, Some(&at));
    }
    Some(s)
}

use super::text as string;

/// A list of strings (a single string is a list of one).
fn strings(v: &Node, at: &Place, ctx: &mut Ctx) -> Option<Vec<String>> {
    match v.as_seq() {
        Some(items) => items.iter().map(|i| string(i, at, ctx)).collect(),
        None => string(v, at, ctx).map(|s| vec![s]),
    }
}

/// `command`/`entrypoint`: a list as it is, a string split into words.
fn words(v: &Node, at: &Place, ctx: &mut Ctx) -> Option<Vec<String>> {
    if v.is_null() {
        return None;
    }
    if let Some(items) = v.as_seq() {
        return items.iter().map(|i| string(i, at, ctx)).collect();
    }
    let line = string(v, at, ctx)?;
    match split_words(&line) {
        Ok(w) => Some(w),
        Err(e) => {
            ctx.error(Some(at), e);
            None
        }
    }
}

/// A Compose duration: `1m30s`, `10s`, `500ms`, `1.5s`, `2h` (units us, ms,
/// s, m, h; a sum of parts).
fn duration(v: &Node, at: &Place, ctx: &mut Ctx) -> Option<Duration> {
    let text = string(v, at, ctx)?;
    match parse_duration(&text) {
        Some(d) => Some(d),
        None => {
            ctx.error(Some(at), format!("{text:?} is not a duration (like 10s, 1m30s, 500ms)"));
            None
        }
    }
}

fn parse_duration(text: &str) -> Option<Duration> {
    let mut rest = text.trim();
    if rest.is_empty() {
        return None;
    }
    if rest == "0" {
        return Some(Duration::ZERO);
    }
    let mut total = 0f64;
    while !rest.is_empty() {
        let n = rest.find(|c: char| !(c.is_ascii_digit() || c == '.')).filter(|&n| n > 0)?;
        let number: f64 = rest[..n].parse().ok()?;
        rest = &rest[n..];
        let u = rest.find(|c: char| c.is_ascii_digit() || c == '.').unwrap_or(rest.len());
        let scale = match &rest[..u] {
            "ns" => 1e-9,
            "us" | "µs" => 1e-6,
            "ms" => 1e-3,
            "s" => 1.0,
            "m" => 60.0,
            "h" => 3600.0,
            _ => return None,
        };
        total += number * scale;
        rest = &rest[u..];
    }
    Duration::try_from_secs_f64(total).ok()
}

/// `environment` as podinit's `env` table.
fn environment_of(v: &Node, at: &Place, ctx: &mut Ctx) -> Option<Table> {
    let mut env = Table::default();
    let mut passed = Vec::new();
    if let Some(items) = v.as_seq() {
        for item in items {
            let item_at = place(item.at, at.key.clone());
            let Some(line) = string(item, &item_at, ctx) else { continue };
            match line.split_once('=') {
                Some((k, val)) => {
                    env.set(k, val, Some(&item_at));
                }
                None => passed.push(line),
            }
        }
    } else if let Some(entries) = v.as_map() {
        for (k, val) in entries {
            let item_at = place(val.at, format!("{}.{}", at.key, k.name));
            if val.is_null() {
                passed.push(k.name.clone());
            } else if let Some(s) = string(val, &item_at, ctx) {
                env.set(&k.name, s, Some(&item_at));
            }
        }
    } else if !v.is_null() {
        ctx.error(Some(at), format!("expected a mapping or a list of KEY=VALUE, found {}", v.kind()));
        return None;
    }
    if !passed.is_empty() {
        ctx.note(
            NoteKind::Decision,
            Some(at),
            format!("{} without a value: Compose passes them from its own environment, podinit passes its own environment to every entry", passed.join(", ")),
        );
    }
    Some(env)
}

/// `env_file`: a path, or a list of paths or `{path, required, format}`.
fn env_files(v: &Node, at: &Place, s: &mut Service, ctx: &mut Ctx) {
    let items: Vec<&Node> = match v.as_seq() {
        Some(items) => items.iter().collect(),
        None => vec![v],
    };
    let mut files = Vec::new();
    for item in items {
        let item_at = place(item.at, at.key.clone());
        if let Some(m) = item.as_map() {
            let (mut path, mut required, mut raw) = (None, true, false);
            for (k, val) in m {
                let kat = place(val.at, format!("{}.{}", at.key, k.name));
                match k.name.as_str() {
                    "path" => path = string(val, &kat, ctx),
                    "required" => match val.as_bool() {
                        Some(b) => required = b,
                        None => {
                            ctx.error(Some(&kat), format!("expected true or false, found {}", val.kind()))
                        }
                    },
                    "format" => raw = string(val, &kat, ctx).as_deref() == Some("raw"),
                    other => ctx.error(
                        Some(&kat),
                        format!("unknown env_file key {other:?} (path, required, format)"),
                    ),
                }
            }
            match path {
                Some(p) => files.push((p, required, raw, item_at)),
                None => ctx.error(Some(&item_at), "an env_file entry needs a path"),
            }
        } else if let Some(p) = string(item, &item_at, ctx) {
            files.push((p, true, false, item_at));
        }
    }
    if files.is_empty() {
        return;
    }
    if let [(path, true, false, file_at)] = files.as_slice() {
        if !ctx.dir.join(path).is_file() {
            ctx.note(
                NoteKind::Decision,
                Some(file_at),
                format!("env_file {path:?} is not there: Compose refuses to start the service without it, and so does podinit"),
            );
        }
        s.table.set("env_file", path.as_str(), Some(file_at));
        return;
    }
    // Several files (or an optional or raw one): read now, later files win,
    // `environment` wins over all (it is set after, below `env`).
    let mut values = Table::default();
    for (path, required, raw, file_at) in files {
        let full = ctx.dir.join(&path);
        let text = match std::fs::read_to_string(&full) {
            Ok(t) => t,
            Err(e) => {
                let kind = if required { NoteKind::Dropped } else { NoteKind::Ignored };
                let why = if required {
                    "Compose refuses to start the service without it"
                } else {
                    "it is optional (required: false)"
                };
                ctx.note(kind, Some(&file_at), format!("env_file {path:?} cannot be read ({e}): {why}"));
                continue;
            }
        };
        let pairs = if raw {
            Ok(text
                .lines()
                .filter(|l| !l.trim().is_empty() && !l.starts_with('#'))
                .filter_map(|l| l.split_once('='))
                .map(|(k, v)| (k.to_owned(), v.to_owned()))
                .collect())
        } else {
            envfile::parse_with(&text, &mut |name| std::env::var(name).ok())
        };
        match pairs {
            Ok(pairs) => {
                for (k, val) in pairs {
                    values.set(&k, val, Some(&file_at));
                }
            }
            Err(e) => ctx.error(Some(&file_at), format!("env_file {path:?}: {e}")),
        }
    }
    ctx.note(
        NoteKind::Approximated,
        Some(at),
        "podinit takes one env_file: the values of these files are written into env (read now, not at start)",
    );
    s.file_env = Some((values, at.clone()));
}

/// `healthcheck`.
fn health(v: &Node, at: &Place, s: &mut Service, ctx: &mut Ctx) {
    let Some(map) = v.as_map() else {
        ctx.error(Some(at), format!("expected a mapping, found {}", v.kind()));
        return;
    };
    let mut h = Health {
        command: Value::Str(String::new()),
        interval: HEALTH_INTERVAL,
        timeout: HEALTH_TIMEOUT,
        retries: HEALTH_RETRIES,
        start_period: Duration::ZERO,
        start_interval: HEALTH_START_INTERVAL,
        at: at.clone(),
    };
    let (mut test, mut disabled) = (None, false);
    for (k, val) in map {
        let kat = place(val.at, format!("{}.{}", at.key, k.name));
        match k.name.as_str() {
            "test" => test = Some((val, kat)),
            "disable" => match val.as_bool() {
                Some(b) => disabled = b,
                None => ctx.error(Some(&kat), format!("expected true or false, found {}", val.kind())),
            },
            "interval" => h.interval = duration(val, &kat, ctx).unwrap_or(h.interval),
            "timeout" => h.timeout = duration(val, &kat, ctx).unwrap_or(h.timeout),
            "start_period" => h.start_period = duration(val, &kat, ctx).unwrap_or(h.start_period),
            "start_interval" => h.start_interval = duration(val, &kat, ctx).unwrap_or(h.start_interval),
            "retries" => match val.as_int() {
                Some(n) if n >= 1 => h.retries = n,
                _ => ctx.error(Some(&kat), format!("retries: expected a count of at least 1, found {}", val.kind())),
            },
            other if other.starts_with("x-") => {}
            other => ctx.error(Some(&place(k.at, kat.key.clone())), format!("unknown healthcheck key {other:?} (test, interval, timeout, retries, start_period, start_interval, disable)")),
        }
    }
    if disabled {
        return;
    }
    let Some((test, tat)) = test else {
        s.health_from_image = true;
        ctx.note(
            NoteKind::Dropped,
            Some(at),
            "a healthcheck without test uses the image's HEALTHCHECK, which is not known here",
        );
        return;
    };
    h.at = tat.clone();
    let command = if let Some(items) = test.as_seq() {
        let words: Option<Vec<String>> = items.iter().map(|i| string(i, &tat, ctx)).collect();
        let Some(words) = words else { return };
        match words.split_first() {
            Some((first, [])) if first == "NONE" => return,
            Some((first, rest)) if first == "CMD" && !rest.is_empty() => Value::argv(rest),
            Some((first, [line])) if first == "CMD-SHELL" => Value::Str(line.clone()),
            Some((first, rest)) if first == "CMD-SHELL" && !rest.is_empty() => Value::Str(rest.join(" ")),
            None => {
                s.health_from_image = true;
                ctx.note(
                    NoteKind::Dropped,
                    Some(&tat),
                    "an empty test uses the image's HEALTHCHECK, which is not known here",
                );
                return;
            }
            _ => {
                ctx.error(Some(&tat), "a healthcheck test list starts with CMD, CMD-SHELL or NONE");
                return;
            }
        }
    } else {
        match string(test, &tat, ctx) {
            Some(line) if line == "NONE" => return,
            Some(line) => Value::Str(line),
            None => return,
        }
    };
    h.command = command;
    s.health = Some(h);
}

/// `depends_on`: a list of names (each `service_started`), or a mapping of
/// names to `{condition, required, restart}`.
fn depends_on(v: &Node, at: &Place, ctx: &mut Ctx) -> Vec<Dep> {
    let mut deps = Vec::new();
    if let Some(items) = v.as_seq() {
        for item in items {
            let item_at = place(item.at, at.key.clone());
            if let Some(target) = string(item, &item_at, ctx) {
                deps.push(Dep { target, condition: Condition::Started, required: true, at: item_at });
            }
        }
        return deps;
    }
    let Some(entries) = v.as_map() else {
        ctx.error(Some(at), format!("expected a list or a mapping of services, found {}", v.kind()));
        return deps;
    };
    for (k, val) in entries {
        let dat = place(k.at, format!("{}.{}", at.key, k.name));
        let mut dep =
            Dep { target: k.name.clone(), condition: Condition::Started, required: true, at: dat.clone() };
        for (ok, ov) in val.as_map().unwrap_or_default() {
            let oat = place(ov.at, format!("{}.{}", dat.key, ok.name));
            match ok.name.as_str() {
                "condition" => match ov.as_str() {
                    Some("service_started") => dep.condition = Condition::Started,
                    Some("service_healthy") => dep.condition = Condition::Healthy,
                    Some("service_completed_successfully") => dep.condition = Condition::Completed,
                    _ => ctx.error(Some(&oat), "condition: expected service_started, service_healthy or service_completed_successfully"),
                },
                "required" => match ov.as_bool() {
                    Some(b) => dep.required = b,
                    None => ctx.error(Some(&oat), format!("expected true or false, found {}", ov.kind())),
                },
                "restart" => {
                    if ov.as_bool() == Some(true) {
                        ctx.note(NoteKind::Dropped, Some(&oat), format!("restart: true (restart this service when {} restarts): podinit restarts one entry at a time", k.name));
                    }
                }
                other => ctx.error(Some(&place(ok.at, oat.key.clone())), format!("unknown depends_on key {other:?} (condition, required, restart)")),
            }
        }
        if !val.is_null() && val.as_map().is_none() {
            ctx.error(
                Some(&dat),
                format!("expected a mapping (condition, required, restart), found {}", val.kind()),
            );
        }
        deps.push(dep);
    }
    deps
}

/// A `post_start` or `pre_stop` list of `{command, user, privileged,
/// working_dir, environment}` as podinit's one exec hook.
fn hook(v: &Node, at: &Place, ctx: &mut Ctx) -> Option<Table> {
    let items = v.as_seq().map(<[Node]>::to_vec).unwrap_or_else(|| vec![v.clone()]);
    let mut out = None;
    for (i, item) in items.iter().enumerate() {
        let iat = place(item.at, format!("{}[{i}]", at.key));
        if i > 0 {
            ctx.note(
                NoteKind::Dropped,
                Some(&iat),
                "podinit runs one hook of each kind: only the first is kept",
            );
            continue;
        }
        let Some(m) = item.as_map() else {
            ctx.error(Some(&iat), format!("a hook is a mapping with a command, found {}", item.kind()));
            continue;
        };
        for (k, val) in m {
            let kat = place(val.at, format!("{}.{}", iat.key, k.name));
            match k.name.as_str() {
                "command" => {
                    if let Some(w) = words(val, &kat, ctx) {
                        let mut exec = Table::default();
                        exec.set("command", Value::argv(&w), Some(&kat));
                        let mut t = Table::default();
                        t.set("exec", exec, Some(&kat));
                        out = Some(t);
                    }
                }
                "user" | "privileged" | "working_dir" | "environment" => ctx.note(
                    NoteKind::Dropped,
                    Some(&kat),
                    format!("a hook's own {}: podinit runs hooks with the entry's user, directory and environment", k.name),
                ),
                other => ctx.error(Some(&place(k.at, kat.key.clone())), format!("unknown hook key {other:?} (command, user, privileged, working_dir, environment)")),
            }
        }
    }
    out
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
