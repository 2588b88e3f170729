//! Storage: node and relationship tables from Lance datasets (through the `lance` crate) or
//! in-memory Arrow batches, exposed to DataFusion as table providers.

pub mod import;
pub mod lance_table;
pub mod search;
pub mod search_index;
pub mod stats;
pub mod swap;
pub mod text_query;

use crate::config::options::AsOf;
use crate::error::{Error, Result};
use arrow::array::{RecordBatch, RecordBatchIterator, UInt64Array};
use arrow::datatypes::{DataType, Field, Schema, SchemaRef};
use datafusion::catalog::TableProvider;
use datafusion::datasource::MemTable;
use lance::dataset::{WriteMode, WriteParams};
use lance::Dataset;
use object_store::ObjectStoreExt;
use std::path::Path;
use std::sync::Arc;

/// Name of the row-id column every relationship table exposes (Lance's own `_rowid`).
pub const ROW_ID: &str = "_rowid";

/// A relationship table's columns may not be named [`ROW_ID`]: the engine reads its edges'
/// row ids under that name.
pub(crate) fn check_row_id_free<'a>(
    mut names: impl Iterator<Item = &'a str>,
) -> std::result::Result<(), String> {
    match names.any(|n| n == ROW_ID) {
        true => Err(format!(
            "a relationship table's column may not be named `{ROW_ID}` (the name of its \
             edges' row ids); rename it"
        )),
        false => Ok(()),
    }
}

/// An opened table.
#[derive(Debug, Clone)]
pub struct TableHandle {
    pub provider: Arc<dyn TableProvider>,
    /// The table's columns as stored (without the row-id column).
    pub schema: SchemaRef,
    /// Where it came from, for messages.
    pub origin: String,
    /// Identity of the Lance dataset's state (its version number, that version's commit
    /// time and the row count, mixed): a dataset deleted and re-created, whose numbering
    /// starts again, gets another. `None` for in-memory tables. Index files are stamped with it.
    pub version: Option<u64>,
    /// The Lance dataset's version number (`None` for in-memory tables).
    pub lance_version: Option<u64>,
    pub num_rows: usize,
}

impl TableHandle {
    /// The provider that reads the data, without the statistics wrapper: index builds and
    /// column loads read columns, they need no join statistics (and must not trigger their
    /// counting scan).
    pub fn data_provider(&self) -> Arc<dyn TableProvider> {
        match self.key_statistics() {
            Some(p) => p.inner().clone(),
            None => self.provider.clone(),
        }
    }

    /// Whether its Lance dataset has a version newer than the one read, or the manifest read
    /// was replaced (a dataset deleted and written again, its numbering started over): a
    /// look at the dataset's latest version and at the manifest file's tag, no manifest
    /// read; a failed look counts as newer. Never for in-memory tables.
    pub async fn stale(&self) -> bool {
        let provider = self.data_provider();
        let any: &dyn std::any::Any = provider.as_ref();
        let Some(t) = any.downcast_ref::<lance_table::LanceTable>() else {
            return false;
        };
        let ds = t.dataset();
        if ds.is_stale().await.unwrap_or(true) {
            return true;
        }
        // Where the store gives no tag (some object stores), the version alone tells.
        let read = ds.manifest_location();
        let Some(tag) = &read.e_tag else {
            return false;
        };
        match ds.object_store(None).await {
            Ok(store) => match store.inner.head(&read.path).await {
                // The store quotes its tags, Lance's listing does not.
                // A store that gives no tag here cannot tell.
                Ok(now) => now
                    .e_tag
                    .is_some_and(|t| t.trim_matches('"') != tag.trim_matches('"')),
                Err(_) => true,
            },
            Err(_) => true,
        }
    }

    /// The tag of the Lance dataset's manifest file read, where the store gives one: a
    /// manifest rewritten at the same version number (a dataset written again, a copy) has
    /// another.
    pub fn manifest_tag(&self) -> Option<String> {
        let provider = self.data_provider();
        let any: &dyn std::any::Any = provider.as_ref();
        let t = any.downcast_ref::<lance_table::LanceTable>()?;
        let tag = t.dataset().manifest_location().e_tag.as_deref()?;
        Some(tag.trim_matches('"').to_string())
    }

    /// The key-statistics wrapper of the provider, if it has one.
    pub fn key_statistics(&self) -> Option<&stats::KeyStatisticsProvider> {
        let any: &dyn std::any::Any = self.provider.as_ref();
        any.downcast_ref()
    }

    /// Wraps in-memory batches; `with_row_id` appends a `_rowid` column numbering the rows.
    pub fn from_batches(
        origin: &str,
        schema: SchemaRef,
        batches: Vec<RecordBatch>,
        with_row_id: bool,
    ) -> Result<Self> {
        let num_rows = batches.iter().map(|b| b.num_rows()).sum();
        if with_row_id {
            check_row_id_free(schema.fields().iter().map(|f| f.name().as_str()))
                .map_err(|e| Error::storage_caused(origin, e))?;
        }
        let (provider_schema, batches) = if with_row_id {
            let mut fields: Vec<Field> =
                schema.fields().iter().map(|f| f.as_ref().clone()).collect();
            fields.push(Field::new(ROW_ID, DataType::UInt64, false));
            let s = Arc::new(Schema::new(fields));
            let mut next = 0u64;
            let mut out = Vec::with_capacity(batches.len());
            for b in batches {
                let n = b.num_rows() as u64;
                let ids = UInt64Array::from_iter_values(next..next + n);
                next += n;
                let mut cols = b.columns().to_vec();
                cols.push(Arc::new(ids));
                out.push(RecordBatch::try_new(s.clone(), cols)?);
            }
            (s, out)
        } else {
            (schema.clone(), batches)
        };
        let provider = MemTable::try_new(provider_schema, vec![batches])?;
        Ok(Self {
            provider: Arc::new(provider),
            schema,
            origin: origin.to_string(),
            version: None,
            lance_version: None,
            num_rows,
        })
    }

    /// Opens a Lance dataset, at the state `as_of` names (`None`: its latest version);
    /// `with_row_id` exposes Lance's `_rowid`; `columns` names the properties it holds under
    /// other column names (property -> column).
    pub async fn open_lance(
        path: &Path,
        with_row_id: bool,
        columns: &std::collections::BTreeMap<String, String>,
        as_of: Option<&AsOf>,
    ) -> Result<Self> {
        let uri = path.to_string_lossy().to_string();
        if !path.exists() {
            return Err(Error::storage(format!("dataset {uri} does not exist")));
        }
        let ds = Dataset::open(&uri)
            .await
            .map_err(|e| Error::storage_caused(format!("cannot open Lance dataset {uri}"), e))?;
        let ds = match as_of {
            Some(at) => checkout(ds, &uri, at).await?,
            None => ds,
        };
        let num_rows = ds
            .count_rows(None)
            .await
            .map_err(|e| Error::storage_caused(format!("cannot read Lance dataset {uri}"), e))?;
        let v = ds.version();
        let committed = v.timestamp.timestamp_nanos_opt().unwrap_or_default() as u64;
        let version = Some(state_stamp(&[v.version, committed, num_rows as u64]));
        let provider = lance_table::LanceTable::new(Arc::new(ds), with_row_id, columns, num_rows)
            .map_err(|e| Error::storage_caused(format!("Lance dataset {uri}"), e))?;
        // The table's columns without the row id, by property name.
        let mut schema = provider.schema().as_ref().clone();
        if with_row_id {
            let n = schema.fields().len() - 1;
            schema = schema.project(&(0..n).collect::<Vec<_>>())?;
        }
        let schema: SchemaRef = Arc::new(schema);
        Ok(Self {
            provider: Arc::new(provider),
            schema,
            origin: uri,
            version,
            lance_version: Some(v.version),
            num_rows,
        })
    }
}

/// Tags each dataset at `paths` at its current version with `tag`; every dataset is
/// checked first (it opens, the tag is free), so a refusal tags none.
pub async fn tag_datasets(paths: Vec<std::path::PathBuf>, tag: &str) -> Result<Vec<(String, u64)>> {
    if tag.is_empty() || tag.bytes().all(|b| b.is_ascii_digit()) {
        return Err(Error::Other(format!(
            "tag {tag:?}: a tag needs a letter (a number reads as a version)"
        )));
    }
    let mut opened = Vec::new();
    for p in paths {
        let uri = p.to_string_lossy().to_string();
        let ds = Dataset::open(&uri)
            .await
            .map_err(|e| Error::storage_caused(format!("cannot open Lance dataset {uri}"), e))?;
        if ds.tags().get_version(tag).await.is_ok() {
            return Err(Error::Other(format!(
                "dataset {uri} already has a tag {tag:?}"
            )));
        }
        opened.push((uri, ds));
    }
    let mut out = Vec::new();
    for (uri, ds) in opened {
        let v = ds.version().version;
        ds.tags()
            .create(tag, v)
            .await
            .map_err(|e| Error::storage_caused(format!("cannot tag dataset {uri}"), e))?;
        out.push((uri, v));
    }
    Ok(out)
}

/// `ds` at the version `at` names: a version number (a dataset whose latest version is
/// older had not changed since: its latest), a tag, or the latest version committed at or
/// before a time. A version the dataset no longer has (cleaned up) is an error.
async fn checkout(ds: Dataset, uri: &str, at: &AsOf) -> Result<Dataset> {
    let version = match at {
        AsOf::Version(v) => (*v).min(ds.version().version),
        AsOf::Tag(t) => ds
            .tags()
            .get_version(t)
            .await
            .map_err(|e| Error::storage_caused(format!("dataset {uri} has no tag {t:?}"), e))?,
        AsOf::Time(t) => {
            let versions = ds.versions().await.map_err(|e| {
                Error::storage_caused(format!("cannot list the versions of {uri}"), e)
            })?;
            match versions.iter().rfind(|v| v.timestamp <= *t) {
                Some(v) => v.version,
                None => {
                    let first = versions.first().map_or_else(
                        || "it has none".to_string(),
                        |v| format!("its first is from {}", v.timestamp.to_rfc3339()),
                    );
                    return Err(Error::storage(format!(
                        "dataset {uri} has no version committed at or before {} ({first})",
                        t.to_rfc3339()
                    )));
                }
            }
        }
    };
    if ds.version().version == version {
        return Ok(ds);
    }
    ds.checkout_version(version).await.map_err(|e| {
        Error::storage_caused(
            format!("dataset {uri} has no version {version} (it may have been cleaned up)"),
            e,
        )
    })
}

/// Mixes numbers into one stamp (SplitMix64 steps: stable across builds and platforms,
/// unlike std's hasher).
fn state_stamp(parts: &[u64]) -> u64 {
    parts.iter().fold(0x9E37_79B9_7F4A_7C15u64, |acc, &x| {
        let mut z = (acc ^ x).wrapping_add(0x9E37_79B9_7F4A_7C15);
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    })
}

/// Writes batches as a new Lance dataset at `path`, replacing one that is there.
pub async fn write_lance(path: &Path, schema: SchemaRef, batches: Vec<RecordBatch>) -> Result<()> {
    write_mode(path, schema, batches, WriteMode::Overwrite).await
}

/// Appends batches to the Lance dataset at `path` (a new dataset version).
pub async fn append_lance(path: &Path, schema: SchemaRef, batches: Vec<RecordBatch>) -> Result<()> {
    write_mode(path, schema, batches, WriteMode::Append).await
}

/// Writes the batches of `reader` as a new Lance dataset at `path`, as they come.
pub async fn write_reader(
    path: &Path,
    reader: impl arrow::array::RecordBatchReader + Send + 'static,
) -> Result<()> {
    write_params(path, reader, WriteMode::Create).await
}

async fn write_mode(
    path: &Path,
    schema: SchemaRef,
    batches: Vec<RecordBatch>,
    mode: WriteMode,
) -> Result<()> {
    let reader = RecordBatchIterator::new(batches.into_iter().map(Ok), schema);
    write_params(path, reader, mode).await
}

async fn write_params(
    path: &Path,
    reader: impl arrow::array::RecordBatchReader + Send + 'static,
    mode: WriteMode,
) -> Result<()> {
    let uri = path.to_string_lossy().to_string();
    let params = WriteParams {
        mode,
        ..Default::default()
    };
    Dataset::write(reader, uri.as_str(), Some(params))
        .await
        .map_err(|e| Error::storage_caused(format!("cannot write Lance dataset {uri}"), e))?;
    Ok(())
}

/// Writes generated tables as Lance datasets under `dir` plus a `graph.toml`; returns its path.
pub async fn write_graph(
    dir: &Path,
    tables: Vec<lance_csr_datasets::Table>,
    progress: &mut (dyn FnMut(&str) + Send),
) -> Result<std::path::PathBuf> {
    use crate::config::{GraphConfig, NodeTable, RelTable};
    use lance_csr_datasets::TableKind;
    std::fs::create_dir_all(dir)?;
    let mut cfg = GraphConfig::default();
    let mut names = import::DatasetNames::default();
    for t in tables {
        let source = names.unique(import::safe_name(&t.name));
        let rows = t.batch.num_rows();
        // Columns Lance can't hold or find by their names are stored under others.
        let schema = t.batch.schema();
        let columns = lance_table::stored_names(schema.fields().iter().map(|f| f.name().as_str()));
        let stored = lance_table::stored_schema(&schema, &columns);
        let batch = RecordBatch::try_new(stored.clone(), t.batch.columns().to_vec())?;
        write_lance(&dir.join(&source), stored, vec![batch]).await?;
        progress(&format!("wrote {source} ({rows} rows)"));
        match t.kind {
            TableKind::Node {
                label,
                id,
                extra_labels,
            } => {
                // Generated embeddings come with their search indexes declared: the vectors',
                // and the texts' of the tables that have both.
                let has = |c: &str| schema.field_with_name(c).is_ok();
                let embedded = has(lance_csr_datasets::social::EMBEDDING);
                let mut declare = |column: &str, kind| {
                    let name = format!("{}_{column}", t.name);
                    cfg.indexes
                        .push(crate::config::IndexDecl::new(&name, kind, &label, column))
                };
                if embedded {
                    declare(
                        lance_csr_datasets::social::EMBEDDING,
                        crate::config::IndexKind::Vector,
                    );
                }
                if embedded && has("content") {
                    declare("content", crate::config::IndexKind::Fulltext);
                }
                let labels = (!extra_labels.is_empty()).then(|| {
                    let mut all = vec![label.clone()];
                    all.extend(extra_labels);
                    all
                });
                cfg.nodes.insert(
                    label,
                    NodeTable {
                        source,
                        id,
                        id_hidden: false,
                        columns,
                        labels,
                    },
                );
            }
            TableKind::Rel { rel_type, from, to } => cfg.relationships.push(RelTable {
                rel_type,
                from,
                to,
                source,
                src: "src".into(),
                dst: "dst".into(),
                columns,
            }),
        }
    }
    let path = dir.join("graph.toml");
    cfg.origin = path.display().to_string();
    cfg.validate()?;
    std::fs::write(&path, cfg.to_toml())?;
    Ok(path)
}

#[cfg(test)]
mod tests {
    use lance_csr_datasets::{Table, TableKind};

    /// Tables whose names differ only in case get datasets of their own, as import's do.
    #[tokio::test]
    async fn names_that_differ_in_case_get_datasets_of_their_own() {
        let tables: Vec<Table> = lance_csr_datasets::sample::tables()
            .into_iter()
            .filter(|t| matches!(&t.kind, TableKind::Node { label, .. } if label == "Person"))
            .flat_map(|t| {
                let mut other = t.clone();
                other.name = t.name.to_uppercase();
                other.kind = TableKind::Node {
                    label: "Other".into(),
                    id: "id".into(),
                    extra_labels: vec![],
                };
                [t, other]
            })
            .collect();
        let dir = tempfile::tempdir().unwrap();
        let path = super::write_graph(dir.path(), tables, &mut |_| {})
            .await
            .unwrap();
        let cfg = crate::config::GraphConfig::from_file(&path).unwrap();
        let (a, b) = (&cfg.nodes["Person"].source, &cfg.nodes["Other"].source);
        assert_ne!(a.to_lowercase(), b.to_lowercase());
        let g = crate::session::Graph::open(&path).await.unwrap();
        let n = g
            .query("MATCH (o:Other) RETURN count(o) AS n", &Default::default())
            .await
            .unwrap();
        assert_eq!(crate::output::rows(&n)[0][0], "6");
    }
}
