//! `VarLengthExec`: the physical variable-length traversal. Depth-first over the CSR(s), a
//! relationship at most once per path, one output row per path within the length bounds; in
//! distinct mode, breadth-first with a visited bitmap, one row per reachable end node.

use super::csr_expand::CsrData;
use crate::csr::as_i64;
use arrow::array::{Array, ArrayRef, AsArray, ListArray, RecordBatch, UInt32Array, UInt64Array};
use arrow::buffer::OffsetBuffer;
use arrow::datatypes::{Field, SchemaRef, UInt64Type};
use datafusion::common::Result;
use datafusion::execution::TaskContext;
use datafusion::physical_plan::metrics::{ExecutionPlanMetricsSet, MetricBuilder, MetricsSet};
use datafusion::physical_plan::stream::RecordBatchStreamAdapter;
use datafusion::physical_plan::{
    DisplayAs, DisplayFormatType, ExecutionPlan, PlanProperties, SendableRecordBatchStream,
};
use futures::StreamExt;
use std::fmt;
use std::sync::Arc;

#[derive(Debug)]
pub struct TraversalSpec {
    pub key_idx: usize,
    pub key_name: String,
    pub rel_type: String,
    pub orientations: Vec<bool>,
    pub min: u64,
    pub max: Option<u64>,
    pub distinct: bool,
    pub data: CsrData,
    /// The relationship table's row-id column, for the path's edge ids.
    pub rowid_col: String,
    pub target_take: Vec<String>,
    pub target_out: Vec<String>,
    pub target_var: String,
}

#[derive(Debug)]
pub struct VarLengthExec {
    input: Arc<dyn ExecutionPlan>,
    spec: Arc<TraversalSpec>,
    schema: SchemaRef,
    cache: Arc<PlanProperties>,
    metrics: ExecutionPlanMetricsSet,
}

impl VarLengthExec {
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
        })
    }
}

impl TraversalSpec {
    /// Every path from `start` (as the sequence of edge rows) whose length is within bounds;
    /// `emit(end, edge_rows)`. Returns the number of edges examined.
    pub fn paths(&self, start: u32, emit: &mut dyn FnMut(u32, &[u32])) -> usize {
        let max = self.max.unwrap_or(u64::MAX) as usize;
        let min = self.min as usize;
        if min == 0 {
            emit(start, &[]);
        }
        if max == 0 {
            return 0;
        }
        let both = self.orientations.len() == 2;
        // Frame: node, orientation index, position in that orientation's edge range.
        let mut stack: Vec<(u32, usize, usize)> = vec![(start, 0, 0)];
        let mut path: Vec<u32> = Vec::new();
        let mut examined = 0;
        while let Some(frame) = stack.last_mut() {
            let (node, oi, pos) = *frame;
            if oi >= self.orientations.len() {
                stack.pop();
                path.pop();
                continue;
            }
            let csr = self.data.index.direction(self.orientations[oi]);
            let range = csr.range(node);
            let e = range.start + pos;
            if e >= range.end {
                *frame = (node, oi + 1, 0);
                continue;
            }
            *frame = (node, oi, pos + 1);
            examined += 1;
            let (nbr, row) = (csr.neighbors[e], csr.edge_rows[e]);
            // Undirected: a self-loop once; and never an edge twice in one path.
            if (both && oi == 1 && nbr == node) || path.contains(&row) {
                continue;
            }
            path.push(row);
            if path.len() >= min {
                emit(nbr, &path);
            }
            if path.len() < max {
                stack.push((nbr, 0, 0));
            } else {
                path.pop();
            }
        }
        examined
    }

    /// Distinct end nodes reachable within the bounds (directed, `min <= 1`), breadth-first.
    pub fn reachable(&self, start: u32, emit: &mut dyn FnMut(u32)) -> usize {
        let max = self.max.unwrap_or(u64::MAX);
        let mut visited = roaring::RoaringBitmap::new();
        if self.min == 0 {
            visited.insert(start);
            emit(start);
        }
        let mut frontier = vec![start];
        let mut depth = 0;
        let mut examined = 0;
        while !frontier.is_empty() && depth < max {
            depth += 1;
            let mut next = Vec::new();
            for &n in &frontier {
                for &rev in &self.orientations {
                    let csr = self.data.index.direction(rev);
                    for e in csr.range(n) {
                        examined += 1;
                        let m = csr.neighbors[e];
                        if visited.insert(m) {
                            emit(m);
                            next.push(m);
                        }
                    }
                }
            }
            frontier = next;
        }
        examined
    }

    fn expand(
        &self,
        batch: &RecordBatch,
        schema: &SchemaRef,
        edges_seen: &datafusion::physical_plan::metrics::Count,
    ) -> Result<RecordBatch> {
        let ext = |e: crate::Error| datafusion::error::DataFusionError::External(Box::new(e));
        let keys = as_i64(batch.column(self.key_idx).as_ref()).map_err(ext)?;
        let rowids = self.data.edges.get(&self.rowid_col).map_err(ext)?;
        let rowids = arrow::compute::cast(&rowids, &arrow::datatypes::DataType::UInt64)?;
        let rowids = rowids.as_primitive::<UInt64Type>();
        let (mut rows, mut ends) = (Vec::new(), Vec::new());
        let mut offsets: Vec<i32> = vec![0];
        let mut values: Vec<u64> = Vec::new();
        for i in 0..batch.num_rows() {
            if keys.is_null(i) {
                continue;
            }
            let Some(o) = self.data.near_keys.ordinal(keys.value(i)) else {
                continue;
            };
            let n = if self.distinct {
                self.reachable(o, &mut |end| {
                    rows.push(i as u32);
                    ends.push(end);
                    offsets.push(values.len() as i32);
                })
            } else {
                self.paths(o, &mut |end, path| {
                    rows.push(i as u32);
                    ends.push(end);
                    values.extend(path.iter().map(|&r| rowids.value(r as usize)));
                    offsets.push(values.len() as i32);
                })
            };
            edges_seen.add(n);
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
            let a = self.data.target.get(name).map_err(ext)?;
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
                let max = s.max.map(|m| m.to_string()).unwrap_or_default();
                write!(
                    f,
                    "VarLengthExec: key={}, type={}, length={}..{max}, edges={}{}, take={}[{}]",
                    s.key_name,
                    s.rel_type,
                    s.min,
                    s.data.index.table_rows,
                    if s.distinct {
                        ", distinct ends (bfs)"
                    } else {
                        ""
                    },
                    s.target_var,
                    s.target_out.join(", ")
                )
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
        let input = children.swap_remove(0);
        Ok(Arc::new(Self {
            cache: super::streaming_properties(&self.schema, &input),
            input,
            spec: self.spec.clone(),
            schema: self.schema.clone(),
            metrics: ExecutionPlanMetricsSet::new(),
        }))
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
        let stream = input.map(move |b| {
            b.and_then(|b| {
                let r = spec.expand(&b, &schema, &edges)?;
                out_rows.add(r.num_rows());
                Ok(r)
            })
        });
        Ok(Box::pin(RecordBatchStreamAdapter::new(out_schema, stream)))
    }

    fn metrics(&self) -> Option<MetricsSet> {
        Some(self.metrics.clone_inner())
    }
}
