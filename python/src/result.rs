//! A query's result in Python: Arrow (zero-copy through the C data interface), Polars, pandas,
//! rows as dicts; and a result read batch by batch as a `pyarrow.RecordBatchReader`.

use crate::values::to_python;
use arrow_pyarrow::{IntoPyArrow, Table};
use lance_csr::arrow::array::{Array, ArrayRef, RecordBatch, RecordBatchReader, StringBuilder};
use lance_csr::arrow::datatypes::{DataType, Field, Schema, SchemaRef};
use lance_csr::arrow::error::ArrowError;
use pyo3::prelude::*;
use pyo3::types::PyDict;
use std::sync::Arc;

/// The rows a query returned.
#[pyclass(name = "Result", module = "lance_csr", frozen)]
pub struct QueryResult {
    columns: Vec<String>,
    /// Fields named by the result's columns.
    schema: SchemaRef,
    batches: Vec<RecordBatch>,
    rows: usize,
}

impl QueryResult {
    /// The engine's result under its column names (no Python involved: built while the
    /// GIL is released).
    pub fn new(r: lance_csr::QueryResult) -> lance_csr::Result<Self> {
        let schema = named_schema(&r.columns, &r.schema);
        let batches = (r.batches.iter())
            .map(|b| RecordBatch::try_new(schema.clone(), b.columns().to_vec()))
            .collect::<Result<Vec<_>, ArrowError>>()
            .map_err(|e| lance_csr::Error::Internal(e.to_string()))?;
        Ok(Self {
            rows: batches.iter().map(|b| b.num_rows()).sum(),
            columns: r.columns,
            schema,
            batches,
        })
    }
}

#[pymethods]
impl QueryResult {
    /// The column names, in the order the query returned them.
    #[getter]
    fn columns(&self) -> Vec<String> {
        self.columns.clone()
    }

    fn __len__(&self) -> usize {
        self.rows
    }

    fn __repr__(&self) -> String {
        format!(
            "<lance_csr.Result {} row{} x [{}]>",
            self.rows,
            if self.rows == 1 { "" } else { "s" },
            self.columns.join(", ")
        )
    }

    /// The result as a `pyarrow.Table` (the engine's buffers, not copied). Nodes,
    /// relationships and paths are structs; values of mixed kind are their Cypher text.
    fn to_arrow<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let schema = arrow_schema(&self.schema);
        let batches = self
            .batches
            .iter()
            .map(|b| for_arrow(&schema, b))
            .collect::<Result<Vec<_>, _>>()
            .map_err(arrow_err)?;
        let table = Table::try_new(batches, schema).map_err(arrow_err)?;
        table.into_pyarrow(py)
    }

    /// The result as a `polars.DataFrame` (needs polars).
    fn to_polars<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let table = self.to_arrow(py)?;
        py.import("polars")?.call_method1("from_arrow", (table,))
    }

    /// The result as a `pandas.DataFrame` (needs pandas).
    fn to_pandas<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        self.to_arrow(py)?.call_method0("to_pandas")
    }

    /// The rows as dicts (column -> value).
    fn __iter__(slf: Bound<'_, Self>) -> Rows {
        Rows {
            result: slf.unbind(),
            batch: 0,
            row: 0,
        }
    }

    /// The rows as tuples, in column order.
    fn rows<'py>(&self, py: Python<'py>) -> PyResult<Vec<Bound<'py, pyo3::types::PyTuple>>> {
        let mut out = Vec::with_capacity(self.rows);
        for b in &self.batches {
            for i in 0..b.num_rows() {
                let cells = b
                    .columns()
                    .iter()
                    .map(|c| to_python(py, &lance_csr::value_at(c.as_ref(), i)))
                    .collect::<PyResult<Vec<_>>>()?;
                out.push(pyo3::types::PyTuple::new(py, cells)?);
            }
        }
        Ok(out)
    }
}

/// Iterates a [`QueryResult`]'s rows as dicts.
#[pyclass(module = "lance_csr")]
pub struct Rows {
    result: Py<QueryResult>,
    batch: usize,
    row: usize,
}

#[pymethods]
impl Rows {
    fn __iter__(slf: PyRef<'_, Self>) -> PyRef<'_, Self> {
        slf
    }

    fn __next__<'py>(&mut self, py: Python<'py>) -> PyResult<Option<Bound<'py, PyDict>>> {
        let result = self.result.bind(py).get();
        while let Some(b) = result.batches.get(self.batch) {
            if self.row < b.num_rows() {
                let d = PyDict::new(py);
                for (name, c) in result.columns.iter().zip(b.columns()) {
                    d.set_item(
                        name,
                        to_python(py, &lance_csr::value_at(c.as_ref(), self.row))?,
                    )?;
                }
                self.row += 1;
                return Ok(Some(d));
            }
            self.batch += 1;
            self.row = 0;
        }
        Ok(None)
    }
}

/// The result schema with its fields named by the query's columns.
pub fn named_schema(columns: &[String], schema: &SchemaRef) -> SchemaRef {
    if schema.fields().iter().map(|f| f.name()).eq(columns) {
        return schema.clone();
    }
    let fields: Vec<Field> = schema
        .fields()
        .iter()
        .zip(columns)
        .map(|(f, name)| f.as_ref().clone().with_name(name))
        .collect();
    Arc::new(Schema::new(fields))
}

/// Values of mixed kind travel as encoded binary (an engine format): Arrow readers get their
/// Cypher text instead.
fn holds_mixed(t: &DataType) -> bool {
    match t {
        DataType::LargeBinary => true,
        DataType::List(f) | DataType::LargeList(f) | DataType::FixedSizeList(f, _) => {
            holds_mixed(f.data_type())
        }
        DataType::Struct(fs) => fs.iter().any(|f| holds_mixed(f.data_type())),
        DataType::Map(f, _) => holds_mixed(f.data_type()),
        _ => false,
    }
}

/// The schema Arrow readers get: columns holding values of mixed kind as strings.
pub fn arrow_schema(schema: &SchemaRef) -> SchemaRef {
    if !schema.fields().iter().any(|f| holds_mixed(f.data_type())) {
        return schema.clone();
    }
    let fields: Vec<Field> = schema
        .fields()
        .iter()
        .map(|f| {
            if holds_mixed(f.data_type()) {
                Field::new(f.name(), DataType::Utf8, true).with_metadata(
                    [("lance_csr.cypher_text".to_string(), "true".to_string())].into(),
                )
            } else {
                f.as_ref().clone()
            }
        })
        .collect();
    Arc::new(Schema::new(fields))
}

/// `b` (already named) under the Arrow readers' schema `schema`.
pub fn for_arrow(schema: &SchemaRef, b: &RecordBatch) -> Result<RecordBatch, ArrowError> {
    if Arc::ptr_eq(schema, &b.schema()) || schema.as_ref() == b.schema().as_ref() {
        return Ok(b.clone());
    }
    let columns: Vec<ArrayRef> = b
        .columns()
        .iter()
        .map(|c| {
            if holds_mixed(c.data_type()) {
                let mut s = StringBuilder::with_capacity(c.len(), c.len() * 8);
                for i in 0..c.len() {
                    match lance_csr::value_at(c.as_ref(), i) {
                        lance_csr::Value::Null => s.append_null(),
                        v => s.append_value(crate::values::cypher_text(&v)),
                    }
                }
                Arc::new(s.finish()) as ArrayRef
            } else {
                c.clone()
            }
        })
        .collect();
    RecordBatch::try_new(schema.clone(), columns)
}

pub fn arrow_err(e: ArrowError) -> PyErr {
    crate::errors::InternalError::new_err(e.to_string())
}

/// A running query's result, batch by batch.
pub struct StreamReader {
    pub stream: lance_csr::ResultStream,
    /// Named by the query's columns.
    pub named: SchemaRef,
    /// As Arrow readers get it ([`arrow_schema`]).
    pub schema: SchemaRef,
    pub query: String,
    /// The process that ran the query.
    pid: u32,
}

impl StreamReader {
    pub fn new(stream: lance_csr::ResultStream, query: &str) -> Self {
        let named = named_schema(&stream.columns, &stream.schema);
        Self {
            schema: arrow_schema(&named),
            named,
            stream,
            query: query.to_string(),
            pid: std::process::id(),
        }
    }

    /// The next batch as Arrow readers get it (waits for the engine).
    pub async fn next_batch(&mut self) -> lance_csr::Result<Option<RecordBatch>> {
        let Some(b) = self.stream.next_batch().await? else {
            return Ok(None);
        };
        let b = RecordBatch::try_new(self.named.clone(), b.columns().to_vec())
            .and_then(|b| for_arrow(&self.schema, &b))
            .map_err(|e| lance_csr::Error::Internal(e.to_string()))?;
        Ok(Some(b))
    }
}

impl Iterator for StreamReader {
    type Item = Result<RecordBatch, ArrowError>;

    /// Called by Arrow readers through the C stream interface, where a panic would abort the
    /// process: none escapes, and a reader inside an async runtime (where `block_on` panics)
    /// gets the batch from a thread of its own.
    fn next(&mut self) -> Option<Self::Item> {
        if self.pid != std::process::id() {
            let e = "this result was opened in the parent process, before it forked: run the \
                     query in the child";
            return Some(Err(ArrowError::ExternalError(e.into())));
        }
        let query = self.query.clone();
        let panicked = || lance_csr::Error::Internal("reading a batch panicked".into());
        let read = std::panic::AssertUnwindSafe(|| {
            if tokio::runtime::Handle::try_current().is_err() {
                return crate::runtime().block_on(self.next_batch());
            }
            std::thread::scope(|s| {
                s.spawn(|| crate::runtime().block_on(self.next_batch()))
                    .join()
                    .unwrap_or_else(|_| Err(panicked()))
            })
        });
        match std::panic::catch_unwind(read).unwrap_or_else(|_| Err(panicked())) {
            Ok(b) => b.map(Ok),
            Err(e) => Some(Err(ArrowError::ExternalError(Box::new(
                std::io::Error::other(e.render(&query)),
            )))),
        }
    }
}

impl RecordBatchReader for StreamReader {
    fn schema(&self) -> SchemaRef {
        self.schema.clone()
    }
}

/// A query's result as it is computed: iterating yields `pyarrow.RecordBatch`es; Arrow
/// readers (`pyarrow.RecordBatchReader.from_stream`, Polars, DuckDB) take the rest of it
/// through `__arrow_c_stream__`.
#[pyclass(name = "ResultStream", module = "lance_csr", frozen)]
pub struct Stream {
    /// Taken by the reader it is handed to, or dropped (which cancels the query) on close.
    reader: std::sync::Mutex<Option<StreamReader>>,
    columns: Vec<String>,
    schema: SchemaRef,
    interrupts: Arc<crate::Interrupts>,
    /// `close` from another thread than the one reading: the reader stops and drops it (a
    /// count past 0: closed).
    closing: crate::Interrupts,
    /// The process that ran the query (a child made by `fork` cannot read it).
    pid: u32,
}

impl Stream {
    pub fn new(reader: StreamReader, interrupts: Arc<crate::Interrupts>) -> Self {
        Self {
            columns: reader.stream.columns.clone(),
            schema: reader.schema.clone(),
            reader: std::sync::Mutex::new(Some(reader)),
            interrupts,
            closing: crate::Interrupts::default(),
            pid: std::process::id(),
        }
    }

    /// The reader, while the stream has it.
    fn reader(&self) -> PyResult<std::sync::MutexGuard<'_, Option<StreamReader>>> {
        crate::same_process(self.pid)?;
        let guard = self
            .reader
            .try_lock()
            .map_err(|_| crate::errors::usage("the stream is being read by another thread"))?;
        if guard.is_none() {
            return Err(crate::errors::usage(
                "the stream was closed, read to its end or handed to an Arrow reader",
            ));
        }
        Ok(guard)
    }
}

#[pymethods]
impl Stream {
    #[getter]
    fn columns(&self) -> Vec<String> {
        self.columns.clone()
    }

    /// The `pyarrow.Schema` of the batches.
    #[getter]
    fn schema<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        use arrow_pyarrow::ToPyArrow;
        self.schema.as_ref().to_pyarrow(py)
    }

    fn __iter__(slf: PyRef<'_, Self>) -> PyRef<'_, Self> {
        slf
    }

    fn __next__<'py>(&self, py: Python<'py>) -> PyResult<Option<Bound<'py, PyAny>>> {
        use arrow_pyarrow::ToPyArrow;
        let mut guard = match self.reader() {
            Ok(g) => g,
            // Iterating a finished stream again ends at once, as Python's iterators do.
            Err(_) if self.reader.try_lock().is_ok_and(|g| g.is_none()) => return Ok(None),
            Err(e) => return Err(e),
        };
        let reader = guard.as_mut().expect("checked");
        let query = reader.query.clone();
        // A close at any time ends it (its count starts at 0).
        let interrupts = [
            (&*self.interrupts, self.interrupts.seen()),
            (&self.closing, 0),
        ];
        match crate::wait_any(py, &interrupts, &query, reader.next_batch())? {
            Ok(Some(b)) => Ok(Some(b.to_pyarrow(py)?)),
            Ok(None) | Err(1) => {
                *guard = None;
                Ok(None)
            }
            Err(_) => Err(crate::errors::Interrupted::new_err(
                "the query was interrupted",
            )),
        }
    }

    /// Reads the rest into a `pyarrow.Table`.
    fn read_all<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let mut guard = self.reader()?;
        let reader = guard.as_mut().expect("checked");
        let query = reader.query.clone();
        let mut batches = Vec::new();
        let interrupts = [
            (&*self.interrupts, self.interrupts.seen()),
            (&self.closing, 0),
        ];
        loop {
            match crate::wait_any(py, &interrupts, &query, reader.next_batch())? {
                Ok(Some(b)) => batches.push(b),
                Ok(None) => break,
                Err(1) => {
                    *guard = None;
                    return Err(crate::errors::usage(
                        "the stream was closed while it was read",
                    ));
                }
                Err(_) => {
                    return Err(crate::errors::Interrupted::new_err(
                        "the query was interrupted",
                    ))
                }
            }
        }
        let schema = reader.schema.clone();
        *guard = None;
        Table::try_new(batches, schema)
            .map_err(arrow_err)?
            .into_pyarrow(py)
    }

    /// Stops the query (its remaining rows are not computed). From another thread than the
    /// one reading, it returns at once: the reader stops at its next wait, its iteration ends.
    fn close(&self) {
        self.closing.interrupt();
        // Never waited for holding the GIL: the reader needs it to stop.
        if let Ok(mut g) = self.reader.try_lock() {
            match g.take() {
                // The parent's, in a child made by `fork`: not ours to stop.
                Some(r) if crate::same_process(self.pid).is_err() => std::mem::forget(r),
                r => drop(r),
            }
        }
    }

    fn __enter__(slf: PyRef<'_, Self>) -> PyRef<'_, Self> {
        slf
    }

    fn __exit__(
        &self,
        _ty: Option<Bound<'_, PyAny>>,
        _value: Option<Bound<'_, PyAny>>,
        _tb: Option<Bound<'_, PyAny>>,
    ) {
        self.close();
    }

    /// The Arrow PyCapsule stream protocol: hands the rest of the result to the caller.
    #[pyo3(signature = (requested_schema=None))]
    fn __arrow_c_stream__<'py>(
        &self,
        py: Python<'py>,
        requested_schema: Option<Bound<'py, PyAny>>,
    ) -> PyResult<Bound<'py, pyo3::types::PyCapsule>> {
        // The batches come in their own schema; a reader asking for another casts them.
        let _ = requested_schema;
        let reader = self.reader()?.take().expect("checked");
        let stream = lance_csr::arrow::ffi_stream::FFI_ArrowArrayStream::new(Box::new(reader));
        let name = std::ffi::CString::new("arrow_array_stream").expect("no NUL");
        pyo3::types::PyCapsule::new(py, stream, Some(name))
    }
}
