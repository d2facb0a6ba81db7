//! Mutual TLS on the gRPC calls between a cluster's processes (gateways,
//! regionservers, the coordinator): the role of HBase's RPC TLS
//! (`hbase.rpc.tls.enabled`, client certificates required).
//!
//! Owns: [`ClusterTls`] (this process's certificate chain and key, the cluster's
//! certificate authorities, and an optional name every server's certificate is
//! checked against), loading it from PEM files with every problem named at start-up,
//! and turning it into the server and client set-ups of the gRPC transport, and
//! [`endpoint`], the one place a gRPC client's address becomes an endpoint.
//! Must not: decide which processes use it (the settings do) or speak any RPC.

use std::fmt;
use std::path::{Path, PathBuf};
use std::time::Duration;

use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};
use tonic::transport::{Certificate, ClientTlsConfig, Endpoint, Identity, Server, ServerTlsConfig};

/// Longest a peer may take over its TLS handshake before the server drops it.
const HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(10);

/// Why the cluster's TLS could not be set up from its files.
#[derive(Debug, thiserror::Error)]
pub enum ClusterTlsError {
    #[error("cannot read {what} {path}: {source}")]
    Read {
        what: &'static str,
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("{what} {path} holds no {expected} in PEM form")]
    Missing {
        what: &'static str,
        path: PathBuf,
        expected: &'static str,
    },
    #[error("{0}")]
    Unusable(String),
}

/// This process's part in the cluster's mutual TLS: with it, every gRPC server of
/// the process requires a client certificate issued by the cluster's authorities,
/// and every gRPC client presents its certificate and checks the server's.
#[derive(Clone)]
pub struct ClusterTls {
    identity: Identity,
    authorities: Certificate,
    server_name: Option<String>,
}

impl fmt::Debug for ClusterTls {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ClusterTls")
            .field("server_name", &self.server_name)
            .finish_non_exhaustive()
    }
}

/// The contents of `path`, naming it when it cannot be read.
fn read(path: &Path, what: &'static str) -> Result<Vec<u8>, ClusterTlsError> {
    std::fs::read(path).map_err(|source| ClusterTlsError::Read {
        what,
        path: path.to_path_buf(),
        source,
    })
}

/// `pem` read as PEM certificates: at least one.
fn check_certificates(pem: &[u8], path: &Path, what: &'static str) -> Result<(), ClusterTlsError> {
    let parsed: Result<Vec<_>, _> = CertificateDer::pem_slice_iter(pem).collect();
    match parsed {
        Ok(certificates) if !certificates.is_empty() => Ok(()),
        Ok(_) => Err(ClusterTlsError::Missing {
            what,
            path: path.to_path_buf(),
            expected: "certificate",
        }),
        Err(e) => Err(ClusterTlsError::Unusable(format!(
            "{what} {}: {e}",
            path.display()
        ))),
    }
}

impl ClusterTls {
    /// Loads this process's certificate chain (`cert_file`, PEM, its own
    /// certificate first), its private key (`key_file`, PEM: PKCS#8, PKCS#1 or
    /// SEC1) and the cluster's certificate authorities (`ca_file`, PEM). Each
    /// server's certificate must name the host its address is dialled by (an IP
    /// address or DNS name), or `server_name` when one is given.
    pub fn from_pem_files(
        cert_file: &Path,
        key_file: &Path,
        ca_file: &Path,
        server_name: Option<String>,
    ) -> Result<ClusterTls, ClusterTlsError> {
        install_crypto_provider();
        let chain = read(cert_file, "certificate file")?;
        check_certificates(&chain, cert_file, "certificate file")?;
        let key = read(key_file, "key file")?;
        if PrivateKeyDer::from_pem_slice(&key).is_err() {
            return Err(ClusterTlsError::Missing {
                what: "key file",
                path: key_file.to_path_buf(),
                expected: "private key",
            });
        }
        let authorities = read(ca_file, "CA file")?;
        check_certificates(&authorities, ca_file, "CA file")?;
        let tls = ClusterTls {
            identity: Identity::from_pem(chain, key),
            authorities: Certificate::from_pem(authorities),
            server_name: server_name.filter(|name| !name.is_empty()),
        };
        // Both sides built once now, so a key that is not the certificate's or an
        // authority that does not parse stops start-up instead of every call.
        tls.server(Server::builder()).map_err(|e| {
            ClusterTlsError::Unusable(format!(
                "{} and {} do not make a TLS server: {}",
                cert_file.display(),
                key_file.display(),
                error_chain(&e)
            ))
        })?;
        endpoint("127.0.0.1:1", Some(&tls))
            .map_err(|e| ClusterTlsError::Unusable(format!("a TLS client cannot be made: {e}")))?;
        Ok(tls)
    }

    /// `builder` serving TLS only, requiring client certificates of the cluster's
    /// authorities.
    pub fn server(&self, builder: Server) -> Result<Server, tonic::transport::Error> {
        let config = ServerTlsConfig::new()
            .identity(self.identity.clone())
            .client_ca_root(self.authorities.clone())
            .timeout(HANDSHAKE_TIMEOUT);
        builder.tls_config(config)
    }

    fn client(&self) -> ClientTlsConfig {
        let config = ClientTlsConfig::new()
            .ca_certificate(self.authorities.clone())
            .identity(self.identity.clone())
            .timeout(HANDSHAKE_TIMEOUT);
        match &self.server_name {
            Some(name) => config.domain_name(name.clone()),
            None => config,
        }
    }
}

/// The endpoint of a gRPC server at `address` (`host:port`): plain HTTP/2, or
/// HTTP/2 over TLS with this process's certificate when `tls` is given.
pub fn endpoint(address: &str, tls: Option<&ClusterTls>) -> Result<Endpoint, String> {
    let scheme = if tls.is_some() { "https" } else { "http" };
    let endpoint =
        Endpoint::from_shared(format!("{scheme}://{address}")).map_err(|e| error_chain(&e))?;
    match tls {
        None => Ok(endpoint),
        Some(tls) => endpoint
            .tls_config(tls.client())
            .map_err(|e| error_chain(&e)),
    }
}

/// `error` with every cause after it (tonic's transport errors say little alone).
pub fn error_chain(error: &dyn std::error::Error) -> String {
    with_causes(error.to_string(), error)
}

/// `head` followed by every cause of `error` (a refused TLS handshake under a
/// status whose message does not mention it, say).
pub fn with_causes(mut head: String, error: &dyn std::error::Error) -> String {
    let mut source = error.source();
    while let Some(cause) = source {
        head.push_str(": ");
        head.push_str(&cause.to_string());
        source = cause.source();
    }
    head
}

/// Makes aws-lc-rs the process's TLS provider unless one already is (the gRPC
/// transport's server side asks for the process's provider).
fn install_crypto_provider() {
    // An Err means a provider is installed already, which is all this wants.
    let _ = rustls::crypto::aws_lc_rs::default_provider().install_default();
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn missing_and_empty_files_are_named() {
        let dir = tempfile::tempdir().expect("tempdir");
        let missing = dir.path().join("missing.pem");
        let err =
            ClusterTls::from_pem_files(&missing, &missing, &missing, None).expect_err("no files");
        assert!(err.to_string().contains("missing.pem"), "{err}");
        let empty = dir.path().join("empty.pem");
        std::fs::write(&empty, "").expect("write");
        let err = ClusterTls::from_pem_files(&empty, &empty, &empty, None).expect_err("empty");
        assert!(
            matches!(
                err,
                ClusterTlsError::Missing {
                    expected: "certificate",
                    ..
                }
            ),
            "{err}"
        );
    }

    #[test]
    fn a_certificate_loads_with_its_own_key_only() {
        let dir = tempfile::tempdir().expect("tempdir");
        let write = |name: &str, pem: String| {
            let path = dir.path().join(name);
            std::fs::write(&path, pem).expect("write");
            path
        };
        let issued =
            rcgen::generate_simple_self_signed(vec!["127.0.0.1".to_string()]).expect("certificate");
        let other = rcgen::KeyPair::generate().expect("key");
        let cert = write("node.pem", issued.cert.pem());
        let key = write("node-key.pem", issued.key_pair.serialize_pem());
        let wrong_key = write("other-key.pem", other.serialize_pem());
        let tls = ClusterTls::from_pem_files(&cert, &key, &cert, Some("tabula.internal".into()))
            .expect("a certificate and its key");
        assert_eq!(tls.server_name.as_deref(), Some("tabula.internal"));
        let uri = |tls: Option<&ClusterTls>| {
            endpoint("127.0.0.1:16020", tls)
                .expect("endpoint")
                .uri()
                .to_string()
        };
        assert!(uri(Some(&tls)).starts_with("https://"));
        assert!(uri(None).starts_with("http://"));
        let err = ClusterTls::from_pem_files(&cert, &wrong_key, &cert, None)
            .expect_err("a key of another certificate");
        assert!(err.to_string().contains("other-key.pem"), "{err}");
        let err = ClusterTls::from_pem_files(&cert, &cert, &cert, None).expect_err("no key");
        assert!(
            matches!(
                err,
                ClusterTlsError::Missing {
                    expected: "private key",
                    ..
                }
            ),
            "{err}"
        );
    }
}
