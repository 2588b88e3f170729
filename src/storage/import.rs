//! `lance-csr import`: CSV or Parquet files to Lance datasets plus a graph.toml.

use super::write_lance;
use crate::config::{GraphConfig, NodeTable, RelTable};
use crate::error::{Error, Result};
use arrow::array::RecordBatch;
use arrow::datatypes::SchemaRef;
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

/// Reads a CSV (header row, types inferred) or Parquet file into batches.
pub fn read_table_file(path: &Path) -> Result<(SchemaRef, Vec<RecordBatch>)> {
    let ext = path
        .extension()
        .and_then(|e| e.to_str())
        .unwrap_or("")
        .to_ascii_lowercase();
    let open = || {
        File::open(path).map_err(|e| Error::Other(format!("cannot open {}: {e}", path.display())))
    };
    match ext.as_str() {
        "parquet" => {
            let builder =
                parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder::try_new(open()?)
                    .map_err(|e| Error::Other(format!("{}: {e}", path.display())))?;
            let schema = builder.schema().clone();
            let reader = builder
                .build()
                .map_err(|e| Error::Other(format!("{}: {e}", path.display())))?;
            let batches = reader
                .collect::<std::result::Result<Vec<_>, _>>()
                .map_err(|e| Error::Other(format!("{}: {e}", path.display())))?;
            Ok((schema, batches))
        }
        "csv" => {
            let mut f = open()?;
            let format = arrow::csv::reader::Format::default().with_header(true);
            let (schema, _) = format
                .infer_schema(&mut f, Some(10_000))
                .map_err(|e| Error::Other(format!("{}: {e}", path.display())))?;
            f.seek(SeekFrom::Start(0))?;
            let schema = Arc::new(schema);
            let reader = arrow::csv::ReaderBuilder::new(schema.clone())
                .with_format(format)
                .build(f)
                .map_err(|e| Error::Other(format!("{}: {e}", path.display())))?;
            let batches = reader
                .collect::<std::result::Result<Vec<_>, _>>()
                .map_err(|e| Error::Other(format!("{}: {e}", path.display())))?;
            Ok((schema, batches))
        }
        other => Err(Error::Other(format!(
            "{}: unsupported file type '{other}' (expected .csv or .parquet)",
            path.display()
        ))),
    }
}

/// Converts every file to a Lance dataset under `out`, writes `out/graph.toml`, and returns its
/// path. `progress` receives one line per step.
pub async fn import(
    out: &Path,
    nodes: &[NodeSpec],
    rels: &[RelSpec],
    progress: &mut dyn FnMut(&str),
) -> Result<PathBuf> {
    std::fs::create_dir_all(out)?;
    let mut cfg = GraphConfig::default();
    for n in nodes {
        let (schema, batches) = read_table_file(&n.file)?;
        if schema.field_with_name(&n.id).is_err() {
            return Err(Error::Other(format!(
                "{}: no id column `{}` (columns: {})",
                n.file.display(),
                n.id,
                column_list(&schema)
            )));
        }
        let rows: usize = batches.iter().map(|b| b.num_rows()).sum();
        let name = format!("{}.lance", n.label.to_lowercase());
        write_lance(&out.join(&name), schema, batches).await?;
        progress(&format!("node {:<16} {rows:>12} rows -> {name}", n.label));
        cfg.nodes.insert(
            n.label.clone(),
            NodeTable {
                source: name,
                id: n.id.clone(),
                id_hidden: false,
            },
        );
    }
    for r in rels {
        let (schema, batches) = read_table_file(&r.file)?;
        for c in [&r.src, &r.dst] {
            if schema.field_with_name(c).is_err() {
                return Err(Error::Other(format!(
                    "{}: no endpoint column `{c}` (columns: {})",
                    r.file.display(),
                    column_list(&schema)
                )));
            }
        }
        let rows: usize = batches.iter().map(|b| b.num_rows()).sum();
        let name = format!(
            "{}_{}_{}.lance",
            r.from.to_lowercase(),
            r.rel_type.to_lowercase(),
            r.to.to_lowercase()
        );
        write_lance(&out.join(&name), schema, batches).await?;
        progress(&format!(
            "rel  {:<16} {rows:>12} rows -> {name}",
            format!("{}({}->{})", r.rel_type, r.from, r.to)
        ));
        cfg.relationships.push(RelTable {
            rel_type: r.rel_type.clone(),
            from: r.from.clone(),
            to: r.to.clone(),
            source: name,
            src: r.src.clone(),
            dst: r.dst.clone(),
        });
    }
    let path = out.join("graph.toml");
    cfg.origin = path.display().to_string();
    cfg.validate()?;
    std::fs::write(&path, cfg.to_toml())?;
    progress(&format!("wrote {}", path.display()));
    Ok(path)
}

fn column_list(schema: &SchemaRef) -> String {
    schema
        .fields()
        .iter()
        .map(|f| f.name().as_str())
        .collect::<Vec<_>>()
        .join(", ")
}
