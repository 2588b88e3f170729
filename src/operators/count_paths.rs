//! `CountPaths`: `count(*)` of a tree of hops around a root node computed factorized. For each
//! arm (a chain of hops out of the root) the number of arm paths from every root node is found
//! by pushing counts from the arm's far end back to the root (per edge: add the count at the
//! far node); the answer is the sum over root rows of the product of their arm counts. Work is
//! linear in the edges of the tables, not in the number of paths. Target and relationship
//! filters apply per node / per edge while counting.
//!
//! Per row (`per_row`): each input row with its own count (rows without paths dropped), for a
//! count grouped by the root; `distinct` counts the distinct far nodes of a one-hop arm instead.
//! A one-hop arm without filters reads its counts from the CSR offsets (node degrees).
//!
//! A hop may be taken `min..=max` times (a variable-length hop from a label to itself):
//! counts are pushed back over it once per length and added up.
//!
//! Exclusions (`CountHop::fold`): a hop and the next one of its arm may exclude paths by what
//! joins the node before the hop (`x`) to the node after the next (`z`): `x <> z`,
//! relationship uniqueness between the two hops, `NOT (x)-[:R]-(z)`. The paths of the
//! excluded kind are counted as well (each closes a cycle of length two or three through `x`)
//! and subtracted, by inclusion and exclusion, so the count stays factorized.
//!
//! Values (`values`): sums, non-null counts, least and greatest values of an integer property
//! of an arm's last node over the paths, pushed back along the arm the same way (a sum adds
//! up over edges like a count; the least value takes the minimum), then multiplied by the
//! other arms' counts.

use super::csr_expand::{CsrData, TakeSpec};
use datafusion::common::{DFSchema, DFSchemaRef, Result};
use datafusion::logical_expr::{Expr, LogicalPlan};
use std::fmt;
use std::hash::Hash;
use std::sync::Arc;

/// One hop of the chain, as its `CsrExpand` had it.
#[derive(Debug, Clone)]
pub struct CountHop {
    pub rel_type: String,
    pub orientations: Vec<bool>,
    pub data: CsrData,
    pub edge: TakeSpec,
    pub target: TakeSpec,
    pub target_filter: Option<Expr>,
    pub edge_filter: Option<Expr>,
    /// How many times the hop is taken, `min..=max` (`(1, 1)`; more for a variable-length
    /// hop over a table from a label to itself, whose paths are then exactly its walks).
    pub lengths: (u64, u64),
    /// Paths this hop and the next of its arm exclude.
    pub fold: Option<Fold>,
    /// Arms hanging from this hop's far node (a tree-shaped pattern): each path through the
    /// node combines with each of theirs.
    pub branches: Vec<Vec<CountHop>>,
    /// An OPTIONAL MATCH's hop, alone in its arm: a node without a match counts once.
    pub optional: bool,
    /// Of an optional hop, counted per row (`count(l)` of its node or relationship, grouped):
    /// the count is of the paths where it matched, and a row whose paths all lack a match
    /// keeps its row, with 0.
    pub matched_only: bool,
}

/// Branches as a comparable value (they nest).
fn branches_sig(branches: &[Vec<CountHop>]) -> String {
    let hop = |h: &CountHop| {
        format!(
            "{}|{:?}|{:?}|{:?}|{:?}|{:?}|{:?}|{:?}|[{}]",
            h.rel_type,
            h.orientations,
            h.target_filter,
            h.edge_filter,
            h.target,
            h.edge,
            h.lengths,
            (h.optional, h.matched_only),
            branches_sig(&h.branches)
        )
    };
    let arm = |a: &Vec<CountHop>| a.iter().map(hop).collect::<Vec<_>>().join(",");
    branches.iter().map(arm).collect::<Vec<_>>().join(";")
}

/// Paths a hop (from `x` to `y`) and the next hop of its arm (from `y` to `z`) exclude. Each
/// kind is subtracted from the arm's counts at `x`: paths with `z = x` (reached back over the
/// next hop), paths walking one relationship there and back, paths whose `z` is adjacent to
/// `x`. Without self-loops in the tables involved, walking one relationship back implies
/// `z = x`, and `z = x` is never adjacent to `x`: the kinds only overlap where one contains
/// the other.
#[derive(Debug, Clone, Default)]
pub struct Fold {
    /// `x <> z`.
    pub distinct_ends: bool,
    /// The two hops (over one table) walk different relationships.
    pub distinct_edges: bool,
    /// `NOT (x)-[:R]-(z)`: the hop from `x` to `z` that must not exist (its relationship
    /// filter included; walked from `x`).
    pub absent: Option<Box<CountHop>>,
}

impl Fold {
    fn describe(&self) -> String {
        let mut parts = Vec::new();
        if self.distinct_ends {
            parts.push("ends differ".to_string());
        } else if self.distinct_edges {
            parts.push("edges differ".to_string());
        }
        if let Some(h) = &self.absent {
            parts.push(format!("no {}", explain_hop(h)));
        }
        format!(" then [{}]", parts.join(", "))
    }

    fn sig(&self) -> impl Hash + PartialOrd + '_ {
        (
            self.distinct_ends,
            self.distinct_edges,
            self.absent
                .as_ref()
                .map(|h| (&h.rel_type, &h.orientations, &h.edge_filter)),
        )
    }
}

/// What is computed of a property over the paths.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd)]
pub enum ValueKind {
    /// Decimal128(38, 0), null when no path has a value.
    Sum,
    /// Int64: the paths whose value is not null.
    NonNull,
    /// Int64, null when no path has a value.
    Min,
    Max,
}

/// An integer property of arm `arm`'s last node (`column` of its table) computed over the
/// paths into `output`.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd)]
pub struct PathValue {
    pub kind: ValueKind,
    pub arm: usize,
    pub column: String,
    pub output: String,
}

impl PathValue {
    pub fn data_type(&self) -> arrow::datatypes::DataType {
        use arrow::datatypes::DataType;
        match self.kind {
            ValueKind::Sum => DataType::Decimal128(38, 0),
            _ => DataType::Int64,
        }
    }
}

/// How step `j` of a cyclic pattern counted by joining (`CountPaths::joins`) binds its node:
/// the first hop of arm `j` walks from node `from` (0 the root, `i + 1` the node step `i`
/// bound) to the new node, and each further hop of the arm (`closes`, in order) joins the
/// new node to node `onto`, its edges looked up from `onto` (walked backwards when
/// `reversed`, the hop being from the new node onto `onto`).
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd)]
pub struct JoinStep {
    pub from: usize,
    pub closes: Vec<(usize, bool)>,
}

#[derive(Clone)]
pub struct CountPaths {
    /// Rows of the first node (one path start per row).
    pub input: LogicalPlan,
    pub key: String,
    /// Chains of hops out of the root.
    pub arms: Vec<Vec<CountHop>>,
    /// Output column (Int64).
    pub output: String,
    /// Each input row with its count (else one row: the total).
    pub per_row: bool,
    /// Distinct far nodes of the one hop (`count(DISTINCT b)` per root row).
    pub distinct: bool,
    /// A hop from the end of the single arm back to the root: cycles are counted, by
    /// intersecting sorted neighbour lists.
    pub close: Option<CountHop>,
    /// A pattern with several cycles (any shape), counted by joining node by node: one arm
    /// per step (see [`JoinStep`]), each candidate of a step checked against the nodes its
    /// closing hops reach from nodes bound before, never a row built.
    pub joins: Vec<JoinStep>,
    /// Property values computed over the paths, output after the count.
    pub values: Vec<PathValue>,
    pub schema: DFSchemaRef,
}

impl CountPaths {
    /// The total count of the paths from the input's rows.
    pub fn try_new(
        input: LogicalPlan,
        key: String,
        arms: Vec<Vec<CountHop>>,
        output: String,
    ) -> Result<Self> {
        Self {
            input,
            key,
            arms,
            output,
            per_row: false,
            distinct: false,
            close: None,
            joins: vec![],
            values: vec![],
            schema: Arc::new(DFSchema::empty()),
        }
        .with_schema()
    }

    /// Each input row with the count of its paths (`distinct`: of the distinct far nodes of
    /// a single one-hop arm); rows without any are dropped.
    pub fn try_new_per_row(
        input: LogicalPlan,
        key: String,
        arms: Vec<Vec<CountHop>>,
        output: String,
        distinct: bool,
    ) -> Result<Self> {
        if distinct && (arms.len() != 1 || arms[0].len() != 1) {
            return datafusion::common::internal_err!(
                "CountPaths: distinct counts need a single hop"
            );
        }
        Self {
            input,
            key,
            arms,
            output,
            per_row: true,
            distinct,
            close: None,
            joins: vec![],
            values: vec![],
            schema: Arc::new(DFSchema::empty()),
        }
        .with_schema()
    }

    /// Also computes `values` (not with DISTINCT or a closing hop).
    pub fn with_values(mut self, values: Vec<PathValue>) -> Result<Self> {
        if !values.is_empty() && (self.distinct || self.close.is_some() || !self.joins.is_empty()) {
            return datafusion::common::internal_err!("CountPaths: values of plain paths only");
        }
        if values.iter().any(|v| v.arm >= self.arms.len()) {
            return datafusion::common::internal_err!("CountPaths: no such arm");
        }
        self.values = values;
        self.with_schema()
    }

    /// Per row: the input's columns (qualifiers kept); then the count (never null) and the
    /// values.
    fn with_schema(mut self) -> Result<Self> {
        use arrow::datatypes::{DataType, Field};
        let mut fields: Vec<_> = match self.per_row {
            true => self
                .input
                .schema()
                .iter()
                .map(|(q, f)| (q.cloned(), f.clone()))
                .collect(),
            false => vec![],
        };
        fields.push((
            None,
            Arc::new(Field::new(&self.output, DataType::Int64, false)),
        ));
        for v in &self.values {
            let nullable = v.kind != ValueKind::NonNull;
            fields.push((
                None,
                Arc::new(Field::new(&v.output, v.data_type(), nullable)),
            ));
        }
        self.schema = Arc::new(DFSchema::new_with_metadata(fields, Default::default())?);
        Ok(self)
    }

    /// Counts the patterns `joins` describes over the arms (counts only; checked where the
    /// operator is built, as a closing hop is).
    pub fn with_joins(mut self, joins: Vec<JoinStep>) -> Self {
        self.joins = joins;
        self
    }

    /// Counts cycles closed by `close` (from the single arm's last node back to the root, or
    /// from the second arm's last node onto the first's).
    pub fn with_close(mut self, close: CountHop) -> Self {
        self.close = Some(close);
        self
    }

    fn sig(&self) -> impl Hash + PartialOrd + '_ {
        let hops: Vec<Vec<_>> = self
            .arms
            .iter()
            .map(|a| {
                a.iter()
                    .map(|h| {
                        (
                            &h.rel_type,
                            &h.orientations,
                            &h.target_filter,
                            &h.edge_filter,
                            &h.target,
                            &h.edge,
                            h.lengths,
                            (h.optional, h.matched_only),
                            h.fold.as_ref().map(Fold::sig),
                            branches_sig(&h.branches),
                        )
                    })
                    .collect()
            })
            .collect();
        (
            &self.input,
            &self.key,
            hops,
            &self.output,
            self.per_row,
            self.distinct,
            self.close
                .as_ref()
                .map(|h| (&h.rel_type, &h.orientations, &h.edge_filter)),
            &self.joins,
            &self.values,
        )
    }
}

/// A hop as EXPLAIN shows it: its type, direction, filters, exclusions, branches.
fn explain_hop(h: &CountHop) -> String {
    let mut s = h.rel_type.clone();
    if h.lengths != (1, 1) {
        s.push_str(&format!("*{}..{}", h.lengths.0, h.lengths.1));
    }
    if h.orientations.len() == 2 {
        s.push_str(" (both)");
    } else if h.orientations[0] {
        s.push_str(" (in)");
    }
    if let Some(p) = &h.target_filter {
        s.push_str(&format!(" filter={p}"));
    }
    if let Some(p) = &h.edge_filter {
        s.push_str(&format!(" edge_filter={p}"));
    }
    if let Some(f) = &h.fold {
        s.push_str(&f.describe());
    }
    if h.optional {
        s.push_str(" optional");
    }
    if h.matched_only {
        s.push_str(" (counted where it matched)");
    }
    if !h.branches.is_empty() {
        let b: Vec<String> = h.branches.iter().map(|a| explain_arm(a)).collect();
        s.push_str(&format!(" with {}", b.join(", ")));
    }
    s
}

/// An arm as EXPLAIN shows it.
fn explain_arm(hops: &[CountHop]) -> String {
    let hops: Vec<String> = hops.iter().map(explain_hop).collect();
    format!("[{}]", hops.join(", "))
}

super::node_identity!(CountPaths);

impl super::UnaryNode for CountPaths {
    const NAME: &'static str = "CountPaths";

    fn input(&self) -> &LogicalPlan {
        &self.input
    }

    fn output_schema(&self) -> &DFSchemaRef {
        &self.schema
    }

    fn explain(&self, f: &mut fmt::Formatter) -> fmt::Result {
        let arm = |hops: &Vec<CountHop>| explain_arm(hops);
        let mut arms: Vec<String> = self.arms.iter().map(arm).collect();
        // Joined: each step's hop from its node, then its closing hops onto theirs.
        for (a, s) in arms.iter_mut().zip(&self.joins) {
            let onto: Vec<String> = s.closes.iter().map(|c| c.0.to_string()).collect();
            *a = format!("{} from {} onto [{}]", a, s.from, onto.join(", "));
        }
        if !self.joins.is_empty() {
            arms = vec![format!("joined {}", arms.join(", "))];
        }
        if let Some(h) = &self.close {
            let back = arm(&vec![h.clone()]);
            arms[0] = format!("{} closed by {back}", arms[0]);
        }
        let what = match (self.per_row, self.distinct) {
            (false, _) => "",
            (true, false) => " per row",
            (true, true) => " per row, distinct",
        };
        let values: Vec<String> = self
            .values
            .iter()
            .map(|v| {
                format!(
                    ", {:?}(arm {}: {}) -> {}",
                    v.kind, v.arm, v.column, v.output
                )
            })
            .collect();
        write!(
            f,
            "CountPaths: key={}, arms=[{}]{what} -> {}{}",
            self.key,
            arms.join(", "),
            self.output,
            values.concat()
        )
    }

    /// The count and values are made here: a predicate on them stays above.
    fn barrier_columns(&self) -> std::collections::HashSet<String> {
        std::iter::once(&self.output)
            .chain(self.values.iter().map(|v| &v.output))
            .cloned()
            .collect()
    }

    fn with_input(&self, input: LogicalPlan) -> Result<Self> {
        let mut n = self.clone();
        n.input = input;
        n.with_schema()
    }

    fn needed_input_columns(&self, output_columns: &[usize]) -> Option<Vec<Vec<usize>>> {
        if self.per_row {
            return super::input_columns_needed(&self.input, output_columns, &[&self.key]);
        }
        Some(vec![vec![self
            .input
            .schema()
            .index_of_column_by_name(None, &self.key)?]])
    }
}

super::unary_node!(CountPaths);

super::explain_debug!(CountPaths);
