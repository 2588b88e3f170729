//! lance-csr: a query engine for a read-only Cypher subset over graphs stored as Lance datasets,
//! executed on Apache DataFusion.
//!
//! The entry point is [`Graph`]: open a graph (`Graph::open("graph.toml")`, or build one from
//! Arrow tables with [`Graph::builder`]), then `query` it with [`Params`] of [`Value`]s; a
//! [`QueryResult`] holds the column names and Arrow batches, [`ResultStream`] yields them as
//! they are computed, [`render`] prints them. Errors are [`Error`]s with openCypher's classes.
//!
//! Inside (see ARCHITECTURE.md): `cypher` parses, `binder` binds patterns against the
//! catalog, `rewrite` reorders and branches them, `planner` lowers to a DataFusion plan,
//! `optimizer` and `operators` add the graph rules and the CSR operators.

pub(crate) mod binder;
pub(crate) mod catalog;
pub(crate) mod config;
pub(crate) mod csr;
#[cfg(feature = "distributed")]
pub(crate) mod distributed;
pub(crate) mod error;
pub(crate) mod functions;
pub(crate) mod operators;
pub(crate) mod optimizer;
pub(crate) mod output;
pub(crate) mod plan_cache;
pub(crate) mod planner;
pub(crate) mod rewrite;
pub mod server;
pub(crate) mod session;
pub(crate) mod storage;

pub use binder::query::COMPACT_ITEMS as COMPACT_LIST_ITEMS;
pub use catalog::{GraphSchema, LabelSchema, RelationshipSchema};
pub use config::options::{AsOf, GraphOptions, PlannerOptions};
pub use config::rules::{Mode, Rule, RuleSwitches};
pub use config::{split_labels, GraphConfig, IndexDecl, IndexKind, VectorMethod, VectorMetric};
pub use csr::registry::IndexReport;
pub(crate) use error::sem_err;
pub use error::{Error, ErrorClass, LimitKind, Result, RuntimeError, SemanticKind};
pub use functions::any::{is_mixed_field, mixed_field, TypedListBuilder};
pub use functions::budget::available_memory;
pub use functions::value::{is_identity_field, value_at, walked_forwards, Entity, Value};
pub use operators::backstop::install_meter as install_allocation_meter;
pub use output::value::{fmt_float, render_cell, starts_at as path_step_forwards};
pub use output::{render, rows, Format, QueryResult, RowWriter, TABLE_PAGE_ROWS};
pub use planner::Params;
pub use session::{
    human_bytes, import, index_status, param, remove_index_files, tag_graph, Graph, GraphBuilder,
    LiveGraph, PhaseTimes, Prepared, ResultStream,
};
pub use storage::import::{NodeSpec, RelSpec};
pub use storage::{append_lance, write_graph, write_lance};

/// Distributed execution on Ballista (feature `distributed`): the scheduler and executor
/// processes (`lance-csr cluster`), an in-process cluster, the sessions they plan with.
/// Temporal values (`Value::Temporal`): dates, times, datetimes and durations.
pub mod temporal {
    pub use crate::functions::temporal::{Duration, Kind, Temporal};
}

#[cfg(feature = "distributed")]
pub mod cluster {
    pub use crate::distributed::cluster::{
        run_executor, run_scheduler, standalone, EXECUTOR_TIMEOUT_SECONDS,
    };
}

/// Re-exported so users need no direct dependency for the usual types.
pub use arrow;
pub use datafusion;

/// For the criterion benches only (building the CSR structures directly); not part of the API.
#[doc(hidden)]
pub mod bench_internals {
    pub use crate::csr::{CsrIndex, NodeKeys};
}
