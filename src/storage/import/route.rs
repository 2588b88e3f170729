//! The rows of one file split into tables: node rows by their labels (a `:LABEL` column, or
//! the column `--node-label-column` names), relationship rows by their type (`:TYPE`) and by
//! the node table that holds each end's key (where a label or an ID space names several).

use super::{from_arrow, to_arrow, Reader};
use crate::error::{Error, Result};
use arrow::array::{Array, ArrayRef, AsArray, BooleanArray, RecordBatch, RecordBatchReader};
use arrow::datatypes::{DataType, Int64Type, SchemaRef};
use arrow::error::ArrowError;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// The keys of one node table, sorted: which of several tables holds an end.
pub(super) enum KeySet {
    Int(Vec<i64>),
    Text(Vec<String>),
}

impl KeySet {
    pub(super) fn new(integer: bool) -> Self {
        match integer {
            true => KeySet::Int(Vec::new()),
            false => KeySet::Text(Vec::new()),
        }
    }

    /// Adds the keys of id column `col` (a null is no key).
    pub(super) fn add(&mut self, col: &ArrayRef) -> Result<()> {
        match self {
            KeySet::Int(keys) => {
                let a = arrow::compute::cast(col, &DataType::Int64)?;
                keys.extend(a.as_primitive::<Int64Type>().iter().flatten());
            }
            KeySet::Text(keys) => {
                let a = arrow::compute::cast(col, &DataType::Utf8)?;
                keys.extend(a.as_string::<i32>().iter().flatten().map(str::to_string));
            }
        }
        Ok(())
    }

    /// Adds the keys of id column `col` to `sets`: row `i`'s to `sets[groups[i]]`.
    pub(super) fn add_grouped(sets: &mut [KeySet], col: &ArrayRef, groups: &[u32]) -> Result<()> {
        let Some(first) = sets.first() else {
            return Ok(());
        };
        if matches!(first, KeySet::Int(_)) {
            let a = arrow::compute::cast(col, &DataType::Int64)?;
            for (k, &g) in a.as_primitive::<Int64Type>().iter().zip(groups) {
                if let (Some(k), Some(KeySet::Int(keys))) = (k, sets.get_mut(g as usize)) {
                    keys.push(k);
                }
            }
        } else {
            let a = arrow::compute::cast(col, &DataType::Utf8)?;
            for (k, &g) in a.as_string::<i32>().iter().zip(groups) {
                if let (Some(k), Some(KeySet::Text(keys))) = (k, sets.get_mut(g as usize)) {
                    keys.push(k.to_string());
                }
            }
        }
        Ok(())
    }

    /// Sorts the keys, for lookups.
    pub(super) fn seal(&mut self) {
        match self {
            KeySet::Int(k) => {
                k.sort_unstable();
                k.dedup();
            }
            KeySet::Text(k) => {
                k.sort_unstable();
                k.dedup();
            }
        }
    }
}

/// Each row's labels: the label column's value (`:LABEL`'s split at the array delimiter), then
/// the labels the `--node` gives every row. Rows with the same labels go to one table, named by
/// the first.
#[derive(Clone)]
pub(super) struct LabelRouter {
    col: usize,
    split: Option<char>,
    given: Vec<String>,
    column: String,
    file: PathBuf,
    /// A label column's value -> its group.
    cache: HashMap<String, u32>,
    /// The label sets seen, in the order the rows first have them.
    pub(super) groups: Vec<Vec<String>>,
}

impl LabelRouter {
    /// Rows of `file` by label column `col` (named `column`); `split`: the delimiter of several
    /// labels in one value.
    pub(super) fn new(
        col: usize,
        split: Option<char>,
        given: Vec<String>,
        column: &str,
        file: &Path,
    ) -> Self {
        Self {
            col,
            split,
            given,
            column: column.to_string(),
            file: file.to_path_buf(),
            cache: HashMap::new(),
            groups: Vec::new(),
        }
    }

    /// The group of each row of `b`, whose first row is row `first_row` of the file (counted
    /// from 0, the header not counted).
    pub(super) fn route(&mut self, b: &RecordBatch, first_row: u64) -> Result<Vec<u32>> {
        let values = arrow::compute::cast(b.column(self.col), &DataType::Utf8)?;
        let values = values.as_string::<i32>();
        let mut out = Vec::with_capacity(b.num_rows());
        for i in 0..b.num_rows() {
            let raw = match values.is_null(i) {
                true => "",
                false => values.value(i),
            };
            let group = match self.cache.get(raw) {
                Some(&g) => g,
                None => {
                    let labels = self.labels(raw, first_row + i as u64 + 1)?;
                    let g = match self.groups.iter().position(|l| *l == labels) {
                        Some(g) => g as u32,
                        None => {
                            self.groups.push(labels);
                            (self.groups.len() - 1) as u32
                        }
                    };
                    self.cache.insert(raw.to_string(), g);
                    g
                }
            };
            out.push(group);
        }
        Ok(out)
    }

    fn labels(&self, raw: &str, row: u64) -> Result<Vec<String>> {
        let parts: Vec<&str> = match self.split {
            Some(d) => raw.split(d).collect(),
            None => vec![raw],
        };
        let mut out: Vec<String> = Vec::new();
        for l in parts.into_iter().map(str::trim).filter(|l| !l.is_empty()) {
            if l.contains(':') {
                return Err(Error::input(
                    &self.file,
                    format!(
                        "row {row}: label `{l}` (column `{}`) holds ':', which no label may",
                        self.column
                    ),
                ));
            }
            if !out.iter().any(|o| o == l) {
                out.push(l.to_string());
            }
        }
        for l in &self.given {
            if !out.contains(l) {
                out.push(l.clone());
            }
        }
        if out.is_empty() {
            return Err(Error::input(
                &self.file,
                format!(
                    "row {row}: no label (column `{}` is empty and the --node gives none)",
                    self.column
                ),
            ));
        }
        Ok(out)
    }
}

/// One end of a relationship file: its column and the node tables it can be in, with their
/// keys where there are several.
#[derive(Clone)]
pub(super) struct EndRoute {
    pub(super) col: usize,
    pub(super) column: String,
    /// What names the end's tables, for messages (`label Place`, `ID space Place`).
    pub(super) end: String,
    pub(super) tables: Vec<String>,
    pub(super) keys: Vec<Arc<KeySet>>,
}

impl EndRoute {
    /// The table (an index into `tables`) each row's end is in.
    fn tables_of(&self, b: &RecordBatch, first_row: u64, file: &Path) -> Result<Vec<u32>> {
        let n = b.num_rows();
        if self.keys.len() < 2 {
            return Ok(vec![0; n]);
        }
        let integer = matches!(self.keys[0].as_ref(), KeySet::Int(_));
        let to = match integer {
            true => DataType::Int64,
            false => DataType::Utf8,
        };
        let col = arrow::compute::cast(b.column(self.col), &to)?;
        let (ints, texts) = (
            col.as_primitive_opt::<Int64Type>(),
            col.as_string_opt::<i32>(),
        );
        let shown = |i: usize| match (ints, texts) {
            (Some(a), _) => a.value(i).to_string(),
            (_, Some(a)) => format!("'{}'", a.value(i)),
            _ => String::new(),
        };
        let mut out = Vec::with_capacity(n);
        for i in 0..n {
            let row = first_row + i as u64 + 1;
            if col.is_null(i) {
                return Err(Error::input(
                    file,
                    format!("row {row}: `{}` is empty", self.column),
                ));
            }
            let mut found: Option<usize> = None;
            for (t, keys) in self.keys.iter().enumerate() {
                let holds = match (keys.as_ref(), ints, texts) {
                    (KeySet::Int(k), Some(a), _) => k.binary_search(&a.value(i)).is_ok(),
                    (KeySet::Text(k), _, Some(a)) => {
                        let v = a.value(i);
                        k.binary_search_by(|x| x.as_str().cmp(v)).is_ok()
                    }
                    _ => false,
                };
                if !holds {
                    continue;
                }
                if let Some(other) = found {
                    return Err(Error::input(
                        file,
                        format!(
                            "row {row}: `{}` {} is a key of both {} and {} ({}); a key must say \
                             which table holds it",
                            self.column,
                            shown(i),
                            self.tables[other],
                            self.tables[t],
                            self.end
                        ),
                    ));
                }
                found = Some(t);
            }
            match found {
                Some(t) => out.push(t as u32),
                None => {
                    return Err(Error::input(
                        file,
                        format!(
                            "row {row}: `{}` {} is in no node table of {} ({})",
                            self.column,
                            shown(i),
                            self.end,
                            self.tables.join(", ")
                        ),
                    ))
                }
            }
        }
        Ok(out)
    }
}

/// The relationship table a row goes to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct RelGroup {
    pub(super) rel_type: String,
    pub(super) from: String,
    pub(super) to: String,
}

/// Each row's type (its `:TYPE`, else the `--rel`'s) and the tables holding its ends.
#[derive(Clone)]
pub(super) struct RelRouter {
    /// The `:TYPE` column: its index and name.
    type_col: Option<(usize, String)>,
    given: String,
    ends: [EndRoute; 2],
    file: PathBuf,
    types: HashMap<String, u32>,
    ids: HashMap<(u32, u32, u32), u32>,
    /// The tables seen, in the order the rows first go to them.
    pub(super) groups: Vec<RelGroup>,
}

impl RelRouter {
    pub(super) fn new(
        type_col: Option<(usize, String)>,
        given: String,
        ends: [EndRoute; 2],
        file: &Path,
    ) -> Self {
        Self {
            type_col,
            given,
            ends,
            file: file.to_path_buf(),
            types: HashMap::new(),
            ids: HashMap::new(),
            groups: Vec::new(),
        }
    }

    /// Reads the columns it needs as the first ones of a batch: returns the file's columns to
    /// read, in that order.
    pub(super) fn narrow(&mut self) -> Vec<usize> {
        let mut cols = Vec::new();
        if let Some((c, _)) = &mut self.type_col {
            cols.push(*c);
            *c = cols.len() - 1;
        }
        for e in &mut self.ends {
            cols.push(e.col);
            e.col = cols.len() - 1;
        }
        cols
    }

    /// The group of each row of `b`, whose first row is row `first_row` of the file.
    pub(super) fn route(&mut self, b: &RecordBatch, first_row: u64) -> Result<Vec<u32>> {
        let from = self.ends[0].tables_of(b, first_row, &self.file)?;
        let to = self.ends[1].tables_of(b, first_row, &self.file)?;
        let types = match &self.type_col {
            Some((c, _)) => Some(arrow::compute::cast(b.column(*c), &DataType::Utf8)?),
            None => None,
        };
        let types = types.as_ref().map(|a| a.as_string::<i32>());
        let mut out = Vec::with_capacity(b.num_rows());
        for i in 0..b.num_rows() {
            let own = types
                .filter(|a| a.is_valid(i))
                .map(|a| a.value(i).trim())
                .filter(|t| !t.is_empty());
            let t = match own {
                Some(t) => t,
                None if !self.given.is_empty() => self.given.as_str(),
                None => {
                    let column = self.type_col.as_ref().map_or("", |(_, n)| n.as_str());
                    return Err(Error::input(
                        &self.file,
                        format!(
                            "row {}: no type (`{column}` is empty and the --rel gives none)",
                            first_row + i as u64 + 1
                        ),
                    ));
                }
            };
            let ty = match self.types.get(t) {
                Some(&ty) => ty,
                None => {
                    let ty = self.types.len() as u32;
                    self.types.insert(t.to_string(), ty);
                    ty
                }
            };
            let key = (ty, from[i], to[i]);
            let group = match self.ids.get(&key) {
                Some(&g) => g,
                None => {
                    let g = self.groups.len() as u32;
                    self.groups.push(RelGroup {
                        rel_type: t.to_string(),
                        from: self.ends[0].tables[from[i] as usize].clone(),
                        to: self.ends[1].tables[to[i] as usize].clone(),
                    });
                    self.ids.insert(key, g);
                    g
                }
            };
            out.push(group);
        }
        Ok(out)
    }
}

/// Which rows of a file one table takes.
#[derive(Clone)]
pub(super) enum Route {
    Labels(LabelRouter, Vec<String>),
    Rels(RelRouter, RelGroup),
}

impl Route {
    fn mask(&mut self, b: &RecordBatch, first_row: u64) -> Result<BooleanArray> {
        let (groups, hits): (Vec<u32>, Vec<bool>) = match self {
            Route::Labels(r, want) => {
                let g = r.route(b, first_row)?;
                (g, r.groups.iter().map(|l| *l == *want).collect())
            }
            Route::Rels(r, want) => {
                let g = r.route(b, first_row)?;
                (g, r.groups.iter().map(|l| *l == *want).collect())
            }
        };
        Ok(BooleanArray::from(
            groups
                .iter()
                .map(|&g| hits[g as usize])
                .collect::<Vec<bool>>(),
        ))
    }
}

/// The rows of `inner` one table takes (all, or those its route sends it), with the columns
/// `keep`.
pub(super) struct Split {
    inner: Reader,
    route: Option<Route>,
    keep: Vec<usize>,
    schema: SchemaRef,
    file: PathBuf,
    rows: u64,
    done: bool,
}

impl Split {
    pub(super) fn new(
        inner: Reader,
        route: Option<Route>,
        keep: Vec<usize>,
        file: &Path,
    ) -> Result<Self> {
        let schema = Arc::new(inner.schema().project(&keep)?);
        Ok(Self {
            inner,
            route,
            keep,
            schema,
            file: file.to_path_buf(),
            rows: 0,
            done: false,
        })
    }

    fn batch(&mut self) -> Result<Option<RecordBatch>> {
        loop {
            let Some(b) = self.inner.next() else {
                return Ok(None);
            };
            let b = b.map_err(|e| from_arrow(e, &self.file))?;
            let first = self.rows;
            self.rows += b.num_rows() as u64;
            let b = match &mut self.route {
                None => b,
                Some(route) => {
                    let mask = route.mask(&b, first)?;
                    arrow::compute::filter_record_batch(&b, &mask)?
                }
            };
            if b.num_rows() > 0 || self.route.is_none() {
                return Ok(Some(b.project(&self.keep)?));
            }
        }
    }
}

impl Iterator for Split {
    type Item = std::result::Result<RecordBatch, ArrowError>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.done {
            return None;
        }
        match self.batch() {
            Ok(b) => b.map(Ok),
            Err(e) => {
                self.done = true;
                Some(Err(to_arrow(e)))
            }
        }
    }
}

impl RecordBatchReader for Split {
    fn schema(&self) -> SchemaRef {
        self.schema.clone()
    }
}
