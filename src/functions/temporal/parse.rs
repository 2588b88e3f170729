//! Temporal values from ISO 8601 text: dates (calendar, week and ordinal forms, basic and
//! extended), times with fractions, offsets and `[Zone/Name]`s, and durations (`P1Y2M3DT4.5S`,
//! `P2.5W`, `P2012-02-02T14:37:21.545`).

use super::build::{approximate, today, Zone};
use super::{Duration, Kind, TResult, Temporal, NANOS_PER_SECOND};
use chrono::{NaiveDate, NaiveTime};

fn invalid(kind: Kind, s: &str) -> String {
    format!("Text cannot be parsed to a {}: '{s}'", kind.name())
}

/// `s` as a value of kind `kind`.
pub(super) fn parse(kind: Kind, s: &str) -> TResult<Temporal> {
    let t = s.trim();
    let bad = || invalid(kind, s);
    match kind {
        Kind::Duration => duration(t).ok_or_else(bad).map(Temporal::Duration),
        Kind::Date => date(t).ok_or_else(bad).map(Temporal::Date),
        Kind::LocalTime => {
            let (time, _) = time_and_zone(t).ok_or_else(bad)?;
            Ok(Temporal::LocalTime(time))
        }
        Kind::Time => {
            let (time, zone) = time_and_zone(t).ok_or_else(bad)?;
            let o = match zone {
                Some(z) => z.at_local(today().and_time(time)).map_err(|_| bad())?.1,
                None => 0,
            };
            Ok(Temporal::Time(time, o))
        }
        Kind::LocalDateTime | Kind::DateTime => {
            let (d, rest) = match t.find('T') {
                Some(i) => (&t[..i], Some(&t[i + 1..])),
                None => (t, None),
            };
            let d = date(d).ok_or_else(bad)?;
            let (time, zone) = match rest {
                Some(r) => time_and_zone(r).ok_or_else(bad)?,
                None => (NaiveTime::MIN, None),
            };
            let local = d.and_time(time);
            if kind == Kind::LocalDateTime {
                return Ok(Temporal::LocalDateTime(local));
            }
            Ok(match zone {
                Some(z) => {
                    let (l, o, name) = z.at_local(local).map_err(|_| bad())?;
                    Temporal::DateTime(l, o, name)
                }
                None => Temporal::DateTime(local, 0, None),
            })
        }
    }
}

/// Digits at the start of `s` (at most `max`): their value and the rest.
fn digits(s: &str, max: usize) -> Option<(i64, &str)> {
    let n = s.bytes().take(max).take_while(u8::is_ascii_digit).count();
    if n == 0 {
        return None;
    }
    Some((s[..n].parse().ok()?, &s[n..]))
}

/// Exactly `n` digits.
fn fixed(s: &str, n: usize) -> Option<(i64, &str)> {
    let (v, rest) = digits(s, n)?;
    (s.len() - rest.len() == n).then_some((v, rest))
}

fn date(s: &str) -> Option<NaiveDate> {
    // The year: four digits, or a sign and more.
    let (year, rest) = match s.as_bytes().first()? {
        b'+' | b'-' => {
            let neg = s.starts_with('-');
            let (y, r) = digits(&s[1..], 9)?;
            (if neg { -y } else { y }, r)
        }
        _ => fixed(s, 4)?,
    };
    let year = i32::try_from(year).ok()?;
    if rest.is_empty() {
        return NaiveDate::from_ymd_opt(year, 1, 1);
    }
    let (dash, rest) = match rest.strip_prefix('-') {
        Some(r) => (true, r),
        None => (false, rest),
    };
    if let Some(w) = rest.strip_prefix('W') {
        let (week, r) = fixed(w, 2)?;
        let r = if dash {
            r.strip_prefix('-').unwrap_or(r)
        } else {
            r
        };
        let dow = if r.is_empty() {
            1
        } else {
            fixed(r, 1).filter(|(_, x)| x.is_empty())?.0
        };
        let wd = chrono::Weekday::try_from((dow as u8).checked_sub(1)?).ok()?;
        return NaiveDate::from_isoywd_opt(year, week as u32, wd);
    }
    // Ordinal `2015-202` / `2015202`, calendar `2015-07-21` / `20150721`, `2015-07` / `201507`.
    let n = rest.bytes().take_while(u8::is_ascii_digit).count();
    if n == 3 && rest.len() == 3 {
        return NaiveDate::from_yo_opt(year, rest.parse().ok()?);
    }
    let (month, r) = fixed(rest, 2)?;
    if r.is_empty() {
        return NaiveDate::from_ymd_opt(year, month as u32, 1);
    }
    let r = if dash { r.strip_prefix('-')? } else { r };
    let (day, r) = fixed(r, 2)?;
    if !r.is_empty() {
        return None;
    }
    NaiveDate::from_ymd_opt(year, month as u32, day as u32)
}

/// Hours, then minutes and seconds if written, extended (`21:40:32`) or basic (`214032`),
/// and what follows them.
fn clock(s: &str) -> Option<((i64, i64, i64), &str)> {
    let (h, r) = fixed(s, 2)?;
    let colon = r.starts_with(':');
    let r = if colon { &r[1..] } else { r };
    let (m, r) = if r.is_empty() { (0, r) } else { fixed(r, 2)? };
    let r = if colon {
        r.strip_prefix(':').unwrap_or(r)
    } else {
        r
    };
    let (sec, r) = if r.is_empty() { (0, r) } else { fixed(r, 2)? };
    Some(((h, m, sec), r))
}

/// `21:40:32.142`, `214032`, `21:40`, `21`, then an optional offset and `[Zone]`.
fn time_and_zone(s: &str) -> Option<(NaiveTime, Option<Zone>)> {
    let end = s.find(['Z', '+', '-', '[']).unwrap_or(s.len());
    let (t, z) = s.split_at(end);
    let ((h, m, sec), r) = clock(t)?;
    let nanos = match r.as_bytes().first() {
        None => 0,
        Some(b'.' | b',') => {
            let frac = &r[1..];
            if frac.is_empty() || frac.len() > 9 || !frac.bytes().all(|b| b.is_ascii_digit()) {
                return None;
            }
            format!("{frac:0<9}").parse::<u32>().ok()?
        }
        _ => return None,
    };
    let time = NaiveTime::from_hms_nano_opt(h as u32, m as u32, sec as u32, nanos)?;
    if z.is_empty() {
        return Some((time, None));
    }
    let (off, name) = match z.find('[') {
        Some(i) => (&z[..i], Some(z[i + 1..].strip_suffix(']')?)),
        None => (z, None),
    };
    let zone = match name {
        Some(n) => Zone::parse(n).ok()?,
        None => Zone::Offset(offset(off)?),
    };
    Some((time, Some(zone)))
}

/// `Z`, `+01:00`, `+0100`, `+01`, `-08:30:15` as seconds east of UTC.
pub(super) fn offset(s: &str) -> Option<i32> {
    if s == "Z" {
        return Some(0);
    }
    let sign = match s.as_bytes().first()? {
        b'+' => 1,
        b'-' => -1,
        _ => return None,
    };
    let ((h, m, sec), r) = clock(&s[1..])?;
    if !r.is_empty() || h > 18 || m > 59 || sec > 59 {
        return None;
    }
    Some(sign * (h * 3600 + m * 60 + sec) as i32)
}

/// A number of a duration designator: its integer and fraction (as nanos) parts, exact.
fn decimal(s: &str) -> Option<(bool, i128, i128, usize)> {
    let neg = s.starts_with('-');
    let body = s.strip_prefix(['-', '+']).unwrap_or(s);
    let int_len = body.bytes().take_while(u8::is_ascii_digit).count();
    let mut used = s.len() - body.len() + int_len;
    let int: i128 = body[..int_len].parse().ok()?;
    let mut frac: i128 = 0;
    if let Some(rest) = body[int_len..].strip_prefix(['.', ',']) {
        let n = rest.bytes().take_while(u8::is_ascii_digit).count();
        if n == 0 || n > 9 {
            return None;
        }
        frac = format!("{:0<9}", &rest[..n]).parse().ok()?;
        used += 1 + n;
    }
    (int_len > 0).then_some((neg, int, frac, used))
}

fn duration(s: &str) -> Option<Duration> {
    let (neg, s) = match s.strip_prefix('-') {
        Some(r) => (true, r),
        None => (false, s),
    };
    let body = s.strip_prefix('P')?;
    let alt = body.len() > 4
        && body.as_bytes()[..4].iter().all(u8::is_ascii_digit)
        && body.as_bytes()[4] == b'-';
    let d = if alt {
        alternative(body)?
    } else {
        designators(body)?
    };
    Some(if neg {
        Duration::new(-d.months, -d.days, -d.nanos)
    } else {
        d
    })
}

/// `P2012-02-02T14:37:21.545`: years, months, days, hours, minutes, seconds.
fn alternative(s: &str) -> Option<Duration> {
    let (date_part, time_part) = match s.find('T') {
        Some(i) => (&s[..i], &s[i + 1..]),
        None => (s, ""),
    };
    let (y, r) = fixed(date_part, 4)?;
    let (m, r) = fixed(r.strip_prefix('-')?, 2)?;
    let (d, r) = fixed(r.strip_prefix('-')?, 2)?;
    if !r.is_empty() {
        return None;
    }
    let mut nanos = 0i128;
    if !time_part.is_empty() {
        let (t, _) = time_and_zone(time_part)?;
        use chrono::Timelike;
        nanos = t.num_seconds_from_midnight() as i128 * NANOS_PER_SECOND + t.nanosecond() as i128;
    }
    Some(Duration::new(y * 12 + m, d, nanos))
}

/// `P1Y2M3W4DT5H6M7.5S`: each designator once, in order; fractions on any of them.
fn designators(s: &str) -> Option<Duration> {
    let (date_part, time_part) = match s.find('T') {
        Some(i) => (&s[..i], Some(&s[i + 1..])),
        None => (s, None),
    };
    if date_part.is_empty() && time_part.is_none_or(str::is_empty) {
        return None;
    }
    // Exact sums where no fraction is written; fractions spread as in a map.
    let (mut months, mut days, mut secs, mut nanos) = (0f64, 0f64, 0f64, 0i128);
    let mut exact = (0i128, 0i128, 0i128);
    let mut fractional = false;
    let mut read = |part: &str, units: &[(u8, f64)], time: bool| -> Option<()> {
        let mut r = part;
        let mut last = 0usize;
        while !r.is_empty() {
            let (neg, int, frac, used) = decimal(r)?;
            let unit = *r.as_bytes().get(used)?;
            let k = units.iter().position(|(u, _)| *u == unit)?;
            if k < last {
                return None;
            }
            last = k + 1;
            let sign = if neg { -1 } else { 1 };
            let (_, scale) = units[k];
            if time && unit == b'S' {
                nanos += sign * (int * NANOS_PER_SECOND + frac);
            } else {
                let whole = sign * int;
                let value = sign as f64 * (int as f64 + frac as f64 / 1e9);
                if frac != 0 {
                    fractional = true;
                }
                match (time, unit) {
                    (false, b'Y') => exact.0 += whole * 12,
                    (false, b'M') => exact.0 += whole,
                    (false, b'W') => exact.1 += whole * 7,
                    (false, b'D') => exact.1 += whole,
                    (true, b'H') => exact.2 += whole * 3600,
                    (true, b'M') => exact.2 += whole * 60,
                    _ => return None,
                }
                match (time, unit) {
                    (false, b'Y' | b'M') => months += value * scale,
                    (false, _) => days += value * scale,
                    _ => secs += value * scale,
                }
            }
            r = &r[used + 1..];
        }
        Some(())
    };
    read(
        date_part,
        &[(b'Y', 12.0), (b'M', 1.0), (b'W', 7.0), (b'D', 1.0)],
        false,
    )?;
    if let Some(t) = time_part {
        if t.is_empty() {
            return None;
        }
        read(t, &[(b'H', 3600.0), (b'M', 60.0), (b'S', 1.0)], true)?;
    }
    if !fractional {
        return Some(Duration::new(
            i64::try_from(exact.0).ok()?,
            i64::try_from(exact.1).ok()?,
            exact.2 * NANOS_PER_SECOND + nanos,
        ));
    }
    let d = approximate(months, days, secs, 0.0).ok()?;
    Some(Duration::new(d.months, d.days, d.nanos + nanos))
}
