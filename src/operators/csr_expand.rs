//! `CsrExpand`: one hop over a CSR index. Each input row carries the near node's key; the
//! output is the input row once per matching edge, plus the requested relationship and target
//! node columns. A target filter and a relationship filter are evaluated inside, reading only
//! the filter's columns first and taking the other columns for the rows that pass.

use super::display_cols;
use crate::csr::{CsrIndex, NodeKeys, TableColumns};
use datafusion::common::{DFSchema, DFSchemaRef, Result};
use datafusion::logical_expr::{Expr, LogicalPlan};
use std::collections::HashSet;
use std::fmt;
use std::hash::Hash;
use std::sync::Arc;

/// Columns fetched from a table: (table column, output column name), plus which are wanted.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd)]
pub struct TakeSpec {
    /// Variable the columns belong to (`b`, `k`).
    pub var: String,
    /// Every column the operator can fetch: (table column, output name, type).
    pub all: Vec<(String, String, arrow::datatypes::DataType)>,
    /// Indices into `all` that are output, in order.
    pub take: Vec<usize>,
    /// Index into `all` of the key column (marked `*` in EXPLAIN), if any.
    pub key: Option<usize>,
}

impl TakeSpec {
    pub fn output(&self) -> impl Iterator<Item = &(String, String, arrow::datatypes::DataType)> {
        self.take.iter().map(|&i| &self.all[i])
    }

    /// Table column for an output name.
    pub fn table_col(&self, out: &str) -> Option<&str> {
        self.all
            .iter()
            .find(|(_, o, _)| o == out)
            .map(|(c, _, _)| c.as_str())
    }
}

/// The data a CSR hop reads, shared by the logical node and its operator.
#[derive(Debug, Clone)]
pub struct CsrData {
    pub index: Arc<CsrIndex>,
    pub near_keys: Arc<NodeKeys>,
    pub far_keys: Arc<NodeKeys>,
    pub edges: Arc<TableColumns>,
    pub target: Arc<TableColumns>,
}

impl CsrData {
    /// An error once a check of a mapped index file it reads found damage: its lookups then
    /// find nothing in the damaged block, and results without it must not be returned.
    pub fn intact(&self) -> crate::Result<()> {
        self.index.intact()?;
        self.near_keys.intact()?;
        self.far_keys.intact()
    }

    /// Whether a hop on it can join a node to itself: a self-loop, between nodes of one
    /// table only.
    pub fn self_loops(&self) -> bool {
        Arc::ptr_eq(&self.near_keys, &self.far_keys) && self.index.has_self_loops()
    }
}

#[derive(Clone)]
pub struct CsrExpand {
    pub input: LogicalPlan,
    /// Input column holding the near node's key.
    pub key: String,
    /// Relationship type and table index (for display and identity).
    pub rel_type: String,
    pub rel: usize,
    /// Walk directions: `false` = from source to target, `true` = from target to source.
    /// Both for an undirected hop (a self-loop is then matched once).
    pub orientations: Vec<bool>,
    pub edge: TakeSpec,
    /// Target node columns; empty `take` when the far node is already bound (`close`).
    pub target: TakeSpec,
    /// Input column holding the far node's key when the hop closes onto a bound node.
    pub close: Option<String>,
    /// Predicate over target columns (output names), evaluated inside.
    pub target_filter: Option<Expr>,
    /// Predicate over the relationship's own columns (output names), evaluated inside.
    pub edge_filter: Option<Expr>,
    /// Counting a closing hop (an existence test between two bound nodes): each input row
    /// once, with the number of its matching edges in this Int64 column, and no other.
    pub count: Option<String>,
    /// An OPTIONAL MATCH of this one hop: an input row without a match comes out once, its
    /// relationship's and far node's columns null (a left outer expansion).
    pub optional: bool,
    pub data: CsrData,
    pub schema: DFSchemaRef,
}

impl CsrExpand {
    pub fn try_new(
        input: LogicalPlan,
        key: String,
        rel_type: String,
        rel: usize,
        orientations: Vec<bool>,
        edge: TakeSpec,
        target: TakeSpec,
        close: Option<String>,
        data: CsrData,
    ) -> Result<Self> {
        let mut n = Self {
            input,
            key,
            rel_type,
            rel,
            orientations,
            edge,
            target,
            close,
            target_filter: None,
            edge_filter: None,
            count: None,
            optional: false,
            data,
            schema: Arc::new(DFSchema::empty()),
        };
        n.schema = n.compute_schema()?;
        Ok(n)
    }

    /// Input columns, then the relationship's, then the target's (or the count).
    pub fn compute_schema(&self) -> Result<DFSchemaRef> {
        if let Some(c) = &self.count {
            let t = arrow::datatypes::DataType::Int64;
            return super::extended_schema(&self.input, std::iter::once((c, &t)));
        }
        let extra = self.edge.output().chain(self.target.output());
        super::extended_schema(&self.input, extra.map(|(_, o, t)| (o, t)))
    }

    /// This closing hop counting its matches per input row into `output` instead of
    /// producing a row per match.
    pub fn counting(mut self, output: String) -> Result<Self> {
        if self.close.is_none() || self.target_filter.is_some() {
            return datafusion::common::internal_err!("CsrExpand counts only a closing hop");
        }
        self.edge.take.clear();
        self.target.take.clear();
        self.count = Some(output);
        self.schema = self.compute_schema()?;
        Ok(self)
    }

    /// Output columns produced here (not passed through from the input).
    pub fn produced(&self) -> HashSet<String> {
        self.edge
            .output()
            .chain(self.target.output())
            .map(|(_, o, _)| o.clone())
            .chain(self.count.clone())
            .collect()
    }

    fn sig(&self) -> impl Hash + PartialOrd + '_ {
        (
            &self.input,
            &self.key,
            self.rel,
            &self.orientations,
            &self.edge,
            &self.target,
            &self.close,
            &self.target_filter,
            &self.edge_filter,
            &self.count,
            self.optional,
        )
    }
}

super::node_identity!(CsrExpand);

impl super::UnaryNode for CsrExpand {
    const NAME: &'static str = "CsrExpand";

    fn input(&self) -> &LogicalPlan {
        &self.input
    }

    fn output_schema(&self) -> &DFSchemaRef {
        &self.schema
    }

    /// Predicates on what the hop produces must stay above it (our rule moves them inside).
    fn barrier_columns(&self) -> HashSet<String> {
        self.produced()
    }

    fn explain(&self, f: &mut fmt::Formatter) -> fmt::Result {
        // The first two relationship columns are its endpoints.
        let name = |i: usize| self.edge.all.get(i).map(|c| c.1.as_str()).unwrap_or("?");
        let (src, dst) = (name(0), name(1));
        write!(
            f,
            "CsrExpand: key={} -> [{src}, {dst}], edges={}",
            self.key, self.data.index.table_rows
        )?;
        if self.orientations.len() == 2 {
            write!(f, ", both directions")?;
        } else if self.orientations[0] {
            write!(f, ", incoming")?;
        }
        match &self.close {
            Some(c) => write!(f, ", close={c}")?,
            None => write!(f, ", take={}", display_cols(&self.target, true))?,
        }
        write!(f, ", edge={}", display_cols(&self.edge, false))?;
        if let Some(p) = &self.target_filter {
            write!(f, ", filter={p}")?;
        }
        if let Some(p) = &self.edge_filter {
            write!(f, ", edge_filter={p}")?;
        }
        if let Some(c) = &self.count {
            write!(f, ", counted -> {c}")?;
        }
        if self.optional {
            write!(f, ", optional")?;
        }
        Ok(())
    }

    fn with_input(&self, input: LogicalPlan) -> Result<Self> {
        let mut n = self.clone();
        n.input = input;
        n.schema = n.compute_schema()?;
        Ok(n)
    }

    /// Input columns needed for the requested outputs: the passed-through ones, plus the key
    /// (and closing) column.
    fn needed_input_columns(&self, output_columns: &[usize]) -> Option<Vec<Vec<usize>>> {
        let mut keys = vec![self.key.as_str()];
        keys.extend(self.close.as_deref());
        super::input_columns_needed(&self.input, output_columns, &keys)
    }
}

super::unary_node!(CsrExpand);

super::explain_debug!(CsrExpand);
