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

/// The table format: a box of ASCII lines (the one arrow's pretty printer draws), columns as
/// wide as their widest value in terminal cells (CJK and emoji count two), then the row count.
fn render_table(result: &QueryResult) -> String {
    let rows = rows(result);
    let mut table = comfy_table::Table::new();
    table
        .load_preset("||--+-++|    ++++++")
        .set_header(result.columns.iter().map(comfy_table::Cell::new));
    for r in &rows {
        table.add_row(r.iter().map(comfy_table::Cell::new));
    }
    format!(
        "{table}\n{} row{}\n",
        rows.len(),
        if rows.len() == 1 { "" } else { "s" }
    )
}

/// One CSV record (RFC 4180 quoting: fields with a comma, quote or line break are quoted).
fn csv_record<'a>(fields: impl IntoIterator<Item = &'a str>) -> String {
    let mut w = csv::WriterBuilder::new()
        .terminator(csv::Terminator::Any(b'\n'))
        .from_writer(Vec::new());
    // Writing to memory does not fail, nor does UTF-8 text stop being UTF-8.
    let _ = w.write_record(fields);
    String::from_utf8(w.into_inner().unwrap_or_default()).unwrap_or_default()
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
            Format::Csv => csv_record(self.columns.iter().map(String::as_str)),
            _ => String::new(),
        }
    }

    /// The rows of `b`.
    pub fn batch(&mut self, b: &arrow::array::RecordBatch) -> String {
        let mut out = String::new();
        for r in 0..b.num_rows() {
            if self.format == Format::Csv {
                out.push_str(&csv_record(cells(b, r).iter().map(String::as_str)));
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

#[cfg(test)]
mod tests {
    use super::*;
    use arrow::array::{Int64Array, StringArray};
    use arrow::datatypes::{DataType, Field, Schema};
    use std::sync::Arc;

    fn result(names: Vec<Option<&str>>, ids: Vec<i64>) -> QueryResult {
        let schema = Arc::new(Schema::new(vec![
            Field::new("name", DataType::Utf8, true),
            Field::new("n.id", DataType::Int64, false),
        ]));
        let batch = RecordBatch::try_new(
            schema.clone(),
            vec![
                Arc::new(StringArray::from(names)),
                Arc::new(Int64Array::from(ids)),
            ],
        )
        .unwrap();
        QueryResult {
            columns: vec!["name".into(), "n.id".into()],
            schema,
            batches: vec![batch],
        }
    }

    #[test]
    fn table_columns_align_in_terminal_cells() {
        // Wide characters take two cells: `日本` is as wide as `name`.
        let r = result(vec![Some("日本"), Some("ab"), None], vec![1, 22, 3]);
        assert_eq!(
            render(&r, Format::Table),
            "+------+------+\n\
             | name | n.id |\n\
             +------+------+\n\
             | 日本 | 1    |\n\
             | ab   | 22   |\n\
             | null | 3    |\n\
             +------+------+\n\
             3 rows\n"
        );
    }

    #[test]
    fn csv_quotes_what_needs_quoting() {
        let r = result(
            vec![
                Some("a,b"),
                Some("say \"hi\""),
                Some("two\nlines"),
                Some("plain"),
            ],
            vec![1, 2, 3, 4],
        );
        assert_eq!(
            render(&r, Format::Csv),
            "name,n.id\n\"a,b\",1\n\"say \"\"hi\"\"\",2\n\"two\nlines\",3\nplain,4\n"
        );
    }
}
