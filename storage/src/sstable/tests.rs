//! Whole-file tests: write, open, iterate, damage.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use proptest::prelude::*;

use super::footer::{Footer, FOOTER_LEN};
use super::*;
use crate::cache::BlockCache;
use crate::error::Error;
use crate::iter::KvIter;
use crate::key::{self, KeyKind};
use crate::schema::{BloomType, Compression};

type Model = BTreeMap<Vec<u8>, Vec<u8>>;

fn kind() -> impl Strategy<Value = KeyKind> {
    prop_oneof![
        Just(KeyKind::DeleteFamily),
        Just(KeyKind::DeleteFamilyVersion),
        Just(KeyKind::DeleteColumn),
        Just(KeyKind::DeleteVersion),
        Just(KeyKind::Put),
        Just(KeyKind::Put),
        Just(KeyKind::Put),
    ]
}

fn row() -> impl Strategy<Value = Vec<u8>> {
    proptest::collection::vec(
        prop_oneof![Just(0u8), Just(b'a'), Just(b'b'), any::<u8>()],
        1..5,
    )
}

fn internal_key() -> impl Strategy<Value = Vec<u8>> {
    (
        row(),
        proptest::collection::vec(prop_oneof![Just(0u8), Just(b'q'), any::<u8>()], 0..3),
        kind(),
        prop_oneof![Just(i64::MIN), Just(i64::MAX), -5i64..5, any::<i64>()],
        prop_oneof![0u64..10, any::<u64>()],
    )
        .prop_map(|(r, q, k, ts, seq)| key::encode(&r, b"f", &q, k, ts, seq))
}

fn value() -> impl Strategy<Value = Vec<u8>> {
    prop_oneof![
        proptest::collection::vec(any::<u8>(), 0..40),
        (any::<u8>(), 0usize..80).prop_map(|(b, n)| vec![b; n]),
    ]
}

fn write(path: &Path, model: &Model, opts: SstOptions) -> SstMeta {
    let mut w = SstWriter::create(path, opts).unwrap();
    for (k, v) in model {
        w.add(k, v).unwrap();
    }
    w.finish().unwrap()
}

fn scan(it: &mut impl KvIter) -> Vec<(Vec<u8>, Vec<u8>)> {
    let mut out = Vec::new();
    while it.valid() {
        out.push((it.key().to_vec(), it.value().to_vec()));
        it.next().unwrap();
    }
    out
}

/// The seek targets worth trying against `model`: its keys, their neighbours and
/// row bounds, plus arbitrary bytes.
fn targets(model: &Model, extra: &[Vec<u8>]) -> Vec<Vec<u8>> {
    let mut out: Vec<Vec<u8>> = extra.to_vec();
    out.push(Vec::new());
    out.push(vec![0xFF; 4]);
    for (i, k) in model.keys().enumerate() {
        if i % 3 != 0 {
            continue;
        }
        out.push(k.clone());
        let mut after = k.clone();
        after.push(0);
        out.push(after);
        let mut before = k.clone();
        before.pop();
        out.push(before);
        if let Some(r) = key::row_of(k) {
            out.push(key::row_start(&r));
            out.push(key::row_end(&r));
        }
    }
    out
}

fn check_against_model(reader: &Arc<SstReader>, model: &Model, extra: &[Vec<u8>]) {
    let all: Vec<_> = model.iter().map(|(k, v)| (k.clone(), v.clone())).collect();
    let mut it = reader.iter();
    it.seek_to_first().unwrap();
    assert_eq!(scan(&mut it), all);
    for t in targets(model, extra) {
        it.seek(&t).unwrap();
        let expect = model.range(t.clone()..).next();
        assert_eq!(
            it.valid().then(|| (it.key(), it.value())),
            expect.map(|(k, v)| (k.as_slice(), v.as_slice())),
            "seek {t:?}"
        );
        it.seek_for_prev(&t).unwrap();
        let expect = model.range(..t.clone()).next_back();
        assert_eq!(
            it.valid().then(|| (it.key(), it.value())),
            expect.map(|(k, v)| (k.as_slice(), v.as_slice())),
            "seek_for_prev {t:?}"
        );
        if let Some((prev, _)) = expect {
            it.next().unwrap();
            let after = model
                .range::<Vec<u8>, _>((std::ops::Bound::Excluded(prev), std::ops::Bound::Unbounded))
                .next()
                .map(|(k, _)| k.as_slice());
            assert_eq!(
                it.valid().then(|| it.key()),
                after,
                "next after seek_for_prev {t:?}"
            );
        }
    }
}

fn expected_meta(model: &Model) -> (u64, u64, u64, u64, i64, i64) {
    let tails: Vec<_> = model.keys().map(|k| key::tail(k).unwrap()).collect();
    (
        model.len() as u64,
        tails.iter().filter(|t| t.kind != KeyKind::Put).count() as u64,
        tails.iter().map(|t| t.seq).min().unwrap_or(0),
        tails.iter().map(|t| t.seq).max().unwrap_or(0),
        tails.iter().map(|t| t.timestamp).min().unwrap_or(0),
        tails.iter().map(|t| t.timestamp).max().unwrap_or(0),
    )
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    #[test]
    fn roundtrip_matches_model(
        model in proptest::collection::btree_map(internal_key(), value(), 0..300),
        block_size in prop_oneof![Just(1usize), Just(48), Just(200), Just(1024), Just(64 * 1024)],
        restart_interval in prop_oneof![Just(1usize), Just(3), Just(16)],
        compression in prop_oneof![Just(Compression::None), Just(Compression::Zstd(1)), Just(Compression::Zstd(6))],
        extra in proptest::collection::vec(proptest::collection::vec(any::<u8>(), 0..12), 0..6),
    ) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.sst");
        let opts = SstOptions { block_size, restart_interval, compression, bloom: BloomType::RowCol, ..SstOptions::default() };
        let written = write(&path, &model, opts);
        let reader = SstReader::open(&path, 1, None).unwrap();
        prop_assert_eq!(reader.meta(), &written);
        prop_assert_eq!(reader.file_size(), std::fs::metadata(&path).unwrap().len());
        prop_assert_eq!(written.file_size, reader.file_size());

        let m = reader.meta();
        let (count, deletes, min_seq, max_seq, min_ts, max_ts) = expected_meta(&model);
        prop_assert_eq!(m.entry_count, count);
        prop_assert_eq!(m.delete_count, deletes);
        prop_assert_eq!((m.min_seq, m.max_seq), (min_seq, max_seq));
        prop_assert_eq!((m.min_timestamp, m.max_timestamp), (min_ts, max_ts));
        prop_assert_eq!(&m.smallest_key, &model.keys().next().cloned().unwrap_or_default());
        prop_assert_eq!(&m.largest_key, &model.keys().next_back().cloned().unwrap_or_default());
        prop_assert_eq!(m.format_version, FORMAT_VERSION);
        if block_size == 1 {
            prop_assert_eq!(m.block_count, count);
        }

        check_against_model(&reader, &model, &extra);

        for k in model.keys() {
            let p = key::decode(k).unwrap();
            prop_assert!(reader.may_contain_row(&p.row));
            if !p.kind.is_family_scope() {
                prop_assert!(reader.may_contain_column(&p.row, &p.qualifier));
            }
        }
    }
}

/// A small deterministic data set touching every key kind.
fn small_model(rows: u32) -> Model {
    let mut model = Model::new();
    for r in 0..rows {
        let row = format!("row-{r:05}").into_bytes();
        model.insert(
            key::encode(&row, b"f", b"", KeyKind::DeleteFamily, 100, u64::from(r)),
            Vec::new(),
        );
        for q in 0..3u32 {
            let qual = format!("q{q}").into_bytes();
            for ts in [30i64, 20] {
                let v = format!("value {r} {q} {ts} ").repeat(3).into_bytes();
                model.insert(
                    key::encode(&row, b"f", &qual, KeyKind::Put, ts, u64::from(r * 10 + q)),
                    v,
                );
            }
        }
    }
    model
}

fn small_opts(compression: Compression) -> SstOptions {
    SstOptions {
        block_size: 256,
        restart_interval: 4,
        compression,
        bloom: BloomType::RowCol,
        bloom_bits_per_key: 10,
    }
}

fn is_corruption(e: &Error) -> bool {
    matches!(e, Error::Corruption { .. })
}

/// Opens `bytes` as a file and scans it. Returns whether an error was reported;
/// panics if the error is not corruption or if any yielded entry differs from
/// the model's entry at that position.
fn damaged_file_is_caught(path: &Path, bytes: &[u8], model: &Model, what: &str) -> bool {
    std::fs::write(path, bytes).unwrap();
    let reader = match SstReader::open(path, 9, None) {
        Err(e) => {
            assert!(is_corruption(&e), "{what}: open failed with {e}");
            return true;
        }
        Ok(r) => r,
    };
    let mut expected = model.iter();
    let mut it = reader.iter();
    let mut step = it.seek_to_first();
    loop {
        if let Err(e) = step {
            assert!(is_corruption(&e), "{what}: scan failed with {e}");
            return true;
        }
        if !it.valid() {
            return false;
        }
        let (k, v) = expected
            .next()
            .unwrap_or_else(|| panic!("{what}: more entries than written"));
        assert_eq!(
            (it.key(), it.value()),
            (k.as_slice(), v.as_slice()),
            "{what}: wrong data"
        );
        step = it.next();
    }
}

#[test]
fn every_flipped_byte_is_reported_as_corruption() {
    for compression in [Compression::None, Compression::Zstd(3)] {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("good.sst");
        let model = small_model(6);
        let meta = write(&path, &model, small_opts(compression));
        assert!(
            meta.block_count >= 4,
            "want several blocks, got {}",
            meta.block_count
        );
        let good = std::fs::read(&path).unwrap();
        let bad_path = dir.path().join("bad.sst");
        for pos in 0..good.len() {
            for mask in [0x01u8, 0x80] {
                let mut bad = good.clone();
                bad[pos] ^= mask;
                let what = format!("{compression:?} flip {mask:#04x} at {pos}/{}", good.len());
                assert!(
                    damaged_file_is_caught(&bad_path, &bad, &model, &what),
                    "{what}: not detected"
                );
            }
        }
    }
}

#[test]
fn sampled_flips_in_a_larger_file_are_reported() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("big.sst");
    let model = small_model(400);
    let opts = SstOptions {
        block_size: 2048,
        ..small_opts(Compression::Zstd(3))
    };
    write(&path, &model, opts);
    let good = std::fs::read(&path).unwrap();
    let reader = SstReader::open(&path, 1, None).unwrap();
    let footer_at = good.len() - FOOTER_LEN;
    let footer = Footer::decode(&good[footer_at..]).unwrap();

    let mut positions = Vec::new();
    let mut cover = |start: u64, stored_len: u64, stride: u64| {
        let end = start + stored_len;
        positions.extend((start..end).step_by(stride as usize));
        positions.extend([start, start + stored_len / 2, end - 5, end - 4, end - 1]);
    };
    for h in reader.data_block_handles() {
        cover(h.offset, h.stored_len().unwrap(), 997);
    }
    for h in [footer.index, footer.bloom, footer.meta] {
        cover(h.offset, h.stored_len().unwrap(), 13);
    }
    cover(footer_at as u64, FOOTER_LEN as u64, 1);
    assert!(positions.len() > 500);
    let bad_path = dir.path().join("bad.sst");
    for pos in positions {
        let mut bad = good.clone();
        bad[pos as usize] ^= 0x10;
        let what = format!("flip at {pos}/{}", good.len());
        assert!(
            damaged_file_is_caught(&bad_path, &bad, &model, &what),
            "{what}: not detected"
        );
    }
}

#[test]
fn truncated_files_fail_to_open() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("t.sst");
    write(&path, &small_model(3), small_opts(Compression::None));
    let good = std::fs::read(&path).unwrap();
    let cut = dir.path().join("cut.sst");
    for len in 0..good.len() {
        std::fs::write(&cut, &good[..len]).unwrap();
        match SstReader::open(&cut, 1, None) {
            Err(e) => assert!(is_corruption(&e), "length {len}: {e}"),
            Ok(_) => panic!("truncated to {len} bytes but opened"),
        }
    }
    // Extra bytes after the footer are also refused.
    let mut longer = good.clone();
    longer.push(0);
    std::fs::write(&cut, &longer).unwrap();
    assert!(SstReader::open(&cut, 1, None).is_err_and(|e| is_corruption(&e)));
}

#[test]
fn missing_file_is_an_io_error() {
    let dir = tempfile::tempdir().unwrap();
    let err = SstReader::open(&dir.path().join("absent.sst"), 1, None).unwrap_err();
    assert!(matches!(err, Error::Io { .. }), "{err}");
}

#[test]
fn writer_rejects_bad_input() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("t.sst");
    let a = key::encode(b"a", b"f", b"q", KeyKind::Put, 1, 1);
    let b = key::encode(b"b", b"f", b"q", KeyKind::Put, 1, 1);
    let mut w = SstWriter::create(&path, SstOptions::default()).unwrap();
    w.add(&b, b"1").unwrap();
    assert!(matches!(w.add(&a, b"2"), Err(Error::InvalidArgument(_))));
    assert!(matches!(w.add(&b, b"3"), Err(Error::InvalidArgument(_))));
    let mut malformed = b.clone();
    malformed.push(7);
    assert!(matches!(
        w.add(&malformed, b"4"),
        Err(Error::InvalidArgument(_))
    ));
    assert!(matches!(w.add(b"zz", b"5"), Err(Error::InvalidArgument(_))));
    // Same coordinates as `b` but a family-marker kind: not a well-formed key.
    let mut wrong_kind = key::encode(b"b", b"f", b"q", KeyKind::Put, 0, 1);
    let kind_at = wrong_kind.len() - 9;
    wrong_kind[kind_at] = KeyKind::DeleteFamily as u8;
    assert!(key::decode(&wrong_kind).is_none());
    assert!(wrong_kind > b);
    assert!(matches!(
        w.add(&wrong_kind, b"6"),
        Err(Error::InvalidArgument(_))
    ));
    assert_eq!(w.entry_count(), 1);
    let meta = w.finish().unwrap();
    assert_eq!(meta.entry_count, 1);

    for bad in [
        SstOptions {
            block_size: 0,
            ..SstOptions::default()
        },
        SstOptions {
            restart_interval: 0,
            ..SstOptions::default()
        },
        SstOptions {
            bloom_bits_per_key: 0,
            ..SstOptions::default()
        },
        SstOptions {
            compression: Compression::Zstd(40),
            ..SstOptions::default()
        },
    ] {
        assert!(matches!(
            SstWriter::create(&path, bad),
            Err(Error::InvalidArgument(_))
        ));
    }
}

#[test]
fn abandoned_writer_removes_its_file() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("t.sst");
    let mut w = SstWriter::create(&path, SstOptions::default()).unwrap();
    w.add(&key::encode(b"a", b"f", b"q", KeyKind::Put, 1, 1), b"v")
        .unwrap();
    assert_eq!(w.path(), path.as_path());
    w.abandon().unwrap();
    assert!(!path.exists());
}

#[test]
fn empty_file_roundtrips() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("t.sst");
    let meta = write(&path, &Model::new(), SstOptions::default());
    assert_eq!((meta.entry_count, meta.block_count), (0, 0));
    let reader = SstReader::open(&path, 1, None).unwrap();
    assert_eq!(reader.meta(), &meta);
    assert!(!reader.may_contain_row(b"anything"));
    assert_eq!(reader.middle_key().unwrap(), None);
    let mut it = reader.iter();
    it.seek_to_first().unwrap();
    assert!(!it.valid());
    it.seek(b"x").unwrap();
    assert!(!it.valid());
    it.seek_for_prev(b"x").unwrap();
    assert!(!it.valid());
}

#[test]
fn blocks_are_cut_when_they_reach_the_block_size() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("t.sst");
    let model = small_model(300);
    let block_size = 4096;
    let opts = SstOptions {
        block_size,
        ..SstOptions::default()
    };
    let meta = write(&path, &model, opts);
    let reader = SstReader::open(&path, 1, None).unwrap();
    let handles = reader.data_block_handles();
    assert_eq!(handles.len() as u64, meta.block_count);
    let largest_entry = model
        .iter()
        .map(|(k, v)| k.len() + v.len() + 15)
        .max()
        .unwrap();
    let (last, full) = handles.split_last().unwrap();
    for h in full {
        let size = h.size as usize;
        assert!(
            size >= block_size && size < block_size + largest_entry + 4,
            "block of {size} bytes"
        );
    }
    assert!((last.size as usize) < block_size + largest_entry);
}

#[test]
fn zstd_shrinks_compressible_data() {
    let dir = tempfile::tempdir().unwrap();
    let model = small_model(300);
    let plain = write(
        &dir.path().join("a.sst"),
        &model,
        small_opts(Compression::None),
    );
    let packed = write(
        &dir.path().join("b.sst"),
        &model,
        small_opts(Compression::Zstd(3)),
    );
    assert!(
        packed.file_size < plain.file_size,
        "{} !< {}",
        packed.file_size,
        plain.file_size
    );
    let reader = SstReader::open(&dir.path().join("b.sst"), 1, None).unwrap();
    check_against_model(&reader, &model, &[]);
}

#[test]
fn default_options_handle_many_entries() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("t.sst");
    let model = small_model(3000);
    let meta = write(&path, &model, SstOptions::default());
    assert!(meta.block_count > 10);
    let reader = SstReader::open(&path, 1, None).unwrap();
    let mut it = reader.iter();
    for (i, (k, v)) in model.iter().enumerate().step_by(97) {
        it.seek(k).unwrap();
        assert_eq!(
            (it.key(), it.value()),
            (k.as_slice(), v.as_slice()),
            "entry {i}"
        );
    }
    let mid = reader.middle_key().unwrap().unwrap();
    assert!(model.contains_key(&mid));
    assert!(mid > meta.smallest_key && mid < meta.largest_key);
    assert!(key::row_of(&mid).is_some());
}

#[test]
fn bloom_filters_reject_most_absent_rows() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("t.sst");
    let mut model = Model::new();
    for r in 0..20_000u32 {
        model.insert(
            key::encode(
                format!("present-{r}").as_bytes(),
                b"f",
                b"q",
                KeyKind::Put,
                1,
                1,
            ),
            Vec::new(),
        );
    }
    write(
        &path,
        &model,
        SstOptions {
            bloom: BloomType::RowCol,
            ..SstOptions::default()
        },
    );
    let reader = SstReader::open(&path, 1, None).unwrap();
    for r in 0..20_000u32 {
        let row = format!("present-{r}");
        assert!(reader.may_contain_row(row.as_bytes()));
        assert!(reader.may_contain_column(row.as_bytes(), b"q"));
    }
    let fp_rows = (0..20_000u32)
        .filter(|r| reader.may_contain_row(format!("absent-{r}").as_bytes()))
        .count();
    let fp_cols = (0..20_000u32)
        .filter(|r| reader.may_contain_column(format!("present-{r}").as_bytes(), b"other"))
        .count();
    assert!(fp_rows < 400, "row false positives: {fp_rows}/20000");
    assert!(fp_cols < 400, "column false positives: {fp_cols}/20000");
    assert!(reader.resident_memory() >= 2 * 20_000 * 10 / 8);

    // Row-only files answer "maybe" for every column; no-bloom files for everything.
    for (bloom, name) in [(BloomType::Row, "row.sst"), (BloomType::None, "none.sst")] {
        let p = dir.path().join(name);
        write(
            &p,
            &model,
            SstOptions {
                bloom,
                ..SstOptions::default()
            },
        );
        let r = SstReader::open(&p, 2, None).unwrap();
        assert!(r.may_contain_column(b"absent", b"q"));
        assert_eq!(r.may_contain_row(b"absent-1"), bloom == BloomType::None);
    }
}

fn cached_reader(path: &Path, file_id: u64, cache: &Arc<BlockCache>) -> Arc<SstReader> {
    SstReader::open(path, file_id, Some(Arc::clone(cache))).unwrap()
}

fn full_scan(it: &mut SstIter) -> usize {
    it.seek_to_first().unwrap();
    let mut n = 0;
    while it.valid() {
        n += 1;
        it.next().unwrap();
    }
    n
}

#[test]
fn block_cache_serves_the_second_read() {
    let dir = tempfile::tempdir().unwrap();
    let path: PathBuf = dir.path().join("t.sst");
    let model = small_model(200);
    let meta = write(&path, &model, small_opts(Compression::Zstd(3)));
    let cache = Arc::new(BlockCache::new(64 << 20));
    let reader = cached_reader(&path, 1, &cache);
    let blocks = meta.block_count;

    assert_eq!(full_scan(&mut reader.iter()), model.len());
    let s = cache.stats();
    assert_eq!((s.hits, s.misses), (0, blocks));
    assert_eq!(full_scan(&mut reader.iter()), model.len());
    let s = cache.stats();
    assert_eq!((s.hits, s.misses), (blocks, blocks));
    cache.run_pending_tasks();
    assert_eq!(cache.stats().entries, blocks);

    // A scan that does not fill the cache reads through it without adding.
    let other = cached_reader(&path, 2, &cache);
    assert_eq!(full_scan(&mut other.iter_without_cache_fill()), model.len());
    cache.run_pending_tasks();
    let s = cache.stats();
    assert_eq!((s.hits, s.misses, s.entries), (blocks, 2 * blocks, blocks));
}

/// A file of `small_model(2000)` in 4 KiB blocks (many more blocks than the small
/// caches of the cache tests hold).
fn write_2000_rows_in_4k_blocks(path: &Path) -> (Model, SstMeta) {
    let model = small_model(2000);
    let opts = SstOptions {
        block_size: 4096,
        ..SstOptions::default()
    };
    let meta = write(path, &model, opts);
    (model, meta)
}

#[test]
fn block_cache_respects_its_byte_bound_under_reads() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("t.sst");
    let (model, meta) = write_2000_rows_in_4k_blocks(&path);
    let capacity = 40 * 1024;
    let cache = Arc::new(BlockCache::new(capacity));
    let reader = cached_reader(&path, 1, &cache);
    for _ in 0..3 {
        assert_eq!(full_scan(&mut reader.iter()), model.len());
    }
    cache.run_pending_tasks();
    let s = cache.stats();
    assert!(meta.block_count > 50);
    assert!(s.weighted_bytes <= capacity, "{s:?}");
    assert!(s.entries < meta.block_count);
}

/// Most hits reach their block through the reader's weak handle, not the cache's
/// lookup; the share the cache still sees must keep a hot block cached while
/// blocks read once stream through a cache too small for the file.
#[test]
fn a_hot_block_stays_cached_while_cold_blocks_stream_through() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("t.sst");
    let (model, meta) = write_2000_rows_in_4k_blocks(&path);
    assert!(meta.block_count > 40, "{meta:?}");
    let cache = Arc::new(BlockCache::new(8 * 5 * 1024));
    let reader = cached_reader(&path, 1, &cache);
    let hot_block = reader.data_block_handles()[0];
    let (hot_key, hot_value) = model.iter().next().unwrap();
    let mut it = reader.iter();
    for _ in 0..3 {
        for (k, v) in model.iter().step_by(7) {
            it.seek(k).unwrap();
            assert_eq!(it.value(), v.as_slice());
            for _ in 0..16 {
                let mut hot = reader.iter();
                hot.seek(hot_key).unwrap();
                assert_eq!(hot.value(), hot_value.as_slice());
            }
        }
    }
    cache.run_pending_tasks();
    let s = cache.stats();
    assert!(s.entries < meta.block_count, "the file must not fit: {s:?}");
    assert!(
        cache.contains(1, hot_block.offset),
        "the hot block was evicted: {s:?}"
    );
    // Every lookup is counted, whichever way it found its block.
    assert!(s.hits > 16 * 3 * (model.len() as u64 / 7), "{s:?}");
}

#[test]
fn readers_are_shared_across_threads() {
    fn assert_send_sync<T: Send + Sync>() {}
    assert_send_sync::<SstReader>();
    fn assert_send<T: Send>() {}
    assert_send::<SstIter>();

    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("t.sst");
    let model = Arc::new(small_model(300));
    write(&path, &model, small_opts(Compression::Zstd(1)));
    let cache = Arc::new(BlockCache::new(1 << 20));
    let reader = cached_reader(&path, 1, &cache);
    let threads: Vec<_> = (0..4)
        .map(|t| {
            let reader = Arc::clone(&reader);
            let model = Arc::clone(&model);
            std::thread::spawn(move || {
                let mut it = reader.iter();
                for (k, v) in model.iter().skip(t).step_by(5) {
                    it.seek(k).unwrap();
                    assert_eq!((it.key(), it.value()), (k.as_slice(), v.as_slice()));
                }
            })
        })
        .collect();
    for t in threads {
        t.join().unwrap();
    }
}

#[test]
fn bounded_iter_over_a_file_clamps_to_its_rows() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("t.sst");
    let model = small_model(50);
    write(&path, &model, small_opts(Compression::None));
    let reader = SstReader::open(&path, 1, None).unwrap();
    let (start, end) = (b"row-00010".as_slice(), b"row-00020".as_slice());
    let expect: Vec<_> = model
        .iter()
        .filter(|(k, _)| {
            let r = key::row_of(k).unwrap();
            r.as_slice() >= start && r.as_slice() < end
        })
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    assert_eq!(expect.len(), 70);
    let mut it = BoundedIter::new(reader.iter(), start, end);
    it.seek_to_first().unwrap();
    assert_eq!(scan(&mut it), expect);
    it.seek_for_prev(&key::row_start(b"row-00040")).unwrap();
    assert_eq!(it.key(), expect.last().unwrap().0.as_slice());
    it.seek(&key::row_start(b"row-00001")).unwrap();
    assert_eq!(it.key(), expect[0].0.as_slice());
    it.seek(&key::row_start(b"row-00020")).unwrap();
    assert!(!it.valid());
}
