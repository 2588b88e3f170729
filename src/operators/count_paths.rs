//! `CountPaths`: `count(*)` of a tree of hops around a root node computed factorized. For each
//! arm (a chain of hops out of the root) the number of arm paths from every root node is found
//! by pushing counts from the arm's far end back to the root (per edge: add the count at the
//! far node); the answer is the sum over root rows of the product of their arm counts. Work is
//! linear in the edges of the tables, not in the number of paths. Target and relationship
//! filters apply per node / per edge while counting.

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
}

#[derive(Debug, Clone)]
pub struct CountPaths {
    /// Rows of the first node (one path start per row).
    pub input: LogicalPlan,
    pub key: String,
    /// Chains of hops out of the root.
    pub arms: Vec<Vec<CountHop>>,
    /// Output column (Int64).
    pub output: String,
    pub schema: DFSchemaRef,
}

impl CountPaths {
    pub fn try_new(
        input: LogicalPlan,
        key: String,
        arms: Vec<Vec<CountHop>>,
        output: String,
    ) -> Result<Self> {
        let schema = Arc::new(DFSchema::try_from(arrow::datatypes::Schema::new(vec![
            arrow::datatypes::Field::new(&output, arrow::datatypes::DataType::Int64, false),
        ]))?);
        Ok(Self {
            input,
            key,
            arms,
            output,
            schema,
        })
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
                        )
                    })
                    .collect()
            })
            .collect();
        (&self.input, &self.key, hops, &self.output)
    }
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
        let arm = |hops: &Vec<CountHop>| -> String {
            let hops: Vec<String> = hops
                .iter()
                .map(|h| {
                    let mut s = h.rel_type.clone();
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
                    s
                })
                .collect();
            format!("[{}]", hops.join(", "))
        };
        let arms: Vec<String> = self.arms.iter().map(arm).collect();
        write!(
            f,
            "CountPaths: key={}, arms=[{}] -> {}",
            self.key,
            arms.join(", "),
            self.output
        )
    }

    fn with_input(&self, input: LogicalPlan) -> Result<Self> {
        let mut n = self.clone();
        n.input = input;
        Ok(n)
    }

    fn needed_input_columns(&self, _output_columns: &[usize]) -> Option<Vec<Vec<usize>>> {
        Some(vec![vec![self
            .input
            .schema()
            .index_of_column_by_name(None, &self.key)?]])
    }
}

super::unary_node!(CountPaths);
