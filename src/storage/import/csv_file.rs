//! CSV files as the import reads them: the header, each column's type (declared by a
//! neo4j-admin header or inferred from the first rows), and the rows as Arrow batches whose
//! errors name the file, the line and the column.

use crate::error::{Error, Result};
use arrow::array::{
    ArrayRef, BooleanBuilder, Date32Builder, Float64Builder, Int64Builder, ListArray, RecordBatch,
    RecordBatchOptions, RecordBatchReader, StringBuilder, TimestampMicrosecondArray,
    TimestampMillisecondArray, TimestampNanosecondArray, TimestampSecondArray,
};
use arrow::buffer::{NullBuffer, OffsetBuffer};
use arrow::datatypes::{DataType, Field, Schema, SchemaRef, TimeUnit};
use arrow::error::ArrowError;
use chrono::{NaiveDate, NaiveDateTime, NaiveTime, TimeDelta};
use std::collections::BTreeSet;
use std::fs::File;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// Rows read to infer a column's type (and a datetime column's offset and precision).
pub(super) const SAMPLE_ROWS: usize = 10_000;

/// Cells a batch holds at most (rows x columns): the builders hold a batch of every column, so
/// wide files read fewer rows at a time.
const CELLS_PER_BATCH: usize = 1 << 20;

/// How the CSV files of an import are read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CsvFormat {
    /// Between fields: `,`, or `|` in LDBC's and LSQB's files.
    pub delimiter: u8,
    /// Between the values of an array field (`tags:string[]`) and the labels of a `:LABEL`
    /// field.
    pub array_delimiter: char,
}

impl Default for CsvFormat {
    fn default() -> Self {
        Self {
            delimiter: b',',
            array_delimiter: ';',
        }
    }
}

impl CsvFormat {
    /// A reader of `path`'s records, past its header.
    fn reader(&self, path: &Path) -> Result<csv::Reader<File>> {
        let f = File::open(path).map_err(|e| Error::io("open", path, e))?;
        Ok(csv::ReaderBuilder::new()
            .delimiter(self.delimiter)
            .from_reader(f))
    }
}

/// The names of `path`'s header fields (a byte-order mark before the first left out).
pub(super) fn header(path: &Path, format: &CsvFormat) -> Result<Vec<String>> {
    let mut r = format.reader(path)?;
    let h = r.byte_headers().map_err(|e| Error::input(path, e))?;
    super::check_width(path, h.len())?;
    h.iter()
        .enumerate()
        .map(|(i, f)| {
            let f = match i {
                0 => f.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(f),
                _ => f,
            };
            String::from_utf8(f.to_vec()).map_err(|_| {
                Error::input(path, format!("header field {} is not UTF-8 text", i + 1))
            })
        })
        .collect()
}

/// A column's type as a neo4j-admin header declares it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Declared {
    Text,
    Int,
    Float,
    Bool,
    Date,
    DateTime,
    LocalDateTime,
}

/// A column to read: its field, its name, its declared type if any (`true`: an array, its
/// values split by the array delimiter).
#[derive(Debug, Clone)]
pub(super) struct ColumnSpec {
    pub index: usize,
    pub name: String,
    pub declared: Option<(Declared, bool)>,
}

/// A column as it is read: its field, its name, its values' type.
#[derive(Debug, Clone)]
pub(super) struct CsvColumn {
    pub index: usize,
    pub name: String,
    pub cell: Cell,
    /// The header declared the type (else it was inferred), for messages.
    pub declared: bool,
}

/// The type of a column's values.
#[derive(Debug, Clone, PartialEq)]
pub(super) enum Cell {
    Text,
    Int,
    Float,
    Bool,
    Date,
    Stamp(Stamp),
    /// Values split by the array delimiter.
    List(Box<Cell>),
}

/// How a datetime column holds its values.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Stamp {
    pub unit: TimeUnit,
    pub zone: Zoning,
    /// A value without an offset is at UTC (a `datetime` a neo4j-admin header declares, as
    /// neo4j-admin reads it); else a zoned column refuses it.
    pub bare_utc: bool,
}

/// The zone of a datetime column.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Zoning {
    /// Wall-clock times without an offset (Cypher's LocalDateTime).
    Local,
    /// Every value at this offset (seconds east of UTC), kept as its instant in that zone.
    Fixed(i32),
    /// Values at several offsets: each instant kept, in UTC.
    Instants,
}

impl Zoning {
    /// The Arrow zone of the column: a zoned Timestamp reads as a Cypher DateTime.
    fn name(self) -> Option<String> {
        match self {
            Zoning::Local => None,
            Zoning::Fixed(o) => Some(offset_name(o)),
            Zoning::Instants => Some(offset_name(0)),
        }
    }
}

impl Cell {
    pub(super) fn data_type(&self) -> DataType {
        match self {
            Cell::Text => DataType::Utf8,
            Cell::Int => DataType::Int64,
            Cell::Float => DataType::Float64,
            Cell::Bool => DataType::Boolean,
            Cell::Date => DataType::Date32,
            Cell::Stamp(s) => DataType::Timestamp(s.unit, s.zone.name().map(Arc::from)),
            Cell::List(inner) => {
                DataType::List(Arc::new(Field::new_list_field(inner.data_type(), true)))
            }
        }
    }

    /// The type as the import reports it.
    pub(super) fn describe(&self) -> String {
        match self {
            Cell::Text => "string".into(),
            Cell::Int => "integer".into(),
            Cell::Float => "float".into(),
            Cell::Bool => "boolean".into(),
            Cell::Date => "date".into(),
            Cell::Stamp(s) => match s.zone.name() {
                None => "localdatetime".into(),
                Some(z) => format!("datetime ({z})"),
            },
            Cell::List(inner) => format!("list of {}", inner.describe()),
        }
    }
}

/// The Arrow schema of `columns`.
pub(super) fn schema(columns: &[CsvColumn]) -> SchemaRef {
    Arc::new(Schema::new(
        columns
            .iter()
            .map(|c| Field::new(&c.name, c.cell.data_type(), true))
            .collect::<Vec<_>>(),
    ))
}

/// `+HH:MM` for an offset in seconds east of UTC.
fn offset_name(secs: i32) -> String {
    let sign = if secs < 0 { '-' } else { '+' };
    let a = secs.unsigned_abs();
    format!("{sign}{:02}:{:02}", a / 3600, a % 3600 / 60)
}

/// Kinds of values inference saw in a column (bits).
const BOOL: u8 = 1;
const INT: u8 = 2;
const FLOAT: u8 = 4;
const DATE: u8 = 8;
const STAMP: u8 = 16;
const TEXT: u8 = 32;

/// What a column's first rows hold.
#[derive(Default)]
struct Seen {
    kinds: u8,
    offsets: BTreeSet<i32>,
    /// The first datetime (or date) without an offset, and the first with one: line, text.
    bare: Option<(u64, String)>,
    zoned: Option<(u64, String)>,
    /// The most significant fractional digits of a second.
    digits: u8,
}

impl Seen {
    fn infer(&mut self, s: &str, line: u64) {
        let kind = if is_bool(s) {
            BOOL
        } else if is_int(s) {
            INT
        } else if is_float(s) {
            FLOAT
        } else if parse_date(s).is_some() {
            self.note(None, 0, s, line);
            DATE
        } else if let Some(v) = parse_datetime(s) {
            self.note(v.offset, v.digits, s, line);
            STAMP
        } else {
            TEXT
        };
        self.kinds |= kind;
    }

    fn note(&mut self, offset: Option<i32>, digits: u8, s: &str, line: u64) {
        match offset {
            Some(o) => {
                self.offsets.insert(o);
                if self.zoned.is_none() {
                    self.zoned = Some((line, s.to_string()));
                }
            }
            None => {
                if self.bare.is_none() {
                    self.bare = Some((line, s.to_string()));
                }
            }
        }
        self.digits = self.digits.max(digits);
    }
}

/// Reads the first [`SAMPLE_ROWS`] rows of `path` and decides each column's type: a declared
/// one as declared (a datetime's zone and precision from its values), any other from its
/// values. Returns the columns and the warnings to report.
pub(super) fn decide(
    path: &Path,
    format: &CsvFormat,
    specs: &[ColumnSpec],
) -> Result<(Vec<CsvColumn>, Vec<String>)> {
    let mut r = format.reader(path)?;
    let mut seen: Vec<Seen> = specs.iter().map(|_| Seen::default()).collect();
    let mut record = csv::ByteRecord::new();
    let mut rows = 0;
    while rows < SAMPLE_ROWS
        && r.read_byte_record(&mut record)
            .map_err(|e| Error::input(path, e))?
    {
        rows += 1;
        let line = line_of(&record);
        for (spec, seen) in specs.iter().zip(&mut seen) {
            let s = field(&record, spec.index).map_err(|why| {
                Error::input(path, format!("line {line}, column `{}`: {why}", spec.name))
            })?;
            if s.is_empty() {
                continue;
            }
            match spec.declared {
                None => seen.infer(s, line),
                Some((Declared::DateTime | Declared::LocalDateTime, array)) => {
                    let values: Vec<&str> = match array {
                        true => s
                            .split(format.array_delimiter)
                            .map(str::trim)
                            .filter(|v| !v.is_empty())
                            .collect(),
                        false => vec![s.trim()],
                    };
                    for v in values {
                        let Some(st) = parse_stamp(v) else {
                            return Err(cell_error(
                                path,
                                line,
                                &spec.name,
                                v,
                                "is not a datetime",
                                true,
                            ));
                        };
                        seen.note(st.offset, st.digits, v, line);
                    }
                }
                Some(_) => {}
            }
        }
    }
    let mut warnings = Vec::new();
    let mut columns = Vec::with_capacity(specs.len());
    for (spec, seen) in specs.iter().zip(&seen) {
        let cell = match spec.declared {
            None => inferred(path, spec, seen, &mut warnings)?,
            Some((d, array)) => {
                let c = declared(path, spec, d, seen, &mut warnings)?;
                match array {
                    true => Cell::List(Box::new(c)),
                    false => c,
                }
            }
        };
        columns.push(CsvColumn {
            index: spec.index,
            name: spec.name.clone(),
            cell,
            declared: spec.declared.is_some(),
        });
    }
    Ok((columns, warnings))
}

/// The unit that keeps `digits` fractional digits of a second: microseconds (their range
/// spans any year), nanoseconds where the values have them.
fn unit(digits: u8) -> TimeUnit {
    match digits {
        0..=6 => TimeUnit::Microsecond,
        _ => TimeUnit::Nanosecond,
    }
}

/// The type of a column the header declares: a datetime's zone from the values seen.
fn declared(
    path: &Path,
    spec: &ColumnSpec,
    d: Declared,
    seen: &Seen,
    warnings: &mut Vec<String>,
) -> Result<Cell> {
    Ok(match d {
        Declared::Text => Cell::Text,
        Declared::Int => Cell::Int,
        Declared::Float => Cell::Float,
        Declared::Bool => Cell::Bool,
        Declared::Date => Cell::Date,
        Declared::LocalDateTime => {
            if let Some((line, v)) = &seen.zoned {
                return Err(cell_error(
                    path,
                    *line,
                    &spec.name,
                    v,
                    "has an offset, but a localdatetime has none",
                    true,
                ));
            }
            Cell::Stamp(Stamp {
                unit: unit(seen.digits),
                zone: Zoning::Local,
                bare_utc: false,
            })
        }
        Declared::DateTime => {
            let mut offsets = seen.offsets.clone();
            if seen.bare.is_some() {
                offsets.insert(0);
            }
            let zone = match offsets.len() {
                // Nothing seen: any instant is kept.
                0 => Zoning::Instants,
                1 => Zoning::Fixed(offsets.first().copied().unwrap_or(0)),
                _ => {
                    warnings.push(mixed_warning(path, &spec.name, &offsets));
                    Zoning::Instants
                }
            };
            Cell::Stamp(Stamp {
                unit: unit(seen.digits),
                zone,
                bare_utc: true,
            })
        }
    })
}

/// The type inferred from a column's values: a boolean, an integer, a float, a date, a datetime
/// (with the zone its values share, or UTC where they are at several offsets), else a string.
fn inferred(
    path: &Path,
    spec: &ColumnSpec,
    seen: &Seen,
    warnings: &mut Vec<String>,
) -> Result<Cell> {
    let k = seen.kinds;
    let only = |mask: u8| k & !mask == 0;
    if k == 0 || k & TEXT != 0 {
        return Ok(Cell::Text);
    }
    Ok(if k == BOOL {
        Cell::Bool
    } else if k == INT {
        Cell::Int
    } else if only(INT | FLOAT) {
        Cell::Float
    } else if k == DATE {
        Cell::Date
    } else if only(DATE | STAMP) {
        let zone = match (&seen.bare, &seen.zoned) {
            (Some((bl, bv)), Some((zl, zv))) => {
                // The later of the two breaks the column's pattern.
                let (line, value, what, other_line, other) = match bl > zl {
                    true => (bl, bv, "has no offset", zl, zv),
                    false => (zl, zv, "has an offset", bl, bv),
                };
                return Err(Error::input(
                    path,
                    format!(
                        "line {line}, column `{}`: `{value}` {what}, unlike `{other}` on line \
                         {other_line}; a column's datetimes must all have an offset or all \
                         have none (nothing is shifted to make them agree)",
                        spec.name
                    ),
                ));
            }
            (_, None) => Zoning::Local,
            (None, Some(_)) => match seen.offsets.len() {
                1 => Zoning::Fixed(seen.offsets.first().copied().unwrap_or(0)),
                _ => {
                    warnings.push(mixed_warning(path, &spec.name, &seen.offsets));
                    Zoning::Instants
                }
            },
        };
        Cell::Stamp(Stamp {
            unit: unit(seen.digits),
            zone,
            bare_utc: false,
        })
    } else {
        Cell::Text
    })
}

fn mixed_warning(path: &Path, column: &str, offsets: &BTreeSet<i32>) -> String {
    let list: Vec<String> = offsets.iter().map(|&o| offset_name(o)).collect();
    format!(
        "warning: {}: column `{column}` holds datetimes at several offsets ({}); each \
         instant is kept, shown at +00:00 (UTC)",
        path.display(),
        list.join(", ")
    )
}

/// A cell its column's type can't hold: the line, the column, the value and why.
fn cell_error(
    path: &Path,
    line: u64,
    column: &str,
    value: &str,
    why: &str,
    declared: bool,
) -> Error {
    let value: String = match value.chars().count() > 60 {
        true => value.chars().take(57).collect::<String>() + "...",
        false => value.to_string(),
    };
    let typed = match declared {
        true => "the type its header declares".to_string(),
        false => format!("the type inferred from the first {SAMPLE_ROWS} rows"),
    };
    Error::input(
        path,
        format!("line {line}, column `{column}`: `{value}` {why} ({typed})"),
    )
}

/// The line a record starts on.
fn line_of(record: &csv::ByteRecord) -> u64 {
    record.position().map_or(0, |p| p.line())
}

/// Field `i` of `record` as text.
fn field(record: &csv::ByteRecord, i: usize) -> std::result::Result<&str, &'static str> {
    std::str::from_utf8(record.get(i).unwrap_or_default()).map_err(|_| "not UTF-8 text")
}

/// The rows of a CSV file as batches of `columns`, read as they are asked for.
pub(super) struct CsvRows {
    path: PathBuf,
    reader: csv::Reader<File>,
    columns: Vec<CsvColumn>,
    array_delimiter: char,
    schema: SchemaRef,
    batch_rows: usize,
    record: csv::ByteRecord,
    done: bool,
}

impl CsvRows {
    pub(super) fn open(path: &Path, format: &CsvFormat, columns: Vec<CsvColumn>) -> Result<Self> {
        Ok(Self {
            path: path.to_path_buf(),
            reader: format.reader(path)?,
            array_delimiter: format.array_delimiter,
            schema: schema(&columns),
            batch_rows: (CELLS_PER_BATCH / columns.len().max(1)).clamp(1, 8192),
            record: csv::ByteRecord::new(),
            done: false,
            columns,
        })
    }

    fn batch(&mut self) -> Result<Option<RecordBatch>> {
        let mut built: Vec<Column> = (self.columns.iter())
            .map(|c| Column::new(&c.cell, self.batch_rows))
            .collect();
        let mut rows = 0;
        while rows < self.batch_rows {
            let more = (self.reader)
                .read_byte_record(&mut self.record)
                .map_err(|e| Error::input(&self.path, e))?;
            if !more {
                self.done = true;
                break;
            }
            rows += 1;
            let line = line_of(&self.record);
            for (c, b) in self.columns.iter().zip(&mut built) {
                let s = field(&self.record, c.index).map_err(|why| {
                    Error::input(
                        &self.path,
                        format!("line {line}, column `{}`: {why}", c.name),
                    )
                })?;
                b.push(s, self.array_delimiter)
                    .map_err(|why| cell_error(&self.path, line, &c.name, s, &why, c.declared))?;
            }
        }
        if rows == 0 {
            return Ok(None);
        }
        let arrays = built
            .into_iter()
            .map(Column::finish)
            .collect::<Result<Vec<_>>>()?;
        let options = RecordBatchOptions::new().with_row_count(Some(rows));
        Ok(Some(RecordBatch::try_new_with_options(
            self.schema.clone(),
            arrays,
            &options,
        )?))
    }
}

impl Iterator for CsvRows {
    type Item = std::result::Result<RecordBatch, ArrowError>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.done {
            return None;
        }
        match self.batch() {
            Ok(b) => b.map(Ok),
            Err(e) => {
                self.done = true;
                Some(Err(super::to_arrow(e)))
            }
        }
    }
}

impl RecordBatchReader for CsvRows {
    fn schema(&self) -> SchemaRef {
        self.schema.clone()
    }
}

/// The values of one column of a batch being read.
enum Column {
    Text(StringBuilder),
    Int(Int64Builder),
    Float(Float64Builder),
    Bool(BooleanBuilder),
    Date(Date32Builder),
    Stamp(Stamp, Vec<Option<i64>>),
    List {
        values: Box<Column>,
        lengths: Vec<usize>,
        valid: Vec<bool>,
    },
}

impl Column {
    fn new(cell: &Cell, rows: usize) -> Self {
        match cell {
            Cell::Text => Column::Text(StringBuilder::with_capacity(rows, rows * 16)),
            Cell::Int => Column::Int(Int64Builder::with_capacity(rows)),
            Cell::Float => Column::Float(Float64Builder::with_capacity(rows)),
            Cell::Bool => Column::Bool(BooleanBuilder::with_capacity(rows)),
            Cell::Date => Column::Date(Date32Builder::with_capacity(rows)),
            Cell::Stamp(s) => Column::Stamp(*s, Vec::with_capacity(rows)),
            Cell::List(inner) => Column::List {
                values: Box::new(Column::new(inner, rows)),
                lengths: Vec::with_capacity(rows),
                valid: Vec::with_capacity(rows),
            },
        }
    }

    fn push_null(&mut self) {
        match self {
            Column::Text(b) => b.append_null(),
            Column::Int(b) => b.append_null(),
            Column::Float(b) => b.append_null(),
            Column::Bool(b) => b.append_null(),
            Column::Date(b) => b.append_null(),
            Column::Stamp(_, v) => v.push(None),
            Column::List { lengths, valid, .. } => {
                lengths.push(0);
                valid.push(false);
            }
        }
    }

    /// Appends cell `s` (empty: null); `Err`: why the column's type can't hold it. Text is
    /// kept as it is; other values may have spaces around them.
    fn push(&mut self, s: &str, array_delimiter: char) -> std::result::Result<(), String> {
        if s.is_empty() {
            self.push_null();
            return Ok(());
        }
        let t = s.trim();
        match self {
            Column::Text(b) => b.append_value(s),
            Column::Int(b) => b.append_value(t.parse::<i64>().map_err(|_| "is not an integer")?),
            Column::Float(b) => b.append_value(t.parse::<f64>().map_err(|_| "is not a float")?),
            Column::Bool(b) => {
                b.append_value(parse_bool(t).ok_or("is not a boolean (true or false)")?)
            }
            Column::Date(b) => {
                let d = parse_date(t).ok_or("is not a date (YYYY-MM-DD)")?;
                // Days since 1970-01-01 (day 719,163 of the common era).
                b.append_value(chrono::Datelike::num_days_from_ce(&d) - 719_163)
            }
            Column::Stamp(st, v) => v.push(Some(stamp_value(t, st)?)),
            Column::List {
                values,
                lengths,
                valid,
            } => {
                let mut n = 0;
                for e in s.split(array_delimiter) {
                    match values.as_mut() {
                        Column::Text(b) => b.append_value(e),
                        v => v.push(e.trim(), array_delimiter)?,
                    }
                    n += 1;
                }
                lengths.push(n);
                valid.push(true);
            }
        }
        Ok(())
    }

    fn finish(self) -> Result<ArrayRef> {
        Ok(match self {
            Column::Text(mut b) => Arc::new(b.finish()),
            Column::Int(mut b) => Arc::new(b.finish()),
            Column::Float(mut b) => Arc::new(b.finish()),
            Column::Bool(mut b) => Arc::new(b.finish()),
            Column::Date(mut b) => Arc::new(b.finish()),
            Column::Stamp(st, v) => stamp_array(&st, v),
            Column::List {
                values,
                lengths,
                valid,
            } => {
                let values = (*values).finish()?;
                let item = Arc::new(Field::new_list_field(values.data_type().clone(), true));
                Arc::new(ListArray::try_new(
                    item,
                    OffsetBuffer::from_lengths(lengths),
                    values,
                    Some(NullBuffer::from(valid)),
                )?)
            }
        })
    }
}

fn stamp_array(st: &Stamp, v: Vec<Option<i64>>) -> ArrayRef {
    let zone = st.zone.name();
    match st.unit {
        TimeUnit::Second => Arc::new(TimestampSecondArray::from(v).with_timezone_opt(zone)),
        TimeUnit::Millisecond => {
            Arc::new(TimestampMillisecondArray::from(v).with_timezone_opt(zone))
        }
        TimeUnit::Microsecond => {
            Arc::new(TimestampMicrosecondArray::from(v).with_timezone_opt(zone))
        }
        TimeUnit::Nanosecond => Arc::new(TimestampNanosecondArray::from(v).with_timezone_opt(zone)),
    }
}

/// What a datetime cell holds, in the column's unit: its instant, or in a local column its
/// wall-clock time (as Arrow keeps those, at UTC). A value whose offset the column can't show
/// as it is, or whose precision it can't keep, is refused: nothing is shifted silently.
fn stamp_value(s: &str, st: &Stamp) -> std::result::Result<i64, String> {
    let v =
        parse_stamp(s).ok_or("is not a datetime (YYYY-MM-DDTHH:MM:SS, with an offset or not)")?;
    let offset = match v.offset {
        None if st.bare_utc => Some(0),
        o => o,
    };
    let offset = match (st.zone, offset) {
        (Zoning::Local, None) => 0,
        (Zoning::Local, Some(_)) => {
            return Err("has an offset, but the column's datetimes have none".into())
        }
        (_, None) => return Err("has no offset, but the column's datetimes have one".into()),
        (Zoning::Fixed(z), Some(o)) if o != z => {
            return Err(format!(
                "is at {}, but the column's datetimes are at {} (the offset of its first rows)",
                offset_name(o),
                offset_name(z)
            ))
        }
        (_, Some(o)) => o,
    };
    let places = match st.unit {
        TimeUnit::Second => 0,
        TimeUnit::Millisecond => 3,
        TimeUnit::Microsecond => 6,
        TimeUnit::Nanosecond => 9,
    };
    if v.digits > places {
        return Err(format!(
            "has more fractional digits of a second than the column keeps ({places})"
        ));
    }
    let at = (v.local)
        .checked_sub_signed(TimeDelta::seconds(offset as i64))
        .ok_or("is out of range")?
        .and_utc();
    match st.unit {
        TimeUnit::Second => Ok(at.timestamp()),
        TimeUnit::Millisecond => Ok(at.timestamp_millis()),
        TimeUnit::Microsecond => Ok(at.timestamp_micros()),
        TimeUnit::Nanosecond => at.timestamp_nanos_opt().ok_or_else(|| {
            "is out of the range of datetimes in nanoseconds (years 1677 to 2262)".to_string()
        }),
    }
}

fn is_bool(s: &str) -> bool {
    parse_bool(s).is_some()
}

fn parse_bool(s: &str) -> Option<bool> {
    if s.eq_ignore_ascii_case("true") {
        Some(true)
    } else if s.eq_ignore_ascii_case("false") {
        Some(false)
    } else {
        None
    }
}

fn all_digits(s: &str) -> bool {
    s.bytes().all(|b| b.is_ascii_digit())
}

/// `-?\d+` that fits an i64 (Arrow's inference: a longer number is text).
fn is_int(s: &str) -> bool {
    let d = s.strip_prefix('-').unwrap_or(s);
    !d.is_empty() && all_digits(d) && s.parse::<i64>().is_ok()
}

/// A decimal point or an exponent, as Arrow's inference reads floats: `-?(\d*\.\d+|\d+\.\d*)`
/// or `-?\d+`, then `[eE][-+]?\d+` (needed without the point); `NaN`, `nan`, `inf`, `-inf`.
fn is_float(s: &str) -> bool {
    if matches!(s, "NaN" | "nan" | "inf" | "-inf") {
        return true;
    }
    let d = s.strip_prefix('-').unwrap_or(s);
    let (mantissa, exponent) = match d.find(['e', 'E']) {
        Some(i) => (&d[..i], Some(&d[i + 1..])),
        None => (d, None),
    };
    let exponent_ok = exponent.is_none_or(|e| {
        let e = e.strip_prefix(['+', '-']).unwrap_or(e);
        !e.is_empty() && all_digits(e)
    });
    let (int, frac) = match mantissa.split_once('.') {
        Some((a, b)) => (a, Some(b)),
        None => (mantissa, None),
    };
    let mantissa_ok =
        all_digits(int) && frac.is_none_or(all_digits) && int.len() + frac.map_or(0, str::len) > 0;
    exponent_ok && mantissa_ok && (frac.is_some() || exponent.is_some())
}

/// Digits only, as a number.
fn num(s: &str) -> Option<u32> {
    match !s.is_empty() && all_digits(s) {
        true => s.parse().ok(),
        false => None,
    }
}

/// `YYYY-MM-DD`.
fn parse_date(s: &str) -> Option<NaiveDate> {
    let b = s.as_bytes();
    if !s.is_ascii() || b.len() != 10 || b[4] != b'-' || b[7] != b'-' {
        return None;
    }
    NaiveDate::from_ymd_opt(num(&s[..4])? as i32, num(&s[5..7])?, num(&s[8..])?)
}

/// A datetime as written: its wall-clock time, its offset if it has one, and the significant
/// fractional digits of its second.
struct Stamped {
    local: NaiveDateTime,
    offset: Option<i32>,
    digits: u8,
}

/// `YYYY-MM-DD[T ]HH:MM[:SS[.fraction]]`, then `Z`, `±HH:MM`, `±HHMM`, `±HH` or nothing.
fn parse_datetime(s: &str) -> Option<Stamped> {
    let b = s.as_bytes();
    if !s.is_ascii() || b.len() < 16 {
        return None;
    }
    let date = parse_date(&s[..10])?;
    if !matches!(b[10], b'T' | b't' | b' ') || b[13] != b':' {
        return None;
    }
    let (hour, minute) = (num(&s[11..13])?, num(&s[14..16])?);
    let mut i = 16;
    let (mut second, mut nanos, mut digits) = (0, 0u32, 0u8);
    if b.get(i) == Some(&b':') {
        second = num(s.get(i + 1..i + 3)?)?;
        i += 3;
        if matches!(b.get(i), Some(&b'.') | Some(&b',')) {
            let start = i + 1;
            let end = start + b[start..].iter().take_while(|c| c.is_ascii_digit()).count();
            if end == start {
                return None;
            }
            let frac = &b[start..end];
            // Significant: up to the last digit that is not zero.
            digits = frac
                .iter()
                .rposition(|&c| c != b'0')
                .map_or(0, |p| (p + 1).min(u8::MAX as usize) as u8);
            for k in 0..9 {
                nanos = nanos * 10 + frac.get(k).map_or(0, |c| (c - b'0') as u32);
            }
            i = end;
        }
    }
    let offset = match &s[i..] {
        "" => None,
        "Z" | "z" => Some(0),
        o => Some(parse_offset(o)?),
    };
    let time = NaiveTime::from_hms_nano_opt(hour, minute, second, nanos)?;
    Some(Stamped {
        local: NaiveDateTime::new(date, time),
        offset,
        digits,
    })
}

/// `±HH:MM`, `±HHMM` or `±HH`: seconds east of UTC.
fn parse_offset(s: &str) -> Option<i32> {
    let sign = match s.as_bytes().first()? {
        b'+' => 1,
        b'-' => -1,
        _ => return None,
    };
    let rest = &s[1..];
    let (h, m) = match rest.len() {
        2 => (rest, "00"),
        4 => (&rest[..2], &rest[2..]),
        5 if rest.as_bytes()[2] == b':' => (&rest[..2], &rest[3..]),
        _ => return None,
    };
    let (h, m) = (num(h)?, num(m)?);
    (h < 24 && m < 60).then_some(sign * (h * 3600 + m * 60) as i32)
}

/// A datetime, or a date (at midnight, without an offset).
fn parse_stamp(s: &str) -> Option<Stamped> {
    parse_datetime(s).or_else(|| {
        let local = parse_date(s)?.and_hms_opt(0, 0, 0)?;
        Some(Stamped {
            local,
            offset: None,
            digits: 0,
        })
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn datetimes_keep_their_offsets_and_precision() {
        let v = parse_datetime("2010-03-13T02:10:23.099+00:00").unwrap();
        assert_eq!((v.offset, v.digits), (Some(0), 3));
        let v = parse_datetime("2010-03-13 02:10:23.120000-0530").unwrap();
        assert_eq!((v.offset, v.digits), (Some(-(5 * 3600 + 30 * 60)), 2));
        let v = parse_datetime("2010-03-13T02:10").unwrap();
        assert_eq!((v.offset, v.digits), (None, 0));
        assert!(parse_datetime("2010-03-13T02:10:23+25:00").is_none());
        assert!(parse_datetime("2010-03-13T02:10:23 UTC").is_none());
        assert!(parse_datetime("2010-02-30T02:10:23").is_none());
    }

    #[test]
    fn inference_reads_numbers_as_arrow_does() {
        assert!(is_int("-12") && !is_int("+12") && !is_int("99999999999999999999"));
        for f in ["1.5", ".5", "5.", "-1e5", "1E+3", "NaN", "-inf"] {
            assert!(is_float(f), "{f}");
        }
        for f in ["1", "1e", ".", "e5", "1.2.3", "infinity"] {
            assert!(!is_float(f), "{f}");
        }
    }

    #[test]
    fn a_value_is_refused_rather_than_shifted() {
        let at = |zone, bare_utc| Stamp {
            unit: TimeUnit::Microsecond,
            zone,
            bare_utc,
        };
        let fixed = at(Zoning::Fixed(3600), false);
        assert_eq!(stamp_value("1970-01-01T01:00:00+01:00", &fixed), Ok(0));
        assert!(stamp_value("1970-01-01T01:00:00+02:00", &fixed).is_err());
        assert!(stamp_value("1970-01-01T01:00:00", &fixed).is_err());
        assert_eq!(
            stamp_value("1970-01-01T00:00:01", &at(Zoning::Instants, true)),
            Ok(1_000_000)
        );
        assert!(stamp_value("1970-01-01T00:00:00Z", &at(Zoning::Local, false)).is_err());
        assert!(stamp_value("1970-01-01T00:00:00.1234567Z", &at(Zoning::Instants, false)).is_err());
    }
}
