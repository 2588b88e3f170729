//! `LanceTable`: a DataFusion table provider over a Lance dataset that selects columns by their
//! field ids, so that any column name reads back as written.
//!
//! Lance's scanner resolves column names as field paths, which takes a name with a backquote
//! (`` `x` ``, `` x`y ``) for a quoted path and then finds no such column; a graph imported from
//! a CSV with such a header could not read it. Such a table is read whole (no projection, no
//! filter on those columns pushed into Lance) and its columns picked here.

use arrow::datatypes::{Schema, SchemaRef};
use datafusion::catalog::Session;
use datafusion::datasource::{TableProvider, TableType};
use datafusion::error::{DataFusionError, Result};
use datafusion::logical_expr::{Expr, TableProviderFilterPushDown};
use datafusion::physical_expr::expressions::Column;
use datafusion::physical_plan::projection::ProjectionExec;
use datafusion::physical_plan::ExecutionPlan;
use lance::Dataset;
use std::collections::{BTreeMap, HashMap, HashSet};
use std::sync::Arc;

#[derive(Debug)]
pub struct LanceTable {
    dataset: Arc<Dataset>,
    /// The dataset's columns by property name, then `_rowid` when asked for.
    schema: SchemaRef,
    row_id: Option<usize>,
    /// Property -> the column holding it, where they differ.
    stored: HashMap<String, String>,
    /// Rows of the dataset, at the state it was opened at.
    num_rows: usize,
}

impl LanceTable {
    /// The dataset's table; `columns` names the properties held under other column names
    /// (property -> column, see [`stored_names`]).
    pub fn new(
        dataset: Arc<Dataset>,
        with_row_id: bool,
        columns: &BTreeMap<String, String>,
        num_rows: usize,
    ) -> std::result::Result<Self, String> {
        let stored_schema = Schema::from(dataset.schema());
        if let Some(c) = columns
            .values()
            .find(|c| stored_schema.field_with_name(c).is_err())
        {
            return Err(format!("the dataset has no column `{c}`"));
        }
        let renamed: HashMap<String, String> = columns.clone().into_iter().collect();
        let mut fields = shown_schema(&dataset, &renamed).fields().to_vec();
        if with_row_id {
            super::check_row_id_free(fields.iter().map(|f| f.name().as_str()))?;
        }
        let row_id = with_row_id.then(|| {
            fields.push(Arc::new(row_id_field()));
            fields.len() - 1
        });
        Ok(Self {
            dataset,
            schema: Arc::new(Schema::new(fields)),
            row_id,
            stored: renamed,
            num_rows,
        })
    }

    pub fn num_rows(&self) -> usize {
        self.num_rows
    }

    /// A Lance scanner reading the columns `wanted` (indices into the table's schema; the
    /// row id's asks for Lance's), `filters` applied.
    pub(crate) fn scanner(
        &self,
        wanted: &[usize],
        filters: &[Expr],
    ) -> Result<lance::dataset::scanner::Scanner> {
        let columns: Vec<&str> = wanted
            .iter()
            .filter(|&&i| Some(i) != self.row_id)
            .map(|&i| self.stored(self.schema.field(i).name()))
            .collect();
        let mut scan = self.dataset.scan();
        project(&mut scan, &self.dataset, &columns).map_err(DataFusionError::from)?;
        if wanted.iter().any(|&i| Some(i) == self.row_id) {
            scan.with_row_id();
        }
        if let Some(filter) = filters.iter().cloned().reduce(Expr::and) {
            scan.filter_expr(over_stored(&self.stored, filter)?);
        }
        Ok(scan)
    }

    /// `scan`'s plan with the columns `wanted` in that order under their property names,
    /// then `extra` (a column of Lance's own, the name to show it under): Lance puts the row
    /// id last and may have read every column.
    pub(crate) async fn plan(
        &self,
        scan: &lance::dataset::scanner::Scanner,
        wanted: &[usize],
        extra: Option<(&str, &str)>,
    ) -> Result<Arc<dyn ExecutionPlan>> {
        let plan = scan.create_plan().await.map_err(DataFusionError::from)?;
        let have = plan.schema();
        let names: Vec<(&str, &str)> = (wanted.iter())
            .map(|&i| {
                let shown = self.schema.field(i).name().as_str();
                (self.stored(shown), shown)
            })
            .chain(extra)
            .collect();
        let same = names.len() == have.fields().len()
            && names
                .iter()
                .zip(have.fields())
                .all(|((_, shown), f)| f.name() == shown);
        let plan = Named::wrap(plan, self.dataset.uri());
        if same {
            return Ok(plan);
        }
        let exprs = (names.into_iter())
            .map(|(name, shown)| {
                let at = have.index_of(name)?;
                Ok((
                    Arc::new(Column::new(name, at))
                        as Arc<dyn datafusion::physical_expr::PhysicalExpr>,
                    shown.to_string(),
                ))
            })
            .collect::<Result<Vec<_>>>()?;
        Ok(Arc::new(ProjectionExec::try_new(exprs, plan)?))
    }

    /// Whether it reads Lance's row ids as the `_rowid` column (else no column is theirs).
    pub fn reads_row_ids(&self) -> bool {
        self.row_id.is_some()
    }

    pub fn dataset(&self) -> &Arc<Dataset> {
        &self.dataset
    }

    /// Property -> the column holding it, where they differ.
    pub fn columns(&self) -> &HashMap<String, String> {
        &self.stored
    }

    fn stored<'a>(&'a self, name: &'a str) -> &'a str {
        stored(&self.stored, name)
    }
}

/// The column holding property (or system column) `name`, given the renamed ones.
pub fn stored<'a>(renamed: &'a HashMap<String, String>, name: &'a str) -> &'a str {
    renamed.get(name).map_or(name, String::as_str)
}

/// `filter` (over property names) over the columns holding them.
pub fn over_stored(renamed: &HashMap<String, String>, filter: Expr) -> Result<Expr> {
    use datafusion::common::tree_node::{Transformed, TreeNode};
    if renamed.is_empty() {
        return Ok(filter);
    }
    Ok(filter
        .transform(|e| match e {
            Expr::Column(c) if renamed.contains_key(&c.name) => Ok(Transformed::yes(Expr::Column(
                datafusion::common::Column::new_unqualified(stored(renamed, &c.name)),
            ))),
            e => Ok(Transformed::no(e)),
        })?
        .data)
}

/// The dataset's columns as a table shows them: each under its property name.
pub fn shown_schema(dataset: &Dataset, renamed: &HashMap<String, String>) -> Schema {
    let shown: HashMap<&str, &str> = renamed
        .iter()
        .map(|(p, c)| (c.as_str(), p.as_str()))
        .collect();
    let stored = Schema::from(dataset.schema());
    Schema::new(
        stored
            .fields()
            .iter()
            .map(|f| match shown.get(f.name().as_str()) {
                Some(p) => Arc::new(f.as_ref().clone().with_name(*p)),
                None => f.clone(),
            })
            .collect::<Vec<_>>(),
    )
}

/// `schema` as the dataset stores it: each column of `renamed` (property -> column) under
/// its stored name ([`shown_schema`]'s inverse).
pub fn stored_schema(schema: &Schema, renamed: &BTreeMap<String, String>) -> SchemaRef {
    Arc::new(Schema::new(
        schema
            .fields()
            .iter()
            .map(|f| match renamed.get(f.name()) {
                Some(c) => Arc::new(f.as_ref().clone().with_name(c)),
                None => f.clone(),
            })
            .collect::<Vec<_>>(),
    ))
}

/// Selects the dataset columns `names` in `scan`; where Lance can't find one of them by its name
/// (see [`readable_by_name`]), every column is read instead: the caller picks its columns from
/// the batches by name.
pub fn project<T: AsRef<str>>(
    scan: &mut lance::dataset::scanner::Scanner,
    dataset: &Dataset,
    names: &[T],
) -> lance::Result<()> {
    if names.iter().all(|n| readable_by_name(dataset, n.as_ref())) {
        scan.project(names)?;
    }
    Ok(())
}

/// Whether Lance's scanner finds column `name` by its name: it reads names as field paths, so a
/// name with a backquote (`` `x` ``, `` x`y ``) is not found.
fn readable_by_name(dataset: &Dataset, name: &str) -> bool {
    name == super::ROW_ID || dataset.schema().field(name).is_some_and(|f| f.name == name)
}

/// The column names Lance would not store or find as given, with the name each is stored
/// under (property -> column): a `.` (Lance reads it as a path into a struct) or a backquote
/// (read as quoting) percent-encoded with `%` itself, and the leading `_` of a name Lance uses
/// for its own columns (`_rowid`); other names are stored as they are.
pub fn stored_names<'a>(names: impl IntoIterator<Item = &'a str>) -> BTreeMap<String, String> {
    let names: Vec<&str> = names.into_iter().collect();
    let mut taken: HashSet<String> = names.iter().map(|n| n.to_string()).collect();
    let mut out = BTreeMap::new();
    for &name in &names {
        let reserved = name.starts_with("_row") || name.starts_with("_distance");
        if !(name.contains(['.', '`']) || reserved) {
            continue;
        }
        let mut stored = String::new();
        for (i, c) in name.chars().enumerate() {
            match c {
                '.' => stored.push_str("%2E"),
                '`' => stored.push_str("%60"),
                '%' => stored.push_str("%25"),
                '_' if i == 0 && reserved => stored.push_str("%5F"),
                c => stored.push(c),
            }
        }
        // Unlike any column already there.
        let mut unique = stored.clone();
        let mut k = 2;
        while taken.contains(&unique) {
            unique = format!("{stored}~{k}");
            k += 1;
        }
        taken.insert(unique.clone());
        out.insert(name.to_string(), unique);
    }
    out
}

/// Lance's `_rowid` field (u64; nullable as Lance declares it).
pub fn row_id_field() -> arrow::datatypes::Field {
    arrow::datatypes::Field::new(super::ROW_ID, arrow::datatypes::DataType::UInt64, true)
}

#[async_trait::async_trait]
impl TableProvider for LanceTable {
    fn schema(&self) -> SchemaRef {
        self.schema.clone()
    }

    fn table_type(&self) -> TableType {
        TableType::Base
    }

    async fn scan(
        &self,
        state: &dyn Session,
        projection: Option<&Vec<usize>>,
        filters: &[Expr],
        limit: Option<usize>,
    ) -> Result<Arc<dyn ExecutionPlan>> {
        let all: Vec<usize> = (0..self.schema.fields().len()).collect();
        let wanted = projection.unwrap_or(&all);
        let mut scan = self.scanner(wanted, filters)?;
        scan.limit(limit.map(|l| l as i64), None)
            .map_err(DataFusionError::from)?;
        scan.scan_in_order(true);
        let _ = state;
        self.plan(&scan, wanted, None).await
    }

    /// Lance applies pushed filters exactly (through DataFusion), planned in a session of its
    /// own that knows DataFusion's functions but not ours: filters that call a function stay
    /// above the scan.
    fn supports_filters_pushdown(
        &self,
        filters: &[&Expr],
    ) -> Result<Vec<TableProviderFilterPushDown>> {
        Ok(filters
            .iter()
            .map(|f| {
                let names_ok = f
                    .column_refs()
                    .iter()
                    .all(|c| readable_by_name(&self.dataset, self.stored(&c.name)));
                if names_ok && calls_no_function(f) {
                    TableProviderFilterPushDown::Exact
                } else {
                    TableProviderFilterPushDown::Unsupported
                }
            })
            .collect())
    }
}

/// Whether `e` calls no function (columns, literals, operators, casts) and names no held
/// parameter (Lance plans it without our variables).
fn calls_no_function(e: &Expr) -> bool {
    use datafusion::common::tree_node::{TreeNode, TreeNodeRecursion};
    let mut plain = true;
    let _ = e.apply(|x| {
        if matches!(
            x,
            Expr::ScalarFunction(_)
                | Expr::AggregateFunction(_)
                | Expr::WindowFunction(_)
                | Expr::ScalarSubquery(_)
                | Expr::Exists(_)
                | Expr::InSubquery(_)
                | Expr::ScalarVariable(..)
        ) {
            plain = false;
            return Ok(TreeNodeRecursion::Stop);
        }
        Ok(TreeNodeRecursion::Continue)
    });
    plain
}

/// A Lance scan plan whose errors name the dataset (Lance's own say `failed to fill whole
/// buffer` without a file). Transparent otherwise: it shows, plans and runs as the plan it
/// wraps.
#[derive(Debug)]
struct Named {
    inner: Arc<dyn ExecutionPlan>,
    uri: Arc<str>,
}

impl Named {
    fn wrap(inner: Arc<dyn ExecutionPlan>, uri: &str) -> Arc<dyn ExecutionPlan> {
        Arc::new(Self {
            inner,
            uri: uri.into(),
        })
    }
}

impl datafusion::physical_plan::DisplayAs for Named {
    fn fmt_as(
        &self,
        t: datafusion::physical_plan::DisplayFormatType,
        f: &mut std::fmt::Formatter,
    ) -> std::fmt::Result {
        self.inner.fmt_as(t, f)
    }
}

impl ExecutionPlan for Named {
    fn name(&self) -> &str {
        self.inner.name()
    }

    fn properties(&self) -> &Arc<datafusion::physical_plan::PlanProperties> {
        self.inner.properties()
    }

    fn children(&self) -> Vec<&Arc<dyn ExecutionPlan>> {
        self.inner.children()
    }

    fn with_new_children(
        self: Arc<Self>,
        children: Vec<Arc<dyn ExecutionPlan>>,
    ) -> Result<Arc<dyn ExecutionPlan>> {
        Ok(Self::wrap(
            self.inner.clone().with_new_children(children)?,
            &self.uri,
        ))
    }

    fn execute(
        &self,
        partition: usize,
        context: Arc<datafusion::execution::TaskContext>,
    ) -> Result<datafusion::physical_plan::SendableRecordBatchStream> {
        use futures::StreamExt;
        let uri = self.uri.clone();
        let named = move |e: DataFusionError| {
            DataFusionError::from(crate::Error::storage_caused(
                format!("reading Lance dataset {uri}"),
                e,
            ))
        };
        let stream = self.inner.execute(partition, context).map_err(&named)?;
        Ok(Box::pin(
            datafusion::physical_plan::stream::RecordBatchStreamAdapter::new(
                stream.schema(),
                stream.map(move |b| b.map_err(&named)),
            ),
        ))
    }

    fn metrics(&self) -> Option<datafusion::physical_plan::metrics::MetricsSet> {
        self.inner.metrics()
    }

    fn partition_statistics(
        &self,
        partition: Option<usize>,
    ) -> Result<Arc<datafusion::common::Statistics>> {
        self.inner.partition_statistics(partition)
    }

    fn supports_limit_pushdown(&self) -> bool {
        self.inner.supports_limit_pushdown()
    }

    fn fetch(&self) -> Option<usize> {
        self.inner.fetch()
    }

    fn with_fetch(&self, limit: Option<usize>) -> Option<Arc<dyn ExecutionPlan>> {
        self.inner
            .with_fetch(limit)
            .map(|p| Self::wrap(p, &self.uri))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use arrow::array::{Int64Array, RecordBatch};
    use arrow::datatypes::{DataType, Field, Schema, SchemaRef};
    use datafusion::physical_plan::streaming::{PartitionStream, StreamingTableExec};

    /// A scan of ids 1, 2, 3 that fails after `good` batches (`None`: never) with Lance's
    /// own words.
    #[derive(Debug)]
    struct Scan {
        schema: SchemaRef,
        good: Option<usize>,
    }

    impl PartitionStream for Scan {
        fn schema(&self) -> &SchemaRef {
            &self.schema
        }

        fn execute(
            &self,
            _: Arc<datafusion::execution::TaskContext>,
        ) -> datafusion::execution::SendableRecordBatchStream {
            let batch = RecordBatch::try_new(
                self.schema.clone(),
                vec![Arc::new(Int64Array::from(vec![1, 2, 3]))],
            )
            .unwrap();
            let good = self.good;
            let items = (0..2).map(move |i| match good {
                Some(g) if i >= g => Err(DataFusionError::Execution(
                    "failed to fill whole buffer".into(),
                )),
                _ => Ok(batch.clone()),
            });
            Box::pin(
                datafusion::physical_plan::stream::RecordBatchStreamAdapter::new(
                    self.schema.clone(),
                    futures::stream::iter(items),
                ),
            )
        }
    }

    fn scan(good: Option<usize>) -> Arc<dyn ExecutionPlan> {
        let schema = Arc::new(Schema::new(vec![Field::new("id", DataType::Int64, false)]));
        let s = StreamingTableExec::try_new(
            schema.clone(),
            vec![Arc::new(Scan { schema, good })],
            None,
            vec![],
            false,
            None,
        )
        .unwrap();
        Named::wrap(Arc::new(s), "/data/person.lance")
    }

    /// `Named` shows and runs as the scan it wraps, and its errors (at the first batch or a
    /// later one) name the dataset.
    #[tokio::test]
    async fn a_named_scan_runs_as_its_scan_and_its_errors_name_the_dataset() {
        let ctx = Arc::new(datafusion::execution::TaskContext::default());
        let ok = datafusion::physical_plan::collect(scan(None), ctx.clone())
            .await
            .unwrap();
        assert_eq!(ok.iter().map(|b| b.num_rows()).sum::<usize>(), 6);
        assert_eq!(scan(None).name(), "StreamingTableExec");
        for good in [0, 1] {
            let e = datafusion::physical_plan::collect(scan(Some(good)), ctx.clone())
                .await
                .unwrap_err()
                .to_string();
            assert!(
                e.contains("reading Lance dataset /data/person.lance")
                    && e.contains("failed to fill whole buffer"),
                "{e}"
            );
        }
        // Given new children or a limit, it stays named.
        let again = scan(Some(0)).with_new_children(vec![]).unwrap();
        let e = datafusion::physical_plan::collect(again, ctx)
            .await
            .unwrap_err()
            .to_string();
        assert!(e.contains("/data/person.lance"), "{e}");
    }
}
