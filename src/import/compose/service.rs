//! One Compose service: its keys read into a `Service` (the mapping table,
//! one row per key, is `read_service`).

use super::*;
use crate::import::text as string;

/// Reads one service; the mapping of its keys to podinit is this function's
/// `match`, one row per key.
pub(super) fn read_service(raw: &str, at: Place, node: &Node, ctx: &mut Ctx) -> Option<Service> {
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

/// A list of strings (a single string is a list of one).
pub(super) fn strings(v: &Node, at: &Place, ctx: &mut Ctx) -> Option<Vec<String>> {
    match v.as_seq() {
        Some(items) => items.iter().map(|i| string(i, at, ctx)).collect(),
        None => string(v, at, ctx).map(|s| vec![s]),
    }
}

/// `command`/`entrypoint`: a list as it is, a string split into words.
pub(super) fn words(v: &Node, at: &Place, ctx: &mut Ctx) -> Option<Vec<String>> {
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
pub(super) fn duration(v: &Node, at: &Place, ctx: &mut Ctx) -> Option<Duration> {
    let text = string(v, at, ctx)?;
    match parse_duration(&text) {
        Some(d) => Some(d),
        None => {
            ctx.error(Some(at), format!("{text:?} is not a duration (like 10s, 1m30s, 500ms)"));
            None
        }
    }
}

pub(super) fn parse_duration(text: &str) -> Option<Duration> {
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
pub(super) fn environment_of(v: &Node, at: &Place, ctx: &mut Ctx) -> Option<Table> {
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
pub(super) fn env_files(v: &Node, at: &Place, s: &mut Service, ctx: &mut Ctx) {
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
pub(super) fn health(v: &Node, at: &Place, s: &mut Service, ctx: &mut Ctx) {
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
pub(super) fn depends_on(v: &Node, at: &Place, ctx: &mut Ctx) -> Vec<Dep> {
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
pub(super) fn hook(v: &Node, at: &Place, ctx: &mut Ctx) -> Option<Table> {
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
