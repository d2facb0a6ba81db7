//! Reading a byte range of a file into a new vector without zero-filling it first.
//!
//! Owns [`read_exact_at_uninit`]: a block read from an SSTable asks for 64 KiB
//! that the kernel is about to overwrite, and zero-filling them first was 9% of the
//! server's CPU in random reads that miss the block cache. The one `unsafe` block
//! lets `pread` write into the vector's spare capacity and counts only the bytes it
//! wrote. Must not: interpret the bytes or retry anything but an interrupted call.

use std::fs::File;
use std::io;
use std::os::fd::AsRawFd;

/// Reads exactly `len` bytes of `file` from `offset` (positioned: the file's own
/// offset is untouched, so threads share the handle). A file that ends first is
/// an `UnexpectedEof` error.
pub(crate) fn read_exact_at_uninit(file: &File, len: usize, offset: u64) -> io::Result<Vec<u8>> {
    let mut out: Vec<u8> = Vec::with_capacity(len);
    while out.len() < len {
        let at = offset
            .checked_add(out.len() as u64)
            .and_then(|at| libc::off_t::try_from(at).ok())
            .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidInput, "offset out of range"))?;
        let read = pread_into_spare(file, &mut out, len, at);
        match read {
            Ok(0) => {
                return Err(io::Error::new(
                    io::ErrorKind::UnexpectedEof,
                    "file ends inside the range",
                ))
            }
            Ok(_) => {}
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(out)
}

/// One `pread` of up to `len - out.len()` bytes at `at`, appended to `out`.
#[allow(unsafe_code)]
fn pread_into_spare(
    file: &File,
    out: &mut Vec<u8>,
    len: usize,
    at: libc::off_t,
) -> io::Result<usize> {
    let filled = out.len();
    let wanted = len.saturating_sub(filled);
    let spare = out.spare_capacity_mut();
    let room = wanted.min(spare.len());
    // SAFETY: `spare` is the vector's allocated, unused capacity, at least `room`
    // bytes long; `pread` writes at most `room` bytes there and returns how many it
    // wrote (or -1, writing nothing we count). Only those bytes become part of the
    // vector, so no uninitialised byte is ever exposed.
    let n = unsafe { libc::pread(file.as_raw_fd(), spare.as_mut_ptr().cast(), room, at) };
    let n = usize::try_from(n).map_err(|_| io::Error::last_os_error())?;
    let n = n.min(room);
    // SAFETY: the first `n` bytes of the spare capacity were written by `pread`.
    unsafe { out.set_len(filled + n) };
    Ok(n)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    #[test]
    fn reads_the_range_and_fails_past_the_end() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("f");
        let data: Vec<u8> = (0..200_000u32).map(|i| (i % 251) as u8).collect();
        std::fs::File::create(&path)
            .unwrap()
            .write_all(&data)
            .unwrap();
        let file = File::open(&path).unwrap();
        for (offset, len) in [(0usize, 0usize), (0, 1), (7, 65_536), (150_000, 50_000)] {
            let got = read_exact_at_uninit(&file, len, offset as u64).unwrap();
            assert_eq!(got, data[offset..offset + len]);
        }
        let past = read_exact_at_uninit(&file, 10, 199_995).unwrap_err();
        assert_eq!(past.kind(), io::ErrorKind::UnexpectedEof);
        let beyond = read_exact_at_uninit(&file, 1, 300_000).unwrap_err();
        assert_eq!(beyond.kind(), io::ErrorKind::UnexpectedEof);
    }
}
