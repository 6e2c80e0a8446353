//! The field tables of the Kubernetes reader: every field of the objects it
//! reads (Kubernetes 1.34, core/v1, batch/v1, apps/v1), read or ignored with
//! the reason. A key in no table is not a Kubernetes field.

/// What podinit does with one field.
#[derive(Clone, Copy)]
pub(super) enum Row {
    /// Read by this module.
    Read,
    /// Accepted and reported as ignored, for this reason.
    Ignore(&'static str),
}

pub(super) use Row::{Ignore, Read};

pub(super) const NODE: &str = "placement on a node: one container has one node";
pub(super) const IMAGE: &str = "the image: podinit runs the commands of the image it is in";
pub(super) const VOLUME: &str = "volumes: every process of the container sees the container's file system";
pub(super) const NETWORK: &str = "the network: every process shares the container's";
pub(super) const RESOURCES: &str = "resources: the container's limits hold for all its processes";
pub(super) const CLUSTER: &str = "cluster-side: no API server or kubelet is asked";
pub(super) const SECURITY: &str = "a kernel security setting: it is the container's, for every process alike";
pub(super) const CONTROLLER: &str = "the workload controller's: podinit runs one pod, once";

/// Top-level keys of every object.
pub(super) const OBJECT: &[(&str, Row)] = &[
    ("apiVersion", Read),
    ("kind", Read),
    ("metadata", Read),
    ("spec", Read),
    ("status", Ignore("status is written by the cluster")),
];

/// ObjectMeta: names, labels and annotations are read (fieldRef, podinit's
/// annotations); the rest is the API server's.
pub(super) const METADATA: &[(&str, Row)] = &[
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
pub(super) const POD_SPEC: &[(&str, Row)] = &[
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
pub(super) const CONTAINER: &[(&str, Row)] = &[
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
    (
        "stdin",
        Ignore("every process's stdin is podinit's /dev/null or terminal (docs/reference.md, \"Output\")"),
    ),
    (
        "stdinOnce",
        Ignore("every process's stdin is podinit's /dev/null or terminal (docs/reference.md, \"Output\")"),
    ),
    ("tty", Ignore("the terminal is the container's")),
];

/// SecurityContext (container) and PodSecurityContext: the run-as user and
/// group and `allowPrivilegeEscalation` are read.
pub(super) const SECURITY_CONTEXT: &[(&str, Row)] = &[
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
pub(super) const PROBE: &[(&str, Row)] = &[
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
pub(super) const LIFECYCLE: &[(&str, Row)] = &[("postStart", Read), ("preStop", Read), ("stopSignal", Read)];
pub(super) const HANDLER: &[(&str, Row)] =
    &[("exec", Read), ("httpGet", Read), ("sleep", Read), ("tcpSocket", Read)];
pub(super) const HTTP_GET: &[(&str, Row)] =
    &[("port", Read), ("path", Read), ("host", Read), ("scheme", Read), ("httpHeaders", Read)];

/// Job (batch/v1) spec: the pod template and the deadline are read.
pub(super) const JOB_SPEC: &[(&str, Row)] = &[
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
pub(super) const CRONJOB_SPEC: &[(&str, Row)] = &[
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
pub(super) const APPS_SPEC: &[(&str, Row)] = &[
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
pub(super) const WORKLOADS: &[&str] =
    &["Pod", "Job", "CronJob", "Deployment", "StatefulSet", "DaemonSet", "ReplicaSet"];
