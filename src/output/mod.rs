//! Rendering results: Cypher-style values, and table / CSV / JSON output.

pub mod value;

use crate::session::QueryResult;
use value::{render_cell, to_json};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    Table,
    Csv,
    Json,
}

impl std::str::FromStr for Format {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "table" => Ok(Format::Table),
            "csv" => Ok(Format::Csv),
            "json" => Ok(Format::Json),
            other => Err(format!("unknown format '{other}' (table, csv or json)")),
        }
    }
}

/// All rows as rendered strings (top-level strings unquoted).
pub fn rows(result: &QueryResult) -> Vec<Vec<String>> {
    let mut out = Vec::new();
    for b in &result.batches {
        for r in 0..b.num_rows() {
            out.push(
                (0..b.num_columns())
                    .map(|c| render_cell(b.column(c).as_ref(), r, false))
                    .collect(),
            );
        }
    }
    out
}

pub fn render(result: &QueryResult, format: Format) -> String {
    match format {
        Format::Table => render_table(result),
        Format::Csv => render_csv(result),
        Format::Json => render_json(result),
    }
}

fn render_table(result: &QueryResult) -> String {
    let rows = rows(result);
    let mut widths: Vec<usize> = result.columns.iter().map(|c| c.chars().count()).collect();
    for r in &rows {
        for (i, v) in r.iter().enumerate() {
            widths[i] = widths[i].max(v.chars().count());
        }
    }
    let line = |cells: &[String]| {
        let parts: Vec<String> = cells
            .iter()
            .enumerate()
            .map(|(i, c)| format!("{c:<w$}", w = widths[i]))
            .collect();
        format!("| {} |", parts.join(" | "))
    };
    let sep = format!(
        "+{}+",
        widths
            .iter()
            .map(|w| "-".repeat(w + 2))
            .collect::<Vec<_>>()
            .join("+")
    );
    let mut out = vec![sep.clone(), line(&result.columns), sep.clone()];
    for r in &rows {
        out.push(line(r));
    }
    out.push(sep);
    out.push(format!(
        "{} row{}",
        rows.len(),
        if rows.len() == 1 { "" } else { "s" }
    ));
    out.join("\n") + "\n"
}

fn csv_field(s: &str) -> String {
    if s.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

fn render_csv(result: &QueryResult) -> String {
    let mut out = String::new();
    out.push_str(
        &result
            .columns
            .iter()
            .map(|c| csv_field(c))
            .collect::<Vec<_>>()
            .join(","),
    );
    out.push('\n');
    for r in rows(result) {
        out.push_str(&r.iter().map(|c| csv_field(c)).collect::<Vec<_>>().join(","));
        out.push('\n');
    }
    out
}

fn render_json(result: &QueryResult) -> String {
    let mut rows = Vec::new();
    for b in &result.batches {
        for r in 0..b.num_rows() {
            let mut obj = serde_json::Map::new();
            for (c, name) in result.columns.iter().enumerate() {
                obj.insert(name.clone(), to_json(b.column(c).as_ref(), r));
            }
            rows.push(serde_json::Value::Object(obj));
        }
    }
    let text = serde_json::to_string_pretty(&serde_json::Value::Array(rows)).unwrap_or_default();
    value::restore_non_finite(&text) + "\n"
}
