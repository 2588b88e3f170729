//! Patterns of several cycles counted by joining node by node (`CountPaths::joins`), for
//! `CountPathsExec`: a generic join, depth first from each root. Step `j`'s hop proposes its
//! new nodes (one per edge, through its filters), and each of the step's closing hops keeps
//! those that the nodes bound before reach over it, as many times as they have edges to
//! them. A closing hop's nodes from a node bound earlier are marked in a bit set once, while
//! that node stays bound: every node bound below it is one bit read (a country's cities for
//! each of its persons' friends, a person's friends for each friend of a friend). Nothing but
//! the nodes bound so far is held. Roots, or for few roots their first step's nodes, are
//! shared out over the cores, a few at a time as each core finishes (some have far more
//! paths than others).

use super::cancel::Checkpoint;
use super::count_paths::JoinStep;
use super::count_paths_exclude::Marks;
use super::count_paths_exec::{degree, neighbours, passing, HopSpec, Masks, Work};
use datafusion::common::Result;
use std::sync::atomic::{AtomicUsize, Ordering};

/// Every step's filter masks, over whole tables (the closing hops' relationship filters
/// only: their nodes are bound already).
struct Joiner<'a> {
    arms: &'a [Vec<HopSpec>],
    joins: &'a [JoinStep],
    open: Vec<Masks>,
    close: Vec<Vec<Masks>>,
}

/// A closing hop's nodes from the node it closes onto (`node`, while bound): sorted, one
/// entry per edge, and marked.
struct Onto {
    node: Option<u32>,
    run: Vec<u32>,
    marks: Marks,
}

/// One core's walk: the nodes bound (the root first), each closing hop's [`Onto`].
struct Walk {
    bound: Vec<u32>,
    onto: Vec<Vec<Onto>>,
    buf: Vec<u32>,
    /// Per step, the nodes it bound (with their ways) while the steps below walk on.
    found: Vec<Vec<(u32, u64)>>,
    seen: usize,
}

/// Roots from which the roots themselves are shared out; below, their first step's nodes.
pub(super) const SHARED_ROOTS: usize = 256;

/// Work items taken at a time by a core.
const CHUNK: usize = 16;

/// The paths `joins` describes over `arms` from each of `roots`, into `out` by root ordinal.
pub(super) fn join_counts(
    arms: &[Vec<HopSpec>],
    joins: &[JoinStep],
    roots: &[u32],
    out: &mut [u64],
    work: &mut Work,
) -> Result<()> {
    let j = Joiner::new(arms, joins, work)?;
    // (root, first step's node or none, edges to it): what a core takes. Held from the
    // query's memory pool before they grow: a hub's first step can hold as many items as
    // the graph has edges.
    type Item = (u32, Option<u32>, u64);
    let mut memory = work.memory.take();
    let mut hold = |items: usize| match &mut memory {
        Some(m) => m.try_resize(items * std::mem::size_of::<Item>()),
        None => Ok(()),
    };
    let items: Vec<Item> = match roots.len() >= SHARED_ROOTS {
        true => {
            hold(roots.len())?;
            roots.iter().map(|&r| (r, None, 1)).collect()
        }
        false => {
            let mut w = j.walk();
            let mut items: Vec<Item> = Vec::new();
            for &r in roots {
                w.bound = vec![r];
                j.step(0, &mut w, &work.cp, |v, m| {
                    if items.len() == items.capacity() {
                        let more = items.capacity().max(64);
                        hold(items.capacity() + more)?;
                        items.reserve_exact(more);
                    }
                    items.push((r, Some(v), m));
                    Ok(())
                })?;
            }
            work.edges += w.seen;
            items
        }
    };
    let cores = std::thread::available_parallelism().map_or(1, |p| p.get().min(4));
    let next = AtomicUsize::new(0);
    // Each core's counts per root, added up in order of the items (a root's items are
    // consecutive, so a core adds a root's up before it moves on).
    let run = |cp: &Checkpoint| -> Result<(Vec<(u32, u64)>, usize)> {
        let mut w = j.walk();
        let mut sums: Vec<(u32, u64)> = Vec::new();
        loop {
            let at = next.fetch_add(CHUNK, Ordering::Relaxed);
            if at >= items.len() {
                return Ok((sums, w.seen));
            }
            for &(r, first, m) in &items[at..(at + CHUNK).min(items.len())] {
                w.bound.clear();
                w.bound.push(r);
                let n = match first {
                    None => j.count(0, &mut w, cp)?,
                    Some(v) => {
                        w.bound.push(v);
                        m.saturating_mul(j.count(1, &mut w, cp)?)
                    }
                };
                match sums.last_mut() {
                    Some((root, s)) if *root == r => *s = s.saturating_add(n),
                    _ => sums.push((r, n)),
                }
            }
        }
    };
    let parts: Vec<Result<(Vec<(u32, u64)>, usize)>> = match items.len() > CHUNK && cores > 1 {
        false => vec![run(&work.cp)],
        true => std::thread::scope(|s| {
            let tasks: Vec<_> = (0..cores)
                .map(|_| {
                    let cp = work.cp.fork();
                    let run = &run;
                    s.spawn(move || run(&cp))
                })
                .collect();
            tasks
                .into_iter()
                .map(|t| t.join().unwrap_or_else(|e| std::panic::resume_unwind(e)))
                .collect()
        }),
    };
    for part in parts {
        let (sums, seen) = part?;
        work.edges += seen;
        for (r, n) in sums {
            out[r as usize] = out[r as usize].saturating_add(n);
        }
    }
    drop(items);
    hold(0)?;
    work.memory = memory;
    Ok(())
}

impl<'a> Joiner<'a> {
    fn new(arms: &'a [Vec<HopSpec>], joins: &'a [JoinStep], work: &Work) -> Result<Self> {
        let mut open = Vec::with_capacity(arms.len());
        let mut close = Vec::with_capacity(arms.len());
        for arm in arms {
            open.push(Masks::of(&arm[0], work)?);
            let edges_only = |h: &HopSpec| -> Result<Masks> {
                Ok(Masks {
                    nodes: None,
                    edges: passing(&h.edge_filter, &h.data.edges, h.data.index.table_rows, work)?,
                })
            };
            close.push(arm[1..].iter().map(edges_only).collect::<Result<_>>()?);
        }
        Ok(Self {
            arms,
            joins,
            open,
            close,
        })
    }

    fn walk(&self) -> Walk {
        let onto = (self.arms.iter())
            .map(|arm| {
                let n = arm[0].data.far_keys.len();
                (arm[1..].iter())
                    .map(|_| Onto {
                        node: None,
                        run: Vec::new(),
                        marks: Marks::new(n),
                    })
                    .collect()
            })
            .collect();
        Walk {
            bound: Vec::new(),
            onto,
            buf: Vec::new(),
            found: vec![Vec::new(); self.joins.len()],
            seen: 0,
        }
    }

    /// The paths from step `j` on, the nodes before it bound in `w`.
    fn count(&self, j: usize, w: &mut Walk, cp: &Checkpoint) -> Result<u64> {
        if j == self.joins.len() {
            return Ok(1);
        }
        // The last step's nodes are only counted; others are walked on from, each step
        // reusing its buffer (a step is entered once per path to it).
        let last = j + 1 == self.joins.len();
        let mut total = 0u64;
        let mut found = std::mem::take(&mut w.found[j]);
        found.clear();
        self.step(j, w, cp, |v, m| {
            match last {
                true => total = total.saturating_add(m),
                false => found.push((v, m)),
            }
            Ok(())
        })?;
        self.warm(j + 1, &found);
        for &(v, m) in &found {
            w.bound.push(v);
            let below = self.count(j + 1, w, cp);
            w.bound.pop();
            total = total.saturating_add(m.saturating_mul(below?));
        }
        w.found[j] = found;
        Ok(total)
    }

    /// When step `j` walks from the node the step before bound, reads where each of `found`'s
    /// runs starts, all before any is walked: the reads of different nodes do not wait on
    /// each other (each node's run is a read from far in memory, two with its offsets).
    fn warm(&self, j: usize, found: &[(u32, u64)]) {
        let Some(h) = (self.joins.get(j))
            .filter(|s| s.from == j)
            .map(|_| &self.arms[j][0])
        else {
            return;
        };
        let mut first = 0u32;
        for &(v, _) in found {
            for &rev in &h.orientations {
                let csr = h.data.index.direction(rev);
                first ^= csr.neighbors.get(csr.range(v).start).copied().unwrap_or(0);
            }
        }
        std::hint::black_box(first);
    }

    /// Each node step `j` binds, with the number of ways it is joined (edges of its hop, times
    /// those of each closing hop).
    fn step(
        &self,
        j: usize,
        w: &mut Walk,
        cp: &Checkpoint,
        mut f: impl FnMut(u32, u64) -> Result<()>,
    ) -> Result<()> {
        let (arm, s) = (&self.arms[j], &self.joins[j]);
        for (k, &(onto, reversed)) in s.closes.iter().enumerate() {
            let b = w.bound[onto];
            let o = &mut w.onto[j][k];
            if o.node != Some(b) {
                o.marks.clear_all(&o.run);
                let run = neighbours(&arm[k + 1], b, reversed, &self.close[j][k], &mut w.buf);
                o.run.clear();
                o.run.extend_from_slice(run);
                o.marks.set_all(&o.run);
                o.node = Some(b);
                // Every edge looked at, those a filter drops too.
                let looked = degree(&arm[k + 1], b, reversed) as usize;
                cp.tick(looked + 1)?;
                w.seen += looked;
            }
        }
        let (h, m) = (&arm[0], &self.open[j]);
        let x = w.bound[s.from];
        let both = h.orientations.len() == 2;
        for (o, &rev) in h.orientations.iter().enumerate() {
            let csr = h.data.index.direction(rev);
            let r = csr.range(x);
            cp.tick(r.len() + 1)?;
            w.seen += r.len();
            for e in r {
                let v = csr.neighbors[e];
                // An undirected walk sees a self-loop once.
                let passes = !(both && o == 1 && v == x)
                    && m.nodes.as_ref().is_none_or(|ok| ok[v as usize])
                    && (m.edges.as_ref()).is_none_or(|ok| ok[csr.edge_rows[e] as usize]);
                if !passes {
                    continue;
                }
                let mut ways = 1u64;
                for o in &w.onto[j] {
                    if !o.marks.get(v) {
                        ways = 0;
                        break;
                    }
                    let at = o.run.partition_point(|&u| u < v);
                    let n = o.run[at..].iter().take_while(|&&u| u == v).count();
                    ways = ways.saturating_mul(n as u64);
                }
                if ways > 0 {
                    f(v, ways)?;
                }
            }
        }
        Ok(())
    }
}
