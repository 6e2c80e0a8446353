//! `readiness_probe` and `liveness_probe` of a process (f1bonacc1.github.io/
//! process-compose, "Health Checks") as podinit's probe tables: `exec`
//! and `http_get`, their timings and thresholds, each key read, dropped or
//! refused. It builds the probe's TOML only; it never runs a probe, and
//! never gives a probe a setting process-compose would not apply.

use super::{int, map_of, Render};
use crate::config::locate::Place;
use crate::import::draft::{Table, Value};
use crate::import::text as string;
use crate::import::yaml::Node;
use crate::import::{place, Ctx, NoteKind};

/// A `readiness_probe` or `liveness_probe` as podinit's probe table
/// (process-compose "Health Checks": its fields and defaults are
/// Kubernetes', as podinit's).
pub(super) fn probe(v: &Node, at: &Place, r: &Render, liveness: bool, ctx: &mut Ctx) -> Option<Table> {
    let map = map_of(v, at, ctx)?;
    let mut t = Table::default();
    for (k, v) in map {
        let at = place(k.at, format!("{}.{}", at.key, k.name));
        match k.name.as_str() {
            "exec" => {
                let mut exec = Table::default();
                for (ek, ev) in map_of(v, &at, ctx).unwrap_or_default() {
                    let eat = place(ek.at, format!("{}.{}", at.key, ek.name));
                    match ek.name.as_str() {
                        "command" => {
                            if let Some(s) = string(ev, &eat, ctx).and_then(|s| r.command(&s, &eat, ctx)) {
                                exec.set("command", s, Some(&eat));
                            }
                        }
                        "working_dir" => ctx.note(
                            NoteKind::Dropped,
                            Some(&eat),
                            "podinit runs a probe in its entry's working_dir",
                        ),
                        other => ctx.error(Some(&eat), format!("unknown key {other:?} (a typo?)")),
                    }
                }
                t.set("exec", exec, Some(&at));
            }
            "http_get" => {
                let mut http = Table::default();
                for (hk, hv) in map_of(v, &at, ctx).unwrap_or_default() {
                    let hat = place(hk.at, format!("{}.{}", at.key, hk.name));
                    match hk.name.as_str() {
                        "host" | "path" => {
                            if let Some(s) = string(hv, &hat, ctx).and_then(|s| r.render(&s, &hat, ctx)) {
                                http.set(&hk.name, s, Some(&hat));
                            }
                        }
                        "scheme" => {
                            if let Some(s) = string(hv, &hat, ctx).and_then(|s| r.render(&s, &hat, ctx)) {
                                http.set("scheme", s.to_ascii_lowercase(), Some(&hat));
                            }
                        }
                        "port" => {
                            let raw = hv.as_str().map(str::to_owned).unwrap_or_default();
                            if let Some(s) = r.render(&raw, &hat, ctx) {
                                match s.parse::<i64>() {
                                    Ok(n) => {
                                        http.set("port", n, Some(&hat));
                                    }
                                    // podinit reads `${VAR}` in a port itself, when
                                    // it reads the file, as process-compose does.
                                    Err(_) if s.starts_with("${") => {
                                        http.set("port", s, Some(&hat));
                                    }
                                    Err(_)
                                        if s.starts_with('$')
                                            && s[1..]
                                                .bytes()
                                                .all(|b| b.is_ascii_alphanumeric() || b == b'_') =>
                                    {
                                        http.set("port", format!("${{{}}}", &s[1..]), Some(&hat));
                                    }
                                    Err(_) => {
                                        ctx.error(Some(&hat), format!("expected a port number, found {s:?}"))
                                    }
                                }
                            }
                        }
                        "headers" => {
                            let mut h = Table::default();
                            for (name, value) in map_of(hv, &hat, ctx).unwrap_or_default() {
                                if let Some(s) = value.as_str() {
                                    h.set(
                                        &name.name,
                                        s,
                                        Some(&place(name.at, format!("{}.{}", hat.key, name.name))),
                                    );
                                }
                            }
                            http.set("headers", h, Some(&hat));
                        }
                        "status_code" => {
                            if hv.as_int() != Some(200) {
                                ctx.note(
                                    NoteKind::Approximated,
                                    Some(&hat),
                                    "podinit passes an HTTP probe on any status from 200 to 399",
                                );
                            }
                        }
                        "num_port" => {}
                        other => ctx.error(Some(&hat), format!("unknown key {other:?} (a typo?)")),
                    }
                }
                t.set("http_get", http, Some(&at));
            }
            "initial_delay_seconds" | "period_seconds" | "timeout_seconds" => {
                let min = i64::from(k.name != "initial_delay_seconds");
                if let Some(n) = int(v, &at, 0, ctx) {
                    // process-compose takes a value below the minimum as its default.
                    if n >= min {
                        let key = k.name.trim_end_matches("_seconds");
                        t.set(
                            key,
                            Value::duration(std::time::Duration::from_secs(n.unsigned_abs())),
                            Some(&at),
                        );
                    }
                }
            }
            "failure_threshold" => {
                if let Some(n) = int(v, &at, 0, ctx).filter(|n| *n >= 1) {
                    t.set("failure_threshold", n, Some(&at));
                }
            }
            "success_threshold" => {
                if int(v, &at, 0, ctx).is_some_and(|n| n > 1) {
                    let why = if liveness {
                        "a liveness probe passes on one success"
                    } else {
                        "process-compose does not apply it (its docs say so); podinit leaves it at 1 as well"
                    };
                    ctx.note(NoteKind::Dropped, Some(&at), why);
                }
            }
            other => ctx.error(Some(&at), format!("unknown key {other:?} (a typo?)")),
        }
    }
    if t.get("exec").is_none() && t.get("http_get").is_none() {
        ctx.error(Some(at), "a probe needs `exec` or `http_get`");
        return None;
    }
    Some(t)
}
