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
        let mut rest: Vec<ast::Expr> = m
            .where_
            .iter()
            .flat_map(|w| w.conjuncts().into_iter().cloned())
            .collect();
        for p in shortest {
            let filters = match &p.name {
                Some(name) => search_filters(&mut rest, &name.name),
                None => SearchFilters::default(),
            };
            st = self.lower_shortest_path(st, p, filters)?;
        }
        if let Some(w) = super::pattern::and_all(rest) {
            let pred = self.match_where(&st, &w)?;
            st.plan = self.filter(st.plan, pred)?;
        }
        Ok(st)
    }

    fn lower_shortest_path(
        &mut self,
        st: State,
        mut p: ast::PathPattern,
        filters: SearchFilters,
    ) -> Result<State> {
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
        for n in p.nodes_mut() {
            if n.var.is_none() {
                n.var = Some(ast::Ident::new(self.fresh("sn"), n.span));
            }
        }
        let mut st = st;
        // The start alone, and an end the pattern picks by its properties: the search then
        // runs between two nodes (bidirectional, and its paths countable without building
        // them), not to every node before a filter.
        let end = &p.steps[0].1;
        let end_first = end.props.is_some();
        let mut matched = [false, false];
        for (i, n) in std::iter::once(&p.start)
            .chain(end_first.then_some(end))
            .enumerate()
        {
            let name = &n.var.as_ref().expect("named").name;
            if st.scope.get(name).is_some() {
                continue;
            }
            matched[i] = true;
            let m = ast::Match {
                optional: false,
                patterns: vec![ast::PathPattern {
                    name: None,
                    shortest: None,
                    start: n.clone(),
                    steps: vec![],
                    span: n.span,
                }],
                where_: None,
                span: p.span,
            };
            st = self.lower_match(st, &m)?;
        }
        // Their labels and properties hold already: not tested again per row (a test of a
        // parameter would also keep the physical plan from being reused).
        if matched[0] {
            p.start.props = None;
        }
        if matched[1] {
            p.steps[0].1.props = None;
        }
        let m = ast::Match {
            optional: false,
            span: p.span,
            patterns: vec![p],
            where_: None,
        };
        let search = super::pattern::Search {
            reroot: self.options.reroot,
            shortest: Some((mode, filters)),
        };
        self.lower_match_for(st, &m, &search)
    }

    /// A search filter's predicate over its element (column `col`, of type `t`): parameters
    /// as the values given (the plan is built for them), as the search can't bind them.
    pub(crate) fn element_predicate(
        &self,
        (var, pred): &(ast::Ident, ast::Expr),
        col: &str,
        t: &arrow::datatypes::DataType,
    ) -> Result<datafusion::logical_expr::Expr> {
        use super::scope::{Binding, Scope};
        let mut scope = Scope::default();
        scope.bind(
            &var.name,
            Binding::Value {
                col: col.to_string(),
            },
        );
        let schema = datafusion::common::DFSchema::try_from(arrow::datatypes::Schema::new(vec![
            arrow::datatypes::Field::new(col, t.clone(), true),
        ]))?;
        let cx = super::expr::ExprCtx {
            no_aggregates: "in WHERE",
            ..super::expr::ExprCtx::new(&scope, &schema)
        };
        let types = self.param_types.replace(Default::default());
        let e = self.expr(pred, &cx);
        self.param_types.replace(types);
        e
    }
}

/// `all(x IN nodes(p) WHERE ...)` and `all(x IN relationships(p) WHERE ...)` of a shortest
/// path `p`, whose predicates read nothing but `x`: applied during the search (a path is
/// searched only through nodes and relationships that pass).
#[derive(Debug, Clone, Default)]
pub(crate) struct SearchFilters {
    pub nodes: Vec<(ast::Ident, ast::Expr)>,
    pub rels: Vec<(ast::Ident, ast::Expr)>,
}

/// Takes the conjuncts of `rest` the search of path `path` can apply.
fn search_filters(rest: &mut Vec<ast::Expr>, path: &str) -> SearchFilters {
    use ast::ExprKind;
    let mut out = SearchFilters::default();
    rest.retain(|c| {
        let ExprKind::Quantifier {
            kind: ast::Quantifier::All,
            var,
            list,
            pred,
        } = &c.kind
        else {
            return true;
        };
        let ExprKind::Function { name, args, .. } = &list.kind else {
            return true;
        };
        let of_path =
            matches!(args.as_slice(), [a] if matches!(&a.kind, ExprKind::Variable(v) if v == path));
        let mut only_var = true;
        pred.walk(&mut |e| {
            match &e.kind {
                ExprKind::Variable(v) if v != &var.name => only_var = false,
                ExprKind::ListComprehension { .. }
                | ExprKind::Quantifier { .. }
                | ExprKind::Reduce { .. } => only_var = false,
                _ => {}
            }
            only_var
        });
        if !of_path || !only_var || pred.contains_aggregate() {
            return true;
        }
        let item = (var.clone(), (**pred).clone());
        match name.to_lowercase().as_str() {
            "nodes" => out.nodes.push(item),
            "relationships" => out.rels.push(item),
            _ => return true,
        }
        false
    });
    out
}
