//! lance-csr: a query engine for a read-only Cypher subset over graphs stored as Lance datasets,
//! executed on Apache DataFusion.
//!
//! Pipeline: [`cypher`] parses the text; [`planner`] binds it against the graph's [`catalog`]
//! and lowers it to a DataFusion plan; DataFusion optimizes and executes it; [`output`] renders
//! the Arrow result. [`session::Graph`] is the entry point.

pub mod bench;
pub mod catalog;
pub mod cli;
pub mod config;
pub mod csr;
pub mod error;
pub mod functions;
pub mod operators;
pub mod optimizer;
pub mod output;
pub mod planner;
pub mod rewrite;
pub mod session;
pub mod storage;
pub mod verify;

pub use error::{Error, Result};
pub use planner::Params;
pub use session::{param, parse_param, Graph, GraphOptions, QueryResult};

/// Re-exported so users need no direct dependency for the usual types.
pub use arrow;
pub use datafusion;
