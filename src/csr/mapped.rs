//! Index files mapped into memory rather than read: a query pays for the pages it touches, the
//! operating system's page cache holds them (and takes them back under memory pressure), and
//! the processes that open one graph share one copy.
//!
//! A mapped file is checked in blocks as they are first used, not in full when it is opened:
//! opening checks the header and the table of block checksums (a few hundred bytes); each
//! block's CRC-32 and contents are checked when a lookup first lands in it. A block that fails
//! marks the whole file damaged: lookups in it find nothing from then on, the operators using it
//! fail their query naming the file, and the file is removed so that the next opening of the
//! graph builds it again.

use arrow::buffer::{Buffer, ScalarBuffer};
use arrow::datatypes::ArrowNativeType;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, OnceLock};

#[cfg(not(target_endian = "little"))]
compile_error!("index files are little-endian and are mapped as they are");

/// The whole file, mapped read-only, as one buffer that its windows share, with its state.
// The one use of `unsafe` in the project: mapping a file is unsafe in that the file could be
// changed under the map (a page past a truncated end, or one the disk fails to read, stops
// the process with SIGBUS rather than an error).
#[allow(unsafe_code)]
pub fn map(path: &Path) -> std::io::Result<(Buffer, Arc<FileState>)> {
    let f = std::fs::File::open(path)?;
    let identity = identity(&f.metadata()?);
    // SAFETY: index files are written whole to a temp file and renamed into place, never
    // changed in place; one replaced or removed later stays mapped as it was (the old inode).
    let m = unsafe { memmap2::Mmap::map(&f)? };
    let state = Arc::new(FileState {
        path: path.to_path_buf(),
        identity,
        damage: OnceLock::new(),
    });
    Ok((Buffer::from(bytes::Bytes::from_owner(m)), state))
}

/// Which file a path names: its device and inode, where the platform has them.
fn identity(m: &std::fs::Metadata) -> Option<(u64, u64)> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        Some((m.dev(), m.ino()))
    }
    #[cfg(not(unix))]
    {
        let _ = m;
        None
    }
}

/// `len` values of `T` at byte `start` of `map`, not copied: `None` when they run past its end
/// or `start` is not aligned for `T` (the file layouts align every array; the map is
/// page-aligned).
pub fn window<T: ArrowNativeType>(
    map: &Buffer,
    start: usize,
    len: usize,
) -> Option<ScalarBuffer<T>> {
    let bytes = len.checked_mul(std::mem::size_of::<T>())?;
    if start.checked_add(bytes)? > map.len()
        || !(map.as_ptr() as usize + start).is_multiple_of(std::mem::align_of::<T>())
    {
        return None;
    }
    Some(ScalarBuffer::new(
        map.slice_with_length(start, bytes),
        0,
        len,
    ))
}

/// One mapped file's state: where it is, and what damage a check found in it.
#[derive(Debug)]
pub struct FileState {
    path: PathBuf,
    /// The mapped file's identity: the path is removed only while it still names it.
    identity: Option<(u64, u64)>,
    damage: OnceLock<String>,
}

impl FileState {
    /// Records the first damage found and removes the file, so that the next opening of the
    /// graph builds it again (this process keeps its mapping). A file that took its place
    /// meanwhile (rebuilt by another process) is left alone.
    pub fn damaged(&self, why: String) {
        if self.damage.set(why).is_ok() {
            let now = std::fs::metadata(&self.path).ok();
            if self.identity.is_some() && now.as_ref().and_then(identity) == self.identity {
                let _ = std::fs::remove_file(&self.path);
            }
        }
    }

    /// The damage found so far, as an error message.
    pub fn damage(&self) -> Option<String> {
        self.damage.get().map(|why| {
            format!(
                "index file {} is damaged ({why}); it was removed and is built again when the \
                 graph is next opened",
                self.path.display()
            )
        })
    }
}

/// The blocks of one array group of a mapped file (`1 << shift` entries each, as the file's
/// header says), each checked once, on first use, against its stored CRC-32.
#[derive(Debug)]
pub struct Blocks {
    file: Arc<FileState>,
    crcs: ScalarBuffer<u32>,
    shift: usize,
    /// A bit per block: checked and sound.
    done: Box<[AtomicU64]>,
}

impl Blocks {
    pub fn new(file: Arc<FileState>, crcs: ScalarBuffer<u32>, shift: usize) -> Self {
        let done = (0..crcs.len().div_ceil(64))
            .map(|_| AtomicU64::new(0))
            .collect();
        Self {
            file,
            crcs,
            shift,
            done,
        }
    }

    /// Entries per block, as a shift.
    #[inline]
    pub fn shift(&self) -> usize {
        self.shift
    }

    /// Number of blocks.
    pub fn len(&self) -> usize {
        self.crcs.len()
    }

    pub fn is_empty(&self) -> bool {
        self.crcs.is_empty()
    }

    /// Whether block `b` is sound: checked before, or now by `check` (its contents checked,
    /// then its CRC-32 computed). A block found unsound marks the file damaged.
    #[inline]
    pub fn sound(&self, b: usize, check: impl FnOnce() -> Result<u32, String>) -> bool {
        let bit = 1u64 << (b % 64);
        match self.done.get(b / 64) {
            Some(w) if w.load(Ordering::Relaxed) & bit != 0 => true,
            _ => self.check(b, check),
        }
    }

    #[cold]
    fn check(&self, b: usize, check: impl FnOnce() -> Result<u32, String>) -> bool {
        if self.file.damage.get().is_some() {
            return false;
        }
        let (Some(w), Some(&want)) = (self.done.get(b / 64), self.crcs.get(b)) else {
            self.file.damaged(format!("no block {b}"));
            return false;
        };
        match check() {
            Ok(crc) if crc == want => {
                w.fetch_or(1u64 << (b % 64), Ordering::Relaxed);
                true
            }
            Ok(_) => {
                self.file.damaged(format!("block {b}: checksum mismatch"));
                false
            }
            Err(why) => {
                self.file.damaged(format!("block {b}: {why}"));
                false
            }
        }
    }

    pub fn file(&self) -> &Arc<FileState> {
        &self.file
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn windows_are_bounded_and_aligned() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("f");
        let vals: Vec<u8> = [7u32, 8, 9].iter().flat_map(|v| v.to_le_bytes()).collect();
        std::fs::write(&p, &vals).unwrap();
        let (m, _) = map(&p).unwrap();
        let w: ScalarBuffer<u32> = window(&m, 4, 2).unwrap();
        assert_eq!(&w[..], &[8, 9]);
        assert!(window::<u32>(&m, 4, 3).is_none(), "past the end");
        assert!(window::<u32>(&m, 2, 1).is_none(), "misaligned");
        assert!(window::<u32>(&m, 12, 0).unwrap().is_empty());
        // The window outlives the file's name and the map handle it came from.
        drop(m);
        std::fs::remove_file(&p).unwrap();
        assert_eq!(w[1], 9);
    }

    #[test]
    fn a_block_is_checked_once_and_damage_removes_the_file() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("f");
        std::fs::write(&p, b"x").unwrap();
        let blocks = Blocks::new(map(&p).unwrap().1, vec![5u32, 6].into(), 6);
        let mut calls = 0;
        assert!(blocks.sound(0, || {
            calls += 1;
            Ok(5)
        }));
        assert!(blocks.sound(0, || unreachable!("checked once")));
        assert_eq!(calls, 1);
        assert!(blocks.file().damage().is_none());
        assert!(!blocks.sound(1, || Ok(7)));
        let why = blocks.file().damage().unwrap();
        assert!(why.contains("block 1: checksum mismatch"), "{why}");
        assert!(!p.exists());
        // After damage nothing more is checked or trusted; the first reason stays.
        assert!(!blocks.sound(7, || Err("other".into())));
        assert!(blocks.file().damage().unwrap().contains("block 1"));
        assert!(
            blocks.sound(0, || unreachable!()),
            "checked before the damage"
        );
    }
}
