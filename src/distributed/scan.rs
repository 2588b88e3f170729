//! Table scans of distributed plans: a Lance dataset at one version, one partition per group of
//! fragments, so the executors each read a share of the table. The scan is named by reference
//! (dataset, version, projection, filters, limit, fragments per partition), never by data.

use super::block_on;
use crate::storage::ROW_ID;
use arrow::array::RecordBatch;
use arrow::datatypes::SchemaRef;
use async_trait::async_trait;
use datafusion::catalog::{Session, TableProvider};
use datafusion::common::{DataFusionError, Result};
use datafusion::datasource::TableType;
use datafusion::execution::TaskContext;
use datafusion::logical_expr::{Expr, TableProviderFilterPushDown};
use datafusion::physical_expr::EquivalenceProperties;
use datafusion::physical_plan::execution_plan::{Boundedness, EmissionType};
use datafusion::physical_plan::stream::RecordBatchStreamAdapter;
use datafusion::physical_plan::{
    DisplayAs, DisplayFormatType, ExecutionPlan, Partitioning, PlanProperties,
    SendableRecordBatchStream,
};
use futures::{StreamExt, TryStreamExt};
use lance::dataset::builder::DatasetBuilder;
use lance::Dataset;
use std::collections::HashMap;
use std::fmt;
use std::sync::{Arc, LazyLock, Mutex};

/// Datasets opened by this process, by (uri, version): each version is immutable.
static DATASETS: LazyLock<Mutex<HashMap<(String, u64), Arc<Dataset>>>> =
    LazyLock::new(Default::default);

/// The dataset at `uri` as of `version`.
pub async fn dataset(uri: &str, version: u64) -> Result<Arc<Dataset>> {
    let key = (uri.to_string(), version);
    if let Some(ds) = DATASETS.lock().unwrap_or_else(|e| e.into_inner()).get(&key) {
        return Ok(ds.clone());
    }
    let ds = DatasetBuilder::from_uri(uri)
        .with_version(version)
        .load()
        .await
        .map_err(|e| {
            DataFusionError::Plan(format!(
                "cannot open Lance dataset {uri} at version {version}: {}",
                crate::error::without_source_locations(&e.to_string())
            ))
        })?;
    let ds = Arc::new(ds);
    DATASETS
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .insert(key, ds.clone());
    Ok(ds)
}

/// What a table scan of a distributed plan reads.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct TableRef {
    pub uri: String,
    pub version: u64,
    /// Whether the table exposes Lance's `_rowid` (the last column).
    pub row_id: bool,
}

/// A Lance table whose scans are partitioned by fragments.
#[derive(Debug)]
pub struct FragmentTable {
    pub table: TableRef,
    dataset: Arc<Dataset>,
    schema: SchemaRef,
}

impl FragmentTable {
    pub async fn open(table: TableRef) -> Result<Self> {
        let dataset = dataset(&table.uri, table.version).await?;
        let mut fields: Vec<_> = arrow::datatypes::Schema::from(dataset.schema())
            .fields()
            .iter()
            .cloned()
            .collect();
        if table.row_id {
            fields.push(Arc::new(arrow::datatypes::Field::new(
                ROW_ID,
                arrow::datatypes::DataType::UInt64,
                true,
            )));
        }
        let schema = Arc::new(arrow::datatypes::Schema::new(fields));
        Ok(Self {
            table,
            dataset,
            schema,
        })
    }
}

#[async_trait]
impl TableProvider for FragmentTable {
    fn schema(&self) -> SchemaRef {
        self.schema.clone()
    }

    fn table_type(&self) -> TableType {
        TableType::Base
    }

    /// Lance applies the filters (as for `LanceTableProvider`).
    fn supports_filters_pushdown(
        &self,
        filters: &[&Expr],
    ) -> Result<Vec<TableProviderFilterPushDown>> {
        Ok(vec![TableProviderFilterPushDown::Exact; filters.len()])
    }

    async fn scan(
        &self,
        _state: &dyn Session,
        projection: Option<&Vec<usize>>,
        filters: &[Expr],
        limit: Option<usize>,
    ) -> Result<Arc<dyn ExecutionPlan>> {
        let mut ids: Vec<u64> = self
            .dataset
            .get_fragments()
            .iter()
            .map(|f| f.id() as u64)
            .collect();
        ids.sort_unstable();
        let partitions = ids.into_iter().map(|id| vec![id]).collect();
        let scan = ScanSpec {
            table: self.table.clone(),
            projection: projection.cloned(),
            filters: filters.to_vec(),
            limit,
            partitions,
        };
        Ok(Arc::new(FragmentScanExec::try_new(
            scan,
            self.dataset.clone(),
            &self.schema,
        )?))
    }
}

/// Everything a fragment scan is made of.
#[derive(Debug, Clone)]
pub struct ScanSpec {
    pub table: TableRef,
    /// Columns of the table's schema (with `_rowid` last when exposed).
    pub projection: Option<Vec<usize>>,
    pub filters: Vec<Expr>,
    pub limit: Option<usize>,
    /// Fragment ids per output partition (at least one partition).
    pub partitions: Vec<Vec<u64>>,
}

/// A scan of some fragments of a Lance dataset per partition.
#[derive(Debug)]
pub struct FragmentScanExec {
    pub spec: ScanSpec,
    dataset: Arc<Dataset>,
    schema: SchemaRef,
    cache: Arc<PlanProperties>,
}

impl FragmentScanExec {
    pub fn try_new(mut spec: ScanSpec, dataset: Arc<Dataset>, table: &SchemaRef) -> Result<Self> {
        if spec.partitions.is_empty() {
            spec.partitions.push(vec![]);
        }
        let schema = match &spec.projection {
            Some(p) => Arc::new(table.project(p)?),
            None => table.clone(),
        };
        let cache = Arc::new(PlanProperties::new(
            EquivalenceProperties::new(schema.clone()),
            Partitioning::UnknownPartitioning(spec.partitions.len()),
            EmissionType::Incremental,
            Boundedness::Bounded,
        ));
        Ok(Self {
            spec,
            dataset,
            schema,
            cache,
        })
    }

    /// Opens the dataset a decoded scan reads (blocking: decoding is synchronous).
    pub fn resolve(spec: ScanSpec) -> Result<Self> {
        let table = spec.table.clone();
        let t = block_on(move || async move { FragmentTable::open(table).await })?;
        Self::try_new(spec, t.dataset, &t.schema)
    }

    async fn stream(
        dataset: Arc<Dataset>,
        spec: ScanSpec,
        schema: SchemaRef,
        ids: Vec<u64>,
    ) -> Result<impl futures::Stream<Item = Result<RecordBatch>>> {
        let lance_err = |e: lance::Error| DataFusionError::External(Box::new(e));
        let fragments = dataset
            .get_fragments()
            .into_iter()
            .filter(|f| ids.contains(&(f.id() as u64)))
            .map(|f| f.metadata().clone())
            .collect();
        let mut scan = dataset.scan();
        scan.with_fragments(fragments);
        let mut columns = vec![];
        for f in schema.fields() {
            if spec.table.row_id && f.name() == ROW_ID {
                scan.with_row_id();
            } else {
                columns.push(f.name().clone());
            }
        }
        scan.project(&columns).map_err(lance_err)?;
        if schema.fields().is_empty() {
            // Only the row count is wanted: Lance reads the row addresses for it.
            scan.with_row_address();
        }
        if let Some(f) = spec.filters.into_iter().reduce(Expr::and) {
            scan.filter_expr(f);
        }
        scan.limit(spec.limit.map(|l| l as i64), None)
            .map_err(lance_err)?;
        let stream = scan.try_into_stream().await.map_err(lance_err)?;
        // Lance puts `_rowid` last; output the columns in the plan's order.
        Ok(stream.map(move |b| {
            let b = b.map_err(lance_err)?;
            let cols = schema
                .fields()
                .iter()
                .map(|f| {
                    b.column_by_name(f.name()).cloned().ok_or_else(|| {
                        DataFusionError::Internal(format!("scan lost column {}", f.name()))
                    })
                })
                .collect::<Result<Vec<_>>>()?;
            Ok(RecordBatch::try_new_with_options(
                schema.clone(),
                cols,
                &arrow::array::RecordBatchOptions::new().with_row_count(Some(b.num_rows())),
            )?)
        }))
    }
}

impl DisplayAs for FragmentScanExec {
    fn fmt_as(&self, _t: DisplayFormatType, f: &mut fmt::Formatter) -> fmt::Result {
        let cols: Vec<_> = self
            .schema
            .fields()
            .iter()
            .map(|f| f.name().clone())
            .collect();
        write!(
            f,
            "FragmentScanExec: {}@v{}, columns=[{}], partitions={:?}",
            self.spec.table.uri,
            self.spec.table.version,
            cols.join(", "),
            self.spec.partitions
        )?;
        if !self.spec.filters.is_empty() {
            let fs: Vec<_> = self.spec.filters.iter().map(|e| e.to_string()).collect();
            write!(f, ", filters=[{}]", fs.join(", "))?;
        }
        if let Some(l) = self.spec.limit {
            write!(f, ", limit={l}")?;
        }
        Ok(())
    }
}

impl ExecutionPlan for FragmentScanExec {
    fn name(&self) -> &str {
        "FragmentScanExec"
    }

    fn properties(&self) -> &Arc<PlanProperties> {
        &self.cache
    }

    fn children(&self) -> Vec<&Arc<dyn ExecutionPlan>> {
        vec![]
    }

    fn with_new_children(
        self: Arc<Self>,
        _children: Vec<Arc<dyn ExecutionPlan>>,
    ) -> Result<Arc<dyn ExecutionPlan>> {
        Ok(self)
    }

    fn execute(
        &self,
        partition: usize,
        _context: Arc<TaskContext>,
    ) -> Result<SendableRecordBatchStream> {
        let ids = self
            .spec
            .partitions
            .get(partition)
            .cloned()
            .ok_or_else(|| {
                DataFusionError::Internal(format!("FragmentScanExec has no partition {partition}"))
            })?;
        let fut = Self::stream(
            self.dataset.clone(),
            self.spec.clone(),
            self.schema.clone(),
            ids,
        );
        let stream = futures::stream::once(fut).try_flatten();
        Ok(Box::pin(RecordBatchStreamAdapter::new(
            self.schema.clone(),
            stream,
        )))
    }
}
