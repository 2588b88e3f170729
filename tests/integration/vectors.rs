//! Vector functions on generated embeddings: the exact nearest neighbours the engine orders
//! by `vector_distance` are those computed here from the same vectors.

use lance_csr::arrow::array::AsArray;
use lance_csr::arrow::datatypes::{DataType, Float64Type, Int64Type};
use lance_csr::{Graph, Params};

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
    let dir = tempfile::tempdir().unwrap();
    let mut tables = lance_csr_datasets::social::generate(0.2, 7, &mut |_| {});
    lance_csr_datasets::social::with_embeddings(&mut tables, 16, 7);
    let cfg = lance_csr::write_graph(dir.path(), tables, &mut |_| {})
        .await
        .unwrap();
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
