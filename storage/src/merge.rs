//! The merging iterator: one sorted view over several sorted sources.
//!
//! Owns: [`MergingIter`], which combines memtable and SSTable cursors (newest source
//! first) into a single ascending stream. Equal keys from several sources are all
//! yielded, the newest source's first.
//! Must not: drop, resolve or interpret entries; that is the read path's job.

use crate::error::Result;
use crate::iter::KvIter;

/// One cursor over `children` (newest source first): the only child itself when
/// there is one (as after a compaction), saving every step a second dynamic call
/// and a pass over the children; a [`MergingIter`] otherwise.
pub fn merged(mut children: Vec<Box<dyn KvIter>>) -> Box<dyn KvIter> {
    if children.len() == 1 {
        if let Some(only) = children.pop() {
            return only;
        }
    }
    Box::new(MergingIter::new(children))
}

/// Merges child cursors. Sources are few (memtables + at most a handful of files per
/// family), so the smallest child is found by a linear pass.
pub struct MergingIter {
    children: Vec<Box<dyn KvIter>>,
    current: Option<usize>,
}

impl MergingIter {
    /// Merges `children`, ordered newest source first.
    pub fn new(children: Vec<Box<dyn KvIter>>) -> Self {
        MergingIter {
            children,
            current: None,
        }
    }

    /// Number of sources.
    pub fn source_count(&self) -> usize {
        self.children.len()
    }

    fn pick_smallest(&mut self) {
        let mut best: Option<usize> = None;
        for (i, c) in self.children.iter().enumerate() {
            if !c.valid() {
                continue;
            }
            best = match best {
                None => Some(i),
                Some(b) => match self.children.get(b) {
                    Some(bc) if c.key() < bc.key() => Some(i),
                    _ => Some(b),
                },
            };
        }
        self.current = best;
    }

    fn pick_largest(&mut self) {
        let mut best: Option<usize> = None;
        for (i, c) in self.children.iter().enumerate() {
            if !c.valid() {
                continue;
            }
            best = match best {
                None => Some(i),
                Some(b) => match self.children.get(b) {
                    Some(bc) if c.key() > bc.key() => Some(i),
                    _ => Some(b),
                },
            };
        }
        self.current = best;
    }
}

impl KvIter for MergingIter {
    fn seek(&mut self, target: &[u8]) -> Result<()> {
        for c in &mut self.children {
            c.seek(target)?;
        }
        self.pick_smallest();
        Ok(())
    }

    /// Positions at the largest key < `target` over all sources. Call `seek` before
    /// stepping forward again: `next` after this moves every source forward only from
    /// where each one stands.
    fn seek_for_prev(&mut self, target: &[u8]) -> Result<()> {
        for c in &mut self.children {
            c.seek_for_prev(target)?;
        }
        self.pick_largest();
        Ok(())
    }

    fn next(&mut self) -> Result<()> {
        if let Some(i) = self.current {
            if let Some(c) = self.children.get_mut(i) {
                c.next()?;
            }
        }
        self.pick_smallest();
        Ok(())
    }

    fn valid(&self) -> bool {
        self.current.is_some()
    }

    fn key(&self) -> &[u8] {
        self.current
            .and_then(|i| self.children.get(i))
            .map(|c| c.key())
            .unwrap_or(&[])
    }

    fn value(&self) -> &[u8] {
        self.current
            .and_then(|i| self.children.get(i))
            .map(|c| c.value())
            .unwrap_or(&[])
    }

    fn value_bytes(&self) -> bytes::Bytes {
        self.current
            .and_then(|i| self.children.get(i))
            .map(|c| c.value_bytes())
            .unwrap_or_default()
    }
}

/// A cursor over a sorted in-memory vector (tests and small merges).
pub struct VecIter {
    entries: std::sync::Arc<Vec<(Vec<u8>, Vec<u8>)>>,
    pos: usize,
}

impl VecIter {
    /// A cursor over `entries`, which must be sorted by key.
    pub fn new(entries: std::sync::Arc<Vec<(Vec<u8>, Vec<u8>)>>) -> Self {
        let pos = entries.len();
        VecIter { entries, pos }
    }
}

impl KvIter for VecIter {
    fn seek(&mut self, target: &[u8]) -> Result<()> {
        self.pos = self.entries.partition_point(|(k, _)| k.as_slice() < target);
        Ok(())
    }

    fn seek_for_prev(&mut self, target: &[u8]) -> Result<()> {
        let p = self.entries.partition_point(|(k, _)| k.as_slice() < target);
        self.pos = if p == 0 { self.entries.len() } else { p - 1 };
        Ok(())
    }

    fn next(&mut self) -> Result<()> {
        if self.pos < self.entries.len() {
            self.pos += 1;
        }
        Ok(())
    }

    fn valid(&self) -> bool {
        self.pos < self.entries.len()
    }

    fn key(&self) -> &[u8] {
        self.entries
            .get(self.pos)
            .map(|(k, _)| k.as_slice())
            .unwrap_or(&[])
    }

    fn value(&self) -> &[u8] {
        self.entries
            .get(self.pos)
            .map(|(_, v)| v.as_slice())
            .unwrap_or(&[])
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use std::sync::Arc;

    proptest! {
        #[test]
        fn merge_yields_sorted_union(
            sources in proptest::collection::vec(
                proptest::collection::btree_set(proptest::collection::vec(0u8..4, 0..4), 0..20), 0..5),
            target in proptest::collection::vec(0u8..4, 0..4),
        ) {
            let mut all: Vec<Vec<u8>> = sources.iter().flatten().cloned().collect();
            all.sort();
            let children: Vec<Box<dyn KvIter>> = sources
                .iter()
                .map(|s| {
                    let v: Vec<(Vec<u8>, Vec<u8>)> = s.iter().map(|k| (k.clone(), Vec::new())).collect();
                    Box::new(VecIter::new(Arc::new(v))) as Box<dyn KvIter>
                })
                .collect();
            // `merged` hands a single source back as it is; the order must not
            // change either way.
            let mut m = merged(children);
            m.seek(&target).unwrap();
            let mut got = Vec::new();
            while m.valid() {
                got.push(m.key().to_vec());
                m.next().unwrap();
            }
            let expect: Vec<Vec<u8>> = all.iter().filter(|k| k.as_slice() >= target.as_slice()).cloned().collect();
            prop_assert_eq!(got, expect);
            m.seek_for_prev(&target).unwrap();
            let prev = all.iter().filter(|k| k.as_slice() < target.as_slice()).max().cloned();
            prop_assert_eq!(m.valid().then(|| m.key().to_vec()), prev);
        }
    }
}
