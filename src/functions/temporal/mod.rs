//! Temporal values: `date`, `localtime`, `time`, `localdatetime`, `datetime` and `duration`,
//! with openCypher's construction (from strings, maps and other temporal values), accessors,
//! arithmetic, truncation, comparison and rendering. Calendars and zones are chrono's and
//! chrono-tz's; nothing here does date arithmetic by hand beyond splitting a duration.
//!
//! In a column a temporal value is a value of mixed kind (`super::any`), so one column can
//! hold a datetime in any zone; stored Arrow `Date32`, `Time64`, `Timestamp` and `Interval`
//! columns read as the matching kind (`from_scalar`).

mod arith;
mod build;
mod parse;

pub use arith::{add, between, divide, multiply, subtract, BetweenUnit};
pub use build::{construct, truncate};

use chrono::{Datelike, NaiveDate, NaiveDateTime, NaiveTime, Timelike};
use std::cmp::Ordering;

pub const NANOS_PER_SECOND: i128 = 1_000_000_000;
const NANOS_PER_DAY: i64 = 86_400_000_000_000;

/// A temporal value. Times of day are local wall-clock times; `Time` and `DateTime` carry
/// their UTC offset in seconds, a `DateTime` also the zone it was given in (offsets follow
/// the zone's rules at that date).
#[derive(Debug, Clone, PartialEq)]
pub enum Temporal {
    Date(NaiveDate),
    LocalTime(NaiveTime),
    Time(NaiveTime, i32),
    LocalDateTime(NaiveDateTime),
    DateTime(NaiveDateTime, i32, Option<String>),
    Duration(Duration),
}

/// A duration as openCypher keeps it: months, days and seconds (as nanoseconds) apart,
/// because a month and a day have no fixed length.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Duration {
    pub months: i64,
    pub days: i64,
    pub nanos: i128,
}

/// The kinds of temporal value, in openCypher's order of kinds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Kind {
    DateTime,
    LocalDateTime,
    Date,
    Time,
    LocalTime,
    Duration,
}

impl Kind {
    pub fn name(self) -> &'static str {
        match self {
            Kind::Date => "Date",
            Kind::LocalTime => "LocalTime",
            Kind::Time => "Time",
            Kind::LocalDateTime => "LocalDateTime",
            Kind::DateTime => "DateTime",
            Kind::Duration => "Duration",
        }
    }

    /// The kind a constructor function builds (`date`, `localtime`, ...).
    pub fn of_function(name: &str) -> Option<Kind> {
        Some(match name {
            "date" => Kind::Date,
            "localtime" => Kind::LocalTime,
            "time" => Kind::Time,
            "localdatetime" => Kind::LocalDateTime,
            "datetime" => Kind::DateTime,
            "duration" => Kind::Duration,
            _ => return None,
        })
    }

    /// The kind of rank `r` in openCypher's order (`Kind as u8`).
    pub fn from_rank(r: u8) -> Option<Kind> {
        [
            Kind::DateTime,
            Kind::LocalDateTime,
            Kind::Date,
            Kind::Time,
            Kind::LocalTime,
            Kind::Duration,
        ]
        .get(r as usize)
        .copied()
    }

    fn has_date(self) -> bool {
        matches!(self, Kind::Date | Kind::LocalDateTime | Kind::DateTime)
    }

    fn has_time(self) -> bool {
        matches!(
            self,
            Kind::LocalTime | Kind::Time | Kind::LocalDateTime | Kind::DateTime
        )
    }

    fn has_zone(self) -> bool {
        matches!(self, Kind::Time | Kind::DateTime)
    }
}

/// A temporal error's message (raised as a `TypeError` / `ArgumentError` by the caller).
pub type TResult<T> = std::result::Result<T, String>;

impl Temporal {
    /// The datetime at UTC instant `utc` in the time zone named `zone` (`Europe/Berlin`, or
    /// an offset such as `+01:00`); `None` for an unknown zone.
    pub fn in_zone(utc: NaiveDateTime, zone: &str) -> Option<Temporal> {
        build::zoned_from_utc(utc, zone).ok()
    }

    pub fn kind(&self) -> Kind {
        match self {
            Temporal::Date(_) => Kind::Date,
            Temporal::LocalTime(_) => Kind::LocalTime,
            Temporal::Time(..) => Kind::Time,
            Temporal::LocalDateTime(_) => Kind::LocalDateTime,
            Temporal::DateTime(..) => Kind::DateTime,
            Temporal::Duration(_) => Kind::Duration,
        }
    }

    pub fn date(&self) -> Option<NaiveDate> {
        match self {
            Temporal::Date(d) => Some(*d),
            Temporal::LocalDateTime(dt) | Temporal::DateTime(dt, ..) => Some(dt.date()),
            _ => None,
        }
    }

    pub fn time(&self) -> Option<NaiveTime> {
        match self {
            Temporal::LocalTime(t) | Temporal::Time(t, _) => Some(*t),
            Temporal::LocalDateTime(dt) | Temporal::DateTime(dt, ..) => Some(dt.time()),
            _ => None,
        }
    }

    /// The UTC offset in seconds and the zone name, for the kinds that have them.
    pub fn zone(&self) -> Option<(i32, Option<&str>)> {
        match self {
            Temporal::Time(_, o) => Some((*o, None)),
            Temporal::DateTime(_, o, z) => Some((*o, z.as_deref())),
            _ => None,
        }
    }

    /// Nanoseconds since the epoch in UTC (a datetime) or local (a local datetime).
    fn epoch_nanos(dt: &NaiveDateTime, offset: i32) -> i128 {
        let utc = dt.and_utc();
        (utc.timestamp() as i128 - offset as i128) * NANOS_PER_SECOND
            + utc.timestamp_subsec_nanos() as i128
    }

    /// A time of day as nanoseconds since midnight, in UTC for a `Time`.
    fn day_nanos(t: &NaiveTime, offset: i32) -> i64 {
        let local = t.num_seconds_from_midnight() as i64 * 1_000_000_000 + t.nanosecond() as i64;
        (local - offset as i64 * 1_000_000_000).rem_euclid(NANOS_PER_DAY)
    }

    /// The key values of a kind order by: instants for zoned values, wall-clock time for
    /// local ones; `None` for durations (they have no order).
    fn order_key(&self) -> Option<i128> {
        Some(match self {
            Temporal::Date(d) => d.num_days_from_ce() as i128,
            Temporal::LocalTime(t) => Self::day_nanos(t, 0) as i128,
            Temporal::Time(t, o) => Self::day_nanos(t, *o) as i128,
            Temporal::LocalDateTime(dt) => Self::epoch_nanos(dt, 0),
            Temporal::DateTime(dt, o, _) => Self::epoch_nanos(dt, *o),
            Temporal::Duration(_) => return None,
        })
    }

    /// How two values of the same kind order; `None` across kinds and for durations.
    pub fn order(&self, other: &Temporal) -> Option<Ordering> {
        if self.kind() != other.kind() {
            return None;
        }
        Some(self.order_key()?.cmp(&other.order_key()?))
    }

    /// Equality: the same instant (zoned), the same value otherwise; a duration equals one
    /// with the same months, days and seconds.
    pub fn equals(&self, other: &Temporal) -> bool {
        match (self, other) {
            (Temporal::Duration(a), Temporal::Duration(b)) => a == b,
            _ => self.order(other) == Some(Ordering::Equal),
        }
    }

    /// A key that sorts values of one kind as ORDER BY does (zoned values by instant, then
    /// offset), for the mixed-kind encoding; durations by months, days, nanoseconds.
    pub fn sort_key(&self) -> (i128, i128, i128) {
        match self {
            Temporal::Duration(d) => (d.months as i128, d.days as i128, d.nanos),
            t => (
                t.order_key().unwrap_or(0),
                t.zone().map_or(0, |(o, _)| o as i128),
                0,
            ),
        }
    }

    /// A component (`d.year`, `t.timezone`, `dur.minutesOfHour`); `None` when the kind has no
    /// such component.
    pub fn component(&self, key: &str) -> Option<super::value::Value> {
        use super::value::Value;
        if let Temporal::Duration(d) = self {
            return d.component(key).map(Value::Int);
        }
        let kind = self.kind();
        let key: std::borrow::Cow<str> = if key.bytes().any(|b| b.is_ascii_uppercase()) {
            key.to_ascii_lowercase().into()
        } else {
            key.into()
        };
        if kind.has_date() {
            let d = self.date()?;
            let iso = || d.iso_week();
            let v = match &*key {
                "year" => Some(d.year() as i64),
                "quarter" => Some(d.month0() as i64 / 3 + 1),
                "month" => Some(d.month() as i64),
                "week" => Some(iso().week() as i64),
                "weekyear" => Some(iso().year() as i64),
                "day" => Some(d.day() as i64),
                "ordinalday" => Some(d.ordinal() as i64),
                "dayofweek" | "weekday" => Some(d.weekday().number_from_monday() as i64),
                "dayofquarter" => Some(day_of_quarter(d)),
                _ => None,
            };
            if let Some(v) = v {
                return Some(Value::Int(v));
            }
        }
        if kind.has_time() {
            let t = self.time()?;
            let ns = t.nanosecond() as i64;
            let v = match &*key {
                "hour" => Some(t.hour() as i64),
                "minute" => Some(t.minute() as i64),
                "second" => Some(t.second() as i64),
                "millisecond" => Some(ns / 1_000_000),
                "microsecond" => Some(ns / 1_000),
                "nanosecond" => Some(ns),
                _ => None,
            };
            if let Some(v) = v {
                return Some(Value::Int(v));
            }
        }
        if kind.has_zone() {
            let (offset, zone) = self.zone()?;
            match &*key {
                "timezone" => {
                    return Some(Value::Str(
                        zone.map_or_else(|| fmt_offset(offset, false), str::to_string),
                    ))
                }
                "offset" => return Some(Value::Str(fmt_offset(offset, false))),
                "offsetminutes" => return Some(Value::Int(offset as i64 / 60)),
                "offsetseconds" => return Some(Value::Int(offset as i64)),
                _ => {}
            }
        }
        if let Temporal::DateTime(dt, o, _) = self {
            let nanos = Self::epoch_nanos(dt, *o);
            match &*key {
                "epochseconds" => {
                    return Some(Value::Int(nanos.div_euclid(NANOS_PER_SECOND) as i64))
                }
                "epochmillis" => return Some(Value::Int(nanos.div_euclid(1_000_000) as i64)),
                _ => {}
            }
        }
        None
    }
}

fn day_of_quarter(d: NaiveDate) -> i64 {
    let first = NaiveDate::from_ymd_opt(d.year(), d.month0() / 3 * 3 + 1, 1).expect("valid");
    (d - first).num_days() + 1
}

impl Duration {
    pub fn new(months: i64, days: i64, nanos: i128) -> Duration {
        Duration {
            months,
            days,
            nanos,
        }
    }

    /// Whole seconds (rounded down) and the nanoseconds of the second (0..1e9).
    pub fn seconds_and_nanos(&self) -> (i128, i128) {
        (
            self.nanos.div_euclid(NANOS_PER_SECOND),
            self.nanos.rem_euclid(NANOS_PER_SECOND),
        )
    }

    /// A component; `None` for an unknown one or one past the 64-bit range.
    fn component(&self, key: &str) -> Option<i64> {
        let n = self.nanos;
        let (s, ns) = (
            n.div_euclid(NANOS_PER_SECOND),
            n.rem_euclid(NANOS_PER_SECOND),
        );
        let (m, d) = (self.months as i128, self.days as i128);
        let v: i128 = match key.to_ascii_lowercase().as_str() {
            "years" => m / 12,
            "quarters" => m / 3,
            "months" => m,
            "monthsofyear" => m % 12,
            "monthsofquarter" => m % 3,
            "quartersofyear" => (m / 3) % 4,
            "weeks" => d / 7,
            "days" => d,
            "daysofweek" => d % 7,
            "hours" => s / 3600,
            "minutes" => s / 60,
            "seconds" => s,
            "minutesofhour" => (s / 60) % 60,
            "secondsofminute" => s % 60,
            "milliseconds" => s * 1000 + ns / 1_000_000,
            "microseconds" => s * 1_000_000 + ns / 1000,
            "nanoseconds" => n,
            "millisecondsofsecond" => ns / 1_000_000,
            "microsecondsofsecond" => ns / 1000,
            "nanosecondsofsecond" => ns,
            _ => return None,
        };
        i64::try_from(v).ok()
    }
}

/// `2015-07-21`; years past 9999 signed, as ISO 8601 writes them.
fn fmt_date(d: &NaiveDate) -> String {
    let y = d.year();
    let year = if y > 9999 {
        format!("+{y}")
    } else if y < 0 {
        format!("-{:04}", -(y as i64))
    } else {
        format!("{y:04}")
    };
    format!("{year}-{:02}-{:02}", d.month(), d.day())
}

/// `12:31`, `12:31:14`, `12:31:14.645`, `.645876`, `.645876123`: seconds when not zero, the
/// fraction in groups of three digits.
fn fmt_time(t: &NaiveTime) -> String {
    let mut s = format!("{:02}:{:02}", t.hour(), t.minute());
    let ns = t.nanosecond() % 1_000_000_000;
    let sec = t.second() + t.nanosecond() / 1_000_000_000;
    if sec != 0 || ns != 0 {
        s += &format!(":{sec:02}");
    }
    if ns != 0 {
        if ns.is_multiple_of(1_000_000) {
            s += &format!(".{:03}", ns / 1_000_000);
        } else if ns.is_multiple_of(1000) {
            s += &format!(".{:06}", ns / 1000);
        } else {
            s += &format!(".{ns:09}");
        }
    }
    s
}

/// `Z` (when `z_for_zero`) or `+01:00`, `-00:30`, `+00:53:28`.
pub fn fmt_offset(secs: i32, z_for_zero: bool) -> String {
    if secs == 0 && z_for_zero {
        return "Z".into();
    }
    let sign = if secs < 0 { '-' } else { '+' };
    let a = secs.unsigned_abs();
    let mut s = format!("{sign}{:02}:{:02}", a / 3600, a % 3600 / 60);
    if !a.is_multiple_of(60) {
        s += &format!(":{:02}", a % 60);
    }
    s
}

impl std::fmt::Display for Duration {
    /// ISO 8601 as Neo4j writes it: `P1Y2M3DT4H5M6.5S`, each part signed, hours not folded
    /// into days, `PT0S` for zero.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let mut s = String::from("P");
        let (y, m) = (self.months / 12, self.months % 12);
        if y != 0 {
            s += &format!("{y}Y");
        }
        if m != 0 {
            s += &format!("{m}M");
        }
        if self.days != 0 {
            s += &format!("{}D", self.days);
        }
        let n = self.nanos;
        if n != 0 {
            s.push('T');
            let hours = n / (3600 * NANOS_PER_SECOND);
            let minutes = n % (3600 * NANOS_PER_SECOND) / (60 * NANOS_PER_SECOND);
            let rest = n % (60 * NANOS_PER_SECOND);
            if hours != 0 {
                s += &format!("{hours}H");
            }
            if minutes != 0 {
                s += &format!("{minutes}M");
            }
            if rest != 0 {
                let (whole, frac) = (rest / NANOS_PER_SECOND, (rest % NANOS_PER_SECOND).abs());
                if rest < 0 && whole == 0 {
                    s.push('-');
                }
                s += &whole.to_string();
                if frac != 0 {
                    let digits = format!("{frac:09}");
                    s += ".";
                    s += digits.trim_end_matches('0');
                }
                s.push('S');
            }
        }
        if s == "P" {
            s += "T0S";
        }
        f.write_str(&s)
    }
}

impl std::fmt::Display for Temporal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Temporal::Date(d) => f.write_str(&fmt_date(d)),
            Temporal::LocalTime(t) => f.write_str(&fmt_time(t)),
            Temporal::Time(t, o) => write!(f, "{}{}", fmt_time(t), fmt_offset(*o, true)),
            Temporal::LocalDateTime(dt) => {
                write!(f, "{}T{}", fmt_date(&dt.date()), fmt_time(&dt.time()))
            }
            Temporal::DateTime(dt, o, zone) => {
                write!(
                    f,
                    "{}T{}{}",
                    fmt_date(&dt.date()),
                    fmt_time(&dt.time()),
                    fmt_offset(*o, true)
                )?;
                match zone {
                    Some(z) => write!(f, "[{z}]"),
                    None => Ok(()),
                }
            }
            Temporal::Duration(d) => write!(f, "{d}"),
        }
    }
}

/// Arrow scalars of the temporal types as values (stored `Date32` / `Date64`, `Time32` /
/// `Time64`, `Timestamp` with or without a zone, `Interval` and `Duration` columns).
pub fn from_scalar(s: &datafusion::common::ScalarValue) -> Option<Temporal> {
    use datafusion::common::ScalarValue as S;
    let epoch = NaiveDate::from_ymd_opt(1970, 1, 1)?;
    let time = |ns: i64| {
        NaiveTime::from_num_seconds_from_midnight_opt(
            (ns / 1_000_000_000) as u32,
            (ns % 1_000_000_000) as u32,
        )
    };
    let stamp = |n: i128, tz: &Option<std::sync::Arc<str>>| -> Option<Temporal> {
        let secs = n.div_euclid(NANOS_PER_SECOND) as i64;
        let ns = n.rem_euclid(NANOS_PER_SECOND) as u32;
        let utc = chrono::DateTime::from_timestamp(secs, ns)?.naive_utc();
        match tz {
            None => Some(Temporal::LocalDateTime(utc)),
            Some(z) => build::zoned_from_utc(utc, z).ok(),
        }
    };
    Some(match s {
        S::Date32(Some(d)) => {
            Temporal::Date(epoch.checked_add_signed(chrono::TimeDelta::days(*d as i64))?)
        }
        S::Date64(Some(ms)) => Temporal::Date(
            epoch.checked_add_signed(chrono::TimeDelta::days(ms.div_euclid(86_400_000)))?,
        ),
        S::Time32Second(Some(x)) => Temporal::LocalTime(time(*x as i64 * 1_000_000_000)?),
        S::Time32Millisecond(Some(x)) => Temporal::LocalTime(time(*x as i64 * 1_000_000)?),
        S::Time64Microsecond(Some(x)) => Temporal::LocalTime(time(x * 1000)?),
        S::Time64Nanosecond(Some(x)) => Temporal::LocalTime(time(*x)?),
        S::TimestampSecond(Some(x), tz) => stamp(*x as i128 * NANOS_PER_SECOND, tz)?,
        S::TimestampMillisecond(Some(x), tz) => stamp(*x as i128 * 1_000_000, tz)?,
        S::TimestampMicrosecond(Some(x), tz) => stamp(*x as i128 * 1000, tz)?,
        S::TimestampNanosecond(Some(x), tz) => stamp(*x as i128, tz)?,
        S::IntervalMonthDayNano(Some(v)) => Temporal::Duration(Duration::new(
            v.months as i64,
            v.days as i64,
            v.nanoseconds as i128,
        )),
        S::IntervalDayTime(Some(v)) => Temporal::Duration(Duration::new(
            0,
            v.days as i64,
            v.milliseconds as i128 * 1_000_000,
        )),
        S::IntervalYearMonth(Some(m)) => Temporal::Duration(Duration::new(*m as i64, 0, 0)),
        S::DurationSecond(Some(x)) => {
            Temporal::Duration(Duration::new(0, 0, *x as i128 * NANOS_PER_SECOND))
        }
        S::DurationMillisecond(Some(x)) => {
            Temporal::Duration(Duration::new(0, 0, *x as i128 * 1_000_000))
        }
        S::DurationMicrosecond(Some(x)) => {
            Temporal::Duration(Duration::new(0, 0, *x as i128 * 1000))
        }
        S::DurationNanosecond(Some(x)) => Temporal::Duration(Duration::new(0, 0, *x as i128)),
        _ => return None,
    })
}

/// Whether an Arrow type holds temporal values.
pub fn is_temporal_type(t: &arrow::datatypes::DataType) -> bool {
    use arrow::datatypes::DataType as T;
    matches!(
        t,
        T::Date32
            | T::Date64
            | T::Time32(_)
            | T::Time64(_)
            | T::Timestamp(..)
            | T::Interval(_)
            | T::Duration(_)
    )
}

#[cfg(test)]
mod tests;
