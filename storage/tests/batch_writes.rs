//! Batches of RowMutations (`Tablet::mutate_batch`, what a client's batch of puts
//! becomes): each row applied on its own with its own outcome, one wait for the
//! commit log for the whole batch, and every acknowledged row in the log when the
//! call returns, so a copy of the data directory taken then (what a kill -9 would
//! leave) replays them all.

mod common;

use bytes::Bytes;
use common::{copy_dir, open_engine, open_range, quiet_options, whole_table};
use tabula_storage::{
    Durability, Engine, Error, FamilySchema, ReadOptions, RowMutation, TableSchema, Tablet,
};

fn schema() -> TableSchema {
    TableSchema::new("t", vec![FamilySchema::new(&b"f"[..]).max_versions(1)]).expect("schema")
}

fn row(i: usize) -> Bytes {
    Bytes::from(format!("row{i:04}"))
}

fn value_of(t: &Tablet, r: &Bytes) -> Option<Bytes> {
    let cells = t.get(r, ReadOptions::latest()).expect("get");
    cells.first().map(|c| c.value.clone())
}

#[test]
fn a_batch_applies_each_row_and_reports_each_failure() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (engine, tablet) = open_engine(quiet_options(dir.path(), 1_000), schema());
    let batch: Vec<RowMutation> = (0..300)
        .map(|i| {
            // Every 50th row names a family the table does not have.
            let family = if i % 50 == 7 { &b"nope"[..] } else { &b"f"[..] };
            RowMutation::new(row(i)).put(family, &b"q"[..], 5, format!("v{i}"))
        })
        .collect();
    let results = tablet.mutate_batch(&batch, Durability::Sync);
    assert_eq!(results.len(), batch.len());
    for (i, r) in results.iter().enumerate() {
        if i % 50 == 7 {
            assert!(
                matches!(r, Err(Error::UnknownFamily { .. })),
                "row {i}: {r:?}"
            );
            assert_eq!(value_of(&tablet, &row(i)), None, "row {i}");
        } else {
            assert!(r.is_ok(), "row {i}: {r:?}");
            assert_eq!(
                value_of(&tablet, &row(i)),
                Some(Bytes::from(format!("v{i}"))),
                "row {i}"
            );
        }
    }

    // The directory as the process left it, with nothing flushed: the log alone
    // must bring back every acknowledged row.
    let copy = tempfile::tempdir().expect("tempdir");
    copy_dir(dir.path(), copy.path());
    let reopened = Engine::open(quiet_options(copy.path(), 1_000)).expect("engine reopens");
    let t = reopened
        .open_tablet(whole_table(1, schema()))
        .expect("tablet reopens");
    for i in (0..300).filter(|i| i % 50 != 7) {
        assert_eq!(
            value_of(&t, &row(i)),
            Some(Bytes::from(format!("v{i}"))),
            "row {i} after replay"
        );
    }
    drop(engine);
}

#[test]
fn a_batch_may_write_one_row_twice_and_skips_empty_mutations() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (_engine, tablet) = open_engine(quiet_options(dir.path(), 1_000), schema());
    let batch = vec![
        RowMutation::new(row(1)).put(&b"f"[..], &b"q"[..], 5, "first"),
        RowMutation::new(row(2)),
        RowMutation::new(row(1)).put(&b"f"[..], &b"q"[..], 6, "second"),
    ];
    let results = tablet.mutate_batch(&batch, Durability::Async);
    assert!(results.iter().all(Result::is_ok), "{results:?}");
    assert_eq!(value_of(&tablet, &row(1)), Some(Bytes::from("second")));
    assert_eq!(value_of(&tablet, &row(2)), None);
}

#[test]
fn one_engine_batch_spans_tablets_and_names_the_missing_ones() {
    let dir = tempfile::tempdir().expect("tempdir");
    let engine = Engine::open(quiet_options(dir.path(), 1_000)).expect("engine opens");
    let halves = [(1u64, "", "row0100"), (2, "row0100", "")];
    for (id, start, end) in halves {
        open_range(&engine, id, schema(), start, end);
    }
    let put = |i: usize| RowMutation::new(row(i)).put(&b"f"[..], &b"q"[..], 5, format!("v{i}"));
    let low: Vec<RowMutation> = (0..100).map(put).collect();
    let high: Vec<RowMutation> = (100..200).map(put).collect();
    let low: Vec<&RowMutation> = low.iter().collect();
    let high: Vec<&RowMutation> = high.iter().collect();
    let groups = [(1u64, &low[..]), (9, &high[..]), (2, &high[..])];
    let outcome = engine.mutate_batches(&groups, Durability::Sync);
    assert_eq!(outcome.len(), 3);
    assert!(outcome[0]
        .as_ref()
        .is_ok_and(|r| r.len() == 100 && r.iter().all(Result::is_ok)));
    assert!(
        matches!(outcome[1], Err(Error::TabletNotOpen { tablet: 9 })),
        "{:?}",
        outcome[1].as_ref().err()
    );
    assert!(outcome[2]
        .as_ref()
        .is_ok_and(|r| r.len() == 100 && r.iter().all(Result::is_ok)));

    let copy = tempfile::tempdir().expect("tempdir");
    copy_dir(dir.path(), copy.path());
    let reopened = Engine::open(quiet_options(copy.path(), 1_000)).expect("engine reopens");
    for (id, start, end) in halves {
        let t = open_range(&reopened, id, schema(), start, end);
        let rows = if id == 1 { 0..100 } else { 100..200 };
        for i in rows {
            assert_eq!(
                value_of(&t, &row(i)),
                Some(Bytes::from(format!("v{i}"))),
                "row {i} after replay"
            );
        }
    }
    drop(engine);
}
