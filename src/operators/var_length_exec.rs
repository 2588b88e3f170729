//! `VarLengthExec`: the physical variable-length traversal. Depth-first over the CSR(s), a
//! relationship at most once per path, one output row per path within the length bounds; in
//! distinct mode, breadth-first with a visited bitmap, one row per reachable end node.

use super::cancel::Checkpoint;
pub use super::traversal::{PathWalk, TraversalSpec};
use super::var_length::{encode_eid, EID_TABLE_SHIFT};
use crate::csr::as_i64;
use arrow::array::{Array, ArrayRef, ListArray, RecordBatch, UInt32Array, UInt64Array};
use arrow::buffer::OffsetBuffer;
use arrow::datatypes::{Field, SchemaRef};
use datafusion::common::Result;
use datafusion::execution::TaskContext;
use datafusion::physical_plan::metrics::{ExecutionPlanMetricsSet, MetricBuilder};
use datafusion::physical_plan::{
    DisplayAs, DisplayFormatType, ExecutionPlan, PlanProperties, SendableRecordBatchStream,
};
use std::fmt;
use std::sync::Arc;

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
    /// Whether its rows may carry paths longer than `steps` (every path of an unbounded or
    /// long pattern; not distinct ends or shortest paths).
    pub fn emits_long_paths(&self, steps: u64) -> bool {
        let s = &self.spec;
        !s.distinct && s.shortest.is_none() && s.max.is_none_or(|m| m > steps)
    }

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
    /// The distinct ends reachable from each row of `batch`, stopping once `limit` rows are
    /// out (distinct mode: a row's output is at most one row per node). Its searches tick
    /// `cp`; the edges they examined are counted once it succeeds.
    fn expand_distinct(
        &self,
        batch: &RecordBatch,
        schema: &SchemaRef,
        edges_seen: &datafusion::physical_plan::metrics::Count,
        limit: usize,
        cp: &Checkpoint,
    ) -> Result<RecordBatch> {
        let keys = as_i64(batch.column(self.key_idx).as_ref()).map_err(ext)?;
        let mut out = Out::default();
        let mut examined = 0;
        for i in 0..batch.num_rows() {
            if out.rows.len() >= limit {
                break;
            }
            let Some(o) = self.start_of(&keys, i) else {
                continue;
            };
            examined += self.reachable(o, cp, &mut |end| {
                out.push(i as u32, end);
                out.rows.len() < limit
            })?;
        }
        let built = self.build(batch, schema, out)?;
        edges_seen.add(examined);
        Ok(built)
    }

    /// Each row of `batch` with paths and their number (appended as the last column), up to
    /// `limit` rows: the shortest paths a search finds are counted through its predecessors,
    /// without building one. Its searches tick `cp`; the edges they examined are counted once
    /// it succeeds.
    fn counts(
        &self,
        batch: &RecordBatch,
        schema: &SchemaRef,
        edges_seen: &datafusion::physical_plan::metrics::Count,
        limit: usize,
        cp: &Checkpoint,
    ) -> Result<RecordBatch> {
        let keys = as_i64(batch.column(self.key_idx).as_ref()).map_err(ext)?;
        let mut rows = Vec::new();
        let mut counts = Vec::new();
        let mut total = 0;
        for i in 0..batch.num_rows() {
            if rows.len() >= limit {
                break;
            }
            let mut out = Out::default();
            let (walk, examined) = self.start_walk((batch, &keys), i, &mut out, cp)?;
            total += examined;
            let n = match walk {
                Some(Walking::Shortest(_, found, _)) => found.count(),
                // `SHORTEST k`: its few paths are out already.
                None => out.rows.len() as u128,
                Some(Walking::Paths(..)) => {
                    return datafusion::common::internal_err!(
                        "only shortest paths are counted without building them"
                    )
                }
            };
            if n == 0 {
                continue;
            }
            let n = i64::try_from(n).map_err(|_| {
                crate::error::RuntimeError::new(
                    crate::error::ErrorClass::ArithmeticError,
                    "IntegerOverflow",
                    "more shortest paths than a 64-bit integer counts",
                )
            })?;
            rows.push(i as u32);
            counts.push(n);
        }
        let rows = UInt32Array::from(rows);
        let mut cols: Vec<ArrayRef> = batch
            .columns()
            .iter()
            .map(|a| arrow::compute::take(a.as_ref(), &rows, None))
            .collect::<std::result::Result<_, _>>()?;
        cols.push(Arc::new(arrow::array::Int64Array::from(counts)));
        let built = RecordBatch::try_new_with_options(
            schema.clone(),
            cols,
            &arrow::array::RecordBatchOptions::new().with_row_count(Some(rows.len())),
        )?;
        edges_seen.add(total);
        Ok(built)
    }

    /// The walk of row `i` of `batch`: every path from its start node, or the shortest paths
    /// its search found (`SHORTEST k` paths, few, go into `out` at once); the relationships
    /// the search examined. The search ticks `cp`.
    fn start_walk(
        &self,
        (batch, keys): (&RecordBatch, &arrow::array::Int64Array),
        i: usize,
        out: &mut Out,
        cp: &Checkpoint,
    ) -> Result<(Option<Walking>, usize)> {
        use cypher::ast::Shortest;
        let Some(o) = self.start_of(keys, i) else {
            return Ok((None, 0));
        };
        let row = i as u32;
        let Some(sh) = &self.shortest else {
            return Ok((Some(Walking::Paths(row, self.walk(o))), 0));
        };
        let mut search = super::shortest::Search::new(self, sh, cp);
        let source = (self.start, o);
        let found = match sh.target_idx {
            Some(t) => {
                let targets = as_i64(batch.column(t).as_ref()).map_err(ext)?;
                if targets.is_null(i) {
                    return Ok((None, 0));
                }
                let Some(to) = sh.end_keys.ordinal(targets.value(i)) else {
                    return Ok((None, 0));
                };
                let target = (self.end, to);
                match sh.mode {
                    Shortest::Any => search.between(source, target, false)?,
                    Shortest::All => search.between(source, target, true)?,
                    Shortest::K(k) => {
                        let mut emit = |end: u32, path: &[super::shortest::Step]| {
                            out.push_path(self, row, end, path)
                        };
                        search.k_shortest(source, target, k, sh.k_cap, &mut emit)?;
                        return Ok((None, search.examined()));
                    }
                }
            }
            None => search.from(source, sh.mode == Shortest::All)?,
        };
        let walk = found.walk();
        Ok((
            Some(Walking::Shortest(row, Box::new(found), walk)),
            search.examined(),
        ))
    }

    /// The output batch for the rows collected in `out` (indexes into `batch`).
    fn build(&self, batch: &RecordBatch, schema: &SchemaRef, out: Out) -> Result<RecordBatch> {
        let out = match &self.target_filter {
            Some(f) => {
                let ok = f.mask(&self.target, &UInt32Array::from(out.ends.clone()))?;
                out.retain(&ok)
            }
            None => out,
        };
        if out.too_big {
            // The table goes in the top bits of a path's edge ids.
            return Err(datafusion::error::DataFusionError::Execution(format!(
                "row ids of 2^{EID_TABLE_SHIFT} or more are not supported in variable-length paths"
            )));
        }
        let count = out.rows.len();
        let rows = UInt32Array::from(out.rows);
        let mut cols: Vec<ArrayRef> = batch
            .columns()
            .iter()
            .map(|a| arrow::compute::take(a.as_ref(), &rows, None))
            .collect::<std::result::Result<_, _>>()?;
        let offsets = OffsetBuffer::new(out.offsets.into());
        let list = ListArray::try_new(
            Arc::new(Field::new_list_field(
                arrow::datatypes::DataType::UInt64,
                true,
            )),
            offsets.clone(),
            Arc::new(UInt64Array::from(out.values)),
            None,
        )?;
        cols.push(Arc::new(list));
        if let Some(e) = &self.elems {
            let (nodes, rels) = super::path_elems::build(self, e, &out.steps)?;
            let item =
                |t: &arrow::datatypes::DataType| Arc::new(Field::new_list_field(t.clone(), true));
            cols.push(Arc::new(ListArray::try_new(
                item(nodes.data_type()),
                offsets.clone(),
                nodes,
                None,
            )?));
            cols.push(Arc::new(ListArray::try_new(
                item(rels.data_type()),
                offsets,
                rels,
                None,
            )?));
        }
        let ends = UInt32Array::from(out.ends);
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

pub(super) fn ext(e: crate::Error) -> datafusion::error::DataFusionError {
    e.into()
}

/// The paths of one input row being handed out, batch by batch.
enum Walking {
    /// Every path from its start node, depth-first.
    Paths(u32, PathWalk),
    /// The shortest paths its search found, one by one.
    Shortest(u32, Box<super::shortest::Found>, super::shortest::FoundWalk),
}

impl Walking {
    /// More paths into `out` while `more(out)`; whether the walk is over. Counts the edges a
    /// depth-first walk examines into `examined`, up to `budget`.
    fn resume(
        &mut self,
        spec: &TraversalSpec,
        out: &mut Out,
        more: &dyn Fn(&Out) -> bool,
        (examined, budget): (&mut usize, usize),
    ) -> bool {
        match self {
            Walking::Paths(row, w) => {
                let row = *row;
                let (n, done) = spec.resume(
                    w,
                    &mut |end, path| {
                        out.push_path(spec, row, end, path);
                        more(out)
                    },
                    budget - *examined,
                );
                *examined += n;
                done
            }
            Walking::Shortest(row, found, walk) => {
                let mut path = Vec::new();
                while more(out) {
                    match walk.next(found, &mut path) {
                        Some(end) => out.push_path(spec, *row, end, &path),
                        None => return true,
                    }
                }
                false
            }
        }
    }
}

/// Output rows being collected: input row, end node, and the path's edge ids.
struct Out {
    rows: Vec<u32>,
    ends: Vec<u32>,
    offsets: Vec<i32>,
    values: Vec<u64>,
    /// With path elements: hop, edge row, slot and node per step (offsets as `values`).
    steps: Vec<(usize, u32, usize, u32)>,
    too_big: bool,
}

impl Default for Out {
    fn default() -> Self {
        Self {
            rows: Vec::new(),
            ends: Vec::new(),
            offsets: vec![0],
            values: Vec::new(),
            steps: Vec::new(),
            too_big: false,
        }
    }
}

impl Out {
    /// The rows whose `keep` is true.
    fn retain(self, keep: &[bool]) -> Out {
        let mut o = Out {
            too_big: self.too_big,
            ..Out::default()
        };
        for (i, _) in keep.iter().enumerate().filter(|(_, &k)| k) {
            let (a, b) = (self.offsets[i] as usize, self.offsets[i + 1] as usize);
            o.values.extend_from_slice(&self.values[a..b]);
            if !self.steps.is_empty() {
                o.steps.extend_from_slice(&self.steps[a..b]);
            }
            o.push(self.rows[i], self.ends[i]);
        }
        o
    }

    /// The first `n` rows only (the paths of a row whose search starts again elsewhere).
    fn truncate(&mut self, n: usize) {
        if n >= self.rows.len() {
            return;
        }
        self.rows.truncate(n);
        self.ends.truncate(n);
        self.offsets.truncate(n + 1);
        let steps = self.offsets[n] as usize;
        self.values.truncate(steps);
        self.steps.truncate(steps);
    }

    fn push(&mut self, row: u32, end: u32) {
        self.rows.push(row);
        self.ends.push(end);
        self.offsets.push(self.values.len() as i32);
    }

    fn push_path(&mut self, spec: &TraversalSpec, row: u32, end: u32, path: &[(usize, u32, u32)]) {
        for &(h, r, n) in path {
            let id = spec.rowids[h].value(r as usize);
            self.too_big |= id >= 1 << EID_TABLE_SHIFT;
            self.values.push(encode_eid(spec.hops[h].rel, id));
            if spec.elems.is_some() {
                self.steps.push((h, r, spec.hops[h].to, n));
            }
        }
        self.push(row, end);
    }
}

/// Edges a path walk examines before it lets other tasks run (and a timeout fire), even when
/// no path matched.
const WALK_BUDGET: usize = 1 << 20;

/// Path steps (edge ids) an output batch holds at most: long paths (`*` without an upper
/// bound) make batches of fewer rows, so a batch stays a few MB however long its paths.
const BATCH_PATH_STEPS: usize = 1 << 20;
/// The same with the paths' elements as values (a node and a relationship struct per step).
const BATCH_ELEMENT_STEPS: usize = 1 << 16;

impl TraversalSpec {
    /// Path steps an output batch holds at most.
    fn batch_steps(&self) -> usize {
        if self.elems.is_some() {
            BATCH_ELEMENT_STEPS
        } else {
            BATCH_PATH_STEPS
        }
    }
}

/// Paths of `rows`' rows into `out`: the paused `walk` resumed, then walks started from row
/// `next` on, until `out` holds `cap` rows (or its share of path steps) or the walk budget is
/// spent. Returns the edges examined. A search stopped by `cp`'s budget is undone (its row
/// is `next` again, its paths gone from `out`): it starts again on the blocking pool.
fn fill(
    spec: &TraversalSpec,
    rows: (&RecordBatch, &arrow::array::Int64Array),
    next: &mut usize,
    walk: &mut Option<Walking>,
    cap: usize,
    out: &mut Out,
    cp: &Checkpoint,
) -> Result<usize> {
    let mut examined = 0;
    let steps = spec.batch_steps();
    let more = |o: &Out| o.rows.len() < cap && o.values.len() < steps;
    while more(out) && examined < WALK_BUDGET {
        let Some(w) = walk.as_mut() else {
            if *next >= rows.0.num_rows() {
                break;
            }
            let i = *next;
            *next += 1;
            let kept = out.rows.len();
            let (w, n) = match spec.start_walk(rows, i, out, cp) {
                Ok(started) => started,
                Err(_) if cp.over_budget() => {
                    out.truncate(kept);
                    *next = i;
                    break;
                }
                Err(e) => return Err(e),
            };
            *walk = w;
            examined += n;
            continue;
        };
        if w.resume(spec, out, &more, (&mut examined, WALK_BUDGET)) {
            *walk = None;
        }
    }
    Ok(examined)
}

/// An input batch being walked: its keys, its next row, and the walk of the row before it.
struct Walked {
    batch: RecordBatch,
    keys: arrow::array::Int64Array,
    next: usize,
    walk: Option<Walking>,
}

impl Walked {
    fn exhausted(&self) -> bool {
        self.walk.is_none() && self.next >= self.batch.num_rows()
    }

    /// [`fill`] up to `cap` rows, and the batch of their paths (none without a path); the
    /// edges examined.
    fn fill_batch(
        &mut self,
        spec: &TraversalSpec,
        schema: &SchemaRef,
        cap: usize,
        cp: &Checkpoint,
    ) -> Result<(usize, Option<RecordBatch>)> {
        let mut out = Out::default();
        let rows = (&self.batch, &self.keys);
        let examined = fill(
            spec,
            rows,
            &mut self.next,
            &mut self.walk,
            cap,
            &mut out,
            cp,
        )?;
        let built = match out.rows.is_empty() {
            true => None,
            false => Some(spec.build(&self.batch, schema, out)?),
        };
        Ok((examined, built))
    }
}

/// Where a traversal's stream is: its input, the input batch being walked, the rows still
/// wanted.
struct StreamState {
    input: SendableRecordBatchStream,
    current: Option<Walked>,
    remaining: Option<usize>,
    /// A search outgrew the work done in place: from then on batches are filled on the
    /// blocking pool, where dropping the stream stops them (`cancel::run_blocking`).
    offloaded: bool,
    /// Time spent filling batches since the stream last yielded.
    busy: std::time::Duration,
}

/// The paths of every input row, in batches of about [`super::TARGET_BATCH_ROWS`] rows however
/// many paths one row has (a walk pauses when a batch is full), ending after `fetch` rows.
fn path_stream(
    input: SendableRecordBatchStream,
    spec: Arc<TraversalSpec>,
    schema: SchemaRef,
    fetch: Option<usize>,
    out_rows: datafusion::physical_plan::metrics::Count,
    edges: datafusion::physical_plan::metrics::Count,
    elapsed: datafusion::physical_plan::metrics::Time,
) -> SendableRecordBatchStream {
    use datafusion::physical_plan::stream::RecordBatchStreamAdapter;
    use futures::StreamExt;
    let st = StreamState {
        input,
        current: None,
        remaining: fetch,
        offloaded: false,
        busy: std::time::Duration::ZERO,
    };
    let out_schema = schema.clone();
    let stream = futures::stream::unfold(st, move |mut st| {
        let (spec, schema, out_rows, edges, elapsed) = (
            spec.clone(),
            schema.clone(),
            out_rows.clone(),
            edges.clone(),
            elapsed.clone(),
        );
        async move {
            loop {
                if st.remaining == Some(0) {
                    return None;
                }
                // A consumer that pulls without ever waiting (an aggregate) would otherwise
                // keep this task from seeing that the query was dropped (a timeout); so would
                // batches of long paths, each long to build: let a timeout (and other tasks)
                // in once they took a slice of time.
                tokio::task::consume_budget().await;
                if st.busy >= super::cancel::SLICE_TIME {
                    st.busy = std::time::Duration::ZERO;
                    tokio::task::yield_now().await;
                }
                let mut walked = match st.current.take() {
                    Some(c) => c,
                    None => match st.input.next().await? {
                        Ok(b) => match as_i64(b.column(spec.key_idx).as_ref()) {
                            Ok(keys) => Walked {
                                batch: b,
                                keys,
                                next: 0,
                                walk: None,
                            },
                            Err(e) => {
                                st.remaining = Some(0);
                                return Some((Err(ext(e)), st));
                            }
                        },
                        Err(e) => {
                            st.remaining = Some(0);
                            return Some((Err(e), st));
                        }
                    },
                };
                let started = std::time::Instant::now();
                let cap = super::TARGET_BATCH_ROWS.min(st.remaining.unwrap_or(usize::MAX));
                let (walked, filled) = if st.offloaded {
                    let (spec, schema, elapsed) = (spec.clone(), schema.clone(), elapsed.clone());
                    let job = super::cancel::run_blocking(move |cp| {
                        let timer = elapsed.timer();
                        let filled = walked.fill_batch(&spec, &schema, cap, &cp);
                        timer.done();
                        Ok((walked, filled))
                    });
                    match job.await {
                        Ok(done) => done,
                        Err(e) => {
                            st.remaining = Some(0);
                            return Some((Err(e), st));
                        }
                    }
                } else {
                    let timer = elapsed.timer();
                    let cp = Checkpoint::with_budget(super::cancel::IN_POLL_UNITS);
                    let filled = walked.fill_batch(&spec, &schema, cap, &cp);
                    timer.done();
                    st.offloaded = cp.over_budget();
                    (walked, filled)
                };
                st.busy += started.elapsed();
                let filled = filled.and_then(|f| spec.intact().map(|()| f));
                let (examined, produced) = match filled {
                    Ok(f) => f,
                    Err(e) => {
                        st.remaining = Some(0);
                        return Some((Err(e), st));
                    }
                };
                edges.add(examined);
                let exhausted = walked.exhausted();
                if !exhausted {
                    st.current = Some(walked);
                }
                match produced {
                    Some(b) => {
                        out_rows.add(b.num_rows());
                        if let Some(r) = st.remaining.as_mut() {
                            *r -= b.num_rows();
                        }
                        return Some((Ok(b), st));
                    }
                    // A long walk without output: let other tasks (a timeout) run.
                    None if !exhausted => tokio::task::yield_now().await,
                    None => {}
                }
            }
        }
    });
    Box::pin(RecordBatchStreamAdapter::new(out_schema, stream))
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
                if let Some(p) = &s.target_filter {
                    write!(f, ", filter={}", crate::functions::held::shown(&p.expr))?;
                }
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
    super::unary_exec!("VarLengthExec");

    fn with_new_children(
        self: Arc<Self>,
        children: Vec<Arc<dyn ExecutionPlan>>,
    ) -> Result<Arc<dyn ExecutionPlan>> {
        Ok(Arc::new(self.rebuilt(
            super::only_child("VarLengthExec", children)?,
            self.fetch,
        )))
    }

    fn fetch(&self) -> Option<usize> {
        self.fetch
    }

    /// Parameter values for the end-node filter of a kept plan (`operators::params`).
    fn with_new_state(
        &self,
        state: Arc<dyn std::any::Any + Send + Sync>,
    ) -> Option<Arc<dyn ExecutionPlan>> {
        let values = state.downcast::<super::params::ParamValues>().ok()?;
        let mut spec = self.spec.as_ref().clone();
        super::csr_expand_exec::CompiledFilter::bind_all([&mut spec.target_filter], &values)?;
        let mut n = self.rebuilt(self.input.clone(), self.fetch);
        n.spec = Arc::new(spec);
        Some(Arc::new(n))
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
        let elapsed = MetricBuilder::new(&self.metrics).elapsed_compute(partition);
        let spec = self.spec.clone();
        let schema = self.schema.clone();
        // A row's search (the shortest paths, the distinct ends) can cover the whole graph:
        // past a budget of work its slice runs on the blocking pool, where it can be stopped.
        if spec.count {
            let out_schema = schema.clone();
            return Ok(super::limited_stream_offloading(
                input,
                out_schema,
                self.fetch,
                elapsed,
                move |b, limit, cp| {
                    let r = spec.counts(b, &schema, &edges, limit.unwrap_or(usize::MAX), cp)?;
                    spec.intact()?;
                    out_rows.add(r.num_rows());
                    Ok(r)
                },
            ));
        }
        if !spec.distinct {
            return Ok(path_stream(
                input, spec, schema, self.fetch, out_rows, edges, elapsed,
            ));
        }
        let out_schema = schema.clone();
        Ok(super::limited_stream_offloading(
            input,
            out_schema,
            self.fetch,
            elapsed,
            move |b, limit, cp| {
                let limit = limit.unwrap_or(usize::MAX);
                let r = spec.expand_distinct(b, &schema, &edges, limit, cp)?;
                spec.intact()?;
                out_rows.add(r.num_rows());
                Ok(r)
            },
        ))
    }
}
