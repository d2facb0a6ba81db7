//! Reads of one column "as of T" go straight to the version through the block index
//! when no source holds delete markers, and collect markers first when one does.
//! Both paths must give the same answers: before any delete, with markers in the
//! memtable, in a file, and after a major compaction has dropped them.

mod common;

use bytes::Bytes;
use common::{open_engine, quiet_options};
use tabula_storage::types::{ColumnSelector, Mutation, TimeRange};
use tabula_storage::{Durability, FamilySchema, ReadOptions, RowMutation, TableSchema, Tablet};

const VERSIONS: i64 = 300;

fn column() -> Vec<ColumnSelector> {
    vec![ColumnSelector::Column(
        Bytes::from_static(b"f"),
        Bytes::from_static(b"q"),
    )]
}

/// The timestamp of the newest version before `t` of row `r`, as a get reads it.
fn as_of(tablet: &Tablet, r: &Bytes, t: i64) -> Option<i64> {
    newest_in(tablet, r, TimeRange::before(t))
}

/// The timestamp of the newest version of row `r` inside `range`.
fn newest_in(tablet: &Tablet, r: &Bytes, range: TimeRange) -> Option<i64> {
    let cells = tablet
        .get(r, ReadOptions::latest().columns(column()).time_range(range))
        .expect("get");
    assert!(cells.len() <= 1, "one version asked for: {cells:?}");
    cells.first().map(|c| {
        assert_eq!(c.value, Bytes::from(format!("v{}", c.timestamp)));
        c.timestamp
    })
}

/// What the reads must return once versions `deleted` and every version up to
/// `column_deleted_to` are gone.
fn expected(t: i64, deleted: &[i64], column_deleted_to: i64) -> Option<i64> {
    (1..t.min(VERSIONS + 1))
        .rev()
        .find(|ts| *ts > column_deleted_to && !deleted.contains(ts))
}

fn check(tablet: &Tablet, r: &Bytes, deleted: &[i64], column_deleted_to: i64, stage: &str) {
    for t in [
        2, 3, 40, 41, 51, 52, 100, 101, 102, 150, 299, 300, 301, 302, 1_000,
    ] {
        assert_eq!(
            as_of(tablet, r, t),
            expected(t, deleted, column_deleted_to),
            "as of {t}, {stage}"
        );
        // The inclusive form: the version at t itself when there is one.
        assert_eq!(
            newest_in(tablet, r, TimeRange::at_or_before(t)),
            expected(t + 1, deleted, column_deleted_to),
            "at or before {t}, {stage}"
        );
    }
    // T at or below the oldest version: nothing.
    assert_eq!(as_of(tablet, r, 1), None, "as of 1, {stage}");
}

#[test]
fn as_of_reads_agree_with_and_without_delete_markers() {
    let dir = tempfile::tempdir().expect("tempdir");
    let schema = TableSchema::new(
        "t",
        vec![FamilySchema::new(&b"f"[..]).max_versions(u32::MAX)],
    )
    .expect("schema");
    let (_engine, tablet) = open_engine(quiet_options(dir.path(), 1_000_000), schema);
    let r = Bytes::from_static(b"row");
    let neighbour = Bytes::from_static(b"row+");
    for ts in 1..=VERSIONS {
        let m = RowMutation::new(r.clone()).put(&b"f"[..], &b"q"[..], ts, format!("v{ts}"));
        tablet.mutate(&m, Durability::Async).expect("put");
    }
    // A later row and a longer qualifier: the seek past the column must not land
    // on them as if they were versions.
    let m = RowMutation::new(neighbour.clone()).put(&b"f"[..], &b"q"[..], 7, "v7");
    tablet.mutate(&m, Durability::Async).expect("put");
    let m = RowMutation::new(r.clone()).put(&b"f"[..], &b"qq"[..], 50, "other");
    tablet.mutate(&m, Durability::Async).expect("put");

    check(&tablet, &r, &[], 0, "no markers, memtable");
    tablet.flush().expect("flush");
    check(&tablet, &r, &[], 0, "no markers, file");
    assert_eq!(as_of(&tablet, &neighbour, 8), Some(7));
    assert_eq!(as_of(&tablet, &neighbour, 7), None);

    let deletes = RowMutation::new(r.clone())
        .with(Mutation::DeleteVersion {
            family: Bytes::from_static(b"f"),
            qualifier: Bytes::from_static(b"q"),
            timestamp: 100,
        })
        .with(Mutation::DeleteColumn {
            family: Bytes::from_static(b"f"),
            qualifier: Bytes::from_static(b"q"),
            timestamp: 40,
        });
    tablet.mutate(&deletes, Durability::Async).expect("delete");
    check(&tablet, &r, &[100], 40, "markers in the memtable");
    tablet.flush().expect("flush");
    check(&tablet, &r, &[100], 40, "markers in a file");

    // A family-wide delete of one version: a marker before every column.
    let family_version = RowMutation::new(r.clone()).with(Mutation::DeleteFamilyVersion {
        family: Bytes::from_static(b"f"),
        timestamp: 300,
    });
    tablet
        .mutate(&family_version, Durability::Async)
        .expect("delete");
    check(
        &tablet,
        &r,
        &[100, 300],
        40,
        "family marker in the memtable",
    );

    tablet.major_compact().expect("major compaction");
    check(&tablet, &r, &[100, 300], 40, "after major compaction");
    assert_eq!(as_of(&tablet, &neighbour, 8), Some(7));
}
