//! A long chain of arithmetic operators of one precedence (`1 + 1 + ... + 1` of 10^5 terms, as
//! query builders write them): one function over all the operands that folds them left to
//! right. Each step is the expression `l op r` lowers to for the step's operand types (the
//! planner's own lowering, over two columns), so a chain answers exactly as the nested
//! operators would, but its evaluation and its plan are one level deep however long it is.

use arrow::array::{ArrayRef, RecordBatch, RecordBatchOptions};
use arrow::datatypes::{DataType, Field, FieldRef, Schema};
use datafusion::common::{DFSchema, Result, ScalarValue};
use datafusion::logical_expr::{
    ColumnarValue, Expr, ReturnFieldArgs, ScalarFunctionArgs, ScalarUDF, ScalarUDFImpl, Signature,
};
use datafusion::physical_expr::{create_physical_expr, PhysicalExpr};
use std::sync::{Arc, OnceLock};

/// The columns a step reads: the value so far, and the next operand.
pub const LEFT: &str = "__l";
pub const RIGHT: &str = "__r";

/// One kind of step: its expression over [`LEFT`] and [`RIGHT`] (of the types in `schema`),
/// and its result type.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Step {
    pub expr: Expr,
    pub schema: Arc<DFSchema>,
    pub out: DataType,
}

#[derive(Debug)]
pub struct ChainEval {
    /// The distinct steps (a long chain has few: one per operator and operand types).
    steps: Vec<Step>,
    /// The step joining each operand after the first.
    order: Vec<u32>,
    out: DataType,
    signature: Signature,
    compiled: OnceLock<Vec<Arc<dyn PhysicalExpr>>>,
    /// The long list parameters the steps name, held until they are compiled.
    _held: super::held::Holding,
}

impl PartialEq for ChainEval {
    fn eq(&self, o: &Self) -> bool {
        (&self.steps, &self.order, &self.out) == (&o.steps, &o.order, &o.out)
    }
}
impl Eq for ChainEval {}
impl std::hash::Hash for ChainEval {
    fn hash<H: std::hash::Hasher>(&self, h: &mut H) {
        (&self.steps, &self.order, &self.out).hash(h)
    }
}

impl ChainEval {
    /// The call folding `args` (the operands, in order) with `steps[order[i]]` joining operand
    /// `i + 1`; `out` is the last step's type.
    pub fn call(steps: Vec<Step>, order: Vec<u32>, out: DataType, args: Vec<Expr>) -> Expr {
        Expr::ScalarFunction(datafusion::logical_expr::expr::ScalarFunction::new_udf(
            Self::udf(steps, order, out),
            args,
        ))
    }

    pub fn udf(steps: Vec<Step>, order: Vec<u32>, out: DataType) -> Arc<ScalarUDF> {
        let volatile = steps.iter().any(|s| s.expr.is_volatile());
        // Compiled when it first runs, maybe after the plan holding them is gone.
        let held = super::held::named_in(steps.iter().map(|s| &s.expr));
        Arc::new(ScalarUDF::new_from_impl(ChainEval {
            steps,
            order,
            out,
            signature: super::variadic_signature(volatile),
            compiled: OnceLock::new(),
            _held: held,
        }))
    }

    /// The parts `udf` is made of, when it is a chain (distributed plans send them).
    #[cfg(feature = "distributed")]
    pub fn parts_of(udf: &ScalarUDF) -> Option<(&[Step], &[u32], &DataType)> {
        let f = udf.inner().downcast_ref::<ChainEval>()?;
        Some((&f.steps, &f.order, &f.out))
    }

    fn compiled(&self) -> Result<&Vec<Arc<dyn PhysicalExpr>>> {
        if let Some(c) = self.compiled.get() {
            return Ok(c);
        }
        let props = super::held::props();
        let c = self
            .steps
            .iter()
            .map(|s| create_physical_expr(&s.expr, &s.schema, &props))
            .collect::<Result<Vec<_>>>()?;
        Ok(self.compiled.get_or_init(|| c))
    }
}

impl ScalarUDFImpl for ChainEval {
    fn name(&self) -> &str {
        "cypher_chain"
    }

    fn signature(&self) -> &Signature {
        &self.signature
    }

    fn return_type(&self, _: &[DataType]) -> Result<DataType> {
        Ok(self.out.clone())
    }

    fn return_field_from_args(&self, _: ReturnFieldArgs) -> Result<FieldRef> {
        Ok(Arc::new(Field::new(self.name(), self.out.clone(), true)))
    }

    fn invoke_with_args(&self, args: ScalarFunctionArgs) -> Result<ColumnarValue> {
        let (scalar, n) = super::rows_to_evaluate(&args);
        let compiled = self.compiled()?;
        let mut operands = args.args.iter();
        let mut acc: ArrayRef = match operands.next() {
            Some(a) => a.to_array(n)?,
            None => return datafusion::common::internal_err!("a chain without operands"),
        };
        for (x, &k) in operands.zip(&self.order) {
            let step = &self.steps[k as usize];
            let schema: Arc<Schema> = Arc::new(step.schema.as_arrow().clone());
            let want = |i: usize, a: ArrayRef| -> Result<ArrayRef> {
                let t = schema.field(i).data_type();
                Ok(if a.data_type() == t {
                    a
                } else {
                    arrow::compute::cast(&a, t)?
                })
            };
            let batch = RecordBatch::try_new_with_options(
                schema.clone(),
                vec![want(0, acc)?, want(1, x.to_array(n)?)?],
                &RecordBatchOptions::new().with_row_count(Some(n)),
            )?;
            acc = compiled[k as usize].evaluate(&batch)?.into_array(n)?;
        }
        if acc.data_type() != &self.out {
            acc = arrow::compute::cast(&acc, &self.out)?;
        }
        Ok(if scalar {
            ColumnarValue::Scalar(ScalarValue::try_from_array(&acc, 0)?)
        } else {
            ColumnarValue::Array(acc)
        })
    }
}

/// `AND` or `OR` of many booleans (a long chain of one of them): Kleene logic over all the
/// operands at once, so that DataFusion never sees (nor splits and rejoins) a chain as deep as
/// it is long.
#[derive(Debug, PartialEq, Eq, Hash)]
pub struct BoolChain {
    and: bool,
    signature: Signature,
}

impl BoolChain {
    /// `AND` (or `OR`) of `args`.
    pub fn call(and: bool, args: Vec<Expr>) -> Expr {
        Expr::ScalarFunction(datafusion::logical_expr::expr::ScalarFunction::new_udf(
            Self::udf(and),
            args,
        ))
    }

    pub fn udf(and: bool) -> Arc<ScalarUDF> {
        Arc::new(ScalarUDF::new_from_impl(BoolChain {
            and,
            signature: super::variadic_signature(false),
        }))
    }
}

impl ScalarUDFImpl for BoolChain {
    fn name(&self) -> &str {
        if self.and {
            "cypher_all_of"
        } else {
            "cypher_any_of"
        }
    }

    fn signature(&self) -> &Signature {
        &self.signature
    }

    fn return_type(&self, _: &[DataType]) -> Result<DataType> {
        Ok(DataType::Boolean)
    }

    fn invoke_with_args(&self, args: ScalarFunctionArgs) -> Result<ColumnarValue> {
        use arrow::array::AsArray;
        let (scalar, n) = super::rows_to_evaluate(&args);
        let mut acc: Option<arrow::array::BooleanArray> = None;
        for a in &args.args {
            let x = arrow::compute::cast(&a.to_array(n)?, &DataType::Boolean)?;
            let x = x.as_boolean();
            acc = Some(match acc {
                None => x.clone(),
                Some(y) if self.and => arrow::compute::kernels::boolean::and_kleene(&y, x)?,
                Some(y) => arrow::compute::kernels::boolean::or_kleene(&y, x)?,
            });
        }
        let acc: ArrayRef =
            Arc::new(acc.unwrap_or_else(|| arrow::array::BooleanArray::from(vec![self.and; n])));
        Ok(if scalar {
            ColumnarValue::Scalar(ScalarValue::try_from_array(&acc, 0)?)
        } else {
            ColumnarValue::Array(acc)
        })
    }
}
