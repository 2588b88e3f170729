//! Shortest paths against an independent reference: the join path's unrolled chains (every
//! path of each length, enumerated by joins, sharing no code with the CSR search), on a
//! generated graph, for pairs of persons in both directions, bounded and unbounded, one, all
//! and k shortest, to one target and to every target.

use crate::common;
use lance_csr::{Graph, Mode, Params, QueryResult, Value};
use std::collections::BTreeMap;

async fn graphs() -> (Graph, Graph) {
    let tables = lance_csr_datasets::social::generate(0.15, 5, &mut |_| {});
    let csr = Graph::from_tables(tables, Default::default())
        .await
        .unwrap();
    let tables = lance_csr_datasets::social::generate(0.15, 5, &mut |_| {});
    let join = Graph::from_tables(
        tables,
        lance_csr::GraphOptions::default().with_mode(Mode::Join),
    )
    .await
    .unwrap();
    (csr, join)
}

async fn q(g: &Graph, text: &str, a: i64, b: i64) -> QueryResult {
    let mut p = Params::new();
    p.insert("a".into(), Value::Int(a));
    p.insert("b".into(), Value::Int(b));
    g.query(text, &p)
        .await
        .unwrap_or_else(|e| panic!("{}", e.render(text)))
}

/// Rows as sorted text lines.
fn lines(r: &QueryResult) -> Vec<String> {
    common::sorted_lines(r)
}

/// Pairs of persons: a spread of ids, each with a few others.
async fn pairs(g: &Graph) -> Vec<(i64, i64)> {
    let r = common::run(g, "MATCH (p:Person) RETURN p.id ORDER BY p.id").await;
    let ids: Vec<i64> = common::rows(&r)
        .into_iter()
        .map(|row| row[0].parse().unwrap())
        .collect();
    let mut out = Vec::new();
    for i in (0..ids.len()).step_by(ids.len() / 6) {
        for j in [1, 7, 31, 77] {
            out.push((ids[i], ids[(i + j) % ids.len()]));
        }
    }
    out
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn shortest_paths_agree_with_the_join_reference() {
    let (csr, join) = graphs().await;
    let mut checked = BTreeMap::new();
    for dir in ["-", "->"] {
        for (a, b) in pairs(&csr).await {
            // Every path of the shortest length, by joins (none longer than 5 here).
            let mut reference = None;
            for len in 1..=5 {
                let text = format!(
                    "MATCH p = (a:Person {{id: $a}})-[:KNOWS*{len}..{len}]{dir}(b:Person {{id: $b}}) RETURN [n IN nodes(p) | n.id] AS ids"
                );
                let r = q(&join, &text, a, b).await;
                if r.num_rows() > 0 {
                    reference = Some((len, lines(&r)));
                    break;
                }
            }
            let all = format!(
                "MATCH (a:Person {{id: $a}}), (b:Person {{id: $b}}) MATCH p = allShortestPaths((a)-[:KNOWS*]{dir}(b)) RETURN [n IN nodes(p) | n.id] AS ids"
            );
            let one = format!(
                "MATCH (a:Person {{id: $a}}), (b:Person {{id: $b}}) MATCH p = shortestPath((a)-[:KNOWS*]{dir}(b)) RETURN length(p), [n IN nodes(p) | n.id] AS ids"
            );
            let got_all = lines(&q(&csr, &all, a, b).await);
            let got_one = common::rows(&q(&csr, &one, a, b).await);
            match &reference {
                Some((len, paths)) => {
                    assert_eq!(&got_all, paths, "allShortestPaths {a} {dir} {b}");
                    assert_eq!(got_one.len(), 1, "shortestPath {a} {dir} {b}");
                    assert_eq!(got_one[0][0], len.to_string());
                    assert!(paths.contains(&got_one[0][1]), "{a} {dir} {b}: {got_one:?}");
                }
                None => assert!(got_all.is_empty(), "{a} {dir} {b}: {got_all:?}"),
            }
            *checked.entry(reference.map(|(l, _)| l)).or_insert(0) += 1;
        }
    }
    // The pairs are at several distances.
    assert!(checked.len() >= 3, "{checked:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn k_shortest_and_every_target_agree_with_the_join_reference() {
    let (csr, join) = graphs().await;
    for (a, b) in pairs(&csr).await.into_iter().take(8) {
        // SHORTEST 5: the five shortest trails, by length; the reference lists every trail of
        // up to four relationships with its length.
        let trails = "MATCH p = (a:Person {id: $a})-[:KNOWS*1..4]-(b:Person {id: $b}) RETURN length(p) AS l, [n IN nodes(p) | n.id] AS ids";
        let mut reference: Vec<(i64, String)> = common::rows(&q(&join, trails, a, b).await)
            .into_iter()
            .map(|r| (r[0].parse().unwrap(), r[1].clone()))
            .collect();
        reference.sort();
        let k = "MATCH (a:Person {id: $a}), (b:Person {id: $b}) MATCH p = SHORTEST 5 (a)-[:KNOWS*..4]-(b) RETURN length(p) AS l, [n IN nodes(p) | n.id] AS ids";
        let got: Vec<(i64, String)> = common::rows(&q(&csr, k, a, b).await)
            .into_iter()
            .map(|r| (r[0].parse().unwrap(), r[1].clone()))
            .collect();
        let want_lengths: Vec<i64> = reference.iter().take(5).map(|(l, _)| *l).collect();
        let mut got_lengths: Vec<i64> = got.iter().map(|(l, _)| *l).collect();
        got_lengths.sort();
        assert_eq!(got_lengths, want_lengths, "SHORTEST 5 {a} {b}");
        for p in &got {
            assert!(reference.contains(p), "{a} {b}: {p:?} is no trail");
        }
    }
    // Every target within three relationships: one shortest path each, of the least length.
    for (a, _) in pairs(&csr).await.into_iter().step_by(4) {
        let reference = "MATCH p = (a:Person {id: $a})-[:KNOWS*1..3]->(b:Person) WHERE b.id <> $a RETURN b.id, min(length(p))";
        let got = "MATCH p = shortestPath((a:Person {id: $a})-[:KNOWS*..3]->(b:Person)) RETURN b.id, length(p)";
        assert_eq!(
            lines(&q(&csr, got, a, 0).await),
            lines(&q(&join, reference, a, 0).await),
            "every target from {a}"
        );
        let count_ref = "MATCH p = (a:Person {id: $a})-[:KNOWS*1..3]->(b:Person) WHERE b.id <> $a WITH b, length(p) AS l ORDER BY l WITH b, collect(l) AS ls WITH b, [x IN ls WHERE x = ls[0]] AS s RETURN b.id, size(s)";
        let count_got = "MATCH p = allShortestPaths((a:Person {id: $a})-[:KNOWS*..3]->(b:Person)) RETURN b.id, count(*)";
        assert_eq!(
            lines(&q(&csr, count_got, a, 0).await),
            lines(&q(&join, count_ref, a, 0).await),
            "all shortest paths to every target from {a}"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn shortest_path_forms_and_errors() {
    let (csr, join) = graphs().await;
    let r = common::run(&csr, "MATCH (p:Person) RETURN p.id ORDER BY p.id LIMIT 2").await;
    let ids: Vec<i64> = common::rows(&r)
        .into_iter()
        .map(|row| row[0].parse().unwrap())
        .collect();
    let (a, b) = (ids[0], ids[1]);
    // Zero length: a node to itself, only with a lower bound of 0.
    let zero =
        "MATCH (a:Person {id: $a}) MATCH p = shortestPath((a)-[:KNOWS*0..]-(a)) RETURN length(p)";
    assert_eq!(lines(&q(&csr, zero, a, b).await), vec!["0"]);
    let none =
        "MATCH (a:Person {id: $a}) MATCH p = shortestPath((a)-[:KNOWS*]-(a)) RETURN length(p)";
    assert!(lines(&q(&csr, none, a, b).await).is_empty());
    // No path: OPTIONAL MATCH gives a null path.
    let opt = "MATCH (a:Person {id: $a}), (b:Person {id: $b}) OPTIONAL MATCH p = shortestPath((a)-[:KNOWS*..0]-(b)) RETURN p, length(p)";
    assert_eq!(lines(&q(&csr, opt, a, b).await), vec!["null|null"]);
    // The path's relationships as values, a post-filter on the path.
    let rels = "MATCH (a:Person {id: $a}), (b:Person {id: $b}) MATCH p = shortestPath((a)-[r:KNOWS*]-(b)) WHERE all(n IN nodes(p) WHERE n.id > 0) RETURN size(r) = length(p), [x IN relationships(p) | type(x)][0]";
    assert_eq!(lines(&q(&csr, rels, a, b).await), vec!["true|KNOWS"]);
    // Errors: the join mode, several relationships, a lower bound above 1.
    for (g, text, kind) in [
        (&join, "MATCH (a:Person {id: $a}), (b:Person {id: $b}) MATCH p = shortestPath((a)-[:KNOWS*]-(b)) RETURN p", "Unsupported"),
        (&csr, "MATCH (a:Person {id: $a}), (b:Person {id: $b}) MATCH p = shortestPath((a)-[:KNOWS]-()-[:KNOWS]-(b)) RETURN p", "Unsupported"),
        (&csr, "MATCH (a:Person {id: $a}), (b:Person {id: $b}) MATCH p = shortestPath((a)-[:KNOWS*2..]-(b)) RETURN p", "InvalidArgumentValue"),
    ] {
        let mut p = Params::new();
        p.insert("a".into(), Value::Int(a));
        p.insert("b".into(), Value::Int(b));
        let e = g.query(text, &p).await.expect_err(text);
        assert!(format!("{e:?}").contains(kind), "{text}: {e:?}");
    }
}

/// Filters on every node / relationship of the path are applied during the search: the
/// shortest path among those that pass, as the join path finds it by filtering every path.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn filtered_shortest_paths_agree_with_the_join_reference() {
    let (csr, join) = graphs().await;
    let filters = [
        "all(n IN nodes(p) WHERE n.age > 30)",
        "all(r IN relationships(p) WHERE r.creationDate > 1300000000000)",
        "all(n IN nodes(p) WHERE n.gender = 'female') AND all(r IN relationships(p) WHERE r.creationDate < 1500000000000)",
    ];
    let mut found = 0;
    for f in filters {
        for (a, b) in pairs(&csr).await.into_iter().take(8) {
            // Every path that passes, of the least length that has one, by joins.
            let reference = format!(
                "MATCH p = (a:Person {{id: $a}})-[:KNOWS*1..3]-(b:Person {{id: $b}}) WHERE {f} WITH length(p) AS l, [n IN nodes(p) | n.id] AS ids ORDER BY l WITH collect([l, ids]) AS ps UNWIND [x IN ps WHERE x[0] = ps[0][0]] AS x RETURN x[1] AS ids"
            );
            let all = format!(
                "MATCH (a:Person {{id: $a}}), (b:Person {{id: $b}}) MATCH p = allShortestPaths((a)-[:KNOWS*..3]-(b)) WHERE {f} RETURN [n IN nodes(p) | n.id] AS ids"
            );
            let one = format!(
                "MATCH (a:Person {{id: $a}}), (b:Person {{id: $b}}) MATCH p = shortestPath((a)-[:KNOWS*..3]-(b)) WHERE {f} RETURN [n IN nodes(p) | n.id] AS ids"
            );
            let want = lines(&q(&join, &reference, a, b).await);
            assert_eq!(lines(&q(&csr, &all, a, b).await), want, "{f}: {a} - {b}");
            let got = lines(&q(&csr, &one, a, b).await);
            assert!(got.len() == want.len().min(1), "{f}: {a} - {b}: {got:?}");
            assert!(
                got.iter().all(|p| want.contains(p)),
                "{f}: {a} - {b}: {got:?}"
            );
            found += want.len();
        }
    }
    assert!(found > 5, "only {found} filtered paths found");
    // The filter is in the search (EXPLAIN), not after it.
    let plan = csr
        .explain(
            "MATCH (a:Person {id: 1}), (b:Person {id: 2}) MATCH p = shortestPath((a)-[:KNOWS*]-(b)) WHERE all(n IN nodes(p) WHERE n.age > 30) RETURN p",
            &Params::new(),
        )
        .await
        .unwrap();
    assert!(plan.contains("shortest=any to b__id, nodes: "), "{plan}");
}

/// A search that would examine more relationships than the limit stops with a clear error
/// (`SHORTEST k` trails without an upper bound explode on a dense graph).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_runaway_search_stops_with_a_limit_error() {
    let tables = lance_csr_datasets::social::generate(0.05, 5, &mut |_| {});
    let mut options = lance_csr::GraphOptions::default();
    options.planner.max_search_edges = 20_000;
    let g = Graph::from_tables(tables, options).await.unwrap();
    let r = common::run(&g, "MATCH (p:Person) RETURN p.id ORDER BY p.id LIMIT 2").await;
    let ids: Vec<i64> = common::rows(&r)
        .into_iter()
        .map(|row| row[0].parse().unwrap())
        .collect();
    let text = "MATCH (a:Person {id: $a}), (b:Person {id: $b}) MATCH p = SHORTEST 1000000 (a)-[:KNOWS*]-(b) RETURN count(*)";
    let mut p = Params::new();
    p.insert("a".into(), Value::Int(ids[0]));
    p.insert("b".into(), Value::Int(ids[1]));
    let e = g.query(text, &p).await.expect_err("runaway");
    assert!(e.to_string().contains("limit exceeded"), "{e}");
    assert!(e.to_string().contains("20000 relationships"), "{e}");
    // Bounded, the same search answers.
    let bounded = text.replace("KNOWS*]", "KNOWS*..2]");
    let r = g.query(&bounded, &p).await.unwrap();
    assert_eq!(r.num_rows(), 1);
}
