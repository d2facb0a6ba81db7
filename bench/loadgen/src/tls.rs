//! TLS for `--transport https`: the client side of HBase's HTTP mode over TLS.
//!
//! Owns: building the rustls client configuration from the certificate
//! authorities `--tls-ca-file` names, and the server name a session checks (the
//! host part of `--addr`).
//! Must not: open connections (`client` does) or speak HTTP.

use std::path::Path;
use std::sync::Arc;

use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, ServerName};
use rustls::{ClientConfig, RootCertStore};

use crate::error::BenchError;

/// A client trusting the authorities in the PEM file at `ca_file`.
pub fn client_config(ca_file: &Path) -> Result<Arc<ClientConfig>, BenchError> {
    let bad = |what: String| {
        BenchError::InvalidOption(format!("--tls-ca-file {}: {what}", ca_file.display()))
    };
    let mut roots = RootCertStore::empty();
    for cert in CertificateDer::pem_file_iter(ca_file).map_err(|e| bad(e.to_string()))? {
        let cert = cert.map_err(|e| bad(e.to_string()))?;
        roots.add(cert).map_err(|e| bad(e.to_string()))?;
    }
    if roots.is_empty() {
        return Err(bad("holds no certificate".into()));
    }
    let provider = Arc::new(rustls::crypto::aws_lc_rs::default_provider());
    let config = ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|e| bad(e.to_string()))?
        .with_root_certificates(roots)
        .with_no_client_auth();
    Ok(Arc::new(config))
}

/// The name a session to `addr` (`host:port`, `[v6]:port`) checks the server's
/// certificate against: the host, as a DNS name or an IP address.
pub fn server_name(addr: &str) -> Result<ServerName<'static>, BenchError> {
    let host = match addr.rsplit_once(':') {
        Some((host, _port)) => host,
        None => addr,
    };
    let host = host.trim_start_matches('[').trim_end_matches(']');
    ServerName::try_from(host.to_owned())
        .map_err(|e| BenchError::InvalidOption(format!("--addr {addr}: no TLS server name: {e}")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_server_name_is_the_host_of_the_address() {
        let ip = server_name("127.0.0.1:9090").expect("ip");
        assert!(matches!(ip, ServerName::IpAddress(_)), "{ip:?}");
        let v6 = server_name("[::1]:9090").expect("v6");
        assert!(matches!(v6, ServerName::IpAddress(_)), "{v6:?}");
        let dns = server_name("db.example.com:9090").expect("dns");
        assert_eq!(dns, ServerName::try_from("db.example.com").expect("name"));
        assert!(server_name("bad host:1").is_err());
    }

    #[test]
    fn a_ca_file_without_certificates_is_refused() {
        let dir = tempfile::tempdir().expect("tempdir");
        let empty = dir.path().join("empty.pem");
        std::fs::write(&empty, "").expect("write");
        assert!(client_config(&empty).is_err());
        assert!(client_config(&dir.path().join("missing.pem")).is_err());
    }
}
