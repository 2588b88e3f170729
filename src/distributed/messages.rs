//! The messages the graph plan nodes travel as: a serde message (JSON) per node, names and
//! numbers as they are, DataFusion expressions, types and schemas as their datafusion-proto
//! encodings, and the data a node reads (CSR indexes, node keys, loaded columns) as
//! references: the graph's path, the state of its tables, and which part (`registry::Part`),
//! resolved through `registry` when decoded.

use super::codec::{err, proto_err, Bytes};
use super::planned::EmptyRows;
use super::registry::{self, Opened, Part};
use crate::operators::const_row::ConstRow;
use crate::operators::count_paths::{CountHop, CountPaths, Fold, JoinStep, PathValue, ValueKind};
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
use serde::de::DeserializeOwned;
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

/// A value as it travels between processes: `Msg` is what is sent (serde), `encode` and
/// `decode` convert. Plain values travel as they are; DataFusion expressions, types and
/// schemas as their datafusion-proto bytes; the data a node reads (indexes, keys, columns)
/// as references into the graph (`Part`). The graph nodes' messages are derived from their
/// fields by [`wire!`], so a field added to a node that does not travel fails to compile.
pub(super) trait Wire: Sized {
    type Msg: Serialize + DeserializeOwned + std::fmt::Debug;
    fn encode(&self, e: &mut Enc) -> Result<Self::Msg>;
    fn decode(m: &Self::Msg, d: &Dec) -> Result<Self>;
}

/// Values that travel as they are.
macro_rules! plain {
    ($($t:ty),*) => {$(
        impl Wire for $t {
            type Msg = $t;
            fn encode(&self, _: &mut Enc) -> Result<$t> {
                Ok(self.clone())
            }
            fn decode(m: &$t, _: &Dec) -> Result<$t> {
                Ok(m.clone())
            }
        }
    )*};
}
plain!(String, usize, u64, bool);

impl<T: Wire> Wire for Option<T> {
    type Msg = Option<T::Msg>;
    fn encode(&self, e: &mut Enc) -> Result<Self::Msg> {
        self.as_ref().map(|x| x.encode(e)).transpose()
    }
    fn decode(m: &Self::Msg, d: &Dec) -> Result<Self> {
        m.as_ref().map(|x| T::decode(x, d)).transpose()
    }
}

/// A recursive value (a message that holds one of its own kind).
impl<T: Wire> Wire for Box<T> {
    type Msg = Box<T::Msg>;
    fn encode(&self, e: &mut Enc) -> Result<Self::Msg> {
        Ok(Box::new(self.as_ref().encode(e)?))
    }
    fn decode(m: &Self::Msg, d: &Dec) -> Result<Self> {
        Ok(Box::new(T::decode(m, d)?))
    }
}

impl<T: Wire> Wire for Vec<T> {
    type Msg = Vec<T::Msg>;
    fn encode(&self, e: &mut Enc) -> Result<Self::Msg> {
        self.iter().map(|x| x.encode(e)).collect()
    }
    fn decode(m: &Self::Msg, d: &Dec) -> Result<Self> {
        m.iter().map(|x| T::decode(x, d)).collect()
    }
}

impl<A: Wire, B: Wire> Wire for (A, B) {
    type Msg = (A::Msg, B::Msg);
    fn encode(&self, e: &mut Enc) -> Result<Self::Msg> {
        Ok((self.0.encode(e)?, self.1.encode(e)?))
    }
    fn decode(m: &Self::Msg, d: &Dec) -> Result<Self> {
        Ok((A::decode(&m.0, d)?, B::decode(&m.1, d)?))
    }
}

impl<A: Wire, B: Wire, C: Wire> Wire for (A, B, C) {
    type Msg = (A::Msg, B::Msg, C::Msg);
    fn encode(&self, e: &mut Enc) -> Result<Self::Msg> {
        Ok((self.0.encode(e)?, self.1.encode(e)?, self.2.encode(e)?))
    }
    fn decode(m: &Self::Msg, d: &Dec) -> Result<Self> {
        Ok((
            A::decode(&m.0, d)?,
            B::decode(&m.1, d)?,
            C::decode(&m.2, d)?,
        ))
    }
}

/// Values that travel as bytes or graph parts, through an encoder and a decoder function.
macro_rules! through {
    ($($t:ty => $msg:ty: $enc:expr, $dec:expr;)*) => {$(
        impl Wire for $t {
            type Msg = $msg;
            fn encode(&self, e: &mut Enc) -> Result<$msg> {
                #[allow(clippy::redundant_closure_call)]
                ($enc)(self, e)
            }
            fn decode(m: &$msg, d: &Dec) -> Result<Self> {
                #[allow(clippy::redundant_closure_call)]
                ($dec)(m, d)
            }
        }
    )*};
}
through! {
    Expr => Bytes: |x: &Expr, e: &mut Enc| e.expr(x), |m: &Bytes, d: &Dec| d.expr(m);
    DataType => Bytes: |x, _: &mut Enc| dtype_bytes(x), |m: &Bytes, _: &Dec| dtype(m);
    DFSchemaRef => Bytes: |x: &DFSchemaRef, _: &mut Enc| df_schema_bytes(x), |m: &Bytes, _: &Dec| df_schema(m);
    Fields => Bytes: |x, _: &mut Enc| fields_bytes(x), |m: &Bytes, _: &Dec| fields(m);
    Arc<crate::csr::CsrIndex> => Part: |x, e: &mut Enc| e.csr(x), |m, d: &Dec| d.csr(m);
    Arc<crate::csr::NodeKeys> => Part: |x, e: &mut Enc| e.keys(x), |m, d: &Dec| d.keys(m);
    Arc<crate::csr::TableColumns> => Part: |x, e: &mut Enc| e.cols(x), |m, d: &Dec| d.cols(m);
}

/// `(0, _)` any shortest path, `(1, _)` all, `(2, k)` the k shortest.
impl Wire for cypher::ast::Shortest {
    type Msg = (u8, u64);
    fn encode(&self, _: &mut Enc) -> Result<(u8, u64)> {
        use cypher::ast::Shortest;
        Ok(match self {
            Shortest::Any => (0, 0),
            Shortest::All => (1, 0),
            Shortest::K(k) => (2, *k),
        })
    }
    fn decode(m: &(u8, u64), _: &Dec) -> Result<Self> {
        use cypher::ast::Shortest;
        Ok(match m {
            (0, _) => Shortest::Any,
            (1, _) => Shortest::All,
            (_, k) => Shortest::K(*k),
        })
    }
}

const KINDS: [ValueKind; 4] = [
    ValueKind::Sum,
    ValueKind::NonNull,
    ValueKind::Min,
    ValueKind::Max,
];

/// Its position in [`KINDS`].
impl Wire for ValueKind {
    type Msg = u8;
    fn encode(&self, _: &mut Enc) -> Result<u8> {
        Ok(KINDS.iter().position(|k| k == self).unwrap_or(0) as u8)
    }
    fn decode(m: &u8, _: &Dec) -> Result<Self> {
        KINDS
            .get(*m as usize)
            .copied()
            .ok_or_else(|| err("unknown value kind"))
    }
}

/// A struct's message, one field per travelling field. With `input`, a graph node: its
/// input plan is not sent (it is decoded as an empty placeholder that the caller replaces),
/// and the fields after `anew` are made anew on decoding.
macro_rules! wire {
    ($ty:ident as $msg:ident { $($f:ident: $t:ty),* $(,)? }
        $(input $input:ident $(anew { $($g:ident: $gv:expr),* $(,)? })?)?) => {
        #[derive(Debug, Serialize, Deserialize)]
        pub(super) struct $msg {
            $($f: <$t as Wire>::Msg,)*
        }

        impl Wire for $ty {
            type Msg = $msg;
            fn encode(&self, e: &mut Enc) -> Result<$msg> {
                Ok($msg {
                    $($f: Wire::encode(&self.$f, e)?,)*
                })
            }
            fn decode(m: &$msg, d: &Dec) -> Result<Self> {
                Ok($ty {
                    $($f: <$t as Wire>::decode(&m.$f, d)?,)*
                    $($input: placeholder(), $($($g: $gv,)*)?)?
                })
            }
        }
    };
}

wire!(TakeSpec as TakeMsg {
    var: String,
    all: Vec<(String, String, DataType)>,
    take: Vec<usize>,
    key: Option<usize>,
});

wire!(CsrData as DataMsg {
    index: Arc<crate::csr::CsrIndex>,
    near_keys: Arc<crate::csr::NodeKeys>,
    far_keys: Arc<crate::csr::NodeKeys>,
    edges: Arc<crate::csr::TableColumns>,
    target: Arc<crate::csr::TableColumns>,
});

wire!(CsrExpand as ExpandMsg {
    key: String,
    rel_type: String,
    rel: usize,
    orientations: Vec<bool>,
    edge: TakeSpec,
    target: TakeSpec,
    close: Option<String>,
    target_filter: Option<Expr>,
    edge_filter: Option<Expr>,
    count: Option<String>,
    optional: bool,
    data: CsrData,
    schema: DFSchemaRef,
} input input);

wire!(CycleCount as CycleCountMsg {
    output: String,
    filter: Option<Expr>,
});

wire!(CsrIntersect as IntersectMsg {
    open: CsrExpand,
    closes: Vec<CsrExpand>,
    count: Option<CycleCount>,
    schema: DFSchemaRef,
} input input);

wire!(NodeLookup as LookupMsg {
    key: String,
    label: String,
    target: TakeSpec,
    keys: Arc<crate::csr::NodeKeys>,
    columns: Arc<crate::csr::TableColumns>,
    keys_exist: bool,
    schema: DFSchemaRef,
} input input);

wire!(VarHop as VarHopMsg {
    rel: usize,
    rel_type: String,
    from: usize,
    to: usize,
    reverse: bool,
    skip_self_loops: bool,
    index: Arc<crate::csr::CsrIndex>,
    edges: Arc<crate::csr::TableColumns>,
});

wire!(HopEnds as HopEndsMsg {
    src: String,
    dst: String,
    from: String,
    to: String,
});

wire!(PathElems as ElemsMsg {
    nodes_col: String,
    rels_col: String,
    node_fields: Fields,
    rel_fields: Fields,
    slots: Vec<(Arc<crate::csr::TableColumns>, String)>,
    ends: Vec<HopEnds>,
});

wire!(ShortestPaths as ShortestMsg {
    mode: cypher::ast::Shortest,
    target: Option<String>,
    end_keys: Arc<crate::csr::NodeKeys>,
    k_cap: u64,
    budget: usize,
    node_filter: Option<Expr>,
    rel_filter: Option<Expr>,
});

wire!(VarLengthExpand as VarLengthMsg {
    key: String,
    hops: Vec<VarHop>,
    labels: Vec<String>,
    start: usize,
    end: usize,
    min: u64,
    max: Option<u64>,
    eids: String,
    target: TakeSpec,
    distinct: bool,
    elems: Option<PathElems>,
    shortest: Option<ShortestPaths>,
    target_filter: Option<Expr>,
    count: Option<String>,
    near_keys: Arc<crate::csr::NodeKeys>,
    target_cols: Arc<crate::csr::TableColumns>,
    schema: DFSchemaRef,
} input input);

wire!(CountHop as CountHopMsg {
    rel_type: String,
    orientations: Vec<bool>,
    data: CsrData,
    edge: TakeSpec,
    target: TakeSpec,
    target_filter: Option<Expr>,
    edge_filter: Option<Expr>,
    lengths: (u64, u64),
    fold: Option<Fold>,
    branches: Vec<Vec<CountHop>>,
    optional: bool,
    matched_only: bool,
});

wire!(Fold as FoldMsg {
    distinct_ends: bool,
    distinct_edges: bool,
    absent: Option<Box<CountHop>>,
});

wire!(PathValue as PathValueMsg {
    kind: ValueKind,
    arm: usize,
    column: String,
    output: String,
});

wire!(CountPaths as CountPathsMsg {
    key: String,
    arms: Vec<Vec<CountHop>>,
    output: String,
    per_row: bool,
    distinct: bool,
    close: Option<CountHop>,
    joins: Vec<JoinStep>,
    values: Vec<PathValue>,
    schema: DFSchemaRef,
} input input);

wire!(JoinStep as JoinStepMsg {
    from: usize,
    closes: Vec<(usize, bool)>,
});

// Each decoded occurrence evaluates its input itself: sharing needs one process.
wire!(SharedSubplan as SharedMsg {
    id: usize,
    consumers: usize,
    rows: Option<usize>,
    after: Option<Expr>,
} input input anew {
    cell: Arc::new(SharedCell::default()),
    probe: None,
});

/// The input of a node being decoded, until the caller puts its real one in.
fn placeholder() -> LogicalPlan {
    LogicalPlan::EmptyRelation(EmptyRelation {
        produce_one_row: false,
        schema: Arc::new(DFSchema::empty()),
    })
}

#[derive(Debug, Serialize, Deserialize)]
pub(super) enum NodeMsg {
    CsrExpand(ExpandMsg),
    CsrIntersect(IntersectMsg),
    NodeLookup(LookupMsg),
    VarLength(VarLengthMsg),
    CountPaths(CountPathsMsg),
    SharedSubplan(SharedMsg),
    EmptyRows {
        schema: Bytes,
    },
    ConstRow {
        /// Whether the row is added to an input.
        over_input: bool,
        exprs: <Vec<(String, Expr)> as Wire>::Msg,
        schema: Bytes,
    },
}

/// A logical node as sent: the graph it reads (if any) and its fields.
#[derive(Debug, Serialize, Deserialize)]
pub(super) struct LogicalMsg {
    pub graph: Option<GraphMsg>,
    pub node: NodeMsg,
}

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
        GraphNode::Expand(n) => NodeMsg::CsrExpand(n.encode(e)?),
        GraphNode::Intersect(n) => NodeMsg::CsrIntersect(n.encode(e)?),
        GraphNode::Lookup(n) => NodeMsg::NodeLookup(n.encode(e)?),
        GraphNode::VarLength(n) => NodeMsg::VarLength(n.encode(e)?),
        GraphNode::CountPaths(n) => NodeMsg::CountPaths(n.encode(e)?),
        GraphNode::Shared(n) => NodeMsg::SharedSubplan(n.encode(e)?),
        GraphNode::ConstRow(n) => NodeMsg::ConstRow {
            over_input: n.input.is_some(),
            exprs: n.exprs.encode(e)?,
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

/// `$ty` decoded from `$m`, over the one input of `$inputs`.
macro_rules! over_input {
    ($ty:ty, $m:expr, $inputs:expr, $d:expr) => {{
        let mut n = <$ty as Wire>::decode($m, $d)?;
        n.input = one_input($inputs)?;
        Arc::new(n)
    }};
}

pub(super) fn decode_node(
    msg: &NodeMsg,
    inputs: &[LogicalPlan],
    d: &Dec,
) -> Result<Arc<dyn UserDefinedLogicalNode>> {
    Ok(match msg {
        NodeMsg::CsrExpand(m) => over_input!(CsrExpand, m, inputs, d),
        NodeMsg::CsrIntersect(m) => over_input!(CsrIntersect, m, inputs, d),
        NodeMsg::NodeLookup(m) => over_input!(NodeLookup, m, inputs, d),
        NodeMsg::VarLength(m) => over_input!(VarLengthExpand, m, inputs, d),
        NodeMsg::CountPaths(m) => over_input!(CountPaths, m, inputs, d),
        NodeMsg::SharedSubplan(m) => over_input!(SharedSubplan, m, inputs, d),
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
            exprs: Wire::decode(exprs, d)?,
            schema: df_schema(schema)?,
        }),
    })
}
