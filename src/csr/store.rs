//! Whole columns of a table, loaded on first use through its DataFusion table provider and kept
//! for later queries: the CSR operators take rows from them by ordinal / edge row position.
//! Row ids are not loaded where the table's layout gives them (a Lance dataset without deleted
//! rows or stable row ids): they are computed for the rows taken.

use crate::error::{Error, Result};
use crate::storage::ROW_ID;
use arrow::array::{Array, ArrayRef, UInt32Array, UInt64Array};
use datafusion::catalog::{Session, TableProvider};
use datafusion::execution::memory_pool::{MemoryConsumer, MemoryReservation};
use datafusion::physical_plan::collect;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};

pub struct TableColumns {
    provider: Arc<dyn TableProvider>,
    origin: String,
    cache: Mutex<HashMap<String, ArrayRef>>,
    /// The memory the loaded columns hold, reserved from the memory pool of the session that
    /// loaded the first of them (a graph's `memory_limit` counts them).
    reservation: Mutex<Option<MemoryReservation>>,
    /// Where the row ids come from without reading them.
    row_ids: Option<RowIds>,
}

/// The row ids of a table whose rows are numbered by position within their fragment: a Lance
/// dataset's `(fragment id << 32) | offset` where no fragment has deleted rows and row ids
/// are not stable.
#[derive(Debug, Clone, PartialEq)]
pub struct RowIds {
    /// First row position of each fragment, in scan order, then the row count.
    starts: Vec<u64>,
    /// Each fragment's id, shifted into the high half.
    bases: Vec<u64>,
}

impl RowIds {
    /// Of the table `provider` reads, where its layout gives them.
    fn of(provider: &dyn TableProvider) -> Option<Self> {
        let any: &dyn std::any::Any = provider;
        if let Some(t) = any.downcast_ref::<crate::storage::lance_table::LanceTable>() {
            let ds = t.dataset();
            // A column named `_rowid` that is not Lance's row id is read as it is.
            if !t.reads_row_ids() || ds.manifest().uses_stable_row_ids() {
                return None;
            }
            let (mut starts, mut bases) = (vec![0u64], Vec::new());
            for f in ds.fragments().iter() {
                if f.deletion_file.is_some() || f.id > u32::MAX as u64 {
                    return None;
                }
                let rows = f.physical_rows? as u64;
                starts.push(starts.last().expect("starts at 0") + rows);
                bases.push(f.id << 32);
            }
            return Some(Self { starts, bases });
        }
        // Tables in memory hold their row ids: loading them reads nothing.
        None
    }

    /// The row id of row position `pos`.
    #[inline]
    fn id(&self, pos: u32) -> Option<u64> {
        let pos = pos as u64;
        let f = match self.bases.len() {
            1 => 0,
            _ => self.starts.partition_point(|&s| s <= pos).checked_sub(1)?,
        };
        (pos < *self.starts.get(f + 1)?).then(|| self.bases[f] | (pos - self.starts[f]))
    }

    fn rows(&self) -> u64 {
        *self.starts.last().expect("starts at 0")
    }
}

impl std::fmt::Debug for TableColumns {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let loaded: Vec<String> = self
            .cache
            .lock()
            .map(|c| c.keys().cloned().collect())
            .unwrap_or_default();
        write!(f, "TableColumns {{ {}, loaded: {loaded:?} }}", self.origin)
    }
}

impl TableColumns {
    pub fn new(provider: Arc<dyn TableProvider>, origin: &str) -> Self {
        let row_ids = RowIds::of(provider.as_ref());
        Self {
            provider,
            origin: origin.to_string(),
            cache: Mutex::new(HashMap::new()),
            reservation: Mutex::new(None),
            row_ids,
        }
    }

    /// The type of a loaded column (of computed row ids: without computing them).
    pub fn data_type(&self, col: &str) -> Result<arrow::datatypes::DataType> {
        match (col, &self.row_ids) {
            (ROW_ID, Some(_)) => Ok(arrow::datatypes::DataType::UInt64),
            _ => Ok(self.get(col)?.data_type().clone()),
        }
    }

    /// The rows at `idx` of column `col` (loaded first, or row ids computed); null where
    /// `idx` is.
    pub fn take(&self, col: &str, idx: &UInt32Array) -> Result<ArrayRef> {
        if let (ROW_ID, Some(r)) = (col, &self.row_ids) {
            let past_end = || Error::storage(format!("{}: row past the end", self.origin));
            // Positions under a null are arbitrary: their ids are not read.
            let ids = match idx.nulls() {
                None => idx.values().iter().map(|&p| r.id(p)).collect(),
                Some(n) => (idx.values().iter().zip(n.iter()))
                    .map(|(&p, valid)| if valid { r.id(p) } else { Some(0) })
                    .collect::<Option<Vec<u64>>>(),
            };
            let ids = ids.ok_or_else(past_end)?;
            return Ok(Arc::new(UInt64Array::new(ids.into(), idx.nulls().cloned())));
        }
        Ok(arrow::compute::take(self.get(col)?.as_ref(), idx, None)?)
    }

    /// Loads the columns not loaded yet, in one scan (row ids the layout gives: not read).
    pub async fn ensure(&self, state: &dyn Session, cols: &[String]) -> Result<()> {
        let missing: Vec<String> = {
            let cache = self.cache.lock().expect("column cache lock");
            cols.iter()
                .filter(|c| !cache.contains_key(*c))
                .filter(|c| !(*c == ROW_ID && self.row_ids.is_some()))
                .cloned()
                .collect::<std::collections::BTreeSet<_>>()
                .into_iter()
                .collect()
        };
        if missing.is_empty() {
            return Ok(());
        }
        let schema = self.provider.schema();
        let indices = missing
            .iter()
            .map(|c| {
                schema
                    .index_of(c)
                    .map_err(|_| Error::storage(format!("{}: no column `{c}`", self.origin)))
            })
            .collect::<Result<Vec<_>>>()?;
        let plan = self.provider.scan(state, Some(&indices), &[], None).await?;
        let batches = collect(plan, state.task_ctx()).await?;
        let mut loaded = Vec::new();
        for (k, name) in missing.iter().enumerate() {
            // By name: a provider may return a projection in its own column order (Lance
            // returns table order, not the order asked for).
            let parts = batches
                .iter()
                .map(|b| {
                    b.schema()
                        .index_of(name)
                        .map(|i| b.column(i).as_ref())
                        .map_err(|_| {
                            Error::storage(format!("{}: scan lacks `{name}`", self.origin))
                        })
                })
                .collect::<Result<Vec<&dyn arrow::array::Array>>>()?;
            let col = if parts.is_empty() {
                arrow::array::new_empty_array(schema.field(indices[k]).data_type())
            } else {
                arrow::compute::concat(&parts)?
            };
            loaded.push((name.clone(), col));
        }
        let bytes: usize = loaded.iter().map(|(_, c)| c.get_array_memory_size()).sum();
        self.reservation
            .lock()
            .expect("column reservation lock")
            .get_or_insert_with(|| {
                MemoryConsumer::new(format!("columns of {}", self.origin))
                    .register(&state.runtime_env().memory_pool)
            })
            .try_grow(bytes)?;
        let mut cache = self.cache.lock().expect("column cache lock");
        for (n, c) in loaded {
            cache.insert(n, c);
        }
        Ok(())
    }

    /// Whether the table has column `col`.
    pub fn has(&self, col: &str) -> bool {
        self.provider.schema().index_of(col).is_ok()
    }

    /// A loaded column (call [`ensure`](Self::ensure) first); the whole row id column
    /// computed where the layout gives it (prefer [`take`](Self::take)).
    pub fn get(&self, col: &str) -> Result<ArrayRef> {
        if let Some(c) = self.cache.lock().expect("column cache lock").get(col) {
            return Ok(c.clone());
        }
        let (ROW_ID, Some(r)) = (col, &self.row_ids) else {
            return Err(Error::storage(format!(
                "{}: column `{col}` not loaded",
                self.origin
            )));
        };
        let rows = u32::try_from(r.rows())
            .map_err(|_| Error::storage(format!("{}: too many rows", self.origin)))?;
        let ids = self.take(col, &UInt32Array::from_iter_values(0..rows))?;
        let mut cache = self.cache.lock().expect("column cache lock");
        Ok(cache.entry(col.to_string()).or_insert(ids).clone())
    }

    pub async fn load(&self, state: &dyn Session, col: &str) -> Result<ArrayRef> {
        self.ensure(state, &[col.to_string()]).await?;
        self.get(col)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::storage::{write_lance, TableHandle, ROW_ID};
    use arrow::array::{Array, Int64Array, StringArray, UInt64Array};
    use arrow::datatypes::{DataType, Field, Schema};
    use arrow::record_batch::RecordBatch;
    use datafusion::prelude::SessionContext;

    /// Several columns loaded in one scan land under their own names, whatever order the
    /// provider returns them in (Lance returns table order, row id last).
    #[tokio::test]
    async fn columns_loaded_together_keep_their_names() {
        let dir = tempfile::tempdir().unwrap();
        let schema = Arc::new(Schema::new(vec![
            Field::new("b", DataType::Utf8, false),
            Field::new("a", DataType::Int64, false),
        ]));
        let batch = RecordBatch::try_new(
            schema.clone(),
            vec![
                Arc::new(StringArray::from(vec!["x", "y"])),
                Arc::new(Int64Array::from(vec![10, 20])),
            ],
        )
        .unwrap();
        let path = dir.path().join("t.lance");
        write_lance(&path, schema, vec![batch]).await.unwrap();
        let t = TableHandle::open_lance(&path, true, &Default::default(), None)
            .await
            .unwrap();
        let cols = TableColumns::new(t.provider.clone(), "t");
        let ctx = SessionContext::new();
        // Asked for in an order (sorted by name) that differs from the table's.
        cols.ensure(&ctx.state(), &[ROW_ID.to_string(), "b".into(), "a".into()])
            .await
            .unwrap();
        let a = cols.get("a").unwrap();
        assert_eq!(a.data_type(), &DataType::Int64);
        let b = cols.get("b").unwrap();
        assert_eq!(b.data_type(), &DataType::Utf8);
        let rid = cols.get(ROW_ID).unwrap();
        assert!(rid.as_any().downcast_ref::<UInt64Array>().is_some());
        assert_eq!(a.len(), 2);
    }

    /// Row ids computed from the fragments are the ones a scan reads, across fragments and
    /// for null positions; a dataset with a deleted row has them read.
    #[tokio::test]
    async fn row_ids_from_the_layout_are_the_ones_lance_reads() {
        use crate::storage::append_lance;
        let dir = tempfile::tempdir().unwrap();
        let schema = Arc::new(Schema::new(vec![Field::new("a", DataType::Int64, false)]));
        let part = |v: Vec<i64>| {
            RecordBatch::try_new(schema.clone(), vec![Arc::new(Int64Array::from(v))]).unwrap()
        };
        let path = dir.path().join("t.lance");
        write_lance(&path, schema.clone(), vec![part(vec![1, 2, 3])])
            .await
            .unwrap();
        append_lance(&path, schema.clone(), vec![part(vec![4, 5])])
            .await
            .unwrap();
        let ctx = SessionContext::new();
        let open = || async {
            TableHandle::open_lance(&path, true, &Default::default(), None)
                .await
                .unwrap()
        };
        let t = open().await;
        let cols = TableColumns::new(t.data_provider(), "t");
        assert_eq!(cols.row_ids.as_ref().map(|r| r.bases.len()), Some(2));
        let mut read = TableColumns::new(t.data_provider(), "t");
        read.row_ids = None;
        let loaded = read.load(&ctx.state(), ROW_ID).await.unwrap();
        assert_eq!(loaded.len(), 5);
        let idx = UInt32Array::from(vec![Some(4), None, Some(0), Some(3), Some(2)]);
        let want = arrow::compute::take(loaded.as_ref(), &idx, None).unwrap();
        assert_eq!(cols.take(ROW_ID, &idx).unwrap().as_ref(), want.as_ref());
        assert_eq!(cols.get(ROW_ID).unwrap().as_ref(), loaded.as_ref());
        assert!(cols.take(ROW_ID, &UInt32Array::from(vec![5])).is_err());
        // Nothing was scanned for them (the whole column asked for is kept).
        assert_eq!(cols.cache.lock().unwrap().len(), 1);

        // Opened without Lance's row ids, a column of that name is the table's own.
        let own = TableHandle::open_lance(&path, false, &Default::default(), None)
            .await
            .unwrap();
        assert!(TableColumns::new(own.data_provider(), "t")
            .row_ids
            .is_none());

        let mut ds = lance::Dataset::open(path.to_str().unwrap()).await.unwrap();
        ds.delete("a = 2").await.unwrap();
        let t = open().await;
        let cols = TableColumns::new(t.data_provider(), "t");
        assert!(cols.row_ids.is_none(), "deleted rows: read, not computed");
        let ids = cols.load(&ctx.state(), ROW_ID).await.unwrap();
        assert_eq!(ids.len(), 4);
    }
}
