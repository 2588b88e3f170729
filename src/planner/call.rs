//! CALL of a search procedure: the rows of a node or relationship table a Lance search finds
//! (`SearchTable`: nearest vectors or matching text, through the dataset's index where it has
//! one), each a node or relationship with its score, crossed with the rows so far; YIELD's
//! WHERE above. A table held in memory has no Lance index: its nearest rows are found exactly
//! (every row's similarity, the `k` best).

use super::expr::{col, ExprCtx};
use super::scope::{dst_col, eid_col, prop_col, src_col, Binding, Scope};
use super::{Lowerer, State};
use crate::binder::call::{BoundCall, Search, Target};
use crate::config::VectorMetric;
use crate::error::{Error, Result};
use crate::sem_err;
use crate::storage::search::{measure, LanceSearch, SearchTable};
use crate::storage::ROW_ID;
use arrow::datatypes::DataType;
use cypher::ast;
use datafusion::catalog::default_table_source::provider_as_source;
use datafusion::common::TableReference;
use datafusion::logical_expr::{cast, lit, try_cast, when, Expr, LogicalPlan};
use datafusion::logical_expr::{LogicalPlanBuilder, SortExpr};
use std::sync::Arc;

impl Lowerer<'_> {
    pub(super) fn lower_call(&mut self, st: State, c: &ast::Call) -> Result<State> {
        let call = (self.calls.iter().find(|b| b.span == c.span).cloned())
            .ok_or_else(|| Error::Internal(format!("CALL at {:?} was not bound", c.span)))?;
        // The search is planned for the arguments' values.
        for p in &call.params {
            self.param_literal(p);
        }
        let var = |at: usize| call.yields.iter().find(|(o, _)| *o == at).map(|(_, v)| v);
        let prefix = match var(0) {
            Some(v) => v.clone(),
            None => self.fresh("found"),
        };
        let score = match var(1) {
            Some(v) => v.clone(),
            None => self.fresh("score"),
        };
        let binding = match &call.target {
            Target::Node(label) => Binding::Node {
                label: label.clone(),
                prefix: prefix.clone(),
            },
            Target::Rel(rel) => Binding::Rel {
                rel: *rel,
                prefix: prefix.clone(),
            },
        };
        let found = self.search_plan(&call, &binding, &score, c.span)?;
        let plan = match st.unit {
            true => found,
            false => LogicalPlanBuilder::from(st.plan)
                .cross_join(found)?
                .build()?,
        };
        let mut scope = st.scope;
        if var(0).is_some() {
            scope.bind(&prefix, binding);
        }
        if var(1).is_some() {
            scope.bind(&score, Binding::Value { col: score.clone() });
        }
        let st = State {
            plan,
            scope,
            unit: false,
        };
        match &c.where_ {
            Some(w) => self.filter_with_subqueries(st, w),
            None => Ok(st),
        }
    }

    /// The rows the search finds: the entity's columns (`binding`'s) and `score`.
    fn search_plan(
        &mut self,
        call: &BoundCall,
        binding: &Binding,
        score: &str,
        span: cypher::Span,
    ) -> Result<LogicalPlan> {
        let search = match &call.search {
            Search::Nearest { k, query } => LanceSearch::Nearest {
                column: call.index.column.clone(),
                query: query.clone(),
                k: *k,
                metric: call.index.metric(),
            },
            Search::Text { query, limit } => LanceSearch::Text {
                column: call.index.column.clone(),
                query: query.clone(),
                limit: *limit,
            },
        };
        let (provider, props) = match &call.target {
            Target::Node(label) => {
                let n = &self.catalog.nodes[label];
                (n.table.data_provider(), &n.props)
            }
            Target::Rel(rel) => {
                let r = &self.catalog.rels[*rel];
                (r.table.data_provider(), &r.props)
            }
        };
        let Some(table) = SearchTable::over(provider, search) else {
            return self.exact_search(call, binding, score, span);
        };
        let m = cast(col(&measure(props)), DataType::Float64);
        // Lance's distances are of 32-bit floats: a vector's distance to itself can come out
        // a little below zero.
        let m = when(m.clone().lt(lit(0.0)), lit(0.0)).otherwise(m)?;
        // Neo4j's scores: similarity in [0, 1] (cosine: (1 + cos) / 2, from Lance's
        // 1 - cos; Euclidean: 1 / (1 + d²), from Lance's squared distance); BM25 as it is.
        let value = match (&call.search, call.index.metric()) {
            (Search::Nearest { .. }, VectorMetric::Cosine) => lit(1.0) - m / lit(2.0),
            (Search::Nearest { .. }, VectorMetric::Euclidean) => lit(1.0) / (lit(1.0) + m),
            (Search::Text { .. }, _) => m,
        };
        let mut exprs = self.entity_columns(binding)?;
        exprs.push(value.alias(score));
        Ok(LogicalPlanBuilder::scan(
            TableReference::bare(format!("search_{}", call.index.name)),
            provider_as_source(Arc::new(table)),
            None,
        )?
        .project(exprs)?
        .build()?)
    }

    /// The columns of the entity `binding` names, from its table's columns: a node's
    /// properties; a relationship's endpoints (cast to its nodes' key types, as a scan of
    /// the table does), edge row and properties.
    fn entity_columns(&self, binding: &Binding) -> Result<Vec<Expr>> {
        Ok(match binding {
            Binding::Node { label, prefix } => (self.catalog.nodes[label].props.iter())
                .map(|(p, _)| col(p).alias(prop_col(prefix, p)))
                .collect(),
            Binding::Rel { rel, prefix } => {
                let info = &self.catalog.rels[*rel];
                let key = |label: &str| self.catalog.nodes[label].key_type.clone();
                let mut exprs = vec![
                    try_cast(col(&info.cfg.src), key(&info.cfg.from)).alias(src_col(prefix)),
                    try_cast(col(&info.cfg.dst), key(&info.cfg.to)).alias(dst_col(prefix)),
                    cast(col(ROW_ID), DataType::UInt64).alias(eid_col(prefix)),
                ];
                for (p, _) in &info.props {
                    exprs.push(col(p).alias(prop_col(prefix, p)));
                }
                exprs
            }
            _ => {
                return Err(Error::Internal(
                    "a search yields nodes or relationships".into(),
                ))
            }
        })
    }

    /// A table in memory: every row's similarity computed, the `k` best kept.
    fn exact_search(
        &mut self,
        call: &BoundCall,
        binding: &Binding,
        score: &str,
        span: cypher::Span,
    ) -> Result<LogicalPlan> {
        let Search::Nearest { k, query } = &call.search else {
            return sem_err!(
                ProcedureCallFailed,
                span,
                "full-text index `{}` searches a table held in memory: full-text search \
                 needs the table stored as a Lance dataset",
                call.index.name
            );
        };
        let function = match call.index.metric() {
            VectorMetric::Cosine => "vector.similarity.cosine",
            VectorMetric::Euclidean => "vector.similarity.euclidean",
        };
        // `similarity(entity.column, [query])` lowered as any call of the function is.
        let prefix = binding.prefix().to_string();
        let e = |kind| ast::Expr::new(kind, span);
        let vector = e(ast::ExprKind::List(
            (query.iter())
                .map(|x| e(ast::ExprKind::Literal(ast::Literal::Float(f64::from(*x)))))
                .collect(),
        ));
        let property = e(ast::ExprKind::Property(
            Box::new(e(ast::ExprKind::Variable(prefix.clone()))),
            ast::Ident::new(call.index.column.clone(), span),
        ));
        let similarity = e(ast::ExprKind::Function {
            name: function.to_string(),
            distinct: false,
            args: vec![property, vector],
        });
        let plan = match binding {
            Binding::Node { label, .. } => self.scan_node(&self.catalog.nodes[label], &prefix)?,
            Binding::Rel { rel, .. } => {
                let info = &self.catalog.rels[*rel];
                let columns = self.entity_columns(binding)?;
                LogicalPlanBuilder::from(self.scan_rel(info, &prefix, false)?.build()?)
                    .project(
                        columns
                            .iter()
                            .map(|c| col(&c.schema_name().to_string()))
                            .collect::<Vec<_>>(),
                    )?
                    .build()?
            }
            _ => {
                return Err(Error::Internal(
                    "a search yields nodes or relationships".into(),
                ))
            }
        };
        let mut scope = Scope::default();
        scope.bind(&prefix, binding.clone());
        let schema = plan.schema().clone();
        let value = self.expr(&similarity, &ExprCtx::new(&scope, &schema))?;
        let mut exprs: Vec<Expr> = (schema.fields().iter()).map(|f| col(f.name())).collect();
        exprs.push(value.alias(score));
        Ok(LogicalPlanBuilder::from(plan)
            .project(exprs)?
            .sort(vec![SortExpr::new(col(score), false, false)])?
            .limit(0, Some(*k))?
            .build()?)
    }
}
