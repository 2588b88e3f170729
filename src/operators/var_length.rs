//! `VarLengthExpand`: `-[:T*min..max]->` as one iterative traversal over a CSR. Each input row
//! carries the start node's key; the output is the row once per path (relationships not
//! repeated within a path), with the path's edge ids as a list and the end node's columns.
//! In `distinct` mode only the distinct end nodes reachable within the bounds are produced,
//! found breadth-first with a visited bitmap instead of enumerating paths.

use super::csr_expand::TakeSpec;
use super::display_cols;
use crate::csr::{CsrIndex, NodeKeys, TableColumns};
use arrow::datatypes::{DataType, Field};
use datafusion::common::{DFSchema, DFSchemaRef, Result};
use datafusion::logical_expr::LogicalPlan;
use std::collections::HashSet;
use std::fmt;
use std::hash::Hash;
use std::sync::Arc;

/// Type of the edge-id list column: `List<UInt64>`.
static EIDS_TYPE: std::sync::LazyLock<DataType> = std::sync::LazyLock::new(|| {
    DataType::List(Arc::new(Field::new_list_field(DataType::UInt64, true)))
});

/// One way a traversal can take a step: over relationship table `rel`, from a node of label
/// slot `from` to one of slot `to`, walking the table forwards or (`reverse`) backwards.
#[derive(Debug, Clone)]
pub struct VarHop {
    pub rel: usize,
    pub rel_type: String,
    pub from: usize,
    pub to: usize,
    pub reverse: bool,
    /// The reverse walk of an undirected hop over a table from a label to itself: a self-loop
    /// was already taken forwards.
    pub skip_self_loops: bool,
    pub index: Arc<CsrIndex>,
    pub edges: Arc<TableColumns>,
}

/// A traversal's paths as values: per path, its nodes after the start and its relationships
/// as lists of structs of the given fields (leading fields: label and identity / type,
/// identity, start and end node identity; then properties, null where an element lacks one).
#[derive(Debug, Clone)]
pub struct PathElems {
    pub nodes_col: String,
    pub rels_col: String,
    pub node_fields: arrow::datatypes::Fields,
    pub rel_fields: arrow::datatypes::Fields,
    /// Per label slot: its node columns and key column.
    pub slots: Vec<(Arc<TableColumns>, String)>,
    /// Per hop: its table's source and destination key columns and their labels.
    pub ends: Vec<HopEnds>,
}

/// A traversal that keeps only shortest paths.
#[derive(Debug, Clone)]
pub struct ShortestPaths {
    pub mode: cypher::ast::Shortest,
    /// Column of the bound end node's key; `None`: every reachable node is an end.
    pub target: Option<String>,
    pub end_keys: Arc<NodeKeys>,
    /// Longest path `SHORTEST k` considers without an upper bound.
    pub k_cap: u64,
    /// Most relationships one search may examine.
    pub budget: usize,
    /// Only nodes / relationships passing these (over the element struct in column
    /// `shortest::NODE_COL` / `REL_COL`) are searched.
    pub node_filter: Option<datafusion::logical_expr::Expr>,
    pub rel_filter: Option<datafusion::logical_expr::Expr>,
}

impl ShortestPaths {
    pub fn describe(&self) -> String {
        let mode = match self.mode {
            cypher::ast::Shortest::Any => "any".to_string(),
            cypher::ast::Shortest::All => "all".to_string(),
            cypher::ast::Shortest::K(k) => k.to_string(),
        };
        let mut s = match &self.target {
            Some(t) => format!(", shortest={mode} to {t}"),
            None => format!(", shortest={mode}"),
        };
        if let Some(f) = &self.node_filter {
            s.push_str(&format!(", nodes: {f}"));
        }
        if let Some(f) = &self.rel_filter {
            s.push_str(&format!(", relationships: {f}"));
        }
        s
    }
}

#[derive(Debug, Clone)]
pub struct HopEnds {
    pub src: String,
    pub dst: String,
    pub from: String,
    pub to: String,
}

impl PathElems {
    pub fn node_list(&self) -> DataType {
        DataType::new_list(DataType::Struct(self.node_fields.clone()), true)
    }
    pub fn rel_list(&self) -> DataType {
        DataType::new_list(DataType::Struct(self.rel_fields.clone()), true)
    }
}

#[derive(Clone)]
pub struct VarLengthExpand {
    pub input: LogicalPlan,
    pub key: String,
    /// Every step a path can take (one per table and walk direction); several tables when the
    /// relationship has several types, or a type has several tables that chain.
    pub hops: Vec<VarHop>,
    /// Label of each slot the hops use; paths start at `start` and end at `end`.
    pub labels: Vec<String>,
    pub start: usize,
    pub end: usize,
    pub min: u64,
    /// `None`: unbounded (a path can't repeat an edge, so it ends).
    pub max: Option<u64>,
    /// Output column with the path's edge ids (`List<UInt64>`, see [`encode_eid`]); empty in
    /// distinct mode.
    pub eids: String,
    pub target: TakeSpec,
    /// Only distinct end nodes are needed (breadth-first, visited bitmap).
    pub distinct: bool,
    /// The paths' elements as values, when needed.
    pub elems: Option<PathElems>,
    /// Only shortest paths (from `key` to the node of column `target`, or to every node).
    pub shortest: Option<ShortestPaths>,
    /// Predicate over the end node's columns (output names of `target`), evaluated inside
    /// on the ends found, before anything is taken (not with `shortest`).
    pub target_filter: Option<datafusion::logical_expr::Expr>,
    /// Count the (shortest) paths instead of handing them out: one row per input row with
    /// paths, its count in this column (Int64), no path or end-node columns.
    pub count: Option<String>,
    /// Start label's keys, end label's columns.
    pub near_keys: Arc<NodeKeys>,
    pub target_cols: Arc<TableColumns>,
    pub schema: DFSchemaRef,
}

/// An edge in a variable-length path's id list: the table in the top 16 bits, the edge's row
/// id below (row ids of one table are distinct; with the table, of every table).
pub fn encode_eid(rel: usize, row_id: u64) -> u64 {
    ((rel as u64) << EID_TABLE_SHIFT) | row_id
}

/// Row ids must stay below this for [`encode_eid`].
pub const EID_TABLE_SHIFT: u32 = 48;

impl VarLengthExpand {
    pub fn eids_type() -> DataType {
        EIDS_TYPE.clone()
    }

    #[allow(clippy::too_many_arguments)]
    pub fn try_new(
        input: LogicalPlan,
        key: String,
        hops: Vec<VarHop>,
        labels: Vec<String>,
        (start, end): (usize, usize),
        (min, max): (u64, Option<u64>),
        eids: String,
        target: TakeSpec,
        near_keys: Arc<NodeKeys>,
        target_cols: Arc<TableColumns>,
    ) -> Result<Self> {
        let mut n = Self {
            input,
            key,
            hops,
            labels,
            start,
            end,
            min,
            max,
            eids,
            target,
            distinct: false,
            elems: None,
            shortest: None,
            target_filter: None,
            count: None,
            near_keys,
            target_cols,
            schema: Arc::new(DFSchema::empty()),
        };
        n.schema = n.compute_schema()?;
        Ok(n)
    }

    pub fn compute_schema(&self) -> Result<DFSchemaRef> {
        if let Some(c) = &self.count {
            return super::extended_schema(&self.input, std::iter::once((c, &DataType::Int64)));
        }
        let eids: (&String, &DataType) = (&self.eids, &EIDS_TYPE);
        let lists: Vec<(&String, DataType)> = match &self.elems {
            Some(e) => vec![(&e.nodes_col, e.node_list()), (&e.rels_col, e.rel_list())],
            None => vec![],
        };
        let extra = std::iter::once(eids)
            .chain(lists.iter().map(|(c, t)| (*c, t)))
            .chain(self.target.output().map(|(_, o, t)| (o, t)));
        super::extended_schema(&self.input, extra)
    }

    pub fn produced(&self) -> HashSet<String> {
        if let Some(c) = &self.count {
            return HashSet::from([c.clone()]);
        }
        std::iter::once(self.eids.clone())
            .chain(
                self.elems
                    .iter()
                    .flat_map(|e| [e.nodes_col.clone(), e.rels_col.clone()]),
            )
            .chain(self.target.output().map(|(_, o, _)| o.clone()))
            .collect()
    }

    /// No table is walked both ways: a breadth-first search then finds exactly the ends some
    /// path without a repeated relationship reaches (a shortest walk repeats no edge).
    pub fn directed(&self) -> bool {
        let mut seen = HashSet::new();
        self.hops.iter().all(|h| seen.insert(h.rel))
    }

    /// The types walked, `A|B`, in first-seen order.
    pub fn types(&self) -> String {
        let mut types: Vec<&str> = Vec::new();
        for h in &self.hops {
            if !types.contains(&h.rel_type.as_str()) {
                types.push(&h.rel_type);
            }
        }
        types.join("|")
    }

    /// Edges in the tables walked.
    pub fn table_rows(&self) -> usize {
        let mut seen = HashSet::new();
        self.hops
            .iter()
            .filter(|h| seen.insert(h.rel))
            .map(|h| h.index.table_rows)
            .sum()
    }

    /// How the hops walk their tables, for EXPLAIN: "" (forwards), ", incoming", ", both
    /// directions", and the number of tables when several.
    pub fn walk_note(&self) -> String {
        let tables: HashSet<usize> = self.hops.iter().map(|h| h.rel).collect();
        let mut s = String::new();
        if !self.directed() {
            s.push_str(", both directions");
        } else if self.hops.iter().all(|h| h.reverse) {
            s.push_str(", incoming");
        }
        if tables.len() > 1 {
            s.push_str(&format!(", tables={}", tables.len()));
        }
        s
    }

    fn sig(&self) -> impl Hash + PartialOrd + '_ {
        let hops: Vec<(usize, usize, usize, bool)> = self
            .hops
            .iter()
            .map(|h| (h.rel, h.from, h.to, h.reverse))
            .collect();
        (
            &self.input,
            &self.key,
            hops,
            &self.labels,
            (self.start, self.end),
            self.min,
            self.max,
            &self.eids,
            &self.target,
            self.distinct,
            self.elems.as_ref().map(|e| (&e.nodes_col, &e.rels_col)),
            (
                self.shortest
                    .as_ref()
                    .map(|s| (s.describe(), s.k_cap, s.budget)),
                &self.target_filter,
                &self.count,
            ),
        )
    }
}

super::node_identity!(VarLengthExpand);

impl super::UnaryNode for VarLengthExpand {
    const NAME: &'static str = "VarLengthExpand";

    fn input(&self) -> &LogicalPlan {
        &self.input
    }

    fn output_schema(&self) -> &DFSchemaRef {
        &self.schema
    }

    fn barrier_columns(&self) -> HashSet<String> {
        self.produced()
    }

    fn explain(&self, f: &mut fmt::Formatter) -> fmt::Result {
        let max = self.max.map(|m| m.to_string()).unwrap_or_default();
        write!(
            f,
            "VarLengthExpand: key={}, type={}, length={}..{max}, edges={}{}",
            self.key,
            self.types(),
            self.min,
            self.table_rows(),
            self.walk_note()
        )?;
        if self.distinct {
            write!(f, ", distinct ends (bfs)")?;
        }
        if let Some(s) = &self.shortest {
            f.write_str(&s.describe())?;
        }
        if let Some(p) = &self.target_filter {
            write!(f, ", filter={p}")?;
        }
        if let Some(c) = &self.count {
            return write!(f, ", counted -> {c}");
        }
        write!(f, ", take={}", display_cols(&self.target, true))
    }

    fn with_input(&self, input: LogicalPlan) -> Result<Self> {
        let mut n = self.clone();
        n.input = input;
        n.schema = n.compute_schema()?;
        Ok(n)
    }

    fn needed_input_columns(&self, output_columns: &[usize]) -> Option<Vec<Vec<usize>>> {
        let mut keys = vec![self.key.as_str()];
        keys.extend(self.shortest.iter().filter_map(|s| s.target.as_deref()));
        super::input_columns_needed(&self.input, output_columns, &keys)
    }
}

super::unary_node!(VarLengthExpand);

super::explain_debug!(VarLengthExpand);
