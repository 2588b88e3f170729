//! `SearchTable`: a node table's rows as one of Lance's searches finds them, nearest vectors
//! or matching text, through the dataset's own index where it has one (Lance searches
//! unindexed rows exactly). Its rows are the table's columns and the search's own measure:
//! `_distance` (smaller is nearer) or `_score` (BM25, larger is better), under [`measure`].

use super::lance_table::{stored, LanceTable};
use crate::config::VectorMetric;
use arrow::array::Float32Array;
use arrow::datatypes::{DataType, Field, Schema, SchemaRef};
use datafusion::catalog::Session;
use datafusion::datasource::{TableProvider, TableType};
use datafusion::error::{DataFusionError, Result};
use datafusion::logical_expr::Expr;
use datafusion::physical_plan::ExecutionPlan;
use lance_index::scalar::inverted::query::FtsQuery;
use lance_index::scalar::FullTextSearchQuery;
use std::sync::Arc;

/// Candidates an HNSW index search keeps at least (Lance's `ef`).
const SEARCH_WIDTH: usize = 100;

/// Rows an index search finds per row asked for, re-ranked exactly.
const REFINE_FACTOR: u32 = 2;

/// What to search for.
#[derive(Debug, Clone, PartialEq)]
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
    /// The table searched (a [`LanceTable`]): it reads the columns, and the filters it takes
    /// are Lance's prefilters.
    table: Arc<dyn TableProvider>,
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
        any.downcast_ref::<LanceTable>()?;
        let shown = table.schema();
        let props: Vec<(String, DataType)> = (shown.fields().iter())
            .map(|f| (f.name().clone(), f.data_type().clone()))
            .collect();
        let mut fields: Vec<Field> = shown.fields().iter().map(|f| f.as_ref().clone()).collect();
        fields.push(Field::new(measure(&props), DataType::Float32, true));
        Some(Self {
            table,
            schema: Arc::new(Schema::new(fields)),
            search,
        })
    }

    /// What it searches for.
    #[cfg(test)]
    pub fn search(&self) -> &LanceSearch {
        &self.search
    }

    fn lance(&self) -> &LanceTable {
        let any: &dyn std::any::Any = self.table.as_ref();
        any.downcast_ref().expect("checked in `over`")
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
        let (columns, measure): (Vec<usize>, Vec<usize>) = wanted.iter().partition(|&&i| i != last);
        let lance = self.lance();
        let column = |property: &str| stored(lance.columns(), property).to_string();
        // No search finds more rows than the table has: Lance sizes its buffers by what is
        // asked for.
        let rows = lance.num_rows();
        let mut scan = lance.scanner(&columns, filters)?;
        let lance_measure = match &self.search {
            LanceSearch::Nearest {
                column: c,
                query,
                k,
                metric,
            } => {
                let q = Float32Array::from(query.clone());
                let k = (*k).min(rows).max(1);
                scan.nearest(&column(c), &q, k)
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
                "_distance"
            }
            LanceSearch::Text {
                column: c,
                query,
                limit,
            } => {
                let mut q = FullTextSearchQuery::new_query(query.clone().with_column(column(c)));
                q.limit = limit.map(|l| l.min(rows) as i64);
                scan.full_text_search(q).map_err(DataFusionError::from)?;
                "_score"
            }
        };
        // The filters the table took apply before the search: the best rows among those
        // that pass.
        if !filters.is_empty() {
            scan.prefilter(true);
        }
        let shown = self.schema.field(last).name();
        let extra = (!measure.is_empty()).then_some((lance_measure, shown.as_str()));
        lance.plan(&scan, &columns, extra).await
    }
}
