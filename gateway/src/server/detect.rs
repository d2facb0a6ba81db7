//! Telling a connection's transport and protocol from its first bytes.
//!
//! Owns [`detect`] and the [`WireMode`] it answers with. It inspects a byte prefix only;
//! it does not read sockets or keep state.

use crate::server::wire::{is_compact_start, WireProtocol};

/// How messages are delimited on a connection.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Transport {
    /// Messages back to back with no length ("buffered" transport).
    Unframed,
    /// Each message preceded by its length as a big-endian i32.
    Framed,
    /// HTTP/1.1 POST requests whose bodies are messages (HBase's HTTP mode).
    Http,
}

/// The transport and protocol one connection speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct WireMode {
    /// Message delimiting.
    pub transport: Transport,
    /// Message encoding. For HTTP this is the expected encoding; each body is checked.
    pub protocol: WireProtocol,
}

/// Answer of [`detect`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Detection {
    /// The connection speaks this mode.
    Detected(WireMode),
    /// More bytes are needed to decide.
    NeedMore,
    /// The bytes match no supported mode.
    Unrecognized,
}

/// Longest prefix [`detect`] ever needs before it decides.
pub const MAX_SNIFF_LEN: usize = 9;

/// Longest method name accepted when recognising a non-strict binary header.
const MAX_SNIFFED_NAME_LEN: i32 = 4096;

const HTTP_POST: &[u8] = b"POST ";

/// Decides the mode of a connection from the bytes it sent first.
pub fn detect(prefix: &[u8]) -> Detection {
    let Some(&first) = prefix.first() else {
        return Detection::NeedMore;
    };
    match first {
        0x80 => match prefix.get(1) {
            None => Detection::NeedMore,
            Some(0x01) => detected(Transport::Unframed, WireProtocol::Binary),
            Some(_) => Detection::Unrecognized,
        },
        0x82 => match prefix.get(1) {
            None => Detection::NeedMore,
            Some(&second) if is_compact_start(first, second) => {
                detected(Transport::Unframed, WireProtocol::Compact)
            }
            Some(_) => Detection::Unrecognized,
        },
        b'P' => detect_http(prefix),
        _ => detect_length_prefixed(prefix),
    }
}

fn detected(transport: Transport, protocol: WireProtocol) -> Detection {
    Detection::Detected(WireMode {
        transport,
        protocol,
    })
}

fn detect_http(prefix: &[u8]) -> Detection {
    let seen = prefix.len().min(HTTP_POST.len());
    match (prefix.get(..seen), HTTP_POST.get(..seen)) {
        (Some(got), Some(want)) if got == want => {
            if seen == HTTP_POST.len() {
                detected(Transport::Http, WireProtocol::Binary)
            } else {
                Detection::NeedMore
            }
        }
        _ => Detection::Unrecognized,
    }
}

/// The first four bytes are either a frame length or a non-strict binary name length.
fn detect_length_prefixed(prefix: &[u8]) -> Detection {
    // A set sign bit makes the length negative, whatever follows.
    if prefix.first().is_some_and(|byte| byte & 0x80 != 0) {
        return Detection::Unrecognized;
    }
    let Some(length) = be_i32(prefix, 0) else {
        return Detection::NeedMore;
    };
    if length <= 0 {
        return Detection::Unrecognized;
    }
    let Some(&fifth) = prefix.get(4) else {
        return Detection::NeedMore;
    };
    match fifth {
        0x80 => match prefix.get(5) {
            None => Detection::NeedMore,
            Some(0x01) => detected(Transport::Framed, WireProtocol::Binary),
            Some(_) => Detection::Unrecognized,
        },
        0x82 => match prefix.get(5) {
            None => Detection::NeedMore,
            Some(&sixth) if is_compact_start(fifth, sixth) => {
                detected(Transport::Framed, WireProtocol::Compact)
            }
            Some(_) => Detection::Unrecognized,
        },
        // A non-strict binary header inside a frame: name length, then the name.
        0x00 => {
            let Some(name_len) = be_i32(prefix, 4) else {
                return Detection::NeedMore;
            };
            if name_len <= 0 || name_len > MAX_SNIFFED_NAME_LEN || name_len >= length {
                return Detection::Unrecognized;
            }
            match prefix.get(8) {
                None => Detection::NeedMore,
                Some(byte) if byte.is_ascii_graphic() => {
                    detected(Transport::Framed, WireProtocol::Binary)
                }
                Some(_) => Detection::Unrecognized,
            }
        }
        // An unframed non-strict binary header: the length was the method name's.
        byte if byte.is_ascii_graphic() => {
            if length > MAX_SNIFFED_NAME_LEN {
                return Detection::Unrecognized;
            }
            let name_end = usize::try_from(length).map_or(prefix.len(), |n| 4 + n);
            let visible = prefix.get(4..name_end.min(prefix.len())).unwrap_or(&[]);
            if visible.iter().all(u8::is_ascii_graphic) {
                detected(Transport::Unframed, WireProtocol::Binary)
            } else {
                Detection::Unrecognized
            }
        }
        _ => Detection::Unrecognized,
    }
}

fn be_i32(bytes: &[u8], at: usize) -> Option<i32> {
    let word = bytes.get(at..at.checked_add(4)?)?;
    let mut out = [0u8; 4];
    out.copy_from_slice(word);
    Some(i32::from_be_bytes(out))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn mode(transport: Transport, protocol: WireProtocol) -> Detection {
        Detection::Detected(WireMode {
            transport,
            protocol,
        })
    }

    #[test]
    fn strict_binary_is_unframed_binary() {
        assert_eq!(
            detect(&[0x80, 0x01, 0, 1]),
            mode(Transport::Unframed, WireProtocol::Binary)
        );
    }

    #[test]
    fn compact_is_unframed_compact() {
        assert_eq!(
            detect(&[0x82, 0x21]),
            mode(Transport::Unframed, WireProtocol::Compact)
        );
        assert_eq!(detect(&[0x82, 0x22]), Detection::Unrecognized);
    }

    #[test]
    fn framed_variants_are_recognised() {
        assert_eq!(
            detect(&[0, 0, 0, 20, 0x80, 0x01]),
            mode(Transport::Framed, WireProtocol::Binary)
        );
        assert_eq!(
            detect(&[0, 0, 0, 20, 0x82, 0x21]),
            mode(Transport::Framed, WireProtocol::Compact)
        );
        assert_eq!(
            detect(&[0, 0, 0, 20, 0, 0, 0, 3, b'g']),
            mode(Transport::Framed, WireProtocol::Binary)
        );
    }

    #[test]
    fn non_strict_unframed_binary_is_recognised() {
        assert_eq!(
            detect(&[0, 0, 0, 3, b'g', b'e']),
            mode(Transport::Unframed, WireProtocol::Binary)
        );
        assert_eq!(detect(&[0, 0, 0, 3, b'g', b' ']), Detection::Unrecognized);
    }

    #[test]
    fn http_post_is_recognised_and_other_verbs_are_not() {
        assert_eq!(detect(b"POS"), Detection::NeedMore);
        assert_eq!(
            detect(b"POST /"),
            mode(Transport::Http, WireProtocol::Binary)
        );
        assert_eq!(detect(b"PUT /"), Detection::Unrecognized);
        assert_eq!(detect(b"GET / HTTP/1.1"), Detection::Unrecognized);
    }

    #[test]
    fn garbage_is_unrecognized() {
        assert_eq!(detect(&[0xff, 0xff]), Detection::Unrecognized);
        assert_eq!(detect(&[0, 0, 0, 0, 1]), Detection::Unrecognized);
        assert_eq!(detect(&[0, 0, 0, 5, 0x01]), Detection::Unrecognized);
        assert_eq!(detect(&[0x80, 0x02]), Detection::Unrecognized);
    }

    #[test]
    fn short_prefixes_need_more() {
        assert_eq!(detect(&[]), Detection::NeedMore);
        assert_eq!(detect(&[0x80]), Detection::NeedMore);
        assert_eq!(detect(&[0, 0, 0]), Detection::NeedMore);
        assert_eq!(detect(&[0, 0, 0, 9, 0, 0, 0, 3]), Detection::NeedMore);
    }

    #[test]
    fn decision_never_needs_more_than_max_sniff_len() {
        let samples: [&[u8]; 4] = [
            &[0, 0, 0, 20, 0, 0, 0, 3, b'g', 0, 0],
            &[0x80, 0x01, 0, 1, 0, 0, 0, 0, 0, 0],
            b"POST /x HTTP/1.1",
            &[0, 0, 0, 3, b'a', b'b', b'c', 1, 0, 0],
        ];
        for sample in samples {
            let cut = sample.get(..MAX_SNIFF_LEN).unwrap_or(sample);
            assert_ne!(detect(cut), Detection::NeedMore, "{sample:?}");
        }
    }
}
