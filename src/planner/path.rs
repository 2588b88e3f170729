//! Named paths (`p = (a)-[r]->(b)-[*1..3]-(c)`). Before its MATCH is bound, every anonymous
//! element of a named path gets an internal name, so the MATCH lowers as usual; the path is
//! then the bindings of its elements ([`Binding::Path`]) and carries only their columns (ids
//! until a property is read). Its value - a struct of node and relationship lists of one shape
//! per path ([`PathShape`]) - is built where an expression needs it; `length(p)` needs none.

use super::expr::col;
use super::scope::{
    dst_col, eid_col, eids_col, end_col, key_col, label_col, pnodes_col, prels_col, prop_col,
    src_col, start_col, table_col, type_col, Binding, PathShape, PATH_NODES, PATH_RELS,
};
use super::{Lowerer, State};
use crate::binder::QueryGraph;
use crate::error::{Error, Result};
use crate::functions::registry::empty_list;
use arrow::datatypes::{DataType, Field};
use datafusion::common::ScalarValue;
use datafusion::functions::expr_fn as f;
use datafusion::functions_nested::expr_fn as nf;
use datafusion::logical_expr::{cast, lit, when, Expr};
use std::collections::{BTreeSet, HashMap};
use std::sync::Arc;

/// Separates a label / table from a key / edge id in element identities.
pub const ID_SEP: &str = "\u{1f}";

/// A named path of the MATCH being lowered: its name and elements (variable names).
#[derive(Debug, Clone)]
pub(crate) struct NamedPath {
    pub name: String,
    /// Node, relationship, node, ... in path order.
    pub elems: Vec<String>,
    pub shape: Arc<PathShape>,
}

impl Lowerer<'_> {
    /// The named paths of a MATCH, before their shapes are known.
    pub(crate) fn named_paths_of(
        &self,
        paths: Vec<crate::rewrite::path_names::PathElements>,
    ) -> Vec<NamedPath> {
        let empty = Arc::new(PathShape {
            node: Default::default(),
            rel: Default::default(),
        });
        paths
            .into_iter()
            .map(|p| NamedPath {
                name: p.name,
                elems: p.elems,
                shape: empty.clone(),
            })
            .collect()
    }

    /// The shape of each named path of `qg` (from the labels and tables its elements can
    /// have, before branching: every branch builds values of one type), and the shape each of
    /// their variable-length relationships' elements take, and those of `lists` (the
    /// variable-length relationships the user names).
    pub(crate) fn shape_paths(
        &self,
        qg: &QueryGraph,
        paths: &mut [NamedPath],
        lists: &[String],
    ) -> Result<HashMap<String, Arc<PathShape>>> {
        let mut segments = HashMap::new();
        for p in paths.iter_mut() {
            let mut labels = BTreeSet::new();
            let mut tables = BTreeSet::new();
            for (i, n) in qg.nodes.iter().enumerate() {
                if n.var.as_ref().is_some_and(|v| p.elems.contains(&v.name)) {
                    labels.extend(qg.labels[i].iter().cloned());
                }
            }
            for (k, r) in qg.rels.iter().enumerate() {
                if r.var.as_ref().is_some_and(|v| p.elems.contains(&v.name)) {
                    tables.extend(qg.tables[k].iter().copied());
                    if r.length.is_some() {
                        // A walk passes the labels its tables join.
                        for &t in &qg.tables[k] {
                            let cfg = &self.catalog.rels[t].cfg;
                            labels.insert(cfg.from.clone());
                            labels.insert(cfg.to.clone());
                        }
                    }
                }
            }
            p.shape = Arc::new(self.path_shape(&labels, &tables, &p.name)?);
            for r in &qg.rels {
                if let Some(v) = r.var.as_ref().filter(|v| p.elems.contains(&v.name)) {
                    if r.length.is_some() {
                        segments.insert(v.name.clone(), p.shape.clone());
                    }
                }
            }
        }
        // A variable-length relationship the user named (or a re-matched list) is a list of
        // relationships.
        for (k, r) in qg.rels.iter().enumerate() {
            if let Some(v) = r.var.as_ref().filter(|v| lists.contains(&v.name)) {
                if r.length.is_some() && !segments.contains_key(&v.name) {
                    let mut labels = BTreeSet::new();
                    for &t in &qg.tables[k] {
                        let cfg = &self.catalog.rels[t].cfg;
                        labels.insert(cfg.from.clone());
                        labels.insert(cfg.to.clone());
                    }
                    let shape = self.path_shape(&labels, &qg.tables[k], &v.name)?;
                    segments.insert(v.name.clone(), Arc::new(shape));
                }
            }
        }
        Ok(segments)
    }

    /// Element struct types for nodes of `labels` and relationships of `tables`.
    pub(crate) fn path_shape(
        &self,
        labels: &BTreeSet<String>,
        tables: &BTreeSet<usize>,
        var: &str,
    ) -> Result<PathShape> {
        let ents = self.entities();
        let mut node_props = Vec::new();
        for l in labels {
            let info = ents.node(l);
            let visible: Vec<(String, DataType)> = info
                .props
                .iter()
                .filter(|(p, _)| !(info.key_hidden && *p == info.key))
                .cloned()
                .collect();
            super::branch::merge_props(&mut node_props, &visible, var)?;
        }
        let mut rel_props = Vec::new();
        for &t in tables {
            super::branch::merge_props(&mut rel_props, &ents.rel(t).props, var)?;
        }
        let text = |n: &str| Field::new(n, DataType::Utf8, true);
        let prop = |(n, t): (String, DataType)| Field::new(n, t, true);
        let node = [text("__label"), text("__nid")]
            .into_iter()
            .chain(node_props.into_iter().map(prop))
            .collect();
        let rel = [
            text("__type"),
            text("__rid"),
            text("__start"),
            text("__end"),
        ]
        .into_iter()
        .chain(rel_props.into_iter().map(prop))
        .collect();
        Ok(PathShape { node, rel })
    }

    /// Binds the named paths of the MATCH being lowered (its elements are in scope).
    pub(crate) fn bind_named_paths(&mut self, st: &mut State, paths: &[NamedPath]) -> Result<()> {
        for p in paths {
            let parts = p
                .elems
                .iter()
                .map(|v| {
                    st.scope.get(v).cloned().ok_or_else(|| {
                        Error::Internal(format!("path `{}` without element `{v}`", p.name))
                    })
                })
                .collect::<Result<Vec<_>>>()?;
            st.scope.bind(
                &p.name,
                Binding::Path {
                    parts,
                    shape: p.shape.clone(),
                },
            );
        }
        Ok(())
    }

    /// A node binding as a path element struct of `shape`.
    pub(crate) fn node_struct(&self, b: &Binding, shape: &PathShape) -> Result<Expr> {
        let (props, prefix) = self
            .entities()
            .props_of(b)
            .map(|(p, _)| (p.to_vec(), b.prefix().to_string()))
            .ok_or_else(|| Error::Internal(format!("a {} as a path's node", b.kind_name())))?;
        element_struct(&shape.node, self.node_fixed(b)?, &props, &prefix)
    }

    /// A node's label and identity.
    fn node_fixed(&self, b: &Binding) -> Result<Vec<Expr>> {
        let (label, key) = match b {
            Binding::Node { label, prefix } => (
                lit(label.clone()),
                col(&prop_col(prefix, &self.entities().node(label).key)),
            ),
            Binding::Nodes { prefix, .. } => (col(&label_col(prefix)), col(&key_col(prefix))),
            other => {
                return Err(Error::Internal(format!(
                    "a {} as a path's node",
                    other.kind_name()
                )))
            }
        };
        Ok(vec![label.clone(), node_id(label, key)])
    }

    /// The identity fields of a node / relationship value (names and values, after its
    /// label / type): `__nid`; or `__rid`, `__start`, `__end`.
    pub(crate) fn identity_fields(&self, b: &Binding) -> Result<Vec<Expr>> {
        let fixed = match b {
            Binding::Node { .. } | Binding::Nodes { .. } => self.node_fixed(b)?,
            _ => self.rel_fixed(b)?.0,
        };
        let names: &[&str] = match b {
            Binding::Node { .. } | Binding::Nodes { .. } => &["__nid"],
            _ => &["__rid", "__start", "__end"],
        };
        Ok(names
            .iter()
            .zip(fixed.into_iter().skip(1))
            .flat_map(|(n, e)| [lit(*n), e])
            .collect())
    }

    /// A relationship binding as a path element struct of `shape`.
    pub(crate) fn rel_struct(&self, b: &Binding, shape: &PathShape) -> Result<Expr> {
        let (fixed, props, prefix) = self.rel_fixed(b)?;
        element_struct(&shape.rel, fixed, &props, &prefix)
    }

    /// A relationship's type, identity and its nodes' identities; its properties and prefix.
    #[allow(clippy::type_complexity)]
    fn rel_fixed(&self, b: &Binding) -> Result<(Vec<Expr>, Vec<(String, DataType)>, String)> {
        let ents = self.entities();
        match b {
            Binding::Rel { rel, prefix } => {
                let info = ents.rel(*rel);
                let fixed = vec![
                    lit(info.cfg.rel_type.clone()),
                    f::concat(vec![
                        lit(format!("{rel}{ID_SEP}")),
                        cast(col(&eid_col(prefix)), DataType::Utf8),
                    ]),
                    node_id(lit(info.cfg.from.clone()), col(&src_col(prefix))),
                    node_id(lit(info.cfg.to.clone()), col(&dst_col(prefix))),
                ];
                Ok((fixed, info.props.clone(), prefix.clone()))
            }
            Binding::Rels { prefix, props, .. } => {
                let rid = f::concat(vec![
                    cast(col(&table_col(prefix)), DataType::Utf8),
                    lit(ID_SEP),
                    cast(col(&eid_col(prefix)), DataType::Utf8),
                ]);
                let fixed = vec![
                    col(&type_col(prefix)),
                    rid,
                    col(&start_col(prefix)),
                    col(&end_col(prefix)),
                ];
                Ok((fixed, props.clone(), prefix.clone()))
            }
            other => Err(Error::Internal(format!(
                "a {} as a path's relationship",
                other.kind_name()
            ))),
        }
    }

    /// The value of a named path: its nodes and relationships; null when its first node is
    /// (an OPTIONAL MATCH that found none).
    pub(crate) fn path_value(&self, parts: &[Binding], shape: &PathShape) -> Result<Expr> {
        let mut nodes = Pieces::new(shape.node_list());
        let mut rels = Pieces::new(shape.rel_list());
        nodes.item(self.node_struct(&parts[0], shape)?);
        for pair in parts[1..].chunks(2) {
            let [r, n] = pair else {
                return Err(Error::Internal("a path ends with a relationship".into()));
            };
            match r {
                Binding::RelList {
                    prefix,
                    elems: Some(_),
                    ..
                } => {
                    // The segment's nodes end with the node after it.
                    nodes.list(col(&pnodes_col(prefix)));
                    rels.list(col(&prels_col(prefix)));
                }
                Binding::RelList { .. } => {
                    return Err(Error::Internal(
                        "a path's variable-length segment without its elements".into(),
                    ))
                }
                _ => {
                    rels.item(self.rel_struct(r, shape)?);
                    nodes.item(self.node_struct(n, shape)?);
                }
            }
        }
        let value = datafusion::functions::core::expr_fn::named_struct(vec![
            lit(PATH_NODES),
            nodes.build(),
            lit(PATH_RELS),
            rels.build(),
        ]);
        Ok(when(
            self.path_missing(parts),
            lit(ScalarValue::try_from(shape.path_type())?),
        )
        .otherwise(cast(value, shape.path_type()))?)
    }

    /// Whether a path is missing (an OPTIONAL MATCH that found none): one of its elements is.
    fn path_missing(&self, parts: &[Binding]) -> Expr {
        let ents = self.entities();
        let mut cols: Vec<String> = parts.iter().map(|p| ents.identity_col(p)).collect();
        cols.dedup();
        cols.into_iter()
            .map(|c| col(&c).is_null())
            .reduce(Expr::or)
            .expect("a path has a node")
    }

    /// `length(p)`: the relationships of its fixed hops plus those of its segments.
    pub(crate) fn path_length(&self, parts: &[Binding]) -> Expr {
        let fixed = parts[1..]
            .iter()
            .step_by(2)
            .filter(|r| !matches!(r, Binding::RelList { .. }))
            .count() as i64;
        let mut len = lit(fixed);
        for r in parts[1..].iter().step_by(2) {
            if let Binding::RelList { prefix, .. } = r {
                len = len + cast(nf::cardinality(col(&eids_col(prefix))), DataType::Int64);
            }
        }
        when(self.path_missing(parts), lit(ScalarValue::Int64(None)))
            .otherwise(len)
            .expect("when with a branch")
    }

    /// A variable-length relationship's relationships as values.
    pub(crate) fn rel_list_value(&self, b: &Binding, var: &str) -> Result<Expr> {
        match b {
            Binding::RelList {
                prefix,
                elems: Some(_),
                ..
            } => Ok(col(&prels_col(prefix))),
            _ => Err(Error::Internal(format!(
                "the relationship list `{var}` without its elements"
            ))),
        }
    }
}

/// A struct of `fields`: the fixed leading fields, then the properties (`props` under
/// `prefix`, cast to the field's type; null where the element lacks one).
fn element_struct(
    fields: &arrow::datatypes::Fields,
    fixed: Vec<Expr>,
    props: &[(String, DataType)],
    prefix: &str,
) -> Result<Expr> {
    let mut args = Vec::new();
    for (field, e) in fields.iter().zip(fixed.iter()) {
        args.push(lit(field.name().clone()));
        args.push(e.clone());
    }
    for field in fields.iter().skip(fixed.len()) {
        let t = field.data_type();
        let e = match props.iter().find(|(p, _)| p == field.name()) {
            Some((p, from)) => super::branch::cast_to(col(&prop_col(prefix, p)), from, t),
            None => lit(ScalarValue::try_from(t)?),
        };
        args.push(lit(field.name().clone()));
        args.push(e);
    }
    let s = datafusion::functions::core::expr_fn::named_struct(args);
    Ok(cast(s, DataType::Struct(fields.clone())))
}

/// A list built from single items and whole lists, in order.
struct Pieces {
    t: DataType,
    lists: Vec<Expr>,
    items: Vec<Expr>,
}

impl Pieces {
    fn new(t: DataType) -> Self {
        Self {
            t,
            lists: Vec::new(),
            items: Vec::new(),
        }
    }
    fn item(&mut self, e: Expr) {
        self.items.push(e);
    }
    fn flush(&mut self) {
        if !self.items.is_empty() {
            let items = std::mem::take(&mut self.items);
            self.lists.push(cast(nf::make_array(items), self.t.clone()));
        }
    }
    fn list(&mut self, e: Expr) {
        self.flush();
        self.lists.push(e);
    }
    fn build(mut self) -> Expr {
        self.flush();
        match self.lists.len() {
            0 => {
                let DataType::List(f) = &self.t else {
                    unreachable!("a list type")
                };
                empty_list(f.data_type())
            }
            1 => self.lists.pop().expect("one"),
            _ => nf::array_concat(self.lists),
        }
    }
}

/// A node's identity text: its label and key.
pub(crate) fn node_id(label: Expr, key: Expr) -> Expr {
    f::concat(vec![label, lit(ID_SEP), cast(key, DataType::Utf8)])
}
