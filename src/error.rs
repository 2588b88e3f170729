//! The engine's error type: user errors carry a span or a config location; internal errors don't.

use cypher::{render_caret, ParseError, Span};
use datafusion::error::DataFusionError;
use std::fmt;

pub type Result<T, E = Error> = std::result::Result<T, E>;

/// The cause an error carries.
pub type BoxError = Box<dyn std::error::Error + Send + Sync>;

/// Semantic error categories; names follow the openCypher TCK error details where one fits.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
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
    AmbiguousAggregationExpression,
    InvalidParameterUse,
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
    /// A CALL of a procedure the engine does not have.
    ProcedureNotFound,
    /// A procedure's arguments name no index it can search, or one of another shape.
    ProcedureCallFailed,
    Unsupported,
}

/// openCypher's error classes (the TCK's `error_type`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum ErrorClass {
    SyntaxError,
    SemanticError,
    TypeError,
    ArgumentError,
    ArithmeticError,
    /// Not one of openCypher's classes: storage, configuration, internal failures.
    Error,
}

impl ErrorClass {
    /// The class of a name (`"TypeError"`); unknown names are the generic `Error`.
    pub fn from_name(name: &str) -> Self {
        [
            ErrorClass::SyntaxError,
            ErrorClass::SemanticError,
            ErrorClass::TypeError,
            ErrorClass::ArgumentError,
            ErrorClass::ArithmeticError,
        ]
        .into_iter()
        .find(|c| c.name() == name)
        .unwrap_or(ErrorClass::Error)
    }

    pub fn name(self) -> &'static str {
        match self {
            ErrorClass::SyntaxError => "SyntaxError",
            ErrorClass::SemanticError => "SemanticError",
            ErrorClass::TypeError => "TypeError",
            ErrorClass::ArgumentError => "ArgumentError",
            ErrorClass::ArithmeticError => "ArithmeticError",
            ErrorClass::Error => "Error",
        }
    }
}

/// An error raised while evaluating a query by Cypher's rules (an integer overflow, a
/// negative length, an argument of the wrong type): travels through DataFusion as an
/// external error and comes out as [`Error::Runtime`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RuntimeError {
    pub class: ErrorClass,
    /// The TCK's error detail (`NumberOutOfRange`, `InvalidArgumentType`, ...).
    pub detail: String,
    pub message: String,
}

impl RuntimeError {
    pub fn new(class: ErrorClass, detail: impl Into<String>, message: impl Into<String>) -> Self {
        Self {
            class,
            detail: detail.into(),
            message: message.into(),
        }
    }
}

impl fmt::Display for RuntimeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} ({}: {})",
            self.message,
            self.class.name(),
            self.detail
        )
    }
}

impl std::error::Error for RuntimeError {}

impl From<RuntimeError> for datafusion::error::DataFusionError {
    fn from(e: RuntimeError) -> Self {
        datafusion::error::DataFusionError::External(Box::new(e))
    }
}

/// Which limit a query hit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum LimitKind {
    /// It ran longer than its time limit.
    Time,
    /// It needed more memory than its memory limit.
    Memory,
}

#[derive(Debug)]
#[non_exhaustive]
pub enum Error {
    /// The query text does not parse.
    Parse(ParseError),
    /// The query parses but is wrong against the graph or Cypher's rules.
    Semantic {
        kind: SemanticKind,
        message: String,
        span: Span,
    },
    /// DataFusion could not plan the query (a type error found before execution).
    Plan(DataFusionError),
    /// A bad graph configuration: which file, which key, what is wrong.
    Config {
        file: String,
        key: String,
        message: String,
    },
    /// A dataset or index is not what it should be (`message` names it); `source` is the
    /// failure that showed it, when there is one.
    Storage {
        message: String,
        source: Option<BoxError>,
    },
    /// The `lance` crate failed reading or writing a dataset.
    Lance(lance::Error),
    /// Query execution failed in DataFusion (division by zero, a failing operator, ...).
    Execution(DataFusionError),
    /// Evaluation broke one of Cypher's rules at run time (overflow, a bad argument).
    Runtime(RuntimeError),
    /// The query hit the time or memory limit it ran under (which, and the message).
    Limit(LimitKind, String),
    /// An input file (CSV, Parquet) that could not be read as one: which, and why.
    Input {
        path: std::path::PathBuf,
        source: BoxError,
    },
    /// The cluster at `url` could not be reached or refused the job.
    Cluster {
        url: String,
        source: DataFusionError,
    },
    /// A file or folder could not be opened, read, written, renamed or removed (`action`:
    /// "open", "write", ...; `path`: which one, where known).
    Io {
        action: &'static str,
        path: Option<std::path::PathBuf>,
        source: std::io::Error,
    },
    /// Any other usage error.
    Other(String),
    /// A broken invariant of the engine: a bug, not something the query did wrong.
    Internal(String),
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

    /// A storage error without a further cause.
    pub fn storage(message: impl Into<String>) -> Self {
        Error::Storage {
            message: message.into(),
            source: None,
        }
    }

    /// A storage error `message` caused by `source` (shown after it).
    pub fn storage_caused(message: impl Into<String>, source: impl Into<BoxError>) -> Self {
        Error::Storage {
            message: message.into(),
            source: Some(source.into()),
        }
    }

    /// Input file `path` could not be read as one (`source`: the reader's error).
    pub fn input(path: impl Into<std::path::PathBuf>, source: impl Into<BoxError>) -> Self {
        Error::Input {
            path: path.into(),
            source: source.into(),
        }
    }

    /// `action` ("open", "write", ...) on `path` failed with `source`.
    pub fn io(
        action: &'static str,
        path: impl Into<std::path::PathBuf>,
        source: std::io::Error,
    ) -> Self {
        Error::Io {
            action,
            path: Some(path.into()),
            source,
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

    /// Whether no query should meet this error, valid or not: an internal error, or a plan
    /// that names a column it lacks (the front end lost track of a name it had bound).
    pub fn is_bug(&self) -> bool {
        match self {
            Error::Internal(_) => true,
            Error::Plan(e) | Error::Execution(e) => {
                matches!(e.find_root(), DataFusionError::SchemaError(..))
            }
            _ => false,
        }
    }

    /// The openCypher class of this error. Errors found before execution are `SyntaxError`s
    /// (as the TCK classifies semantic errors too); run-time ones carry their own class.
    pub fn class(&self) -> ErrorClass {
        match self {
            Error::Parse(_) | Error::Semantic { .. } => ErrorClass::SyntaxError,
            Error::Runtime(e) => e.class,
            Error::Execution(e) if is_divide_by_zero(e) => ErrorClass::ArithmeticError,
            _ => ErrorClass::Error,
        }
    }

    /// The error kind's name (`UndefinedVariable`, `UnexpectedSyntax`, ...).
    pub fn kind_name(&self) -> String {
        match self {
            Error::Parse(e) => e.kind.name().to_string(),
            Error::Semantic { kind, .. } => format!("{kind:?}"),
            Error::Plan(_) => "PlanError".into(),
            Error::Config { .. } => "ConfigError".into(),
            Error::Storage { .. } | Error::Lance(_) => "StorageError".into(),
            Error::Execution(_) => "ExecutionError".into(),
            Error::Runtime(e) => e.detail.clone(),
            Error::Limit(..) => "LimitExceeded".into(),
            Error::Other(_) | Error::Io { .. } | Error::Input { .. } => "Error".into(),
            Error::Cluster { .. } => "ClusterError".into(),
            Error::Internal(_) => "InternalError".into(),
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
            Error::Plan(e) => write!(
                f,
                "planning error: {}",
                without_source_locations(&e.to_string())
            ),
            Error::Storage {
                message,
                source: None,
            } => write!(f, "storage error: {message}"),
            Error::Storage {
                message,
                source: Some(e),
            } => {
                // A DataFusion cause by its root: the wrappers add nothing a user can act on.
                let cause = match e.downcast_ref::<DataFusionError>() {
                    Some(d) => d.find_root().to_string(),
                    None => e.to_string(),
                };
                write!(
                    f,
                    "storage error: {message}: {}",
                    without_source_locations(&cause)
                )
            }
            Error::Lance(e) => write!(
                f,
                "storage error: {}",
                without_source_locations(&e.to_string())
            ),
            Error::Execution(e) => {
                write!(
                    f,
                    "execution error: {}",
                    without_source_locations(&e.to_string())
                )
            }
            Error::Io {
                action,
                path: Some(p),
                source,
            } => write!(f, "cannot {action} {}: {source}", p.display()),
            Error::Io { source, .. } => write!(f, "{source}"),
            Error::Input { path, source } => write!(f, "{}: {source}", path.display()),
            Error::Cluster { url, source } => write!(
                f,
                "cluster {url}: {}",
                without_source_locations(&source.to_string())
            ),
            Error::Runtime(e) => write!(f, "{e}"),
            Error::Limit(_, m) => write!(f, "limit exceeded: {m}"),
            Error::Other(m) => f.write_str(m),
            Error::Internal(m) => write!(
                f,
                "internal error (a bug in lance-csr, please report it with the query): {m}"
            ),
        }
    }
}

impl std::error::Error for Error {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Error::Parse(e) => Some(e),
            Error::Plan(e) | Error::Execution(e) => Some(e),
            Error::Lance(e) => Some(e),
            Error::Io { source, .. } => Some(source),
            Error::Input { source, .. } => Some(source.as_ref()),
            Error::Cluster { source, .. } => Some(source),
            Error::Storage {
                source: Some(e), ..
            } => Some(e.as_ref()),
            Error::Runtime(e) => Some(e),
            _ => None,
        }
    }
}

impl Error {
    /// A DataFusion error raised while planning, before anything ran (lowering, optimizing,
    /// physical planning): a planning error, unless it carries one of Cypher's run-time errors
    /// (found by constant folding), which keeps its class. The one place that classifies them,
    /// so `query` and `explain` report the same kind.
    pub(crate) fn planning(e: DataFusionError) -> Error {
        Error::from(e).while_planning()
    }

    /// This error, raised while planning (see [`Error::planning`]).
    pub(crate) fn while_planning(self) -> Error {
        match self {
            Error::Execution(e) => Error::Plan(e),
            other => other,
        }
    }
}

impl From<ParseError> for Error {
    fn from(e: ParseError) -> Self {
        Error::Parse(e)
    }
}

impl From<DataFusionError> for Error {
    fn from(e: DataFusionError) -> Self {
        if let Some(r) = runtime_cause(&e) {
            return Error::Runtime(r);
        }
        // The memory pool, or a value built by an expression, past the memory limit (also
        // found while folding constants).
        if let DataFusionError::ResourcesExhausted(m) = e.find_root() {
            return Error::Limit(
                LimitKind::Memory,
                format!("the query needs more memory than the limit allows (--memory-limit): {m}"),
            );
        }
        // A storage error of ours as DataFusion wrapped it: itself, its cause kept.
        let e = match e {
            DataFusionError::External(inner) => match inner.downcast::<Error>() {
                Ok(ours) if matches!(*ours, Error::Storage { .. }) => return *ours,
                Ok(ours) => DataFusionError::External(ours),
                Err(inner) => DataFusionError::External(inner),
            },
            e => e,
        };
        // Deeper inside (contexts, shared errors): its text.
        if let Some(m) = storage_cause(&e) {
            return Error::storage(m);
        }
        Error::Execution(e)
    }
}

/// The message of an [`Error::Storage`] a DataFusion error wraps (a dataset that failed to
/// read, named by the scan), however deeply.
fn storage_cause(e: &(dyn std::error::Error + 'static)) -> Option<String> {
    let mut cur: Option<&(dyn std::error::Error + 'static)> = Some(e);
    while let Some(x) = cur {
        // Its message with its cause, as shown.
        let text = |e: &Error| {
            e.to_string()
                .trim_start_matches("storage error: ")
                .to_string()
        };
        if let Some(e @ Error::Storage { .. }) = x.downcast_ref::<Error>() {
            return Some(text(e));
        }
        if let Some(DataFusionError::External(inner)) = x.downcast_ref::<DataFusionError>() {
            if let Some(e @ Error::Storage { .. }) = inner.downcast_ref::<Error>() {
                return Some(text(e));
            }
        }
        cur = x.source();
    }
    None
}

/// `msg` without the source locations some libraries append to their errors
/// (`, /root/.cargo/registry/src/.../utils.rs:224:20`): they name our dependencies' files,
/// which tell a user nothing.
pub fn without_source_locations(msg: &str) -> String {
    let mut out = String::with_capacity(msg.len());
    let mut rest = msg;
    while let Some(i) = rest.find(".rs:") {
        let start = rest[..i]
            .rfind(|c: char| c.is_whitespace() || c == ',' || c == '(')
            .map_or(0, |k| k + 1);
        let tail = &rest[i + 4..];
        let end = tail
            .find(|c: char| !(c.is_ascii_digit() || c == ':'))
            .unwrap_or(tail.len());
        let path = &rest[start..i];
        if end == 0 || !path.contains('/') {
            out.push_str(&rest[..i + 4]);
            rest = &rest[i + 4..];
            continue;
        }
        let kept = rest[..start].trim_end_matches([' ', ',']);
        out.push_str(kept);
        rest = &tail[end..];
    }
    out.push_str(rest);
    out
}

/// The [`RuntimeError`] a DataFusion error wraps, however deeply (contexts, shared errors,
/// arrow's external errors).
pub fn runtime_cause(e: &(dyn std::error::Error + 'static)) -> Option<RuntimeError> {
    let mut cur: Option<&(dyn std::error::Error + 'static)> = Some(e);
    while let Some(x) = cur {
        if let Some(r) = x.downcast_ref::<RuntimeError>() {
            return Some(r.clone());
        }
        if let Some(datafusion::error::DataFusionError::External(inner)) =
            x.downcast_ref::<datafusion::error::DataFusionError>()
        {
            if let Some(r) = inner.downcast_ref::<RuntimeError>() {
                return Some(r.clone());
            }
        }
        cur = x.source();
    }
    runtime_in_text(&e.to_string())
}

/// The classes a [`RuntimeError`] can have.
const RUNTIME_CLASSES: [ErrorClass; 5] = [
    ErrorClass::SyntaxError,
    ErrorClass::SemanticError,
    ErrorClass::TypeError,
    ErrorClass::ArgumentError,
    ErrorClass::ArithmeticError,
];

/// A [`RuntimeError`] in an error's text, as shown (`message (Class: Detail)`) or debugged
/// (`RuntimeError { class: .., detail: "..", message: ".." }`): how one comes back from a
/// cluster's executor, whose errors travel as text.
fn runtime_in_text(text: &str) -> Option<RuntimeError> {
    runtime_debugged(text).or_else(|| runtime_shown(text))
}

fn runtime_debugged(text: &str) -> Option<RuntimeError> {
    let text = text.replace('\\', "");
    let rest = &text[text.find("RuntimeError { class: ")? + 22..];
    let class = ErrorClass::from_name(&rest[..rest.find(',')?]);
    if class == ErrorClass::Error {
        return None;
    }
    let quoted = |field: &str| -> Option<String> {
        let at = rest.find(&format!("{field}: \""))? + field.len() + 3;
        let end = rest[at..].find('"')?;
        Some(rest[at..at + end].to_string())
    };
    Some(RuntimeError::new(
        class,
        quoted("detail")?,
        quoted("message")?,
    ))
}

fn runtime_shown(text: &str) -> Option<RuntimeError> {
    RUNTIME_CLASSES.into_iter().find_map(|class| {
        let start = text.rfind(&format!(" ({}: ", class.name()))?;
        let rest = &text[start + class.name().len() + 4..];
        let detail = &rest[..rest.find(')')?];
        if detail.is_empty() || !detail.chars().all(|c| c.is_ascii_alphanumeric()) {
            return None;
        }
        let head = &text[..start];
        let message = head.rsplit(": ").next().unwrap_or(head);
        Some(RuntimeError::new(class, detail, message))
    })
}

impl From<arrow::error::ArrowError> for Error {
    fn from(e: arrow::error::ArrowError) -> Self {
        match runtime_cause(&e) {
            Some(r) => Error::Runtime(r),
            None => Error::Execution(DataFusionError::ArrowError(Box::new(e), None)),
        }
    }
}

impl From<lance::Error> for Error {
    fn from(e: lance::Error) -> Self {
        Error::Lance(e)
    }
}

impl From<std::io::Error> for Error {
    fn from(e: std::io::Error) -> Self {
        Error::Io {
            action: "access",
            path: None,
            source: e,
        }
    }
}

/// Our error inside DataFusion (an operator's, a table provider's): DataFusion's own errors
/// go back as they came, ours travel as external errors and come out again by
/// `From<DataFusionError> for Error`.
impl From<Error> for DataFusionError {
    fn from(e: Error) -> Self {
        match e {
            Error::Plan(e) | Error::Execution(e) => e,
            Error::Runtime(r) => r.into(),
            e => DataFusionError::External(Box::new(e)),
        }
    }
}

/// A division (or remainder) by zero, however DataFusion wrapped it.
fn is_divide_by_zero(e: &DataFusionError) -> bool {
    match e.find_root() {
        DataFusionError::ArrowError(a, _) => {
            matches!(a.as_ref(), arrow::error::ArrowError::DivideByZero)
        }
        _ => false,
    }
}

/// Builds an `Error::Semantic` and returns it.
macro_rules! sem_err {
    ($kind:ident, $span:expr, $($arg:tt)*) => {
        Err($crate::error::Error::semantic(
            $crate::error::SemanticKind::$kind,
            format!($($arg)*),
            $span,
        ))
    };
}
pub(crate) use sem_err;

#[cfg(test)]
mod location_tests {
    use super::without_source_locations as strip;

    #[test]
    fn dependency_source_paths_are_dropped() {
        assert_eq!(
            strip("LanceError(IO): too short, /root/.cargo/registry/src/x/lance-io-14.0.2/src/utils.rs:224:20"),
            "LanceError(IO): too short"
        );
        assert_eq!(strip("a /x/y.rs:1:2 b, /z/w.rs:3:4"), "a b");
        assert_eq!(strip("see lib.rs: nothing"), "see lib.rs: nothing");
        assert_eq!(strip("plain"), "plain");
    }
}

#[cfg(test)]
mod text_tests {
    use super::{runtime_in_text, ErrorClass};

    #[test]
    fn a_runtime_error_is_found_in_its_text() {
        let r = runtime_in_text(
            "Execution error: Job abc failed: Task 3 failed: External error: integer overflow \
             in 9223372036854775807 + 1 (ArithmeticError: NumberOutOfRange)",
        )
        .unwrap();
        assert_eq!(r.class, ErrorClass::ArithmeticError);
        assert_eq!(r.detail, "NumberOutOfRange");
        assert_eq!(r.message, "integer overflow in 9223372036854775807 + 1");
        assert!(runtime_in_text("no class here (Oops: X)").is_none());
        assert!(runtime_in_text("a (TypeError: two words)").is_none());
        assert!(runtime_in_text("a (TypeError: )").is_none());
        let debugged = r#"Task failed: DataFusionError(Execution("DataFusionError(External(RuntimeError { class: ArithmeticError, detail: \"IntegerOverflow\", message: \"integer overflow in `*`\" }))"))"#;
        let r = runtime_in_text(debugged).unwrap();
        assert_eq!(r.class, ErrorClass::ArithmeticError);
        assert_eq!(r.detail, "IntegerOverflow");
        assert_eq!(r.message, "integer overflow in `*`");
    }
}

#[cfg(test)]
mod cause_tests {
    use super::*;
    use arrow::error::ArrowError;

    #[test]
    fn storage_errors_keep_their_cause_through_datafusion() {
        let io = std::io::Error::new(std::io::ErrorKind::UnexpectedEof, "failed to fill buffer");
        let e = Error::storage_caused("reading Lance dataset x.lance", io);
        let back = Error::from(DataFusionError::from(e));
        assert_eq!(
            back.to_string(),
            "storage error: reading Lance dataset x.lance: failed to fill buffer"
        );
        let cause = std::error::Error::source(&back).expect("a cause");
        assert!(cause.downcast_ref::<std::io::Error>().is_some());
    }

    #[test]
    fn our_errors_round_trip_through_datafusion() {
        let r = RuntimeError::new(ErrorClass::ArgumentError, "NumberOutOfRange", "too big");
        assert!(matches!(
            Error::from(DataFusionError::from(Error::Runtime(r.clone()))),
            Error::Runtime(x) if x == r
        ));
        let plan = DataFusionError::Plan("no".into());
        assert!(matches!(
            DataFusionError::from(Error::Plan(plan)),
            DataFusionError::Plan(_)
        ));
        let limit = Error::from(DataFusionError::from(Error::Limit(
            LimitKind::Time,
            "time".into(),
        )));
        assert!(
            limit.to_string().contains("limit exceeded: time"),
            "{limit}"
        );
    }

    #[test]
    fn division_by_zero_is_classified_by_its_variant() {
        let zero = || DataFusionError::ArrowError(Box::new(ArrowError::DivideByZero), None);
        assert_eq!(
            Error::Execution(zero()).class(),
            ErrorClass::ArithmeticError
        );
        let wrapped = DataFusionError::Context("evaluating".into(), Box::new(zero()));
        assert_eq!(
            Error::Execution(wrapped).class(),
            ErrorClass::ArithmeticError
        );
        // The text alone decides nothing.
        let text = DataFusionError::Execution("Divide by zero".into());
        assert_eq!(Error::Execution(text).class(), ErrorClass::Error);
    }

    #[test]
    fn input_and_cluster_errors_keep_their_cause() {
        let parse = ArrowError::ParseError("bad row 3".into());
        let e = Error::input("/x/people.csv", parse);
        assert_eq!(e.to_string(), "/x/people.csv: Parser error: bad row 3");
        let cause = std::error::Error::source(&e).expect("a cause");
        assert!(cause.downcast_ref::<ArrowError>().is_some());
        let e = Error::Cluster {
            url: "df://h:1".into(),
            source: DataFusionError::Execution("connection refused".into()),
        };
        assert_eq!(
            e.to_string(),
            "cluster df://h:1: Execution error: connection refused"
        );
        assert!(std::error::Error::source(&e).is_some());
    }

    #[test]
    fn io_errors_name_what_failed_where() {
        let e = Error::io(
            "open",
            "/x/people.csv",
            std::io::Error::from(std::io::ErrorKind::NotFound),
        );
        assert_eq!(e.to_string(), "cannot open /x/people.csv: entity not found");
        assert!(std::error::Error::source(&e).is_some());
    }
}
