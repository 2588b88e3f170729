//! Lowering a MATCH that branches (`rewrite::branching`): one ordinary pattern per
//! combination of labels and tables, combined with UNION ALL into one schema where a variable
//! that differs between branches becomes a several-label node ([`Binding::Nodes`]) or a
//! several-table relationship ([`Binding::Rels`]). The MATCH's WHERE applies above the union,
//! where every property of every label is a column; DataFusion pushes it back into the
//! branches, and the CSR rules into the operators.

use super::expr::{col, null};
use super::pattern::MatchCx;
use super::scope::{
    dst_col, eid_col, key_col, label_col, prop_col, src_col, table_col, type_col, Binding, Scope,
};
use super::{Lowerer, State};
use crate::binder::QueryGraph;
use crate::error::{Error, Result};
use crate::functions::any;
use crate::operators::shared::SharedSubplan;
use crate::rewrite::Branch;
use arrow::datatypes::DataType;
use datafusion::common::ScalarValue;
use datafusion::logical_expr::{cast, lit, Expr, LogicalPlanBuilder};
use std::collections::BTreeSet;

impl<'c> Lowerer<'c> {
    /// A MATCH that branched into no combination: no rows, its new variables bound to the
    /// labels and tables they could have had.
    pub(crate) fn no_branches(
        &mut self,
        st: &State,
        qg: &QueryGraph,
        mx: &MatchCx,
    ) -> Result<State> {
        let new_vars = qg.new_variables(&|v| st.scope.get(v).is_some());
        let mut out = self.empty_match(st, qg, &new_vars, mx)?;
        self.bind_named_paths(&mut out, &mx.named_paths)?;
        Ok(out)
    }

    /// Lowers the branches of a MATCH (`qg` before branching), combined with UNION ALL; its
    /// WHERE above them.
    pub(crate) fn lower_branches(
        &mut self,
        st: &State,
        qg: &QueryGraph,
        branches: Vec<Branch>,
        mx: &MatchCx,
    ) -> Result<State> {
        let m = &qg.clause;
        let new_vars = qg.new_variables(&|v| st.scope.get(v).is_some());
        // Every branch reads the input: one evaluation of it where two could differ.
        let shared_input;
        let st = if branches.len() > 1 && !st.unit && !SharedSubplan::deterministic(&st.plan) {
            let id = self.fresh_id();
            shared_input = State {
                plan: SharedSubplan::once(st.plan.clone(), id, branches.len()),
                ..st.clone()
            };
            &shared_input
        } else {
            st
        };
        let mut lowered = Vec::new();
        // Every branch names its internal columns alike (`__lookup1`, ...): what the branches
        // share (the anchor) is then the same plan, which `ShareSubplans` evaluates once. The
        // names stay inside each branch; later clauses continue after the largest.
        let base = self.counter;
        let mut end = base;
        for branch in branches {
            self.counter = base;
            let mut bst = st.clone();
            // A several-label variable the pattern names is one label in this branch.
            for (v, label) in branch.narrowed {
                if let Some(Binding::Nodes { prefix, .. }) = bst.scope.get(&v).cloned() {
                    bst.plan = LogicalPlanBuilder::from(bst.plan)
                        .filter(col(&label_col(&prefix)).eq(lit(label.clone())))?
                        .build()?;
                    bst.scope.bind(&v, Binding::Node { label, prefix });
                }
            }
            let bmx = MatchCx {
                branch: true,
                ..mx.clone()
            };
            let out = self.lower_planned(bst, branch.planned, false, &bmx);
            end = end.max(self.counter);
            lowered.push(out?);
        }
        self.counter = end;
        let mut out = self.union_branches(st, &new_vars, lowered)?;
        self.bind_named_paths(&mut out, &mx.named_paths)?;
        if let Some(w) = &m.where_ {
            let p = self.match_where(&out, w)?;
            out.plan = self.filter(out.plan, p)?;
        }
        Ok(out)
    }

    /// UNION ALL of the branches, each projected onto one schema: the variables bound before
    /// the MATCH (as they were), then the new named ones, unified across branches.
    fn union_branches(
        &self,
        input: &State,
        new_vars: &[String],
        branches: Vec<State>,
    ) -> Result<State> {
        let mut scope = Scope::default();
        for (name, b) in &input.scope.vars {
            scope.bind(name, b.clone());
        }
        for name in new_vars {
            let bs: Vec<&Binding> = branches
                .iter()
                .map(|s| {
                    s.scope
                        .get(name)
                        .ok_or_else(|| Error::Internal(format!("branch without variable `{name}`")))
                })
                .collect::<Result<_>>()?;
            scope.bind(name, self.unify(name, &bs)?);
        }
        // Columns of the input that belong to no variable (an OPTIONAL MATCH's row number)
        // pass through: every branch extends the input.
        let ents = self.entities();
        let var_cols: BTreeSet<String> = scope
            .vars
            .iter()
            .flat_map(|(_, b)| ents.columns(b))
            .map(|(c, _)| c)
            .collect();
        let extra: Vec<String> = input
            .columns()
            .into_iter()
            .filter(|c| !var_cols.contains(c))
            .collect();
        let mut plan = None;
        for b in branches {
            let mut exprs: Vec<Expr> = extra.iter().map(|c| col(c)).collect();
            // A named path's columns are its elements' (bound as variables too): once each.
            let mut seen: BTreeSet<String> = extra.iter().cloned().collect();
            for (name, target) in &scope.vars {
                let have = b.scope.get(name).expect("every branch binds it");
                let converted = self.convert(have, target)?;
                for (e, (c, _)) in converted.into_iter().zip(ents.columns(target)) {
                    if seen.insert(c) {
                        exprs.push(e);
                    }
                }
            }
            let p = LogicalPlanBuilder::from(b.plan).project(exprs)?.build()?;
            plan = Some(match plan {
                None => p,
                Some(acc) => LogicalPlanBuilder::from(acc).union(p)?.build()?,
            });
        }
        Ok(State {
            plan: plan.expect("at least one branch"),
            scope,
            unit: false,
        })
    }

    /// One binding for a variable bound differently in different branches.
    fn unify(&self, name: &str, bs: &[&Binding]) -> Result<Binding> {
        if bs.windows(2).all(|w| w[0] == w[1]) {
            return Ok(bs[0].clone());
        }
        let ents = self.entities();
        let prefix = bs[0].prefix().to_string();
        let mismatch = || Error::Internal(format!("branches bind `{name}` to different kinds"));
        match bs[0] {
            Binding::Node { .. } | Binding::Nodes { .. } => {
                let mut labels = BTreeSet::new();
                for b in bs {
                    match b {
                        Binding::Node { label, .. } => {
                            labels.insert(label.clone());
                        }
                        Binding::Nodes { labels: ls, .. } => labels.extend(ls.iter().cloned()),
                        _ => return Err(mismatch()),
                    }
                }
                let labels: Vec<String> = labels.into_iter().collect();
                let mut key_type: Option<DataType> = None;
                let mut props: Vec<(String, DataType)> = Vec::new();
                for l in &labels {
                    let info = ents.node(l);
                    key_type = Some(match key_type {
                        None => info.key_type.clone(),
                        Some(k) => common_type(&k, &info.key_type).ok_or_else(|| {
                            Error::semantic(
                                crate::error::SemanticKind::Unsupported,
                                format!(
                                    "unsupported: `{name}` can be a :{} whose keys have different types",
                                    labels.join(" or a :")
                                ),
                                cypher::Span::default(),
                            )
                        })?,
                    });
                    merge_props(&mut props, &info.props, name)?;
                }
                Ok(Binding::Nodes {
                    labels,
                    prefix,
                    key_type: key_type.unwrap_or(DataType::Int64),
                    props,
                })
            }
            Binding::Rel { .. } | Binding::Rels { .. } => {
                let mut rels = BTreeSet::new();
                for b in bs {
                    match b {
                        Binding::Rel { rel, .. } => {
                            rels.insert(*rel);
                        }
                        Binding::Rels { rels: rs, .. } => rels.extend(rs.iter().copied()),
                        _ => return Err(mismatch()),
                    }
                }
                let mut props = Vec::new();
                for &r in &rels {
                    merge_props(&mut props, &ents.rel(r).props, name)?;
                }
                Ok(Binding::Rels {
                    rels: rels.into_iter().collect(),
                    prefix,
                    props,
                })
            }
            Binding::RelList { .. } => {
                if bs.iter().all(|b| matches!(b, Binding::RelList { .. })) {
                    // Edge ids of different tables: only the list's length means anything.
                    let elems = match bs[0] {
                        Binding::RelList { elems, .. } => elems.clone(),
                        _ => None,
                    };
                    Ok(Binding::RelList {
                        rel: usize::MAX,
                        prefix,
                        elems,
                    })
                } else {
                    Err(mismatch())
                }
            }
            Binding::Path { .. } => {
                if bs.iter().all(|b| matches!(b, Binding::Path { .. })) {
                    Ok(bs[0].clone())
                } else {
                    Err(mismatch())
                }
            }
            Binding::Value { .. } => Err(mismatch()),
        }
    }

    /// The columns of `target` (aliased, cast to its types) computed from a branch's `have`.
    fn convert(&self, have: &Binding, target: &Binding) -> Result<Vec<Expr>> {
        let ents = self.entities();
        let cols = ents.columns(target);
        if have == target {
            return Ok(cols.into_iter().map(|(c, _)| col(&c)).collect());
        }
        let typed_null = |t: &DataType| -> Result<Expr> { Ok(lit(ScalarValue::try_from(t)?)) };
        let prefix = target.prefix();
        // Target property column `c` from a branch entity with `props` under prefix `p`:
        // its column, or null where the branch's label / table lacks the property.
        let property = |props: &[(String, DataType)], p: &str, c: &str, t: &DataType| {
            let name = crate::binder::names::unescape(&c[prefix.len() + 2..]);
            match props.iter().find(|(x, _)| x == &name) {
                Some((_, from)) => Ok(cast_to(col(&prop_col(p, &name)), from, t)),
                None => typed_null(t),
            }
        };
        let mut out = Vec::new();
        match (have, target) {
            (Binding::Node { label, prefix: p }, Binding::Nodes { .. }) => {
                let info = ents.node(label);
                for (c, t) in cols {
                    let e = if c == label_col(prefix) {
                        lit(label.clone())
                    } else if c == key_col(prefix) {
                        cast_to(col(&prop_col(p, &info.key)), &info.key_type, &t)
                    } else {
                        property(&info.props, p, &c, &t)?
                    };
                    out.push(e.alias(c));
                }
            }
            (Binding::Rel { rel, prefix: p }, Binding::Rels { .. }) => {
                let info = ents.rel(*rel);
                for (c, t) in cols {
                    let e = if c == type_col(prefix) {
                        lit(info.cfg.rel_type.clone())
                    } else if c == table_col(prefix) {
                        lit(ScalarValue::UInt32(Some(*rel as u32)))
                    } else if c == eid_col(prefix) {
                        col(&eid_col(p))
                    } else if c == super::scope::start_col(prefix) {
                        super::path::node_id(lit(info.cfg.from.clone()), col(&src_col(p)))
                    } else if c == super::scope::end_col(prefix) {
                        super::path::node_id(lit(info.cfg.to.clone()), col(&dst_col(p)))
                    } else {
                        property(&info.props, p, &c, &t)?
                    };
                    out.push(e.alias(c));
                }
            }
            (Binding::Nodes { .. }, Binding::Nodes { .. })
            | (Binding::Rels { .. }, Binding::Rels { .. }) => {
                // Same prefix; a narrower set of labels / tables lacks some columns.
                let present: Vec<(String, DataType)> = ents.columns(have);
                for (c, t) in cols {
                    let e = match present.iter().find(|(x, _)| x == &c) {
                        Some((_, from)) => cast_to(col(&c), from, &t),
                        None => typed_null(&t)?,
                    };
                    out.push(e.alias(c));
                }
            }
            (Binding::RelList { .. }, Binding::RelList { .. }) => {
                // Same names and types (a path's segments have one shape in every branch).
                for ((c, _), (t, _)) in ents.columns(have).into_iter().zip(cols) {
                    out.push(col(&c).alias(t));
                }
            }
            _ => {
                return Err(Error::Internal(format!(
                    "cannot combine a {} with a {} across branches",
                    have.kind_name(),
                    target.kind_name()
                )))
            }
        }
        Ok(out)
    }

    /// A MATCH no combination satisfies: no rows, with every variable it would bind (as
    /// nulls of the right types) so that the rest of the query still plans and checks.
    fn empty_match(
        &mut self,
        st: &State,
        qg: &QueryGraph,
        new_vars: &[String],
        mx: &MatchCx,
    ) -> Result<State> {
        let mut scope = st.scope.clone();
        let named_labels = |i: usize| -> Vec<String> {
            let mut ls: Vec<String> = qg.labels[i].iter().cloned().collect();
            if ls.is_empty() && qg.nodes[i].has_label_test() {
                let tables = self.catalog.tables_for(&qg.nodes[i]);
                ls = tables.iter().map(|t| t.label.clone()).collect();
            }
            ls
        };
        let mut binds: Vec<(String, Binding)> = Vec::new();
        for name in new_vars {
            if let Some(i) = qg
                .nodes
                .iter()
                .position(|n| n.var.as_ref().is_some_and(|v| &v.name == name))
            {
                let labels = named_labels(i);
                let as_nodes: Vec<Binding> = labels
                    .iter()
                    .map(|l| Binding::Node {
                        label: l.clone(),
                        prefix: name.clone(),
                    })
                    .collect();
                let b = match as_nodes.len() {
                    0 => Binding::Nodes {
                        labels: vec![],
                        prefix: name.clone(),
                        key_type: DataType::Int64,
                        props: vec![],
                    },
                    _ => self.unify(name, &as_nodes.iter().collect::<Vec<_>>())?,
                };
                binds.push((name.clone(), b));
            } else if let Some(k) = qg
                .rels
                .iter()
                .position(|r| r.var.as_ref().is_some_and(|v| &v.name == name))
            {
                binds.push((name.clone(), self.empty_rel(qg, k, name, mx)?));
            }
        }
        let mut exprs: Vec<Expr> = st.columns().iter().map(|c| col(c)).collect();
        let ents = self.entities();
        for (name, b) in binds {
            for (c, t) in ents.columns(&b) {
                exprs.push(cast(null(), t).alias(c));
            }
            scope.bind(&name, b);
        }
        let plan = LogicalPlanBuilder::from(st.plan.clone())
            .filter(lit(false))?
            .project(exprs)?
            .build()?;
        Ok(State {
            plan,
            scope,
            unit: false,
        })
    }
}

impl Lowerer<'_> {
    /// What relationship `k` of a MATCH with no match binds `name` to: a list for a
    /// variable-length one, else a relationship of any table it could be of.
    fn empty_rel(&self, qg: &QueryGraph, k: usize, name: &str, mx: &MatchCx) -> Result<Binding> {
        let r = &qg.rels[k];
        if r.length.is_some() {
            return Ok(Binding::RelList {
                rel: usize::MAX,
                prefix: name.to_string(),
                elems: mx.segment_shapes.get(name).cloned(),
            });
        }
        let mut tables: Vec<usize> = qg.tables[k].iter().copied().collect();
        if tables.is_empty() {
            tables = (0..self.catalog.rels.len())
                .filter(|&i| {
                    r.types
                        .iter()
                        .any(|t| t.name == self.catalog.rels[i].cfg.rel_type)
                })
                .collect();
        }
        let as_rels: Vec<Binding> = tables
            .iter()
            .map(|&rel| Binding::Rel {
                rel,
                prefix: name.to_string(),
            })
            .collect();
        match as_rels.len() {
            0 => Ok(Binding::Rels {
                rels: vec![],
                prefix: name.to_string(),
                props: vec![],
            }),
            _ => self.unify(name, &as_rels.iter().collect::<Vec<_>>()),
        }
    }
}

/// `e` (of type `from`) as type `to`; no cast when they agree.
pub(super) fn cast_to(e: Expr, from: &DataType, to: &DataType) -> Expr {
    if from == to {
        e
    } else if any::is_any(to) {
        crate::functions::CypherFn::ToAny.call(vec![e])
    } else {
        cast(e, to.clone())
    }
}

/// Adds `more` to the union of properties `acc`, one type per name.
pub(super) fn merge_props(
    acc: &mut Vec<(String, DataType)>,
    more: &[(String, DataType)],
    var: &str,
) -> Result<()> {
    for (p, t) in more {
        match acc.iter_mut().find(|(x, _)| x == p) {
            None => acc.push((p.clone(), t.clone())),
            Some((_, have)) => {
                // Different kinds on different labels: values of mixed kind.
                let mixed = (any::encodable(have) && any::encodable(t)).then_some(any::ANY);
                *have = common_type(have, t).or(mixed).ok_or_else(|| {
                    Error::semantic(
                        crate::error::SemanticKind::Unsupported,
                        format!(
                            "unsupported: property `{p}` of `{var}` has different types ({have} and {t}) on the labels or types it can have"
                        ),
                        cypher::Span::default(),
                    )
                })?
            }
        }
    }
    Ok(())
}

/// One type for values of two types: the same, or a number type both fit in.
fn common_type(a: &DataType, b: &DataType) -> Option<DataType> {
    if a == b || any::is_any(a) {
        return Some(a.clone());
    }
    match (a, b) {
        (DataType::Null, x) | (x, DataType::Null) => Some(x.clone()),
        (x, y) if x.is_integer() && y.is_integer() => Some(DataType::Int64),
        (x, y) if x.is_numeric() && y.is_numeric() => Some(DataType::Float64),
        _ => None,
    }
}
