//! Kubernetes manifests (docs/kubernetes.md): a Pod, or the pod template of
//! a Job, CronJob, Deployment, StatefulSet, DaemonSet or ReplicaSet, with the
//! ConfigMaps and Secrets it reads, as the pod podinit runs.
//!
//! The mapping lives in the field tables below ([`POD_SPEC`], [`CONTAINER`],
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

use std::collections::BTreeMap;

use super::draft::{Draft, Process, Table, Value};
use super::yaml::{self, Node};
use super::{place, Ctx, NoteKind};
use crate::config::locate::Place;

/// The prefix of podinit's own annotations on a pod (docs/kubernetes.md,
/// "Annotations"): `podinit.io/command.<container>` gives a container
/// without `command` its command (run by `/bin/sh -c`, the container's
/// `args` after it); `podinit.io/process.<container>` and `podinit.io/pod`
/// carry settings Kubernetes has no field for, as an inline TOML table.
pub const ANNOTATION: &str = "podinit.io/";

/// What podinit does with one field.
#[derive(Clone, Copy)]
enum Row {
    /// Read by this module.
    Read,
    /// Accepted and reported as ignored, for this reason.
    Ignore(&'static str),
}

use Row::{Ignore, Read};

const NODE: &str = "placement on a node: one container has one node";
const IMAGE: &str = "the image: podinit runs the commands of the image it is in";
const VOLUME: &str = "volumes: every process of the container sees the container's file system";
const NETWORK: &str = "the network: every process shares the container's";
const RESOURCES: &str = "resources: the container's limits hold for all its processes";
const CLUSTER: &str = "cluster-side: no API server or kubelet is asked";
const SECURITY: &str = "a kernel security setting: it is the container's, for every process alike";
const CONTROLLER: &str = "the workload controller's: podinit runs one pod, once";

/// Top-level keys of every object.
const OBJECT: &[(&str, Row)] = &[
    ("apiVersion", Read),
    ("kind", Read),
    ("metadata", Read),
    ("spec", Read),
    ("status", Ignore("status is written by the cluster")),
];

/// ObjectMeta: names, labels and annotations are read (fieldRef, podinit's
/// annotations); the rest is the API server's.
const METADATA: &[(&str, Row)] = &[
    ("name", Read),
    ("namespace", Read),
    ("labels", Read),
    ("annotations", Read),
    ("generateName", Ignore(CLUSTER)),
    ("uid", Ignore(CLUSTER)),
    ("resourceVersion", Ignore(CLUSTER)),
    ("generation", Ignore(CLUSTER)),
    ("creationTimestamp", Ignore(CLUSTER)),
    ("deletionTimestamp", Ignore(CLUSTER)),
    ("deletionGracePeriodSeconds", Ignore(CLUSTER)),
    ("ownerReferences", Ignore(CLUSTER)),
    ("finalizers", Ignore(CLUSTER)),
    ("managedFields", Ignore(CLUSTER)),
    ("selfLink", Ignore(CLUSTER)),
];

/// PodSpec (core/v1).
const POD_SPEC: &[(&str, Row)] = &[
    ("initContainers", Read),
    ("containers", Read),
    ("restartPolicy", Read),
    ("terminationGracePeriodSeconds", Read),
    ("activeDeadlineSeconds", Read),
    ("securityContext", Read),
    ("volumes", Ignore(VOLUME)),
    ("ephemeralContainers", Ignore("ephemeral containers are added by `kubectl debug`, not run at start")),
    ("affinity", Ignore(NODE)),
    ("nodeSelector", Ignore(NODE)),
    ("nodeName", Ignore(NODE)),
    ("tolerations", Ignore(NODE)),
    ("topologySpreadConstraints", Ignore(NODE)),
    ("schedulerName", Ignore(NODE)),
    ("schedulingGates", Ignore(NODE)),
    ("priority", Ignore(NODE)),
    ("priorityClassName", Ignore(NODE)),
    ("preemptionPolicy", Ignore(NODE)),
    ("runtimeClassName", Ignore(NODE)),
    ("overhead", Ignore(RESOURCES)),
    ("resources", Ignore(RESOURCES)),
    ("resourceClaims", Ignore(RESOURCES)),
    ("os", Ignore(NODE)),
    ("serviceAccountName", Ignore(CLUSTER)),
    ("serviceAccount", Ignore(CLUSTER)),
    ("automountServiceAccountToken", Ignore(CLUSTER)),
    ("imagePullSecrets", Ignore(IMAGE)),
    ("hostNetwork", Ignore(NETWORK)),
    ("hostPID", Ignore(NODE)),
    ("hostIPC", Ignore(NODE)),
    ("hostUsers", Ignore(NODE)),
    ("shareProcessNamespace", Ignore("podinit's processes always share one PID namespace")),
    ("hostname", Ignore(NETWORK)),
    ("hostnameOverride", Ignore(NETWORK)),
    ("subdomain", Ignore(NETWORK)),
    ("setHostnameAsFQDN", Ignore(NETWORK)),
    ("hostAliases", Ignore(NETWORK)),
    ("dnsPolicy", Ignore(NETWORK)),
    ("dnsConfig", Ignore(NETWORK)),
    ("enableServiceLinks", Ignore(CLUSTER)),
    ("readinessGates", Ignore(CLUSTER)),
];

/// Container (core/v1), for init containers, sidecars and mains alike.
const CONTAINER: &[(&str, Row)] = &[
    ("name", Read),
    ("command", Read),
    ("args", Read),
    ("workingDir", Read),
    ("env", Read),
    ("envFrom", Read),
    ("ports", Read),
    ("startupProbe", Read),
    ("readinessProbe", Read),
    ("livenessProbe", Read),
    ("lifecycle", Read),
    ("restartPolicy", Read),
    ("restartPolicyRules", Read),
    ("securityContext", Read),
    ("image", Ignore(IMAGE)),
    ("imagePullPolicy", Ignore(IMAGE)),
    ("resources", Ignore(RESOURCES)),
    ("resizePolicy", Ignore(RESOURCES)),
    ("volumeMounts", Ignore(VOLUME)),
    ("volumeDevices", Ignore(VOLUME)),
    ("terminationMessagePath", Ignore(CLUSTER)),
    ("terminationMessagePolicy", Ignore(CLUSTER)),
    ("stdin", Ignore("every process's stdin is podinit's /dev/null or terminal (docs/reference.md, \"Output\")")),
    ("stdinOnce", Ignore("every process's stdin is podinit's /dev/null or terminal (docs/reference.md, \"Output\")")),
    ("tty", Ignore("the terminal is the container's")),
];

/// SecurityContext (container) and PodSecurityContext: the run-as user and
/// group and `allowPrivilegeEscalation` are read.
const SECURITY_CONTEXT: &[(&str, Row)] = &[
    ("runAsUser", Read),
    ("runAsGroup", Read),
    ("runAsNonRoot", Read),
    ("allowPrivilegeEscalation", Read),
    ("privileged", Ignore(SECURITY)),
    ("capabilities", Ignore(SECURITY)),
    ("readOnlyRootFilesystem", Ignore(SECURITY)),
    ("procMount", Ignore(SECURITY)),
    ("seLinuxOptions", Ignore(SECURITY)),
    ("seccompProfile", Ignore(SECURITY)),
    ("appArmorProfile", Ignore(SECURITY)),
    ("windowsOptions", Ignore(SECURITY)),
    // PodSecurityContext only.
    ("fsGroup", Ignore(VOLUME)),
    ("fsGroupChangePolicy", Ignore(VOLUME)),
    ("supplementalGroups", Ignore(SECURITY)),
    ("supplementalGroupsPolicy", Ignore(SECURITY)),
    ("sysctls", Ignore(SECURITY)),
    ("seLinuxChangePolicy", Ignore(SECURITY)),
];

/// Probe (core/v1).
const PROBE: &[(&str, Row)] = &[
    ("exec", Read),
    ("httpGet", Read),
    ("tcpSocket", Read),
    ("grpc", Read),
    ("initialDelaySeconds", Read),
    ("periodSeconds", Read),
    ("timeoutSeconds", Read),
    ("successThreshold", Read),
    ("failureThreshold", Read),
    ("terminationGracePeriodSeconds", Read),
];

/// Lifecycle and LifecycleHandler (core/v1).
const LIFECYCLE: &[(&str, Row)] = &[("postStart", Read), ("preStop", Read), ("stopSignal", Read)];
const HANDLER: &[(&str, Row)] = &[("exec", Read), ("httpGet", Read), ("sleep", Read), ("tcpSocket", Read)];
const HTTP_GET: &[(&str, Row)] =
    &[("port", Read), ("path", Read), ("host", Read), ("scheme", Read), ("httpHeaders", Read)];

/// Job (batch/v1) spec: the pod template and the deadline are read.
const JOB_SPEC: &[(&str, Row)] = &[
    ("template", Read),
    ("activeDeadlineSeconds", Read),
    ("completions", Ignore(CONTROLLER)),
    ("parallelism", Ignore(CONTROLLER)),
    ("backoffLimit", Ignore(CONTROLLER)),
    ("backoffLimitPerIndex", Ignore(CONTROLLER)),
    ("maxFailedIndexes", Ignore(CONTROLLER)),
    ("podFailurePolicy", Ignore(CONTROLLER)),
    ("podReplacementPolicy", Ignore(CONTROLLER)),
    ("successPolicy", Ignore(CONTROLLER)),
    ("completionMode", Ignore(CONTROLLER)),
    ("ttlSecondsAfterFinished", Ignore(CONTROLLER)),
    ("suspend", Ignore(CONTROLLER)),
    ("selector", Ignore(CONTROLLER)),
    ("manualSelector", Ignore(CONTROLLER)),
    ("managedBy", Ignore(CONTROLLER)),
];

/// CronJob (batch/v1) spec: podinit runs the job template's pod once.
const CRONJOB_SPEC: &[(&str, Row)] = &[
    ("jobTemplate", Read),
    ("schedule", Ignore("the schedule: podinit runs the job's pod once, now")),
    ("timeZone", Ignore(CONTROLLER)),
    ("concurrencyPolicy", Ignore(CONTROLLER)),
    ("startingDeadlineSeconds", Ignore(CONTROLLER)),
    ("successfulJobsHistoryLimit", Ignore(CONTROLLER)),
    ("failedJobsHistoryLimit", Ignore(CONTROLLER)),
    ("suspend", Ignore(CONTROLLER)),
];

/// Deployment, StatefulSet, DaemonSet and ReplicaSet specs (apps/v1): the pod
/// template is read, one replica of it.
const APPS_SPEC: &[(&str, Row)] = &[
    ("template", Read),
    ("replicas", Ignore("replicas: podinit runs one pod")),
    ("selector", Ignore(CONTROLLER)),
    ("strategy", Ignore(CONTROLLER)),
    ("updateStrategy", Ignore(CONTROLLER)),
    ("minReadySeconds", Ignore(CONTROLLER)),
    ("revisionHistoryLimit", Ignore(CONTROLLER)),
    ("progressDeadlineSeconds", Ignore(CONTROLLER)),
    ("paused", Ignore(CONTROLLER)),
    ("serviceName", Ignore(NETWORK)),
    ("podManagementPolicy", Ignore(CONTROLLER)),
    ("volumeClaimTemplates", Ignore(VOLUME)),
    ("persistentVolumeClaimRetentionPolicy", Ignore(VOLUME)),
    ("ordinals", Ignore(CONTROLLER)),
];

/// The kinds whose pod podinit can run, and where their pod template is.
const WORKLOADS: &[&str] = &["Pod", "Job", "CronJob", "Deployment", "StatefulSet", "DaemonSet", "ReplicaSet"];

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
}

/// A container's environment as Kubernetes builds it, in order (envFrom
/// first, then env), with where each value was written.
type Env = Vec<(String, String, Place)>;

struct Reader<'c, 'o> {
    ctx: &'c mut Ctx<'o>,
    config_maps: BTreeMap<String, BTreeMap<String, String>>,
    secrets: BTreeMap<String, BTreeMap<String, String>>,
    meta: Meta,
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
    let mut r = Reader { ctx, config_maps: BTreeMap::new(), secrets: BTreeMap::new(), meta: Meta::default() };
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
            r.ctx.error(None, format!("no workload to run: give a document of kind {}", WORKLOADS.join(", ")));
            return Draft::default();
        }
        (Some(want), _) => match workloads.iter().find(|w| &w.name == want) {
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
                format!("more than one workload: {}; pick one with --pod NAME (or PODINIT_POD)", names.join(", ")),
            );
            return Draft::default();
        }
    };
    r.workload(chosen)
}

impl Reader<'_, '_> {
    /// The `kind` of a document, after checking its top-level keys.
    fn kind_of(&mut self, doc: &Node) -> Option<String> {
        if doc.as_map().is_none() {
            self.ctx.error(Some(&place(doc.at, "")), format!("a manifest is a mapping, found {}", doc.kind()));
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
        self.fields(doc, "", fields);
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
                self.ctx.error(Some(&place(node.at, path)), format!("expected a mapping, found {}", node.kind()));
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
                    self.ctx.error(Some(&at), format!("unknown field {:?}: the Kubernetes API has no such field here{hint}", key.name));
                }
            }
        }
        true
    }

    /// A ConfigMap's `data` or a Secret's `data` (base64) and `stringData`.
    fn data(&mut self, doc: &Node, kind: &str, name: &str) {
        let mut values = BTreeMap::new();
        let decode = kind == "Secret";
        for (key, encoded) in [("data", decode), ("stringData", false)] {
            let Some(data) = doc.get(key) else { continue };
            let Some(map) = data.as_map() else {
                self.ctx.error(Some(&place(data.at, key)), format!("expected a mapping, found {}", data.kind()));
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
                                self.ctx.error(Some(&at), "this value is not UTF-8 text once decoded; it cannot be an environment variable");
                                continue;
                            }
                        },
                        None => {
                            self.ctx.error(Some(&at), "not base64 (a Secret's `data` is; `stringData` takes plain text)");
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
            self.ctx.error(Some(&place(w.doc.at, &path)), format!("{} {:?} has no pod template ({path})", w.kind, w.name));
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
        let pod_user = pod.get("securityContext").map(|s| self.security(s, &join(&spec_path, "securityContext")));
        let pod_user = pod_user.unwrap_or_default();
        for (list, is_init) in [("initContainers", true), ("containers", false)] {
            let Some(node) = pod.get(list) else { continue };
            let list_path = join(&spec_path, list);
            let Some(items) = node.as_seq() else {
                self.ctx.error(Some(&place(node.at, &list_path)), format!("expected a list, found {}", node.kind()));
                continue;
            };
            for (i, c) in items.iter().enumerate() {
                let c_path = format!("{list_path}[{i}]");
                if let Some(p) = self.container(c, &c_path, is_init, &pod_user) {
                    draft.processes.push(p);
                }
            }
        }
        if pod.get("containers").is_none() {
            self.ctx.error(Some(&place(pod.at, &spec_path)), "no `containers`: a pod needs at least one (its mains)");
        }
        if let Some(extra) = self.meta.annotations.get("podinit.io/pod").cloned() {
            let at = place(template.at, join(&path, "metadata.annotations"));
            self.merge_annotation(&mut draft.pod, &extra, &at, "podinit.io/pod");
        }
        draft
    }

    /// The pod's metadata: the template's, with the workload's name and
    /// namespace where the template has none (a controller names its pods
    /// after itself).
    fn metadata(&mut self, w: &Workload, template: &Node) -> Meta {
        let own = w.doc.get("metadata");
        let tm = template.get("metadata");
        let pick = |key: &str| {
            tm.and_then(|m| m.get(key)).and_then(Node::as_str).or_else(|| own.and_then(|m| m.get(key)).and_then(Node::as_str))
        };
        let mut meta = Meta {
            name: pick("name").unwrap_or(&w.name).to_owned(),
            namespace: pick("namespace").unwrap_or("default").to_owned(),
            ..Meta::default()
        };
        for (key, into) in [("labels", &mut meta.labels), ("annotations", &mut meta.annotations)] {
            // A Pod's own metadata is its template; a workload's annotations
            // count too, for podinit's own (written on the workload or its
            // pod template alike).
            let sources = if w.kind == "Pod" { vec![own] } else { vec![own.filter(|_| key == "annotations"), tm] };
            for m in sources.into_iter().flatten() {
                let Some(node) = m.get(key) else { continue };
                let Some(map) = node.as_map() else {
                    self.ctx.error(Some(&place(node.at, key)), format!("expected a mapping, found {}", node.kind()));
                    continue;
                };
                for (k, v) in map {
                    let at = place(v.at, format!("metadata.{key}.{}", k.name));
                    if let Some(s) = self.string(v, &at) {
                        into.insert(k.name.clone(), s);
                    }
                }
            }
        }
        meta
    }

    /// `[pod]`: restart policy, grace period, deadline.
    fn pod_settings(&mut self, draft: &mut Draft, pod: &Node, path: &str, job_deadline: Option<(i64, Place)>) {
        let policy = match pod.get("restartPolicy") {
            Some(n) => {
                let at = place(n.at, join(path, "restartPolicy"));
                match self.string(n, &at).as_deref() {
                    Some(p @ ("Always" | "OnFailure" | "Never")) => Some((p.to_owned(), at)),
                    Some(other) => {
                        self.ctx.error(Some(&at), format!("restartPolicy {other:?}: expected Always, OnFailure or Never"));
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
                draft.pod.set("termination_grace_period", "30s", None).note("Kubernetes' default terminationGracePeriodSeconds.");
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
            None => {
                self.ctx.error(Some(&at), format!("{key} must be a whole number of seconds, found {}", n.kind()));
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
                self.ctx.error(Some(at), format!("expected a string, found {} (quote it: \"...\")", n.kind()));
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

    /// A security context's user: `uid[:gid]`, or `None`; refuses what the
    /// kubelet refuses (`runAsNonRoot` with user 0).
    fn security(&mut self, s: &Node, path: &str) -> Security {
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
    fn container(&mut self, c: &Node, path: &str, is_init: bool, pod_security: &Security) -> Option<Process> {
        if !self.fields(c, path, CONTAINER) {
            return None;
        }
        let at = place(c.at, path);
        let Some(raw_name) = c.get("name").and_then(|n| self.string(n, &place(n.at, join(path, "name")))) else {
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
                        self.ctx.error(Some(&rp_at), format!("restartPolicy {other:?}: expected Always, OnFailure or Never"));
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
        for (key, toml_key) in
            [("startupProbe", "startup_probe"), ("readinessProbe", "readiness_probe"), ("livenessProbe", "liveness_probe")]
        {
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
        if let Some(r) = c.get("restartPolicyRules") {
            self.restart_rules(r, &join(path, "restartPolicyRules"), &mut p);
        }
        let own = c.get("securityContext").map(|s| self.security(s, &join(path, "securityContext"))).unwrap_or_default();
        self.user(&own, pod_security, &mut p);
        let key = format!("podinit.io/process.{raw_name}");
        if let Some(extra) = self.meta.annotations.get(&key).cloned() {
            self.merge_annotation(&mut p.table, &extra, &name_at, &key);
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
                let mut argv = vec!["/bin/sh".to_owned(), "-c".to_owned(), format!("{cmd} \"$@\""), name.to_owned()];
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
                    p.table.set("command", Value::argv(&args), Some(&at)).note("args only: the ENTRYPOINT goes before them");
                }
                self.ctx.note(NoteKind::Dropped, Some(&at), format!("container {raw_name:?} has no `command` (its image {image} gives one on a cluster); written commented out: give one with --command {name}=CMD or the annotation {annotation}"));
            }
        }
    }

    /// `envFrom` then `env`, as the kubelet builds the environment; `$(VAR)`
    /// in a value expands from the variables before it.
    fn env(&mut self, c: &Node, path: &str) -> Env {
        let mut env: Env = Vec::new();
        if let Some(from) = c.get("envFrom") {
            let from_path = join(path, "envFrom");
            for (i, source) in from.as_seq().unwrap_or_default().iter().enumerate() {
                let s_path = format!("{from_path}[{i}]");
                if !self.fields(source, &s_path, &[("configMapRef", Read), ("secretRef", Read), ("prefix", Read)]) {
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
            self.ctx.error(Some(&place(list.at, &list_path)), format!("expected a list, found {}", list.kind()));
            return env;
        };
        for (i, item) in items.iter().enumerate() {
            let i_path = format!("{list_path}[{i}]");
            if !self.fields(item, &i_path, &[("name", Read), ("value", Read), ("valueFrom", Read)]) {
                continue;
            }
            let Some(name) = item.get("name").and_then(|n| self.string(n, &place(n.at, join(&i_path, "name")))) else {
                self.ctx.error(Some(&place(item.at, &i_path)), "an env entry needs a `name`");
                continue;
            };
            if let Some(v) = item.get("value") {
                let at = place(v.at, join(&i_path, "value"));
                if let Some(value) = self.string(v, &at) {
                    let lookup = |var: &str| env.iter().rev().find(|(k, _, _)| k == var).map(|(_, v, _)| v.clone());
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
    fn value_from(&mut self, from: &Node, path: &str, var: &str) -> Option<String> {
        let table: &[(&str, Row)] =
            &[("configMapKeyRef", Read), ("secretKeyRef", Read), ("fieldRef", Read), ("resourceFieldRef", Read), ("fileKeyRef", Read)];
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
                    self.ctx.error(Some(&at), format!("{what} {name:?} has no key {k:?}"));
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
                f if f.starts_with("metadata.labels['") => {
                    item(f, "metadata.labels['").map(|k| self.meta.labels.get(&k).cloned().unwrap_or_default())
                }
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
            self.fields(f, &f_path, &[("volumeName", Read), ("path", Read), ("key", Read), ("optional", Read)]);
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
        self.ctx.error(Some(&place(from.at, path)), "valueFrom needs one of configMapKeyRef, secretKeyRef, fieldRef, fileKeyRef");
        None
    }

    /// The container's named ports (`ports[].name` to `containerPort`).
    fn ports(&mut self, c: &Node, path: &str) -> BTreeMap<String, i64> {
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
                if let (Some(name), Some(number)) =
                    (port.get("name").and_then(Node::as_str), port.get("containerPort").and_then(Node::as_int))
                {
                    out.insert(name.to_owned(), number);
                }
            }
        }
        self.ctx.note(NoteKind::Ignored, Some(&place(list.at, join(path, "ports"))), "ports: the network is the container's (their names serve the probes and hooks)");
        out
    }

    /// A probe or hook port: a number, or a name from `ports`.
    fn port(&mut self, n: &Node, at: &Place, ports: &BTreeMap<String, i64>) -> Option<i64> {
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
    fn http_get(&mut self, h: &Node, path: &str, ports: &BTreeMap<String, i64>) -> Option<Table> {
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
        t.set("port", port, Some(&place(h.at, join(path, "port"))));
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
                    ht.set(name, value, Some(&place(hd.at, &h_path)));
                }
            }
            t.set("headers", ht, None);
        }
        Some(t)
    }

    /// A probe: its handler and Kubernetes' timing fields (whose defaults are
    /// podinit's too: period 10 s, timeout 1 s, failure threshold 3).
    fn probe(&mut self, probe: &Node, path: &str, ports: &BTreeMap<String, i64>) -> Option<Table> {
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
                if let Some(port) = s.get("port").and_then(|n| self.port(n, &place(n.at, join(&s_path, "port")), ports)) {
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
                    self.ctx.error(Some(&place(g.at, &g_path)), "grpc needs a numeric `port` (Kubernetes takes no port name here)");
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
        for (key, toml_key) in [("successThreshold", "success_threshold"), ("failureThreshold", "failure_threshold")] {
            if let Some((n, at)) = self.seconds(probe, path, key) {
                t.set(toml_key, Value::Int(n), Some(&at));
            }
        }
        Some(t)
    }

    /// `lifecycle`: postStart, preStop (exec, httpGet, sleep) and stopSignal.
    fn lifecycle(&mut self, l: &Node, path: &str, ports: &BTreeMap<String, i64>, p: &mut Process) {
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
    fn restart_rules(&mut self, r: &Node, path: &str, p: &mut Process) {
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
                    self.ctx.error(Some(&place(rule.at, join(&r_path, "action"))), format!("action {:?}: expected Restart or RestartAllContainers", other.unwrap_or_default()));
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
                    self.ctx.error(Some(&place(codes.at, join(&c_path, "operator"))), format!("operator {:?}: expected In or NotIn", other.unwrap_or_default()));
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
                Some((0, _)) => self.ctx.error(Some(at), "runAsNonRoot is true and runAsUser is 0: the kubelet refuses to start this container"),
                Some(_) => {}
                None => self.ctx.note(NoteKind::Approximated, Some(at), "runAsNonRoot without runAsUser: the process runs as podinit's user; the kubelet would refuse to start it if that is root"),
            }
        }
        if let Some((no_new, at)) = own.no_new_privileges.clone() {
            p.table.set("no_new_privileges", no_new, Some(&at));
        }
    }

    /// Merges a `podinit.io/process.<c>` or `podinit.io/pod` annotation (an
    /// inline TOML table) into `table`.
    fn merge_annotation(&mut self, table: &mut Table, text: &str, at: &Place, key: &str) {
        let parsed: Result<toml::Table, _> = toml::from_str(&format!("x = {text}"));
        match parsed.map(|mut t| t.remove("x")) {
            Ok(Some(toml::Value::Table(extra))) => {
                for (k, v) in extra {
                    table.set(&k, from_toml(v), Some(at));
                }
            }
            Ok(_) => self.ctx.error(Some(at), format!("annotation {key}: expected an inline TOML table such as {{ max_restarts = 5 }}")),
            Err(e) => self.ctx.error(Some(at), format!("annotation {key}: not an inline TOML table: {}", e.message())),
        }
    }
}

/// A security context's settings that podinit reads, each with its place.
#[derive(Default, Clone)]
struct Security {
    user: Option<(i64, Place)>,
    group: Option<(i64, Place)>,
    non_root: Option<(bool, Place)>,
    no_new_privileges: Option<(bool, Place)>,
}

/// Sets `name` in `env`, replacing an earlier value (a later `env` entry
/// wins over `envFrom`, as in Kubernetes).
fn set(env: &mut Env, name: String, value: String, at: Place) {
    env.retain(|(k, _, _)| *k != name);
    env.push((name, value, at));
}

fn join(path: &str, key: &str) -> String {
    if path.is_empty() {
        key.to_owned()
    } else {
        format!("{path}.{key}")
    }
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

/// A TOML value of an annotation as a draft value.
fn from_toml(v: toml::Value) -> Value {
    match v {
        toml::Value::String(s) => Value::Str(s),
        toml::Value::Integer(n) => Value::Int(n),
        toml::Value::Boolean(b) => Value::Bool(b),
        toml::Value::Array(items) => Value::List(items.into_iter().map(from_toml).collect()),
        toml::Value::Table(t) => {
            let mut table = Table::default();
            for (k, v) in t {
                table.set(&k, from_toml(v), None);
            }
            Value::Table(table)
        }
        toml::Value::Float(f) => Value::Str(f.to_string()),
        toml::Value::Datetime(d) => Value::Str(d.to_string()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn references_expand_as_the_kubelet_expands_them() {
        let lookup = |v: &str| (v == "A").then(|| "1".to_owned());
        assert_eq!(expand("x$(A)y", &lookup), "x1y");
        assert_eq!(expand("$$(A)", &lookup), "$(A)");
        assert_eq!(expand("$(B) $A $(", &lookup), "$(B) $A $(");
        assert_eq!(expand("$$$(A)", &lookup), "$1");
    }

    #[test]
    fn base64_decodes_secret_data() {
        assert_eq!(base64("aGVsbG8=").unwrap(), b"hello");
        assert_eq!(base64("aGVsbG8").unwrap(), b"hello");
        assert!(base64("a*b").is_none());
    }
}
