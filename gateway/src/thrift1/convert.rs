//! Conversions between Thrift1 structs and the engine's types.
//!
//! Owns: cells and rows as `TCell`/`TRowResult`, column descriptors as
//! `FamilySchema` (applying HBase's IDL defaults the generated decoder leaves out),
//! regions as `TRegionInfo`, and `writeToWAL` as a durability.
//! Must not: call the backend.

use std::collections::BTreeMap;

use tabula_storage::{BloomType, Cell, CompressionName, Durability, FamilySchema};
use tabula_thrift::hbase::{ColumnDescriptor, TCell, TColumn, TRegionInfo, TRowResult};

use super::columns::{column_key, ColumnSpec};
use super::errors::{Thrift1Error, Thrift1Result};
use crate::backend::RegionInfo;

/// HBase's ColumnDescriptor.maxVersions default (IDL `= 3`).
pub const DEFAULT_MAX_VERSIONS: u32 = 3;
/// timeToLive meaning "forever" (HBase's HConstants.FOREVER).
pub const TTL_FOREVER: i32 = i32::MAX;
/// zstd level used for every compressing choice.
pub const ZSTD_LEVEL: i32 = 3;
/// TRegionInfo.version HBase reports.
pub const REGION_VERSION: i8 = 1;

/// A cell as a bare `TCell`. The `TCell` shares the cell's value buffer (a
/// memtable entry's, or the one the read copied out of its block): the value is
/// not copied again on its way to the client.
pub fn tcell(cell: Cell) -> TCell {
    TCell::new(cell.value, cell.timestamp)
}

/// A row's cells as one `TRowResult`: `sortedColumns` (ordered by family, then
/// qualifier) when `sorted`, else the `columns` map keyed `family:qualifier`, which
/// keeps the first cell of each column (the newest version).
pub fn row_result(row: &[u8], cells: Vec<Cell>, sorted: bool) -> TRowResult {
    if sorted {
        let mut ordered = cells;
        ordered.sort_by(|a, b| {
            (a.family.as_ref(), a.qualifier.as_ref())
                .cmp(&(b.family.as_ref(), b.qualifier.as_ref()))
        });
        let columns = ordered
            .into_iter()
            .map(|c| TColumn::new(column_key(&c.family, &c.qualifier), tcell(c)))
            .collect::<Vec<_>>();
        TRowResult::new(row.to_vec(), None, columns)
    } else {
        let mut map = BTreeMap::new();
        for c in cells {
            map.entry(column_key(&c.family, &c.qualifier))
                .or_insert_with(|| tcell(c));
        }
        TRowResult::new(row.to_vec(), map, None)
    }
}

/// `writeToWAL` as a durability: false skips the commit log (HBase SKIP_WAL).
pub fn durability(write_to_wal: bool) -> Durability {
    if write_to_wal {
        Durability::Sync
    } else {
        Durability::Skip
    }
}

/// A compression algorithm as HBase names it, in any case; empty is NONE.
fn parse_compression(name: &str) -> Thrift1Result<CompressionName> {
    if name.is_empty() {
        return Ok(CompressionName::None);
    }
    CompressionName::from_hbase_name(name).ok_or_else(|| {
        Thrift1Error::IllegalArgument(format!(
            "java.lang.IllegalArgumentException: Unsupported compression algorithm name: {name} \
         (expected one of NONE, GZ, SNAPPY, LZO, LZ4, BZIP2, ZSTD)"
        ))
    })
}

fn parse_bloom(name: &str) -> Thrift1Result<BloomType> {
    match name {
        "" | "NONE" => Ok(BloomType::None),
        "ROW" => Ok(BloomType::Row),
        "ROWCOL" => Ok(BloomType::RowCol),
        other => Err(Thrift1Error::IllegalArgument(format!(
            "java.lang.IllegalArgumentException: No enum constant BloomType.{other} \
             (expected NONE, ROW or ROWCOL, in capitals)"
        ))),
    }
}

/// A createTable column descriptor as a family schema.
///
/// The generated decoder gives absent default-requiredness fields their zero value,
/// so zero stands for "absent" here: `maxVersions` 0 means HBase's default of 3,
/// an empty compression or bloom filter type means NONE, timeToLive 0 means forever
/// (as every value <= 0 does in HBase). Any compressing choice is stored as zstd
/// and reported by the name it was given.
pub fn family_from_descriptor(cd: &ColumnDescriptor) -> Thrift1Result<FamilySchema> {
    let name = cd.name.as_deref().unwrap_or_default();
    let family = ColumnSpec::parse(name).family;
    if family.is_empty() {
        return Err(Thrift1Error::IllegalArgument("column name is empty".into()));
    }
    let max_versions = match cd.max_versions.unwrap_or(0) {
        0 => DEFAULT_MAX_VERSIONS,
        n => u32::try_from(n).map_err(|_| {
            Thrift1Error::IllegalArgument(format!(
                "java.lang.IllegalArgumentException: Maximum versions must be positive \
                 (column family {}: maxVersions {n})",
                String::from_utf8_lossy(&family)
            ))
        })?,
    };
    let ttl = match cd.time_to_live.unwrap_or(0) {
        t if t <= 0 || t == TTL_FOREVER => None,
        t => Some(u64::try_from(t).unwrap_or(u64::MAX)),
    };
    let compression = parse_compression(cd.compression.as_deref().unwrap_or_default())?;
    let mut f = FamilySchema::new(family)
        .max_versions(max_versions)
        .ttl(ttl)
        .compression_named(compression, ZSTD_LEVEL);
    f.bloom = parse_bloom(cd.bloom_filter_type.as_deref().unwrap_or_default())?;
    f.block_cache = cd.block_cache_enabled.unwrap_or(false);
    f.in_memory = cd.in_memory.unwrap_or(false);
    Ok(f)
}

/// A family schema as getColumnDescriptors reports it: name `family:`, compression
/// by the name it was given, timeToLive 2147483647 for forever.
pub fn descriptor_from_family(f: &FamilySchema) -> ColumnDescriptor {
    let compression = f.compression_name.hbase_name();
    let bloom = match f.bloom {
        BloomType::None => "NONE",
        BloomType::Row => "ROW",
        BloomType::RowCol => "ROWCOL",
    };
    let ttl = f
        .ttl_seconds
        .map_or(TTL_FOREVER, |s| i32::try_from(s).unwrap_or(TTL_FOREVER));
    ColumnDescriptor::new(
        column_key(&f.name, b""),
        i32::try_from(f.max_versions).unwrap_or(i32::MAX),
        compression.to_string(),
        f.in_memory,
        bloom.to_string(),
        0,
        0,
        f.block_cache,
        ttl,
    )
}

/// A region as `TRegionInfo`.
pub fn tregion(r: &RegionInfo) -> TRegionInfo {
    TRegionInfo::new(
        r.start_key.to_vec(),
        r.end_key.to_vec(),
        r.id,
        r.name.to_vec(),
        REGION_VERSION,
        r.server_host.as_bytes().to_vec(),
        r.server_port,
    )
}

/// The cells sorted as HBase's `Result.rawCells()` lists them: by family, then
/// qualifier, newest version first.
pub fn sort_like_hbase(cells: &mut [Cell]) {
    cells.sort_by(|a, b| {
        (
            a.family.as_ref(),
            a.qualifier.as_ref(),
            std::cmp::Reverse(a.timestamp),
        )
            .cmp(&(
                b.family.as_ref(),
                b.qualifier.as_ref(),
                std::cmp::Reverse(b.timestamp),
            ))
    });
}

#[cfg(test)]
mod tests {
    use super::*;
    use bytes::Bytes;
    use tabula_storage::Compression;

    fn cell(f: &str, q: &str, ts: i64, v: &str) -> Cell {
        Cell {
            row: Bytes::from_static(b"r"),
            family: Bytes::copy_from_slice(f.as_bytes()),
            qualifier: Bytes::copy_from_slice(q.as_bytes()),
            timestamp: ts,
            value: Bytes::copy_from_slice(v.as_bytes()),
        }
    }

    #[test]
    fn a_tcell_shares_a_value_another_holder_still_holds() {
        // As a memtable-resident value is: the memtable keeps its reference.
        let stored = Bytes::from(vec![b'v'; 1000]);
        let mut read = cell("cf", "a", 7, "");
        read.value = stored.clone();
        let sent = tcell(read);
        let value = sent.value.expect("a value");
        assert_eq!(value, stored);
        assert_eq!(
            value.as_ptr(),
            stored.as_ptr(),
            "the reply copied the value"
        );
        assert_eq!(sent.timestamp, Some(7));
    }

    fn happybase_descriptor(name: &str) -> ColumnDescriptor {
        ColumnDescriptor::new(
            name.as_bytes().to_vec(),
            3,
            "NONE".to_string(),
            false,
            "NONE".to_string(),
            0,
            0,
            false,
            -1,
        )
    }

    #[test]
    fn unsorted_results_fill_only_the_map() {
        let r = row_result(
            b"r",
            vec![cell("cf", "b", 2, "x"), cell("cf", "a", 1, "y")],
            false,
        );
        assert!(r.sorted_columns.is_none());
        let m = r.columns.unwrap();
        assert_eq!(m.len(), 2);
        assert_eq!(m[&b"cf:a".to_vec()].value.as_deref(), Some(&b"y"[..]));
    }

    #[test]
    fn sorted_results_fill_only_the_list_in_column_order() {
        let r = row_result(
            b"r",
            vec![
                cell("cf2", "a", 1, "1"),
                cell("cf", "b", 1, "2"),
                cell("cf", "a", 1, "3"),
            ],
            true,
        );
        assert!(r.columns.is_none());
        let names: Vec<Vec<u8>> = r
            .sorted_columns
            .unwrap()
            .into_iter()
            .map(|c| c.column_name.unwrap())
            .collect();
        assert_eq!(
            names,
            vec![b"cf:a".to_vec(), b"cf:b".to_vec(), b"cf2:a".to_vec()]
        );
    }

    #[test]
    fn happybase_defaults_give_hbase_defaults() {
        let f = family_from_descriptor(&happybase_descriptor("cf:")).unwrap();
        assert_eq!(f.name.as_ref(), b"cf");
        assert_eq!(f.max_versions, 3);
        assert_eq!(f.ttl_seconds, None);
        assert_eq!(f.compression, Compression::None);
        assert_eq!(f.bloom, BloomType::None);
        assert!(!f.block_cache);
        let back = descriptor_from_family(&f);
        assert_eq!(back.name.as_deref(), Some(&b"cf:"[..]));
        assert_eq!(back.time_to_live, Some(i32::MAX));
        assert_eq!(back.compression.as_deref(), Some("NONE"));
    }

    #[test]
    fn absent_fields_mean_idl_defaults() {
        let f = family_from_descriptor(&ColumnDescriptor {
            name: Some(b"cf".to_vec()),
            ..ColumnDescriptor::default()
        })
        .unwrap();
        assert_eq!(f.max_versions, 3);
        assert_eq!(f.bloom, BloomType::None);
        assert_eq!(f.compression, Compression::None);
    }

    #[test]
    fn compression_is_case_insensitive_stored_as_zstd_and_reported_as_named() {
        for name in ["gz", "GZ", "Snappy", "lzo", "LZ4", "bzip2", "ZSTD"] {
            let cd = ColumnDescriptor {
                compression: Some(name.into()),
                ..happybase_descriptor("cf")
            };
            let f = family_from_descriptor(&cd).unwrap();
            assert_eq!(f.compression, Compression::Zstd(ZSTD_LEVEL), "{name}");
            assert_eq!(
                descriptor_from_family(&f).compression,
                Some(name.to_ascii_uppercase())
            );
        }
        let cd = ColumnDescriptor {
            compression: Some("brotli".into()),
            ..happybase_descriptor("cf")
        };
        assert!(
            matches!(family_from_descriptor(&cd), Err(Thrift1Error::IllegalArgument(m)) if m.contains("brotli"))
        );
    }

    #[test]
    fn bloom_type_is_case_sensitive() {
        let cd = ColumnDescriptor {
            bloom_filter_type: Some("ROWCOL".into()),
            ..happybase_descriptor("cf")
        };
        assert_eq!(
            family_from_descriptor(&cd).unwrap().bloom,
            BloomType::RowCol
        );
        let cd = ColumnDescriptor {
            bloom_filter_type: Some("row".into()),
            ..happybase_descriptor("cf")
        };
        assert!(matches!(
            family_from_descriptor(&cd),
            Err(Thrift1Error::IllegalArgument(_))
        ));
    }

    #[test]
    fn bad_names_versions_and_ttls() {
        assert!(
            matches!(family_from_descriptor(&happybase_descriptor(":")), Err(Thrift1Error::IllegalArgument(m)) if m == "column name is empty")
        );
        let cd = ColumnDescriptor {
            max_versions: Some(-1),
            ..happybase_descriptor("cf")
        };
        assert!(matches!(
            family_from_descriptor(&cd),
            Err(Thrift1Error::IllegalArgument(_))
        ));
        let cd = ColumnDescriptor {
            time_to_live: Some(86400),
            ..happybase_descriptor("cf")
        };
        let f = family_from_descriptor(&cd).unwrap();
        assert_eq!(f.ttl_seconds, Some(86400));
        assert_eq!(descriptor_from_family(&f).time_to_live, Some(86400));
        let cd = ColumnDescriptor {
            time_to_live: Some(i32::MAX),
            ..happybase_descriptor("cf")
        };
        assert_eq!(family_from_descriptor(&cd).unwrap().ttl_seconds, None);
    }

    #[test]
    fn cells_sort_like_hbase_results() {
        let mut cells = vec![
            cell("b", "a", 1, ""),
            cell("a", "z", 1, ""),
            cell("a", "z", 5, ""),
        ];
        sort_like_hbase(&mut cells);
        let order: Vec<(String, i64)> = cells
            .iter()
            .map(|c| {
                (
                    format!(
                        "{}:{}",
                        String::from_utf8_lossy(&c.family),
                        String::from_utf8_lossy(&c.qualifier)
                    ),
                    c.timestamp,
                )
            })
            .collect();
        assert_eq!(
            order,
            vec![("a:z".into(), 5), ("a:z".into(), 1), ("b:a".into(), 1)]
        );
    }
}
