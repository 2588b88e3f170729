//! The opened graph: for each label and relationship table, its provider, key and properties.

use crate::config::{GraphConfig, IndexDecl, IndexKind, RelTable};
use crate::error::{Error, Result};
use crate::storage::{TableHandle, ROW_ID};
use arrow::array::RecordBatch;
use arrow::datatypes::{DataType, SchemaRef};
use std::collections::BTreeMap;

/// A node label's table.
#[derive(Debug, Clone)]
pub struct NodeInfo {
    /// The table's name in plans: its labels joined by `:` (what its nodes' label column
    /// holds).
    pub label: String,
    /// Every label its nodes carry.
    pub labels: Vec<String>,
    /// Its name in the configuration (`[nodes.Post]`), which relationships name as ends.
    pub name: String,
    pub table: TableHandle,
    /// Key column name (a property too, unless `key_hidden`).
    pub key: String,
    /// The key is a row identifier only (`NodeTable::id_hidden`).
    pub key_hidden: bool,
    pub key_type: DataType,
    /// Property columns (every column of the table), in table order.
    pub props: Vec<(String, DataType)>,
}

/// A relationship table.
#[derive(Debug, Clone)]
pub struct RelInfo {
    pub index: usize,
    pub cfg: RelTable,
    pub table: TableHandle,
    /// Property columns: every column but the endpoints.
    pub props: Vec<(String, DataType)>,
}

/// A graph's schema as its users see it ([`crate::Graph::schema`]).
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct GraphSchema {
    /// Per node table, by its name in the configuration: its labels, key column, rows and
    /// properties (the key among them unless hidden).
    pub labels: BTreeMap<String, LabelSchema>,
    /// One entry per relationship table (a type joining two labels).
    pub relationships: Vec<RelationshipSchema>,
}

#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct LabelSchema {
    /// Every label its nodes carry.
    pub labels: Vec<String>,
    pub key: String,
    pub rows: usize,
    pub properties: Vec<(String, DataType)>,
}

#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct RelationshipSchema {
    pub rel_type: String,
    pub from: String,
    pub to: String,
    pub rows: usize,
    pub properties: Vec<(String, DataType)>,
}

/// Everything the planner needs to know about the graph.
#[derive(Debug, Clone, Default)]
pub struct Catalog {
    /// The configuration as given (node tables by their configured names; `nodes` and the
    /// relationships' `cfg` name them by their labels).
    pub config: GraphConfig,
    pub nodes: BTreeMap<String, NodeInfo>,
    pub rels: Vec<RelInfo>,
}

fn is_key_type(t: &DataType) -> bool {
    matches!(
        t,
        DataType::Int8
            | DataType::Int16
            | DataType::Int32
            | DataType::Int64
            | DataType::UInt8
            | DataType::UInt16
            | DataType::UInt32
            | DataType::UInt64
            | DataType::Utf8
            | DataType::LargeUtf8
    )
}

/// The table an index searches.
#[derive(Debug, Clone, Copy)]
pub enum Indexed<'c> {
    Node(&'c NodeInfo),
    Rel(&'c RelInfo),
}

impl<'c> Indexed<'c> {
    /// The table's properties.
    pub fn props(&self) -> &'c [(String, DataType)] {
        match self {
            Indexed::Node(n) => &n.props,
            Indexed::Rel(r) => &r.props,
        }
    }
}

/// The number of values of a vector column's type (a fixed-size list of floats).
pub fn vector_dimension(t: &DataType) -> Option<usize> {
    match t {
        DataType::FixedSizeList(f, n)
            if matches!(
                f.data_type(),
                DataType::Float16 | DataType::Float32 | DataType::Float64
            ) =>
        {
            usize::try_from(*n).ok()
        }
        _ => None,
    }
}

impl Catalog {
    /// The state of every table (node tables, then relationship tables): equal for two
    /// catalogs over the same data.
    pub fn versions(&self) -> Vec<Option<u64>> {
        self.tables().map(|t| t.version).collect()
    }

    /// Every table's manifest file tag (see [`TableHandle::manifest_tag`]).
    pub fn manifest_tags(&self) -> Vec<Option<String>> {
        self.tables().map(|t| t.manifest_tag()).collect()
    }

    /// Every table: the node tables, then the relationship tables.
    pub fn tables(&self) -> impl Iterator<Item = &TableHandle> {
        (self.nodes.values().map(|n| &n.table)).chain(self.rels.iter().map(|r| &r.table))
    }

    /// The schema as users see it.
    pub fn schema(&self) -> GraphSchema {
        GraphSchema {
            labels: self
                .nodes
                .values()
                .map(|n| {
                    let info = LabelSchema {
                        labels: n.labels.clone(),
                        key: n.key.clone(),
                        rows: n.table.num_rows,
                        properties: n.props.clone(),
                    };
                    (n.name.clone(), info)
                })
                .collect(),
            relationships: self
                .rels
                .iter()
                .map(|r| RelationshipSchema {
                    rel_type: r.cfg.rel_type.clone(),
                    from: self.table_name(&r.cfg.from),
                    to: self.table_name(&r.cfg.to),
                    rows: r.table.num_rows,
                    properties: r.props.clone(),
                })
                .collect(),
        }
    }

    /// Opens every table of `config`; `memory` supplies in-memory tables by source name.
    pub async fn open(
        given: GraphConfig,
        memory: &mut BTreeMap<String, (SchemaRef, Vec<RecordBatch>)>,
    ) -> Result<Self> {
        let origin = if given.origin.is_empty() {
            "<builder>".to_string()
        } else {
            given.origin.clone()
        };
        // Relationships name their ends by the tables' labels (see below).
        let config = given.named_by_labels();
        let mut nodes = BTreeMap::new();
        for (name, n) in &given.nodes {
            let key = format!("nodes.{name}");
            let table = open_table(
                &given,
                &origin,
                &key,
                (&n.source, &n.columns),
                false,
                memory,
            )
            .await?;
            let key_type = key_type(&origin, &key, &n.id, &table)?;
            let props = table
                .schema
                .fields()
                .iter()
                .map(|f| (f.name().clone(), f.data_type().clone()))
                .collect();
            let table = with_key_statistics(table, vec![n.id.clone()]);
            // A table is named by its labels: a node's label column then names its table.
            let labels = n.labels_of(name);
            let label = crate::config::label_tag(&labels);
            nodes.insert(
                label.clone(),
                NodeInfo {
                    label,
                    labels,
                    name: name.clone(),
                    key: n.id.clone(),
                    key_hidden: n.id_hidden,
                    key_type,
                    props,
                    table,
                },
            );
        }
        let mut rels = Vec::new();
        for (i, r) in config.relationships.iter().enumerate() {
            let key = format!("relationships[{i}]");
            let table = open_table(
                &config,
                &origin,
                &key,
                (&r.source, &r.columns),
                true,
                memory,
            )
            .await?;
            for (k, col, label) in [("src", &r.src, &r.from), ("dst", &r.dst, &r.to)] {
                let at = format!("{key}.{k}");
                check_endpoint(&origin, &at, col, label, &nodes[label].key_type, &table)?;
            }
            let props = table
                .schema
                .fields()
                .iter()
                .filter(|f| f.name() != &r.src && f.name() != &r.dst && f.name() != ROW_ID)
                .map(|f| (f.name().clone(), f.data_type().clone()))
                .collect();
            rels.push(RelInfo {
                index: i,
                cfg: r.clone(),
                table: with_key_statistics(table, vec![r.src.clone(), r.dst.clone()]),
                props,
            });
        }
        let catalog = Self {
            config: given,
            nodes,
            rels,
        };
        catalog.check_version_exists()?;
        catalog.check_indexes(&origin)?;
        Ok(catalog)
    }

    /// Every declared index names a property of its table of the type its kind searches.
    fn check_indexes(&self, origin: &str) -> Result<()> {
        for (i, x) in self.config.indexes.iter().enumerate() {
            let (_, on) = self.index(&x.name).expect("validated: the table exists");
            let at = format!("indexes[{i}].column");
            let Some((_, t)) = on.props().iter().find(|(p, _)| p == &x.column) else {
                return Err(Error::config(
                    origin,
                    at,
                    format!("{} has no property `{}`", x.target(), x.column),
                ));
            };
            let fits = match x.kind {
                IndexKind::Vector => vector_dimension(t).is_some(),
                IndexKind::Fulltext => matches!(t, DataType::Utf8 | DataType::LargeUtf8),
            };
            if !fits {
                let wanted = match x.kind {
                    IndexKind::Vector => "a fixed-size list of floats (a Lance vector column)",
                    IndexKind::Fulltext => "a string",
                };
                return Err(Error::config(
                    origin,
                    at,
                    format!("`{}` of {} is {t}, not {wanted}", x.column, x.target()),
                ));
            }
        }
        Ok(())
    }

    /// The declared index named `name` and the table it searches.
    pub fn index(&self, name: &str) -> Option<(&IndexDecl, Indexed<'_>)> {
        let x = self.config.indexes.iter().find(|x| x.name == name)?;
        let on = match x.relationship_table(&self.config.relationships) {
            Some(i) => Indexed::Rel(self.rels.get(i)?),
            None => Indexed::Node(self.nodes.values().find(|n| n.name == x.table)?),
        };
        Some((x, on))
    }

    /// Read at a version number, some dataset must have that version: a number past every
    /// dataset's latest names no state the graph was in.
    fn check_version_exists(&self) -> Result<()> {
        let Some(crate::config::options::AsOf::Version(v)) = &self.config.as_of else {
            return Ok(());
        };
        let newest = self.tables().filter_map(|t| t.lance_version).max();
        match newest {
            Some(n) if n < *v => Err(Error::storage(format!(
                "the graph has no version {v}: its datasets' newest version is {n}"
            ))),
            _ => Ok(()),
        }
    }

    /// The configured name of the node table `tag` names.
    pub fn table_name(&self, tag: &str) -> String {
        self.nodes
            .get(tag)
            .map_or_else(|| tag.to_string(), |n| n.name.clone())
    }

    /// Whether some node table carries `label`.
    pub fn has_label(&self, label: &str) -> bool {
        self.nodes
            .values()
            .any(|n| n.labels.iter().any(|l| l == label))
    }

    /// The tables a node pattern's label test matches (every table when it has none).
    pub fn tables_for(&self, n: &cypher::ast::NodePattern) -> Vec<&NodeInfo> {
        let tables = self.nodes.values();
        tables.filter(|t| n.labels_match(&t.labels)).collect()
    }

    /// Every label of the graph, sorted.
    pub fn label_names(&self) -> Vec<String> {
        let mut v: Vec<String> = self.nodes.values().flat_map(|n| n.labels.clone()).collect();
        v.sort();
        v.dedup();
        v
    }

    /// The label expression that picks exactly the table `tag` out of this graph: its labels,
    /// and none of the labels of the tables that carry them and more.
    pub fn table_labels(
        &self,
        tag: &str,
        span: cypher::Span,
    ) -> (Vec<cypher::Ident>, Option<cypher::ast::LabelExpr>) {
        use cypher::ast::LabelExpr;
        let Some(info) = self.nodes.get(tag) else {
            return (vec![cypher::Ident::new(tag, span)], None);
        };
        let ident = |l: &str| cypher::Ident::new(l, span);
        let labels: Vec<cypher::Ident> = info.labels.iter().map(|l| ident(l)).collect();
        if info.labels.is_empty() {
            return (labels, Some(LabelExpr::Not(Box::new(LabelExpr::Any(span)))));
        }
        let mut extra: Vec<&String> = self
            .nodes
            .values()
            .filter(|o| o.label != info.label && info.labels.iter().all(|l| o.labels.contains(l)))
            .flat_map(|o| o.labels.iter().filter(|l| !info.labels.contains(l)))
            .collect();
        extra.sort();
        extra.dedup();
        let not = match extra.as_slice() {
            [] => None,
            [one] => Some(LabelExpr::Label(ident(one))),
            many => Some(LabelExpr::Or(
                many.iter().map(|l| LabelExpr::Label(ident(l))).collect(),
            )),
        };
        (labels, not.map(|e| LabelExpr::Not(Box::new(e))))
    }

    pub fn rel_types(&self) -> Vec<&str> {
        let mut v: Vec<&str> = self.rels.iter().map(|r| r.cfg.rel_type.as_str()).collect();
        v.sort();
        v.dedup();
        v
    }
}

/// The table with its provider wrapped to report distinct counts of `keys` (join estimates).
fn with_key_statistics(mut table: TableHandle, keys: Vec<String>) -> TableHandle {
    table.provider = std::sync::Arc::new(crate::storage::stats::KeyStatisticsProvider::new(
        table.provider,
        table.num_rows,
        keys,
    ));
    table
}

/// The key-statistics wrapper of a table's provider, if it has one.
pub fn key_statistics(
    table: &TableHandle,
) -> Option<&crate::storage::stats::KeyStatisticsProvider> {
    table.key_statistics()
}

async fn open_table(
    config: &GraphConfig,
    origin: &str,
    key: &str,
    (source, columns): (&str, &BTreeMap<String, String>),
    with_row_id: bool,
    memory: &mut BTreeMap<String, (SchemaRef, Vec<RecordBatch>)>,
) -> Result<TableHandle> {
    let table = match memory.get(source) {
        Some((schema, batches)) => {
            TableHandle::from_batches(source, schema.clone(), batches.clone(), with_row_id)?
        }
        None => TableHandle::open_lance(
            &config.resolve(source),
            with_row_id,
            columns,
            config.as_of.as_ref(),
        )
        .await
        .map_err(|e| match e {
            // A state the datasets lack: the error names the dataset and the state.
            e @ Error::Storage { .. } if config.as_of.is_some() => e,
            e => Error::config(origin, format!("{key}.source"), e.to_string()),
        })?,
    };
    // LargeBinary cells are how the engine holds values of mixed kind: a column of them is
    // read as such only when its field says so (`any::mixed_field`), never raw binary.
    if let Some(f) = table.schema.fields().iter().find(|f| {
        crate::functions::any::is_any(f.data_type()) && !crate::functions::any::is_mixed_field(f)
    }) {
        return Err(Error::config(
            origin,
            format!("{key}.source"),
            format!(
                "column `{}` of {} is LargeBinary, a type reserved for values of mixed kind \
                 (a field made by lance_csr::mixed_field); store binary data as Binary",
                f.name(),
                table.origin
            ),
        ));
    }
    Ok(table)
}

fn columns(schema: &SchemaRef) -> String {
    schema
        .fields()
        .iter()
        .map(|f| f.name().as_str())
        .collect::<Vec<_>>()
        .join(", ")
}

/// The type of node table `table`'s key column `id` (config key `key`): present, and an
/// integer or a string.
fn key_type(origin: &str, key: &str, id: &str, table: &TableHandle) -> Result<DataType> {
    let field = table.schema.field_with_name(id).map_err(|_| {
        Error::config(
            origin,
            format!("{key}.id"),
            format!(
                "column `{id}` not found in {} (columns: {})",
                table.origin,
                columns(&table.schema)
            ),
        )
    })?;
    if !is_key_type(field.data_type()) {
        return Err(Error::config(
            origin,
            format!("{key}.id"),
            format!(
                "id column `{id}` has unsupported type {} (integer or string required)",
                field.data_type()
            ),
        ));
    }
    Ok(field.data_type().clone())
}

/// Endpoint column `col` (config key `at`) of a relationship table: present, and of a type
/// that compares with `label`'s key (`key_type`).
fn check_endpoint(
    origin: &str,
    at: &str,
    col: &str,
    label: &str,
    key_type: &DataType,
    table: &TableHandle,
) -> Result<()> {
    let f = table.schema.field_with_name(col).map_err(|_| {
        Error::config(
            origin,
            at,
            format!(
                "column `{col}` not found in {} (columns: {})",
                table.origin,
                columns(&table.schema)
            ),
        )
    })?;
    let compatible = f.data_type() == key_type
        || (f.data_type().is_integer() && key_type.is_integer())
        || (matches!(f.data_type(), DataType::Utf8 | DataType::LargeUtf8)
            && matches!(key_type, DataType::Utf8 | DataType::LargeUtf8));
    if !compatible {
        return Err(Error::config(
            origin,
            at,
            format!(
                "column `{col}` has type {} but {label}'s key has type {key_type}",
                f.data_type()
            ),
        ));
    }
    Ok(())
}
