//! `lance-csr import`: CSV or Parquet files to Lance datasets plus a graph.toml.

use super::lance_table::stored_names;
use super::swap::Replacement;
use super::write_reader;
use crate::config::{GraphConfig, NodeTable, RelTable};
use crate::error::{Error, Result};
use arrow::array::{RecordBatch, RecordBatchReader};
use arrow::datatypes::{DataType, SchemaRef};
use std::fs::File;
use std::io::{Seek, SeekFrom};
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// One node file: `LABEL[,LABEL..][:IDCOL]=FILE`.
#[derive(Debug, Clone)]
pub struct NodeSpec {
    /// The table's name (what relationship files name as their ends): its first label.
    pub label: String,
    /// Its other labels (`Post,Message`: every post is a message too).
    pub extra_labels: Vec<String>,
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
        let (lhs, file) = s.split_once('=').ok_or_else(|| {
            Error::Other(format!("--node {s}: expected LABEL[,LABEL..][:IDCOL]=FILE"))
        })?;
        let mut parts = lhs.split(':');
        let mut labels = parts
            .next()
            .unwrap_or_default()
            .split(',')
            .map(str::to_string);
        let label = labels.next().unwrap_or_default();
        let extra_labels: Vec<String> = labels.collect();
        let id = parts.next().unwrap_or("id").to_string();
        if label.is_empty() || extra_labels.iter().any(|l| l.is_empty()) {
            return Err(Error::Other(format!("--node {s}: empty label")));
        }
        Ok(Self {
            label,
            extra_labels,
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
        if parts[..3].iter().any(|p| p.is_empty()) {
            return Err(usage());
        }
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
    let open = || File::open(path).map_err(|e| Error::io("open", path, e));
    match ext.as_str() {
        "parquet" => {
            let builder =
                parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder::try_new(open()?)
                    .map_err(|e| Error::input(path, e))?;
            check_width(path, builder.schema().fields().len())?;
            Ok(Box::new(
                builder.build().map_err(|e| Error::input(path, e))?,
            ))
        }
        "csv" => {
            let mut f = open()?;
            check_width(
                path,
                csv_header_width(&mut f).map_err(|e| Error::input(path, e))?,
            )?;
            f.seek(SeekFrom::Start(0))?;
            let format = arrow::csv::reader::Format::default().with_header(true);
            let (schema, _) = format
                .infer_schema(&mut f, Some(10_000))
                .map_err(|e| Error::input(path, e))?;
            f.seek(SeekFrom::Start(0))?;
            // The reader's buffers hold a batch of every column: wide files read fewer rows
            // at a time.
            let rows = (CSV_CELLS_PER_BATCH / schema.fields().len().max(1)).clamp(1, 8192);
            let reader = arrow::csv::ReaderBuilder::new(Arc::new(schema))
                .with_format(format)
                .with_batch_size(rows)
                .build(f)
                .map_err(|e| Error::input(path, e))?;
            Ok(Box::new(reader))
        }
        other => Err(Error::Other(format!(
            "{}: unsupported file type '{other}' (expected .csv or .parquet)",
            path.display()
        ))),
    }
}

/// Most columns an input file may have: wider files are refused before anything is read
/// (a table that wide is no graph table, and the CSV reader's buffers grow with the width).
pub const MAX_COLUMNS: usize = 10_000;

/// A file or folder name for a label or relationship type: lower case (names differing only
/// in case stay distinct on case-insensitive file systems through `unique`), every byte but
/// ASCII letters, digits, `_` and `-` percent-encoded, so that no name is a path (`/`, `..`,
/// an absolute path) whatever the label; long names end in a hash of the whole.
pub fn safe_name(label: &str) -> String {
    let mut out = String::new();
    for b in label.to_lowercase().bytes() {
        if b.is_ascii_alphanumeric() || b == b'_' || b == b'-' {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    const LONGEST: usize = 120;
    if out.len() > LONGEST {
        let hash = crc32fast::hash(label.as_bytes());
        out.truncate(LONGEST - 9);
        // A cut `%XX` would read as another byte: cut before it.
        if let Some(p) = out[out.len().saturating_sub(2)..].find('%') {
            out.truncate(out.len() - 2 + p);
        }
        out.push_str(&format!("~{hash:08x}"));
    }
    out
}

/// The dataset folder names of one graph: `<base>.lance`, with a number added where another
/// name of the graph is the same but for case (distinct on a case-insensitive file system).
#[derive(Default)]
pub struct DatasetNames(std::collections::HashSet<String>);

impl DatasetNames {
    /// A name for `base` (already a [`safe_name`]) no other dataset of the graph has.
    pub fn unique(&mut self, base: String) -> String {
        let mut name = format!("{base}.lance");
        let mut k = 2;
        while !self.0.insert(name.to_lowercase()) {
            name = format!("{base}_{k}.lance");
            k += 1;
        }
        name
    }
}

/// Cells a CSV batch holds at most (rows x columns).
const CSV_CELLS_PER_BATCH: usize = 1 << 20;

/// The number of fields of a CSV file's first record (its header), read through a bounded
/// buffer.
fn csv_header_width(f: &mut File) -> std::result::Result<usize, csv::Error> {
    let mut r = csv::ReaderBuilder::new()
        .has_headers(false)
        .flexible(true)
        .from_reader(std::io::BufReader::new(f));
    let mut record = csv::ByteRecord::new();
    r.read_byte_record(&mut record)?;
    Ok(record.len())
}

/// Refuses a file with more than [`MAX_COLUMNS`] columns.
fn check_width(path: &Path, columns: usize) -> Result<()> {
    if columns > MAX_COLUMNS {
        return Err(Error::Other(format!(
            "{}: {columns} columns; import takes at most {MAX_COLUMNS} per file",
            path.display()
        )));
    }
    Ok(())
}

/// Checks every input (files open, id and endpoint columns exist with key types, endpoint
/// types match the labels' ids, relationships name imported labels) before anything is
/// written, and picks dataset names that are plain file names (see [`safe_name`]) and stay
/// distinct on a case-insensitive file system. Returns the graph's config and, per node file
/// then relationship file, its open reader.
fn plan(nodes: &[NodeSpec], rels: &[RelSpec]) -> Result<(GraphConfig, Vec<Reader>)> {
    let mut cfg = GraphConfig::default();
    let mut names = DatasetNames::default();
    let mut unique = |base: String| names.unique(base);
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
        let schema = reader.schema();
        let t = column_type(&schema, &n.id, &n.file, "id")?;
        readers.push(reader);
        id_types.insert(n.label.clone(), t);
        cfg.nodes.insert(
            n.label.clone(),
            NodeTable {
                source: unique(safe_name(&n.label)),
                id: n.id.clone(),
                id_hidden: false,
                columns: stored_columns(&schema),
                labels: (!n.extra_labels.is_empty()).then(|| {
                    let mut all = vec![n.label.clone()];
                    all.extend(n.extra_labels.iter().cloned());
                    all
                }),
            },
        );
    }
    for r in rels {
        let reader = open_table_file(&r.file)?;
        let schema = reader.schema();
        super::check_row_id_free(schema.fields().iter().map(|f| f.name().as_str()))
            .map_err(|e| Error::input(&r.file, e))?;
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
                safe_name(&r.from),
                safe_name(&r.rel_type),
                safe_name(&r.to)
            )),
            src: r.src.clone(),
            dst: r.dst.clone(),
            columns: stored_columns(&schema),
        });
    }
    cfg.validate()?;
    Ok((cfg, readers))
}

type Reader = Box<dyn RecordBatchReader + Send>;

/// The columns of `schema` the dataset holds under other names (see [`stored_names`]).
fn stored_columns(schema: &SchemaRef) -> std::collections::BTreeMap<String, String> {
    stored_names(schema.fields().iter().map(|f| f.name().as_str()))
}

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

/// An import checked and under way: every input is validated and open, and a folder beside
/// `out` receives the datasets (see [`super::swap`]). [`Import::commit`] puts it at `out` in
/// one step; dropping it instead removes it, leaving `out` as it was.
pub struct Import {
    cfg: GraphConfig,
    readers: Vec<Reader>,
    nodes: Vec<NodeSpec>,
    rels: Vec<RelSpec>,
    replacement: Replacement,
}

impl Import {
    /// Checks the inputs against `out`: a non-empty `out` is refused unless `overwrite` (then
    /// replaced as a whole once the import is complete).
    pub fn begin(
        out: &Path,
        nodes: &[NodeSpec],
        rels: &[RelSpec],
        overwrite: bool,
    ) -> Result<Self> {
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
        let (cfg, readers) = plan(nodes, rels)?;
        Ok(Self {
            cfg,
            readers,
            nodes: nodes.to_vec(),
            rels: rels.to_vec(),
            replacement: Replacement::begin(out)?,
        })
    }

    /// Converts every file to a Lance dataset and writes the graph.toml, in the new folder;
    /// returns that graph.toml's path (to build indexes in the folder before it moves).
    pub async fn write(&mut self, progress: &mut (dyn FnMut(&str) + Send)) -> Result<PathBuf> {
        let readers = std::mem::take(&mut self.readers);
        let dir = self.replacement.dir().to_path_buf();
        write_all(
            &dir,
            &mut self.cfg,
            readers,
            &self.nodes,
            &self.rels,
            progress,
        )
        .await?;
        super::swap::crash_point("written");
        Ok(dir.join("graph.toml"))
    }

    /// Puts the written folder at `out`; returns the graph.toml's path there.
    pub fn commit(self) -> Result<PathBuf> {
        let out = self.replacement.out().to_path_buf();
        self.replacement.commit()?;
        Ok(out.join("graph.toml"))
    }
}

async fn write_all(
    dir: &Path,
    cfg: &mut GraphConfig,
    readers: Vec<Reader>,
    nodes: &[NodeSpec],
    rels: &[RelSpec],
    progress: &mut (dyn FnMut(&str) + Send),
) -> Result<()> {
    let mut readers = readers.into_iter();
    let mut next = || readers.next().expect("a reader per file");
    for n in nodes {
        let t = &cfg.nodes[&n.label];
        let name = t.source.clone();
        let rows = write_file(next(), &t.columns, &n.file, &dir.join(&name)).await?;
        progress(&format!("node {:<16} {rows:>12} rows -> {name}", n.label));
    }
    for (r, t) in rels.iter().zip(cfg.relationships.clone()) {
        let rows = write_file(next(), &t.columns, &r.file, &dir.join(&t.source)).await?;
        progress(&format!(
            "rel  {:<16} {rows:>12} rows -> {}",
            format!("{}({}->{})", r.rel_type, r.from, r.to),
            t.source
        ));
    }
    let path = dir.join("graph.toml");
    cfg.origin = path.display().to_string();
    std::fs::write(&path, cfg.to_toml()).map_err(|e| Error::io("write", path, e))?;
    Ok(())
}

/// Streams `reader` (of `file`) into a new Lance dataset at `dest`, the columns of `renamed`
/// (name -> stored name) under their stored names; returns the rows written.
async fn write_file(
    reader: Reader,
    renamed: &std::collections::BTreeMap<String, String>,
    file: &Path,
    dest: &Path,
) -> Result<usize> {
    let rows = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let reader = Counting {
        schema: super::lance_table::stored_schema(&reader.schema(), renamed),
        inner: reader,
        rows: rows.clone(),
    };
    write_reader(dest, reader)
        .await
        .map_err(|e| Error::input(file, e))?;
    Ok(rows.load(std::sync::atomic::Ordering::Relaxed))
}

/// A reader that counts the rows it hands out, its batches under `schema` (the columns'
/// stored names).
struct Counting {
    inner: Reader,
    schema: SchemaRef,
    rows: Arc<std::sync::atomic::AtomicUsize>,
}

impl Iterator for Counting {
    type Item = std::result::Result<RecordBatch, arrow::error::ArrowError>;

    fn next(&mut self) -> Option<Self::Item> {
        let b = self.inner.next()?;
        Some(b.and_then(|b| {
            self.rows
                .fetch_add(b.num_rows(), std::sync::atomic::Ordering::Relaxed);
            RecordBatch::try_new(self.schema.clone(), b.columns().to_vec())
        }))
    }
}

impl RecordBatchReader for Counting {
    fn schema(&self) -> SchemaRef {
        self.schema.clone()
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
