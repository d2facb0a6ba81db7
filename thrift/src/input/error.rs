//! Why a byte buffer is not a well-formed message, as found by the input
//! protocols in [`crate::input`].
//!
//! Owns [`InputError`] and its mapping to `thrift::Error::Protocol`, the only
//! error kind the protocols return. Must not read bytes itself.

use thrift::{ProtocolError, ProtocolErrorKind};

/// A decoding failure of [`crate::input::BinaryInput`] or
/// [`crate::input::CompactInput`].
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum InputError {
    /// A fixed-size item runs past the end of the message.
    #[error("the message ends inside {what}: {needed} byte(s) needed, {left} left")]
    Truncated {
        what: &'static str,
        needed: usize,
        left: usize,
    },
    /// A string, list, set or map announces a negative size.
    #[error("{what} with negative size {size}")]
    NegativeSize { what: &'static str, size: i64 },
    /// A string announces more bytes than the message has left.
    #[error("{what} of {length} bytes, but only {left} left in the message")]
    StringTooLong {
        what: &'static str,
        length: u64,
        left: usize,
    },
    /// A container announces more elements than its smallest possible
    /// encoding fits in the bytes left.
    #[error("{what} of {count} element(s) needs at least {needed} bytes, only {left} left")]
    ContainerTooLarge {
        what: &'static str,
        count: u64,
        needed: u64,
        left: usize,
    },
    /// The message header names another protocol or version.
    #[error("bad protocol version in message header ({found:#x})")]
    BadVersion { found: u32 },
    /// The message header carries a message type that does not exist.
    #[error("unknown message type {0}")]
    UnknownMessageType(u8),
    /// A field, element, key or value type code that does not exist.
    #[error("unknown type code {code} in {what}")]
    UnknownTypeCode { what: &'static str, code: u8 },
    /// A compact varint that does not end within its maximum length.
    #[error("varint in {what} longer than {max_bytes} bytes")]
    VarintTooLong {
        what: &'static str,
        max_bytes: usize,
    },
    /// A compact varint whose value does not fit its type.
    #[error("{what} value {value} is out of range")]
    OutOfRange { what: &'static str, value: u64 },
    /// A compact bool byte other than 1 (true) or 2 (false).
    #[error("byte {0:#x} is not a compact bool")]
    InvalidBool(u8),
    /// Structs and containers nested deeper than the limit.
    #[error("structs and containers nested deeper than {limit} levels")]
    TooDeep { limit: usize },
    /// A `string` value, or the method name, that is not UTF-8.
    #[error("{what} is not valid UTF-8")]
    NotUtf8 { what: &'static str },
    /// A struct end with no open struct.
    #[error("struct end without a struct begin")]
    UnbalancedStructEnd,
}

impl InputError {
    /// The Thrift protocol error kind this failure is reported as.
    pub fn kind(&self) -> ProtocolErrorKind {
        match self {
            InputError::NegativeSize { .. } => ProtocolErrorKind::NegativeSize,
            InputError::StringTooLong { .. } | InputError::ContainerTooLarge { .. } => {
                ProtocolErrorKind::SizeLimit
            }
            InputError::BadVersion { .. } => ProtocolErrorKind::BadVersion,
            InputError::TooDeep { .. } => ProtocolErrorKind::DepthLimit,
            InputError::Truncated { .. }
            | InputError::UnknownMessageType(_)
            | InputError::UnknownTypeCode { .. }
            | InputError::VarintTooLong { .. }
            | InputError::OutOfRange { .. }
            | InputError::InvalidBool(_)
            | InputError::NotUtf8 { .. }
            | InputError::UnbalancedStructEnd => ProtocolErrorKind::InvalidData,
        }
    }
}

impl From<InputError> for thrift::Error {
    fn from(error: InputError) -> thrift::Error {
        thrift::Error::Protocol(ProtocolError::new(error.kind(), error.to_string()))
    }
}
