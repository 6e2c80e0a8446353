//! Runs probe attempts and hooks: exec, tcp_socket, http_get, grpc (and sleep hooks).
//!
//! One attempt gives one bool; counting thresholds and deciding what a result
//! means is the lifecycle's job. An attempt that outlives its timeout is a
//! failure, and an exec attempt's whole process group is then killed (Kubernetes
//! does the same since 1.20, `ExecProbeTimeout`). Exec attempts are spawned and
//! reaped through the reaper like everything else, never waited on here.
//!
//! The HTTP client is a few dozen lines of HTTP/1.1 on purpose: a probe needs a
//! status line and a `Location` header, not a client library (hyper's http1
//! client alone is ~230 KB of the static binary, STYLE.md). As in Kubernetes:
//! success is a status of 200-399; a redirect is followed only to the same host
//! and port, at most 10 times, and a redirect elsewhere counts as success
//! (kubernetes.io "Configure Probes", HTTP probes). The same code speaks over
//! TLS for `scheme = "https"`, without verifying the certificate (`tls.rs`);
//! grpc attempts are `grpc.rs`'s.

#[cfg(feature = "grpc")]
pub mod grpc;
pub mod push;
#[cfg(feature = "https")]
pub mod tls;

use std::rc::Rc;
use std::time::Duration;

use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio::sync::oneshot;

use crate::config::Scheme;
use crate::config::{EntrySpec, HttpGet, ProbeAction};
use crate::lifecycle::exit_status::Exit;
use crate::runtime::reaper::{Reaper, Waiter};
use crate::runtime::spawn::{command, spawn, SpawnError, Stdio3};

/// Most bytes of an HTTP response head read before giving up on it.
const MAX_HEAD: usize = 16 * 1024;
/// How long a timed-out exec attempt, once SIGKILLed, is waited for.
const REAP_WAIT: Duration = Duration::from_secs(1);
/// Most redirects followed (as Go's client, which the kubelet uses).
const MAX_REDIRECTS: usize = 10;

/// Why a probe attempt or a hook failed; its text is what the logs say.
#[derive(Debug, thiserror::Error)]
pub enum Failure {
    /// The exec attempt's program could not be started.
    #[error(transparent)]
    Spawn(#[from] SpawnError),
    /// The exec attempt exited with something other than 0.
    #[error("{program} exited with {exit}")]
    Exited { program: String, exit: Exit },
    /// The exec attempt outlived its timeout; its group was killed.
    #[error("{program} killed after {}", humantime::format_duration(*after))]
    Killed { program: String, after: Duration },
    /// The attempt's target did not answer within the timeout.
    #[error("{target}: no answer within {}", humantime::format_duration(*after))]
    NoAnswer { target: String, after: Duration },
    #[error("tcp {host}:{port}: {source}")]
    Tcp { host: String, port: u16, source: std::io::Error },
    #[error("http_get {host}:{port}{path}: {source}")]
    Http { host: String, port: u16, path: String, source: std::io::Error },
    #[error("http_get {host}:{port}{path}: status {status}")]
    HttpStatus { host: String, port: u16, path: String, status: u16 },
    #[cfg(feature = "grpc")]
    #[error("grpc {host}:{port} service {service:?}: {source}")]
    Grpc { host: String, port: u16, service: String, source: crate::probe::grpc::CheckError },
    /// The probe needs a feature this podinit was built without (validation
    /// refuses such a config; kept so that no path can panic).
    #[error("this podinit was built without the {0} feature")]
    NotBuilt(&'static str),
    /// A push probe (notify, fd, log_line) has no attempts: the process
    /// reports (`push.rs`).
    #[error("{0} is reported by the process, not tried (a bug in podinit)")]
    NotTried(&'static str),
    /// podinit is shutting down under the attempt.
    #[error("podinit is exiting")]
    Exiting,
    /// A bug in podinit: the attempt panicked.
    #[error("panicked (a bug in podinit): {0}")]
    Panicked(String),
}

/// Which results of one probe the lifecycle needs: every failure, and
/// successes until `success_threshold` of them are in a row. Later successes
/// change nothing (the probe passes already) and are not sent, so a pod of
/// passing probes costs the event loop nothing between failures.
#[derive(Debug, Clone, Copy)]
pub struct Results {
    in_a_row: u32,
    needed: u32,
}

impl Results {
    /// For a probe that passes after `success_threshold` successes in a row.
    pub fn new(success_threshold: u32) -> Results {
        Results { in_a_row: 0, needed: success_threshold.max(1) }
    }

    /// Whether this result must reach the lifecycle.
    pub fn worth_sending(&mut self, ok: bool) -> bool {
        if !ok {
            self.in_a_row = 0;
            return true;
        }
        self.in_a_row = self.in_a_row.saturating_add(1);
        self.in_a_row <= self.needed
    }
}

/// One attempt of `action` for `entry`, bounded by `timeout`.
///
/// # Errors
/// The [`Failure`] that says why it did not pass.
pub async fn attempt(
    reaper: &Rc<Reaper>,
    entry: &EntrySpec,
    action: &ProbeAction,
    timeout: Duration,
) -> Result<(), Failure> {
    let late = |target: String| Failure::NoAnswer { target, after: timeout };
    match action {
        ProbeAction::Exec { argv } => exec(reaper, entry, argv, Some(timeout)).await,
        ProbeAction::TcpSocket { host, port } => {
            match tokio::time::timeout(timeout, TcpStream::connect((host.as_str(), *port))).await {
                Ok(Ok(_)) => Ok(()),
                Ok(Err(source)) => Err(Failure::Tcp { host: host.clone(), port: *port, source }),
                Err(_) => Err(late(format!("tcp {host}:{port}"))),
            }
        }
        ProbeAction::HttpGet(get) => tokio::time::timeout(timeout, http_get(get))
            .await
            .unwrap_or_else(|_| Err(late(format!("http_get {}:{}{}", get.host, get.port, get.path)))),
        #[cfg(not(feature = "grpc"))]
        ProbeAction::Grpc { .. } => Err(Failure::NotBuilt("grpc")),
        #[cfg(feature = "grpc")]
        ProbeAction::Grpc { host, port, service } => {
            match tokio::time::timeout(timeout, crate::probe::grpc::check(host, *port, service)).await {
                Ok(Ok(())) => Ok(()),
                Ok(Err(source)) => {
                    Err(Failure::Grpc { host: host.clone(), port: *port, service: service.clone(), source })
                }
                Err(_) => Err(late(format!("grpc {host}:{port}"))),
            }
        }
        ProbeAction::Notify => Err(Failure::NotTried("notify")),
        ProbeAction::Fd { .. } => Err(Failure::NotTried("fd")),
        ProbeAction::LogLine(_) => Err(Failure::NotTried("log_line")),
    }
}

/// Kills an exec attempt's process group if the attempt is dropped unfinished
/// (timeout, or its probe was stopped), unless it has been reaped meanwhile:
/// the reaper refuses a reaped pid, which may belong to someone else by now.
struct KillOnDrop<'a>(&'a Reaper, Option<i32>);

impl Drop for KillOnDrop<'_> {
    fn drop(&mut self) {
        if let Some(pid) = self.1 {
            let _ = self.0.signal_group(pid, crate::config::Signal::KILL);
        }
    }
}

/// Runs `argv` with the entry's environment, directory and user; `Ok` when it
/// exits 0 within `timeout` (no limit when `None`).
///
/// # Errors
/// The [`Failure`]: not started, exited non-zero, killed at the timeout.
pub async fn exec(
    reaper: &Rc<Reaper>,
    entry: &EntrySpec,
    argv: &crate::config::Argv<String>,
    timeout: Option<Duration>,
) -> Result<(), Failure> {
    let (tx, rx) = oneshot::channel();
    let cmd = command(entry, argv, Stdio3::Null);
    let child = spawn(reaper, cmd, std::ffi::OsStr::new(argv.program()), Waiter::Task(tx))?;
    let mut guard = KillOnDrop(reaper, i32::try_from(child.id()).ok());
    let mut rx = rx;
    let result = match timeout {
        Some(t) => tokio::time::timeout(t, &mut rx).await,
        None => Ok((&mut rx).await),
    };
    match result {
        Ok(Ok(exit)) => {
            guard.1 = None;
            if exit.success() {
                Ok(())
            } else {
                Err(Failure::Exited { program: argv.program().clone(), exit })
            }
        }
        Ok(Err(_)) => Err(Failure::Exiting),
        Err(_) => {
            // Timed out: kill the attempt's whole group now, and wait (a
            // little) until it is reaped, so that attempts never pile up.
            drop(guard);
            let _ = tokio::time::timeout(REAP_WAIT, rx).await;
            Err(Failure::Killed { program: argv.program().clone(), after: timeout.unwrap_or_default() })
        }
    }
}

/// One HTTP GET with redirects: `Ok` for a final status of 200-399, else why not.
///
/// `https` is TLS without certificate verification (`tls.rs`). Connection,
/// TLS and protocol errors are failures (logged at debug level). No time limit
/// of its own: callers bound it.
///
/// # Errors
/// [`Failure::Http`] (connection, TLS, protocol) or [`Failure::HttpStatus`].
pub async fn http_get(get: &HttpGet) -> Result<(), Failure> {
    let mut path = get.path.clone();
    let (host, port) = (&get.host, get.port);
    for _ in 0..=MAX_REDIRECTS {
        let (status, location) = request(get, &path).await.map_err(|source| Failure::Http {
            host: host.clone(),
            port,
            path: path.clone(),
            source,
        })?;
        if !(300..400).contains(&status) {
            return if (200..400).contains(&status) {
                Ok(())
            } else {
                Err(Failure::HttpStatus { host: host.clone(), port, path, status })
            };
        }
        match location.and_then(|l| same_host_path(get, &l)) {
            Some(next) => path = next,
            // A redirect elsewhere (or without Location): the 3xx itself counts.
            None => return Ok(()),
        }
    }
    Ok(())
}

/// The path to follow when `location` stays on the probed scheme, host and port.
fn same_host_path(get: &HttpGet, location: &str) -> Option<String> {
    if location.starts_with('/') {
        return Some(location.to_owned());
    }
    let (prefix, default_port) = match get.scheme {
        Scheme::Http => ("http://", 80),
        Scheme::Https => ("https://", 443),
    };
    let rest = location.strip_prefix(prefix)?;
    let (authority, path) =
        rest.split_once('/').map_or((rest, "/".to_owned()), |(a, p)| (a, format!("/{p}")));
    let (host, port) = match authority.rsplit_once(':') {
        Some((h, p)) => (h, p.parse::<u16>().ok()?),
        None => (authority, default_port),
    };
    (host == get.host && port == get.port).then_some(path)
}

/// One GET of `path` over a new connection: status code and `Location`.
async fn request(get: &HttpGet, path: &str) -> std::io::Result<(u16, Option<String>)> {
    let tcp = TcpStream::connect((get.host.as_str(), get.port)).await?;
    match get.scheme {
        Scheme::Http => exchange(tcp, get, path).await,
        #[cfg(feature = "https")]
        Scheme::Https => exchange(crate::probe::tls::connect(tcp, &get.host).await?, get, path).await,
        #[cfg(not(feature = "https"))]
        Scheme::Https => Err(std::io::Error::other("this podinit was built without the https feature")),
    }
}

/// Writes the request and reads the response head, over plain TCP or TLS.
async fn exchange<S: AsyncRead + AsyncWrite + Unpin>(
    mut stream: S,
    get: &HttpGet,
    path: &str,
) -> std::io::Result<(u16, Option<String>)> {
    let mut req = format!("GET {path} HTTP/1.1\r\n");
    let has = |name: &str| get.headers.iter().any(|(k, _)| k.eq_ignore_ascii_case(name));
    if !has("host") {
        req.push_str(&format!("Host: {}:{}\r\n", get.host, get.port));
    }
    if !has("user-agent") {
        req.push_str(concat!("User-Agent: podinit/", env!("CARGO_PKG_VERSION"), "\r\n"));
    }
    if !has("accept") {
        req.push_str("Accept: */*\r\n");
    }
    for (k, v) in &get.headers {
        if !v.is_empty() {
            req.push_str(&format!("{k}: {v}\r\n"));
        }
    }
    req.push_str("Connection: close\r\n\r\n");
    stream.write_all(req.as_bytes()).await?;
    let mut head = Vec::with_capacity(1024);
    let mut buf = [0u8; 2048];
    while !head.windows(4).any(|w| w == b"\r\n\r\n") && head.len() < MAX_HEAD {
        let n = match stream.read(&mut buf).await {
            Ok(n) => n,
            // A TLS peer that closes without close_notify: parse what came.
            Err(e) if e.kind() == std::io::ErrorKind::UnexpectedEof => 0,
            Err(e) => return Err(e),
        };
        if n == 0 {
            break;
        }
        head.extend_from_slice(&buf[..n]);
    }
    parse_head(&head).ok_or_else(|| std::io::Error::other("malformed HTTP response"))
}

/// Status code and `Location` of a response head.
fn parse_head(head: &[u8]) -> Option<(u16, Option<String>)> {
    let text = String::from_utf8_lossy(head);
    let mut lines = text.split("\r\n");
    let status_line = lines.next()?;
    let mut parts = status_line.split_whitespace();
    if !parts.next()?.starts_with("HTTP/") {
        return None;
    }
    let status = parts.next()?.parse().ok()?;
    let location = lines
        .take_while(|l| !l.is_empty())
        .filter_map(|l| l.split_once(':'))
        .find(|(k, _)| k.trim().eq_ignore_ascii_case("location"))
        .map(|(_, v)| v.trim().to_owned());
    Some((status, location))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_results_the_lifecycle_needs_are_sent() {
        let mut r = Results::new(2);
        let sent: Vec<bool> = [true, true, true, true, false, false, true, true, true]
            .iter()
            .map(|&ok| r.worth_sending(ok))
            .collect();
        assert_eq!(sent, [true, true, false, false, true, true, true, true, false]);
        let mut liveness = Results::new(1);
        assert_eq!(
            [true, true, false, true, true].map(|ok| liveness.worth_sending(ok)),
            [true, false, true, true, false]
        );
    }

    fn get() -> HttpGet {
        HttpGet {
            host: "127.0.0.1".into(),
            port: 8080,
            path: "/".into(),
            scheme: Scheme::Http,
            headers: vec![],
        }
    }

    #[test]
    fn parses_status_and_location() {
        let head = b"HTTP/1.1 302 Found\r\nServer: x\r\nlocation: /next\r\n\r\n";
        assert_eq!(parse_head(head), Some((302, Some("/next".into()))));
        assert_eq!(parse_head(b"HTTP/1.0 200 OK\r\n\r\n"), Some((200, None)));
        assert_eq!(parse_head(b"garbage"), None);
    }

    #[test]
    fn redirects_only_to_same_host() {
        let g = get();
        assert_eq!(same_host_path(&g, "/a"), Some("/a".into()));
        assert_eq!(same_host_path(&g, "http://127.0.0.1:8080/b"), Some("/b".into()));
        assert_eq!(same_host_path(&g, "http://127.0.0.1:9090/b"), None);
        assert_eq!(same_host_path(&g, "http://example.com/b"), None);
        assert_eq!(same_host_path(&g, "https://127.0.0.1:8080/b"), None);
    }

    #[test]
    fn https_redirects_only_to_same_scheme_host_and_port() {
        let g = HttpGet { scheme: Scheme::Https, port: 443, ..get() };
        assert_eq!(same_host_path(&g, "https://127.0.0.1/c"), Some("/c".into()));
        assert_eq!(same_host_path(&g, "https://127.0.0.1:443/c"), Some("/c".into()));
        assert_eq!(same_host_path(&g, "http://127.0.0.1:443/c"), None);
        assert_eq!(same_host_path(&g, "https://127.0.0.1:8443/c"), None);
    }
}
