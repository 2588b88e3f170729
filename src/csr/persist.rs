//! Index files beside the datasets (`<graph dir>/_csr/`), stamped with the dataset versions they
//! were built from. A file whose versions differ from the datasets' is never used.
//!
//! Layout (little endian): magic, then `u64` header fields, then the arrays, then a CRC-32 of
//! everything before it. A file whose checksum or contents don't hold up (offsets that
//! decrease, ordinals or rows out of range, unsorted neighbour runs) is corrupt: reported, never used, rebuilt.

use super::{Csr, CsrIndex, NodeKeys, Versions};
use crate::error::{Error, Result};
use std::path::{Path, PathBuf};

const CSR_MAGIC: &[u8; 8] = b"LCSRIDX3";
const KEYS_MAGIC: &[u8; 8] = b"LCSRKEY2";

/// What reading an index file found.
#[derive(Debug)]
pub enum Read<T> {
    /// Usable: checksum, versions and contents hold.
    Ok(T),
    /// No file, another format, or built from other dataset versions: build it.
    Absent,
    /// Damaged: the reason, for the warning; build it again.
    Corrupt(String),
}

/// The file's bytes without its checksum, if the checksum holds.
fn checked(buf: &[u8]) -> std::result::Result<&[u8], String> {
    if buf.len() < 12 {
        return Err("truncated".into());
    }
    let (body, tail) = buf.split_at(buf.len() - 4);
    let want = u32::from_le_bytes(tail.try_into().expect("4 bytes"));
    if crc32fast::hash(body) != want {
        return Err("checksum mismatch".into());
    }
    Ok(body)
}

fn with_checksum(mut out: Vec<u8>) -> Vec<u8> {
    let crc = crc32fast::hash(&out);
    out.extend_from_slice(&crc.to_le_bytes());
    out
}

/// The folder holding a graph's index files.
pub fn index_dir(base: &Path) -> PathBuf {
    base.join("_csr")
}

/// The folder holding the index files of a graph read at a past state, one per combination
/// of its datasets' states (`versions`), under [`index_dir`]'s `at/`.
pub fn version_dir(base: &Path, versions: &[Option<u64>]) -> PathBuf {
    let mut bytes = Vec::new();
    for v in versions {
        bytes.extend_from_slice(&v.unwrap_or(u64::MAX).to_le_bytes());
    }
    index_dir(base)
        .join("at")
        .join(format!("{:08x}", crc32fast::hash(&bytes)))
}

/// File of an index: named after its dataset source and the columns it is built on (a key
/// column; endpoint columns and the endpoints' key columns), so that two labels or types
/// over one dataset with other columns (a reverse view) never share a file. The name ends
/// with a hash of the exact source and columns (the readable part is sanitized).
pub fn file_for(dir: &Path, source: &str, columns: &[&str], ext: &str) -> PathBuf {
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
    let mut id = String::from(source);
    for c in columns {
        id.push('\0');
        id.push_str(c);
    }
    let hash = crc32fast::hash(id.as_bytes());
    dir.join(format!("{stem}.{hash:08x}.{ext}"))
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
            return Err(Error::storage(format!(
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

/// Writes atomically (a temp file of its own in the same folder, then a rename) so a crash
/// never leaves a half-written index and processes building the same index at once don't
/// meet: the last rename wins, with the same content.
fn write_atomic(path: &Path, bytes: &[u8]) -> Result<()> {
    use std::io::Write;
    let what = |e: std::io::Error| {
        crate::Error::storage_caused(format!("writing index file {}", path.display()), e)
    };
    let dir = path.parent().unwrap_or(Path::new("."));
    std::fs::create_dir_all(dir).map_err(what)?;
    // Created like the datasets' files (0666 less the umask), not a temp file's 0600.
    let mut builder = tempfile::Builder::new();
    #[cfg(unix)]
    builder.permissions(std::os::unix::fs::PermissionsExt::from_mode(0o666));
    let mut tmp = builder.tempfile_in(dir).map_err(what)?;
    tmp.write_all(bytes).map_err(what)?;
    tmp.persist(path).map_err(|e| what(e.error))?;
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
    write_atomic(path, &with_checksum(out))
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

/// Reads a file of `magic`'s format in one read and checks it: the checksum, then `parse`
/// (`None`: built from other dataset versions), then `validate` on what it parsed.
fn read_checked<T>(
    path: &Path,
    magic: &[u8; 8],
    parse: impl FnOnce(&mut Reader<'_>) -> Result<Option<T>>,
    validate: impl FnOnce(T) -> std::result::Result<T, String>,
) -> Read<T> {
    let Ok(buf) = std::fs::read(path) else {
        return Read::Absent;
    };
    if buf.len() < 8 || &buf[..8] != magic {
        return Read::Absent;
    }
    let body = match checked(&buf) {
        Ok(b) => b,
        Err(why) => return Read::Corrupt(why),
    };
    let mut r = Reader {
        buf: body,
        pos: 8,
        path,
    };
    match parse(&mut r) {
        Ok(None) => Read::Absent,
        Ok(Some(x)) => match validate(x) {
            Ok(x) => Read::Ok(x),
            Err(why) => Read::Corrupt(why),
        },
        Err(e) => Read::Corrupt(e.to_string()),
    }
}

/// Reads an index in one read and checks it (checksum, then the arrays' bounds).
pub fn read_csr(path: &Path, want: Versions) -> Read<CsrIndex> {
    let parse = |r: &mut Reader<'_>| -> Result<Option<CsrIndex>> {
        let v = Versions {
            edges: r.u64()?,
            from: r.u64()?,
            to: r.u64()?,
        };
        if v != want {
            return Ok(None);
        }
        let table_rows = r.u64()? as usize;
        let out = get_csr(r)?;
        let inc = get_csr(r)?;
        Ok(Some(CsrIndex {
            out,
            inc,
            table_rows,
            versions: Some(v),
            self_loops: Default::default(),
        }))
    };
    read_checked(path, CSR_MAGIC, parse, |idx| {
        validate_csr(&idx).map(|()| idx)
    })
}

/// Offsets start at 0, never decrease and end at the edge count; neighbours are ordinals of
/// the other direction's nodes; edge rows are rows of the table.
fn validate_csr(idx: &CsrIndex) -> std::result::Result<(), String> {
    let one = |c: &Csr, far_nodes: usize, what: &str| -> std::result::Result<(), String> {
        let o = &c.offsets;
        if o.first() != Some(&0) || o.windows(2).any(|w| w[0] > w[1]) {
            return Err(format!("{what} offsets are not monotone from 0"));
        }
        if *o.last().expect("n + 1 offsets") as usize != c.neighbors.len() {
            return Err(format!("{what} offsets don't end at the edge count"));
        }
        if c.neighbors.iter().any(|&n| n as usize >= far_nodes) {
            return Err(format!("{what} neighbour ordinal out of range"));
        }
        if c.edge_rows.iter().any(|&e| e as usize >= idx.table_rows) {
            return Err(format!("{what} edge row out of range"));
        }
        // Intersections merge sorted runs.
        if o.windows(2).any(|w| {
            let run = &c.neighbors[w[0] as usize..w[1] as usize];
            run.windows(2).any(|p| p[0] > p[1])
        }) {
            return Err(format!("{what} neighbours are not sorted"));
        }
        Ok(())
    };
    one(&idx.out, idx.inc.num_nodes(), "outgoing")?;
    one(&idx.inc, idx.out.num_nodes(), "incoming")
}

pub fn write_keys(path: &Path, k: &NodeKeys) -> Result<()> {
    let mut out = Vec::with_capacity(32 + k.memory_bytes());
    out.extend_from_slice(KEYS_MAGIC);
    put_u64(&mut out, k.version.unwrap_or_default());
    put_u64(&mut out, k.len() as u64);
    put_i64s(&mut out, &k.by_ordinal);
    put_i64s(&mut out, &k.sorted);
    put_u32s(&mut out, &k.ordinals);
    write_atomic(path, &with_checksum(out))
}

/// The stamped version of a keys file, without reading the keys.
pub fn read_keys_version(path: &Path) -> Option<u64> {
    let mut f = std::fs::File::open(path).ok()?;
    let mut head = [0u8; 16];
    std::io::Read::read_exact(&mut f, &mut head).ok()?;
    (&head[..8] == KEYS_MAGIC).then(|| u64::from_le_bytes(head[8..].try_into().expect("8 bytes")))
}

pub fn read_keys(path: &Path, version: u64) -> Read<NodeKeys> {
    let parse = |r: &mut Reader<'_>| -> Result<Option<NodeKeys>> {
        if r.u64()? != version {
            return Ok(None);
        }
        let n = r.u64()? as usize;
        Ok(Some(NodeKeys {
            by_ordinal: r.i64s(n)?,
            sorted: r.i64s(n)?,
            ordinals: r.u32s(n)?,
            version: Some(version),
            dense: None,
        }))
    };
    // Keys ascending, ordinals in range, and each sorted key is the key of its ordinal.
    let validate = |k: NodeKeys| {
        let n = k.by_ordinal.len();
        let sorted = k.sorted.windows(2).all(|w| w[0] < w[1]);
        let in_range = k.ordinals.iter().all(|&o| (o as usize) < n);
        let agree = k
            .sorted
            .iter()
            .zip(&k.ordinals)
            .all(|(key, &o)| k.by_ordinal.get(o as usize) == Some(key));
        if sorted && in_range && agree {
            Ok(k.with_dense())
        } else {
            Err("keys and ordinals don't agree".to_string())
        }
    };
    read_checked(path, KEYS_MAGIC, parse, validate)
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
        assert!(matches!(read_keys(&kp, 3), Read::Ok(k) if k == keys));
        assert!(matches!(read_keys(&kp, 4), Read::Absent));

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
        let Read::Ok(back) = read_csr(&p, v) else {
            panic!("round trip")
        };
        assert_eq!(back.out, idx.out);
        assert_eq!(back.inc, idx.inc);
        assert!(matches!(
            read_csr(&p, Versions { edges: 8, ..v }),
            Read::Absent
        ));
        std::fs::write(&p, b"LCSRIDX1garbage").unwrap();
        assert!(matches!(read_csr(&p, v), Read::Absent));
    }

    /// Every single-byte change, truncation or zeroing of a file is caught: by the checksum,
    /// and where a file is rewritten with a valid checksum but wrong contents, by the bounds.
    #[test]
    fn damaged_files_are_corrupt_never_used() {
        let dir = tempfile::tempdir().unwrap();
        let keys = NodeKeys {
            version: Some(1),
            ..NodeKeys::from_keys(&Int64Array::from((0..50).collect::<Vec<i64>>())).unwrap()
        };
        let v = Versions {
            edges: 1,
            from: 1,
            to: 1,
        };
        let src: Vec<i64> = (0..200).map(|i| i % 50).collect();
        let dst: Vec<i64> = (0..200).map(|i| (i * 7) % 50).collect();
        let idx = CsrIndex::build(
            &Int64Array::from(src),
            &Int64Array::from(dst),
            &keys,
            &keys,
            Some(v),
        )
        .unwrap();
        let (p, kp) = (dir.path().join("r.csr"), dir.path().join("k.keys"));
        write_csr(&p, &idx).unwrap();
        write_keys(&kp, &keys).unwrap();
        let good = std::fs::read(&p).unwrap();
        for pos in (8..good.len()).step_by(7) {
            let mut bad = good.clone();
            bad[pos] ^= 0x10;
            std::fs::write(&p, &bad).unwrap();
            assert!(matches!(read_csr(&p, v), Read::Corrupt(_)), "byte {pos}");
        }
        std::fs::write(&p, &good[..good.len() / 2]).unwrap();
        assert!(matches!(read_csr(&p, v), Read::Corrupt(_)));
        let mut zeroed = good.clone();
        zeroed[40..200].fill(0);
        std::fs::write(&p, &zeroed).unwrap();
        assert!(matches!(read_csr(&p, v), Read::Corrupt(_)));
        // A valid checksum over contents out of range (a neighbour past the last node).
        let copy = |idx: &CsrIndex| CsrIndex {
            out: idx.out.clone(),
            inc: idx.inc.clone(),
            table_rows: idx.table_rows,
            versions: idx.versions,
            self_loops: Default::default(),
        };
        let mut broken = copy(&idx);
        broken.out.neighbors[3] = 1000;
        write_csr(&p, &broken).unwrap();
        assert!(matches!(read_csr(&p, v), Read::Corrupt(why) if why.contains("neighbour")));
        let mut broken = copy(&idx);
        broken.inc.offsets[5] = 0;
        write_csr(&p, &broken).unwrap();
        assert!(matches!(read_csr(&p, v), Read::Corrupt(why) if why.contains("monotone")));
        let good_keys = std::fs::read(&kp).unwrap();
        let mut bad = good_keys.clone();
        bad[30] ^= 1;
        std::fs::write(&kp, &bad).unwrap();
        assert!(matches!(read_keys(&kp, 1), Read::Corrupt(_)));
    }

    /// Index files are created with the mode the umask gives any other file.
    #[test]
    #[cfg(unix)]
    fn index_files_get_the_mode_other_files_get() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let plain = dir.path().join("plain");
        std::fs::write(&plain, b"x").unwrap();
        let index = dir.path().join("_csr").join("x.csr");
        write_atomic(&index, b"x").unwrap();
        let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode(&index), mode(&plain));
    }

    /// Writers of one index file at once (processes opening a graph for the first time) each
    /// use a temp file of their own: all succeed and the file holds one whole write.
    #[test]
    fn concurrent_writers_never_share_a_temp_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("_csr").join("x.csr");
        // Where a fixed temp name would go, something else is in the way.
        std::fs::create_dir_all(path.with_extension("tmp")).unwrap();
        let writers: Vec<_> = (0..16u8)
            .map(|k| {
                let path = path.clone();
                std::thread::spawn(move || write_atomic(&path, &vec![k; 1 << 20]))
            })
            .collect();
        for w in writers {
            w.join().unwrap().unwrap();
        }
        let bytes = std::fs::read(&path).unwrap();
        assert_eq!(bytes.len(), 1 << 20);
        assert!(bytes.iter().all(|b| *b == bytes[0]));
    }
}
