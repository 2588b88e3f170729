//! The rules on small hand-built plans (hops over a three-node graph, a filter, projection or
//! aggregate above them), applied through DataFusion's `Optimizer` with whole-plan snapshots:
//! each rule's own contract, independent of how the planner lowers a query. Where a rule
//! replaces operators, both plans are also executed and must give the same rows.

use super::test_util::{apply, apply_plan};
use super::{
    FactorizeCounts, FoldConstants, IntersectCycles, PruneCsrTargetColumns, PruneSharedSubplans,
    PushCsrTargetFilters, SelectLabelBranch, ShareSubplans, VarLengthDistinctEnds,
};
use crate::csr::CsrIndex;
use crate::operators::csr_expand::{CsrData, CsrExpand, TakeSpec};
use crate::operators::hand_built::{expand, hop, run, table, take, traversal, GRAPH};
use arrow::array::Int64Array;
use datafusion::functions_aggregate::expr_fn::{count, count_distinct};
use datafusion::logical_expr::{col, lit, Expr, Extension, LogicalPlan, LogicalPlanBuilder};
use datafusion::scalar::ScalarValue;
use std::sync::Arc;

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

/// `hop()` with these filters inside it.
fn hop_with(target_filter: Option<Expr>, edge_filter: Option<Expr>) -> LogicalPlan {
    let LogicalPlan::Extension(e) = hop() else {
        unreachable!("hop() is an extension")
    };
    let mut node = e
        .node
        .as_any()
        .downcast_ref::<CsrExpand>()
        .expect("a CsrExpand")
        .clone();
    node.target_filter = target_filter;
    node.edge_filter = edge_filter;
    LogicalPlan::Extension(Extension {
        node: Arc::new(node),
    })
}

#[test]
fn fold_simplifies_the_filters_inside_a_hop() {
    let plan = hop_with(
        Some((col("b__age") + lit(0i64)).gt(lit(30i64)).and(lit(true))),
        Some(col("k__since").lt(lit(1i64) + lit(8i64))),
    );
    let (after, changed) = apply(FoldConstants::default(), plan);
    assert!(changed);
    insta::assert_snapshot!(after, @r"
    CsrExpand: key=a__id -> [k__src, k__dst], edges=3, take=b[b__id*, b__age], edge=k[k__src, k__dst, k__since], filter=b__age > Int64(30), edge_filter=k__since < Int64(9)
      Projection: column1 AS a__id
        Values: (Int64(1)), (Int64(2))
    ");
}

#[test]
fn fold_keeps_what_an_absorbing_identity_owes_to_its_operand() {
    // `x * 0` is 0 only where x is not null: never folded away.
    let plan = hop_with(Some((col("b__age") * lit(0i64)).eq(lit(0i64))), None);
    let (after, changed) = apply(FoldConstants::default(), plan);
    assert!(!changed);
    insta::assert_snapshot!(after, @r"
    CsrExpand: key=a__id -> [k__src, k__dst], edges=3, take=b[b__id*, b__age], edge=k[k__src, k__dst, k__since], filter=b__age * Int64(0) = Int64(0)
      Projection: column1 AS a__id
        Values: (Int64(1)), (Int64(2))
    ");
}

#[test]
fn factorize_counts_a_hop_per_root_without_its_rows() {
    let plan = counted(LogicalPlanBuilder::from(hop()));
    let (after, changed) = apply_plan(FactorizeCounts::new(), plan.clone());
    assert!(changed);
    insta::assert_snapshot!(after.display_indent(), @r"
    Projection: __agg0 AS __agg0
      CountPaths: key=a__id, arms=[[KNOWS]] -> __agg0
        Projection: column1 AS a__id
          Values: (Int64(1)), (Int64(2))
    ");
    // Roots 1 and 2: two edges out of 1, one out of 2.
    assert_eq!(run(plan), ["3"]);
    assert_eq!(run(after), ["3"]);
}

#[test]
fn factorize_leaves_other_aggregates_alone() {
    // A value of the far node's other property: the rows are needed.
    let plan = LogicalPlanBuilder::from(hop())
        .aggregate(
            Vec::<Expr>::new(),
            vec![count_distinct(col("b__age")).alias("__agg0")],
        )
        .unwrap()
        .build()
        .unwrap();
    let (after, changed) = apply(FactorizeCounts::new(), plan);
    assert!(!changed);
    insta::assert_snapshot!(after, @r"
    Aggregate: groupBy=[[]], aggr=[[count(DISTINCT b__age) AS __agg0]]
      CsrExpand: key=a__id -> [k__src, k__dst], edges=3, take=b[b__id*, b__age], edge=k[k__src, k__dst, k__since]
        Projection: column1 AS a__id
          Values: (Int64(1)), (Int64(2))
    ");
}

#[test]
fn intersect_fuses_a_closing_hop_with_the_hop_below() {
    // (a)-[k]->(b)-[r2]->(c)<-[r3]-(a): the triangle 1 -> 2 -> 3 <- 1 of hop()'s graph.
    let bc = expand(hop(), "b__id", false, "r2", "c", None);
    let closing = expand(bc, "c__id", true, "r3", "a", Some("a__id"));
    let plan = LogicalPlanBuilder::from(closing)
        .project(vec![col("a__id"), col("b__id"), col("c__id")])
        .unwrap()
        .build()
        .unwrap();
    let (after, changed) = apply_plan(IntersectCycles::new(), plan.clone());
    insta::assert_snapshot!(after.display_indent(), @r"
    Projection: a__id, b__id, c__id
      Projection: a__id, k__src, k__dst, k__since, b__id, b__age, r2__src, r2__dst, c__id, c__age, r3__src, r3__dst
        CsrIntersect: [CsrExpand: key=b__id -> [r2__src, r2__dst], edges=3, take=c[c__id*, c__age], edge=r2[r2__src, r2__dst]] and [CsrExpand: key=c__id -> [r3__src, r3__dst], edges=3, incoming, close=a__id, edge=r3[r3__src, r3__dst]]
          CsrExpand: key=a__id -> [k__src, k__dst], edges=3, take=b[b__id*, b__age], edge=k[k__src, k__dst, k__since]
            Projection: column1 AS a__id
              Values: (Int64(1)), (Int64(2))
    ");
    assert!(changed);
    assert_eq!(run(plan.clone()), ["1,2,3"]);
    assert_eq!(run(after), run(plan));
}

#[test]
fn share_evaluates_a_repeated_subtree_once() {
    // The same hop under both branches of a UNION ALL, each with another filter above.
    let branch = |age: i64| {
        LogicalPlanBuilder::from(hop())
            .filter(col("b__age").gt(lit(age)))
            .unwrap()
            .build()
            .unwrap()
    };
    let plan = LogicalPlanBuilder::from(branch(35))
        .union(branch(45))
        .unwrap()
        .build()
        .unwrap();
    let rule = ShareSubplans::new(Default::default(), 0);
    let (after, changed) = apply_plan(rule, plan.clone());
    insta::assert_snapshot!(after.display_indent(), @r"
    Union
      Filter: b__age > Int64(35)
        SharedSubplan: id=0, consumers=2, rows~2
          CsrExpand: key=a__id -> [k__src, k__dst], edges=3, take=b[b__id*, b__age], edge=k[k__src, k__dst, k__since]
            Projection: column1 AS a__id
              Values: (Int64(1)), (Int64(2))
      Filter: b__age > Int64(45)
        SharedSubplan: id=0, consumers=2, rows~2
          CsrExpand: key=a__id -> [k__src, k__dst], edges=3, take=b[b__id*, b__age], edge=k[k__src, k__dst, k__since]
            Projection: column1 AS a__id
              Values: (Int64(1)), (Int64(2))
    ");
    assert!(changed);
    let mut rows = run(after);
    rows.sort();
    let mut want = run(plan.clone());
    want.sort();
    assert_eq!(rows, want);
    // Not worth it below the least work it must save.
    let (_, changed) = apply(ShareSubplans::new(Default::default(), usize::MAX), plan);
    assert!(!changed);
}

#[test]
fn share_leaves_a_subtree_seen_once() {
    let plan = LogicalPlanBuilder::from(hop())
        .filter(col("b__age").gt(lit(35i64)))
        .unwrap()
        .build()
        .unwrap();
    let (_, changed) = apply(ShareSubplans::new(Default::default(), 0), plan);
    assert!(!changed);
}

/// Two readers of one shared subplan `(a, b, c)`, one reading `a`, the other `b`: under a
/// union, as the branches of a MATCH read the rows before it.
fn shared_read_by(second: Expr) -> LogicalPlan {
    let values = LogicalPlanBuilder::values(vec![
        vec![lit(1i64), lit(10i64), lit(100i64)],
        vec![lit(2i64), lit(20i64), lit(200i64)],
    ])
    .unwrap()
    .project(vec![
        col("column1").alias("a"),
        col("column2").alias("b"),
        col("column3").alias("c"),
    ])
    .unwrap()
    .build()
    .unwrap();
    let shared = crate::operators::shared::SharedSubplan::once(values, 0, 2);
    let first = LogicalPlanBuilder::from(shared.clone())
        .project(vec![col("a")])
        .unwrap()
        .build()
        .unwrap();
    LogicalPlanBuilder::from(shared)
        .project(vec![second.alias("a")])
        .unwrap()
        .union(first)
        .unwrap()
        .build()
        .unwrap()
}

#[test]
fn prune_shared_keeps_the_columns_of_every_reader() {
    let plan = shared_read_by(col("b"));
    let (after, changed) = apply_plan(PruneSharedSubplans::default(), plan.clone());
    insta::assert_snapshot!(after.display_indent(), @r"
    Union
      Projection: b AS a
        SharedSubplan: id=0, consumers=2, same rows for every reader
          Projection: column1 AS a, column2 AS b
            Values: (Int64(1), Int64(10), Int64(100)), (Int64(2), Int64(20), Int64(200))
      Projection: a
        SharedSubplan: id=0, consumers=2, same rows for every reader
          Projection: column1 AS a, column2 AS b
            Values: (Int64(1), Int64(10), Int64(100)), (Int64(2), Int64(20), Int64(200))
    ");
    assert!(changed);
    let mut rows = run(after);
    rows.sort();
    let mut want = run(plan);
    want.sort();
    assert_eq!(rows, want);
}

#[test]
fn prune_shared_leaves_a_subplan_whose_columns_are_all_read() {
    let plan = shared_read_by(col("b") + col("c"));
    let (_, changed) = apply(PruneSharedSubplans::default(), plan);
    assert!(!changed);
}

#[test]
fn distinct_ends_search_breadth_first_when_only_distinct_ends_are_read() {
    let plan = LogicalPlanBuilder::from(traversal())
        .aggregate(
            Vec::<Expr>::new(),
            vec![count_distinct(col("b__id")).alias("n")],
        )
        .unwrap()
        .build()
        .unwrap();
    let (after, changed) = apply_plan(VarLengthDistinctEnds::new(), plan.clone());
    insta::assert_snapshot!(after.display_indent(), @r"
    Aggregate: groupBy=[[]], aggr=[[count(DISTINCT b__id) AS n]]
      VarLengthExpand: key=a__id, type=KNOWS, length=1..3, edges=3, distinct ends (bfs), take=b[b__id*, b__age]
        Projection: column1 AS a__id
          Values: (Int64(1)), (Int64(2))
    ");
    assert!(changed);
    // From 1: 2 and 3; from 2: 3. Distinct ends over both rows: 2.
    assert_eq!(run(plan.clone()), ["2"]);
    assert_eq!(run(after), run(plan));
}

#[test]
fn distinct_ends_leave_counted_paths_alone() {
    // count(*) counts paths, not ends.
    let plan = LogicalPlanBuilder::from(traversal())
        .aggregate(Vec::<Expr>::new(), vec![count(lit(1i64)).alias("n")])
        .unwrap()
        .build()
        .unwrap();
    let (_, changed) = apply(VarLengthDistinctEnds::new(), plan.clone());
    assert!(!changed);
    // 1->2, 1->3, 1->2->3 and 2->3.
    assert_eq!(run(plan), ["4"]);
}

/// `(a)-[k]-(b)-[k2]-(c)` over [`GRAPH`] walked both ways from `a__id` 1 and 2.
fn undirected_two_hops() -> LogicalPlan {
    let step = |input: LogicalPlan, key: &str, edge: &str, target: &str| {
        let node = CsrExpand::try_new(
            input,
            key.into(),
            "KNOWS".into(),
            0,
            vec![false, true],
            take(edge, &["src", "dst", "since"], None),
            take(target, &["id", "age"], Some(0)),
            None,
            GRAPH.clone(),
        )
        .unwrap();
        LogicalPlan::Extension(Extension {
            node: Arc::new(node),
        })
    };
    let LogicalPlan::Extension(first) = hop() else {
        unreachable!("hop() is an extension")
    };
    let input = first.node.inputs()[0].clone();
    step(step(input, "a__id", "k", "b"), "b__id", "k2", "c")
}

fn counted(plan: LogicalPlanBuilder) -> LogicalPlan {
    plan.aggregate(Vec::<Expr>::new(), vec![count(lit(1i64)).alias("__agg0")])
        .unwrap()
        .build()
        .unwrap()
}

#[test]
fn factorize_subtracts_paths_whose_ends_meet() {
    // `k__since` stands for the edge id (the third edge column).
    let plan = counted(
        LogicalPlanBuilder::from(undirected_two_hops())
            .filter(
                col("a__id")
                    .not_eq(col("c__id"))
                    .and(col("k2__since").not_eq(col("k__since"))),
            )
            .unwrap(),
    );
    let (after, changed) = apply_plan(FactorizeCounts::new(), plan.clone());
    assert!(changed);
    insta::assert_snapshot!(after.display_indent(), @r"
    Projection: __agg0 AS __agg0
      CountPaths: key=a__id, arms=[[KNOWS (both) then [ends differ], KNOWS (both)]] -> __agg0
        Projection: column1 AS a__id
          Values: (Int64(1)), (Int64(2))
    ");
    // In the triangle 1, 2, 3: from 1 to 3 through 2 and to 2 through 3; from 2 likewise.
    assert_eq!(run(plan), ["4"]);
    assert_eq!(run(after), ["4"]);
}

#[test]
fn factorize_subtracts_paths_closed_by_an_absent_edge() {
    // NOT (a)-[:KNOWS]-(c): a counting hop closing onto c, its count required zero.
    let absent = CsrExpand::try_new(
        undirected_two_hops(),
        "a__id".into(),
        "KNOWS".into(),
        0,
        vec![false, true],
        take("k3", &["src", "dst", "since"], None),
        take("c", &["id"], Some(0)),
        Some("c__id".into()),
        GRAPH.clone(),
    )
    .unwrap()
    .counting("__sub".into())
    .unwrap();
    let plan = counted(
        LogicalPlanBuilder::from(LogicalPlan::Extension(Extension {
            node: Arc::new(absent),
        }))
        .filter(
            col("__sub")
                .lt_eq(lit(0i64))
                .and(col("k2__since").not_eq(col("k__since"))),
        )
        .unwrap(),
    );
    let (after, changed) = apply_plan(FactorizeCounts::new(), plan.clone());
    assert!(changed);
    insta::assert_snapshot!(after.display_indent(), @r"
    Projection: __agg0 AS __agg0
      CountPaths: key=a__id, arms=[[KNOWS (both) then [edges differ, no KNOWS (both)], KNOWS (both)]] -> __agg0
        Projection: column1 AS a__id
          Values: (Int64(1)), (Int64(2))
    ");
    // Every two nodes of the triangle are adjacent, and no walk goes back over its edge.
    assert_eq!(run(plan), ["0"]);
    assert_eq!(run(after), ["0"]);
}

/// `LIKES` edges 2->1, 3->1, 3->2 and 1->2 among [`GRAPH`]'s persons (its keys shared).
static LIKES: std::sync::LazyLock<CsrData> = std::sync::LazyLock::new(|| {
    let (src, dst) = (vec![2, 3, 3, 1], vec![1, 1, 2, 2]);
    let keys = GRAPH.near_keys.clone();
    let (s, d) = (Int64Array::from(src.clone()), Int64Array::from(dst.clone()));
    CsrData {
        index: Arc::new(CsrIndex::build(&s, &d, &keys, &keys, None).unwrap()),
        near_keys: keys.clone(),
        far_keys: keys,
        edges: table(&[
            ("src", src),
            ("dst", dst),
            ("since", vec![7, 8, 9, 10]),
            ("_rowid", vec![0, 1, 2, 3]),
        ]),
        target: GRAPH.target.clone(),
    }
});

/// Persons 1, 2 and 3 as a one-column input named `name`.
fn persons(name: &str) -> LogicalPlan {
    LogicalPlanBuilder::values(vec![vec![lit(1i64)], vec![lit(2i64)], vec![lit(3i64)]])
        .unwrap()
        .project(vec![col("column1").alias(name)])
        .unwrap()
        .build()
        .unwrap()
}

/// A hop from `key` over `KNOWS` ([`GRAPH`]) or `LIKES` (`rel`: type, table, walked in) to
/// `target`, its edge named `edge`.
fn one_way(
    input: LogicalPlan,
    key: &str,
    rel: (&str, usize, bool),
    edge: &str,
    target: &str,
) -> LogicalPlan {
    let data = match rel.0 {
        "KNOWS" => GRAPH.clone(),
        _ => LIKES.clone(),
    };
    let node = CsrExpand::try_new(
        input,
        key.into(),
        rel.0.into(),
        rel.1,
        vec![rel.2],
        take(edge, &["src", "dst", "since"], None),
        take(target, &["id", "age"], Some(0)),
        None,
        data,
    )
    .unwrap();
    LogicalPlan::Extension(Extension {
        node: Arc::new(node),
    })
}

/// `(a)<-[k:KNOWS]-(b)<-[l:LIKES]-(c)-[k3:KNOWS]->(d)` from `a__id` 1, 2 and 3: `a` and `d`
/// are the same end (the target) of `k` and `k3`.
fn knows_likes_knows() -> LogicalPlan {
    let b = one_way(persons("a__id"), "a__id", ("KNOWS", 0, true), "k", "b");
    let c = one_way(b, "b__id", ("LIKES", 1, true), "l", "c");
    one_way(c, "c__id", ("KNOWS", 0, false), "k3", "d")
}

/// `a <> d`, and the first and last KNOWS edges unequal (as relationship uniqueness says).
fn ends_differ() -> Expr {
    col("a__id")
        .not_eq(col("d__id"))
        .and(col("k3__since").not_eq(col("k__since")))
}

#[test]
fn factorize_subtracts_the_triangles_of_three_hops_whose_ends_differ() {
    // `k <> k3` is implied: one edge for both would make `a` and `d` its one target.
    let plan = counted(
        LogicalPlanBuilder::from(knows_likes_knows())
            .filter(ends_differ())
            .unwrap(),
    );
    let (after, changed) = apply_plan(FactorizeCounts::new(), plan.clone());
    assert!(changed);
    insta::assert_snapshot!(after.display_indent(), @r"
    Projection: __agg0 AS __agg0
      Projection: __agg0 - __same_ends AS __agg0
        Cross Join:
          CountPaths: key=a__id, arms=[[KNOWS (in), LIKES (in), KNOWS]] -> __agg0
            Projection: column1 AS a__id
              Values: (Int64(1)), (Int64(2)), (Int64(3))
          CountPaths: key=a__id, arms=[[KNOWS (in), LIKES (in)] closed by [KNOWS]] -> __same_ends
            Projection: column1 AS a__id
              Values: (Int64(1)), (Int64(2)), (Int64(3))
    ");
    // 2 <- 1 <- 2 -> 3, and from 3 three paths (3 <- 1 <- 2 -> 3, 3 <- 2 <- 1 -> 2 and
    // 3 <- 2 <- 1 -> 3) of which two are triangles.
    assert_eq!(run(plan), ["2"]);
    assert_eq!(run(after), ["2"]);
    // Counted per root, the triangles would be subtracted row by row: not done.
    let grouped = LogicalPlanBuilder::from(knows_likes_knows())
        .filter(ends_differ())
        .unwrap()
        .aggregate(vec![col("a__id")], vec![count(lit(1i64)).alias("__agg0")])
        .unwrap()
        .build()
        .unwrap();
    let (_, changed) = apply(FactorizeCounts::new(), grouped);
    assert!(!changed);
    // Without `a <> d`, `k <> k3` could exclude a path (one edge first and last): left to
    // the rows.
    let unique_only = counted(
        LogicalPlanBuilder::from(knows_likes_knows())
            .filter(col("k3__since").not_eq(col("k__since")))
            .unwrap(),
    );
    let (_, changed) = apply(FactorizeCounts::new(), unique_only);
    assert!(!changed);
}

#[test]
fn factorize_subtracts_the_triangles_of_three_hops_rooted_in_their_middle() {
    // (a)<-[k:KNOWS]-(b)<-[l:LIKES]-(c)-[k3:KNOWS]->(d) from `b`: arms b -> a and b -> c -> d.
    let a = one_way(persons("b__id"), "b__id", ("KNOWS", 0, false), "k", "a");
    let c = one_way(a, "b__id", ("LIKES", 1, true), "l", "c");
    let d = one_way(c, "c__id", ("KNOWS", 0, false), "k3", "d");
    let plan = counted(LogicalPlanBuilder::from(d).filter(ends_differ()).unwrap());
    let (after, changed) = apply_plan(FactorizeCounts::new(), plan.clone());
    assert!(changed);
    insta::assert_snapshot!(after.display_indent(), @r"
    Projection: __agg0 AS __agg0
      Projection: __agg0 - __same_ends AS __agg0
        Cross Join:
          CountPaths: key=b__id, arms=[[KNOWS], [LIKES (in), KNOWS]] -> __agg0
            Projection: column1 AS b__id
              Values: (Int64(1)), (Int64(2)), (Int64(3))
          CountPaths: key=b__id, arms=[[KNOWS] closed by [KNOWS], [LIKES (in)]] -> __same_ends
            Projection: column1 AS b__id
              Values: (Int64(1)), (Int64(2)), (Int64(3))
    ");
    // The paths of `factorize_subtracts_the_triangles_of_three_hops_whose_ends_differ`.
    assert_eq!(run(plan), ["2"]);
    assert_eq!(run(after), ["2"]);
}

#[test]
fn factorize_drops_unequal_ends_an_absent_edge_implies() {
    // NOT (c)-[:KNOWS]->(a): with d = a, c -> d would be such an edge.
    let absent = CsrExpand::try_new(
        knows_likes_knows(),
        "c__id".into(),
        "KNOWS".into(),
        0,
        vec![false],
        take("k4", &["src", "dst", "since"], None),
        take("a", &["id"], Some(0)),
        Some("a__id".into()),
        GRAPH.clone(),
    )
    .unwrap()
    .counting("__sub".into())
    .unwrap();
    let plan = counted(
        LogicalPlanBuilder::from(LogicalPlan::Extension(Extension {
            node: Arc::new(absent),
        }))
        .filter(
            col("__sub")
                .lt_eq(lit(0i64))
                .and(col("a__id").not_eq(col("d__id")))
                .and(col("k3__since").not_eq(col("k__since"))),
        )
        .unwrap(),
    );
    let (after, changed) = apply_plan(FactorizeCounts::new(), plan.clone());
    assert!(changed);
    insta::assert_snapshot!(after.display_indent(), @r"
    Projection: __agg0 AS __agg0
      CountPaths: key=a__id, arms=[[KNOWS (in) then [no KNOWS (in)], LIKES (in), KNOWS]] -> __agg0
        Projection: column1 AS a__id
          Values: (Int64(1)), (Int64(2)), (Int64(3))
    ");
    // From 3 every `c` knows 3; 2 <- 1 <- 2 -> 3 is left.
    assert_eq!(run(plan), ["1"]);
    assert_eq!(run(after), ["1"]);
}

#[test]
fn factorize_leaves_conditions_it_cannot_subtract_alone() {
    // Neighbours that must differ (one hop apart), a property inequality, a zero required
    // of a property (not of an absent edge's count).
    for cond in [
        col("a__id").not_eq(col("b__id")),
        col("b__age").not_eq(col("c__age")),
        col("c__age").eq(lit(0i64)),
    ] {
        let plan = counted(
            LogicalPlanBuilder::from(undirected_two_hops())
                .filter(cond)
                .unwrap(),
        );
        let (_, changed) = apply(FactorizeCounts::new(), plan);
        assert!(!changed);
    }
}

/// `count(e)` of `input`'s rows, as `__agg0`.
fn count_of(input: LogicalPlan, e: Expr) -> LogicalPlan {
    LogicalPlanBuilder::from(input)
        .aggregate(Vec::<Expr>::new(), vec![count(e).alias("__agg0")])
        .unwrap()
        .build()
        .unwrap()
}

/// `plan` (a `CsrExpand`) as an OPTIONAL MATCH's hop: rows without a match kept once.
fn optional(plan: LogicalPlan) -> LogicalPlan {
    let LogicalPlan::Extension(e) = plan else {
        unreachable!("a hop is an extension")
    };
    let mut node = (e.node.as_any().downcast_ref::<CsrExpand>())
        .expect("a hop")
        .clone();
    node.optional = true;
    LogicalPlan::Extension(Extension {
        node: Arc::new(node),
    })
}

#[test]
fn factorize_counts_a_node_without_an_optional_match_once() {
    // (a)-[k]->(b), OPTIONAL (b)-[r2]->(c), OPTIONAL (a)<-[r3]-(d): from a = 1, b = 2 has c
    // = 3 and b = 3 none, and no d: 2 rows; from a = 2, b = 3 has no c, d = 1: 1 row.
    let bc = optional(expand(hop(), "b__id", false, "r2", "c", None));
    let ad = optional(expand(bc, "a__id", true, "r3", "d", None));
    let plan = counted(LogicalPlanBuilder::from(ad));
    let (after, changed) = apply_plan(FactorizeCounts::new(), plan.clone());
    assert!(changed);
    insta::assert_snapshot!(after.display_indent(), @r"
    Projection: __agg0 AS __agg0
      CountPaths: key=a__id, arms=[[KNOWS with [KNOWS optional]], [KNOWS (in) optional]] -> __agg0
        Projection: column1 AS a__id
          Values: (Int64(1)), (Int64(2))
    ");
    assert_eq!(run(plan), ["3"]);
    assert_eq!(run(after), ["3"]);
}

#[test]
fn factorize_leaves_what_reads_an_optional_match_alone() {
    let bc = || optional(expand(hop(), "b__id", false, "r2", "c", None));
    // A hop from the optional match's far node: its null rows are dropped, not counted once.
    let cd = expand(bc(), "c__id", false, "r3", "d", None);
    // A property of the optional match's far node (null where the node has none).
    let cases = [count_of(cd, lit(1i64)), count_of(bc(), col("c__age"))];
    for plan in cases {
        let (after, changed) = apply(FactorizeCounts::new(), plan.clone());
        assert!(!changed, "{after}");
    }
}

#[test]
fn factorize_counts_an_optional_matchs_node_where_it_matched() {
    // The optional match's far node counted: where it matched (a node without a match counts
    // 0, not 1), the hop counted as a plain one.
    let bc = optional(expand(hop(), "b__id", false, "r2", "c", None));
    let plan = count_of(bc, col("c__id"));
    let (after, changed) = apply_plan(FactorizeCounts::new(), plan.clone());
    assert!(changed);
    let shown = after.display_indent().to_string();
    assert!(
        shown.contains("CountPaths") && !shown.contains("optional"),
        "{shown}"
    );
    // From a = 1, b = 2 reaches c = 3 and b = 3 nothing; from a = 2, b = 3 nothing.
    assert_eq!(run(plan), ["1"]);
    assert_eq!(run(after), ["1"]);
}

#[test]
fn factorize_counts_an_optional_matchs_node_per_group_keeping_groups_without_a_match() {
    // Grouped by a: from a = 1, b = 2 reaches c = 3 and b = 3 nothing (1); from a = 2, b = 3
    // nothing: a row of 0, not no row.
    let bc = optional(expand(hop(), "b__id", false, "r2", "c", None));
    let plan = LogicalPlanBuilder::from(bc)
        .aggregate(
            vec![col("a__id")],
            vec![count(col("c__id")).alias("__agg0")],
        )
        .unwrap()
        .build()
        .unwrap();
    let (after, changed) = apply_plan(FactorizeCounts::new(), plan.clone());
    assert!(changed);
    let shown = after.display_indent().to_string();
    assert!(
        shown.contains("optional (counted where it matched)"),
        "{shown}"
    );
    // (Groups come in any order.)
    let sorted = |mut rows: Vec<String>| {
        rows.sort();
        rows
    };
    assert_eq!(sorted(run(plan)), ["1,1", "2,0"]);
    assert_eq!(sorted(run(after)), ["1,1", "2,0"]);
}

#[test]
fn factorize_drops_a_group_without_the_mandatory_match_beside_an_optional_counted_where_matched() {
    // Roots 1, 2, 3; 3 knows no one, so it has no rows and no group (1 and 2 as above).
    let roots = LogicalPlanBuilder::values(vec![vec![lit(1i64)], vec![lit(2i64)], vec![lit(3i64)]])
        .unwrap()
        .project(vec![col("column1").alias("a__id")])
        .unwrap()
        .build()
        .unwrap();
    let ab = expand(roots, "a__id", false, "k", "b", None);
    let bc = optional(expand(ab, "b__id", false, "r2", "c", None));
    let plan = LogicalPlanBuilder::from(bc)
        .aggregate(
            vec![col("a__id")],
            vec![count(col("c__id")).alias("__agg0")],
        )
        .unwrap()
        .build()
        .unwrap();
    let (after, changed) = apply_plan(FactorizeCounts::new(), plan.clone());
    assert!(changed);
    let sorted = |mut rows: Vec<String>| {
        rows.sort();
        rows
    };
    assert_eq!(sorted(run(plan)), ["1,1", "2,0"]);
    assert_eq!(sorted(run(after)), ["1,1", "2,0"]);
}

/// Two branches of a union label (`l` names each), as the planner makes them: a constant
/// label over each branch's rows.
fn label_branches(limit_second: bool) -> LogicalPlan {
    let branch = |label: &str, min_age: i64| {
        LogicalPlanBuilder::from(hop())
            .filter(col("b__age").gt(lit(min_age)))
            .unwrap()
            .project(vec![lit(label).alias("l"), col("a__id"), col("b__id")])
            .unwrap()
    };
    let second = match limit_second {
        true => branch("B", 0).limit(0, Some(1)).unwrap(),
        false => branch("B", 45),
    };
    branch("A", 0)
        .union(second.build().unwrap())
        .unwrap()
        .build()
        .unwrap()
}

#[test]
fn select_reads_the_one_branch_a_label_filter_keeps() {
    use crate::operators::shared::SharedSubplan;
    let shared = SharedSubplan::once(label_branches(false), 0, 2);
    let plan = LogicalPlanBuilder::from(shared)
        .project(vec![col("l"), col("a__id"), col("b__id")])
        .unwrap()
        .filter(col("l").eq(lit("A")).and(col("a__id").gt(lit(1i64))))
        .unwrap()
        .build()
        .unwrap();
    let (after, changed) = apply_plan(SelectLabelBranch::new(), plan.clone());
    assert!(changed);
    insta::assert_snapshot!(after.display_indent(), @r#"
    Filter: a__id > Int64(1)
      Projection: l, a__id, b__id
        Projection: Utf8("A") AS l, a__id, b__id
          Filter: b__age > Int64(0)
            CsrExpand: key=a__id -> [k__src, k__dst], edges=3, take=b[b__id*, b__age], edge=k[k__src, k__dst, k__since]
              Projection: column1 AS a__id
                Values: (Int64(1)), (Int64(2))
    "#);
    assert_eq!(run(plan.clone()), ["A,2,3"]);
    assert_eq!(run(after), run(plan));
}

#[test]
fn select_leaves_branches_it_cannot_tell_apart_alone() {
    use crate::operators::shared::SharedSubplan;
    let filtered = |branches: LogicalPlan, label: Expr| {
        LogicalPlanBuilder::from(SharedSubplan::once(branches, 0, 2))
            .filter(col("l").eq(label))
            .unwrap()
            .build()
            .unwrap()
    };
    // A branch whose rows may differ between evaluations (a LIMIT): readers must share them.
    // A label no branch gives; a label compared with a column, not a constant.
    let cases = [
        filtered(label_branches(true), lit("A")),
        filtered(label_branches(false), lit("C")),
        filtered(label_branches(false), col("a__id")),
    ];
    for plan in cases {
        let (after, changed) = apply(SelectLabelBranch::new(), plan);
        assert!(!changed, "{after}");
    }
}

#[test]
fn factorize_counts_no_hop_through_a_renamed_node() {
    // (a)-[k]->(b), then b renamed a (`WITH b AS a`), then (a)-[r2]->(c): the second hop is
    // keyed on the renamed column, not on the first hop's root.
    let renamed = LogicalPlanBuilder::from(hop())
        .project(vec![col("b__id").alias("a__id")])
        .unwrap()
        .build()
        .unwrap();
    let plan = counted(LogicalPlanBuilder::from(expand(
        renamed, "a__id", false, "r2", "c", None,
    )));
    let (after, _) = apply_plan(FactorizeCounts::new(), plan.clone());
    // b = 2 (from 1) reaches 3, b = 3 (from 1 and 2) nothing.
    assert_eq!(run(plan), ["1"]);
    assert_eq!(run(after), ["1"]);
}

#[test]
fn factorize_leaves_optional_hops_from_rows_that_may_have_no_node_alone() {
    // Root rows 1 and null (an earlier OPTIONAL MATCH's): the null row has one row of nulls
    // after the optional hop, which a count per node would miss.
    let input =
        LogicalPlanBuilder::values(vec![vec![lit(1i64)], vec![lit(ScalarValue::Int64(None))]])
            .unwrap()
            .project(vec![col("column1").alias("a__id")])
            .unwrap()
            .build()
            .unwrap();
    let plan = counted(LogicalPlanBuilder::from(optional(expand(
        input, "a__id", false, "k", "b", None,
    ))));
    let (after, changed) = apply_plan(FactorizeCounts::new(), plan.clone());
    assert!(!changed, "{}", after.display_indent());
    assert_eq!(run(plan), ["3"]);
}

/// `(a)-[k1:KNOWS]->(b)-[k2:KNOWS]->(c)-[l1:LIKES]->(d)-[l2:LIKES]->(a)` planned from `c`:
/// arms `c <- b <- a` and `c -> d`, `d -> a` closing the second's end onto the first's;
/// `likes_first`: the hop to `d` planned first.
fn four_cycle_from_c(likes_first: bool) -> LogicalPlan {
    let (c, d) = (persons("c__id"), "c__id");
    let arms = match likes_first {
        false => {
            let b = one_way(c, d, ("KNOWS", 0, true), "k2", "b");
            let a = one_way(b, "b__id", ("KNOWS", 0, true), "k1", "a");
            one_way(a, "c__id", ("LIKES", 1, false), "l1", "d")
        }
        true => {
            let d = one_way(c, d, ("LIKES", 1, false), "l1", "d");
            let b = one_way(d, "c__id", ("KNOWS", 0, true), "k2", "b");
            one_way(b, "b__id", ("KNOWS", 0, true), "k1", "a")
        }
    };
    let close = CsrExpand::try_new(
        arms,
        "d__id".into(),
        "LIKES".into(),
        1,
        vec![false],
        take("l2", &["src", "dst", "since"], None),
        // Onto the bound `a`: its columns are there already.
        TakeSpec {
            take: vec![],
            ..take("a", &["id"], None)
        },
        Some("a__id".into()),
        LIKES.clone(),
    )
    .unwrap();
    LogicalPlan::Extension(Extension {
        node: Arc::new(close),
    })
}

#[test]
fn factorize_counts_a_four_cycle_of_two_arms() {
    // Each table's two hops one after the other the same way: no edge can be both.
    let unique = col("k2__since")
        .not_eq(col("k1__since"))
        .and(col("l2__since").not_eq(col("l1__since")));
    let plan = counted(
        LogicalPlanBuilder::from(four_cycle_from_c(false))
            .filter(unique.clone())
            .unwrap(),
    );
    let (after, changed) = apply_plan(FactorizeCounts::new(), plan.clone());
    assert!(changed);
    // Planned the other way round, the arm closed onto comes first all the same, and the
    // root's rows are still those under the first hop planned (not the LIKES hop's).
    let likes_first = counted(
        LogicalPlanBuilder::from(four_cycle_from_c(true))
            .filter(unique.clone())
            .unwrap(),
    );
    let (reordered, changed) = apply_plan(FactorizeCounts::new(), likes_first.clone());
    assert!(changed);
    assert_eq!(
        reordered.display_indent().to_string(),
        after.display_indent().to_string()
    );
    insta::assert_snapshot!(after.display_indent(), @r"
    Projection: __agg0 AS __agg0
      CountPaths: key=c__id, arms=[[KNOWS (in), KNOWS (in)] closed by [LIKES], [LIKES]] -> __agg0
        Projection: column1 AS c__id
          Values: (Int64(1)), (Int64(2)), (Int64(3))
    ");
    // 1 -> 2 -> 3 -> 2 -> 1.
    assert_eq!(run(plan), ["1"]);
    assert_eq!(run(after), ["1"]);
    assert_eq!(run(likes_first), ["1"]);
    assert_eq!(run(reordered), ["1"]);
    // `a <> c` is the rows' to filter.
    let unequal = counted(
        LogicalPlanBuilder::from(four_cycle_from_c(false))
            .filter(unique.and(col("a__id").not_eq(col("c__id"))))
            .unwrap(),
    );
    let (_, changed) = apply(FactorizeCounts::new(), unequal);
    assert!(!changed);
}
