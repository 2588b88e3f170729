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
use crate::catalog::NodeInfo;
use crate::error::Result;
use crate::operators::csr_expand::CsrExpand;
use crate::operators::shared::SharedSubplan;
use crate::sem_err;
use arrow::datatypes::DataType;
use cypher::ast::{self, Clause, ExprKind, SubqueryKind};
use datafusion::common::JoinType;
use datafusion::functions::expr_fn as f;
use datafusion::functions_aggregate::expr_fn as af;
use datafusion::logical_expr::{
    lit, when, Expr, ExprFunctionExt, Extension, LogicalPlan, LogicalPlanBuilder,
};
use std::collections::{HashMap, HashSet};
use std::sync::Arc;

impl<'c> Lowerer<'c> {
    /// `exprs` with every pattern expression and subquery in them replaced by a variable
    /// bound, in the returned state, to its value per row of `st`. They all read `st`'s
    /// rows from one evaluation of them (a shared subplan, rows numbered, in one process),
    /// and join their results onto it one after the other: the plan grows by one join per
    /// subquery, and never holds the input more than once per subquery.
    pub(super) fn subquery_columns(
        &mut self,
        st: State,
        mut exprs: Vec<&mut ast::Expr>,
    ) -> Result<State> {
        let mut st = st;
        let mut found = HashMap::new();
        for e in exprs.iter_mut() {
            self.hoist_in_pattern_comprehensions(&mut st, e, &[], &mut found)?;
        }
        let readers: usize = exprs.iter().map(|e| applies(e)).sum();
        if readers == 0 {
            return Ok(st);
        }
        let mut base = Base {
            plan: None,
            row: None,
            readers,
        };
        for e in exprs.iter_mut() {
            self.replace_subqueries(&mut st, &mut base, e, &[])?;
        }
        if let Some(row) = &base.row {
            let kept: Vec<Expr> = st
                .columns()
                .iter()
                .filter(|c| *c != row)
                .map(|c| col(c))
                .collect();
            st.plan = LogicalPlanBuilder::from(st.plan).project(kept)?.build()?;
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

    /// The input the subqueries read, made when the first one needs it (a CSR probe does
    /// not): `st`'s rows numbered and shared, in one process; `st` then reads that too.
    fn init_base(&mut self, st: &mut State, base: &mut Base) -> Result<()> {
        if base.plan.is_some() {
            return Ok(());
        }
        if self.options.one_process && !st.unit {
            let row = self.fresh("row");
            let n = datafusion::functions_window::expr_fn::row_number().alias(&row);
            let plan = LogicalPlanBuilder::from(st.plan.clone())
                .window(vec![n])?
                .build()?;
            let id = self.fresh_id();
            st.plan = SharedSubplan::once(plan, id, base.readers + 1);
            base.row = Some(row);
        }
        base.plan = Some(st.plan.clone());
        Ok(())
    }

    /// An existence or count test of one relationship between two bound nodes
    /// (`(a)-[:T]->(b)`, `COUNT { (a)-[:T]-(b) }`) as a CSR probe: the hop lowered over `st`
    /// itself, closing onto the bound node and counting its matches per row, instead of the
    /// apply a subquery is. `None` where the pattern is anything more (labels, properties,
    /// a WHERE, a relationship variable, several types or tables, the join path).
    fn probe_column(
        &mut self,
        st: &State,
        kind: SubqueryKind,
        body: &ast::SingleQuery,
    ) -> Result<Option<(State, String)>> {
        if !matches!(kind, SubqueryKind::Exists | SubqueryKind::Count) {
            return Ok(None);
        }
        let [c @ Clause::Match(m)] = body.clauses.as_slice() else {
            return Ok(None);
        };
        let ([p], None, false) = (m.patterns.as_slice(), &m.where_, m.optional) else {
            return Ok(None);
        };
        let [(rel, end)] = p.steps.as_slice() else {
            return Ok(None);
        };
        let bound = |n: &ast::NodePattern| {
            n.labels.is_empty()
                && n.label_expr.is_none()
                && n.props.is_none()
                && n.var
                    .as_ref()
                    .is_some_and(|v| matches!(st.scope.get(&v.name), Some(Binding::Node { .. })))
        };
        let plain_rel = rel.var.is_none() && rel.length.is_none() && rel.props.is_none();
        if p.name.is_some() || p.shortest.is_some() || !plain_rel || !bound(&p.start) || !bound(end)
        {
            return Ok(None);
        }
        let input = State {
            plan: st.plan.clone(),
            scope: st.scope.clone(),
            unit: st.unit,
        };
        let Ok(matched) = self.lower_clause(input, c) else {
            return Ok(None);
        };
        let LogicalPlan::Extension(ext) = &matched.plan else {
            return Ok(None);
        };
        let Some(hop) = ext.node.as_any().downcast_ref::<CsrExpand>() else {
            return Ok(None);
        };
        let probe = hop.close.is_some()
            && hop.target_filter.is_none()
            && hop.edge_filter.is_none()
            && hop.input == st.plan;
        if !probe {
            return Ok(None);
        }
        let count = self.fresh("sub");
        let node = hop.clone().counting(count.clone())?;
        let plan = LogicalPlan::Extension(Extension {
            node: Arc::new(node),
        });
        let result = match kind {
            SubqueryKind::Count => col(&count),
            _ => col(&count).gt(lit(0i64)),
        };
        Ok(Some(self.bind_result(
            plan,
            st.scope.clone(),
            &count,
            result,
        )?))
    }

    /// One expression, with `locals` the variables of enclosing comprehensions.
    fn replace_subqueries(
        &mut self,
        st: &mut State,
        base: &mut Base,
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
        // `startNode(r)` / `endNode(r)`: the node the relationship matches from / to.
        if let Some((arg, start)) = end_node_call(e) {
            let arg = arg.clone();
            if let Some(name) = self.value_end_node(st, &arg, start)? {
                *e = ast::Expr::new(ExprKind::Variable(name), e.span);
                return Ok(());
            }
            *e = self.end_node_query(&arg, start, e.span)?;
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
            if let Some((next, name)) = self.probe_column(st, kind, &body)? {
                *st = next;
                *e = ast::Expr::new(ExprKind::Variable(name), e.span);
                return Ok(());
            }
            self.init_base(st, base)?;
            let column =
                self.subquery_column(std::mem::replace(st, placeholder()), base, kind, &body);
            let (next, name) = column?;
            *st = next;
            *e = ast::Expr::new(ExprKind::Variable(name), e.span);
            return Ok(());
        }
        // `any(x IN xs WHERE (x)-->())`: a quantifier whose predicate reads its variable in a
        // subquery is the quantifier over the predicate's values, computed per element by the
        // comprehension below: `any(x IN [x IN xs | (x)-->()] WHERE x)`.
        if let ExprKind::Quantifier {
            var, list, pred, ..
        } = &mut e.kind
        {
            if subquery_reads(&[pred.as_ref()], &var.name) {
                let span = list.span;
                let values = ExprKind::ListComprehension {
                    var: var.clone(),
                    list: list.clone(),
                    filter: None,
                    map: Some(pred.clone()),
                };
                **list = ast::Expr::new(values, span);
                **pred = ast::Expr::new(ExprKind::Variable(var.name.clone()), pred.span);
                // The list is outside the quantifier's scope: its variable is no local there.
                return self.replace_subqueries(st, base, list, locals);
            }
        }
        if self.comprehension_subquery(st, base, e, locals)? {
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
            self.replace_subqueries(st, base, c, &locals)?;
        }
        Ok(())
    }

    /// `[p IN posts WHERE (p)-[:HAS_TAG]->() | ...]`: a list comprehension whose body holds
    /// a subquery reading its variable, replaced by a column computed per row. False when `e`
    /// is no such comprehension.
    fn comprehension_subquery(
        &mut self,
        st: &mut State,
        base: &mut Base,
        e: &mut ast::Expr,
        locals: &[String],
    ) -> Result<bool> {
        let ExprKind::ListComprehension {
            var,
            list,
            filter,
            map,
        } = &mut e.kind
        else {
            return Ok(false);
        };
        let body: Vec<&ast::Expr> = filter
            .iter()
            .chain(map.iter())
            .map(|b| b.as_ref())
            .collect();
        if !subquery_reads(&body, &var.name) {
            return Ok(false);
        }
        let mut names = Vec::new();
        body.iter().for_each(|b| b.mentioned_names(&mut names));
        // A subquery in the list itself (`[x IN [(p)-->(t) | t] WHERE (x)-->()]`) becomes a
        // column the shared input lacks: the comprehension then reads an input of its own.
        let list_has_subquery = list.contains_subquery();
        self.replace_subqueries(st, base, list, locals)?;
        let mut own = Base {
            plan: None,
            row: None,
            readers: 1,
        };
        let base = if list_has_subquery { &mut own } else { base };
        list.mentioned_names(&mut names);
        if let Some(v) = names.iter().find(|n| locals.iter().any(|l| l == *n)) {
            return sem_err!(
                Unsupported,
                e.span,
                "unsupported: a pattern expression or subquery in a list comprehension \
                 nested in another one reading its variable `{}`",
                crate::binder::names::unescape(v)
            );
        }
        let (var, list) = (var.clone(), (**list).clone());
        let (filter, map) = (filter.as_deref().cloned(), map.as_deref().cloned());
        self.init_base(st, base)?;
        let taken = std::mem::replace(st, placeholder());
        let (mut next, name) =
            self.comprehension_column(taken, base, &var, &list, filter, map, e.span)?;
        if let Some(row) = own.row {
            let kept: Vec<Expr> = next
                .columns()
                .iter()
                .filter(|c| **c != row)
                .map(|c| col(c))
                .collect();
            next.plan = LogicalPlanBuilder::from(next.plan).project(kept)?.build()?;
        }
        *st = next;
        *e = ast::Expr::new(ExprKind::Variable(name), e.span);
        Ok(true)
    }

    /// A list comprehension whose body holds a subquery reading its variable, per row of
    /// `st`: the list's elements as rows (numbered by their position), the body's subqueries
    /// computed over them, the kept values collected back in order per input row.
    #[allow(clippy::too_many_arguments)]
    fn comprehension_column(
        &mut self,
        st: State,
        base: &Base,
        var: &ast::Ident,
        list: &ast::Expr,
        filter: Option<ast::Expr>,
        map: Option<ast::Expr>,
        span: cypher::Span,
    ) -> Result<(State, String)> {
        let (elements, keys) = self.comprehension_rows(&st, base, var, list, (&filter, &map))?;
        let (mut inner, (x, idx)) =
            self.comprehension_elements(elements, &keys, var, list, (&filter, &map))?;
        inner.scope.bind(&var.name, Binding::Value { col: x });
        if let Some(mut f) = filter {
            inner = self.subquery_columns(inner, vec![&mut f])?;
            let schema = inner.plan.schema().clone();
            let p = self.expr(&f, &ExprCtx::new(&inner.scope, &schema))?;
            self.check_boolean(&p, &schema, f.span)?;
            inner.plan = self.filter(inner.plan, p)?;
        }
        // The elements themselves kept (a filter only): their positions are collected and the
        // elements gathered from the list afterwards, never collected as values (a list of
        // nodes collected per element held the list's memory once per element).
        let keeps_elements = match &map {
            None => true,
            Some(m) => matches!(&m.kind, ExprKind::Variable(v) if v == &var.name),
        };
        let mut m =
            map.unwrap_or_else(|| ast::Expr::new(ExprKind::Variable(var.name.clone()), span));
        let value = if keeps_elements {
            col(&idx)
        } else {
            inner = self.subquery_columns(inner, vec![&mut m])?;
            let schema = inner.plan.schema().clone();
            self.expr(&m, &ExprCtx::new(&inner.scope, &schema))?
        };
        let schema = inner.plan.schema().clone();
        let t = self.type_of(&value, &schema)?;
        let agg_col = self.fresh("sub");
        let agg = af::array_agg(value)
            .order_by(vec![col(&idx).sort(true, false)])
            .build()?;
        let grouped = LogicalPlanBuilder::from(inner.plan)
            .aggregate(
                keys.iter().map(|k| col(k)).collect::<Vec<_>>(),
                vec![agg.alias(&agg_col)],
            )?
            .build()?;
        let plan = match keys.is_empty() {
            true => LogicalPlanBuilder::from(st.plan)
                .join_on(grouped, JoinType::Left, vec![lit(true)])?
                .build()?,
            false => self.join_matches(st.plan, grouped, &keys, &keys)?,
        };
        // A null list gives null; no kept element [].
        let schema = plan.schema().clone();
        let list_value = self.expr(list, &ExprCtx::new(&st.scope, &schema))?;
        if keeps_elements {
            let lt = self.type_of(&list_value, &schema)?;
            let whole = self.comprehension_list(list_value.clone(), &lt, list.span)?;
            let out_type = self.type_of(&whole, &schema)?;
            let elem = match &out_type {
                DataType::List(f) => f.data_type().clone(),
                _ => DataType::Null,
            };
            let gathered = crate::functions::CypherFn::Gather.call(vec![whole, col(&agg_col)]);
            let result = when(
                list_value.is_null(),
                lit(datafusion::common::ScalarValue::try_from(&out_type)?),
            )
            .when(col(&agg_col).is_null(), empty_list(&elem))
            .otherwise(gathered)?;
            return self.bind_result(plan, st.scope, &agg_col, result);
        }
        let out_type = DataType::List(std::sync::Arc::new(arrow::datatypes::Field::new(
            "item",
            t.clone(),
            true,
        )));
        let result = when(
            list_value.is_null(),
            lit(datafusion::common::ScalarValue::try_from(&out_type)?),
        )
        .when(col(&agg_col).is_null(), empty_list(&t))
        .otherwise(col(&agg_col))?;
        self.bind_result(plan, st.scope, &agg_col, result)
    }

    /// The list a comprehension walks, from its value `lv` of type `t`: a list as a `List`,
    /// the list a value of mixed kind holds (anything else a list of itself), null as [].
    fn comprehension_list(&self, lv: Expr, t: &DataType, span: cypher::Span) -> Result<Expr> {
        Ok(match t {
            DataType::List(_) | DataType::LargeList(_) => lv,
            DataType::FixedSizeList(f, _) => {
                datafusion::logical_expr::cast(lv, DataType::List(f.clone()))
            }
            t if crate::functions::any::is_any(t) => {
                crate::functions::CypherFn::AnyItems.call(vec![lv])
            }
            DataType::Null => empty_list(&DataType::Null),
            t => {
                return sem_err!(
                    InvalidArgumentType,
                    span,
                    "a list comprehension needs a list, got {t}"
                )
            }
        })
    }

    /// The list's elements as rows beside their position (columns returned), each with the
    /// keys back to its input row and the columns of the outer variables the body reads:
    /// only those, so that no row of an element copies the list or anything else it holds.
    fn comprehension_elements(
        &mut self,
        elements: State,
        keys: &[String],
        var: &ast::Ident,
        list: &ast::Expr,
        (filter, map): (&Option<ast::Expr>, &Option<ast::Expr>),
    ) -> Result<(State, (String, String))> {
        let schema = elements.plan.schema().clone();
        let lv = self.expr(list, &ExprCtx::new(&elements.scope, &schema))?;
        let lt = self.type_of(&lv, &schema)?;
        let lv = self.comprehension_list(lv, &lt, list.span)?;
        let last = crate::functions::CypherFn::Size.call(vec![lv.clone()]) - lit(1i64);
        let positions = crate::functions::CypherFn::Range.call(vec![lit(0i64), last, lit(1i64)]);
        let mut names = Vec::new();
        filter
            .iter()
            .chain(map.iter())
            .for_each(|e| e.mentioned_names(&mut names));
        let ents = self.entities();
        let mut scope = super::scope::Scope::default();
        let mut cols: Vec<String> = keys.to_vec();
        for (name, b) in &elements.scope.vars {
            if name != &var.name && names.contains(&name.as_str()) {
                scope.bind(name, b.clone());
                for (c, _) in ents.columns(b) {
                    if !cols.contains(&c) {
                        cols.push(c);
                    }
                }
            }
        }
        let (x, idx) = (self.fresh("elem"), self.fresh("idx"));
        let mut exprs: Vec<Expr> = cols.iter().map(|c| col(c)).collect();
        exprs.push(lv.alias(&x));
        exprs.push(positions.alias(&idx));
        let plan = LogicalPlanBuilder::from(elements.plan)
            .project(exprs)?
            .unnest_columns_with_options(
                vec![
                    datafusion::common::Column::new_unqualified(&x),
                    datafusion::common::Column::new_unqualified(&idx),
                ],
                datafusion::common::UnnestOptions::new().with_preserve_nulls(false),
            )?
            .build()?;
        let st = State {
            plan,
            scope,
            unit: false,
        };
        Ok((st, (x, idx)))
    }

    /// The rows a comprehension's elements come from, with their keys back to the input:
    /// each input row (by its number), or on a cluster (no row numbers) each distinct value
    /// of the outer variables the comprehension reads.
    fn comprehension_rows(
        &mut self,
        st: &State,
        base: &Base,
        var: &ast::Ident,
        list: &ast::Expr,
        (filter, map): (&Option<ast::Expr>, &Option<ast::Expr>),
    ) -> Result<(State, Vec<String>)> {
        Ok(match &base.row {
            Some(row) => {
                let rows = State {
                    plan: base.plan()?.clone(),
                    scope: st.scope.clone(),
                    unit: false,
                };
                (rows, vec![row.clone()])
            }
            None => {
                let mut names = Vec::new();
                list.mentioned_names(&mut names);
                filter
                    .iter()
                    .chain(map.iter())
                    .for_each(|x| x.mentioned_names(&mut names));
                let used: HashSet<&str> = names
                    .into_iter()
                    .filter(|n| *n != var.name && st.scope.get(n).is_some())
                    .collect();
                if used.is_empty() {
                    let unit = State::unit()?;
                    (unit, vec![])
                } else {
                    let (inner, _, keys) =
                        self.optional_input(&st.scope, &used, base.plan()?, &None)?;
                    (inner, keys)
                }
            }
        })
    }

    /// `[(a)-->(b) WHERE a.id = startNode(r).id | ..]`: the end nodes of an outer
    /// relationship value `r` found once per row of `st` ([`Self::hoist_end_nodes`] on each
    /// pattern comprehension's WHERE and projection), not once per row the pattern matches.
    fn hoist_in_pattern_comprehensions(
        &mut self,
        st: &mut State,
        e: &mut ast::Expr,
        shadowed: &[String],
        found: &mut HashMap<(String, bool), String>,
    ) -> Result<()> {
        if let ExprKind::PatternComprehension {
            pattern,
            filter,
            map,
        } = &mut e.kind
        {
            let mut inner: Vec<String> = std::iter::once(&pattern.start.var)
                .chain(pattern.steps.iter().flat_map(|(r, n)| [&r.var, &n.var]))
                .chain(std::iter::once(&pattern.name))
                .flatten()
                .map(|v| v.name.clone())
                .collect();
            inner.extend(shadowed.iter().cloned());
            for x in filter.iter_mut().chain(std::iter::once(map)) {
                self.hoist_end_nodes(st, x, &inner, found)?;
            }
            return Ok(());
        }
        if e.is_subquery() {
            return Ok(());
        }
        let shadowed = with_locals(e, shadowed);
        for c in e.children_mut() {
            self.hoist_in_pattern_comprehensions(st, c, &shadowed, found)?;
        }
        Ok(())
    }

    /// Each `startNode(r)` / `endNode(r)` in `e` of a relationship value `r` of `st` (not
    /// one of `shadowed`, nor a variable of a comprehension inside `e`) computed as a column
    /// of `st` ([`Self::value_end_node`]) and replaced by it; `found` holds the columns
    /// computed so far (one per relationship and end).
    fn hoist_end_nodes(
        &mut self,
        st: &mut State,
        e: &mut ast::Expr,
        shadowed: &[String],
        found: &mut HashMap<(String, bool), String>,
    ) -> Result<()> {
        if let Some((arg, start)) = end_node_call(e) {
            if let ExprKind::Variable(r) = &arg.kind {
                if !shadowed.contains(r) {
                    let key = (r.clone(), start);
                    let name = match found.get(&key) {
                        Some(n) => Some(n.clone()),
                        None => self.value_end_node(st, &arg.clone(), start)?,
                    };
                    if let Some(n) = name {
                        found.insert(key, n.clone());
                        *e = ast::Expr::new(ExprKind::Variable(n), e.span);
                    }
                    return Ok(());
                }
            }
        }
        if e.is_subquery() {
            return Ok(());
        }
        let shadowed = with_locals(e, shadowed);
        for c in e.children_mut() {
            self.hoist_end_nodes(st, c, &shadowed, found)?;
        }
        Ok(())
    }

    /// `startNode(r)` / `endNode(r)` of a relationship value `r` (taken from a path or a
    /// list): the node its `__start` / `__end` identity names, found in each node table in
    /// turn (the identity's label says which one holds it) and added to `st` as a column,
    /// where matching the relationship again would try every relationship table, each
    /// branch over its own copy of the input on a cluster (a value's type is known only at
    /// run time). In one process with integer key indexes each table is looked up by key
    /// (no scan); otherwise each is scanned and left-joined on the identity. `None` (the
    /// caller matches it again) for an entity variable (its tables are known) or a value
    /// that is not a relationship struct.
    fn value_end_node(
        &mut self,
        st: &mut State,
        arg: &ast::Expr,
        start: bool,
    ) -> Result<Option<String>> {
        let ExprKind::Variable(r) = &arg.kind else {
            return Ok(None);
        };
        let Some(Binding::Value { col: r_col }) = st.scope.get(r) else {
            return Ok(None);
        };
        let r_col = r_col.clone();
        let field = if start { "__start" } else { "__end" };
        let is_rel = match st.plan.schema().field_with_unqualified_name(&r_col) {
            Ok(f) => matches!(f.data_type(), DataType::Struct(fs)
                if fs.iter().any(|x| x.name() == "__type")
                    && fs.iter().any(|x| x.name() == field)),
            Err(_) => false,
        };
        if !is_rel {
            return Ok(None);
        }
        let infos: Vec<&NodeInfo> = self.catalog.nodes.values().collect();
        if infos.is_empty() {
            return Ok(None);
        }
        let lookups: Option<Vec<_>> = infos
            .iter()
            .map(|info| self.identity_lookup(&info.label))
            .collect();
        let labels = infos.iter().map(|i| i.label.clone()).collect();
        let shape = self.path_shape(&labels, &Default::default(), r)?;
        let nid = f::get_field(col(&r_col), field);
        let name = self.fresh("endof");
        let mut kept: Vec<Expr> = st.columns().iter().map(|c| col(c)).collect();
        let node = match lookups {
            Some(lookups) => self.end_node_looked_up(st, &infos, lookups, nid, &shape)?,
            None => self.end_node_joined(st, &infos, nid, &shape, &name)?,
        };
        kept.push(node.alias(&name));
        st.plan = LogicalPlanBuilder::from(st.plan.clone())
            .project(kept)?
            .build()?;
        st.scope.bind(&name, Binding::Value { col: name.clone() });
        Ok(Some(name))
    }

    /// `st` extended by one key lookup per node table of the node whose identity is `nid`;
    /// returns the node value (of `shape`) from the table that found it.
    fn end_node_looked_up(
        &mut self,
        st: &mut State,
        infos: &[&NodeInfo],
        lookups: Vec<(Arc<crate::csr::NodeKeys>, &Arc<crate::csr::TableColumns>)>,
        nid: Expr,
        shape: &super::scope::PathShape,
    ) -> Result<Expr> {
        let mut cases: Vec<(Expr, Expr)> = Vec::new();
        for (info, (keys, columns)) in infos.iter().zip(lookups) {
            let prefix = self.fresh("endnode");
            let key = self.fresh("endkey");
            let mut cols: Vec<Expr> = st.columns().iter().map(|c| col(c)).collect();
            cols.push(super::scan::identity_key(nid.clone(), &info.label)?.alias(&key));
            let input = LogicalPlanBuilder::from(st.plan.clone())
                .project(cols)?
                .build()?;
            let lookup = crate::operators::node_lookup::NodeLookup::try_new(
                input,
                key.clone(),
                info.label.clone(),
                super::pattern::node_take(&prefix, info),
                keys,
                columns.clone(),
                true,
            )?;
            st.plan = LogicalPlan::Extension(Extension {
                node: Arc::new(lookup),
            });
            let b = Binding::Node {
                label: info.label.clone(),
                prefix,
            };
            cases.push((col(&key).is_not_null(), self.node_struct(&b, shape)?));
        }
        let mut cases = cases.into_iter();
        let Some((first, value)) = cases.next() else {
            return Err(crate::error::Error::Internal(
                "an end node of no table".into(),
            ));
        };
        let mut node = when(first, value);
        for (c, v) in cases {
            node = node.when(c, v);
        }
        Ok(node.end()?)
    }

    /// `st` left-joined, on the identity `nid`, onto the union of the node tables, each
    /// projected to its identity and its node value (of `shape`, as column `name`), which is
    /// returned. One join: a chain of them, one per table, would nest the plan as deep as
    /// there are tables.
    fn end_node_joined(
        &mut self,
        st: &mut State,
        infos: &[&NodeInfo],
        nid: Expr,
        shape: &super::scope::PathShape,
        name: &str,
    ) -> Result<Expr> {
        let (left_id, right_id) = (self.fresh("endid"), self.fresh("endid"));
        let mut nodes: Option<LogicalPlanBuilder> = None;
        for info in infos {
            let prefix = self.fresh("endnode");
            let key = col(&super::scope::prop_col(&prefix, &info.key));
            let b = Binding::Node {
                label: info.label.clone(),
                prefix: prefix.clone(),
            };
            let table = LogicalPlanBuilder::from(self.scan_node(info, &prefix)?)
                .project(vec![
                    super::path::node_id(lit(info.label.clone()), key).alias(&right_id),
                    self.node_struct(&b, shape)?.alias(name),
                ])?
                .build()?;
            nodes = Some(match nodes {
                Some(n) => n.union(table)?,
                None => LogicalPlanBuilder::from(table),
            });
        }
        let Some(nodes) = nodes else {
            return Err(crate::error::Error::Internal(
                "an end node of no table".into(),
            ));
        };
        let mut left: Vec<Expr> = st.columns().iter().map(|c| col(c)).collect();
        left.push(nid.alias(&left_id));
        st.plan = LogicalPlanBuilder::from(st.plan.clone())
            .project(left)?
            .join(
                nodes.build()?,
                JoinType::Left,
                (vec![left_id.as_str()], vec![right_id.as_str()]),
                None,
            )?
            .build()?;
        Ok(col(name))
    }

    /// `COLLECT { MATCH (s)-[r]->() RETURN s }[0]` for `startNode(r)` (the end node for
    /// `endNode`): the relationship matched again, in its own direction.
    fn end_node_query(
        &mut self,
        arg: &ast::Expr,
        start: bool,
        span: cypher::Span,
    ) -> Result<ast::Expr> {
        let ExprKind::Variable(r) = &arg.kind else {
            if matches!(arg.kind, ExprKind::Literal(ast::Literal::Null)) {
                return Ok(arg.clone());
            }
            return sem_err!(
                Unsupported,
                arg.span,
                "unsupported: startNode / endNode of an expression (give it a relationship variable)"
            );
        };
        // The binder made the MATCH, at the call's span: the rewrites prepared it.
        let at = (span.start, span.end);
        let m = (self.matches.iter())
            .map(|(b, _)| &b.clause)
            .find(|m| (m.span.start, m.span.end) == at)
            .filter(|m| m.patterns.len() == 1 && m.patterns[0].steps.len() == 1)
            .cloned()
            .ok_or_else(|| {
                crate::error::Error::Internal(format!("`{r}`'s end node was not bound"))
            })?;
        let p = &m.patterns[0];
        let end = if start { &p.start } else { &p.steps[0].1 };
        let node_var = (end.var.as_ref().map(|v| v.name.clone()))
            .ok_or_else(|| crate::error::Error::Internal("an end node without a name".into()))?;
        let var = ast::Expr::new(ExprKind::Variable(node_var.clone()), span);
        let query = ast::SingleQuery {
            clauses: vec![
                Clause::Match(m),
                Clause::Return(ast::Projection {
                    distinct: false,
                    star: false,
                    items: vec![ast::ProjectionItem {
                        expr: var,
                        alias: None,
                        text: ast::SourceText(node_var),
                    }],
                    order_by: vec![],
                    skip: None,
                    limit: None,
                    span,
                }),
            ],
            span,
        };
        let list = ast::Expr::new(
            ExprKind::Subquery(SubqueryKind::Collect, Box::new(query)),
            span,
        );
        let zero = ast::Expr::new(ExprKind::Literal(ast::Literal::Integer(0)), span);
        Ok(ast::Expr::new(
            ExprKind::Index(Box::new(list), Box::new(zero)),
            span,
        ))
    }

    /// The value of one subquery per row of `st`, as a new column; the state with it bound
    /// to a fresh variable, and that variable.
    fn subquery_column(
        &mut self,
        st: State,
        base: &Base,
        kind: SubqueryKind,
        body: &ast::SingleQuery,
    ) -> Result<(State, String)> {
        let mut names = Vec::new();
        body.mentioned_names(&mut names);
        let used: HashSet<&str> = names
            .into_iter()
            .filter(|n| st.scope.get(n).is_some())
            .collect();
        let ents = self.entities();
        // Where it reads a value (not an entity), per input row.
        let row = base.row.clone().filter(|_| {
            st.scope
                .vars
                .iter()
                .any(|(name, b)| used.contains(name.as_str()) && ents.identity_parts(b).is_none())
        });
        let uncorrelated = used.is_empty();
        let (inner, join_keys) = if uncorrelated {
            let unit = State::unit()?;
            (unit, vec![])
        } else {
            let (inner, _, join_keys) =
                self.optional_input(&st.scope, &used, base.plan()?, &row)?;
            (inner, join_keys)
        };
        // What every WITH of the subquery passes on: the outer variables it reads (seen to
        // its end), and the row number where there is one.
        let mut carry: Vec<String> = used.iter().map(|s| s.to_string()).collect();
        carry.sort();
        carry.extend(row.clone());
        let (rows, value, order) =
            self.lower_subquery_body(inner, kind, body, row.as_deref(), &carry)?;
        let value_type = match &value {
            Some(v) => Some(self.type_of(v, rows.plan.schema())?),
            None => None,
        };
        // Per outer row (per distinct outer values): how many rows, or their values.
        let agg_col = self.fresh("sub");
        let agg = match &value {
            // In the order the subquery's ORDER BY gave its rows.
            Some(v) => match &order {
                Some(seq) => af::array_agg(v.clone())
                    .order_by(vec![col(seq).sort(true, false)])
                    .build()?,
                None => af::array_agg(v.clone()),
            },
            None => af::count(lit(1)),
        };
        let grouped = LogicalPlanBuilder::from(rows.plan)
            .aggregate(
                join_keys.iter().map(|k| col(k)).collect::<Vec<_>>(),
                vec![agg.alias(&agg_col)],
            )?
            .build()?;
        let plan = if uncorrelated {
            LogicalPlanBuilder::from(st.plan)
                .join_on(grouped, JoinType::Left, vec![lit(true)])?
                .build()?
        } else {
            self.join_matches(st.plan, grouped, &join_keys, &join_keys)?
        };
        let result = match (kind, &value_type) {
            (SubqueryKind::Collect, Some(t)) => {
                when(col(&agg_col).is_null(), empty_list(t)).otherwise(col(&agg_col))?
            }
            (SubqueryKind::Count, _) => f::coalesce(vec![col(&agg_col), lit(0i64)]),
            _ => f::coalesce(vec![col(&agg_col), lit(0i64)]).gt(lit(0i64)),
        };
        self.bind_result(plan, st.scope, &agg_col, result)
    }

    /// `plan` with its aggregate column `agg_col` replaced by `result`, bound in `scope` to a
    /// fresh variable (returned too).
    fn bind_result(
        &mut self,
        plan: datafusion::logical_expr::LogicalPlan,
        mut scope: super::scope::Scope,
        agg_col: &str,
        result: Expr,
    ) -> Result<(State, String)> {
        let name = self.fresh("subq");
        let mut kept: Vec<Expr> = plan
            .schema()
            .fields()
            .iter()
            .filter(|f| f.name() != agg_col)
            .map(|f| col(f.name()))
            .collect();
        kept.push(result.alias(&name));
        let plan = LogicalPlanBuilder::from(plan).project(kept)?.build()?;
        scope.bind(&name, Binding::Value { col: name.clone() });
        let st = State {
            plan,
            scope,
            unit: false,
        };
        Ok((st, name))
    }

    /// `st`'s rows where `pred` (a WHERE holding pattern expressions or subqueries) holds.
    pub(super) fn filter_with_subqueries(&mut self, st: State, pred: &ast::Expr) -> Result<State> {
        let mut pred = pred.clone();
        let mut st = self.subquery_columns(st, vec![&mut pred])?;
        let schema = st.plan.schema().clone();
        let cx = ExprCtx {
            no_aggregates: "in WHERE",
            ..ExprCtx::new(&st.scope, &schema)
        };
        let p = self.expr(&pred, &cx)?;
        self.check_boolean(&p, &schema, pred.span)?;
        st.plan = self.filter(st.plan, p)?;
        Ok(st)
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
    ) -> Result<(State, Option<Expr>, Option<String>)> {
        // The order of rows a WITH ... ORDER BY gives is the enclosing clause's business
        // outside this body, and this body's inside it.
        let saved = (
            self.next_collects,
            self.input_order.take(),
            self.output_order.take(),
        );
        let out = self.lower_subquery_clauses(inner, kind, body, row, carry);
        (self.next_collects, self.input_order, self.output_order) = saved;
        out
    }

    fn lower_subquery_clauses(
        &mut self,
        inner: State,
        kind: SubqueryKind,
        body: &ast::SingleQuery,
        row: Option<&str>,
        carry: &[String],
    ) -> Result<(State, Option<Expr>, Option<String>)> {
        let body = &return_as_with(body, || self.fresh("returned"));
        let mut st = inner;
        if let Some(row) = row {
            st.scope.bind(row, Binding::Value { col: row.into() });
        }
        // The outer rows, each once: a WITH aggregating per outer row has a row for each of
        // them, rows matched or not.
        let start = st.plan.clone();
        // What the rows join back on, which every WITH passes on.
        let outer = carry;
        // The column numbering the rows in the order the last WITH ... ORDER BY gave them,
        // passed on by the WITHs after it that keep rows as they are: a later SKIP / LIMIT
        // cuts in that order, COLLECT keeps it in its list.
        let mut order: Option<String> = None;
        let mut ret = None;
        for (i, c) in body.clauses.iter().enumerate() {
            self.next_collects = super::order_needed_after(&body.clauses, i, |next| {
                super::collects(next)
                    || cuts_in_given_order(next)
                    || (kind == SubqueryKind::Collect && matches!(next, Clause::Return(_)))
            });
            self.input_order = self.output_order.take();
            st = match c {
                Clause::Return(r) => {
                    ret = Some(r);
                    break;
                }
                Clause::With(w) => {
                    if regroups(&w.projection) {
                        order = None;
                    }
                    if one_group_per_outer_row(&w.projection, outer) {
                        let marker = self.fresh("matched");
                        let st = self.padded_per_outer_row(st, &start, &marker)?;
                        let w = aggregating_marked(w, &marker);
                        self.subquery_with(st, &w, outer, order.as_deref(), body.span)?
                    } else {
                        self.subquery_with(st, w, outer, order.as_deref(), body.span)?
                    }
                }
                c => self.lower_clause(st, c)?,
            };
            if let Some(seq) = self.output_order.clone() {
                st.scope.bind(&seq, Binding::Value { col: seq.clone() });
                order = Some(seq);
            }
        }
        if kind != SubqueryKind::Collect {
            // What EXISTS / COUNT RETURN does not change whether or how many rows there are
            // (an aggregating or DISTINCT one is a WITH by now). Its SKIP and LIMIT do: a WITH of its items cutting the rows of each outer row.
            if let Some(r) = ret.filter(|r| r.cuts()) {
                let mut p = r.clone();
                for it in p.items.iter_mut() {
                    if it.alias.is_none() && !matches!(it.expr.kind, ExprKind::Variable(_)) {
                        it.alias = Some(ast::Ident::new(self.fresh("returned"), it.expr.span));
                    }
                }
                let w = ast::With {
                    projection: p,
                    where_: None,
                    standalone: false,
                };
                st = self.subquery_with(st, &w, outer, order.as_deref(), body.span)?;
            }
            return Ok((st, None, None));
        }
        let Some(first) = ret.and_then(|r| r.items.first()) else {
            return sem_err!(
                InvalidArgumentType,
                body.span,
                "COLLECT {{ ... }} must end with a RETURN of exactly one column"
            );
        };
        let r = ret.expect("a RETURN item");
        let mut item = first.expr.clone();
        if !r.order_by.is_empty() || r.cuts() {
            // `RETURN x ORDER BY k SKIP s LIMIT l` as `WITH x AS v ORDER BY k SKIP s LIMIT l`,
            // its rows numbered in that order; the list collects `v` in it.
            let name = match (&first.alias, &first.expr.kind) {
                (Some(a), _) => a.name.clone(),
                (None, ExprKind::Variable(v)) => v.clone(),
                (None, _) => self.fresh("collected"),
            };
            let mut p = r.clone();
            p.items = vec![ast::ProjectionItem {
                expr: first.expr.clone(),
                alias: Some(ast::Ident::new(&name, first.expr.span)),
                text: first.text.clone(),
            }];
            let w = ast::With {
                projection: p,
                where_: None,
                standalone: false,
            };
            self.next_collects = true;
            st = self.subquery_with(st, &w, outer, order.as_deref(), body.span)?;
            order = self.output_order.take().or(order);
            item = ast::Expr::new(ExprKind::Variable(name), first.expr.span);
        }
        st = self.subquery_columns(st, vec![&mut item])?;
        let schema = st.plan.schema().clone();
        let value = self.expr(&item, &ExprCtx::new(&st.scope, &schema))?;
        let order = order.filter(|o| schema.has_column_with_unqualified_name(o));
        Ok((st, Some(value), order))
    }

    /// A WITH of a subquery, passing on `outer` (what its rows join back on) and, unless it
    /// aggregates or deduplicates (which would group by it), `order` (the column numbering
    /// the rows in the order of an earlier ORDER BY). Its SKIP and LIMIT cut the rows of each
    /// outer row, not all of them: the rows are numbered per outer row in the order of its
    /// ORDER BY (or the earlier one) and kept in the range; its WHERE filters after the cut.
    fn subquery_with(
        &mut self,
        st: State,
        w: &ast::With,
        outer: &[String],
        order: Option<&str>,
        span: cypher::Span,
    ) -> Result<State> {
        let order = order.filter(|_| !regroups(&w.projection));
        let mut carry = outer.to_vec();
        carry.extend(order.map(str::to_string));
        let w = self.with_carried(w, &carry, span)?;
        let p = &w.projection;
        if !p.cuts() {
            return self.lower_clause(st, &Clause::With(w));
        }
        let (skip, limit, fail) = self.skip_limit_counts(p)?;
        let mut uncut = w.clone();
        (uncut.projection.skip, uncut.projection.limit, uncut.where_) = (None, None, None);
        // An ORDER BY numbers the rows in its order.
        self.next_collects |= !p.order_by.is_empty();
        let mut st = self.lower_clause(st, &Clause::With(uncut))?;
        if let Some(fail) = fail {
            st.plan = LogicalPlanBuilder::from(st.plan).filter(fail)?.build()?;
        }
        let ents = self.entities();
        let mut keys: Vec<Expr> = Vec::new();
        for name in outer {
            let Some(b) = st.scope.get(name) else {
                return Err(crate::error::Error::Internal(format!(
                    "a subquery's WITH did not pass on `{name}`"
                )));
            };
            match (b, ents.identity_parts(b)) {
                (_, Some(parts)) => {
                    keys.extend(parts.into_iter().filter(|e| matches!(e, Expr::Column(_))))
                }
                (Binding::Value { col: c }, None) => keys.push(col(c)),
                (b, None) => keys.extend(ents.columns(b).into_iter().map(|(c, _)| col(&c))),
            }
        }
        let seq = match &self.output_order {
            Some(seq) if !p.order_by.is_empty() => Some(seq.clone()),
            _ => order.map(str::to_string),
        };
        let kept: Vec<Expr> = st.columns().iter().map(|c| col(c)).collect();
        let n = self.fresh("n");
        // (DataFusion refuses an empty ORDER BY given; none is written as none given.)
        let mut numbered = datafusion::functions_window::expr_fn::row_number().partition_by(keys);
        if let Some(seq) = &seq {
            numbered = numbered.order_by(vec![col(seq).sort(true, false)]);
        }
        let numbered = numbered.build()?.alias(&n);
        let mut range = col(&n).gt(lit(skip as u64));
        if let Some(limit) = limit {
            range = range.and(col(&n).lt_eq(lit((skip + limit) as u64)));
        }
        st.plan = LogicalPlanBuilder::from(st.plan)
            .window(vec![numbered])?
            .filter(range)?
            .project(kept)?
            .build()?;
        let Some(pred) = &w.where_ else {
            return Ok(st);
        };
        // The WHERE over the cut rows, the order passed on through it.
        if let Some(seq) = &seq {
            st.scope.bind(seq, Binding::Value { col: seq.clone() });
        }
        let after = ast::With {
            projection: ast::Projection::star(pred.span),
            where_: Some(pred.clone()),
            standalone: false,
        };
        let st = self.subquery_with(st, &after, outer, seq.as_deref(), span)?;
        self.output_order = seq;
        Ok(st)
    }

    /// `st`'s rows with `marker` true, and for every outer row (a row of `start`, where the
    /// subquery began) one more with its outer values, every other column and `marker` null:
    /// an aggregate over the marked rows only (`aggregating_marked`) then has a group for
    /// every outer row, one without matches too, as the subquery run for that row alone has.
    fn padded_per_outer_row(
        &mut self,
        mut st: State,
        start: &datafusion::logical_expr::LogicalPlan,
        marker: &str,
    ) -> Result<State> {
        let mut marked: Vec<Expr> = st.columns().iter().map(|c| col(c)).collect();
        marked.push(lit(true).alias(marker));
        let rows = LogicalPlanBuilder::from(st.plan).project(marked)?.build()?;
        let from = start.schema();
        let mut pad = Vec::new();
        for f in rows.schema().fields() {
            let name = f.name();
            pad.push(
                if name != marker && from.has_column_with_unqualified_name(name) {
                    col(name)
                } else {
                    lit(datafusion::common::ScalarValue::try_from(f.data_type())?).alias(name)
                },
            );
        }
        let pad = LogicalPlanBuilder::from(start.clone())
            .project(pad)?
            .build()?;
        st.plan = LogicalPlanBuilder::from(rows).union(pad)?.build()?;
        st.scope.bind(marker, Binding::Value { col: marker.into() });
        Ok(st)
    }

    /// `w` passing on `carry` (what the subquery's rows join back on, and their order) as
    /// they are.
    fn with_carried(
        &self,
        w: &ast::With,
        carry: &[String],
        span: cypher::Span,
    ) -> Result<ast::With> {
        let mut w = w.clone();
        for name in carry {
            let item = w.projection.items.iter().find(|i| &i.name() == name);
            match item.map(|i| &i.expr.kind) {
                Some(ExprKind::Variable(v)) if v == name => continue,
                // The binder refuses a subquery's name shadowing an outer one.
                Some(_) => {
                    return Err(crate::error::Error::Internal(format!(
                        "a subquery's WITH binds `{name}`, which it passes on, to another value"
                    )))
                }
                // `WITH *` passes on every variable in scope already.
                None if w.projection.star && !name.starts_with("__") => continue,
                None => {}
            }
            w.projection.items.push(ast::ProjectionItem {
                expr: ast::Expr::new(ExprKind::Variable(name.clone()), span),
                alias: Some(ast::Ident::new(name, span)),
                text: ast::SourceText(name.clone()),
            });
        }
        Ok(w)
    }
}

/// The input the subqueries of one clause read: evaluated once, its rows numbered (in one
/// process); made by the first subquery that needs it (`Lowerer::init_base`).
struct Base {
    plan: Option<datafusion::logical_expr::LogicalPlan>,
    row: Option<String>,
    /// How many subqueries read it (an estimate: the shared subplan's readers).
    readers: usize,
}

impl Base {
    /// Made by `Lowerer::init_base` before any subquery reads it.
    fn plan(&self) -> Result<&datafusion::logical_expr::LogicalPlan> {
        self.plan
            .as_ref()
            .ok_or_else(|| crate::error::Error::Internal("a subquery's input not made".into()))
    }
}

/// `startNode(x)` / `endNode(x)`: (x, whether the start).
fn end_node_call(e: &ast::Expr) -> Option<(&ast::Expr, bool)> {
    let ExprKind::Function { name, args, .. } = &e.kind else {
        return None;
    };
    let start = match name.to_lowercase().as_str() {
        "startnode" => true,
        "endnode" => false,
        _ => return None,
    };
    match args.as_slice() {
        [arg] => Some((arg, start)),
        _ => None,
    }
}

/// `body` with a RETURN that aggregates or deduplicates written as a WITH of its items (and
/// its ORDER BY, SKIP and LIMIT) and a RETURN of their names: the rows a subquery counts or
/// collects are then always a plain RETURN's. Names for unnamed items come from `fresh`.
fn return_as_with(
    body: &ast::SingleQuery,
    mut fresh: impl FnMut() -> String,
) -> std::borrow::Cow<'_, ast::SingleQuery> {
    let Some(Clause::Return(r)) = body.clauses.last() else {
        return std::borrow::Cow::Borrowed(body);
    };
    if !regroups(r) {
        return std::borrow::Cow::Borrowed(body);
    }
    let mut with = r.clone();
    let mut ret = ast::Projection::star(r.span);
    ret.star = false;
    for it in with.items.iter_mut() {
        let name = match (&it.alias, &it.expr.kind) {
            (Some(a), _) => a.name.clone(),
            (None, ExprKind::Variable(v)) => v.clone(),
            (None, _) => fresh(),
        };
        it.alias = Some(ast::Ident::new(&name, it.expr.span));
        ret.items.push(ast::ProjectionItem {
            expr: ast::Expr::new(ExprKind::Variable(name.clone()), it.expr.span),
            alias: None,
            text: it.text.clone(),
        });
    }
    let mut q = body.clone();
    q.clauses.pop();
    q.clauses.push(Clause::With(ast::With {
        projection: with,
        where_: None,
        standalone: false,
    }));
    q.clauses.push(Clause::Return(ret));
    std::borrow::Cow::Owned(q)
}

/// A WITH giving one row per outer row (before its WHERE), however many rows come in: every
/// item aggregates (with a grouping key, even one read from an outer variable or a constant,
/// no rows make no groups, as in Neo4j), in a subquery that reads outer variables (`outer`).
fn one_group_per_outer_row(p: &ast::Projection, outer: &[String]) -> bool {
    !outer.is_empty()
        && !p.star
        && !p.items.is_empty()
        && p.items.iter().all(|i| i.expr.contains_aggregate())
}

/// `w` with each aggregate reading only the rows where `marker` holds (`count(*)` counts
/// them; another aggregate's argument is null elsewhere, which it skips).
fn aggregating_marked(w: &ast::With, marker: &str) -> ast::With {
    fn mark(e: &mut ast::Expr, marker: &str) {
        if !e.is_aggregate() {
            e.children_mut().into_iter().for_each(|c| mark(c, marker));
            return;
        }
        let m = ast::Expr::new(ExprKind::Variable(marker.into()), e.span);
        match &mut e.kind {
            ExprKind::CountStar => {
                e.kind = ExprKind::Function {
                    name: "count".into(),
                    distinct: false,
                    args: vec![m],
                }
            }
            ExprKind::Function { args, .. } => {
                if let Some(a) = args.first_mut() {
                    let span = a.span;
                    let arg = std::mem::replace(a, m.clone());
                    *a = ast::Expr::new(
                        ExprKind::Case {
                            operand: None,
                            whens: vec![(m, arg)],
                            else_: None,
                        },
                        span,
                    );
                }
            }
            _ => {}
        }
    }
    let mut w = w.clone();
    for it in w.projection.items.iter_mut() {
        mark(&mut it.expr, marker);
    }
    for s in w.projection.order_by.iter_mut() {
        mark(&mut s.expr, marker);
    }
    w
}

/// A projection that aggregates or deduplicates: its rows are groups, in no order.
fn regroups(p: &ast::Projection) -> bool {
    p.distinct || p.items.iter().any(|i| i.expr.contains_aggregate())
}

/// A WITH or RETURN whose SKIP / LIMIT cuts rows in the order an earlier ORDER BY gave them
/// (it has none of its own).
fn cuts_in_given_order(c: &Clause) -> bool {
    let p = match c {
        Clause::With(w) => &w.projection,
        Clause::Return(r) => r,
        _ => return false,
    };
    p.cuts() && p.order_by.is_empty() && !regroups(p)
}

/// Whether a pattern expression or subquery in `body` reads the variable `var`.
fn subquery_reads(body: &[&ast::Expr], var: &str) -> bool {
    let mut names = Vec::new();
    body.iter().for_each(|b| b.mentioned_names(&mut names));
    body.iter().any(|b| b.contains_subquery()) && names.contains(&var)
}

/// `shadowed` and the variables `e` introduces for its children (a comprehension's,
/// quantifier's or reduce's).
fn with_locals(e: &ast::Expr, shadowed: &[String]) -> Vec<String> {
    let mut out = shadowed.to_vec();
    match &e.kind {
        ExprKind::ListComprehension { var, .. } | ExprKind::Quantifier { var, .. } => {
            out.push(var.name.clone())
        }
        ExprKind::Reduce { acc, var, .. } => {
            out.push(acc.name.clone());
            out.push(var.name.clone());
        }
        _ => {}
    }
    out
}

/// How many subqueries `e` runs over its input (an estimate for the shared subplan's count
/// of readers).
fn applies(e: &ast::Expr) -> usize {
    let mut n = 0;
    e.walk(&mut |x| {
        n += x.reads_graph() as usize;
        true
    });
    n
}

/// A pattern expression or subquery as (what it gives, the query it runs).
fn normalized(e: &ast::Expr) -> Option<(SubqueryKind, ast::SingleQuery)> {
    let m = |p: &ast::PathPattern, filter: Option<&ast::Expr>| {
        Clause::Match(ast::Match::of_pattern(p, filter))
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
