//! Operations whose meaning the values of each row decide, by name: the temporal functions
//! (`cypher_dynamic('date', x)`, `cypher_dynamic('duration.between', a, b)`), a component,
//! map entry or property (`cypher_dynamic('.year', x)`), arithmetic (`cypher_dynamic('+', a,
//! b)`) and the entity functions (`cypher_dynamic('type', x)`) on values of mixed kind.

use super::temporal::{
    add, between, construct, divide, multiply, subtract, truncate, BetweenUnit, Kind,
};
use super::value::Value;
use crate::error::{ErrorClass, RuntimeError};

fn type_error(message: String) -> RuntimeError {
    RuntimeError::new(ErrorClass::TypeError, "InvalidArgumentType", message)
}

fn argument_error(message: String) -> RuntimeError {
    RuntimeError::new(ErrorClass::ArgumentError, "InvalidArgumentValue", message)
}

/// `op` applied to `args` (one row's values).
pub fn eval(op: &str, args: &[Value]) -> Result<Value, RuntimeError> {
    if let Some(name) = op.strip_prefix("agg.") {
        return aggregate(name, &args[0]);
    }
    if let Some(key) = op.strip_prefix('.') {
        return component(&args[0], key);
    }
    match op {
        "+" | "-" | "*" | "/" | "%" | "^" => return arithmetic(op, &args[0], &args[1]),
        "type" | "labels" | "properties" => return entity(op, &args[0]),
        _ => {}
    }
    if args.iter().any(|a| matches!(a, Value::Null)) && !op.ends_with(".truncate") {
        return Ok(Value::Null);
    }
    if let Some(kind) = Kind::of_function(op) {
        return construct(kind, &args[0])
            .map(|t| t.map_or(Value::Null, Value::Temporal))
            .map_err(argument_error);
    }
    let temporal = |k: usize| match &args[k] {
        Value::Temporal(t) => Ok(t),
        other => Err(type_error(format!(
            "{op}() expects a temporal value, got {other}"
        ))),
    };
    if let Some(kind) = op.strip_suffix(".truncate").and_then(Kind::of_function) {
        let Value::Str(unit) = &args[0] else {
            return Err(type_error(format!("{op}() expects a unit name")));
        };
        if matches!(args[1], Value::Null) {
            return Ok(Value::Null);
        }
        let overrides = match args.get(2) {
            Some(Value::Map(m)) => m.clone(),
            None | Some(Value::Null) => Vec::new(),
            Some(other) => return Err(type_error(format!("{op}() expects a map, got {other}"))),
        };
        return truncate(kind, unit, temporal(1)?, &overrides)
            .map(Value::Temporal)
            .map_err(argument_error);
    }
    let unit = match op {
        "duration.between" => BetweenUnit::All,
        "duration.inmonths" => BetweenUnit::Months,
        "duration.indays" => BetweenUnit::Days,
        "duration.inseconds" => BetweenUnit::Seconds,
        "datetime.fromepoch" | "datetime.fromepochmillis" => {
            let entries = if op == "datetime.fromepoch" {
                vec![
                    ("epochSeconds".to_string(), args[0].clone()),
                    (
                        "nanosecond".to_string(),
                        args.get(1).cloned().unwrap_or(Value::Int(0)),
                    ),
                ]
            } else {
                vec![("epochMillis".to_string(), args[0].clone())]
            };
            return construct(Kind::DateTime, &Value::Map(entries))
                .map(|t| t.map_or(Value::Null, Value::Temporal))
                .map_err(argument_error);
        }
        _ => return Err(argument_error(format!("unknown function {op}"))),
    };
    between(temporal(0)?, temporal(1)?, unit)
        .map(|d| {
            d.map_or(Value::Null, |d| {
                Value::Temporal(super::temporal::Temporal::Duration(d))
            })
        })
        .map_err(argument_error)
}

/// `type(x)`, `labels(x)`, `properties(x)` of a value whose kind only rows tell: a
/// relationship's type, a node's labels, either's properties (a map's entries); null of null.
fn entity(op: &str, x: &Value) -> Result<Value, RuntimeError> {
    let Value::Map(entries) = x else {
        return match x {
            Value::Null => Ok(Value::Null),
            other => Err(RuntimeError::new(
                ErrorClass::TypeError,
                "InvalidArgumentValue",
                format!("{op}() expects a node or relationship, got {other}"),
            )),
        };
    };
    let tag = entries.first().map(|(k, v)| (k.as_str(), v));
    Ok(match (op, tag) {
        ("type", Some(("__type", t))) => t.clone(),
        ("labels", Some(("__label", Value::Str(l)))) => Value::List(
            crate::config::split_labels(l)
                .into_iter()
                .map(|l| Value::Str(l.to_string()))
                .collect(),
        ),
        ("properties", _) => Value::Map(
            entries
                .iter()
                .filter(|(k, v)| !k.starts_with("__") && *v != Value::Null)
                .cloned()
                .collect(),
        ),
        _ => {
            return Err(RuntimeError::new(
                ErrorClass::TypeError,
                "InvalidArgumentValue",
                format!(
                    "{op}() expects a {}, got {x}",
                    if op == "type" { "relationship" } else { "node" }
                ),
            ))
        }
    })
}

/// `x.key` of a value whose kind only rows tell: a temporal component, a map entry, a node's
/// or relationship's property; null of null.
fn component(x: &Value, key: &str) -> Result<Value, RuntimeError> {
    match x {
        Value::Null => Ok(Value::Null),
        Value::Temporal(t) => t.component(key).ok_or_else(|| {
            argument_error(format!("a {} has no component `{key}`", t.kind().name()))
        }),
        Value::Map(entries) => Ok(entries
            .iter()
            .find(|(k, _)| k == key)
            .map_or(Value::Null, |(_, v)| v.clone())),
        other => Err(type_error(format!(
            "cannot read property `{key}` of {other}"
        ))),
    }
}

/// An aggregate (`sum`, `avg`, `stdev`, `stdevp`) of a group's values of mixed kind,
/// collected without their nulls: numbers (integers summed exactly, checked for overflow) or
/// durations.
fn aggregate(name: &str, values: &Value) -> Result<Value, RuntimeError> {
    use super::temporal::Temporal as T;
    // No values at all (an empty group) collect to null.
    let xs: Vec<&Value> = match values {
        Value::List(xs) => xs.iter().filter(|x| !matches!(x, Value::Null)).collect(),
        _ => Vec::new(),
    };
    let number = |x: &Value| match x {
        Value::Int(i) => Ok(*i as f64),
        Value::Float(f) => Ok(*f),
        other => Err(type_error(format!(
            "{name}() expects numbers, got {}",
            kind_name(other)
        ))),
    };
    match name {
        "sum" | "avg" => {
            let durations = xs
                .iter()
                .any(|x| matches!(x, Value::Temporal(T::Duration(_))));
            for x in &xs {
                let fits = match x {
                    Value::Int(_) | Value::Float(_) => !durations,
                    Value::Temporal(T::Duration(_)) => true,
                    _ => false,
                };
                if !fits {
                    return Err(type_error(format!(
                        "{name}() expects numbers or durations (not both), got {}",
                        kind_name(x)
                    )));
                }
            }
            if xs.iter().all(|x| matches!(x, Value::Int(_))) {
                // Exact, whatever the order the rows come in.
                let total: i128 = xs
                    .iter()
                    .map(|x| match x {
                        Value::Int(i) => *i as i128,
                        _ => 0,
                    })
                    .sum();
                return Ok(match name {
                    "sum" => Value::Int(i64::try_from(total).map_err(|_| overflow("sum"))?),
                    _ if xs.is_empty() => Value::Null,
                    _ => Value::Float(total as f64 / xs.len() as f64),
                });
            }
            let mut total = xs[0].clone();
            for x in &xs[1..] {
                total = arithmetic("+", &total, x)?;
            }
            match name {
                "sum" => Ok(total),
                _ if durations => arithmetic("/", &total, &Value::Int(xs.len() as i64)),
                _ => Ok(Value::Float(number(&total)? / xs.len() as f64)),
            }
        }
        "stdev" | "stdevp" => {
            let v = xs
                .iter()
                .map(|x| number(x))
                .collect::<Result<Vec<f64>, _>>()?;
            let n = v.len() as f64;
            let d = if name == "stdev" { n - 1.0 } else { n };
            if d <= 0.0 {
                return Ok(Value::Float(0.0));
            }
            let mean = v.iter().sum::<f64>() / n;
            let sq = v.iter().map(|x| (x - mean) * (x - mean)).sum::<f64>();
            Ok(Value::Float((sq / d).sqrt()))
        }
        _ => Err(argument_error(format!("{name}() of values of mixed kind"))),
    }
}

fn overflow(op: &str) -> RuntimeError {
    RuntimeError::new(
        ErrorClass::ArithmeticError,
        "IntegerOverflow",
        format!("integer overflow in `{op}`"),
    )
}

/// `a op b` where the operands' kinds are known only per row: numbers (integers checked for
/// overflow), string and list concatenation, temporal values and durations.
pub fn arithmetic(op: &str, a: &Value, b: &Value) -> Result<Value, RuntimeError> {
    use super::temporal::Temporal as T;
    use Value::*;
    let mismatch = || {
        type_error(format!(
            "arithmetic `{op}` is not defined for {} and {}",
            kind_name(a),
            kind_name(b)
        ))
    };
    let temporal = |r: Option<Result<T, String>>| match r {
        Some(Ok(t)) => Ok(Temporal(t)),
        Some(Err(e)) => Err(argument_error(e)),
        None => Err(mismatch()),
    };
    Ok(match (op, a, b) {
        (_, Null, _) | (_, _, Null) => Null,
        ("+", List(x), List(y)) => List(x.iter().chain(y).cloned().collect()),
        ("+", List(x), y) => List(x.iter().cloned().chain([y.clone()]).collect()),
        ("+", x, List(y)) => List([x.clone()].into_iter().chain(y.iter().cloned()).collect()),
        ("+", Str(x), Str(y)) => Str(format!("{x}{y}")),
        ("+", Str(x), y @ (Int(_) | Float(_) | Bool(_))) => Str(format!("{x}{}", text(y))),
        ("+", x @ (Int(_) | Float(_) | Bool(_)), Str(y)) => Str(format!("{}{y}", text(x))),
        ("+", Temporal(x), Temporal(y)) => return temporal(add(x, y)),
        ("-", Temporal(x), Temporal(y)) => return temporal(subtract(x, y)),
        ("*", Temporal(T::Duration(d)), n @ (Int(_) | Float(_)))
        | ("*", n @ (Int(_) | Float(_)), Temporal(T::Duration(d))) => {
            let (x, exact) = match n {
                Int(i) => (*i as f64, Some(*i)),
                Float(f) => (*f, None),
                _ => unreachable!(),
            };
            Temporal(T::Duration(multiply(d, x, exact).map_err(argument_error)?))
        }
        ("/", Temporal(T::Duration(d)), n @ (Int(_) | Float(_))) => {
            let x = match n {
                Int(i) => *i as f64,
                Float(f) => *f,
                _ => unreachable!(),
            };
            Temporal(T::Duration(divide(d, x).map_err(argument_error)?))
        }
        (_, Int(x), Int(y)) => match op {
            "+" => Int(x.checked_add(*y).ok_or_else(|| overflow(op))?),
            "-" => Int(x.checked_sub(*y).ok_or_else(|| overflow(op))?),
            "*" => Int(x.checked_mul(*y).ok_or_else(|| overflow(op))?),
            "/" | "%" if *y == 0 => {
                return Err(RuntimeError::new(
                    ErrorClass::ArithmeticError,
                    "DivisionByZero",
                    "/ by zero".to_string(),
                ))
            }
            "/" => Int(x.checked_div(*y).ok_or_else(|| overflow(op))?),
            "%" => Int(x.checked_rem(*y).unwrap_or(0)),
            _ => Float((*x as f64).powf(*y as f64)),
        },
        (_, Int(_) | Float(_), Int(_) | Float(_)) => {
            let f = |v: &Value| match v {
                Int(i) => *i as f64,
                Float(x) => *x,
                _ => unreachable!(),
            };
            let (x, y) = (f(a), f(b));
            Float(match op {
                "+" => x + y,
                "-" => x - y,
                "*" => x * y,
                "/" => x / y,
                "%" => x % y,
                _ => x.powf(y),
            })
        }
        _ => return Err(mismatch()),
    })
}

fn kind_name(v: &Value) -> String {
    match v {
        Value::Null => "null".into(),
        Value::Bool(_) => "a boolean".into(),
        Value::Int(_) => "an integer".into(),
        Value::Float(_) => "a float".into(),
        Value::Str(_) => "a string".into(),
        Value::List(_) => "a list".into(),
        Value::Map(_) => "a map".into(),
        Value::Temporal(t) => format!("a {}", t.kind().name()),
        Value::Other(s) => s.data_type().to_string(),
    }
}

/// A value as `toString` writes it.
pub fn text(v: &Value) -> String {
    match v {
        Value::Str(s) => s.clone(),
        Value::Int(i) => i.to_string(),
        Value::Float(x) if x.is_nan() => "NaN".into(),
        Value::Float(x) if x.is_infinite() => {
            if *x > 0.0 { "Infinity" } else { "-Infinity" }.into()
        }
        Value::Float(x) => format!("{x:?}"),
        Value::Bool(b) => b.to_string(),
        Value::Temporal(t) => t.to_string(),
        other => other.to_string(),
    }
}
