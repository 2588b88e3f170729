//! `lance_csr.Graph`: open a graph (a graph.toml, or Arrow tables and Lance datasets), query it,
//! prepare queries, explain them; plus `import_` and `generate` as the CLI has them.

use crate::errors::{to_py, usage};
use crate::result::{QueryResult, Stream, StreamReader};
use crate::values::from_python;
use crate::{runtime, wait, Interrupts};
use lance_csr::arrow::array::RecordBatch;
use lance_csr::{GraphOptions, LiveGraph, Mode, Params};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList, PyString};
use std::path::PathBuf;
use std::sync::Arc;
use tokio::sync::{OwnedRwLockReadGuard, RwLock};

/// The graph behind a Python handle; `None` once closed. Queries hold it for reading while
/// they run; `close` takes it for writing.
type Shared = Arc<RwLock<Option<Arc<LiveGraph>>>>;

/// A property graph to query with Cypher.
#[pyclass(module = "lance_csr", frozen)]
pub struct Graph {
    inner: Shared,
    interrupts: Arc<Interrupts>,
    /// The process that opened it: a child made by `fork` cannot use it.
    pid: u32,
}

/// A query planned once for repeated execution (`Graph.prepare`).
#[pyclass(name = "PreparedQuery", module = "lance_csr", frozen)]
pub struct PreparedQuery {
    graph: Shared,
    interrupts: Arc<Interrupts>,
    pid: u32,
    prepared: Arc<lance_csr::Prepared>,
}

/// The options `Graph.open` and `Graph.from_tables` take.
fn options(
    mode: &str,
    timeout: Option<f64>,
    memory_limit: Option<usize>,
    deferred_indexes: bool,
    target_partitions: Option<usize>,
) -> PyResult<GraphOptions> {
    let mode: Mode = mode.parse().map_err(usage)?;
    let timeout = match timeout {
        None => None,
        Some(s) if s.is_finite() && s > 0.0 => Some(std::time::Duration::from_secs_f64(s)),
        Some(s) => {
            return Err(usage(format!(
                "timeout must be a positive number of seconds, got {s}"
            )))
        }
    };
    if target_partitions == Some(0) {
        return Err(usage("target_partitions must be at least 1"));
    }
    Ok(GraphOptions::default()
        .with_mode(mode)
        .with_timeout(timeout)
        .with_memory_limit(memory_limit)
        .with_deferred_indexes(deferred_indexes)
        .with_target_partitions(target_partitions))
}

/// Python parameters (a dict of name -> value) as the engine's.
fn params(given: Option<&Bound<'_, PyDict>>) -> PyResult<Params> {
    let mut out = Params::new();
    if let Some(d) = given {
        for (k, v) in d.iter() {
            let Ok(name) = k.cast::<PyString>() else {
                return Err(usage(format!(
                    "parameter names must be strings, got {}",
                    k.repr()?
                )));
            };
            out.insert(name.extract::<String>()?, from_python(&v)?);
        }
    }
    Ok(out)
}

fn closed() -> PyErr {
    usage("the graph is closed")
}

/// The parent's graph, in a child made by `fork`, is never dropped there: its runtime's
/// threads are not in the child, and dropping it would reach into them (the following
/// task's handle).
fn keep_in_child(inner: &mut Shared, pid: u32) {
    if crate::same_process(pid).is_err() {
        std::mem::forget(std::mem::take(inner));
    }
}

impl Drop for Graph {
    fn drop(&mut self) {
        keep_in_child(&mut self.inner, self.pid);
    }
}

impl Drop for PreparedQuery {
    fn drop(&mut self) {
        keep_in_child(&mut self.graph, self.pid);
    }
}

impl Graph {
    /// A handle on `g`, following its datasets' new versions every `refresh` seconds.
    fn new(g: lance_csr::Graph, refresh: Option<std::time::Duration>) -> Self {
        let live = LiveGraph::new(g);
        if let Some(every) = refresh {
            let _rt = runtime().enter();
            // A failed refresh keeps the state queries read; `refresh()` raises its error.
            live.follow(every, |_| {});
        }
        Self {
            inner: Arc::new(RwLock::new(Some(live))),
            interrupts: Arc::default(),
            pid: std::process::id(),
        }
    }
}

/// The open graph, read-locked (waited for with the GIL released: `close` may hold it);
/// an error in a child made by `fork` (opened by process `pid`).
fn read(
    py: Python<'_>,
    inner: &Shared,
    pid: u32,
) -> PyResult<OwnedRwLockReadGuard<Option<Arc<LiveGraph>>, Arc<LiveGraph>>> {
    crate::same_process(pid)?;
    // Uncontended unless `close` holds it: taken without releasing the GIL.
    let guard = match inner.clone().try_read_owned() {
        Ok(g) => g,
        Err(_) => {
            let inner = inner.clone();
            py.detach(move || runtime().block_on(inner.read_owned()))
        }
    };
    OwnedRwLockReadGuard::try_map(guard, Option::as_ref).map_err(|_| closed())
}

/// `refresh_interval` from Python: seconds, positive; None never.
fn interval(secs: Option<f64>) -> PyResult<Option<std::time::Duration>> {
    match secs {
        None => Ok(None),
        Some(s) if s.is_finite() && s > 0.0 => Ok(Some(std::time::Duration::from_secs_f64(s))),
        Some(s) => Err(usage(format!(
            "refresh_interval must be a positive number of seconds or None, got {s}"
        ))),
    }
}

/// `as_of` from Python: an int is a version, a str a tag or an ISO time
/// (`lance_csr::AsOf`'s text), a datetime an instant (a naive one in local time, as its
/// `timestamp()` reads it).
fn as_of_value(v: &Bound<'_, PyAny>) -> PyResult<lance_csr::AsOf> {
    if v.is_instance_of::<pyo3::types::PyBool>() {
        return Err(pyo3::exceptions::PyTypeError::new_err(
            "as_of takes a version (int), a tag or time (str), or a datetime",
        ));
    }
    if let Ok(n) = v.extract::<u64>() {
        return Ok(lance_csr::AsOf::Version(n));
    }
    if let Ok(s) = v.extract::<String>() {
        return s.parse().map_err(pyo3::exceptions::PyValueError::new_err);
    }
    if v.hasattr("timestamp")? {
        let secs: f64 = v.call_method0("timestamp")?.extract()?;
        let nanos = (secs * 1e9).round() as i64;
        return Ok(lance_csr::AsOf::Time(
            chrono::DateTime::from_timestamp_nanos(nanos),
        ));
    }
    Err(pyo3::exceptions::PyTypeError::new_err(
        "as_of takes a version (int), a tag or time (str), or a datetime",
    ))
}

#[pymethods]
impl Graph {
    /// Opens the graph described by a graph.toml (or the folder holding one). Every
    /// `refresh_interval` seconds (None: never) it reads its datasets' new versions, as
    /// `refresh()` does, while queries go on reading the state before.
    #[staticmethod]
    #[pyo3(signature = (path, *, mode="csr", timeout=None, memory_limit=None, deferred_indexes=false, target_partitions=None, as_of=None, refresh_interval=Some(1.0)))]
    #[allow(clippy::too_many_arguments)]
    fn open(
        py: Python<'_>,
        path: PathBuf,
        mode: &str,
        timeout: Option<f64>,
        memory_limit: Option<usize>,
        deferred_indexes: bool,
        target_partitions: Option<usize>,
        as_of: Option<&Bound<'_, PyAny>>,
        refresh_interval: Option<f64>,
    ) -> PyResult<Self> {
        let refresh = interval(refresh_interval)?;
        let opts = options(
            mode,
            timeout,
            memory_limit,
            deferred_indexes,
            target_partitions,
        )?
        .with_as_of(as_of.map(as_of_value).transpose()?);
        let g = wait(
            py,
            &Interrupts::default(),
            "",
            lance_csr::Graph::open_with(&path, opts),
        )?;
        Ok(Self::new(g, refresh))
    }

    /// The small sample social network of the documentation (in memory).
    #[staticmethod]
    #[pyo3(signature = (*, mode="csr"))]
    fn sample(py: Python<'_>, mode: &str) -> PyResult<Self> {
        let opts = options(mode, None, None, false, None)?;
        let tables = lance_csr_datasets::sample::tables();
        let g = wait(
            py,
            &Interrupts::default(),
            "",
            lance_csr::Graph::from_tables(tables, opts),
        )?;
        Ok(Self::new(g, None))
    }

    /// A graph over tables: `tables` maps names to `pyarrow.Table`s (or anything with
    /// `__arrow_c_stream__`: Polars frames, record batch readers) or `lance.LanceDataset`s
    /// (read by the engine from their folders); `schema` says what they are:
    ///
    /// ```python
    /// {"nodes": {"Person": {"table": "person", "id": "id", "labels": ["Person"]}},
    ///  "relationships": [{"type": "KNOWS", "table": "knows", "from": "Person",
    ///                     "to": "Person", "src": "src", "dst": "dst"}],
    ///  "indexes": [{"name": "person_embedding", "kind": "vector", "table": "Person",
    ///               "column": "embedding", "metric": "cosine"}]}
    /// ```
    ///
    /// `indexes` are graph.toml's `[[indexes]]`: searched by CALL db.index.*; a table in
    /// memory is searched exactly (vectors only), a Lance dataset through its own indexes.
    /// A graph whose tables are all Lance datasets follows their new versions every
    /// `refresh_interval` seconds, as `open` does.
    #[staticmethod]
    #[pyo3(signature = (tables, schema, *, mode="csr", timeout=None, memory_limit=None, target_partitions=None, refresh_interval=Some(1.0)))]
    #[allow(clippy::too_many_arguments)]
    fn from_tables(
        py: Python<'_>,
        tables: &Bound<'_, PyDict>,
        schema: &Bound<'_, PyDict>,
        mode: &str,
        timeout: Option<f64>,
        memory_limit: Option<usize>,
        target_partitions: Option<usize>,
        refresh_interval: Option<f64>,
    ) -> PyResult<Self> {
        let refresh = interval(refresh_interval)?;
        let opts = options(mode, timeout, memory_limit, false, target_partitions)?;
        let mut b = lance_csr::Graph::builder().options(opts);
        let source = |name: &str| -> PyResult<Source> {
            let t = tables.get_item(name)?.ok_or_else(|| {
                usage(format!("schema names table '{name}', which `tables` lacks"))
            })?;
            Source::of(&t)
        };
        let str_of = |d: &Bound<'_, PyDict>, key: &str, what: &str| -> PyResult<String> {
            d.get_item(key)?
                .ok_or_else(|| usage(format!("{what} needs '{key}'")))?
                .extract::<String>()
        };
        if let Some(nodes) = schema.get_item("nodes")? {
            for (label, spec) in nodes.cast::<PyDict>()?.iter() {
                let label: String = label.extract()?;
                let spec = spec.cast::<PyDict>()?;
                let what = format!("node '{label}'");
                let table = str_of(spec, "table", &what)?;
                let id = str_of(spec, "id", &what)?;
                b = match source(&table)? {
                    Source::Batches(schema, batches) => b.node_table(&label, &id, schema, batches),
                    Source::Lance(uri) => b.node_dataset(&label, &uri, &id),
                };
                if let Some(labels) = spec.get_item("labels")? {
                    let labels: Vec<String> = labels.extract()?;
                    let labels: Vec<&str> = labels.iter().map(String::as_str).collect();
                    b = b.labels(&label, &labels);
                }
            }
        }
        if let Some(rels) = schema.get_item("relationships")? {
            for spec in rels.cast::<PyList>()?.iter() {
                let spec = spec.cast::<PyDict>()?;
                let what = "a relationship".to_string();
                let [rel_type, table, from, to] =
                    ["type", "table", "from", "to"].map(|k| str_of(spec, k, &what));
                let (rel_type, table, from, to) = (rel_type?, table?, from?, to?);
                let col = |k: &str| -> PyResult<String> {
                    Ok(match spec.get_item(k)? {
                        Some(v) => v.extract()?,
                        None => k.to_string(),
                    })
                };
                let (src, dst) = (col("src")?, col("dst")?);
                b = match source(&table)? {
                    Source::Batches(schema, batches) => {
                        b.relationship_table(&rel_type, &from, &to, &src, &dst, schema, batches)
                    }
                    Source::Lance(uri) => {
                        b.relationship_dataset(&rel_type, &from, &to, &src, &dst, &uri)
                    }
                };
            }
        }
        if let Some(indexes) = schema.get_item("indexes")? {
            for spec in indexes.cast::<PyList>()?.iter() {
                let spec = spec.cast::<PyDict>()?;
                let mut pairs = Vec::new();
                for (k, v) in spec.iter() {
                    pairs.push((k.extract::<String>()?, v.extract::<String>()?));
                }
                let decl = lance_csr::IndexDecl::from_pairs(
                    pairs.iter().map(|(k, v)| (k.as_str(), v.as_str())),
                )
                .map_err(|e| crate::errors::to_py(e, None))?;
                b = b.index(decl);
            }
        }
        let g = wait(py, &Interrupts::default(), "", b.build())?;
        // Tables in memory never move: following them looks at nothing.
        Ok(Self::new(g, refresh))
    }

    /// Runs `query` with `params` (a dict of Python values) and returns its whole result.
    #[pyo3(signature = (query, params=None))]
    fn query(
        &self,
        py: Python<'_>,
        query: &str,
        params: Option<&Bound<'_, PyDict>>,
    ) -> PyResult<QueryResult> {
        let p = self::params(params)?;
        let g = read(py, &self.inner, self.pid)?;
        // The result is made, and the lock and parameters let go, with the GIL released.
        wait(py, &self.interrupts, query, async move {
            QueryResult::new(g.query(query, &p).await?)
        })
    }

    /// Runs `query` and returns its result as it is computed ([`ResultStream`]).
    #[pyo3(signature = (query, params=None))]
    fn query_stream(
        &self,
        py: Python<'_>,
        query: &str,
        params: Option<&Bound<'_, PyDict>>,
    ) -> PyResult<Stream> {
        let p = self::params(params)?;
        let g = read(py, &self.inner, self.pid)?;
        let s = wait(py, &self.interrupts, query, g.query_stream(None, query, p))?;
        Ok(Stream::new(
            StreamReader::new(s, query),
            self.interrupts.clone(),
        ))
    }

    /// Parses `query` and returns a handle that plans it once per kind of parameters.
    fn prepare(&self, py: Python<'_>, query: &str) -> PyResult<PreparedQuery> {
        let prepared = read(py, &self.inner, self.pid)?
            .current()
            .prepare(query)
            .map_err(|e| to_py(e, Some(query)))?;
        Ok(PreparedQuery {
            graph: self.inner.clone(),
            interrupts: self.interrupts.clone(),
            pid: self.pid,
            prepared: Arc::new(prepared),
        })
    }

    /// The plans of `query`; with `analyze`, run it and show each operator's rows and time.
    #[pyo3(signature = (query, params=None, analyze=false))]
    fn explain(
        &self,
        py: Python<'_>,
        query: &str,
        params: Option<&Bound<'_, PyDict>>,
        analyze: bool,
    ) -> PyResult<String> {
        let p = self::params(params)?;
        let g = read(py, &self.inner, self.pid)?;
        wait(py, &self.interrupts, query, async {
            let g = g.current();
            if analyze {
                g.explain_analyze(query, &p).await
            } else {
                g.explain(query, &p).await
            }
        })
    }

    /// Reads the datasets' latest versions now (indexes of changed tables are rebuilt);
    /// queries running meanwhile finish on the state they started on. Returns how many index
    /// structures were rebuilt.
    fn refresh(&self, py: Python<'_>) -> PyResult<usize> {
        let g = read(py, &self.inner, self.pid)?;
        wait(py, &self.interrupts, "", async move {
            Ok(g.refresh().await?.unwrap_or(0))
        })
    }

    /// Labels and relationship tables with their keys, row counts and property types.
    fn schema<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let s = read(py, &self.inner, self.pid)?.current().schema();
        let props = |ps: &[(String, lance_csr::arrow::datatypes::DataType)]| -> PyResult<Bound<'py, PyDict>> {
            let d = PyDict::new(py);
            for (name, t) in ps {
                d.set_item(name, t.to_string())?;
            }
            Ok(d)
        };
        let labels = PyDict::new(py);
        for (name, l) in &s.labels {
            let d = PyDict::new(py);
            d.set_item("labels", l.labels.clone())?;
            d.set_item("key", &l.key)?;
            d.set_item("rows", l.rows)?;
            d.set_item("properties", props(&l.properties)?)?;
            labels.set_item(name, d)?;
        }
        let rels = PyList::empty(py);
        for r in &s.relationships {
            let d = PyDict::new(py);
            d.set_item("type", &r.rel_type)?;
            d.set_item("from", &r.from)?;
            d.set_item("to", &r.to)?;
            d.set_item("rows", r.rows)?;
            d.set_item("properties", props(&r.properties)?)?;
            rels.append(d)?;
        }
        let out = PyDict::new(py);
        out.set_item("labels", labels)?;
        out.set_item("relationships", rels)?;
        Ok(out)
    }

    /// Cancels the queries of this graph running now (from any thread): they raise
    /// `lance_csr.Interrupted`.
    fn interrupt(&self) {
        self.interrupts.interrupt();
    }

    /// Releases the graph (its tables, indexes and caches), after the queries running now.
    /// Later calls raise `lance_csr.Error`.
    fn close(&self, py: Python<'_>) {
        if crate::same_process(self.pid).is_err() {
            // The parent's to release.
            return;
        }
        let inner = self.inner.clone();
        let g = py.detach(|| {
            runtime().block_on(async move {
                let mut g = inner.write().await;
                // A refresh under way finishes; none starts after.
                if let Some(live) = g.as_ref() {
                    live.stop();
                }
                g.take()
            })
        });
        drop(g);
    }

    /// Whether `close` was called.
    #[getter]
    fn closed(&self, py: Python<'_>) -> bool {
        py.detach(|| runtime().block_on(self.inner.read()).is_none())
    }

    fn __enter__(slf: PyRef<'_, Self>) -> PyRef<'_, Self> {
        slf
    }

    fn __exit__(
        &self,
        py: Python<'_>,
        _ty: Option<Bound<'_, PyAny>>,
        _value: Option<Bound<'_, PyAny>>,
        _tb: Option<Bound<'_, PyAny>>,
    ) {
        self.close(py);
    }
}

#[pymethods]
impl PreparedQuery {
    /// The query text.
    #[getter]
    fn text(&self) -> String {
        self.prepared.text().to_string()
    }

    /// Runs the query with `params`; threads may share one prepared query.
    #[pyo3(signature = (params=None))]
    fn query(&self, py: Python<'_>, params: Option<&Bound<'_, PyDict>>) -> PyResult<QueryResult> {
        let p = self::params(params)?;
        let prepared = &self.prepared;
        let g = read(py, &self.graph, self.pid)?;
        wait(py, &self.interrupts, prepared.text(), async move {
            QueryResult::new(g.prepared_query(prepared, &p).await?)
        })
    }

    /// Runs the query with `params`, its result as it is computed.
    #[pyo3(signature = (params=None))]
    fn query_stream(&self, py: Python<'_>, params: Option<&Bound<'_, PyDict>>) -> PyResult<Stream> {
        let p = self::params(params)?;
        let prepared = &self.prepared;
        let g = read(py, &self.graph, self.pid)?;
        let s = wait(
            py,
            &self.interrupts,
            prepared.text(),
            g.prepared_stream(prepared, p),
        )?;
        Ok(Stream::new(
            StreamReader::new(s, prepared.text()),
            self.interrupts.clone(),
        ))
    }

    fn __repr__(&self) -> String {
        format!("<lance_csr.PreparedQuery {:?}>", self.prepared.text())
    }
}

/// Where a table of `Graph.from_tables` comes from.
enum Source {
    Batches(lance_csr::arrow::datatypes::SchemaRef, Vec<RecordBatch>),
    /// A Lance dataset's folder.
    Lance(String),
}

impl Source {
    fn of(t: &Bound<'_, PyAny>) -> PyResult<Self> {
        use arrow_pyarrow::FromPyArrow;
        // A `lance.LanceDataset`: read by the engine where it lies, not copied through Python.
        let is_lance = t
            .get_type()
            .module()
            .map(|m| m.to_string().starts_with("lance"))
            .unwrap_or(false);
        if is_lance && t.hasattr("uri")? {
            return Ok(Source::Lance(t.getattr("uri")?.extract()?));
        }
        let table = arrow_pyarrow::Table::from_pyarrow_bound(t)?;
        let (batches, schema) = table.into_inner();
        Ok(Source::Batches(schema, batches))
    }
}

/// Turns CSV / Parquet files into a graph at `out`, as `lance-csr import` does: `nodes` are
/// specs like `"Person=persons.csv"` (`"Post,Message=posts.csv"` for several labels), `rels`
/// like `"KNOWS:Person:Person:src:dst=knows.csv"`. Returns the graph.toml's path.
#[pyfunction]
#[pyo3(name = "import_", signature = (out, nodes, rels=Vec::new(), *, overwrite=false, index=true))]
pub fn import_graph(
    py: Python<'_>,
    out: PathBuf,
    nodes: Vec<String>,
    rels: Vec<String>,
    overwrite: bool,
    index: bool,
) -> PyResult<PathBuf> {
    let nodes = nodes
        .iter()
        .map(|s| lance_csr::NodeSpec::parse(s))
        .collect::<lance_csr::Result<Vec<_>>>()
        .map_err(|e| to_py(e, None))?;
    let rels = rels
        .iter()
        .map(|s| lance_csr::RelSpec::parse(s))
        .collect::<lance_csr::Result<Vec<_>>>()
        .map_err(|e| to_py(e, None))?;
    if nodes.is_empty() {
        return Err(usage("import needs at least one node spec"));
    }
    wait(py, &Interrupts::default(), "", async {
        lance_csr::import(&out, &nodes, &rels, overwrite, index, &mut |_| {}).await
    })
}

/// Tags every dataset of the graph at `path` at its current version (what `lance-csr tag`
/// does), so that `Graph.open(path, as_of=name)` reads the graph as it is now; returns each
/// dataset with the version tagged.
#[pyfunction]
pub fn tag(py: Python<'_>, path: PathBuf, name: &str) -> PyResult<Vec<(String, u64)>> {
    let name = name.to_string();
    wait(py, &Interrupts::default(), "", async move {
        lance_csr::tag_graph(&path, &name).await
    })
}

/// Writes a generated social network (or, with `sample=True`, the documentation's sample
/// graph) as Lance datasets under `out`, with its CSR indexes; returns the graph.toml's path.
/// `embeddings=DIM` adds an `embedding` vector property to persons and posts.
#[pyfunction]
#[pyo3(signature = (out, *, scale=1.0, seed=42, sample=false, ldbc=false, index=true, embeddings=None))]
#[allow(clippy::too_many_arguments)]
pub fn generate(
    py: Python<'_>,
    out: PathBuf,
    scale: f64,
    seed: u64,
    sample: bool,
    ldbc: bool,
    index: bool,
    embeddings: Option<usize>,
) -> PyResult<PathBuf> {
    if !(scale > 0.0 && scale.is_finite()) {
        return Err(usage(format!("scale must be positive, got {scale}")));
    }
    if embeddings.is_some_and(|d| !(1..=4096).contains(&d)) {
        return Err(usage("embeddings takes 1 to 4096 dimensions".to_string()));
    }
    wait(py, &Interrupts::default(), "", async {
        let mut tables = if sample {
            lance_csr_datasets::sample::tables()
        } else if ldbc {
            lance_csr_datasets::social::generate_ldbc(scale, seed, &mut |_| {})
        } else {
            lance_csr_datasets::social::generate(scale, seed, &mut |_| {})
        };
        if let Some(dim) = embeddings {
            lance_csr_datasets::social::with_embeddings(&mut tables, dim, seed);
        }
        let path = lance_csr::write_graph(&out, tables, &mut |_| {}).await?;
        if index {
            lance_csr::Graph::build_indexes(&path, &mut |_| {}).await?;
        }
        Ok(path)
    })
}
