//! Thrift1 writes against the real `tabula` binary: mutateRow(s)(Ts), deleteAll*,
//! atomicIncrement, increment(Rows), append and checkAndPut, with HBase's timestamp
//! rules, column-string rules, validation and error answers.

mod common;

use common::*;
use tabula_thrift::hbase::{BatchMutation, Mutation, TAppend, THbaseSyncClient, TIncrement};
use thrift::ApplicationErrorKind;

fn row_cols(c: &mut Client, t: &[u8], row: &str) -> Vec<(String, String)> {
    c.get_row(t.to_vec(), row.as_bytes().to_vec(), no_attrs())
        .unwrap()
        .first()
        .map(|r| columns_of(r).into_iter().collect())
        .unwrap_or_default()
}

fn versions(c: &mut Client, t: &[u8], row: &str, col: &str) -> Vec<(String, i64)> {
    cells_of(
        &c.get_ver(
            t.to_vec(),
            row.as_bytes().to_vec(),
            col.as_bytes().to_vec(),
            100,
            no_attrs(),
        )
        .unwrap(),
    )
}

fn kv(k: &str, v: &str) -> (String, String) {
    (k.to_string(), v.to_string())
}

#[test]
fn mutate_row_puts_and_deletes() {
    let (mut c, t) = fresh_table("mutaterow", &["cf1", "cf2"]);
    c.mutate_row(
        t.clone(),
        b"r".to_vec(),
        vec![
            put_m("cf1:a", b"1"),
            put_m("cf1:b", b"2"),
            put_m("cf2:c", b"3"),
        ],
        no_attrs(),
    )
    .unwrap();
    assert_eq!(
        row_cols(&mut c, &t, "r"),
        vec![kv("cf1:a", "1"), kv("cf1:b", "2"), kv("cf2:c", "3")]
    );
    c.mutate_row(
        t.clone(),
        b"r".to_vec(),
        vec![delete_m("cf1:a")],
        no_attrs(),
    )
    .unwrap();
    assert_eq!(
        row_cols(&mut c, &t, "r"),
        vec![kv("cf1:b", "2"), kv("cf2:c", "3")]
    );
    c.mutate_row(t.clone(), b"r".to_vec(), vec![delete_m("cf2")], no_attrs())
        .unwrap();
    assert_eq!(row_cols(&mut c, &t, "r"), vec![kv("cf1:b", "2")]);
    c.mutate_row(t.clone(), b"r".to_vec(), vec![], no_attrs())
        .unwrap();
    assert_eq!(row_cols(&mut c, &t, "r"), vec![kv("cf1:b", "2")]);
}

#[test]
fn mutate_row_skips_puts_to_a_bare_family() {
    let (mut c, t) = fresh_table("mutaterow_bare", &["cf"]);
    c.mutate_row(
        t.clone(),
        b"r".to_vec(),
        vec![put_m("cf", b"ignored"), put_m("cf:a", b"kept")],
        no_attrs(),
    )
    .unwrap();
    assert_eq!(row_cols(&mut c, &t, "r"), vec![kv("cf:a", "kept")]);
    c.mutate_row(
        t.clone(),
        b"only".to_vec(),
        vec![put_m("cf", b"ignored")],
        no_attrs(),
    )
    .unwrap();
    assert!(row_cols(&mut c, &t, "only").is_empty());
}

#[test]
fn mutate_rows_rejects_puts_to_a_bare_family_before_writing() {
    let (mut c, t) = fresh_table("mutaterows_bare", &["cf"]);
    let batches = vec![
        BatchMutation::new(b"good".to_vec(), vec![put_m("cf:a", b"1")]),
        BatchMutation::new(b"bad".to_vec(), vec![put_m("cf", b"1")]),
    ];
    let a = app_error(c.mutate_rows(t.clone(), batches, no_attrs()));
    assert_eq!(a.kind, ApplicationErrorKind::InternalError);
    assert!(
        a.message
            .starts_with("Internal error processing mutateRows"),
        "{}",
        a.message
    );
    assert_usable(&mut c);
    assert!(
        row_cols(&mut c, &t, "good").is_empty(),
        "nothing is written when a row is invalid"
    );
}

#[test]
fn mutate_rows_writes_every_row() {
    let (mut c, t) = fresh_table("mutaterows", &["cf"]);
    let batches = (0..5)
        .map(|i| {
            BatchMutation::new(
                format!("r{i}").into_bytes(),
                vec![put_m("cf:a", i.to_string().as_bytes()), put_m("cf:", b"e")],
            )
        })
        .collect();
    c.mutate_rows(t.clone(), batches, no_attrs()).unwrap();
    for i in 0..5 {
        assert_eq!(
            row_cols(&mut c, &t, &format!("r{i}")),
            vec![kv("cf:", "e"), kv("cf:a", &i.to_string())]
        );
    }
    c.mutate_rows(
        t.clone(),
        vec![BatchMutation::new(b"r0".to_vec(), vec![delete_m("cf")])],
        no_attrs(),
    )
    .unwrap();
    assert!(
        row_cols(&mut c, &t, "r0").is_empty(),
        "happybase deletes a row with bare family names"
    );
}

#[test]
fn a_delete_and_a_put_of_one_column_in_one_call_leave_it_deleted() {
    let (mut c, t) = fresh_table("mutate_delput", &["cf"]);
    put_ts(&mut c, &t, "r", &[("cf:a", "old")], 10);
    let batch = BatchMutation::new(b"r".to_vec(), vec![put_m("cf:a", b"new"), delete_m("cf:a")]);
    c.mutate_rows_ts(t.clone(), vec![batch], 20, no_attrs())
        .unwrap();
    assert!(
        versions(&mut c, &t, "r", "cf:a").is_empty(),
        "the inclusive delete at 20 covers the put at 20"
    );
}

#[test]
fn ts_writes_put_at_the_timestamp_and_delete_up_to_it() {
    let (mut c, t) = fresh_table("mutate_ts", &["cf"]);
    c.mutate_row_ts(
        t.clone(),
        b"r".to_vec(),
        vec![put_m("cf:a", b"five")],
        5,
        no_attrs(),
    )
    .unwrap();
    c.mutate_row_ts(
        t.clone(),
        b"r".to_vec(),
        vec![put_m("cf:a", b"ten")],
        10,
        no_attrs(),
    )
    .unwrap();
    assert_eq!(
        versions(&mut c, &t, "r", "cf:a"),
        vec![("ten".into(), 10), ("five".into(), 5)]
    );
    c.mutate_row_ts(
        t.clone(),
        b"r".to_vec(),
        vec![delete_m("cf:a")],
        7,
        no_attrs(),
    )
    .unwrap();
    assert_eq!(versions(&mut c, &t, "r", "cf:a"), vec![("ten".into(), 10)]);
    c.mutate_row_ts(
        t.clone(),
        b"r".to_vec(),
        vec![delete_m("cf:a")],
        10,
        no_attrs(),
    )
    .unwrap();
    assert!(
        versions(&mut c, &t, "r", "cf:a").is_empty(),
        "deletes are inclusive"
    );

    let batches = vec![BatchMutation::new(
        b"s".to_vec(),
        vec![put_m("cf:a", b"x"), put_m("cf:b", b"y")],
    )];
    c.mutate_rows_ts(t.clone(), batches, 42, no_attrs())
        .unwrap();
    assert_eq!(versions(&mut c, &t, "s", "cf:a"), vec![("x".into(), 42)]);
    c.mutate_rows_ts(
        t.clone(),
        vec![BatchMutation::new(b"s".to_vec(), vec![delete_m("cf")])],
        41,
        no_attrs(),
    )
    .unwrap();
    assert_eq!(
        versions(&mut c, &t, "s", "cf:b"),
        vec![("y".into(), 42)],
        "a family delete at 41 spares 42"
    );
}

#[test]
fn server_time_puts_get_a_current_timestamp() {
    let (mut c, t) = fresh_table("mutate_now", &["cf"]);
    let before = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_millis() as i64;
    put(&mut c, &t, "r", &[("cf:a", "v")]);
    let ts = versions(&mut c, &t, "r", "cf:a")[0].1;
    assert!(
        ts >= before - 1000 && ts < before + 60_000,
        "timestamp {ts} is not server time near {before}"
    );
}

#[test]
fn negative_write_timestamps_are_refused() {
    let (mut c, t) = fresh_table("mutate_negts", &["cf"]);
    let ia = illegal_argument(c.mutate_row_ts(
        t.clone(),
        b"r".to_vec(),
        vec![put_m("cf:a", b"v")],
        -5,
        no_attrs(),
    ));
    assert!(ia.message.unwrap_or_default().contains("negative"));
    let a = app_error(c.mutate_rows_ts(
        t.clone(),
        vec![BatchMutation::new(b"r".to_vec(), vec![put_m("cf:a", b"v")])],
        -5,
        no_attrs(),
    ));
    assert_eq!(a.kind, ApplicationErrorKind::InternalError);
    let a = app_error(c.delete_all_ts(t.clone(), b"r".to_vec(), b"cf:a".to_vec(), -5, no_attrs()));
    assert_eq!(a.kind, ApplicationErrorKind::InternalError);
    assert_usable(&mut c);
    assert!(row_cols(&mut c, &t, "r").is_empty());
}

#[test]
fn write_to_wal_false_is_accepted() {
    let (mut c, t) = fresh_table("mutate_nowal", &["cf"]);
    let m = Mutation::new(false, b"cf:a".to_vec(), b"v".to_vec(), false);
    c.mutate_rows(
        t.clone(),
        vec![BatchMutation::new(b"r".to_vec(), vec![m])],
        no_attrs(),
    )
    .unwrap();
    assert_eq!(row_cols(&mut c, &t, "r"), vec![kv("cf:a", "v")]);
}

#[test]
fn writes_to_unknown_families_tables_and_disabled_tables_fail() {
    let (mut c, t) = fresh_table("mutate_errors", &["cf"]);
    let e = io_error(c.mutate_row(
        t.clone(),
        b"r".to_vec(),
        vec![put_m("zz:a", b"v")],
        no_attrs(),
    ));
    let m = e.message.unwrap_or_default();
    assert!(
        m.starts_with("org.apache.hadoop.hbase.regionserver.NoSuchColumnFamilyException: ")
            && m.contains("zz"),
        "{m}"
    );
    assert_usable(&mut c);
    let m = io_message(c.mutate_rows(
        t.clone(),
        vec![BatchMutation::new(b"r".to_vec(), vec![put_m("zz:a", b"v")])],
        no_attrs(),
    ));
    assert!(
        m.starts_with("org.apache.hadoop.hbase.regionserver.NoSuchColumnFamilyException: "),
        "{m}"
    );
    let missing = unique("mutate_notable");
    let m = io_message(c.mutate_row(
        missing.clone(),
        b"r".to_vec(),
        vec![put_m("cf:a", b"v")],
        no_attrs(),
    ));
    assert_eq!(
        m,
        format!(
            "org.apache.hadoop.hbase.TableNotFoundException: {}",
            text(&missing)
        )
    );
    let m = io_message(c.delete_all_row(missing, b"r".to_vec(), no_attrs()));
    assert!(
        m.starts_with("org.apache.hadoop.hbase.TableNotFoundException: "),
        "{m}"
    );
    c.disable_table(t.clone()).unwrap();
    let m = io_message(c.mutate_rows(
        t.clone(),
        vec![BatchMutation::new(b"r".to_vec(), vec![put_m("cf:a", b"v")])],
        no_attrs(),
    ));
    assert!(
        m.starts_with("org.apache.hadoop.hbase.TableNotEnabledException: "),
        "{m}"
    );
    assert_usable(&mut c);
}

#[test]
fn mutate_rows_writes_the_good_rows_and_reports_the_bad_one() {
    let (mut c, t) = fresh_table("mutaterows_partial", &["cf"]);
    let batches = vec![
        BatchMutation::new(b"a".to_vec(), vec![put_m("cf:x", b"1")]),
        BatchMutation::new(b"b".to_vec(), vec![put_m("nope:x", b"1")]),
        BatchMutation::new(b"c".to_vec(), vec![put_m("cf:x", b"3")]),
    ];
    let m = io_message(c.mutate_rows(t.clone(), batches, no_attrs()));
    assert!(
        m.contains("NoSuchColumnFamilyException") && m.contains("1 of 3 rows failed"),
        "{m}"
    );
    assert_eq!(row_cols(&mut c, &t, "a"), vec![kv("cf:x", "1")]);
    assert_eq!(row_cols(&mut c, &t, "c"), vec![kv("cf:x", "3")]);
}

#[test]
fn delete_all_removes_columns_or_families_up_to_the_timestamp() {
    let (mut c, t) = fresh_table("deleteall", &["cf1", "cf2"]);
    for ts in [10, 11] {
        put_ts(
            &mut c,
            &t,
            "r",
            &[("cf1:a", &format!("a{ts}")), ("cf1:b", "b"), ("cf2:c", "c")],
            ts,
        );
    }
    c.delete_all_ts(t.clone(), b"r".to_vec(), b"cf1:a".to_vec(), 10, no_attrs())
        .unwrap();
    assert_eq!(
        versions(&mut c, &t, "r", "cf1:a"),
        vec![("a11".into(), 11)],
        "inclusive at 10, 11 survives"
    );
    c.delete_all(t.clone(), b"r".to_vec(), b"cf1:a".to_vec(), no_attrs())
        .unwrap();
    assert!(versions(&mut c, &t, "r", "cf1:a").is_empty());
    c.delete_all(t.clone(), b"r".to_vec(), b"cf2".to_vec(), no_attrs())
        .unwrap();
    assert_eq!(row_cols(&mut c, &t, "r"), vec![kv("cf1:b", "b")]);
    c.delete_all_ts(t.clone(), b"r".to_vec(), b"cf1".to_vec(), 10, no_attrs())
        .unwrap();
    assert_eq!(versions(&mut c, &t, "r", "cf1:b"), vec![("b".into(), 11)]);
    let m = io_message(c.delete_all(t, b"r".to_vec(), b"zz:a".to_vec(), no_attrs()));
    assert!(
        m.starts_with("org.apache.hadoop.hbase.regionserver.NoSuchColumnFamilyException: "),
        "{m}"
    );
}

#[test]
fn delete_all_row_removes_every_family() {
    let (mut c, t) = fresh_table("deleteallrow", &["cf1", "cf2"]);
    put_ts(&mut c, &t, "r", &[("cf1:a", "1"), ("cf2:b", "2")], 100);
    put_ts(&mut c, &t, "r", &[("cf1:a", "late")], 200);
    c.delete_all_row_ts(t.clone(), b"r".to_vec(), 150, no_attrs())
        .unwrap();
    assert_eq!(row_cols(&mut c, &t, "r"), vec![kv("cf1:a", "late")]);
    c.delete_all_row(t.clone(), b"r".to_vec(), no_attrs())
        .unwrap();
    assert!(c.get_row(t, b"r".to_vec(), no_attrs()).unwrap().is_empty());
}

#[test]
fn atomic_increment_counts_in_eight_big_endian_bytes() {
    let (mut c, t) = fresh_table("counter", &["cf"]);
    assert_eq!(
        c.atomic_increment(t.clone(), b"r".to_vec(), b"cf:n".to_vec(), 5)
            .unwrap(),
        5
    );
    assert_eq!(
        c.atomic_increment(t.clone(), b"r".to_vec(), b"cf:n".to_vec(), 3)
            .unwrap(),
        8
    );
    assert_eq!(
        c.atomic_increment(t.clone(), b"r".to_vec(), b"cf:n".to_vec(), -10)
            .unwrap(),
        -2
    );
    let cells = c
        .get(t.clone(), b"r".to_vec(), b"cf:n".to_vec(), no_attrs())
        .unwrap();
    assert_eq!(cells[0].value.as_deref(), Some(&(-2i64).to_be_bytes()[..]));
    // happybase's counter_set writes the 8 bytes with a put.
    c.mutate_rows(
        t.clone(),
        vec![BatchMutation::new(
            b"r".to_vec(),
            vec![put_m("cf:n", &100i64.to_be_bytes())],
        )],
        no_attrs(),
    )
    .unwrap();
    assert_eq!(
        c.atomic_increment(t, b"r".to_vec(), b"cf:n".to_vec(), 1)
            .unwrap(),
        101
    );
}

#[test]
fn incrementing_by_zero_reads_without_writing() {
    let (mut c, t) = fresh_table("counter_zero", &["cf"]);
    assert_eq!(
        c.atomic_increment(t.clone(), b"r".to_vec(), b"cf:n".to_vec(), 0)
            .unwrap(),
        0
    );
    assert!(
        c.get(t.clone(), b"r".to_vec(), b"cf:n".to_vec(), no_attrs())
            .unwrap()
            .is_empty(),
        "counter_get must not create the cell"
    );
    c.atomic_increment(t.clone(), b"r".to_vec(), b"cf:n".to_vec(), 7)
        .unwrap();
    let before = versions(&mut c, &t, "r", "cf:n");
    assert_eq!(
        c.atomic_increment(t.clone(), b"r".to_vec(), b"cf:n".to_vec(), 0)
            .unwrap(),
        7
    );
    assert_eq!(versions(&mut c, &t, "r", "cf:n"), before, "no new version");
}

#[test]
fn a_bare_family_counter_uses_the_empty_qualifier() {
    let (mut c, t) = fresh_table("counter_bare", &["cf"]);
    assert_eq!(
        c.atomic_increment(t.clone(), b"r".to_vec(), b"cf".to_vec(), 4)
            .unwrap(),
        4
    );
    let cells = c
        .get(t, b"r".to_vec(), b"cf:".to_vec(), no_attrs())
        .unwrap();
    assert_eq!(cells[0].value.as_deref(), Some(&4i64.to_be_bytes()[..]));
}

#[test]
fn incrementing_a_non_counter_is_an_io_error() {
    let (mut c, t) = fresh_table("counter_bad", &["cf"]);
    put(&mut c, &t, "r", &[("cf:s", "abc")]);
    let e = io_error(c.atomic_increment(t.clone(), b"r".to_vec(), b"cf:s".to_vec(), 1));
    let m = e.message.unwrap_or_default();
    assert!(
        m.starts_with("org.apache.hadoop.hbase.DoNotRetryIOException: "),
        "{m}"
    );
    assert_eq!(e.can_retry, Some(false));
    assert_usable(&mut c);
    let m = io_message(c.atomic_increment(t.clone(), b"r".to_vec(), b"zz:s".to_vec(), 1));
    assert!(
        m.starts_with("org.apache.hadoop.hbase.regionserver.NoSuchColumnFamilyException: "),
        "{m}"
    );
    assert_eq!(
        values_of(
            &c.get(t, b"r".to_vec(), b"cf:s".to_vec(), no_attrs())
                .unwrap()
        ),
        vec!["abc"]
    );
}

#[test]
fn increment_and_increment_rows_add_amounts() {
    let (mut c, t) = fresh_table("tincrement", &["cf"]);
    c.increment(TIncrement::new(
        t.clone(),
        b"r".to_vec(),
        b"cf:n".to_vec(),
        2,
    ))
    .unwrap();
    c.increment_rows(vec![
        TIncrement::new(t.clone(), b"r".to_vec(), b"cf:n".to_vec(), 3),
        TIncrement::new(t.clone(), b"s".to_vec(), b"cf:m".to_vec(), -1),
    ])
    .unwrap();
    assert_eq!(
        c.atomic_increment(t.clone(), b"r".to_vec(), b"cf:n".to_vec(), 0)
            .unwrap(),
        5
    );
    assert_eq!(
        c.atomic_increment(t, b"s".to_vec(), b"cf:m".to_vec(), 0)
            .unwrap(),
        -1
    );
}

#[test]
fn increment_needs_a_table_a_row_and_a_qualified_column() {
    let (mut c, t) = fresh_table("tincrement_bad", &["cf"]);
    for (inc, what) in [
        (
            TIncrement::new(t.clone(), b"r".to_vec(), b"cf".to_vec(), 1),
            "qualifier",
        ),
        (
            TIncrement::new(t.clone(), Vec::new(), b"cf:n".to_vec(), 1),
            "row key",
        ),
        (
            TIncrement::new(Vec::new(), b"r".to_vec(), b"cf:n".to_vec(), 1),
            "table",
        ),
    ] {
        let a = app_error(c.increment(inc));
        assert_eq!(a.kind, ApplicationErrorKind::InternalError, "{what}");
        assert!(
            a.message.starts_with("Internal error processing increment"),
            "{}",
            a.message
        );
        assert!(a.message.contains(what), "{}", a.message);
        assert_usable(&mut c);
    }
    let m = io_message(c.increment(TIncrement::new(
        unique("tinc_missing"),
        b"r".to_vec(),
        b"cf:n".to_vec(),
        1,
    )));
    assert!(
        m.starts_with("org.apache.hadoop.hbase.TableNotFoundException: "),
        "{m}"
    );
}

#[test]
fn append_extends_values_and_returns_the_new_cells() {
    let (mut c, t) = fresh_table("append", &["cf"]);
    put(&mut c, &t, "r", &[("cf:a", "abc")]);
    let cells = c
        .append(TAppend::new(
            t.clone(),
            b"r".to_vec(),
            vec![b"cf:b".to_vec(), b"cf:a".to_vec()],
            vec![b"new".to_vec(), b"def".to_vec()],
        ))
        .unwrap();
    assert_eq!(
        values_of(&cells),
        vec!["abcdef", "new"],
        "cells come back in column order"
    );
    assert_eq!(
        row_cols(&mut c, &t, "r"),
        vec![kv("cf:a", "abcdef"), kv("cf:b", "new")]
    );
}

#[test]
fn malformed_appends_are_internal_errors() {
    let (mut c, t) = fresh_table("append_bad", &["cf"]);
    for (a, what) in [
        (
            TAppend::new(t.clone(), b"r".to_vec(), vec![b"cf:a".to_vec()], vec![]),
            "Sizes of columns and values",
        ),
        (
            TAppend::new(
                t.clone(),
                b"r".to_vec(),
                vec![b"cf".to_vec()],
                vec![b"x".to_vec()],
            ),
            "qualifier",
        ),
        (
            TAppend::new(
                t.clone(),
                Vec::new(),
                vec![b"cf:a".to_vec()],
                vec![b"x".to_vec()],
            ),
            "row key",
        ),
    ] {
        let e = app_error(c.append(a));
        assert_eq!(e.kind, ApplicationErrorKind::InternalError);
        assert!(
            e.message.starts_with("Internal error processing append") && e.message.contains(what),
            "{}",
            e.message
        );
        assert_usable(&mut c);
    }
    assert!(row_cols(&mut c, &t, "r").is_empty());
}

#[test]
fn check_and_put_compares_then_puts_atomically() {
    let (mut c, t) = fresh_table("checkandput", &["cf"]);
    let mput = |v: &[u8]| Mutation::new(false, b"cf:out".to_vec(), v.to_vec(), true);
    // Absent column, value unset: applies.
    assert!(c
        .check_and_put(
            t.clone(),
            b"r".to_vec(),
            b"cf:flag".to_vec(),
            Vec::new(),
            mput(b"1"),
            no_attrs()
        )
        .unwrap());
    assert_eq!(row_cols(&mut c, &t, "r"), vec![kv("cf:out", "1")]);
    put(&mut c, &t, "r", &[("cf:flag", "on")]);
    // Present column, value unset: refused.
    assert!(!c
        .check_and_put(
            t.clone(),
            b"r".to_vec(),
            b"cf:flag".to_vec(),
            Vec::new(),
            mput(b"2"),
            no_attrs()
        )
        .unwrap());
    // Wrong value: refused.
    assert!(!c
        .check_and_put(
            t.clone(),
            b"r".to_vec(),
            b"cf:flag".to_vec(),
            b"off".to_vec(),
            mput(b"3"),
            no_attrs()
        )
        .unwrap());
    assert_eq!(
        values_of(
            &c.get(t.clone(), b"r".to_vec(), b"cf:out".to_vec(), no_attrs())
                .unwrap()
        ),
        vec!["1"]
    );
    // Right value: applied.
    assert!(c
        .check_and_put(
            t.clone(),
            b"r".to_vec(),
            b"cf:flag".to_vec(),
            b"on".to_vec(),
            mput(b"4"),
            no_attrs()
        )
        .unwrap());
    assert_eq!(
        values_of(
            &c.get(t, b"r".to_vec(), b"cf:out".to_vec(), no_attrs())
                .unwrap()
        ),
        vec!["4"]
    );
}

#[test]
fn check_and_put_needs_qualified_columns() {
    let (mut c, t) = fresh_table("checkandput_bad", &["cf"]);
    let good = Mutation::new(false, b"cf:out".to_vec(), b"v".to_vec(), true);
    let bare = Mutation::new(false, b"cf".to_vec(), b"v".to_vec(), true);
    let a = app_error(c.check_and_put(
        t.clone(),
        b"r".to_vec(),
        b"cf:x".to_vec(),
        Vec::new(),
        bare,
        no_attrs(),
    ));
    assert_eq!(a.kind, ApplicationErrorKind::InternalError);
    assert!(
        a.message
            .starts_with("Internal error processing checkAndPut"),
        "{}",
        a.message
    );
    assert_usable(&mut c);
    let a = app_error(c.check_and_put(
        t.clone(),
        b"r".to_vec(),
        b"cf".to_vec(),
        Vec::new(),
        good.clone(),
        no_attrs(),
    ));
    assert_eq!(a.kind, ApplicationErrorKind::InternalError);
    assert_usable(&mut c);
    let m = io_message(c.check_and_put(
        t.clone(),
        b"r".to_vec(),
        b"zz:x".to_vec(),
        Vec::new(),
        good,
        no_attrs(),
    ));
    assert!(
        m.starts_with("org.apache.hadoop.hbase.regionserver.NoSuchColumnFamilyException: "),
        "{m}"
    );
    assert!(row_cols(&mut c, &t, "r").is_empty());
}

#[test]
fn over_long_row_keys_are_refused_naming_the_limit() {
    let (mut c, t) = fresh_table("write_longrow", &["cf"]);
    let row = vec![b'k'; 65_537];
    let m = io_message(c.mutate_row(
        t.clone(),
        row.clone(),
        vec![put_m("cf:a", b"v")],
        no_attrs(),
    ));
    assert!(m.contains("65536"), "{m}");
    let m = io_message(c.mutate_rows(
        t.clone(),
        vec![BatchMutation::new(row.clone(), vec![put_m("cf:a", b"v")])],
        no_attrs(),
    ));
    assert!(m.contains("65536"), "{m}");
    let m = io_message(c.atomic_increment(t.clone(), row, b"cf:a".to_vec(), 1));
    assert!(m.contains("65536"), "{m}");
    // The longest allowed key works.
    let longest = vec![b'k'; 65_536];
    c.mutate_row(
        t.clone(),
        longest.clone(),
        vec![put_m("cf:a", b"v")],
        no_attrs(),
    )
    .unwrap();
    assert_eq!(
        c.get(t, longest, b"cf:a".to_vec(), no_attrs())
            .unwrap()
            .len(),
        1
    );
}

#[test]
fn empty_row_keys_are_refused() {
    let (mut c, t) = fresh_table("write_emptyrow", &["cf"]);
    let m = io_message(c.mutate_row(t.clone(), Vec::new(), vec![put_m("cf:a", b"v")], no_attrs()));
    assert!(m.contains("empty"), "{m}");
    assert_usable(&mut c);
}

#[test]
fn values_over_the_configured_maximum_are_refused_naming_it() {
    let server = Tabula::start_with(&[("TABULA_MAX_VALUE_SIZE", "1024")]);
    let mut c = server.client();
    let t = b"bigvalues".to_vec();
    create(&mut c, &t, &["cf"]);
    let m = io_message(c.mutate_row(
        t.clone(),
        b"r".to_vec(),
        vec![put_m("cf:a", &[7u8; 2000])],
        no_attrs(),
    ));
    assert!(
        m.starts_with("org.apache.hadoop.hbase.DoNotRetryIOException: ") && m.contains("1024"),
        "{m}"
    );
    assert_usable(&mut c);
    c.mutate_row(
        t.clone(),
        b"r".to_vec(),
        vec![put_m("cf:a", &[7u8; 1000])],
        no_attrs(),
    )
    .unwrap();
    let m = io_message(c.append(TAppend::new(
        t,
        b"r".to_vec(),
        vec![b"cf:a".to_vec()],
        vec![vec![1u8; 100]],
    )));
    assert!(m.contains("1024"), "{m}");
}

/// Synced one-row writes from many connections at once, over every transport and
/// protocol: the server answers them from its acknowledger thread once their group
/// commit is over. A reply must come only once its write is visible, to the same
/// connection's next get and to any other connection.
#[test]
fn concurrent_synced_writes_are_visible_once_acknowledged() {
    use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
    use std::sync::Arc;

    const WRITERS: usize = 8;
    const PUTS: u64 = 150;
    let server = Tabula::start();
    let table = b"acks".to_vec();
    create(&mut server.client(), &table, &["cf"]);
    let acked: Arc<Vec<AtomicU64>> = Arc::new((0..WRITERS).map(|_| AtomicU64::new(0)).collect());
    let done = Arc::new(AtomicBool::new(false));
    let modes = [
        (Framing::Buffered, Protocol::Binary),
        (Framing::Framed, Protocol::Binary),
        (Framing::Buffered, Protocol::Compact),
        (Framing::Framed, Protocol::Compact),
    ];
    let value = |c: &mut Client, w: usize| -> u64 {
        row_cols(c, &table, &format!("w{w}"))
            .first()
            .map_or(0, |(_, v)| v.parse().expect("a number"))
    };
    std::thread::scope(|s| {
        let checker = {
            let (acked, done) = (Arc::clone(&acked), Arc::clone(&done));
            let mut c = server.client();
            s.spawn(move || {
                let mut checks = 0u64;
                while !done.load(Ordering::SeqCst) {
                    for w in 0..WRITERS {
                        let before = acked[w].load(Ordering::SeqCst);
                        let seen = value(&mut c, w);
                        assert!(
                            seen >= before,
                            "writer {w}: put {before} acknowledged, read {seen}"
                        );
                        checks += 1;
                    }
                }
                checks
            })
        };
        let writers: Vec<_> = (0..WRITERS)
            .map(|w| {
                let acked = Arc::clone(&acked);
                let (framing, protocol) = modes[w % modes.len()];
                let mut c = server.client_with(framing, protocol);
                let table = table.clone();
                s.spawn(move || {
                    for i in 1..=PUTS {
                        c.mutate_row(
                            table.clone(),
                            format!("w{w}").into_bytes(),
                            vec![put_m("cf:n", i.to_string().as_bytes())],
                            no_attrs(),
                        )
                        .expect("mutateRow");
                        acked[w].store(i, Ordering::SeqCst);
                        assert_eq!(value(&mut c, w), i, "writer {w} reads its own put");
                    }
                })
            })
            .collect();
        for w in writers {
            w.join().expect("writer");
        }
        done.store(true, Ordering::SeqCst);
        assert!(checker.join().expect("checker") > 0);
    });
    let mut c = server.client();
    for w in 0..WRITERS {
        assert_eq!(value(&mut c, w), PUTS);
    }
}

/// atomicIncrement from many connections at once on one counter, answered by the
/// acknowledger after the group commit: every increment gets a distinct value (none
/// lost, none repeated), and a connection's next get sees at least the value its
/// increment returned.
#[test]
fn concurrent_increments_of_one_counter_are_atomic_and_visible_once_acknowledged() {
    const WRITERS: usize = 6;
    const EACH: i64 = 100;
    let server = Tabula::start();
    let table = b"counters".to_vec();
    create(&mut server.client(), &table, &["cf"]);
    let read = |c: &mut Client| -> i64 {
        let cells = c
            .get(table.clone(), b"n".to_vec(), b"cf:c".to_vec(), no_attrs())
            .expect("get");
        cells.first().map_or(0, |cell| {
            let value = cell.value.as_deref().unwrap_or_default();
            let bytes: [u8; 8] = value.try_into().expect("8 bytes");
            i64::from_be_bytes(bytes)
        })
    };
    let mut seen: Vec<i64> = std::thread::scope(|s| {
        let workers: Vec<_> = (0..WRITERS)
            .map(|w| {
                let mut c = if w % 2 == 0 {
                    server.client()
                } else {
                    server.client_with(Framing::Framed, Protocol::Compact)
                };
                let table = table.clone();
                s.spawn(move || {
                    let mut got = Vec::new();
                    for _ in 0..EACH {
                        let v = c
                            .atomic_increment(table.clone(), b"n".to_vec(), b"cf:c".to_vec(), 1)
                            .expect("atomicIncrement");
                        assert!(read(&mut c) >= v, "an acknowledged increment is visible");
                        got.push(v);
                    }
                    got
                })
            })
            .collect();
        workers
            .into_iter()
            .flat_map(|w| w.join().expect("worker"))
            .collect()
    });
    seen.sort_unstable();
    let expected: Vec<i64> = (1..=WRITERS as i64 * EACH).collect();
    assert_eq!(seen, expected, "each increment saw its own value");
    assert_eq!(read(&mut server.client()), WRITERS as i64 * EACH);
}
