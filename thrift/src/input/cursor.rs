//! The byte-level reading shared by the input protocols: a cursor over one
//! in-memory message that refuses to read, or to size an allocation, past
//! its end, and the nesting-depth counter.
//!
//! Owns [`ByteCursor`] and [`Nesting`]. Knows nothing of either wire format
//! beyond byte order; must not panic on any input.

use crate::input::error::InputError;

/// Deepest nesting of structs, lists, sets and maps the input protocols
/// accept; a call's argument struct is level 1. Thrift's own C++ and Java
/// libraries use the same default recursion limit.
pub const MAX_NESTING_DEPTH: usize = 64;

/// A read position in one message held in memory.
#[derive(Debug, Clone)]
pub(crate) struct ByteCursor<'a> {
    bytes: &'a [u8],
    position: usize,
}

impl<'a> ByteCursor<'a> {
    pub(crate) fn new(bytes: &'a [u8]) -> ByteCursor<'a> {
        ByteCursor { bytes, position: 0 }
    }

    /// Bytes consumed so far.
    pub(crate) fn position(&self) -> usize {
        self.position
    }

    /// Bytes not yet consumed.
    pub(crate) fn remaining(&self) -> usize {
        self.bytes.len().saturating_sub(self.position)
    }

    /// The next `count` bytes. Errors: `Truncated` when fewer are left.
    pub(crate) fn take(
        &mut self,
        count: usize,
        what: &'static str,
    ) -> Result<&'a [u8], InputError> {
        let rest = self.bytes.get(self.position..).unwrap_or_default();
        let taken = rest.get(..count).ok_or(InputError::Truncated {
            what,
            needed: count,
            left: rest.len(),
        })?;
        self.position += taken.len();
        Ok(taken)
    }

    pub(crate) fn byte(&mut self, what: &'static str) -> Result<u8, InputError> {
        let [byte] = self.array::<1>(what)?;
        Ok(byte)
    }

    pub(crate) fn array<const N: usize>(
        &mut self,
        what: &'static str,
    ) -> Result<[u8; N], InputError> {
        let left = self.remaining();
        let taken = self.take(N, what)?;
        <[u8; N]>::try_from(taken).map_err(|_| InputError::Truncated {
            what,
            needed: N,
            left,
        })
    }

    /// A copy of the next `length` bytes. The length is checked against the
    /// bytes left before anything is allocated. Errors: `StringTooLong`.
    pub(crate) fn sized_bytes(
        &mut self,
        length: u64,
        what: &'static str,
    ) -> Result<Vec<u8>, InputError> {
        let left = self.remaining();
        let too_long = InputError::StringTooLong { what, length, left };
        let count = usize::try_from(length).map_err(|_| too_long.clone())?;
        if count > left {
            return Err(too_long);
        }
        Ok(self.take(count, what)?.to_vec())
    }

    /// Checks that `count` elements of at least `min_bytes_each` bytes fit
    /// in the bytes left. Errors: `ContainerTooLarge`.
    pub(crate) fn check_elements(
        &self,
        count: u64,
        min_bytes_each: u64,
        what: &'static str,
    ) -> Result<(), InputError> {
        let needed = count.saturating_mul(min_bytes_each);
        let left = self.remaining();
        if needed > u64::try_from(left).unwrap_or(u64::MAX) {
            return Err(InputError::ContainerTooLarge {
                what,
                count,
                needed,
                left,
            });
        }
        Ok(())
    }
}

/// How many structs and containers are open.
#[derive(Debug, Clone, Default)]
pub(crate) struct Nesting {
    depth: usize,
}

impl Nesting {
    /// Opens one level. Errors: `TooDeep` past [`MAX_NESTING_DEPTH`].
    pub(crate) fn enter(&mut self) -> Result<(), InputError> {
        if self.depth >= MAX_NESTING_DEPTH {
            return Err(InputError::TooDeep {
                limit: MAX_NESTING_DEPTH,
            });
        }
        self.depth += 1;
        Ok(())
    }

    /// Closes one level.
    pub(crate) fn leave(&mut self) {
        self.depth = self.depth.saturating_sub(1);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn take_stops_at_the_end_without_moving() {
        let mut cursor = ByteCursor::new(&[1, 2, 3]);
        assert_eq!(cursor.take(2, "x"), Ok(&[1_u8, 2][..]));
        assert_eq!(
            cursor.take(2, "x"),
            Err(InputError::Truncated {
                what: "x",
                needed: 2,
                left: 1
            })
        );
        assert_eq!(cursor.position(), 2);
        assert_eq!(cursor.byte("x"), Ok(3));
        assert_eq!(cursor.remaining(), 0);
    }

    #[test]
    fn sized_bytes_refuses_lengths_beyond_the_message() {
        let mut cursor = ByteCursor::new(&[9; 4]);
        assert!(matches!(
            cursor.sized_bytes(5, "s"),
            Err(InputError::StringTooLong {
                length: 5,
                left: 4,
                ..
            })
        ));
        assert!(matches!(
            cursor.sized_bytes(u64::MAX, "s"),
            Err(InputError::StringTooLong { .. })
        ));
        assert_eq!(cursor.sized_bytes(4, "s"), Ok(vec![9; 4]));
    }

    #[test]
    fn element_check_uses_the_smallest_encoding() {
        let cursor = ByteCursor::new(&[0; 16]);
        assert!(cursor.check_elements(16, 1, "list").is_ok());
        assert!(cursor.check_elements(2, 8, "list").is_ok());
        assert!(cursor.check_elements(3, 8, "list").is_err());
        assert!(cursor.check_elements(u64::MAX, 2, "list").is_err());
    }

    #[test]
    fn nesting_stops_at_the_limit() {
        let mut nesting = Nesting::default();
        for _ in 0..MAX_NESTING_DEPTH {
            assert!(nesting.enter().is_ok());
        }
        assert_eq!(
            nesting.enter(),
            Err(InputError::TooDeep {
                limit: MAX_NESTING_DEPTH
            })
        );
        nesting.leave();
        assert!(nesting.enter().is_ok());
    }
}
