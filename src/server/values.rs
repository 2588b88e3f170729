//! Engine values as Bolt values and back: nodes, relationships and paths as Bolt's graph
//! structures (with element ids from 5.0 on), dates, times and durations as its temporal
//! structures, everything else as the PackStream value of the same kind.

use super::packstream::{PackValue, Packer};
use crate::functions::temporal::{Duration, Temporal, NANOS_PER_SECOND};
use crate::functions::value::{walked_forwards, Entity, Value};
use chrono::{NaiveDate, NaiveDateTime, NaiveTime, Timelike};

/// The Bolt version a connection speaks: what its structures look like.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct Version {
    pub major: u8,
    pub minor: u8,
}

impl Version {
    /// Element ids in nodes and relationships, datetimes by UTC instant (`I`, `i`), LOGON.
    fn is_5(self) -> bool {
        self.major >= 5
    }
}

impl std::fmt::Display for Version {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}.{}", self.major, self.minor)
    }
}

mod tag {
    pub const NODE: u8 = b'N';
    pub const RELATIONSHIP: u8 = b'R';
    pub const UNBOUND_RELATIONSHIP: u8 = b'r';
    pub const PATH: u8 = b'P';
    pub const DATE: u8 = b'D';
    pub const TIME: u8 = b'T';
    pub const LOCAL_TIME: u8 = b't';
    pub const DATE_TIME_UTC: u8 = b'I';
    pub const DATE_TIME_ZONE_ID_UTC: u8 = b'i';
    pub const DATE_TIME_LEGACY: u8 = b'F';
    pub const DATE_TIME_ZONE_ID_LEGACY: u8 = b'f';
    pub const LOCAL_DATE_TIME: u8 = b'd';
    pub const DURATION: u8 = b'E';
}

/// Writes `v` as the Bolt value a client of `version` reads.
pub fn pack(p: &mut Packer, v: &Value, version: Version) {
    match v {
        Value::Null => p.null(),
        Value::Bool(b) => p.bool(*b),
        Value::Int(i) => p.int(*i),
        Value::Float(x) => p.float(*x),
        Value::Str(s) => p.string(s),
        Value::List(xs) => {
            p.list_header(xs.len());
            xs.iter().for_each(|x| pack(p, x, version));
        }
        Value::Map(entries) => match v.entity() {
            Some(e) => pack_entity(p, v, e, version, true),
            None => {
                p.map_header(entries.len());
                for (k, x) in entries {
                    p.string(k);
                    pack(p, x, version);
                }
            }
        },
        Value::Temporal(t) => pack_temporal(p, t, version),
        Value::Other(s) => {
            use datafusion::common::ScalarValue as S;
            match s {
                S::Binary(Some(b))
                | S::LargeBinary(Some(b))
                | S::FixedSizeBinary(_, Some(b))
                | S::BinaryView(Some(b)) => p.bytes(b),
                other if other.is_null() => p.null(),
                other => p.string(&other.to_string()),
            }
        }
    }
}

/// Bolt's integer id of an element: a stable hash of its element id (the engine's ids are
/// text), non-negative as Neo4j's are; -1 where the value carries no identity.
pub fn legacy_id(element_id: Option<&str>) -> i64 {
    let Some(id) = element_id else { return -1 };
    // FNV-1a: stable across processes and versions, unlike std's hasher.
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in id.as_bytes() {
        h ^= *b as u64;
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    (h >> 1) as i64
}

/// The element id of an entity; one made from its content where the value carries none
/// (equal values then share it, as they compare equal).
fn element_id(given: Option<&str>, v: &Value) -> String {
    given.map_or_else(
        || format!("~{:x}", legacy_id(Some(&format!("{v:?}")))),
        str::to_string,
    )
}

/// An element id as clients see it: the engine's (`{label}` or `{relationship}`, a unit
/// separator, `{key}`) as `{label}:{key}`, with `%`, `:` in the label and control characters
/// percent-encoded, so that it prints and logs cleanly and two ids stay two.
pub fn shown_id(id: &str) -> String {
    let (head, key) = id
        .split_once(crate::planner::path::ID_SEP)
        .unwrap_or(("", id));
    let mut out = String::with_capacity(id.len() + 2);
    let escape = |out: &mut String, c: char, colon: bool| {
        if c.is_control() || c == '%' || (colon && c == ':') {
            let mut b = [0u8; 4];
            for byte in c.encode_utf8(&mut b).bytes() {
                out.push_str(&format!("%{byte:02X}"));
            }
        } else {
            out.push(c);
        }
    };
    if !head.is_empty() || id.contains(crate::planner::path::ID_SEP) {
        head.chars().for_each(|c| escape(&mut out, c, true));
        out.push(':');
    }
    key.chars().for_each(|c| escape(&mut out, c, false));
    out
}

fn pack_properties(p: &mut Packer, props: &[(&str, &Value)], version: Version) {
    p.map_header(props.len());
    for (k, v) in props {
        p.string(k);
        pack(p, v, version);
    }
}

/// Node, relationship or path `e` (of value `v`); a relationship not `bound` is a path's
/// (without its end nodes).
fn pack_entity(p: &mut Packer, v: &Value, e: Entity<'_>, version: Version, bound: bool) {
    let v5 = version.is_5();
    match e {
        Entity::Node {
            labels,
            element_id: id,
            properties,
        } => {
            let id = element_id(id, v);
            p.struct_header(tag::NODE, if v5 { 4 } else { 3 });
            p.int(legacy_id(Some(&id)));
            p.list_header(labels.len());
            labels.iter().for_each(|l| p.string(l));
            pack_properties(p, &properties, version);
            if v5 {
                p.string(&shown_id(&id));
            }
        }
        Entity::Relationship {
            rel_type,
            element_id: id,
            start,
            end,
            properties,
        } => {
            let id = element_id(id, v);
            let (t, fields) = match (bound, v5) {
                (true, true) => (tag::RELATIONSHIP, 8),
                (true, false) => (tag::RELATIONSHIP, 5),
                (false, true) => (tag::UNBOUND_RELATIONSHIP, 4),
                (false, false) => (tag::UNBOUND_RELATIONSHIP, 3),
            };
            p.struct_header(t, fields);
            p.int(legacy_id(Some(&id)));
            if bound {
                p.int(legacy_id(start));
                p.int(legacy_id(end));
            }
            p.string(rel_type);
            pack_properties(p, &properties, version);
            if v5 {
                p.string(&shown_id(&id));
                if bound {
                    p.string(&shown_id(start.unwrap_or_default()));
                    p.string(&shown_id(end.unwrap_or_default()));
                }
            }
        }
        // Its nodes, its relationships unbound, and the walk as indices (relationship
        // `i + 1` walked forwards, `-(i + 1)` backwards, then the node reached).
        Entity::Path {
            nodes,
            relationships,
        } => {
            p.struct_header(tag::PATH, 3);
            p.list_header(nodes.len());
            nodes.iter().for_each(|n| pack(p, n, version));
            p.list_header(relationships.len());
            for r in relationships {
                match r.entity() {
                    Some(e) => pack_entity(p, r, e, version, false),
                    None => p.null(),
                }
            }
            p.list_header(relationships.len() * 2);
            for (i, r) in relationships.iter().enumerate() {
                let forwards = nodes.get(i).is_none_or(|n| walked_forwards(r, n));
                let n = i as i64 + 1;
                p.int(if forwards { n } else { -n });
                p.int(n);
            }
        }
    }
}

fn nanos_of_day(t: &NaiveTime) -> i64 {
    t.num_seconds_from_midnight() as i64 * 1_000_000_000 + t.nanosecond() as i64
}

fn pack_temporal(p: &mut Packer, t: &Temporal, version: Version) {
    let epoch = NaiveDate::from_ymd_opt(1970, 1, 1).expect("the epoch");
    let seconds = |d: &NaiveDateTime| d.and_utc().timestamp();
    let nanos = |d: &NaiveDateTime| d.nanosecond() as i64;
    match t {
        Temporal::Date(d) => {
            p.struct_header(tag::DATE, 1);
            p.int((*d - epoch).num_days());
        }
        Temporal::LocalTime(t) => {
            p.struct_header(tag::LOCAL_TIME, 1);
            p.int(nanos_of_day(t));
        }
        Temporal::Time(t, offset) => {
            p.struct_header(tag::TIME, 2);
            p.int(nanos_of_day(t));
            p.int(*offset as i64);
        }
        Temporal::LocalDateTime(d) => {
            p.struct_header(tag::LOCAL_DATE_TIME, 2);
            p.int(seconds(d));
            p.int(nanos(d));
        }
        Temporal::DateTime(local, offset, zone) => {
            // From 5.0 a datetime travels as its UTC instant, before as its wall time.
            let secs = if version.is_5() {
                seconds(local) - *offset as i64
            } else {
                seconds(local)
            };
            let t = match (zone, version.is_5()) {
                (Some(_), true) => tag::DATE_TIME_ZONE_ID_UTC,
                (Some(_), false) => tag::DATE_TIME_ZONE_ID_LEGACY,
                (None, true) => tag::DATE_TIME_UTC,
                (None, false) => tag::DATE_TIME_LEGACY,
            };
            p.struct_header(t, 3);
            p.int(secs);
            p.int(nanos(local));
            match zone {
                Some(z) => p.string(z),
                None => p.int(*offset as i64),
            }
        }
        Temporal::Duration(d) => {
            p.struct_header(tag::DURATION, 4);
            p.int(d.months);
            p.int(d.days);
            let secs = d.nanos.div_euclid(NANOS_PER_SECOND);
            p.int(i64::try_from(secs).unwrap_or(i64::MAX));
            p.int(d.nanos.rem_euclid(NANOS_PER_SECOND) as i64);
        }
    }
}

/// A parameter received from a client as an engine value; an error names what cannot be a
/// parameter (a node, a point, an out-of-range temporal value).
pub fn unpack(v: PackValue, version: Version) -> Result<Value, String> {
    match v {
        // Kept as the one Arrow list it was decoded into (the binder holds it so).
        PackValue::Typed(list) => Ok(Value::Other(list)),
        v => unpack_item(v, version),
    }
}

/// A value inside a parameter: lists of every kind as lists of values.
fn unpack_item(v: PackValue, version: Version) -> Result<Value, String> {
    let unpack = unpack_item;
    Ok(match v {
        PackValue::Typed(list) => Value::from_scalar(&list),
        PackValue::Null => Value::Null,
        PackValue::Bool(b) => Value::Bool(b),
        PackValue::Int(i) => Value::Int(i),
        PackValue::Float(x) => Value::Float(x),
        PackValue::Str(s) => Value::Str(s),
        PackValue::Bytes(b) => Value::Other(datafusion::common::ScalarValue::Binary(Some(b))),
        PackValue::List(xs) => Value::List(
            xs.into_iter()
                .map(|x| unpack(x, version))
                .collect::<Result<_, _>>()?,
        ),
        PackValue::Map(es) => Value::Map(
            es.into_iter()
                .map(|(k, x)| Ok((k, unpack(x, version)?)))
                .collect::<Result<_, String>>()?,
        ),
        PackValue::Struct(t, fields) => Value::Temporal(unpack_temporal(t, &fields, version)?),
    })
}

fn unpack_temporal(t: u8, f: &[PackValue], version: Version) -> Result<Temporal, String> {
    let name = (t as char).to_string();
    let int = |i: usize| -> Result<i64, String> {
        f.get(i)
            .and_then(PackValue::as_int)
            .ok_or_else(|| format!("structure '{name}' needs an integer in field {i}"))
    };
    let range = || format!("a temporal value (structure '{name}') out of range");
    let time = |nanos: i64| {
        let secs = u32::try_from(nanos.div_euclid(1_000_000_000)).ok()?;
        NaiveTime::from_num_seconds_from_midnight_opt(secs, nanos.rem_euclid(1_000_000_000) as u32)
    };
    let instant = |secs: i64, nanos: i64| {
        let ns = u32::try_from(nanos).ok()?;
        Some(chrono::DateTime::from_timestamp(secs, ns)?.naive_utc())
    };
    let zone = || f.get(2).and_then(PackValue::as_str).map(str::to_string);
    let utc = version.is_5();
    Ok(match t {
        tag::DATE => {
            let days = int(0)?;
            Temporal::Date(
                NaiveDate::from_ymd_opt(1970, 1, 1)
                    .and_then(|e| e.checked_add_signed(chrono::TimeDelta::try_days(days)?))
                    .ok_or_else(range)?,
            )
        }
        tag::LOCAL_TIME => Temporal::LocalTime(time(int(0)?).ok_or_else(range)?),
        tag::TIME => Temporal::Time(
            time(int(0)?).ok_or_else(range)?,
            i32::try_from(int(1)?).map_err(|_| range())?,
        ),
        tag::LOCAL_DATE_TIME => {
            Temporal::LocalDateTime(instant(int(0)?, int(1)?).ok_or_else(range)?)
        }
        tag::DATE_TIME_UTC | tag::DATE_TIME_LEGACY if f.len() == 3 => {
            let offset = i32::try_from(int(2)?).map_err(|_| range())?;
            // The wall time: the instant moved by the offset (legacy: sent as wall time).
            let secs = if t == tag::DATE_TIME_UTC && utc {
                int(0)?.checked_add(offset as i64).ok_or_else(range)?
            } else {
                int(0)?
            };
            Temporal::DateTime(instant(secs, int(1)?).ok_or_else(range)?, offset, None)
        }
        tag::DATE_TIME_ZONE_ID_UTC | tag::DATE_TIME_ZONE_ID_LEGACY if f.len() == 3 => {
            let z = zone().ok_or_else(|| format!("structure '{name}' needs a zone name"))?;
            let at = instant(int(0)?, int(1)?).ok_or_else(range)?;
            if t == tag::DATE_TIME_ZONE_ID_UTC && utc {
                Temporal::in_zone(at, &z).ok_or_else(|| format!("unknown time zone '{z}'"))?
            } else {
                // Legacy: the wall time in the zone; its offset is the zone's at that time.
                let guess =
                    Temporal::in_zone(at, &z).ok_or_else(|| format!("unknown time zone '{z}'"))?;
                let Temporal::DateTime(_, o, _) = guess else {
                    return Err(range());
                };
                let shifted = at - chrono::TimeDelta::seconds(o as i64);
                Temporal::in_zone(shifted, &z).ok_or_else(range)?
            }
        }
        tag::DURATION => {
            let nanos = int(2)? as i128 * NANOS_PER_SECOND + int(3)? as i128;
            Temporal::Duration(Duration {
                months: int(0)?,
                days: int(1)?,
                nanos,
            })
        }
        b'X' | b'Y' => return Err("points are not supported".into()),
        b'N' | b'R' | b'r' | b'P' => {
            return Err("a node, relationship or path cannot be a parameter".into())
        }
        other => return Err(format!("unknown structure 0x{other:02X}")),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::server::packstream::Unpacker;

    const V5: Version = Version { major: 5, minor: 4 };
    const V4: Version = Version { major: 4, minor: 4 };

    fn packed(v: &Value, version: Version) -> PackValue {
        let mut p = Packer::default();
        pack(&mut p, v, version);
        Unpacker::new(&p.buf).value().unwrap()
    }

    fn s(x: &str) -> Value {
        Value::Str(x.into())
    }

    fn node(label: &str, id: &str, props: &[(&str, Value)]) -> Value {
        let mut es = vec![("__label".to_string(), s(label))];
        es.extend(props.iter().map(|(k, v)| (k.to_string(), v.clone())));
        es.push(("__nid".into(), s(id)));
        Value::Map(es)
    }

    #[test]
    fn nodes_carry_labels_properties_and_element_ids() {
        let n = node(
            "Person",
            "Person\u{1f}1",
            &[("name", s("Ann")), ("x", Value::Null)],
        );
        let id = legacy_id(Some("Person\u{1f}1"));
        assert!(id >= 0);
        let props = PackValue::Map(vec![("name".into(), PackValue::Str("Ann".into()))]);
        let labels = PackValue::List(vec![PackValue::Str("Person".into())]);
        assert_eq!(
            packed(&n, V5),
            PackValue::Struct(
                b'N',
                vec![
                    PackValue::Int(id),
                    labels.clone(),
                    props.clone(),
                    PackValue::Str("Person:1".into())
                ]
            )
        );
        assert_eq!(
            packed(&n, V4),
            PackValue::Struct(b'N', vec![PackValue::Int(id), labels, props])
        );
    }

    #[test]
    fn element_ids_are_shown_without_control_characters_and_stay_distinct() {
        assert_eq!(shown_id("Person\u{1f}1"), "Person:1");
        assert_eq!(shown_id("KNOWS\u{1f}17"), "KNOWS:17");
        assert_eq!(shown_id("~1f3a"), "~1f3a");
        // A colon in a label, a percent sign or a control character in a key.
        assert_eq!(shown_id("A:B\u{1f}C"), "A%3AB:C");
        assert_eq!(shown_id("A\u{1f}B:C"), "A:B:C");
        assert_eq!(shown_id("T\u{1f}a%b\nc\u{1f}d"), "T:a%25b%0Ac%1Fd");
        for id in ["A:B\u{1f}C", "A\u{1f}B:C", "T\u{1f}x\u{7f}é"] {
            assert!(!shown_id(id).chars().any(char::is_control), "{id:?}");
        }
    }

    #[test]
    fn a_path_walks_its_relationships_in_their_directions() {
        let rel = |start: &str, end: &str| {
            Value::Map(vec![
                ("__type".into(), s("KNOWS")),
                ("__rid".into(), s(&format!("{start}>{end}"))),
                ("__start".into(), s(start)),
                ("__end".into(), s(end)),
            ])
        };
        let path = Value::Map(vec![
            (
                "__nodes".into(),
                Value::List(vec![
                    node("P", "a", &[]),
                    node("P", "b", &[]),
                    node("P", "c", &[]),
                ]),
            ),
            (
                "__rels".into(),
                Value::List(vec![rel("a", "b"), rel("c", "b")]),
            ),
        ]);
        let PackValue::Struct(b'P', fields) = packed(&path, V5) else {
            panic!("not a path")
        };
        let ints = |xs: &[i64]| PackValue::List(xs.iter().map(|&i| PackValue::Int(i)).collect());
        assert_eq!(fields[2], ints(&[1, 1, -2, 2]));
        let PackValue::List(rels) = &fields[1] else {
            panic!("no relationships")
        };
        assert!(matches!(&rels[0], PackValue::Struct(b'r', f) if f.len() == 4));
    }

    #[test]
    fn temporal_values_round_trip_in_both_versions() {
        let wall = NaiveDate::from_ymd_opt(2024, 3, 31)
            .unwrap()
            .and_hms_nano_opt(2, 30, 0, 123_456_789)
            .unwrap();
        let values = [
            Temporal::Date(wall.date()),
            Temporal::LocalTime(wall.time()),
            Temporal::Time(wall.time(), -3600),
            Temporal::LocalDateTime(wall),
            Temporal::DateTime(wall, 7200, None),
            Temporal::in_zone(wall, "Europe/Berlin").unwrap(),
            Temporal::Duration(Duration {
                months: 14,
                days: -3,
                nanos: -1_500_000_000,
            }),
        ];
        for version in [V4, V5] {
            for t in &values {
                let back = unpack(packed(&Value::Temporal(t.clone()), version), version);
                assert_eq!(back, Ok(Value::Temporal(t.clone())), "{t:?} in {version}");
            }
        }
        // 5.x sends the instant: 02:30 at +02:00 is 00:30 UTC.
        let PackValue::Struct(b'I', f) = packed(&Value::Temporal(values[4].clone()), V5) else {
            panic!("not a datetime")
        };
        assert_eq!(f[0], PackValue::Int(wall.and_utc().timestamp() - 7200));
    }

    #[test]
    fn what_cannot_be_a_parameter_is_named() {
        let n = PackValue::Struct(b'N', vec![]);
        assert!(unpack(n, V5).unwrap_err().contains("cannot be a parameter"));
        let bad = PackValue::Struct(b'D', vec![PackValue::Int(i64::MAX)]);
        assert!(unpack(bad, V5).unwrap_err().contains("out of range"));
    }
}
