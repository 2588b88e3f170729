//! `lance-csr bench`: runs a folder of `.cypher` queries in CSR and join mode (one warm-up run,
//! then N timed runs of parse + plan + execute each) and reports medians and the join/CSR ratio.

use lance_csr::Format;
use lance_csr::Params;
use lance_csr::{Error, Result};
use lance_csr::{Graph, GraphOptions, Mode};
use std::path::Path;
use std::time::Instant;

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

fn mode_name(m: Mode) -> &'static str {
    match m {
        Mode::Csr => "csr",
        Mode::Join => "join",
    }
}

/// Times `query` on `graph`: a warm-up run, then `runs` timed runs.
pub async fn time_query(
    graph: &Graph,
    name: &str,
    query: &str,
    params: &Params,
    runs: usize,
) -> Result<Timing> {
    let mut rows = graph.query(query, params).await?.num_rows();
    let mut ms = Vec::with_capacity(runs);
    for _ in 0..runs.max(1) {
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

/// What `bench` runs and how it reports.
pub struct Run<'a> {
    /// Timed runs per query and mode (after one warm-up run).
    pub runs: usize,
    pub params: &'a Params,
    pub format: Format,
    /// One mode only (default: both).
    pub only: Option<Mode>,
    pub options: GraphOptions,
    /// Also time each query phase by phase.
    pub phases: bool,
}

pub async fn run(graph_path: &Path, dir: &Path, run: &Run<'_>) -> Result<Vec<Timing>> {
    let Run {
        runs,
        params,
        format,
        only,
        ref options,
        phases,
    } = *run;
    let mut files: Vec<_> = std::fs::read_dir(dir)
        .map_err(|e| Error::Other(format!("cannot read {}: {e}", dir.display())))?
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
    let first = Graph::open_with(
        graph_path,
        GraphOptions {
            mode: modes[0],
            ..options.clone()
        },
    )
    .await?;
    eprintln!(
        "opened {} in {:.2}s",
        graph_path.display(),
        t0.elapsed().as_secs_f64()
    );
    let mut graphs = vec![first];
    for m in &modes[1..] {
        let g = graphs[0].with_mode(*m).await?;
        graphs.push(g);
    }
    let mut timings = Vec::new();
    let mut phase_lines = Vec::new();
    for f in &files {
        let name = f
            .file_stem()
            .unwrap_or_default()
            .to_string_lossy()
            .to_string();
        let query = std::fs::read_to_string(f)?;
        for g in &graphs {
            eprintln!("  {name} [{}] ...", mode_name(g.options().mode));
            let t = time_query(g, &name, &query, params, runs)
                .await
                .map_err(|e| Error::Other(format!("{name}: {}", e.render(&query))))?;
            timings.push(t);
            if phases {
                let p = time_phases(g, &query, params, runs)
                    .await
                    .map_err(|e| Error::Other(format!("{name}: {}", e.render(&query))))?;
                phase_lines.push(phase_line(&name, g.options().mode, &p));
            }
        }
    }
    print!("{}", report(&timings, format));
    if phases {
        println!(
            "\nmedian ms per phase\n{:<32} {:>5} {:>8} {:>8} {:>8} {:>8} {:>8} {:>8} {:>8} {:>8}",
            "query",
            "mode",
            "session",
            "stack",
            "parse",
            "bind",
            "optimize",
            "physical",
            "execute",
            "total"
        );
        for l in phase_lines {
            println!("{l}");
        }
    }
    Ok(timings)
}

/// The median of each phase over `runs` runs of `query` (after a warm-up run).
async fn time_phases(graph: &Graph, query: &str, params: &Params, runs: usize) -> Result<Vec<f64>> {
    graph.time_phases(query, params).await?;
    let mut samples: Vec<Vec<f64>> = vec![Vec::new(); 8];
    for _ in 0..runs.max(1) {
        let p = graph.time_phases(query, params).await?;
        let phases = [
            p.session,
            p.planning_stack,
            p.parse,
            p.bind_and_lower,
            p.optimize,
            p.physical_planning,
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
    format!("{name:<32} {:>5} {}", mode_name(mode), cells.join(" "))
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
                mode_name(t.mode),
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
