//! CALL of a search procedure: the rows of a node or relationship table a Lance search finds
//! (`SearchTable`: nearest vectors or matching text, through the dataset's index where it has
//! one), each a node or relationship with its score, crossed with the rows so far; YIELD's
//! WHERE above. A table held in memory has no Lance index: its nearest rows are found exactly
//! (every row's similarity, the `k` best).

use super::expr::col;
use super::scan::node_columns;
use super::scope::{prop_col, Binding};
use super::{Lowerer, State};
use crate::binder::call::{BoundCall, Target};
use crate::config::VectorMetric;
use crate::error::{Error, Result};
use crate::functions::CypherFn;
use crate::sem_err;
use crate::storage::search::{measure, LanceSearch, SearchTable};
use arrow::datatypes::DataType;
use cypher::ast;
use datafusion::catalog::default_table_source::provider_as_source;
use datafusion::common::{ScalarValue, TableReference};
use datafusion::logical_expr::{cast, lit, when, Expr, LogicalPlan};
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
        let Some(table) = SearchTable::over(provider, call.search.clone()) else {
            return self.exact_search(call, binding, score, span);
        };
        let m = cast(col(&measure(props)), DataType::Float64);
        // Lance's distances are of 32-bit floats: a vector's distance to itself can come out
        // a little below zero.
        let m = when(m.clone().lt(lit(0.0)), lit(0.0)).otherwise(m)?;
        // Neo4j's scores: similarity in [0, 1] (cosine: (1 + cos) / 2, from Lance's
        // 1 - cos; Euclidean: 1 / (1 + d²), from Lance's squared distance); BM25 as it is.
        let value = match &call.search {
            LanceSearch::Nearest {
                metric: VectorMetric::Cosine,
                ..
            } => lit(1.0) - m / lit(2.0),
            LanceSearch::Nearest {
                metric: VectorMetric::Euclidean,
                ..
            } => lit(1.0) / (lit(1.0) + m),
            LanceSearch::Text { .. } => m,
        };
        let name = format!("search_{}", call.index.name);
        self.entity_scan(&name, Arc::new(table), binding, Some(value.alias(score)))
    }

    /// A scan of `provider` as the columns of the entity `binding` names, then `extra`.
    fn entity_scan(
        &self,
        name: &str,
        provider: Arc<dyn datafusion::datasource::TableProvider>,
        binding: &Binding,
        extra: Option<Expr>,
    ) -> Result<LogicalPlan> {
        let mut exprs = match binding {
            Binding::Node { label, prefix } => node_columns(&self.catalog.nodes[label], prefix),
            Binding::Rel { rel, prefix } => self.rel_columns(&self.catalog.rels[*rel], prefix),
            _ => {
                return Err(Error::Internal(
                    "a search yields nodes or relationships".into(),
                ))
            }
        };
        exprs.extend(extra);
        Ok(LogicalPlanBuilder::scan(
            TableReference::bare(name),
            provider_as_source(provider),
            None,
        )?
        .project(exprs)?
        .build()?)
    }

    /// A table in memory: every row's similarity computed, the `k` best kept.
    fn exact_search(
        &mut self,
        call: &BoundCall,
        binding: &Binding,
        score: &str,
        span: cypher::Span,
    ) -> Result<LogicalPlan> {
        let LanceSearch::Nearest {
            column,
            query,
            k,
            metric,
        } = &call.search
        else {
            return sem_err!(
                ProcedureCallFailed,
                span,
                "full-text index `{}` searches a table held in memory: full-text search \
                 needs the table stored as a Lance dataset",
                call.index.name
            );
        };
        let provider = match &call.target {
            Target::Node(label) => self.catalog.nodes[label].table.provider.clone(),
            Target::Rel(rel) => self.catalog.rels[*rel].table.provider.clone(),
        };
        let plan = self.entity_scan(
            &format!("exact_{}", call.index.name),
            provider,
            binding,
            None,
        )?;
        // Neo4j's similarity, as `vector.similarity.*` computes it.
        let measure = match metric {
            VectorMetric::Cosine => "cosine_similarity",
            VectorMetric::Euclidean => "euclidean_similarity",
        };
        let values: Vec<ScalarValue> = (query.iter())
            .map(|x| ScalarValue::Float64(Some(f64::from(*x))))
            .collect();
        let vector = lit(ScalarValue::List(ScalarValue::new_list_nullable(
            &values,
            &DataType::Float64,
        )));
        let value = CypherFn::Vector.call(vec![
            lit(measure),
            col(&prop_col(binding.prefix(), column)),
            vector,
        ]);
        let mut exprs: Vec<Expr> = (plan.schema().fields().iter())
            .map(|f| col(f.name()))
            .collect();
        exprs.push(value.alias(score));
        Ok(LogicalPlanBuilder::from(plan)
            .project(exprs)?
            .sort(vec![SortExpr::new(col(score), false, false)])?
            .limit(0, Some(*k))?
            .build()?)
    }
}
