//! Kubernetes manifests (docs/kubernetes.md): a Pod, or the pod template of
//! a Job, CronJob, Deployment, StatefulSet, DaemonSet or ReplicaSet, with the
//! ConfigMaps and Secrets it reads, as the pod podinit runs.
//!
//! The mapping lives in the field tables below (`POD_SPEC`, `CONTAINER`,
//! ...): each field of the Kubernetes API (core/v1 and batch/v1 as of
//! Kubernetes 1.34) is either read by this module or ignored with the reason.
//! A key that is in no table is not a Kubernetes field: it is refused, as
//! `kubectl apply --validate=strict` refuses it. Subtrees podinit never reads
//! (volumes, affinity, resources...) are ignored whole, their keys unchecked.
//!
//! Kubernetes' meaning wins over podinit's TOML defaults: the pod's
//! `restartPolicy` defaults to `Always`, the termination grace period to 30
//! s, and a sidecar holds the start sequence until it is started, not until
//! it is ready (kubernetes.io "Sidecar Containers"; KEP-753 "Proposal").
//!
//! This file picks the workload and reads the pod (metadata, `[pod]`
//! settings, podinit's annotations); `container` reads one container,
//! `env` its environment, `probes` its probes, hooks and restart rules,
//! `fields` holds the tables.

use std::collections::BTreeMap;

mod container;
mod env;
mod fields;
mod probes;

pub use env::expand;
use fields::*;

use super::draft::{Draft, Table, Value};
use super::yaml::{self, Node};
use super::{place, Ctx, NoteKind};
use crate::config::locate::Place;

/// The prefix of podinit's own annotations on a pod (docs/kubernetes.md,
/// "Annotations"): `podinit.io/command.<container>` gives a container
/// without `command` its command (run by `/bin/sh -c`, the container's
/// `args` after it); `podinit.io/process.<container>` and `podinit.io/pod`
/// carry settings Kubernetes has no field for, as a JSON object.
pub const ANNOTATION: &str = "podinit.io/";

/// One workload document.
struct Workload<'a> {
    kind: String,
    name: String,
    doc: &'a Node,
}

/// The pod's own metadata, for `fieldRef` and podinit's annotations.
#[derive(Default)]
struct Meta {
    name: String,
    namespace: String,
    labels: BTreeMap<String, String>,
    annotations: BTreeMap<String, String>,
    /// Where each annotation was written.
    annotation_places: BTreeMap<String, Place>,
}

/// A container's environment as Kubernetes builds it, in order (envFrom
/// first, then env), with where each value was written.
type Env = Vec<(String, String, Place)>;

struct Reader<'c, 'o> {
    ctx: &'c mut Ctx<'o>,
    config_maps: BTreeMap<String, BTreeMap<String, String>>,
    secrets: BTreeMap<String, BTreeMap<String, String>>,
    meta: Meta,
    /// Secret values that cannot be environment variables (binary, not
    /// base64), by (Secret, key): an error only for a variable that reads one.
    unusable: BTreeMap<(String, String), (Place, &'static str)>,
}

/// Reads a manifest into the pod it describes.
pub fn read(text: &str, ctx: &mut Ctx) -> Draft {
    let docs = match yaml::parse(text) {
        Ok(docs) => docs,
        Err(e) => {
            ctx.error(Some(&place(e.at, "")), format!("not YAML: {}", e.message));
            return Draft::default();
        }
    };
    // Kubernetes reads a null field as an absent one (Helm's output has many).
    let docs: Vec<Node> = docs.into_iter().map(without_nulls).collect();
    let mut r = Reader {
        ctx,
        config_maps: BTreeMap::new(),
        secrets: BTreeMap::new(),
        meta: Meta::default(),
        unusable: BTreeMap::new(),
    };
    if !r.ctx.opts.mains.is_empty() {
        r.ctx.error(None, "--main does not apply to a Kubernetes manifest: its `containers` are the mains, its `initContainers` with restartPolicy: Always the sidecars");
    }
    let mut workloads = Vec::new();
    let mut objects: Vec<&Node> = Vec::new();
    for doc in &docs {
        // `kind: List` (what `kubectl get -o yaml` prints) holds its objects in `items`.
        if doc.get("kind").and_then(Node::as_str) == Some("List") {
            objects.extend(doc.get("items").and_then(Node::as_seq).unwrap_or_default());
        } else if !doc.is_null() {
            objects.push(doc);
        }
    }
    for doc in objects {
        let Some(kind) = r.kind_of(doc) else { continue };
        let name = doc.get("metadata").and_then(|m| m.get("name")).and_then(Node::as_str).unwrap_or_default();
        match kind.as_str() {
            "ConfigMap" | "Secret" => r.data(doc, &kind, name),
            // A scheduled entry `podinit export` wrote as a CronJob beside its
            // pod: the pod is the workload (docs/kubernetes.md, "Export").
            "CronJob" if r.ctx.opts.pod.as_deref() != Some(name) && exported_schedule(doc).is_some() => {
                let of = exported_schedule(doc).unwrap_or_default();
                r.ctx.note(
                    NoteKind::Ignored,
                    Some(&place(doc.at, "kind")),
                    format!("CronJob {name:?}: the scheduled entry {of} as `podinit export` writes it; not read back (the pod is run without it)"),
                );
            }
            k if WORKLOADS.contains(&k) => workloads.push(Workload { kind, name: name.to_owned(), doc }),
            _ => r.ctx.note(
                NoteKind::Ignored,
                Some(&place(doc.at, "kind")),
                format!("{kind} {name:?}: not a pod, a ConfigMap or a Secret"),
            ),
        }
    }
    let chosen = match (&r.ctx.opts.pod, workloads.len()) {
        (_, 0) => {
            r.ctx
                .error(None, format!("no workload to run: give a document of kind {}", WORKLOADS.join(", ")));
            return Draft::default();
        }
        (Some(want), _) => match workloads.iter().find(|w| &w.name == want) {
            Some(w) if workloads.iter().filter(|o| &o.name == want).count() > 1 => {
                let kinds =
                    workloads.iter().filter(|o| &o.name == want).map(|o| o.kind.as_str()).collect::<Vec<_>>();
                r.ctx.error(
                    Some(&place(w.doc.at, "metadata.name")),
                    format!(
                        "more than one workload is named {want:?} ({}): give each its own name",
                        kinds.join(", ")
                    ),
                );
                return Draft::default();
            }
            Some(w) => w,
            None => {
                let names = workloads.iter().map(|w| format!("{} {:?}", w.kind, w.name)).collect::<Vec<_>>();
                r.ctx.error(None, format!("no workload named {want:?} (there are: {})", names.join(", ")));
                return Draft::default();
            }
        },
        (None, 1) => &workloads[0],
        (None, _) => {
            let names = workloads.iter().map(|w| format!("{} {:?}", w.kind, w.name)).collect::<Vec<_>>();
            r.ctx.error(
                Some(&place(workloads[1].doc.at, "kind")),
                format!(
                    "more than one workload: {}; pick one with --pod NAME (or PODINIT_POD)",
                    names.join(", ")
                ),
            );
            return Draft::default();
        }
    };
    r.workload(chosen)
}

/// The `<pod>/<entry>` of a CronJob `podinit export` wrote for a scheduled
/// entry (its annotation [`super::export::SCHEDULED_OF`]).
fn exported_schedule(doc: &Node) -> Option<&str> {
    doc.get("metadata")?.get("annotations")?.get(super::export::SCHEDULED_OF)?.as_str()
}

impl Reader<'_, '_> {
    /// The `kind` of a document, after checking its top-level keys.
    fn kind_of(&mut self, doc: &Node) -> Option<String> {
        if doc.as_map().is_none() {
            self.ctx
                .error(Some(&place(doc.at, "")), format!("a manifest is a mapping, found {}", doc.kind()));
            return None;
        }
        let Some(kind) = doc.get("kind").and_then(Node::as_str) else {
            self.ctx.error(Some(&place(doc.at, "kind")), "this document has no `kind`");
            return None;
        };
        if doc.get("apiVersion").and_then(Node::as_str).is_none() {
            self.ctx.error(Some(&place(doc.at, "apiVersion")), "this document has no `apiVersion`");
        }
        let fields: &[(&str, Row)] = match kind {
            "ConfigMap" => &[
                ("apiVersion", Read),
                ("kind", Read),
                ("metadata", Read),
                ("data", Read),
                ("binaryData", Ignore("binary values cannot be environment variables")),
                ("immutable", Ignore(CLUSTER)),
            ],
            "Secret" => &[
                ("apiVersion", Read),
                ("kind", Read),
                ("metadata", Read),
                ("data", Read),
                ("stringData", Read),
                ("type", Ignore(CLUSTER)),
                ("immutable", Ignore(CLUSTER)),
            ],
            k if WORKLOADS.contains(&k) => OBJECT,
            _ => return Some(kind.to_owned()),
        };
        // A ConfigMap's or Secret's keys are named after it: a file holds
        // several documents.
        let name = doc.get("metadata").and_then(|m| m.get("name")).and_then(Node::as_str).unwrap_or_default();
        let path = if WORKLOADS.contains(&kind) { String::new() } else { format!("{kind}({name})") };
        self.fields(doc, &path, fields);
        if let Some(m) = doc.get("metadata") {
            self.fields(m, "metadata", METADATA);
        }
        Some(kind.to_owned())
    }

    /// Checks the keys of mapping `node` (at key path `path`) against `table`:
    /// a key not in it is an error, an ignored one a note. False when `node`
    /// is not a mapping.
    fn fields(&mut self, node: &Node, path: &str, table: &[(&str, Row)]) -> bool {
        let Some(map) = node.as_map() else {
            if !node.is_null() {
                self.ctx
                    .error(Some(&place(node.at, path)), format!("expected a mapping, found {}", node.kind()));
            }
            return false;
        };
        for (key, _) in map {
            let at = place(key.at, join(path, &key.name));
            match table.iter().find(|(k, _)| *k == key.name) {
                Some((_, Read)) => {}
                Some((_, Ignore(why))) => self.ctx.note(NoteKind::Ignored, Some(&at), *why),
                None => {
                    let near = table.iter().find(|(k, _)| k.eq_ignore_ascii_case(&key.name));
                    let hint = near.map_or_else(String::new, |(k, _)| format!(" (did you mean {k:?}?)"));
                    self.ctx.error(
                        Some(&at),
                        format!(
                            "unknown field {:?}: the Kubernetes API has no such field here{hint}",
                            key.name
                        ),
                    );
                }
            }
        }
        true
    }

    /// The pod of `w`.
    fn workload(&mut self, w: &Workload) -> Draft {
        let mut draft = Draft::default();
        draft.comment.push(format!("Imported from the {} {:?} of {}.", w.kind, w.name, self.ctx.file));
        let spec = w.doc.get("spec");
        let mut deadline: Option<(i64, Place)> = None;
        // The pod template and its key path.
        let (template, path): (Option<&Node>, String) = match w.kind.as_str() {
            "Pod" => (Some(w.doc), String::new()),
            "Job" => {
                if let Some(s) = spec {
                    self.fields(s, "spec", JOB_SPEC);
                    deadline = self.seconds(s, "spec", "activeDeadlineSeconds");
                }
                (spec.and_then(|s| s.get("template")), "spec.template".into())
            }
            "CronJob" => {
                if let Some(s) = spec {
                    self.fields(s, "spec", CRONJOB_SPEC);
                }
                let job = spec.and_then(|s| s.get("jobTemplate"));
                if let Some(job) = job {
                    self.fields(job, "spec.jobTemplate", &[("metadata", Read), ("spec", Read)]);
                    if let Some(js) = job.get("spec") {
                        self.fields(js, "spec.jobTemplate.spec", JOB_SPEC);
                        deadline = self.seconds(js, "spec.jobTemplate.spec", "activeDeadlineSeconds");
                    }
                }
                (
                    job.and_then(|j| j.get("spec")).and_then(|s| s.get("template")),
                    "spec.jobTemplate.spec.template".into(),
                )
            }
            _ => {
                if let Some(s) = spec {
                    self.fields(s, "spec", APPS_SPEC);
                }
                (spec.and_then(|s| s.get("template")), "spec.template".into())
            }
        };
        let Some(template) = template else {
            self.ctx.error(
                Some(&place(w.doc.at, &path)),
                format!("{} {:?} has no pod template ({path})", w.kind, w.name),
            );
            return draft;
        };
        if w.kind != "Pod" {
            self.fields(template, &path, &[("metadata", Read), ("spec", Read)]);
            if let Some(m) = template.get("metadata") {
                self.fields(m, &join(&path, "metadata"), METADATA);
            }
        }
        self.meta = self.metadata(w, template);
        let spec_path = join(&path, "spec");
        let Some(pod) = template.get("spec") else {
            self.ctx.error(Some(&place(template.at, &spec_path)), "no pod spec");
            return draft;
        };
        if !self.fields(pod, &spec_path, POD_SPEC) {
            return draft;
        }
        self.pod_settings(&mut draft, pod, &spec_path, deadline);
        if matches!(w.kind.as_str(), "Job" | "CronJob")
            && !matches!(pod.get("restartPolicy").and_then(Node::as_str), Some("Never" | "OnFailure"))
        {
            let at =
                place(pod.get("restartPolicy").map_or(pod.at, |n| n.at), join(&spec_path, "restartPolicy"));
            self.ctx.error(Some(&at), format!("a {}'s pod needs restartPolicy Never or OnFailure (the Kubernetes API refuses Always, its default)", w.kind));
        }
        let pod_user =
            pod.get("securityContext").map(|s| self.security(s, &join(&spec_path, "securityContext")));
        let pod_user = pod_user.unwrap_or_default();
        let mut names = Vec::new();
        for (list, is_init) in [("initContainers", true), ("containers", false)] {
            let Some(node) = pod.get(list) else { continue };
            let list_path = join(&spec_path, list);
            let Some(items) = node.as_seq() else {
                self.ctx.error(
                    Some(&place(node.at, &list_path)),
                    format!("expected a list, found {}", node.kind()),
                );
                continue;
            };
            for (i, c) in items.iter().enumerate() {
                let c_path = format!("{list_path}[{i}]");
                if let Some(n) = c.get("name").and_then(Node::as_str) {
                    names.push(n.to_owned());
                }
                if let Some(p) = self.container(c, &c_path, is_init, &pod_user) {
                    draft.processes.push(p);
                }
            }
        }
        if pod.get("containers").is_none() {
            self.ctx.error(
                Some(&place(pod.at, &spec_path)),
                "no `containers`: a pod needs at least one (its mains)",
            );
        }
        if let Some(extra) = self.meta.annotations.get("podinit.io/pod").cloned() {
            let at = self.annotation_at("podinit.io/pod").unwrap_or_else(|| place(template.at, &path));
            self.merge_annotation(&mut draft.pod, &extra, &at, "podinit.io/pod");
        }
        self.check_annotations(&names);
        draft
    }

    /// The pod's metadata: the template's, with the workload's name and
    /// namespace where the template has none (a controller names its pods
    /// after itself).
    fn metadata(&mut self, w: &Workload, template: &Node) -> Meta {
        let own = w.doc.get("metadata");
        let tm = template.get("metadata");
        // A CronJob's job template has metadata of its own.
        let job = (w.kind == "CronJob")
            .then(|| w.doc.get("spec").and_then(|s| s.get("jobTemplate")).and_then(|j| j.get("metadata")))
            .flatten();
        let pick = |key: &str| {
            tm.and_then(|m| m.get(key))
                .and_then(Node::as_str)
                .or_else(|| own.and_then(|m| m.get(key)).and_then(Node::as_str))
        };
        let mut meta = Meta {
            name: pick("name").unwrap_or(&w.name).to_owned(),
            namespace: pick("namespace").unwrap_or("default").to_owned(),
            ..Meta::default()
        };
        let mut places = BTreeMap::new();
        for (key, into) in [("labels", &mut meta.labels), ("annotations", &mut meta.annotations)] {
            // A Pod's own metadata is its template; a workload's annotations
            // count too, for podinit's own (written on the workload or its
            // pod template alike).
            let sources = if w.kind == "Pod" {
                vec![own]
            } else {
                vec![own.filter(|_| key == "annotations"), job.filter(|_| key == "annotations"), tm]
            };
            for m in sources.into_iter().flatten() {
                let Some(node) = m.get(key) else { continue };
                let Some(map) = node.as_map() else {
                    self.ctx.error(
                        Some(&place(node.at, key)),
                        format!("expected a mapping, found {}", node.kind()),
                    );
                    continue;
                };
                for (k, v) in map {
                    let at = place(v.at, format!("metadata.{key}.{}", k.name));
                    if let Some(s) = self.string(v, &at) {
                        into.insert(k.name.clone(), s);
                        if key == "annotations" {
                            places.insert(k.name.clone(), at);
                        }
                    }
                }
            }
        }
        meta.annotation_places = places;
        meta
    }

    /// The place of annotation `key`.
    fn annotation_at(&self, key: &str) -> Option<Place> {
        self.meta.annotation_places.get(key).cloned()
    }

    /// Every `podinit.io/` annotation must be one podinit reads, about a
    /// container of this pod: a misspelt one would be ignored in silence.
    fn check_annotations(&mut self, containers: &[String]) {
        let keys: Vec<String> =
            self.meta.annotations.keys().filter(|k| k.starts_with(ANNOTATION)).cloned().collect();
        for key in keys {
            let rest = &key[ANNOTATION.len()..];
            let known = rest == "pod"
                || ["command.", "process."]
                    .iter()
                    .any(|p| rest.strip_prefix(p).is_some_and(|c| containers.iter().any(|n| n == c)));
            if !known {
                let at = self.annotation_at(&key);
                self.ctx.error(at.as_ref(), format!("annotation {key:?}: podinit reads {ANNOTATION}pod, {ANNOTATION}command.CONTAINER and {ANNOTATION}process.CONTAINER, for a container of this pod ({})", containers.join(", ")));
            }
        }
    }

    /// `[pod]`: restart policy, grace period, deadline.
    fn pod_settings(
        &mut self,
        draft: &mut Draft,
        pod: &Node,
        path: &str,
        job_deadline: Option<(i64, Place)>,
    ) {
        let policy = match pod.get("restartPolicy") {
            Some(n) => {
                let at = place(n.at, join(path, "restartPolicy"));
                match self.string(n, &at).as_deref() {
                    Some(p @ ("Always" | "OnFailure" | "Never")) => Some((p.to_owned(), at)),
                    Some(other) => {
                        self.ctx.error(
                            Some(&at),
                            format!("restartPolicy {other:?}: expected Always, OnFailure or Never"),
                        );
                        None
                    }
                    None => None,
                }
            }
            None => None,
        };
        match policy {
            Some((p, at)) => {
                draft.pod.set("restart_policy", p, Some(&at));
            }
            None => {
                draft.pod.set("restart_policy", "Always", None).note(
                    "Kubernetes' default restartPolicy (the manifest gives none): mains restart after every exit.",
                );
            }
        }
        match self.seconds(pod, path, "terminationGracePeriodSeconds") {
            Some((s, at)) => {
                draft.pod.set("termination_grace_period", Value::Int(s), Some(&at));
            }
            None => {
                draft
                    .pod
                    .set("termination_grace_period", "30s", None)
                    .note("Kubernetes' default terminationGracePeriodSeconds.");
            }
        }
        let pod_deadline = self.seconds(pod, path, "activeDeadlineSeconds");
        let deadline = match (pod_deadline, job_deadline) {
            (Some(p), Some(j)) => Some(if j.0 < p.0 { j } else { p }),
            (p, j) => p.or(j),
        };
        if let Some((s, at)) = deadline {
            if s <= 0 {
                self.ctx.error(Some(&at), "activeDeadlineSeconds must be more than 0");
            } else {
                draft.pod.set("active_deadline", Value::Int(s), Some(&at)).note(
                    "The pod's or the Job's activeDeadlineSeconds (the shorter): podinit ends the pod when it is spent (exit 124).",
                );
            }
        }
    }

    /// A whole number of seconds under `key` of `node`, not negative.
    fn seconds(&mut self, node: &Node, path: &str, key: &str) -> Option<(i64, Place)> {
        let n = node.get(key)?;
        let at = place(n.at, join(path, key));
        match n.as_int() {
            Some(s) if s >= 0 => Some((s, at)),
            Some(s) => {
                self.ctx.error(Some(&at), format!("{key} must not be negative (found {s})"));
                None
            }
            None if n.as_f64().is_some_and(|f| f.fract() == 0.0) => {
                self.ctx.error(Some(&at), format!("{key} is too large"));
                None
            }
            None => {
                self.ctx.error(Some(&at), format!("{key} must be a whole number, found {}", n.kind()));
                None
            }
        }
    }

    /// A string value; numbers, booleans and nulls are refused as the API
    /// server refuses them where it wants a string (quote them).
    fn string(&mut self, n: &Node, at: &Place) -> Option<String> {
        match &n.value {
            yaml::Value::Scalar { text, quoted: true } => Some(text.clone()),
            yaml::Value::Scalar { text, quoted: false } if n.kind() == "a string" => Some(text.clone()),
            _ => {
                self.ctx
                    .error(Some(at), format!("expected a string, found {} (quote it: \"...\")", n.kind()));
                None
            }
        }
    }

    /// A list of strings (`command`, `args`, `exec.command`).
    fn strings(&mut self, n: &Node, at: &Place) -> Option<Vec<String>> {
        let Some(items) = n.as_seq() else {
            self.ctx.error(Some(at), format!("expected a list of strings, found {}", n.kind()));
            return None;
        };
        let mut out = Vec::new();
        for (i, item) in items.iter().enumerate() {
            out.push(self.string(item, &place(item.at, format!("{}[{i}]", at.key)))?);
        }
        Some(out)
    }

    /// Merges a `podinit.io/process.<c>` or `podinit.io/pod` annotation (a
    /// JSON object of podinit settings, or a YAML flow mapping) into `table`.
    fn merge_annotation(&mut self, table: &mut Table, text: &str, at: &Place, key: &str) {
        let parsed = yaml::parse(text).map(|mut docs| docs.pop());
        match parsed {
            Ok(Some(Node { value: yaml::Value::Map(entries), .. })) => {
                for (k, v) in entries {
                    if matches!(k.name.as_str(), "name" | "role" | "command") {
                        self.ctx.error(Some(at), format!("annotation {key}: {} is the manifest's to say (its container name, list and command), not an annotation's", k.name));
                        continue;
                    }
                    table.set(&k.name, from_node(&v), Some(at));
                }
            }
            Ok(_) => self.ctx.error(
                Some(at),
                format!("annotation {key}: expected a JSON object such as {{\"max_restarts\": 5}}"),
            ),
            Err(e) => self.ctx.error(Some(at), format!("annotation {key}: not a JSON object: {}", e.message)),
        }
    }
}

/// `node` with every mapping entry whose value is null left out.
fn without_nulls(mut node: Node) -> Node {
    match &mut node.value {
        yaml::Value::Map(entries) => {
            let taken = std::mem::take(entries);
            *entries =
                taken.into_iter().filter(|(_, v)| !v.is_null()).map(|(k, v)| (k, without_nulls(v))).collect();
        }
        yaml::Value::Seq(items) => {
            let taken = std::mem::take(items);
            *items = taken.into_iter().map(without_nulls).collect();
        }
        yaml::Value::Scalar { .. } => {}
    }
    node
}

fn join(path: &str, key: &str) -> String {
    if path.is_empty() {
        key.to_owned()
    } else {
        format!("{path}.{key}")
    }
}

/// A value of an annotation as a draft value: booleans and integers by
/// the YAML core schema, every other scalar a string.
fn from_node(n: &Node) -> Value {
    match &n.value {
        yaml::Value::Map(entries) => {
            let mut table = Table::default();
            for (k, v) in entries {
                table.set(&k.name, from_node(v), None);
            }
            Value::Table(table)
        }
        yaml::Value::Seq(items) => Value::List(items.iter().map(from_node).collect()),
        yaml::Value::Scalar { text, .. } => match (n.as_bool(), n.as_int()) {
            (Some(b), _) => Value::Bool(b),
            (_, Some(i)) => Value::Int(i),
            _ => Value::Str(text.clone()),
        },
    }
}
