use super::*;
use crate::functions::value::Value;

fn map(entries: &[(&str, Value)]) -> Value {
    Value::Map(
        entries
            .iter()
            .map(|(k, v)| (k.to_string(), v.clone()))
            .collect(),
    )
}

fn make(kind: Kind, v: Value) -> String {
    construct(kind, &v)
        .expect("valid")
        .expect("not null")
        .to_string()
}

#[test]
fn renders_as_neo4j_does() {
    let i = Value::Int;
    assert_eq!(
        make(Kind::Date, map(&[("year", i(1816)), ("week", i(1))])),
        "1816-01-01"
    );
    assert_eq!(
        make(Kind::Date, map(&[("year", i(1817)), ("week", i(1))])),
        "1816-12-30"
    );
    assert_eq!(
        make(
            Kind::LocalTime,
            map(&[
                ("hour", i(12)),
                ("minute", i(31)),
                ("second", i(14)),
                ("nanosecond", i(645876123))
            ])
        ),
        "12:31:14.645876123"
    );
    assert_eq!(
        make(
            Kind::DateTime,
            map(&[
                ("year", i(1984)),
                ("week", i(10)),
                ("dayOfWeek", i(3)),
                ("timezone", Value::Str("+01:00".into()))
            ])
        ),
        "1984-03-07T00:00+01:00"
    );
    assert_eq!(
        make(Kind::Duration, map(&[("months", Value::Float(0.75))])),
        "P22DT19H51M49.5S"
    );
    assert_eq!(make(Kind::Duration, Value::Str("P2.5W".into())), "P17DT12H");
    assert_eq!(
        make(
            Kind::Duration,
            Value::Str("P2012-02-02T14:37:21.545".into())
        ),
        "P2012Y2M2DT14H37M21.545S"
    );
    assert_eq!(
        make(Kind::Duration, Value::Str("PT-0.001S".into())),
        "PT-0.001S"
    );
    assert_eq!(make(Kind::Duration, map(&[])), "PT0S");
    // Every rendering reads back as the same value (the mixed-kind encoding relies on it).
    for text in [
        "PT-5H-10M-32.142S",
        "P-1Y-11M",
        "P2M-28DT31H38M20S",
        "PT-0.4S",
        "P1DT0.001S",
    ] {
        assert_eq!(make(Kind::Duration, Value::Str(text.into())), text);
    }
}

#[test]
fn parses_iso_forms() {
    for (text, want) in [
        ("2015-07-21", "2015-07-21"),
        ("20150721", "2015-07-21"),
        ("2015-07", "2015-07-01"),
        ("2015-W30-2", "2015-07-21"),
        ("2015W302", "2015-07-21"),
        ("2015-202", "2015-07-21"),
        ("2015", "2015-01-01"),
    ] {
        assert_eq!(make(Kind::Date, Value::Str(text.into())), want, "{text}");
    }
    assert_eq!(
        make(
            Kind::DateTime,
            Value::Str("2015-07-21T21:40:32.142+0100".into())
        ),
        "2015-07-21T21:40:32.142+01:00"
    );
    assert_eq!(
        make(
            Kind::DateTime,
            Value::Str("1818-07-21T21:40:32.142[Europe/Stockholm]".into())
        ),
        "1818-07-21T21:40:32.142+00:53:28[Europe/Stockholm]"
    );
    assert!(construct(Kind::Date, &Value::Str("2015-13-01".into())).is_err());
}

#[test]
fn arithmetic_and_between() {
    let d = |s: &str| parse::parse(Kind::Duration, s).unwrap();
    let date = parse::parse(Kind::Date, "1984-10-11").unwrap();
    let sum = add(&date, &d("P12Y5M14DT16H12M70S")).unwrap().unwrap();
    assert_eq!(sum.to_string(), "1997-03-25");
    let a = parse::parse(Kind::DateTime, "2014-07-21T21:40:36.143+0200").unwrap();
    let b = parse::parse(Kind::DateTime, "2015-07-21T21:40:32.142+0100").unwrap();
    assert_eq!(
        between(&a, &b, BetweenUnit::Months)
            .unwrap()
            .unwrap()
            .to_string(),
        "P1Y"
    );
    assert_eq!(
        between(&a, &b, BetweenUnit::Seconds)
            .unwrap()
            .unwrap()
            .to_string(),
        "PT8760H59M55.999S"
    );
    let t = |s: &str| parse::parse(Kind::LocalTime, s).unwrap();
    assert_eq!(
        between(&t("12:34:54.7"), &t("12:34:54.3"), BetweenUnit::Seconds)
            .unwrap()
            .unwrap()
            .to_string(),
        "PT-0.4S"
    );
}

#[test]
fn truncates_then_overrides() {
    let dt = parse::parse(Kind::DateTime, "1984-10-11T12:31:14.645876123+01:00").unwrap();
    let t = |k, unit: &str, o: &[(&str, Value)]| {
        let Value::Map(o) = map(o) else {
            unreachable!()
        };
        truncate(k, unit, &dt, &o).unwrap().to_string()
    };
    assert_eq!(
        t(Kind::Date, "millennium", &[("day", Value::Int(2))]),
        "1000-01-02"
    );
    assert_eq!(
        t(
            Kind::DateTime,
            "microsecond",
            &[("nanosecond", Value::Int(2))]
        ),
        "1984-10-11T12:31:14.645876002+01:00"
    );
    assert_eq!(
        t(Kind::Time, "second", &[("nanosecond", Value::Int(2))]),
        "12:31:14.000000002+01:00"
    );
}

#[test]
fn orders_zoned_values_by_instant() {
    let a = parse::parse(Kind::Time, "10:00+01:00").unwrap();
    let b = parse::parse(Kind::Time, "09:35:14+00:00").unwrap();
    assert_eq!(a.order(&b), Some(std::cmp::Ordering::Less));
    let d = parse::parse(Kind::Duration, "PT1M").unwrap();
    assert_eq!(d.order(&d), None);
    assert!(d.equals(&parse::parse(Kind::Duration, "PT60S").unwrap()));
}

#[test]
fn extremes_are_errors_not_panics() {
    let i = Value::Int;
    for v in [
        map(&[("year", i(262_142)), ("week", i(53)), ("dayOfWeek", i(7))]),
        map(&[
            ("year", i(262_142)),
            ("quarter", i(4)),
            ("dayOfQuarter", i(92)),
        ]),
        map(&[("year", i(-262_143)), ("month", i(1)), ("day", i(1))]),
        map(&[("year", i(i64::MAX))]),
        map(&[("epochSeconds", i(i64::MAX))]),
    ] {
        let _ = construct(Kind::Date, &v);
        let _ = construct(Kind::DateTime, &v);
    }
    let max = construct(
        Kind::DateTime,
        &Value::Str("+262142-12-31T23:59:59-18:00".into()),
    );
    if let Ok(Some(t)) = max {
        let _ = add(&t, &parse::parse(Kind::Duration, "P1Y").unwrap());
        let _ = truncate(Kind::Date, "week", &t, &[]);
    }
    let min = construct(Kind::Date, &Value::Str("-262143-01-01".into()))
        .unwrap()
        .unwrap();
    assert!(truncate(Kind::Date, "week", &min, &[]).is_err() || min.date().is_some());
    use datafusion::common::ScalarValue as S;
    assert!(from_scalar(&S::Date32(Some(i32::MAX))).is_none());
    assert!(from_scalar(&S::TimestampSecond(Some(i64::MAX), Some("UTC".into()))).is_none());
    let huge = construct(Kind::Duration, &map(&[("hours", i(i64::MAX))]))
        .unwrap()
        .unwrap();
    assert_eq!(huge.component("nanoseconds"), None);
    assert_eq!(huge.component("hours"), Some(Value::Int(i64::MAX)));
}
