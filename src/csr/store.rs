//! Whole columns of a table, loaded on first use through its DataFusion table provider and kept
//! for later queries: the CSR operators take rows from them by ordinal / edge row position.

use crate::error::{Error, Result};
use arrow::array::ArrayRef;
use datafusion::catalog::{Session, TableProvider};
use datafusion::physical_plan::collect;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};

pub struct TableColumns {
    provider: Arc<dyn TableProvider>,
    origin: String,
    cache: Mutex<HashMap<String, ArrayRef>>,
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
                    .map_err(|_| Error::Storage(format!("{}: no column `{c}`", self.origin)))
            })
            .collect::<Result<Vec<_>>>()?;
        let plan = self.provider.scan(state, Some(&indices), &[], None).await?;
        let batches = collect(plan, state.task_ctx()).await?;
        let mut loaded = Vec::new();
        for (k, name) in missing.iter().enumerate() {
            let parts: Vec<&dyn arrow::array::Array> =
                batches.iter().map(|b| b.column(k).as_ref()).collect();
            let col = if parts.is_empty() {
                arrow::array::new_empty_array(schema.field(indices[k]).data_type())
            } else {
                arrow::compute::concat(&parts)?
            };
            loaded.push((name.clone(), col));
        }
        let mut cache = self.cache.lock().expect("column cache lock");
        for (n, c) in loaded {
            cache.insert(n, c);
        }
        Ok(())
    }

    /// A loaded column (call [`ensure`](Self::ensure) first).
    pub fn get(&self, col: &str) -> Result<ArrayRef> {
        self.cache
            .lock()
            .expect("column cache lock")
            .get(col)
            .cloned()
            .ok_or_else(|| Error::Storage(format!("{}: column `{col}` not loaded", self.origin)))
    }

    pub async fn load(&self, state: &dyn Session, col: &str) -> Result<ArrayRef> {
        self.ensure(state, &[col.to_string()]).await?;
        self.get(col)
    }
}
