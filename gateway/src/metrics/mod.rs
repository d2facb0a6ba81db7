//! Metrics of a Tabula process, in the Prometheus (OpenMetrics) text format, read
//! at each scrape from the counters the components already keep.
//!
//! Owns: [`Sources`] (what a process has to report: its Thrift gateways, its
//! regionserver, its coordinator), the names and help texts of the metrics, and
//! [`http`], the small HTTP server answering `GET /metrics` (the role of HBase's
//! info port). Every process kind serves it: `tabula serve` reports all three,
//! `tabula regionserver` its regionserver, `tabula gateway` its gateways.
//! Must not: keep counters of its own or change what it reads.

pub mod http;

use std::sync::Arc;

use prometheus_client::collector::Collector;
use prometheus_client::encoding::{DescriptorEncoder, EncodeMetric};
use prometheus_client::metrics::counter::ConstCounter;
use prometheus_client::metrics::gauge::ConstGauge;
use prometheus_client::metrics::MetricType;
use prometheus_client::registry::Registry;
use tabula_coordinator::Coordinator;
use tabula_regionserver::{RegionServer, TabletService};

use crate::server::ServerStats;
use crate::thrift1::coalescer::IncrementCoalescer;

/// What one process reports.
#[derive(Clone, Default)]
pub struct Sources {
    /// The Thrift gateways, by the name of their API (`thrift1`, `thrift2`).
    pub gateways: Vec<(&'static str, Arc<ServerStats>)>,
    /// The regionserver of this process, if it has one.
    pub regionserver: Option<Arc<RegionServer>>,
    /// The coordinator of this process (active or standby), if it has one.
    pub coordinator: Option<Arc<Coordinator>>,
    /// Thrift1's increment coalescer, when increments are coalesced.
    pub increments: Option<Arc<IncrementCoalescer>>,
}

impl std::fmt::Debug for Sources {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Sources")
            .field(
                "gateways",
                &self.gateways.iter().map(|(n, _)| n).collect::<Vec<_>>(),
            )
            .field("regionserver", &self.regionserver.is_some())
            .field("coordinator", &self.coordinator.is_some())
            .field("increments", &self.increments.is_some())
            .finish()
    }
}

impl Sources {
    /// The metrics text of everything this process reports now.
    pub fn render(&self) -> Result<String, std::fmt::Error> {
        let mut registry = Registry::with_prefix("tabula");
        registry.register_collector(Box::new(self.clone()));
        let mut text = String::new();
        prometheus_client::encoding::text::encode(&mut text, &registry)?;
        Ok(text)
    }
}

fn to_i64(v: u64) -> i64 {
    i64::try_from(v).unwrap_or(i64::MAX)
}

/// Writes one metric without labels.
fn single(
    encoder: &mut DescriptorEncoder<'_>,
    name: &str,
    help: &str,
    value: Value,
) -> Result<(), std::fmt::Error> {
    let metric = encoder.encode_descriptor(name, help, None, value.metric_type())?;
    value.encode(metric)
}

/// Writes one metric with one sample per label set.
fn labelled(
    encoder: &mut DescriptorEncoder<'_>,
    name: &str,
    help: &str,
    kind: MetricType,
    samples: &[(Vec<(&str, String)>, Value)],
) -> Result<(), std::fmt::Error> {
    if samples.is_empty() {
        return Ok(());
    }
    let mut metric = encoder.encode_descriptor(name, help, None, kind)?;
    for (labels, value) in samples {
        let sample = metric.encode_family(labels)?;
        value.encode(sample)?;
    }
    Ok(())
}

/// A sample's value: a counter (only grows while the process lives) or a gauge.
#[derive(Debug, Clone, Copy)]
enum Value {
    Counter(u64),
    Gauge(i64),
}

impl Value {
    fn gauge(v: u64) -> Value {
        Value::Gauge(to_i64(v))
    }

    fn metric_type(&self) -> MetricType {
        match self {
            Value::Counter(_) => MetricType::Counter,
            Value::Gauge(_) => MetricType::Gauge,
        }
    }

    fn encode(
        &self,
        encoder: prometheus_client::encoding::MetricEncoder<'_>,
    ) -> Result<(), std::fmt::Error> {
        match *self {
            Value::Counter(v) => ConstCounter::new(v).encode(encoder),
            Value::Gauge(v) => ConstGauge::new(v).encode(encoder),
        }
    }
}

impl Collector for Sources {
    fn encode(&self, mut encoder: DescriptorEncoder<'_>) -> Result<(), std::fmt::Error> {
        self.encode_gateways(&mut encoder)?;
        if let Some(increments) = &self.increments {
            encode_increments(increments, &mut encoder)?;
        }
        if let Some(rs) = &self.regionserver {
            encode_regionserver(rs, &mut encoder)?;
        }
        if let Some(coordinator) = &self.coordinator {
            encode_coordinator(coordinator, &mut encoder)?;
        }
        Ok(())
    }
}

impl Sources {
    fn encode_gateways(&self, encoder: &mut DescriptorEncoder<'_>) -> Result<(), std::fmt::Error> {
        let snapshots: Vec<_> = self
            .gateways
            .iter()
            .map(|(api, stats)| (*api, stats.snapshot()))
            .collect();
        type Pick = fn(&crate::server::StatsSnapshot) -> Value;
        let per_gateway: [(&str, &str, MetricType, Pick); 9] = [
            (
                "thrift_connections_open",
                "Client connections open now.",
                MetricType::Gauge,
                |s| Value::gauge(s.connections_open),
            ),
            (
                "thrift_connections",
                "Client connections accepted.",
                MetricType::Counter,
                |s| Value::Counter(s.connections_total),
            ),
            (
                "thrift_calls_in_flight",
                "Calls being served now.",
                MetricType::Gauge,
                |s| Value::gauge(s.calls_in_flight),
            ),
            (
                "thrift_calls",
                "Calls served (each reply or exception sent counts once).",
                MetricType::Counter,
                |s| Value::Counter(s.calls_total),
            ),
            (
                "thrift_calls_failed",
                "Calls whose processing failed without a usable reply.",
                MetricType::Counter,
                |s| Value::Counter(s.calls_failed),
            ),
            (
                "thrift_malformed_messages",
                "Messages that could not be decoded (the connection was closed).",
                MetricType::Counter,
                |s| Value::Counter(s.malformed_messages),
            ),
            (
                "thrift_oversized_messages",
                "Messages over the size limit (the connection was closed).",
                MetricType::Counter,
                |s| Value::Counter(s.oversized_messages),
            ),
            (
                "thrift_unrecognized_connections",
                "Connections whose first bytes matched no transport and protocol (on a TLS port: were no TLS handshake).",
                MetricType::Counter,
                |s| Value::Counter(s.unrecognized_connections),
            ),
            (
                "thrift_tls_handshake_failures",
                "TLS handshakes that failed or timed out (TLS ports only).",
                MetricType::Counter,
                |s| Value::Counter(s.tls_handshake_failures),
            ),
        ];
        for (name, help, kind, pick) in per_gateway {
            let samples: Vec<_> = snapshots
                .iter()
                .map(|(api, s)| (vec![("api", (*api).to_owned())], pick(s)))
                .collect();
            labelled(encoder, name, help, kind, &samples)?;
        }
        let mut by_mode = Vec::new();
        for (api, s) in &snapshots {
            let m = s.modes;
            for (mode, n) in [
                ("buffered_binary", m.unframed_binary),
                ("framed_binary", m.framed_binary),
                ("buffered_compact", m.unframed_compact),
                ("framed_compact", m.framed_compact),
                ("http", m.http),
            ] {
                by_mode.push((
                    vec![("api", (*api).to_owned()), ("mode", mode.to_owned())],
                    Value::Counter(n),
                ));
            }
        }
        labelled(
            encoder,
            "thrift_connections_by_mode",
            "Client connections accepted, by the transport and protocol detected.",
            MetricType::Counter,
            &by_mode,
        )
    }
}

fn encode_increments(
    coalescer: &IncrementCoalescer,
    encoder: &mut DescriptorEncoder<'_>,
) -> Result<(), std::fmt::Error> {
    let stats = coalescer.stats();
    let count = |c: &std::sync::atomic::AtomicU64| {
        Value::Counter(c.load(std::sync::atomic::Ordering::Relaxed))
    };
    single(
        encoder,
        "thrift1_increments_queued",
        "Thrift1 increments queued by the coalescer.",
        count(&stats.queued),
    )?;
    single(
        encoder,
        "thrift1_increments_coalesced",
        "Queued increments added to an amount already pending for their cell.",
        count(&stats.coalesced),
    )?;
    single(
        encoder,
        "thrift1_increment_rows_applied",
        "Row increments the coalescer applied (one per row and round).",
        count(&stats.applied),
    )?;
    single(
        encoder,
        "thrift1_increments_failed",
        "Cells whose coalesced amount failed to apply (logged; the amount is lost).",
        count(&stats.failed),
    )?;
    single(
        encoder,
        "thrift1_increments_pending_cells",
        "Cells with a coalesced amount waiting to be applied.",
        Value::gauge(coalescer.pending_cells() as u64),
    )
}

fn encode_regionserver(
    rs: &RegionServer,
    encoder: &mut DescriptorEncoder<'_>,
) -> Result<(), std::fmt::Error> {
    let engine = rs.engine();
    let server = rs.name();
    let tablets = engine.tablets();
    let mut memtable = Vec::new();
    let mut files = Vec::new();
    let mut file_bytes = Vec::new();
    let mut reads = Vec::new();
    let mut writes = Vec::new();
    for t in &tablets {
        let stats = t.stats();
        let requests = t.request_counts();
        let labels = vec![
            ("table", t.schema().name.clone()),
            ("tablet", t.id().to_string()),
        ];
        memtable.push((labels.clone(), Value::gauge(stats.memtable_bytes as u64)));
        files.push((labels.clone(), Value::gauge(stats.file_count as u64)));
        file_bytes.push((labels.clone(), Value::gauge(stats.file_bytes)));
        reads.push((labels.clone(), Value::Counter(requests.reads)));
        writes.push((labels, Value::Counter(requests.writes)));
    }
    let on_server = |v: Value| vec![(vec![("server", server.clone())], v)];
    labelled(
        encoder,
        "regionserver_tablets",
        "Tablets open on this process's regionserver.",
        MetricType::Gauge,
        &on_server(Value::gauge(tablets.len() as u64)),
    )?;
    labelled(
        encoder,
        "tablet_memtable_bytes",
        "Bytes in a tablet's memtables, the active one and those waiting for a flush.",
        MetricType::Gauge,
        &memtable,
    )?;
    labelled(
        encoder,
        "tablet_sstables",
        "SSTables a tablet reads.",
        MetricType::Gauge,
        &files,
    )?;
    labelled(
        encoder,
        "tablet_sstable_bytes",
        "Bytes of the SSTables a tablet reads.",
        MetricType::Gauge,
        &file_bytes,
    )?;
    labelled(
        encoder,
        "tablet_read_requests",
        "Rows a tablet has read since it was opened here: one per get and per row a scan returned.",
        MetricType::Counter,
        &reads,
    )?;
    labelled(
        encoder,
        "tablet_write_requests",
        "Row mutations a tablet has applied since it was opened here (puts, deletes, read-modify-writes).",
        MetricType::Counter,
        &writes,
    )?;
    let memory = engine.memtable_memory();
    single(
        encoder,
        "memtable_memory_bytes",
        "Bytes all memtables of the process hold (writes wait above the limit).",
        Value::gauge(memory.bytes() as u64),
    )?;
    single(
        encoder,
        "memtable_memory_limit_bytes",
        "The memtables' byte limit.",
        Value::gauge(memory.limit() as u64),
    )?;
    let cache = engine.block_cache().stats();
    let in_memory = engine.in_memory_block_cache().stats();
    single(
        encoder,
        "block_cache_hits",
        "Block reads served from the block caches (in-memory families' included).",
        Value::Counter(cache.hits + in_memory.hits),
    )?;
    single(
        encoder,
        "block_cache_misses",
        "Block reads that went to disk (in-memory families' included).",
        Value::Counter(cache.misses + in_memory.misses),
    )?;
    single(
        encoder,
        "block_cache_in_memory_bytes",
        "Bytes of in-memory families' blocks cached (apart from the block cache).",
        Value::gauge(in_memory.weighted_bytes),
    )?;
    single(
        encoder,
        "block_cache_in_memory_capacity_bytes",
        "The byte bound of in-memory families' cached blocks.",
        Value::gauge(in_memory.capacity_bytes),
    )?;
    single(
        encoder,
        "block_cache_bytes",
        "Bytes of the blocks cached.",
        Value::gauge(cache.weighted_bytes),
    )?;
    single(
        encoder,
        "block_cache_capacity_bytes",
        "The block cache's byte bound.",
        Value::gauge(cache.capacity_bytes),
    )?;
    let work = engine.activity();
    for (name, help, value) in [
        (
            "flushes",
            "Memtables written out as SSTables.",
            Value::Counter(work.flushes),
        ),
        (
            "flushed_bytes",
            "Bytes of the SSTables flushes wrote.",
            Value::Counter(work.flushed_bytes),
        ),
        (
            "compaction_read_bytes",
            "Bytes of the SSTables compactions read.",
            Value::Counter(work.compaction_read_bytes),
        ),
        (
            "compaction_written_bytes",
            "Bytes of the SSTables compactions wrote.",
            Value::Counter(work.compaction_written_bytes),
        ),
        (
            "flush_queue",
            "Tablets waiting for a flush.",
            Value::gauge(work.queued_flushes),
        ),
        (
            "compaction_queue",
            "Tablets waiting for a compaction check.",
            Value::gauge(work.queued_compactions),
        ),
    ] {
        single(encoder, name, help, value)?;
    }
    labelled(
        encoder,
        "compactions",
        "Compactions, one per family rewritten: merging (bounding the files a read consults) or major.",
        MetricType::Counter,
        &[
            (vec![("kind", "merging".to_owned())], Value::Counter(work.compactions)),
            (vec![("kind", "major".to_owned())], Value::Counter(work.major_compactions)),
        ],
    )?;
    let log = engine.log_stats();
    single(
        encoder,
        "commit_log_segments",
        "Commit log segments kept (not yet covered by flushes).",
        Value::gauge(log.segments as u64),
    )?;
    single(
        encoder,
        "commit_log_bytes",
        "Bytes of the commit log segments kept.",
        Value::gauge(log.size_bytes),
    )?;
    single(
        encoder,
        "commit_log_appended_bytes",
        "Record bytes appended to the commit log.",
        Value::Counter(log.appended_bytes),
    )?;
    single(
        encoder,
        "commit_log_synced_bytes",
        "Record bytes of the commit log made durable by fsync.",
        Value::Counter(log.synced_bytes),
    )?;
    single(
        encoder,
        "commit_log_fsyncs",
        "fsync calls of the commit log (group commits and directory syncs).",
        Value::Counter(log.fsyncs),
    )
}

fn encode_coordinator(
    coordinator: &Coordinator,
    encoder: &mut DescriptorEncoder<'_>,
) -> Result<(), std::fmt::Error> {
    single(
        encoder,
        "coordinator_deposed",
        "1 once this process's coordinator lost its lock (it serves no admin call).",
        Value::Gauge(i64::from(coordinator.is_deposed())),
    )?;
    single(
        encoder,
        "coordinator_regionservers",
        "Regionservers the coordinator assigns tablets to.",
        Value::gauge(coordinator.servers().len() as u64),
    )?;
    let tablets: Vec<_> = coordinator
        .tablet_counts()
        .into_iter()
        .map(|(server, n)| (vec![("server", server)], Value::gauge(n as u64)))
        .collect();
    labelled(
        encoder,
        "coordinator_server_tablets",
        "Tablets each regionserver served at the last balancing round (catalog tablets included).",
        MetricType::Gauge,
        &tablets,
    )?;
    let rates: Vec<_> = coordinator
        .request_rates()
        .into_iter()
        .map(|(server, rate)| {
            (
                vec![("server", server)],
                Value::Gauge(rate.round().clamp(0.0, i64::MAX as f64) as i64),
            )
        })
        .collect();
    labelled(
        encoder,
        "coordinator_server_requests_per_second",
        "Rows read and mutated per second by each regionserver between the last two balancing rounds (what the balancer weighs).",
        MetricType::Gauge,
        &rates,
    )?;
    let tables = coordinator.tables();
    single(
        encoder,
        "coordinator_tables",
        "User tables.",
        Value::gauge(tables.len() as u64),
    )?;
    single(
        encoder,
        "coordinator_tables_disabled",
        "User tables disabled.",
        Value::gauge(tables.iter().filter(|t| !t.enabled).count() as u64),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_gateway_alone_reports_its_calls_and_nothing_of_storage() {
        let stats = Arc::new(ServerStats::new());
        let sources = Sources {
            gateways: vec![("thrift2", Arc::clone(&stats))],
            ..Sources::default()
        };
        let text = sources.render().unwrap();
        assert!(
            text.contains("tabula_thrift_calls_total{api=\"thrift2\"} 0"),
            "{text}"
        );
        assert!(text.contains("# TYPE tabula_thrift_connections_open gauge"));
        assert!(!text.contains("tabula_regionserver_tablets"));
        assert!(!text.contains("tabula_coordinator"));
        assert!(text.trim_end().ends_with("# EOF"));
    }
}
