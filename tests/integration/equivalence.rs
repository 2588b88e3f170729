//! The equivalence suite: every query runs with CSR + all our rules on and with them all off
//! (the relational join path); results must be identical (in order where the query fixes it,
//! as a multiset otherwise). Queries: every `tests/cases` case, a set of hop-heavy queries on a
//! generated graph, and every TCK scenario that has a graph.

use crate::common;
use crate::verify::cli_verify;

use common::cases::{all_cases, Expect};
use lance_csr::render_cell;
use lance_csr::{Graph, Mode};
use lance_csr::{Params, QueryResult};

/// A cell rendered exactly (strings quoted, floats as Cypher prints them); with
/// `unordered_lists`, list items are sorted (`collect` gives no order).
fn cell(a: &dyn arrow::array::Array, i: usize, unordered_lists: bool) -> String {
    use arrow::array::AsArray;
    if unordered_lists && !a.is_null(i) {
        if let arrow::datatypes::DataType::List(_) = a.data_type() {
            let v = a.as_list::<i32>().value(i);
            let mut items: Vec<String> = (0..v.len()).map(|j| cell(v.as_ref(), j, true)).collect();
            items.sort();
            return format!("[{}]", items.join(", "));
        }
    }
    render_cell(a, i, true)
}

fn rendered(r: &QueryResult, unordered_lists: bool) -> Vec<Vec<String>> {
    let mut out = Vec::new();
    for b in &r.batches {
        for i in 0..b.num_rows() {
            out.push(
                (0..b.num_columns())
                    .map(|c| cell(b.column(c).as_ref(), i, unordered_lists))
                    .collect(),
            );
        }
    }
    out
}

/// How the query's last clause orders rows: `None` when it does not; else the result columns
/// that hold its ORDER BY keys, when every key is one (rows with equal keys may come in any
/// order), or `Some(None)` when some key is not returned (compare the order exactly).
fn ordering(q: &str) -> Option<Option<Vec<usize>>> {
    let ast = cypher::parse_query(q).ok()?;
    if !ast.unions.is_empty() {
        return None;
    }
    let Some(cypher::Clause::Return(r)) = ast.first.clauses.last() else {
        return None;
    };
    if r.order_by.is_empty() {
        return None;
    }
    let keys = r
        .order_by
        .iter()
        .map(|o| {
            let text = o.expr.to_string();
            r.items.iter().position(|it| {
                it.expr.to_string() == text || it.alias.as_ref().is_some_and(|a| a.name == text)
            })
        })
        .collect::<Option<Vec<usize>>>();
    Some(keys.filter(|_| !r.star))
}

/// Whether two results of `q` differ: in order where `q` fixes it, as multisets otherwise.
fn rows_differ(q: &str, x: &[Vec<String>], y: &[Vec<String>]) -> bool {
    let sorted = |rows: &[Vec<String>]| {
        let mut r = rows.to_vec();
        r.sort();
        r
    };
    match ordering(q) {
        None => sorted(x) != sorted(y),
        Some(None) => x != y,
        // Same rows, and the same sequence of sort keys: ties may come in any order.
        Some(Some(keys)) => {
            let key_seq = |rows: &[Vec<String>]| -> Vec<Vec<String>> {
                rows.iter()
                    .map(|r| keys.iter().map(|&k| r[k].clone()).collect())
                    .collect()
            };
            key_seq(x) != key_seq(y) || sorted(x) != sorted(y)
        }
    }
}

fn show(rows: &[Vec<String>]) -> Vec<String> {
    rows.iter().map(|r| r.join(" | ")).collect()
}

/// Runs `q` in both modes (the join mode without a plan cache), then in CSR mode again with
/// its literals as parameters through a plan cached for other values; `None` when all agree.
async fn compare(csr: &Graph, join: &Graph, q: &str, params: &Params) -> Option<String> {
    let (a, b) = (csr.query(q, params).await, join.query(q, params).await);
    match (a, b) {
        (Err(_), Err(_)) => None,
        (Ok(a), Ok(b)) => {
            let collects = q.to_lowercase().contains("collect(");
            let (x, y) = (rendered(&a, collects), rendered(&b, collects));
            if a.columns != b.columns {
                return Some(format!("{q}\n  columns {:?} vs {:?}", a.columns, b.columns));
            }
            if rows_differ(q, &x, &y) {
                return Some(format!(
                    "{q}\n  csr:  {:?}\n  join: {:?}",
                    show(&x),
                    show(&y)
                ));
            }
            let (pq, c) = cli_verify::run_parameterized(csr, q, params).await?;
            match c {
                Ok(c) => {
                    let z = rendered(&c, collects);
                    rows_differ(q, &z, &y).then(|| {
                        format!("{pq}\n  cached: {:?}\n  join:   {:?}", show(&z), show(&y))
                    })
                }
                Err(e) => Some(format!(
                    "{pq}\n  cached plan failed: {e}; join gave {} rows",
                    b.num_rows()
                )),
            }
        }
        (Ok(a), Err(e)) => Some(format!(
            "{q}\n  csr gave {} rows, join failed: {e}",
            a.num_rows()
        )),
        (Err(e), Ok(b)) => Some(format!(
            "{q}\n  csr failed: {e}; join gave {} rows",
            b.num_rows()
        )),
    }
}

/// The join path with no plan cache: the other side of every comparison.
async fn join_of(csr: &Graph) -> Graph {
    csr.with_options(
        csr.options()
            .clone()
            .with_mode(Mode::Join)
            .with_plan_cache(false),
    )
    .await
    .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn case_queries_agree_in_both_modes() {
    let csr = common::sample().await;
    assert_eq!(csr.options().mode, Mode::Csr);
    assert!(csr.has_all_indexes());
    let join = join_of(&csr).await;
    let mut mismatches = Vec::new();
    let mut n = 0;
    for c in all_cases() {
        if matches!(c.expect, Expect::Error(_)) {
            continue;
        }
        if let Expect::RuntimeError(kind) = &c.expect {
            // Both modes fail, with the same error.
            let params = common::params(&c.params).unwrap();
            for g in [&csr, &join] {
                match g.query(&c.query, &params).await {
                    Err(e) if &e.kind_name() == kind => {}
                    other => mismatches.push(format!(
                        "{}:{}: expected {kind} in {:?} mode, got {:?}",
                        c.file,
                        c.line,
                        g.options().mode,
                        other.map(|r| r.num_rows())
                    )),
                }
            }
            continue;
        }
        let params = common::params(&c.params).unwrap();
        n += 1;
        if let Some(m) = compare(&csr, &join, &c.query, &params).await {
            mismatches.push(m);
        }
    }
    println!("{n} case queries compared");
    assert!(n >= 55);
    assert!(mismatches.is_empty(), "{}", mismatches.join("\n"));
}

/// Hop-heavy queries with target and relationship filters, closing hops, both directions,
/// optional matches and aggregates, on a generated graph.
const GENERATED_QUERIES: &[&str] = &[
    "MATCH (a:Person)-[k:KNOWS]->(b:Person) WHERE a.id < 1100 AND k.creationDate > 1500000000000 AND b.age > 35 RETURN a.id, b.id, b.firstName",
    "MATCH (a:Person {id: 1007})-[:KNOWS]->(b:Person)-[:KNOWS]->(c:Person) RETURN count(*), count(DISTINCT c)",
    "MATCH (a:Person {id: 1014})-[:KNOWS]-(b:Person) RETURN b.id ORDER BY b.id",
    "MATCH (a:Person)-[:KNOWS]->(b:Person)-[:KNOWS]->(a) WHERE a.id < b.id RETURN a.id, b.id ORDER BY a.id, b.id LIMIT 20",
    "MATCH (a:Person)-[:KNOWS]->(b:Person) WHERE a.age > b.age AND b.gender = 'female' RETURN count(*)",
    "MATCH (f:Forum)-[m:HAS_MEMBER]->(p:Person)-[:IS_LOCATED_IN]->(c:City) WHERE m.joinDate > 1400000000000 RETURN c.name, count(*) AS n ORDER BY n DESC, c.name LIMIT 5",
    "MATCH (p:Person)<-[:HAS_CREATOR]-(post:Post)-[:HAS_TAG]->(t:Tag) WHERE p.id = 1021 RETURN t.name, count(*) ORDER BY t.name",
    "MATCH (c:Comment)-[:REPLY_OF]->(x:Comment)-[:REPLY_OF]->(p:Post) RETURN count(*)",
    "MATCH (p:Person) WHERE p.id < 1050 OPTIONAL MATCH (p)-[:KNOWS]->(f:Person) WHERE f.age > 70 RETURN p.id, count(f) ORDER BY p.id",
    "MATCH (a:Person)-[:KNOWS]->(b:Person) WITH a, count(b) AS deg ORDER BY deg DESC, a.id LIMIT 3 MATCH (a)-[:IS_LOCATED_IN]->(c:City) RETURN a.id, deg, c.name",
    "MATCH (t:Tag)<-[:HAS_INTEREST]-(p:Person)-[:KNOWS]->(q:Person)-[:HAS_INTEREST]->(t) RETURN count(*)",
    "MATCH (a:Person {id: 1000})-[r1:KNOWS]-(b)-[r2:KNOWS]-(c) RETURN count(*)",
    "MATCH (p:Person)-[l:LIKES]->(post:Post)<-[:CONTAINER_OF]-(f:Forum) WHERE l.creationDate < 1300000000000 RETURN f.id, count(*) ORDER BY f.id",
    "MATCH (a:Person)-[:KNOWS]->(b:Person) WHERE a.id = 1035 RETURN b",
    "MATCH (a:Person)-[k:KNOWS]->(b:Person) WHERE a.id = 1035 RETURN k, b.id ORDER BY b.id",
    "MATCH (a:Person {id: 999999})-[:KNOWS]->(b) RETURN count(*)",
    "MATCH (a:Person {id: 1007})-[:KNOWS*1..3]->(b:Person) RETURN count(DISTINCT b)",
    "MATCH (a:Person {id: 1007})-[:KNOWS*1..2]->(b:Person) RETURN count(*)",
    "MATCH (a:Person {id: 1007})-[r:KNOWS*2]->(b:Person) WHERE b.age > 40 RETURN b.id, size(r) ORDER BY b.id",
    "MATCH (a:Person)-[:KNOWS]->(b:Person)-[:KNOWS]->(c:Person) WHERE a.id < 1030 RETURN count(*)",
    // Factorized counts: from every person (counted backwards per node) and from a few
    // (walked forward), chains and stars.
    "MATCH (a:Person)-[:KNOWS]->(b:Person)-[:KNOWS]->(c:Person) RETURN count(*)",
    "MATCH (a:Person)-[:KNOWS]->(b:Person)-[:KNOWS]->(c:Person) WHERE b.age > 50 RETURN count(*)",
    "MATCH (a:Person)-[:KNOWS]->(b:Person)-[:KNOWS]->(c:Person) WHERE a.id < 1100 AND c.age < 40 RETURN count(*)",
    "MATCH (p:Person)-[:IS_LOCATED_IN]->(c:City), (p)<-[:HAS_MEMBER]-(f:Forum) RETURN count(*)",
    "MATCH (a:Person)-[:KNOWS]->(b:Person)-[k:KNOWS]->(c:Person) WHERE b.age > 40 AND k.creationDate > 1400000000000 RETURN count(*)",
    "MATCH (f:Forum)-[:HAS_MEMBER]->(p:Person)-[:KNOWS]->(q:Person)-[:IS_LOCATED_IN]->(c:City) RETURN count(*)",
    "MATCH (a:Person)-[:KNOWS]-(b:Person)-[:KNOWS]-(c:Person) WHERE a.id < 1100 RETURN count(*)",
    "MATCH (c:Comment {id: 6000000700})-[:REPLY_OF*0..5]->(x:Comment) RETURN count(*)",
    // Branching: several labels, alternation, unlabeled ends, several tables of one type.
    "MATCH (p:Person {id: 1007})-[:LIKES]->(m:Post|Comment) RETURN labels(m), m.id ORDER BY m.id",
    "MATCH (p:Person {id: 1007})-[r]->(x) RETURN type(r), labels(x), count(*)",
    "MATCH (x)-[:HAS_TAG]->(t:Tag) WHERE t.id < 8000000030 RETURN labels(x), t.id, count(*)",
    "MATCH (m)-[:HAS_CREATOR|REPLY_OF]->(y) WHERE m.length > 50 RETURN labels(m), labels(y), count(*)",
    "MATCH (p:Person)-[l:LIKES]->(m) WHERE l.creationDate > 1400000000000 RETURN count(DISTINCT m), count(DISTINCT l), count(*)",
    "MATCH (t:Tag {id: 8000000014})<-[:HAS_TAG]-(x) MATCH (x)-[:HAS_CREATOR]->(p:Person) RETURN labels(x), p.id, count(*)",
    "MATCH (f:Forum)-[r]-(x) WHERE f.id < 2000000020 RETURN type(r), labels(x), count(*)",
    // Variable length over several tables / types.
    "MATCH (c:Comment)-[r:REPLY_OF*1..4]->(x) WHERE c.id < 6000000200 RETURN labels(x), size(r), count(*)",
    "MATCH (p:Person {id: 1007})-[:KNOWS|LIKES*1..2]->(x) RETURN labels(x), count(*)",
    "MATCH (p:Person {id: 1007})-[:KNOWS|LIKES*1..2]->(x) RETURN labels(x), count(DISTINCT x)",
];

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn generated_graph_queries_agree_in_both_modes() {
    let tables = lance_csr_datasets::social::generate(0.5, 11, &mut |_| {});
    let csr = Graph::from_tables(tables, Default::default())
        .await
        .unwrap();
    let join = join_of(&csr).await;
    // The two modes really take different paths.
    let q0 = GENERATED_QUERIES[0];
    let (pc, pj) = (
        csr.explain(q0, &Params::new()).await.unwrap(),
        join.explain(q0, &Params::new()).await.unwrap(),
    );
    assert!(
        pc.contains("CsrExpandExec") && !pc.contains("HashJoinExec"),
        "{pc}"
    );
    assert!(
        pj.contains("HashJoinExec") && !pj.contains("CsrExpand"),
        "{pj}"
    );
    let mut mismatches = Vec::new();
    for q in GENERATED_QUERIES {
        // Each query must run (an error in both modes would hide a broken query).
        if let Err(e) = csr.query(q, &Params::new()).await {
            panic!("{}", e.render(q));
        }
        if let Some(m) = compare(&csr, &join, q, &Params::new()).await {
            mismatches.push(m);
        }
    }
    // The same graph as Lance datasets with persisted indexes: the CSR operators then read
    // through Lance scans (which, unlike in-memory tables, return projections in table order).
    let dir = tempfile::tempdir().unwrap();
    let tables = lance_csr_datasets::social::generate(0.5, 11, &mut |_| {});
    let path = lance_csr::write_graph(dir.path(), tables, &mut |_| {})
        .await
        .unwrap();
    Graph::build_indexes(&path, &mut |_| {}).await.unwrap();
    let lance = Graph::open(&path).await.unwrap();
    for q in GENERATED_QUERIES {
        if let Some(m) = compare(&lance, &join, q, &Params::new()).await {
            mismatches.push(format!("(Lance) {m}"));
        }
    }
    assert!(mismatches.is_empty(), "{}", mismatches.join("\n"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tck_scenarios_with_a_graph_agree_in_both_modes() {
    let Some((path, _)) = common::tck::tck_path() else {
        common::tck::missing("the TCK (../shared/tck/tck.jsonl, or LANCE_CSR_TCK)");
        return;
    };
    let mut compared = 0;
    let mut mismatches = Vec::new();
    for s in common::tck::load(&path) {
        let has_graph = s.setup_graph["nodes"]
            .as_array()
            .is_some_and(|n| !n.is_empty());
        if !has_graph {
            continue;
        }
        let Ok(csr) = common::tck::build_graph(&s.setup_graph).await else {
            continue;
        };
        let Ok(params) = common::tck::params(&s) else {
            continue;
        };
        let join = join_of(&csr).await;
        compared += 1;
        if let Some(m) = compare(&csr, &join, &s.query, &params).await {
            mismatches.push(format!("{}: {m}", s.id));
        }
    }
    println!("{compared} TCK scenarios compared");
    assert!(compared > 300);
    assert!(
        mismatches.is_empty(),
        "{} mismatches:\n{}",
        mismatches.len(),
        mismatches.join("\n")
    );
}

/// One graph shared by concurrent callers, each running kept plans with values of its own:
/// every answer is the one planned afresh for that value.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_callers_of_kept_plans_get_their_own_answers() {
    let tables = lance_csr_datasets::social::generate(0.2, 5, &mut |_| {});
    let graph = std::sync::Arc::new(
        Graph::from_tables(tables, Default::default())
            .await
            .unwrap(),
    );
    let fresh = graph
        .with_options(graph.options().clone().with_plan_cache(false))
        .await
        .unwrap();
    let queries = [
        "MATCH (p:Person {id: $id}) RETURN p.firstName, p.age",
        "MATCH (p:Person {id: $id})-[k:KNOWS]->(f:Person) WHERE f.age > $age RETURN f.id ORDER BY f.id",
        "MATCH (p:Person {id: $id})-[:KNOWS]->()-[:KNOWS]->(c:Person) RETURN count(DISTINCT c)",
        "MATCH (f:Forum)-[:HAS_MEMBER]->(p:Person) WHERE p.id = $id RETURN count(f)",
        // Kept physically with operators that hold one execution's state (checked below): a
        // top-k's heap, a shared subplan's rows, a join's build side, a window's row numbers.
        "MATCH (p:Person {id: $id})-[:KNOWS]-(f:Person) OPTIONAL MATCH (f)-[:KNOWS]->(g:Person) WHERE g.age > $age RETURN f.id, count(g) AS n ORDER BY n DESC, f.id LIMIT 3",
        "MATCH (p:Person {id: $id})-[:KNOWS*1..2]-(f:Person) WITH DISTINCT f WITH collect(f.id) AS ids OPTIONAL MATCH (x:Person) WHERE x.id IN ids RETURN count(x)",
        "MATCH (p:Person {id: $id})-[:KNOWS]-(f:Person), (g:Person) WHERE g.age = f.age AND g <> f RETURN f.id, g.id ORDER BY f.id, g.id",
        // Parameters in DataFusion's projections and filters, read as the kept plan starts.
        "MATCH (p:Person {id: $id})-[:KNOWS]-(f:Person) WITH f, CASE WHEN f.age < $age THEN 1 ELSE 0 END AS young WITH sum(young) AS y, count(*) AS n WHERE n > $age % 4 RETURN y, n",
    ];
    let ids = fresh
        .query(
            "MATCH (p:Person) RETURN p.id ORDER BY p.id LIMIT 40",
            &Params::new(),
        )
        .await
        .unwrap();
    let bindings: Vec<Params> = lance_csr::rows(&ids)
        .into_iter()
        .enumerate()
        .map(|(i, r)| {
            Params::from([
                (
                    "id".to_string(),
                    lance_csr::param(r[0].parse::<i64>().unwrap()),
                ),
                ("age".to_string(), lance_csr::param(20 + i as i64 % 30)),
            ])
        })
        .collect();
    assert_eq!(bindings.len(), 40);
    let mut kept = String::new();
    for q in &queries[4..] {
        let text = graph.explain(q, &bindings[0]).await.unwrap();
        let at = text.find("== cached physical plan ==");
        kept += &text[at.unwrap_or_else(|| panic!("{q}: not kept physically\n{text}"))..];
    }
    for operator in [
        "SortExec: TopK",
        "SharedSubplanExec",
        "HashJoinExec",
        "WindowAggExec",
        "< $age THEN",
        "> $age % 4",
    ] {
        assert!(kept.contains(operator), "{operator}\n{kept}");
    }
    let mut expected = Vec::new();
    for q in queries {
        for b in &bindings {
            let r = fresh.query(q, b).await.unwrap();
            expected.push(lance_csr::rows(&r));
        }
    }
    let expected = std::sync::Arc::new(expected);
    let nonempty = expected
        .iter()
        .filter(|r| !r.is_empty() && r[0][0] != "0")
        .count();
    assert!(nonempty > expected.len() / 2, "the bindings find rows");
    let bindings = std::sync::Arc::new(bindings);
    let tasks: Vec<_> = (0..6)
        .map(|w| {
            let (graph, bindings, expected) = (graph.clone(), bindings.clone(), expected.clone());
            tokio::spawn(async move {
                for step in 0..120 {
                    let i = (w * 37 + step * 11) % (queries.len() * bindings.len());
                    let (q, b) = (queries[i / bindings.len()], &bindings[i % bindings.len()]);
                    let got = lance_csr::rows(&graph.query(q, b).await.unwrap());
                    assert_eq!(got, expected[i], "{q} with {b:?}");
                }
            })
        })
        .collect();
    for t in tasks {
        t.await.unwrap();
    }
}

/// Queries whose plans read a part twice (an OPTIONAL MATCH's input, the input of a branched
/// MATCH) where that part's rows or values come out differently each time it runs (a
/// collected list's order, the rows a LIMIT keeps): one answer, run after run, in both modes,
/// the one a plan reading the part once gives.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn parts_read_twice_give_one_answer_run_after_run() {
    let tables = lance_csr_datasets::social::generate(0.5, 11, &mut |_| {});
    let csr = Graph::from_tables(tables, Default::default())
        .await
        .unwrap();
    let join = join_of(&csr).await;
    let cases = [
        (
            "MATCH (p:Person {id: 1007})-[:KNOWS*1..2]-(f:Person) WITH DISTINCT f WITH collect(f.id) AS ids OPTIONAL MATCH (x:Person) WHERE x.id IN ids RETURN count(x) AS n",
            "MATCH (p:Person {id: 1007})-[:KNOWS*1..2]-(f:Person) RETURN count(DISTINCT f) AS n",
        ),
        (
            "MATCH (p:Person)-[:KNOWS]->(f:Person) WHERE p.id % 8 = 0 WITH p, collect(f) AS fs OPTIONAL MATCH (p)-[:KNOWS]->(g:Person) WHERE g IN fs RETURN count(g) AS n",
            "MATCH (p:Person)-[:KNOWS]->(f:Person) WHERE p.id % 8 = 0 RETURN count(f) AS n",
        ),
        // Each row's optional count agrees with the count a plain MATCH gives that row.
        (
            "MATCH (p:Person) WITH p LIMIT 5 OPTIONAL MATCH (p)-[:KNOWS]->(f:Person) WITH p, count(f) AS n MATCH (p)-[:KNOWS]->(g:Person) WITH p, n, count(g) AS m RETURN count(*) = sum(CASE WHEN n = m THEN 1 ELSE 0 END) AS ok",
            "RETURN true AS ok",
        ),
        (
            "MATCH (p:Person)-[:KNOWS]->(:Person) WITH collect(DISTINCT p.id)[0..40] AS ids UNWIND ids AS id MATCH (q:Person {id: id}) OPTIONAL MATCH (q)-[:KNOWS]->(f:Person) WHERE size(ids) = 40 WITH q, count(f) AS n MATCH (q)-[:KNOWS]->(g:Person) WITH q, n, count(g) AS m RETURN count(*) AS c, sum(CASE WHEN n = m THEN 1 ELSE 0 END) AS agree",
            "RETURN 40 AS c, 40 AS agree",
        ),
    ];
    let p = Params::new();
    for (q, same_as) in cases {
        let want = common::lines(&csr.query(same_as, &p).await.unwrap());
        for g in [&csr, &join] {
            for run in 0..5 {
                let got = g.query(q, &p).await.map(|r| common::lines(&r));
                assert_eq!(
                    got.as_ref().ok(),
                    Some(&want),
                    "run {run} ({:?}) of {q}: {got:?}",
                    g.options().mode
                );
            }
        }
    }
}
