//! Running queries: lowering on a deep stack, the plan cache and prepared queries, results collected or streamed under the time limit.

use super::stream::{memory_error, time_limit_error};
use super::*;
use crate::operators::shared::SharedSubplan;

impl Graph {
    /// Parses and lowers a query to a DataFusion logical plan (unoptimized). A long list
    /// parameter (1,024 values or more) is named in it as a variable whose value is let go
    /// with the call: such a plan is for reading, not for running.
    pub fn plan(&self, query: &str, params: &Params) -> Result<(LogicalPlan, Vec<String>)> {
        let lowered = self.lower(query, params)?;
        Ok((lowered.plan, lowered.columns))
    }

    pub(super) fn lower(&self, query: &str, params: &Params) -> Result<crate::planner::Lowered> {
        on_planning_stack(|| {
            let ast = cypher::parse_query(query)?;
            Ok(self.lower_ast(&ast, params, false)?.0)
        })?
    }

    /// Binds and lowers a parsed query; `placeholders`: scalar parameters as placeholders
    /// (a plan to cache). Also returns the parameters the plan was built for by value.
    pub(super) fn lower_ast(
        &self,
        ast: &cypher::ast::Query,
        params: &Params,
        placeholders: bool,
    ) -> Result<(crate::planner::Lowered, std::collections::BTreeSet<String>)> {
        let mut popts = self.options.planner.clone();
        popts.reroot = self.options.mode == Mode::Csr && self.options.rules.reroot;
        // Binding and lowering never execute anything: a DataFusion error here is a
        // planning error.
        let mut bound = crate::binder::query::bind(&self.catalog, popts.lenient, ast, params)
            .map_err(Error::while_planning)?;
        if popts.reroot && self.options.rules.merge_matches {
            bound = crate::rewrite::merge_matches::run(&self.catalog, popts.lenient, bound, params);
        }
        let mut lowerer = Lowerer::new(&self.catalog, popts)?;
        lowerer.indexes = self.indexes.as_deref();
        lowerer.placeholders = placeholders;
        let rewritten =
            crate::rewrite::clause::run(&self.catalog, &lowerer.rewrite_options(), bound)
                .map_err(|e| Error::while_planning(crate::binder::names::unescape_error(e)))?;
        let lowered = lowerer
            .lower_query(&rewritten)
            .map_err(Error::while_planning)?;
        Ok((lowered, lowerer.baked.into_inner()))
    }

    /// Runs DataFusion's optimizer (and ours, as switched on) over a lowered plan.
    pub fn optimize(&self, plan: &LogicalPlan) -> Result<LogicalPlan> {
        optimize_on_planning_stack(&self.ctx.state(), plan)
    }

    /// The physical plan of `query`, for the operators' tests.
    #[cfg(test)]
    pub(crate) async fn physical_plan(
        &self,
        query: &str,
        params: &Params,
    ) -> Result<Arc<dyn ExecutionPlan>> {
        Ok(self.physical(query, params).await?.2)
    }

    /// The task context queries run with, for the operators' tests.
    #[cfg(test)]
    pub(crate) fn task_ctx(&self) -> Arc<datafusion::execution::TaskContext> {
        self.task_ctx.clone()
    }

    /// `query` planned for exactly these `params` (parameters lowered as literals), without
    /// the cache: parsed, lowered and optimized on one switch to the planning stack.
    pub(super) async fn plan_bound(&self, query: &str, params: &Params) -> Result<CachedPlan> {
        let state = self.ctx.state();
        let (lowered, optimized) = on_planning_stack(|| -> Result<_> {
            let ast = cypher::parse_query(query)?;
            let (lowered, _) = self.lower_ast(&ast, params, false)?;
            let optimized = state.optimize(&lowered.plan).map_err(Error::planning)?;
            Ok((lowered, optimized))
        })??;
        let physical = physical_plan(&state, &optimized).await?;
        Ok(CachedPlan {
            columns: lowered.columns,
            schema: Arc::new(optimized.schema().as_arrow().clone()),
            // Never cached (`Reuse::None`): no values to check later, and none copied.
            baked: vec![],
            logical: optimized,
            physical: Some(physical),
            reuse: Reuse::None,
        })
    }

    /// `query` planned for any values of the kinds of `params` (scalar parameters as
    /// placeholders), as far as its plan allows; a query the placeholders don't suit is
    /// planned for these values ([`Reuse::None`]).
    pub(super) async fn plan_reusable(&self, query: &str, params: &Params) -> Result<CachedPlan> {
        let state = self.ctx.state();
        let template = on_planning_stack(|| -> Result<_> {
            let ast = cypher::parse_query(query)?;
            // Anything placeholders make fail is planned as written (that reports the error
            // the query has, if any).
            let Ok((lowered, baked)) = self.lower_ast(&ast, params, true) else {
                return Ok(None);
            };
            if calls_unstable_function(&lowered.plan) {
                return Ok(None);
            }
            let Ok(optimized) = state.optimize(&lowered.plan) else {
                return Ok(None);
            };
            Ok(Some((lowered, baked, optimized)))
        })??;
        let Some((lowered, baked, optimized)) = template else {
            return self.plan_bound(query, params).await;
        };
        // A plan built for a long list's value is not kept: its copy of the list would be,
        // and it serves only calls with that very list.
        let long = |k: &String| {
            params
                .get(k)
                .is_some_and(crate::binder::query::is_long_list)
        };
        if baked.iter().any(long) {
            return self.plan_bound(query, params).await;
        }
        let mut reuse = reuse_of_optimized(&optimized);
        if reuse == Reuse::None {
            return self.plan_bound(query, params).await;
        }
        // Parameters in DataFusion's nodes: planned as calls, then read as the plan starts.
        let template = match reuse {
            Reuse::Logical => mark_params(&optimized).ok(),
            _ => Some(optimized.clone()),
        };
        let mut physical = None;
        if let Some(template) = template {
            let planned = match physical_plan(&state, &template).await {
                Ok(p) => params_in_place(p).ok().flatten(),
                Err(_) => None,
            };
            match planned {
                Some(p) if physical_reusable(&p) => {
                    physical = Some(p);
                    reuse = Reuse::Physical;
                }
                _ => reuse = Reuse::Logical,
            }
        }
        Ok(CachedPlan {
            columns: lowered.columns,
            schema: Arc::new(optimized.schema().as_arrow().clone()),
            baked: baked
                .into_iter()
                .map(|k| {
                    let v = params.get(&k).cloned();
                    (k, v)
                })
                .collect(),
            logical: optimized,
            physical,
            reuse,
        })
    }

    /// The plan of `query` for `params`: from the plan cache, or planned (and cached where
    /// it can run again).
    pub(super) async fn cached_plan(
        &self,
        query: &str,
        params: &Params,
    ) -> Result<(Arc<CachedPlan>, CacheUse)> {
        let Some(cache) = &self.cache else {
            return Ok((
                Arc::new(self.plan_bound(query, params).await?),
                CacheUse::Off,
            ));
        };
        let key = PlanKey::new(query, params);
        if let Some(p) = cache.get(&key, params) {
            let reuse = p.reuse;
            return Ok((p, CacheUse::Hit(reuse)));
        }
        let plan = Arc::new(self.plan_reusable(query, params).await?);
        if plan.reuse != Reuse::None {
            cache.insert(key, plan.clone());
        }
        let reuse = plan.reuse;
        Ok((plan, CacheUse::Miss(reuse)))
    }

    /// The physical plan that runs `plan` with `params`' values.
    pub(super) async fn executable(
        &self,
        plan: &CachedPlan,
        params: &Params,
    ) -> Result<Arc<dyn ExecutionPlan>> {
        match (&plan.physical, plan.reuse) {
            // Planned for these values, runs once.
            (Some(p), Reuse::None) => Ok(p.clone()),
            (Some(p), _) => {
                let values = Arc::new(param_values(params)?);
                bind_physical_plan(p, values).map_err(Error::planning)
            }
            (None, _) => {
                let values = param_values(params)?;
                let bound = bind_logical(&plan.logical, &values)
                    .and_then(SharedSubplan::with_new_cells)
                    .map_err(Error::planning)?;
                physical_plan(&self.ctx.state(), &bound).await
            }
        }
    }

    /// The plan of `query` to execute with `params`: the result's column names and schema,
    /// and the physical plan.
    pub(super) async fn physical(
        &self,
        query: &str,
        params: &Params,
    ) -> Result<(Vec<String>, SchemaRef, Arc<dyn ExecutionPlan>)> {
        let (plan, _) = self.cached_plan(query, params).await?;
        let physical = self.executable(&plan, params).await?;
        Ok((plan.columns.clone(), plan.schema.clone(), physical))
    }

    /// Runs `physical` to its end under the graph's limits; the number of rows.
    pub(super) async fn collect_rows(&self, physical: Arc<dyn ExecutionPlan>) -> Result<usize> {
        let batches = self.collect_limited(physical).await?;
        Ok(batches.iter().map(|b| b.num_rows()).sum())
    }

    /// Runs `physical` to its end under the graph's limits; its batches.
    pub(super) async fn collect_limited(
        &self,
        physical: Arc<dyn ExecutionPlan>,
    ) -> Result<Vec<arrow::array::RecordBatch>> {
        let _watched = crate::operators::backstop::BACKSTOP.watch(self.options.memory_limit);
        self.limited(async {
            collect(physical, self.task_ctx.clone())
                .await
                .map_err(|e| memory_error(self.options.memory_limit, e))
        })
        .await
    }

    /// Runs a query and collects its result.
    pub async fn query(&self, query: &str, params: &Params) -> Result<QueryResult> {
        self.query_stream(query, params).await?.collect().await
    }

    /// Runs a query and hands its result over batch by batch, as it is computed (for output
    /// that needn't hold all rows at once). The time limit covers planning and every batch.
    pub async fn query_stream(&self, query: &str, params: &Params) -> Result<ResultStream> {
        self.stream_with(async { self.physical(query, params).await })
            .await
    }

    /// `run` under the graph's time limit, if it has one. Dropping the execution on
    /// timeout stops its operators (DataFusion aborts the tasks it spawned).
    pub(super) async fn limited<T>(
        &self,
        run: impl std::future::Future<Output = Result<T>>,
    ) -> Result<T> {
        match self.options.timeout {
            None => run.await,
            Some(limit) => match tokio::time::timeout(limit, run).await {
                Ok(r) => r,
                Err(_) => Err(time_limit_error(limit)),
            },
        }
    }

    /// Starts the plan `plan` gives, under the graph's limits.
    pub(super) async fn stream_with(
        &self,
        plan: impl std::future::Future<
            Output = Result<(Vec<String>, SchemaRef, Arc<dyn ExecutionPlan>)>,
        >,
    ) -> Result<ResultStream> {
        let deadline = self
            .options
            .timeout
            .map(|t| tokio::time::Instant::now() + t);
        let start = self.limited(async {
            let (columns, schema, physical) = plan.await?;
            let stream =
                datafusion::physical_plan::execute_stream(physical.clone(), self.task_ctx.clone())?;
            Ok((columns, schema, stream, physical))
        });
        let (columns, schema, stream, _physical) = start.await?;
        // Watched from here: what planning loaded (columns kept for later queries) is not the
        // query's.
        let watched = crate::operators::backstop::BACKSTOP.watch(self.options.memory_limit);
        Ok(ResultStream {
            columns,
            schema,
            stream,
            deadline,
            timeout: self.options.timeout,
            memory_limit: self.options.memory_limit,
            watched,
            #[cfg(feature = "distributed")]
            job: self
                .cluster
                .as_deref()
                .map(|url| crate::distributed::cluster::JobGuard::new(url, _physical)),
            rerun: None,
        })
    }

    /// Prepares `query` for repeated execution: parsed now (a syntax error is reported
    /// here), planned at its first execution for the kinds of the parameters given, and from
    /// then on executed with new values without parsing, binding or optimizing again.
    ///
    /// ```
    /// # tokio::runtime::Runtime::new().unwrap().block_on(async {
    /// use lance_csr::{param, Graph, Params};
    /// let graph = Graph::sample().await.unwrap();
    /// let friends = graph
    ///     .prepare("MATCH (p:Person {firstName: $name})-[:KNOWS]->(f:Person) RETURN count(f) AS n")
    ///     .unwrap();
    /// for name in ["Ann", "Bob", "Nobody"] {
    ///     let params = Params::from([("name".to_string(), param(name))]);
    ///     let prepared = lance_csr::rows(&friends.query(&graph, &params).await.unwrap());
    ///     let planned = lance_csr::rows(&graph.query(friends.text(), &params).await.unwrap());
    ///     assert_eq!(prepared, planned);
    ///     if name == "Ann" {
    ///         assert_eq!(prepared, vec![vec!["2".to_string()]]);
    ///     }
    /// }
    /// # });
    /// ```
    pub fn prepare(&self, query: &str) -> Result<Prepared> {
        on_planning_stack(|| cypher::parse_query(query))??;
        Ok(Prepared {
            text: query.into(),
            plans: Default::default(),
        })
    }
}

/// A query prepared for repeated execution ([`Graph::prepare`]): one plan per kind of
/// parameters it was executed with, kept for as long as the handle lives (not evicted like
/// the plan cache's), and planned anew for another graph or after [`Graph::refresh`].
/// Threads sharing the handle keep plans of their own, as the plan cache does.
pub struct Prepared {
    text: Arc<str>,
    /// By parameter kinds: the graph generation it was planned for, and the plan.
    plans: PerThread<std::sync::Mutex<Vec<(PlanKey, u64, Arc<CachedPlan>)>>>,
}

impl Prepared {
    /// The query text.
    pub fn text(&self) -> &str {
        &self.text
    }

    pub(super) async fn plan(&self, graph: &Graph, params: &Params) -> Result<Arc<CachedPlan>> {
        let key = PlanKey::new(self.text.clone(), params);
        let found = {
            let plans = self.plans.get().lock().expect("prepared plans lock");
            plans
                .iter()
                .find(|(k, g, p)| k == &key && *g == graph.generation && p.serves(params))
                .map(|(_, _, p)| p.clone())
        };
        if let Some(p) = found {
            return Ok(p);
        }
        let plan = Arc::new(graph.plan_reusable(&self.text, params).await?);
        if plan.reuse != Reuse::None {
            let mut plans = self.plans.get().lock().expect("prepared plans lock");
            let moved = plans.iter().any(|(_, g, _)| *g != graph.generation);
            plans.retain(|(k, g, _)| k != &key && *g == graph.generation);
            plans.push((key, graph.generation, plan.clone()));
            drop(plans);
            if moved {
                // The graph moved on (refreshed): the other threads' plans of the state
                // before hold its tables and indexes; they plan again when they run.
                for slot in self.plans.all() {
                    let mut plans = slot.lock().expect("prepared plans lock");
                    plans.retain(|(_, g, _)| *g == graph.generation);
                }
            }
        }
        Ok(plan)
    }

    /// Which slots hold a plan, and this thread's slot.
    #[cfg(test)]
    pub(crate) fn planned_slots(&self) -> (Vec<usize>, usize) {
        let planned = (self.plans.all().enumerate())
            .filter(|(_, p)| !p.lock().expect("prepared plans lock").is_empty())
            .map(|(i, _)| i)
            .collect();
        (planned, self.plans.index())
    }

    /// Runs the query on `graph` with `params` and collects its result.
    pub async fn query(&self, graph: &Graph, params: &Params) -> Result<QueryResult> {
        self.query_stream(graph, params).await?.collect().await
    }

    /// Runs the query on `graph` with `params`, its result batch by batch.
    pub async fn query_stream(&self, graph: &Graph, params: &Params) -> Result<ResultStream> {
        graph
            .stream_with(async {
                let plan = self.plan(graph, params).await?;
                let physical = graph.executable(&plan, params).await?;
                Ok((plan.columns.clone(), plan.schema.clone(), physical))
            })
            .await
    }
}

/// Stack size parsing, lowering and optimizing a query run with. Expressions as deep as the
/// parser accepts recurse in the lowering and in DataFusion's expression naming and
/// formatting, which no stack guard covers; the pages are only committed when touched.
const PLANNING_STACK: usize = 256 << 20;

/// Runs `f` on a [`PLANNING_STACK`]-sized stack: a segment of its own on the current thread
/// (no thread to start and join per query). A panic inside is a broken invariant: an
/// `Error::Internal`, not an abort of the caller.
pub(super) fn on_planning_stack<T>(f: impl FnOnce() -> T) -> Result<T> {
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        stacker::grow(PLANNING_STACK, f)
    }))
    .map_err(|p| {
        let what = p
            .downcast_ref::<&str>()
            .map(|s| s.to_string())
            .or_else(|| p.downcast_ref::<String>().cloned())
            .unwrap_or_default();
        Error::Internal(format!("planning panicked: {what}"))
    })
}

/// The physical plan of an optimized plan. (`SessionState::create_physical_plan` would
/// optimize it again.)
pub(super) async fn physical_plan(
    state: &datafusion::execution::SessionState,
    optimized: &LogicalPlan,
) -> Result<Arc<dyn ExecutionPlan>> {
    state
        .query_planner()
        .create_physical_plan(optimized, state)
        .await
        .map_err(Error::planning)
}

pub(super) fn optimize_on_planning_stack(
    state: &datafusion::execution::SessionState,
    plan: &LogicalPlan,
) -> Result<LogicalPlan> {
    on_planning_stack(|| state.optimize(plan))?.map_err(Error::planning)
}
