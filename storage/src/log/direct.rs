//! Writing a segment with direct I/O: whole aligned blocks from aligned memory.
//!
//! Owns [`DirectTail`]: a second handle on the open segment file, opened with
//! `O_DIRECT`, and the segment's last partial block kept in memory. Each write sends
//! that block again with the new bytes after it, padded with zeros to a whole
//! block, straight to the device: no page-cache copy and no writeback when the log
//! fsyncs, which is most of an fsync's own CPU. The zeros past the last record are
//! what a prepared segment holds there anyway; a segment that grows is trimmed when
//! sealed, and replay reads zeros after the last record of the last segment as its
//! end (see `reader`). File systems without direct I/O (tmpfs) get no `DirectTail`
//! and the writer writes through the page cache as before.
//! Must not: decide when to write or fsync (the writer does) or know records.

use std::fs::{File, OpenOptions};
use std::os::unix::fs::{FileExt, OpenOptionsExt};
use std::path::Path;

use crate::aligned::{AlignedBuf, DIRECT_IO_ALIGN as BLOCK};

/// Most bytes sent in one direct write (the aligned buffer's size).
const CHUNK: usize = 1 << 20;

/// The direct-I/O side of the open segment.
pub(crate) struct DirectTail {
    file: File,
    /// The aligned window writes are sent from.
    window: AlignedBuf,
    /// File offset of the block the tail belongs to.
    block_start: u64,
    /// Bytes of the tail block written so far (they sit at the window's start).
    tail_len: usize,
}

impl DirectTail {
    /// Opens `path` for direct writes, with `len` bytes of it (a header, at most a
    /// block) already written. `None` where the file system refuses direct I/O or
    /// `len` does not fit in one block.
    pub(crate) fn open(path: &Path, len: u64) -> std::io::Result<Option<DirectTail>> {
        let Ok(tail_len) = usize::try_from(len) else {
            return Ok(None);
        };
        if tail_len >= BLOCK {
            return Ok(None);
        }
        let file = match OpenOptions::new()
            .read(true)
            .write(true)
            .custom_flags(libc::O_DIRECT)
            .open(path)
        {
            Ok(file) => file,
            Err(e) if e.raw_os_error() == Some(libc::EINVAL) => return Ok(None),
            Err(e) => return Err(e),
        };
        let Some(window) = AlignedBuf::zeroed(CHUNK) else {
            return Ok(None);
        };
        let mut direct = DirectTail {
            file,
            window,
            block_start: 0,
            tail_len,
        };
        // The bytes already in the block (the header) are read back through the
        // aligned window, so a rewrite of the block carries them unchanged.
        let mut block = vec![0u8; tail_len];
        File::open(path)?.read_exact_at(&mut block, 0)?;
        direct.window_mut()[..tail_len].copy_from_slice(&block);
        Ok(Some(direct))
    }

    fn window_mut(&mut self) -> &mut [u8] {
        self.window.as_mut_slice()
    }

    /// Appends `data` after the bytes written so far. Returns the file offset up to
    /// which blocks were written (zeros after the data included).
    pub(crate) fn write(&mut self, mut data: &[u8]) -> std::io::Result<u64> {
        let mut written_to = self.block_start;
        while !data.is_empty() {
            let tail = self.tail_len;
            let take = data.len().min(CHUNK - tail);
            let (piece, rest) = data.split_at(take);
            let filled = tail + take;
            let padded = filled.div_ceil(BLOCK) * BLOCK;
            let window = self.window_mut();
            window[tail..filled].copy_from_slice(piece);
            window[filled..padded].fill(0);
            let at = self.block_start;
            self.file
                .write_all_at(&self.window.as_slice()[..padded], at)?;
            written_to = at + padded as u64;
            // The last partial block becomes the new tail.
            let whole = filled / BLOCK * BLOCK;
            let window = self.window_mut();
            window.copy_within(whole..filled, 0);
            self.block_start += whole as u64;
            self.tail_len = filled - whole;
            data = rest;
        }
        Ok(written_to)
    }
}

/// Whether files in `dir` accept direct I/O.
#[cfg(test)]
pub(crate) fn supported(dir: &Path) -> bool {
    let path = dir.join("direct-io-probe");
    let ok =
        std::fs::write(&path, b"x").is_ok() && matches!(DirectTail::open(&path, 1), Ok(Some(_)));
    let _ = std::fs::remove_file(&path);
    ok
}

#[cfg(test)]
mod tests {
    use super::*;

    fn direct_or_skip(path: &Path, len: u64) -> Option<DirectTail> {
        match DirectTail::open(path, len) {
            Ok(Some(d)) => Some(d),
            Ok(None) => {
                eprintln!("no direct I/O here; skipped");
                None
            }
            Err(e) => panic!("open: {e}"),
        }
    }

    #[test]
    fn writes_land_after_the_header_and_pad_the_last_block_with_zeros() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("seg");
        std::fs::write(&path, b"HEADER").unwrap();
        let Some(mut d) = direct_or_skip(&path, 6) else {
            return;
        };
        let mut expected = b"HEADER".to_vec();
        // Small writes inside one block, one crossing blocks, one larger than a
        // chunk.
        let pieces: Vec<Vec<u8>> = vec![
            vec![1; 10],
            vec![2; 5000],
            (0..3 * CHUNK + 123).map(|i| (i % 251) as u8).collect(),
            vec![3; 1],
        ];
        let mut end = 0;
        for p in &pieces {
            end = d.write(p).unwrap();
            expected.extend_from_slice(p);
        }
        let on_disk = std::fs::read(&path).unwrap();
        assert_eq!(end as usize, expected.len().div_ceil(BLOCK) * BLOCK);
        assert_eq!(
            on_disk.len(),
            end as usize,
            "the file ends at the padded block"
        );
        assert!(on_disk[..expected.len()] == expected[..], "bytes in order");
        assert!(
            on_disk[expected.len()..].iter().all(|b| *b == 0),
            "zero padding"
        );
    }

    #[test]
    fn a_header_of_a_block_or_more_gets_no_direct_writer() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("seg");
        std::fs::write(&path, vec![7u8; BLOCK]).unwrap();
        assert!(DirectTail::open(&path, BLOCK as u64).unwrap().is_none());
    }
}
