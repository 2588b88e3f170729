//! `percentileDisc` and `percentileCont` over a group's collected values: the list of its
//! non-null numbers, and the least and greatest percentile its rows gave (a percentile outside
//! 0..1 on any row is an error, as openCypher asks).

use crate::error::{ErrorClass, RuntimeError};
use arrow::array::{Array, ArrayRef, AsArray, Float64Builder, Int64Builder};
use arrow::datatypes::{DataType, Float64Type, Int64Type};
use datafusion::common::Result;
use std::sync::Arc;

/// The result type: the values' type for `percentileDisc` (a value of the group), a float for
/// `percentileCont` (interpolated).
pub fn return_type(list: &DataType, discrete: bool) -> DataType {
    match list {
        DataType::List(f) if discrete && f.data_type().is_integer() => DataType::Int64,
        _ => DataType::Float64,
    }
}

/// Where percentile `p` falls among `n` sorted values: the index of the value
/// (`percentileDisc`: the value at rank ceil(p * n), the last for p = 1), or the two
/// neighbours and the weight of the upper one (`percentileCont`: linear interpolation).
fn position(p: f64, n: usize, discrete: bool) -> (usize, usize, f64) {
    if discrete {
        let i = if p >= 1.0 || n == 1 {
            n - 1
        } else {
            ((p * n as f64).ceil() as usize).saturating_sub(1)
        };
        (i, i, 0.0)
    } else {
        let at = p * (n - 1) as f64;
        let lo = at.floor() as usize;
        (lo, (lo + 1).min(n - 1), at - lo as f64)
    }
}

/// Arguments: the collected values (a list per group), the least and the greatest percentile.
pub fn percentile(a: &[ArrayRef], discrete: bool) -> Result<ArrayRef> {
    let lists = a[0].as_list::<i32>();
    let bound = |k: usize| arrow::compute::cast(&a[k], &DataType::Float64);
    let (lo, hi) = (bound(1)?, bound(2)?);
    let (lo, hi) = (
        lo.as_primitive::<Float64Type>(),
        hi.as_primitive::<Float64Type>(),
    );
    let integers = matches!(return_type(a[0].data_type(), discrete), DataType::Int64);
    let mut ints = Int64Builder::with_capacity(lists.len());
    let mut floats = Float64Builder::with_capacity(lists.len());
    for g in 0..lists.len() {
        for p in [lo, hi]
            .into_iter()
            .filter(|x| x.is_valid(g))
            .map(|x| x.value(g))
        {
            if !(0.0..=1.0).contains(&p) {
                return Err(RuntimeError::new(
                    ErrorClass::ArgumentError,
                    "NumberOutOfRange",
                    format!("a percentile must be between 0.0 and 1.0, got {p}"),
                )
                .into());
            }
        }
        let values = (!lists.is_null(g)).then(|| lists.value(g));
        let (Some(values), true) = (values, hi.is_valid(g)) else {
            ints.append_null();
            floats.append_null();
            continue;
        };
        if integers {
            let v = arrow::compute::cast(&values, &DataType::Int64)?;
            let mut xs: Vec<i64> = v.as_primitive::<Int64Type>().iter().flatten().collect();
            xs.sort_unstable();
            match xs.len() {
                0 => ints.append_null(),
                n => ints.append_value(xs[position(hi.value(g), n, true).0]),
            }
            continue;
        }
        let v = arrow::compute::cast(&values, &DataType::Float64)?;
        let mut xs: Vec<f64> = v.as_primitive::<Float64Type>().iter().flatten().collect();
        xs.sort_by(f64::total_cmp);
        match xs.len() {
            0 => floats.append_null(),
            n => {
                let (i, j, w) = position(hi.value(g), n, discrete);
                floats.append_value(xs[i] + (xs[j] - xs[i]) * w);
            }
        }
    }
    Ok(if integers {
        Arc::new(ints.finish())
    } else {
        Arc::new(floats.finish())
    })
}

#[cfg(test)]
mod tests {
    use super::position;

    #[test]
    fn positions_follow_the_nearest_rank_and_linear_interpolation() {
        // 10, 20, 30: the median is the second, 1.0 the last, 0.0 the first.
        assert_eq!(position(0.5, 3, true), (1, 1, 0.0));
        assert_eq!(position(1.0, 3, true), (2, 2, 0.0));
        assert_eq!(position(0.0, 3, true), (0, 0, 0.0));
        // Four values: the 0.5 rank is the second (nearest rank, not rounding up).
        assert_eq!(position(0.5, 4, true), (1, 1, 0.0));
        assert_eq!(position(0.51, 4, true), (2, 2, 0.0));
        assert_eq!(position(0.5, 3, false), (1, 2, 0.0));
        let (i, j, w) = position(0.5, 4, false);
        assert_eq!((i, j), (1, 2));
        assert!((w - 0.5).abs() < 1e-12);
        assert_eq!(position(1.0, 1, false), (0, 0, 0.0));
    }
}
