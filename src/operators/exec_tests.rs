//! Our execs on their own: each built from a hand-made logical node over the hand-built graph
//! (`hand_built`: persons 1, 2, 3 aged 30, 40, 50; `KNOWS` 1->2 since 1, 1->3 since 5, 2->3
//! since 9), its input replaced by in-memory batches: every answer worked out by hand, and the
//! same however the input is split into batches, for empty input, a key the graph lacks, a
//! LIMIT absorbed from above, and a consumer that stops reading.

use super::hand_built::{expand, find, hop, lines, physical, traversal};
use crate::optimizer::test_util::apply_plan;
use arrow::array::{Int64Array, RecordBatch};
use arrow::datatypes::SchemaRef;
use datafusion::datasource::memory::MemorySourceConfig;
use datafusion::execution::TaskContext;
use datafusion::logical_expr::{lit, Expr, LogicalPlan, LogicalPlanBuilder};
use datafusion::physical_plan::{collect, ExecutionPlan};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

/// The exec named `name` in `plan` planned physically, and a context to run it.
async fn exec_of(plan: &LogicalPlan, name: &str) -> (Arc<dyn ExecutionPlan>, Arc<TaskContext>) {
    let (physical, ctx) = physical(plan).await;
    (find(&physical, name), ctx)
}

/// `op` over `parts` (batches of its input's schema) as its only input, with `fetch`: its
/// rows as text, sorted.
async fn over(
    op: &Arc<dyn ExecutionPlan>,
    ctx: &Arc<TaskContext>,
    parts: Vec<RecordBatch>,
    fetch: Option<usize>,
) -> Vec<String> {
    let schema = op.children()[0].schema();
    let source = MemorySourceConfig::try_new_exec(&[parts], schema, None).unwrap();
    let mut node = op.clone().with_new_children(vec![source]).unwrap();
    if fetch.is_some() {
        node = node.with_fetch(fetch).expect("absorbs limits");
    }
    lines(&collect(node, ctx.clone()).await.unwrap())
}

/// Batches of one `Int64` column (`schema`'s only field): one per slice of `keys`.
fn keys(schema: &SchemaRef, parts: &[&[i64]]) -> Vec<RecordBatch> {
    (parts.iter())
        .map(|k| {
            RecordBatch::try_new(schema.clone(), vec![Arc::new(Int64Array::from(k.to_vec()))])
                .unwrap()
        })
        .collect()
}

/// `op` over the keys cut into batches in each way of `splits`: every way gives `want`.
async fn every_split_gives(
    op: &Arc<dyn ExecutionPlan>,
    ctx: &Arc<TaskContext>,
    splits: &[&[&[i64]]],
    want: &[&str],
) {
    let schema = op.children()[0].schema();
    for parts in splits {
        assert_eq!(
            over(op, ctx, keys(&schema, parts), None).await,
            want,
            "{parts:?}"
        );
    }
}

/// The rows of `op` over its own input's rows, cut into batches of `size` rows.
async fn split(op: &Arc<dyn ExecutionPlan>, ctx: &Arc<TaskContext>, size: usize) -> Vec<String> {
    let input = op.children()[0].clone();
    let rows = collect(input.clone(), ctx.clone()).await.unwrap();
    let all = arrow::compute::concat_batches(&input.schema(), &rows).unwrap();
    let parts = (0..all.num_rows())
        .step_by(size)
        .map(|i| all.slice(i, size.min(all.num_rows() - i)))
        .collect();
    over(op, ctx, parts, None).await
}

#[tokio::test]
async fn csr_expand_exec_walks_each_key_out_and_back() {
    let (op, ctx) = exec_of(&hop(), "CsrExpandExec").await;
    let schema = op.children()[0].schema();
    // a, k.src, k.dst, k.since, b, b.age.
    let out = ["1,1,2,1,2,40", "1,1,3,5,3,50", "2,2,3,9,3,50"];
    // 3 has no edge out, 99 is no node; one batch, a row per batch, an empty batch between.
    let splits: [&[&[i64]]; 3] = [
        &[&[1, 2, 3, 99]],
        &[&[1], &[2], &[3], &[99]],
        &[&[3, 1], &[], &[99, 2]],
    ];
    every_split_gives(&op, &ctx, &splits, &out).await;
    assert!(over(&op, &ctx, vec![], None).await.is_empty());
    assert!(over(&op, &ctx, keys(&schema, &[&[3, 99]]), None)
        .await
        .is_empty());
    assert_eq!(
        over(&op, &ctx, keys(&schema, &[&[2]]), None).await,
        ["2,2,3,9,3,50"]
    );
    // A LIMIT above: that many of the rows, however the input comes.
    for fetch in [1, 2] {
        let some = over(&op, &ctx, keys(&schema, &[&[1], &[2]]), Some(fetch)).await;
        assert_eq!(some.len(), fetch);
        assert!(some.iter().all(|r| out.contains(&r.as_str())), "{some:?}");
    }
    // Walked backwards (incoming): 3 from 1 and from 2, 2 from 1, nothing into 1.
    let back = expand(hop_input(), "a__id", true, "r", "c", None);
    let (op, ctx) = exec_of(&back, "CsrExpandExec").await;
    assert_eq!(
        over(&op, &ctx, keys(&schema, &[&[1, 2], &[3]]), None).await,
        ["2,1,2,1,30", "3,1,3,1,30", "3,2,3,2,40"]
    );
}

/// `hop()`'s input: `a__id` 1 and 2.
fn hop_input() -> LogicalPlan {
    hop().inputs()[0].clone()
}

#[tokio::test]
async fn var_length_exec_finds_every_path_from_each_key() {
    let (op, ctx) = exec_of(&traversal(), "VarLengthExec").await;
    let schema = op.children()[0].schema();
    // From 1: 1->2, 1->3, 1->2->3; from 2: 2->3; from 3 and 99: none. The far node and its
    // age after the path's relationships.
    let ends = |rows: Vec<String>| -> Vec<String> {
        rows.iter()
            .map(|r| {
                let cells: Vec<&str> = r.split(',').collect();
                format!("{}->{}", cells[0], cells[cells.len() - 2])
            })
            .collect()
    };
    let want = ["1->2", "1->3", "1->3", "2->3"];
    for parts in [
        vec![&[1, 2, 3, 99][..]],
        vec![&[99][..], &[2], &[], &[1], &[3]],
    ] {
        let mut got = ends(over(&op, &ctx, keys(&schema, &parts), None).await);
        got.sort();
        assert_eq!(got, want, "{parts:?}");
    }
    assert!(over(&op, &ctx, vec![], None).await.is_empty());
    let one = over(&op, &ctx, keys(&schema, &[&[1, 2]]), Some(1)).await;
    assert_eq!(one.len(), 1);
}

#[tokio::test]
async fn csr_intersect_exec_closes_each_row_onto_its_bound_node() {
    // (a)-[k]->(b)-[r2]->(c)<-[r3]-(a): the triangle 1 -> 2 -> 3 <- 1.
    let bc = expand(hop(), "b__id", false, "r2", "c", None);
    let closing = expand(bc, "c__id", true, "r3", "a", Some("a__id"));
    let (fused, changed) = apply_plan(crate::optimizer::IntersectCycles::new(), closing);
    assert!(changed);
    let (op, ctx) = exec_of(&fused, "CsrIntersectExec").await;
    let whole = split(&op, &ctx, usize::MAX).await;
    assert_eq!(whole.len(), 1, "{whole:?}");
    assert!(
        whole[0].starts_with("1,1,2,1,2,40,2,3,3,50,1,3"),
        "{whole:?}"
    );
    for size in [1, 2] {
        assert_eq!(split(&op, &ctx, size).await, whole, "batches of {size}");
    }
    assert!(over(&op, &ctx, vec![], None).await.is_empty());
}

/// The `CountPathsExec` that counting `hop()`'s paths grouped by `group` becomes.
async fn count_paths_over_hop(group: Vec<Expr>) -> (Arc<dyn ExecutionPlan>, Arc<TaskContext>) {
    let plan = LogicalPlanBuilder::from(hop())
        .aggregate(
            group,
            vec![datafusion::functions_aggregate::expr_fn::count(lit(1i64)).alias("n")],
        )
        .unwrap()
        .build()
        .unwrap();
    let (counted, changed) = apply_plan(crate::optimizer::FactorizeCounts::new(), plan);
    assert!(changed);
    exec_of(&counted, "CountPathsExec").await
}

#[tokio::test]
async fn count_paths_exec_counts_each_roots_paths() {
    let (op, ctx) = count_paths_over_hop(vec![]).await;
    let schema = op.children()[0].schema();
    let total = |rows: Vec<String>| -> i64 { rows.iter().map(|r| r.parse::<i64>().unwrap()).sum() };
    // Two edges out of 1, one out of 2, none out of 3 or 99: per batch or at once.
    for parts in [
        vec![&[1, 2, 3, 99][..]],
        vec![&[1][..], &[], &[2, 3], &[99]],
    ] {
        assert_eq!(total(over(&op, &ctx, keys(&schema, &parts), None).await), 3);
    }
    assert_eq!(total(over(&op, &ctx, vec![], None).await), 0);
    assert_eq!(
        total(over(&op, &ctx, keys(&schema, &[&[3, 99]]), None).await),
        0
    );
    // Grouped by the root: each root's own count, however the roots come.
    let (op, ctx) = count_paths_over_hop(vec![datafusion::logical_expr::col("a__id")]).await;
    for parts in [vec![&[1, 2, 3][..]], vec![&[2][..], &[], &[3, 1]]] {
        let rows = over(&op, &ctx, keys(&schema, &parts), None).await;
        let has = |r: &str| rows.iter().any(|x| x == r);
        assert!(has("1,2") && has("2,1"), "{rows:?}");
        assert!(
            rows.iter().all(|r| !r.starts_with("3,") || r == "3,0"),
            "{rows:?}"
        );
    }
}

/// An input of the keys 1, 2 and 3 (two batches; `endless`: batches of 1 and 2 for as long
/// as it is read), counting the batches it makes and the times it is run.
#[derive(Debug)]
struct CountedKeys {
    schema: SchemaRef,
    endless: bool,
    made: Arc<AtomicUsize>,
    runs: Arc<AtomicUsize>,
}

impl datafusion::physical_plan::streaming::PartitionStream for CountedKeys {
    fn schema(&self) -> &SchemaRef {
        &self.schema
    }

    fn execute(&self, _: Arc<TaskContext>) -> datafusion::execution::SendableRecordBatchStream {
        use futures::StreamExt;
        self.runs.fetch_add(1, Ordering::SeqCst);
        let (schema, made) = (self.schema.clone(), self.made.clone());
        let batch = move |k: &[i64]| {
            made.fetch_add(1, Ordering::SeqCst);
            Ok(keys(&schema, &[k]).remove(0))
        };
        let batches = match self.endless {
            true => futures::stream::repeat_with(move || batch(&[1, 2])).boxed(),
            false => futures::stream::iter([batch(&[1, 2]), batch(&[3])]).boxed(),
        };
        Box::pin(
            datafusion::physical_plan::stream::RecordBatchStreamAdapter::new(
                self.schema.clone(),
                batches,
            ),
        )
    }
}

/// A [`CountedKeys`] input as an exec, with its counts of batches made and of runs.
fn counted_keys(
    schema: &SchemaRef,
    endless: bool,
) -> (
    datafusion::physical_plan::streaming::StreamingTableExec,
    Arc<AtomicUsize>,
    Arc<AtomicUsize>,
) {
    let (made, runs) = (Arc::default(), Arc::default());
    let source = CountedKeys {
        schema: schema.clone(),
        endless,
        made: Arc::clone(&made),
        runs: Arc::clone(&runs),
    };
    let exec = datafusion::physical_plan::streaming::StreamingTableExec::try_new(
        schema.clone(),
        vec![Arc::new(source)],
        None,
        vec![],
        false,
        None,
    )
    .unwrap();
    (exec, made, runs)
}

/// A consumer that stops reading stops the work: after the stream is dropped, its input
/// is read no further (each of our hop operators).
#[tokio::test]
async fn a_dropped_stream_reads_its_input_no_further() {
    use futures::StreamExt;
    let (expand_op, ctx) = exec_of(&hop(), "CsrExpandExec").await;
    let (var_op, _) = exec_of(&traversal(), "VarLengthExec").await;
    for op in [expand_op, var_op] {
        let schema = op.children()[0].schema();
        let (source, made, _) = counted_keys(&schema, true);
        let node = op
            .clone()
            .with_new_children(vec![Arc::new(source)])
            .unwrap();
        let mut stream = node.execute(0, ctx.clone()).unwrap();
        let first = stream.next().await.unwrap().unwrap();
        assert!(first.num_rows() > 0, "{}", op.name());
        drop(stream);
        let after = made.load(Ordering::SeqCst);
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
        assert_eq!(made.load(Ordering::SeqCst), after, "{}", op.name());
        // A batch of output takes a bounded part of the endless input.
        assert!(after < 10_000, "{}: {after}", op.name());
    }
}

/// `NodeLookup` of the persons' ages from `input`'s `a__id`.
fn lookup(input: LogicalPlan, keys_exist: bool) -> LogicalPlan {
    let g = super::hand_built::GRAPH.clone();
    let node = super::node_lookup::NodeLookup::try_new(
        input,
        "a__id".into(),
        "Person".into(),
        super::hand_built::take("a", &["id", "age"], Some(0)),
        g.near_keys.clone(),
        g.target.clone(),
        keys_exist,
    )
    .unwrap();
    LogicalPlan::Extension(datafusion::logical_expr::Extension {
        node: Arc::new(node),
    })
}

#[tokio::test]
async fn node_lookup_exec_takes_each_nodes_columns_and_drops_what_is_no_node() {
    let (op, ctx) = exec_of(&lookup(hop_input(), false), "NodeLookupExec").await;
    let schema = op.children()[0].schema();
    let out = ["1,1,30", "2,2,40", "3,3,50"];
    let splits: [&[&[i64]]; 2] = [&[&[3, 99, 1, 2]], &[&[99], &[], &[1], &[2, 3]]];
    every_split_gives(&op, &ctx, &splits, &out).await;
    assert!(over(&op, &ctx, vec![], None).await.is_empty());
    assert!(over(&op, &ctx, keys(&schema, &[&[0, 99]]), None)
        .await
        .is_empty());
    // Keys known to be nodes or null: a null key is kept, with null columns.
    let nullable = LogicalPlanBuilder::values(vec![
        vec![lit(2i64)],
        vec![lit(datafusion::common::ScalarValue::Int64(None))],
    ])
    .unwrap()
    .project(vec![datafusion::logical_expr::col("column1").alias("a__id")])
    .unwrap()
    .build()
    .unwrap();
    let (op, ctx) = exec_of(&lookup(nullable, true), "NodeLookupExec").await;
    let whole = split(&op, &ctx, usize::MAX).await;
    assert_eq!(whole, [",,", "2,2,40"]);
    assert_eq!(split(&op, &ctx, 1).await, whole);
}

#[tokio::test]
async fn const_row_exec_makes_one_row_or_adds_its_columns_to_each() {
    use super::const_row::ConstRow;
    let node = |input: Option<LogicalPlan>| {
        let c = ConstRow::over(input, vec![("k".into(), lit(7i64))]).unwrap();
        LogicalPlan::Extension(datafusion::logical_expr::Extension { node: Arc::new(c) })
    };
    let (alone, ctx) = exec_of(&node(None), "ConstRowExec").await;
    assert_eq!(lines(&collect(alone, ctx).await.unwrap()), ["7"]);
    let (op, ctx) = exec_of(&node(Some(hop_input())), "ConstRowExec").await;
    let splits: [&[&[i64]]; 2] = [&[&[1, 2, 3]], &[&[1], &[], &[2, 3]]];
    every_split_gives(&op, &ctx, &splits, &["1,7", "2,7", "3,7"]).await;
    assert!(over(&op, &ctx, vec![], None).await.is_empty());
}

#[tokio::test]
async fn shared_subplan_exec_runs_its_subplan_once_for_every_reader() {
    use super::shared::SharedCell;
    use super::shared_exec::SharedSubplanExec;
    let schema = hop_input().schema().inner().clone();
    let (inner, _, runs) = counted_keys(&schema, false);
    let cell = Arc::new(SharedCell::default());
    let (_, ctx) = physical(&hop_input()).await;
    let readers: Vec<Arc<dyn ExecutionPlan>> = (0..3)
        .map(|_| {
            Arc::new(SharedSubplanExec::new(
                Arc::new(inner.clone()),
                1,
                3,
                cell.clone(),
            )) as _
        })
        .collect();
    for r in &readers {
        assert_eq!(
            lines(&collect(r.clone(), ctx.clone()).await.unwrap()),
            ["1", "2", "3"]
        );
    }
    assert_eq!(runs.load(Ordering::SeqCst), 1);
    // Another cell (the plan run again): the subplan runs again.
    let again = SharedSubplanExec::new(Arc::new(inner), 1, 1, Arc::default());
    assert_eq!(
        lines(&collect(Arc::new(again), ctx).await.unwrap()),
        ["1", "2", "3"]
    );
    assert_eq!(runs.load(Ordering::SeqCst), 2);
}
