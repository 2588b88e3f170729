//! What each query variable is bound to, and which plan columns hold it.

use super::expr::col;
use crate::binder::BoundVar;
use crate::catalog::{Catalog, NodeInfo, RelInfo};
use arrow::datatypes::DataType;
use datafusion::common::ScalarValue;
use datafusion::logical_expr::{lit, Expr};
use std::sync::Arc;

/// Column name of a node or relationship property: `{prefix}__{prop}`, the property name
/// escaped (`names`) so that no two (prefix, property) pairs and no internal column share it.
pub fn prop_col(prefix: &str, prop: &str) -> String {
    format!("{prefix}__{}", crate::binder::names::escape(prop))
}

/// Hidden relationship columns: endpoint keys and the edge row id.
pub fn src_col(prefix: &str) -> String {
    format!("{prefix}__#src")
}
pub fn dst_col(prefix: &str) -> String {
    format!("{prefix}__#dst")
}
pub fn eid_col(prefix: &str) -> String {
    format!("{prefix}__#eid")
}

#[derive(Debug, Clone, PartialEq)]
pub enum Binding {
    /// A node of `label` whose properties are the columns `{prefix}__{prop}`.
    Node { label: String, prefix: String },
    /// A relationship of table `rel` (index into the catalog; `usize::MAX` = no table).
    Rel { rel: usize, prefix: String },
    /// The relationships of a variable-length pattern: their edge ids in `{prefix}__#eids`;
    /// with `elems`, also the nodes after the start and the relationships as values
    /// (`{prefix}__#pnodes`, `{prefix}__#prels`: lists of the path element structs).
    RelList {
        rel: usize,
        prefix: String,
        elems: Option<Arc<PathShape>>,
    },
    /// A named path: its nodes and relationships in path order (node, relationship or
    /// relationship list, node, ...), each the binding of a variable of its MATCH (anonymous
    /// elements are named internally). Its value is built where an expression needs it.
    Path {
        parts: Vec<Binding>,
        shape: Arc<PathShape>,
    },
    /// A node that may have any of several labels (a MATCH that branched): `{prefix}__#label`
    /// holds the label, `{prefix}__#key` the key, and `props` every property of any of the
    /// labels (null where the row's label lacks it), in one type each.
    Nodes {
        labels: Vec<String>,
        prefix: String,
        key_type: DataType,
        props: Vec<(String, DataType)>,
    },
    /// A relationship that may come from any of several tables: `{prefix}__#type` holds its
    /// type, `{prefix}__#table` the table (edge ids are per table), `{prefix}__#eid` the edge,
    /// `{prefix}__#start` / `{prefix}__#end` its nodes' identities (label and key as text),
    /// which its value carries (`startNode` of it taken from a list looks them up).
    Rels {
        rels: Vec<usize>,
        prefix: String,
        props: Vec<(String, DataType)>,
    },
    /// Any other value, held in one column.
    Value { col: String },
}

/// Columns of the several-label / several-table bindings.
pub fn label_col(prefix: &str) -> String {
    format!("{prefix}__#label")
}
pub fn key_col(prefix: &str) -> String {
    format!("{prefix}__#key")
}
pub fn type_col(prefix: &str) -> String {
    format!("{prefix}__#type")
}
pub fn table_col(prefix: &str) -> String {
    format!("{prefix}__#table")
}

/// Edge-id list column of a variable-length relationship.
pub fn eids_col(prefix: &str) -> String {
    format!("{prefix}__#eids")
}
/// Columns of a variable-length relationship's path elements: the nodes after the start, and
/// the relationships, as values.
/// Identity text of a several-table relationship's start / end node.
pub fn start_col(prefix: &str) -> String {
    format!("{prefix}__#start")
}
pub fn end_col(prefix: &str) -> String {
    format!("{prefix}__#end")
}
pub fn pnodes_col(prefix: &str) -> String {
    format!("{prefix}__#pnodes")
}
pub fn prels_col(prefix: &str) -> String {
    format!("{prefix}__#prels")
}

/// The struct types of the nodes and relationships in a path value: the same for every node
/// (relationship) of the path, with the union of the properties its elements can have.
/// Nodes: `__label`, `__nid` (label and key: the identity), properties. Relationships:
/// `__type`, `__rid` (table and edge id), `__start` / `__end` (their nodes' `__nid`),
/// properties.
#[derive(Debug, Clone, PartialEq)]
pub struct PathShape {
    pub node: arrow::datatypes::Fields,
    pub rel: arrow::datatypes::Fields,
}

impl PathShape {
    pub fn node_type(&self) -> DataType {
        DataType::Struct(self.node.clone())
    }
    pub fn rel_type(&self) -> DataType {
        DataType::Struct(self.rel.clone())
    }
    pub fn node_list(&self) -> DataType {
        DataType::new_list(self.node_type(), true)
    }
    pub fn rel_list(&self) -> DataType {
        DataType::new_list(self.rel_type(), true)
    }
    /// A path value: `__nodes`, `__relationships`.
    pub fn path_type(&self) -> DataType {
        DataType::Struct(
            vec![
                arrow::datatypes::Field::new(PATH_NODES, self.node_list(), true),
                arrow::datatypes::Field::new(PATH_RELS, self.rel_list(), true),
            ]
            .into(),
        )
    }
}

pub(crate) use crate::functions::registry::{PATH_NODES, PATH_RELS};

impl Binding {
    pub fn kind_name(&self) -> &'static str {
        match self {
            Binding::Node { .. } | Binding::Nodes { .. } => "node",
            Binding::Rel { .. } | Binding::Rels { .. } => "relationship",
            Binding::RelList { .. } => "relationship list",
            Binding::Path { .. } => "path",
            Binding::Value { .. } => "value",
        }
    }

    /// What the binder needs to know of the variable.
    pub(crate) fn bound_var(&self) -> BoundVar {
        match self {
            Binding::Node { label, .. } => BoundVar::node(vec![label.clone()]),
            Binding::Nodes { labels, .. } => BoundVar::Node {
                labels: labels.clone(),
                several: true,
            },
            Binding::Rel { rel, .. } => BoundVar::Rel { tables: vec![*rel] },
            Binding::Rels { rels, .. } => BoundVar::Rel {
                tables: rels.clone(),
            },
            Binding::RelList { rel, .. } => BoundVar::RelList {
                table: (*rel != usize::MAX).then_some(*rel),
            },
            Binding::Path { .. } => BoundVar::Path,
            Binding::Value { .. } => BoundVar::Value,
        }
    }

    /// The column prefix (for a value, its column).
    pub fn prefix(&self) -> &str {
        match self {
            Binding::Node { prefix, .. }
            | Binding::Rel { prefix, .. }
            | Binding::RelList { prefix, .. }
            | Binding::Nodes { prefix, .. }
            | Binding::Rels { prefix, .. } => prefix,
            Binding::Value { col } => col,
            Binding::Path { parts, .. } => parts[0].prefix(),
        }
    }

    /// A node or relationship (not a list or a value).
    pub fn is_entity(&self) -> bool {
        matches!(
            self,
            Binding::Node { .. }
                | Binding::Rel { .. }
                | Binding::Nodes { .. }
                | Binding::Rels { .. }
        )
    }

    /// The same binding under another column prefix.
    pub fn with_prefix(&self, prefix: &str) -> Binding {
        let mut b = self.clone();
        match &mut b {
            Binding::Node { prefix: p, .. }
            | Binding::Rel { prefix: p, .. }
            | Binding::RelList { prefix: p, .. }
            | Binding::Nodes { prefix: p, .. }
            | Binding::Rels { prefix: p, .. } => *p = prefix.to_string(),
            Binding::Value { col } => *col = prefix.to_string(),
            Binding::Path { parts, .. } => {
                for (i, part) in parts.iter_mut().enumerate() {
                    *part = part.with_prefix(&format!("{prefix}__#{i}"));
                }
            }
        }
        b
    }
}

/// Variables in scope, in the order they were bound.
#[derive(Debug, Clone, Default)]
pub struct Scope {
    pub vars: Vec<(String, Binding)>,
}

impl Scope {
    pub fn get(&self, name: &str) -> Option<&Binding> {
        self.vars.iter().find(|(n, _)| n == name).map(|(_, b)| b)
    }

    pub fn bind(&mut self, name: &str, b: Binding) {
        if let Some(slot) = self.vars.iter_mut().find(|(n, _)| n == name) {
            slot.1 = b;
        } else {
            self.vars.push((name.to_string(), b));
        }
    }

    /// User-visible variable names (anonymous ones start with `__`), sorted as `*` lists them.
    pub fn visible_names(&self) -> Vec<String> {
        let mut v: Vec<String> = self
            .vars
            .iter()
            .filter(|(n, _)| !n.starts_with("__"))
            .map(|(n, _)| n.clone())
            .collect();
        v.sort();
        v
    }
}

/// Resolves catalog entries for bindings, with stand-ins for labels/types the graph lacks
/// (used in lenient mode, where an unknown label simply matches nothing).
#[derive(Debug, Clone)]
pub struct Entities<'a> {
    pub catalog: &'a Catalog,
    pub empty_node: &'a NodeInfo,
    pub empty_rel: &'a RelInfo,
}

impl<'a> Entities<'a> {
    pub fn node(&self, label: &str) -> &'a NodeInfo {
        self.catalog.nodes.get(label).unwrap_or(self.empty_node)
    }

    pub fn rel(&self, idx: usize) -> &'a RelInfo {
        self.catalog.rels.get(idx).unwrap_or(self.empty_rel)
    }

    /// Every column an entity binding occupies, with its type.
    pub fn columns(&self, b: &Binding) -> Vec<(String, DataType)> {
        match b {
            Binding::Node { label, prefix } => self
                .node(label)
                .props
                .iter()
                .map(|(p, t)| (prop_col(prefix, p), t.clone()))
                .collect(),
            Binding::Rel { rel, prefix } => {
                let info = self.rel(*rel);
                let from = &self.node(&info.cfg.from).key_type;
                let to = &self.node(&info.cfg.to).key_type;
                let mut v = vec![
                    (src_col(prefix), from.clone()),
                    (dst_col(prefix), to.clone()),
                    (eid_col(prefix), DataType::UInt64),
                ];
                v.extend(
                    info.props
                        .iter()
                        .map(|(p, t)| (prop_col(prefix, p), t.clone())),
                );
                v
            }
            Binding::RelList { prefix, elems, .. } => {
                let mut v = vec![(
                    eids_col(prefix),
                    crate::operators::var_length::VarLengthExpand::eids_type(),
                )];
                if let Some(shape) = elems {
                    v.push((pnodes_col(prefix), shape.node_list()));
                    v.push((prels_col(prefix), shape.rel_list()));
                }
                v
            }
            Binding::Path { parts, .. } => {
                let mut v: Vec<(String, DataType)> = Vec::new();
                for c in parts.iter().flat_map(|p| self.columns(p)) {
                    if !v.contains(&c) {
                        v.push(c);
                    }
                }
                v
            }
            Binding::Nodes {
                prefix,
                key_type,
                props,
                ..
            } => {
                let mut v = vec![
                    (label_col(prefix), DataType::Utf8),
                    (key_col(prefix), key_type.clone()),
                ];
                v.extend(props.iter().map(|(p, t)| (prop_col(prefix, p), t.clone())));
                v
            }
            Binding::Rels { prefix, props, .. } => {
                let mut v = vec![
                    (type_col(prefix), DataType::Utf8),
                    (table_col(prefix), DataType::UInt32),
                    (eid_col(prefix), DataType::UInt64),
                    (start_col(prefix), DataType::Utf8),
                    (end_col(prefix), DataType::Utf8),
                ];
                v.extend(props.iter().map(|(p, t)| (prop_col(prefix, p), t.clone())));
                v
            }
            Binding::Value { col } => vec![(col.clone(), DataType::Null)],
        }
    }

    /// Whether property `p` of binding `b` is visible as a property (not a hidden row key
    /// of every label the binding can have).
    pub fn visible(&self, b: &Binding, p: &str) -> bool {
        let hidden = |label: &str| {
            let n = self.node(label);
            n.key_hidden && n.key == p
        };
        match b {
            Binding::Node { label, .. } => !hidden(label),
            Binding::Nodes { labels, .. } => !labels.iter().all(|l| hidden(l)),
            _ => true,
        }
    }

    /// The column that identifies an entity (node key / edge row id).
    pub fn identity_col(&self, b: &Binding) -> String {
        match b {
            Binding::Node { label, prefix } => prop_col(prefix, &self.node(label).key),
            Binding::Rel { prefix, .. } => eid_col(prefix),
            Binding::RelList { prefix, .. } => eids_col(prefix),
            Binding::Path { parts, .. } => self.identity_col(&parts[0]),
            Binding::Nodes { prefix, .. } => key_col(prefix),
            Binding::Rels { prefix, .. } => eid_col(prefix),
            Binding::Value { col } => col.clone(),
        }
    }

    /// The columns that together tell two values of `b` apart: a node's key (and label
    /// column where it has several), a relationship's edge (and table), every element of a
    /// path.
    pub fn identity_cols(&self, b: &Binding) -> Vec<String> {
        match b {
            Binding::Path { parts, .. } => {
                parts.iter().flat_map(|p| self.identity_cols(p)).collect()
            }
            Binding::Nodes { prefix, .. } => vec![key_col(prefix), label_col(prefix)],
            Binding::Rels { prefix, .. } => vec![eid_col(prefix), table_col(prefix)],
            b => vec![self.identity_col(b)],
        }
    }

    /// What tells two entities apart, as expressions to compare pairwise: (label, key) for a
    /// node, (table, edge id) for a relationship; the label / table is a literal where fixed.
    pub fn identity_parts(&self, b: &Binding) -> Option<[Expr; 2]> {
        match b {
            Binding::Node { label, .. } => Some([lit(label.clone()), col(&self.identity_col(b))]),
            Binding::Nodes { prefix, .. } => Some([col(&label_col(prefix)), col(&key_col(prefix))]),
            Binding::Rel { rel, .. } => Some([
                lit(ScalarValue::UInt32(Some(*rel as u32))),
                col(&self.identity_col(b)),
            ]),
            Binding::Rels { prefix, .. } => Some([col(&table_col(prefix)), col(&eid_col(prefix))]),
            _ => None,
        }
    }

    /// The properties an entity binding has, and the name to report in errors.
    pub fn props_of<'b>(&self, b: &'b Binding) -> Option<(&'b [(String, DataType)], String)>
    where
        'a: 'b,
    {
        match b {
            Binding::Node { label, .. } => Some((&self.node(label).props, format!(":{label}"))),
            Binding::Rel { rel, .. } => {
                let info = self.rel(*rel);
                Some((&info.props, format!(":{}", info.cfg.rel_type)))
            }
            Binding::Nodes { labels, props, .. } => Some((props, format!(":{}", labels.join("|")))),
            Binding::Rels { rels, props, .. } => {
                let mut types: Vec<String> = rels
                    .iter()
                    .map(|&r| self.rel(r).cfg.rel_type.clone())
                    .collect();
                types.dedup();
                Some((props, format!(":{}", types.join("|"))))
            }
            _ => None,
        }
    }
}
