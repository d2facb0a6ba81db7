//! Table and namespace descriptors and their stored form.
//!
//! Owns: [`TableDescriptor`] and [`NamespaceDescriptor`] (what the coordinator keeps
//! about each table and namespace in the lock service, as Bigtable keeps schemas in
//! Chubby), their binary encoding, and the naming rules for tables and namespaces.
//! Must not: talk to the lock service or regionservers.

use std::collections::BTreeMap;

use bytes::Bytes;
use tabula_storage::coding::{put_bytes, put_varint, Reader};
use tabula_storage::{
    BloomType, Compression, CompressionName, Durability, FamilyExtras, FamilySchema, KeepDeleted,
    SplitRule, TableSchema,
};

/// The namespace of tables named without one.
pub const DEFAULT_NAMESPACE: &str = "default";
/// The namespace of system tables.
pub const SYSTEM_NAMESPACE: &str = "hbase";

const TABLE_MAGIC: &[u8; 4] = b"TBTD";
const NS_MAGIC: &[u8; 4] = b"TBNS";
const PLAN_MAGIC: &[u8; 4] = b"TBSP";
const VERSION: u8 = 1;
/// Table descriptors: version 2 added each family's min versions, version 3
/// whether it keeps deleted cells, version 4 the compression's name as the client
/// gave it (older versions are still read: min versions 0, deleted cells not
/// kept, compression named NONE or ZSTD), version 5 the table's durability (older
/// versions: none set), version 6 each family's block size (older: the engine's),
/// version 7 the family settings kept for clients only (older: HBase's defaults),
/// version 8 the table's attributes (older: none).
const TABLE_VERSION: u8 = 8;

/// The table attribute naming the size past which its tablets split (HBase's
/// MAX_FILESIZE, bytes as decimal digits), in place of the server's threshold.
pub const MAX_FILESIZE: &[u8] = b"MAX_FILESIZE";

/// The table attribute naming the memtable size at which its tablets flush
/// (HBase's MEMSTORE_FLUSHSIZE, bytes as decimal digits).
pub const MEMSTORE_FLUSHSIZE: &[u8] = b"MEMSTORE_FLUSHSIZE";
/// The smallest `MEMSTORE_FLUSHSIZE` accepted (HBase's sanity check).
pub const MIN_MEMSTORE_FLUSHSIZE: u64 = 1 << 20;

/// The table attribute that makes a table refuse changes to its rows (HBase's
/// READONLY: `true`, any case).
pub const READONLY: &[u8] = b"READONLY";

/// The table attribute that turns its compactions off (HBase's
/// COMPACTION_ENABLED: any value but `true`, any case, as Java's
/// `Boolean.valueOf` reads it).
pub const COMPACTION_ENABLED: &[u8] = b"COMPACTION_ENABLED";

/// The table attribute naming its split policy (HBase's SPLIT_POLICY, a Java
/// class name; see [`split_rule_of`]).
pub const SPLIT_POLICY: &[u8] = b"SPLIT_POLICY";
/// The prefix length of KeyPrefixRegionSplitPolicy, and its older name.
const PREFIX_LENGTH_KEYS: [&[u8]; 2] = [
    b"KeyPrefixRegionSplitPolicy.prefix_length",
    b"prefix_split_key_policy.prefix_length",
];
/// The delimiter of DelimitedKeyPrefixRegionSplitPolicy.
const DELIMITER_KEY: &[u8] = b"DelimitedKeyPrefixRegionSplitPolicy.delimiter";
/// HBase's split policies, by simple class name.
const SPLIT_POLICIES: [&str; 7] = [
    "ConstantSizeRegionSplitPolicy",
    "IncreasingToUpperBoundRegionSplitPolicy",
    "SteppingSplitPolicy",
    "BusyRegionSplitPolicy",
    "DisabledRegionSplitPolicy",
    "KeyPrefixRegionSplitPolicy",
    "DelimitedKeyPrefixRegionSplitPolicy",
];

/// Where a table with these attributes may split: its `SPLIT_POLICY` (a class
/// name, its package optional) with the policy's own attributes. The size-based
/// policies split anywhere (at the table's `MAX_FILESIZE` or the server's
/// threshold); DisabledRegionSplitPolicy never; the key-prefix policies keep rows
/// sharing a prefix together, and without a valid prefix length or delimiter
/// split anywhere (HBase logs that and goes on by size alike).
pub fn split_rule_of(attributes: &BTreeMap<Bytes, Bytes>) -> SplitRule {
    let Some(policy) = attributes.get(SPLIT_POLICY) else {
        return SplitRule::Anywhere;
    };
    match simple_class_name(policy) {
        b"DisabledRegionSplitPolicy" => SplitRule::Never,
        b"KeyPrefixRegionSplitPolicy" => PREFIX_LENGTH_KEYS
            .iter()
            .find_map(|k| attributes.get(*k))
            .and_then(|v| std::str::from_utf8(v).ok()?.trim().parse::<usize>().ok())
            .filter(|n| *n > 0)
            .map_or(SplitRule::Anywhere, SplitRule::KeyPrefix),
        b"DelimitedKeyPrefixRegionSplitPolicy" => attributes
            .get(DELIMITER_KEY)
            .filter(|d| !d.is_empty())
            .map_or(SplitRule::Anywhere, |d| SplitRule::Delimiter(d.clone())),
        _ => SplitRule::Anywhere,
    }
}

/// `org.apache.hadoop.hbase.regionserver.X` -> `X`.
fn simple_class_name(name: &[u8]) -> &[u8] {
    let name = name.trim_ascii();
    match name.iter().rposition(|b| *b == b'.') {
        Some(dot) => name.get(dot + 1..).unwrap_or(name),
        None => name,
    }
}

/// What every data call needs to know of a table: whether it is enabled, and
/// whether it refuses changes to its rows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TableState {
    pub enabled: bool,
    pub read_only: bool,
}

/// The smallest `MAX_FILESIZE` accepted (HBase's sanity check: smaller would
/// split a table into an unmanageable number of tablets).
pub const MIN_MAX_FILESIZE: u64 = 2 << 20;

/// Checks the table attributes this server obeys: `MAX_FILESIZE` must be a number
/// of bytes, at least [`MIN_MAX_FILESIZE`].
pub fn validate_attributes(attributes: &BTreeMap<Bytes, Bytes>) -> Result<(), String> {
    if let Some(policy) = attributes.get(SPLIT_POLICY) {
        let known = SPLIT_POLICIES
            .iter()
            .any(|p| p.as_bytes() == simple_class_name(policy));
        if !known {
            return Err(format!(
                "Unable to load configured region split policy '{}': not one of {}",
                String::from_utf8_lossy(policy),
                SPLIT_POLICIES.join(", ")
            ));
        }
    }
    for (key, min, why) in [
        (
            MAX_FILESIZE,
            MIN_MAX_FILESIZE,
            "over splitting into unmanageable number of regions",
        ),
        (
            MEMSTORE_FLUSHSIZE,
            MIN_MEMSTORE_FLUSHSIZE,
            "too many flushes",
        ),
    ] {
        let Some(value) = attributes.get(key) else {
            continue;
        };
        let name = String::from_utf8_lossy(key);
        let shown = String::from_utf8_lossy(value);
        match shown.trim().parse::<u64>() {
            Ok(size) if size >= min => {}
            Ok(size) => {
                return Err(format!(
                    "{name} for table descriptor ({size}) is too small, which might cause {why} (at least {min} bytes)"
                ))
            }
            Err(_) => return Err(format!("{name} must be a number of bytes, not '{shown}'")),
        }
    }
    Ok(())
}

/// What a client sets on a table besides its families.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct TableSettings {
    /// The commit-log mode of writes that name none (HBase's table DURABILITY;
    /// `None` is USE_DEFAULT: a synced log).
    pub durability: Option<Durability>,
    /// HBase's table values (`MAX_FILESIZE`, `OWNER`, ...), read back as written.
    pub attributes: BTreeMap<Bytes, Bytes>,
}

/// Bits of the flags byte of a family's [`FamilyExtras`].
const CACHE_DATA_ON_WRITE: u8 = 1;
const CACHE_INDEXES_ON_WRITE: u8 = 1 << 1;
const CACHE_BLOOMS_ON_WRITE: u8 = 1 << 2;
const EVICT_BLOCKS_ON_CLOSE: u8 = 1 << 3;
const COMPRESS_TAGS: u8 = 1 << 4;

fn put_extras(out: &mut Vec<u8>, e: &FamilyExtras) {
    // Signed numbers as their two's-complement bits.
    put_varint(out, u64::from(e.scope as u32));
    put_varint(out, u64::from(e.dfs_replication as u16));
    put_varint(out, u64::from(e.data_block_encoding as u32));
    let flags = [
        (e.cache_data_on_write, CACHE_DATA_ON_WRITE),
        (e.cache_indexes_on_write, CACHE_INDEXES_ON_WRITE),
        (e.cache_blooms_on_write, CACHE_BLOOMS_ON_WRITE),
        (e.evict_blocks_on_close, EVICT_BLOCKS_ON_CLOSE),
        (e.compress_tags, COMPRESS_TAGS),
    ]
    .iter()
    .filter(|(set, _)| *set)
    .fold(0u8, |flags, (_, bit)| flags | bit);
    out.push(flags);
    put_varint(out, e.attributes.len() as u64);
    for (k, v) in &e.attributes {
        put_bytes(out, k);
        put_bytes(out, v);
    }
    put_varint(out, e.configuration.len() as u64);
    for (k, v) in &e.configuration {
        put_bytes(out, k.as_bytes());
        put_bytes(out, v.as_bytes());
    }
}

fn read_extras(r: &mut Reader<'_>) -> Option<FamilyExtras> {
    let scope = u32::try_from(r.varint()?).ok()? as i32;
    let dfs_replication = u16::try_from(r.varint()?).ok()? as i16;
    let data_block_encoding = u32::try_from(r.varint()?).ok()? as i32;
    let flags = r.u8()?;
    let mut attributes = BTreeMap::new();
    for _ in 0..r.varint()? {
        let k = Bytes::copy_from_slice(r.bytes()?);
        attributes.insert(k, Bytes::copy_from_slice(r.bytes()?));
    }
    let mut configuration = BTreeMap::new();
    for _ in 0..r.varint()? {
        let k = String::from_utf8(r.bytes()?.to_vec()).ok()?;
        configuration.insert(k, String::from_utf8(r.bytes()?.to_vec()).ok()?);
    }
    Some(FamilyExtras {
        scope,
        dfs_replication,
        data_block_encoding,
        cache_data_on_write: flags & CACHE_DATA_ON_WRITE != 0,
        cache_indexes_on_write: flags & CACHE_INDEXES_ON_WRITE != 0,
        cache_blooms_on_write: flags & CACHE_BLOOMS_ON_WRITE != 0,
        evict_blocks_on_close: flags & EVICT_BLOCKS_ON_CLOSE != 0,
        compress_tags: flags & COMPRESS_TAGS != 0,
        attributes,
        configuration,
    })
}

/// Everything stored about a table.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TableDescriptor {
    /// Full name as clients spell it (`t` or `ns:t`).
    pub name: Bytes,
    pub families: Vec<FamilySchema>,
    pub enabled: bool,
    /// Creation time in ms (region ids derive from it).
    pub created_ms: i64,
    /// The commit-log mode of writes that name none (HBase's table DURABILITY;
    /// `None` is USE_DEFAULT: a synced log).
    pub durability: Option<Durability>,
    /// HBase's table values, read back as written; [`MAX_FILESIZE`] is obeyed.
    pub attributes: BTreeMap<Bytes, Bytes>,
}

impl TableDescriptor {
    /// The size past which the table's tablets split, when its `MAX_FILESIZE`
    /// attribute names one (a positive number of bytes).
    pub fn max_file_size(&self) -> Option<u64> {
        self.size_attribute(MAX_FILESIZE)
    }

    /// The memtable size at which the table's tablets flush, when its
    /// `MEMSTORE_FLUSHSIZE` attribute names one.
    pub fn memstore_flush_size(&self) -> Option<u64> {
        self.size_attribute(MEMSTORE_FLUSHSIZE)
    }

    /// Attribute `key` as a positive number of bytes.
    fn size_attribute(&self, key: &[u8]) -> Option<u64> {
        let value = self.attributes.get(key)?;
        std::str::from_utf8(value)
            .ok()?
            .trim()
            .parse::<u64>()
            .ok()
            .filter(|size| *size > 0)
    }

    /// Whether the table refuses changes to its rows (its `READONLY` attribute).
    pub fn read_only(&self) -> bool {
        self.flag(READONLY).unwrap_or(false)
    }

    /// Attribute `key` as Java's `Boolean.valueOf` reads it (`true`, any case,
    /// and nothing else), when set.
    fn flag(&self, key: &[u8]) -> Option<bool> {
        self.attributes
            .get(key)
            .map(|v| v.eq_ignore_ascii_case(b"true"))
    }

    /// Whether the table's tablets may be compacted (its `COMPACTION_ENABLED`
    /// attribute, when set, is `true`).
    pub fn compaction_enabled(&self) -> bool {
        self.flag(COMPACTION_ENABLED).unwrap_or(true)
    }

    /// Where the table's tablets may split (its `SPLIT_POLICY`).
    pub fn split_rule(&self) -> SplitRule {
        split_rule_of(&self.attributes)
    }

    /// What data calls need to know of the table.
    pub fn state(&self) -> TableState {
        TableState {
            enabled: self.enabled,
            read_only: self.read_only(),
        }
    }

    /// The settings a client gave the table.
    pub fn settings(&self) -> TableSettings {
        TableSettings {
            durability: self.durability,
            attributes: self.attributes.clone(),
        }
    }

    /// The storage schema of the table (its flush size from `MEMSTORE_FLUSHSIZE`,
    /// whether it is compacted from `COMPACTION_ENABLED`, where it splits from
    /// `SPLIT_POLICY`).
    pub fn schema(&self) -> Result<TableSchema, tabula_storage::Error> {
        let flush_size = self
            .memstore_flush_size()
            .and_then(|b| usize::try_from(b).ok());
        Ok(TableSchema::new(
            String::from_utf8_lossy(&self.name).into_owned(),
            self.families.clone(),
        )?
        .with_flush_size(flush_size)
        .with_compactions_disabled(!self.compaction_enabled())
        .with_split_rule(self.split_rule()))
    }

    /// Encodes the descriptor.
    pub fn encode(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(64 + self.families.len() * 32);
        out.extend_from_slice(TABLE_MAGIC);
        out.push(TABLE_VERSION);
        put_bytes(&mut out, &self.name);
        out.push(u8::from(self.enabled));
        out.extend_from_slice(&self.created_ms.to_be_bytes());
        put_varint(&mut out, self.families.len() as u64);
        for f in &self.families {
            put_bytes(&mut out, &f.name);
            put_varint(&mut out, u64::from(f.max_versions));
            put_varint(&mut out, f.ttl_seconds.map_or(0, |t| t.saturating_add(1)));
            put_varint(&mut out, u64::from(f.min_versions));
            out.push(match f.keep_deleted {
                KeepDeleted::No => 0,
                KeepDeleted::Yes => 1,
                KeepDeleted::UntilTtl => 2,
            });
            let name_code = CompressionName::ALL
                .iter()
                .position(|n| *n == f.compression_name)
                .unwrap_or(0);
            out.push(u8::try_from(name_code).unwrap_or(0));
            match f.compression {
                Compression::None => out.push(0),
                Compression::Zstd(level) => {
                    out.push(1);
                    put_varint(&mut out, u64::try_from(level).unwrap_or(3));
                }
            }
            out.push(match f.bloom {
                BloomType::None => 0,
                BloomType::Row => 1,
                BloomType::RowCol => 2,
            });
            out.push(u8::from(f.block_cache));
            out.push(u8::from(f.in_memory));
            put_varint(&mut out, f.block_size.map_or(0, u64::from));
            put_extras(&mut out, &f.extras);
        }
        out.push(match self.durability {
            None => 0,
            Some(Durability::Skip) => 1,
            Some(Durability::Async) => 2,
            Some(Durability::Sync) => 3,
            Some(Durability::Fsync) => 4,
        });
        put_varint(&mut out, self.attributes.len() as u64);
        for (k, v) in &self.attributes {
            put_bytes(&mut out, k);
            put_bytes(&mut out, v);
        }
        let crc = crc32c::crc32c(&out);
        out.extend_from_slice(&crc.to_be_bytes());
        out
    }

    /// Decodes a descriptor; `None` when malformed.
    pub fn decode(buf: &[u8]) -> Option<TableDescriptor> {
        let body = checked_body(buf)?;
        let mut r = Reader::new(body);
        if r.raw(4)? != TABLE_MAGIC {
            return None;
        }
        let version = r.u8()?;
        if !(1..=TABLE_VERSION).contains(&version) {
            return None;
        }
        let name = Bytes::copy_from_slice(r.bytes()?);
        let enabled = flag(r.u8()?)?;
        let created_ms = r.i64_be()?;
        let n = r.varint()?;
        let mut families = Vec::new();
        for _ in 0..n {
            let fname = Bytes::copy_from_slice(r.bytes()?);
            let max_versions = u32::try_from(r.varint()?).ok()?;
            let ttl = match r.varint()? {
                0 => None,
                t => Some(t - 1),
            };
            let min_versions = if version >= 2 {
                u32::try_from(r.varint()?).ok()?
            } else {
                0
            };
            let keep_deleted = if version >= 3 {
                match r.u8()? {
                    0 => KeepDeleted::No,
                    1 => KeepDeleted::Yes,
                    2 => KeepDeleted::UntilTtl,
                    _ => return None,
                }
            } else {
                KeepDeleted::No
            };
            let compression_name = if version >= 4 {
                Some(*CompressionName::ALL.get(usize::from(r.u8()?))?)
            } else {
                None
            };
            let compression = match r.u8()? {
                0 => Compression::None,
                1 => Compression::Zstd(i32::try_from(r.varint()?).ok()?),
                _ => return None,
            };
            let compression_name = compression_name.unwrap_or(match compression {
                Compression::None => CompressionName::None,
                Compression::Zstd(_) => CompressionName::Zstd,
            });
            let bloom = match r.u8()? {
                0 => BloomType::None,
                1 => BloomType::Row,
                2 => BloomType::RowCol,
                _ => return None,
            };
            let block_cache = flag(r.u8()?)?;
            let in_memory = flag(r.u8()?)?;
            let block_size = match version >= 6 {
                true => match r.varint()? {
                    0 => None,
                    size => Some(u32::try_from(size).ok()?),
                },
                false => None,
            };
            let extras = match version >= 7 {
                true => read_extras(&mut r)?,
                false => FamilyExtras::default(),
            };
            families.push(FamilySchema {
                name: fname,
                max_versions,
                ttl_seconds: ttl,
                min_versions,
                keep_deleted,
                compression,
                compression_name,
                bloom,
                block_cache,
                in_memory,
                block_size,
                extras,
            });
        }
        let durability = if version >= 5 {
            match r.u8()? {
                0 => None,
                1 => Some(Durability::Skip),
                2 => Some(Durability::Async),
                3 => Some(Durability::Sync),
                4 => Some(Durability::Fsync),
                _ => return None,
            }
        } else {
            None
        };
        let mut attributes = BTreeMap::new();
        if version >= 8 {
            for _ in 0..r.varint()? {
                let k = Bytes::copy_from_slice(r.bytes()?);
                attributes.insert(k, Bytes::copy_from_slice(r.bytes()?));
            }
        }
        (r.remaining() == 0).then_some(TableDescriptor {
            name,
            families,
            enabled,
            created_ms,
            durability,
            attributes,
        })
    }
}

/// A namespace and its configuration.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NamespaceDescriptor {
    pub name: String,
    pub configuration: BTreeMap<String, String>,
}

impl NamespaceDescriptor {
    /// Encodes the descriptor.
    pub fn encode(&self) -> Vec<u8> {
        let mut out = Vec::new();
        out.extend_from_slice(NS_MAGIC);
        out.push(VERSION);
        put_bytes(&mut out, self.name.as_bytes());
        put_varint(&mut out, self.configuration.len() as u64);
        for (k, v) in &self.configuration {
            put_bytes(&mut out, k.as_bytes());
            put_bytes(&mut out, v.as_bytes());
        }
        let crc = crc32c::crc32c(&out);
        out.extend_from_slice(&crc.to_be_bytes());
        out
    }

    /// Decodes a descriptor; `None` when malformed.
    pub fn decode(buf: &[u8]) -> Option<NamespaceDescriptor> {
        let body = checked_body(buf)?;
        let mut r = Reader::new(body);
        if r.raw(4)? != NS_MAGIC || r.u8()? != VERSION {
            return None;
        }
        let name = String::from_utf8(r.bytes()?.to_vec()).ok()?;
        let n = r.varint()?;
        let mut configuration = BTreeMap::new();
        for _ in 0..n {
            let k = String::from_utf8(r.bytes()?.to_vec()).ok()?;
            let v = String::from_utf8(r.bytes()?.to_vec()).ok()?;
            configuration.insert(k, v);
        }
        (r.remaining() == 0).then_some(NamespaceDescriptor {
            name,
            configuration,
        })
    }
}

/// The split keys a `createTable` planned, stored beside the table's descriptor
/// until every first tablet of the table is in the catalog: a coordinator that
/// finds one after a restart makes the tablets the plan names, not one tablet for
/// the rows nobody covered.
pub fn encode_split_plan(keys: &[Bytes]) -> Vec<u8> {
    let mut out = Vec::with_capacity(16 + keys.iter().map(|k| k.len() + 2).sum::<usize>());
    out.extend_from_slice(PLAN_MAGIC);
    out.push(VERSION);
    put_varint(&mut out, keys.len() as u64);
    for k in keys {
        put_bytes(&mut out, k);
    }
    let crc = crc32c::crc32c(&out);
    out.extend_from_slice(&crc.to_be_bytes());
    out
}

/// Decodes a split plan; `None` when malformed.
pub fn decode_split_plan(buf: &[u8]) -> Option<Vec<Bytes>> {
    let body = checked_body(buf)?;
    let mut r = Reader::new(body);
    if r.raw(4)? != PLAN_MAGIC || r.u8()? != VERSION {
        return None;
    }
    let n = r.varint()?;
    let mut keys = Vec::new();
    for _ in 0..n {
        keys.push(Bytes::copy_from_slice(r.bytes()?));
    }
    (r.remaining() == 0).then_some(keys)
}

fn checked_body(buf: &[u8]) -> Option<&[u8]> {
    let n = buf.len().checked_sub(4)?;
    let (body, crc) = buf.split_at(n);
    let crc = u32::from_be_bytes(crc.try_into().ok()?);
    (crc32c::crc32c(body) == crc).then_some(body)
}

fn flag(b: u8) -> Option<bool> {
    match b {
        0 => Some(false),
        1 => Some(true),
        _ => None,
    }
}

/// Splits `ns:table` into namespace and qualifier (`default` when absent).
pub fn split_name(name: &[u8]) -> (&[u8], &[u8]) {
    match name.iter().position(|&b| b == b':') {
        Some(i) => (
            name.get(..i).unwrap_or(&[]),
            name.get(i + 1..).unwrap_or(&[]),
        ),
        None => (DEFAULT_NAMESPACE.as_bytes(), name),
    }
}

/// The name clients use: `t` for the default namespace, `ns:t` otherwise.
pub fn canonical_name(name: &[u8]) -> Bytes {
    Bytes::copy_from_slice(canonical_slice(name))
}

/// [`canonical_name`] as a slice of `name` (no copy).
pub fn canonical_slice(name: &[u8]) -> &[u8] {
    let (ns, q) = split_name(name);
    if ns == DEFAULT_NAMESPACE.as_bytes() {
        q
    } else {
        name
    }
}

/// Checks a namespace name (HBase: letters, digits and `_`).
pub fn validate_namespace(name: &str) -> Result<(), String> {
    if name.is_empty() {
        return Err("namespace name is empty".into());
    }
    if name.len() > 128 {
        return Err(format!(
            "namespace name '{name}' is longer than 128 characters"
        ));
    }
    if !name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_') {
        return Err(format!(
            "namespace name '{name}' is illegal: only letters, digits and '_' are allowed"
        ));
    }
    Ok(())
}

/// Checks a table name (HBase: `[ns:]qualifier`, the qualifier of letters, digits,
/// `_`, `-` and `.`, not starting with `.` or `-`).
pub fn validate_table_name(name: &[u8]) -> Result<(), String> {
    let shown = String::from_utf8_lossy(name);
    if name.is_empty() {
        return Err("table name is empty".into());
    }
    if name.len() > 255 {
        return Err(format!("table name '{shown}' is longer than 255 bytes"));
    }
    if name.iter().filter(|&&b| b == b':').count() > 1 {
        return Err(format!("table name '{shown}' has more than one ':'"));
    }
    let (ns, q) = split_name(name);
    validate_namespace(&String::from_utf8_lossy(ns))
        .map_err(|e| format!("table name '{shown}': {e}"))?;
    if q.is_empty() {
        return Err(format!("table name '{shown}' has an empty qualifier"));
    }
    if matches!(q.first(), Some(b'.') | Some(b'-')) {
        return Err(format!(
            "table name '{shown}' must not start with '.' or '-'"
        ));
    }
    if !q
        .iter()
        .all(|&b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-' || b == b'.')
    {
        return Err(format!(
            "table name '{shown}' is illegal: only letters, digits, '_', '-' and '.' are allowed"
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn descriptor_roundtrip_and_corruption() {
        let d = TableDescriptor {
            name: Bytes::from_static(b"ns:t1"),
            families: vec![
                FamilySchema::new(&b"cf"[..])
                    .max_versions(7)
                    .ttl(Some(60))
                    .min_versions(2)
                    .keep_deleted(KeepDeleted::UntilTtl),
                FamilySchema::new(&b"z"[..]).compression(Compression::Zstd(3)),
                FamilySchema::new(&b"s"[..]).compression_named(CompressionName::Snappy, 3),
                FamilySchema {
                    block_size: Some(8 << 10),
                    extras: FamilyExtras {
                        scope: 1,
                        dfs_replication: -1,
                        data_block_encoding: 4,
                        cache_data_on_write: true,
                        evict_blocks_on_close: true,
                        compress_tags: false,
                        attributes: [(Bytes::from_static(b"OWNER"), Bytes::from_static(b"ops"))]
                            .into_iter()
                            .collect(),
                        configuration: [("hbase.hstore.blockingStoreFiles".into(), "20".into())]
                            .into_iter()
                            .collect(),
                        ..FamilyExtras::default()
                    },
                    ..FamilySchema::new(&b"b"[..])
                },
            ],
            enabled: true,
            created_ms: 1234,
            durability: Some(Durability::Fsync),
            attributes: [(
                Bytes::from_static(MAX_FILESIZE),
                Bytes::from_static(b"1024"),
            )]
            .into_iter()
            .collect(),
        };
        assert_eq!(d.max_file_size(), Some(1024));
        let enc = d.encode();
        assert_eq!(TableDescriptor::decode(&enc), Some(d.clone()));
        for durability in [
            None,
            Some(Durability::Skip),
            Some(Durability::Async),
            Some(Durability::Sync),
            Some(Durability::Fsync),
        ] {
            let d = TableDescriptor {
                durability,
                ..d.clone()
            };
            assert_eq!(TableDescriptor::decode(&d.encode()), Some(d));
        }
        for i in 0..enc.len() {
            let mut bad = enc.clone();
            bad[i] ^= 1;
            assert_eq!(TableDescriptor::decode(&bad), None, "flip at {i}");
        }
        let ns = NamespaceDescriptor {
            name: "ns".into(),
            configuration: [("k".to_string(), "v".to_string())].into_iter().collect(),
        };
        assert_eq!(NamespaceDescriptor::decode(&ns.encode()), Some(ns));
    }

    #[test]
    fn version_one_descriptors_read_with_no_min_versions() {
        // Version 1 as stored before min versions: one family `cf`, 7 versions,
        // TTL 60 s, zstd 3, row bloom, cached, not in memory.
        let mut v1 = Vec::new();
        v1.extend_from_slice(TABLE_MAGIC);
        v1.push(1);
        put_bytes(&mut v1, b"t");
        v1.push(1);
        v1.extend_from_slice(&99i64.to_be_bytes());
        put_varint(&mut v1, 1);
        put_bytes(&mut v1, b"cf");
        put_varint(&mut v1, 7);
        put_varint(&mut v1, 61);
        v1.extend_from_slice(&[1, 3, 1, 1, 0]);
        let crc = crc32c::crc32c(&v1);
        v1.extend_from_slice(&crc.to_be_bytes());
        let d = TableDescriptor::decode(&v1).expect("a version 1 descriptor");
        assert_eq!(
            d.families,
            vec![FamilySchema::new(&b"cf"[..])
                .max_versions(7)
                .ttl(Some(60))
                .compression(Compression::Zstd(3))]
        );
        assert_eq!((d.enabled, d.created_ms, d.durability), (true, 99, None));
        // Written again, it is the current version and reads back the same.
        assert_eq!(d.encode()[4], TABLE_VERSION);
        assert_eq!(TableDescriptor::decode(&d.encode()), Some(d));
    }

    #[test]
    fn max_filesize_must_be_a_number_of_at_least_two_megabytes() {
        let attrs = |v: &'static [u8]| -> BTreeMap<Bytes, Bytes> {
            [(Bytes::from_static(MAX_FILESIZE), Bytes::from_static(v))]
                .into_iter()
                .collect()
        };
        assert!(validate_attributes(&BTreeMap::new()).is_ok());
        assert!(validate_attributes(&attrs(b"2097152")).is_ok());
        assert!(validate_attributes(&attrs(b"10737418240")).is_ok());
        assert!(validate_attributes(&attrs(b"2097151")).is_err());
        assert!(validate_attributes(&attrs(b"10GB")).is_err());
        let flush = |v: &'static [u8]| -> BTreeMap<Bytes, Bytes> {
            [(
                Bytes::from_static(MEMSTORE_FLUSHSIZE),
                Bytes::from_static(v),
            )]
            .into_iter()
            .collect()
        };
        assert!(validate_attributes(&flush(b"1048576")).is_ok());
        assert!(validate_attributes(&flush(b"1048575")).is_err());
        let d = TableDescriptor {
            name: Bytes::from_static(b"t"),
            families: vec![FamilySchema::new(&b"cf"[..])],
            enabled: true,
            created_ms: 0,
            durability: None,
            attributes: flush(b"4194304"),
        };
        assert_eq!(d.schema().expect("schema").flush_size(), Some(4 << 20));
        let other: BTreeMap<Bytes, Bytes> = [(Bytes::from_static(b"OWNER"), Bytes::new())]
            .into_iter()
            .collect();
        assert!(
            validate_attributes(&other).is_ok(),
            "others are not checked"
        );
    }

    #[test]
    fn compaction_enabled_is_off_for_any_value_but_true() {
        let with = |v: Option<&'static [u8]>| TableDescriptor {
            name: Bytes::from_static(b"t"),
            families: vec![FamilySchema::new(&b"cf"[..])],
            enabled: true,
            created_ms: 0,
            durability: None,
            attributes: v
                .map(|v| {
                    (
                        Bytes::from_static(COMPACTION_ENABLED),
                        Bytes::from_static(v),
                    )
                })
                .into_iter()
                .collect(),
        };
        for (value, enabled) in [
            (None, true),
            (Some(&b"true"[..]), true),
            (Some(b"TRUE"), true),
            (Some(b"false"), false),
            (Some(b"no"), false),
            (Some(b""), false),
        ] {
            let d = with(value);
            assert_eq!(d.compaction_enabled(), enabled, "{value:?}");
            let schema = d.schema().expect("schema");
            assert_eq!(schema.compactions_enabled(), enabled, "{value:?}");
        }
    }

    #[test]
    fn split_policies_name_where_tablets_split() {
        let attrs = |pairs: &[(&'static str, &'static str)]| -> BTreeMap<Bytes, Bytes> {
            pairs
                .iter()
                .map(|(k, v)| {
                    (
                        Bytes::from_static(k.as_bytes()),
                        Bytes::from_static(v.as_bytes()),
                    )
                })
                .collect()
        };
        let rule = |pairs: &[(&'static str, &'static str)]| split_rule_of(&attrs(pairs));
        assert_eq!(rule(&[]), SplitRule::Anywhere);
        assert_eq!(
            rule(&[(
                "SPLIT_POLICY",
                "org.apache.hadoop.hbase.regionserver.DisabledRegionSplitPolicy"
            )]),
            SplitRule::Never
        );
        assert_eq!(
            rule(&[
                ("SPLIT_POLICY", "KeyPrefixRegionSplitPolicy"),
                ("KeyPrefixRegionSplitPolicy.prefix_length", "4"),
            ]),
            SplitRule::KeyPrefix(4)
        );
        assert_eq!(
            rule(&[
                (
                    "SPLIT_POLICY",
                    "org.apache.hadoop.hbase.regionserver.KeyPrefixRegionSplitPolicy"
                ),
                ("prefix_split_key_policy.prefix_length", "2"),
            ]),
            SplitRule::KeyPrefix(2),
            "the older key"
        );
        assert_eq!(
            rule(&[
                ("SPLIT_POLICY", "KeyPrefixRegionSplitPolicy"),
                ("KeyPrefixRegionSplitPolicy.prefix_length", "x")
            ]),
            SplitRule::Anywhere,
            "no valid length: by size"
        );
        assert_eq!(
            rule(&[
                ("SPLIT_POLICY", "DelimitedKeyPrefixRegionSplitPolicy"),
                ("DelimitedKeyPrefixRegionSplitPolicy.delimiter", "|"),
            ]),
            SplitRule::Delimiter(Bytes::from_static(b"|"))
        );
        assert_eq!(
            rule(&[("SPLIT_POLICY", "SteppingSplitPolicy")]),
            SplitRule::Anywhere
        );
        // Known policies pass the checks; a class HBase could not load does not.
        for policy in SPLIT_POLICIES {
            assert!(validate_attributes(&attrs(&[("SPLIT_POLICY", policy)])).is_ok());
        }
        let err = validate_attributes(&attrs(&[("SPLIT_POLICY", "com.example.MyPolicy")]))
            .expect_err("unknown policy");
        assert!(err.contains("com.example.MyPolicy"), "{err}");
    }

    #[test]
    fn split_plan_roundtrip_and_corruption() {
        let keys = vec![Bytes::from_static(b"g"), Bytes::from_static(b"n\x00\xff")];
        let enc = encode_split_plan(&keys);
        assert_eq!(decode_split_plan(&enc), Some(keys));
        assert_eq!(decode_split_plan(&encode_split_plan(&[])), Some(Vec::new()));
        for i in 0..enc.len() {
            let mut bad = enc.clone();
            bad[i] ^= 1;
            assert_eq!(decode_split_plan(&bad), None, "flip at {i}");
        }
        assert_eq!(decode_split_plan(&enc[..enc.len() - 1]), None);
    }

    #[test]
    fn names() {
        assert!(validate_table_name(b"t-1.x_y").is_ok());
        assert!(validate_table_name(b"ns:t").is_ok());
        assert!(validate_table_name(b"").is_err());
        assert!(validate_table_name(b"a:b:c").is_err());
        assert!(validate_table_name(b".t").is_err());
        assert!(validate_table_name(b"t\x00").is_err());
        assert!(validate_table_name(b"n-s:t").is_err());
        assert_eq!(canonical_name(b"default:t").as_ref(), b"t");
        assert_eq!(canonical_name(b"ns:t").as_ref(), b"ns:t");
        assert_eq!(split_name(b"t"), (&b"default"[..], &b"t"[..]));
    }
}
