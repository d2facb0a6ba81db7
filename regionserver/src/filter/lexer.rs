//! Splits a filter string into tokens: parentheses, the keywords AND, OR, SKIP and WHILE,
//! and whole filter calls (`Name(arg, ...)`, arguments already typed).
//!
//! Lexical rules (HBase's ParseFilter): only space and tab separate tokens; keywords are
//! uppercase, AND/OR need a space or `)` before and a space or `(` after, SKIP/WHILE need
//! the start, a space, `(` or `)` before and a space or `(` after (a word that breaks
//! these rules is read as a filter name); a name runs up to `(`, `)` or whitespace;
//! quoted arguments may hold any bytes, `''` standing for one quote; a bare argument runs
//! up to whitespace, `,` or `)` and must be an integer, a boolean or a compare operator.
//!
//! Must not: decide precedence (the parser) or what a name means (compile).

use bytes::Bytes;

use super::ast::{Arg, FilterCall};
use super::comparator::{lossy, CompareOp};
use super::error::{FilterError, SyntaxProblem};

/// One token and the byte offset where it starts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Token {
    pub kind: TokenKind,
    pub position: usize,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum TokenKind {
    Open,
    Close,
    And,
    Or,
    Skip,
    While,
    Call(FilterCall),
}

/// The keywords and the token each one makes.
const KEYWORDS: [(&str, KeywordClass); 4] = [
    ("AND", KeywordClass::Binary),
    ("OR", KeywordClass::Binary),
    ("SKIP", KeywordClass::Prefix),
    ("WHILE", KeywordClass::Prefix),
];

#[derive(Clone, Copy)]
enum KeywordClass {
    /// AND, OR: a space or `)` before.
    Binary,
    /// SKIP, WHILE: the start, a space, `(` or `)` before.
    Prefix,
}

/// Tokenizes a whole filter string.
pub(crate) fn tokenize(input: &[u8]) -> Result<Vec<Token>, FilterError> {
    let mut lexer = Lexer { input, pos: 0 };
    let mut tokens = Vec::new();
    while let Some(token) = lexer.next_token()? {
        tokens.push(token);
    }
    Ok(tokens)
}

fn is_space(byte: u8) -> bool {
    byte == b' ' || byte == b'\t'
}

fn is_control(byte: u8) -> bool {
    (byte < 0x20 && byte != b'\t') || byte == 0x7f
}

struct Lexer<'a> {
    input: &'a [u8],
    pos: usize,
}

impl Lexer<'_> {
    fn byte(&self, at: usize) -> Option<u8> {
        self.input.get(at).copied()
    }

    fn skip_spaces(&mut self) {
        while self.byte(self.pos).is_some_and(is_space) {
            self.pos += 1;
        }
    }

    fn next_token(&mut self) -> Result<Option<Token>, FilterError> {
        self.skip_spaces();
        let start = self.pos;
        let Some(byte) = self.byte(start) else {
            return Ok(None);
        };
        let kind = match byte {
            b'(' => {
                self.pos += 1;
                TokenKind::Open
            }
            b')' => {
                self.pos += 1;
                TokenKind::Close
            }
            _ if is_control(byte) => {
                return Err(FilterError::syntax(
                    SyntaxProblem::UnexpectedByte(byte),
                    start,
                ))
            }
            _ => match self.keyword_at(start) {
                Some((word, kind)) => {
                    self.pos += word.len();
                    kind
                }
                None => TokenKind::Call(self.call()?),
            },
        };
        Ok(Some(Token {
            kind,
            position: start,
        }))
    }

    /// The keyword starting at `at`, if the keyword rules let it be one.
    fn keyword_at(&self, at: usize) -> Option<(&'static str, TokenKind)> {
        let before = at.checked_sub(1).and_then(|i| self.byte(i));
        for (word, class) in KEYWORDS {
            let end = at + word.len();
            if self.input.get(at..end) != Some(word.as_bytes()) {
                continue;
            }
            let after_ok = self.byte(end).is_some_and(|b| is_space(b) || b == b'(');
            let before_ok = match (class, before) {
                (KeywordClass::Binary, Some(b)) => is_space(b) || b == b')',
                (KeywordClass::Binary, None) => false,
                (KeywordClass::Prefix, Some(b)) => is_space(b) || b == b'(' || b == b')',
                (KeywordClass::Prefix, None) => true,
            };
            if after_ok && before_ok {
                let kind = match word {
                    "AND" => TokenKind::And,
                    "OR" => TokenKind::Or,
                    "SKIP" => TokenKind::Skip,
                    _ => TokenKind::While,
                };
                return Some((word, kind));
            }
        }
        None
    }

    /// A filter call starting at the current position: name, then argument list.
    fn call(&mut self) -> Result<FilterCall, FilterError> {
        let name_start = self.pos;
        while let Some(b) = self.byte(self.pos) {
            if b == b'(' || b == b')' || is_space(b) || is_control(b) {
                break;
            }
            self.pos += 1;
        }
        let name = self.input.get(name_start..self.pos).unwrap_or_default();
        self.skip_spaces();
        if let Some(byte) = self.byte(self.pos).filter(|&b| is_control(b)) {
            return Err(FilterError::syntax(
                SyntaxProblem::UnexpectedByte(byte),
                self.pos,
            ));
        }
        if self.byte(self.pos) != Some(b'(') {
            let problem = match KEYWORDS.iter().find(|(word, _)| word.as_bytes() == name) {
                Some((word, _)) => {
                    return Err(FilterError::syntax(
                        SyntaxProblem::MisplacedKeyword(word),
                        name_start,
                    ))
                }
                None => SyntaxProblem::ExpectedArgumentList,
            };
            return Err(FilterError::syntax(problem, self.pos));
        }
        let args = self.arguments()?;
        Ok(FilterCall::new(Bytes::copy_from_slice(name), args))
    }

    /// An argument list; the current byte is its `(`.
    fn arguments(&mut self) -> Result<Vec<Arg>, FilterError> {
        let open = self.pos;
        self.pos += 1;
        let mut args = Vec::new();
        self.skip_spaces();
        if self.byte(self.pos) == Some(b')') {
            self.pos += 1;
            return Ok(args);
        }
        loop {
            self.skip_spaces();
            let arg_start = self.pos;
            match self.byte(arg_start) {
                None => {
                    return Err(FilterError::syntax(
                        SyntaxProblem::UnclosedArgumentList,
                        open,
                    ))
                }
                Some(b',' | b')') => {
                    return Err(FilterError::syntax(
                        SyntaxProblem::ExpectedArgument,
                        arg_start,
                    ))
                }
                Some(b'\'') => args.push(Arg::Quoted(self.quoted()?)),
                Some(_) => args.push(self.bare(open)?),
            }
            self.skip_spaces();
            match self.byte(self.pos) {
                None => {
                    return Err(FilterError::syntax(
                        SyntaxProblem::UnclosedArgumentList,
                        open,
                    ))
                }
                Some(b',') => self.pos += 1,
                Some(b')') => {
                    self.pos += 1;
                    return Ok(args);
                }
                Some(_) => {
                    return Err(FilterError::syntax(
                        SyntaxProblem::ExpectedCommaOrClose,
                        self.pos,
                    ))
                }
            }
        }
    }

    /// A quoted argument; the current byte is its opening quote.
    fn quoted(&mut self) -> Result<Bytes, FilterError> {
        let open = self.pos;
        let mut value = Vec::new();
        let mut at = open + 1;
        loop {
            match self.byte(at) {
                None => return Err(FilterError::syntax(SyntaxProblem::UnterminatedQuote, open)),
                Some(b'\'') if self.byte(at + 1) == Some(b'\'') => {
                    value.push(b'\'');
                    at += 2;
                }
                Some(b'\'') => {
                    self.pos = at + 1;
                    return Ok(Bytes::from(value));
                }
                Some(b) => {
                    value.push(b);
                    at += 1;
                }
            }
        }
    }

    /// A bare argument: integer, boolean or compare operator.
    fn bare(&mut self, open: usize) -> Result<Arg, FilterError> {
        let start = self.pos;
        loop {
            match self.byte(self.pos) {
                None => {
                    return Err(FilterError::syntax(
                        SyntaxProblem::UnclosedArgumentList,
                        open,
                    ))
                }
                Some(b) if is_space(b) || b == b',' || b == b')' => break,
                Some(_) => self.pos += 1,
            }
        }
        let text = self.input.get(start..self.pos).unwrap_or_default();
        classify_bare(text).map_err(|problem| FilterError::syntax(problem, start))
    }
}

/// Types a bare argument.
fn classify_bare(text: &[u8]) -> Result<Arg, SyntaxProblem> {
    if let Some(op) = CompareOp::from_symbol(text) {
        return Ok(Arg::Operator(op));
    }
    if text.eq_ignore_ascii_case(b"true") {
        return Ok(Arg::Boolean(true));
    }
    if text.eq_ignore_ascii_case(b"false") {
        return Ok(Arg::Boolean(false));
    }
    let digits = text.strip_prefix(b"-").unwrap_or(text);
    if !digits.is_empty() && digits.iter().all(u8::is_ascii_digit) {
        // All ASCII, so the text is valid UTF-8 and only the range can fail.
        return std::str::from_utf8(text)
            .ok()
            .and_then(|s| s.parse::<i64>().ok())
            .map(Arg::Integer)
            .ok_or_else(|| SyntaxProblem::IntegerTooLarge(lossy(text)));
    }
    Err(SyntaxProblem::UnrecognisedArgument(lossy(text)))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kinds(input: &str) -> Vec<TokenKind> {
        tokenize(input.as_bytes())
            .unwrap()
            .into_iter()
            .map(|t| t.kind)
            .collect()
    }

    fn call(name: &str, args: Vec<Arg>) -> TokenKind {
        TokenKind::Call(FilterCall::new(name.as_bytes().to_vec(), args))
    }

    #[test]
    fn keywords_need_their_neighbours() {
        assert_eq!(
            kinds("(A() AND B())OR(C())"),
            vec![
                TokenKind::Open,
                call("A", vec![]),
                TokenKind::And,
                call("B", vec![]),
                TokenKind::Close,
                TokenKind::Or,
                TokenKind::Open,
                call("C", vec![]),
                TokenKind::Close,
            ]
        );
        assert_eq!(
            kinds("SKIP(A())"),
            vec![
                TokenKind::Skip,
                TokenKind::Open,
                call("A", vec![]),
                TokenKind::Close
            ]
        );
        // Not keywords: followed by a letter, or lower case.
        assert_eq!(kinds("ANDX()"), vec![call("ANDX", vec![])]);
        assert_eq!(kinds("SKIPPER()"), vec![call("SKIPPER", vec![])]);
        assert_eq!(kinds("and()"), vec![call("and", vec![])]);
    }

    #[test]
    fn arguments_are_typed() {
        assert_eq!(
            kinds("F('a''b', -12, TrUe, false, <=, !=)"),
            vec![call(
                "F",
                vec![
                    Arg::Quoted(Bytes::from_static(b"a'b")),
                    Arg::Integer(-12),
                    Arg::Boolean(true),
                    Arg::Boolean(false),
                    Arg::Operator(CompareOp::LessOrEqual),
                    Arg::Operator(CompareOp::NotEqual),
                ]
            )]
        );
    }

    #[test]
    fn quoted_arguments_hold_any_bytes() {
        let tokens = tokenize(b"F('\xff(),\n''')").unwrap();
        assert_eq!(
            tokens[0].kind,
            call("F", vec![Arg::Quoted(Bytes::from_static(b"\xff(),\n'"))])
        );
        assert_eq!(
            kinds("F('')"),
            vec![call("F", vec![Arg::Quoted(Bytes::new())])]
        );
    }

    #[test]
    fn tabs_are_whitespace() {
        assert_eq!(
            kinds("\tF\t(\t1\t,\t2\t)\tAND\tG()"),
            vec![
                call("F", vec![Arg::Integer(1), Arg::Integer(2)]),
                TokenKind::And,
                call("G", vec![]),
            ]
        );
    }

    #[test]
    fn integer_limits() {
        assert_eq!(
            kinds("F(9223372036854775807, -9223372036854775808)"),
            vec![call(
                "F",
                vec![Arg::Integer(i64::MAX), Arg::Integer(i64::MIN)]
            )]
        );
        assert_eq!(
            tokenize(b"F(9223372036854775808)").unwrap_err(),
            FilterError::syntax(
                SyntaxProblem::IntegerTooLarge("9223372036854775808".into()),
                2
            )
        );
    }
}
