//! Table scans of distributed plans: a Lance dataset at one version, one partition per fragment,
//! or per range of rows of a fragment when a table has fewer fragments than the session's
//! target partitions, so the executors each read a share of the table. The scan is named by
//! reference (dataset, version, projection, filters, limit, the parts each partition reads),
//! never by data.

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
    /// Properties held under other column names (property -> column).
    #[serde(default)]
    pub columns: std::collections::BTreeMap<String, String>,
}

impl TableRef {
    fn renamed(&self) -> std::collections::HashMap<String, String> {
        self.columns.clone().into_iter().collect()
    }
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
        let mut fields = crate::storage::lance_table::shown_schema(&dataset, &table.renamed())
            .fields()
            .to_vec();
        if table.row_id {
            fields.push(Arc::new(crate::storage::lance_table::row_id_field()));
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
        state: &dyn Session,
        projection: Option<&Vec<usize>>,
        filters: &[Expr],
        limit: Option<usize>,
    ) -> Result<Arc<dyn ExecutionPlan>> {
        let mut fragments: Vec<(u64, Option<usize>)> = self
            .dataset
            .get_fragments()
            .iter()
            .map(|f| (f.id() as u64, f.metadata().physical_rows))
            .collect();
        fragments.sort_unstable();
        let config = state.config();
        let partitions = split(&fragments, config.target_partitions(), config.batch_size());
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
    /// What each output partition reads (at least one partition).
    pub partitions: Vec<ScanPart>,
}

/// What one partition of a scan reads.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub enum ScanPart {
    /// These fragments, whole.
    Fragments(Vec<u64>),
    /// The rows `start..end` (in order, deleted rows not counted) of one fragment.
    Rows { fragment: u64, start: u64, end: u64 },
}

impl fmt::Display for ScanPart {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        match self {
            ScanPart::Fragments(ids) => write!(f, "{ids:?}"),
            ScanPart::Rows {
                fragment,
                start,
                end,
            } => write!(f, "{fragment}[{start}..{end}]"),
        }
    }
}

/// The parts of a table of `fragments` (id, rows when known): a partition per fragment, or,
/// for fewer fragments than `target` partitions, ranges of rows of each, none smaller than
/// `min_rows` (the batch size: smaller tasks cost more than they share). Ranges are sized by
/// the fragments' physical rows, which count deleted rows too, so they cover every row.
fn split(fragments: &[(u64, Option<usize>)], target: usize, min_rows: usize) -> Vec<ScanPart> {
    let whole = |id: u64| ScanPart::Fragments(vec![id]);
    let total: usize = fragments.iter().filter_map(|(_, r)| *r).sum();
    let wanted = target.min(total / min_rows.max(1));
    if fragments.len() >= wanted || fragments.iter().any(|(_, r)| r.is_none()) {
        return fragments.iter().map(|(id, _)| whole(*id)).collect();
    }
    let mut parts = vec![];
    for &(id, rows) in fragments {
        let rows = rows.unwrap_or_default() as u64;
        // This fragment's share of the partitions, by its rows.
        let n = ((rows as u128 * wanted as u128) / total.max(1) as u128).max(1) as u64;
        let chunk = rows.div_ceil(n).max(1);
        if n == 1 {
            parts.push(whole(id));
            continue;
        }
        let mut start = 0;
        while start < rows {
            let end = (start + chunk).min(rows);
            parts.push(ScanPart::Rows {
                fragment: id,
                start,
                end,
            });
            start = end;
        }
    }
    parts
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
            spec.partitions.push(ScanPart::Fragments(vec![]));
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
        part: ScanPart,
    ) -> Result<futures::stream::BoxStream<'static, Result<RecordBatch>>> {
        let lance_err = |e: lance::Error| DataFusionError::External(Box::new(e));
        let (ids, range) = match part {
            ScanPart::Fragments(ids) => (ids, None),
            ScanPart::Rows {
                fragment,
                start,
                end,
            } => (vec![fragment], Some((start, end))),
        };
        let fragments = dataset
            .get_fragments()
            .into_iter()
            .filter(|f| ids.contains(&(f.id() as u64)))
            .map(|f| f.metadata().clone())
            .collect();
        let mut scan = dataset.scan();
        scan.with_fragments(fragments);
        let renamed = spec.table.renamed();
        let filter = spec
            .filters
            .into_iter()
            .reduce(Expr::and)
            .map(|f| crate::storage::lance_table::over_stored(&renamed, f))
            .transpose()?;
        let stored =
            move |name: &str| crate::storage::lance_table::stored(&renamed, name).to_string();
        let mut columns = vec![];
        for f in schema.fields() {
            if spec.table.row_id && f.name() == ROW_ID {
                scan.with_row_id();
            } else {
                columns.push(stored(f.name()));
            }
        }
        let filter_here = place_filter(&mut scan, filter, range.is_some(), &mut columns);
        crate::storage::lance_table::project(&mut scan, &dataset, &columns).map_err(lance_err)?;
        if columns.is_empty() && !schema.fields().iter().any(|f| f.name() == ROW_ID) {
            // Only the row count is wanted: Lance reads the row addresses for it.
            scan.with_row_address();
        }
        let limit = spec.limit.map(|l| l as u64);
        // A limit applies in Lance unless rows are filtered here (then: below).
        let limit_in_lance = limit.filter(|_| filter_here.is_none());
        let (len, offset) = match range {
            Some((start, end)) => (
                Some(limit_in_lance.map_or(end - start, |l| l.min(end - start))),
                Some(start as i64),
            ),
            None => (limit, None),
        };
        scan.limit(len.map(|l| l as i64), offset)
            .map_err(lance_err)?;
        let stream = scan.try_into_stream().await.map_err(lance_err)?;
        let batches = stream.map(move |b| {
            let mut b = b.map_err(lance_err)?;
            if let Some(f) = &filter_here {
                b = filtered(b, f)?;
            }
            // Lance puts `_rowid` last; output the columns in the plan's order.
            let cols = schema
                .fields()
                .iter()
                .map(|f| {
                    b.column_by_name(&stored(f.name())).cloned().ok_or_else(|| {
                        DataFusionError::Internal(format!("scan lost column {}", f.name()))
                    })
                })
                .collect::<Result<Vec<_>>>()?;
            Ok(RecordBatch::try_new_with_options(
                schema.clone(),
                cols,
                &arrow::array::RecordBatchOptions::new().with_row_count(Some(b.num_rows())),
            )?)
        });
        Ok(match (range.is_some(), limit) {
            // Filtered here: the limit applies to what passed the filter.
            (true, Some(limit)) => first_rows(batches.boxed(), limit),
            _ => batches.boxed(),
        })
    }
}

/// Where a scan's `filter` runs: in Lance, or (`ranged`: Lance applies an offset after its
/// filter, so a range of rows is read unfiltered) here, returned, with the columns it reads
/// added to `columns`.
fn place_filter(
    scan: &mut lance::dataset::scanner::Scanner,
    filter: Option<Expr>,
    ranged: bool,
    columns: &mut Vec<String>,
) -> Option<Expr> {
    let f = filter?;
    if !ranged {
        scan.filter_expr(f);
        return None;
    }
    let f = datafusion::logical_expr::expr_rewriter::unnormalize_col(f);
    for c in f.column_refs() {
        if !columns.contains(&c.name) && c.name != ROW_ID {
            columns.push(c.name.clone());
        }
        if c.name == ROW_ID {
            scan.with_row_id();
        }
    }
    Some(f)
}

/// The first `limit` rows of `batches`.
fn first_rows(
    batches: futures::stream::BoxStream<'static, Result<RecordBatch>>,
    limit: u64,
) -> futures::stream::BoxStream<'static, Result<RecordBatch>> {
    batches
        .scan(limit, |left, b| {
            let out = match b {
                Ok(_) if *left == 0 => None,
                Ok(b) => {
                    let n = (b.num_rows() as u64).min(*left);
                    *left -= n;
                    Some(Ok(b.slice(0, n as usize)))
                }
                Err(e) => Some(Err(e)),
            };
            futures::future::ready(out)
        })
        .boxed()
}

/// The rows of `batch` for which `predicate` (over its columns, by name) is true.
fn filtered(batch: RecordBatch, predicate: &Expr) -> Result<RecordBatch> {
    use datafusion::common::DFSchema;
    use datafusion::execution::context::ExecutionProps;
    let schema = DFSchema::try_from(batch.schema().as_ref().clone())?;
    let expr = datafusion::physical_expr::create_physical_expr(
        predicate,
        &schema,
        &ExecutionProps::new(),
    )?;
    let mask = expr.evaluate(&batch)?.into_array(batch.num_rows())?;
    let mask = mask
        .as_any()
        .downcast_ref::<arrow::array::BooleanArray>()
        .ok_or_else(|| DataFusionError::Internal("a scan filter is not boolean".into()))?;
    Ok(arrow::compute::filter_record_batch(&batch, mask)?)
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
            "FragmentScanExec: {}@v{}, columns=[{}], partitions=[{}]",
            self.spec.table.uri,
            self.spec.table.version,
            cols.join(", "),
            self.spec
                .partitions
                .iter()
                .map(|p| p.to_string())
                .collect::<Vec<_>>()
                .join(", ")
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
        let part = self
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
            part,
        );
        let stream = futures::stream::once(fut).try_flatten();
        Ok(Box::pin(RecordBatchStreamAdapter::new(
            self.schema.clone(),
            stream,
        )))
    }
}

#[cfg(test)]
mod tests {
    use super::{split, FragmentScanExec, FragmentTable, ScanPart, ScanSpec, TableRef};
    use datafusion::physical_plan::ExecutionPlan;
    use std::sync::Arc;

    /// A scan of two fragments of ids (1..=10, then 11..=15 appended): each partition reads
    /// its fragments or its range of rows, with the filters and the limit applied.
    #[test]
    fn a_fragment_scan_reads_each_partitions_fragments_or_rows() {
        crate::distributed::tests::deep(|| async {
            use arrow::array::{Int64Array, RecordBatch};
            use arrow::datatypes::{DataType, Field, Schema};
            use datafusion::logical_expr::{col, lit};
            let dir = tempfile::tempdir().unwrap();
            let path = dir.path().join("t.lance");
            let schema = Arc::new(Schema::new(vec![Field::new("id", DataType::Int64, false)]));
            let ids = |r: std::ops::RangeInclusive<i64>| {
                let a = Int64Array::from(r.collect::<Vec<_>>());
                vec![RecordBatch::try_new(schema.clone(), vec![Arc::new(a)]).unwrap()]
            };
            crate::write_lance(&path, schema.clone(), ids(1..=10))
                .await
                .unwrap();
            crate::append_lance(&path, schema.clone(), ids(11..=15))
                .await
                .unwrap();
            let table = TableRef {
                uri: path.to_string_lossy().to_string(),
                version: 2,
                row_id: false,
                columns: Default::default(),
            };
            let t = FragmentTable::open(table.clone()).await.unwrap();
            let read = |parts: Vec<ScanPart>, filters, limit| {
                let spec = ScanSpec {
                    table: table.clone(),
                    projection: None,
                    filters,
                    limit,
                    partitions: parts,
                };
                let scan = FragmentScanExec::try_new(spec, t.dataset.clone(), &t.schema).unwrap();
                async move {
                    let scan: Arc<dyn ExecutionPlan> = Arc::new(scan);
                    let ctx = Arc::new(datafusion::execution::TaskContext::default());
                    let mut out = vec![];
                    for p in 0..scan.properties().partitioning.partition_count() {
                        let batches = datafusion::physical_plan::common::collect(
                            scan.execute(p, ctx.clone()).unwrap(),
                        )
                        .await
                        .unwrap();
                        let mut got: Vec<i64> = batches
                            .iter()
                            .flat_map(|b| {
                                let c = b.column(0).as_any().downcast_ref::<Int64Array>();
                                c.unwrap().values().to_vec()
                            })
                            .collect();
                        got.sort_unstable();
                        out.push(got);
                    }
                    out
                }
            };
            let parts = vec![
                ScanPart::Fragments(vec![1]),
                ScanPart::Rows {
                    fragment: 0,
                    start: 2,
                    end: 5,
                },
            ];
            assert_eq!(
                read(parts, vec![], None).await,
                [vec![11, 12, 13, 14, 15], vec![3, 4, 5]]
            );
            let both = vec![ScanPart::Fragments(vec![0, 1])];
            assert_eq!(
                read(both.clone(), vec![col("id").gt(lit(12i64))], None).await,
                [vec![13, 14, 15]]
            );
            let range = vec![ScanPart::Rows {
                fragment: 0,
                start: 0,
                end: 10,
            }];
            assert_eq!(
                read(range, vec![col("id").gt(lit(7i64))], None).await,
                [vec![8, 9, 10]]
            );
            assert_eq!(read(both, vec![], Some(2)).await[0].len(), 2);
            // No parts: one partition, empty.
            assert_eq!(read(vec![], vec![], None).await, [Vec::<i64>::new()]);
        });
    }

    /// Every row of every fragment, in order, once.
    fn covered(parts: &[ScanPart], fragments: &[(u64, Option<usize>)]) -> bool {
        let mut seen: Vec<(u64, u64, u64)> = parts
            .iter()
            .flat_map(|p| match p {
                ScanPart::Fragments(ids) => ids
                    .iter()
                    .map(|id| {
                        let rows = fragments.iter().find(|f| f.0 == *id).unwrap().1;
                        (*id, 0, rows.unwrap_or_default() as u64)
                    })
                    .collect::<Vec<_>>(),
                ScanPart::Rows {
                    fragment,
                    start,
                    end,
                } => vec![(*fragment, *start, *end)],
            })
            .collect();
        seen.sort_unstable();
        fragments.iter().all(|(id, rows)| {
            let mut at = 0;
            for (_, s, e) in seen.iter().filter(|s| s.0 == *id) {
                if *s != at || e < s {
                    return false;
                }
                at = *e;
            }
            at == rows.unwrap_or_default() as u64
        })
    }

    #[test]
    fn tables_split_into_ranges_only_below_the_target() {
        // Enough fragments: one partition each.
        let many: Vec<_> = (0..4).map(|i| (i, Some(100_000))).collect();
        let parts = split(&many, 4, 8192);
        assert_eq!(parts.len(), 4);
        assert!(parts.iter().all(|p| matches!(p, ScanPart::Fragments(_))));
        // One big fragment: the target's number of ranges.
        let one = [(7, Some(100_001))];
        let parts = split(&one, 4, 8192);
        assert_eq!(parts.len(), 4, "{parts:?}");
        assert!(covered(&parts, &one));
        // Never a range smaller than a batch: 20,000 rows make two.
        let small = [(0, Some(20_000))];
        assert_eq!(split(&small, 8, 8192).len(), 2);
        assert_eq!(
            split(&[(0, Some(100))], 8, 8192),
            vec![ScanPart::Fragments(vec![0])]
        );
        // Uneven fragments share the partitions by their rows.
        let uneven = [(0, Some(90_000)), (3, Some(10_000)), (5, Some(0))];
        let parts = split(&uneven, 8, 1000);
        assert!(covered(&parts, &uneven), "{parts:?}");
        assert!(parts.len() >= 8, "{parts:?}");
        // Rows unknown (old datasets): whole fragments.
        let unknown = [(0, None), (1, Some(50_000))];
        assert_eq!(split(&unknown, 8, 100).len(), 2);
        // No fragments: no parts (the scan then has one empty partition).
        assert!(split(&[], 4, 8192).is_empty());
    }
}
