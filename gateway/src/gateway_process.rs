//! `tabula gateway`: the Thrift gateway in a process of its own, as HBase runs its
//! Thrift servers: a client of the cluster, as many as the load needs, none holding
//! data.
//!
//! Owns: starting one: the lock service (etcd), the control plane that follows the
//! cluster ([`RemoteControl`]), and the Thrift1 and Thrift2 servers over the
//! cluster backend. Rows go straight to the regionservers through the three-level
//! lookup; admin calls go to the active coordinator's RPC.
//! Must not: hold data or change the cluster itself.

use std::sync::Arc;

use crate::backend::Backend;
use crate::cluster::remote::RemoteControl;
use crate::cluster::{ClusterBackend, Control};
use crate::config::Settings;
use crate::rpc_security::{cluster_tls, remote_options};
use crate::serve::{open_lock_service, start_gateways, Running, ServeError};

/// Opens the lock service, reads the cluster and binds the Thrift listeners.
pub async fn start(settings: &Settings) -> Result<Running, ServeError> {
    if settings.etcd_urls().next().is_none() {
        return Err(ServeError::Lock(
            "tabula gateway needs etcd_endpoints (the cluster's lock service)".into(),
        ));
    }
    let control = {
        let settings = settings.clone();
        tokio::task::spawn_blocking(move || -> Result<_, ServeError> {
            let remote = remote_options(cluster_tls(&settings)?);
            let lock = open_lock_service(&settings)?;
            RemoteControl::follow(lock, remote).map_err(ServeError::Coordinator)
        })
        .await
        .map_err(|e| ServeError::Lock(format!("start-up task failed: {e}")))??
    };
    let backend = ClusterBackend::over(control as Arc<dyn Control>);
    // Every call here waits on the network for a regionserver: run on an event
    // loop, it would hold up the loop's other connections for the round trip
    // (two loops, two calls in flight). Each connection gets a thread instead.
    let settings = Settings {
        event_loops: 0,
        ..settings.clone()
    };
    start_gateways(&settings, Arc::new(backend) as Arc<dyn Backend>).await
}
