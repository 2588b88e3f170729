//! `lance-csr import`: CSV or Parquet files to Lance datasets plus a graph.toml.

use super::write_reader;
use crate::config::{GraphConfig, NodeTable, RelTable};
use crate::error::{Error, Result};
use arrow::array::{RecordBatch, RecordBatchReader};
use arrow::datatypes::{DataType, SchemaRef};
use std::fs::File;
use std::io::{Seek, SeekFrom};
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// One node file: `LABEL[:IDCOL]=FILE`.
#[derive(Debug, Clone)]
pub struct NodeSpec {
    pub label: String,
    pub id: String,
    pub file: PathBuf,
}

/// One relationship file: `TYPE:FROM:TO[:SRCCOL:DSTCOL]=FILE`.
#[derive(Debug, Clone)]
pub struct RelSpec {
    pub rel_type: String,
    pub from: String,
    pub to: String,
    pub src: String,
    pub dst: String,
    pub file: PathBuf,
}

impl NodeSpec {
    pub fn parse(s: &str) -> Result<Self> {
        let (lhs, file) = s
            .split_once('=')
            .ok_or_else(|| Error::Other(format!("--node {s}: expected LABEL[:IDCOL]=FILE")))?;
        let mut parts = lhs.split(':');
        let label = parts.next().unwrap_or_default().to_string();
        let id = parts.next().unwrap_or("id").to_string();
        if label.is_empty() {
            return Err(Error::Other(format!("--node {s}: empty label")));
        }
        Ok(Self {
            label,
            id,
            file: file.into(),
        })
    }
}

impl RelSpec {
    pub fn parse(s: &str) -> Result<Self> {
        let usage = || {
            Error::Other(format!(
                "--rel {s}: expected TYPE:FROM:TO[:SRCCOL:DSTCOL]=FILE"
            ))
        };
        let (lhs, file) = s.split_once('=').ok_or_else(usage)?;
        let parts: Vec<&str> = lhs.split(':').collect();
        let (src, dst) = match parts.len() {
            3 => ("src", "dst"),
            5 => (parts[3], parts[4]),
            _ => return Err(usage()),
        };
        Ok(Self {
            rel_type: parts[0].into(),
            from: parts[1].into(),
            to: parts[2].into(),
            src: src.into(),
            dst: dst.into(),
            file: file.into(),
        })
    }
}

/// A reader over a CSV (header row, types inferred from the first 10,000 rows) or Parquet
/// file: batches are read as they are written, never the whole file at once.
pub fn open_table_file(path: &Path) -> Result<Box<dyn RecordBatchReader + Send>> {
    let ext = path
        .extension()
        .and_then(|e| e.to_str())
        .unwrap_or("")
        .to_ascii_lowercase();
    let bad = |e: &dyn std::fmt::Display| Error::Other(format!("{}: {e}", path.display()));
    let open = || {
        File::open(path).map_err(|e| Error::Other(format!("cannot open {}: {e}", path.display())))
    };
    match ext.as_str() {
        "parquet" => {
            let reader =
                parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder::try_new(open()?)
                    .map_err(|e| bad(&e))?
                    .build()
                    .map_err(|e| bad(&e))?;
            Ok(Box::new(reader))
        }
        "csv" => {
            let mut f = open()?;
            let format = arrow::csv::reader::Format::default().with_header(true);
            let (schema, _) = format
                .infer_schema(&mut f, Some(10_000))
                .map_err(|e| bad(&e))?;
            f.seek(SeekFrom::Start(0))?;
            let reader = arrow::csv::ReaderBuilder::new(Arc::new(schema))
                .with_format(format)
                .build(f)
                .map_err(|e| bad(&e))?;
            Ok(Box::new(reader))
        }
        other => Err(Error::Other(format!(
            "{}: unsupported file type '{other}' (expected .csv or .parquet)",
            path.display()
        ))),
    }
}

/// Checks every input (files open, id and endpoint columns exist with key types, endpoint
/// types match the labels' ids, relationships name imported labels) before anything is
/// written, and picks dataset names that stay distinct on a case-insensitive file system.
/// Returns the graph's config and, per node file then relationship file, its open reader.
fn plan(nodes: &[NodeSpec], rels: &[RelSpec]) -> Result<(GraphConfig, Vec<Reader>)> {
    let mut cfg = GraphConfig::default();
    let mut names = std::collections::HashSet::new();
    let mut unique = |base: String| {
        let mut name = format!("{base}.lance");
        let mut k = 2;
        while !names.insert(name.to_lowercase()) {
            name = format!("{base}_{k}.lance");
            k += 1;
        }
        name
    };
    let mut id_types = std::collections::HashMap::new();
    let mut readers = Vec::with_capacity(nodes.len() + rels.len());
    for n in nodes {
        if cfg.nodes.contains_key(&n.label) {
            return Err(Error::Other(format!(
                "--node {}: label given twice",
                n.label
            )));
        }
        let reader = open_table_file(&n.file)?;
        let t = column_type(&reader.schema(), &n.id, &n.file, "id")?;
        readers.push(reader);
        id_types.insert(n.label.clone(), t);
        cfg.nodes.insert(
            n.label.clone(),
            NodeTable {
                source: unique(n.label.to_lowercase()),
                id: n.id.clone(),
                id_hidden: false,
            },
        );
    }
    for r in rels {
        let reader = open_table_file(&r.file)?;
        let schema = reader.schema();
        readers.push(reader);
        for (col, label) in [(&r.src, &r.from), (&r.dst, &r.to)] {
            let t = column_type(&schema, col, &r.file, "endpoint")?;
            let Some(key) = id_types.get(label) else {
                return Err(Error::Other(format!(
                    "--rel {}: label `{label}` is not imported (give it a --node)",
                    r.rel_type
                )));
            };
            if t.is_integer() != key.is_integer() {
                return Err(Error::Other(format!(
                    "{}: endpoint column `{col}` is {t} but the ids of {label} are {key}",
                    r.file.display()
                )));
            }
        }
        cfg.relationships.push(RelTable {
            rel_type: r.rel_type.clone(),
            from: r.from.clone(),
            to: r.to.clone(),
            source: unique(format!(
                "{}_{}_{}",
                r.from.to_lowercase(),
                r.rel_type.to_lowercase(),
                r.to.to_lowercase()
            )),
            src: r.src.clone(),
            dst: r.dst.clone(),
        });
    }
    cfg.validate()?;
    Ok((cfg, readers))
}

type Reader = Box<dyn RecordBatchReader + Send>;

/// The type of key column `col` of `file`: an integer or a string.
fn column_type(schema: &SchemaRef, col: &str, file: &Path, what: &str) -> Result<DataType> {
    let f = schema.field_with_name(col).map_err(|_| {
        Error::Other(format!(
            "{}: no {what} column `{col}` (columns: {})",
            file.display(),
            column_list(schema)
        ))
    })?;
    let t = f.data_type().clone();
    if !(t.is_integer() || matches!(t, DataType::Utf8 | DataType::LargeUtf8)) {
        return Err(Error::Other(format!(
            "{}: {what} column `{col}` is {t} (an integer or a string is needed)",
            file.display()
        )));
    }
    Ok(t)
}

/// Converts every file to a Lance dataset and writes a graph.toml: into a new folder beside
/// `out`, moved into place only when everything succeeded, so a failing import leaves `out`
/// as it was. A non-empty `out` is refused unless `overwrite` (then replaced as a whole).
/// Returns the graph.toml's path; `progress` receives one line per step.
pub async fn import(
    out: &Path,
    nodes: &[NodeSpec],
    rels: &[RelSpec],
    overwrite: bool,
    progress: &mut dyn FnMut(&str),
) -> Result<PathBuf> {
    let non_empty = std::fs::read_dir(out).is_ok_and(|mut d| d.next().is_some());
    if non_empty && !overwrite {
        return Err(Error::Other(format!(
            "{} is not empty; pass --overwrite to replace it",
            out.display()
        )));
    }
    if out.exists() && !out.is_dir() {
        return Err(Error::Other(format!("{} is not a folder", out.display())));
    }
    let (mut cfg, readers) = plan(nodes, rels)?;
    let tmp = sibling(out, "import")?;
    std::fs::create_dir_all(&tmp)
        .map_err(|e| Error::Other(format!("cannot create {}: {e}", tmp.display())))?;
    let written = write_all(&tmp, &mut cfg, readers, nodes, rels, progress).await;
    let moved = written.and_then(|()| replace(&tmp, out));
    if moved.is_err() {
        let _ = std::fs::remove_dir_all(&tmp);
    }
    moved?;
    let path = out.join("graph.toml");
    progress(&format!("wrote {}", path.display()));
    Ok(path)
}

async fn write_all(
    dir: &Path,
    cfg: &mut GraphConfig,
    readers: Vec<Reader>,
    nodes: &[NodeSpec],
    rels: &[RelSpec],
    progress: &mut dyn FnMut(&str),
) -> Result<()> {
    let mut readers = readers.into_iter();
    let mut next = || readers.next().expect("a reader per file");
    for n in nodes {
        let name = cfg.nodes[&n.label].source.clone();
        let rows = write_file(next(), &n.file, &dir.join(&name)).await?;
        progress(&format!("node {:<16} {rows:>12} rows -> {name}", n.label));
    }
    for (r, t) in rels.iter().zip(cfg.relationships.clone()) {
        let rows = write_file(next(), &r.file, &dir.join(&t.source)).await?;
        progress(&format!(
            "rel  {:<16} {rows:>12} rows -> {}",
            format!("{}({}->{})", r.rel_type, r.from, r.to),
            t.source
        ));
    }
    let path = dir.join("graph.toml");
    cfg.origin = path.display().to_string();
    std::fs::write(&path, cfg.to_toml())
        .map_err(|e| Error::Other(format!("cannot write {}: {e}", path.display())))?;
    Ok(())
}

/// Streams `reader` (of `file`) into a new Lance dataset at `dest`; returns the rows written.
async fn write_file(reader: Reader, file: &Path, dest: &Path) -> Result<usize> {
    let rows = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let reader = Counting {
        inner: reader,
        rows: rows.clone(),
    };
    write_reader(dest, reader)
        .await
        .map_err(|e| Error::Other(format!("{}: {e}", file.display())))?;
    Ok(rows.load(std::sync::atomic::Ordering::Relaxed))
}

/// A reader that counts the rows it hands out.
struct Counting {
    inner: Reader,
    rows: Arc<std::sync::atomic::AtomicUsize>,
}

impl Iterator for Counting {
    type Item = std::result::Result<RecordBatch, arrow::error::ArrowError>;

    fn next(&mut self) -> Option<Self::Item> {
        let b = self.inner.next()?;
        if let Ok(b) = &b {
            self.rows
                .fetch_add(b.num_rows(), std::sync::atomic::Ordering::Relaxed);
        }
        Some(b)
    }
}

impl RecordBatchReader for Counting {
    fn schema(&self) -> SchemaRef {
        self.inner.schema()
    }
}

/// A fresh folder name beside `out` (same file system, so a rename moves it).
fn sibling(out: &Path, what: &str) -> Result<PathBuf> {
    let name = out
        .file_name()
        .ok_or_else(|| Error::Other(format!("{}: not a folder name", out.display())))?;
    let parent = match out.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    };
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or_default();
    Ok(parent.join(format!(
        ".{}.{what}-{}-{nanos}",
        name.to_string_lossy(),
        std::process::id()
    )))
}

/// Puts the finished folder `tmp` at `out`: an existing `out` is moved aside first and
/// removed after, so `out` is at every moment either the old graph or the new one.
fn replace(tmp: &Path, out: &Path) -> Result<()> {
    let rename = |a: &Path, b: &Path| {
        std::fs::rename(a, b).map_err(|e| {
            Error::Other(format!(
                "cannot move {} to {}: {e}",
                a.display(),
                b.display()
            ))
        })
    };
    if out.exists() {
        let old = sibling(out, "old")?;
        rename(out, &old)?;
        if let Err(e) = rename(tmp, out) {
            let _ = rename(&old, out);
            return Err(e);
        }
        let _ = std::fs::remove_dir_all(&old);
        Ok(())
    } else {
        if let Some(p) = out.parent().filter(|p| !p.as_os_str().is_empty()) {
            std::fs::create_dir_all(p)
                .map_err(|e| Error::Other(format!("cannot create {}: {e}", p.display())))?;
        }
        rename(tmp, out)
    }
}

fn column_list(schema: &SchemaRef) -> String {
    schema
        .fields()
        .iter()
        .map(|f| f.name().as_str())
        .collect::<Vec<_>>()
        .join(", ")
}
