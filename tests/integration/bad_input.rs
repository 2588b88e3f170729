//! Bad input never panics and always says what is wrong: malformed queries, unknown names,
//! bad configs, missing or corrupt datasets, runtime type errors.

use crate::common;

use common::sample;
use lance_csr::GraphConfig;
use lance_csr::{Error, Graph, Params};
use std::path::PathBuf;

#[tokio::test]
async fn malformed_and_wrong_queries_give_positioned_errors() {
    let g = sample().await;
    let queries = [
        "",
        "MATCH",
        "MATCH (",
        "MATCH (n) RETURN",
        "MATCH (n)-[r->(m) RETURN n",
        "RETURN 1 +",
        "RETURN 'unterminated",
        "RETURN 1 AS",
        "MATCH (n:Person) RETURN n ORDER",
        "MATCH (n:Person) RETURN n LIMIT 'x'",
        "MATCH (n:Person) RETURN n SKIP -1",
        "MATCH (n:Person) WHERE n.age RETURN n",
        "MATCH (n:Person) RETURN n.age - n.firstName",
        "MATCH (n:Person)-[:KNOWS*1..2 {x: 1}]->(m) RETURN m",
        "MATCH (a)--(b)--(c)--(d) RETURN a",
        "MATCH p = (a:Person)-[:KNOWS]->(p) RETURN p",
        "MATCH (n:Person) RETURN sum(n.firstName)",
        "DELETE n",
        "RETURN {a: }",
        "RETURN 9223372036854775808",
    ];
    for q in queries {
        match g.query(q, &Params::new()).await {
            Ok(r) => panic!("{q:?} should fail, gave {} rows", r.num_rows()),
            Err(e) => {
                let text = e.render(q);
                assert!(text.starts_with("error: "), "{q:?}: {text}");
                assert!(
                    e.is_compile_time(),
                    "{q:?} should fail before execution: {e}"
                );
                if e.span().is_some() && !q.is_empty() {
                    assert!(text.contains('^'), "{q:?}: no caret in {text}");
                }
            }
        }
    }
}

/// Messages name variables as written, however they look inside the planner.
#[tokio::test]
async fn messages_name_variables_as_written() {
    let g = sample().await;
    let e = g
        .query("WITH 1 AS `a b` RETURN `a c`", &Params::new())
        .await
        .unwrap_err();
    assert!(e.to_string().contains("`a c`"), "{e}");
    let e = g
        .query("MATCH (`__x`:Person) RETURN `__x`.nmae", &Params::new())
        .await
        .unwrap_err();
    assert_eq!(e.kind_name(), "UnknownProperty", "{e}");
}

#[tokio::test]
async fn runtime_errors_are_errors() {
    let g = sample().await;
    let e = g
        .query("UNWIND [1, 0] AS x RETURN 10 / x", &Params::new())
        .await
        .unwrap_err();
    assert!(matches!(e, Error::Execution(_)), "{e}");
    assert!(
        e.to_string().to_lowercase().contains("divide by zero"),
        "{e}"
    );
    // The cause is kept: DataFusion's error, down to arrow's.
    let source = std::error::Error::source(&e).expect("a source");
    assert!(
        source
            .downcast_ref::<lance_csr::datafusion::error::DataFusionError>()
            .is_some(),
        "{source:?}"
    );
    // Errors of the values carry their openCypher class and detail.
    for (q, class, detail) in [
        (
            "MATCH (n:Person) RETURN n.age[0]",
            "TypeError",
            "InvalidArgumentType",
        ),
        (
            "RETURN 9223372036854775807 + 1",
            "ArithmeticError",
            "IntegerOverflow",
        ),
        ("RETURN range(1, 5, 0)", "ArgumentError", "NumberOutOfRange"),
        (
            "RETURN left('abc', -1)",
            "ArgumentError",
            "NegativeIntegerArgument",
        ),
        ("RETURN toBoolean([1])", "TypeError", "InvalidArgumentValue"),
    ] {
        let e = g.query(q, &Params::new()).await.unwrap_err();
        assert!(!e.is_compile_time(), "{q}: {e}");
        assert_eq!(
            (e.class().name(), e.kind_name().as_str()),
            (class, detail),
            "{q}: {e}"
        );
    }
}

/// Node keys of one integer type, edge endpoints of a wider one, some out of the keys' range
/// (dangling): both modes answer, and alike.
#[tokio::test]
async fn endpoints_wider_than_the_keys_are_dangling_in_both_modes() {
    use arrow::array::{ArrayRef, Int32Array, Int64Array};
    use arrow::datatypes::{DataType, Field, Schema};
    use arrow::record_batch::RecordBatch;
    use std::sync::Arc;
    let nodes = RecordBatch::try_new(
        Arc::new(Schema::new(vec![Field::new("id", DataType::Int32, false)])),
        vec![Arc::new(Int32Array::from(vec![1, 2, 3])) as ArrayRef],
    )
    .unwrap();
    let edge_schema = Arc::new(Schema::new(vec![
        Field::new("src", DataType::Int64, false),
        Field::new("dst", DataType::Int64, false),
    ]));
    let edges = RecordBatch::try_new(
        edge_schema.clone(),
        vec![
            Arc::new(Int64Array::from(vec![1, 2, 1 << 40, 3])) as ArrayRef,
            Arc::new(Int64Array::from(vec![2, 3, 1, 1 << 40])) as ArrayRef,
        ],
    )
    .unwrap();
    let g = Graph::builder()
        .node_table("N", "id", nodes.schema(), vec![nodes])
        .relationship_table("E", "N", "N", "src", "dst", edge_schema, vec![edges])
        .build()
        .await
        .unwrap();
    let join = g.with_mode(lance_csr::Mode::Join).await.unwrap();
    for q in [
        "MATCH (a:N)-[:E]->(b:N) RETURN a.id AS a, b.id AS b ORDER BY a, b",
        "MATCH (a:N)<-[:E]-(b:N) RETURN count(*) AS c",
        "MATCH (a:N)-[:E*1..3]->(b:N) RETURN count(*) AS c",
    ] {
        let x = common::lines(&common::run(&g, q).await);
        let y = common::lines(&common::run(&join, q).await);
        assert_eq!(x, y, "{q}");
    }
    let r = common::run(
        &g,
        "MATCH (a:N)-[:E]->(b:N) RETURN a.id AS a, b.id AS b ORDER BY a, b",
    )
    .await;
    assert_eq!(common::lines(&r), vec!["1|2", "2|3"]);
}

fn write_config(dir: &std::path::Path, text: &str) -> PathBuf {
    let p = dir.join("graph.toml");
    std::fs::write(&p, text).unwrap();
    p
}

#[tokio::test]
async fn bad_configs_name_file_key_and_problem() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    lance_csr::write_graph(d, lance_csr_datasets::sample::tables(), &mut |_| {})
        .await
        .unwrap();
    let cases: Vec<(&str, &[&str])> = vec![
        (
            "[nodes.Person]\nsource = \"person.lance\"\nid = \"pid\"\n",
            &["nodes.Person.id", "`pid` not found", "firstName"],
        ),
        (
            "[nodes.Person]\nsource = \"person.lance\"\nid = \"id\"\n[[relationships]]\ntype = \"KNOWS\"\nfrom = \"Person\"\nto = \"Person\"\nsource = \"person_knows_person.lance\"\nsrc = \"from\"\ndst = \"dst\"\n",
            &["relationships[0].src", "`from` not found"],
        ),
        (
            "[nodes.Person]\nsource = \"person.lance\"\nid = \"id\"\n[[relationships]]\ntype = \"KNOWS\"\nfrom = \"Person\"\nto = \"Human\"\nsource = \"x.lance\"\nsrc = \"src\"\ndst = \"dst\"\n",
            &["relationships[0].to", "unknown label `Human`"],
        ),
        (
            "[nodes.Person]\nsource = \"person.lance\"\nid = \"id\"\n[nodes.Person]\nsource = \"forum.lance\"\nid = \"id\"\n",
            &["Person", "duplicate"],
        ),
        ("[nodes.Person]\nsource = \"person.lance\"\n", &["id"]),
        ("[nodes.Person\nsource = 1\n", &["line 1"]),
        (
            "[nodes.Person]\nsource = \"nope.lance\"\nid = \"id\"\n",
            &["nodes.Person.source", "nope.lance", "does not exist"],
        ),
    ];
    for (text, needles) in cases {
        let p = write_config(d, text);
        let e = match Graph::open(&p).await {
            Ok(_) => panic!("config should be rejected:\n{text}"),
            Err(e) => e,
        };
        let msg = e.to_string();
        assert!(msg.contains("graph.toml"), "{msg}");
        for n in needles {
            assert!(msg.contains(n), "{msg} lacks {n}");
        }
    }
}

#[tokio::test]
async fn id_column_of_unsupported_type_is_rejected() {
    use arrow::array::{Float64Array, RecordBatch};
    use arrow::datatypes::{DataType, Field, Schema};
    use std::sync::Arc;
    let schema = Arc::new(Schema::new(vec![Field::new(
        "id",
        DataType::Float64,
        false,
    )]));
    let batch = RecordBatch::try_new(
        schema.clone(),
        vec![Arc::new(Float64Array::from(vec![1.0]))],
    )
    .unwrap();
    let e = match Graph::builder()
        .node_table("X", "id", schema, vec![batch])
        .build()
        .await
    {
        Ok(_) => panic!("float ids must be rejected"),
        Err(e) => e,
    };
    assert!(e.to_string().contains("unsupported type Float64"), "{e}");
}

#[tokio::test]
async fn large_binary_columns_are_refused() {
    // LargeBinary cells are the engine's values of mixed kind: a dataset column of that type
    // would be misread, so the graph doesn't open.
    use arrow::array::{Int64Array, LargeBinaryArray, RecordBatch};
    use arrow::datatypes::{DataType, Field, Schema};
    use std::sync::Arc;
    let schema = Arc::new(Schema::new(vec![
        Field::new("id", DataType::Int64, false),
        Field::new("blob", DataType::LargeBinary, true),
    ]));
    let batch = RecordBatch::try_new(
        schema.clone(),
        vec![
            Arc::new(Int64Array::from(vec![1])),
            Arc::new(LargeBinaryArray::from(vec![Some(&b"\x60a"[..])])),
        ],
    )
    .unwrap();
    let e = match Graph::builder()
        .node_table("X", "id", schema, vec![batch])
        .build()
        .await
    {
        Ok(_) => panic!("a LargeBinary column must be refused"),
        Err(e) => e,
    };
    assert!(
        e.to_string().contains("`blob`") && e.to_string().contains("Binary"),
        "{e}"
    );
}

#[tokio::test]
async fn corrupt_dataset_is_an_error_not_a_panic() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let ds = d.join("person.lance");
    std::fs::create_dir_all(ds.join("_versions")).unwrap();
    std::fs::write(ds.join("_versions").join("1.manifest"), b"not a manifest").unwrap();
    let p = write_config(
        d,
        "[nodes.Person]\nsource = \"person.lance\"\nid = \"id\"\n",
    );
    let e = match Graph::open(&p).await {
        Ok(_) => panic!("corrupt dataset must not open"),
        Err(e) => e,
    };
    let msg = e.to_string();
    assert!(
        msg.contains("nodes.Person.source") && msg.contains("person.lance"),
        "{msg}"
    );
    // What was being done and on which path, never a dependency's source file.
    assert!(!msg.contains(".rs:") && !msg.contains(".cargo"), "{msg}");
}

#[test]
fn config_builder_validates() {
    let e = GraphConfig::builder()
        .node("A", "a.lance", "id")
        .relationship("R", "A", "B", "r.lance", "src", "dst")
        .build()
        .unwrap_err();
    assert!(e.to_string().contains("unknown label `B`"), "{e}");
}

#[tokio::test]
async fn duplicate_node_keys_fall_back_to_joins() {
    use arrow::array::{Int64Array, RecordBatch, StringArray};
    use arrow::datatypes::{DataType, Field, Schema};
    use std::sync::Arc;
    let ns = Arc::new(Schema::new(vec![
        Field::new("id", DataType::Int64, false),
        Field::new("name", DataType::Utf8, false),
    ]));
    let nodes = RecordBatch::try_new(
        ns.clone(),
        vec![
            Arc::new(Int64Array::from(vec![1, 1, 2])),
            Arc::new(StringArray::from(vec!["a", "b", "c"])),
        ],
    )
    .unwrap();
    let es = Arc::new(Schema::new(vec![
        Field::new("src", DataType::Int64, false),
        Field::new("dst", DataType::Int64, false),
    ]));
    let edges = RecordBatch::try_new(
        es.clone(),
        vec![
            Arc::new(Int64Array::from(vec![2])),
            Arc::new(Int64Array::from(vec![1])),
        ],
    )
    .unwrap();
    let g = Graph::builder()
        .node_table("N", "id", ns, vec![nodes])
        .relationship_table("R", "N", "N", "src", "dst", es, vec![edges])
        .build()
        .await
        .expect("a graph with duplicate keys still opens");
    // Its only relationship table has no index.
    assert!(!g.has_all_indexes());
    let r = g
        .query(
            "MATCH (:N {id: 2})-[:R]->(x:N) RETURN x.name ORDER BY x.name",
            &Params::new(),
        )
        .await
        .unwrap();
    assert_eq!(lance_csr::rows(&r), vec![vec!["a"], vec!["b"]]);
}

/// Queries of any size end in an answer or a positioned error, never a stack overflow: the
/// parser bounds nesting depth, pattern length and UNION branches; planning runs on a stack
/// of a known size. Flat chains of one operator, as query builders write them, are not
/// nesting: 10^5 terms answer (a balanced tree, or one function over all the operands).
#[tokio::test]
async fn huge_queries_are_bounded_not_fatal() {
    let g = sample().await;
    let n = 100_000;
    let join = |sep: &str, item: &str, k: usize| vec![item; k].join(sep);
    // 10^5 terms of `+` (folded while planning); the others at 5,000 terms, as a debug build
    // plans one term in tens of microseconds (a release build 10^5 terms in about a second).
    let m = 5_000;
    let long = [
        (
            format!("RETURN {} AS x", join(" + ", "1", n)),
            "100000".to_string(),
        ),
        (
            format!("RETURN {} AS x", join(" OR ", "false", m)),
            "false".into(),
        ),
        (
            format!("RETURN {} AS x", join(" < ", "1", m)),
            "false".into(),
        ),
        (
            format!("RETURN {} AS x", join(" XOR ", "true", m)),
            "false".into(),
        ),
        (
            format!("RETURN {} AS x", join(" * ", "1.0", m)),
            "1.0".into(),
        ),
        (
            format!("RETURN {} AS x", join(" AND ", "true", m)),
            "true".into(),
        ),
        (
            format!(
                "MATCH (p:Person) WHERE {} RETURN count(p) AS x",
                (0..m)
                    .map(|i| format!("p.id <> {}", i + 3))
                    .collect::<Vec<_>>()
                    .join(" AND ")
            ),
            "2".into(),
        ),
        (
            format!(
                "UNWIND [1, 2] AS a WITH a WHERE {} RETURN sum(a) AS x",
                (0..m)
                    .map(|i| format!("a = {}", i + 2))
                    .collect::<Vec<_>>()
                    .join(" OR ")
            ),
            "2".into(),
        ),
        (
            format!(
                "UNWIND [1, 2] AS a RETURN sum({}) AS x",
                join(" - ", "a", m)
            ),
            (3 * (2 - m as i64)).to_string(),
        ),
    ];
    for (q, want) in &long {
        let r = g.query(q, &Params::new()).await.unwrap();
        assert_eq!(common::rows(&r), vec![vec![want.clone()]], "{}", &q[..60]);
    }
    let too_big = [
        format!("RETURN {}1{} AS x", "[".repeat(n), "]".repeat(n)),
        format!("RETURN {}1{} AS x", "(".repeat(n), ")".repeat(n)),
        format!("RETURN {}1{} AS x", "abs(".repeat(n), ")".repeat(n)),
        format!("RETURN {}true AS x", "NOT ".repeat(n)),
        format!("RETURN {}1 AS x", "- ".repeat(n)),
        format!("WITH {{a: 1}} AS m RETURN m{} AS x", ".a".repeat(n)),
        format!(
            "MATCH (a:Person){} RETURN count(*)",
            "-[:KNOWS]->()".repeat(n)
        ),
        format!(
            "MATCH (a:Person){} RETURN count(*)",
            "-[:KNOWS]->()".repeat(33)
        ),
        format!(
            "MATCH {} RETURN count(*)",
            vec!["(:Person)-[:KNOWS]->()"; 33].join(", ")
        ),
        join(" UNION ALL ", "RETURN 1 AS x", n),
    ];
    for q in &too_big {
        match g.query(q, &Params::new()).await {
            Ok(_) => panic!("a query of {} bytes should be refused", q.len()),
            Err(e) => {
                assert!(e.is_compile_time(), "{e}");
                assert!(e.span().is_some(), "{e}");
            }
        }
    }
    // Inside the bounds: answers (a bracket level counts about two).
    let (k, d) = (150, 90);
    let ok = [
        (format!("RETURN {} AS x", join(" OR ", "false", k)), "false"),
        (format!("RETURN {} AS x", join(" + ", "1", k)), "150"),
        (format!("RETURN {} AS x", join(" XOR ", "true", k)), "false"),
        (
            format!("RETURN size({}1{}) AS x", "[".repeat(d), "]".repeat(d)),
            "1",
        ),
        (
            format!("RETURN {}-1{} AS x", "abs(".repeat(d), ")".repeat(d)),
            "1",
        ),
        (
            format!(
                "RETURN size({}[1, 2]{}) AS x",
                "tail(".repeat(d),
                ")".repeat(d)
            ),
            "0",
        ),
    ];
    for (q, want) in &ok {
        let r = g.query(q, &Params::new()).await.unwrap();
        assert_eq!(
            common::rows(&r),
            vec![vec![want.to_string()]],
            "{}",
            &q[..40]
        );
    }
    let union = join(" UNION ALL ", "RETURN 1 AS x", 999);
    assert_eq!(
        g.query(&union, &Params::new()).await.unwrap().num_rows(),
        999
    );
    let hops = format!(
        "MATCH (a:Person {{id: -1}}){} RETURN count(*) AS n",
        "-[:KNOWS]->()".repeat(20)
    );
    let r = g.query(&hops, &Params::new()).await.unwrap();
    assert_eq!(common::rows(&r), vec![vec!["0".to_string()]]);
}
