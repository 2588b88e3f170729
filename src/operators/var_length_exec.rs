//! `VarLengthExec`: the physical variable-length traversal. Depth-first over the CSR(s), a
//! relationship at most once per path, one output row per path within the length bounds; in
//! distinct mode, breadth-first with a visited bitmap, one row per reachable end node.

use super::var_length::{encode_eid, VarHop, EID_TABLE_SHIFT};
use crate::csr::{as_i64, NodeKeys, TableColumns};
use arrow::array::{Array, ArrayRef, ListArray, RecordBatch, UInt32Array, UInt64Array};
use arrow::buffer::OffsetBuffer;
use arrow::datatypes::{Field, SchemaRef};
use datafusion::common::Result;
use datafusion::execution::TaskContext;
use datafusion::physical_plan::metrics::{ExecutionPlanMetricsSet, MetricBuilder, MetricsSet};
use datafusion::physical_plan::{
    DisplayAs, DisplayFormatType, ExecutionPlan, PlanProperties, SendableRecordBatchStream,
};
use std::fmt;
use std::sync::Arc;

#[derive(Debug)]
pub struct TraversalSpec {
    pub key_idx: usize,
    pub key_name: String,
    pub hops: Vec<VarHop>,
    /// Row ids of each hop's table (as u64), for the path's edge ids.
    pub rowids: Vec<Arc<UInt64Array>>,
    /// Per label slot, the hops that leave it.
    pub from_slot: Vec<Vec<usize>>,
    pub start: usize,
    pub end: usize,
    pub min: u64,
    pub max: Option<u64>,
    pub distinct: bool,
    pub near_keys: Arc<NodeKeys>,
    pub target: Arc<TableColumns>,
    pub target_take: Vec<String>,
    pub target_out: Vec<String>,
    pub target_var: String,
    /// For EXPLAIN: types, edges, walk.
    pub display: String,
}

#[derive(Debug)]
pub struct VarLengthExec {
    input: Arc<dyn ExecutionPlan>,
    spec: Arc<TraversalSpec>,
    schema: SchemaRef,
    cache: Arc<PlanProperties>,
    metrics: ExecutionPlanMetricsSet,
    /// A LIMIT absorbed from above (per partition): stop after this many rows.
    fetch: Option<usize>,
    /// Whether a LIMIT may be absorbed (`RuleSwitches::absorb_limits`).
    absorbs_limits: bool,
}

impl VarLengthExec {
    /// Whether a LIMIT above may be absorbed (`fetch`).
    pub fn absorbing_limits(mut self, yes: bool) -> Self {
        self.absorbs_limits = yes;
        self
    }

    /// The same operator over `input` (properties follow it: its partitioning may differ),
    /// with fresh metrics and `fetch`.
    fn rebuilt(&self, input: Arc<dyn ExecutionPlan>, fetch: Option<usize>) -> Self {
        Self {
            cache: super::streaming_properties(&self.schema, &input),
            input,
            spec: self.spec.clone(),
            schema: self.schema.clone(),
            metrics: ExecutionPlanMetricsSet::new(),
            fetch,
            absorbs_limits: self.absorbs_limits,
        }
    }

    pub fn try_new(
        input: Arc<dyn ExecutionPlan>,
        spec: TraversalSpec,
        schema: SchemaRef,
    ) -> Result<Self> {
        if spec.key_idx >= input.schema().fields().len() {
            return datafusion::common::internal_err!("VarLengthExec: key column out of range");
        }
        let cache = super::streaming_properties(&schema, &input);
        Ok(Self {
            input,
            spec: Arc::new(spec),
            schema,
            cache,
            metrics: ExecutionPlanMetricsSet::new(),
            fetch: None,
            absorbs_limits: true,
        })
    }
}

impl TraversalSpec {
    /// Every path from `start` (as the sequence of (hop, edge row)) whose length is within
    /// bounds and that ends at the end label; `emit(end, path)`. Returns the number of edges
    /// examined.
    /// `emit` returns false to stop early (a LIMIT has its rows).
    pub fn paths(&self, start: u32, emit: &mut dyn FnMut(u32, &[(usize, u32)]) -> bool) -> usize {
        let max = self.max.unwrap_or(u64::MAX) as usize;
        let min = self.min as usize;
        if min == 0 && self.start == self.end && !emit(start, &[]) {
            return 0;
        }
        if max == 0 {
            return 0;
        }
        // Frame: label slot, node, index into the slot's hops, position in that hop's range.
        let mut stack: Vec<(usize, u32, usize, usize)> = vec![(self.start, start, 0, 0)];
        let mut path: Vec<(usize, u32)> = Vec::new();
        let mut examined = 0;
        while let Some(frame) = stack.last_mut() {
            let (slot, node, hi, pos) = *frame;
            let Some(&h) = self.from_slot[slot].get(hi) else {
                stack.pop();
                path.pop();
                continue;
            };
            let hop = &self.hops[h];
            let csr = hop.index.direction(hop.reverse);
            let range = csr.range(node);
            let e = range.start + pos;
            if e >= range.end {
                *frame = (slot, node, hi + 1, 0);
                continue;
            }
            *frame = (slot, node, hi, pos + 1);
            examined += 1;
            let (nbr, row) = (csr.neighbors[e], csr.edge_rows[e]);
            // Never a relationship twice in one path (a self-loop walked both ways is one).
            if (hop.skip_self_loops && nbr == node)
                || path
                    .iter()
                    .any(|&(g, r)| r == row && self.hops[g].rel == hop.rel)
            {
                continue;
            }
            path.push((h, row));
            if path.len() >= min && hop.to == self.end && !emit(nbr, &path) {
                return examined;
            }
            if path.len() < max {
                stack.push((hop.to, nbr, 0, 0));
            } else {
                path.pop();
            }
        }
        examined
    }

    /// Distinct end nodes reachable within the bounds (directed, `min <= 1`), breadth-first
    /// with a visited bitmap per label.
    pub fn reachable(&self, start: u32, emit: &mut dyn FnMut(u32) -> bool) -> usize {
        let max = self.max.unwrap_or(u64::MAX);
        let mut visited = vec![roaring::RoaringBitmap::new(); self.from_slot.len()];
        if self.min == 0 && self.start == self.end {
            visited[self.start].insert(start);
            if !emit(start) {
                return 0;
            }
        }
        let mut frontier = vec![(self.start, start)];
        let mut depth = 0;
        let mut examined = 0;
        while !frontier.is_empty() && depth < max {
            depth += 1;
            let mut next = Vec::new();
            for &(slot, n) in &frontier {
                for &h in &self.from_slot[slot] {
                    let hop = &self.hops[h];
                    let csr = hop.index.direction(hop.reverse);
                    for e in csr.range(n) {
                        examined += 1;
                        let m = csr.neighbors[e];
                        if visited[hop.to].insert(m) {
                            if hop.to == self.end && !emit(m) {
                                return examined;
                            }
                            next.push((hop.to, m));
                        }
                    }
                }
            }
            frontier = next;
        }
        examined
    }

    /// Expands `batch`, stopping once `limit` rows are out.
    fn expand(
        &self,
        batch: &RecordBatch,
        schema: &SchemaRef,
        edges_seen: &datafusion::physical_plan::metrics::Count,
        limit: usize,
    ) -> Result<RecordBatch> {
        let ext = |e: crate::Error| datafusion::error::DataFusionError::External(Box::new(e));
        let keys = as_i64(batch.column(self.key_idx).as_ref()).map_err(ext)?;
        let (mut rows, mut ends) = (Vec::new(), Vec::new());
        let mut offsets: Vec<i32> = vec![0];
        let mut values: Vec<u64> = Vec::new();
        let mut too_big = false;
        for i in 0..batch.num_rows() {
            if rows.len() >= limit {
                break;
            }
            if keys.is_null(i) {
                continue;
            }
            let Some(o) = self.near_keys.ordinal(keys.value(i)) else {
                continue;
            };
            let n = if self.distinct {
                self.reachable(o, &mut |end| {
                    rows.push(i as u32);
                    ends.push(end);
                    offsets.push(values.len() as i32);
                    rows.len() < limit
                })
            } else {
                self.paths(o, &mut |end, path| {
                    rows.push(i as u32);
                    ends.push(end);
                    values.extend(path.iter().map(|&(h, r)| {
                        let id = self.rowids[h].value(r as usize);
                        too_big |= id >= 1 << EID_TABLE_SHIFT;
                        encode_eid(self.hops[h].rel, id)
                    }));
                    offsets.push(values.len() as i32);
                    rows.len() < limit
                })
            };
            edges_seen.add(n);
        }
        if too_big {
            // The table goes in the top bits of a path's edge ids.
            return Err(datafusion::error::DataFusionError::Execution(format!(
                "row ids of 2^{EID_TABLE_SHIFT} or more are not supported in variable-length paths"
            )));
        }
        let count = rows.len();
        let rows = UInt32Array::from(rows);
        let mut cols: Vec<ArrayRef> = batch
            .columns()
            .iter()
            .map(|a| arrow::compute::take(a.as_ref(), &rows, None))
            .collect::<std::result::Result<_, _>>()?;
        let list = ListArray::try_new(
            Arc::new(Field::new_list_field(
                arrow::datatypes::DataType::UInt64,
                true,
            )),
            OffsetBuffer::new(offsets.into()),
            Arc::new(UInt64Array::from(values)),
            None,
        )?;
        cols.push(Arc::new(list));
        let ends = UInt32Array::from(ends);
        let fields = schema.fields();
        for name in &self.target_take {
            let a = self.target.get(name).map_err(ext)?;
            let t = arrow::compute::take(a.as_ref(), &ends, None)?;
            let want = fields[cols.len()].data_type();
            cols.push(if t.data_type() == want {
                t
            } else {
                arrow::compute::cast(&t, want)?
            });
        }
        Ok(RecordBatch::try_new_with_options(
            schema.clone(),
            cols,
            &arrow::array::RecordBatchOptions::new().with_row_count(Some(count)),
        )?)
    }
}

impl DisplayAs for VarLengthExec {
    fn fmt_as(&self, t: DisplayFormatType, f: &mut fmt::Formatter) -> fmt::Result {
        let s = &self.spec;
        match t {
            DisplayFormatType::Default | DisplayFormatType::Verbose => {
                write!(
                    f,
                    "VarLengthExec: key={}, {}{}, take={}[{}]",
                    s.key_name,
                    s.display,
                    if s.distinct {
                        ", distinct ends (bfs)"
                    } else {
                        ""
                    },
                    s.target_var,
                    s.target_out.join(", ")
                )?;
                if let Some(n) = self.fetch {
                    write!(f, ", fetch={n}")?;
                }
                Ok(())
            }
            DisplayFormatType::TreeRender => write!(f, "key={}", s.key_name),
        }
    }
}

impl ExecutionPlan for VarLengthExec {
    fn name(&self) -> &str {
        "VarLengthExec"
    }

    fn properties(&self) -> &Arc<PlanProperties> {
        &self.cache
    }

    fn children(&self) -> Vec<&Arc<dyn ExecutionPlan>> {
        vec![&self.input]
    }

    fn with_new_children(
        self: Arc<Self>,
        mut children: Vec<Arc<dyn ExecutionPlan>>,
    ) -> Result<Arc<dyn ExecutionPlan>> {
        Ok(Arc::new(self.rebuilt(children.swap_remove(0), self.fetch)))
    }

    fn fetch(&self) -> Option<usize> {
        self.fetch
    }

    /// A LIMIT above (without ORDER BY: any rows will do) stops the traversal early.
    fn with_fetch(&self, limit: Option<usize>) -> Option<Arc<dyn ExecutionPlan>> {
        self.absorbs_limits
            .then(|| Arc::new(self.rebuilt(self.input.clone(), limit)) as Arc<dyn ExecutionPlan>)
    }

    fn maintains_input_order(&self) -> Vec<bool> {
        vec![true]
    }

    fn execute(
        &self,
        partition: usize,
        context: Arc<TaskContext>,
    ) -> Result<SendableRecordBatchStream> {
        let input = self.input.execute(partition, context)?;
        let out_rows = MetricBuilder::new(&self.metrics).output_rows(partition);
        let edges = MetricBuilder::new(&self.metrics).counter("edges_scanned", partition);
        let spec = self.spec.clone();
        let schema = self.schema.clone();
        let out_schema = schema.clone();
        Ok(super::limited_stream(
            input,
            out_schema,
            self.fetch,
            move |b, limit| {
                let r = spec.expand(b, &schema, &edges, limit.unwrap_or(usize::MAX))?;
                out_rows.add(r.num_rows());
                Ok(r)
            },
        ))
    }

    fn metrics(&self) -> Option<MetricsSet> {
        Some(self.metrics.clone_inner())
    }
}
