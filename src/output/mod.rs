//! Rendering results: Cypher-style values, and table / CSV / JSON output.

pub mod value;

use arrow::array::RecordBatch;
use arrow::datatypes::SchemaRef;
use value::{render_cell, to_json};

/// The answer to a query: Cypher column names and Arrow batches.
#[derive(Debug, Clone)]
pub struct QueryResult {
    pub columns: Vec<String>,
    pub schema: SchemaRef,
    pub batches: Vec<RecordBatch>,
}

impl QueryResult {
    pub fn num_rows(&self) -> usize {
        self.batches.iter().map(|b| b.num_rows()).sum()
    }
}

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
            out.push(cells(b, r));
        }
    }
    out
}

/// Row `r` of `b`, rendered (top-level strings unquoted).
fn cells(b: &RecordBatch, r: usize) -> Vec<String> {
    (0..b.num_columns())
        .map(|c| render_cell(b.column(c).as_ref(), r, false))
        .collect()
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
    render_streamed(result, Format::Csv)
}

fn render_json(result: &QueryResult) -> String {
    render_streamed(result, Format::Json)
}

fn render_streamed(result: &QueryResult, format: Format) -> String {
    let mut w = RowWriter::new(format, &result.columns).expect("a streamed format");
    let mut out = w.header();
    for b in &result.batches {
        out.push_str(&w.batch(b));
    }
    out + &w.finish()
}

/// CSV or JSON text of a result written batch by batch, as the batches come: the output of a
/// big result never holds all its rows.
pub struct RowWriter {
    format: Format,
    columns: Vec<String>,
    rows: usize,
}

impl RowWriter {
    /// `None` for the table format, whose column widths depend on every row.
    pub fn new(format: Format, columns: &[String]) -> Option<Self> {
        (format != Format::Table).then(|| Self {
            format,
            columns: columns.to_vec(),
            rows: 0,
        })
    }

    /// What comes before the rows.
    pub fn header(&self) -> String {
        match self.format {
            Format::Csv => {
                let names: Vec<String> = self.columns.iter().map(|c| csv_field(c)).collect();
                names.join(",") + "\n"
            }
            _ => String::new(),
        }
    }

    /// The rows of `b`.
    pub fn batch(&mut self, b: &arrow::array::RecordBatch) -> String {
        let mut out = String::new();
        for r in 0..b.num_rows() {
            if self.format == Format::Csv {
                let fields: Vec<String> = cells(b, r).iter().map(|c| csv_field(c)).collect();
                out.push_str(&fields.join(","));
                out.push('\n');
            } else {
                let mut obj = serde_json::Map::new();
                for (c, name) in self.columns.iter().enumerate() {
                    obj.insert(name.clone(), to_json(b.column(c).as_ref(), r));
                }
                let text = serde_json::to_string_pretty(&serde_json::Value::Object(obj))
                    .unwrap_or_default();
                // An element of a pretty-printed array: after `[` or `,`, indented by two.
                out.push_str(if self.rows == 0 { "[\n" } else { ",\n" });
                let indented: Vec<String> = text.lines().map(|l| format!("  {l}")).collect();
                out.push_str(&value::restore_non_finite(&indented.join("\n")));
            }
            self.rows += 1;
        }
        out
    }

    /// What comes after the rows.
    pub fn finish(&self) -> String {
        match (self.format, self.rows) {
            (Format::Json, 0) => "[]\n".into(),
            (Format::Json, _) => "\n]\n".into(),
            _ => String::new(),
        }
    }
}
