//! Property tests of the message-boundary scanner against messages written by the thrift
//! crate's own binary and compact output protocols.

use proptest::prelude::*;
use tabula_gateway::server::{scan_message, MessageScanner, Scan, ScanError, WireProtocol};
use thrift::protocol::{
    TBinaryOutputProtocol, TCompactOutputProtocol, TFieldIdentifier, TListIdentifier,
    TMapIdentifier, TMessageIdentifier, TMessageType, TOutputProtocol, TSetIdentifier,
    TStructIdentifier, TType,
};

/// A Thrift value of any type; containers are homogeneous at the type level.
#[derive(Debug, Clone)]
enum Value {
    Bool(bool),
    Byte(i8),
    I16(i16),
    I32(i32),
    I64(i64),
    Double(f64),
    Bytes(Vec<u8>),
    Struct(Vec<(i16, Value)>),
    List(TType, Vec<Value>),
    Set(TType, Vec<Value>),
    Map(TType, TType, Vec<(Value, Value)>),
}

fn any_type(depth: u32) -> BoxedStrategy<TType> {
    let scalars = prop_oneof![
        Just(TType::Bool),
        Just(TType::I08),
        Just(TType::I16),
        Just(TType::I32),
        Just(TType::I64),
        Just(TType::Double),
        Just(TType::String),
    ];
    if depth == 0 {
        scalars.boxed()
    } else {
        prop_oneof![
            3 => scalars,
            1 => Just(TType::Struct),
            1 => Just(TType::List),
            1 => Just(TType::Set),
            1 => Just(TType::Map),
        ]
        .boxed()
    }
}

fn value_of(ttype: TType, depth: u32) -> BoxedStrategy<Value> {
    let inner = depth.saturating_sub(1);
    match ttype {
        TType::Bool => any::<bool>().prop_map(Value::Bool).boxed(),
        TType::I08 => any::<i8>().prop_map(Value::Byte).boxed(),
        TType::I16 => any::<i16>().prop_map(Value::I16).boxed(),
        TType::I32 => any::<i32>().prop_map(Value::I32).boxed(),
        TType::I64 => any::<i64>().prop_map(Value::I64).boxed(),
        TType::Double => any::<f64>().prop_map(Value::Double).boxed(),
        TType::Struct => struct_value(inner),
        TType::List | TType::Set => (any_type(inner), 0..10usize)
            .prop_flat_map(move |(element, len)| {
                prop::collection::vec(value_of(element, inner), len).prop_map(move |items| {
                    if ttype == TType::List {
                        Value::List(element, items)
                    } else {
                        Value::Set(element, items)
                    }
                })
            })
            .boxed(),
        TType::Map => (any_type(inner), any_type(inner), 0..6usize)
            .prop_flat_map(move |(key, value, len)| {
                prop::collection::vec((value_of(key, inner), value_of(value, inner)), len)
                    .prop_map(move |entries| Value::Map(key, value, entries))
            })
            .boxed(),
        _ => prop::collection::vec(any::<u8>(), 0..40)
            .prop_map(Value::Bytes)
            .boxed(),
    }
}

fn struct_value(depth: u32) -> BoxedStrategy<Value> {
    prop::collection::vec((-50i16..2000, any_type(depth)), 0..6)
        .prop_flat_map(move |fields| {
            fields
                .into_iter()
                .map(|(id, ttype)| value_of(ttype, depth).prop_map(move |v| (id, v)))
                .collect::<Vec<_>>()
        })
        .prop_map(Value::Struct)
        .boxed()
}

fn type_of(value: &Value) -> TType {
    match value {
        Value::Bool(_) => TType::Bool,
        Value::Byte(_) => TType::I08,
        Value::I16(_) => TType::I16,
        Value::I32(_) => TType::I32,
        Value::I64(_) => TType::I64,
        Value::Double(_) => TType::Double,
        Value::Bytes(_) => TType::String,
        Value::Struct(_) => TType::Struct,
        Value::List(..) => TType::List,
        Value::Set(..) => TType::Set,
        Value::Map(..) => TType::Map,
    }
}

fn write_value(o: &mut dyn TOutputProtocol, value: &Value) -> thrift::Result<()> {
    match value {
        Value::Bool(v) => o.write_bool(*v),
        Value::Byte(v) => o.write_i8(*v),
        Value::I16(v) => o.write_i16(*v),
        Value::I32(v) => o.write_i32(*v),
        Value::I64(v) => o.write_i64(*v),
        Value::Double(v) => o.write_double(*v),
        Value::Bytes(v) => o.write_bytes(v),
        Value::Struct(fields) => {
            o.write_struct_begin(&TStructIdentifier::new("s"))?;
            for (id, field) in fields {
                o.write_field_begin(&TFieldIdentifier::new("f", type_of(field), *id))?;
                write_value(o, field)?;
                o.write_field_end()?;
            }
            o.write_field_stop()?;
            o.write_struct_end()
        }
        Value::List(element, items) => {
            o.write_list_begin(&TListIdentifier::new(*element, items.len() as i32))?;
            for item in items {
                write_value(o, item)?;
            }
            o.write_list_end()
        }
        Value::Set(element, items) => {
            o.write_set_begin(&TSetIdentifier::new(*element, items.len() as i32))?;
            for item in items {
                write_value(o, item)?;
            }
            o.write_set_end()
        }
        Value::Map(key, value, entries) => {
            o.write_map_begin(&TMapIdentifier::new(*key, *value, entries.len() as i32))?;
            for (k, v) in entries {
                write_value(o, k)?;
                write_value(o, v)?;
            }
            o.write_map_end()
        }
    }
}

#[derive(Debug, Clone, Copy)]
enum Encoding {
    StrictBinary,
    NonStrictBinary,
    Compact,
}

impl Encoding {
    fn protocol(self) -> WireProtocol {
        match self {
            Encoding::Compact => WireProtocol::Compact,
            _ => WireProtocol::Binary,
        }
    }
}

fn encode(encoding: Encoding, name: &str, seqid: i32, args: &Value) -> Vec<u8> {
    let mut buf = Vec::new();
    let ident = TMessageIdentifier::new(name, TMessageType::Call, seqid);
    let written = {
        let body = |o: &mut dyn TOutputProtocol| -> thrift::Result<()> {
            o.write_message_begin(&ident)?;
            write_value(o, args)?;
            o.write_message_end()?;
            o.flush()
        };
        match encoding {
            Encoding::StrictBinary => body(&mut TBinaryOutputProtocol::new(&mut buf, true)),
            Encoding::NonStrictBinary => body(&mut TBinaryOutputProtocol::new(&mut buf, false)),
            Encoding::Compact => body(&mut TCompactOutputProtocol::new(&mut buf)),
        }
    };
    written.expect("encoding into memory cannot fail");
    buf
}

fn any_encoding() -> impl Strategy<Value = Encoding> {
    prop_oneof![
        Just(Encoding::StrictBinary),
        Just(Encoding::NonStrictBinary),
        Just(Encoding::Compact),
    ]
}

fn any_message() -> impl Strategy<Value = (Encoding, Vec<u8>)> {
    (
        any_encoding(),
        "[a-zA-Z]{1,20}",
        any::<i32>(),
        struct_value(3),
    )
        .prop_map(|(encoding, name, seqid, args)| {
            let bytes = encode(encoding, &name, seqid, &args);
            (encoding, bytes)
        })
}

const LIMIT: usize = 16 * 1024 * 1024;

proptest! {
    #![proptest_config(ProptestConfig { cases: 400, ..ProptestConfig::default() })]

    #[test]
    fn whole_message_is_complete_and_every_prefix_needs_more((encoding, bytes) in any_message()) {
        let protocol = encoding.protocol();
        prop_assert_eq!(scan_message(protocol, &bytes, LIMIT), Scan::Complete(bytes.len()));
        for cut in 0..bytes.len() {
            prop_assert_eq!(
                scan_message(protocol, &bytes[..cut], LIMIT),
                Scan::NeedMore,
                "prefix of {} bytes out of {}", cut, bytes.len()
            );
        }
    }

    #[test]
    fn trailing_bytes_do_not_change_the_boundary(
        (encoding, bytes) in any_message(),
        tail in prop::collection::vec(any::<u8>(), 0..32),
    ) {
        let mut extended = bytes.clone();
        extended.extend_from_slice(&tail);
        prop_assert_eq!(
            scan_message(encoding.protocol(), &extended, LIMIT),
            Scan::Complete(bytes.len())
        );
    }

    #[test]
    fn resumed_scanning_over_growing_chunks_finds_the_same_boundary(
        (encoding, bytes) in any_message(),
        chunk_sizes in prop::collection::vec(1usize..64, 1..200),
    ) {
        let mut scanner = MessageScanner::new(encoding.protocol(), LIMIT);
        let mut seen = 0usize;
        let mut sizes = chunk_sizes.iter().cycle();
        let mut outcome = Scan::NeedMore;
        while seen < bytes.len() {
            seen = (seen + sizes.next().copied().unwrap_or(1)).min(bytes.len());
            outcome = scanner.scan(&bytes[..seen]);
            if seen < bytes.len() {
                prop_assert_eq!(&outcome, &Scan::NeedMore);
            }
        }
        prop_assert_eq!(outcome, Scan::Complete(bytes.len()));
        prop_assert!(scanner.header().is_some());
    }

    #[test]
    fn messages_over_the_limit_are_too_large((encoding, bytes) in any_message()) {
        prop_assume!(bytes.len() > 20);
        let limit = bytes.len() - 1;
        let outcome = scan_message(encoding.protocol(), &bytes, limit);
        prop_assert!(
            matches!(outcome, Scan::Invalid(ScanError::TooLarge { .. })),
            "{:?}", outcome
        );
    }

    #[test]
    fn random_bytes_never_panic(
        bytes in prop::collection::vec(any::<u8>(), 0..512),
        compact in any::<bool>(),
    ) {
        let protocol = if compact { WireProtocol::Compact } else { WireProtocol::Binary };
        if let Scan::Complete(n) = scan_message(protocol, &bytes, LIMIT) {
            prop_assert!(n <= bytes.len());
        }
    }

    #[test]
    fn mutated_messages_never_panic_and_stay_within_bounds(
        (encoding, bytes) in any_message(),
        flips in prop::collection::vec((any::<prop::sample::Index>(), any::<u8>()), 1..8),
    ) {
        let mut mutated = bytes.clone();
        for (index, byte) in flips {
            let at = index.index(mutated.len());
            mutated[at] = byte;
        }
        let mut scanner = MessageScanner::new(encoding.protocol(), LIMIT);
        for cut in [mutated.len() / 3, mutated.len() / 2, mutated.len()] {
            if let Scan::Complete(n) = scanner.scan(&mutated[..cut]) {
                prop_assert!(n <= cut);
            }
        }
    }
}
