//! A Query API request body (`{"statement", "parameters"}`) decoded straight into the
//! engine's values, never into a JSON tree first: a JSON tree takes 32 bytes a value on top
//! of the value it becomes (a body of a million integers: 130 MB), and a body of 16 MiB of
//! `[],` is five million of them. A parameter that is a long array of one kind becomes one
//! Arrow list (8 bytes an integer), as over Bolt; what a body decodes to is counted as it
//! is decoded, and decoding stops past the budget.

use crate::functions::any::TypedListBuilder;
use crate::functions::temporal::{self, Kind};
use crate::functions::value::Value;
use crate::planner::Params;
use serde::de::{self, DeserializeSeed, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use std::cell::Cell;
use std::fmt;

/// What one decoded value takes besides its heap bytes: itself, and the slack of the array
/// it is pushed into (an array's length is not known before its end).
const VALUE: usize = 2 * std::mem::size_of::<Value>();

/// What an element of a list decoded into one Arrow list takes.
const TYPED: usize = 8;

/// A request: its statement and parameters, the memory they took (an estimate), and of it
/// the bytes of strings and of lists held as one Arrow list (what a query copies).
#[derive(Debug)]
pub(super) struct Request {
    pub statement: String,
    pub params: Params,
    pub decoded: usize,
    pub copied: usize,
}

/// Why a body was refused.
#[derive(Debug, PartialEq)]
pub(super) enum Refused {
    /// Not a request: the message says why.
    Invalid(String),
    /// It would decode to more than the budget.
    TooLarge,
}

/// Decodes a request body, its values taking at most `budget` bytes.
pub(super) fn request(body: &[u8], budget: usize) -> Result<Request, Refused> {
    let counter = Counter {
        decoded: Cell::new(0),
        copied: Cell::new(0),
        budget,
    };
    let mut de = serde_json::Deserializer::from_slice(body);
    let parsed = RequestSeed(&counter)
        .deserialize(&mut de)
        .and_then(|r| de.end().map(|_| r));
    match parsed {
        Ok((statement, params)) => Ok(Request {
            statement: statement
                .ok_or(Refused::Invalid("the body needs a \"statement\"".into()))?,
            params,
            decoded: counter.decoded.get(),
            copied: counter.copied.get(),
        }),
        Err(_) if counter.over() => Err(Refused::TooLarge),
        Err(e) => Err(Refused::Invalid(e.to_string())),
    }
}

struct Counter {
    decoded: Cell<usize>,
    copied: Cell<usize>,
    budget: usize,
}

impl Counter {
    fn over(&self) -> bool {
        self.decoded.get() > self.budget
    }

    fn charge<E: de::Error>(&self, bytes: usize) -> Result<(), E> {
        self.decoded.set(self.decoded.get().saturating_add(bytes));
        if self.over() {
            return Err(E::custom("the body decodes to more than the budget"));
        }
        Ok(())
    }

    /// Gives back what a value took beyond `bytes` (an element kept in an Arrow list).
    fn refund(&self, bytes: usize) {
        self.decoded.set(self.decoded.get().saturating_sub(bytes));
    }

    /// Counts `n` elements of a one-kind list as values after all.
    fn as_values<E: de::Error>(&self, n: usize) -> Result<(), E> {
        self.copies(-((n * TYPED) as isize));
        self.charge(n * (VALUE - TYPED))
    }

    /// Counts `bytes` of strings or of one-kind lists (negative: given back).
    fn copies(&self, bytes: isize) {
        self.copied
            .set(self.copied.get().saturating_add_signed(bytes));
    }
}

struct RequestSeed<'c>(&'c Counter);

impl<'de> DeserializeSeed<'de> for RequestSeed<'_> {
    type Value = (Option<String>, Params);

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        d.deserialize_map(self)
    }
}

impl<'de> Visitor<'de> for RequestSeed<'_> {
    type Value = (Option<String>, Params);

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("an object with a \"statement\"")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut m: A) -> Result<Self::Value, A::Error> {
        let (mut statement, mut params) = (None, Params::new());
        while let Some(k) = m.next_key::<String>()? {
            match k.as_str() {
                "statement" => {
                    let s: String = m.next_value()?;
                    self.0.charge(s.len())?;
                    statement = Some(s);
                }
                "parameters" => params = m.next_value_seed(ParamsSeed(self.0))?,
                _ => {
                    m.next_value::<IgnoredAny>()?;
                }
            }
        }
        Ok((statement, params))
    }
}

struct ParamsSeed<'c>(&'c Counter);

impl<'de> DeserializeSeed<'de> for ParamsSeed<'_> {
    type Value = Params;

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Params, D::Error> {
        d.deserialize_map(self)
    }
}

impl<'de> Visitor<'de> for ParamsSeed<'_> {
    type Value = Params;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("\"parameters\" as an object")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut m: A) -> Result<Params, A::Error> {
        let mut out = Params::new();
        while let Some(k) = m.next_key::<String>()? {
            let v = m
                .next_value_seed(ValueSeed {
                    counter: self.0,
                    top: true,
                })
                .map_err(|e| de::Error::custom(format!("parameter ${k}: {e}")))?;
            out.insert(k, v);
        }
        Ok(out)
    }
}

/// One value; `top`: a parameter itself, whose long array of one kind is one Arrow list.
struct ValueSeed<'c> {
    counter: &'c Counter,
    top: bool,
}

impl<'de> DeserializeSeed<'de> for ValueSeed<'_> {
    type Value = Value;

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Value, D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for ValueSeed<'_> {
    type Value = Value;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a JSON value")
    }

    fn visit_unit<E: de::Error>(self) -> Result<Value, E> {
        self.counter.charge(VALUE)?;
        Ok(Value::Null)
    }

    fn visit_bool<E: de::Error>(self, b: bool) -> Result<Value, E> {
        self.counter.charge(VALUE)?;
        Ok(Value::Bool(b))
    }

    fn visit_i64<E: de::Error>(self, i: i64) -> Result<Value, E> {
        self.counter.charge(VALUE)?;
        Ok(Value::Int(i))
    }

    fn visit_u64<E: de::Error>(self, u: u64) -> Result<Value, E> {
        // An integer past 2^63 - 1 is an error, not a float near it (as in Neo4j).
        let i = i64::try_from(u).map_err(|_| {
            E::custom(format!(
                "the integer {u} is out of range (a 64-bit signed integer's largest is {})",
                i64::MAX
            ))
        })?;
        self.visit_i64(i)
    }

    fn visit_f64<E: de::Error>(self, x: f64) -> Result<Value, E> {
        self.counter.charge(VALUE)?;
        Ok(Value::Float(x))
    }

    fn visit_str<E: de::Error>(self, s: &str) -> Result<Value, E> {
        self.counter.charge(VALUE + s.len())?;
        self.counter.copies(s.len() as isize);
        Ok(Value::Str(s.to_string()))
    }

    fn visit_string<E: de::Error>(self, s: String) -> Result<Value, E> {
        self.counter.charge(VALUE + s.len())?;
        self.counter.copies(s.len() as isize);
        Ok(Value::Str(s))
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
        self.counter.charge(VALUE)?;
        let inner = || ValueSeed {
            counter: self.counter,
            top: false,
        };
        let mut items = Vec::new();
        if self.top {
            // Held as one Arrow list while its items are of one kind.
            let mut typed = TypedListBuilder::with_capacity(0);
            loop {
                let Some(x) = seq.next_element_seed(inner())? else {
                    let n = typed.len();
                    if n < crate::binder::query::COMPACT_ITEMS {
                        self.counter.as_values(n)?;
                        return Ok(Value::List(typed.take_values()));
                    }
                    return Ok(match typed.finish() {
                        Some(list) => Value::Other(list),
                        // Nulls only.
                        None => {
                            self.counter.as_values(n)?;
                            Value::List(vec![Value::Null; n])
                        }
                    });
                };
                if typed.append(&x) {
                    self.counter.refund(VALUE - TYPED);
                    self.counter.copies(TYPED as isize);
                    continue;
                }
                self.counter.as_values(typed.len())?;
                items = typed.take_values();
                items.push(x);
                break;
            }
        }
        while let Some(x) = seq.next_element_seed(inner())? {
            items.push(x);
        }
        Ok(Value::List(items))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut m: A) -> Result<Value, A::Error> {
        let entry = (self.counter.decoded.get(), self.counter.copied.get());
        self.counter.charge(VALUE)?;
        let mut entries: Vec<(String, Value)> = Vec::new();
        while let Some(k) = m.next_key::<String>()? {
            self.counter
                .charge(k.len() + std::mem::size_of::<String>())?;
            let v = m.next_value_seed(ValueSeed {
                counter: self.counter,
                top: false,
            })?;
            entries.push((k, v));
        }
        // A repeated key: the last one wins, as in Neo4j (where the first one stood).
        let mut at: std::collections::HashMap<String, usize> = Default::default();
        let mut kept: Vec<(String, Value)> = Vec::with_capacity(entries.len());
        for (k, v) in entries {
            match at.get(&k) {
                Some(&i) => kept[i].1 = v,
                None => {
                    at.insert(k.clone(), kept.len());
                    kept.push((k, v));
                }
            }
        }
        if let [(k1, v1), (k2, v2)] = &kept[..] {
            let typed = match (k1.as_str(), k2.as_str()) {
                ("$type", "_value") => Some((v1, v2)),
                ("_value", "$type") => Some((v2, v1)),
                _ => None,
            };
            if let Some((Value::Str(t), v)) = typed {
                let value = from_typed(t, v).map_err(de::Error::custom)?;
                if !matches!(value, Value::List(_) | Value::Map(_)) {
                    // Counted as what it became, not as the map that wrote it.
                    let text = match &value {
                        Value::Str(s) => s.len(),
                        Value::Other(datafusion::common::ScalarValue::Binary(Some(b))) => b.len(),
                        _ => 0,
                    };
                    self.counter.decoded.set(entry.0 + VALUE + text);
                    self.counter.copied.set(entry.1 + text);
                }
                return Ok(value);
            }
        }
        Ok(Value::Map(kept))
    }
}

/// A value of typed JSON (`{"$type": "Date", "_value": "2024-02-29"}`); `v` is the
/// `_value`, decoded (a `List`'s and a `Map`'s entries typed themselves).
fn from_typed(t: &str, v: &Value) -> Result<Value, String> {
    let text = || match v {
        Value::Str(s) => Ok(s.as_str()),
        _ => Err(format!("a {t} needs a string value")),
    };
    let temporal = |kind: Kind| -> Result<Value, String> {
        match temporal::construct(kind, &Value::Str(text()?.to_string())) {
            Ok(Some(t)) => Ok(Value::Temporal(t)),
            Ok(None) => Ok(Value::Null),
            Err(e) => Err(e.to_string()),
        }
    };
    Ok(match t {
        "Null" => Value::Null,
        "Boolean" => match v {
            Value::Bool(b) => Value::Bool(*b),
            _ => return Err("a Boolean needs true or false".into()),
        },
        "Integer" => Value::Int(text()?.parse().map_err(|e| format!("Integer: {e}"))?),
        "Float" => Value::Float(text()?.parse().map_err(|e| format!("Float: {e}"))?),
        "String" => Value::Str(text()?.to_string()),
        "Base64" => {
            use base64::Engine;
            let b = base64::engine::general_purpose::STANDARD
                .decode(text()?)
                .map_err(|e| format!("Base64: {e}"))?;
            Value::Other(datafusion::common::ScalarValue::Binary(Some(b)))
        }
        "List" => match v {
            Value::List(_) => v.clone(),
            _ => return Err("a List needs an array".into()),
        },
        "Map" => match v {
            Value::Map(_) => v.clone(),
            _ => return Err("a Map needs an object".into()),
        },
        "Date" => temporal(Kind::Date)?,
        "Time" | "OffsetTime" => temporal(Kind::Time)?,
        "LocalTime" => temporal(Kind::LocalTime)?,
        "LocalDateTime" => temporal(Kind::LocalDateTime)?,
        "OffsetDateTime" | "ZonedDateTime" => temporal(Kind::DateTime)?,
        "Duration" => temporal(Kind::Duration)?,
        other => return Err(format!("unknown type {other}")),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn param(json: &str) -> Result<Value, Refused> {
        let body = format!(r#"{{"statement": "RETURN $x", "parameters": {{"x": {json}}}}}"#);
        request(body.as_bytes(), 1 << 30).map(|r| r.params["x"].clone())
    }

    #[test]
    fn parameters_decode_to_the_values_they_write() {
        let Value::Temporal(_) = param(r#"{"$type": "Date", "_value": "2024-02-29"}"#).unwrap()
        else {
            panic!("not a date")
        };
        assert_eq!(
            param(r#"{"_value": "7", "$type": "Integer"}"#).unwrap(),
            Value::Int(7)
        );
        assert_eq!(
            param(r#"{"a": [1, 2.5, null], "b": {"c": "d"}, "a": true}"#).unwrap(),
            Value::Map(vec![
                ("a".into(), Value::Bool(true)),
                (
                    "b".into(),
                    Value::Map(vec![("c".into(), Value::Str("d".into()))])
                ),
            ])
        );
        assert_eq!(
            param(r#"{"$type": "List", "_value": [{"$type": "Integer", "_value": "1"}]}"#).unwrap(),
            Value::List(vec![Value::Int(1)])
        );
        assert_eq!(param(&i64::MAX.to_string()).unwrap(), Value::Int(i64::MAX));
        let Err(Refused::Invalid(why)) = param("[1, 9223372036854775808]") else {
            panic!("an integer out of range")
        };
        assert!(why.contains("out of range") && why.contains("$x"), "{why}");
        assert!(matches!(param("[1, 2"), Err(Refused::Invalid(_))));
        let r = request(br#"{"statement": "RETURN 1", "other": [1, {}]}"#, 1000).unwrap();
        assert_eq!((r.statement.as_str(), r.params.len()), ("RETURN 1", 0));
        assert!(matches!(
            request(br#"{"parameters": {}}"#, 1000),
            Err(Refused::Invalid(_))
        ));
    }

    #[test]
    fn a_long_array_of_one_kind_is_one_arrow_list_and_a_mixed_one_values() {
        let ints: Vec<String> = (0..3000).map(|i| i.to_string()).collect();
        let Value::Other(list) = param(&format!("[{}]", ints.join(","))).unwrap() else {
            panic!("not one list")
        };
        assert_eq!(
            Value::from_scalar(&list),
            Value::List((0..3000).map(Value::Int).collect())
        );
        let mixed = format!("[{}, \"a\"]", ints.join(","));
        let Value::List(items) = param(&mixed).unwrap() else {
            panic!("not a list")
        };
        assert_eq!(
            (items.len(), &items[2999], &items[3000]),
            (3001, &Value::Int(2999), &Value::Str("a".into()))
        );
        // Short, or nested: values.
        assert_eq!(
            param("[[1, 2]]").unwrap(),
            Value::List(vec![Value::List(vec![Value::Int(1), Value::Int(2)])])
        );
    }

    #[test]
    fn typed_json_is_counted_as_the_values_it_writes() {
        let one = r#"{"$type": "Integer", "_value": "1234567"}"#;
        let plain = request(
            br#"{"statement": "RETURN $x", "parameters": {"x": [1234567]}}"#,
            1 << 20,
        )
        .unwrap();
        let body = format!(r#"{{"statement": "RETURN $x", "parameters": {{"x": [{one}]}}}}"#);
        let typed = request(body.as_bytes(), 1 << 20).unwrap();
        assert_eq!(typed.params, plain.params);
        assert_eq!((typed.decoded, typed.copied), (plain.decoded, plain.copied));
        // A repeated key is merged before the map is read as a typed value.
        let dup = r#"{"$type": "Integer", "_value": "1", "_value": "2"}"#;
        assert_eq!(param(dup).unwrap(), Value::Int(2));
    }

    #[test]
    fn decoding_stops_at_the_budget() {
        let empties = vec!["[]"; 100_000].join(",");
        let body = format!(r#"{{"statement": "RETURN $x", "parameters": {{"x": [{empties}]}}}}"#);
        assert_eq!(
            request(body.as_bytes(), 1 << 20).unwrap_err(),
            Refused::TooLarge
        );
        let r = request(body.as_bytes(), 1 << 30).unwrap();
        assert!(r.decoded >= 100_000 * VALUE, "{}", r.decoded);
        // A long list of integers is counted at 8 bytes an integer.
        let ints = vec!["7"; 100_000].join(",");
        let body = format!(r#"{{"statement": "RETURN $x", "parameters": {{"x": [{ints}]}}}}"#);
        let r = request(body.as_bytes(), 1 << 20).unwrap();
        assert!(r.decoded < 100_000 * 9, "{}", r.decoded);
    }
}
