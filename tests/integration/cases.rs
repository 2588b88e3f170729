//! Runs every `tests/cases/*.cypher` case on the sample graph and checks results by hand-written
//! expectations (see the format at the top of `tests/cases/match.cypher`).

use crate::common;

use common::cases::{all_cases, Expect};
use common::{lines, sample};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cypher_cases() {
    run_cases(&sample().await).await;
}

/// The same cases on the sample graph written as Lance datasets: the CSR operators then read
/// columns through Lance scans, which differ from in-memory tables (e.g. column order).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cypher_cases_on_lance() {
    let dir = tempfile::tempdir().unwrap();
    let path = lance_csr::write_graph(
        dir.path(),
        lance_csr_datasets::sample::tables(),
        &mut |_| {},
    )
    .await
    .unwrap();
    // Persisted indexes, as `lance-csr index build` leaves them.
    lance_csr::Graph::build_indexes(&path, &mut |_| {})
        .await
        .unwrap();
    let g = lance_csr::Graph::open(&path).await.unwrap();
    assert!(g.has_all_indexes());
    run_cases(&g).await;
}

async fn run_cases(g: &lance_csr::Graph) {
    let cases = all_cases();
    assert!(cases.len() >= 60, "only {} cases found", cases.len());
    // `LANCE_CSR_CASES=paths.cypher`: only the cases whose `file:line` contains it (timed).
    let only = std::env::var("LANCE_CSR_CASES").ok();
    let mut failures = Vec::new();
    for c in &cases {
        let started = std::time::Instant::now();
        if let Some(o) = &only {
            if !format!("{}:{}", c.file, c.line).contains(o.as_str()) {
                continue;
            }
        }
        let params = common::params(&c.params).expect("case params parse");
        let where_ = format!("{}:{}", c.file, c.line);
        let result = g.query(&c.query, &params).await;
        // A report says "error:" once, whatever the kind of error.
        if let Err(e) = &result {
            let text = e.render(&c.query);
            if text.contains("error: error") {
                failures.push(format!("{where_}: the report repeats itself: {text}"));
            }
        }
        match (&c.expect, result) {
            (Expect::Error(kind), Err(e)) => {
                if &e.kind_name() != kind || !e.is_compile_time() {
                    failures.push(format!(
                        "{where_}: expected {kind}, got {} ({e})",
                        e.kind_name()
                    ));
                }
            }
            (Expect::RuntimeError(kind), Err(e)) => {
                if &e.kind_name() != kind || e.is_compile_time() {
                    failures.push(format!(
                        "{where_}: expected {kind} at run time, got {} ({e})",
                        e.kind_name()
                    ));
                }
            }
            (Expect::Error(kind) | Expect::RuntimeError(kind), Ok(r)) => failures.push(format!(
                "{where_}: expected {kind}, got {} rows",
                r.num_rows()
            )),
            (_, Err(e)) => failures.push(format!("{where_}: {}", e.render(&c.query))),
            (expect, Ok(r)) => {
                let header = r.columns.join("|");
                if header != c.header {
                    failures.push(format!("{where_}: columns {header}, expected {}", c.header));
                    continue;
                }
                let mut got = lines(&r);
                let mut want = match expect {
                    Expect::Ordered(w) | Expect::Rowsort(w) => w.clone(),
                    Expect::Error(_) | Expect::RuntimeError(_) => unreachable!(),
                };
                if matches!(expect, Expect::Rowsort(_)) {
                    got.sort();
                    want.sort();
                }
                if got != want {
                    failures.push(format!("{where_}: got {got:?}\n   expected {want:?}"));
                }
            }
        }
        if only.is_some() {
            println!("{}:{}: {:?}", c.file, c.line, started.elapsed());
        }
    }
    println!("{} cases, {} failed", cases.len(), failures.len());
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// Stored Arrow date, timestamp (with and without a zone), time and interval columns, and a
/// column of mixed-kind cells (`lance_csr::mixed_field`), written as Lance datasets: read as
/// temporal values, compared with constructed ones, computed with, rendered as Neo4j does.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stored_temporal_columns_read_as_temporal_values() {
    use lance_csr::arrow::array::{
        Array, ArrayRef, Date32Array, Int64Array, IntervalMonthDayNanoArray, LargeBinaryArray,
        RecordBatch, Time64NanosecondArray, TimestampMicrosecondArray, TimestampMillisecondArray,
    };
    use lance_csr::arrow::datatypes::{DataType, Field, IntervalMonthDayNano, Schema};
    use std::sync::Arc;
    let time = lance_csr::Value::parse("time('12:31:14.5+01:00')").unwrap();
    let zoned = lance_csr::Value::parse("datetime('2015-07-21T21:40:32.142[Europe/London]')");
    let cells = [time.encode_mixed(), zoned.unwrap().encode_mixed()];
    let at = TimestampMillisecondArray::from(vec![1_577_836_800_000, 946_684_799_000])
        .with_timezone("UTC");
    let columns: Vec<(Field, ArrayRef)> = vec![
        (
            Field::new("id", DataType::Int64, false),
            Arc::new(Int64Array::from(vec![1, 2])),
        ),
        (
            Field::new("day", DataType::Date32, true),
            Arc::new(Date32Array::from(vec![0, 10957])),
        ),
        (Field::new("at", at.data_type().clone(), true), Arc::new(at)),
        (
            Field::new(
                "local",
                DataType::Timestamp(lance_csr::arrow::datatypes::TimeUnit::Microsecond, None),
                true,
            ),
            Arc::new(TimestampMicrosecondArray::from(vec![Some(1_500_000), None])),
        ),
        (
            Field::new(
                "t",
                DataType::Time64(lance_csr::arrow::datatypes::TimeUnit::Nanosecond),
                true,
            ),
            Arc::new(Time64NanosecondArray::from(vec![45_074_000_000_000, 1])),
        ),
        (
            Field::new(
                "dur",
                DataType::Interval(lance_csr::arrow::datatypes::IntervalUnit::MonthDayNano),
                true,
            ),
            Arc::new(IntervalMonthDayNanoArray::from(vec![
                IntervalMonthDayNano::new(14, 3, 5_500_000_000),
                IntervalMonthDayNano::new(0, 0, -1_000_000),
            ])),
        ),
        (
            lance_csr::mixed_field("mixed", true),
            Arc::new(LargeBinaryArray::from_iter(
                cells.iter().map(|c| c.as_deref()),
            )),
        ),
    ];
    let schema = Arc::new(Schema::new(
        columns.iter().map(|(f, _)| f.clone()).collect::<Vec<_>>(),
    ));
    let batch =
        RecordBatch::try_new(schema, columns.into_iter().map(|(_, a)| a).collect()).unwrap();
    // In memory all of them; as Lance datasets all but the interval (Lance has no interval
    // type: a stored duration is a mixed-kind cell there).
    let mem = lance_csr::Graph::from_tables(
        vec![lance_csr_datasets::Table::node("Event", batch.clone())],
        Default::default(),
    )
    .await
    .unwrap();
    let r = mem
        .query(
            "MATCH (e:Event) RETURN e.dur, e.day + e.dur AS d ORDER BY e.id",
            &Default::default(),
        )
        .await
        .unwrap();
    assert_eq!(
        lines(&r),
        ["P1Y2M3DT5.5S|1971-03-04", "PT-0.001S|2000-01-01"]
    );
    let dur = batch.schema().index_of("dur").unwrap();
    let mut batch = batch;
    batch.remove_column(dur);
    let dir = tempfile::tempdir().unwrap();
    let tables = vec![lance_csr_datasets::Table::node("Event", batch)];
    let path = lance_csr::write_graph(dir.path(), tables, &mut |_| {})
        .await
        .unwrap();
    let g = lance_csr::Graph::open(&path).await.unwrap();
    let run = |q: &'static str| {
        let g = &g;
        async move {
            let r = g
                .query(q, &Default::default())
                .await
                .unwrap_or_else(|e| panic!("{q}: {e}"));
            lines(&r)
        }
    };
    assert_eq!(
        run("MATCH (e:Event) RETURN e.day, e.at, e.local, e.t, e.mixed ORDER BY e.id").await,
        [
            "1970-01-01|2020-01-01T00:00Z|1970-01-01T00:00:01.500|12:31:14|12:31:14.500+01:00",
            "2000-01-01|1999-12-31T23:59:59Z|null|00:00:00.000000001|2015-07-21T21:40:32.142+01:00[Europe/London]",
        ]
    );
    assert_eq!(
        run("MATCH (e:Event) WHERE e.day < date('1999-01-01') AND e.at >= datetime('2019-12-31T23:00-01:00') RETURN e.id").await,
        ["1"]
    );
    assert_eq!(
        run("MATCH (e:Event) RETURN e.day.year AS y, e.mixed.offsetMinutes AS o, duration.inSeconds(e.local, e.at) AS s ORDER BY e.id").await,
        ["1970|60|PT438287H59M58.5S", "2000|60|null"]
    );
}
