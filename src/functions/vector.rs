//! Vector similarity and distance (`vector.similarity.cosine`, `vector.similarity.euclidean`,
//! `vector_distance`) over lists of numbers: embedding columns (`FixedSizeList<Float32>` as
//! Lance stores them), list literals and parameters alike.

use super::value::{value_at, Value};
use crate::error::{ErrorClass, RuntimeError};
use arrow::array::{Array, ArrayRef, AsArray, Float64Builder};
use arrow::datatypes::{DataType, Float64Type};
use datafusion::common::Result;
use std::sync::Arc;

/// What a call computes from two vectors.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Measure {
    /// Neo4j's `vector.similarity.cosine`: `(1 + cos) / 2`, in [0, 1].
    CosineSimilarity,
    /// Neo4j's `vector.similarity.euclidean`: `1 / (1 + d²)`, in (0, 1].
    EuclideanSimilarity,
    /// Lance's `l2` distance: the squared Euclidean distance.
    L2,
    /// Lance's `cosine` distance: `1 - cos`.
    Cosine,
    /// Lance's `dot` distance: `1 - a·b`.
    Dot,
}

impl Measure {
    /// The measure a name passed to the function picks (a metric of `vector_distance`).
    pub fn named(name: &str) -> Option<Self> {
        Some(match name.to_ascii_lowercase().as_str() {
            "cosine_similarity" => Measure::CosineSimilarity,
            "euclidean_similarity" => Measure::EuclideanSimilarity,
            "l2" | "euclidean" => Measure::L2,
            "cosine" => Measure::Cosine,
            "dot" => Measure::Dot,
            _ => return None,
        })
    }

    /// Of two vectors of one length; `None` where it is undefined (a zero vector's cosine).
    fn of(self, a: &[f64], b: &[f64]) -> Option<f64> {
        let dot = || a.iter().zip(b).map(|(x, y)| x * y).sum::<f64>();
        let squared = || a.iter().zip(b).map(|(x, y)| (x - y) * (x - y)).sum::<f64>();
        // Each vector scaled by its largest magnitude first (squares of 1e-200 or 1e200
        // leave f64's range; the direction is what counts), then one square root of the
        // norms' product: parallel vectors give exactly 1.
        let cos = || {
            let (a, b) = (scaled(a)?, scaled(b)?);
            let na = a.iter().map(|x| x * x).sum::<f64>();
            let nb = b.iter().map(|x| x * x).sum::<f64>();
            let dot = a.iter().zip(&b).map(|(x, y)| x * y).sum::<f64>();
            Some((dot / (na * nb).sqrt()).clamp(-1.0, 1.0))
        };
        match self {
            Measure::CosineSimilarity => cos().map(|c| (1.0 + c) / 2.0),
            Measure::EuclideanSimilarity => Some(1.0 / (1.0 + squared())),
            Measure::L2 => Some(squared()),
            Measure::Cosine => cos().map(|c| 1.0 - c),
            Measure::Dot => Some(1.0 - dot()),
        }
    }
}

/// `xs` divided by its largest magnitude; `None` for a zero vector (no direction) or one
/// holding a non-finite number.
fn scaled(xs: &[f64]) -> Option<Vec<f64>> {
    let max = xs.iter().fold(0.0f64, |m, x| m.max(x.abs()));
    (max > 0.0 && max.is_finite()).then(|| xs.iter().map(|x| x / max).collect())
}

/// `xs` as a unit vector of 32-bit floats, for a cosine search (Lance compares `f32`s: a
/// vector of 1e-30s or 2^62s must not underflow or overflow on the way): scaled and
/// normalised in f64. `None` for a zero vector or one holding a non-finite number.
pub fn unit_f32(xs: &[f64]) -> Option<Vec<f32>> {
    let s = scaled(xs)?;
    let norm = s.iter().map(|x| x * x).sum::<f64>().sqrt();
    Some(s.iter().map(|x| (x / norm) as f32).collect())
}

/// `cypher_vector(measure, a, b)` per row: null where a vector or the measure is null;
/// vectors of different lengths, or holding a null or a non-number, are errors.
pub(super) fn eval(a: &[ArrayRef]) -> Result<ArrayRef> {
    let n = a[0].len();
    let names = arrow::compute::cast(&a[0], &DataType::Utf8)?;
    let names = names.as_string::<i32>();
    let (x, y) = (Vectors::new(&a[1])?, Vectors::new(&a[2])?);
    let mut out = Float64Builder::with_capacity(n);
    let (mut xs, mut ys) = (Vec::new(), Vec::new());
    let mut last: Option<(&str, Measure)> = None;
    for i in 0..n {
        if names.is_null(i) {
            out.append_null();
            continue;
        }
        let name = names.value(i);
        // The measure is one literal in practice: named once, not per row.
        let measure = match last {
            Some((n, m)) if n == name => m,
            _ => {
                let m = Measure::named(name).ok_or_else(|| {
                    argument(format!(
                        "unknown vector metric '{name}' (l2, cosine or dot)"
                    ))
                })?;
                last = Some((name, m));
                m
            }
        };
        if !(x.row(i, &mut xs)? && y.row(i, &mut ys)?) {
            out.append_null();
            continue;
        }
        if xs.len() != ys.len() {
            return Err(argument(format!(
                "vectors of different dimensions ({} and {})",
                xs.len(),
                ys.len()
            )));
        }
        out.append_option(measure.of(&xs, &ys));
    }
    Ok(Arc::new(out.finish()))
}

fn argument(message: String) -> datafusion::error::DataFusionError {
    RuntimeError::new(ErrorClass::ArgumentError, "InvalidArgumentValue", message).into()
}

/// A column of vectors: lists of numbers read as `f64`s (any list type, cast once), or
/// values of mixed kind read row by row.
enum Vectors<'a> {
    Numbers(ArrayRef),
    Values(&'a ArrayRef),
}

impl<'a> Vectors<'a> {
    fn new(a: &'a ArrayRef) -> Result<Self> {
        let numeric_list = match a.data_type() {
            DataType::List(f) | DataType::LargeList(f) | DataType::FixedSizeList(f, _) => {
                f.data_type().is_numeric() || f.data_type() == &DataType::Null
            }
            _ => false,
        };
        if numeric_list {
            let t = DataType::new_list(DataType::Float64, true);
            return Ok(Vectors::Numbers(arrow::compute::cast(a, &t)?));
        }
        Ok(Vectors::Values(a))
    }

    /// Row `i`'s vector into `out`; false where it is null.
    fn row(&self, i: usize, out: &mut Vec<f64>) -> Result<bool> {
        out.clear();
        match self {
            Vectors::Numbers(a) => {
                if a.is_null(i) {
                    return Ok(false);
                }
                // The row's slice of the flat values: no array made per row.
                let list = a.as_list::<i32>();
                let offsets = list.value_offsets();
                let (start, end) = (offsets[i] as usize, offsets[i + 1] as usize);
                let values = list.values().as_primitive::<Float64Type>();
                if (values.nulls()).is_some_and(|nulls| (start..end).any(|k| nulls.is_null(k))) {
                    return Err(argument("a vector holds a null".into()));
                }
                out.extend_from_slice(&values.values()[start..end]);
                Ok(true)
            }
            Vectors::Values(a) => match value_at(a.as_ref(), i) {
                Value::Null => Ok(false),
                Value::List(xs) => {
                    for x in xs {
                        out.push(match x {
                            Value::Int(v) => v as f64,
                            Value::Float(v) => v,
                            _ => {
                                return Err(argument(
                                    "a vector holds a value that is not a number".into(),
                                ))
                            }
                        });
                    }
                    Ok(true)
                }
                _ => Err(argument("a vector must be a list of numbers".into())),
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cosine_takes_the_direction_whatever_the_magnitude() {
        let half = [0.5; 16];
        for v in [[1e-30; 16], [2f64.powi(62); 16], [1e300; 16], [1e-300; 16]] {
            assert_eq!(
                Measure::CosineSimilarity.of(&v, &half),
                Some(1.0),
                "{}",
                v[0]
            );
            let unit = unit_f32(&v).unwrap();
            assert_eq!(unit, unit_f32(&half).unwrap(), "{}", v[0]);
        }
        assert_eq!(unit_f32(&[0.0; 4]), None);
        assert_eq!(unit_f32(&[f64::INFINITY, 1.0]), None);
        assert_eq!(Measure::Cosine.of(&[0.0, 0.0], &[1.0, 1.0]), None);
    }

    #[test]
    fn measures_follow_neo4j_and_lance() {
        let (a, b) = ([1.0, 0.0], [0.0, 1.0]);
        assert_eq!(Measure::CosineSimilarity.of(&a, &b), Some(0.5));
        assert_eq!(Measure::CosineSimilarity.of(&a, &a), Some(1.0));
        assert_eq!(Measure::EuclideanSimilarity.of(&a, &b), Some(1.0 / 3.0));
        assert_eq!(Measure::L2.of(&a, &b), Some(2.0));
        assert_eq!(Measure::Cosine.of(&a, &b), Some(1.0));
        assert_eq!(Measure::Dot.of(&a, &a), Some(0.0));
        // A zero vector has no direction.
        assert_eq!(Measure::Cosine.of(&[0.0, 0.0], &a), None);
        assert_eq!(Measure::named("L2"), Some(Measure::L2));
        assert_eq!(Measure::named("manhattan"), None);
    }
}
