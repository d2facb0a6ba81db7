//! Thrift1 scanners against the real `tabula` binary: every scannerOpen* variant,
//! TScan fields (batching, sorting, reverse, filters, timestamps), batch sizes and
//! the end marker, invalid ids, leases, id allocation and connection-close cleanup.

mod common;

use std::time::Duration;

use common::*;
use tabula_thrift::hbase::{THbaseSyncClient, TScan};
use thrift::ApplicationErrorKind;

/// A table with rows `a`, `b`, `c`, `d` (cf:x = row name, cf:y = "y").
fn four_rows(prefix: &str) -> (Client, Vec<u8>) {
    let (mut c, t) = fresh_table(prefix, &["cf", "other"]);
    for r in ["a", "b", "c", "d"] {
        put(
            &mut c,
            &t,
            r,
            &[("cf:x", r), ("cf:y", "y"), ("other:z", "z")],
        );
    }
    (c, t)
}

fn scan_rows(c: &mut Client, t: &[u8], scan: TScan) -> Vec<String> {
    let id = c
        .scanner_open_with_scan(t.to_vec(), scan, no_attrs())
        .unwrap();
    rows_of(&drain(c, id, 100))
}

#[test]
fn scanner_open_scans_from_the_start_row() {
    let (mut c, t) = four_rows("scan_open");
    let id = c
        .scanner_open(t.clone(), Vec::new(), vec![], no_attrs())
        .unwrap();
    let all = drain(&mut c, id, 10);
    assert_eq!(rows_of(&all), vec!["a", "b", "c", "d"]);
    assert_eq!(columns_of(&all[0]).len(), 3);
    assert!(all[0].sorted_columns.is_none());
    let id = c
        .scanner_open(t.clone(), b"b".to_vec(), vec![b"cf:x".to_vec()], no_attrs())
        .unwrap();
    let from_b = drain(&mut c, id, 10);
    assert_eq!(
        rows_of(&from_b),
        vec!["b", "c", "d"],
        "the start row is inclusive"
    );
    assert_eq!(
        columns_of(&from_b[0]).into_keys().collect::<Vec<_>>(),
        vec!["cf:x"]
    );
    let id = c
        .scanner_open(t, b"bb".to_vec(), vec![b"other".to_vec()], no_attrs())
        .unwrap();
    let fam = drain(&mut c, id, 10);
    assert_eq!(rows_of(&fam), vec!["c", "d"]);
    assert_eq!(
        columns_of(&fam[0]).into_keys().collect::<Vec<_>>(),
        vec!["other:z"]
    );
}

#[test]
fn scanner_open_with_stop_excludes_the_stop_row() {
    let (mut c, t) = four_rows("scan_stop");
    let id = c
        .scanner_open_with_stop(t.clone(), b"b".to_vec(), b"d".to_vec(), vec![], no_attrs())
        .unwrap();
    assert_eq!(rows_of(&drain(&mut c, id, 10)), vec!["b", "c"]);
    let id = c
        .scanner_open_with_stop(t, Vec::new(), Vec::new(), vec![b"cf".to_vec()], no_attrs())
        .unwrap();
    assert_eq!(
        rows_of(&drain(&mut c, id, 10)),
        vec!["a", "b", "c", "d"],
        "empty start and stop = whole table"
    );
}

#[test]
fn scanner_open_with_prefix_stops_after_the_prefix() {
    let (mut c, t) = fresh_table("scan_prefix", &["cf"]);
    for r in ["aa", "ab1", "ab2", "ac", "it's", "it's2", "itx"] {
        put(&mut c, &t, r, &[("cf:x", r)]);
    }
    let id = c
        .scanner_open_with_prefix(t.clone(), b"ab".to_vec(), vec![], no_attrs())
        .unwrap();
    assert_eq!(rows_of(&drain(&mut c, id, 10)), vec!["ab1", "ab2"]);
    let id = c
        .scanner_open_with_prefix(
            t.clone(),
            b"it's".to_vec(),
            vec![b"cf:x".to_vec()],
            no_attrs(),
        )
        .unwrap();
    assert_eq!(
        rows_of(&drain(&mut c, id, 10)),
        vec!["it's", "it's2"],
        "quotes in the prefix are escaped"
    );
    let id = c
        .scanner_open_with_prefix(t, b"zz".to_vec(), vec![], no_attrs())
        .unwrap();
    assert!(drain(&mut c, id, 10).is_empty());
}

#[test]
fn ts_scanners_read_before_the_timestamp() {
    let (mut c, t) = fresh_table("scan_ts", &["cf"]);
    put_ts(&mut c, &t, "a", &[("cf:x", "a100")], 100);
    put_ts(&mut c, &t, "a", &[("cf:x", "a200")], 200);
    put_ts(&mut c, &t, "b", &[("cf:x", "b300")], 300);
    let id = c
        .scanner_open_ts(t.clone(), Vec::new(), vec![], 200, no_attrs())
        .unwrap();
    let got = drain(&mut c, id, 10);
    assert_eq!(rows_of(&got), vec!["a"]);
    assert_eq!(columns_ts_of(&got[0])["cf:x"], ("a100".to_string(), 100));
    let id = c
        .scanner_open_with_stop_ts(
            t.clone(),
            b"a".to_vec(),
            b"c".to_vec(),
            vec![b"cf:x".to_vec()],
            301,
            no_attrs(),
        )
        .unwrap();
    let got = drain(&mut c, id, 10);
    assert_eq!(rows_of(&got), vec!["a", "b"]);
    assert_eq!(columns_of(&got[0])["cf:x"], "a200");
    let id = c
        .scanner_open_with_stop_ts(
            t.clone(),
            b"a".to_vec(),
            b"b".to_vec(),
            vec![],
            300,
            no_attrs(),
        )
        .unwrap();
    assert_eq!(rows_of(&drain(&mut c, id, 10)), vec!["a"]);
    let scan = TScan {
        timestamp: Some(100),
        ..tscan()
    };
    assert!(
        scan_rows(&mut c, &t, scan).is_empty(),
        "100 itself is excluded"
    );
}

#[test]
fn tscan_start_stop_and_columns() {
    let (mut c, t) = four_rows("tscan_basic");
    let scan = TScan {
        start_row: Some(b"b".to_vec()),
        stop_row: Some(b"d".to_vec()),
        columns: Some(vec![b"cf:y".to_vec()]),
        caching: Some(1000),
        sort_columns: Some(false),
        reversed: Some(false),
        cache_blocks: Some(false),
        ..tscan()
    };
    let id = c.scanner_open_with_scan(t, scan, no_attrs()).unwrap();
    let got = drain(&mut c, id, 1);
    assert_eq!(rows_of(&got), vec!["b", "c"]);
    assert_eq!(
        columns_of(&got[0]).into_iter().collect::<Vec<_>>(),
        vec![("cf:y".to_string(), "y".to_string())]
    );
}

#[test]
fn happybase_style_scan_with_a_limit() {
    let (mut c, t) = fresh_table("tscan_happybase", &["cf"]);
    for i in 0..25 {
        put(&mut c, &t, &format!("r{i:02}"), &[("cf:x", &i.to_string())]);
    }
    let scan = TScan {
        start_row: Some(Vec::new()),
        caching: Some(10),
        sort_columns: Some(false),
        reversed: Some(false),
        ..tscan()
    };
    let id = c
        .scanner_open_with_scan(t.clone(), scan, no_attrs())
        .unwrap();
    let mut seen = Vec::new();
    let limit = 17;
    while seen.len() < limit {
        let batch = c
            .scanner_get_list(id, (limit - seen.len()).min(10) as i32)
            .unwrap();
        if batch.is_empty() {
            break;
        }
        seen.extend(rows_of(&batch));
    }
    c.scanner_close(id).unwrap();
    assert_eq!(seen.len(), 17);
    assert_eq!(seen.first().map(String::as_str), Some("r00"));
    assert_eq!(seen.last().map(String::as_str), Some("r16"));
}

#[test]
fn batch_size_splits_wide_rows_into_several_results() {
    let (mut c, t) = fresh_table("tscan_batch", &["cf"]);
    let cells: Vec<(String, String)> = (0..5)
        .map(|i| (format!("cf:q{i}"), i.to_string()))
        .collect();
    let refs: Vec<(&str, &str)> = cells
        .iter()
        .map(|(a, b)| (a.as_str(), b.as_str()))
        .collect();
    put(&mut c, &t, "wide", &refs);
    put(&mut c, &t, "x", &[("cf:q0", "n")]);
    let id = c
        .scanner_open_with_scan(
            t,
            TScan {
                batch_size: Some(2),
                ..tscan()
            },
            no_attrs(),
        )
        .unwrap();
    let got = drain(&mut c, id, 100);
    assert_eq!(rows_of(&got), vec!["wide", "wide", "wide", "x"]);
    let sizes: Vec<usize> = got.iter().map(|r| columns_of(r).len()).collect();
    assert_eq!(sizes, vec![2, 2, 1, 1]);
    let keys: Vec<String> = got
        .iter()
        .take(3)
        .flat_map(|r| columns_of(r).into_keys())
        .collect();
    assert_eq!(keys, vec!["cf:q0", "cf:q1", "cf:q2", "cf:q3", "cf:q4"]);
}

#[test]
fn sort_columns_fills_only_sorted_columns() {
    let (mut c, t) = four_rows("tscan_sorted");
    let id = c
        .scanner_open_with_scan(
            t.clone(),
            TScan {
                sort_columns: Some(true),
                ..tscan()
            },
            no_attrs(),
        )
        .unwrap();
    let got = drain(&mut c, id, 10);
    assert_eq!(got.len(), 4);
    for r in &got {
        assert!(r.columns.is_none(), "sorted scans fill only sortedColumns");
        let names: Vec<String> = r
            .sorted_columns
            .as_ref()
            .unwrap()
            .iter()
            .map(|c| text(c.column_name.as_deref().unwrap_or_default()))
            .collect();
        assert_eq!(names, vec!["cf:x", "cf:y", "other:z"]);
    }
    let first = &got[0].sorted_columns.as_ref().unwrap()[0];
    assert_eq!(
        first.cell.as_ref().and_then(|c| c.value.as_deref()),
        Some(&b"a"[..])
    );
    let id = c
        .scanner_open_with_scan(
            t,
            TScan {
                sort_columns: Some(false),
                ..tscan()
            },
            no_attrs(),
        )
        .unwrap();
    let got = drain(&mut c, id, 10);
    assert!(got
        .iter()
        .all(|r| r.sorted_columns.is_none() && r.columns.is_some()));
}

#[test]
fn reversed_scans_run_from_start_down_to_stop() {
    let (mut c, t) = four_rows("tscan_reverse");
    assert_eq!(
        scan_rows(
            &mut c,
            &t,
            TScan {
                reversed: Some(true),
                ..tscan()
            }
        ),
        vec!["d", "c", "b", "a"]
    );
    let from_c = TScan {
        reversed: Some(true),
        start_row: Some(b"c".to_vec()),
        ..tscan()
    };
    assert_eq!(scan_rows(&mut c, &t, from_c), vec!["c", "b", "a"]);
    let c_to_a = TScan {
        reversed: Some(true),
        start_row: Some(b"c".to_vec()),
        stop_row: Some(b"a".to_vec()),
        ..tscan()
    };
    assert_eq!(
        scan_rows(&mut c, &t, c_to_a),
        vec!["c", "b"],
        "stop is exclusive in reverse too"
    );
    // happybase's reverse prefix scan: start = prefix incremented, stop = prefix.
    let (mut c2, t2) = fresh_table("tscan_reverse_prefix", &["cf"]);
    for r in ["a", "ba", "bb", "c"] {
        put(&mut c2, &t2, r, &[("cf:x", r)]);
    }
    let prefix = TScan {
        reversed: Some(true),
        start_row: Some(b"c".to_vec()),
        stop_row: Some(b"b".to_vec()),
        ..tscan()
    };
    assert_eq!(scan_rows(&mut c2, &t2, prefix), vec!["c", "bb", "ba"]);
}

#[test]
fn filter_strings_filter_and_bad_ones_are_internal_errors() {
    let (mut c, t) = four_rows("tscan_filter");
    let f = |s: &str| TScan {
        filter_string: Some(s.as_bytes().to_vec()),
        ..tscan()
    };
    assert_eq!(scan_rows(&mut c, &t, f("PrefixFilter('c')")), vec!["c"]);
    assert_eq!(
        scan_rows(&mut c, &t, f("RowFilter(>=, 'binary:c')")),
        vec!["c", "d"]
    );
    assert_eq!(
        scan_rows(
            &mut c,
            &t,
            f("SingleColumnValueFilter('cf', 'x', =, 'binary:b')")
        ),
        vec!["b"]
    );
    let id = c
        .scanner_open_with_scan(t.clone(), f("KeyOnlyFilter()"), no_attrs())
        .unwrap();
    let got = drain(&mut c, id, 10);
    assert!(got
        .iter()
        .all(|r| columns_of(r).values().all(String::is_empty)));

    for bad in [
        "NoSuchFilter()",
        "PrefixFilter('a'",
        "PrefixFilter('a') AND",
    ] {
        let a = app_error(c.scanner_open_with_scan(t.clone(), f(bad), no_attrs()));
        assert_eq!(a.kind, ApplicationErrorKind::InternalError, "{bad}");
        assert!(
            a.message
                .starts_with("Internal error processing scannerOpenWithScan: "),
            "{}",
            a.message
        );
        assert!(
            a.message.len() > "Internal error processing scannerOpenWithScan: ".len(),
            "the message names the problem"
        );
        assert_usable(&mut c);
    }
    let a = app_error(c.scanner_open_with_scan(t, f("NoSuchFilter()"), no_attrs()));
    assert!(a.message.contains("NoSuchFilter"), "{}", a.message);
}

#[test]
fn get_list_returns_up_to_n_and_empty_only_at_the_end() {
    let (mut c, t) = fresh_table("scan_getlist", &["cf"]);
    for i in 0..7 {
        put(&mut c, &t, &format!("r{i}"), &[("cf:x", "v")]);
    }
    let id = c.scanner_open(t, Vec::new(), vec![], no_attrs()).unwrap();
    assert!(
        c.scanner_get_list(id, 0).unwrap().is_empty(),
        "nbRows 0 gives []"
    );
    assert!(
        c.scanner_get_list(id, -4).unwrap().is_empty(),
        "negative nbRows gives []"
    );
    let mut total = 0;
    loop {
        let batch = c.scanner_get_list(id, 3).unwrap();
        assert!(batch.len() <= 3);
        if batch.is_empty() {
            break;
        }
        total += batch.len();
    }
    assert_eq!(total, 7, "nbRows 0 did not consume rows");
    assert!(
        c.scanner_get_list(id, 3).unwrap().is_empty(),
        "still [] after the end"
    );
    assert!(c.scanner_get(id).unwrap().is_empty());
    c.scanner_close(id).unwrap();
}

#[test]
fn scanner_get_returns_one_row_at_a_time() {
    let (mut c, t) = four_rows("scan_get");
    let id = c
        .scanner_open(t, b"c".to_vec(), vec![], no_attrs())
        .unwrap();
    let first = c.scanner_get(id).unwrap();
    assert_eq!(rows_of(&first), vec!["c"]);
    assert_eq!(rows_of(&c.scanner_get(id).unwrap()), vec!["d"]);
    assert!(c.scanner_get(id).unwrap().is_empty());
    c.scanner_close(id).unwrap();
}

#[test]
fn closed_and_unknown_ids_are_illegal_arguments() {
    let (mut c, t) = four_rows("scan_invalid");
    let id = c.scanner_open(t, Vec::new(), vec![], no_attrs()).unwrap();
    c.scanner_close(id).unwrap();
    let invalid = Some("scanner ID is invalid");
    assert_eq!(
        illegal_argument(c.scanner_get(id)).message.as_deref(),
        invalid
    );
    assert_usable(&mut c);
    assert_eq!(
        illegal_argument(c.scanner_get_list(id, 5))
            .message
            .as_deref(),
        invalid
    );
    assert_eq!(
        illegal_argument(c.scanner_close(id)).message.as_deref(),
        invalid
    );
    for unknown in [i32::MAX, -1, 987_654] {
        assert_eq!(
            illegal_argument(c.scanner_get(unknown)).message.as_deref(),
            invalid
        );
        assert_eq!(
            illegal_argument(c.scanner_get_list(unknown, 1))
                .message
                .as_deref(),
            invalid
        );
        assert_eq!(
            illegal_argument(c.scanner_close(unknown))
                .message
                .as_deref(),
            invalid
        );
    }
    assert_usable(&mut c);
}

#[test]
fn opening_scanners_on_missing_tables_or_families_fails() {
    let (mut c, t) = four_rows("scan_open_errors");
    let missing = unique("scan_missing");
    let m = io_message(c.scanner_open(missing.clone(), Vec::new(), vec![], no_attrs()));
    assert_eq!(
        m,
        format!(
            "org.apache.hadoop.hbase.TableNotFoundException: {}",
            text(&missing)
        )
    );
    let m = io_message(c.scanner_open_with_scan(missing, tscan(), no_attrs()));
    assert!(
        m.starts_with("org.apache.hadoop.hbase.TableNotFoundException: "),
        "{m}"
    );
    let m = io_message(c.scanner_open(t.clone(), Vec::new(), vec![b"zz:a".to_vec()], no_attrs()));
    assert!(
        m.starts_with("org.apache.hadoop.hbase.regionserver.NoSuchColumnFamilyException: ")
            && m.contains("zz"),
        "{m}"
    );
    c.disable_table(t.clone()).unwrap();
    let m = io_message(c.scanner_open(t, Vec::new(), vec![], no_attrs()));
    assert!(
        m.starts_with("org.apache.hadoop.hbase.TableNotEnabledException: "),
        "{m}"
    );
    assert_usable(&mut c);
}

#[test]
fn scanner_ids_are_global_across_connections() {
    let (mut a, t) = four_rows("scan_global");
    let mut b = shared().client();
    let id = a.scanner_open(t, Vec::new(), vec![], no_attrs()).unwrap();
    assert_eq!(
        rows_of(&b.scanner_get(id).unwrap()),
        vec!["a"],
        "another connection may use the id"
    );
    assert_eq!(rows_of(&a.scanner_get(id).unwrap()), vec!["b"]);
    b.scanner_close(id).unwrap();
    assert!(illegal_argument(a.scanner_get(id)).message.is_some());
}

#[test]
fn scanner_ids_count_up_from_zero() {
    let server = Tabula::start();
    let mut c = server.client();
    let t = b"ids".to_vec();
    create(&mut c, &t, &["cf"]);
    let ids: Vec<i32> = (0..3)
        .map(|_| {
            c.scanner_open(t.clone(), Vec::new(), vec![], no_attrs())
                .unwrap()
        })
        .collect();
    assert_eq!(ids, vec![0, 1, 2]);
    let mut other = server.client();
    assert_eq!(
        other
            .scanner_open_with_scan(t, tscan(), no_attrs())
            .unwrap(),
        3,
        "ids are shared by all connections"
    );
}

#[test]
fn a_closed_connection_closes_its_scanners() {
    let (mut c, t) = four_rows("scan_connclose");
    let id = {
        let mut opener = shared().client();
        let id = opener
            .scanner_open(t, Vec::new(), vec![], no_attrs())
            .unwrap();
        assert_eq!(rows_of(&opener.scanner_get(id).unwrap()), vec!["a"]);
        id
    };
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    loop {
        match c.scanner_get(id) {
            Err(e) => {
                assert_eq!(
                    illegal_argument::<()>(Err(e)).message.as_deref(),
                    Some("scanner ID is invalid")
                );
                break;
            }
            Ok(_) if std::time::Instant::now() < deadline => {
                std::thread::sleep(Duration::from_millis(50))
            }
            Ok(rows) => panic!("the scanner outlived its connection: {rows:?}"),
        }
    }
}

#[test]
fn idle_scanners_expire_after_the_lease_and_calls_renew_it() {
    let server = Tabula::start_with(&[("TABULA_SCANNER_LEASE_SECS", "1")]);
    let mut c = server.client();
    let t = b"leases".to_vec();
    create(&mut c, &t, &["cf"]);
    for i in 0..20 {
        put(&mut c, &t, &format!("r{i:02}"), &[("cf:x", "v")]);
    }
    let idle = c
        .scanner_open(t.clone(), Vec::new(), vec![], no_attrs())
        .unwrap();
    let busy = c.scanner_open(t, Vec::new(), vec![], no_attrs()).unwrap();
    let mut read = 0;
    for _ in 0..8 {
        std::thread::sleep(Duration::from_millis(400));
        read += c.scanner_get_list(busy, 1).unwrap().len();
    }
    assert_eq!(read, 8, "a scanner used every 400 ms outlives a 1 s lease");
    assert_eq!(
        illegal_argument(c.scanner_get(idle)).message.as_deref(),
        Some("scanner ID is invalid")
    );
    assert_usable(&mut c);
}
