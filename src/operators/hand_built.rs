//! A hand-built graph for the operators' and the rules' own tests: three persons, three
//! `KNOWS` edges, hops over it built as logical nodes (as the planner would make them),
//! planned physically by our query planner and run, with no query, binder or catalog.

use crate::csr::{CsrIndex, NodeKeys, TableColumns};
use crate::operators::csr_expand::{CsrData, CsrExpand, TakeSpec};
use crate::operators::var_length::{VarHop, VarLengthExpand};
use arrow::array::{Int64Array, RecordBatch};
use arrow::datatypes::{DataType, Field, Schema};
use datafusion::catalog::MemTable;
use datafusion::logical_expr::{col, lit, Extension, LogicalPlan, LogicalPlanBuilder};
use std::sync::Arc;

pub(crate) fn table(cols: &[(&str, Vec<i64>)]) -> Arc<TableColumns> {
    let schema = Arc::new(Schema::new(
        cols.iter()
            .map(|(n, _)| Field::new(*n, DataType::Int64, false))
            .collect::<Vec<_>>(),
    ));
    let arrays = cols
        .iter()
        .map(|(_, v)| Arc::new(Int64Array::from(v.clone())) as _)
        .collect();
    let batch = RecordBatch::try_new(schema.clone(), arrays).unwrap();
    let provider = Arc::new(MemTable::try_new(schema, vec![vec![batch]]).unwrap());
    Arc::new(TableColumns::new(provider, "hand-built"))
}

pub(crate) fn take(var: &str, cols: &[&str], key: Option<usize>) -> TakeSpec {
    TakeSpec {
        var: var.into(),
        all: cols
            .iter()
            .map(|c| (c.to_string(), format!("{var}__{c}"), DataType::Int64))
            .collect(),
        take: (0..cols.len()).collect(),
        key,
    }
}

/// Persons 1, 2, 3 with an `age`, `KNOWS` edges 1->2, 1->3, 2->3 with a `since`: built once,
/// so every hop over it shares its keys (as hops over one graph do).
pub(crate) static GRAPH: std::sync::LazyLock<CsrData> = std::sync::LazyLock::new(|| {
    let ids = Int64Array::from(vec![1, 2, 3]);
    let keys = Arc::new(NodeKeys::from_keys(&ids).unwrap());
    let (src, dst) = (
        Int64Array::from(vec![1, 1, 2]),
        Int64Array::from(vec![2, 3, 3]),
    );
    let index = Arc::new(CsrIndex::build(&src, &dst, &keys, &keys, None).unwrap());
    CsrData {
        index,
        near_keys: keys.clone(),
        far_keys: keys,
        edges: table(&[
            ("src", vec![1, 1, 2]),
            ("dst", vec![2, 3, 3]),
            ("since", vec![1, 5, 9]),
            ("_rowid", vec![0, 1, 2]),
        ]),
        target: table(&[("id", vec![1, 2, 3]), ("age", vec![30, 40, 50])]),
    }
});

/// `(a)-[k:KNOWS]->(b)` of [`GRAPH`] from the keys of a one-column input `a__id` (1 and 2).
pub(crate) fn hop() -> LogicalPlan {
    let data = GRAPH.clone();
    let input = LogicalPlanBuilder::values(vec![vec![lit(1i64)], vec![lit(2i64)]])
        .unwrap()
        .project(vec![col("column1").alias("a__id")])
        .unwrap()
        .build()
        .unwrap();
    let node = CsrExpand::try_new(
        input,
        "a__id".into(),
        "KNOWS".into(),
        0,
        vec![false],
        take("k", &["src", "dst", "since"], None),
        take("b", &["id", "age"], Some(0)),
        None,
        data,
    )
    .unwrap();
    LogicalPlan::Extension(Extension {
        node: Arc::new(node),
    })
}

/// `plan` executed as it is (planned physically, not optimized again): its rows as text.
pub(crate) fn run(plan: LogicalPlan) -> Vec<String> {
    let rt = tokio::runtime::Runtime::new().unwrap();
    rt.block_on(async {
        let options = crate::config::options::GraphOptions::default();
        let ctx = crate::optimizer::session::session(&options, Default::default()).unwrap();
        let state = ctx.state();
        let physical = state
            .query_planner()
            .create_physical_plan(&plan, &state)
            .await
            .unwrap();
        let batches = datafusion::physical_plan::collect(physical, ctx.task_ctx())
            .await
            .unwrap();
        let mut rows = Vec::new();
        for b in &batches {
            for i in 0..b.num_rows() {
                let cells: Vec<String> = (b.columns().iter())
                    .map(|c| arrow::util::display::array_value_to_string(c, i).unwrap())
                    .collect();
                rows.push(cells.join(","));
            }
        }
        rows
    })
}

/// A hop of `hop()`'s graph over `input` from the node in column `key` (walked backwards
/// when `reverse`), the relationship named `rel`; a closing hop (onto the bound `close`)
/// takes no far columns.
pub(crate) fn expand(
    input: LogicalPlan,
    key: &str,
    reverse: bool,
    rel: &str,
    far: &str,
    close: Option<&str>,
) -> LogicalPlan {
    let data = GRAPH.clone();
    let mut target = take(far, &["id", "age"], Some(0));
    if close.is_some() {
        target.take.clear();
    }
    let node = CsrExpand::try_new(
        input,
        key.into(),
        "KNOWS".into(),
        0,
        vec![reverse],
        take(rel, &["src", "dst"], None),
        target,
        close.map(String::from),
        data,
    )
    .unwrap();
    LogicalPlan::Extension(Extension {
        node: Arc::new(node),
    })
}

/// `(a)-[k:KNOWS*1..3]->(b)` of [`GRAPH`] from `hop()`'s input.
pub(crate) fn traversal() -> LogicalPlan {
    traversal_of((1, Some(3)))
}

/// `(a)-[k:KNOWS*min..max]->(b)` of [`GRAPH`] from `hop()`'s input.
pub(crate) fn traversal_of(length: (u64, Option<u64>)) -> LogicalPlan {
    let LogicalPlan::Extension(e) = hop() else {
        unreachable!("hop() is an extension")
    };
    let input = e.node.inputs()[0].clone();
    let data = GRAPH.clone();
    let hops = vec![VarHop {
        rel: 0,
        rel_type: "KNOWS".into(),
        from: 0,
        to: 0,
        reverse: false,
        skip_self_loops: false,
        index: data.index.clone(),
        edges: data.edges.clone(),
    }];
    let node = VarLengthExpand::try_new(
        input,
        "a__id".into(),
        hops,
        vec!["Person".into()],
        (0, 0),
        length,
        "k__#eids".into(),
        take("b", &["id", "age"], Some(0)),
        data.near_keys.clone(),
        data.target.clone(),
    )
    .unwrap();
    LogicalPlan::Extension(Extension {
        node: Arc::new(node),
    })
}

/// `plan` planned physically by our query planner, not optimized (the operators as the
/// logical nodes ask), and a context to run it in.
pub(crate) async fn physical(
    plan: &LogicalPlan,
) -> (
    Arc<dyn datafusion::physical_plan::ExecutionPlan>,
    Arc<datafusion::execution::TaskContext>,
) {
    let options = crate::config::options::GraphOptions::default();
    let ctx = crate::optimizer::session::session(&options, Default::default()).unwrap();
    let state = ctx.state();
    let physical = state
        .query_planner()
        .create_physical_plan(plan, &state)
        .await
        .unwrap();
    (physical, ctx.task_ctx())
}

/// The first operator named `name` in `plan`, depth first.
pub(crate) fn find(
    plan: &Arc<dyn datafusion::physical_plan::ExecutionPlan>,
    name: &str,
) -> Arc<dyn datafusion::physical_plan::ExecutionPlan> {
    let mut stack = vec![plan.clone()];
    while let Some(p) = stack.pop() {
        if p.name() == name {
            return p;
        }
        stack.extend(p.children().into_iter().cloned());
    }
    panic!("no {name} in the plan");
}

/// Every row of `batches` as text (cells joined by `,`), sorted.
pub(crate) fn lines(batches: &[RecordBatch]) -> Vec<String> {
    let mut rows = Vec::new();
    for b in batches {
        for i in 0..b.num_rows() {
            let cells: Vec<String> = (b.columns().iter())
                .map(|c| arrow::util::display::array_value_to_string(c, i).unwrap())
                .collect();
            rows.push(cells.join(","));
        }
    }
    rows.sort();
    rows
}
