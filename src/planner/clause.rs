//! Lowering of UNWIND, WITH (and its WHERE), RETURN and OPTIONAL MATCH; the projections
//! themselves are `projection.rs`.

use super::expr::{col, empty_list, ExprCtx};
use super::pattern::Search;
use super::scope::{Binding, Scope};
use super::{Lowered, Lowerer, State};
use crate::error::Result;
use crate::operators::csr_expand::CsrExpand;
use crate::operators::shared::SharedSubplan;
use arrow::datatypes::DataType;
use cypher::ast::{self, ExprKind};
use datafusion::common::{Column, JoinType, UnnestOptions};
use datafusion::functions_nested::expr_fn as nf;
use datafusion::logical_expr::{lit, Expr, LogicalPlan, LogicalPlanBuilder};
use std::collections::HashSet;

/// One item of a WITH / RETURN after `*` expansion.
pub(super) struct Item {
    pub(super) expr: ast::Expr,
    /// The variable it introduces (escaped, `super::names`), or for an unaliased RETURN
    /// expression its text.
    pub(super) name: String,
    /// The result column name the user sees (RETURN): the alias or the text, unescaped.
    pub(super) display: String,
}

impl<'c> Lowerer<'c> {
    pub fn lower_unwind(&mut self, mut st: State, u: &ast::Unwind) -> Result<State> {
        let schema = st.plan.schema().clone();
        let cx = ExprCtx {
            no_aggregates: "in UNWIND",
            ..ExprCtx::new(&st.scope, &schema)
        };
        let x = self.expr(&u.expr, &cx)?;
        let t = self.type_of(&x, &schema)?;
        // A value variable lives in a column of its own name.
        let colname = u.alias.name.clone();
        let list = match t {
            DataType::List(_) | DataType::LargeList(_) | DataType::FixedSizeList(_, _) => x,
            // UNWIND null gives no rows.
            DataType::Null => empty_list(&DataType::Null),
            // A value of mixed kind: its items where a row holds a list, else itself (null:
            // no rows).
            t if crate::functions::any::is_any(&t) => {
                crate::functions::CypherFn::AnyItems.call(vec![x])
            }
            _ => nf::make_array(vec![x]),
        };
        let mut exprs: Vec<Expr> = st.columns().iter().map(|c| col(c)).collect();
        exprs.push(list.alias(&colname));
        st.plan = LogicalPlanBuilder::from(st.plan)
            .project(exprs)?
            .unnest_column_with_options(
                Column::new_unqualified(&colname),
                UnnestOptions::new().with_preserve_nulls(false),
            )?
            .build()?;
        st.unit = false;
        st.scope
            .bind(&u.alias.name, Binding::Value { col: colname });
        Ok(st)
    }

    /// OPTIONAL MATCH: the input is evaluated once (a shared subplan; in one process) and read twice: the
    /// pattern is matched from the variables it uses, and the matches are joined back to
    /// every input row, keeping rows without a match. Where every used variable is a node or
    /// a relationship, the match runs once per distinct entity and joins back on identities
    /// (null equal to null); where one is a value, a list or a path, it runs per input row and
    /// joins back on the row's number (values carried along are never join keys).
    pub fn lower_optional_match(&mut self, st: State, m: &ast::Match) -> Result<State> {
        if st.unit {
            // Nothing before: the match, or one row of nulls when it has none.
            let matched = self.lower_match(st.clone(), m)?;
            let plan = LogicalPlanBuilder::from(st.plan)
                .join_on(matched.plan, JoinType::Left, vec![lit(true)])?
                .build()?;
            return Ok(State {
                plan,
                scope: matched.scope,
                unit: false,
            });
        }
        if let Some(expanded) = self.optional_hop(&st, m)? {
            return Ok(expanded);
        }
        let used = used_variables(m);
        // Row numbers identify rows only within one evaluation: on a cluster (each reader
        // evaluates the input) the match joins back on the values of what it uses.
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
        if one_process {
            let id = self.fresh_id();
            input = SharedSubplan::once(input, id, 2);
        }
        let (inner, keys, join_keys) = self.optional_input(&st.scope, &used, &input, &row)?;
        let matched = self.lower_match(inner, m)?;
        let mut plan = self.join_matches(input, matched.plan, &keys, &join_keys)?;
        if let Some(row) = &row {
            let kept: Vec<Expr> = plan
                .schema()
                .fields()
                .iter()
                .filter(|f| f.name() != row)
                .map(|f| col(f.name()))
                .collect();
            plan = LogicalPlanBuilder::from(plan).project(kept)?.build()?;
        }
        // The input's variables as they were, plus the new ones.
        let mut scope = st.scope;
        for (name, b) in matched.scope.vars {
            if scope.get(&name).is_none() {
                scope.bind(&name, b);
            }
        }
        Ok(State {
            plan,
            scope,
            unit: false,
        })
    }

    /// An OPTIONAL MATCH of one hop from a bound node to a new one, with no WHERE and no
    /// property maps: a left outer `CsrExpand` of every input row (per label of a node bound
    /// with several, each row through the one branch of its label), without evaluating the
    /// input twice and joining back. `None` where it does not apply or the hop is not on an
    /// index.
    fn optional_hop(&mut self, st: &State, m: &ast::Match) -> Result<Option<State>> {
        let [p] = m.patterns.as_slice() else {
            return Ok(None);
        };
        let [(rel, far)] = p.steps.as_slice() else {
            return Ok(None);
        };
        let new =
            |v: &Option<ast::Ident>| v.as_ref().is_none_or(|v| st.scope.get(&v.name).is_none());
        let binding = |n: &ast::NodePattern| n.var.as_ref().and_then(|v| st.scope.get(&v.name));
        let node_bound = |n: &ast::NodePattern| {
            matches!(
                binding(n),
                Some(Binding::Node { .. } | Binding::Nodes { .. })
            )
        };
        let plain = m.where_.is_none()
            && p.name.is_none()
            && p.shortest.is_none()
            && rel.length.is_none()
            && rel.props.is_none()
            && new(&rel.var)
            && p.start.props.is_none()
            && far.props.is_none()
            && !st.unit;
        // One end bound, the other new.
        let one_way = (node_bound(&p.start) && new(&far.var))
            || (node_bound(far) && new(&p.start.var) && p.start.var != far.var);
        if !plain || !one_way {
            return Ok(None);
        }
        let search = Search {
            reroot: self.options.reroot,
            shortest: None,
            optional: true,
        };
        let (counter, shared) = (self.counter, self.shared);
        // A node of several labels is expanded per label, each branch reading the input:
        // evaluated once.
        let near = if node_bound(&p.start) { &p.start } else { far };
        let mut input = st.clone();
        if let Some(Binding::Nodes { labels, .. }) = binding(near) {
            if labels.len() > 1 && self.options.one_process {
                let id = self.fresh_id();
                input.plan = SharedSubplan::once(st.plan.clone(), id, labels.len());
            }
        }
        let lowered = self.lower_match_for(input.clone(), m, &search)?;
        if every_row_expanded(&lowered.plan, &input.plan, &st.scope) {
            return Ok(Some(lowered));
        }
        (self.counter, self.shared) = (counter, shared);
        Ok(None)
    }

    /// What an OPTIONAL MATCH matches from: the columns of the variables it uses, distinct
    /// (a node's other columns looked up after) or, with `row`, each input row with its
    /// number. With the columns it passes on and the join keys back to the input.
    pub(super) fn optional_input(
        &mut self,
        scope: &Scope,
        used: &HashSet<&str>,
        input: &LogicalPlan,
        row: &Option<String>,
    ) -> Result<(State, Vec<String>, Vec<String>)> {
        let ents = self.entities();
        let mut inner_scope = Scope::default();
        let (mut keys, mut join_keys) = (Vec::new(), Vec::new());
        let (mut distinct, mut lookups) = (Vec::new(), Vec::new());
        for (name, b) in &scope.vars {
            if !used.contains(name.as_str()) {
                continue;
            }
            inner_scope.bind(name, b.clone());
            let cols: Vec<String> = ents.columns(b).into_iter().map(|(c, _)| c).collect();
            match self.node_lookup(b)?.filter(|_| row.is_none()) {
                Some((_, l)) => {
                    let taken = l.produced();
                    distinct.extend(cols.iter().filter(|c| !taken.contains(*c)).cloned());
                    lookups.push(l);
                }
                None => distinct.extend(cols.iter().cloned()),
            }
            keys.extend(cols);
            // A path is told apart by all its elements, not its start.
            join_keys.extend(ents.identity_cols(b));
        }
        let plan = match row {
            Some(row) => {
                distinct.push(row.clone());
                keys.push(row.clone());
                join_keys = vec![row.clone()];
                LogicalPlanBuilder::from(input.clone())
                    .project(distinct.iter().map(|c| col(c)))?
                    .build()?
            }
            None => {
                let unique = LogicalPlanBuilder::from(input.clone())
                    .project(distinct.iter().map(|c| col(c)))?
                    .distinct()?
                    .build()?;
                Self::with_lookups(unique, lookups)?
            }
        };
        let inner = State {
            plan,
            scope: inner_scope,
            unit: false,
        };
        Ok((inner, keys, join_keys))
    }

    /// `left`'s rows each with their rows of `matched` (an OPTIONAL MATCH run over `left`'s
    /// distinct `keys`), joined on the identities `join_keys` (null equal to null), or with
    /// nulls where there are none.
    pub(super) fn join_matches(
        &mut self,
        left: LogicalPlan,
        matched: LogicalPlan,
        keys: &[String],
        join_keys: &[String],
    ) -> Result<LogicalPlan> {
        let key_set: HashSet<&String> = keys.iter().collect();
        let renamed: Vec<String> = (0..join_keys.len()).map(|_| self.fresh("okey")).collect();
        let mut right_exprs: Vec<Expr> = join_keys
            .iter()
            .zip(&renamed)
            .map(|(k, r)| col(k).alias(r))
            .collect();
        let mut new_cols = Vec::new();
        for f in matched.schema().fields() {
            if !key_set.contains(f.name()) {
                right_exprs.push(col(f.name()));
                new_cols.push(f.name().clone());
            }
        }
        let right = LogicalPlanBuilder::from(matched)
            .project(right_exprs)?
            .build()?;
        let on: Vec<Expr> = join_keys
            .iter()
            .zip(&renamed)
            .map(|(k, r)| {
                Expr::BinaryExpr(datafusion::logical_expr::BinaryExpr::new(
                    Box::new(col(k)),
                    datafusion::logical_expr::Operator::IsNotDistinctFrom,
                    Box::new(col(r)),
                ))
            })
            .collect();
        let on = if on.is_empty() { vec![lit(true)] } else { on };
        let mut out: Vec<Expr> = left
            .schema()
            .fields()
            .iter()
            .map(|f| col(f.name()))
            .collect();
        out.extend(new_cols.iter().map(|c| col(c)));
        Ok(LogicalPlanBuilder::from(left)
            .join_on(right, JoinType::Left, on)?
            .project(out)?
            .build()?)
    }

    pub fn lower_with(&mut self, st: State, w: &ast::With) -> Result<State> {
        if let Some(pred) = w.where_.as_ref().filter(|p| p.contains_subquery()) {
            // Its pattern expressions and subqueries run over the projected rows.
            let (st, _, _) = self.lower_projection(st, &w.projection, false)?;
            self.identity_collects.clear();
            return self.filter_with_subqueries(st, pred);
        }
        let st = self.with_where_on_input(st, w)?;
        if st.1 {
            // WHERE already applied below the projection.
            return Ok(self.lower_projection(st.0, &w.projection, false)?.0);
        }
        let (mut st, _, overrides) = self.lower_projection(st.0, &w.projection, false)?;
        if let Some(pred) = &w.where_ {
            let schema = st.plan.schema().clone();
            // WHERE may repeat a projected expression (`WITH a.x AS x WHERE a.x > 1`).
            let overrides: Vec<_> = overrides
                .into_iter()
                .filter(|(_, c)| schema.has_column_with_unqualified_name(c))
                .collect();
            let cx = ExprCtx {
                no_aggregates: "in WHERE",
                overrides: &overrides,
                ..ExprCtx::new(&st.scope, &schema)
            };
            let p = self.expr(pred, &cx)?;
            self.check_boolean(&p, &schema, pred.span)?;
            st.plan = self.filter(st.plan, p)?;
        }
        Ok(st)
    }

    /// `WITH c WHERE r IS NULL`: a WHERE that reads a variable the WITH does not project
    /// (openCypher lets it see the variables before a projection that neither aggregates,
    /// deduplicates nor skips/limits rows) is applied below the projection, where the
    /// projected names are bound too (entities as themselves, values as computed columns).
    /// Returns the state and whether it did.
    fn with_where_on_input(&mut self, st: State, w: &ast::With) -> Result<(State, bool)> {
        let (Some(pred), p) = (&w.where_, &w.projection) else {
            return Ok((st, false));
        };
        if p.distinct || p.cuts() {
            return Ok((st, false));
        }
        let items = self.items(&st, p, false)?;
        if items.iter().any(|i| i.expr.contains_aggregate()) {
            return Ok((st, false));
        }
        let mut reads_input = false;
        pred.walk(&mut |e| {
            if let ExprKind::Variable(v) = &e.kind {
                reads_input |= st.scope.get(v).is_some() && !items.iter().any(|i| &i.name == v);
            }
            true
        });
        if !reads_input {
            return Ok((st, false));
        }
        // The input's variables, then the projected names over them.
        let mut scope = st.scope.clone();
        let mut exprs: Vec<Expr> = st.columns().iter().map(|c| col(c)).collect();
        let schema = st.plan.schema().clone();
        let mut bound = Vec::new();
        for it in &items {
            let entity = match &it.expr.kind {
                ExprKind::Variable(v) => st.scope.get(v).filter(|b| b.is_entity()).cloned(),
                _ => None,
            };
            match entity {
                Some(b) => bound.push((it.name.clone(), b)),
                None => {
                    let c = self.fresh("wv");
                    let cx = ExprCtx::new(&st.scope, &schema);
                    exprs.push(self.expr(&it.expr, &cx)?.alias(&c));
                    bound.push((it.name.clone(), Binding::Value { col: c }));
                }
            }
        }
        for (name, b) in bound {
            scope.bind(&name, b);
        }
        let plan = LogicalPlanBuilder::from(st.plan.clone())
            .project(exprs)?
            .build()?;
        let schema = plan.schema().clone();
        let cx = ExprCtx {
            no_aggregates: "in WHERE",
            ..ExprCtx::new(&scope, &schema)
        };
        let pe = self.expr(pred, &cx)?;
        self.check_boolean(&pe, &schema, pred.span)?;
        let plan = self.filter(plan, pe)?;
        Ok((
            State {
                plan,
                scope: st.scope,
                unit: false,
            },
            true,
        ))
    }

    pub fn lower_return(&mut self, st: State, r: &ast::Projection) -> Result<Lowered> {
        let (st, items, _) = self.lower_projection(st, r, true)?;
        // Final projection: entities become values, columns get Cypher's names.
        let mut exprs = Vec::new();
        for (name, internal) in &items {
            let b = st.scope.get(internal).cloned().unwrap_or(Binding::Value {
                col: internal.clone(),
            });
            exprs.push(self.entity_value(&b)?.alias(name));
        }
        let plan = LogicalPlanBuilder::from(st.plan).project(exprs)?.build()?;
        Ok(Lowered {
            plan,
            columns: items.into_iter().map(|(n, _)| n).collect(),
            notes: vec![],
            held: vec![],
        })
    }
}

/// Whether `plan` gives every row of `input` through one optional `CsrExpand`: the expansion
/// of `input` itself, or a UNION of expansions of its rows of each label of a variable bound
/// with several, every label once (a projection keeps every row: looked through).
fn every_row_expanded(plan: &LogicalPlan, input: &LogicalPlan, scope: &Scope) -> bool {
    fn under_projections(mut p: &LogicalPlan) -> &LogicalPlan {
        while let LogicalPlan::Projection(pr) = p {
            p = pr.input.as_ref();
        }
        p
    }
    // The input of the optional expansion `p` is, under projections.
    fn optional_over(p: &LogicalPlan) -> Option<&LogicalPlan> {
        match under_projections(p) {
            LogicalPlan::Extension(ext) => (ext.node.as_any().downcast_ref::<CsrExpand>())
                .filter(|n| n.optional)
                .map(|n| &n.input),
            _ => None,
        }
    }
    let LogicalPlan::Union(u) = under_projections(plan) else {
        return optional_over(plan) == Some(input);
    };
    // Each branch: the rows of one label (of one several-label variable), expanded.
    let mut seen: Vec<(&str, String)> = Vec::new();
    for b in &u.inputs {
        let Some(LogicalPlan::Filter(f)) = optional_over(b) else {
            return false;
        };
        let shared_input = match f.input.as_ref() {
            LogicalPlan::Extension(e) => {
                (e.node.as_any().downcast_ref::<SharedSubplan>()).is_some_and(|s| &s.input == input)
            }
            _ => false,
        };
        let Expr::BinaryExpr(be) = &f.predicate else {
            return false;
        };
        match (be.left.as_ref(), be.op, be.right.as_ref()) {
            (Expr::Column(c), datafusion::logical_expr::Operator::Eq, Expr::Literal(v, _))
                if f.input.as_ref() == input || shared_input =>
            {
                seen.push((&c.name, v.to_string()))
            }
            _ => return false,
        }
    }
    // One variable, each of its labels exactly once.
    let Some(&(label_col, _)) = seen.first() else {
        return false;
    };
    let labels = scope.vars.iter().find_map(|(_, b)| match b {
        Binding::Nodes { labels, prefix, .. } if super::scope::label_col(prefix) == label_col => {
            Some(labels)
        }
        _ => None,
    });
    let mut got: Vec<&str> = (seen.iter())
        .filter(|(c, _)| *c == label_col)
        .map(|(_, v)| v.as_str())
        .collect();
    got.sort_unstable();
    got.dedup();
    let mut want: Vec<&str> = labels.into_iter().flatten().map(String::as_str).collect();
    want.sort_unstable();
    got.len() == seen.len() && got == want
}

/// Names a MATCH mentions: pattern variables, and variables in its property maps and WHERE.
fn used_variables(m: &ast::Match) -> HashSet<&str> {
    let mut out = HashSet::new();
    let mut exprs: Vec<&ast::Expr> = Vec::new();
    for p in &m.patterns {
        let nodes = p.nodes();
        for n in nodes {
            out.extend(n.var.as_ref().map(|v| v.name.as_str()));
            exprs.extend(n.props.as_ref());
        }
        for (r, _) in &p.steps {
            out.extend(r.var.as_ref().map(|v| v.name.as_str()));
            exprs.extend(r.props.as_ref());
        }
    }
    exprs.extend(m.where_.as_ref());
    for e in exprs {
        e.walk(&mut |x| {
            if let ExprKind::Variable(v) = &x.kind {
                out.insert(v.as_str());
            }
            true
        });
    }
    out
}
