//! Helpers shared by the durability, corruption and bad-input tests: seeded random
//! numbers, engine and schema set-up, directory copies, byte flips, and small
//! readers of the documented on-disk layouts (SSTable footer and index, commit-log
//! records) so tests can aim damage at a chosen structure.
//! Must not: depend on engine internals beyond its public API and the formats in
//! docs/format-sstable.md and docs/format-log.md.
#![allow(dead_code)]

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use bytes::Bytes;
use rand::rngs::StdRng;
use rand::SeedableRng;
use tabula_storage::engine::Clock;
use tabula_storage::{
    Compression, Engine, EngineOptions, Error, FamilySchema, ReadOptions, ScanRequest, TableSchema,
    Tablet, TabletDescriptor,
};

/// Environment variable that fixes the seed of every seeded test.
pub const SEED_VAR: &str = "TABULA_TEST_SEED";

/// A random generator for test `name`: seeded from `TABULA_TEST_SEED` when set,
/// otherwise from the time. The seed is printed (libtest shows it when the test
/// fails) so a failure can be replayed.
pub fn seeded_rng(name: &str) -> (StdRng, u64) {
    let seed = std::env::var(SEED_VAR)
        .ok()
        .and_then(|s| s.parse::<u64>().ok())
        .unwrap_or_else(|| {
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map(|d| d.as_nanos() as u64)
                .unwrap_or(0x5eed)
        });
    eprintln!("{name}: seed {seed} (replay with {SEED_VAR}={seed})");
    (StdRng::seed_from_u64(seed), seed)
}

/// A clock that always answers `ms`.
pub fn fixed_clock(ms: i64) -> Clock {
    Arc::new(move || ms)
}

/// Options for a deterministic engine in `dir`: no background work, small blocks,
/// a fixed clock.
pub fn quiet_options(dir: &Path, now_ms: i64) -> EngineOptions {
    let mut o = EngineOptions::new(dir);
    o.background_work = false;
    o.block_size = 512;
    o.memory_budget = 64 << 20;
    o.clock = fixed_clock(now_ms);
    o
}

/// Table `t` with families `a` (uncompressed, row+column blooms) and `z` (zstd).
pub fn two_family_schema() -> TableSchema {
    let mut a = FamilySchema::new(&b"a"[..]).max_versions(3);
    a.bloom = tabula_storage::BloomType::RowCol;
    let z = FamilySchema::new(&b"z"[..])
        .max_versions(3)
        .compression(Compression::Zstd(3));
    TableSchema::new("t", vec![a, z]).expect("valid schema")
}

/// The descriptor of a tablet covering the whole table.
pub fn whole_table(id: u64, schema: TableSchema) -> TabletDescriptor {
    TabletDescriptor {
        id,
        schema,
        start_row: Bytes::new(),
        end_row: Bytes::new(),
    }
}

/// Opens tablet `id` over rows `[start, end)` ("" = unbounded) of `schema`.
pub fn open_range(
    engine: &Engine,
    id: u64,
    schema: TableSchema,
    start: &'static str,
    end: &'static str,
) -> Arc<Tablet> {
    engine
        .open_tablet(TabletDescriptor {
            id,
            schema,
            start_row: Bytes::from(start),
            end_row: Bytes::from(end),
        })
        .expect("tablet opens")
}

/// Opens an engine and tablet 1 (whole table) with `schema`.
pub fn open_engine(opts: EngineOptions, schema: TableSchema) -> (Engine, Arc<Tablet>) {
    let engine = Engine::open(opts).expect("engine opens");
    let tablet = engine
        .open_tablet(whole_table(1, schema))
        .expect("tablet opens");
    (engine, tablet)
}

/// True for `Error::Corruption`.
pub fn is_corruption(e: &Error) -> bool {
    matches!(e, Error::Corruption { .. })
}

/// Copies a directory tree.
pub fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).expect("create copy target");
    for entry in std::fs::read_dir(from).expect("list copy source") {
        let entry = entry.expect("directory entry");
        let target = to.join(entry.file_name());
        if entry.file_type().expect("file type").is_dir() {
            copy_dir(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), &target).expect("copy file");
        }
    }
}

/// XORs the byte at `offset` of `path` with `mask` (non-zero) and returns the
/// original byte.
pub fn flip_byte(path: &Path, offset: u64, mask: u8) -> u8 {
    assert_ne!(mask, 0, "a zero mask changes nothing");
    let mut bytes = std::fs::read(path).expect("read file to damage");
    let i = usize::try_from(offset).expect("offset fits");
    let original = bytes[i];
    bytes[i] ^= mask;
    std::fs::write(path, &bytes).expect("write damaged file");
    original
}

/// Puts back a byte changed by [`flip_byte`].
pub fn restore_byte(path: &Path, offset: u64, original: u8) {
    let mut bytes = std::fs::read(path).expect("read damaged file");
    bytes[usize::try_from(offset).expect("offset fits")] = original;
    std::fs::write(path, &bytes).expect("restore file");
}

/// Files under `dir` (recursively) whose names end with `suffix`, sorted.
pub fn files_with_suffix(dir: &Path, suffix: &str) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let Ok(entries) = std::fs::read_dir(dir) else {
        return out;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            out.extend(files_with_suffix(&path, suffix));
        } else if path.to_string_lossy().ends_with(suffix) {
            out.push(path);
        }
    }
    out.sort();
    out
}

/// A stored block's handle: payload offset and payload size (the 5-byte trailer
/// of compression type and CRC follows the payload).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Handle {
    pub offset: u64,
    pub size: u64,
}

impl Handle {
    /// Offset of the compression-type byte.
    pub fn type_byte(&self) -> u64 {
        self.offset + self.size
    }

    /// Offset of the last CRC byte.
    pub fn last_byte(&self) -> u64 {
        self.offset + self.size + 4
    }
}

/// Where the parts of an SSTable lie (docs/format-sstable.md).
#[derive(Debug, Clone)]
pub struct SstLayout {
    pub data_blocks: Vec<Handle>,
    pub bloom: Handle,
    pub meta: Handle,
    pub index: Handle,
    pub footer_start: u64,
    pub len: u64,
}

fn u64_le(b: &[u8], at: usize) -> u64 {
    u64::from_le_bytes(b[at..at + 8].try_into().expect("8 bytes"))
}

fn u32_le(b: &[u8], at: usize) -> u32 {
    u32::from_le_bytes(b[at..at + 4].try_into().expect("4 bytes"))
}

fn varint(b: &[u8], pos: &mut usize) -> u64 {
    let mut v = 0u64;
    let mut shift = 0;
    loop {
        let byte = b[*pos];
        *pos += 1;
        v |= u64::from(byte & 0x7f) << shift;
        if byte & 0x80 == 0 {
            return v;
        }
        shift += 7;
    }
}

/// Reads the layout of a valid SSTable: footer, then the index's data handles.
pub fn sst_layout(path: &Path) -> SstLayout {
    let bytes = std::fs::read(path).expect("read sstable");
    let len = bytes.len() as u64;
    let fs = bytes.len() - 64;
    let f = &bytes[fs..];
    assert_eq!(
        &f[52..60],
        b"TABULASS",
        "footer magic of {}",
        path.display()
    );
    let handle = |at: usize| Handle {
        offset: u64_le(f, at),
        size: u64_le(f, at + 8),
    };
    let index = handle(0);
    let bloom = handle(16);
    let meta = handle(32);
    let payload = &bytes[index.offset as usize..(index.offset + index.size) as usize];
    let restarts = u32_le(payload, payload.len() - 4) as usize;
    let entries_end = payload.len() - 4 - 4 * restarts;
    let mut pos = 0;
    let mut data_blocks = Vec::new();
    while pos < entries_end {
        let _shared = varint(payload, &mut pos);
        let unshared = varint(payload, &mut pos) as usize;
        let value_len = varint(payload, &mut pos) as usize;
        pos += unshared;
        let mut vpos = pos;
        let offset = varint(payload, &mut vpos);
        let size = varint(payload, &mut vpos);
        pos += value_len;
        data_blocks.push(Handle { offset, size });
    }
    SstLayout {
        data_blocks,
        bloom,
        meta,
        index,
        footer_start: fs as u64,
        len,
    }
}

/// Length of a commit-log segment header.
pub const LOG_HEADER_LEN: u64 = 36;

/// One record of a commit-log segment (docs/format-log.md).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LogRecordSpan {
    /// Offset of the record's length field.
    pub offset: u64,
    /// Bytes of the whole record (8-byte length and CRC, then the body).
    pub len: u64,
    pub tablet_id: u64,
    pub seq: u64,
}

impl LogRecordSpan {
    /// Offset one past the record.
    pub fn end(&self) -> u64 {
        self.offset + self.len
    }
}

/// The records of a valid segment, in file order.
pub fn log_records(path: &Path) -> Vec<LogRecordSpan> {
    let bytes = std::fs::read(path).expect("read log segment");
    assert_eq!(
        &bytes[..8],
        b"TABULOG\0",
        "segment magic of {}",
        path.display()
    );
    let mut pos = LOG_HEADER_LEN as usize;
    let mut out = Vec::new();
    while pos + 8 <= bytes.len() {
        let body_len = u32_le(&bytes, pos) as usize;
        out.push(LogRecordSpan {
            offset: pos as u64,
            len: 8 + body_len as u64,
            tablet_id: u64_le(&bytes, pos + 8),
            seq: u64_le(&bytes, pos + 16),
        });
        pos += 8 + body_len;
    }
    assert_eq!(
        pos,
        bytes.len(),
        "segment {} ends inside a record",
        path.display()
    );
    out
}

/// Every row of `tablet` (newest version of each column) as
/// `row -> ("family:qualifier" -> value)`.
pub fn latest_rows(tablet: &Tablet) -> BTreeMap<Bytes, BTreeMap<String, Bytes>> {
    let mut scanner = tablet
        .scan(ScanRequest {
            read: ReadOptions::latest(),
            ..ScanRequest::default()
        })
        .expect("scan opens");
    let mut rows = BTreeMap::new();
    while let Some(r) = scanner.next_row().expect("scan reads") {
        let row: &mut BTreeMap<String, Bytes> = rows.entry(r.row().clone()).or_default();
        for c in r.cells {
            let column = format!(
                "{}:{}",
                String::from_utf8_lossy(&c.family),
                String::from_utf8_lossy(&c.qualifier)
            );
            row.insert(column, c.value);
        }
    }
    rows
}
