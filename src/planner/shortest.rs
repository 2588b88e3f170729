//! Shortest paths: `shortestPath((a)-[:T*]-(b))`, `allShortestPaths(...)` and the GQL
//! selectors `ANY SHORTEST`, `ALL SHORTEST`, `SHORTEST k` on a one-relationship pattern. The
//! rest of the MATCH is lowered first, then the start node (each row one search), then the
//! relationship as a traversal that keeps only shortest paths (`VarLengthExpand` with
//! `shortest`, searched breadth-first on the CSRs: `operators/shortest.rs`). The MATCH's WHERE
//! applies to the paths found.

use super::pattern::Search;
use super::{Lowerer, State};
use crate::error::Result;
use crate::rewrite::clause::{MatchPlan, ShortestSearch};
use cypher::ast;

impl Lowerer<'_> {
    /// A MATCH with shortest-path patterns: the rest of it, then each path's ends and its
    /// search, then what the searches leave of the WHERE.
    pub(crate) fn lower_shortest_match(
        &mut self,
        mut st: State,
        rest: Option<Box<MatchPlan>>,
        paths: Vec<ShortestSearch>,
        where_: Option<ast::Expr>,
    ) -> Result<State> {
        let plain = Search {
            reroot: self.options.reroot,
            shortest: None,
            optional: false,
        };
        if let Some(rest) = rest {
            st = self.lower_match_plan(st, *rest, &plain)?;
        }
        for p in paths {
            for end in p.ends {
                st = self.lower_match_plan(st, end, &plain)?;
            }
            let search = Search {
                reroot: self.options.reroot,
                shortest: Some((p.mode, p.filters)),
                optional: false,
            };
            st = self.lower_match_plan(st, *p.search, &search)?;
        }
        if let Some(w) = where_ {
            let pred = self.match_where(&st, &w)?;
            st.plan = self.filter(st.plan, pred)?;
        }
        Ok(st)
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
