//! The shared optimizer passes as a user sees them: rule counters in EXPLAIN, one switch per
//! rule, and the eligibility contract of seed 003 (where a rewrite must not fire).

use crate::common;

use lance_csr::{Graph, Params};
use lance_csr::{GraphOptions, RuleSwitches};

async fn sample_with(rules: RuleSwitches) -> Graph {
    let g = common::sample().await;
    g.with_options(g.options().clone().with_rules(rules))
        .await
        .unwrap()
}

/// The `== rule counters ==` line of an EXPLAIN, as (name, value) pairs.
fn counters(explain: &str) -> Vec<(String, usize)> {
    let line = explain
        .lines()
        .skip_while(|l| *l != "== rule counters ==")
        .nth(1)
        .unwrap_or_else(|| panic!("no counters in\n{explain}"));
    line.split(", ")
        .map(|kv| {
            let (k, v) = kv.split_once('=').unwrap();
            (k.to_string(), v.parse().unwrap())
        })
        .collect()
}

fn counter(explain: &str, name: &str) -> usize {
    counters(explain)
        .into_iter()
        .find(|(k, _)| k == name)
        .map(|(_, v)| v)
        .unwrap_or_else(|| panic!("no counter {name}"))
}

const PUSHED: &str = "MATCH (a:Person {id: 1})-[k:KNOWS]->(b:Person) WHERE b.age + 0 > 30 AND k.creationDate > 5 RETURN b.firstName";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn explain_reports_what_the_rules_did() {
    let g = common::sample().await;
    let e = g.explain(PUSHED, &Params::new()).await.unwrap();
    // Both conjuncts went into the hop, which left no filter above it.
    assert_eq!(counter(&e, "pushed_filters"), 2, "{e}");
    assert!(counter(&e, "dropped_nodes") >= 1, "{e}");
    // The hop fetches only b.firstName (and b.age for its filter): the rest was dropped.
    assert!(counter(&e, "dropped_columns") > 0, "{e}");
    assert!(counter(&e, "pruned_projections") > 0, "{e}");
    assert!(
        e.contains("filter=b__age > Int64(30)"),
        "`+ 0` folded inside the hop:\n{e}"
    );
    // Counters are per EXPLAIN, not accumulated over the session.
    let again = g.explain(PUSHED, &Params::new()).await.unwrap();
    assert_eq!(counters(&e), counters(&again));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_rule_can_be_switched_off() {
    let p = Params::new();
    // Push off: the filter stays above the hop, nothing pushed.
    let mut r = RuleSwitches::default();
    r.disable("push_csr_target_filters").unwrap();
    let e = sample_with(r).await.explain(PUSHED, &p).await.unwrap();
    assert_eq!(counter(&e, "pushed_filters"), 0, "{e}");
    assert!(!e.contains("edge_filter="), "{e}");
    // Prune off: nothing dropped.
    let mut r = RuleSwitches::default();
    r.disable("prune_csr_target_columns").unwrap();
    let e = sample_with(r).await.explain(PUSHED, &p).await.unwrap();
    assert_eq!(counter(&e, "dropped_columns"), 0, "{e}");
    // Limits off: no fetch in the operators.
    let q = "MATCH (a:Person)-[:KNOWS]->(b:Person) RETURN b.id LIMIT 2";
    let mut r = RuleSwitches::default();
    r.disable("absorb_limits").unwrap();
    let e = sample_with(r).await.explain(q, &p).await.unwrap();
    assert!(!e.contains("fetch=2, "), "{e}");
    let e = common::sample().await.explain(q, &p).await.unwrap();
    assert!(e.contains("take=b[b__id], edge=__anonr1[], fetch=2"), "{e}");
    // Re-rooting off: no pattern order notes.
    let q = "MATCH (f:Forum)-[:HAS_MEMBER]->(p:Person) WHERE p.id = 4 RETURN f.title";
    let mut r = RuleSwitches::default();
    r.disable("reroot").unwrap();
    let e = sample_with(r).await.explain(q, &p).await.unwrap();
    assert!(!e.contains("-- root:"), "{e}");
    // Unknown names are refused with the list.
    let err = RuleSwitches::default().disable("nope").unwrap_err();
    assert!(err.to_string().contains("fold_constants"), "{err}");
    // Every named switch exists.
    for n in RuleSwitches::NAMES {
        RuleSwitches::default().disable(n).unwrap();
    }
}

/// Indented physical plan lines as (depth, text).
fn plan_tree(explain: &str) -> Vec<(usize, String)> {
    explain
        .split("== physical plan ==")
        .nth(1)
        .unwrap_or_default()
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| {
            let depth = (l.len() - l.trim_start().len()) / 2;
            (depth, l.trim().to_string())
        })
        .collect()
}

/// Hash joins that build a hash table of one partition (`CollectLeft`) from a join result.
fn collect_left_builds_of_joins(explain: &str) -> usize {
    let t = plan_tree(explain);
    let mut n = 0;
    for (i, (d, line)) in t.iter().enumerate() {
        if !line.starts_with("HashJoinExec: mode=CollectLeft") {
            continue;
        }
        // The build side is the first child: the lines after it until the second child.
        let Some(first) = t.get(i + 1).filter(|(cd, _)| *cd == d + 1) else {
            continue;
        };
        let build: Vec<&String> = t[i + 2..]
            .iter()
            .take_while(|(cd, _)| *cd > first.0)
            .map(|(_, l)| l)
            .collect();
        if first.1.starts_with("HashJoinExec")
            || build.iter().any(|l| l.starts_with("HashJoinExec"))
        {
            n += 1;
        }
    }
    n
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn key_statistics_keep_join_results_off_the_build_side() {
    let dir = tempfile::tempdir().unwrap();
    let tables = lance_csr_datasets::social::generate(4.0, 3, &mut |_| {});
    let path = lance_csr::write_graph(dir.path(), tables, &mut |_| {})
        .await
        .unwrap();
    let open = |rules: RuleSwitches| {
        let path = path.clone();
        async move {
            Graph::open_with(
                &path,
                GraphOptions::default()
                    .with_mode(lance_csr::Mode::Join)
                    .with_rules(rules),
            )
            .await
            .unwrap()
        }
    };
    let q = "MATCH (a:Person)-[:KNOWS]->(b:Person)-[:KNOWS]->(c:Person) WHERE a.age > 60 RETURN count(*)";
    let with = open(RuleSwitches::default()).await;
    let mut off = RuleSwitches::default();
    off.disable("key_statistics").unwrap();
    let without = open(off).await;
    let (ew, eo) = (
        with.explain(q, &Params::new()).await.unwrap(),
        without.explain(q, &Params::new()).await.unwrap(),
    );
    assert!(ew.contains("KeyStatisticsExec: ndv=[src="), "{ew}");
    assert!(!eo.contains("KeyStatisticsExec"), "{eo}");
    // Without distinct counts the two-hop intermediate is the build side of the last join;
    // with them, the person table is.
    assert!(collect_left_builds_of_joins(&eo) > 0, "{eo}");
    assert_eq!(collect_left_builds_of_joins(&ew), 0, "{ew}");
    // Same answer either way.
    assert_eq!(
        common::lines(&common::run(&with, q).await),
        common::lines(&common::run(&without, q).await)
    );
}

/// The sample graph with sharing at any size (it is too small to pass the default minimum).
async fn sample_sharing_all() -> Graph {
    let g = common::sample().await;
    g.with_options(g.options().clone().with_share_min_saved_work(0))
        .await
        .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_anchor_repeated_in_every_branch_is_evaluated_once() {
    let g = sample_sharing_all().await;
    let p = Params::new();
    let q = "MATCH (p:Person {id: 1})-[r]->(x) RETURN type(r) AS t, count(*) AS n ORDER BY t";
    let e = g.explain(q, &p).await.unwrap();
    // Five branches (one per table leaving a Person), one anchor lookup shared by all.
    assert!(e.contains("SharedSubplan: id=0, consumers=5"), "{e}");
    assert_eq!(counter(&e, "shared_subplans"), 4, "{e}");
    let analyzed = g.explain_analyze(q, &p).await.unwrap();
    let shared: Vec<&str> = analyzed
        .lines()
        .filter(|l| l.contains("SharedSubplanExec"))
        .collect();
    assert_eq!(shared.len(), 5, "{analyzed}");
    // One occurrence ran the subplan, the other four read its result.
    let ran = shared
        .iter()
        .filter(|l| l.contains("evaluations=1"))
        .count();
    let read = shared
        .iter()
        .filter(|l| l.contains("evaluations=0"))
        .count();
    assert_eq!((ran, read), (1, 4), "{analyzed}");
    // The same answer without sharing.
    let mut off = RuleSwitches::default();
    off.disable("share_subplans").unwrap();
    let plain = sample_with(off).await;
    assert!(!plain
        .explain(q, &p)
        .await
        .unwrap()
        .contains("SharedSubplan"));
    assert_eq!(
        common::lines(&common::run(&g, q).await),
        common::lines(&common::run(&plain, q).await)
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn subplans_are_not_shared_when_it_would_not_pay_or_not_be_safe() {
    let g = sample_sharing_all().await;
    let p = Params::new();
    for q in [
        // One branch: nothing repeats.
        "MATCH (p:Person {id: 1})-[:KNOWS]->(x) RETURN count(*)",
        // Joins (the join path): no estimate, no sharing.
        "MATCH (a)-[:LIKES]->(m) RETURN count(*)",
    ] {
        let e = g.explain(q, &p).await.unwrap();
        assert!(!e.contains("SharedSubplan"), "{q}\n{e}");
        assert_eq!(counter(&e, "shared_subplans"), 0, "{q}");
    }
    // A volatile anchor: not the rule's to share (it would estimate its rows), but every
    // branch must extend the same rows (one draw of `rand()` per row), so the planner
    // shares it.
    let q = "MATCH (p:Person) WHERE rand() < 2 MATCH (p)-[r]->(x) RETURN count(*)";
    let e = g.explain(q, &p).await.unwrap();
    assert_eq!(counter(&e, "shared_subplans"), 0, "{q}");
    assert!(
        e.contains("same rows for every reader") && !e.contains("rows~"),
        "{q}\n{e}"
    );
    let join = g.with_mode(lance_csr::Mode::Join).await.unwrap();
    let e = join
        .explain("MATCH (p:Person {id: 1})-[r]->(x) RETURN count(*)", &p)
        .await
        .unwrap();
    assert!(!e.contains("SharedSubplan"), "{e}");
}

/// A pattern predicate or COUNT between two bound nodes over one relationship table is a CSR
/// probe: the hop closes onto the bound node and counts its matches per row, with no
/// join back, no distinct keys and no shared input. Its answers are the MATCH's.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn existence_between_bound_nodes_is_a_csr_probe() {
    let g = common::sample().await;
    let cases = [
        (
            "MATCH (a:Person {id: $id}), (b:Person) WHERE (a)-[:KNOWS]-(b) RETURN count(b)",
            "MATCH (a:Person {id: $id})-[:KNOWS]-(b:Person) RETURN count(DISTINCT b)",
        ),
        (
            "MATCH (a:Person {id: $id}), (b:Person) WHERE NOT (b)-[:KNOWS]->(a) RETURN count(b)",
            "MATCH (a:Person {id: $id}), (b:Person) OPTIONAL MATCH (b)-[k:KNOWS]->(a) WITH b, k WHERE k IS NULL RETURN count(b)",
        ),
        (
            "MATCH (a:Person {id: $id})-[:KNOWS]->(b:Person) RETURN sum(COUNT { (b)<-[:KNOWS]-(a) })",
            "MATCH (a:Person {id: $id})-[:KNOWS]->(b:Person) RETURN count(*)",
        ),
        (
            "MATCH (a:Person {id: $id}) OPTIONAL MATCH (a)-[:KNOWS]->(n:Person) WHERE n.age > 30 RETURN count(*), sum(COUNT { (a)-[:KNOWS]-(n) })",
            "MATCH (a:Person {id: $id}) OPTIONAL MATCH (a)-[:KNOWS]->(n:Person) WHERE n.age > 30 OPTIONAL MATCH (a)-[k:KNOWS]-(n) WITH a, n, count(k) AS c RETURN count(*), sum(c)",
        ),
    ];
    for (probe, plain) in cases {
        let text = g.explain_analyze(probe, &by_id(1)).await.unwrap();
        // The OPTIONAL MATCH joins; the tests add no join of their own.
        let joins = probe.matches("OPTIONAL MATCH").count();
        assert!(
            text.contains("close, counted") && text.matches("HashJoinExec").count() == joins,
            "{probe}\n{text}"
        );
        for id in 1..=6 {
            let got = common::rows(&g.query(probe, &by_id(id)).await.unwrap());
            let want = common::rows(&g.query(plain, &by_id(id)).await.unwrap());
            assert_eq!(got, want, "{probe} with id {id}");
        }
    }
}

/// `count()` of an OPTIONAL MATCH's node, grouped, is counted without rows (the hop counted
/// where it matched), with the answers of the rows: a group without a match keeps its 0, a
/// root without the mandatory match has none.
#[tokio::test]
async fn a_grouped_count_of_an_optional_matchs_node_is_counted_without_rows() {
    let g = common::sample().await;
    let rows_of = sample_with(RuleSwitches::none()).await;
    for q in [
        "MATCH (p:Person) OPTIONAL MATCH (p)-[:KNOWS]->(f:Person) OPTIONAL MATCH (p)<-[:HAS_CREATOR]-(m:Post) RETURN p.firstName AS n, count(f) AS c",
        "MATCH (p:Person)-[:KNOWS]->(q:Person) OPTIONAL MATCH (q)<-[:HAS_CREATOR]-(m:Post) RETURN p.firstName AS n, count(m) AS c",
    ] {
        let text = g.explain(q, &Params::new()).await.unwrap();
        assert!(text.contains("counted where it matched"), "{q}\n{text}");
        let mut got = common::rows(&g.query(q, &Params::new()).await.unwrap());
        let mut want = common::rows(&rows_of.query(q, &Params::new()).await.unwrap());
        got.sort();
        want.sort();
        assert_eq!(got, want, "{q}");
    }
}

/// A node taken from a list and matched again (`UNWIND xs AS x MATCH (x)-->()`) is looked up
/// by the key its identity names, per row: no node table scanned and joined on identity.
/// Nodes of several tables (a label union), values that are no node of a table (null), and a
/// list matched again next to a bound node, agree with the same query matched by key.
#[tokio::test]
async fn nodes_taken_from_lists_are_looked_up_by_key() {
    let g = common::sample().await;
    let cases = [
        (
            "MATCH (a:Person {id: $id})-[:KNOWS]-(f:Person) WITH collect(f) AS fs UNWIND fs AS f MATCH (f)-[:LIKES]->(m) RETURN f.id AS f, m.id AS m",
            "MATCH (a:Person {id: $id})-[:KNOWS]-(f:Person) WITH collect(f.id) AS fs UNWIND fs AS k MATCH (f:Person {id: k})-[:LIKES]->(m) RETURN f.id AS f, m.id AS m",
        ),
        (
            "MATCH (a:Person {id: $id})-[:LIKES]->(m:Message) WITH a, collect(m) + [null] AS ms UNWIND ms AS m MATCH (m)-[:HAS_CREATOR]->(c:Person) WHERE (c)-[:KNOWS]-(a) RETURN m.id AS m, c.id AS c",
            "MATCH (a:Person {id: $id})-[:LIKES]->(m:Message)-[:HAS_CREATOR]->(c:Person) WHERE (c)-[:KNOWS]-(a) RETURN m.id AS m, c.id AS c",
        ),
        (
            "MATCH (a:Person {id: $id})-[:KNOWS]-(f:Person) WITH a, collect(f) AS fs RETURN size([x IN fs WHERE (x)-[:KNOWS]-()-[:KNOWS]-(a)]) AS n",
            "MATCH (a:Person {id: $id})-[:KNOWS]-(f:Person) WITH a, collect(CASE WHEN EXISTS { (f)-[:KNOWS]-()-[:KNOWS]-(a) } THEN 1 END) AS xs RETURN size(xs) AS n",
        ),
    ];
    for (lookup, plain) in cases {
        let text = g.explain(lookup, &by_id(1)).await.unwrap();
        assert!(
            text.contains("looked up by a bound value's key"),
            "{lookup}\n{text}"
        );
        // No node table read whole (in memory or on Lance) to be joined on identity.
        let physical = after_physical_plan(&text);
        assert!(
            !physical.contains("DataSourceExec") && !physical.contains("FilteredReadExec"),
            "{lookup}\n{physical}"
        );
        same_rows_for_every_id(&g, lookup, plain).await;
    }
}

/// `n IN [a, b]` over node variables compares identities (keys), as `n = a` does: no node
/// record built per row; three-valued as the OR of the equalities (a null node from an
/// OPTIONAL MATCH), and with nodes of other labels.
#[tokio::test]
async fn membership_in_a_list_of_nodes_compares_identities() {
    let g = common::sample().await;
    let cases = [
        (
            "MATCH (a:Person {id: $id})-[:KNOWS]-(b:Person), (x:Person) WHERE x IN [a, b] RETURN x.id AS x, count(*) AS n",
            "MATCH (a:Person {id: $id})-[:KNOWS]-(b:Person), (x:Person) WHERE x = a OR x = b RETURN x.id AS x, count(*) AS n",
        ),
        (
            "MATCH (a:Person {id: $id}) OPTIONAL MATCH (a)-[:KNOWS]->(b:Person) WHERE b.age > 40 MATCH (x:Person) RETURN x.id AS x, x IN [b] AS i, NOT x IN [a, b] AS o",
            "MATCH (a:Person {id: $id}) OPTIONAL MATCH (a)-[:KNOWS]->(b:Person) WHERE b.age > 40 MATCH (x:Person) RETURN x.id AS x, x = b AS i, NOT (x = a OR x = b) AS o",
        ),
        (
            "MATCH (a:Person {id: $id})-[:LIKES]->(m:Message), (f:Forum) RETURN m.id AS m, f.id AS f, f IN [a, m] AS i",
            "MATCH (a:Person {id: $id})-[:LIKES]->(m:Message), (f:Forum) RETURN m.id AS m, f.id AS f, f = a OR f = m AS i",
        ),
    ];
    for (member, plain) in cases {
        let physical = &physical_plan(&g, member).await;
        assert!(
            !physical.contains("named_struct") && !physical.contains("cypher_in"),
            "{member}\n{physical}"
        );
        same_rows_for_every_id(&g, member, plain).await;
    }
}

/// `x IN list` over a node or relationship variable and a list of entity values compares
/// identities: `x` is passed as its label and identity only, no record of its properties per
/// row. Null entities (an OPTIONAL MATCH miss), null elements and relationships agree with
/// the same question asked of ids.
#[tokio::test]
async fn membership_in_a_collected_list_reads_only_identities() {
    let g = common::sample().await;
    let cases = [
        (
            "MATCH (a:Person {id: $id})-[:KNOWS]-(f:Person) WITH collect(f) AS fs MATCH (x:Person) RETURN x.id AS x, x IN fs AS member",
            "MATCH (a:Person {id: $id})-[:KNOWS]-(f:Person) WITH collect(f.id) AS fs MATCH (x:Person) RETURN x.id AS x, x.id IN fs AS member",
        ),
        (
            "MATCH (a:Person {id: $id}) OPTIONAL MATCH (a)-[:KNOWS]->(f:Person) WITH a, collect(f) + [null] AS fs OPTIONAL MATCH (a)-[:KNOWS]-(y:Person) WHERE y.id > 2 RETURN y.id AS y, y IN fs AS member",
            "MATCH (a:Person {id: $id}) OPTIONAL MATCH (a)-[:KNOWS]->(f:Person) WITH a, collect(f.id) + [null] AS fs OPTIONAL MATCH (a)-[:KNOWS]-(y:Person) WHERE y.id > 2 RETURN y.id AS y, y.id IN fs AS member",
        ),
        (
            "MATCH (a:Person {id: $id})-[k:KNOWS]->() WITH collect(k) AS ks MATCH (:Person)-[r:KNOWS]->(:Person) RETURN id(r) AS r, r IN ks AS member",
            "MATCH (a:Person {id: $id})-[k:KNOWS]->() WITH collect(id(k)) AS ks MATCH (:Person)-[r:KNOWS]->(:Person) RETURN id(r) AS r, id(r) IN ks AS member",
        ),
    ];
    for (member, plain) in cases {
        let physical = &physical_plan(&g, member).await;
        let membership = physical
            .lines()
            .find(|l| l.contains("cypher_in("))
            .unwrap_or_else(|| panic!("{member}\n{physical}"));
        let arg = &membership[membership.find("cypher_in(").unwrap()..];
        assert!(
            !arg.contains("firstName") && !arg.contains("creationDate"),
            "{member}\n{membership}"
        );
        same_rows_for_every_id(&g, member, plain).await;
    }
}

/// A list collected from a node or relationship variable and read later only by its size,
/// by membership or as pattern nodes collects identities only (no property in the
/// aggregate); read for a property, it collects whole records. Both agree with the same
/// questions asked of ids.
#[tokio::test]
async fn lists_read_only_by_identity_collect_only_identities() {
    let g = common::sample().await;
    let cases = [
        (
            "MATCH (a:Person {id: $id})-[:KNOWS]-(f:Person) WITH a, collect(f) AS fs OPTIONAL MATCH (a)-[:KNOWS]-()-[:KNOWS]-(x:Person) WHERE x IN fs RETURN size(fs) AS s, count(x) AS n",
            "MATCH (a:Person {id: $id})-[:KNOWS]-(f:Person) WITH a, collect(f.id) AS fs OPTIONAL MATCH (a)-[:KNOWS]-()-[:KNOWS]-(x:Person) WHERE x.id IN fs RETURN size(fs) AS s, count(x) AS n",
            true,
        ),
        (
            "MATCH (a:Person {id: $id})-[:KNOWS]-(f:Person) WITH a, collect(DISTINCT f) AS fs RETURN size([p IN fs WHERE (p)-[:KNOWS]->(a)]) AS k, any(p IN fs WHERE p IN [a]) AS self",
            "MATCH (a:Person {id: $id})-[:KNOWS]-(f:Person) WITH a, collect(DISTINCT f.id) AS fs RETURN size([i IN fs WHERE EXISTS { MATCH (p:Person {id: i})-[:KNOWS]->(a) }]) AS k, any(i IN fs WHERE i = a.id) AS self",
            true,
        ),
        (
            "MATCH (a:Person {id: $id})-[k:KNOWS]-() WITH collect(k) AS ks MATCH ()-[r:KNOWS]->() WHERE r IN ks RETURN id(r) AS r",
            "MATCH (a:Person {id: $id})-[k:KNOWS]-() WITH collect(id(k)) AS ks MATCH ()-[r:KNOWS]->() WHERE id(r) IN ks RETURN id(r) AS r",
            true,
        ),
        (
            "MATCH (a:Person {id: $id})-[:KNOWS]-(f:Person) WITH a, collect(f) AS fs RETURN size([p IN fs WHERE p.firstName IS NOT NULL]) AS k",
            "MATCH (a:Person {id: $id})-[:KNOWS]-(f:Person) WITH a, collect(f.firstName) AS fs RETURN size([n IN fs WHERE n IS NOT NULL]) AS k",
            false,
        ),
    ];
    for (q, plain, identities) in cases {
        let physical = &physical_plan(&g, q).await;
        let agg = physical
            .lines()
            .find(|l| l.contains("array_agg("))
            .unwrap_or_else(|| panic!("{q}\n{physical}"));
        assert_eq!(!agg.contains("firstName"), identities, "{q}\n{agg}");
        same_rows_for_every_id(&g, q, plain).await;
    }
}

/// The physical part of EXPLAIN `q` (with `$id` 1).
async fn physical_plan(g: &Graph, q: &str) -> String {
    after_physical_plan(&g.explain(q, &by_id(1)).await.unwrap()).to_string()
}

fn after_physical_plan(explain: &str) -> &str {
    &explain[explain.find("physical plan").expect("a physical plan")..]
}

/// `q` and `plain` give the same rows (in any order) for `$id` of each sample person.
async fn same_rows_for_every_id(g: &Graph, q: &str, plain: &str) {
    for id in 1..=6 {
        let mut got = common::rows(&g.query(q, &by_id(id)).await.unwrap());
        let mut want = common::rows(&g.query(plain, &by_id(id)).await.unwrap());
        got.sort();
        want.sort();
        assert_eq!(got, want, "{q} with id {id}");
    }
}

fn by_id(id: i64) -> Params {
    Params::from([("id".to_string(), lance_csr::param(id))])
}

/// End nodes of relationship values taken from a list, planned as for a cluster (no shared
/// subplans, no lookups by key): each is one join onto the union of the node tables, so
/// clauses that take them one after another do not multiply the plan (matching the
/// relationship again put one copy of the input in it per relationship table, per call).
#[tokio::test]
async fn end_nodes_of_relationship_values_join_the_node_tables_once() {
    let g = common::sample().await;
    let mut options = g.options().clone();
    options.planner.one_process = false;
    options.rules.share_subplans = false;
    let cluster_like = g.with_options(options).await.unwrap();
    let q = "MATCH (m:Message)-[c:HAS_CREATOR]->(p:Person) WITH collect(c) AS cs UNWIND cs AS c WITH c, startNode(c) AS m RETURN labels(m) AS l, m.id = startNode(c).id AS same, endNode(c).firstName AS e, endNode(c) = startNode(c) AS loop ORDER BY m.id";
    let text = cluster_like.explain(q, &Params::new()).await.unwrap();
    let logical = text
        .split("== logical plan ==")
        .nth(1)
        .and_then(|t| t.split("\n==").next())
        .expect("a logical plan");
    let joins = logical.matches("Left Join").count();
    assert_eq!(joins, 5, "one join per end node taken\n{logical}");
    // Each node table read once per end node, plus the first MATCH's reads.
    let scans: Vec<&str> = logical
        .lines()
        .filter_map(|l| l.trim().strip_prefix("TableScan: "))
        .map(|l| l.split_whitespace().next().unwrap_or_default())
        .collect();
    let tables: std::collections::BTreeSet<&&str> = scans.iter().collect();
    assert!(
        scans.len() <= 5 * tables.len() + 4,
        "{} scans of {} tables\n{logical}",
        scans.len(),
        tables.len()
    );
    let want = common::rows(&g.query(q, &Params::new()).await.unwrap());
    assert_eq!(
        common::rows(&cluster_like.query(q, &Params::new()).await.unwrap()),
        want
    );
    assert!(want.len() >= 3, "{want:?}");
}
