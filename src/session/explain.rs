//! EXPLAIN (plans, the rules that fired), EXPLAIN ANALYZE (in process or per cluster stage), and the time each phase of a query takes.

use super::query::{on_planning_stack, optimize_on_planning_stack, physical_plan};
use super::*;

impl Graph {
    /// Runs `query` once, phase by phase, and times each phase (`lance-csr bench --phases`):
    /// where the time of a query goes. A query whose plan is cached times the cache lookup
    /// and binding as `cache`; the planning phases are then zero.
    pub async fn time_phases(&self, query: &str, params: &Params) -> Result<PhaseTimes> {
        use std::time::Instant;
        let start = Instant::now();
        if let Some(cache) = &self.cache {
            if let Some(plan) = cache.get(&PlanKey::new(query, params), params) {
                let physical = self.executable(&plan, params).await?;
                let cache = start.elapsed();
                let t = Instant::now();
                let rows = self.collect_rows(physical).await?;
                return Ok(PhaseTimes {
                    cache,
                    execute: t.elapsed(),
                    total: start.elapsed(),
                    rows,
                    ..Default::default()
                });
            }
        }
        let state = self.ctx.state();
        let session = start.elapsed();
        let trip = Instant::now();
        let (parse, lower, optimize, optimized, _held) = on_planning_stack(|| -> Result<_> {
            let t = Instant::now();
            let ast = cypher::parse_query(query)?;
            let parse = t.elapsed();
            let t = Instant::now();
            let (lowered, _) = self.lower_ast(&ast, params, false)?;
            let lower = t.elapsed();
            let t = Instant::now();
            let optimized = state.optimize(&lowered.plan).map_err(Error::planning)?;
            // Long list parameters stay held until the plan is physical.
            Ok((parse, lower, t.elapsed(), optimized, lowered.held))
        })??;
        let planning_stack = trip.elapsed().saturating_sub(parse + lower + optimize);
        let t = Instant::now();
        let physical = physical_plan(&state, &optimized).await?;
        let physical_planning = t.elapsed();
        let t = Instant::now();
        let rows = self.collect_rows(physical).await?;
        let execute = t.elapsed();
        // Cache the plan as a query would, so that the next run times the cached path.
        if self.cache.is_some() {
            self.cached_plan(query, params).await?;
        }
        Ok(PhaseTimes {
            session,
            planning_stack,
            parse,
            bind_and_lower: lower,
            optimize,
            physical_planning,
            cache: Default::default(),
            execute,
            total: start.elapsed(),
            rows,
        })
    }

    /// Runs the query and returns the physical plan annotated with each operator's metrics.
    pub async fn explain_analyze(&self, query: &str, params: &Params) -> Result<String> {
        #[cfg(feature = "distributed")]
        if self.cluster.is_some() {
            return self.explain_analyze_on_cluster(query, params).await;
        }
        let (_, _, physical) = self.physical(query, params).await?;
        let rows = self.collect_rows(physical.clone()).await?;
        Ok(format!(
            "== physical plan with metrics ({rows} rows) ==\n{}",
            datafusion::physical_plan::display::DisplayableExecutionPlan::with_metrics(
                physical.as_ref()
            )
            .indent(false)
        ))
    }

    /// On a cluster: the job's stages with their operators' metrics (the scheduler's), the
    /// rows it produced and the rows its stages wrote for other stages (shuffled).
    #[cfg(feature = "distributed")]
    pub(super) async fn explain_analyze_on_cluster(
        &self,
        query: &str,
        params: &Params,
    ) -> Result<String> {
        let url = self.cluster.as_deref().unwrap_or_default();
        let plan = self.plan_bound(query, params).await?;
        let physical = physical_plan(&self.ctx.state(), &plan.logical).await?;
        let rows = self.collect_rows(physical.clone()).await?;
        let stages = crate::distributed::cluster::job_stages(url, &physical)
            .await
            .map_err(|source| Error::Cluster {
                url: url.to_string(),
                source,
            })?;
        // The last stage writes the result for the client; the others, for the next stage.
        let shuffled: u64 = stages.iter().rev().skip(1).map(|s| s.written).sum();
        let mut text = String::from("== stages with metrics ==\n");
        for s in &stages {
            text.push_str(&format!(
                "stage {} ({} partitions, {} rows written):\n{}\n",
                s.id, s.partitions, s.written, s.plan
            ));
        }
        text.push_str(&format!(
            "== {rows} rows; rows shuffled between stages: {shuffled} =="
        ));
        Ok(text)
    }

    /// Where the plan of `query` comes from (the plan cache), the logical plan (as lowered,
    /// then optimized) and the physical plan, as text; for a plan the cache keeps
    /// physically, also that plan, parameters shown as `$name`.
    pub async fn explain(&self, query: &str, params: &Params) -> Result<String> {
        let (cached, cache_use) = self.cached_plan(query, params).await?;
        let lowered = self.lower(query, params)?;
        let plan = lowered.plan;
        // A session of its own, so that the counters are this query's.
        let counters = Arc::new(RuleCounters::default());
        let state = self.session_for(counters.clone()).await?;
        let optimized = optimize_on_planning_stack(&state, &plan)?;
        let physical = physical_plan(&state, &optimized).await?;
        let rewrites = if lowered.notes.is_empty() {
            String::new()
        } else {
            format!("== pattern order ==\n{}\n\n", lowered.notes.join("\n"))
        };
        let kept = match (&cached.physical, cached.reuse) {
            (Some(p), Reuse::Physical) => format!(
                "\n\n== cached physical plan ==\n{}",
                displayable(p.as_ref()).indent(false)
            ),
            (_, Reuse::Logical) => format!(
                "\n\n== cached logical plan ==\n{}",
                cached.logical.display_indent()
            ),
            _ => String::new(),
        };
        let estimates = crate::optimizer::estimates::annotate(&optimized);
        Ok(format!(
            "{rewrites}== logical plan ==\n{}\n\n== optimized logical plan ==\n{}\n\n== estimates (rows each node makes; neighbour-list entries our operators read) ==\n{estimates}\n== rule counters ==\n{counters}\n\n== physical plan ==\n{}{kept}\n\n== plan cache ==\n{cache_use}",
            plan.display_indent(),
            optimized.display_indent(),
            displayable(physical.as_ref()).indent(false)
        ))
    }
}

/// Where one run of a query spent its time ([`Graph::time_phases`]).
#[derive(Debug, Clone, Copy, Default)]
#[non_exhaustive]
pub struct PhaseTimes {
    /// Taking the session state the query plans with.
    pub session: std::time::Duration,
    /// Switching to the big planning stack and back.
    pub planning_stack: std::time::Duration,
    pub parse: std::time::Duration,
    /// Binding (names, patterns, parameters) and lowering to a DataFusion logical plan.
    pub bind_and_lower: std::time::Duration,
    /// DataFusion's optimizer with our rules.
    pub optimize: std::time::Duration,
    pub physical_planning: std::time::Duration,
    /// Finding the plan in the plan cache and binding the parameters (a cached plan: the
    /// phases before are then zero).
    pub cache: std::time::Duration,
    /// Running the physical plan to its last batch.
    pub execute: std::time::Duration,
    pub total: std::time::Duration,
    pub rows: usize,
}
