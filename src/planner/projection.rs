//! WITH / RETURN projections: items (with `*`), the new bindings, aggregation (grouping keys,
//! aggregate calls, expressions around them), ORDER BY over what the projection leaves
//! visible, SKIP / LIMIT.

use super::clause::Item;
use super::expr::{col, empty_list, ExprCtx};
use super::scope::{Binding, Scope};
use super::{Lowerer, State};
use crate::error::{Error, Result};
use crate::operators::node_lookup::NodeLookup;
use crate::sem_err;
use arrow::datatypes::DataType;
use cypher::ast::{self, ExprKind, Literal};
use datafusion::common::DFSchema;
use datafusion::functions::expr_fn as f;
use datafusion::functions_aggregate::expr_fn as af;
use datafusion::logical_expr::{
    lit, when, Expr, ExprFunctionExt, LogicalPlan, LogicalPlanBuilder, SortExpr,
};
use std::collections::HashSet;

/// A projection's new bindings (see `Lowerer::bind_items`).
struct ItemBindings {
    new_scope: Scope,
    /// Per item: (name, scope variable).
    item_vars: Vec<(String, String)>,
    /// The grouping keys (all items when nothing aggregates), as aliased expressions.
    key_exprs: Vec<Expr>,
    /// The items holding aggregates: (item, column).
    agg_items: Vec<(usize, String)>,
    /// Nodes grouped by their key only: their other columns, taken once per group.
    lookups: Vec<GroupLookup>,
}

/// A node grouping item whose properties are taken after the aggregate, by key (a node's
/// properties depend on its key: grouping by them too would hash and carry every one per row).
struct GroupLookup {
    /// The item's name and the variable it came from (what ORDER BY may mention).
    names: [String; 2],
    /// The key property (read before the lookup too).
    key: String,
    lookup: NodeLookup,
}

/// What building the aggregate of a projection reads.
#[derive(Clone, Copy)]
struct Aggregation<'a> {
    items: &'a [Item],
    item_vars: &'a [(String, String)],
    agg_items: &'a [(usize, String)],
    new_scope: &'a Scope,
    is_return: bool,
}

/// What ORDER BY's expressions see.
struct OrderBy<'a> {
    scope: &'a Scope,
    overrides: &'a [(ast::Expr, String)],
    key_overrides: &'a [(ast::Expr, String)],
    aggregating: bool,
    items: &'a [Item],
}

impl<'c> Lowerer<'c> {
    /// Items of a projection, with `*` expanded and names checked.
    pub(super) fn items(
        &self,
        st: &State,
        p: &ast::Projection,
        is_return: bool,
    ) -> Result<Vec<Item>> {
        let mut items = Vec::new();
        if p.star {
            let names = st.scope.visible_names();
            if names.is_empty() {
                return sem_err!(
                    NoVariablesInScope,
                    p.span,
                    "RETURN * / WITH * is not allowed when there are no variables in scope"
                );
            }
            for n in names {
                items.push(Item {
                    expr: ast::Expr::new(ExprKind::Variable(n.clone()), p.span),
                    display: crate::binder::names::unescape(&n),
                    name: n,
                });
            }
        }
        for it in &p.items {
            if !is_return && it.alias.is_none() && !matches!(it.expr.kind, ExprKind::Variable(_)) {
                return sem_err!(
                    NoExpressionAlias,
                    it.expr.span,
                    "Expression in WITH must be aliased (use AS)"
                );
            }
            items.push(Item {
                expr: it.expr.clone(),
                name: it.name(),
                display: match &it.alias {
                    Some(a) => crate::binder::names::unescape(&a.name),
                    None => it.text.0.clone(),
                },
            });
        }
        let mut seen = HashSet::new();
        for (i, it) in items.iter().enumerate() {
            if !seen.insert(it.display.clone()) {
                let span = if i >= items.len() - p.items.len() {
                    p.items[i + p.items.len() - items.len()].expr.span
                } else {
                    p.span
                };
                return sem_err!(
                    ColumnNameConflict,
                    span,
                    "Multiple result columns with the same name `{}`",
                    it.display
                );
            }
        }
        Ok(items)
    }

    /// Shared by WITH and RETURN. Returns the new state and, per item, (name, scope variable).
    pub(super) fn lower_projection(
        &mut self,
        st: State,
        p: &ast::Projection,
        is_return: bool,
    ) -> Result<(State, Vec<(String, String)>, Vec<(ast::Expr, String)>)> {
        let items = self.items(&st, p, is_return)?;
        let aggregating = items.iter().any(|i| i.expr.contains_aggregate());
        let in_schema = st.plan.schema().clone();
        let with_names = self.with_column_names(&items, &in_schema, is_return);
        // DISTINCT groups too: a node is then grouped by its key alone and its other columns
        // looked up after (grouping by every property hashes them all, and keeps them all
        // needed by the plan below).
        let grouping = aggregating || p.distinct;
        let bound = self.bind_items(&st, &items, &with_names, grouping, is_return)?;
        let ItemBindings {
            new_scope,
            item_vars,
            key_exprs,
            agg_items,
            mut lookups,
        } = bound;
        // In RETURN the scope is keyed by the internal variable; ORDER BY may use the alias too.
        let order_scope_aliases: Vec<(String, Binding)> = match is_return {
            true => alias_bindings(&items, &item_vars, &new_scope),
            false => vec![],
        };
        // Item expressions already computed as columns, for ORDER BY.
        let mut overrides: Vec<(ast::Expr, String)> = Vec::new();
        for (it, (_, var)) in items.iter().zip(&item_vars) {
            if !matches!(it.expr.kind, ExprKind::Variable(_)) {
                overrides.push((it.expr.clone(), var.clone()));
            }
        }
        let mut sorted_before_projection = false;
        // After aggregation: what an expression around an aggregate may reuse (grouping keys
        // that are variables or properties of variables, and the aggregates).
        let mut key_overrides: Vec<(ast::Expr, String)> = Vec::new();
        let mut plan = if grouping {
            let agg = Aggregation {
                items: &items,
                item_vars: &item_vars,
                agg_items: &agg_items,
                new_scope: &new_scope,
                is_return,
            };
            let (lookups_before, late) = split_lookups(lookups, &items, &agg_items, p);
            lookups = late;
            self.project_aggregates(
                &st,
                &agg,
                key_exprs,
                lookups_before,
                &mut overrides,
                &mut key_overrides,
            )?
        } else {
            sorted_before_projection = !p.order_by.is_empty() && !p.distinct;
            let mut key_exprs = key_exprs;
            // The order an earlier WITH ... ORDER BY gave, passed on to what needs it.
            let passed = (self.input_order.clone())
                .filter(|s| in_schema.has_column_with_unqualified_name(s));
            let passes_on = !is_return && self.next_collects && super::keeps_order(p);
            if let Some(seq) = passed.as_ref().filter(|_| passes_on) {
                if !key_exprs
                    .iter()
                    .any(|e| e.schema_name().to_string() == *seq)
                {
                    key_exprs.push(col(seq));
                }
                self.output_order = Some(seq.clone());
            }
            match passed {
                // A SKIP / LIMIT without an ORDER BY of its own cuts in that order.
                Some(seq) if p.order_by.is_empty() && p.cuts() && !p.distinct => {
                    let sorted = State {
                        plan: LogicalPlanBuilder::from(st.plan.clone())
                            .sort(vec![col(&seq).sort(true, false)])?
                            .build()?,
                        ..st.clone()
                    };
                    self.project_items(&sorted, key_exprs, false, false)?
                }
                _ => self.project_items(&st, key_exprs, sorted_before_projection, p.distinct)?,
            }
        };
        if !p.order_by.is_empty() {
            let mut sort_scope = if sorted_before_projection {
                st.scope.clone()
            } else {
                Scope::default()
            };
            for (n, b) in new_scope.vars.iter().chain(&order_scope_aliases) {
                sort_scope.bind(n, b.clone());
            }
            let order = OrderBy {
                scope: &sort_scope,
                overrides: &overrides,
                key_overrides: &key_overrides,
                aggregating,
                items: &items,
            };
            let sorts;
            (plan, sorts) = self.order_by(plan, p, &order)?;
            if !is_return && self.next_collects {
                plan = self.number_rows(plan, sorts)?;
            }
        }
        plan = self.skip_limit(plan, p)?;
        plan = Self::with_lookups(plan, lookups.into_iter().map(|l| l.lookup))?;
        if sorted_before_projection {
            plan = self.project_scope(plan, &new_scope)?;
        }
        Ok((
            State {
                plan,
                scope: new_scope,
                unit: false,
            },
            item_vars,
            overrides,
        ))
    }

    /// `plan` with a column numbering its rows in the order of `sorts`, for the next clause's
    /// `collect` (which follows it: see `Lowerer::input_order`).
    fn number_rows(
        &mut self,
        plan: LogicalPlan,
        sorts: Vec<datafusion::logical_expr::SortExpr>,
    ) -> Result<LogicalPlan> {
        let seq = self.fresh("seq");
        let n = datafusion::functions_window::expr_fn::row_number()
            .order_by(sorts)
            .build()?
            .alias(&seq);
        self.output_order = Some(seq);
        Ok(LogicalPlanBuilder::from(plan).window(vec![n])?.build()?)
    }

    /// `plan` projected onto the columns of `scope`'s variables (and the row numbering, if
    /// any): what a projection sorted before it was applied keeps.
    fn project_scope(&self, plan: LogicalPlan, scope: &Scope) -> Result<LogicalPlan> {
        let ents = self.entities();
        let mut cols: Vec<Expr> = scope
            .vars
            .iter()
            .flat_map(|(_, b)| ents.columns(b))
            .map(|(c, _)| col(&c))
            .collect();
        cols.extend(self.output_order.iter().map(|c| col(c)));
        Ok(LogicalPlanBuilder::from(plan).project(cols)?.build()?)
    }

    /// WITH's column per item. A re-bound name (`WITH x + 1 AS x`, or `WITH -x AS y WITH
    /// -y AS x WITH -x AS y`) gets a column name used nowhere else in the query, so that two
    /// projections at different levels never look identical (DataFusion's optimizer drops a
    /// projection equal to the one below it).
    fn with_column_names(
        &mut self,
        items: &[Item],
        in_schema: &DFSchema,
        is_return: bool,
    ) -> Vec<String> {
        let mut with_names = Vec::with_capacity(items.len());
        for it in items {
            let computed = !matches!(it.expr.kind, ExprKind::Variable(_));
            let reused = name_taken(in_schema, &it.name) || self.with_columns.contains(&it.name);
            let name = if computed && reused && !is_return {
                format!("{}#{}", it.name, self.counter.next())
            } else {
                it.name.clone()
            };
            if computed {
                self.with_columns.insert(name.clone());
            }
            with_names.push(name);
        }
        with_names
    }

    /// The new bindings of a projection: entities keep being entities (under a new prefix),
    /// values get a column; grouping-key expressions and the aggregate items apart.
    fn bind_items(
        &self,
        st: &State,
        items: &[Item],
        with_names: &[String],
        grouping: bool,
        is_return: bool,
    ) -> Result<ItemBindings> {
        let ents = self.entities();
        let in_schema = st.plan.schema().clone();
        let mut new_scope = Scope::default();
        let mut item_vars = Vec::new();
        // (expression producing the column, column name) per output column, per item.
        let mut key_exprs: Vec<Expr> = Vec::new();
        let mut agg_items: Vec<(usize, String)> = Vec::new();
        let mut lookups = Vec::new();
        for (i, it) in items.iter().enumerate() {
            let var = if is_return {
                format!("__ret{i}")
            } else {
                with_names[i].clone()
            };
            item_vars.push((
                if is_return {
                    it.display.clone()
                } else {
                    it.name.clone()
                },
                var.clone(),
            ));
            let entity = match &it.expr.kind {
                ExprKind::Variable(v) => match st.scope.get(v) {
                    Some(
                        b @ (Binding::Node { .. }
                        | Binding::Rel { .. }
                        | Binding::Nodes { .. }
                        | Binding::Rels { .. }),
                    ) => Some(b.clone()),
                    // Returned: the relationships as values.
                    Some(Binding::RelList { .. }) if is_return => None,
                    Some(b @ Binding::RelList { .. }) => Some(b.clone()),
                    Some(_) => None,
                    None => {
                        return sem_err!(
                            UndefinedVariable,
                            it.expr.span,
                            "Variable `{v}` not defined"
                        )
                    }
                },
                _ => None,
            };
            if let Some(b) = entity {
                let nb = b.with_prefix(&var);
                let lookup = if grouping {
                    self.group_lookup(&nb, &it.name, &it.expr)?
                } else {
                    None
                };
                let taken = |c: &str| {
                    lookup
                        .as_ref()
                        .is_some_and(|l| l.lookup.produced().contains(c))
                };
                for ((old, _), (new, _)) in ents.columns(&b).into_iter().zip(ents.columns(&nb)) {
                    if !taken(&new) {
                        key_exprs.push(col(&old).alias(new));
                    }
                }
                lookups.extend(lookup);
                new_scope.bind(&var_name(is_return, &it.name, &var), nb);
            } else if grouping && it.expr.contains_aggregate() {
                agg_items.push((i, var.clone()));
                new_scope.bind(
                    &var_name(is_return, &it.name, &var),
                    Binding::Value { col: var.clone() },
                );
            } else {
                let cx = ExprCtx {
                    no_aggregates: "here",
                    ..ExprCtx::new(&st.scope, &in_schema)
                };
                key_exprs.push(self.expr(&it.expr, &cx)?.alias(&var));
                new_scope.bind(
                    &var_name(is_return, &it.name, &var),
                    Binding::Value { col: var.clone() },
                );
            }
        }
        Ok(ItemBindings {
            new_scope,
            item_vars,
            key_exprs,
            agg_items,
            lookups,
        })
    }

    /// A node grouping item (`nb`, under its new prefix) grouped by its key alone.
    fn group_lookup(
        &self,
        nb: &Binding,
        name: &str,
        expr: &ast::Expr,
    ) -> Result<Option<GroupLookup>> {
        let ExprKind::Variable(var) = &expr.kind else {
            return Ok(None);
        };
        let Some((key_prop, lookup)) = self.node_lookup(nb)? else {
            return Ok(None);
        };
        Ok(Some(GroupLookup {
            names: [name.to_string(), var.clone()],
            key: key_prop,
            lookup,
        }))
    }

    /// The aggregate: grouping keys, then the items built from aggregates (and keys) over it.
    fn project_aggregates(
        &self,
        st: &State,
        agg: &Aggregation<'_>,
        key_exprs: Vec<Expr>,
        lookups: Vec<GroupLookup>,
        overrides: &mut Vec<(ast::Expr, String)>,
        key_overrides: &mut Vec<(ast::Expr, String)>,
    ) -> Result<LogicalPlan> {
        let Aggregation {
            items,
            item_vars,
            agg_items,
            new_scope,
            is_return,
        } = *agg;
        let in_schema = st.plan.schema().clone();
        let mut plan = st.plan.clone();
        // Aggregate calls, deduplicated by syntax.
        let mut calls: Vec<ast::Expr> = Vec::new();
        for (i, _) in agg_items {
            collect_aggregates(&items[*i].expr, &mut calls)?;
        }
        let mut aggs = Vec::new();
        let mut agg_overrides = Vec::new();
        for (k, call) in calls.iter().enumerate() {
            let name = format!("__agg{k}");
            aggs.push(self.aggregate(call, &st.scope, &in_schema)?.alias(&name));
            agg_overrides.push((call.clone(), name));
        }
        // A key of mixed kind groups by value (`1` and `1.0` are one group, as DISTINCT
        // and grouping compare them), and shows its group's least encoding (an integer
        // before an equal float: the same whatever order the rows come in).
        let mut keys = Vec::with_capacity(key_exprs.len());
        for (i, k) in key_exprs.into_iter().enumerate() {
            let mixed = crate::functions::any::is_any(&self.type_of(&k, &in_schema)?);
            let (Expr::Alias(a), true) = (&k, mixed) else {
                keys.push(k);
                continue;
            };
            let value = a.expr.as_ref().clone();
            let by_value = crate::functions::CypherFn::GroupKey.call(vec![value.clone()]);
            keys.push(by_value.alias(format!("__aggkey{i}")));
            aggs.push(af::min(value).alias(a.name.clone()));
        }
        let b = LogicalPlanBuilder::from(plan);
        plan = b.aggregate(keys, aggs)?.build()?;
        plan = Self::with_lookups(plan, lookups.into_iter().map(|l| l.lookup))?;
        // Items built from aggregates (and keys).
        let post_schema = plan.schema().clone();
        *key_overrides = agg_overrides.clone();
        // Only variables and property lookups may be reused next to an aggregate; any
        // other key expression there is ambiguous (openCypher's AmbiguousAggregationExpression).
        for (it, (_, var)) in items.iter().zip(item_vars) {
            let simple = match &it.expr.kind {
                ExprKind::Variable(_) => true,
                ExprKind::Property(t, _) => matches!(t.kind, ExprKind::Variable(_)),
                _ => false,
            };
            // A node or relationship key has columns under its prefix, not one of its own:
            // its variable is read through the scope.
            let column = post_schema.has_column_with_unqualified_name(var);
            if !it.expr.contains_aggregate() && simple && column {
                key_overrides.push((it.expr.clone(), var.clone()));
            }
        }
        // Keys are reachable under their original variable names too.
        let mut post_scope = new_scope.clone();
        for (it, (_, var)) in items.iter().zip(item_vars) {
            if let ExprKind::Variable(v) = &it.expr.kind {
                if let Some(b) = new_scope.get(&var_name(is_return, &it.name, var)) {
                    post_scope.bind(v, b.clone());
                }
            }
        }
        let mut exprs: Vec<Expr> = post_schema
            .fields()
            .iter()
            .filter(|f| !f.name().starts_with("__agg"))
            .map(|f| col(f.name()))
            .collect();
        for (i, var) in agg_items {
            let cx = ExprCtx {
                scope: &post_scope,
                schema: &post_schema,
                overrides: key_overrides,
                no_aggregates: "inside another aggregate",
                missing_props_null: false,
            };
            let e = self
                .expr(&items[*i].expr, &cx)
                .map_err(|e| ambiguous_aggregation(e, "next to an aggregate"))?;
            exprs.push(e.alias(var));
        }
        for (i, var) in agg_items {
            key_overrides.push((items[*i].expr.clone(), var.clone()));
        }
        plan = LogicalPlanBuilder::from(plan).project(exprs)?.build()?;
        overrides.extend(agg_overrides);
        // Aggregates in ORDER BY resolve to their item column, not new aggregates.
        for (i, var) in agg_items {
            overrides.push((items[*i].expr.clone(), var.clone()));
        }
        overrides.retain(|(_, c)| plan.schema().has_column_with_unqualified_name(c));
        key_overrides.retain(|(_, c)| plan.schema().has_column_with_unqualified_name(c));
        Ok(plan)
    }

    /// The projection without aggregates; the input's columns stay until after ORDER BY
    /// when `keep_input`.
    fn project_items(
        &self,
        st: &State,
        key_exprs: Vec<Expr>,
        keep_input: bool,
        distinct: bool,
    ) -> Result<LogicalPlan> {
        let mut exprs = key_exprs;
        if keep_input {
            // Old columns stay available for ORDER BY until the final projection.
            let produced: HashSet<String> =
                exprs.iter().map(|e| e.schema_name().to_string()).collect();
            for f in st.plan.schema().fields() {
                if !produced.contains(f.name()) && !st.unit {
                    exprs.push(col(f.name()));
                }
            }
        }
        if exprs.is_empty() {
            // Nothing to project (e.g. `WITH *` over no columns).
            exprs.push(lit(true).alias("__unit"));
        }
        let mut plan = LogicalPlanBuilder::from(st.plan.clone())
            .project(exprs)?
            .build()?;
        if distinct {
            plan = LogicalPlanBuilder::from(plan).distinct()?.build()?;
        }
        Ok(plan)
    }

    /// ORDER BY against the new variables (plus the old ones when still available).
    fn order_by(
        &self,
        plan: LogicalPlan,
        p: &ast::Projection,
        o: &OrderBy<'_>,
    ) -> Result<(LogicalPlan, Vec<SortExpr>)> {
        let schema = plan.schema().clone();
        let cx = ExprCtx {
            scope: o.scope,
            schema: &schema,
            overrides: o.overrides,
            no_aggregates: "in ORDER BY unless it is also projected",
            missing_props_null: false,
        };
        // An ORDER BY expression around an aggregate may only reuse what a projected one
        // may (openCypher: `ORDER BY a.x + b.x + count(*)` next to `a.x + b.x AS k` is
        // ambiguous), unless it is a projected item itself.
        let agg_cx = ExprCtx {
            scope: cx.scope,
            schema: cx.schema,
            overrides: o.key_overrides,
            no_aggregates: cx.no_aggregates,
            missing_props_null: false,
        };
        let mut sorts = Vec::new();
        for s in &p.order_by {
            let around_aggregate = o.aggregating
                && s.expr.contains_aggregate()
                && !o.items.iter().any(|it| it.expr == s.expr);
            let e = if around_aggregate {
                self.expr(&s.expr, &agg_cx)
                    .map_err(|e| ambiguous_aggregation(e, "around an aggregate in ORDER BY"))?
            } else {
                self.expr(&s.expr, &cx)?
            };
            let t = self.type_of(&e, &schema)?;
            let e = super::expr::canonical_nan(e, &t);
            // Cypher: ascending puts nulls last, descending first.
            sorts.push(SortExpr::new(e, !s.descending, s.descending));
        }
        let sorted = LogicalPlanBuilder::from(plan)
            .sort(sorts.clone())?
            .build()?;
        Ok((sorted, sorts))
    }

    /// SKIP and LIMIT.
    pub(super) fn skip_limit(
        &self,
        mut plan: LogicalPlan,
        p: &ast::Projection,
    ) -> Result<LogicalPlan> {
        let (skip, limit, fail) = self.skip_limit_counts(p)?;
        if let Some(fail) = fail {
            plan = LogicalPlanBuilder::from(plan).filter(fail)?.build()?;
        }
        if skip > 0 || limit.is_some() {
            plan = LogicalPlanBuilder::from(plan).limit(skip, limit)?.build()?;
        }
        Ok(plan)
    }

    /// A projection's SKIP and LIMIT counts; where one is a parameter of a wrong value, none,
    /// and a filter failing with the ArgumentError as rows reach it.
    pub(super) fn skip_limit_counts(
        &self,
        p: &ast::Projection,
    ) -> Result<(usize, Option<usize>, Option<Expr>)> {
        let mut invalid = None;
        let mut count = |e: &ast::Expr, what: &str| -> Result<usize> {
            Ok(match self.constant_count(e, what)? {
                Ok(n) => n,
                Err(why) => {
                    invalid.get_or_insert(why);
                    0
                }
            })
        };
        let skip = match &p.skip {
            Some(e) => count(e, "SKIP")?,
            None => 0,
        };
        let limit = match &p.limit {
            Some(e) => Some(count(e, "LIMIT")?),
            None => None,
        };
        Ok(match invalid {
            Some((detail, message)) => {
                let fail = crate::functions::CypherFn::fail(
                    crate::error::ErrorClass::ArgumentError,
                    detail,
                    &message,
                    &DataType::Boolean,
                )?;
                (0, None, Some(fail))
            }
            None => (skip, limit, None),
        })
    }

    /// SKIP / LIMIT operand: a non-negative integer literal or parameter.
    /// `Ok(Err((detail, message)))` for a constant of the wrong sign or type: an error of
    /// the values, raised at run time.
    pub(super) fn constant_count(
        &self,
        e: &ast::Expr,
        what: &str,
    ) -> Result<std::result::Result<usize, (&'static str, String)>> {
        let resolved = match &e.kind {
            ExprKind::Param(p) => match self.param_literal(p) {
                Some(v) => v.clone(),
                None => return sem_err!(MissingParameter, e.span, "Missing parameter ${p}"),
            },
            ExprKind::Literal(_) => e.clone(),
            // An expression of no variable (`toInteger(ceil(1.7))`, `$n + 1`): its value.
            _ => self.constant_value(e)?.unwrap_or_else(|| e.clone()),
        };
        // A literal is checked with the query; a parameter's value at run time (openCypher).
        let is_param = matches!(e.kind, ExprKind::Param(_));
        match resolved.kind {
            ExprKind::Literal(Literal::Integer(i)) if i >= 0 => Ok(Ok(i as usize)),
            ExprKind::Literal(Literal::Integer(i)) if is_param => Ok(Err((
                "NegativeIntegerArgument",
                format!("{what} must be a non-negative integer, got {i}"),
            ))),
            ExprKind::Literal(Literal::Float(x)) if is_param => Ok(Err((
                "InvalidArgumentType",
                format!("{what} must be an integer, got {x}"),
            ))),
            ExprKind::Literal(Literal::Integer(_)) => sem_err!(
                NegativeIntegerArgument,
                e.span,
                "{what} must be a non-negative integer"
            ),
            ExprKind::Literal(Literal::Float(_)) => {
                sem_err!(InvalidArgumentType, e.span, "{what} must be an integer")
            }
            _ => sem_err!(
                NonConstantExpression,
                e.span,
                "{what} must be a constant non-negative integer"
            ),
        }
    }

    /// The value of `e`, an expression that reads no variable and aggregates nothing, as a
    /// literal (evaluated once, while planning: `rand()` draws one number); `None` where `e`
    /// reads a variable or its value is not a number.
    fn constant_value(&self, e: &ast::Expr) -> Result<Option<ast::Expr>> {
        use datafusion::common::tree_node::{Transformed, TreeNode};
        use datafusion::common::ScalarValue;
        let mut reads = false;
        e.walk(&mut |x| {
            reads |= matches!(x.kind, ExprKind::Variable(_)) || x.is_aggregate();
            !reads
        });
        if reads {
            return Ok(None);
        }
        let (scope, schema) = (Scope::default(), DFSchema::empty());
        let cx = ExprCtx::new(&scope, &schema);
        // Parameters by their values (the plan is then made for these values).
        let x = self.expr(e, &cx)?.transform(|x| match &x {
            Expr::Placeholder(p) => {
                let name = p.id.trim_start_matches('$');
                match self.param_literal(name).cloned() {
                    Some(v) => Ok(Transformed::yes(self.expr(&v, &cx)?)),
                    None => Ok(Transformed::no(x)),
                }
            }
            _ => Ok(Transformed::no(x)),
        })?;
        let props = crate::functions::held::props();
        let physical = datafusion::physical_expr::create_physical_expr(&x.data, &schema, &props)?;
        let one_row = arrow::array::RecordBatch::try_new_with_options(
            std::sync::Arc::new(arrow::datatypes::Schema::empty()),
            vec![],
            &arrow::array::RecordBatchOptions::new().with_row_count(Some(1)),
        )?;
        let value = physical.evaluate(&one_row)?.to_array(1)?;
        let literal = match ScalarValue::try_from_array(&value, 0)? {
            ScalarValue::Int64(Some(i)) => Literal::Integer(i),
            ScalarValue::Float64(Some(f)) => Literal::Float(f),
            _ => return Ok(None),
        };
        Ok(Some(ast::Expr::new(ExprKind::Literal(literal), e.span)))
    }

    /// One aggregate call (`count(*)`, `sum(x)`, `collect(DISTINCT x)`, ...).
    pub(super) fn aggregate(
        &self,
        call: &ast::Expr,
        scope: &Scope,
        schema: &datafusion::common::DFSchema,
    ) -> Result<Expr> {
        let cx = ExprCtx {
            no_aggregates: "inside another aggregate",
            ..ExprCtx::new(scope, schema)
        };
        let (name, distinct, args) = match &call.kind {
            ExprKind::CountStar => return Ok(af::count(lit(1i64))),
            ExprKind::Function {
                name,
                distinct,
                args,
            } => (name.to_lowercase(), *distinct, args),
            _ => return Err(Error::Internal(format!("not an aggregate call: {call}"))),
        };
        let arity = if name.starts_with("percentile") { 2 } else { 1 };
        if args.len() != arity {
            return sem_err!(
                InvalidArgumentValue,
                call.span,
                "{name}() takes {arity} argument{}, got {}",
                if arity == 1 { "" } else { "s" },
                args.len()
            );
        }
        if name == "count" {
            if let Some(e) = self.count_entity(&args[0], distinct, scope)? {
                return Ok(e);
            }
        }
        let (x, t) = self.aggregate_argument(call, (&name, &args[0]), &cx)?;
        let dynamic =
            crate::functions::any::is_any(&t) || crate::functions::temporal::is_temporal_type(&t);
        if dynamic && matches!(name.as_str(), "sum" | "avg" | "stdev" | "stdevp") {
            // Integers from `reduce`, a temporal value's components, durations: the kind is
            // the values', so the group's values are collected and summed as values.
            let values = af::array_agg(x.clone()).filter(x.is_not_null()).build()?;
            let values = if distinct {
                datafusion::functions_nested::expr_fn::array_distinct(values)
            } else {
                values
            };
            return Ok(
                crate::functions::CypherFn::Dynamic.call(vec![lit(format!("agg.{name}")), values])
            );
        }
        if dynamic && !matches!(name.as_str(), "count" | "collect" | "min" | "max") {
            return super::expr::mixed_kind(args[0].span, &format!("{name}()"));
        }
        let numeric = |what: &str| -> Result<()> {
            if t.is_numeric() || t == DataType::Null {
                Ok(())
            } else {
                sem_err!(
                    InvalidArgumentType,
                    args[0].span,
                    "{what}() expects numbers, got {t}"
                )
            }
        };
        let maybe_distinct = |e: Expr| -> Result<Expr> {
            if distinct {
                Ok(e.distinct().build()?)
            } else {
                Ok(e)
            }
        };
        let out = match name.as_str() {
            // Values of mixed kind are distinct by value (`1` and `1.0` are one).
            "count" if distinct && crate::functions::any::is_any(&t) => {
                let by_value = crate::functions::CypherFn::GroupKey.call(vec![x]);
                af::count(by_value).distinct().build()?
            }
            "count" => maybe_distinct(af::count(x))?,
            "sum" => {
                numeric("sum")?;
                return sum(x, &t, distinct);
            }
            "avg" => {
                numeric("avg")?;
                if t.is_integer() {
                    return avg_of_integers(x, distinct);
                }
                maybe_distinct(af::avg(x))?
            }
            // NaN is above every number (min of [NaN, 1.0] is 1.0), whatever its sign bit.
            "min" => maybe_distinct(af::min(super::expr::canonical_nan(x, &t)))?,
            "max" => maybe_distinct(af::max(super::expr::canonical_nan(x, &t)))?,
            "collect" => self.collect(x, &t, distinct, schema)?,
            // Fewer than two values (one for the population's) deviate by 0.0.
            "stdev" | "stdevp" => {
                numeric(&name)?;
                let x = datafusion::logical_expr::cast(x, DataType::Float64);
                let dev = match name.as_str() {
                    "stdev" => maybe_distinct(af::stddev(x))?,
                    _ => maybe_distinct(af::stddev_pop(x))?,
                };
                datafusion::functions::expr_fn::coalesce(vec![dev, lit(0.0f64)])
            }
            "percentiledisc" | "percentilecont" => {
                numeric(&name)?;
                let values =
                    maybe_distinct(af::array_agg(x.clone()).filter(x.is_not_null()).build()?)?;
                self.percentile(&name, values, &args[1], &cx)?
            }
            _ => return Err(Error::Internal(format!("not an aggregate: {name}"))),
        };
        Ok(out)
    }

    /// The argument of aggregate `call` (`name`): the identities of the entities a
    /// `collect` of identities only takes, and a type for an argument of nulls only.
    fn aggregate_argument(
        &self,
        call: &ast::Expr,
        (name, arg): (&str, &ast::Expr),
        cx: &ExprCtx<'_>,
    ) -> Result<(Expr, DataType)> {
        let identity_only = match &arg.kind {
            ExprKind::Variable(v) if name == "collect" && self.identity_collects.contains(call) => {
                cx.scope.get(v).filter(|b| b.is_entity())
            }
            _ => None,
        };
        let mut x = match identity_only {
            Some(b) => self.entity_identity(b)?,
            None => self.expr(arg, cx)?,
        };
        let mut t = self.type_of(&x, cx.schema)?;
        if t == DataType::Null && matches!(name, "sum" | "avg" | "min" | "max") {
            // Only nulls (e.g. a property no node has): give the accumulator a type (still an
            // aggregate, so that it yields its one row over no rows: `sum` 0, the others null).
            let typed = if name == "sum" {
                DataType::Int64
            } else {
                DataType::Float64
            };
            x = datafusion::logical_expr::cast(x, typed.clone());
            t = typed;
        }
        Ok((x, t))
    }

    /// `percentileDisc` / `percentileCont` (`name`) of `values` (their non-null values as a
    /// list) at percentile `p`.
    fn percentile(
        &self,
        name: &str,
        values: Expr,
        p: &ast::Expr,
        cx: &ExprCtx<'_>,
    ) -> Result<Expr> {
        let pe = self.expr(p, cx)?;
        let pt = self.type_of(&pe, cx.schema)?;
        if !(pt.is_numeric() || pt == DataType::Null) {
            return sem_err!(
                InvalidArgumentType,
                p.span,
                "{name}() expects a number as its percentile, got {pt}"
            );
        }
        let pe = datafusion::logical_expr::cast(pe, DataType::Float64);
        let f = if name == "percentiledisc" {
            crate::functions::CypherFn::PercentileDisc
        } else {
            crate::functions::CypherFn::PercentileCont
        };
        Ok(f.call(vec![values, af::min(pe.clone()), af::max(pe)]))
    }

    /// `collect(x)` (of type `t`): its non-null values in the order a WITH ... ORDER BY gave
    /// the rows; DISTINCT then keeps each value's first occurrence (DataFusion orders a
    /// distinct aggregate only by its argument, so duplicates are dropped from the ordered
    /// list instead, as they are from a list of structs or lists). No (non-null) values
    /// collect to [], not null.
    fn collect(
        &self,
        x: Expr,
        t: &DataType,
        distinct: bool,
        schema: &datafusion::common::DFSchema,
    ) -> Result<Expr> {
        let mut agg = af::array_agg(x.clone()).filter(x.is_not_null());
        let order = self
            .input_order
            .as_ref()
            .filter(|s| schema.has_column_with_unqualified_name(s));
        if let Some(seq) = order {
            agg = agg.order_by(vec![col(seq).sort(true, false)]);
        }
        // DataFusion's DISTINCT aggregate keeps a set of scalar values, slow for a struct
        // or list (a node: ~30 us a row); `array_distinct` compares the collected values by
        // their row encoding.
        let nested = t.is_nested();
        let list = if distinct && crate::functions::any::is_any(t) {
            // Values of mixed kind are distinct by value (`1` and `1.0` are one).
            crate::functions::CypherFn::UniqueByValue.call(vec![agg.build()?])
        } else if distinct && (order.is_some() || nested) {
            datafusion::functions_nested::expr_fn::array_distinct(agg.build()?)
        } else if distinct {
            agg.distinct().build()?
        } else {
            agg.build()?
        };
        Ok(when(list.clone().is_null(), empty_list(t)).otherwise(list)?)
    }

    /// `count(n)` of a node, relationship or relationship list: its identity column (edge-id
    /// list) decides nulls and distinctness, and is much cheaper to hash than the whole
    /// entity. `None` for any other argument.
    fn count_entity(&self, arg: &ast::Expr, distinct: bool, scope: &Scope) -> Result<Option<Expr>> {
        if let ExprKind::Variable(v) = &arg.kind {
            // The relationships of a variable-length pattern: their edge-id list.
            if let Some(Binding::RelList { prefix, .. }) = scope.get(v) {
                let ids = col(&super::scope::eids_col(prefix));
                return Ok(Some(if distinct {
                    af::count(ids).distinct().build()?
                } else {
                    af::count(ids)
                }));
            }
            if let Some(b) = scope.get(v).filter(|b| b.is_entity()) {
                let id = col(&self.entities().identity_col(b));
                if distinct && matches!(b, Binding::Nodes { .. } | Binding::Rels { .. }) {
                    // Keys / edge ids repeat across labels / tables: count the pairs
                    // (rows without the entity, from OPTIONAL MATCH, filtered out).
                    let [a, b] = self.entities().identity_parts(b).expect("entity");
                    let pair = f::named_struct(vec![lit("label"), a, lit("key"), b]);
                    return Ok(Some(
                        af::count(pair)
                            .distinct()
                            .filter(id.is_not_null())
                            .build()?,
                    ));
                }
                return Ok(Some(if distinct {
                    af::count(id).distinct().build()?
                } else {
                    af::count(id)
                }));
            }
        }
        Ok(None)
    }
}

/// `sum(x)`: 0 over no values, not null; integers summed as 128-bit decimals and cast back,
/// so that an overflow of the 64-bit result is an error, not a wrapped value.
fn sum(x: Expr, t: &DataType, distinct: bool) -> Result<Expr> {
    let maybe_distinct =
        |e: Expr| -> Result<Expr> { Ok(if distinct { e.distinct().build()? } else { e }) };
    let (sum, zero) = if t.is_integer() {
        let wide = datafusion::logical_expr::cast(x, DataType::Decimal128(38, 0));
        let s = maybe_distinct(af::sum(wide))?;
        (crate::functions::CypherFn::ToInt64.call(vec![s]), lit(0i64))
    } else {
        (maybe_distinct(af::sum(x))?, lit(0.0f64))
    };
    Ok(f::coalesce(vec![sum, zero]))
}

/// `avg(x)` of integers: their exact sum (as for `sum`) over their number, rounded once, so
/// the result does not depend on the order the rows come in (a running float sum would);
/// null over no values.
fn avg_of_integers(x: Expr, distinct: bool) -> Result<Expr> {
    let maybe_distinct =
        |e: Expr| -> Result<Expr> { Ok(if distinct { e.distinct().build()? } else { e }) };
    let wide = datafusion::logical_expr::cast(x.clone(), DataType::Decimal128(38, 0));
    let total = maybe_distinct(af::sum(wide))?;
    let n = maybe_distinct(af::count(x))?;
    let avg = datafusion::logical_expr::cast(total, DataType::Float64)
        / datafusion::logical_expr::cast(n.clone(), DataType::Float64);
    Ok(when(
        n.eq(lit(0i64)),
        lit(datafusion::common::ScalarValue::Float64(None)),
    )
    .otherwise(avg)?)
}

/// A grouped node's lookups: those an aggregate item or ORDER BY reads (taken before them),
/// then the others (taken after SKIP / LIMIT, for the rows kept).
fn split_lookups(
    lookups: Vec<GroupLookup>,
    items: &[Item],
    agg_items: &[(usize, String)],
    p: &ast::Projection,
) -> (Vec<GroupLookup>, Vec<GroupLookup>) {
    let read: Vec<&ast::Expr> = agg_items
        .iter()
        .map(|(i, _)| &items[*i].expr)
        .chain(p.order_by.iter().map(|s| &s.expr))
        .collect();
    lookups
        .into_iter()
        .partition(|l| read.iter().any(|e| mentions(e, l)))
}

/// Whether `e` reads the grouped node of `l` other than its key.
fn mentions(e: &ast::Expr, l: &GroupLookup) -> bool {
    let mut found = false;
    e.walk(&mut |x| {
        match &x.kind {
            ExprKind::Property(t, p) if p.name == l.key => {
                if matches!(&t.kind, ExprKind::Variable(v) if l.names.contains(v)) {
                    return false;
                }
            }
            ExprKind::Variable(v) => found |= l.names.contains(v),
            _ => {}
        }
        !found
    });
    found
}

/// A variable that is not a grouping key, read by an expression with aggregates (`place`):
/// openCypher's AmbiguousAggregationExpression.
fn ambiguous_aggregation(e: crate::error::Error, place: &str) -> crate::error::Error {
    use crate::error::{Error, SemanticKind};
    match e {
        Error::Semantic {
            kind: SemanticKind::UndefinedVariable,
            message,
            span,
        } => Error::semantic(
            SemanticKind::AmbiguousAggregationExpression,
            format!("{message}: an expression {place} may only use grouping keys"),
            span,
        ),
        other => other,
    }
}

/// Whether the columns of variable `name` (a value column, or an entity's `name__...`)
/// are already in `schema`.
fn name_taken(schema: &datafusion::common::DFSchema, name: &str) -> bool {
    let prefix = format!("{name}__");
    schema
        .fields()
        .iter()
        .any(|f| f.name() == name || f.name().starts_with(&prefix))
}

fn var_name(is_return: bool, name: &str, var: &str) -> String {
    if is_return {
        var.to_string()
    } else {
        name.to_string()
    }
}

/// Aggregate calls in `e` (not descending into them); errors on nested aggregates.
#[recursive::recursive]
fn collect_aggregates(e: &ast::Expr, out: &mut Vec<ast::Expr>) -> Result<()> {
    for call in e.aggregate_calls() {
        if let Some(c) = call.children().into_iter().find(|c| c.contains_aggregate()) {
            return sem_err!(
                NestedAggregation,
                c.span,
                "Can't use aggregate functions inside of aggregate functions"
            );
        }
        if !out.contains(call) {
            out.push(call.clone());
        }
    }
    Ok(())
}

/// In RETURN the scope is keyed by the internal variable; ORDER BY may use the alias too:
/// each item's alias with its variable's binding.
fn alias_bindings(
    items: &[Item],
    item_vars: &[(String, String)],
    scope: &Scope,
) -> Vec<(String, Binding)> {
    items
        .iter()
        .zip(item_vars)
        .filter_map(|(it, (_, var))| scope.get(var).map(|b| (it.name.clone(), b.clone())))
        .collect()
}
