//! Reading segments back: one segment's records, a replay over many segments
//! (optionally limited to some tablets), and cutting a torn tail off a segment.
//!
//! Owns: the torn-tail versus corruption decision. A bad record (short read, bad
//! length, CRC mismatch) ends a segment cleanly when the segment may legitimately
//! end torn (it is the last one replayed, or the last one written by its process
//! run); anywhere else it is corruption, reported with the file and offset. In a
//! segment that may end torn, a bad record followed by nothing but zeros to the
//! end of the file is the unused rest of a prepared segment: a clean end.
//! Must not: write to a segment that a running log still appends to.

use std::collections::{HashSet, VecDeque};
use std::fs::{File, OpenOptions};
use std::io::{BufReader, ErrorKind, Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};

use crate::error::{Error, Result};
use crate::log::record::{
    short_prefix_error, LogRecord, RecordPrefix, SegmentHeader, SEGMENT_HEADER_LEN,
};
use crate::log::segments::segment_number_of;

/// Read buffer size for replay.
const READ_BUFFER: usize = 1 << 20;

/// What a reader does at the first bad record of a segment.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TailPolicy {
    /// The segment may end in a partly written record: stop cleanly there, log a
    /// warning and count the bytes dropped.
    TolerateTorn,
    /// Every byte must be a good record: a bad one is `Error::Corruption`.
    Strict,
}

/// A torn tail found during replay.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TornTail {
    /// The segment file.
    pub path: PathBuf,
    /// Bytes of the file up to the end of its last good record.
    pub valid_len: u64,
    /// Bytes after that, not replayed.
    pub dropped_bytes: u64,
}

/// Totals of a replay.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ReplayStats {
    /// Segments read to their end.
    pub segments: usize,
    /// Records returned.
    pub records: u64,
    /// Good records skipped because their tablet was not asked for.
    pub skipped: u64,
    /// Bytes dropped at torn tails, over all segments.
    pub dropped_bytes: u64,
    /// Every torn tail met.
    pub torn_tails: Vec<TornTail>,
}

/// Reads and checks the header of a segment file.
pub fn read_segment_header(path: &Path) -> Result<SegmentHeader> {
    let mut file = File::open(path)
        .map_err(|e| Error::io(format!("opening log segment {}", path.display()), e))?;
    read_header_from(&mut file, path)
}

/// Reads the header at the start of `input` and checks it against the file name.
fn read_header_from(input: &mut impl Read, path: &Path) -> Result<SegmentHeader> {
    let mut bytes = [0u8; SEGMENT_HEADER_LEN];
    input.read_exact(&mut bytes).map_err(|e| {
        if e.kind() == ErrorKind::UnexpectedEof {
            Error::corruption(path, "file is shorter than a segment header")
        } else {
            Error::io(format!("reading log segment {}", path.display()), e)
        }
    })?;
    let header =
        SegmentHeader::decode(&bytes).map_err(|e| Error::corruption(path, e.to_string()))?;
    if let Some(named) = segment_number_of(path) {
        if named != header.number {
            return Err(Error::corruption(
                path,
                format!(
                    "file name says segment {named} but its header says {}",
                    header.number
                ),
            ));
        }
    }
    Ok(header)
}

/// One step of a reader.
enum Step {
    Record(LogRecord),
    Skipped,
    End,
    Failed(Error),
}

/// Iterates over the records of one segment file, oldest first.
pub struct LogReader {
    path: PathBuf,
    input: BufReader<File>,
    header: SegmentHeader,
    file_len: u64,
    valid_len: u64,
    policy: TailPolicy,
    scratch: Vec<u8>,
    finished: bool,
    records: u64,
    dropped_bytes: u64,
}

impl LogReader {
    /// Opens a segment, tolerating a torn tail (as for the newest segment).
    pub fn open(path: &Path) -> Result<LogReader> {
        LogReader::open_with_policy(path, TailPolicy::TolerateTorn)
    }

    /// Opens a segment with an explicit policy for bad records.
    pub fn open_with_policy(path: &Path, policy: TailPolicy) -> Result<LogReader> {
        let file = File::open(path)
            .map_err(|e| Error::io(format!("opening log segment {}", path.display()), e))?;
        let file_len = file
            .metadata()
            .map_err(|e| Error::io(format!("reading size of log segment {}", path.display()), e))?
            .len();
        let mut input = BufReader::with_capacity(READ_BUFFER, file);
        let header = read_header_from(&mut input, path)?;
        Ok(LogReader {
            path: path.to_path_buf(),
            input,
            header,
            file_len,
            valid_len: SEGMENT_HEADER_LEN as u64,
            policy,
            scratch: Vec::new(),
            finished: false,
            records: 0,
            dropped_bytes: 0,
        })
    }

    /// The segment's header.
    pub fn header(&self) -> SegmentHeader {
        self.header
    }

    /// The segment file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Bytes from the start of the file to the end of the last good record read.
    pub fn valid_len(&self) -> u64 {
        self.valid_len
    }

    /// Bytes dropped at a torn tail (zero until the reader has met one).
    pub fn dropped_bytes(&self) -> u64 {
        self.dropped_bytes
    }

    /// Good records read so far, returned or skipped.
    pub fn records_read(&self) -> u64 {
        self.records
    }

    /// Reads the next record. `wanted` decides from the tablet id whether its
    /// payload is returned; unwanted records are still checked, then skipped.
    fn step(&mut self, wanted: impl Fn(u64) -> bool) -> Step {
        if self.finished {
            return Step::End;
        }
        let offset = self.valid_len;
        let available = self.file_len.saturating_sub(offset);
        if available == 0 {
            self.finished = true;
            return Step::End;
        }
        let mut prefix_bytes = [0u8; RecordPrefix::LEN];
        if available < RecordPrefix::LEN as u64 {
            let got = match self.read_up_to(&mut prefix_bytes, available) {
                Ok(got) => got,
                Err(e) => return self.io_failure(e),
            };
            let err = short_prefix_error(prefix_bytes.get(..got).unwrap_or_default());
            return self.bad_record(offset, &err.to_string());
        }
        match self.read_fully(&mut prefix_bytes) {
            Ok(true) => {}
            Ok(false) => return self.bad_record(offset, "file ends inside a record header"),
            Err(e) => return self.io_failure(e),
        }
        let prefix = match RecordPrefix::parse(&prefix_bytes, available) {
            Ok(prefix) => prefix,
            Err(e) => return self.bad_record(offset, &e.to_string()),
        };
        let keep = wanted(prefix.tablet_id);
        let mut payload = if keep {
            vec![0u8; prefix.payload_len()]
        } else {
            let mut scratch = std::mem::take(&mut self.scratch);
            scratch.clear();
            scratch.resize(prefix.payload_len(), 0);
            scratch
        };
        match self.read_fully(&mut payload) {
            Ok(true) => {}
            Ok(false) => return self.bad_record(offset, "file ends inside a record"),
            Err(e) => return self.io_failure(e),
        }
        if let Err(e) = prefix.verify(&payload) {
            return self.bad_record(offset, &e.to_string());
        }
        self.valid_len = offset.saturating_add(prefix.encoded_len());
        self.records += 1;
        if keep {
            Step::Record(LogRecord {
                tablet_id: prefix.tablet_id,
                seq: prefix.seq,
                payload,
            })
        } else {
            if payload.capacity() <= READ_BUFFER {
                self.scratch = payload;
            }
            Step::Skipped
        }
    }

    /// Fills `buf`; false when the file ended first.
    fn read_fully(&mut self, buf: &mut [u8]) -> std::io::Result<bool> {
        match self.input.read_exact(buf) {
            Ok(()) => Ok(true),
            Err(e) if e.kind() == ErrorKind::UnexpectedEof => Ok(false),
            Err(e) => Err(e),
        }
    }

    /// Reads at most `limit` bytes into `buf`, returning how many were read.
    fn read_up_to(&mut self, buf: &mut [u8], limit: u64) -> std::io::Result<usize> {
        let want = usize::try_from(limit).map_or(buf.len(), |l| l.min(buf.len()));
        let target = buf.get_mut(..want).unwrap_or_default();
        let mut got = 0;
        while let Some(rest) = target.get_mut(got..) {
            if rest.is_empty() {
                break;
            }
            match self.input.read(rest) {
                Ok(0) => break,
                Ok(n) => got += n,
                Err(e) if e.kind() == ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
        Ok(got)
    }

    /// Ends the segment at a bad record, as the policy says.
    fn bad_record(&mut self, offset: u64, detail: &str) -> Step {
        self.finished = true;
        match self.policy {
            TailPolicy::TolerateTorn => {
                match self.zeros_from(offset) {
                    Ok(true) => {
                        // The unused rest of a prepared segment: nothing was cut off.
                        tracing::debug!(path = %self.path.display(), offset, "commit log segment ends in unused space");
                        return Step::End;
                    }
                    Ok(false) => {}
                    Err(e) => return self.io_failure(e),
                }
                self.dropped_bytes = self.file_len.saturating_sub(offset);
                tracing::warn!(
                    path = %self.path.display(),
                    offset,
                    dropped_bytes = self.dropped_bytes,
                    reason = detail,
                    "commit log segment ends in a torn record; dropping the rest"
                );
                Step::End
            }
            TailPolicy::Strict => Step::Failed(Error::corruption(
                &self.path,
                format!("bad log record at offset {offset}: {detail}"),
            )),
        }
    }

    /// Whether every byte from `offset` to the end of the file is zero.
    fn zeros_from(&mut self, offset: u64) -> std::io::Result<bool> {
        self.input.seek(SeekFrom::Start(offset))?;
        let mut chunk = std::mem::take(&mut self.scratch);
        chunk.clear();
        chunk.resize(64 * 1024, 0);
        let all_zero = loop {
            match self.input.read(&mut chunk) {
                Ok(0) => break true,
                Ok(n) => {
                    if chunk.get(..n).unwrap_or_default().iter().any(|b| *b != 0) {
                        break false;
                    }
                }
                Err(e) if e.kind() == ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        };
        self.scratch = chunk;
        Ok(all_zero)
    }

    /// Ends the segment on an operating-system read error.
    fn io_failure(&mut self, e: std::io::Error) -> Step {
        self.finished = true;
        Step::Failed(Error::io(
            format!("reading log segment {}", self.path.display()),
            e,
        ))
    }
}

impl Iterator for LogReader {
    type Item = Result<LogRecord>;

    fn next(&mut self) -> Option<Self::Item> {
        loop {
            match self.step(|_| true) {
                Step::Record(rec) => return Some(Ok(rec)),
                Step::Skipped => {}
                Step::End => return None,
                Step::Failed(e) => return Some(Err(e)),
            }
        }
    }
}

/// The policy for each segment of a replay, in segment-number order. A segment
/// may end torn when it is the last one, or when the next segment was written by
/// a later process run (its `run_first` is past this segment's number): a crash
/// can tear only the segment being written, and a run seals (fsyncs) a segment
/// before it creates the next one.
fn tail_policies(headers: &[SegmentHeader]) -> Vec<TailPolicy> {
    headers
        .iter()
        .enumerate()
        .map(|(i, h)| match headers.get(i + 1) {
            None => TailPolicy::TolerateTorn,
            Some(next) if next.run_first > h.number => TailPolicy::TolerateTorn,
            Some(_) => TailPolicy::Strict,
        })
        .collect()
}

/// For each of `paths` (segment files of one log, in any order), whether it may
/// end in a torn tail: true for the newest segment and for the last segment of
/// each earlier process run; a bad record anywhere else is corruption. Use it when
/// reading segments one at a time with [`read_segment`]; [`replay_segments`]
/// applies the same rule itself.
pub fn torn_tail_allowed(paths: &[PathBuf]) -> Result<Vec<bool>> {
    let mut headers = Vec::with_capacity(paths.len());
    for (index, path) in paths.iter().enumerate() {
        headers.push((read_segment_header(path)?, index));
    }
    headers.sort_by_key(|(h, _)| h.number);
    let sorted: Vec<SegmentHeader> = headers.iter().map(|(h, _)| *h).collect();
    let mut allowed = vec![false; paths.len()];
    for ((_, index), policy) in headers.iter().zip(tail_policies(&sorted)) {
        if let Some(slot) = allowed.get_mut(*index) {
            *slot = policy == TailPolicy::TolerateTorn;
        }
    }
    Ok(allowed)
}

/// Reads every record of one segment into memory. With `may_end_torn`, a bad
/// record ends the segment cleanly (logged as a warning); without it, it is
/// `Error::Corruption`.
pub fn read_segment(path: &Path, may_end_torn: bool) -> Result<Vec<LogRecord>> {
    let policy = if may_end_torn {
        TailPolicy::TolerateTorn
    } else {
        TailPolicy::Strict
    };
    LogReader::open_with_policy(path, policy)?.collect()
}

/// A segment waiting to be replayed.
struct PlannedSegment {
    path: PathBuf,
    policy: TailPolicy,
}

/// Iterates over the records of many segments, oldest segment first, optionally
/// returning only some tablets' records.
pub struct Replay {
    plan: VecDeque<PlannedSegment>,
    current: Option<LogReader>,
    filter: Option<HashSet<u64>>,
    stats: ReplayStats,
    failed: bool,
}

/// Starts a replay of `paths` (segment files of one log; they are ordered by the
/// segment numbers in their headers). With `filter`, only those tablets' records
/// are returned. Headers are read and checked up front.
pub fn replay_segments(paths: &[PathBuf], filter: Option<&HashSet<u64>>) -> Result<Replay> {
    let mut segments = Vec::with_capacity(paths.len());
    for path in paths {
        segments.push((read_segment_header(path)?, path.clone()));
    }
    segments.sort_by_key(|(h, _)| h.number);
    for pair in segments.windows(2) {
        if let [(a, _), (b, path)] = pair {
            if a.number == b.number {
                return Err(Error::corruption(
                    path,
                    format!("segment number {} appears twice in the replay", b.number),
                ));
            }
        }
    }
    let headers: Vec<SegmentHeader> = segments.iter().map(|(h, _)| *h).collect();
    let plan = tail_policies(&headers)
        .into_iter()
        .zip(segments)
        .map(|(policy, (_, path))| PlannedSegment { path, policy })
        .collect();
    Ok(Replay {
        plan,
        current: None,
        filter: filter.cloned(),
        stats: ReplayStats::default(),
        failed: false,
    })
}

impl Replay {
    /// Totals so far (complete once the iterator has returned `None`).
    pub fn stats(&self) -> &ReplayStats {
        &self.stats
    }

    /// Notes a finished segment.
    fn finish_segment(&mut self, reader: LogReader) {
        self.stats.segments += 1;
        if reader.dropped_bytes() > 0 {
            self.stats.dropped_bytes = self
                .stats
                .dropped_bytes
                .saturating_add(reader.dropped_bytes());
            self.stats.torn_tails.push(TornTail {
                path: reader.path().to_path_buf(),
                valid_len: reader.valid_len(),
                dropped_bytes: reader.dropped_bytes(),
            });
        }
    }
}

impl Iterator for Replay {
    type Item = Result<LogRecord>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.failed {
            return None;
        }
        loop {
            let reader = match self.current.as_mut() {
                Some(reader) => reader,
                None => {
                    let next = self.plan.pop_front()?;
                    match LogReader::open_with_policy(&next.path, next.policy) {
                        Ok(reader) => self.current.insert(reader),
                        Err(e) => {
                            self.failed = true;
                            return Some(Err(e));
                        }
                    }
                }
            };
            let filter = &self.filter;
            let step = reader.step(|tablet| filter.as_ref().is_none_or(|f| f.contains(&tablet)));
            match step {
                Step::Record(rec) => {
                    self.stats.records += 1;
                    return Some(Ok(rec));
                }
                Step::Skipped => self.stats.skipped += 1,
                Step::End => {
                    if let Some(done) = self.current.take() {
                        self.finish_segment(done);
                    }
                }
                Step::Failed(e) => {
                    self.failed = true;
                    self.current = None;
                    return Some(Err(e));
                }
            }
        }
    }
}

/// Cuts a segment's torn tail off: the file is truncated to the end of its last
/// good record and fsynced. Returns the bytes removed (zero when the segment was
/// whole). Never use it on the segment a running log is appending to.
pub fn truncate_torn_tail(path: &Path) -> Result<u64> {
    let mut reader = LogReader::open(path)?;
    loop {
        match reader.step(|_| false) {
            Step::End => break,
            Step::Failed(e) => return Err(e),
            Step::Record(_) | Step::Skipped => {}
        }
    }
    let dropped = reader.dropped_bytes();
    let valid_len = reader.valid_len();
    drop(reader);
    if dropped == 0 {
        return Ok(0);
    }
    let context = || format!("truncating log segment {}", path.display());
    let file = OpenOptions::new()
        .write(true)
        .open(path)
        .map_err(|e| Error::io(context(), e))?;
    file.set_len(valid_len)
        .and_then(|()| file.sync_all())
        .map_err(|e| Error::io(context(), e))?;
    tracing::info!(path = %path.display(), valid_len, dropped, "truncated torn log segment");
    Ok(dropped)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::log::record::{encode_record, SEGMENT_HEADER_LEN};
    use crate::log::segments::segment_file_name;

    /// Writes a segment file by hand: header, then the given records.
    fn write_segment(
        dir: &Path,
        number: u64,
        run_first: u64,
        records: &[(u64, u64, Vec<u8>)],
    ) -> (PathBuf, Vec<u64>) {
        let path = dir.join(segment_file_name(number));
        let mut bytes = SegmentHeader { number, run_first }.encode().to_vec();
        let mut ends = Vec::new();
        for (tablet, seq, payload) in records {
            bytes.extend_from_slice(&encode_record(*tablet, *seq, payload).unwrap());
            ends.push(bytes.len() as u64);
        }
        std::fs::write(&path, bytes).unwrap();
        (path, ends)
    }

    fn sample_records(n: u64) -> Vec<(u64, u64, Vec<u8>)> {
        (0..n)
            .map(|i| {
                (
                    i % 3,
                    i + 1,
                    format!("payload-{i}-{}", "x".repeat(i as usize % 17)).into_bytes(),
                )
            })
            .collect()
    }

    fn replay_all(paths: &[PathBuf]) -> Result<(Vec<LogRecord>, ReplayStats)> {
        let mut replay = replay_segments(paths, None)?;
        let mut out = Vec::new();
        for rec in replay.by_ref() {
            out.push(rec?);
        }
        Ok((out, replay.stats().clone()))
    }

    #[test]
    fn reads_back_what_was_written() {
        let dir = tempfile::tempdir().unwrap();
        let records = sample_records(20);
        let (path, ends) = write_segment(dir.path(), 1, 1, &records);
        let reader = LogReader::open(&path).unwrap();
        assert_eq!(
            reader.header(),
            SegmentHeader {
                number: 1,
                run_first: 1
            }
        );
        let got: Vec<LogRecord> = reader.map(|r| r.unwrap()).collect();
        let want: Vec<LogRecord> = records
            .iter()
            .map(|(t, s, p)| LogRecord {
                tablet_id: *t,
                seq: *s,
                payload: p.clone(),
            })
            .collect();
        assert_eq!(got, want);
        let mut reader = LogReader::open(&path).unwrap();
        for _ in reader.by_ref() {}
        assert_eq!(reader.valid_len(), *ends.last().unwrap());
        assert_eq!(reader.dropped_bytes(), 0);
    }

    #[test]
    fn empty_segment_has_no_records() {
        let dir = tempfile::tempdir().unwrap();
        let (path, _) = write_segment(dir.path(), 4, 4, &[]);
        assert_eq!(LogReader::open(&path).unwrap().count(), 0);
    }

    #[test]
    fn torn_tail_at_every_length_replays_up_to_previous_record() {
        let dir = tempfile::tempdir().unwrap();
        let records = sample_records(5);
        let (path, ends) = write_segment(dir.path(), 1, 1, &records);
        let full = std::fs::read(&path).unwrap();
        let last_start = ends[ends.len() - 2] as usize;
        for cut in last_start..full.len() {
            std::fs::write(&path, &full[..cut]).unwrap();
            let (got, stats) = replay_all(std::slice::from_ref(&path)).unwrap();
            assert_eq!(got.len(), 4, "cut at {cut}");
            assert_eq!(got[3].payload, records[3].2);
            let dropped = (cut - last_start) as u64;
            assert_eq!(stats.dropped_bytes, dropped, "cut at {cut}");
            assert_eq!(stats.torn_tails.len(), usize::from(dropped > 0));
        }
    }

    #[test]
    fn flipped_byte_in_last_segment_stops_there() {
        let dir = tempfile::tempdir().unwrap();
        let records = sample_records(6);
        let (path, ends) = write_segment(dir.path(), 1, 1, &records);
        let clean = std::fs::read(&path).unwrap();
        for at in SEGMENT_HEADER_LEN..clean.len() {
            let mut bytes = clean.clone();
            bytes[at] ^= 0x01;
            std::fs::write(&path, &bytes).unwrap();
            let hit = ends.iter().position(|end| (at as u64) < *end).unwrap();
            let (got, stats) = replay_all(std::slice::from_ref(&path)).unwrap();
            assert_eq!(got.len(), hit, "flip at {at}");
            for (rec, want) in got.iter().zip(&records) {
                assert_eq!(rec.payload, want.2, "flip at {at}");
            }
            let start = if hit == 0 {
                SEGMENT_HEADER_LEN as u64
            } else {
                ends[hit - 1]
            };
            assert_eq!(stats.dropped_bytes, clean.len() as u64 - start);
        }
    }

    #[test]
    fn flipped_byte_in_earlier_segment_is_corruption() {
        let dir = tempfile::tempdir().unwrap();
        let records = sample_records(4);
        let (first, ends) = write_segment(dir.path(), 1, 1, &records);
        let (second, _) = write_segment(dir.path(), 2, 1, &sample_records(2));
        let clean = std::fs::read(&first).unwrap();
        for at in SEGMENT_HEADER_LEN..clean.len() {
            let mut bytes = clean.clone();
            bytes[at] ^= 0x80;
            std::fs::write(&first, &bytes).unwrap();
            let hit = ends.iter().position(|end| (at as u64) < *end).unwrap();
            let start = if hit == 0 {
                SEGMENT_HEADER_LEN as u64
            } else {
                ends[hit - 1]
            };
            match replay_all(&[first.clone(), second.clone()]) {
                Err(Error::Corruption { path, detail }) => {
                    assert_eq!(path, first);
                    assert!(detail.contains(&format!("offset {start}")), "{detail}");
                }
                other => panic!("flip at {at}: expected corruption, got {other:?}"),
            }
        }
    }

    #[test]
    fn truncated_earlier_segment_is_corruption() {
        let dir = tempfile::tempdir().unwrap();
        let (first, ends) = write_segment(dir.path(), 1, 1, &sample_records(3));
        let (second, _) = write_segment(dir.path(), 2, 1, &sample_records(1));
        let file = OpenOptions::new().write(true).open(&first).unwrap();
        file.set_len(ends[2] - 3).unwrap();
        assert!(matches!(
            replay_all(&[first, second]),
            Err(Error::Corruption { .. })
        ));
    }

    /// Appends `bytes` to the file at `path`.
    fn append_to(path: &Path, bytes: &[u8]) {
        use std::io::Write;
        let mut file = OpenOptions::new().append(true).open(path).unwrap();
        file.write_all(bytes).unwrap();
    }

    #[test]
    fn zeros_after_the_last_record_are_a_clean_end() {
        let dir = tempfile::tempdir().unwrap();
        let records = sample_records(4);
        let (path, ends) = write_segment(dir.path(), 1, 1, &records);
        append_to(&path, &vec![0u8; 300 * 1024]);
        let (got, stats) = replay_all(std::slice::from_ref(&path)).unwrap();
        assert_eq!(got.len(), 4);
        assert_eq!(got[3].payload, records[3].2);
        assert_eq!(stats.dropped_bytes, 0);
        assert!(stats.torn_tails.is_empty());
        let mut reader = LogReader::open(&path).unwrap();
        for _ in reader.by_ref() {}
        assert_eq!(reader.valid_len(), ends[3]);
        assert_eq!(truncate_torn_tail(&path).unwrap(), 0);
    }

    #[test]
    fn a_byte_among_the_zeros_makes_them_a_torn_tail() {
        let dir = tempfile::tempdir().unwrap();
        let (path, ends) = write_segment(dir.path(), 1, 1, &sample_records(3));
        let mut tail = vec![0u8; 200 * 1024];
        tail[150 * 1024] = 1;
        append_to(&path, &tail);
        let (got, stats) = replay_all(std::slice::from_ref(&path)).unwrap();
        assert_eq!(got.len(), 3);
        assert_eq!(stats.dropped_bytes, tail.len() as u64);
        assert_eq!(stats.torn_tails.len(), 1);
        assert_eq!(stats.torn_tails[0].valid_len, ends[2]);
    }

    #[test]
    fn zeros_after_the_records_of_an_earlier_segment_are_corruption() {
        let dir = tempfile::tempdir().unwrap();
        let (first, ends) = write_segment(dir.path(), 1, 1, &sample_records(3));
        let (second, _) = write_segment(dir.path(), 2, 1, &sample_records(1));
        append_to(&first, &vec![0u8; 4096]);
        match replay_all(&[first.clone(), second]) {
            Err(Error::Corruption { path, detail }) => {
                assert_eq!(path, first);
                assert!(detail.contains(&format!("offset {}", ends[2])), "{detail}");
            }
            other => panic!("expected corruption, got {other:?}"),
        }
    }

    #[test]
    fn last_segment_of_an_earlier_run_may_be_torn() {
        let dir = tempfile::tempdir().unwrap();
        let (first, ends) = write_segment(dir.path(), 1, 1, &sample_records(3));
        let (second, _) = write_segment(dir.path(), 2, 2, &sample_records(2));
        let file = OpenOptions::new().write(true).open(&first).unwrap();
        file.set_len(ends[2] - 3).unwrap();
        let (got, stats) = replay_all(&[second, first.clone()]).unwrap();
        assert_eq!(got.len(), 2 + 2);
        assert_eq!(stats.segments, 2);
        assert_eq!(
            stats.torn_tails,
            vec![TornTail {
                path: first,
                valid_len: ends[1],
                dropped_bytes: ends[2] - 3 - ends[1]
            }]
        );
    }

    #[test]
    fn huge_length_field_does_not_allocate() {
        let dir = tempfile::tempdir().unwrap();
        let (path, ends) = write_segment(dir.path(), 1, 1, &sample_records(2));
        let mut bytes = std::fs::read(&path).unwrap();
        let at = ends[0] as usize;
        bytes[at..at + 4].copy_from_slice(&(200u32 << 20).to_le_bytes());
        std::fs::write(&path, &bytes).unwrap();
        let (got, stats) = replay_all(std::slice::from_ref(&path)).unwrap();
        assert_eq!(got.len(), 1);
        assert_eq!(stats.dropped_bytes, bytes.len() as u64 - ends[0]);
        let mut strict = LogReader::open_with_policy(&path, TailPolicy::Strict).unwrap();
        assert!(strict.next().unwrap().is_ok());
        let err = strict.next().unwrap().unwrap_err();
        assert!(err.to_string().contains("runs past the end"), "{err}");
        assert!(strict.next().is_none());
    }

    #[test]
    fn bad_header_is_corruption_even_in_last_segment() {
        let dir = tempfile::tempdir().unwrap();
        let (path, _) = write_segment(dir.path(), 1, 1, &sample_records(1));
        let mut bytes = std::fs::read(&path).unwrap();
        bytes[20] ^= 0xff;
        std::fs::write(&path, &bytes).unwrap();
        assert!(matches!(
            LogReader::open(&path),
            Err(Error::Corruption { .. })
        ));
        std::fs::write(&path, &bytes[..10]).unwrap();
        assert!(matches!(
            LogReader::open(&path),
            Err(Error::Corruption { .. })
        ));
    }

    #[test]
    fn header_must_match_file_name() {
        let dir = tempfile::tempdir().unwrap();
        let (path, _) = write_segment(dir.path(), 1, 1, &sample_records(1));
        let renamed = dir.path().join(segment_file_name(9));
        std::fs::rename(&path, &renamed).unwrap();
        assert!(matches!(
            read_segment_header(&renamed),
            Err(Error::Corruption { .. })
        ));
    }

    #[test]
    fn filtered_replay_returns_only_asked_tablets() {
        let dir = tempfile::tempdir().unwrap();
        let (a, _) = write_segment(dir.path(), 1, 1, &sample_records(30));
        let (b, _) = write_segment(dir.path(), 2, 1, &sample_records(30));
        let wanted: HashSet<u64> = [1u64].into_iter().collect();
        let mut replay = replay_segments(&[a, b], Some(&wanted)).unwrap();
        let got: Vec<LogRecord> = replay.by_ref().map(|r| r.unwrap()).collect();
        assert_eq!(got.len(), 20);
        assert!(got.iter().all(|r| r.tablet_id == 1));
        assert_eq!(replay.stats().records, 20);
        assert_eq!(replay.stats().skipped, 40);
        assert_eq!(replay.stats().segments, 2);
    }

    #[test]
    fn duplicate_segment_numbers_are_refused() {
        let dir = tempfile::tempdir().unwrap();
        let (a, _) = write_segment(dir.path(), 1, 1, &[]);
        let copy = dir.path().join("copy-of-one");
        std::fs::copy(&a, &copy).unwrap();
        assert!(matches!(
            replay_segments(&[a, copy], None),
            Err(Error::Corruption { .. })
        ));
    }

    #[test]
    fn truncate_cuts_at_last_good_record() {
        let dir = tempfile::tempdir().unwrap();
        let (path, ends) = write_segment(dir.path(), 1, 1, &sample_records(3));
        assert_eq!(truncate_torn_tail(&path).unwrap(), 0);
        let file = OpenOptions::new().write(true).open(&path).unwrap();
        file.set_len(ends[2] - 1).unwrap();
        drop(file);
        assert_eq!(truncate_torn_tail(&path).unwrap(), ends[2] - 1 - ends[1]);
        assert_eq!(std::fs::metadata(&path).unwrap().len(), ends[1]);
        let strict = LogReader::open_with_policy(&path, TailPolicy::Strict).unwrap();
        let kept: Vec<LogRecord> = strict.map(|r| r.unwrap()).collect();
        assert_eq!(kept.len(), 2);
    }

    #[test]
    fn torn_tail_allowed_reads_headers_in_any_order() {
        let dir = tempfile::tempdir().unwrap();
        let (a, _) = write_segment(dir.path(), 1, 1, &[]);
        let (b, _) = write_segment(dir.path(), 2, 1, &[]);
        let (c, _) = write_segment(dir.path(), 3, 3, &[]);
        assert_eq!(
            torn_tail_allowed(&[c.clone(), a.clone(), b.clone()]).unwrap(),
            vec![true, false, true]
        );
        let mut bytes = std::fs::read(&a).unwrap();
        bytes.extend_from_slice(&[1, 2, 3]);
        std::fs::write(&a, &bytes).unwrap();
        assert!(matches!(
            read_segment(&a, false),
            Err(Error::Corruption { .. })
        ));
        assert!(read_segment(&a, true).unwrap().is_empty());
    }

    #[test]
    fn policies_follow_runs() {
        let h = |number, run_first| SegmentHeader { number, run_first };
        assert_eq!(
            tail_policies(&[h(1, 1), h(2, 1), h(3, 3), h(5, 3), h(6, 6)]),
            vec![
                TailPolicy::Strict,
                TailPolicy::TolerateTorn,
                TailPolicy::Strict,
                TailPolicy::TolerateTorn,
                TailPolicy::TolerateTorn,
            ]
        );
    }
}
