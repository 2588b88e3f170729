//! What the configured endpoints allow: which tables join two labels, which labels a
//! variable-length walk can reach, and how long a walk over an acyclic label graph can be.

use crate::config::RelTable;
use cypher::ast::Direction;
use std::collections::{BTreeMap, BTreeSet};

/// Whether a table joins `near` to `far` when walked in `dir`.
pub fn fits(t: &RelTable, dir: Direction, near: &str, far: &str) -> bool {
    let out = t.from == near && t.to == far;
    let inc = t.to == near && t.from == far;
    match dir {
        Direction::Outgoing => out,
        Direction::Incoming => inc,
        Direction::Both => out || inc,
    }
}

/// The labels reachable from `from` in `lo..=hi` steps over `tables` walked in `dir`
/// (`reverse`: walking the pattern from its far end).
pub fn label_reach(
    from: &BTreeSet<String>,
    tables: &[&RelTable],
    dir: Direction,
    reverse: bool,
    lo: u64,
    hi: u64,
) -> BTreeSet<String> {
    let (fwd, bwd) = match (dir, reverse) {
        (Direction::Both, _) => (true, true),
        (Direction::Outgoing, false) | (Direction::Incoming, true) => (true, false),
        _ => (false, true),
    };
    let step = |cur: &BTreeSet<String>| -> BTreeSet<String> {
        let mut next = BTreeSet::new();
        for t in tables {
            if fwd && cur.contains(&t.from) {
                next.insert(t.to.clone());
            }
            if bwd && cur.contains(&t.to) {
                next.insert(t.from.clone());
            }
        }
        next
    };
    let mut out = BTreeSet::new();
    let mut cur = from.clone();
    let mut seen: Vec<BTreeSet<String>> = Vec::new();
    let mut k = 0u64;
    loop {
        if k >= lo {
            // From here on the frontiers repeat with a period: stop at the first repeat.
            if seen.contains(&cur) {
                break;
            }
            out.extend(cur.iter().cloned());
            seen.push(cur.clone());
        }
        if k >= hi || cur.is_empty() {
            break;
        }
        cur = step(&cur);
        k += 1;
    }
    out
}

/// The most relationships a path over `tables` walked in `dir` can have, when the label graph
/// they form has no cycle (a path then can't be longer than its longest walk); `None` when it
/// has one (any length, up to the edges there are).
pub(crate) fn longest_walk(tables: &[&RelTable], dir: Direction) -> Option<u64> {
    if dir == Direction::Both {
        return None;
    }
    let edges: Vec<(&str, &str)> = tables
        .iter()
        .map(|t| (t.from.as_str(), t.to.as_str()))
        .collect();
    let labels: BTreeSet<&str> = edges.iter().flat_map(|&(a, b)| [a, b]).collect();
    // Longest walk ending at each label, relaxed |labels| times; still growing means a cycle.
    let mut best: BTreeMap<&str, u64> = labels.iter().map(|&l| (l, 0)).collect();
    for round in 0..=labels.len() {
        let mut changed = false;
        for &(a, b) in &edges {
            let cand = best[a] + 1;
            if cand > best[b] {
                best.insert(b, cand);
                changed = true;
            }
        }
        if !changed {
            return best.values().max().copied();
        }
        if round == labels.len() {
            break;
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(from: &str, to: &str) -> RelTable {
        RelTable {
            rel_type: "T".into(),
            from: from.into(),
            to: to.into(),
            source: String::new(),
            src: "src".into(),
            dst: "dst".into(),
            ..Default::default()
        }
    }

    fn set(xs: &[&str]) -> BTreeSet<String> {
        xs.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn reach_follows_direction_and_bounds() {
        let (ab, bc) = (t("A", "B"), t("B", "C"));
        let tables = [&ab, &bc];
        let from = set(&["A"]);
        assert_eq!(
            label_reach(&from, &tables, Direction::Outgoing, false, 1, 1),
            set(&["B"])
        );
        assert_eq!(
            label_reach(&from, &tables, Direction::Outgoing, false, 0, u64::MAX),
            set(&["A", "B", "C"])
        );
        assert_eq!(
            label_reach(&from, &tables, Direction::Outgoing, false, 2, 2),
            set(&["C"])
        );
        // Incoming from A: nothing points at A.
        assert!(label_reach(&from, &tables, Direction::Incoming, false, 1, 3).is_empty());
        // Walking back from C.
        assert_eq!(
            label_reach(&set(&["C"]), &tables, Direction::Outgoing, true, 1, 5),
            set(&["A", "B"])
        );
    }

    #[test]
    fn reach_terminates_on_cycles_without_upper_bound() {
        let (ab, ba) = (t("A", "B"), t("B", "A"));
        let tables = [&ab, &ba];
        // Even lengths from A end at A, odd at B: from 3 steps on, both.
        assert_eq!(
            label_reach(
                &set(&["A"]),
                &tables,
                Direction::Outgoing,
                false,
                3,
                u64::MAX
            ),
            set(&["A", "B"])
        );
        assert_eq!(
            label_reach(&set(&["A"]), &tables, Direction::Outgoing, false, 2, 2),
            set(&["A"])
        );
    }
}
