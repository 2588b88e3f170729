//! The engine's error type: user errors carry a span or a config location; internal errors don't.

use cypher::{render_caret, ParseError, Span};
use std::fmt;

pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Semantic error categories; names follow the openCypher TCK error details where one fits.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SemanticKind {
    UndefinedVariable,
    VariableTypeConflict,
    VariableAlreadyBound,
    UnknownLabel,
    UnknownRelationshipType,
    UnknownProperty,
    UnknownFunction,
    InvalidAggregation,
    NestedAggregation,
    InvalidArgumentType,
    InvalidArgumentValue,
    MissingParameter,
    ColumnNameConflict,
    DifferentColumnsInUnion,
    NoExpressionAlias,
    AmbiguousPattern,
    NoVariablesInScope,
    NegativeIntegerArgument,
    NonConstantExpression,
    Unsupported,
}

#[derive(Debug)]
pub enum Error {
    /// The query text does not parse.
    Parse(ParseError),
    /// The query parses but is wrong against the graph or Cypher's rules.
    Semantic {
        kind: SemanticKind,
        message: String,
        span: Span,
    },
    /// The query could not be planned (a type error found before execution).
    Plan(String),
    /// A bad graph configuration: which file, which key, what is wrong.
    Config {
        file: String,
        key: String,
        message: String,
    },
    /// Reading or writing a dataset failed.
    Storage(String),
    /// Query execution failed (a runtime type error, division by zero, ...).
    Execution(String),
    /// Any other I/O or usage error.
    Other(String),
}

impl Error {
    pub fn semantic(kind: SemanticKind, message: impl Into<String>, span: Span) -> Self {
        Error::Semantic {
            kind,
            message: message.into(),
            span,
        }
    }

    pub fn config(file: impl Into<String>, key: impl Into<String>, msg: impl Into<String>) -> Self {
        Error::Config {
            file: file.into(),
            key: key.into(),
            message: msg.into(),
        }
    }

    /// The span in the query text this error points at, if any.
    pub fn span(&self) -> Option<Span> {
        match self {
            Error::Parse(e) => Some(e.span),
            Error::Semantic { span, .. } => Some(*span),
            _ => None,
        }
    }

    /// True for errors raised before execution started (parse, semantic, planning).
    pub fn is_compile_time(&self) -> bool {
        matches!(
            self,
            Error::Parse(_) | Error::Semantic { .. } | Error::Plan(_)
        )
    }

    /// The error kind's name (`UndefinedVariable`, `UnexpectedSyntax`, ...).
    pub fn kind_name(&self) -> String {
        match self {
            Error::Parse(e) => e.kind.name().to_string(),
            Error::Semantic { kind, .. } => format!("{kind:?}"),
            Error::Plan(_) => "PlanError".into(),
            Error::Config { .. } => "ConfigError".into(),
            Error::Storage(_) => "StorageError".into(),
            Error::Execution(_) => "ExecutionError".into(),
            Error::Other(_) => "Error".into(),
        }
    }

    /// A one-screen report: the message, and for query errors the line with a caret under the span.
    pub fn render(&self, query: &str) -> String {
        match self.span() {
            Some(span) => render_caret(query, &span, &format!("error: {self}")),
            None => format!("error: {self}"),
        }
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Parse(e) => write!(f, "syntax error: {e}"),
            Error::Semantic {
                kind,
                message,
                span,
            } => write!(f, "{message} ({kind:?}) at {span}"),
            Error::Config { file, key, message } => {
                write!(f, "invalid graph config {file}: key `{key}`: {message}")
            }
            Error::Plan(m) => write!(f, "planning error: {m}"),
            Error::Storage(m) => write!(f, "storage error: {m}"),
            Error::Execution(m) => write!(f, "execution error: {m}"),
            Error::Other(m) => f.write_str(m),
        }
    }
}

impl std::error::Error for Error {}

impl From<ParseError> for Error {
    fn from(e: ParseError) -> Self {
        Error::Parse(e)
    }
}

impl From<datafusion::error::DataFusionError> for Error {
    fn from(e: datafusion::error::DataFusionError) -> Self {
        Error::Execution(e.to_string())
    }
}

impl From<arrow::error::ArrowError> for Error {
    fn from(e: arrow::error::ArrowError) -> Self {
        Error::Execution(e.to_string())
    }
}

impl From<lance::Error> for Error {
    fn from(e: lance::Error) -> Self {
        Error::Storage(e.to_string())
    }
}

impl From<std::io::Error> for Error {
    fn from(e: std::io::Error) -> Self {
        Error::Other(e.to_string())
    }
}

/// Builds an `Error::Semantic` and returns it.
#[macro_export]
macro_rules! sem_err {
    ($kind:ident, $span:expr, $($arg:tt)*) => {
        Err($crate::error::Error::semantic(
            $crate::error::SemanticKind::$kind,
            format!($($arg)*),
            $span,
        ))
    };
}
