//! openCypher TCK support: scenario records, their graphs as lance-csr tables, and the TCK's
//! value format with the reference harness's comparison rules.

use arrow::array::{
    Array, ArrayRef, AsArray, BooleanArray, BooleanBuilder, Float64Array, Float64Builder,
    Int64Array, Int64Builder, ListBuilder, RecordBatch, StringArray, StringBuilder,
};
use arrow::datatypes::{DataType, Field, Float32Type, Float64Type, Schema};
use lance_csr::{Graph, GraphOptions, Params};
use serde_json::Value as Json;
use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

/// Label of nodes that have none (the table model needs one table per label).
/// Unlabeled nodes live in the table of the empty label.
pub const UNLABELED: &str = "";

#[derive(Debug, Clone)]
pub struct Scenario {
    pub id: String,
    pub feature_file: String,
    pub strict_core: bool,
    pub query: String,
    pub params: Option<BTreeMap<String, String>>,
    pub setup_graph: Json,
    pub expected: Json,
}

pub fn load(path: &std::path::Path) -> Vec<Scenario> {
    let text = std::fs::read_to_string(path).expect("readable TCK file");
    text.lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| {
            let v: Json = serde_json::from_str(l).expect("TCK line is JSON");
            Scenario {
                id: v["id"].as_str().unwrap_or_default().to_string(),
                feature_file: v["feature_file"].as_str().unwrap_or_default().to_string(),
                strict_core: v["strict_core"].as_bool().unwrap_or(false),
                query: v["query"].as_str().unwrap_or_default().to_string(),
                params: v["params"].as_object().map(|m| {
                    m.iter()
                        .map(|(k, v)| (k.clone(), v.as_str().unwrap_or("null").to_string()))
                        .collect()
                }),
                setup_graph: v["setup_graph"].clone(),
                expected: v["expected"].clone(),
            }
        })
        .collect()
}

/// The TCK path: `LANCE_CSR_TCK`, else `../shared/tck/tck.jsonl` from the project root.
pub fn tck_path() -> Option<(std::path::PathBuf, bool)> {
    if let Ok(p) = std::env::var("LANCE_CSR_TCK") {
        return Some((p.into(), false));
    }
    let p = super::project_root().join("../shared/tck/tck.jsonl");
    p.exists().then_some((p, true))
}

/// A suite's data is missing: under CI (`CI` set) the suite fails, elsewhere it is skipped
/// with a line saying so.
pub fn missing(what: &str) {
    if std::env::var_os("CI").is_some() {
        panic!("{what} is missing, and CI is set: the suite would check nothing");
    }
    println!("{what} is missing; skipping");
}

// ---------------------------------------------------------------------------------------------
// Values

#[derive(Debug, Clone)]
pub enum Value {
    Null,
    Bool(bool),
    Int(i64),
    Float(f64),
    Str(String),
    List(Vec<Value>),
    Map(BTreeMap<String, Value>),
    Node(BTreeSet<String>, BTreeMap<String, Value>),
    Rel(String, BTreeMap<String, Value>),
    /// Nodes and relationships in order; each relationship with whether it points forwards.
    Path(Vec<Value>, Vec<(Value, bool)>),
    /// A setup's property the engine computed (a temporal value), as its mixed-kind cell.
    Cell(Vec<u8>),
}

impl Value {
    /// Equality as the reference harness compares (lists in order).
    pub fn same(&self, other: &Value, ignore_list_order: bool) -> bool {
        use Value::*;
        match (self, other) {
            (Null, Null) => true,
            (Bool(a), Bool(b)) => a == b,
            (Int(a), Int(b)) => a == b,
            (Float(a), Float(b)) => (a.is_nan() && b.is_nan()) || a == b,
            (Str(a), Str(b)) => a == b,
            (List(a), List(b)) => {
                if a.len() != b.len() {
                    return false;
                }
                if ignore_list_order {
                    let mut used = vec![false; b.len()];
                    a.iter().all(|x| {
                        (0..b.len()).any(|j| {
                            if !used[j] && x.same(&b[j], true) {
                                used[j] = true;
                                true
                            } else {
                                false
                            }
                        })
                    })
                } else {
                    a.iter().zip(b).all(|(x, y)| x.same(y, false))
                }
            }
            (Map(a), Map(b)) => maps_same(a, b),
            (Node(la, pa), Node(lb, pb)) => la == lb && maps_same(pa, pb),
            (Rel(ta, pa), Rel(tb, pb)) => ta == tb && maps_same(pa, pb),
            (Path(na, ra), Path(nb, rb)) => {
                na.len() == nb.len()
                    && ra.len() == rb.len()
                    && na.iter().zip(nb).all(|(x, y)| x.same(y, false))
                    && ra
                        .iter()
                        .zip(rb)
                        .all(|((x, dx), (y, dy))| dx == dy && x.same(y, false))
            }
            _ => false,
        }
    }
}

fn maps_same(a: &BTreeMap<String, Value>, b: &BTreeMap<String, Value>) -> bool {
    a.len() == b.len()
        && a.iter()
            .all(|(k, v)| b.get(k).is_some_and(|w| v.same(w, false)))
}

/// Parser of the TCK value format.
pub struct ValueParser<'a> {
    s: &'a [u8],
    i: usize,
}

impl<'a> ValueParser<'a> {
    pub fn parse(text: &'a str) -> Result<Value, String> {
        let mut p = ValueParser {
            s: text.as_bytes(),
            i: 0,
        };
        let v = p.value()?;
        p.ws();
        if p.i != p.s.len() {
            return Err(format!("trailing input in {text:?} at {}", p.i));
        }
        Ok(v)
    }

    fn ws(&mut self) {
        while self.i < self.s.len() && (self.s[self.i] as char).is_whitespace() {
            self.i += 1;
        }
    }

    fn peek(&mut self) -> Option<u8> {
        self.ws();
        self.s.get(self.i).copied()
    }

    fn eat(&mut self, c: u8) -> bool {
        if self.peek() == Some(c) {
            self.i += 1;
            true
        } else {
            false
        }
    }

    fn expect(&mut self, c: u8) -> Result<(), String> {
        if self.eat(c) {
            Ok(())
        } else {
            Err(format!("expected '{}' at {}", c as char, self.i))
        }
    }

    fn ident(&mut self) -> String {
        self.ws();
        if self.s.get(self.i) == Some(&b'`') {
            self.i += 1;
            let start = self.i;
            while self.i < self.s.len() && self.s[self.i] != b'`' {
                self.i += 1;
            }
            let out = String::from_utf8_lossy(&self.s[start..self.i]).to_string();
            self.i += 1;
            return out;
        }
        let start = self.i;
        while self.i < self.s.len() {
            let c = self.s[self.i];
            if c.is_ascii_alphanumeric() || c == b'_' || c >= 0x80 {
                self.i += 1;
            } else {
                break;
            }
        }
        String::from_utf8_lossy(&self.s[start..self.i]).to_string()
    }

    fn props(&mut self) -> Result<BTreeMap<String, Value>, String> {
        let mut m = BTreeMap::new();
        self.expect(b'{')?;
        if self.eat(b'}') {
            return Ok(m);
        }
        loop {
            let k = self.ident();
            self.expect(b':')?;
            let v = self.value()?;
            m.insert(k, v);
            if self.eat(b'}') {
                return Ok(m);
            }
            self.expect(b',')?;
        }
    }

    fn value(&mut self) -> Result<Value, String> {
        match self.peek() {
            None => Err("unexpected end".into()),
            Some(b'\'') => {
                self.i += 1;
                let mut out = Vec::new();
                while self.i < self.s.len() {
                    match self.s[self.i] {
                        b'\\' if self.i + 1 < self.s.len() => {
                            out.push(self.s[self.i + 1]);
                            self.i += 2;
                        }
                        b'\'' => {
                            self.i += 1;
                            return Ok(Value::Str(String::from_utf8_lossy(&out).to_string()));
                        }
                        c => {
                            out.push(c);
                            self.i += 1;
                        }
                    }
                }
                Err("unterminated string".into())
            }
            Some(b'[') => {
                // A list, or a relationship `[:T {..}]`.
                let save = self.i;
                self.i += 1;
                if self.peek() == Some(b':') {
                    self.i += 1;
                    let t = self.ident();
                    let props = if self.peek() == Some(b'{') {
                        self.props()?
                    } else {
                        BTreeMap::new()
                    };
                    self.expect(b']')?;
                    return Ok(Value::Rel(t, props));
                }
                self.i = save + 1;
                let mut items = Vec::new();
                if self.eat(b']') {
                    return Ok(Value::List(items));
                }
                loop {
                    items.push(self.value()?);
                    if self.eat(b']') {
                        return Ok(Value::List(items));
                    }
                    self.expect(b',')?;
                }
            }
            Some(b'{') => Ok(Value::Map(self.props()?)),
            Some(b'(') => {
                self.i += 1;
                let mut labels = BTreeSet::new();
                while self.eat(b':') {
                    labels.insert(self.ident());
                }
                let props = if self.peek() == Some(b'{') {
                    self.props()?
                } else {
                    BTreeMap::new()
                };
                self.expect(b')')?;
                Ok(Value::Node(labels, props))
            }
            Some(b'<') => {
                // `<(a)-[:T]->(b)<-[:U]-(c)>`
                self.i += 1;
                let mut nodes = vec![self.value()?];
                let mut rels = Vec::new();
                while !self.eat(b'>') {
                    let back = self.eat(b'<');
                    self.expect(b'-')?;
                    let r = self.value()?;
                    self.expect(b'-')?;
                    let fwd = self.eat(b'>');
                    if back == fwd {
                        return Err(format!(
                            "a path's relationship without one direction at {}",
                            self.i
                        ));
                    }
                    rels.push((r, fwd));
                    nodes.push(self.value()?);
                }
                Ok(Value::Path(nodes, rels))
            }
            Some(_) => {
                let start = self.i;
                while self.i < self.s.len() && !matches!(self.s[self.i], b',' | b']' | b'}' | b')')
                {
                    self.i += 1;
                }
                let tok = String::from_utf8_lossy(&self.s[start..self.i])
                    .trim()
                    .to_string();
                match tok.as_str() {
                    "null" => Ok(Value::Null),
                    "true" => Ok(Value::Bool(true)),
                    "false" => Ok(Value::Bool(false)),
                    "NaN" => Ok(Value::Float(f64::NAN)),
                    "Inf" | "Infinity" => Ok(Value::Float(f64::INFINITY)),
                    "-Inf" | "-Infinity" => Ok(Value::Float(f64::NEG_INFINITY)),
                    t if t.contains(['.', 'e', 'E']) => t
                        .parse::<f64>()
                        .map(Value::Float)
                        .map_err(|e| format!("{t}: {e}")),
                    t => t
                        .parse::<i64>()
                        .map(Value::Int)
                        .map_err(|e| format!("{t}: {e}")),
                }
            }
        }
    }
}

/// An Arrow cell as a TCK value (nodes and relationships from lance-csr's struct encoding).
pub fn arrow_value(a: &dyn Array, i: usize) -> Value {
    if a.is_null(i) {
        return Value::Null;
    }
    match a.data_type() {
        DataType::Null => Value::Null,
        DataType::Boolean => Value::Bool(a.as_boolean().value(i)),
        DataType::Int8
        | DataType::Int16
        | DataType::Int32
        | DataType::Int64
        | DataType::UInt8
        | DataType::UInt16
        | DataType::UInt32
        | DataType::UInt64 => {
            let c = arrow::compute::cast(&a.slice(i, 1), &DataType::Int64).expect("int cast");
            Value::Int(c.as_primitive::<arrow::datatypes::Int64Type>().value(0))
        }
        DataType::Float64 => Value::Float(a.as_primitive::<Float64Type>().value(i)),
        DataType::Float32 => Value::Float(a.as_primitive::<Float32Type>().value(i) as f64),
        DataType::Utf8 => Value::Str(a.as_string::<i32>().value(i).to_string()),
        DataType::LargeUtf8 => Value::Str(a.as_string::<i64>().value(i).to_string()),
        DataType::Utf8View => Value::Str(a.as_string_view().value(i).to_string()),
        DataType::List(_) => {
            let v = a.as_list::<i32>().value(i);
            Value::List((0..v.len()).map(|j| arrow_value(v.as_ref(), j)).collect())
        }
        DataType::LargeList(_) => {
            let v = a.as_list::<i64>().value(i);
            Value::List((0..v.len()).map(|j| arrow_value(v.as_ref(), j)).collect())
        }
        DataType::Struct(fields) => {
            let s = a.as_struct();
            let names: Vec<&str> = fields.iter().map(|f| f.name().as_str()).collect();
            let props = |skip: usize, drop_null: bool| {
                let mut m = BTreeMap::new();
                for (k, n) in names.iter().enumerate().skip(skip) {
                    let v = arrow_value(s.column(k).as_ref(), i);
                    if drop_null && (matches!(v, Value::Null) || n.starts_with("__")) {
                        continue;
                    }
                    m.insert(n.to_string(), v);
                }
                m
            };
            match names.first() {
                Some(&"__nodes") if names.len() == 2 => {
                    let (nodes, rels) =
                        (s.column(0).as_list::<i32>(), s.column(1).as_list::<i32>());
                    let (nodes, rels) = (nodes.value(i), rels.value(i));
                    let ns = (0..nodes.len())
                        .map(|k| arrow_value(nodes.as_ref(), k))
                        .collect();
                    let rs = (0..rels.len())
                        .map(|k| {
                            let fwd =
                                lance_csr::path_step_forwards(nodes.as_ref(), rels.as_ref(), k);
                            (arrow_value(rels.as_ref(), k), fwd)
                        })
                        .collect();
                    Value::Path(ns, rs)
                }
                Some(&"__label") => {
                    let l = match arrow_value(s.column(0).as_ref(), i) {
                        Value::Str(l) => lance_csr::split_labels(&l)
                            .into_iter()
                            .map(String::from)
                            .collect(),
                        _ => BTreeSet::new(),
                    };
                    Value::Node(l, props(1, true))
                }
                Some(&"__type") => {
                    let t = match arrow_value(s.column(0).as_ref(), i) {
                        Value::Str(t) => t,
                        _ => String::new(),
                    };
                    Value::Rel(t, props(1, true))
                }
                _ => Value::Map(props(0, false)),
            }
        }
        // A value of mixed kind: decoded into the Arrow value it stands for; a temporal
        // value as its text (the TCK compares them by their rendering).
        DataType::LargeBinary => {
            let v = lance_csr::Value::decode_mixed(a.as_binary::<i64>().value(i));
            if let lance_csr::Value::Temporal(t) = &v {
                return Value::Str(t.to_string());
            }
            let s = v.to_scalar().expect("a decoded value");
            arrow_value(s.to_array().expect("one row").as_ref(), 0)
        }
        other => Value::Str(format!("<unsupported {other}>")),
    }
}

// ---------------------------------------------------------------------------------------------
// Graphs

/// Why a scenario's graph cannot be expressed in the table model.
#[derive(Debug)]
pub struct NotExpressible(pub String);

fn column(values: &[Option<Value>]) -> Result<(DataType, ArrayRef), NotExpressible> {
    let kind = |v: &Value| match v {
        Value::Bool(_) => "bool",
        Value::Int(_) => "int",
        Value::Float(_) => "float",
        Value::Str(_) => "string",
        Value::List(_) => "list",
        Value::Cell(_) => "cell",
        _ => "other",
    };
    let kinds: BTreeSet<&str> = values.iter().flatten().map(kind).collect();
    if kinds.len() > 1 {
        return Err(NotExpressible(format!(
            "property with mixed types {kinds:?}"
        )));
    }
    let k = kinds.into_iter().next().unwrap_or("int");
    let arr: ArrayRef = match k {
        "bool" => Arc::new(
            values
                .iter()
                .map(|v| match v {
                    Some(Value::Bool(b)) => Some(*b),
                    _ => None,
                })
                .collect::<BooleanArray>(),
        ),
        "int" => Arc::new(
            values
                .iter()
                .map(|v| match v {
                    Some(Value::Int(b)) => Some(*b),
                    _ => None,
                })
                .collect::<Int64Array>(),
        ),
        "float" => Arc::new(
            values
                .iter()
                .map(|v| match v {
                    Some(Value::Float(b)) => Some(*b),
                    _ => None,
                })
                .collect::<Float64Array>(),
        ),
        "string" => Arc::new(
            values
                .iter()
                .map(|v| match v {
                    Some(Value::Str(b)) => Some(b.clone()),
                    _ => None,
                })
                .collect::<StringArray>(),
        ),
        "list" => list_column(values)?,
        "cell" => Arc::new(
            values
                .iter()
                .map(|v| match v {
                    Some(Value::Cell(b)) => Some(b.as_slice()),
                    _ => None,
                })
                .collect::<arrow::array::LargeBinaryArray>(),
        ),
        other => return Err(NotExpressible(format!("property of kind {other}"))),
    };
    Ok((arr.data_type().clone(), arr))
}

fn list_column(values: &[Option<Value>]) -> Result<ArrayRef, NotExpressible> {
    let items: Vec<&Value> = values
        .iter()
        .flatten()
        .flat_map(|v| match v {
            Value::List(xs) => xs.iter().collect::<Vec<_>>(),
            _ => vec![],
        })
        .collect();
    let kinds: BTreeSet<&str> = items
        .iter()
        .map(|v| match v {
            Value::Int(_) => "int",
            Value::Float(_) => "float",
            Value::Str(_) => "string",
            Value::Bool(_) => "bool",
            _ => "other",
        })
        .collect();
    if kinds.len() > 1 || kinds.contains("other") {
        return Err(NotExpressible(
            "list property with mixed or nested items".into(),
        ));
    }
    macro_rules! build {
        ($builder:expr, $variant:ident) => {{
            let mut b = ListBuilder::new($builder);
            for v in values {
                match v {
                    Some(Value::List(xs)) => {
                        for x in xs {
                            if let Value::$variant(y) = x {
                                b.values().append_value(y.clone());
                            }
                        }
                        b.append(true);
                    }
                    _ => b.append(false),
                }
            }
            Arc::new(b.finish()) as ArrayRef
        }};
    }
    Ok(match kinds.into_iter().next().unwrap_or("int") {
        "int" => build!(Int64Builder::new(), Int),
        "float" => build!(Float64Builder::new(), Float),
        "bool" => build!(BooleanBuilder::new(), Bool),
        _ => build!(StringBuilder::new(), Str),
    })
}

fn props_of(
    v: &Json,
    computed: &BTreeMap<String, Vec<u8>>,
) -> Result<BTreeMap<String, Value>, NotExpressible> {
    let mut m = BTreeMap::new();
    if let Some(obj) = v.as_object() {
        for (k, s) in obj {
            let text = s.as_str().unwrap_or("null");
            if let Some(cell) = computed.get(text) {
                m.insert(k.clone(), Value::Cell(cell.clone()));
                continue;
            }
            let val = ValueParser::parse(text)
                .map_err(|e| NotExpressible(format!("value {text}: {e}")))?;
            if !matches!(val, Value::Null) {
                m.insert(k.clone(), val);
            }
        }
    }
    Ok(m)
}

/// A table of rows (`(key columns, properties)`) with properties unioned into nullable columns.
fn table(
    keys: Vec<(&str, Vec<i64>)>,
    rows: &[BTreeMap<String, Value>],
) -> Result<RecordBatch, NotExpressible> {
    let mut names: BTreeSet<String> = BTreeSet::new();
    for r in rows {
        names.extend(r.keys().cloned());
    }
    let mut fields = Vec::new();
    let mut cols: Vec<ArrayRef> = Vec::new();
    for (k, v) in keys {
        fields.push(Field::new(k, DataType::Int64, false));
        cols.push(Arc::new(Int64Array::from(v)));
    }
    for n in names {
        if matches!(n.as_str(), "__id" | "__src" | "__dst") {
            return Err(NotExpressible(format!("reserved property name {n}")));
        }
        let vals: Vec<Option<Value>> = rows.iter().map(|r| r.get(&n).cloned()).collect();
        let (t, a) = column(&vals)?;
        fields.push(if t == DataType::LargeBinary {
            lance_csr::mixed_field(&n, true)
        } else {
            Field::new(n, t, true)
        });
        cols.push(a);
    }
    RecordBatch::try_new(Arc::new(Schema::new(fields)), cols)
        .map_err(|e| NotExpressible(e.to_string()))
}

/// The setup's property values that are expressions rather than literals (a temporal
/// constructor: `date({year: 1984, month: 10, day: 11})`), evaluated by the engine into the
/// cells a property column holds.
async fn computed_properties(
    entities: impl Iterator<Item = &Json>,
) -> Result<BTreeMap<String, Vec<u8>>, NotExpressible> {
    let mut out = BTreeMap::new();
    let texts: BTreeSet<String> = entities
        .filter_map(|e| e["properties"].as_object())
        .flat_map(|o| o.values().filter_map(|v| v.as_str().map(String::from)))
        .filter(|t| ValueParser::parse(t).is_err())
        .collect();
    if texts.is_empty() {
        return Ok(out);
    }
    let g = Graph::builder()
        .build()
        .await
        .map_err(|e| NotExpressible(format!("empty graph: {e}")))?;
    for text in texts {
        let r = g
            .query(&format!("RETURN {text} AS v"), &Params::new())
            .await
            .map_err(|e| NotExpressible(format!("value {text}: {e}")))?;
        let col = r.batches[0].column(0);
        let Some(cells) = col.as_binary_opt::<i64>() else {
            return Err(NotExpressible(format!(
                "value {text} is a {}",
                col.data_type()
            )));
        };
        out.insert(text, cells.value(0).to_vec());
    }
    Ok(out)
}

/// Builds the scenario's graph as in-memory tables (lenient planner: schema-less semantics).
pub async fn build_graph(setup: &Json) -> Result<Graph, NotExpressible> {
    let empty = vec![];
    let nodes = setup["nodes"].as_array().unwrap_or(&empty);
    let rels = setup["relationships"].as_array().unwrap_or(&empty);
    let computed = computed_properties(nodes.iter().chain(rels)).await?;
    let mut by_label: BTreeMap<String, (Vec<i64>, Vec<BTreeMap<String, Value>>)> = BTreeMap::new();
    let mut label_of: BTreeMap<i64, String> = BTreeMap::new();
    for n in nodes {
        let labels: Vec<String> = n["labels"]
            .as_array()
            .map(|a| {
                a.iter()
                    .filter_map(|l| l.as_str().map(String::from))
                    .collect()
            })
            .unwrap_or_default();
        // One table per set of labels, named by them (`A:B`); unlabeled nodes in the table
        // named "".
        let label = if labels.is_empty() {
            UNLABELED.to_string()
        } else {
            labels.join(":")
        };
        let id = n["id"].as_i64().unwrap_or(0);
        label_of.insert(id, label.clone());
        let e = by_label.entry(label).or_default();
        e.0.push(id);
        e.1.push(props_of(&n["properties"], &computed)?);
    }
    type RelRows = (Vec<i64>, Vec<i64>, Vec<BTreeMap<String, Value>>);
    let mut by_type: BTreeMap<(String, String, String), RelRows> = BTreeMap::new();
    for r in rels {
        let t = r["type"].as_str().unwrap_or_default().to_string();
        let (s, d) = (
            r["src"].as_i64().unwrap_or(0),
            r["dst"].as_i64().unwrap_or(0),
        );
        let key = (t, label_of[&s].clone(), label_of[&d].clone());
        let e = by_type.entry(key).or_default();
        e.0.push(s);
        e.1.push(d);
        e.2.push(props_of(&r["properties"], &computed)?);
    }
    let mut b = Graph::builder();
    for (label, (ids, rows)) in by_label {
        let batch = table(vec![("__id", ids)], &rows)?;
        b = b
            .node_table(&label, "__id", batch.schema(), vec![batch])
            .hidden_key(&label);
        if label.contains(':') {
            let labels: Vec<&str> = label.split(':').collect();
            b = b.labels(&label, &labels);
        }
    }
    for ((t, from, to), (src, dst, rows)) in by_type {
        let batch = table(vec![("__src", src), ("__dst", dst)], &rows)?;
        b = b.relationship_table(
            &t,
            &from,
            &to,
            "__src",
            "__dst",
            batch.schema(),
            vec![batch],
        );
    }
    let mut options = GraphOptions::default();
    options.planner.lenient = true;
    // One partition: row order (and so collect() order) is deterministic, as the TCK assumes.
    options.target_partitions = Some(1);
    b.options(options)
        .build()
        .await
        .map_err(|e| NotExpressible(format!("graph does not open: {e}")))
}

/// Scenario parameters as lance-csr parameters.
pub fn params(s: &Scenario) -> Result<Params, String> {
    let mut p = Params::new();
    if let Some(m) = &s.params {
        for (k, v) in m {
            let e = cypher::parse_expression(v).map_err(|e| format!("param {k}: {e}"))?;
            let value = lance_csr::Value::from_literal(&e)
                .ok_or_else(|| format!("param {k}: not a literal: {v}"))?;
            p.insert(k.clone(), value);
        }
    }
    Ok(p)
}
