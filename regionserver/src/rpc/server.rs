//! The gRPC server side: any [`TabletService`] (a [`crate::RegionServer`]) exposed
//! on a TCP listener.
//!
//! Owns: decoding each request, running the call on a blocking thread (the
//! service is synchronous and may wait on disk), and encoding its answer or its
//! failure (a status whose details hold a `Failure`). Must not: interpret calls.

use std::future::Future;
use std::net::SocketAddr;
use std::sync::Arc;

use prost::Message;
use tonic::transport::server::TcpIncoming;
use tonic::{Code, Request, Response, Status};

use super::convert::*;
use super::pb;
use super::pb::tablet_service_server::{TabletService as TabletRpc, TabletServiceServer};
use super::tls::ClusterTls;
use crate::api::{RsError, RsResult, TabletService};
use crate::slow_log::with_caller;

/// Largest message either side accepts (a batch of large values).
pub const MAX_MESSAGE_BYTES: usize = 512 << 20;

/// Checked before every call; an error is the call's answer (a server that can no
/// longer prove it may serve refuses everything).
pub type CallGuard = Arc<dyn Fn() -> RsResult<()> + Send + Sync>;

/// Serves `service` on `listener` until `shutdown` completes.
pub async fn serve(
    listener: tokio::net::TcpListener,
    service: Arc<dyn TabletService>,
    shutdown: impl Future<Output = ()> + Send,
) -> Result<(), tonic::transport::Error> {
    serve_guarded(listener, service, None, None, shutdown).await
}

/// [`serve`] with `guard` checked before every call, over the cluster's mutual
/// TLS when `tls` is given.
pub async fn serve_guarded(
    listener: tokio::net::TcpListener,
    service: Arc<dyn TabletService>,
    guard: Option<CallGuard>,
    tls: Option<&ClusterTls>,
    shutdown: impl Future<Output = ()> + Send,
) -> Result<(), tonic::transport::Error> {
    server_builder(tls)?
        .add_service(tablet_rpc(service, guard))
        .serve_with_incoming_shutdown(incoming(listener), shutdown)
        .await
}

/// A gRPC server builder, serving TLS only when `tls` is given.
pub fn server_builder(
    tls: Option<&ClusterTls>,
) -> Result<tonic::transport::Server, tonic::transport::Error> {
    let builder = tonic::transport::Server::builder();
    match tls {
        Some(tls) => tls.server(builder),
        None => Ok(builder),
    }
}

/// The connections a gRPC server accepts on `listener`, with Nagle's algorithm off:
/// an answer written in more than one segment would otherwise wait for the
/// client's delayed acknowledgement (up to 40 ms a call).
pub fn incoming(listener: tokio::net::TcpListener) -> TcpIncoming {
    TcpIncoming::from(listener)
        .with_nodelay(Some(true))
        .with_keepalive(Some(std::time::Duration::from_secs(30)))
}

/// The tablet service over `service`, with `guard` checked before every call, to
/// add to a gRPC server (one that also serves other services).
pub fn tablet_rpc(
    service: Arc<dyn TabletService>,
    guard: Option<CallGuard>,
) -> TabletServiceServer<impl TabletRpc> {
    TabletServiceServer::new(Exposed { service, guard })
        .max_decoding_message_size(MAX_MESSAGE_BYTES)
        .max_encoding_message_size(MAX_MESSAGE_BYTES)
}

/// A status carrying `error` as an encoded `Failure`.
pub fn status_of(error: &RsError) -> Status {
    let failure = failure_to_wire(error);
    Status::with_details(
        Code::FailedPrecondition,
        failure.message.clone(),
        failure.encode_to_vec().into(),
    )
}

/// The address of the process a request came from, for the slow-call log.
fn peer_of<T>(request: &Request<T>) -> Option<SocketAddr> {
    request.remote_addr()
}

/// `call` run with `peer` as the caller the slow-call log names.
fn from_peer<T>(
    peer: Option<SocketAddr>,
    call: impl FnOnce(&dyn TabletService) -> RsResult<T>,
) -> impl FnOnce(&dyn TabletService) -> RsResult<T> {
    move |s| with_caller(peer, || call(s))
}

struct Exposed {
    service: Arc<dyn TabletService>,
    guard: Option<CallGuard>,
}

type Reply<T> = Result<Response<T>, Status>;

impl Exposed {
    /// Runs `call` on the thread serving the connection, for calls that never wait
    /// on the commit log (point reads): handing them to a blocking thread would
    /// cost more than the call.
    fn call_inline<T>(&self, call: impl FnOnce(&dyn TabletService) -> RsResult<T>) -> Reply<T> {
        let run = || {
            if let Some(guard) = &self.guard {
                guard()?;
            }
            call(&*self.service)
        };
        run().map(Response::new).map_err(|e| status_of(&e))
    }

    /// Runs `call` on a blocking thread and answers with its result.
    async fn call<T, F>(&self, call: F) -> Reply<T>
    where
        T: Send + 'static,
        F: FnOnce(&dyn TabletService) -> RsResult<T> + Send + 'static,
    {
        let service = Arc::clone(&self.service);
        let guard = self.guard.clone();
        let run = move || {
            if let Some(guard) = guard {
                guard()?;
            }
            call(&*service)
        };
        match tokio::task::spawn_blocking(run).await {
            Ok(Ok(reply)) => Ok(Response::new(reply)),
            Ok(Err(error)) => Err(status_of(&error)),
            Err(failed) => {
                tracing::error!(error = %failed, "a regionserver call failed");
                Err(Status::internal(format!("the call failed: {failed}")))
            }
        }
    }
}

#[tonic::async_trait]
impl TabletRpc for Exposed {
    async fn name(&self, _: Request<pb::Empty>) -> Reply<pb::NameReply> {
        self.call(|s| {
            Ok(pb::NameReply {
                name: s.name(),
                start_code: s.start_code(),
            })
        })
        .await
    }

    async fn get(&self, request: Request<pb::GetRequest>) -> Reply<pb::CellsReply> {
        let peer = peer_of(&request);
        let r = request.into_inner();
        self.call_inline(from_peer(peer, move |s| {
            let spec = read_spec_from_wire(r.spec)?;
            Ok(cells_to_wire(&s.get(r.tablet, &r.row, &spec)?))
        }))
    }

    async fn mutate(&self, request: Request<pb::MutateRequest>) -> Reply<pb::Empty> {
        let peer = peer_of(&request);
        let r = request.into_inner();
        self.call(from_peer(peer, move |s| {
            let mutation = mutation_from_wire(r.mutation)?;
            s.mutate(r.tablet, &mutation, durability_from_wire(r.durability)?)?;
            Ok(pb::Empty {})
        }))
        .await
    }

    async fn mutate_batch(
        &self,
        request: Request<pb::MutateBatchRequest>,
    ) -> Reply<pb::MutateBatchReply> {
        let peer = peer_of(&request);
        let r = request.into_inner();
        self.call(from_peer(peer, move |s| {
            let durability = durability_from_wire(r.durability)?;
            let mut owned = Vec::with_capacity(r.batches.len());
            for batch in r.batches {
                let rows = batch
                    .rows
                    .into_iter()
                    .map(|row| mutation_from_wire(Some(row)))
                    .collect::<RsResult<Vec<_>>>()?;
                owned.push((batch.tablet, rows));
            }
            let borrowed: Vec<_> = owned
                .iter()
                .map(|(tablet, rows)| (*tablet, rows.iter().collect::<Vec<_>>()))
                .collect();
            let outcomes = s.mutate_batch(&borrowed, durability);
            Ok(pb::MutateBatchReply {
                tablets: outcomes
                    .iter()
                    .map(|outcome| match outcome {
                        Err(e) => pb::TabletOutcome {
                            failure: Some(failure_to_wire(e)),
                            rows: Vec::new(),
                        },
                        Ok(rows) => pb::TabletOutcome {
                            failure: None,
                            rows: rows
                                .iter()
                                .map(|row| pb::RowOutcome {
                                    failure: row.as_ref().err().map(failure_to_wire),
                                })
                                .collect(),
                        },
                    })
                    .collect(),
            })
        }))
        .await
    }

    async fn check_and_mutate(
        &self,
        request: Request<pb::CheckAndMutateRequest>,
    ) -> Reply<pb::AppliedReply> {
        let peer = peer_of(&request);
        let r = request.into_inner();
        self.call(from_peer(peer, move |s| {
            let condition = condition_from_wire(r.condition)?;
            let mutation = mutation_from_wire(r.mutation)?;
            let durability = durability_from_wire(r.durability)?;
            let applied = s.check_and_mutate(r.tablet, &condition, &mutation, durability)?;
            Ok(pb::AppliedReply { applied })
        }))
        .await
    }

    async fn increment(&self, request: Request<pb::IncrementRequest>) -> Reply<pb::CellsReply> {
        let peer = peer_of(&request);
        let r = request.into_inner();
        self.call(from_peer(peer, move |s| {
            let columns: Vec<_> = r
                .columns
                .into_iter()
                .map(|c| (c.family, c.qualifier, c.amount))
                .collect();
            let durability = durability_from_wire(r.durability)?;
            Ok(cells_to_wire(
                &s.increment(r.tablet, &r.row, &columns, durability)?,
            ))
        }))
        .await
    }

    async fn append(&self, request: Request<pb::AppendRequest>) -> Reply<pb::CellsReply> {
        let peer = peer_of(&request);
        let r = request.into_inner();
        self.call(from_peer(peer, move |s| {
            let columns: Vec<_> = r
                .columns
                .into_iter()
                .map(|c| (c.family, c.qualifier, c.value))
                .collect();
            let durability = durability_from_wire(r.durability)?;
            Ok(cells_to_wire(
                &s.append(r.tablet, &r.row, &columns, durability)?,
            ))
        }))
        .await
    }

    async fn open_scanner(&self, request: Request<pb::OpenScannerRequest>) -> Reply<pb::ScannerId> {
        let peer = peer_of(&request);
        let r = request.into_inner();
        self.call(from_peer(peer, move |s| {
            let spec = scan_spec_from_wire(r.spec)?;
            Ok(pb::ScannerId {
                scanner: s.open_scanner(r.tablet, &spec)?,
            })
        }))
        .await
    }

    async fn scanner_next(&self, request: Request<pb::ScannerNextRequest>) -> Reply<pb::ScanBatch> {
        let peer = peer_of(&request);
        let r = request.into_inner();
        let max_rows = usize::try_from(r.max_rows).unwrap_or(usize::MAX);
        self.call(from_peer(peer, move |s| {
            Ok(scan_batch_to_wire(&s.scanner_next(r.scanner, max_rows)?))
        }))
        .await
    }

    async fn close_scanner(&self, request: Request<pb::ScannerId>) -> Reply<pb::Empty> {
        let r = request.into_inner();
        self.call(move |s| {
            s.close_scanner(r.scanner);
            Ok(pb::Empty {})
        })
        .await
    }

    async fn open_tablet(&self, request: Request<pb::TabletDescriptor>) -> Reply<pb::Empty> {
        let r = request.into_inner();
        self.call(move |s| {
            s.open_tablet(&descriptor_from_wire(Some(r))?)?;
            Ok(pb::Empty {})
        })
        .await
    }

    async fn close_tablet(&self, request: Request<pb::TabletId>) -> Reply<pb::Empty> {
        let r = request.into_inner();
        self.call(move |s| s.close_tablet(r.tablet).map(|()| pb::Empty {}))
            .await
    }

    async fn destroy_tablet(&self, request: Request<pb::TabletId>) -> Reply<pb::Empty> {
        let r = request.into_inner();
        self.call(move |s| s.destroy_tablet(r.tablet).map(|()| pb::Empty {}))
            .await
    }

    async fn split_tablet(&self, request: Request<pb::SplitRequest>) -> Reply<pb::SplitReply> {
        let r = request.into_inner();
        self.call(move |s| {
            Ok(split_to_wire(
                &s.split_tablet(r.tablet, r.at, r.left, r.right)?,
            ))
        })
        .await
    }

    async fn flush_tablet(&self, request: Request<pb::TabletId>) -> Reply<pb::Empty> {
        let r = request.into_inner();
        self.call(move |s| s.flush_tablet(r.tablet).map(|()| pb::Empty {}))
            .await
    }

    async fn compact_tablet(&self, request: Request<pb::CompactRequest>) -> Reply<pb::Empty> {
        let r = request.into_inner();
        self.call(move |s| s.compact_tablet(r.tablet, r.major).map(|()| pb::Empty {}))
            .await
    }

    async fn update_schema(&self, request: Request<pb::UpdateSchemaRequest>) -> Reply<pb::Empty> {
        let r = request.into_inner();
        self.call(move |s| {
            s.update_schema(r.tablet, &schema_from_wire(r.schema)?)?;
            Ok(pb::Empty {})
        })
        .await
    }

    async fn report(&self, _: Request<pb::Empty>) -> Reply<pb::ReportReply> {
        self.call(|s| Ok(report_to_wire(&s.report()))).await
    }

    async fn collect_garbage(
        &self,
        request: Request<pb::CollectGarbageRequest>,
    ) -> Reply<pb::CollectGarbageReply> {
        let r = request.into_inner();
        self.call(move |s| {
            let live = r.live.into_iter().collect();
            let removed = s.collect_garbage(&live)?;
            Ok(pb::CollectGarbageReply {
                removed: u64::try_from(removed).unwrap_or(u64::MAX),
            })
        })
        .await
    }

    async fn recover_log_of(&self, request: Request<pb::RecoverLogRequest>) -> Reply<pb::Empty> {
        let r = request.into_inner();
        self.call(move |s| s.recover_log_of(&r.server).map(|()| pb::Empty {}))
            .await
    }

    async fn slow_calls(&self, _: Request<pb::Empty>) -> Reply<pb::SlowCallsReply> {
        self.call_inline(|s| {
            Ok(pb::SlowCallsReply {
                calls: s.slow_calls()?.iter().map(slow_call_to_wire).collect(),
            })
        })
    }

    async fn clear_slow_calls(&self, _: Request<pb::Empty>) -> Reply<pb::ClearedReply> {
        self.call_inline(|s| {
            Ok(pb::ClearedReply {
                cleared: s.clear_slow_calls()?,
            })
        })
    }
}
