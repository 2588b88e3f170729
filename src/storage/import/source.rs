//! An input file as the import reads it (CSV or Parquet): its columns, their types and what a
//! neo4j-admin header makes of them; opened anew for each pass over its rows.

use super::csv_file::{self, ColumnSpec, CsvColumn, CsvFormat, CsvRows, Declared};
use super::neo4j_header::{self, Field};
use super::route::Split;
use super::{check_width, Reader};
use crate::error::{Error, Result};
use arrow::datatypes::SchemaRef;
use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;
use std::fs::File;
use std::path::{Path, PathBuf};

/// What a column is to the graph.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Role {
    Prop,
    /// A node file's id, in an ID space (`""`: the global one).
    Id(String),
    /// A relationship file's start, in an ID space.
    Start(String),
    End(String),
    /// Each row's labels (`:LABEL`).
    Label,
    /// Each row's relationship type (`:TYPE`).
    Type,
}

pub(super) struct Source {
    pub(super) file: PathBuf,
    /// The columns read (`:IGNORE`d ones are not), with their types.
    pub(super) schema: SchemaRef,
    pub(super) roles: Vec<Role>,
    /// What the import reports of the file: its columns' types, its warnings.
    pub(super) report: Vec<String>,
    kind: Kind,
}

enum Kind {
    Csv(CsvFormat, Vec<CsvColumn>),
    Parquet,
}

impl Source {
    /// Reads `file`'s header (and a CSV file's first rows, for its columns' types).
    pub(super) fn of(file: &Path, format: &CsvFormat) -> Result<Self> {
        let ext = (file.extension())
            .and_then(|e| e.to_str())
            .unwrap_or("")
            .to_ascii_lowercase();
        match ext.as_str() {
            "parquet" => {
                let builder = parquet(file)?;
                let schema = builder.schema().clone();
                check_width(file, schema.fields().len())?;
                Ok(Self {
                    file: file.to_path_buf(),
                    roles: vec![Role::Prop; schema.fields().len()],
                    schema,
                    report: Vec::new(),
                    kind: Kind::Parquet,
                })
            }
            "csv" => Self::csv(file, format),
            other => Err(Error::Other(format!(
                "{}: unsupported file type '{other}' (expected .csv or .parquet)",
                file.display()
            ))),
        }
    }

    fn csv(file: &Path, format: &CsvFormat) -> Result<Self> {
        let header = csv_file::header(file, format)?;
        let neo4j = neo4j_header::is_neo4j(&header);
        let (mut specs, mut roles, mut ignored) = (Vec::new(), Vec::new(), Vec::new());
        for (index, text) in header.iter().enumerate() {
            let field = match neo4j {
                true => neo4j_header::parse(text).map_err(|e| Error::input(file, e))?,
                false => Field::Prop {
                    name: text.clone(),
                    declared: None,
                },
            };
            let text_column = Some((Declared::Text, false));
            let (name, declared, role) = match field {
                Field::Prop { name, declared } => (name, declared, Role::Prop),
                Field::Id { name, space } => (name, None, Role::Id(space)),
                Field::Start { name, space } => (name, None, Role::Start(space)),
                Field::End { name, space } => (name, None, Role::End(space)),
                Field::Label => (text.clone(), text_column, Role::Label),
                Field::Type => (text.clone(), text_column, Role::Type),
                Field::Ignore => {
                    // Named as written before its `:IGNORE`.
                    let name = text.rsplit_once(':').map_or(text.as_str(), |(n, _)| n);
                    ignored.push(if name.is_empty() {
                        text.clone()
                    } else {
                        name.to_string()
                    });
                    continue;
                }
            };
            if specs.iter().any(|s: &ColumnSpec| s.name == name) {
                return Err(Error::input(
                    file,
                    format!("two columns are named `{name}`"),
                ));
            }
            specs.push(ColumnSpec {
                index,
                name,
                declared,
            });
            roles.push(role);
        }
        let (columns, warnings) = csv_file::decide(file, format, &specs)?;
        let layout = match neo4j {
            true => " (neo4j-admin header)",
            false => "",
        };
        let mut report = vec![format!("{}{layout}:", file.display())];
        for (c, role) in columns.iter().zip(&roles) {
            report.push(format!("  {}: {}", c.name, describe(c, role)));
        }
        report.extend(ignored.iter().map(|n| format!("  {n}: ignored")));
        report.extend(warnings);
        Ok(Self {
            file: file.to_path_buf(),
            schema: csv_file::schema(&columns),
            roles,
            report,
            kind: Kind::Csv(*format, columns),
        })
    }

    /// A reader of every row, every column.
    pub(super) fn open(&self) -> Result<Reader> {
        match &self.kind {
            Kind::Csv(format, columns) => Ok(Box::new(CsvRows::open(
                &self.file,
                format,
                columns.clone(),
            )?)),
            Kind::Parquet => Ok(Box::new(
                parquet(&self.file)?
                    .build()
                    .map_err(|e| Error::input(&self.file, e))?,
            )),
        }
    }

    /// A reader of every row, columns `keep` (a CSV file's others are not even converted).
    pub(super) fn open_columns(&self, keep: &[usize]) -> Result<Reader> {
        match &self.kind {
            Kind::Csv(format, columns) => Ok(Box::new(CsvRows::open(
                &self.file,
                format,
                keep.iter().map(|&i| columns[i].clone()).collect(),
            )?)),
            Kind::Parquet => Ok(Box::new(Split::new(
                self.open()?,
                None,
                keep.to_vec(),
                &self.file,
            )?)),
        }
    }

    /// The index of the column named `name`.
    pub(super) fn column(&self, name: &str) -> Option<usize> {
        self.schema.index_of(name).ok()
    }

    /// The name of column `i`.
    pub(super) fn name(&self, i: usize) -> &str {
        self.schema.field(i).name()
    }

    /// The columns whose role `pick` picks.
    pub(super) fn with_role(&self, pick: impl Fn(&Role) -> bool) -> Vec<usize> {
        (0..self.roles.len())
            .filter(|&i| pick(&self.roles[i]))
            .collect()
    }
}

fn parquet(file: &Path) -> Result<ParquetRecordBatchReaderBuilder<File>> {
    let f = File::open(file).map_err(|e| Error::io("open", file, e))?;
    ParquetRecordBatchReaderBuilder::try_new(f).map_err(|e| Error::input(file, e))
}

/// A column's type and part, as the import reports them.
fn describe(c: &CsvColumn, role: &Role) -> String {
    let space = |s: &str| match s.is_empty() {
        true => String::new(),
        false => format!(", ID space {s}"),
    };
    let ty = c.cell.describe();
    match role {
        Role::Prop if c.declared => format!("{ty}, as declared"),
        Role::Prop => ty,
        Role::Id(s) => format!("{ty} (the id{})", space(s)),
        Role::Start(s) => format!("{ty} (the start{})", space(s)),
        Role::End(s) => format!("{ty} (the end{})", space(s)),
        Role::Label => "labels".into(),
        Role::Type => "relationship types".into(),
    }
}
