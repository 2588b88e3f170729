//! `CountPathsExec`: the factorized count. Rows per root node come from the input; each arm's
//! paths per root node are counted from the arm's far end back to the root
//! (`count[x] += count[y]` over edges x -> y passing the relationship filter, `x` passing its
//! target filter); the answer is the sum over roots of rows x the product of arm counts.

use super::csr_expand::CsrData;
use super::csr_expand_exec::CompiledFilter;
use crate::csr::as_i64;
use arrow::array::{Array, Int64Array, RecordBatch, UInt32Array};
use arrow::datatypes::SchemaRef;
use datafusion::common::Result;
use datafusion::execution::TaskContext;
use datafusion::physical_expr::{Distribution, EquivalenceProperties};
use datafusion::physical_plan::execution_plan::{Boundedness, EmissionType};
use datafusion::physical_plan::metrics::{ExecutionPlanMetricsSet, MetricBuilder, MetricsSet};
use datafusion::physical_plan::stream::RecordBatchStreamAdapter;
use datafusion::physical_plan::{
    DisplayAs, DisplayFormatType, ExecutionPlan, Partitioning, PlanProperties,
    SendableRecordBatchStream,
};
use futures::StreamExt;
use std::fmt;
use std::sync::Arc;

#[derive(Debug, Clone)]
pub struct HopSpec {
    pub rel_type: String,
    pub orientations: Vec<bool>,
    pub data: CsrData,
    pub target_filter: Option<CompiledFilter>,
    pub edge_filter: Option<CompiledFilter>,
}

#[derive(Debug)]
pub struct CountPathsExec {
    input: Arc<dyn ExecutionPlan>,
    key_idx: usize,
    arms: Arc<Vec<Vec<HopSpec>>>,
    schema: SchemaRef,
    cache: Arc<PlanProperties>,
    metrics: ExecutionPlanMetricsSet,
}

impl CountPathsExec {
    pub fn try_new(
        input: Arc<dyn ExecutionPlan>,
        key_idx: usize,
        arms: Vec<Vec<HopSpec>>,
        schema: SchemaRef,
    ) -> Result<Self> {
        if arms.is_empty()
            || arms.iter().any(|a| a.is_empty())
            || key_idx >= input.schema().fields().len()
        {
            return datafusion::common::internal_err!("CountPathsExec: bad arguments");
        }
        let cache = Arc::new(PlanProperties::new(
            EquivalenceProperties::new(schema.clone()),
            Partitioning::UnknownPartitioning(1),
            EmissionType::Final,
            Boundedness::Bounded,
        ));
        Ok(Self {
            input,
            key_idx,
            arms: Arc::new(arms),
            schema,
            cache,
            metrics: ExecutionPlanMetricsSet::new(),
        })
    }
}

/// Which of `n` rows (ordinals or edge rows) pass `f`; all when there is no filter.
fn passing(
    f: &Option<CompiledFilter>,
    store: &crate::csr::TableColumns,
    n: usize,
) -> Result<Option<Vec<bool>>> {
    match f {
        None => Ok(None),
        Some(f) => Ok(Some(
            f.mask(store, &UInt32Array::from_iter_values(0..n as u32))?,
        )),
    }
}

/// Paths along `hops` from every near node of the first hop, counted backwards from the far end.
fn arm_counts(hops: &[HopSpec], edges_seen: &mut usize) -> Result<Vec<u64>> {
    let last = hops.last().expect("an arm has a hop");
    let far_n = last.data.far_keys.len();
    let mut w: Vec<u64> = match passing(&last.target_filter, &last.data.target, far_n)? {
        Some(ok) => ok.into_iter().map(u64::from).collect(),
        None => vec![1; far_n],
    };
    for k in (0..hops.len()).rev() {
        let h = &hops[k];
        let near_n = h.data.near_keys.len();
        let edge_ok = passing(&h.edge_filter, &h.data.edges, h.data.index.table_rows)?;
        let both = h.orientations.len() == 2;
        let mut v = vec![0u64; near_n];
        for (x, slot) in v.iter_mut().enumerate() {
            for (j, &rev) in h.orientations.iter().enumerate() {
                let csr = h.data.index.direction(rev);
                for e in csr.range(x as u32) {
                    *edges_seen += 1;
                    let y = csr.neighbors[e];
                    if both && j == 1 && y == x as u32 {
                        continue;
                    }
                    if edge_ok
                        .as_ref()
                        .is_some_and(|ok| !ok[csr.edge_rows[e] as usize])
                    {
                        continue;
                    }
                    *slot += w[y as usize];
                }
            }
        }
        // The near node of hop k is the far node of hop k - 1: its filter applies here.
        if k > 0 {
            let prev = &hops[k - 1];
            if let Some(ok) = passing(&prev.target_filter, &prev.data.target, near_n)? {
                for (x, slot) in v.iter_mut().enumerate() {
                    if !ok[x] {
                        *slot = 0;
                    }
                }
            }
        }
        w = v;
    }
    Ok(w)
}

/// Paths along `hops` from weighted start nodes, pushed forward over just the edges reached
/// (filters evaluated only on the nodes and edges touched). Returns the total.
fn forward(hops: &[HopSpec], start: Vec<(u32, u64)>, edges_seen: &mut usize) -> Result<u64> {
    let mut cur = start;
    for h in hops {
        let both = h.orientations.len() == 2;
        // (far node, edge row, weight) for every edge walked.
        let mut steps: Vec<(u32, u32, u64)> = Vec::new();
        for &(x, c) in &cur {
            for (j, &rev) in h.orientations.iter().enumerate() {
                let csr = h.data.index.direction(rev);
                for e in csr.range(x) {
                    let y = csr.neighbors[e];
                    if both && j == 1 && y == x {
                        continue;
                    }
                    steps.push((y, csr.edge_rows[e], c));
                }
            }
        }
        *edges_seen += steps.len();
        if let Some(f) = &h.edge_filter {
            let rows = UInt32Array::from_iter_values(steps.iter().map(|s| s.1));
            let ok = f.mask(&h.data.edges, &rows)?;
            let mut k = 0;
            steps.retain(|_| {
                k += 1;
                ok[k - 1]
            });
        }
        // Sum per far node, then apply its filter once per distinct node.
        let mut acc: std::collections::BTreeMap<u32, u64> = std::collections::BTreeMap::new();
        for (y, _, c) in steps {
            *acc.entry(y).or_default() += c;
        }
        let mut next: Vec<(u32, u64)> = acc.into_iter().collect();
        if let Some(f) = &h.target_filter {
            let ids = UInt32Array::from_iter_values(next.iter().map(|n| n.0));
            let ok = f.mask(&h.data.target, &ids)?;
            let mut k = 0;
            next.retain(|_| {
                k += 1;
                ok[k - 1]
            });
        }
        cur = next;
    }
    Ok(cur.iter().map(|c| c.1).sum())
}

/// Few root nodes: walk forward from them; many: count every node backwards, once per arm.
const FORWARD_ROOTS: usize = 256;

fn count(arms: &[Vec<HopSpec>], roots: &[u64], edges_seen: &mut usize) -> Result<i64> {
    let live: Vec<(u32, u64)> = roots
        .iter()
        .enumerate()
        .filter(|(_, &m)| m > 0)
        .map(|(r, &m)| (r as u32, m))
        .collect();
    if live.len() <= FORWARD_ROOTS {
        if arms.len() == 1 {
            return Ok(forward(&arms[0], live, edges_seen)? as i64);
        }
        let mut total: u64 = 0;
        for (r, m) in live {
            let mut p = m;
            for arm in arms {
                p = p.saturating_mul(forward(arm, vec![(r, 1)], edges_seen)?);
                if p == 0 {
                    break;
                }
            }
            total = total.saturating_add(p);
        }
        return Ok(total as i64);
    }
    let counts = arms
        .iter()
        .map(|a| arm_counts(a, edges_seen))
        .collect::<Result<Vec<_>>>()?;
    let mut total: u64 = 0;
    for (r, &m) in roots.iter().enumerate() {
        if m == 0 {
            continue;
        }
        let mut p = m;
        for c in &counts {
            p = p.saturating_mul(c[r]);
        }
        total = total.saturating_add(p);
    }
    Ok(total as i64)
}

impl DisplayAs for CountPathsExec {
    fn fmt_as(&self, t: DisplayFormatType, f: &mut fmt::Formatter) -> fmt::Result {
        match t {
            DisplayFormatType::Default | DisplayFormatType::Verbose => {
                let hops: Vec<String> = self
                    .arms
                    .iter()
                    .flatten()
                    .map(|h| {
                        let mut s = h.rel_type.clone();
                        if let Some(p) = &h.target_filter {
                            s.push_str(&format!(" filter={}", p.expr));
                        }
                        if let Some(p) = &h.edge_filter {
                            s.push_str(&format!(" edge_filter={}", p.expr));
                        }
                        s
                    })
                    .collect();
                write!(
                    f,
                    "CountPathsExec: arms={}, hops=[{}]",
                    self.arms.len(),
                    hops.join(", ")
                )
            }
            DisplayFormatType::TreeRender => write!(f, "arms={}", self.arms.len()),
        }
    }
}

impl ExecutionPlan for CountPathsExec {
    fn name(&self) -> &str {
        "CountPathsExec"
    }

    fn properties(&self) -> &Arc<PlanProperties> {
        &self.cache
    }

    fn required_input_distribution(&self) -> Vec<Distribution> {
        vec![Distribution::SinglePartition]
    }

    fn children(&self) -> Vec<&Arc<dyn ExecutionPlan>> {
        vec![&self.input]
    }

    fn with_new_children(
        self: Arc<Self>,
        mut children: Vec<Arc<dyn ExecutionPlan>>,
    ) -> Result<Arc<dyn ExecutionPlan>> {
        Ok(Arc::new(Self {
            input: children.swap_remove(0),
            key_idx: self.key_idx,
            arms: self.arms.clone(),
            schema: self.schema.clone(),
            cache: self.cache.clone(),
            metrics: ExecutionPlanMetricsSet::new(),
        }))
    }

    /// Parameter values for the filters of a kept plan (`operators::params`).
    fn with_new_state(
        &self,
        state: Arc<dyn std::any::Any + Send + Sync>,
    ) -> Option<Arc<dyn ExecutionPlan>> {
        let values = state.downcast::<super::params::ParamValues>().ok()?;
        let mut arms = self.arms.as_ref().clone();
        let filters = arms
            .iter_mut()
            .flatten()
            .flat_map(|h| [&mut h.edge_filter, &mut h.target_filter]);
        super::csr_expand_exec::CompiledFilter::bind_all(filters, &values)?;
        Some(Arc::new(Self {
            input: self.input.clone(),
            key_idx: self.key_idx,
            arms: Arc::new(arms),
            schema: self.schema.clone(),
            cache: self.cache.clone(),
            metrics: ExecutionPlanMetricsSet::new(),
        }))
    }

    fn execute(
        &self,
        partition: usize,
        context: Arc<TaskContext>,
    ) -> Result<SendableRecordBatchStream> {
        let mut input = self.input.execute(partition, context)?;
        let arms = self.arms.clone();
        let key_idx = self.key_idx;
        let schema = self.schema.clone();
        let out_schema = schema.clone();
        let edges_metric = MetricBuilder::new(&self.metrics).counter("edges_scanned", partition);
        let rows_metric = MetricBuilder::new(&self.metrics).output_rows(partition);
        let elapsed = MetricBuilder::new(&self.metrics).elapsed_compute(partition);
        let fut = async move {
            let near = &arms[0][0].data.near_keys;
            let mut start = vec![0u64; near.len()];
            while let Some(b) = input.next().await {
                let b = b?;
                let _timer = elapsed.timer();
                let keys = as_i64(b.column(key_idx).as_ref())
                    .map_err(|e| datafusion::error::DataFusionError::External(Box::new(e)))?;
                for i in 0..keys.len() {
                    if keys.is_valid(i) {
                        if let Some(o) = near.ordinal(keys.value(i)) {
                            start[o as usize] += 1;
                        }
                    }
                }
            }
            let mut seen = 0;
            let timer = elapsed.timer();
            let n = count(&arms, &start, &mut seen)?;
            timer.done();
            edges_metric.add(seen);
            rows_metric.add(1);
            Ok(RecordBatch::try_new(
                schema,
                vec![Arc::new(Int64Array::from(vec![n]))],
            )?)
        };
        Ok(Box::pin(RecordBatchStreamAdapter::new(
            out_schema,
            futures::stream::once(fut),
        )))
    }

    fn metrics(&self) -> Option<MetricsSet> {
        Some(self.metrics.clone_inner())
    }
}
