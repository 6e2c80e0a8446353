//! The `grpc` probe: one call of the standard gRPC Health Checking Protocol,
//! `grpc.health.v1.Health/Check`, over plain-text HTTP/2 with prior knowledge
//! (h2c), as the kubelet makes it (KEP-2727; kubernetes.io "Configure Probes",
//! gRPC probes: no TLS, no auth; success iff the status is SERVING).
//!
//! Owns the wire format of that one call: the two tiny protobuf messages are
//! encoded and decoded by hand, with the 5-byte gRPC message framing, over the
//! bare `h2` crate (a gRPC framework would cost ~0.4 MB more of the static
//! binary, STYLE.md "Size"). The HTTP/2 connection is driven inside the call's
//! own future, never spawned, so dropping the call (the probe's timeout)
//! closes the connection and leaves nothing behind.
//!
//! It must never retry, never wait without a caller's timeout around it (it has
//! no time limit of its own), never send a compressed message or accept one,
//! and never read more than [`MAX_BODY`] bytes of a response.

use std::io;

use bytes::Bytes;
use http::{HeaderMap, Method, Request, StatusCode};
use tokio::net::TcpStream;

/// Most bytes of a response body read (one HealthCheckResponse is 2 bytes
/// plus 5 of framing).
pub const MAX_BODY: usize = 4096;

/// `HealthCheckResponse.ServingStatus.SERVING` (grpc/health/v1/health.proto).
pub const SERVING: u64 = 1;

/// Why a health check did not report SERVING.
#[derive(Debug, thiserror::Error)]
pub enum CheckError {
    /// The TCP connection could not be made.
    #[error("connect: {0}")]
    Connect(#[source] io::Error),
    /// HTTP/2 failed: handshake, stream reset, GOAWAY, a server that does not
    /// speak h2c.
    #[error("HTTP/2: {0}")]
    Http2(#[from] h2::Error),
    /// The request could not be built (a host that is not a valid authority).
    #[error("request: {0}")]
    Request(#[from] http::Error),
    /// The HTTP status was not 200.
    #[error("HTTP status {0}")]
    HttpStatus(StatusCode),
    /// The call ended with a non-zero `grpc-status` (5 NOT_FOUND: unknown
    /// service; 12 UNIMPLEMENTED: no health service).
    #[error("grpc-status {code}: {message}")]
    Status { code: u32, message: String },
    /// The call succeeded with a status other than SERVING.
    #[error("serving status {0} ({name})", name = status_name(*.0))]
    NotServing(u64),
    /// The response did not follow the protocol.
    #[error("malformed response: {0}")]
    Malformed(&'static str),
}

/// Asks the gRPC health service at `host:port` about `service` (empty: the
/// server as a whole). `Ok(())` iff the answer is SERVING; any other status,
/// `grpc-status`, HTTP status or transport error is an error.
///
/// No time limit of its own: the caller bounds it (the probe's `timeout`).
pub async fn check(host: &str, port: u16, service: &str) -> Result<(), CheckError> {
    let tcp = TcpStream::connect((host, port)).await.map_err(CheckError::Connect)?;
    let _ = tcp.set_nodelay(true);
    let (client, connection) = h2::client::Builder::new().enable_push(false).handshake(tcp).await?;
    let driver = async move {
        // Errors reach the stream too; after the end, let the call finish
        // with what it has already received.
        let _ = connection.await;
        std::future::pending::<()>().await
    };
    let authority = if host.contains(':') { format!("[{host}]:{port}") } else { format!("{host}:{port}") };
    tokio::select! {
        biased;
        result = call(client, &authority, service) => result,
        () = driver => Err(CheckError::Malformed("connection ended")),
    }
}

async fn call(
    client: h2::client::SendRequest<Bytes>,
    authority: &str,
    service: &str,
) -> Result<(), CheckError> {
    let request = Request::builder()
        .method(Method::POST)
        .uri(format!("http://{authority}/grpc.health.v1.Health/Check"))
        .header("content-type", "application/grpc")
        .header("te", "trailers")
        .header("user-agent", concat!("podinit/", env!("CARGO_PKG_VERSION")))
        .body(())?;
    let mut client = client.ready().await?;
    let (response, mut send) = client.send_request(request, false)?;
    send.send_data(encode_request(service)?, true)?;
    let (head, mut body) = response.await?.into_parts();
    if head.status != StatusCode::OK {
        return Err(CheckError::HttpStatus(head.status));
    }
    // A trailers-only response (how servers answer errors such as NOT_FOUND)
    // carries grpc-status in its headers.
    if head.headers.contains_key("grpc-status") {
        grpc_status(&head.headers)?;
        return Err(CheckError::Malformed("no message"));
    }
    let mut message = Vec::new();
    while let Some(chunk) = body.data().await {
        let chunk = chunk?;
        let _ = body.flow_control().release_capacity(chunk.len());
        if message.len() + chunk.len() > MAX_BODY {
            return Err(CheckError::Malformed("response too long"));
        }
        message.extend_from_slice(&chunk);
    }
    let trailers = body.trailers().await?.ok_or(CheckError::Malformed("no trailers"))?;
    grpc_status(&trailers)?;
    match decode_response(&message)? {
        SERVING => Ok(()),
        other => Err(CheckError::NotServing(other)),
    }
}

/// `Ok` when `grpc-status` is 0; missing counts as malformed.
fn grpc_status(headers: &HeaderMap) -> Result<(), CheckError> {
    let code = headers
        .get("grpc-status")
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.trim().parse::<u32>().ok())
        .ok_or(CheckError::Malformed("no grpc-status"))?;
    if code == 0 {
        return Ok(());
    }
    let message = headers
        .get("grpc-message")
        .map(|v| String::from_utf8_lossy(v.as_bytes()).into_owned())
        .unwrap_or_default();
    Err(CheckError::Status { code, message })
}

/// `HealthCheckRequest { string service = 1; }` in one uncompressed gRPC
/// message frame (flag byte 0, 4-byte big-endian length, message).
fn encode_request(service: &str) -> Result<Bytes, CheckError> {
    let mut message = Vec::with_capacity(service.len() + 6);
    if !service.is_empty() {
        message.push(0x0a); // field 1, wire type 2 (length-delimited)
        put_varint(&mut message, service.len() as u64);
        message.extend_from_slice(service.as_bytes());
    }
    let len = u32::try_from(message.len()).map_err(|_| CheckError::Malformed("service name too long"))?;
    let mut frame = Vec::with_capacity(5 + message.len());
    frame.push(0);
    frame.extend_from_slice(&len.to_be_bytes());
    frame.extend_from_slice(&message);
    Ok(Bytes::from(frame))
}

/// The `status` of exactly one framed `HealthCheckResponse { ServingStatus
/// status = 1; }` (absent: 0, UNKNOWN, as proto3 omits default values).
fn decode_response(body: &[u8]) -> Result<u64, CheckError> {
    let (&flag, rest) = body.split_first().ok_or(CheckError::Malformed("no message"))?;
    if flag != 0 {
        return Err(CheckError::Malformed("compressed message"));
    }
    let (len, message) = rest.split_at_checked(4).ok_or(CheckError::Malformed("short message frame"))?;
    let len = u32::from_be_bytes([len[0], len[1], len[2], len[3]]) as usize;
    if message.len() != len {
        return Err(CheckError::Malformed("message length does not match its frame"));
    }
    let mut status = 0;
    let mut at = 0;
    while at < message.len() {
        let key = varint(message, &mut at)?;
        let skip = match (key >> 3, key & 7) {
            (1, 0) => {
                status = varint(message, &mut at)?;
                0
            }
            (_, 0) => {
                varint(message, &mut at)?;
                0
            }
            (_, 1) => 8,
            (_, 2) => usize::try_from(varint(message, &mut at)?).unwrap_or(usize::MAX),
            (_, 5) => 4,
            _ => return Err(CheckError::Malformed("unknown protobuf wire type")),
        };
        at = at
            .checked_add(skip)
            .filter(|&end| end <= message.len())
            .ok_or(CheckError::Malformed("truncated field"))?;
    }
    Ok(status)
}

fn put_varint(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

fn varint(buf: &[u8], at: &mut usize) -> Result<u64, CheckError> {
    let mut v = 0u64;
    for shift in (0..64).step_by(7) {
        let &b = buf.get(*at).ok_or(CheckError::Malformed("truncated varint"))?;
        *at += 1;
        v |= u64::from(b & 0x7f) << shift;
        if b & 0x80 == 0 {
            return Ok(v);
        }
    }
    Err(CheckError::Malformed("varint too long"))
}

/// The name of a `ServingStatus` value, for messages.
fn status_name(status: u64) -> &'static str {
    match status {
        0 => "UNKNOWN",
        1 => "SERVING",
        2 => "NOT_SERVING",
        3 => "SERVICE_UNKNOWN",
        _ => "not a ServingStatus",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn encodes_requests() {
        assert_eq!(&encode_request("").unwrap()[..], &[0, 0, 0, 0, 0]);
        assert_eq!(&encode_request("db").unwrap()[..], &[0, 0, 0, 0, 4, 0x0a, 2, b'd', b'b']);
        let long = "x".repeat(200);
        let framed = encode_request(&long).unwrap();
        assert_eq!(&framed[..8], &[0, 0, 0, 0, 203, 0x0a, 0xc8, 0x01]);
    }

    #[test]
    fn decodes_responses() {
        assert_eq!(decode_response(&[0, 0, 0, 0, 2, 0x08, 1]).unwrap(), SERVING);
        assert_eq!(decode_response(&[0, 0, 0, 0, 2, 0x08, 2]).unwrap(), 2);
        // Status omitted (UNKNOWN), and an unknown field skipped.
        assert_eq!(decode_response(&[0, 0, 0, 0, 0]).unwrap(), 0);
        assert_eq!(decode_response(&[0, 0, 0, 0, 5, 0x12, 1, b'x', 0x08, 1]).unwrap(), SERVING);
    }

    #[test]
    fn refuses_malformed_responses() {
        for bad in [
            &[][..],
            &[1, 0, 0, 0, 2, 0x08, 1],
            &[0, 0, 0, 0, 3, 0x08, 1],
            &[0, 0, 0],
            &[0, 0, 0, 0, 2, 0x08, 0x80],
            &[0, 0, 0, 0, 2, 0x12, 5],
            &[0, 0, 0, 0, 2, 0x0b, 1],
        ] {
            assert!(decode_response(bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn reads_grpc_status() {
        let mut h = HeaderMap::new();
        assert!(grpc_status(&h).is_err());
        h.insert("grpc-status", "0".parse().unwrap());
        assert!(grpc_status(&h).is_ok());
        h.insert("grpc-status", "5".parse().unwrap());
        h.insert("grpc-message", "unknown service".parse().unwrap());
        assert!(matches!(grpc_status(&h), Err(CheckError::Status { code: 5, .. })));
    }
}
