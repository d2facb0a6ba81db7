//! The gRPC client side: a regionserver in another process, as a
//! [`TabletService`].
//!
//! Owns: one HTTP/2 connection to the server (reconnected by the channel when it
//! drops), a small runtime of its own so the synchronous trait can be called from
//! any thread, and per-call deadlines. Must not: retry (callers decide, as they do
//! for a local server's errors) or cache anything.

use std::collections::HashSet;
use std::future::Future;
use std::sync::mpsc;
use std::time::Duration;

use bytes::Bytes;
use prost::Message;
use tabula_storage::tablet::{Condition, TabletDescriptor};
use tabula_storage::{Cell, Durability, RowMutation, TableSchema};
use tokio::runtime::{Handle, Runtime};
use tonic::transport::Channel;
use tonic::{Response, Status};

use super::convert::*;
use super::pb;
use super::pb::tablet_service_client::TabletServiceClient;
use super::server::MAX_MESSAGE_BYTES;
use super::tls::{endpoint, with_causes, ClusterTls};
use crate::api::{
    ReadSpec, RemoteFailure, RsError, RsResult, ScanBatch, ScanSpec, SplitOutcome, TabletReport,
    TabletService,
};
use crate::slow_log::SlowCall;

/// Deadlines of calls on a remote regionserver, and the cluster's TLS.
#[derive(Debug, Clone)]
pub struct RemoteOptions {
    /// Reads, writes and scanner calls.
    pub call_timeout: Duration,
    /// Tablet administration (open, close, split, flush, compact, garbage), which
    /// may wait for a flush or a major compaction.
    pub admin_timeout: Duration,
    /// Connecting.
    pub connect_timeout: Duration,
    /// Mutual TLS, when the cluster's processes speak it.
    pub tls: Option<ClusterTls>,
}

impl Default for RemoteOptions {
    fn default() -> Self {
        RemoteOptions {
            call_timeout: Duration::from_secs(60),
            admin_timeout: Duration::from_secs(30 * 60),
            connect_timeout: Duration::from_secs(5),
            tls: None,
        }
    }
}

/// A regionserver reached over gRPC.
pub struct RemoteTabletService {
    name: String,
    /// The server's start code, as it said when this client connected.
    start_code: i64,
    address: String,
    client: TabletServiceClient<Channel>,
    options: RemoteOptions,
    handle: Handle,
    /// Shut down without waiting on drop (drop may happen on a tokio thread).
    runtime: Option<Runtime>,
}

impl Drop for RemoteTabletService {
    fn drop(&mut self) {
        if let Some(runtime) = self.runtime.take() {
            runtime.shutdown_background();
        }
    }
}

/// A call that did not get an answer from the server.
fn unreachable(address: &str, why: impl std::fmt::Display) -> RsError {
    RsError::Remote {
        kind: RemoteFailure::Other { permanent: false },
        message: format!("regionserver at {address}: {why}"),
    }
}

/// The error a status stands for: the server's `Failure` when it sent one; a
/// connection that could not be made (the request never left) is
/// [`RsError::Unreachable`]; a connection that broke under the call (the status
/// comes from the client's own transport, not from the server)
/// [`RsError::Interrupted`]; anything else a failure whose outcome is unknown.
fn error_of(address: &str, status: Status) -> RsError {
    if !status.details().is_empty() {
        if let Ok(failure) = pb::Failure::decode(status.details()) {
            return failure_from_wire(failure);
        }
    }
    if status.code() == tonic::Code::Unavailable && never_connected(&status) {
        return RsError::Unreachable {
            server: address.to_owned(),
            message: status.message().to_owned(),
        };
    }
    // A status the server sent carries no source error; one the client's transport
    // made up from a broken connection does.
    if std::error::Error::source(&status).is_some() {
        return RsError::Interrupted {
            server: address.to_owned(),
            message: status.message().to_owned(),
        };
    }
    unreachable(address, status.message())
}

/// True when the status comes from failing to open a connection at all.
fn never_connected(status: &Status) -> bool {
    let text = with_causes(status.message().to_owned(), status);
    text.contains("tcp connect error") || text.contains("Connection refused")
}

impl RemoteTabletService {
    /// Connects to the regionserver at `address` (`host:port`) and asks its name.
    pub fn connect(address: &str, options: RemoteOptions) -> RsResult<Self> {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .thread_name("tabula-rs-client")
            .enable_all()
            .build()
            .map_err(|e| unreachable(address, format!("cannot start a runtime: {e}")))?;
        let handle = runtime.handle().clone();
        let connect_timeout = options.connect_timeout;
        let endpoint = endpoint(address, options.tls.as_ref())
            .map_err(|e| unreachable(address, e))?
            .connect_timeout(options.connect_timeout)
            .tcp_nodelay(true)
            .http2_keep_alive_interval(Duration::from_secs(10))
            .keep_alive_timeout(Duration::from_secs(10));
        let channel = {
            let _entered = handle.enter();
            endpoint.connect_lazy()
        };
        let client = TabletServiceClient::new(channel)
            .max_decoding_message_size(MAX_MESSAGE_BYTES)
            .max_encoding_message_size(MAX_MESSAGE_BYTES);
        let mut remote = RemoteTabletService {
            name: String::new(),
            start_code: 0,
            address: address.to_owned(),
            client,
            options,
            handle,
            runtime: Some(runtime),
        };
        let reply = remote.call(connect_timeout, |mut c| async move {
            c.name(pb::Empty {}).await
        })?;
        remote.name = reply.name;
        remote.start_code = reply.start_code;
        Ok(remote)
    }

    /// The address this client calls.
    pub fn address(&self) -> &str {
        &self.address
    }

    /// Runs one call on the client's runtime and waits at most `timeout` for it.
    fn call<T, F, Fut>(&self, timeout: Duration, call: F) -> RsResult<T>
    where
        T: Send + 'static,
        F: FnOnce(TabletServiceClient<Channel>) -> Fut,
        Fut: Future<Output = Result<Response<T>, Status>> + Send + 'static,
    {
        let future = call(self.client.clone());
        let (sender, receiver) = mpsc::sync_channel(1);
        self.handle.spawn(async move {
            let outcome = tokio::time::timeout(timeout, future).await;
            // The caller waits for this; if it is gone there is no one to tell.
            let _ = sender.send(outcome);
        });
        match receiver.recv() {
            Ok(Ok(Ok(response))) => Ok(response.into_inner()),
            Ok(Ok(Err(status))) => Err(error_of(&self.address, status)),
            Ok(Err(_)) => Err(unreachable(
                &self.address,
                format!("no answer within {timeout:?}; the outcome is unknown"),
            )),
            Err(_) => Err(unreachable(&self.address, "the client's runtime stopped")),
        }
    }

    fn data_call<T, F, Fut>(&self, call: F) -> RsResult<T>
    where
        T: Send + 'static,
        F: FnOnce(TabletServiceClient<Channel>) -> Fut,
        Fut: Future<Output = Result<Response<T>, Status>> + Send + 'static,
    {
        self.call(self.options.call_timeout, call)
    }

    fn admin_call<T, F, Fut>(&self, call: F) -> RsResult<T>
    where
        T: Send + 'static,
        F: FnOnce(TabletServiceClient<Channel>) -> Fut,
        Fut: Future<Output = Result<Response<T>, Status>> + Send + 'static,
    {
        self.call(self.options.admin_timeout, call)
    }
}

impl TabletService for RemoteTabletService {
    fn name(&self) -> String {
        self.name.clone()
    }

    fn start_code(&self) -> i64 {
        self.start_code
    }

    fn get(&self, tablet: u64, row: &Bytes, spec: &ReadSpec) -> RsResult<Vec<Cell>> {
        let request = pb::GetRequest {
            tablet,
            row: row.clone(),
            spec: Some(read_spec_to_wire(spec)),
        };
        self.data_call(|mut c| async move { c.get(request).await })
            .map(cells_from_wire)
    }

    fn mutate(&self, tablet: u64, mutation: &RowMutation, durability: Durability) -> RsResult<()> {
        let request = pb::MutateRequest {
            tablet,
            mutation: Some(mutation_to_wire(mutation)),
            durability: durability_to_wire(durability),
        };
        self.data_call(|mut c| async move { c.mutate(request).await })
            .map(|_| ())
    }

    fn mutate_batch(
        &self,
        batches: &[(u64, Vec<&RowMutation>)],
        durability: Durability,
    ) -> Vec<RsResult<Vec<RsResult<()>>>> {
        let request = pb::MutateBatchRequest {
            batches: batches
                .iter()
                .map(|(tablet, rows)| pb::TabletMutations {
                    tablet: *tablet,
                    rows: rows.iter().map(|m| mutation_to_wire(m)).collect(),
                })
                .collect(),
            durability: durability_to_wire(durability),
        };
        let reply = match self.data_call(|mut c| async move { c.mutate_batch(request).await }) {
            Ok(reply) => reply,
            Err(e) => return batches.iter().map(|_| Err(e.copy_for_part())).collect(),
        };
        let mut outcomes: Vec<RsResult<Vec<RsResult<()>>>> = reply
            .tablets
            .into_iter()
            .map(|tablet| match tablet.failure {
                Some(failure) => Err(failure_from_wire(failure)),
                None => Ok(tablet
                    .rows
                    .into_iter()
                    .map(|row| row.failure.map_or(Ok(()), |f| Err(failure_from_wire(f))))
                    .collect()),
            })
            .collect();
        // A reply that does not cover the request leaves the rest unknown.
        outcomes.resize_with(batches.len(), || {
            Err(unreachable(&self.address, "the reply left this tablet out"))
        });
        for (outcome, (_, rows)) in outcomes.iter_mut().zip(batches) {
            if let Ok(results) = outcome {
                if results.len() != rows.len() {
                    *outcome = Err(unreachable(
                        &self.address,
                        "the reply does not match the rows sent",
                    ));
                }
            }
        }
        outcomes
    }

    fn check_and_mutate(
        &self,
        tablet: u64,
        condition: &Condition,
        mutation: &RowMutation,
        durability: Durability,
    ) -> RsResult<bool> {
        let request = pb::CheckAndMutateRequest {
            tablet,
            condition: Some(condition_to_wire(condition)),
            mutation: Some(mutation_to_wire(mutation)),
            durability: durability_to_wire(durability),
        };
        self.data_call(|mut c| async move { c.check_and_mutate(request).await })
            .map(|reply| reply.applied)
    }

    fn increment(
        &self,
        tablet: u64,
        row: &Bytes,
        columns: &[(Bytes, Bytes, i64)],
        durability: Durability,
    ) -> RsResult<Vec<Cell>> {
        let request = pb::IncrementRequest {
            tablet,
            row: row.clone(),
            columns: columns
                .iter()
                .map(|(family, qualifier, amount)| pb::Increment {
                    family: family.clone(),
                    qualifier: qualifier.clone(),
                    amount: *amount,
                })
                .collect(),
            durability: durability_to_wire(durability),
        };
        self.data_call(|mut c| async move { c.increment(request).await })
            .map(cells_from_wire)
    }

    fn append(
        &self,
        tablet: u64,
        row: &Bytes,
        columns: &[(Bytes, Bytes, Bytes)],
        durability: Durability,
    ) -> RsResult<Vec<Cell>> {
        let request = pb::AppendRequest {
            tablet,
            row: row.clone(),
            columns: columns
                .iter()
                .map(|(family, qualifier, value)| pb::Append {
                    family: family.clone(),
                    qualifier: qualifier.clone(),
                    value: value.clone(),
                })
                .collect(),
            durability: durability_to_wire(durability),
        };
        self.data_call(|mut c| async move { c.append(request).await })
            .map(cells_from_wire)
    }

    fn open_scanner(&self, tablet: u64, spec: &ScanSpec) -> RsResult<u64> {
        let request = pb::OpenScannerRequest {
            tablet,
            spec: Some(scan_spec_to_wire(spec)),
        };
        self.data_call(|mut c| async move { c.open_scanner(request).await })
            .map(|reply| reply.scanner)
    }

    fn scanner_next(&self, scanner: u64, max_rows: usize) -> RsResult<ScanBatch> {
        let request = pb::ScannerNextRequest {
            scanner,
            max_rows: u64::try_from(max_rows).unwrap_or(u64::MAX),
        };
        self.data_call(|mut c| async move { c.scanner_next(request).await })
            .map(scan_batch_from_wire)
    }

    fn close_scanner(&self, scanner: u64) {
        let request = pb::ScannerId { scanner };
        if let Err(e) = self.data_call(|mut c| async move { c.close_scanner(request).await }) {
            // Its lease ends it on the server anyway.
            tracing::debug!(scanner, error = %e, "closing a remote scanner failed");
        }
    }

    fn open_tablet(&self, desc: &TabletDescriptor) -> RsResult<()> {
        let request = descriptor_to_wire(desc);
        self.admin_call(|mut c| async move { c.open_tablet(request).await })
            .map(|_| ())
    }

    fn close_tablet(&self, tablet: u64) -> RsResult<()> {
        let request = pb::TabletId { tablet };
        self.admin_call(|mut c| async move { c.close_tablet(request).await })
            .map(|_| ())
    }

    fn destroy_tablet(&self, tablet: u64) -> RsResult<()> {
        let request = pb::TabletId { tablet };
        self.admin_call(|mut c| async move { c.destroy_tablet(request).await })
            .map(|_| ())
    }

    fn split_tablet(
        &self,
        tablet: u64,
        at: Option<Bytes>,
        left: u64,
        right: u64,
    ) -> RsResult<SplitOutcome> {
        let request = pb::SplitRequest {
            tablet,
            at,
            left,
            right,
        };
        split_from_wire(self.admin_call(|mut c| async move { c.split_tablet(request).await })?)
    }

    fn flush_tablet(&self, tablet: u64) -> RsResult<()> {
        let request = pb::TabletId { tablet };
        self.admin_call(|mut c| async move { c.flush_tablet(request).await })
            .map(|_| ())
    }

    fn compact_tablet(&self, tablet: u64, major: bool) -> RsResult<()> {
        let request = pb::CompactRequest { tablet, major };
        self.admin_call(|mut c| async move { c.compact_tablet(request).await })
            .map(|_| ())
    }

    fn update_schema(&self, tablet: u64, schema: &TableSchema) -> RsResult<()> {
        let request = pb::UpdateSchemaRequest {
            tablet,
            schema: Some(schema_to_wire(schema)),
        };
        self.admin_call(|mut c| async move { c.update_schema(request).await })
            .map(|_| ())
    }

    fn report(&self) -> Vec<TabletReport> {
        match self
            .data_call(|mut c| async move { c.report(pb::Empty {}).await })
            .and_then(report_from_wire)
        {
            Ok(report) => report,
            Err(e) => {
                tracing::warn!(server = %self.name, error = %e, "no report from a regionserver");
                Vec::new()
            }
        }
    }

    fn collect_garbage(&self, live: &HashSet<u64>) -> RsResult<usize> {
        let request = pb::CollectGarbageRequest {
            live: live.iter().copied().collect(),
        };
        self.admin_call(|mut c| async move { c.collect_garbage(request).await })
            .map(|reply| usize::try_from(reply.removed).unwrap_or(usize::MAX))
    }

    fn recover_log_of(&self, server: &str) -> RsResult<()> {
        let request = pb::RecoverLogRequest {
            server: server.to_owned(),
        };
        self.admin_call(|mut c| async move { c.recover_log_of(request).await })
            .map(|_| ())
    }

    fn slow_calls(&self) -> RsResult<Vec<SlowCall>> {
        self.data_call(|mut c| async move { c.slow_calls(pb::Empty {}).await })
            .and_then(|reply| reply.calls.into_iter().map(slow_call_from_wire).collect())
    }

    fn clear_slow_calls(&self) -> RsResult<bool> {
        self.data_call(|mut c| async move { c.clear_slow_calls(pb::Empty {}).await })
            .map(|reply| reply.cleared)
    }
}
