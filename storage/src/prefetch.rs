//! A hint to the CPU that some bytes will be read soon.
//!
//! Owns: [`prefetch`], the one place the engine issues a prefetch instruction. A
//! scan steps through a block's entries one by one, and with large values every
//! entry header sits on a cache line not yet loaded; asking for the next entry
//! while the current row is being resolved hides most of that wait.
//! Must not: read or write memory itself. The hint never changes what a program
//! computes; on targets without one it does nothing.

/// Asks the CPU to bring the cache line holding `bytes[at]` into its caches. Does
/// nothing when `at` is past the end of `bytes`.
#[inline(always)]
pub(crate) fn prefetch(bytes: &[u8], at: usize) {
    let Some(byte) = bytes.get(at) else {
        return;
    };
    prefetch_line(byte);
}

#[cfg(target_arch = "x86_64")]
#[inline(always)]
#[allow(unsafe_code)]
fn prefetch_line<T>(value: &T) {
    use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
    // SAFETY: a prefetch is only a hint: it never faults, never writes and has no
    // effect a program can observe except timing. The pointer comes from a live
    // reference anyway.
    unsafe { _mm_prefetch::<_MM_HINT_T0>(std::ptr::from_ref(value).cast::<i8>()) }
}

#[cfg(not(target_arch = "x86_64"))]
#[inline(always)]
fn prefetch_line<T>(_value: &T) {}

#[cfg(test)]
mod tests {
    use super::prefetch;

    #[test]
    fn any_offset_is_harmless() {
        let bytes = vec![7u8; 100];
        for at in [0, 63, 64, 99, 100, usize::MAX] {
            prefetch(&bytes, at);
        }
        prefetch(&[], 0);
        assert_eq!(bytes, vec![7u8; 100], "a prefetch never changes memory");
    }
}
