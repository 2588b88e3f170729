//! Index files beside the datasets (`<graph dir>/_csr/`), stamped with the dataset versions they
//! were built from. A file whose versions differ from the datasets' is never used.
//!
//! Layout (little endian): magic, then `u64` header fields, then the arrays.

use super::{Csr, CsrIndex, NodeKeys, Versions};
use crate::error::{Error, Result};
use std::path::{Path, PathBuf};

const CSR_MAGIC: &[u8; 8] = b"LCSRIDX1";
const KEYS_MAGIC: &[u8; 8] = b"LCSRKEY1";

/// The folder holding a graph's index files.
pub fn index_dir(base: &Path) -> PathBuf {
    base.join("_csr")
}

/// File of a table's index: named after its dataset source.
pub fn file_for(base: &Path, source: &str, ext: &str) -> PathBuf {
    let stem: String = source
        .chars()
        .map(|c| {
            if c.is_alphanumeric() || c == '.' || c == '_' || c == '-' {
                c
            } else {
                '_'
            }
        })
        .collect();
    index_dir(base).join(format!("{stem}.{ext}"))
}

fn put_u64(out: &mut Vec<u8>, v: u64) {
    out.extend_from_slice(&v.to_le_bytes());
}

fn put_u32s(out: &mut Vec<u8>, v: &[u32]) {
    out.reserve(v.len() * 4);
    for x in v {
        out.extend_from_slice(&x.to_le_bytes());
    }
}

fn put_i64s(out: &mut Vec<u8>, v: &[i64]) {
    out.reserve(v.len() * 8);
    for x in v {
        out.extend_from_slice(&x.to_le_bytes());
    }
}

struct Reader<'a> {
    buf: &'a [u8],
    pos: usize,
    path: &'a Path,
}

impl<'a> Reader<'a> {
    fn take(&mut self, n: usize) -> Result<&'a [u8]> {
        if self.pos + n > self.buf.len() {
            return Err(Error::Storage(format!(
                "index file {} is truncated",
                self.path.display()
            )));
        }
        let s = &self.buf[self.pos..self.pos + n];
        self.pos += n;
        Ok(s)
    }

    fn u64(&mut self) -> Result<u64> {
        Ok(u64::from_le_bytes(
            self.take(8)?.try_into().expect("8 bytes"),
        ))
    }

    fn u32s(&mut self, n: usize) -> Result<Vec<u32>> {
        Ok(self
            .take(n * 4)?
            .chunks_exact(4)
            .map(|c| u32::from_le_bytes(c.try_into().expect("4 bytes")))
            .collect())
    }

    fn i64s(&mut self, n: usize) -> Result<Vec<i64>> {
        Ok(self
            .take(n * 8)?
            .chunks_exact(8)
            .map(|c| i64::from_le_bytes(c.try_into().expect("8 bytes")))
            .collect())
    }
}

/// Writes atomically (temp file + rename) so a crash never leaves a half-written index.
fn write_atomic(path: &Path, bytes: &[u8]) -> Result<()> {
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir)?;
    }
    let tmp = path.with_extension("tmp");
    std::fs::write(&tmp, bytes)?;
    std::fs::rename(&tmp, path)?;
    Ok(())
}

fn put_csr(out: &mut Vec<u8>, c: &Csr) {
    put_u64(out, c.num_nodes() as u64);
    put_u64(out, c.num_edges() as u64);
    put_u32s(out, &c.offsets);
    put_u32s(out, &c.neighbors);
    put_u32s(out, &c.edge_rows);
}

fn get_csr(r: &mut Reader<'_>) -> Result<Csr> {
    let nodes = r.u64()? as usize;
    let edges = r.u64()? as usize;
    Ok(Csr {
        offsets: r.u32s(nodes + 1)?,
        neighbors: r.u32s(edges)?,
        edge_rows: r.u32s(edges)?,
    })
}

pub fn write_csr(path: &Path, idx: &CsrIndex) -> Result<()> {
    let v = idx.versions.unwrap_or_default();
    let mut out = Vec::with_capacity(64 + idx.memory_bytes());
    out.extend_from_slice(CSR_MAGIC);
    put_u64(&mut out, v.edges);
    put_u64(&mut out, v.from);
    put_u64(&mut out, v.to);
    put_u64(&mut out, idx.table_rows as u64);
    put_csr(&mut out, &idx.out);
    put_csr(&mut out, &idx.inc);
    write_atomic(path, &out)
}

/// The stamped versions of an index file, without reading the arrays.
pub fn read_csr_versions(path: &Path) -> Option<Versions> {
    let mut f = std::fs::File::open(path).ok()?;
    let mut head = [0u8; 32];
    std::io::Read::read_exact(&mut f, &mut head).ok()?;
    if &head[..8] != CSR_MAGIC {
        return None;
    }
    let u = |i: usize| u64::from_le_bytes(head[i..i + 8].try_into().expect("8 bytes"));
    Some(Versions {
        edges: u(8),
        from: u(16),
        to: u(24),
    })
}

/// Reads an index in one read; `None` if absent, unreadable or built from other versions.
pub fn read_csr(path: &Path, want: Versions) -> Option<CsrIndex> {
    let buf = std::fs::read(path).ok()?;
    let mut r = Reader {
        buf: &buf,
        pos: 0,
        path,
    };
    if r.take(8).ok()? != CSR_MAGIC {
        return None;
    }
    let v = Versions {
        edges: r.u64().ok()?,
        from: r.u64().ok()?,
        to: r.u64().ok()?,
    };
    if v != want {
        return None;
    }
    let table_rows = r.u64().ok()? as usize;
    let out = get_csr(&mut r).ok()?;
    let inc = get_csr(&mut r).ok()?;
    Some(CsrIndex {
        out,
        inc,
        table_rows,
        versions: Some(v),
        self_loops: Default::default(),
    })
}

pub fn write_keys(path: &Path, k: &NodeKeys) -> Result<()> {
    let mut out = Vec::with_capacity(32 + k.memory_bytes());
    out.extend_from_slice(KEYS_MAGIC);
    put_u64(&mut out, k.version.unwrap_or_default());
    put_u64(&mut out, k.len() as u64);
    put_i64s(&mut out, &k.by_ordinal);
    put_i64s(&mut out, &k.sorted);
    put_u32s(&mut out, &k.ordinals);
    write_atomic(path, &out)
}

pub fn read_keys(path: &Path, version: u64) -> Option<NodeKeys> {
    let buf = std::fs::read(path).ok()?;
    let mut r = Reader {
        buf: &buf,
        pos: 0,
        path,
    };
    if r.take(8).ok()? != KEYS_MAGIC || r.u64().ok()? != version {
        return None;
    }
    let n = r.u64().ok()? as usize;
    Some(
        NodeKeys {
            by_ordinal: r.i64s(n).ok()?,
            sorted: r.i64s(n).ok()?,
            ordinals: r.u32s(n).ok()?,
            version: Some(version),
            dense: None,
        }
        .with_dense(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use arrow::array::Int64Array;

    #[test]
    fn round_trip_and_version_check() {
        let dir = tempfile::tempdir().unwrap();
        let keys = NodeKeys {
            version: Some(3),
            ..NodeKeys::from_keys(&Int64Array::from(vec![5, 1, 9])).unwrap()
        };
        let kp = dir.path().join("k.keys");
        write_keys(&kp, &keys).unwrap();
        assert_eq!(read_keys(&kp, 3), Some(keys.clone()));
        assert_eq!(read_keys(&kp, 4), None);

        let v = Versions {
            edges: 7,
            from: 3,
            to: 3,
        };
        let idx = CsrIndex::build(
            &Int64Array::from(vec![5, 9, 1]),
            &Int64Array::from(vec![9, 1, 5]),
            &keys,
            &keys,
            Some(v),
        )
        .unwrap();
        let p = dir.path().join("r.csr");
        write_csr(&p, &idx).unwrap();
        assert_eq!(read_csr_versions(&p), Some(v));
        let back = read_csr(&p, v).unwrap();
        assert_eq!(back.out, idx.out);
        assert_eq!(back.inc, idx.inc);
        assert!(read_csr(&p, Versions { edges: 8, ..v }).is_none());
        std::fs::write(&p, b"LCSRIDX1garbage").unwrap();
        assert!(read_csr(&p, v).is_none());
    }
}
