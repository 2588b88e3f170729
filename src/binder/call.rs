//! A CALL bound: the procedure found, its arguments (literals or parameters) evaluated and
//! checked against the index they name, and the variables its YIELD binds.

use crate::catalog::{vector_dimension, Catalog, Indexed};
use crate::config::{IndexDecl, IndexKind};
use crate::error::Result;
use crate::functions::procedures::Procedure;
use crate::functions::value::Value;
use crate::sem_err;
use crate::storage::search::LanceSearch;
use cypher::ast::{self, ExprKind};
use cypher::Span;
use std::collections::BTreeMap;

/// A CALL of a search procedure, bound.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct BoundCall {
    /// The clause's span: the planner finds its CALL by it.
    pub span: Span,
    pub index: IndexDecl,
    /// The table searched.
    pub target: Target,
    /// What Lance searches that table for (the index's column, by property name).
    pub search: LanceSearch,
    /// The parameters the arguments read: the plan is built for their values.
    pub params: Vec<String>,
    /// (output position, variable), in YIELD's order.
    pub yields: Vec<(usize, String)>,
}

/// The table a search reads.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Target {
    /// A node table (its catalog name, the labels joined).
    Node(String),
    /// A relationship table (its catalog index).
    Rel(usize),
}

/// Binds `c` against `catalog`, its parameters' values in `params`.
pub(crate) fn bind_call(
    catalog: &Catalog,
    params: &BTreeMap<String, Value>,
    c: &ast::Call,
) -> Result<BoundCall> {
    let Some(procedure) = Procedure::lookup(&c.procedure) else {
        return sem_err!(
            ProcedureNotFound,
            c.procedure_span,
            "There is no procedure with the name `{}` (lance-csr answers {})",
            c.procedure,
            Procedure::names().join(", ")
        );
    };
    let (names, optional) = procedure.parameters();
    if c.args.len() > names.len() || c.args.len() + optional < names.len() {
        return sem_err!(
            InvalidArgumentType,
            c.span,
            "Procedure call provides {} arguments: expected {}",
            c.args.len(),
            procedure.signature()
        );
    }
    let mut read = Vec::new();
    let mut args = Vec::new();
    for (a, name) in c.args.iter().zip(names) {
        args.push(constant(a, name, params, &mut read)?);
    }
    let (index, on) = index_named(catalog, procedure, &args[0], c.args[0].span)?;
    let column = index.column.clone();
    let search = match procedure.index_kind() {
        IndexKind::Vector => {
            let dim = (on.props().iter())
                .find(|(p, _)| p == &index.column)
                .and_then(|(_, t)| vector_dimension(t))
                .unwrap_or(0);
            LanceSearch::Nearest {
                column,
                k: count(&args[1], c.args[1].span)?,
                query: vector(&args[2], dim, (&index.name, index.metric()), c.args[2].span)?,
                metric: index.metric(),
            }
        }
        IndexKind::Fulltext => LanceSearch::Text {
            column,
            query: match &args[1] {
                Value::Str(s) => match crate::storage::text_query::parse(s) {
                    Ok(q) => q,
                    Err(e) => return sem_err!(InvalidArgumentValue, c.args[1].span, "{e}"),
                },
                v => {
                    return sem_err!(
                        InvalidArgumentType,
                        c.args[1].span,
                        "queryString must be a string, got {v}"
                    )
                }
            },
            limit: text_options(args.get(2), c.args.get(2).map(|a| a.span))?,
        },
    };
    let outputs = procedure.outputs();
    let mut yields = Vec::new();
    for y in c.yields.iter().flatten() {
        let Some(at) = outputs.iter().position(|o| *o == y.field.name) else {
            return sem_err!(
                UndefinedVariable,
                y.field.span,
                "Unknown procedure output: `{}` ({} yields {})",
                y.field.name,
                procedure.name(),
                outputs.join(", ")
            );
        };
        yields.push((at, y.var().name.clone()));
    }
    Ok(BoundCall {
        span: c.span,
        index: index.clone(),
        target: match on {
            Indexed::Node(n) => Target::Node(n.label.clone()),
            Indexed::Rel(r) => Target::Rel(r.index),
        },
        search,
        params: read,
        yields,
    })
}

/// An argument's value: a literal or a parameter (the search is planned for it).
fn constant(
    a: &ast::Expr,
    name: &str,
    params: &BTreeMap<String, Value>,
    read: &mut Vec<String>,
) -> Result<Value> {
    if let ExprKind::Param(p) = &a.kind {
        read.push(p.clone());
        return match params.get(p) {
            // A list received as one Arrow list, as the values it holds.
            Some(Value::Other(s)) => Ok(Value::from_scalar(s)),
            Some(v) => Ok(v.clone()),
            None => sem_err!(MissingParameter, a.span, "Missing parameter ${p}"),
        };
    }
    match Value::from_literal(a) {
        Some(v) => Ok(v),
        None => sem_err!(
            NonConstantExpression,
            a.span,
            "{name} must be a literal or a parameter (a search is planned for its value)"
        ),
    }
}

fn index_named<'c>(
    catalog: &'c Catalog,
    procedure: Procedure,
    name: &Value,
    span: Span,
) -> Result<(&'c IndexDecl, Indexed<'c>)> {
    let Value::Str(name) = name else {
        return sem_err!(
            InvalidArgumentType,
            span,
            "indexName must be a string, got {name}"
        );
    };
    let kind = procedure.index_kind();
    let word = |k: IndexKind| match k {
        IndexKind::Vector => "vector",
        IndexKind::Fulltext => "full-text",
    };
    let over = |rel: bool| match rel {
        true => "relationships",
        false => "nodes",
    };
    match catalog.index(name) {
        Some((x, _))
            if x.kind == kind && x.relationship.is_some() != procedure.on_relationships() =>
        {
            sem_err!(
                ProcedureCallFailed,
                span,
                "`{name}` indexes {} of {}; {} searches {}",
                over(x.relationship.is_some()),
                x.target(),
                procedure.name(),
                over(procedure.on_relationships())
            )
        }
        Some((x, on)) if x.kind == kind => Ok((x, on)),
        Some((x, _)) => sem_err!(
            ProcedureCallFailed,
            span,
            "`{name}` is a {} index; {} searches a {} index",
            word(x.kind),
            procedure.name(),
            word(kind)
        ),
        None => {
            let same: Vec<&str> = (catalog.config.indexes.iter())
                .filter(|x| x.kind == kind)
                .map(|x| x.name.as_str())
                .collect();
            let have = match same.is_empty() {
                true => format!(
                    "the graph declares no {} index ([[indexes]] in graph.toml)",
                    word(kind)
                ),
                false => format!("its {} indexes: {}", word(kind), same.join(", ")),
            };
            sem_err!(
                ProcedureCallFailed,
                span,
                "There is no {} index named `{name}` ({have})",
                word(kind)
            )
        }
    }
}

fn count(v: &Value, span: Span) -> Result<usize> {
    match v {
        Value::Int(k) if *k >= 1 => Ok(usize::try_from(*k).unwrap_or(usize::MAX)),
        Value::Int(k) => sem_err!(
            InvalidArgumentValue,
            span,
            "numberOfNearestNeighbours must be at least 1, got {k}"
        ),
        v => sem_err!(
            InvalidArgumentType,
            span,
            "numberOfNearestNeighbours must be an integer, got {v}"
        ),
    }
}

/// The query vector of a search through `index` (of `metric`), as Lance compares it: for a
/// cosine index its direction, normalised in f64 (a zero vector has none: an error); for a
/// Euclidean one its values, each representable as a 32-bit float.
fn vector(
    v: &Value,
    dim: usize,
    (index, metric): (&str, crate::config::VectorMetric),
    span: Span,
) -> Result<Vec<f32>> {
    let Value::List(xs) = v else {
        return sem_err!(
            InvalidArgumentType,
            span,
            "the query vector must be a list of numbers, got {v}"
        );
    };
    let mut wide = Vec::with_capacity(xs.len());
    for x in xs {
        match x {
            Value::Int(i) => wide.push(*i as f64),
            Value::Float(f) if f.is_finite() => wide.push(*f),
            x => {
                return sem_err!(
                    InvalidArgumentType,
                    span,
                    "the query vector must be a list of finite numbers, it holds {x}"
                )
            }
        }
    }
    if wide.len() != dim {
        return sem_err!(
            InvalidArgumentValue,
            span,
            "the query vector has {} dimension{}; index `{index}` holds vectors of {dim}",
            wide.len(),
            if wide.len() == 1 { "" } else { "s" }
        );
    }
    if metric == crate::config::VectorMetric::Cosine {
        return match crate::functions::vector::unit_f32(&wide) {
            Some(v) => Ok(v),
            None => sem_err!(
                InvalidArgumentValue,
                span,
                "the query vector of a cosine index must not be all zeros (it has no direction)"
            ),
        };
    }
    match wide.iter().find(|x| !(**x as f32).is_finite()) {
        Some(x) => sem_err!(
            InvalidArgumentValue,
            span,
            "the query vector holds {x}, which a 32-bit float (what index `{index}` holds) cannot represent"
        ),
        None => Ok(wide.into_iter().map(|x| x as f32).collect()),
    }
}

/// The options map of a full-text query: `{limit: n}` (Neo4j's; `skip` and the analyzer's
/// options are not taken).
fn text_options(v: Option<&Value>, span: Option<Span>) -> Result<Option<usize>> {
    let (Some(v), Some(span)) = (v, span) else {
        return Ok(None);
    };
    let Value::Map(entries) = v else {
        return sem_err!(InvalidArgumentType, span, "options must be a map, got {v}");
    };
    let mut limit = None;
    for (k, x) in entries {
        match (k.as_str(), x) {
            ("limit", Value::Int(n)) if *n >= 0 => limit = Some(*n as usize),
            ("limit", x) => {
                return sem_err!(
                    InvalidArgumentValue,
                    span,
                    "options.limit must be a non-negative integer, got {x}"
                )
            }
            (k, _) => {
                return sem_err!(
                    InvalidArgumentValue,
                    span,
                    "unknown option `{k}` (the full-text search takes `limit`)"
                )
            }
        }
    }
    Ok(limit)
}
