//! TLS on the Thrift ports: HBase's `hbase.thrift.ssl.enabled`, HTTPS in HTTP mode.
//!
//! Owns: [`TlsConfig`] (the server's certificate chain and private key, and the
//! certificate authorities a client certificate must chain to when clients must
//! present one, all loaded from PEM files, and loaded again when those files
//! change: a rotated certificate is served without a restart), telling a TLS
//! handshake from the first bytes of a connection, and the handshake itself
//! (bounded in time).
//! Must not: speak HTTP (`http` does, inside the TLS stream) or decide what a
//! connection without TLS gets (`conn` refuses it when TLS is on).

use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime};

use arc_swap::ArcSwap;
use parking_lot::Mutex;

use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};
use rustls::server::WebPkiClientVerifier;
use rustls::{RootCertStore, ServerConfig};
use tokio::io::{AsyncRead, AsyncWrite};
use tokio_rustls::server::TlsStream;
use tokio_rustls::TlsAcceptor;

/// Longest a client may take over its TLS handshake (the idle timeout, if
/// shorter).
pub(crate) const HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(10);

/// The first byte of a TLS record carrying a handshake message (a ClientHello).
const HANDSHAKE_RECORD: u8 = 0x16;
/// The major version byte of every TLS record (SSL 3.0 through TLS 1.3 records).
const RECORD_MAJOR_VERSION: u8 = 0x03;

/// How often a handshake may look whether the files changed.
const RELOAD_CHECK_EVERY: Duration = Duration::from_secs(1);

/// Why TLS could not be set up from its files.
#[derive(Debug, thiserror::Error)]
pub enum TlsError {
    #[error("cannot read {what} {path}: {source}")]
    Read {
        what: &'static str,
        path: PathBuf,
        #[source]
        source: rustls::pki_types::pem::Error,
    },
    #[error("{what} {path} holds no certificate")]
    NoCertificate { what: &'static str, path: PathBuf },
    #[error("client CA file {path}: {reason}")]
    ClientCa { path: PathBuf, reason: String },
    #[error("the certificate and key do not make a TLS server: {0}")]
    Server(#[from] rustls::Error),
}

/// A TLS server set-up for the Thrift ports. With one, a port accepts only TLS
/// connections, and serves HBase's HTTP mode inside them. Handshakes check, at
/// most once a second, whether the PEM files changed; changed files that make a
/// server are used from the next handshake on (certificate rotation), others are
/// logged and the set-up in use stays.
#[derive(Clone)]
pub struct TlsConfig {
    inner: Arc<Reloading>,
}

struct Reloading {
    files: TlsFiles,
    /// Whether clients must present a certificate (mutual TLS).
    client_auth: bool,
    acceptor: ArcSwap<TlsAcceptor>,
    /// When the files were last looked at, and what they looked like.
    checked: Mutex<(Instant, Vec<FileStamp>)>,
}

/// The files a set-up is read from.
#[derive(Debug, Clone)]
struct TlsFiles {
    cert: PathBuf,
    key: PathBuf,
    client_ca: Option<PathBuf>,
}

/// What tells a changed file: its modification time and length (`None`: not
/// readable).
type FileStamp = Option<(SystemTime, u64)>;

impl TlsFiles {
    fn paths(&self) -> impl Iterator<Item = &Path> {
        [
            Some(self.cert.as_path()),
            Some(self.key.as_path()),
            self.client_ca.as_deref(),
        ]
        .into_iter()
        .flatten()
    }

    fn stamps(&self) -> Vec<FileStamp> {
        self.paths()
            .map(|p| {
                let meta = std::fs::metadata(p).ok()?;
                Some((meta.modified().ok()?, meta.len()))
            })
            .collect()
    }

    /// A TLS acceptor from the files as they are now.
    fn acceptor(&self) -> Result<TlsAcceptor, TlsError> {
        let chain = certificates(&self.cert, "certificate file")?;
        let key = PrivateKeyDer::from_pem_file(&self.key).map_err(|source| TlsError::Read {
            what: "key file",
            path: self.key.clone(),
            source,
        })?;
        let provider = Arc::new(rustls::crypto::aws_lc_rs::default_provider());
        let builder = ServerConfig::builder_with_provider(Arc::clone(&provider))
            .with_safe_default_protocol_versions()?;
        let mut config = match &self.client_ca {
            None => builder.with_no_client_auth().with_single_cert(chain, key)?,
            Some(path) => {
                let mut roots = RootCertStore::empty();
                for ca in certificates(path, "client CA file")? {
                    roots.add(ca).map_err(|e| TlsError::ClientCa {
                        path: path.clone(),
                        reason: e.to_string(),
                    })?;
                }
                let verifier = WebPkiClientVerifier::builder_with_provider(roots.into(), provider)
                    .build()
                    .map_err(|e| TlsError::ClientCa {
                        path: path.clone(),
                        reason: e.to_string(),
                    })?;
                builder
                    .with_client_cert_verifier(verifier)
                    .with_single_cert(chain, key)?
            }
        };
        config.alpn_protocols = vec![b"http/1.1".to_vec()];
        Ok(TlsAcceptor::from(Arc::new(config)))
    }
}

impl fmt::Debug for TlsConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("TlsConfig")
            .field("files", &self.inner.files)
            .field("client_auth", &self.inner.client_auth)
            .finish_non_exhaustive()
    }
}

impl TlsConfig {
    /// The server's certificate chain (`cert_file`: PEM, the server's own first),
    /// its private key (`key_file`: PEM, PKCS#8, PKCS#1 or SEC1) and, if given,
    /// the authorities whose certificates clients must present (`client_ca_file`).
    pub fn from_pem_files(
        cert_file: &Path,
        key_file: &Path,
        client_ca_file: Option<&Path>,
    ) -> Result<TlsConfig, TlsError> {
        let files = TlsFiles {
            cert: cert_file.to_path_buf(),
            key: key_file.to_path_buf(),
            client_ca: client_ca_file.map(Path::to_path_buf),
        };
        let stamps = files.stamps();
        let acceptor = files.acceptor()?;
        Ok(TlsConfig {
            inner: Arc::new(Reloading {
                client_auth: files.client_ca.is_some(),
                files,
                acceptor: ArcSwap::from_pointee(acceptor),
                checked: Mutex::new((Instant::now(), stamps)),
            }),
        })
    }

    /// Whether clients must present a certificate.
    pub fn requires_client_certificates(&self) -> bool {
        self.inner.client_auth
    }

    /// Runs the server side of the handshake on `io`.
    pub(crate) async fn accept<S>(&self, io: S) -> std::io::Result<TlsStream<S>>
    where
        S: AsyncRead + AsyncWrite + Unpin,
    {
        self.reload_if_changed();
        let acceptor = self.inner.acceptor.load_full();
        acceptor.accept(io).await
    }

    /// Reads the files again when they changed since the last look (at most once
    /// a second; a handshake meanwhile does not wait for another's look).
    fn reload_if_changed(&self) {
        let Some(mut checked) = self.inner.checked.try_lock() else {
            return;
        };
        if checked.0.elapsed() < RELOAD_CHECK_EVERY {
            return;
        }
        checked.0 = Instant::now();
        let stamps = self.inner.files.stamps();
        if stamps == checked.1 {
            return;
        }
        checked.1 = stamps;
        match self.inner.files.acceptor() {
            Ok(acceptor) => {
                self.inner.acceptor.store(Arc::new(acceptor));
                tracing::info!(cert = %self.inner.files.cert.display(), "TLS files changed: reloaded");
            }
            Err(e) => tracing::warn!(
                error = %e,
                "TLS files changed but do not make a server; serving with the previous ones"
            ),
        }
    }
}

/// Every certificate in the PEM file at `path` (at least one).
fn certificates(path: &Path, what: &'static str) -> Result<Vec<CertificateDer<'static>>, TlsError> {
    let read_error = |source| TlsError::Read {
        what,
        path: path.to_path_buf(),
        source,
    };
    let chain = CertificateDer::pem_file_iter(path)
        .map_err(read_error)?
        .collect::<Result<Vec<_>, _>>()
        .map_err(read_error)?;
    if chain.is_empty() {
        return Err(TlsError::NoCertificate {
            what,
            path: path.to_path_buf(),
        });
    }
    Ok(chain)
}

/// Whether a connection whose first bytes are `prefix` opens with a TLS handshake
/// record; `None` while too few bytes are in to say.
pub(crate) fn starts_with_handshake(prefix: &[u8]) -> Option<bool> {
    match prefix {
        [] | [HANDSHAKE_RECORD] => None,
        [_] => Some(false),
        [first, second, ..] => Some(*first == HANDSHAKE_RECORD && *second == RECORD_MAJOR_VERSION),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_client_hello_is_told_from_thrift_and_http() {
        assert_eq!(starts_with_handshake(&[]), None);
        assert_eq!(starts_with_handshake(&[0x16]), None);
        assert_eq!(
            starts_with_handshake(&[0x16, 0x03, 0x01, 0x02, 0x00]),
            Some(true)
        );
        assert_eq!(starts_with_handshake(&[0x16, 0x00]), Some(false));
        assert_eq!(starts_with_handshake(b"POST / HTTP/1.1"), Some(false));
        assert_eq!(
            starts_with_handshake(&[0x80, 0x01, 0x00, 0x01]),
            Some(false)
        );
        assert_eq!(starts_with_handshake(&[0x82, 0x21]), Some(false));
        assert_eq!(starts_with_handshake(&[0x00]), Some(false));
    }

    #[test]
    fn missing_or_empty_files_are_named_in_the_error() {
        let dir = tempfile::tempdir().expect("tempdir");
        let missing = dir.path().join("missing.pem");
        let err = TlsConfig::from_pem_files(&missing, &missing, None).expect_err("no files");
        assert!(err.to_string().contains("missing.pem"), "{err}");
        let empty = dir.path().join("empty.pem");
        std::fs::write(&empty, "").expect("write");
        let err = TlsConfig::from_pem_files(&empty, &empty, None).expect_err("empty file");
        assert!(matches!(err, TlsError::NoCertificate { .. }), "{err}");
    }

    #[test]
    fn a_self_signed_certificate_makes_a_server_with_or_without_client_auth() {
        let dir = tempfile::tempdir().expect("tempdir");
        let issued =
            rcgen::generate_simple_self_signed(vec!["localhost".to_string()]).expect("certificate");
        let cert = dir.path().join("cert.pem");
        let key = dir.path().join("key.pem");
        std::fs::write(&cert, issued.cert.pem()).expect("write");
        std::fs::write(&key, issued.key_pair.serialize_pem()).expect("write");
        let plain = TlsConfig::from_pem_files(&cert, &key, None).expect("server");
        assert!(!plain.requires_client_certificates());
        let mutual = TlsConfig::from_pem_files(&cert, &key, Some(&cert)).expect("server");
        assert!(mutual.requires_client_certificates());
        // A key that is not the certificate's is refused.
        let other =
            rcgen::generate_simple_self_signed(vec!["localhost".to_string()]).expect("certificate");
        let other_key = dir.path().join("other.pem");
        std::fs::write(&other_key, other.key_pair.serialize_pem()).expect("write");
        assert!(TlsConfig::from_pem_files(&cert, &other_key, None).is_err());
    }
}
