//! Memory aligned for direct I/O.
//!
//! Owns [`AlignedBuf`]: a fixed-size window of zeroed memory whose address is a
//! multiple of [`DIRECT_IO_ALIGN`], the alignment `O_DIRECT` asks of a write's
//! memory, file offset and length. The commit log's direct tail and the SSTable
//! sink send their writes from one.
//! Must not: do I/O or decide what the window holds.

/// Alignment of direct writes: memory addresses, file offsets and lengths.
pub(crate) const DIRECT_IO_ALIGN: usize = 4096;

/// A zeroed window of `len` bytes at an aligned address.
pub(crate) struct AlignedBuf {
    /// `len + DIRECT_IO_ALIGN` bytes; the window starts at `start`.
    memory: Vec<u8>,
    start: usize,
    len: usize,
}

impl AlignedBuf {
    /// A zeroed window of `len` bytes; `None` if no aligned start was found (an
    /// allocator that cannot offset a pointer).
    pub(crate) fn zeroed(len: usize) -> Option<AlignedBuf> {
        let memory = vec![0u8; len.checked_add(DIRECT_IO_ALIGN)?];
        let start = memory.as_ptr().align_offset(DIRECT_IO_ALIGN);
        (start < DIRECT_IO_ALIGN).then_some(AlignedBuf { memory, start, len })
    }

    /// The window.
    pub(crate) fn as_slice(&self) -> &[u8] {
        self.memory
            .get(self.start..self.start + self.len)
            .unwrap_or_default()
    }

    /// The window, to fill.
    pub(crate) fn as_mut_slice(&mut self) -> &mut [u8] {
        self.memory
            .get_mut(self.start..self.start + self.len)
            .unwrap_or_default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_window_is_aligned_zeroed_and_of_the_asked_length() {
        for len in [0, 1, DIRECT_IO_ALIGN, 3 * DIRECT_IO_ALIGN + 7] {
            let mut buf = AlignedBuf::zeroed(len).unwrap();
            assert_eq!(buf.as_slice().len(), len);
            assert_eq!(buf.as_slice().as_ptr() as usize % DIRECT_IO_ALIGN, 0);
            assert!(buf.as_slice().iter().all(|b| *b == 0));
            buf.as_mut_slice().fill(9);
            assert!(buf.as_slice().iter().all(|b| *b == 9));
        }
    }
}
