//! The operators on hand-built inputs: how input batches are split, `fetch`, empty input and a
//! consumer that stops early. End-to-end answers are the integration suites' job.

use super::{limited_stream, TARGET_BATCH_ROWS};
use crate::session::Graph;
use crate::Params;
use arrow::array::{Int64Array, RecordBatch, UInt32Array};
use arrow::datatypes::{DataType, Field, Schema, SchemaRef};
use datafusion::datasource::memory::MemorySourceConfig;
use datafusion::physical_plan::memory::MemoryStream;
use datafusion::physical_plan::{collect, ExecutionPlan};
use futures::StreamExt;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

fn ints(n: usize) -> (SchemaRef, RecordBatch) {
    let schema = Arc::new(Schema::new(vec![Field::new("x", DataType::Int64, false)]));
    let b = RecordBatch::try_new(
        schema.clone(),
        vec![Arc::new(Int64Array::from_iter_values(0..n as i64))],
    )
    .unwrap();
    (schema, b)
}

/// Every row `fanout` times, counting the calls.
fn fan_out(
    fanout: u32,
    calls: Arc<AtomicUsize>,
) -> impl FnMut(&RecordBatch, Option<usize>) -> datafusion::common::Result<RecordBatch> + Send {
    move |b, _| {
        calls.fetch_add(1, Ordering::Relaxed);
        let idx: UInt32Array = (0..b.num_rows() as u32)
            .flat_map(|i| std::iter::repeat_n(i, fanout as usize))
            .collect();
        Ok(arrow::compute::take_record_batch(b, &idx)?)
    }
}

fn limited(
    batches: Vec<RecordBatch>,
    schema: SchemaRef,
    fetch: Option<usize>,
    fanout: u32,
    calls: Arc<AtomicUsize>,
) -> datafusion::physical_plan::SendableRecordBatchStream {
    let input = MemoryStream::try_new(batches, schema.clone(), None).unwrap();
    limited_stream(
        Box::pin(input),
        schema,
        fetch,
        datafusion::physical_plan::metrics::Time::new(),
        fan_out(fanout, calls),
    )
}

#[tokio::test]
async fn limited_stream_sizes_output_batches_from_the_fan_out() {
    let (schema, b) = ints(10_000);
    let calls = Arc::new(AtomicUsize::new(0));
    let out: Vec<RecordBatch> = limited(vec![b], schema, None, 50, calls)
        .map(|b| b.unwrap())
        .collect()
        .await;
    let total: usize = out.iter().map(|b| b.num_rows()).sum();
    assert_eq!(total, 500_000);
    // After the first slice (one row) the slices aim at TARGET_BATCH_ROWS output rows.
    assert!(out.len() > 1);
    assert!(
        out.iter().all(|b| b.num_rows() <= TARGET_BATCH_ROWS),
        "{:?}",
        out.iter().map(|b| b.num_rows()).collect::<Vec<_>>()
    );
    assert!(out[1..out.len() - 1]
        .iter()
        .all(|b| b.num_rows() >= TARGET_BATCH_ROWS / 2));
}

#[tokio::test]
async fn limited_stream_stops_at_fetch_and_on_empty_input() {
    let (schema, b) = ints(10_000);
    let calls = Arc::new(AtomicUsize::new(0));
    let out: Vec<RecordBatch> = limited(vec![b.clone()], schema.clone(), Some(7), 3, calls.clone())
        .map(|b| b.unwrap())
        .collect()
        .await;
    assert_eq!(out.iter().map(|b| b.num_rows()).sum::<usize>(), 7);
    // One-row slices first: a handful of calls, not one per input row.
    assert!(calls.load(Ordering::Relaxed) <= 3, "{calls:?}");

    let calls = Arc::new(AtomicUsize::new(0));
    let empty = b.slice(0, 0);
    let out: Vec<RecordBatch> = limited(vec![empty], schema.clone(), None, 3, calls.clone())
        .map(|b| b.unwrap())
        .collect()
        .await;
    assert!(out.is_empty());
    let out: Vec<RecordBatch> = limited(vec![], schema, None, 3, calls.clone())
        .map(|b| b.unwrap())
        .collect()
        .await;
    assert!(out.is_empty());
    assert_eq!(calls.load(Ordering::Relaxed), 0);
}

#[tokio::test]
async fn limited_stream_does_no_work_after_the_consumer_stops() {
    let (schema, b) = ints(100_000);
    let calls = Arc::new(AtomicUsize::new(0));
    let mut s = limited(vec![b], schema, None, 10, calls.clone());
    let first = s.next().await.unwrap().unwrap();
    assert!(first.num_rows() > 0);
    let after_first = calls.load(Ordering::Relaxed);
    drop(s);
    assert_eq!(calls.load(Ordering::Relaxed), after_first);
    assert!(after_first <= 2, "{after_first}");
}

/// A slice that spends the budget of work done in place is expanded again on the blocking
/// pool, whole, and so is every slice after it: every row once, in order.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_slice_past_its_budget_runs_again_on_the_blocking_pool() {
    use arrow::array::AsArray;
    use arrow::datatypes::Int64Type;
    let (schema, b) = ints(100);
    let calls = Arc::new(AtomicUsize::new(0));
    let c = calls.clone();
    let input = MemoryStream::try_new(vec![b], schema.clone(), None).unwrap();
    let s = super::limited_stream_offloading(
        Box::pin(input),
        schema,
        None,
        datafusion::physical_plan::metrics::Time::new(),
        move |b, _, cp| {
            c.fetch_add(1, Ordering::Relaxed);
            for &x in b.column(0).as_primitive::<Int64Type>().values().iter() {
                // The last rows each do more than a slice may do in place.
                let heavy = super::cancel::IN_POLL_UNITS as usize + 1;
                cp.tick(if x >= 97 { heavy } else { 1 })?;
            }
            Ok(b.clone())
        },
    );
    let out: Vec<RecordBatch> = s.map(|b| b.unwrap()).collect().await;
    let xs: Vec<i64> = out
        .iter()
        .flat_map(|b| b.column(0).as_primitive::<Int64Type>().values().to_vec())
        .collect();
    assert_eq!(xs, (0..100).collect::<Vec<i64>>());
    // The slice with the heavy rows was expanded twice.
    assert!(calls.load(Ordering::Relaxed) >= 3, "{calls:?}");
}

/// The sample graph, the physical plan of `q` and its first operator named `name`.
async fn operator(q: &str, name: &str) -> (Graph, Arc<dyn ExecutionPlan>) {
    let g = Graph::sample().await.unwrap();
    let plan = g.physical_plan(q, &Params::new()).await.unwrap();
    let mut stack = vec![plan];
    while let Some(p) = stack.pop() {
        if p.name() == name {
            return (g, p);
        }
        stack.extend(p.children().into_iter().cloned());
    }
    panic!("no {name} in the plan of {q}");
}

/// `op` over its own input's rows, re-split into batches of `size` rows, with `fetch`;
/// the output rows sorted, as text.
async fn over(
    g: &Graph,
    op: &Arc<dyn ExecutionPlan>,
    size: usize,
    fetch: Option<usize>,
) -> Vec<String> {
    let input = op.children()[0].clone();
    let rows = collect(input.clone(), g.task_ctx()).await.unwrap();
    let all = arrow::compute::concat_batches(&input.schema(), &rows).unwrap();
    let parts: Vec<RecordBatch> = (0..all.num_rows())
        .step_by(size.max(1))
        .map(|i| all.slice(i, size.min(all.num_rows() - i)))
        .collect();
    let parts = if size == 0 { vec![] } else { parts };
    let source = MemorySourceConfig::try_new_exec(&[parts], input.schema(), None).unwrap();
    let mut node = op.clone().with_new_children(vec![source]).unwrap();
    if fetch.is_some() {
        node = node.with_fetch(fetch).expect("absorbs limits");
    }
    let out = collect(node, g.task_ctx()).await.unwrap();
    let mut lines: Vec<String> = out
        .iter()
        .flat_map(|b| {
            (0..b.num_rows()).map(move |r| {
                (0..b.num_columns())
                    .map(|c| crate::output::value::render_cell(b.column(c).as_ref(), r, true))
                    .collect::<Vec<_>>()
                    .join("|")
            })
        })
        .collect();
    lines.sort();
    lines
}

async fn check_batching_fetch_and_empty_input(q: &str, name: &str) {
    let (g, op) = operator(q, name).await;
    let whole = over(&g, &op, usize::MAX, None).await;
    assert!(whole.len() > 2, "{q}: {whole:?}");
    for size in [1, 2, 3] {
        assert_eq!(
            over(&g, &op, size, None).await,
            whole,
            "{q}, batches of {size}"
        );
    }
    assert!(over(&g, &op, 0, None).await.is_empty(), "{q}: empty input");
    // Any `fetch` rows of the answer.
    for fetch in [1, 2] {
        let some = over(&g, &op, 1, Some(fetch)).await;
        assert_eq!(some.len(), fetch, "{q}: fetch {fetch}");
        assert!(some.iter().all(|r| whole.contains(r)), "{q}: {some:?}");
    }
}

#[tokio::test]
async fn csr_expand_exec_on_hand_split_input() {
    check_batching_fetch_and_empty_input(
        "MATCH (a:Person)-[k:KNOWS]->(b:Person) RETURN a.id, k.creationDate, b.firstName",
        "CsrExpandExec",
    )
    .await;
}

#[tokio::test]
async fn var_length_exec_on_hand_split_input() {
    check_batching_fetch_and_empty_input(
        "MATCH (a:Person)-[r:KNOWS*1..3]->(b:Person) RETURN a.id, size(r), b.id",
        "VarLengthExec",
    )
    .await;
}

/// Each of our operators, given the wrong number of children, answers with an internal
/// error (a broken plan rewrite), not a panic.
#[tokio::test]
async fn a_wrong_number_of_children_is_an_error() {
    let g = Graph::sample().await.unwrap();
    let queries = [
        "MATCH (a:Person {id: 1})-[:KNOWS]->(b) RETURN b.id",
        "MATCH (a:Person)-[:KNOWS*1..2]->(b) RETURN b.id",
        "MATCH (a:Person)-[:KNOWS]->(b)-[:KNOWS]->(c) RETURN count(*)",
        "MATCH (a:Person)-[:KNOWS]->(b)-[:KNOWS]->(c)-[:KNOWS]->(a) RETURN a.id, b.id",
        "MATCH (a:Person {id: 1}) RETURN a.firstName",
    ];
    let ours = [
        "CsrExpandExec",
        "VarLengthExec",
        "CountPathsExec",
        "CsrIntersectExec",
        "NodeLookupExec",
        "ConstRowExec",
    ];
    let mut seen = std::collections::BTreeSet::new();
    for q in queries {
        let plan = g.physical_plan(q, &Params::new()).await.unwrap();
        let mut stack = vec![plan];
        while let Some(p) = stack.pop() {
            stack.extend(p.children().into_iter().cloned());
            if !ours.contains(&p.name()) {
                continue;
            }
            seen.insert(p.name().to_string());
            let child = p.children().first().map(|c| (*c).clone());
            let wrong = match child {
                Some(c) => vec![c.clone(), c],
                None => vec![p.clone()],
            };
            let e = p.clone().with_new_children(wrong).unwrap_err();
            assert!(e.to_string().contains("takes"), "{}: {e}", p.name());
        }
    }
    assert_eq!(seen.len(), ours.len(), "operators seen: {seen:?}");
}
