//! Automatic splits of a live server, end to end: a table written past the split
//! threshold is split by the coordinator, the children rewrite the files they
//! inherited, the retired parents' directories are collected, and every row reads
//! back the same (in a get, in a full scan, and after a restart).

mod common;

use std::path::Path;
use std::time::{Duration, Instant};

use common::t2::{family, table_desc, tname};
use common::*;
use tabula_thrift::hbase::{BatchMutation, THbaseSyncClient};
use tabula_thrift::hbase2::TTHBaseServiceSyncClient;

const ROWS: usize = 3_000;
const VALUE_BYTES: usize = 2_000;
/// Small enough that the ~6 MB written split the table several times.
const SETTINGS: &[(&str, &str)] = &[
    ("TABULA_SPLIT_THRESHOLD_MB", "1"),
    ("TABULA_MEMTABLE_SIZE_MB", "1"),
    ("TABULA_BLOCK_SIZE_KB", "4"),
];

fn row(i: usize) -> String {
    format!("row{i:06}")
}

/// A value that differs per row and is long enough to fill the table quickly.
fn value(i: usize) -> Vec<u8> {
    let mut v = format!("value-of-{i}-").into_bytes();
    v.resize(VALUE_BYTES, b'a' + (i % 26) as u8);
    v
}

/// Tablet directories on disk (numeric names under `tablets/`).
fn tablet_dirs(data_dir: &Path) -> usize {
    std::fs::read_dir(data_dir.join("tablets"))
        .map(|entries| {
            entries
                .flatten()
                .filter(|e| e.file_name().to_string_lossy().parse::<u64>().is_ok())
                .count()
        })
        .unwrap_or(0)
}

fn regions(client: &mut Client, table: &[u8]) -> usize {
    client
        .get_table_regions(table.to_vec())
        .expect("getTableRegions")
        .len()
}

/// Every row, read one get at a time and in one full scan, holds its value.
fn check_every_row(client: &mut Client, table: &[u8]) {
    for i in (0..ROWS).step_by(7).chain([ROWS - 1]) {
        let got = client
            .get(
                table.to_vec(),
                row(i).into_bytes(),
                b"cf:v".to_vec(),
                no_attrs(),
            )
            .expect("get");
        assert_eq!(
            got.first().and_then(|c| c.value.as_deref()),
            Some(value(i).as_slice()),
            "row {i}"
        );
    }
    let id = client
        .scanner_open_with_scan(table.to_vec(), tscan(), no_attrs())
        .expect("scannerOpenWithScan");
    let rows = drain(client, id, 250);
    assert_eq!(rows.len(), ROWS, "a full scan returns every row once");
    for (i, r) in rows.iter().enumerate() {
        assert_eq!(r.row.as_deref(), Some(row(i).as_bytes()), "scan order");
        let cell = r
            .columns
            .as_ref()
            .and_then(|columns| columns.get(b"cf:v".as_slice()))
            .and_then(|cell| cell.value.as_deref());
        assert_eq!(cell, Some(value(i).as_slice()), "scanned value of row {i}");
    }
}

/// Writes every row of `table` in batches of 100.
fn write_rows(c: &mut Client, table: &[u8]) {
    for chunk in (0..ROWS).collect::<Vec<_>>().chunks(100) {
        let batch = chunk
            .iter()
            .map(|&i| BatchMutation::new(row(i).into_bytes(), vec![put_m("cf:v", &value(i))]))
            .collect();
        c.mutate_rows(table.to_vec(), batch, no_attrs())
            .expect("mutateRows");
    }
}

#[test]
fn a_tables_max_filesize_sets_its_own_split_size() {
    // The server never splits (threshold 0); a table whose MAX_FILESIZE is 2 MiB
    // splits as it grows past it, the other table does not.
    let server = Tabula::start_with(&[
        ("TABULA_SPLIT_THRESHOLD_MB", "0"),
        ("TABULA_MEMTABLE_SIZE_MB", "1"),
        ("TABULA_BLOCK_SIZE_KB", "4"),
        ("TABULA_MAINTENANCE_INTERVAL_SECS", "1"),
    ]);
    let mut c2 = server.client2(Framing::Buffered, Protocol::Binary);
    let mut sized = table_desc(b"sized", vec![family("cf", None)]);
    sized.attributes = Some(
        [(b"MAX_FILESIZE".to_vec(), b"2097152".to_vec())]
            .into_iter()
            .collect(),
    );
    c2.create_table(sized, Vec::new())
        .expect("createTable sized");
    c2.create_table(table_desc(b"plain", vec![family("cf", None)]), Vec::new())
        .expect("createTable plain");
    let attributes = c2
        .get_table_descriptor(tname(b"sized"))
        .expect("descriptor")
        .attributes
        .unwrap_or_default();
    assert_eq!(
        attributes
            .get(b"MAX_FILESIZE".as_slice())
            .map(Vec::as_slice),
        Some(b"2097152".as_slice()),
        "the attribute reads back"
    );
    // Too small or not a number: refused as HBase's sanity checks refuse it.
    for bad in [b"1048576".to_vec(), b"2GB".to_vec()] {
        let mut desc = table_desc(b"refused", vec![family("cf", None)]);
        desc.attributes = Some([(b"MAX_FILESIZE".to_vec(), bad)].into_iter().collect());
        assert!(c2.create_table(desc, Vec::new()).is_err());
    }

    let mut c = server.client();
    write_rows(&mut c, b"sized");
    write_rows(&mut c, b"plain");
    let deadline = Instant::now() + Duration::from_secs(90);
    while regions(&mut c, b"sized") < 2 && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(250));
    }
    assert!(regions(&mut c, b"sized") >= 2, "{}", server.log());
    // Several more rounds: the other table, as large, stays whole.
    std::thread::sleep(Duration::from_secs(3));
    assert_eq!(regions(&mut c, b"plain"), 1);
    check_every_row(&mut c, b"sized");
    check_every_row(&mut c, b"plain");
}

#[test]
fn split_policies_keep_row_prefixes_together_or_tablets_whole() {
    // Every table would split at 1 MiB. Rows are `row00N...`: a table whose
    // policy keeps 6-byte prefixes together splits only between the three
    // groups of 1,000 rows; one with splits disabled stays whole.
    let mut settings = SETTINGS.to_vec();
    settings.push(("TABULA_MAINTENANCE_INTERVAL_SECS", "1"));
    let server = Tabula::start_with(&settings);
    let mut c2 = server.client2(Framing::Buffered, Protocol::Binary);
    let with = |name: &[u8], attributes: &[(&str, &str)]| {
        let mut desc = table_desc(name, vec![family("cf", None)]);
        desc.attributes = Some(
            attributes
                .iter()
                .map(|(k, v)| (k.as_bytes().to_vec(), v.as_bytes().to_vec()))
                .collect(),
        );
        desc
    };
    c2.create_table(
        with(
            b"prefixed",
            &[
                (
                    "SPLIT_POLICY",
                    "org.apache.hadoop.hbase.regionserver.KeyPrefixRegionSplitPolicy",
                ),
                ("KeyPrefixRegionSplitPolicy.prefix_length", "6"),
            ],
        ),
        Vec::new(),
    )
    .expect("createTable prefixed");
    c2.create_table(
        with(
            b"whole",
            &[(
                "SPLIT_POLICY",
                "org.apache.hadoop.hbase.regionserver.DisabledRegionSplitPolicy",
            )],
        ),
        Vec::new(),
    )
    .expect("createTable whole");
    // A policy HBase could not load is refused, as its sanity checks refuse it.
    let refused = c2.create_table(
        with(b"refused", &[("SPLIT_POLICY", "com.example.NoSuchPolicy")]),
        Vec::new(),
    );
    assert!(refused.is_err(), "{refused:?}");

    let mut c = server.client();
    write_rows(&mut c, b"prefixed");
    write_rows(&mut c, b"whole");
    let deadline = Instant::now() + Duration::from_secs(90);
    while regions(&mut c, b"prefixed") < 3 && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(250));
    }
    // Several more rounds: no split inside a group, none of the other table.
    std::thread::sleep(Duration::from_secs(3));
    let starts: Vec<Vec<u8>> = c
        .get_table_regions(b"prefixed".to_vec())
        .expect("getTableRegions")
        .into_iter()
        .map(|r| r.start_key.unwrap_or_default())
        .collect();
    assert_eq!(
        starts,
        vec![b"".to_vec(), b"row001".to_vec(), b"row002".to_vec()],
        "{}",
        server.log()
    );
    assert_eq!(regions(&mut c, b"whole"), 1);
    check_every_row(&mut c, b"prefixed");
    check_every_row(&mut c, b"whole");
}

#[test]
fn a_growing_table_splits_and_retired_parents_are_collected() {
    let dir = tempfile::tempdir().expect("tempdir");
    let data = dir.path().join("data");
    let table = b"splits".to_vec();
    {
        let server = Tabula::start_at_with(&data, SETTINGS);
        let mut c = server.client();
        create(&mut c, &table, &["cf"]);
        write_rows(&mut c, &table);

        // Splits happen in the coordinator's maintenance rounds; then the children
        // compact and the next round collects the parents. Every tablet directory
        // left must be a live one: the root tablet, the METADATA tablet and one per
        // region.
        let deadline = Instant::now() + Duration::from_secs(90);
        let (mut n_regions, mut n_dirs) = (0, 0);
        while Instant::now() < deadline {
            n_regions = regions(&mut c, &table);
            n_dirs = tablet_dirs(&data);
            if n_regions >= 3 && n_dirs == n_regions + 2 {
                break;
            }
            std::thread::sleep(Duration::from_millis(250));
        }
        assert!(n_regions >= 3, "the table split: {n_regions} regions");
        assert_eq!(
            n_dirs,
            n_regions + 2,
            "only live tablets keep a directory ({n_regions} regions)\n{}",
            server.log()
        );
        assert!(
            server
                .log()
                .contains("removed the directory of a retired tablet"),
            "the log names the collected directories"
        );
        check_every_row(&mut c, &table);
    }
    // The server stopped; everything opens again from the children's own files.
    let server = Tabula::start_at_with(&data, SETTINGS);
    let mut c = server.client();
    check_every_row(&mut c, &table);
}
