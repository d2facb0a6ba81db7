//! A hint to the CPU that some bytes will be read soon.
//!
//! Owns: [`prefetch`] and [`prefetch_all`], the one place the engine issues a
//! prefetch instruction. A scan steps through a block's entries one by one, and
//! with large values every entry header sits on a cache line not yet loaded;
//! asking for the next entry while the current row is being resolved hides most
//! of that wait. A seek binary-searches a block's restart tables; asking for all
//! their lines first makes one wait of what would be one per probe.
//! Must not: read or write memory itself. The hint never changes what a program
//! computes; on targets without one it does nothing.

/// Asks the CPU to bring the cache line holding `bytes[at]` into its caches. Does
/// nothing when `at` is past the end of `bytes`.
#[inline(always)]
pub(crate) fn prefetch(bytes: &[u8], at: usize) {
    let Some(byte) = bytes.get(at) else {
        return;
    };
    prefetch_address(std::ptr::from_ref(byte));
}

/// Bytes of one cache line, as far as prefetching is concerned.
const LINE: usize = 64;

/// Asks the CPU for every cache line of `items` at once, when they span at most
/// `max_lines` lines (nothing otherwise). A binary search over a small array not
/// in the caches then waits for memory about once instead of once per probe.
#[inline(always)]
pub(crate) fn prefetch_all<T>(items: &[T], max_lines: usize) {
    let bytes = std::mem::size_of_val(items);
    if bytes == 0 || bytes > max_lines.saturating_mul(LINE) {
        return;
    }
    let first = items.as_ptr().cast::<u8>();
    // The line holding the first byte, then every line up to the last byte's.
    let misalignment = first as usize % LINE;
    let line_start = first.wrapping_sub(misalignment);
    let mut offset = 0;
    while offset < bytes + misalignment {
        prefetch_address(line_start.wrapping_add(offset));
        offset += LINE;
    }
}

#[cfg(target_arch = "x86_64")]
#[inline(always)]
#[allow(unsafe_code)]
fn prefetch_address(address: *const u8) {
    use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
    // SAFETY: a prefetch is only a hint: it never faults (whatever the address),
    // never writes and has no effect a program can observe except timing. Callers
    // pass addresses inside live allocations anyway.
    unsafe { _mm_prefetch::<_MM_HINT_T0>(address.cast::<i8>()) }
}

#[cfg(not(target_arch = "x86_64"))]
#[inline(always)]
fn prefetch_address(_address: *const u8) {}

#[cfg(test)]
mod tests {
    use super::{prefetch, prefetch_all};

    #[test]
    fn any_offset_is_harmless() {
        let bytes = vec![7u8; 100];
        for at in [0, 63, 64, 99, 100, usize::MAX] {
            prefetch(&bytes, at);
        }
        prefetch(&[], 0);
        prefetch_all(&bytes, 1);
        prefetch_all(&bytes, 2);
        prefetch_all::<u64>(&[], 4);
        prefetch_all(&[[0u32; 5]; 40], 100);
        assert_eq!(bytes, vec![7u8; 100], "a prefetch never changes memory");
    }
}
