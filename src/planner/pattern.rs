//! MATCH lowering on the relational path: node scans, and each hop as joins
//! `node -> edge table -> node`.

use super::expr::{col, ExprCtx};
use super::scope::{dst_col, eid_col, eids_col, prop_col, src_col, Binding};
use super::{Lowerer, State};
use crate::binder::reach::longest_walk;
use crate::binder::{QueryGraph, ResolvedPath};
use crate::catalog::{NodeInfo, RelInfo};
use crate::config::RelTable;
use crate::error::Result;
use crate::operators::csr_expand::{CsrData, CsrExpand, TakeSpec};
use crate::operators::node_lookup::NodeLookup;
use crate::operators::var_length::{encode_eid, VarHop, VarLengthExpand};
use crate::rewrite::pattern_order;
use crate::sem_err;
use crate::storage::ROW_ID;
use arrow::datatypes::DataType;
use cypher::ast::{self, Direction, ExprKind};
use datafusion::catalog::default_table_source::provider_as_source;
use datafusion::common::{JoinType, TableReference};
use datafusion::functions_nested::expr_fn as nf;
use datafusion::logical_expr::{
    cast, lit, try_cast, Expr, Extension, LogicalPlan, LogicalPlanBuilder,
};

use std::sync::Arc;

/// Near / far endpoint columns of an edge scan as walked (`src`->`dst` or reversed).
fn near_col(prefix: &str) -> String {
    format!("{prefix}__#near")
}
fn far_col(prefix: &str) -> String {
    format!("{prefix}__#far")
}

impl<'c> Lowerer<'c> {
    /// Scans a node table as columns `{prefix}__{prop}`.
    pub fn scan_node(&self, info: &NodeInfo, prefix: &str) -> Result<LogicalPlan> {
        let exprs: Vec<Expr> = info
            .props
            .iter()
            .map(|(p, _)| col(p).alias(prop_col(prefix, p)))
            .collect();
        let plan = LogicalPlanBuilder::scan(
            TableReference::bare(format!("node_{}", info.label)),
            provider_as_source(info.table.provider.clone()),
            None,
        )?
        .project(exprs)?
        .build()?;
        Ok(plan)
    }

    /// Scans a relationship table: endpoints (cast to the node key types), row id, properties,
    /// and near/far columns for the walking direction (`reversed`: near = dst).
    fn scan_rel(&self, info: &RelInfo, prefix: &str, reversed: bool) -> Result<LogicalPlanBuilder> {
        let ents = self.entities();
        let from_t = ents.node(&info.cfg.from).key_type.clone();
        let to_t = ents.node(&info.cfg.to).key_type.clone();
        // An endpoint no key of that type can hold (an Int64 of 2^40 for Int32 keys) is a
        // dangling edge, as in the index: null, so that it joins no node.
        let src = try_cast(col(&info.cfg.src), from_t);
        let dst = try_cast(col(&info.cfg.dst), to_t);
        let (near, far) = if reversed {
            (dst.clone(), src.clone())
        } else {
            (src.clone(), dst.clone())
        };
        let mut exprs = vec![
            src.alias(src_col(prefix)),
            dst.alias(dst_col(prefix)),
            cast(col(ROW_ID), DataType::UInt64).alias(eid_col(prefix)),
        ];
        for (p, _) in &info.props {
            exprs.push(col(p).alias(prop_col(prefix, p)));
        }
        exprs.push(near.alias(near_col(prefix)));
        exprs.push(far.alias(far_col(prefix)));
        Ok(LogicalPlanBuilder::scan(
            TableReference::bare(format!("rel_{}_{}", info.cfg.rel_type, info.index)),
            provider_as_source(info.table.provider.clone()),
            None,
        )?
        .project(exprs)?)
    }

    /// Lowers one MATCH clause (not OPTIONAL): bound, then branched when its nodes may have
    /// several labels or its relationships come from several tables (`super::branch`), each
    /// branch re-rooted first when switched on.
    pub fn lower_match(&mut self, st: State, m: &ast::Match) -> Result<State> {
        let qg = self.bind(&st.scope, |b| b.bind_match(m))?;
        if let Some(st) = self.lower_branches(&st, &qg)? {
            return Ok(st);
        }
        self.lower_match_one(st, &qg, true)
    }

    /// Lowers a bound MATCH that needs no branching, re-rooted first when switched on; its
    /// WHERE too when `with_where`.
    pub(crate) fn lower_match_one(
        &mut self,
        st: State,
        qg: &QueryGraph,
        with_where: bool,
    ) -> Result<State> {
        if self.options.reroot {
            let mut counter = self.counter;
            let reordered = self.bind(&st.scope, |b| {
                pattern_order::reorder(qg, b, &mut || {
                    counter += 1;
                    format!("__anon{counter}")
                })
            });
            self.counter = counter;
            if let Some(r) = reordered.transpose()? {
                let roots: Vec<String> = r
                    .roots
                    .iter()
                    .map(|(v, why)| format!("{v} ({why})"))
                    .collect();
                self.notes.push(format!(
                    "{}  -- root: {}",
                    ast::Clause::Match(r.graph.clause.clone()),
                    roots.join(", ")
                ));
                return self.lower_match_as_written(st, &r.graph, with_where);
            }
        }
        self.lower_match_as_written(st, qg, with_where)
    }

    fn lower_match_as_written(
        &mut self,
        st: State,
        qg: &QueryGraph,
        with_where: bool,
    ) -> Result<State> {
        let resolved = self.bind(&st.scope, |b| b.resolve(qg))?;
        let m = &qg.clause;
        if resolved.iter().all(|r| r.satisfiable) {
            return self.lower_resolved_match(st, m, resolved, with_where);
        }
        // Some hop has no table for its labels: the MATCH has no rows. Planned as joins, which
        // keep every column of the chain whatever labels resolution settled on (the indexes'
        // operators need the labels they index); DataFusion turns it into an empty relation.
        let indexes = self.indexes.take();
        let out = self.lower_resolved_match(st, m, resolved, with_where);
        self.indexes = indexes;
        out
    }

    fn lower_resolved_match(
        &mut self,
        mut st: State,
        m: &ast::Match,
        all_resolved: Vec<ResolvedPath>,
        with_where: bool,
    ) -> Result<State> {
        let mut acc = MatchPreds::default();
        for (path, resolved) in m.patterns.iter().zip(all_resolved) {
            acc.unsatisfiable |= !resolved.satisfiable;
            let node_prefixes: Vec<String> = std::iter::once(&path.start)
                .chain(path.steps.iter().map(|(_, n)| n))
                .map(|n| match &n.var {
                    Some(v) => v.name.clone(),
                    None => self.fresh("anon"),
                })
                .collect();
            // First node.
            self.bind_node(
                &mut st,
                &path.start,
                &node_prefixes[0],
                &resolved.labels[0],
                &mut acc.preds,
            )?;
            for (i, (rel, node)) in path.steps.iter().enumerate() {
                // The binder checked the variable is new and written once.
                let prefix = match &rel.var {
                    Some(v) => v.name.clone(),
                    None => self.fresh("anonr"),
                };
                let hop = Hop {
                    rel,
                    prefix,
                    near_prefix: &node_prefixes[i],
                    near_label: &resolved.labels[i],
                    far: node,
                    far_prefix: &node_prefixes[i + 1],
                    far_label: &resolved.labels[i + 1],
                };
                if rel.length.is_some() {
                    let tables = resolved.tables[i].clone();
                    self.var_length_hop(&mut st, &tables, &hop, &mut acc.preds)?;
                    acc.lists.push((tables, hop.prefix));
                } else {
                    self.fixed_hop(&mut st, resolved.rels[i], &hop, &mut acc)?;
                }
            }
        }
        let mut preds = acc.uniqueness();
        if acc.unsatisfiable {
            preds.push(lit(false));
        }
        if let Some(w) = m.where_.as_ref().filter(|_| with_where) {
            preds.push(self.match_where(&st, w)?);
        }
        if let Some(p) = preds.into_iter().reduce(Expr::and) {
            st.plan = self.filter(st.plan, p)?;
        }
        Ok(st)
    }

    /// A single relationship: on its CSR when one covers it, else joins
    /// `near -> edge table -> far`.
    fn fixed_hop(
        &mut self,
        st: &mut State,
        rel_idx: usize,
        hop: &Hop<'_>,
        acc: &mut MatchPreds,
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
        let info = self.entities().rel(rel_idx).clone();
        // Orientation(s): walking from the near node, is it the edge's src or dst?
        let mut orients = Vec::new();
        let fits =
            |a: &str, b: &str| rel_idx == usize::MAX || (a == info.cfg.from && b == info.cfg.to);
        if matches!(rel.direction, Direction::Outgoing | Direction::Both)
            && fits(near_label, far_label)
        {
            orients.push(false);
        }
        if matches!(rel.direction, Direction::Incoming | Direction::Both)
            && fits(far_label, near_label)
        {
            orients.push(true);
        }
        let orients_fit = !orients.is_empty();
        if orients.is_empty() {
            orients.push(rel.direction == Direction::Incoming);
            acc.unsatisfiable = true;
        }
        acc.rels.push((rel_idx, prefix.clone()));
        if orients_fit {
            if let Some(data) = self.csr_data(rel_idx, near_label, far_label) {
                return self.csr_hop(st, &info, data, orients, hop, &mut acc.preds);
            }
        }
        let preds = &mut acc.preds;
        let mut edges = self.scan_rel(&info, prefix, orients[0])?;
        if orients.len() == 2 {
            // Undirected: both orientations, a self-loop only once.
            let back = self
                .scan_rel(&info, prefix, true)?
                .filter(col(&src_col(prefix)).not_eq(col(&dst_col(prefix))))?
                .build()?;
            edges = edges.union(back)?;
        }
        let edges = edges.build()?;
        let near_key = prop_col(near_prefix, &self.entities().node(near_label).key);
        st.plan = LogicalPlanBuilder::from(st.plan.clone())
            .join(
                edges,
                JoinType::Inner,
                (vec![col_name(&near_key)], vec![col_name(&near_col(prefix))]),
                None,
            )?
            .build()?;
        st.unit = false;
        st.scope.bind(
            prefix,
            Binding::Rel {
                rel: rel_idx,
                prefix: prefix.clone(),
            },
        );
        if let Some(props) = &rel.props {
            self.property_map_preds(st, prefix, props, Written::Types(&rel.types), preds)?;
        }
        // Far node: join a new scan, or check a bound one.
        self.bind_far_node(st, node, far_prefix, far_label, prefix, preds)
    }

    /// A MATCH's WHERE over the variables in `st`.
    pub(crate) fn match_where(&self, st: &State, w: &ast::Expr) -> Result<Expr> {
        let schema = st.plan.schema().clone();
        let cx = ExprCtx {
            no_aggregates: "in WHERE",
            ..ExprCtx::new(&st.scope, &schema)
        };
        let p = self.expr(w, &cx)?;
        self.check_boolean(&p, &schema, w.span)?;
        Ok(p)
    }

    /// Binds the first node of a path: a new scan (cross-joined), or an already bound variable.
    fn bind_node(
        &mut self,
        st: &mut State,
        node: &ast::NodePattern,
        prefix: &str,
        label: &str,
        preds: &mut Vec<Expr>,
    ) -> Result<()> {
        match bound_node(st, node)? {
            Some((p, _)) => {
                if let Some(props) = &node.props {
                    self.property_map_preds(st, &p, props, Written::Labels(&node.labels), preds)?;
                }
            }
            None => {
                let info = self.entities().node(label).clone();
                let scan = match self.point_lookup(st, node, prefix, &info)? {
                    Some(lookup) => lookup,
                    None => self.scan_node(&info, prefix)?,
                };
                st.plan = if st.unit {
                    scan
                } else {
                    LogicalPlanBuilder::from(st.plan.clone())
                        .cross_join(scan)?
                        .build()?
                };
                st.unit = false;
                self.bind_node_var(st, prefix, label, node, preds)?;
            }
        }
        Ok(())
    }

    fn bind_far_node(
        &mut self,
        st: &mut State,
        node: &ast::NodePattern,
        prefix: &str,
        label: &str,
        rel_prefix: &str,
        preds: &mut Vec<Expr>,
    ) -> Result<()> {
        match bound_node(st, node)? {
            Some((p, l)) => {
                let key = prop_col(&p, &self.entities().node(&l).key);
                preds.push(col(&key).eq(col(&far_col(rel_prefix))));
                if let Some(props) = &node.props {
                    self.property_map_preds(st, &p, props, Written::Labels(&node.labels), preds)?;
                }
            }
            None => {
                let info = self.entities().node(label).clone();
                let scan = self.scan_node(&info, prefix)?;
                let key = prop_col(prefix, &info.key);
                st.plan = LogicalPlanBuilder::from(st.plan.clone())
                    .join(
                        scan,
                        JoinType::Inner,
                        (vec![col_name(&far_col(rel_prefix))], vec![col_name(&key)]),
                        None,
                    )?
                    .build()?;
                self.bind_node_var(st, prefix, label, node, preds)?;
            }
        }
        Ok(())
    }

    /// `-[:T*min..max]-` over `tables` (every table a path may walk: several types, or a type
    /// with several tables that chain): one traversal over the CSRs when every table has one,
    /// else unrolled into a UNION ALL of fixed-length chains (one per length, each branched
    /// over the labels the chain can pass). Binds the relationship variable to the list of edge
    /// ids and the far node.
    fn var_length_hop(
        &mut self,
        st: &mut State,
        tables: &[usize],
        hop: &Hop<'_>,
        preds: &mut Vec<Expr>,
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
        let far_bound = bound_node(st, node)?;
        let near_info = self.entities().node(near_label).clone();
        let far_info = self.entities().node(far_label).clone();
        match self.var_hops(tables, rel.direction, near_label, far_label) {
            Some((hops, labels, start, end)) => {
                // The far node's columns, or (bound far node) just its key to compare.
                let (target, check) = match &far_bound {
                    Some((p, l)) => {
                        let bound = self.entities().node(l).clone();
                        let tmp = self.fresh("vlend");
                        let key = bound.key.clone();
                        let t = bound.key_type.clone();
                        (
                            TakeSpec {
                                var: p.clone(),
                                all: vec![(key.clone(), tmp.clone(), t)],
                                take: vec![0],
                                key: Some(0),
                            },
                            Some(col(&tmp).eq(col(&prop_col(p, &key)))),
                        )
                    }
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
                    idx.keys[near_label].clone(),
                    idx.node_columns[far_label].clone(),
                )?;
                st.plan = LogicalPlan::Extension(Extension { node: Arc::new(n) });
                preds.extend(check);
            }
            _ => self.unroll_var_length(st, tables, hop, (min, max))?,
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
            self.property_map_preds(st, far_prefix, props, Written::Labels(&node.labels), preds)?;
        }
        Ok(())
    }

    /// The traversal's steps over `tables` when every one has a CSR (and the end labels keys
    /// and columns): hops, label slots, start and end slot. `None` on the join path.
    fn var_hops(
        &self,
        tables: &[usize],
        dir: Direction,
        near_label: &str,
        far_label: &str,
    ) -> Option<(Vec<VarHop>, Vec<String>, usize, usize)> {
        let idx = self.indexes?;
        idx.keys.get(near_label)?;
        idx.node_columns.get(far_label)?;
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
            let index = idx.csr.get(t)?.as_ref()?.clone();
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
    fn unroll_var_length(
        &mut self,
        st: &mut State,
        tables: &[usize],
        hop: &Hop<'_>,
        (min, max): (u64, Option<u64>),
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
        // Without an upper bound, a path can't be longer than the tables (edges don't repeat).
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
        let mut types: Vec<String> = Vec::new();
        for &t in tables {
            let ty = &self.catalog.rels[t].cfg.rel_type;
            if !types.contains(ty) {
                types.push(ty.clone());
            }
        }
        let mut branches = Vec::new();
        for k in min..=cap {
            let (plan, eid_exprs) = if k == 0 {
                if near_label != far_label {
                    continue;
                }
                (self.empty_path(st, hop, &input_cols, far_bound)?, vec![])
            } else {
                self.chain(st, hop, &types, k)?
            };
            let eids = if eid_exprs.is_empty() {
                super::expr::empty_list(&DataType::UInt64)
            } else {
                nf::make_array(eid_exprs)
            };
            let mut exprs: Vec<Expr> = input_cols.iter().map(|c| col(c)).collect();
            exprs.push(eids.alias(eids_col(prefix)));
            exprs.extend(far_cols.iter().map(|c| col(c)));
            branches.push(LogicalPlanBuilder::from(plan).project(exprs)?.build()?);
        }
        let mut it = branches.into_iter();
        let first = match it.next() {
            Some(p) => p,
            None => {
                // No length is possible: an empty result with the right columns.
                let mut exprs: Vec<Expr> = input_cols.iter().map(|c| col(c)).collect();
                exprs.push(super::expr::empty_list(&DataType::UInt64).alias(eids_col(prefix)));
                for (p, t) in &far_info.props {
                    if !far_bound {
                        exprs.push(
                            cast(lit(datafusion::common::ScalarValue::Null), t.clone())
                                .alias(prop_col(far_prefix, p)),
                        );
                    }
                }
                LogicalPlanBuilder::from(st.plan.clone())
                    .filter(lit(false))?
                    .project(exprs)?
                    .build()?
            }
        };
        let mut b = LogicalPlanBuilder::from(first);
        for p in it {
            b = b.union(p)?;
        }
        st.plan = b.build()?;
        Ok(())
    }

    /// The zero-length path of a variable-length hop: the far node is the near node.
    fn empty_path(
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

    /// The chain of `k` hops over `types` from the near node to the far one, lowered as a
    /// MATCH (so it branches over the labels it can pass and keeps relationships distinct):
    /// its plan and the expressions of its edge ids (tagged with their table).
    fn chain(
        &mut self,
        st: &State,
        hop: &Hop<'_>,
        types: &[String],
        k: u64,
    ) -> Result<(LogicalPlan, Vec<Expr>)> {
        let &Hop {
            rel,
            near_prefix,
            far_prefix,
            far_label,
            ..
        } = hop;
        let ident = |n: &str| ast::Ident::new(n, rel.span);
        let mut steps = Vec::new();
        let mut rels = Vec::new();
        for j in 0..k {
            let rv = self.fresh("vlr");
            let last = j + 1 == k;
            let (var, labels) = if last {
                (far_prefix.to_string(), vec![ident(far_label)])
            } else {
                (self.fresh("vln"), vec![])
            };
            steps.push((
                ast::RelPattern {
                    var: Some(ident(&rv)),
                    types: types.iter().map(|t| ident(t)).collect(),
                    direction: rel.direction,
                    length: None,
                    props: None,
                    span: rel.span,
                },
                ast::NodePattern {
                    var: Some(ident(&var)),
                    labels,
                    props: None,
                    span: rel.span,
                },
            ));
            rels.push(rv);
        }
        let path = ast::PathPattern {
            name: None,
            start: ast::NodePattern {
                var: Some(ident(near_prefix)),
                labels: vec![],
                props: None,
                span: rel.span,
            },
            steps,
            span: rel.span,
        };
        let m = ast::Match {
            optional: false,
            patterns: vec![path],
            where_: None,
            span: rel.span,
        };
        // The chain's own rewrites are internal: keep them out of EXPLAIN's notes.
        let notes = self.notes.len();
        let sub = self.lower_match(st.clone(), &m);
        self.notes.truncate(notes);
        let sub = sub?;
        let mut ids = Vec::new();
        for r in &rels {
            ids.push(match sub.scope.get(r) {
                Some(Binding::Rel { rel, prefix }) => {
                    col(&eid_col(prefix)) + lit(encode_eid(*rel, 0))
                }
                Some(Binding::Rels { prefix, .. }) => {
                    col(&eid_col(prefix))
                        + cast(col(&super::scope::table_col(prefix)), DataType::UInt64)
                            * lit(encode_eid(1, 0))
                }
                _ => return Err(crate::Error::Internal(format!("chain without `{r}`"))),
            });
        }
        Ok((sub.plan, ids))
    }

    fn csr_data(&self, rel: usize, near_label: &str, far_label: &str) -> Option<CsrData> {
        let idx = self.indexes?;
        Some(CsrData {
            index: idx.csr.get(rel)?.as_ref()?.clone(),
            near_keys: idx.keys.get(near_label)?.clone(),
            far_keys: idx.keys.get(far_label)?.clone(),
            edges: idx.rel_columns.get(rel)?.clone(),
            target: idx.node_columns.get(far_label)?.clone(),
        })
    }

    /// A hop as a `CsrExpand`: the relationship's columns and the far node's (or, when the far
    /// node is already bound, a check that the hop closes onto it).
    fn csr_hop(
        &mut self,
        st: &mut State,
        info: &RelInfo,
        data: CsrData,
        orients: Vec<bool>,
        hop: &Hop<'_>,
        preds: &mut Vec<Expr>,
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
        let n = CsrExpand::try_new(
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
        st.plan = LogicalPlan::Extension(Extension { node: Arc::new(n) });
        st.scope.bind(
            prefix,
            Binding::Rel {
                rel: info.index,
                prefix: prefix.to_string(),
            },
        );
        if let Some(props) = &rel.props {
            self.property_map_preds(st, prefix, props, Written::Types(&rel.types), preds)?;
        }
        match bound {
            Some((p, _)) => {
                if let Some(props) = &node.props {
                    self.property_map_preds(st, &p, props, Written::Labels(&node.labels), preds)?;
                }
            }
            None => {
                self.bind_node_var(st, far_prefix, far_label, node, preds)?;
            }
        }
        Ok(())
    }

    /// `(a:L {key: 42})` at the start of a query: look the node up by key instead of scanning
    /// its table (CSR mode, integer keys). The property map still filters above.
    fn point_lookup(
        &mut self,
        st: &State,
        node: &ast::NodePattern,
        prefix: &str,
        info: &NodeInfo,
    ) -> Result<Option<LogicalPlan>> {
        let Some(idx) = self.indexes else {
            return Ok(None);
        };
        let (Some(keys), Some(columns)) =
            (idx.keys.get(&info.label), idx.node_columns.get(&info.label))
        else {
            return Ok(None);
        };
        let Some(ExprKind::Map(entries)) = node.props.as_ref().map(|p| &p.kind) else {
            return Ok(None);
        };
        let Some((_, value)) = entries.iter().find(|(k, _)| k.name == info.key) else {
            return Ok(None);
        };
        if !st.unit || !matches!(value.kind, ExprKind::Literal(_) | ExprKind::Param(_)) {
            return Ok(None);
        }
        let empty = super::scope::Scope::default();
        let schema = datafusion::common::DFSchema::empty();
        let v = self.expr(value, &ExprCtx::new(&empty, &schema))?;
        if !self.type_of(&v, &schema)?.is_integer() {
            return Ok(None);
        }
        let lk = self.fresh("lookup");
        let input = LogicalPlanBuilder::values(vec![vec![cast(v, DataType::Int64)]])?
            .project(vec![col("column1").alias(&lk)])?
            .build()?;
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

    /// Binds a node variable to its columns and adds its property map's predicates.
    fn bind_node_var(
        &self,
        st: &mut State,
        prefix: &str,
        label: &str,
        node: &ast::NodePattern,
        preds: &mut Vec<Expr>,
    ) -> Result<()> {
        st.scope.bind(
            prefix,
            Binding::Node {
                label: label.to_string(),
                prefix: prefix.to_string(),
            },
        );
        if let Some(props) = &node.props {
            self.property_map_preds(st, prefix, props, Written::Labels(&node.labels), preds)?;
        }
        Ok(())
    }

    /// `{k: v, ...}` on a node or relationship: one equality per entry.
    fn property_map_preds(
        &self,
        st: &State,
        var: &str,
        props: &ast::Expr,
        written: Written<'_>,
        preds: &mut Vec<Expr>,
    ) -> Result<()> {
        let ExprKind::Map(entries) = &props.kind else {
            return sem_err!(
                InvalidParameterUse,
                props.span,
                "a parameter can't be a pattern's property map in MATCH (write {{key: $param.key}}, or use WHERE)"
            );
        };
        // A key none of the written labels (types) has is a typo; where the label is only
        // inferred, the property is null and the pattern matches nothing.
        if !self.options.lenient && !self.missing_props_null {
            let ents = self.entities();
            for (k, _) in entries {
                let has = |ps: &[(String, DataType)]| ps.iter().any(|(p, _)| p == &k.name);
                let (typo, what) = match written {
                    Written::Labels(ls) => (
                        !ls.is_empty()
                            && !ls.iter().any(|l| {
                                self.catalog
                                    .nodes
                                    .get(&l.name)
                                    .is_some_and(|n| has(&n.props))
                            }),
                        "label",
                    ),
                    Written::Types(ts) => (
                        !ts.is_empty()
                            && !ents.catalog.rels.iter().any(|r| {
                                ts.iter().any(|t| t.name == r.cfg.rel_type) && has(&r.props)
                            }),
                        "relationship type",
                    ),
                };
                if typo {
                    return sem_err!(
                        UnknownProperty,
                        k.span,
                        "Unknown property `{}`: no {what} written in the pattern has it",
                        k.name
                    );
                }
            }
        }
        let schema = st.plan.schema().clone();
        let cx = ExprCtx {
            no_aggregates: "in a pattern",
            ..ExprCtx::new(&st.scope, &schema)
        };
        for (k, v) in entries {
            let target = ast::Expr::new(ExprKind::Variable(var.to_string()), k.span);
            let prop = ast::Expr::new(ExprKind::Property(Box::new(target), k.clone()), k.span);
            let eq = ast::Expr::new(
                ExprKind::Binary(ast::BinaryOp::Eq, Box::new(prop), Box::new(v.clone())),
                k.span.union(&v.span),
            );
            preds.push(self.expr(&eq, &cx)?);
        }
        Ok(())
    }
}

/// The node a pattern's variable is already bound to, as `(prefix, label)`; `None` for a new
/// variable; an error when the variable holds something other than a node.
fn bound_node(st: &State, node: &ast::NodePattern) -> Result<Option<(String, String)>> {
    let Some(v) = &node.var else {
        return Ok(None);
    };
    match st.scope.get(&v.name) {
        None => Ok(None),
        Some(Binding::Node { prefix, label }) => Ok(Some((prefix.clone(), label.clone()))),
        Some(other) => sem_err!(
            VariableTypeConflict,
            v.span,
            "Variable `{}` is a {}, not a node",
            v.name,
            other.kind_name()
        ),
    }
}

/// One relationship of a path being lowered, with its two ends (the near one is bound).
struct Hop<'a> {
    rel: &'a ast::RelPattern,
    /// The relationship variable's column prefix.
    prefix: String,
    near_prefix: &'a str,
    near_label: &'a str,
    far: &'a ast::NodePattern,
    far_prefix: &'a str,
    far_label: &'a str,
}

/// What lowering a MATCH's hops collects for the filter above them.
#[derive(Default)]
struct MatchPreds {
    preds: Vec<Expr>,
    /// (table, prefix) of every single relationship, for uniqueness.
    rels: Vec<(usize, String)>,
    /// (tables, prefix) of every variable-length relationship (edge ids in a list).
    lists: Vec<(Vec<usize>, String)>,
    /// Some hop has no table for its labels: the MATCH has no rows.
    unsatisfiable: bool,
}

impl MatchPreds {
    /// The collected predicates plus relationship uniqueness within the clause: between
    /// single relationships of one table, and between variable-length lists (edge ids with
    /// their table, see `encode_eid`) and single relationships / other lists.
    fn uniqueness(&mut self) -> Vec<Expr> {
        let mut preds = std::mem::take(&mut self.preds);
        let rels = &self.rels;
        for i in 0..rels.len() {
            for j in i + 1..rels.len() {
                if rels[i].0 == rels[j].0 {
                    preds.push(col(&eid_col(&rels[i].1)).not_eq(col(&eid_col(&rels[j].1))));
                }
            }
        }
        for (k, (tables, pl)) in self.lists.iter().enumerate() {
            let list = col(&eids_col(pl));
            for (r, p) in rels {
                if tables.contains(r) {
                    let id = col(&eid_col(p)) + lit(encode_eid(*r, 0));
                    preds.push(Expr::Not(Box::new(nf::array_has(list.clone(), id))));
                }
            }
            for (t2, p2) in &self.lists[k + 1..] {
                if tables.iter().any(|t| t2.contains(t)) {
                    preds.push(Expr::Not(Box::new(nf::array_has_any(
                        list.clone(),
                        col(&eids_col(p2)),
                    ))));
                }
            }
        }
        preds
    }
}

/// Every column of a node, as a take of the graph operators (the key marked).
fn node_take(prefix: &str, info: &NodeInfo) -> TakeSpec {
    let all: Vec<_> = info
        .props
        .iter()
        .map(|(p, t)| (p.clone(), prop_col(prefix, p), t.clone()))
        .collect();
    TakeSpec {
        var: prefix.to_string(),
        take: (0..all.len()).collect(),
        key: info.props.iter().position(|(p, _)| p == &info.key),
        all,
    }
}

/// The labels or types written on a pattern element (none: inferred).
#[derive(Clone, Copy)]
enum Written<'a> {
    Labels(&'a [ast::Ident]),
    Types(&'a [ast::Ident]),
}

fn col_name(name: &str) -> datafusion::common::Column {
    datafusion::common::Column::new_unqualified(name)
}
