//! Probes, lifecycle hooks and restart rules of a container.

use std::collections::BTreeMap;

use super::fields::*;
use super::{join, Reader};
use crate::config::locate::Place;
use crate::import::draft::{Process, Table, Value};
use crate::import::yaml::Node;
use crate::import::{place, NoteKind};

impl Reader<'_, '_> {
    /// The container's named ports (`ports[].name` to `containerPort`).
    pub(super) fn ports(&mut self, c: &Node, path: &str) -> BTreeMap<String, i64> {
        let mut out = BTreeMap::new();
        let Some(list) = c.get("ports") else { return out };
        for (i, port) in list.as_seq().unwrap_or_default().iter().enumerate() {
            let p_path = format!("{}[{i}]", join(path, "ports"));
            let fields: &[(&str, Row)] = &[
                ("name", Read),
                ("containerPort", Read),
                ("protocol", Ignore(NETWORK)),
                ("hostPort", Ignore(NETWORK)),
                ("hostIP", Ignore(NETWORK)),
            ];
            // The list itself is ignored (the network is the container's);
            // its names serve probes and hooks.
            if self.fields(port, &p_path, fields) {
                if let (Some(name), Some(number)) = (
                    port.get("name").and_then(Node::as_str),
                    port.get("containerPort").and_then(Node::as_int),
                ) {
                    if out.insert(name.to_owned(), number).is_some() {
                        let at = place(port.at, join(&p_path, "name"));
                        self.ctx.error(Some(&at), format!("port name {name:?} is used twice in this container (the Kubernetes API refuses it)"));
                    }
                }
            }
        }
        self.ctx.note(
            NoteKind::Ignored,
            Some(&place(list.at, join(path, "ports"))),
            "ports: the network is the container's (their names serve the probes and hooks)",
        );
        out
    }

    /// A probe or hook port: a number, or a name from `ports`.
    pub(super) fn port(&mut self, n: &Node, at: &Place, ports: &BTreeMap<String, i64>) -> Option<i64> {
        if let Some(number) = n.as_int() {
            return Some(number);
        }
        let name = self.string(n, at)?;
        match ports.get(&name) {
            Some(&number) => Some(number),
            None => {
                self.ctx.error(Some(at), format!("no port named {name:?} in this container's `ports`"));
                None
            }
        }
    }

    /// `httpGet` of a probe or hook.
    pub(super) fn http_get(&mut self, h: &Node, path: &str, ports: &BTreeMap<String, i64>) -> Option<Table> {
        if !self.fields(h, path, HTTP_GET) {
            return None;
        }
        let mut t = Table::default();
        let port = h.get("port").and_then(|n| self.port(n, &place(n.at, join(path, "port")), ports));
        let Some(port) = port else {
            if h.get("port").is_none() {
                self.ctx.error(Some(&place(h.at, path)), "httpGet needs a `port`");
            }
            return None;
        };
        let port_at = place(h.get("port").map_or(h.at, |n| n.at), join(path, "port"));
        t.set("port", port, Some(&port_at));
        if let Some(p) = h.get("path").and_then(Node::as_str) {
            t.set("path", p, None);
        }
        if let Some(host) = h.get("host").and_then(Node::as_str) {
            t.set("host", host, None);
        }
        if let Some(s) = h.get("scheme") {
            let at = place(s.at, join(path, "scheme"));
            match s.as_str() {
                Some("HTTP") => {}
                Some("HTTPS") => {
                    t.set("scheme", "https", Some(&at));
                }
                _ => self.ctx.error(Some(&at), "scheme must be HTTP or HTTPS"),
            }
        }
        if let Some(headers) = h.get("httpHeaders") {
            let mut ht = Table::default();
            for (i, hd) in headers.as_seq().unwrap_or_default().iter().enumerate() {
                let h_path = format!("{}[{i}]", join(path, "httpHeaders"));
                if self.fields(hd, &h_path, &[("name", Read), ("value", Read)]) {
                    let name = hd.get("name").and_then(Node::as_str).unwrap_or_default();
                    let value = hd.get("value").and_then(Node::as_str).unwrap_or_default();
                    if ht.get(name).is_some() {
                        self.ctx.note(NoteKind::Approximated, Some(&place(hd.at, &h_path)), format!("header {name:?} is given twice: the kubelet sends both, podinit sends the last"));
                    }
                    ht.set(name, value, Some(&place(hd.at, &h_path)));
                }
            }
            t.set("headers", ht, None);
        }
        Some(t)
    }

    /// A probe: its handler and Kubernetes' timing fields (whose defaults are
    /// podinit's too: period 10 s, timeout 1 s, failure threshold 3).
    pub(super) fn probe(&mut self, probe: &Node, path: &str, ports: &BTreeMap<String, i64>) -> Option<Table> {
        if !self.fields(probe, path, PROBE) {
            return None;
        }
        let mut t = Table::default();
        if let Some(e) = probe.get("exec") {
            let e_path = join(path, "exec");
            self.fields(e, &e_path, &[("command", Read)]);
            let at = place(e.at, join(&e_path, "command"));
            let argv = e.get("command").and_then(|c| self.strings(c, &at)).unwrap_or_default();
            let mut exec = Table::default();
            exec.set("command", Value::argv(&argv), Some(&at));
            t.set("exec", exec, Some(&at));
        }
        if let Some(h) = probe.get("httpGet") {
            if let Some(http) = self.http_get(h, &join(path, "httpGet"), ports) {
                t.set("http_get", http, Some(&place(h.at, join(path, "httpGet"))));
            }
        }
        if let Some(s) = probe.get("tcpSocket") {
            let s_path = join(path, "tcpSocket");
            if self.fields(s, &s_path, &[("port", Read), ("host", Read)]) {
                let mut tcp = Table::default();
                if let Some(port) =
                    s.get("port").and_then(|n| self.port(n, &place(n.at, join(&s_path, "port")), ports))
                {
                    tcp.set("port", port, Some(&place(s.at, &s_path)));
                }
                if let Some(host) = s.get("host").and_then(Node::as_str) {
                    tcp.set("host", host, None);
                }
                t.set("tcp_socket", tcp, Some(&place(s.at, &s_path)));
            }
        }
        if let Some(g) = probe.get("grpc") {
            let g_path = join(path, "grpc");
            if self.fields(g, &g_path, &[("port", Read), ("service", Read)]) {
                let mut grpc = Table::default();
                if let Some(port) = g.get("port").and_then(Node::as_int) {
                    grpc.set("port", port, Some(&place(g.at, &g_path)));
                } else {
                    self.ctx.error(
                        Some(&place(g.at, &g_path)),
                        "grpc needs a numeric `port` (Kubernetes takes no port name here)",
                    );
                }
                if let Some(service) = g.get("service").and_then(Node::as_str) {
                    grpc.set("service", service, None);
                }
                t.set("grpc", grpc, Some(&place(g.at, &g_path)));
            }
        }
        for (key, toml_key) in [
            ("initialDelaySeconds", "initial_delay"),
            ("periodSeconds", "period"),
            ("timeoutSeconds", "timeout"),
            ("terminationGracePeriodSeconds", "termination_grace_period"),
        ] {
            if let Some((s, at)) = self.seconds(probe, path, key) {
                t.set(toml_key, Value::Int(s), Some(&at));
            }
        }
        for (key, toml_key) in
            [("successThreshold", "success_threshold"), ("failureThreshold", "failure_threshold")]
        {
            if let Some((n, at)) = self.seconds(probe, path, key) {
                t.set(toml_key, Value::Int(n), Some(&at));
            }
        }
        Some(t)
    }

    /// `lifecycle`: postStart, preStop (exec, httpGet, sleep) and stopSignal.
    pub(super) fn lifecycle(&mut self, l: &Node, path: &str, ports: &BTreeMap<String, i64>, p: &mut Process) {
        if !self.fields(l, path, LIFECYCLE) {
            return;
        }
        for (key, toml_key) in [("postStart", "post_start"), ("preStop", "pre_stop")] {
            let Some(h) = l.get(key) else { continue };
            let h_path = join(path, key);
            if !self.fields(h, &h_path, HANDLER) {
                continue;
            }
            let at = place(h.at, &h_path);
            let mut t = Table::default();
            if let Some(e) = h.get("exec") {
                let e_path = join(&h_path, "exec");
                self.fields(e, &e_path, &[("command", Read)]);
                let c_at = place(e.at, join(&e_path, "command"));
                let argv = e.get("command").and_then(|c| self.strings(c, &c_at)).unwrap_or_default();
                let mut exec = Table::default();
                exec.set("command", Value::argv(&argv), Some(&c_at));
                t.set("exec", exec, Some(&c_at));
            }
            if let Some(g) = h.get("httpGet") {
                if let Some(http) = self.http_get(g, &join(&h_path, "httpGet"), ports) {
                    t.set("http_get", http, Some(&place(g.at, join(&h_path, "httpGet"))));
                }
            }
            if let Some(s) = h.get("sleep") {
                let s_path = join(&h_path, "sleep");
                if self.fields(s, &s_path, &[("seconds", Read)]) {
                    if let Some((secs, s_at)) = self.seconds(s, &s_path, "seconds") {
                        t.set("sleep", Value::Int(secs), Some(&s_at));
                    } else if s.get("seconds").is_none() {
                        self.ctx.error(Some(&place(s.at, &s_path)), "sleep needs `seconds`");
                    }
                }
            }
            if let Some(s) = h.get("tcpSocket") {
                self.ctx.error(Some(&place(s.at, join(&h_path, "tcpSocket"))), "tcpSocket is not a lifecycle hook Kubernetes runs (the API keeps it for compatibility only); use exec, httpGet or sleep");
            }
            p.table.set(toml_key, t, Some(&at));
        }
        if let Some(s) = l.get("stopSignal") {
            let at = place(s.at, join(path, "stopSignal"));
            if let Some(signal) = self.string(s, &at) {
                p.table.set("stop_signal", signal, Some(&at));
            }
        }
    }

    /// `restartPolicyRules` (KEP-5307, container restart rules; the
    /// `RestartAllContainers` action, KEP-5532).
    pub(super) fn restart_rules(&mut self, r: &Node, path: &str, p: &mut Process) {
        let Some(items) = r.as_seq() else {
            self.ctx.error(Some(&place(r.at, path)), format!("expected a list, found {}", r.kind()));
            return;
        };
        let mut rules = Vec::new();
        for (i, rule) in items.iter().enumerate() {
            let r_path = format!("{path}[{i}]");
            if !self.fields(rule, &r_path, &[("action", Read), ("exitCodes", Read)]) {
                continue;
            }
            let action = match rule.get("action").and_then(Node::as_str) {
                Some("Restart") => "restart",
                Some("RestartAllContainers") => "restart_all",
                other => {
                    self.ctx.error(
                        Some(&place(rule.at, join(&r_path, "action"))),
                        format!(
                            "action {:?}: expected Restart or RestartAllContainers",
                            other.unwrap_or_default()
                        ),
                    );
                    continue;
                }
            };
            let Some(codes) = rule.get("exitCodes") else {
                self.ctx.error(Some(&place(rule.at, &r_path)), "a restart rule needs `exitCodes`");
                continue;
            };
            let c_path = join(&r_path, "exitCodes");
            self.fields(codes, &c_path, &[("operator", Read), ("values", Read)]);
            let operator = match codes.get("operator").and_then(Node::as_str) {
                Some("In") => "in",
                Some("NotIn") => "not_in",
                other => {
                    self.ctx.error(
                        Some(&place(codes.at, join(&c_path, "operator"))),
                        format!("operator {:?}: expected In or NotIn", other.unwrap_or_default()),
                    );
                    continue;
                }
            };
            let values: Vec<Value> = codes
                .get("values")
                .and_then(Node::as_seq)
                .unwrap_or_default()
                .iter()
                .filter_map(Node::as_int)
                .map(Value::Int)
                .collect();
            let mut exit_codes = Table::default();
            exit_codes.set("operator", operator, None);
            exit_codes.set("values", Value::List(values), None);
            let mut t = Table::default();
            t.set("action", action, None);
            t.set("exit_codes", exit_codes, None);
            rules.push(Value::Table(t));
        }
        p.table.set("restart_rules", Value::List(rules), Some(&place(r.at, path)));
    }
}
