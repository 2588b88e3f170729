//! `VarLengthExpand`: `-[:T*min..max]->` as one iterative traversal over a CSR. Each input row
//! carries the start node's key; the output is the row once per path (relationships not
//! repeated within a path), with the path's edge ids as a list and the end node's columns.
//! In `distinct` mode only the distinct end nodes reachable within the bounds are produced,
//! found breadth-first with a visited bitmap instead of enumerating paths.

use super::csr_expand::{CsrData, TakeSpec};
use super::display_cols;
use arrow::datatypes::{DataType, Field};
use datafusion::common::{DFSchema, DFSchemaRef, Result};
use datafusion::logical_expr::{Expr, LogicalPlan, UserDefinedLogicalNodeCore};
use std::collections::HashSet;
use std::fmt;
use std::hash::Hash;
use std::sync::Arc;

/// Type of the edge-id list column: `List<UInt64>`.
static EIDS_TYPE: std::sync::LazyLock<DataType> = std::sync::LazyLock::new(|| {
    DataType::List(Arc::new(Field::new_list_field(DataType::UInt64, true)))
});

#[derive(Debug, Clone)]
pub struct VarLengthExpand {
    pub input: LogicalPlan,
    pub key: String,
    pub rel_type: String,
    pub rel: usize,
    pub orientations: Vec<bool>,
    pub min: u64,
    /// `None`: unbounded (a path can't repeat an edge, so it ends).
    pub max: Option<u64>,
    /// Output column with the path's edge ids (`List<UInt64>`); empty in distinct mode.
    pub eids: String,
    pub target: TakeSpec,
    /// Only distinct end nodes are needed (breadth-first, visited bitmap).
    pub distinct: bool,
    pub data: CsrData,
    pub schema: DFSchemaRef,
}

impl VarLengthExpand {
    pub fn eids_type() -> DataType {
        EIDS_TYPE.clone()
    }

    #[allow(clippy::too_many_arguments)]
    pub fn try_new(
        input: LogicalPlan,
        key: String,
        rel_type: String,
        rel: usize,
        orientations: Vec<bool>,
        min: u64,
        max: Option<u64>,
        eids: String,
        target: TakeSpec,
        data: CsrData,
    ) -> Result<Self> {
        let mut n = Self {
            input,
            key,
            rel_type,
            rel,
            orientations,
            min,
            max,
            eids,
            target,
            distinct: false,
            data,
            schema: Arc::new(DFSchema::empty()),
        };
        n.schema = n.compute_schema()?;
        Ok(n)
    }

    pub fn compute_schema(&self) -> Result<DFSchemaRef> {
        let eids: (&String, &DataType) = (&self.eids, &EIDS_TYPE);
        let extra = std::iter::once(eids).chain(self.target.output().map(|(_, o, t)| (o, t)));
        super::extended_schema(&self.input, extra)
    }

    pub fn produced(&self) -> HashSet<String> {
        std::iter::once(self.eids.clone())
            .chain(self.target.output().map(|(_, o, _)| o.clone()))
            .collect()
    }

    fn sig(&self) -> impl Hash + PartialOrd + '_ {
        (
            &self.input,
            &self.key,
            self.rel,
            &self.orientations,
            self.min,
            self.max,
            &self.eids,
            &self.target,
            self.distinct,
        )
    }
}

super::node_identity!(VarLengthExpand);

impl UserDefinedLogicalNodeCore for VarLengthExpand {
    fn name(&self) -> &str {
        "VarLengthExpand"
    }

    fn inputs(&self) -> Vec<&LogicalPlan> {
        vec![&self.input]
    }

    fn schema(&self) -> &DFSchemaRef {
        &self.schema
    }

    fn expressions(&self) -> Vec<Expr> {
        vec![]
    }

    fn prevent_predicate_push_down_columns(&self) -> HashSet<String> {
        self.produced()
    }

    fn fmt_for_explain(&self, f: &mut fmt::Formatter) -> fmt::Result {
        let max = self.max.map(|m| m.to_string()).unwrap_or_default();
        write!(
            f,
            "VarLengthExpand: key={}, type={}, length={}..{max}, edges={}",
            self.key, self.rel_type, self.min, self.data.index.table_rows
        )?;
        if self.orientations.len() == 2 {
            write!(f, ", both directions")?;
        } else if self.orientations[0] {
            write!(f, ", incoming")?;
        }
        if self.distinct {
            write!(f, ", distinct ends (bfs)")?;
        }
        write!(f, ", take={}", display_cols(&self.target, true))
    }

    fn with_exprs_and_inputs(
        &self,
        _exprs: Vec<Expr>,
        mut inputs: Vec<LogicalPlan>,
    ) -> Result<Self> {
        let mut n = self.clone();
        n.input = inputs.swap_remove(0);
        n.schema = n.compute_schema()?;
        Ok(n)
    }

    fn necessary_children_exprs(&self, output_columns: &[usize]) -> Option<Vec<Vec<usize>>> {
        super::input_columns_needed(&self.input, output_columns, &[&self.key])
    }

    fn supports_limit_pushdown(&self) -> bool {
        false
    }
}
