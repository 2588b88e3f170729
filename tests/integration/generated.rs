//! `lance-csr generate` + `lance-csr query` on a generated graph with over 1M KNOWS edges;
//! counts are checked against an independent computation over the generator's Arrow tables.

use arrow::array::{AsArray, Int64Array};
use arrow::datatypes::Int64Type;
use lance_csr_datasets::{social, Table};
use std::collections::HashMap;
use std::process::Command;

fn col_i64<'a>(t: &'a Table, name: &str) -> &'a Int64Array {
    t.batch
        .column_by_name(name)
        .unwrap_or_else(|| panic!("{} has no {name}", t.name))
        .as_primitive::<Int64Type>()
}

fn table<'a>(ts: &'a [Table], name: &str) -> &'a Table {
    ts.iter().find(|t| t.name == name).expect("table exists")
}

fn cli(args: &[&str]) -> String {
    let out = Command::new(env!("CARGO_BIN_EXE_lance-csr"))
        .args(args)
        .output()
        .expect("binary runs");
    assert!(
        out.status.success(),
        "lance-csr {args:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).expect("utf8")
}

#[test]
fn generated_graph_counts_match_an_independent_computation() {
    let scale = 42.0;
    let seed = 7;
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().to_str().unwrap();
    let graph = cli(&["generate", "--scale", "42", "--seed", "7", "--out", out]);
    let graph = graph.trim().to_string();

    // The same tables, straight from the generator (same seed -> same graph).
    let ts = social::generate(scale, seed, &mut |_| {});
    let person = table(&ts, "person");
    let knows = table(&ts, "person_knows_person");
    assert!(
        knows.batch.num_rows() >= 1_000_000,
        "{} KNOWS edges",
        knows.batch.num_rows()
    );
    let ids = col_i64(person, "id");
    let ages = col_i64(person, "age");
    let genders = person
        .batch
        .column_by_name("gender")
        .unwrap()
        .as_string::<i32>();
    let mut age = HashMap::new();
    let mut female = HashMap::new();
    for i in 0..ids.len() {
        age.insert(ids.value(i), ages.value(i));
        female.insert(ids.value(i), genders.value(i) == "female");
    }
    let (src, dst) = (col_i64(knows, "src"), col_i64(knows, "dst"));
    let mut out_deg: HashMap<i64, i64> = HashMap::new();
    let mut old_to_female = 0i64;
    for i in 0..src.len() {
        *out_deg.entry(src.value(i)).or_default() += 1;
        if age[&src.value(i)] > 50 && female[&dst.value(i)] {
            old_to_female += 1;
        }
    }
    let (top_id, top_deg) = out_deg
        .iter()
        .map(|(k, v)| (*k, *v))
        .max_by_key(|(k, v)| (*v, -k))
        .unwrap();
    // Two-hop paths from the top person (no self loops, so uniqueness removes nothing).
    let two_hop: i64 = (0..src.len())
        .filter(|&i| src.value(i) == top_id)
        .map(|i| out_deg.get(&dst.value(i)).copied().unwrap_or(0))
        .sum();

    let q = |query: &str| -> Vec<String> {
        cli(&["query", "--graph", &graph, "--format", "csv", query])
            .lines()
            .skip(1)
            .map(String::from)
            .collect()
    };
    assert_eq!(
        q("MATCH (:Person)-[k:KNOWS]->(:Person) RETURN count(k)"),
        vec![knows.batch.num_rows().to_string()]
    );
    assert_eq!(
        q("MATCH (a:Person)-[:KNOWS]->(b:Person) WHERE a.age > 50 AND b.gender = 'female' RETURN count(*)"),
        vec![old_to_female.to_string()]
    );
    assert_eq!(
        q("MATCH (a:Person)-[:KNOWS]->(b:Person) RETURN a.id, count(*) AS deg ORDER BY deg DESC, a.id LIMIT 1"),
        vec![format!("{top_id},{top_deg}")]
    );
    let top = top_id.to_string();
    assert_eq!(
        cli(&[
            "query",
            "--graph",
            &graph,
            "--format",
            "csv",
            "--param",
            &format!("id={top}"),
            "MATCH (a:Person {id: $id})-[:KNOWS]->(b:Person)-[:KNOWS]->(c:Person) RETURN count(*)"
        ])
        .lines()
        .nth(1)
        .unwrap(),
        two_hop.to_string()
    );
}
