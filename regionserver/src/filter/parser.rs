//! Builds the expression tree from tokens: OR of ANDs of unary expressions, where a
//! unary expression is `SKIP x`, `WHILE x`, `( expr )` or a filter call. SKIP and WHILE
//! bind tightest, then AND, then OR; a chain of one operator becomes one list, while
//! parentheses keep their group as a nested list (as HBase's ParseFilter does).
//!
//! Must not: look inside filter calls (their arguments are typed by the lexer and
//! checked by compile).

use super::ast::FilterExpr;
use super::error::{FilterError, SyntaxProblem};
use super::lexer::{tokenize, Token, TokenKind};

/// How deep parentheses and SKIP/WHILE may nest (bounds recursion on hostile input).
pub const MAX_NESTING: usize = 100;

/// Parses a filter string into its expression tree, without checking filter names or
/// arguments.
pub fn parse(input: &[u8]) -> Result<FilterExpr, FilterError> {
    let tokens = tokenize(input)?;
    if tokens.is_empty() {
        return Err(FilterError::syntax(SyntaxProblem::Empty, 0));
    }
    let mut parser = Parser {
        tokens,
        next: 0,
        end: input.len(),
    };
    let expr = parser.or_expr(0)?;
    match parser.peek() {
        None => Ok(expr),
        Some(token) => {
            let problem = match token.kind {
                TokenKind::Close => SyntaxProblem::UnmatchedParenthesis,
                _ => SyntaxProblem::ExpectedOperator,
            };
            Err(FilterError::syntax(problem, token.position))
        }
    }
}

struct Parser {
    tokens: Vec<Token>,
    next: usize,
    /// The input length: the position reported for "ended too early".
    end: usize,
}

impl Parser {
    fn peek(&self) -> Option<&Token> {
        self.tokens.get(self.next)
    }

    fn peek_is(&self, kind: &TokenKind) -> bool {
        self.peek().is_some_and(|t| &t.kind == kind)
    }

    fn take(&mut self) -> Option<Token> {
        let token = self.tokens.get(self.next).cloned()?;
        self.next += 1;
        Some(token)
    }

    fn or_expr(&mut self, depth: usize) -> Result<FilterExpr, FilterError> {
        let first = self.and_expr(depth)?;
        if !self.peek_is(&TokenKind::Or) {
            return Ok(first);
        }
        let mut operands = vec![first];
        while self.peek_is(&TokenKind::Or) {
            self.next += 1;
            operands.push(self.and_expr(depth)?);
        }
        Ok(FilterExpr::Or(operands))
    }

    fn and_expr(&mut self, depth: usize) -> Result<FilterExpr, FilterError> {
        let first = self.unary(depth)?;
        if !self.peek_is(&TokenKind::And) {
            return Ok(first);
        }
        let mut operands = vec![first];
        while self.peek_is(&TokenKind::And) {
            self.next += 1;
            operands.push(self.unary(depth)?);
        }
        Ok(FilterExpr::And(operands))
    }

    fn unary(&mut self, depth: usize) -> Result<FilterExpr, FilterError> {
        let Some(token) = self.take() else {
            return Err(FilterError::syntax(SyntaxProblem::ExpectedFilter, self.end));
        };
        if depth >= MAX_NESTING
            && matches!(
                token.kind,
                TokenKind::Open | TokenKind::Skip | TokenKind::While
            )
        {
            return Err(FilterError::syntax(
                SyntaxProblem::NestingTooDeep(MAX_NESTING),
                token.position,
            ));
        }
        match token.kind {
            TokenKind::Call(call) => Ok(FilterExpr::Call(call)),
            TokenKind::Skip => Ok(FilterExpr::Skip(Box::new(self.unary(depth + 1)?))),
            TokenKind::While => Ok(FilterExpr::While(Box::new(self.unary(depth + 1)?))),
            TokenKind::Open => {
                let inner = self.or_expr(depth + 1)?;
                match self.take() {
                    Some(Token {
                        kind: TokenKind::Close,
                        ..
                    }) => Ok(inner),
                    Some(other) => Err(FilterError::syntax(
                        SyntaxProblem::ExpectedOperator,
                        other.position,
                    )),
                    None => Err(FilterError::syntax(
                        SyntaxProblem::UnclosedParenthesis,
                        token.position,
                    )),
                }
            }
            TokenKind::Close | TokenKind::And | TokenKind::Or => Err(FilterError::syntax(
                SyntaxProblem::ExpectedFilter,
                token.position,
            )),
        }
    }
}
