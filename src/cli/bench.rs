//! `lance-csr bench`: runs a folder of `.cypher` queries in CSR and join mode (one warm-up run,
//! then N timed runs of parse + plan + execute each) and reports medians and the join/CSR ratio.
//! With `--params FILE.csv` the runs take their parameters from the file's lines in turn (a
//! query's own `NAME.csv` beside its `NAME.cypher` comes first); with
//! `--concurrency N --duration S`, N workers share one graph and report queries/s and latency
//! percentiles instead.

use lance_csr::Format;
use lance_csr::Params;
use lance_csr::{Error, Result};
use lance_csr::{Graph, GraphOptions, Mode};
use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Timings of one query in one mode, in milliseconds.
#[derive(Debug, Clone)]
pub struct Timing {
    pub query: String,
    pub mode: Mode,
    pub median_ms: f64,
    pub min_ms: f64,
    pub max_ms: f64,
    pub rows: usize,
}

/// Times `query` on `graph`: a warm-up run, then `runs` timed runs, run `i` with
/// `bindings[i % len]`.
pub async fn time_query(
    graph: &Graph,
    name: &str,
    query: &str,
    bindings: &[Params],
    runs: usize,
) -> Result<Timing> {
    let mut rows = graph.query(query, &bindings[0]).await?.num_rows();
    let mut ms = Vec::with_capacity(runs);
    for i in 0..runs.max(1) {
        let params = &bindings[i % bindings.len()];
        let t = Instant::now();
        let r = graph.query(query, params).await?;
        ms.push(t.elapsed().as_secs_f64() * 1e3);
        rows = r.num_rows();
    }
    ms.sort_by(|a, b| a.total_cmp(b));
    Ok(Timing {
        query: name.to_string(),
        mode: graph.options().mode,
        median_ms: ms[ms.len() / 2],
        min_ms: ms[0],
        max_ms: ms[ms.len() - 1],
        rows,
    })
}

/// Queries per second and latency percentiles of one query under concurrent load.
#[derive(Debug, Clone)]
pub struct Throughput {
    pub query: String,
    pub mode: Mode,
    pub workers: usize,
    pub queries: usize,
    pub per_second: f64,
    pub p50_ms: f64,
    pub p99_ms: f64,
}

/// A throughput run: concurrent workers, for how long, and how they run the query.
#[derive(Debug, Clone, Copy)]
pub struct Load {
    pub workers: usize,
    pub duration: Duration,
    /// The workers share one prepared query (`Graph::prepare`), as threads sharing a Python
    /// `PreparedQuery` do, instead of each call going through the plan cache.
    pub prepared: bool,
}

/// Runs `query` on `graph` from `load.workers` concurrent tasks for `load.duration`, each run
/// with the next of `bindings` (shared round robin).
pub async fn throughput(
    graph: Arc<Graph>,
    name: &str,
    query: &str,
    bindings: Arc<Vec<Params>>,
    load: Load,
) -> Result<Throughput> {
    let prepared = match load.prepared {
        true => Some(Arc::new(graph.prepare(query)?)),
        false => None,
    };
    let query: Arc<str> = query.into();
    call(&graph, prepared.as_deref(), &query, &bindings[0]).await?;
    let next = Arc::new(AtomicUsize::new(0));
    let start = Instant::now();
    let end = start + load.duration;
    let tasks: Vec<_> = (0..load.workers.max(1))
        .map(|_| {
            let (graph, prepared, bindings, next, query) = (
                graph.clone(),
                prepared.clone(),
                bindings.clone(),
                next.clone(),
                query.clone(),
            );
            tokio::spawn(async move {
                let mut ms = Vec::new();
                while Instant::now() < end {
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    let t = Instant::now();
                    let params = &bindings[i % bindings.len()];
                    call(&graph, prepared.as_deref(), &query, params).await?;
                    ms.push(t.elapsed().as_secs_f64() * 1e3);
                }
                Ok::<_, Error>(ms)
            })
        })
        .collect();
    let mut ms = Vec::new();
    for t in tasks {
        let done = t
            .await
            .map_err(|e| Error::Other(format!("a bench worker failed: {e}")))?;
        ms.extend(done?);
    }
    let elapsed = start.elapsed().as_secs_f64();
    ms.sort_by(|a, b| a.total_cmp(b));
    let pct = |p: f64| ms[((ms.len() as f64 * p) as usize).min(ms.len() - 1)];
    Ok(Throughput {
        query: name.to_string(),
        mode: graph.options().mode,
        workers: load.workers.max(1),
        queries: ms.len(),
        per_second: ms.len() as f64 / elapsed,
        p50_ms: pct(0.50),
        p99_ms: pct(0.99),
    })
}

/// One call of a throughput run.
async fn call(
    graph: &Graph,
    prepared: Option<&lance_csr::Prepared>,
    query: &str,
    params: &Params,
) -> Result<lance_csr::QueryResult> {
    match prepared {
        Some(p) => p.query(graph, params).await,
        None => graph.query(query, params).await,
    }
}

/// The throughput report: a table, or CSV lines.
pub fn throughput_report(rows: &[Throughput], format: Format) -> String {
    let mut out = String::new();
    if format == Format::Csv {
        out.push_str("query,mode,workers,queries,queries_per_s,p50_ms,p99_ms\n");
        for t in rows {
            out.push_str(&format!(
                "{},{},{},{},{:.1},{:.3},{:.3}\n",
                t.query,
                t.mode.name(),
                t.workers,
                t.queries,
                t.per_second,
                t.p50_ms,
                t.p99_ms
            ));
        }
        return out;
    }
    out.push_str(&format!(
        "{:<32} {:>5} {:>8} {:>10} {:>12} {:>9} {:>9}\n",
        "query", "mode", "workers", "queries", "queries/s", "p50 ms", "p99 ms"
    ));
    for t in rows {
        out.push_str(&format!(
            "{:<32} {:>5} {:>8} {:>10} {:>12.1} {:>9.3} {:>9.3}\n",
            t.query,
            t.mode.name(),
            t.workers,
            t.queries,
            t.per_second,
            t.p50_ms,
            t.p99_ms
        ));
    }
    out
}

/// Parameter bindings from a CSV file: a header of parameter names, then one binding per
/// line. A field that is a Cypher literal (`42`, `'Ann'`, `[1, 2]`) is that value; any
/// other field is a string.
pub fn read_bindings(path: &Path) -> Result<Vec<Params>> {
    let mut reader = csv::ReaderBuilder::new()
        .trim(csv::Trim::All)
        .from_path(path)
        .map_err(|e| Error::Other(format!("cannot read {}: {e}", path.display())))?;
    let names: Vec<String> = reader
        .headers()
        .map_err(|e| Error::Other(format!("{}: {e}", path.display())))?
        .iter()
        .map(|h| h.trim_start_matches('$').to_string())
        .collect();
    if names.iter().any(|n| n.is_empty()) {
        return Err(Error::Other(format!(
            "{}: the header must name every column's parameter",
            path.display()
        )));
    }
    let mut out = Vec::new();
    for (i, rec) in reader.records().enumerate() {
        let rec = rec.map_err(|e| Error::Other(format!("{}: {e}", path.display())))?;
        let mut p = Params::new();
        for (name, field) in names.iter().zip(rec.iter()) {
            let value = match super::parse::parse_param(&format!("{name}={field}")) {
                Ok((_, v)) => v,
                Err(_) => lance_csr::param(field),
            };
            p.insert(name.clone(), value);
        }
        if p.len() != names.len() {
            return Err(Error::Other(format!(
                "{}: line {} has {} fields, the header {}",
                path.display(),
                i + 2,
                rec.len(),
                names.len()
            )));
        }
        out.push(p);
    }
    if out.is_empty() {
        return Err(Error::Other(format!(
            "{}: no parameter lines after the header",
            path.display()
        )));
    }
    Ok(out)
}

/// What `bench` runs and how it reports.
pub struct Run<'a> {
    /// Timed runs per query and mode (after one warm-up run).
    pub runs: usize,
    /// Parameters of the runs, taken in turn (one binding: every run the same).
    pub bindings: &'a [Params],
    /// Concurrent workers and how long they run: a throughput run instead of medians.
    pub load: Option<Load>,
    pub format: Format,
    /// One mode only (default: both).
    pub only: Option<Mode>,
    pub options: GraphOptions,
    /// Also time each query phase by phase.
    pub phases: bool,
    /// Run on this cluster (`df://host:port`).
    pub cluster: Option<String>,
}

pub async fn run(graph_path: &Path, dir: &Path, run: &Run<'_>) -> Result<Vec<Timing>> {
    let Run {
        runs,
        bindings,
        load,
        format,
        only,
        ref options,
        phases,
        ref cluster,
    } = *run;
    if bindings.is_empty() {
        return Err(Error::Other("no parameter bindings to run with".into()));
    }
    let mut files: Vec<_> = std::fs::read_dir(dir)
        .map_err(|e| Error::io("read", dir, e))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "cypher"))
        .collect();
    files.sort();
    if files.is_empty() {
        return Err(Error::Other(format!(
            "no .cypher files in {}",
            dir.display()
        )));
    }
    let modes: Vec<Mode> = match only {
        Some(m) => vec![m],
        None => vec![Mode::Csr, Mode::Join],
    };
    let t0 = Instant::now();
    let first = Graph::open_with(graph_path, options.clone().with_mode(modes[0])).await?;
    eprintln!(
        "opened {} in {:.2}s",
        graph_path.display(),
        t0.elapsed().as_secs_f64()
    );
    let mut graphs = vec![first.with_mode(modes[0]).await?];
    for m in &modes[1..] {
        graphs.push(first.with_mode(*m).await?);
    }
    let mut on = Vec::new();
    for g in graphs {
        on.push(Arc::new(super::on_cluster(g, cluster.as_deref()).await?));
    }
    let graphs = on;
    if let Some(load) = load {
        let shared = Arc::new(bindings.to_vec());
        let mut rows = Vec::new();
        for f in &files {
            let name = stem(f);
            let query = std::fs::read_to_string(f)?;
            let own = f.with_extension("csv");
            let shared = if own.exists() {
                Arc::new(read_bindings(&own)?)
            } else {
                shared.clone()
            };
            for g in &graphs {
                eprintln!("  {name} [{}] ...", g.options().mode.name());
                let t = throughput(g.clone(), &name, &query, shared.clone(), load)
                    .await
                    .map_err(|e| Error::Other(format!("{name}: {}", e.render(&query))))?;
                rows.push(t);
            }
        }
        print!("{}", throughput_report(&rows, format));
        return Ok(vec![]);
    }
    let mut timings = Vec::new();
    let mut phase_lines = Vec::new();
    for f in &files {
        let name = stem(f);
        let query = std::fs::read_to_string(f)?;
        let own = f.with_extension("csv");
        let own = if own.exists() {
            Some(read_bindings(&own)?)
        } else {
            None
        };
        let bindings = own.as_deref().unwrap_or(bindings);
        for g in &graphs {
            eprintln!("  {name} [{}] ...", g.options().mode.name());
            let t = time_query(g, &name, &query, bindings, runs)
                .await
                .map_err(|e| Error::Other(format!("{name}: {}", e.render(&query))))?;
            timings.push(t);
            if phases {
                let p = time_phases(g, &query, bindings, runs)
                    .await
                    .map_err(|e| Error::Other(format!("{name}: {}", e.render(&query))))?;
                phase_lines.push(phase_line(&name, g.options().mode, &p));
            }
        }
    }
    print!("{}", report(&timings, format));
    if phases {
        println!(
            "\nmedian ms per phase (a cached plan: `cache` is the lookup and binding, the planning phases 0)\n{:<32} {:>5} {:>8} {:>8} {:>8} {:>8} {:>8} {:>8} {:>8} {:>8} {:>8}",
            "query",
            "mode",
            "session",
            "stack",
            "parse",
            "bind",
            "optimize",
            "physical",
            "cache",
            "execute",
            "total"
        );
        for l in phase_lines {
            println!("{l}");
        }
    }
    Ok(timings)
}

/// The file name of `f` without extension.
fn stem(f: &Path) -> String {
    f.file_stem()
        .unwrap_or_default()
        .to_string_lossy()
        .to_string()
}

/// The median of each phase over `runs` runs of `query` (after a warm-up run).
async fn time_phases(
    graph: &Graph,
    query: &str,
    bindings: &[Params],
    runs: usize,
) -> Result<Vec<f64>> {
    graph.time_phases(query, &bindings[0]).await?;
    let mut samples: Vec<Vec<f64>> = vec![Vec::new(); 9];
    for i in 0..runs.max(1) {
        let p = graph
            .time_phases(query, &bindings[i % bindings.len()])
            .await?;
        let phases = [
            p.session,
            p.planning_stack,
            p.parse,
            p.bind_and_lower,
            p.optimize,
            p.physical_planning,
            p.cache,
            p.execute,
            p.total,
        ];
        for (s, d) in samples.iter_mut().zip(phases) {
            s.push(d.as_secs_f64() * 1e3);
        }
    }
    Ok(samples
        .into_iter()
        .map(|mut s| {
            s.sort_by(|a, b| a.total_cmp(b));
            s[s.len() / 2]
        })
        .collect())
}

fn phase_line(name: &str, mode: Mode, ms: &[f64]) -> String {
    let cells: Vec<String> = ms.iter().map(|m| format!("{m:>8.3}")).collect();
    format!("{name:<32} {:>5} {}", mode.name(), cells.join(" "))
}

/// The report: a table with the join/CSR ratio, or CSV lines.
pub fn report(timings: &[Timing], format: Format) -> String {
    let mut out = String::new();
    if format == Format::Csv {
        out.push_str("query,mode,median_ms,min_ms,max_ms,rows\n");
        for t in timings {
            out.push_str(&format!(
                "{},{},{:.3},{:.3},{:.3},{}\n",
                t.query,
                t.mode.name(),
                t.median_ms,
                t.min_ms,
                t.max_ms,
                t.rows
            ));
        }
        return out;
    }
    out.push_str(&format!(
        "{:<32} {:>12} {:>12} {:>10} {:>10}\n",
        "query", "csr ms", "join ms", "join/csr", "rows"
    ));
    let mut names: Vec<&str> = timings.iter().map(|t| t.query.as_str()).collect();
    names.dedup();
    for n in names {
        let get = |m: Mode| timings.iter().find(|t| t.query == n && t.mode == m);
        let (c, j) = (get(Mode::Csr), get(Mode::Join));
        let fmt = |t: Option<&Timing>| {
            t.map(|t| format!("{:.3}", t.median_ms))
                .unwrap_or("-".into())
        };
        let ratio = match (c, j) {
            (Some(c), Some(j)) => format!("{:.1}x", j.median_ms / c.median_ms.max(1e-6)),
            _ => "-".into(),
        };
        let rows = c.or(j).map(|t| t.rows).unwrap_or(0);
        let mismatch = match (c, j) {
            (Some(c), Some(j)) if c.rows != j.rows => " (row counts differ!)",
            _ => "",
        };
        out.push_str(&format!(
            "{n:<32} {:>12} {:>12} {:>10} {:>10}{mismatch}\n",
            fmt(c),
            fmt(j),
            ratio,
            rows
        ));
    }
    out
}
