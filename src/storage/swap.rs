//! Replacing a folder by a new one so that a crash at any instant (kill -9 included) leaves
//! either the old folder or the new one in place, and the next run cleans up what is left.
//!
//! A new version of `out` is written into `.NAME.import-ID` beside it (same file system), then
//! renamed to `.NAME.ready-ID` once complete, then swapped in:
//!
//! - where the kernel can (Linux `renameat2(RENAME_EXCHANGE)`), the two folders trade places
//!   in one step: `out` is the old graph before it and the new one after it; the old one is
//!   then removed from `.NAME.ready-ID`;
//! - elsewhere, `out` is moved to `.NAME.old-ID` and the ready folder renamed into place; a
//!   crash between the two renames leaves no `out`, which [`recover`] finishes (a ready folder
//!   exists: it is complete) or undoes (the old one goes back).
//!
//! [`recover`] runs before each replacement while holding the lock of `out`'s parent folder,
//! so it never touches the folders of an import still running.

use crate::error::{Error, Result};
use std::fs::File;
use std::path::{Path, PathBuf};

/// The stages of a replacement; [`crash_point`] names them.
const WORKING: &str = "import";
const READY: &str = "ready";
const OLD: &str = "old";

/// A replacement of `out` in progress: the folder to write into, and the lock that keeps
/// other imports beside `out` from cleaning it up meanwhile.
pub struct Replacement {
    out: PathBuf,
    work: PathBuf,
    id: String,
    _lock: Option<File>,
}

impl Replacement {
    /// Takes the lock of `out`'s parent folder (waiting for another import there to end),
    /// finishes or undoes a replacement a crash interrupted, removes what earlier runs left,
    /// and creates the folder to write the new version into.
    pub fn begin(out: &Path) -> Result<Self> {
        let (parent, name) = split(out)?;
        std::fs::create_dir_all(&parent).map_err(|e| io(&parent, "create", e))?;
        let lock = lock(&parent)?;
        recover(&parent, &name, out)?;
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos())
            .unwrap_or_default();
        let id = format!("{}-{nanos}", std::process::id());
        let work = parent.join(format!(".{name}.{WORKING}-{id}"));
        std::fs::create_dir(&work).map_err(|e| io(&work, "create", e))?;
        Ok(Self {
            out: out.to_path_buf(),
            work,
            id,
            _lock: lock,
        })
    }

    /// The folder the new version is written into.
    pub fn dir(&self) -> &Path {
        &self.work
    }

    /// The folder being replaced.
    pub fn out(&self) -> &Path {
        &self.out
    }

    /// Puts the complete new version at `out`: from then on `out` is the new folder.
    pub fn commit(self) -> Result<()> {
        self.commit_swapping(true)
    }

    /// `commit`, swapping in one step where the kernel can when `exchange_if_possible`.
    fn commit_swapping(self, exchange_if_possible: bool) -> Result<()> {
        let (parent, name) = split(&self.out)?;
        let ready = parent.join(format!(".{name}.{READY}-{}", self.id));
        rename(&self.work, &ready)?;
        crash_point("ready");
        if !self.out.exists() {
            rename(&ready, &self.out)?;
        } else if exchange_if_possible && exchange(&ready, &self.out)? {
            crash_point("exchanged");
            // `ready` now holds the old version.
            let _ = std::fs::remove_dir_all(&ready);
        } else {
            let old = parent.join(format!(".{name}.{OLD}-{}", self.id));
            rename(&self.out, &old)?;
            crash_point("moved-aside");
            if let Err(e) = rename(&ready, &self.out) {
                let _ = rename(&old, &self.out);
                return Err(e);
            }
            let _ = std::fs::remove_dir_all(&old);
        }
        sync_dir(&parent);
        Ok(())
    }
}

impl Drop for Replacement {
    /// An import that failed (or was dropped before `commit`) removes its unfinished folder.
    fn drop(&mut self) {
        if self.work.exists() {
            let _ = std::fs::remove_dir_all(&self.work);
        }
    }
}

/// What a crash left beside `out` (named `name` in `parent`): a replacement interrupted between
/// its two renames is finished, or undone; every working, ready or old folder is removed.
/// Needs the lock of `parent`.
fn recover(parent: &Path, name: &str, out: &Path) -> Result<()> {
    let mut found: Vec<(String, PathBuf)> = Vec::new();
    let prefix = format!(".{name}.");
    let Ok(entries) = std::fs::read_dir(parent) else {
        return Ok(());
    };
    for e in entries.flatten() {
        let file = e.file_name().to_string_lossy().to_string();
        let Some(rest) = file.strip_prefix(&prefix) else {
            continue;
        };
        let Some((stage, _)) = rest.split_once('-') else {
            continue;
        };
        if [WORKING, READY, OLD].contains(&stage) {
            found.push((stage.to_string(), e.path()));
        }
    }
    if !out.exists() {
        // Only the two-rename swap leaves `out` missing: a ready folder is the new version
        // (complete), else the old one goes back.
        let back = found
            .iter()
            .find(|(s, _)| s == READY)
            .or_else(|| found.iter().find(|(s, _)| s == OLD));
        if let Some((_, p)) = back {
            rename(p, out)?;
        }
    }
    for (_, p) in found {
        if p.exists() {
            std::fs::remove_dir_all(&p).map_err(|e| io(&p, "remove the leftover", e))?;
        }
    }
    Ok(())
}

/// `out`'s parent folder and file name.
fn split(out: &Path) -> Result<(PathBuf, String)> {
    let name = out
        .file_name()
        .ok_or_else(|| Error::Other(format!("{}: not a folder name", out.display())))?
        .to_string_lossy()
        .to_string();
    let parent = match out.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    };
    Ok((parent, name))
}

/// An exclusive lock on `dir` (released when the file is closed, also by a crash), or none
/// where folders can't be locked.
fn lock(dir: &Path) -> Result<Option<File>> {
    let Ok(f) = File::open(dir) else {
        return Ok(None);
    };
    match f.try_lock() {
        Ok(()) => Ok(Some(f)),
        Err(std::fs::TryLockError::WouldBlock) => {
            eprintln!("waiting for another import in {} to finish", dir.display());
            f.lock().map_err(|e| io(dir, "lock", e))?;
            Ok(Some(f))
        }
        Err(std::fs::TryLockError::Error(_)) => Ok(None),
    }
}

/// Swaps `a` and `b` in one step; `false` where the file system or kernel can't.
fn exchange(a: &Path, b: &Path) -> Result<bool> {
    #[cfg(target_os = "linux")]
    {
        use rustix::fs::{renameat_with, RenameFlags, CWD};
        match renameat_with(CWD, a, CWD, b, RenameFlags::EXCHANGE) {
            Ok(()) => Ok(true),
            Err(e)
                if e == rustix::io::Errno::INVAL
                    || e == rustix::io::Errno::NOSYS
                    || e == rustix::io::Errno::NOTSUP =>
            {
                Ok(false)
            }
            Err(e) => Err(Error::storage_caused(
                format!("cannot swap {} and {}", a.display(), b.display()),
                std::io::Error::from(e),
            )),
        }
    }
    #[cfg(not(target_os = "linux"))]
    {
        let _ = (a, b);
        Ok(false)
    }
}

fn rename(a: &Path, b: &Path) -> Result<()> {
    std::fs::rename(a, b).map_err(|e| {
        Error::storage_caused(format!("cannot move {} to {}", a.display(), b.display()), e)
    })
}

/// Makes the renames in `dir` durable (best effort).
fn sync_dir(dir: &Path) {
    if let Ok(f) = File::open(dir) {
        let _ = f.sync_all();
    }
}

fn io(path: &Path, what: &'static str, e: std::io::Error) -> Error {
    Error::io(what, path, e)
}

/// For the crash tests: the process aborts here (as if killed) when `LANCE_CSR_CRASH_AT`
/// names this point.
pub(crate) fn crash_point(name: &str) {
    if std::env::var("LANCE_CSR_CRASH_AT").is_ok_and(|v| v == name) {
        std::process::abort();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write(dir: &Path, text: &str) {
        std::fs::create_dir_all(dir).unwrap();
        std::fs::write(dir.join("graph.toml"), text).unwrap();
    }

    fn read(out: &Path) -> String {
        std::fs::read_to_string(out.join("graph.toml")).unwrap()
    }

    fn leftovers(parent: &Path) -> Vec<String> {
        std::fs::read_dir(parent)
            .unwrap()
            .flatten()
            .map(|e| e.file_name().to_string_lossy().to_string())
            .filter(|n| n.starts_with('.'))
            .collect()
    }

    #[test]
    fn replaces_and_creates() {
        let d = tempfile::tempdir().unwrap();
        let out = d.path().join("g");
        let r = Replacement::begin(&out).unwrap();
        write(r.dir(), "one");
        r.commit().unwrap();
        assert_eq!(read(&out), "one");
        let r = Replacement::begin(&out).unwrap();
        write(r.dir(), "two");
        assert_eq!(read(&out), "one", "the old version stays until the commit");
        r.commit().unwrap();
        assert_eq!(read(&out), "two");
        assert!(leftovers(d.path()).is_empty(), "{:?}", leftovers(d.path()));
    }

    /// Where the kernel can't swap in one step: `out` moved aside, the new one renamed in.
    #[test]
    fn replaces_by_two_renames_where_it_cannot_exchange() {
        let d = tempfile::tempdir().unwrap();
        let out = d.path().join("g");
        write(&out, "old");
        let r = Replacement::begin(&out).unwrap();
        write(r.dir(), "new");
        r.commit_swapping(false).unwrap();
        assert_eq!(read(&out), "new");
        assert!(leftovers(d.path()).is_empty(), "{:?}", leftovers(d.path()));
    }

    #[test]
    fn a_dropped_replacement_leaves_nothing() {
        let d = tempfile::tempdir().unwrap();
        let out = d.path().join("g");
        write(&out, "old");
        let r = Replacement::begin(&out).unwrap();
        write(r.dir(), "half");
        drop(r);
        assert_eq!(read(&out), "old");
        assert!(leftovers(d.path()).is_empty());
    }

    /// Every state a crash can leave is recovered to the old or the new version, and the
    /// leftovers go.
    #[test]
    fn interrupted_replacements_are_finished_or_undone() {
        let d = tempfile::tempdir().unwrap();
        let out = d.path().join("g");
        // Crashed while writing: the old graph stays.
        write(&out, "old");
        write(&d.path().join(".g.import-1-1"), "partial");
        recover(d.path(), "g", &out).unwrap();
        assert_eq!(read(&out), "old");
        assert!(leftovers(d.path()).is_empty());
        // Crashed after the exchange, before removing the old version.
        write(&d.path().join(".g.ready-2-2"), "old-after-exchange");
        recover(d.path(), "g", &out).unwrap();
        assert_eq!(read(&out), "old");
        assert!(leftovers(d.path()).is_empty());
        // Two-rename swap, crashed between the renames: finished.
        std::fs::rename(&out, d.path().join(".g.old-3-3")).unwrap();
        write(&d.path().join(".g.ready-3-3"), "new");
        recover(d.path(), "g", &out).unwrap();
        assert_eq!(read(&out), "new");
        assert!(leftovers(d.path()).is_empty());
        // Moved aside, no complete new version: undone.
        std::fs::rename(&out, d.path().join(".g.old-4-4")).unwrap();
        write(&d.path().join(".g.import-4-4"), "partial");
        recover(d.path(), "g", &out).unwrap();
        assert_eq!(read(&out), "new");
        assert!(leftovers(d.path()).is_empty());
        // Other folders beside it are not touched.
        write(&d.path().join(".gx.import-5-5"), "another graph's");
        write(&d.path().join(".g.other"), "not ours");
        recover(d.path(), "g", &out).unwrap();
        assert_eq!(leftovers(d.path()).len(), 2);
    }
}
