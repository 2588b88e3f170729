//! `round(x [, precision [, mode]])` as Neo4j computes it: without a mode, `round(x)` and
//! `round(x, 0)` take ties toward positive infinity (Java's `Math.round`); a positive
//! precision, or any precision with a mode, rounds the value's shortest decimal form (Java's
//! `BigDecimal.valueOf(x).setScale(precision, mode)`, so `round(2.675, 2)` is 2.68, not the
//! binary value's 2.67), by Java's `RoundingMode` names.

use super::value::{value_at, Value};
use crate::error::{ErrorClass, RuntimeError};
use arrow::array::{ArrayRef, Float64Builder};
use datafusion::common::Result;
use std::sync::Arc;

/// Java's `RoundingMode`s.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Mode {
    Up,
    Down,
    Ceiling,
    Floor,
    HalfUp,
    HalfDown,
    HalfEven,
    Unnecessary,
}

impl Mode {
    fn parse(name: &str) -> Option<Mode> {
        Some(match name.to_ascii_uppercase().as_str() {
            "UP" => Mode::Up,
            "DOWN" => Mode::Down,
            "CEILING" => Mode::Ceiling,
            "FLOOR" => Mode::Floor,
            "HALF_UP" => Mode::HalfUp,
            "HALF_DOWN" => Mode::HalfDown,
            "HALF_EVEN" => Mode::HalfEven,
            "UNNECESSARY" => Mode::Unnecessary,
            _ => return None,
        })
    }
}

fn argument_error(message: String) -> RuntimeError {
    RuntimeError::new(ErrorClass::ArgumentError, "InvalidArgumentValue", message)
}

/// `cypher_round(x, precision, mode)` row by row.
pub(super) fn eval(a: &[ArrayRef]) -> Result<ArrayRef> {
    let n = a[0].len();
    let mut b = Float64Builder::with_capacity(n);
    for i in 0..n {
        let x = match value_at(a[0].as_ref(), i) {
            Value::Float(x) => x,
            Value::Int(x) => x as f64,
            _ => {
                b.append_null();
                continue;
            }
        };
        let precision = match value_at(a[1].as_ref(), i) {
            Value::Int(p) => p,
            _ => {
                b.append_null();
                continue;
            }
        };
        let mode = match value_at(a[2].as_ref(), i) {
            Value::Null => None,
            Value::Str(m) => Some(Mode::parse(&m).ok_or_else(|| {
                argument_error(format!(
                    "round(): unknown rounding mode '{m}' (UP, DOWN, CEILING, FLOOR, HALF_UP, \
                     HALF_DOWN, HALF_EVEN, UNNECESSARY)"
                ))
            })?),
            other => {
                return Err(RuntimeError::new(
                    ErrorClass::TypeError,
                    "InvalidArgumentType",
                    format!("round() expects a rounding mode name, got {other}"),
                )
                .into())
            }
        };
        b.append_value(round(x, precision, mode)?);
    }
    Ok(Arc::new(b.finish()))
}

/// `x` rounded to `precision` decimal places.
pub(crate) fn round(x: f64, precision: i64, mode: Option<Mode>) -> Result<f64, RuntimeError> {
    if precision < 0 {
        return Err(argument_error(
            "round(): the precision must not be negative".into(),
        ));
    }
    if !x.is_finite() {
        return Ok(x);
    }
    let r = match mode {
        None if precision == 0 => half_toward_positive(x),
        None => decimal(x, precision, Mode::HalfUp)?,
        Some(m) => decimal(x, precision, m)?,
    };
    // Java's integer and decimal zeros have no sign.
    Ok(if r == 0.0 { 0.0 } else { r })
}

/// Java's `Math.round` as a float: the nearest integer, ties toward positive infinity.
fn half_toward_positive(x: f64) -> f64 {
    let r = x.round();
    // `f64::round` takes ties away from zero: a negative tie goes up instead.
    if x < 0.0 && r - x == -0.5 {
        r + 1.0
    } else {
        r
    }
}

/// `x`'s shortest decimal form rounded at `scale` digits after the point by `mode`.
fn decimal(x: f64, scale: i64, mode: Mode) -> Result<f64, RuntimeError> {
    let negative = x.is_sign_negative();
    // `d.ddd e E`: the shortest digits that read back as `x`.
    let sci = format!("{:e}", x.abs());
    let (mantissa, exp) = sci.split_once('e').expect("`{:e}` writes an exponent");
    let exp: i64 = exp.parse().expect("an integer exponent");
    let digits: Vec<u8> = mantissa
        .bytes()
        .filter(u8::is_ascii_digit)
        .map(|d| d - b'0')
        .collect();
    // Digits kept: those before the point (exp + 1) and `scale` after it.
    let kept = exp + 1 + scale;
    if kept >= digits.len() as i64 {
        return Ok(x);
    }
    let (head, tail): (&[u8], &[u8]) = if kept <= 0 {
        (&[], &digits[..])
    } else {
        digits.split_at(kept as usize)
    };
    // What is dropped, against half a unit of the last kept digit.
    let first = if kept < 0 { 0 } else { tail[0] };
    let rest = if kept < 0 {
        true
    } else {
        tail[1..].iter().any(|&d| d != 0)
    };
    let dropped = first != 0 || rest;
    let value: u64 = head.iter().fold(0, |v, &d| v * 10 + d as u64);
    let up = match mode {
        Mode::Up => dropped,
        Mode::Down => false,
        Mode::Ceiling => dropped && !negative,
        Mode::Floor => dropped && negative,
        Mode::HalfUp => first >= 5,
        Mode::HalfDown => first > 5 || (first == 5 && rest),
        Mode::HalfEven => first > 5 || (first == 5 && (rest || value % 2 == 1)),
        Mode::Unnecessary if dropped => {
            return Err(argument_error(format!(
                "round(): {x} needs rounding at precision {scale} (mode UNNECESSARY)"
            )))
        }
        Mode::Unnecessary => false,
    };
    let magnitude: f64 = format!("{}e{}", value + up as u64, -scale)
        .parse()
        .expect("a decimal number");
    Ok(if negative { -magnitude } else { magnitude })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn r(x: f64, p: i64, m: Option<&str>) -> f64 {
        round(x, p, m.map(|m| Mode::parse(m).unwrap())).unwrap()
    }

    #[test]
    fn default_rounding_takes_ties_up_at_precision_zero() {
        assert_eq!(r(-1.5, 0, None), -1.0);
        assert_eq!(r(-2.5, 0, None), -2.0);
        assert_eq!(r(2.5, 0, None), 3.0);
        assert_eq!(r(-2.6, 0, None), -3.0);
        assert_eq!(r(0.49999999999999994, 0, None), 0.0);
        assert_eq!(r(f64::INFINITY, 0, None), f64::INFINITY);
        assert!(r(f64::NAN, 2, None).is_nan());
    }

    #[test]
    fn a_precision_rounds_the_shortest_decimal_half_up() {
        assert_eq!(r(-1.55, 1, None), -1.6);
        assert_eq!(r(2.675, 2, None), 2.68);
        assert_eq!(r(1.005, 2, None), 1.01);
        assert_eq!(r(4.56789, 3, None), 4.568);
        assert_eq!(r(0.0004, 3, None), 0.0);
        assert!(r(-0.0004, 3, None).is_sign_positive());
        assert!(r(-0.4, 0, None).is_sign_positive());
        assert_eq!(r(0.0005, 3, None), 0.001);
        assert_eq!(r(12345.678, 10, None), 12345.678);
        assert_eq!(r(1e300, 2, None), 1e300);
        assert_eq!(r(9.99, 1, None), 10.0);
    }

    #[test]
    fn modes_are_javas() {
        assert_eq!(r(-1.5, 0, Some("HALF_UP")), -2.0);
        assert_eq!(r(-1.5, 0, Some("HALF_DOWN")), -1.0);
        assert_eq!(r(2.5, 0, Some("HALF_EVEN")), 2.0);
        assert_eq!(r(3.5, 0, Some("HALF_EVEN")), 4.0);
        assert_eq!(r(2.51, 0, Some("HALF_DOWN")), 3.0);
        assert_eq!(r(1.21, 1, Some("UP")), 1.3);
        assert_eq!(r(-1.21, 1, Some("UP")), -1.3);
        assert_eq!(r(1.29, 1, Some("DOWN")), 1.2);
        assert_eq!(r(-1.21, 1, Some("CEILING")), -1.2);
        assert_eq!(r(-1.21, 1, Some("FLOOR")), -1.3);
        assert_eq!(r(0.001, 1, Some("UP")), 0.1);
        assert_eq!(r(1.2, 1, Some("UNNECESSARY")), 1.2);
        assert!(round(1.25, 1, Some(Mode::Unnecessary)).is_err());
        assert!(round(1.25, -1, None).is_err());
        assert!(Mode::parse("SIDEWAYS").is_none());
    }
}
