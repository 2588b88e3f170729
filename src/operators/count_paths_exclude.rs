//! The paths a hop and the next one of its arm exclude (`count_paths::Fold`), for
//! `CountPathsExec`: counted and subtracted when counts are pushed back over the whole
//! tables, skipped while walking forward from a few roots.
//!
//! With `x` the near node of the hop, `y` its far node and `z` the far node of the next hop,
//! and `after[z]` the paths from `z` to the arm's end, the paths to subtract at `x` are
//! - `z = x`: `after[x]` times the pairs of edges `x -> y -> x` (one per edge of the next hop
//!   from `y` back to `x`: a binary search in `y`'s sorted run; when the next hop walks the
//!   same edges back, the square of the edges between `x` and `y`, from `x`'s own runs);
//! - one relationship walked there and back: `after[x]` times the edges `x -> y` the next hop
//!   walks back from `y`;
//! - `z` adjacent to `x` by the absent hop: for every `x -> y`, the sum of `after[z]` over the
//!   `z` of `y`'s run that `x`'s run of the absent hop holds (marked in a bit set per `x`).

use super::cancel::Checkpoint;
use super::count_paths_exec::{over_cores, passing, FoldSpec, HopSpec, Work};
use datafusion::common::Result;
use std::collections::BTreeMap;

/// A hop's far nodes per near node over its orientations, through edges passing its
/// relationship filter, each run sorted by (node, edge row); one entry per edge (an
/// undirected walk sees a self-loop once). A hop walked one way without a filter borrows
/// its CSR's runs, which are sorted so.
enum Runs<'a> {
    Csr(&'a crate::csr::Csr),
    Built {
        offsets: Vec<usize>,
        nodes: Vec<u32>,
        rows: Vec<u32>,
    },
}

impl<'a> Runs<'a> {
    fn of(h: &'a HopSpec, work: &Work) -> Result<Self> {
        let edge_ok = passing(&h.edge_filter, &h.data.edges, h.data.index.table_rows, work)?;
        if let ([rev], None) = (h.orientations.as_slice(), &edge_ok) {
            return Ok(Self::Csr(h.data.index.direction(*rev)));
        }
        let n = h.data.near_keys.len();
        let mut offsets = Vec::with_capacity(n + 1);
        offsets.push(0);
        let mut pairs: Vec<(u32, u32)> = Vec::new();
        let mut walked = Vec::new();
        for x in 0..n as u32 {
            let start = pairs.len();
            walked.clear();
            walks_from(h, x, &mut walked);
            let ok = |w: &&(u32, u32)| edge_ok.as_ref().is_none_or(|ok| ok[w.1 as usize]);
            pairs.extend(walked.iter().filter(ok));
            if h.orientations.len() == 2 {
                pairs[start..].sort_unstable();
            }
            work.tick(pairs.len() - start + 1)?;
            offsets.push(pairs.len());
        }
        let (nodes, rows) = pairs.into_iter().unzip();
        Ok(Self::Built {
            offsets,
            nodes,
            rows,
        })
    }

    /// The far nodes of `x` and the edge rows that reach them.
    fn of_node(&self, x: u32) -> (&[u32], &[u32]) {
        match self {
            Self::Csr(c) => {
                let r = c.range(x);
                (&c.neighbors[r.clone()], &c.edge_rows[r])
            }
            Self::Built {
                offsets,
                nodes,
                rows,
            } => {
                let r = offsets[x as usize]..offsets[x as usize + 1];
                (&nodes[r.clone()], &rows[r])
            }
        }
    }
}

/// Whether two hops walk the same edges the same ways from the same nodes (their runs are
/// one).
fn same_walk(a: &HopSpec, b: &HopSpec) -> bool {
    std::sync::Arc::ptr_eq(&a.data.index, &b.data.index)
        && std::sync::Arc::ptr_eq(&a.data.near_keys, &b.data.near_keys)
        && a.orientations == b.orientations
        && a.edge_filter.is_none()
        && b.edge_filter.is_none()
}

/// The positions of `x` in the sorted `nodes`.
fn positions_of(nodes: &[u32], x: u32) -> std::ops::Range<usize> {
    nodes.partition_point(|&z| z < x)..nodes.partition_point(|&z| z <= x)
}

/// `v` (paths at the near nodes of `h`) less the paths `fold` excludes, `after` the paths
/// at the far nodes of `next` (the hop after `h`).
pub(super) fn subtract_excluded(
    h: &HopSpec,
    next: &HopSpec,
    fold: &FoldSpec,
    after: &[u64],
    v: &mut [u64],
    work: &mut Work,
) -> Result<()> {
    let mid = passing(
        &h.target_filter,
        &h.data.target,
        h.data.far_keys.len(),
        work,
    )?;
    if fold.absent.is_none() && mirrored(h, next) {
        return subtract_walked_back(h, fold, after, mid.as_deref(), v, work);
    }
    // The runs of hops walking the same edges the same ways are built once (both hops of
    // `(a)-[:KNOWS]-(b)-[:KNOWS]-(c)`, and the absent hop of `NOT (a)-[:KNOWS]-(c)`).
    let here = Runs::of(h, work)?;
    let there_own = (!same_walk(h, next))
        .then(|| Runs::of(next, work))
        .transpose()?;
    let there = there_own.as_ref().unwrap_or(&here);
    let absent_own = match fold.absent.as_deref() {
        Some(a) if !same_walk(h, a) => Some(Runs::of(a, work)?),
        _ => None,
    };
    let absent = (fold.absent.as_deref()).map(|_| absent_own.as_ref().unwrap_or(&here));
    let mid = mid.as_deref();
    let back = mirrored(h, next);
    over_cores(v, h, work, |first, out, cp: &Checkpoint| {
        let mut seen = 0;
        // The far nodes of `x`'s absent hop, marked once per `x`: each `z` two hops away is
        // then one bit read, not a merge of two runs per `y` (hubs' runs read again and
        // again).
        let mut marks = Marks::new(after.len());
        for (i, slot) in out.iter_mut().enumerate() {
            let x = (first + i) as u32;
            let near = absent.as_ref().map(|a| a.of_node(x).0);
            if let Some(near) = near {
                marks.set_all(near);
                cp.tick(near.len())?;
            }
            let (ys, rows) = here.of_node(x);
            let at_x = after.get(x as usize).copied().unwrap_or(0);
            let mut excluded = 0u64;
            // The edges from `x` to the current `y` (`ys` is sorted).
            let mut to_y = 0;
            for (k, (&y, &row)) in ys.iter().zip(rows).enumerate() {
                if k == 0 || ys[k - 1] != y {
                    to_y = ys[k..].iter().take_while(|&&w| w == y).count();
                }
                if mid.is_some_and(|ok| !ok[y as usize]) {
                    continue;
                }
                let (zs, back_rows) = there.of_node(y);
                seen += zs.len();
                cp.tick(zs.len() + 1)?;
                // Paths back to x: only counted when ends or edges must differ. A mirrored
                // next hop walks back each of the edges between `x` and `y` (one of them the
                // edge walked there), which `x`'s own run counts: no search in `y`'s.
                let pairs = match (fold.distinct_ends, fold.distinct_edges) {
                    _ if at_x == 0 => 0,
                    (true, _) if back => to_y,
                    (false, true) if back => 1,
                    (true, _) => positions_of(zs, x).len(),
                    (false, true) => (back_rows[positions_of(zs, x)].iter())
                        .filter(|&&r| r == row)
                        .count(),
                    _ => 0,
                };
                excluded = excluded.saturating_add(at_x.saturating_mul(pairs as u64));
                if near.is_some() {
                    // Each edge `y -> z` is a path; how many edges join `x` and `z` by the
                    // absent hop does not matter (one excludes it).
                    for &z in zs {
                        if marks.get(z) {
                            excluded = excluded.saturating_add(after[z as usize]);
                        }
                    }
                }
            }
            if let Some(near) = near {
                marks.clear_all(near);
            }
            *slot = slot.saturating_sub(excluded);
            cp.tick(1)?;
        }
        Ok(seen)
    })
}

/// A set of node ordinals below a bound, one bit each (a few kilobytes for a hundred thousand
/// nodes: it stays in the nearest cache while runs are checked against it).
pub(super) struct Marks(Vec<u64>);

impl Marks {
    pub(super) fn new(n: usize) -> Self {
        Self(vec![0; n.div_ceil(64)])
    }

    pub(super) fn set_all(&mut self, nodes: &[u32]) {
        for &z in nodes {
            // A node beyond the bound could reach nothing: no path ends there.
            if let Some(w) = self.0.get_mut(z as usize / 64) {
                *w |= 1 << (z % 64);
            }
        }
    }

    pub(super) fn clear_all(&mut self, nodes: &[u32]) {
        for &z in nodes {
            if let Some(w) = self.0.get_mut(z as usize / 64) {
                *w = 0;
            }
        }
    }

    pub(super) fn get(&self, z: u32) -> bool {
        self.0
            .get(z as usize / 64)
            .is_some_and(|w| w >> (z % 64) & 1 == 1)
    }
}

/// Whether `next` walks back every edge `h` walks, and no other ending at `h`'s near nodes:
/// one index, no relationship filter, and `next` the reverse of `h` (both ways when `h` is).
/// Then the walks `x -> y -> x` are, per `y`, the square of the edges between `x` and `y`,
/// which `x`'s own run gives without reading `y`'s.
fn mirrored(h: &HopSpec, next: &HopSpec) -> bool {
    let reversed = match (h.orientations.as_slice(), next.orientations.as_slice()) {
        ([a], [b]) => a != b,
        ([a, b], [c, d]) => a != b && c != d,
        _ => false,
    };
    reversed
        && std::sync::Arc::ptr_eq(&h.data.index, &next.data.index)
        && h.edge_filter.is_none()
        && next.edge_filter.is_none()
}

/// [`subtract_excluded`] for a next hop that is `h` walked back ([`mirrored`]), without an
/// absent hop: per near node `x`, each far node `y` it reaches by `m` edges (counted in `x`'s
/// runs, which are sorted by node) excludes `m * m` paths back to `x` when the ends must
/// differ, else the `m` that walk one relationship back.
fn subtract_walked_back(
    h: &HopSpec,
    fold: &FoldSpec,
    after: &[u64],
    mid: Option<&[bool]>,
    v: &mut [u64],
    work: &mut Work,
) -> Result<()> {
    if !(fold.distinct_ends || fold.distinct_edges) {
        return Ok(());
    }
    let runs: Vec<&crate::csr::Csr> = (h.orientations.iter())
        .map(|&rev| h.data.index.direction(rev))
        .collect();
    over_cores(v, h, work, |first, out, cp: &Checkpoint| {
        let mut seen = 0;
        for (i, slot) in out.iter_mut().enumerate() {
            let x = (first + i) as u32;
            let at_x = after.get(x as usize).copied().unwrap_or(0);
            if at_x == 0 {
                cp.tick(1)?;
                continue;
            }
            let mut a = runs[0].neighbors[runs[0].range(x)].iter().peekable();
            let mut b = (runs.get(1))
                .map_or(&[][..], |c| &c.neighbors[c.range(x)])
                .iter()
                .peekable();
            let walked = a.len() + b.len();
            seen += walked;
            let mut pairs = 0u64;
            loop {
                let y = match (a.peek(), b.peek()) {
                    (Some(&&p), Some(&&q)) => p.min(q),
                    (Some(&&p), None) => p,
                    (None, Some(&&q)) => q,
                    (None, None) => break,
                };
                let mut m = 0u64;
                while a.next_if(|&&p| p == y).is_some() {
                    m += 1;
                }
                // An undirected walk sees a self-loop once: in the first run.
                while b.next_if(|&&q| q == y).is_some() {
                    m += u64::from(y != x);
                }
                if mid.is_some_and(|ok| !ok[y as usize]) {
                    continue;
                }
                pairs = pairs.saturating_add(match fold.distinct_ends {
                    true => m.saturating_mul(m),
                    false => m,
                });
            }
            *slot = slot.saturating_sub(at_x.saturating_mul(pairs));
            cp.tick(walked + 1)?;
        }
        Ok(seen)
    })
}

/// Which of `ids` (rows or ordinals of `store`) pass `f`; all when there is none.
fn mask_of(
    f: &Option<super::csr_expand_exec::CompiledFilter>,
    store: &crate::csr::TableColumns,
    ids: impl Iterator<Item = u32>,
) -> Result<Option<Vec<bool>>> {
    f.as_ref()
        .map(|f| f.mask(store, &arrow::array::UInt32Array::from_iter_values(ids)))
        .transpose()
}

/// The far nodes and edge rows of `x` over hop `h` (one entry per edge, an undirected walk
/// seeing a self-loop once), before filters.
fn walks_from(h: &HopSpec, x: u32, out: &mut Vec<(u32, u32)>) {
    let both = h.orientations.len() == 2;
    for (j, &rev) in h.orientations.iter().enumerate() {
        let csr = h.data.index.direction(rev);
        for e in csr.range(x) {
            let y = csr.neighbors[e];
            if !(both && j == 1 && y == x) {
                out.push((y, csr.edge_rows[e]));
            }
        }
    }
}

/// Two hops walked forward from weighted nodes `cur` without the paths `fold` excludes: the
/// far nodes of `next` reached, each with its number of paths (the filters of both hops and
/// of the absent hop evaluated on the nodes and edges touched only; sorted by node).
pub(super) fn step_pair(
    h: &HopSpec,
    next: &HopSpec,
    fold: &FoldSpec,
    cur: &[(u32, u64)],
    work: &mut Work,
) -> Result<Vec<(u32, u64)>> {
    // (index into cur, y, edge row) for every edge of `h` walked.
    let mut buf = Vec::new();
    let mut firsts: Vec<(usize, u32, u32)> = Vec::new();
    for (i, &(x, _)) in cur.iter().enumerate() {
        buf.clear();
        walks_from(h, x, &mut buf);
        firsts.extend(buf.iter().map(|&(y, row)| (i, y, row)));
        work.add(buf.len() + 1)?;
    }
    let edge_ok = mask_of(&h.edge_filter, &h.data.edges, firsts.iter().map(|f| f.2))?;
    let node_ok = mask_of(&h.target_filter, &h.data.target, firsts.iter().map(|f| f.1))?;
    let keep =
        |k: usize| edge_ok.as_ref().is_none_or(|m| m[k]) && node_ok.as_ref().is_none_or(|m| m[k]);
    // (index into firsts, z, edge row) for every edge of `next` walked after one of `h`.
    let mut seconds: Vec<(usize, u32, u32)> = Vec::new();
    for (k, &(_, y, _)) in firsts.iter().enumerate() {
        if !keep(k) {
            continue;
        }
        buf.clear();
        walks_from(next, y, &mut buf);
        seconds.extend(buf.iter().map(|&(z, row)| (k, z, row)));
        work.add(buf.len() + 1)?;
    }
    let edge_ok = mask_of(
        &next.edge_filter,
        &next.data.edges,
        seconds.iter().map(|s| s.2),
    )?;
    let node_ok = mask_of(
        &next.target_filter,
        &next.data.target,
        seconds.iter().map(|s| s.1),
    )?;
    // The nodes adjacent to each start by the absent hop, sorted.
    let near: Option<Vec<Vec<u32>>> = match fold.absent.as_deref() {
        None => None,
        Some(a) => {
            let mut lists = Vec::with_capacity(cur.len());
            for &(x, _) in cur {
                buf.clear();
                walks_from(a, x, &mut buf);
                work.add(buf.len() + 1)?;
                let ok = mask_of(&a.edge_filter, &a.data.edges, buf.iter().map(|w| w.1))?;
                let mut zs: Vec<u32> = (buf.iter().enumerate())
                    .filter(|(k, _)| ok.as_ref().is_none_or(|m| m[*k]))
                    .map(|(_, w)| w.0)
                    .collect();
                zs.sort_unstable();
                lists.push(zs);
            }
            Some(lists)
        }
    };
    let mut ends: BTreeMap<u32, u64> = BTreeMap::new();
    for (s, &(k, z, back)) in seconds.iter().enumerate() {
        let (i, _, row) = firsts[k];
        let (x, c) = cur[i];
        let excluded = (fold.distinct_ends && z == x)
            || (fold.distinct_edges && z == x && back == row)
            || near
                .as_ref()
                .is_some_and(|n| n[i].binary_search(&z).is_ok())
            || edge_ok.as_ref().is_some_and(|m| !m[s])
            || node_ok.as_ref().is_some_and(|m| !m[s]);
        if !excluded {
            let slot = ends.entry(z).or_default();
            *slot = slot.saturating_add(c);
        }
    }
    Ok(ends.into_iter().collect())
}
