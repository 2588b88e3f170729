//! Cypher's equality and ordering of values (openCypher's comparability rules), on
//! DataFusion `ScalarValue`s: what the list / map functions of `super` evaluate per row.
//!
//! - `null` compared with anything is null; values of different kinds are never equal and
//!   are not ordered (null), integers and floats compare as numbers; NaN equals nothing and
//!   orders before nothing (every ordering comparison with it is false).
//! - Lists are equal when they have the same length and their elements are pairwise equal;
//!   a pair that is false makes them unequal whatever else they hold, otherwise a pair that
//!   is null makes the answer null (`[1, 2] = [1, null]` is null, `[1, 2] = [3, null]` false).
//! - Lists order lexicographically: the first pair that is not equal decides, a pair that
//!   cannot be compared (null, different kinds) makes the answer null; a list that is a
//!   prefix of the other is the smaller one (`[1] < [1, null]`).
//! - Maps are equal when they have the same keys and equal values (as lists of values).

use arrow::array::{Array, AsArray};
use arrow::datatypes::DataType;
use cypher::ast;
use datafusion::common::ScalarValue;
use std::cmp::Ordering;

/// A value as Cypher sees it.
#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    Null,
    Bool(bool),
    Int(i64),
    Float(f64),
    Str(String),
    List(Vec<Value>),
    Map(Vec<(String, Value)>),
    /// A date, time, datetime or duration (`super::temporal`).
    Temporal(super::temporal::Temporal),
    /// Anything else (binary): compared by DataFusion's own rules. A parameter may also be
    /// a long list held as one Arrow list ([`TypedListBuilder`](super::any::TypedListBuilder)):
    /// 8 bytes an integer where a `Value` takes 64.
    Other(ScalarValue),
}

impl Value {
    pub fn from_scalar(s: &ScalarValue) -> Value {
        if s.is_null() {
            return Value::Null;
        }
        match s {
            ScalarValue::Boolean(Some(b)) => Value::Bool(*b),
            ScalarValue::Int8(Some(x)) => Value::Int(*x as i64),
            ScalarValue::Int16(Some(x)) => Value::Int(*x as i64),
            ScalarValue::Int32(Some(x)) => Value::Int(*x as i64),
            ScalarValue::Int64(Some(x)) => Value::Int(*x),
            ScalarValue::UInt8(Some(x)) => Value::Int(*x as i64),
            ScalarValue::UInt16(Some(x)) => Value::Int(*x as i64),
            ScalarValue::UInt32(Some(x)) => Value::Int(*x as i64),
            ScalarValue::UInt64(Some(x)) => match i64::try_from(*x) {
                Ok(i) => Value::Int(i),
                Err(_) => Value::Float(*x as f64),
            },
            ScalarValue::Float32(Some(x)) => Value::Float(*x as f64),
            ScalarValue::Float64(Some(x)) => Value::Float(*x),
            ScalarValue::Utf8(Some(x))
            | ScalarValue::LargeUtf8(Some(x))
            | ScalarValue::Utf8View(Some(x)) => Value::Str(x.clone()),
            ScalarValue::LargeBinary(Some(b)) => super::any::decode(b),
            ScalarValue::List(a) => Value::List(elements(a.value(0).as_ref())),
            ScalarValue::LargeList(a) => Value::List(elements(a.value(0).as_ref())),
            ScalarValue::FixedSizeList(a) => Value::List(elements(a.value(0).as_ref())),
            ScalarValue::Struct(a) => {
                let fields = a.fields();
                Value::Map(
                    fields
                        .iter()
                        .enumerate()
                        .map(|(k, f)| (f.name().clone(), value_at(a.column(k).as_ref(), 0)))
                        .collect(),
                )
            }
            other => match super::temporal::from_scalar(other) {
                Some(t) => Value::Temporal(t),
                None => Value::Other(other.clone()),
            },
        }
    }
}

impl Value {
    /// A literal value (no `Other`) as the Cypher literal that writes it (a temporal value
    /// as its constructor called on its text); `None` for a value no literal writes (binary).
    pub fn to_literal(&self, span: cypher::Span) -> Option<ast::Expr> {
        let lit = |l: ast::Literal| ast::Expr::new(ast::ExprKind::Literal(l), span);
        Some(match self {
            Value::Null => lit(ast::Literal::Null),
            Value::Bool(b) => lit(ast::Literal::Bool(*b)),
            Value::Int(i) => lit(ast::Literal::Integer(*i)),
            Value::Float(x) => lit(ast::Literal::Float(*x)),
            Value::Str(s) => lit(ast::Literal::String(s.clone())),
            Value::List(xs) => ast::Expr::new(
                ast::ExprKind::List(
                    xs.iter()
                        .map(|x| x.to_literal(span))
                        .collect::<Option<_>>()?,
                ),
                span,
            ),
            Value::Map(entries) => ast::Expr::new(
                ast::ExprKind::Map(
                    entries
                        .iter()
                        .map(|(k, v)| Some((ast::Ident::new(k.clone(), span), v.to_literal(span)?)))
                        .collect::<Option<_>>()?,
                ),
                span,
            ),
            // The constructor call that builds it: `date('2015-07-21')`.
            Value::Temporal(t) => ast::Expr::new(
                ast::ExprKind::Function {
                    name: t.kind().name().to_lowercase(),
                    distinct: false,
                    args: vec![lit(ast::Literal::String(t.to_string()))],
                },
                span,
            ),
            // A long list parameter held as one Arrow list is written as the list.
            Value::Other(s) => match Value::from_scalar(s) {
                Value::Other(_) => return None,
                v => v.to_literal(span)?,
            },
        })
    }

    /// A cell of a column of mixed-kind values (`LargeBinary`, see README "Values of mixed
    /// kind") as the value it holds.
    pub fn decode_mixed(bytes: &[u8]) -> Value {
        super::any::decode(bytes)
    }

    /// The value as a cell of a column of mixed kind (`lance_csr::mixed_field`); `None` for
    /// null and for a value no cell holds (binary).
    pub fn encode_mixed(&self) -> Option<Vec<u8>> {
        super::any::encode_non_null(self)
    }

    /// The value as an Arrow scalar (a list mixing kinds holds mixed-kind cells).
    pub fn to_scalar(&self) -> crate::Result<ScalarValue> {
        Ok(super::any::to_scalar(self)?)
    }

    /// The value of Cypher literal text (`42`, `'Ann'`, `[1, 2]`, `{k: true}`, `-1.5`, `null`,
    /// `date('2015-07-21')`):
    /// an error naming the position when the text is not one literal.
    pub fn parse(text: &str) -> crate::Result<Value> {
        let e = cypher::parse_expression(text).map_err(|e| {
            crate::Error::Other(format!(
                "value is not a Cypher literal: {}",
                cypher::render_caret(text, &e.span, &e.message)
            ))
        })?;
        Value::from_literal(&e).ok_or_else(|| {
            crate::Error::Other(format!(
                "value must be a literal (number, 'string', true/false, null, list or map), got {text}"
            ))
        })
    }

    /// The value a Cypher literal (numbers, strings, booleans, null, lists and maps of them,
    /// a negated number, a temporal constructor of a string) writes; `None` for any other
    /// expression.
    pub fn from_literal(e: &ast::Expr) -> Option<Value> {
        Some(match &e.kind {
            ast::ExprKind::Literal(l) => match l {
                ast::Literal::Null => Value::Null,
                ast::Literal::Bool(b) => Value::Bool(*b),
                ast::Literal::Integer(i) => Value::Int(*i),
                ast::Literal::Float(x) => Value::Float(*x),
                ast::Literal::String(s) => Value::Str(s.clone()),
            },
            ast::ExprKind::List(xs) => {
                Value::List(xs.iter().map(Value::from_literal).collect::<Option<_>>()?)
            }
            ast::ExprKind::Map(entries) => Value::Map(
                entries
                    .iter()
                    .map(|(k, v)| Some((k.name.clone(), Value::from_literal(v)?)))
                    .collect::<Option<_>>()?,
            ),
            // A temporal constructor of a string: `datetime('2015-07-21T21:40Z')`.
            ast::ExprKind::Function { name, args, .. } if args.len() == 1 => {
                let kind = super::temporal::Kind::of_function(&name.to_lowercase())?;
                let Value::Str(text) = Value::from_literal(&args[0])? else {
                    return None;
                };
                Value::Temporal(super::temporal::construct(kind, &Value::Str(text)).ok()??)
            }
            ast::ExprKind::Unary(ast::UnaryOp::Neg, x) => match Value::from_literal(x)? {
                Value::Int(i) => Value::Int(i.checked_neg()?),
                Value::Float(f) => Value::Float(-f),
                _ => return None,
            },
            _ => return None,
        })
    }
}

/// The Cypher literal that writes the value (`[1, 'a']`, `{k: null}`).
impl std::fmt::Display for Value {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match (self, self.to_literal(cypher::Span::default())) {
            (_, Some(e)) => write!(f, "{e}"),
            (Value::Temporal(t), None) => write!(f, "{t}"),
            (Value::Other(s), None) => write!(f, "{s}"),
            (_, None) => write!(f, "{self:?}"),
        }
    }
}

macro_rules! value_from {
    ($t:ty, $v:ident => $e:expr) => {
        impl From<$t> for Value {
            fn from($v: $t) -> Self {
                $e
            }
        }
    };
}
value_from!(i64, v => Value::Int(v));
value_from!(i32, v => Value::Int(v as i64));
value_from!(f64, v => Value::Float(v));
value_from!(bool, v => Value::Bool(v));
value_from!(&str, v => Value::Str(v.to_string()));
value_from!(String, v => Value::Str(v));

impl<T: Into<Value>> From<Vec<T>> for Value {
    fn from(xs: Vec<T>) -> Self {
        Value::List(xs.into_iter().map(Into::into).collect())
    }
}

impl<T: Into<Value>> From<Option<T>> for Value {
    fn from(x: Option<T>) -> Self {
        x.map_or(Value::Null, Into::into)
    }
}

/// Row `i` of `a` as a value.
pub fn value_at(a: &dyn Array, i: usize) -> Value {
    if a.is_null(i) {
        return Value::Null;
    }
    use arrow::datatypes::{Float64Type, Int32Type, Int64Type};
    // The common types read in place: a scalar of a row copies it (a struct's whole row, a
    // string's bytes) before it is converted again.
    match a.data_type() {
        DataType::List(_) => Value::List(elements(a.as_list::<i32>().value(i).as_ref())),
        DataType::LargeList(_) => Value::List(elements(a.as_list::<i64>().value(i).as_ref())),
        DataType::Boolean => Value::Bool(a.as_boolean().value(i)),
        DataType::Int64 => Value::Int(a.as_primitive::<Int64Type>().value(i)),
        DataType::Int32 => Value::Int(a.as_primitive::<Int32Type>().value(i) as i64),
        DataType::Float64 => Value::Float(a.as_primitive::<Float64Type>().value(i)),
        DataType::Utf8 => Value::Str(a.as_string::<i32>().value(i).to_string()),
        DataType::LargeUtf8 => Value::Str(a.as_string::<i64>().value(i).to_string()),
        DataType::Utf8View => Value::Str(a.as_string_view().value(i).to_string()),
        DataType::LargeBinary => super::any::decode(a.as_binary::<i64>().value(i)),
        DataType::Struct(fields) => Value::Map(
            fields
                .iter()
                .zip(a.as_struct().columns())
                .map(|(f, c)| (f.name().clone(), value_at(c.as_ref(), i)))
                .collect(),
        ),
        _ => match ScalarValue::try_from_array(a, i) {
            Ok(s) => Value::from_scalar(&s),
            Err(_) => Value::Null,
        },
    }
}

fn elements(a: &dyn Array) -> Vec<Value> {
    (0..a.len()).map(|j| value_at(a, j)).collect()
}

/// `a = b` with three-valued logic: `None` is null.
pub fn equals(a: &Value, b: &Value) -> Option<bool> {
    use Value::*;
    match (a, b) {
        (Null, _) | (_, Null) => None,
        (Int(x), Int(y)) => Some(x == y),
        (Int(_) | Float(_), Int(_) | Float(_)) => Some(num_cmp(a, b) == Some(Ordering::Equal)),
        (Bool(x), Bool(y)) => Some(x == y),
        (Str(x), Str(y)) => Some(x == y),
        (List(xs), List(ys)) => {
            if xs.len() != ys.len() {
                return Some(false);
            }
            all_equal(xs.iter().zip(ys))
        }
        (Map(xs), Map(ys)) => {
            // Nodes and relationships are equal when they are the same one.
            if let (Some(x), Some(y)) = (identity(xs), identity(ys)) {
                return Some(x == y);
            }
            if xs.len() != ys.len() {
                return Some(false);
            }
            let mut pairs = Vec::with_capacity(xs.len());
            for (k, x) in xs {
                match ys.iter().find(|(k2, _)| k2 == k) {
                    Some((_, y)) => pairs.push((x, y)),
                    None => return Some(false),
                }
            }
            all_equal(pairs.into_iter())
        }
        (Temporal(x), Temporal(y)) => Some(x.equals(y)),
        (Other(x), Other(y)) => Some(x == y),
        _ => Some(false),
    }
}

/// A node, relationship or path as engine values carry them (a map whose first key is
/// `__label` or `__type`, or the two entries `__nodes` and `__rels`), taken apart for what
/// shows them to clients (the server, the Python package).
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum Entity<'v> {
    Node {
        labels: Vec<&'v str>,
        element_id: Option<&'v str>,
        /// Present properties (a null is a property the node's label lacks).
        properties: Vec<(&'v str, &'v Value)>,
    },
    Relationship {
        rel_type: &'v str,
        element_id: Option<&'v str>,
        /// Its end nodes' element ids, where the value carries them.
        start: Option<&'v str>,
        end: Option<&'v str>,
        properties: Vec<(&'v str, &'v Value)>,
    },
    Path {
        nodes: &'v [Value],
        relationships: &'v [Value],
    },
}

impl Value {
    /// `self` as a node, relationship or path; `None` for any other value.
    pub fn entity(&self) -> Option<Entity<'_>> {
        let Value::Map(es) = self else { return None };
        fn text(v: &Value) -> &str {
            match v {
                Value::Str(s) => s.as_str(),
                _ => "",
            }
        }
        let id = |name: &str| match es.iter().find(|(k, _)| k == name) {
            Some((_, Value::Str(s))) => Some(s.as_str()),
            _ => None,
        };
        let properties = || {
            es[1..]
                .iter()
                .filter(|(k, v)| !is_identity_field(k) && !matches!(v, Value::Null))
                .map(|(k, v)| (k.as_str(), v))
                .collect()
        };
        match es.first().map(|(k, _)| k.as_str()) {
            Some("__label") => Some(Entity::Node {
                labels: crate::config::split_labels(text(&es[0].1)),
                element_id: id("__nid"),
                properties: properties(),
            }),
            Some("__type") => Some(Entity::Relationship {
                rel_type: text(&es[0].1),
                element_id: id("__rid"),
                start: id("__start"),
                end: id("__end"),
                properties: properties(),
            }),
            Some("__nodes") if es.len() == 2 => match (&es[0].1, &es[1].1) {
                (Value::List(nodes), Value::List(relationships)) => Some(Entity::Path {
                    nodes,
                    relationships,
                }),
                _ => None,
            },
            _ => None,
        }
    }
}

/// Whether relationship `rel` of a path is walked from its start: it starts at `before`,
/// the node the walk reached it from (or it does not say where it starts).
pub fn walked_forwards(rel: &Value, before: &Value) -> bool {
    match (rel.entity(), before.entity()) {
        (
            Some(Entity::Relationship { start: Some(s), .. }),
            Some(Entity::Node { element_id, .. }),
        ) => element_id == Some(s),
        _ => true,
    }
}

/// The fields of a node or relationship value that identify it rather than describe it.
pub fn is_identity_field(name: &str) -> bool {
    matches!(name, "__nid" | "__rid" | "__start" | "__end")
}

/// The identity of a node or relationship value: whether it is a node, and its identity
/// text; `None` for any other value.
pub fn identity_of(v: &Value) -> Option<(bool, &str)> {
    match v {
        Value::Map(entries) => identity(entries),
        _ => None,
    }
}

/// The identity of a node or relationship value (a map whose first key is `__label` /
/// `__type` and that has `__nid` / `__rid`): its kind and identity text.
fn identity(entries: &[(String, Value)]) -> Option<(bool, &str)> {
    let node = match entries.first().map(|(k, _)| k.as_str()) {
        Some("__label") => true,
        Some("__type") => false,
        _ => return None,
    };
    let key = if node { "__nid" } else { "__rid" };
    match entries.iter().find(|(k, _)| k == key) {
        Some((_, Value::Str(id))) => Some((node, id.as_str())),
        _ => None,
    }
}

fn all_equal<'v>(pairs: impl Iterator<Item = (&'v Value, &'v Value)>) -> Option<bool> {
    // Three-valued AND of the pairs' equalities: NOT (OR of NOT).
    any(pairs.map(|(x, y)| equals(x, y).map(|b| !b))).map(|b| !b)
}

/// Three-valued OR: true if any is true, else null if any is null, else false.
fn any(results: impl Iterator<Item = Option<bool>>) -> Option<bool> {
    let mut unknown = false;
    for r in results {
        match r {
            Some(true) => return Some(true),
            None => unknown = true,
            Some(false) => {}
        }
    }
    if unknown {
        None
    } else {
        Some(false)
    }
}

/// The outcome of an ordering comparison.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Order {
    Ordered(Ordering),
    /// NaN takes part: every ordering comparison is false.
    Unordered,
    /// Null or values of kinds that don't order: every comparison is null.
    Null,
}

fn num_cmp(a: &Value, b: &Value) -> Option<Ordering> {
    match (a, b) {
        (Value::Int(x), Value::Int(y)) => Some(x.cmp(y)),
        (Value::Int(x), Value::Float(y)) => cmp_int_float(*x, *y),
        (Value::Float(x), Value::Int(y)) => cmp_int_float(*y, *x).map(Ordering::reverse),
        (Value::Float(x), Value::Float(y)) => x.partial_cmp(y),
        _ => None,
    }
}

/// 2^63: the first float above every 64-bit integer.
pub const TWO_63: f64 = 9_223_372_036_854_775_808.0;

/// An integer against a float without losing the integer's low bits.
fn cmp_int_float(i: i64, f: f64) -> Option<Ordering> {
    if f.is_nan() {
        return None;
    }
    if f >= TWO_63 {
        return Some(Ordering::Less);
    }
    if f < -TWO_63 {
        return Some(Ordering::Greater);
    }
    let t = f.trunc();
    match i.cmp(&(t as i64)) {
        Ordering::Equal if f > t => Some(Ordering::Less),
        Ordering::Equal if f < t => Some(Ordering::Greater),
        o => Some(o),
    }
}

/// How `a` orders against `b`.
pub fn order(a: &Value, b: &Value) -> Order {
    use Value::*;
    match (a, b) {
        (Null, _) | (_, Null) => Order::Null,
        (Int(_) | Float(_), Int(_) | Float(_)) => match num_cmp(a, b) {
            Some(o) => Order::Ordered(o),
            None => Order::Unordered,
        },
        (Bool(x), Bool(y)) => Order::Ordered(x.cmp(y)),
        (Str(x), Str(y)) => Order::Ordered(x.cmp(y)),
        (List(xs), List(ys)) => {
            for (x, y) in xs.iter().zip(ys) {
                match order(x, y) {
                    Order::Ordered(Ordering::Equal) => {}
                    other => return other,
                }
            }
            Order::Ordered(xs.len().cmp(&ys.len()))
        }
        (Temporal(x), Temporal(y)) => match x.order(y) {
            Some(o) => Order::Ordered(o),
            None => Order::Null,
        },
        (Other(x), Other(y)) => match x.partial_cmp(y) {
            Some(o) => Order::Ordered(o),
            None => Order::Null,
        },
        _ => Order::Null,
    }
}

/// `x IN list`: true if some element equals `x`, else null if some comparison was null (or
/// `x` is null and the list is not empty), else false.
pub fn member(x: &Value, list: &Value) -> Option<bool> {
    let Value::List(items) = list else {
        return None;
    };
    any(items.iter().map(|item| equals(x, item)))
}

#[cfg(test)]
mod tests {
    use super::Value::*;
    use super::*;

    fn l(v: Vec<Value>) -> Value {
        List(v)
    }

    #[test]
    fn list_equality_is_three_valued() {
        assert_eq!(
            equals(&l(vec![Int(1), Int(2)]), &l(vec![Int(1), Null])),
            None
        );
        assert_eq!(
            equals(&l(vec![Int(1), Int(2)]), &l(vec![Int(3), Null])),
            Some(false)
        );
        assert_eq!(
            equals(&l(vec![Int(1)]), &l(vec![Int(1), Null])),
            Some(false)
        );
        assert_eq!(equals(&l(vec![Int(1)]), &l(vec![Float(1.0)])), Some(true));
        assert_eq!(
            equals(&l(vec![Str("a".into())]), &l(vec![Int(1)])),
            Some(false)
        );
        assert_eq!(equals(&Float(f64::NAN), &Float(f64::NAN)), Some(false));
    }

    #[test]
    fn list_ordering() {
        let ge = |a: &Value, b: &Value| match order(a, b) {
            Order::Ordered(o) => Some(o != Ordering::Less),
            Order::Unordered => Some(false),
            Order::Null => None,
        };
        assert_eq!(ge(&l(vec![Int(1), Int(2)]), &l(vec![Int(1), Null])), None);
        assert_eq!(
            ge(&l(vec![Int(2), Int(2)]), &l(vec![Int(1), Null])),
            Some(true)
        );
        assert_eq!(
            order(&l(vec![Int(1)]), &l(vec![Int(1), Null])),
            Order::Ordered(Ordering::Less)
        );
        assert_eq!(
            order(&l(vec![Int(1)]), &l(vec![Str("a".into())])),
            Order::Null
        );
        assert_eq!(
            order(&Int(i64::MAX), &Float(TWO_63)),
            Order::Ordered(Ordering::Less)
        );
        assert_eq!(order(&Int(1), &Float(f64::NAN)), Order::Unordered);
    }

    #[test]
    fn membership() {
        let x = l(vec![Int(1), Int(2), Null]);
        assert_eq!(member(&x, &l(vec![Int(1), x.clone()])), None);
        assert_eq!(member(&Int(2), &l(vec![Int(1), Null])), None);
        assert_eq!(member(&Int(1), &l(vec![Int(1), Null])), Some(true));
        assert_eq!(member(&Int(2), &l(vec![Int(1)])), Some(false));
        assert_eq!(member(&Null, &l(vec![])), Some(false));
        assert_eq!(member(&Null, &l(vec![Int(1)])), None);
    }
}
