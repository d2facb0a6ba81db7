//! The lock service over an etcd cluster: Chubby's role when Tabula's components run
//! as separate processes.
//!
//! Owns: [`EtcdLockService`] and [`EtcdConfig`], and the mapping of the
//! [`LockService`] model onto etcd's: a session is a lease, a file is a key under the
//! configured namespace (an ephemeral file is a key attached to its session's lease),
//! a file's revisions are the key's `mod_revision` and `create_revision`, a
//! transaction is one etcd `Txn` (its failure branch reads the compared keys back),
//! and a watch is an etcd watch on the prefix. Must not: keep state of its own (every
//! call asks etcd) or add meaning to paths.
//!
//! The trait is synchronous and etcd's client is not: the service owns a small tokio
//! runtime, and each call runs there while the caller waits on a channel (so callers
//! may be plain threads or tokio blocking threads alike). A call that gets no answer
//! within the request timeout fails with [`LockError::Unavailable`]: its outcome is
//! unknown, and callers re-read before writing again, as they must for any remote
//! service.
#![cfg_attr(not(test), deny(clippy::indexing_slicing))]

use std::future::Future;
use std::sync::mpsc;
use std::time::Duration;

use etcd_client::{
    Client, Compare as EtcdCompare, CompareOp, EventType, GetOptions, KeyValue, PutOptions,
    SortOrder, SortTarget, Txn as EtcdTxn, TxnOp, TxnOpResponse, WatchOptions,
};
use tabula_regionserver::rpc::tls::with_causes;
use tokio::runtime::{Handle, Runtime};
use tonic::transport::{Certificate, ClientTlsConfig, Endpoint, Identity};

use super::error::{LockError, LockResult};
use super::txn::{Compare, Op, Txn, TxnOutcome};
use super::types::{
    validate_path, validate_prefix, validate_ttl, Listing, SessionId, Versioned, MAX_PATH_LEN,
};
use super::watch::{WatchEvent, Watcher};
use super::LockService;

/// Keys read per page by [`LockService::list`] (all pages at one revision).
const LIST_PAGE: i64 = 1000;
/// Worker threads of the client's runtime: calls are small and mostly waiting.
const RUNTIME_THREADS: usize = 2;

/// Keep-alive pings on the connection to etcd, and how long one may go unanswered:
/// a dead member or a cut link ends open watches instead of leaving them silent.
const KEEP_ALIVE: Duration = Duration::from_secs(5);

/// TLS towards etcd (`https://` endpoints), as etcdctl's `--cacert`, `--cert` and
/// `--key`: the authorities etcd's certificates must chain to, and the client
/// certificate and key to present when etcd requires one (`--client-cert-auth`).
#[derive(Clone, PartialEq, Eq)]
pub struct EtcdTls {
    /// PEM certificates of the authorities.
    pub ca_pem: Vec<u8>,
    /// PEM client certificate chain and private key.
    pub client_pem: Option<(Vec<u8>, Vec<u8>)>,
}

impl std::fmt::Debug for EtcdTls {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("EtcdTls")
            .field("client_certificate", &self.client_pem.is_some())
            .finish_non_exhaustive()
    }
}

impl EtcdTls {
    fn client_config(&self) -> ClientTlsConfig {
        let config = ClientTlsConfig::new().ca_certificate(Certificate::from_pem(&self.ca_pem));
        match &self.client_pem {
            Some((cert, key)) => config.identity(Identity::from_pem(cert, key)),
            None => config,
        }
    }
}

/// Where the etcd cluster is and how to talk to it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EtcdConfig {
    /// Client URLs of the cluster's members (`http://host:2379`, or `https://` with
    /// [`EtcdConfig::tls`]).
    pub endpoints: Vec<String>,
    /// TLS for `https://` endpoints (all endpoints are one or the other).
    pub tls: Option<EtcdTls>,
    /// Prepended to every path, so several Tabula clusters (or tests) can share one
    /// etcd: empty, or `/name` (starts with `/`, does not end with one).
    pub namespace: String,
    /// How long one call may wait for its answer before failing as unavailable.
    pub request_timeout: Duration,
    /// How long establishing the connection may take.
    pub connect_timeout: Duration,
}

impl EtcdConfig {
    /// The cluster at `endpoints`, no namespace, 5 s per call and for connecting.
    pub fn new(endpoints: Vec<String>) -> Self {
        EtcdConfig {
            endpoints,
            tls: None,
            namespace: String::new(),
            request_timeout: Duration::from_secs(5),
            connect_timeout: Duration::from_secs(5),
        }
    }

    /// The same with every path under `namespace`.
    pub fn with_namespace(mut self, namespace: impl Into<String>) -> Self {
        self.namespace = namespace.into();
        self
    }

    /// The same speaking TLS to `https://` endpoints.
    pub fn with_tls(mut self, tls: EtcdTls) -> Self {
        self.tls = Some(tls);
        self
    }

    fn validate(&self) -> LockResult<()> {
        if self.endpoints.is_empty() {
            return Err(LockError::Unavailable("no etcd endpoint was given".into()));
        }
        let https = self.endpoints.iter().filter(|e| e.starts_with("https://"));
        let secure = https.count();
        let misconfigured = |reason: &str| Err(LockError::Unavailable(reason.to_owned()));
        if secure != 0 && secure != self.endpoints.len() {
            return misconfigured("etcd endpoints are either all https:// or none");
        }
        if secure != 0 && self.tls.is_none() {
            return misconfigured(
                "https:// etcd endpoints need the certificate authorities to check etcd's certificate against",
            );
        }
        if secure == 0 && self.tls.is_some() {
            return misconfigured("TLS towards etcd needs https:// endpoints");
        }
        let ns = &self.namespace;
        let bad = |reason| {
            Err(LockError::InvalidPath {
                path: ns.clone(),
                reason,
            })
        };
        if ns.is_empty() {
            return Ok(());
        }
        if !ns.starts_with('/') || ns.ends_with('/') {
            return bad("a namespace starts with '/' and does not end with one");
        }
        if ns.contains('\0') || ns.len() > MAX_PATH_LEN {
            return bad("a namespace has no NUL and at most MAX_PATH_LEN bytes");
        }
        Ok(())
    }
}

/// The [`LockService`] of an etcd cluster (etcd 3.4 or later).
pub struct EtcdLockService {
    client: Client,
    namespace: String,
    request_timeout: Duration,
    handle: Handle,
    /// Taken on drop and shut down without waiting (drop may happen on a tokio thread).
    runtime: Option<Runtime>,
}

impl std::fmt::Debug for EtcdLockService {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("EtcdLockService")
            .field("namespace", &self.namespace)
            .finish_non_exhaustive()
    }
}

impl Drop for EtcdLockService {
    fn drop(&mut self) {
        if let Some(runtime) = self.runtime.take() {
            runtime.shutdown_background();
        }
    }
}

impl EtcdLockService {
    /// Connects to the cluster and checks that it answers.
    pub fn connect(config: EtcdConfig) -> LockResult<Self> {
        config.validate()?;
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(RUNTIME_THREADS)
            .thread_name("tabula-etcd")
            .enable_all()
            .build()
            .map_err(|e| LockError::io("starting the etcd client's runtime", e))?;
        let handle = runtime.handle().clone();
        let endpoints = config
            .endpoints
            .iter()
            .map(|url| endpoint(url, &config))
            .collect::<LockResult<Vec<_>>>()?;
        let client = run_on(
            &handle,
            config.connect_timeout,
            "connecting to etcd",
            async move {
                let channel = tonic::transport::Channel::balance_list(endpoints.into_iter());
                let mut client = Client::from_channel(etcd_client::Channel::Tonic(channel), None)
                    .await
                    .map_err(|e| remote_error("connecting to etcd", e))?;
                // Connecting may be lazy: one read proves the cluster answers.
                client
                    .get("/", Some(GetOptions::new().with_count_only()))
                    .await
                    .map_err(|e| remote_error("reading from etcd", e))?;
                Ok(client)
            },
        )?;
        Ok(EtcdLockService {
            client,
            namespace: config.namespace,
            request_timeout: config.request_timeout,
            handle,
            runtime: Some(runtime),
        })
    }

    /// Runs `fut` on the client's runtime and waits for it, at most the request
    /// timeout.
    fn run<T, F>(&self, what: &'static str, fut: F) -> LockResult<T>
    where
        T: Send + 'static,
        F: Future<Output = LockResult<T>> + Send + 'static,
    {
        run_on(&self.handle, self.request_timeout, what, fut)
    }

    /// The etcd key of `path`.
    fn key(&self, path: &str) -> String {
        format!("{}{}", self.namespace, path)
    }

    /// The etcd key prefix of a list or watch `prefix`. Every path starts with `/`, so
    /// the empty prefix is `/`: with a namespace `/a`, it must not reach `/ab/...`.
    fn prefix_key(&self, prefix: &str) -> String {
        if prefix.is_empty() {
            self.key("/")
        } else {
            self.key(prefix)
        }
    }

    fn client(&self) -> Client {
        self.client.clone()
    }
}

/// The connection set-up for the member at `url`: timeouts, keep-alive pings and,
/// for `https://`, TLS.
fn endpoint(url: &str, config: &EtcdConfig) -> LockResult<Endpoint> {
    let unusable =
        |e: tonic::transport::Error| LockError::Unavailable(format!("etcd endpoint {url}: {e}"));
    let endpoint = Endpoint::from_shared(url.to_owned())
        .map_err(unusable)?
        .connect_timeout(config.connect_timeout)
        .tcp_nodelay(true)
        .keep_alive_while_idle(true)
        .http2_keep_alive_interval(KEEP_ALIVE)
        .keep_alive_timeout(KEEP_ALIVE);
    match &config.tls {
        Some(tls) if url.starts_with("https://") => {
            endpoint.tls_config(tls.client_config()).map_err(unusable)
        }
        _ => Ok(endpoint),
    }
}

/// Spawns `fut` on `handle` and waits for its result, at most `timeout`.
fn run_on<T, F>(handle: &Handle, timeout: Duration, what: &'static str, fut: F) -> LockResult<T>
where
    T: Send + 'static,
    F: Future<Output = LockResult<T>> + Send + 'static,
{
    let (sender, receiver) = mpsc::sync_channel(1);
    handle.spawn(async move {
        let result = match tokio::time::timeout(timeout, fut).await {
            Ok(result) => result,
            Err(_) => Err(LockError::Unavailable(format!(
                "{what}: no answer from etcd within {timeout:?}; the outcome is unknown"
            ))),
        };
        // The caller waits for this; if it is gone there is no one to tell.
        let _ = sender.send(result);
    });
    receiver.recv().unwrap_or_else(|_| {
        Err(LockError::Unavailable(format!(
            "{what}: the etcd client's runtime has stopped"
        )))
    })
}

/// An etcd client error as a lock-service error.
fn remote_error(what: &str, error: etcd_client::Error) -> LockError {
    use etcd_client::Error as E;
    match error {
        E::GRpcStatus(status) => match status.code() {
            tonic::Code::Unavailable
            | tonic::Code::DeadlineExceeded
            | tonic::Code::Cancelled
            | tonic::Code::Aborted
            | tonic::Code::ResourceExhausted
            | tonic::Code::Unknown
            | tonic::Code::Internal => {
                let message = with_causes(status.message().to_owned(), &status);
                LockError::Unavailable(format!("{what}: {message}"))
            }
            _ => LockError::Protocol(format!("{what}: {}", status.message())),
        },
        E::TransportError(e) => LockError::Unavailable(format!("{what}: {e}")),
        E::IoError(e) => LockError::Unavailable(format!("{what}: {e}")),
        E::WatchError(e) | E::LeaseKeepAliveError(e) => {
            LockError::Unavailable(format!("{what}: {e}"))
        }
        other => LockError::Protocol(format!("{what}: {other}")),
    }
}

/// True when etcd refused a request because the lease it names does not exist (or the
/// client found a keep-alive answered for no lease).
fn is_lease_not_found(error: &etcd_client::Error) -> bool {
    match error {
        etcd_client::Error::GRpcStatus(status) => {
            status.code() == tonic::Code::NotFound && status.message().contains("lease not found")
        }
        etcd_client::Error::LeaseKeepAliveError(message) => message.contains("lease not found"),
        _ => false,
    }
}

/// The etcd lease id of a session; `None` for ids etcd never hands out.
fn lease_id(session: SessionId) -> Option<i64> {
    i64::try_from(session.0).ok().filter(|id| *id > 0)
}

fn session_of(lease: i64) -> LockResult<SessionId> {
    u64::try_from(lease)
        .ok()
        .filter(|id| *id > 0)
        .map(SessionId)
        .ok_or_else(|| LockError::Protocol(format!("etcd reported lease id {lease}")))
}

fn revision(value: i64, what: &str) -> LockResult<u64> {
    u64::try_from(value).map_err(|_| LockError::Protocol(format!("etcd reported {what} {value}")))
}

/// The first key after every key starting with `prefix` (etcd's range end for a
/// prefix). Paths are UTF-8, which never has a 0xff byte, so the last byte is simply
/// raised; a prefix of only 0xff bytes means "to the end".
fn prefix_end(prefix: &[u8]) -> Vec<u8> {
    let mut end = prefix.to_vec();
    while let Some(last) = end.pop() {
        if last < 0xff {
            end.push(last + 1);
            return end;
        }
    }
    vec![0]
}

/// Turns etcd keys back into paths by removing the namespace.
#[derive(Clone)]
struct Decoder {
    namespace: String,
}

impl Decoder {
    fn path(&self, key: &[u8]) -> LockResult<String> {
        std::str::from_utf8(key)
            .ok()
            .and_then(|k| k.strip_prefix(self.namespace.as_str()))
            .filter(|p| p.starts_with('/'))
            .map(str::to_owned)
            .ok_or_else(|| {
                LockError::Protocol(format!(
                    "etcd returned key {:?} outside namespace {:?}",
                    String::from_utf8_lossy(key),
                    self.namespace
                ))
            })
    }

    fn file(&self, kv: &KeyValue) -> LockResult<(String, Versioned)> {
        let owner = match kv.lease() {
            0 => None,
            lease => Some(session_of(lease)?),
        };
        Ok((
            self.path(kv.key())?,
            Versioned {
                value: kv.value().to_vec(),
                revision: revision(kv.mod_revision(), "mod_revision")?,
                create_revision: revision(kv.create_revision(), "create_revision")?,
                owner,
            },
        ))
    }

    fn event(&self, event: &etcd_client::Event) -> LockResult<WatchEvent> {
        let kv = event
            .kv()
            .ok_or_else(|| LockError::Protocol("a watch event without its key".into()))?;
        Ok(match event.event_type() {
            EventType::Put => {
                let (path, file) = self.file(kv)?;
                WatchEvent::Put { path, file }
            }
            EventType::Delete => WatchEvent::Delete {
                path: self.path(kv.key())?,
                revision: revision(kv.mod_revision(), "mod_revision")?,
            },
        })
    }
}

impl EtcdLockService {
    fn decoder(&self) -> Decoder {
        Decoder {
            namespace: self.namespace.clone(),
        }
    }

    /// The etcd transaction for `txn`: its comparisons, its writes on success, and
    /// reads of the compared keys on failure.
    fn etcd_txn(&self, txn: &Txn) -> LockResult<EtcdTxn> {
        let compares: Vec<EtcdCompare> = txn
            .compares
            .iter()
            .map(|c| match c {
                Compare::Revision { path, revision } => EtcdCompare::mod_revision(
                    self.key(path),
                    CompareOp::Equal,
                    // A revision etcd cannot have never matches.
                    i64::try_from(*revision).unwrap_or(-1),
                ),
                Compare::Absent { path } => {
                    EtcdCompare::create_revision(self.key(path), CompareOp::Equal, 0)
                }
            })
            .collect();
        let mut ops = Vec::with_capacity(txn.ops.len());
        for op in &txn.ops {
            ops.push(match op {
                Op::Put { path, value, owner } => {
                    let options = match owner {
                        None => None,
                        Some(session) => Some(PutOptions::new().with_lease(
                            lease_id(*session).ok_or(LockError::SessionExpired(*session))?,
                        )),
                    };
                    TxnOp::put(self.key(path), value.clone(), options)
                }
                Op::Delete { path } => TxnOp::delete(self.key(path), None),
            });
        }
        let reads: Vec<TxnOp> = txn
            .compares
            .iter()
            .map(|c| TxnOp::get(self.key(c.path()), None))
            .collect();
        Ok(EtcdTxn::new().when(compares).and_then(ops).or_else(reads))
    }
}

impl LockService for EtcdLockService {
    fn create_session(&self, ttl: Duration) -> LockResult<SessionId> {
        validate_ttl(ttl)?;
        // etcd grants whole seconds: round up, never down.
        let seconds = ttl.as_secs() + u64::from(ttl.subsec_nanos() > 0);
        let seconds = i64::try_from(seconds.max(1)).unwrap_or(i64::MAX);
        let mut client = self.client();
        self.run("creating a session", async move {
            let granted = client
                .lease_grant(seconds, None)
                .await
                .map_err(|e| remote_error("granting a lease", e))?;
            if !granted.error().is_empty() {
                return Err(LockError::Protocol(format!(
                    "granting a lease: {}",
                    granted.error()
                )));
            }
            session_of(granted.id())
        })
    }

    fn keep_alive(&self, session: SessionId) -> LockResult<()> {
        let Some(id) = lease_id(session) else {
            return Err(LockError::SessionExpired(session));
        };
        let mut client = self.client();
        self.run("renewing a session", async move {
            // Opening the keep-alive stream sends one renewal and reads its answer; the
            // client reports a lapsed or unknown lease (etcd answers it with TTL 0) as
            // "lease not found".
            match client.lease_keep_alive(id).await {
                Ok(_) => Ok(()),
                Err(e) if is_lease_not_found(&e) => Err(LockError::SessionExpired(session)),
                Err(e) => Err(remote_error("renewing a lease", e)),
            }
        })
    }

    fn close_session(&self, session: SessionId) -> LockResult<()> {
        let Some(id) = lease_id(session) else {
            return Ok(());
        };
        let mut client = self.client();
        self.run("closing a session", async move {
            match client.lease_revoke(id).await {
                Ok(_) => Ok(()),
                Err(e) if is_lease_not_found(&e) => Ok(()),
                Err(e) => Err(remote_error("revoking a lease", e)),
            }
        })
    }

    fn session_alive(&self, session: SessionId) -> LockResult<bool> {
        let Some(id) = lease_id(session) else {
            return Ok(false);
        };
        let mut client = self.client();
        self.run("checking a session", async move {
            match client.lease_time_to_live(id, None).await {
                // -1: expired or never granted. 0 can be a lease in its last second.
                Ok(answer) => Ok(answer.ttl() >= 0),
                Err(e) if is_lease_not_found(&e) => Ok(false),
                Err(e) => Err(remote_error("reading a lease", e)),
            }
        })
    }

    fn get(&self, path: &str) -> LockResult<Option<Versioned>> {
        validate_path(path)?;
        let key = self.key(path);
        let decoder = self.decoder();
        let mut client = self.client();
        self.run("reading a file", async move {
            let answer = client
                .get(key, None)
                .await
                .map_err(|e| remote_error("reading a key", e))?;
            match answer.kvs().first() {
                Some(kv) => Ok(Some(decoder.file(kv)?.1)),
                None => Ok(None),
            }
        })
    }

    fn list(&self, prefix: &str) -> LockResult<Listing> {
        validate_prefix(prefix)?;
        let start = self.prefix_key(prefix).into_bytes();
        let end = prefix_end(&start);
        let decoder = self.decoder();
        let mut client = self.client();
        self.run("listing files", async move {
            let mut listing = Listing::default();
            let mut from = start;
            let mut at: Option<i64> = None;
            loop {
                let mut options = GetOptions::new()
                    .with_range(end.clone())
                    .with_limit(LIST_PAGE)
                    .with_sort(SortTarget::Key, SortOrder::Ascend);
                if let Some(at) = at {
                    options = options.with_revision(at);
                }
                let page = client
                    .get(from.clone(), Some(options))
                    .await
                    .map_err(|e| remote_error("listing keys", e))?;
                let page_revision = page
                    .header()
                    .map(|h| h.revision())
                    .ok_or_else(|| LockError::Protocol("a range answer without header".into()))?;
                let at = *at.get_or_insert(page_revision);
                listing.revision = revision(at, "revision")?;
                for kv in page.kvs() {
                    listing.files.push(decoder.file(kv)?);
                }
                match (page.more(), page.kvs().last()) {
                    (true, Some(last)) => {
                        from = last.key().to_vec();
                        from.push(0);
                    }
                    _ => return Ok(listing),
                }
            }
        })
    }

    fn commit(&self, txn: &Txn) -> LockResult<TxnOutcome> {
        txn.validate()?;
        let request = self.etcd_txn(txn)?;
        let first_owner = txn.ops.iter().find_map(|op| match op {
            Op::Put { owner, .. } => *owner,
            Op::Delete { .. } => None,
        });
        let compared = txn.compares.len();
        let decoder = self.decoder();
        let mut client = self.client();
        self.run("committing a transaction", async move {
            let answer = match client.txn(request).await {
                Ok(answer) => answer,
                Err(e) if is_lease_not_found(&e) => {
                    return Err(first_owner.map_or_else(
                        || LockError::Protocol("etcd named an unknown lease".into()),
                        LockError::SessionExpired,
                    ));
                }
                Err(e) => return Err(remote_error("committing a transaction", e)),
            };
            let at = answer
                .header()
                .map(|h| h.revision())
                .ok_or_else(|| LockError::Protocol("a txn answer without header".into()))?;
            if answer.succeeded() {
                return Ok(TxnOutcome::Committed {
                    revision: revision(at, "revision")?,
                });
            }
            let mut current = Vec::with_capacity(compared);
            for read in answer.op_responses() {
                let TxnOpResponse::Get(read) = read else {
                    return Err(LockError::Protocol(
                        "a failed txn answered something other than reads".into(),
                    ));
                };
                current.push(match read.kvs().first() {
                    Some(kv) => Some(decoder.file(kv)?.1),
                    None => None,
                });
            }
            if current.len() != compared {
                return Err(LockError::Protocol(format!(
                    "a failed txn read {} of its {compared} compared keys",
                    current.len()
                )));
            }
            Ok(TxnOutcome::Failed { current })
        })
    }

    fn watch(&self, prefix: &str) -> LockResult<Watcher> {
        validate_prefix(prefix)?;
        let key = self.prefix_key(prefix);
        let decoder = self.decoder();
        let mut client = self.client();
        let (events, receiver) = mpsc::channel();
        let (cancel, mut cancelled) = tokio::sync::oneshot::channel::<()>();
        self.run("opening a watch", async move {
            // Returns once etcd confirmed the watch: every later change is seen.
            let (mut watch, mut stream) = client
                .watch(key, Some(WatchOptions::new().with_prefix()))
                .await
                .map_err(|e| remote_error("opening a watch", e))?;
            tokio::spawn(async move {
                'watching: loop {
                    tokio::select! {
                        _ = &mut cancelled => break 'watching,
                        message = stream.message() => {
                            let answer = match message {
                                Ok(Some(answer)) if !answer.canceled() => answer,
                                Ok(_) => break 'watching,
                                Err(e) => {
                                    tracing::warn!(error = %e, "an etcd watch ended");
                                    break 'watching;
                                }
                            };
                            for event in answer.events() {
                                let event = match decoder.event(event) {
                                    Ok(event) => event,
                                    Err(e) => {
                                        tracing::warn!(error = %e, "closing an etcd watch");
                                        break 'watching;
                                    }
                                };
                                if events.send(event).is_err() {
                                    break 'watching;
                                }
                            }
                        }
                    }
                }
                // Best effort: the stream's end cancels it on the server as well.
                let _ = watch.cancel().await;
            });
            Ok(())
        })?;
        Ok(Watcher::with_drop_guard(receiver, Box::new(cancel)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prefix_end_raises_the_last_byte() {
        assert_eq!(prefix_end(b"/a/"), b"/a0".to_vec());
        assert_eq!(prefix_end(b"/a\xff"), b"/b".to_vec());
        assert_eq!(prefix_end(b"\xff\xff"), vec![0]);
    }

    #[test]
    fn namespaces_are_checked() {
        let config =
            |ns: &str| EtcdConfig::new(vec!["http://127.0.0.1:1".into()]).with_namespace(ns);
        assert!(config("").validate().is_ok());
        assert!(config("/tabula-test").validate().is_ok());
        assert!(config("tabula").validate().is_err());
        assert!(config("/tabula/").validate().is_err());
        assert!(EtcdConfig::new(Vec::new()).validate().is_err());
    }

    #[test]
    fn https_endpoints_and_tls_come_together() {
        let tls = EtcdTls {
            ca_pem: b"-----BEGIN CERTIFICATE-----".to_vec(),
            client_pem: None,
        };
        let urls = |list: &[&str]| list.iter().map(|u| u.to_string()).collect::<Vec<_>>();
        let secure = EtcdConfig::new(urls(&["https://10.0.0.1:2379", "https://10.0.0.2:2379"]));
        assert!(secure.clone().with_tls(tls.clone()).validate().is_ok());
        assert!(secure.validate().is_err(), "https without authorities");
        let plain = EtcdConfig::new(urls(&["http://10.0.0.1:2379"]));
        assert!(plain.clone().validate().is_ok());
        assert!(
            plain.with_tls(tls.clone()).validate().is_err(),
            "TLS over http"
        );
        let mixed = EtcdConfig::new(urls(&["https://10.0.0.1:2379", "http://10.0.0.2:2379"]));
        assert!(mixed.with_tls(tls).validate().is_err(), "mixed schemes");
    }

    #[test]
    fn decoding_keeps_keys_inside_the_namespace() {
        let decoder = Decoder {
            namespace: "/ns".into(),
        };
        assert_eq!(decoder.path(b"/ns/tabula/root").unwrap(), "/tabula/root");
        assert!(decoder.path(b"/other/tabula").is_err());
        assert!(decoder.path(b"/nsx").is_err());
        assert!(decoder.path(b"/ns/\xff").is_err());
    }

    #[test]
    fn session_ids_map_to_positive_leases() {
        assert_eq!(lease_id(SessionId(7)), Some(7));
        assert_eq!(lease_id(SessionId(0)), None);
        assert_eq!(lease_id(SessionId(u64::MAX)), None);
        assert!(session_of(-3).is_err());
        assert_eq!(session_of(9).unwrap(), SessionId(9));
    }
}
