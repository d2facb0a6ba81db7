//! Thrift2 request builders and result readers for the integration tests.
#![allow(dead_code)]

use std::collections::BTreeMap;

use tabula_thrift::hbase2::{
    TAppend, TColumn, TColumnFamilyDescriptor, TColumnValue, TDelete, TDeleteType, TGet, TIOError,
    TIllegalArgument, TPut, TResult, TScan, TTHBaseServiceSyncClient, TTableDescriptor, TTableName,
};

use super::{unique, Client2};

pub fn tname(name: &[u8]) -> TTableName {
    match name.iter().position(|&b| b == b':') {
        Some(i) => TTableName::new(name[..i].to_vec(), name[i + 1..].to_vec()),
        None => TTableName::new(None, name.to_vec()),
    }
}

pub fn family(name: &str, max_versions: Option<i32>) -> TColumnFamilyDescriptor {
    TColumnFamilyDescriptor {
        name: name.as_bytes().to_vec(),
        attributes: None,
        configuration: None,
        block_size: None,
        bloomn_filter_type: None,
        compression_type: None,
        dfs_replication: None,
        data_block_encoding: None,
        keep_deleted_cells: None,
        max_versions,
        min_versions: None,
        scope: None,
        time_to_live: None,
        block_cache_enabled: None,
        cache_blooms_on_write: None,
        cache_data_on_write: None,
        cache_indexes_on_write: None,
        compress_tags: None,
        evict_blocks_on_close: None,
        in_memory: None,
    }
}

pub fn table_desc(name: &[u8], families: Vec<TColumnFamilyDescriptor>) -> TTableDescriptor {
    TTableDescriptor::new(tname(name), families, None, None)
}

/// Creates a table whose families keep `versions` versions.
pub fn create2(c: &mut Client2, name: &[u8], families: &[&str], versions: i32) {
    let fams = families.iter().map(|f| family(f, Some(versions))).collect();
    c.create_table(table_desc(name, fams), Vec::new())
        .expect("createTable");
}

/// A fresh table on `c`.
pub fn fresh2(c: &mut Client2, prefix: &str, families: &[&str], versions: i32) -> Vec<u8> {
    let name = unique(prefix);
    create2(c, &name, families, versions);
    name
}

pub fn tget(row: &str) -> TGet {
    TGet {
        row: row.as_bytes().to_vec(),
        columns: None,
        timestamp: None,
        time_range: None,
        max_versions: None,
        filter_string: None,
        attributes: None,
        authorizations: None,
        consistency: None,
        target_replica_id: None,
        cache_blocks: None,
        store_limit: None,
        store_offset: None,
        existence_only: None,
        filter_bytes: None,
    }
}

pub fn col(family: &str, qualifier: Option<&str>) -> TColumn {
    TColumn::new(
        family.as_bytes().to_vec(),
        qualifier.map(|q| q.as_bytes().to_vec()),
        None,
    )
}

/// `cells` are `("family:qualifier", value)`.
pub fn tput(row: &str, cells: &[(&str, &str)], ts: Option<i64>) -> TPut {
    TPut {
        row: row.as_bytes().to_vec(),
        column_values: cells
            .iter()
            .map(|(c, v)| {
                let (f, q) = c.split_once(':').unwrap_or((c, ""));
                TColumnValue::new(
                    f.as_bytes().to_vec(),
                    q.as_bytes().to_vec(),
                    bytes::Bytes::copy_from_slice(v.as_bytes()),
                    None,
                    None,
                    None,
                )
            })
            .collect(),
        timestamp: ts,
        attributes: None,
        durability: None,
        cell_visibility: None,
    }
}

/// An append of `cells` (`("family:qualifier", suffix)`) to `row`.
pub fn tappend(row: &str, cells: &[(&str, &str)]) -> TAppend {
    let put = tput(row, cells, None);
    TAppend {
        row: put.row,
        columns: put.column_values,
        attributes: None,
        durability: None,
        cell_visibility: None,
        return_results: None,
    }
}

pub fn tdelete(row: &str, columns: Option<Vec<TColumn>>, kind: Option<TDeleteType>) -> TDelete {
    TDelete {
        row: row.as_bytes().to_vec(),
        columns,
        timestamp: None,
        delete_type: kind,
        attributes: None,
        durability: None,
        cell_visibility: None,
    }
}

/// A TScan with every optional field unset (the generated `Default` fills them with
/// zero values, e.g. an empty filterString, which a real client does not send).
pub fn tscan2() -> TScan {
    TScan {
        start_row: None,
        stop_row: None,
        columns: None,
        caching: None,
        max_versions: None,
        time_range: None,
        filter_string: None,
        batch_size: None,
        attributes: None,
        authorizations: None,
        reversed: None,
        cache_blocks: None,
        col_fam_time_range_map: None,
        read_type: None,
        limit: None,
        consistency: None,
        target_replica_id: None,
        filter_bytes: None,
    }
}

/// `(family:qualifier, value, timestamp)` of each cell, in order.
pub fn cells(r: &TResult) -> Vec<(String, String, i64)> {
    r.column_values
        .iter()
        .map(|cv| {
            (
                format!(
                    "{}:{}",
                    String::from_utf8_lossy(&cv.family),
                    String::from_utf8_lossy(&cv.qualifier)
                ),
                String::from_utf8_lossy(&cv.value).into_owned(),
                cv.timestamp.unwrap_or(-1),
            )
        })
        .collect()
}

/// `family:qualifier -> value` of a result.
pub fn values(r: &TResult) -> BTreeMap<String, String> {
    cells(r).into_iter().map(|(c, v, _)| (c, v)).collect()
}

pub fn row_of(r: &TResult) -> String {
    String::from_utf8_lossy(r.row.as_deref().unwrap_or_default()).into_owned()
}

pub fn tio<T: std::fmt::Debug>(r: thrift::Result<T>) -> TIOError {
    match r {
        Err(thrift::Error::User(u)) => match u.downcast::<TIOError>() {
            Ok(e) => *e,
            Err(other) => panic!("expected TIOError, got {other:?}"),
        },
        other => panic!("expected TIOError, got {other:?}"),
    }
}

pub fn tia<T: std::fmt::Debug>(r: thrift::Result<T>) -> TIllegalArgument {
    match r {
        Err(thrift::Error::User(u)) => match u.downcast::<TIllegalArgument>() {
            Ok(e) => *e,
            Err(other) => panic!("expected TIllegalArgument, got {other:?}"),
        },
        other => panic!("expected TIllegalArgument, got {other:?}"),
    }
}

pub fn internal<T: std::fmt::Debug>(r: thrift::Result<T>) -> thrift::ApplicationError {
    match r {
        Err(thrift::Error::Application(a)) => a,
        other => panic!("expected a TApplicationException, got {other:?}"),
    }
}

/// Protobuf field `tag` holding `value` (length-delimited), as HBase's Java client
/// writes its filter messages.
pub fn pb_bytes(tag: u64, value: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    pb_varint_to(tag << 3 | 2, &mut out);
    pb_varint_to(value.len() as u64, &mut out);
    out.extend_from_slice(value);
    out
}

/// Protobuf varint field `tag` holding `value`.
pub fn pb_varint(tag: u64, value: u64) -> Vec<u8> {
    let mut out = Vec::new();
    pb_varint_to(tag << 3, &mut out);
    pb_varint_to(value, &mut out);
    out
}

fn pb_varint_to(mut v: u64, out: &mut Vec<u8>) {
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

/// An `hbase.pb.Filter` (or `hbase.pb.Comparator`): a Java class of HBase's filter
/// package and its serialized message, what TScan/TGet.filterBytes carry.
pub fn hbase_filter(class: &str, body: &[u8]) -> Vec<u8> {
    let name = format!("org.apache.hadoop.hbase.filter.{class}");
    [pb_bytes(1, name.as_bytes()), pb_bytes(2, body)].concat()
}
