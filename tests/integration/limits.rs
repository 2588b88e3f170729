//! Time and memory limits: a query that would run for ages or hold too much ends with an
//! error naming the limit, and a traversal's memory doesn't grow with its number of paths.

use crate::common;

use arrow::array::{ArrayRef, Int64Array, RecordBatch};
use arrow::datatypes::{DataType, Field, Schema};
use lance_csr::{Error, Graph, GraphOptions, LimitKind, Params};
use std::sync::Arc;
use std::time::Duration;

/// A complete directed graph on `n` nodes: `n^k` paths of length k from each node.
async fn complete(n: i64, options: GraphOptions) -> Graph {
    let ids: Vec<i64> = (0..n).collect();
    let nodes = RecordBatch::try_new(
        Arc::new(Schema::new(vec![Field::new("id", DataType::Int64, false)])),
        vec![Arc::new(Int64Array::from(ids)) as ArrayRef],
    )
    .unwrap();
    let (src, dst): (Vec<i64>, Vec<i64>) = (0..n)
        .flat_map(|a| (0..n).filter(move |&b| b != a).map(move |b| (a, b)))
        .unzip();
    let es = Arc::new(Schema::new(vec![
        Field::new("src", DataType::Int64, false),
        Field::new("dst", DataType::Int64, false),
    ]));
    let edges = RecordBatch::try_new(
        es.clone(),
        vec![
            Arc::new(Int64Array::from(src)) as ArrayRef,
            Arc::new(Int64Array::from(dst)) as ArrayRef,
        ],
    )
    .unwrap();
    Graph::builder()
        .node_table("N", "id", nodes.schema(), vec![nodes])
        .relationship_table("E", "N", "N", "src", "dst", es, vec![edges])
        .options(options)
        .build()
        .await
        .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_query_past_its_time_limit_is_an_error_naming_the_limit() {
    let g = complete(
        40,
        GraphOptions::default().with_timeout(Duration::from_millis(300)),
    )
    .await;
    // About 40^15 paths: only the limit ends it.
    for q in [
        "MATCH (a:N {id: 0})-[:E*1..15]->(b) RETURN count(*) AS n",
        "MATCH (a:N {id: 0})-[r:E*1..15]->(b) RETURN sum(size(r)) AS n",
        "MATCH (a:N {id: 0})-[:E*1..15]->(b) RETURN b.id AS x ORDER BY x LIMIT 1",
    ] {
        match g.query(q, &Params::new()).await {
            Err(Error::Limit(LimitKind::Time, m)) => {
                assert!(m.contains("time limit of 300ms"), "{m}")
            }
            other => panic!("{q}: expected a time limit error, got {other:?}"),
        }
    }
    // Under the limit, an answer.
    let r = common::run(&g, "MATCH (a:N {id: 0})-[:E]->(b) RETURN count(*) AS n").await;
    assert_eq!(common::lines(&r), vec!["39"]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_hub_traversal_under_limits_ends_with_an_error_not_an_abort() {
    // Memory stays at the current path however many paths there are; the time limit ends it.
    let g = complete(
        40,
        GraphOptions::default()
            .with_memory_limit(16 << 20)
            .with_timeout(Duration::from_millis(500)),
    )
    .await;
    for q in [
        "MATCH (a:N {id: 0})-[:E*1..15]-(b) RETURN count(*) AS n",
        "MATCH (a:N {id: 0})-[r:E*1..15]-(b) RETURN b.id AS b, size(r) AS s ORDER BY s DESC LIMIT 1",
    ] {
        match g.query(q, &Params::new()).await {
            Err(Error::Limit(_, m)) => assert!(m.contains("limit of"), "{m}"),
            other => panic!("{q}: expected a limit error, got {other:?}"),
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_traversal_streams_its_paths() {
    // Every path is enumerated one batch at a time: the first rows of an astronomically
    // large traversal come back without enumerating (or holding) the rest.
    let g = complete(40, GraphOptions::default()).await;
    let r = common::run(
        &g,
        "MATCH (a:N {id: 0})-[:E*1..15]->(b) RETURN b.id AS x LIMIT 3",
    )
    .await;
    assert_eq!(r.num_rows(), 3);
    let r = common::run(
        &g,
        "MATCH (a:N {id: 0})-[r:E*1..15]->(b) WHERE b.id = 7 RETURN size(r) AS n LIMIT 2",
    )
    .await;
    assert_eq!(r.num_rows(), 2);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_query_past_its_memory_limit_spills_or_names_the_limit() {
    let q = "MATCH (a:N)-[:E*1..2]->(b) RETURN a.id AS a, b.id AS b, count(*) AS c ORDER BY c DESC, a, b";
    let free = complete(40, GraphOptions::default()).await;
    let want = common::lines(&common::run(&free, q).await);
    let tight = complete(40, GraphOptions::default().with_memory_limit(64 << 10)).await;
    match tight.query(q, &Params::new()).await {
        // Spilled to disk: the same answer.
        Ok(r) => assert_eq!(common::lines(&r), want),
        Err(Error::Limit(LimitKind::Memory, m)) => {
            assert!(m.contains("limit of 64 KB (--memory-limit)"), "{m}")
        }
        Err(e) => panic!("expected an answer or a memory limit error, got {e}"),
    }
}

/// Per-element work over a list (a comprehension whose filter is a pattern) costs memory in
/// proportion to the list: the list is not copied into each element's row, nor its elements
/// collected back as values (20,000 elements of 200 bytes each: once 80 GB, or an Arrow offset
/// overflow).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_comprehension_over_a_big_list_answers_in_memory_proportional_to_it() {
    let g = complete(10, GraphOptions::default().with_memory_limit(64 << 20)).await;
    let q = "UNWIND range(1, 20000) AS i \
             WITH collect({k: i % 20, pad: '0123456789012345678901234567890123456789012345678901234567890123456789012345678901234567890123456789012345678901234567890123456789012345678901234567890123456789012345678901234567890123456789'}) AS xs \
             RETURN size(xs) AS n, size([x IN xs WHERE (:N {id: x.k})-[:E]->(:N {id: 0})]) AS k, \
             [x IN xs WHERE (:N {id: x.k})-[:E]->(:N {id: 0})][8].k AS at";
    let r = common::run(&g, q).await;
    // Nodes 1..9 have an edge to 0; keys 1..9 of each 20 pass: 9,000 of 20,000.
    assert_eq!(common::lines(&r), vec!["20000|9000|9"]);
}

/// A range of constants is not folded into a literal while planning: held and printed as a
/// name, a list within the limit took the process past it (300 million values under a 6 GB
/// cap aborted the server).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_range_of_constants_is_computed_when_the_query_runs_not_while_it_plans() {
    let g = complete(3, GraphOptions::default().with_memory_limit(256 << 20)).await;
    let q = "UNWIND range(1, 3000000) AS i RETURN count(i) AS n, sum(i) AS s";
    let plan = g.explain(q, &Params::new()).await.unwrap();
    assert!(plan.len() < 20_000, "a plan of {} bytes", plan.len());
    let r = common::run(&g, q).await;
    assert_eq!(common::lines(&r), vec!["3000000|4500001500000"]);
}

/// A long list parameter (held as one Arrow list beside the plan, not a literal per element
/// in it) answers as the same list written in the query does: its size, items, UNWIND,
/// three-valued IN from every row, in a comprehension's body, in a hop's filter, through
/// WITH, prepared; and the plans name it without its values.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_long_list_parameter_answers_as_the_list_written_in_the_query() {
    use lance_csr::Value;
    let g = complete(3, GraphOptions::default()).await;
    let mut ints: Vec<Value> = (0..3000).map(|i| Value::Int(i * 3)).collect();
    ints[1500] = Value::Null;
    let strs: Vec<Value> = (0..2000).map(|i| Value::Str(format!("s{i}"))).collect();
    let written = |xs: &[Value]| {
        let items: Vec<String> = xs
            .iter()
            .map(|v| match v {
                Value::Int(i) => i.to_string(),
                Value::Str(s) => format!("'{s}'"),
                _ => "null".to_string(),
            })
            .collect();
        format!("[{}]", items.join(", "))
    };
    let queries = [
        "RETURN size($xs) AS n, $xs[2999] AS last, $xs[-2] AS before, $xs[1500] AS hole",
        "UNWIND $xs AS x RETURN count(x) AS c, sum(x) AS s, count(*) AS rows",
        "UNWIND range(0, 9100, 7) AS y RETURN count(*) AS n, \
         sum(CASE WHEN y IN $xs THEN 1 ELSE 0 END) AS hits, \
         sum(CASE WHEN (y IN $xs) IS NULL THEN 1 ELSE 0 END) AS unknown",
        "UNWIND ['s5', 'x', null, 's1999'] AS y RETURN y, y IN $ss AS found",
        "MATCH (n:N) WHERE n.id * 3 IN $xs RETURN count(n) AS n",
        "RETURN [y IN range(0, 30) WHERE y IN $xs | y * 2] AS doubled",
        "MATCH (a:N)-->(b:N) WHERE b.id * 3 IN $xs RETURN count(*) AS n",
        "WITH $xs AS l, $ss AS m RETURN size(l) AS n, l[0] AS first, m[1999] AS last",
        "RETURN size($xs) + size($xs) AS twice",
        "MATCH (n:N) RETURN n.id AS id, n.id * 3 IN $xs AS found ORDER BY id",
        "MATCH (n:N) WHERE $xs IS NOT NULL RETURN count(n) AS n",
        "MATCH (n:N) RETURN sum(size([y IN range(0, 10) WHERE y * n.id IN $xs])) AS s",
        // Named twice in one projection over many rows: not computed once into a column
        // (which would hold the list once per row).
        "UNWIND range(0, 5000) AS y RETURN count(*) AS n, sum(CASE WHEN y IN $xs THEN 1 END) \
         AS a, sum(CASE WHEN y + 1 IN $xs THEN 1 END) AS b, max(size($xs)) AS c",
    ];
    // As the engine's values, and as one Arrow list each (as the server and the Python
    // package read a long list of one kind).
    let typed = |xs: &[Value]| {
        let mut b = lance_csr::TypedListBuilder::with_capacity(xs.len());
        assert!(xs.iter().all(|x| b.append(x)));
        Value::Other(b.finish().unwrap())
    };
    let values = Params::from([
        ("xs".to_string(), Value::List(ints.clone())),
        ("ss".to_string(), Value::List(strs.clone())),
    ]);
    let lists = Params::from([
        ("xs".to_string(), typed(&ints)),
        ("ss".to_string(), typed(&strs)),
    ]);
    for (q, params) in queries.iter().flat_map(|q| [(q, &values), (q, &lists)]) {
        let inline = q
            .replace("$xs", &written(&ints))
            .replace("$ss", &written(&strs));
        let want = common::run(&g, &inline).await;
        let got = g
            .query(q, params)
            .await
            .unwrap_or_else(|e| panic!("{q}: {e:?}"));
        assert_eq!(common::lines(&got), common::lines(&want), "{q}");
        assert!(!common::lines(&got).is_empty());
        let prepared = g.prepare(q).unwrap();
        for _ in 0..2 {
            let again = prepared.query(&g, params).await.unwrap();
            assert_eq!(common::lines(&again), common::lines(&want), "{q}");
        }
        // The plans name the lists, none holds their values (a physical projection prints
        // its expressions when it runs).
        let explained = g.explain(q, params).await.unwrap();
        assert!(
            !explained.contains("2997") && !explained.contains("s1998"),
            "{q}\n{explained}"
        );
        // Never a column of its own (which would hold the list once per row).
        let list_as_column = explained.match_indices(" AS __common_expr").any(|(at, _)| {
            let before = &explained[..at];
            let word = &before[before.rfind([' ', '(', '[']).map_or(0, |i| i + 1)..];
            word.starts_with('$') && !word.contains(')')
        });
        assert!(!list_as_column, "{q}\n{explained}");
    }
    let explained = g.explain(queries[0], &values).await.unwrap();
    assert!(explained.contains("size($xs#"), "{explained}");
}

#[tokio::test]
async fn a_long_list_of_mixed_kinds_lists_or_maps_answers_as_the_list_written_in_the_query() {
    use lance_csr::Value;
    let g = complete(3, GraphOptions::default()).await;
    let n = 2000i64;
    let map = |k: i64, name: bool| {
        let mut e = vec![("k".to_string(), Value::Int(k))];
        if name {
            e.push(("name".to_string(), Value::Str(format!("r{k}"))));
        }
        Value::Map(e)
    };
    let mixed = (0..n).map(|i| match i % 4 {
        0 => Value::Int(i),
        1 => Value::Str(format!("s{i}")),
        2 => Value::Bool(i % 3 == 0),
        _ => Value::Null,
    });
    let lists = (0..n).map(|i| Value::List(vec![Value::Int(i), Value::Int(i % 5)]));
    let params = Params::from([
        ("ms".to_string(), Value::List(mixed.collect())),
        ("ps".to_string(), Value::List(lists.collect())),
        // Maps of one shape (a list of structures), and of two (mixed-kind cells).
        (
            "rs".to_string(),
            Value::List((0..n).map(|k| map(k, true)).collect()),
        ),
        (
            "us".to_string(),
            Value::List((0..n).map(|k| map(k, k % 2 == 0)).collect()),
        ),
        (
            "ls".to_string(),
            Value::List(
                (0..n)
                    .map(|k| Value::List(vec![Value::Int(k); (k % 3) as usize]))
                    .collect(),
            ),
        ),
        // A long string: held as it is.
        (
            "st".to_string(),
            Value::Str(format!("ab{}yz", "c".repeat(100_000))),
        ),
        // A map holding long lists, and a short list of long lists: held whole too.
        (
            "m".to_string(),
            Value::Map(vec![
                (
                    "ids".to_string(),
                    Value::List((0..n).map(Value::Int).collect()),
                ),
                ("name".to_string(), Value::Str("x".into())),
                (
                    "nested".to_string(),
                    Value::Map(vec![(
                        "k".to_string(),
                        Value::List((0..1500).map(|i| Value::Str(format!("t{i}"))).collect()),
                    )]),
                ),
            ]),
        ),
        (
            "few".to_string(),
            Value::List(
                (0..3)
                    .map(|l| Value::List((0..700).map(|i| Value::Int(l * 1000 + i)).collect()))
                    .collect(),
            ),
        ),
    ]);
    let queries = [
        "RETURN size($ms) AS n, $ms[0] AS a, $ms[1] AS b, $ms[2] AS c, $ms[-1] AS d",
        "UNWIND $ms AS x RETURN count(x) AS c, count(DISTINCT x) AS d",
        "RETURN 's5' IN $ms AS a, 8 IN $ms AS b, 9 IN $ms AS c, true IN $ms AS d",
        "UNWIND $ps AS p RETURN sum(p[0] + p[1]) AS s, max(size(p)) AS m, count(*) AS n",
        "RETURN [1, 1] IN $ps AS a, [1, 2] IN $ps AS b, $ps[1000..1002] AS s",
        "UNWIND $rs AS r WITH r WHERE r.k % 7 = 0 RETURN count(*) AS n, sum(r.k) AS s, \
         collect(r.name)[0..3] AS names",
        "UNWIND $rs AS r MATCH (m:N {id: r.k}) RETURN count(m) AS n, sum(m.id) AS s",
        "MATCH (m:N) RETURN m.id AS id, {k: m.id, name: 'r' + toString(m.id)} IN $rs AS found \
         ORDER BY id",
        "RETURN $rs[5].name AS a, $rs[-1] AS b, size($us) AS c, $us[1] AS d, $us[2].name AS e",
        "UNWIND $us AS u RETURN count(u.name) AS named, sum(u.k) AS s",
        "UNWIND $ls AS l RETURN size(l) AS len, count(*) AS n ORDER BY len",
        "RETURN [x IN $ps WHERE x[1] = 4 | x[0]][0..4] AS a, reduce(s = 0, l IN $ls | s + size(l)) AS b",
        "RETURN size($m.ids) AS a, $m.name AS b, 5 IN $m.ids AS c, $m.ids[-1] AS d, \
         $m.nested.k[3] AS e, keys($m) AS f",
        "UNWIND $m.ids AS i WITH i WHERE i % 100 = 0 RETURN count(*) AS n, sum(i) AS s",
        "MATCH (x:N) WHERE x.id IN $m.ids RETURN count(x) AS n",
        "UNWIND $few AS l RETURN size(l) AS n, l[699] AS last, 1500 IN l AS has",
        "RETURN size($st) AS a, left($st, 3) AS b, $st STARTS WITH 'abc' AS c, \
         $st = $st + '' AS d, right($st, 2) AS e",
    ];
    for q in queries {
        let mut inline = q.to_string();
        // Longer names first (`$ms` before `$m`).
        let mut names: Vec<&String> = params.keys().collect();
        names.sort_by_key(|k| std::cmp::Reverse(k.len()));
        for k in names {
            inline = inline.replace(&format!("${k}"), &params[k].to_string());
        }
        let want = common::run(&g, &inline).await;
        let got = g
            .query(q, &params)
            .await
            .unwrap_or_else(|e| panic!("{q}: {e:?}"));
        assert_eq!(common::lines(&got), common::lines(&want), "{q}");
        assert!(!common::lines(&got).is_empty());
        let again = g.prepare(q).unwrap().query(&g, &params).await.unwrap();
        assert_eq!(common::lines(&again), common::lines(&want), "{q}");
        // Held as one list, never a literal per element.
        let explained = g.explain(q, &params).await.unwrap();
        for element in [
            "s1997",
            "r1997",
            "1997, 2",
            "1997, 1997",
            "1996, 1997",
            "t1499",
            "2698",
        ] {
            assert!(!explained.contains(element), "{q}\n{explained}");
        }
        assert!(!explained.contains(&"c".repeat(1000)), "{q}\n{explained}");
    }
}

/// A chain of `n` nodes (`i -> i + 1`) written as Lance datasets in `dir`, opened with
/// `options` (a count over it loads no column: only what the count holds takes memory).
async fn chain(dir: &std::path::Path, n: i64, options: GraphOptions) -> Graph {
    use lance_csr_datasets::social::{batch, edge_batch};
    use lance_csr_datasets::Table;
    let nodes = batch(vec![(
        "id",
        Arc::new(Int64Array::from((0..n).collect::<Vec<_>>())) as ArrayRef,
    )]);
    let edges = edge_batch((0..n - 1).collect(), (1..n).collect(), None);
    let tables = vec![Table::node("N", nodes), Table::rel("E", "N", "N", edges)];
    let cfg = lance_csr::write_graph(dir, tables, &mut |_| {})
        .await
        .unwrap();
    Graph::open_with(&cfg, options).await.unwrap()
}

/// A count pushed along the hops holds a number per node and the rows it counts for: both
/// come from the query's memory pool, so a limit below them is an error naming it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_factorized_count_reserves_what_it_holds() {
    let dir = tempfile::tempdir().unwrap();
    let q = "MATCH (a:N)-[:E]->(b)-[:E]->(c) RETURN count(*) AS n";
    let free = chain(dir.path(), 50_000, GraphOptions::default()).await;
    assert_eq!(common::lines(&common::run(&free, q).await), vec!["49998"]);
    drop(free);
    let tight = Graph::open_with(
        dir.path().join("graph.toml"),
        GraphOptions::default().with_memory_limit(64 << 10),
    )
    .await
    .unwrap();
    match tight.query(q, &Params::new()).await {
        Err(Error::Limit(LimitKind::Memory, m)) => {
            assert!(m.contains("limit of 64 KB (--memory-limit)"), "{m}");
            assert!(m.contains("CountPathsExec"), "{m}");
        }
        other => panic!("expected a memory limit error, got {other:?}"),
    }
}
