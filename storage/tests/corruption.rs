//! Damaged files are detected, never read as wrong data.
//!
//! - A flipped byte anywhere in an SSTable written by the engine (data blocks,
//!   bloom, meta, index, footer; compressed and uncompressed families) makes the
//!   tablet refuse to open or a read touching the damage fail with Corruption;
//!   every read that succeeds returns exactly the written data.
//! - A flipped byte in a commit-log record of the newest segment ends replay there
//!   (the records from the flip onward are lost, nothing else); in an earlier
//!   segment, or in any segment header, it fails the engine's open with Corruption
//!   and leaves the log intact for a retry.
//! - A torn log tail (the newest segment cut at any length) is truncated on replay:
//!   every record that ends before the cut is present, later ones are absent, and
//!   the tablet keeps working across further restarts.
//! - A damaged MANIFEST or recovered-edits file is reported; a missing SSTable is
//!   an error.

mod common;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use bytes::Bytes;
use rand::Rng;
use tabula_storage::{
    Cell, Durability, Engine, EngineOptions, Error, ReadOptions, RowMutation, ScanRequest, Tablet,
};

const NOW: i64 = 1_700_000_000_000;

type Expected = BTreeMap<Bytes, Vec<Cell>>;

fn row_key(i: usize) -> Bytes {
    Bytes::from(format!("row{i:05}"))
}

/// The mutation written for row `i`: a put to each family with values derived
/// from `i` (compressible in `z`, varied in `a`).
fn row_mutation(i: usize) -> RowMutation {
    let a: Vec<u8> = (0..(i % 37 + 3)).map(|k| (i * 31 + k * 7) as u8).collect();
    let z = format!("{i:06}-").repeat(i % 9 + 4);
    RowMutation::new(row_key(i))
        .put(
            Bytes::from_static(b"a"),
            Bytes::from_static(b"q"),
            100 + i as i64,
            a,
        )
        .put(
            Bytes::from_static(b"z"),
            Bytes::from_static(b"q"),
            100 + i as i64,
            z,
        )
}

fn expected_cells(i: usize) -> Vec<Cell> {
    let rm = row_mutation(i);
    rm.mutations
        .iter()
        .map(|m| match m {
            tabula_storage::Mutation::Put {
                family,
                qualifier,
                timestamp,
                value,
            } => Cell {
                row: rm.row.clone(),
                family: family.clone(),
                qualifier: qualifier.clone(),
                timestamp: *timestamp,
                value: value.clone(),
            },
            other => unreachable!("only puts are written: {other:?}"),
        })
        .collect()
}

fn write_rows(t: &Tablet, rows: std::ops::Range<usize>, durability: Durability) -> Expected {
    let mut out = Expected::new();
    for i in rows {
        t.mutate(&row_mutation(i), durability).expect("write");
        out.insert(row_key(i), expected_cells(i));
    }
    out
}

fn options(dir: &Path) -> EngineOptions {
    common::quiet_options(dir, NOW)
}

/// Reads every row by a forward scan, a reverse scan and gets. Each read either
/// fails with Corruption or returns exactly `expected`'s data; returns whether any
/// read failed.
fn reads_fail_or_match(t: &Tablet, expected: &Expected, what: &str) -> bool {
    let mut failed = false;
    for reverse in [false, true] {
        let mut got = Vec::new();
        let outcome: Result<(), Error> = (|| {
            let mut s = t.scan(ScanRequest {
                reverse,
                read: ReadOptions::latest(),
                ..Default::default()
            })?;
            while let Some(r) = s.next_row()? {
                got.push(r);
            }
            Ok(())
        })();
        let mut want: Vec<(&Bytes, &Vec<Cell>)> = expected.iter().collect();
        if reverse {
            want.reverse();
        }
        for (r, (row, cells)) in got.iter().zip(&want) {
            assert_eq!(r.row(), *row, "{what}: scan (reverse={reverse}) row order");
            assert_eq!(&r.cells, *cells, "{what}: scan (reverse={reverse}) cells");
        }
        match outcome {
            Ok(()) => assert_eq!(got.len(), want.len(), "{what}: scan found every row"),
            Err(e) => {
                assert!(common::is_corruption(&e), "{what}: scan error {e:?}");
                assert!(got.len() <= want.len());
                failed = true;
            }
        }
    }
    for (row, cells) in expected.iter().step_by(7) {
        match t.get(row, ReadOptions::latest()) {
            Ok(got) => assert_eq!(&got, cells, "{what}: get {row:?}"),
            Err(e) => {
                assert!(common::is_corruption(&e), "{what}: get error {e:?}");
                failed = true;
            }
        }
    }
    failed
}

/// Offsets worth damaging in an SSTable: the edges and middle of each block's
/// payload, its type byte and CRC, every footer field, and some random bytes.
fn sst_targets(layout: &common::SstLayout, rng: &mut impl Rng) -> Vec<(u64, String)> {
    let mut out = Vec::new();
    let block = |name: String, h: common::Handle, out: &mut Vec<(u64, String)>| {
        if h.size > 0 {
            out.push((h.offset, format!("{name} first byte")));
            out.push((h.offset + h.size / 2, format!("{name} middle")));
            out.push((h.offset + h.size - 1, format!("{name} last payload byte")));
        }
        out.push((h.type_byte(), format!("{name} compression type")));
        out.push((h.last_byte(), format!("{name} crc")));
    };
    let n = layout.data_blocks.len();
    assert!(n >= 3, "the file has several data blocks ({n})");
    for i in [0, n / 2, n - 1] {
        block(format!("data block {i}"), layout.data_blocks[i], &mut out);
    }
    block("bloom".into(), layout.bloom, &mut out);
    block("meta".into(), layout.meta, &mut out);
    block("index".into(), layout.index, &mut out);
    for (field, at) in [
        ("index offset", 0),
        ("index size", 8),
        ("bloom offset", 16),
        ("bloom size", 24),
        ("meta offset", 32),
        ("meta size", 40),
        ("version", 48),
        ("magic", 52),
        ("crc", 60),
        ("last byte", 63),
    ] {
        out.push((layout.footer_start + at, format!("footer {field}")));
    }
    for _ in 0..8 {
        out.push((rng.gen_range(0..layout.len), "random byte".into()));
    }
    out
}

#[test]
fn flipped_bytes_in_sstables_are_detected() {
    let (mut rng, seed) = common::seeded_rng("flipped_bytes_in_sstables_are_detected");
    let dir = tempfile::tempdir().expect("tempdir");
    let schema = common::two_family_schema();
    let mut expected = Expected::new();
    {
        let (engine, t) = common::open_engine(options(dir.path()), schema.clone());
        expected.extend(write_rows(&t, 0..300, Durability::Async));
        t.flush().expect("flush");
        expected.extend(write_rows(&t, 300..420, Durability::Async));
        t.flush().expect("flush");
        drop(t);
        engine.shutdown().expect("shutdown");
    }
    let ssts = common::files_with_suffix(&dir.path().join("tablets"), ".sst");
    assert_eq!(ssts.len(), 4, "two flushes of two families: {ssts:?}");
    // The undamaged files read back exactly.
    {
        let (_engine, t) = common::open_engine(options(dir.path()), schema.clone());
        assert!(!reads_fail_or_match(&t, &expected, "undamaged"));
    }
    let mut trials = 0;
    for sst in &ssts {
        let layout = common::sst_layout(sst);
        for (offset, part) in sst_targets(&layout, &mut rng) {
            let mask = rng.gen_range(1..=255u8);
            let what = format!(
                "seed {seed}: {} offset {offset} ({part}) ^ {mask:#04x}",
                sst.display()
            );
            let original = common::flip_byte(sst, offset, mask);
            let engine = Engine::open(options(dir.path())).expect("engine opens");
            let detected = match engine.open_tablet(common::whole_table(1, schema.clone())) {
                Err(e) => {
                    assert!(common::is_corruption(&e), "{what}: open error {e:?}");
                    true
                }
                Ok(t) => reads_fail_or_match(&t, &expected, &what),
            };
            assert!(detected, "{what}: the damage went unnoticed");
            drop(engine);
            common::restore_byte(sst, offset, original);
            trials += 1;
        }
    }
    assert!(trials > 100, "{trials} flips tried");
    // Restored, everything reads back again.
    let (_engine, t) = common::open_engine(options(dir.path()), schema);
    assert!(!reads_fail_or_match(&t, &expected, "restored"));
}

/// A data directory holding unflushed writes in the commit log only: rows
/// `0..rows`, row `i` logged with sequence number `i + 1`.
fn logged_only(rows: usize, segment_size: u64) -> (tempfile::TempDir, Expected) {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut opts = options(dir.path());
    opts.log_segment_size = segment_size;
    let (engine, t) = common::open_engine(opts, common::two_family_schema());
    let expected = write_rows(&t, 0..rows, Durability::Async);
    // Dropping without a flush: only the log (fsynced at close) holds the rows.
    drop(t);
    drop(engine);
    (dir, expected)
}

fn segments(dir: &Path) -> Vec<PathBuf> {
    common::files_with_suffix(&dir.join("log"), ".log")
}

/// Opens `dir` and checks that exactly rows `0..present` of `expected` are there.
fn assert_exactly_rows(dir: &Path, expected: &Expected, present: usize, what: &str) {
    let (_engine, t) = common::open_engine(options(dir), common::two_family_schema());
    let want: Expected = expected
        .iter()
        .take(present)
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    assert!(
        !reads_fail_or_match(&t, &want, what),
        "{what}: reads failed"
    );
    for i in present..expected.len() {
        assert!(
            t.get(&row_key(i), ReadOptions::latest())
                .expect("get")
                .is_empty(),
            "{what}: row {i} was not durable but is present"
        );
    }
}

/// After a lossy recovery the tablet keeps working: new writes survive another
/// crash-like restart together with what was recovered.
fn assert_keeps_working(dir: &Path, expected: &Expected, present: usize, what: &str) {
    {
        let (engine, t) = common::open_engine(options(dir), common::two_family_schema());
        t.mutate(&row_mutation(99_999), Durability::Sync)
            .expect("write after recovery");
        drop(t);
        drop(engine);
    }
    let mut want: Expected = expected
        .iter()
        .take(present)
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    want.insert(row_key(99_999), expected_cells(99_999));
    let (_engine, t) = common::open_engine(options(dir), common::two_family_schema());
    assert!(
        !reads_fail_or_match(&t, &want, what),
        "{what}: second restart"
    );
}

#[test]
fn flipped_byte_in_the_newest_log_segment_ends_replay_there() {
    let (mut rng, seed) =
        common::seeded_rng("flipped_byte_in_the_newest_log_segment_ends_replay_there");
    let rows = 150;
    let (pristine, expected) = logged_only(rows, 64 << 20);
    let segs = segments(pristine.path());
    assert_eq!(segs.len(), 1, "one segment: {segs:?}");
    let records = common::log_records(&segs[0]);
    assert_eq!(records.len(), rows);
    for (i, r) in records.iter().enumerate() {
        assert_eq!((r.tablet_id, r.seq), (1, i as u64 + 1), "record {i}");
    }
    let mut picks = vec![0, 1, rows / 2, rows - 1];
    picks.extend((0..6).map(|_| rng.gen_range(0..rows)));
    for k in picks {
        let rec = records[k];
        let offset = rng.gen_range(rec.offset..rec.end());
        let mask = rng.gen_range(1..=255u8);
        let what = format!("seed {seed}: record {k}, offset {offset} ^ {mask:#04x}");
        let work = tempfile::tempdir().expect("tempdir");
        common::copy_dir(pristine.path(), work.path());
        let seg = work
            .path()
            .join("log")
            .join(segs[0].file_name().expect("name"));
        common::flip_byte(&seg, offset, mask);
        assert_exactly_rows(work.path(), &expected, k, &what);
        assert_keeps_working(work.path(), &expected, k, &what);
    }
}

#[test]
fn flipped_byte_in_an_earlier_log_segment_is_corruption() {
    let (mut rng, seed) =
        common::seeded_rng("flipped_byte_in_an_earlier_log_segment_is_corruption");
    let rows = 200;
    let (pristine, expected) = logged_only(rows, 4096);
    let segs = segments(pristine.path());
    assert!(segs.len() >= 4, "several segments: {segs:?}");
    let mut targets: Vec<(usize, u64, String)> = Vec::new();
    for (s, seg) in segs.iter().enumerate() {
        let records = common::log_records(seg);
        // A damaged header is corruption wherever the segment is.
        let h = rng.gen_range(0..common::LOG_HEADER_LEN);
        targets.push((s, h, format!("segment {s} header byte {h}")));
        if s + 1 < segs.len() {
            let rec = records[rng.gen_range(0..records.len())];
            let at = rng.gen_range(rec.offset..rec.end());
            targets.push((s, at, format!("segment {s} record at {}", rec.offset)));
        }
    }
    for (s, offset, part) in targets {
        let mask = rng.gen_range(1..=255u8);
        let what = format!("seed {seed}: {part}, offset {offset} ^ {mask:#04x}");
        let work = tempfile::tempdir().expect("tempdir");
        common::copy_dir(pristine.path(), work.path());
        let seg = work
            .path()
            .join("log")
            .join(segs[s].file_name().expect("name"));
        let original = common::flip_byte(&seg, offset, mask);
        match Engine::open(options(work.path())) {
            Err(e) => assert!(common::is_corruption(&e), "{what}: {e:?}"),
            Ok(_) => panic!("{what}: the engine opened over a corrupt log"),
        }
        // The failed open destroyed nothing: repaired, every row comes back.
        common::restore_byte(&seg, offset, original);
        assert_exactly_rows(work.path(), &expected, rows, &what);
    }
}

#[test]
fn torn_log_tail_keeps_every_record_before_the_tear() {
    let (mut rng, seed) = common::seeded_rng("torn_log_tail_keeps_every_record_before_the_tear");
    let rows = 160;
    let (pristine, expected) = logged_only(rows, 6000);
    let segs = segments(pristine.path());
    assert!(segs.len() >= 2, "several segments: {segs:?}");
    let last = segs.last().expect("a segment");
    let records = common::log_records(last);
    let first_seq = records.first().expect("records in the last segment").seq;
    let full = std::fs::metadata(last).expect("stat").len();
    let mut cuts = vec![
        common::LOG_HEADER_LEN,
        common::LOG_HEADER_LEN + 1,
        records[0].end(),
        records[0].end() + 7,
        records[records.len() / 2].offset + 8,
        full - 1,
        full,
    ];
    cuts.extend((0..14).map(|_| rng.gen_range(common::LOG_HEADER_LEN..=full)));
    for cut in cuts {
        let whole = records.iter().filter(|r| r.end() <= cut).count();
        // Rows of earlier segments, then the whole records before the cut.
        let present = (first_seq - 1) as usize + whole;
        let what = format!("seed {seed}: cut at {cut} of {full}, {whole} whole records");
        let work = tempfile::tempdir().expect("tempdir");
        common::copy_dir(pristine.path(), work.path());
        let seg = work
            .path()
            .join("log")
            .join(last.file_name().expect("name"));
        let f = std::fs::OpenOptions::new()
            .write(true)
            .open(&seg)
            .expect("open segment");
        f.set_len(cut).expect("truncate");
        drop(f);
        assert_exactly_rows(work.path(), &expected, present, &what);
        assert_keeps_working(work.path(), &expected, present, &what);
    }
}

/// A data directory whose rows are all in SSTables and whose log is empty.
fn flushed_dir(rows: usize) -> (tempfile::TempDir, Expected) {
    let dir = tempfile::tempdir().expect("tempdir");
    let (engine, t) = common::open_engine(options(dir.path()), common::two_family_schema());
    let expected = write_rows(&t, 0..rows, Durability::Sync);
    drop(t);
    engine.shutdown().expect("shutdown");
    drop(engine);
    // A second clean run consumes the first run's log segment.
    let (engine, t) = common::open_engine(options(dir.path()), common::two_family_schema());
    drop(t);
    engine.shutdown().expect("shutdown");
    (dir, expected)
}

fn open_tablet_error(dir: &Path) -> Error {
    let engine = Engine::open(options(dir)).expect("engine opens");
    match engine.open_tablet(common::whole_table(1, common::two_family_schema())) {
        Ok(_) => panic!("the tablet opened over a damaged file"),
        Err(e) => e,
    }
}

#[test]
fn corrupted_manifest_is_reported() {
    let (pristine, expected) = flushed_dir(50);
    let manifest = pristine.path().join("tablets").join("1").join("MANIFEST");
    let len = std::fs::metadata(&manifest).expect("manifest").len();
    for offset in 0..len {
        let work = tempfile::tempdir().expect("tempdir");
        common::copy_dir(pristine.path(), work.path());
        let m = work.path().join("tablets").join("1").join("MANIFEST");
        common::flip_byte(&m, offset, 0x04);
        let e = open_tablet_error(work.path());
        assert!(common::is_corruption(&e), "flip at {offset}: {e:?}");
    }
    for cut in [0, 1, 4, len / 2, len - 1] {
        let work = tempfile::tempdir().expect("tempdir");
        common::copy_dir(pristine.path(), work.path());
        let m = work.path().join("tablets").join("1").join("MANIFEST");
        let bytes = std::fs::read(&m).expect("read");
        std::fs::write(&m, &bytes[..cut as usize]).expect("truncate");
        let e = open_tablet_error(work.path());
        assert!(common::is_corruption(&e), "cut at {cut}: {e:?}");
    }
    // A file the manifest lists has disappeared: an error, not an empty tablet.
    {
        let work = tempfile::tempdir().expect("tempdir");
        common::copy_dir(pristine.path(), work.path());
        let ssts = common::files_with_suffix(&work.path().join("tablets"), ".sst");
        assert!(!ssts.is_empty());
        std::fs::remove_file(&ssts[0]).expect("remove");
        let e = open_tablet_error(work.path());
        assert!(
            matches!(e, Error::Io { .. } | Error::Corruption { .. }),
            "missing file: {e:?}"
        );
    }
    // The undamaged directory opens with every row.
    assert_exactly_rows(pristine.path(), &expected, expected.len(), "pristine");
}

#[test]
fn flipped_byte_in_recovered_edits_is_corruption() {
    let (mut rng, seed) = common::seeded_rng("flipped_byte_in_recovered_edits_is_corruption");
    let (pristine, expected) = logged_only(40, 64 << 20);
    // An engine start splits the log into recovered edits; the tablet is not
    // opened, so the edits wait in its directory.
    drop(Engine::open(options(pristine.path())).expect("engine opens"));
    let edits = common::files_with_suffix(&pristine.path().join("tablets"), ".edits");
    assert_eq!(edits.len(), 1, "{edits:?}");
    let len = std::fs::metadata(&edits[0]).expect("stat").len();
    for _ in 0..12 {
        let offset = rng.gen_range(0..len);
        let mask = rng.gen_range(1..=255u8);
        let work = tempfile::tempdir().expect("tempdir");
        common::copy_dir(pristine.path(), work.path());
        let e = common::files_with_suffix(&work.path().join("tablets"), ".edits");
        common::flip_byte(&e[0], offset, mask);
        let err = open_tablet_error(work.path());
        assert!(
            common::is_corruption(&err),
            "seed {seed}: flip at {offset}: {err:?}"
        );
    }
    // Undamaged, the edits replay every row.
    assert_exactly_rows(pristine.path(), &expected, expected.len(), "edits");
}
