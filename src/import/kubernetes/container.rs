//! One container of the pod template as a `[[process]]`: its role (an init
//! container with `restartPolicy: Always` is a sidecar, KEP-753), its
//! command and args with `$(VAR)` expanded, working directory, environment
//! (from `env`), probes and hooks (from `probes`), restart rules, and its
//! security context as `user` and `no_new_privileges`. It never guesses an
//! image's ENTRYPOINT: a container without `command` is written commented
//! out unless one is given.

use super::fields::*;
use super::{expand, join, Env, Reader, ANNOTATION};
use crate::config::locate::Place;
use crate::import::draft::{Process, Table, Value};
use crate::import::yaml::Node;
use crate::import::{place, NoteKind};

/// A security context's settings that podinit reads, each with its place.
#[derive(Default, Clone)]
pub(super) struct Security {
    user: Option<(i64, Place)>,
    group: Option<(i64, Place)>,
    non_root: Option<(bool, Place)>,
    no_new_privileges: Option<(bool, Place)>,
}

impl Reader<'_, '_> {
    /// A security context's user: `uid[:gid]`, or `None`; refuses what the
    /// kubelet refuses (`runAsNonRoot` with user 0).
    pub(super) fn security(&mut self, s: &Node, path: &str) -> Security {
        let mut out = Security::default();
        if !self.fields(s, path, SECURITY_CONTEXT) {
            return out;
        }
        out.user = self.seconds(s, path, "runAsUser");
        out.group = self.seconds(s, path, "runAsGroup");
        if let Some(n) = s.get("runAsNonRoot") {
            let at = place(n.at, join(path, "runAsNonRoot"));
            match n.as_bool() {
                Some(b) => out.non_root = Some((b, at)),
                None => self.ctx.error(Some(&at), format!("expected true or false, found {}", n.kind())),
            }
        }
        if let Some(n) = s.get("allowPrivilegeEscalation") {
            let at = place(n.at, join(path, "allowPrivilegeEscalation"));
            match n.as_bool() {
                Some(b) => out.no_new_privileges = Some((!b, at)),
                None => self.ctx.error(Some(&at), format!("expected true or false, found {}", n.kind())),
            }
        }
        out
    }

    /// One container as a `[[process]]`.
    pub(super) fn container(
        &mut self,
        c: &Node,
        path: &str,
        is_init: bool,
        pod_security: &Security,
    ) -> Option<Process> {
        if !self.fields(c, path, CONTAINER) {
            return None;
        }
        let at = place(c.at, path);
        let Some(raw_name) = c.get("name").and_then(|n| self.string(n, &place(n.at, join(path, "name"))))
        else {
            self.ctx.error(Some(&at), "a container needs a `name`");
            return None;
        };
        let name_at = place(c.get("name").map_or(c.at, |n| n.at), join(path, "name"));
        // Container names are DNS labels in Kubernetes too: a bad one is the
        // validator's error, at this place.
        let name = raw_name.clone();
        let sidecar = match c.get("restartPolicy") {
            Some(n) => {
                let rp_at = place(n.at, join(path, "restartPolicy"));
                match self.string(n, &rp_at).as_deref() {
                    Some("Always") if is_init => true,
                    Some(p @ ("Always" | "OnFailure" | "Never")) if !is_init => {
                        let _ = p;
                        false
                    }
                    Some(other) if is_init => {
                        self.ctx.error(Some(&rp_at), format!("restartPolicy {other:?} on an init container: only \"Always\" is allowed (it makes a sidecar; KEP-753)"));
                        false
                    }
                    Some(other) => {
                        self.ctx.error(
                            Some(&rp_at),
                            format!("restartPolicy {other:?}: expected Always, OnFailure or Never"),
                        );
                        false
                    }
                    None => false,
                }
            }
            None => false,
        };
        let role = match (is_init, sidecar) {
            (true, false) => "init",
            (true, true) => "sidecar",
            (false, _) => "main",
        };
        let mut p = Process::new(&name, role, Some(&name_at));
        if role == "sidecar" {
            p.table.set("hold_until", "started", None).note(
                "As the kubelet: the next container starts once this sidecar is started (startup probe passed), not ready.",
            );
        }
        if !is_init {
            if let Some(n) = c.get("restartPolicy") {
                let rp_at = place(n.at, join(path, "restartPolicy"));
                if let Some(policy) = n.as_str() {
                    p.table.set("restart_policy", policy, Some(&rp_at));
                }
            }
        }
        // The environment first: `$(VAR)` in the command refers to it.
        let env = self.env(c, path);
        self.command(c, path, &name, &raw_name, &env, &mut p);
        if let Some(w) = c.get("workingDir") {
            let w_at = place(w.at, join(path, "workingDir"));
            if let Some(dir) = self.string(w, &w_at) {
                p.table.set("working_dir", dir, Some(&w_at));
            }
        }
        if !env.is_empty() {
            let mut table = Table::default();
            for (k, v, at) in &env {
                table.set(k, v.as_str(), Some(at));
            }
            p.table.set("env", table, None);
        }
        let ports = self.ports(c, path);
        for (key, toml_key) in [
            ("startupProbe", "startup_probe"),
            ("readinessProbe", "readiness_probe"),
            ("livenessProbe", "liveness_probe"),
        ] {
            if let Some(probe) = c.get(key) {
                if let Some(t) = self.probe(probe, &join(path, key), &ports) {
                    p.table.set(toml_key, t, Some(&place(probe.at, join(path, key))));
                }
            }
        }
        if let Some(l) = c.get("lifecycle") {
            if role == "init" {
                self.ctx.error(Some(&place(l.at, join(path, "lifecycle"))), "lifecycle is not allowed on an init container without restartPolicy: Always (the Kubernetes API refuses it)");
            } else {
                self.lifecycle(l, &join(path, "lifecycle"), &ports, &mut p);
            }
        }
        if let (Some(r), None, false) = (c.get("restartPolicyRules"), c.get("restartPolicy"), is_init) {
            self.ctx.error(
                Some(&place(r.at, join(path, "restartPolicyRules"))),
                "restartPolicyRules needs the container's own restartPolicy (the Kubernetes API refuses them without it)",
            );
        }
        if let Some(r) = c.get("restartPolicyRules") {
            self.restart_rules(r, &join(path, "restartPolicyRules"), &mut p);
        }
        let own = c
            .get("securityContext")
            .map(|s| self.security(s, &join(path, "securityContext")))
            .unwrap_or_default();
        self.user(&own, pod_security, &mut p);
        let key = format!("podinit.io/process.{raw_name}");
        if let Some(extra) = self.meta.annotations.get(&key).cloned() {
            let at = self.annotation_at(&key).unwrap_or_else(|| name_at.clone());
            self.merge_annotation(&mut p.table, &extra, &at, &key);
        }
        Some(p)
    }

    /// The argv: `command` plus `args`, `$(VAR)` expanded, run without a
    /// shell; or, for a container without `command`, the command that
    /// `--command` or the annotation gives, else the entry written out
    /// commented (the image's ENTRYPOINT is not known here).
    fn command(&mut self, c: &Node, path: &str, name: &str, raw_name: &str, env: &Env, p: &mut Process) {
        let lookup = |var: &str| env.iter().rev().find(|(k, _, _)| k == var).map(|(_, v, _)| v.clone());
        let args = match c.get("args") {
            Some(a) => self.strings(a, &place(a.at, join(path, "args"))).unwrap_or_default(),
            None => Vec::new(),
        };
        let args: Vec<String> = args.iter().map(|a| expand(a, &lookup)).collect();
        if let Some(cmd) = c.get("command") {
            let at = place(cmd.at, join(path, "command"));
            if let Some(command) = self.strings(cmd, &at) {
                let argv: Vec<String> = command.iter().map(|a| expand(a, &lookup)).chain(args).collect();
                p.table.set("command", Value::argv(&argv), Some(&at));
            }
            return;
        }
        let annotation = format!("{ANNOTATION}command.{raw_name}");
        let given = self
            .ctx
            .command_for(name)
            .or_else(|| self.ctx.command_for(raw_name))
            .map(str::to_owned)
            .or_else(|| self.meta.annotations.get(&annotation).cloned());
        let at = place(c.at, path);
        match given {
            Some(cmd) if args.is_empty() => {
                p.table.set("command", cmd, Some(&at));
            }
            Some(cmd) => {
                // The given command stands for the image's ENTRYPOINT: the
                // container's args follow it, as on a cluster.
                let mut argv =
                    vec!["/bin/sh".to_owned(), "-c".to_owned(), format!("{cmd} \"$@\""), name.to_owned()];
                argv.extend(args);
                p.table.set("command", Value::argv(&argv), Some(&at)).note(
                    "The given command stands for the image's ENTRYPOINT; the container's args follow it.",
                );
            }
            None => {
                p.commented_out = true;
                let image = c.get("image").and_then(Node::as_str).unwrap_or("its image");
                p.comment.push(format!(
                    "container {raw_name:?} has no `command`: on a cluster it runs the ENTRYPOINT of {image}, which one image does not have for each container; give it with --command {name}=CMD or the annotation {annotation}"
                ));
                if !args.is_empty() {
                    p.table
                        .set("command", Value::argv(&args), Some(&at))
                        .note("args only: the ENTRYPOINT goes before them");
                }
                self.ctx.note(NoteKind::Dropped, Some(&at), format!("container {raw_name:?} has no `command` (its image {image} gives one on a cluster); written commented out: give one with --command {name}=CMD or the annotation {annotation}"));
            }
        }
    }

    /// `user` and `no_new_privileges` from the container's security context,
    /// falling back to the pod's (as Kubernetes does).
    fn user(&mut self, own: &Security, pod: &Security, p: &mut Process) {
        let user = own.user.clone().or_else(|| pod.user.clone());
        let group = own.group.clone().or_else(|| pod.group.clone());
        let non_root = own.non_root.clone().or_else(|| pod.non_root.clone());
        if let Some((uid, at)) = &user {
            let value = match &group {
                Some((gid, _)) => format!("{uid}:{gid}"),
                None => uid.to_string(),
            };
            p.table.set("user", value, Some(at));
        } else if let Some((gid, at)) = &group {
            self.ctx.note(NoteKind::Approximated, Some(at), format!("runAsGroup {gid} without runAsUser: podinit changes the group only with the user; the process keeps podinit's user and group"));
        }
        if let Some((true, at)) = &non_root {
            match &user {
                Some((0, user_at)) => self.ctx.error(Some(user_at), format!("container {:?}: runAsUser is 0 and runAsNonRoot is true: the kubelet refuses to start it", p.name())),
                Some(_) => {}
                None => self.ctx.note(NoteKind::Approximated, Some(at), "runAsNonRoot without runAsUser: the process runs as podinit's user; the kubelet would refuse to start it if that is root"),
            }
        }
        if let Some((no_new, at)) = own.no_new_privileges.clone() {
            p.table.set("no_new_privileges", no_new, Some(&at));
        }
    }
}
