//! The settings' TLS for a cluster's own traffic: the gRPC calls between its
//! processes (mutual TLS, `rpc_tls_*`) and the connections to etcd (`etcd_*_file`).
//!
//! Owns: reading the files those settings name into the set-ups the RPC servers,
//! the RPC clients and the etcd client take, at start-up, so a bad file stops the
//! process with its name. Must not: serve or dial anything (the process modules
//! do), or touch the Thrift ports' TLS (`server::tls`).

use std::path::Path;

use tabula_coordinator::lock::EtcdTls;
use tabula_regionserver::rpc::client::RemoteOptions;
use tabula_regionserver::rpc::ClusterTls;

use crate::config::Settings;
use crate::serve::ServeError;

/// The cluster's mutual TLS for this process, when the settings turn it on.
pub(crate) fn cluster_tls(settings: &Settings) -> Result<Option<ClusterTls>, ServeError> {
    if settings.rpc_tls_cert_file.is_empty() {
        return Ok(None);
    }
    let tls = ClusterTls::from_pem_files(
        Path::new(&settings.rpc_tls_cert_file),
        Path::new(&settings.rpc_tls_key_file),
        Path::new(&settings.rpc_tls_ca_file),
        Some(settings.rpc_tls_server_name.clone()),
    )?;
    tracing::info!(
        cert = %settings.rpc_tls_cert_file,
        "mutual TLS on the gRPC calls between the cluster's processes"
    );
    Ok(Some(tls))
}

/// How this process calls regionservers of other processes.
pub(crate) fn remote_options(tls: Option<ClusterTls>) -> RemoteOptions {
    RemoteOptions {
        tls,
        ..RemoteOptions::default()
    }
}

/// TLS towards etcd, when the settings name its authorities.
pub(crate) fn etcd_tls(settings: &Settings) -> Result<Option<EtcdTls>, ServeError> {
    if settings.etcd_ca_file.is_empty() {
        return Ok(None);
    }
    let read = |setting: &str, file: &str| {
        std::fs::read(file)
            .map_err(|e| ServeError::Lock(format!("cannot read {setting} {file}: {e}")))
    };
    let ca_pem = read("etcd_ca_file", &settings.etcd_ca_file)?;
    let client_pem = match settings.etcd_cert_file.as_str() {
        "" => None,
        cert => Some((
            read("etcd_cert_file", cert)?,
            read("etcd_key_file", &settings.etcd_key_file)?,
        )),
    };
    Ok(Some(EtcdTls { ca_pem, client_pem }))
}
