//! SSTables: the immutable sorted files a family's flushed data lives in.
//!
//! Owns: the on-disk table format (docs/format-sstable.md) and everything that
//! reads or writes it: [`SstWriter`], [`SstReader`] with its cursor [`SstIter`],
//! the row-range view [`BoundedIter`], and the decoded [`Block`] the shared block
//! cache holds.
//! Must not: decide which files exist (the manifest does), when they are written
//! (flush and compaction do) or what their entries mean (the read path does).
//!
//! File layout: data blocks, bloom block, meta block, index block, 64-byte footer.
//! Every block is stored as `payload, compression_type:u8, crc32c:u32le`.

pub(crate) mod block;
mod block_slots;
mod bloom;
mod bounded;
mod builder;
mod coding;
mod envelope;
mod footer;
mod index;
mod meta;
mod reader;
mod sink;
#[cfg(test)]
mod tests;

pub use block::{Block, BlockDefect};
pub use bloom::BloomDefect;
pub use bounded::BoundedIter;
pub use builder::{SstOptions, SstWriter, MAX_BLOCK_SIZE, MAX_ENTRY_BYTES};
pub use envelope::EnvelopeDefect;
pub use footer::{BlockHandle, FooterDefect, FOOTER_LEN, FORMAT_VERSION, MAGIC};
pub use index::IndexDefect;
pub use meta::{MetaDefect, SstMeta};
pub use reader::{SstIter, SstReader};
