//! Settings of a `tabula serve` process.
//!
//! Owns: [`Settings`] with its defaults, and loading them in layers: built-in
//! defaults, then a TOML file (`--config`), then `TABULA_*` environment variables
//! (e.g. `TABULA_LISTEN=0.0.0.0:9090`, `TABULA_MEMORY_BUDGET_MB=4096`), then command
//! line flags.
//! Must not: start anything.

use std::path::PathBuf;
use std::time::Duration;

use serde::Deserialize;
use tabula_regionserver::slow_log::SlowLogSettings;

/// Every setting of `tabula serve`, with its default.
#[derive(Debug, Clone, Deserialize, PartialEq)]
#[serde(default, deny_unknown_fields)]
pub struct Settings {
    /// Where tablets, the commit log and the embedded lock service live.
    pub data_dir: PathBuf,
    /// Client URLs of an etcd cluster to use as the lock service, comma-separated
    /// (`http://10.0.0.1:2379,http://10.0.0.2:2379`); empty: the embedded lock service
    /// under `data_dir/lock`.
    pub etcd_endpoints: String,
    /// Prefix of every key Tabula writes in etcd, so clusters can share one etcd:
    /// empty, or `/name`.
    pub etcd_namespace: String,
    /// TLS towards etcd (`https://` endpoints): the authorities etcd's certificate
    /// must chain to, a PEM file (etcdctl's `--cacert`).
    pub etcd_ca_file: String,
    /// The client certificate presented to etcd (`--cert`), a PEM file; for an etcd
    /// started with `--client-cert-auth`.
    pub etcd_cert_file: String,
    /// Its private key (`--key`), a PEM file.
    pub etcd_key_file: String,
    /// Wait as long as it takes for the coordinator lock (a standby coordinator that
    /// takes over when the active one is gone) instead of 30 s. Needs etcd.
    pub standby: bool,
    /// On etcd: where this process's RPC listens (the coordinator's admin service
    /// and the tablet service of its regionserver), which `tabula gateway`
    /// processes call. Published in etcd, so port 0 (any free port) works; on
    /// several machines give an address the others can reach.
    pub rpc_listen: String,
    /// Mutual TLS on the gRPC calls between the cluster's processes (HBase's RPC
    /// TLS): this process's certificate chain, a PEM file. Needs the key and CA
    /// files; empty: plaintext gRPC.
    pub rpc_tls_cert_file: String,
    /// The private key of `rpc_tls_cert_file`'s certificate, a PEM file.
    pub rpc_tls_key_file: String,
    /// The authorities every process's certificate must chain to, a PEM file.
    pub rpc_tls_ca_file: String,
    /// The name every server certificate is checked against; empty: the host of
    /// the address dialled.
    pub rpc_tls_server_name: String,
    /// Where `GET /metrics` (Prometheus text format) is served; empty disables
    /// it. Port 0 picks a free port, printed in the ready line as `metrics=`.
    pub metrics_listen: String,
    /// Thrift1 (`Hbase`) listen address.
    pub listen: String,
    /// Thrift2 (`THBaseService`) listen address; empty disables Thrift2.
    pub thrift2_listen: String,
    /// Largest Thrift message accepted, in bytes.
    pub max_frame_size: usize,
    /// Close client connections idle this long (0 = never).
    pub idle_timeout_secs: u64,
    /// TLS on both Thrift ports (HBase's `hbase.thrift.ssl.enabled`): the server's
    /// certificate chain, a PEM file. With it (and `tls_key_file`) the ports accept
    /// only TLS connections and serve HBase's HTTP mode inside them (HTTPS). Empty:
    /// no TLS.
    pub tls_cert_file: String,
    /// The private key of `tls_cert_file`'s certificate, a PEM file.
    pub tls_key_file: String,
    /// Clients must present a certificate issued by one of the authorities in this
    /// PEM file (mutual TLS); empty: no client certificate is asked for.
    pub tls_client_ca_file: String,
    /// Calls processed at once.
    pub max_concurrent_calls: usize,
    /// Event-loop threads per Thrift server serving quick calls (0 = a thread per
    /// connection for every call).
    pub event_loops: usize,
    /// Idle scanners are closed after this long.
    pub scanner_lease_secs: u64,
    /// Largest cell value accepted, in bytes.
    pub max_value_size: usize,
    /// Memory for block cache (1/4) and memtables (1/2), in MiB.
    pub memory_budget_mb: u64,
    /// A memtable is flushed at this size, in MiB.
    pub memtable_size_mb: usize,
    /// SSTable data block size, in KiB.
    pub block_size_kb: usize,
    /// Files per family a read may consult before a merging compaction.
    pub max_files_per_read: usize,
    /// Compaction write rate limit in MiB/s (0 = unlimited).
    pub compaction_mb_per_sec: u64,
    /// A synced write (SYNC_WAL, the default) waits for the commit log's fsync
    /// (true) or only for its write to the OS (false: HBase's
    /// `hbase.wal.hsync=false`, fsynced within a second). FSYNC_WAL always fsyncs.
    pub log_fsync: bool,
    /// Tablets larger than this are split, in MiB (0 = never).
    pub split_threshold_mb: u64,
    /// How often the coordinator looks for tablets to split and balances the
    /// regionservers (tablet counts, table spread, request load), in seconds.
    pub maintenance_interval_secs: u64,
    /// A tablet serving this many requests per second (rows read and mutated),
    /// too busy for any trade of tablets between regionservers to spread, is
    /// split in two (0 = never).
    pub hot_split_requests_per_sec: u64,
    /// ... when its files hold at least this many MiB.
    pub hot_split_min_mb: u64,
    /// Name of the regionserver reported to clients (default: the Thrift1 address).
    pub server_name: String,
    /// Serve reads only on both Thrift ports (HBase's `hbase.thrift.readonly`).
    pub readonly: bool,
    /// Thrift1 increment and incrementRows answer once queued; a worker applies
    /// them summed per cell (HBase's `hbase.regionserver.thrift.coalesceIncrement`).
    pub coalesce_increments: bool,
    /// Keep the slow-call log Thrift2's getSlowLogResponses reads (HBase's
    /// `hbase.regionserver.slowlog.buffer.enabled`).
    pub slow_log_enabled: bool,
    /// A tablet call running this many ms or more is logged as slow (HBase's
    /// `hbase.ipc.warn.response.time`).
    pub slow_log_threshold_ms: u64,
    /// A tablet call answering this many bytes or more is logged as large
    /// (HBase's `hbase.ipc.warn.response.size`).
    pub slow_log_large_bytes: u64,
    /// Calls the log keeps per regionserver, the oldest dropped first (HBase's
    /// `hbase.regionserver.slowlog.ringbuffer.size`).
    pub slow_log_size: usize,
}

impl Default for Settings {
    fn default() -> Self {
        Settings {
            data_dir: PathBuf::from("./tabula-data"),
            etcd_endpoints: String::new(),
            etcd_namespace: String::new(),
            etcd_ca_file: String::new(),
            etcd_cert_file: String::new(),
            etcd_key_file: String::new(),
            standby: false,
            rpc_listen: "127.0.0.1:0".into(),
            rpc_tls_cert_file: String::new(),
            rpc_tls_key_file: String::new(),
            rpc_tls_ca_file: String::new(),
            rpc_tls_server_name: String::new(),
            metrics_listen: "127.0.0.1:0".into(),
            listen: "127.0.0.1:9090".into(),
            thrift2_listen: "127.0.0.1:9091".into(),
            max_frame_size: 64 << 20,
            idle_timeout_secs: 0,
            tls_cert_file: String::new(),
            tls_key_file: String::new(),
            tls_client_ca_file: String::new(),
            max_concurrent_calls: 256,
            event_loops: 2,
            scanner_lease_secs: 60,
            max_value_size: 10 << 20,
            memory_budget_mb: 1024,
            memtable_size_mb: 64,
            block_size_kb: 64,
            max_files_per_read: 8,
            compaction_mb_per_sec: 128,
            log_fsync: true,
            split_threshold_mb: 256,
            maintenance_interval_secs: 10,
            hot_split_requests_per_sec: 5000,
            hot_split_min_mb: 16,
            server_name: String::new(),
            readonly: false,
            coalesce_increments: false,
            slow_log_enabled: false,
            slow_log_threshold_ms: 10_000,
            slow_log_large_bytes: 100 << 20,
            slow_log_size: 256,
        }
    }
}

/// Most event-loop threads a server may be given.
const MAX_EVENT_LOOPS: usize = 64;

/// Why settings could not be loaded.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    #[error("invalid configuration: {0}")]
    Invalid(#[from] config::ConfigError),
    #[error("invalid configuration: {0}")]
    Value(String),
}

/// Command-line overrides (highest precedence).
#[derive(Debug, Clone, Default)]
pub struct Overrides {
    pub data_dir: Option<PathBuf>,
    pub etcd_endpoints: Option<String>,
    pub listen: Option<String>,
    pub thrift2_listen: Option<String>,
    pub metrics_listen: Option<String>,
    pub readonly: Option<bool>,
}

/// Setting names, as they appear in files and (upper-cased, `TABULA_` prefixed) in
/// the environment.
const KEYS: &[&str] = &[
    "data_dir",
    "etcd_endpoints",
    "etcd_namespace",
    "etcd_ca_file",
    "etcd_cert_file",
    "etcd_key_file",
    "standby",
    "rpc_listen",
    "rpc_tls_cert_file",
    "rpc_tls_key_file",
    "rpc_tls_ca_file",
    "rpc_tls_server_name",
    "metrics_listen",
    "listen",
    "thrift2_listen",
    "max_frame_size",
    "idle_timeout_secs",
    "tls_cert_file",
    "tls_key_file",
    "tls_client_ca_file",
    "max_concurrent_calls",
    "event_loops",
    "scanner_lease_secs",
    "max_value_size",
    "memory_budget_mb",
    "memtable_size_mb",
    "block_size_kb",
    "max_files_per_read",
    "compaction_mb_per_sec",
    "log_fsync",
    "split_threshold_mb",
    "maintenance_interval_secs",
    "hot_split_requests_per_sec",
    "hot_split_min_mb",
    "server_name",
    "readonly",
    "coalesce_increments",
    "slow_log_enabled",
    "slow_log_threshold_ms",
    "slow_log_large_bytes",
    "slow_log_size",
];

/// The `TABULA_*` variables that name settings (others, such as those test scripts
/// use, are left alone).
fn known_environment() -> config::Map<String, String> {
    std::env::vars()
        .filter(|(k, _)| {
            k.strip_prefix("TABULA_")
                .is_some_and(|rest| KEYS.iter().any(|key| key.eq_ignore_ascii_case(rest)))
        })
        .collect()
}

impl Settings {
    /// Loads defaults, then `file`, then `TABULA_*` variables, then `overrides`.
    pub fn load(
        file: Option<&std::path::Path>,
        overrides: &Overrides,
    ) -> Result<Settings, ConfigError> {
        let mut builder = config::Config::builder();
        if let Some(f) = file {
            builder = builder.add_source(
                config::File::from(f)
                    .format(config::FileFormat::Toml)
                    .required(true),
            );
        }
        builder = builder.add_source(
            config::Environment::with_prefix("TABULA")
                .try_parsing(true)
                .source(Some(known_environment())),
        );
        let layered: Settings = builder.build()?.try_deserialize()?;
        let mut s = layered;
        if let Some(d) = &overrides.data_dir {
            s.data_dir = d.clone();
        }
        if let Some(e) = &overrides.etcd_endpoints {
            s.etcd_endpoints = e.clone();
        }
        if let Some(l) = &overrides.listen {
            s.listen = l.clone();
        }
        if let Some(l) = &overrides.thrift2_listen {
            s.thrift2_listen = l.clone();
        }
        if let Some(l) = &overrides.metrics_listen {
            s.metrics_listen = l.clone();
        }
        if let Some(r) = overrides.readonly {
            s.readonly = r;
        }
        s.validate()?;
        Ok(s)
    }

    /// What the regionserver's slow-call log keeps.
    pub fn slow_log(&self) -> SlowLogSettings {
        SlowLogSettings {
            enabled: self.slow_log_enabled,
            slow_after: Duration::from_millis(self.slow_log_threshold_ms),
            large_after_bytes: self.slow_log_large_bytes,
            capacity: self.slow_log_size,
        }
    }

    fn validate(&self) -> Result<(), ConfigError> {
        let bad = |m: &str| Err(ConfigError::Value(m.into()));
        if self.max_frame_size < 1024 {
            return bad("max_frame_size must be at least 1024 bytes");
        }
        if self.memtable_size_mb == 0 || self.block_size_kb == 0 || self.memory_budget_mb == 0 {
            return bad("memory_budget_mb, memtable_size_mb and block_size_kb must be positive");
        }
        if self.max_files_per_read < 2 {
            return bad("max_files_per_read must be at least 2");
        }
        if self.maintenance_interval_secs == 0 {
            return bad("maintenance_interval_secs must be at least 1");
        }
        if self.slow_log_size == 0 {
            return bad("slow_log_size must be positive");
        }
        if self.max_concurrent_calls == 0 {
            return bad("max_concurrent_calls must be positive");
        }
        if self.event_loops > MAX_EVENT_LOOPS {
            return bad("event_loops must be at most 64");
        }
        if self.max_value_size == 0 || self.max_value_size >= self.max_frame_size {
            return bad("max_value_size must be positive and below max_frame_size");
        }
        let ns = &self.etcd_namespace;
        if !ns.is_empty() && (!ns.starts_with('/') || ns.ends_with('/')) {
            return bad("etcd_namespace must be empty or start with '/' and not end with one");
        }
        if self.tls_cert_file.is_empty() != self.tls_key_file.is_empty() {
            return bad("tls_cert_file and tls_key_file go together: set both or neither");
        }
        if !self.tls_client_ca_file.is_empty() && self.tls_cert_file.is_empty() {
            return bad("tls_client_ca_file needs tls_cert_file and tls_key_file");
        }
        if self.standby && self.etcd_urls().next().is_none() {
            return bad("standby needs etcd_endpoints: an embedded lock service has one process");
        }
        if self.etcd_urls().any(|url| !url.contains("://")) {
            return bad("etcd_endpoints must be URLs such as http://127.0.0.1:2379");
        }
        let https = self
            .etcd_urls()
            .filter(|url| url.starts_with("https://"))
            .count();
        if https != 0 && https != self.etcd_urls().count() {
            return bad("etcd_endpoints must be all https:// or all http://");
        }
        if https != 0 && self.etcd_ca_file.is_empty() {
            return bad(
                "https:// etcd_endpoints need etcd_ca_file (the authorities of etcd's certificate)",
            );
        }
        if https == 0 && !self.etcd_ca_file.is_empty() {
            return bad("etcd_ca_file needs https:// etcd_endpoints");
        }
        if self.etcd_cert_file.is_empty() != self.etcd_key_file.is_empty() {
            return bad("etcd_cert_file and etcd_key_file go together: set both or neither");
        }
        if !self.etcd_cert_file.is_empty() && self.etcd_ca_file.is_empty() {
            return bad("etcd_cert_file needs etcd_ca_file and https:// etcd_endpoints");
        }
        let rpc_tls = [
            &self.rpc_tls_cert_file,
            &self.rpc_tls_key_file,
            &self.rpc_tls_ca_file,
        ];
        let rpc_tls_set = rpc_tls.iter().filter(|f| !f.is_empty()).count();
        if rpc_tls_set != 0 && rpc_tls_set != rpc_tls.len() {
            return bad(
                "rpc_tls_cert_file, rpc_tls_key_file and rpc_tls_ca_file go together: set all three or none",
            );
        }
        if rpc_tls_set == 0 && !self.rpc_tls_server_name.is_empty() {
            return bad("rpc_tls_server_name needs the rpc_tls_* files");
        }
        Ok(())
    }

    /// The etcd client URLs, if the lock service is etcd.
    pub fn etcd_urls(&self) -> impl Iterator<Item = &str> {
        self.etcd_endpoints
            .split(',')
            .map(str::trim)
            .filter(|url| !url.is_empty())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn file_then_flags_override_defaults() {
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("t.toml");
        std::fs::write(&f, "listen = \"127.0.0.1:7000\"\nmemory_budget_mb = 64\n").unwrap();
        let s = Settings::load(Some(&f), &Overrides::default()).unwrap();
        assert_eq!(s.listen, "127.0.0.1:7000");
        assert_eq!(s.memory_budget_mb, 64);
        assert_eq!(s.block_size_kb, 64);
        let o = Overrides {
            listen: Some("127.0.0.1:7001".into()),
            ..Default::default()
        };
        assert_eq!(
            Settings::load(Some(&f), &o).unwrap().listen,
            "127.0.0.1:7001"
        );
    }

    #[test]
    fn unknown_keys_and_bad_values_are_errors() {
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("t.toml");
        std::fs::write(&f, "lisen = \"x\"\n").unwrap();
        assert!(Settings::load(Some(&f), &Overrides::default()).is_err());
        std::fs::write(&f, "max_files_per_read = 1\n").unwrap();
        assert!(Settings::load(Some(&f), &Overrides::default()).is_err());
        std::fs::write(&f, "event_loops = 65\n").unwrap();
        assert!(Settings::load(Some(&f), &Overrides::default()).is_err());
        std::fs::write(&f, "event_loops = 0\n").unwrap();
        let s = Settings::load(Some(&f), &Overrides::default()).unwrap();
        assert_eq!(s.event_loops, 0);
        assert_eq!(Settings::default().event_loops, 2);
    }

    #[test]
    fn etcd_endpoints_are_a_list_of_urls() {
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("t.toml");
        std::fs::write(
            &f,
            "etcd_endpoints = \"http://10.0.0.1:2379, http://10.0.0.2:2379,\"\netcd_namespace = \"/prod\"\n",
        )
        .unwrap();
        let s = Settings::load(Some(&f), &Overrides::default()).unwrap();
        let urls: Vec<&str> = s.etcd_urls().collect();
        assert_eq!(urls, ["http://10.0.0.1:2379", "http://10.0.0.2:2379"]);
        assert_eq!(s.etcd_namespace, "/prod");
        assert_eq!(Settings::default().etcd_urls().count(), 0);
        for bad in [
            "etcd_endpoints = \"10.0.0.1:2379\"\n",
            "etcd_namespace = \"prod\"\n",
            "etcd_namespace = \"/prod/\"\n",
            "standby = true\n",
        ] {
            std::fs::write(&f, bad).unwrap();
            assert!(
                Settings::load(Some(&f), &Overrides::default()).is_err(),
                "{bad}"
            );
        }
    }

    #[test]
    fn tls_files_come_as_a_certificate_and_key_pair() {
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("t.toml");
        std::fs::write(
            &f,
            "tls_cert_file = \"/etc/tabula/cert.pem\"\ntls_key_file = \"/etc/tabula/key.pem\"\ntls_client_ca_file = \"/etc/tabula/ca.pem\"\n",
        )
        .unwrap();
        let s = Settings::load(Some(&f), &Overrides::default()).unwrap();
        assert_eq!(s.tls_cert_file, "/etc/tabula/cert.pem");
        assert_eq!(s.tls_key_file, "/etc/tabula/key.pem");
        assert_eq!(s.tls_client_ca_file, "/etc/tabula/ca.pem");
        assert!(Settings::default().tls_cert_file.is_empty());
        for bad in [
            "tls_cert_file = \"/etc/tabula/cert.pem\"\n",
            "tls_key_file = \"/etc/tabula/key.pem\"\n",
            "tls_client_ca_file = \"/etc/tabula/ca.pem\"\n",
        ] {
            std::fs::write(&f, bad).unwrap();
            assert!(
                Settings::load(Some(&f), &Overrides::default()).is_err(),
                "{bad}"
            );
        }
    }

    #[test]
    fn cluster_and_etcd_tls_settings_come_together_or_not_at_all() {
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("t.toml");
        std::fs::write(
            &f,
            concat!(
                "etcd_endpoints = \"https://10.0.0.1:2379,https://10.0.0.2:2379\"\n",
                "etcd_ca_file = \"/etc/tabula/etcd-ca.pem\"\n",
                "etcd_cert_file = \"/etc/tabula/etcd.pem\"\n",
                "etcd_key_file = \"/etc/tabula/etcd-key.pem\"\n",
                "rpc_tls_cert_file = \"/etc/tabula/node.pem\"\n",
                "rpc_tls_key_file = \"/etc/tabula/node-key.pem\"\n",
                "rpc_tls_ca_file = \"/etc/tabula/ca.pem\"\n",
                "rpc_tls_server_name = \"tabula.internal\"\n",
            ),
        )
        .unwrap();
        let s = Settings::load(Some(&f), &Overrides::default()).unwrap();
        assert_eq!(s.etcd_ca_file, "/etc/tabula/etcd-ca.pem");
        assert_eq!(s.rpc_tls_server_name, "tabula.internal");
        for bad in [
            // https without the authorities, and mixed schemes.
            "etcd_endpoints = \"https://10.0.0.1:2379\"\n",
            "etcd_endpoints = \"https://10.0.0.1:2379,http://10.0.0.2:2379\"\netcd_ca_file = \"/ca.pem\"\n",
            // TLS files for a plaintext etcd.
            "etcd_endpoints = \"http://10.0.0.1:2379\"\netcd_ca_file = \"/ca.pem\"\n",
            "etcd_endpoints = \"https://10.0.0.1:2379\"\netcd_ca_file = \"/ca.pem\"\netcd_cert_file = \"/c.pem\"\n",
            // Cluster TLS needs all three files.
            "rpc_tls_cert_file = \"/c.pem\"\nrpc_tls_key_file = \"/k.pem\"\n",
            "rpc_tls_ca_file = \"/ca.pem\"\n",
            "rpc_tls_server_name = \"tabula.internal\"\n",
        ] {
            std::fs::write(&f, bad).unwrap();
            assert!(
                Settings::load(Some(&f), &Overrides::default()).is_err(),
                "{bad}"
            );
        }
    }
}
