//! Logical and physical extension codecs for the graph plan nodes: our logical nodes as their
//! messages (`messages.rs`); our physical operators as the logical node they were planned
//! from (`planned.rs`), planned again on the executor; scans as `scan::ScanSpec`; list
//! functions with their bodies. Anything else goes to Ballista's codecs.

use super::block_on;
use super::messages::{
    decode_node, df_schema, df_schema_bytes, dtype, dtype_bytes, encode_node, Dec, Enc, LogicalMsg,
};
use super::planned::{replan, PlannedExec};
use super::registry;
use super::scan::{FragmentScanExec, FragmentTable, ScanPart, ScanSpec, TableRef};
use arrow::datatypes::SchemaRef;
use ballista_core::serde::{BallistaLogicalExtensionCodec, BallistaPhysicalExtensionCodec};
use datafusion::catalog::TableProvider;
use datafusion::common::{DataFusionError, Result, TableReference};
use datafusion::execution::{SessionState, SessionStateBuilder, TaskContext};
use datafusion::logical_expr::{Extension, LogicalPlan, ScalarUDF, UserDefinedLogicalNode};
use datafusion::physical_plan::ExecutionPlan;
use datafusion_proto::logical_plan::LogicalExtensionCodec;
use datafusion_proto::physical_plan::PhysicalExtensionCodec;
use serde::{Deserialize, Serialize};
use std::sync::Arc;

/// Marks our messages among Ballista's (which are protobuf, never starting with this).
const MAGIC: &[u8] = b"LCSR1";

pub(super) type Bytes = Vec<u8>;

pub(super) fn err(msg: impl Into<String>) -> DataFusionError {
    DataFusionError::Internal(format!("plan codec: {}", msg.into()))
}

pub(super) fn proto_err(e: impl std::fmt::Display) -> DataFusionError {
    err(e.to_string())
}

fn wrap(msg: &impl Serialize, buf: &mut Vec<u8>) -> Result<()> {
    buf.extend_from_slice(MAGIC);
    serde_json::to_writer(buf, msg).map_err(proto_err)
}

fn unwrap<T: for<'a> Deserialize<'a>>(buf: &[u8]) -> Option<Result<T>> {
    let body = buf.strip_prefix(MAGIC)?;
    Some(serde_json::from_slice(body).map_err(proto_err))
}

/// A session over a task's context (for decoding steps that plan or read).
pub(crate) fn state_of(ctx: &TaskContext) -> SessionState {
    SessionStateBuilder::new()
        .with_config(ctx.session_config().clone())
        .with_runtime_env(ctx.runtime_env())
        .with_default_features()
        .build()
}

/// The logical codec: the graph nodes, tables as fragment scans of their Lance datasets,
/// our scalar functions; the rest is Ballista's.
#[derive(Debug, Default)]
pub struct GraphLogicalCodec {
    inner: Option<BallistaLogicalExtensionCodec>,
}

impl GraphLogicalCodec {
    pub fn new() -> Self {
        Self {
            inner: Some(BallistaLogicalExtensionCodec::default()),
        }
    }

    fn inner(&self) -> Result<&BallistaLogicalExtensionCodec> {
        self.inner
            .as_ref()
            .ok_or_else(|| err("not a graph plan node"))
    }

    /// Our node's message, or `None` when the node is not ours.
    pub fn encode_node(&self, node: &dyn UserDefinedLogicalNode) -> Result<Option<Bytes>> {
        let mut e = Enc::new(self);
        let Some(node) = encode_node(node, &mut e)? else {
            return Ok(None);
        };
        let mut buf = vec![];
        let msg = LogicalMsg {
            graph: e.graph_msg(),
            node,
        };
        wrap(&msg, &mut buf)?;
        Ok(Some(buf))
    }

    /// A node from `encode_node`'s message over `inputs`.
    pub fn decode_node(
        &self,
        buf: &[u8],
        inputs: &[LogicalPlan],
        ctx: &TaskContext,
    ) -> Result<Option<Arc<dyn UserDefinedLogicalNode>>> {
        let Some(msg) = unwrap::<LogicalMsg>(buf) else {
            return Ok(None);
        };
        let msg = msg?;
        let graph = match &msg.graph {
            Some(g) => {
                let state = state_of(ctx);
                let (path, versions) = (g.path.clone(), g.versions.clone());
                Some(block_on(move || async move {
                    registry::resolve(&path, &versions, &state)
                        .await
                        .map_err(DataFusionError::from)
                })?)
            }
            None => None,
        };
        let d = Dec {
            graph,
            ctx,
            codec: self,
        };
        decode_node(&msg.node, inputs, &d).map(Some)
    }
}

impl LogicalExtensionCodec for GraphLogicalCodec {
    fn try_decode(
        &self,
        buf: &[u8],
        inputs: &[LogicalPlan],
        ctx: &TaskContext,
    ) -> Result<Extension> {
        match self.decode_node(buf, inputs, ctx)? {
            Some(node) => Ok(Extension { node }),
            None => self.inner()?.try_decode(buf, inputs, ctx),
        }
    }

    fn try_encode(&self, node: &Extension, buf: &mut Vec<u8>) -> Result<()> {
        match self.encode_node(node.node.as_ref())? {
            Some(b) => {
                buf.extend(b);
                Ok(())
            }
            None => self.inner()?.try_encode(node, buf),
        }
    }

    fn try_decode_table_provider(
        &self,
        buf: &[u8],
        table_ref: &TableReference,
        schema: SchemaRef,
        ctx: &TaskContext,
    ) -> Result<Arc<dyn TableProvider>> {
        match unwrap::<TableRef>(buf) {
            Some(t) => {
                let t = t?;
                Ok(Arc::new(block_on(move || async move {
                    FragmentTable::open(t).await
                })?))
            }
            None => self
                .inner()?
                .try_decode_table_provider(buf, table_ref, schema, ctx),
        }
    }

    fn try_encode_table_provider(
        &self,
        table_ref: &TableReference,
        node: Arc<dyn TableProvider>,
        buf: &mut Vec<u8>,
    ) -> Result<()> {
        match table_ref_of(&node) {
            Some(t) => wrap(&t, buf),
            None if node.is::<datafusion::datasource::MemTable>() => Err(DataFusionError::Plan(
                "a graph built in memory can't run on a cluster: executors read Lance \
                     datasets (write the graph with `lance-csr import` or `write_graph` and \
                     open its graph.toml)"
                    .into(),
            )),
            None if node.is::<crate::storage::search::SearchTable>() => Err(DataFusionError::Plan(
                "a vector or full-text search (CALL db.index.*) runs in one process: \
                     open the graph without --cluster to search it"
                    .into(),
            )),
            None => self
                .inner()?
                .try_encode_table_provider(table_ref, node, buf),
        }
    }

    fn try_decode_udf(&self, name: &str, buf: &[u8]) -> Result<Arc<ScalarUDF>> {
        decode_udf(name, buf, self)
    }

    fn try_encode_udf(&self, node: &ScalarUDF, buf: &mut Vec<u8>) -> Result<()> {
        encode_udf(node, buf, self)
    }
}

/// The Lance dataset and version behind a table of ours.
fn table_ref_of(node: &Arc<dyn TableProvider>) -> Option<TableRef> {
    let inner = match node.downcast_ref::<crate::storage::stats::KeyStatisticsProvider>() {
        Some(s) => s.inner().clone(),
        None => node.clone(),
    };
    if let Some(t) = inner.downcast_ref::<FragmentTable>() {
        return Some(t.table.clone());
    }
    let lance = inner.downcast_ref::<crate::storage::lance_table::LanceTable>()?;
    let ds = lance.dataset();
    let row_id = inner
        .schema()
        .fields()
        .last()
        .is_some_and(|f| f.name() == crate::storage::ROW_ID);
    // A local path as every process sees it, whatever its working folder.
    let uri = match std::fs::canonicalize(ds.uri()) {
        Ok(p) => p.to_string_lossy().to_string(),
        Err(_) => ds.uri().to_string(),
    };
    Some(TableRef {
        uri,
        version: ds.version().version,
        row_id,
        columns: lance.columns().clone().into_iter().collect(),
    })
}

/// A context with DataFusion's functions (a list function's body is decoded without the
/// task's context).
static BUILT_INS: std::sync::LazyLock<TaskContext> = std::sync::LazyLock::new(|| {
    TaskContext::from(&SessionStateBuilder::new().with_default_features().build())
});

/// Our scalar functions: the stateless ones by name; a list comprehension with its body.
fn encode_udf(node: &ScalarUDF, buf: &mut Vec<u8>, codec: &GraphLogicalCodec) -> Result<()> {
    if let Some(parts) = crate::functions::comprehension::ListEval::parts_of(node) {
        let e = Enc::new(codec);
        let (op, filter, map, schema, out) = parts;
        let msg = (
            op,
            e.opt(filter)?,
            e.opt(map)?,
            df_schema_bytes(schema)?,
            dtype_bytes(out)?,
        );
        return wrap(&msg, buf);
    }
    if let Some((steps, order, out)) = crate::functions::chain::ChainEval::parts_of(node) {
        let e = Enc::new(codec);
        let steps = steps
            .iter()
            .map(|s| {
                Ok((
                    e.opt(&Some(s.expr.clone()))?,
                    df_schema_bytes(&s.schema)?,
                    dtype_bytes(&s.out)?,
                ))
            })
            .collect::<Result<Vec<_>>>()?;
        return wrap(&(steps, order, dtype_bytes(out)?), buf);
    }
    Ok(())
}

fn decode_udf(name: &str, buf: &[u8], codec: &GraphLogicalCodec) -> Result<Arc<ScalarUDF>> {
    // The body's functions are ours (the codec's) or DataFusion's built-ins.
    let d = Dec {
        graph: None,
        ctx: &BUILT_INS,
        codec,
    };
    if let Some(and) = match name {
        "cypher_all_of" => Some(true),
        "cypher_any_of" => Some(false),
        _ => None,
    } {
        return Ok(crate::functions::chain::BoolChain::udf(and));
    }
    if name == "cypher_chain" {
        type ChainMsg = (Vec<(Option<Bytes>, Bytes, Bytes)>, Vec<u32>, Bytes);
        let (steps, order, out) = unwrap::<ChainMsg>(buf).ok_or_else(|| err("a chain"))??;
        let steps = steps
            .iter()
            .map(|(expr, schema, out)| {
                Ok(crate::functions::chain::Step {
                    expr: d.opt(expr)?.ok_or_else(|| err("a chain step"))?,
                    schema: df_schema(schema)?,
                    out: dtype(out)?,
                })
            })
            .collect::<Result<Vec<_>>>()?;
        return Ok(crate::functions::chain::ChainEval::udf(
            steps,
            order,
            dtype(&out)?,
        ));
    }
    type ListMsg = (u8, Option<Bytes>, Option<Bytes>, Bytes, Bytes);
    if let Some(msg) = unwrap::<ListMsg>(buf) {
        let (op, filter, map, schema, out) = msg?;
        let schema = df_schema(&schema)?.as_ref().clone();
        return crate::functions::comprehension::ListEval::udf(
            op,
            d.opt(&filter)?,
            d.opt(&map)?,
            schema,
            dtype(&out)?,
        )
        .ok_or_else(|| err("unknown list operation"));
    }
    crate::functions::udf_by_name(name).ok_or_else(|| {
        DataFusionError::Plan(format!(
            "unknown scalar function {name} in a distributed plan"
        ))
    })
}

/// The physical codec: our operators (as the logical node they were planned from), fragment
/// scans; the rest is Ballista's.
#[derive(Debug)]
pub struct GraphPhysicalCodec {
    logical: Arc<GraphLogicalCodec>,
    inner: BallistaPhysicalExtensionCodec,
}

impl Default for GraphPhysicalCodec {
    fn default() -> Self {
        Self {
            logical: Arc::new(GraphLogicalCodec::new()),
            inner: BallistaPhysicalExtensionCodec::default(),
        }
    }
}

#[derive(Debug, Serialize, Deserialize)]
enum PhysicalMsg {
    /// A graph operator: its logical node's message, its inputs' schemas, an absorbed LIMIT.
    Planned {
        node: Bytes,
        inputs: Vec<Bytes>,
        fetch: Option<usize>,
    },
    Scan {
        table: TableRef,
        projection: Option<Vec<usize>>,
        filters: Vec<Bytes>,
        limit: Option<usize>,
        partitions: Vec<ScanPart>,
    },
}

impl PhysicalExtensionCodec for GraphPhysicalCodec {
    fn try_decode(
        &self,
        buf: &[u8],
        inputs: &[Arc<dyn ExecutionPlan>],
        ctx: &TaskContext,
    ) -> Result<Arc<dyn ExecutionPlan>> {
        let Some(msg) = unwrap::<PhysicalMsg>(buf) else {
            return self.inner.try_decode(buf, inputs, ctx);
        };
        match msg? {
            PhysicalMsg::Planned {
                node,
                inputs: schemas,
                fetch,
            } => {
                let schemas = schemas
                    .iter()
                    .map(|s| df_schema(s))
                    .collect::<Result<Vec<_>>>()?;
                replan(&self.logical, node, &schemas, inputs, fetch, ctx)
            }
            PhysicalMsg::Scan {
                table,
                projection,
                filters,
                limit,
                partitions,
            } => {
                let d = Dec {
                    graph: None,
                    ctx,
                    codec: self.logical.as_ref(),
                };
                let spec = ScanSpec {
                    table,
                    projection,
                    filters: filters.iter().map(|f| d.expr(f)).collect::<Result<_>>()?,
                    limit,
                    partitions,
                };
                Ok(Arc::new(FragmentScanExec::resolve(spec)?))
            }
        }
    }

    fn try_encode(&self, node: Arc<dyn ExecutionPlan>, buf: &mut Vec<u8>) -> Result<()> {
        if let Some(p) = (node.as_ref() as &dyn std::any::Any).downcast_ref::<PlannedExec>() {
            let msg = PhysicalMsg::Planned {
                node: p.node.clone(),
                inputs: p.inputs.clone(),
                fetch: p.fetch(),
            };
            return wrap(&msg, buf);
        }
        if let Some(s) = node.downcast_ref::<FragmentScanExec>() {
            let e = Enc::new(self.logical.as_ref());
            let msg = PhysicalMsg::Scan {
                table: s.spec.table.clone(),
                projection: s.spec.projection.clone(),
                filters: s
                    .spec
                    .filters
                    .iter()
                    .map(|f| e.expr(f))
                    .collect::<Result<_>>()?,
                limit: s.spec.limit,
                partitions: s.spec.partitions.clone(),
            };
            return wrap(&msg, buf);
        }
        self.inner.try_encode(node, buf)
    }

    fn try_decode_udf(&self, name: &str, buf: &[u8]) -> Result<Arc<ScalarUDF>> {
        decode_udf(name, buf, &self.logical)
    }

    fn try_encode_udf(&self, node: &ScalarUDF, buf: &mut Vec<u8>) -> Result<()> {
        encode_udf(node, buf, &self.logical)
    }
}
