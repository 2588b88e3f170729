//! `CsrIntersect`: a node adjacent to two bound nodes, found by intersecting their sorted
//! neighbour lists instead of expanding one and checking the other. A cycle's last two hops
//! (`(x)-[r1]->(z)-[r2]->(y)` with `x` and `y` bound: a triangle's third node, a 4-cycle's
//! fourth, a diamond's second middle node) become one operator whose work is the smaller of
//! the two lists per row (merge, or binary searches when one is much longer), not the
//! expansion of `x` followed by a filter.
//!
//! Output: the input's columns, then `open`'s relationship and node columns, then `close`'s
//! relationship columns (the order the two hops gave them).

use super::csr_expand::CsrExpand;
use super::UnaryNode;
use datafusion::common::{DFSchema, DFSchemaRef, Result};
use datafusion::logical_expr::{EmptyRelation, LogicalPlan};
use std::collections::HashSet;
use std::fmt;
use std::hash::Hash;
use std::sync::Arc;

#[derive(Debug, Clone)]
pub struct CsrIntersect {
    pub input: LogicalPlan,
    /// The hop from a bound node (`open.key`) to the new node, with its filters.
    pub open: CsrExpand,
    /// The hop from the new node onto the other bound node (`close.close`).
    pub close: CsrExpand,
    pub schema: DFSchemaRef,
}

impl CsrIntersect {
    /// The two hops' own inputs are dropped (only their descriptions are kept).
    pub fn try_new(input: LogicalPlan, open: &CsrExpand, close: &CsrExpand) -> Result<Self> {
        if close.close.is_none() || open.close.is_some() {
            return datafusion::common::internal_err!("CsrIntersect: not a closing pair");
        }
        let none = LogicalPlan::EmptyRelation(EmptyRelation {
            produce_one_row: false,
            schema: Arc::new(DFSchema::empty()),
        });
        let mut n = Self {
            input,
            open: open.with_input(none.clone())?,
            close: close.with_input(none)?,
            schema: Arc::new(DFSchema::empty()),
        };
        n.schema = n.compute_schema()?;
        Ok(n)
    }

    fn compute_schema(&self) -> Result<DFSchemaRef> {
        let extra = self
            .open
            .edge
            .output()
            .chain(self.open.target.output())
            .chain(self.close.edge.output());
        super::extended_schema(&self.input, extra.map(|(_, o, t)| (o, t)))
    }

    /// The bound node the closing hop ends at.
    pub fn other(&self) -> &str {
        self.close.close.as_deref().expect("a closing hop")
    }

    fn sig(&self) -> impl Hash + PartialOrd + '_ {
        (&self.input, &self.open, &self.close)
    }
}

super::node_identity!(CsrIntersect);

impl UnaryNode for CsrIntersect {
    const NAME: &'static str = "CsrIntersect";

    fn input(&self) -> &LogicalPlan {
        &self.input
    }

    fn output_schema(&self) -> &DFSchemaRef {
        &self.schema
    }

    fn barrier_columns(&self) -> HashSet<String> {
        let mut c = self.open.produced();
        c.extend(self.close.produced());
        c
    }

    fn explain(&self, f: &mut fmt::Formatter) -> fmt::Result {
        write!(f, "CsrIntersect: [")?;
        self.open.explain(f)?;
        write!(f, "] and [")?;
        self.close.explain(f)?;
        write!(f, "]")
    }

    fn with_input(&self, input: LogicalPlan) -> Result<Self> {
        let mut n = self.clone();
        n.input = input;
        n.schema = n.compute_schema()?;
        Ok(n)
    }

    fn needed_input_columns(&self, output_columns: &[usize]) -> Option<Vec<Vec<usize>>> {
        let keys = [self.open.key.as_str(), self.other()];
        super::input_columns_needed(&self.input, output_columns, &keys)
    }
}

super::unary_node!(CsrIntersect);
