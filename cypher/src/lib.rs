//! `cypher`: tokenizer, syntax tree and recursive-descent parser for the read-only Cypher subset
//! that lance-csr answers. No DataFusion dependency, so it builds in seconds and can be fuzzed.
//!
//! ```
//! let q = cypher::parse_query("MATCH (a:Person)-[:KNOWS]->(b) RETURN b.name AS name").unwrap();
//! assert_eq!(q.to_string(), "MATCH (a:Person)-[:KNOWS]->(b) RETURN b.name AS name");
//! ```

pub mod ast;
pub mod parser;
pub mod span;
pub mod token;

pub use ast::*;
pub use parser::{parse_expression, parse_query, Parser, DEFAULT_RECURSION_LIMIT};
pub use span::{render_caret, ErrorKind, Location, ParseError, Span};

#[cfg(test)]
mod tests;
