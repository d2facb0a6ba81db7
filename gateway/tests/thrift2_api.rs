//! The Thrift2 `THBaseService` against the real `tabula` binary over TCP: every
//! method of the IDL, with HBase's answers for reads, writes, scanners, admin and
//! errors, plus what Thrift1 and Thrift2 see of each other's writes.

mod common;

use std::collections::BTreeSet;

use common::t2::*;
use common::*;
use tabula_thrift::hbase::THbaseSyncClient;
use tabula_thrift::hbase2::{
    TAccessControlEntity, TColumnFamilyDescriptor, TColumnIncrement, TColumnValue,
    TCompareOperator, TCompressionAlgorithm, TDataBlockEncoding, TDeleteType, TIncrement,
    TKeepDeletedCells, TLogQueryFilter, TMutation, TNamespaceDescriptor, TPermissionScope,
    TRowMutations, TTHBaseServiceSyncClient, TThriftServerType, TTimeRange,
};

fn client2() -> Client2 {
    shared().client2(Framing::Buffered, Protocol::Binary)
}

/// The family descriptors getTableDescriptor reports for table `name`.
fn families_of(c: &mut Client2, name: &[u8]) -> Vec<TColumnFamilyDescriptor> {
    c.get_table_descriptor(tname(name))
        .unwrap()
        .columns
        .unwrap_or_default()
}

#[test]
fn server_identity() {
    let mut c = client2();
    assert_eq!(c.get_thrift_server_type().unwrap(), TThriftServerType::TWO);
    assert!(!c.get_cluster_id().unwrap().is_empty());
    let mut c1 = shared().client();
    assert_eq!(
        c1.get_thrift_server_type().unwrap().0,
        TThriftServerType::ONE.0
    );
    assert!(c
        .get_slow_log_responses(BTreeSet::new(), TLogQueryFilter::default())
        .unwrap()
        .is_empty());
    assert!(c
        .clear_slow_log_responses(BTreeSet::new())
        .unwrap()
        .is_empty());
}

#[test]
fn put_then_get_with_versions_and_time() {
    let mut c = client2();
    let t = fresh2(&mut c, "t2_get", &["f", "g"], 5);
    for ts in [10, 20, 30] {
        c.put(
            t.clone(),
            tput("r", &[("f:a", &format!("v{ts}")), ("g:b", "x")], Some(ts)),
        )
        .unwrap();
    }
    // Default: newest version only, cells ordered family, qualifier.
    let r = c.get(t.clone(), tget("r")).unwrap();
    assert_eq!(row_of(&r), "r");
    assert_eq!(
        cells(&r),
        vec![
            ("f:a".into(), "v30".into(), 30),
            ("g:b".into(), "x".into(), 30)
        ]
    );
    assert_eq!(r.column_values[0].type_, Some(4));
    // All versions of one column, newest first.
    let mut g = tget("r");
    g.columns = Some(vec![col("f", Some("a"))]);
    g.max_versions = Some(10);
    let vs: Vec<i64> = cells(&c.get(t.clone(), g.clone()).unwrap())
        .into_iter()
        .map(|x| x.2)
        .collect();
    assert_eq!(vs, vec![30, 20, 10]);
    // The time range is [min, max).
    g.time_range = Some(TTimeRange::new(10, 30));
    let vs: Vec<i64> = cells(&c.get(t.clone(), g.clone()).unwrap())
        .into_iter()
        .map(|x| x.2)
        .collect();
    assert_eq!(vs, vec![20, 10]);
    // TGet.timestamp is an exact match and wins over the range.
    g.timestamp = Some(20);
    assert_eq!(
        cells(&c.get(t.clone(), g.clone()).unwrap()),
        vec![("f:a".into(), "v20".into(), 20)]
    );
    g.timestamp = Some(25);
    assert!(c.get(t.clone(), g).unwrap().column_values.is_empty());
    // A family selects all its columns.
    let mut g = tget("r");
    g.columns = Some(vec![col("g", None)]);
    assert_eq!(
        values(&c.get(t.clone(), g).unwrap())
            .keys()
            .collect::<Vec<_>>(),
        vec!["g:b"]
    );
    // A missing row is an empty result without a row.
    let r = c.get(t.clone(), tget("nope")).unwrap();
    assert!(r.row.is_none() && r.column_values.is_empty());
    // getMultiple keeps positions; exists / existsAll.
    let rs = c
        .get_multiple(t.clone(), vec![tget("nope"), tget("r")])
        .unwrap();
    assert_eq!(rs.len(), 2);
    assert!(rs[0].column_values.is_empty());
    assert_eq!(row_of(&rs[1]), "r");
    assert!(c.exists(t.clone(), tget("r")).unwrap());
    assert!(!c.exists(t.clone(), tget("nope")).unwrap());
    assert_eq!(
        c.exists_all(t.clone(), vec![tget("r"), tget("nope")])
            .unwrap(),
        vec![true, false]
    );
    // storeLimit / storeOffset count cells per family.
    c.put(
        t.clone(),
        tput("w", &[("f:1", "a"), ("f:2", "b"), ("f:3", "c")], None),
    )
    .unwrap();
    let mut g = tget("w");
    g.store_limit = Some(1);
    g.store_offset = Some(1);
    assert_eq!(
        values(&c.get(t.clone(), g).unwrap())
            .keys()
            .collect::<Vec<_>>(),
        vec!["f:2"]
    );
    // A zero maxVersions is refused; the connection stays usable.
    let mut g = tget("r");
    g.max_versions = Some(0);
    tio(c.get(t.clone(), g));
    assert!(c.exists(t, tget("r")).unwrap());
}

#[test]
fn put_multiple_and_cell_timestamps() {
    let mut c = client2();
    let t = fresh2(&mut c, "t2_putm", &["f"], 3);
    let mut p = tput("a", &[("f:x", "1")], Some(100));
    p.column_values.push(TColumnValue::new(
        b"f".to_vec(),
        b"y".to_vec(),
        bytes::Bytes::from_static(b"2"),
        55,
        None,
        None,
    ));
    c.put_multiple(t.clone(), vec![p, tput("b", &[("f:x", "3")], None)])
        .unwrap();
    let r = c.get(t.clone(), tget("a")).unwrap();
    assert_eq!(
        cells(&r),
        vec![
            ("f:x".into(), "1".into(), 100),
            ("f:y".into(), "2".into(), 55)
        ]
    );
    assert_eq!(values(&c.get(t.clone(), tget("b")).unwrap())["f:x"], "3");
    // No columns, unknown family, missing table: TIOError, connection usable.
    tio(c.put(t.clone(), tput("c", &[], None)));
    let e = tio(c.put(t.clone(), tput("c", &[("zz:q", "v")], None)));
    assert!(e.message.unwrap_or_default().contains("zz"));
    let e = tio(c.put(
        b"no_such_table_t2".to_vec(),
        tput("c", &[("f:q", "v")], None),
    ));
    assert!(e.message.unwrap_or_default().contains("no_such_table_t2"));
    assert_eq!(e.can_retry, Some(false));
    assert!(c.exists(t, tget("a")).unwrap());
}

#[test]
fn delete_types() {
    let mut c = client2();
    let t = fresh2(&mut c, "t2_del", &["f", "g"], 5);
    let setup = |c: &mut Client2, row: &str| {
        for ts in [1, 2, 3] {
            c.put(
                t.clone(),
                tput(row, &[("f:a", "a"), ("f:b", "b"), ("g:c", "c")], Some(ts)),
            )
            .unwrap();
        }
    };
    let all = |c: &mut Client2, row: &str| {
        let mut g = tget(row);
        g.max_versions = Some(10);
        cells(&c.get(t.clone(), g).unwrap())
            .into_iter()
            .map(|(col, _, ts)| format!("{col}@{ts}"))
            .collect::<Vec<_>>()
    };
    setup(&mut c, "r");
    // DELETE_COLUMN: one version (the newest when no timestamp).
    c.delete_single(
        t.clone(),
        tdelete(
            "r",
            Some(vec![col("f", Some("a"))]),
            Some(TDeleteType::DELETE_COLUMN),
        ),
    )
    .unwrap();
    assert_eq!(
        all(&mut c, "r"),
        vec!["f:a@2", "f:a@1", "f:b@3", "f:b@2", "f:b@1", "g:c@3", "g:c@2", "g:c@1"]
    );
    // DELETE_COLUMNS (the default) with a column timestamp: versions <= ts. The
    // TDelete's own timestamp is not used once columns are named.
    let mut b = col("f", Some("b"));
    b.timestamp = Some(2);
    let mut d = tdelete("r", Some(vec![b]), None);
    d.timestamp = Some(1);
    c.delete_single(t.clone(), d).unwrap();
    assert_eq!(
        all(&mut c, "r"),
        vec!["f:a@2", "f:a@1", "f:b@3", "g:c@3", "g:c@2", "g:c@1"]
    );
    // DELETE_FAMILY_VERSION: the family's cells at exactly the column's timestamp
    // (required: without it HBase fails the call with an INTERNAL_ERROR).
    let fv = |ts: Option<i64>| {
        let mut g = col("g", None);
        g.timestamp = ts;
        tdelete("r", Some(vec![g]), Some(TDeleteType::DELETE_FAMILY_VERSION))
    };
    internal(c.delete_single(t.clone(), fv(None)));
    c.delete_single(t.clone(), fv(Some(2))).unwrap();
    assert_eq!(
        all(&mut c, "r"),
        vec!["f:a@2", "f:a@1", "f:b@3", "g:c@3", "g:c@1"]
    );
    // DELETE_FAMILY: the whole family.
    c.delete_single(
        t.clone(),
        tdelete(
            "r",
            Some(vec![col("f", None)]),
            Some(TDeleteType::DELETE_FAMILY),
        ),
    )
    .unwrap();
    assert_eq!(all(&mut c, "r"), vec!["g:c@3", "g:c@1"]);
    // No columns: the whole row.
    c.delete_single(t.clone(), tdelete("r", None, None))
        .unwrap();
    assert!(all(&mut c, "r").is_empty());
    // The row tombstone hides older puts, as in HBase.
    setup(&mut c, "r");
    assert!(all(&mut c, "r").is_empty());
    // deleteMultiple returns the deletes that failed.
    setup(&mut c, "r2");
    let bad = tdelete("r2", Some(vec![col("zz", Some("q"))]), None);
    let failed = c
        .delete_multiple(
            t.clone(),
            vec![
                tdelete("r2", Some(vec![col("g", Some("c"))]), None),
                bad.clone(),
            ],
        )
        .unwrap();
    assert_eq!(failed, vec![bad]);
    assert!(!all(&mut c, "r2").iter().any(|x| x.starts_with("g:c")));
    assert!(all(&mut c, "r2").iter().any(|x| x.starts_with("f:a")));
}

#[test]
fn check_and_put_delete_and_mutate() {
    let mut c = client2();
    let t = fresh2(&mut c, "t2_cas", &["f"], 1);
    let put = |v: &str| tput("r", &[("f:q", v)], None);
    // Empty value: the column must be absent.
    assert!(c
        .check_and_put(
            t.clone(),
            b"r".to_vec(),
            b"f".to_vec(),
            b"q".to_vec(),
            vec![],
            put("m")
        )
        .unwrap());
    assert!(!c
        .check_and_put(
            t.clone(),
            b"r".to_vec(),
            b"f".to_vec(),
            b"q".to_vec(),
            vec![],
            put("x")
        )
        .unwrap());
    assert!(!c
        .check_and_put(
            t.clone(),
            b"r".to_vec(),
            b"f".to_vec(),
            b"q".to_vec(),
            b"zz".to_vec(),
            put("x")
        )
        .unwrap());
    assert_eq!(values(&c.get(t.clone(), tget("r")).unwrap())["f:q"], "m");
    // The mutation's row must be the checked row.
    tio(c.check_and_put(
        t.clone(),
        b"other".to_vec(),
        b"f".to_vec(),
        b"q".to_vec(),
        vec![],
        put("x"),
    ));
    // checkAndMutate: provided <op> stored, stored = "m".
    let cases = [
        (TCompareOperator::LESS, "a", true),
        (TCompareOperator::LESS, "z", false),
        (TCompareOperator::LESS_OR_EQUAL, "m", true),
        (TCompareOperator::EQUAL, "m", true),
        (TCompareOperator::EQUAL, "n", false),
        (TCompareOperator::NOT_EQUAL, "n", true),
        (TCompareOperator::GREATER_OR_EQUAL, "m", true),
        (TCompareOperator::GREATER, "z", true),
        (TCompareOperator::GREATER, "a", false),
    ];
    for (i, (op, provided, expected)) in cases.into_iter().enumerate() {
        let hit_column = format!("f:hit{i}");
        let muts = TRowMutations::new(
            b"r".to_vec(),
            vec![TMutation::Put(tput("r", &[(&hit_column, "1")], None))],
        );
        let got = c
            .check_and_mutate(
                t.clone(),
                b"r".to_vec(),
                b"f".to_vec(),
                b"q".to_vec(),
                op,
                provided.as_bytes().to_vec(),
                muts,
            )
            .unwrap();
        assert_eq!(got, expected, "{op:?} {provided}");
        let hit = values(&c.get(t.clone(), tget("r")).unwrap()).contains_key(&hit_column);
        assert_eq!(
            hit, expected,
            "{op:?} {provided}: mutation applied iff the check held"
        );
    }
    // NO_OP has no comparison: HBase fails the call and applies nothing.
    let muts = TRowMutations::new(
        b"r".to_vec(),
        vec![TMutation::Put(tput("r", &[("f:noop", "1")], None))],
    );
    tio(c.check_and_mutate(
        t.clone(),
        b"r".to_vec(),
        b"f".to_vec(),
        b"q".to_vec(),
        TCompareOperator::NO_OP,
        b"m".to_vec(),
        muts,
    ));
    assert!(!values(&c.get(t.clone(), tget("r")).unwrap()).contains_key("f:noop"));
    // checkAndDelete.
    assert!(!c
        .check_and_delete(
            t.clone(),
            b"r".to_vec(),
            b"f".to_vec(),
            b"q".to_vec(),
            b"x".to_vec(),
            tdelete("r", None, None)
        )
        .unwrap());
    assert!(c
        .check_and_delete(
            t.clone(),
            b"r".to_vec(),
            b"f".to_vec(),
            b"q".to_vec(),
            b"m".to_vec(),
            tdelete("r", None, None)
        )
        .unwrap());
    assert!(!c.exists(t, tget("r")).unwrap());
}

#[test]
fn increment_append_and_mutate_row() {
    let mut c = client2();
    let t = fresh2(&mut c, "t2_rmw", &["f"], 1);
    let inc = |amount: Option<i64>, ret: Option<bool>| TIncrement {
        row: b"r".to_vec(),
        columns: vec![TColumnIncrement::new(b"f".to_vec(), b"n".to_vec(), amount)],
        attributes: None,
        durability: None,
        cell_visibility: None,
        return_results: ret,
    };
    let r = c.increment(t.clone(), inc(None, None)).unwrap();
    assert_eq!(r.column_values[0].value, 1i64.to_be_bytes().to_vec());
    let r = c.increment(t.clone(), inc(Some(41), None)).unwrap();
    assert_eq!(r.column_values[0].value, 42i64.to_be_bytes().to_vec());
    let r = c.increment(t.clone(), inc(Some(-2), Some(false))).unwrap();
    assert!(r.column_values.is_empty());
    let stored = c.get(t.clone(), tget("r")).unwrap();
    assert_eq!(stored.column_values[0].value, 40i64.to_be_bytes().to_vec());
    // A non-counter cell cannot be incremented.
    c.put(t.clone(), tput("r", &[("f:s", "abc")], None))
        .unwrap();
    let mut bad = inc(None, None);
    bad.columns = vec![TColumnIncrement::new(b"f".to_vec(), b"s".to_vec(), 1)];
    tio(c.increment(t.clone(), bad));
    // Append.
    let app = tappend("r", &[("f:s", "def")]);
    let r = c.append(t.clone(), app).unwrap();
    assert_eq!(values(&r)["f:s"], "abcdef");
    // mutateRow: a put and a delete applied together.
    let m = TRowMutations::new(
        b"r".to_vec(),
        vec![
            TMutation::Put(tput("r", &[("f:new", "1")], None)),
            TMutation::DeleteSingle(tdelete("r", Some(vec![col("f", Some("s"))]), None)),
        ],
    );
    c.mutate_row(t.clone(), m).unwrap();
    let v = values(&c.get(t.clone(), tget("r")).unwrap());
    assert!(v.contains_key("f:new") && !v.contains_key("f:s"), "{v:?}");
    // A mutation of another row is refused and nothing is applied.
    let m = TRowMutations::new(
        b"r".to_vec(),
        vec![
            TMutation::Put(tput("r", &[("f:never", "1")], None)),
            TMutation::Put(tput("other", &[("f:q", "1")], None)),
        ],
    );
    tio(c.mutate_row(t.clone(), m));
    assert!(!values(&c.get(t, tget("r")).unwrap()).contains_key("f:never"));
}

#[test]
fn scanners() {
    let mut c = client2();
    let t = fresh2(&mut c, "t2_scan", &["f"], 3);
    for i in 0..10 {
        let row = format!("row{i}");
        c.put(
            t.clone(),
            tput(&row, &[("f:a", "1"), ("f:b", "2"), ("f:c", "3")], None),
        )
        .unwrap();
    }
    let rows_of = |rs: &[tabula_thrift::hbase2::TResult]| rs.iter().map(row_of).collect::<Vec<_>>();
    // Start inclusive, stop exclusive; [] at the end.
    let mut s = tscan2();
    s.start_row = Some(b"row2".to_vec());
    s.stop_row = Some(b"row5".to_vec());
    let id = c.open_scanner(t.clone(), s).unwrap();
    assert_eq!(
        rows_of(&c.get_scanner_rows(id, 2).unwrap()),
        vec!["row2", "row3"]
    );
    assert_eq!(rows_of(&c.get_scanner_rows(id, 10).unwrap()), vec!["row4"]);
    assert!(c.get_scanner_rows(id, 10).unwrap().is_empty());
    c.close_scanner(id).unwrap();
    // A closed id is a TIllegalArgument from getScannerRows; closing it again is ignored.
    let e = tia(c.get_scanner_rows(id, 1));
    assert_eq!(e.message.as_deref(), Some("Invalid scanner Id"));
    c.close_scanner(id).unwrap();
    // Reversed, limit, batchSize (partial results), filterString.
    let mut s = tscan2();
    s.reversed = Some(true);
    s.limit = Some(3);
    assert_eq!(
        rows_of(&c.get_scanner_results(t.clone(), s, 100).unwrap()),
        vec!["row9", "row8", "row7"]
    );
    let mut s = tscan2();
    s.batch_size = Some(2);
    s.stop_row = Some(b"row1".to_vec());
    let rs = c.get_scanner_results(t.clone(), s, 100).unwrap();
    assert_eq!(rs.len(), 2);
    assert_eq!(rs[0].column_values.len(), 2);
    assert_eq!(rs[0].partial, Some(true));
    assert_eq!(rs[1].column_values.len(), 1);
    let mut s = tscan2();
    s.filter_string = Some(b"PrefixFilter('row3') AND QualifierFilter(=, 'binary:b')".to_vec());
    let rs = c.get_scanner_results(t.clone(), s, 100).unwrap();
    assert_eq!(rows_of(&rs), vec!["row3"]);
    assert_eq!(values(&rs[0]).keys().collect::<Vec<_>>(), vec!["f:b"]);
    // filterBytes, as HBase's Java client serializes a filter, wins over filterString:
    // rows starting "row3" OR whose f:a is "v1", keeping column b only.
    let prefix = hbase_filter("PrefixFilter", &pb_bytes(1, b"row3"));
    let binary = hbase_filter("BinaryComparator", &pb_bytes(1, &pb_bytes(1, b"v1")));
    let value_is_v1 = hbase_filter(
        "SingleColumnValueFilter",
        &[
            pb_bytes(1, b"f"),
            pb_bytes(2, b"a"),
            pb_varint(3, 2),
            pb_bytes(4, &binary),
            pb_varint(5, 1),
        ]
        .concat(),
    );
    let either = hbase_filter(
        "FilterList",
        &[
            pb_varint(1, 2),
            pb_bytes(2, &prefix),
            pb_bytes(2, &value_is_v1),
        ]
        .concat(),
    );
    let b_only = hbase_filter(
        "QualifierFilter",
        &pb_bytes(
            1,
            &[
                pb_varint(1, 2),
                pb_bytes(
                    2,
                    &hbase_filter("BinaryComparator", &pb_bytes(1, &pb_bytes(1, b"b"))),
                ),
            ]
            .concat(),
        ),
    );
    let both = hbase_filter(
        "FilterList",
        &[pb_varint(1, 1), pb_bytes(2, &either), pb_bytes(2, &b_only)].concat(),
    );
    c.put(t.clone(), tput("zed", &[("f:a", "v1"), ("f:b", "9")], None))
        .unwrap();
    let mut s = tscan2();
    s.filter_string = Some(b"PrefixFilter('nothing')".to_vec());
    s.filter_bytes = Some(both);
    let rs = c.get_scanner_results(t.clone(), s, 100).unwrap();
    assert_eq!(rows_of(&rs), vec!["row3", "zed"]);
    assert!(rs.iter().all(|r| values(r).keys().all(|k| k == "f:b")));
    // A bad filter string is an INTERNAL_ERROR naming it; filterBytes that do not
    // name a filter Tabula runs a TIOError naming what they hold.
    let mut s = tscan2();
    s.filter_string = Some(b"NoSuchFilter()".to_vec());
    let a = internal(c.open_scanner(t.clone(), s));
    assert!(a.message.contains("NoSuchFilter"), "{}", a.message);
    let mut s = tscan2();
    s.filter_bytes = Some(vec![10, 3, 1, 2, 3]);
    let e = tio(c.open_scanner(t.clone(), s));
    assert!(e.message.unwrap_or_default().contains("filterBytes"));
    let mut s = tscan2();
    s.filter_bytes = Some(hbase_filter("FirstKeyValueMatchingQualifiersFilter", &[]));
    let e = tio(c.open_scanner(t.clone(), s));
    assert!(e
        .message
        .unwrap_or_default()
        .contains("FirstKeyValueMatchingQualifiersFilter"));
    // A FuzzyRowFilter without fuzzy keys keeps no row, as in HBase.
    let mut s = tscan2();
    s.filter_bytes = Some(hbase_filter("FuzzyRowFilter", &[]));
    assert!(c.get_scanner_results(t.clone(), s, 100).unwrap().is_empty());
    // Unknown family and missing table.
    let mut s = tscan2();
    s.columns = Some(vec![col("zz", None)]);
    tio(c.open_scanner(t.clone(), s));
    tio(c.open_scanner(b"t2_no_such_table".to_vec(), tscan2()));
    assert_eq!(c.get_scanner_results(t, tscan2(), 3).unwrap().len(), 3);
}

/// Row filters that stop at a boundary know which way a reversed scan walks, as
/// HBase tells its filters: rows above a prefix or an inclusive stop row do not
/// end a reversed scan before it reaches them.
#[test]
fn reversed_scans_with_prefix_and_inclusive_stop_filters() {
    let mut c = client2();
    let t = fresh2(&mut c, "t2_reverse_filters", &["f"], 1);
    for row in ["a1", "b1", "b2", "c1", "d1"] {
        c.put(t.clone(), tput(row, &[("f:q", "v")], None)).unwrap();
    }
    let rows_of = |rs: &[tabula_thrift::hbase2::TResult]| rs.iter().map(row_of).collect::<Vec<_>>();
    let scan = |filter: &str, reversed: bool| {
        let mut s = tscan2();
        s.reversed = Some(reversed);
        s.filter_string = Some(filter.as_bytes().to_vec());
        s
    };
    let got = c
        .get_scanner_results(t.clone(), scan("PrefixFilter('b')", true), 100)
        .unwrap();
    assert_eq!(rows_of(&got), vec!["b2", "b1"]);
    let got = c
        .get_scanner_results(t.clone(), scan("PrefixFilter('b')", false), 100)
        .unwrap();
    assert_eq!(rows_of(&got), vec!["b1", "b2"]);
    // Reversed, the stop row is the lowest row returned.
    let got = c
        .get_scanner_results(t.clone(), scan("InclusiveStopFilter('b2')", true), 100)
        .unwrap();
    assert_eq!(rows_of(&got), vec!["d1", "c1", "b2"]);
    let got = c
        .get_scanner_results(t.clone(), scan("InclusiveStopFilter('b2')", false), 100)
        .unwrap();
    assert_eq!(rows_of(&got), vec!["a1", "b1", "b2"]);
}

/// Filters whose skip hints point past a region's end: the scan goes on in the next
/// region, which starts in the middle of the gap the hint jumped, forward and
/// reversed, and returns exactly the rows the filter keeps.
#[test]
fn skip_hints_across_regions() {
    let mut c = client2();
    let name = unique("t2_hints");
    c.create_table(
        table_desc(&name, vec![family("f", None)]),
        vec![b"r2".to_vec(), b"r5".to_vec(), b"r8".to_vec()],
    )
    .unwrap();
    let rows: Vec<String> = (0..100).map(|i| format!("r{i:02}")).collect();
    let puts = rows
        .iter()
        .map(|r| tput(r, &[("f:q", "v")], None))
        .collect();
    c.put_multiple(name.clone(), puts).unwrap();
    let rows_of = |rs: &[tabula_thrift::hbase2::TResult]| rs.iter().map(row_of).collect::<Vec<_>>();
    let mut scan = |filter: &str, reversed: bool| {
        let mut s = tscan2();
        s.reversed = Some(reversed);
        s.filter_string = Some(filter.as_bytes().to_vec());
        rows_of(&c.get_scanner_results(name.clone(), s, 1000).unwrap())
    };
    let check = |got: Vec<String>, keep: &dyn Fn(usize) -> bool, reversed: bool, what: &str| {
        let mut expected: Vec<String> = (0..100)
            .filter(|i| keep(*i))
            .map(|i| format!("r{i:02}"))
            .collect();
        if reversed {
            expected.reverse();
        }
        assert_eq!(got, expected, "{what}, reversed {reversed}");
    };
    let ranges = "MultiRowRangeFilter('r15', true, 'r22', false, 'r55', false, 'r57', true, 'r90', true, '', false)";
    let fuzzy = "FuzzyRowFilter('r?3', '010')";
    for reversed in [false, true] {
        check(
            scan(ranges, reversed),
            &|i| (15..22).contains(&i) || (56..=57).contains(&i) || i >= 90,
            reversed,
            ranges,
        );
        check(scan(fuzzy, reversed), &|i| i % 10 == 3, reversed, fuzzy);
        check(
            scan(&format!("{fuzzy} AND {ranges}"), reversed),
            &|i| i % 10 == 3 && ((15..22).contains(&i) || i >= 90),
            reversed,
            "both",
        );
    }
}

#[test]
fn min_versions_outlive_the_ttl() {
    let mut c = client2();
    let name = unique("t2_minver");
    // Both families expire cells after an hour; `k` keeps the newest two
    // versions of each column past that (HBase's MIN_VERSIONS).
    let mut kept = family("k", Some(5));
    kept.time_to_live = Some(3600);
    kept.min_versions = Some(2);
    kept.compression_type = Some(TCompressionAlgorithm::SNAPPY);
    let mut plain = family("p", Some(5));
    plain.time_to_live = Some(3600);
    c.create_table(table_desc(&name, vec![kept, plain]), vec![])
        .unwrap();
    let fams = families_of(&mut c, &name);
    assert_eq!(fams[0].min_versions, Some(2));
    assert_eq!(fams[1].min_versions, Some(0));
    // Stored with zstd, reported as asked.
    assert_eq!(
        fams[0].compression_type,
        Some(TCompressionAlgorithm::SNAPPY)
    );
    assert_eq!(fams[1].compression_type, Some(TCompressionAlgorithm::NONE));
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_millis() as i64;
    // Three versions a day old (expired) and, in another column, one fresh
    // version above two expired ones.
    for ts in [1_000, 2_000, 3_000] {
        let old = now - 86_400_000 + ts;
        c.put(
            name.clone(),
            tput(
                "r",
                &[("k:old", &format!("v{ts}")), ("p:old", "x")],
                Some(old),
            ),
        )
        .unwrap();
        c.put(name.clone(), tput("r", &[("k:mixed", "stale")], Some(old)))
            .unwrap();
    }
    c.put(name.clone(), tput("r", &[("k:mixed", "fresh")], Some(now)))
        .unwrap();
    let all_versions = |c: &mut Client2| {
        let mut g = tget("r");
        g.max_versions = Some(10);
        cells(&c.get(name.clone(), g).unwrap())
            .into_iter()
            .map(|(column, value, _)| format!("{column}={value}"))
            .collect::<Vec<_>>()
    };
    let expected = vec![
        "k:mixed=fresh",
        "k:mixed=stale",
        "k:old=v3000",
        "k:old=v2000",
    ];
    assert_eq!(all_versions(&mut c), expected, "p's cells all expired");
    // A major compaction keeps exactly what reads see.
    shared()
        .client()
        .major_compact(name.clone())
        .expect("majorCompact (done when it answers)");
    assert_eq!(all_versions(&mut c), expected);
    // A time range below the newest versions counts from the first it admits.
    let mut g = tget("r");
    g.columns = Some(vec![col("k", Some("old"))]);
    g.max_versions = Some(10);
    g.time_range = Some(TTimeRange::new(0, now - 86_400_000 + 3_000));
    let vs: Vec<String> = cells(&c.get(name.clone(), g).unwrap())
        .into_iter()
        .map(|x| x.1)
        .collect();
    assert_eq!(
        vs,
        vec!["v2000"],
        "the one left in range is among the newest two"
    );
    // More versions kept than stored, or fewer than none, is refused.
    let mut bad = family("b", Some(2));
    bad.min_versions = Some(3);
    tio(c.create_table(table_desc(&unique("t2_minver_bad"), vec![bad]), vec![]));
    let mut bad = family("b", Some(2));
    bad.min_versions = Some(-1);
    tio(c.create_table(table_desc(&unique("t2_minver_bad"), vec![bad]), vec![]));
}

#[test]
fn family_settings_are_stored_and_reported() {
    let mut c = client2();
    let name = unique("t2_blocksize");
    let mut small = family("s", None);
    small.block_size = Some(8192);
    small.in_memory = Some(true);
    // Settings that change nothing here read back as written, as from HBase.
    small.scope = Some(1);
    small.dfs_replication = Some(2);
    small.data_block_encoding = Some(TDataBlockEncoding::FAST_DIFF);
    small.cache_data_on_write = Some(true);
    small.evict_blocks_on_close = Some(true);
    small.compress_tags = Some(false);
    small.attributes = Some([(b"OWNER".to_vec(), b"ops".to_vec())].into_iter().collect());
    small.configuration = Some(
        [(
            "hbase.hstore.blockingStoreFiles".to_string(),
            "20".to_string(),
        )]
        .into_iter()
        .collect(),
    );
    let asked = small.clone();
    c.create_table(table_desc(&name, vec![small, family("d", None)]), vec![])
        .unwrap();
    // Families come back in name order: `d`, then `s`.
    let fams = families_of(&mut c, &name);
    assert_eq!(fams[1].name, b"s".to_vec());
    assert_eq!(
        (fams[1].block_size, fams[1].in_memory),
        (Some(8192), Some(true))
    );
    assert_eq!((fams[0].block_size, fams[0].in_memory), (None, Some(false)));
    let s = &fams[1];
    assert_eq!(
        (s.scope, s.dfs_replication, s.data_block_encoding),
        (
            asked.scope,
            asked.dfs_replication,
            asked.data_block_encoding
        )
    );
    assert_eq!(
        (
            s.cache_data_on_write,
            s.evict_blocks_on_close,
            s.compress_tags
        ),
        (Some(true), Some(true), Some(false))
    );
    assert_eq!(
        (&s.attributes, &s.configuration),
        (&asked.attributes, &asked.configuration)
    );
    // Unset, HBase's defaults.
    let d = &fams[0];
    assert_eq!(
        (
            d.scope,
            d.data_block_encoding,
            d.compress_tags,
            d.cache_data_on_write
        ),
        (
            Some(0),
            Some(TDataBlockEncoding::NONE),
            Some(true),
            Some(false)
        )
    );
    // Changed by modifyColumnFamily like any other setting.
    let mut changed = family("d", None);
    changed.block_size = Some(1 << 20);
    c.modify_column_family(tname(&name), changed).unwrap();
    assert_eq!(families_of(&mut c, &name)[0].block_size, Some(1 << 20));
    // Rows round-trip through the small-block family.
    c.put(name.clone(), tput("r", &[("s:q", "v")], None))
        .unwrap();
    let got = c.get(name.clone(), tget("r")).unwrap();
    assert_eq!(values(&got).get("s:q").map(String::as_str), Some("v"));
    // HBase's bounds: 1 KB to 16 MB.
    for size in [0, 512, (16 << 20) + 1, -1] {
        let mut bad = family("b", None);
        bad.block_size = Some(size);
        tio(c.create_table(table_desc(&unique("t2_blocksize_bad"), vec![bad]), vec![]));
    }
    let mut bad = family("b", None);
    bad.data_block_encoding = Some(TDataBlockEncoding(5));
    tio(c.create_table(table_desc(&unique("t2_encoding_bad"), vec![bad]), vec![]));
}

#[test]
fn a_readonly_table_serves_reads_and_refuses_changes_until_altered_back() {
    let mut c = client2();
    let name = unique("t2_readonly");
    let mut desc = table_desc(&name, vec![family("cf", Some(3))]);
    c.create_table(desc.clone(), vec![]).unwrap();
    c.put(name.clone(), tput("r", &[("cf:q", "before")], None))
        .unwrap();
    // HBase's `alter 't', READONLY => true`: a whole new descriptor.
    desc.attributes = Some(
        [(b"READONLY".to_vec(), b"true".to_vec())]
            .into_iter()
            .collect(),
    );
    c.modify_table(desc.clone()).unwrap();
    let refused = tio(c.put(name.clone(), tput("r", &[("cf:q", "after")], None)));
    assert!(
        refused
            .message
            .as_deref()
            .unwrap_or("")
            .contains("read only"),
        "{refused:?}"
    );
    assert_eq!(refused.can_retry, Some(false));
    let one = TColumnIncrement::new(b"cf".to_vec(), b"n".to_vec(), 1);
    let inc = TIncrement::new(b"r".to_vec(), vec![one], None, None, None, None);
    tio(c.increment(name.clone(), inc));
    tio(c.delete_single(name.clone(), tdelete("r", None, None)));
    // An increment by 0 writes nothing (a counter read): served.
    let zero = TColumnIncrement::new(b"cf".to_vec(), b"n".to_vec(), 0);
    c.increment(
        name.clone(),
        TIncrement::new(b"r".to_vec(), vec![zero], None, None, None, None),
    )
    .unwrap();
    // Thrift1 writes are refused too; reads of both APIs are served.
    let mut c1 = shared().client();
    let thrift1 = c1.mutate_row(
        name.clone(),
        b"r".to_vec(),
        vec![put_m("cf:q", b"after")],
        no_attrs(),
    );
    assert!(thrift1.is_err(), "{thrift1:?}");
    let got = c.get(name.clone(), tget("r")).unwrap();
    assert_eq!(values(&got).get("cf:q").map(String::as_str), Some("before"));
    // Altered back, the table takes writes again.
    desc.attributes = Some(
        [(b"READONLY".to_vec(), b"false".to_vec())]
            .into_iter()
            .collect(),
    );
    c.modify_table(desc).unwrap();
    c.put(name.clone(), tput("r", &[("cf:q", "after")], None))
        .unwrap();
    let got = c.get(name.clone(), tget("r")).unwrap();
    assert_eq!(values(&got).get("cf:q").map(String::as_str), Some("after"));
}

#[test]
fn kept_deleted_cells_are_read_as_of_a_time_before_the_delete() {
    let mut c = client2();
    let name = unique("t2_keepdel");
    let mut kept = family("k", Some(5));
    kept.keep_deleted_cells = Some(TKeepDeletedCells::TRUE);
    c.create_table(table_desc(&name, vec![kept, family("n", Some(5))]), vec![])
        .unwrap();
    let fams = families_of(&mut c, &name);
    assert_eq!(fams[0].keep_deleted_cells, Some(TKeepDeletedCells::TRUE));
    assert_eq!(fams[1].keep_deleted_cells, Some(TKeepDeletedCells::FALSE));
    for (ts, v) in [(100, "v100"), (200, "v200")] {
        c.put(name.clone(), tput("r", &[("k:c", v), ("n:c", v)], Some(ts)))
            .unwrap();
    }
    // Every version of both columns deleted at 300.
    for fam in ["k", "n"] {
        let mut column = col(fam, Some("c"));
        column.timestamp = Some(300);
        c.delete_single(name.clone(), tdelete("r", Some(vec![column]), None))
            .unwrap();
    }
    let read = |c: &mut Client2, range: Option<TTimeRange>| {
        let mut g = tget("r");
        g.max_versions = Some(10);
        g.time_range = range;
        cells(&c.get(name.clone(), g).unwrap())
            .into_iter()
            .map(|(column, value, _)| format!("{column}={value}"))
            .collect::<Vec<_>>()
    };
    let check = |c: &mut Client2| {
        assert!(read(c, None).is_empty(), "the delete covers every version");
        // As of 250 (before the delete): `k` shows what the delete hid, `n` not.
        assert_eq!(
            read(c, Some(TTimeRange::new(0, 251))),
            vec!["k:c=v200", "k:c=v100"]
        );
        assert_eq!(read(c, Some(TTimeRange::new(0, 150))), vec!["k:c=v100"]);
        // A range holding the delete applies it.
        assert!(read(c, Some(TTimeRange::new(0, 301))).is_empty());
        // Scans alike.
        let mut scan = tscan2();
        scan.time_range = Some(TTimeRange::new(0, 251));
        let rows = c.get_scanner_results(name.clone(), scan, 10).unwrap();
        assert_eq!(rows.len(), 1);
        assert_eq!(
            cells(&rows[0]).len(),
            1,
            "newest version as of 250: k:c=v200"
        );
    };
    check(&mut c);
    // A major compaction keeps the deleted cells and the delete.
    shared()
        .client()
        .major_compact(name.clone())
        .expect("majorCompact");
    check(&mut c);
    // Kept cells count as versions: six more puts leave five, deleted or not.
    for ts in 301..=306 {
        c.put(
            name.clone(),
            tput("r", &[("k:c", &format!("v{ts}"))], Some(ts)),
        )
        .unwrap();
    }
    shared()
        .client()
        .major_compact(name.clone())
        .expect("majorCompact");
    assert_eq!(
        read(&mut c, Some(TTimeRange::new(0, 251))),
        Vec::<String>::new()
    );
    assert_eq!(read(&mut c, None).len(), 5);
}

#[test]
fn table_lifecycle_and_descriptors() {
    let mut c = client2();
    let name = unique("t2_admin");
    let tn = tname(&name);
    assert!(!c.table_exists(tn.clone()).unwrap());
    let mut f = family("f", Some(4));
    f.time_to_live = Some(3600);
    c.create_table(
        table_desc(&name, vec![f, family("g", None)]),
        vec![b"m".to_vec(), b"t".to_vec()],
    )
    .unwrap();
    assert!(c.table_exists(tn.clone()).unwrap());
    let e = tio(c.create_table(table_desc(&name, vec![family("f", None)]), vec![]));
    assert!(e.message.unwrap_or_default().contains("exists"));
    tio(c.create_table(table_desc(&unique("t2_nofam"), vec![]), vec![]));
    let d = c.get_table_descriptor(tn.clone()).unwrap();
    assert_eq!(d.table_name.qualifier, name);
    assert_eq!(d.table_name.ns.as_deref(), Some(&b"default"[..]));
    let fams = d.columns.unwrap_or_default();
    assert_eq!(fams.len(), 2);
    assert_eq!(fams[0].max_versions, Some(4));
    assert_eq!(fams[0].time_to_live, Some(3600));
    assert_eq!(fams[1].max_versions, Some(1), "HBase 2 default");
    // Regions from split keys.
    let locs = c.get_all_region_locations(name.clone()).unwrap();
    let starts: Vec<_> = locs
        .iter()
        .map(|l| l.region_info.start_key.clone().unwrap_or_default())
        .collect();
    assert_eq!(starts, vec![b"".to_vec(), b"m".to_vec(), b"t".to_vec()]);
    let loc = c
        .get_region_location(name.clone(), b"p".to_vec(), false)
        .unwrap();
    assert_eq!(loc.region_info.start_key.as_deref(), Some(&b"m"[..]));
    assert!(!loc.server_name.host_name.is_empty());
    // The server's start code: when it started, the same for all its regions.
    let started = loc.server_name.start_code.expect("a start code");
    let now_ms = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .expect("clock")
        .as_millis() as i64;
    assert!(
        started > 1_600_000_000_000 && started <= now_ms,
        "{started}"
    );
    assert!(locs
        .iter()
        .all(|l| l.server_name.start_code == Some(started)));
    assert!(c
        .is_table_available_with_split(tn.clone(), vec![b"m".to_vec()])
        .unwrap());
    assert!(!c
        .is_table_available_with_split(tn.clone(), vec![b"q".to_vec()])
        .unwrap());
    // Listing.
    let names = c
        .get_table_names_by_pattern(format!("{}.*", text(&name[..8])), false)
        .unwrap();
    assert!(names.iter().any(|n| n.qualifier == name));
    let descs = c
        .get_table_descriptors(vec![tn.clone(), tname(b"t2_missing")])
        .unwrap();
    assert_eq!(descs.len(), 1);
    assert!(c
        .get_table_descriptors_by_pattern(text(&name), false)
        .unwrap()
        .iter()
        .any(|d| d.table_name.qualifier == name));
    let with_ns = c
        .get_table_names_by_pattern(format!("default:{}", text(&name)), false)
        .unwrap();
    assert_eq!(
        with_ns.len(),
        1,
        "default-namespace tables match as default:name"
    );
    internal(c.get_table_names_by_pattern("(".into(), false));
    let sys = c
        .get_table_names_by_pattern("hbase:.*".into(), true)
        .unwrap();
    assert!(sys.iter().all(|n| n.ns.as_deref() == Some(&b"hbase"[..])));
    assert!(!sys.is_empty());
    assert!(c
        .get_table_names_by_pattern("hbase:.*".into(), false)
        .unwrap()
        .is_empty());
    // Families.
    c.add_column_family(tn.clone(), family("h", Some(2)))
        .unwrap();
    c.modify_column_family(tn.clone(), family("h", Some(7)))
        .unwrap();
    let fams = c
        .get_table_descriptor(tn.clone())
        .unwrap()
        .columns
        .unwrap_or_default();
    assert_eq!(
        fams.iter()
            .find(|f| f.name == b"h")
            .and_then(|f| f.max_versions),
        Some(7)
    );
    c.delete_column_family(tn.clone(), b"h".to_vec()).unwrap();
    c.modify_table(table_desc(
        &name,
        vec![family("f", Some(4)), family("k", None)],
    ))
    .unwrap();
    let fams: Vec<_> = c
        .get_table_descriptor(tn.clone())
        .unwrap()
        .columns
        .unwrap_or_default()
        .into_iter()
        .map(|f| text(&f.name))
        .collect();
    assert_eq!(fams, vec!["f", "k"]);
    // Enable / disable / truncate / delete.
    c.put(name.clone(), tput("a", &[("f:q", "v")], None))
        .unwrap();
    assert!(c.is_table_enabled(tn.clone()).unwrap());
    assert!(c.is_table_available(tn.clone()).unwrap());
    tio(c.delete_table(tn.clone()));
    tio(c.truncate_table(tn.clone(), true));
    c.disable_table(tn.clone()).unwrap();
    assert!(c.is_table_disabled(tn.clone()).unwrap());
    assert!(!c.is_table_available(tn.clone()).unwrap());
    tio(c.get(name.clone(), tget("a")));
    c.truncate_table(tn.clone(), true).unwrap();
    assert!(c.is_table_enabled(tn.clone()).unwrap());
    assert!(!c.exists(name.clone(), tget("a")).unwrap());
    assert_eq!(c.get_all_region_locations(name.clone()).unwrap().len(), 3);
    c.disable_table(tn.clone()).unwrap();
    c.delete_table(tn.clone()).unwrap();
    assert!(!c.table_exists(tn.clone()).unwrap());
    tio(c.is_table_enabled(tn.clone()));
    assert!(!c.is_table_available(tn).unwrap());
}

#[test]
fn namespaces() {
    let mut c = client2();
    let ns = text(&unique("t2ns"));
    let listed = c.list_namespaces().unwrap();
    assert!(listed.contains(&"default".to_string()) && listed.contains(&"hbase".to_string()));
    let mut conf = std::collections::BTreeMap::new();
    conf.insert("owner".to_string(), "team".to_string());
    c.create_namespace(TNamespaceDescriptor::new(ns.clone(), conf.clone()))
        .unwrap();
    tio(c.create_namespace(TNamespaceDescriptor::new(ns.clone(), None)));
    let d = c.get_namespace_descriptor(ns.clone()).unwrap();
    assert_eq!(d.configuration.unwrap_or_default(), conf);
    conf.insert("k".into(), "v".into());
    c.modify_namespace(TNamespaceDescriptor::new(ns.clone(), conf.clone()))
        .unwrap();
    assert_eq!(
        c.get_namespace_descriptor(ns.clone())
            .unwrap()
            .configuration
            .unwrap_or_default(),
        conf
    );
    assert!(c
        .list_namespace_descriptors()
        .unwrap()
        .iter()
        .any(|d| d.name == ns));
    // A table in the namespace, reached as ns:table by data calls.
    let full = format!("{ns}:tbl").into_bytes();
    create2(&mut c, &full, &["f"], 1);
    c.put(full.clone(), tput("r", &[("f:q", "v")], None))
        .unwrap();
    assert_eq!(values(&c.get(full.clone(), tget("r")).unwrap())["f:q"], "v");
    let names = c.get_table_names_by_namespace(ns.clone()).unwrap();
    assert_eq!(names.len(), 1);
    assert_eq!(names[0].ns.as_deref(), Some(ns.as_bytes()));
    assert_eq!(names[0].qualifier, b"tbl");
    assert_eq!(
        c.get_table_descriptors_by_namespace(ns.clone())
            .unwrap()
            .len(),
        1
    );
    tio(c.get_table_names_by_namespace("t2_no_such_ns".into()));
    // Only an empty namespace can be deleted; default and hbase never.
    tio(c.delete_namespace(ns.clone()));
    c.disable_table(tname(&full)).unwrap();
    c.delete_table(tname(&full)).unwrap();
    c.delete_namespace(ns.clone()).unwrap();
    tio(c.get_namespace_descriptor(ns));
    tio(c.delete_namespace("default".into()));
    tio(c.delete_namespace("hbase".into()));
}

#[test]
fn grants_are_recorded() {
    let mut c = client2();
    let e = TAccessControlEntity::new(
        "alice".to_string(),
        TPermissionScope::NAMESPACE,
        "RW".to_string(),
        None,
        "default".to_string(),
    );
    assert!(c.grant(e.clone()).unwrap());
    assert!(c.revoke(e).unwrap());
    let bad = TAccessControlEntity::new(
        "alice".to_string(),
        TPermissionScope::TABLE,
        "RQ".to_string(),
        "t".to_string(),
        None,
    );
    tio(c.grant(bad));
}

#[test]
fn thrift1_and_thrift2_see_the_same_data() {
    let mut c2 = client2();
    let mut c1 = shared().client();
    // Thrift1 creates and writes; Thrift2 reads the same cells.
    let t = unique("t2_cross");
    create(&mut c1, &t, &["f"]);
    put_ts(&mut c1, &t, "r1", &[("f:a", "one"), ("f:b", "two")], 1234);
    let r = c2.get(t.clone(), tget("r1")).unwrap();
    assert_eq!(
        cells(&r),
        vec![
            ("f:a".into(), "one".into(), 1234),
            ("f:b".into(), "two".into(), 1234)
        ]
    );
    // Thrift2 writes; Thrift1 reads the same cells.
    c2.put(t.clone(), tput("r2", &[("f:c", "three")], Some(777)))
        .unwrap();
    let rows = c1.get_row(t.clone(), b"r2".to_vec(), no_attrs()).unwrap();
    assert_eq!(columns_ts_of(&rows[0])["f:c"], ("three".to_string(), 777));
    // A Thrift2 counter is a Thrift1 counter.
    c2.increment(
        t.clone(),
        TIncrement {
            row: b"n".to_vec(),
            columns: vec![TColumnIncrement::new(b"f".to_vec(), b"n".to_vec(), 5)],
            attributes: None,
            durability: None,
            cell_visibility: None,
            return_results: None,
        },
    )
    .unwrap();
    assert_eq!(
        c1.atomic_increment(t.clone(), b"n".to_vec(), b"f:n".to_vec(), 1)
            .unwrap(),
        6
    );
    // Namespaced tables: created through Thrift2, used as ns:table by Thrift1.
    let ns = text(&unique("t2crossns"));
    c2.create_namespace(TNamespaceDescriptor::new(ns.clone(), None))
        .unwrap();
    let full = format!("{ns}:t").into_bytes();
    create2(&mut c2, &full, &["f"], 3);
    assert!(c1.get_table_names().unwrap().contains(&full));
    put(&mut c1, &full, "x", &[("f:q", "from1")]);
    assert_eq!(
        values(&c2.get(full.clone(), tget("x")).unwrap())["f:q"],
        "from1"
    );
    // Thrift1 deletes are seen by Thrift2 scans.
    c1.delete_all_row(full.clone(), b"x".to_vec(), no_attrs())
        .unwrap();
    assert!(c2
        .get_scanner_results(full, tscan2(), 10)
        .unwrap()
        .is_empty());
}

#[test]
fn framed_compact_clients_work() {
    let mut c = shared().client2(Framing::Framed, Protocol::Compact);
    let t = fresh2(&mut c, "t2_compact", &["f"], 1);
    c.put(t.clone(), tput("r", &[("f:q", "v\u{e9}")], None))
        .unwrap();
    assert_eq!(
        values(&c.get(t.clone(), tget("r")).unwrap())["f:q"],
        "v\u{e9}"
    );
    let id = c.open_scanner(t.clone(), tscan2()).unwrap();
    assert_eq!(c.get_scanner_rows(id, 10).unwrap().len(), 1);
    c.close_scanner(id).unwrap();
    tio(c.get(b"t2_compact_missing".to_vec(), tget("r")));
    assert!(c.exists(t, tget("r")).unwrap());
    let mut b = shared().client2(Framing::Buffered, Protocol::Compact);
    assert_eq!(b.get_thrift_server_type().unwrap(), TThriftServerType::TWO);
    let mut f = shared().client2(Framing::Framed, Protocol::Binary);
    assert_eq!(f.get_thrift_server_type().unwrap(), TThriftServerType::TWO);
}

/// Thrift2 puts and checkAndPuts from several connections at once (every transport
/// and protocol) are answered by the acknowledger after the group commit: each
/// connection's next get sees its write, and so does a Thrift1 reader that saw the
/// acknowledgement.
#[test]
fn concurrent_puts_are_visible_once_acknowledged() {
    use std::sync::atomic::{AtomicU64, Ordering};
    use std::sync::Arc;

    const WRITERS: usize = 4;
    const PUTS: u64 = 100;
    let table = fresh2(&mut client2(), "acks2", &["cf"], 1);
    let table_name = String::from_utf8(table.clone()).expect("utf-8");
    let acked: Arc<Vec<AtomicU64>> = Arc::new((0..WRITERS).map(|_| AtomicU64::new(0)).collect());
    let modes = [
        (Framing::Buffered, Protocol::Binary),
        (Framing::Framed, Protocol::Binary),
        (Framing::Buffered, Protocol::Compact),
        (Framing::Framed, Protocol::Compact),
    ];
    std::thread::scope(|s| {
        let writers: Vec<_> = (0..WRITERS)
            .map(|w| {
                let (framing, protocol) = modes[w % modes.len()];
                let mut c = shared().client2(framing, protocol);
                let (table, acked) = (table.clone(), Arc::clone(&acked));
                s.spawn(move || {
                    let row = format!("w{w}");
                    for i in 1..=PUTS {
                        let v = i.to_string();
                        if i % 2 == 0 {
                            c.put(table.clone(), tput(&row, &[("cf:n", &v)], None))
                                .expect("put");
                        } else {
                            // Applied only while the column holds the previous value.
                            let previous = (i - 1).to_string();
                            let expected = if i == 1 {
                                Vec::new()
                            } else {
                                previous.into_bytes()
                            };
                            let applied = c
                                .check_and_put(
                                    table.clone(),
                                    row.as_bytes().to_vec(),
                                    b"cf".to_vec(),
                                    b"n".to_vec(),
                                    expected,
                                    tput(&row, &[("cf:n", &v)], None),
                                )
                                .expect("checkAndPut");
                            assert!(applied, "writer {w}: checkAndPut {i} sees put {}", i - 1);
                        }
                        acked[w].store(i, Ordering::SeqCst);
                        let got = c.get(table.clone(), tget(&row)).expect("get");
                        assert_eq!(
                            values(&got).get("cf:n"),
                            Some(&v),
                            "writer {w} reads put {i}"
                        );
                    }
                })
            })
            .collect();
        let mut reader = shared().client();
        let mut checks = 0;
        while writers.iter().any(|w| !w.is_finished()) || checks == 0 {
            for (w, acked) in acked.iter().enumerate() {
                let before = acked.load(Ordering::SeqCst);
                let rows = reader
                    .get_row(
                        table_name.clone().into_bytes(),
                        format!("w{w}").into_bytes(),
                        no_attrs(),
                    )
                    .expect("getRow");
                let seen: u64 = rows
                    .first()
                    .and_then(|r| columns_of(r).get("cf:n").cloned())
                    .map_or(0, |v| v.parse().expect("a number"));
                assert!(
                    seen >= before,
                    "writer {w}: put {before} acknowledged, read {seen}"
                );
                checks += 1;
            }
        }
        for w in writers {
            w.join().expect("writer");
        }
    });
}

/// Truncating again and again, each right after the last, keeping the splits and
/// not: the table always comes back with its regions (the new catalog row of its
/// last tablet shares its key with the deleted one, and must not be masked by that
/// delete, even when both are written in the same millisecond), empty and writable.
#[test]
fn repeated_truncates_leave_the_expected_regions() {
    let mut c = client2();
    let name = unique("trunc");
    let family = family("f", Some(1));
    c.create_table(table_desc(&name, vec![family]), vec![b"m".to_vec()])
        .unwrap();
    let tn = tname(&name);
    for round in 0..40 {
        let preserve = round % 2 == 0;
        c.put(name.clone(), tput("r", &[("f:q", "v")], None))
            .unwrap();
        c.disable_table(tn.clone()).unwrap();
        c.truncate_table(tn.clone(), preserve).unwrap();
        let regions = c.get_all_region_locations(name.clone()).unwrap();
        let expected = if preserve && round == 0 { 2 } else { 1 };
        assert_eq!(regions.len(), expected, "round {round}: {regions:?}");
        assert!(!c.exists(name.clone(), tget("r")).unwrap(), "round {round}");
    }
}
