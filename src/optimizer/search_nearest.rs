//! `SearchNearest`: the rows nearest a constant vector, `ORDER BY vector_distance(n.v, $q)
//! LIMIT k` (or a similarity, descending), found by Lance's vector search over the node
//! table's column instead of computing every row's distance and sorting: through the
//! dataset's vector index where one has the same metric (approximate, within its recall),
//! exactly otherwise. The filters pushed into the scan become Lance's prefilter (the nearest
//! among the rows that pass); the sort stays above and orders the `k` rows found.
//!
//! ```text
//! before:
//!   Sort: cypher_vector("l2", p__embedding, [..]) ASC NULLS LAST, fetch=10
//!     Projection: node_Person.id AS p__id, node_Person.embedding AS p__embedding
//!       TableScan: node_Person projection=[id, embedding], full_filters=[age > 30]
//! after:
//!   Sort: (the same), fetch=10
//!     Projection: (the same)
//!       TableScan: node_Person projection=[id, embedding], full_filters=[age > 30]
//!         (a SearchTable: nearest 10 by L2 among the rows with age > 30)
//! ```
//!
//! Must not fire when anything but projections stands between the sort and the scan (a
//! filter there would drop rows after the search), when the sort has another key or no
//! fetch, when the vector is not a constant or not of the scanned table, when the column may
//! hold nulls (a null's distance sorts last, Lance's search skips it), or when the order is
//! the wrong way (farthest first).

use crate::config::VectorMetric;
use crate::functions::vector::Measure;
use crate::storage::search::{LanceSearch, SearchTable};
use datafusion::common::tree_node::{Transformed, TreeNode};
use datafusion::common::{Result, ScalarValue};
use datafusion::datasource::source_as_provider;
use datafusion::logical_expr::{Expr, LogicalPlan, TableScan};
use datafusion::optimizer::push_down_filter::replace_cols_by_name;
use datafusion::optimizer::{OptimizerConfig, OptimizerRule};
use std::collections::HashMap;
use std::sync::Arc;

#[derive(Debug, Default)]
pub struct SearchNearest;

impl SearchNearest {
    pub fn new() -> Self {
        Self
    }
}

impl OptimizerRule for SearchNearest {
    fn name(&self) -> &str {
        "search_nearest"
    }

    fn rewrite(
        &self,
        plan: LogicalPlan,
        _config: &dyn OptimizerConfig,
    ) -> Result<Transformed<LogicalPlan>> {
        plan.transform_down(|node| {
            let LogicalPlan::Sort(sort) = &node else {
                return Ok(Transformed::no(node));
            };
            let (Some(k), [key]) = (sort.fetch, sort.expr.as_slice()) else {
                return Ok(Transformed::no(node));
            };
            match searched(&sort.input, &key.expr, key.asc, k)? {
                Some(input) => Ok(Transformed::yes(
                    node.clone()
                        .with_new_exprs(node.expressions(), vec![input])?,
                )),
                None => Ok(Transformed::no(node)),
            }
        })
    }
}

/// `plan` (projections over a scan) with its scan searching for the `k` rows that come
/// first by `key` (over `plan`'s columns); `None` where the rule does not apply.
fn searched(plan: &LogicalPlan, key: &Expr, asc: bool, k: usize) -> Result<Option<LogicalPlan>> {
    match plan {
        LogicalPlan::Projection(p) => {
            // The key over the projection's input.
            let by_name: HashMap<String, Expr> = (p.schema.columns().into_iter())
                .zip(&p.expr)
                .map(|(c, e)| (c.flat_name(), e.clone().unalias()))
                .collect();
            let below = replace_cols_by_name(key.clone(), &by_name)?;
            match searched(&p.input, &below, asc, k)? {
                Some(input) => Ok(Some(
                    plan.clone()
                        .with_new_exprs(plan.expressions(), vec![input])?,
                )),
                None => Ok(None),
            }
        }
        LogicalPlan::TableScan(scan) => {
            Ok(search_scan(scan, key, asc, k)?.map(LogicalPlan::TableScan))
        }
        _ => Ok(None),
    }
}

fn search_scan(scan: &TableScan, key: &Expr, asc: bool, k: usize) -> Result<Option<TableScan>> {
    if scan.fetch.is_some() {
        return Ok(None);
    }
    let Some((measure, column, query)) = nearest_key(key) else {
        return Ok(None);
    };
    let metric = match (measure, asc) {
        (Measure::L2, true) | (Measure::EuclideanSimilarity, false) => VectorMetric::Euclidean,
        (Measure::Cosine, true) | (Measure::CosineSimilarity, false) => VectorMetric::Cosine,
        _ => return Ok(None),
    };
    let provider = source_as_provider(&scan.source)?;
    let table = match provider.downcast_ref::<crate::storage::stats::KeyStatisticsProvider>() {
        Some(s) => s.inner().clone(),
        None => provider,
    };
    let schema = table.schema();
    let Ok(field) = schema.field_with_name(&column) else {
        return Ok(None);
    };
    let dim = crate::catalog::vector_dimension(field.data_type());
    if field.is_nullable() || dim != Some(query.len()) {
        return Ok(None);
    }
    let search = LanceSearch::Nearest {
        column,
        query,
        k,
        metric,
    };
    let Some(found) = SearchTable::over(table, search) else {
        return Ok(None);
    };
    let source = datafusion::catalog::default_table_source::provider_as_source(Arc::new(found));
    Ok(Some(TableScan {
        source,
        ..scan.clone()
    }))
}

/// `cypher_vector(measure, column, constant)` (either way round), seen through the wrapper
/// ordering puts around floats (`CAST(CASE WHEN isnan(x) THEN NaN ELSE x END)`): the
/// measure, the column's name and the constant vector.
fn nearest_key(key: &Expr) -> Option<(Measure, String, Vec<f32>)> {
    let key = match key {
        Expr::Alias(a) => &a.expr,
        k => k,
    };
    let key = match key {
        Expr::Cast(c) => &c.expr,
        k => k,
    };
    let key = match key {
        Expr::Case(c) if c.expr.is_none() && c.when_then_expr.len() == 1 => {
            let x = c.else_expr.as_deref()?;
            let (when, _) = &c.when_then_expr[0];
            match when.as_ref() {
                Expr::ScalarFunction(f) if f.name() == "isnan" && f.args.first() == Some(x) => x,
                _ => return None,
            }
        }
        k => k,
    };
    let Expr::ScalarFunction(f) = key else {
        return None;
    };
    if f.name() != "cypher_vector" || f.args.len() != 3 {
        return None;
    }
    let Expr::Literal(ScalarValue::Utf8(Some(name)), _) = &f.args[0] else {
        return None;
    };
    let measure = Measure::named(name)?;
    // The query vector: a literal, or a long list parameter held beside the plan.
    let constant = |e: &Expr| match e {
        Expr::Literal(v, _) => Some(v.clone()),
        e => crate::functions::held::Held::value_in(e),
    };
    let (column, query) = match (&f.args[1], &f.args[2]) {
        (Expr::Column(c), v) | (v, Expr::Column(c)) => {
            (c.name.clone(), constant_vector(&constant(v)?, measure)?)
        }
        _ => return None,
    };
    Some((measure, column, query))
}

/// A list literal of finite numbers as the 32-bit floats Lance compares: for a cosine
/// measure its direction (normalised in f64; none for a zero vector), else its values where
/// each is representable.
fn constant_vector(v: &ScalarValue, measure: Measure) -> Option<Vec<f32>> {
    let values = match v {
        ScalarValue::List(a) => a.value(0),
        ScalarValue::LargeList(a) => a.value(0),
        ScalarValue::FixedSizeList(a) => a.value(0),
        _ => return None,
    };
    if values.null_count() > 0 {
        return None;
    }
    let values = arrow::compute::cast(&values, &arrow::datatypes::DataType::Float64).ok()?;
    use arrow::array::AsArray;
    let xs = values
        .as_primitive::<arrow::datatypes::Float64Type>()
        .values();
    if matches!(measure, Measure::Cosine | Measure::CosineSimilarity) {
        return crate::functions::vector::unit_f32(xs);
    }
    let narrow: Vec<f32> = xs.iter().map(|x| *x as f32).collect();
    narrow.iter().all(|x| x.is_finite()).then_some(narrow)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::functions::CypherFn;
    use crate::optimizer::test_util::apply_plan;
    use arrow::array::{
        Array, ArrayRef, FixedSizeListArray, Float32Array, Int64Array, RecordBatch,
    };
    use arrow::datatypes::{DataType, Field, Schema};
    use datafusion::catalog::default_table_source::provider_as_source;
    use datafusion::logical_expr::{col, lit, LogicalPlanBuilder, SortExpr};

    /// A Lance table of 20 rows: `id`, a non-null vector `v` and a nullable one `w`.
    fn table(dir: &std::path::Path) -> Arc<dyn datafusion::datasource::TableProvider> {
        let rt = tokio::runtime::Runtime::new().unwrap();
        rt.block_on(async {
            let vectors = |nullable: bool| -> (Field, ArrayRef) {
                let item = Arc::new(Field::new("item", DataType::Float32, true));
                let values: Vec<f32> = (0..40).map(|i| i as f32).collect();
                let a = FixedSizeListArray::try_new(
                    item,
                    2,
                    Arc::new(Float32Array::from(values)),
                    None,
                )
                .unwrap();
                let name = if nullable { "w" } else { "v" };
                (
                    Field::new(name, a.data_type().clone(), nullable),
                    Arc::new(a),
                )
            };
            let (v, va) = vectors(false);
            let (w, wa) = vectors(true);
            let schema = Arc::new(Schema::new(vec![
                Field::new("id", DataType::Int64, false),
                v,
                w,
            ]));
            let ids: ArrayRef = Arc::new(Int64Array::from_iter_values(0..20));
            let batch = RecordBatch::try_new(schema.clone(), vec![ids, va, wa]).unwrap();
            crate::storage::write_lance(dir, schema, vec![batch])
                .await
                .unwrap();
            let t = crate::storage::TableHandle::open_lance(dir, false, &Default::default(), None)
                .await
                .unwrap();
            t.provider
        })
    }

    /// `Sort(key, fetch=3) <- Projection(key AS d, id) <- [Filter] <- TableScan`.
    fn plan(
        t: &Arc<dyn datafusion::datasource::TableProvider>,
        measure: &str,
        column: &str,
        asc: bool,
        filter_between: bool,
    ) -> LogicalPlan {
        plan_to(t, measure, column, asc, filter_between, lit(query_3_4()))
    }

    fn query_3_4() -> ScalarValue {
        ScalarValue::List(ScalarValue::new_list_nullable(
            &[
                ScalarValue::Float64(Some(3.0)),
                ScalarValue::Float64(Some(4.0)),
            ],
            &DataType::Float64,
        ))
    }

    /// [`plan`] with the query vector `q`.
    fn plan_to(
        t: &Arc<dyn datafusion::datasource::TableProvider>,
        measure: &str,
        column: &str,
        asc: bool,
        filter_between: bool,
        q: Expr,
    ) -> LogicalPlan {
        let key = CypherFn::Vector.call(vec![lit(measure), col(column), q]);
        let mut b =
            LogicalPlanBuilder::scan("node_Doc", provider_as_source(t.clone()), None).unwrap();
        if filter_between {
            b = b.filter(col("id").gt(lit(2i64))).unwrap();
        }
        b.project(vec![key.alias("d"), col("id")])
            .unwrap()
            .sort_with_limit(vec![SortExpr::new(col("d"), asc, false)], Some(3))
            .unwrap()
            .build()
            .unwrap()
    }

    /// The search the plan's scan makes, if it is one.
    fn search_of(plan: &LogicalPlan) -> Option<String> {
        let mut found = None;
        plan.apply(|p| {
            if let LogicalPlan::TableScan(s) = p {
                let provider = source_as_provider(&s.source)?;
                found = provider
                    .downcast_ref::<SearchTable>()
                    .map(|t| format!("{:?}", t.search()));
            }
            Ok(datafusion::common::tree_node::TreeNodeRecursion::Continue)
        })
        .unwrap();
        found
    }

    #[test]
    fn the_nearest_rows_by_a_constant_are_a_lance_search() {
        let dir = tempfile::tempdir().unwrap();
        let t = table(dir.path());
        // A cosine search takes the constant's direction (normalised), a Euclidean one its
        // values.
        for (measure, asc, metric, query) in [
            ("l2", true, "Euclidean", "[3.0, 4.0]"),
            ("cosine", true, "Cosine", "[0.6, 0.8]"),
            ("cosine_similarity", false, "Cosine", "[0.6, 0.8]"),
            ("euclidean_similarity", false, "Euclidean", "[3.0, 4.0]"),
        ] {
            let (after, _) = apply_plan(SearchNearest::new(), plan(&t, measure, "v", asc, false));
            assert_eq!(
                search_of(&after).as_deref(),
                Some(
                    format!("Nearest {{ column: \"v\", query: {query}, k: 3, metric: {metric} }}")
                        .as_str()
                ),
                "{measure}"
            );
            // The sort and the projection above it stay as they were.
            let text = after.display_indent().to_string();
            assert!(
                text.starts_with("Sort: d ASC") || text.starts_with("Sort: d DESC"),
                "{text}"
            );
        }
    }

    #[test]
    fn a_long_list_parameter_held_beside_the_plan_is_a_query_vector() {
        let dir = tempfile::tempdir().unwrap();
        let t = table(dir.path());
        let held = crate::functions::held::Held::new("v", query_3_4());
        let (after, _) = apply_plan(
            SearchNearest::new(),
            plan_to(&t, "l2", "v", true, false, held.expr()),
        );
        assert_eq!(
            search_of(&after).as_deref(),
            Some("Nearest { column: \"v\", query: [3.0, 4.0], k: 3, metric: Euclidean }")
        );
    }

    #[test]
    fn must_not_fire() {
        let dir = tempfile::tempdir().unwrap();
        let t = table(dir.path());
        for (why, p) in [
            ("farthest first", plan(&t, "l2", "v", false, false)),
            (
                "least similar first",
                plan(&t, "cosine_similarity", "v", true, false),
            ),
            ("Lance's dot distance", plan(&t, "dot", "v", true, false)),
            ("a nullable column", plan(&t, "l2", "w", true, false)),
            (
                "a filter between sort and scan",
                plan(&t, "l2", "v", true, true),
            ),
        ] {
            let (after, changed) = apply_plan(SearchNearest::new(), p);
            assert!(search_of(&after).is_none() && !changed, "{why}: {after}");
        }
    }
}
