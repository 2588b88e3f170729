//! `KeyStatisticsProvider` (SPEC 6.2): wraps a table provider and reports the number of
//! distinct values (NDV) of its node-key or edge-endpoint columns, so that DataFusion's
//! equi-join estimate `L x R / max(NDV)` sees graph joins for what they are. Without it a
//! multi-million-row intermediate of a join chain is estimated at a few rows and built as one
//! single-threaded `CollectLeft` hash table.
//!
//! The counts come from the CSR where there is one (a node table's key: one value per row; an
//! edge table's sources / targets: the nodes with an out- / in-edge), else from one scan of
//! the columns on first use. The provider belongs to one opened dataset version, so the cache
//! is per version. Scans are wrapped in [`KeyStatisticsExec`], which adds the counts to the
//! inner scan's statistics (row counts and the rest stay the inner's); switched off
//! (`RuleSwitches::key_statistics`), scans are the inner's.

use arrow::array::RecordBatch;
use arrow::datatypes::SchemaRef;
use async_trait::async_trait;
use datafusion::catalog::{Session, TableProvider};
use datafusion::common::stats::Precision;
use datafusion::common::{Result, Statistics};
use datafusion::datasource::TableType;
use datafusion::execution::TaskContext;
use datafusion::logical_expr::{Expr, TableProviderFilterPushDown};
use datafusion::physical_plan::{
    collect, DisplayAs, DisplayFormatType, ExecutionPlan, PlanProperties, SendableRecordBatchStream,
};
use std::collections::{BTreeMap, HashSet};
use std::fmt;
use std::sync::{Arc, Mutex};

#[derive(Debug)]
pub struct KeyStatisticsProvider {
    inner: Arc<dyn TableProvider>,
    /// Rows in the table (the opened version).
    rows: usize,
    /// The key / endpoint columns.
    keys: Vec<String>,
    /// Distinct counts known so far (given from the CSR, or scanned once).
    ndv: Mutex<BTreeMap<String, usize>>,
}

impl KeyStatisticsProvider {
    pub fn new(inner: Arc<dyn TableProvider>, rows: usize, keys: Vec<String>) -> Self {
        Self {
            inner,
            rows,
            keys,
            ndv: Mutex::new(BTreeMap::new()),
        }
    }

    pub fn inner(&self) -> &Arc<dyn TableProvider> {
        &self.inner
    }

    /// A distinct count known from elsewhere (the CSR).
    pub fn set_distinct(&self, column: &str, n: usize) {
        self.ndv
            .lock()
            .expect("ndv lock")
            .insert(column.to_string(), n);
    }

    pub fn distinct(&self, column: &str) -> Option<usize> {
        self.ndv.lock().expect("ndv lock").get(column).copied()
    }

    /// Counts the key columns not known yet, in one scan.
    async fn ensure(&self, state: &dyn Session) -> Result<()> {
        let schema = self.inner.schema();
        let missing: Vec<usize> = self
            .keys
            .iter()
            .filter(|k| self.distinct(k).is_none())
            .filter_map(|k| schema.index_of(k).ok())
            .collect();
        if missing.is_empty() {
            return Ok(());
        }
        let plan = self.inner.scan(state, Some(&missing), &[], None).await?;
        let batches = collect(plan, state.task_ctx()).await?;
        for &i in &missing {
            let name = schema.field(i).name();
            self.set_distinct(name, distinct_values(&batches, name)?);
        }
        Ok(())
    }
}

/// Distinct non-null values of a column over batches (integers directly, any other type
/// compared in Arrow's row format).
fn distinct_values(batches: &[RecordBatch], name: &str) -> Result<usize> {
    let ext = datafusion::error::DataFusionError::from;
    if batches.first().is_some_and(|b| {
        b.schema()
            .field_with_name(name)
            .is_ok_and(|f| f.data_type().is_integer())
    }) {
        let mut seen: HashSet<i64> = HashSet::new();
        for b in batches {
            let col =
                crate::csr::as_i64(b.column(b.schema().index_of(name)?).as_ref()).map_err(ext)?;
            seen.extend(col.iter().flatten());
        }
        return Ok(seen.len());
    }
    let mut seen: HashSet<Vec<u8>> = HashSet::new();
    for b in batches {
        let col = b.column(b.schema().index_of(name)?).clone();
        let conv = arrow::row::RowConverter::new(vec![arrow::row::SortField::new(
            col.data_type().clone(),
        )])?;
        let rows = conv.convert_columns(std::slice::from_ref(&col))?;
        for i in 0..col.len() {
            if !col.is_null(i) {
                seen.insert(rows.row(i).as_ref().to_vec());
            }
        }
    }
    Ok(seen.len())
}

fn key_statistics_on(state: &dyn Session) -> bool {
    state
        .config()
        .get_extension::<crate::config::rules::RuleSwitches>()
        .is_none_or(|r| r.key_statistics)
}

#[async_trait]
impl TableProvider for KeyStatisticsProvider {
    fn schema(&self) -> SchemaRef {
        self.inner.schema()
    }

    fn table_type(&self) -> TableType {
        self.inner.table_type()
    }

    /// The row count and the known distinct counts (used by our own estimates; DataFusion
    /// reads the scan's statistics).
    fn statistics(&self) -> Option<Statistics> {
        let schema = self.inner.schema();
        let mut s = Statistics::new_unknown(&schema);
        s.num_rows = Precision::Exact(self.rows);
        for (i, f) in schema.fields().iter().enumerate() {
            if let Some(n) = self.distinct(f.name()) {
                s.column_statistics[i].distinct_count = Precision::Exact(n);
            }
        }
        Some(s)
    }

    fn supports_filters_pushdown(
        &self,
        filters: &[&Expr],
    ) -> Result<Vec<TableProviderFilterPushDown>> {
        self.inner.supports_filters_pushdown(filters)
    }

    async fn scan(
        &self,
        state: &dyn Session,
        projection: Option<&Vec<usize>>,
        filters: &[Expr],
        limit: Option<usize>,
    ) -> Result<Arc<dyn ExecutionPlan>> {
        let plan = self.inner.scan(state, projection, filters, limit).await?;
        if !key_statistics_on(state) {
            return Ok(plan);
        }
        self.ensure(state).await?;
        let schema = self.inner.schema();
        let columns: Vec<usize> = match projection {
            Some(p) => p.clone(),
            None => (0..schema.fields().len()).collect(),
        };
        // Filters or a limit keep a subset: the counts become upper bounds.
        let exact = filters.is_empty() && limit.is_none();
        let ndv: Vec<Option<Precision<usize>>> = columns
            .iter()
            .map(|&i| {
                self.distinct(schema.field(i).name()).map(|n| {
                    if exact {
                        Precision::Exact(n)
                    } else {
                        Precision::Inexact(n)
                    }
                })
            })
            .collect();
        if ndv.iter().all(Option::is_none) {
            return Ok(plan);
        }
        Ok(Arc::new(KeyStatisticsExec { inner: plan, ndv }))
    }
}

/// A scan with distinct counts added to its statistics; runs the inner scan unchanged.
#[derive(Debug)]
pub struct KeyStatisticsExec {
    inner: Arc<dyn ExecutionPlan>,
    /// Per output column.
    ndv: Vec<Option<Precision<usize>>>,
}

impl DisplayAs for KeyStatisticsExec {
    fn fmt_as(&self, _t: DisplayFormatType, f: &mut fmt::Formatter) -> fmt::Result {
        let schema = self.inner.schema();
        let cols: Vec<String> = self
            .ndv
            .iter()
            .enumerate()
            .filter_map(|(i, n)| {
                n.as_ref()
                    .and_then(|n| n.get_value().copied())
                    .map(|n| format!("{}={n}", schema.field(i).name()))
            })
            .collect();
        write!(f, "KeyStatisticsExec: ndv=[{}]", cols.join(", "))
    }
}

impl ExecutionPlan for KeyStatisticsExec {
    fn name(&self) -> &str {
        "KeyStatisticsExec"
    }

    fn properties(&self) -> &Arc<PlanProperties> {
        self.inner.properties()
    }

    fn children(&self) -> Vec<&Arc<dyn ExecutionPlan>> {
        vec![&self.inner]
    }

    fn with_new_children(
        self: Arc<Self>,
        mut children: Vec<Arc<dyn ExecutionPlan>>,
    ) -> Result<Arc<dyn ExecutionPlan>> {
        if children.len() != 1 {
            return datafusion::common::internal_err!(
                "KeyStatisticsExec takes one input, got {}",
                children.len()
            );
        }
        Ok(Arc::new(Self {
            inner: children.swap_remove(0),
            ndv: self.ndv.clone(),
        }))
    }

    fn maintains_input_order(&self) -> Vec<bool> {
        vec![true]
    }

    /// Rows pass through unchanged: a limit may go below.
    fn supports_limit_pushdown(&self) -> bool {
        true
    }

    fn execute(
        &self,
        partition: usize,
        context: Arc<TaskContext>,
    ) -> Result<SendableRecordBatchStream> {
        self.inner.execute(partition, context)
    }

    fn partition_statistics(&self, partition: Option<usize>) -> Result<Arc<Statistics>> {
        let inner = self.inner.partition_statistics(partition)?;
        if partition.is_some() {
            // Per partition the counts are unknown.
            return Ok(inner);
        }
        let mut s = inner.as_ref().clone();
        for (c, n) in s.column_statistics.iter_mut().zip(&self.ndv) {
            if let Some(n) = n {
                c.distinct_count = *n;
            }
        }
        Ok(Arc::new(s))
    }
}

#[cfg(test)]
mod tests {
    use crate::session::Graph;

    /// The scan's rows unchanged, with each key column's distinct count in its statistics:
    /// exact over the whole table, an upper bound under a filter or a limit.
    #[tokio::test]
    async fn a_scan_with_key_statistics_keeps_its_rows_and_counts_its_keys() {
        use super::KeyStatisticsProvider;
        use arrow::array::{Int64Array, RecordBatch};
        use arrow::datatypes::{DataType, Field, Schema};
        use datafusion::catalog::{MemTable, TableProvider};
        use datafusion::common::stats::Precision;
        use std::sync::Arc;
        let schema = Arc::new(Schema::new(vec![
            Field::new("src", DataType::Int64, false),
            Field::new("w", DataType::Int64, false),
        ]));
        let batch = RecordBatch::try_new(
            schema.clone(),
            vec![
                Arc::new(Int64Array::from(vec![1, 1, 2, 5, 5, 5])),
                Arc::new(Int64Array::from(vec![1, 2, 3, 4, 5, 6])),
            ],
        )
        .unwrap();
        let mem = Arc::new(MemTable::try_new(schema, vec![vec![batch]]).unwrap());
        let p = KeyStatisticsProvider::new(mem, 6, vec!["src".into()]);
        let options = crate::config::options::GraphOptions::default();
        let ctx = crate::optimizer::session::session(&options, Default::default()).unwrap();
        let state = ctx.state();
        let plan = p.scan(&state, None, &[], None).await.unwrap();
        assert_eq!(plan.name(), "KeyStatisticsExec");
        let stats = plan.partition_statistics(None).unwrap();
        assert_eq!(
            stats.column_statistics[0].distinct_count,
            Precision::Exact(3)
        );
        assert_eq!(stats.column_statistics[1].distinct_count, Precision::Absent);
        let rows = datafusion::physical_plan::collect(plan, ctx.task_ctx())
            .await
            .unwrap();
        assert_eq!(rows.iter().map(|b| b.num_rows()).sum::<usize>(), 6);
        // Counted once: a known count is not scanned for again.
        assert_eq!(p.distinct("src"), Some(3));
        let limited = p.scan(&state, Some(&vec![0]), &[], Some(2)).await.unwrap();
        let stats = limited.partition_statistics(None).unwrap();
        assert_eq!(
            stats.column_statistics[0].distinct_count,
            Precision::Inexact(3)
        );
    }

    async fn run(g: &Graph, q: &str) -> crate::QueryResult {
        g.query(q, &crate::Params::new()).await.unwrap()
    }

    fn lines(r: &crate::QueryResult) -> Vec<String> {
        crate::output::rows(r)
            .into_iter()
            .map(|r| r.join("|"))
            .collect()
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn distinct_counts_from_the_csr_and_from_a_scan_agree() {
        let csr = crate::session::Graph::sample().await.unwrap();
        let join = csr
            .with_mode(crate::config::rules::Mode::Join)
            .await
            .unwrap();
        // The join path counts on its first scan.
        run(
            &join,
            "MATCH (a:Person)-[:KNOWS]->(b:Person) RETURN count(*)",
        )
        .await;
        let truth = lines(
            &run(
                &csr,
                "MATCH (a:Person)-[:KNOWS]->(b:Person) RETURN count(DISTINCT a) AS s, count(DISTINCT b) AS d",
            )
            .await,
        );
        for g in [&csr, &join] {
            let knows = g
                .catalog()
                .rels
                .iter()
                .find(|r| r.cfg.rel_type == "KNOWS")
                .unwrap();
            let p = crate::catalog::key_statistics(&knows.table).unwrap();
            let got = format!(
                "{}|{}",
                p.distinct(&knows.cfg.src).unwrap(),
                p.distinct(&knows.cfg.dst).unwrap()
            );
            assert_eq!(vec![got], truth);
            let person = &g.catalog().nodes["Person"];
            let p = crate::catalog::key_statistics(&person.table).unwrap();
            assert_eq!(p.distinct("id"), Some(person.table.num_rows));
        }
    }
}
