//! `TraversalSpec`: what a variable-length traversal walks (its hops over one or several
//! CSRs, the label slots they connect, the length bounds, the end filter) and the walks
//! themselves: a depth-first `PathWalk` that pauses after any path (memory: one path), and a
//! breadth-first search of distinct ends. `VarLengthExec` streams their rows.

use super::var_length::VarHop;
use crate::csr::{NodeKeys, TableColumns};
use arrow::array::{Array, UInt64Array};
use std::sync::Arc;

#[derive(Debug, Clone)]
pub struct TraversalSpec {
    pub key_idx: usize,
    pub key_name: String,
    pub hops: Vec<VarHop>,
    /// Row ids of each hop's table (as u64), for the path's edge ids.
    pub rowids: Vec<Arc<UInt64Array>>,
    /// Per label slot, the hops that leave it.
    pub from_slot: Vec<Vec<usize>>,
    pub start: usize,
    pub end: usize,
    pub min: u64,
    pub max: Option<u64>,
    pub distinct: bool,
    /// Output each input row with the number of its (shortest) paths, not the paths.
    pub count: bool,
    pub near_keys: Arc<NodeKeys>,
    pub target: Arc<TableColumns>,
    pub target_take: Vec<String>,
    /// Only ends passing this (over the end label's columns).
    pub target_filter: Option<super::csr_expand_exec::CompiledFilter>,
    pub target_out: Vec<String>,
    pub target_var: String,
    /// Label of each slot.
    pub labels: Vec<String>,
    /// Shortest paths instead of every path.
    pub shortest: Option<super::shortest::ShortestSpec>,
    /// The paths' elements as values (columns loaded).
    pub elems: Option<super::var_length::PathElems>,
    /// For EXPLAIN: types, edges, walk.
    pub display: String,
}

impl TraversalSpec {
    /// An error once a check of a mapped index file the traversal reads found damage.
    pub fn intact(&self) -> datafusion::error::Result<()> {
        let keys =
            std::iter::once(&self.near_keys).chain(self.shortest.as_ref().map(|s| &s.end_keys));
        for k in keys {
            k.intact()?;
        }
        for h in &self.hops {
            h.index.intact()?;
        }
        Ok(())
    }
}

/// A depth-first walk from one start node that can pause after any path: its memory is the
/// current path and one frame per step of it, whatever the number of paths.
pub struct PathWalk {
    /// Frames: label slot, node, index into the slot's hops, position in that hop's range.
    stack: Vec<(usize, u32, usize, usize)>,
    /// Hop, edge row and the node it reaches, per step.
    path: Vec<(usize, u32, u32)>,
    /// The zero-length path's end, not yet emitted (`*0..`).
    zero: Option<u32>,
}

impl TraversalSpec {
    /// A walk over every path from `start` (as the sequence of (hop, edge row)) whose length
    /// is within bounds and that ends at the end label, paused and resumed by [`Self::resume`].
    pub fn walk(&self, start: u32) -> PathWalk {
        let max = self.max.unwrap_or(u64::MAX);
        PathWalk {
            zero: (self.min == 0 && self.start == self.end).then_some(start),
            stack: if max == 0 {
                Vec::new()
            } else {
                vec![(self.start, start, 0, 0)]
            },
            path: Vec::new(),
        }
    }

    /// Goes on with `w`: `emit(end, path)` per path; it returns false to pause after that
    /// path. Also pauses once `budget` edges were examined. Returns the edges examined and
    /// whether the walk is over.
    pub fn resume(
        &self,
        w: &mut PathWalk,
        emit: &mut dyn FnMut(u32, &[(usize, u32, u32)]) -> bool,
        budget: usize,
    ) -> (usize, bool) {
        let max = self.max.unwrap_or(u64::MAX) as usize;
        let min = self.min as usize;
        if let Some(s) = w.zero.take() {
            if !emit(s, &[]) {
                return (0, w.stack.is_empty());
            }
        }
        let (stack, path) = (&mut w.stack, &mut w.path);
        let mut examined = 0;
        while let Some(frame) = stack.last_mut() {
            if examined >= budget {
                return (examined, false);
            }
            let (slot, node, hi, pos) = *frame;
            let Some(&h) = self.from_slot[slot].get(hi) else {
                stack.pop();
                path.pop();
                continue;
            };
            let hop = &self.hops[h];
            let csr = hop.index.direction(hop.reverse);
            let range = csr.range(node);
            let e = range.start + pos;
            if e >= range.end {
                *frame = (slot, node, hi + 1, 0);
                continue;
            }
            *frame = (slot, node, hi, pos + 1);
            examined += 1;
            let (nbr, row) = (csr.neighbors[e], csr.edge_rows[e]);
            // Never a relationship twice in one path (a self-loop walked both ways is one).
            if (hop.skip_self_loops && nbr == node)
                || path
                    .iter()
                    .any(|&(g, r, _)| r == row && self.hops[g].rel == hop.rel)
            {
                continue;
            }
            path.push((h, row, nbr));
            let go_on = !(path.len() >= min && hop.to == self.end) || emit(nbr, path);
            if path.len() < max {
                stack.push((hop.to, nbr, 0, 0));
            } else {
                path.pop();
            }
            if !go_on {
                return (examined, stack.is_empty());
            }
        }
        (examined, true)
    }

    /// Distinct end nodes reachable within the bounds (directed, `min <= 1`), breadth-first
    /// with a visited bitmap per label; the edges examined. Each node expanded ticks `cp`
    /// (a search can cover the whole graph), whose error stops it.
    pub fn reachable(
        &self,
        start: u32,
        cp: &super::cancel::Checkpoint,
        emit: &mut dyn FnMut(u32) -> bool,
    ) -> datafusion::common::Result<usize> {
        let max = self.max.unwrap_or(u64::MAX);
        let mut visited = vec![roaring::RoaringBitmap::new(); self.from_slot.len()];
        if self.min == 0 && self.start == self.end {
            visited[self.start].insert(start);
            if !emit(start) {
                return Ok(0);
            }
        }
        let mut frontier = vec![(self.start, start)];
        let mut depth = 0;
        let mut examined = 0;
        while !frontier.is_empty() && depth < max {
            depth += 1;
            let mut next = Vec::new();
            for &(slot, n) in &frontier {
                let before = examined;
                for &h in &self.from_slot[slot] {
                    let hop = &self.hops[h];
                    let csr = hop.index.direction(hop.reverse);
                    for e in csr.range(n) {
                        examined += 1;
                        let m = csr.neighbors[e];
                        if visited[hop.to].insert(m) {
                            if hop.to == self.end && !emit(m) {
                                return Ok(examined);
                            }
                            next.push((hop.to, m));
                        }
                    }
                }
                cp.tick(examined - before + 1)?;
            }
            frontier = next;
        }
        Ok(examined)
    }

    /// The start node of row `i`: its key's ordinal, if the key is a node of the start label.
    pub(super) fn start_of(&self, keys: &arrow::array::Int64Array, i: usize) -> Option<u32> {
        if keys.is_null(i) {
            return None;
        }
        self.near_keys.ordinal(keys.value(i))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::csr::CsrIndex;
    use arrow::array::Int64Array;
    use arrow::datatypes::Schema;

    /// A traversal over one relationship table on one label: nodes keyed `0..n`, edge row `i`
    /// is `edges[i]`.
    fn spec(n: i64, edges: &[(i64, i64)], min: u64, max: Option<u64>) -> TraversalSpec {
        let keys = NodeKeys::from_keys(&Int64Array::from((0..n).collect::<Vec<_>>())).unwrap();
        let src = Int64Array::from(edges.iter().map(|e| e.0).collect::<Vec<_>>());
        let dst = Int64Array::from(edges.iter().map(|e| e.1).collect::<Vec<_>>());
        let index = Arc::new(CsrIndex::build(&src, &dst, &keys, &keys, None).unwrap());
        let table =
            datafusion::datasource::MemTable::try_new(Arc::new(Schema::empty()), vec![vec![]])
                .unwrap();
        let none = Arc::new(TableColumns::new(Arc::new(table), "test"));
        TraversalSpec {
            key_idx: 0,
            key_name: "a__id".into(),
            hops: vec![VarHop {
                rel: 0,
                rel_type: "R".into(),
                from: 0,
                to: 0,
                reverse: false,
                skip_self_loops: false,
                index,
                edges: none.clone(),
            }],
            rowids: vec![],
            from_slot: vec![vec![0]],
            start: 0,
            end: 0,
            min,
            max,
            distinct: false,
            count: false,
            near_keys: Arc::new(keys),
            target: none,
            target_take: vec![],
            target_filter: None,
            target_out: vec![],
            target_var: "b".into(),
            labels: vec!["L".into()],
            shortest: None,
            elems: None,
            display: String::new(),
        }
    }

    /// Every path from `start` as (end, edge rows), walked in steps of `budget` edges and
    /// paused after every `pause_every`th path.
    fn paths(s: &TraversalSpec, start: u32, budget: usize, pause_every: usize) -> Vec<String> {
        let mut out = Vec::new();
        let mut w = s.walk(start);
        loop {
            let mut since = 0;
            let (_, over) = s.resume(
                &mut w,
                &mut |end, path| {
                    let rows: Vec<String> = path.iter().map(|(_, r, _)| r.to_string()).collect();
                    out.push(format!("{end}:[{}]", rows.join(",")));
                    since += 1;
                    since < pause_every
                },
                budget,
            );
            if over {
                return out;
            }
        }
    }

    #[test]
    fn every_path_within_the_bounds() {
        // 0 -> 1 -> 2 -> 3
        let s = spec(4, &[(0, 1), (1, 2), (2, 3)], 1, Some(2));
        assert_eq!(paths(&s, 0, usize::MAX, usize::MAX), ["1:[0]", "2:[0,1]"]);
        // *0..: the start itself first.
        let s = spec(4, &[(0, 1), (1, 2), (2, 3)], 0, None);
        assert_eq!(
            paths(&s, 1, usize::MAX, usize::MAX),
            ["1:[]", "2:[1]", "3:[1,2]"]
        );
        // *2..2 from the end of the chain: none.
        let s = spec(4, &[(0, 1), (1, 2), (2, 3)], 2, Some(2));
        assert!(paths(&s, 3, usize::MAX, usize::MAX).is_empty());
    }

    #[test]
    fn a_relationship_at_most_once_per_path() {
        // A cycle of two and a self-loop: each path ends when its next edge was used.
        let s = spec(2, &[(0, 1), (1, 0), (0, 0)], 1, None);
        assert_eq!(
            paths(&s, 0, usize::MAX, usize::MAX),
            [
                "0:[2]",
                "1:[2,0]",
                "0:[2,0,1]",
                "1:[0]",
                "0:[0,1]",
                "0:[0,1,2]"
            ]
        );
    }

    #[test]
    fn pausing_and_budgets_lose_and_repeat_nothing() {
        // A dense little graph: every ordered pair of 4 nodes.
        let edges: Vec<(i64, i64)> = (0..4)
            .flat_map(|a| (0..4).filter(move |&b| b != a).map(move |b| (a, b)))
            .collect();
        let s = spec(4, &edges, 1, Some(3));
        let whole = paths(&s, 0, usize::MAX, usize::MAX);
        // 27 walks of three steps, less 0 -> x -> 0 -> x (its first edge again).
        assert_eq!(whole.len(), 3 + 3 * 3 + (27 - 3));
        for (budget, pause) in [(1, usize::MAX), (usize::MAX, 1), (2, 3), (7, 2)] {
            assert_eq!(paths(&s, 0, budget, pause), whole, "{budget} {pause}");
        }
    }

    #[test]
    fn distinct_ends_breadth_first() {
        // A diamond 0 -> {1, 2} -> 3, then 3 -> 0.
        let s = spec(4, &[(0, 1), (0, 2), (1, 3), (2, 3), (3, 0)], 1, Some(2));
        let mut ends = Vec::new();
        let cp = crate::operators::cancel::Checkpoint::unlimited();
        s.reachable(0, &cp, &mut |n| {
            ends.push(n);
            true
        })
        .unwrap();
        assert_eq!(ends, [1, 2, 3]);
        // Within 3 steps the start comes back once; stopping early stops.
        let s = spec(4, &[(0, 1), (0, 2), (1, 3), (2, 3), (3, 0)], 1, Some(3));
        let mut ends = Vec::new();
        s.reachable(0, &cp, &mut |n| {
            ends.push(n);
            ends.len() < 2
        })
        .unwrap();
        assert_eq!(ends, [1, 2]);
    }
}
