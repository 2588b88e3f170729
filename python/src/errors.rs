//! The engine's errors as Python exceptions: one class per kind of failure under
//! `lance_csr.Error`, each instance carrying the openCypher class, the error's kind, the
//! position in the query and the message with a caret under it.

use pyo3::exceptions::PyException;
use pyo3::prelude::*;
use pyo3::{create_exception, PyErr};

create_exception!(
    lance_csr,
    Error,
    PyException,
    "Base class of every error lance_csr raises."
);
create_exception!(
    lance_csr,
    SyntaxError,
    Error,
    "The query text does not parse."
);
create_exception!(
    lance_csr,
    SemanticError,
    Error,
    "The query parses but breaks Cypher's rules or names what the graph does not have."
);
create_exception!(
    lance_csr,
    TypeError,
    Error,
    "A value of the wrong type, found while planning or running the query."
);
create_exception!(
    lance_csr,
    ArgumentError,
    Error,
    "A function got an argument it cannot take."
);
create_exception!(
    lance_csr,
    ArithmeticError,
    Error,
    "Division by zero or an integer overflow."
);
create_exception!(
    lance_csr,
    LimitError,
    Error,
    "The query ran past its time or memory limit."
);
create_exception!(
    lance_csr,
    StorageError,
    Error,
    "A dataset, index or file could not be read or written."
);
create_exception!(
    lance_csr,
    ConfigError,
    Error,
    "The graph's configuration is wrong."
);
create_exception!(
    lance_csr,
    ExecutionError,
    Error,
    "The query failed while running."
);
create_exception!(
    lance_csr,
    InternalError,
    Error,
    "A bug in lance_csr: please report it with the query."
);
create_exception!(
    lance_csr,
    Interrupted,
    Error,
    "The query was interrupted (Graph.interrupt)."
);

/// Registers the exception classes in the module.
pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = m.py();
    m.add("Error", py.get_type::<Error>())?;
    m.add("SyntaxError", py.get_type::<SyntaxError>())?;
    m.add("SemanticError", py.get_type::<SemanticError>())?;
    m.add("TypeError", py.get_type::<TypeError>())?;
    m.add("ArgumentError", py.get_type::<ArgumentError>())?;
    m.add("ArithmeticError", py.get_type::<ArithmeticError>())?;
    m.add("LimitError", py.get_type::<LimitError>())?;
    m.add("StorageError", py.get_type::<StorageError>())?;
    m.add("ConfigError", py.get_type::<ConfigError>())?;
    m.add("ExecutionError", py.get_type::<ExecutionError>())?;
    m.add("InternalError", py.get_type::<InternalError>())?;
    m.add("Interrupted", py.get_type::<Interrupted>())?;
    Ok(())
}

/// `e` as the exception of its kind; `query` (when the error is about one) gives the caret
/// message.
pub fn to_py(e: lance_csr::Error, query: Option<&str>) -> PyErr {
    use lance_csr::{Error as E, ErrorClass as C};
    let message = match query {
        Some(q) => e.render(q),
        None => e.to_string(),
    };
    let message = message
        .strip_prefix("error: ")
        .map(str::to_string)
        .unwrap_or(message);
    let err = match &e {
        E::Parse(_) => SyntaxError::new_err(message),
        E::Semantic { .. } => SemanticError::new_err(message),
        E::Plan(_) => TypeError::new_err(message),
        E::Limit(..) => LimitError::new_err(message),
        E::Storage { .. } | E::Lance(_) | E::Io { .. } | E::Input { .. } => {
            StorageError::new_err(message)
        }
        E::Config { .. } => ConfigError::new_err(message),
        E::Internal(_) => InternalError::new_err(message),
        E::Other(_) => Error::new_err(message),
        _ => match e.class() {
            C::TypeError => TypeError::new_err(message),
            C::ArgumentError => ArgumentError::new_err(message),
            C::ArithmeticError => ArithmeticError::new_err(message),
            C::SyntaxError => SemanticError::new_err(message),
            _ => ExecutionError::new_err(message),
        },
    };
    Python::attach(|py| {
        let value = err.value(py);
        let span = e.span();
        // Attributes are informative: failing to set one must not hide the error itself.
        let _ = value.setattr("cypher_class", e.class().name());
        let _ = value.setattr("kind", e.kind_name());
        let _ = value.setattr("line", span.map(|s| s.start.line));
        let _ = value.setattr("column", span.map(|s| s.start.column));
    });
    err
}

/// A usage error (a bad argument to the Python API) as `lance_csr.Error`.
pub fn usage(message: impl Into<String>) -> PyErr {
    Error::new_err(message.into())
}
