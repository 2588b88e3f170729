//! Round trips of every graph node through the codecs: a plan -> bytes -> the same plan, and
//! the physical plan (planned as a scheduler plans it, sent as an executor receives it)
//! executes to the in-process result.

use super::codec::{GraphLogicalCodec, GraphPhysicalCodec};
use super::planned::DistributedQueryPlanner;
use crate::{Graph, GraphOptions, Params};
use datafusion::common::tree_node::{TreeNode, TreeNodeRecursion};
use datafusion::execution::context::QueryPlanner;
use datafusion::logical_expr::LogicalPlan;
use datafusion::physical_plan::{collect, displayable, ExecutionPlan};
use datafusion_proto::bytes::{
    logical_plan_from_bytes_with_extension_codec, logical_plan_to_bytes_with_extension_codec,
    physical_plan_from_bytes_with_extension_codec, physical_plan_to_bytes_with_extension_codec,
};
use std::collections::BTreeSet;
use std::sync::Arc;

/// Queries whose plans hold every graph node between them.
const QUERIES: &[&str] = &[
    // CsrExpand, NodeLookup (the grouped node's columns)
    "MATCH (a:Person)-[k:KNOWS]->(b:Person) WHERE b.age > 20 RETURN a.firstName, k.creationDate, b",
    // ConstRow (a key lookup), CsrExpand with a relationship filter
    "MATCH (p:Person {id: 1})-[k:KNOWS]->(f) WHERE k.creationDate > 0 RETURN f.firstName",
    // VarLengthExpand with path elements
    "MATCH p = (a:Person)-[:KNOWS*1..2]->(b:Person) RETURN a.id, b.id, length(p), nodes(p)",
    // VarLengthExpand searching shortest paths
    "MATCH p = shortestPath((a:Person {id: 1})-[:KNOWS*]-(b:Person {id: 4})) RETURN length(p)",
    // CountPaths, with values
    "MATCH (a:Person)-[:KNOWS]->(b:Person)-[:KNOWS]->(c:Person) RETURN count(*), sum(c.age)",
    // CsrIntersect (rows), then counted
    "MATCH (a:Person)-[:KNOWS]->(b:Person)-[:KNOWS]->(c:Person), (a)-[:KNOWS]->(c) RETURN a.id, b.id, c.id",
    "MATCH (a:Person)-[:KNOWS]->(b:Person)-[:KNOWS]->(c:Person)-[:KNOWS]->(d:Person), (a)-[:KNOWS]->(d) RETURN count(*)",
    // SharedSubplan (the anchor of five branches)
    "MATCH (p:Person {id: 1})-[r]->(x) RETURN type(r) AS t, count(*) AS n ORDER BY t",
    // Branches over labels; an empty list literal
    "MATCH (p:Person {id: 1})-[:LIKES]->(m:Message) RETURN labels(m) AS l, count(*) AS n",
    // A scan of no columns (only the rows are counted)
    "MATCH (m:Post|Comment) RETURN labels(m) AS l",
    // A list comprehension (a scalar function with a body)
    "MATCH (a:Person) RETURN a.id, [x IN [1, 2, 3] WHERE x > a.id % 3 | x * 2] AS xs",
];

fn names(plan: &LogicalPlan, into: &mut BTreeSet<String>) {
    plan.apply(|n| {
        if let LogicalPlan::Extension(e) = n {
            into.insert(e.node.name().to_string());
            for i in e.node.inputs() {
                names(i, into);
            }
        }
        Ok(TreeNodeRecursion::Continue)
    })
    .unwrap();
}

/// `plan` with nested UNIONs as one (datafusion-proto sends an n-ary UNION as binary ones).
fn flat(plan: &LogicalPlan) -> String {
    use datafusion::common::tree_node::Transformed;
    use datafusion::logical_expr::Union;
    let plan = plan
        .clone()
        .transform_up(|p| {
            let LogicalPlan::Union(u) = p else {
                return Ok(Transformed::no(p));
            };
            let mut inputs = vec![];
            for i in u.inputs {
                match i.as_ref() {
                    LogicalPlan::Union(inner) => inputs.extend(inner.inputs.iter().cloned()),
                    _ => inputs.push(i),
                }
            }
            Ok(Transformed::yes(LogicalPlan::Union(Union {
                inputs,
                schema: u.schema,
            })))
        })
        .unwrap()
        .data;
    let text = plan.display_indent_schema().to_string();
    text
}

fn exec_names(plan: &Arc<dyn ExecutionPlan>, into: &mut BTreeSet<String>) {
    into.insert(plan.name().to_string());
    for c in plan.children() {
        exec_names(c, into);
    }
}

fn sorted(batches: &[arrow::array::RecordBatch]) -> Vec<String> {
    let mut lines: Vec<String> = arrow::util::pretty::pretty_format_batches(batches)
        .unwrap()
        .to_string()
        .lines()
        .skip(3)
        .map(String::from)
        .collect();
    lines.sort();
    lines
}

/// Runs `f` on a runtime whose threads have deep stacks, as the binary's: plans are
/// (de)serialized recursively.
pub(crate) fn deep<F: std::future::Future>(make: impl FnOnce() -> F + Send + 'static) -> F::Output
where
    F::Output: Send + 'static,
{
    std::thread::Builder::new()
        .stack_size(32 << 20)
        .spawn(move || {
            tokio::runtime::Builder::new_multi_thread()
                .worker_threads(2)
                .thread_stack_size(32 << 20)
                .enable_all()
                .build()
                .unwrap()
                .block_on(make())
        })
        .unwrap()
        .join()
        .unwrap()
}

/// The sample graph written as Lance datasets in `dir`: its graph.toml.
async fn sample_on_lance(dir: &std::path::Path) -> std::path::PathBuf {
    let tables = lance_csr_datasets::sample::tables();
    crate::write_graph(dir, tables, &mut |_| {}).await.unwrap()
}

#[test]
fn every_graph_node_survives_the_codecs() {
    deep(every_graph_node_survives_the_codecs_);
}

async fn every_graph_node_survives_the_codecs_() {
    let dir = tempfile::tempdir().unwrap();
    let path = sample_on_lance(dir.path()).await;
    let options = GraphOptions {
        share_min_saved_work: Some(0),
        ..Default::default()
    };
    let g = Graph::open_with(&path, options).await.unwrap();
    g.register_for_cluster().unwrap();
    let logical_codec = GraphLogicalCodec::new();
    let physical_codec = GraphPhysicalCodec::default();
    let scheduler = crate::optimizer::session::cluster_state(Default::default()).unwrap();
    let ctx = g.task_ctx();
    let (mut seen, mut seen_exec) = (BTreeSet::new(), BTreeSet::new());
    for q in QUERIES {
        let (plan, _) = g.plan(q, &Params::new()).unwrap();
        let plan = g.optimize(&plan).unwrap();
        names(&plan, &mut seen);
        // Logical: the same plan back.
        let bytes = logical_plan_to_bytes_with_extension_codec(&plan, &logical_codec).unwrap();
        let back =
            logical_plan_from_bytes_with_extension_codec(&bytes, &ctx, &logical_codec).unwrap();
        assert_eq!(flat(&back), flat(&plan), "{q}");
        // Physical: planned as on a scheduler, decoded as on an executor, the same plan, and
        // it runs to the in-process answer.
        let physical = DistributedQueryPlanner::default()
            .create_physical_plan(&back, &scheduler)
            .await
            .unwrap();
        exec_names(&physical, &mut seen_exec);
        let bytes =
            physical_plan_to_bytes_with_extension_codec(physical.clone(), &physical_codec).unwrap();
        let decoded =
            physical_plan_from_bytes_with_extension_codec(&bytes, &ctx, &physical_codec).unwrap();
        assert_eq!(
            displayable(decoded.as_ref()).indent(true).to_string(),
            displayable(physical.as_ref()).indent(true).to_string(),
            "{q}"
        );
        let got = collect(decoded, ctx.clone()).await.unwrap();
        let want = g.query(q, &Params::new()).await.unwrap();
        assert_eq!(sorted(&got), sorted(&want.batches), "{q}");
    }
    for n in [
        "CsrExpand",
        "CsrIntersect",
        "NodeLookup",
        "VarLengthExpand",
        "CountPaths",
        "SharedSubplan",
        "ConstRow",
    ] {
        assert!(seen.contains(n), "no plan had {n}: {seen:?}");
    }
    for n in [
        "CsrExpandExec",
        "CsrIntersectExec",
        "NodeLookupExec",
        "VarLengthExec",
        "CountPathsExec",
        "SharedSubplanExec",
        "FragmentScanExec",
    ] {
        assert!(seen_exec.contains(n), "no plan had {n}: {seen_exec:?}");
    }
}

/// A plan made for other states of the tables is refused, naming the table.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_plan_for_other_table_versions_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let path = sample_on_lance(dir.path()).await;
    let g = Graph::open(&path).await.unwrap();
    let name = g.register_for_cluster().unwrap();
    let mut versions = g.catalog().versions();
    versions[0] = Some(versions[0].unwrap_or(0) ^ 1);
    super::registry::forget(&name);
    let state = crate::optimizer::session::cluster_state(Default::default()).unwrap();
    let e = super::registry::resolve(&name, &versions, &state)
        .await
        .unwrap_err()
        .to_string();
    assert!(e.contains("changed since the plan was made"), "{e}");
    assert!(e.contains("node table"), "{e}");
    // The right versions open it again.
    let ok = super::registry::resolve(&name, &g.catalog().versions(), &state).await;
    assert!(ok.is_ok());
}
