//! The members of a long list parameter that `x IN $list` tests against, sorted once per
//! parameter (kept with it, `super::held`) rather than hashed once per batch: a set of ten
//! million integers built for each batch took seconds and hundreds of megabytes each time.
//! The sorted members take 8 bytes an integer (4 a string: its index).

use arrow::array::{Array, ArrayRef, AsArray};
use arrow::datatypes::Int64Type;

/// Lists shorter than this are hashed per call (cheaper than sorting them).
pub const SORTED_FROM: usize = 1024;

/// The sorted non-null members of one list.
#[derive(Debug)]
pub enum Members {
    Ints(Vec<i64>),
    /// Indexes into the list's strings, in the strings' order.
    Strs(Vec<u32>),
}

impl Members {
    /// Whether the integer `x` is a member.
    pub fn has_int(&self, x: i64) -> bool {
        matches!(self, Members::Ints(v) if v.binary_search(&x).is_ok())
    }

    /// Whether string `x` is a member of `items` (the list these were sorted from).
    pub fn has_str(&self, items: &ArrayRef, x: &str) -> bool {
        let (Members::Strs(v), Some(s)) = (self, items.as_string_opt::<i32>()) else {
            return false;
        };
        v.binary_search_by(|&i| s.value(i as usize).cmp(x)).is_ok()
    }
}

impl Members {
    /// The sorted members of `items` (64-bit integers or strings); `None` for elements of
    /// another type.
    pub fn sort(items: &ArrayRef) -> Option<Members> {
        Some(if let Some(ints) = items.as_primitive_opt::<Int64Type>() {
            let mut v: Vec<i64> = ints.iter().flatten().collect();
            v.sort_unstable();
            v.dedup();
            Members::Ints(v)
        } else if let Some(strs) = items.as_string_opt::<i32>() {
            let mut v: Vec<u32> = (0..strs.len() as u32)
                .filter(|&i| strs.is_valid(i as usize))
                .collect();
            v.sort_unstable_by(|&a, &b| strs.value(a as usize).cmp(strs.value(b as usize)));
            Members::Strs(v)
        } else {
            return None;
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use arrow::array::{Int64Array, StringArray};
    use std::sync::Arc;

    #[test]
    fn members_are_the_lists_non_null_values() {
        let ints: ArrayRef = Arc::new(Int64Array::from(vec![Some(5), None, Some(-3), Some(5)]));
        let m = Members::sort(&ints).unwrap();
        assert!(m.has_int(5) && m.has_int(-3) && !m.has_int(0));
        let strs: ArrayRef = Arc::new(StringArray::from(vec![Some("b"), None, Some("a")]));
        let s = Members::sort(&strs).unwrap();
        assert!(s.has_str(&strs, "a") && s.has_str(&strs, "b") && !s.has_str(&strs, ""));
        assert!(!s.has_int(1) && !m.has_str(&strs, "a"));
        let floats: ArrayRef = Arc::new(arrow::array::Float64Array::from(vec![1.0]));
        assert!(Members::sort(&floats).is_none());
    }
}
