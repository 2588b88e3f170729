//! Vector functions on generated embeddings: the exact nearest neighbours the engine orders
//! by `vector_distance` are those computed here from the same vectors.

use lance_csr::arrow::array::AsArray;
use lance_csr::arrow::datatypes::{DataType, Float64Type, Int64Type};
use lance_csr::{Graph, Params};

/// A generated social network with `dim`-dimensional embeddings (and the search indexes
/// `write_graph` declares for them, not built), in a folder kept as long as the handle.
async fn embedded(scale: f64, seed: u64, dim: usize) -> (tempfile::TempDir, std::path::PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let mut tables = lance_csr_datasets::social::generate(scale, seed, &mut |_| {});
    lance_csr_datasets::social::with_embeddings(&mut tables, dim, seed);
    let cfg = lance_csr::write_graph(dir.path(), tables, &mut |_| {})
        .await
        .unwrap();
    (dir, cfg)
}

/// Every person's id and embedding, as the engine returns them.
async fn embeddings(g: &Graph) -> Vec<(i64, Vec<f64>)> {
    let r = g
        .query(
            "MATCH (p:Person) RETURN p.id AS id, p.embedding AS e",
            &Params::new(),
        )
        .await
        .unwrap();
    let mut out = Vec::new();
    for b in &r.batches {
        let ids = lance_csr::arrow::compute::cast(b.column(0), &DataType::Int64).unwrap();
        let ids = ids.as_primitive::<Int64Type>();
        let list = DataType::new_list(DataType::Float64, true);
        let es = lance_csr::arrow::compute::cast(b.column(1), &list).unwrap();
        let es = es.as_list::<i32>();
        for i in 0..b.num_rows() {
            let v = es.value(i);
            let v = v.as_primitive::<Float64Type>();
            out.push((ids.value(i), v.values().to_vec()));
        }
    }
    out
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn nearest_persons_by_distance_and_similarity_agree_with_a_direct_computation() {
    let (_dir, cfg) = embedded(0.2, 7, 16).await;
    let g = Graph::open(&cfg).await.unwrap();
    let all = embeddings(&g).await;
    assert!(all.len() > 100 && all.iter().all(|(_, e)| e.len() == 16));
    let (qid, q) = all[0].clone();
    let mut want: Vec<(f64, i64)> = all
        .iter()
        .filter(|(id, _)| *id != qid)
        .map(|(id, e)| (e.iter().zip(&q).map(|(a, b)| (a - b) * (a - b)).sum(), *id))
        .collect();
    want.sort_by(|a, b| a.partial_cmp(b).unwrap());
    let mut params = Params::new();
    params.insert("q".into(), lance_csr::Value::Int(qid));
    for (order, what) in [
        ("vector_distance(p.embedding, s.embedding)", "l2 distance"),
        // Unit vectors: the nearest by L2 are the most similar by cosine.
        (
            "vector.similarity.cosine(p.embedding, s.embedding) DESC",
            "cosine similarity",
        ),
    ] {
        let q = format!(
            "MATCH (s:Person {{id: $q}}), (p:Person) WHERE p <> s RETURN p.id AS id ORDER BY {order} LIMIT 10"
        );
        let r = g.query(&q, &params).await.unwrap();
        let got: Vec<i64> = lance_csr::rows(&r)
            .iter()
            .map(|r| r[0].parse().unwrap())
            .collect();
        let expected: Vec<i64> = want.iter().take(10).map(|(_, id)| *id).collect();
        assert_eq!(got, expected, "{what}");
    }
    // The clusters make neighbours mean something: the nearest are far nearer than most.
    let median = want[want.len() / 2].0;
    assert!(want[9].0 < median / 4.0, "{} vs {median}", want[9].0);
}

/// Ids in the first column of `q`'s rows.
async fn ids(g: &Graph, q: &str, params: &Params) -> Vec<i64> {
    let r = g
        .query(q, params)
        .await
        .unwrap_or_else(|e| panic!("{q}: {e}"));
    lance_csr::rows(&r)
        .iter()
        .map(|r| r[0].parse().unwrap())
        .collect()
}

fn vector_param(v: &[f64]) -> Params {
    let mut params = Params::new();
    let list = v.iter().map(|x| lance_csr::Value::Float(*x)).collect();
    params.insert("v".into(), lance_csr::Value::List(list));
    params
}

/// The ten persons most similar to `q` by cosine, computed here.
fn exact_top10(all: &[(i64, Vec<f64>)], q: &[f64]) -> Vec<i64> {
    let cos = |e: &[f64]| {
        let dot: f64 = e.iter().zip(q).map(|(a, b)| a * b).sum();
        let n = |v: &[f64]| v.iter().map(|x| x * x).sum::<f64>().sqrt();
        dot / (n(e) * n(q))
    };
    let mut by: Vec<(f64, i64)> = all.iter().map(|(id, e)| (cos(e), *id)).collect();
    by.sort_by(|a, b| b.partial_cmp(a).unwrap());
    by.iter().take(10).map(|(_, id)| *id).collect()
}

/// `db.index.vector.queryNodes`: without an index Lance searches every row (the exact top
/// ten, with Neo4j's scores); with the index built, recall@10 against the exact answer is at
/// least 0.9; the nodes it yields expand on the CSR like any others.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn vector_search_is_exact_without_an_index_and_recalls_with_one() {
    let (_dir, cfg) = embedded(0.5, 11, 16).await;
    let call = "CALL db.index.vector.queryNodes('person_embedding', 10, $v) YIELD node, score \
                RETURN node.id, score ORDER BY score DESC, node.id";
    let g = Graph::open(&cfg).await.unwrap();
    let all = embeddings(&g).await;
    for (_, q) in all.iter().step_by(97).take(5) {
        let want = exact_top10(&all, q);
        let params = vector_param(q);
        assert_eq!(ids(&g, call, &params).await, want, "flat search");
        // The score is Neo4j's: (1 + cos) / 2, the same as vector.similarity.cosine.
        let r = g.query(call, &params).await.unwrap();
        let scored = lance_csr::rows(&r);
        let check = "MATCH (p:Person {id: $id}) RETURN vector.similarity.cosine(p.embedding, $v)";
        let mut p = params.clone();
        p.insert(
            "id".into(),
            lance_csr::Value::Int(scored[0][0].parse().unwrap()),
        );
        let exact: f64 = lance_csr::rows(&g.query(check, &p).await.unwrap())[0][0]
            .parse()
            .unwrap();
        let got: f64 = scored[0][1].parse().unwrap();
        assert!((got - exact).abs() < 1e-5, "{got} vs {exact}");
        // Only the direction counts: the same vector scaled far below or above what a
        // 32-bit float holds finds the same nodes.
        for scale in [1e-30, 2f64.powi(62), 1e300] {
            let scaled: Vec<f64> = q.iter().map(|x| x * scale).collect();
            assert_eq!(
                ids(&g, call, &vector_param(&scaled)).await,
                want,
                "scaled by {scale}"
            );
        }
    }
    // A zero vector has no direction: a clear error, not an empty answer.
    let zero = vector_param(&[0.0; 16]);
    let e = g.query(call, &zero).await.unwrap_err();
    assert!(e.to_string().contains("all zeros"), "{e}");
    drop(g);
    let report = Graph::build_indexes(&cfg, &mut |_| {}).await.unwrap();
    assert!(
        report.built >= 3,
        "the three declared search indexes are built"
    );
    let status = lance_csr::index_status(&cfg).await.unwrap();
    assert!(
        status
            .iter()
            .any(|l| l.starts_with("person_embedding: vector index") && l.ends_with("up to date")),
        "{status:?}"
    );
    let g = Graph::open(&cfg).await.unwrap();
    let mut found = 0;
    let mut asked = 0;
    for (_, q) in all.iter().step_by(41).take(20) {
        let want = exact_top10(&all, q);
        let got = ids(&g, call, &vector_param(q)).await;
        assert_eq!(got.len(), 10);
        found += got.iter().filter(|id| want.contains(id)).count();
        asked += 10;
    }
    let recall = found as f64 / asked as f64;
    assert!(recall >= 0.9, "recall@10 {recall}");
    // As many as the table has: every node, not those a graph search happens to reach.
    let every = "CALL db.index.vector.queryNodes('person_embedding', 100000, $v) YIELD node \
                 RETURN count(DISTINCT node.id)";
    assert_eq!(
        ids(&g, every, &vector_param(&all[0].1)).await,
        [all.len() as i64]
    );
    // A prepared search and the plan cache serve each vector its own nearest nodes.
    let prepared = g.prepare(call).unwrap();
    for (_, q) in all.iter().step_by(131).take(3) {
        let params = vector_param(q);
        let r = prepared.query(&g, &params).await.unwrap();
        let via_prepared: Vec<i64> = lance_csr::rows(&r)
            .iter()
            .map(|r| r[0].parse().unwrap())
            .collect();
        assert_eq!(via_prepared, ids(&g, call, &params).await);
        let want = exact_top10(&all, q);
        assert!(via_prepared.iter().filter(|i| want.contains(i)).count() >= 8);
    }
    // The yielded nodes expand like matched ones: the same friends as matching those ids.
    let q = &all[3].1;
    let params = vector_param(q);
    let found = ids(&g, call, &params).await;
    let expand = "CALL db.index.vector.queryNodes('person_embedding', 10, $v) YIELD node \
                  MATCH (node)-[:KNOWS]->(f) RETURN f.id ORDER BY f.id";
    let mut by_id = params.clone();
    let list = found.iter().map(|i| lance_csr::Value::Int(*i)).collect();
    by_id.insert("ids".into(), lance_csr::Value::List(list));
    let matched =
        "MATCH (node:Person)-[:KNOWS]->(f) WHERE node.id IN $ids RETURN f.id ORDER BY f.id";
    let (a, b) = (
        ids(&g, expand, &params).await,
        ids(&g, matched, &by_id).await,
    );
    assert!(!a.is_empty());
    assert_eq!(a, b);
}

/// `db.index.fulltext.queryNodes` in Lucene's syntax finds exactly the posts whose words
/// satisfy the query, computed here from every post's text, with and without the index.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn full_text_search_finds_exactly_the_matching_texts() {
    let (_dir, cfg) = embedded(0.3, 5, 4).await;
    type Pred = fn(&[&str]) -> bool;
    let cases: [(&str, Pred); 4] = [
        ("lance AND vector", |w| {
            w.contains(&"lance") && w.contains(&"vector")
        }),
        ("lance vector -cache", |w| {
            (w.contains(&"lance") || w.contains(&"vector")) && !w.contains(&"cache")
        }),
        ("(graph OR rule) AND NOT join", |w| {
            (w.contains(&"graph") || w.contains(&"rule")) && !w.contains(&"join")
        }),
        ("\"lance fast\"", |w| {
            w.windows(2).any(|p| p == ["lance", "fast"])
        }),
    ];
    for built in [false, true] {
        if built {
            Graph::build_indexes(&cfg, &mut |_| {}).await.unwrap();
        }
        let g = Graph::open(&cfg).await.unwrap();
        let texts = g
            .query("MATCH (p:Post) RETURN p.id, p.content", &Params::new())
            .await
            .unwrap();
        let texts = lance_csr::rows(&texts);
        for (query, pred) in cases {
            let mut want: Vec<i64> = texts
                .iter()
                .filter(|r| pred(&r[1].split(' ').collect::<Vec<_>>()))
                .map(|r| r[0].parse().unwrap())
                .collect();
            want.sort();
            let mut params = Params::new();
            params.insert("q".into(), lance_csr::Value::Str(query.into()));
            let got = ids(
                &g,
                "CALL db.index.fulltext.queryNodes('post_content', $q) YIELD node, score \
                 WHERE score > 0 RETURN node.id ORDER BY node.id",
                &params,
            )
            .await;
            assert!(!want.is_empty(), "{query}");
            assert_eq!(got, want, "{query} (index built: {built})");
        }
    }
}

/// Errors name the problem and point at the argument.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn search_errors_are_clear() {
    let (_dir, cfg) = embedded(0.1, 5, 4).await;
    let g = Graph::open(&cfg).await.unwrap();
    for (q, kind, says) in [
        (
            "CALL db.index.vector.queryNodes('nope', 3, [1, 2, 3, 4]) YIELD node RETURN node",
            "ProcedureCallFailed",
            "There is no vector index named `nope` (its vector indexes: person_embedding, post_embedding)",
        ),
        (
            "CALL db.index.vector.queryNodes('person_embedding', 3, [1, 2]) YIELD node RETURN node",
            "InvalidArgumentValue",
            "the query vector has 2 dimensions; index `person_embedding` holds vectors of 4",
        ),
        (
            "CALL db.index.fulltext.queryNodes('person_embedding', 'x') YIELD node RETURN node",
            "ProcedureCallFailed",
            "`person_embedding` is a vector index",
        ),
        (
            "CALL db.index.vector.queryNode('person_embedding', 3, [1, 2, 3, 4])",
            "ProcedureNotFound",
            "There is no procedure with the name `db.index.vector.queryNode`",
        ),
        (
            "MATCH (p:Person) CALL db.index.vector.queryNodes('person_embedding', 3, p.embedding) YIELD node RETURN node",
            "Unsupported",
            "a procedure's arguments cannot read variables",
        ),
    ] {
        let e = g.query(q, &Params::new()).await.unwrap_err();
        assert_eq!(e.kind_name(), kind, "{q}: {e}");
        assert!(e.to_string().contains(says), "{q}: {e}");
        assert!(e.render(q).contains('^'), "{q}: a position");
    }
    // Counts past the table's rows find every row (Lance sizes its buffers by the count).
    let persons = ids(&g, "MATCH (p:Person) RETURN count(*)", &Params::new()).await[0];
    for (q, want) in [
        ("CALL db.index.vector.queryNodes('person_embedding', 9223372036854775807, [1, 2, 3, 4]) YIELD node RETURN count(*)", persons),
        ("MATCH (p:Person) WITH p ORDER BY vector_distance(p.embedding, [1, 2, 3, 4]) LIMIT 9223372036854775807 RETURN count(*)", persons),
        ("CALL db.index.fulltext.queryNodes('post_content', 'lance', {limit: 0}) YIELD node RETURN count(*)", 0),
        ("CALL db.index.fulltext.queryNodes('post_content', 'lance', {limit: 3}) YIELD node RETURN count(*)", 3),
    ] {
        assert_eq!(ids(&g, q, &Params::new()).await, [want], "{q}");
    }
}

/// `ORDER BY <distance to a constant> LIMIT k` is a Lance vector search (`search_nearest`):
/// exact without an index (the same rows as the rule switched off), within recall with one;
/// filters pushed into the scan are its prefilter; the rule keeps off farthest-first orders,
/// filters it cannot push, and a vector of another node.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn nearest_orderings_become_vector_searches() {
    let (_dir, cfg) = embedded(0.5, 13, 16).await;
    let mut off = lance_csr::RuleSwitches::default();
    off.switch_off(lance_csr::Rule::SearchNearest);
    let exact_options = lance_csr::GraphOptions::default().with_rules(off);
    let queries = [
        "MATCH (p:Person) WITH p ORDER BY vector_distance(p.embedding, $v) LIMIT 10 RETURN p.id ORDER BY p.id",
        "MATCH (p:Person) WHERE p.age > 40 WITH p ORDER BY vector.similarity.cosine(p.embedding, $v) DESC LIMIT 10 RETURN p.id ORDER BY p.id",
        "MATCH (p:Person) WITH p ORDER BY vector.similarity.euclidean(p.embedding, $v) DESC LIMIT 10 MATCH (p)-[:KNOWS]->(f) RETURN f.id ORDER BY f.id",
    ];
    let not_searched = [
        // Farthest first.
        "MATCH (p:Person) WITH p ORDER BY vector_distance(p.embedding, $v) DESC LIMIT 10 RETURN p.id ORDER BY p.id",
        // A filter Lance is not given (it calls a function) stands between sort and scan.
        "MATCH (p:Person) WHERE size(p.firstName) > 4 WITH p ORDER BY vector_distance(p.embedding, $v) LIMIT 10 RETURN p.id ORDER BY p.id",
        // Lance's dot distance is not one the rule maps.
        "MATCH (p:Person) WITH p ORDER BY vector_distance(p.embedding, $v, 'dot') LIMIT 10 RETURN p.id ORDER BY p.id",
    ];
    for built in [false, true] {
        if built {
            Graph::build_indexes(&cfg, &mut |_| {}).await.unwrap();
        }
        let g = Graph::open(&cfg).await.unwrap();
        let exact = Graph::open_with(&cfg, exact_options.clone()).await.unwrap();
        let all = embeddings(&g).await;
        let (mut found, mut asked) = (0, 0);
        for (_, q) in all.iter().step_by(53).take(8) {
            let params = vector_param(q);
            for text in queries {
                let plan = g.explain(text, &params).await.unwrap();
                assert!(plan.contains("KNNVectorDistance"), "{text}\n{plan}");
                let (a, b) = (
                    ids(&g, text, &params).await,
                    ids(&exact, text, &params).await,
                );
                if built {
                    found += a.iter().filter(|x| b.contains(x)).count();
                    asked += b.len();
                } else {
                    assert_eq!(a, b, "{text}");
                }
            }
            for text in not_searched {
                let plan = g.explain(text, &params).await.unwrap();
                assert!(!plan.contains("KNNVectorDistance"), "{text}\n{plan}");
                assert_eq!(
                    ids(&g, text, &params).await,
                    ids(&exact, text, &params).await
                );
            }
        }
        if built {
            let recall = found as f64 / asked as f64;
            assert!(recall >= 0.9, "recall {recall}");
        }
    }
}

/// `db.index.vector.queryRelationships` over an embedding column of a relationship table:
/// without an index Lance reads every row, so the relationships found are the exact nearest,
/// and the relationship yielded is the one a MATCH through it finds.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn relationships_are_searched_like_nodes() {
    use lance_csr::arrow::array::{Array, FixedSizeListArray, Float32Array, RecordBatch};
    use lance_csr::arrow::datatypes::{Field, Schema};
    use std::sync::Arc;
    let dir = tempfile::tempdir().unwrap();
    let mut tables = lance_csr_datasets::social::generate(0.2, 3, &mut |_| {});
    let likes = tables
        .iter_mut()
        .find(|t| t.name == "person_likes_post")
        .expect("likes of posts");
    let n = likes.batch.num_rows();
    // A vector per like: two values varying with the row, so no two are parallel.
    let values: Vec<f32> = (0..n)
        .flat_map(|i| [1.0 + (i % 97) as f32, 1.0 + (i % 89) as f32 * 0.5])
        .collect();
    let item = Arc::new(Field::new("item", DataType::Float32, true));
    let vectors =
        FixedSizeListArray::try_new(item, 2, Arc::new(Float32Array::from(values)), None).unwrap();
    let mut fields: Vec<Field> = (likes.batch.schema().fields().iter())
        .map(|f| f.as_ref().clone())
        .collect();
    fields.push(Field::new("embedding", vectors.data_type().clone(), false));
    let mut columns = likes.batch.columns().to_vec();
    columns.push(Arc::new(vectors));
    likes.batch = RecordBatch::try_new(Arc::new(Schema::new(fields)), columns).unwrap();
    let cfg = lance_csr::write_graph(dir.path(), tables, &mut |_| {})
        .await
        .unwrap();
    let mut text = std::fs::read_to_string(&cfg).unwrap();
    text.push_str(
        "\n[[indexes]]\nname = \"likes_embedding\"\nkind = \"vector\"\nrelationship = \"LIKES\"\n\
         from = \"Person\"\nto = \"Post\"\ncolumn = \"embedding\"\n",
    );
    std::fs::write(&cfg, text).unwrap();
    let g = Graph::open(&cfg).await.unwrap();
    let params = vector_param(&[3.0, 1.0]);
    let pairs = |rows: Vec<Vec<String>>| -> Vec<String> {
        let mut out: Vec<String> = rows.into_iter().map(|r| r.join(" ")).collect();
        out.sort();
        out
    };
    let run = |q: &'static str| {
        let (g, params) = (&g, &params);
        async move {
            lance_csr::rows(
                &g.query(q, params)
                    .await
                    .unwrap_or_else(|e| panic!("{q}: {e}")),
            )
        }
    };
    let found = run(
        "CALL db.index.vector.queryRelationships('likes_embedding', 5, $v) YIELD relationship AS r, score \
         RETURN startNode(r).id, endNode(r).id, type(r), score",
    )
    .await;
    let exact = run(
        "MATCH (a:Person)-[r:LIKES]->(b:Post) WITH a, b, r, vector.similarity.cosine(r.embedding, $v) AS s \
         ORDER BY s DESC LIMIT 5 RETURN a.id, b.id, type(r), s",
    )
    .await;
    assert_eq!(found.len(), 5);
    assert!(found.iter().all(|r| r[2] == "LIKES"));
    // The same similarities (rows of equal similarity may differ).
    let scores = |rows: &[Vec<String>]| -> Vec<f64> {
        let mut s: Vec<f64> = rows.iter().map(|r| r[3].parse().unwrap()).collect();
        s.sort_by(|a, b| b.partial_cmp(a).unwrap());
        s
    };
    let (a, b) = (scores(&found), scores(&exact));
    assert!(
        a.iter().zip(&b).all(|(x, y)| (x - y).abs() < 1e-5),
        "{a:?} vs {b:?}"
    );
    let found: Vec<Vec<String>> = found.into_iter().map(|r| r[..3].to_vec()).collect();
    // Matched through the relationship yielded: its own ends.
    let matched = run(
        "CALL db.index.vector.queryRelationships('likes_embedding', 5, $v) YIELD relationship AS r \
         MATCH (a)-[r]->(b) RETURN a.id, b.id, type(r)",
    )
    .await;
    assert_eq!(pairs(matched), pairs(found));
    let e = g
        .query(
            "CALL db.index.vector.queryNodes('likes_embedding', 5, $v) YIELD node RETURN node",
            &params,
        )
        .await
        .unwrap_err();
    assert!(e.to_string().contains("indexes relationships"), "{e}");
}

/// A graph built from Arrow tables in memory searches its vectors exactly (every row's
/// similarity, the best `k`); a full-text search needs Lance and says so.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tables_in_memory_are_searched_exactly() {
    use lance_csr::arrow::array::{
        Array, FixedSizeListArray, Float32Array, Int64Array, RecordBatch, StringArray,
    };
    use lance_csr::arrow::datatypes::{Field, Schema};
    use std::sync::Arc;
    let item = Arc::new(Field::new("item", DataType::Float32, true));
    let angles: Vec<f32> = (0..50).map(|i| i as f32 * 0.03).collect();
    let values: Vec<f32> = angles.iter().flat_map(|a| [a.cos(), a.sin()]).collect();
    let vectors =
        FixedSizeListArray::try_new(item, 2, Arc::new(Float32Array::from(values)), None).unwrap();
    let schema = Arc::new(Schema::new(vec![
        Field::new("id", DataType::Int64, false),
        Field::new("text", DataType::Utf8, false),
        Field::new("v", vectors.data_type().clone(), false),
    ]));
    let batch = RecordBatch::try_new(
        schema.clone(),
        vec![
            Arc::new(Int64Array::from_iter_values(0..50)),
            Arc::new(StringArray::from_iter_values(
                (0..50).map(|i| format!("doc {i}")),
            )),
            Arc::new(vectors),
        ],
    )
    .unwrap();
    let index =
        |name: &str, kind, column: &str| lance_csr::IndexDecl::new(name, kind, "Doc", column);
    let g = Graph::builder()
        .node_table("Doc", "id", schema, vec![batch])
        .index(index("doc_v", lance_csr::IndexKind::Vector, "v"))
        .index(index("doc_text", lance_csr::IndexKind::Fulltext, "text"))
        .build()
        .await
        .unwrap();
    // Nearest the angle 0.31: rows 10 (0.30), 11 (0.33), 9 (0.27), in that order.
    let params = vector_param(&[0.31f64.cos(), 0.31f64.sin()]);
    let got = ids(
        &g,
        "CALL db.index.vector.queryNodes('doc_v', 3, $v) YIELD node, score RETURN node.id ORDER BY score DESC",
        &params,
    )
    .await;
    assert_eq!(got, [10, 11, 9]);
    let e = g
        .query(
            "CALL db.index.fulltext.queryNodes('doc_text', 'doc') YIELD node RETURN node",
            &Params::new(),
        )
        .await
        .unwrap_err();
    assert!(
        e.to_string()
            .contains("needs the table stored as a Lance dataset"),
        "{e}"
    );
}
