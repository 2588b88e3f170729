//! Whole columns of a table, loaded on first use through its DataFusion table provider and kept
//! for later queries: the CSR operators take rows from them by ordinal / edge row position.

use crate::error::{Error, Result};
use arrow::array::ArrayRef;
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
        Self {
            provider,
            origin: origin.to_string(),
            cache: Mutex::new(HashMap::new()),
            reservation: Mutex::new(None),
        }
    }

    /// Loads the columns not loaded yet, in one scan.
    pub async fn ensure(&self, state: &dyn Session, cols: &[String]) -> Result<()> {
        let missing: Vec<String> = {
            let cache = self.cache.lock().expect("column cache lock");
            cols.iter()
                .filter(|c| !cache.contains_key(*c))
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

    /// A loaded column (call [`ensure`](Self::ensure) first).
    pub fn get(&self, col: &str) -> Result<ArrayRef> {
        self.cache
            .lock()
            .expect("column cache lock")
            .get(col)
            .cloned()
            .ok_or_else(|| Error::storage(format!("{}: column `{col}` not loaded", self.origin)))
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
}
