//! Arithmetic with durations (a temporal value plus or minus a duration, durations added,
//! scaled) and the duration between two temporal values.

use super::build::{approximate, plus_secs, Zone};
use super::{Duration, TResult, Temporal, NANOS_PER_SECOND};
use chrono::{Months, NaiveDate, NaiveDateTime, NaiveTime, TimeDelta, Timelike};

const NANOS_PER_DAY: i128 = 86_400 * NANOS_PER_SECOND;

fn add_months(d: NaiveDate, months: i64) -> TResult<NaiveDate> {
    let m = Months::new(
        months
            .unsigned_abs()
            .try_into()
            .map_err(|_| "date out of range")?,
    );
    if months >= 0 {
        d.checked_add_months(m)
    } else {
        d.checked_sub_months(m)
    }
    .ok_or_else(|| "date out of range".into())
}

fn add_nanos(dt: NaiveDateTime, nanos: i128) -> TResult<NaiveDateTime> {
    let secs = i64::try_from(nanos.div_euclid(NANOS_PER_SECOND)).map_err(|_| "out of range")?;
    let ns = nanos.rem_euclid(NANOS_PER_SECOND) as i64;
    dt.checked_add_signed(TimeDelta::seconds(secs))
        .and_then(|t| t.checked_add_signed(TimeDelta::nanoseconds(ns)))
        .ok_or_else(|| "datetime out of range".into())
}

/// A date-time moved by a duration: months (clamped to the month's last day), then days,
/// then the seconds.
fn shift(dt: NaiveDateTime, d: &Duration) -> TResult<NaiveDateTime> {
    let date = add_months(dt.date(), d.months)?;
    let date = date
        .checked_add_signed(TimeDelta::days(d.days))
        .ok_or("date out of range")?;
    add_nanos(date.and_time(dt.time()), d.nanos)
}

fn time_plus(t: NaiveTime, nanos: i128) -> NaiveTime {
    let day = t.num_seconds_from_midnight() as i128 * NANOS_PER_SECOND + t.nanosecond() as i128;
    let n = (day + nanos).rem_euclid(NANOS_PER_DAY);
    NaiveTime::from_num_seconds_from_midnight_opt(
        (n / NANOS_PER_SECOND) as u32,
        (n % NANOS_PER_SECOND) as u32,
    )
    .unwrap_or(NaiveTime::MIN)
}

/// `t + d`; `None` when the kinds don't add.
pub fn add(a: &Temporal, b: &Temporal) -> Option<TResult<Temporal>> {
    Some(match (a, b) {
        (Temporal::Duration(x), Temporal::Duration(y)) => Ok(Temporal::Duration(Duration::new(
            x.months.checked_add(y.months)?,
            x.days.checked_add(y.days)?,
            x.nanos + y.nanos,
        ))),
        (Temporal::Duration(_), t) => return add(t, a),
        (t, Temporal::Duration(d)) => plus(t, d),
        _ => return None,
    })
}

fn plus(t: &Temporal, d: &Duration) -> TResult<Temporal> {
    Ok(match t {
        // A date moves by whole days: the seconds' whole days count, the rest not.
        Temporal::Date(x) => {
            let days = d.days as i128 + d.nanos / NANOS_PER_DAY;
            let moved = shift(
                x.and_time(NaiveTime::MIN),
                &Duration::new(d.months, 0, days * NANOS_PER_DAY),
            )?;
            Temporal::Date(moved.date())
        }
        Temporal::LocalTime(x) => Temporal::LocalTime(time_plus(*x, d.nanos)),
        Temporal::Time(x, o) => Temporal::Time(time_plus(*x, d.nanos), *o),
        Temporal::LocalDateTime(x) => Temporal::LocalDateTime(shift(*x, d)?),
        Temporal::DateTime(x, o, zone) => {
            // Months and days on the wall clock, seconds on the instant.
            let local = shift(*x, &Duration::new(d.months, d.days, 0))?;
            let z = zone_of(*o, zone.as_deref());
            let (local, o, name) = z.at_local(local)?;
            let utc = add_nanos(plus_secs(local, -(o as i64))?, d.nanos)?;
            let (l, o, name2) = match &z {
                Zone::Named(_) => {
                    let (l, o, n) = z.at_utc(utc)?;
                    (l, o, n)
                }
                Zone::Offset(_) => (plus_secs(utc, o as i64)?, o, name),
            };
            Temporal::DateTime(l, o, name2)
        }
        Temporal::Duration(_) => unreachable!("handled by the caller"),
    })
}

fn zone_of(offset: i32, name: Option<&str>) -> Zone {
    match name.and_then(|n| n.parse::<chrono_tz::Tz>().ok()) {
        Some(tz) => Zone::Named(tz),
        None => Zone::Offset(offset),
    }
}

fn negate(d: &Duration) -> Duration {
    Duration::new(-d.months, -d.days, -d.nanos)
}

/// `a - b`: a temporal value minus a duration, or durations.
pub fn subtract(a: &Temporal, b: &Temporal) -> Option<TResult<Temporal>> {
    match b {
        Temporal::Duration(d) => add(a, &Temporal::Duration(negate(d))),
        _ => None,
    }
}

/// `d * x`: each component scaled, fractions spread as when building from a map.
pub fn multiply(d: &Duration, x: f64, exact: Option<i64>) -> TResult<Duration> {
    if let Some(k) = exact {
        return Ok(Duration::new(
            d.months.checked_mul(k).ok_or("duration out of range")?,
            d.days.checked_mul(k).ok_or("duration out of range")?,
            d.nanos * k as i128,
        ));
    }
    let (secs, nanos) = d.seconds_and_nanos();
    approximate(
        d.months as f64 * x,
        d.days as f64 * x,
        secs as f64 * x,
        nanos as f64 * x,
    )
}

/// `d / x`.
pub fn divide(d: &Duration, x: f64) -> TResult<Duration> {
    if x == 0.0 {
        return Err("/ by zero".into());
    }
    multiply(d, 1.0 / x, None)
}

/// What `duration.between`, `inMonths`, `inDays` and `inSeconds` measure.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BetweenUnit {
    All,
    Months,
    Days,
    Seconds,
}

/// The zone a value is in, if it has one.
fn zone_of_value(t: &Temporal) -> Option<Zone> {
    t.zone().map(|(o, name)| zone_of(o, name))
}

/// The duration from `a` to `b`. Each is completed with what only the other has (a date, a
/// zone); zoned values are compared as instants, seen at `a`'s offset.
pub fn between(a: &Temporal, b: &Temporal, unit: BetweenUnit) -> TResult<Option<Duration>> {
    if matches!(a, Temporal::Duration(_)) || matches!(b, Temporal::Duration(_)) {
        return Err("duration.between expects two temporal instants, got a duration".into());
    }
    let (za, zb) = (zone_of_value(a), zone_of_value(b));
    let (za, zb) = (za.clone().or(zb.clone()), zb.or(za));
    let (ta, tb) = (
        a.time().unwrap_or(NaiveTime::MIN),
        b.time().unwrap_or(NaiveTime::MIN),
    );
    let (Some(da), Some(db)) = (a.date().or(b.date()), b.date().or(a.date())) else {
        // Times of day only: their difference (in UTC when zoned).
        let utc = |t: NaiveTime, z: &Option<Zone>| {
            let o = match z {
                Some(Zone::Offset(o)) => *o,
                _ => 0,
            };
            t.num_seconds_from_midnight() as i128 * NANOS_PER_SECOND + t.nanosecond() as i128
                - o as i128 * NANOS_PER_SECOND
        };
        let n = utc(tb, &zb) - utc(ta, &za);
        return Ok(Some(match unit {
            BetweenUnit::Months | BetweenUnit::Days => Duration::default(),
            _ => Duration::new(0, 0, n),
        }));
    };
    let (mut la, mut lb) = (da.and_time(ta), db.and_time(tb));
    if let (Some(za), Some(zb)) = (&za, &zb) {
        let (l, oa, _) = za.at_local(la)?;
        let (m, ob, _) = zb.at_local(lb)?;
        la = l;
        lb = plus_secs(m, (oa - ob) as i64)?;
    }
    let total = |x: NaiveDateTime, y: NaiveDateTime| -> i128 {
        let d = y - x;
        d.num_seconds() as i128 * NANOS_PER_SECOND + d.subsec_nanos() as i128
    };
    let months = if matches!(unit, BetweenUnit::All | BetweenUnit::Months) {
        let mut m = lb.date().year_ce_months() - la.date().year_ce_months();
        let moved = |m: i64| -> TResult<NaiveDateTime> {
            Ok(add_months(la.date(), m)?.and_time(la.time()))
        };
        if m > 0 && moved(m)? > lb {
            m -= 1;
        } else if m < 0 && moved(m)? < lb {
            m += 1;
        }
        m
    } else {
        0
    };
    let from = add_months(la.date(), months)?.and_time(la.time());
    let rest = total(from, lb);
    Ok(Some(match unit {
        BetweenUnit::Months => Duration::new(months, 0, 0),
        BetweenUnit::Days => Duration::new(0, (rest / NANOS_PER_DAY) as i64, 0),
        BetweenUnit::Seconds => Duration::new(0, 0, total(la, lb)),
        BetweenUnit::All => {
            Duration::new(months, (rest / NANOS_PER_DAY) as i64, rest % NANOS_PER_DAY)
        }
    }))
}

trait CeMonths {
    fn year_ce_months(&self) -> i64;
}

impl CeMonths for NaiveDate {
    fn year_ce_months(&self) -> i64 {
        use chrono::Datelike;
        self.year() as i64 * 12 + self.month0() as i64
    }
}
