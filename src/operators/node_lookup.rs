//! `NodeLookup`: fetch a node's columns by key. Each input row carries a node key; rows whose
//! key is not a node are dropped (as a join with the node table would drop them).

use super::csr_expand::TakeSpec;
use super::display_cols;
use crate::csr::{NodeKeys, TableColumns};
use datafusion::common::{DFSchema, DFSchemaRef, Result};
use datafusion::logical_expr::{Expr, LogicalPlan, UserDefinedLogicalNodeCore};
use std::collections::HashSet;
use std::fmt;
use std::hash::Hash;
use std::sync::Arc;

#[derive(Debug, Clone)]
pub struct NodeLookup {
    pub input: LogicalPlan,
    /// Input column with the node key.
    pub key: String,
    pub label: String,
    pub target: TakeSpec,
    pub keys: Arc<NodeKeys>,
    pub columns: Arc<TableColumns>,
    /// The input keys are known to be nodes (e.g. they came from an index); the lookup then
    /// never drops a row and may be removed when none of its columns is used.
    pub keys_exist: bool,
    pub schema: DFSchemaRef,
}

impl NodeLookup {
    pub fn try_new(
        input: LogicalPlan,
        key: String,
        label: String,
        target: TakeSpec,
        keys: Arc<NodeKeys>,
        columns: Arc<TableColumns>,
        keys_exist: bool,
    ) -> Result<Self> {
        let mut n = Self {
            input,
            key,
            label,
            target,
            keys,
            columns,
            keys_exist,
            schema: Arc::new(DFSchema::empty()),
        };
        n.schema = n.compute_schema()?;
        Ok(n)
    }

    pub fn compute_schema(&self) -> Result<DFSchemaRef> {
        super::extended_schema(&self.input, self.target.output().map(|(_, o, t)| (o, t)))
    }

    pub fn produced(&self) -> HashSet<String> {
        self.target.output().map(|(_, o, _)| o.clone()).collect()
    }

    fn sig(&self) -> impl Hash + PartialOrd + '_ {
        (
            &self.input,
            &self.key,
            &self.label,
            &self.target,
            self.keys_exist,
        )
    }
}

super::node_identity!(NodeLookup);

impl UserDefinedLogicalNodeCore for NodeLookup {
    fn name(&self) -> &str {
        "NodeLookup"
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
        write!(
            f,
            "NodeLookup: key={}, label={}, take={}",
            self.key,
            self.label,
            display_cols(&self.target, true)
        )
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
        // Rows with an unknown key are dropped, so a limit can't move below.
        false
    }
}
