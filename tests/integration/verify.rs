//! Random-query equivalence: 400 generated queries over the sample graph (patterns with
//! branching and variable length, filters on values from the data, WITH, aggregates, ORDER BY +
//! LIMIT), each run with every rule on and with all of them off; results must be identical.

use crate::common;

/// The `verify` command's generator and comparison (binary-only code on the public API).
#[allow(dead_code)]
#[path = "../../src/cli/verify.rs"]
pub(crate) mod cli_verify;

use cli_verify::Shapes;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn random_queries_agree_with_rules_on_and_off() {
    let g = common::sample().await;
    let report = cli_verify::run(&g, 320, 20261130, Shapes::All, &mut |_| ())
        .await
        .unwrap();
    println!("{}", report.render());
    for q in report.queries.iter().take(12) {
        println!("  e.g. {q}");
    }
    assert!(report.mismatches.is_empty(), "{}", report.render());
    // The generator makes queries the subset accepts, and most of them return rows.
    assert!(report.compared >= 312, "{}", report.render());
    assert!(
        report.nonempty * 2 >= report.compared,
        "{}",
        report.render()
    );
    // Most also ran with parameters through a plan cached for other values.
    assert!(
        report.parameterized * 2 >= report.compared,
        "{}",
        report.render()
    );
    // The same seed gives the same queries.
    let again = cli_verify::run(&g, 20, 20261130, Shapes::All, &mut |_| ())
        .await
        .unwrap();
    assert_eq!(again.queries, report.queries[..20]);
}

/// The same over a graph with self-loops, edges back and a parallel edge, where rewrites that
/// only hold without them (factorized counts over one table, triangles) must stay off.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn random_queries_agree_over_loops_and_parallel_edges() {
    let tables = lance_csr_datasets::sample::tables_with_loops();
    let g = lance_csr::Graph::from_tables(tables, Default::default())
        .await
        .unwrap();
    let report = cli_verify::run(&g, 200, 20261201, Shapes::WholeGraph, &mut |_| ())
        .await
        .unwrap();
    println!("{}", report.render());
    assert!(report.mismatches.is_empty(), "{}", report.render());
    assert!(report.compared >= 190, "{}", report.render());
    assert!(
        report.nonempty * 2 >= report.compared,
        "{}",
        report.render()
    );
}

/// Literals become parameters, except variable-length bounds; the other values differ.
#[test]
fn parameterize_turns_literals_into_parameters() {
    let (q, values, others) = cli_verify::parameterize(
        "MATCH (a:Person {id: 7})-[:KNOWS*1..3]->(b)-[:KNOWS*2]->(c) WHERE b.name = 'Ann' AND b.x > -1.5 RETURN c LIMIT 4",
    )
    .unwrap();
    assert_eq!(
        q,
        "MATCH (a:Person {id: $v1})-[:KNOWS*1..3]->(b)-[:KNOWS*2]->(c) WHERE b.name = $v2 AND b.x > -$v3 RETURN c LIMIT $v4"
    );
    let shown: Vec<String> = values.values().map(|v| v.to_string()).collect();
    assert_eq!(shown, ["7", "'Ann'", "1.5", "4"]);
    assert!(values.iter().all(|(k, v)| others[k] != *v));
    assert!(cli_verify::parameterize("MATCH (a)-[*..2]->(b) RETURN a").is_none());
    assert!(cli_verify::parameterize("MATCH (a) WHERE a.x IN [] RETURN a").is_none());
    // A list a property is tested against, of several kinds, maps and lists among them: one
    // long list parameter (the map's entry for the second such list).
    let (q, values, _) = cli_verify::parameterize(
        "MATCH (a) WHERE a.x IN [1, {k: -2}, ['y', 2.5]] AND a.y IN [-3, 'z'] RETURN a",
    )
    .unwrap();
    assert_eq!(
        q,
        "MATCH (a) WHERE a.x IN $v1 AND a.y IN $v2.items RETURN a"
    );
    let lance_csr::Value::List(first) = &values["v1"] else {
        panic!("{values:?}")
    };
    assert!(first.len() >= lance_csr::COMPACT_LIST_ITEMS);
    assert_eq!(
        first[..3].iter().map(|v| v.to_string()).collect::<Vec<_>>(),
        ["1", "{k: -2}", "['y', 2.5]"]
    );
    let lance_csr::Value::Map(second) = &values["v2"] else {
        panic!("{values:?}")
    };
    assert_eq!(second[0].0, "items");
}

/// The comparison is real: against a graph with one KNOWS edge fewer, queries over KNOWS differ.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_different_answer_is_reported() {
    use lance_csr::Mode;
    let full = common::sample().await;
    let mut tables = lance_csr_datasets::sample::tables();
    let knows = tables
        .iter_mut()
        .find(|t| t.name.contains("knows"))
        .expect("a KNOWS table");
    knows.batch = knows.batch.slice(1, knows.batch.num_rows() - 1);
    let fewer = lance_csr::Graph::from_tables(tables, Default::default())
        .await
        .unwrap()
        .with_mode(Mode::Join)
        .await
        .unwrap();
    let report = cli_verify::compare(&full, &fewer, 60, 7, Shapes::All, &mut |_| ())
        .await
        .unwrap();
    assert!(!report.mismatches.is_empty(), "{}", report.render());
    assert!(report
        .mismatches
        .iter()
        .all(|m| m.optimized != m.unoptimized));
    assert!(report.render().contains("MISMATCH "));
}

/// Whether the engine's result `r` of `q` is the reference's (`cols`, `rows`): in order where
/// the query orders, as multisets otherwise.
pub(crate) fn same_result(
    q: &str,
    cols: &[String],
    rows: &[Vec<String>],
    r: &lance_csr::QueryResult,
) -> bool {
    let canonical = |rows: Vec<Vec<String>>| -> Vec<Vec<String>> {
        rows.into_iter()
            .map(|r| r.into_iter().map(|c| unordered_properties(&c)).collect())
            .collect()
    };
    let (mut got, mut want) = (canonical(common::rows(r)), canonical(rows.to_vec()));
    if !q.contains(" ORDER BY ") {
        got.sort();
        want.sort();
    }
    r.columns == cols && got == want
}

/// `text` (a rendered value) with the properties of each node and relationship in name order:
/// a node's properties are a map, whose order means nothing (a path shows its nodes' in the
/// order of the properties the path's labels share).
pub(crate) fn unordered_properties(text: &str) -> String {
    let chars: Vec<char> = text.chars().collect();
    let mut out = String::new();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        out.push(c);
        i += 1;
        // `{` right after a label or type (`(:L {`, `[:T {`): the properties.
        if c != '{' || !out[..out.len() - 1].ends_with(' ') {
            continue;
        }
        let (mut depth, mut quote) = (0i32, false);
        let mut parts = Vec::new();
        let mut from = i;
        while i < chars.len() {
            let ch = chars[i];
            if quote {
                if ch == '\\' {
                    i += 1;
                } else if ch == '\'' {
                    quote = false;
                }
            } else {
                match ch {
                    '\'' => quote = true,
                    '[' | '{' | '(' => depth += 1,
                    ']' | ')' => depth -= 1,
                    '}' if depth == 0 => break,
                    '}' => depth -= 1,
                    ',' if depth == 0 => {
                        parts.push(chars[from..i].iter().collect::<String>().trim().to_string());
                        from = i + 1;
                    }
                    _ => {}
                }
            }
            i += 1;
        }
        parts.push(
            chars[from..i.min(chars.len())]
                .iter()
                .collect::<String>()
                .trim()
                .to_string(),
        );
        let mut parts: Vec<String> = parts.iter().map(|p| unordered_properties(p)).collect();
        parts.sort();
        out.push_str(&parts.join(", "));
    }
    out
}

/// The generated queries against the reference interpreter (`common::reference`: the query
/// evaluated directly over the sample graph's rows, sharing no code with the binder, planner or
/// DataFusion), in both modes. Catches what the two modes share.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn random_queries_agree_with_the_reference_interpreter() {
    use common::reference::{RefError, RefGraph};
    use lance_csr::Mode;
    let csr = common::sample().await;
    let join = csr.with_mode(Mode::Join).await.unwrap();
    let reference = RefGraph::new(&lance_csr_datasets::sample::tables());
    let queries = cli_verify::generate(&csr, 400, 20261201, Shapes::All).await;
    let (mut compared, mut errors) = (0, 0);
    let mut skipped = Vec::new();
    let mut mismatches = Vec::new();
    for q in &queries {
        let want = match reference.query(q) {
            Ok(r) => Ok(r),
            Err(RefError::Unsupported(why)) => {
                skipped.push(format!("{q}: {why}"));
                continue;
            }
            Err(RefError::Error(e)) => Err(e),
        };
        compared += 1;
        errors += want.is_err() as usize;
        // CSR mode twice where a plan may read a part twice (the second run from the plan
        // cache): every run has the answer.
        let runs: &[&lance_csr::Graph] = if cli_verify::reads_twice(q) {
            &[&csr, &join, &csr]
        } else {
            &[&csr, &join]
        };
        for g in runs {
            let got = g.query(q, &lance_csr::Params::new()).await;
            let same = match (&want, &got) {
                (Err(_), Err(e)) => !e.is_compile_time() || e.class().name() != "Error",
                (Ok((cols, rows)), Ok(r)) => same_result(q, cols, rows, r),
                _ => false,
            };
            if !same {
                mismatches.push(format!(
                    "MISMATCH ({:?}) {q}\n  reference: {want:?}\n  engine:    {:?}",
                    g.options().mode,
                    got.map(|r| (r.columns.clone(), common::rows(&r)))
                        .map_err(|e| e.to_string())
                ));
            }
        }
    }
    println!(
        "{compared} queries compared with the reference ({errors} errors expected), {} skipped",
        skipped.len()
    );
    for s in skipped.iter().take(10) {
        println!("  skipped: {s}");
    }
    assert!(mismatches.is_empty(), "{}", mismatches.join("\n"));
    assert!(compared >= 380, "only {compared} compared");
}

/// Labels, types and properties whose names look like the planner's internal columns or need
/// quoting (backquotes, dots, Lance's own `_rowid`): the sample graph renamed, in memory and
/// written as Lance datasets (where such columns are stored under other names), queried at
/// random, checked against the reference.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hostile_names_agree_with_the_reference_interpreter() {
    use arrow::datatypes::{Field, Schema};
    use common::reference::RefGraph;
    use lance_csr_datasets::{Table, TableKind};
    use std::sync::Arc;
    let label = |l: &str| match l {
        "Person" => "__P e.r#s".to_string(),
        "Post" => "__anon1".to_string(),
        other => other.to_string(),
    };
    let prop = |p: &str| match p {
        "src" | "dst" => p.to_string(),
        "id" => "__id".to_string(),
        "firstName" => "a__b".to_string(),
        "age" => "x__#src".to_string(),
        "creationDate" => "__agg0".to_string(),
        "lastName" => "`ln`".to_string(),
        "gender" => "ge`n".to_string(),
        "browserUsed" => "_rowid".to_string(),
        other => format!("{other}.ü"),
    };
    let tables: Vec<Table> = lance_csr_datasets::sample::tables()
        .into_iter()
        .map(|t| {
            let schema = t.batch.schema();
            let fields: Vec<Field> = schema
                .fields()
                .iter()
                .map(|f| f.as_ref().clone().with_name(prop(f.name())))
                .collect();
            let batch = arrow::record_batch::RecordBatch::try_new(
                Arc::new(Schema::new(fields)),
                t.batch.columns().to_vec(),
            )
            .unwrap();
            let kind = match t.kind {
                TableKind::Node {
                    label: l,
                    id,
                    extra_labels,
                } => TableKind::Node {
                    label: label(&l),
                    id: prop(&id),
                    extra_labels: extra_labels.iter().map(|l| label(l)).collect(),
                },
                TableKind::Rel { rel_type, from, to } => TableKind::Rel {
                    rel_type: format!("__{rel_type}"),
                    from: label(&from),
                    to: label(&to),
                },
            };
            Table {
                name: t.name,
                kind,
                batch,
            }
        })
        .collect();
    let reference = RefGraph::new(&tables);
    let dir = tempfile::tempdir().unwrap();
    let on_lance = lance_csr::write_graph(dir.path(), tables.clone(), &mut |_| ())
        .await
        .unwrap();
    let on_lance = lance_csr::Graph::open(on_lance).await.unwrap();
    let in_memory = lance_csr::Graph::from_tables(tables, Default::default())
        .await
        .unwrap();
    for g in [&in_memory, &on_lance] {
        hostile_queries(g, &reference).await;
    }
}

async fn hostile_queries(g: &lance_csr::Graph, reference: &common::reference::RefGraph) {
    use common::reference::RefError;
    // Values and keys() show the hostile names as they are.
    let r = common::run(
        g,
        "MATCH (p:`__P e.r#s` {`__id`: 1}) RETURN p.`a__b` AS n, p.```ln``` AS l, p.`_rowid` AS b, keys(p) AS k, labels(p) AS t",
    )
    .await;
    assert_eq!(
        common::lines(&r),
        vec!["Ann|Smith|Firefox|['__id', 'a__b', '`ln`', 'ge`n', 'x__#src', 'birthday.ü', '__agg0', '_rowid']|['__P e.r#s']"]
    );
    let queries = cli_verify::generate(g, 150, 7, Shapes::All).await;
    let mut compared = 0;
    let mut mismatches = Vec::new();
    for q in &queries {
        let want = match reference.query(q) {
            Ok(r) => Ok(r),
            Err(RefError::Unsupported(_)) => continue,
            Err(RefError::Error(e)) => Err(e),
        };
        compared += 1;
        let got = g.query(q, &lance_csr::Params::new()).await;
        let same = match (&want, &got) {
            (Err(_), Err(e)) => !e.is_compile_time(),
            (Ok((cols, rows)), Ok(r)) => same_result(q, cols, rows, r),
            _ => false,
        };
        if !same {
            mismatches.push(format!(
                "MISMATCH {q}\n  reference: {want:?}\n  engine:    {:?}",
                got.map(|r| common::rows(&r)).map_err(|e| e.to_string())
            ));
        }
    }
    println!("{compared} queries on hostile names compared with the reference");
    assert!(mismatches.is_empty(), "{}", mismatches.join("\n"));
    assert!(compared >= 120, "only {compared} compared");
}
