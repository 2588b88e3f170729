//! Cypher values to Python objects and back: numbers, strings, lists and maps as Python's own;
//! nodes, relationships and paths as [`Node`], [`Relationship`] and [`Path`]; dates and times as
//! `datetime` objects; durations as [`Duration`] (months and days have no fixed length, which
//! `datetime.timedelta` cannot say).

use crate::errors::usage;
use lance_csr::temporal::{Duration as CypherDuration, Temporal};
use lance_csr::{is_identity_field, walked_forwards, Entity, TypedListBuilder, Value};
use pyo3::basic::CompareOp;
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyBool, PyBytes, PyDict, PyFloat, PyInt, PyList, PyString, PyTuple};

/// A node: its labels, its properties and, where the engine gave one, its element id.
#[pyclass(module = "lance_csr", frozen)]
pub struct Node {
    #[pyo3(get)]
    labels: Vec<String>,
    #[pyo3(get)]
    properties: Py<PyDict>,
    #[pyo3(get)]
    element_id: Option<String>,
}

/// A relationship: its type, its properties and, where the engine gave them, its element id
/// and its end nodes' element ids.
#[pyclass(module = "lance_csr", frozen)]
pub struct Relationship {
    #[pyo3(get, name = "type")]
    rel_type: String,
    #[pyo3(get)]
    properties: Py<PyDict>,
    #[pyo3(get)]
    element_id: Option<String>,
    #[pyo3(get)]
    start_element_id: Option<String>,
    #[pyo3(get)]
    end_element_id: Option<String>,
}

/// A path: its nodes and the relationships between them, in order.
#[pyclass(module = "lance_csr", frozen)]
pub struct Path {
    #[pyo3(get)]
    nodes: Py<PyList>,
    #[pyo3(get)]
    relationships: Py<PyList>,
}

/// A Cypher duration: months, days, seconds and nanoseconds, kept apart because a month and a
/// day have no fixed length in seconds.
#[pyclass(module = "lance_csr", frozen, eq, hash, skip_from_py_object)]
#[derive(PartialEq, Eq, Hash, Clone, Copy)]
pub struct Duration {
    #[pyo3(get)]
    months: i64,
    #[pyo3(get)]
    days: i64,
    #[pyo3(get)]
    seconds: i64,
    #[pyo3(get)]
    nanoseconds: i64,
}

/// Properties equal as Python values (`1 == 1.0`, nested lists and maps).
fn same_properties(py: Python<'_>, a: &Py<PyDict>, b: &Py<PyDict>) -> PyResult<bool> {
    a.bind(py).eq(b.bind(py))
}

/// Equal entities: the same element id where both have one, else the same labels (type) and
/// properties.
fn same_entity(
    py: Python<'_>,
    (ida, tag_a, props_a): (&Option<String>, &[String], &Py<PyDict>),
    (idb, tag_b, props_b): (&Option<String>, &[String], &Py<PyDict>),
) -> PyResult<bool> {
    if let (Some(a), Some(b)) = (ida, idb) {
        return Ok(a == b);
    }
    Ok(tag_a == tag_b && same_properties(py, props_a, props_b)?)
}

/// Property `key`, or KeyError.
fn property<'py>(py: Python<'py>, props: &Py<PyDict>, key: &str) -> PyResult<Bound<'py, PyAny>> {
    props
        .bind(py)
        .get_item(key)?
        .ok_or_else(|| pyo3::exceptions::PyKeyError::new_err(key.to_string()))
}

#[pymethods]
impl Node {
    fn __getitem__<'py>(&self, py: Python<'py>, key: &str) -> PyResult<Bound<'py, PyAny>> {
        property(py, &self.properties, key)
    }

    #[pyo3(signature = (key, default=None))]
    fn get<'py>(
        &self,
        py: Python<'py>,
        key: &str,
        default: Option<Bound<'py, PyAny>>,
    ) -> PyResult<Option<Bound<'py, PyAny>>> {
        Ok(self.properties.bind(py).get_item(key)?.or(default))
    }

    fn __contains__(&self, py: Python<'_>, key: &str) -> PyResult<bool> {
        self.properties.bind(py).contains(key)
    }

    fn __repr__(&self, py: Python<'_>) -> PyResult<String> {
        self.text(py)
    }

    fn __richcmp__(
        &self,
        py: Python<'_>,
        other: &Bound<'_, PyAny>,
        op: CompareOp,
    ) -> PyResult<Py<PyAny>> {
        let Ok(other) = other.cast::<Node>() else {
            return Ok(py.NotImplemented());
        };
        let o = other.get();
        let eq = same_entity(
            py,
            (&self.element_id, &self.labels, &self.properties),
            (&o.element_id, &o.labels, &o.properties),
        )?;
        compare(py, eq, op)
    }

    fn __hash__(&self) -> u64 {
        hash_str(&self.tag())
    }
}

#[pymethods]
impl Relationship {
    fn __getitem__<'py>(&self, py: Python<'py>, key: &str) -> PyResult<Bound<'py, PyAny>> {
        property(py, &self.properties, key)
    }

    #[pyo3(signature = (key, default=None))]
    fn get<'py>(
        &self,
        py: Python<'py>,
        key: &str,
        default: Option<Bound<'py, PyAny>>,
    ) -> PyResult<Option<Bound<'py, PyAny>>> {
        Ok(self.properties.bind(py).get_item(key)?.or(default))
    }

    fn __contains__(&self, py: Python<'_>, key: &str) -> PyResult<bool> {
        self.properties.bind(py).contains(key)
    }

    fn __repr__(&self, py: Python<'_>) -> PyResult<String> {
        self.text(py)
    }

    fn __richcmp__(
        &self,
        py: Python<'_>,
        other: &Bound<'_, PyAny>,
        op: CompareOp,
    ) -> PyResult<Py<PyAny>> {
        let Ok(other) = other.cast::<Relationship>() else {
            return Ok(py.NotImplemented());
        };
        let o = other.get();
        let eq = same_entity(
            py,
            (
                &self.element_id,
                std::slice::from_ref(&self.rel_type),
                &self.properties,
            ),
            (
                &o.element_id,
                std::slice::from_ref(&o.rel_type),
                &o.properties,
            ),
        )?;
        compare(py, eq, op)
    }

    fn __hash__(&self) -> u64 {
        hash_str(&self.tag())
    }
}

#[pymethods]
impl Path {
    /// The first node.
    #[getter]
    fn start_node<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        self.nodes.bind(py).get_item(0)
    }

    /// The last node.
    #[getter]
    fn end_node<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let nodes = self.nodes.bind(py);
        nodes.get_item(nodes.len().saturating_sub(1))
    }

    /// The number of relationships.
    fn __len__(&self, py: Python<'_>) -> usize {
        self.relationships.bind(py).len()
    }

    fn __repr__(&self, py: Python<'_>) -> PyResult<String> {
        Ok(format!("<Path {}>", self.text(py)?))
    }

    fn __richcmp__(
        &self,
        py: Python<'_>,
        other: &Bound<'_, PyAny>,
        op: CompareOp,
    ) -> PyResult<Py<PyAny>> {
        let Ok(other) = other.cast::<Path>() else {
            return Ok(py.NotImplemented());
        };
        let o = other.get();
        let eq = self.nodes.bind(py).eq(o.nodes.bind(py))?
            && self.relationships.bind(py).eq(o.relationships.bind(py))?;
        compare(py, eq, op)
    }
}

#[pymethods]
impl Duration {
    #[new]
    #[pyo3(signature = (months=0, days=0, seconds=0, nanoseconds=0))]
    fn new(months: i64, days: i64, seconds: i64, nanoseconds: i64) -> Self {
        // Seconds and nanoseconds as one normalised pair, the sign of the whole.
        let total = seconds as i128 * 1_000_000_000 + nanoseconds as i128;
        Self::from_cypher(&CypherDuration::new(months, days, total))
    }

    fn __repr__(&self) -> String {
        format!(
            "Duration(months={}, days={}, seconds={}, nanoseconds={})",
            self.months, self.days, self.seconds, self.nanoseconds
        )
    }

    /// The ISO 8601 text Cypher prints (`P1M2DT3.5S`).
    fn __str__(&self) -> String {
        Temporal::Duration(self.to_cypher()).to_string()
    }
}

impl Duration {
    fn from_cypher(d: &CypherDuration) -> Self {
        let ns = d.nanos;
        Self {
            months: d.months,
            days: d.days,
            seconds: (ns / 1_000_000_000) as i64,
            nanoseconds: (ns % 1_000_000_000) as i64,
        }
    }

    fn to_cypher(self) -> CypherDuration {
        CypherDuration::new(
            self.months,
            self.days,
            self.seconds as i128 * 1_000_000_000 + self.nanoseconds as i128,
        )
    }
}

// Printing is computed when asked for, from the Python objects: converting a result row
// formats nothing.

impl Node {
    /// `:A:B`: what equal nodes share, whether or not they carry element ids.
    fn tag(&self) -> String {
        self.labels.iter().map(|l| format!(":{l}")).collect()
    }

    fn text(&self, py: Python<'_>) -> PyResult<String> {
        entity_repr(py, &self.tag(), &self.properties, "(", ")")
    }
}

impl Relationship {
    fn tag(&self) -> String {
        format!(":{}", self.rel_type)
    }

    fn text(&self, py: Python<'_>) -> PyResult<String> {
        entity_repr(py, &self.tag(), &self.properties, "[", "]")
    }
}

impl Path {
    /// `(:A)-[:T]->(:B)<-[:U]-(:C)`: a relationship whose start is not the node before it
    /// is walked backwards.
    fn text(&self, py: Python<'_>) -> PyResult<String> {
        let nodes = self.nodes.bind(py);
        let rels = self.relationships.bind(py);
        let mut out = String::new();
        for (k, n) in nodes.iter().enumerate() {
            let n = n.cast::<Node>()?.get();
            if k > 0 {
                let r = rels.get_item(k - 1)?;
                let r = r.cast::<Relationship>()?.get();
                let before = nodes.get_item(k - 1)?;
                let before = &before.cast::<Node>()?.get().element_id;
                let text = r.text(py)?;
                match &r.start_element_id {
                    Some(start) if Some(start) != before.as_ref() => {
                        out.push_str(&format!("<-{text}-"))
                    }
                    _ => out.push_str(&format!("-{text}->")),
                }
            }
            out.push_str(&n.text(py)?);
        }
        Ok(out)
    }
}

fn entity_repr(
    py: Python<'_>,
    tag: &str,
    props: &Py<PyDict>,
    open: &str,
    close: &str,
) -> PyResult<String> {
    let props = props
        .bind(py)
        .iter()
        .map(|(k, v)| Ok(format!("{k}: {}", python_text(&v)?)))
        .collect::<PyResult<Vec<_>>>()?;
    Ok(if props.is_empty() {
        format!("{open}{tag}{close}")
    } else {
        format!("{open}{tag} {{{}}}{close}", props.join(", "))
    })
}

/// A Python value of a result as Cypher prints it (`'text'`, `[1, 2.0]`, `{k: null}`).
fn python_text(v: &Bound<'_, PyAny>) -> PyResult<String> {
    if v.is_none() {
        return Ok("null".into());
    }
    if let Ok(b) = v.cast::<PyBool>() {
        return Ok(b.is_true().to_string());
    }
    if let Ok(x) = v.cast::<PyFloat>() {
        return Ok(lance_csr::fmt_float(x.value()));
    }
    if let Ok(s) = v.cast::<PyString>() {
        return Ok(cypher_text(&Value::Str(s.extract()?)));
    }
    if let Ok(xs) = v.cast::<PyList>() {
        let items = xs
            .iter()
            .map(|x| python_text(&x))
            .collect::<PyResult<Vec<_>>>()?;
        return Ok(format!("[{}]", items.join(", ")));
    }
    if let Ok(d) = v.cast::<PyDict>() {
        let items = d
            .iter()
            .map(|(k, x)| Ok(format!("{k}: {}", python_text(&x)?)))
            .collect::<PyResult<Vec<_>>>()?;
        return Ok(format!("{{{}}}", items.join(", ")));
    }
    if v.is_instance_of::<Node>() || v.is_instance_of::<Relationship>() {
        return Ok(v.repr()?.to_string());
    }
    // Integers, durations, dates and times: their own text.
    Ok(v.str()?.to_string())
}

fn compare(py: Python<'_>, eq: bool, op: CompareOp) -> PyResult<Py<PyAny>> {
    Ok(match op {
        CompareOp::Eq => PyBool::new(py, eq).to_owned().into_any().unbind(),
        CompareOp::Ne => PyBool::new(py, !eq).to_owned().into_any().unbind(),
        _ => py.NotImplemented(),
    })
}

fn hash_str(s: &str) -> u64 {
    use std::hash::{Hash, Hasher};
    let mut h = std::collections::hash_map::DefaultHasher::new();
    s.hash(&mut h);
    h.finish()
}

// ---- Cypher values to Python ----

/// Python's `datetime` module (imported once).
fn datetime_module(py: Python<'_>) -> PyResult<&Bound<'_, PyModule>> {
    static MODULE: PyOnceLock<Py<PyModule>> = PyOnceLock::new();
    MODULE
        .get_or_try_init(py, || Ok::<_, PyErr>(py.import("datetime")?.unbind()))
        .map(|m| m.bind(py))
}

/// `value` as a Python object.
pub fn to_python(py: Python<'_>, value: &Value) -> PyResult<Py<PyAny>> {
    Ok(match value {
        Value::Null => py.None(),
        Value::Bool(b) => PyBool::new(py, *b).to_owned().into_any().unbind(),
        Value::Int(i) => i.into_pyobject(py)?.into_any().unbind(),
        Value::Float(x) => PyFloat::new(py, *x).into_any().unbind(),
        Value::Str(s) => PyString::new(py, s).into_any().unbind(),
        Value::List(xs) => {
            let items = xs
                .iter()
                .map(|x| to_python(py, x))
                .collect::<PyResult<Vec<_>>>()?;
            PyList::new(py, items)?.into_any().unbind()
        }
        Value::Map(entries) => map_to_python(py, value, entries)?,
        Value::Temporal(t) => temporal_to_python(py, t)?,
        Value::Other(s) => match s {
            lance_csr::datafusion::common::ScalarValue::Binary(Some(b))
            | lance_csr::datafusion::common::ScalarValue::LargeBinary(Some(b))
            | lance_csr::datafusion::common::ScalarValue::FixedSizeBinary(_, Some(b))
            | lance_csr::datafusion::common::ScalarValue::BinaryView(Some(b)) => {
                PyBytes::new(py, b).into_any().unbind()
            }
            other if other.is_null() => py.None(),
            other => PyString::new(py, &other.to_string()).into_any().unbind(),
        },
    })
}

/// A map: a node, a relationship or a path ([`Entity`]), or a plain map as a dict.
fn map_to_python(py: Python<'_>, v: &Value, entries: &[(String, Value)]) -> PyResult<Py<PyAny>> {
    // As the server shows them: printable, the same in both.
    let owned = |id: Option<&str>| id.map(lance_csr::server::values::shown_id);
    match v.entity() {
        Some(Entity::Node {
            labels,
            element_id,
            properties,
        }) => {
            let node = Node {
                labels: labels.into_iter().map(str::to_string).collect(),
                properties: properties_dict(py, &properties)?,
                element_id: owned(element_id),
            };
            Ok(Py::new(py, node)?.into_any())
        }
        Some(Entity::Relationship {
            rel_type,
            element_id,
            start,
            end,
            properties,
        }) => {
            let rel = Relationship {
                rel_type: rel_type.to_string(),
                properties: properties_dict(py, &properties)?,
                element_id: owned(element_id),
                start_element_id: owned(start),
                end_element_id: owned(end),
            };
            Ok(Py::new(py, rel)?.into_any())
        }
        Some(Entity::Path {
            nodes,
            relationships,
        }) => {
            let list = |xs: &[Value]| -> PyResult<Py<PyList>> {
                let items = xs
                    .iter()
                    .map(|x| to_python(py, x))
                    .collect::<PyResult<Vec<_>>>()?;
                Ok(PyList::new(py, items)?.unbind())
            };
            let path = Path {
                nodes: list(nodes)?,
                relationships: list(relationships)?,
            };
            Ok(Py::new(py, path)?.into_any())
        }
        _ => {
            let d = PyDict::new(py);
            for (k, v) in entries {
                d.set_item(k, to_python(py, v)?)?;
            }
            Ok(d.into_any().unbind())
        }
    }
}

fn properties_dict(py: Python<'_>, props: &[(&str, &Value)]) -> PyResult<Py<PyDict>> {
    let d = PyDict::new(py);
    for (k, v) in props {
        d.set_item(k, to_python(py, v)?)?;
    }
    Ok(d.unbind())
}

fn entity_text(tag: &str, entries: &[(String, Value)], open: &str, close: &str) -> String {
    let props: Vec<String> = entries
        .iter()
        .filter(|(k, v)| !is_identity_field(k) && !matches!(v, Value::Null))
        .map(|(k, v)| format!("{k}: {}", cypher_text(v)))
        .collect();
    if props.is_empty() {
        format!("{open}{tag}{close}")
    } else {
        format!("{open}{tag} {{{}}}{close}", props.join(", "))
    }
}

fn path_text(nodes: &Value, rels: &Value) -> String {
    let (Value::List(nodes), Value::List(rels)) = (nodes, rels) else {
        return String::new();
    };
    let mut out = String::new();
    for (k, n) in nodes.iter().enumerate() {
        if k > 0 {
            let r = &rels[k - 1];
            let forwards = walked_forwards(r, &nodes[k - 1]);
            let text = cypher_text(r);
            if forwards {
                out.push_str(&format!("-{text}->"));
            } else {
                out.push_str(&format!("<-{text}-"));
            }
        }
        out.push_str(&cypher_text(n));
    }
    out
}

/// A value as Cypher prints it (`'text'`, `[1, 2.0]`, `{k: null}`, `(:A {x: 1})`).
pub fn cypher_text(v: &Value) -> String {
    match v {
        Value::Null => "null".into(),
        Value::Bool(b) => b.to_string(),
        Value::Int(i) => i.to_string(),
        Value::Float(x) => lance_csr::fmt_float(*x),
        Value::Str(s) => format!("'{}'", s.replace('\\', "\\\\").replace('\'', "\\'")),
        Value::List(xs) => format!(
            "[{}]",
            xs.iter().map(cypher_text).collect::<Vec<_>>().join(", ")
        ),
        Value::Map(es) => match es.first().map(|(k, _)| k.as_str()) {
            Some("__label") => {
                let tag = match &es[0].1 {
                    Value::Str(s) => lance_csr::split_labels(s)
                        .into_iter()
                        .map(|l| format!(":{l}"))
                        .collect(),
                    _ => String::new(),
                };
                entity_text(&tag, &es[1..], "(", ")")
            }
            Some("__type") => {
                let tag = match &es[0].1 {
                    Value::Str(s) => format!(":{s}"),
                    _ => String::new(),
                };
                entity_text(&tag, &es[1..], "[", "]")
            }
            Some("__nodes") if es.len() == 2 => path_text(&es[0].1, &es[1].1),
            _ => format!(
                "{{{}}}",
                es.iter()
                    .map(|(k, v)| format!("{k}: {}", cypher_text(v)))
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        },
        Value::Temporal(t) => t.to_string(),
        Value::Other(s) => s.to_string(),
    }
}

/// A temporal value as a `datetime` object (microseconds: Python's resolution) or a
/// [`Duration`].
fn temporal_to_python(py: Python<'_>, t: &Temporal) -> PyResult<Py<PyAny>> {
    use chrono::{Datelike, Timelike};
    let dt = datetime_module(py)?;
    let tz = |offset: i32| -> PyResult<Bound<'_, PyAny>> {
        let delta = dt.getattr("timedelta")?.call1((0, offset))?;
        dt.getattr("timezone")?.call1((delta,))
    };
    let time_args = |t: &chrono::NaiveTime| {
        (
            t.hour(),
            t.minute(),
            t.second(),
            // A leap second's nanoseconds run past one second.
            (t.nanosecond() % 1_000_000_000) / 1000,
        )
    };
    let obj = match t {
        Temporal::Date(d) => dt.getattr("date")?.call1((d.year(), d.month(), d.day()))?,
        Temporal::LocalTime(t) => dt.getattr("time")?.call1(time_args(t))?,
        Temporal::Time(t, offset) => {
            let (h, m, s, us) = time_args(t);
            dt.getattr("time")?.call1((h, m, s, us, tz(*offset)?))?
        }
        Temporal::LocalDateTime(d) => {
            let (h, m, s, us) = time_args(&d.time());
            dt.getattr("datetime")?
                .call1((d.year(), d.month(), d.day(), h, m, s, us))?
        }
        Temporal::DateTime(d, offset, zone) => {
            let (h, m, s, us) = time_args(&d.time());
            let fixed = dt.getattr("datetime")?.call1((
                d.year(),
                d.month(),
                d.day(),
                h,
                m,
                s,
                us,
                tz(*offset)?,
            ))?;
            match zone {
                // The same instant in its named zone (whose rules gave the offset).
                Some(z) => match py
                    .import("zoneinfo")
                    .and_then(|m| m.getattr("ZoneInfo")?.call1((z,)))
                {
                    Ok(info) => fixed.call_method1("astimezone", (info,))?,
                    Err(_) => fixed,
                },
                None => fixed,
            }
        }
        Temporal::Duration(d) => return Ok(Py::new(py, Duration::from_cypher(d))?.into_any()),
    };
    Ok(obj.unbind())
}

// ---- Python values to Cypher (parameters) ----

/// A Python value as a parameter value: None, bool, int, float, str, list / tuple, dict with
/// string keys, `datetime.date` / `time` / `datetime` / `timedelta`, [`Duration`].
pub fn from_python(obj: &Bound<'_, PyAny>) -> PyResult<Value> {
    from_python_at(obj, 0)
}

/// How deep lists and maps of a parameter may nest, as over Bolt: a list that holds itself,
/// or one nested a hundred thousand deep, is an error, not a stack overflow.
const MAX_DEPTH: usize = lance_csr::server::packstream::MAX_DEPTH;

fn from_python_at(obj: &Bound<'_, PyAny>, depth: usize) -> PyResult<Value> {
    if obj.is_none() {
        return Ok(Value::Null);
    }
    if let Ok(b) = obj.cast::<PyBool>() {
        return Ok(Value::Bool(b.is_true()));
    }
    if obj.is_instance_of::<PyInt>() {
        return match obj.extract::<i64>() {
            Ok(i) => Ok(Value::Int(i)),
            Err(_) => Err(usage(format!(
                "integer {} does not fit in 64 bits (Cypher's integers are 64-bit)",
                obj.repr()?
            ))),
        };
    }
    if let Ok(x) = obj.cast::<PyFloat>() {
        return Ok(Value::Float(x.value()));
    }
    if let Ok(s) = obj.cast::<PyString>() {
        return Ok(Value::Str(s.extract::<String>()?));
    }
    let nested = obj.is_instance_of::<PyDict>()
        || obj.is_instance_of::<PyList>()
        || obj.is_instance_of::<PyTuple>();
    if nested && depth >= MAX_DEPTH {
        return Err(usage(format!(
            "a parameter's lists and maps nest deeper than {MAX_DEPTH} levels (or hold \
             themselves)"
        )));
    }
    if let Ok(d) = obj.cast::<PyDict>() {
        let mut entries = Vec::with_capacity(d.len());
        for (k, v) in d.iter() {
            let Ok(k) = k.cast::<PyString>() else {
                return Err(usage(format!(
                    "map keys must be strings, got {}",
                    k.repr()?
                )));
            };
            entries.push((k.extract::<String>()?, from_python_at(&v, depth + 1)?));
        }
        return Ok(Value::Map(entries));
    }
    if obj.is_instance_of::<PyList>() || obj.is_instance_of::<PyTuple>() {
        let n = obj.len()?;
        let mut items = obj.try_iter()?;
        let mut out = Vec::new();
        if depth == 0 && n >= lance_csr::COMPACT_LIST_ITEMS {
            // A long parameter of one kind is held as one Arrow list, never as values.
            let mut typed = TypedListBuilder::with_capacity(n);
            let mut other = None;
            for x in items.by_ref() {
                let v = from_python_at(&x?, depth + 1)?;
                if !typed.append(&v) {
                    other = Some(v);
                    break;
                }
            }
            let Some(other) = other else {
                let len = typed.len();
                return Ok(match typed.finish() {
                    Some(list) => Value::Other(list),
                    None => Value::List(vec![Value::Null; len]),
                });
            };
            out = typed.take_values();
            out.push(other);
        }
        for x in items {
            out.push(from_python_at(&x?, depth + 1)?);
        }
        return Ok(Value::List(out));
    }
    if let Ok(d) = obj.cast::<Duration>() {
        return Ok(Value::Temporal(Temporal::Duration(d.get().to_cypher())));
    }
    if let Some(t) = temporal_from_python(obj)? {
        return Ok(Value::Temporal(t));
    }
    // numpy scalars and other numbers that say what they are.
    if obj.hasattr("__index__")? {
        if let Ok(i) = obj.extract::<i64>() {
            return Ok(Value::Int(i));
        }
    }
    if obj.hasattr("__float__")? {
        if let Ok(x) = obj.extract::<f64>() {
            return Ok(Value::Float(x));
        }
    }
    Err(usage(format!(
        "a parameter cannot be a {} ({}): use None, bool, int, float, str, list, dict, \
         datetime.date/time/datetime/timedelta or lance_csr.Duration",
        obj.get_type().name()?,
        obj.repr()?
    )))
}

/// A `datetime.datetime` / `date` / `time` / `timedelta` as a temporal value.
fn temporal_from_python(obj: &Bound<'_, PyAny>) -> PyResult<Option<Temporal>> {
    use chrono::{NaiveDate, NaiveDateTime, NaiveTime};
    let py = obj.py();
    let dt = datetime_module(py)?;
    let int = |name: &str| -> PyResult<i64> { obj.getattr(name)?.extract::<i64>() };
    let bad = || {
        usage(format!(
            "{} is not a valid temporal value",
            obj.repr().map(|r| r.to_string()).unwrap_or_default()
        ))
    };
    let time = || -> PyResult<NaiveTime> {
        NaiveTime::from_hms_micro_opt(
            int("hour")? as u32,
            int("minute")? as u32,
            int("second")? as u32,
            int("microsecond")? as u32,
        )
        .ok_or_else(bad)
    };
    let date = || -> PyResult<NaiveDate> {
        NaiveDate::from_ymd_opt(
            int("year")? as i32,
            int("month")? as u32,
            int("day")? as u32,
        )
        .ok_or_else(bad)
    };
    // The UTC offset in seconds and the zone's name, of an aware value.
    let zone = || -> PyResult<Option<(i32, Option<String>)>> {
        let offset = obj.call_method0("utcoffset")?;
        if offset.is_none() {
            return Ok(None);
        }
        let secs: f64 = offset.call_method0("total_seconds")?.extract()?;
        let tzinfo = obj.getattr("tzinfo")?;
        let name = match tzinfo.getattr("key") {
            Ok(k) if k.is_instance_of::<PyString>() => Some(k.extract::<String>()?),
            _ => None,
        };
        Ok(Some((secs.round() as i32, name)))
    };
    if obj.is_instance(&dt.getattr("datetime")?)? {
        let local = NaiveDateTime::new(date()?, time()?);
        return Ok(Some(match zone()? {
            Some((offset, name)) => Temporal::DateTime(local, offset, name),
            None => Temporal::LocalDateTime(local),
        }));
    }
    if obj.is_instance(&dt.getattr("date")?)? {
        return Ok(Some(Temporal::Date(date()?)));
    }
    if obj.is_instance(&dt.getattr("time")?)? {
        return Ok(Some(match zone()? {
            Some((offset, _)) => Temporal::Time(time()?, offset),
            None => Temporal::LocalTime(time()?),
        }));
    }
    if obj.is_instance(&dt.getattr("timedelta")?)? {
        let nanos = (int("seconds")? as i128 * 1_000_000 + int("microseconds")? as i128) * 1000;
        return Ok(Some(Temporal::Duration(CypherDuration::new(
            0,
            int("days")?,
            nanos,
        ))));
    }
    Ok(None)
}
