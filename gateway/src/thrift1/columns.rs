//! Column strings of the Thrift1 API (`family`, `family:`, `family:qualifier`).
//!
//! Owns: splitting a column string at its first `:` exactly as HBase's
//! `CellUtil.parseColumn` does, and turning the result into the engine's column
//! selectors and back into the `family:qualifier` keys of result maps.
//! Must not: look at table schemas (unknown families are the backend's to report).

use bytes::Bytes;
use tabula_storage::ColumnSelector;

/// A parsed column string.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ColumnSpec {
    /// The part before the first `:` (the whole string when there is none).
    pub family: Bytes,
    /// `None` for a bare family (`fam`); `Some(q)` for `fam:q`, where `fam:` gives
    /// `Some("")`, the empty-qualifier column (HBASE-9549).
    pub qualifier: Option<Bytes>,
}

impl ColumnSpec {
    /// Splits `column` at its first `:`; qualifiers may themselves contain `:`.
    pub fn parse(column: &[u8]) -> ColumnSpec {
        match column.iter().position(|&b| b == b':') {
            Some(at) => ColumnSpec {
                family: Bytes::copy_from_slice(column.get(..at).unwrap_or_default()),
                qualifier: Some(Bytes::copy_from_slice(
                    column.get(at + 1..).unwrap_or_default(),
                )),
            },
            None => ColumnSpec {
                family: Bytes::copy_from_slice(column),
                qualifier: None,
            },
        }
    }

    /// [`ColumnSpec::parse`] of an owned column string: family and qualifier share
    /// its bytes instead of copying them.
    pub fn parse_owned(column: Vec<u8>) -> ColumnSpec {
        let at = column.iter().position(|&b| b == b':');
        let column = Bytes::from(column);
        match at {
            Some(at) => ColumnSpec {
                family: column.slice(..at),
                qualifier: Some(column.slice(at + 1..)),
            },
            None => ColumnSpec {
                family: column,
                qualifier: None,
            },
        }
    }

    /// What a read of this column string selects.
    pub fn selector(&self) -> ColumnSelector {
        match &self.qualifier {
            None => ColumnSelector::Family(self.family.clone()),
            Some(q) => ColumnSelector::Column(self.family.clone(), q.clone()),
        }
    }

    /// The family and qualifier, or `None` for a bare family.
    pub fn column(&self) -> Option<(Bytes, Bytes)> {
        self.qualifier
            .as_ref()
            .map(|q| (self.family.clone(), q.clone()))
    }
}

/// Selectors for a list of column strings (empty = every family).
pub fn selectors(columns: &[Vec<u8>]) -> Vec<ColumnSelector> {
    columns
        .iter()
        .map(|c| ColumnSpec::parse(c).selector())
        .collect()
}

/// The `family:qualifier` key HBase uses for a cell in result maps.
pub fn column_key(family: &[u8], qualifier: &[u8]) -> Vec<u8> {
    let mut key = Vec::with_capacity(family.len() + 1 + qualifier.len());
    key.extend_from_slice(family);
    key.push(b':');
    key.extend_from_slice(qualifier);
    key
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #[test]
        fn parse_owned_matches_parse(column in proptest::collection::vec(
            prop_oneof![Just(b':'), Just(b'a'), any::<u8>()], 0..12)) {
            prop_assert_eq!(ColumnSpec::parse_owned(column.clone()), ColumnSpec::parse(&column));
        }
    }

    #[test]
    fn bare_family_selects_the_family() {
        let c = ColumnSpec::parse(b"cf");
        assert_eq!(c.family.as_ref(), b"cf");
        assert_eq!(c.qualifier, None);
        assert_eq!(
            c.selector(),
            ColumnSelector::Family(Bytes::from_static(b"cf"))
        );
        assert_eq!(c.column(), None);
    }

    #[test]
    fn trailing_colon_means_the_empty_qualifier() {
        let c = ColumnSpec::parse(b"cf:");
        assert_eq!(
            c.selector(),
            ColumnSelector::Column(Bytes::from_static(b"cf"), Bytes::new())
        );
    }

    #[test]
    fn split_happens_at_the_first_colon_only() {
        let c = ColumnSpec::parse(b"cf:a:b::");
        assert_eq!(c.family.as_ref(), b"cf");
        assert_eq!(c.qualifier.as_deref(), Some(&b"a:b::"[..]));
    }

    #[test]
    fn leading_colon_gives_an_empty_family() {
        let c = ColumnSpec::parse(b":q");
        assert!(c.family.is_empty());
        assert_eq!(c.qualifier.as_deref(), Some(&b"q"[..]));
    }

    #[test]
    fn empty_list_selects_everything() {
        assert!(selectors(&[]).is_empty());
        assert_eq!(selectors(&[b"a".to_vec(), b"b:c".to_vec()]).len(), 2);
    }

    proptest! {
        #[test]
        fn key_of_a_parsed_column_round_trips(
            family in proptest::collection::vec(any::<u8>().prop_filter("no colon", |b| *b != b':'), 0..8),
            qualifier in proptest::collection::vec(any::<u8>(), 0..8),
        ) {
            let key = column_key(&family, &qualifier);
            let parsed = ColumnSpec::parse(&key);
            prop_assert_eq!(parsed.family.as_ref(), &family[..]);
            prop_assert_eq!(parsed.qualifier.as_deref(), Some(&qualifier[..]));
        }
    }
}
