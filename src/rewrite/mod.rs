//! Graph rewrites on MATCH patterns, before DataFusion sees the plan. [`prepare_match`] runs
//! them in the order a MATCH meets them:
//!
//! 1. `key_lookup`: key equalities of WHERE into property maps (a lookup, not a scan);
//! 2. `rematch`: relationships bound earlier matched again through fresh variables;
//! 3. `path_names`: every element of a named path named;
//! 4. (binding the MATCH into a `QueryGraph`)
//! 5. `branching`: one branch per consistent label / table combination;
//! 6. `pattern_order`: each branch re-rooted at its most selective node (when switched on);
//! 7. (resolving each branch to one label per node and one table per relationship).
//!
//! Before them, on the whole query, `merge_matches` makes one MATCH of consecutive ones (each
//! one's relationships unique among themselves), so that re-rooting orders them together.
//!
//! 1-3 take and return the MATCH's AST, 5-6 query graphs. `clause.rs` splits a MATCH where
//! its parts are lowered apart (a WHERE with subqueries, values in node positions, shortest
//! paths) and prepares each part; its `run` does so for every MATCH the binder bound. The
//! planner lowers what it gets as it is.

pub mod branching;
pub mod clause;
pub mod key_lookup;
pub mod merge_matches;
pub mod path_names;
pub mod pattern_order;
pub mod rematch;
pub mod unroll;
pub mod var_length_maps;

use crate::binder::combos::{combinations, MAX_BRANCHES};
use crate::binder::{Binder, BoundVar, QueryGraph, ResolvedPath};
use crate::catalog::Catalog;
use crate::error::{Error, Result, SemanticKind};
use cypher::ast;
use path_names::PathElements;
use std::collections::BTreeSet;

/// What a MATCH's rewrites need to know of where it stands.
#[derive(Clone, Copy)]
pub(crate) struct MatchContext<'a> {
    pub catalog: &'a Catalog,
    /// Schema-less semantics (see [`Binder::lenient`]).
    pub lenient: bool,
    /// The variables earlier clauses bound.
    pub scope: &'a [(String, BoundVar)],
    /// The parameters whose value is an integer: a key equality on one is a lookup.
    pub integer_params: &'a BTreeSet<String>,
    /// Re-rooting is switched on (and allowed by the MATCH this one is lowered for, if any).
    pub reroot: bool,
    /// The MATCH is a shortest-path search: searched from its start node, never branched.
    pub shortest: bool,
    /// The node variable the next clause counts per (a root for re-rooting).
    pub grouped_by: Option<&'a str>,
    /// Node variables standing for a value, looked up by the key that value names.
    pub looked_up: &'a BTreeSet<String>,
    /// The labels whose key index can look such a node up.
    pub lookup_labels: &'a KeyLookups<'a>,
    /// The internal names given so far (fresh names continue after them).
    pub names: Names,
    /// What the CSR indexes cover (`None`: they are not used): a variable-length hop they
    /// do not cover is unrolled into chains of fixed hops.
    pub traversable: Option<unroll::Traversable<'a>>,
    /// The most hops an unrolled variable-length hop may take.
    pub max_var_length: u64,
}

/// The labels whose key index looks a node up (a node standing for a value is looked up by
/// the key it names). Asked per label, so that a graph opened with deferred indexes reads
/// only the key indexes the query's lookups need.
#[derive(Debug, Default)]
pub(crate) struct KeyLookups<'a> {
    /// The labels whose nodes can be looked up by key at all (integer keys, one process).
    pub candidates: BTreeSet<String>,
    pub indexes: Option<&'a crate::csr::GraphIndexes>,
}

impl KeyLookups<'_> {
    pub fn contains(&self, label: &str) -> bool {
        self.candidates.contains(label)
            && self
                .indexes
                .is_some_and(|idx| idx.key_lookup(label).is_some())
    }
}

impl MatchContext<'_> {
    /// What an earlier clause bound `v` to.
    pub(crate) fn bound(&self, v: &str) -> Option<BoundVar> {
        self.scope
            .iter()
            .find(|(n, _)| n == v)
            .map(|(_, b)| b.clone())
    }
}

/// A MATCH after its rewrites: what the planner lowers.
#[derive(Debug, Clone)]
pub(crate) struct PreparedMatch {
    /// The MATCH as rewritten, bound, before branching.
    pub graph: QueryGraph,
    /// Its named paths, as their elements' variables.
    pub paths: Vec<PathElements>,
    /// Its variable-length relationships the user names (or that match a list again): lists
    /// whose elements are values.
    pub lists: Vec<String>,
    /// Re-rooting holds for this MATCH and for those its lowering makes (an unrolled
    /// variable-length hop): not where a walk's order is kept (relationship lists and
    /// paths as values, a shortest-path search).
    pub reroot: bool,
    pub shape: MatchShape,
    /// What the rewrites did, for EXPLAIN.
    pub notes: Vec<String>,
    /// The internal names the rewrites of the AST gave.
    pub names: Names,
}

impl PreparedMatch {
    /// The internal names its rewrites gave, re-rooting and chains included.
    pub fn names_given(&self) -> Names {
        let planned = match &self.shape {
            MatchShape::One(p) => p.names,
            MatchShape::Branches(bs) => {
                (bs.iter().map(|b| b.planned.names).max()).unwrap_or_default()
            }
            MatchShape::Empty => Names::default(),
        };
        planned.max(self.names)
    }
}

/// How a prepared MATCH is lowered.
#[derive(Debug, Clone)]
pub(crate) enum MatchShape {
    /// One ordinary pattern.
    One(Planned),
    /// One pattern per label / table combination, combined with UNION ALL.
    Branches(Vec<Branch>),
    /// Branching found no consistent combination: the MATCH has no rows.
    Empty,
}

/// One branch of a MATCH.
#[derive(Debug, Clone)]
pub(crate) struct Branch {
    /// Variables bound earlier with several labels, each with this branch's one.
    pub narrowed: Vec<(String, String)>,
    pub planned: Planned,
}

/// One ordinary pattern, ready to lower.
#[derive(Debug, Clone)]
pub(crate) struct Planned {
    /// The pattern as lowered: re-rooted, or as written.
    pub graph: QueryGraph,
    /// Per path, a label per node and a table per relationship.
    pub resolved: Vec<ResolvedPath>,
    /// The chains of its variable-length hops that run as joins.
    pub chains: unroll::Chains,
    /// The internal names re-rooting and the chains gave.
    pub names: Names,
}

/// The numbering of a query's internal names (`__anon3`, `__vlr7`, ...): every rewrite and
/// then the planner continue it, so no two names they give collide.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, PartialOrd, Ord)]
pub struct Names(usize);

impl Names {
    /// A new name `__{what}{n}`.
    pub fn fresh(&mut self, what: &str) -> String {
        format!("__{what}{}", self.next())
    }

    /// A new number, for a name of another form.
    pub fn next(&mut self) -> usize {
        self.0 += 1;
        self.0
    }
}

/// Runs a MATCH's rewrites, in order, and binds it: what the planner lowers.
pub(crate) fn prepare_match(cx: &MatchContext<'_>, m: &ast::Match) -> Result<PreparedMatch> {
    let mut names = cx.names;
    let scope = |v: &str| cx.bound(v);
    let integer = |p: &str| cx.integer_params.contains(p);
    let m = key_lookup::key_equalities_into_maps(m, cx.catalog, &integer);
    let rematched = rematch::rematch_bound_relationships(&m, cx.catalog, &scope, &mut || {
        names.fresh(rematch::REBOUND)
    });
    let m = rematched.as_ref().unwrap_or(&m);
    let (m, paths) = path_names::name_path_elements(m, &mut |what| names.fresh(what));
    if !cx.lenient {
        var_length_maps::check_keys(&m, cx.catalog)?;
    }
    let m =
        var_length_maps::var_length_maps_into_where(&m, &mut |what| names.fresh(what)).into_owned();
    let binder = Binder {
        catalog: cx.catalog,
        lenient: cx.lenient,
        bound: &scope,
    };
    let graph = binder.bind_match(&m)?;
    let reroot = cx.reroot && !cx.shortest && !keeps_walk_order(&graph, &paths);
    let mut notes = Vec::new();
    if let Some(groups) = &m.unique_within {
        notes.push(format!(
            "{} MATCH clauses planned as one pattern, relationships unique within each (merge_matches)",
            groups.len()
        ));
    }
    // Variables bound with several labels (by a MATCH that branched), at their first
    // occurrence: each branch narrows them to its label there.
    let mut several: Vec<(usize, String)> = Vec::new();
    for (i, n) in graph.nodes.iter().enumerate() {
        let Some(v) = &n.var else { continue };
        let is_several = matches!(scope(&v.name), Some(BoundVar::Node { several: true, .. }));
        if is_several && !several.iter().any(|(_, name)| name == &v.name) {
            several.push((i, v.name.clone()));
        }
    }
    let elems = |v: &str| needs_elems(&paths, v);
    let shape = if several.is_empty() && !(graph.satisfiable && graph.is_ambiguous()) {
        MatchShape::One(plan_one(
            cx,
            &binder,
            &graph,
            (reroot, &elems),
            names,
            &mut notes,
        )?)
    } else {
        branches(cx, &graph, &several, (reroot, &elems, names), &mut notes)?
    };
    let rebound = format!("__{}", rematch::REBOUND);
    // The lists a condition reads (`all()` over a property map's relationships) too.
    let mapped = format!("__{}", var_length_maps::LIST);
    let lists = (graph.rels.iter())
        .filter(|r| r.length.is_some())
        .filter_map(|r| r.var.as_ref().map(|v| v.name.clone()))
        .filter(|v| !v.starts_with("__") || v.starts_with(&rebound) || v.starts_with(&mapped))
        .collect();
    Ok(PreparedMatch {
        graph,
        paths,
        lists,
        reroot,
        shape,
        notes,
        names,
    })
}

/// A MATCH that branches: a pattern per consistent combination of labels and tables.
/// `several`: the variables bound with several labels (first occurrence, name).
fn branches(
    cx: &MatchContext<'_>,
    graph: &QueryGraph,
    several: &[(usize, String)],
    (reroot, elems, names): (bool, &dyn Fn(&str) -> bool, Names),
    notes: &mut Vec<String>,
) -> Result<MatchShape> {
    let m = &graph.clause;
    if cx.shortest {
        return Err(Error::semantic(
            SemanticKind::AmbiguousPattern,
            "the shortest path's nodes could have several labels; give them labels",
            m.span,
        ));
    }
    if !cx.lenient {
        graph.check_property_maps(cx.catalog)?;
    }
    let combos = if graph.satisfiable {
        combinations(cx.catalog, graph).ok_or_else(|| {
            Error::semantic(
                SemanticKind::AmbiguousPattern,
                format!(
                    "the pattern matches more than {MAX_BRANCHES} combinations of labels and relationship tables; give its nodes labels or its relationships types"
                ),
                m.span,
            )
        })?
    } else {
        vec![]
    };
    if combos.is_empty() {
        return Ok(MatchShape::Empty);
    }
    notes.push(format!(
        "{}  -- {} branch{}",
        ast::Clause::Match(m.clone()),
        combos.len(),
        if combos.len() == 1 { "" } else { "es" }
    ));
    let mut out = Vec::new();
    for combo in &combos {
        // A variable bound with several labels has this branch's one.
        let narrowed: Vec<(String, String)> = several
            .iter()
            .map(|(i, v)| (v.clone(), combo.labels[*i].clone()))
            .collect();
        let scope = |v: &str| match narrowed.iter().find(|(name, _)| name == v) {
            Some((_, label)) => Some(BoundVar::node(vec![label.clone()])),
            None => cx.bound(v),
        };
        let binder = Binder {
            catalog: cx.catalog,
            lenient: cx.lenient,
            bound: &scope,
        };
        let pinned = branching::pin(&binder, graph, combo)?;
        let planned = plan_one(cx, &binder, &pinned, (reroot, elems), names, notes)?;
        out.push(Branch { narrowed, planned });
    }
    Ok(MatchShape::Branches(out))
}

/// One ordinary pattern: re-rooted when `reroot` holds, then resolved, its variable-length
/// hops on the join path unrolled (`elems`: whether a relationship variable's elements are
/// needed as values).
fn plan_one(
    cx: &MatchContext<'_>,
    binder: &Binder<'_>,
    graph: &QueryGraph,
    (reroot, elems): (bool, &dyn Fn(&str) -> bool),
    mut names: Names,
    notes: &mut Vec<String>,
) -> Result<Planned> {
    let lookups = |v: &str, label: Option<&str>| {
        cx.looked_up.contains(v)
            && match label {
                Some(l) => cx.lookup_labels.contains(l),
                None => cx
                    .catalog
                    .nodes
                    .values()
                    .all(|n| cx.lookup_labels.contains(&n.label)),
            }
    };
    let reordered = if reroot {
        pattern_order::reorder(graph, binder, cx.grouped_by, &lookups, &mut || {
            names.fresh("anon")
        })
        .transpose()?
    } else {
        None
    };
    let graph = match reordered {
        Some(r) => {
            let roots: Vec<String> = r
                .roots
                .iter()
                .map(|(v, why)| format!("{v} ({why})"))
                .collect();
            let orders: String = r.orders.iter().map(|o| format!("; {o}")).collect();
            notes.push(format!(
                "{}  -- root: {}{orders}",
                ast::Clause::Match(r.graph.clause.clone()),
                roots.join(", ")
            ));
            r.graph
        }
        None => graph.clone(),
    };
    let resolved = binder.resolve(&graph)?;
    let chains = unroll::unroll(cx, &graph, &resolved, reroot, elems, &mut names)?;
    Ok(Planned {
        graph,
        resolved,
        chains,
        names,
    })
}

/// Whether a MATCH's walks keep the order written: a relationship list it names (or
/// matches again) or a named path's variable-length segment is a value listed in the
/// direction walked.
fn keeps_walk_order(graph: &QueryGraph, paths: &[PathElements]) -> bool {
    (graph.rels.iter())
        .any(|r| r.length.is_some() && r.var.as_ref().is_some_and(|v| needs_elems(paths, &v.name)))
}

/// Whether a variable-length relationship's variable `v` is a list of relationships with
/// their elements as values: the user names it (or it matches one again, or a condition of
/// its property map reads it), or it is a named path's segment.
fn needs_elems(paths: &[PathElements], v: &str) -> bool {
    let rebound = format!("__{}", rematch::REBOUND);
    let mapped = format!("__{}", var_length_maps::LIST);
    !v.starts_with("__")
        || v.starts_with(&rebound)
        || v.starts_with(&mapped)
        || paths.iter().any(|p| p.elems.iter().any(|e| e == v))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rewrite::test_util::{nth_match, sample, text};

    /// `q`'s first clause prepared with `scope` bound before it, re-rooting on.
    fn prepare(q: &str, scope: &[(String, BoundVar)], names: usize) -> Result<PreparedMatch> {
        let g = sample();
        let none = BTreeSet::new();
        let cx = MatchContext {
            catalog: g.catalog(),
            lenient: false,
            scope,
            integer_params: &none,
            reroot: true,
            shortest: false,
            grouped_by: None,
            looked_up: &none,
            lookup_labels: &KeyLookups::default(),
            names: Names(names),
            traversable: None,
            max_var_length: 10,
        };
        prepare_match(&cx, &nth_match(q, 0))
    }

    /// Each branch's pattern, as lowered, with the labels narrowed for it.
    fn branches(p: &PreparedMatch) -> Vec<String> {
        let MatchShape::Branches(bs) = &p.shape else {
            panic!("not branched: {:?}", p.shape)
        };
        bs.iter()
            .map(|b| format!("{} {:?}", text(&b.planned.graph.clause), b.narrowed))
            .collect()
    }

    #[test]
    fn one_pattern_is_re_rooted_and_resolved() {
        let p = prepare(
            "MATCH (a:Person)-[:KNOWS]->(b:Person) WHERE b.id = 3 RETURN a",
            &[],
            0,
        )
        .unwrap();
        let MatchShape::One(one) = &p.shape else {
            panic!("{:?}", p.shape)
        };
        // The key equality became a property map, which re-rooting starts from.
        assert_eq!(
            text(&one.graph.clause),
            "MATCH (b:Person {id: 3})<-[:KNOWS]-(a:Person)"
        );
        assert_eq!(one.resolved[0].labels, ["Person", "Person"]);
        assert!(one.resolved[0].satisfiable);
        assert_eq!(p.notes.len(), 1, "{:?}", p.notes);
        assert!(
            p.notes[0].ends_with("-- root: b (key equality)"),
            "{:?}",
            p.notes
        );
        assert!(p.reroot);
    }

    #[test]
    fn a_variable_of_several_labels_branches_and_each_branch_has_one() {
        let p = prepare("MATCH (m)-[:HAS_CREATOR]->(p:Person) RETURN m", &[], 0).unwrap();
        assert_eq!(
            branches(&p),
            [
                "MATCH (m:Comment:Message)-[:HAS_CREATOR]->(p:Person) []",
                "MATCH (m:Post:Message)-[:HAS_CREATOR]->(p:Person) []"
            ]
        );
        assert!(p.notes[0].ends_with("-- 2 branches"), "{:?}", p.notes);
        // Bound before by a MATCH that branched: it branches again, narrowed per branch.
        let messages = vec!["Comment:Message".to_string(), "Post:Message".to_string()];
        let several = [(
            "m".to_string(),
            BoundVar::Node {
                labels: messages.clone(),
                several: true,
            },
        )];
        let p = prepare("MATCH (m)-[:HAS_CREATOR]->(p) RETURN p", &several, 0).unwrap();
        assert_eq!(
            branches(&p),
            [
                r#"MATCH (m:Comment:Message)-[:HAS_CREATOR]->(p:Person) [("m", "Comment:Message")]"#,
                r#"MATCH (m:Post:Message)-[:HAS_CREATOR]->(p:Person) [("m", "Post:Message")]"#
            ]
        );
        // Candidates of an ordinary MATCH branch too, with nothing to narrow.
        let candidates = [("m".to_string(), BoundVar::node(messages))];
        let p = prepare("MATCH (m)-[:HAS_CREATOR]->(p) RETURN p", &candidates, 0).unwrap();
        assert!(
            branches(&p).iter().all(|b| b.ends_with("[]")),
            "{:?}",
            branches(&p)
        );
    }

    #[test]
    fn a_pattern_no_combination_serves_is_empty() {
        // A branched variable where no branch fits: no rows.
        let several = [(
            "m".to_string(),
            BoundVar::Node {
                labels: vec!["Comment:Message".to_string(), "Post:Message".to_string()],
                several: true,
            },
        )];
        let p = prepare("MATCH (m)-[:KNOWS]->(x) RETURN x", &several, 0).unwrap();
        assert!(matches!(p.shape, MatchShape::Empty), "{:?}", p.shape);
        // An ordinary pattern no table serves is one unsatisfiable pattern (a `false` filter).
        let p = prepare(
            "MATCH (a:Person)-[:HAS_CREATOR|LIKES]->(b:Person) RETURN a",
            &[],
            0,
        );
        let MatchShape::One(one) = p.unwrap().shape else {
            panic!("not one pattern")
        };
        assert!(!one.resolved[0].satisfiable);
    }

    #[test]
    fn walks_kept_in_order_are_not_re_rooted() {
        let p = prepare(
            "MATCH p = (a:Person)-[:KNOWS*1..2]->(b:Person {id: 3}) RETURN p",
            &[],
            0,
        )
        .unwrap();
        assert!(!p.reroot);
        assert_eq!(p.paths.len(), 1);
        assert_eq!(p.paths[0].elems[0], "a");
        let p = prepare(
            "MATCH (a:Person)-[rs:KNOWS*1..2]->(b:Person {id: 3}) RETURN rs",
            &[],
            0,
        )
        .unwrap();
        assert!(!p.reroot);
        let p = prepare(
            "MATCH (a:Person)-[:KNOWS*1..2]->(b:Person {id: 3}) RETURN a",
            &[],
            0,
        )
        .unwrap();
        assert!(p.reroot);
    }

    #[test]
    fn fresh_names_continue_after_the_ones_given() {
        let scope = [("r".to_string(), BoundVar::Rel { tables: vec![] })];
        let p = prepare("MATCH p = (a)-[r]->() RETURN p", &scope, 7).unwrap();
        // The relationship matched again, then the path's anonymous node named.
        assert_eq!(p.paths[0].elems, ["a", "__rebound8", "__pn9"]);
        assert_eq!(p.names, Names(9));
    }

    #[test]
    fn a_shortest_path_between_nodes_of_several_labels_is_an_error() {
        let g = sample();
        let none = BTreeSet::new();
        let cx = MatchContext {
            catalog: g.catalog(),
            lenient: false,
            scope: &[],
            integer_params: &none,
            reroot: true,
            shortest: true,
            grouped_by: None,
            looked_up: &none,
            lookup_labels: &KeyLookups::default(),
            names: Names::default(),
            traversable: None,
            max_var_length: 10,
        };
        let m = nth_match("MATCH (a:Person)-[:LIKES*]->(m) RETURN m", 0);
        let e = prepare_match(&cx, &m).unwrap_err();
        assert_eq!(e.kind_name(), "AmbiguousPattern");
    }
}

#[cfg(test)]
pub(crate) mod test_util {
    use cypher::ast;

    /// The sample graph (for its catalog).
    pub fn sample() -> crate::session::Graph {
        let rt = tokio::runtime::Runtime::new().unwrap();
        rt.block_on(crate::session::Graph::sample()).unwrap()
    }

    /// The `n`th clause of `q`, a MATCH.
    pub fn nth_match(q: &str, n: usize) -> ast::Match {
        let q = cypher::parse_query(q).unwrap();
        match &q.first.clauses[n] {
            ast::Clause::Match(m) => m.clone(),
            other => panic!("not a MATCH: {other}"),
        }
    }

    /// `m` as Cypher text.
    pub fn text(m: &ast::Match) -> String {
        ast::Clause::Match(m.clone()).to_string()
    }

    /// The first clause of `q` bound against `catalog` (no variables bound before).
    pub fn bound_match(catalog: &crate::catalog::Catalog, q: &str) -> crate::binder::QueryGraph {
        let none = |_: &str| None;
        let binder = crate::binder::Binder {
            catalog,
            lenient: false,
            bound: &none,
        };
        binder.bind_match(&nth_match(q, 0)).unwrap()
    }
}
