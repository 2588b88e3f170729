//! Index files beside the datasets (`<graph dir>/_csr/`), stamped with the dataset versions they
//! were built from. A file whose versions differ from the datasets' is never used.
//!
//! Files are mapped, not read (see [`super::mapped`]). Layout (little endian): magic, `u64`
//! header fields (the block size among them), a CRC-32 per block of the arrays, zero padding,
//! a CRC-32 of all that (the head), then the arrays, each aligned for its type. Opening checks the head and that the arrays fill the
//! file exactly; a block's checksum and contents (offsets in order, ordinals and rows in range,
//! neighbour runs and keys sorted) are checked on its first use. A file damaged in its head is
//! corrupt when opened: reported, never used, rebuilt; one damaged in a block fails the queries
//! that reach the block and is removed, to be rebuilt at the next opening.

use super::keys::KEY_BLOCK_SHIFT;
use super::mapped::{self, Blocks, FileState};
use super::{Csr, CsrChecks, CsrIndex, NodeKeys, Versions, BLOCK_SHIFT};
use crate::error::Result;
use arrow::buffer::ScalarBuffer;
use arrow::datatypes::{ArrowNativeType, ToByteSlice};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Arc;

const CSR_MAGIC: &[u8; 8] = b"LCSRIDX4";
const KEYS_MAGIC: &[u8; 8] = b"LCSRKEY3";

/// What reading an index file found.
#[derive(Debug)]
pub enum Read<T> {
    /// Usable: the head's checksum, the versions and the layout hold.
    Ok(T),
    /// No file, another format, or built from other dataset versions: build it.
    Absent,
    /// Damaged: the reason, for the warning; build it again.
    Corrupt(String),
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

/// Writes atomically (a temp file of its own in the same folder, then a rename) so a crash
/// never leaves a half-written index and processes building the same index at once don't
/// meet: the last rename wins, with the same content.
fn write_atomic(
    path: &Path,
    write: impl FnOnce(&mut dyn Write) -> std::io::Result<()>,
) -> Result<()> {
    let what = |e: std::io::Error| {
        crate::Error::storage_caused(format!("writing index file {}", path.display()), e)
    };
    let dir = path.parent().unwrap_or(Path::new("."));
    std::fs::create_dir_all(dir).map_err(what)?;
    // Created like the datasets' files (0666 less the umask), not a temp file's 0600.
    let mut builder = tempfile::Builder::new();
    #[cfg(unix)]
    builder.permissions(std::os::unix::fs::PermissionsExt::from_mode(0o666));
    let tmp = builder.tempfile_in(dir).map_err(what)?;
    let mut out = std::io::BufWriter::with_capacity(1 << 20, tmp);
    write(&mut out).map_err(what)?;
    let tmp = out.into_inner().map_err(|e| what(e.into_error()))?;
    tmp.persist(path).map_err(|e| what(e.error))?;
    Ok(())
}

/// The head of a file: its header fields and block checksums, padded so that with the head's
/// own checksum it ends 8-byte aligned.
fn head(magic: &[u8; 8], fields: &[u64], crcs: &[u32]) -> Vec<u8> {
    let mut out = magic.to_vec();
    for f in fields {
        out.extend_from_slice(&f.to_le_bytes());
    }
    out.extend_from_slice(crcs.to_byte_slice());
    out.resize((out.len() + 4).next_multiple_of(8) - 4, 0);
    let crc = crc32fast::hash(&out);
    out.extend_from_slice(&crc.to_le_bytes());
    out
}

/// Reads a mapped file in order: header fields, block checksums, the head's checksum, arrays.
struct Cursor<'a> {
    map: &'a arrow::buffer::Buffer,
    pos: usize,
}

impl Cursor<'_> {
    fn u64(&mut self) -> std::result::Result<u64, String> {
        let b = self.map.get(self.pos..self.pos + 8).ok_or("truncated")?;
        self.pos += 8;
        Ok(u64::from_le_bytes(b.try_into().expect("8 bytes")))
    }

    fn usize(&mut self) -> std::result::Result<usize, String> {
        usize::try_from(self.u64()?).map_err(|_| "size out of range".to_string())
    }

    fn array<T: ArrowNativeType>(
        &mut self,
        len: usize,
    ) -> std::result::Result<ScalarBuffer<T>, String> {
        let a = mapped::window(self.map, self.pos, len).ok_or("truncated")?;
        self.pos += len * std::mem::size_of::<T>();
        Ok(a)
    }

    /// Checks the head's checksum (after its padding) and moves past it.
    fn end_head(&mut self) -> std::result::Result<(), String> {
        let end = (self.pos + 4).next_multiple_of(8);
        let (body, crc) = (
            self.map.get(..end - 4).ok_or("truncated")?,
            self.map.get(end - 4..end).ok_or("truncated")?,
        );
        if crc32fast::hash(body) != u32::from_le_bytes(crc.try_into().expect("4 bytes")) {
            return Err("header checksum mismatch".into());
        }
        self.pos = end;
        Ok(())
    }

    /// The arrays end where the file does.
    fn end(&self) -> std::result::Result<(), String> {
        match self.pos == self.map.len() {
            true => Ok(()),
            false => Err("file length does not match its header".into()),
        }
    }
}

/// Maps a file of `magic`'s format and reads it with `parse` (`Ok(None)`: built from other
/// dataset versions).
fn read_mapped<T>(
    path: &Path,
    magic: &[u8; 8],
    parse: impl FnOnce(&mut Cursor<'_>, Arc<FileState>) -> std::result::Result<Option<T>, String>,
) -> Read<T> {
    let Ok((map, file)) = mapped::map(path) else {
        return Read::Absent;
    };
    if map.get(..8) != Some(&magic[..]) {
        return Read::Absent;
    }
    let mut c = Cursor { map: &map, pos: 8 };
    match parse(&mut c, file) {
        Ok(Some(x)) => Read::Ok(x),
        Ok(None) => Read::Absent,
        Err(why) => Read::Corrupt(why),
    }
}

/// The block checksums of one direction (of what it holds: a reader checks the contents).
fn csr_crcs(c: &Csr) -> Result<Vec<u32>> {
    (0..c.num_blocks(BLOCK_SHIFT))
        .map(|b| {
            c.block_crc(BLOCK_SHIFT, b, None)
                .map_err(crate::Error::storage)
        })
        .collect()
}

/// A block size from a header: a shift small enough to shift by.
fn block_shift(c: &mut Cursor<'_>) -> std::result::Result<usize, String> {
    match c.usize()? {
        s @ 0..=30 => Ok(s),
        _ => Err("block size out of range".into()),
    }
}

pub fn write_csr(path: &Path, idx: &CsrIndex) -> Result<()> {
    let v = idx.versions.unwrap_or_default();
    let (o, i) = (&idx.out, &idx.inc);
    let fields = [
        v.edges,
        v.from,
        v.to,
        idx.table_rows as u64,
        idx.self_loops as u64,
        BLOCK_SHIFT as u64,
        o.num_nodes() as u64,
        o.num_edges() as u64,
        o.with_edges as u64,
        i.num_nodes() as u64,
        i.num_edges() as u64,
        i.with_edges as u64,
    ];
    let mut crcs = csr_crcs(o)?;
    crcs.extend(csr_crcs(i)?);
    let head = head(CSR_MAGIC, &fields, &crcs);
    write_atomic(path, |w| {
        w.write_all(&head)?;
        for c in [o, i] {
            w.write_all(c.offsets.to_byte_slice())?;
            w.write_all(c.neighbors.to_byte_slice())?;
            w.write_all(c.edge_rows.to_byte_slice())?;
        }
        Ok(())
    })
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

/// Maps an index: its head checked now, its blocks on first use.
pub fn read_csr(path: &Path, want: Versions) -> Read<CsrIndex> {
    read_mapped(path, CSR_MAGIC, |c, file| {
        let v = Versions {
            edges: c.u64()?,
            from: c.u64()?,
            to: c.u64()?,
        };
        if v != want {
            return Ok(None);
        }
        let table_rows = c.usize()?;
        let self_loops = c.u64()? != 0;
        let shift = block_shift(c)?;
        let mut dims = [0usize; 6];
        for d in &mut dims {
            *d = c.usize()?;
        }
        let [out_nodes, out_edges, out_with, inc_nodes, inc_edges, inc_with] = dims;
        if out_edges != inc_edges || out_edges > table_rows {
            return Err("edge counts don't agree".into());
        }
        let out_crcs = c.array::<u32>(out_nodes.div_ceil(1 << shift))?;
        let inc_crcs = c.array::<u32>(inc_nodes.div_ceil(1 << shift))?;
        c.end_head()?;
        let mut direction = |nodes: usize, edges: usize, with: usize, crcs, far_nodes| {
            let offsets = c.array::<u32>(nodes + 1)?;
            // The ends every block's offsets are checked between.
            if offsets[0] != 0 || offsets[nodes] as usize != edges {
                return Err("offsets don't run from 0 to the edge count".to_string());
            }
            let checks = CsrChecks {
                blocks: Blocks::new(file.clone(), crcs, shift),
                far_nodes,
                table_rows,
            };
            Ok(Csr::mapped(
                offsets,
                c.array(edges)?,
                c.array(edges)?,
                with,
                checks,
            ))
        };
        let out = direction(out_nodes, out_edges, out_with, out_crcs, inc_nodes)?;
        let inc = direction(inc_nodes, inc_edges, inc_with, inc_crcs, out_nodes)?;
        c.end()?;
        Ok(Some(CsrIndex {
            out,
            inc,
            table_rows,
            versions: Some(v),
            self_loops,
        }))
    })
}

pub fn write_keys(path: &Path, k: &NodeKeys) -> Result<()> {
    let (sorted_blocks, dense_blocks) = k.num_blocks(KEY_BLOCK_SHIFT);
    let crc = |r: std::result::Result<u32, String>| r.map_err(crate::Error::storage);
    let mut crcs = (0..sorted_blocks)
        .map(|b| crc(k.sorted_block_crc(KEY_BLOCK_SHIFT, b)))
        .collect::<Result<Vec<u32>>>()?;
    for b in 0..dense_blocks {
        crcs.push(crc(k.dense_block_crc(KEY_BLOCK_SHIFT, b))?);
    }
    let (lo, dense): (i64, &[u32]) = k.dense.as_ref().map_or((0, &[]), |(lo, t)| (*lo, t));
    let fields = [
        k.version.unwrap_or_default(),
        k.len() as u64,
        KEY_BLOCK_SHIFT as u64,
        k.dense.is_some() as u64,
        lo as u64,
        dense.len() as u64,
    ];
    let head = head(KEYS_MAGIC, &fields, &crcs);
    write_atomic(path, |w| {
        w.write_all(&head)?;
        w.write_all(k.sorted.to_byte_slice())?;
        w.write_all(k.ordinals.to_byte_slice())?;
        w.write_all(dense.to_byte_slice())
    })
}

/// The stamped version of a keys file, without reading the keys.
pub fn read_keys_version(path: &Path) -> Option<u64> {
    let mut f = std::fs::File::open(path).ok()?;
    let mut head = [0u8; 16];
    std::io::Read::read_exact(&mut f, &mut head).ok()?;
    (&head[..8] == KEYS_MAGIC).then(|| u64::from_le_bytes(head[8..].try_into().expect("8 bytes")))
}

/// Maps node keys: the head checked now, the blocks on first use.
pub fn read_keys(path: &Path, version: u64) -> Read<NodeKeys> {
    read_mapped(path, KEYS_MAGIC, |c, file| {
        if c.u64()? != version {
            return Ok(None);
        }
        let n = c.usize()?;
        let shift = block_shift(c)?;
        let has_dense = c.u64()? != 0;
        let lo = c.u64()? as i64;
        let dense_len = c.usize()?;
        let sorted_crcs = c.array::<u32>(n.div_ceil(1 << shift))?;
        let dense_crcs = c.array::<u32>(dense_len.div_ceil(1 << shift))?;
        c.end_head()?;
        let sorted = c.array::<i64>(n)?;
        let ordinals = c.array::<u32>(n)?;
        let dense = c.array::<u32>(dense_len)?;
        c.end()?;
        let checks = (
            Blocks::new(file.clone(), sorted_crcs, shift),
            has_dense.then(|| Blocks::new(file, dense_crcs, shift)),
        );
        let dense = has_dense.then_some((lo, dense));
        Ok(Some(NodeKeys::mapped(
            sorted, ordinals, dense, version, checks,
        )))
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use arrow::array::Int64Array;

    #[test]
    fn round_trip_and_version_check() {
        let dir = tempfile::tempdir().unwrap();
        let mut keys = NodeKeys::from_keys(&Int64Array::from(vec![5, 1, 9])).unwrap();
        keys.version = Some(3);
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

    /// Every single-byte change, truncation or zeroing of a file is caught: in the head when
    /// it is opened, in a block when the block is first used (then the file is removed); and
    /// where a file is rewritten with valid checksums but wrong contents, by the bounds.
    /// Mapped keys answer every lookup as the keys in memory do: sparse keys over several
    /// blocks (binary search), compact ones (the dense table).
    #[test]
    fn mapped_keys_answer_as_in_memory() {
        let dir = tempfile::tempdir().unwrap();
        for (step, n) in [(1_000_003i64, 3000i64), (3, 2000), (1, 1)] {
            let keys: Vec<i64> = (0..n).map(|i| (i * 7919) % n * step - 40).collect();
            let mut k = NodeKeys::from_keys(&Int64Array::from(keys.clone())).unwrap();
            k.version = Some(1);
            assert_eq!(k.dense.is_some(), step < 8, "step {step}");
            let p = dir.path().join(format!("k{step}.keys"));
            write_keys(&p, &k).unwrap();
            let Read::Ok(m) = read_keys(&p, 1) else {
                panic!("mapped")
            };
            for probe in keys
                .iter()
                .flat_map(|&x| [x - 1, x, x + 1])
                .chain([i64::MIN, i64::MAX])
            {
                assert_eq!(
                    m.ordinal(probe),
                    k.ordinal(probe),
                    "step {step}, key {probe}"
                );
            }
            assert!(m.check_all().is_none());
        }
    }

    /// As the engine writes index files (renamed into place): a map of the old file stays
    /// valid.
    fn replace(path: &Path, bytes: &[u8]) {
        let tmp = path.with_extension("tmp");
        std::fs::write(&tmp, bytes).unwrap();
        std::fs::rename(&tmp, path).unwrap();
    }

    #[test]
    fn damaged_files_are_corrupt_never_used() {
        let dir = tempfile::tempdir().unwrap();
        // Blocks of both kinds: more nodes than one block holds.
        let n = (1 << KEY_BLOCK_SHIFT) + 50;
        let mut keys =
            NodeKeys::from_keys(&Int64Array::from((0..n).collect::<Vec<i64>>())).unwrap();
        keys.version = Some(1);
        let v = Versions {
            edges: 1,
            from: 1,
            to: 1,
        };
        let src: Vec<i64> = (0..4 * n).map(|i| i % n).collect();
        let dst: Vec<i64> = (0..4 * n).map(|i| (i * 7) % n).collect();
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
        let Read::Ok(back) = read_csr(&p, v) else {
            panic!("sound file")
        };
        assert!(back.check_all().is_none());
        let mut positions: Vec<usize> = (8..200).collect();
        positions.extend((200..good.len()).step_by(4093));
        positions.push(good.len() - 1);
        for pos in positions {
            let mut bad = good.clone();
            bad[pos] ^= 0x10;
            replace(&p, &bad);
            match read_csr(&p, v) {
                Read::Corrupt(_) => {}
                Read::Ok(idx) => {
                    let why = idx
                        .check_all()
                        .unwrap_or_else(|| panic!("byte {pos} unnoticed"));
                    assert!(why.contains("r.csr") && why.contains("block"), "{why}");
                    assert!(idx.intact().is_err());
                    assert!(!p.exists(), "a damaged file is removed");
                }
                // A changed version field: another build's file.
                Read::Absent => assert!((8..32).contains(&pos), "byte {pos}"),
            }
        }
        replace(&p, &good[..good.len() / 2]);
        assert!(matches!(read_csr(&p, v), Read::Corrupt(_)));
        replace(&p, &[&good[..], &[0]].concat());
        assert!(matches!(read_csr(&p, v), Read::Corrupt(why) if why.contains("length")));
        let mut zeroed = good.clone();
        zeroed[40..200].fill(0);
        replace(&p, &zeroed);
        assert!(matches!(read_csr(&p, v), Read::Corrupt(_)));
        // Valid checksums over contents out of range (a neighbour past the last node; offsets
        // that go back), as a faulty writer would leave.
        let rebuilt = |out: Csr| CsrIndex {
            out,
            inc: idx.inc.clone(),
            table_rows: idx.table_rows,
            versions: idx.versions,
            self_loops: idx.self_loops,
        };
        let (offs, nbrs, rows) = (
            idx.out.offsets.to_vec(),
            idx.out.neighbors.to_vec(),
            idx.out.edge_rows.to_vec(),
        );
        let mut far = nbrs.clone();
        far[3] = n as u32 + 1000;
        let check = |broken: CsrIndex, what: &str| {
            write_csr(&p, &broken).unwrap();
            let Read::Ok(back) = read_csr(&p, v) else {
                panic!("head is sound")
            };
            let why = back.check_all().unwrap_or_default();
            assert!(why.contains(what), "{why}");
        };
        check(
            rebuilt(Csr::new(offs.clone(), far, rows.clone())),
            "neighbour",
        );
        let mut back_offs = offs.clone();
        back_offs[5] = 0;
        check(
            rebuilt(Csr::new(back_offs, nbrs.clone(), rows.clone())),
            "offsets",
        );
        let mut unsorted = nbrs.clone();
        unsorted.swap(0, 1);
        if unsorted[..2] != nbrs[..2] {
            check(rebuilt(Csr::new(offs, unsorted, rows)), "sorted");
        }
        // Keys: the head when opened, a block on the first lookup that lands in it.
        let good_keys = std::fs::read(&kp).unwrap();
        let mut bad = good_keys.clone();
        bad[30] ^= 1;
        replace(&kp, &bad);
        assert!(matches!(read_keys(&kp, 1), Read::Corrupt(_)));
        for at in [good_keys.len() - 3, good_keys.len() / 2] {
            let mut bad = good_keys.clone();
            bad[at] ^= 1;
            replace(&kp, &bad);
            let Read::Ok(k) = read_keys(&kp, 1) else {
                panic!("head is sound")
            };
            assert!(k.check_all().is_some(), "byte {at}");
            assert!(k.intact().is_err());
            assert!(!kp.exists(), "a damaged file is removed");
            // No index is built over damaged keys (its edges would seem to miss endpoints).
            let e = Int64Array::from(vec![0i64]);
            assert!(CsrIndex::build(&e, &e, &k, &k, Some(v)).is_err());
        }
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
        write_atomic(&index, |w| w.write_all(b"x")).unwrap();
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
                std::thread::spawn(move || write_atomic(&path, |w| w.write_all(&vec![k; 1 << 20])))
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
