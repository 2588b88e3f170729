//! What a MATCH leaves bound: each variable it introduces with the labels (tables) the rows
//! after it can have. An ordinary MATCH resolves each to one; a MATCH that branches gives a
//! variable the labels of its branches (`several` where they differ), which a later MATCH
//! reading it branches over again.

use super::combos::combinations;
use super::{Binder, BoundVar, QueryGraph};
use std::collections::BTreeSet;

impl Binder<'_> {
    /// The variables `qg` binds that were not bound before it, in pattern order, as the
    /// clauses after it see them. Where the MATCH is in error, its candidates (the error is
    /// reported where the MATCH is prepared).
    pub fn matched(&self, qg: &QueryGraph) -> Vec<(String, BoundVar)> {
        let new = qg.new_variables(&|v| (self.bound)(v).is_some());
        let several = qg.nodes.iter().any(|n| {
            n.var.as_ref().is_some_and(|v| {
                matches!(
                    (self.bound)(&v.name),
                    Some(BoundVar::Node { several: true, .. })
                )
            })
        });
        let branches = several || (qg.satisfiable && qg.is_ambiguous());
        let per_branch: Option<Vec<(Vec<String>, Vec<Option<usize>>)>> = if !branches {
            self.resolve(qg).ok().map(|paths| {
                let labels = paths.iter().flat_map(|p| p.labels.clone()).collect();
                let rels = (paths.iter())
                    .flat_map(|p| p.rels.iter().zip(&p.tables))
                    .zip(&qg.rels)
                    .map(|((&t, tables), r)| match r.length {
                        None => Some(t),
                        Some(_) => (tables.len() == 1).then(|| tables[0]),
                    })
                    .collect();
                vec![(labels, rels)]
            })
        } else if qg.satisfiable {
            combinations(self.catalog, qg).map(|cs| {
                cs.into_iter()
                    .map(|c| {
                        let rels = (c.tables.iter().zip(&qg.tables))
                            .map(|(t, all)| t.or_else(|| single(all)))
                            .collect();
                        (c.labels, rels)
                    })
                    .collect()
            })
        } else {
            Some(vec![])
        };
        let per_branch = per_branch.filter(|b| !b.is_empty());
        let mut out = Vec::new();
        for name in new {
            let kind = match per_branch.as_deref() {
                Some(bs) => self.in_branches(qg, &name, bs),
                None => self.unmatched(qg, &name),
            };
            out.push((name, kind));
        }
        for p in qg.clause.patterns.iter().filter_map(|p| p.name.as_ref()) {
            out.push((p.name.clone(), BoundVar::Path));
        }
        out
    }

    /// Variable `name` across the branches (a label and a table per occurrence each).
    fn in_branches(
        &self,
        qg: &QueryGraph,
        name: &str,
        branches: &[(Vec<String>, Vec<Option<usize>>)],
    ) -> BoundVar {
        if let Some(i) = qg.nodes.iter().position(|n| named(&n.var, name)) {
            let labels: BTreeSet<&String> = branches.iter().map(|(ls, _)| &ls[i]).collect();
            return BoundVar::Node {
                several: labels.len() > 1,
                labels: labels.into_iter().cloned().collect(),
            };
        }
        let k = (qg.rels.iter().position(|r| named(&r.var, name)))
            .expect("a new variable is a node or a relationship");
        let tables: BTreeSet<Option<usize>> = branches.iter().map(|(_, ts)| ts[k]).collect();
        match qg.rels[k].length {
            // Edge ids of different tables: only the list's length means anything.
            Some(_) => BoundVar::RelList {
                table: match tables.len() {
                    1 => tables.into_iter().next().flatten(),
                    _ => None,
                },
            },
            None => BoundVar::Rel {
                tables: tables.into_iter().flatten().collect(),
            },
        }
    }

    /// Variable `name` of a MATCH that matches nothing: what it could have been.
    fn unmatched(&self, qg: &QueryGraph, name: &str) -> BoundVar {
        if let Some(i) = qg.nodes.iter().position(|n| named(&n.var, name)) {
            let mut labels: Vec<String> = qg.labels[i].iter().cloned().collect();
            if labels.is_empty() && qg.nodes[i].has_label_test() {
                let tables = self.catalog.tables_for(&qg.nodes[i]);
                labels = tables.iter().map(|t| t.label.clone()).collect();
            }
            return BoundVar::Node {
                several: labels.len() != 1,
                labels,
            };
        }
        let k = (qg.rels.iter().position(|r| named(&r.var, name)))
            .expect("a new variable is a node or a relationship");
        let r = &qg.rels[k];
        if r.length.is_some() {
            return BoundVar::RelList { table: None };
        }
        let mut tables: Vec<usize> = qg.tables[k].iter().copied().collect();
        if tables.is_empty() {
            tables = (0..self.catalog.rels.len())
                .filter(|&i| (r.types.iter()).any(|t| t.name == self.catalog.rels[i].cfg.rel_type))
                .collect();
        }
        BoundVar::Rel { tables }
    }
}

/// The one table of `tables`, if it holds one.
fn single(tables: &BTreeSet<usize>) -> Option<usize> {
    (tables.len() == 1).then(|| *tables.first().expect("one"))
}

fn named(v: &Option<cypher::ast::Ident>, name: &str) -> bool {
    v.as_ref().is_some_and(|v| v.name == name)
}
