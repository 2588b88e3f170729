//! `CsrIntersectExec`: per input row, the nodes adjacent to every bound node, by intersecting
//! neighbour runs sorted by ordinal (the first two by a merge, or binary searches of the
//! shorter run's values in the longer when their lengths differ widely; each further run by
//! binary searches from where the last match was). Multi-edges give a row per combination of
//! edges; filters apply to the matches found, before any column is taken.
//!
//! Counting ([`MatchCount`]): each input row once, with how many of its matches pass a filter
//! over the few columns it reads (taken for the matches only); rows without one are dropped.

use super::csr_expand::CsrData;
use super::csr_expand_exec::{passes, retain, store_err, take_all, take_into, ExpandSpec};
use crate::csr::as_i64;
use arrow::array::{Array, Int64Array, RecordBatch, UInt32Array};
use arrow::datatypes::SchemaRef;
use datafusion::common::Result;
use datafusion::execution::TaskContext;
use datafusion::physical_expr::PhysicalExpr;
use datafusion::physical_plan::metrics::{ExecutionPlanMetricsSet, MetricBuilder};
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
    /// From the new node onto each other bound node (`close_idx`); no target columns.
    closes: Arc<Vec<ExpandSpec>>,
    count: Option<Arc<MatchCount>>,
    schema: SchemaRef,
    cache: Arc<PlanProperties>,
    metrics: ExecutionPlanMetricsSet,
}

impl CsrIntersectExec {
    pub fn try_new(
        input: Arc<dyn ExecutionPlan>,
        open: ExpandSpec,
        closes: Vec<ExpandSpec>,
        schema: SchemaRef,
    ) -> Result<Self> {
        let n_in = input.schema().fields().len();
        let ok = open.key_idx < n_in
            && open.close_idx.is_none()
            && !closes.is_empty()
            && closes.iter().all(|c| {
                c.close_idx.is_some_and(|c| c < n_in)
                    && c.target_take.is_empty()
                    && c.target_filter.is_none()
            });
        if !ok {
            return datafusion::common::internal_err!("CsrIntersectExec: bad hops");
        }
        let cache = super::streaming_properties(&schema, &input);
        Ok(Self {
            input,
            open: Arc::new(open),
            closes: Arc::new(closes),
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
/// else the two runs merged into `split` (a self-loop seen once).
fn run<'a>(
    data: &'a CsrData,
    orientations: &[bool],
    reversed: bool,
    x: u32,
    split: &'a mut (Vec<u32>, Vec<u32>),
) -> (&'a [u32], &'a [u32]) {
    if let [rev] = orientations {
        let csr = data.index.direction(*rev != reversed);
        let r = csr.range(x);
        return (&csr.neighbors[r.clone()], &csr.edge_rows[r]);
    }
    // Both ways: the two sorted runs merged (the second without self-loops).
    let (f, b) = (
        data.index.direction(orientations[0] != reversed),
        data.index.direction(orientations[1] != reversed),
    );
    let (rf, rb) = (f.range(x), b.range(x));
    let (fnb, fe) = (&f.neighbors[rf.clone()], &f.edge_rows[rf]);
    let (bnb, be) = (&b.neighbors[rb.clone()], &b.edge_rows[rb]);
    split.0.clear();
    split.1.clear();
    let (mut i, mut j) = (0, 0);
    while i < fnb.len() || j < bnb.len() {
        if j < bnb.len() && bnb[j] == x {
            j += 1;
            continue;
        }
        let from_f = j == bnb.len() || (i < fnb.len() && fnb[i] <= bnb[j]);
        let (y, e) = match from_f {
            true => (fnb[i], fe[i]),
            false => (bnb[j], be[j]),
        };
        split.0.push(y);
        split.1.push(e);
        match from_f {
            true => i += 1,
            false => j += 1,
        }
    }
    (&split.0, &split.1)
}

/// What each match found: its new node, the open hop's edge and each closing hop's.
struct Found {
    nodes: Vec<u32>,
    open_rows: Vec<u32>,
    close_rows: Vec<Vec<u32>>,
}

struct Counters {
    edges_scanned: datafusion::physical_plan::metrics::Count,
    output_rows: datafusion::physical_plan::metrics::Count,
}

impl CsrIntersectExec {
    fn intersect(
        open: &ExpandSpec,
        closes: &[ExpandSpec],
        count: Option<&MatchCount>,
        batch: &RecordBatch,
        schema: &SchemaRef,
        c: &Counters,
    ) -> Result<RecordBatch> {
        let (keys, others) = Self::key_columns(open, closes, batch)?;
        let k = closes.len();
        let (mut rows, mut nodes, mut open_rows) = (Vec::new(), Vec::new(), Vec::new());
        let mut close_rows: Vec<Vec<u32>> = vec![Vec::new(); k];
        let mut split_a = Default::default();
        let mut splits: Vec<(Vec<u32>, Vec<u32>)> = vec![Default::default(); k];
        // Per further run: where its next match can start; the range of the current one.
        let mut from = vec![0usize; k];
        let mut at: Vec<(usize, usize)> = vec![(0, 0); k];
        // Buffers reused row after row: a row costs no allocation.
        let mut ys: Vec<u32> = Vec::with_capacity(k);
        // Counted per batch: a metric is an atomic.
        let mut scanned = 0;
        let mut pick: Vec<usize> = Vec::with_capacity(k);
        const ON_STACK: usize = 4;
        let none: (&[u32], &[u32]) = (&[], &[]);
        'row: for i in 0..batch.num_rows() {
            if keys.is_null(i) || others.iter().any(|o| o.is_null(i)) {
                continue;
            }
            let Some(x) = open.data.near_keys.ordinal(keys.value(i)) else {
                continue;
            };
            ys.clear();
            for (h, o) in closes.iter().zip(&others) {
                match h.data.far_keys.ordinal(o.value(i)) {
                    Some(y) => ys.push(y),
                    None => continue 'row,
                }
            }
            let (an, ae) = run(&open.data, &open.orientations, false, x, &mut split_a);
            // Each closing hop walked backwards from the node it ends at.
            let (mut stack, mut heap) = ([none; ON_STACK], Vec::new());
            let runs: &mut [(&[u32], &[u32])] = match k <= ON_STACK {
                true => &mut stack[..k],
                false => {
                    heap.resize(k, none);
                    &mut heap
                }
            };
            for (((h, &y), split), slot) in
                closes.iter().zip(&ys).zip(&mut splits).zip(runs.iter_mut())
            {
                *slot = run(&h.data, &h.orientations, true, y, split);
            }
            let runs = &*runs;
            let shortest = runs.iter().map(|r| r.0.len()).min().unwrap_or(0);
            scanned += an.len().min(shortest);
            from.iter_mut().for_each(|f| *f = 0);
            crate::csr::matching_runs(an, runs[0].0, |p, rp, q, rq| {
                let z = an[p];
                // The node's run in every further list, else no match.
                for j in 1..k {
                    let l = runs[j].0;
                    let start = from[j] + l[from[j]..].partition_point(|&w| w < z);
                    let len = l[start..].partition_point(|&w| w == z);
                    from[j] = start + len;
                    if len == 0 {
                        return;
                    }
                    at[j] = (start, len);
                }
                at[0] = (q, rq);
                // Every combination of one edge per list.
                pick.clear();
                pick.extend(at.iter().map(|r| r.0));
                for &open_edge in &ae[p..p + rp] {
                    loop {
                        rows.push(i as u32);
                        nodes.push(z);
                        open_rows.push(open_edge);
                        for ((ids, run), &at) in close_rows.iter_mut().zip(runs).zip(&pick) {
                            ids.push(run.1[at]);
                        }
                        if !next_combination(&mut pick, &at) {
                            break;
                        }
                    }
                }
            });
        }
        c.edges_scanned.add(scanned);
        for h in std::iter::once(open).chain(closes) {
            h.data.intact().map_err(store_err)?;
        }
        let keep = Self::passing_filters(open, closes, &nodes, &open_rows, &close_rows)?;
        if let Some(keep) = keep {
            retain(&keep, [&mut rows, &mut nodes, &mut open_rows]);
            for ids in &mut close_rows {
                retain(&keep, [ids]);
            }
        }
        let found = Found {
            nodes,
            open_rows,
            close_rows,
        };
        if let Some(m) = count {
            if let Some(f) = &m.filter {
                let read: Vec<_> = m.read.iter().map(|&i| batch.column(i).clone()).collect();
                let matches = Self::columns(open, closes, &read, &m.schema, rows.clone(), found)?;
                let ok = f.evaluate(&matches)?.into_array(matches.num_rows())?;
                retain(&passes(&ok)?, [&mut rows]);
            }
            return Self::counts(batch, &rows, schema, c);
        }
        c.output_rows.add(rows.len());
        Self::columns(open, closes, batch.columns(), schema, rows, found)
    }

    /// The columns a match starts from: the open hop's near keys, each closing hop's bound
    /// node.
    fn key_columns(
        open: &ExpandSpec,
        closes: &[ExpandSpec],
        batch: &RecordBatch,
    ) -> Result<(Int64Array, Vec<Int64Array>)> {
        let keys = as_i64(batch.column(open.key_idx).as_ref()).map_err(store_err)?;
        let others = closes
            .iter()
            .map(|h| {
                as_i64(
                    batch
                        .column(h.close_idx.expect("checked in try_new"))
                        .as_ref(),
                )
            })
            .collect::<crate::Result<Vec<_>>>()
            .map_err(store_err)?;
        Ok((keys, others))
    }

    /// Which matches pass every hop's edge and target filters; `None` when no hop has one.
    fn passing_filters(
        open: &ExpandSpec,
        closes: &[ExpandSpec],
        nodes: &[u32],
        open_rows: &[u32],
        close_rows: &[Vec<u32>],
    ) -> Result<Option<Vec<bool>>> {
        let mut filters = vec![
            (&open.edge_filter, &open.data.edges, open_rows),
            (&open.target_filter, &open.data.target, nodes),
        ];
        for (h, ids) in closes.iter().zip(close_rows) {
            filters.push((&h.edge_filter, &h.data.edges, ids));
        }
        let mut keep: Option<Vec<bool>> = None;
        for (f, store, ids) in filters {
            if let Some(f) = f {
                let mask = f.mask(store, &UInt32Array::from(ids.to_vec()))?;
                match &mut keep {
                    Some(k) => k.iter_mut().zip(mask).for_each(|(k, m)| *k &= m),
                    None => keep = Some(mask),
                }
            }
        }
        Ok(keep)
    }

    /// The matches' rows: `input`'s columns at `rows`, then the hops' taken columns.
    fn columns(
        open: &ExpandSpec,
        closes: &[ExpandSpec],
        input: &[arrow::array::ArrayRef],
        schema: &SchemaRef,
        rows: Vec<u32>,
        found: Found,
    ) -> Result<RecordBatch> {
        let n = rows.len();
        let mut cols = take_all(input, &UInt32Array::from(rows))?;
        let fields = schema.fields();
        let (e, t) = (&open.data.edges, &open.data.target);
        take_into(
            &mut cols,
            fields,
            e,
            &open.edge_take,
            found.open_rows.into(),
        )?;
        take_into(&mut cols, fields, t, &open.target_take, found.nodes.into())?;
        for (h, ids) in closes.iter().zip(found.close_rows) {
            take_into(&mut cols, fields, &h.data.edges, &h.edge_take, ids.into())?;
        }
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
        let o = &self.open;
        match t {
            DisplayFormatType::Default | DisplayFormatType::Verbose => {
                write!(
                    f,
                    "CsrIntersectExec: from={}, take={}[{}], edges={}[{}]",
                    o.key_name,
                    o.target_var,
                    o.target_out.join(", "),
                    o.edge_var,
                    o.edge_out.join(", "),
                )?;
                for c in self.closes.iter() {
                    write!(f, " and {}[{}]", c.edge_var, c.edge_out.join(", "))?;
                }
                let closing = self.closes.iter().map(|c| &c.edge_filter);
                for p in [&o.target_filter, &o.edge_filter]
                    .into_iter()
                    .chain(closing)
                    .flatten()
                {
                    write!(f, ", filter={}", crate::functions::held::shown(&p.expr))?;
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
    super::unary_exec!("CsrIntersectExec");

    fn with_new_children(
        self: Arc<Self>,
        children: Vec<Arc<dyn ExecutionPlan>>,
    ) -> Result<Arc<dyn ExecutionPlan>> {
        let input = super::only_child("CsrIntersectExec", children)?;
        Ok(Arc::new(Self {
            cache: super::streaming_properties_over(&self.cache, &self.schema, &input),
            input,
            open: self.open.clone(),
            closes: self.closes.clone(),
            count: self.count.clone(),
            schema: self.schema.clone(),
            metrics: ExecutionPlanMetricsSet::new(),
        }))
    }

    fn maintains_input_order(&self) -> Vec<bool> {
        vec![true]
    }

    /// Parameter values for the filters of a kept plan (`operators::params`).
    fn with_new_state(
        &self,
        state: Arc<dyn std::any::Any + Send + Sync>,
    ) -> Option<Arc<dyn ExecutionPlan>> {
        let values = state.downcast::<super::params::ParamValues>().ok()?;
        let mut open = self.open.as_ref().clone();
        let mut closes = self.closes.as_ref().clone();
        let filters = std::iter::once(&mut open)
            .chain(closes.iter_mut())
            .flat_map(|h| [&mut h.edge_filter, &mut h.target_filter]);
        let hops_bound = super::csr_expand_exec::CompiledFilter::bind_all(filters, &values);
        let mut count = self.count.clone();
        let mut count_bound = false;
        if let Some(c) = &self.count {
            if let Some(f) = c
                .filter
                .as_ref()
                .filter(|f| super::params::has_param_expr(f))
            {
                let filter = Some(super::params::bind_physical(f, &values).ok()?);
                count = Some(Arc::new(MatchCount {
                    read: c.read.clone(),
                    schema: c.schema.clone(),
                    filter,
                }));
                count_bound = true;
            }
        }
        if hops_bound.is_none() && !count_bound {
            return None;
        }
        Some(Arc::new(Self {
            input: self.input.clone(),
            open: Arc::new(open),
            closes: Arc::new(closes),
            count,
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
        let input = self.input.execute(partition, context)?;
        let m = &self.metrics;
        let counters = Counters {
            edges_scanned: MetricBuilder::new(m).counter("edges_scanned", partition),
            output_rows: MetricBuilder::new(m).output_rows(partition),
        };
        let (open, closes) = (self.open.clone(), self.closes.clone());
        let count = self.count.clone();
        let schema = self.schema.clone();
        let elapsed = MetricBuilder::new(m).elapsed_compute(partition);
        Ok(super::limited_stream(
            input,
            self.schema.clone(),
            None,
            elapsed,
            move |b, _| Self::intersect(&open, &closes, count.as_deref(), b, &schema, &counters),
        ))
    }
}

/// The next combination of one position per run (`at`: each run's start and length), an
/// odometer over them; false once every combination was seen (`pick` back at the starts).
fn next_combination(pick: &mut [usize], at: &[(usize, usize)]) -> bool {
    for (p, &(start, len)) in pick.iter_mut().zip(at) {
        *p += 1;
        if *p < start + len {
            return true;
        }
        *p = start;
    }
    false
}

#[cfg(test)]
mod tests {
    use super::next_combination;

    #[test]
    fn every_combination_of_the_runs_once() {
        let at = [(0, 2), (5, 3), (9, 1)];
        let mut pick: Vec<usize> = at.iter().map(|r| r.0).collect();
        let mut seen = vec![pick.clone()];
        while next_combination(&mut pick, &at) {
            seen.push(pick.clone());
        }
        assert_eq!(seen.len(), 2 * 3);
        seen.sort();
        seen.dedup();
        assert_eq!(seen.len(), 6);
        assert!(seen
            .iter()
            .all(|p| (0..2).contains(&p[0]) && (5..8).contains(&p[1]) && p[2] == 9));
        // Back at the starts once done.
        assert_eq!(pick, [0, 5, 9]);
    }
}
