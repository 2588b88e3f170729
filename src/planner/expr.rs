//! Lowering of Cypher expressions to DataFusion expressions.

use super::scope::{label_col, prop_col, type_col, Binding, Scope};
use super::Lowerer;
use crate::error::ErrorClass;
use crate::error::{Error, Result};
use crate::functions::any::{encodable, is_any, ANY};
use crate::functions::registry::{self as scalar, is_list, is_string};
use crate::functions::temporal::is_temporal_type;
use crate::functions::CypherFn;
use crate::sem_err;
use arrow::datatypes::{DataType, Field};
use cypher::ast::{self, BinaryOp, ExprKind, Literal, UnaryOp};
use cypher::Span;
use datafusion::common::{Column, DFSchema, ScalarValue};
use datafusion::functions::expr_fn as f;
use datafusion::functions_nested::expr_fn as nf;
use datafusion::logical_expr::{binary_expr, cast, lit, when, Expr, ExprSchemable, Operator};
use std::sync::Arc;

/// A column reference by exact name (never parsed, so names may contain any character).
pub fn col(name: &str) -> Expr {
    Expr::Column(Column::new_unqualified(name))
}

pub(crate) use crate::functions::registry::null;

/// `e` of type `t` with every NaN as the one positive NaN: arrow orders floats by their bits,
/// which puts a NaN with the sign bit set (`0.0 / 0.0` on x86) below every number, where
/// Cypher puts NaN above them. Other types pass unchanged.
pub fn canonical_nan(e: Expr, t: &DataType) -> Expr {
    if !matches!(t, DataType::Float64 | DataType::Float32) || e.is_volatile() {
        return e;
    }
    match when(f::isnan(e.clone()), lit(f64::NAN)).otherwise(e.clone()) {
        Ok(c) => datafusion::logical_expr::cast(c, t.clone()),
        Err(_) => e,
    }
}

/// Where an expression is lowered: the variables in scope, the plan schema they live in, and
/// sub-expressions already computed as columns (aggregates, projection items).
pub struct ExprCtx<'a> {
    pub scope: &'a Scope,
    pub schema: &'a DFSchema,
    pub overrides: &'a [(ast::Expr, String)],
    /// Why aggregates are not allowed here, for the error message.
    pub no_aggregates: &'static str,
    /// In one branch of a MATCH that branched: a property its label lacks is null (another
    /// label of the same variable has it), not an error.
    pub missing_props_null: bool,
}

impl<'a> ExprCtx<'a> {
    pub fn new(scope: &'a Scope, schema: &'a DFSchema) -> Self {
        Self {
            scope,
            schema,
            overrides: &[],
            no_aggregates: "here",
            missing_props_null: false,
        }
    }
}

fn is_numeric(t: &DataType) -> bool {
    t.is_numeric()
}

/// `x` as a value of mixed kind.
/// Operands whose arithmetic rows decide: values of mixed kind and temporal values.
fn dynamic(t: &DataType) -> bool {
    is_any(t) || is_temporal_type(t)
}

/// `a op b` evaluated on values (`functions/dynamic.rs`): a value of mixed kind.
fn value_arith(op: &str, a: Expr, b: Expr) -> Expr {
    CypherFn::Dynamic.call(vec![lit(op), a, b])
}

fn to_any(x: Expr) -> Expr {
    CypherFn::ToAny.call(vec![x])
}

/// The error for an operation this engine can't apply to values of mixed kind.
pub(super) fn mixed_kind(span: Span, what: &str) -> Result<Expr> {
    sem_err!(
        Unsupported,
        span,
        "unsupported: {what} of a value of mixed kind (a list mixing kinds, or a property \
         whose type differs across labels)"
    )
}

/// `Some(true)` for a relationship binding, `Some(false)` for a node.
fn b_kind(b: Option<&Binding>) -> Option<bool> {
    match b? {
        Binding::Rel { .. } | Binding::Rels { .. } => Some(true),
        Binding::Node { .. } | Binding::Nodes { .. } => Some(false),
        _ => None,
    }
}

/// The type values of types `a` and `b` can share in one list without changing any of them,
/// `None` when they are of different kinds (a list of them is a list of mixed kind).
fn unify(a: &DataType, b: &DataType) -> Option<DataType> {
    Some(match (a, b) {
        _ if a == b => a.clone(),
        (DataType::Null, t) | (t, DataType::Null) => t.clone(),
        _ if a.is_integer() && b.is_integer() => DataType::Int64,
        // Integers and floats stay apart (`[1, 1.5][0]` is the integer 1).
        _ if a.is_floating() && b.is_floating() => DataType::Float64,
        _ if is_string(a) && is_string(b) => DataType::Utf8,
        (DataType::List(x), DataType::List(y)) => {
            DataType::new_list(unify(x.data_type(), y.data_type())?, true)
        }
        (DataType::Struct(x), DataType::Struct(y))
            if x.len() == y.len() && x.iter().zip(y.iter()).all(|(f, g)| f.name() == g.name()) =>
        {
            let fields = x
                .iter()
                .zip(y.iter())
                .map(|(f, g)| {
                    Some(Field::new(
                        f.name(),
                        unify(f.data_type(), g.data_type())?,
                        true,
                    ))
                })
                .collect::<Option<Vec<_>>>()?;
            DataType::Struct(fields.into())
        }
        _ => return None,
    })
}

/// Whether values of two types can ever be equal / ordered in Cypher.
fn comparable(a: &DataType, b: &DataType) -> bool {
    is_any(a)
        || is_any(b)
        || a == &DataType::Null
        || b == &DataType::Null
        || a == b
        || (is_numeric(a) && is_numeric(b))
        || (is_string(a) && is_string(b))
        || (is_list(a) && is_list(b))
        || (matches!(a, DataType::Struct(_)) && matches!(b, DataType::Struct(_)))
}

impl<'c> Lowerer<'c> {
    pub fn type_of(&self, e: &Expr, schema: &DFSchema) -> Result<DataType> {
        e.get_type(schema)
            .map_err(|err| Error::Plan(err.context(format!("cannot type expression {e}"))))
    }

    /// A list of `xs` (of `types`): typed when the items share a type, else a list of values
    /// of mixed kind (`[1, 'a']`).
    pub fn list_of(&self, xs: Vec<Expr>, types: &[DataType], span: Span) -> Result<Expr> {
        let shared = types
            .iter()
            .try_fold(DataType::Null, |acc, t| unify(&acc, t));
        if let Some(t) = shared {
            return Ok(nf::make_array(
                xs.into_iter()
                    .zip(types)
                    .map(|(x, u)| if u == &t { x } else { cast(x, t.clone()) })
                    .collect(),
            ));
        }
        if let Some(t) = types.iter().find(|t| !encodable(t)) {
            return sem_err!(
                Unsupported,
                span,
                "unsupported: a list mixing values of type {t} with values of other kinds"
            );
        }
        // Lists whose items differ (`[[1, 2], [1, 2.5]]`): still a list of lists, of items of
        // mixed kind, so comprehensions and reduce over an element work.
        if types.iter().all(|t| is_list(t) || t == &DataType::Null) {
            let any_list = DataType::new_list(ANY, true);
            return Ok(nf::make_array(
                xs.into_iter()
                    .zip(types)
                    .map(|(x, t)| match t {
                        DataType::Null => cast(x, any_list.clone()),
                        t if t == &any_list => x,
                        _ => CypherFn::AnyItems.call(vec![x]),
                    })
                    .collect(),
            ));
        }
        Ok(nf::make_array(xs.into_iter().map(to_any).collect()))
    }

    /// `a + b` where one side is a list: concatenation, or appending / prepending an element;
    /// a list of mixed kind when the items don't share a type (`[1] + 'a'`).
    fn list_add(&self, a: Expr, ta: &DataType, b: Expr, tb: &DataType) -> Result<Expr> {
        // A value of mixed kind may hold a list (an element of `[5, [6, 7]]`): whether `+`
        // concatenates or appends is the row's to tell. Beside a list the result is a list
        // whatever the row holds (its items, or itself), null where the value is null.
        if is_any(ta) && is_any(tb) {
            return Ok(value_arith("+", a, b));
        }
        if is_any(ta) || is_any(tb) {
            let value = if is_any(ta) { a.clone() } else { b.clone() };
            let items = |x: Expr| CypherFn::AnyItems.call(vec![x]);
            let list = nf::array_concat(vec![items(a), items(b)]);
            let null_list = lit(ScalarValue::try_from(&DataType::new_list(ANY, true))?);
            return Ok(when(value.is_null(), null_list).otherwise(list)?);
        }
        let item = |t: &DataType| match t {
            DataType::List(f) | DataType::LargeList(f) | DataType::FixedSizeList(f, _) => {
                f.data_type().clone()
            }
            t => t.clone(),
        };
        let shared = unify(&item(ta), &item(tb)).is_some();
        let side = |x: Expr, t: &DataType| match (shared, is_list(t)) {
            (true, _) => x,
            (false, true) => CypherFn::AnyItems.call(vec![x]),
            (false, false) => to_any(x),
        };
        let (a, b) = (side(a, ta), side(b, tb));
        Ok(match (is_list(ta), is_list(tb)) {
            (true, true) => nf::array_concat(vec![a, b]),
            (true, false) => nf::array_append(a, b),
            _ => nf::array_prepend(a, b),
        })
    }

    /// Lowers `e`; errors carry the span of the culprit.
    #[recursive::recursive]
    pub fn expr(&self, e: &ast::Expr, cx: &ExprCtx<'_>) -> Result<Expr> {
        if let Some((_, c)) = cx.overrides.iter().find(|(o, _)| o == e) {
            return Ok(col(c));
        }
        let out = match &e.kind {
            ExprKind::Literal(l) => lit(literal(l)),
            ExprKind::Param(p) => {
                if let Some(ph) = self.param_placeholder(p) {
                    return Ok(ph);
                }
                if let Some(list) = self.param_compact(p) {
                    return Ok(list);
                }
                let Some(v) = self.param_literal(p) else {
                    return sem_err!(MissingParameter, e.span, "Missing parameter ${p}");
                };
                let empty = Scope::default();
                let schema = DFSchema::empty();
                self.expr(v, &ExprCtx::new(&empty, &schema))?
            }
            ExprKind::Variable(v) => self.variable(v, e.span, cx)?,
            ExprKind::Property(target, key) => self.property(target, key, cx)?,
            ExprKind::List(items) => self.list_literal(items, e.span, cx)?,
            ExprKind::Map(entries) => self.map_literal(entries, cx)?,
            ExprKind::Unary(op, inner) => self.unary(*op, inner, cx)?,
            ExprKind::Binary(op, l, r) => self.binary(*op, l, r, e.span, cx)?,
            ExprKind::Chain(first, rest) => self.operator_chain(first, rest, cx)?,
            ExprKind::IsNull { expr, negated } => self.is_null(expr, *negated, cx)?,
            ExprKind::HasLabels(target, labels) => self.has_labels(e, target, labels, cx)?,
            ExprKind::CountStar => {
                return sem_err!(
                    InvalidAggregation,
                    e.span,
                    "aggregate count(*) is not allowed {}",
                    cx.no_aggregates
                )
            }
            ExprKind::Function {
                name,
                distinct,
                args,
            } => self.function(name, *distinct, args, e.span, cx)?,
            ExprKind::Case {
                operand,
                whens,
                else_,
            } => self.case(operand.as_deref(), whens, else_.as_deref(), cx)?,
            ExprKind::Index(target, idx) => self.index(target, idx, cx)?,
            ExprKind::Slice(target, from, to) => {
                self.slice(target, from.as_deref(), to.as_deref(), e.span, cx)?
            }
            ExprKind::ListComprehension {
                var,
                list,
                filter,
                map,
            } => self.list_eval(
                crate::functions::comprehension::ListOp::Comprehension,
                var,
                list,
                (filter.as_deref(), map.as_deref()),
                cx,
            )?,
            ExprKind::Quantifier {
                kind,
                var,
                list,
                pred,
            } => self.list_eval(
                Self::quantifier_op(*kind),
                var,
                list,
                (Some(pred), None),
                cx,
            )?,
            ExprKind::Reduce {
                acc,
                init,
                var,
                list,
                body,
            } => self.reduce((acc, init), var, list, body, cx)?,
            // Computed as columns before the expression is lowered (`subquery.rs`), except
            // where that is not done.
            ExprKind::PatternPredicate(_)
            | ExprKind::PatternComprehension { .. }
            | ExprKind::Subquery(..) => {
                return sem_err!(
                    Unsupported,
                    e.span,
                    "unsupported: a pattern expression or subquery here"
                )
            }
        };
        Ok(out)
    }

    /// A variable as a value: a value column, or a node / relationship as a struct.
    fn variable(&self, v: &str, span: Span, cx: &ExprCtx<'_>) -> Result<Expr> {
        Ok(match cx.scope.get(v) {
            None => return sem_err!(UndefinedVariable, span, "Variable `{v}` not defined"),
            Some(Binding::Value { col: c }) => col(c),
            Some(b @ Binding::RelList { .. }) => self.rel_list_value(b, v)?,
            Some(Binding::Path { parts, shape }) => self.path_value(parts, shape)?,
            Some(b) => self.entity_value(b)?,
        })
    }

    /// `[a, b, ...]`: one list type for the items, or values of mixed kind.
    fn list_literal(&self, items: &[ast::Expr], span: Span, cx: &ExprCtx<'_>) -> Result<Expr> {
        Ok({
            if items.is_empty() {
                lit(ScalarValue::List(ScalarValue::new_list_nullable(
                    &[],
                    &DataType::Null,
                )))
            } else {
                let xs = items
                    .iter()
                    .map(|x| self.expr(x, cx))
                    .collect::<Result<Vec<_>>>()?;
                let types = xs
                    .iter()
                    .map(|x| self.type_of(x, cx.schema))
                    .collect::<Result<Vec<_>>>()?;
                self.list_of(xs, &types, span)?
            }
        })
    }

    /// `{k: v, ...}` as a struct.
    fn map_literal(&self, entries: &[(ast::Ident, ast::Expr)], cx: &ExprCtx<'_>) -> Result<Expr> {
        Ok({
            if entries.is_empty() {
                return Ok(lit(ScalarValue::Struct(Arc::new(
                    arrow::array::StructArray::new_empty_fields(1, None),
                ))));
            }
            let mut args = Vec::with_capacity(entries.len() * 2);
            for (k, v) in entries {
                args.push(lit(k.name.clone()));
                args.push(self.expr(v, cx)?);
            }
            f::named_struct(args)
        })
    }

    /// `NOT x`, `-x`, `+x`.
    fn unary(&self, op: UnaryOp, inner: &ast::Expr, cx: &ExprCtx<'_>) -> Result<Expr> {
        Ok({
            if let (UnaryOp::Not, ExprKind::Map(_) | ExprKind::List(_)) = (op, &inner.kind) {
                // Known from the syntax (a map with an empty key has no Arrow type).
                return sem_err!(
                    InvalidArgumentType,
                    inner.span,
                    "NOT expects a boolean, got a {}",
                    if matches!(inner.kind, ExprKind::Map(_)) {
                        "map"
                    } else {
                        "list"
                    }
                );
            }
            let x = self.expr(inner, cx)?;
            let t = self.type_of(&x, cx.schema)?;
            if dynamic(&t) && op != UnaryOp::Not {
                // Numbers and durations negate (a duration's every component).
                return Ok(match op {
                    UnaryOp::Neg => value_arith("*", x, lit(-1i64)),
                    _ => x,
                });
            }
            if is_any(&t) {
                let sym = match op {
                    UnaryOp::Not => "NOT",
                    UnaryOp::Neg => "-",
                    UnaryOp::Pos => "+",
                };
                return mixed_kind(inner.span, &format!("`{sym}`"));
            }
            match op {
                UnaryOp::Not => {
                    if !matches!(t, DataType::Boolean | DataType::Null) {
                        return sem_err!(
                            InvalidArgumentType,
                            inner.span,
                            "NOT expects a boolean, got {t}"
                        );
                    }
                    Expr::Not(Box::new(x))
                }
                UnaryOp::Neg | UnaryOp::Pos => {
                    if !is_numeric(&t) && t != DataType::Null {
                        return sem_err!(
                            InvalidArgumentType,
                            inner.span,
                            "unary {} expects a number, got {t}",
                            if op == UnaryOp::Neg { "-" } else { "+" }
                        );
                    }
                    if op == UnaryOp::Neg && t.is_integer() {
                        // -(-2^63) overflows.
                        CypherFn::Sub.call(vec![lit(0i64), x])
                    } else if op == UnaryOp::Neg {
                        Expr::Negative(Box::new(x))
                    } else {
                        x
                    }
                }
            }
        })
    }

    /// `x IS [NOT] NULL`; an entity is null when its identity column is (OPTIONAL MATCH).
    fn is_null(&self, expr: &ast::Expr, negated: bool, cx: &ExprCtx<'_>) -> Result<Expr> {
        Ok({
            let x = match &expr.kind {
                // An entity is null when its identity column is (OPTIONAL MATCH).
                ExprKind::Variable(v) => match cx.scope.get(v) {
                    Some(b) if b.is_entity() => col(&self.entities().identity_col(b)),
                    _ => self.expr(expr, cx)?,
                },
                _ => self.expr(expr, cx)?,
            };
            if negated {
                x.is_not_null()
            } else {
                x.is_null()
            }
        })
    }

    /// `n:Label:Other`.
    fn has_labels(
        &self,
        e: &ast::Expr,
        target: &ast::Expr,
        labels: &ast::LabelExpr,
        cx: &ExprCtx<'_>,
    ) -> Result<Expr> {
        let ExprKind::Variable(v) = &target.kind else {
            return sem_err!(
                Unsupported,
                e.span,
                "unsupported: label test on an expression"
            );
        };
        let ents = self.entities();
        Ok(match cx.scope.get(v) {
            Some(Binding::Node { label, prefix }) => {
                let info = ents.node(label);
                let holds = labels.matches(&info.labels);
                let key = prop_col(prefix, &info.key);
                // null for a missing (OPTIONAL MATCH) node, else a constant.
                when(col(&key).is_null(), null()).otherwise(lit(holds))?
            }
            Some(Binding::Nodes {
                labels: tables,
                prefix,
                ..
            }) => {
                let label = col(&label_col(prefix));
                let holding: Vec<Expr> = tables
                    .iter()
                    .filter(|t| labels.matches(&ents.node(t).labels))
                    .map(|t| lit(t.clone()))
                    .collect();
                if holding.is_empty() {
                    when(label.is_null(), null()).otherwise(lit(false))?
                } else {
                    label.in_list(holding, false)
                }
            }
            Some(_) => {
                return sem_err!(
                    InvalidArgumentType,
                    target.span,
                    "label test needs a node, `{v}` is not one"
                )
            }
            None => return sem_err!(UndefinedVariable, target.span, "Variable `{v}` not defined"),
        })
    }

    /// `CASE [x] WHEN .. THEN .. [ELSE ..] END`.
    fn case(
        &self,
        operand: Option<&ast::Expr>,
        whens: &[(ast::Expr, ast::Expr)],
        else_: Option<&ast::Expr>,
        cx: &ExprCtx<'_>,
    ) -> Result<Expr> {
        // `CASE x WHEN v` compares as `x = v` does in Cypher (`'0'` is not `0`; kinds that
        // differ are not equal), never through DataFusion's coercion of the operand.
        let operand = match operand {
            Some(o) => {
                let x = self.expr(o, cx)?;
                let t = self.type_of(&x, cx.schema)?;
                Some((x, t))
            }
            None => None,
        };
        let conds = whens
            .iter()
            .map(|(w, _)| {
                let v = self.expr(w, cx)?;
                match &operand {
                    Some((x, tx)) => {
                        let tv = self.type_of(&v, cx.schema)?;
                        self.comparison(BinaryOp::Eq, x.clone(), v, tx, &tv)
                    }
                    None => Ok(v),
                }
            })
            .collect::<Result<Vec<_>>>()?;
        let mut results = whens
            .iter()
            .map(|(_, t)| self.expr(t, cx))
            .collect::<Result<Vec<_>>>()?;
        results.push(match else_ {
            Some(x) => self.expr(x, cx)?,
            None => null(),
        });
        // The branches' values keep their kinds: one type where they share it, else values
        // of mixed kind (`CASE WHEN c THEN 1 ELSE 1.5 END` is an integer or a float).
        let types = results
            .iter()
            .map(|r| self.type_of(r, cx.schema))
            .collect::<Result<Vec<_>>>()?;
        let shared = types
            .iter()
            .try_fold(DataType::Null, |acc, t| unify(&acc, t));
        let results: Vec<Expr> = match shared {
            Some(t) => results
                .into_iter()
                .zip(&types)
                .map(|(r, u)| {
                    if u == &t || u == &DataType::Null {
                        r
                    } else {
                        cast(r, t.clone())
                    }
                })
                .collect(),
            None if types.iter().all(|t| encodable(t) || is_any(t)) => {
                results.into_iter().map(to_any).collect()
            }
            None => results,
        };
        let (otherwise, thens) = results.split_last().expect("an else");
        let mut pairs = conds.into_iter().zip(thens.iter().cloned());
        let (w0, t0) = pairs.next().expect("CASE has a WHEN");
        let mut builder = when(w0, t0);
        for (w, t) in pairs {
            builder = builder.when(w, t);
        }
        Ok(builder.otherwise(otherwise.clone())?)
    }

    /// `x[i]` on a list (from 0, negative from the end) or `m['k']` on a map.
    fn index(&self, target: &ast::Expr, idx: &ast::Expr, cx: &ExprCtx<'_>) -> Result<Expr> {
        Ok({
            let t = self.expr(target, cx)?;
            let tt = self.type_of(&t, cx.schema)?;
            // A string parameter as the key: the plan is built for its value.
            let param_key = match &idx.kind {
                ExprKind::Param(p) if matches!(tt, DataType::Struct(_)) => {
                    match self.param_literal(p) {
                        Some(ast::Expr {
                            kind: ExprKind::Literal(Literal::String(k)),
                            ..
                        }) => Some(ExprKind::Literal(Literal::String(k.clone()))),
                        _ => None,
                    }
                }
                _ => None,
            };
            let key = param_key.as_ref().unwrap_or(&idx.kind);
            match (&tt, key) {
                (DataType::Struct(fields), ExprKind::Literal(Literal::String(k))) => {
                    if fields.iter().any(|f| f.name() == k) {
                        f::get_field(t, k.as_str())
                    } else {
                        null()
                    }
                }
                (t2, _) if is_list(t2) => {
                    let i = self.expr(idx, cx)?;
                    let it = self.type_of(&i, cx.schema)?;
                    if !it.is_integer() && it != DataType::Null {
                        return sem_err!(
                            InvalidArgumentType,
                            idx.span,
                            "list index must be an integer, got {it}"
                        );
                    }
                    CypherFn::Element.call(vec![t, cast(i, DataType::Int64)])
                }
                (DataType::Null, _) => null(),
                (DataType::Struct(fields), _) => {
                    let kt = self.type_of(&self.expr(idx, cx)?, cx.schema)?;
                    if kt == DataType::Null {
                        // A null key reads nothing.
                        null()
                    } else if !is_string(&kt) {
                        CypherFn::fail(
                            ErrorClass::TypeError,
                            "MapElementAccessByNonString",
                            "a map is indexed by a string",
                            &DataType::Null,
                        )?
                    } else {
                        self.map_entry(t, fields, self.expr(idx, cx)?, idx.span)?
                    }
                }
                _ => CypherFn::fail(
                    ErrorClass::TypeError,
                    "InvalidArgumentType",
                    &format!("cannot index a value of type {tt}"),
                    &DataType::Null,
                )?,
            }
        })
    }

    /// `m[k]` with a computed key: the value of the field `k` names (null where none does);
    /// of the fields' type, or of mixed kind where they differ.
    fn map_entry(
        &self,
        m: Expr,
        fields: &arrow::datatypes::Fields,
        key: Expr,
        span: Span,
    ) -> Result<Expr> {
        let mixed = fields
            .iter()
            .any(|f| f.data_type() != fields[0].data_type());
        if mixed {
            if let Some(f) = fields.iter().find(|f| !encodable(f.data_type())) {
                return sem_err!(
                    Unsupported,
                    span,
                    "unsupported: a map of mixed kinds indexed by a computed key, with a value of type {}",
                    f.data_type()
                );
            }
        }
        let mut entries = fields.iter().map(|f| {
            let v = f::get_field(m.clone(), f.name().as_str());
            let v = if mixed {
                CypherFn::ToAny.call(vec![v])
            } else {
                v
            };
            (key.clone().eq(lit(f.name().as_str())), v)
        });
        let Some((k, v)) = entries.next() else {
            return Ok(null());
        };
        let mut out = when(k, v);
        for (k, v) in entries {
            out = out.when(k, v);
        }
        Ok(out.end()?)
    }

    /// `x[a..b]` on a list.
    fn slice(
        &self,
        target: &ast::Expr,
        from: Option<&ast::Expr>,
        to: Option<&ast::Expr>,
        span: Span,
        cx: &ExprCtx<'_>,
    ) -> Result<Expr> {
        Ok({
            let t = self.expr(target, cx)?;
            let tt = self.type_of(&t, cx.schema)?;
            if !is_list(&tt) {
                return sem_err!(Unsupported, span, "unsupported: slicing a {tt}");
            }
            // A missing bound is the list's start or end; negative bounds count from the
            // end, then clamp into the list (Cypher slices never fail on out-of-range bounds).
            let bound = |x: Option<&ast::Expr>, missing: i64| -> Result<Expr> {
                Ok(match x {
                    Some(x) => cast(self.expr(x, cx)?, DataType::Int64),
                    None => lit(missing),
                })
            };
            CypherFn::Slice.call(vec![t, bound(from, 0)?, bound(to, i64::MAX)?])
        })
    }

    /// Whether `v.key` names a property that no label (type) the user wrote for `v` has: a
    /// typo, reported. A property missing where the label was inferred is null.
    fn unknown_written_property(&self, v: &str, key: &str, is_rel: bool) -> bool {
        let Some(written) = self.written_labels.get(v).filter(|w| !w.is_empty()) else {
            return false;
        };
        let has = |props: &[(String, DataType)]| props.iter().any(|(p, _)| p == key);
        if is_rel {
            !self
                .catalog
                .rels
                .iter()
                .any(|r| written.contains(&r.cfg.rel_type) && has(&r.props))
        } else {
            let tables = self.catalog.nodes.values();
            !tables
                .filter(|n| n.labels.iter().any(|l| written.contains(l)))
                .any(|n| has(&n.props))
        }
    }

    fn property(&self, target: &ast::Expr, key: &ast::Ident, cx: &ExprCtx<'_>) -> Result<Expr> {
        if let ExprKind::Variable(v) = &target.kind {
            if !cx.overrides.iter().any(|(o, _)| o == target) {
                let ents = self.entities();
                // An entity's properties and the name to report: its label(s) or type(s).
                let entity = cx.scope.get(v).and_then(|b| {
                    let (props, name) = ents.props_of(b)?;
                    Some((props, name, b.prefix()))
                });
                if let Some((props, name, prefix)) = entity {
                    let visible = cx.scope.get(v).is_some_and(|b| ents.visible(b, &key.name));
                    if visible && props.iter().any(|(p, _)| p == &key.name) {
                        return Ok(col(&prop_col(prefix, &key.name)));
                    }
                    let is_rel = matches!(b_kind(cx.scope.get(v)), Some(true));
                    if self.options.lenient
                        || cx.missing_props_null
                        || !self.unknown_written_property(v, &key.name, is_rel)
                    {
                        return Ok(null());
                    }
                    return sem_err!(
                        UnknownProperty,
                        key.span,
                        "Unknown property `{}` of {name} (properties: {})",
                        key.name,
                        props
                            .iter()
                            .map(|(p, _)| p.as_str())
                            .collect::<Vec<_>>()
                            .join(", ")
                    );
                }
            }
        }
        let t = self.expr(target, cx)?;
        let tt = self.type_of(&t, cx.schema)?;
        let t_expr = t.clone();
        match tt {
            t if crate::functions::registry::is_path(&t) => sem_err!(
                InvalidArgumentType,
                target.span,
                "cannot read property `{}` of a path",
                key.name
            ),
            DataType::Struct(fields) => {
                if fields.iter().any(|f| f.name() == &key.name) {
                    Ok(f::get_field(t, key.name.as_str()))
                } else {
                    Ok(null())
                }
            }
            DataType::Null => Ok(null()),
            // A temporal component (`d.year`), or a map entry / property of a value whose
            // kind only rows tell.
            t if is_any(&t) || is_temporal_type(&t) => {
                Ok(CypherFn::Dynamic.call(vec![lit(format!(".{}", key.name)), t_expr]))
            }
            other => sem_err!(
                InvalidArgumentType,
                target.span,
                "cannot read property `{}` of a value of type {other}",
                key.name
            ),
        }
    }

    /// A whole node or relationship as a value: a struct with `__label` / `__type` first, then
    /// the properties; null when the entity is (an OPTIONAL MATCH miss).
    pub fn entity_value(&self, b: &Binding) -> Result<Expr> {
        self.entity_struct(b, true)
    }

    /// A node or relationship as a value that only compares: its label / type and identity,
    /// no properties (comparisons of entity values read only those).
    pub(super) fn entity_identity(&self, b: &Binding) -> Result<Expr> {
        self.entity_struct(b, false)
    }

    fn entity_struct(&self, b: &Binding, with_props: bool) -> Result<Expr> {
        let ents = self.entities();
        let (tag, name, props, prefix) = match b {
            Binding::Node { label, prefix } => (
                "__label",
                lit(label.clone()),
                &ents.node(label).props,
                prefix,
            ),
            Binding::Rel { rel, prefix } => {
                let info = ents.rel(*rel);
                (
                    "__type",
                    lit(info.cfg.rel_type.clone()),
                    &info.props,
                    prefix,
                )
            }
            Binding::Nodes { prefix, props, .. } => {
                ("__label", col(&label_col(prefix)), props, prefix)
            }
            Binding::Rels { prefix, props, .. } => {
                ("__type", col(&type_col(prefix)), props, prefix)
            }
            Binding::RelList { .. } => {
                return Err(Error::semantic(
                    crate::error::SemanticKind::Unsupported,
                    "unsupported: the relationships of a variable-length pattern as a value",
                    Span::default(),
                ))
            }
            Binding::Value { col: c } => return Ok(col(c)),
            Binding::Path { parts, shape } => return self.path_value(parts, shape),
        };
        let mut args = vec![lit(tag), name];
        // Its identity (as in a path): values compare as the entity they are.
        args.extend(self.identity_fields(b)?);
        for (p, _) in props
            .iter()
            .filter(|(p, _)| with_props && ents.visible(b, p))
        {
            args.push(lit(p.clone()));
            args.push(col(&prop_col(prefix, p)));
        }
        let id = col(&ents.identity_col(b));
        Ok(when(id.is_null(), null()).otherwise(f::named_struct(args))?)
    }

    fn binary(
        &self,
        op: BinaryOp,
        l: &ast::Expr,
        r: &ast::Expr,
        span: Span,
        cx: &ExprCtx<'_>,
    ) -> Result<Expr> {
        if matches!(op, BinaryOp::Eq | BinaryOp::Neq) {
            let eq = match self.entity_equality(l, r, cx)? {
                Some(eq) => Some(eq),
                None => self.literal_equality(l, r, span, cx)?,
            };
            if let Some(eq) = eq {
                return Ok(if op == BinaryOp::Eq {
                    eq
                } else {
                    Expr::Not(Box::new(eq))
                });
            }
        }
        if op == BinaryOp::In {
            return self.in_list(l, r, cx);
        }
        if matches!(op, BinaryOp::And | BinaryOp::Or) {
            if let Some(e) = self.bool_chain(op, l, r, cx)? {
                return Ok(e);
            }
        }
        let a = self.expr(l, cx)?;
        let b = self.expr(r, cx)?;
        let (ta, tb) = (self.type_of(&a, cx.schema)?, self.type_of(&b, cx.schema)?);
        let bool_op = |o: Operator| -> Result<Expr> {
            for (t, s) in [(&ta, l.span), (&tb, r.span)] {
                if !matches!(t, DataType::Boolean | DataType::Null) {
                    return sem_err!(
                        InvalidArgumentType,
                        s,
                        "{} expects booleans, got {t}",
                        op.symbol()
                    );
                }
            }
            Ok(binary_expr(a.clone(), o, b.clone()))
        };
        let out = match op {
            BinaryOp::And => bool_op(Operator::And)?,
            BinaryOp::Or => bool_op(Operator::Or)?,
            // On booleans `<>` is XOR with Cypher's nulls (each operand appears once, so
            // a chain of XORs stays as big as written).
            BinaryOp::Xor => bool_op(Operator::NotEq)?,
            BinaryOp::Eq
            | BinaryOp::Neq
            | BinaryOp::Lt
            | BinaryOp::Le
            | BinaryOp::Gt
            | BinaryOp::Ge => return self.comparison(op, a, b, &ta, &tb),
            BinaryOp::Add
            | BinaryOp::Sub
            | BinaryOp::Mul
            | BinaryOp::Div
            | BinaryOp::Mod
            | BinaryOp::Pow => self.arithmetic(op, (a, &ta), (b, &tb), span)?,
            BinaryOp::StartsWith | BinaryOp::EndsWith | BinaryOp::Contains
                if is_any(&ta) || is_any(&tb) =>
            {
                let f = match op {
                    BinaryOp::StartsWith => CypherFn::StartsWith,
                    BinaryOp::EndsWith => CypherFn::EndsWith,
                    _ => CypherFn::Contains,
                };
                f.call(vec![a, b])
            }
            BinaryOp::StartsWith | BinaryOp::EndsWith | BinaryOp::Contains => {
                if !(is_string(&ta) || ta == DataType::Null)
                    || !(is_string(&tb) || tb == DataType::Null)
                {
                    // Cypher: string predicates on non-strings are null.
                    return Ok(null());
                }
                match op {
                    BinaryOp::StartsWith => f::starts_with(a, b),
                    BinaryOp::EndsWith => f::ends_with(a, b),
                    _ => f::contains(a, b),
                }
            }
            BinaryOp::RegexMatch => {
                return sem_err!(
                    Unsupported,
                    span,
                    "unsupported: regular expression match (=~)"
                )
            }
            BinaryOp::In => unreachable!("handled above"),
        };
        Ok(out)
    }

    /// `a AND b AND ...` (or `OR`) of more than `ast::CHAIN_MIN` operands (a balanced tree
    /// of the parser's): one function over all of them; `None` for a shorter chain.
    fn bool_chain(
        &self,
        op: BinaryOp,
        l: &ast::Expr,
        r: &ast::Expr,
        cx: &ExprCtx<'_>,
    ) -> Result<Option<Expr>> {
        let mut operands: Vec<&ast::Expr> = Vec::new();
        let mut stack = vec![r, l];
        while let Some(e) = stack.pop() {
            match &e.kind {
                ExprKind::Binary(o, a, b) if *o == op => {
                    stack.push(b);
                    stack.push(a);
                }
                _ => operands.push(e),
            }
        }
        if operands.len() <= ast::CHAIN_MIN {
            return Ok(None);
        }
        let mut args = Vec::with_capacity(operands.len());
        for e in operands {
            let x = self.expr(e, cx)?;
            let t = self.type_of(&x, cx.schema)?;
            if !matches!(t, DataType::Boolean | DataType::Null) {
                return sem_err!(
                    InvalidArgumentType,
                    e.span,
                    "{} expects booleans, got {t}",
                    op.symbol()
                );
            }
            args.push(x);
        }
        Ok(Some(crate::functions::chain::BoolChain::call(
            op == BinaryOp::And,
            args,
        )))
    }

    /// A long chain of arithmetic operators: one function folding the operands left to right,
    /// each step lowered as `l op r` for its operand types (see `functions/chain.rs`).
    fn operator_chain(
        &self,
        first: &ast::Expr,
        rest: &[(BinaryOp, ast::Expr)],
        cx: &ExprCtx<'_>,
    ) -> Result<Expr> {
        use crate::functions::chain::{ChainEval, Step, LEFT, RIGHT};
        let mut args = vec![self.expr(first, cx)?];
        let mut t = self.type_of(&args[0], cx.schema)?;
        let mut kinds: Vec<(BinaryOp, DataType, DataType)> = Vec::new();
        let mut steps: Vec<Step> = Vec::new();
        let mut order = Vec::with_capacity(rest.len());
        for (op, e) in rest {
            let x = self.expr(e, cx)?;
            let tx = self.type_of(&x, cx.schema)?;
            let kind = (*op, t.clone(), tx.clone());
            let k = match kinds.iter().position(|k| k == &kind) {
                Some(k) => k,
                None => {
                    let schema = DFSchema::try_from(arrow::datatypes::Schema::new(vec![
                        Field::new(LEFT, t.clone(), true),
                        Field::new(RIGHT, tx.clone(), true),
                    ]))?;
                    let span = first.span.union(&e.span);
                    let body = self.arithmetic(*op, (col(LEFT), &t), (col(RIGHT), &tx), span)?;
                    // Compiled on its own, past DataFusion's analyzer: its casts here.
                    let mut coerce =
                        datafusion::optimizer::analyzer::type_coercion::TypeCoercionRewriter::new(
                            &schema,
                        );
                    let body =
                        datafusion::common::tree_node::TreeNode::rewrite(body, &mut coerce)?.data;
                    let out = self.type_of(&body, &schema)?;
                    kinds.push(kind);
                    steps.push(Step {
                        expr: body,
                        schema: Arc::new(schema),
                        out,
                    });
                    steps.len() - 1
                }
            };
            t = steps[k].out.clone();
            order.push(k as u32);
            args.push(x);
        }
        Ok(ChainEval::call(steps, order, t, args))
    }

    /// `a op b` of an arithmetic operator (`+` of strings and lists too) over lowered
    /// operands of types `ta` and `tb`.
    pub(super) fn arithmetic(
        &self,
        op: BinaryOp,
        (a, ta): (Expr, &DataType),
        (b, tb): (Expr, &DataType),
        span: Span,
    ) -> Result<Expr> {
        Ok(match op {
            BinaryOp::Add => {
                if is_list(ta) || is_list(tb) {
                    self.list_add(a, ta, b, tb)?
                } else if dynamic(ta) || dynamic(tb) {
                    value_arith("+", a, b)
                } else if is_string(ta) || is_string(tb) {
                    let s = |x: Expr, t: &DataType| {
                        if is_string(t) {
                            x
                        } else {
                            cast(x, DataType::Utf8)
                        }
                    };
                    binary_expr(s(a, ta), Operator::StringConcat, s(b, tb))
                } else {
                    self.arith(a, Operator::Plus, b, ta, tb, span)?
                }
            }
            BinaryOp::Sub => self.arith(a, Operator::Minus, b, ta, tb, span)?,
            BinaryOp::Mul => self.arith(a, Operator::Multiply, b, ta, tb, span)?,
            BinaryOp::Div => self.arith(a, Operator::Divide, b, ta, tb, span)?,
            BinaryOp::Mod => self.arith(a, Operator::Modulo, b, ta, tb, span)?,
            BinaryOp::Pow if dynamic(ta) || dynamic(tb) => value_arith("^", a, b),
            BinaryOp::Pow => {
                self.arith(a.clone(), Operator::Plus, b.clone(), ta, tb, span)?;
                f::power(cast(a, DataType::Float64), cast(b, DataType::Float64))
            }
            other => {
                return Err(Error::Internal(format!(
                    "`{}` is not an arithmetic operator",
                    other.symbol()
                )))
            }
        })
    }

    /// `a = b` between two node or relationship variables: same identity. `None` when either
    /// is not an entity.
    fn entity_equality(
        &self,
        l: &ast::Expr,
        r: &ast::Expr,
        cx: &ExprCtx<'_>,
    ) -> Result<Option<Expr>> {
        let (ExprKind::Variable(a), ExprKind::Variable(b)) = (&l.kind, &r.kind) else {
            return Ok(None);
        };
        let (Some(ba), Some(bb)) = (cx.scope.get(a), cx.scope.get(b)) else {
            return Ok(None);
        };
        if let Some(eq) = self.entity_value_equality(ba, bb, cx)? {
            return Ok(Some(eq));
        }
        // Paths and relationship lists compare as values.
        if !ba.is_entity() || !bb.is_entity() {
            return Ok(None);
        }
        let ents = self.entities();
        let same_kind = match (ba, bb) {
            (Binding::Node { label: x, .. }, Binding::Node { label: y, .. }) => Some(x == y),
            (Binding::Rel { rel: x, .. }, Binding::Rel { rel: y, .. }) => Some(x == y),
            (Binding::Value { .. }, _) | (_, Binding::Value { .. }) => None,
            _ => Some(false),
        };
        let both_nodes = matches!(ba, Binding::Node { .. } | Binding::Nodes { .. })
            && matches!(bb, Binding::Node { .. } | Binding::Nodes { .. });
        let both_rels = matches!(ba, Binding::Rel { .. } | Binding::Rels { .. })
            && matches!(bb, Binding::Rel { .. } | Binding::Rels { .. });
        let several = matches!(ba, Binding::Nodes { .. } | Binding::Rels { .. })
            || matches!(bb, Binding::Nodes { .. } | Binding::Rels { .. });
        if several && (both_nodes || both_rels) {
            // Several labels / tables: same label (table) and same key (edge id).
            let [la, ka] = ents.identity_parts(ba).expect("entity");
            let [lb, kb] = ents.identity_parts(bb).expect("entity");
            let eq = la.eq(lb).and(ka.eq(kb));
            return Ok(Some(eq));
        }
        if let Some(same) = same_kind {
            let (ia, ib) = (col(&ents.identity_col(ba)), col(&ents.identity_col(bb)));
            let eq = if same {
                ia.eq(ib)
            } else {
                when(ia.is_null().or(ib.is_null()), null()).otherwise(lit(false))?
            };
            return Ok(Some(eq));
        }
        Ok(None)
    }

    /// An entity and a value holding one of its kind (a node taken from a list, a
    /// relationship from a path), as in `UNWIND friends AS f MATCH (f)<-[:T]-(m)`: their
    /// identities equal, an equality of two columns a join can hash on. `None` for anything
    /// else (a value of another or of mixed type compares as a value).
    fn entity_value_equality(
        &self,
        ba: &Binding,
        bb: &Binding,
        cx: &ExprCtx<'_>,
    ) -> Result<Option<Expr>> {
        let (ent, val) = match (ba, bb) {
            (Binding::Value { col: c }, e) | (e, Binding::Value { col: c }) if e.is_entity() => {
                (e, c)
            }
            _ => return Ok(None),
        };
        let node = matches!(ent, Binding::Node { .. } | Binding::Nodes { .. });
        let (first, key) = if node {
            ("__label", "__nid")
        } else {
            ("__type", "__rid")
        };
        let Ok(field) = cx.schema.field_with_unqualified_name(val) else {
            return Ok(None);
        };
        let value_id = match field.data_type() {
            DataType::Struct(fs)
                if fs.first().is_some_and(|x| x.name() == first)
                    && fs.iter().any(|x| x.name() == key) =>
            {
                f::get_field(col(val), key)
            }
            // A value of mixed kind (an element of a list of nodes and other things): its
            // identity text, "" where it holds no entity of this kind.
            t if is_any(t) => CypherFn::Identity.call(vec![col(val), lit(key)]),
            _ => return Ok(None),
        };
        let Some(id) = self.identity_fields(ent)?.into_iter().nth(1) else {
            return Ok(None);
        };
        Ok(Some(id.eq(value_id)))
    }

    /// `x IN list`: a literal list (or list parameter) item by item, three-valued; any other
    /// list through `CypherFn::In`.
    fn in_list(&self, l: &ast::Expr, r: &ast::Expr, cx: &ExprCtx<'_>) -> Result<Expr> {
        let x = self.expr(l, cx)?;
        // A list parameter is a list literal too (element-wise, three-valued `IN`).
        let r = match &r.kind {
            ExprKind::Param(p) if self.param_placeholder(p).is_none() => {
                match self.param_literal(p) {
                    Some(
                        v @ ast::Expr {
                            kind: ExprKind::List(_),
                            ..
                        },
                    ) => v,
                    _ => r,
                }
            }
            _ => r,
        };
        if let ExprKind::List(items) = &r.kind {
            if items.is_empty() {
                return Ok(lit(false));
            }
            // `n IN [a, b]` over node or relationship variables: their identities, not their
            // whole property records (three-valued as an OR of the equalities is).
            let mut eqs = Vec::new();
            for i in items {
                match self.entity_equality(l, i, cx)? {
                    Some(eq) => eqs.push(eq),
                    None => break,
                }
            }
            if eqs.len() == items.len() {
                return Ok(balanced_or(eqs));
            }
            let xt = self.type_of(&x, cx.schema)?;
            // Items of another kind can never equal x (`1 IN ['1']` is false).
            let mut xs = Vec::new();
            // The type x and the items share; none (mixed kinds, `[[1], 'b']`): compared
            // value by value.
            let mut shared = Some(xt.clone());
            for i in items {
                let e = self.expr(i, cx)?;
                let t = self.type_of(&e, cx.schema)?;
                if comparable(&xt, &t) {
                    shared = shared.and_then(|s| unify(&s, &t));
                    xs.push(e);
                }
            }
            let mixed = shared.as_ref().is_none_or(is_any);
            if xs.is_empty() {
                return Ok(when(x.is_null(), null()).otherwise(lit(false))?);
            }
            if is_list(&xt) || matches!(xt, DataType::Struct(_)) || mixed {
                // Lists and maps compare element by element: an OR of the equalities.
                let eqs = xs
                    .into_iter()
                    .map(|e| CypherFn::Eq.call(vec![x.clone(), e]));
                return Ok(balanced_or(eqs.collect()));
            }
            if matches!(xt, DataType::Float32 | DataType::Float64) {
                // NaN equals nothing (DataFusion's IN finds it): no match, so null if an
                // item is null, else false.
                let any_null = nf::array_has(
                    nf::make_array(xs.iter().map(|e| e.clone().is_null()).collect()),
                    lit(true),
                );
                let no_match = when(any_null, null()).otherwise(lit(false))?;
                return Ok(when(f::isnan(x.clone()), no_match).otherwise(x.in_list(xs, false))?);
            }
            return Ok(x.in_list(xs, false));
        }
        let list = self.expr(r, cx)?;
        let lt = self.type_of(&list, cx.schema)?;
        if lt == DataType::Null {
            return Ok(null());
        }
        if !is_list(&lt) {
            return sem_err!(
                InvalidArgumentType,
                r.span,
                "IN expects a list on the right, got {lt}"
            );
        }
        // An entity is found by its identity: no record of its properties built per row.
        let x = match &l.kind {
            ExprKind::Variable(v) => match cx.scope.get(v) {
                Some(b) if b.is_entity() => self.entity_identity(b)?,
                _ => x,
            },
            _ => x,
        };
        // Three-valued: not found but some comparison was null (a null element) is null.
        Ok(CypherFn::In.call(vec![x, list]))
    }

    /// `=`, `<>`, `<`, `<=`, `>`, `>=` with Cypher's semantics: different kinds are never equal
    /// and not ordered, lists and maps element by element, NaN equal to nothing.
    fn comparison(
        &self,
        op: BinaryOp,
        a: Expr,
        b: Expr,
        ta: &DataType,
        tb: &DataType,
    ) -> Result<Expr> {
        if !comparable(ta, tb) {
            // Values of different kinds are never equal; ordering them is null.
            let v = match op {
                BinaryOp::Eq => lit(false),
                BinaryOp::Neq => lit(true),
                _ => return Ok(null()),
            };
            return Ok(when(a.is_null().or(b.is_null()), null()).otherwise(v)?);
        }
        let nested = |t: &DataType| is_list(t) || matches!(t, DataType::Struct(_)) || is_any(t);
        if nested(ta) || nested(tb) {
            // Element by element, three-valued (`[1, 2] = [1, null]` is null).
            let f = match op {
                BinaryOp::Eq | BinaryOp::Neq => CypherFn::Eq,
                BinaryOp::Lt => CypherFn::Lt,
                BinaryOp::Le => CypherFn::Le,
                BinaryOp::Gt => CypherFn::Gt,
                _ => CypherFn::Ge,
            };
            let e = f.call(vec![a, b]);
            return Ok(if op == BinaryOp::Neq {
                Expr::Not(Box::new(e))
            } else {
                e
            });
        }
        let o = match op {
            BinaryOp::Eq => Operator::Eq,
            BinaryOp::Neq => Operator::NotEq,
            BinaryOp::Lt => Operator::Lt,
            BinaryOp::Le => Operator::LtEq,
            BinaryOp::Gt => Operator::Gt,
            _ => Operator::GtEq,
        };
        let is_float = |t: &DataType| matches!(t, DataType::Float64 | DataType::Float32);
        if (is_float(ta) || is_float(tb)) && !a.is_volatile() && !b.is_volatile() {
            // Cypher: NaN equals nothing and is not ordered (DataFusion sorts it last).
            let mut nan = Vec::new();
            if is_float(ta) {
                nan.push(f::isnan(a.clone()));
            }
            if is_float(tb) {
                nan.push(f::isnan(b.clone()));
            }
            let any_nan = nan
                .into_iter()
                .reduce(Expr::or)
                .expect("one side is a float");
            return Ok(when(any_nan, lit(op == BinaryOp::Neq)).otherwise(binary_expr(a, o, b))?);
        }
        Ok(binary_expr(a, o, b))
    }

    /// `[a, b] = [c, d]` and `{k: a} = {k: b}` between literals compare element-wise with
    /// three-valued logic (`[1, 2] = [null, 2]` is null); `None` when not both literals.
    fn literal_equality(
        &self,
        l: &ast::Expr,
        r: &ast::Expr,
        span: Span,
        cx: &ExprCtx<'_>,
    ) -> Result<Option<Expr>> {
        let pairs: Vec<(&ast::Expr, &ast::Expr)> = match (&l.kind, &r.kind) {
            (ExprKind::List(a), ExprKind::List(b)) => {
                if a.len() != b.len() {
                    return Ok(Some(lit(false)));
                }
                a.iter().zip(b).collect()
            }
            (ExprKind::Map(a), ExprKind::Map(b)) => {
                let mut ka: Vec<&str> = a.iter().map(|(k, _)| k.name.as_str()).collect();
                let mut kb: Vec<&str> = b.iter().map(|(k, _)| k.name.as_str()).collect();
                ka.sort();
                kb.sort();
                if ka != kb {
                    return Ok(Some(lit(false)));
                }
                a.iter()
                    .map(|(k, v)| {
                        let w = &b
                            .iter()
                            .find(|(k2, _)| k2.name == k.name)
                            .expect("same keys")
                            .1;
                        (v, w)
                    })
                    .collect()
            }
            _ => return Ok(None),
        };
        let mut out = lit(true);
        for (x, y) in pairs {
            let e = self.binary(BinaryOp::Eq, x, y, span, cx)?;
            out = out.and(e);
        }
        Ok(Some(out))
    }

    fn arith(
        &self,
        a: Expr,
        o: Operator,
        b: Expr,
        ta: &DataType,
        tb: &DataType,
        span: Span,
    ) -> Result<Expr> {
        if dynamic(ta) || dynamic(tb) {
            let sym = match o {
                Operator::Plus => "+",
                Operator::Minus => "-",
                Operator::Multiply => "*",
                Operator::Divide => "/",
                Operator::Modulo => "%",
                _ => "^",
            };
            return Ok(value_arith(sym, a, b));
        }
        let ok = |t: &DataType| is_numeric(t) || t == &DataType::Null;
        if !ok(ta) || !ok(tb) {
            return sem_err!(
                InvalidArgumentType,
                span,
                "arithmetic `{o}` is not defined for {ta} and {tb}"
            );
        }
        if ta == &DataType::Null || tb == &DataType::Null {
            return Ok(null());
        }
        // Cypher's integers are 64-bit and an overflow is an error (arrow's kernels wrap).
        if ta.is_integer() && tb.is_integer() {
            let checked = match o {
                Operator::Plus => Some(CypherFn::Add),
                Operator::Minus => Some(CypherFn::Sub),
                Operator::Multiply => Some(CypherFn::Mul),
                _ => None,
            };
            if let Some(f) = checked {
                return Ok(f.call(vec![a, b]));
            }
        }
        Ok(binary_expr(a, o, b))
    }

    fn function(
        &self,
        name: &str,
        distinct: bool,
        args: &[ast::Expr],
        span: Span,
        cx: &ExprCtx<'_>,
    ) -> Result<Expr> {
        let lname = name.to_lowercase();
        if ast::AGGREGATES.contains(&lname.as_str()) {
            return sem_err!(
                InvalidAggregation,
                span,
                "aggregate {name}(...) is not allowed {}",
                cx.no_aggregates
            );
        }
        if distinct {
            return sem_err!(
                InvalidArgumentType,
                span,
                "DISTINCT is only allowed in aggregates"
            );
        }
        let entry = scalar::lookup(&lname);
        if let Some(f) = entry {
            if !(f.arity.0..=f.arity.1).contains(&args.len()) {
                return sem_err!(
                    InvalidArgumentValue,
                    span,
                    "{name}() takes {} argument(s), got {}",
                    f.arity_text(),
                    args.len()
                );
            }
        }
        if let Some(e) = self.entity_function(&lname, name, args, cx)? {
            return Ok(e);
        }
        let xs = args
            .iter()
            .map(|a| self.expr(a, cx))
            .collect::<Result<Vec<_>>>()?;
        let Some(f) = entry else {
            return sem_err!(UnknownFunction, span, "Unknown function `{name}`");
        };
        let types = xs
            .iter()
            .map(|x| self.type_of(x, cx.schema))
            .collect::<Result<Vec<_>>>()?;
        // Only the conversions read values of mixed kind; the rest need one type.
        if !f.reads_mixed {
            if let Some(k) = types.iter().position(is_any) {
                return mixed_kind(args[k].span, &format!("{name}()"));
            }
        }
        // Arguments of a kind the function doesn't take: a TypeError of the values, raised
        // when a row evaluates the call (openCypher checks argument types at run time).
        for (k, (want, t)) in f.kinds.iter().zip(&types).enumerate() {
            if *t != DataType::Null && !want.accepts(t) {
                return Ok(CypherFn::fail(
                    ErrorClass::TypeError,
                    "InvalidArgumentType",
                    &format!(
                        "{name}() expects {} as argument {}, got {t}",
                        want.name(),
                        k + 1
                    ),
                    &DataType::Null,
                )?);
            }
        }
        (f.lower)(&scalar::Call {
            name,
            args: xs,
            types,
            spans: args.iter().map(|a| a.span).collect(),
        })
    }

    /// A function reading a variable's binding rather than a value: `id`, `labels`, `type`,
    /// `keys` of a node or relationship, `size` / `length` of a relationship list. `None`
    /// when the argument is not such a variable.
    fn entity_function(
        &self,
        lname: &str,
        name: &str,
        args: &[ast::Expr],
        cx: &ExprCtx<'_>,
    ) -> Result<Option<Expr>> {
        let [arg] = args else { return Ok(None) };
        let ExprKind::Variable(v) = &arg.kind else {
            return Ok(None);
        };
        let Some(b) = cx.scope.get(v) else {
            return Ok(None);
        };
        let ents = self.entities();
        let value = match (lname, b) {
            ("length", Binding::Path { parts, .. }) => return Ok(Some(self.path_length(parts))),
            ("nodes" | "relationships", Binding::Path { parts, shape }) => {
                let field = if lname == "nodes" {
                    super::scope::PATH_NODES
                } else {
                    super::scope::PATH_RELS
                };
                return Ok(Some(f::get_field(self.path_value(parts, shape)?, field)));
            }
            ("size" | "length", Binding::RelList { prefix, .. }) => {
                return Ok(Some(cast(
                    nf::cardinality(col(&super::scope::eids_col(prefix))),
                    DataType::Int64,
                )));
            }
            // A relationship's id is unique across its tables: the table above bit 40, the
            // edge (its row in the table) below. A node's id is its key.
            ("id", Binding::Rel { .. } | Binding::Rels { .. }) => {
                let [table, edge] = ents.identity_parts(b).expect("an entity");
                let table = cast(table, DataType::Int64) * lit(1i64 << 40);
                return Ok(Some(table + cast(edge, DataType::Int64)));
            }
            ("id", b) if b.is_entity() => {
                return Ok(Some(cast(col(&ents.identity_col(b)), DataType::Int64)));
            }
            ("labels", Binding::Nodes { prefix, .. }) => {
                scalar::labels_of_tag(col(&label_col(prefix)))?
            }
            ("labels", Binding::Node { label, .. }) => {
                let labels = &ents.node(label).labels;
                if labels.is_empty() {
                    scalar::empty_list(&DataType::Utf8)
                } else {
                    nf::make_array(labels.iter().map(|l| lit(l.clone())).collect())
                }
            }
            ("type", Binding::Rels { prefix, .. }) => col(&type_col(prefix)),
            ("type", Binding::Rel { rel, .. }) => lit(ents.rel(*rel).cfg.rel_type.clone()),
            ("keys", b) if b.is_entity() => self.entity_keys(b)?,
            ("properties", b) if b.is_entity() => {
                CypherFn::Properties.call(vec![self.entity_value(b)?])
            }
            ("id" | "labels" | "type" | "keys" | "properties", b)
                if !matches!(b, Binding::Value { .. }) =>
            {
                return sem_err!(
                    InvalidArgumentType,
                    arg.span,
                    "{name}() is not defined for a {}",
                    b.kind_name()
                )
            }
            _ => return Ok(None),
        };
        // A null entity (OPTIONAL MATCH) has none.
        let id = col(&ents.identity_col(b));
        Ok(Some(when(id.is_null(), null()).otherwise(value)?))
    }

    /// The properties an entity has (a null one is not stored), as a list of names.
    fn entity_keys(&self, b: &Binding) -> Result<Expr> {
        let ents = self.entities();
        let (props, _) = ents.props_of(b).expect("entity");
        let prefix = b.prefix();
        let parts: Vec<Expr> = props
            .iter()
            .filter(|(p, _)| ents.visible(b, p))
            .map(|(p, _)| {
                Ok(when(
                    col(&prop_col(prefix, p)).is_not_null(),
                    nf::make_array(vec![lit(p.clone())]),
                )
                .otherwise(empty_list(&DataType::Utf8))?)
            })
            .collect::<Result<_>>()?;
        Ok(if parts.is_empty() {
            empty_list(&DataType::Utf8)
        } else {
            nf::flatten(nf::make_array(parts))
        })
    }
}

/// A Cypher literal as a DataFusion scalar.
pub fn literal(l: &Literal) -> ScalarValue {
    match l {
        Literal::Integer(i) => ScalarValue::Int64(Some(*i)),
        Literal::Float(x) => ScalarValue::Float64(Some(*x)),
        Literal::String(s) => ScalarValue::Utf8(Some(s.clone())),
        Literal::Bool(b) => ScalarValue::Boolean(Some(*b)),
        Literal::Null => ScalarValue::Null,
    }
}

/// An empty list value of the given element type.
pub(crate) use crate::functions::registry::empty_list;

/// The OR of `terms` (not empty) as a tree of depth log2 of their number: a chain of one OR
/// per item (`x IN` a written list of 2,000 maps) overflows the stack of every pass that
/// walks it.
fn balanced_or(mut terms: Vec<Expr>) -> Expr {
    while terms.len() > 1 {
        let mut paired = Vec::with_capacity(terms.len().div_ceil(2));
        let mut it = terms.into_iter();
        while let Some(a) = it.next() {
            paired.push(match it.next() {
                Some(b) => a.or(b),
                None => a,
            });
        }
        terms = paired;
    }
    terms.pop().expect("not empty")
}
