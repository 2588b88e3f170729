//! List comprehensions (`[x IN list WHERE p | e]`) and list predicates (`all`, `any`, `none`,
//! `single`) as one scalar function: its first argument is the list, the others the outer
//! values the body reads (captured as columns `__o0`, `__o1`, ...); the body is evaluated once
//! per batch over every element of every row (element column named by the planner), with the
//! outer values repeated per element.

use arrow::array::{
    Array, ArrayRef, AsArray, BooleanArray, BooleanBuilder, ListArray, RecordBatch, UInt32Array,
};
use arrow::buffer::OffsetBuffer;
use arrow::datatypes::{DataType, Field, FieldRef, Schema};
use datafusion::common::{DFSchema, Result, ScalarValue};
use datafusion::logical_expr::{
    ColumnarValue, Expr, ReturnFieldArgs, ScalarFunctionArgs, ScalarUDF, ScalarUDFImpl, Signature,
};
use datafusion::physical_expr::{create_physical_expr, PhysicalExpr};
use std::sync::{Arc, OnceLock};

/// Most bytes of outer values a batch may repeat for its elements.
const MAX_REPEATED_BYTES: usize = 1 << 30;

/// What the function computes from the elements.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ListOp {
    /// The (kept, mapped) elements as a list.
    Comprehension,
    All,
    Any,
    None,
    Single,
    /// `reduce`: the body folded over the elements (arguments: the list, the initial value,
    /// the captured values).
    Reduce,
}

#[derive(Debug)]
pub struct ListEval {
    op: ListOp,
    /// Keeps an element (WHERE / the predicate of a quantifier).
    filter: Option<Expr>,
    /// The element's value in the result (`| e`).
    map: Option<Expr>,
    /// Element column, then the captured columns, as the body reads them.
    schema: Arc<DFSchema>,
    out: DataType,
    signature: Signature,
    compiled: OnceLock<(Option<Arc<dyn PhysicalExpr>>, Option<Arc<dyn PhysicalExpr>>)>,
    /// The long list parameters the body names, held until it is compiled.
    _held: super::held::Holding,
}

impl PartialEq for ListEval {
    fn eq(&self, o: &Self) -> bool {
        (self.op, &self.filter, &self.map, &self.out, &self.schema)
            == (o.op, &o.filter, &o.map, &o.out, &o.schema)
    }
}
impl Eq for ListEval {}
impl std::hash::Hash for ListEval {
    fn hash<H: std::hash::Hasher>(&self, h: &mut H) {
        (self.op, &self.filter, &self.map, &self.out).hash(h)
    }
}

impl ListEval {
    /// The call: `list` and the captured outer values, whose types `schema` (element column
    /// first) gives.
    pub fn call(
        op: ListOp,
        filter: Option<Expr>,
        map: Option<Expr>,
        schema: DFSchema,
        out: DataType,
        args: Vec<Expr>,
    ) -> Expr {
        let volatile = filter.iter().chain(map.iter()).any(|e| e.is_volatile());
        let f = ListEval {
            op,
            _held: super::held::named_in(filter.iter().chain(map.iter())),
            filter,
            map,
            schema: Arc::new(schema),
            out,
            signature: super::variadic_signature(volatile),
            compiled: OnceLock::new(),
        };
        Expr::ScalarFunction(datafusion::logical_expr::expr::ScalarFunction::new_udf(
            Arc::new(ScalarUDF::new_from_impl(f)),
            args,
        ))
    }

    fn compiled(&self) -> Result<&(Option<Arc<dyn PhysicalExpr>>, Option<Arc<dyn PhysicalExpr>>)> {
        if let Some(c) = self.compiled.get() {
            return Ok(c);
        }
        let props = super::held::props();
        // DataFusion's simplifier first, as for any plan's expressions: some functions
        // (`coalesce`) are only executable in the form it rewrites them to.
        let simplifier = datafusion::optimizer::simplify_expressions::ExprSimplifier::new(
            datafusion::logical_expr::simplify::SimplifyContext::builder()
                .with_schema(self.schema.clone())
                .build(),
        );
        let compile = |e: &Option<Expr>| -> Result<Option<Arc<dyn PhysicalExpr>>> {
            e.as_ref()
                .map(|e| {
                    let e = simplifier.simplify(e.clone())?;
                    create_physical_expr(&e, &self.schema, &props)
                })
                .transpose()
        };
        let c = (compile(&self.filter)?, compile(&self.map)?);
        Ok(self.compiled.get_or_init(|| c))
    }
}

/// The parts a list function is sent as (distributed plans).
#[cfg(feature = "distributed")]
type ListParts<'a> = (
    u8,
    &'a Option<Expr>,
    &'a Option<Expr>,
    &'a DFSchema,
    &'a DataType,
);

#[cfg(feature = "distributed")]
const LIST_OPS: [ListOp; 6] = [
    ListOp::Comprehension,
    ListOp::All,
    ListOp::Any,
    ListOp::None,
    ListOp::Single,
    ListOp::Reduce,
];

#[cfg(feature = "distributed")]
impl ListEval {
    /// The parts of `udf` when it is a list function.
    pub fn parts_of(udf: &ScalarUDF) -> Option<ListParts<'_>> {
        let f = udf.inner().downcast_ref::<ListEval>()?;
        let op = LIST_OPS.iter().position(|o| *o == f.op)? as u8;
        Some((op, &f.filter, &f.map, &f.schema, &f.out))
    }

    /// The list function of `parts_of`'s parts.
    pub fn udf(
        op: u8,
        filter: Option<Expr>,
        map: Option<Expr>,
        schema: DFSchema,
        out: DataType,
    ) -> Option<Arc<ScalarUDF>> {
        let op = *LIST_OPS.get(op as usize)?;
        match Self::call(op, filter, map, schema, out, vec![]) {
            Expr::ScalarFunction(f) => Some(f.func),
            _ => None,
        }
    }
}

impl ListEval {
    /// The elements of `list`'s first `n` rows, one per row of a batch: the element column,
    /// then the captured `outer` values repeated for each element of their row. Refuses to
    /// repeat more than [`MAX_REPEATED_BYTES`] (a list read whole for every element of a long
    /// list). Returns the elements too.
    fn element_batch(
        &self,
        list: &arrow::array::ListArray,
        outer: &[ArrayRef],
        n: usize,
    ) -> Result<(ArrayRef, RecordBatch)> {
        let offsets = list.value_offsets();
        let (first, last) = (offsets[0] as usize, offsets[n] as usize);
        let elements = list.values().slice(first, last - first);
        let mut parent = Vec::with_capacity(last - first);
        for i in 0..n {
            for _ in offsets[i]..offsets[i + 1] {
                parent.push(i as u32);
            }
        }
        let parent = UInt32Array::from(parent);
        let repeated: usize = outer
            .iter()
            .map(|a| a.get_array_memory_size() / n.max(1) * parent.len())
            .sum();
        if repeated > MAX_REPEATED_BYTES {
            return datafusion::common::exec_err!(
                "limit exceeded: a list comprehension over {} elements would repeat {repeated} bytes of its row (more than {MAX_REPEATED_BYTES}); read less of the row inside it",
                parent.len()
            );
        }
        let mut cols = vec![elements.clone()];
        for a in outer {
            cols.push(arrow::compute::take(a.as_ref(), &parent, None)?);
        }
        let fields: Vec<Field> = self
            .schema
            .fields()
            .iter()
            .zip(&cols)
            .map(|(f, c)| Field::new(f.name(), c.data_type().clone(), true))
            .collect();
        let batch = RecordBatch::try_new(Arc::new(Schema::new(fields)), cols)?;
        Ok((elements, batch))
    }
}

impl ListEval {
    /// `reduce` over each row's list: step `k` evaluates the body once for every row whose
    /// list has a `k`-th element, with that element, the row's accumulator and its captured
    /// values; a null list gives null, an empty one the initial value.
    fn fold(
        &self,
        list: &arrow::array::ListArray,
        init: &ArrayRef,
        outer: &[ArrayRef],
    ) -> Result<ArrayRef> {
        let n = list.len();
        let offsets = list.value_offsets();
        let init = init.as_binary_opt::<i64>();
        let mut acc: Vec<Option<Vec<u8>>> = (0..n)
            .map(|i| init.filter(|a| !a.is_null(i)).map(|a| a.value(i).to_vec()))
            .collect();
        let len = |i: usize| (offsets[i + 1] - offsets[i]) as usize;
        let longest = (0..n)
            .filter(|&i| !list.is_null(i))
            .map(len)
            .max()
            .unwrap_or(0);
        let (_, map) = self.compiled()?;
        let body = map.as_ref().expect("reduce has a body");
        let fields: Vec<Field> = self
            .schema
            .fields()
            .iter()
            .map(|f| Field::new(f.name(), f.data_type().clone(), true))
            .collect();
        let schema = Arc::new(Schema::new(fields));
        for k in 0..longest {
            let rows: Vec<u32> = (0..n)
                .filter(|&i| !list.is_null(i) && len(i) > k)
                .map(|i| i as u32)
                .collect();
            let at = UInt32Array::from_iter_values(
                rows.iter().map(|&i| offsets[i as usize] as u32 + k as u32),
            );
            let mut cols = vec![
                arrow::compute::take(list.values().as_ref(), &at, None)?,
                Arc::new(arrow::array::LargeBinaryArray::from_iter(
                    rows.iter().map(|&i| acc[i as usize].as_deref()),
                )) as ArrayRef,
            ];
            let rows_idx = UInt32Array::from(rows.clone());
            for a in outer {
                cols.push(arrow::compute::take(a.as_ref(), &rows_idx, None)?);
            }
            let cols = cols
                .into_iter()
                .zip(schema.fields())
                .map(|(c, f)| {
                    if c.data_type() == f.data_type() {
                        Ok(c)
                    } else {
                        arrow::compute::cast(&c, f.data_type())
                    }
                })
                .collect::<std::result::Result<Vec<_>, _>>()?;
            let batch = RecordBatch::try_new(schema.clone(), cols)?;
            let v = body.evaluate(&batch)?.into_array(rows.len())?;
            let v = v.as_binary::<i64>();
            for (j, &i) in rows.iter().enumerate() {
                acc[i as usize] = (!v.is_null(j)).then(|| v.value(j).to_vec());
            }
        }
        let out: arrow::array::LargeBinaryArray = (0..n)
            .map(|i| {
                if list.is_null(i) {
                    None
                } else {
                    acc[i].as_deref()
                }
            })
            .collect();
        Ok(Arc::new(out))
    }
}

impl ScalarUDFImpl for ListEval {
    fn name(&self) -> &str {
        match self.op {
            ListOp::Comprehension => "list_comprehension",
            ListOp::All => "all",
            ListOp::Any => "any",
            ListOp::None => "none",
            ListOp::Single => "single",
            ListOp::Reduce => "reduce",
        }
    }

    fn signature(&self) -> &Signature {
        &self.signature
    }

    /// The body is part of the name: two comprehensions over one list with other bodies
    /// (`sum(size([y IN xs WHERE y > 1])), sum(size([y IN xs WHERE y > 2]))`) are other
    /// columns.
    fn schema_name(&self, args: &[Expr]) -> Result<String> {
        let mut body = String::new();
        if let Some(f) = &self.filter {
            body.push_str(&format!(" WHERE {}", f.schema_name()));
        }
        if let Some(m) = &self.map {
            body.push_str(&format!(" | {}", m.schema_name()));
        }
        let args: Vec<String> = args.iter().map(|a| a.schema_name().to_string()).collect();
        Ok(format!("{}({}{body})", self.name(), args.join(",")))
    }

    fn return_type(&self, _: &[DataType]) -> Result<DataType> {
        Ok(self.out.clone())
    }

    fn return_field_from_args(&self, _: ReturnFieldArgs) -> Result<FieldRef> {
        Ok(Arc::new(Field::new(self.name(), self.out.clone(), true)))
    }

    fn invoke_with_args(&self, args: ScalarFunctionArgs) -> Result<ColumnarValue> {
        let n = args.number_rows;
        let arrays: Vec<ArrayRef> = args
            .args
            .iter()
            .map(|a| a.to_array(n))
            .collect::<Result<_>>()?;
        let list = &arrays[0];
        let Some(list) = list.as_list_opt::<i32>() else {
            // A null list (of type Null): every row is null.
            return Ok(ColumnarValue::Scalar(ScalarValue::try_from(&self.out)?));
        };
        if self.op == ListOp::Reduce {
            return Ok(ColumnarValue::Array(self.fold(
                list,
                &arrays[1],
                &arrays[2..],
            )?));
        }
        let offsets = list.value_offsets();
        let first = offsets[0] as usize;
        let (elements, batch) = self.element_batch(list, &arrays[1..], n)?;
        let (filter, map) = self.compiled()?;
        let keep: Option<BooleanArray> = match filter {
            Some(f) => {
                let v = f.evaluate(&batch)?.into_array(batch.num_rows())?;
                let v = arrow::compute::cast(&v, &DataType::Boolean)?;
                Some(v.as_boolean().clone())
            }
            None => None,
        };
        let row_offsets =
            |i: usize| (offsets[i] as usize - first)..(offsets[i + 1] as usize - first);
        if self.op != ListOp::Comprehension {
            let keep = keep.expect("a quantifier has a predicate");
            let rows = (0..n).map(|i| (!list.is_null(i)).then(|| row_offsets(i)));
            return Ok(ColumnarValue::Array(Arc::new(quantify(
                self.op, &keep, rows,
            ))));
        }
        let values = match map {
            Some(m) => {
                let v = m.evaluate(&batch)?.into_array(batch.num_rows())?;
                // What the map built counts against the memory limit (`[x IN xs | range(..)]`).
                super::budget::check(&args.config_options, v.get_array_memory_size(), || {
                    "a list comprehension".to_string()
                })?;
                v
            }
            None => elements,
        };
        let (values, new_offsets) = match keep {
            Some(keep) => {
                let mask: BooleanArray = keep.iter().map(|k| Some(k == Some(true))).collect();
                let mut off = vec![0i32];
                for i in 0..n {
                    let kept = row_offsets(i).filter(|&k| mask.value(k)).count();
                    off.push(off[i] + kept as i32);
                }
                (arrow::compute::filter(values.as_ref(), &mask)?, off)
            }
            None => {
                let off = (0..=n).map(|i| offsets[i] - offsets[0]).collect();
                (values, off)
            }
        };
        let DataType::List(item) = &self.out else {
            return datafusion::common::internal_err!("a comprehension returns a list");
        };
        let values = if values.data_type() == item.data_type() {
            values
        } else {
            arrow::compute::cast(&values, item.data_type())?
        };
        Ok(ColumnarValue::Array(Arc::new(ListArray::try_new(
            item.clone(),
            OffsetBuffer::new(new_offsets.into()),
            values,
            list.nulls().cloned(),
        )?)))
    }
}

/// A list predicate per row (`None`: a null list) over the elements' predicate values `keep`
/// (three-valued: a null predicate may be either).
fn quantify(
    op: ListOp,
    keep: &BooleanArray,
    rows: impl Iterator<Item = Option<std::ops::Range<usize>>>,
) -> BooleanArray {
    let mut out = BooleanBuilder::new();
    for range in rows {
        let Some(range) = range else {
            out.append_null();
            continue;
        };
        let (mut t, mut nulls) = (0usize, 0usize);
        let len = range.len();
        for k in range {
            if keep.is_null(k) {
                nulls += 1;
            } else if keep.value(k) {
                t += 1;
            }
        }
        let f = len - t - nulls;
        out.append_option(match op {
            ListOp::All if f > 0 => Some(false),
            ListOp::All => (nulls == 0).then_some(true),
            ListOp::Any if t > 0 => Some(true),
            ListOp::Any => (nulls == 0).then_some(false),
            ListOp::None if t > 0 => Some(false),
            ListOp::None => (nulls == 0).then_some(true),
            _ if t > 1 => Some(false),
            _ => (nulls == 0).then_some(t == 1),
        });
    }
    out.finish()
}
