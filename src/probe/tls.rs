//! The TLS client of `http_get` probes and hooks with `scheme = "https"`.
//!
//! Owns one rustls client configuration (ring provider, TLS 1.2 and 1.3) whose
//! certificate verifier accepts any server certificate: Kubernetes' HTTPS
//! probes skip verification (`InsecureSkipVerify`, kubernetes.io "Configure
//! Probes", HTTP probes), so a probe of a server with a self-signed or expired
//! certificate, or one issued for another name, still reaches its status line.
//! The handshake signatures are still checked with the provider's algorithms,
//! so a peer must at least hold the key of the certificate it sends.
//!
//! It must never be used for anything that needs to trust the peer (it
//! authenticates no one), never read a trust store, never pick the process-wide
//! default provider (a test build may enable a second one, and then rustls'
//! default is ambiguous), and never panic: configuration errors are I/O errors.

use std::io;
use std::sync::{Arc, OnceLock};

use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::crypto::{
    verify_tls12_signature, verify_tls13_signature, CryptoProvider, KeyProvider, WebPkiSupportedAlgorithms,
};
use rustls::pki_types::{CertificateDer, PrivateKeyDer, ServerName, UnixTime};
use rustls::sign::SigningKey;
use rustls::{ClientConfig, DigitallySignedStruct, SignatureScheme};
use tokio::net::TcpStream;
use tokio_rustls::client::TlsStream;
use tokio_rustls::TlsConnector;

/// Opens TLS over `tcp` with SNI `host` (no SNI when `host` is an IP address,
/// as Go's client which the kubelet uses) and ALPN `http/1.1`.
///
/// Errors: `InvalidInput` when `host` is neither a DNS name nor an IP address,
/// `Other` when the client configuration cannot be built, and the handshake's
/// own I/O or TLS errors. The certificate itself is never the cause.
pub async fn connect(tcp: TcpStream, host: &str) -> io::Result<TlsStream<TcpStream>> {
    let name = ServerName::try_from(host.to_owned())
        .map_err(|e| io::Error::new(io::ErrorKind::InvalidInput, format!("TLS server name {host:?}: {e}")))?;
    TlsConnector::from(config()?).connect(name, tcp).await
}

/// The shared client configuration, built on first use.
fn config() -> io::Result<Arc<ClientConfig>> {
    static CONFIG: OnceLock<Arc<ClientConfig>> = OnceLock::new();
    if let Some(c) = CONFIG.get() {
        return Ok(Arc::clone(c));
    }
    // ring's provider, but with a key provider that loads no private key:
    // a probe never authenticates itself, and ring's key loaders (RSA, ECDSA
    // and Ed25519 signing) are then left out of the binary.
    let provider =
        Arc::new(CryptoProvider { key_provider: &NoPrivateKeys, ..rustls::crypto::ring::default_provider() });
    let verifier = Arc::new(AcceptAnyCert(provider.signature_verification_algorithms));
    let mut config = ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|e| io::Error::other(format!("TLS client configuration: {e}")))?
        .dangerous()
        .with_custom_certificate_verifier(verifier)
        .with_no_client_auth();
    config.alpn_protocols = vec![b"http/1.1".to_vec()];
    Ok(Arc::clone(CONFIG.get_or_init(|| Arc::new(config))))
}

/// Loads no private key: the client configuration has no client certificate
/// (`with_no_client_auth`), so rustls never asks; if it did, the handshake
/// would fail with this error rather than sign.
#[derive(Debug)]
struct NoPrivateKeys;

impl KeyProvider for NoPrivateKeys {
    fn load_private_key(
        &self,
        _key_der: PrivateKeyDer<'static>,
    ) -> Result<Arc<dyn SigningKey>, rustls::Error> {
        Err(rustls::Error::General("podinit's TLS client loads no private key".into()))
    }
}

/// Accepts every server certificate; verifies handshake signatures with the
/// given algorithms.
#[derive(Debug)]
struct AcceptAnyCert(WebPkiSupportedAlgorithms);

impl ServerCertVerifier for AcceptAnyCert {
    fn verify_server_cert(
        &self,
        _end_entity: &CertificateDer<'_>,
        _intermediates: &[CertificateDer<'_>],
        _server_name: &ServerName<'_>,
        _ocsp_response: &[u8],
        _now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        Ok(ServerCertVerified::assertion())
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        verify_tls12_signature(message, cert, dss, &self.0)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        verify_tls13_signature(message, cert, dss, &self.0)
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.0.supported_schemes()
    }
}
