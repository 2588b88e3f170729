//! Shortest paths: `shortestPath((a)-[:T*]-(b))`, `allShortestPaths(...)` and the GQL
//! selectors `ANY SHORTEST`, `ALL SHORTEST`, `SHORTEST k` on a one-relationship pattern. The
//! rest of the MATCH is lowered first, then the start node (each row one search), then the
//! relationship as a traversal that keeps only shortest paths (`VarLengthExpand` with
//! `shortest`, searched breadth-first on the CSRs: `operators/shortest.rs`). The MATCH's WHERE
//! applies to the paths found.

use super::{Lowerer, State};
use crate::error::Result;
use crate::sem_err;
use cypher::ast::{self, Shortest};

impl Lowerer<'_> {
    /// A MATCH with shortest-path patterns.
    pub(crate) fn lower_shortest_match(&mut self, st: State, m: &ast::Match) -> Result<State> {
        let (shortest, rest): (Vec<_>, Vec<_>) = m
            .patterns
            .iter()
            .cloned()
            .partition(|p| p.shortest.is_some());
        let mut st = st;
        if !rest.is_empty() {
            let m = ast::Match {
                optional: false,
                patterns: rest,
                where_: None,
                span: m.span,
            };
            st = self.lower_match(st, &m)?;
        }
        for p in shortest {
            st = self.lower_shortest_path(st, p)?;
        }
        if let Some(w) = &m.where_ {
            let pred = self.match_where(&st, w)?;
            st.plan = self.filter(st.plan, pred)?;
        }
        Ok(st)
    }

    fn lower_shortest_path(&mut self, st: State, mut p: ast::PathPattern) -> Result<State> {
        let Some((mode, _)) = p.shortest.take() else {
            return Ok(st);
        };
        if p.steps.len() != 1 {
            return sem_err!(
                Unsupported,
                p.span,
                "unsupported: a shortest path of more than one relationship pattern (write `(a)-[:T*]-(b)`)"
            );
        }
        let rel = &mut p.steps[0].0;
        let (lo, hi) = rel.length.unwrap_or((Some(1), Some(1)));
        rel.length = Some((lo, hi));
        if !matches!(mode, Shortest::K(_)) && lo.unwrap_or(1) > 1 {
            return sem_err!(
                InvalidArgumentValue,
                rel.span,
                "a shortest path's minimum length is 0 or 1"
            );
        }
        if self.indexes.is_none() {
            return sem_err!(
                Unsupported,
                p.span,
                "unsupported: shortest paths search the CSR indexes, which the join mode does not use (run in csr mode, with the indexes built)"
            );
        }
        // Every node named: the start is matched first, alone (each row one search).
        for n in std::iter::once(&mut p.start).chain(p.steps.iter_mut().map(|(_, n)| n)) {
            if n.var.is_none() {
                n.var = Some(ast::Ident::new(self.fresh("sn"), n.span));
            }
        }
        let mut st = st;
        let start = p.start.var.as_ref().expect("named").name.clone();
        if st.scope.get(&start).is_none() {
            let m = ast::Match {
                optional: false,
                patterns: vec![ast::PathPattern {
                    name: None,
                    shortest: None,
                    start: p.start.clone(),
                    steps: vec![],
                    span: p.start.span,
                }],
                where_: None,
                span: p.span,
            };
            st = self.lower_match(st, &m)?;
        }
        let m = ast::Match {
            optional: false,
            span: p.span,
            patterns: vec![p],
            where_: None,
        };
        let saved = self.shortest.replace(mode);
        let out = self.lower_match(st, &m);
        self.shortest = saved;
        out
    }
}
