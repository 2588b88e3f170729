//! Criterion benches: parsing, CSR index build, and hops executed on the CSR vs as joins.
//! Run with `cargo bench --bench csr` (release profile).

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use lance_csr::bench_internals::{CsrIndex, NodeKeys};
use lance_csr::Params;
use lance_csr::{Graph, Mode};
use lance_csr_datasets::social;

fn graph(scale: f64, rt: &tokio::runtime::Runtime) -> Graph {
    let tables = social::generate(scale, 1, &mut |_| {});
    rt.block_on(Graph::from_tables(tables, Default::default()))
        .expect("graph builds")
}

fn parse(c: &mut Criterion) {
    let q = "MATCH (a:Person {id: 1007})-[k:KNOWS]->(b:Person)-[:KNOWS]->(c:Person) WHERE k.creationDate > 5 AND b.age > 35 RETURN c.firstName, count(*) ORDER BY count(*) DESC LIMIT 10";
    c.bench_function("parse/two_hop_query", |b| {
        b.iter(|| cypher::parse_query(q).unwrap())
    });
}

fn build(c: &mut Criterion) {
    let tables = social::generate(10.0, 1, &mut |_| {});
    let person = tables.iter().find(|t| t.name == "person").unwrap();
    let knows = tables
        .iter()
        .find(|t| t.name == "person_knows_person")
        .unwrap();
    let keys = NodeKeys::from_keys(person.batch.column(0).as_ref()).unwrap();
    let (src, dst) = (knows.batch.column(0).clone(), knows.batch.column(1).clone());
    let mut g = c.benchmark_group("csr_build");
    g.throughput(Throughput::Elements(knows.batch.num_rows() as u64));
    g.bench_function("knows_scale_10", |b| {
        b.iter(|| CsrIndex::build(src.as_ref(), dst.as_ref(), &keys, &keys, None).unwrap())
    });
    g.bench_function("node_keys_scale_10", |b| {
        b.iter(|| NodeKeys::from_keys(person.batch.column(0).as_ref()).unwrap())
    });
    g.finish();
}

fn expand(c: &mut Criterion) {
    let rt = tokio::runtime::Runtime::new().unwrap();
    let csr = graph(5.0, &rt);
    let join = rt.block_on(csr.with_mode(Mode::Join)).unwrap();
    let queries = [
        ("one_hop", "MATCH (p:Person {id: 1007})-[:KNOWS]->(f:Person) RETURN f.firstName"),
        (
            "one_hop_filtered",
            "MATCH (p:Person {id: 1007})-[k:KNOWS]->(f:Person) WHERE k.creationDate > 1420070400000 AND f.age > 35 RETURN f.firstName",
        ),
        (
            "two_hop_distinct",
            "MATCH (p:Person {id: 1007})-[:KNOWS]->(:Person)-[:KNOWS]->(f:Person) RETURN count(DISTINCT f)",
        ),
    ];
    let mut g = c.benchmark_group("expand");
    for (name, q) in queries {
        for (mode, graph) in [("csr", &csr), ("join", &join)] {
            g.bench_function(format!("{name}/{mode}"), |b| {
                b.iter(|| rt.block_on(graph.query(q, &Params::new())).unwrap())
            });
        }
    }
    g.finish();
}

criterion_group!(benches, parse, build, expand);
criterion_main!(benches);
