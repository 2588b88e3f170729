//! Branching: a MATCH whose nodes may have several labels (`(n)`,
//! `(m:Message)`, `(m:Post|Comment)`) or whose relationships may come from several tables (`-[:A|B]->`,
//! `-[]->`) becomes one branch per consistent combination, each with exactly one label per
//! node and one type per relationship, so that each branch is an ordinary pattern (CSR hops,
//! re-rooting). The planner lowers the branches and combines them with UNION ALL.
//!
//! The combinations come from the binder (`binder::combos`): only those the configured
//! endpoints allow. Variable-length steps keep their types; only their end labels branch.

use crate::binder::combos::Combo;
use crate::binder::{Binder, QueryGraph};
use crate::error::Result;
use cypher::ast;

/// The MATCH of one branch, bound again: every node gets its label and every fixed-length
/// relationship its type (with the endpoint labels, that names one table). A variable-length
/// step between different labels cannot be zero-length (different labels are different
/// nodes): it starts at length 1.
pub(crate) fn pin(binder: &Binder<'_>, qg: &QueryGraph, combo: &Combo) -> Result<QueryGraph> {
    let cat = binder.catalog;
    let mut m = qg.clause.clone();
    let (mut ni, mut ri) = (0, 0);
    let label = |n: &mut ast::NodePattern, l: &str| {
        let span = n.labels.first().map_or(n.span, |x| x.span);
        (n.labels, n.label_expr) = cat.table_labels(l, span);
    };
    for p in &mut m.patterns {
        label(&mut p.start, &combo.labels[ni]);
        ni += 1;
        for (r, n) in &mut p.steps {
            let near = combo.labels[ni - 1].clone();
            label(n, &combo.labels[ni]);
            match combo.tables[ri] {
                Some(t) => {
                    let cfg = &cat.rels[t].cfg;
                    let span = r.types.first().map_or(r.span, |x| x.span);
                    r.types = vec![ast::Ident::new(cfg.rel_type.clone(), span)];
                    // Undirected between two labels: the table's direction picks it (a type
                    // may have a table each way).
                    if r.direction == ast::Direction::Both && cfg.from != cfg.to {
                        r.direction = if near == cfg.from {
                            ast::Direction::Outgoing
                        } else {
                            ast::Direction::Incoming
                        };
                    }
                }
                None => {
                    if let Some((Some(0), hi)) = r.length {
                        if near != combo.labels[ni] {
                            r.length = Some((Some(1), hi));
                        }
                    }
                }
            }
            ni += 1;
            ri += 1;
        }
    }
    binder.bind_match(&m)
}

#[cfg(test)]
mod graph_tests {
    use super::*;
    use crate::binder::combos::combinations;
    use crate::rewrite::test_util::{bound_match, sample, text};

    /// The combinations of `q`'s first MATCH: per combination, its labels and table types.
    fn combos(q: &str) -> Vec<String> {
        let g = sample();
        let qg = bound_match(g.catalog(), q);
        let combos = combinations(g.catalog(), &qg).expect("few enough");
        combos
            .iter()
            .map(|c| {
                let types: Vec<String> = (c.tables.iter())
                    .map(|t| t.map_or("-".into(), |t| g.catalog().rels[t].cfg.rel_type.clone()))
                    .collect();
                format!("{} / {}", c.labels.join(","), types.join(","))
            })
            .collect()
    }

    #[test]
    fn one_combination_per_consistent_label_and_table() {
        // LIKES reaches posts and comments: two branches; the person stays one.
        assert_eq!(
            combos("MATCH (a:Person {id: 1})-[:LIKES]->(m) RETURN m"),
            [
                "Person,Comment:Message / LIKES",
                "Person,Post:Message / LIKES"
            ]
        );
        // HAS_CREATOR starts at posts and comments, ends at persons.
        assert_eq!(
            combos("MATCH (m)-[:HAS_CREATOR]->(p) RETURN m"),
            [
                "Comment:Message,Person / HAS_CREATOR",
                "Post:Message,Person / HAS_CREATOR"
            ]
        );
    }

    #[test]
    fn a_pinned_branch_binds_with_one_label_each() {
        let g = sample();
        let qg = bound_match(
            g.catalog(),
            "MATCH (a:Person {id: 1})-[:LIKES]->(m) RETURN m",
        );
        let none = |_: &str| None;
        let binder = Binder {
            catalog: g.catalog(),
            lenient: false,
            bound: &none,
        };
        for c in combinations(g.catalog(), &qg).unwrap() {
            let pinned = pin(&binder, &qg, &c).unwrap();
            assert!(
                pinned.labels.iter().all(|l| l.len() == 1),
                "{:?}",
                pinned.labels
            );
            assert!(!pinned.is_ambiguous());
            assert!(text(&pinned.clause).contains(&format!("(m:{})", c.labels[1])));
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::optimizer::test_util::explain_sample as explain;

    /// The "== pattern order ==" section: the branched MATCH, then each branch as lowered.
    fn branches(q: &str) -> String {
        let e = explain(q);
        let section: Vec<&str> = e
            .lines()
            .skip_while(|l| *l != "== pattern order ==")
            .skip(1)
            .take_while(|l| !l.is_empty())
            .collect();
        section.join("\n")
    }

    #[test]
    fn several_labels_branch_per_label() {
        insta::assert_snapshot!(
            branches("MATCH (a:Person {id: 1})-[:LIKES]->(m:Post|Comment) RETURN m.id"),
            @r"
        MATCH (a:Person {id: 1})-[:LIKES]->(m:Post|Comment)  -- 2 branches
        MATCH (a:Person {id: 1})-[:LIKES]->(m:Comment:Message)  -- root: a (key equality)
        MATCH (a:Person {id: 1})-[:LIKES]->(m:Post:Message)  -- root: a (key equality)
        "
        );
    }

    #[test]
    fn alternation_keeps_only_configured_endpoints() {
        // HAS_CREATOR starts at posts and comments, never at a person: only LIKES branches.
        insta::assert_snapshot!(
            branches("MATCH (p:Person {id: 1})-[:LIKES|HAS_CREATOR]->(x) RETURN x.id"),
            @r"
        MATCH (p:Person {id: 1})-[:LIKES|HAS_CREATOR]->(x)  -- 2 branches
        MATCH (p:Person {id: 1})-[:LIKES]->(x:Comment:Message)  -- root: p (key equality)
        MATCH (p:Person {id: 1})-[:LIKES]->(x:Post:Message)  -- root: p (key equality)
        "
        );
    }

    #[test]
    fn a_several_label_variable_branches_again_when_matched() {
        let e = branches(
            "MATCH (t:Tag {id: 300})<-[:HAS_TAG]-(x) WITH x MATCH (x)-[:HAS_CREATOR]->(p:Person) RETURN p.id",
        );
        // Forums have no creator: the second MATCH keeps the comment and post branches.
        assert!(
            e.contains("MATCH (x)-[:HAS_CREATOR]->(p:Person)  -- 2 branches"),
            "{e}"
        );
        assert!(!e.contains("(x:Forum)-[:HAS_CREATOR]"), "{e}");
    }

    #[test]
    fn one_candidate_does_not_branch() {
        // KNOWS joins persons only: `q` is a Person, no branches.
        let e = branches("MATCH (p:Person {id: 1})-[:KNOWS]->(q) RETURN q.id");
        assert!(!e.contains("branch"), "{e}");
        assert!(e.contains("-- root: p (key equality)"), "{e}");
    }

    #[test]
    fn branched_plan_keeps_csr_and_pushes_the_filter_into_each_branch() {
        let e = explain(
            "MATCH (t:Tag {id: 300})<-[:HAS_TAG]-(x) WHERE x.creationDate > 0 RETURN labels(x), x.id",
        );
        let plan: String = e
            .lines()
            .skip_while(|l| *l != "== optimized logical plan ==")
            .take_while(|l| !l.is_empty())
            .collect::<Vec<_>>()
            .join("\n");
        insta::assert_snapshot!("branched_plan", plan);
    }
}
