//! `CsrIntersect`: a node adjacent to two or more bound nodes, found by intersecting their
//! sorted neighbour lists instead of expanding one and checking the others. A cycle's last two hops
//! (`(x)-[r1]->(z)-[r2]->(y)` with `x` and `y` bound: a triangle's third node, a 4-cycle's
//! fourth, a diamond's second middle node) become one operator whose work is the smaller of
//! the two lists per row (merge, or binary searches when one is much longer), not the
//! expansion of `x` followed by a filter. More closing hops (`(z)-[r3]->(w)`, `w` bound: a
//! 4-clique's last node) intersect one more list each, in the same pass.
//!
//! Output: the input's columns, then `open`'s relationship and node columns, then each closing
//! hop's relationship columns (the order the hops gave them).
//!
//! Counting (`count`): the input's columns and, per input row, how many of its matches pass
//! a filter over those columns (rows without one dropped). The rows of the matches are never
//! built; only the columns the filter reads are taken, for the pairs found.

use super::csr_expand::CsrExpand;
use super::UnaryNode;
use datafusion::common::{DFSchema, DFSchemaRef, Result};
use datafusion::logical_expr::{EmptyRelation, Expr, LogicalPlan};
use std::collections::HashSet;
use std::fmt;
use std::hash::Hash;
use std::sync::Arc;

#[derive(Clone)]
pub struct CsrIntersect {
    pub input: LogicalPlan,
    /// The hop from a bound node (`open.key`) to the new node, with its filters.
    pub open: CsrExpand,
    /// The hops from the new node onto the other bound nodes (`close`), one or more.
    pub closes: Vec<CsrExpand>,
    /// Count the matches per input row instead of producing them.
    pub count: Option<CycleCount>,
    pub schema: DFSchemaRef,
}

/// A `CsrIntersect` in counting mode: the count's column, and the filter a match must pass
/// (over the input's and the hops' columns; the hops take exactly the ones it reads).
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd)]
pub struct CycleCount {
    pub output: String,
    pub filter: Option<Expr>,
}

impl CsrIntersect {
    /// The hops' own inputs are dropped (only their descriptions are kept).
    pub fn try_new(input: LogicalPlan, open: &CsrExpand, closes: &[&CsrExpand]) -> Result<Self> {
        if closes.is_empty() || closes.iter().any(|c| c.close.is_none()) || open.close.is_some() {
            return datafusion::common::internal_err!("CsrIntersect: not a closing pair");
        }
        let none = LogicalPlan::EmptyRelation(EmptyRelation {
            produce_one_row: false,
            schema: Arc::new(DFSchema::empty()),
        });
        let mut n = Self {
            input,
            open: open.with_input(none.clone())?,
            closes: closes
                .iter()
                .map(|c| c.with_input(none.clone()))
                .collect::<Result<_>>()?,
            count: None,
            schema: Arc::new(DFSchema::empty()),
        };
        n.schema = n.compute_schema()?;
        Ok(n)
    }

    /// Counts the matches of each input row passing `filter` into `output`. The hops take
    /// only the columns `filter` reads.
    pub fn counting(mut self, output: String, filter: Option<Expr>) -> Result<Self> {
        let read: HashSet<String> = filter
            .iter()
            .flat_map(|f| f.column_refs())
            .map(|c| c.name.clone())
            .collect();
        let closing = self.closes.iter_mut().map(|c| &mut c.edge);
        for take in [&mut self.open.edge, &mut self.open.target]
            .into_iter()
            .chain(closing)
        {
            take.take = (0..take.all.len())
                .filter(|&i| read.contains(&take.all[i].1))
                .collect();
        }
        self.count = Some(CycleCount { output, filter });
        self.schema = self.compute_schema()?;
        Ok(self)
    }

    /// The columns a match has in counting mode, as the filter reads them: the input columns
    /// it reads (their indices), then the hops' taken columns.
    pub fn match_schema(&self) -> Result<(Vec<usize>, DFSchemaRef)> {
        let Some(CycleCount {
            filter: Some(f), ..
        }) = &self.count
        else {
            return Ok((vec![], Arc::new(DFSchema::empty())));
        };
        let read: HashSet<&str> = f
            .column_refs()
            .into_iter()
            .map(|c| c.name.as_str())
            .collect();
        let input = self.input.schema();
        let cols: Vec<usize> = (0..input.fields().len())
            .filter(|&i| read.contains(input.field(i).name().as_str()))
            .collect();
        let mut fields: Vec<arrow::datatypes::Field> = cols
            .iter()
            .map(|&i| input.field(i).as_ref().clone())
            .collect();
        fields.extend(
            self.taken()
                .map(|(_, o, t)| arrow::datatypes::Field::new(o, t.clone(), true)),
        );
        let schema = arrow::datatypes::Schema::new(fields);
        Ok((cols, Arc::new(DFSchema::try_from(schema)?)))
    }

    /// The hops' taken columns, in output order.
    fn taken(&self) -> impl Iterator<Item = &(String, String, arrow::datatypes::DataType)> {
        let closing = self.closes.iter().flat_map(|c| c.edge.output());
        self.open
            .edge
            .output()
            .chain(self.open.target.output())
            .chain(closing)
    }

    fn compute_schema(&self) -> Result<DFSchemaRef> {
        if let Some(c) = &self.count {
            let t = arrow::datatypes::DataType::Int64;
            return super::extended_schema(&self.input, [(&c.output, &t)]);
        }
        super::extended_schema(&self.input, self.taken().map(|(_, o, t)| (o, t)))
    }

    /// The bound nodes the closing hops end at.
    pub fn others(&self) -> impl Iterator<Item = &str> {
        self.closes
            .iter()
            .map(|c| c.close.as_deref().expect("a closing hop"))
    }

    fn sig(&self) -> impl Hash + PartialOrd + '_ {
        (&self.input, &self.open, &self.closes, &self.count)
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
        c.extend(self.closes.iter().flat_map(|h| h.produced()));
        c.extend(self.count.iter().map(|n| n.output.clone()));
        c
    }

    fn explain(&self, f: &mut fmt::Formatter) -> fmt::Result {
        write!(f, "CsrIntersect: [")?;
        self.open.explain(f)?;
        for c in &self.closes {
            write!(f, "] and [")?;
            c.explain(f)?;
        }
        write!(f, "]")?;
        match &self.count {
            Some(CycleCount {
                output,
                filter: Some(p),
            }) => write!(f, " counted where {p} -> {output}"),
            Some(CycleCount { output, .. }) => write!(f, " counted -> {output}"),
            None => Ok(()),
        }
    }

    fn with_input(&self, input: LogicalPlan) -> Result<Self> {
        let mut n = self.clone();
        n.input = input;
        n.schema = n.compute_schema()?;
        Ok(n)
    }

    fn needed_input_columns(&self, output_columns: &[usize]) -> Option<Vec<Vec<usize>>> {
        let mut keys: Vec<&str> = std::iter::once(self.open.key.as_str())
            .chain(self.others())
            .collect();
        let (read, _) = self.match_schema().ok()?;
        let input = self.input.schema();
        keys.extend(read.iter().map(|&i| input.field(i).name().as_str()));
        super::input_columns_needed(&self.input, output_columns, &keys)
    }
}

super::unary_node!(CsrIntersect);

super::explain_debug!(CsrIntersect);
