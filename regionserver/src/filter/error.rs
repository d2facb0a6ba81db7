//! Errors of the filter language: grammar violations (with the byte position where the
//! text went wrong) and the argument, comparator and regex problems found while building
//! filters from a parsed expression.
//!
//! Must not: decide how an error travels on the wire (the Thrift layer maps it).

use std::fmt;

use thiserror::Error;

/// Why a filter string failed to parse, or a filter failed to build.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum FilterError {
    /// The text does not follow the grammar; `position` is a 0-based byte offset.
    #[error("Incorrect filter string: {problem} at position {position}")]
    Syntax {
        problem: SyntaxProblem,
        position: usize,
    },
    /// A filter name that is not in the registry (names are case-sensitive).
    #[error("Filter Name {0} not supported")]
    UnknownFilter(String),
    /// Wrong number of arguments; `expected` reads like "2 arguments" or "4 or 6 arguments".
    #[error("{filter} expects {expected} but got {got}")]
    ArgumentCount {
        filter: &'static str,
        expected: &'static str,
        got: usize,
    },
    /// An argument of the wrong kind; `index` counts from 1.
    #[error("{filter} argument {index} must be {expected}")]
    ArgumentType {
        filter: &'static str,
        index: usize,
        expected: &'static str,
    },
    /// An integer argument outside the range the filter accepts; `index` counts from 1.
    #[error("{filter} argument {index}: {value} is out of range ({range})")]
    OutOfRange {
        filter: &'static str,
        index: usize,
        value: i64,
        range: &'static str,
    },
    /// Another constraint a filter puts on its arguments.
    #[error("{filter}: {reason}")]
    InvalidArgument {
        filter: &'static str,
        reason: &'static str,
    },
    /// A comparator argument without the `type:` part.
    #[error("Incorrect comparator '{0}': expected 'type:value'")]
    MalformedComparator(String),
    /// A comparator type the language does not know.
    #[error(
        "Incorrect comparator type '{0}': expected binary, binaryprefix, regexstring or substring (or long, bitand, bitor, bitxor, null)"
    )]
    UnknownComparatorType(String),
    /// A `long:` comparator whose value is not a decimal 64-bit integer.
    #[error("Incorrect long comparator value '{0}': expected a decimal 64-bit integer")]
    BadLong(String),
    /// A `bigdecimal:` comparator whose value is not a decimal number.
    #[error("Incorrect bigdecimal comparator value '{0}': expected a decimal number such as 12.50 or 1.5E+3")]
    BadDecimal(String),
    /// A `binarycomponent:` comparator not written `offset:bytes`.
    #[error("Incorrect binarycomponent comparator value '{0}': expected offset:bytes, the offset a non-negative decimal integer")]
    BadComponent(String),
    /// regexstring and substring only answer "matches" or "does not match".
    #[error("{comparator} comparator only allows = and !=")]
    ComparatorOperator { comparator: &'static str },
    /// A regexstring pattern the regex engine cannot compile.
    #[error("Invalid regular expression '{pattern}': {reason}")]
    InvalidRegex { pattern: String, reason: String },
}

/// The grammar rule a filter string broke.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SyntaxProblem {
    /// Nothing but whitespace.
    Empty,
    /// A filter, SKIP, WHILE or '(' was due.
    ExpectedFilter,
    /// Two expressions without AND or OR between them.
    ExpectedOperator,
    /// A filter name not followed by its argument list.
    ExpectedArgumentList,
    /// A comma or ')' where an argument was due.
    ExpectedArgument,
    /// An argument not followed by ',' or ')'.
    ExpectedCommaOrClose,
    /// The input ended inside an argument list.
    UnclosedArgumentList,
    /// The input ended inside a quoted argument.
    UnterminatedQuote,
    /// A '(' never closed.
    UnclosedParenthesis,
    /// A ')' that closes nothing.
    UnmatchedParenthesis,
    /// AND, OR, SKIP or WHILE where the keyword rules do not allow it.
    MisplacedKeyword(&'static str),
    /// A bare argument that is no integer, boolean or compare operator.
    UnrecognisedArgument(String),
    /// A bare integer that does not fit in 64 bits.
    IntegerTooLarge(String),
    /// A control byte (newline, carriage return...) outside quotes.
    UnexpectedByte(u8),
    /// Parentheses and SKIP/WHILE nested deeper than the parser allows.
    NestingTooDeep(usize),
}

impl fmt::Display for SyntaxProblem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SyntaxProblem::Empty => f.write_str("empty filter string"),
            SyntaxProblem::ExpectedFilter => f.write_str("expected a filter, SKIP, WHILE or '('"),
            SyntaxProblem::ExpectedOperator => f.write_str("expected AND or OR"),
            SyntaxProblem::ExpectedArgumentList => {
                f.write_str("expected '(' after the filter name")
            }
            SyntaxProblem::ExpectedArgument => f.write_str("expected an argument"),
            SyntaxProblem::ExpectedCommaOrClose => f.write_str("expected ',' or ')'"),
            SyntaxProblem::UnclosedArgumentList => f.write_str("argument list not closed"),
            SyntaxProblem::UnterminatedQuote => f.write_str("quoted argument not closed"),
            SyntaxProblem::UnclosedParenthesis => f.write_str("'(' not closed"),
            SyntaxProblem::UnmatchedParenthesis => f.write_str("unmatched ')'"),
            SyntaxProblem::MisplacedKeyword(word) => write!(f, "misplaced keyword {word}"),
            SyntaxProblem::UnrecognisedArgument(text) => write!(
                f,
                "unrecognised argument {text} (expected a quoted string, integer, boolean or compare operator)"
            ),
            SyntaxProblem::IntegerTooLarge(text) => {
                write!(f, "integer argument {text} does not fit in 64 bits")
            }
            SyntaxProblem::UnexpectedByte(byte) => write!(f, "unexpected byte 0x{byte:02x}"),
            SyntaxProblem::NestingTooDeep(limit) => {
                write!(f, "expression nested deeper than {limit} levels")
            }
        }
    }
}

impl FilterError {
    /// A syntax error at `position`.
    pub(crate) fn syntax(problem: SyntaxProblem, position: usize) -> Self {
        FilterError::Syntax { problem, position }
    }
}
