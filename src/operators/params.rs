//! Query parameters inside cached plans. A cached plan keeps each scalar parameter as a typed
//! `Expr::Placeholder`; before it runs, either every placeholder becomes a literal of the
//! call's value ([`bind_logical`], then physical planning as usual), or, where placeholders
//! stand inside the graph operators, projections and filters, the physical plan is kept and
//! the operators take the values when it runs ([`bind_physical_plan`]: each placeholder was
//! compiled to a [`ParamExpr`], which is replaced by the value's literal).

use super::node::GraphNode;
use super::shared::NewCells;
use super::shared_exec::SharedSubplanExec;
use arrow::array::RecordBatch;
use arrow::datatypes::{DataType, FieldRef, Schema};
use datafusion::common::metadata::FieldMetadata;
use datafusion::common::tree_node::{Transformed, TreeNode, TreeNodeRecursion};
use datafusion::common::{DataFusionError, Result, ScalarValue};
use datafusion::logical_expr::expr_rewriter::NamePreserver;
use datafusion::logical_expr::{ColumnarValue, Expr, Extension, LogicalPlan};
use datafusion::physical_expr::expressions::Literal;
use datafusion::physical_expr::PhysicalExpr;
use datafusion::physical_plan::ExecutionPlan;
use std::collections::{BTreeMap, HashMap};
use std::fmt;
use std::sync::Arc;

/// Metadata key of the literal a placeholder is compiled through (see [`compile_marked`]).
const PARAM_KEY: &str = "lance_csr.param";

/// One execution's parameter values, by placeholder id (`$name`).
#[derive(Debug, Default)]
pub struct ParamValues(pub HashMap<String, ScalarValue>);

impl ParamValues {
    fn get(&self, id: &str) -> Result<&ScalarValue> {
        self.0.get(id).ok_or_else(|| {
            DataFusionError::Execution(format!("parameter {id} has no value for this execution"))
        })
    }
}

/// A placeholder for `id` of `data_type` (the lowering's form of a scalar parameter).
pub fn placeholder(id: &str, data_type: DataType) -> Expr {
    Expr::Placeholder(datafusion::logical_expr::expr::Placeholder::new_with_field(
        format!("${id}"),
        Some(Arc::new(arrow::datatypes::Field::new("", data_type, true))),
    ))
}

fn placeholder_type(field: &Option<FieldRef>, id: &str) -> Result<DataType> {
    field
        .as_ref()
        .map(|f| f.data_type().clone())
        .ok_or_else(|| DataFusionError::Internal(format!("placeholder {id} has no type")))
}

/// Whether `e` contains a placeholder.
pub fn has_placeholder(e: &Expr) -> bool {
    e.exists(|e| Ok(matches!(e, Expr::Placeholder(_))))
        .unwrap_or(true)
}

/// `e` with each placeholder replaced by its value's literal (cast to the placeholder's type).
pub fn bind_expr(e: Expr, values: &ParamValues) -> Result<Expr> {
    Ok(e.transform(|e| {
        Ok(match e {
            Expr::Placeholder(p) => {
                let t = placeholder_type(&p.field, &p.id)?;
                let v = values.get(&p.id)?.cast_to(&t)?;
                Transformed::yes(Expr::Literal(v, None))
            }
            other => Transformed::no(other),
        })
    })?
    .data)
}

/// A graph operator with its placeholders bound; `None` when it has none.
fn bind_graph_node(node: &Extension, values: &ParamValues) -> Result<Option<LogicalPlan>> {
    let Some(n) = GraphNode::of(node.node.as_ref()) else {
        return Ok(None);
    };
    if !n.own_exprs().into_iter().any(has_placeholder) {
        return Ok(None);
    }
    let bound = n.map_own_exprs(&mut |e| bind_expr(e, values))?;
    Ok(Some(LogicalPlan::Extension(Extension { node: bound })))
}

/// `plan` with every placeholder (in DataFusion's nodes and in the graph operators) replaced
/// by its value's literal.
pub fn bind_logical(plan: &LogicalPlan, values: &ParamValues) -> Result<LogicalPlan> {
    Ok(plan
        .clone()
        .transform_up_with_subqueries(|node| {
            if let LogicalPlan::Extension(ext) = &node {
                return Ok(match bind_graph_node(ext, values)? {
                    Some(n) => Transformed::yes(n),
                    None => Transformed::no(node),
                });
            }
            // Columns above refer to expressions by name: keep the names placeholders gave.
            let names = NamePreserver::new(&node);
            node.map_expressions(|e| {
                if has_placeholder(&e) {
                    let name = names.save(&e);
                    Ok(Transformed::yes(name.restore(bind_expr(e, values)?)))
                } else {
                    Ok(Transformed::no(e))
                }
            })
        })?
        .data)
}

/// How a lowered plan can be reused for other parameter values.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reuse {
    /// The physical plan is kept: placeholders (if any) only inside the graph operators,
    /// projections and filters.
    Physical,
    /// The optimized logical plan is kept; each execution binds it (new cells for its shared
    /// subplans) and plans it physically.
    Logical,
    /// Not at all: a function's value depends on when it runs.
    None,
}

/// Whether `plan` (lowered, not yet optimized: DataFusion folds `now()` away) calls a
/// function whose value is not fixed by its arguments (`rand()`, `now()`): such a plan is
/// not kept.
pub fn calls_unstable_function(plan: &LogicalPlan) -> bool {
    let unstable = |e: &Expr| {
        e.exists(|e| {
            Ok(matches!(e, Expr::ScalarFunction(f)
                if f.func.signature().volatility != datafusion::logical_expr::Volatility::Immutable))
        })
        .unwrap_or(true)
    };
    let mut found = false;
    let _ = plan.apply_with_subqueries(|node| {
        let graph = GraphNode::of_plan(node).map_or(vec![], GraphNode::own_exprs);
        found = graph.into_iter().any(unstable) || node.expressions().iter().any(unstable);
        Ok(if found {
            TreeNodeRecursion::Stop
        } else {
            TreeNodeRecursion::Continue
        })
    });
    found
}

/// How an optimized plan can be reused ([`Reuse::Physical`] at best): [`Reuse::Logical`]
/// where DataFusion's nodes read placeholders (the physical plan may still be kept after
/// [`mark_params`] and [`params_in_place`]).
pub fn reuse_of_optimized(plan: &LogicalPlan) -> Reuse {
    let mut reuse = Reuse::Physical;
    let _ = plan.apply_with_subqueries(|node| {
        node.apply_expressions(|e| {
            if has_placeholder(e) {
                reuse = Reuse::Logical;
            }
            Ok(TreeNodeRecursion::Continue)
        })?;
        Ok(TreeNodeRecursion::Continue)
    });
    reuse
}

/// The physical operators a kept physical plan may hold besides [`RESET_EXECS`]: each runs
/// again as often as asked, keeping nothing from one execution to the next, or is made anew
/// for each execution by [`bind_physical_plan`] (shared subplans, operators holding
/// parameters).
/// Dynamic filters, which would carry bounds from one execution into the next, are off in
/// our sessions (`optimizer::session`).
const REUSABLE_EXECS: &[&str] = &[
    "ProjectionExec",
    "FilterExec",
    "CoalesceBatchesExec",
    "CooperativeExec",
    "CoalescePartitionsExec",
    "GlobalLimitExec",
    "LocalLimitExec",
    "AggregateExec",
    "UnionExec",
    "EmptyExec",
    "PlaceholderRowExec",
    "DataSourceExec",
    "KeyStatisticsExec",
    "NodeLookupExec",
    "CsrExpandExec",
    "CountPathsExec",
    "VarLengthExec",
    "ConstRowExec",
    "CsrIntersectExec",
    "SharedSubplanExec",
    "SortPreservingMergeExec",
    "BoundedWindowAggExec",
    "WindowAggExec",
    "UnnestExec",
];

/// The operators that keep state from one execution to the next (a repartition's channels,
/// a join's build side, a top-k's heap bound, a Lance scan's stream shared by its
/// partitions), reset by `ExecutionPlan::reset_state` before each execution of a kept plan.
const RESET_EXECS: &[&str] = &[
    "RepartitionExec",
    "HashJoinExec",
    "CrossJoinExec",
    "NestedLoopJoinExec",
    "SortExec",
    "SortExec(TopK)",
    "FilteredReadExec",
];

/// Whether every operator of `plan` may be executed again ([`REUSABLE_EXECS`],
/// [`RESET_EXECS`]).
pub fn physical_reusable(plan: &Arc<dyn ExecutionPlan>) -> bool {
    let mut ok = true;
    let _ = plan.apply(|p| {
        if !REUSABLE_EXECS.contains(&p.name()) && !RESET_EXECS.contains(&p.name()) {
            ok = false;
            return Ok(TreeNodeRecursion::Stop);
        }
        Ok(TreeNodeRecursion::Continue)
    });
    ok
}

/// A new instance of the kept `plan` for one execution: `values` handed to every operator
/// that holds parameters (through `ExecutionPlan::with_new_state`), the stateful operators
/// reset ([`RESET_EXECS`]), each shared subplan given a new cell (one per subplan, read by all
/// its occurrences), and the operators above them rebuilt over the new ones.
pub fn bind_physical_plan(
    plan: &Arc<dyn ExecutionPlan>,
    values: Arc<ParamValues>,
) -> Result<Arc<dyn ExecutionPlan>> {
    let state: Arc<dyn std::any::Any + Send + Sync> = values.clone();
    let mut cells = NewCells::default();
    Ok(plan
        .clone()
        .transform_up(|p| {
            if let Some(s) = p.downcast_ref::<SharedSubplanExec>() {
                let cell = cells.renew(s.cell());
                return Ok(Transformed::yes(Arc::new(s.with_cell(cell))));
            }
            if let Some(bound) = p.with_new_state(state.clone()) {
                return Ok(Transformed::yes(bound));
            }
            if RESET_EXECS.contains(&p.name()) {
                return Ok(Transformed::yes(p.reset_state()?));
            }
            // A projection or filter of DataFusion's reading parameters (`params_in_place`).
            let bind = |e: &Arc<dyn PhysicalExpr>| match has_param_expr(e) {
                true => bind_physical(e, &values).map(Transformed::yes),
                false => Ok(Transformed::no(e.clone())),
            };
            if let Some(bound) = map_own_exprs(&p, &bind)? {
                return Ok(Transformed::yes(bound));
            }
            Ok(Transformed::no(p))
        })?
        .data)
}

/// Compiles `e` (over `schema`) as `compile` does, each placeholder becoming a [`ParamExpr`].
pub fn compile_marked(
    e: Expr,
    compile: impl FnOnce(Expr) -> Result<Arc<dyn PhysicalExpr>>,
) -> Result<Arc<dyn PhysicalExpr>> {
    let marked = e
        .transform(|e| {
            Ok(match e {
                Expr::Placeholder(p) => {
                    let t = placeholder_type(&p.field, &p.id)?;
                    let meta = FieldMetadata::from(BTreeMap::from([(
                        PARAM_KEY.to_string(),
                        p.id.clone(),
                    )]));
                    Transformed::yes(Expr::Literal(ScalarValue::try_from(&t)?, Some(meta)))
                }
                other => Transformed::no(other),
            })
        })?
        .data;
    let physical = compile(marked)?;
    Ok(physical
        .transform(|p| {
            let Some(l) = p.downcast_ref::<Literal>() else {
                return Ok(Transformed::no(p));
            };
            let field = l.return_field(&Schema::empty())?;
            Ok(match field.metadata().get(PARAM_KEY) {
                Some(id) => Transformed::yes(Arc::new(ParamExpr {
                    id: id.clone(),
                    data_type: l.value().data_type(),
                }) as Arc<dyn PhysicalExpr>),
                None => Transformed::no(p),
            })
        })?
        .data)
}

/// Whether `e` reads a parameter.
pub fn has_param_expr(e: &Arc<dyn PhysicalExpr>) -> bool {
    e.exists(|p| Ok(p.is::<ParamExpr>())).unwrap_or(true)
}

/// `e` with each [`ParamExpr`] replaced by its value's literal.
pub fn bind_physical(
    e: &Arc<dyn PhysicalExpr>,
    values: &ParamValues,
) -> Result<Arc<dyn PhysicalExpr>> {
    Ok(Arc::clone(e)
        .transform(|p| {
            let Some(x) = p.downcast_ref::<ParamExpr>() else {
                return Ok(Transformed::no(p));
            };
            let v = values.get(&x.id)?.cast_to(&x.data_type)?;
            Ok(Transformed::yes(
                Arc::new(Literal::new(v)) as Arc<dyn PhysicalExpr>
            ))
        })?
        .data)
}

/// A parameter in a compiled filter of a kept physical plan: replaced by its value before
/// the plan runs ([`bind_physical`]); evaluating it unbound is an error, never a null.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct ParamExpr {
    id: String,
    data_type: DataType,
}

impl fmt::Display for ParamExpr {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        write!(f, "{}", self.id)
    }
}

impl PhysicalExpr for ParamExpr {
    fn data_type(&self, _input_schema: &Schema) -> Result<DataType> {
        Ok(self.data_type.clone())
    }

    fn nullable(&self, _input_schema: &Schema) -> Result<bool> {
        Ok(true)
    }

    fn evaluate(&self, _batch: &RecordBatch) -> Result<ColumnarValue> {
        Err(DataFusionError::Internal(format!(
            "parameter {} was not bound before execution",
            self.id
        )))
    }

    fn children(&self) -> Vec<&Arc<dyn PhysicalExpr>> {
        vec![]
    }

    fn with_new_children(
        self: Arc<Self>,
        _children: Vec<Arc<dyn PhysicalExpr>>,
    ) -> Result<Arc<dyn PhysicalExpr>> {
        Ok(self)
    }

    fn fmt_sql(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.id)
    }
}

/// Name of [`ParamCall`]: a parameter inside a DataFusion node of a plan to keep physically.
const PARAM_CALL: &str = "cypher_param";

/// A parameter in one of DataFusion's nodes while the plan is planned physically: a call
/// (`cypher_param('$id', <typed null>)`), volatile so that nothing treats it as a constant
/// (no folding, no constant columns in the equivalence properties), turned into a
/// [`ParamExpr`] once planned ([`params_in_place`]). Evaluating it is an error.
#[derive(Debug, PartialEq, Eq, Hash)]
struct ParamCall {
    signature: datafusion::logical_expr::Signature,
}

impl datafusion::logical_expr::ScalarUDFImpl for ParamCall {
    fn name(&self) -> &str {
        PARAM_CALL
    }

    fn signature(&self) -> &datafusion::logical_expr::Signature {
        &self.signature
    }

    fn return_type(&self, args: &[DataType]) -> Result<DataType> {
        args.get(1)
            .cloned()
            .ok_or_else(|| DataFusionError::Internal(format!("{PARAM_CALL} takes two arguments")))
    }

    fn invoke_with_args(
        &self,
        _args: datafusion::logical_expr::ScalarFunctionArgs,
    ) -> Result<ColumnarValue> {
        Err(DataFusionError::Internal(format!(
            "{PARAM_CALL} was not replaced before execution"
        )))
    }
}

/// `plan` with each placeholder in DataFusion's nodes a [`ParamCall`] (our nodes compile
/// theirs through [`compile_marked`]), for planning a physical plan to keep.
pub fn mark_params(plan: &LogicalPlan) -> Result<LogicalPlan> {
    use datafusion::logical_expr::{ScalarUDF, Signature, Volatility};
    let udf = Arc::new(ScalarUDF::new_from_impl(ParamCall {
        signature: Signature::any(2, Volatility::Volatile),
    }));
    Ok(lift_scan_params(plan)?
        .transform_up(|node| {
            if GraphNode::of_plan(&node).is_some() {
                return Ok(Transformed::no(node));
            }
            node.map_expressions(|e| {
                e.transform(|e| {
                    Ok(match e {
                        Expr::Placeholder(p) => {
                            let t = placeholder_type(&p.field, &p.id)?;
                            let args = vec![
                                Expr::Literal(ScalarValue::Utf8(Some(p.id.clone())), None),
                                Expr::Literal(ScalarValue::try_from(&t)?, None),
                            ];
                            Transformed::yes(Expr::ScalarFunction(
                                datafusion::logical_expr::expr::ScalarFunction::new_udf(
                                    udf.clone(),
                                    args,
                                ),
                            ))
                        }
                        other => Transformed::no(other),
                    })
                })
            })
        })?
        .data)
}

/// `plan` with the filters a table scan was handed that read parameters (`name = $name`,
/// pushed into a Lance scan) taken out into a filter right above it: a scan is planned
/// with its filter's values, a filter reads them as it runs, so the physical plan is kept.
/// Not for a scan with a row limit (the limit counts filtered rows).
fn lift_scan_params(plan: &LogicalPlan) -> Result<LogicalPlan> {
    use datafusion::logical_expr::{utils::conjunction, LogicalPlanBuilder, TableScan};
    Ok(plan
        .clone()
        .transform_up(|node| {
            let LogicalPlan::TableScan(scan) = &node else {
                return Ok(Transformed::no(node));
            };
            if scan.fetch.is_some() || !scan.filters.iter().any(has_placeholder) {
                return Ok(Transformed::no(node));
            }
            let (lifted, kept): (Vec<Expr>, Vec<Expr>) =
                scan.filters.iter().cloned().partition(has_placeholder);
            // The columns the lifted filters read, projected by the scan too.
            let source = scan.source.schema();
            let mut projection = scan.projection.clone();
            if let Some(p) = &mut projection {
                for c in lifted.iter().flat_map(|e| e.column_refs()) {
                    let i = source.index_of(&c.name)?;
                    if !p.contains(&i) {
                        p.push(i);
                    }
                }
            }
            let widened = projection != scan.projection;
            let wider = TableScan::try_new(
                scan.table_name.clone(),
                scan.source.clone(),
                projection,
                kept,
                None,
            )?;
            let mut b = LogicalPlanBuilder::from(LogicalPlan::TableScan(wider));
            if let Some(pred) = conjunction(lifted) {
                b = b.filter(pred)?;
            }
            if widened {
                b = b.project(
                    scan.projected_schema
                        .columns()
                        .into_iter()
                        .map(Expr::Column),
                )?;
            }
            Ok(Transformed::yes(b.build()?))
        })?
        .data)
}

/// `e` with each [`ParamCall`] a [`ParamExpr`].
fn calls_to_params(e: &Arc<dyn PhysicalExpr>) -> Result<Transformed<Arc<dyn PhysicalExpr>>> {
    use datafusion::physical_expr::ScalarFunctionExpr;
    Arc::clone(e).transform(|p| {
        let Some(call) = p.downcast_ref::<ScalarFunctionExpr>() else {
            return Ok(Transformed::no(p));
        };
        if call.name() != PARAM_CALL {
            return Ok(Transformed::no(p));
        }
        let id = match call
            .args()
            .first()
            .and_then(|a| a.downcast_ref::<Literal>())
        {
            Some(l) => match l.value() {
                ScalarValue::Utf8(Some(id)) => id.clone(),
                _ => return datafusion::common::internal_err!("{PARAM_CALL} without an id"),
            },
            None => return datafusion::common::internal_err!("{PARAM_CALL} without an id"),
        };
        Ok(Transformed::yes(Arc::new(ParamExpr {
            id,
            data_type: call.return_type().clone(),
        }) as Arc<dyn PhysicalExpr>))
    })
}

/// A projection or filter over new expressions (`map` of each); `None` for other operators.
fn map_own_exprs(
    p: &Arc<dyn ExecutionPlan>,
    map: &dyn Fn(&Arc<dyn PhysicalExpr>) -> Result<Transformed<Arc<dyn PhysicalExpr>>>,
) -> Result<Option<Arc<dyn ExecutionPlan>>> {
    use datafusion::physical_plan::filter::{FilterExec, FilterExecBuilder};
    use datafusion::physical_plan::projection::{ProjectionExec, ProjectionExpr};
    if let Some(x) = p.downcast_ref::<ProjectionExec>() {
        let mut changed = false;
        let mut exprs = Vec::new();
        for e in x.expr() {
            let t = map(&e.expr)?;
            changed |= t.transformed;
            exprs.push(ProjectionExpr::new(t.data, e.alias.clone()));
        }
        return Ok(match changed {
            true => Some(Arc::new(ProjectionExec::try_new(exprs, x.input().clone())?)),
            false => None,
        });
    }
    if let Some(x) = p.downcast_ref::<FilterExec>() {
        let t = map(x.predicate())?;
        return Ok(match t.transformed {
            true => Some(Arc::new(
                FilterExecBuilder::from(x).with_predicate(t.data).build()?,
            )),
            false => None,
        });
    }
    Ok(None)
}

/// The physical plan of a [`mark_params`]ed plan with every [`ParamCall`] a [`ParamExpr`]
/// bound per run; `None` when one sits where it can't be replaced (only projections and
/// filters are rebuilt).
pub fn params_in_place(plan: Arc<dyn ExecutionPlan>) -> Result<Option<Arc<dyn ExecutionPlan>>> {
    let plan = plan
        .transform_up(|p| {
            Ok(match map_own_exprs(&p, &calls_to_params)? {
                Some(q) => Transformed::yes(q),
                None => Transformed::no(p),
            })
        })?
        .data;
    // Anywhere else (a sort key, an aggregate's argument, a join filter): not kept. Every
    // operator shows its expressions in EXPLAIN's form.
    let shown = datafusion::physical_plan::displayable(plan.as_ref())
        .indent(true)
        .to_string();
    let left = shown.contains(&format!("{PARAM_CALL}("));
    Ok((!left).then_some(plan))
}
