//! CSR adjacency indexes: per relationship table and direction, node keys map to dense
//! ordinals (row positions in the node table), and each node's edges are a contiguous run of
//! (neighbour ordinal, edge row position) pairs: 8 bytes per edge per direction plus offsets.

pub mod keys;
pub mod mapped;
pub mod persist;
pub mod registry;
pub mod store;

pub use keys::NodeKeys;
pub use store::TableColumns;

use crate::error::{Error, Result};
use arrow::array::{Array, AsArray};
use arrow::buffer::ScalarBuffer;
use arrow::datatypes::{DataType, Int64Type, ToByteSlice};
use std::sync::Arc;

/// One direction of one relationship table: arrays built in memory, or windows of a mapped
/// index file (see [`mapped`]).
#[derive(Clone)]
pub struct Csr {
    /// `offsets[o]..offsets[o + 1]` are the edges of the node with ordinal `o`. Read through
    /// [`Csr::range`], which checks a mapped file's block on first use.
    pub offsets: ScalarBuffer<u32>,
    /// Ordinal of the node at the other end, per edge.
    pub neighbors: ScalarBuffer<u32>,
    /// Row position of the edge in the relationship table, per edge.
    pub edge_rows: ScalarBuffer<u32>,
    /// Nodes with at least one edge (distinct sources of this direction).
    pub with_edges: usize,
    /// A mapped file's blocks of nodes, each checked on first use; `None`: built here.
    checks: Option<Arc<CsrChecks>>,
}

/// The checks of a mapped CSR's blocks: each block of nodes covers their offsets and their
/// edges' neighbours and rows.
#[derive(Debug)]
pub struct CsrChecks {
    pub blocks: mapped::Blocks,
    /// Bounds of a neighbour ordinal and an edge row.
    pub far_nodes: usize,
    pub table_rows: usize,
}

/// Nodes per checked block of a CSR file written here, as a shift: 64 nodes, whose edges a
/// lookup in the block reads anyway, so that checking costs about what the lookups do.
pub const BLOCK_SHIFT: usize = 6;

impl PartialEq for Csr {
    fn eq(&self, other: &Self) -> bool {
        self.offsets == other.offsets
            && self.neighbors == other.neighbors
            && self.edge_rows == other.edge_rows
    }
}

// Summaries only: plans are formatted with `{:?}` (in logs, errors), and printing millions of
// ordinals there costs far more than the query.
impl std::fmt::Debug for Csr {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "Csr {{ nodes: {}, edges: {} }}",
            self.num_nodes(),
            self.num_edges()
        )
    }
}

impl Csr {
    /// Builds from parallel arrays of (from ordinal, to ordinal, edge row): each node's edges
    /// sorted by neighbour ordinal, then by edge row, so that adjacency lists intersect by
    /// merging (cycles) and a neighbour is found by binary search.
    pub fn build(num_nodes: usize, from: &[u32], to: &[u32], rows: &[u32]) -> Self {
        // Rows arrive in table order; a stable sort by neighbour, then a stable grouping by
        // node, leaves every run sorted by (neighbour, row).
        let far_nodes = to.iter().max().map_or(0, |&m| m as usize + 1);
        let (_, by_to) = stable_order(far_nodes, to);
        let from_by_to: Vec<u32> = by_to.iter().map(|&i| from[i as usize]).collect();
        let (offsets, by_from) = stable_order(num_nodes, &from_by_to);
        let edge = |j: &u32| by_to[*j as usize] as usize;
        Self::new(
            offsets,
            by_from.iter().map(|j| to[edge(j)]).collect(),
            by_from.iter().map(|j| rows[edge(j)]).collect(),
        )
    }

    /// From arrays built in memory (sound by construction).
    pub fn new(offsets: Vec<u32>, neighbors: Vec<u32>, edge_rows: Vec<u32>) -> Self {
        let with_edges = offsets.windows(2).filter(|w| w[1] > w[0]).count();
        Self {
            offsets: offsets.into(),
            neighbors: neighbors.into(),
            edge_rows: edge_rows.into(),
            with_edges,
            checks: None,
        }
    }

    /// Windows of a mapped file, checked block by block on first use. The caller has checked
    /// the file's header: the arrays' lengths, the first offset 0 and the last the edge count.
    pub fn mapped(
        offsets: ScalarBuffer<u32>,
        neighbors: ScalarBuffer<u32>,
        edge_rows: ScalarBuffer<u32>,
        with_edges: usize,
        checks: CsrChecks,
    ) -> Self {
        Self {
            offsets,
            neighbors,
            edge_rows,
            with_edges,
            checks: Some(Arc::new(checks)),
        }
    }

    /// The damage a check of a mapped file's block found, as an error message.
    pub fn damage(&self) -> Option<String> {
        self.checks.as_ref()?.blocks.file().damage()
    }

    /// Number of blocks of `1 << shift` nodes.
    pub fn num_blocks(&self, shift: usize) -> usize {
        self.num_nodes().div_ceil(1 << shift)
    }

    /// The CRC-32 of block `b`: over its offsets (one past its last node's included), then its
    /// edges' neighbours, then their rows. With the bounds of a neighbour ordinal and an edge
    /// row, its contents are checked first: offsets in order, neighbours and rows within
    /// bounds, each node's neighbours sorted.
    pub fn block_crc(
        &self,
        shift: usize,
        b: usize,
        bounds: Option<(usize, usize)>,
    ) -> std::result::Result<u32, String> {
        let lo = (b << shift).min(self.num_nodes());
        let hi = ((b + 1) << shift).min(self.num_nodes());
        let offs = self.offsets.get(lo..=hi).ok_or("offsets missing")?;
        let (first, last) = (offs[0] as usize, offs[offs.len() - 1] as usize);
        if first > last || last > self.num_edges() {
            return Err("offsets out of order".into());
        }
        let (nbrs, rows) = (&self.neighbors[first..last], &self.edge_rows[first..last]);
        if let Some((far_nodes, table_rows)) = bounds {
            if offs.windows(2).any(|w| w[0] > w[1]) {
                return Err("offsets out of order".into());
            }
            if nbrs.iter().any(|&n| n as usize >= far_nodes) {
                return Err("neighbour ordinal out of range".into());
            }
            if rows.iter().any(|&r| r as usize >= table_rows) {
                return Err("edge row out of range".into());
            }
            if offs.windows(2).any(|w| {
                let run = &self.neighbors[w[0] as usize..w[1] as usize];
                run.windows(2).any(|p| p[0] > p[1])
            }) {
                return Err("neighbours are not sorted".into());
            }
        }
        let mut h = crc32fast::Hasher::new();
        h.update(offs.to_byte_slice());
        h.update(nbrs.to_byte_slice());
        h.update(rows.to_byte_slice());
        Ok(h.finalize())
    }

    pub fn num_nodes(&self) -> usize {
        self.offsets.len().saturating_sub(1)
    }

    pub fn num_edges(&self) -> usize {
        self.neighbors.len()
    }

    /// The edges of node `ordinal` as index range into `neighbors` / `edge_rows`.
    /// Of a mapped file, its block checked first: in a damaged block, none.
    #[inline]
    pub fn range(&self, ordinal: u32) -> std::ops::Range<usize> {
        let o = ordinal as usize;
        if o + 1 >= self.offsets.len() {
            return 0..0;
        }
        if let Some(c) = &self.checks {
            let (shift, bounds) = (c.blocks.shift(), Some((c.far_nodes, c.table_rows)));
            let b = o >> shift;
            if !c.blocks.sound(b, || self.block_crc(shift, b, bounds)) {
                return 0..0;
            }
        }
        self.offsets[o] as usize..self.offsets[o + 1] as usize
    }

    pub fn degree(&self, ordinal: u32) -> usize {
        self.range(ordinal).len()
    }

    /// Bytes held: 8 per edge plus 4 per node.
    pub fn memory_bytes(&self) -> usize {
        4 * (self.offsets.len() + self.neighbors.len() + self.edge_rows.len())
    }
}

/// A stable counting sort of `keys` (each `< n`): the offsets of each key's run and the
/// positions of `keys` in sorted order.
fn stable_order(n: usize, keys: &[u32]) -> (Vec<u32>, Vec<u32>) {
    let mut offsets = vec![0u32; n + 1];
    for &k in keys {
        offsets[k as usize + 1] += 1;
    }
    for i in 0..n {
        offsets[i + 1] += offsets[i];
    }
    let mut cursor: Vec<u32> = offsets[..n].to_vec();
    let mut order = vec![0u32; keys.len()];
    for (i, &k) in keys.iter().enumerate() {
        let slot = &mut cursor[k as usize];
        order[*slot as usize] = i as u32;
        *slot += 1;
    }
    (offsets, order)
}

/// Dataset versions an index was built from; an index is valid only for exactly these.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Versions {
    pub edges: u64,
    pub from: u64,
    pub to: u64,
}

/// Both directions of one relationship table.
#[derive(Debug)]
pub struct CsrIndex {
    /// Keyed by source ordinal: neighbours are targets.
    pub out: Csr,
    /// Keyed by target ordinal: neighbours are sources.
    pub inc: Csr,
    /// Rows of the relationship table (including edges whose endpoint is missing).
    pub table_rows: usize,
    pub versions: Option<Versions>,
    /// Whether some edge goes from a node to itself (found when built, stored in the file).
    pub self_loops: bool,
}

impl CsrIndex {
    /// True when some edge is a self-loop.
    pub fn has_self_loops(&self) -> bool {
        self.self_loops
    }

    /// The damage checks of its mapped file found so far, as an error message.
    pub fn damage(&self) -> Option<String> {
        self.out.damage().or_else(|| self.inc.damage())
    }

    /// Checks every block now (`index status`): the damage found, if any.
    pub fn check_all(&self) -> Option<String> {
        for c in [&self.out, &self.inc] {
            if let Some(k) = &c.checks {
                for b in 0..k.blocks.len() {
                    let _ = c.range((b << k.blocks.shift()) as u32);
                }
            }
        }
        self.damage()
    }

    /// An error once a check of its mapped file found damage: what an operator using it
    /// returns rather than results that may lack the damaged block's edges.
    pub fn intact(&self) -> Result<()> {
        self.damage().map_or(Ok(()), |why| Err(Error::storage(why)))
    }

    /// Builds both directions from the endpoint key columns of the relationship table (one
    /// scan's worth of data). Edges whose endpoint is not a node are left out, as a join would.
    pub fn build(
        src: &dyn Array,
        dst: &dyn Array,
        from_keys: &NodeKeys,
        to_keys: &NodeKeys,
        versions: Option<Versions>,
    ) -> Result<Self> {
        let n = src.len();
        if n > u32::MAX as usize {
            return Err(Error::storage(format!(
                "relationship table has {n} rows; a CSR holds at most {}",
                u32::MAX
            )));
        }
        let src = as_i64(src)?;
        let dst = as_i64(dst)?;
        let (mut f, mut t, mut r) = (
            Vec::with_capacity(n),
            Vec::with_capacity(n),
            Vec::with_capacity(n),
        );
        for i in 0..n {
            if src.is_null(i) || dst.is_null(i) {
                continue;
            }
            let (Some(a), Some(b)) = (
                from_keys.ordinal(src.value(i)),
                to_keys.ordinal(dst.value(i)),
            ) else {
                continue;
            };
            f.push(a);
            t.push(b);
            r.push(i as u32);
        }
        // A key missing from a damaged block of a mapped keys file is not a missing node.
        from_keys.intact()?;
        to_keys.intact()?;
        // By ordinal, as the operators compare (they ask only of a hop within one table).
        let self_loops = f.iter().zip(&t).any(|(a, b)| a == b);
        let out = Csr::build(from_keys.len(), &f, &t, &r);
        let inc = Csr::build(to_keys.len(), &t, &f, &r);
        Ok(Self {
            out,
            inc,
            table_rows: n,
            versions,
            self_loops,
        })
    }

    pub fn memory_bytes(&self) -> usize {
        self.out.memory_bytes() + self.inc.memory_bytes()
    }

    /// The CSR walked from the near end: `reversed` = from the target side.
    pub fn direction(&self, reversed: bool) -> &Csr {
        if reversed {
            &self.inc
        } else {
            &self.out
        }
    }
}

/// An integer column as Int64 (keys of any integer type).
pub fn as_i64(a: &dyn Array) -> Result<arrow::array::Int64Array> {
    if !a.data_type().is_integer() {
        return Err(Error::storage(format!(
            "CSR keys must be integers, got {}",
            a.data_type()
        )));
    }
    let c = arrow::compute::cast(a, &DataType::Int64)?;
    Ok(c.as_primitive::<Int64Type>().clone())
}

/// An index of the graph: in memory, or an up-to-date file read when a plan first needs it
/// (a graph opened with deferred indexes). `stamp` is what it was built from (dataset
/// versions), known without reading it.
pub struct Slot<T, S> {
    pub stamp: S,
    value: std::sync::OnceLock<Option<Arc<T>>>,
    load: Option<Box<dyn Fn() -> Option<T> + Send + Sync>>,
}

impl<T, S> Slot<T, S> {
    pub fn ready(stamp: S, value: Arc<T>) -> Self {
        Self {
            stamp,
            value: Some(value).into(),
            load: None,
        }
    }

    /// Read by `load` on first use; `None` from it (a file found damaged only then): the
    /// index is missing for this graph, and the hops it would serve run as joins.
    pub fn deferred(stamp: S, load: impl Fn() -> Option<T> + Send + Sync + 'static) -> Self {
        Self {
            stamp,
            value: std::sync::OnceLock::new(),
            load: Some(Box::new(load)),
        }
    }

    pub fn get(&self) -> Option<Arc<T>> {
        self.value
            .get_or_init(|| self.load.as_ref().and_then(|l| l()).map(Arc::new))
            .clone()
    }

    /// The index if it is in memory already (nothing read).
    pub fn loaded(&self) -> Option<Arc<T>> {
        self.value.get().cloned().flatten()
    }
}

impl<T, S: std::fmt::Debug> std::fmt::Debug for Slot<T, S> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let state = match self.value.get() {
            Some(Some(_)) => "loaded",
            Some(None) => "unusable",
            None => "deferred",
        };
        write!(f, "Slot({:?}, {state})", self.stamp)
    }
}

/// Indexes of a whole graph: node keys per label and a CSR per relationship table.
#[derive(Debug, Default, Clone)]
pub struct GraphIndexes {
    /// By label, stamped with the node table's version.
    pub keys: std::collections::BTreeMap<String, Arc<Slot<NodeKeys, Option<u64>>>>,
    /// By relationship table index; `None` where the table has no CSR (non-integer keys).
    pub csr: Vec<Option<Arc<Slot<CsrIndex, Option<Versions>>>>>,
    /// Full columns of node tables (by label) and relationship tables (by index), loaded on use.
    pub node_columns: std::collections::BTreeMap<String, Arc<TableColumns>>,
    pub rel_columns: Vec<Arc<TableColumns>>,
}

impl GraphIndexes {
    /// The node keys of `label` (read now if deferred).
    pub fn keys(&self, label: &str) -> Option<Arc<NodeKeys>> {
        self.keys.get(label)?.get()
    }

    /// The CSR of relationship table `rel` (read now if deferred).
    pub fn csr(&self, rel: usize) -> Option<Arc<CsrIndex>> {
        self.csr.get(rel)?.as_ref()?.get()
    }

    /// What looks a node of `label` up by key: its key index (read now if deferred) and
    /// columns.
    pub fn key_lookup(&self, label: &str) -> Option<(Arc<NodeKeys>, &Arc<TableColumns>)> {
        let columns = self.node_columns.get(label)?;
        Some((self.keys(label)?, columns))
    }

    /// Whether a variable-length hop over `tables` from `near` to `far` nodes runs on the
    /// CSRs: every table has one and its columns, the near label its keys, the far label its
    /// columns. What needs no index read is asked first, so a deferred index is read only
    /// when the rest holds.
    pub fn traverses(&self, tables: &[usize], near: &str, far: &str) -> bool {
        self.node_columns.contains_key(far)
            && tables.iter().all(|&t| self.rel_columns.get(t).is_some())
            && tables.iter().all(|&t| self.csr(t).is_some())
            && self.keys(near).is_some()
    }
}

/// The runs of equal values two sorted lists share: `out(i, ri, j, rj)` for each value found
/// at `a[i..i + ri]` and `b[j..j + rj]`. A merge, or binary searches of the shorter list's
/// values in the longer when it is 16x longer or more.
pub fn matching_runs(a: &[u32], b: &[u32], mut out: impl FnMut(usize, usize, usize, usize)) {
    let run_at = |s: &[u32], i: usize| s[i..].iter().take_while(|&&v| v == s[i]).count();
    let a_small = a.len() <= b.len();
    let (small, large) = if a_small { (a, b) } else { (b, a) };
    if small.len() * 16 < large.len() {
        let (mut i, mut lo) = (0, 0);
        while i < small.len() {
            let ri = run_at(small, i);
            let start = lo + large[lo..].partition_point(|&w| w < small[i]);
            let rj = large[start..].partition_point(|&w| w == small[i]);
            if rj > 0 {
                match a_small {
                    true => out(i, ri, start, rj),
                    false => out(start, rj, i, ri),
                }
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
                out(i, ri, j, rj);
                i += ri;
                j += rj;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use arrow::array::Int64Array;

    #[test]
    fn matching_runs_finds_every_pair_by_merge_or_binary_search() {
        let pairs = |a: &[u32], b: &[u32]| {
            let mut out = Vec::new();
            matching_runs(a, b, |i, ri, j, rj| {
                for x in i..i + ri {
                    for y in j..j + rj {
                        out.push((x, y));
                    }
                }
            });
            out.sort();
            out
        };
        let naive = |a: &[u32], b: &[u32]| {
            let mut out = Vec::new();
            for (x, va) in a.iter().enumerate() {
                for (y, vb) in b.iter().enumerate() {
                    if va == vb {
                        out.push((x, y));
                    }
                }
            }
            out
        };
        // Similar lengths (merge), runs of repeated values (multi-edges) on both sides.
        let (a, b) = (vec![1, 3, 3, 5, 9], vec![0, 3, 3, 3, 5, 8, 9]);
        assert_eq!(pairs(&a, &b), naive(&a, &b));
        // One list 16x longer (binary searches), either side.
        let long: Vec<u32> = (0..100).flat_map(|v| [v, v]).collect();
        let short = vec![4, 4, 50, 150];
        assert_eq!(pairs(&short, &long), naive(&short, &long));
        assert_eq!(pairs(&long, &short), naive(&long, &short));
        assert!(pairs(&[], &long).is_empty());
    }

    #[test]
    fn runs_are_sorted_by_neighbour_then_row() {
        // Edges (from, to) by row: 0->2, 1->0, 0->1, 2->2, 0->1
        let c = Csr::build(3, &[0, 1, 0, 2, 0], &[2, 0, 1, 2, 1], &[0, 1, 2, 3, 4]);
        assert_eq!(c.offsets, vec![0, 3, 4, 5]);
        assert_eq!(c.neighbors, vec![1, 1, 2, 0, 2]);
        assert_eq!(c.edge_rows, vec![2, 4, 0, 1, 3]);
        assert_eq!(c.degree(0), 3);
        assert_eq!(c.range(7), 0..0);
        assert_eq!(c.memory_bytes(), 4 * (4 + 5 + 5));
        // A node without edges beyond the last neighbour ordinal.
        let c = Csr::build(4, &[3, 3], &[1, 0], &[0, 1]);
        assert_eq!(c.offsets, vec![0, 0, 0, 0, 2]);
        assert_eq!(c.neighbors, vec![0, 1]);
        assert_eq!(c.edge_rows, vec![1, 0]);
    }

    #[test]
    fn index_drops_dangling_edges_and_builds_both_directions() {
        let keys = NodeKeys::from_keys(&Int64Array::from(vec![10, 20, 30])).unwrap();
        let src = Int64Array::from(vec![Some(10), Some(20), Some(99), None, Some(30)]);
        let dst = Int64Array::from(vec![Some(20), Some(30), Some(10), Some(10), Some(10)]);
        let idx = CsrIndex::build(&src, &dst, &keys, &keys, None).unwrap();
        assert_eq!(idx.table_rows, 5);
        assert_eq!(idx.out.num_edges(), 3);
        // 10 -> 20 (row 0); 20 -> 30 (row 1); 30 -> 10 (row 4)
        assert_eq!(idx.out.neighbors, vec![1, 2, 0]);
        assert_eq!(idx.out.edge_rows, vec![0, 1, 4]);
        // Incoming of 10 (ordinal 0): from 30 via row 4.
        let r = idx.inc.range(0);
        assert_eq!(&idx.inc.neighbors[r.clone()], &[2]);
        assert_eq!(&idx.inc.edge_rows[r], &[4]);
    }
}
