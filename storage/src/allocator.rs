//! The process allocator of Tabula's binaries, with the `jemalloc` feature on.
//!
//! Owns: the `#[global_allocator]` and jemalloc's start-up options. A crate that
//! links this one with the feature (the `tabula` server, the storage benchmark)
//! allocates with jemalloc; without it (plain `cargo test -p tabula-storage`) the
//! system allocator stays.
//! Must not: hold anything but the allocator choice.
//!
//! Why jemalloc: glibc's malloc kept freed memtable and block memory in its
//! per-thread arenas; during a 10 M-row load its heaps held over 1 GiB while under
//! 200 MiB was in use, pushing the server past its memory budget. jemalloc returns
//! freed pages to the system (see [`JEMALLOC_CONF`]).

/// The allocator.
#[cfg(all(feature = "jemalloc", unix, not(target_env = "msvc")))]
#[global_allocator]
static GLOBAL: tikv_jemallocator::Jemalloc = tikv_jemallocator::Jemalloc;

/// jemalloc's start-up options, read by the allocator itself through this exported
/// symbol: background threads purge freed pages within about a second, so that the
/// memory budget bounds the resident set rather than only the memory in use; and
/// jemalloc asks the kernel for transparent huge pages for its memory and its own
/// metadata (`thp:always`, `metadata_thp:always`; the kernel's default mode,
/// `madvise`, gives them only to memory that asks).
///
/// Why huge pages: a get of cached data touches a few lines of a block chosen at
/// random among a gigabyte of 64 KiB blocks, and with 4 KiB pages nearly every
/// one of those touches also misses the processor's address-translation cache.
/// With 2 MiB pages, gets over the wire spent 0.6-1.3 us less user time each
/// (bench/RESULTS.md). A page that is only partly used stays resident whole; in a
/// 10 M-row load under a 1 GiB budget the resident set still peaked at 624 MiB.
///
/// Exporting a symbol by name is `unsafe_code` to the compiler (two crates could
/// export the same one); this is the only definition of `_rjem_malloc_conf` in the
/// workspace, and the name is the one tikv-jemallocator's jemalloc reads.
#[cfg(all(feature = "jemalloc", unix, not(target_env = "msvc")))]
#[allow(unsafe_code)]
#[export_name = "_rjem_malloc_conf"]
pub static JEMALLOC_CONF: &[u8; 91] =
    b"background_thread:true,dirty_decay_ms:1000,muzzy_decay_ms:0,thp:always,\
      metadata_thp:always\0";
