//! The configuration (docs/configuration.md) probe kinds against real servers: `http_get` with `scheme =
//! "https"` (a self-signed certificate is accepted, as in Kubernetes; TLS 1.2
//! and 1.3), custom `headers` on plain HTTP and HTTPS, and `grpc` (the
//! standard health protocol, served by tonic-health over h2c).
//!
//! Each pod is one sidecar gated by a startup probe and one main: a passing
//! probe lets the main start and the pod end with 0; a failing one never lets
//! it start, and SIGTERM then ends podinit with 143 (128 + SIGTERM, no main
//! ran). The servers run in this test process, each on its own thread with a
//! current-thread tokio runtime, and stop when their guard is dropped.

mod common;
use common::*;

use std::sync::{Arc, Mutex};
use std::thread;
use std::time::{Duration, Instant};

use rustls::pki_types::{PrivateKeyDer, PrivatePkcs8KeyDer};
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};
use tokio::sync::oneshot;
use tokio_rustls::TlsAcceptor;

/// What an HTTP test server saw of one request.
#[derive(Debug, Clone)]
struct Seen {
    /// SNI of the TLS handshake (`None` on plain HTTP or without SNI).
    sni: Option<String>,
    /// Header lines, names lowercased: `name: value`.
    headers: Vec<String>,
}

/// A server running on its own thread; stops when dropped.
struct Server {
    port: u16,
    seen: Arc<Mutex<Vec<Seen>>>,
    _stop: oneshot::Sender<()>,
}

impl Server {
    fn seen(&self) -> Vec<Seen> {
        self.seen.lock().unwrap().clone()
    }
}

/// Runs `serve(listener, seen, stop)` on a new thread with a current-thread
/// runtime, on a listener already bound to a free port of 127.0.0.1.
fn spawn_server<F, Fut>(serve: F) -> Server
where
    F: FnOnce(tokio::net::TcpListener, Arc<Mutex<Vec<Seen>>>, oneshot::Receiver<()>) -> Fut + Send + 'static,
    Fut: std::future::Future<Output = ()>,
{
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind 127.0.0.1:0");
    listener.set_nonblocking(true).unwrap();
    let port = listener.local_addr().unwrap().port();
    let seen = Arc::new(Mutex::new(Vec::new()));
    let (stop, stopped) = oneshot::channel();
    let seen2 = Arc::clone(&seen);
    thread::spawn(move || {
        let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
        rt.block_on(async move {
            let listener = tokio::net::TcpListener::from_std(listener).unwrap();
            serve(listener, seen2, stopped).await;
        });
    });
    Server { port, seen, _stop: stop }
}

/// An HTTP/1.1 server answering 200 to every request, over TLS when
/// `tls` is given; records each request's headers (and SNI).
fn http_server(tls: Option<TlsAcceptor>) -> Server {
    spawn_server(move |listener, seen, mut stopped| async move {
        loop {
            let (tcp, _) = tokio::select! {
                r = listener.accept() => match r { Ok(c) => c, Err(_) => continue },
                _ = &mut stopped => return,
            };
            let seen = Arc::clone(&seen);
            let tls = tls.clone();
            tokio::spawn(async move {
                match tls {
                    None => answer(tcp, None, &seen).await,
                    Some(acceptor) => {
                        // A failed handshake is the client's business.
                        if let Ok(stream) = acceptor.accept(tcp).await {
                            let sni = stream.get_ref().1.server_name().map(str::to_owned);
                            answer(stream, sni, &seen).await;
                        }
                    }
                }
            });
        }
    })
}

/// Reads one request head, records it, answers 200 and closes.
async fn answer<S: AsyncRead + AsyncWrite + Unpin>(mut s: S, sni: Option<String>, seen: &Mutex<Vec<Seen>>) {
    let mut head = Vec::new();
    let mut buf = [0u8; 1024];
    let read = async {
        while !head.windows(4).any(|w| w == b"\r\n\r\n") && head.len() < 16384 {
            match s.read(&mut buf).await {
                Ok(0) | Err(_) => return false,
                Ok(n) => head.extend_from_slice(&buf[..n]),
            }
        }
        true
    };
    if !matches!(tokio::time::timeout(Duration::from_secs(5), read).await, Ok(true)) {
        return;
    }
    let text = String::from_utf8_lossy(&head);
    let headers = text
        .split("\r\n")
        .skip(1)
        .take_while(|l| !l.is_empty())
        .filter_map(|l| l.split_once(':'))
        .map(|(k, v)| format!("{}: {}", k.trim().to_ascii_lowercase(), v.trim()))
        .collect();
    seen.lock().unwrap().push(Seen { sni, headers });
    let _ = s.write_all(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: close\r\n\r\nok").await;
    let _ = s.shutdown().await;
}

/// A TLS acceptor with a fresh self-signed certificate for `localhost`,
/// limited to `versions`.
fn self_signed_acceptor(versions: &[&'static rustls::SupportedProtocolVersion]) -> TlsAcceptor {
    let ck = rcgen::generate_simple_self_signed(vec!["localhost".to_string()]).unwrap();
    let key = PrivateKeyDer::Pkcs8(PrivatePkcs8KeyDer::from(ck.key_pair.serialize_der()));
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let config = rustls::ServerConfig::builder_with_provider(provider)
        .with_protocol_versions(versions)
        .unwrap()
        .with_no_client_auth()
        .with_single_cert(vec![ck.cert.der().clone()], key)
        .unwrap();
    TlsAcceptor::from(Arc::new(config))
}

/// A gRPC server with the standard health service: SERVING for "" (the
/// server), NOT_SERVING for "sick", NOT_FOUND for any other name.
fn grpc_health_server() -> Server {
    spawn_server(|listener, _seen, stopped| async move {
        let (reporter, service) = tonic_health::server::health_reporter();
        reporter.set_service_status("", tonic_health::ServingStatus::Serving).await;
        reporter.set_service_status("sick", tonic_health::ServingStatus::NotServing).await;
        let incoming = tokio_stream::wrappers::TcpListenerStream::new(listener);
        let _ = tonic::transport::Server::builder()
            .add_service(service)
            .serve_with_incoming_shutdown(incoming, async {
                let _ = stopped.await;
            })
            .await;
        drop(reporter);
    })
}

/// A pod of one sidecar gated by `startup_probe = { PROBE, period = "100ms",
/// failure_threshold = N }` and one main; both record their start. The probe
/// asks a server of this test, not the sidecar, so it can pass before the
/// sidecar's shell has written its line: the main waits for that line (5 s
/// at most) before it writes its own.
fn pod(probe: &str, failure_threshold: u32) -> String {
    let mut cfg = String::from("[pod]\ntermination_grace_period = \"2s\"\n\n");
    cfg += &entry(
        "side",
        "sidecar",
        "echo side-started >> \"@REC@\"\nexec sleep 30",
        &format!(
            "startup_probe = {{ {probe}, period = \"100ms\", failure_threshold = {failure_threshold} }}"
        ),
    );
    cfg += &entry(
        "app",
        "main",
        &format!("{}\necho app-started >> \"@REC@\"", sh_wait_records("side-started", 1, 5)),
        "",
    );
    cfg
}

/// Runs a pod whose probe must pass: the main starts after the sidecar and
/// podinit exits 0 within a few seconds.
fn assert_probe_passes(probe: &str) {
    let td = TestDir::new();
    let path = td.config(&pod(probe, 50));
    let out = td.podinit().config(&path).env("PODINIT_LOG", "debug").deadline(secs(15.0)).run();
    out.assert_code(0);
    assert_eq!(out.records, vec!["side-started", "app-started"], "{}", out.report());
    assert!(out.elapsed < secs(8.0), "took {:?}\n{}", out.elapsed, out.report());
}

/// Runs a pod whose probe must keep failing: after ~1.5 s (and a debug line
/// containing `why` from a failed attempt) the main has not started; SIGTERM
/// then ends podinit with 143.
fn assert_probe_fails(probe: &str, why: &str) {
    let td = TestDir::new();
    let path = td.config(&pod(probe, 1000));
    let started = Instant::now();
    let mut run = td.podinit().config(&path).env("PODINIT_LOG", "debug").deadline(secs(15.0)).spawn();
    run.wait_for_record("side-started", secs(5.0));
    run.wait_for_stderr_containing(why, secs(5.0));
    thread::sleep(secs(1.5).saturating_sub(started.elapsed()));
    assert!(run.is_running(), "podinit ended early\n{}", run.report());
    assert!(!td.records().iter().any(|r| r == "app-started"), "main started\n{}", run.report());
    run.signal(SIGTERM);
    let out = run.wait();
    out.assert_code(143);
    assert_eq!(out.records, vec!["side-started"], "{}", out.report());
}

#[test]
fn https_probe_accepts_a_self_signed_certificate_and_sends_sni_and_headers() {
    let server = http_server(Some(self_signed_acceptor(&[&rustls::version::TLS13])));
    assert_probe_passes(&format!(
        r#"http_get = {{ host = "localhost", port = {}, scheme = "https", path = "/healthz", headers = {{ X-Probe-Token = "s3cret", Host = "app.example" }} }}"#,
        server.port
    ));
    let seen = server.seen();
    let first = seen.first().expect("the server saw no request");
    assert_eq!(first.sni.as_deref(), Some("localhost"), "{seen:#?}");
    for h in ["x-probe-token: s3cret", "host: app.example", "accept: */*"] {
        assert!(first.headers.iter().any(|l| l == h), "{h:?} missing: {seen:#?}");
    }
}

#[test]
fn https_probe_works_with_a_tls12_only_server() {
    let server = http_server(Some(self_signed_acceptor(&[&rustls::version::TLS12])));
    assert_probe_passes(&format!(r#"http_get = {{ port = {}, scheme = "https" }}"#, server.port));
    let seen = server.seen();
    let first = seen.first().expect("the server saw no request");
    // An IP address is never sent as SNI (as Go's client, the kubelet's).
    assert_eq!(first.sni, None, "{seen:#?}");
}

#[test]
fn https_probe_to_a_port_without_a_server_never_starts_the_main() {
    let port = free_port();
    assert_probe_fails(
        &format!(r#"http_get = {{ port = {port}, scheme = "https" }}"#),
        &format!("startup probe failing: http_get 127.0.0.1:{port}/"),
    );
}

#[test]
fn https_probe_of_a_plain_http_server_never_starts_the_main() {
    // The server waits for a request head that never comes: each attempt
    // ends at its 1 s timeout.
    let server = http_server(None);
    assert_probe_fails(
        &format!(r#"http_get = {{ port = {}, scheme = "https" }}"#, server.port),
        "side startup probe failed (1/1000)",
    );
}

#[test]
fn http_probe_sends_custom_headers() {
    let server = http_server(None);
    assert_probe_passes(&format!(
        r#"http_get = {{ port = {}, path = "/ready", headers = {{ X-Custom = "abc", User-Agent = "probe-agent/1", Accept = "" }} }}"#,
        server.port
    ));
    let seen = server.seen();
    let first = seen.first().expect("the server saw no request");
    for h in ["x-custom: abc", "user-agent: probe-agent/1", &format!("host: 127.0.0.1:{}", server.port)] {
        assert!(first.headers.iter().any(|l| l == h), "{h:?} missing: {seen:#?}");
    }
    // An empty value removes a default header (as Kubernetes' httpHeaders).
    assert!(!first.headers.iter().any(|l| l.starts_with("accept:")), "{seen:#?}");
    assert_eq!(first.headers.iter().filter(|l| l.starts_with("user-agent:")).count(), 1, "{seen:#?}");
}

#[test]
fn grpc_probe_passes_when_the_server_is_serving() {
    let server = grpc_health_server();
    assert_probe_passes(&format!("grpc = {{ port = {} }}", server.port));
}

#[test]
fn grpc_probe_of_a_not_serving_service_never_starts_the_main() {
    let server = grpc_health_server();
    assert_probe_fails(&format!(r#"grpc = {{ port = {}, service = "sick" }}"#, server.port), "NOT_SERVING");
}

#[test]
fn grpc_probe_of_an_unknown_service_never_starts_the_main() {
    let server = grpc_health_server();
    assert_probe_fails(&format!(r#"grpc = {{ port = {}, service = "nope" }}"#, server.port), "grpc-status 5");
}

#[test]
fn grpc_probe_of_an_http1_server_never_starts_the_main() {
    let server = http_server(None);
    assert_probe_fails(
        &format!("grpc = {{ port = {} }}", server.port),
        &format!("startup probe failing: grpc 127.0.0.1:{}", server.port),
    );
}
