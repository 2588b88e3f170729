//! Shortest paths over the CSRs of a traversal (`shortestPath`, `allShortestPaths`, `ANY` /
//! `ALL SHORTEST`, `SHORTEST k`): breadth-first searches whose visited sets are roaring
//! bitmaps (one per label slot) and whose predecessors rebuild the paths.
//!
//! - one target: bidirectional, the smaller frontier expanded a whole level at a time; the
//!   first level where the two searches meet holds the length `d`, and (every predecessor
//!   kept) every node at that depth on some shortest path;
//! - every target (the far node unbound): one search from the source, each node reached at
//!   the end label an answer;
//! - `SHORTEST k`: trails (no relationship twice) by increasing length, a depth-first
//!   enumeration pruned by each node's distance to the target (a backward search first).
//!
//! Every search counts the relationships it examines against a budget (`PlannerOptions::
//! max_search_edges`): past it the query fails with a clear error instead of running away.
//! It also ticks a checkpoint (`operators::cancel`) per node expanded, which stops it once its
//! query is dropped, or once it outgrows the work done in place (it then runs again off the
//! runtime's workers).

use super::path_elems;
use super::var_length_exec::TraversalSpec;
use arrow::array::{Array, ArrayRef, AsArray, RecordBatch};
use arrow::datatypes::{Field, Schema};
use cypher::ast::Shortest;
use datafusion::common::Result;
use datafusion::physical_expr::PhysicalExpr;
use roaring::RoaringBitmap;
use rustc_hash::FxHashMap;
use std::sync::Arc;

/// One step of a path: hop, edge row, the node it reaches.
pub type Step = (usize, u32, u32);

/// A node in a label slot.
type Key = (usize, u32);

/// Columns a search filter reads its node / relationship from.
pub const NODE_COL: &str = "__xn";
pub const REL_COL: &str = "__xr";

/// The shortest-path part of a traversal.
#[derive(Debug, Clone)]
pub struct ShortestSpec {
    /// Searched nodes / relationships must pass these (over a one-column batch of element
    /// structs).
    pub node_filter: Option<std::sync::Arc<dyn datafusion::physical_expr::PhysicalExpr>>,
    pub rel_filter: Option<std::sync::Arc<dyn datafusion::physical_expr::PhysicalExpr>>,
    pub mode: Shortest,
    /// Input column of the bound end node's key (`None`: every node of the end label).
    pub target_idx: Option<usize>,
    /// The end label's keys (to find the bound end node).
    pub end_keys: std::sync::Arc<crate::csr::NodeKeys>,
    /// Longest path `SHORTEST k` looks at when the pattern has no upper bound.
    pub k_cap: u64,
    /// Most relationships one search may examine.
    pub budget: usize,
}

/// A search over `spec`'s hops, counting examined relationships.
pub struct Search<'a> {
    spec: &'a TraversalSpec,
    cp: &'a super::cancel::Checkpoint,
    budget: usize,
    to_slot: Vec<Vec<usize>>,
    examined: usize,
    filters: Option<Filters<'a>>,
}

/// The search filters and what they decided so far (per node, per relationship).
struct Filters<'a> {
    sh: &'a ShortestSpec,
    nodes: FxHashMap<Key, bool>,
    rels: FxHashMap<(usize, u32), bool>,
}

impl Filters<'_> {
    /// Whether each of `items` passes `f` (elements built by `build`).
    fn eval(
        f: &Arc<dyn PhysicalExpr>,
        col: &str,
        structs: ArrayRef,
    ) -> Result<arrow::array::BooleanArray> {
        let schema = Schema::new(vec![Field::new(col, structs.data_type().clone(), true)]);
        let batch = RecordBatch::try_new(Arc::new(schema), vec![structs])?;
        let v = f.evaluate(&batch)?.into_array(batch.num_rows())?;
        let v = arrow::compute::cast(&v, &arrow::datatypes::DataType::Boolean)?;
        Ok(v.as_boolean().clone())
    }

    /// Decides the nodes and relationships of `steps` not decided yet, then keeps those
    /// that pass.
    fn retain(&mut self, spec: &TraversalSpec, steps: &mut Vec<(usize, u32, Key)>) -> Result<()> {
        let Some(e) = &spec.elems else {
            return Ok(());
        };
        if let Some(f) = &self.sh.node_filter {
            let mut new: Vec<Key> = steps
                .iter()
                .map(|s| s.2)
                .filter(|k| !self.nodes.contains_key(k))
                .collect();
            new.sort_unstable();
            new.dedup();
            if !new.is_empty() {
                let ok = Self::eval(f, NODE_COL, path_elems::node_structs(spec, e, &new)?)?;
                for (i, k) in new.into_iter().enumerate() {
                    self.nodes.insert(k, ok.is_valid(i) && ok.value(i));
                }
            }
            steps.retain(|s| self.nodes[&s.2]);
        }
        if let Some(f) = &self.sh.rel_filter {
            let new: Vec<(usize, u32)> = steps
                .iter()
                .map(|s| (s.0, s.1))
                .filter(|r| !self.rels.contains_key(r))
                .collect();
            if !new.is_empty() {
                let ok = Self::eval(f, REL_COL, path_elems::rel_structs(spec, e, &new)?)?;
                for (i, r) in new.into_iter().enumerate() {
                    self.rels.insert(r, ok.is_valid(i) && ok.value(i));
                }
            }
            steps.retain(|s| self.rels[&(s.0, s.1)]);
        }
        Ok(())
    }

    /// Whether node `k` passes.
    fn node(&mut self, spec: &TraversalSpec, k: Key) -> Result<bool> {
        let (Some(f), Some(e)) = (&self.sh.node_filter, &spec.elems) else {
            return Ok(true);
        };
        if let Some(&ok) = self.nodes.get(&k) {
            return Ok(ok);
        }
        let ok = Self::eval(f, NODE_COL, path_elems::node_structs(spec, e, &[k])?)?;
        let ok = ok.is_valid(0) && ok.value(0);
        self.nodes.insert(k, ok);
        Ok(ok)
    }
}

fn runaway(budget: usize) -> datafusion::error::DataFusionError {
    datafusion::error::DataFusionError::Execution(format!(
        "limit exceeded: a shortest-path search examined more than {budget} relationships from one source (give the pattern an upper bound, e.g. `*..6`)"
    ))
}

/// A predecessor: hop, edge row, and the node it comes from (forwards) or leads to
/// (backwards).
type Pred = (usize, u32, Key);

/// One side of a search: per node, its depth and the steps that reach it from the previous
/// level (forwards: from the source; backwards: towards the target). The first step is kept
/// inline; further ones (every shortest path) in `more`.
struct Side {
    visited: Vec<RoaringBitmap>,
    info: FxHashMap<Key, (u32, Option<Pred>)>,
    more: FxHashMap<Key, Vec<Pred>>,
    frontier: Vec<Key>,
    depth: u32,
    /// Keep every predecessor (all shortest paths), not just the first.
    all: bool,
}

impl Side {
    fn new(slots: usize, at: Key, all: bool) -> Self {
        let mut s = Side {
            visited: vec![RoaringBitmap::new(); slots],
            info: FxHashMap::default(),
            more: FxHashMap::default(),
            frontier: vec![at],
            depth: 0,
            all,
        };
        s.visited[at.0].insert(at.1);
        s.info.insert(at, (0, None));
        s
    }

    fn seen(&self, k: Key) -> bool {
        self.visited[k.0].contains(k.1)
    }

    fn depth_of(&self, k: Key) -> Option<u32> {
        self.info.get(&k).map(|(d, _)| *d)
    }

    /// How many predecessors of `k` paths go through (every one, or the first).
    fn pred_count(&self, k: Key) -> usize {
        match self.info.get(&k).and_then(|(_, p)| *p) {
            None => 0,
            Some(_) if !self.all => 1,
            Some(_) => 1 + self.more.get(&k).map_or(0, Vec::len),
        }
    }

    /// Predecessor `i` of `k` (`i < pred_count(k)`).
    fn pred_at(&self, k: Key, i: usize) -> Pred {
        match i {
            0 => self.info[&k].1.expect("a predecessor"),
            _ => self.more[&k][i - 1],
        }
    }

    /// The number of paths from the search's start to `k` through the kept predecessors
    /// (memoized in `memo`), saturating.
    fn paths_to(&self, k: Key, memo: &mut FxHashMap<Key, u128>) -> u128 {
        if let Some(&n) = memo.get(&k) {
            return n;
        }
        let n = match self.pred_count(k) {
            0 => 1,
            c => (0..c).fold(0u128, |acc, i| {
                acc.saturating_add(self.paths_to(self.pred_at(k, i).2, memo))
            }),
        };
        memo.insert(k, n);
        n
    }
}

impl<'a> Search<'a> {
    pub fn new(
        spec: &'a TraversalSpec,
        sh: &'a ShortestSpec,
        cp: &'a super::cancel::Checkpoint,
    ) -> Self {
        let mut to_slot = vec![Vec::new(); spec.from_slot.len()];
        for (i, h) in spec.hops.iter().enumerate() {
            to_slot[h.to].push(i);
        }
        let filtered = sh.node_filter.is_some() || sh.rel_filter.is_some();
        Self {
            spec,
            cp,
            budget: sh.budget,
            to_slot,
            examined: 0,
            filters: filtered.then(|| Filters {
                sh,
                nodes: FxHashMap::default(),
                rels: FxHashMap::default(),
            }),
        }
    }

    /// Whether node `k` passes the node filter (a source or a target).
    fn allowed(&mut self, k: Key) -> Result<bool> {
        match &mut self.filters {
            Some(f) => f.node(self.spec, k),
            None => Ok(true),
        }
    }

    pub fn examined(&self) -> usize {
        self.examined
    }

    /// Steps out of `k`: forwards (hop, edge row, next) or backwards (hop, edge row, previous).
    fn steps(&mut self, k: Key, backwards: bool, out: &mut Vec<(usize, u32, Key)>) -> Result<()> {
        let hops = if backwards {
            &self.to_slot[k.0]
        } else {
            &self.spec.from_slot[k.0]
        };
        let first = out.len();
        let before = self.examined;
        for &h in hops {
            let hop = &self.spec.hops[h];
            let csr = hop.index.direction(hop.reverse != backwards);
            let range = csr.range(k.1);
            self.examined += range.len();
            for e in range {
                let nbr = csr.neighbors[e];
                if hop.skip_self_loops && nbr == k.1 {
                    continue;
                }
                let slot = if backwards { hop.from } else { hop.to };
                out.push((h, csr.edge_rows[e], (slot, nbr)));
            }
        }
        if self.examined > self.budget {
            return Err(runaway(self.budget));
        }
        self.cp.tick(self.examined - before + 1)?;
        if let Some(f) = &mut self.filters {
            let mut new = out.split_off(first);
            f.retain(self.spec, &mut new)?;
            out.extend(new);
        }
        Ok(())
    }

    /// Expands `side` one level (every predecessor from that level kept when it keeps them
    /// all); the new nodes. With `stop`, ends at the first new node `stop` accepts.
    fn level(
        &mut self,
        side: &mut Side,
        backwards: bool,
        stop: Option<&dyn Fn(Key) -> bool>,
    ) -> Result<Vec<Key>> {
        let depth = side.depth + 1;
        let mut next = Vec::new();
        let mut buf = Vec::new();
        'frontier: for &k in &std::mem::take(&mut side.frontier) {
            buf.clear();
            self.steps(k, backwards, &mut buf)?;
            for &(h, row, m) in &buf {
                if !side.seen(m) {
                    side.visited[m.0].insert(m.1);
                    side.info.insert(m, (depth, Some((h, row, k))));
                    next.push(m);
                    if stop.is_some_and(|f| f(m)) {
                        break 'frontier;
                    }
                } else if side.all && side.info.get(&m).is_some_and(|(d, _)| *d == depth) {
                    side.more.entry(m).or_default().push((h, row, k));
                }
            }
        }
        side.depth = depth;
        side.frontier = next.clone();
        Ok(next)
    }

    /// Shortest paths from `source` to `target` (both in their slots): `all` or one, as a
    /// [`Found`] to enumerate or count.
    pub fn between(&mut self, source: Key, target: Key, all: bool) -> Result<Found> {
        let (min, max) = (self.spec.min, self.spec.max.unwrap_or(u64::MAX));
        let slots = self.spec.from_slot.len();
        let mut found = Found::new(Side::new(slots, source, all), None);
        if !self.allowed(source)? || !self.allowed(target)? {
            return Ok(found);
        }
        if source == target {
            if min == 0 {
                found.zero = Some(target.1);
            }
            return Ok(found);
        }
        let mut fwd = Side::new(slots, source, all);
        let mut bwd = Side::new(slots, target, all);
        loop {
            if fwd.frontier.is_empty()
                || bwd.frontier.is_empty()
                || (fwd.depth + bwd.depth) as u64 >= max
            {
                return Ok(found);
            }
            let backwards = bwd.frontier.len() < fwd.frontier.len();
            let (this, other) = if backwards {
                (&mut bwd, &fwd)
            } else {
                (&mut fwd, &bwd)
            };
            // One path: the first meeting will do (every meeting of the first level where
            // the searches meet has the same length).
            let other_seen = |k: Key| other.seen(k);
            let stop: Option<&dyn Fn(Key) -> bool> = if all { None } else { Some(&other_seen) };
            let new = self.level(this, backwards, stop)?;
            let d = this.depth;
            let meets: Vec<(Key, u32)> = new
                .iter()
                .filter_map(|&k| other.depth_of(k).map(|o| (k, d + o)))
                .collect();
            let Some(best) = meets.iter().map(|(_, t)| *t).min() else {
                continue;
            };
            if best as u64 > max {
                return Ok(found);
            }
            let mut groups: Vec<(u32, Key)> = meets
                .into_iter()
                .filter(|(_, t)| *t == best)
                .map(|(m, _)| (target.1, m))
                .collect();
            if !all {
                groups.truncate(1);
            }
            found = Found::new(fwd, Some(bwd));
            found.groups = groups;
            return Ok(found);
        }
    }

    /// Shortest paths from `source` to every node of the end slot (`all` of them, or one
    /// each), as a [`Found`] to enumerate or count.
    pub fn from(&mut self, source: Key, all: bool) -> Result<Found> {
        let (min, max) = (self.spec.min, self.spec.max.unwrap_or(u64::MAX));
        let end = self.spec.end;
        let slots = self.spec.from_slot.len();
        if !self.allowed(source)? {
            return Ok(Found::new(Side::new(slots, source, all), None));
        }
        let mut zero = None;
        if min == 0 && source.0 == end {
            zero = Some(source.1);
        }
        let mut fwd = Side::new(slots, source, all);
        let mut groups = Vec::new();
        while !fwd.frontier.is_empty() && (fwd.depth as u64) < max {
            let new = self.level(&mut fwd, false, None)?;
            if (fwd.depth as u64) < min {
                continue;
            }
            groups.extend(new.into_iter().filter(|m| m.0 == end).map(|m| (m.1, m)));
        }
        let mut found = Found::new(fwd, None);
        found.zero = zero;
        found.groups = groups;
        Ok(found)
    }

    /// The `k` shortest trails from `source` to `target`, by length (at most `cap` long).
    pub fn k_shortest(
        &mut self,
        source: Key,
        target: Key,
        k: u64,
        cap: u64,
        emit: &mut dyn FnMut(u32, &[Step]),
    ) -> Result<()> {
        let max = self.spec.max.unwrap_or(cap);
        if !self.allowed(source)? || !self.allowed(target)? {
            return Ok(());
        }
        // Distance of every node to the target, up to `max`.
        let mut bwd = Side::new(self.spec.from_slot.len(), target, false);
        while !bwd.frontier.is_empty() && (bwd.depth as u64) < max {
            self.level(&mut bwd, true, None)?;
        }
        let Some(d0) = bwd.depth_of(source) else {
            return Ok(());
        };
        let mut found = 0u64;
        let mut len = (d0 as u64).max(self.spec.min);
        while found < k && len <= max {
            let mut path: Vec<Step> = Vec::new();
            self.trails(source, target, len as u32, &bwd, &mut path, &mut |p| {
                emit(target.1, p);
                found += 1;
                found < k
            })?;
            len += 1;
        }
        Ok(())
    }

    /// Depth-first: trails from `at` reaching `target` in exactly `left` more steps.
    fn trails(
        &mut self,
        at: Key,
        target: Key,
        left: u32,
        dist: &Side,
        path: &mut Vec<Step>,
        emit: &mut dyn FnMut(&[Step]) -> bool,
    ) -> Result<bool> {
        if left == 0 {
            return Ok(at != target || emit(path));
        }
        let mut buf = Vec::new();
        self.steps(at, false, &mut buf)?;
        for (h, row, m) in buf {
            if dist.depth_of(m).is_none_or(|d| d > left - 1) {
                continue;
            }
            let rel = self.spec.hops[h].rel;
            if path
                .iter()
                .any(|&(g, r, _)| r == row && self.spec.hops[g].rel == rel)
            {
                continue;
            }
            path.push((h, row, m.1));
            let go_on = self.trails(m, target, left - 1, dist, path, emit)?;
            path.pop();
            if !go_on {
                return Ok(false);
            }
        }
        Ok(true)
    }
}

/// The shortest paths one search found: `groups` of (end node, meeting node); a group's
/// paths are every path from the source to its meeting node (forward predecessors) followed
/// by every path from there to the target (backward predecessors, when the search met in the
/// middle). Enumerated lazily ([`FoundWalk`]) or counted without building one ([`Found::count`]).
pub struct Found {
    fwd: Side,
    bwd: Option<Side>,
    /// The zero-length path's end (`*0..` from a node to itself).
    pub zero: Option<u32>,
    groups: Vec<(u32, Key)>,
}

impl Found {
    fn new(fwd: Side, bwd: Option<Side>) -> Self {
        Self {
            fwd,
            bwd,
            zero: None,
            groups: Vec::new(),
        }
    }

    /// The number of paths (saturating at `u128::MAX`).
    pub fn count(&self) -> u128 {
        let (mut heads, mut tails) = (FxHashMap::default(), FxHashMap::default());
        let mut n = u128::from(self.zero.is_some());
        for &(_, m) in &self.groups {
            let h = self.fwd.paths_to(m, &mut heads);
            let t = self.bwd.as_ref().map_or(1, |b| b.paths_to(m, &mut tails));
            n = n.saturating_add(h.saturating_mul(t));
        }
        n
    }

    /// A walk over the paths from the first.
    pub fn walk(&self) -> FoundWalk {
        FoundWalk {
            zero: self.zero.is_some(),
            group: 0,
            head: None,
            tail: None,
        }
    }
}

/// Where an enumeration of a [`Found`]'s paths is: its memory is one path, whatever their
/// number.
pub struct FoundWalk {
    zero: bool,
    group: usize,
    head: Option<Odometer>,
    tail: Option<Odometer>,
}

impl FoundWalk {
    /// The next path into `path` (cleared first), with its end node; `None` after the last.
    pub fn next(&mut self, found: &Found, path: &mut Vec<Step>) -> Option<u32> {
        path.clear();
        if std::mem::take(&mut self.zero) {
            return found.zero;
        }
        loop {
            let &(end, m) = found.groups.get(self.group)?;
            let advanced = match (&mut self.head, &mut self.tail) {
                (Some(h), Some(t)) => {
                    // The tails turn fastest; a new head starts them again.
                    if t.advance(found.bwd.as_ref().expect("a backward side")) {
                        true
                    } else if h.advance(&found.fwd) {
                        *t = Odometer::new(found.bwd.as_ref().expect("a backward side"), m);
                        true
                    } else {
                        false
                    }
                }
                (Some(h), None) => h.advance(&found.fwd),
                _ => {
                    self.head = Some(Odometer::new(&found.fwd, m));
                    self.tail = found.bwd.as_ref().map(|b| Odometer::new(b, m));
                    true
                }
            };
            if !advanced {
                self.group += 1;
                self.head = None;
                self.tail = None;
                continue;
            }
            let head = self.head.as_ref().expect("set");
            // Forward predecessors lead back to the source: their steps reversed.
            for &(h, row, _) in head.preds.iter().rev() {
                path.push((h, row, 0));
            }
            // Each step reaches the node after it: the node before the next step, or `m`.
            let nodes: Vec<u32> = head
                .preds
                .iter()
                .rev()
                .skip(1)
                .map(|&(_, _, k)| k.1)
                .chain(std::iter::once(m.1))
                .collect();
            for (step, n) in path.iter_mut().zip(nodes) {
                step.2 = n;
            }
            if let Some(t) = &self.tail {
                // Backward predecessors lead on to the target, each to the node it reaches.
                path.extend(t.preds.iter().map(|&(h, row, next)| (h, row, next.1)));
            }
            return Some(end);
        }
    }
}

/// One path through a side's predecessors from a node back to the side's start, as the index
/// of the predecessor taken at each node: turned like an odometer, the last position (nearest
/// the start) fastest, it visits every path once.
struct Odometer {
    choice: Vec<usize>,
    /// The predecessor taken at each position, from the first node on.
    preds: Vec<Pred>,
    from: Key,
}

impl Odometer {
    fn new(side: &Side, from: Key) -> Self {
        let mut o = Odometer {
            choice: Vec::new(),
            preds: Vec::new(),
            from,
        };
        o.fill(side, 0);
        o
    }

    /// Positions from `at` on: the first predecessor each time, down to the start.
    fn fill(&mut self, side: &Side, at: usize) {
        self.choice.truncate(at);
        self.preds.truncate(at);
        let mut k = match at {
            0 => self.from,
            _ => self.preds[at - 1].2,
        };
        while side.pred_count(k) > 0 {
            let p = side.pred_at(k, 0);
            self.choice.push(0);
            self.preds.push(p);
            k = p.2;
        }
    }

    /// The next path; false after the last.
    fn advance(&mut self, side: &Side) -> bool {
        for at in (0..self.choice.len()).rev() {
            let k = match at {
                0 => self.from,
                _ => self.preds[at - 1].2,
            };
            let next = self.choice[at] + 1;
            if next < side.pred_count(k) {
                self.choice[at] = next;
                self.preds[at] = side.pred_at(k, next);
                self.fill(side, at + 1);
                return true;
            }
        }
        false
    }
}
