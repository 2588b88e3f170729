//! `CsrIntersectExec`: per input row, the nodes adjacent to both bound nodes, by intersecting
//! two neighbour runs sorted by ordinal (a merge, or binary searches of the shorter run's
//! values in the longer when their lengths differ widely). Multi-edges give a row per pair
//! of edges; filters apply to the pairs found, before any column is taken.

use super::csr_expand::CsrData;
use super::csr_expand_exec::ExpandSpec;
use crate::csr::{as_i64, TableColumns};
use arrow::array::{Array, ArrayRef, RecordBatch, UInt32Array};
use arrow::datatypes::SchemaRef;
use datafusion::common::Result;
use datafusion::execution::TaskContext;
use datafusion::physical_plan::metrics::{ExecutionPlanMetricsSet, MetricBuilder, MetricsSet};
use datafusion::physical_plan::{
    DisplayAs, DisplayFormatType, ExecutionPlan, PlanProperties, SendableRecordBatchStream,
};
use std::fmt;
use std::sync::Arc;

#[derive(Debug)]
pub struct CsrIntersectExec {
    input: Arc<dyn ExecutionPlan>,
    /// From the first bound node (`key_idx`) to the new node.
    open: Arc<ExpandSpec>,
    /// From the new node onto the second bound node (`close_idx`); no target columns.
    close: Arc<ExpandSpec>,
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
            schema,
            cache,
            metrics: ExecutionPlanMetricsSet::new(),
        })
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

/// Every pair of positions (i in `a`, j in `b`) holding the same value, both sorted.
fn matches(a: &[u32], b: &[u32], mut out: impl FnMut(usize, usize)) {
    let mut pairs = |i: usize, ri: usize, j: usize, rj: usize| {
        for x in i..i + ri {
            for y in j..j + rj {
                out(x, y);
            }
        }
    };
    let run_at = |s: &[u32], i: usize| s[i..].iter().take_while(|&&v| v == s[i]).count();
    let (small_is_a, small, large) = if a.len() <= b.len() {
        (true, a, b)
    } else {
        (false, b, a)
    };
    if small.len() * 16 < large.len() {
        let (mut i, mut lo) = (0, 0);
        while i < small.len() {
            let v = small[i];
            let ri = run_at(small, i);
            let start = lo + large[lo..].partition_point(|&w| w < v);
            let rj = large[start..].partition_point(|&w| w == v);
            if small_is_a {
                pairs(i, ri, start, rj);
            } else {
                pairs(start, rj, i, ri);
            }
            lo = start + rj;
            i += ri;
        }
        return;
    }
    let (mut i, mut j) = (0, 0);
    while i < a.len() && j < b.len() {
        match a[i].cmp(&b[j]) {
            std::cmp::Ordering::Less => i += 1,
            std::cmp::Ordering::Greater => j += 1,
            std::cmp::Ordering::Equal => {
                let (ri, rj) = (run_at(a, i), run_at(b, j));
                pairs(i, ri, j, rj);
                i += ri;
                j += rj;
            }
        }
    }
}

fn store_err(e: crate::Error) -> datafusion::error::DataFusionError {
    datafusion::error::DataFusionError::External(Box::new(e))
}

/// Keeps the entries of `vs` where `mask` holds.
fn retain(mask: &[bool], vs: [&mut Vec<u32>; 4]) {
    for v in vs {
        let mut k = 0;
        v.retain(|_| {
            k += 1;
            mask[k - 1]
        });
    }
}

struct Counters {
    edges_scanned: datafusion::physical_plan::metrics::Count,
    output_rows: datafusion::physical_plan::metrics::Count,
}

impl CsrIntersectExec {
    fn intersect(
        open: &ExpandSpec,
        close: &ExpandSpec,
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
            matches(an, bn, |p, q| {
                rows.push(i as u32);
                nodes.push(an[p]);
                open_rows.push(ae[p]);
                close_rows.push(be[q]);
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
        let n = rows.len();
        c.output_rows.add(n);
        let rows = UInt32Array::from(rows);
        let mut cols: Vec<ArrayRef> = batch
            .columns()
            .iter()
            .map(|a| Ok(arrow::compute::take(a.as_ref(), &rows, None)?))
            .collect::<Result<_>>()?;
        let fields = schema.fields();
        let mut take_from = |store: &TableColumns, names: &[String], idx: Vec<u32>| -> Result<()> {
            let idx = UInt32Array::from(idx);
            for name in names {
                let a = store.get(name).map_err(store_err)?;
                let t = arrow::compute::take(a.as_ref(), &idx, None)?;
                let want = fields[cols.len()].data_type();
                cols.push(match t.data_type() == want {
                    true => t,
                    false => arrow::compute::cast(&t, want)?,
                });
            }
            Ok(())
        };
        take_from(&open.data.edges, &open.edge_take, open_rows)?;
        take_from(&open.data.target, &open.target_take, nodes)?;
        take_from(&close.data.edges, &close.edge_take, close_rows)?;
        Ok(RecordBatch::try_new_with_options(
            schema.clone(),
            cols,
            &arrow::array::RecordBatchOptions::new().with_row_count(Some(n)),
        )?)
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
                Ok(())
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
        let schema = self.schema.clone();
        let elapsed = MetricBuilder::new(m).elapsed_compute(partition);
        Ok(super::limited_stream(
            input,
            self.schema.clone(),
            None,
            elapsed,
            move |b, _| Self::intersect(&open, &close, b, &schema, &counters),
        ))
    }

    fn metrics(&self) -> Option<MetricsSet> {
        Some(self.metrics.clone_inner())
    }
}
