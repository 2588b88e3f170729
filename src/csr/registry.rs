//! Opening a graph's indexes: node keys per label and a CSR per relationship table, read from
//! the index files when they match the datasets' versions, else built (one scan each) and
//! written back.

use super::persist::{
    file_for, read_csr, read_csr_versions, read_keys, read_keys_version, write_csr, write_keys,
    Read,
};
use super::{CsrIndex, GraphIndexes, NodeKeys, Slot, TableColumns, Versions};
use crate::catalog::Catalog;
use crate::error::Result;
use datafusion::catalog::Session;
use std::path::Path;
use std::sync::Arc;
use std::time::Instant;

/// What [`open_indexes`] did, per table.
#[derive(Debug, Default, Clone)]
#[non_exhaustive]
pub struct IndexReport {
    pub lines: Vec<String>,
    /// Indexes (key maps and CSRs) built rather than read.
    pub built: usize,
    /// Indexes read from up-to-date files.
    pub read: usize,
    /// Up-to-date files left to be read when a plan first needs them (deferred opening).
    pub deferred: usize,
    pub edges_indexed: usize,
    /// Time spent building CSRs (not counting reading the endpoint columns).
    pub build_seconds: f64,
    /// Time spent reading endpoint columns for the builds.
    pub read_seconds: f64,
    pub csr_bytes: usize,
    /// Indexes built but not written (the storage refused): in memory only.
    pub unsaved: usize,
    /// Index files found corrupt (and rebuilt).
    pub corrupt: usize,
}

/// The file of a relationship table's CSR: its source, endpoint columns, and the endpoint
/// tables with their key columns (what maps endpoints to ordinals): two types over one
/// dataset whose ends are other tables (`IS_LOCATED_IN` to cities and to countries) index
/// different ordinals, so they never share a file.
fn csr_file(dir: &Path, catalog: &Catalog, r: &crate::catalog::RelInfo) -> std::path::PathBuf {
    let cols = [
        r.cfg.src.as_str(),
        r.cfg.dst.as_str(),
        catalog.nodes[&r.cfg.from].key.as_str(),
        catalog.nodes[&r.cfg.to].key.as_str(),
        r.cfg.from.as_str(),
        r.cfg.to.as_str(),
    ];
    file_for(dir, &r.cfg.source, &cols, "csr")
}

/// A read index if usable; a corrupt file is reported (then rebuilt and rewritten).
fn usable<T>(
    read: Read<T>,
    file: &std::path::Path,
    report: &mut IndexReport,
    progress: &mut (dyn FnMut(&str) + Send),
) -> Option<T> {
    match read {
        Read::Ok(x) => Some(x),
        Read::Absent => None,
        Read::Corrupt(why) => {
            let line = format!(
                "warning: index file {} is corrupt ({why}); rebuilding it",
                file.display()
            );
            eprintln!("{line}");
            progress(&line);
            report.lines.push(line);
            report.corrupt += 1;
            None
        }
    }
}

/// A file read when a plan first needs it (deferred opening). One found corrupt: its hops
/// run as joins; it is removed, with a warning, so that the next opening builds it again.
fn first_use<T>(read: Read<T>, file: &Path) -> Option<T> {
    let why = match read {
        Read::Ok(x) => return Some(x),
        Read::Absent => return None,
        Read::Corrupt(why) => why,
    };
    eprintln!(
        "warning: index file {} is corrupt ({why}); its hops run as joins, and it is removed \
         to be built again when the graph is next opened",
        file.display()
    );
    let _ = std::fs::remove_file(file);
    None
}

/// An index built but not saved (read-only storage, a full disk): it serves this process
/// from memory, with a warning, once per open.
fn unsaved(report: &mut IndexReport, progress: &mut (dyn FnMut(&str) + Send), e: crate::Error) {
    if report.unsaved == 0 {
        let line = format!("warning: {e}; indexes are kept in memory for this process only");
        eprintln!("{line}");
        progress(&line);
        report.lines.push(line);
    }
    report.unsaved += 1;
}

/// The folder index files go in: `_csr/` beside the datasets, or for a graph read at a past
/// state (`GraphOptions::as_of`) a folder of that state's own under `_csr/at/`, so that
/// switching between states builds each once and never overwrites the latest's. `None`
/// when the graph lives in memory.
pub fn persist_dir(catalog: &Catalog) -> Option<std::path::PathBuf> {
    let all_lance = catalog.tables().all(|t| t.version.is_some());
    let base = &catalog.config.base_dir;
    if !all_lance || base.as_os_str().is_empty() {
        return None;
    }
    Some(match catalog.config.as_of {
        None => super::persist::index_dir(base),
        Some(_) => super::persist::version_dir(base, &catalog.versions()),
    })
}

/// Most bytes the index folders of past states (`_csr/at/`) may take together: past it, the
/// least recently opened ones go.
pub const PAST_STATES_BYTES: u64 = 1 << 30;

/// Notes which dataset versions a past state's index folder serves (`versions.txt`, what
/// `index status` lists), marks it as just used, and removes the least recently used other
/// folders while they take more than [`PAST_STATES_BYTES`] together. A state the latest's
/// files serve whole has no folder (nothing was written to it).
fn record_past_state(catalog: &Catalog, dir: &Path) {
    let holds_index = std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .flatten()
        .any(|e| {
            let p = e.path();
            p.extension().is_some_and(|x| x == "csr" || x == "keys")
        });
    if !holds_index {
        return;
    }
    let mut text = String::new();
    for t in catalog.tables() {
        let v = t.lance_version.map_or("-".to_string(), |v| v.to_string());
        text.push_str(&format!("{} {v}\n", t.origin));
    }
    // Best effort: a folder that cannot be written serves from memory (see `unsaved`).
    if std::fs::write(dir.join("versions.txt"), text).is_err() {
        return;
    }
    let Some(parent) = dir.parent() else { return };
    let mut folders: Vec<(std::time::SystemTime, u64, std::path::PathBuf)> = Vec::new();
    for e in std::fs::read_dir(parent).into_iter().flatten().flatten() {
        let p = e.path();
        let used = std::fs::metadata(p.join("versions.txt"))
            .and_then(|m| m.modified())
            .unwrap_or(std::time::UNIX_EPOCH);
        let bytes = std::fs::read_dir(&p)
            .into_iter()
            .flatten()
            .flatten()
            .filter_map(|f| f.metadata().ok())
            .map(|m| m.len())
            .sum();
        folders.push((used, bytes, p));
    }
    folders.sort();
    let mut total: u64 = folders.iter().map(|(_, b, _)| b).sum();
    for (_, bytes, p) in folders {
        if total <= PAST_STATES_BYTES {
            break;
        }
        if p != dir && std::fs::remove_dir_all(&p).is_ok() {
            total -= bytes;
        }
    }
}

/// The past states whose indexes are kept (`_csr/at/`): per folder, the datasets' versions.
pub fn past_states(base: &Path) -> Vec<String> {
    let at = super::persist::index_dir(base).join("at");
    let mut out = Vec::new();
    for e in std::fs::read_dir(at).into_iter().flatten().flatten() {
        if let Ok(text) = std::fs::read_to_string(e.path().join("versions.txt")) {
            let versions: Vec<String> = text
                .lines()
                .filter_map(|l| l.rsplit_once(' '))
                .map(|(t, v)| {
                    let name = Path::new(t)
                        .file_name()
                        .map_or(t.into(), |n| n.to_string_lossy());
                    format!("{name}@{v}")
                })
                .collect();
            out.push(versions.join(" "));
        }
    }
    out.sort();
    out
}

fn integer_key(t: &arrow::datatypes::DataType) -> bool {
    t.is_integer()
}

/// Loads or builds every index of the graph. `reuse` holds indexes from an earlier open; one
/// whose versions still match is kept as is (no work on an unchanged graph). With `defer`, an
/// index whose file is stamped with the datasets' versions is read only when a plan first
/// needs it (its checksum checked then; a damaged one makes the hops it serves run as joins
/// until `index build`); missing and stale ones are built now, as always.
pub async fn open_indexes(
    catalog: &Catalog,
    state: &dyn Session,
    reuse: Option<&GraphIndexes>,
    defer: bool,
    progress: &mut (dyn FnMut(&str) + Send),
) -> Result<(GraphIndexes, IndexReport)> {
    let mut out = GraphIndexes::default();
    let dir = persist_dir(catalog);
    // A past state reads the latest's files where they serve it (tables unchanged since).
    let latest = (catalog.config.as_of.is_some() && dir.is_some())
        .then(|| super::persist::index_dir(&catalog.config.base_dir));
    let mut cx = Opening {
        catalog,
        dir: dir.as_deref(),
        latest: latest.as_deref(),
        state,
        reuse,
        defer,
        report: IndexReport::default(),
        progress,
    };
    for (label, n) in &catalog.nodes {
        cx.open_keys(label, n, &mut out).await?;
    }
    for r in &catalog.rels {
        cx.open_csr(r, &mut out).await?;
    }
    if let (Some(d), Some(_)) = (&dir, &catalog.config.as_of) {
        record_past_state(catalog, d);
    }
    Ok((out, cx.report))
}

/// What opening a graph's indexes works with, and reports to.
struct Opening<'a> {
    catalog: &'a Catalog,
    /// Where index files are (`None`: not persisted).
    dir: Option<&'a Path>,
    /// For a graph read at a past state: the latest's index folder, whose files serve the
    /// tables that have not changed since.
    latest: Option<&'a Path>,
    state: &'a dyn Session,
    /// The indexes of the graph before a refresh, kept where their tables are unchanged.
    reuse: Option<&'a GraphIndexes>,
    /// Up-to-date files are read on first use.
    defer: bool,
    report: IndexReport,
    progress: &'a mut (dyn FnMut(&str) + Send),
}

impl Opening<'_> {
    /// The keys of `label` (node table `n`) into `out`: reused while unchanged, read from their
    /// file (on first use when `defer`), or built; none for string keys or keys that are not
    /// unique.
    async fn open_keys(
        &mut self,
        label: &String,
        n: &crate::catalog::NodeInfo,
        out: &mut GraphIndexes,
    ) -> Result<()> {
        let Opening {
            catalog,
            dir,
            latest,
            state,
            reuse,
            defer,
            ref mut report,
            ref mut progress,
        } = *self;
        // Columns already loaded stay valid while the table's version is unchanged.
        let old_keys = reuse.and_then(|r| r.keys.get(label));
        // Keys found damaged are read or built again.
        let unchanged = n.table.version.is_some()
            && old_keys.is_some_and(|k| {
                k.stamp == n.table.version && k.loaded().is_none_or(|k| k.damage().is_none())
            });
        let cols = match reuse.and_then(|r| r.node_columns.get(label)) {
            Some(c) if unchanged => c.clone(),
            _ => Arc::new(TableColumns::new(n.table.data_provider(), &n.table.origin)),
        };
        out.node_columns.insert(label.clone(), cols.clone());
        if !integer_key(&n.key_type) {
            report.lines.push(format!(
                "node {label}: string keys, no index (hops run as joins)"
            ));
            return Ok(());
        }
        if let (Some(old), true) = (old_keys, unchanged) {
            out.keys.insert(label.clone(), old.clone());
            return Ok(());
        }
        let cfg = &catalog.config.nodes[&n.name];
        let keys_file = |d: &Path| file_for(d, &cfg.source, &[&cfg.id], "keys");
        let file = match latest.map(keys_file) {
            Some(f) if n.table.version.is_some() && read_keys_version(&f) == n.table.version => {
                Some(f)
            }
            _ => dir.map(keys_file),
        };
        if let (true, Some(f), Some(v)) = (defer, &file, n.table.version) {
            if read_keys_version(f) == Some(v) {
                let f = f.clone();
                let slot = Slot::deferred(Some(v), move || first_use(read_keys(&f, v), &f));
                out.keys.insert(label.clone(), Arc::new(slot));
                report.deferred += 1;
                return Ok(());
            }
        }
        let loaded = match (&file, n.table.version) {
            (Some(f), Some(v)) => usable(read_keys(f, v), f, report, progress),
            _ => None,
        };
        let keys = match loaded {
            Some(k) => {
                report.read += 1;
                k
            }
            None => {
                match build_keys(label, n, &cols, file.as_deref(), state, report, progress).await? {
                    Some(k) => k,
                    // Duplicate or null keys: no index; hops on this label run as joins.
                    None => return Ok(()),
                }
            }
        };
        out.keys.insert(
            label.clone(),
            Arc::new(Slot::ready(keys.version, Arc::new(keys))),
        );
        Ok(())
    }

    /// The CSR of relationship table `r` into `out` (`None` where its endpoints have no keys):
    /// reused while unchanged, read from its file (on first use when `defer`), or built.
    async fn open_csr(
        &mut self,
        r: &crate::catalog::RelInfo,
        out: &mut GraphIndexes,
    ) -> Result<()> {
        let Opening {
            catalog,
            dir,
            latest,
            state,
            reuse,
            defer,
            ref mut report,
            ref mut progress,
        } = *self;
        let cols = Arc::new(TableColumns::new(r.table.data_provider(), &r.table.origin));
        out.rel_columns.push(cols.clone());
        let (Some(fk), Some(tk)) = (out.keys.get(&r.cfg.from), out.keys.get(&r.cfg.to)) else {
            out.csr.push(None);
            return Ok(());
        };
        let versions = match (r.table.version, fk.stamp, tk.stamp) {
            (Some(e), Some(f), Some(t)) => Some(Versions {
                edges: e,
                from: f,
                to: t,
            }),
            _ => None,
        };
        if let (Some(old), Some(v)) = (
            reuse
                .and_then(|x| x.csr.get(r.index))
                .and_then(|c| c.as_ref()),
            versions,
        ) {
            if old.stamp == Some(v) && old.loaded().is_none_or(|i| i.damage().is_none()) {
                out.rel_columns[r.index] =
                    reuse.expect("reuse is some").rel_columns[r.index].clone();
                out.csr.push(Some(old.clone()));
                return Ok(());
            }
        }
        let file = match latest.map(|d| csr_file(d, catalog, r)) {
            Some(f) if versions.is_some() && read_csr_versions(&f) == versions => Some(f),
            _ => dir.map(|d| csr_file(d, catalog, r)),
        };
        if let (true, Some(f), Some(v)) = (defer, &file, versions) {
            if read_csr_versions(f) == Some(v) {
                let f = f.clone();
                let slot = Slot::deferred(Some(v), move || first_use(read_csr(&f, v), &f));
                out.csr.push(Some(Arc::new(slot)));
                report.deferred += 1;
                return Ok(());
            }
        }
        // Building needs the endpoints' keys in memory.
        let (Some(fk), Some(tk)) = (fk.get(), tk.get()) else {
            out.csr.push(None);
            return Ok(());
        };
        let loaded = match (&file, versions) {
            (Some(f), Some(v)) => usable(read_csr(f, v), f, report, progress),
            _ => None,
        };
        let idx = match loaded {
            Some(i) => {
                report.read += 1;
                i
            }
            None => {
                let edges = (fk.as_ref(), tk.as_ref(), versions);
                build_csr(r, edges, file.as_deref(), state, report, progress).await?
            }
        };
        report.csr_bytes += idx.memory_bytes();
        out.csr
            .push(Some(Arc::new(Slot::ready(idx.versions, Arc::new(idx)))));
        Ok(())
    }
}

/// Builds the node keys of `label` from its key column and writes them to `file`; `None`
/// (reported) when the keys are not unique and non-null.
async fn build_keys(
    label: &str,
    n: &crate::catalog::NodeInfo,
    cols: &TableColumns,
    file: Option<&Path>,
    state: &dyn Session,
    report: &mut IndexReport,
    progress: &mut (dyn FnMut(&str) + Send),
) -> Result<Option<NodeKeys>> {
    let t = Instant::now();
    let col = cols.load(state, &n.key).await?;
    let mut k = match NodeKeys::from_keys(col.as_ref()) {
        Ok(k) => k,
        Err(e) => {
            let line = format!("node {label}: no index ({e}); hops run as joins");
            progress(&line);
            report.lines.push(line);
            return Ok(None);
        }
    };
    k.version = n.table.version;
    if let Some(f) = file {
        match write_keys(f, &k) {
            Ok(()) => {
                if let Read::Ok(mapped) = read_keys(f, k.version.unwrap_or_default()) {
                    k = mapped;
                }
            }
            Err(e) => unsaved(report, progress, e),
        }
    }
    report.built += 1;
    progress(&format!(
        "node keys {label}: {} nodes in {:.2}s",
        k.len(),
        t.elapsed().as_secs_f64()
    ));
    Ok(Some(k))
}

/// Builds the CSR of relationship table `r` (one scan of its endpoint columns, not kept)
/// over the keys of its endpoint labels, and writes it to `file`.
async fn build_csr(
    r: &crate::catalog::RelInfo,
    (from_keys, to_keys, versions): (&NodeKeys, &NodeKeys, Option<Versions>),
    file: Option<&Path>,
    state: &dyn Session,
    report: &mut IndexReport,
    progress: &mut (dyn FnMut(&str) + Send),
) -> Result<CsrIndex> {
    let t = Instant::now();
    let scan = TableColumns::new(r.table.data_provider(), &r.table.origin);
    scan.ensure(state, &[r.cfg.src.clone(), r.cfg.dst.clone()])
        .await?;
    let read_secs = t.elapsed().as_secs_f64();
    let t = Instant::now();
    let idx = CsrIndex::build(
        scan.get(&r.cfg.src)?.as_ref(),
        scan.get(&r.cfg.dst)?.as_ref(),
        from_keys,
        to_keys,
        versions,
    )?;
    let secs = t.elapsed().as_secs_f64();
    let mut idx = idx;
    if let Some(f) = file {
        match write_csr(f, &idx) {
            // Served from the file from now on: its pages are the page cache's to keep or
            // drop, shared with other processes.
            Ok(()) => {
                if let Read::Ok(mapped) = read_csr(f, idx.versions.unwrap_or_default()) {
                    idx = mapped;
                }
            }
            Err(e) => unsaved(report, progress, e),
        }
    }
    report.built += 1;
    report.build_seconds += secs;
    report.edges_indexed += idx.out.num_edges();
    report.read_seconds += read_secs;
    let edges = idx.out.num_edges().max(1);
    progress(&format!(
        "csr {}({}->{}): {} edges, endpoints read in {:.3}s, built in {:.3}s ({:.1}M edges/s), {:.1} bytes/edge per direction",
        r.cfg.rel_type,
        r.cfg.from,
        r.cfg.to,
        idx.out.num_edges(),
        read_secs,
        secs,
        idx.out.num_edges() as f64 / secs.max(1e-9) / 1e6,
        idx.out.memory_bytes() as f64 / edges as f64,
    ));
    Ok(idx)
}

/// One line per relationship table: indexed, up to date (checksum and contents checked), size;
/// then one per past state whose indexes are kept, with its datasets' versions.
pub fn index_status(catalog: &Catalog) -> Vec<String> {
    let dir = persist_dir(catalog);
    let dir = dir.as_deref();
    let mut lines = Vec::new();
    for r in &catalog.rels {
        let name = format!("{}({}->{})", r.cfg.rel_type, r.cfg.from, r.cfg.to);
        let keyed = [&r.cfg.from, &r.cfg.to]
            .iter()
            .all(|l| integer_key(&catalog.nodes[*l].key_type));
        if !keyed {
            lines.push(format!("{name:<40} no index (string keys)"));
            continue;
        }
        let Some(d) = dir else {
            lines.push(format!("{name:<40} in memory (built when the graph opens)"));
            continue;
        };
        let f = csr_file(d, catalog, r);
        let want = Versions {
            edges: r.table.version.unwrap_or_default(),
            from: catalog.nodes[&r.cfg.from].table.version.unwrap_or_default(),
            to: catalog.nodes[&r.cfg.to].table.version.unwrap_or_default(),
        };
        // Every block checked; a damaged one removes the file.
        let damage = || match read_csr(&f, want) {
            Read::Ok(idx) => idx.check_all().map(|_| "a damaged block; removed, "),
            Read::Corrupt(_) => Some(""),
            Read::Absent => None,
        };
        let state = match read_csr_versions(&f) {
            None => "missing".to_string(),
            Some(v) if v == want => match damage() {
                Some(removed) => {
                    format!("corrupt ({removed}rebuilt on next open or `index build`)")
                }
                None => {
                    let bytes = std::fs::metadata(&f).map(|m| m.len()).unwrap_or(0);
                    format!(
                        "up to date, {} rows, file {:.1} MB",
                        r.table.num_rows,
                        bytes as f64 / 1e6
                    )
                }
            },
            Some(_) => "stale (dataset changed; rebuilt on next open or `index build`)".to_string(),
        };
        lines.push(format!("{name:<40} {state}"));
    }
    let base = &catalog.config.base_dir;
    if !base.as_os_str().is_empty() {
        for state in past_states(base) {
            lines.push(format!("{:<40} {state}", "indexed past state"));
        }
    }
    lines
}
