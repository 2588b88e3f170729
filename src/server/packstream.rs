//! PackStream, Bolt's binary value format: a [`Packer`] that writes values straight into a
//! message buffer, and an [`Unpacker`] that reads a received message into [`PackValue`]s with
//! limits (nesting depth, lengths checked against the bytes present), so a malformed or
//! hostile message is an error, never a panic or a huge allocation.

use crate::functions::any::TypedListBuilder;
use crate::functions::value::Value;
use datafusion::common::ScalarValue;
use std::fmt;

/// A decoded PackStream value.
#[derive(Debug, Clone, PartialEq)]
pub enum PackValue {
    Null,
    Bool(bool),
    Int(i64),
    Float(f64),
    Bytes(Vec<u8>),
    Str(String),
    List(Vec<PackValue>),
    /// Entries in the order received (keys are unique in well-formed input).
    Map(Vec<(String, PackValue)>),
    /// A tagged structure (a message, a node, a date, ...).
    Struct(u8, Vec<PackValue>),
    /// A long list of integers, floats, booleans or strings (nulls among them), decoded
    /// straight into one Arrow list: 8 bytes an integer where a `PackValue` takes 32.
    Typed(ScalarValue),
}

impl PackValue {
    /// The value of map entry `key`, when `self` is a map holding it.
    pub fn get(&self, key: &str) -> Option<&PackValue> {
        match self {
            PackValue::Map(entries) => entries.iter().find(|(k, _)| k == key).map(|(_, v)| v),
            _ => None,
        }
    }

    pub fn as_str(&self) -> Option<&str> {
        match self {
            PackValue::Str(s) => Some(s),
            _ => None,
        }
    }

    pub fn as_int(&self) -> Option<i64> {
        match self {
            PackValue::Int(i) => Some(*i),
            _ => None,
        }
    }
}

/// Why a message could not be decoded.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DecodeError(pub String);

impl fmt::Display for DecodeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "malformed PackStream: {}", self.0)
    }
}

impl std::error::Error for DecodeError {}

/// Deepest nesting of lists, maps and structures a received value may have.
pub const MAX_DEPTH: usize = 64;

/// Writes PackStream values into a buffer.
#[derive(Debug, Default)]
pub struct Packer {
    pub buf: Vec<u8>,
}

impl Packer {
    pub fn null(&mut self) {
        self.buf.push(0xC0);
    }

    pub fn bool(&mut self, b: bool) {
        self.buf.push(if b { 0xC3 } else { 0xC2 });
    }

    pub fn int(&mut self, i: i64) {
        if (-16..=127).contains(&i) {
            self.buf.push(i as u8);
        } else if let Ok(x) = i8::try_from(i) {
            self.buf.push(0xC8);
            self.buf.push(x as u8);
        } else if let Ok(x) = i16::try_from(i) {
            self.buf.push(0xC9);
            self.buf.extend_from_slice(&x.to_be_bytes());
        } else if let Ok(x) = i32::try_from(i) {
            self.buf.push(0xCA);
            self.buf.extend_from_slice(&x.to_be_bytes());
        } else {
            self.buf.push(0xCB);
            self.buf.extend_from_slice(&i.to_be_bytes());
        }
    }

    pub fn float(&mut self, x: f64) {
        self.buf.push(0xC1);
        self.buf.extend_from_slice(&x.to_bits().to_be_bytes());
    }

    pub fn bytes(&mut self, b: &[u8]) {
        self.sized(b.len(), None, [0xCC, 0xCD, 0xCE]);
        self.buf.extend_from_slice(b);
    }

    pub fn string(&mut self, s: &str) {
        self.sized(s.len(), Some(0x80), [0xD0, 0xD1, 0xD2]);
        self.buf.extend_from_slice(s.as_bytes());
    }

    pub fn list_header(&mut self, len: usize) {
        self.sized(len, Some(0x90), [0xD4, 0xD5, 0xD6]);
    }

    pub fn map_header(&mut self, len: usize) {
        self.sized(len, Some(0xA0), [0xD8, 0xD9, 0xDA]);
    }

    /// A structure of `fields` fields (at most 15) with tag `tag`; the fields follow.
    pub fn struct_header(&mut self, tag: u8, fields: u8) {
        debug_assert!(fields < 16);
        self.buf.push(0xB0 | fields);
        self.buf.push(tag);
    }

    pub fn value(&mut self, v: &PackValue) {
        match v {
            PackValue::Null => self.null(),
            PackValue::Bool(b) => self.bool(*b),
            PackValue::Int(i) => self.int(*i),
            PackValue::Float(x) => self.float(*x),
            PackValue::Bytes(b) => self.bytes(b),
            PackValue::Str(s) => self.string(s),
            PackValue::List(xs) => {
                self.list_header(xs.len());
                xs.iter().for_each(|x| self.value(x));
            }
            PackValue::Map(entries) => {
                self.map_header(entries.len());
                for (k, x) in entries {
                    self.string(k);
                    self.value(x);
                }
            }
            PackValue::Struct(tag, fields) => {
                self.struct_header(*tag, fields.len() as u8);
                fields.iter().for_each(|x| self.value(x));
            }
            PackValue::Typed(list) => {
                let Value::List(items) = Value::from_scalar(list) else {
                    return self.null();
                };
                self.list_header(items.len());
                items.into_iter().for_each(|x| self.value(&from_value(x)));
            }
        }
    }

    /// A length-prefixed header: the tiny form (`tiny | len`) under 16 where the type has
    /// one, else the 8-, 16- or 32-bit form.
    fn sized(&mut self, len: usize, tiny: Option<u8>, markers: [u8; 3]) {
        match tiny {
            Some(t) if len < 16 => self.buf.push(t | len as u8),
            _ if len <= u8::MAX as usize => {
                self.buf.push(markers[0]);
                self.buf.push(len as u8);
            }
            _ if len <= u16::MAX as usize => {
                self.buf.push(markers[1]);
                self.buf.extend_from_slice(&(len as u16).to_be_bytes());
            }
            _ => {
                self.buf.push(markers[2]);
                // PackStream's sizes are 32-bit; nothing we send comes near.
                self.buf
                    .extend_from_slice(&(len.min(u32::MAX as usize) as u32).to_be_bytes());
            }
        }
    }
}

/// Reads PackStream values from a message's bytes.
pub struct Unpacker<'a> {
    data: &'a [u8],
    pos: usize,
    /// The memory of what was decoded so far (an estimate), and its most.
    decoded: usize,
    budget: usize,
    /// Of it, the bytes of strings and of lists held as one Arrow list: what a query copies
    /// as it plans (the values around them become Arrow arrays once).
    copied: usize,
    /// The depth where long lists of one kind are held as one Arrow list (`None`: any).
    typed_at: Option<usize>,
}

/// What one decoded value takes besides its heap bytes: a byte on the wire (an empty list,
/// a small integer) is a `PackValue` here (32 bytes), then an engine value (64).
const DECODED_VALUE: usize = 3 * std::mem::size_of::<PackValue>();
/// What an element of a list decoded into one Arrow list takes.
const TYPED_VALUE: usize = 8;

impl<'a> Unpacker<'a> {
    pub fn new(data: &'a [u8]) -> Self {
        Self::with_budget(data, usize::MAX)
    }

    /// Decodes at most `budget` bytes of values (an estimate of their memory): past it,
    /// [`over_budget`](Self::over_budget) is true and the value an error, before the memory
    /// is taken. A message of 16 MiB of empty lists is 16 million values, 512 MiB decoded.
    pub fn with_budget(data: &'a [u8], budget: usize) -> Self {
        Self {
            data,
            pos: 0,
            decoded: 0,
            budget,
            copied: 0,
            typed_at: None,
        }
    }

    /// Holds long lists of one kind as one Arrow list only at `depth` (the message is at
    /// 0): where a RUN's parameters stand (2), as the engine holds them; a list inside
    /// another parameter becomes values, and is counted so.
    pub fn typed_at(mut self, depth: usize) -> Self {
        self.typed_at = Some(depth);
        self
    }

    /// Of [`decoded`](Self::decoded), the bytes of strings and of one-kind lists.
    pub fn copied(&self) -> usize {
        self.copied
    }

    /// The memory of the values decoded so far (an estimate).
    pub fn decoded(&self) -> usize {
        self.decoded
    }

    /// Whether decoding stopped at the budget.
    pub fn over_budget(&self) -> bool {
        self.decoded > self.budget
    }

    /// Room for `n` items, as far as the budget goes: what a claimed length reserves is
    /// taken only as its items come.
    fn affordable(&self, n: usize) -> usize {
        n.min(self.budget.saturating_sub(self.decoded) / DECODED_VALUE + 1)
    }

    /// Counts `n` elements of a one-kind list as values after all (another kind came).
    fn as_values(&mut self, n: usize) -> Result<(), DecodeError> {
        self.copied -= n * TYPED_VALUE;
        self.charge(n * (DECODED_VALUE - TYPED_VALUE))
    }

    /// Counts `bytes` more decoded; an error past the budget.
    fn charge(&mut self, bytes: usize) -> Result<(), DecodeError> {
        self.decoded = self.decoded.saturating_add(bytes);
        if self.over_budget() {
            return Err(DecodeError(format!(
                "the message decodes to more than {} bytes",
                self.budget
            )));
        }
        Ok(())
    }

    /// Whether every byte has been read.
    pub fn at_end(&self) -> bool {
        self.pos >= self.data.len()
    }

    pub fn value(&mut self) -> Result<PackValue, DecodeError> {
        self.value_at(0)
    }

    fn value_at(&mut self, depth: usize) -> Result<PackValue, DecodeError> {
        if depth > MAX_DEPTH {
            return Err(DecodeError(format!(
                "nested deeper than {MAX_DEPTH} levels"
            )));
        }
        let m = self.u8()?;
        self.charge(DECODED_VALUE)?;
        Ok(match m {
            0x00..=0x7F => PackValue::Int(m as i64),
            0xF0..=0xFF => PackValue::Int(m as i8 as i64),
            0x80..=0x8F => self.string((m & 0x0F) as usize)?,
            0x90..=0x9F => self.list((m & 0x0F) as usize, depth)?,
            0xA0..=0xAF => self.map((m & 0x0F) as usize, depth)?,
            0xB0..=0xBF => self.structure((m & 0x0F) as usize, depth)?,
            0xC0 => PackValue::Null,
            0xC1 => PackValue::Float(f64::from_bits(u64::from_be_bytes(self.array()?))),
            0xC2 => PackValue::Bool(false),
            0xC3 => PackValue::Bool(true),
            0xC8 => PackValue::Int(i8::from_be_bytes(self.array()?) as i64),
            0xC9 => PackValue::Int(i16::from_be_bytes(self.array()?) as i64),
            0xCA => PackValue::Int(i32::from_be_bytes(self.array()?) as i64),
            0xCB => PackValue::Int(i64::from_be_bytes(self.array()?)),
            0xCC..=0xCE => {
                let len = self.len(m - 0xCC)?;
                let b = self.take(len)?;
                self.charge(len)?;
                self.copied += len;
                PackValue::Bytes(b.to_vec())
            }
            0xD0..=0xD2 => {
                let len = self.len(m - 0xD0)?;
                self.string(len)?
            }
            0xD4..=0xD6 => {
                let len = self.len(m - 0xD4)?;
                self.list(len, depth)?
            }
            0xD8..=0xDA => {
                let len = self.len(m - 0xD8)?;
                self.map(len, depth)?
            }
            other => return Err(DecodeError(format!("unknown marker 0x{other:02X}"))),
        })
    }

    fn u8(&mut self) -> Result<u8, DecodeError> {
        Ok(self.take(1)?[0])
    }

    fn array<const N: usize>(&mut self) -> Result<[u8; N], DecodeError> {
        Ok(self.take(N)?.try_into().expect("N bytes"))
    }

    /// An 8-, 16- or 32-bit length (`width` 0, 1, 2).
    fn len(&mut self, width: u8) -> Result<usize, DecodeError> {
        Ok(match width {
            0 => self.u8()? as usize,
            1 => u16::from_be_bytes(self.array()?) as usize,
            _ => u32::from_be_bytes(self.array()?) as usize,
        })
    }

    fn take(&mut self, n: usize) -> Result<&'a [u8], DecodeError> {
        let end = self
            .pos
            .checked_add(n)
            .filter(|&e| e <= self.data.len())
            .ok_or_else(|| DecodeError("the message ends inside a value".into()))?;
        let out = &self.data[self.pos..end];
        self.pos = end;
        Ok(out)
    }

    fn string(&mut self, len: usize) -> Result<PackValue, DecodeError> {
        let b = self.take(len)?;
        self.charge(len)?;
        self.copied += len;
        std::str::from_utf8(b)
            .map(|s| PackValue::Str(s.to_string()))
            .map_err(|_| DecodeError("a string that is not UTF-8".into()))
    }

    /// At most this many items can follow: every item takes at least one byte, so a claimed
    /// length past the bytes left is an error before anything is allocated.
    fn check_items(&self, n: usize) -> Result<(), DecodeError> {
        if n > self.data.len() - self.pos {
            return Err(DecodeError(format!(
                "a length of {n} items in a message of {} bytes",
                self.data.len()
            )));
        }
        Ok(())
    }

    fn list(&mut self, n: usize, depth: usize) -> Result<PackValue, DecodeError> {
        self.check_items(n)?;
        let mut out = Vec::new();
        if n >= crate::binder::query::COMPACT_ITEMS && self.typed_at.is_none_or(|d| d == depth) {
            // Held as one Arrow list while its items are of one kind.
            let mut typed = TypedListBuilder::with_capacity(self.affordable(n));
            loop {
                if out.len() + typed.len() == n {
                    return Ok(match typed.finish() {
                        Some(list) => PackValue::Typed(list),
                        // Nulls only: values, counted as values.
                        None => {
                            self.as_values(n)?;
                            PackValue::List(vec![PackValue::Null; n])
                        }
                    });
                }
                let x = self.value_at(depth + 1)?;
                if to_value(&x).is_some_and(|v| typed.append(&v)) {
                    // Eight bytes in the Arrow list (a string's bytes stay counted).
                    self.decoded -= DECODED_VALUE - TYPED_VALUE;
                    self.copied += TYPED_VALUE;
                    continue;
                }
                self.as_values(typed.len())?;
                out = Vec::with_capacity(self.affordable(n));
                typed.into_each(|v| out.push(from_value(v)));
                out.push(x);
                break;
            }
        }
        out.reserve_exact(self.affordable(n - out.len()));
        while out.len() < n {
            out.push(self.value_at(depth + 1)?);
        }
        Ok(PackValue::List(out))
    }

    fn map(&mut self, n: usize, depth: usize) -> Result<PackValue, DecodeError> {
        self.check_items(n.saturating_mul(2))?;
        let mut out: Vec<(String, PackValue)> = Vec::with_capacity(self.affordable(n));
        // Where each key stands (a hostile map of a million keys stays linear).
        let mut at: std::collections::HashMap<String, usize> = Default::default();
        for _ in 0..n {
            let PackValue::Str(k) = self.value_at(depth + 1)? else {
                return Err(DecodeError("a map key that is not a string".into()));
            };
            let v = self.value_at(depth + 1)?;
            // A repeated key: the last one wins, as in Neo4j.
            match at.get(&k) {
                Some(&i) => out[i].1 = v,
                None => {
                    at.insert(k.clone(), out.len());
                    out.push((k, v));
                }
            }
        }
        Ok(PackValue::Map(out))
    }

    fn structure(&mut self, n: usize, depth: usize) -> Result<PackValue, DecodeError> {
        let tag = self.u8()?;
        self.check_items(n)?;
        let mut fields = Vec::with_capacity(self.affordable(n));
        for _ in 0..n {
            fields.push(self.value_at(depth + 1)?);
        }
        Ok(PackValue::Struct(tag, fields))
    }
}

/// A number, boolean, string or null as a [`Value`] (what a typed list holds).
fn to_value(x: &PackValue) -> Option<Value> {
    Some(match x {
        PackValue::Null => Value::Null,
        PackValue::Bool(b) => Value::Bool(*b),
        PackValue::Int(i) => Value::Int(*i),
        PackValue::Float(f) => Value::Float(*f),
        PackValue::Str(s) => Value::Str(s.clone()),
        _ => return None,
    })
}

/// An element of a typed list as the value it was received as.
fn from_value(v: Value) -> PackValue {
    match v {
        Value::Bool(b) => PackValue::Bool(b),
        Value::Int(i) => PackValue::Int(i),
        Value::Float(f) => PackValue::Float(f),
        Value::Str(s) => PackValue::Str(s),
        _ => PackValue::Null,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn round_trip(v: PackValue) {
        let mut p = Packer::default();
        p.value(&v);
        let mut u = Unpacker::new(&p.buf);
        assert_eq!(u.value().unwrap(), v);
        assert!(u.at_end());
    }

    #[test]
    fn integers_take_their_smallest_form() {
        let cases: [(i64, &[u8]); 9] = [
            (1, &[0x01]),
            (-16, &[0xF0]),
            (-17, &[0xC8, 0xEF]),
            (127, &[0x7F]),
            (128, &[0xC9, 0x00, 0x80]),
            (-129, &[0xC9, 0xFF, 0x7F]),
            (32768, &[0xCA, 0x00, 0x00, 0x80, 0x00]),
            (
                i64::MAX,
                &[0xCB, 0x7F, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF],
            ),
            (i64::MIN, &[0xCB, 0x80, 0, 0, 0, 0, 0, 0, 0]),
        ];
        for (i, bytes) in cases {
            let mut p = Packer::default();
            p.int(i);
            assert_eq!(p.buf, bytes, "{i}");
            round_trip(PackValue::Int(i));
        }
    }

    #[test]
    fn every_kind_round_trips() {
        round_trip(PackValue::Null);
        round_trip(PackValue::Bool(true));
        round_trip(PackValue::Float(-1.5));
        round_trip(PackValue::Str("x".repeat(300)));
        round_trip(PackValue::Str("Zürich".into()));
        round_trip(PackValue::Bytes(vec![1, 2, 3]));
        // A repeated key: the last value.
        let dup = [0xA2, 0x81, b'k', 0x01, 0x81, b'k', 0x02];
        assert_eq!(
            Unpacker::new(&dup).value().unwrap(),
            PackValue::Map(vec![("k".into(), PackValue::Int(2))])
        );
        round_trip(PackValue::Map(vec![
            ("a".into(), PackValue::Int(1)),
            ("b".into(), PackValue::List(vec![PackValue::Null])),
        ]));
        round_trip(PackValue::Struct(
            0x4E,
            vec![PackValue::Int(1), PackValue::List(vec![])],
        ));
        // NaN has no equality: compare its bits.
        let mut p = Packer::default();
        p.float(f64::NAN);
        let PackValue::Float(x) = Unpacker::new(&p.buf).value().unwrap() else {
            panic!("not a float")
        };
        assert!(x.is_nan());
    }

    /// Packs `v`, decodes the bytes, and packs the result again to the same bytes.
    fn repacked(v: &PackValue) -> PackValue {
        let mut p = Packer::default();
        p.value(v);
        let mut u = Unpacker::new(&p.buf);
        let back = u.value().unwrap();
        assert!(u.at_end());
        let mut again = Packer::default();
        again.value(&back);
        assert_eq!(again.buf, p.buf);
        back
    }

    #[test]
    fn a_long_list_of_one_kind_is_decoded_into_one_arrow_list() {
        let n = crate::binder::query::COMPACT_ITEMS as i64;
        let ints = |r: std::ops::Range<i64>| r.map(PackValue::Int).collect::<Vec<_>>();
        // Shorter: values.
        let short = PackValue::List(ints(0..n - 1));
        assert_eq!(repacked(&short), short);
        let as_values = |back: PackValue| match back {
            PackValue::Typed(list) => Value::from_scalar(&list),
            other => panic!("not typed: {other:?}"),
        };
        let mut items = vec![PackValue::Null];
        items.extend(ints(-70_000..70_000));
        items.push(PackValue::Null);
        let Value::List(got) = as_values(repacked(&PackValue::List(items.clone()))) else {
            panic!("not a list")
        };
        assert_eq!(got.len(), items.len());
        assert!(got
            .iter()
            .zip(&items)
            .all(|(v, x)| to_value(x).as_ref() == Some(v)));
        let strs = PackValue::List((0..n).map(|i| PackValue::Str(i.to_string())).collect());
        assert!(matches!(repacked(&strs), PackValue::Typed(_)));
        let floats = PackValue::List((0..n).map(|i| PackValue::Float(i as f64)).collect());
        assert!(matches!(repacked(&floats), PackValue::Typed(_)));
        // Another kind anywhere (the first, a middle or the last item; a float among
        // integers): the same values, in order.
        for (at, other) in [
            (0, PackValue::Str("x".into())),
            (500, PackValue::Float(1.5)),
            (n as usize - 1, PackValue::List(vec![PackValue::Int(1)])),
            (n as usize - 1, PackValue::Map(vec![])),
        ] {
            let mut items = ints(0..n);
            items[at] = other;
            let list = PackValue::List(items);
            assert_eq!(repacked(&list), list, "{at}");
        }
        // Nulls only.
        let nulls = PackValue::List(vec![PackValue::Null; n as usize]);
        assert_eq!(repacked(&nulls), nulls);
        // Nested: inside a map and a list.
        let nested = PackValue::Map(vec![(
            "xs".into(),
            PackValue::List(vec![PackValue::List(ints(0..n))]),
        )]);
        let PackValue::Map(es) = repacked(&nested) else {
            panic!("not a map")
        };
        let PackValue::List(inner) = &es[0].1 else {
            panic!("not a list")
        };
        assert!(matches!(inner[0], PackValue::Typed(_)));
    }

    #[test]
    fn decoding_stops_at_the_budget() {
        // 100,000 empty lists: a byte each on the wire, a value each decoded.
        let mut p = Packer::default();
        p.list_header(100_000);
        for _ in 0..100_000 {
            p.list_header(0);
        }
        let mut u = Unpacker::with_budget(&p.buf, 1 << 20);
        assert!(u.value().is_err() && u.over_budget());
        let mut u = Unpacker::with_budget(&p.buf, 1 << 30);
        assert!(u.value().is_ok() && !u.over_budget());
        assert!(u.decoded() >= 100_000 * DECODED_VALUE, "{}", u.decoded());
        assert_eq!(u.copied(), 0);
        // One kind: counted at 8 bytes an element, all of them copied by a query.
        let mut p = Packer::default();
        p.list_header(100_000);
        for i in 0..100_000 {
            p.int(i);
        }
        let mut u = Unpacker::with_budget(&p.buf, 1 << 20);
        assert!(matches!(u.value(), Ok(PackValue::Typed(_))));
        assert!(u.decoded() < 100_000 * 9, "{}", u.decoded());
        assert_eq!(u.copied(), 100_000 * TYPED_VALUE);
        // Of another kind at the end: values again, counted as values.
        p.string("x");
        let mut buf = p.buf.clone();
        buf[1..5].copy_from_slice(&100_001u32.to_be_bytes());
        let mut u = Unpacker::with_budget(&buf, 1 << 30);
        assert!(matches!(u.value(), Ok(PackValue::List(xs)) if xs.len() == 100_001));
        assert!(u.decoded() >= 100_000 * DECODED_VALUE && u.copied() == 1);
        // Nulls only: values.
        let mut p = Packer::default();
        p.list_header(100_000);
        (0..100_000).for_each(|_| p.null());
        let mut u = Unpacker::with_budget(&p.buf, 1 << 30);
        assert!(matches!(u.value(), Ok(PackValue::List(xs)) if xs.len() == 100_000));
        assert!(u.decoded() >= 100_000 * DECODED_VALUE && u.copied() == 0);
        assert!(Unpacker::with_budget(&p.buf, 1 << 20).value().is_err());
    }

    #[test]
    fn long_lists_are_one_arrow_list_only_where_a_parameter_stands() {
        let ints = |p: &mut Packer| {
            p.list_header(2000);
            (0..2000).for_each(|i| p.int(i));
        };
        // RUN {p: [...], q: {r: [...]}}
        let mut p = Packer::default();
        p.struct_header(0x10, 1);
        p.map_header(2);
        p.string("p");
        ints(&mut p);
        p.string("q");
        p.map_header(1);
        p.string("r");
        ints(&mut p);
        let mut u = Unpacker::new(&p.buf).typed_at(2);
        let Ok(PackValue::Struct(_, fields)) = u.value() else {
            panic!("not a message")
        };
        assert!(matches!(fields[0].get("p"), Some(PackValue::Typed(_))));
        let r = fields[0].get("q").and_then(|q| q.get("r"));
        assert!(
            matches!(r, Some(PackValue::List(xs)) if xs.len() == 2000),
            "{r:?}"
        );
        assert!(u.decoded() >= 2000 * DECODED_VALUE && u.copied() == 2000 * TYPED_VALUE + 3);
    }

    #[test]
    fn malformed_input_is_an_error() {
        let cases: [&[u8]; 7] = [
            &[],
            &[0xC9, 0x01],
            // A string claiming 4 GiB.
            &[0xD2, 0xFF, 0xFF, 0xFF, 0xFF],
            // A list claiming 65535 items in 3 bytes.
            &[0xD5, 0xFF, 0xFF],
            &[0x81, 0xFF],
            &[0xA1, 0x01, 0x01],
            &[0xE0],
        ];
        for bytes in cases {
            assert!(Unpacker::new(bytes).value().is_err(), "{bytes:?}");
        }
        let deep: Vec<u8> = std::iter::repeat_n(0x91, 1000).chain([0xC0]).collect();
        let e = Unpacker::new(&deep).value().unwrap_err();
        assert!(e.0.contains("nested deeper"), "{e}");
    }
}
