//! Binding a whole query, clause by clause: what each variable is (a node with the labels it
//! can have, a relationship, a relationship list, a value), every name an expression uses
//! resolved against the variables in scope where it stands, every function name and arity
//! checked, and every parameter a typed slot. The errors it finds are the query's
//! name-resolution errors, with their spans, before any planning; the planner lowers the
//! parameters from the slots of [`BoundQuery`].
//!
//! Each MATCH (of a clause, a subquery or a pattern expression) is recorded with what was
//! bound before it ([`BoundMatch`]), which the rewrites prepare it with: after a MATCH, its
//! variables have the labels its rows can have (`matched.rs`: one where it resolves, its
//! branches' where it branches). Type errors need the plan's column types and where an
//! aggregate may stand depends on the projection being built: those come from the planner.

use super::call::BoundCall;
use super::{Binder, BoundVar};
use crate::catalog::Catalog;
use crate::error::Result;
use crate::functions::registry;
use crate::functions::value::Value;
use crate::sem_err;
use arrow::datatypes::DataType;
use cypher::ast::{self, Clause, ExprKind};
use cypher::Span;
use std::collections::BTreeMap;

/// A parameter the query reads, with the type of the value given for it.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct ParamSlot {
    pub data_type: DataType,
    /// The value as the literal that writes it (what the planner lowers); for a
    /// [`Self::compact`] list, the parameter itself.
    pub literal: ast::Expr,
    /// A long list, held as one Arrow list (of one kind where its elements are, else of
    /// mixed-kind cells): written as a literal it would take a syntax tree node, then an
    /// expression, per element (kilobytes each, and seconds to plan for 100,000).
    pub compact: Option<datafusion::common::ScalarValue>,
}

/// Lists of at least this many elements are held [compact](ParamSlot::compact).
pub const COMPACT_ITEMS: usize = 1024;

use crate::functions::held::HELD_STRING_BYTES;

/// Whether `v` is a list (or a string, or a map holding many values) long enough to be held
/// [compact](compact_list) (or held so).
pub(crate) fn is_long_list(v: &Value) -> bool {
    match v {
        Value::Map(_) | Value::List(_) => holds_at_least(v, COMPACT_ITEMS),
        Value::Str(s) => s.len() >= HELD_STRING_BYTES,
        Value::Other(datafusion::common::ScalarValue::List(_)) => true,
        _ => false,
    }
}

/// Whether `v` holds at least `n` values (its elements and entries, nested ones counted).
fn holds_at_least(v: &Value, n: usize) -> bool {
    fn count(v: &Value, left: &mut usize) {
        let mut one = |x: &Value| {
            *left = left.saturating_sub(1);
            if *left > 0 {
                count(x, left);
            }
        };
        match v {
            Value::List(items) => items.iter().for_each(&mut one),
            Value::Map(entries) => entries.iter().for_each(|(_, x)| one(x)),
            Value::Other(datafusion::common::ScalarValue::List(l)) => {
                *left = left.saturating_sub(l.value_length(0).max(0) as usize);
            }
            _ => {}
        }
    }
    let mut left = n;
    count(v, &mut left);
    left == 0
}

/// `v` as the one Arrow list a parameter is held as, when it is a long list or was received
/// as such a list already (a decoder that never built its elements as values); of the type
/// the parameter has written as a literal.
pub(crate) fn compact_list(v: &Value) -> Option<datafusion::common::ScalarValue> {
    match v {
        Value::List(items) if holds_at_least(v, COMPACT_ITEMS) => {
            crate::functions::any::typed_list(items).or_else(|| v.to_scalar().ok())
        }
        Value::Other(s @ datafusion::common::ScalarValue::List(_)) => Some(s.clone()),
        // A map holding a long list (or many values): one structure.
        Value::Map(_) if holds_at_least(v, COMPACT_ITEMS) => v.to_scalar().ok(),
        // A literal would be copied into the syntax tree, the plans and every name DataFusion
        // prints an expression into (a 15 MB string, seven times).
        Value::Str(s) if s.len() >= HELD_STRING_BYTES => {
            Some(datafusion::common::ScalarValue::Utf8(Some(s.clone())))
        }
        _ => None,
    }
}

impl ParamSlot {
    /// A number, string or boolean (not null, a list or a map): a value a cached plan can
    /// take as a placeholder of this slot's type.
    pub fn is_scalar(&self) -> bool {
        use ast::{ExprKind, Literal};
        let lit = match &self.literal.kind {
            ExprKind::Unary(ast::UnaryOp::Neg, x) => &x.kind,
            k => k,
        };
        matches!(
            lit,
            ExprKind::Literal(
                Literal::Integer(_) | Literal::Float(_) | Literal::String(_) | Literal::Bool(_)
            )
        )
    }
}

/// A query, bound: every name it uses resolved, and its parameters as typed slots.
#[derive(Debug, Clone)]
pub(crate) struct BoundQuery {
    /// The query with its user names escaped (`names::escape_query`).
    pub query: ast::Query,
    pub params: BTreeMap<String, ParamSlot>,
    /// Every CALL, bound (the planner finds each by its span).
    pub calls: Vec<BoundCall>,
    /// Every MATCH written in the query (clauses, subqueries, pattern expressions), in the
    /// order bound, with what was bound before it.
    pub matches: Vec<BoundMatch>,
}

/// A MATCH and what it sees where it stands.
#[derive(Debug, Clone)]
pub(crate) struct BoundMatch {
    pub clause: ast::Match,
    /// The variables in scope before it, in the order bound.
    pub scope: Vec<(String, BoundVar)>,
    /// The node variable the clause after its own (in the query, not a subquery) counts
    /// per: a root for re-rooting (counts grouped by the root are computed per root row).
    pub grouped_by: Option<String>,
}

/// Binds a parsed query against `catalog` with `params`: its names escaped, then every
/// name resolved. Messages name variables as the user wrote them.
pub(crate) fn bind(
    catalog: &Catalog,
    lenient: bool,
    q: &ast::Query,
    params: &BTreeMap<String, Value>,
) -> Result<BoundQuery> {
    let mut q = q.clone();
    super::names::escape_query(&mut q);
    bind_escaped(catalog, lenient, q, params)
}

/// As [`bind`], for a query whose names are escaped already (one a rewrite made of a bound
/// query's).
pub(crate) fn bind_escaped(
    catalog: &Catalog,
    lenient: bool,
    q: ast::Query,
    params: &BTreeMap<String, Value>,
) -> Result<BoundQuery> {
    let b = bind_query(catalog, lenient, &q, params).map_err(super::names::unescape_error)?;
    Ok(BoundQuery {
        query: q,
        params: b.out,
        calls: b.calls,
        matches: b.matches,
    })
}

/// Variables in scope, in the order they were bound.
#[derive(Debug, Clone, Default)]
struct Scope(Vec<(String, BoundVar)>);

impl Scope {
    fn get(&self, name: &str) -> Option<&BoundVar> {
        self.0.iter().find(|(n, _)| n == name).map(|(_, v)| v)
    }

    fn bind(&mut self, name: &str, v: BoundVar) {
        match self.0.iter_mut().find(|(n, _)| n == name) {
            Some(slot) => slot.1 = v,
            None => self.0.push((name.to_string(), v)),
        }
    }

    /// `self` and then `other` (which wins on a name both have).
    fn with(&self, other: &Scope) -> Scope {
        let mut s = self.clone();
        for (n, v) in &other.0 {
            s.bind(n, v.clone());
        }
        s
    }
}

/// Binds `q` (its variable names already escaped) against `catalog` with `params`: the
/// parameters' slots and the bound CALLs.
fn bind_query<'a>(
    catalog: &'a Catalog,
    lenient: bool,
    q: &ast::Query,
    params: &'a BTreeMap<String, Value>,
) -> Result<QueryBinder<'a>> {
    let mut b = QueryBinder {
        catalog,
        lenient,
        params,
        out: BTreeMap::new(),
        calls: Vec::new(),
        matches: Vec::new(),
        grouped_by: None,
        ends: 0,
    };
    for sq in std::iter::once(&q.first).chain(q.unions.iter().map(|(_, sq)| sq)) {
        b.single(sq)?;
    }
    Ok(b)
}

struct QueryBinder<'a> {
    catalog: &'a Catalog,
    lenient: bool,
    params: &'a BTreeMap<String, Value>,
    /// The parameters' slots so far.
    out: BTreeMap<String, ParamSlot>,
    calls: Vec<BoundCall>,
    matches: Vec<BoundMatch>,
    /// What the query's clause after the one being bound counts per.
    grouped_by: Option<String>,
    /// The `startNode` / `endNode` calls so far.
    ends: usize,
}

/// `var` newly declared where `scope` is seen (and, in a subquery, `outer`): refused where
/// the name is taken, as Neo4j does (a subquery may not shadow the enclosing query's names).
fn declares(scope: &Scope, outer: Option<&Scope>, var: &ast::Ident) -> Result<()> {
    if outer.is_some_and(|o| o.get(&var.name).is_some()) {
        return shadowing(var);
    }
    if scope.get(&var.name).is_some() {
        return sem_err!(
            VariableAlreadyBound,
            var.span,
            "Variable `{}` already declared",
            super::names::unescape(&var.name)
        );
    }
    Ok(())
}

/// A WITH or RETURN inside a subquery binding a name of the enclosing query to anything
/// but itself (`WITH x AS p` where the outer query has `p`): refused.
fn projects_no_outer_name(p: &ast::Projection, outer: Option<&Scope>) -> Result<()> {
    let Some(outer) = outer else {
        return Ok(());
    };
    for it in &p.items {
        let Some(alias) = &it.alias else {
            continue;
        };
        let passed_on = matches!(&it.expr.kind, ExprKind::Variable(v) if *v == alias.name);
        if !passed_on && outer.get(&alias.name).is_some() {
            return shadowing(alias);
        }
    }
    Ok(())
}

fn shadowing(var: &ast::Ident) -> Result<()> {
    sem_err!(
        VariableAlreadyBound,
        var.span,
        "The variable `{}` is shadowing a variable with the same name from the outer scope \
         and needs to be renamed",
        super::names::unescape(&var.name)
    )
}

impl QueryBinder<'_> {
    fn single(&mut self, sq: &ast::SingleQuery) -> Result<()> {
        self.clauses(sq, Scope::default(), true)
    }

    /// The clauses of a query (`top`), or of a subquery seeing `scope`.
    fn clauses(&mut self, sq: &ast::SingleQuery, mut scope: Scope, top: bool) -> Result<()> {
        // A subquery sees the outer query's variables to its end: a WITH inside it projects
        // its own, the outer ones stay (`COUNT { WITH 'Ozzy' AS n MATCH (p)-->(d) ... }`
        // reads the outer `p`).
        let outer = (!top).then(|| scope.clone());
        for (i, c) in sq.clauses.iter().enumerate() {
            if top {
                self.grouped_by = sq.clauses.get(i + 1).and_then(counts_grouped_by);
            }
            match c {
                Clause::Match(m) => self.match_clause(&mut scope, m)?,
                Clause::Unwind(u) => {
                    self.expr(&u.expr, &scope, &[])?;
                    declares(&scope, outer.as_ref(), &u.alias)?;
                    scope.bind(&u.alias.name, BoundVar::Value);
                }
                Clause::With(w) => {
                    projects_no_outer_name(&w.projection, outer.as_ref())?;
                    let (next, where_scope, items) =
                        self.projection(&scope, &w.projection, outer.as_ref())?;
                    if let Some(pred) = &w.where_ {
                        let resolved: Vec<&ast::Expr> = items.iter().collect();
                        self.expr(pred, &where_scope, &resolved)?;
                    }
                    scope = match &outer {
                        Some(o) => o.with(&next),
                        None => next,
                    };
                }
                Clause::Return(r) => {
                    projects_no_outer_name(r, outer.as_ref())?;
                    self.projection(&scope, r, outer.as_ref())?;
                }
                Clause::Call(c) => self.call_clause(&mut scope, c)?,
            }
        }
        Ok(())
    }

    /// A CALL: its arguments constants (no variable read), its procedure and index found,
    /// its YIELD binding new variables (the node of the index's table, the score a value).
    fn call_clause(&mut self, scope: &mut Scope, c: &ast::Call) -> Result<()> {
        for a in &c.args {
            let mut read = Vec::new();
            a.mentioned_names(&mut read);
            if let Some(v) = read.first() {
                return sem_err!(
                    Unsupported,
                    a.span,
                    "a procedure's arguments cannot read variables (`{v}`): give a literal \
                     or a parameter"
                );
            }
            self.expr(a, scope, &[])?;
        }
        let call = super::call::bind_call(self.catalog, self.params, c)?;
        for y in c.yields.iter().flatten() {
            let var = y.var();
            if scope.get(&var.name).is_some() {
                return sem_err!(
                    VariableAlreadyBound,
                    var.span,
                    "Variable `{}` already declared",
                    var.name
                );
            }
        }
        for (at, var) in &call.yields {
            let kind = match (*at, &call.target) {
                (0, super::call::Target::Node(label)) => BoundVar::node(vec![label.clone()]),
                (0, super::call::Target::Rel(i)) => BoundVar::Rel { tables: vec![*i] },
                _ => BoundVar::Value,
            };
            scope.bind(var, kind);
        }
        if let Some(w) = &c.where_ {
            self.expr(w, scope, &[])?;
        }
        self.calls.push(call);
        Ok(())
    }

    fn match_clause(&mut self, scope: &mut Scope, m: &ast::Match) -> Result<()> {
        self.matches.push(BoundMatch {
            clause: m.clone(),
            scope: scope.0.clone(),
            grouped_by: self.grouped_by.clone(),
        });
        let lookup = |v: &str| scope.get(v).cloned();
        let binder = Binder {
            catalog: self.catalog,
            lenient: self.lenient,
            bound: &lookup,
        };
        let qg = binder.bind_match(m)?;
        let mut inner = scope.clone();
        for (name, kind) in binder.matched(&qg) {
            inner.bind(&name, kind);
        }
        // Property maps may read any variable of the clause (checked for names only).
        for props in qg
            .nodes
            .iter()
            .filter_map(|n| n.props.as_ref())
            .chain(qg.rels.iter().filter_map(|r| r.props.as_ref()))
        {
            self.expr(props, &inner, &[])?;
        }
        if let Some(w) = &m.where_ {
            self.expr(w, &inner, &[])?;
        }
        *scope = inner;
        Ok(())
    }

    /// A WITH / RETURN projection over `input`: its items checked, the scope it leaves, the
    /// scope a WITH's WHERE sees, and the item expressions (which later expressions may repeat
    /// whatever variables they read).
    fn projection(
        &mut self,
        input: &Scope,
        p: &ast::Projection,
        outer: Option<&Scope>,
    ) -> Result<(Scope, Scope, Vec<ast::Expr>)> {
        let mut items: Vec<(String, ast::Expr)> = Vec::new();
        if p.star {
            for (n, _) in input.0.iter().filter(|(n, _)| !n.starts_with("__")) {
                items.push((
                    n.clone(),
                    ast::Expr::new(ExprKind::Variable(n.clone()), p.span),
                ));
            }
        }
        for it in &p.items {
            self.expr(&it.expr, input, &[])?;
            items.push((it.name(), it.expr.clone()));
        }
        let mut out = Scope::default();
        for (name, e) in &items {
            let kind = match &e.kind {
                ExprKind::Variable(v) => match input.get(v) {
                    Some(
                        k @ (BoundVar::Node { .. }
                        | BoundVar::Rel { .. }
                        | BoundVar::RelList { .. }),
                    ) => k.clone(),
                    _ => BoundVar::Value,
                },
                _ => BoundVar::Value,
            };
            out.bind(name, kind);
        }
        let exprs: Vec<ast::Expr> = items.into_iter().map(|(_, e)| e).collect();
        let aggregating = exprs.iter().any(|e| e.contains_aggregate());
        // Without aggregation or DISTINCT, ORDER BY (and WITH's WHERE, also without SKIP /
        // LIMIT) still see the variables before the projection.
        let keeps_input = !aggregating && !p.distinct;
        // In a subquery, the outer query's variables are seen too.
        let seen = |s: Scope| match outer {
            Some(o) => o.with(&s),
            None => s,
        };
        let sort_scope = seen(if keeps_input {
            input.with(&out)
        } else {
            out.clone()
        });
        let mut resolved: Vec<&ast::Expr> = exprs.iter().collect();
        resolved.extend(exprs.iter().flat_map(|e| e.aggregate_calls()));
        for s in &p.order_by {
            self.expr(&s.expr, &sort_scope, &resolved)?;
        }
        for e in p.skip.iter().chain(&p.limit) {
            self.params_of(e)?;
        }
        let where_scope = seen(if keeps_input && !p.cuts() {
            input.with(&out)
        } else {
            out.clone()
        });
        Ok((out, where_scope, exprs))
    }

    /// A function call: aggregates' arguments (where an aggregate may stand is the
    /// planner's to check), known functions with a fitting number of arguments.
    fn function(
        &mut self,
        e: &ast::Expr,
        (name, distinct, args): (&str, bool, &[ast::Expr]),
        scope: &Scope,
        resolved: &[&ast::Expr],
    ) -> Result<()> {
        let lname = name.to_lowercase();
        if ast::AGGREGATES.contains(&lname.as_str()) {
            // Where an aggregate may stand is the planner's to check.
            for a in args {
                self.expr(a, scope, resolved)?;
            }
            return Ok(());
        }
        if distinct {
            return sem_err!(
                InvalidArgumentType,
                e.span,
                "DISTINCT is only allowed in aggregates"
            );
        }
        // Planned as the relationship matched again (`planner/subquery.rs`).
        if lname == "startnode" || lname == "endnode" {
            if args.len() != 1 {
                return sem_err!(
                    InvalidArgumentValue,
                    e.span,
                    "{name}() takes 1 argument(s), got {}",
                    args.len()
                );
            }
            self.expr(&args[0], scope, resolved)?;
            if let ExprKind::Variable(r) = &args[0].kind {
                self.ends += 1;
                let node = format!("__end{}", self.ends);
                let m = end_node_match(r, lname == "startnode", &node, e.span);
                self.match_clause(&mut scope.clone(), &m)?;
            }
            return Ok(());
        }
        let entry = registry::lookup(&lname);
        if let Some(f) = entry {
            if !(f.arity.0..=f.arity.1).contains(&args.len()) {
                return sem_err!(
                    InvalidArgumentValue,
                    e.span,
                    "{name}() takes {} argument(s), got {}",
                    f.arity_text(),
                    args.len()
                );
            }
        }
        for a in args {
            self.expr(a, scope, resolved)?;
        }
        if entry.is_none() {
            return sem_err!(UnknownFunction, e.span, "Unknown function `{name}`");
        }
        Ok(())
    }

    /// A pattern predicate: it tests the variables it is given; it introduces none.
    fn pattern_predicate(&mut self, p: &ast::PathPattern, scope: &Scope) -> Result<()> {
        for v in p.variables() {
            if scope.get(&v.name).is_none() {
                return sem_err!(
                    UndefinedVariable,
                    v.span,
                    "Variable `{}` not defined (a pattern predicate cannot introduce \
                     variables)",
                    v.name
                );
            }
        }
        let mut inner = scope.clone();
        self.match_clause(&mut inner, &ast::Match::of_pattern(p, None))
    }

    /// `EXISTS`, `COUNT` or `COLLECT { ... }`: its clauses, seeing `scope`.
    fn subquery(
        &mut self,
        e: &ast::Expr,
        kind: ast::SubqueryKind,
        q: &ast::SingleQuery,
        scope: &Scope,
    ) -> Result<()> {
        if kind == ast::SubqueryKind::Collect {
            let columns = match q.clauses.last() {
                Some(Clause::Return(r)) if !r.star => r.items.len(),
                _ => 0,
            };
            if columns != 1 {
                return sem_err!(
                    InvalidArgumentType,
                    e.span,
                    "COLLECT {{ ... }} must end with a RETURN of exactly one column"
                );
            }
        }
        self.clauses(q, scope.clone(), false)
    }

    /// Checks the names `e` uses: variables in `scope` (a sub-expression equal to one of
    /// `resolved` is a column already), parameters given, functions known with a fitting
    /// number of arguments, label tests on nodes.
    fn expr(&mut self, e: &ast::Expr, scope: &Scope, resolved: &[&ast::Expr]) -> Result<()> {
        if resolved.contains(&e) {
            return self.params_of(e);
        }
        match &e.kind {
            ExprKind::Variable(v) => {
                if scope.get(v).is_none() {
                    return sem_err!(UndefinedVariable, e.span, "Variable `{v}` not defined");
                }
                Ok(())
            }
            ExprKind::Param(p) => self.param(p, e.span),
            ExprKind::HasLabels(target, _) => {
                let ExprKind::Variable(v) = &target.kind else {
                    return sem_err!(
                        Unsupported,
                        e.span,
                        "unsupported: label test on an expression"
                    );
                };
                match scope.get(v) {
                    None => sem_err!(UndefinedVariable, target.span, "Variable `{v}` not defined"),
                    Some(BoundVar::Node { .. }) | Some(BoundVar::Value) => Ok(()),
                    Some(_) => sem_err!(
                        InvalidArgumentType,
                        target.span,
                        "label test needs a node, `{v}` is not one"
                    ),
                }
            }
            ExprKind::Function {
                name,
                distinct,
                args,
            } => self.function(e, (name, *distinct, args), scope, resolved),
            ExprKind::ListComprehension {
                var,
                list,
                filter,
                map,
            } => {
                no_aggregate_in(
                    filter.iter().chain(map.iter()).map(|b| b.as_ref()),
                    "a list comprehension",
                )?;
                self.expr(list, scope, resolved)?;
                let mut inner = scope.clone();
                inner.bind(&var.name, BoundVar::Value);
                for x in filter.iter().chain(map.iter()) {
                    self.expr(x, &inner, resolved)?;
                }
                Ok(())
            }
            ExprKind::Quantifier {
                var, list, pred, ..
            } => {
                no_aggregate_in([pred.as_ref()], "a list predicate")?;
                self.expr(list, scope, resolved)?;
                let mut inner = scope.clone();
                inner.bind(&var.name, BoundVar::Value);
                self.expr(pred, &inner, resolved)
            }
            ExprKind::PatternPredicate(p) => self.pattern_predicate(p, scope),
            ExprKind::PatternComprehension {
                pattern,
                filter,
                map,
            } => {
                no_aggregate_in(
                    filter.iter().map(|b| b.as_ref()).chain([map.as_ref()]),
                    "a pattern comprehension",
                )?;
                let mut inner = scope.clone();
                let m = ast::Match::of_pattern(pattern, filter.as_deref());
                self.match_clause(&mut inner, &m)?;
                self.expr(map, &inner, resolved)
            }
            ExprKind::Subquery(kind, q) => self.subquery(e, *kind, q, scope),
            ExprKind::Reduce {
                acc,
                init,
                var,
                list,
                body,
            } => {
                no_aggregate_in([body.as_ref()], "reduce")?;
                self.expr(init, scope, resolved)?;
                self.expr(list, scope, resolved)?;
                let mut inner = scope.clone();
                inner.bind(&acc.name, BoundVar::Value);
                inner.bind(&var.name, BoundVar::Value);
                self.expr(body, &inner, resolved)
            }
            _ => {
                for c in e.children() {
                    self.expr(c, scope, resolved)?;
                }
                Ok(())
            }
        }
    }

    /// The parameters `e` reads (nothing else checked).
    fn params_of(&mut self, e: &ast::Expr) -> Result<()> {
        if let ExprKind::Param(p) = &e.kind {
            return self.param(p, e.span);
        }
        for c in e.children() {
            self.params_of(c)?;
        }
        Ok(())
    }

    /// Parameter `$p`: given, and a value a literal can write; recorded with its type.
    fn param(&mut self, p: &str, span: Span) -> Result<()> {
        if self.out.contains_key(p) {
            return Ok(());
        }
        let Some(v) = self.params.get(p) else {
            return sem_err!(MissingParameter, span, "Missing parameter ${p}");
        };
        let compact = compact_list(v);
        if let Some(list) = compact {
            let literal = ast::Expr::new(ExprKind::Param(p.to_string()), span);
            let slot = ParamSlot {
                data_type: list.data_type(),
                literal,
                compact: Some(list),
            };
            self.out.insert(p.to_string(), slot);
            return Ok(());
        }
        let (Some(literal), Ok(scalar)) = (v.to_literal(span), v.to_scalar()) else {
            return sem_err!(
                InvalidArgumentType,
                span,
                "parameter ${p}: {v} is not a value a Cypher literal can write"
            );
        };
        self.out.insert(
            p.to_string(),
            ParamSlot {
                data_type: scalar.data_type(),
                literal,
                compact: None,
            },
        );
        Ok(())
    }
}

/// An aggregate in the body of a comprehension, predicate or reduce (it runs per element,
/// an aggregate per group): an InvalidAggregation error at the aggregate.
fn no_aggregate_in<'e>(bodies: impl IntoIterator<Item = &'e ast::Expr>, what: &str) -> Result<()> {
    for b in bodies {
        if let Some(a) = b.aggregate_calls().first() {
            return sem_err!(
                InvalidAggregation,
                a.span,
                "an aggregate is not allowed inside the body of {what}"
            );
        }
    }
    Ok(())
}

/// The node variable a WITH / RETURN counts per: every item an aggregate `count` or `v` /
/// `v.prop` of one variable `v`.
pub(crate) fn counts_grouped_by(c: &ast::Clause) -> Option<String> {
    let p = match c {
        ast::Clause::With(w) => &w.projection,
        ast::Clause::Return(r) => r,
        _ => return None,
    };
    let mut var: Option<&str> = None;
    let mut counts = false;
    for it in &p.items {
        let v = match &it.expr.kind {
            ast::ExprKind::CountStar => {
                counts = true;
                continue;
            }
            ast::ExprKind::Function { name, .. } if name.eq_ignore_ascii_case("count") => {
                counts = true;
                continue;
            }
            ast::ExprKind::Variable(v) => v.as_str(),
            ast::ExprKind::Property(e, _) => match &e.kind {
                ast::ExprKind::Variable(v) => v.as_str(),
                _ => return None,
            },
            _ => return None,
        };
        if var.is_some_and(|w| w != v) {
            return None;
        }
        var = Some(v);
    }
    var.filter(|_| counts && !p.star).map(str::to_string)
}

/// `startNode(r)` (`start`) / `endNode(r)` as a MATCH of relationship `r` again, in its own
/// direction, its end node named `end`; at the call's `span` (which the planner finds it by).
fn end_node_match(r: &str, start: bool, end: &str, span: Span) -> ast::Match {
    let node = |var: Option<&str>| ast::NodePattern {
        var: var.map(|v| ast::Ident::new(v, span)),
        labels: vec![],
        label_expr: None,
        props: None,
        span,
    };
    let rel = ast::RelPattern {
        var: Some(ast::Ident::new(r, span)),
        types: vec![],
        direction: ast::Direction::Outgoing,
        length: None,
        props: None,
        span,
    };
    let (first, second) = match start {
        true => (node(Some(end)), node(None)),
        false => (node(None), node(Some(end))),
    };
    let pattern = ast::PathPattern {
        name: None,
        shortest: None,
        start: first,
        steps: vec![(rel, second)],
        span,
    };
    ast::Match::of_pattern(&pattern, None)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::Error;

    fn bind(q: &str, params: &[(&str, Value)]) -> Result<BoundQuery> {
        let rt = tokio::runtime::Runtime::new().unwrap();
        let g = rt.block_on(crate::session::Graph::sample()).unwrap();
        let ast = cypher::parse_query(q).unwrap();
        let params = params
            .iter()
            .map(|(k, v)| (k.to_string(), v.clone()))
            .collect();
        super::bind(g.catalog(), false, &ast, &params)
    }

    /// The error's kind and the query text its span covers.
    fn error(q: &str) -> (String, String) {
        match bind(q, &[]) {
            Err(e @ Error::Semantic { span, .. }) => (
                e.kind_name(),
                q[span.start.offset..span.end.offset].to_string(),
            ),
            other => panic!("{q}: {other:?}"),
        }
    }

    #[test]
    fn names_resolve_where_they_stand() {
        for q in [
            "MATCH (a:Person)-[k:KNOWS]->(b) WHERE k.creationDate > 0 RETURN a.id, b",
            // ORDER BY sees the input without aggregation / DISTINCT, and repeated items.
            "MATCH (a:Person) WITH a.id AS x ORDER BY a.firstName RETURN x",
            "MATCH (a:Person) RETURN a.firstName AS n, count(*) ORDER BY a.firstName, count(*)",
            "MATCH (a:Person) RETURN a.firstName AS n, count(*) AS c ORDER BY a.firstName + 'x', c",
            // WITH's WHERE sees the input when nothing aggregates, deduplicates or limits.
            "MATCH (a:Person) WITH a.id AS x WHERE a.age > 3 RETURN x",
            "UNWIND [1, 2] AS x WITH * RETURN x",
            "MATCH (a:Person) RETURN a UNION MATCH (a:Person) RETURN a",
        ] {
            bind(q, &[]).unwrap_or_else(|e| panic!("{q}: {e}"));
        }
    }

    #[test]
    fn undefined_names_are_found_with_their_span() {
        assert_eq!(
            error("MATCH (a:Person) WITH a.id AS x RETURN a"),
            ("UndefinedVariable".into(), "a".into())
        );
        assert_eq!(
            error("MATCH (a:Person) WITH DISTINCT a.id AS x ORDER BY a.age RETURN x"),
            ("UndefinedVariable".into(), "a".into())
        );
        assert_eq!(
            error("MATCH (a:Person) WITH count(*) AS c WHERE a.age > 1 RETURN c"),
            ("UndefinedVariable".into(), "a".into())
        );
        // Arguments first, then the unknown function.
        assert_eq!(
            error("RETURN nope(y)"),
            ("UndefinedVariable".into(), "y".into())
        );
        assert_eq!(
            error("RETURN nope(1)"),
            ("UnknownFunction".into(), "nope(1)".into())
        );
        assert_eq!(
            error("RETURN toUpper('a', 'b')"),
            ("InvalidArgumentValue".into(), "toUpper('a', 'b')".into())
        );
        assert_eq!(
            error("MATCH (a:Person) RETURN a.id + $missing"),
            ("MissingParameter".into(), "$missing".into())
        );
    }

    #[test]
    fn parameters_become_typed_slots() {
        let b = bind(
            "MATCH (a:Person {id: $id}) WHERE a.firstName IN $names RETURN a SKIP $s",
            &[
                ("id", Value::from(1i64)),
                ("names", Value::from(vec!["Ann", "Bo"])),
                ("s", Value::from(0i64)),
                ("unused", Value::from(true)),
            ],
        )
        .unwrap();
        let types: Vec<(String, String)> = b
            .params
            .iter()
            .map(|(k, s)| (k.clone(), s.data_type.to_string()))
            .collect();
        assert_eq!(types.len(), 3, "{types:?}");
        assert_eq!(types[0], ("id".into(), "Int64".into()));
        assert!(types[1].1.starts_with("List("), "{types:?}");
        assert_eq!(types[2], ("s".into(), "Int64".into()));
    }

    #[test]
    fn every_semantic_error_of_the_binder_with_its_span() {
        // (query, kind, the text the error points at)
        let cases = [
            ("MATCH (a:Person) RETURN b", "UndefinedVariable", "b"),
            (
                "MATCH (a:Person) RETURN nope(a)",
                "UnknownFunction",
                "nope(a)",
            ),
            ("RETURN $p", "MissingParameter", "$p"),
            ("MATCH (a:Nope) RETURN a", "UnknownLabel", "Nope"),
            (
                "MATCH (a:Person)-[:NOPE]->(b) RETURN a",
                "UnknownRelationshipType",
                "NOPE",
            ),
            (
                "MATCH (a:Person)-[a:KNOWS]->(b) RETURN a",
                "VariableTypeConflict",
                "a",
            ),
            (
                "MATCH p = (a:Person)-[:KNOWS]->(b), p = (c)-[:KNOWS]->(d) RETURN p",
                "VariableAlreadyBound",
                "p",
            ),
            (
                "MATCH p = (a:Person)-[:KNOWS]->(p) RETURN p",
                "VariableTypeConflict",
                "p",
            ),
            (
                "RETURN toUpper('a', 'b')",
                "InvalidArgumentValue",
                "toUpper('a', 'b')",
            ),
        ];
        for (q, kind, at) in cases {
            assert_eq!(error(q), (kind.to_string(), at.to_string()), "{q}");
        }
    }

    #[test]
    fn scopes_end_at_with_and_union_branches_bind_alone() {
        // WITH keeps only what it projects; each UNION branch has its own scope.
        assert_eq!(
            error("MATCH (a:Person)-[k:KNOWS]->(b) WITH b RETURN k"),
            ("UndefinedVariable".into(), "k".into())
        );
        assert_eq!(
            error("MATCH (a:Person) RETURN a.id AS x UNION RETURN a.id AS x"),
            ("UndefinedVariable".into(), "a".into())
        );
        // UNWIND binds its variable for what follows, not for its own list.
        assert_eq!(
            error("UNWIND [x] AS x RETURN x"),
            ("UndefinedVariable".into(), "x".into())
        );
        bind("UNWIND [1] AS x WITH x AS y RETURN y", &[]).unwrap();
    }

    /// What each MATCH of `q` saw bound before it: per MATCH, its variables as `name:kind`.
    fn scopes(q: &str) -> Vec<String> {
        let b = bind(q, &[]).unwrap_or_else(|e| panic!("{q}: {e}"));
        let show = |(n, v): &(String, BoundVar)| match v {
            BoundVar::Node { labels, several } => {
                format!(
                    "{n}:{}{}",
                    labels.join("|"),
                    if *several { "*" } else { "" }
                )
            }
            BoundVar::Rel { tables } => format!("{n}:rel{tables:?}"),
            BoundVar::RelList { table } => format!("{n}:list{table:?}"),
            other => format!("{n}:{}", other.kind_name()),
        };
        (b.matches.iter())
            .map(|m| m.scope.iter().map(show).collect::<Vec<_>>().join(" "))
            .collect()
    }

    #[test]
    fn a_match_leaves_its_variables_with_the_labels_its_rows_can_have() {
        // Resolved to one label; a MATCH that branches leaves several (`*`), which a
        // projection passes on and the next MATCH branches over again.
        let s = scopes(
            "MATCH (t:Tag {id: 300})<-[h:HAS_TAG]-(x) WITH x, t AS u \
             MATCH (x)-[:HAS_CREATOR]->(p) MATCH (p)-[k:KNOWS*1..2]->(q) RETURN q",
        );
        assert_eq!(s[0], "");
        assert_eq!(s[1], "x:Comment:Message|Forum|Post:Message* u:Tag", "{s:?}");
        assert_eq!(s[2], "x:Comment:Message|Forum|Post:Message* u:Tag p:Person");
        // A relationship of one table; a list of one table; a path; a value.
        let s = scopes(
            "MATCH r = (a:Person)-[k:KNOWS]->(b) UNWIND [1] AS v \
             MATCH (b)-[l:KNOWS*]->(c) MATCH (c)-->(d) RETURN d",
        );
        assert_eq!(s[1], "a:Person k:rel[0] b:Person r:path v:value");
        assert_eq!(s[2], format!("{} l:listSome(0) c:Person", s[1]));
        // Nothing can match (persons create nothing): `b` has no label.
        let s = scopes("MATCH (a:Person)-[:HAS_CREATOR]->(b) MATCH (b)-->(c) RETURN c");
        assert_eq!(s[1], "a:Person b:", "{s:?}");
        // Subqueries and pattern expressions see the clause's variables.
        let s = scopes("MATCH (a:Person) WHERE exists((a)-[:KNOWS]->()) RETURN a");
        assert_eq!(s, ["", "a:Person"]);
    }
}
