//! Node key -> dense ordinal (the node's row position in its table), by binary search over the
//! keys in sorted order.

use super::as_i64;
use super::mapped::Blocks;
use crate::error::{Error, Result};
use arrow::array::Array;
use arrow::buffer::ScalarBuffer;
use arrow::datatypes::ToByteSlice;
use std::sync::Arc;

/// Keys built in memory, or windows of a mapped index file whose blocks are checked on first
/// use.
#[derive(Clone, Default)]
pub struct NodeKeys {
    /// Keys in ascending order.
    pub sorted: ScalarBuffer<i64>,
    /// The ordinal of `sorted[i]`.
    pub ordinals: ScalarBuffer<u32>,
    pub version: Option<u64>,
    /// When keys are compact (range within a few times their count): ordinal of `min + i` at
    /// `i` (`u32::MAX` = no node). A lookup is then one array read instead of a search.
    pub dense: Option<(i64, ScalarBuffer<u32>)>,
    /// A mapped file's checks: of `sorted` with `ordinals`, and of `dense`.
    checks: Option<Arc<(Blocks, Option<Blocks>)>>,
}

impl PartialEq for NodeKeys {
    fn eq(&self, other: &Self) -> bool {
        self.sorted == other.sorted
            && self.ordinals == other.ordinals
            && self.version == other.version
            && self.dense == other.dense
    }
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

/// Entries per checked block of a keys file written here, as a shift (512: a binary search
/// checks one block per probe).
pub const KEY_BLOCK_SHIFT: usize = 9;

/// The entries of block `b` of `1 << shift` of an array of `len`.
fn block(shift: usize, b: usize, len: usize) -> std::ops::Range<usize> {
    (b << shift).min(len)..((b + 1) << shift).min(len)
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
        let mut pairs: Vec<(i64, u32)> = k
            .values()
            .iter()
            .enumerate()
            .map(|(i, &v)| (v, i as u32))
            .collect();
        pairs.sort_unstable();
        if let Some(w) = pairs.windows(2).find(|w| w[0].0 == w[1].0) {
            return Err(Error::storage(format!("node key {} is not unique", w[0].0)));
        }
        let sorted: Vec<i64> = pairs.iter().map(|p| p.0).collect();
        let ordinals: Vec<u32> = pairs.iter().map(|p| p.1).collect();
        let dense = dense_table(&sorted, &ordinals);
        Ok(Self {
            sorted: sorted.into(),
            ordinals: ordinals.into(),
            version: None,
            dense,
            checks: None,
        })
    }

    /// Windows of a mapped file, checked block by block on first use.
    pub fn mapped(
        sorted: ScalarBuffer<i64>,
        ordinals: ScalarBuffer<u32>,
        dense: Option<(i64, ScalarBuffer<u32>)>,
        version: u64,
        checks: (Blocks, Option<Blocks>),
    ) -> Self {
        Self {
            sorted,
            ordinals,
            version: Some(version),
            dense,
            checks: Some(Arc::new(checks)),
        }
    }

    pub fn len(&self) -> usize {
        self.sorted.len()
    }

    pub fn is_empty(&self) -> bool {
        self.sorted.is_empty()
    }

    /// Number of blocks of `1 << shift` entries of `sorted` (with `ordinals`) and of the
    /// dense table.
    pub fn num_blocks(&self, shift: usize) -> (usize, usize) {
        let dense = self.dense.as_ref().map_or(0, |(_, t)| t.len());
        (self.len().div_ceil(1 << shift), dense.div_ceil(1 << shift))
    }

    /// Checks block `b` of `sorted` and `ordinals` (keys ascending, ordinals in range) and
    /// computes its CRC-32 (over the keys, then the ordinals).
    pub fn sorted_block_crc(&self, shift: usize, b: usize) -> std::result::Result<u32, String> {
        let r = block(shift, b, self.len());
        // From the last key of the block before (a search steps across the boundary).
        let from = r.start.saturating_sub(1);
        let (keys, ords) = (&self.sorted[from..r.end], &self.ordinals[r.clone()]);
        if keys.windows(2).any(|w| w[0] >= w[1]) {
            return Err("keys are not ascending".into());
        }
        let keys = &self.sorted[r];
        if ords.iter().any(|&o| o as usize >= self.len()) {
            return Err("ordinal out of range".into());
        }
        let mut h = crc32fast::Hasher::new();
        h.update(keys.to_byte_slice());
        h.update(ords.to_byte_slice());
        Ok(h.finalize())
    }

    /// Checks block `b` of the dense table (ordinals in range or none) and computes its CRC-32.
    pub fn dense_block_crc(&self, shift: usize, b: usize) -> std::result::Result<u32, String> {
        let Some((_, table)) = &self.dense else {
            return Err("no dense table".into());
        };
        let part = &table[block(shift, b, table.len())];
        if part
            .iter()
            .any(|&o| o != u32::MAX && o as usize >= self.len())
        {
            return Err("dense ordinal out of range".into());
        }
        Ok(crc32fast::hash(part.to_byte_slice()))
    }

    /// Whether entry `i` of `sorted` may be read: built here, or its block checked.
    #[inline]
    fn sorted_sound(&self, i: usize) -> bool {
        self.checks.as_ref().is_none_or(|c| {
            let (shift, b) = (c.0.shift(), i >> c.0.shift());
            c.0.sound(b, || self.sorted_block_crc(shift, b))
        })
    }

    #[inline]
    fn dense_sound(&self, i: usize) -> bool {
        match self.checks.as_deref() {
            None => true,
            Some((_, Some(d))) => {
                let (shift, b) = (d.shift(), i >> d.shift());
                d.sound(b, || self.dense_block_crc(shift, b))
            }
            Some((_, None)) => false,
        }
    }

    /// The damage a check of its mapped file found, as an error message.
    pub fn damage(&self) -> Option<String> {
        self.checks.as_ref()?.0.file().damage()
    }

    /// An error once a check of its mapped file found damage.
    pub fn intact(&self) -> Result<()> {
        self.damage().map_or(Ok(()), |why| Err(Error::storage(why)))
    }

    /// Checks every block now (`index status`): the damage found, if any.
    pub fn check_all(&self) -> Option<String> {
        let (sorted, dense) = self.checks.as_deref()?;
        let all_sound = (0..sorted.len()).all(|b| self.sorted_sound(b << sorted.shift()))
            && dense
                .iter()
                .all(|d| (0..d.len()).all(|b| self.dense_sound(b << d.shift())));
        debug_assert_eq!(all_sound, self.damage().is_none());
        self.damage()
    }

    /// The ordinal of `key`; none in a damaged block.
    #[inline]
    pub fn ordinal(&self, key: i64) -> Option<u32> {
        let Some((lo, table)) = &self.dense else {
            return self.searched(key);
        };
        let i = usize::try_from(key.wrapping_sub(*lo)).ok()?;
        if key < *lo || i >= table.len() || !self.dense_sound(i) {
            return None;
        }
        Some(table[i]).filter(|&o| o != u32::MAX)
    }

    /// The ordinal of `key` by binary search (kept out of line: the dense lookup above is the
    /// one inlined into the operators' loops).
    #[inline(never)]
    fn searched(&self, key: i64) -> Option<u32> {
        let Some(c) = self.checks.as_deref() else {
            return self
                .sorted
                .binary_search(&key)
                .ok()
                .map(|i| self.ordinals[i]);
        };
        let (blocks, shift) = (&c.0, c.0.shift());
        let sound =
            |i: usize| blocks.sound(i >> shift, || self.sorted_block_crc(shift, i >> shift));
        // Narrowed to one block's width, each probe's block checked first; then that span
        // (its ends' blocks checked) searched as it is.
        let (mut lo, mut hi) = (0, self.len());
        while hi - lo > 1 << shift {
            let mid = lo + (hi - lo) / 2;
            if !sound(mid) {
                return None;
            }
            if self.sorted[mid] < key {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        if lo < hi && !(sound(lo) && sound(hi - 1)) {
            return None;
        }
        let at = lo + self.sorted[lo..hi].partition_point(|&k| k < key);
        (at < self.len() && sound(at) && self.sorted[at] == key).then(|| self.ordinals[at])
    }

    /// Bytes held (or mapped).
    pub fn memory_bytes(&self) -> usize {
        12 * self.sorted.len() + self.dense.as_ref().map_or(0, |(_, t)| 4 * t.len())
    }
}

/// The dense lookup table of keys in ascending order, when they are compact enough.
fn dense_table(sorted: &[i64], ordinals: &[u32]) -> Option<(i64, ScalarBuffer<u32>)> {
    let (&lo, &hi) = (sorted.first()?, sorted.last()?);
    let range = hi.checked_sub(lo)?;
    if range >= DENSE_FACTOR * sorted.len() as i64 + 1024 {
        return None;
    }
    let mut table = vec![u32::MAX; range as usize + 1];
    for (k, o) in sorted.iter().zip(ordinals) {
        table[(k - lo) as usize] = *o;
    }
    Some((lo, table.into()))
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
        assert_eq!(k.sorted, vec![10, 20, 30]);
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
