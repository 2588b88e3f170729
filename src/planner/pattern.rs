//! MATCH lowering on the relational path: node scans, and each hop as joins
//! `node -> edge table -> node`.

use super::expr::{col, ExprCtx};
use super::scope::{dst_col, eid_col, eids_col, prop_col, src_col, Binding};
use super::{Lowerer, State};
use crate::catalog::{NodeInfo, RelInfo};
use crate::config::RelTable;
use crate::error::Result;
use crate::operators::csr_expand::{CsrData, CsrExpand, TakeSpec};
use crate::operators::node_lookup::NodeLookup;
use crate::operators::var_length::{encode_eid, VarHop, VarLengthExpand};
use crate::rewrite::branching::label_reach;
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
use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

/// Near / far endpoint columns of an edge scan as walked (`src`->`dst` or reversed).
fn near_col(prefix: &str) -> String {
    format!("{prefix}__#near")
}
fn far_col(prefix: &str) -> String {
    format!("{prefix}__#far")
}

/// The resolved shape of one path: a label per node, a table per relationship.
/// What each node and relationship of a MATCH can be (see [`Lowerer::candidates`]).
pub(crate) struct Candidates<'p> {
    /// Every node occurrence, path by path.
    pub nodes: Vec<&'p ast::NodePattern>,
    /// Every relationship as (near occurrence, far occurrence, pattern).
    pub steps: Vec<(usize, usize, &'p ast::RelPattern)>,
    /// Candidate labels per node occurrence.
    pub labels: Vec<BTreeSet<String>>,
    /// Candidate tables (catalog indexes) per relationship.
    pub rels: Vec<BTreeSet<usize>>,
    /// False when no combination can match (the MATCH yields no rows).
    pub satisfiable: bool,
}

struct Resolved {
    labels: Vec<String>,
    rels: Vec<usize>,
    /// Per relationship, every candidate table: what a variable-length one walks.
    tables: Vec<Vec<usize>>,
    /// False when no combination of tables can match (the MATCH yields no rows).
    satisfiable: bool,
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

    /// Lowers one MATCH clause (not OPTIONAL): branched when its nodes may have several
    /// labels or its relationships come from several tables (`super::branch`), each branch
    /// re-rooted first when switched on.
    pub fn lower_match(&mut self, st: State, m: &ast::Match) -> Result<State> {
        for path in &m.patterns {
            if let Some(n) = &path.name {
                return sem_err!(Unsupported, n.span, "unsupported: named path `{}`", n.name);
            }
        }
        if let Some(st) = self.lower_branches(&st, m)? {
            return Ok(st);
        }
        self.lower_match_one(st, m, true)
    }

    /// Lowers a MATCH that needs no branching, re-rooted first when switched on; its WHERE
    /// too when `with_where`.
    pub(crate) fn lower_match_one(
        &mut self,
        st: State,
        m: &ast::Match,
        with_where: bool,
    ) -> Result<State> {
        if self.options.reroot {
            let scope = st.scope.clone();
            let is_bound = |v: &str| scope.get(v).is_some();
            let mut counter = self.counter;
            let reordered =
                crate::rewrite::pattern_order::reorder(m, &is_bound, self.catalog, &mut || {
                    counter += 1;
                    format!("__anon{counter}")
                });
            self.counter = counter;
            if let Some(r) = reordered {
                let roots: Vec<String> = r
                    .roots
                    .iter()
                    .map(|(v, why)| format!("{v} ({why})"))
                    .collect();
                self.notes.push(format!(
                    "{}  -- root: {}",
                    ast::Clause::Match(r.clause.clone()),
                    roots.join(", ")
                ));
                return self.lower_match_as_written(st, &r.clause, with_where);
            }
        }
        self.lower_match_as_written(st, m, with_where)
    }

    fn lower_match_as_written(
        &mut self,
        st: State,
        m: &ast::Match,
        with_where: bool,
    ) -> Result<State> {
        let resolved = self.resolve_match(&st, &m.patterns)?;
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
        all_resolved: Vec<Resolved>,
        with_where: bool,
    ) -> Result<State> {
        let mut preds: Vec<Expr> = Vec::new();
        // (rel table, prefix) of every relationship matched in this clause, for uniqueness.
        let mut matched_rels: Vec<(usize, String)> = Vec::new();
        // Variable-length relationships: (table, prefix) with their edge ids in a list.
        let mut matched_lists: Vec<(Vec<usize>, String)> = Vec::new();
        let mut new_rel_vars: BTreeSet<String> = BTreeSet::new();
        let mut unsatisfiable = false;
        for (path, resolved) in m.patterns.iter().zip(all_resolved) {
            unsatisfiable |= !resolved.satisfiable;
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
                &mut preds,
            )?;
            for (i, (rel, node)) in path.steps.iter().enumerate() {
                let near_label = &resolved.labels[i];
                let far_label = &resolved.labels[i + 1];
                let rel_idx = resolved.rels[i];
                let info = self.entities().rel(rel_idx).clone();
                let prefix = match &rel.var {
                    Some(v) => {
                        if let Some(b) = st.scope.get(&v.name) {
                            return match b {
                                Binding::Rel { .. } | Binding::Rels { .. }
                                    if !new_rel_vars.contains(&v.name) =>
                                {
                                    sem_err!(
                                    Unsupported,
                                    v.span,
                                    "unsupported: re-matching relationship variable `{}` bound by an earlier clause",
                                    v.name
                                )
                                }
                                Binding::Rel { .. } | Binding::Rels { .. } => sem_err!(
                                    VariableAlreadyBound,
                                    v.span,
                                    "Relationship variable `{}` is used twice in one pattern",
                                    v.name
                                ),
                                other => sem_err!(
                                    VariableTypeConflict,
                                    v.span,
                                    "Variable `{}` is a {}, not a relationship",
                                    v.name,
                                    other.kind_name()
                                ),
                            };
                        }
                        new_rel_vars.insert(v.name.clone());
                        v.name.clone()
                    }
                    None => self.fresh("anonr"),
                };
                if let Some((lo, hi)) = rel.length {
                    let tables = resolved.tables[i].clone();
                    self.var_length_hop(
                        &mut st,
                        &tables,
                        rel,
                        (lo, hi),
                        (&node_prefixes[i], near_label),
                        (&node_prefixes[i + 1], far_label),
                        node,
                        &prefix,
                        &mut preds,
                    )?;
                    matched_lists.push((tables, prefix.clone()));
                    continue;
                }
                // Orientation(s): walking from the near node, is it the edge's src or dst?
                let mut orients = Vec::new();
                let fits = |a: &str, b: &str| {
                    rel_idx == usize::MAX || (a == info.cfg.from && b == info.cfg.to)
                };
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
                    unsatisfiable = true;
                }
                let near_prefix = &node_prefixes[i];
                let far_prefix = &node_prefixes[i + 1];
                if orients_fit {
                    if let Some(data) = self.csr_data(rel_idx, near_label, far_label) {
                        self.csr_hop(
                            &mut st,
                            &info,
                            data,
                            orients,
                            near_prefix,
                            near_label,
                            &prefix,
                            rel,
                            node,
                            far_prefix,
                            far_label,
                            &mut preds,
                        )?;
                        matched_rels.push((rel_idx, prefix.clone()));
                        continue;
                    }
                }
                let mut edges = self.scan_rel(&info, &prefix, orients[0])?;
                if orients.len() == 2 {
                    // Undirected: both orientations, a self-loop only once.
                    let back = self
                        .scan_rel(&info, &prefix, true)?
                        .filter(col(&src_col(&prefix)).not_eq(col(&dst_col(&prefix))))?
                        .build()?;
                    edges = edges.union(back)?;
                }
                let edges = edges.build()?;
                let near_key = prop_col(near_prefix, &self.entities().node(near_label).key);
                st.plan = LogicalPlanBuilder::from(st.plan)
                    .join(
                        edges,
                        JoinType::Inner,
                        (
                            vec![col_name(&near_key)],
                            vec![col_name(&near_col(&prefix))],
                        ),
                        None,
                    )?
                    .build()?;
                st.unit = false;
                st.scope.bind(
                    &prefix,
                    Binding::Rel {
                        rel: rel_idx,
                        prefix: prefix.clone(),
                    },
                );
                if let Some(props) = &rel.props {
                    self.property_map_preds(
                        &st,
                        &prefix,
                        props,
                        Written::Types(&rel.types),
                        &mut preds,
                    )?;
                }
                matched_rels.push((rel_idx, prefix.clone()));
                // Far node: join a new scan, or check a bound one.
                self.bind_far_node(&mut st, node, far_prefix, far_label, &prefix, &mut preds)?;
            }
        }
        // Relationship uniqueness within the clause.
        for i in 0..matched_rels.len() {
            for j in i + 1..matched_rels.len() {
                if matched_rels[i].0 == matched_rels[j].0 {
                    preds.push(
                        col(&eid_col(&matched_rels[i].1)).not_eq(col(&eid_col(&matched_rels[j].1))),
                    );
                }
            }
        }
        // ... and between variable-length lists (edge ids with their table, see
        // `encode_eid`) and single relationships / other lists.
        for (k, (tables, pl)) in matched_lists.iter().enumerate() {
            let list = col(&eids_col(pl));
            for (r, p) in &matched_rels {
                if tables.contains(r) {
                    let id = col(&eid_col(p)) + lit(encode_eid(*r, 0));
                    preds.push(Expr::Not(Box::new(nf::array_has(list.clone(), id))));
                }
            }
            for (t2, p2) in &matched_lists[k + 1..] {
                if tables.iter().any(|t| t2.contains(t)) {
                    preds.push(Expr::Not(Box::new(nf::array_has_any(
                        list.clone(),
                        col(&eids_col(p2)),
                    ))));
                }
            }
        }
        if unsatisfiable {
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
    #[allow(clippy::too_many_arguments)]
    fn var_length_hop(
        &mut self,
        st: &mut State,
        tables: &[usize],
        rel: &ast::RelPattern,
        (lo, hi): (Option<u64>, Option<u64>),
        (near_prefix, near_label): (&str, &str),
        (far_prefix, far_label): (&str, &str),
        node: &ast::NodePattern,
        prefix: &str,
        preds: &mut Vec<Expr>,
    ) -> Result<()> {
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
            _ => self.unroll_var_length(
                st,
                tables,
                rel,
                (min, max),
                (near_prefix, near_label),
                (far_prefix, far_label),
                node,
                prefix,
            )?,
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
    #[allow(clippy::too_many_arguments)]
    fn unroll_var_length(
        &mut self,
        st: &mut State,
        tables: &[usize],
        rel: &ast::RelPattern,
        (min, max): (u64, Option<u64>),
        (near_prefix, near_label): (&str, &str),
        (far_prefix, far_label): (&str, &str),
        node: &ast::NodePattern,
        prefix: &str,
    ) -> Result<()> {
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
        let near_info = self.entities().node(near_label).clone();
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
        let ident = |n: &str| ast::Ident::new(n, rel.span);
        let mut branches = Vec::new();
        for k in min..=cap {
            let (plan, eid_exprs) = if k == 0 {
                if near_label != far_label {
                    continue;
                }
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
                (b.build()?, vec![])
            } else {
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
                        _ => return Err(crate::Error::Plan(format!("chain without `{r}`"))),
                    });
                }
                (sub.plan, ids)
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
        near_prefix: &str,
        near_label: &str,
        prefix: &str,
        rel: &ast::RelPattern,
        node: &ast::NodePattern,
        far_prefix: &str,
        far_label: &str,
        preds: &mut Vec<Expr>,
    ) -> Result<()> {
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

    /// The labels each node of a MATCH can have and the tables each relationship can come
    /// from, given explicit labels and types, bound variables and the configured endpoints
    /// (constraint propagation over the whole clause: paths sharing a variable constrain each
    /// other).
    pub(crate) fn candidates<'p>(
        &self,
        st: &State,
        paths: &'p [ast::PathPattern],
    ) -> Result<Candidates<'p>> {
        let cat = self.catalog;
        // Every node occurrence, and every relationship as (near occurrence, far occurrence).
        let mut nodes: Vec<&ast::NodePattern> = Vec::new();
        let mut steps: Vec<(usize, usize, &ast::RelPattern)> = Vec::new();
        for path in paths {
            nodes.push(&path.start);
            for (r, n) in &path.steps {
                steps.push((nodes.len() - 1, nodes.len(), r));
                nodes.push(n);
            }
        }
        // Candidate labels per node, shared by nodes with the same variable.
        let mut cands: Vec<BTreeSet<String>> = Vec::new();
        let mut known_unknown = false;
        for n in &nodes {
            let mut c: BTreeSet<String> = cat.nodes.keys().cloned().collect();
            if let Some(labels) = bound_labels(st, n)? {
                c = labels.into_iter().collect();
            }
            // `(m:Post:Comment)`: any of the labels (one label per node table).
            let mut named = BTreeSet::new();
            for l in &n.labels {
                named.insert(l.name.clone());
                if !cat.nodes.contains_key(&l.name) {
                    if !self.options.lenient {
                        return sem_err!(
                            UnknownLabel,
                            l.span,
                            "Unknown label `{}` (labels: {})",
                            l.name,
                            cat.nodes.keys().cloned().collect::<Vec<_>>().join(", ")
                        );
                    }
                    known_unknown |= n.labels.len() == 1;
                }
            }
            if !n.labels.is_empty() {
                c.retain(|x| named.contains(x));
            }
            cands.push(c);
        }
        // Same variable twice in the path: intersect.
        for i in 0..nodes.len() {
            for j in i + 1..nodes.len() {
                if let (Some(a), Some(b)) = (&nodes[i].var, &nodes[j].var) {
                    if a.name == b.name {
                        let inter: BTreeSet<String> =
                            cands[i].intersection(&cands[j]).cloned().collect();
                        cands[i] = inter.clone();
                        cands[j] = inter;
                    }
                }
            }
        }
        let mut rel_cands: Vec<BTreeSet<usize>> = Vec::new();
        for (_, _, rel) in &steps {
            let mut c: BTreeSet<usize> = (0..cat.rels.len()).collect();
            if !rel.types.is_empty() {
                for t in &rel.types {
                    if !cat.config.has_type(&t.name) {
                        if !self.options.lenient {
                            return sem_err!(
                                UnknownRelationshipType,
                                t.span,
                                "Unknown relationship type `{}` (types: {})",
                                t.name,
                                cat.rel_types().join(", ")
                            );
                        }
                        known_unknown = true;
                    }
                }
                c.retain(|&i| rel.types.iter().any(|t| t.name == cat.rels[i].cfg.rel_type));
            }
            rel_cands.push(c);
        }
        // Propagate until nothing changes.
        loop {
            let mut changed = false;
            for (k, &(a, b, rel)) in steps.iter().enumerate() {
                // A zero-length step (`*0`) joins a node to itself: same labels, any table.
                if matches!(rel.length, Some((_, Some(0)))) {
                    if cands[a] != cands[b] {
                        let inter: BTreeSet<String> =
                            cands[a].intersection(&cands[b]).cloned().collect();
                        cands[a] = inter.clone();
                        cands[b] = inter;
                        changed = true;
                    }
                    continue;
                }
                // Variable length: the ends are labels reachable over the tables in as many
                // steps as the bounds allow; the tables, those on some such path.
                if let Some((lo, hi)) = rel.length {
                    let (lo, hi) = (lo.unwrap_or(1), hi.unwrap_or(u64::MAX));
                    let tables: Vec<&RelTable> =
                        rel_cands[k].iter().map(|&i| &cat.rels[i].cfg).collect();
                    let fwd = label_reach(&cands[a], &tables, rel.direction, false, lo, hi);
                    let bwd = label_reach(&cands[b], &tables, rel.direction, true, lo, hi);
                    let new_b: BTreeSet<String> = cands[b].intersection(&fwd).cloned().collect();
                    let new_a: BTreeSet<String> = cands[a].intersection(&bwd).cloned().collect();
                    let near = label_reach(&new_a, &tables, rel.direction, false, 0, hi - 1);
                    let far = label_reach(&new_b, &tables, rel.direction, true, 0, hi - 1);
                    let kept: BTreeSet<usize> = rel_cands[k]
                        .iter()
                        .copied()
                        .filter(|&i| {
                            let r = &cat.rels[i].cfg;
                            let out = near.contains(&r.from) && far.contains(&r.to);
                            let inc = near.contains(&r.to) && far.contains(&r.from);
                            match rel.direction {
                                Direction::Outgoing => out,
                                Direction::Incoming => inc,
                                Direction::Both => out || inc,
                            }
                        })
                        .collect();
                    changed |= kept != rel_cands[k] || new_a != cands[a] || new_b != cands[b];
                    rel_cands[k] = kept;
                    cands[a] = new_a;
                    cands[b] = new_b;
                    continue;
                }
                let fits = |i: usize, cands: &Vec<BTreeSet<String>>| {
                    let r = &cat.rels[i].cfg;
                    let out = cands[a].contains(&r.from) && cands[b].contains(&r.to);
                    let inc = cands[a].contains(&r.to) && cands[b].contains(&r.from);
                    match rel.direction {
                        Direction::Outgoing => out,
                        Direction::Incoming => inc,
                        Direction::Both => out || inc,
                    }
                };
                let before = rel_cands[k].len();
                let kept: BTreeSet<usize> = rel_cands[k]
                    .iter()
                    .copied()
                    .filter(|&i| fits(i, &cands))
                    .collect();
                rel_cands[k] = kept;
                changed |= rel_cands[k].len() != before;
                let mut la = BTreeSet::new();
                let mut lb = BTreeSet::new();
                for &i in &rel_cands[k] {
                    let r = &cat.rels[i].cfg;
                    if matches!(rel.direction, Direction::Outgoing | Direction::Both)
                        && cands[a].contains(&r.from)
                        && cands[b].contains(&r.to)
                    {
                        la.insert(r.from.clone());
                        lb.insert(r.to.clone());
                    }
                    if matches!(rel.direction, Direction::Incoming | Direction::Both)
                        && cands[a].contains(&r.to)
                        && cands[b].contains(&r.from)
                    {
                        la.insert(r.to.clone());
                        lb.insert(r.from.clone());
                    }
                }
                for (idx, new) in [(a, la), (b, lb)] {
                    if new.len() != cands[idx].len() {
                        cands[idx] = new;
                        changed = true;
                    }
                }
            }
            // Keep nodes sharing a variable in sync.
            for i in 0..nodes.len() {
                for j in i + 1..nodes.len() {
                    if let (Some(x), Some(y)) = (&nodes[i].var, &nodes[j].var) {
                        if x.name == y.name && cands[i] != cands[j] {
                            let inter: BTreeSet<String> =
                                cands[i].intersection(&cands[j]).cloned().collect();
                            cands[i] = inter.clone();
                            cands[j] = inter;
                            changed = true;
                        }
                    }
                }
            }
            if !changed {
                break;
            }
        }
        // A variable-length step from length 0 needs no table: the path may be empty.
        let satisfiable = !known_unknown
            && cands.iter().all(|c| !c.is_empty())
            && steps
                .iter()
                .zip(&rel_cands)
                .all(|((_, _, r), c)| !c.is_empty() || matches!(r.length, Some((Some(0), _))));
        Ok(Candidates {
            nodes,
            steps,
            labels: cands,
            rels: rel_cands,
            satisfiable,
        })
    }

    /// Picks one label per node and one table per relationship for all paths of a MATCH (see
    /// [`Self::candidates`]); several possible ones are an error here (the MATCH branches
    /// before it gets here).
    fn resolve_match(&self, st: &State, paths: &[ast::PathPattern]) -> Result<Vec<Resolved>> {
        let cat = self.catalog;
        let Candidates {
            nodes,
            steps,
            labels: cands,
            rels: rel_cands,
            satisfiable,
        } = self.candidates(st, paths)?;
        if satisfiable {
            for (i, c) in cands.iter().enumerate() {
                if c.len() > 1 {
                    let n = nodes[i];
                    return sem_err!(
                        AmbiguousPattern,
                        n.span,
                        "node pattern {n} could have any of the labels {}; give it a label (branching over labels is planned)",
                        c.iter().cloned().collect::<Vec<_>>().join(", ")
                    );
                }
            }
            for (k, c) in rel_cands.iter().enumerate() {
                if c.len() > 1 && steps[k].2.length.is_none() {
                    let r = steps[k].2;
                    return sem_err!(
                        AmbiguousPattern,
                        r.span,
                        "relationship pattern {r} matches several relationship tables ({}); give it a type and endpoint labels (branching is planned)",
                        c.iter()
                            .map(|&i| {
                                let r = &cat.rels[i].cfg;
                                format!("{}:{}->{}", r.rel_type, r.from, r.to)
                            })
                            .collect::<Vec<_>>()
                            .join(", ")
                    );
                }
            }
        }
        // Unsatisfiable: keep whatever real tables were named so properties still resolve;
        // the MATCH gets a `false` filter.
        let explicit: BTreeMap<usize, String> = nodes
            .iter()
            .enumerate()
            .filter_map(|(i, n)| n.labels.first().map(|l| (i, l.name.clone())))
            .collect();
        // A variable's label written at one of its occurrences holds at all of them (a
        // re-rooted MATCH writes it at the first only).
        let mut var_label: BTreeMap<&str, String> = BTreeMap::new();
        for (i, n) in nodes.iter().enumerate() {
            if let (Some(v), Some(l)) = (&n.var, explicit.get(&i)) {
                var_label
                    .entry(v.name.as_str())
                    .or_insert_with(|| l.clone());
            }
        }
        let labels: Vec<String> = cands
            .iter()
            .enumerate()
            .map(|(i, c)| {
                if satisfiable {
                    return c.iter().next().cloned().unwrap_or_default();
                }
                if let Some(Binding::Node { label, .. }) =
                    nodes[i].var.as_ref().and_then(|v| st.scope.get(&v.name))
                {
                    return label.clone();
                }
                explicit
                    .get(&i)
                    .or_else(|| {
                        nodes[i]
                            .var
                            .as_ref()
                            .and_then(|v| var_label.get(v.name.as_str()))
                    })
                    .filter(|l| cat.nodes.contains_key(*l))
                    .cloned()
                    .unwrap_or_default()
            })
            .collect();
        let rels: Vec<usize> = rel_cands
            .iter()
            .enumerate()
            .map(|(k, c)| {
                if satisfiable {
                    return *c.iter().next().unwrap_or(&usize::MAX);
                }
                let r = steps[k].2;
                cat.rels
                    .iter()
                    .position(|x| r.types.iter().any(|t| t.name == x.cfg.rel_type))
                    .unwrap_or(usize::MAX)
            })
            .collect();
        // Split back per path.
        let mut out = Vec::new();
        let (mut ni, mut ri) = (0, 0);
        for path in paths {
            let n = path.steps.len();
            out.push(Resolved {
                labels: labels[ni..ni + n + 1].to_vec(),
                rels: rels[ri..ri + n].to_vec(),
                tables: rel_cands[ri..ri + n]
                    .iter()
                    .map(|c| c.iter().copied().collect())
                    .collect(),
                satisfiable,
            });
            ni += n + 1;
            ri += n;
        }
        Ok(out)
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

/// The labels a bound node variable can have: one, or several after a MATCH that branched;
/// `None` for a new variable; an error when the variable holds something other than a node.
fn bound_labels(st: &State, node: &ast::NodePattern) -> Result<Option<Vec<String>>> {
    if let Some(v) = &node.var {
        if let Some(Binding::Nodes { labels, .. }) = st.scope.get(&v.name) {
            return Ok(Some(labels.clone()));
        }
    }
    Ok(bound_node(st, node)?.map(|(_, l)| vec![l]))
}

/// The most relationships a path over `tables` walked in `dir` can have, when the label graph
/// they form has no cycle (a path then can't be longer than its longest walk); `None` when it
/// has one (any length, up to the edges there are).
fn longest_walk(tables: &[&RelTable], dir: Direction) -> Option<u64> {
    if dir == Direction::Both {
        return None;
    }
    let edges: Vec<(&str, &str)> = tables
        .iter()
        .map(|t| (t.from.as_str(), t.to.as_str()))
        .collect();
    let labels: BTreeSet<&str> = edges.iter().flat_map(|&(a, b)| [a, b]).collect();
    // Longest walk ending at each label, relaxed |labels| times; still growing means a cycle.
    let mut best: BTreeMap<&str, u64> = labels.iter().map(|&l| (l, 0)).collect();
    for round in 0..=labels.len() {
        let mut changed = false;
        for &(a, b) in &edges {
            let cand = best[a] + 1;
            if cand > best[b] {
                best.insert(b, cand);
                changed = true;
            }
        }
        if !changed {
            return best.values().max().copied();
        }
        if round == labels.len() {
            break;
        }
    }
    None
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
