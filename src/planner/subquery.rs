//! Pattern expressions and subqueries: `(a)-[:T]->(b)` as a predicate, pattern
//! comprehensions `[(a)-->(b) WHERE .. | b.x]`, `EXISTS { .. }`, `COUNT { .. }`,
//! `COLLECT { .. }`. Before an expression holding one is lowered, each is computed as a
//! column of the input and replaced by a variable bound to it.
//!
//! A subquery runs as an apply over the rows it is evaluated for: the input is evaluated
//! once (a shared subplan), the subquery matches from the distinct values of the outer
//! variables it reads (or, in one process, from each numbered input row where it reads a
//! value), every WITH in it passing those on (so that its aggregates group per outer row),
//! its rows are counted or collected per those values, and the result joins back to every
//! input row (null equal to null; no match counts 0 and collects []).

use super::expr::{col, empty_list, ExprCtx};
use super::scope::Binding;
use super::{Lowerer, State};
use crate::error::Result;
use crate::operators::shared::SharedSubplan;
use crate::sem_err;
use cypher::ast::{self, Clause, ExprKind, SubqueryKind};
use datafusion::common::JoinType;
use datafusion::functions::expr_fn as f;
use datafusion::functions_aggregate::expr_fn as af;
use datafusion::logical_expr::{lit, when, Expr, LogicalPlanBuilder};
use std::collections::HashSet;

impl<'c> Lowerer<'c> {
    /// `exprs` with every pattern expression and subquery in them replaced by a variable
    /// bound, in the returned state, to its value per row of `st`.
    pub(super) fn subquery_columns(
        &mut self,
        mut st: State,
        exprs: Vec<&mut ast::Expr>,
    ) -> Result<State> {
        for e in exprs {
            self.replace_subqueries(&mut st, e, &[])?;
        }
        Ok(st)
    }

    /// A WITH / RETURN projection with the pattern expressions and subqueries of its items
    /// (and of ORDER BY items over the input's variables) computed over `st`.
    pub(super) fn projection_subqueries(
        &mut self,
        st: State,
        p: &ast::Projection,
    ) -> Result<(State, ast::Projection)> {
        let mut p = p.clone();
        let aliases: Vec<String> = p
            .items
            .iter()
            .filter(|i| !matches!(&i.expr.kind, ExprKind::Variable(v) if Some(v) == i.alias.as_ref().map(|a| &a.name)))
            .filter_map(|i| i.alias.as_ref().map(|a| a.name.clone()))
            .collect();
        let mut exprs: Vec<&mut ast::Expr> = p
            .items
            .iter_mut()
            .map(|i| &mut i.expr)
            .filter(|e| e.contains_subquery())
            .collect();
        for s in &mut p.order_by {
            let mut names = Vec::new();
            s.expr.mentioned_names(&mut names);
            if s.expr.contains_subquery() && !names.iter().any(|n| aliases.iter().any(|a| a == n)) {
                exprs.push(&mut s.expr);
            }
        }
        if exprs.is_empty() {
            return Ok((st, p));
        }
        let st = self.subquery_columns(st, exprs)?;
        Ok((st, p))
    }

    /// One expression, with `locals` the variables of enclosing comprehensions.
    fn replace_subqueries(
        &mut self,
        st: &mut State,
        e: &mut ast::Expr,
        locals: &[String],
    ) -> Result<()> {
        // `exists((a)-->(b))`: the pattern predicate.
        if let ExprKind::Function { name, args, .. } = &mut e.kind {
            if name.eq_ignore_ascii_case("exists")
                && args.len() == 1
                && matches!(args[0].kind, ExprKind::PatternPredicate(_))
            {
                *e = args.remove(0);
            }
        }
        if let Some((kind, body)) = normalized(e) {
            let mut names = Vec::new();
            e.mentioned_names(&mut names);
            if let Some(v) = names.iter().find(|n| locals.iter().any(|l| l == *n)) {
                return sem_err!(
                    Unsupported,
                    e.span,
                    "unsupported: a pattern expression or subquery reading `{}`, the variable \
                     of an enclosing list comprehension, predicate or reduce",
                    crate::binder::names::unescape(v)
                );
            }
            let column = self.subquery_column(std::mem::replace(st, placeholder()), kind, &body);
            let (next, name) = column?;
            *st = next;
            *e = ast::Expr::new(ExprKind::Variable(name), e.span);
            return Ok(());
        }
        let mut locals = locals.to_vec();
        match &e.kind {
            ExprKind::ListComprehension { var, .. } | ExprKind::Quantifier { var, .. } => {
                locals.push(var.name.clone())
            }
            ExprKind::Reduce { acc, var, .. } => {
                locals.push(acc.name.clone());
                locals.push(var.name.clone());
            }
            _ => {}
        }
        // The list a comprehension ranges over is outside its variable's scope, but a
        // subquery there reading a same-named outer variable is rare enough to refuse too.
        for c in e.children_mut() {
            self.replace_subqueries(st, c, &locals)?;
        }
        Ok(())
    }

    /// The value of one subquery per row of `st`, as a new column; the state with it bound
    /// to a fresh variable, and that variable.
    fn subquery_column(
        &mut self,
        st: State,
        kind: SubqueryKind,
        body: &ast::SingleQuery,
    ) -> Result<(State, String)> {
        let mut names = Vec::new();
        body.mentioned_names(&mut names);
        let used: HashSet<&str> = names
            .into_iter()
            .filter(|n| st.scope.get(n).is_some())
            .collect();
        let one_process = self.options.one_process;
        let ents = self.entities();
        let by_row =
            one_process
                && st.scope.vars.iter().any(|(name, b)| {
                    used.contains(name.as_str()) && ents.identity_parts(b).is_none()
                });
        let row = by_row.then(|| self.fresh("row"));
        let mut input = st.plan;
        if let Some(row) = &row {
            let n = datafusion::functions_window::expr_fn::row_number().alias(row);
            input = LogicalPlanBuilder::from(input).window(vec![n])?.build()?;
        }
        let uncorrelated = used.is_empty();
        if one_process && !uncorrelated {
            let id = self.fresh_id();
            input = SharedSubplan::once(input, id, 2);
        }
        let (inner, join_keys) = if uncorrelated {
            let unit = State {
                plan: LogicalPlanBuilder::empty(true).build()?,
                scope: Default::default(),
                unit: true,
            };
            (unit, vec![])
        } else {
            let (inner, _, join_keys) = self.optional_input(&st.scope, &used, &input, &row)?;
            (inner, join_keys)
        };
        // What every WITH of the subquery passes on: the row number, or the outer variables.
        let carry: Vec<String> = match &row {
            Some(row) => vec![row.clone()],
            None => {
                let mut v: Vec<String> = used.iter().map(|s| s.to_string()).collect();
                v.sort();
                v
            }
        };
        let (rows, value) = self.lower_subquery_body(inner, kind, body, row.as_deref(), &carry)?;
        let value_type = match &value {
            Some(v) => Some(self.type_of(v, rows.plan.schema())?),
            None => None,
        };
        // Per outer row (per distinct outer values): how many rows, or their values.
        let agg_col = self.fresh("sub");
        let agg = match &value {
            Some(v) => af::array_agg(v.clone()),
            None => af::count(lit(1)),
        };
        let grouped = LogicalPlanBuilder::from(rows.plan)
            .aggregate(
                join_keys.iter().map(|k| col(k)).collect::<Vec<_>>(),
                vec![agg.alias(&agg_col)],
            )?
            .build()?;
        let mut plan = if uncorrelated {
            LogicalPlanBuilder::from(input)
                .join_on(grouped, JoinType::Left, vec![lit(true)])?
                .build()?
        } else {
            self.join_matches(input, grouped, &join_keys, &join_keys)?
        };
        let name = self.fresh("subq");
        let result = match (kind, &value_type) {
            (SubqueryKind::Collect, Some(t)) => {
                when(col(&agg_col).is_null(), empty_list(t)).otherwise(col(&agg_col))?
            }
            (SubqueryKind::Count, _) => f::coalesce(vec![col(&agg_col), lit(0i64)]),
            _ => f::coalesce(vec![col(&agg_col), lit(0i64)]).gt(lit(0i64)),
        };
        let mut kept: Vec<Expr> = plan
            .schema()
            .fields()
            .iter()
            .filter(|f| Some(f.name()) != row.as_ref() && f.name() != &agg_col)
            .map(|f| col(f.name()))
            .collect();
        kept.push(result.alias(&name));
        plan = LogicalPlanBuilder::from(plan).project(kept)?.build()?;
        let mut scope = st.scope;
        scope.bind(&name, Binding::Value { col: name.clone() });
        Ok((
            State {
                plan,
                scope,
                unit: false,
            },
            name,
        ))
    }

    /// The subquery's clauses over `inner` (the outer values it reads): its rows, and for
    /// COLLECT the expression of its RETURN item over them. Every WITH passes on `carry`
    /// (what the rows join back on), which so also groups its aggregates per outer row.
    fn lower_subquery_body(
        &mut self,
        inner: State,
        kind: SubqueryKind,
        body: &ast::SingleQuery,
        row: Option<&str>,
        carry: &[String],
    ) -> Result<(State, Option<Expr>)> {
        let mut st = inner;
        if let Some(row) = row {
            st.scope.bind(row, Binding::Value { col: row.into() });
        }
        let mut ret = None;
        for c in &body.clauses {
            st = match c {
                Clause::Return(r) => {
                    ret = Some(r);
                    break;
                }
                Clause::With(w) => {
                    if w.projection.skip.is_some() || w.projection.limit.is_some() {
                        return sem_err!(
                            Unsupported,
                            w.projection.span,
                            "unsupported: SKIP or LIMIT in a WITH inside a subquery"
                        );
                    }
                    let mut w = w.clone();
                    for name in carry {
                        let item = w.projection.items.iter().find(|i| &i.name() == name);
                        match item.map(|i| &i.expr.kind) {
                            Some(ExprKind::Variable(v)) if v == name => continue,
                            Some(_) => {
                                return sem_err!(
                                    Unsupported,
                                    w.projection.span,
                                    "unsupported: a WITH inside a subquery binding `{}`, a \
                                     variable of the enclosing query, to something else",
                                    crate::binder::names::unescape(name)
                                )
                            }
                            None => {}
                        }
                        w.projection.items.push(ast::ProjectionItem {
                            expr: ast::Expr::new(ExprKind::Variable(name.clone()), body.span),
                            alias: Some(ast::Ident::new(name, body.span)),
                            text: ast::SourceText(name.clone()),
                        });
                    }
                    self.lower_clause(st, &Clause::With(w))?
                }
                c => self.lower_clause(st, c)?,
            };
        }
        if kind != SubqueryKind::Collect {
            // What EXISTS / COUNT RETURN does not change whether or how many rows there are
            // (unless it aggregates or deduplicates them).
            if let Some(r) =
                ret.filter(|r| r.distinct || r.items.iter().any(|i| i.expr.contains_aggregate()))
            {
                return sem_err!(
                    Unsupported,
                    r.span,
                    "unsupported: an aggregating or DISTINCT RETURN in EXISTS / COUNT"
                );
            }
            return Ok((st, None));
        }
        let Some(item) = ret.and_then(|r| r.items.first()) else {
            return sem_err!(
                InvalidArgumentType,
                body.span,
                "COLLECT {{ ... }} must end with a RETURN of exactly one column"
            );
        };
        if let Some(r) = ret.filter(|r| r.distinct || item.expr.contains_aggregate()) {
            return sem_err!(
                Unsupported,
                r.span,
                "unsupported: an aggregating or DISTINCT RETURN in COLLECT"
            );
        }
        let mut item = item.expr.clone();
        st = self.subquery_columns(st, vec![&mut item])?;
        let schema = st.plan.schema().clone();
        let value = self.expr(&item, &ExprCtx::new(&st.scope, &schema))?;
        Ok((st, Some(value)))
    }
}

/// A pattern expression or subquery as (what it gives, the query it runs).
fn normalized(e: &ast::Expr) -> Option<(SubqueryKind, ast::SingleQuery)> {
    let m = |p: &ast::PathPattern, filter: Option<&ast::Expr>| {
        Clause::Match(crate::binder::query::pattern_match(p, filter))
    };
    Some(match &e.kind {
        ExprKind::PatternPredicate(p) => (
            SubqueryKind::Exists,
            ast::SingleQuery {
                clauses: vec![m(p, None)],
                span: e.span,
            },
        ),
        ExprKind::PatternComprehension {
            pattern,
            filter,
            map,
        } => {
            let ret = ast::Projection {
                distinct: false,
                star: false,
                items: vec![ast::ProjectionItem {
                    expr: (**map).clone(),
                    alias: None,
                    text: ast::SourceText(map.to_string()),
                }],
                order_by: vec![],
                skip: None,
                limit: None,
                span: map.span,
            };
            (
                SubqueryKind::Collect,
                ast::SingleQuery {
                    clauses: vec![m(pattern, filter.as_deref()), Clause::Return(ret)],
                    span: e.span,
                },
            )
        }
        ExprKind::Subquery(kind, q) => (*kind, (**q).clone()),
        _ => return None,
    })
}

/// A state to stand in while the real one is moved through a subquery's lowering.
fn placeholder() -> State {
    State {
        plan: datafusion::logical_expr::LogicalPlan::EmptyRelation(
            datafusion::logical_expr::EmptyRelation {
                produce_one_row: true,
                schema: std::sync::Arc::new(datafusion::common::DFSchema::empty()),
            },
        ),
        scope: Default::default(),
        unit: true,
    }
}
