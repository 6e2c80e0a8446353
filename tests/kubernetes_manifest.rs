//! `examples/kubernetes/job.yaml` is a Job a cluster accepts and that runs the
//! pod it says: no cluster runs here, so every YAML document is parsed into the
//! Kubernetes API types (k8s-openapi) and must serialize back to exactly what
//! was written (so a misspelt or misplaced field, which those types would skip
//! without a word, fails), the fields that make podinit work in a Job are
//! checked against the podinit config embedded in the ConfigMap, and that
//! config passes `podinit check`.

// This harness waits for the `podinit check` it starts: it is not podinit, so
// the one-waiter rule of clippy.toml (for src/) does not apply here.
#![allow(clippy::disallowed_methods)]

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use k8s_openapi::api::batch::v1::Job;
use k8s_openapi::api::core::v1::{ConfigMap, Container, Probe};
use serde::Deserialize;

fn job_yaml() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/kubernetes/job.yaml")
}

/// The documents of job.yaml, each typed by its `kind`.
struct Manifest {
    config_maps: Vec<ConfigMap>,
    jobs: Vec<Job>,
}

fn parse_manifest() -> Manifest {
    let path = job_yaml();
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("read {}: {e}", path.display()));
    let mut m = Manifest { config_maps: Vec::new(), jobs: Vec::new() };
    for (i, doc) in serde_norway::Deserializer::from_str(&text).enumerate() {
        let value = serde_norway::Value::deserialize(doc)
            .unwrap_or_else(|e| panic!("{}: document {i} is not YAML: {e}", path.display()));
        let kind = value.get("kind").and_then(|k| k.as_str()).unwrap_or_default().to_owned();
        match kind.as_str() {
            "ConfigMap" => m.config_maps.push(typed(&path, i, value)),
            "Job" => m.jobs.push(typed(&path, i, value)),
            other => panic!("{}: document {i}: unexpected kind {other:?}", path.display()),
        }
    }
    m
}

/// Parses one document into its API type and checks that nothing was lost on
/// the way: the typed value must serialize back to the document.
fn typed<T>(path: &Path, i: usize, value: serde_norway::Value) -> T
where
    T: serde::de::DeserializeOwned + serde::Serialize,
{
    let typed: T = serde_norway::from_value(value.clone()).unwrap_or_else(|e| {
        panic!("{}: document {i} does not parse as {}: {e}", path.display(), std::any::type_name::<T>())
    });
    let back = serde_norway::to_value(&typed).expect("serialize back");
    assert_eq!(
        back,
        value,
        "{}: document {i} has fields the Kubernetes API does not know (typed and serialized back, it differs)\n--- typed ---\n{}",
        path.display(),
        serde_norway::to_string(&typed).unwrap()
    );
    typed
}

/// The Job's one container.
fn the_container(job: &Job) -> &Container {
    let pod = job.spec.as_ref().and_then(|s| s.template.spec.as_ref()).expect("job.spec.template.spec");
    assert_eq!(pod.containers.len(), 1, "one container runs podinit and the whole pod");
    assert!(pod.init_containers.is_none(), "the sidecar lives in podinit's config, not as a native sidecar");
    &pod.containers[0]
}

fn env_var<'a>(c: &'a Container, name: &str) -> Option<&'a str> {
    c.env.as_ref()?.iter().find(|e| e.name == name)?.value.as_deref()
}

/// Where the container reads its podinit config (`--config FILE` in its
/// command or args, else `PODINIT_CONFIG`).
fn config_path_in_container(c: &Container) -> String {
    let argv: Vec<&str> =
        c.command.iter().flatten().chain(c.args.iter().flatten()).map(String::as_str).collect();
    assert_eq!(argv.first().copied(), Some("/podinit"), "the container's command runs podinit: {argv:?}");
    if let Some(i) = argv.iter().position(|a| *a == "--config" || *a == "-c") {
        return argv.get(i + 1).expect("--config FILE").to_string();
    }
    env_var(c, "PODINIT_CONFIG").expect("podinit gets --config or PODINIT_CONFIG").to_owned()
}

/// The podinit config the container reads: the ConfigMap key mounted at the
/// path from [`config_path_in_container`].
fn podinit_config(m: &Manifest, job: &Job) -> String {
    let pod = job.spec.as_ref().and_then(|s| s.template.spec.as_ref()).unwrap();
    let c = the_container(job);
    let path = config_path_in_container(c);
    let (dir, key) = path.rsplit_once('/').expect("an absolute path");
    let mount = c
        .volume_mounts
        .iter()
        .flatten()
        .find(|vm| vm.mount_path.trim_end_matches('/') == dir)
        .unwrap_or_else(|| panic!("no volume is mounted at {dir} for the config {path}"));
    let volume = pod
        .volumes
        .iter()
        .flatten()
        .find(|v| v.name == mount.name)
        .unwrap_or_else(|| panic!("volume {} is mounted but not declared", mount.name));
    let cm_name = &volume.config_map.as_ref().expect("the config volume is a ConfigMap").name;
    let cm = m
        .config_maps
        .iter()
        .find(|cm| cm.metadata.name.as_deref() == Some(cm_name.as_str()))
        .unwrap_or_else(|| panic!("ConfigMap {cm_name} is not in job.yaml"));
    cm.data
        .as_ref()
        .and_then(|d| d.get(key))
        .unwrap_or_else(|| panic!("ConfigMap {cm_name} has no key {key}"))
        .clone()
}

/// The pod's `termination_grace_period` in whole seconds (rounded up),
/// default 7 s as in The configuration (docs/configuration.md).
fn podinit_budget_secs(toml_text: &str) -> u64 {
    let table: toml::Table = toml::from_str(toml_text).expect("the embedded podinit.toml is TOML");
    let grace = table.get("pod").and_then(|p| p.get("termination_grace_period"));
    let d = match grace {
        None => Duration::from_secs(7),
        Some(toml::Value::Integer(n)) => Duration::from_secs(u64::try_from(*n).expect("not negative")),
        Some(toml::Value::String(s)) => humantime::parse_duration(s).expect("a duration"),
        Some(other) => panic!("termination_grace_period: unexpected {other:?}"),
    };
    d.as_secs() + u64::from(d.subsec_nanos() > 0)
}

#[test]
fn job_yaml_parses_into_the_kubernetes_api_types() {
    let m = parse_manifest();
    assert_eq!(m.jobs.len(), 1, "one Job");
    assert_eq!(m.config_maps.len(), 1, "one ConfigMap with the podinit config");
}

#[test]
fn job_pod_never_restarts_in_place_and_its_grace_covers_podinit_budget() {
    let m = parse_manifest();
    let job = &m.jobs[0];
    let pod = job.spec.as_ref().and_then(|s| s.template.spec.as_ref()).unwrap();
    // A Job's pod template must be Never or OnFailure; with Never a failed run
    // is a new pod, and the job's exit status is the pod's.
    assert_eq!(pod.restart_policy.as_deref(), Some("Never"));
    let budget = podinit_budget_secs(&podinit_config(&m, job));
    let tgps = pod.termination_grace_period_seconds.expect("terminationGracePeriodSeconds is set");
    let tgps = u64::try_from(tgps).expect("not negative");
    // podinit needs its budget plus the 2 s floor of a stop signal; more than
    // ~10 s beyond that only delays a stuck pod's end.
    assert!(
        tgps > budget + 2,
        "terminationGracePeriodSeconds {tgps} must exceed podinit's budget {budget}s + 2s floor"
    );
    assert!(
        tgps <= budget + 2 + 10,
        "terminationGracePeriodSeconds {tgps} is far above podinit's budget {budget}s"
    );
}

#[test]
fn job_probes_use_podinit_http_endpoint() {
    let m = parse_manifest();
    let job = &m.jobs[0];
    let c = the_container(job);
    // The probes are httpGet on podinit's own endpoint ([pod] http).
    let toml_text = podinit_config(&m, job);
    let table: toml::Table = toml::from_str(&toml_text).unwrap();
    let http = table.get("pod").and_then(|p| p.get("http")).and_then(|h| h.as_str()).expect("[pod] http");
    let port: i32 = http.rsplit(':').next().unwrap().parse().unwrap();
    let named = |p: &Probe| {
        let get = p.http_get.as_ref().expect("an httpGet probe");
        let port_of = match &get.port {
            k8s_openapi::apimachinery::pkg::util::intstr::IntOrString::Int(n) => *n,
            k8s_openapi::apimachinery::pkg::util::intstr::IntOrString::String(name) => c
                .ports
                .iter()
                .flatten()
                .find(|cp| cp.name.as_deref() == Some(name.as_str()))
                .map(|cp| cp.container_port)
                .unwrap_or_else(|| panic!("no container port named {name}")),
        };
        (get.path.clone().unwrap_or_default(), port_of)
    };
    let readiness = named(c.readiness_probe.as_ref().expect("a readiness probe"));
    assert_eq!(
        readiness,
        ("/readyz".to_owned(), port),
        "readiness: /readyz answers 200 when the pod is ready"
    );
    let liveness = named(c.liveness_probe.as_ref().expect("a liveness probe"));
    assert_eq!(liveness, ("/livez".to_owned(), port), "liveness: /livez answers while podinit runs");
    // `podinit status` (kubectl exec) finds the socket from PODINIT_CONFIG's
    // status_socket: it must see the same config podinit runs with.
    if let Some(sock) = table.get("pod").and_then(|p| p.get("status_socket")).and_then(|s| s.as_str()) {
        assert_eq!(
            env_var(c, "PODINIT_CONFIG").map(str::to_owned),
            Some(config_path_in_container(c)),
            "with a status_socket in the config, PODINIT_CONFIG must name the config so that the probes find it"
        );
        // On a read-only root file system the socket's directory must be a volume.
        let read_only = c.security_context.as_ref().and_then(|s| s.read_only_root_filesystem) == Some(true);
        if read_only {
            let dir = Path::new(sock).parent().unwrap().to_str().unwrap();
            assert!(
                c.volume_mounts
                    .iter()
                    .flatten()
                    .any(|vm| vm.mount_path.trim_end_matches('/') == dir && vm.read_only != Some(true)),
                "status_socket {sock}: its directory must be a writable volume on a read-only root"
            );
        }
    }
}

#[test]
fn job_podinit_config_passes_podinit_check() {
    let m = parse_manifest();
    let toml_text = podinit_config(&m, &m.jobs[0]);
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("podinit.toml");
    std::fs::write(&path, &toml_text).unwrap();
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_podinit"));
    cmd.arg("check").arg("--config").arg(&path).env_remove("PODINIT_CONFIG");
    let (code, stdout, stderr) = run_with_deadline(cmd, Duration::from_secs(20));
    assert_eq!(code, Some(0), "podinit check failed\n--- stdout ---\n{stdout}\n--- stderr ---\n{stderr}");
    // The plan names both entries with their roles.
    let sidecar = stdout.lines().any(|l| l.contains("sidecar"));
    let main = stdout.lines().any(|l| l.contains(" main "));
    assert!(sidecar && main, "the plan should show a sidecar and a main:\n{stdout}");
}

/// Runs `cmd` to its end, killing it (and failing) past `deadline`; returns
/// its exit code, stdout and stderr.
fn run_with_deadline(mut cmd: Command, deadline: Duration) -> (Option<i32>, String, String) {
    let mut child = cmd
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn podinit");
    let read = |mut r: Box<dyn Read + Send>| {
        std::thread::spawn(move || {
            let mut s = Vec::new();
            let _ = r.read_to_end(&mut s);
            String::from_utf8_lossy(&s).into_owned()
        })
    };
    let out = read(Box::new(child.stdout.take().unwrap()));
    let err = read(Box::new(child.stderr.take().unwrap()));
    let until = Instant::now() + deadline;
    let status = loop {
        if let Some(st) = child.try_wait().expect("try_wait") {
            break st;
        }
        if Instant::now() > until {
            let _ = child.kill();
            let _ = child.wait();
            panic!("{cmd:?} did not exit within {deadline:?}");
        }
        std::thread::sleep(Duration::from_millis(10));
    };
    (status.code(), out.join().unwrap(), err.join().unwrap())
}

/// The Job's podFailurePolicy fails the Job at once on the statuses podinit
/// itself uses for mistakes a retry cannot mend: a config error and its own
/// active_deadline. They must be the numbers podinit really uses.
#[test]
fn job_pod_failure_policy_names_podinits_own_statuses() {
    let m = parse_manifest();
    let job = &m.jobs[0];
    let spec = job.spec.as_ref().expect("job spec");
    let policy = spec.pod_failure_policy.as_ref().expect("a podFailurePolicy");
    let rule = policy.rules.iter().find(|r| r.action == "FailJob").expect("a FailJob rule");
    let codes = rule.on_exit_codes.as_ref().expect("onExitCodes");
    assert_eq!(codes.container_name.as_deref(), Some(the_container(job).name.as_str()));
    assert_eq!(codes.operator, "In");
    let mut values = codes.values.clone();
    values.sort_unstable();
    assert_eq!(
        values,
        vec![podinit::lifecycle::exit_status::USAGE, podinit::lifecycle::exit_status::DEADLINE_EXCEEDED]
    );
    // podFailurePolicy needs a pod that never restarts in place.
    let pod = spec.template.spec.as_ref().expect("pod spec");
    assert_eq!(pod.restart_policy.as_deref(), Some("Never"));
}
