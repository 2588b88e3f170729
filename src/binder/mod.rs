//! Binder: the first stage after parsing. It checks a query's patterns against the graph's
//! catalog and the variables earlier clauses bound, and produces for each MATCH a
//! [`QueryGraph`]: every node and relationship occurrence with the labels and tables it can
//! have. The rewrites (`crate::rewrite`) take and return query graphs; the planner lowers them.
//!
//! - `names.rs`: user variable names escaped before anything else, so they never meet the
//!   planner's internal column names;
//! - `query.rs`: the whole query clause by clause: variables and their kinds in scope, every
//!   name an expression uses resolved, functions and their arity, parameters as typed slots;
//! - `query_graph.rs`: label / table inference, resolution to one label and table per
//!   occurrence, and the semantic errors of patterns (unknown labels, types and properties,
//!   variables of the wrong kind or bound twice, path names);
//! - `call.rs`: a CALL's procedure, index and constant arguments, and what its YIELD binds.

pub(crate) mod call;
pub(crate) mod combos;
pub(crate) mod matched;
pub(crate) mod names;
pub(crate) mod query;
pub(crate) mod query_graph;

pub(crate) use query_graph::{QueryGraph, ResolvedPath};

use crate::catalog::Catalog;

/// What an earlier clause bound a variable to, as far as binding and rewriting patterns care.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum BoundVar {
    /// A node with one of these labels. `several`: bound by a MATCH that branched over
    /// them, so each row tells which (a MATCH reading it branches too).
    Node { labels: Vec<String>, several: bool },
    /// A single relationship from one of these tables (catalog indexes).
    Rel { tables: Vec<usize> },
    /// A list of relationships (of this table, where all are of one).
    RelList { table: Option<usize> },
    /// A path.
    Path,
    /// Any other value (from a list, a map, an expression): it may still hold a node or
    /// a relationship.
    Value,
}

impl BoundVar {
    /// A node with exactly these labels, bound by an ordinary MATCH.
    pub fn node(labels: Vec<String>) -> Self {
        BoundVar::Node {
            labels,
            several: false,
        }
    }

    pub fn kind_name(&self) -> &'static str {
        match self {
            BoundVar::Node { .. } => "node",
            BoundVar::Rel { .. } => "relationship",
            BoundVar::RelList { .. } => "relationship list",
            BoundVar::Path => "path",
            BoundVar::Value => "value",
        }
    }
}

/// Binds MATCH clauses against a catalog, given what earlier clauses bound.
pub(crate) struct Binder<'a> {
    pub catalog: &'a Catalog,
    /// Schema-less semantics: an unknown label or type matches nothing (no error).
    pub lenient: bool,
    /// What a variable is bound to before the clause; `None`: a new variable.
    pub bound: &'a dyn Fn(&str) -> Option<BoundVar>,
}
