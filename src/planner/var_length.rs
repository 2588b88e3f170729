//! Variable-length relationships: one traversal over the CSRs (`VarLengthExpand`), or on the
//! join path a UNION ALL of fixed-length chains, each lowered as a MATCH.

use super::expr::col;
use super::pattern::{bound_node, node_take, Hop, MatchCx, Search, Written};
use super::scope::{eid_col, eids_col, pnodes_col, prels_col, prop_col, Binding, PathShape};
use super::{Lowerer, State};
use crate::config::reach::longest_walk;
use crate::config::RelTable;
use crate::error::Result;
use crate::operators::csr_expand::TakeSpec;
use crate::operators::shortest;
use crate::operators::var_length::{
    encode_eid, HopEnds, PathElems, ShortestPaths, VarHop, VarLengthExpand,
};
use crate::rewrite::clause::MatchPlan;
use crate::rewrite::unroll::{Chain, FAR, NEAR};
use crate::sem_err;
use arrow::datatypes::DataType;
use cypher::ast::{self, Direction};
use datafusion::functions_nested::expr_fn as nf;
use datafusion::logical_expr::{cast, lit, Expr, Extension, LogicalPlan, LogicalPlanBuilder};
use std::collections::BTreeMap;
use std::sync::Arc;

impl<'c> Lowerer<'c> {
    /// `-[:T*min..max]-` over `tables` (every table a path may walk: several types, or a type
    /// with several tables that chain): one traversal over the CSRs when every table has one,
    /// else unrolled into a UNION ALL of fixed-length chains (one per length, each branched
    /// over the labels the chain can pass). Binds the relationship variable to the list of edge
    /// ids and the far node.
    pub(super) fn var_length_hop(
        &mut self,
        st: &mut State,
        (tables, chains): (&[usize], Option<&BTreeMap<u64, Chain>>),
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
        let (min, max) = self.length_bounds(rel, tables, (near_label, far_label), preds)?;
        let far_bound = bound_node(st, node)?;
        let near_info = self.entities().node(near_label).clone();
        let far_info = self.entities().node(far_label).clone();
        let hops = (!mx.joins).then(|| self.var_hops(tables, rel.direction, near_label, far_label));
        match hops.flatten() {
            Some((hops, labels, start, end)) => {
                // The far node's columns, or (bound far node) just its key to compare.
                let (target, check) = match &far_bound {
                    Some((p, l)) => self.bound_end_take(p, l),
                    _ => (node_take(far_prefix, &far_info), None),
                };
                let idx = self.indexes.expect("hops come from the indexes");
                let n = VarLengthExpand::try_new(
                    st.plan.clone(),
                    prop_col(near_prefix, &near_info.key),
                    hops,
                    labels,
                    (start, end),
                    (min, max),
                    eids_col(prefix),
                    target,
                    idx.keys(near_label).expect("checked by the hops"),
                    idx.node_columns[far_label].clone(),
                )?;
                let n = self.traversal_extras(n, prefix, far_label, far_bound.as_ref(), mx)?;
                st.plan = LogicalPlan::Extension(Extension { node: Arc::new(n) });
                preds.extend(check);
            }
            _ if mx.shortest.is_some() => {
                return sem_err!(
                    Unsupported,
                    rel.span,
                    "unsupported: a shortest path over relationships without CSR indexes (build them with `lance-csr index`)"
                )
            }
            _ => self.unroll_var_length(st, (tables, chains), hop, (min, max), mx)?,
        }
        st.scope.bind(
            prefix,
            Binding::RelList {
                rel: if tables.len() == 1 {
                    tables[0]
                } else {
                    usize::MAX
                },
                prefix: prefix.to_string(),
                elems: mx.segment_shapes.get(prefix).cloned(),
            },
        );
        if far_bound.is_none() {
            st.scope.bind(
                far_prefix,
                Binding::Node {
                    label: far_label.to_string(),
                    prefix: far_prefix.to_string(),
                },
            );
        }
        if let Some(props) = &node.props {
            self.property_map_preds(st, far_prefix, props, Written::Labels(node), preds, mx)?;
        }
        Ok(())
    }

    /// The length bounds of variable-length `rel` over `tables` between nodes of `labels`
    /// (near, far): its bounds as written, checked; no zero-length path between different
    /// labels (a `*0..0` one matches nothing: `false` joins `preds`); the upper bound lowered
    /// to the longest walk an acyclic label graph allows.
    fn length_bounds(
        &self,
        rel: &ast::RelPattern,
        tables: &[usize],
        (near_label, far_label): (&str, &str),
        preds: &mut Vec<Expr>,
    ) -> Result<(u64, Option<u64>)> {
        let (lo, hi) = rel.length.unwrap_or_default();
        if let Some(p) = &rel.props {
            return sem_err!(
                Unsupported,
                p.span,
                "unsupported: a property map on a variable-length relationship"
            );
        }
        if hi.is_some_and(|h| h > self.options.max_var_length) {
            return sem_err!(
                InvalidArgumentValue,
                rel.span,
                "variable-length upper bound {} exceeds the maximum depth {}",
                hi.unwrap_or_default(),
                self.options.max_var_length
            );
        }
        let mut min = lo.unwrap_or(1);
        // Nodes of different labels are different nodes: no zero-length path joins them.
        if near_label != far_label && min == 0 {
            if hi == Some(0) {
                preds.push(lit(false));
            }
            min = 1;
        }
        // The longest path the label graph allows (edges never repeat, but an acyclic label
        // graph bounds the length on its own).
        let cfgs: Vec<&RelTable> = tables.iter().map(|&t| &self.catalog.rels[t].cfg).collect();
        let max = match (hi, longest_walk(&cfgs, rel.direction)) {
            (Some(h), Some(l)) => Some(h.min(l)),
            (h, l) => h.or(l),
        };
        Ok((min, max))
    }

    /// A traversal ending at node `p` (of `label`) bound earlier: it takes just the end's key,
    /// under a fresh name, and the returned predicate compares it with `p`'s.
    fn bound_end_take(&mut self, p: &str, label: &str) -> (TakeSpec, Option<Expr>) {
        let bound = self.entities().node(label).clone();
        let tmp = self.fresh("vlend");
        let key = bound.key.clone();
        let t = bound.key_type.clone();
        (
            TakeSpec {
                var: p.to_string(),
                all: vec![(key.clone(), tmp.clone(), t)],
                take: vec![0],
                key: Some(0),
            },
            Some(col(&tmp).eq(col(&prop_col(p, &key)))),
        )
    }

    /// `n` with what its MATCH asks beyond the paths: their elements as values, a
    /// shortest-path search (to the bound far node `far_bound`, or to every node).
    fn traversal_extras(
        &self,
        n: VarLengthExpand,
        prefix: &str,
        far_label: &str,
        far_bound: Option<&(String, String)>,
        mx: &MatchCx,
    ) -> Result<VarLengthExpand> {
        let mut n = match mx.segment_shapes.get(prefix) {
            Some(shape) => self.with_path_elems(n, prefix, shape)?,
            None => n,
        };
        if let Some((mode, _)) = mx.shortest {
            let idx = self.indexes.expect("a traversal comes from the indexes");
            let end_keys = idx
                .keys(far_label)
                .ok_or_else(|| crate::Error::Internal(format!("no keys of label {far_label}")))?;
            let (node_filter, rel_filter) = self.search_filter_exprs(prefix, mx)?;
            n.shortest = Some(ShortestPaths {
                mode,
                target: far_bound.map(|(p, l)| prop_col(p, &self.entities().node(l).key)),
                end_keys,
                k_cap: self.options.max_var_length,
                budget: self.options.max_search_edges as usize,
                node_filter,
                rel_filter,
            });
        }
        Ok(n)
    }

    /// The search filters of the shortest path whose relationship is `prefix`, over its
    /// element columns (`NODE_COL`, `REL_COL`).
    fn search_filter_exprs(
        &self,
        prefix: &str,
        mx: &MatchCx,
    ) -> Result<(Option<Expr>, Option<Expr>)> {
        let Some((_, filters)) = &mx.shortest else {
            return Ok((None, None));
        };
        if filters.nodes.is_empty() && filters.rels.is_empty() {
            return Ok((None, None));
        }
        let shape = mx.segment_shapes.get(prefix).cloned().ok_or_else(|| {
            crate::Error::Internal("a filtered shortest path without its elements".into())
        })?;
        let all = |items: &[(ast::Ident, ast::Expr)], col: &str, t: &DataType| {
            items
                .iter()
                .map(|it| self.element_predicate(it, col, t))
                .collect::<Result<Vec<_>>>()
                .map(|v| v.into_iter().reduce(Expr::and))
        };
        Ok((
            all(&filters.nodes, shortest::NODE_COL, &shape.node_type())?,
            all(&filters.rels, shortest::REL_COL, &shape.rel_type())?,
        ))
    }

    /// `n` also outputting its paths' elements as values of `shape`.
    fn with_path_elems(
        &self,
        mut n: VarLengthExpand,
        prefix: &str,
        shape: &PathShape,
    ) -> Result<VarLengthExpand> {
        let idx = self.indexes.expect("a traversal comes from the indexes");
        let mut slots = Vec::new();
        for l in &n.labels {
            let cols = idx
                .node_columns
                .get(l)
                .cloned()
                .ok_or_else(|| crate::Error::Internal(format!("no columns of label {l}")))?;
            slots.push((cols, self.entities().node(l).key.clone()));
        }
        let ends = n
            .hops
            .iter()
            .map(|h| {
                let cfg = &self.catalog.rels[h.rel].cfg;
                HopEnds {
                    src: cfg.src.clone(),
                    dst: cfg.dst.clone(),
                    from: cfg.from.clone(),
                    to: cfg.to.clone(),
                }
            })
            .collect();
        n.elems = Some(PathElems {
            nodes_col: pnodes_col(prefix),
            rels_col: prels_col(prefix),
            node_fields: shape.node.clone(),
            rel_fields: shape.rel.clone(),
            slots,
            ends,
        });
        n.schema = n.compute_schema()?;
        Ok(n)
    }

    /// The traversal's steps over `tables` when every one has a CSR (and the end labels keys
    /// and columns): hops, label slots, start and end slot. `None` on the join path.
    pub(super) fn var_hops(
        &self,
        tables: &[usize],
        dir: Direction,
        near_label: &str,
        far_label: &str,
    ) -> Option<(Vec<VarHop>, Vec<String>, usize, usize)> {
        let idx = self.indexes?;
        // The same test as the rewrites' (which unrolled the hop where it fails).
        if !idx.traverses(tables, near_label, far_label) {
            return None;
        }
        let mut labels: Vec<String> = vec![near_label.to_string()];
        let slot = |l: &str, labels: &mut Vec<String>| match labels.iter().position(|x| x == l) {
            Some(i) => i,
            None => {
                labels.push(l.to_string());
                labels.len() - 1
            }
        };
        let end = slot(far_label, &mut labels);
        let mut hops = Vec::new();
        for &t in tables {
            let info = self.catalog.rels.get(t)?;
            let index = idx.csr(t)?;
            let edges = idx.rel_columns.get(t)?.clone();
            let (from, to) = (&info.cfg.from, &info.cfg.to);
            let mut walks = Vec::new();
            if dir != Direction::Incoming {
                walks.push((from, to, false));
            }
            if dir != Direction::Outgoing {
                walks.push((to, from, true));
            }
            for (a, b, reverse) in walks {
                hops.push(VarHop {
                    rel: t,
                    rel_type: info.cfg.rel_type.clone(),
                    from: slot(a, &mut labels),
                    to: slot(b, &mut labels),
                    reverse,
                    skip_self_loops: reverse && dir == Direction::Both && from == to,
                    index: index.clone(),
                    edges: edges.clone(),
                });
            }
        }
        Some((hops, labels, 0, end))
    }

    /// The join path of a variable-length hop: for each length k, the chain of k hops over the
    /// types of `tables` (lowered as a MATCH, so it branches over the labels it can pass and
    /// keeps relationships distinct), projected to the input columns + the edge-id list + the
    /// far node; UNION ALL.
    pub(super) fn unroll_var_length(
        &mut self,
        st: &mut State,
        (tables, chains): (&[usize], Option<&BTreeMap<u64, Chain>>),
        hop: &Hop<'_>,
        (min, max): (u64, Option<u64>),
        mx: &MatchCx,
    ) -> Result<()> {
        let &Hop {
            rel,
            ref prefix,
            near_label,
            far: node,
            far_prefix,
            far_label,
            ..
        } = hop;
        let cap = self.unrolled_length(rel, tables, max)?;
        let far_bound = bound_node(st, node)?.is_some();
        let far_info = self.entities().node(far_label).clone();
        let far_cols: Vec<String> = if far_bound {
            vec![]
        } else {
            far_info
                .props
                .iter()
                .map(|(p, _)| prop_col(far_prefix, p))
                .collect()
        };
        let input_cols: Vec<String> = st
            .plan
            .schema()
            .fields()
            .iter()
            .map(|f| f.name().clone())
            .collect();
        let shape = mx.segment_shapes.get(prefix).cloned();
        let list = |items: Vec<Expr>, t: &DataType| {
            if items.is_empty() {
                super::expr::empty_list(t)
            } else {
                cast(nf::make_array(items), DataType::new_list(t.clone(), true))
            }
        };
        let mut branches = Vec::new();
        for k in min..=cap {
            let (plan, eid_exprs, elems) = if k == 0 {
                if near_label != far_label {
                    continue;
                }
                let plan = self.empty_path(st, hop, &input_cols, far_bound)?;
                (plan, vec![], (vec![], vec![]))
            } else {
                let chain = chains.and_then(|c| c.get(&k)).ok_or_else(|| {
                    crate::Error::Internal(format!("no chain of {k} hops for `{prefix}`"))
                })?;
                self.chain(st, hop, chain, shape.as_deref(), mx)?
            };
            let mut exprs: Vec<Expr> = input_cols.iter().map(|c| col(c)).collect();
            exprs.push(list(eid_exprs, &DataType::UInt64).alias(eids_col(prefix)));
            if let Some(shape) = &shape {
                exprs.push(list(elems.0, &shape.node_type()).alias(pnodes_col(prefix)));
                exprs.push(list(elems.1, &shape.rel_type()).alias(prels_col(prefix)));
            }
            exprs.extend(far_cols.iter().map(|c| col(c)));
            branches.push(LogicalPlanBuilder::from(plan).project(exprs)?.build()?);
        }
        let mut it = branches.into_iter();
        let first = match it.next() {
            Some(p) => p,
            // No length is possible: an empty result with the right columns.
            None => {
                let far = (!far_bound).then_some((far_prefix, &far_info));
                no_paths(&st.plan, &input_cols, prefix, shape.as_deref(), far)?
            }
        };
        let mut b = LogicalPlanBuilder::from(first);
        for p in it {
            b = b.union(p)?;
        }
        st.plan = b.build()?;
        Ok(())
    }

    /// The longest chain an unrolled variable-length hop over `tables` needs: its upper bound,
    /// else the tables' edges (a path repeats none); more joins than the maximum depth allows
    /// is an error.
    fn unrolled_length(
        &self,
        rel: &ast::RelPattern,
        tables: &[usize],
        max: Option<u64>,
    ) -> Result<u64> {
        let edges: u64 = tables
            .iter()
            .map(|&t| self.catalog.rels[t].table.num_rows as u64)
            .sum();
        let cap = if tables.is_empty() {
            0
        } else {
            max.unwrap_or(edges)
        };
        if cap > self.options.max_var_length {
            return sem_err!(
                InvalidArgumentValue,
                rel.span,
                "variable-length relationship needs up to {cap} joins on the join path, more than the maximum depth {} (add an upper bound, or use the CSR path)",
                self.options.max_var_length
            );
        }
        Ok(cap)
    }

    /// The zero-length path of a variable-length hop: the far node is the near node.
    pub(super) fn empty_path(
        &self,
        st: &State,
        hop: &Hop<'_>,
        input_cols: &[String],
        far_bound: bool,
    ) -> Result<LogicalPlan> {
        let near_info = self.entities().node(hop.near_label);
        let far_info = self.entities().node(hop.far_label);
        let (near_prefix, far_prefix) = (hop.near_prefix, hop.far_prefix);
        // The empty path: the far node is the near node.
        let near_key = prop_col(near_prefix, &near_info.key);
        let mut b = LogicalPlanBuilder::from(st.plan.clone());
        if far_bound {
            let far_key = prop_col(far_prefix, &far_info.key);
            b = b.filter(col(&near_key).eq(col(&far_key)))?;
        } else {
            let mut exprs: Vec<Expr> = input_cols.iter().map(|c| col(c)).collect();
            for (p, _) in &near_info.props {
                exprs.push(col(&prop_col(near_prefix, p)).alias(prop_col(far_prefix, p)));
            }
            b = b.project(exprs)?;
        }
        Ok(b.build()?)
    }

    /// A chain of the hop's length (prepared by the rewrites from its near node, bound as
    /// [`NEAR`], to its far one, [`FAR`]): its plan (the far node's columns under its own
    /// name), the expressions of its edge ids (tagged with their table) and, given a `shape`,
    /// of its nodes after the start and its relationships as path elements.
    pub(super) fn chain(
        &mut self,
        st: &State,
        hop: &Hop<'_>,
        chain: &Chain,
        shape: Option<&PathShape>,
        mx: &MatchCx,
    ) -> Result<(LogicalPlan, Vec<Expr>, (Vec<Expr>, Vec<Expr>))> {
        let far_bound = bound_node(st, hop.far)?.is_some();
        let mut input = st.clone();
        for (alias, var) in [(NEAR, hop.near_prefix), (FAR, hop.far_prefix)] {
            if let Some(b) = st.scope.get(var).cloned() {
                input.scope.bind(alias, b);
            }
        }
        // The chain's own rewrites are internal: keep them out of EXPLAIN's notes.
        let notes = self.notes.len();
        // Re-rooted as the MATCH it unrolls for allows.
        let search = Search {
            reroot: mx.reroot,
            shortest: None,
            optional: false,
        };
        let plan = MatchPlan::Prepared {
            clause: chain.prepared.graph.clause.clone(),
            prepared: (*chain.prepared).clone(),
        };
        let sub = self.lower_match_plan(input, plan, &search);
        self.notes.truncate(notes);
        let mut sub = sub?;
        let ids = chain_edge_ids(&sub.scope, &chain.rels)?;
        let mut elems = (vec![], vec![]);
        if let Some(shape) = shape {
            let get = |v: &str| {
                sub.scope
                    .get(v)
                    .ok_or_else(|| crate::Error::Internal(format!("chain without `{v}`")))
            };
            for (r, n) in chain.rels.iter().zip(&chain.nodes) {
                elems.0.push(self.node_struct(get(n)?, shape)?);
                elems.1.push(self.rel_struct(get(r)?, shape)?);
            }
        }
        if !far_bound {
            // The far node's columns under its own name.
            let info = self.entities().node(hop.far_label).clone();
            let mut exprs: Vec<Expr> = sub.columns().iter().map(|c| col(c)).collect();
            for (p, _) in &info.props {
                exprs.push(col(&prop_col(FAR, p)).alias(prop_col(hop.far_prefix, p)));
            }
            sub.plan = LogicalPlanBuilder::from(sub.plan).project(exprs)?.build()?;
        }
        Ok((sub.plan, ids, elems))
    }
}

/// The edge ids of a chain's relationships `rels` (tagged with their table), as bound in
/// `scope`.
fn chain_edge_ids(scope: &super::scope::Scope, rels: &[String]) -> Result<Vec<Expr>> {
    let mut ids = Vec::new();
    for r in rels {
        ids.push(match scope.get(r) {
            Some(Binding::Rel { rel, prefix }) => col(&eid_col(prefix)) + lit(encode_eid(*rel, 0)),
            Some(Binding::Rels { prefix, .. }) => {
                col(&eid_col(prefix))
                    + cast(col(&super::scope::table_col(prefix)), DataType::UInt64)
                        * lit(encode_eid(1, 0))
            }
            _ => return Err(crate::Error::Internal(format!("chain without `{r}`"))),
        });
    }
    Ok(ids)
}

/// No row of `plan`, with the columns an unrolled variable-length hop adds: its edge ids,
/// its elements (with `shape`), the far node's properties (`far`, when it is not bound).
fn no_paths(
    plan: &LogicalPlan,
    input_cols: &[String],
    prefix: &str,
    shape: Option<&PathShape>,
    far: Option<(&str, &crate::catalog::NodeInfo)>,
) -> Result<LogicalPlan> {
    let mut exprs: Vec<Expr> = input_cols.iter().map(|c| col(c)).collect();
    exprs.push(super::expr::empty_list(&DataType::UInt64).alias(eids_col(prefix)));
    if let Some(shape) = shape {
        exprs.push(super::expr::empty_list(&shape.node_type()).alias(pnodes_col(prefix)));
        exprs.push(super::expr::empty_list(&shape.rel_type()).alias(prels_col(prefix)));
    }
    if let Some((far_prefix, info)) = far {
        for (p, t) in &info.props {
            exprs.push(
                cast(lit(datafusion::common::ScalarValue::Null), t.clone())
                    .alias(prop_col(far_prefix, p)),
            );
        }
    }
    Ok(LogicalPlanBuilder::from(plan.clone())
        .filter(lit(false))?
        .project(exprs)?
        .build()?)
}
