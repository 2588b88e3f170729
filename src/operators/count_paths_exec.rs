//! `CountPathsExec`: the factorized count. Rows per root node come from the input; each arm's
//! paths per root node are counted from the arm's far end back to the root
//! (`count[x] += count[y]` over edges x -> y passing the relationship filter, `x` passing its
//! target filter); the answer is the sum over roots of rows x the product of arm counts.
//! A property of an arm's last node is pushed back the same way ([`Acc`]: its sum, how many
//! values, least and greatest), then scaled by the other arms' counts.

use super::cancel::Checkpoint;
use super::count_paths::{JoinStep, ValueKind};
use super::csr_expand::CsrData;
use super::csr_expand_exec::{retain, CompiledFilter};
use crate::csr::as_i64;
use arrow::array::{Array, Int64Array, RecordBatch, UInt32Array};
use arrow::datatypes::SchemaRef;
use datafusion::common::Result;
use datafusion::execution::TaskContext;
use datafusion::physical_expr::{Distribution, EquivalenceProperties};
use datafusion::physical_plan::execution_plan::{Boundedness, EmissionType};
use datafusion::physical_plan::metrics::{ExecutionPlanMetricsSet, MetricBuilder};
use datafusion::physical_plan::stream::RecordBatchStreamAdapter;
use datafusion::physical_plan::{
    DisplayAs, DisplayFormatType, ExecutionPlan, Partitioning, PlanProperties,
    SendableRecordBatchStream,
};
use futures::{StreamExt, TryStreamExt};
use std::fmt;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

#[derive(Debug, Clone)]
pub struct HopSpec {
    pub rel_type: String,
    pub orientations: Vec<bool>,
    pub data: CsrData,
    pub target_filter: Option<CompiledFilter>,
    pub edge_filter: Option<CompiledFilter>,
    /// Taken `min..=max` times (`count_paths::CountHop::lengths`).
    pub lengths: (u64, u64),
    /// Paths this hop and the next of its arm exclude.
    pub fold: Option<FoldSpec>,
    /// Arms hanging from this hop's far node (`count_paths::CountHop::branches`).
    pub branches: Vec<Vec<HopSpec>>,
    /// Alone in its arm, a node without a match counts once (`count_paths::CountHop::optional`).
    pub optional: bool,
    /// Optional, counted per row only where it matched (`count_paths::CountHop::matched_only`).
    pub matched_only: bool,
}

/// Paths a hop and the next of its arm exclude (`count_paths::Fold`); counts only.
#[derive(Debug, Clone)]
pub struct FoldSpec {
    pub distinct_ends: bool,
    pub distinct_edges: bool,
    /// The hop from the near node of the fold's hop that must not reach the far node of the
    /// next (its relationship filter compiled).
    pub absent: Option<Box<HopSpec>>,
}

/// Whether the exclusions of `arm` can be computed: each on a hop taken once followed by
/// another taken once, no two on consecutive hops (their exclusions would overlap), `z = x`
/// only between nodes of one table, the absent hop from the first node's table to the
/// last's, and no self-loop in the tables involved.
fn folds_valid(arm: &[HopSpec]) -> bool {
    let branches_ok = |h: &HopSpec| h.branches.iter().all(|b| !b.is_empty() && folds_valid(b));
    arm.iter().all(branches_ok)
        && arm.iter().enumerate().all(|(k, h)| {
            let Some(f) = &h.fold else { return true };
            let Some(next) = arm.get(k + 1) else {
                return false;
            };
            let same =
                |a: &Arc<crate::csr::NodeKeys>, b: &Arc<crate::csr::NodeKeys>| Arc::ptr_eq(a, b);
            let loops = |h: &HopSpec| h.data.self_loops();
            let absent_ok = f.absent.as_deref().is_none_or(|a| {
                same(&a.data.near_keys, &h.data.near_keys)
                    && same(&a.data.far_keys, &next.data.far_keys)
                    && a.lengths == (1, 1)
                    && a.fold.is_none()
                    && !loops(a)
            });
            h.lengths == (1, 1)
                && h.branches.is_empty()
                && next.lengths == (1, 1)
                && next.fold.is_none()
                && !loops(h)
                && !loops(next)
                && (!(f.distinct_ends || f.distinct_edges)
                    || same(&h.data.near_keys, &next.data.far_keys))
                && (!f.distinct_edges || Arc::ptr_eq(&h.data.index, &next.data.index))
                && absent_ok
        })
}

/// Whether each optional hop of `arm` (and of its branches) is the arm's only hop, taken once,
/// with nothing hanging from it and no exclusion.
fn optionals_valid(arm: &[HopSpec]) -> bool {
    arm.iter().all(|h| {
        let alone = arm.len() == 1 && h.branches.is_empty() && h.fold.is_none();
        (!h.optional || (alone && h.lengths == (1, 1)))
            && h.branches.iter().all(|b| optionals_valid(b))
    })
}

/// Whether any hop of `arms` or of their branches is `is`.
fn any_hop(arms: &[Vec<HopSpec>], is: &dyn Fn(&HopSpec) -> bool) -> bool {
    (arms.iter().flatten()).any(|h| is(h) || any_hop(&h.branches, is))
}

fn any_optional(arms: &[Vec<HopSpec>]) -> bool {
    any_hop(arms, &|h| h.optional)
}

fn any_matched_only(arms: &[Vec<HopSpec>]) -> bool {
    any_hop(arms, &|h| h.matched_only)
}

/// `arms` with the hops counted only where they matched taken as plain hops: the paths
/// where they matched.
fn where_matched(arms: &[Vec<HopSpec>]) -> Vec<Vec<HopSpec>> {
    let hop = |h: &HopSpec| HopSpec {
        optional: h.optional && !h.matched_only,
        matched_only: false,
        branches: where_matched(&h.branches),
        ..h.clone()
    };
    arms.iter().map(|a| a.iter().map(hop).collect()).collect()
}

/// A property of an arm's last node computed over the paths (`count_paths::PathValue`).
#[derive(Debug, Clone)]
pub struct ValueSpec {
    pub kind: ValueKind,
    pub arm: usize,
    /// The property of every node of the arm's last table, by ordinal (one array per
    /// property: specs of one property share it, and its pass).
    pub values: Arc<Int64Array>,
}

/// What a `CountPathsExec` outputs: the total, or each input row with its count.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CountOutput {
    Total,
    /// `distinct`: distinct far nodes of the single hop.
    PerRow {
        distinct: bool,
    },
}

#[derive(Debug)]
pub struct CountPathsExec {
    input: Arc<dyn ExecutionPlan>,
    key_idx: usize,
    arms: Arc<Vec<Vec<HopSpec>>>,
    /// Closes the single arm onto the root (or the second of two arms onto the first's end):
    /// cycles are counted.
    close: Option<Arc<HopSpec>>,
    /// A pattern of several cycles, one arm per step (`count_paths::JoinStep`).
    joins: Arc<Vec<JoinStep>>,
    values: Arc<Vec<ValueSpec>>,
    output: CountOutput,
    schema: SchemaRef,
    cache: Arc<PlanProperties>,
    metrics: ExecutionPlanMetricsSet,
}

impl CountPathsExec {
    /// Counts the cycles closed by `close` instead of the arms' paths: a single arm of two
    /// hops or more and `close` from its end back to the root, or two arms and `close` from
    /// the second's end to the first's.
    pub fn with_close(mut self, close: HopSpec) -> Result<Self> {
        let lens: Vec<usize> = self.arms.iter().map(|a| a.len()).collect();
        let once = self.arms.iter().flatten().all(|h| h.lengths == (1, 1));
        let cycle = match lens.as_slice() {
            [k] => *k >= 2,
            [i, j] => *i >= 1 && *j >= 1,
            _ => false,
        };
        if !cycle
            || !once
            || close.lengths != (1, 1)
            || self.output == (CountOutput::PerRow { distinct: true })
        {
            return datafusion::common::internal_err!("CountPathsExec: bad cycle");
        }
        let extra = |h: &HopSpec| h.fold.is_some() || !h.branches.is_empty() || h.optional;
        if !self.values.is_empty() || self.arms.iter().flatten().any(extra) {
            return datafusion::common::internal_err!(
                "CountPathsExec: values or exclusions of a cycle"
            );
        }
        self.close = Some(Arc::new(close));
        Ok(self)
    }

    /// Counts the pattern `joins` describes over the arms instead (each arm a step: its hop
    /// to a new node, then the closing hops from that node's table).
    pub fn with_joins(mut self, joins: Vec<JoinStep>) -> Result<Self> {
        let plain = |h: &HopSpec| {
            h.lengths == (1, 1) && h.fold.is_none() && h.branches.is_empty() && !h.optional
        };
        // Tables are compared by their sizes: a decoded plan's are copies.
        let table_of = |node: usize| match node {
            0 => self.arms[0][0].data.near_keys.len(),
            i => self.arms[i - 1][0].data.far_keys.len(),
        };
        let step_ok = |j: usize, s: &JoinStep, arm: &[HopSpec]| {
            // The hop starts at a node bound before; each closing hop joins the new node (at
            // its near end when walked backwards from the earlier node, else at its far end)
            // to a node bound before.
            let closes_ok = s.closes.iter().zip(&arm[1..]).all(|(&(onto, back), c)| {
                let at_new = match back {
                    true => &c.data.near_keys,
                    false => &c.data.far_keys,
                };
                onto <= j && at_new.len() == table_of(j + 1) && c.target_filter.is_none()
            });
            s.from <= j
                && arm.len() == s.closes.len() + 1
                && arm[0].data.near_keys.len() == table_of(s.from)
                && closes_ok
        };
        let steps_ok = joins.len() == self.arms.len()
            && (joins.iter().zip(self.arms.iter()).enumerate()).all(|(j, (s, a))| step_ok(j, s, a));
        let bad = !steps_ok
            || !self.arms.iter().flatten().all(plain)
            || self.close.is_some()
            || !self.values.is_empty()
            || self.output == (CountOutput::PerRow { distinct: true });
        if bad {
            return datafusion::common::internal_err!("CountPathsExec: bad joins");
        }
        self.joins = Arc::new(joins);
        Ok(self)
    }

    /// Also computes `values` over the paths (not of cycles or distinct neighbours).
    pub fn with_values(mut self, values: Vec<ValueSpec>) -> Result<Self> {
        let bad = values.iter().any(|v| {
            let last = self.arms.get(v.arm).and_then(|a| a.last());
            last.is_none_or(|h| v.values.len() != h.data.far_keys.len())
        });
        let folds = self.arms.iter().flatten().any(|h| h.fold.is_some());
        let distinct = self.output == (CountOutput::PerRow { distinct: true });
        let optional = any_optional(&self.arms);
        if bad || (!values.is_empty() && (distinct || folds || optional || !self.joins.is_empty()))
        {
            return datafusion::common::internal_err!("CountPathsExec: bad values");
        }
        self.values = Arc::new(values);
        Ok(self)
    }

    pub fn try_new(
        input: Arc<dyn ExecutionPlan>,
        key_idx: usize,
        arms: Vec<Vec<HopSpec>>,
        output: CountOutput,
        schema: SchemaRef,
    ) -> Result<Self> {
        let one_hop = arms.len() == 1
            && arms[0].len() == 1
            && arms[0][0].lengths == (1, 1)
            && arms[0][0].branches.is_empty();
        // A hop taken several times goes from a node table to itself.
        let repeatable = |h: &HopSpec| {
            let (min, max) = h.lengths;
            (min, max) == (1, 1)
                || (min <= max && max >= 1 && Arc::ptr_eq(&h.data.near_keys, &h.data.far_keys))
        };
        if arms.is_empty()
            || arms.iter().any(|a| a.is_empty())
            || !arms.iter().flatten().all(repeatable)
            || key_idx >= input.schema().fields().len()
            || (output == CountOutput::PerRow { distinct: true }
                && (!one_hop || any_optional(&arms)))
            // Counted where matched: per row, of an optional hop.
            || (any_matched_only(&arms) && output != CountOutput::PerRow { distinct: false })
            || any_hop(&arms, &|h| h.matched_only && !h.optional)
            || !arms.iter().all(|a| folds_valid(a) && optionals_valid(a))
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
            close: None,
            joins: Arc::new(vec![]),
            values: Arc::new(vec![]),
            output,
            schema,
            cache,
            metrics: ExecutionPlanMetricsSet::new(),
        })
    }
}

/// Which of `n` rows (ordinals or edge rows) pass `f`; all when there is no filter. The rows
/// are ticked on `work` first: one evaluation over a whole table is not split.
pub(super) fn passing(
    f: &Option<CompiledFilter>,
    store: &crate::csr::TableColumns,
    n: usize,
    work: &Work,
) -> Result<Option<Vec<bool>>> {
    match f {
        None => Ok(None),
        Some(f) => {
            work.tick(n)?;
            Ok(Some(f.mask(
                store,
                &UInt32Array::from_iter_values(0..n as u32),
            )?))
        }
    }
}

/// What is pushed back along the hops: path counts, or a property's values over the paths.
trait Weight: Copy + Send + Sync {
    const ZERO: Self;
    fn plus(self, other: Self) -> Self;
    /// The same paths, each combined with `c` paths of a branch.
    fn times(self, c: u64) -> Self;

    /// `v` less the paths `fold` excludes ([`count_paths_exclude`](super::count_paths_exclude)):
    /// counts only.
    fn exclude(
        _h: &HopSpec,
        _next: &HopSpec,
        _fold: &FoldSpec,
        _after: &[Self],
        _v: &mut [Self],
        _work: &mut Work,
    ) -> Result<()> {
        datafusion::common::internal_err!("CountPathsExec: exclusions of values")
    }
}

impl Weight for u64 {
    const ZERO: Self = 0;
    fn plus(self, other: Self) -> Self {
        self.saturating_add(other)
    }
    fn times(self, c: u64) -> Self {
        self.saturating_mul(c)
    }

    fn exclude(
        h: &HopSpec,
        next: &HopSpec,
        fold: &FoldSpec,
        after: &[Self],
        v: &mut [Self],
        work: &mut Work,
    ) -> Result<()> {
        super::count_paths_exclude::subtract_excluded(h, next, fold, after, v, work)
    }
}

/// An integer property's values over a set of paths: their sum, how many (paths whose value
/// is null don't count), the least and the greatest.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Acc {
    sum: i128,
    n: u64,
    lo: i64,
    hi: i64,
}

impl Weight for Acc {
    const ZERO: Self = Acc {
        sum: 0,
        n: 0,
        lo: i64::MAX,
        hi: i64::MIN,
    };
    fn times(self, c: u64) -> Self {
        Acc::times(self, c)
    }
    fn plus(self, o: Self) -> Self {
        Acc {
            sum: self.sum.saturating_add(o.sum),
            n: self.n.saturating_add(o.n),
            lo: self.lo.min(o.lo),
            hi: self.hi.max(o.hi),
        }
    }
}

impl Acc {
    fn of(v: i64) -> Self {
        Acc {
            sum: v as i128,
            n: 1,
            lo: v,
            hi: v,
        }
    }

    /// The same paths, each `c` times over (combined with `c` paths of other arms).
    fn times(self, c: u64) -> Self {
        match c {
            0 => Self::ZERO,
            c => Acc {
                sum: self.sum.saturating_mul(c as i128),
                n: self.n.saturating_mul(c),
                ..self
            },
        }
    }

    /// The value of `kind`; null where no path had a value.
    fn scalar(&self, kind: ValueKind) -> Result<Option<i128>> {
        const DECIMAL_38: i128 = 10i128.pow(38);
        Ok(match kind {
            ValueKind::NonNull => Some(self.n.min(i64::MAX as u64) as i128),
            _ if self.n == 0 => None,
            ValueKind::Sum if self.sum.abs() >= DECIMAL_38 => {
                return datafusion::common::exec_err!("integer overflow in sum()")
            }
            ValueKind::Sum => Some(self.sum),
            ValueKind::Min => Some(self.lo as i128),
            ValueKind::Max => Some(self.hi as i128),
        })
    }
}

/// The edges a count looked at (its `edges_scanned`), and the checkpoint its loops tick every
/// node or edge: it stops the count once the work it may do in place is done (the count then
/// runs again on the blocking pool), or once its query is dropped.
#[derive(Debug, Default)]
pub(super) struct Work {
    pub(super) edges: usize,
    pub(super) cp: Checkpoint,
    /// The backward counts of branches walked forward from many nodes, by the branch's
    /// address (its hops live as long as the count), computed once per count.
    branch_counts: Vec<(usize, Arc<Vec<u64>>)>,
    /// Where forward steps sum their weights per node.
    tally: Tally,
    /// Scratch that grows with the paths rather than the tables (a joined count's work
    /// items), held from the query's memory pool; none in unit tests.
    pub(super) memory: Option<datafusion::execution::memory_pool::MemoryReservation>,
}

/// Weights summed per node in a dense array kept zero between uses, so that a step costs
/// what its edges cost, whatever the size of the table it reaches.
#[derive(Debug, Default)]
struct Tally {
    slots: Vec<u64>,
    touched: Vec<u32>,
}

impl Tally {
    /// Ready for nodes `0..n`.
    fn fit(&mut self, n: usize) {
        if self.slots.len() < n {
            // Zeroed pages from the allocator, not zeros written.
            self.slots = vec![0; n];
        }
    }

    /// `c` more paths to `y`; a zero weight adds nothing and no node.
    fn add(&mut self, y: u32, c: u64) {
        if c == 0 {
            return;
        }
        let slot = &mut self.slots[y as usize];
        if *slot == 0 {
            self.touched.push(y);
        }
        *slot = slot.saturating_add(c);
    }

    /// The nodes reached with their weights, sorted by node; the tally is zero again.
    fn drain(&mut self) -> Vec<(u32, u64)> {
        self.touched.sort_unstable();
        let out = self
            .touched
            .iter()
            .map(|&y| (y, std::mem::take(&mut self.slots[y as usize])))
            .collect();
        self.touched.clear();
        out
    }
}

impl Work {
    fn new(cp: Checkpoint) -> Self {
        Self {
            cp,
            ..Self::default()
        }
    }

    /// The backward counts of `branch`, computed on first use.
    fn branch_counts(&mut self, branch: &[HopSpec]) -> Result<Arc<Vec<u64>>> {
        let key = branch.as_ptr() as usize;
        if let Some((_, c)) = self.branch_counts.iter().find(|b| b.0 == key) {
            return Ok(c.clone());
        }
        let counts = Arc::new(arm_counts(branch, self)?);
        self.branch_counts.push((key, counts.clone()));
        Ok(counts)
    }

    /// Its scratch held from `memory` (a reservation of the query's pool).
    fn holding(mut self, memory: datafusion::execution::memory_pool::MemoryReservation) -> Self {
        self.memory = Some(memory);
        self
    }

    /// `edges` more looked at.
    pub(super) fn add(&mut self, edges: usize) -> Result<()> {
        self.edges += edges;
        self.cp.tick(edges)
    }

    /// `units` of work that the metric does not count (nodes, edges counted elsewhere).
    pub(super) fn tick(&self, units: usize) -> Result<()> {
        self.cp.tick(units)
    }
}

/// Paths along `hops` from every near node of the first hop, counted backwards from the far end;
/// over an optional hop (alone in its arm), one where there are none.
fn arm_counts(hops: &[HopSpec], work: &mut Work) -> Result<Vec<u64>> {
    let mut counts = matched_arm_counts(hops, work)?;
    if optional(hops) {
        counts.iter_mut().for_each(|c| *c = (*c).max(1));
    }
    Ok(counts)
}

/// An arm of one OPTIONAL MATCH's hop: a node without a match counts once.
fn optional(hops: &[HopSpec]) -> bool {
    matches!(hops, [h] if h.optional)
}

/// [`arm_counts`] of the paths there are.
fn matched_arm_counts(hops: &[HopSpec], work: &mut Work) -> Result<Vec<u64>> {
    let last = hops.last().expect("an arm has a hop");
    let far_n = last.data.far_keys.len();
    // The last hop without filters (and no self-loop an undirected walk would see twice):
    // its counts are the nodes' degrees, read from the offsets.
    let before_last = hops.len().checked_sub(2).map(|k| &hops[k]);
    let degrees = last.target_filter.is_none()
        && last.edge_filter.is_none()
        && before_last.is_none_or(|h| h.fold.is_none())
        && last.branches.is_empty()
        && last.lengths == (1, 1)
        && !(last.orientations.len() == 2 && last.data.index.has_self_loops());
    if degrees {
        let rest = &hops[..hops.len() - 1];
        let near_n = last.data.near_keys.len() as u32;
        let mut v: Vec<u64> = (0..near_n)
            .map(|x| work.tick(1).map(|_| degree(last, x, false)))
            .collect::<Result<_>>()?;
        if let Some(prev) = rest.last() {
            keep_passing(prev, &mut v, work)?;
        }
        return pull(rest, v, work);
    }
    let w = match passing(&last.target_filter, &last.data.target, far_n, work)? {
        Some(ok) => ok.into_iter().map(u64::from).collect(),
        None => vec![1; far_n],
    };
    pull(hops, w, work)
}

/// A property of the far nodes of `hops` over the paths from every near node of the first.
fn arm_values(hops: &[HopSpec], values: &Int64Array, work: &mut Work) -> Result<Vec<Acc>> {
    let last = hops.last().expect("an arm has a hop");
    let ok = passing(&last.target_filter, &last.data.target, values.len(), work)?;
    let w = (0..values.len())
        .map(
            |y| match ok.as_ref().is_some_and(|ok| !ok[y]) || values.is_null(y) {
                true => Acc::ZERO,
                false => Acc::of(values.value(y)),
            },
        )
        .collect();
    pull(hops, w, work)
}

/// Weights at the near nodes of `hops[0]` from `w` at the far nodes of the last hop: pushed
/// back hop by hop, a node between two hops dropped where it fails its filter.
fn pull<W: Weight>(hops: &[HopSpec], mut w: Vec<W>, work: &mut Work) -> Result<Vec<W>> {
    // The weights at the far nodes of the hop after hop k, when hop k excludes paths.
    let mut after: Option<Vec<W>> = None;
    for k in (0..hops.len()).rev() {
        times_branches(&hops[k], &mut w, work)?;
        let kept = (k > 0 && hops[k - 1].fold.is_some()).then(|| w.clone());
        let mut v = push_lengths(&hops[k], w, work)?;
        if let (Some(fold), Some(after)) = (&hops[k].fold, after.take()) {
            W::exclude(&hops[k], &hops[k + 1], fold, &after, &mut v, work)?;
        }
        after = kept;
        // The near node of hop k is the far node of hop k - 1: its filter applies here.
        if k > 0 {
            keep_passing(&hops[k - 1], &mut v, work)?;
        }
        w = v;
    }
    Ok(w)
}

/// `w` (over the far nodes of `h`) times the paths of each branch hanging from them.
fn times_branches<W: Weight>(h: &HopSpec, w: &mut [W], work: &mut Work) -> Result<()> {
    for b in &h.branches {
        let counts = arm_counts(b, work)?;
        for (slot, c) in w.iter_mut().zip(counts) {
            *slot = slot.times(c);
        }
    }
    Ok(())
}

/// The far nodes reached `cur`, each with its paths times those of each branch hanging from
/// it (nodes without are dropped): walked forward from few nodes, else read from the
/// branch's backward counts.
fn forward_branches(
    h: &HopSpec,
    mut cur: Vec<(u32, u64)>,
    work: &mut Work,
) -> Result<Vec<(u32, u64)>> {
    for b in &h.branches {
        let starts = cur.len();
        if starts <= FORWARD_ROOTS {
            let mut suffixes = Vec::new();
            for slot in cur.iter_mut() {
                let paths = forward_count(b, vec![(slot.0, 1)], work, &mut suffixes, starts)?;
                slot.1 = slot.1.saturating_mul(paths);
            }
        } else {
            let counts = work.branch_counts(b)?;
            for slot in cur.iter_mut() {
                slot.1 = slot.1.saturating_mul(counts[slot.0 as usize]);
            }
        }
        cur.retain(|s| s.1 > 0);
    }
    Ok(cur)
}

/// `v` (over the far nodes of `h`) zeroed where a node fails `h`'s target filter.
fn keep_passing<W: Weight>(h: &HopSpec, v: &mut [W], work: &Work) -> Result<()> {
    if let Some(ok) = passing(&h.target_filter, &h.data.target, v.len(), work)? {
        for (slot, ok) in v.iter_mut().zip(ok) {
            if !ok {
                *slot = W::ZERO;
            }
        }
    }
    Ok(())
}

/// Edges of node `x` over the hop's orientations (walked `reversed` when true), from the
/// offsets alone: what a walk from it looks at, before any filter.
pub(super) fn degree(h: &HopSpec, x: u32, reversed: bool) -> u64 {
    let of = |&rev: &bool| h.data.index.direction(rev != reversed).degree(x) as u64;
    h.orientations.iter().map(of).sum()
}

/// Per near node of hop `h`: the sum of `w` over the far nodes of its walks of each length
/// `h.lengths` allows (length 0: the node itself; its near and far nodes are of one table).
fn push_lengths<W: Weight>(h: &HopSpec, w: Vec<W>, work: &mut Work) -> Result<Vec<W>> {
    let (min, max) = h.lengths;
    if (min, max) == (1, 1) {
        return push_back(h, &w, work);
    }
    let mut total = match min {
        0 => w.clone(),
        _ => vec![W::ZERO; w.len()],
    };
    let mut walks = w;
    for len in 1..=max {
        walks = push_back(h, &walks, work)?;
        if len >= min {
            for (t, x) in total.iter_mut().zip(&walks) {
                *t = t.plus(*x);
            }
        }
    }
    Ok(total)
}

/// Per near node of hop `h`: the sum of `w` over its far nodes, per edge passing the
/// relationship filter (an undirected walk sees a self-loop once). Many nodes are split over
/// the machine's cores: each node's slot depends on its own edges only.
fn push_back<W: Weight>(h: &HopSpec, w: &[W], work: &mut Work) -> Result<Vec<W>> {
    let edge_ok = passing(&h.edge_filter, &h.data.edges, h.data.index.table_rows, work)?;
    let edge_ok = edge_ok.as_deref();
    let mut v = vec![W::ZERO; h.data.near_keys.len()];
    over_cores(&mut v, h, work, |first, out, cp| {
        push_range(h, w, edge_ok, first, out, cp)
    })?;
    Ok(v)
}

/// `f` over the slots of `v` (one per node, each depending on its node alone), split into
/// ranges over the machine's cores when there are many nodes or, by `h`'s offsets (the near
/// nodes of `h` being `v`'s), many edges: then ranges of about as many edges each, as a few
/// nodes may hold most of them. `f(first, slots, checkpoint)` returns the edges it looked at.
/// Each thread ticks a fork of the checkpoint: all of them stop once the query is dropped.
pub(super) fn over_cores<T: Send>(
    v: &mut [T],
    h: &HopSpec,
    work: &mut Work,
    f: impl Fn(usize, &mut [T], &Checkpoint) -> Result<usize> + Sync,
) -> Result<()> {
    let n = v.len();
    // Offsets as written: a damaged mapped file gives a poor split, never a wrong count (the
    // walks read each node's edges through `Csr::range`, which checks them).
    let offsets = &h.data.index.direction(h.orientations[0]).offsets;
    let offsets = &offsets[..offsets.len().min(n + 1)];
    let edges = offsets.last().map_or(0, |&e| e as usize);
    let many = n >= PARALLEL_NODES || (edges >= PARALLEL_EDGES && n >= 64);
    let parts = match many {
        true => std::thread::available_parallelism().map_or(1, |p| p.get().min(4)),
        false => 1,
    };
    if parts <= 1 {
        work.edges += f(0, v, &work.cp)?;
        return Ok(());
    }
    // Part i starts at the first node past i/parts of the edges (or of the nodes, without
    // edges to weigh them by).
    let mut starts: Vec<usize> = (0..parts)
        .map(|i| match edges {
            0 => n * i / parts,
            _ => offsets.partition_point(|&o| (o as usize) * parts < edges * i),
        })
        .collect();
    starts.push(n);
    for i in 1..starts.len() {
        starts[i] = starts[i].clamp(starts[i - 1], n);
    }
    let f = &f;
    let seen: Result<usize> = std::thread::scope(|s| {
        let mut rest = v;
        let mut tasks = Vec::new();
        for w in starts.windows(2) {
            let (out, later) = rest.split_at_mut(w[1] - w[0]);
            rest = later;
            let (cp, first) = (work.cp.fork(), w[0]);
            tasks.push(s.spawn(move || f(first, out, &cp)));
        }
        tasks
            .into_iter()
            .map(|t| t.join().unwrap_or_else(|e| std::panic::resume_unwind(e)))
            .sum()
    });
    work.edges += seen?;
    Ok(())
}

/// Edges from which a pass over fewer nodes is split over the cores.
const PARALLEL_EDGES: usize = 1 << 16;

/// Nodes from which a backward pass is split over the cores.
const PARALLEL_NODES: usize = 1 << 15;

/// [`push_back`] for the near nodes `first..first + out.len()`; the edges it looked at.
fn push_range<W: Weight>(
    h: &HopSpec,
    w: &[W],
    edge_ok: Option<&[bool]>,
    first: usize,
    out: &mut [W],
    cp: &Checkpoint,
) -> Result<usize> {
    let both = h.orientations.len() == 2;
    let mut seen = 0;
    for (k, slot) in out.iter_mut().enumerate() {
        let x = (first + k) as u32;
        let before = seen;
        for (j, &rev) in h.orientations.iter().enumerate() {
            let csr = h.data.index.direction(rev);
            for e in csr.range(x) {
                seen += 1;
                let y = csr.neighbors[e];
                if both && j == 1 && y == x {
                    continue;
                }
                if edge_ok.is_some_and(|ok| !ok[csr.edge_rows[e] as usize]) {
                    continue;
                }
                *slot = slot.plus(w[y as usize]);
            }
        }
        cp.tick(seen - before + 1)?;
    }
    Ok(seen)
}

/// Which of `ids` pass `f`, as a mask over `0..n` (ids not listed are false); all pass when
/// there is no filter.
fn passing_among(
    f: &Option<CompiledFilter>,
    store: &crate::csr::TableColumns,
    n: usize,
    ids: &[u32],
) -> Result<Option<Vec<bool>>> {
    let Some(f) = f else { return Ok(None) };
    let mut ids = ids.to_vec();
    ids.sort_unstable();
    ids.dedup();
    let ok = f.mask(store, &UInt32Array::from_iter_values(ids.iter().copied()))?;
    let mut out = vec![false; n];
    for (id, pass) in ids.into_iter().zip(ok) {
        out[id as usize] = pass;
    }
    Ok(Some(out))
}

/// Distinct far nodes of the one hop `h` from each of `roots`, through edges and to nodes
/// passing the hop's filters (evaluated on the edges and nodes the roots reach).
fn distinct_far(h: &HopSpec, roots: &[u32], out: &mut [u64], work: &mut Work) -> Result<()> {
    let runs = |x: u32| {
        h.orientations.iter().map(move |&rev| {
            let csr = h.data.index.direction(rev);
            let r = csr.range(x);
            (&csr.neighbors[r.clone()], &csr.edge_rows[r])
        })
    };
    let (mut far, mut rows) = (Vec::new(), Vec::new());
    for &x in roots {
        let before = far.len();
        for (n, e) in runs(x) {
            far.extend_from_slice(n);
            rows.extend_from_slice(e);
        }
        work.tick(far.len() - before + 1)?;
    }
    work.edges += far.len();
    let target_ok = passing_among(
        &h.target_filter,
        &h.data.target,
        h.data.far_keys.len(),
        &far,
    )?;
    let edge_ok = passing_among(
        &h.edge_filter,
        &h.data.edges,
        h.data.index.table_rows,
        &rows,
    )?;
    let m = Masks {
        nodes: target_ok,
        edges: edge_ok,
    };
    let mut buf = Vec::new();
    for &x in roots {
        // Sorted: the distinct ones are where the value changes.
        let ys = neighbours(h, x, false, &m, &mut buf);
        work.tick(ys.len() + 1)?;
        let distinct = ys.len() - ys.windows(2).filter(|w| w[0] == w[1]).count();
        out[x as usize] = distinct as u64;
    }
    Ok(())
}

/// Per root node (by ordinal; zero for nodes not in the roots): its count, and per value
/// its [`Acc`].
struct PerRoot {
    counts: Vec<u64>,
    values: Vec<Vec<Acc>>,
}

/// The count (and values) of each root node with rows (`roots[r] > 0`).
fn per_root(
    arms: &[Vec<HopSpec>],
    (close, joins): Cycles,
    values: &[ValueSpec],
    output: CountOutput,
    roots: &[u64],
    work: &mut Work,
) -> Result<PerRoot> {
    let live: Vec<u32> = (0..roots.len() as u32)
        .filter(|&r| roots[r as usize] > 0)
        .collect();
    let mut out = PerRoot {
        counts: vec![0u64; roots.len()],
        // (Not `vec![vec![..; n]; k]`: that fills the element once even for no values.)
        values: (values.iter())
            .map(|_| vec![Acc::ZERO; roots.len()])
            .collect(),
    };
    if let Some(close) = close {
        cycle_counts(arms, close, &live, &mut out.counts, work)?;
        return Ok(out);
    }
    if !joins.is_empty() {
        super::count_paths_join::join_counts(arms, joins, &live, &mut out.counts, work)?;
        return Ok(out);
    }
    if output == (CountOutput::PerRow { distinct: true }) {
        distinct_far(&arms[0][0], &live, &mut out.counts, work)?;
        return Ok(out);
    }
    if live.len() <= FORWARD_ROOTS {
        let mut suffixes: Vec<Suffixes> = vec![Vec::new(); arms.len()];
        for &r in &live {
            let mut counts = Vec::with_capacity(arms.len());
            let mut ends = Vec::with_capacity(arms.len());
            for (a, (arm, suffixes)) in arms.iter().zip(&mut suffixes).enumerate() {
                // Only the count of an arm without values is wanted.
                if values.iter().all(|v| v.arm != a) {
                    counts.push(forward_count(
                        arm,
                        vec![(r, 1)],
                        work,
                        suffixes,
                        live.len(),
                    )?);
                    ends.push(Vec::new());
                    if counts.last() == Some(&0) {
                        break;
                    }
                    continue;
                }
                let end = forward(arm, vec![(r, 1)], work)?;
                counts.push(end.iter().map(|e| e.1).fold(0, u64::saturating_add));
                ends.push(end);
                if counts.last() == Some(&0) {
                    break;
                }
            }
            if counts.len() < arms.len() {
                continue;
            }
            out.counts[r as usize] = others(counts.iter().copied(), usize::MAX);
            for (v, slot) in values.iter().zip(&mut out.values) {
                let acc = ends[v.arm]
                    .iter()
                    .filter(|(y, _)| v.values.is_valid(*y as usize))
                    .map(|&(y, w)| Acc::of(v.values.value(y as usize)).times(w))
                    .fold(Acc::ZERO, Acc::plus);
                slot[r as usize] = acc.times(others(counts.iter().copied(), v.arm));
            }
        }
        return Ok(out);
    }
    let counts = arms
        .iter()
        .map(|arm| arm_counts(arm, work))
        .collect::<Result<Vec<_>>>()?;
    let others_at = |r: usize, skip: usize| others(counts.iter().map(|c| c[r]), skip);
    for (r, slot) in out.counts.iter_mut().enumerate() {
        *slot = others_at(r, usize::MAX);
    }
    // One backward pass per property (the sum, count and extremes of one come together).
    let mut pushed: Vec<(usize, &Arc<Int64Array>, Vec<Acc>)> = Vec::new();
    for (v, slot) in values.iter().zip(&mut out.values) {
        let same =
            |p: &&(usize, &Arc<Int64Array>, Vec<Acc>)| p.0 == v.arm && Arc::ptr_eq(p.1, &v.values);
        let accs = match pushed.iter().find(same) {
            Some(p) => &p.2,
            None => {
                let accs = arm_values(&arms[v.arm], &v.values, work)?;
                pushed.push((v.arm, &v.values, accs));
                &pushed.last().expect("just pushed").2
            }
        };
        for (r, (acc, s)) in accs.iter().zip(slot.iter_mut()).enumerate() {
            *s = acc.times(others_at(r, v.arm));
        }
    }
    Ok(out)
}

/// The product of the arms' counts but arm `skip`'s.
fn others(counts: impl Iterator<Item = u64>, skip: usize) -> u64 {
    let rest = counts.enumerate().filter(|(i, _)| *i != skip);
    rest.fold(1u64, |p, (_, c)| p.saturating_mul(c))
}

/// Paths along `hops` from weighted start nodes, pushed forward over just the edges reached
/// (filters evaluated only on the nodes and edges touched): the far nodes reached, each with
/// its number of paths.
fn forward(hops: &[HopSpec], start: Vec<(u32, u64)>, work: &mut Work) -> Result<Vec<(u32, u64)>> {
    let mut cur = start;
    for h in hops {
        let (min, max) = h.lengths;
        let mut ends = match min {
            0 => cur.clone(),
            _ => Vec::new(),
        };
        let mut walks = cur;
        for len in 1..=max {
            walks = step(h, &walks, work)?;
            if len >= min {
                ends = match (ends.is_empty(), len == max) {
                    (true, true) => std::mem::take(&mut walks),
                    (true, false) => walks.clone(),
                    (false, _) => merged(&ends, &walks),
                };
            }
        }
        let mut next = ends;
        if let Some(f) = &h.target_filter {
            let ids = UInt32Array::from_iter_values(next.iter().map(|n| n.0));
            retain(&f.mask(&h.data.target, &ids)?, [&mut next]);
        }
        cur = forward_branches(h, next, work)?;
    }
    Ok(cur)
}

/// Two lists of weighted nodes sorted by node, as one (weights of a node added).
fn merged(a: &[(u32, u64)], b: &[(u32, u64)]) -> Vec<(u32, u64)> {
    let mut out = Vec::with_capacity(a.len() + b.len());
    let (mut i, mut j) = (0, 0);
    while i < a.len() && j < b.len() {
        match a[i].0.cmp(&b[j].0) {
            std::cmp::Ordering::Less => (out.push(a[i]), i += 1),
            std::cmp::Ordering::Greater => (out.push(b[j]), j += 1),
            std::cmp::Ordering::Equal => {
                out.push((a[i].0, a[i].1.saturating_add(b[j].1)));
                (i += 1, j += 1)
            }
        };
    }
    out.extend_from_slice(&a[i..]);
    out.extend_from_slice(&b[j..]);
    out
}

/// The backward counts of an arm's hops from position `k` on, computed once per count.
type Suffixes = Vec<(usize, Vec<u64>)>;

/// Edges a backward count over `hops` (and the branches hanging from them) looks at.
fn backward_cost(hops: &[HopSpec]) -> u64 {
    hops.iter()
        .map(|h| {
            let walks = h.data.index.out.neighbors.len() * h.orientations.len();
            let branches: u64 = h.branches.iter().map(|b| backward_cost(b)).sum();
            (walks as u64).saturating_mul(h.lengths.1.max(1)) + branches
        })
        .sum()
}

/// Paths along `hops` from weighted start nodes, one of `starts` counted alike: walked
/// forward hop by hop (a pair of hops around an exclusion pair by pair) while the edges ahead,
/// at [`FORWARD_EDGE_COST`] each, cost less than this start's share of counting the rest of
/// the arm backwards over whole tables, else finished with those backward counts (kept in
/// `suffixes` for the next start).
fn forward_count(
    hops: &[HopSpec],
    start: Vec<(u32, u64)>,
    work: &mut Work,
    suffixes: &mut Suffixes,
    starts: usize,
) -> Result<u64> {
    if optional(hops) {
        // Each start's matches, or one where there are none.
        let mut total = 0u64;
        for (x, c) in start {
            let paths = forward_matched(hops, vec![(x, 1)], work, suffixes, starts)?;
            total = total.saturating_add(c.saturating_mul(paths.max(1)));
        }
        return Ok(total);
    }
    forward_matched(hops, start, work, suffixes, starts)
}

/// [`forward_count`] of the paths there are.
fn forward_matched(
    hops: &[HopSpec],
    start: Vec<(u32, u64)>,
    work: &mut Work,
    suffixes: &mut Suffixes,
    starts: usize,
) -> Result<u64> {
    let mut cur = start;
    let mut k = 0;
    while k < hops.len() {
        let h = &hops[k];
        work.tick(cur.len())?;
        let ahead: u64 = match &h.fold {
            // The pairs of edges around the exclusion.
            Some(_) => cur
                .iter()
                .flat_map(|&(x, _)| {
                    h.orientations.iter().flat_map(move |&rev| {
                        let csr = h.data.index.direction(rev);
                        csr.range(x).map(move |e| csr.neighbors[e])
                    })
                })
                .map(|y| degree(&hops[k + 1], y, false))
                .sum(),
            None => cur.iter().map(|&(x, _)| degree(h, x, false)).sum::<u64>() * h.lengths.1.max(1),
        };
        let share = backward_cost(&hops[k..]) / starts.max(1) as u64;
        if ahead.saturating_mul(FORWARD_EDGE_COST) > share {
            if !suffixes.iter().any(|s| s.0 == k) {
                let counts = matched_arm_counts(&hops[k..], work)?;
                suffixes.push((k, counts));
            }
            let (_, counts) = suffixes.iter().find(|s| s.0 == k).expect("just computed");
            let paths = cur
                .iter()
                .map(|&(x, c)| c.saturating_mul(counts[x as usize]));
            return Ok(paths.fold(0, u64::saturating_add));
        }
        match &h.fold {
            Some(fold) => {
                cur = super::count_paths_exclude::step_pair(h, &hops[k + 1], fold, &cur, work)?;
                cur = forward_branches(&hops[k + 1], cur, work)?;
                k += 2;
            }
            None => {
                cur = forward(&hops[k..=k], cur, work)?;
                k += 1;
            }
        }
    }
    Ok(cur.iter().map(|e| e.1).fold(0, u64::saturating_add))
}

/// One step over hop `h` from weighted nodes: the far nodes reached through edges passing
/// the relationship filter, each with the sum of its weights (sorted by node).
fn step(h: &HopSpec, cur: &[(u32, u64)], work: &mut Work) -> Result<Vec<(u32, u64)>> {
    let both = h.orientations.len() == 2;
    // (far node, edge row, weight) for every edge walked.
    let mut steps: Vec<(u32, u32, u64)> = Vec::new();
    for &(x, c) in cur {
        work.tick(1)?;
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
    work.add(steps.len())?;
    if let Some(f) = &h.edge_filter {
        let rows = UInt32Array::from_iter_values(steps.iter().map(|s| s.1));
        retain(&f.mask(&h.data.edges, &rows)?, [&mut steps]);
    }
    // Few steps into a large table: sorted; else summed in the tally, which costs a slot per
    // node of the table the first time.
    if steps.len() * 16 < h.data.far_keys.len() {
        steps.sort_unstable_by_key(|s| s.0);
        let mut out: Vec<(u32, u64)> = Vec::new();
        for (y, _, c) in steps {
            match out.last_mut() {
                Some(last) if last.0 == y => last.1 = last.1.saturating_add(c),
                _ => out.push((y, c)),
            }
        }
        out.retain(|s| s.1 > 0);
        return Ok(out);
    }
    let mut tally = std::mem::take(&mut work.tally);
    tally.fit(h.data.far_keys.len());
    for (y, _, c) in steps {
        tally.add(y, c);
    }
    let out = tally.drain();
    work.tally = tally;
    Ok(out)
}

/// What an edge walked forward (its far node summed in a tally, sorted afterwards) costs
/// against an edge of a backward count (read in order, summed into its near node's slot).
const FORWARD_EDGE_COST: u64 = 2;

/// Few root nodes: walk forward from them; many: count every node backwards, once per arm.
const FORWARD_ROOTS: usize = 256;

/// The total: each root's count (see [`per_root`]) times its rows, and so each value.
fn total(
    arms: &[Vec<HopSpec>],
    cycles: Cycles,
    values: &[ValueSpec],
    roots: &[u64],
    work: &mut Work,
) -> Result<(i64, Vec<Acc>)> {
    let per = per_root(arms, cycles, values, CountOutput::Total, roots, work)?;
    let count = roots
        .iter()
        .zip(per.counts)
        .map(|(&m, c)| m.saturating_mul(c));
    let count = count.fold(0u64, u64::saturating_add).min(i64::MAX as u64) as i64;
    let values = per
        .values
        .iter()
        .map(|accs| {
            let each = roots.iter().zip(accs).map(|(&m, a)| a.times(m));
            each.fold(Acc::ZERO, Acc::plus)
        })
        .collect();
    Ok((count, values))
}

/// A value column: Decimal128(38, 0) for sums, else Int64.
fn value_array(
    kind: ValueKind,
    accs: impl Iterator<Item = Option<Acc>>,
) -> Result<arrow::array::ArrayRef> {
    let vals = accs
        .map(|a| match a {
            Some(a) => a.scalar(kind),
            None => Ok(None),
        })
        .collect::<Result<Vec<Option<i128>>>>()?;
    Ok(match kind {
        ValueKind::Sum => {
            Arc::new(arrow::array::Decimal128Array::from(vals).with_precision_and_scale(38, 0)?)
        }
        _ => Arc::new(Int64Array::from_iter(
            vals.into_iter().map(|v| v.map(|v| v as i64)),
        )),
    })
}

/// The filter masks of a hop over every node and edge (`None`: all pass).
pub(super) struct Masks {
    pub(super) nodes: Option<Vec<bool>>,
    pub(super) edges: Option<Vec<bool>>,
}

impl Masks {
    pub(super) fn of(h: &HopSpec, work: &Work) -> Result<Self> {
        Ok(Self {
            nodes: passing(
                &h.target_filter,
                &h.data.target,
                h.data.far_keys.len(),
                work,
            )?,
            edges: passing(&h.edge_filter, &h.data.edges, h.data.index.table_rows, work)?,
        })
    }
}

/// The far nodes of `x` over hop `h` (walked `reversed` when true: from the far side) through
/// edges and to nodes passing `m`, sorted, one entry per edge (an undirected walk sees a
/// self-loop once). Without filters over one orientation: the CSR's own run.
pub(super) fn neighbours<'a>(
    h: &'a HopSpec,
    x: u32,
    reversed: bool,
    m: &Masks,
    buf: &'a mut Vec<u32>,
) -> &'a [u32] {
    let dirs = || h.orientations.iter().map(move |&rev| rev != reversed);
    if m.nodes.is_none() && m.edges.is_none() && h.orientations.len() == 1 {
        let csr = h
            .data
            .index
            .direction(dirs().next().expect("one orientation"));
        return &csr.neighbors[csr.range(x)];
    }
    buf.clear();
    for (j, rev) in dirs().enumerate() {
        let csr = h.data.index.direction(rev);
        for e in csr.range(x) {
            let y = csr.neighbors[e];
            let node = m.nodes.as_ref().is_none_or(|ok| ok[y as usize]);
            let edge = m
                .edges
                .as_ref()
                .is_none_or(|ok| ok[csr.edge_rows[e] as usize]);
            if node && edge && !(j == 1 && y == x) {
                buf.push(y);
            }
        }
    }
    if h.orientations.len() > 1 {
        buf.sort_unstable();
    }
    buf
}

/// Pairs of equal entries of two sorted lists (each entry an edge: a common neighbour reached
/// by two edges on one side and three on the other is five... six pairs): a merge, or binary
/// searches of the shorter list's runs in the longer when their sizes differ widely.
fn common(a: &[u32], b: &[u32]) -> u64 {
    let mut n = 0u64;
    crate::csr::matching_runs(a, b, |_, ri, _, rj| n += (ri * rj) as u64);
    n
}

/// Triangles through each root in `roots` (into `out`), no path materialized: with `x`
/// walked to from the root over `p`, `y` the third node, for every `x` the edges to `y`s
/// common to `x`'s list over `xy` and the root's list over `q` (walked backwards when
/// `q_back`), by intersecting sorted lists. A single arm `root -> x -> y` closed back to the
/// root: `p`, `xy` the arm, `q` the closing hop backwards; two one-hop arms `root -> y`,
/// `root -> x` with `x -> y` closing: `p` the second arm, `xy` the closing hop, `q` the first.
fn cycle_counts(
    arms: &[Vec<HopSpec>],
    close: &HopSpec,
    roots: &[u32],
    out: &mut [u64],
    work: &mut Work,
) -> Result<()> {
    let (p, xy, q, q_back) = match arms {
        [arm] if arm.len() >= 3 => {
            return long_cycle_counts((&[], arm), close, roots, out, work);
        }
        [a, b] if a.len() + b.len() >= 3 => {
            return long_cycle_counts((a, b), close, roots, out, work);
        }
        [arm] if arm.len() == 2 => (&arm[0], &arm[1], close, true),
        [a, b] if a.len() == 1 && b.len() == 1 => (&b[0], close, &a[0], false),
        _ => return datafusion::common::internal_err!("CountPathsExec: not a triangle"),
    };
    // A hop walked backwards from the root ends at the root: only its relationship filter.
    let mq = match q_back {
        true => Masks {
            nodes: None,
            edges: passing(&q.edge_filter, &q.data.edges, q.data.index.table_rows, work)?,
        },
        false => Masks::of(q, work)?,
    };
    let (mp, mxy) = (Masks::of(p, work)?, Masks::of(xy, work)?);
    // Most of the roots' table: each edge x -> y once, rather than once per root reaching x.
    if roots.len() > FORWARD_ROOTS && roots.len() * 2 >= p.data.near_keys.len() {
        return cycles_by_edge(p, xy, q, q_back, (mp, mxy, mq), out, work);
    }
    let (mut x_buf, mut y_buf, mut q_buf) = (Vec::new(), Vec::new(), Vec::new());
    for &a in roots {
        let ys = neighbours(q, a, q_back, &mq, &mut q_buf);
        work.tick(ys.len() + 1)?;
        if ys.is_empty() {
            continue;
        }
        let mut n = 0u64;
        for &x in neighbours(p, a, false, &mp, &mut x_buf) {
            let xys = neighbours(xy, x, false, &mxy, &mut y_buf);
            work.add(xys.len() + ys.len())?;
            n += common(xys, ys);
        }
        out[a as usize] = n;
    }
    Ok(())
}

/// [`cycle_counts`] of every root at once, over the edges `x -> y` of `xy`: each root both
/// reaches `x` over `p` and closes from `y` over `q` (onto the root when `q_back`, else from
/// the root to `y`) adds the pairs of edges that do so. Every root of the table gets its
/// count, those without rows too (the caller weighs each by its rows).
fn cycles_by_edge(
    p: &HopSpec,
    xy: &HopSpec,
    q: &HopSpec,
    q_back: bool,
    (mp, mxy, mq): (Masks, Masks, Masks),
    out: &mut [u64],
    work: &mut Work,
) -> Result<()> {
    // Walked towards the roots: only the edges' filters apply; each far node's own below.
    let p_back = Masks {
        nodes: None,
        edges: mp.edges,
    };
    let q_to_root = Masks {
        nodes: None,
        edges: mq.edges,
    };
    // Each `x` walks `xy` from its near side: its edges there weigh the split.
    sums_over_cores(xy, out, work, |xs, out, cp| {
        let (mut x_roots, mut ys, mut y_roots) = (Vec::new(), Vec::new(), Vec::new());
        let mut seen = 0;
        for x in xs {
            cp.tick(1)?;
            if mp.nodes.as_ref().is_some_and(|ok| !ok[x as usize]) {
                continue;
            }
            let from = neighbours(p, x, true, &p_back, &mut x_roots);
            if from.is_empty() {
                continue;
            }
            for &y in neighbours(xy, x, false, &mxy, &mut ys) {
                if !q_back && mq.nodes.as_ref().is_some_and(|ok| !ok[y as usize]) {
                    continue;
                }
                let to = neighbours(q, y, !q_back, &q_to_root, &mut y_roots);
                seen += to.len() + 1;
                cp.tick(to.len() + 1)?;
                crate::csr::matching_runs(from, to, |i, ri, _, rj| {
                    out[from[i] as usize].fetch_add((ri * rj) as u64, Ordering::Relaxed);
                });
            }
        }
        Ok(seen)
    })
}

/// Cycles through each root closed by `close` from the end of arm `b` onto the end of arm
/// `a` (onto the root itself when `a` is empty), `a` and `b` three hops or more together:
/// per root, both arms walked forward and the nodes `close` reaches from `b`'s ends matched
/// against `a`'s ends. Few roots (or filtered arms from a small part of the roots' table):
/// the arms' filters evaluated on the nodes reached; else once over whole tables, the roots
/// split over the cores. (The closing hop's relationship filter is evaluated over its table.)
fn long_cycle_counts(
    (a, b): (&[HopSpec], &[HopSpec]),
    close: &HopSpec,
    roots: &[u32],
    out: &mut [u64],
    work: &mut Work,
) -> Result<()> {
    let closing = Closing::of(close, work)?;
    let filtered =
        (a.iter().chain(b)).any(|h| h.target_filter.is_some() || h.edge_filter.is_some());
    if roots.len() <= FORWARD_ROOTS || (filtered && roots.len() * 2 < out.len()) {
        let mut bufs = Default::default();
        for &r in roots {
            let ends_a = forward(a, vec![(r, 1)], work)?;
            if ends_a.is_empty() {
                continue;
            }
            let ends_b = forward(b, vec![(r, 1)], work)?;
            let (n, looked) = closing.paths(&ends_a, &ends_b, &mut bufs, &work.cp)?;
            work.edges += looked;
            out[r as usize] = n;
        }
        return Ok(());
    }
    let masks = |hops: &[HopSpec], work: &mut Work| {
        (hops.iter())
            .map(|h| Masks::of(h, work))
            .collect::<Result<Vec<_>>>()
    };
    let (ma, mb) = (masks(a, work)?, masks(b, work)?);
    let mut live = vec![false; out.len()];
    roots.iter().for_each(|&r| live[r as usize] = true);
    over_cores(out, &b[0], work, |first, slots, cp| {
        let (mut ends_a, mut ends_b, mut next) = (Vec::new(), Vec::new(), Vec::new());
        let mut bufs = Default::default();
        let mut seen = 0;
        for (k, slot) in slots.iter_mut().enumerate() {
            let r = (first + k) as u32;
            cp.tick(1)?;
            if !live[r as usize] {
                continue;
            }
            seen += ends_from(a, &ma, r, (&mut ends_a, &mut next), cp)?;
            if ends_a.is_empty() {
                continue;
            }
            seen += ends_from(b, &mb, r, (&mut ends_b, &mut next), cp)?;
            let (n, looked) = closing.paths(&ends_a, &ends_b, &mut bufs, cp)?;
            *slot = n;
            seen += looked;
        }
        Ok(seen)
    })
}

/// The hop that closes a cycle, with its relationship filter's mask (its far node is an
/// arm's end, whose filter the arm applied).
struct Closing<'a> {
    hop: &'a HopSpec,
    edges: Masks,
    /// Both ways of the hop read as two sorted runs, unless a self-loop (seen once by an
    /// undirected walk) or a relationship filter needs them merged.
    split: bool,
}

impl<'a> Closing<'a> {
    fn of(hop: &'a HopSpec, work: &Work) -> Result<Self> {
        let t = &hop.data;
        let edges = Masks {
            nodes: None,
            edges: passing(&hop.edge_filter, &t.edges, t.index.table_rows, work)?,
        };
        let split = edges.edges.is_none() && !t.index.has_self_loops();
        Ok(Self { hop, edges, split })
    }

    /// The cycles from weighted ends `ends_b` closed onto weighted ends `ends_a` (both sorted
    /// by node, each node once), and the edges looked at; `bufs` is scratch space. The hop is
    /// walked from the side with fewer ends (backwards from `a`'s: from the root itself when
    /// there is one arm, whose lists are read in the roots' order).
    fn paths(
        &self,
        ends_a: &[(u32, u64)],
        ends_b: &[(u32, u64)],
        (nodes, to_buf): &mut (Vec<u32>, Vec<u32>),
        cp: &Checkpoint,
    ) -> Result<(u64, usize)> {
        let (from, to, back) = match ends_a.len() <= ends_b.len() {
            true => (ends_a, ends_b, true),
            false => (ends_b, ends_a, false),
        };
        nodes.clear();
        nodes.extend(to.iter().map(|e| e.0));
        let (mut n, mut looked) = (0u64, 0);
        for &(x, wx) in from {
            let before = looked;
            let mut add = |other: &[u32]| {
                looked += other.len();
                crate::csr::matching_runs(nodes, other, |i, ri, _, rj| {
                    for &(_, wy) in &to[i..i + ri] {
                        let paths = wx.saturating_mul(wy).saturating_mul(rj as u64);
                        n = n.saturating_add(paths);
                    }
                });
            };
            match self.split {
                true => self.hop.orientations.iter().for_each(|&rev| {
                    let csr = self.hop.data.index.direction(rev != back);
                    add(&csr.neighbors[csr.range(x)]);
                }),
                false => add(neighbours(self.hop, x, back, &self.edges, to_buf)),
            }
            cp.tick(looked - before + 1)?;
        }
        Ok((n, looked))
    }
}

/// The far ends of `hops` from `x` into `ends`, each once with its number of paths, sorted;
/// through edges and to nodes passing each hop's `masks` (`next` is scratch space). Returns
/// the edges looked at.
fn ends_from(
    hops: &[HopSpec],
    masks: &[Masks],
    x: u32,
    (ends, next): (&mut Vec<(u32, u64)>, &mut Vec<(u32, u64)>),
    cp: &Checkpoint,
) -> Result<usize> {
    ends.clear();
    ends.push((x, 1));
    let mut seen = 0;
    for (h, m) in hops.iter().zip(masks) {
        next.clear();
        let both = h.orientations.len() == 2;
        for &(from, w) in ends.iter() {
            let before = seen;
            for (j, &rev) in h.orientations.iter().enumerate() {
                let csr = h.data.index.direction(rev);
                for e in csr.range(from) {
                    seen += 1;
                    let y = csr.neighbors[e];
                    let node = m.nodes.as_ref().is_none_or(|ok| ok[y as usize]);
                    let edge = (m.edges.as_ref()).is_none_or(|ok| ok[csr.edge_rows[e] as usize]);
                    if node && edge && !(both && j == 1 && y == from) {
                        next.push((y, w));
                    }
                }
            }
            cp.tick(seen - before + 1)?;
        }
        if next.len() > 1 {
            next.sort_unstable_by_key(|e| e.0);
            next.dedup_by(|later, kept| {
                let same = later.0 == kept.0;
                if same {
                    kept.1 = kept.1.saturating_add(later.1);
                }
                same
            });
        }
        std::mem::swap(ends, next);
        if ends.is_empty() {
            break;
        }
    }
    Ok(seen)
}

/// `f(nodes, sums, checkpoint)` over the near nodes of `h` split as [`over_cores`] splits
/// them, all adding into one array of sums (a node's paths may end at any root), added into
/// `out` afterwards. `f` returns the edges it looked at.
fn sums_over_cores(
    h: &HopSpec,
    out: &mut [u64],
    work: &mut Work,
    f: impl Fn(std::ops::Range<u32>, &[AtomicU64], &Checkpoint) -> Result<usize> + Sync,
) -> Result<()> {
    // Added without saturating: a root's cycles number fewer than its table's edges squared.
    let sums: Vec<AtomicU64> = (0..out.len()).map(|_| AtomicU64::new(0)).collect();
    // No slots of its own: empty ones (taking no memory) only tell each range its nodes.
    let mut nodes = vec![(); h.data.near_keys.len()];
    over_cores(&mut nodes, h, work, |first, part, cp| {
        f(first as u32..(first + part.len()) as u32, &sums, cp)
    })?;
    for (slot, s) in out.iter_mut().zip(sums) {
        *slot = slot.saturating_add(s.into_inner());
    }
    Ok(())
}

/// `b`'s rows that have paths, each with its count and values (by root ordinal).
fn with_counts(
    schema: &SchemaRef,
    b: &RecordBatch,
    ordinals: &[Option<u32>],
    per: &PerRoot,
    rows: Option<&[u64]>,
    values: &[ValueSpec],
) -> Result<RecordBatch> {
    let c: Int64Array = ordinals
        .iter()
        .map(|o| o.map_or(0, |o| per.counts[o as usize].min(i64::MAX as u64) as i64))
        .collect::<Vec<i64>>()
        .into();
    // A row is kept where it has paths (`rows`: where these counts may be 0).
    let keep = match rows {
        None => arrow::array::BooleanArray::from_iter(c.values().iter().map(|&n| Some(n > 0))),
        Some(rows) => (ordinals.iter())
            .map(|o| Some(o.is_some_and(|o| rows[o as usize] > 0)))
            .collect(),
    };
    let mut cols = b.columns().to_vec();
    cols.push(Arc::new(c));
    for (v, accs) in values.iter().zip(&per.values) {
        let each = ordinals.iter().map(|o| o.map(|o| accs[o as usize]));
        cols.push(value_array(v.kind, each)?);
    }
    let all = RecordBatch::try_new(schema.clone(), cols)?;
    Ok(arrow::compute::filter_record_batch(&all, &keep)?)
}

/// An error once a mapped index file the hop, its branches or its fold's absent hop read
/// was found damaged.
fn intact(h: &HopSpec) -> Result<()> {
    h.data.intact().map_err(super::csr_expand_exec::store_err)?;
    h.branches.iter().flatten().try_for_each(intact)?;
    match h.fold.as_ref().and_then(|f| f.absent.as_deref()) {
        Some(a) => intact(a),
        None => Ok(()),
    }
}

/// What closes cycles: a closing hop, or the steps of a join.
type Cycles<'a> = (Option<&'a HopSpec>, &'a [JoinStep]);

/// The output of a count: the total (and values), or each kept input row with its count,
/// from the rows per root node in `start`.
fn count(
    arms: &[Vec<HopSpec>],
    (close, joins): Cycles,
    values: &[ValueSpec],
    output: CountOutput,
    schema: &SchemaRef,
    start: &[u64],
    kept: &[(RecordBatch, Vec<Option<u32>>)],
    work: &mut Work,
) -> Result<Vec<RecordBatch>> {
    let out = match output {
        CountOutput::Total => {
            let (n, accs) = total(arms, (close, joins), values, start, work)?;
            let mut cols: Vec<arrow::array::ArrayRef> = vec![Arc::new(Int64Array::from(vec![n]))];
            for (v, acc) in values.iter().zip(accs) {
                cols.push(value_array(v.kind, std::iter::once(Some(acc)))?);
            }
            vec![RecordBatch::try_new(schema.clone(), cols)?]
        }
        CountOutput::PerRow { .. } => {
            let per = per_root(arms, (close, joins), values, output, start, work)?;
            // Hops counted where they matched: the rows are those with paths (a missing
            // match counting once), their counts those of the paths where they matched.
            let (counts, rows) = match any_matched_only(arms) {
                false => (per, None),
                true => {
                    let matched = where_matched(arms);
                    let counts = per_root(&matched, (close, joins), values, output, start, work)?;
                    (counts, Some(per.counts))
                }
            };
            kept.iter()
                .map(|(b, ords)| with_counts(schema, b, ords, &counts, rows.as_deref(), values))
                .collect::<Result<Vec<_>>>()?
        }
    };
    // Checked after the walk: a damaged block of a mapped index found by it.
    arms.iter().flatten().chain(close).try_for_each(intact)?;
    Ok(out)
}

impl DisplayAs for CountPathsExec {
    fn fmt_as(&self, t: DisplayFormatType, f: &mut fmt::Formatter) -> fmt::Result {
        match t {
            DisplayFormatType::Default | DisplayFormatType::Verbose => {
                let hops: Vec<String> = self
                    .arms
                    .iter()
                    .flatten()
                    .chain(self.close.as_deref())
                    .map(|h| {
                        let mut s = h.rel_type.clone();
                        if h.lengths != (1, 1) {
                            s.push_str(&format!("*{}..{}", h.lengths.0, h.lengths.1));
                        }
                        if let Some(p) = &h.target_filter {
                            s.push_str(&format!(
                                " filter={}",
                                crate::functions::held::shown(&p.expr)
                            ));
                        }
                        if let Some(p) = &h.edge_filter {
                            s.push_str(&format!(
                                " edge_filter={}",
                                crate::functions::held::shown(&p.expr)
                            ));
                        }
                        s
                    })
                    .collect();
                let cycle = match (&self.close, self.joins.is_empty()) {
                    (Some(_), _) => ", cycle",
                    (None, false) => ", joined",
                    (None, true) => "",
                };
                let values: Vec<String> = self
                    .values
                    .iter()
                    .map(|v| format!(", {:?}(arm {})", v.kind, v.arm))
                    .collect();
                let what = match self.output {
                    CountOutput::Total => cycle,
                    CountOutput::PerRow { distinct: false } => ", per row",
                    CountOutput::PerRow { distinct: true } => ", per row, distinct",
                };
                write!(
                    f,
                    "CountPathsExec: arms={}, hops=[{}]{what}{}{}",
                    self.arms.len(),
                    hops.join(", "),
                    if self.output == CountOutput::Total {
                        ""
                    } else {
                        cycle
                    },
                    values.concat()
                )
            }
            DisplayFormatType::TreeRender => write!(f, "arms={}", self.arms.len()),
        }
    }
}

impl ExecutionPlan for CountPathsExec {
    super::unary_exec!("CountPathsExec");

    fn required_input_distribution(&self) -> Vec<Distribution> {
        vec![Distribution::SinglePartition]
    }

    fn with_new_children(
        self: Arc<Self>,
        children: Vec<Arc<dyn ExecutionPlan>>,
    ) -> Result<Arc<dyn ExecutionPlan>> {
        Ok(Arc::new(Self {
            input: super::only_child("CountPathsExec", children)?,
            key_idx: self.key_idx,
            arms: self.arms.clone(),
            close: self.close.clone(),
            joins: self.joins.clone(),
            values: self.values.clone(),
            output: self.output,
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
        let mut close = self.close.as_deref().cloned();
        let filters = arms
            .iter_mut()
            .flatten()
            .chain(close.as_mut())
            .flat_map(|h| [&mut h.edge_filter, &mut h.target_filter]);
        super::csr_expand_exec::CompiledFilter::bind_all(filters, &values)?;
        let close = close.map(Arc::new);
        Some(Arc::new(Self {
            input: self.input.clone(),
            key_idx: self.key_idx,
            arms: Arc::new(arms),
            close,
            joins: self.joins.clone(),
            values: self.values.clone(),
            output: self.output,
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
        // What grows with the data (a start count per node, and the input rows kept until
        // their counts are known) is reserved from the query's memory pool.
        let reservation = datafusion::execution::memory_pool::MemoryConsumer::new(format!(
            "CountPathsExec[{partition}]"
        ))
        .register(context.memory_pool());
        let mut input = self.input.execute(partition, context)?;
        let arms = self.arms.clone();
        let key_idx = self.key_idx;
        let schema = self.schema.clone();
        let out_schema = schema.clone();
        let edges_metric = MetricBuilder::new(&self.metrics).counter("edges_scanned", partition);
        let rows_metric = MetricBuilder::new(&self.metrics).output_rows(partition);
        let elapsed = MetricBuilder::new(&self.metrics).elapsed_compute(partition);
        let output = self.output;
        let close = self.close.clone();
        let joins = self.joins.clone();
        let values = self.values.clone();
        let fut = async move {
            let near = &arms[0][0].data.near_keys;
            reservation.try_grow(near.len() * std::mem::size_of::<u64>())?;
            let mut start = vec![0u64; near.len()];
            // Per row: the rows are kept, with their root ordinals, until the counts are known.
            let mut kept: Vec<(RecordBatch, Vec<Option<u32>>)> = Vec::new();
            while let Some(b) = input.next().await {
                let b = b?;
                let _timer = elapsed.timer();
                let keys = as_i64(b.column(key_idx).as_ref())
                    .map_err(datafusion::error::DataFusionError::from)?;
                let ordinals: Vec<Option<u32>> = (0..keys.len())
                    .map(|i| {
                        keys.is_valid(i)
                            .then(|| near.ordinal(keys.value(i)))
                            .flatten()
                    })
                    .collect();
                for o in ordinals.iter().flatten() {
                    start[*o as usize] += 1;
                }
                if output != CountOutput::Total {
                    reservation.try_grow(
                        b.get_array_memory_size()
                            + ordinals.len() * std::mem::size_of::<Option<u32>>(),
                    )?;
                    kept.push((b, ordinals));
                }
            }
            // The count is one computation over the whole graph. It starts in place, under a
            // budget of work; past it, it runs again on the blocking pool, where it ticks a
            // checkpoint that stops it once this stream is dropped.
            let timer = elapsed.timer();
            let mut work = Work::new(Checkpoint::with_budget(super::cancel::IN_POLL_UNITS))
                .holding(reservation.new_empty());
            let close_ref = close.as_deref();
            let cycles = (close_ref, joins.as_slice());
            let first = count(
                &arms, cycles, &values, output, &schema, &start, &kept, &mut work,
            );
            timer.done();
            let offload = first.is_err() && work.cp.over_budget();
            let edges = work.edges;
            drop(work);
            let (out, edges) = match offload {
                false => (first?, edges),
                true => {
                    let memory = reservation.new_empty();
                    super::cancel::run_blocking(move |cp| {
                        let mut work = Work::new(cp).holding(memory);
                        let timer = elapsed.timer();
                        let cycles = (close.as_deref(), joins.as_slice());
                        let out = count(
                            &arms, cycles, &values, output, &schema, &start, &kept, &mut work,
                        );
                        timer.done();
                        Ok((out?, work.edges))
                    })
                    .await?
                }
            };
            edges_metric.add(edges);
            rows_metric.add(out.iter().map(|b| b.num_rows()).sum());
            drop(reservation);
            Ok::<_, datafusion::error::DataFusionError>(futures::stream::iter(
                out.into_iter().map(Ok),
            ))
        };
        Ok(Box::pin(RecordBatchStreamAdapter::new(
            out_schema,
            futures::stream::once(fut).try_flatten(),
        )))
    }
}

#[cfg(test)]
mod core_tests {
    use super::*;
    use crate::csr::{CsrIndex, NodeKeys, TableColumns};
    use crate::operators::csr_expand::CsrData;

    /// `m` edges among `n` nodes (parallel edges and self-loops included), from `seed`.
    fn edges(n: i64, m: usize, seed: u64) -> Vec<(i64, i64)> {
        let mut s = seed;
        let mut next = move || {
            s = s
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            ((s >> 33) % n as u64) as i64
        };
        (0..m).map(|_| (next(), next())).collect()
    }

    /// A hop over `edges` among nodes keyed `0..n` (one label on both ends).
    fn hop(n: i64, edges: &[(i64, i64)], orientations: Vec<bool>, lengths: (u64, u64)) -> HopSpec {
        let keys =
            Arc::new(NodeKeys::from_keys(&Int64Array::from((0..n).collect::<Vec<_>>())).unwrap());
        let src = Int64Array::from(edges.iter().map(|e| e.0).collect::<Vec<_>>());
        let dst = Int64Array::from(edges.iter().map(|e| e.1).collect::<Vec<_>>());
        let index = Arc::new(CsrIndex::build(&src, &dst, &keys, &keys, None).unwrap());
        let table = datafusion::datasource::MemTable::try_new(
            Arc::new(arrow::datatypes::Schema::empty()),
            vec![vec![]],
        )
        .unwrap();
        let none = Arc::new(TableColumns::new(Arc::new(table), "test"));
        HopSpec {
            rel_type: "R".into(),
            orientations,
            data: CsrData {
                index,
                near_keys: keys.clone(),
                far_keys: keys,
                edges: none.clone(),
                target: none,
            },
            target_filter: None,
            edge_filter: None,
            lengths,
            fold: None,
            branches: vec![],
            optional: false,
            matched_only: false,
        }
    }

    /// The steps from `y` over `edges` walked in `orient`: (far node, edge index).
    fn steps(edges: &[(i64, i64)], orient: &[bool], y: i64) -> Vec<(i64, usize)> {
        let mut out = Vec::new();
        for (i, &(a, b)) in edges.iter().enumerate() {
            if orient.contains(&false) && a == y {
                out.push((b, i));
            }
            if orient.contains(&true) && b == y && !(orient.len() == 2 && a == b) {
                out.push((a, i));
            }
        }
        out
    }

    /// Paths `x -a-> y -b-> z -c-> w` counted one by one, without those where `z = x`
    /// (`ends`), where `a` and `b` walk one edge (`edges`, both hops over `a`'s edges), or
    /// where `z` is adjacent to `x` over `r`.
    #[allow(clippy::type_complexity)]
    fn excluded_walks(
        x: i64,
        hops: [(&[(i64, i64)], &[bool]); 3],
        ends: bool,
        one_edge: bool,
        r: Option<(&[(i64, i64)], &[bool])>,
    ) -> u64 {
        let [(a, oa), (b, ob), (c, oc)] = hops;
        let mut n = 0;
        for (y, e1) in steps(a, oa, x) {
            for (z, e2) in steps(b, ob, y) {
                let adjacent = r.is_some_and(|(r, or)| steps(r, or, x).iter().any(|s| s.0 == z));
                if (ends && z == x) || (one_edge && e1 == e2) || adjacent {
                    continue;
                }
                n += steps(c, oc, z).len() as u64;
            }
        }
        n
    }

    #[test]
    fn branches_multiply_the_paths_through_their_node() {
        let n = 9;
        let (a, b, c) = (edges(n, 30, 11), edges(n, 20, 12), edges(n, 25, 13));
        let orientations: [&[bool]; 3] = [&[false], &[true], &[false, true]];
        for ob in orientations {
            // x -a-> y, then y -b-> u (a branch, itself branched at u by c) and y -c-> z.
            let mut deep = hop(n, &b, ob.to_vec(), (1, 1));
            deep.branches = vec![vec![hop(n, &c, vec![true], (1, 1))]];
            let mut first = hop(n, &a, vec![false, true], (1, 1));
            first.branches = vec![vec![deep]];
            let hops = [first, hop(n, &c, vec![false], (1, 2))];
            let want: Vec<u64> = (0..n)
                .map(|x| {
                    steps(&a, &[false, true], x)
                        .iter()
                        .map(|&(y, _)| {
                            let branch: u64 = steps(&b, ob, y)
                                .iter()
                                .map(|&(u, _)| steps(&c, &[true], u).len() as u64)
                                .sum();
                            branch * walks(y, &[(&c, &[false], (1, 2))])
                        })
                        .sum()
                })
                .collect();
            assert_eq!(
                arm_counts(&hops, &mut Work::default()).unwrap(),
                want,
                "{ob:?}"
            );
            let forwards: Vec<u64> = (0..n as u32)
                .map(|x| {
                    let ends = forward(&hops, vec![(x, 1)], &mut Work::default()).unwrap();
                    ends.iter().map(|e| e.1).sum()
                })
                .collect();
            assert_eq!(forwards, want, "forwards {ob:?}");
        }
    }

    #[test]
    fn exclusions_agree_with_paths_counted_one_by_one() {
        // A small dense graph (parallel edges), and one past a word of node marks.
        for (n, m) in [(9, [30, 25, 12]), (150, [260, 200, 300])] {
            exclusions_agree_on(n, m);
        }
    }

    fn exclusions_agree_on(n: i64, [ma, mb, mr]: [usize; 3]) {
        // No self-loops (exclusions need none); parallel edges kept.
        let no_loops = |e: Vec<(i64, i64)>| -> Vec<(i64, i64)> {
            e.into_iter().filter(|(a, b)| a != b).collect()
        };
        let (a, b, r) = (
            no_loops(edges(n, ma, 7)),
            no_loops(edges(n, mb, 8)),
            no_loops(edges(n, mr, 9)),
        );
        let orientations: [&[bool]; 3] = [&[false], &[true], &[false, true]];
        let folds = [
            (true, false, false),
            (false, true, false),
            (false, false, true),
            (true, false, true),
            (true, true, false),
        ];
        // Both hops over one index: the second walks the first's edges (back, when mirrored).
        for one_index in [false, true] {
            for oa in orientations {
                for ob in orientations {
                    // The absent hop walked each way.
                    let absent_ways = |absent: bool| match absent {
                        true => orientations.map(Some).to_vec(),
                        false => vec![None],
                    };
                    let cases = folds.iter().flat_map(|&(ends, one_edge, absent)| {
                        absent_ways(absent)
                            .into_iter()
                            .map(move |w| (ends, one_edge, w))
                    });
                    for (ends, one_edge, absent) in cases {
                        // Relationship uniqueness is between hops over one table.
                        let b = if one_edge || one_index { &a } else { &b };
                        let fold = FoldSpec {
                            distinct_ends: ends,
                            distinct_edges: one_edge,
                            absent: absent.map(|w| Box::new(hop(n, &r, w.to_vec(), (1, 1)))),
                        };
                        let mut first = hop(n, &a, oa.to_vec(), (1, 1));
                        first.fold = Some(fold);
                        let mut second = hop(n, b, ob.to_vec(), (1, 1));
                        if one_index {
                            second.data = first.data.clone();
                        }
                        let hops = [first, second, hop(n, &a, vec![false], (1, 1))];
                        check_exclusions(n, &hops, [&a, b], [oa, ob], (ends, one_edge), &r, absent);
                    }
                }
            }
        }
    }

    /// Patterns of several cycles joined node by node, against their matches counted one by
    /// one from the edge lists: per step, each edge of its hop from the node it starts at, times
    /// each closing hop's edges between the new node and the node it closes onto. Few roots
    /// (their first step's nodes shared out) and many (the roots shared out); parallel edges
    /// and self-loops included.
    #[test]
    fn joined_patterns_agree_with_matches_counted_one_by_one() {
        use crate::operators::count_paths::JoinStep;
        use crate::operators::count_paths_join::SHARED_ROOTS as SHARED;
        let ways: [&[bool]; 3] = [&[false], &[true], &[false, true]];
        // (from, edges, ways, closes as (onto, reversed, edges, ways)) per step.
        type Step<'e> = (
            usize,
            &'e [(i64, i64)],
            &'e [bool],
            Vec<(usize, bool, &'e [(i64, i64)], &'e [bool])>,
        );
        // Every way over a small graph; one over roots enough to be shared out themselves.
        for (n, m, tried) in [(12, 150, 3), (SHARED as i64 + 20, 1800, 1)] {
            let [a, b, c] = [31, 32, 33].map(|seed| edges(n, m, seed));
            for (k, &w) in ways.iter().enumerate().take(tried) {
                let v = ways[(k + 1) % 3];
                let shapes: Vec<Vec<Step>> = vec![
                    // Two triangles sharing the edge r -> x: r -> x, x -> y closed onto r, then
                    // z from x closed onto r and y.
                    vec![
                        (0, &a, w, vec![]),
                        (1, &b, v, vec![(0, true, &c, w)]),
                        (1, &c, w, vec![(0, false, &a, v), (2, true, &b, w)]),
                    ],
                    // A triangle whose nodes hang from the root by one hop each (a shared
                    // country): r -> p, p -> q closed by r -> q, q -> s closed onto p and by r -> s.
                    vec![
                        (0, &a, v, vec![]),
                        (1, &b, w, vec![(0, false, &a, v)]),
                        (2, &b, w, vec![(1, true, &b, w), (0, false, &a, v)]),
                    ],
                ];
                for shape in &shapes {
                    let arms: Vec<Vec<HopSpec>> = (shape.iter())
                        .map(|(_, e, o, closes)| {
                            let mut arm = vec![hop(n, e, o.to_vec(), (1, 1))];
                            arm.extend(closes.iter().map(|c| hop(n, c.2, c.3.to_vec(), (1, 1))));
                            arm
                        })
                        .collect();
                    let joins: Vec<JoinStep> = (shape.iter())
                        .map(|(from, _, _, closes)| JoinStep {
                            from: *from,
                            closes: closes.iter().map(|c| (c.0, c.1)).collect(),
                        })
                        .collect();
                    let want: Vec<u64> =
                        (0..n).map(|r| matches_from(shape, &mut vec![r])).collect();
                    assert!(want.iter().sum::<u64>() > 0, "{w:?} {v:?}");
                    for roots in [(0..n as u32).collect::<Vec<_>>(), vec![3, 7, 11]] {
                        let mut got = vec![0u64; n as usize];
                        let work = &mut Work::default();
                        let join = crate::operators::count_paths_join::join_counts;
                        join(&arms, &joins, &roots, &mut got, work).unwrap();
                        for &r in &roots {
                            assert_eq!(got[r as usize], want[r as usize], "root {r}: {w:?} {v:?}");
                        }
                    }
                }
            }
        }

        fn matches_from(shape: &[Step], bound: &mut Vec<i64>) -> u64 {
            let Some((from, e, o, closes)) = shape.get(bound.len() - 1) else {
                return 1;
            };
            let mut total = 0;
            for (y, _) in steps(e, o, bound[*from]) {
                // The edges of a closing hop from the new node onto an earlier one (walked
                // from the earlier one when not reversed).
                let ways: u64 = (closes.iter())
                    .map(|&(onto, back, ce, co)| {
                        let (from, to) = match back {
                            true => (y, bound[onto]),
                            false => (bound[onto], y),
                        };
                        steps(ce, co, from).iter().filter(|s| s.0 == to).count() as u64
                    })
                    .product();
                if ways > 0 {
                    bound.push(y);
                    total += ways * matches_from(shape, bound);
                    bound.pop();
                }
            }
            total
        }
    }

    /// A joined count from few roots holds its first step's items from the query's memory
    /// pool while it counts, and gives them back.
    #[test]
    fn joined_counts_hold_their_work_items_from_the_memory_pool() {
        use crate::operators::count_paths::JoinStep;
        use crate::operators::count_paths_join::join_counts;
        use datafusion::execution::memory_pool::{GreedyMemoryPool, MemoryConsumer, MemoryPool};
        let n = 40;
        let a = edges(n, 600, 5);
        // r -> x, then y from x closed onto r: triangles.
        let arms = vec![
            vec![hop(n, &a, vec![false], (1, 1))],
            vec![
                hop(n, &a, vec![false], (1, 1)),
                hop(n, &a, vec![false], (1, 1)),
            ],
        ];
        let joins = vec![
            JoinStep {
                from: 0,
                closes: vec![],
            },
            JoinStep {
                from: 1,
                closes: vec![(0, false)],
            },
        ];
        let roots: Vec<u32> = (0..n as u32).collect();
        let mut want = vec![0u64; n as usize];
        join_counts(&arms, &joins, &roots, &mut want, &mut Work::default()).unwrap();
        for (limit, fits) in [(64, false), (1 << 20, true)] {
            let pool: Arc<dyn MemoryPool> = Arc::new(GreedyMemoryPool::new(limit));
            let memory = MemoryConsumer::new("test").register(&pool);
            let mut work = Work::default().holding(memory);
            let mut got = vec![0u64; n as usize];
            let run = join_counts(&arms, &joins, &roots, &mut got, &mut work);
            match fits {
                true => {
                    run.unwrap();
                    assert_eq!(got, want);
                    assert_eq!(pool.reserved(), 0, "given back once counted");
                }
                false => {
                    let e = run.unwrap_err().to_string();
                    assert!(e.contains("Resources exhausted"), "{e}");
                }
            }
            drop(work);
            assert_eq!(pool.reserved(), 0);
        }
    }

    #[test]
    fn triangles_counted_by_edge_agree_with_triangles_counted_per_root() {
        // 700 nodes, then the same spread over a table split over the cores.
        for spread in [1, 47] {
            triangles_by_edge_and_per_root(spread);
        }
    }

    fn triangles_by_edge_and_per_root(spread: i64) {
        let n = 700 * spread;
        assert!(spread == 1 || n as usize >= PARALLEL_NODES);
        let spread_out = |e: Vec<(i64, i64)>| -> Vec<(i64, i64)> {
            e.into_iter()
                .map(|(a, b)| (a * spread, b * spread))
                .collect()
        };
        let [a, b, c] = [21, 22, 23].map(|seed| spread_out(edges(700, 4000, seed)));
        let all: Vec<u32> = (0..n as u32).collect();
        let orientations: [&[bool]; 3] = [&[false], &[true], &[false, true]];
        for o in orientations {
            // One arm of two hops closed onto the root; two one-hop arms closed between ends.
            let shapes = [
                (
                    vec![vec![
                        hop(n, &a, o.to_vec(), (1, 1)),
                        hop(n, &b, vec![true], (1, 1)),
                    ]],
                    hop(n, &c, o.to_vec(), (1, 1)),
                ),
                (
                    vec![
                        vec![hop(n, &a, vec![false], (1, 1))],
                        vec![hop(n, &b, o.to_vec(), (1, 1))],
                    ],
                    hop(n, &c, o.to_vec(), (1, 1)),
                ),
            ];
            for (arms, close) in &shapes {
                // All roots at once go by edge; few at a time, root by root.
                let mut by_edge = vec![0u64; n as usize];
                cycle_counts(arms, close, &all, &mut by_edge, &mut Work::default()).unwrap();
                let mut per_root = vec![0u64; n as usize];
                for few in all.chunks(FORWARD_ROOTS) {
                    let w = &mut Work::default();
                    cycle_counts(arms, close, few, &mut per_root, w).unwrap();
                }
                assert_eq!(by_edge, per_root, "{o:?}");
                assert!(by_edge.iter().sum::<u64>() > 0, "{o:?}");
            }
        }
    }

    /// Cycles of four and five hops, any ways, parallel edges and self-loops included: one
    /// arm closed onto the root, or two arms closed from the second's end onto the first's.
    /// Counted for all roots at once (split over the cores when there are many) and for few,
    /// against the walks counted one by one.
    #[test]
    fn long_cycles_agree_with_walks_counted_one_by_one() {
        // Nodes' neighbours over `edges` walked in `orient` (a self-loop once when walked
        // either way), one entry per edge.
        let adj = |n: i64, edges: &[(i64, i64)], orient: &[bool]| {
            let mut out = vec![Vec::new(); n as usize];
            for &(a, b) in edges {
                if orient.contains(&false) {
                    out[a as usize].push(b);
                }
                if orient.contains(&true) && !(orient.len() == 2 && a == b) {
                    out[b as usize].push(a);
                }
            }
            out
        };
        let walk = |lists: &[Vec<Vec<i64>>], r: i64| {
            let mut ends = vec![r];
            for list in lists {
                ends = ends
                    .iter()
                    .flat_map(|&x| list[x as usize].clone())
                    .collect();
            }
            ends
        };
        let ways: [&[bool]; 3] = [&[false], &[true], &[false, true]];
        // Nodes with edges spread over a table of `n`: all of them walked root by root over
        // whole-table masks, on one core or (over many nodes) split over the cores.
        for (nodes, spread) in [(600i64, 1i64), (200, 163)] {
            let n = match spread {
                1 => nodes,
                _ => PARALLEL_NODES as i64 + 5,
            };
            let spread_out =
                |e: Vec<(i64, i64)>| e.into_iter().map(|(a, b)| (a * spread, b * spread));
            let with_loops: Vec<Vec<(i64, i64)>> = (0..5)
                .map(|k| spread_out(edges(nodes, 3 * nodes as usize, 40 + k)).collect())
                .collect();
            // The lengths of the two arms (the first empty: one arm closed onto the root).
            for (round, (la, lb)) in [(0, 3), (0, 4), (1, 2), (2, 1), (2, 2)]
                .into_iter()
                .enumerate()
            {
                // Every other round without self-loops: the closing hop's two ways read apart.
                let tables: Vec<Vec<(i64, i64)>> = (with_loops.iter())
                    .map(|t| {
                        t.iter()
                            .copied()
                            .filter(|e| round % 2 == 0 || e.0 != e.1)
                            .collect()
                    })
                    .collect();
                let len = la + lb + 1;
                let orient: Vec<&[bool]> = (0..len).map(|k| ways[(k * 7 + round) % 3]).collect();
                let hops: Vec<HopSpec> = (0..len)
                    .map(|k| hop(n, &tables[k], orient[k].to_vec(), (1, 1)))
                    .collect();
                let lists: Vec<_> = (0..len).map(|k| adj(n, &tables[k], orient[k])).collect();
                let (arm_a, arm_b) = (hops[..la].to_vec(), hops[la..la + lb].to_vec());
                let close = &hops[len - 1];
                let arms = match la {
                    0 => vec![arm_b],
                    _ => vec![arm_a, arm_b],
                };
                let want = |r: i64| {
                    let (ends_a, ends_b) = (walk(&lists[..la], r), walk(&lists[la..la + lb], r));
                    let back = &lists[len - 1];
                    let closing = |x: i64| {
                        let to = back[x as usize].iter();
                        to.map(|y| ends_a.iter().filter(|&a| a == y).count())
                            .sum::<usize>()
                    };
                    ends_b.into_iter().map(closing).sum::<usize>() as u64
                };
                let all: Vec<u32> = (0..n as u32).collect();
                let mut by_all = vec![0u64; n as usize];
                let w = &mut Work::default();
                cycle_counts(&arms, close, &all, &mut by_all, w).unwrap();
                assert!(w.edges > 0);
                let few: Vec<u32> = (0..nodes)
                    .step_by(nodes as usize / 100)
                    .map(|i| (i * spread) as u32)
                    .collect();
                let mut by_few = vec![0u64; n as usize];
                cycle_counts(&arms, close, &few, &mut by_few, &mut Work::default()).unwrap();
                for &r in &few {
                    let want = want(r as i64);
                    let at = format!("n {n}, arms {la} and {lb}, root {r}");
                    assert_eq!(by_all[r as usize], want, "{at}");
                    assert_eq!(by_few[r as usize], want, "{at}");
                }
                assert!(few.iter().any(|&r| by_all[r as usize] > 0), "{n} {la} {lb}");
            }
        }
    }

    /// The counts of `hops` (the first two over `edges` in `orient`, folded as `fold` says)
    /// backwards and forwards, against their walks counted one by one.
    fn check_exclusions(
        n: i64,
        hops: &[HopSpec; 3],
        edges: [&[(i64, i64)]; 2],
        orient: [&[bool]; 2],
        (ends, one_edge): (bool, bool),
        r: &[(i64, i64)],
        absent: Option<&[bool]>,
    ) {
        let ([a, b], [oa, ob]) = (edges, orient);
        let r = absent.map(|w| (r, w));
        let want: Vec<u64> = (0..n)
            .map(|x| {
                let hops = [(a, oa), (b, ob), (a, &[false][..])];
                excluded_walks(x, hops, ends, one_edge, r)
            })
            .collect();
        let what = format!("{oa:?} {ob:?} ends={ends} edges={one_edge} {absent:?}");
        let got = arm_counts(hops, &mut Work::default()).unwrap();
        assert_eq!(got, want, "backwards: {what}");
        // Pair by pair, and finished backwards (more pairs than edges from 3 starts).
        let mut suffixes = Vec::new();
        let forwards: Vec<u64> = (0..n as u32)
            .map(|x| {
                let w = &mut Work::default();
                forward_count(hops, vec![(x, 1)], w, &mut suffixes, 1).unwrap()
            })
            .collect();
        assert_eq!(forwards, want, "forwards: {what}");
        let starts: Vec<(u32, u64)> = (0..n as u32).map(|x| (x, 1 + x as u64)).collect();
        let weighted: u64 = (0..n as usize).map(|x| want[x] * (1 + x as u64)).sum();
        let w = &mut Work::default();
        let all = forward_count(hops, starts, w, &mut Vec::new(), 1).unwrap();
        assert_eq!(all, weighted, "all forwards: {what}");
    }

    /// Walks from `x` along the hops, counted one by one: per hop, every length it allows,
    /// each step one edge in one of its orientations (an undirected self-loop once).
    fn walks(x: i64, hops: &[(&[(i64, i64)], &[bool], (u64, u64))]) -> u64 {
        let Some(((edges, orient, (min, max)), rest)) = hops.split_first() else {
            return 1;
        };
        let step = |y: i64| -> Vec<i64> {
            let mut out = Vec::new();
            for &(a, b) in edges.iter() {
                if orient.contains(&false) && a == y {
                    out.push(b);
                }
                if orient.contains(&true) && b == y && !(orient.len() == 2 && a == b) {
                    out.push(a);
                }
            }
            out
        };
        let mut total = 0;
        let mut frontier = vec![x];
        for len in 0..=*max {
            if len >= *min {
                total += frontier.iter().map(|&y| walks(y, rest)).sum::<u64>();
            }
            frontier = frontier.iter().flat_map(|&y| step(y)).collect();
        }
        total
    }

    #[test]
    fn arm_counts_agree_with_walks_counted_one_by_one() {
        let n = 7;
        let (a, b) = (edges(n, 12, 1), edges(n, 9, 2));
        let shapes: [(Vec<bool>, (u64, u64)); 4] = [
            (vec![false], (1, 1)),
            (vec![true], (1, 1)),
            (vec![false, true], (1, 1)),
            (vec![false], (0, 2)),
        ];
        for (oa, la) in &shapes {
            for (ob, lb) in &shapes {
                let hops = [hop(n, &a, oa.clone(), *la), hop(n, &b, ob.clone(), *lb)];
                let got = arm_counts(&hops, &mut Work::default()).unwrap();
                let want: Vec<u64> = (0..n)
                    .map(|x| walks(x, &[(&a, oa, *la), (&b, ob, *lb)]))
                    .collect();
                assert_eq!(got, want, "{oa:?} {la:?} then {ob:?} {lb:?}");
            }
        }
    }

    #[test]
    fn many_nodes_split_over_cores_count_the_same() {
        let n = PARALLEL_NODES as i64 + 17;
        let a = edges(n, 3 * n as usize, 3);
        let hops = [
            hop(n, &a, vec![false, true], (1, 1)),
            hop(n, &a, vec![false], (1, 2)),
        ];
        let got = arm_counts(&hops, &mut Work::default()).unwrap();
        for x in [0, 1, n / 2, n - 1] {
            let want = walks(x, &[(&a, &[false, true], (1, 1)), (&a, &[false], (1, 2))]);
            assert_eq!(got[x as usize], want, "node {x}");
        }
    }

    /// Few nodes with many edges (most of them on a few nodes) are split over the cores by
    /// their edges: the counts are the same.
    #[test]
    fn few_nodes_with_many_edges_split_over_cores_count_the_same() {
        let n = 100;
        let mut a = edges(n, PARALLEL_EDGES, 8);
        // A hub among the last nodes: the ranges are cut by edges, not by nodes.
        a.extend((0..3000).map(|k| (n - 1, k % n)));
        let hops = [
            hop(n, &a, vec![false, true], (1, 1)),
            hop(n, &a, vec![false], (1, 1)),
        ];
        let got = arm_counts(&hops, &mut Work::default()).unwrap();
        // x - y either way (a self-loop once), then y's out-degree.
        let mut out_degree = vec![0u64; n as usize];
        a.iter().for_each(|e| out_degree[e.0 as usize] += 1);
        for x in 0..n {
            let want: u64 = (a.iter())
                .map(|&(u, v)| match (u == x, v == x) {
                    (true, true) => out_degree[x as usize],
                    (true, false) => out_degree[v as usize],
                    (false, true) => out_degree[u as usize],
                    (false, false) => 0,
                })
                .sum();
            assert_eq!(got[x as usize], want, "node {x}");
        }
    }

    /// With its query's flag set, a count stops with the cancelled error instead of a count:
    /// split over the cores or not, counted backwards or forwards.
    #[test]
    fn a_cancelled_count_stops_with_the_cancelled_error() {
        use crate::operators::cancel::CancelFlag;
        let n = PARALLEL_NODES as i64 + 17;
        let a = edges(n, 3 * n as usize, 5);
        let hops = vec![
            hop(n, &a, vec![false, true], (1, 1)),
            hop(n, &a, vec![false], (1, 3)),
        ];
        let flag = CancelFlag::new();
        let flagged = || Work::new(Checkpoint::cancelled_by(&flag));
        let roots = vec![1u64; n as usize];
        // As many roots as are walked forwards: enough edges for the checkpoint to look.
        let few: Vec<u64> = (0..n)
            .map(|x| u64::from(x < FORWARD_ROOTS as i64))
            .collect();
        // Unflagged, the same counts answer.
        assert!(arm_counts(&hops, &mut flagged()).is_ok());
        assert!(total(
            std::slice::from_ref(&hops),
            (None, &[]),
            &[],
            &few,
            &mut flagged()
        )
        .is_ok());
        flag.cancel();
        let degrees = [hop(n, &a, vec![false], (1, 1))];
        let errors = [
            arm_counts(&hops, &mut flagged()).map(|_| ()),
            arm_counts(&degrees, &mut flagged()).map(|_| ()),
            total(
                std::slice::from_ref(&hops),
                (None, &[]),
                &[],
                &roots,
                &mut flagged(),
            )
            .map(|_| ()),
            total(
                std::slice::from_ref(&hops),
                (None, &[]),
                &[],
                &few,
                &mut flagged(),
            )
            .map(|_| ()),
        ];
        for (i, e) in errors.into_iter().enumerate() {
            let e = e.expect_err("cancelled");
            assert!(
                e.to_string().contains("the query was cancelled"),
                "{i}: {e}"
            );
        }
        // Past the budget of work done in place it stops too, to run again elsewhere.
        let mut budgeted = Work::new(Checkpoint::with_budget(1000));
        assert!(arm_counts(&hops, &mut budgeted).is_err());
        assert!(budgeted.cp.over_budget());
    }

    /// An optional hop, alone in its arm (from the root or hanging from a node), counts a
    /// node without a match once: in backward and forward counts, from few roots and from
    /// many (the two ways `per_root` counts).
    #[test]
    fn optional_hops_count_a_node_without_a_match_once() {
        for (n, m) in [(9, 6), (400, 300)] {
            let (a, b, c) = (edges(n, 2 * m, 21), edges(n, m, 22), edges(n, m, 23));
            let optional = |e: &[(i64, i64)], o: &[bool]| HopSpec {
                optional: true,
                ..hop(n, e, o.to_vec(), (1, 1))
            };
            let matched = |e: &[(i64, i64)], o: &[bool], x: i64| steps(e, o, x).len() as u64;
            // x -a-> y, an optional b hanging from y; an optional c from the root.
            let mut first = hop(n, &a, vec![false], (1, 1));
            first.branches = vec![vec![optional(&b, &[true])]];
            let arms = [vec![first], vec![optional(&c, &[false, true])]];
            let arm0: Vec<u64> = (0..n)
                .map(|x| {
                    let ys = steps(&a, &[false], x);
                    ys.iter()
                        .map(|&(y, _)| matched(&b, &[true], y).max(1))
                        .sum()
                })
                .collect();
            assert!(arm0.iter().any(|&c| c > 0), "some paths");
            let no_b = (0..n).filter(|&y| matched(&b, &[true], y) == 0).count();
            assert!(
                no_b > 0 && no_b < n as usize,
                "nodes with and without matches"
            );
            let mut work = Work::default();
            assert_eq!(arm_counts(&arms[0], &mut work).unwrap(), arm0);
            let arm1: Vec<u64> = (0..n)
                .map(|x| matched(&c, &[false, true], x).max(1))
                .collect();
            assert_eq!(arm_counts(&arms[1], &mut work).unwrap(), arm1);
            for (arm, want) in arms.iter().zip([&arm0, &arm1]) {
                let mut suffixes = Vec::new();
                let forwards: Vec<u64> = (0..n as u32)
                    .map(|x| forward_count(arm, vec![(x, 1)], &mut work, &mut suffixes, 1))
                    .collect::<Result<_>>()
                    .unwrap();
                assert_eq!(&forwards, want);
            }
            let roots = vec![1u64; n as usize];
            let (count, _) = total(&arms, (None, &[]), &[], &roots, &mut work).unwrap();
            let want: u64 = (0..n as usize).map(|x| arm0[x] * arm1[x]).sum();
            assert_eq!(count as u64, want, "{n} nodes");
        }
    }

    #[test]
    fn totals_weigh_each_root_by_its_rows() {
        let n = 5;
        let a = edges(n, 8, 4);
        let arm = vec![hop(n, &a, vec![false], (1, 1))];
        let roots = [2, 0, 1, 0, 3];
        let (count, _) = total(&[arm], (None, &[]), &[], &roots, &mut Work::default()).unwrap();
        let want: u64 = (0..n)
            .map(|x| roots[x as usize] * walks(x, &[(&a, &[false], (1, 1))]))
            .sum();
        assert_eq!(count as u64, want);
    }
}
