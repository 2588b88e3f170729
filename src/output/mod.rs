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
#[non_exhaustive]
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
    render_streamed(result, Format::Table)
}

/// A table of `rows` under `columns`, without the row count.
fn table_text(columns: &[String], rows: &[Vec<String>]) -> String {
    let mut table = comfy_table::Table::new();
    table
        .load_preset("||--+-++|    ++++++")
        .set_header(columns.iter().map(comfy_table::Cell::new));
    for r in rows {
        table.add_row(r.iter().map(comfy_table::Cell::new));
    }
    format!("{table}\n")
}

/// Rows the table format holds before it prints them as a table of their own: a result of
/// more rows is printed in several tables (with the same header), so its memory is one page,
/// not the result.
pub const TABLE_PAGE_ROWS: usize = 10_000;
/// The bytes of rendered cells a table page holds at most.
const TABLE_PAGE_BYTES: usize = 16 << 20;

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

/// One row as a pretty-printed JSON object, its keys in the order the columns have (a
/// `serde_json::Map` would sort them).
fn json_row<'a>(cells: impl Iterator<Item = (&'a str, serde_json::Value)>) -> String {
    let mut text = String::from("{");
    for (i, (name, v)) in cells.enumerate() {
        let key = serde_json::Value::String(name.to_string()).to_string();
        let value = serde_json::to_string_pretty(&v).unwrap_or_default();
        text.push_str(if i == 0 { "\n  " } else { ",\n  " });
        text.push_str(&key);
        text.push_str(": ");
        text.push_str(&value.replace('\n', "\n  "));
    }
    text.push_str(if text.len() > 1 { "\n}" } else { "}" });
    text
}

fn render_streamed(result: &QueryResult, format: Format) -> String {
    let mut w = RowWriter::new(format, &result.columns);
    let mut out = w.header();
    for b in &result.batches {
        out.push_str(&w.batch(b));
    }
    out + &w.finish()
}

/// The text of a result written batch by batch, as the batches come: the output of a big
/// result never holds all its rows (CSV and JSON rows go out as they come; the table format
/// holds a page of [`TABLE_PAGE_ROWS`] rows, whose column widths depend on all of them).
pub struct RowWriter {
    format: Format,
    columns: Vec<String>,
    rows: usize,
    /// The table format's rows not printed yet, and their rendered bytes.
    page: Vec<Vec<String>>,
    page_bytes: usize,
}

impl RowWriter {
    pub fn new(format: Format, columns: &[String]) -> Self {
        Self {
            format,
            columns: columns.to_vec(),
            rows: 0,
            page: Vec::new(),
            page_bytes: 0,
        }
    }

    /// What comes before the rows.
    pub fn header(&self) -> String {
        match self.format {
            Format::Csv => csv_record(self.columns.iter().map(String::as_str)),
            _ => String::new(),
        }
    }

    /// The rows of `b` (for the table format: the pages they fill).
    pub fn batch(&mut self, b: &arrow::array::RecordBatch) -> String {
        let mut out = String::new();
        for r in 0..b.num_rows() {
            match self.format {
                Format::Csv => out.push_str(&csv_record(cells(b, r).iter().map(String::as_str))),
                Format::Json => {
                    let text = json_row(
                        self.columns
                            .iter()
                            .enumerate()
                            .map(|(c, name)| (name.as_str(), to_json(b.column(c).as_ref(), r))),
                    );
                    // An element of a pretty-printed array: after `[` or `,`, indented by two.
                    out.push_str(if self.rows == 0 { "[\n" } else { ",\n" });
                    let indented: Vec<String> = text.lines().map(|l| format!("  {l}")).collect();
                    out.push_str(&value::restore_non_finite(&indented.join("\n")));
                }
                Format::Table => {
                    let row = cells(b, r);
                    self.page_bytes += row.iter().map(String::len).sum::<usize>();
                    self.page.push(row);
                    if self.page.len() >= TABLE_PAGE_ROWS || self.page_bytes >= TABLE_PAGE_BYTES {
                        out.push_str(&table_text(&self.columns, &self.page));
                        self.page.clear();
                        self.page_bytes = 0;
                    }
                }
            }
            self.rows += 1;
        }
        out
    }

    /// What comes after the rows.
    pub fn finish(&mut self) -> String {
        match (self.format, self.rows) {
            (Format::Json, 0) => "[]\n".into(),
            (Format::Json, _) => "\n]\n".into(),
            (Format::Table, n) => {
                // The last page (the header alone when there are no rows at all).
                let last = if self.page.is_empty() && n > 0 {
                    String::new()
                } else {
                    table_text(&self.columns, &std::mem::take(&mut self.page))
                };
                format!("{last}{n} row{}\n", if n == 1 { "" } else { "s" })
            }
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

    /// Every kind of list is a JSON array: an embedding column (fixed-size) too.
    #[test]
    fn json_lists_of_every_arrow_kind_are_arrays() {
        use arrow::array::{FixedSizeListArray, Float32Array, ListArray};
        use arrow::datatypes::Float32Type;
        let values = Arc::new(Float32Array::from(vec![0.5, -1.0]));
        let item = Arc::new(Field::new("item", DataType::Float32, true));
        let fixed = FixedSizeListArray::try_new(item, 2, values, None).unwrap();
        let list = ListArray::from_iter_primitive::<Float32Type, _, _>(vec![Some(vec![
            Some(0.5),
            Some(-1.0),
        ])]);
        for a in [&fixed as &dyn arrow::array::Array, &list] {
            assert_eq!(
                value::to_json(a, 0),
                serde_json::json!([0.5, -1.0]),
                "{}",
                a.data_type()
            );
        }
    }

    #[test]
    fn json_rows_keep_the_columns_order() {
        let row = json_row(
            [
                ("zeta", serde_json::json!(1)),
                ("alpha", serde_json::json!({"k": [1, 2]})),
                ("m\"q", serde_json::Value::Null),
            ]
            .into_iter(),
        );
        let back: serde_json::Value = serde_json::from_str(&row).unwrap();
        assert_eq!(
            back,
            serde_json::json!({"zeta": 1, "alpha": {"k": [1, 2]}, "m\"q": null})
        );
        let zeta = row.find("\"zeta\"").unwrap();
        assert!(zeta < row.find("\"alpha\"").unwrap(), "{row}");
        assert_eq!(json_row(std::iter::empty()), "{}");
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
