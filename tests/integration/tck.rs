//! openCypher TCK runner. Reads `../shared/tck/tck-full.jsonl` (every read-only scenario;
//! `tck.jsonl`, the strict subset, is part of it), runs every scenario on its graph, and prints
//! per TCK directory: passed / failed / not expressible, for the subset and for the whole.
//! Fails only on regressions: against `tests/tck_known_failures.txt` for the subset and
//! `tests/tck_full_known_failures.txt` for the whole (`LANCE_CSR_TCK_BLESS=1` rewrites both).

use crate::common;

use common::tck::{arrow_value, build_graph, load, params, tck_path, Scenario, Value, ValueParser};
use std::collections::{BTreeMap, BTreeSet};
use std::time::Duration;

enum Outcome {
    Passed,
    Failed(String),
    /// An error was expected and came, but of another class or in another phase.
    WrongError(String),
    NotExpressible(String),
}

/// Whether our error matches the TCK's class (`SyntaxError`, `TypeError`, ...; the generic
/// `Error` takes any) and phase (`compile time`, `runtime`, `any time`).
fn error_matches(e: &lance_csr::Error, class: &str, phase: &str) -> Result<(), String> {
    let ours = e.class().name();
    let class_ok = class == "Error" || class == ours;
    let phase_ok = match phase {
        "compile time" => e.is_compile_time(),
        "runtime" => !e.is_compile_time(),
        _ => true,
    };
    if class_ok && phase_ok {
        Ok(())
    } else {
        let when = if e.is_compile_time() {
            "compile time"
        } else {
            "runtime"
        };
        Err(format!(
            "expected {class} at {phase}, got {ours} ({}) at {when}: {e}",
            e.kind_name()
        ))
    }
}

fn is_unsupported(e: &lance_csr::Error) -> bool {
    use lance_csr::SemanticKind;
    match e {
        lance_csr::Error::Parse(p) => matches!(
            p.kind,
            cypher::ErrorKind::Unsupported | cypher::ErrorKind::WriteClause
        ),
        lance_csr::Error::Semantic { kind, .. } => {
            matches!(
                kind,
                SemanticKind::Unsupported | SemanticKind::AmbiguousPattern
            )
        }
        _ => false,
    }
}

async fn run(s: &Scenario) -> Outcome {
    let graph = match build_graph(&s.setup_graph).await {
        Ok(g) => g,
        Err(e) => return Outcome::NotExpressible(e.0),
    };
    let params = match params(s) {
        Ok(p) => p,
        Err(e) => return Outcome::NotExpressible(e),
    };
    let result =
        match tokio::time::timeout(Duration::from_secs(20), graph.query(&s.query, &params)).await {
            Ok(r) => r,
            Err(_) => return Outcome::Failed("timed out after 20 s".into()),
        };
    let exp = &s.expected;
    if let Some(kind) = exp["error_type"].as_str() {
        let phase = exp["error_phase"].as_str().unwrap_or("any time");
        return match result {
            Ok(r) => Outcome::Failed(format!(
                "expected {kind} ({}), got {} rows",
                exp["error_detail"].as_str().unwrap_or("-"),
                r.num_rows()
            )),
            // An error because we don't support the construct is not the error the TCK wants.
            Err(e) if is_unsupported(&e) => {
                Outcome::Failed(format!("rejected as unsupported: {e}"))
            }
            Err(e) => match error_matches(&e, kind, phase) {
                Ok(()) => Outcome::Passed,
                Err(why) => Outcome::WrongError(why),
            },
        };
    }
    let r = match result {
        Ok(r) => r,
        Err(e) => return Outcome::Failed(format!("error: {e}")),
    };
    let want_cols: Vec<String> = exp["columns"]
        .as_array()
        .map(|a| {
            a.iter()
                .filter_map(|c| c.as_str().map(String::from))
                .collect()
        })
        .unwrap_or_default();
    if r.columns != want_cols {
        return Outcome::Failed(format!("columns {:?}, expected {:?}", r.columns, want_cols));
    }
    let mut want = Vec::new();
    for row in exp["rows"].as_array().cloned().unwrap_or_default() {
        let mut vals = Vec::new();
        for cell in row.as_array().cloned().unwrap_or_default() {
            match ValueParser::parse(cell.as_str().unwrap_or("null")) {
                Ok(v) => vals.push(v),
                Err(e) => return Outcome::NotExpressible(format!("expected value: {e}")),
            }
        }
        want.push(vals);
    }
    let mut got: Vec<Vec<Value>> = Vec::new();
    for b in &r.batches {
        for i in 0..b.num_rows() {
            got.push(
                (0..b.num_columns())
                    .map(|c| arrow_value(b.column(c).as_ref(), i))
                    .collect(),
            );
        }
    }
    let ignore_order = exp["ignore_list_order"].as_bool().unwrap_or(false);
    let row_eq = |a: &Vec<Value>, b: &Vec<Value>| {
        a.len() == b.len() && a.iter().zip(b).all(|(x, y)| x.same(y, ignore_order))
    };
    let ok = if got.len() != want.len() {
        false
    } else if exp["ordered"].as_bool().unwrap_or(false) {
        got.iter().zip(&want).all(|(a, b)| row_eq(a, b))
    } else {
        let mut used = vec![false; want.len()];
        got.iter().all(|g| {
            (0..want.len()).any(|j| {
                if !used[j] && row_eq(g, &want[j]) {
                    used[j] = true;
                    true
                } else {
                    false
                }
            })
        })
    };
    if ok {
        Outcome::Passed
    } else {
        Outcome::Failed(format!(
            "rows differ: got {} {:?}, expected {} {:?}",
            got.len(),
            got.iter().take(5).collect::<Vec<_>>(),
            want.len(),
            want.iter().take(5).collect::<Vec<_>>()
        ))
    }
}

fn directory(feature_file: &str) -> String {
    let parts: Vec<&str> = feature_file.split('/').collect();
    parts[..parts.len().saturating_sub(1)].join("/")
}

/// One scenario's outcome, as the report counts it.
#[derive(Clone, Copy, PartialEq)]
enum Counted {
    Passed,
    Failed,
    NotExpressible,
}

#[derive(Default)]
struct Counts {
    passed: usize,
    failed: usize,
    not_expressible: usize,
}

impl Counts {
    fn add(&mut self, c: Counted) {
        match c {
            Counted::Passed => self.passed += 1,
            Counted::Failed => self.failed += 1,
            Counted::NotExpressible => self.not_expressible += 1,
        }
    }

    fn total(&self) -> usize {
        self.passed + self.failed + self.not_expressible
    }

    fn line(&self) -> String {
        format!(
            "{} passed, {} failed, {} not expressible of {} ({:.1}% passed)",
            self.passed,
            self.failed,
            self.not_expressible,
            self.total(),
            100.0 * self.passed as f64 / self.total().max(1) as f64
        )
    }
}

/// Every scenario run: id -> (directory, strict core, outcome, why).
type Results = BTreeMap<String, (String, bool, Counted, String)>;

async fn run_all(scenarios: &[Scenario]) -> Results {
    let mut out = Results::new();
    for s in scenarios {
        let (counted, why) = match run(s).await {
            Outcome::Passed => (Counted::Passed, String::new()),
            Outcome::Failed(why) => (Counted::Failed, why),
            Outcome::WrongError(why) => (Counted::Failed, format!("wrong error: {why}")),
            Outcome::NotExpressible(why) => (Counted::NotExpressible, why),
        };
        let dir = directory(&s.feature_file);
        out.insert(s.id.clone(), (dir, s.strict_core, counted, why));
    }
    out
}

/// Per-directory counts of `ids`' results, printed; the totals.
fn report(title: &str, results: &Results, ids: &BTreeSet<String>) -> Counts {
    let mut per_dir: BTreeMap<&str, Counts> = BTreeMap::new();
    let (mut all, mut strict) = (Counts::default(), Counts::default());
    for id in ids {
        let (dir, strict_core, c, _) = &results[id];
        per_dir.entry(dir).or_default().add(*c);
        all.add(*c);
        if *strict_core {
            strict.add(*c);
        }
    }
    println!("\nTCK report for {title}");
    println!(
        "{:<40} {:>7} {:>7} {:>15}",
        "directory", "passed", "failed", "not expressible"
    );
    for (d, c) in &per_dir {
        println!(
            "{d:<40} {:>7} {:>7} {:>15}",
            c.passed, c.failed, c.not_expressible
        );
    }
    println!("{title}: {}", all.line());
    println!("{title}, strict core: {}", strict.line());
    all
}

/// The failures among `ids` that `list` (a known-failures file) does not name; with
/// `LANCE_CSR_TCK_BLESS` set, `list` rewritten to name every failure instead.
fn regressions(results: &Results, ids: &BTreeSet<String>, list: &str) -> Vec<String> {
    let list_path = common::project_root().join(list);
    let failed: BTreeSet<&String> = ids
        .iter()
        .filter(|id| results[*id].2 == Counted::Failed)
        .collect();
    if std::env::var_os("LANCE_CSR_TCK_BLESS").is_some() {
        let mut text = String::from("# TCK scenarios known to fail; the runner fails on any other failure.\n# Regenerate with LANCE_CSR_TCK_BLESS=1 cargo test --test integration tck::\n");
        for id in &failed {
            text.push_str(id);
            text.push('\n');
        }
        std::fs::write(&list_path, text).expect("write known failures");
        println!("wrote {} known failures to {list}", failed.len());
        return vec![];
    }
    let known: BTreeSet<String> = std::fs::read_to_string(&list_path)
        .unwrap_or_default()
        .lines()
        .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
        .map(|l| l.trim().to_string())
        .collect();
    let fixed = known.iter().filter(|id| !failed.contains(id)).count();
    if fixed > 0 {
        println!("{fixed} scenarios of {list} pass now; bless the list to lock them in");
    }
    failed
        .into_iter()
        .filter(|id| !known.contains(*id))
        .map(|id| format!("  {id}: {}", results[id].3))
        .collect()
}

/// The TCK: `tck.jsonl` (the strict subset, gated by `tests/tck_known_failures.txt`) and
/// `tck-full.jsonl` (every read-only scenario, a superset, gated by
/// `tests/tck_full_known_failures.txt`), each scenario run once. With `LANCE_CSR_TCK` set,
/// that one file, reported and not gated.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tck() {
    let Some((path, is_default)) = tck_path() else {
        common::tck::missing("the TCK (../shared/tck/tck.jsonl, or LANCE_CSR_TCK)");
        return;
    };
    if !is_default {
        let scenarios = load(&path);
        let results = run_all(&scenarios).await;
        let ids = scenarios.iter().map(|s| s.id.clone()).collect();
        report(&path.display().to_string(), &results, &ids);
        print_verbose(&results);
        return;
    }
    let full_path = path.with_file_name("tck-full.jsonl");
    if !full_path.exists() {
        common::tck::missing("../shared/tck/tck-full.jsonl");
    }
    let subset = load(&path);
    // The full file holds the subset's records unchanged: each scenario runs once.
    let scenarios = if full_path.exists() {
        load(&full_path)
    } else {
        subset.clone()
    };
    let results = run_all(&scenarios).await;
    let subset_ids: BTreeSet<String> = subset.iter().map(|s| s.id.clone()).collect();
    let missing: Vec<&String> = subset_ids
        .iter()
        .filter(|id| !results.contains_key(*id))
        .collect();
    assert!(missing.is_empty(), "tck-full.jsonl lacks {missing:?}");
    let all_ids: BTreeSet<String> = results.keys().cloned().collect();
    print_verbose(&results);
    report("tck.jsonl", &results, &subset_ids);
    if full_path.exists() {
        report("tck-full.jsonl", &results, &all_ids);
    }
    let mut bad = regressions(&results, &subset_ids, "tests/tck_known_failures.txt");
    if full_path.exists() {
        bad.extend(regressions(
            &results,
            &all_ids,
            "tests/tck_full_known_failures.txt",
        ));
    }
    bad.sort();
    bad.dedup();
    assert!(
        bad.is_empty(),
        "{} TCK regressions:\n{}",
        bad.len(),
        bad.join("\n")
    );
}

fn print_verbose(results: &Results) {
    if std::env::var_os("LANCE_CSR_TCK_VERBOSE").is_none() {
        return;
    }
    for (title, which) in [
        ("failures", Counted::Failed),
        ("not expressible", Counted::NotExpressible),
    ] {
        println!("\n{title}:");
        for (id, (_, _, c, why)) in results {
            if *c == which {
                println!("  {id}: {}", why.chars().take(300).collect::<String>());
            }
        }
    }
}
