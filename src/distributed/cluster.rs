//! Ballista's processes with our codecs: a scheduler, executors, an in-process cluster (tests),
//! and the client side of a graph's session. Sessions are built by the caller (`session.rs`),
//! with our optimizer rules (but never `ShareSubplans`: sharing needs one process) and, on the
//! scheduler, [`DistributedQueryPlanner`].

use super::codec::{GraphLogicalCodec, GraphPhysicalCodec};
use super::planned::{ClientPlanner, DistributedQueryPlanner};
use ballista::prelude::SessionContextExt;
use ballista_core::extension::SessionConfigExt;
use ballista_core::registry::BallistaFunctionRegistry;
use ballista_core::serde::protobuf::scheduler_grpc_client::SchedulerGrpcClient;
use ballista_core::serde::BallistaCodec;
use datafusion::common::{DataFusionError, Result};
use datafusion::execution::context::QueryPlanner;
use datafusion::execution::{SessionState, SessionStateBuilder};
use datafusion::prelude::{SessionConfig, SessionContext};
use std::net::SocketAddr;
use std::sync::Arc;

/// Builds a session for a configuration (the client's, as the scheduler receives it).
pub type StateBuilder = Arc<dyn Fn(SessionConfig) -> Result<SessionState> + Send + Sync>;

fn config_err(e: impl std::fmt::Display) -> DataFusionError {
    DataFusionError::Configuration(e.to_string())
}

/// `config` with our codecs registered.
pub fn with_codecs(config: SessionConfig) -> SessionConfig {
    config
        .with_ballista_logical_extension_codec(Arc::new(GraphLogicalCodec::new()))
        .with_ballista_physical_extension_codec(Arc::new(GraphPhysicalCodec::default()))
}

/// The scheduler's session: `build`'s, planned by [`DistributedQueryPlanner`]. Plans arrive
/// analyzed and optimized by the client (with our rules, which need the client's options);
/// the scheduler only plans them physically.
fn scheduler_state(build: &StateBuilder, config: SessionConfig) -> Result<SessionState> {
    let state = build(with_codecs(config))?;
    let planner: Arc<dyn QueryPlanner + Send + Sync> = Arc::new(DistributedQueryPlanner::default());
    Ok(SessionStateBuilder::new_from_existing(state)
        .with_analyzer_rules(vec![])
        .with_optimizer_rules(vec![])
        .with_query_planner(planner)
        .build())
}

/// A client session over the cluster at `url` (`df://host:port`): `state` with our codecs, its
/// plans sent to the scheduler.
pub async fn connect(url: &str, state: SessionState) -> Result<SessionContext> {
    let config = with_codecs(state.config().clone());
    let state = SessionStateBuilder::new_from_existing(state)
        .with_config(config)
        .build();
    let state = SessionContext::remote_with_state(url, state).await?.state();
    let planner = Arc::new(ClientPlanner {
        inner: state.query_planner().clone(),
    });
    Ok(SessionContext::new_with_state(
        SessionStateBuilder::new_from_existing(state)
            .with_query_planner(planner)
            .build(),
    ))
}

/// Runs a scheduler on `bind` until the process ends.
pub async fn run_scheduler(bind: SocketAddr, build: StateBuilder) -> Result<()> {
    use ballista_scheduler::cluster::BallistaCluster;
    use ballista_scheduler::config::SchedulerConfig;
    let builder = build.clone();
    let session_builder: ballista_scheduler::scheduler_server::SessionBuilder =
        Arc::new(move |c| scheduler_state(&builder, c));
    let mut config = SchedulerConfig::default()
        .with_hostname(bind.ip().to_string())
        .with_port(bind.port())
        .with_override_session_builder(session_builder)
        .with_override_config_producer(Arc::new(
            || with_codecs(SessionConfig::new_with_ballista()),
        ));
    config.bind_host = bind.ip().to_string();
    config.override_logical_codec = Some(Arc::new(GraphLogicalCodec::new()));
    config.override_physical_codec = Some(Arc::new(GraphPhysicalCodec::default()));
    let cluster = BallistaCluster::new_from_config(&config)
        .await
        .map_err(config_err)?;
    ballista_scheduler::scheduler_process::start_server(cluster, bind, Arc::new(config))
        .await
        .map_err(config_err)
}

/// Runs an executor with `slots` concurrent tasks, listening on `port` (and `port + 1`),
/// registered with the scheduler at `scheduler` (`host:port`), until the process ends.
pub async fn run_executor(
    scheduler: &str,
    bind: SocketAddr,
    slots: usize,
    build: StateBuilder,
) -> Result<()> {
    use ballista_executor::executor_process::{start_executor_process, ExecutorProcessConfig};
    let (host, port) = scheduler
        .rsplit_once(':')
        .and_then(|(h, p)| Some((h, p.parse::<u16>().ok()?)))
        .ok_or_else(|| config_err(format!("--scheduler {scheduler}: expected host:port")))?;
    let state = build(with_codecs(SessionConfig::new_with_ballista()))?;
    let config = ExecutorProcessConfig {
        bind_host: bind.ip().to_string(),
        external_host: Some(bind.ip().to_string()),
        port: bind.port(),
        grpc_port: bind.port().wrapping_add(1),
        scheduler_host: host.to_string(),
        scheduler_port: port,
        scheduler_connect_timeout_seconds: 30,
        concurrent_tasks: slots.max(1),
        print_thread_info: false,
        override_logical_codec: Some(Arc::new(GraphLogicalCodec::new())),
        override_physical_codec: Some(Arc::new(GraphPhysicalCodec::default())),
        // Every function our sessions have (Ballista's default registry lacks DataFusion's
        // nested ones; a task it can't decode is never reported back).
        override_function_registry: Some(Arc::new(BallistaFunctionRegistry::from(&state))),
        ..Default::default()
    };
    start_executor_process(Arc::new(config))
        .await
        .map_err(config_err)
}

/// Starts a scheduler and `executors` executors of `slots` task slots each in this process
/// (on free localhost ports); returns the scheduler's `df://` address.
pub async fn standalone(build: StateBuilder, executors: usize, slots: usize) -> Result<String> {
    let builder = build.clone();
    let session_builder: ballista_scheduler::scheduler_server::SessionBuilder =
        Arc::new(move |c| scheduler_state(&builder, c));
    let producer: ballista_core::ConfigProducer =
        Arc::new(|| with_codecs(SessionConfig::new_with_ballista()));
    let codec = BallistaCodec::new(
        Arc::new(GraphLogicalCodec::new()),
        Arc::new(GraphPhysicalCodec::default()),
    );
    let addr = ballista_scheduler::standalone::new_standalone_scheduler_with_builder(
        session_builder,
        producer,
        codec,
    )
    .await
    .map_err(config_err)?;
    let url = format!("http://localhost:{}", addr.port());
    let scheduler = loop {
        match SchedulerGrpcClient::connect(url.clone()).await {
            Ok(s) => break s,
            Err(_) => tokio::time::sleep(std::time::Duration::from_millis(50)).await,
        }
    };
    let executor_state = build(with_codecs(SessionConfig::new_with_ballista()))?;
    for _ in 0..executors {
        ballista_executor::new_standalone_executor_from_state(
            scheduler.clone(),
            slots,
            &executor_state,
        )
        .await
        .map_err(config_err)?;
    }
    Ok(format!("df://localhost:{}", addr.port()))
}

/// One stage of a finished job, as its scheduler reports it.
pub struct Stage {
    pub id: u32,
    pub partitions: u32,
    /// The stage's operators, indented, each with its metrics.
    pub plan: String,
    /// The rows the stage's writer wrote (for the next stage, or for the client).
    pub written: u64,
}

/// The stages of the job that `executed` (a cluster session's plan, run to its end) was, with
/// their operators' metrics, in stage order. `url` is the scheduler's `df://host:port`.
pub async fn job_stages(
    url: &str,
    executed: &Arc<dyn datafusion::physical_plan::ExecutionPlan>,
) -> Result<Vec<Stage>> {
    use ballista_core::execution_plans::DistributedQueryExec;
    use ballista_core::serde::protobuf::{operator_metric, GetJobMetricsParams};
    use datafusion::physical_plan::metrics::MetricsSet;
    use datafusion_proto::protobuf::LogicalPlanNode;
    let job = executed
        .downcast_ref::<DistributedQueryExec<LogicalPlanNode>>()
        .and_then(|q| q.job_id())
        .ok_or_else(|| DataFusionError::Internal("the plan ran as no cluster job".into()))?;
    let parsed = url::Url::parse(url).map_err(config_err)?;
    let host = parsed
        .host_str()
        .ok_or_else(|| config_err(format!("{url}: no host")))?;
    let port = parsed.port().unwrap_or(50050);
    let mut scheduler = SchedulerGrpcClient::connect(format!("http://{host}:{port}"))
        .await
        .map_err(config_err)?;
    let metrics = scheduler
        .get_job_metrics(GetJobMetricsParams {
            job_id: job.to_string(),
        })
        .await
        .map_err(|e| DataFusionError::Execution(e.message().to_string()))?
        .into_inner();
    let mut stages = Vec::with_capacity(metrics.stages.len());
    for stage in metrics.stages {
        let mut plan = String::new();
        let mut written = 0;
        for op in stage.operators {
            if op.depth == 0 && op.operator_type.ends_with("ShuffleWriterExec") {
                written += op
                    .metrics
                    .iter()
                    .filter_map(|m| match m.metric {
                        Some(operator_metric::Metric::OutputRows(n)) => Some(n),
                        _ => None,
                    })
                    .sum::<u64>();
            }
            let set: MetricsSet = ballista_core::serde::protobuf::OperatorMetricsSet {
                metrics: op.metrics,
            }
            .try_into()
            .map_err(|e| DataFusionError::Execution(format!("{e:?}")))?;
            let shown = set
                .aggregate_by_name()
                .sorted_for_display()
                .timestamps_removed();
            plan.push_str(&format!(
                "{}{}, metrics=[{shown}]\n",
                "  ".repeat(op.depth as usize),
                op.operator_desc
            ));
        }
        stages.push(Stage {
            id: stage.stage_id,
            partitions: stage.partitions,
            plan,
            written,
        });
    }
    stages.sort_by_key(|s| s.id);
    Ok(stages)
}
