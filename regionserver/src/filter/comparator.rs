//! Compare operators and the four comparators of the filter language (`binary`,
//! `binaryprefix`, `regexstring`, `substring`), the ones Tabula adds for what HBase's
//! Java clients send serialized (`long`: LongComparator, the value an 8-byte signed
//! big-endian integer; `bitand`/`bitor`/`bitxor`: BitComparator; `null`:
//! NullComparator; `bigdecimal`: BigDecimalComparator, the value a Java BigDecimal as
//! HBase's `Bytes.toBytes(BigDecimal)` writes it; `binarycomponent`:
//! BinaryComponentComparator, `offset:bytes`), and the pair of them that the compare
//! filters apply to one part of a cell.
//!
//! Must not: know which part of a cell a filter compares (the filters decide that).

use std::cmp::Ordering;

use std::str::FromStr;

use bigdecimal::num_bigint::BigInt;
use bigdecimal::BigDecimal;
use bytes::Bytes;
use regex::Regex;

use super::error::FilterError;
use super::java_regex;

/// A compare operator of the filter language.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum CompareOp {
    Less,
    LessOrEqual,
    Equal,
    NotEqual,
    GreaterOrEqual,
    Greater,
}

impl CompareOp {
    /// Every operator, in the order HBase lists them.
    pub const ALL: [CompareOp; 6] = [
        CompareOp::Less,
        CompareOp::LessOrEqual,
        CompareOp::Equal,
        CompareOp::NotEqual,
        CompareOp::GreaterOrEqual,
        CompareOp::Greater,
    ];

    /// The operator's spelling in a filter string.
    pub fn symbol(self) -> &'static str {
        match self {
            CompareOp::Less => "<",
            CompareOp::LessOrEqual => "<=",
            CompareOp::Equal => "=",
            CompareOp::NotEqual => "!=",
            CompareOp::GreaterOrEqual => ">=",
            CompareOp::Greater => ">",
        }
    }

    /// The operator spelled `text`, if any.
    pub fn from_symbol(text: &[u8]) -> Option<Self> {
        CompareOp::ALL
            .into_iter()
            .find(|op| op.symbol().as_bytes() == text)
    }

    /// Whether `cell_part <op> operand` holds, given how the comparator's operand orders
    /// against the cell part (`operand.cmp(cell_part)`, HBase's `compareTo` result).
    pub fn holds(self, operand_vs_cell: Ordering) -> bool {
        match self {
            CompareOp::Less => operand_vs_cell == Ordering::Greater,
            CompareOp::LessOrEqual => operand_vs_cell != Ordering::Less,
            CompareOp::Equal => operand_vs_cell == Ordering::Equal,
            CompareOp::NotEqual => operand_vs_cell != Ordering::Equal,
            CompareOp::GreaterOrEqual => operand_vs_cell != Ordering::Greater,
            CompareOp::Greater => operand_vs_cell == Ordering::Less,
        }
    }
}

/// A comparator: what a cell part is compared against, and how.
#[derive(Debug, Clone)]
pub enum Comparator {
    /// Lexicographic comparison of unsigned bytes.
    Binary(Bytes),
    /// Like `Binary`, over the first `len(operand)` bytes of the cell part only.
    BinaryPrefix(Bytes),
    /// "Equal" when the pattern is found anywhere in the cell part (decoded as UTF-8).
    RegexString { pattern: String, regex: Regex },
    /// "Equal" when the cell part (decoded as UTF-8) contains the text, ignoring case.
    /// Holds the text already lower-cased.
    Substring(String),
    /// The cell part read as an 8-byte signed big-endian integer, against this one; a
    /// part of another length cannot be compared (HBase's LongComparator throws), so
    /// no operator holds for it.
    Long(i64),
    /// "Equal" when the cell part, as long as the operand, has a non-zero byte once
    /// combined with it by `op` (HBase's BitComparator); "greater" otherwise.
    Bit { operand: Bytes, op: BitOp },
    /// A cell part is never null: always "greater" (HBase's NullComparator).
    Null,
    /// The cell part read as a Java BigDecimal (a 4-byte big-endian scale, then the
    /// unscaled value's two's-complement big-endian bytes), compared by value against
    /// this one; a part shorter than 5 bytes cannot be read (HBase's comparator
    /// throws), so no operator holds for it.
    Decimal(BigDecimal),
    /// The `value.len()` bytes of the cell part from `offset` against `value`,
    /// unsigned; a part too short to hold them cannot be compared (HBase's comparator
    /// reads past its end), so no operator holds for it.
    Component { offset: usize, value: Bytes },
}

/// The value of a Java BigDecimal in the form HBase's `Bytes.toBytes(BigDecimal)`
/// writes (a 4-byte big-endian scale, then the unscaled value's two's-complement
/// big-endian bytes); `None` for fewer than 5 bytes.
fn java_decimal(bytes: &[u8]) -> Option<BigDecimal> {
    let scale: [u8; 4] = bytes.get(..4)?.try_into().ok()?;
    let unscaled = bytes.get(4..).filter(|rest| !rest.is_empty())?;
    Some(BigDecimal::new(
        BigInt::from_signed_bytes_be(unscaled),
        i64::from(i32::from_be_bytes(scale)),
    ))
}

/// How a [`Comparator::Bit`] combines the cell part with its operand.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BitOp {
    And,
    Or,
    Xor,
}

impl BitOp {
    fn apply(self, a: u8, b: u8) -> u8 {
        match self {
            BitOp::And => a & b,
            BitOp::Or => a | b,
            BitOp::Xor => a ^ b,
        }
    }
}

/// A Java BigDecimal's bytes (see [`Comparator::Decimal`]) as the decimal text a
/// `bigdecimal:` comparator takes; `None` for fewer than 5 bytes.
pub fn java_decimal_text(bytes: &[u8]) -> Option<String> {
    java_decimal(bytes).map(|value| value.to_string())
}

impl Comparator {
    /// Parses a comparator argument `type:value` (split at the first `:`).
    pub fn parse(spec: &[u8]) -> Result<Self, FilterError> {
        let colon = spec
            .iter()
            .position(|&b| b == b':')
            .ok_or_else(|| FilterError::MalformedComparator(lossy(spec)))?;
        let (kind, rest) = spec.split_at(colon);
        let value = rest.get(1..).unwrap_or_default();
        match kind {
            b"binary" => Ok(Comparator::Binary(Bytes::copy_from_slice(value))),
            b"binaryprefix" => Ok(Comparator::BinaryPrefix(Bytes::copy_from_slice(value))),
            b"regexstring" => {
                let pattern = lossy(value);
                let regex = java_regex::compile(&pattern)?;
                Ok(Comparator::RegexString { pattern, regex })
            }
            b"substring" => Ok(Comparator::Substring(lossy(value).to_lowercase())),
            b"long" => std::str::from_utf8(value)
                .ok()
                .and_then(|text| text.trim().parse::<i64>().ok())
                .map(Comparator::Long)
                .ok_or_else(|| FilterError::BadLong(lossy(value))),
            b"bitand" | b"bitor" | b"bitxor" => Ok(Comparator::Bit {
                operand: Bytes::copy_from_slice(value),
                op: match kind {
                    b"bitand" => BitOp::And,
                    b"bitor" => BitOp::Or,
                    _ => BitOp::Xor,
                },
            }),
            b"null" => Ok(Comparator::Null),
            b"bigdecimal" => std::str::from_utf8(value)
                .ok()
                .and_then(|text| BigDecimal::from_str(text.trim()).ok())
                .map(Comparator::Decimal)
                .ok_or_else(|| FilterError::BadDecimal(lossy(value))),
            b"binarycomponent" => {
                let bad = || FilterError::BadComponent(lossy(value));
                let colon = value.iter().position(|&b| b == b':').ok_or_else(bad)?;
                let (offset, rest) = value.split_at(colon);
                let offset = std::str::from_utf8(offset)
                    .ok()
                    .filter(|digits| {
                        !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit())
                    })
                    .and_then(|digits| digits.parse::<usize>().ok())
                    .ok_or_else(bad)?;
                Ok(Comparator::Component {
                    offset,
                    value: Bytes::copy_from_slice(rest.get(1..).unwrap_or_default()),
                })
            }
            _ => Err(FilterError::UnknownComparatorType(lossy(kind))),
        }
    }

    /// The comparator's type name in a filter string.
    pub fn type_name(&self) -> &'static str {
        match self {
            Comparator::Binary(_) => "binary",
            Comparator::BinaryPrefix(_) => "binaryprefix",
            Comparator::RegexString { .. } => "regexstring",
            Comparator::Substring(_) => "substring",
            Comparator::Long(_) => "long",
            Comparator::Bit { op: BitOp::And, .. } => "bitand",
            Comparator::Bit { op: BitOp::Or, .. } => "bitor",
            Comparator::Bit { op: BitOp::Xor, .. } => "bitxor",
            Comparator::Null => "null",
            Comparator::Decimal(_) => "bigdecimal",
            Comparator::Component { .. } => "binarycomponent",
        }
    }

    /// True for the comparators that only tell "match" from "no match".
    pub fn is_match_only(&self) -> bool {
        matches!(
            self,
            Comparator::RegexString { .. } | Comparator::Substring(_)
        )
    }

    /// How the operand orders against `cell_part`; `None` when the part cannot be
    /// compared (a `long` comparator's part not 8 bytes long, a `bigdecimal` one's
    /// shorter than 5, a `binarycomponent` one's too short for the component). The match-only
    /// comparators answer `Equal` for a match and `Greater` otherwise, as HBase's do
    /// (0 or 1).
    pub fn compare_to(&self, cell_part: &[u8]) -> Option<Ordering> {
        Some(match self {
            Comparator::Binary(operand) => operand.as_ref().cmp(cell_part),
            Comparator::BinaryPrefix(operand) => {
                let len = operand.len().min(cell_part.len());
                operand
                    .as_ref()
                    .cmp(cell_part.get(..len).unwrap_or(cell_part))
            }
            Comparator::RegexString { regex, .. } => {
                match_answer(regex.is_match(&String::from_utf8_lossy(cell_part)))
            }
            Comparator::Substring(needle) => match_answer(
                String::from_utf8_lossy(cell_part)
                    .to_lowercase()
                    .contains(needle.as_str()),
            ),
            Comparator::Long(operand) => {
                let bytes: [u8; 8] = cell_part.try_into().ok()?;
                operand.cmp(&i64::from_be_bytes(bytes))
            }
            Comparator::Bit { operand, op } => match_answer(
                operand.len() == cell_part.len()
                    && operand
                        .iter()
                        .zip(cell_part)
                        .any(|(a, b)| op.apply(*a, *b) != 0),
            ),
            Comparator::Null => Ordering::Greater,
            Comparator::Decimal(operand) => operand.cmp(&java_decimal(cell_part)?),
            Comparator::Component { offset, value } => {
                let end = offset.checked_add(value.len())?;
                value.as_ref().cmp(cell_part.get(*offset..end)?)
            }
        })
    }
}

fn match_answer(found: bool) -> Ordering {
    if found {
        Ordering::Equal
    } else {
        Ordering::Greater
    }
}

/// An operator with its comparator: the test a compare filter applies to a cell part.
#[derive(Debug, Clone)]
pub struct Comparison {
    pub op: CompareOp,
    pub comparator: Comparator,
}

impl Comparison {
    /// Whether `cell_part <op> operand` holds.
    pub fn passes(&self, cell_part: &[u8]) -> bool {
        self.comparator
            .compare_to(cell_part)
            .is_some_and(|order| self.op.holds(order))
    }
}

/// Bytes as text for messages and for the text-based comparators.
pub(crate) fn lossy(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn comparison(op: CompareOp, spec: &str) -> Comparison {
        Comparison {
            op,
            comparator: Comparator::parse(spec.as_bytes()).unwrap(),
        }
    }

    #[test]
    fn binary_operators_read_cell_op_operand() {
        let below_m = comparison(CompareOp::Less, "binary:m");
        assert!(below_m.passes(b"a"));
        assert!(!below_m.passes(b"m"));
        assert!(!below_m.passes(b"z"));
        let at_most_m = comparison(CompareOp::LessOrEqual, "binary:m");
        assert!(at_most_m.passes(b"m"));
        assert!(!at_most_m.passes(b"ma"));
        let above_m = comparison(CompareOp::Greater, "binary:m");
        assert!(above_m.passes(b"ma"));
        assert!(!above_m.passes(b"m"));
        let at_least_m = comparison(CompareOp::GreaterOrEqual, "binary:m");
        assert!(at_least_m.passes(b"m"));
        assert!(!at_least_m.passes(b"l"));
        assert!(comparison(CompareOp::NotEqual, "binary:m").passes(b"n"));
        assert!(!comparison(CompareOp::NotEqual, "binary:m").passes(b"m"));
    }

    #[test]
    fn binary_is_unsigned() {
        let below = comparison(CompareOp::Less, "binary:\u{7f}");
        assert!(!below.passes(&[0x80]));
        assert!(below.passes(&[0x01]));
    }

    #[test]
    fn binaryprefix_compares_only_the_prefix_length() {
        let eq = comparison(CompareOp::Equal, "binaryprefix:ab");
        assert!(eq.passes(b"abc"));
        assert!(eq.passes(b"ab"));
        assert!(!eq.passes(b"a"));
        assert!(!eq.passes(b"acb"));
        let less = comparison(CompareOp::Less, "binaryprefix:b");
        assert!(less.passes(b"azzz"));
        assert!(!less.passes(b"bzzz"));
    }

    #[test]
    fn substring_ignores_case() {
        let eq = comparison(CompareOp::Equal, "substring:HeLLo");
        assert!(eq.passes(b"say hello there"));
        assert!(eq.passes(b"HELLO"));
        assert!(!eq.passes(b"help"));
        assert!(comparison(CompareOp::NotEqual, "substring:x").passes(b"abc"));
    }

    #[test]
    fn regexstring_finds_anywhere_with_dotall() {
        let eq = comparison(CompareOp::Equal, "regexstring:b.d");
        assert!(eq.passes(b"abcde"));
        assert!(eq.passes(b"ab\nde"));
        assert!(!eq.passes(b"bd"));
        let anchored = comparison(CompareOp::Equal, "regexstring:^ab");
        assert!(anchored.passes(b"abc"));
        assert!(!anchored.passes(b"cab"));
    }

    #[test]
    fn comparator_errors_name_the_problem() {
        assert_eq!(
            Comparator::parse(b"binary").unwrap_err().to_string(),
            "Incorrect comparator 'binary': expected 'type:value'"
        );
        assert_eq!(
            Comparator::parse(b"Binary:x").unwrap_err(),
            FilterError::UnknownComparatorType("Binary".into())
        );
        let bad = Comparator::parse(b"regexstring:(a").unwrap_err();
        assert!(matches!(bad, FilterError::InvalidRegex { ref pattern, .. } if pattern == "(a"));
    }

    #[test]
    fn value_keeps_everything_after_the_first_colon() {
        match Comparator::parse(b"binary:a:b").unwrap() {
            Comparator::Binary(v) => assert_eq!(v.as_ref(), b"a:b"),
            other => panic!("unexpected {other:?}"),
        }
    }

    #[test]
    fn long_comparator_reads_eight_byte_signed_values() {
        let at_least = comparison(CompareOp::GreaterOrEqual, "long:-5");
        assert!(at_least.passes(&(-5i64).to_be_bytes()));
        assert!(at_least.passes(&7i64.to_be_bytes()));
        assert!(!at_least.passes(&(-6i64).to_be_bytes()));
        // Not 8 bytes: no operator holds, not even !=.
        assert!(!at_least.passes(b"short"));
        assert!(!comparison(CompareOp::NotEqual, "long:1").passes(b"short"));
        assert!(matches!(
            Comparator::parse(b"long:twelve"),
            Err(FilterError::BadLong(_))
        ));
    }

    #[test]
    fn bit_comparators_match_when_a_combined_byte_is_set() {
        let and = Comparison {
            op: CompareOp::Equal,
            comparator: Comparator::parse(b"bitand:\x0f").unwrap(),
        };
        assert!(and.passes(&[0x01]));
        assert!(!and.passes(&[0xf0]));
        // Lengths must agree.
        assert!(!and.passes(&[0x01, 0x01]));
        let xor = Comparison {
            op: CompareOp::Equal,
            comparator: Comparator::parse(b"bitxor:a").unwrap(),
        };
        assert!(!xor.passes(b"a"));
        assert!(xor.passes(b"b"));
    }

    #[test]
    fn null_comparator_finds_every_value_greater() {
        assert!(!comparison(CompareOp::Equal, "null:").passes(b""));
        assert!(comparison(CompareOp::NotEqual, "null:").passes(b"x"));
    }

    /// A Java BigDecimal's bytes: the scale, then the unscaled value's minimal
    /// two's-complement bytes (as `BigInteger.toByteArray` writes them).
    fn java_bytes(unscaled: i64, scale: i32) -> Vec<u8> {
        let mut out = scale.to_be_bytes().to_vec();
        let full = unscaled.to_be_bytes();
        // Drop leading bytes that only repeat the sign of the next one.
        let mut start = 0;
        while start < 7 {
            let (head, next) = (full[start], full[start + 1]);
            let redundant = (head == 0 && next < 0x80) || (head == 0xff && next >= 0x80);
            if !redundant {
                break;
            }
            start += 1;
        }
        out.extend_from_slice(&full[start..]);
        out
    }

    #[test]
    fn bigdecimal_compares_java_decimals_by_value() {
        let at_least = comparison(CompareOp::GreaterOrEqual, "bigdecimal:12.5");
        assert!(at_least.passes(&java_bytes(125, 1)));
        assert!(at_least.passes(&java_bytes(12500, 3)));
        assert!(at_least.passes(&java_bytes(13, 0)));
        assert!(!at_least.passes(&java_bytes(1249, 2)));
        assert!(!at_least.passes(&java_bytes(-13, 0)));
        // 2 x 10^9 (a negative scale) is above.
        assert!(at_least.passes(&java_bytes(2, -9)));
        let equal = comparison(CompareOp::Equal, "bigdecimal:-5E+3");
        assert!(equal.passes(&java_bytes(-5000, 0)));
        assert!(equal.passes(&java_bytes(-50000000, 4)));
        // Fewer than 5 bytes cannot be read: no operator holds.
        assert!(!comparison(CompareOp::NotEqual, "bigdecimal:1").passes(&[0, 0, 0, 1]));
        assert!(!comparison(CompareOp::NotEqual, "bigdecimal:1").passes(b""));
        // Scales far apart are compared without building 10^(2^31).
        assert!(comparison(CompareOp::Less, "bigdecimal:1").passes(&java_bytes(1, i32::MAX)));
        assert!(comparison(CompareOp::Greater, "bigdecimal:1").passes(&java_bytes(1, i32::MIN)));
        assert!(matches!(
            Comparator::parse(b"bigdecimal:twelve"),
            Err(FilterError::BadDecimal(_))
        ));
        assert_eq!(
            java_decimal_text(&java_bytes(1234, 2)).as_deref(),
            Some("12.34")
        );
        assert_eq!(java_decimal_text(&[0, 0, 0, 1]), None);
    }

    #[test]
    fn binarycomponent_compares_the_bytes_at_its_offset() {
        let equal = comparison(CompareOp::Equal, "binarycomponent:2:c:d");
        assert!(equal.passes(b"abc:d"));
        assert!(equal.passes(b"xyc:dzz"));
        assert!(!equal.passes(b"c:d"));
        let less = comparison(CompareOp::Less, "binarycomponent:1:m");
        // Read as `component < operand`.
        assert!(less.passes(b"aa"));
        assert!(!less.passes(b"az"));
        // Too short to hold the component: no operator holds.
        assert!(!comparison(CompareOp::NotEqual, "binarycomponent:4:xy").passes(b"abcdx"));
        for bad in [
            &b"binarycomponent:x"[..],
            b"binarycomponent:-1:a",
            b"binarycomponent::a",
        ] {
            assert!(
                matches!(Comparator::parse(bad), Err(FilterError::BadComponent(_))),
                "{}",
                lossy(bad)
            );
        }
    }

    #[test]
    fn extreme_decimals_and_offsets_are_answered_not_panicked_on() {
        for spec in [
            &b"bigdecimal:1E+9223372036854775807"[..],
            b"bigdecimal:1E-9223372036854775808",
            b"bigdecimal:-0.000000000000000000000000000000000001",
            b"bigdecimal:99999999999999999999999999999999999999999999",
            b"binarycomponent:18446744073709551615:x",
        ] {
            if let Ok(comparator) = Comparator::parse(spec) {
                for value in [
                    java_bytes(1, i32::MAX),
                    java_bytes(-1, i32::MIN),
                    java_bytes(0, 0),
                    vec![0x7f; 64],
                ] {
                    let _ = comparator.compare_to(&value);
                }
            }
        }
        assert!(Comparator::parse(b"binarycomponent:99999999999999999999999:x").is_err());
    }

    proptest::proptest! {
        #[test]
        fn any_decimal_spec_and_value_are_answered_not_panicked_on(
            spec in "[-+0-9.eE]{0,24}",
            value in proptest::collection::vec(proptest::prelude::any::<u8>(), 0..24),
        ) {
            let mut text = b"bigdecimal:".to_vec();
            text.extend_from_slice(spec.as_bytes());
            if let Ok(comparator) = Comparator::parse(&text) {
                let _ = comparator.compare_to(&value);
            }
        }

        #[test]
        fn bigdecimal_orders_like_exact_arithmetic(
            a in -1_000_000i64..1_000_000,
            a_scale in -5i32..6,
            b in -1_000_000i64..1_000_000,
            b_scale in -5i32..6,
        ) {
            // Both as multiples of 10^-10, exactly, in i128.
            let exact = |unscaled: i64, scale: i32| {
                i128::from(unscaled) * 10i128.pow(u32::try_from(10 - scale).expect("scale <= 10"))
            };
            let operand = java_decimal_text(&java_bytes(a, a_scale)).expect("decodes");
            let mut spec = b"bigdecimal:".to_vec();
            spec.extend_from_slice(operand.as_bytes());
            let comparator = Comparator::parse(&spec).expect("parses");
            proptest::prop_assert_eq!(
                comparator.compare_to(&java_bytes(b, b_scale)),
                Some(exact(a, a_scale).cmp(&exact(b, b_scale)))
            );
        }
    }
}
