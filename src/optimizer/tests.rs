//! The rules on small hand-built plans (a `CsrExpand` over a three-node graph, a filter or a
//! projection above it), applied through DataFusion's `Optimizer` with whole-plan snapshots:
//! each rule's own contract, independent of how the planner lowers a query.

use super::test_util::apply;
use super::{PruneCsrTargetColumns, PushCsrTargetFilters};
use crate::csr::{CsrIndex, NodeKeys, TableColumns};
use crate::operators::csr_expand::{CsrData, CsrExpand, TakeSpec};
use arrow::array::{Int64Array, RecordBatch};
use arrow::datatypes::{DataType, Field, Schema};
use datafusion::catalog::MemTable;
use datafusion::logical_expr::{col, lit, Extension, LogicalPlan, LogicalPlanBuilder};
use std::sync::Arc;

fn table(cols: &[(&str, Vec<i64>)]) -> Arc<TableColumns> {
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

fn take(var: &str, cols: &[&str], key: Option<usize>) -> TakeSpec {
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

/// `(a)-[k:KNOWS]->(b)` from the keys of a one-column input `a__id`: persons 1, 2, 3 with an
/// `age`, edges 1->2, 1->3, 2->3 with a `since`.
fn hop() -> LogicalPlan {
    let ids = Int64Array::from(vec![1, 2, 3]);
    let keys = Arc::new(NodeKeys::from_keys(&ids).unwrap());
    let (src, dst) = (
        Int64Array::from(vec![1, 1, 2]),
        Int64Array::from(vec![2, 3, 3]),
    );
    let index = Arc::new(CsrIndex::build(&src, &dst, &keys, &keys, None).unwrap());
    let data = CsrData {
        index,
        near_keys: keys.clone(),
        far_keys: keys,
        edges: table(&[
            ("src", vec![1, 1, 2]),
            ("dst", vec![2, 3, 3]),
            ("since", vec![1, 5, 9]),
        ]),
        target: table(&[("id", vec![1, 2, 3]), ("age", vec![30, 40, 50])]),
    };
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

#[test]
fn push_moves_far_node_and_edge_conjuncts_into_the_hop() {
    let plan = LogicalPlanBuilder::from(hop())
        .filter(
            col("b__age")
                .gt(lit(35i64))
                .and(col("k__since").lt(lit(9i64)))
                .and(col("a__id").lt(col("b__id"))),
        )
        .unwrap()
        .build()
        .unwrap();
    let (after, changed) = apply(PushCsrTargetFilters::default(), plan);
    assert!(changed);
    insta::assert_snapshot!(after, @r"
    Filter: a__id < b__id
      CsrExpand: key=a__id -> [k__src, k__dst], edges=3, take=b[b__id*, b__age], edge=k[k__src, k__dst, k__since], filter=b__age > Int64(35), edge_filter=k__since < Int64(9)
        Projection: column1 AS a__id
          Values: (Int64(1)), (Int64(2))
    ");
}

#[test]
fn push_leaves_a_filter_on_the_input_alone() {
    let plan = LogicalPlanBuilder::from(hop())
        .filter(col("a__id").gt(lit(1i64)))
        .unwrap()
        .build()
        .unwrap();
    let (after, changed) = apply(PushCsrTargetFilters::default(), plan);
    assert!(!changed);
    insta::assert_snapshot!(after, @r"
    Filter: a__id > Int64(1)
      CsrExpand: key=a__id -> [k__src, k__dst], edges=3, take=b[b__id*, b__age], edge=k[k__src, k__dst, k__since]
        Projection: column1 AS a__id
          Values: (Int64(1)), (Int64(2))
    ");
}

#[test]
fn prune_takes_only_the_far_columns_used_above() {
    let plan = LogicalPlanBuilder::from(hop())
        .project(vec![col("a__id"), col("b__age")])
        .unwrap()
        .build()
        .unwrap();
    let (after, changed) = apply(PruneCsrTargetColumns::default(), plan);
    assert!(changed);
    insta::assert_snapshot!(after, @r"
    Projection: a__id, b__age
      CsrExpand: key=a__id -> [k__src, k__dst], edges=3, take=b[b__age], edge=k[]
        Projection: column1 AS a__id
          Values: (Int64(1)), (Int64(2))
    ");
}
