//! A MATCH bound against the catalog: its node and relationship occurrences with the labels
//! and tables each can have (constraint propagation over the configured endpoints), checked
//! for every semantic error the patterns alone can show.

use super::{Binder, BoundVar};
use crate::catalog::Catalog;
use crate::config::reach::label_reach;
use crate::config::RelTable;
use crate::error::Result;
use crate::sem_err;
use arrow::datatypes::DataType;
use cypher::ast::{self, Direction, ExprKind};
use std::collections::{BTreeMap, BTreeSet, HashSet};

/// One MATCH clause, bound. Node occurrences are numbered path by path (a variable written
/// twice is two occurrences sharing their candidates); relationships in the order written.
#[derive(Debug, Clone)]
pub(crate) struct QueryGraph {
    /// The clause as bound (after a rewrite, as rewritten).
    pub clause: ast::Match,
    /// Every node occurrence, path by path.
    pub nodes: Vec<ast::NodePattern>,
    /// Every relationship pattern.
    pub rels: Vec<ast::RelPattern>,
    /// (near occurrence, far occurrence) per relationship, as written.
    pub steps: Vec<(usize, usize)>,
    /// Candidate labels per node occurrence.
    pub labels: Vec<BTreeSet<String>>,
    /// Candidate tables (catalog indexes) per relationship.
    pub tables: Vec<BTreeSet<usize>>,
    /// False when no combination can match (the MATCH yields no rows).
    pub satisfiable: bool,
}

/// One path of a MATCH with a label per node and a table per relationship.
#[derive(Debug, Clone)]
pub(crate) struct ResolvedPath {
    pub labels: Vec<String>,
    /// `usize::MAX`: no table (an unsatisfiable MATCH naming none).
    pub rels: Vec<usize>,
    /// Per relationship, every candidate table: what a variable-length one walks.
    pub tables: Vec<Vec<usize>>,
    /// False when no combination of tables can match (the MATCH yields no rows).
    pub satisfiable: bool,
}

impl QueryGraph {
    /// Variable name per node occurrence (`None`: anonymous).
    pub fn node_var(&self, i: usize) -> Option<&str> {
        self.nodes[i].var.as_ref().map(|v| v.name.as_str())
    }

    /// Several candidates somewhere: the MATCH needs branching to be planned.
    pub fn is_ambiguous(&self) -> bool {
        self.labels.iter().any(|c| c.len() > 1)
            || self
                .rels
                .iter()
                .zip(&self.tables)
                .any(|(r, t)| r.length.is_none() && t.len() > 1)
    }

    /// The named variables the MATCH binds that `bound` does not know yet, in pattern order.
    pub fn new_variables(&self, bound: &dyn Fn(&str) -> bool) -> Vec<String> {
        let mut out: Vec<String> = Vec::new();
        let mut add = |v: &Option<ast::Ident>| {
            if let Some(v) = v {
                if !bound(&v.name) && !out.contains(&v.name) {
                    out.push(v.name.clone());
                }
            }
        };
        let mut steps = self.steps.iter().zip(&self.rels).peekable();
        for (i, n) in self.nodes.iter().enumerate() {
            add(&n.var);
            while let Some(((a, _), r)) = steps.peek() {
                if *a != i {
                    break;
                }
                add(&r.var);
                steps.next();
            }
        }
        out
    }

    /// A property map key no candidate label (type) has is a typo; a key only some have is
    /// null on the others. Checked where the user wrote labels (an inferred label's missing
    /// key is null) and something can match.
    pub fn check_property_maps(&self, cat: &Catalog) -> Result<()> {
        let check = |props: &Option<ast::Expr>, names: Vec<&[(String, DataType)]>, what: &str| {
            let Some(ast::Expr {
                kind: ExprKind::Map(entries),
                ..
            }) = props
            else {
                return Ok(());
            };
            for (k, _) in entries {
                if !names.iter().any(|ps| ps.iter().any(|(p, _)| p == &k.name)) {
                    return sem_err!(
                        UnknownProperty,
                        k.span,
                        "Unknown property `{}`: no {what} the pattern can match has it",
                        k.name
                    );
                }
            }
            Ok(())
        };
        for (n, labels) in self.nodes.iter().zip(&self.labels) {
            if !labels.is_empty() && n.has_label_test() {
                let props = labels
                    .iter()
                    .filter_map(|l| cat.nodes.get(l))
                    .map(|i| i.props.as_slice())
                    .collect();
                check(&n.props, props, "label")?;
            }
        }
        for (r, tables) in self.rels.iter().zip(&self.tables) {
            if !tables.is_empty() && !r.types.is_empty() {
                let props = tables
                    .iter()
                    .map(|&t| cat.rels[t].props.as_slice())
                    .collect();
                check(&r.props, props, "relationship type")?;
            }
        }
        Ok(())
    }
}

impl Binder<'_> {
    /// Binds one MATCH: the labels each node can have and the tables each relationship can
    /// come from, given explicit labels and types, variables bound by earlier clauses and the
    /// configured endpoints (propagated over the whole clause to a fixpoint: paths sharing a
    /// variable constrain each other).
    pub fn bind_match(&self, m: &ast::Match) -> Result<QueryGraph> {
        check_path_names(m, self.bound)?;
        let cat = self.catalog;
        let mut nodes: Vec<ast::NodePattern> = Vec::new();
        let mut rels: Vec<ast::RelPattern> = Vec::new();
        let mut steps: Vec<(usize, usize)> = Vec::new();
        for path in &m.patterns {
            nodes.push(path.start.clone());
            for (r, n) in &path.steps {
                steps.push((nodes.len() - 1, nodes.len()));
                rels.push(r.clone());
                nodes.push(n.clone());
            }
        }
        let mut known_unknown = false;
        let mut labels: Vec<BTreeSet<String>> = Vec::new();
        for n in &nodes {
            let (c, unknown) = self.node_candidates(n)?;
            known_unknown |= unknown;
            labels.push(c);
        }
        let mut tables: Vec<BTreeSet<usize>> = Vec::new();
        for r in &rels {
            let (c, unknown) = self.rel_candidates(r)?;
            known_unknown |= unknown;
            tables.push(c);
        }
        self.check_relationship_variables(&nodes, &rels)?;
        let maps = nodes
            .iter()
            .map(|n| &n.props)
            .chain(rels.iter().map(|r| &r.props));
        for props in maps.flatten() {
            if !matches!(props.kind, ExprKind::Map(_)) {
                return sem_err!(
                    InvalidParameterUse,
                    props.span,
                    "a parameter can't be a pattern's property map in MATCH (write {{key: $param.key}}, or use WHERE)"
                );
            }
        }
        let vars: Vec<Option<&str>> = nodes
            .iter()
            .map(|n| n.var.as_ref().map(|v| v.name.as_str()))
            .collect();
        sync_shared_variables(&vars, &mut labels);
        loop {
            let mut changed = false;
            for (k, &(a, b)) in steps.iter().enumerate() {
                changed |= propagate_step(cat, &rels[k], &mut labels, &mut tables[k], a, b);
            }
            changed |= sync_shared_variables(&vars, &mut labels);
            if !changed {
                break;
            }
        }
        // A variable-length step from length 0 needs no table: the path may be empty.
        let satisfiable = !known_unknown
            && labels.iter().all(|c| !c.is_empty())
            && rels
                .iter()
                .zip(&tables)
                .all(|(r, c)| !c.is_empty() || matches!(r.length, Some((Some(0), _))));
        Ok(QueryGraph {
            clause: m.clone(),
            nodes,
            rels,
            steps,
            labels,
            tables,
            satisfiable,
        })
    }

    /// The labels a node occurrence can have on its own, and whether it names a label the
    /// graph lacks (lenient mode: it matches nothing).
    fn node_candidates(&self, n: &ast::NodePattern) -> Result<(BTreeSet<String>, bool)> {
        let cat = self.catalog;
        let mut c: BTreeSet<String> = cat.nodes.keys().cloned().collect();
        if let Some(v) = &n.var {
            match (self.bound)(&v.name) {
                None => {}
                Some(BoundVar::Node { labels, .. }) => c = labels.into_iter().collect(),
                // A value that may hold a node (from a list, a map, null): the planner
                // matches it by equality, or refuses it by its type.
                Some(BoundVar::Value) => {}
                Some(other) => {
                    return sem_err!(
                        VariableTypeConflict,
                        v.span,
                        "Variable `{}` is a {}, not a node",
                        v.name,
                        other.kind_name()
                    )
                }
            }
        }
        // The tables whose labels satisfy the label expression (`:A:B` both, `:A|B` either).
        let mut unknown = false;
        let names = n
            .labels
            .iter()
            .chain(n.label_expr.iter().flat_map(|e| e.names()));
        for l in names {
            if !cat.has_label(&l.name) {
                if !self.lenient {
                    return sem_err!(
                        UnknownLabel,
                        l.span,
                        "Unknown label `{}` (labels: {})",
                        l.name,
                        cat.label_names().join(", ")
                    );
                }
                unknown = true;
            }
        }
        // A stand-in for a missing label (lenient mode) has none.
        c.retain(|t| match cat.nodes.get(t) {
            Some(info) => n.labels_match(&info.labels),
            None => !n.has_label_test(),
        });
        // A label the graph lacks matters where it leaves nothing to match.
        unknown &= c.is_empty();
        Ok((c, unknown))
    }

    /// The tables a relationship pattern can come from on its own, and whether it names a
    /// type the graph lacks.
    fn rel_candidates(&self, r: &ast::RelPattern) -> Result<(BTreeSet<usize>, bool)> {
        let cat = self.catalog;
        let mut c: BTreeSet<usize> = (0..cat.rels.len()).collect();
        let mut unknown = false;
        if !r.types.is_empty() {
            if let Some(t) = r.types.iter().find(|t| !cat.config.has_type(&t.name)) {
                if !self.lenient {
                    return sem_err!(
                        UnknownRelationshipType,
                        t.span,
                        "Unknown relationship type `{}` (types: {})",
                        t.name,
                        cat.rel_types().join(", ")
                    );
                }
            }
            // `:KNOWN|MISSING` matches the known type's relationships.
            unknown = r.types.iter().all(|t| !cat.config.has_type(&t.name));
            c.retain(|&i| r.types.iter().any(|t| t.name == cat.rels[i].cfg.rel_type));
        }
        Ok((c, unknown))
    }

    /// A relationship variable is new (or bound by an earlier clause, to a relationship for a
    /// single hop, to a relationship list or list value for a variable-length one: re-matched,
    /// see the planner) and written once per MATCH, and is not also a node.
    fn check_relationship_variables(
        &self,
        nodes: &[ast::NodePattern],
        rels: &[ast::RelPattern],
    ) -> Result<()> {
        let node_vars: HashSet<&str> = nodes
            .iter()
            .filter_map(|n| n.var.as_ref().map(|v| v.name.as_str()))
            .collect();
        let mut seen: HashSet<&str> = HashSet::new();
        for (r, v) in rels.iter().filter_map(|r| Some((r, r.var.as_ref()?))) {
            match (self.bound)(&v.name) {
                // Re-matched: the planner matches a fresh relationship equal to it (a value
                // from a list or a path likewise).
                Some(BoundVar::Rel { .. } | BoundVar::Value) if r.length.is_none() => {}
                // A list re-matched as a relationship list: the planner matches a fresh one
                // equal to it as a value.
                Some(BoundVar::RelList { .. } | BoundVar::Value) if r.length.is_some() => {}
                Some(other) => {
                    let wanted = match r.length {
                        Some(_) => "a relationship list",
                        None => "a relationship",
                    };
                    return sem_err!(
                        VariableTypeConflict,
                        v.span,
                        "Variable `{}` is a {}, not {wanted}",
                        v.name,
                        other.kind_name()
                    );
                }
                None if node_vars.contains(v.name.as_str()) => {
                    return sem_err!(
                        VariableTypeConflict,
                        v.span,
                        "Variable `{}` is a node, not a relationship",
                        v.name
                    )
                }
                None => {}
            }
            if !seen.insert(&v.name) {
                return sem_err!(
                    VariableAlreadyBound,
                    v.span,
                    "Relationship variable `{}` is used twice in one pattern",
                    v.name
                );
            }
        }
        Ok(())
    }

    /// Picks one label per node and one table per relationship for every path of a bound
    /// MATCH; several possible ones are an error here (a MATCH that needs them branches
    /// first). An unsatisfiable MATCH keeps whatever real labels and tables were named, so
    /// that properties still resolve (it is planned with a `false` filter).
    pub fn resolve(&self, qg: &QueryGraph) -> Result<Vec<ResolvedPath>> {
        let cat = self.catalog;
        if qg.satisfiable {
            self.check_resolved(qg)?;
        }
        // The table a node's written labels pick, where they pick one.
        let explicit: BTreeMap<usize, String> = qg
            .nodes
            .iter()
            .enumerate()
            .filter(|(_, n)| n.has_label_test())
            .filter_map(|(i, n)| match cat.tables_for(n).as_slice() {
                [t] => Some((i, t.label.clone())),
                _ => None,
            })
            .collect();
        // A variable's label written at one of its occurrences holds at all of them (a
        // re-rooted MATCH writes it at the first only).
        let mut var_label: BTreeMap<&str, String> = BTreeMap::new();
        for (i, n) in qg.nodes.iter().enumerate() {
            if let (Some(v), Some(l)) = (&n.var, explicit.get(&i)) {
                var_label
                    .entry(v.name.as_str())
                    .or_insert_with(|| l.clone());
            }
        }
        let labels: Vec<String> = qg
            .labels
            .iter()
            .enumerate()
            .map(|(i, c)| {
                if qg.satisfiable {
                    return c.iter().next().cloned().unwrap_or_default();
                }
                let var = qg.node_var(i);
                if let Some(BoundVar::Node { labels, .. }) = var.and_then(|v| (self.bound)(v)) {
                    if let [label] = labels.as_slice() {
                        return label.clone();
                    }
                }
                explicit
                    .get(&i)
                    .or_else(|| var.and_then(|v| var_label.get(v)))
                    .filter(|l| cat.nodes.contains_key(*l))
                    .cloned()
                    .unwrap_or_default()
            })
            .collect();
        let rels: Vec<usize> = qg
            .tables
            .iter()
            .zip(&qg.rels)
            .map(|(c, r)| {
                if qg.satisfiable {
                    return *c.iter().next().unwrap_or(&usize::MAX);
                }
                cat.rels
                    .iter()
                    .position(|x| r.types.iter().any(|t| t.name == x.cfg.rel_type))
                    .unwrap_or(usize::MAX)
            })
            .collect();
        // Split back per path.
        let mut out = Vec::new();
        let (mut ni, mut ri) = (0, 0);
        for path in &qg.clause.patterns {
            let n = path.steps.len();
            out.push(ResolvedPath {
                labels: labels[ni..ni + n + 1].to_vec(),
                rels: rels[ri..ri + n].to_vec(),
                tables: qg.tables[ri..ri + n]
                    .iter()
                    .map(|c| c.iter().copied().collect())
                    .collect(),
                satisfiable: qg.satisfiable,
            });
            ni += n + 1;
            ri += n;
        }
        Ok(out)
    }

    /// Every node has one label and every fixed-length relationship one table.
    fn check_resolved(&self, qg: &QueryGraph) -> Result<()> {
        for (n, c) in qg.nodes.iter().zip(&qg.labels) {
            if c.len() > 1 {
                return sem_err!(
                    AmbiguousPattern,
                    n.span,
                    "node pattern {n} could have any of the labels {}; give it a label (branching over labels is planned)",
                    c.iter().cloned().collect::<Vec<_>>().join(", ")
                );
            }
        }
        for (r, c) in qg.rels.iter().zip(&qg.tables) {
            if c.len() > 1 && r.length.is_none() {
                return sem_err!(
                    AmbiguousPattern,
                    r.span,
                    "relationship pattern {r} matches several relationship tables ({}); give it a type and endpoint labels (branching is planned)",
                    c.iter()
                        .map(|&i| {
                            let r = &self.catalog.rels[i].cfg;
                            format!("{}:{}->{}", r.rel_type, r.from, r.to)
                        })
                        .collect::<Vec<_>>()
                        .join(", ")
                );
            }
        }
        Ok(())
    }
}

/// Occurrences of one variable share their candidates (the intersection); true if any changed.
fn sync_shared_variables(vars: &[Option<&str>], labels: &mut [BTreeSet<String>]) -> bool {
    let mut changed = false;
    for i in 0..vars.len() {
        for j in i + 1..vars.len() {
            if vars[i].is_some() && vars[i] == vars[j] && labels[i] != labels[j] {
                let inter: BTreeSet<String> = labels[i].intersection(&labels[j]).cloned().collect();
                labels[i] = inter.clone();
                labels[j] = inter;
                changed = true;
            }
        }
    }
    changed
}

/// Narrows relationship `rel` between occurrences `a` (near) and `b` (far): its tables to
/// those joining their candidates, their candidates to the labels those tables join. True if
/// anything changed.
fn propagate_step(
    cat: &Catalog,
    rel: &ast::RelPattern,
    labels: &mut [BTreeSet<String>],
    tables: &mut BTreeSet<usize>,
    a: usize,
    b: usize,
) -> bool {
    // A zero-length step (`*0`) joins a node to itself: same labels, any table.
    if matches!(rel.length, Some((_, Some(0)))) {
        if labels[a] == labels[b] {
            return false;
        }
        let inter: BTreeSet<String> = labels[a].intersection(&labels[b]).cloned().collect();
        labels[a] = inter.clone();
        labels[b] = inter;
        return true;
    }
    // Variable length: the ends are labels reachable over the tables in as many steps as the
    // bounds allow; the tables, those on some such path.
    if let Some((lo, hi)) = rel.length {
        let (lo, hi) = (lo.unwrap_or(1), hi.unwrap_or(u64::MAX));
        let cfgs: Vec<&RelTable> = tables.iter().map(|&i| &cat.rels[i].cfg).collect();
        let fwd = label_reach(&labels[a], &cfgs, rel.direction, false, lo, hi);
        let bwd = label_reach(&labels[b], &cfgs, rel.direction, true, lo, hi);
        let new_b: BTreeSet<String> = labels[b].intersection(&fwd).cloned().collect();
        let new_a: BTreeSet<String> = labels[a].intersection(&bwd).cloned().collect();
        let near = label_reach(&new_a, &cfgs, rel.direction, false, 0, hi - 1);
        let far = label_reach(&new_b, &cfgs, rel.direction, true, 0, hi - 1);
        let kept: BTreeSet<usize> = tables
            .iter()
            .copied()
            .filter(|&i| joins(&cat.rels[i].cfg, rel.direction, &near, &far))
            .collect();
        let changed = kept != *tables || new_a != labels[a] || new_b != labels[b];
        *tables = kept;
        labels[a] = new_a;
        labels[b] = new_b;
        return changed;
    }
    let before = tables.len();
    tables.retain(|&i| joins(&cat.rels[i].cfg, rel.direction, &labels[a], &labels[b]));
    let mut changed = tables.len() != before;
    let (mut la, mut lb) = (BTreeSet::new(), BTreeSet::new());
    for &i in tables.iter() {
        let r = &cat.rels[i].cfg;
        if matches!(rel.direction, Direction::Outgoing | Direction::Both)
            && labels[a].contains(&r.from)
            && labels[b].contains(&r.to)
        {
            la.insert(r.from.clone());
            lb.insert(r.to.clone());
        }
        if matches!(rel.direction, Direction::Incoming | Direction::Both)
            && labels[a].contains(&r.to)
            && labels[b].contains(&r.from)
        {
            la.insert(r.to.clone());
            lb.insert(r.from.clone());
        }
    }
    for (idx, new) in [(a, la), (b, lb)] {
        if new.len() != labels[idx].len() {
            labels[idx] = new;
            changed = true;
        }
    }
    changed
}

/// Whether table `t` joins some label of `near` to some label of `far` walked in `dir`.
fn joins(t: &RelTable, dir: Direction, near: &BTreeSet<String>, far: &BTreeSet<String>) -> bool {
    let out = near.contains(&t.from) && far.contains(&t.to);
    let inc = near.contains(&t.to) && far.contains(&t.from);
    match dir {
        Direction::Outgoing => out,
        Direction::Incoming => inc,
        Direction::Both => out || inc,
    }
}

/// A path name is a new variable: not bound before, not another path's name, not a node or
/// relationship of the same MATCH.
fn check_path_names(m: &ast::Match, bound: &dyn Fn(&str) -> Option<BoundVar>) -> Result<()> {
    let mut seen: HashSet<&str> = HashSet::new();
    for n in m.patterns.iter().filter_map(|p| p.name.as_ref()) {
        if bound(&n.name).is_some() || !seen.insert(&n.name) {
            return sem_err!(
                VariableAlreadyBound,
                n.span,
                "Variable `{}` already declared",
                n.name
            );
        }
    }
    for p in &m.patterns {
        let nodes = std::iter::once(&p.start.var).chain(p.steps.iter().map(|(_, n)| &n.var));
        let rels = p.steps.iter().map(|(r, _)| &r.var);
        for v in nodes.chain(rels).flatten() {
            if seen.contains(v.name.as_str()) {
                return sem_err!(
                    VariableTypeConflict,
                    v.span,
                    "Variable `{}` is a path, not a node or relationship",
                    v.name
                );
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The candidate labels of each node occurrence and the types of each relationship of
    /// `q`'s first MATCH, bound against the sample graph with `bound` before it.
    fn candidates(q: &str, bound: &dyn Fn(&str) -> Option<BoundVar>) -> Result<Vec<String>> {
        let rt = tokio::runtime::Runtime::new().unwrap();
        let g = rt.block_on(crate::session::Graph::sample()).unwrap();
        let ast = cypher::parse_query(q).unwrap();
        let ast::Clause::Match(m) = &ast.first.clauses[0] else {
            panic!("not a MATCH")
        };
        let binder = Binder {
            catalog: g.catalog(),
            lenient: false,
            bound,
        };
        let qg = binder.bind_match(m)?;
        let mut out: Vec<String> = (qg.labels.iter())
            .map(|l| l.iter().cloned().collect::<Vec<_>>().join("|"))
            .collect();
        for t in &qg.tables {
            let mut types: Vec<&str> = (t.iter())
                .map(|&i| g.catalog().rels[i].cfg.rel_type.as_str())
                .collect();
            types.dedup();
            out.push(format!("-{}-", types.join("|")));
        }
        Ok(out)
    }

    fn free(_: &str) -> Option<BoundVar> {
        None
    }

    #[test]
    fn labels_are_inferred_from_the_configured_endpoints() {
        assert_eq!(
            candidates("MATCH (a)-[:KNOWS]->(b) RETURN a", &free).unwrap(),
            ["Person", "Person", "-KNOWS-"]
        );
        // HAS_CREATOR leaves posts and comments for persons.
        assert_eq!(
            candidates("MATCH (m)-[:HAS_CREATOR]->(p) RETURN m", &free).unwrap(),
            ["Comment:Message|Post:Message", "Person", "-HAS_CREATOR-"]
        );
        // A written label narrows the other end too.
        assert_eq!(
            candidates("MATCH (m:Post)-[r]->(p:Person) RETURN m", &free).unwrap(),
            ["Post:Message", "Person", "-HAS_CREATOR-"]
        );
    }

    #[test]
    fn a_variable_bound_before_keeps_its_labels_and_kind() {
        let person = |v: &str| (v == "a").then(|| BoundVar::node(vec!["Person".to_string()]));
        assert_eq!(
            candidates("MATCH (a)-[:LIKES]->(m) RETURN m", &person).unwrap(),
            ["Person", "Comment:Message|Post:Message", "-LIKES-"]
        );
        let rel = |v: &str| (v == "a").then_some(BoundVar::Rel { tables: vec![] });
        let e = candidates("MATCH (a)-[:KNOWS]->(b) RETURN b", &rel).unwrap_err();
        assert_eq!(e.kind_name(), "VariableTypeConflict");
    }

    #[test]
    fn a_pattern_no_table_serves_is_unsatisfiable_not_an_error() {
        let rt = tokio::runtime::Runtime::new().unwrap();
        let g = rt.block_on(crate::session::Graph::sample()).unwrap();
        let ast = cypher::parse_query("MATCH (a:Person)-[:HAS_CREATOR]->(b) RETURN b").unwrap();
        let ast::Clause::Match(m) = &ast.first.clauses[0] else {
            panic!("not a MATCH")
        };
        let binder = Binder {
            catalog: g.catalog(),
            lenient: false,
            bound: &free,
        };
        assert!(!binder.bind_match(m).unwrap().satisfiable);
    }
}
