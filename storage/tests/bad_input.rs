//! Bad client input reaches the engine and is refused with the right typed error:
//! oversized and empty row keys, unknown families, negative timestamps, values over
//! the size limit, counters on cells that are not counters, counter overflow. The
//! limits themselves (a 65,536-byte row, timestamps 0 and i64::MAX - 1, time
//! ranges spanning all of i64) work. After every refusal nothing of the request is
//! applied and the tablet keeps serving.

mod common;

use std::sync::Arc;

use bytes::Bytes;
use tabula_storage::{
    ColumnSelector, Condition, Durability, Engine, Error, FamilySchema, Mutation, ReadOptions,
    RowMutation, ScanRequest, TableSchema, Tablet, TimeRange, LATEST_TIMESTAMP, MAX_ROW_KEY_LEN,
};

const NOW: i64 = 1_700_000_000_000;
const MAX_VALUE: usize = 1024;

struct Fixture {
    _dir: tempfile::TempDir,
    engine: Option<Engine>,
    tablet: Arc<Tablet>,
}

fn schema() -> TableSchema {
    TableSchema::new(
        "bad_input",
        vec![
            FamilySchema::new(&b"f"[..]).max_versions(5),
            FamilySchema::new(&b"g"[..]).max_versions(1),
        ],
    )
    .expect("valid schema")
}

fn fixture() -> Fixture {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut opts = common::quiet_options(dir.path(), NOW);
    opts.max_value_size = MAX_VALUE;
    let (engine, tablet) = common::open_engine(opts, schema());
    Fixture {
        _dir: dir,
        engine: Some(engine),
        tablet,
    }
}

impl Fixture {
    /// Flushes, drops the engine and opens it again: values come back from files.
    fn reopen(&mut self) {
        self.tablet.flush().expect("flush");
        let engine = self.engine.take().expect("engine is open");
        engine.shutdown().expect("shutdown");
        drop(engine);
        let mut opts = common::quiet_options(self._dir.path(), NOW);
        opts.max_value_size = MAX_VALUE;
        let (engine, tablet) = common::open_engine(opts, schema());
        self.engine = Some(engine);
        self.tablet = tablet;
    }
}

fn b(s: &'static str) -> Bytes {
    Bytes::from_static(s.as_bytes())
}

fn put(row: impl Into<Bytes>, family: &'static str, ts: i64, value: &'static str) -> RowMutation {
    RowMutation::new(row).put(b(family), b("q"), ts, b(value))
}

fn cells(t: &Tablet, row: &Bytes, opts: ReadOptions) -> Vec<(Bytes, i64, Bytes)> {
    t.get(row, opts)
        .expect("get")
        .into_iter()
        .map(|c| (c.family, c.timestamp, c.value))
        .collect()
}

/// A valid write and a read of it succeed: the tablet survived the refusal.
fn assert_still_works(t: &Tablet, tag: &'static str) {
    let row = Bytes::from(format!("alive-{tag}"));
    t.mutate(&put(row.clone(), "f", 7, "ok"), Durability::Sync)
        .expect("valid write after a refused one");
    assert_eq!(
        cells(t, &row, ReadOptions::latest()),
        vec![(b("f"), 7, b("ok"))],
        "read after a refusal ({tag})"
    );
}

fn assert_row_absent(t: &Tablet, row: &Bytes) {
    assert!(
        t.get(row, ReadOptions::default()).expect("get").is_empty(),
        "a refused mutation left data in {row:?}"
    );
}

#[test]
fn row_keys_longer_than_the_limit_are_refused() {
    let f = fixture();
    let t = &f.tablet;
    let longest = Bytes::from(vec![b'k'; MAX_ROW_KEY_LEN]);
    t.mutate(&put(longest.clone(), "f", 1, "v"), Durability::Sync)
        .expect("a row of exactly the maximum length is accepted");
    assert_eq!(
        cells(t, &longest, ReadOptions::latest()),
        vec![(b("f"), 1, b("v"))]
    );

    let too_long = Bytes::from(vec![b'k'; MAX_ROW_KEY_LEN + 1]);
    let is_too_long =
        |e: Error| matches!(e, Error::RowKeyTooLong { len, max } if len == 65_537 && max == 65_536);
    let e = t
        .mutate(&put(too_long.clone(), "f", 1, "v"), Durability::Sync)
        .unwrap_err();
    assert!(is_too_long(e), "mutate");
    assert_still_works(t, "mutate");
    let e = t.get(&too_long, ReadOptions::latest()).unwrap_err();
    assert!(is_too_long(e), "get");
    assert_still_works(t, "get");
    let e = t
        .increment(&too_long, &[(b("f"), b("c"), 1)], Durability::Sync)
        .unwrap_err();
    assert!(is_too_long(e), "increment");
    assert_still_works(t, "increment");
    let e = t
        .append(&too_long, &[(b("f"), b("c"), b("x"))], Durability::Sync)
        .unwrap_err();
    assert!(is_too_long(e), "append");
    let e = t
        .check_and_mutate(
            &Condition::equals(b("f"), b("q"), None),
            &put(too_long.clone(), "f", 1, "v"),
            Durability::Sync,
        )
        .unwrap_err();
    assert!(is_too_long(e), "check_and_mutate");
    assert_still_works(t, "check_and_mutate");
    // The longest row also survives a flush and reopen.
    let mut f = f;
    f.reopen();
    assert_eq!(
        cells(&f.tablet, &longest, ReadOptions::latest()),
        vec![(b("f"), 1, b("v"))]
    );
}

#[test]
fn empty_row_keys_are_refused() {
    let f = fixture();
    let t = &f.tablet;
    let empty = Bytes::new();
    let e = t
        .mutate(&put(empty.clone(), "f", 1, "v"), Durability::Sync)
        .unwrap_err();
    assert!(matches!(e, Error::EmptyRowKey), "mutate: {e:?}");
    assert_still_works(t, "mutate");
    let e = t.get(&empty, ReadOptions::latest()).unwrap_err();
    assert!(matches!(e, Error::EmptyRowKey), "get: {e:?}");
    let e = t
        .increment(&empty, &[(b("f"), b("c"), 1)], Durability::Sync)
        .unwrap_err();
    assert!(matches!(e, Error::EmptyRowKey), "increment: {e:?}");
    let e = t
        .append(&empty, &[(b("f"), b("c"), b("x"))], Durability::Sync)
        .unwrap_err();
    assert!(matches!(e, Error::EmptyRowKey), "append: {e:?}");
    assert_still_works(t, "append");
}

fn is_unknown(e: &Error) -> bool {
    matches!(e, Error::UnknownFamily { table, family } if table == "bad_input" && family == "nope")
}

#[test]
fn unknown_families_are_refused_everywhere() {
    let f = fixture();
    let t = &f.tablet;
    let row = b("r");

    // A mutation naming an unknown family is refused as a whole: its valid put to
    // a declared family is not applied either.
    let mixed = put(row.clone(), "f", 1, "v").put(b("nope"), b("q"), 1, b("v"));
    let e = t.mutate(&mixed, Durability::Sync).unwrap_err();
    assert!(is_unknown(&e), "put: {e:?}");
    assert_row_absent(t, &row);
    assert_still_works(t, "put");

    let deletes = [
        Mutation::DeleteColumn {
            family: b("nope"),
            qualifier: b("q"),
            timestamp: LATEST_TIMESTAMP,
        },
        Mutation::DeleteVersion {
            family: b("nope"),
            qualifier: b("q"),
            timestamp: 5,
        },
        Mutation::DeleteFamily {
            family: b("nope"),
            timestamp: LATEST_TIMESTAMP,
        },
        Mutation::DeleteFamilyVersion {
            family: b("nope"),
            timestamp: 5,
        },
    ];
    for d in deletes {
        let e = t
            .mutate(
                &RowMutation::new(row.clone()).with(d.clone()),
                Durability::Sync,
            )
            .unwrap_err();
        assert!(is_unknown(&e), "{d:?}: {e:?}");
        assert_still_works(t, "delete");
    }

    for sel in [
        ColumnSelector::Family(b("nope")),
        ColumnSelector::Column(b("nope"), b("q")),
    ] {
        let e = t
            .get(&row, ReadOptions::latest().columns(vec![sel.clone()]))
            .unwrap_err();
        assert!(is_unknown(&e), "get {sel:?}: {e:?}");
        let e = t
            .scan(ScanRequest {
                read: ReadOptions::latest().columns(vec![ColumnSelector::Family(b("f")), sel]),
                ..Default::default()
            })
            .err()
            .expect("scan of an unknown family is refused");
        assert!(is_unknown(&e), "scan: {e:?}");
        assert_still_works(t, "read");
    }

    let e = t
        .increment(
            &row,
            &[(b("f"), b("c"), 1), (b("nope"), b("c"), 1)],
            Durability::Sync,
        )
        .unwrap_err();
    assert!(is_unknown(&e), "increment: {e:?}");
    let e = t
        .append(&row, &[(b("nope"), b("c"), b("x"))], Durability::Sync)
        .unwrap_err();
    assert!(is_unknown(&e), "append: {e:?}");
    let e = t
        .check_and_mutate(
            &Condition::equals(b("nope"), b("q"), None),
            &put(row.clone(), "f", 1, "v"),
            Durability::Sync,
        )
        .unwrap_err();
    assert!(is_unknown(&e), "check_and_mutate condition: {e:?}");
    let e = t
        .check_and_mutate(
            &Condition::equals(b("f"), b("q"), None),
            &put(row.clone(), "nope", 1, "v"),
            Durability::Sync,
        )
        .unwrap_err();
    assert!(is_unknown(&e), "check_and_mutate mutation: {e:?}");
    assert_row_absent(t, &row);
    assert_still_works(t, "rmw");
}

#[test]
fn negative_timestamps_are_refused() {
    let f = fixture();
    let t = &f.tablet;
    let row = b("neg");
    for ts in [-1, -1000, i64::MIN] {
        let e = t
            .mutate(&put(row.clone(), "f", ts, "v"), Durability::Sync)
            .unwrap_err();
        assert!(
            matches!(e, Error::InvalidTimestamp { ts: got, .. } if got == ts),
            "put at {ts}: {e:?}"
        );
        assert_still_works(t, "put");
    }
    // A valid put followed by a delete at a negative timestamp: the delete is
    // refused and the put stays visible; the whole mutation is refused too.
    t.mutate(&put(row.clone(), "f", 10, "kept"), Durability::Sync)
        .expect("valid put");
    let bad = RowMutation::new(row.clone())
        .put(b("g"), b("q"), 11, b("not applied"))
        .with(Mutation::DeleteColumn {
            family: b("f"),
            qualifier: b("q"),
            timestamp: -5,
        });
    let e = t.mutate(&bad, Durability::Sync).unwrap_err();
    assert!(matches!(e, Error::InvalidTimestamp { ts: -5, .. }), "{e:?}");
    let e = t
        .mutate(
            &RowMutation::new(row.clone()).with(Mutation::DeleteRow { timestamp: -2 }),
            Durability::Sync,
        )
        .unwrap_err();
    assert!(matches!(e, Error::InvalidTimestamp { ts: -2, .. }), "{e:?}");
    assert_eq!(
        cells(t, &row, ReadOptions::latest()),
        vec![(b("f"), 10, b("kept"))]
    );
    assert_still_works(t, "delete");
}

#[test]
fn timestamps_at_the_limits_of_i64() {
    let mut f = fixture();
    let row = b("limits");
    f.tablet
        .mutate(
            &put(row.clone(), "f", LATEST_TIMESTAMP, "now"),
            Durability::Sync,
        )
        .expect("LATEST");
    f.tablet
        .mutate(
            &put(row.clone(), "f", i64::MAX - 1, "max-1"),
            Durability::Sync,
        )
        .expect("i64::MAX - 1");
    f.tablet
        .mutate(&put(row.clone(), "f", 0, "zero"), Durability::Sync)
        .expect("0");
    let all = vec![
        (b("f"), i64::MAX - 1, b("max-1")),
        (b("f"), NOW, b("now")),
        (b("f"), 0, b("zero")),
    ];
    for round in ["memtable", "files"] {
        let t = &f.tablet;
        let every = ReadOptions::default()
            .versions(10)
            .time_range(TimeRange::new(i64::MIN, i64::MAX));
        assert_eq!(cells(t, &row, every), all, "{round}: full range");
        assert_eq!(
            cells(t, &row, ReadOptions::default().versions(10)),
            all,
            "{round}: default range"
        );
        assert_eq!(
            cells(t, &row, ReadOptions::latest()),
            vec![all[0].clone()],
            "{round}: latest is i64::MAX - 1"
        );
        assert_eq!(
            cells(
                t,
                &row,
                ReadOptions::default().time_range(TimeRange::exactly(i64::MAX - 1))
            ),
            vec![all[0].clone()],
            "{round}: exactly i64::MAX - 1"
        );
        assert_eq!(
            cells(
                t,
                &row,
                ReadOptions::default().time_range(TimeRange::new(0, 1))
            ),
            vec![all[2].clone()],
            "{round}: exactly 0"
        );
        assert_eq!(
            cells(
                t,
                &row,
                ReadOptions::default()
                    .versions(10)
                    .time_range(TimeRange::new(i64::MIN, 1))
            ),
            vec![all[2].clone()],
            "{round}: from i64::MIN"
        );
        assert_eq!(
            cells(
                t,
                &row,
                ReadOptions::default()
                    .versions(10)
                    .time_range(TimeRange::before(i64::MAX - 1))
            ),
            all[1..].to_vec(),
            "{round}: before i64::MAX - 1"
        );
        let mut s = t
            .scan(ScanRequest {
                read: ReadOptions::default()
                    .versions(10)
                    .time_range(TimeRange::ALL),
                ..Default::default()
            })
            .expect("scan");
        let r = s.next_row().expect("scan row").expect("one row");
        assert_eq!(r.row(), &row);
        assert_eq!(r.cells.len(), 3, "{round}: scan");
        assert!(s.next_row().expect("scan end").is_none());
        f.reopen();
    }
    // Deleting at exactly i64::MAX - 1 removes only that version.
    f.tablet
        .mutate(
            &RowMutation::new(row.clone()).with(Mutation::DeleteVersion {
                family: b("f"),
                qualifier: b("q"),
                timestamp: i64::MAX - 1,
            }),
            Durability::Sync,
        )
        .expect("delete version");
    f.tablet.major_compact().expect("major compaction");
    assert_eq!(
        cells(&f.tablet, &row, ReadOptions::default().versions(10)),
        all[1..].to_vec()
    );
}

#[test]
fn values_over_the_limit_are_refused() {
    let f = fixture();
    let t = &f.tablet;
    let row = b("big");
    let largest = Bytes::from(vec![7u8; MAX_VALUE]);
    t.mutate(
        &RowMutation::new(row.clone()).put(b("f"), b("q"), 1, largest.clone()),
        Durability::Sync,
    )
    .expect("a value of exactly the maximum is accepted");
    let too_big = RowMutation::new(row.clone())
        .put(b("g"), b("q"), 2, b("small"))
        .put(b("f"), b("q"), 2, Bytes::from(vec![8u8; MAX_VALUE + 1]));
    let e = t.mutate(&too_big, Durability::Sync).unwrap_err();
    assert!(
        matches!(e, Error::ValueTooLarge { len, max } if len == MAX_VALUE + 1 && max == MAX_VALUE),
        "{e:?}"
    );
    assert_eq!(
        cells(t, &row, ReadOptions::latest()),
        vec![(b("f"), 1, largest)],
        "nothing of the refused mutation is applied"
    );
    // An append that would grow the value past the limit.
    let e = t
        .append(&row, &[(b("f"), b("q"), b("x"))], Durability::Sync)
        .unwrap_err();
    assert!(
        matches!(e, Error::ValueTooLarge { len, .. } if len == MAX_VALUE + 1),
        "{e:?}"
    );
    assert_eq!(cells(t, &row, ReadOptions::latest()).len(), 1);
    assert_eq!(cells(t, &row, ReadOptions::latest())[0].1, 1);
    assert_still_works(t, "value");
}

fn counter(t: &Tablet, row: &Bytes, q: &'static str) -> Bytes {
    let got = t
        .get(
            row,
            ReadOptions::latest().columns(vec![ColumnSelector::Column(b("f"), b(q))]),
        )
        .expect("get counter");
    assert_eq!(got.len(), 1, "counter {q} exists");
    got[0].value.clone()
}

#[test]
fn counters_refuse_bad_cells_and_overflow() {
    let f = fixture();
    let t = &f.tablet;
    let row = b("ctr");
    t.mutate(
        &RowMutation::new(row.clone())
            .put(b("f"), b("short"), 1, b("abc"))
            .put(b("f"), b("long"), 1, Bytes::from(vec![0u8; 9]))
            .put(
                b("f"),
                b("max"),
                1,
                Bytes::copy_from_slice(&i64::MAX.to_be_bytes()),
            )
            .put(
                b("f"),
                b("min"),
                1,
                Bytes::copy_from_slice(&i64::MIN.to_be_bytes()),
            ),
        Durability::Sync,
    )
    .expect("setup");

    for (q, len) in [("short", 3usize), ("long", 9)] {
        let e = t
            .increment(&row, &[(b("f"), b(q), 1)], Durability::Sync)
            .unwrap_err();
        assert!(
            matches!(&e, Error::NotACounter { column, len: l } if column == &format!("f:{q}") && *l == len),
            "{q}: {e:?}"
        );
        assert_still_works(t, "not a counter");
    }
    assert_eq!(counter(t, &row, "short"), b("abc"));

    let e = t
        .increment(&row, &[(b("f"), b("max"), 1)], Durability::Sync)
        .unwrap_err();
    assert!(
        matches!(&e, Error::CounterOverflow { column } if column == "f:max"),
        "{e:?}"
    );
    let e = t
        .increment(&row, &[(b("f"), b("min"), -1)], Durability::Sync)
        .unwrap_err();
    assert!(matches!(e, Error::CounterOverflow { .. }), "{e:?}");
    // An increment of several columns where one overflows changes none of them.
    let e = t
        .increment(
            &row,
            &[(b("f"), b("fresh"), 5), (b("f"), b("max"), 1)],
            Durability::Sync,
        )
        .unwrap_err();
    assert!(matches!(e, Error::CounterOverflow { .. }), "{e:?}");
    assert!(t
        .get(
            &row,
            ReadOptions::latest().columns(vec![ColumnSelector::Column(b("f"), b("fresh"))])
        )
        .expect("get")
        .is_empty());
    assert_eq!(counter(t, &row, "max"), &i64::MAX.to_be_bytes()[..]);
    assert_eq!(counter(t, &row, "min"), &i64::MIN.to_be_bytes()[..]);

    // The counters still work inside the range.
    let r = t
        .increment(
            &row,
            &[(b("f"), b("max"), -1), (b("f"), b("min"), 1)],
            Durability::Sync,
        )
        .expect("valid increment");
    assert_eq!(r[0].value, &(i64::MAX - 1).to_be_bytes()[..]);
    assert_eq!(r[1].value, &(i64::MIN + 1).to_be_bytes()[..]);
    assert_eq!(counter(t, &row, "max"), &(i64::MAX - 1).to_be_bytes()[..]);
    assert_still_works(t, "overflow");
}
