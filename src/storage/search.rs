//! `SearchTable`: a node table's rows as one of Lance's searches finds them, nearest vectors
//! or matching text, through the dataset's own index where it has one (Lance searches
//! unindexed rows exactly). Its rows are the table's columns and the search's own measure:
//! `_distance` (smaller is nearer) or `_score` (BM25, larger is better), under [`measure`].

use super::lance_table::{over_stored, project, stored, LanceTable, Named};
use crate::config::VectorMetric;
use arrow::array::Float32Array;
use arrow::datatypes::{DataType, Field, Schema, SchemaRef};
use datafusion::catalog::Session;
use datafusion::datasource::{TableProvider, TableType};
use datafusion::error::{DataFusionError, Result};
use datafusion::logical_expr::Expr;
use datafusion::physical_expr::expressions::Column;
use datafusion::physical_plan::projection::ProjectionExec;
use datafusion::physical_plan::ExecutionPlan;
use lance::Dataset;
use lance_index::scalar::inverted::query::FtsQuery;
use lance_index::scalar::FullTextSearchQuery;
use std::collections::HashMap;
use std::sync::Arc;

/// Candidates an HNSW index search keeps at least (Lance's `ef`).
const SEARCH_WIDTH: usize = 100;

/// Rows an index search finds per row asked for, re-ranked exactly.
const REFINE_FACTOR: u32 = 2;

/// What to search for.
#[derive(Debug, Clone)]
pub enum LanceSearch {
    /// The `k` rows whose `column` is nearest `query`.
    Nearest {
        column: String,
        query: Vec<f32>,
        k: usize,
        metric: VectorMetric,
    },
    /// The rows whose `column` matches `query`, best first, at most `limit`.
    Text {
        column: String,
        query: FtsQuery,
        limit: Option<usize>,
    },
}

#[derive(Debug)]
pub struct SearchTable {
    /// The table searched (a [`LanceTable`]): its filters are Lance's prefilters.
    table: Arc<dyn TableProvider>,
    dataset: Arc<Dataset>,
    /// Property -> the column holding it, where they differ.
    stored: HashMap<String, String>,
    /// The table's columns, then the measure.
    schema: SchemaRef,
    search: LanceSearch,
}

/// The name of the measure column: one no property has.
pub fn measure(props: &[(String, DataType)]) -> String {
    let mut name = "__measure".to_string();
    while props.iter().any(|(p, _)| *p == name) {
        name.push('_');
    }
    name
}

impl SearchTable {
    /// A search of `table`, which must be a [`LanceTable`] (with or without its row ids);
    /// `None` otherwise.
    pub fn over(table: Arc<dyn TableProvider>, search: LanceSearch) -> Option<Self> {
        let any: &dyn std::any::Any = table.as_ref();
        let lance = any.downcast_ref::<LanceTable>()?;
        let shown = table.schema();
        let props: Vec<(String, DataType)> = (shown.fields().iter())
            .map(|f| (f.name().clone(), f.data_type().clone()))
            .collect();
        let mut fields: Vec<Field> = shown.fields().iter().map(|f| f.as_ref().clone()).collect();
        fields.push(Field::new(measure(&props), DataType::Float32, true));
        Some(Self {
            dataset: lance.dataset().clone(),
            stored: lance.columns().clone(),
            table: table.clone(),
            schema: Arc::new(Schema::new(fields)),
            search,
        })
    }

    /// What it searches for.
    #[cfg(test)]
    pub fn search(&self) -> &LanceSearch {
        &self.search
    }

    fn lance_measure(&self) -> &'static str {
        match self.search {
            LanceSearch::Nearest { .. } => "_distance",
            LanceSearch::Text { .. } => "_score",
        }
    }
}

#[async_trait::async_trait]
impl TableProvider for SearchTable {
    fn schema(&self) -> SchemaRef {
        self.schema.clone()
    }

    fn table_type(&self) -> TableType {
        TableType::Base
    }

    fn supports_filters_pushdown(
        &self,
        filters: &[&Expr],
    ) -> Result<Vec<datafusion::logical_expr::TableProviderFilterPushDown>> {
        self.table.supports_filters_pushdown(filters)
    }

    async fn scan(
        &self,
        _state: &dyn Session,
        projection: Option<&Vec<usize>>,
        filters: &[Expr],
        _limit: Option<usize>,
    ) -> Result<Arc<dyn ExecutionPlan>> {
        let last = self.schema.fields().len() - 1;
        let all: Vec<usize> = (0..=last).collect();
        let wanted = projection.unwrap_or(&all);
        if matches!(self.search, LanceSearch::Text { limit: Some(0), .. }) {
            // Nothing asked for (Lance's ranking wants at least one row).
            let schema = Arc::new(self.schema.project(wanted)?);
            return Ok(Arc::new(datafusion::physical_plan::empty::EmptyExec::new(
                schema,
            )));
        }
        let row_id = |i: usize| self.schema.field(i).name() == super::ROW_ID;
        let columns: Vec<&str> = wanted
            .iter()
            .filter(|&&i| i != last && !row_id(i))
            .map(|&i| stored(&self.stored, self.schema.field(i).name()))
            .collect();
        // No search finds more rows than the table has: Lance sizes its buffers by what is
        // asked for.
        let rows = self
            .dataset
            .count_rows(None)
            .await
            .map_err(DataFusionError::from)?;
        let at_most = |n: usize| n.min(rows).max(1);
        let mut scan = self.dataset.scan();
        project(&mut scan, &self.dataset, &columns).map_err(DataFusionError::from)?;
        if wanted.iter().any(|&i| row_id(i)) {
            scan.with_row_id();
        }
        match &self.search {
            LanceSearch::Nearest {
                column,
                query,
                k,
                metric,
            } => {
                let q = Float32Array::from(query.clone());
                let k = at_most(*k);
                scan.nearest(stored(&self.stored, column), &q, k)
                    .map_err(DataFusionError::from)?;
                if k >= rows {
                    // Every row: read them all rather than hope a graph search finds each.
                    scan.use_index(false);
                }
                scan.distance_metric(match metric {
                    VectorMetric::Cosine => lance_linalg::distance::MetricType::Cosine,
                    VectorMetric::Euclidean => lance_linalg::distance::MetricType::L2,
                });
                // A graph index searched wider than Lance's default (1.5 k candidates), and
                // twice the rows asked for re-ranked by their exact distances (the index's are
                // approximate): recall@10 above 0.9 for a few tenths of a millisecond.
                scan.ef(k.saturating_mul(4).max(SEARCH_WIDTH));
                scan.refine(REFINE_FACTOR);
            }
            LanceSearch::Text {
                column,
                query,
                limit,
            } => {
                let query = query
                    .clone()
                    .with_column(stored(&self.stored, column).to_string());
                let mut q = FullTextSearchQuery::new_query(query);
                q.limit = limit.map(|l| l.min(rows) as i64);
                scan.full_text_search(q).map_err(DataFusionError::from)?;
            }
        }
        // Filters the table takes are applied before the search: the best rows among those
        // that pass.
        if let Some(filter) = filters.iter().cloned().reduce(Expr::and) {
            scan.prefilter(true);
            scan.filter_expr(over_stored(&self.stored, filter)?);
        }
        let plan = scan.create_plan().await.map_err(DataFusionError::from)?;
        let have = plan.schema();
        let exprs = wanted
            .iter()
            .map(|&i| {
                let shown = self.schema.field(i).name();
                let name = match i == last {
                    true => self.lance_measure(),
                    false => stored(&self.stored, shown),
                };
                let at = have.index_of(name)?;
                let c = Arc::new(Column::new(name, at))
                    as Arc<dyn datafusion::physical_expr::PhysicalExpr>;
                let c = match i == last {
                    true => {
                        datafusion::physical_expr::expressions::cast(c, &have, DataType::Float32)?
                    }
                    false => c,
                };
                Ok((c, shown.to_string()))
            })
            .collect::<Result<Vec<_>>>()?;
        let plan = Named::wrap(plan, self.dataset.uri());
        Ok(Arc::new(ProjectionExec::try_new(exprs, plan)?))
    }
}
