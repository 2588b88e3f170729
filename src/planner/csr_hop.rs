//! A hop on a CSR index: a `CsrExpand` taking the relationship's columns and the far node's
//! (or, when the far node is already bound, closing onto it).

use super::pattern::{bound_node, node_take, Hop, MatchCx, Written};
use super::scope::{dst_col, eid_col, prop_col, src_col, Binding};
use super::{Lowerer, State};
use crate::catalog::RelInfo;
use crate::error::Result;
use crate::operators::csr_expand::{CsrData, CsrExpand, TakeSpec};
use crate::storage::ROW_ID;
use arrow::datatypes::DataType;
use datafusion::logical_expr::{Expr, Extension, LogicalPlan};
use std::sync::Arc;

impl<'c> Lowerer<'c> {
    pub(super) fn csr_data(
        &self,
        rel: usize,
        near_label: &str,
        far_label: &str,
    ) -> Option<CsrData> {
        let idx = self.indexes?;
        Some(CsrData {
            index: idx.csr(rel)?,
            near_keys: idx.keys(near_label)?,
            far_keys: idx.keys(far_label)?,
            edges: idx.rel_columns.get(rel)?.clone(),
            target: idx.node_columns.get(far_label)?.clone(),
        })
    }

    /// A hop as a `CsrExpand`: the relationship's columns and the far node's (or, when the far
    /// node is already bound, a check that the hop closes onto it).
    pub(super) fn csr_hop(
        &mut self,
        st: &mut State,
        info: &RelInfo,
        data: CsrData,
        orients: Vec<bool>,
        hop: &Hop<'_>,
        preds: &mut Vec<Expr>,
        mx: &MatchCx,
    ) -> Result<()> {
        let &Hop {
            rel,
            ref prefix,
            near_prefix,
            near_label,
            far: node,
            far_prefix,
            far_label,
        } = hop;
        let ents = self.entities();
        let from_t = ents.node(&info.cfg.from).key_type.clone();
        let to_t = ents.node(&info.cfg.to).key_type.clone();
        let mut all = vec![
            (info.cfg.src.clone(), src_col(prefix), from_t),
            (info.cfg.dst.clone(), dst_col(prefix), to_t),
            (ROW_ID.to_string(), eid_col(prefix), DataType::UInt64),
        ];
        all.extend(
            info.props
                .iter()
                .map(|(p, t)| (p.clone(), prop_col(prefix, p), t.clone())),
        );
        let edge = TakeSpec {
            var: prefix.to_string(),
            take: (0..all.len()).collect(),
            all,
            key: None,
        };
        let bound = bound_node(st, node)?;
        let (target, close) = match &bound {
            Some((p, l)) => (
                TakeSpec {
                    var: p.clone(),
                    all: vec![],
                    take: vec![],
                    key: None,
                },
                Some(prop_col(p, &ents.node(l).key)),
            ),
            None => (node_take(far_prefix, ents.node(far_label)), None),
        };
        let near_key = prop_col(near_prefix, &ents.node(near_label).key);
        let mut n = CsrExpand::try_new(
            st.plan.clone(),
            near_key,
            info.cfg.rel_type.clone(),
            info.index,
            orients,
            edge,
            target,
            close,
            data,
        )?;
        n.optional = mx.optional && bound.is_none();
        st.plan = LogicalPlan::Extension(Extension { node: Arc::new(n) });
        st.scope.bind(
            prefix,
            Binding::Rel {
                rel: info.index,
                prefix: prefix.to_string(),
            },
        );
        if let Some(props) = &rel.props {
            let written = Written::Types(&rel.types);
            self.property_map_preds(st, prefix, props, written, preds, mx)?;
        }
        match bound {
            Some((p, _)) => {
                if let Some(props) = &node.props {
                    self.property_map_preds(st, &p, props, Written::Labels(node), preds, mx)?;
                }
            }
            None => {
                self.bind_node_var(st, (far_prefix, far_label), node, preds, mx)?;
            }
        }
        Ok(())
    }
}
