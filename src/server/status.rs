//! Engine errors as Neo4j status codes (`Neo.ClientError.Statement.SyntaxError`, ...), the
//! way drivers classify them: client errors are the query's fault and are not retried,
//! transient ones may be, database errors are ours.

use crate::error::{Error, ErrorClass, LimitKind, SemanticKind};

/// A failure as a client sees it: a Neo4j status code and a message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Failure {
    pub code: &'static str,
    pub message: String,
}

impl Failure {
    pub fn new(code: &'static str, message: impl Into<String>) -> Self {
        Self {
            code,
            message: message.into(),
        }
    }

    /// A request the protocol does not allow (a malformed or oversized message, a message
    /// in the wrong state).
    pub fn invalid(message: impl Into<String>) -> Self {
        Self::new("Neo.ClientError.Request.Invalid", message)
    }
}

pub const ACCESS_MODE: &str = "Neo.ClientError.Statement.AccessMode";
pub const UNAUTHORIZED: &str = "Neo.ClientError.Security.Unauthorized";
pub const AUTH_RATE_LIMIT: &str = "Neo.ClientError.Security.AuthenticationRateLimit";
pub const DATABASE_NOT_FOUND: &str = "Neo.ClientError.Database.DatabaseNotFound";
pub const PROCEDURE_NOT_FOUND: &str = "Neo.ClientError.Procedure.ProcedureNotFound";
pub const TIMED_OUT: &str = "Neo.ClientError.Transaction.TransactionTimedOutClientConfiguration";
pub const TOO_MANY_CONNECTIONS: &str = "Neo.TransientError.General.DatabaseUnavailable";
pub const OUT_OF_MEMORY: &str = "Neo.TransientError.General.MemoryPoolOutOfMemoryError";

/// A login refused while its user or address is locked (Bolt and HTTP alike).
pub fn locked_out() -> Failure {
    Failure::new(
        AUTH_RATE_LIMIT,
        "The client has provided incorrect authentication details too many times in a row: \
         wait 5 seconds before trying again.",
    )
}

/// The failure of a connection whose slot went to a newcomer before it authenticated
/// (transient: drivers try again).
pub fn evicted() -> Failure {
    Failure::new(
        TOO_MANY_CONNECTIONS,
        "every connection slot is taken and too many connections wait to authenticate: the \
         oldest are closed (--max-connections)",
    )
}

/// `e`, raised by `query`, as a failure; the message is the engine's report with the caret
/// under the culprit where it has a position.
pub fn failure(e: &Error, query: &str) -> Failure {
    let message = e.render(query).trim_start_matches("error: ").to_string();
    Failure::new(code(e), message)
}

fn code(e: &Error) -> &'static str {
    match e {
        Error::Parse(p) if p.kind == cypher::ErrorKind::WriteClause => ACCESS_MODE,
        Error::Parse(_) => "Neo.ClientError.Statement.SyntaxError",
        Error::Semantic { kind, .. } => match kind {
            SemanticKind::MissingParameter => "Neo.ClientError.Statement.ParameterMissing",
            SemanticKind::InvalidArgumentType => "Neo.ClientError.Statement.TypeError",
            SemanticKind::ProcedureNotFound => PROCEDURE_NOT_FOUND,
            SemanticKind::ProcedureCallFailed => "Neo.ClientError.Procedure.ProcedureCallFailed",
            SemanticKind::UnknownFunction | SemanticKind::Unsupported => {
                "Neo.ClientError.Statement.SyntaxError"
            }
            _ => "Neo.ClientError.Statement.SemanticError",
        },
        Error::Plan(_) => "Neo.ClientError.Statement.TypeError",
        Error::Runtime(r) => match r.class {
            ErrorClass::TypeError => "Neo.ClientError.Statement.TypeError",
            ErrorClass::ArithmeticError => "Neo.ClientError.Statement.ArithmeticError",
            ErrorClass::ArgumentError => "Neo.ClientError.Statement.ArgumentError",
            _ => "Neo.ClientError.Statement.ExecutionFailed",
        },
        Error::Limit(LimitKind::Time, _) => "Neo.ClientError.Transaction.TransactionTimedOut",
        Error::Limit(..) => OUT_OF_MEMORY,
        _ if e.class() == ErrorClass::ArithmeticError => {
            "Neo.ClientError.Statement.ArithmeticError"
        }
        Error::Execution(_) => "Neo.ClientError.Statement.ExecutionFailed",
        _ => "Neo.DatabaseError.General.UnknownError",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn errors_get_the_codes_drivers_classify_by() {
        let g = Graph::sample().await.unwrap();
        let cases = [
            ("MATCH (n RETURN n", "Neo.ClientError.Statement.SyntaxError"),
            ("CREATE (n)", ACCESS_MODE),
            ("MATCH (n) SET n.x = 1", ACCESS_MODE),
            ("RETURN x", "Neo.ClientError.Statement.SemanticError"),
            ("RETURN $p", "Neo.ClientError.Statement.ParameterMissing"),
            ("RETURN 1 / 0", "Neo.ClientError.Statement.ArithmeticError"),
            ("RETURN nofn(1)", "Neo.ClientError.Statement.SyntaxError"),
        ];
        for (q, want) in cases {
            let e = match g.query(q, &Default::default()).await {
                Ok(_) => panic!("{q} succeeded"),
                Err(e) => e,
            };
            let f = failure(&e, q);
            assert_eq!(f.code, want, "{q}: {e}");
            if e.span().is_some() {
                assert!(f.message.contains('^'), "{q}: no caret in {}", f.message);
            }
        }
    }

    use crate::session::Graph;
}
