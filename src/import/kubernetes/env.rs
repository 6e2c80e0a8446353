//! A container's environment as the kubelet builds it: ConfigMaps and
//! Secrets of the same file, `envFrom`, `env` with `valueFrom`, and `$(VAR)`.

use std::collections::BTreeMap;

use super::fields::{Read, Row};
use super::{join, Env, Reader};
use crate::config::locate::Place;
use crate::import::yaml::Node;
use crate::import::{place, NoteKind};

impl Reader<'_, '_> {
    /// A ConfigMap's `data` or a Secret's `data` (base64) and `stringData`.
    pub(super) fn data(&mut self, doc: &Node, kind: &str, name: &str) {
        let mut values = BTreeMap::new();
        let decode = kind == "Secret";
        for (key, encoded) in [("data", decode), ("stringData", false)] {
            let Some(data) = doc.get(key) else { continue };
            let Some(map) = data.as_map() else {
                self.ctx
                    .error(Some(&place(data.at, key)), format!("expected a mapping, found {}", data.kind()));
                continue;
            };
            for (k, v) in map {
                let at = place(v.at, format!("{key}.{}", k.name));
                let Some(text) = self.string(v, &at) else { continue };
                let value = if encoded {
                    match base64(&text) {
                        Some(bytes) => match String::from_utf8(bytes) {
                            Ok(s) => s,
                            Err(_) => {
                                // Binary data is fine for a volume; only a
                                // variable that reads it is an error.
                                let why =
                                    "is not UTF-8 text once decoded; it cannot be an environment variable";
                                self.unusable.insert((name.to_owned(), k.name.clone()), (at, why));
                                continue;
                            }
                        },
                        None => {
                            let why = "is not base64 (a Secret's `data` is; `stringData` takes plain text)";
                            self.unusable.insert((name.to_owned(), k.name.clone()), (at, why));
                            continue;
                        }
                    }
                } else {
                    text
                };
                values.insert(k.name.clone(), value);
            }
        }
        let store = if kind == "Secret" { &mut self.secrets } else { &mut self.config_maps };
        store.insert(name.to_owned(), values);
    }

    /// `envFrom` then `env`, as the kubelet builds the environment; `$(VAR)`
    /// in a value expands from the variables before it.
    pub(super) fn env(&mut self, c: &Node, path: &str) -> Env {
        let mut env: Env = Vec::new();
        if let Some(from) = c.get("envFrom") {
            let from_path = join(path, "envFrom");
            for (i, source) in from.as_seq().unwrap_or_default().iter().enumerate() {
                let s_path = format!("{from_path}[{i}]");
                if !self.fields(
                    source,
                    &s_path,
                    &[("configMapRef", Read), ("secretRef", Read), ("prefix", Read)],
                ) {
                    continue;
                }
                let prefix = source.get("prefix").and_then(Node::as_str).unwrap_or_default().to_owned();
                for (key, secret) in [("configMapRef", false), ("secretRef", true)] {
                    let Some(r) = source.get(key) else { continue };
                    let r_path = join(&s_path, key);
                    self.fields(r, &r_path, &[("name", Read), ("optional", Read)]);
                    let at = place(r.at, &r_path);
                    let name = r.get("name").and_then(Node::as_str).unwrap_or_default();
                    let optional = r.get("optional").and_then(Node::as_bool).unwrap_or(false);
                    let store = if secret { &self.secrets } else { &self.config_maps };
                    match store.get(name) {
                        Some(values) => {
                            for (k, v) in values.clone() {
                                set(&mut env, format!("{prefix}{k}"), v, at.clone());
                            }
                            let bad: Vec<_> = self.unusable.iter().filter(|((n, _), _)| n == name).map(|((_, k), (p, why))| (k.clone(), p.clone(), *why)).collect();
                            for (k, value_at, why) in bad {
                                self.ctx.error(Some(&value_at), format!("Secret {name:?}: the value of {k:?}, which {} reads, {why}", at.key));
                            }
                        }
                        None if optional => {}
                        None => self.ctx.error(Some(&at), format!("{} {name:?} is not in this file (give it as another document, or mark the reference optional)", if secret { "Secret" } else { "ConfigMap" })),
                    }
                }
            }
        }
        let Some(list) = c.get("env") else { return env };
        let list_path = join(path, "env");
        let Some(items) = list.as_seq() else {
            self.ctx
                .error(Some(&place(list.at, &list_path)), format!("expected a list, found {}", list.kind()));
            return env;
        };
        for (i, item) in items.iter().enumerate() {
            let i_path = format!("{list_path}[{i}]");
            if !self.fields(item, &i_path, &[("name", Read), ("value", Read), ("valueFrom", Read)]) {
                continue;
            }
            let Some(name) =
                item.get("name").and_then(|n| self.string(n, &place(n.at, join(&i_path, "name"))))
            else {
                self.ctx.error(Some(&place(item.at, &i_path)), "an env entry needs a `name`");
                continue;
            };
            if let (Some(_), Some(from)) = (item.get("value"), item.get("valueFrom")) {
                self.ctx.error(
                    Some(&place(from.at, join(&i_path, "valueFrom"))),
                    format!(
                        "env {name}: value and valueFrom together (the Kubernetes API takes one of them)"
                    ),
                );
                continue;
            }
            if let Some(v) = item.get("value") {
                let at = place(v.at, join(&i_path, "value"));
                if let Some(value) = self.string(v, &at) {
                    let lookup =
                        |var: &str| env.iter().rev().find(|(k, _, _)| k == var).map(|(_, v, _)| v.clone());
                    let value = expand(&value, &lookup);
                    set(&mut env, name, value, at);
                }
            } else if let Some(from) = item.get("valueFrom") {
                let f_path = join(&i_path, "valueFrom");
                if let Some(value) = self.value_from(from, &f_path, &name) {
                    set(&mut env, name, value, place(from.at, &f_path));
                }
            } else {
                set(&mut env, name, String::new(), place(item.at, &i_path));
            }
        }
        env
    }

    /// `valueFrom`: a ConfigMap or Secret key of this file, the pod's own
    /// metadata, or an init's env file; anything that needs a cluster is an
    /// error.
    pub(super) fn value_from(&mut self, from: &Node, path: &str, var: &str) -> Option<String> {
        let table: &[(&str, Row)] = &[
            ("configMapKeyRef", Read),
            ("secretKeyRef", Read),
            ("fieldRef", Read),
            ("resourceFieldRef", Read),
            ("fileKeyRef", Read),
        ];
        if !self.fields(from, path, table) {
            return None;
        }
        for (key, secret) in [("configMapKeyRef", false), ("secretKeyRef", true)] {
            let Some(r) = from.get(key) else { continue };
            let r_path = join(path, key);
            self.fields(r, &r_path, &[("name", Read), ("key", Read), ("optional", Read)]);
            let at = place(r.at, &r_path);
            let name = r.get("name").and_then(Node::as_str).unwrap_or_default();
            let k = r.get("key").and_then(Node::as_str).unwrap_or_default();
            let optional = r.get("optional").and_then(Node::as_bool).unwrap_or(false);
            let what = if secret { "Secret" } else { "ConfigMap" };
            let store = if secret { &self.secrets } else { &self.config_maps };
            return match store.get(name).map(|values| values.get(k)) {
                Some(Some(v)) => Some(v.clone()),
                _ if optional => None,
                Some(None) => {
                    match self.unusable.get(&(name.to_owned(), k.to_owned())).cloned() {
                        Some((value_at, why)) => self.ctx.error(
                            Some(&value_at),
                            format!("{what} {name:?}: the value of {k:?}, which {}, {why}", at.key),
                        ),
                        None => self.ctx.error(Some(&at), format!("{what} {name:?} has no key {k:?}")),
                    }
                    None
                }
                None => {
                    self.ctx.error(Some(&at), format!("{what} {name:?} is not in this file (give it as another document, or mark the reference optional)"));
                    None
                }
            };
        }
        if let Some(f) = from.get("fieldRef") {
            let f_path = join(path, "fieldRef");
            self.fields(f, &f_path, &[("fieldPath", Read), ("apiVersion", Read)]);
            let at = place(f.at, &f_path);
            let field = f.get("fieldPath").and_then(Node::as_str).unwrap_or_default();
            let item = |s: &str, prefix: &str| {
                s.strip_prefix(prefix).and_then(|r| r.strip_suffix("']")).map(str::to_owned)
            };
            return match field {
                "metadata.name" => Some(self.meta.name.clone()),
                "metadata.namespace" => Some(self.meta.namespace.clone()),
                f if f.starts_with("metadata.labels['") => item(f, "metadata.labels['")
                    .map(|k| self.meta.labels.get(&k).cloned().unwrap_or_default()),
                f if f.starts_with("metadata.annotations['") => item(f, "metadata.annotations['")
                    .map(|k| self.meta.annotations.get(&k).cloned().unwrap_or_default()),
                other => {
                    self.ctx.error(Some(&at), format!("fieldRef {other:?} needs a cluster (podinit resolves metadata.name, metadata.namespace, metadata.labels['...'] and metadata.annotations['...'] from the manifest)"));
                    None
                }
            };
        }
        if let Some(f) = from.get("fileKeyRef") {
            let f_path = join(path, "fileKeyRef");
            self.fields(
                f,
                &f_path,
                &[("volumeName", Read), ("path", Read), ("key", Read), ("optional", Read)],
            );
            let at = place(f.at, &f_path);
            let key = f.get("key").and_then(Node::as_str).unwrap_or_default();
            let file = f.get("path").and_then(Node::as_str).unwrap_or_default();
            if key != var {
                self.ctx.error(Some(&at), format!("fileKeyRef key {key:?} for variable {var:?}: podinit passes an init's env file on under the names it holds, so the variable must be named as its key"));
                return None;
            }
            self.ctx.note(NoteKind::Approximated, Some(&at), format!("{var} comes from the env file an init writes to $PODINIT_ENV_FILE (KEP-3721's env file, in the same KEY='value' format): the init must write it there, not to {file:?} on a volume"));
            return None;
        }
        if let Some(r) = from.get("resourceFieldRef") {
            self.ctx.error(Some(&place(r.at, join(path, "resourceFieldRef"))), "resourceFieldRef needs a cluster: the container's resources are set where the container runs");
            return None;
        }
        self.ctx.error(
            Some(&place(from.at, path)),
            "valueFrom needs one of configMapKeyRef, secretKeyRef, fieldRef, fileKeyRef",
        );
        None
    }
}

/// Sets `name` in `env`, replacing an earlier value (a later `env` entry
/// wins over `envFrom`, as in Kubernetes).
pub(super) fn set(env: &mut Env, name: String, value: String, at: Place) {
    env.retain(|(k, _, _)| *k != name);
    env.push((name, value, at));
}

/// Expands `$(VAR)` as the kubelet does (kubernetes.io "Define Dependent
/// Environment Variables"): a defined variable is replaced, `$$(VAR)` is the
/// literal `$(VAR)`, an unknown reference stays as written.
pub fn expand(s: &str, lookup: &dyn Fn(&str) -> Option<String>) -> String {
    let mut out = String::new();
    let mut rest = s;
    while let Some(i) = rest.find('$') {
        out.push_str(&rest[..i]);
        let after = &rest[i + 1..];
        if let Some(more) = after.strip_prefix('$') {
            out.push('$');
            rest = more;
        } else if let Some(body) = after.strip_prefix('(') {
            match body.find(')') {
                Some(end) => {
                    let var = &body[..end];
                    match lookup(var) {
                        Some(v) => out.push_str(&v),
                        None => {
                            out.push_str("$(");
                            out.push_str(var);
                            out.push(')');
                        }
                    }
                    rest = &body[end + 1..];
                }
                None => {
                    out.push_str("$(");
                    rest = body;
                }
            }
        } else {
            out.push('$');
            rest = after;
        }
    }
    out.push_str(rest);
    out
}

/// Standard base64 (RFC 4648, with or without padding, blanks ignored), as
/// a Secret's `data` holds it.
fn base64(s: &str) -> Option<Vec<u8>> {
    let mut out = Vec::new();
    let mut acc: u32 = 0;
    let mut bits = 0;
    for c in s.bytes().filter(|b| !b.is_ascii_whitespace()) {
        let v = match c {
            b'A'..=b'Z' => c - b'A',
            b'a'..=b'z' => c - b'a' + 26,
            b'0'..=b'9' => c - b'0' + 52,
            b'+' => 62,
            b'/' => 63,
            b'=' => break,
            _ => return None,
        };
        acc = (acc << 6) | u32::from(v);
        bits += 6;
        if bits >= 8 {
            bits -= 8;
            out.push((acc >> bits) as u8);
            acc &= (1 << bits) - 1;
        }
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    pub(super) fn references_expand_as_the_kubelet_expands_them() {
        let lookup = |v: &str| (v == "A").then(|| "1".to_owned());
        assert_eq!(expand("x$(A)y", &lookup), "x1y");
        assert_eq!(expand("$$(A)", &lookup), "$(A)");
        assert_eq!(expand("$(B) $A $(", &lookup), "$(B) $A $(");
        assert_eq!(expand("$$$(A)", &lookup), "$1");
    }

    #[test]
    pub(super) fn base64_decodes_secret_data() {
        assert_eq!(base64("aGVsbG8=").unwrap(), b"hello");
        assert_eq!(base64("aGVsbG8").unwrap(), b"hello");
        assert!(base64("a*b").is_none());
    }
}
