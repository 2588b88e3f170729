//! MATCH lowering on the relational path: node scans, and each hop as joins
//! `node -> edge table -> node`.

use super::expr::{col, ExprCtx};
use super::path::NamedPath;
use super::scope::PathShape;
use super::scope::{dst_col, eid_col, eids_col, prop_col, src_col, Binding};
use super::{Lowerer, State};
use crate::binder::{BoundVar, ResolvedPath};
use crate::catalog::NodeInfo;
use crate::error::Result;
use crate::operators::csr_expand::TakeSpec;
use crate::operators::var_length::encode_eid;
use crate::rewrite::clause::{MatchPlan, RewriteOptions, SearchFilters};
use crate::rewrite::unroll::{Chains, Traversable};
use crate::rewrite::{KeyLookups, MatchShape, Planned, PreparedMatch};
use crate::sem_err;
use arrow::datatypes::DataType;
use cypher::ast::{self, Direction, ExprKind};
use datafusion::common::JoinType;
use datafusion::functions_nested::expr_fn as nf;
use datafusion::logical_expr::{lit, Expr, LogicalPlanBuilder};
use std::collections::HashMap;
use std::sync::Arc;

/// Near / far endpoint columns of an edge scan as walked (`src`->`dst` or reversed).
pub(super) fn near_col(prefix: &str) -> String {
    format!("{prefix}__#near")
}
pub(super) fn far_col(prefix: &str) -> String {
    format!("{prefix}__#far")
}

/// What the caller of a MATCH's lowering asks of it.
#[derive(Debug, Clone)]
pub(crate) struct Search {
    /// Re-rooting allowed: the option, or what the MATCH this one is lowered for allows.
    pub reroot: bool,
    /// A shortest-path search, with the filters it applies to the path's elements.
    pub shortest: Option<(ast::Shortest, SearchFilters)>,
    /// An OPTIONAL MATCH of one hop, lowered as a left outer expansion of its input.
    pub optional: bool,
}

/// One MATCH being lowered: what its hops need beyond their own pattern.
#[derive(Clone)]
pub(crate) struct MatchCx {
    /// Re-rooting for the MATCHes its lowering makes (an unrolled variable-length hop).
    pub reroot: bool,
    /// The MATCH is this shortest-path search, with the filters it applies to the path's
    /// nodes and relationships.
    pub shortest: Option<(ast::Shortest, SearchFilters)>,
    /// Its named paths, bound once their elements are.
    pub named_paths: Vec<NamedPath>,
    /// Per variable-length relationship variable that needs its elements as values (a
    /// named path's segment, or a named list): their shape.
    pub segment_shapes: HashMap<String, Arc<PathShape>>,
    /// One branch of a MATCH that branched: a property its label lacks is null (another
    /// label of the same variable has it), not an error.
    pub branch: bool,
    /// Hops as joins and nodes as scans, not on the indexes (a pattern with no rows: the
    /// indexes' operators need the labels they index).
    pub joins: bool,
    /// Its one hop a left outer expansion (see [`Search::optional`]).
    pub optional: bool,
}

impl<'c> Lowerer<'c> {
    /// Lowers one MATCH clause (not OPTIONAL): bound, then branched when its nodes may have
    /// several labels or its relationships come from several tables (`super::branch`), each
    /// branch re-rooted first when switched on.
    pub fn lower_match(&mut self, st: State, m: &ast::Match) -> Result<State> {
        let search = Search {
            reroot: self.options.reroot,
            shortest: None,
            optional: false,
        };
        self.lower_match_for(st, m, &search)
    }

    /// [`Self::lower_match`] searched as `search` says.
    pub(crate) fn lower_match_for(
        &mut self,
        st: State,
        m: &ast::Match,
        search: &Search,
    ) -> Result<State> {
        let plan = self.prepared_match(&st, m)?;
        self.lower_match_plan(st, plan, search)
    }

    /// `m` as the rewrites prepared it, with what the binder had bound before it (which is
    /// what `st` binds: several entries share a span where the binder saw a MATCH in
    /// several scopes).
    fn prepared_match(&self, st: &State, m: &ast::Match) -> Result<MatchPlan> {
        let at = (m.span.start, m.span.end);
        let same = |b: &ast::Match| {
            (b.span.start, b.span.end) == at && b.patterns == m.patterns && b.optional == m.optional
        };
        let mut mentioned: Vec<&str> = Vec::new();
        for v in m.patterns.iter().flat_map(|p| p.variables()) {
            if !mentioned.contains(&v.name.as_str()) {
                mentioned.push(&v.name);
            }
        }
        let here: Vec<Option<BoundVar>> = (mentioned.iter())
            .map(|v| st.scope.get(v).map(|b| b.bound_var()))
            .collect();
        let found = (self.matches.iter())
            .filter(|(b, _)| same(&b.clause))
            .find(|(b, _)| {
                mentioned.iter().zip(&here).all(|(v, h)| {
                    let had = b.scope.iter().find(|(n, _)| n == v).map(|(_, b)| b);
                    had == h.as_ref()
                })
            });
        let Some((bound, plan)) = found else {
            return Err(crate::Error::Internal(format!(
                "{} was not prepared with {mentioned:?} bound as {here:?}",
                ast::Clause::Match(m.clone())
            )));
        };
        if bound.clause.where_ == m.where_ {
            return Ok(plan.clone());
        }
        // A pattern comprehension whose WHERE reads an outer relationship value's end node
        // has it computed first, once per outer row: the conjuncts holding it, lowered after
        // the match, read that column instead.
        match plan {
            MatchPlan::ThenFilter { plain, pred } => {
                let later: Vec<_> = (pred.conjuncts().iter())
                    .map(|c| (c.span.start, c.span.end))
                    .collect();
                let conjuncts = m.where_.iter().flat_map(|w| w.conjuncts());
                let now = conjuncts.filter(|c| later.contains(&(c.span.start, c.span.end)));
                Ok(MatchPlan::ThenFilter {
                    plain: plain.clone(),
                    pred: ast::Expr::associative(ast::BinaryOp::And, now.cloned().collect())
                        .unwrap_or_else(|| pred.clone()),
                })
            }
            _ => Err(crate::Error::Internal(format!(
                "{} was prepared with another WHERE",
                ast::Clause::Match(m.clone())
            ))),
        }
    }

    /// What the rewrites need to know of how this query is planned.
    pub(crate) fn rewrite_options(&self) -> RewriteOptions<'c> {
        RewriteOptions {
            lenient: self.options.lenient,
            reroot: self.options.reroot,
            // Both read a deferred index only when a query's hop or lookup asks for it.
            traversable: self.indexes.map(|indexes| Traversable { indexes }),
            max_var_length: self.options.max_var_length,
            lookup_labels: KeyLookups {
                candidates: (self.catalog.nodes.values())
                    .filter(|n| self.identity_lookup_possible(&n.label))
                    .map(|n| n.label.clone())
                    .collect(),
                indexes: self.indexes,
            },
        }
    }

    /// Lowers a prepared MATCH.
    pub(super) fn lower_match_plan(
        &mut self,
        st: State,
        plan: MatchPlan,
        search: &Search,
    ) -> Result<State> {
        match plan {
            MatchPlan::ThenFilter { plain, pred } => {
                let st = self.lower_match_plan(st, *plain, search)?;
                self.filter_with_subqueries(st, &pred)
            }
            MatchPlan::ValueNodes { nodes, then } => {
                let schema = st.plan.schema().clone();
                for (fresh, v) in nodes {
                    let Some(Binding::Value { col: c }) = st.scope.get(&v.name) else {
                        return Err(crate::Error::Internal(format!("`{}` is no value", v.name)));
                    };
                    value_may_be(&schema, c, &v, "__label", "node")?;
                    if names_node(&schema, c) {
                        self.value_nodes.insert(fresh, c.clone());
                    }
                }
                self.lower_match_plan(st, *then, search)
            }
            MatchPlan::Shortest {
                rest,
                paths,
                where_,
            } => self.lower_shortest_match(st, rest, paths, where_),
            MatchPlan::Prepared { clause, prepared } => {
                self.lower_prepared(st, &clause, prepared, search)
            }
        }
    }

    /// Lowers an ordinary MATCH `m` as its rewrites prepared it.
    fn lower_prepared(
        &mut self,
        st: State,
        m: &ast::Match,
        prepared: PreparedMatch,
        search: &Search,
    ) -> Result<State> {
        // A single hop's variable holding a value is matched again as a relationship: the
        // value must be able to be one.
        let schema = st.plan.schema().clone();
        for (r, _) in m.patterns.iter().flat_map(|p| p.steps.iter()) {
            if let (Some(v), None) = (&r.var, r.length) {
                if let Some(Binding::Value { col: c }) = st.scope.get(&v.name) {
                    value_may_be(&schema, c, v, "__type", "relationship")?;
                }
            }
        }
        // Named paths: their elements named, the paths bound once the elements are.
        let mut named_paths = self.named_paths_of(prepared.paths);
        let segment_shapes =
            self.shape_paths(&prepared.graph, &mut named_paths, &prepared.lists)?;
        debug_assert_eq!(
            prepared.reroot,
            search.reroot && segment_shapes.is_empty() && search.shortest.is_none(),
            "the rewrites and the planner disagree on the walk order of {}",
            ast::Clause::Match(m.clone())
        );
        self.notes.extend(prepared.notes);
        let mx = MatchCx {
            reroot: prepared.reroot,
            shortest: search.shortest.clone(),
            named_paths,
            segment_shapes,
            branch: false,
            joins: false,
            optional: search.optional,
        };
        let graph = prepared.graph;
        match prepared.shape {
            MatchShape::One(planned) => self.lower_planned(st, planned, true, &mx),
            MatchShape::Branches(branches) => self.lower_branches(&st, &graph, branches, &mx),
            MatchShape::Empty => self.no_branches(&st, &graph, &mx),
        }
    }

    /// Lowers one ordinary pattern of a prepared MATCH; its WHERE too when `with_where`.
    pub(crate) fn lower_planned(
        &mut self,
        st: State,
        planned: Planned,
        with_where: bool,
        mx: &MatchCx,
    ) -> Result<State> {
        let m = &planned.graph.clause;
        let chains = &planned.chains;
        if planned.resolved.iter().all(|r| r.satisfiable) {
            return self.lower_resolved_match(st, m, (planned.resolved, chains), with_where, mx);
        }
        // Some hop has no table for its labels: the MATCH has no rows. Planned as joins, which
        // keep every column of the chain whatever labels resolution settled on (the indexes'
        // operators need the labels they index); DataFusion turns it into an empty relation.
        let mx = MatchCx {
            joins: true,
            ..mx.clone()
        };
        self.lower_resolved_match(st, m, (planned.resolved, chains), with_where, &mx)
    }

    fn lower_resolved_match(
        &mut self,
        mut st: State,
        m: &ast::Match,
        (all_resolved, chains): (Vec<ResolvedPath>, &Chains),
        with_where: bool,
        mx: &MatchCx,
    ) -> Result<State> {
        let mut acc = MatchPreds::default();
        for (pi, (path, resolved)) in m.patterns.iter().zip(all_resolved).enumerate() {
            acc.unsatisfiable |= !resolved.satisfiable;
            // A bound node's columns are its binding's (an unrolled hop's chain names its
            // ends apart from the variables they stand for).
            let node_prefixes: Vec<String> = path
                .nodes()
                .map(|n| match &n.var {
                    Some(v) => match st.scope.get(&v.name) {
                        Some(b @ (Binding::Node { .. } | Binding::Nodes { .. })) => {
                            b.prefix().to_string()
                        }
                        _ => v.name.clone(),
                    },
                    None => self.fresh("anon"),
                })
                .collect();
            // First node.
            self.bind_node(
                &mut st,
                &path.start,
                (&node_prefixes[0], &resolved.labels[0]),
                &mut acc.preds,
                mx,
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
                    let chains = chains.get(&(pi, i));
                    self.var_length_hop(&mut st, (&tables, chains), &hop, &mut acc.preds, mx)?;
                    acc.lists.push((tables, hop.prefix));
                } else {
                    self.fixed_hop(&mut st, resolved.rels[i], &hop, &mut acc, mx)?;
                }
            }
        }
        let mut preds = acc.uniqueness(m.unique_within.as_deref());
        if acc.unsatisfiable {
            preds.push(lit(false));
        }
        if with_where {
            self.bind_named_paths(&mut st, &mx.named_paths)?;
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
        if orients_fit && !mx.joins {
            if let Some(data) = self.csr_data(rel_idx, near_label, far_label) {
                return self.csr_hop(st, &info, data, orients, hop, &mut acc.preds, mx);
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
            let written = Written::Types(&rel.types);
            self.property_map_preds(st, prefix, props, written, preds, mx)?;
        }
        // Far node: join a new scan, or check a bound one.
        self.bind_far_node(st, node, (far_prefix, far_label), prefix, preds, mx)
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
    pub(super) fn bind_node(
        &mut self,
        st: &mut State,
        node: &ast::NodePattern,
        (prefix, label): (&str, &str),
        preds: &mut Vec<Expr>,
        mx: &MatchCx,
    ) -> Result<()> {
        match bound_node(st, node)? {
            Some((p, _)) => {
                if let Some(props) = &node.props {
                    self.property_map_preds(st, &p, props, Written::Labels(node), preds, mx)?;
                }
            }
            None => {
                let info = self.entities().node(label).clone();
                let value = match mx.joins {
                    true => None,
                    false => self.value_node_plan(st, node, prefix, &info)?,
                };
                let lookup = match (mx.joins, &value) {
                    (false, None) => self.point_lookup(st, node, prefix, &info)?,
                    _ => None,
                };
                let (scan, node, extends) = match (value, lookup) {
                    (Some(value), _) => (value, node.clone(), true),
                    (None, Some(lookup)) => (lookup, without_property(node, &info.key), true),
                    (None, None) => (self.scan_node(&info, prefix)?, node.clone(), false),
                };
                let node = &node;
                st.plan = if st.unit || extends {
                    scan
                } else {
                    LogicalPlanBuilder::from(st.plan.clone())
                        .cross_join(scan)?
                        .build()?
                };
                st.unit = false;
                self.bind_node_var(st, (prefix, label), node, preds, mx)?;
            }
        }
        Ok(())
    }

    pub(super) fn bind_far_node(
        &mut self,
        st: &mut State,
        node: &ast::NodePattern,
        (prefix, label): (&str, &str),
        rel_prefix: &str,
        preds: &mut Vec<Expr>,
        mx: &MatchCx,
    ) -> Result<()> {
        match bound_node(st, node)? {
            Some((p, l)) => {
                let key = prop_col(&p, &self.entities().node(&l).key);
                preds.push(col(&key).eq(col(&far_col(rel_prefix))));
                if let Some(props) = &node.props {
                    self.property_map_preds(st, &p, props, Written::Labels(node), preds, mx)?;
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
                self.bind_node_var(st, (prefix, label), node, preds, mx)?;
            }
        }
        Ok(())
    }

    /// Binds a node variable to its columns and adds its property map's predicates.
    pub(super) fn bind_node_var(
        &self,
        st: &mut State,
        (prefix, label): (&str, &str),
        node: &ast::NodePattern,
        preds: &mut Vec<Expr>,
        mx: &MatchCx,
    ) -> Result<()> {
        st.scope.bind(
            prefix,
            Binding::Node {
                label: label.to_string(),
                prefix: prefix.to_string(),
            },
        );
        if let Some(props) = &node.props {
            self.property_map_preds(st, prefix, props, Written::Labels(node), preds, mx)?;
        }
        Ok(())
    }

    /// `{k: v, ...}` on a node or relationship: one equality per entry.
    pub(super) fn property_map_preds(
        &self,
        st: &State,
        var: &str,
        props: &ast::Expr,
        written: Written<'_>,
        preds: &mut Vec<Expr>,
        mx: &MatchCx,
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
        if !self.options.lenient && !mx.branch {
            let ents = self.entities();
            for (k, _) in entries {
                let has = |ps: &[(String, DataType)]| ps.iter().any(|(p, _)| p == &k.name);
                let (typo, what) = match written {
                    // No table with every written label (`:Post:Comment`): nothing to match,
                    // so no key is a typo.
                    Written::Labels(node) => {
                        let tables = self.catalog.tables_for(node);
                        (
                            node.has_label_test()
                                && !tables.is_empty()
                                && !tables.iter().any(|n| has(&n.props)),
                            "label",
                        )
                    }
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
            missing_props_null: mx.branch,
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
pub(super) fn bound_node(st: &State, node: &ast::NodePattern) -> Result<Option<(String, String)>> {
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
pub(super) struct Hop<'a> {
    pub(super) rel: &'a ast::RelPattern,
    /// The relationship variable's column prefix.
    pub(super) prefix: String,
    pub(super) near_prefix: &'a str,
    pub(super) near_label: &'a str,
    pub(super) far: &'a ast::NodePattern,
    pub(super) far_prefix: &'a str,
    pub(super) far_label: &'a str,
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
    /// The collected predicates plus relationship uniqueness within the clause (or within
    /// each of `groups`, by variable: see `ast::Match::unique_within`): between single
    /// relationships of one table, and between variable-length lists (edge ids with their
    /// table, see `encode_eid`) and single relationships / other lists.
    fn uniqueness(&mut self, groups: Option<&[Vec<String>]>) -> Vec<Expr> {
        let together = |a: &str, b: &str| {
            groups.is_none_or(|gs| {
                gs.iter()
                    .any(|g| g.iter().any(|v| v == a) && g.iter().any(|v| v == b))
            })
        };
        let mut preds = std::mem::take(&mut self.preds);
        let rels = &self.rels;
        for i in 0..rels.len() {
            for j in i + 1..rels.len() {
                if rels[i].0 == rels[j].0 && together(&rels[i].1, &rels[j].1) {
                    preds.push(col(&eid_col(&rels[i].1)).not_eq(col(&eid_col(&rels[j].1))));
                }
            }
        }
        for (k, (tables, pl)) in self.lists.iter().enumerate() {
            let list = col(&eids_col(pl));
            for (r, p) in rels {
                if tables.contains(r) && together(pl, p) {
                    let id = col(&eid_col(p)) + lit(encode_eid(*r, 0));
                    preds.push(Expr::Not(Box::new(nf::array_has(list.clone(), id))));
                }
            }
            for (t2, p2) in &self.lists[k + 1..] {
                if tables.iter().any(|t| t2.contains(t)) && together(pl, p2) {
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
pub(super) fn node_take(prefix: &str, info: &NodeInfo) -> TakeSpec {
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
pub(super) enum Written<'a> {
    /// The node pattern, whose label test picks the tables.
    Labels(&'a ast::NodePattern),
    Types(&'a [ast::Ident]),
}

/// A VariableTypeConflict unless column `col` (variable `v`'s value) may hold an entity whose
/// values are structs starting with `tag` (`__label`: a node, `__type`: a relationship):
/// such a struct, null, or a value of mixed kind.
pub(super) fn value_may_be(
    schema: &datafusion::common::DFSchema,
    col: &str,
    v: &ast::Ident,
    tag: &str,
    what: &str,
) -> Result<()> {
    let t = schema
        .field_with_unqualified_name(col)
        .map(|f| f.data_type().clone())
        .unwrap_or(DataType::Null);
    let may_be = match &t {
        DataType::Null => true,
        DataType::Struct(fields) => fields.first().is_some_and(|f| f.name() == tag),
        t => crate::functions::any::is_any(t),
    };
    if may_be {
        return Ok(());
    }
    let t = t.to_string();
    sem_err!(
        VariableTypeConflict,
        v.span,
        "Variable `{}` holds a value of type {}, not a {what}",
        crate::binder::names::unescape(&v.name),
        t.split('(').next().unwrap_or(&t)
    )
}

/// Whether column `c` holds node values with their identity (`__nid`), not values of mixed
/// kind.
fn names_node(schema: &datafusion::common::DFSchema, c: &str) -> bool {
    schema.field_with_unqualified_name(c).is_ok_and(|f| {
        matches!(f.data_type(), DataType::Struct(fs)
            if fs.first().is_some_and(|x| x.name() == "__label")
                && fs.iter().any(|x| x.name() == "__nid"))
    })
}

pub(super) fn col_name(name: &str) -> datafusion::common::Column {
    datafusion::common::Column::new_unqualified(name)
}

/// `node` without `key` in its property map (a key lookup already matched it).
fn without_property(node: &ast::NodePattern, key: &str) -> ast::NodePattern {
    let mut node = node.clone();
    if let Some(ast::Expr {
        kind: ExprKind::Map(entries),
        ..
    }) = node.props.as_mut()
    {
        entries.retain(|(k, _)| k.name != key);
    }
    node
}
