//! Thrift1 point reads against the real `tabula` binary: get, getVer, getVerTs,
//! getRow*, getRows*, getRowOrBefore, with HBase's timestamp and column-string
//! semantics and error answers.

mod common;

use common::*;
use tabula_thrift::hbase::{Mutation, THbaseSyncClient};
use thrift::ApplicationErrorKind;

/// A table `cf1`, `cf2` with versions of `cf1:a` at 10, 20, 30 in row `r`.
fn versioned(prefix: &str) -> (Client, Vec<u8>) {
    let (mut c, t) = fresh_table(prefix, &["cf1", "cf2"]);
    for ts in [10, 20, 30] {
        put_ts(&mut c, &t, "r", &[("cf1:a", &format!("v{ts}"))], ts);
    }
    (c, t)
}

#[test]
fn get_returns_the_latest_version_without_column_names() {
    let (mut c, t) = versioned("get_latest");
    let cells = c
        .get(t, b"r".to_vec(), b"cf1:a".to_vec(), no_attrs())
        .unwrap();
    assert_eq!(cells_of(&cells), vec![("v30".into(), 30)]);
}

#[test]
fn get_of_a_bare_family_returns_each_column_in_order() {
    let (mut c, t) = fresh_table("get_family", &["cf"]);
    put(
        &mut c,
        &t,
        "r",
        &[("cf:b", "2"), ("cf:a", "1"), ("cf:", "empty")],
    );
    let cells = c
        .get(t.clone(), b"r".to_vec(), b"cf".to_vec(), no_attrs())
        .unwrap();
    assert_eq!(
        values_of(&cells),
        vec!["empty", "1", "2"],
        "ordered by qualifier, empty first"
    );
    let only_empty = c
        .get(t, b"r".to_vec(), b"cf:".to_vec(), no_attrs())
        .unwrap();
    assert_eq!(
        values_of(&only_empty),
        vec!["empty"],
        "'cf:' is the empty qualifier, not the family"
    );
}

#[test]
fn qualifiers_may_contain_colons() {
    let (mut c, t) = fresh_table("get_colons", &["cf"]);
    put(&mut c, &t, "r", &[("cf:a:b", "x"), ("cf:a", "y")]);
    let cells = c
        .get(t.clone(), b"r".to_vec(), b"cf:a:b".to_vec(), no_attrs())
        .unwrap();
    assert_eq!(values_of(&cells), vec!["x"]);
    let row = c.get_row(t, b"r".to_vec(), no_attrs()).unwrap();
    let cols = columns_of(&row[0]);
    assert_eq!(cols.get("cf:a:b").map(String::as_str), Some("x"));
    assert_eq!(cols.get("cf:a").map(String::as_str), Some("y"));
}

#[test]
fn get_of_missing_rows_and_columns_is_empty() {
    let (mut c, t) = versioned("get_missing");
    assert!(c
        .get(t.clone(), b"nope".to_vec(), b"cf1:a".to_vec(), no_attrs())
        .unwrap()
        .is_empty());
    assert!(c
        .get(t.clone(), b"r".to_vec(), b"cf1:zz".to_vec(), no_attrs())
        .unwrap()
        .is_empty());
    assert!(c
        .get(t, b"r".to_vec(), b"cf2".to_vec(), no_attrs())
        .unwrap()
        .is_empty());
}

#[test]
fn reads_of_unknown_families_and_tables_are_io_errors() {
    let (mut c, t) = versioned("get_errors");
    let e = io_error(c.get(t.clone(), b"r".to_vec(), b"zz:a".to_vec(), no_attrs()));
    let m = e.message.unwrap_or_default();
    assert!(
        m.starts_with("org.apache.hadoop.hbase.regionserver.NoSuchColumnFamilyException: "),
        "{m}"
    );
    assert!(m.contains("zz"), "{m}");
    assert_eq!(e.can_retry, Some(false));
    assert_usable(&mut c);
    let m = io_message(c.get_row_with_columns(t, b"r".to_vec(), vec![b"zz".to_vec()], no_attrs()));
    assert!(
        m.starts_with("org.apache.hadoop.hbase.regionserver.NoSuchColumnFamilyException: "),
        "{m}"
    );
    let missing = unique("get_notable");
    let m = io_message(c.get(missing.clone(), b"r".to_vec(), b"cf:a".to_vec(), no_attrs()));
    assert_eq!(
        m,
        format!(
            "org.apache.hadoop.hbase.TableNotFoundException: {}",
            text(&missing)
        )
    );
    let m = io_message(c.get_rows(missing, vec![b"r".to_vec()], no_attrs()));
    assert!(
        m.starts_with("org.apache.hadoop.hbase.TableNotFoundException: "),
        "{m}"
    );
    assert_usable(&mut c);
}

#[test]
fn get_ver_returns_newest_first_up_to_the_count() {
    let (mut c, t) = versioned("getver");
    let two = c
        .get_ver(t.clone(), b"r".to_vec(), b"cf1:a".to_vec(), 2, no_attrs())
        .unwrap();
    assert_eq!(cells_of(&two), vec![("v30".into(), 30), ("v20".into(), 20)]);
    let all = c
        .get_ver(
            t.clone(),
            b"r".to_vec(),
            b"cf1:a".to_vec(),
            i32::MAX,
            no_attrs(),
        )
        .unwrap();
    assert_eq!(
        cells_of(&all),
        vec![("v30".into(), 30), ("v20".into(), 20), ("v10".into(), 10)]
    );
    let fam = c
        .get_ver(t, b"r".to_vec(), b"cf1".to_vec(), 5, no_attrs())
        .unwrap();
    assert_eq!(fam.len(), 3);
}

#[test]
fn get_ver_with_no_versions_is_an_internal_error() {
    let (mut c, t) = versioned("getver_zero");
    let a = app_error(c.get_ver(t.clone(), b"r".to_vec(), b"cf1:a".to_vec(), 0, no_attrs()));
    assert_eq!(a.kind, ApplicationErrorKind::InternalError);
    assert!(
        a.message.starts_with("Internal error processing getVer"),
        "{}",
        a.message
    );
    assert!(a.message.contains("numVersions"), "{}", a.message);
    assert_usable(&mut c);
    let a = app_error(c.get_ver_ts(t, b"r".to_vec(), b"cf1:a".to_vec(), 100, -3, no_attrs()));
    assert_eq!(a.kind, ApplicationErrorKind::InternalError);
    assert_usable(&mut c);
}

#[test]
fn get_ver_ts_reads_before_the_timestamp_exclusively() {
    let (mut c, t) = versioned("getverts");
    let at = |c: &mut Client, ts: i64| {
        cells_of(
            &c.get_ver_ts(
                t.clone(),
                b"r".to_vec(),
                b"cf1:a".to_vec(),
                ts,
                10,
                no_attrs(),
            )
            .unwrap(),
        )
    };
    assert_eq!(
        at(&mut c, 30),
        vec![("v20".into(), 20), ("v10".into(), 10)],
        "30 itself is excluded"
    );
    assert_eq!(
        at(&mut c, 31),
        vec![("v30".into(), 30), ("v20".into(), 20), ("v10".into(), 10)]
    );
    assert_eq!(at(&mut c, 10), vec![]);
    assert_eq!(at(&mut c, 0), vec![]);
    let one = c
        .get_ver_ts(t, b"r".to_vec(), b"cf1:a".to_vec(), 25, 1, no_attrs())
        .unwrap();
    assert_eq!(cells_of(&one), vec![("v20".into(), 20)]);
}

#[test]
fn negative_read_timestamps_are_internal_errors() {
    let (mut c, t) = versioned("get_negts");
    let a = app_error(c.get_row_ts(t, b"r".to_vec(), -1, no_attrs()));
    assert_eq!(a.kind, ApplicationErrorKind::InternalError);
    assert!(a.message.contains("-1"), "{}", a.message);
    assert_usable(&mut c);
}

#[test]
fn get_row_returns_every_family_in_the_columns_map() {
    let (mut c, t) = fresh_table("getrow", &["cf1", "cf2"]);
    put_ts(&mut c, &t, "r", &[("cf1:a", "old")], 5);
    put(
        &mut c,
        &t,
        "r",
        &[("cf1:a", "1"), ("cf1:b", "2"), ("cf2:c", "3")],
    );
    let rows = c.get_row(t, b"r".to_vec(), no_attrs()).unwrap();
    assert_eq!(rows.len(), 1);
    assert_eq!(rows[0].row.as_deref(), Some(&b"r"[..]));
    assert!(rows[0].sorted_columns.is_none(), "gets fill only `columns`");
    let cols = columns_of(&rows[0]);
    assert_eq!(
        cols.into_iter().collect::<Vec<_>>(),
        vec![
            ("cf1:a".into(), "1".into()),
            ("cf1:b".into(), "2".into()),
            ("cf2:c".into(), "3".into())
        ],
        "one version per column, the latest"
    );
}

#[test]
fn get_row_of_a_missing_row_is_an_empty_list() {
    let (mut c, t) = fresh_table("getrow_missing", &["cf"]);
    assert!(c
        .get_row(t.clone(), b"nope".to_vec(), no_attrs())
        .unwrap()
        .is_empty());
    assert!(c
        .get_row_with_columns(t, b"nope".to_vec(), vec![b"cf".to_vec()], no_attrs())
        .unwrap()
        .is_empty());
}

#[test]
fn get_row_with_columns_selects_columns_and_families() {
    let (mut c, t) = fresh_table("getrow_cols", &["cf1", "cf2"]);
    put(
        &mut c,
        &t,
        "r",
        &[
            ("cf1:a", "1"),
            ("cf1:b", "2"),
            ("cf2:c", "3"),
            ("cf2:d", "4"),
        ],
    );
    let rows = c
        .get_row_with_columns(
            t.clone(),
            b"r".to_vec(),
            vec![b"cf1:a".to_vec(), b"cf2".to_vec()],
            no_attrs(),
        )
        .unwrap();
    let cols: Vec<String> = columns_of(&rows[0]).into_keys().collect();
    assert_eq!(cols, vec!["cf1:a", "cf2:c", "cf2:d"]);
    let none = c
        .get_row_with_columns(
            t.clone(),
            b"r".to_vec(),
            vec![b"cf1:zz".to_vec()],
            no_attrs(),
        )
        .unwrap();
    assert!(
        none.is_empty(),
        "a row without the asked columns is omitted"
    );
    let all = c
        .get_row_with_columns(t, b"r".to_vec(), vec![], no_attrs())
        .unwrap();
    assert_eq!(columns_of(&all[0]).len(), 4, "no columns = every family");
}

#[test]
fn ts_reads_see_only_older_cells() {
    // happybase's test: a cell at 1234 is seen by timestamp=2345, not by 123.
    let (mut c, t) = fresh_table("getrow_ts", &["cf"]);
    put_ts(&mut c, &t, "r", &[("cf:a", "x")], 1234);
    put_ts(&mut c, &t, "r", &[("cf:a", "y")], 3000);
    let at = |c: &mut Client, ts: i64| {
        c.get_row_ts(t.clone(), b"r".to_vec(), ts, no_attrs())
            .unwrap()
            .iter()
            .map(columns_ts_of)
            .collect::<Vec<_>>()
    };
    assert_eq!(
        at(&mut c, 2345),
        vec![[("cf:a".to_string(), ("x".to_string(), 1234))].into()]
    );
    assert!(at(&mut c, 123).is_empty());
    assert!(at(&mut c, 1234).is_empty(), "the bound is exclusive");
    assert_eq!(at(&mut c, 1235).len(), 1);
    let with_cols = c
        .get_row_with_columns_ts(
            t.clone(),
            b"r".to_vec(),
            vec![b"cf:a".to_vec()],
            3001,
            no_attrs(),
        )
        .unwrap();
    assert_eq!(
        columns_ts_of(&with_cols[0])["cf:a"],
        ("y".to_string(), 3000)
    );
    let before = c
        .get_row_with_columns_ts(t, b"r".to_vec(), vec![b"cf".to_vec()], 3000, no_attrs())
        .unwrap();
    assert_eq!(columns_ts_of(&before[0])["cf:a"], ("x".to_string(), 1234));
}

#[test]
fn get_rows_keeps_request_order_and_duplicates_and_omits_missing_rows() {
    let (mut c, t) = fresh_table("getrows", &["cf"]);
    for r in ["r1", "r2", "r3"] {
        put(&mut c, &t, r, &[("cf:a", r)]);
    }
    let rows = vec![
        b"r3".to_vec(),
        b"missing".to_vec(),
        b"r1".to_vec(),
        b"r3".to_vec(),
    ];
    let got = c.get_rows(t.clone(), rows.clone(), no_attrs()).unwrap();
    assert_eq!(rows_of(&got), vec!["r3", "r1", "r3"]);
    assert_eq!(columns_of(&got[1])["cf:a"], "r1");
    let got = c
        .get_rows_with_columns(t.clone(), rows, vec![b"cf:a".to_vec()], no_attrs())
        .unwrap();
    assert_eq!(rows_of(&got), vec!["r3", "r1", "r3"]);
    assert!(c.get_rows(t, vec![], no_attrs()).unwrap().is_empty());
}

#[test]
fn get_rows_ts_variants_use_the_exclusive_bound() {
    let (mut c, t) = fresh_table("getrows_ts", &["cf"]);
    put_ts(&mut c, &t, "r1", &[("cf:a", "old")], 100);
    put_ts(&mut c, &t, "r1", &[("cf:a", "new")], 200);
    put_ts(&mut c, &t, "r2", &[("cf:a", "late")], 300);
    let rows = vec![b"r1".to_vec(), b"r2".to_vec()];
    let got = c
        .get_rows_ts(t.clone(), rows.clone(), 200, no_attrs())
        .unwrap();
    assert_eq!(rows_of(&got), vec!["r1"]);
    assert_eq!(columns_of(&got[0])["cf:a"], "old");
    // happybase's rows(timestamp=...) sends bare family names.
    let got = c
        .get_rows_with_columns_ts(t, rows, vec![b"cf".to_vec()], 301, no_attrs())
        .unwrap();
    assert_eq!(rows_of(&got), vec!["r1", "r2"]);
    assert_eq!(columns_of(&got[0])["cf:a"], "new");
}

#[test]
fn unset_put_values_read_back_empty() {
    let (mut c, t) = fresh_table("get_unset", &["cf"]);
    let m = Mutation::new(false, b"cf:a".to_vec(), None, true);
    c.mutate_row(t.clone(), b"r".to_vec(), vec![m], no_attrs())
        .unwrap();
    let cells = c
        .get(t, b"r".to_vec(), b"cf:a".to_vec(), no_attrs())
        .unwrap();
    assert_eq!(values_of(&cells), vec![""]);
}

#[test]
fn binary_keys_and_values_round_trip() {
    let (mut c, t) = fresh_table("get_binary", &["cf"]);
    let row = vec![0u8, 0xff, b':', 0x80];
    let value = vec![0xffu8, 0, 1, 2, 0xfe];
    let mut qualifier = b"cf:".to_vec();
    qualifier.extend_from_slice(&[0xc3, 0x28, 0]);
    c.mutate_row(
        t.clone(),
        row.clone(),
        vec![Mutation::new(false, qualifier.clone(), value.clone(), true)],
        no_attrs(),
    )
    .unwrap();
    let cells = c
        .get(t.clone(), row.clone(), qualifier.clone(), no_attrs())
        .unwrap();
    assert_eq!(cells[0].value.as_deref(), Some(value.as_slice()));
    let rows = c.get_row(t, row.clone(), no_attrs()).unwrap();
    assert_eq!(rows[0].row.as_deref(), Some(row.as_slice()));
    assert!(rows[0].columns.as_ref().unwrap().contains_key(&qualifier));
}

#[test]
fn over_long_row_keys_are_io_errors_naming_the_limit() {
    let (mut c, t) = fresh_table("get_longrow", &["cf"]);
    let row = vec![b'x'; 65_537];
    let m = io_message(c.get(t.clone(), row.clone(), b"cf:a".to_vec(), no_attrs()));
    assert!(m.contains("65536"), "{m}");
    let m = io_message(c.get_rows(t, vec![b"ok".to_vec(), row], no_attrs()));
    assert!(m.contains("65536"), "{m}");
    assert_usable(&mut c);
}

#[test]
fn get_row_or_before_finds_the_row_at_or_before() {
    let (mut c, t) = fresh_table("rowbefore", &["cf", "other"]);
    put(&mut c, &t, "a", &[("cf:x", "1"), ("other:y", "o")]);
    put(&mut c, &t, "c", &[("cf:x", "3")]);
    let at = |c: &mut Client, row: &str, fam: &str| {
        values_of(
            &c.get_row_or_before(t.clone(), row.as_bytes().to_vec(), fam.as_bytes().to_vec())
                .unwrap(),
        )
    };
    assert_eq!(at(&mut c, "b", "cf"), vec!["1"]);
    assert_eq!(at(&mut c, "c", "cf"), vec!["3"]);
    assert_eq!(at(&mut c, "zzz", "cf"), vec!["3"]);
    assert_eq!(at(&mut c, "a", "other"), vec!["o"]);
    assert_eq!(at(&mut c, "0", "cf"), Vec::<String>::new());
    let m =
        io_message(c.get_row_or_before(unique("rowbefore_missing"), b"a".to_vec(), b"cf".to_vec()));
    assert!(
        m.starts_with("org.apache.hadoop.hbase.TableNotFoundException: "),
        "{m}"
    );
    assert_usable(&mut c);
}
