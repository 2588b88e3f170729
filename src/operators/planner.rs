//! Physical planning of the graph operators: loads the columns they read, compiles their
//! filters against just those columns, and builds `CsrExpandExec` / `NodeLookupExec`.

use super::count_paths::{CountHop, CountPaths};
use super::count_paths_exec::{CountOutput, CountPathsExec, FoldSpec, HopSpec, ValueSpec};
use super::csr_expand::{CsrExpand, TakeSpec};
use super::csr_expand_exec::{CompiledFilter, CsrExpandExec, ExpandSpec};
use super::csr_intersect::CsrIntersect;
use super::csr_intersect_exec::{CsrIntersectExec, MatchCount};
use super::node::GraphNode;
use super::node_lookup::NodeLookup;
use super::node_lookup_exec::{LookupSpec, NodeLookupExec};
use super::var_length::VarLengthExpand;
use super::var_length_exec::{TraversalSpec, VarLengthExec};
use crate::csr::TableColumns;
use arrow::array::AsArray;
use arrow::datatypes::{Field, Schema, SchemaRef};
use async_trait::async_trait;
use datafusion::common::tree_node::{Transformed, TreeNode};
use datafusion::common::{Column, DFSchema, DataFusionError, Result};
use datafusion::execution::context::{QueryPlanner, SessionState};
use datafusion::logical_expr::{Expr, ExprSchemable, LogicalPlan, UserDefinedLogicalNode};
use datafusion::physical_plan::ExecutionPlan;
use datafusion::physical_planner::{DefaultPhysicalPlanner, ExtensionPlanner, PhysicalPlanner};
use std::collections::BTreeSet;
use std::sync::Arc;

/// Plans `CsrExpand` and `NodeLookup`.
#[derive(Debug, Default)]
pub struct GraphExtensionPlanner;

/// The query planner of lance-csr sessions: DataFusion's, plus [`GraphExtensionPlanner`].
#[derive(Debug, Default)]
pub struct GraphQueryPlanner;

#[async_trait]
impl QueryPlanner for GraphQueryPlanner {
    async fn create_physical_plan(
        &self,
        logical_plan: &LogicalPlan,
        session_state: &SessionState,
    ) -> Result<Arc<dyn ExecutionPlan>> {
        DefaultPhysicalPlanner::with_extension_planners(vec![Arc::new(GraphExtensionPlanner)])
            .create_physical_plan(logical_plan, session_state)
            .await
    }
}

/// Whether the session lets LIMITs into the graph operators (`RuleSwitches::absorb_limits`).
fn absorb_limits(state: &SessionState) -> bool {
    state
        .config()
        .get_extension::<crate::config::rules::RuleSwitches>()
        .is_none_or(|r| r.absorb_limits)
}

fn ext(e: crate::Error) -> DataFusionError {
    e.into()
}

/// Compiles `pred` (over output names of `spec`) against a batch of the table columns it reads.
fn compile_filter(
    pred: &Expr,
    spec: &TakeSpec,
    store: &TableColumns,
    state: &SessionState,
) -> Result<CompiledFilter> {
    let mut cols = BTreeSet::new();
    for c in pred.column_refs() {
        let table = spec.table_col(&c.name).ok_or_else(|| {
            DataFusionError::Internal(format!("filter column {} is not produced", c.name))
        })?;
        cols.insert(table.to_string());
    }
    let cols: Vec<String> = cols.into_iter().collect();
    let fields = cols
        .iter()
        .map(|c| Ok(Field::new(c, store.data_type(c).map_err(ext)?, true)))
        .collect::<Result<Vec<_>>>()?;
    let schema: SchemaRef = Arc::new(Schema::new(fields));
    let renamed = pred
        .clone()
        .transform(|e| {
            Ok(match e {
                Expr::Column(c) => {
                    let t = spec.table_col(&c.name).unwrap_or(&c.name).to_string();
                    Transformed::yes(Expr::Column(Column::new_unqualified(t)))
                }
                other => Transformed::no(other),
            })
        })?
        .data;
    let df_schema = DFSchema::try_from(schema.as_ref().clone())?;
    let compile = |e: Expr, schema: &DFSchema| {
        super::params::compile_marked(e, |e| state.create_physical_expr(e, schema))
    };
    let repeated = compile_repeated(&renamed, &schema, &compile)?;
    let expr = compile(renamed, &df_schema)?;
    Ok(CompiledFilter::new(expr, cols, schema, repeated))
}

/// The predicate's repeated subexpressions compiled to be computed once per batch, each
/// a column after the table columns (`super::repeated_exprs`); `None` when none repeats.
fn compile_repeated(
    pred: &Expr,
    schema: &SchemaRef,
    compile: &dyn Fn(Expr, &DFSchema) -> Result<Arc<dyn datafusion::physical_expr::PhysicalExpr>>,
) -> Result<Option<super::csr_expand_exec::Repeated>> {
    let found = super::repeated_exprs::repeated(pred);
    if found.is_empty() {
        return Ok(None);
    }
    let mut fields: Vec<Field> = schema.fields().iter().map(|f| f.as_ref().clone()).collect();
    let mut names = std::collections::HashMap::new();
    let (mut exprs, mut schemas) = (Vec::new(), Vec::new());
    for (i, e) in found.into_iter().enumerate() {
        let current = Arc::new(Schema::new(fields.clone()));
        let df = DFSchema::try_from(current.as_ref().clone())?;
        let computed = super::repeated_exprs::replace(e.clone(), &names)?;
        let t = computed.get_type(&df)?;
        exprs.push(compile(computed, &df)?);
        schemas.push(current);
        let mut name = format!("__repeated{i}");
        while fields.iter().any(|f| f.name() == &name) {
            name.push('_');
        }
        fields.push(Field::new(&name, t, true));
        names.insert(e, name);
    }
    let all = Arc::new(Schema::new(fields));
    let df = DFSchema::try_from(all.as_ref().clone())?;
    let pred = compile(super::repeated_exprs::replace(pred.clone(), &names)?, &df)?;
    Ok(Some(super::csr_expand_exec::Repeated {
        exprs,
        schemas,
        pred,
        schema: all,
    }))
}

fn filter_cols(pred: &Option<Expr>, spec: &TakeSpec) -> Vec<String> {
    pred.iter()
        .flat_map(|p| p.column_refs())
        .filter_map(|c| spec.table_col(&c.name).map(String::from))
        .collect()
}

#[async_trait]
impl ExtensionPlanner for GraphExtensionPlanner {
    async fn plan_extension(
        &self,
        _planner: &dyn PhysicalPlanner,
        node: &dyn UserDefinedLogicalNode,
        _logical_inputs: &[&LogicalPlan],
        physical_inputs: &[Arc<dyn ExecutionPlan>],
        state: &SessionState,
    ) -> Result<Option<Arc<dyn ExecutionPlan>>> {
        let Some(node) = GraphNode::of(node) else {
            return Ok(None);
        };
        let input = || physical_inputs[0].clone();
        Ok(Some(match node {
            GraphNode::Expand(n) => plan_expand(n, input(), state).await?,
            GraphNode::Intersect(n) => plan_intersect(n, input(), state).await?,
            GraphNode::CountPaths(n) => plan_count_paths(n, input(), state).await?,
            GraphNode::VarLength(n) => plan_var_length(n, input(), state).await?,
            GraphNode::Shared(n) => {
                let shared = Arc::new(super::shared_exec::SharedSubplanExec::new(
                    input(),
                    n.id,
                    n.consumers,
                    n.cell.clone(),
                ));
                match &n.after {
                    Some(p) => {
                        let p = state.create_physical_expr(p.clone(), n.input.schema())?;
                        Arc::new(datafusion::physical_plan::filter::FilterExec::try_new(
                            p, shared,
                        )?)
                    }
                    None => shared,
                }
            }
            GraphNode::ConstRow(n) => {
                let empty = DFSchema::empty();
                let exec = super::const_row::ConstRowExec::try_new(
                    n,
                    physical_inputs.first().cloned(),
                    |e| state.create_physical_expr(e, &empty),
                )?;
                Arc::new(exec)
            }
            GraphNode::Lookup(n) => plan_lookup(n, input(), state).await?,
        }))
    }
}

async fn plan_expand(
    n: &CsrExpand,
    input: Arc<dyn ExecutionPlan>,
    state: &SessionState,
) -> Result<Arc<dyn ExecutionPlan>> {
    let in_schema = input.schema();
    let key_idx = in_schema.index_of(&n.key)?;
    let close_idx = n
        .close
        .as_ref()
        .map(|c| in_schema.index_of(c))
        .transpose()?;
    let spec = expand_spec(n, key_idx, close_idx, state).await?;
    let schema = Arc::new(n.schema.as_arrow().clone());
    let exec = CsrExpandExec::try_new(input, spec, schema)?;
    Ok(Arc::new(exec.absorbing_limits(absorb_limits(state))))
}

async fn plan_intersect(
    n: &CsrIntersect,
    input: Arc<dyn ExecutionPlan>,
    state: &SessionState,
) -> Result<Arc<dyn ExecutionPlan>> {
    let in_schema = input.schema();
    let open = expand_spec(&n.open, in_schema.index_of(&n.open.key)?, None, state).await?;
    let mut closes = Vec::new();
    for c in &n.closes {
        let other = c
            .close
            .as_deref()
            .map(|o| in_schema.index_of(o))
            .transpose()?;
        // A closing hop's near node is the new one: not an input column.
        closes.push(expand_spec(c, usize::MAX, other, state).await?);
    }
    let schema = Arc::new(n.schema.as_arrow().clone());
    let exec = CsrIntersectExec::try_new(input, open, closes, schema)?;
    let Some(count) = &n.count else {
        return Ok(Arc::new(exec));
    };
    let (read, match_schema) = n.match_schema()?;
    let filter = count
        .filter
        .as_ref()
        .map(|f| {
            super::params::compile_marked(f.clone(), |e| {
                state.create_physical_expr(e, &match_schema)
            })
        })
        .transpose()?;
    let count = MatchCount {
        read,
        schema: Arc::new(match_schema.as_arrow().clone()),
        filter,
    };
    Ok(Arc::new(exec.counting(count)?))
}

async fn plan_lookup(
    n: &NodeLookup,
    input: Arc<dyn ExecutionPlan>,
    state: &SessionState,
) -> Result<Arc<dyn ExecutionPlan>> {
    let key_idx = input.schema().index_of(&n.key)?;
    let take: Vec<String> = n.target.output().map(|(c, _, _)| c.clone()).collect();
    n.columns.ensure(state, &take).await.map_err(ext)?;
    let spec = LookupSpec {
        key_idx,
        key_name: n.key.clone(),
        label: n.label.clone(),
        keys: n.keys.clone(),
        columns: n.columns.clone(),
        take_out: n.target.output().map(|(_, o, _)| o.clone()).collect(),
        take,
        keep_nulls: n.keys_exist,
        taken: Default::default(),
    };
    let schema = Arc::new(n.schema.as_arrow().clone());
    Ok(Arc::new(NodeLookupExec::try_new(input, spec, schema)?))
}

/// A search filter compiled over a batch of one column of element structs.
fn element_filter(
    state: &SessionState,
    e: &Option<datafusion::logical_expr::Expr>,
    col: &str,
    fields: Option<&arrow::datatypes::Fields>,
) -> Result<Option<Arc<dyn datafusion::physical_expr::PhysicalExpr>>> {
    let (Some(e), Some(fields)) = (e, fields) else {
        return Ok(None);
    };
    let t = arrow::datatypes::DataType::Struct(fields.clone());
    let schema = DFSchema::try_from(arrow::datatypes::Schema::new(vec![
        arrow::datatypes::Field::new(col, t, true),
    ]))?;
    Ok(Some(state.create_physical_expr(e.clone(), &schema)?))
}

/// A hop's run-time description: its columns loaded, its filters compiled; `key_idx` and
/// `close_idx` its input columns.
async fn expand_spec(
    n: &CsrExpand,
    key_idx: usize,
    close_idx: Option<usize>,
    state: &SessionState,
) -> Result<ExpandSpec> {
    let edge_take: Vec<String> = n.edge.output().map(|(c, _, _)| c.clone()).collect();
    let target_take: Vec<String> = n.target.output().map(|(c, _, _)| c.clone()).collect();
    let mut edge_need = edge_take.clone();
    edge_need.extend(filter_cols(&n.edge_filter, &n.edge));
    let mut target_need = target_take.clone();
    target_need.extend(filter_cols(&n.target_filter, &n.target));
    n.data.edges.ensure(state, &edge_need).await.map_err(ext)?;
    n.data
        .target
        .ensure(state, &target_need)
        .await
        .map_err(ext)?;
    let edge_filter = n
        .edge_filter
        .as_ref()
        .map(|p| compile_filter(p, &n.edge, &n.data.edges, state))
        .transpose()?;
    let target_filter = n
        .target_filter
        .as_ref()
        .map(|p| compile_filter(p, &n.target, &n.data.target, state))
        .transpose()?;
    Ok(ExpandSpec {
        key_idx,
        close_idx,
        orientations: n.orientations.clone(),
        data: n.data.clone(),
        edge_out: n.edge.output().map(|(_, o, _)| o.clone()).collect(),
        target_out: n.target.output().map(|(_, o, _)| o.clone()).collect(),
        edge_take,
        target_take,
        edge_filter,
        target_filter,
        key_name: n.key.clone(),
        edge_var: n.edge.var.clone(),
        target_var: n.target.var.clone(),
        count: n.count.is_some(),
        optional: n.optional,
    })
}

/// A `CountPaths`' hop: its columns loaded, its filters compiled.
async fn count_hop(h: &CountHop, state: &SessionState) -> Result<HopSpec> {
    h.data
        .edges
        .ensure(state, &filter_cols(&h.edge_filter, &h.edge))
        .await
        .map_err(ext)?;
    h.data
        .target
        .ensure(state, &filter_cols(&h.target_filter, &h.target))
        .await
        .map_err(ext)?;
    let compile = |f: &Option<Expr>, take: &TakeSpec, store: &TableColumns| {
        f.as_ref()
            .map(|p| compile_filter(p, take, store, state))
            .transpose()
    };
    Ok(HopSpec {
        rel_type: h.rel_type.clone(),
        orientations: h.orientations.clone(),
        data: h.data.clone(),
        target_filter: compile(&h.target_filter, &h.target, &h.data.target)?,
        edge_filter: compile(&h.edge_filter, &h.edge, &h.data.edges)?,
        lengths: h.lengths,
        optional: h.optional,
        matched_only: h.matched_only,
        branches: {
            let mut arms = Vec::with_capacity(h.branches.len());
            for arm in &h.branches {
                let mut hops = Vec::with_capacity(arm.len());
                for b in arm {
                    hops.push(Box::pin(count_hop(b, state)).await?);
                }
                arms.push(hops);
            }
            arms
        },
        fold: match &h.fold {
            None => None,
            Some(f) => Some(FoldSpec {
                distinct_ends: f.distinct_ends,
                distinct_edges: f.distinct_edges,
                absent: match f.absent.as_deref() {
                    None => None,
                    Some(a) => Some(Box::new(Box::pin(count_hop(a, state)).await?)),
                },
            }),
        },
    })
}

/// The physical factorized count: every hop's filters compiled, a closing hop for cycles.
async fn plan_count_paths(
    n: &CountPaths,
    input: Arc<dyn ExecutionPlan>,
    state: &SessionState,
) -> Result<Arc<dyn ExecutionPlan>> {
    let key_idx = input.schema().index_of(&n.key)?;
    let mut arms = Vec::new();
    for arm in &n.arms {
        let mut hops = Vec::new();
        for h in arm {
            hops.push(count_hop(h, state).await?);
        }
        arms.push(hops);
    }
    let schema = Arc::new(n.schema.as_arrow().clone());
    let output = match (n.per_row, n.distinct) {
        (false, _) => CountOutput::Total,
        (true, distinct) => CountOutput::PerRow { distinct },
    };
    let mut values = Vec::new();
    // One array per (arm, property): the executor pushes each once.
    let mut loaded: Vec<(usize, &str, Arc<arrow::array::Int64Array>)> = Vec::new();
    for v in &n.values {
        let known = loaded.iter().find(|l| l.0 == v.arm && l.1 == v.column);
        let column = match known {
            Some(l) => l.2.clone(),
            None => {
                let store = &n.arms[v.arm].last().expect("an arm has a hop").data.target;
                let column = store.load(state, &v.column).await.map_err(ext)?;
                let column = arrow::compute::cast(&column, &arrow::datatypes::DataType::Int64)?;
                let column = Arc::new(column.as_primitive::<arrow::datatypes::Int64Type>().clone());
                loaded.push((v.arm, &v.column, column.clone()));
                column
            }
        };
        values.push(ValueSpec {
            kind: v.kind,
            arm: v.arm,
            values: column,
        });
    }
    let mut exec = CountPathsExec::try_new(input, key_idx, arms, output, schema)?;
    if let Some(h) = &n.close {
        exec = exec.with_close(count_hop(h, state).await?)?;
    }
    if !n.joins.is_empty() {
        exec = exec.with_joins(n.joins.clone())?;
    }
    Ok(Arc::new(exec.with_values(values)?))
}

/// The row ids of each hop's table, as u64 (a path's edge ids); none in distinct mode, which
/// outputs no edge ids.
async fn load_row_ids(
    n: &VarLengthExpand,
    state: &SessionState,
) -> Result<Vec<Arc<arrow::array::UInt64Array>>> {
    let rowid = crate::storage::ROW_ID.to_string();
    let mut rowids = Vec::new();
    for h in n.hops.iter().filter(|_| !n.distinct) {
        let ids = h.edges.load(state, &rowid).await.map_err(ext)?;
        let ids = arrow::compute::cast(&ids, &arrow::datatypes::DataType::UInt64)?;
        let ids = ids
            .as_any()
            .downcast_ref::<arrow::array::UInt64Array>()
            .cloned()
            .ok_or_else(|| DataFusionError::Internal("row ids as u64".into()))?;
        rowids.push(Arc::new(ids));
    }
    Ok(rowids)
}

/// Loads the columns a traversal's path elements read: each label slot's key and the
/// properties it has, each hop's endpoints and properties.
async fn load_element_columns(
    n: &VarLengthExpand,
    e: &super::var_length::PathElems,
    state: &SessionState,
) -> Result<()> {
    let props = |fields: &arrow::datatypes::Fields, skip: usize| -> Vec<String> {
        fields.iter().skip(skip).map(|f| f.name().clone()).collect()
    };
    for (cols, key) in &e.slots {
        let mut want = vec![key.clone()];
        want.extend(props(&e.node_fields, 2).into_iter().filter(|c| cols.has(c)));
        cols.ensure(state, &want).await.map_err(ext)?;
    }
    for (h, ends) in n.hops.iter().zip(&e.ends) {
        let mut want = vec![ends.src.clone(), ends.dst.clone()];
        want.extend(
            props(&e.rel_fields, 4)
                .into_iter()
                .filter(|c| h.edges.has(c)),
        );
        h.edges.ensure(state, &want).await.map_err(ext)?;
    }
    Ok(())
}

/// A shortest-path search's physical spec: its element filters compiled, its bound end's
/// column found in `input`.
fn shortest_spec(
    n: &VarLengthExpand,
    sp: &super::var_length::ShortestPaths,
    input: &Arc<dyn ExecutionPlan>,
    state: &SessionState,
) -> Result<super::shortest::ShortestSpec> {
    Ok(super::shortest::ShortestSpec {
        node_filter: element_filter(
            state,
            &sp.node_filter,
            super::shortest::NODE_COL,
            n.elems.as_ref().map(|e| &e.node_fields),
        )?,
        rel_filter: element_filter(
            state,
            &sp.rel_filter,
            super::shortest::REL_COL,
            n.elems.as_ref().map(|e| &e.rel_fields),
        )?,
        mode: sp.mode,
        target_idx: sp
            .target
            .as_ref()
            .map(|t| input.schema().index_of(t))
            .transpose()?,
        end_keys: sp.end_keys.clone(),
        k_cap: sp.k_cap,
        budget: sp.budget,
    })
}

/// The physical variable-length traversal: row ids of the walked tables, the columns it takes
/// (the far node's, the path elements'), its shortest-path search with compiled filters.
async fn plan_var_length(
    n: &VarLengthExpand,
    input: Arc<dyn ExecutionPlan>,
    state: &SessionState,
) -> Result<Arc<dyn ExecutionPlan>> {
    let key_idx = input.schema().index_of(&n.key)?;
    let target_take: Vec<String> = n.target.output().map(|(c, _, _)| c.clone()).collect();
    let rowids = load_row_ids(n, state).await?;
    let mut target_need = target_take.clone();
    target_need.extend(filter_cols(&n.target_filter, &n.target));
    n.target_cols
        .ensure(state, &target_need)
        .await
        .map_err(ext)?;
    let target_filter = n
        .target_filter
        .as_ref()
        .map(|p| compile_filter(p, &n.target, &n.target_cols, state))
        .transpose()?;
    if let Some(e) = &n.elems {
        load_element_columns(n, e, state).await?;
    }
    let mut from_slot = vec![Vec::new(); n.labels.len()];
    for (i, h) in n.hops.iter().enumerate() {
        from_slot[h.from].push(i);
    }
    let max = n.max.map(|m| m.to_string()).unwrap_or_default();
    let spec = TraversalSpec {
        key_idx,
        key_name: n.key.clone(),
        hops: n.hops.clone(),
        rowids,
        from_slot,
        start: n.start,
        end: n.end,
        min: n.min,
        max: n.max,
        distinct: n.distinct,
        count: n.count.is_some(),
        near_keys: n.near_keys.clone(),
        target: n.target_cols.clone(),
        target_out: n.target.output().map(|(_, o, _)| o.clone()).collect(),
        target_var: n.target.var.clone(),
        target_take,
        target_filter,
        labels: n.labels.clone(),
        elems: n.elems.clone(),
        shortest: match &n.shortest {
            Some(sp) => Some(shortest_spec(n, sp, &input, state)?),
            None => None,
        },
        display: format!(
            "type={}, length={}..{max}, edges={}{}{}",
            n.types(),
            n.min,
            n.table_rows(),
            n.walk_note(),
            n.shortest
                .as_ref()
                .map(|s| s.describe())
                .unwrap_or_default()
        ),
    };
    let schema = Arc::new(n.schema.as_arrow().clone());
    let exec = VarLengthExec::try_new(input, spec, schema)?;
    Ok(Arc::new(exec.absorbing_limits(absorb_limits(state))))
}
