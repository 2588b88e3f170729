//! `NodeLookup`: fetch a node's columns by key. Each input row carries a node key; rows whose
//! key is not a node are dropped (as a join with the node table would drop them).

use super::csr_expand::TakeSpec;
use super::display_cols;
use crate::csr::{NodeKeys, TableColumns};
use datafusion::common::{DFSchema, DFSchemaRef, Result};
use datafusion::logical_expr::LogicalPlan;
use std::collections::HashSet;
use std::fmt;
use std::hash::Hash;
use std::sync::Arc;

#[derive(Clone)]
pub struct NodeLookup {
    pub input: LogicalPlan,
    /// Input column with the node key.
    pub key: String,
    pub label: String,
    pub target: TakeSpec,
    pub keys: Arc<NodeKeys>,
    pub columns: Arc<TableColumns>,
    /// The input keys are known to be nodes or null (e.g. they came from an index, or are a
    /// grouped node's keys); the lookup then never drops a row (a null key gets null
    /// columns) and may be removed when none of its columns is used.
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

impl super::UnaryNode for NodeLookup {
    const NAME: &'static str = "NodeLookup";

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
        write!(
            f,
            "NodeLookup: key={}, label={}, take={}",
            self.key,
            self.label,
            display_cols(&self.target, true)
        )
    }

    fn with_input(&self, input: LogicalPlan) -> Result<Self> {
        let mut n = self.clone();
        n.input = input;
        n.schema = n.compute_schema()?;
        Ok(n)
    }

    fn needed_input_columns(&self, output_columns: &[usize]) -> Option<Vec<Vec<usize>>> {
        super::input_columns_needed(&self.input, output_columns, &[&self.key])
    }
}

super::unary_node!(NodeLookup);

super::explain_debug!(NodeLookup);
