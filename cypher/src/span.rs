//! Source positions and the parse error type.

use std::fmt;

/// A position in the query text: 1-based line and column (in characters), 0-based byte offset.
#[derive(Debug, Clone, Copy, Default, Eq, PartialEq, Ord, PartialOrd, Hash)]
pub struct Location {
    pub line: u32,
    pub column: u32,
    pub offset: usize,
}

/// A half-open range of the query text. Spans never take part in AST equality, so a
/// reprinted query parses to an equal AST.
#[derive(Debug, Clone, Copy, Default)]
pub struct Span {
    pub start: Location,
    pub end: Location,
}

impl PartialEq for Span {
    fn eq(&self, _: &Self) -> bool {
        true
    }
}

impl Eq for Span {}

impl Span {
    pub fn new(start: Location, end: Location) -> Self {
        Self { start, end }
    }

    /// The smallest span covering both.
    pub fn union(&self, other: &Span) -> Span {
        let start = if other.start.offset < self.start.offset {
            other.start
        } else {
            self.start
        };
        let end = if other.end.offset > self.end.offset {
            other.end
        } else {
            self.end
        };
        Span { start, end }
    }
}

impl fmt::Display for Span {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "line {}, column {}", self.start.line, self.start.column)
    }
}

/// What kind of error a query has; names follow the openCypher TCK error details where one fits.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ErrorKind {
    /// Unexpected token or malformed construct.
    UnexpectedSyntax,
    /// A number literal that is not a number (`0x`, `1e`, `0o9`).
    InvalidNumberLiteral,
    /// An integer literal outside the 64-bit range.
    IntegerOverflow,
    /// A string literal with a bad escape or no closing quote.
    InvalidStringLiteral,
    /// Valid Cypher that this engine does not support.
    Unsupported,
    /// A clause that writes (`CREATE`, `SET`, ...): the engine answers read-only queries.
    WriteClause,
    /// Nesting deeper than the parser's recursion limit.
    RecursionLimit,
    /// Clauses or queries combined in a way openCypher forbids (`UNION` with `UNION ALL`).
    InvalidClauseComposition,
}

impl ErrorKind {
    pub fn name(&self) -> &'static str {
        match self {
            ErrorKind::UnexpectedSyntax => "UnexpectedSyntax",
            ErrorKind::InvalidNumberLiteral => "InvalidNumberLiteral",
            ErrorKind::IntegerOverflow => "IntegerOverflow",
            ErrorKind::InvalidStringLiteral => "InvalidStringLiteral",
            ErrorKind::Unsupported | ErrorKind::WriteClause => "Unsupported",
            ErrorKind::RecursionLimit => "RecursionLimit",
            ErrorKind::InvalidClauseComposition => "InvalidClauseComposition",
        }
    }
}

/// A tokenizer or parser error with the span of the culprit.
#[derive(Debug, Clone, PartialEq)]
pub struct ParseError {
    pub kind: ErrorKind,
    pub message: String,
    pub span: Span,
}

impl ParseError {
    pub fn new(kind: ErrorKind, message: impl Into<String>, span: Span) -> Self {
        Self {
            kind,
            message: message.into(),
            span,
        }
    }
}

impl fmt::Display for ParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} at {}", self.message, self.span)
    }
}

impl std::error::Error for ParseError {}

/// Renders `message`, the query line holding `span`, and a caret line under the span.
pub fn render_caret(query: &str, span: &Span, message: &str) -> String {
    let line_no = span.start.line.max(1) as usize;
    let line = query.lines().nth(line_no - 1).unwrap_or("");
    let col = span.start.column.max(1) as usize;
    let width = if span.end.line == span.start.line && span.end.column > span.start.column {
        (span.end.column - span.start.column) as usize
    } else {
        1
    };
    let width = width.min(line.chars().count().saturating_sub(col - 1).max(1));
    let gutter = format!("{line_no}");
    format!(
        "{message}\n{gutter} | {line}\n{pad} | {spaces}{carets}",
        pad = " ".repeat(gutter.len()),
        spaces = " ".repeat(col - 1),
        carets = "^".repeat(width)
    )
}
