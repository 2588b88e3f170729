//! Building temporal values: from a map of components (selecting from other temporal values,
//! overriding some of their components), from another temporal value, from a string
//! (`parse.rs`), and truncation to a unit.

use super::{parse, Duration, Kind, TResult, Temporal, NANOS_PER_SECOND};
use crate::functions::value::Value;
use chrono::{Datelike, NaiveDate, NaiveDateTime, NaiveTime, Offset, TimeZone, Timelike, Weekday};

/// A zone as given: a fixed offset, or a named zone whose offset depends on the date.
#[derive(Debug, Clone)]
pub(super) enum Zone {
    Offset(i32),
    Named(chrono_tz::Tz),
}

impl Zone {
    pub(super) fn parse(s: &str) -> TResult<Zone> {
        if let Some(o) = parse::offset(s) {
            return Ok(Zone::Offset(o));
        }
        s.parse::<chrono_tz::Tz>()
            .map(Zone::Named)
            .map_err(|_| format!("Invalid value for time zone: '{s}'"))
    }

    /// The offset of wall-clock time `local` here (a time in a gap moves forward, an
    /// ambiguous one takes the earlier offset) and the zone's name.
    pub(super) fn at_local(
        &self,
        local: NaiveDateTime,
    ) -> TResult<(NaiveDateTime, i32, Option<String>)> {
        Ok(match self {
            Zone::Offset(o) => (local, *o, None),
            Zone::Named(tz) => {
                let resolved = tz.from_local_datetime(&local).earliest().or_else(|| {
                    // In a gap (clocks moved forward): the same instant as an hour before,
                    // seen after the change.
                    let before = tz.from_local_datetime(&plus_secs(local, -3600).ok()?);
                    before
                        .earliest()
                        .and_then(|t| t.checked_add_signed(chrono::TimeDelta::hours(1)))
                        .map(|t| t.with_timezone(tz))
                });
                match resolved {
                    Some(t) => (
                        t.naive_local(),
                        t.offset().fix().local_minus_utc(),
                        Some(tz.name().to_string()),
                    ),
                    None => (local, 0, Some(tz.name().to_string())),
                }
            }
        })
    }

    /// The wall-clock time of UTC instant `utc` here, its offset and the zone's name.
    pub(super) fn at_utc(
        &self,
        utc: NaiveDateTime,
    ) -> TResult<(NaiveDateTime, i32, Option<String>)> {
        Ok(match self {
            Zone::Offset(o) => (plus_secs(utc, *o as i64)?, *o, None),
            Zone::Named(tz) => {
                let t = tz.from_utc_datetime(&utc);
                (
                    t.naive_local(),
                    t.offset().fix().local_minus_utc(),
                    Some(tz.name().to_string()),
                )
            }
        })
    }
}

/// `t` moved by `secs` seconds; an error past the supported range (years ±262,143).
pub(super) fn plus_secs(t: NaiveDateTime, secs: i64) -> TResult<NaiveDateTime> {
    t.checked_add_signed(chrono::TimeDelta::seconds(secs))
        .ok_or_else(|| "datetime out of range".into())
}

/// `d` moved by `days` days; an error past the supported range.
pub(super) fn plus_days(d: NaiveDate, days: i64) -> TResult<NaiveDate> {
    d.checked_add_signed(chrono::TimeDelta::days(days))
        .ok_or_else(|| "date out of range".into())
}

/// The datetime at UTC instant `utc` in zone `zone` (an Arrow timestamp's zone).
pub(super) fn zoned_from_utc(utc: NaiveDateTime, zone: &str) -> TResult<Temporal> {
    // Arrow's way of saying "an instant" is the zone UTC: a datetime at offset zero.
    let z = match zone {
        "UTC" | "Etc/UTC" | "utc" => Zone::Offset(0),
        z => Zone::parse(z)?,
    };
    let (local, o, name) = z.at_utc(utc)?;
    Ok(Temporal::DateTime(local, o, name))
}

/// The value `kind(v)` builds: from a string, a map of components, or another temporal value;
/// `None` for null.
pub fn construct(kind: Kind, v: &Value) -> TResult<Option<Temporal>> {
    Ok(Some(match v {
        Value::Null => return Ok(None),
        Value::Str(s) => parse::parse(kind, s)?,
        Value::Map(entries) => from_map(kind, entries, None, false)?,
        Value::Temporal(t) => {
            let key = match kind {
                Kind::Duration => {
                    return match t {
                        Temporal::Duration(_) => Ok(Some(t.clone())),
                        _ => Err(format!("cannot make a Duration of a {}", t.kind().name())),
                    }
                }
                Kind::Date => "date",
                Kind::LocalTime | Kind::Time => "time",
                Kind::LocalDateTime | Kind::DateTime => "datetime",
            };
            from_map(kind, &[(key.to_string(), v.clone())], None, false)?
        }
        other => {
            return Err(format!(
                "{}() expects a string, a map or a temporal value, got {other}",
                kind.name().to_lowercase()
            ))
        }
    }))
}

/// A map's entries by lower-case key.
struct Fields<'a> {
    entries: &'a [(String, Value)],
}

impl Fields<'_> {
    fn get(&self, key: &str) -> Option<&Value> {
        self.entries
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(key))
            .map(|(_, v)| v)
            .filter(|v| !matches!(v, Value::Null))
    }

    fn has(&self, key: &str) -> bool {
        self.get(key).is_some()
    }

    fn int(&self, key: &str) -> TResult<Option<i64>> {
        match self.get(key) {
            None => Ok(None),
            Some(Value::Int(i)) => Ok(Some(*i)),
            Some(Value::Float(x)) if x.fract() == 0.0 => Ok(Some(*x as i64)),
            Some(other) => Err(format!("Invalid value for {key}: {other}")),
        }
    }

    fn temporal(&self, key: &str) -> TResult<Option<&Temporal>> {
        match self.get(key) {
            None => Ok(None),
            Some(Value::Temporal(t)) => Ok(Some(t)),
            Some(other) => Err(format!("{key} must be a temporal value, got {other}")),
        }
    }
}

fn in_range(what: &str, v: i64, lo: i64, hi: i64) -> TResult<u32> {
    if (lo..=hi).contains(&v) {
        Ok(v as u32)
    } else {
        Err(format!(
            "Invalid value for {what} (valid values {lo} - {hi}): {v}"
        ))
    }
}

fn year_of(v: i64) -> TResult<i32> {
    i32::try_from(v)
        .ok()
        .filter(|y| (-262_143..=262_142).contains(y))
        .ok_or_else(|| format!("Invalid value for year: {v}"))
}

/// The Monday of ISO week 1 of `week_year`.
fn week_one(week_year: i32) -> TResult<NaiveDate> {
    NaiveDate::from_isoywd_opt(week_year, 1, Weekday::Mon)
        .ok_or_else(|| format!("Invalid value for week year: {week_year}"))
}

fn date_from_week(year: i32, week: i64, dow: i64) -> TResult<NaiveDate> {
    let last = NaiveDate::from_ymd_opt(year, 12, 28)
        .map(|d| d.iso_week().week() as i64)
        .unwrap_or(52);
    let week = in_range("week", week, 1, last)?;
    let dow = in_range("dayOfWeek", dow, 1, 7)?;
    plus_days(week_one(year)?, (week as i64 - 1) * 7 + dow as i64 - 1)
}

/// The date a map gives, its components over those of `base`.
fn select_date(f: &Fields<'_>, base: Option<NaiveDate>) -> TResult<NaiveDate> {
    let year = match (f.int("year")?, base) {
        (Some(y), _) => Some(year_of(y)?),
        (None, _) => None,
    };
    if f.has("week") || (f.has("dayOfWeek") && !f.has("month") && !f.has("day")) {
        let wy = year
            .or(base.map(|b| b.iso_week().year()))
            .ok_or("year is required")?;
        let week = f
            .int("week")?
            .or(base.map(|b| b.iso_week().week() as i64))
            .unwrap_or(1);
        let dow = f
            .int("dayOfWeek")?
            .or(base.map(|b| b.weekday().number_from_monday() as i64))
            .unwrap_or(1);
        return date_from_week(wy, week, dow);
    }
    let y = year.or(base.map(|b| b.year())).ok_or("year is required")?;
    if f.has("quarter") || f.has("dayOfQuarter") {
        let q = f
            .int("quarter")?
            .or(base.map(|b| b.month0() as i64 / 3 + 1))
            .unwrap_or(1);
        let q = in_range("quarter", q, 1, 4)?;
        let first = NaiveDate::from_ymd_opt(y, (q - 1) * 3 + 1, 1).ok_or("invalid date")?;
        let doq = f
            .int("dayOfQuarter")?
            .or(base.map(super::day_of_quarter))
            .unwrap_or(1);
        let next = first
            .checked_add_months(chrono::Months::new(3))
            .ok_or("invalid date")?;
        let len = (next - first).num_days();
        let doq = in_range("dayOfQuarter", doq, 1, len)?;
        return plus_days(first, doq as i64 - 1);
    }
    if f.has("ordinalDay") {
        let od = f.int("ordinalDay")?.unwrap_or(1);
        let len = if NaiveDate::from_ymd_opt(y, 2, 29).is_some() {
            366
        } else {
            365
        };
        let od = in_range("ordinalDay", od, 1, len)?;
        return NaiveDate::from_yo_opt(y, od).ok_or_else(|| "invalid date".into());
    }
    let m = f
        .int("month")?
        .or(base.map(|b| b.month() as i64))
        .unwrap_or(1);
    let m = in_range("month", m, 1, 12)?;
    let d = f.int("day")?.or(base.map(|b| b.day() as i64)).unwrap_or(1);
    let d = in_range("day", d, 1, 31)?;
    NaiveDate::from_ymd_opt(y, m, d).ok_or_else(|| format!("Invalid date: {y}-{m:02}-{d:02}"))
}

/// The time of day a map gives, its components over those of `base`. With `add_subsecond`
/// the sub-second components add to `base`'s fraction (truncation: `{nanosecond: 2}` on a
/// time truncated to microseconds).
fn select_time(f: &Fields<'_>, base: Option<NaiveTime>, add_subsecond: bool) -> TResult<NaiveTime> {
    let h = f
        .int("hour")?
        .or(base.map(|b| b.hour() as i64))
        .unwrap_or(0);
    let h = in_range("hour", h, 0, 23)?;
    let m = f
        .int("minute")?
        .or(base.map(|b| b.minute() as i64))
        .unwrap_or(0);
    let m = in_range("minute", m, 0, 59)?;
    let s = f
        .int("second")?
        .or(base.map(|b| b.second() as i64))
        .unwrap_or(0);
    let s = in_range("second", s, 0, 59)?;
    let (ms, us, ns) = (
        f.int("millisecond")?,
        f.int("microsecond")?,
        f.int("nanosecond")?,
    );
    let base_ns = base.map_or(0, |b| b.nanosecond() as i64);
    let sub = if ms.is_none() && us.is_none() && ns.is_none() {
        base_ns
    } else {
        let ms = in_range("millisecond", ms.unwrap_or(0), 0, 999)? as i64;
        let us_max = if f.has("millisecond") { 999 } else { 999_999 };
        let us = in_range("microsecond", us.unwrap_or(0), 0, us_max)? as i64;
        let ns_max = if f.has("millisecond") || f.has("microsecond") {
            999
        } else {
            999_999_999
        };
        let ns = in_range("nanosecond", ns.unwrap_or(0), 0, ns_max)? as i64;
        ms * 1_000_000 + us * 1000 + ns + if add_subsecond { base_ns } else { 0 }
    };
    NaiveTime::from_hms_nano_opt(h, m, s, (sub % 1_000_000_000) as u32)
        .ok_or_else(|| "invalid time".into())
}

/// The value of kind `kind` a map of components gives. `over`: a value whose components the
/// map overrides (truncation); `add_subsecond` as for [`select_time`].
fn from_map(
    kind: Kind,
    entries: &[(String, Value)],
    over: Option<&Temporal>,
    add_subsecond: bool,
) -> TResult<Temporal> {
    let f = Fields { entries };
    if kind == Kind::Duration {
        return duration_from_map(&f).map(Temporal::Duration);
    }
    check_fields(entries)?;
    let zone_given = match f.get("timezone") {
        Some(Value::Str(s)) => Some(Zone::parse(s)?),
        Some(other) => return Err(format!("timezone must be a string, got {other}")),
        None => None,
    };
    // Epoch forms: an instant.
    if f.has("epochSeconds") || f.has("epochMillis") {
        return from_epoch(kind, &f, zone_given.unwrap_or(Zone::Offset(0)));
    }
    // What the map selects from: `datetime`, else `date` and `time`, else `over`.
    let whole = f.temporal("datetime")?.or(over);
    let date_src = f.temporal("date")?.or(whole);
    let time_src = f.temporal("time")?.or(whole);
    if let Some(t) = f.temporal("date")? {
        if t.date().is_none() {
            return Err(format!("cannot select a date from a {}", t.kind().name()));
        }
    }
    if let Some(t) = f.temporal("time")? {
        if t.time().is_none() {
            return Err(format!("cannot select a time from a {}", t.kind().name()));
        }
    }
    // The zone the selected time is in, if it has one.
    let src_zone = time_src.and_then(|t| t.zone()).map(|(o, name)| match name {
        Some(n) => n
            .parse::<chrono_tz::Tz>()
            .map_or(Zone::Offset(o), Zone::Named),
        None => Zone::Offset(o),
    });
    let date = if kind.has_date() {
        Some(select_date(&f, date_src.and_then(|t| t.date()))?)
    } else {
        None
    };
    let time = if kind.has_time() {
        Some(select_time(
            &f,
            time_src.and_then(|t| t.time()),
            add_subsecond,
        )?)
    } else {
        None
    };
    Ok(match kind {
        Kind::Date => Temporal::Date(date.expect("a date kind")),
        Kind::LocalTime => Temporal::LocalTime(time.expect("a time kind")),
        Kind::LocalDateTime => {
            Temporal::LocalDateTime(date.expect("date").and_time(time.expect("time")))
        }
        Kind::Time => {
            let t = time.expect("a time kind");
            let (t, o) = match (src_zone, zone_given) {
                // A zoned time moved into another zone keeps its instant.
                (Some(from), Some(to)) => {
                    let day = NaiveDate::from_ymd_opt(1970, 1, 1).expect("valid");
                    let (local, from_o, _) = from.at_local(today().and_time(t))?;
                    let utc = plus_secs(local, -(from_o as i64))?;
                    let (l, o, _) = to.at_utc(day.and_time(utc.time()))?;
                    (l.time(), o)
                }
                (Some(z), None) | (None, Some(z)) => {
                    let (_, o, _) = z.at_local(today().and_time(t))?;
                    (t, o)
                }
                (None, None) => (t, 0),
            };
            Temporal::Time(t, o)
        }
        Kind::DateTime => {
            let local = date.expect("date").and_time(time.expect("time"));
            match (src_zone, zone_given) {
                (Some(from), Some(to)) => {
                    let (l, from_o, _) = from.at_local(local)?;
                    let (l, o, name) = to.at_utc(plus_secs(l, -(from_o as i64))?)?;
                    Temporal::DateTime(l, o, name)
                }
                (Some(z), None) | (None, Some(z)) => {
                    let (l, o, name) = z.at_local(local)?;
                    Temporal::DateTime(l, o, name)
                }
                (None, None) => Temporal::DateTime(local, 0, None),
            }
        }
        Kind::Duration => unreachable!("handled above"),
    })
}

/// An error naming the first entry that is no temporal component.
fn check_fields(entries: &[(String, Value)]) -> TResult<()> {
    let known = [
        "year",
        "month",
        "day",
        "week",
        "dayofweek",
        "quarter",
        "dayofquarter",
        "ordinalday",
        "hour",
        "minute",
        "second",
        "millisecond",
        "microsecond",
        "nanosecond",
        "timezone",
        "date",
        "time",
        "datetime",
        "epochseconds",
        "epochmillis",
    ];
    if let Some((k, _)) = entries
        .iter()
        .find(|(k, _)| !known.iter().any(|n| n.eq_ignore_ascii_case(k)))
    {
        return Err(format!("No such field: {k}"));
    }
    Ok(())
}

/// The instant `epochSeconds` / `epochMillis` (plus sub-second components) name, in `zone`,
/// as a value of `kind`.
fn from_epoch(kind: Kind, f: &Fields<'_>, zone: Zone) -> TResult<Temporal> {
    let nanos = match (f.int("epochSeconds")?, f.int("epochMillis")?) {
        (Some(s), _) => s as i128 * NANOS_PER_SECOND,
        (None, Some(ms)) => ms as i128 * 1_000_000,
        _ => 0,
    } + f.int("millisecond")?.unwrap_or(0) as i128 * 1_000_000
        + f.int("microsecond")?.unwrap_or(0) as i128 * 1000
        + f.int("nanosecond")?.unwrap_or(0) as i128;
    let utc = chrono::DateTime::from_timestamp(
        nanos.div_euclid(NANOS_PER_SECOND) as i64,
        nanos.rem_euclid(NANOS_PER_SECOND) as u32,
    )
    .ok_or("epoch value out of range")?
    .naive_utc();
    let (local, o, name) = zone.at_utc(utc)?;
    Ok(match kind {
        Kind::DateTime => Temporal::DateTime(local, o, name),
        Kind::LocalDateTime => Temporal::LocalDateTime(local),
        Kind::Date => Temporal::Date(local.date()),
        Kind::LocalTime => Temporal::LocalTime(local.time()),
        _ => Temporal::Time(local.time(), o),
    })
}

/// Today's date (UTC): the date a named zone's offset is taken at for a time of day.
pub(super) fn today() -> NaiveDate {
    let secs = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs() as i64);
    chrono::DateTime::from_timestamp(secs, 0)
        .map(|t| t.date_naive())
        .unwrap_or_default()
}

/// Average lengths openCypher uses to spread fractions of months and days.
const SECONDS_PER_DAY: f64 = 86_400.0;
const DAYS_PER_MONTH: f64 = 30.436875;

/// A number of a duration component (`years: 1.5`).
fn number(v: &Value, key: &str) -> TResult<f64> {
    match v {
        Value::Int(i) => Ok(*i as f64),
        Value::Float(x) if x.is_finite() => Ok(*x),
        other => Err(format!("Invalid value for {key}: {other}")),
    }
}

/// A duration from months, days, seconds and nanoseconds that may have fractions: a
/// fraction of a month moves into days (30.436875 days a month), of a day into seconds, of
/// a second into nanoseconds, each whole part truncated (the order and the rounding of the
/// reference implementation, so fractions come out as they do there).
pub(super) fn approximate(months: f64, days: f64, seconds: f64, nanos: f64) -> TResult<Duration> {
    const NANOS: f64 = 1e9;
    let avg_month_nanos = DAYS_PER_MONTH * SECONDS_PER_DAY * NANOS;
    let whole = |x: f64| -> TResult<i64> {
        if x.is_finite() && x.abs() < 9.2e18 {
            Ok(x.trunc() as i64)
        } else {
            Err("duration out of range".into())
        }
    };
    let m = whole(months)?;
    let days =
        days + (avg_month_nanos * months - avg_month_nanos * m as f64) / (NANOS * SECONDS_PER_DAY);
    let d = whole(days)?;
    let seconds =
        seconds + (NANOS * SECONDS_PER_DAY * days - NANOS * SECONDS_PER_DAY * d as f64) / NANOS;
    let s = whole(seconds)?;
    let nanos = nanos + (NANOS * seconds - NANOS * s as f64);
    let n = whole(nanos)?;
    Ok(Duration::new(
        m,
        d,
        s as i128 * NANOS_PER_SECOND + n as i128,
    ))
}

fn duration_from_map(f: &Fields<'_>) -> TResult<Duration> {
    const UNITS: [&str; 11] = [
        "years",
        "quarters",
        "months",
        "weeks",
        "days",
        "hours",
        "minutes",
        "seconds",
        "milliseconds",
        "microseconds",
        "nanoseconds",
    ];
    if let Some((k, _)) = f
        .entries
        .iter()
        .find(|(k, _)| !UNITS.contains(&k.to_ascii_lowercase().as_str()))
    {
        return Err(format!("No such field: {k}"));
    }
    let exact = f
        .entries
        .iter()
        .all(|(_, v)| matches!(v, Value::Int(_) | Value::Null));
    if exact {
        let g = |k: &str| f.int(k).map(|v| v.unwrap_or(0) as i128);
        let months = g("years")? * 12 + g("quarters")? * 3 + g("months")?;
        let days = g("weeks")? * 7 + g("days")?;
        let nanos = (g("hours")? * 3600 + g("minutes")? * 60 + g("seconds")?) * NANOS_PER_SECOND
            + g("milliseconds")? * 1_000_000
            + g("microseconds")? * 1000
            + g("nanoseconds")?;
        let months = i64::try_from(months).map_err(|_| "duration out of range")?;
        let days = i64::try_from(days).map_err(|_| "duration out of range")?;
        return Ok(Duration::new(months, days, nanos));
    }
    let g = |k: &str| f.get(k).map_or(Ok(0.0), |v| number(v, k));
    approximate(
        g("years")? * 12.0 + g("quarters")? * 3.0 + g("months")?,
        g("weeks")? * 7.0 + g("days")?,
        g("hours")? * 3600.0 + g("minutes")? * 60.0 + g("seconds")?,
        g("milliseconds")? * 1e6 + g("microseconds")? * 1e3 + g("nanoseconds")?,
    )
}

/// `kind.truncate(unit, value, overrides)`: `value` truncated to `unit` as a `kind`, then
/// the components of `overrides` set.
pub fn truncate(
    kind: Kind,
    unit: &str,
    value: &Temporal,
    overrides: &[(String, Value)],
) -> TResult<Temporal> {
    if kind == Kind::Duration || value.kind() == Kind::Duration {
        return Err("cannot truncate a duration".into());
    }
    let unit_l = unit.to_ascii_lowercase();
    let date_unit = matches!(
        unit_l.as_str(),
        "millennium"
            | "century"
            | "decade"
            | "year"
            | "weekyear"
            | "quarter"
            | "month"
            | "week"
            | "day"
    );
    let time_unit = matches!(
        unit_l.as_str(),
        "hour" | "minute" | "second" | "millisecond" | "microsecond"
    );
    if !date_unit && !time_unit {
        return Err(format!("Unsupported unit: {unit}"));
    }
    if date_unit && !kind.has_date() && unit_l != "day" {
        return Err(format!("cannot truncate a {} to {unit}", kind.name()));
    }
    let f = Fields { entries: overrides };
    let date = value.date();
    let time = value.time().unwrap_or(NaiveTime::MIN);
    if kind.has_date() && date.is_none() {
        return Err(format!(
            "cannot truncate a {} to a date",
            value.kind().name()
        ));
    }
    let date = match (date, unit_l.as_str()) {
        (Some(d), "millennium") => ymd(d.year().div_euclid(1000) * 1000, 1, 1),
        (Some(d), "century") => ymd(d.year().div_euclid(100) * 100, 1, 1),
        (Some(d), "decade") => ymd(d.year().div_euclid(10) * 10, 1, 1),
        (Some(d), "year") => ymd(d.year(), 1, 1),
        (Some(d), "weekyear") => week_one(d.iso_week().year())?,
        (Some(d), "quarter") => ymd(d.year(), d.month0() / 3 * 3 + 1, 1),
        (Some(d), "month") => ymd(d.year(), d.month(), 1),
        (Some(d), "week") => plus_days(d, -(d.weekday().num_days_from_monday() as i64))?,
        (Some(d), _) => d,
        (None, _) => NaiveDate::MIN,
    };
    let ns = time.nanosecond() as i64;
    let time = match unit_l.as_str() {
        "hour" => hms(time.hour(), 0, 0, 0),
        "minute" => hms(time.hour(), time.minute(), 0, 0),
        "second" => hms(time.hour(), time.minute(), time.second(), 0),
        "millisecond" => hms(
            time.hour(),
            time.minute(),
            time.second(),
            ns / 1_000_000 * 1_000_000,
        ),
        "microsecond" => hms(time.hour(), time.minute(), time.second(), ns / 1000 * 1000),
        _ => NaiveTime::MIN,
    };
    // A zone given replaces the value's (the truncated wall-clock time is kept).
    let zone_given = f.has("timezone");
    let base = match value {
        Temporal::DateTime(_, o, z) if kind.has_zone() && !zone_given => {
            Temporal::DateTime(date.and_time(time), *o, z.clone())
        }
        Temporal::Time(_, o) if kind.has_zone() && !zone_given => Temporal::Time(time, *o),
        _ => Temporal::LocalDateTime(date.and_time(time)),
    };
    // A truncated value in a named zone takes that zone's offset at the new time.
    let base = match base {
        Temporal::DateTime(l, o, Some(name)) => match name.parse::<chrono_tz::Tz>() {
            Ok(tz) => {
                let (l, o, name) = Zone::Named(tz).at_local(l)?;
                Temporal::DateTime(l, o, name)
            }
            Err(_) => Temporal::DateTime(l, o, Some(name)),
        },
        b => b,
    };
    from_map(kind, overrides, Some(&base), true)
}

fn ymd(y: i32, m: u32, d: u32) -> NaiveDate {
    NaiveDate::from_ymd_opt(y, m, d).unwrap_or(NaiveDate::MIN)
}

fn hms(h: u32, m: u32, s: u32, ns: i64) -> NaiveTime {
    NaiveTime::from_hms_nano_opt(h, m, s, ns as u32).unwrap_or(NaiveTime::MIN)
}
