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
            let by_name: HashMap<String, &Expr> = (p.schema.columns().into_iter())
                .zip(&p.expr)
                .map(|(c, e)| (c.name, e))
                .collect();
            let below = key.clone().transform(|e| match &e {
                Expr::Column(c) => match by_name.get(&c.name) {
                    Some(x) => Ok(Transformed::yes((*x).clone().unalias())),
                    None => Ok(Transformed::no(e)),
                },
                _ => Ok(Transformed::no(e)),
            })?;
            match searched(&p.input, &below.data, asc, k)? {
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
    let (column, query) = match (&f.args[1], &f.args[2]) {
        (Expr::Column(c), Expr::Literal(v, _)) | (Expr::Literal(v, _), Expr::Column(c)) => {
            (c.name.clone(), constant_vector(v)?)
        }
        _ => return None,
    };
    Some((measure, column, query))
}

/// A list literal of finite numbers as floats.
fn constant_vector(v: &ScalarValue) -> Option<Vec<f32>> {
    let values = match v {
        ScalarValue::List(a) => a.value(0),
        ScalarValue::LargeList(a) => a.value(0),
        ScalarValue::FixedSizeList(a) => a.value(0),
        _ => return None,
    };
    if values.null_count() > 0 {
        return None;
    }
    let values = arrow::compute::cast(&values, &arrow::datatypes::DataType::Float32).ok()?;
    use arrow::array::AsArray;
    let xs: Vec<f32> = values
        .as_primitive::<arrow::datatypes::Float32Type>()
        .values()
        .to_vec();
    xs.iter().all(|x| x.is_finite()).then_some(xs)
}
