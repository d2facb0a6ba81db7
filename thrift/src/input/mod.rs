//! Input protocols for a Thrift message held in memory, hardened against
//! hostile bytes: [`binary_input`] and [`compact_input`].
//!
//! They read exactly the wire formats of `thrift::protocol::TBinaryInputProtocol`
//! (both message header forms) and `TCompactInputProtocol`, but over a byte
//! slice, and they check every string length and container size against the
//! bytes left before anything is allocated: a negative length or size, or one
//! the rest of the message cannot hold, is an error. Structs and containers
//! nest at most [`MAX_NESTING_DEPTH`] levels. Every failure is a
//! `thrift::Error::Protocol` (see [`InputError`]); no input makes them panic.
//! This module owns reading only; it must not depend on the generated code.

mod binary;
mod compact;
mod cursor;
mod error;

use thrift::protocol::TMessageType;

pub use binary::BinaryInput;
pub use compact::CompactInput;
pub use cursor::MAX_NESTING_DEPTH;
pub use error::InputError;

/// A binary-protocol reader over `message`, which should hold one whole
/// message. Accepts versioned and unversioned message headers.
pub fn binary_input(message: &[u8]) -> BinaryInput<'_> {
    BinaryInput::new(message)
}

/// A compact-protocol reader over `message`, which should hold one whole
/// message.
pub fn compact_input(message: &[u8]) -> CompactInput<'_> {
    CompactInput::new(message)
}

/// The message type a header byte names (the same codes in both protocols).
fn message_type(code: u8) -> Result<TMessageType, InputError> {
    match code {
        0x01 => Ok(TMessageType::Call),
        0x02 => Ok(TMessageType::Reply),
        0x03 => Ok(TMessageType::Exception),
        0x04 => Ok(TMessageType::OneWay),
        other => Err(InputError::UnknownMessageType(other)),
    }
}
