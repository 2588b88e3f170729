//! The one place our logical nodes are told apart: [`GraphNode::of`] turns DataFusion's
//! `dyn UserDefinedLogicalNode` into an enum over the seven graph nodes, which the physical
//! planner, parameter binding and the distributed codec match on (a new node is then a
//! compile error wherever it must be handled, not a silent `None`).

use super::const_row::ConstRow;
use super::count_paths::CountPaths;
use super::csr_expand::CsrExpand;
use super::csr_intersect::CsrIntersect;
use super::node_lookup::NodeLookup;
use super::shared::SharedSubplan;
use super::var_length::VarLengthExpand;
use datafusion::common::Result;
use datafusion::logical_expr::{Expr, LogicalPlan, UserDefinedLogicalNode};
use std::sync::Arc;

/// One of our logical nodes.
#[derive(Debug, Clone, Copy)]
pub enum GraphNode<'a> {
    Expand(&'a CsrExpand),
    Intersect(&'a CsrIntersect),
    Lookup(&'a NodeLookup),
    VarLength(&'a VarLengthExpand),
    CountPaths(&'a CountPaths),
    Shared(&'a SharedSubplan),
    ConstRow(&'a ConstRow),
}

impl<'a> GraphNode<'a> {
    /// `node` as one of ours; `None` for any other extension.
    pub fn of(node: &'a dyn UserDefinedLogicalNode) -> Option<Self> {
        let n = node.as_any();
        if let Some(x) = n.downcast_ref::<CsrExpand>() {
            return Some(GraphNode::Expand(x));
        }
        if let Some(x) = n.downcast_ref::<CsrIntersect>() {
            return Some(GraphNode::Intersect(x));
        }
        if let Some(x) = n.downcast_ref::<NodeLookup>() {
            return Some(GraphNode::Lookup(x));
        }
        if let Some(x) = n.downcast_ref::<VarLengthExpand>() {
            return Some(GraphNode::VarLength(x));
        }
        if let Some(x) = n.downcast_ref::<CountPaths>() {
            return Some(GraphNode::CountPaths(x));
        }
        if let Some(x) = n.downcast_ref::<SharedSubplan>() {
            return Some(GraphNode::Shared(x));
        }
        n.downcast_ref::<ConstRow>().map(GraphNode::ConstRow)
    }

    /// `plan` as one of ours, when it is an extension node that is.
    pub fn of_plan(plan: &'a LogicalPlan) -> Option<Self> {
        match plan {
            LogicalPlan::Extension(e) => Self::of(e.node.as_ref()),
            _ => None,
        }
    }

    /// The expressions the node evaluates itself (filters inside hops, a key lookup's keys).
    /// DataFusion's `expressions()` leaves them out, so its rewrites never see them.
    pub fn own_exprs(self) -> Vec<&'a Expr> {
        match self {
            GraphNode::Expand(x) => x.edge_filter.iter().chain(&x.target_filter).collect(),
            GraphNode::Intersect(x) => {
                let counted = x.count.iter().flat_map(|c| &c.filter);
                std::iter::once(&x.open)
                    .chain(&x.closes)
                    .flat_map(|h| h.edge_filter.iter().chain(&h.target_filter))
                    .chain(counted)
                    .collect()
            }
            GraphNode::CountPaths(x) => x
                .arms
                .iter()
                .flatten()
                .chain(&x.close)
                .flat_map(|h| h.edge_filter.iter().chain(&h.target_filter))
                .collect(),
            GraphNode::ConstRow(x) => x.exprs.iter().map(|(_, e)| e).collect(),
            GraphNode::VarLength(x) => x.target_filter.iter().collect(),
            GraphNode::Shared(x) => x.after.iter().collect(),
            GraphNode::Lookup(_) => Vec::new(),
        }
    }

    /// The node with `f` applied to each of [`own_exprs`](Self::own_exprs).
    pub fn map_own_exprs(
        self,
        f: &mut dyn FnMut(Expr) -> Result<Expr>,
    ) -> Result<Arc<dyn UserDefinedLogicalNode>> {
        let mut opt = |e: &mut Option<Expr>| -> Result<()> {
            if let Some(x) = e.take() {
                *e = Some(f(x)?);
            }
            Ok(())
        };
        Ok(match self {
            GraphNode::Expand(x) => {
                let mut x = x.clone();
                opt(&mut x.edge_filter)?;
                opt(&mut x.target_filter)?;
                Arc::new(x)
            }
            GraphNode::Intersect(x) => {
                let mut x = x.clone();
                for h in std::iter::once(&mut x.open).chain(&mut x.closes) {
                    opt(&mut h.edge_filter)?;
                    opt(&mut h.target_filter)?;
                }
                if let Some(c) = &mut x.count {
                    opt(&mut c.filter)?;
                }
                Arc::new(x)
            }
            GraphNode::CountPaths(x) => {
                let mut x = x.clone();
                for h in x.arms.iter_mut().flatten().chain(x.close.as_mut()) {
                    opt(&mut h.edge_filter)?;
                    opt(&mut h.target_filter)?;
                }
                Arc::new(x)
            }
            GraphNode::VarLength(x) => {
                let mut x = x.clone();
                opt(&mut x.target_filter)?;
                Arc::new(x)
            }
            GraphNode::ConstRow(x) => {
                let exprs = (x.exprs.iter())
                    .map(|(c, e)| Ok((c.clone(), f(e.clone())?)))
                    .collect::<Result<_>>()?;
                Arc::new(ConstRow::over(x.input.clone(), exprs)?)
            }
            GraphNode::Lookup(x) => Arc::new(x.clone()),
            GraphNode::Shared(x) => {
                let mut x = x.clone();
                opt(&mut x.after)?;
                Arc::new(x)
            }
        })
    }
}
