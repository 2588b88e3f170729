//! Values of mixed kinds in one column (`[1, 'a', true]`, a property that is an integer on one
//! label and a string on another): Arrow holds one type per column, so such values are stored
//! as `LargeBinary` cells in an encoding that keeps Cypher's ordering.
//!
//! Comparing two encodings byte by byte orders them as openCypher's ORDER BY does: maps, nodes,
//! relationships, lists, paths, strings, booleans, numbers (integers and floats by value, NaN after
//! every number), null last. So DataFusion's sort, `min` and `max` work on them unchanged;
//! equality, ordering comparisons and `IN` decode them into [`Value`]s (`super::value`).
//! Every encoding is self-delimiting, so a list's elements follow one another.

use super::temporal::Temporal;
use super::value::Value;
use arrow::array::LargeBinaryBuilder;
use arrow::datatypes::{DataType, Field, Fields};
use chrono::{Datelike, Timelike};
use datafusion::common::{Result, ScalarValue};
use std::sync::Arc;

/// The Arrow type of a value of mixed kind.
pub const ANY: DataType = DataType::LargeBinary;

pub fn is_any(t: &DataType) -> bool {
    t == &ANY
}

/// The field metadata that marks a stored `LargeBinary` column as holding values of mixed
/// kind (cells made by `Value::encode_mixed`): any Cypher value per row, a time with its
/// offset or datetimes in different zones included.
pub const MIXED_METADATA: (&str, &str) = ("lance-csr.values", "mixed");

/// A column of values of mixed kind, for a stored table.
pub fn mixed_field(name: &str, nullable: bool) -> Field {
    Field::new(name, ANY, nullable).with_metadata(
        [(MIXED_METADATA.0.to_string(), MIXED_METADATA.1.to_string())]
            .into_iter()
            .collect(),
    )
}

/// Whether a stored field holds values of mixed kind.
pub fn is_mixed_field(f: &Field) -> bool {
    is_any(f.data_type())
        && f.metadata().get(MIXED_METADATA.0).map(String::as_str) == Some(MIXED_METADATA.1)
}

/// Whether a value of type `t` can be held as a value of mixed kind (binary data can't).
pub fn encodable(t: &DataType) -> bool {
    match t {
        DataType::List(f) | DataType::LargeList(f) | DataType::FixedSizeList(f, _) => {
            encodable(f.data_type())
        }
        DataType::Struct(fields) => fields.iter().all(|f| encodable(f.data_type())),
        DataType::Null
        | DataType::Boolean
        | DataType::Utf8
        | DataType::LargeUtf8
        | DataType::Utf8View
        | DataType::LargeBinary => true,
        t => t.is_numeric() || super::temporal::is_temporal_type(t),
    }
}

const MAP: u8 = 0x10;
const NODE: u8 = 0x20;
const REL: u8 = 0x30;
const LIST: u8 = 0x40;
const PATH: u8 = 0x50;
/// Temporal values, after paths and before strings, in openCypher's order of their kinds:
/// the tag is `TEMPORAL` + the kind's rank (`temporal::Kind`).
const TEMPORAL: u8 = 0x51;
const STR: u8 = 0x60;
const BOOL: u8 = 0x70;
const NUM: u8 = 0x80;
const NULL: u8 = 0xF0;
/// Before each list element / map entry; a list or map ends with `END`, which sorts first,
/// so a list that is a prefix of another is the smaller one.
const ITEM: u8 = 0x01;
const END: u8 = 0x00;

// Number tiers: below every integer, within the integers' range, above it, NaN.
const BELOW: u8 = 0;
const WITHIN: u8 = 1;
const ABOVE: u8 = 2;
const NAN: u8 = 3;
const INT: u8 = 0;
const FLOAT: u8 = 1;

/// 2^63 as a float.
const TWO_63: f64 = super::value::TWO_63;

/// `v` encoded; `None` for a value that has no encoding (temporal values, binary).
pub fn encode(v: &Value) -> Option<Vec<u8>> {
    let mut out = Vec::new();
    put(v, &mut out).then_some(out)
}

fn put(v: &Value, out: &mut Vec<u8>) -> bool {
    match v {
        Value::Null => out.push(NULL),
        Value::Bool(b) => out.extend([BOOL, *b as u8]),
        Value::Int(i) => {
            out.extend([NUM, WITHIN]);
            out.extend(ordered_i64(*i));
            out.extend(0f64.to_bits().to_be_bytes());
            out.push(INT);
        }
        Value::Float(x) => {
            out.push(NUM);
            let x = *x;
            if x.is_nan() {
                out.push(NAN);
            } else if x < -TWO_63 {
                out.push(BELOW);
                out.extend(ordered_f64(x));
            } else if x >= TWO_63 {
                out.push(ABOVE);
                out.extend(ordered_f64(x));
            } else {
                // Integer part and fraction, both exact for a float in this range, so an
                // integer and a float compare by value (2^53 + 1 > 2^53 as a float).
                let floor = x.floor();
                out.push(WITHIN);
                out.extend(ordered_i64(floor as i64));
                out.extend((x - floor).to_bits().to_be_bytes());
            }
            out.push(FLOAT);
            out.extend(x.to_bits().to_be_bytes());
        }
        Value::Str(s) => {
            out.push(STR);
            put_str(s, out);
        }
        Value::List(items) => {
            out.push(LIST);
            for x in items {
                out.push(ITEM);
                if !put(x, out) {
                    return false;
                }
            }
            out.push(END);
        }
        Value::Map(entries) => {
            out.push(match entries.first().map(|(k, _)| k.as_str()) {
                Some("__label") => NODE,
                Some("__type") => REL,
                Some("__nodes") => PATH,
                _ => MAP,
            });
            for (k, x) in entries {
                out.push(ITEM);
                put_str(k, out);
                if !put(x, out) {
                    return false;
                }
            }
            out.push(END);
        }
        Value::Temporal(t) => put_temporal(t, out),
        Value::Other(s) => match Value::from_scalar(s) {
            Value::Other(_) => return false,
            v => return put(&v, out),
        },
    }
    true
}

/// A temporal value: its kind's tag, the key its kind orders by, then the value's own fields
/// (what the key does not hold: the wall-clock fields and the zone name), in binary so that
/// reading a value back parses nothing.
fn put_temporal(t: &Temporal, out: &mut Vec<u8>) {
    out.push(TEMPORAL + t.kind() as u8);
    let (a, b, c) = t.sort_key();
    for x in [a, b, c] {
        out.extend(((x as u128) ^ (1 << 127)).to_be_bytes());
    }
    let date =
        |d: &chrono::NaiveDate, out: &mut Vec<u8>| out.extend(ordered_i32(d.num_days_from_ce()));
    let time = |t: &chrono::NaiveTime, out: &mut Vec<u8>| {
        out.extend(t.num_seconds_from_midnight().to_be_bytes());
        out.extend(t.nanosecond().to_be_bytes());
    };
    match t {
        Temporal::Date(d) => date(d, out),
        Temporal::LocalTime(t) => time(t, out),
        Temporal::Time(t, o) => {
            time(t, out);
            out.extend(ordered_i32(*o));
        }
        Temporal::LocalDateTime(dt) => {
            date(&dt.date(), out);
            time(&dt.time(), out);
        }
        Temporal::DateTime(dt, o, name) => {
            date(&dt.date(), out);
            time(&dt.time(), out);
            out.extend(ordered_i32(*o));
            match name {
                Some(n) => {
                    out.push(1);
                    put_str(n, out);
                }
                None => out.push(0),
            }
        }
        // The key is the whole duration: months, days, nanoseconds.
        Temporal::Duration(_) => {}
    }
}

/// A string's bytes with 0x00 escaped as 0x00 0xFF, ended by 0x00 0x00: byte order is code
/// point order and a prefix sorts first.
fn put_str(s: &str, out: &mut Vec<u8>) {
    for &b in s.as_bytes() {
        out.push(b);
        if b == 0 {
            out.push(0xFF);
        }
    }
    out.extend([0, 0]);
}

fn ordered_i32(i: i32) -> [u8; 4] {
    ((i as u32) ^ (1 << 31)).to_be_bytes()
}

fn ordered_i64(i: i64) -> [u8; 8] {
    ((i as u64) ^ (1 << 63)).to_be_bytes()
}

fn ordered_f64(x: f64) -> [u8; 8] {
    let bits = x.to_bits();
    let flipped = if bits >> 63 == 1 {
        !bits
    } else {
        bits ^ (1 << 63)
    };
    flipped.to_be_bytes()
}

/// The value of an encoding made by [`encode`].
pub fn decode(bytes: &[u8]) -> Value {
    let mut r = Reader { bytes, at: 0 };
    r.value().unwrap_or(Value::Null)
}

struct Reader<'b> {
    bytes: &'b [u8],
    at: usize,
}

impl Reader<'_> {
    fn byte(&mut self) -> Option<u8> {
        let b = *self.bytes.get(self.at)?;
        self.at += 1;
        Some(b)
    }

    fn eight(&mut self) -> Option<[u8; 8]> {
        let s = self.bytes.get(self.at..self.at + 8)?;
        self.at += 8;
        s.try_into().ok()
    }

    fn str(&mut self) -> Option<String> {
        let mut s = Vec::new();
        loop {
            match self.byte()? {
                0 => match self.byte()? {
                    0 => break,
                    _ => s.push(0),
                },
                b => s.push(b),
            }
        }
        String::from_utf8(s).ok()
    }

    fn take<const N: usize>(&mut self) -> Option<[u8; N]> {
        let s = self.bytes.get(self.at..self.at + N)?;
        self.at += N;
        s.try_into().ok()
    }

    fn i32(&mut self) -> Option<i32> {
        Some((u32::from_be_bytes(self.take()?) ^ (1 << 31)) as i32)
    }

    fn date(&mut self) -> Option<chrono::NaiveDate> {
        chrono::NaiveDate::from_num_days_from_ce_opt(self.i32()?)
    }

    fn time(&mut self) -> Option<chrono::NaiveTime> {
        let secs = u32::from_be_bytes(self.take()?);
        let nanos = u32::from_be_bytes(self.take()?);
        chrono::NaiveTime::from_num_seconds_from_midnight_opt(secs, nanos)
    }

    /// A temporal value of `kind` after its tag, as [`put_temporal`] writes it.
    fn temporal(&mut self, kind: super::temporal::Kind) -> Option<Temporal> {
        use super::temporal::{Duration, Kind};
        let mut key = [0i128; 3];
        for k in &mut key {
            *k = (u128::from_be_bytes(self.take()?) ^ (1 << 127)) as i128;
        }
        Some(match kind {
            Kind::Date => Temporal::Date(self.date()?),
            Kind::LocalTime => Temporal::LocalTime(self.time()?),
            Kind::Time => Temporal::Time(self.time()?, self.i32()?),
            Kind::LocalDateTime => Temporal::LocalDateTime(self.date()?.and_time(self.time()?)),
            Kind::DateTime => {
                let local = self.date()?.and_time(self.time()?);
                let offset = self.i32()?;
                let name = match self.byte()? {
                    0 => None,
                    _ => Some(self.str()?),
                };
                Temporal::DateTime(local, offset, name)
            }
            Kind::Duration => Temporal::Duration(Duration {
                months: i64::try_from(key[0]).ok()?,
                days: i64::try_from(key[1]).ok()?,
                nanos: key[2],
            }),
        })
    }

    fn value(&mut self) -> Option<Value> {
        Some(match self.byte()? {
            NULL => Value::Null,
            BOOL => Value::Bool(self.byte()? != 0),
            NUM => {
                let tier = self.byte()?;
                let key = if tier == NAN {
                    None
                } else {
                    Some(self.eight()?)
                };
                if tier == WITHIN {
                    self.eight()?;
                }
                match self.byte()? {
                    INT => Value::Int((u64::from_be_bytes(key?) ^ (1 << 63)) as i64),
                    _ => Value::Float(f64::from_bits(u64::from_be_bytes(self.eight()?))),
                }
            }
            STR => Value::Str(self.str()?),
            LIST => {
                let mut items = Vec::new();
                while self.byte()? == ITEM {
                    items.push(self.value()?);
                }
                Value::List(items)
            }
            tag if (TEMPORAL..TEMPORAL + 6).contains(&tag) => {
                let kind = super::temporal::Kind::from_rank(tag - TEMPORAL)?;
                Value::Temporal(self.temporal(kind)?)
            }
            MAP | NODE | REL | PATH => {
                let mut entries = Vec::new();
                while self.byte()? == ITEM {
                    let k = self.str()?;
                    entries.push((k, self.value()?));
                }
                Value::Map(entries)
            }
            _ => return None,
        })
    }
}

/// `v` encoded, `None` for null (a null of type [`ANY`] is an Arrow null).
pub fn encode_non_null(v: &Value) -> Option<Vec<u8>> {
    match v {
        Value::Null => None,
        v => encode(v),
    }
}

/// Appends `v` to a column of type [`ANY`] (null for null and for a value without an
/// encoding), encoding it in `scratch`: a column built row by row reuses one buffer rather
/// than growing a new one per cell.
pub fn append(b: &mut LargeBinaryBuilder, v: &Value, scratch: &mut Vec<u8>) {
    scratch.clear();
    if !matches!(v, Value::Null) && put(v, scratch) {
        b.append_value(&scratch[..]);
    } else {
        b.append_null();
    }
}

/// `v` as a scalar of type [`ANY`].
pub fn any_scalar(v: &Value) -> ScalarValue {
    ScalarValue::LargeBinary(encode_non_null(v))
}

/// A list of integers, floats, strings or booleans (nulls among them) as one typed Arrow
/// list, built in one pass: 8 bytes an integer, where a scalar per element takes 64. `None`
/// for lists of other or mixed kinds (and lists of nulls only).
pub fn typed_list(items: &[Value]) -> Option<ScalarValue> {
    let mut b = TypedListBuilder::with_capacity(items.len());
    items.iter().all(|v| b.append(v)).then(|| b.finish())?
}

/// Builds a [`typed_list`] one element at a time, for a decoder that reads a long list and
/// never holds it as [`Value`]s: [`append`](Self::append) refuses the first element of
/// another kind, and [`take_values`](Self::take_values) gives back what was appended.
#[derive(Debug)]
pub struct TypedListBuilder {
    capacity: usize,
    /// Nulls before the first element that fixes the kind.
    leading_nulls: usize,
    kind: Option<Typed>,
}

#[derive(Debug)]
enum Typed {
    Int(arrow::array::Int64Builder),
    Float(arrow::array::Float64Builder),
    Bool(arrow::array::BooleanBuilder),
    Str(arrow::array::StringBuilder),
}

impl TypedListBuilder {
    pub fn with_capacity(capacity: usize) -> Self {
        Self {
            capacity,
            leading_nulls: 0,
            kind: None,
        }
    }

    /// How many elements were appended.
    pub fn len(&self) -> usize {
        use arrow::array::ArrayBuilder;
        self.leading_nulls
            + match &self.kind {
                None => 0,
                Some(Typed::Int(b)) => b.len(),
                Some(Typed::Float(b)) => b.len(),
                Some(Typed::Bool(b)) => b.len(),
                Some(Typed::Str(b)) => b.len(),
            }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Appends `v`; false (nothing appended) when it is not of the list's kind.
    pub fn append(&mut self, v: &Value) -> bool {
        use arrow::array::{BooleanBuilder, Float64Builder, Int64Builder, StringBuilder};
        if self.kind.is_none() {
            let n = self.capacity;
            self.kind = Some(match v {
                Value::Null => {
                    self.leading_nulls += 1;
                    return true;
                }
                Value::Int(_) => Typed::Int(Int64Builder::with_capacity(n)),
                Value::Float(_) => Typed::Float(Float64Builder::with_capacity(n)),
                Value::Bool(_) => Typed::Bool(BooleanBuilder::with_capacity(n)),
                Value::Str(_) => Typed::Str(StringBuilder::with_capacity(n, 0)),
                _ => return false,
            });
            let leading = std::mem::take(&mut self.leading_nulls);
            match self.kind.as_mut().expect("set") {
                Typed::Int(b) => b.append_nulls(leading),
                Typed::Float(b) => b.append_nulls(leading),
                Typed::Bool(b) => b.append_nulls(leading),
                Typed::Str(b) => (0..leading).for_each(|_| b.append_null()),
            }
        }
        match (self.kind.as_mut().expect("set"), v) {
            (Typed::Int(b), Value::Int(x)) => b.append_value(*x),
            (Typed::Float(b), Value::Float(x)) => b.append_value(*x),
            (Typed::Bool(b), Value::Bool(x)) => b.append_value(*x),
            (Typed::Str(b), Value::Str(x)) => b.append_value(x),
            (Typed::Int(b), Value::Null) => b.append_null(),
            (Typed::Float(b), Value::Null) => b.append_null(),
            (Typed::Bool(b), Value::Null) => b.append_null(),
            (Typed::Str(b), Value::Null) => b.append_null(),
            _ => return false,
        }
        true
    }

    /// The list; `None` when only nulls (or nothing) were appended.
    pub fn finish(self) -> Option<ScalarValue> {
        Some(ScalarValue::List(Arc::new(
            datafusion::common::utils::SingleRowListArrayBuilder::new(self.values()?)
                .with_nullable(true)
                .build_list_array(),
        )))
    }

    fn values(self) -> Option<arrow::array::ArrayRef> {
        Some(match self.kind? {
            Typed::Int(mut b) => Arc::new(b.finish()),
            Typed::Float(mut b) => Arc::new(b.finish()),
            Typed::Bool(mut b) => Arc::new(b.finish()),
            Typed::Str(mut b) => Arc::new(b.finish()),
        })
    }

    /// What was appended, as values (for a decoder that met an element of another kind).
    pub fn take_values(self) -> Vec<Value> {
        let mut out = Vec::with_capacity(self.len());
        self.into_each(|v| out.push(v));
        out
    }

    /// Hands each value appended to `f`, in order, never holding them all as values.
    pub fn into_each(self, mut f: impl FnMut(Value)) {
        let nulls = self.leading_nulls;
        match self.values() {
            Some(a) => (0..a.len()).for_each(|i| f(super::value::value_at(a.as_ref(), i))),
            None => (0..nulls).for_each(|_| f(Value::Null)),
        }
    }
}

/// `v` as an Arrow scalar, for output: lists whose elements share a type become typed lists,
/// others lists of encoded values; maps (nodes, relationships) become structs.
pub fn to_scalar(v: &Value) -> Result<ScalarValue> {
    Ok(match v {
        Value::Null => ScalarValue::Null,
        Value::Bool(b) => ScalarValue::Boolean(Some(*b)),
        Value::Int(i) => ScalarValue::Int64(Some(*i)),
        Value::Float(x) => ScalarValue::Float64(Some(*x)),
        Value::Str(s) => ScalarValue::Utf8(Some(s.clone())),
        Value::List(items) => {
            if let Some(list) = typed_list(items) {
                return Ok(list);
            }
            let mut xs = items.iter().map(to_scalar).collect::<Result<Vec<_>>>()?;
            let types: Vec<DataType> = xs
                .iter()
                .map(|x| x.data_type())
                .filter(|t| t != &DataType::Null)
                .collect();
            let t = match types.first() {
                None => DataType::Null,
                Some(t) if types.iter().all(|u| u == t) => t.clone(),
                Some(_) => {
                    xs = items.iter().map(any_scalar).collect();
                    ANY
                }
            };
            let xs = xs
                .into_iter()
                .map(|x| {
                    if x.is_null() {
                        ScalarValue::try_from(&t)
                    } else {
                        Ok(x)
                    }
                })
                .collect::<Result<Vec<_>>>()?;
            ScalarValue::List(ScalarValue::new_list_nullable(&xs, &t))
        }
        Value::Map(entries) => {
            if entries.is_empty() {
                return Ok(ScalarValue::Struct(Arc::new(
                    arrow::array::StructArray::new_empty_fields(1, None),
                )));
            }
            let mut fields = Vec::with_capacity(entries.len());
            let mut arrays = Vec::with_capacity(entries.len());
            for (k, x) in entries {
                let s = to_scalar(x)?;
                fields.push(Field::new(k, s.data_type(), true));
                arrays.push(s.to_array()?);
            }
            ScalarValue::Struct(Arc::new(arrow::array::StructArray::try_new(
                Fields::from(fields),
                arrays,
                None,
            )?))
        }
        Value::Temporal(_) => any_scalar(v),
        Value::Other(s) => s.clone(),
    })
}

#[cfg(test)]
mod tests {
    use super::Value::*;
    use super::*;

    fn round_trip(v: Value) {
        assert_eq!(decode(&encode(&v).expect("encodable")), v, "{v:?}");
    }

    #[test]
    fn a_typed_list_is_the_list_built_element_by_element() {
        let s = |x: &str| Str(x.into());
        for items in [
            vec![Int(1), Null, Int(-3)],
            vec![Null, Float(1.5), Float(f64::NAN)],
            vec![s("a"), Null, s("")],
            vec![Bool(true), Bool(false), Null],
        ] {
            let typed = typed_list(&items).expect("one kind");
            let scalars: Vec<ScalarValue> = (items.iter())
                .map(|v| match v {
                    Null => ScalarValue::try_from(&typed_element(&typed)).unwrap(),
                    v => to_scalar(v).unwrap(),
                })
                .collect();
            let built = ScalarValue::new_list_nullable(&scalars, &typed_element(&typed));
            assert_eq!(typed, ScalarValue::List(built), "{items:?}");
        }
        for other in [
            vec![Int(1), Float(2.0)],
            vec![Null, Null],
            vec![],
            vec![List(vec![])],
        ] {
            assert!(typed_list(&other).is_none(), "{other:?}");
        }
    }

    #[test]
    fn a_typed_list_builder_refuses_another_kind_and_gives_back_what_it_had() {
        let mut b = TypedListBuilder::with_capacity(4);
        assert!(b.append(&Null) && b.append(&Int(7)) && b.append(&Null));
        assert!(!b.append(&Str("x".into())));
        assert_eq!(b.take_values(), vec![Null, Int(7), Null]);
        let mut b = TypedListBuilder::with_capacity(2);
        assert!(b.append(&Null) && b.append(&Null) && !b.append(&List(vec![])));
        assert_eq!(b.take_values(), vec![Null, Null]);
    }

    fn typed_element(list: &ScalarValue) -> DataType {
        match list.data_type() {
            DataType::List(f) => f.data_type().clone(),
            t => panic!("not a list: {t}"),
        }
    }

    #[test]
    fn decodes_what_it_encodes() {
        for v in [
            Int(0),
            Int(i64::MIN),
            Int(i64::MAX),
            Float(-0.5),
            Float(1e300),
            Float(-1e300),
            Float(f64::INFINITY),
            Float(5e-324),
            Str(String::new()),
            Str("a\0b".into()),
            Bool(true),
            List(vec![Int(1), Str("a".into()), Null, List(vec![])]),
            Map(vec![
                ("__label".into(), Str("A".into())),
                ("x".into(), Int(1)),
            ]),
        ] {
            round_trip(v);
        }
        assert!(matches!(decode(&encode(&Float(f64::NAN)).unwrap()), Float(x) if x.is_nan()));
    }

    #[test]
    fn decodes_temporal_values_exactly() {
        use crate::functions::temporal::{construct, Kind};
        let cases = [
            (Kind::Date, "-0001-12-31"),
            (Kind::Date, "2015-07-21"),
            (Kind::LocalTime, "23:59:59.999999999"),
            (Kind::LocalTime, "00:00"),
            (Kind::Time, "21:40:32.142-05:30"),
            (Kind::LocalDateTime, "1816-01-01T12:00:00.000000001"),
            (Kind::DateTime, "2015-07-21T21:40:32.142+01:00"),
            (Kind::DateTime, "2015-07-21T21:40:32.142[Europe/London]"),
            (
                Kind::DateTime,
                "1900-01-01T00:00+00:19:32[Europe/Amsterdam]",
            ),
            (Kind::Duration, "P14M-3DT-25H0.000000001S"),
        ];
        for (kind, text) in cases {
            let t = construct(kind, &Str(text.into()))
                .unwrap_or_else(|e| panic!("{text}: {e}"))
                .expect("not null");
            round_trip(Temporal(t.clone()));
            // Inside lists and maps too (the reader moves past exactly what was written).
            round_trip(List(vec![Temporal(t.clone()), Int(1)]));
            round_trip(Map(vec![
                ("t".into(), Temporal(t)),
                ("x".into(), Str("y".into())),
            ]));
        }
    }

    #[test]
    fn byte_order_is_cypher_order() {
        // Ascending, as ORDER BY sorts them (the TCK's list ordering included).
        let sorted = [
            Map(vec![("k".into(), Int(1))]),
            Map(vec![("__label".into(), Str("A".into()))]),
            Map(vec![("__type".into(), Str("T".into()))]),
            List(vec![]),
            List(vec![Str("a".into())]),
            List(vec![Str("a".into()), Int(1)]),
            List(vec![Int(1)]),
            List(vec![Int(1), Str("a".into())]),
            List(vec![Int(1), Null]),
            List(vec![Null, Int(1)]),
            List(vec![Null, Int(2)]),
            Str(String::new()),
            Str("a".into()),
            Str("a\0".into()),
            Str("b".into()),
            Bool(false),
            Bool(true),
            Float(f64::NEG_INFINITY),
            Float(-TWO_63 * 2.0),
            Int(i64::MIN),
            Float(-1.5),
            Int(-1),
            Float(0.25),
            Int(1),
            Float(1.5),
            Int(9_007_199_254_740_992),
            Int(9_007_199_254_740_993),
            Int(i64::MAX),
            Float(TWO_63),
            Float(f64::INFINITY),
            Float(f64::NAN),
            Null,
        ];
        let bytes: Vec<Vec<u8>> = sorted.iter().map(|v| encode(v).unwrap()).collect();
        for (i, w) in bytes.windows(2).enumerate() {
            assert!(w[0] < w[1], "{:?} !< {:?}", sorted[i], sorted[i + 1]);
        }
    }
}
