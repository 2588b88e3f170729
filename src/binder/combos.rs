//! Label combinations: the consistent assignments of one label per node occurrence and one
//! table per fixed-length relationship of a bound MATCH, which decide whether it branches and
//! what each variable it binds can be (`rewrite::branching` pins each one).
//!
//! Only combinations the configured endpoints allow are kept: a relationship table joins the
//! labels its entry names, nothing else. Variable-length steps keep their types (a traversal
//! may walk several tables); only their end labels branch.

use super::QueryGraph;
use crate::catalog::Catalog;
use crate::config::reach::{fits, label_reach};
use crate::config::RelTable;
use std::collections::BTreeSet;

/// More branches than this is an error: the pattern should say more.
pub const MAX_BRANCHES: usize = 128;

/// One branch: a label per node occurrence, and per relationship its table (`None` for a
/// variable-length one, which keeps its types).
#[derive(Debug, Clone, PartialEq)]
pub struct Combo {
    pub labels: Vec<String>,
    pub tables: Vec<Option<usize>>,
}

/// Every consistent combination, in a stable order; `None` when there are more than
/// [`MAX_BRANCHES`].
pub(crate) fn combinations(cat: &Catalog, shape: &QueryGraph) -> Option<Vec<Combo>> {
    let n = shape.nodes.len();
    // Occurrences sharing a variable share a label: assign per group.
    let mut group_of = vec![usize::MAX; n];
    let mut groups: Vec<usize> = Vec::new(); // first occurrence of each group
    for i in 0..n {
        if group_of[i] != usize::MAX {
            continue;
        }
        group_of[i] = groups.len();
        if let Some(v) = shape.node_var(i) {
            for (j, g) in group_of.iter_mut().enumerate().skip(i + 1) {
                if shape.node_var(j) == Some(v) {
                    *g = groups.len();
                }
            }
        }
        groups.push(i);
    }
    let mut out = Vec::new();
    let mut chosen: Vec<Option<&str>> = vec![None; groups.len()];
    assign(cat, shape, &groups, &group_of, 0, &mut chosen, &mut out)?;
    Some(out)
}

fn assign<'s>(
    cat: &Catalog,
    shape: &'s QueryGraph,
    groups: &[usize],
    group_of: &[usize],
    g: usize,
    chosen: &mut Vec<Option<&'s str>>,
    out: &mut Vec<Combo>,
) -> Option<()> {
    if g == groups.len() {
        let labels: Vec<String> = group_of
            .iter()
            .map(|&g| chosen[g].expect("assigned").to_string())
            .collect();
        return expand_tables(cat, shape, labels, out);
    }
    for label in &shape.labels[groups[g]] {
        chosen[g] = Some(label.as_str());
        // Prune as soon as a step with both ends assigned has no table.
        let dead = shape.steps.iter().enumerate().any(|(k, &(a, b))| {
            let (Some(la), Some(lb)) = (chosen[group_of[a]], chosen[group_of[b]]) else {
                return false;
            };
            !step_possible(cat, shape, k, la, lb)
        });
        if !dead {
            assign(cat, shape, groups, group_of, g + 1, chosen, out)?;
        }
        chosen[g] = None;
    }
    Some(())
}

/// Whether relationship `k` can join a node labelled `la` (near) to one labelled `lb` (far).
fn step_possible(cat: &Catalog, shape: &QueryGraph, k: usize, la: &str, lb: &str) -> bool {
    let rel = &shape.rels[k];
    match rel.length {
        None => shape.tables[k]
            .iter()
            .any(|&t| fits(&cat.rels[t].cfg, rel.direction, la, lb)),
        Some((_, Some(0))) => la == lb,
        Some((lo, hi)) => {
            let tables: Vec<&RelTable> =
                shape.tables[k].iter().map(|&t| &cat.rels[t].cfg).collect();
            let from = BTreeSet::from([la.to_string()]);
            label_reach(
                &from,
                &tables,
                rel.direction,
                false,
                lo.unwrap_or(1),
                hi.unwrap_or(u64::MAX),
            )
            .contains(lb)
        }
    }
}

fn expand_tables(
    cat: &Catalog,
    shape: &QueryGraph,
    labels: Vec<String>,
    out: &mut Vec<Combo>,
) -> Option<()> {
    let options: Vec<Vec<Option<usize>>> = shape
        .steps
        .iter()
        .enumerate()
        .map(|(k, &(a, b))| match shape.rels[k].length {
            Some(_) => vec![None],
            None => shape.tables[k]
                .iter()
                .copied()
                .filter(|&t| {
                    fits(
                        &cat.rels[t].cfg,
                        shape.rels[k].direction,
                        &labels[a],
                        &labels[b],
                    )
                })
                .map(Some)
                .collect(),
        })
        .collect();
    let mut idx = vec![0usize; options.len()];
    if options.iter().any(|o| o.is_empty()) {
        return Some(());
    }
    loop {
        if out.len() == MAX_BRANCHES {
            return None;
        }
        out.push(Combo {
            labels: labels.clone(),
            tables: idx
                .iter()
                .enumerate()
                .map(|(k, &i)| options[k][i])
                .collect(),
        });
        // Odometer over the per-step options.
        let mut k = options.len();
        loop {
            if k == 0 {
                return Some(());
            }
            k -= 1;
            idx[k] += 1;
            if idx[k] < options[k].len() {
                break;
            }
            idx[k] = 0;
        }
    }
}
