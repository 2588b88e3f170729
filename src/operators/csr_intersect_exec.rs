//! `CsrIntersectExec`: per input row, the nodes adjacent to both bound nodes, by intersecting
//! two neighbour runs sorted by ordinal (a merge, or binary searches of the shorter run's
//! values in the longer when their lengths differ widely). Multi-edges give a row per pair
//! of edges; filters apply to the pairs found, before any column is taken.
//!
//! Counting ([`MatchCount`]): each input row once, with how many of its matches pass a filter
//! over the few columns it reads (taken for the matches only); rows without one are dropped.

use super::csr_expand::CsrData;
use super::csr_expand_exec::{retain, store_err, take_all, take_into, ExpandSpec};
use crate::csr::as_i64;
use arrow::array::{Array, RecordBatch, UInt32Array};
use arrow::datatypes::SchemaRef;
use datafusion::common::Result;
use datafusion::execution::TaskContext;
use datafusion::physical_expr::PhysicalExpr;
use datafusion::physical_plan::metrics::{ExecutionPlanMetricsSet, MetricBuilder, MetricsSet};
use datafusion::physical_plan::{
    DisplayAs, DisplayFormatType, ExecutionPlan, PlanProperties, SendableRecordBatchStream,
};
use std::fmt;
use std::sync::Arc;

/// Counting mode: the filter a match must pass, over the input columns `read` then the hops'
/// taken columns (as `schema`).
#[derive(Debug)]
pub struct MatchCount {
    pub read: Vec<usize>,
    pub schema: SchemaRef,
    pub filter: Option<Arc<dyn PhysicalExpr>>,
}

#[derive(Debug)]
pub struct CsrIntersectExec {
    input: Arc<dyn ExecutionPlan>,
    /// From the first bound node (`key_idx`) to the new node.
    open: Arc<ExpandSpec>,
    /// From the new node onto the second bound node (`close_idx`); no target columns.
    close: Arc<ExpandSpec>,
    count: Option<Arc<MatchCount>>,
    schema: SchemaRef,
    cache: Arc<PlanProperties>,
    metrics: ExecutionPlanMetricsSet,
}

impl CsrIntersectExec {
    pub fn try_new(
        input: Arc<dyn ExecutionPlan>,
        open: ExpandSpec,
        close: ExpandSpec,
        schema: SchemaRef,
    ) -> Result<Self> {
        let n_in = input.schema().fields().len();
        let ok = open.key_idx < n_in
            && open.close_idx.is_none()
            && close.close_idx.is_some_and(|c| c < n_in)
            && close.target_take.is_empty()
            && close.target_filter.is_none();
        if !ok {
            return datafusion::common::internal_err!("CsrIntersectExec: bad hops");
        }
        let cache = super::streaming_properties(&schema, &input);
        Ok(Self {
            input,
            open: Arc::new(open),
            close: Arc::new(close),
            count: None,
            schema,
            cache,
            metrics: ExecutionPlanMetricsSet::new(),
        })
    }

    /// Counts the matches per input row instead (`schema`: the input's and an Int64).
    pub fn counting(mut self, count: MatchCount) -> Result<Self> {
        let n_in = self.input.schema().fields().len();
        if self.schema.fields().len() != n_in + 1 || count.read.iter().any(|&i| i >= n_in) {
            return datafusion::common::internal_err!("CsrIntersectExec: bad count");
        }
        self.count = Some(Arc::new(count));
        Ok(self)
    }
}

/// The run of node `x` over a hop's orientations (each walked `reversed` when true), as
/// (neighbours, edge rows) sorted by neighbour: the CSR's own slices for one orientation,
/// else the runs merged into the buffers (a self-loop seen once).
fn run<'a>(
    data: &'a CsrData,
    orientations: &[bool],
    reversed: bool,
    x: u32,
    buf: &'a mut Vec<(u32, u32)>,
    split: &'a mut (Vec<u32>, Vec<u32>),
) -> (&'a [u32], &'a [u32]) {
    if let [rev] = orientations {
        let csr = data.index.direction(*rev != reversed);
        let r = csr.range(x);
        return (&csr.neighbors[r.clone()], &csr.edge_rows[r]);
    }
    buf.clear();
    for (j, &rev) in orientations.iter().enumerate() {
        let csr = data.index.direction(rev != reversed);
        for e in csr.range(x) {
            let y = csr.neighbors[e];
            if !(j == 1 && y == x) {
                buf.push((y, csr.edge_rows[e]));
            }
        }
    }
    buf.sort_unstable();
    split.0.clear();
    split.1.clear();
    split.0.extend(buf.iter().map(|p| p.0));
    split.1.extend(buf.iter().map(|p| p.1));
    (&split.0, &split.1)
}

struct Counters {
    edges_scanned: datafusion::physical_plan::metrics::Count,
    output_rows: datafusion::physical_plan::metrics::Count,
}

impl CsrIntersectExec {
    fn intersect(
        open: &ExpandSpec,
        close: &ExpandSpec,
        count: Option<&MatchCount>,
        batch: &RecordBatch,
        schema: &SchemaRef,
        c: &Counters,
    ) -> Result<RecordBatch> {
        let keys = as_i64(batch.column(open.key_idx).as_ref()).map_err(store_err)?;
        let other_idx = close.close_idx.expect("checked in try_new");
        let others = as_i64(batch.column(other_idx).as_ref()).map_err(store_err)?;
        let (mut rows, mut nodes, mut open_rows, mut close_rows) =
            (Vec::new(), Vec::new(), Vec::new(), Vec::new());
        let (mut buf_a, mut buf_b) = (Vec::new(), Vec::new());
        let (mut split_a, mut split_b) = (Default::default(), Default::default());
        for i in 0..batch.num_rows() {
            if keys.is_null(i) || others.is_null(i) {
                continue;
            }
            let x = open.data.near_keys.ordinal(keys.value(i));
            let y = close.data.far_keys.ordinal(others.value(i));
            let (Some(x), Some(y)) = (x, y) else { continue };
            let (an, ae) = run(
                &open.data,
                &open.orientations,
                false,
                x,
                &mut buf_a,
                &mut split_a,
            );
            // The closing hop walked backwards from the node it ends at.
            let (bn, be) = run(
                &close.data,
                &close.orientations,
                true,
                y,
                &mut buf_b,
                &mut split_b,
            );
            c.edges_scanned.add(an.len().min(bn.len()));
            crate::csr::matching_runs(an, bn, |p, rp, q, rq| {
                for p in p..p + rp {
                    for &e in &be[q..q + rq] {
                        rows.push(i as u32);
                        nodes.push(an[p]);
                        open_rows.push(ae[p]);
                        close_rows.push(e);
                    }
                }
            });
        }
        let filters = [
            (&open.edge_filter, &open.data.edges, &open_rows),
            (&close.edge_filter, &close.data.edges, &close_rows),
            (&open.target_filter, &open.data.target, &nodes),
        ];
        let mut keep: Option<Vec<bool>> = None;
        for (f, store, ids) in filters {
            if let Some(f) = f {
                let mask = f.mask(store, &UInt32Array::from(ids.clone()))?;
                match &mut keep {
                    Some(k) => k.iter_mut().zip(mask).for_each(|(k, m)| *k &= m),
                    None => keep = Some(mask),
                }
            }
        }
        if let Some(keep) = keep {
            retain(
                &keep,
                [&mut rows, &mut nodes, &mut open_rows, &mut close_rows],
            );
        }
        if let Some(m) = count {
            if let Some(f) = &m.filter {
                let read: Vec<_> = m.read.iter().map(|&i| batch.column(i).clone()).collect();
                let found = Self::columns(
                    open,
                    close,
                    &read,
                    &m.schema,
                    rows.clone(),
                    nodes,
                    open_rows,
                    close_rows,
                )?;
                let ok = f.evaluate(&found)?.into_array(found.num_rows())?;
                let ok = arrow::array::as_boolean_array(&ok);
                let keep: Vec<bool> = (0..ok.len())
                    .map(|i| ok.is_valid(i) && ok.value(i))
                    .collect();
                retain(&keep, [&mut rows]);
            }
            return Self::counts(batch, &rows, schema, c);
        }
        c.output_rows.add(rows.len());
        Self::columns(
            open,
            close,
            batch.columns(),
            schema,
            rows,
            nodes,
            open_rows,
            close_rows,
        )
    }

    /// The matches' rows: `input`'s columns at `rows`, then the hops' taken columns.
    #[allow(clippy::too_many_arguments)]
    fn columns(
        open: &ExpandSpec,
        close: &ExpandSpec,
        input: &[arrow::array::ArrayRef],
        schema: &SchemaRef,
        rows: Vec<u32>,
        nodes: Vec<u32>,
        open_rows: Vec<u32>,
        close_rows: Vec<u32>,
    ) -> Result<RecordBatch> {
        let n = rows.len();
        let mut cols = take_all(input, &UInt32Array::from(rows))?;
        let fields = schema.fields();
        take_into(
            &mut cols,
            fields,
            &open.data.edges,
            &open.edge_take,
            open_rows,
        )?;
        take_into(
            &mut cols,
            fields,
            &open.data.target,
            &open.target_take,
            nodes,
        )?;
        take_into(
            &mut cols,
            fields,
            &close.data.edges,
            &close.edge_take,
            close_rows,
        )?;
        Ok(RecordBatch::try_new_with_options(
            schema.clone(),
            cols,
            &arrow::array::RecordBatchOptions::new().with_row_count(Some(n)),
        )?)
    }

    /// Each input row with matches (`rows`: a match's input row, ascending), once, with their
    /// number.
    fn counts(
        batch: &RecordBatch,
        rows: &[u32],
        schema: &SchemaRef,
        c: &Counters,
    ) -> Result<RecordBatch> {
        let (mut at, mut n) = (Vec::new(), Vec::new());
        for &r in rows {
            match at.last() {
                Some(&last) if last == r => *n.last_mut().expect("paired") += 1i64,
                _ => {
                    at.push(r);
                    n.push(1i64);
                }
            }
        }
        c.output_rows.add(at.len());
        let mut cols = take_all(batch.columns(), &UInt32Array::from(at))?;
        cols.push(Arc::new(arrow::array::Int64Array::from(n)));
        Ok(RecordBatch::try_new(schema.clone(), cols)?)
    }
}

impl DisplayAs for CsrIntersectExec {
    fn fmt_as(&self, t: DisplayFormatType, f: &mut fmt::Formatter) -> fmt::Result {
        let (o, c) = (&self.open, &self.close);
        match t {
            DisplayFormatType::Default | DisplayFormatType::Verbose => {
                write!(
                    f,
                    "CsrIntersectExec: from={}, take={}[{}], edges={}[{}] and {}[{}]",
                    o.key_name,
                    o.target_var,
                    o.target_out.join(", "),
                    o.edge_var,
                    o.edge_out.join(", "),
                    c.edge_var,
                    c.edge_out.join(", ")
                )?;
                for p in [&o.target_filter, &o.edge_filter, &c.edge_filter]
                    .into_iter()
                    .flatten()
                {
                    write!(f, ", filter={}", p.expr)?;
                }
                match self.count.as_ref().map(|m| &m.filter) {
                    Some(Some(p)) => write!(f, ", counted where {p}"),
                    Some(None) => write!(f, ", counted"),
                    None => Ok(()),
                }
            }
            DisplayFormatType::TreeRender => write!(f, "from={}", o.key_name),
        }
    }
}

impl ExecutionPlan for CsrIntersectExec {
    fn name(&self) -> &str {
        "CsrIntersectExec"
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
            open: self.open.clone(),
            close: self.close.clone(),
            count: self.count.clone(),
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
        let m = &self.metrics;
        let counters = Counters {
            edges_scanned: MetricBuilder::new(m).counter("edges_scanned", partition),
            output_rows: MetricBuilder::new(m).output_rows(partition),
        };
        let (open, close) = (self.open.clone(), self.close.clone());
        let count = self.count.clone();
        let schema = self.schema.clone();
        let elapsed = MetricBuilder::new(m).elapsed_compute(partition);
        Ok(super::limited_stream(
            input,
            self.schema.clone(),
            None,
            elapsed,
            move |b, _| Self::intersect(&open, &close, count.as_deref(), b, &schema, &counters),
        ))
    }

    fn metrics(&self) -> Option<MetricsSet> {
        Some(self.metrics.clone_inner())
    }
}
