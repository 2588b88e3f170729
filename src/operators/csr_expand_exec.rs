//! `CsrExpandExec`: the physical CSR hop. Streams input batches; for each, collects the
//! candidate (row, neighbour, edge) triples from the CSR, evaluates the relationship filter and
//! the target filter on just their columns, then takes the output columns for the survivors.

use super::csr_expand::CsrData;
use crate::csr::{as_i64, TableColumns};
use arrow::array::{Array, ArrayRef, BooleanArray, RecordBatch, UInt32Array};
use arrow::datatypes::SchemaRef;
use datafusion::common::Result;
use datafusion::execution::TaskContext;
use datafusion::physical_expr::PhysicalExpr;
use datafusion::physical_plan::metrics::{Count, ExecutionPlanMetricsSet, MetricBuilder};
use datafusion::physical_plan::{
    DisplayAs, DisplayFormatType, ExecutionPlan, PlanProperties, SendableRecordBatchStream,
};
use std::fmt;
use std::sync::Arc;

/// A predicate compiled against a batch of just the columns it reads.
#[derive(Debug, Clone)]
pub struct CompiledFilter {
    /// The predicate as written (what EXPLAIN shows, and what runs without `repeated`).
    pub expr: Arc<dyn PhysicalExpr>,
    /// Table columns, in the order of the filter batch.
    pub cols: Vec<String>,
    pub schema: SchemaRef,
    /// Where the predicate repeats subexpressions: each computed once per batch.
    pub repeated: Option<Repeated>,
    /// The predicate calls a function of ours, evaluated row by row over values: a row
    /// reached more than once is evaluated once (see [`Self::mask`]).
    pub row_wise: bool,
}

/// A predicate's repeated subexpressions, each appended to the batch as a column in turn
/// (`exprs[i]` reads the batch of `schemas[i]`: the columns and the ones before it), then
/// the predicate over all of them.
#[derive(Debug, Clone)]
pub struct Repeated {
    pub exprs: Vec<Arc<dyn PhysicalExpr>>,
    pub schemas: Vec<SchemaRef>,
    pub pred: Arc<dyn PhysicalExpr>,
    pub schema: SchemaRef,
}

impl CompiledFilter {
    pub fn new(
        expr: Arc<dyn PhysicalExpr>,
        cols: Vec<String>,
        schema: SchemaRef,
        repeated: Option<Repeated>,
    ) -> Self {
        let row_wise = calls_ours(&expr);
        Self {
            expr,
            cols,
            schema,
            repeated,
            row_wise,
        }
    }

    pub fn has_params(&self) -> bool {
        super::params::has_param_expr(&self.expr)
            || self.repeated.as_ref().is_some_and(|r| {
                super::params::has_param_expr(&r.pred)
                    || r.exprs.iter().any(super::params::has_param_expr)
            })
    }

    /// The filter with its parameters' values (see `operators::params`).
    pub fn bind(&self, values: &super::params::ParamValues) -> Result<Self> {
        let bind = |e: &Arc<dyn PhysicalExpr>| super::params::bind_physical(e, values);
        let repeated = match &self.repeated {
            Some(r) => Some(Repeated {
                exprs: r.exprs.iter().map(bind).collect::<Result<_>>()?,
                pred: bind(&r.pred)?,
                ..r.clone()
            }),
            None => None,
        };
        Ok(Self {
            expr: bind(&self.expr)?,
            repeated,
            ..self.clone()
        })
    }

    /// Binds each of `filters` that holds parameters; `None` when none does.
    pub fn bind_all<'a>(
        filters: impl IntoIterator<Item = &'a mut Option<CompiledFilter>>,
        values: &super::params::ParamValues,
    ) -> Option<()> {
        let mut any = false;
        for f in filters {
            if let Some(c) = f.as_mut().filter(|c| c.has_params()) {
                *c = c.bind(values).ok()?;
                any = true;
            }
        }
        any.then_some(())
    }

    /// Keeps the positions whose row (taken at `idx` from `store`) passes; nulls fail.
    pub fn mask(&self, store: &TableColumns, idx: &UInt32Array) -> Result<Vec<bool>> {
        // A predicate our functions evaluate value by value costs far more per row than
        // sorting the rows: each row reached more than once (a node at the end of several
        // paths) is evaluated once.
        if idx.len() >= 32 && idx.null_count() == 0 && self.row_wise {
            let mut order: Vec<(u32, u32)> = (idx.values().iter().copied())
                .zip(0..idx.len() as u32)
                .collect();
            order.sort_unstable();
            let mut distinct = Vec::with_capacity(order.len());
            let mut slot = vec![0u32; order.len()];
            for &(row, at) in &order {
                if distinct.last() != Some(&row) {
                    distinct.push(row);
                }
                slot[at as usize] = distinct.len() as u32 - 1;
            }
            if distinct.len() * 10 < idx.len() * 9 {
                let ok = self.mask_rows(store, &UInt32Array::from(distinct))?;
                return Ok(slot.iter().map(|&s| ok[s as usize]).collect());
            }
        }
        self.mask_rows(store, idx)
    }

    fn mask_rows(&self, store: &TableColumns, idx: &UInt32Array) -> Result<Vec<bool>> {
        let mut cols = self
            .cols
            .iter()
            .map(|c| {
                store
                    .take(c, idx)
                    .map_err(datafusion::error::DataFusionError::from)
            })
            .collect::<Result<Vec<ArrayRef>>>()?;
        let n = idx.len();
        let batch = |schema: &SchemaRef, cols: Vec<ArrayRef>| {
            RecordBatch::try_new_with_options(
                schema.clone(),
                cols,
                &arrow::array::RecordBatchOptions::new().with_row_count(Some(n)),
            )
        };
        let Some(r) = &self.repeated else {
            return passes(
                &self
                    .expr
                    .evaluate(&batch(&self.schema, cols)?)?
                    .into_array(n)?,
            );
        };
        for (e, schema) in r.exprs.iter().zip(&r.schemas) {
            let v = e.evaluate(&batch(schema, cols.clone())?)?.into_array(n)?;
            cols.push(v);
        }
        passes(&r.pred.evaluate(&batch(&r.schema, cols)?)?.into_array(n)?)
    }
}

/// Whether `e` calls a function of ours (row by row over values).
fn calls_ours(e: &Arc<dyn PhysicalExpr>) -> bool {
    use datafusion::common::tree_node::{TreeNode, TreeNodeRecursion};
    use datafusion::physical_expr::ScalarFunctionExpr;
    let mut found = false;
    let _ = e.apply(|p| {
        found = p
            .downcast_ref::<ScalarFunctionExpr>()
            .is_some_and(|f| f.name().starts_with("cypher_"));
        Ok(if found {
            TreeNodeRecursion::Stop
        } else {
            TreeNodeRecursion::Continue
        })
    });
    found
}

/// A predicate's values as a mask: true where true; false where false or null.
pub(super) fn passes(v: &ArrayRef) -> Result<Vec<bool>> {
    let b = v.as_any().downcast_ref::<BooleanArray>().ok_or_else(|| {
        datafusion::error::DataFusionError::Internal("filter is not boolean".into())
    })?;
    Ok((0..b.len()).map(|i| b.is_valid(i) && b.value(i)).collect())
}

/// What the operator needs at run time, shared by its partitions.
#[derive(Debug, Clone)]
pub struct ExpandSpec {
    pub key_idx: usize,
    pub close_idx: Option<usize>,
    pub orientations: Vec<bool>,
    pub data: CsrData,
    /// Table columns output, in schema order after the input's.
    pub edge_take: Vec<String>,
    pub target_take: Vec<String>,
    pub edge_filter: Option<CompiledFilter>,
    pub target_filter: Option<CompiledFilter>,
    /// For display.
    pub key_name: String,
    pub edge_var: String,
    pub target_var: String,
    pub edge_out: Vec<String>,
    pub target_out: Vec<String>,
    /// Counting (a closing hop): each input row once, with its number of matches appended
    /// (Int64) instead of a row per match.
    pub count: bool,
    /// A left outer expansion: an input row without a match once, with nulls.
    pub optional: bool,
}

#[derive(Debug)]
pub struct CsrExpandExec {
    input: Arc<dyn ExecutionPlan>,
    spec: Arc<ExpandSpec>,
    schema: SchemaRef,
    cache: Arc<PlanProperties>,
    metrics: ExecutionPlanMetricsSet,
    /// A LIMIT absorbed from above (per partition): stop after this many rows.
    fetch: Option<usize>,
    /// Whether a LIMIT may be absorbed (`RuleSwitches::absorb_limits`).
    absorbs_limits: bool,
}

struct Counters {
    rows_in: Count,
    edges_scanned: Count,
    rows_taken: Count,
    output_rows: Count,
    filter_evals: Count,
}

/// Target-filter outcomes per node ordinal, kept for the whole partition: a node reached many
/// times (common two hops out) has its filter columns read and evaluated once.
#[derive(Default)]
struct Selection {
    passed: roaring::RoaringBitmap,
    failed: roaring::RoaringBitmap,
}

impl CsrExpandExec {
    /// Whether a LIMIT above may be absorbed (`fetch`).
    pub fn absorbing_limits(mut self, yes: bool) -> Self {
        self.absorbs_limits = yes;
        self
    }

    /// The same operator over `input` (properties follow it: its partitioning may differ),
    /// with fresh metrics and `fetch`.
    fn rebuilt(&self, input: Arc<dyn ExecutionPlan>, fetch: Option<usize>) -> Self {
        Self {
            cache: super::streaming_properties_over(&self.cache, &self.schema, &input),
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
        spec: ExpandSpec,
        schema: SchemaRef,
    ) -> Result<Self> {
        let n_in = input.schema().fields().len();
        if spec.key_idx >= n_in || spec.close_idx.is_some_and(|c| c >= n_in) {
            return datafusion::common::internal_err!("CsrExpandExec: key column out of range");
        }
        let produced = if spec.count {
            1
        } else {
            spec.edge_take.len() + spec.target_take.len()
        };
        if schema.fields().len() != n_in + produced
            || (spec.count && (spec.close_idx.is_none() || spec.target_filter.is_some()))
            || (spec.optional && (spec.count || spec.close_idx.is_some()))
        {
            return datafusion::common::internal_err!(
                "CsrExpandExec: schema does not match the take lists"
            );
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

pub(super) fn take_all(arrays: &[ArrayRef], idx: &UInt32Array) -> Result<Vec<ArrayRef>> {
    arrays
        .iter()
        .map(|a| Ok(arrow::compute::take(a.as_ref(), idx, None)?))
        .collect()
}

/// Keeps the entries of each of `vs` where `mask` holds.
pub(super) fn retain<T, const N: usize>(mask: &[bool], vs: [&mut Vec<T>; N]) {
    for v in vs {
        let mut k = 0;
        v.retain(|_| {
            let keep = mask[k];
            k += 1;
            keep
        });
    }
}

pub(super) fn store_err(e: crate::Error) -> datafusion::error::DataFusionError {
    e.into()
}

/// The matches `(rows, edge rows, neighbours)` of a batch of `n` rows (in row order) with
/// each row that has none once, without an edge or a neighbour (nulls taken).
fn with_unmatched(
    n: usize,
    rows: &[u32],
    erows: Vec<u32>,
    nbrs: Vec<u32>,
) -> (Vec<u32>, Vec<Option<u32>>, Vec<Option<u32>>) {
    let mut out = (Vec::with_capacity(rows.len()), Vec::new(), Vec::new());
    let mut k = 0;
    for i in 0..n as u32 {
        if k < rows.len() && rows[k] == i {
            while k < rows.len() && rows[k] == i {
                out.0.push(i);
                out.1.push(Some(erows[k]));
                out.2.push(Some(nbrs[k]));
                k += 1;
            }
        } else {
            out.0.push(i);
            out.1.push(None);
            out.2.push(None);
        }
    }
    out
}

/// Columns `names` of `store` at rows `idx` (null where `idx` is), appended to `cols` as the
/// output schema's next fields type them.
pub(super) fn take_into(
    cols: &mut Vec<ArrayRef>,
    fields: &arrow::datatypes::Fields,
    store: &TableColumns,
    names: &[String],
    idx: UInt32Array,
) -> Result<()> {
    for name in names {
        let t = store.take(name, &idx).map_err(store_err)?;
        let want = fields[cols.len()].data_type();
        cols.push(match t.data_type() == want {
            true => t,
            false => arrow::compute::cast(&t, want)?,
        });
    }
    Ok(())
}

impl ExpandSpec {
    /// Per neighbour in `nbrs`, whether it passes the target filter `f`: evaluated only for
    /// the nodes not seen before in this partition (sorted, distinct), remembered in `sel`.
    fn targets_passing(
        &self,
        f: &CompiledFilter,
        nbrs: &[u32],
        sel: &mut Selection,
        c: &Counters,
    ) -> Result<Vec<bool>> {
        let mut fresh = roaring::RoaringBitmap::new();
        for &n in nbrs {
            if !sel.passed.contains(n) && !sel.failed.contains(n) {
                fresh.insert(n);
            }
        }
        if !fresh.is_empty() {
            let ords: Vec<u32> = fresh.iter().collect();
            c.filter_evals.add(ords.len());
            let mask = f.mask(&self.data.target, &UInt32Array::from(ords.clone()))?;
            for (o, pass) in ords.into_iter().zip(mask) {
                if pass {
                    sel.passed.insert(o);
                } else {
                    sel.failed.insert(o);
                }
            }
        }
        Ok(nbrs.iter().map(|&n| sel.passed.contains(n)).collect())
    }

    fn expand(
        &self,
        batch: &RecordBatch,
        schema: &SchemaRef,
        c: &Counters,
        sel: &mut Selection,
    ) -> Result<RecordBatch> {
        c.rows_in.add(batch.num_rows());
        let keys = as_i64(batch.column(self.key_idx).as_ref()).map_err(store_err)?;
        let close = match self.close_idx {
            Some(i) => Some(as_i64(batch.column(i).as_ref()).map_err(store_err)?),
            None => None,
        };
        let both = self.orientations.len() == 2;
        let (mut rows, mut nbrs, mut erows) = (Vec::new(), Vec::new(), Vec::new());
        for i in 0..batch.num_rows() {
            if keys.is_null(i) {
                continue;
            }
            let Some(o) = self.data.near_keys.ordinal(keys.value(i)) else {
                continue;
            };
            let want = match &close {
                Some(cl) => {
                    if cl.is_null(i) {
                        continue;
                    }
                    match self.data.far_keys.ordinal(cl.value(i)) {
                        Some(w) => Some(w),
                        None => continue,
                    }
                }
                None => None,
            };
            for (j, &rev) in self.orientations.iter().enumerate() {
                let csr = self.data.index.direction(rev);
                let mut range = csr.range(o);
                // Closing on a bound node: a probe, the run of edges to it found by binary
                // search (a node's run is sorted by neighbour).
                if let Some(w) = want {
                    let run = &csr.neighbors[range.clone()];
                    let (lo, hi) = (
                        run.partition_point(|&n| n < w),
                        run.partition_point(|&n| n <= w),
                    );
                    range = range.start + lo..range.start + hi;
                }
                for e in range {
                    let n = csr.neighbors[e];
                    // Undirected: a self-loop is matched once.
                    if both && j == 1 && n == o {
                        continue;
                    }
                    rows.push(i as u32);
                    nbrs.push(n);
                    erows.push(csr.edge_rows[e]);
                }
            }
        }
        c.edges_scanned.add(rows.len());
        if let Some(f) = &self.edge_filter {
            let mask = f.mask(&self.data.edges, &UInt32Array::from(erows.clone()))?;
            retain(&mask, [&mut rows, &mut nbrs, &mut erows]);
        }
        if let Some(f) = &self.target_filter {
            let mask = self.targets_passing(f, &nbrs, sel, c)?;
            retain(&mask, [&mut rows, &mut nbrs, &mut erows]);
        }
        self.data.intact().map_err(store_err)?;
        c.rows_taken.add(rows.len());
        if self.count {
            let mut counts = vec![0i64; batch.num_rows()];
            for &r in &rows {
                counts[r as usize] += 1;
            }
            c.output_rows.add(batch.num_rows());
            let mut cols = batch.columns().to_vec();
            cols.push(Arc::new(arrow::array::Int64Array::from(counts)));
            return Ok(RecordBatch::try_new_with_options(
                schema.clone(),
                cols,
                &arrow::array::RecordBatchOptions::new().with_row_count(Some(batch.num_rows())),
            )?);
        }
        let (rows, erows, nbrs) = match self.optional {
            true => {
                let (rows, erows, nbrs) = with_unmatched(batch.num_rows(), &rows, erows, nbrs);
                (rows, UInt32Array::from(erows), UInt32Array::from(nbrs))
            }
            false => (rows, UInt32Array::from(erows), UInt32Array::from(nbrs)),
        };
        c.output_rows.add(rows.len());
        let n = rows.len();
        let rows = UInt32Array::from(rows);
        let mut cols = take_all(batch.columns(), &rows)?;
        let fields = schema.fields();
        take_into(&mut cols, fields, &self.data.edges, &self.edge_take, erows)?;
        take_into(
            &mut cols,
            fields,
            &self.data.target,
            &self.target_take,
            nbrs,
        )?;
        Ok(RecordBatch::try_new_with_options(
            schema.clone(),
            cols,
            &arrow::array::RecordBatchOptions::new().with_row_count(Some(n)),
        )?)
    }
}

impl DisplayAs for CsrExpandExec {
    fn fmt_as(&self, t: DisplayFormatType, f: &mut fmt::Formatter) -> fmt::Result {
        match t {
            DisplayFormatType::Default | DisplayFormatType::Verbose => {
                let s = &self.spec;
                write!(
                    f,
                    "CsrExpandExec: key={}, edges={}",
                    s.key_name, s.data.index.table_rows
                )?;
                if s.orientations.len() == 2 {
                    write!(f, ", both directions")?;
                } else if s.orientations[0] {
                    write!(f, ", incoming")?;
                }
                if s.optional {
                    write!(f, ", optional")?;
                }
                if s.count {
                    write!(f, ", close, counted")?;
                } else if s.close_idx.is_some() {
                    write!(f, ", close")?;
                } else {
                    write!(f, ", take={}[{}]", s.target_var, s.target_out.join(", "))?;
                }
                write!(f, ", edge={}[{}]", s.edge_var, s.edge_out.join(", "))?;
                if let Some(p) = &s.target_filter {
                    write!(f, ", filter={}", crate::functions::held::shown(&p.expr))?;
                }
                if let Some(p) = &s.edge_filter {
                    write!(
                        f,
                        ", edge_filter={}",
                        crate::functions::held::shown(&p.expr)
                    )?;
                }
                if let Some(n) = self.fetch {
                    write!(f, ", fetch={n}")?;
                }
                Ok(())
            }
            DisplayFormatType::TreeRender => write!(f, "key={}", self.spec.key_name),
        }
    }
}

impl ExecutionPlan for CsrExpandExec {
    super::unary_exec!("CsrExpandExec");

    fn with_new_children(
        self: Arc<Self>,
        children: Vec<Arc<dyn ExecutionPlan>>,
    ) -> Result<Arc<dyn ExecutionPlan>> {
        Ok(Arc::new(self.rebuilt(
            super::only_child("CsrExpandExec", children)?,
            self.fetch,
        )))
    }

    fn fetch(&self) -> Option<usize> {
        self.fetch
    }

    /// Input rows times the average degree: a guess, good enough to tell the few rows of a
    /// key lookup's hops (not worth spreading over partitions) from a scan's many.
    fn partition_statistics(
        &self,
        partition: Option<usize>,
    ) -> Result<Arc<datafusion::common::Statistics>> {
        let data = &self.spec.data;
        let degree = data.index.table_rows as f64 / data.near_keys.len().max(1) as f64
            * self.spec.orientations.len() as f64;
        let input = self.input.partition_statistics(partition)?.num_rows;
        let mut rows = input
            .map(|n| (n as f64 * degree).ceil() as usize)
            .to_inexact();
        if let (Some(f), Some(&n)) = (self.fetch, rows.get_value()) {
            rows = datafusion::common::stats::Precision::Inexact(n.min(f));
        }
        Ok(Arc::new(datafusion::common::Statistics {
            num_rows: rows,
            ..datafusion::common::Statistics::new_unknown(&self.schema)
        }))
    }

    /// Parameter values for the filters of a kept plan (`operators::params`).
    fn with_new_state(
        &self,
        state: Arc<dyn std::any::Any + Send + Sync>,
    ) -> Option<Arc<dyn ExecutionPlan>> {
        let values = state.downcast::<super::params::ParamValues>().ok()?;
        let mut spec = self.spec.as_ref().clone();
        CompiledFilter::bind_all([&mut spec.edge_filter, &mut spec.target_filter], &values)?;
        let mut n = self.rebuilt(self.input.clone(), self.fetch);
        n.spec = Arc::new(spec);
        Some(Arc::new(n))
    }

    /// A LIMIT above (without ORDER BY: any rows will do) stops the expansion early.
    fn with_fetch(&self, limit: Option<usize>) -> Option<Arc<dyn ExecutionPlan>> {
        self.absorbs_limits
            .then(|| Arc::new(self.rebuilt(self.input.clone(), limit)) as Arc<dyn ExecutionPlan>)
    }

    fn maintains_input_order(&self) -> Vec<bool> {
        // Each input row's expansions come out together, in input order.
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
            rows_in: MetricBuilder::new(m).counter("rows_in", partition),
            edges_scanned: MetricBuilder::new(m).counter("edges_scanned", partition),
            rows_taken: MetricBuilder::new(m).counter("rows_taken", partition),
            output_rows: MetricBuilder::new(m).output_rows(partition),
            filter_evals: MetricBuilder::new(m).counter("target_filter_evals", partition),
        };
        let spec = self.spec.clone();
        let schema = self.schema.clone();
        let out_schema = schema.clone();
        let mut sel = Selection::default();
        let elapsed = MetricBuilder::new(m).elapsed_compute(partition);
        Ok(super::limited_stream(
            input,
            out_schema,
            self.fetch,
            elapsed,
            move |b, _| spec.expand(b, &schema, &counters, &mut sel),
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::functions::CypherFn;
    use arrow::array::Int64Array;
    use arrow::datatypes::{DataType, Field, Schema};
    use datafusion::common::DFSchema;
    use datafusion::datasource::MemTable;
    use datafusion::logical_expr::{col, lit};
    use datafusion::prelude::SessionContext;

    /// Rows reached more than once are evaluated once, and every position still gets its
    /// row's answer (duplicates, any order); a filter of DataFusion's own functions alone
    /// takes the rows as given.
    #[tokio::test]
    async fn mask_answers_every_position_whether_or_not_rows_repeat() {
        let schema = Arc::new(Schema::new(vec![Field::new("x", DataType::Int64, true)]));
        let xs: Vec<Option<i64>> = (0..40).map(|i| (i % 7 != 3).then_some(i)).collect();
        let batch =
            RecordBatch::try_new(schema.clone(), vec![Arc::new(Int64Array::from(xs.clone()))])
                .unwrap();
        let table = MemTable::try_new(schema.clone(), vec![vec![batch]]).unwrap();
        let store = TableColumns::new(Arc::new(table), "t");
        let df_schema = DFSchema::try_from(schema.as_ref().clone()).unwrap();
        let state = SessionContext::new().state();
        store.ensure(&state, &["x".to_string()]).await.unwrap();
        let ours = CypherFn::Eq.call(vec![col("x") % lit(3i64), lit(0i64)]);
        let theirs = (col("x") % lit(3i64)).eq(lit(0i64));
        let want = |i: u32| xs[i as usize].is_some_and(|x| x % 3 == 0);
        // Many repeats, no repeats, and too few rows to sort.
        let cases: Vec<Vec<u32>> = vec![
            (0..200).map(|i| (i * 17 % 40) as u32).rev().collect(),
            (0..40).rev().collect(),
            vec![5, 5, 3, 9],
        ];
        for (pred, row_wise) in [(ours, true), (theirs, false)] {
            let filter = CompiledFilter::new(
                state
                    .create_physical_expr(pred.clone(), &df_schema)
                    .unwrap(),
                vec!["x".into()],
                schema.clone(),
                None,
            );
            assert_eq!(filter.row_wise, row_wise, "{pred}");
            for idx in &cases {
                let got = filter
                    .mask(&store, &UInt32Array::from(idx.clone()))
                    .unwrap();
                let expected: Vec<bool> = idx.iter().map(|&i| want(i)).collect();
                assert_eq!(got, expected, "{pred} over {idx:?}");
            }
        }
    }

    /// An optional expansion keeps the matches in row order and gives each row without one
    /// (first, between and last) a row of nulls.
    #[test]
    fn unmatched_rows_come_out_once_with_nulls() {
        let (rows, erows, nbrs) = with_unmatched(5, &[1, 1, 3], vec![10, 11, 12], vec![7, 8, 9]);
        assert_eq!(rows, [0, 1, 1, 2, 3, 4]);
        assert_eq!(erows, [None, Some(10), Some(11), None, Some(12), None]);
        assert_eq!(nbrs, [None, Some(7), Some(8), None, Some(9), None]);
        let (rows, erows, _) = with_unmatched(2, &[], vec![], vec![]);
        assert_eq!((rows, erows), (vec![0, 1], vec![None, None]));
    }
}
