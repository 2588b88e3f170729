//! Node key -> dense ordinal (the node's row position in its table), by binary search over the
//! keys in sorted order.

use super::as_i64;
use crate::error::{Error, Result};
use arrow::array::Array;

#[derive(Clone, PartialEq, Eq, Default)]
pub struct NodeKeys {
    /// Keys in ascending order.
    pub sorted: Vec<i64>,
    /// The ordinal of `sorted[i]`.
    pub ordinals: Vec<u32>,
    /// The key at each ordinal (table order), for mapping back.
    pub by_ordinal: Vec<i64>,
    pub version: Option<u64>,
    /// When keys are compact (range within a few times their count): ordinal of `min + i` at
    /// `i` (`u32::MAX` = no node). A lookup is then one array read instead of a search.
    pub dense: Option<(i64, Vec<u32>)>,
}

/// Dense lookup when the key range is at most this many times the number of keys.
const DENSE_FACTOR: i64 = 8;

impl std::fmt::Debug for NodeKeys {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "NodeKeys {{ nodes: {}, version: {:?} }}",
            self.len(),
            self.version
        )
    }
}

impl NodeKeys {
    /// From the key column in table order. Keys must be non-null and unique.
    pub fn from_keys(keys: &dyn Array) -> Result<Self> {
        let k = as_i64(keys)?;
        if k.null_count() > 0 {
            return Err(Error::storage("node key column has nulls"));
        }
        if k.len() > u32::MAX as usize {
            return Err(Error::storage("node table too large for u32 ordinals"));
        }
        let by_ordinal: Vec<i64> = k.values().to_vec();
        let mut pairs: Vec<(i64, u32)> = by_ordinal
            .iter()
            .enumerate()
            .map(|(i, &v)| (v, i as u32))
            .collect();
        pairs.sort_unstable();
        if let Some(w) = pairs.windows(2).find(|w| w[0].0 == w[1].0) {
            return Err(Error::storage(format!("node key {} is not unique", w[0].0)));
        }
        Ok(Self {
            sorted: pairs.iter().map(|p| p.0).collect(),
            ordinals: pairs.iter().map(|p| p.1).collect(),
            by_ordinal,
            version: None,
            dense: None,
        }
        .with_dense())
    }

    /// Adds the dense lookup table when the keys are compact enough.
    pub fn with_dense(mut self) -> Self {
        self.dense = None;
        if let (Some(&lo), Some(&hi)) = (self.sorted.first(), self.sorted.last()) {
            let n = self.sorted.len() as i64;
            if let Some(range) = hi.checked_sub(lo) {
                if range < DENSE_FACTOR * n + 1024 {
                    let mut table = vec![u32::MAX; range as usize + 1];
                    for (k, o) in self.sorted.iter().zip(&self.ordinals) {
                        table[(k - lo) as usize] = *o;
                    }
                    self.dense = Some((lo, table));
                }
            }
        }
        self
    }

    pub fn len(&self) -> usize {
        self.by_ordinal.len()
    }

    pub fn is_empty(&self) -> bool {
        self.by_ordinal.is_empty()
    }

    #[inline]
    pub fn ordinal(&self, key: i64) -> Option<u32> {
        if let Some((lo, table)) = &self.dense {
            let i = key.wrapping_sub(*lo);
            return match table.get(usize::try_from(i).ok()?) {
                Some(&o) if o != u32::MAX && key >= *lo => Some(o),
                _ => None,
            };
        }
        self.sorted
            .binary_search(&key)
            .ok()
            .map(|i| self.ordinals[i])
    }

    pub fn memory_bytes(&self) -> usize {
        8 * self.sorted.len()
            + 4 * self.ordinals.len()
            + 8 * self.by_ordinal.len()
            + self.dense.as_ref().map_or(0, |(_, t)| 4 * t.len())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use arrow::array::{Int32Array, Int64Array};

    #[test]
    fn lookup_and_uniqueness() {
        let k = NodeKeys::from_keys(&Int64Array::from(vec![30, 10, 20])).unwrap();
        assert_eq!(k.ordinal(10), Some(1));
        assert_eq!(k.ordinal(30), Some(0));
        assert_eq!(k.ordinal(15), None);
        assert_eq!(k.by_ordinal, vec![30, 10, 20]);
        let k32 = NodeKeys::from_keys(&Int32Array::from(vec![5, 6])).unwrap();
        assert_eq!(k32.ordinal(6), Some(1));
        assert!(NodeKeys::from_keys(&Int64Array::from(vec![1, 1])).is_err());
        // Compact keys get the dense table; sparse ones are searched. Same answers.
        let dense = NodeKeys::from_keys(&Int64Array::from(vec![107, 100, 114])).unwrap();
        assert!(dense.dense.is_some());
        let sparse = NodeKeys::from_keys(&Int64Array::from(vec![107, 100, i64::MAX])).unwrap();
        assert!(sparse.dense.is_none());
        for k in [99, 100, 101, 107, 114, 115, -5, i64::MIN] {
            let search = dense
                .sorted
                .binary_search(&k)
                .ok()
                .map(|i| dense.ordinals[i]);
            assert_eq!(dense.ordinal(k), search, "{k}");
        }
        assert_eq!(sparse.ordinal(i64::MAX), Some(2));
    }
}
