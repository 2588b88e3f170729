//! Arrow cells rendered as Cypher values: `'text'`, `[1, 2]`, `{k: 1}`, `(:Person {name: 'Ann'})`,
//! `[:KNOWS {since: 2020}]`.

use crate::functions::{any, temporal};
use arrow::array::{Array, ArrayRef, AsArray};
use arrow::datatypes::{DataType, Float32Type, Float64Type};
use arrow::util::display::{ArrayFormatter, FormatOptions};

/// Formats a float as Cypher prints it: always with a fraction or exponent.
pub fn fmt_float(x: f64) -> String {
    if x.is_nan() {
        "NaN".into()
    } else if x.is_infinite() {
        if x > 0.0 { "Infinity" } else { "-Infinity" }.into()
    } else {
        format!("{x:?}")
    }
}

fn quote(s: &str) -> String {
    format!("'{}'", s.replace('\\', "\\\\").replace('\'', "\\'"))
}

/// Whether row `i` of `a` is null, also in an array of the null type (whose rows are all null
/// without a validity bitmap, so `Array::is_null` says false).
pub fn null_at(a: &dyn Array, i: usize) -> bool {
    a.data_type() == &DataType::Null || a.is_null(i)
}

/// Renders row `i` of `a`. `quote_strings` quotes a top-level string; nested strings are always
/// quoted.
pub fn render_cell(a: &dyn Array, i: usize, quote_strings: bool) -> String {
    if null_at(a, i) {
        return "null".into();
    }
    match a.data_type() {
        DataType::Null => "null".into(),
        DataType::Boolean => a.as_boolean().value(i).to_string(),
        DataType::Float64 => fmt_float(a.as_primitive::<Float64Type>().value(i)),
        DataType::Float32 => fmt_float(a.as_primitive::<Float32Type>().value(i) as f64),
        DataType::Utf8 => {
            let s = a.as_string::<i32>().value(i);
            if quote_strings {
                quote(s)
            } else {
                s.to_string()
            }
        }
        DataType::LargeUtf8 => {
            let s = a.as_string::<i64>().value(i);
            if quote_strings {
                quote(s)
            } else {
                s.to_string()
            }
        }
        DataType::Utf8View => {
            let s = a.as_string_view().value(i);
            if quote_strings {
                quote(s)
            } else {
                s.to_string()
            }
        }
        DataType::LargeBinary => match temporal_at(a, i) {
            Some(t) => t,
            None => match decoded(a, i) {
                Some(x) => render_cell(x.as_ref(), 0, quote_strings),
                None => "?".into(),
            },
        },
        t if temporal::is_temporal_type(t) => temporal_at(a, i).unwrap_or_else(|| "?".into()),
        DataType::List(_) => list(a.as_list::<i32>().value(i).as_ref()),
        DataType::LargeList(_) => list(a.as_list::<i64>().value(i).as_ref()),
        DataType::FixedSizeList(_, _) => list(a.as_fixed_size_list().value(i).as_ref()),
        DataType::Struct(fields) => {
            let s = a.as_struct();
            let names: Vec<&str> = fields.iter().map(|f| f.name().as_str()).collect();
            let props = |skip: usize, skip_nulls: bool| -> String {
                let mut parts = Vec::new();
                for (k, name) in names.iter().enumerate().skip(skip) {
                    let col = s.column(k);
                    // An entity's identity fields (in a path) are not properties.
                    if skip_nulls
                        && (null_at(col.as_ref(), i)
                            || crate::functions::value::is_identity_field(name))
                    {
                        continue;
                    }
                    parts.push(format!(
                        "{}: {}",
                        cypher::fmt_ident(name),
                        render_cell(col.as_ref(), i, true)
                    ));
                }
                parts.join(", ")
            };
            let tag = |k: usize| render_cell(s.column(k).as_ref(), i, false);
            match names.first() {
                Some(&"__label") => {
                    let tag = tag(0);
                    let label: String = crate::config::split_labels(&tag)
                        .into_iter()
                        .map(|l| format!(":{l}"))
                        .collect();
                    let p = props(1, true);
                    if p.is_empty() {
                        format!("({label})")
                    } else if label.is_empty() {
                        format!("({{{p}}})")
                    } else {
                        format!("({label} {{{p}}})")
                    }
                }
                Some(&"__type") => {
                    let p = props(1, true);
                    if p.is_empty() {
                        format!("[:{}]", tag(0))
                    } else {
                        format!("[:{} {{{p}}}]", tag(0))
                    }
                }
                Some(&"__nodes") if names.len() == 2 => path(s, i),
                _ => format!("{{{}}}", props(0, false)),
            }
        }
        _ => ArrayFormatter::try_new(a, &FormatOptions::default())
            .map(|f| f.value(i).to_string())
            .unwrap_or_else(|_| "?".into()),
    }
}

/// A path value in Cypher's text form: `(:A {..})-[:T]->(:B)<-[:U]-(:C)`.
fn path(s: &arrow::array::StructArray, i: usize) -> String {
    let nodes = s.column(0).as_list::<i32>().value(i);
    let rels = s.column(1).as_list::<i32>().value(i);
    let mut out = String::new();
    for k in 0..nodes.len() {
        if k > 0 {
            let r = render_cell(rels.as_ref(), k - 1, true);
            if starts_at(nodes.as_ref(), rels.as_ref(), k - 1) {
                out.push_str(&format!("-{r}->"));
            } else {
                out.push_str(&format!("<-{r}-"));
            }
        }
        out.push_str(&render_cell(nodes.as_ref(), k, true));
    }
    out
}

/// Whether relationship `k` of a path starts at node `k` (is walked forwards).
pub fn starts_at(nodes: &dyn Array, rels: &dyn Array, k: usize) -> bool {
    let field = |a: &dyn Array, name: &str, row: usize| -> Option<String> {
        let s = a.as_struct_opt()?;
        let c = s.column_by_name(name)?;
        (!c.is_null(row)).then(|| c.as_string::<i32>().value(row).to_string())
    };
    let start = field(rels, "__start", k);
    start.is_none() || start == field(nodes, "__nid", k)
}

/// A value of mixed kind (`functions::any`) as a one-row array of its own type.
/// Row `i` of `a` rendered, when it is a temporal value (`1984-10-11`, `PT1H`): a cell of
/// mixed kind or of an Arrow date, time, timestamp, interval or duration type.
fn temporal_at(a: &dyn Array, i: usize) -> Option<String> {
    match crate::functions::value::value_at(a, i) {
        crate::functions::value::Value::Temporal(t) => Some(t.to_string()),
        _ => None,
    }
}

fn decoded(a: &dyn Array, i: usize) -> Option<ArrayRef> {
    let v = any::decode(a.as_binary::<i64>().value(i));
    any::to_scalar(&v).ok()?.to_array().ok()
}

fn list(a: &dyn Array) -> String {
    let items: Vec<String> = (0..a.len()).map(|j| render_cell(a, j, true)).collect();
    format!("[{}]", items.join(", "))
}

const NON_FINITE_MARK: &str = "\u{0}lance-csr-float:";

fn non_finite_placeholder(x: f64) -> String {
    let token = if x.is_nan() {
        "NaN"
    } else if x > 0.0 {
        "Infinity"
    } else {
        "-Infinity"
    };
    format!("{NON_FINITE_MARK}{token}\u{0}")
}

/// Serialized JSON with the non-finite placeholders of [`to_json`] replaced by the bare
/// tokens `NaN`, `Infinity` and `-Infinity` (as Python's and JSON5 readers take them).
pub fn restore_non_finite(json: &str) -> String {
    let mut out = json.to_string();
    for token in ["NaN", "Infinity", "-Infinity"] {
        let quoted = serde_json::to_string(&format!("{NON_FINITE_MARK}{token}\u{0}"))
            .expect("a string serializes");
        out = out.replace(&quoted, token);
    }
    out
}

/// Row `i` of `a` as JSON: nodes and relationships become objects with `_labels` / `_type`.
pub fn to_json(a: &dyn Array, i: usize) -> serde_json::Value {
    use serde_json::Value;
    if null_at(a, i) {
        return Value::Null;
    }
    match a.data_type() {
        DataType::Boolean => Value::Bool(a.as_boolean().value(i)),
        DataType::Int8
        | DataType::Int16
        | DataType::Int32
        | DataType::Int64
        | DataType::UInt8
        | DataType::UInt16
        | DataType::UInt32
        | DataType::UInt64 => {
            let s = render_cell(a, i, false);
            s.parse::<i64>()
                .map(Value::from)
                .unwrap_or_else(|_| Value::String(s))
        }
        DataType::Float64 | DataType::Float32 => {
            let x: f64 = match a.data_type() {
                DataType::Float32 => {
                    a.as_primitive::<arrow::datatypes::Float32Type>().value(i) as f64
                }
                _ => a.as_primitive::<arrow::datatypes::Float64Type>().value(i),
            };
            match serde_json::Number::from_f64(x) {
                Some(n) => Value::Number(n),
                // JSON has no NaN or infinities: a placeholder that `restore_non_finite`
                // turns into the bare tokens `NaN`, `Infinity`, `-Infinity` afterwards.
                None => Value::String(non_finite_placeholder(x)),
            }
        }
        DataType::LargeBinary => match (temporal_at(a, i), decoded(a, i)) {
            (Some(t), _) => Value::String(t),
            (None, Some(x)) => to_json(x.as_ref(), 0),
            (None, None) => Value::Null,
        },
        t if temporal::is_temporal_type(t) => temporal_at(a, i).map_or(Value::Null, Value::String),
        DataType::List(_) | DataType::LargeList(_) | DataType::FixedSizeList(_, _) => {
            let v = match a.data_type() {
                DataType::List(_) => a.as_list::<i32>().value(i),
                DataType::LargeList(_) => a.as_list::<i64>().value(i),
                _ => a.as_fixed_size_list().value(i),
            };
            Value::Array((0..v.len()).map(|j| to_json(v.as_ref(), j)).collect())
        }
        DataType::Struct(fields) => {
            let s = a.as_struct();
            let mut obj = serde_json::Map::new();
            let path = fields.len() == 2 && fields[0].name() == "__nodes";
            for (k, f) in fields.iter().enumerate() {
                if crate::functions::value::is_identity_field(f.name()) {
                    continue;
                }
                let v = to_json(s.column(k).as_ref(), i);
                if path {
                    let key = if k == 0 { "nodes" } else { "relationships" };
                    obj.insert(key.into(), v);
                    continue;
                }
                // The first field of a node / relationship value is its label / type.
                match (k, f.name().as_str()) {
                    (0, "__label") => {
                        let labels = match &v {
                            Value::String(l) => crate::config::split_labels(l)
                                .into_iter()
                                .map(|l| Value::String(l.to_string()))
                                .collect(),
                            _ => vec![v],
                        };
                        obj.insert("_labels".into(), Value::Array(labels));
                    }
                    (0, "__type") => {
                        obj.insert("_type".into(), v);
                    }
                    (_, n) => {
                        obj.insert(n.into(), v);
                    }
                }
            }
            Value::Object(obj)
        }
        _ => Value::String(render_cell(a, i, false)),
    }
}
