//! Table and column-family settings the engine enforces.
//!
//! Owns: per-family garbage-collection and storage settings (max versions, TTL,
//! compression, bloom filter, block caching) and their validation, and the
//! family settings clients read back that change nothing here ([`FamilyExtras`]),
//! and the table-wide ones: flush size, whether its tablets are compacted, and
//! where they may split ([`SplitRule`]).
//! Must not: know how schemas are stored or distributed (the coordinator owns that).

use std::collections::BTreeMap;

use bytes::Bytes;

use crate::error::{Error, Result};

/// Family settings an HBase client sets and reads back that change nothing in
/// this engine: the replication scope, HDFS replication, the data block encoding
/// (HBase's enum number; blocks here are always prefix-compressed), the
/// cache-on-write, evict-on-close and tag-compression flags, and the free-form
/// attributes and configuration. Kept so a descriptor reads back as written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FamilyExtras {
    pub scope: i32,
    pub dfs_replication: i16,
    pub data_block_encoding: i32,
    pub cache_data_on_write: bool,
    pub cache_indexes_on_write: bool,
    pub cache_blooms_on_write: bool,
    pub evict_blocks_on_close: bool,
    pub compress_tags: bool,
    pub attributes: BTreeMap<Bytes, Bytes>,
    pub configuration: BTreeMap<String, String>,
}

impl Default for FamilyExtras {
    /// HBase's defaults: scope 0, the file system's replication (0), no encoding,
    /// no caching on write, tags compressed.
    fn default() -> Self {
        FamilyExtras {
            scope: 0,
            dfs_replication: 0,
            data_block_encoding: 0,
            cache_data_on_write: false,
            cache_indexes_on_write: false,
            cache_blooms_on_write: false,
            evict_blocks_on_close: false,
            compress_tags: true,
            attributes: BTreeMap::new(),
            configuration: BTreeMap::new(),
        }
    }
}

/// Block compression of a family's SSTables.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Compression {
    #[default]
    None,
    /// zstd at the given level (1..=22).
    Zstd(i32),
}

/// The compression algorithm a client named for a family, as HBase spells it.
/// Every compressing choice is stored with zstd ([`Compression`]); the name is
/// kept so that descriptors report back what was asked, as HBase's do.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum CompressionName {
    #[default]
    None,
    Gz,
    Snappy,
    Lzo,
    Lz4,
    Bzip2,
    Zstd,
}

impl CompressionName {
    /// Every name, in the order of their stored codes.
    pub const ALL: [CompressionName; 7] = [
        CompressionName::None,
        CompressionName::Gz,
        CompressionName::Snappy,
        CompressionName::Lzo,
        CompressionName::Lz4,
        CompressionName::Bzip2,
        CompressionName::Zstd,
    ];

    /// HBase's name of the algorithm (`Compression.Algorithm`), in capitals.
    pub fn hbase_name(self) -> &'static str {
        match self {
            CompressionName::None => "NONE",
            CompressionName::Gz => "GZ",
            CompressionName::Snappy => "SNAPPY",
            CompressionName::Lzo => "LZO",
            CompressionName::Lz4 => "LZ4",
            CompressionName::Bzip2 => "BZIP2",
            CompressionName::Zstd => "ZSTD",
        }
    }

    /// The algorithm named `name`, in any case.
    pub fn from_hbase_name(name: &str) -> Option<CompressionName> {
        Self::ALL
            .into_iter()
            .find(|c| c.hbase_name().eq_ignore_ascii_case(name))
    }
}

/// Which bloom filters a family's SSTables carry.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum BloomType {
    /// No bloom filter.
    None,
    /// Rows only.
    #[default]
    Row,
    /// Rows and row+qualifier pairs.
    RowCol,
}

/// Whether a family keeps deleted cells (HBase's KEEP_DELETED_CELLS).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum KeepDeleted {
    /// Deleted cells are not read, and major compactions drop them with their
    /// delete markers.
    #[default]
    No,
    /// A read sees past delete markers outside its time range (so a read as of a
    /// time before a delete returns what the delete hid), and major compactions
    /// keep deleted cells and markers, dropping them only by versions and TTL.
    Yes,
    /// As `Yes`, but a delete marker older than the TTL deletes in earnest at the
    /// next major compaction (useful with min versions: what was deleted goes once
    /// its marker expires, what was not is kept).
    UntilTtl,
}

/// The settings of one column family.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FamilySchema {
    pub name: Bytes,
    /// Versions kept per column (at least 1).
    pub max_versions: u32,
    /// Seconds a cell lives after its timestamp; `None` = forever.
    pub ttl_seconds: Option<u64>,
    /// Versions of each column kept even once the TTL expired them (HBase's
    /// MIN_VERSIONS): the newest this many stay readable, and major compactions
    /// keep them. 0: the TTL applies to every version. At most `max_versions`.
    pub min_versions: u32,
    /// Whether deleted cells stay readable outside the deletes' time range.
    pub keep_deleted: KeepDeleted,
    pub compression: Compression,
    /// The algorithm the client named (reported back in descriptors); `None`
    /// exactly when `compression` is.
    pub compression_name: CompressionName,
    pub bloom: BloomType,
    /// Whether data blocks of this family go through the block cache.
    pub block_cache: bool,
    /// HBase's in-memory hint: the family's blocks are cached apart from the
    /// others' (see the engine), so reads of other data do not evict them.
    pub in_memory: bool,
    /// HBase's BLOCKSIZE: the family's SSTable data block size in bytes
    /// ([`MIN_BLOCK_SIZE`]..=[`MAX_BLOCK_SIZE`]); `None`: the engine's.
    pub block_size: Option<u32>,
    /// Settings kept for clients only.
    pub extras: FamilyExtras,
}

/// Smallest family block size accepted (HBase's bound).
pub const MIN_BLOCK_SIZE: u32 = 1 << 10;
/// Largest family block size accepted (HBase's bound).
pub const MAX_BLOCK_SIZE: u32 = 16 << 20;

impl FamilySchema {
    /// A family with HBase's defaults (3 versions, no TTL, no compression).
    pub fn new(name: impl Into<Bytes>) -> Self {
        FamilySchema {
            name: name.into(),
            max_versions: 3,
            ttl_seconds: None,
            min_versions: 0,
            keep_deleted: KeepDeleted::No,
            compression: Compression::None,
            compression_name: CompressionName::None,
            bloom: BloomType::Row,
            block_cache: true,
            in_memory: false,
            block_size: None,
            extras: FamilyExtras::default(),
        }
    }

    /// Sets max versions.
    pub fn max_versions(mut self, n: u32) -> Self {
        self.max_versions = n;
        self
    }

    /// Sets the TTL.
    pub fn ttl(mut self, seconds: Option<u64>) -> Self {
        self.ttl_seconds = seconds;
        self
    }

    /// Sets the versions kept past the TTL.
    pub fn min_versions(mut self, n: u32) -> Self {
        self.min_versions = n;
        self
    }

    /// Sets whether deleted cells are kept.
    pub fn keep_deleted(mut self, keep: KeepDeleted) -> Self {
        self.keep_deleted = keep;
        self
    }

    /// Sets compression, named NONE or ZSTD.
    pub fn compression(mut self, c: Compression) -> Self {
        self.compression = c;
        self.compression_name = match c {
            Compression::None => CompressionName::None,
            Compression::Zstd(_) => CompressionName::Zstd,
        };
        self
    }

    /// Sets compression as a client named it: zstd at `zstd_level` for every
    /// compressing algorithm.
    pub fn compression_named(mut self, name: CompressionName, zstd_level: i32) -> Self {
        self.compression = match name {
            CompressionName::None => Compression::None,
            _ => Compression::Zstd(zstd_level),
        };
        self.compression_name = name;
        self
    }

    /// Checks the settings make sense.
    pub fn validate(&self) -> Result<()> {
        if self.name.is_empty() {
            return Err(Error::InvalidArgument("column family name is empty".into()));
        }
        if self.name.contains(&b':') {
            return Err(Error::InvalidArgument(format!(
                "column family name '{}' must not contain ':'",
                String::from_utf8_lossy(&self.name)
            )));
        }
        if self.max_versions == 0 {
            return Err(Error::InvalidArgument(format!(
                "column family '{}': max versions must be at least 1",
                String::from_utf8_lossy(&self.name)
            )));
        }
        if self.min_versions > self.max_versions {
            return Err(Error::InvalidArgument(format!(
                "column family '{}': min versions ({}) must not exceed max versions ({})",
                String::from_utf8_lossy(&self.name),
                self.min_versions,
                self.max_versions
            )));
        }
        if (self.compression == Compression::None)
            != (self.compression_name == CompressionName::None)
        {
            return Err(Error::InvalidArgument(format!(
                "column family '{}': compression {:?} named {}",
                String::from_utf8_lossy(&self.name),
                self.compression,
                self.compression_name.hbase_name()
            )));
        }
        if let Some(size) = self.block_size {
            if !(MIN_BLOCK_SIZE..=MAX_BLOCK_SIZE).contains(&size) {
                return Err(Error::InvalidArgument(format!(
                    "column family '{}': block size {size} must be between 1K and 16MB",
                    String::from_utf8_lossy(&self.name)
                )));
            }
        }
        if let Compression::Zstd(level) = self.compression {
            if !(1..=22).contains(&level) {
                return Err(Error::InvalidArgument(format!(
                    "zstd level {level} is outside 1..=22"
                )));
            }
        }
        Ok(())
    }

    /// The oldest timestamp still alive at `now_ms` under the TTL (i64::MIN = all).
    pub fn ttl_cutoff(&self, now_ms: i64) -> i64 {
        match self.ttl_seconds {
            None => i64::MIN,
            Some(s) => {
                let ms = i64::try_from(s.saturating_mul(1000)).unwrap_or(i64::MAX);
                now_ms.saturating_sub(ms)
            }
        }
    }
}

/// Where a table's tablets may split (HBase's SPLIT_POLICY): the row a split
/// chose is shaped by the rule before the tablet splits there.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum SplitRule {
    /// At any row (HBase's size-based policies).
    #[default]
    Anywhere,
    /// Never (DisabledRegionSplitPolicy).
    Never,
    /// Only where the first `n` bytes of rows change, so rows sharing them stay
    /// in one tablet (KeyPrefixRegionSplitPolicy).
    KeyPrefix(usize),
    /// Only where the part of rows before the first delimiter changes
    /// (DelimitedKeyPrefixRegionSplitPolicy); a row without it is kept whole.
    Delimiter(Bytes),
}

impl SplitRule {
    /// The row to split at in place of `row` (the chosen one cut to its
    /// prefix); `None` when the rule forbids splits.
    pub fn shape(&self, row: &[u8]) -> Option<Bytes> {
        let cut = match self {
            SplitRule::Anywhere => row.len(),
            SplitRule::Never => return None,
            SplitRule::KeyPrefix(n) => (*n).min(row.len()),
            SplitRule::Delimiter(d) if d.is_empty() => row.len(),
            SplitRule::Delimiter(d) => row
                .windows(d.len())
                .position(|w| w == d.as_ref())
                .unwrap_or(row.len()),
        };
        Some(Bytes::copy_from_slice(row.get(..cut).unwrap_or(row)))
    }

    /// The least row past every row that [`SplitRule::shape`] cuts to `prefix`
    /// (so the next such prefix is at or after the first row from there); `None`
    /// when no row is.
    pub fn after_group(&self, prefix: &[u8]) -> Option<Bytes> {
        let mut bound = prefix.to_vec();
        match self {
            SplitRule::KeyPrefix(n) if prefix.len() >= *n => return next_prefix(bound),
            SplitRule::Delimiter(d) if !d.is_empty() => {
                bound.extend_from_slice(d);
                return next_prefix(bound);
            }
            _ => {}
        }
        // Only `prefix` itself is cut to `prefix`.
        bound.push(0);
        Some(Bytes::from(bound))
    }
}

/// The least key above every key starting with `prefix`; `None` when all bytes
/// are 0xFF.
fn next_prefix(mut prefix: Vec<u8>) -> Option<Bytes> {
    while prefix.last() == Some(&0xFF) {
        prefix.pop();
    }
    let last = prefix.last_mut()?;
    *last += 1;
    Some(Bytes::from(prefix))
}

/// The families of a table, sorted by name.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct TableSchema {
    /// Table name, used in error messages.
    pub name: String,
    families: Vec<FamilySchema>,
    /// The memtable size at which the table's tablets flush (HBase's
    /// MEMSTORE_FLUSHSIZE), in place of the engine's.
    flush_size: Option<usize>,
    /// Whether the table's tablets are left uncompacted (HBase's
    /// COMPACTION_ENABLED set to false): no merging or major compactions, asked
    /// for or not, until it is set back.
    compactions_disabled: bool,
    /// Where the table's tablets may split.
    split_rule: SplitRule,
}

impl TableSchema {
    /// A schema; families are sorted and must be unique and valid.
    pub fn new(name: impl Into<String>, mut families: Vec<FamilySchema>) -> Result<Self> {
        families.sort_by(|a, b| a.name.cmp(&b.name));
        for f in &mut families {
            f.validate()?;
            // Every cell a read returns carries its family: interned, its handle
            // is copied without a reference count.
            f.name = crate::intern::family_name(&f.name);
        }
        if families.windows(2).any(|w| w[0].name == w[1].name) {
            return Err(Error::InvalidArgument(
                "column family declared twice".into(),
            ));
        }
        Ok(TableSchema {
            name: name.into(),
            families,
            flush_size: None,
            compactions_disabled: false,
            split_rule: SplitRule::Anywhere,
        })
    }

    /// The same with the tablets flushing their memtable at `bytes` (`None`: the
    /// engine's memtable size).
    pub fn with_flush_size(mut self, bytes: Option<usize>) -> Self {
        self.flush_size = bytes.filter(|b| *b > 0);
        self
    }

    /// The memtable size at which the table's tablets flush, when it has its own.
    pub fn flush_size(&self) -> Option<usize> {
        self.flush_size
    }

    /// The same with compactions of the table's tablets turned off (`true`) or on.
    pub fn with_compactions_disabled(mut self, disabled: bool) -> Self {
        self.compactions_disabled = disabled;
        self
    }

    /// Whether the table's tablets may be compacted (HBase's COMPACTION_ENABLED).
    pub fn compactions_enabled(&self) -> bool {
        !self.compactions_disabled
    }

    /// The same with its tablets splitting by `rule`.
    pub fn with_split_rule(mut self, rule: SplitRule) -> Self {
        self.split_rule = rule;
        self
    }

    /// Where the table's tablets may split.
    pub fn split_rule(&self) -> &SplitRule {
        &self.split_rule
    }

    /// The families, sorted by name.
    pub fn families(&self) -> &[FamilySchema] {
        &self.families
    }

    /// Looks a family up.
    pub fn family(&self, name: &[u8]) -> Option<&FamilySchema> {
        self.families
            .binary_search_by(|f| f.name.as_ref().cmp(name))
            .ok()
            .and_then(|i| self.families.get(i))
    }

    /// Looks a family up or fails with UnknownFamily.
    pub fn require_family(&self, name: &[u8]) -> Result<&FamilySchema> {
        self.family(name).ok_or_else(|| Error::UnknownFamily {
            table: self.name.clone(),
            family: String::from_utf8_lossy(name).into_owned(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn split_rules_cut_the_chosen_row_to_its_prefix() {
        let shaped = |rule: SplitRule, row: &[u8]| rule.shape(row).map(|b| b.to_vec());
        assert_eq!(
            shaped(SplitRule::Anywhere, b"user7|42"),
            Some(b"user7|42".to_vec())
        );
        assert_eq!(shaped(SplitRule::Never, b"user7|42"), None);
        assert_eq!(
            shaped(SplitRule::KeyPrefix(5), b"user7|42"),
            Some(b"user7".to_vec())
        );
        assert_eq!(
            shaped(SplitRule::KeyPrefix(20), b"user7"),
            Some(b"user7".to_vec())
        );
        let bar = || SplitRule::Delimiter(Bytes::from_static(b"|"));
        assert_eq!(shaped(bar(), b"user7|42|x"), Some(b"user7".to_vec()));
        assert_eq!(
            shaped(bar(), b"user7"),
            Some(b"user7".to_vec()),
            "kept whole"
        );
        let two = SplitRule::Delimiter(Bytes::from_static(b"::"));
        assert_eq!(shaped(two, b"a:b::c"), Some(b"a:b".to_vec()));
    }

    #[test]
    fn the_row_after_a_prefix_group_bounds_every_row_of_it() {
        let after = |rule: SplitRule, prefix: &[u8]| rule.after_group(prefix).map(|b| b.to_vec());
        assert_eq!(
            after(SplitRule::KeyPrefix(3), b"ab\xff"),
            Some(b"ac".to_vec())
        );
        assert_eq!(after(SplitRule::KeyPrefix(3), b"\xff\xff\xff"), None);
        // A row shorter than the prefix is a group of its own.
        assert_eq!(
            after(SplitRule::KeyPrefix(3), b"ab"),
            Some(b"ab\x00".to_vec())
        );
        let bar = SplitRule::Delimiter(Bytes::from_static(b"|"));
        assert_eq!(after(bar, b"user7"), Some(b"user7}".to_vec()));
        assert_eq!(after(SplitRule::Anywhere, b"r"), Some(b"r\x00".to_vec()));
    }

    #[test]
    fn min_versions_may_not_exceed_max_versions() {
        let family = |min| {
            FamilySchema::new(&b"f"[..])
                .max_versions(3)
                .min_versions(min)
        };
        assert!(family(0).validate().is_ok());
        assert!(family(3).validate().is_ok());
        let err = family(4).validate().expect_err("4 kept of 3 stored");
        assert!(err.to_string().contains("min versions"), "{err}");
        assert!(TableSchema::new("t", vec![family(4)]).is_err());
    }
}
