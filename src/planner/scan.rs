//! Scans: a node table as `{var}__{prop}` columns, an edge table walked from one end, and a
//! key lookup (`{key: 42}`) instead of a scan where an index has the keys.

use super::expr::{col, ExprCtx};
use super::pattern::{far_col, near_col, node_take};
use super::scope::{dst_col, eid_col, prop_col, src_col, Binding};
use super::{Lowerer, State};
use crate::catalog::{NodeInfo, RelInfo};
use crate::error::Result;
use crate::operators::const_row::ConstRow;
use crate::operators::node_lookup::NodeLookup;
use crate::storage::ROW_ID;
use arrow::datatypes::DataType;
use cypher::ast::{self, ExprKind};
use datafusion::catalog::default_table_source::provider_as_source;
use datafusion::common::TableReference;
use datafusion::logical_expr::{cast, try_cast, Expr, Extension, LogicalPlan, LogicalPlanBuilder};
use std::sync::Arc;

impl<'c> Lowerer<'c> {
    /// Scans a node table as columns `{prefix}__{prop}`.
    pub fn scan_node(&self, info: &NodeInfo, prefix: &str) -> Result<LogicalPlan> {
        let plan = LogicalPlanBuilder::scan(
            TableReference::bare(format!("node_{}", info.label)),
            provider_as_source(info.table.provider.clone()),
            None,
        )?
        .project(node_columns(info, prefix))?
        .build()?;
        Ok(plan)
    }

    /// A relationship's endpoints from its table's columns, cast to the node key types. An
    /// endpoint no key of that type can hold (an Int64 of 2^40 for Int32 keys) is a dangling
    /// edge, as in the index: null, so that it joins no node.
    fn endpoints(&self, info: &RelInfo) -> (Expr, Expr) {
        let ents = self.entities();
        let from_t = ents.node(&info.cfg.from).key_type.clone();
        let to_t = ents.node(&info.cfg.to).key_type.clone();
        (
            try_cast(col(&info.cfg.src), from_t),
            try_cast(col(&info.cfg.dst), to_t),
        )
    }

    /// A relationship's columns from its table's: endpoints, edge row, properties.
    pub(super) fn rel_columns(&self, info: &RelInfo, prefix: &str) -> Vec<Expr> {
        let (src, dst) = self.endpoints(info);
        let mut exprs = vec![
            src.alias(src_col(prefix)),
            dst.alias(dst_col(prefix)),
            cast(col(ROW_ID), DataType::UInt64).alias(eid_col(prefix)),
        ];
        for (p, _) in &info.props {
            exprs.push(col(p).alias(prop_col(prefix, p)));
        }
        exprs
    }

    /// Scans a relationship table: endpoints (cast to the node key types), row id, properties,
    /// and near/far columns for the walking direction (`reversed`: near = dst).
    pub(super) fn scan_rel(
        &self,
        info: &RelInfo,
        prefix: &str,
        reversed: bool,
    ) -> Result<LogicalPlanBuilder> {
        let (src, dst) = self.endpoints(info);
        let (near, far) = if reversed { (dst, src) } else { (src, dst) };
        let mut exprs = self.rel_columns(info, prefix);
        exprs.push(near.alias(near_col(prefix)));
        exprs.push(far.alias(far_col(prefix)));
        Ok(LogicalPlanBuilder::scan(
            TableReference::bare(format!("rel_{}_{}", info.cfg.rel_type, info.index)),
            provider_as_source(info.table.provider.clone()),
            None,
        )?
        .project(exprs)?)
    }

    /// Node table `label`'s key index and the columns its lookups take (CSR mode only).
    fn key_index(
        &self,
        label: &str,
    ) -> Option<(Arc<crate::csr::NodeKeys>, &'c Arc<crate::csr::TableColumns>)> {
        self.indexes?.key_lookup(label)
    }

    /// `(a:L {key: 42})`: look the node up by key instead of scanning its table (CSR mode,
    /// integer keys); after other patterns, for each of their rows (the plan returned then
    /// extends the state's). The lookup finds exactly the node whose key equals
    /// the (integer) value, so the caller drops the key from the property map's filter.
    pub(super) fn point_lookup(
        &mut self,
        st: &State,
        node: &ast::NodePattern,
        prefix: &str,
        info: &NodeInfo,
    ) -> Result<Option<LogicalPlan>> {
        let Some((keys, columns)) = self.key_index(&info.label) else {
            return Ok(None);
        };
        let Some(ExprKind::Map(entries)) = node.props.as_ref().map(|p| &p.kind) else {
            return Ok(None);
        };
        let Some((_, value)) = entries.iter().find(|(k, _)| k.name == info.key) else {
            return Ok(None);
        };
        if !matches!(value.kind, ExprKind::Literal(_) | ExprKind::Param(_)) {
            return Ok(None);
        }
        let empty = super::scope::Scope::default();
        let schema = datafusion::common::DFSchema::empty();
        let v = self.expr(value, &ExprCtx::new(&empty, &schema))?;
        let t = self.type_of(&v, &schema)?;
        if !t.is_integer() {
            return Ok(None);
        }
        let v = if t == DataType::Int64 {
            v
        } else {
            cast(v, DataType::Int64)
        };
        let lk = self.fresh("lookup");
        // After other patterns: the key added to each of their rows (no cross join).
        let rows = (!st.unit).then(|| st.plan.clone());
        let input = LogicalPlan::Extension(Extension {
            node: Arc::new(ConstRow::over(rows, vec![(lk.clone(), v)])?),
        });
        let target = node_take(prefix, info);
        let n = NodeLookup::try_new(
            input,
            lk,
            info.label.clone(),
            target,
            keys.clone(),
            columns.clone(),
            false,
        )?;
        Ok(Some(LogicalPlan::Extension(Extension {
            node: Arc::new(n),
        })))
    }

    /// Whether node variable `v` of table `label` stands for a node value of an earlier
    /// clause and is found by the key that value names (an integer key index, one process:
    /// the lookups run where the indexes are).
    pub(super) fn value_node_lookup(&self, v: &str, label: &str) -> bool {
        self.value_nodes.contains_key(v) && self.identity_lookup(label).is_some()
    }

    /// Table `label`'s key index where a node identity (`{label}\u{1f}{key}`) can be looked up
    /// in it: integer keys, one process (the lookups run where the indexes are).
    pub(super) fn identity_lookup(
        &self,
        label: &str,
    ) -> Option<(Arc<crate::csr::NodeKeys>, &'c Arc<crate::csr::TableColumns>)> {
        if !self.identity_lookup_possible(label) {
            return None;
        }
        self.key_index(label)
    }

    /// Whether table `label`'s nodes can be looked up by identity at all (integer keys, one
    /// process), whether or not its key index is read yet.
    pub(super) fn identity_lookup_possible(&self, label: &str) -> bool {
        self.options.one_process && self.entities().node(label).key_type.is_integer()
    }

    /// `UNWIND friends AS f MATCH (f)-->()`: the node standing for value `f`, looked up in
    /// table `info` by the key `f`'s identity names; rows whose value is no node of that
    /// table are dropped (the MATCH's equality with the value still applies). `None` where
    /// `node` stands for no value or is not looked up ([`Self::value_node_lookup`]).
    pub(super) fn value_node_plan(
        &mut self,
        st: &State,
        node: &ast::NodePattern,
        prefix: &str,
        info: &NodeInfo,
    ) -> Result<Option<LogicalPlan>> {
        let Some(v) = &node.var else {
            return Ok(None);
        };
        let Some(value) = self.value_nodes.get(&v.name).cloned() else {
            return Ok(None);
        };
        if st.unit || !self.value_node_lookup(&v.name, &info.label) {
            return Ok(None);
        }
        let Some((keys, columns)) = self.key_index(&info.label) else {
            return Ok(None);
        };
        let lk = self.fresh("lookup");
        let nid = datafusion::functions::core::expr_fn::get_field(col(&value), "__nid");
        let mut cols: Vec<Expr> = st
            .plan
            .schema()
            .columns()
            .into_iter()
            .map(Expr::Column)
            .collect();
        cols.push(identity_key(nid, &info.label)?.alias(&lk));
        let input = LogicalPlanBuilder::from(st.plan.clone())
            .project(cols)?
            .build()?;
        let n = NodeLookup::try_new(
            input,
            lk,
            info.label.clone(),
            node_take(prefix, info),
            keys.clone(),
            columns.clone(),
            false,
        )?;
        Ok(Some(LogicalPlan::Extension(Extension {
            node: Arc::new(n),
        })))
    }

    /// The columns of node binding `b` other than its key, taken by key: for rows made
    /// distinct (grouped) by a node's key alone, as a node's properties follow from it. One
    /// label with an integer key index, and properties besides the key; else `None`. Returns
    /// the key property and the lookup over a placeholder input (`UnaryNode::with_input`
    /// places it); a null key keeps its row, with null columns.
    pub(super) fn node_lookup(&self, b: &Binding) -> Result<Option<(String, NodeLookup)>> {
        let Binding::Node { label, prefix } = b else {
            return Ok(None);
        };
        let Some((keys, columns)) = self.key_index(label) else {
            return Ok(None);
        };
        let mut target = node_take(prefix, self.entities().node(label));
        let Some(key) = target.key else {
            return Ok(None);
        };
        target.take.retain(|&i| i != key);
        if target.take.is_empty() {
            return Ok(None);
        }
        let (key_prop, key_col) = (target.all[key].0.clone(), target.all[key].1.clone());
        let placeholder = LogicalPlan::EmptyRelation(datafusion::logical_expr::EmptyRelation {
            produce_one_row: false,
            schema: Arc::new(datafusion::common::DFSchema::empty()),
        });
        let lookup = NodeLookup::try_new(
            placeholder,
            key_col,
            label.clone(),
            target,
            keys,
            columns.clone(),
            true,
        )?;
        Ok(Some((key_prop, lookup)))
    }

    /// `lookups` (from [`Self::node_lookup`]) applied over `plan`.
    pub(super) fn with_lookups(
        mut plan: LogicalPlan,
        lookups: impl IntoIterator<Item = NodeLookup>,
    ) -> Result<LogicalPlan> {
        use crate::operators::UnaryNode;
        for l in lookups {
            plan = LogicalPlan::Extension(Extension {
                node: Arc::new(l.with_input(plan)?),
            });
        }
        Ok(plan)
    }
}

/// A node's columns from its table's: `{prefix}__{prop}`.
pub(super) fn node_columns(info: &NodeInfo, prefix: &str) -> Vec<Expr> {
    (info.props.iter())
        .map(|(p, _)| col(p).alias(prop_col(prefix, p)))
        .collect()
}

/// The key in node table `label` of the node whose identity (`__nid`, `{label}\u{1f}{key}`)
/// is `nid`; null where it names a node of another table.
pub(super) fn identity_key(nid: Expr, label: &str) -> Result<Expr> {
    use datafusion::functions::expr_fn as f;
    let tag = format!("{label}{}", super::path::ID_SEP);
    let text = f::substr(
        nid.clone(),
        datafusion::logical_expr::lit(tag.chars().count() as i64 + 1),
    );
    Ok(datafusion::logical_expr::when(
        f::starts_with(nid, datafusion::logical_expr::lit(tag)),
        try_cast(text, DataType::Int64),
    )
    .end()?)
}
