//! Container decoding called by the generated readers in [`crate::hbase`] and
//! [`crate::hbase2`] (the calls are inserted by `codegen/patch_generated.py`).
//!
//! Owns the checks a list, set or map header gets before any element is
//! decoded: the element (key, value) types it announces must be the IDL's,
//! otherwise the whole container is skipped the way an unknown field is; its
//! size must not be negative; and the room reserved up front is bounded, so a
//! size from the wire never sizes an allocation. Must not depend on the
//! generated modules, and must not change what a well-formed container decodes
//! to.

use std::collections::{BTreeMap, BTreeSet};

use thrift::protocol::{TInputProtocol, TType};
use thrift::{ProtocolError, ProtocolErrorKind};

use crate::wire::skip_value;

/// Most elements a list reserves room for before decoding them; longer
/// lists grow as their elements arrive.
pub const MAX_PREALLOCATED_ELEMENTS: usize = 1024;

/// Reads a list whose IDL element type travels as `element_type`.
///
/// `Ok(None)`: the header announced another element type, and the elements
/// were skipped. Errors: the protocol's, a negative size, or the element
/// decoder's.
pub fn read_list<T, F>(
    i_prot: &mut dyn TInputProtocol,
    element_type: TType,
    mut read_element: F,
) -> thrift::Result<Option<Vec<T>>>
where
    F: FnMut(&mut dyn TInputProtocol) -> thrift::Result<T>,
{
    let header = i_prot.read_list_begin()?;
    let count = element_count(header.size, "list")?;
    if header.element_type != element_type {
        skip_elements(i_prot, header.element_type, count)?;
        i_prot.read_list_end()?;
        return Ok(None);
    }
    let mut items = Vec::with_capacity(count.min(MAX_PREALLOCATED_ELEMENTS));
    for _ in 0..count {
        items.push(read_element(&mut *i_prot)?);
    }
    i_prot.read_list_end()?;
    Ok(Some(items))
}

/// Reads a set whose IDL element type travels as `element_type`; repeated
/// elements collapse into one.
///
/// `Ok(None)`: the header announced another element type, and the elements
/// were skipped. Errors: as [`read_list`].
pub fn read_set<T, F>(
    i_prot: &mut dyn TInputProtocol,
    element_type: TType,
    mut read_element: F,
) -> thrift::Result<Option<BTreeSet<T>>>
where
    T: Ord,
    F: FnMut(&mut dyn TInputProtocol) -> thrift::Result<T>,
{
    let header = i_prot.read_set_begin()?;
    let count = element_count(header.size, "set")?;
    if header.element_type != element_type {
        skip_elements(i_prot, header.element_type, count)?;
        i_prot.read_set_end()?;
        return Ok(None);
    }
    let mut items = BTreeSet::new();
    for _ in 0..count {
        items.insert(read_element(&mut *i_prot)?);
    }
    i_prot.read_set_end()?;
    Ok(Some(items))
}

/// Reads a map whose IDL key and value types travel as `key_type` and
/// `value_type`; a repeated key keeps the last value.
///
/// An empty map may carry no types (the compact protocol omits them) and
/// then decodes as empty. `Ok(None)`: the header announced other types, and
/// the entries were skipped. Errors: as [`read_list`], plus a non-empty map
/// without key and value types.
pub fn read_map<K, V, FK, FV>(
    i_prot: &mut dyn TInputProtocol,
    key_type: TType,
    value_type: TType,
    mut read_key: FK,
    mut read_value: FV,
) -> thrift::Result<Option<BTreeMap<K, V>>>
where
    K: Ord,
    FK: FnMut(&mut dyn TInputProtocol) -> thrift::Result<K>,
    FV: FnMut(&mut dyn TInputProtocol) -> thrift::Result<V>,
{
    let header = i_prot.read_map_begin()?;
    let count = element_count(header.size, "map")?;
    let announced = match (header.key_type, header.value_type) {
        (Some(key), Some(value)) => Some((key, value)),
        _ if count == 0 => None,
        _ => {
            return Err(protocol_error(
                ProtocolErrorKind::InvalidData,
                "non-empty map without key and value types".to_owned(),
            ))
        }
    };
    if let Some((wire_key, wire_value)) = announced {
        if (wire_key, wire_value) != (key_type, value_type) {
            for _ in 0..count {
                skip_value(i_prot, wire_key)?;
                skip_value(i_prot, wire_value)?;
            }
            i_prot.read_map_end()?;
            return Ok(None);
        }
    }
    let mut entries = BTreeMap::new();
    for _ in 0..count {
        let key = read_key(&mut *i_prot)?;
        let value = read_value(&mut *i_prot)?;
        entries.insert(key, value);
    }
    i_prot.read_map_end()?;
    Ok(Some(entries))
}

fn element_count(size: i32, container: &str) -> thrift::Result<usize> {
    usize::try_from(size).map_err(|_| {
        protocol_error(
            ProtocolErrorKind::NegativeSize,
            format!("{container} with negative size {size}"),
        )
    })
}

fn skip_elements(
    i_prot: &mut dyn TInputProtocol,
    element_type: TType,
    count: usize,
) -> thrift::Result<()> {
    for _ in 0..count {
        skip_value(i_prot, element_type)?;
    }
    Ok(())
}

fn protocol_error(kind: ProtocolErrorKind, message: String) -> thrift::Error {
    thrift::Error::Protocol(ProtocolError::new(kind, message))
}

#[cfg(test)]
mod tests {
    use super::*;
    use thrift::protocol::{
        TBinaryInputProtocol, TBinaryOutputProtocol, TListIdentifier, TMapIdentifier,
        TOutputProtocol, TSetIdentifier,
    };

    fn encode(write: impl FnOnce(&mut dyn TOutputProtocol) -> thrift::Result<()>) -> Vec<u8> {
        let mut bytes = Vec::new();
        {
            let mut o_prot = TBinaryOutputProtocol::new(&mut bytes, true);
            assert!(write(&mut o_prot).is_ok());
            // A marker after the container proves how much was consumed.
            assert!(o_prot.write_i32(0x5eed).is_ok());
        }
        bytes
    }

    fn marker(i_prot: &mut dyn TInputProtocol) -> Option<i32> {
        i_prot.read_i32().ok()
    }

    #[test]
    fn list_of_the_declared_type_decodes() {
        let bytes = encode(|o| {
            o.write_list_begin(&TListIdentifier::new(TType::I64, 2))?;
            o.write_i64(5)?;
            o.write_i64(-5)?;
            o.write_list_end()
        });
        let mut i_prot = TBinaryInputProtocol::new(bytes.as_slice(), true);
        let list = read_list(&mut i_prot, TType::I64, |i| i.read_i64());
        assert_eq!(list.ok(), Some(Some(vec![5, -5])));
        assert_eq!(marker(&mut i_prot), Some(0x5eed));
    }

    #[test]
    fn list_of_another_element_type_is_skipped_whole() {
        let bytes = encode(|o| {
            o.write_list_begin(&TListIdentifier::new(TType::I32, 3))?;
            for value in [1, 2, 3] {
                o.write_i32(value)?;
            }
            o.write_list_end()
        });
        let mut i_prot = TBinaryInputProtocol::new(bytes.as_slice(), true);
        let list = read_list(&mut i_prot, TType::String, |i| i.read_bytes());
        assert_eq!(list.ok(), Some(None));
        assert_eq!(marker(&mut i_prot), Some(0x5eed));
    }

    #[test]
    fn negative_list_size_is_an_error() {
        let bytes = encode(|o| o.write_list_begin(&TListIdentifier::new(TType::String, -1)));
        let mut i_prot = TBinaryInputProtocol::new(bytes.as_slice(), true);
        match read_list(&mut i_prot, TType::String, |i| i.read_bytes()) {
            Err(thrift::Error::Protocol(error)) => {
                assert_eq!(error.kind, ProtocolErrorKind::NegativeSize)
            }
            other => panic!("expected a negative-size error, got {other:?}"),
        }
    }

    #[test]
    fn set_collapses_repeats_and_skips_other_types() {
        let bytes = encode(|o| {
            o.write_set_begin(&TSetIdentifier::new(TType::I16, 3))?;
            for value in [4, 4, 2] {
                o.write_i16(value)?;
            }
            o.write_set_end()
        });
        let mut i_prot = TBinaryInputProtocol::new(bytes.as_slice(), true);
        let set = read_set(&mut i_prot, TType::I16, |i| i.read_i16());
        assert_eq!(set.ok(), Some(Some(BTreeSet::from([2, 4]))));
        assert_eq!(marker(&mut i_prot), Some(0x5eed));

        let mut i_prot = TBinaryInputProtocol::new(bytes.as_slice(), true);
        let set = read_set(&mut i_prot, TType::Struct, |i| i.read_i16());
        assert_eq!(set.ok(), Some(None));
        assert_eq!(marker(&mut i_prot), Some(0x5eed));
    }

    #[test]
    fn map_with_another_value_type_is_skipped_whole() {
        let bytes = encode(|o| {
            o.write_map_begin(&TMapIdentifier::new(TType::String, TType::I32, 2))?;
            for (key, value) in [(b"a", 1), (b"b", 2)] {
                o.write_bytes(key)?;
                o.write_i32(value)?;
            }
            o.write_map_end()
        });
        let mut i_prot = TBinaryInputProtocol::new(bytes.as_slice(), true);
        let map = read_map(
            &mut i_prot,
            TType::String,
            TType::String,
            |i| i.read_bytes(),
            |i| i.read_bytes(),
        );
        assert_eq!(map.ok(), Some(None));
        assert_eq!(marker(&mut i_prot), Some(0x5eed));

        let mut i_prot = TBinaryInputProtocol::new(bytes.as_slice(), true);
        let map = read_map(
            &mut i_prot,
            TType::String,
            TType::I32,
            |i| i.read_bytes(),
            |i| i.read_i32(),
        );
        let expected = BTreeMap::from([(b"a".to_vec(), 1), (b"b".to_vec(), 2)]);
        assert_eq!(map.ok(), Some(Some(expected)));
        assert_eq!(marker(&mut i_prot), Some(0x5eed));
    }

    /// A protocol whose only job is to hand out one map header, the way the
    /// compact protocol reports maps.
    struct MapHeaderOnly(TMapIdentifier);

    impl TInputProtocol for MapHeaderOnly {
        fn read_message_begin(&mut self) -> thrift::Result<thrift::protocol::TMessageIdentifier> {
            Err("unused".into())
        }
        fn read_message_end(&mut self) -> thrift::Result<()> {
            Ok(())
        }
        fn read_struct_begin(
            &mut self,
        ) -> thrift::Result<Option<thrift::protocol::TStructIdentifier>> {
            Ok(None)
        }
        fn read_struct_end(&mut self) -> thrift::Result<()> {
            Ok(())
        }
        fn read_field_begin(&mut self) -> thrift::Result<thrift::protocol::TFieldIdentifier> {
            Err("unused".into())
        }
        fn read_field_end(&mut self) -> thrift::Result<()> {
            Ok(())
        }
        fn read_bool(&mut self) -> thrift::Result<bool> {
            Err("unused".into())
        }
        fn read_bytes(&mut self) -> thrift::Result<Vec<u8>> {
            Err("unused".into())
        }
        fn read_i8(&mut self) -> thrift::Result<i8> {
            Err("unused".into())
        }
        fn read_i16(&mut self) -> thrift::Result<i16> {
            Err("unused".into())
        }
        fn read_i32(&mut self) -> thrift::Result<i32> {
            Err("unused".into())
        }
        fn read_i64(&mut self) -> thrift::Result<i64> {
            Err("unused".into())
        }
        fn read_double(&mut self) -> thrift::Result<f64> {
            Err("unused".into())
        }
        fn read_string(&mut self) -> thrift::Result<String> {
            Err("unused".into())
        }
        fn read_list_begin(&mut self) -> thrift::Result<TListIdentifier> {
            Err("unused".into())
        }
        fn read_list_end(&mut self) -> thrift::Result<()> {
            Ok(())
        }
        fn read_set_begin(&mut self) -> thrift::Result<TSetIdentifier> {
            Err("unused".into())
        }
        fn read_set_end(&mut self) -> thrift::Result<()> {
            Ok(())
        }
        fn read_map_begin(&mut self) -> thrift::Result<TMapIdentifier> {
            Ok(self.0.clone())
        }
        fn read_map_end(&mut self) -> thrift::Result<()> {
            Ok(())
        }
        fn read_byte(&mut self) -> thrift::Result<u8> {
            Err("unused".into())
        }
    }

    #[test]
    fn empty_map_without_types_is_empty_and_non_empty_is_an_error() {
        let decode = |size| {
            let mut i_prot = MapHeaderOnly(TMapIdentifier::new(None, None, size));
            read_map(
                &mut i_prot,
                TType::String,
                TType::String,
                |i| i.read_bytes(),
                |i| i.read_bytes(),
            )
        };
        assert_eq!(decode(0).ok(), Some(Some(BTreeMap::new())));
        assert!(matches!(decode(1), Err(thrift::Error::Protocol(_))));
    }
}
