//! `lance-csr import`: CSV or Parquet files to Lance datasets plus a graph.toml.
//!
//! Files are streamed, never read whole: a CSV file's header and first rows decide its
//! columns' types (or its neo4j-admin header declares them), then each table reads its file
//! anew as it is written. A file whose rows go to several tables (by a label column, a
//! `:TYPE` column, or ends that several node tables share) is read once more first, to find
//! those tables before anything is written.

mod csv_file;
mod neo4j_header;
mod route;
mod source;

use self::csv_file::CsvFormat;
use self::route::{EndRoute, KeySet, LabelRouter, RelGroup, RelRouter, Route, Split};
use self::source::{Role, Source};
use super::lance_table::stored_names;
use super::swap::Replacement;
use super::write_reader;
use crate::config::{GraphConfig, NodeTable, RelTable};
use crate::error::{Error, Result};
use arrow::array::{RecordBatch, RecordBatchReader};
use arrow::datatypes::{DataType, SchemaRef};
use arrow::error::ArrowError;
use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

/// One node file: `LABEL[,LABEL..][:IDCOL]=FILE`, or `=FILE` where a column gives each row's
/// labels.
#[derive(Debug, Clone)]
pub struct NodeSpec {
    /// The table's name (what relationship files name as their ends): its first label. Empty
    /// where the file's rows name their labels (`:LABEL`, `--node-label-column`).
    pub label: String,
    /// Its other labels (`Post,Message`: every post is a message too).
    pub extra_labels: Vec<String>,
    /// The id column: `None` takes a neo4j-admin header's `:ID` field, else `id`.
    pub id: Option<String>,
    pub file: PathBuf,
    format: CsvFormat,
    label_column: Option<String>,
}

/// One relationship file: `TYPE[:FROM:TO[:SRCCOL:DSTCOL]]=FILE`.
#[derive(Debug, Clone)]
pub struct RelSpec {
    /// Its type; empty where a `:TYPE` column gives each row's.
    pub rel_type: String,
    /// The labels of its ends; `None`: the ID spaces its neo4j-admin header names.
    pub from: Option<String>,
    pub to: Option<String>,
    /// The end columns; `None`: the header's `:START_ID` / `:END_ID` fields, else `src` / `dst`.
    pub src: Option<String>,
    pub dst: Option<String>,
    pub file: PathBuf,
    format: CsvFormat,
}

impl NodeSpec {
    pub fn parse(s: &str) -> Result<Self> {
        let (lhs, file) = s.split_once('=').ok_or_else(|| {
            Error::Other(format!("--node {s}: expected LABEL[,LABEL..][:IDCOL]=FILE"))
        })?;
        let mut parts = lhs.split(':');
        let labels: Vec<String> = (parts.next().unwrap_or_default().split(','))
            .map(|l| l.trim().to_string())
            .collect();
        let id = parts.next().map(|id| id.trim().to_string());
        // `=FILE` alone: the rows name their labels.
        let unlabelled = labels.len() == 1 && labels[0].is_empty();
        if !unlabelled && labels.iter().any(String::is_empty) {
            return Err(Error::Other(format!(
                "--node {s}: empty label (labels are separated by `,`)"
            )));
        }
        if id.as_deref() == Some("") {
            return Err(Error::Other(format!("--node {s}: empty id column")));
        }
        let mut labels = labels.into_iter();
        Ok(Self {
            label: labels.next().unwrap_or_default(),
            extra_labels: labels.collect(),
            id,
            file: file.into(),
            format: CsvFormat::default(),
            label_column: None,
        })
    }

    /// Reads a CSV file with these delimiters: between fields (`,` by default), and between the
    /// values of an array field or the labels of a `:LABEL` field (`;`).
    pub fn with_csv(mut self, delimiter: u8, array_delimiter: char) -> Self {
        self.format = CsvFormat {
            delimiter,
            array_delimiter,
        };
        self
    }

    /// Takes each row's label from column `column` where the file has one: its rows become a
    /// table per label (the labels given here added to each).
    pub fn with_label_column(mut self, column: Option<String>) -> Self {
        self.label_column = column;
        self
    }

    /// Its labels as given.
    fn labels(&self) -> Vec<String> {
        match self.label.is_empty() {
            true => Vec::new(),
            false => std::iter::once(&self.label)
                .chain(&self.extra_labels)
                .cloned()
                .collect(),
        }
    }
}

impl RelSpec {
    pub fn parse(s: &str) -> Result<Self> {
        let usage = || {
            Error::Other(format!(
                "--rel {s}: expected TYPE[:FROM:TO[:SRCCOL:DSTCOL]]=FILE"
            ))
        };
        let (lhs, file) = s.split_once('=').ok_or_else(usage)?;
        let parts: Vec<String> = lhs.split(':').map(|p| p.trim().to_string()).collect();
        let (ends, columns) = match parts.len() {
            1 => (None, None),
            3 => (Some((&parts[1], &parts[2])), None),
            5 => (Some((&parts[1], &parts[2])), Some((&parts[3], &parts[4]))),
            _ => return Err(usage()),
        };
        let empty =
            |p: Option<(&String, &String)>| p.is_some_and(|(a, b)| a.is_empty() || b.is_empty());
        if empty(ends) || empty(columns) {
            return Err(usage());
        }
        Ok(Self {
            rel_type: parts[0].clone(),
            from: ends.map(|e| e.0.clone()),
            to: ends.map(|e| e.1.clone()),
            src: columns.map(|c| c.0.clone()),
            dst: columns.map(|c| c.1.clone()),
            file: file.into(),
            format: CsvFormat::default(),
        })
    }

    /// Reads a CSV file with these delimiters (see [`NodeSpec::with_csv`]).
    pub fn with_csv(mut self, delimiter: u8, array_delimiter: char) -> Self {
        self.format = CsvFormat {
            delimiter,
            array_delimiter,
        };
        self
    }

    /// The spec as messages name it.
    fn who(&self) -> String {
        match self.rel_type.is_empty() {
            true => format!("={}", self.file.display()),
            false => self.rel_type.clone(),
        }
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

type Reader = Box<dyn RecordBatchReader + Send>;

/// Our error through Arrow's reader interface (Lance pulls a file's batches), kept whole.
fn to_arrow(e: Error) -> ArrowError {
    ArrowError::ExternalError(Box::new(e))
}

/// An error a reader of `file` returned: ours as it was, Arrow's as the file's.
fn from_arrow(e: ArrowError, file: &Path) -> Error {
    match e {
        ArrowError::ExternalError(inner) => match inner.downcast::<Error>() {
            Ok(ours) => *ours,
            Err(other) => Error::input(file, other),
        },
        other => Error::input(file, other),
    }
}

/// A node table to write: rows of one file (all of them, or those of one label set).
struct NodeOut {
    table: String,
    source: Arc<Source>,
    route: Option<Route>,
    keep: Vec<usize>,
}

/// A relationship table to write (the one at the same place in the config).
struct RelOut {
    source: Arc<Source>,
    route: Option<Route>,
    keep: Vec<usize>,
}

/// Every input checked and every table found: the graph's config and where each table's rows
/// come from.
struct Plan {
    cfg: GraphConfig,
    nodes: Vec<NodeOut>,
    rels: Vec<RelOut>,
}

/// A node table as planning knows it.
struct TableInfo {
    labels: Vec<String>,
    source: Arc<Source>,
    id_col: usize,
    id_type: DataType,
    /// Its keys, read once an end that several tables share needs them.
    keys: Option<Arc<KeySet>>,
}

#[derive(Default)]
struct Planner {
    cfg: GraphConfig,
    names: DatasetNames,
    tables: BTreeMap<String, TableInfo>,
    /// ID space -> the node tables whose ids are in it.
    spaces: HashMap<String, Vec<String>>,
    nodes: Vec<NodeOut>,
    rels: Vec<RelOut>,
    /// Some node file has the column `--node-label-column` names.
    label_column_found: bool,
}

/// Checks every input (files open, id and endpoint columns exist with key types, endpoint
/// types match the ends' ids, relationships name imported labels or ID spaces; a file split
/// into tables is read through, its rows checked) before anything is written, and picks
/// dataset names that are plain file names (see [`safe_name`]) and stay distinct on a
/// case-insensitive file system.
fn plan(nodes: &[NodeSpec], rels: &[RelSpec]) -> Result<Plan> {
    let mut p = Planner::default();
    for n in nodes {
        p.node_file(n)?;
    }
    if let Some(column) = nodes.iter().find_map(|n| n.label_column.as_deref()) {
        if !p.label_column_found {
            return Err(Error::Other(format!(
                "--node-label-column {column}: no node file has a column `{column}`"
            )));
        }
    }
    for r in rels {
        p.rel_file(r)?;
    }
    p.cfg.validate()?;
    Ok(Plan {
        cfg: p.cfg,
        nodes: p.nodes,
        rels: p.rels,
    })
}

impl Planner {
    fn node_file(&mut self, n: &NodeSpec) -> Result<()> {
        let source = Arc::new(Source::of(&n.file, &n.format)?);
        let relationship = |r: &Role| matches!(r, Role::Start(_) | Role::End(_) | Role::Type);
        if !source.with_role(relationship).is_empty() {
            return Err(Error::input(
                &n.file,
                "a node file has no :START_ID, :END_ID or :TYPE field (a relationship file's)",
            ));
        }
        let (id_col, space) = node_id(n, &source)?;
        let id_type = column_type(&source.schema, source.name(id_col), &n.file, "id")?;
        let named = n.label_column.as_deref().and_then(|c| source.column(c));
        self.label_column_found |= named.is_some();
        let label_col = (source.with_role(|r| *r == Role::Label).first().copied()).or(named);
        let keep: Vec<usize> = (0..source.roles.len())
            .filter(|&i| Some(i) != label_col)
            .collect();
        let given = n.labels();
        let table = |labels: Vec<String>, route, keys| NewTable {
            labels,
            source: source.clone(),
            id_col,
            id_type: id_type.clone(),
            route,
            keep: keep.clone(),
            keys,
            space: space.clone(),
        };
        let Some(col) = label_col else {
            if given.is_empty() {
                return Err(Error::Other(format!(
                    "--node ={}: no label: give one (LABEL=FILE), or each row's in a :LABEL \
                     column or the column --node-label-column names",
                    n.file.display()
                )));
            }
            if self.tables.contains_key(&n.label) {
                return Err(given_twice(n));
            }
            self.add_table(table(given, None, None));
            return Ok(());
        };
        // One pass over the ids and labels: the label sets, and each one's keys.
        let split = (source.roles[col] == Role::Label).then_some(n.format.array_delimiter);
        let mut scan = LabelRouter::new(1, split, given.clone(), source.name(col), &n.file);
        let mut keys: Vec<KeySet> = Vec::new();
        let mut row = 0u64;
        for b in source.open_columns(&[id_col, col])? {
            let b = b.map_err(|e| from_arrow(e, &n.file))?;
            let groups = scan.route(&b, row)?;
            row += b.num_rows() as u64;
            keys.resize_with(scan.groups.len(), || KeySet::new(id_type.is_integer()));
            KeySet::add_grouped(&mut keys, b.column(0), &groups)?;
        }
        let router = LabelRouter::new(col, split, given.clone(), source.name(col), &n.file);
        if scan.groups.is_empty() && !given.is_empty() {
            // No rows: the table the --node names, empty.
            scan.groups.push(given.clone());
            keys.push(KeySet::new(id_type.is_integer()));
        }
        for (labels, mut set) in scan.groups.into_iter().zip(keys) {
            if self.tables.contains_key(&labels[0]) {
                return Err(match given.first() == Some(&labels[0]) {
                    true => given_twice(n),
                    false => Error::input(
                        &n.file,
                        format!(
                            "rows labelled {} make a table `{}`, given twice (the first label \
                             of a row names its table)",
                            labels.join(";"),
                            labels[0]
                        ),
                    ),
                });
            }
            set.seal();
            let route = Route::Labels(router.clone(), labels.clone());
            self.add_table(table(labels, Some(route), Some(Arc::new(set))));
        }
        Ok(())
    }

    fn add_table(&mut self, t: NewTable) {
        let name = t.labels[0].clone();
        let columns = stored_names(t.keep.iter().map(|&i| t.source.name(i)));
        self.cfg.nodes.insert(
            name.clone(),
            NodeTable {
                source: self.names.unique(safe_name(&name)),
                id: t.source.name(t.id_col).to_string(),
                id_hidden: false,
                columns,
                labels: (t.labels.len() > 1).then(|| t.labels.clone()),
            },
        );
        if let Some(space) = t.space {
            self.spaces.entry(space).or_default().push(name.clone());
        }
        self.tables.insert(
            name.clone(),
            TableInfo {
                labels: t.labels,
                source: t.source.clone(),
                id_col: t.id_col,
                id_type: t.id_type,
                keys: t.keys,
            },
        );
        self.nodes.push(NodeOut {
            table: name,
            source: t.source,
            route: t.route,
            keep: t.keep,
        });
    }

    fn rel_file(&mut self, r: &RelSpec) -> Result<()> {
        let source = Arc::new(Source::of(&r.file, &r.format)?);
        super::check_row_id_free(source.schema.fields().iter().map(|f| f.name().as_str()))
            .map_err(|e| Error::input(&r.file, e))?;
        if !(source.with_role(|r| matches!(r, Role::Id(_) | Role::Label))).is_empty() {
            return Err(Error::input(
                &r.file,
                "a relationship file has no :ID or :LABEL field (a node file's)",
            ));
        }
        let start = end_column(&source, r.src.as_deref(), "src", start_space, ":START_ID")?;
        let end = end_column(&source, r.dst.as_deref(), "dst", end_space, ":END_ID")?;
        let type_col = source.with_role(|r| *r == Role::Type).first().copied();
        if r.rel_type.is_empty() && type_col.is_none() {
            return Err(Error::Other(format!(
                "--rel {}: no type: give one (TYPE=FILE), or each row's in a :TYPE column",
                r.who()
            )));
        }
        let from = self.end(r, &source, start, r.from.as_deref(), "start")?;
        let to = self.end(r, &source, end, r.to.as_deref(), "end")?;
        let keep: Vec<usize> = (0..source.roles.len())
            .filter(|&i| Some(i) != type_col)
            .collect();
        let table = |group: RelGroup, route| NewRel {
            group,
            source: source.clone(),
            src: from.column.clone(),
            dst: to.column.clone(),
            route,
            keep: keep.clone(),
        };
        if type_col.is_none() && from.tables.len() == 1 && to.tables.len() == 1 {
            let group = RelGroup {
                rel_type: r.rel_type.clone(),
                from: from.tables[0].clone(),
                to: to.tables[0].clone(),
            };
            self.add_rel(table(group, None));
            return Ok(());
        }
        // One pass over the types and ends: the tables the rows go to.
        let type_col = type_col.map(|i| (i, source.name(i).to_string()));
        let ends = [from.clone(), to.clone()];
        let router = RelRouter::new(type_col, r.rel_type.clone(), ends, &r.file);
        let mut scan = router.clone();
        let mut row = 0u64;
        for b in source.open_columns(&scan.narrow())? {
            let b = b.map_err(|e| from_arrow(e, &r.file))?;
            scan.route(&b, row)?;
            row += b.num_rows() as u64;
        }
        for group in scan.groups {
            let route = Route::Rels(router.clone(), group.clone());
            self.add_rel(table(group, Some(route)));
        }
        Ok(())
    }

    fn add_rel(&mut self, t: NewRel) {
        let g = t.group;
        let name = (self.names).unique(format!(
            "{}_{}_{}",
            safe_name(&g.from),
            safe_name(&g.rel_type),
            safe_name(&g.to)
        ));
        self.cfg.relationships.push(RelTable {
            rel_type: g.rel_type,
            from: g.from,
            to: g.to,
            source: name,
            src: t.src,
            dst: t.dst,
            columns: stored_names(t.keep.iter().map(|&i| t.source.name(i))),
        });
        self.rels.push(RelOut {
            source: t.source,
            route: t.route,
            keep: t.keep,
        });
    }

    /// One end of relationship file `r`: column `col` (with the ID space its header names),
    /// the tables it can be in (carrying label `label`, in that ID space), their keys where
    /// there are several.
    fn end(
        &mut self,
        r: &RelSpec,
        source: &Source,
        (col, space): (usize, Option<String>),
        label: Option<&str>,
        which: &str,
    ) -> Result<EndRoute> {
        let column = source.name(col).to_string();
        let t = column_type(&source.schema, &column, &r.file, "endpoint")?;
        let tables = self.resolve(r, label, space.as_deref(), which)?;
        for table in &tables {
            let key = &self.tables[table].id_type;
            if t.is_integer() != key.is_integer() {
                return Err(Error::Other(format!(
                    "{}: endpoint column `{column}` is {t} but the ids of {table} are {key}",
                    r.file.display()
                )));
            }
        }
        let keys = match tables.len() {
            1 => Vec::new(),
            _ => (tables.iter())
                .map(|t| self.keys(t))
                .collect::<Result<Vec<_>>>()?,
        };
        let end = match (label, space) {
            (Some(l), _) => format!("label {l}"),
            (None, Some(s)) => format!("ID space {s}"),
            (None, None) => String::new(),
        };
        Ok(EndRoute {
            col,
            column,
            end,
            tables,
            keys,
        })
    }

    /// The node tables one end of `r` can be in: those carrying label `label` (FROM / TO of the
    /// --rel), within ID space `space` where the header names one (the tables whose ids are in
    /// it, else those carrying a label of that name).
    fn resolve(
        &self,
        r: &RelSpec,
        label: Option<&str>,
        space: Option<&str>,
        which: &str,
    ) -> Result<Vec<String>> {
        let labelled = |l: &str| -> Vec<String> {
            (self.tables.iter())
                .filter(|(_, t)| t.labels.iter().any(|x| x == l))
                .map(|(name, _)| name.clone())
                .collect()
        };
        let by_label = match label {
            None => None,
            Some(l) => match labelled(l) {
                ts if ts.is_empty() => {
                    return Err(Error::Other(format!(
                        "--rel {}: label `{l}` is not imported (give it a --node)",
                        r.who()
                    )))
                }
                ts => Some(ts),
            },
        };
        let by_space = match space {
            None => None,
            Some(s) => match self.spaces.get(s).cloned().unwrap_or_else(|| labelled(s)) {
                ts if ts.is_empty() => {
                    return Err(Error::input(
                        &r.file,
                        format!(
                            "its {which} is in the ID space `{s}`, which no node file's ids \
                             are in (nor is `{s}` a label)"
                        ),
                    ))
                }
                ts => Some(ts),
            },
        };
        match (by_label, by_space) {
            (Some(l), Some(s)) => {
                let both: Vec<String> = l.into_iter().filter(|t| s.contains(t)).collect();
                match both.is_empty() {
                    true => Err(Error::input(
                        &r.file,
                        format!(
                            "no table labelled {} holds ids of the ID space `{}` of its {which}",
                            label.unwrap_or_default(),
                            space.unwrap_or_default()
                        ),
                    )),
                    false => Ok(both),
                }
            }
            (Some(ts), None) | (None, Some(ts)) => Ok(ts),
            (None, None) => Err(Error::Other(format!(
                "--rel {}: give its ends (TYPE:FROM:TO=FILE), or name their ID spaces in the \
                 file's header (:START_ID(Space), :END_ID(Space))",
                r.who()
            ))),
        }
    }

    /// The keys of node table `name`, read from its file the first time.
    fn keys(&mut self, name: &str) -> Result<Arc<KeySet>> {
        let Some(t) = self.tables.get_mut(name) else {
            return Err(Error::Internal(format!("import: no node table {name}")));
        };
        if let Some(k) = &t.keys {
            return Ok(k.clone());
        }
        let mut set = KeySet::new(t.id_type.is_integer());
        for b in t.source.open_columns(&[t.id_col])? {
            let b = b.map_err(|e| from_arrow(e, &t.source.file))?;
            set.add(b.column(0))?;
        }
        set.seal();
        let set = Arc::new(set);
        t.keys = Some(set.clone());
        Ok(set)
    }
}

/// A node table to add.
struct NewTable {
    labels: Vec<String>,
    source: Arc<Source>,
    id_col: usize,
    id_type: DataType,
    route: Option<Route>,
    keep: Vec<usize>,
    keys: Option<Arc<KeySet>>,
    space: Option<String>,
}

/// A relationship table to add.
struct NewRel {
    group: RelGroup,
    source: Arc<Source>,
    src: String,
    dst: String,
    route: Option<Route>,
    keep: Vec<usize>,
}

/// The id column of node file `n` (the header's `:ID` field, else the one the --node names,
/// else `id`) and the ID space the header puts it in.
fn node_id(n: &NodeSpec, source: &Source) -> Result<(usize, Option<String>)> {
    let ids = source.with_role(|r| matches!(r, Role::Id(_)));
    match ids.as_slice() {
        [] => {
            let name = n.id.as_deref().unwrap_or("id");
            Ok((column_index(&source.schema, name, &n.file, "id")?, None))
        }
        [i] => {
            let name = source.name(*i);
            if let Some(given) = n.id.as_deref().filter(|g| *g != name) {
                return Err(Error::Other(format!(
                    "--node {}: the header's :ID field is `{name}`, not `{given}`",
                    n.labels().join(",")
                )));
            }
            let space = match &source.roles[*i] {
                Role::Id(s) => Some(s.clone()),
                _ => None,
            };
            Ok((*i, space))
        }
        _ => Err(Error::input(
            &n.file,
            "several :ID fields; a node file has one",
        )),
    }
}

fn start_space(r: &Role) -> Option<&String> {
    match r {
        Role::Start(s) => Some(s),
        _ => None,
    }
}

fn end_space(r: &Role) -> Option<&String> {
    match r {
        Role::End(s) => Some(s),
        _ => None,
    }
}

/// One end column of relationship file `source` (the header's `field`, else the one the --rel
/// names, else `default`) and the ID space the header puts it in.
fn end_column(
    source: &Source,
    given: Option<&str>,
    default: &str,
    space_of: fn(&Role) -> Option<&String>,
    field: &str,
) -> Result<(usize, Option<String>)> {
    let fields = source.with_role(|r| space_of(r).is_some());
    match fields.as_slice() {
        [] => {
            let name = given.unwrap_or(default);
            Ok((
                column_index(&source.schema, name, &source.file, "endpoint")?,
                None,
            ))
        }
        [i] => {
            let name = source.name(*i);
            if let Some(given) = given.filter(|g| *g != name) {
                return Err(Error::Other(format!(
                    "{}: the header's {field} field is `{name}`, not `{given}`",
                    source.file.display()
                )));
            }
            Ok((*i, space_of(&source.roles[*i]).cloned()))
        }
        _ => Err(Error::input(
            &source.file,
            format!("several {field} fields; a relationship has one"),
        )),
    }
}

/// `--node Place,City` after another `Place` table: the first label names the table.
fn given_twice(n: &NodeSpec) -> Error {
    let labels = n.labels();
    let mut message = format!(
        "--node {}: table `{}` given twice",
        labels.join(","),
        n.label
    );
    if let Some(other) = n.extra_labels.first() {
        let mut swapped = labels.clone();
        swapped.swap(0, 1);
        message += &format!(
            " (the first label names the table; write {} to make a {other} table that is also \
             a {})",
            swapped.join(","),
            n.label
        );
    }
    Error::Other(message)
}

/// The index of column `col` of `file`.
fn column_index(schema: &SchemaRef, col: &str, file: &Path, what: &str) -> Result<usize> {
    schema.index_of(col).map_err(|_| {
        Error::Other(format!(
            "{}: no {what} column `{col}` (columns: {})",
            file.display(),
            column_list(schema)
        ))
    })
}

/// The type of key column `col` of `file`: an integer or a string.
fn column_type(schema: &SchemaRef, col: &str, file: &Path, what: &str) -> Result<DataType> {
    let t = schema
        .field(column_index(schema, col, file, what)?)
        .data_type()
        .clone();
    if !(t.is_integer() || matches!(t, DataType::Utf8 | DataType::LargeUtf8)) {
        return Err(Error::Other(format!(
            "{}: {what} column `{col}` is {t} (an integer or a string is needed)",
            file.display()
        )));
    }
    Ok(t)
}

/// An import checked and under way: every input is validated, and a folder beside `out`
/// receives the datasets (see [`super::swap`]). [`Import::commit`] puts it at `out` in one
/// step; dropping it instead removes it, leaving `out` as it was.
pub struct Import {
    plan: Plan,
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
        let plan = plan(nodes, rels)?;
        Ok(Self {
            plan,
            replacement: Replacement::begin(out)?,
        })
    }

    /// Converts every file to Lance datasets and writes the graph.toml, in the new folder;
    /// returns that graph.toml's path (to build indexes in the folder before it moves).
    /// Reports each file's columns (their types, what was dropped, warnings) as it starts it.
    pub async fn write(&mut self, progress: &mut (dyn FnMut(&str) + Send)) -> Result<PathBuf> {
        let dir = self.replacement.dir().to_path_buf();
        write_all(&dir, &mut self.plan, progress).await?;
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

/// Reports what the import made of `source`'s columns, once per file.
fn tell(
    told: &mut Option<Arc<Source>>,
    source: &Arc<Source>,
    progress: &mut (dyn FnMut(&str) + Send),
) {
    if told.as_ref().is_some_and(|t| Arc::ptr_eq(t, source)) {
        return;
    }
    for line in &source.report {
        progress(line);
    }
    *told = Some(source.clone());
}

async fn write_all(
    dir: &Path,
    plan: &mut Plan,
    progress: &mut (dyn FnMut(&str) + Send),
) -> Result<()> {
    let mut told = None;
    for out in &mut plan.nodes {
        tell(&mut told, &out.source, progress);
        let t = &plan.cfg.nodes[&out.table];
        let file = &out.source.file;
        let reader = Split::new(out.source.open()?, out.route.take(), out.keep.clone(), file)?;
        let rows = write_file(Box::new(reader), &t.columns, file, &dir.join(&t.source)).await?;
        progress(&format!(
            "node {:<16} {rows:>12} rows -> {}",
            out.table, t.source
        ));
    }
    for (out, t) in plan.rels.iter_mut().zip(&plan.cfg.relationships) {
        tell(&mut told, &out.source, progress);
        let file = &out.source.file;
        let reader = Split::new(out.source.open()?, out.route.take(), out.keep.clone(), file)?;
        let rows = write_file(Box::new(reader), &t.columns, file, &dir.join(&t.source)).await?;
        progress(&format!(
            "rel  {:<16} {rows:>12} rows -> {}",
            format!("{}({}->{})", t.rel_type, t.from, t.to),
            t.source
        ));
    }
    let path = dir.join("graph.toml");
    plan.cfg.origin = path.display().to_string();
    std::fs::write(&path, plan.cfg.to_toml()).map_err(|e| Error::io("write", path, e))?;
    Ok(())
}

/// Streams `reader` (of `file`) into a new Lance dataset at `dest`, the columns of `renamed`
/// (name -> stored name) under their stored names; returns the rows written.
async fn write_file(
    reader: Reader,
    renamed: &BTreeMap<String, String>,
    file: &Path,
    dest: &Path,
) -> Result<usize> {
    let rows = Arc::new(AtomicUsize::new(0));
    let failed = Arc::new(Mutex::new(None));
    let reader = Counting {
        schema: super::lance_table::stored_schema(&reader.schema(), renamed),
        inner: reader,
        rows: rows.clone(),
        failed: failed.clone(),
        file: file.to_path_buf(),
    };
    let written = write_reader(dest, reader).await;
    // A cell or key the reader refused, as it said it, not as Lance passed it on.
    if let Some(e) = failed.lock().ok().and_then(|mut e| e.take()) {
        return Err(e);
    }
    written.map_err(|e| Error::input(file, e))?;
    Ok(rows.load(Ordering::Relaxed))
}

/// A reader that counts the rows it hands out, its batches under `schema` (the columns'
/// stored names), and keeps the first error of `inner`.
struct Counting {
    inner: Reader,
    schema: SchemaRef,
    rows: Arc<AtomicUsize>,
    failed: Arc<Mutex<Option<Error>>>,
    file: PathBuf,
}

impl Iterator for Counting {
    type Item = std::result::Result<RecordBatch, ArrowError>;

    fn next(&mut self) -> Option<Self::Item> {
        Some(match self.inner.next()? {
            Ok(b) => {
                self.rows.fetch_add(b.num_rows(), Ordering::Relaxed);
                RecordBatch::try_new(self.schema.clone(), b.columns().to_vec())
            }
            Err(e) => {
                let e = from_arrow(e, &self.file);
                let shown = ArrowError::ExternalError(e.to_string().into());
                if let Ok(mut slot) = self.failed.lock() {
                    if slot.is_none() {
                        *slot = Some(e);
                    }
                }
                Err(shown)
            }
        })
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
