//! What each query variable is bound to, and which plan columns hold it.

use crate::catalog::{Catalog, NodeInfo, RelInfo};
use arrow::datatypes::DataType;

/// Column name of a node or relationship property: `{prefix}__{prop}`.
pub fn prop_col(prefix: &str, prop: &str) -> String {
    format!("{prefix}__{prop}")
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
    /// The relationships of a variable-length pattern: their edge ids in `{prefix}__#eids`.
    RelList { rel: usize, prefix: String },
    /// Any other value, held in one column.
    Value { col: String },
}

/// Edge-id list column of a variable-length relationship.
pub fn eids_col(prefix: &str) -> String {
    format!("{prefix}__#eids")
}

impl Binding {
    pub fn kind_name(&self) -> &'static str {
        match self {
            Binding::Node { .. } => "node",
            Binding::Rel { .. } => "relationship",
            Binding::RelList { .. } => "relationship list",
            Binding::Value { .. } => "value",
        }
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
            Binding::RelList { prefix, .. } => vec![(
                eids_col(prefix),
                crate::operators::var_length::VarLengthExpand::eids_type(),
            )],
            Binding::Value { col } => vec![(col.clone(), DataType::Null)],
        }
    }

    /// The column that identifies an entity (node key / edge row id).
    pub fn identity_col(&self, b: &Binding) -> String {
        match b {
            Binding::Node { label, prefix } => prop_col(prefix, &self.node(label).key),
            Binding::Rel { prefix, .. } => eid_col(prefix),
            Binding::RelList { prefix, .. } => eids_col(prefix),
            Binding::Value { col } => col.clone(),
        }
    }
}
