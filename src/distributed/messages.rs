//! The messages the graph plan nodes travel as: a serde message (JSON) per node, names and
//! numbers as they are, DataFusion expressions, types and schemas as their datafusion-proto
//! encodings, and the data a node reads (CSR indexes, node keys, loaded columns) as
//! references: the graph's path, the state of its tables, and which part (`registry::Part`),
//! resolved through `registry` when decoded.

use super::codec::{err, proto_err, Bytes};
use super::planned::EmptyRows;
use super::registry::{self, Opened, Part};
use crate::operators::const_row::ConstRow;
use crate::operators::count_paths::{CountHop, CountPaths, PathValue, ValueKind};
use crate::operators::csr_expand::{CsrData, CsrExpand, TakeSpec};
use crate::operators::csr_intersect::{CsrIntersect, CycleCount};
use crate::operators::node::GraphNode;
use crate::operators::node_lookup::NodeLookup;
use crate::operators::shared::{SharedCell, SharedSubplan};
use crate::operators::var_length::{HopEnds, PathElems, ShortestPaths, VarHop, VarLengthExpand};
use arrow::datatypes::{DataType, Fields, Schema};
use datafusion::common::{DFSchema, DFSchemaRef, DataFusionError, Result};
use datafusion::execution::TaskContext;
use datafusion::logical_expr::{EmptyRelation, Expr, LogicalPlan, UserDefinedLogicalNode};
use datafusion_proto::logical_plan::from_proto::parse_expr;
use datafusion_proto::logical_plan::to_proto::serialize_expr;
use datafusion_proto::logical_plan::LogicalExtensionCodec;
use datafusion_proto::protobuf;
use prost::Message;
use serde::{Deserialize, Serialize};
use std::sync::Arc;

/// The graph a node reads: its path and the state of every table (`Catalog::versions`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(super) struct GraphMsg {
    pub path: String,
    pub versions: Vec<Option<u64>>,
}

/// Encoding of one node: finds the graph its parts belong to (one per node).
pub(super) struct Enc<'c> {
    graph: Option<Arc<Opened>>,
    codec: &'c dyn LogicalExtensionCodec,
}

impl<'c> Enc<'c> {
    pub(super) fn new(codec: &'c dyn LogicalExtensionCodec) -> Self {
        Self { graph: None, codec }
    }

    fn part(&mut self, found: Option<(Arc<Opened>, Part)>, what: &str) -> Result<Part> {
        let (g, part) = found.ok_or_else(|| {
            DataFusionError::Plan(format!(
                "the plan reads {what} of a graph this process did not register for \
                 distributed execution (only graphs opened from a graph.toml can run on a \
                 cluster)"
            ))
        })?;
        match &self.graph {
            Some(have) if have.path != g.path => Err(err("a node reads two graphs")),
            _ => {
                self.graph = Some(g);
                Ok(part)
            }
        }
    }

    fn csr(&mut self, d: &Arc<crate::csr::CsrIndex>) -> Result<Part> {
        self.part(registry::locate_csr(d), "an index")
    }
    fn keys(&mut self, d: &Arc<crate::csr::NodeKeys>) -> Result<Part> {
        self.part(registry::locate_keys(d), "node keys")
    }
    fn cols(&mut self, d: &Arc<crate::csr::TableColumns>) -> Result<Part> {
        self.part(registry::locate_columns(d), "table columns")
    }

    pub(super) fn expr(&self, e: &Expr) -> Result<Bytes> {
        Ok(serialize_expr(e, self.codec)
            .map_err(proto_err)?
            .encode_to_vec())
    }

    pub(super) fn opt(&self, e: &Option<Expr>) -> Result<Option<Bytes>> {
        e.as_ref().map(|e| self.expr(e)).transpose()
    }

    pub(super) fn graph_msg(&self) -> Option<GraphMsg> {
        self.graph.as_ref().map(|g| GraphMsg {
            path: g.path.clone(),
            versions: g.catalog.versions(),
        })
    }
}

/// Decoding of one node: the graph is resolved once.
pub(super) struct Dec<'a> {
    pub graph: Option<Arc<Opened>>,
    pub ctx: &'a TaskContext,
    pub codec: &'a dyn LogicalExtensionCodec,
}

impl Dec<'_> {
    fn graph(&self) -> Result<&Opened> {
        self.graph
            .as_deref()
            .ok_or_else(|| err("a node that reads a graph names none"))
    }
    pub(super) fn expr(&self, b: &[u8]) -> Result<Expr> {
        let node = protobuf::LogicalExprNode::decode(b).map_err(proto_err)?;
        parse_expr(&node, self.ctx, self.codec).map_err(proto_err)
    }
    pub(super) fn opt(&self, b: &Option<Bytes>) -> Result<Option<Expr>> {
        b.as_deref().map(|b| self.expr(b)).transpose()
    }
    fn map_err(e: crate::Error) -> DataFusionError {
        e.into()
    }
    fn csr(&self, p: &Part) -> Result<Arc<crate::csr::CsrIndex>> {
        self.graph()?.csr(p).map_err(Self::map_err)
    }
    fn keys(&self, p: &Part) -> Result<Arc<crate::csr::NodeKeys>> {
        self.graph()?.keys(p).map_err(Self::map_err)
    }
    fn cols(&self, p: &Part) -> Result<Arc<crate::csr::TableColumns>> {
        self.graph()?.columns(p).map_err(Self::map_err)
    }
}

pub(super) fn dtype_bytes(t: &DataType) -> Result<Bytes> {
    Ok(protobuf::ArrowType::try_from(t)
        .map_err(proto_err)?
        .encode_to_vec())
}

pub(super) fn dtype(b: &[u8]) -> Result<DataType> {
    let t = protobuf::ArrowType::decode(b).map_err(proto_err)?;
    DataType::try_from(&t).map_err(proto_err)
}

pub(super) fn df_schema_bytes(s: &DFSchema) -> Result<Bytes> {
    Ok(protobuf::DfSchema::try_from(s)
        .map_err(proto_err)?
        .encode_to_vec())
}

pub(crate) fn df_schema(b: &[u8]) -> Result<DFSchemaRef> {
    let s = protobuf::DfSchema::decode(b).map_err(proto_err)?;
    Ok(Arc::new(DFSchema::try_from(&s).map_err(proto_err)?))
}

pub(super) fn fields_bytes(f: &Fields) -> Result<Bytes> {
    let s = Schema::new(f.clone());
    Ok(protobuf::Schema::try_from(&s)
        .map_err(proto_err)?
        .encode_to_vec())
}

pub(super) fn fields(b: &[u8]) -> Result<Fields> {
    let s = protobuf::Schema::decode(b).map_err(proto_err)?;
    Ok(Schema::try_from(&s).map_err(proto_err)?.fields().clone())
}

#[derive(Debug, Serialize, Deserialize)]
pub(super) struct TakeMsg {
    var: String,
    all: Vec<(String, String, Bytes)>,
    take: Vec<usize>,
    key: Option<usize>,
}

impl TakeMsg {
    fn of(t: &TakeSpec) -> Result<Self> {
        Ok(Self {
            var: t.var.clone(),
            all: t
                .all
                .iter()
                .map(|(c, o, d)| Ok((c.clone(), o.clone(), dtype_bytes(d)?)))
                .collect::<Result<_>>()?,
            take: t.take.clone(),
            key: t.key,
        })
    }

    fn spec(&self) -> Result<TakeSpec> {
        Ok(TakeSpec {
            var: self.var.clone(),
            all: self
                .all
                .iter()
                .map(|(c, o, d)| Ok((c.clone(), o.clone(), dtype(d)?)))
                .collect::<Result<_>>()?,
            take: self.take.clone(),
            key: self.key,
        })
    }
}

#[derive(Debug, Serialize, Deserialize)]
pub(super) struct DataMsg {
    index: Part,
    near_keys: Part,
    far_keys: Part,
    edges: Part,
    target: Part,
}

impl DataMsg {
    fn of(d: &CsrData, e: &mut Enc) -> Result<Self> {
        Ok(Self {
            index: e.csr(&d.index)?,
            near_keys: e.keys(&d.near_keys)?,
            far_keys: e.keys(&d.far_keys)?,
            edges: e.cols(&d.edges)?,
            target: e.cols(&d.target)?,
        })
    }

    fn data(&self, d: &Dec) -> Result<CsrData> {
        Ok(CsrData {
            index: d.csr(&self.index)?,
            near_keys: d.keys(&self.near_keys)?,
            far_keys: d.keys(&self.far_keys)?,
            edges: d.cols(&self.edges)?,
            target: d.cols(&self.target)?,
        })
    }
}

#[derive(Debug, Serialize, Deserialize)]
pub(super) struct ExpandMsg {
    key: String,
    rel_type: String,
    rel: usize,
    orientations: Vec<bool>,
    edge: TakeMsg,
    target: TakeMsg,
    close: Option<String>,
    target_filter: Option<Bytes>,
    edge_filter: Option<Bytes>,
    count: Option<String>,
    data: DataMsg,
    schema: Bytes,
}

impl ExpandMsg {
    fn of(n: &CsrExpand, e: &mut Enc) -> Result<Self> {
        Ok(Self {
            key: n.key.clone(),
            rel_type: n.rel_type.clone(),
            rel: n.rel,
            orientations: n.orientations.clone(),
            edge: TakeMsg::of(&n.edge)?,
            target: TakeMsg::of(&n.target)?,
            close: n.close.clone(),
            target_filter: e.opt(&n.target_filter)?,
            edge_filter: e.opt(&n.edge_filter)?,
            count: n.count.clone(),
            data: DataMsg::of(&n.data, e)?,
            schema: df_schema_bytes(&n.schema)?,
        })
    }

    fn node(&self, input: LogicalPlan, d: &Dec) -> Result<CsrExpand> {
        Ok(CsrExpand {
            input,
            key: self.key.clone(),
            rel_type: self.rel_type.clone(),
            rel: self.rel,
            orientations: self.orientations.clone(),
            edge: self.edge.spec()?,
            target: self.target.spec()?,
            close: self.close.clone(),
            target_filter: d.opt(&self.target_filter)?,
            edge_filter: d.opt(&self.edge_filter)?,
            count: self.count.clone(),
            data: self.data.data(d)?,
            schema: df_schema(&self.schema)?,
        })
    }
}

#[derive(Debug, Serialize, Deserialize)]
pub(super) struct CountHopMsg {
    rel_type: String,
    orientations: Vec<bool>,
    data: DataMsg,
    edge: TakeMsg,
    target: TakeMsg,
    target_filter: Option<Bytes>,
    edge_filter: Option<Bytes>,
    lengths: (u64, u64),
}

impl CountHopMsg {
    fn of(h: &CountHop, e: &mut Enc) -> Result<Self> {
        Ok(Self {
            rel_type: h.rel_type.clone(),
            orientations: h.orientations.clone(),
            data: DataMsg::of(&h.data, e)?,
            edge: TakeMsg::of(&h.edge)?,
            target: TakeMsg::of(&h.target)?,
            target_filter: e.opt(&h.target_filter)?,
            edge_filter: e.opt(&h.edge_filter)?,
            lengths: h.lengths,
        })
    }

    fn hop(&self, d: &Dec) -> Result<CountHop> {
        Ok(CountHop {
            rel_type: self.rel_type.clone(),
            orientations: self.orientations.clone(),
            data: self.data.data(d)?,
            edge: self.edge.spec()?,
            target: self.target.spec()?,
            target_filter: d.opt(&self.target_filter)?,
            edge_filter: d.opt(&self.edge_filter)?,
            lengths: self.lengths,
        })
    }
}

#[derive(Debug, Serialize, Deserialize)]
pub(super) struct VarHopMsg {
    rel: usize,
    rel_type: String,
    from: usize,
    to: usize,
    reverse: bool,
    skip_self_loops: bool,
    index: Part,
    edges: Part,
}

#[derive(Debug, Serialize, Deserialize)]
pub(super) struct ElemsMsg {
    nodes_col: String,
    rels_col: String,
    node_fields: Bytes,
    rel_fields: Bytes,
    slots: Vec<(Part, String)>,
    /// Per hop: source and destination key columns, their labels.
    ends: Vec<[String; 4]>,
}

#[derive(Debug, Serialize, Deserialize)]
pub(super) struct ShortestMsg {
    /// `None`: all shortest paths; `Some(0)`: any one; `Some(k)`: the k shortest.
    mode: (u8, u64),
    target: Option<String>,
    end_keys: Part,
    k_cap: u64,
    budget: usize,
    node_filter: Option<Bytes>,
    rel_filter: Option<Bytes>,
}

#[derive(Debug, Serialize, Deserialize)]
pub(super) struct VarLengthMsg {
    key: String,
    hops: Vec<VarHopMsg>,
    labels: Vec<String>,
    start: usize,
    end: usize,
    min: u64,
    max: Option<u64>,
    eids: String,
    target: TakeMsg,
    distinct: bool,
    elems: Option<ElemsMsg>,
    shortest: Option<ShortestMsg>,
    target_filter: Option<Bytes>,
    #[serde(default)]
    count: Option<String>,
    near_keys: Part,
    target_cols: Part,
    schema: Bytes,
}

impl VarLengthMsg {
    fn of(n: &VarLengthExpand, e: &mut Enc) -> Result<Self> {
        let hops = n
            .hops
            .iter()
            .map(|h| {
                Ok(VarHopMsg {
                    rel: h.rel,
                    rel_type: h.rel_type.clone(),
                    from: h.from,
                    to: h.to,
                    reverse: h.reverse,
                    skip_self_loops: h.skip_self_loops,
                    index: e.csr(&h.index)?,
                    edges: e.cols(&h.edges)?,
                })
            })
            .collect::<Result<_>>()?;
        let elems = match &n.elems {
            None => None,
            Some(p) => Some(ElemsMsg {
                nodes_col: p.nodes_col.clone(),
                rels_col: p.rels_col.clone(),
                node_fields: fields_bytes(&p.node_fields)?,
                rel_fields: fields_bytes(&p.rel_fields)?,
                slots: p
                    .slots
                    .iter()
                    .map(|(c, k)| Ok((e.cols(c)?, k.clone())))
                    .collect::<Result<_>>()?,
                ends: p
                    .ends
                    .iter()
                    .map(|h| [h.src.clone(), h.dst.clone(), h.from.clone(), h.to.clone()])
                    .collect(),
            }),
        };
        let shortest = match &n.shortest {
            None => None,
            Some(s) => Some(ShortestMsg {
                mode: match s.mode {
                    cypher::ast::Shortest::Any => (0, 0),
                    cypher::ast::Shortest::All => (1, 0),
                    cypher::ast::Shortest::K(k) => (2, k),
                },
                target: s.target.clone(),
                end_keys: e.keys(&s.end_keys)?,
                k_cap: s.k_cap,
                budget: s.budget,
                node_filter: e.opt(&s.node_filter)?,
                rel_filter: e.opt(&s.rel_filter)?,
            }),
        };
        Ok(Self {
            key: n.key.clone(),
            hops,
            labels: n.labels.clone(),
            start: n.start,
            end: n.end,
            min: n.min,
            max: n.max,
            eids: n.eids.clone(),
            target: TakeMsg::of(&n.target)?,
            distinct: n.distinct,
            elems,
            shortest,
            target_filter: e.opt(&n.target_filter)?,
            count: n.count.clone(),
            near_keys: e.keys(&n.near_keys)?,
            target_cols: e.cols(&n.target_cols)?,
            schema: df_schema_bytes(&n.schema)?,
        })
    }

    fn node(&self, input: LogicalPlan, d: &Dec) -> Result<VarLengthExpand> {
        let hops = self
            .hops
            .iter()
            .map(|h| {
                Ok(VarHop {
                    rel: h.rel,
                    rel_type: h.rel_type.clone(),
                    from: h.from,
                    to: h.to,
                    reverse: h.reverse,
                    skip_self_loops: h.skip_self_loops,
                    index: d.csr(&h.index)?,
                    edges: d.cols(&h.edges)?,
                })
            })
            .collect::<Result<_>>()?;
        let elems = match &self.elems {
            None => None,
            Some(p) => Some(PathElems {
                nodes_col: p.nodes_col.clone(),
                rels_col: p.rels_col.clone(),
                node_fields: fields(&p.node_fields)?,
                rel_fields: fields(&p.rel_fields)?,
                slots: p
                    .slots
                    .iter()
                    .map(|(c, k)| Ok((d.cols(c)?, k.clone())))
                    .collect::<Result<_>>()?,
                ends: p
                    .ends
                    .iter()
                    .map(|[src, dst, from, to]| HopEnds {
                        src: src.clone(),
                        dst: dst.clone(),
                        from: from.clone(),
                        to: to.clone(),
                    })
                    .collect(),
            }),
        };
        let shortest = match &self.shortest {
            None => None,
            Some(s) => Some(ShortestPaths {
                mode: match s.mode {
                    (0, _) => cypher::ast::Shortest::Any,
                    (1, _) => cypher::ast::Shortest::All,
                    (_, k) => cypher::ast::Shortest::K(k),
                },
                target: s.target.clone(),
                end_keys: d.keys(&s.end_keys)?,
                k_cap: s.k_cap,
                budget: s.budget,
                node_filter: d.opt(&s.node_filter)?,
                rel_filter: d.opt(&s.rel_filter)?,
            }),
        };
        Ok(VarLengthExpand {
            input,
            key: self.key.clone(),
            hops,
            labels: self.labels.clone(),
            start: self.start,
            end: self.end,
            min: self.min,
            max: self.max,
            eids: self.eids.clone(),
            target: self.target.spec()?,
            distinct: self.distinct,
            elems,
            shortest,
            target_filter: d.opt(&self.target_filter)?,
            count: self.count.clone(),
            near_keys: d.keys(&self.near_keys)?,
            target_cols: d.cols(&self.target_cols)?,
            schema: df_schema(&self.schema)?,
        })
    }
}

#[derive(Debug, Serialize, Deserialize)]
pub(super) struct CountPathsMsg {
    key: String,
    arms: Vec<Vec<CountHopMsg>>,
    output: String,
    per_row: bool,
    distinct: bool,
    close: Option<CountHopMsg>,
    /// (kind: 0 sum, 1 non-null count, 2 min, 3 max; arm; column; output)
    values: Vec<(u8, usize, String, String)>,
    schema: Bytes,
}

#[derive(Debug, Serialize, Deserialize)]
pub(super) enum NodeMsg {
    CsrExpand(ExpandMsg),
    CsrIntersect {
        open: ExpandMsg,
        closes: Vec<ExpandMsg>,
        count: Option<(String, Option<Bytes>)>,
        schema: Bytes,
    },
    NodeLookup {
        key: String,
        label: String,
        target: TakeMsg,
        keys: Part,
        columns: Part,
        keys_exist: bool,
        schema: Bytes,
    },
    VarLength(VarLengthMsg),
    CountPaths(CountPathsMsg),
    SharedSubplan {
        id: usize,
        consumers: usize,
        rows: Option<usize>,
        after: Option<Bytes>,
    },
    EmptyRows {
        schema: Bytes,
    },
    ConstRow {
        /// Whether the row is added to an input.
        over_input: bool,
        exprs: Vec<(String, Bytes)>,
        schema: Bytes,
    },
}

/// A logical node as sent: the graph it reads (if any) and its fields.
#[derive(Debug, Serialize, Deserialize)]
pub(super) struct LogicalMsg {
    pub graph: Option<GraphMsg>,
    pub node: NodeMsg,
}

const KINDS: [ValueKind; 4] = [
    ValueKind::Sum,
    ValueKind::NonNull,
    ValueKind::Min,
    ValueKind::Max,
];

pub(super) fn encode_node(
    node: &dyn UserDefinedLogicalNode,
    e: &mut Enc,
) -> Result<Option<NodeMsg>> {
    let Some(graph_node) = GraphNode::of(node) else {
        // The one node of the distributed planner's own.
        return Ok(match node.as_any().downcast_ref::<EmptyRows>() {
            Some(n) => Some(NodeMsg::EmptyRows {
                schema: df_schema_bytes(&n.schema)?,
            }),
            None => None,
        });
    };
    let msg = match graph_node {
        GraphNode::Expand(n) => NodeMsg::CsrExpand(ExpandMsg::of(n, e)?),
        GraphNode::Intersect(n) => NodeMsg::CsrIntersect {
            open: ExpandMsg::of(&n.open, e)?,
            closes: n
                .closes
                .iter()
                .map(|c| ExpandMsg::of(c, e))
                .collect::<Result<_>>()?,
            count: match &n.count {
                Some(c) => Some((c.output.clone(), e.opt(&c.filter)?)),
                None => None,
            },
            schema: df_schema_bytes(&n.schema)?,
        },
        GraphNode::Lookup(n) => NodeMsg::NodeLookup {
            key: n.key.clone(),
            label: n.label.clone(),
            target: TakeMsg::of(&n.target)?,
            keys: e.keys(&n.keys)?,
            columns: e.cols(&n.columns)?,
            keys_exist: n.keys_exist,
            schema: df_schema_bytes(&n.schema)?,
        },
        GraphNode::VarLength(n) => NodeMsg::VarLength(VarLengthMsg::of(n, e)?),
        GraphNode::CountPaths(n) => NodeMsg::CountPaths(CountPathsMsg {
            key: n.key.clone(),
            arms: n
                .arms
                .iter()
                .map(|a| a.iter().map(|h| CountHopMsg::of(h, e)).collect())
                .collect::<Result<_>>()?,
            output: n.output.clone(),
            per_row: n.per_row,
            distinct: n.distinct,
            close: n
                .close
                .as_ref()
                .map(|h| CountHopMsg::of(h, e))
                .transpose()?,
            values: n
                .values
                .iter()
                .map(|v| {
                    let kind = KINDS.iter().position(|k| *k == v.kind).unwrap_or(0) as u8;
                    (kind, v.arm, v.column.clone(), v.output.clone())
                })
                .collect(),
            schema: df_schema_bytes(&n.schema)?,
        }),
        GraphNode::Shared(n) => NodeMsg::SharedSubplan {
            id: n.id,
            consumers: n.consumers,
            rows: n.rows,
            after: n.after.as_ref().map(|x| e.expr(x)).transpose()?,
        },
        GraphNode::ConstRow(n) => NodeMsg::ConstRow {
            over_input: n.input.is_some(),
            exprs: n
                .exprs
                .iter()
                .map(|(c, x)| Ok((c.clone(), e.expr(x)?)))
                .collect::<Result<_>>()?,
            schema: df_schema_bytes(&n.schema)?,
        },
    };
    Ok(Some(msg))
}

fn one_input(inputs: &[LogicalPlan]) -> Result<LogicalPlan> {
    inputs
        .first()
        .cloned()
        .ok_or_else(|| err("a graph node without its input"))
}

impl CountPathsMsg {
    /// The node this message describes, over `input`.
    fn node(&self, input: LogicalPlan, d: &Dec) -> Result<CountPaths> {
        let value = |(k, arm, column, output): &(u8, usize, String, String)| {
            Ok(PathValue {
                kind: *KINDS
                    .get(*k as usize)
                    .ok_or_else(|| err("unknown value kind"))?,
                arm: *arm,
                column: column.clone(),
                output: output.clone(),
            })
        };
        Ok(CountPaths {
            input,
            key: self.key.clone(),
            arms: self
                .arms
                .iter()
                .map(|a| a.iter().map(|h| h.hop(d)).collect())
                .collect::<Result<_>>()?,
            output: self.output.clone(),
            per_row: self.per_row,
            distinct: self.distinct,
            close: self.close.as_ref().map(|h| h.hop(d)).transpose()?,
            values: self.values.iter().map(value).collect::<Result<_>>()?,
            schema: df_schema(&self.schema)?,
        })
    }
}

pub(super) fn decode_node(
    msg: &NodeMsg,
    inputs: &[LogicalPlan],
    d: &Dec,
) -> Result<Arc<dyn UserDefinedLogicalNode>> {
    let none = || {
        LogicalPlan::EmptyRelation(EmptyRelation {
            produce_one_row: false,
            schema: Arc::new(DFSchema::empty()),
        })
    };
    Ok(match msg {
        NodeMsg::CsrExpand(m) => Arc::new(m.node(one_input(inputs)?, d)?),
        NodeMsg::CsrIntersect {
            open,
            closes,
            count,
            schema,
        } => Arc::new(CsrIntersect {
            input: one_input(inputs)?,
            open: open.node(none(), d)?,
            closes: closes
                .iter()
                .map(|c| c.node(none(), d))
                .collect::<Result<_>>()?,
            count: count
                .as_ref()
                .map(|(output, filter)| -> Result<CycleCount> {
                    Ok(CycleCount {
                        output: output.clone(),
                        filter: d.opt(filter)?,
                    })
                })
                .transpose()?,
            schema: df_schema(schema)?,
        }),
        NodeMsg::NodeLookup {
            key,
            label,
            target,
            keys,
            columns,
            keys_exist,
            schema,
        } => Arc::new(NodeLookup {
            input: one_input(inputs)?,
            key: key.clone(),
            label: label.clone(),
            target: target.spec()?,
            keys: d.keys(keys)?,
            columns: d.cols(columns)?,
            keys_exist: *keys_exist,
            schema: df_schema(schema)?,
        }),
        NodeMsg::VarLength(m) => Arc::new(m.node(one_input(inputs)?, d)?),
        NodeMsg::CountPaths(m) => Arc::new(m.node(one_input(inputs)?, d)?),
        // Each decoded occurrence evaluates its input itself: sharing needs one process.
        NodeMsg::SharedSubplan {
            id,
            consumers,
            rows,
            after,
        } => Arc::new(SharedSubplan {
            input: one_input(inputs)?,
            id: *id,
            consumers: *consumers,
            rows: *rows,
            cell: Arc::new(SharedCell::default()),
            after: after.as_deref().map(|b| d.expr(b)).transpose()?,
            probe: None,
        }),
        NodeMsg::EmptyRows { schema } => Arc::new(EmptyRows {
            schema: df_schema(schema)?,
        }),
        NodeMsg::ConstRow {
            over_input,
            exprs,
            schema,
        } => Arc::new(ConstRow {
            input: if *over_input {
                Some(one_input(inputs)?)
            } else {
                None
            },
            exprs: exprs
                .iter()
                .map(|(c, b)| Ok((c.clone(), d.expr(b)?)))
                .collect::<Result<_>>()?,
            schema: df_schema(schema)?,
        }),
    })
}
