//! Scalar functions with Cypher's semantics where DataFusion's built-ins differ: integer
//! arithmetic that fails on overflow, equality / ordering / `IN` of lists and maps with nulls
//! inside (`value.rs`), the conversion functions' accepted forms, and argument checks that
//! only the values can decide. Errors are [`RuntimeError`]s with their openCypher class.

pub mod any;
pub mod budget;
pub(crate) mod chain;
pub(crate) mod comprehension;
mod dynamic;
pub mod held;
pub(crate) mod members;
mod percentile;
pub(crate) mod procedures;
pub(crate) mod registry;
mod rounding;
pub mod temporal;
pub mod value;
pub mod vector;

use crate::error::{ErrorClass, RuntimeError};
use arrow::array::{
    Array, ArrayRef, AsArray, BooleanBuilder, Float64Builder, Int64Builder, LargeBinaryBuilder,
    ListBuilder,
};
use arrow::compute::kernels::numeric;
use arrow::datatypes::DataType;
use datafusion::common::{Result, ScalarValue};
use datafusion::logical_expr::expr::ScalarFunction;
use datafusion::logical_expr::{
    ColumnarValue, Expr, ScalarFunctionArgs, ScalarUDF, ScalarUDFImpl, Signature, Volatility,
};
use std::cmp::Ordering;
use std::sync::Arc;
use value::{equals, member, order, value_at, Order, Value};

/// The functions of this module.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum CypherFn {
    /// Integer `+`, `-`, `*` on Int64: an overflow is an error.
    Add,
    Sub,
    Mul,
    /// Integer `abs` on Int64: `abs(-2^63)` is an overflow error.
    Abs,
    /// A wider integer (a decimal sum) as Int64: out of range is an overflow error.
    ToInt64,
    /// `=` of lists / maps.
    Eq,
    /// Ordering of lists.
    Lt,
    Le,
    Gt,
    Ge,
    /// `x IN list`.
    In,
    /// Its integer argument, or an error when negative (lengths, counts).
    NonNegative,
    /// `range(start, end, step)`: the integers from `start` to `end` (inclusive) by a step
    /// that is not zero; more of them than the memory limit holds is an error.
    Range,
    ToBoolean,
    ToInteger,
    ToFloat,
    /// Any value as a value of mixed kind (`any::ANY`).
    ToAny,
    /// A list as a list of values of mixed kind; any other value (of mixed kind) as a list
    /// of itself, null as null (what UNWIND reads).
    AnyItems,
    /// A node / relationship value's properties as a map (of mixed kind: absent properties,
    /// stored as nulls, are not keys).
    Properties,
    /// String predicates where an operand is of mixed kind: null unless both are strings.
    StartsWith,
    EndsWith,
    Contains,
    /// `size()` of a value of mixed kind: a list's length, a string's characters.
    Size,
    /// `percentileDisc` / `percentileCont` of a group: its values collected, the least and
    /// the greatest percentile its rows gave (`percentile.rs`).
    PercentileDisc,
    PercentileCont,
    /// `cypher_dynamic(op, args...)`: an operation the row's values decide (`dynamic.rs`): a
    /// temporal function (`date`, `duration.between`, `datetime.truncate`), a component or
    /// entry (`.year`), arithmetic (`+`), `type` / `labels` / `properties` of values of mixed
    /// kind; a value of mixed kind.
    Dynamic,
    /// `cypher_now(kind, given, timezone, now)`: `now` (the statement's time) as a value of
    /// the kind named; null when a time zone argument was `given` as null.
    Now,
    /// `toString` of a value whose kind only rows tell (temporal values included).
    ToText,
    /// `cypher_vector(measure, a, b)`: a similarity or distance of two vectors
    /// (`vector::Measure`).
    Vector,
    /// `cypher_identity(value, key)`: the identity text of a node (`key` `"__nid"`) or a
    /// relationship (`"__rid"`) held by a value of any kind, so that an entity and a value
    /// compare as a hash join's keys; null for null, `""` (no entity's) for anything else.
    Identity,
    /// `cypher_group_key(x)`: a value of mixed kind as DISTINCT and grouping compare it:
    /// numbers by value (`1` and `1.0` one key), inside lists and maps too.
    GroupKey,
    /// `cypher_unique_by_value(list)`: a list of values of mixed kind with each value's first
    /// occurrence only, values compared as [`CypherFn::GroupKey`] does (`collect(DISTINCT x)`).
    UniqueByValue,
    /// `cypher_gather(list, positions)`: the list's elements at the positions (from 0, a
    /// list of integers), in their order; null where either is null. What a comprehension
    /// over rows keeps of its list, gathered without collecting the elements themselves.
    Gather,
    /// `cypher_round(x, precision, mode)`: Neo4j's `round` (`rounding.rs`); `mode` null for
    /// the default.
    Round,
    /// `Fail(class, detail, message, typed null)`: an error of that class when evaluated on
    /// any row, of the null's type otherwise (an error only values can raise, found early).
    Fail,
    /// `cypher_element(list, i)`: `list[i]`, from 0 (negative from the end); null out of
    /// range or where either is null. One list for every row (a parameter) is read in place,
    /// not copied into each row.
    Element,
    /// `cypher_slice(list, from, to)`: `list[from..to]`, bounds from 0 (negative from the
    /// end) clamped into the list; null where the list or a bound is null. One list for
    /// every row is read in place, not copied into each row.
    Slice,
}

impl CypherFn {
    fn name(self) -> &'static str {
        match self {
            CypherFn::Add => "cypher_add",
            CypherFn::Sub => "cypher_sub",
            CypherFn::Mul => "cypher_mul",
            CypherFn::Abs => "cypher_abs",
            CypherFn::ToInt64 => "cypher_to_int64",
            CypherFn::Eq => "cypher_eq",
            CypherFn::Lt => "cypher_lt",
            CypherFn::Le => "cypher_le",
            CypherFn::Gt => "cypher_gt",
            CypherFn::Ge => "cypher_ge",
            CypherFn::In => "cypher_in",
            CypherFn::NonNegative => "cypher_non_negative",
            CypherFn::Range => "cypher_range",
            CypherFn::Fail => "cypher_fail",
            CypherFn::Size => "cypher_size",
            CypherFn::Element => "cypher_element",
            CypherFn::Slice => "cypher_slice",
            CypherFn::PercentileDisc => "cypher_percentile_disc",
            CypherFn::PercentileCont => "cypher_percentile_cont",
            CypherFn::ToBoolean => "toBoolean",
            CypherFn::ToInteger => "toInteger",
            CypherFn::ToFloat => "toFloat",
            CypherFn::ToAny => "cypher_to_any",
            CypherFn::Properties => "cypher_properties",
            CypherFn::AnyItems => "cypher_any_items",
            CypherFn::StartsWith => "cypher_starts_with",
            CypherFn::EndsWith => "cypher_ends_with",
            CypherFn::Contains => "cypher_contains",
            CypherFn::Dynamic => "cypher_dynamic",
            CypherFn::Now => "cypher_now",
            CypherFn::ToText => "cypher_to_text",
            CypherFn::Vector => "cypher_vector",
            CypherFn::Identity => "cypher_identity",
            CypherFn::Round => "cypher_round",
            CypherFn::Gather => "cypher_gather",
            CypherFn::GroupKey => "cypher_group_key",
            CypherFn::UniqueByValue => "cypher_unique_by_value",
        }
    }

    fn arity(self) -> usize {
        match self {
            CypherFn::Fail => 4,
            CypherFn::Slice
            | CypherFn::Range
            | CypherFn::PercentileDisc
            | CypherFn::PercentileCont
            | CypherFn::Vector
            | CypherFn::Round => 3,
            CypherFn::NonNegative
            | CypherFn::ToInt64
            | CypherFn::ToBoolean
            | CypherFn::ToInteger
            | CypherFn::ToFloat
            | CypherFn::ToAny
            | CypherFn::Properties
            | CypherFn::AnyItems
            | CypherFn::Size
            | CypherFn::ToText
            | CypherFn::GroupKey
            | CypherFn::UniqueByValue
            | CypherFn::Abs => 1,
            _ => 2,
        }
    }

    /// An expression of type `t` that raises `class` / `detail` with `message` when evaluated.
    pub fn fail(
        class: ErrorClass,
        detail: &str,
        message: &str,
        t: &DataType,
    ) -> datafusion::common::Result<Expr> {
        use datafusion::logical_expr::lit;
        Ok(CypherFn::Fail.call(vec![
            lit(class.name()),
            lit(detail),
            lit(message),
            lit(ScalarValue::try_from(t)?),
        ]))
    }

    /// A call of this function.
    pub fn call(self, args: Vec<Expr>) -> Expr {
        Expr::ScalarFunction(ScalarFunction::new_udf(
            Arc::new(ScalarUDF::new_from_impl(Udf::new(self))),
            args,
        ))
    }
}

/// Every function of this module.
#[cfg(feature = "distributed")]
const ALL: [CypherFn; 37] = [
    CypherFn::Element,
    CypherFn::Slice,
    CypherFn::UniqueByValue,
    CypherFn::GroupKey,
    CypherFn::Gather,
    CypherFn::Round,
    CypherFn::Vector,
    CypherFn::Identity,
    CypherFn::Dynamic,
    CypherFn::Now,
    CypherFn::ToText,
    CypherFn::Add,
    CypherFn::Sub,
    CypherFn::Mul,
    CypherFn::Abs,
    CypherFn::ToInt64,
    CypherFn::Eq,
    CypherFn::Lt,
    CypherFn::Le,
    CypherFn::Gt,
    CypherFn::Ge,
    CypherFn::In,
    CypherFn::NonNegative,
    CypherFn::Range,
    CypherFn::ToBoolean,
    CypherFn::ToInteger,
    CypherFn::ToFloat,
    CypherFn::ToAny,
    CypherFn::AnyItems,
    CypherFn::Properties,
    CypherFn::StartsWith,
    CypherFn::EndsWith,
    CypherFn::Contains,
    CypherFn::PercentileDisc,
    CypherFn::PercentileCont,
    CypherFn::Size,
    CypherFn::Fail,
];

/// The function of this module called `name` (how distributed plans name them).
#[cfg(feature = "distributed")]
pub fn udf_by_name(name: &str) -> Option<Arc<ScalarUDF>> {
    let f = ALL.into_iter().find(|f| f.name() == name)?;
    Some(Arc::new(ScalarUDF::new_from_impl(Udf::new(f))))
}

/// Each row's list of `lists` as where its first element is in the returned values and its
/// length (`None` where it is null); `None` when `lists` holds no lists.
type Bounds = Box<dyn Fn(usize) -> Option<(usize, usize)>>;

fn list_bounds(lists: &ArrayRef) -> Option<(ArrayRef, Bounds)> {
    Some(match lists.data_type() {
        DataType::List(_) => offset_bounds(lists.as_list::<i32>()),
        DataType::LargeList(_) => offset_bounds(lists.as_list::<i64>()),
        DataType::FixedSizeList(_, k) => {
            let l = lists.as_fixed_size_list().clone();
            let values = l.values().clone();
            let k = *k as usize;
            let bound = move |r: usize| l.is_valid(r).then(|| (l.value_offset(r) as usize, k));
            (values, Box::new(bound))
        }
        _ => return None,
    })
}

fn offset_bounds<O: arrow::array::OffsetSizeTrait>(
    l: &arrow::array::GenericListArray<O>,
) -> (ArrayRef, Bounds) {
    let l = l.clone();
    let values = l.values().clone();
    let bound = move |r: usize| {
        let o = l.value_offsets();
        l.is_valid(r)
            .then(|| (o[r].as_usize(), (o[r + 1] - o[r]).as_usize()))
    };
    (values, Box::new(bound))
}

/// A null of type Null for every row (or one, for scalar arguments).
fn nulls(scalar: bool, rows: usize) -> ColumnarValue {
    if scalar {
        ColumnarValue::Scalar(ScalarValue::Null)
    } else {
        ColumnarValue::Array(arrow::array::new_null_array(&DataType::Null, rows))
    }
}

/// `list[from..to]` per row (see [`CypherFn::Slice`]); a list given once (a scalar) serves
/// every row from its one array of elements.
fn slice(args: &[ColumnarValue], number_rows: usize) -> Result<ColumnarValue> {
    use arrow::array::UInt64Array;
    use arrow::buffer::NullBuffer;
    let [list, from, to] = args else {
        return datafusion::common::internal_err!("cypher_slice takes three arguments");
    };
    let scalar = args.iter().all(|a| matches!(a, ColumnarValue::Scalar(_)));
    let rows = if scalar { 1 } else { number_rows };
    let one_list = matches!(list, ColumnarValue::Scalar(_));
    let lists = match list {
        ColumnarValue::Scalar(s) => s.to_array()?,
        ColumnarValue::Array(a) => a.clone(),
    };
    let int = |b: &ColumnarValue| arrow::compute::cast(&b.to_array(rows)?, &DataType::Int64);
    let (from, to) = (int(from)?, int(to)?);
    let (from, to) = (
        from.as_primitive::<arrow::datatypes::Int64Type>(),
        to.as_primitive::<arrow::datatypes::Int64Type>(),
    );
    let (field, Some((values, bounds))) = (
        match lists.data_type() {
            DataType::List(f) | DataType::LargeList(f) | DataType::FixedSizeList(f, _) => f.clone(),
            // A null list (of type Null): null.
            _ => return Ok(nulls(scalar, rows)),
        },
        list_bounds(&lists),
    ) else {
        return datafusion::common::internal_err!("cypher_slice: a list without bounds");
    };
    let mut positions: Vec<u64> = Vec::new();
    let mut offsets: Vec<i64> = Vec::with_capacity(rows + 1);
    offsets.push(0);
    let mut valid = Vec::with_capacity(rows);
    for r in 0..rows {
        let whole = bounds(if one_list { 0 } else { r });
        let present = whole.is_some() && from.is_valid(r) && to.is_valid(r);
        valid.push(present);
        if let (true, Some((start, len))) = (present, whole) {
            // Negative bounds count from the end; then clamped into 0..=len.
            let at = |x: i64| {
                let x = if x < 0 {
                    x.saturating_add(len as i64)
                } else {
                    x
                };
                x.clamp(0, len as i64) as usize
            };
            let (a, z) = (at(from.value(r)), at(to.value(r)));
            positions.extend((a..z.max(a)).map(|i| (start + i) as u64));
        }
        offsets.push(positions.len() as i64);
    }
    let taken = arrow::compute::take(values.as_ref(), &UInt64Array::from(positions), None)?;
    let nulls = Some(NullBuffer::from(valid));
    let out = if matches!(lists.data_type(), DataType::LargeList(_)) {
        list_of::<i64>(field, offsets, taken, nulls)?
    } else {
        list_of::<i32>(field, offsets, taken, nulls)?
    };
    Ok(if scalar {
        ColumnarValue::Scalar(ScalarValue::try_from_array(&out, 0)?)
    } else {
        ColumnarValue::Array(out)
    })
}

/// A list array of `O` offsets over `values`.
fn list_of<O: arrow::array::OffsetSizeTrait>(
    field: arrow::datatypes::FieldRef,
    offsets: Vec<i64>,
    values: ArrayRef,
    nulls: Option<arrow::buffer::NullBuffer>,
) -> Result<ArrayRef> {
    let offsets = offsets
        .into_iter()
        .map(|o| O::from_usize(o as usize))
        .collect::<Option<Vec<O>>>()
        .ok_or_else(|| {
            datafusion::error::DataFusionError::Execution(
                "a slice's elements past 2^31 in one batch".into(),
            )
        })?;
    let offsets = arrow::buffer::OffsetBuffer::new(offsets.into());
    Ok(Arc::new(arrow::array::GenericListArray::<O>::try_new(
        field, offsets, values, nulls,
    )?))
}

/// `list[at]` per row (see [`CypherFn::Element`]); a list given once (a scalar) serves
/// every row from its one array of elements.
fn element(list: &ColumnarValue, at: &ColumnarValue, number_rows: usize) -> Result<ColumnarValue> {
    use arrow::array::UInt64Array;
    let scalar = matches!(
        (list, at),
        (ColumnarValue::Scalar(_), ColumnarValue::Scalar(_))
    );
    let rows = if scalar { 1 } else { number_rows };
    let one_list = matches!(list, ColumnarValue::Scalar(_));
    let lists = match list {
        ColumnarValue::Scalar(s) => s.to_array()?,
        ColumnarValue::Array(a) => a.clone(),
    };
    let at = arrow::compute::cast(&at.to_array(rows)?, &DataType::Int64)?;
    let at = at.as_primitive::<arrow::datatypes::Int64Type>();
    let Some((values, bounds)) = list_bounds(&lists) else {
        return Ok(nulls(scalar, rows));
    };
    let positions: UInt64Array = (0..rows)
        .map(|r| {
            let (start, len) = bounds(if one_list { 0 } else { r })?;
            let i = at.is_valid(r).then(|| at.value(r))?;
            let i = if i < 0 { i.checked_add(len as i64)? } else { i };
            (i >= 0 && (i as usize) < len).then(|| (start + i as usize) as u64)
        })
        .collect();
    let out = arrow::compute::take(values.as_ref(), &positions, None)?;
    Ok(if scalar {
        ColumnarValue::Scalar(ScalarValue::try_from_array(&out, 0)?)
    } else {
        ColumnarValue::Array(out)
    })
}

/// `a + b`, `a - b`, `a * b` on integers as lowered (checked): the operator and operands.
pub fn checked_arith(e: &Expr) -> Option<(datafusion::logical_expr::Operator, &Expr, &Expr)> {
    use datafusion::logical_expr::Operator;
    let Expr::ScalarFunction(f) = e else {
        return None;
    };
    let op = match f.func.name() {
        "cypher_add" => Operator::Plus,
        "cypher_sub" => Operator::Minus,
        "cypher_mul" => Operator::Multiply,
        _ => return None,
    };
    Some((op, &f.args[0], &f.args[1]))
}

#[derive(Debug, PartialEq, Eq, Hash)]
struct Udf {
    f: CypherFn,
    signature: Signature,
}

impl Udf {
    fn new(f: CypherFn) -> Self {
        Self {
            f,
            // Volatile: never evaluated while planning (it exists to fail at run time).
            signature: match f {
                CypherFn::Dynamic => Signature::variadic_any(Volatility::Immutable),
                CypherFn::Now => Signature::any(4, Volatility::Immutable),
                // Volatile: never evaluated while planning (it exists to fail at run time).
                CypherFn::Fail => Signature::any(f.arity(), Volatility::Volatile),
                // Volatile: never folded into a literal while planning, where its list (as
                // large as the memory limit allows) would be held and printed as the
                // expression's name, past any limit.
                CypherFn::Range => Signature::any(f.arity(), Volatility::Volatile),
                _ => Signature::any(f.arity(), Volatility::Immutable),
            },
        }
    }
}

impl ScalarUDFImpl for Udf {
    fn name(&self) -> &str {
        self.f.name()
    }

    fn signature(&self) -> &Signature {
        &self.signature
    }

    fn return_type(&self, arg_types: &[DataType]) -> Result<DataType> {
        Ok(match self.f {
            CypherFn::Add
            | CypherFn::Sub
            | CypherFn::Mul
            | CypherFn::Abs
            | CypherFn::ToInteger
            | CypherFn::Size
            | CypherFn::ToInt64 => DataType::Int64,
            CypherFn::NonNegative | CypherFn::Gather => arg_types[0].clone(),
            CypherFn::UniqueByValue => DataType::new_list(any::ANY, true),
            CypherFn::Fail => arg_types[3].clone(),
            CypherFn::ToFloat | CypherFn::Vector | CypherFn::Round => DataType::Float64,
            CypherFn::ToAny
            | CypherFn::Properties
            | CypherFn::Dynamic
            | CypherFn::Now
            | CypherFn::GroupKey => any::ANY,
            CypherFn::ToText | CypherFn::Identity => DataType::Utf8,
            CypherFn::AnyItems => DataType::new_list(any::ANY, true),
            CypherFn::Range => DataType::new_list(DataType::Int64, true),
            CypherFn::Slice => match &arg_types[0] {
                DataType::List(f) | DataType::FixedSizeList(f, _) => DataType::List(f.clone()),
                DataType::LargeList(f) => DataType::LargeList(f.clone()),
                t => t.clone(),
            },
            CypherFn::Element => match &arg_types[0] {
                DataType::List(f) | DataType::LargeList(f) | DataType::FixedSizeList(f, _) => {
                    f.data_type().clone()
                }
                _ => DataType::Null,
            },
            CypherFn::PercentileDisc => percentile::return_type(&arg_types[0], true),
            CypherFn::PercentileCont => percentile::return_type(&arg_types[0], false),
            _ => DataType::Boolean,
        })
    }

    fn invoke_with_args(&self, args: ScalarFunctionArgs) -> Result<ColumnarValue> {
        if self.f == CypherFn::Fail && args.number_rows == 0 {
            return Ok(args.args[3].clone());
        }
        if let (CypherFn::Element, [list, at]) = (self.f, args.args.as_slice()) {
            return element(list, at, args.number_rows);
        }
        if self.f == CypherFn::Slice {
            return slice(&args.args, args.number_rows);
        }
        if let (CypherFn::In, [x, ColumnarValue::Scalar(list @ ScalarValue::List(_))]) =
            (self.f, args.args.as_slice())
        {
            if let Some(out) = in_constant_list(x, list, args.number_rows)? {
                return Ok(out);
            }
        }
        let (scalar, n) = rows_to_evaluate(&args);
        let arrays = args
            .args
            .iter()
            .map(|a| a.to_array(n))
            .collect::<Result<Vec<_>>>()?;
        let out = self.eval(&arrays, &args.config_options)?;
        Ok(if scalar {
            ColumnarValue::Scalar(ScalarValue::try_from_array(&out, 0)?)
        } else {
            ColumnarValue::Array(out)
        })
    }
}

impl Udf {
    fn eval(
        &self,
        a: &[ArrayRef],
        config: &datafusion::common::config::ConfigOptions,
    ) -> Result<ArrayRef> {
        let n = a[0].len();
        // Entities compare by identity, without converting their property records.
        if matches!(self.f, CypherFn::Eq) {
            if let Some((x, y)) = identities(&a[0], &a[1]) {
                let mut b = BooleanBuilder::with_capacity(n);
                for i in 0..n {
                    b.append_option(match (x.is_null(i), y.is_null(i)) {
                        (false, false) => Some(x.value(i) == y.value(i)),
                        _ => None,
                    });
                }
                return Ok(Arc::new(b.finish()));
            }
        }
        match self.f {
            CypherFn::Range => range(a, config),
            CypherFn::Add | CypherFn::Sub | CypherFn::Mul => {
                let x = arrow::compute::cast(&a[0], &DataType::Int64)?;
                let y = arrow::compute::cast(&a[1], &DataType::Int64)?;
                let (r, sym) = match self.f {
                    CypherFn::Add => (numeric::add(&x, &y), "+"),
                    CypherFn::Sub => (numeric::sub(&x, &y), "-"),
                    _ => (numeric::mul(&x, &y), "*"),
                };
                r.map_err(|e| match e {
                    arrow::error::ArrowError::ArithmeticOverflow(_) => overflow(sym),
                    other => other.into(),
                })
            }
            CypherFn::Abs => abs(a),
            CypherFn::ToInt64 => to_int64(a),
            CypherFn::Eq
            | CypherFn::Lt
            | CypherFn::Le
            | CypherFn::Gt
            | CypherFn::Ge
            | CypherFn::StartsWith
            | CypherFn::EndsWith
            | CypherFn::Contains => {
                let mut b = BooleanBuilder::with_capacity(n);
                for i in 0..n {
                    let (x, y) = (value_at(a[0].as_ref(), i), value_at(a[1].as_ref(), i));
                    b.append_option(self.compare(&x, &y));
                }
                Ok(Arc::new(b.finish()))
            }
            CypherFn::In => membership(a),
            CypherFn::NonNegative => non_negative(a),
            CypherFn::Fail => fail(a),
            CypherFn::ToBoolean => to_boolean(a),
            CypherFn::ToInteger => to_integer(a),
            CypherFn::ToAny => to_any(a),
            CypherFn::Properties => properties(a),
            CypherFn::AnyItems => any_items(a),
            CypherFn::ToFloat => to_float(a),
            CypherFn::Size => size(a),
            CypherFn::PercentileDisc => percentile::percentile(a, true),
            CypherFn::PercentileCont => percentile::percentile(a, false),
            CypherFn::Dynamic => dynamic_op(a),
            CypherFn::Now => now(a),
            CypherFn::ToText => to_text(a),
            CypherFn::Vector => vector::eval(a),
            CypherFn::Identity => identity_text(a),
            CypherFn::Round => rounding::eval(a),
            CypherFn::Gather => gather(a),
            CypherFn::Slice => {
                let args: Vec<_> = a.iter().map(|x| ColumnarValue::Array(x.clone())).collect();
                slice(&args, a[0].len())?.into_array(a[0].len())
            }
            CypherFn::Element => {
                let (list, at) = (
                    ColumnarValue::Array(a[0].clone()),
                    ColumnarValue::Array(a[1].clone()),
                );
                element(&list, &at, a[0].len())?.into_array(a[0].len())
            }
            CypherFn::GroupKey => group_key(a),
            CypherFn::UniqueByValue => unique_by_value(a),
        }
    }

    /// The boolean binary functions: comparisons, and the string predicates (null unless
    /// both are strings).
    fn compare(&self, x: &Value, y: &Value) -> Option<bool> {
        match (self.f, x, y) {
            (CypherFn::Eq, _, _) => return equals(x, y),
            (CypherFn::StartsWith, Value::Str(x), Value::Str(y)) => return Some(x.starts_with(y)),
            (CypherFn::EndsWith, Value::Str(x), Value::Str(y)) => return Some(x.ends_with(y)),
            (CypherFn::Contains, Value::Str(x), Value::Str(y)) => return Some(x.contains(y)),
            (CypherFn::StartsWith | CypherFn::EndsWith | CypherFn::Contains, _, _) => return None,
            _ => {}
        }
        match order(x, y) {
            Order::Null => None,
            Order::Unordered => Some(false),
            Order::Ordered(o) => Some(match self.f {
                CypherFn::Lt => o == Ordering::Less,
                CypherFn::Le => o != Ordering::Greater,
                CypherFn::Gt => o == Ordering::Greater,
                _ => o != Ordering::Less,
            }),
        }
    }
}

/// `cypher_dynamic(op, args...)` row by row.
fn dynamic_op(a: &[ArrayRef]) -> Result<ArrayRef> {
    let n = a[0].len();
    let mut b = LargeBinaryBuilder::with_capacity(n, 24 * n);
    let mut args = Vec::with_capacity(a.len() - 1);
    let mut scratch = Vec::new();
    let ops = arrow::compute::cast(&a[0], &DataType::Utf8)?;
    let ops = ops.as_string::<i32>();
    for i in 0..n {
        if ops.is_null(i) {
            b.append_null();
            continue;
        }
        args.clear();
        args.extend(a[1..].iter().map(|x| value_at(x.as_ref(), i)));
        any::append(&mut b, &dynamic::eval(ops.value(i), &args)?, &mut scratch);
    }
    Ok(Arc::new(b.finish()))
}

/// `date()`, `datetime({timezone: 'Europe/Paris'})`...: the statement's time as a value of
/// the kind named.
fn now(a: &[ArrayRef]) -> Result<ArrayRef> {
    let n = a[0].len();
    let mut b = LargeBinaryBuilder::with_capacity(n, 24 * n);
    let mut scratch = Vec::new();
    let stamps = arrow::compute::cast(&a[3], &DataType::Int64)?;
    let stamps = stamps.as_primitive::<arrow::datatypes::Int64Type>();
    for i in 0..n {
        let (Value::Str(kind), Value::Bool(given)) =
            (value_at(a[0].as_ref(), i), value_at(a[1].as_ref(), i))
        else {
            b.append_null();
            continue;
        };
        let nanos = stamps.value(i);
        let mut entries = vec![
            (
                "epochSeconds".to_string(),
                Value::Int(nanos.div_euclid(1_000_000_000)),
            ),
            (
                "nanosecond".to_string(),
                Value::Int(nanos.rem_euclid(1_000_000_000)),
            ),
        ];
        match value_at(a[2].as_ref(), i) {
            Value::Null if given => {
                b.append_null();
                continue;
            }
            Value::Null => {}
            Value::Str(z) => entries.push(("timezone".into(), Value::Str(z))),
            Value::Map(m) => entries.extend(m.into_iter().filter(|(k, _)| k == "timezone")),
            other => {
                return Err(RuntimeError::new(
                    ErrorClass::TypeError,
                    "InvalidArgumentType",
                    format!("{kind}() expects a time zone, got {other}"),
                )
                .into())
            }
        }
        let k = temporal::Kind::of_function(&kind).unwrap_or(temporal::Kind::DateTime);
        let v = temporal::construct(k, &Value::Map(entries))
            .map_err(|e| RuntimeError::new(ErrorClass::ArgumentError, "InvalidArgumentValue", e))?;
        any::append(
            &mut b,
            &v.map_or(Value::Null, Value::Temporal),
            &mut scratch,
        );
    }
    Ok(Arc::new(b.finish()))
}

/// `toString` of values of mixed kind.
fn to_text(a: &[ArrayRef]) -> Result<ArrayRef> {
    let n = a[0].len();
    let mut b = arrow::array::StringBuilder::with_capacity(n, 16 * n);
    for i in 0..n {
        match value_at(a[0].as_ref(), i) {
            Value::Null => b.append_null(),
            v @ (Value::Str(_)
            | Value::Int(_)
            | Value::Float(_)
            | Value::Bool(_)
            | Value::Temporal(_)) => b.append_value(dynamic::text(&v)),
            other => return Err(conversion_error("toString", &other)),
        }
    }
    Ok(Arc::new(b.finish()))
}

/// `abs` of integers: overflow (of the least integer) is an error.
fn abs(a: &[ArrayRef]) -> Result<ArrayRef> {
    let x = arrow::compute::cast(&a[0], &DataType::Int64)?;
    let xs = x.as_primitive::<arrow::datatypes::Int64Type>();
    let out: arrow::array::Int64Array = xs
        .iter()
        .map(|v| {
            v.map(|v| v.checked_abs().ok_or_else(|| overflow("abs")))
                .transpose()
        })
        .collect::<Result<_>>()?;
    Ok(Arc::new(out))
}

/// A sum (a wider integer) back to 64 bits: past them an overflow error.
fn to_int64(a: &[ArrayRef]) -> Result<ArrayRef> {
    let opts = arrow::compute::CastOptions {
        safe: false,
        ..Default::default()
    };
    arrow::compute::cast_with_options(&a[0], &DataType::Int64, &opts).map_err(|_| overflow("sum"))
}

/// `x IN list` per row, by Cypher's equality (null when undecided).
/// The identity columns of two arrays of node (relationship) values, as text: structs
/// whose first field is `__label` (`__type`) and that hold `__nid` (`__rid`). A value is
/// null where its struct is. `None` when either is not such an array or they are of
/// different kinds (their values then compare as maps).
fn identities(
    x: &ArrayRef,
    y: &ArrayRef,
) -> Option<(arrow::array::StringArray, arrow::array::StringArray)> {
    let id = |a: &ArrayRef| -> Option<(&'static str, arrow::array::StringArray)> {
        let s = a.as_struct_opt()?;
        let (kind, key) = match s.fields().first()?.name().as_str() {
            "__label" => ("node", "__nid"),
            "__type" => ("rel", "__rid"),
            _ => return None,
        };
        let ids = s.column_by_name(key)?.as_string_opt::<i32>()?;
        // The struct's nulls on its identity (a null entity has no identity).
        let nulls = arrow::buffer::NullBuffer::union(s.nulls(), ids.nulls());
        let ids =
            arrow::array::StringArray::try_new(ids.offsets().clone(), ids.values().clone(), nulls)
                .ok()?;
        Some((kind, ids))
    };
    let ((kx, ix), (ky, iy)) = (id(x)?, id(y)?);
    (kx == ky).then_some((ix, iy))
}

/// `x IN list` with one list for every row (a literal, a parameter): the list read once,
/// not copied into each row, and integers and strings looked up in a hash set (in the
/// list's [sorted members](members) when it is long). `None` where
/// `x` or the elements are not plain values (nodes go by identity, in [`membership`]).
fn in_constant_list(
    x: &ColumnarValue,
    list: &ScalarValue,
    number_rows: usize,
) -> Result<Option<ColumnarValue>> {
    use std::collections::HashSet;
    let plain = |t: &DataType| {
        matches!(
            t,
            DataType::Int64 | DataType::Float64 | DataType::Utf8 | DataType::Boolean
        )
    };
    let given = list;
    let list = list.to_array()?;
    let list = list.as_list::<i32>();
    // The list's own elements (its values may be a slice of a longer array).
    let items = &list.value(0);
    if !plain(&x.data_type()) || !(plain(items.data_type()) || items.data_type().is_null()) {
        return Ok(None);
    }
    let scalar = matches!(x, ColumnarValue::Scalar(_));
    let n = if scalar { 1 } else { number_rows };
    let xs = x.to_array(n)?;
    let mut b = BooleanBuilder::with_capacity(n);
    // Three-valued: found, else null when x or an element is null (and there are elements).
    let has_null = items.null_count() > 0;
    let outcome = |found: bool, x_null: bool| match (found, items.is_empty()) {
        (true, _) => Some(true),
        (false, true) => Some(false),
        _ if x_null || has_null => None,
        _ => Some(false),
    };
    // A long parameter (the same array in every batch) is looked up in its members sorted
    // once; one value by a scan; other lists in a set built for the call.
    let held = (!scalar && items.len() >= members::SORTED_FROM)
        .then(|| held::Held::members_of(given))
        .flatten();
    let sorted = || held.clone();
    let ints = (
        xs.as_primitive_opt::<arrow::datatypes::Int64Type>(),
        items.as_primitive_opt::<arrow::datatypes::Int64Type>(),
    );
    let strs = (xs.as_string_opt::<i32>(), items.as_string_opt::<i32>());
    if list.is_null(0) {
        b.append_nulls(n);
    } else if let (Some(xs), Some(ys)) = ints {
        let found: Box<dyn Fn(i64) -> bool> = match sorted() {
            _ if scalar => Box::new(|x| ys.iter().any(|y| y == Some(x))),
            Some(m) => Box::new(move |x| m.has_int(x)),
            None => {
                let set: HashSet<i64> = ys.iter().flatten().collect();
                Box::new(move |x| set.contains(&x))
            }
        };
        for x in xs.iter() {
            b.append_option(outcome(x.is_some_and(&found), x.is_none()));
        }
    } else if let (Some(xs), Some(ys)) = strs {
        let found: Box<dyn Fn(&str) -> bool> = match sorted() {
            _ if scalar => Box::new(|x| ys.iter().any(|y| y == Some(x))),
            Some(m) => Box::new(move |x| m.has_str(items, x)),
            None => {
                let set: HashSet<&str> = ys.iter().flatten().collect();
                Box::new(move |x| set.contains(x))
            }
        };
        for x in xs.iter() {
            b.append_option(outcome(x.is_some_and(&found), x.is_none()));
        }
    } else {
        // Mixed numbers, floats (NaN equals nothing), booleans: value by value, the list
        // made a value once.
        let elems = Value::List((0..items.len()).map(|i| value_at(items, i)).collect());
        for i in 0..n {
            b.append_option(member(&value_at(xs.as_ref(), i), &elems));
        }
    }
    let out: ArrayRef = Arc::new(b.finish());
    Ok(Some(if scalar {
        ColumnarValue::Scalar(ScalarValue::try_from_array(&out, 0)?)
    } else {
        ColumnarValue::Array(out)
    }))
}

/// `x IN list`: by identity where `x` and the list's elements are node (relationship)
/// values, else value by value.
fn membership(a: &[ArrayRef]) -> Result<ArrayRef> {
    let n = a[0].len();
    if let Some(list) = a[1].as_list_opt::<i32>() {
        if let Some((xs, elems)) = identities(&a[0], list.values()) {
            let mut b = BooleanBuilder::with_capacity(n);
            for i in 0..n {
                if list.is_null(i) {
                    b.append_null();
                    continue;
                }
                let (lo, hi) = (
                    list.value_offsets()[i] as usize,
                    list.value_offsets()[i + 1] as usize,
                );
                let result = if lo == hi {
                    Some(false)
                } else if xs.is_null(i) {
                    None
                } else if (lo..hi).any(|j| !elems.is_null(j) && elems.value(j) == xs.value(i)) {
                    Some(true)
                } else if (lo..hi).any(|j| elems.is_null(j)) {
                    None
                } else {
                    Some(false)
                };
                b.append_option(result);
            }
            return Ok(Arc::new(b.finish()));
        }
    }
    let mut b = BooleanBuilder::with_capacity(n);
    for i in 0..n {
        let list = value_at(a[1].as_ref(), i);
        b.append_option(match list {
            Value::Null => None,
            l => member(&value_at(a[0].as_ref(), i), &l),
        });
    }
    Ok(Arc::new(b.finish()))
}

/// Its integer argument, or an error when negative (lengths, counts).
fn non_negative(a: &[ArrayRef]) -> Result<ArrayRef> {
    let x = arrow::compute::cast(&a[0], &DataType::Int64)?;
    let xs = x.as_primitive::<arrow::datatypes::Int64Type>();
    if let Some(v) = xs.iter().flatten().find(|v| *v < 0) {
        return Err(RuntimeError::new(
            ErrorClass::ArgumentError,
            "NegativeIntegerArgument",
            format!("expected a non-negative integer, got {v}"),
        )
        .into());
    }
    Ok(a[0].clone())
}

/// Raises the error its arguments name once a row evaluates it (class, detail, message; the fourth is its type).
fn fail(a: &[ArrayRef]) -> Result<ArrayRef> {
    let n = a[0].len();
    if n == 0 {
        return Ok(a[3].clone());
    }
    let text = |k: usize| -> String {
        let arr = a[k].as_string_opt::<i32>();
        arr.map(|x| x.value(0).to_string()).unwrap_or_default()
    };
    Err(RuntimeError::new(ErrorClass::from_name(&text(0)), text(1), text(2)).into())
}

/// `toBoolean`: booleans, integers (0 is false), `'true'` / `'false'`; null otherwise.
fn to_boolean(a: &[ArrayRef]) -> Result<ArrayRef> {
    let n = a[0].len();
    let mut b = BooleanBuilder::with_capacity(n);
    for i in 0..n {
        b.append_option(match value_at(a[0].as_ref(), i) {
            Value::Null => None,
            Value::Bool(x) => Some(x),
            Value::Int(x) => Some(x != 0),
            Value::Str(s) => match s.trim().to_ascii_lowercase().as_str() {
                "true" => Some(true),
                "false" => Some(false),
                _ => None,
            },
            other => return Err(conversion_error("toBoolean", &other)),
        });
    }
    Ok(Arc::new(b.finish()))
}

/// `toInteger`: integers, booleans, floats and strings that fit 64 bits; null otherwise.
fn to_integer(a: &[ArrayRef]) -> Result<ArrayRef> {
    let n = a[0].len();
    let mut b = Int64Builder::with_capacity(n);
    for i in 0..n {
        b.append_option(match value_at(a[0].as_ref(), i) {
            Value::Null => None,
            Value::Int(x) => Some(x),
            Value::Bool(x) => Some(x as i64),
            Value::Float(x) => float_to_int(x),
            Value::Str(s) => parse_integer(s.trim()),
            other => return Err(conversion_error("toInteger", &other)),
        });
    }
    Ok(Arc::new(b.finish()))
}

/// A value of any kind as a mixed-kind cell.
fn to_any(a: &[ArrayRef]) -> Result<ArrayRef> {
    let n = a[0].len();
    let mut b = LargeBinaryBuilder::with_capacity(n, 16 * n);
    let mut scratch = Vec::new();
    for i in 0..n {
        any::append(&mut b, &value_at(a[0].as_ref(), i), &mut scratch);
    }
    Ok(Arc::new(b.finish()))
}

/// `v` with its integral floats (in the 64-bit range) written as integers, inside lists and
/// maps too: numbers equal by value encode alike.
fn by_value(v: Value) -> Value {
    match v {
        Value::Float(x) if x.fract() == 0.0 && (-value::TWO_63..value::TWO_63).contains(&x) => {
            Value::Int(x as i64)
        }
        Value::List(xs) => Value::List(xs.into_iter().map(by_value).collect()),
        Value::Map(kv) => Value::Map(kv.into_iter().map(|(k, v)| (k, by_value(v))).collect()),
        v => v,
    }
}

/// `cypher_unique_by_value(list)` row by row.
fn unique_by_value(a: &[ArrayRef]) -> Result<ArrayRef> {
    let n = a[0].len();
    let mut b = ListBuilder::new(LargeBinaryBuilder::new());
    let mut scratch = Vec::new();
    for i in 0..n {
        let Value::List(items) = value_at(a[0].as_ref(), i) else {
            b.append(false);
            continue;
        };
        let mut seen = std::collections::HashSet::new();
        for x in items {
            if seen.insert(any::encode(&by_value(x.clone()))) {
                any::append(b.values(), &x, &mut scratch);
            }
        }
        b.append(true);
    }
    Ok(Arc::new(b.finish()))
}

/// `cypher_group_key(x)` row by row: each value [`by_value`], encoded.
fn group_key(a: &[ArrayRef]) -> Result<ArrayRef> {
    let n = a[0].len();
    let mut b = LargeBinaryBuilder::with_capacity(n, 16 * n);
    let mut scratch = Vec::new();
    for i in 0..n {
        any::append(&mut b, &by_value(value_at(a[0].as_ref(), i)), &mut scratch);
    }
    Ok(Arc::new(b.finish()))
}

/// `properties(x)`: its map without internal keys and null values, as a mixed-kind cell.
fn properties(a: &[ArrayRef]) -> Result<ArrayRef> {
    let n = a[0].len();
    let mut b = LargeBinaryBuilder::with_capacity(n, 16 * n);
    let mut scratch = Vec::new();
    for i in 0..n {
        let v = match value_at(a[0].as_ref(), i) {
            Value::Map(entries) => Value::Map(
                entries
                    .into_iter()
                    .filter(|(k, v)| !k.starts_with("__") && *v != Value::Null)
                    .collect(),
            ),
            other => other,
        };
        any::append(&mut b, &v, &mut scratch);
    }
    Ok(Arc::new(b.finish()))
}

/// `cypher_identity(value, key)` row by row.
fn identity_text(a: &[ArrayRef]) -> Result<ArrayRef> {
    let n = a[0].len();
    let keys = arrow::compute::cast(&a[1], &DataType::Utf8)?;
    let keys = keys.as_string::<i32>();
    let mut b = arrow::array::StringBuilder::with_capacity(n, 24 * n);
    for i in 0..n {
        match value_at(a[0].as_ref(), i) {
            Value::Null => b.append_null(),
            v => {
                let node = keys.value(i) == "__nid";
                match value::identity_of(&v) {
                    Some((is_node, id)) if is_node == node => b.append_value(id),
                    _ => b.append_value(""),
                }
            }
        }
    }
    Ok(Arc::new(b.finish()))
}

/// A list's items as mixed-kind cells.
fn any_items(a: &[ArrayRef]) -> Result<ArrayRef> {
    let n = a[0].len();
    let mut b = ListBuilder::new(LargeBinaryBuilder::new());
    let mut scratch = Vec::new();
    for i in 0..n {
        match value_at(a[0].as_ref(), i) {
            Value::List(items) => {
                for x in &items {
                    any::append(b.values(), x, &mut scratch);
                }
                b.append(true);
            }
            Value::Null => b.append(false),
            x => {
                any::append(b.values(), &x, &mut scratch);
                b.append(true);
            }
        }
    }
    Ok(Arc::new(b.finish()))
}

/// `cypher_gather(list, positions)` row by row, through one `take` over the lists' values.
fn gather(a: &[ArrayRef]) -> Result<ArrayRef> {
    use arrow::array::{GenericListArray, OffsetSizeTrait};
    use arrow::buffer::{NullBuffer, OffsetBuffer};
    fn run<O: OffsetSizeTrait>(list: &GenericListArray<O>, at: &ArrayRef) -> Result<ArrayRef> {
        let positions = arrow::compute::cast(at, &DataType::new_list(DataType::Int64, true))?;
        let positions = positions.as_list::<i32>();
        let mut indices: Vec<u64> = Vec::new();
        let mut lengths = Vec::with_capacity(list.len());
        let mut valid = Vec::with_capacity(list.len());
        for i in 0..list.len() {
            let present = list.is_valid(i) && positions.is_valid(i);
            valid.push(present);
            if !present {
                lengths.push(0);
                continue;
            }
            let start = list.value_offsets()[i].as_usize();
            let len = list.value_length(i).as_usize();
            let ps = positions.value(i);
            let ps = ps.as_primitive::<arrow::datatypes::Int64Type>();
            let before = indices.len();
            for p in ps.iter().flatten() {
                if p < 0 || p as usize >= len {
                    return Err(datafusion::error::DataFusionError::Internal(format!(
                        "gather: position {p} of a list of {len}"
                    )));
                }
                indices.push((start + p as usize) as u64);
            }
            lengths.push(indices.len() - before);
        }
        let taken = arrow::compute::take(
            list.values().as_ref(),
            &arrow::array::UInt64Array::from(indices),
            None,
        )?;
        let field = match list.data_type() {
            DataType::List(f) | DataType::LargeList(f) => f.clone(),
            _ => unreachable!("a list"),
        };
        Ok(Arc::new(GenericListArray::<O>::try_new(
            field,
            OffsetBuffer::<O>::from_lengths(lengths),
            taken,
            Some(NullBuffer::from(valid)),
        )?))
    }
    match a[0].data_type() {
        DataType::List(_) => run(a[0].as_list::<i32>(), &a[1]),
        DataType::LargeList(_) => run(a[0].as_list::<i64>(), &a[1]),
        DataType::Null => Ok(a[0].clone()),
        t => Err(datafusion::error::DataFusionError::Internal(format!(
            "gather from a {t}"
        ))),
    }
}

/// `toFloat`: numbers and numeric strings; null otherwise.
fn to_float(a: &[ArrayRef]) -> Result<ArrayRef> {
    let n = a[0].len();
    let mut b = Float64Builder::with_capacity(n);
    for i in 0..n {
        b.append_option(match value_at(a[0].as_ref(), i) {
            Value::Null => None,
            Value::Int(x) => Some(x as f64),
            Value::Float(x) => Some(x),
            Value::Str(s) => parse_float(s.trim()),
            other => return Err(conversion_error("toFloat", &other)),
        });
    }
    Ok(Arc::new(b.finish()))
}

/// `size()` of values of mixed kind: a list's items, a string's characters; null for null;
/// any other kind is a type error.
fn size(a: &[ArrayRef]) -> Result<ArrayRef> {
    // A list's size is its offsets' difference: DataFusion's `array_length` takes each row's
    // list as an array of its own (slicing every child of a list of records).
    if matches!(
        a[0].data_type(),
        DataType::List(_) | DataType::LargeList(_) | DataType::FixedSizeList(..)
    ) {
        let len = arrow::compute::kernels::length::length(&a[0])?;
        return Ok(arrow::compute::cast(&len, &DataType::Int64)?);
    }
    let n = a[0].len();
    let mut b = Int64Builder::with_capacity(n);
    for i in 0..n {
        b.append_option(match value_at(a[0].as_ref(), i) {
            Value::Null => None,
            Value::List(xs) => Some(xs.len() as i64),
            Value::Str(s) => Some(s.chars().count() as i64),
            _ => {
                return Err(RuntimeError::new(
                    ErrorClass::TypeError,
                    "InvalidArgumentValue",
                    "size() expects a list or a string".to_string(),
                )
                .into())
            }
        });
    }
    Ok(Arc::new(b.finish()))
}

/// A decimal number as Cypher writes it (digits, a point, an exponent; `NaN`, `Infinity`);
/// Rust's parser also takes `inf` and `nan` in any case, which Cypher does not.
fn parse_float(s: &str) -> Option<f64> {
    match s {
        "NaN" => return Some(f64::NAN),
        "Infinity" | "+Infinity" => return Some(f64::INFINITY),
        "-Infinity" => return Some(f64::NEG_INFINITY),
        _ => {}
    }
    let ok = !s.is_empty()
        && s.chars()
            .all(|c| c.is_ascii_digit() || matches!(c, '.' | 'e' | 'E' | '+' | '-'));
    if ok {
        s.parse().ok()
    } else {
        None
    }
}

/// Truncates toward zero; null where the float has no integer value in range.
/// `toInteger` of a string: an integer literal exactly (null past the 64-bit range: rounded
/// through a float, `-9223372036854775809` would come back as the smallest integer), anything
/// else as a float, truncated.
fn parse_integer(t: &str) -> Option<i64> {
    let digits = t.strip_prefix(['-', '+']).unwrap_or(t);
    if !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit()) {
        return t.parse::<i64>().ok();
    }
    parse_float(t).and_then(float_to_int)
}

/// `range(start, end, step)` per row (null where an argument is null); the number of values
/// is checked against the memory limit before any is built.
fn range(a: &[ArrayRef], config: &datafusion::common::config::ConfigOptions) -> Result<ArrayRef> {
    let int = |k: usize| arrow::compute::cast(&a[k], &DataType::Int64);
    let (start, end, step) = (int(0)?, int(1)?, int(2)?);
    let (start, end, step) = (
        start.as_primitive::<arrow::datatypes::Int64Type>(),
        end.as_primitive::<arrow::datatypes::Int64Type>(),
        step.as_primitive::<arrow::datatypes::Int64Type>(),
    );
    let rows: Vec<Option<(i64, i64, u64)>> = (0..a[0].len())
        .map(|i| {
            if start.is_null(i) || end.is_null(i) || step.is_null(i) {
                return Ok(None);
            }
            let (s, e, k) = (start.value(i), end.value(i), step.value(i));
            if k == 0 {
                return Err(RuntimeError::new(
                    ErrorClass::ArgumentError,
                    "NumberOutOfRange",
                    "a step of 0 never ends",
                ));
            }
            let span = e as i128 - s as i128;
            let count = if span == 0 || (span > 0) == (k > 0) {
                (span / k as i128) as u64 + 1
            } else {
                0
            };
            Ok(Some((s, k, count)))
        })
        .collect::<std::result::Result<_, RuntimeError>>()?;
    let total = rows
        .iter()
        .flatten()
        .map(|r| r.2)
        .fold(0u64, u64::saturating_add);
    budget::check(config, (total as usize).saturating_mul(8), || {
        format!("range() of {total} values")
    })?;
    let mut b = ListBuilder::with_capacity(Int64Builder::with_capacity(total as usize), rows.len());
    for r in rows {
        match r {
            Some((s, k, count)) => {
                let mut x = s as i128;
                for _ in 0..count {
                    b.values().append_value(x as i64);
                    x += k as i128;
                }
                b.append(true);
            }
            None => b.append(false),
        }
    }
    Ok(Arc::new(b.finish()))
}

fn float_to_int(x: f64) -> Option<i64> {
    if x.is_finite() && (-value::TWO_63..value::TWO_63).contains(&x) {
        Some(x.trunc() as i64)
    } else {
        None
    }
}

fn overflow(what: &str) -> datafusion::error::DataFusionError {
    RuntimeError::new(
        ErrorClass::ArithmeticError,
        "IntegerOverflow",
        format!("integer overflow in `{what}`: the result is outside the 64-bit range"),
    )
    .into()
}

fn conversion_error(name: &str, v: &Value) -> datafusion::error::DataFusionError {
    let kind = match v {
        Value::List(_) => "a list",
        Value::Map(_) => "a map",
        Value::Float(_) => "a float",
        Value::Bool(_) => "a boolean",
        _ => "this value",
    };
    RuntimeError::new(
        ErrorClass::TypeError,
        "InvalidArgumentValue",
        format!("{name}() can't convert {kind}"),
    )
    .into()
}

/// Whether every argument is a scalar (then one row is evaluated and a scalar returned), and
/// the rows to evaluate.
pub(crate) fn rows_to_evaluate(args: &ScalarFunctionArgs) -> (bool, usize) {
    let scalar = (args.args.iter()).all(|a| matches!(a, ColumnarValue::Scalar(_)));
    (scalar, if scalar { 1 } else { args.number_rows })
}

/// The signature of a function over any number of arguments of any type, volatile when the
/// body it evaluates is.
pub(crate) fn variadic_signature(volatile: bool) -> Signature {
    Signature::variadic_any(if volatile {
        Volatility::Volatile
    } else {
        Volatility::Immutable
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use arrow::array::{Int64Array, ListArray, StringArray};

    fn eval(f: CypherFn, args: Vec<ArrayRef>) -> Result<ArrayRef> {
        Udf::new(f).eval(&args, &Default::default())
    }

    /// `x IN list` of one list for every row answers as the list copied into each row does.
    #[test]
    fn membership_in_a_constant_list_is_membership_row_by_row() {
        use any::typed_list;
        let s = |x: &str| Value::Str(x.into());
        let (i, f, n) = (Value::Int, Value::Float, Value::Null);
        let lists = [
            vec![i(1), i(2), n.clone()],
            vec![i(1), i(2)],
            vec![s("a"), s("b")],
            vec![s("a"), n.clone()],
            vec![f(1.0), f(f64::NAN)],
            vec![Value::Bool(true)],
        ];
        let xs: Vec<(ArrayRef, DataType)> = vec![
            (
                Arc::new(Int64Array::from(vec![Some(1), Some(3), None])),
                DataType::Int64,
            ),
            (
                Arc::new(StringArray::from(vec![Some("a"), Some("c"), None])),
                DataType::Utf8,
            ),
            (
                Arc::new(arrow::array::Float64Array::from(vec![
                    Some(1.0),
                    Some(f64::NAN),
                    None,
                ])),
                DataType::Float64,
            ),
        ];
        // Long: held parameters are looked up in their sorted members (a leading null or
        // none, repeated members, members of the same kind that match nothing).
        let long = |items: &[Value], null_first: bool| {
            let mut v: Vec<Value> = null_first.then_some(n.clone()).into_iter().collect();
            v.extend(items.iter().cloned());
            v.extend((0..members::SORTED_FROM as i64).map(|k| match &items[0] {
                Value::Int(_) => i(1000 + k % 700),
                Value::Str(_) => s(&format!("p{}", k % 700)),
                Value::Float(_) => f(1000.5 + k as f64),
                other => other.clone(),
            }));
            typed_list(&v).unwrap()
        };
        for items in &lists {
            let empty = ScalarValue::List(ScalarValue::new_list_nullable(&[], &DataType::Int64));
            let short = [typed_list(items).unwrap(), empty];
            let long = [long(items, true), long(items, false)];
            for (list, held) in (short.into_iter().map(|l| (l, false))).chain(
                long.into_iter()
                    .flat_map(|l| [(l.clone(), false), (l, true)]),
            ) {
                let _held = held.then(|| held::Held::new("t", list.clone()));
                for (x, _) in &xs {
                    let n = x.len();
                    let rows = ColumnarValue::Scalar(list.clone()).to_array(n).unwrap();
                    let want = membership(&[x.clone(), rows]).unwrap();
                    let got = in_constant_list(&ColumnarValue::Array(x.clone()), &list, n)
                        .unwrap()
                        .expect("plain values")
                        .to_array(n)
                        .unwrap();
                    assert_eq!(&got, &want, "{x:?} IN {list} (held: {held})");
                    // One value.
                    for k in 0..n {
                        let one = ScalarValue::try_from_array(x, k).unwrap();
                        let got = in_constant_list(&ColumnarValue::Scalar(one), &list, 1)
                            .unwrap()
                            .expect("plain values")
                            .to_array(1)
                            .unwrap();
                        assert_eq!(got.as_ref(), want.slice(k, 1).as_ref(), "row {k}");
                    }
                }
            }
        }
    }

    #[test]
    fn numbers_equal_by_value_share_a_group_key() {
        let cells = |vs: &[Value]| -> ArrayRef {
            let mut b = LargeBinaryBuilder::new();
            let mut scratch = Vec::new();
            for v in vs {
                any::append(&mut b, v, &mut scratch);
            }
            Arc::new(b.finish())
        };
        let vs = [
            Value::Int(1),
            Value::Float(1.0),
            Value::Str("1".into()),
            Value::List(vec![Value::Float(2.0)]),
            Value::List(vec![Value::Int(2)]),
            Value::Float(1.5),
        ];
        let keys = eval(CypherFn::GroupKey, vec![cells(&vs)]).unwrap();
        let keys = keys.as_binary::<i64>();
        assert_eq!(keys.value(0), keys.value(1));
        assert_ne!(keys.value(0), keys.value(2));
        assert_eq!(keys.value(3), keys.value(4));
        assert_ne!(keys.value(0), keys.value(5));
        // A list keeps each value's first occurrence.
        let list = ListArray::new(
            Arc::new(arrow::datatypes::Field::new("item", any::ANY, true)),
            arrow::buffer::OffsetBuffer::from_lengths([6]),
            cells(&vs),
            None,
        );
        let out = eval(CypherFn::UniqueByValue, vec![Arc::new(list)]).unwrap();
        assert_eq!(
            value_at(out.as_ref(), 0),
            Value::List(vec![
                Value::Int(1),
                Value::Str("1".into()),
                Value::List(vec![Value::Float(2.0)]),
                Value::Float(1.5),
            ])
        );
    }

    #[test]
    fn membership_in_a_sliced_list_is_in_its_own_elements_only() {
        use arrow::datatypes::Int64Type;
        let n = members::SORTED_FROM as i64;
        let two = ListArray::from_iter_primitive::<Int64Type, _, _>(vec![
            Some((0..n).map(Some).collect::<Vec<_>>()),
            Some((5 * n..6 * n).map(Some).collect()),
        ]);
        let second = ScalarValue::List(Arc::new(two.slice(1, 1)));
        let xs: ArrayRef = Arc::new(Int64Array::from(vec![1, 5 * n, 6 * n]));
        let want = arrow::array::BooleanArray::from(vec![false, true, false]);
        for held in [false, true] {
            let _held = held.then(|| held::Held::new("t", second.clone()));
            let got = in_constant_list(&ColumnarValue::Array(xs.clone()), &second, 3)
                .unwrap()
                .expect("plain values")
                .to_array(3)
                .unwrap();
            assert_eq!(got.as_ref(), &want as &dyn Array, "held: {held}");
        }
    }

    #[test]
    fn a_slice_counts_from_0_or_the_end_and_clamps_into_the_list() {
        use arrow::datatypes::Int64Type;
        let list = |xs: Vec<Option<Vec<Option<i64>>>>| -> ArrayRef {
            Arc::new(ListArray::from_iter_primitive::<Int64Type, _, _>(xs))
        };
        let ints = |xs: Vec<Option<i64>>| ColumnarValue::Array(Arc::new(Int64Array::from(xs)));
        let abc = || Some(vec![Some(10), Some(11), Some(12)]);
        let rows = list(vec![abc(), abc(), abc(), abc(), None, abc(), abc()]);
        let from = ints(vec![
            Some(0),
            Some(-2),
            Some(2),
            Some(-9),
            Some(0),
            None,
            Some(1),
        ]);
        let to = ints(vec![
            Some(2),
            Some(i64::MAX),
            Some(1),
            Some(1),
            Some(1),
            Some(1),
            Some(-1),
        ]);
        let want = list(vec![
            Some(vec![Some(10), Some(11)]),
            Some(vec![Some(11), Some(12)]),
            Some(vec![]),
            Some(vec![Some(10)]),
            None,
            None,
            Some(vec![Some(11)]),
        ]);
        let got = slice(
            &[ColumnarValue::Array(rows.clone()), from.clone(), to.clone()],
            7,
        );
        assert_eq!(got.unwrap().to_array(7).unwrap().as_ref(), want.as_ref());
        // One list for every row, and the same as large and fixed-size lists.
        let one = ScalarValue::List(Arc::new(rows.as_list::<i32>().slice(0, 1)));
        // Row 4's list is not null here.
        let w = want.as_list::<i32>();
        let mut rows_one: Vec<Option<Vec<Option<i64>>>> = (0..7)
            .map(|r| {
                w.is_valid(r)
                    .then(|| w.value(r).as_primitive::<Int64Type>().iter().collect())
            })
            .collect();
        rows_one[4] = Some(vec![Some(10)]);
        let want_one = list(rows_one);
        let got = slice(&[ColumnarValue::Scalar(one), from.clone(), to.clone()], 7);
        assert_eq!(
            got.unwrap().to_array(7).unwrap().as_ref(),
            want_one.as_ref()
        );
        let large = arrow::compute::cast(&rows, &DataType::new_large_list(DataType::Int64, true));
        let got = slice(
            &[
                ColumnarValue::Array(large.unwrap()),
                from.clone(),
                to.clone(),
            ],
            7,
        );
        let got = got.unwrap().to_array(7).unwrap();
        let want_large = arrow::compute::cast(&want, got.data_type()).unwrap();
        assert!(matches!(got.data_type(), DataType::LargeList(_)));
        assert_eq!(got.as_ref(), want_large.as_ref());
        let fixed = arrow::array::FixedSizeListArray::from_iter_primitive::<Int64Type, _, _>(
            (0..7).map(|r| (r != 4).then(|| vec![Some(10), Some(11), Some(12)])),
            3,
        );
        let got = slice(&[ColumnarValue::Array(Arc::new(fixed)), from, to], 7);
        assert_eq!(got.unwrap().to_array(7).unwrap().as_ref(), want.as_ref());
    }

    #[test]
    fn an_element_is_read_from_0_or_the_end_and_null_out_of_range() {
        use arrow::datatypes::Int64Type;
        let rows = || {
            ListArray::from_iter_primitive::<Int64Type, _, _>(vec![
                Some(vec![Some(10), Some(11), Some(12)]),
                None,
                Some(vec![Some(20)]),
                Some(vec![]),
                Some(vec![Some(30), None]),
                Some(vec![Some(40), Some(41)]),
            ])
        };
        let at = Int64Array::from(vec![Some(-1), Some(0), Some(-2), Some(0), Some(1), None]);
        let want = Int64Array::from(vec![Some(12), None, None, None, None, None]);
        let n = at.len();
        let arg = |a: ArrayRef| ColumnarValue::Array(a);
        let got = element(&arg(Arc::new(rows())), &arg(Arc::new(at.clone())), n).unwrap();
        assert_eq!(got.to_array(n).unwrap().as_ref(), &want as &dyn Array);
        // Sliced, large and fixed-size lists.
        let sliced: ArrayRef = Arc::new(rows().slice(2, 4));
        let got = element(&arg(sliced), &arg(Arc::new(at.slice(0, 4))), 4).unwrap();
        let want4 = Int64Array::from(vec![Some(20), None, Some(30), Some(40)]);
        assert_eq!(got.to_array(4).unwrap().as_ref(), &want4 as &dyn Array);
        let large = arrow::compute::cast(&rows(), &DataType::new_large_list(DataType::Int64, true));
        let got = element(&arg(large.unwrap()), &arg(Arc::new(at.clone())), n).unwrap();
        assert_eq!(got.to_array(n).unwrap().as_ref(), &want as &dyn Array);
        let fixed = arrow::array::FixedSizeListArray::from_iter_primitive::<Int64Type, _, _>(
            vec![
                Some(vec![Some(1), Some(2)]),
                None,
                Some(vec![Some(5), Some(6)]),
            ],
            2,
        );
        let at3 = Int64Array::from(vec![Some(1), Some(0), Some(-3)]);
        let got = element(&arg(Arc::new(fixed)), &arg(Arc::new(at3)), 3).unwrap();
        let want3 = Int64Array::from(vec![Some(2), None, None]);
        assert_eq!(got.to_array(3).unwrap().as_ref(), &want3 as &dyn Array);
        // One list for every row: read in place.
        let one = ScalarValue::List(Arc::new(rows().slice(0, 1)));
        let idx = Int64Array::from(vec![Some(0), Some(2), Some(3), Some(-3), Some(-4), None]);
        let got = element(&ColumnarValue::Scalar(one.clone()), &arg(Arc::new(idx)), 6).unwrap();
        let want6 = Int64Array::from(vec![Some(10), Some(12), None, Some(10), None, None]);
        assert_eq!(got.to_array(6).unwrap().as_ref(), &want6 as &dyn Array);
        let both = element(
            &ColumnarValue::Scalar(one),
            &ColumnarValue::Scalar(ScalarValue::Int64(Some(i64::MIN))),
            9,
        )
        .unwrap();
        assert!(matches!(
            both,
            ColumnarValue::Scalar(ScalarValue::Int64(None))
        ));
    }

    #[test]
    fn gather_takes_the_positions_of_each_list() {
        use arrow::array::StringArray;
        use arrow::datatypes::Int64Type;
        let lists = ListArray::from_iter_primitive::<Int64Type, _, _>(vec![
            Some(vec![Some(10), Some(11), Some(12)]),
            None,
            Some(vec![Some(20)]),
            Some(vec![]),
        ]);
        let at = ListArray::from_iter_primitive::<Int64Type, _, _>(vec![
            Some(vec![Some(0), Some(2)]),
            Some(vec![Some(0)]),
            Some(vec![]),
            None,
        ]);
        let out = eval(CypherFn::Gather, vec![Arc::new(lists), Arc::new(at)]).unwrap();
        let out = out.as_list::<i32>();
        let row = |i: usize| -> Option<Vec<i64>> {
            out.is_valid(i)
                .then(|| out.value(i).as_primitive::<Int64Type>().values().to_vec())
        };
        assert_eq!(row(0), Some(vec![10, 12]));
        assert_eq!(row(1), None);
        assert_eq!(row(2), Some(vec![]));
        assert_eq!(row(3), None);
        // Lists of strings too, and a position past the end is a broken invariant.
        let words = ListArray::new(
            Arc::new(arrow::datatypes::Field::new("item", DataType::Utf8, true)),
            arrow::buffer::OffsetBuffer::from_lengths([2]),
            Arc::new(StringArray::from(vec!["a", "b"])),
            None,
        );
        let bad = ListArray::from_iter_primitive::<Int64Type, _, _>(vec![Some(vec![Some(2)])]);
        assert!(eval(CypherFn::Gather, vec![Arc::new(words), Arc::new(bad)]).is_err());
    }

    #[test]
    fn overflow_is_an_error_with_its_class() {
        let x: ArrayRef = Arc::new(Int64Array::from(vec![i64::MAX]));
        let y: ArrayRef = Arc::new(Int64Array::from(vec![1]));
        let e = eval(CypherFn::Add, vec![x.clone(), y.clone()]).unwrap_err();
        let r = crate::error::runtime_cause(&e).expect("a runtime error");
        assert_eq!(
            (r.class, r.detail.as_str()),
            (ErrorClass::ArithmeticError, "IntegerOverflow")
        );
        assert!(eval(CypherFn::Mul, vec![x.clone(), x]).is_err());
        let ok = eval(CypherFn::Sub, vec![y.clone(), y]).unwrap();
        assert_eq!(ok.as_primitive::<arrow::datatypes::Int64Type>().value(0), 0);
    }

    #[test]
    fn conversions_take_only_cypher_forms() {
        let s: ArrayRef = Arc::new(StringArray::from(vec![
            Some(" tru "),
            Some("TRUE"),
            Some(" false "),
            Some("1"),
            None,
        ]));
        let b = eval(CypherFn::ToBoolean, vec![s]).unwrap();
        let b = b.as_boolean();
        let got: Vec<Option<bool>> = b.iter().collect();
        assert_eq!(got, vec![None, Some(true), Some(false), None, None]);
        let s: ArrayRef = Arc::new(StringArray::from(vec!["42", " 4.9 ", "inf", "0x10", "1e3"]));
        let i = eval(CypherFn::ToInteger, vec![s.clone()]).unwrap();
        let got: Vec<Option<i64>> = i
            .as_primitive::<arrow::datatypes::Int64Type>()
            .iter()
            .collect();
        assert_eq!(got, vec![Some(42), Some(4), None, None, Some(1000)]);
        let f = eval(CypherFn::ToFloat, vec![s]).unwrap();
        let got: Vec<Option<f64>> = f
            .as_primitive::<arrow::datatypes::Float64Type>()
            .iter()
            .collect();
        assert_eq!(got, vec![Some(42.0), Some(4.9), None, None, Some(1000.0)]);
    }

    #[test]
    fn identity_text_is_an_entity_of_the_kind_asked_for() {
        let entity = |first: &str, kind: &str, id_key: &str, id: &str| {
            Value::Map(vec![
                (first.to_string(), Value::Str(kind.to_string())),
                (id_key.to_string(), Value::Str(id.to_string())),
                ("name".to_string(), Value::Str("x".to_string())),
            ])
        };
        let values = [
            entity("__label", "Person", "__nid", "Person1"),
            entity("__type", "KNOWS", "__rid", "KNOWS7"),
            Value::Int(1),
            Value::Null,
            Value::List(vec![entity("__label", "Person", "__nid", "Person1")]),
        ];
        let mut b = LargeBinaryBuilder::new();
        let mut scratch = Vec::new();
        for v in &values {
            any::append(&mut b, v, &mut scratch);
        }
        let cells: ArrayRef = Arc::new(b.finish());
        let texts = |key: &str| -> Vec<Option<String>> {
            let keys: ArrayRef = Arc::new(StringArray::from(vec![key; values.len()]));
            let out = eval(CypherFn::Identity, vec![cells.clone(), keys]).unwrap();
            (out.as_string::<i32>().iter())
                .map(|s| s.map(str::to_string))
                .collect()
        };
        let s = |x: &str| Some(x.to_string());
        // A relationship, a number or a list is no node: "" (equal to no node's identity).
        assert_eq!(
            texts("__nid"),
            vec![s("Person1"), s(""), s(""), None, s("")]
        );
        assert_eq!(texts("__rid"), vec![s(""), s("KNOWS7"), s(""), None, s("")]);
    }

    #[test]
    fn negative_arguments_are_errors() {
        let x: ArrayRef = Arc::new(Int64Array::from(vec![Some(2), None, Some(-1)]));
        let e = eval(CypherFn::NonNegative, vec![x]).unwrap_err();
        let r = crate::error::runtime_cause(&e).unwrap();
        assert_eq!(r.detail, "NegativeIntegerArgument");
    }
}
