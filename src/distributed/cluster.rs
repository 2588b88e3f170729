//! Ballista's processes with our codecs: a scheduler, executors, an in-process cluster (tests),
//! and the client side of a graph's session. Sessions come from `optimizer::session` (our
//! rules, but never `ShareSubplans`: sharing needs one process) and, on the scheduler, are
//! planned by [`DistributedQueryPlanner`].

use super::codec::{GraphLogicalCodec, GraphPhysicalCodec};
use super::planned::{ClientPlanner, DistributedQueryPlanner};
use crate::optimizer::session::cluster_state;
use ballista::prelude::SessionContextExt;
use ballista_core::config::TaskSchedulingPolicy;
use ballista_core::extension::SessionConfigExt;
use ballista_core::registry::BallistaFunctionRegistry;
use ballista_core::serde::protobuf::scheduler_grpc_client::SchedulerGrpcClient;
use datafusion::common::{DataFusionError, Result};
use datafusion::execution::context::QueryPlanner;
use datafusion::execution::{SessionState, SessionStateBuilder};
use datafusion::prelude::{SessionConfig, SessionContext};
use std::net::SocketAddr;
use std::sync::Arc;
use tokio::task::JoinHandle;

fn config_err(e: impl std::fmt::Display) -> DataFusionError {
    DataFusionError::Configuration(e.to_string())
}

/// `config` with our codecs registered, and our options (a client's travel as settings).
pub fn with_codecs(config: SessionConfig) -> SessionConfig {
    let config = if config
        .options()
        .extensions
        .get::<crate::functions::budget::CypherOptions>()
        .is_none()
    {
        config.with_option_extension(crate::functions::budget::CypherOptions::default())
    } else {
        config
    };
    config
        .with_ballista_logical_extension_codec(Arc::new(GraphLogicalCodec::new()))
        .with_ballista_physical_extension_codec(Arc::new(GraphPhysicalCodec::default()))
}

/// The scheduler's session: the cluster's, planned by [`DistributedQueryPlanner`]. Plans arrive
/// analyzed and optimized by the client (with our rules, which need the client's options);
/// the scheduler only plans them physically.
fn scheduler_state(config: SessionConfig) -> Result<SessionState> {
    let state = cluster_state(with_codecs(config))?;
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

/// A scheduler's configuration: our sessions, codecs and config producer; `policy` is how its
/// executors get tasks.
fn scheduler_config(policy: TaskSchedulingPolicy) -> ballista_scheduler::config::SchedulerConfig {
    let session_builder: ballista_scheduler::scheduler_server::SessionBuilder =
        Arc::new(scheduler_state);
    let mut config = ballista_scheduler::config::SchedulerConfig::default()
        .with_scheduler_policy(policy)
        .with_override_session_builder(session_builder)
        .with_override_config_producer(Arc::new(
            || with_codecs(SessionConfig::new_with_ballista()),
        ));
    config.override_logical_codec = Some(Arc::new(GraphLogicalCodec::new()));
    config.override_physical_codec = Some(Arc::new(GraphPhysicalCodec::default()));
    // A lost executor is noticed within seconds (Ballista's defaults: 3 minutes), its tasks
    // run again on the others, and a stage whose shuffle output went with it is recomputed.
    config.executor_timeout_seconds = EXECUTOR_TIMEOUT_SECONDS;
    config.expire_dead_executor_interval_seconds = 1;
    config
}

/// Seconds without a heartbeat after which the scheduler gives an executor up; executors
/// beat every [`HEARTBEAT_SECONDS`].
pub const EXECUTOR_TIMEOUT_SECONDS: u64 = 6;
pub const HEARTBEAT_SECONDS: u64 = 1;

/// Binds `bind` (port 0: any free port) and serves a scheduler of `config` on it; returns the
/// bound address and the server's task.
///
/// Ballista's own server accepts connections without TCP_NODELAY, so each job status it pushes
/// to a client (a few hundred bytes) waits for the client's delayed ACK: ~40 ms per query on
/// Linux. Ballista's gRPC helpers set it, so the scheduler is served through them.
async fn serve_scheduler(
    mut config: ballista_scheduler::config::SchedulerConfig,
    bind: SocketAddr,
) -> Result<(SocketAddr, JoinHandle<Result<()>>)> {
    use ballista_core::serde::protobuf::scheduler_grpc_server::SchedulerGrpcServer;
    use ballista_core::utils::{create_grpc_server, create_grpc_server_incoming, GrpcServerConfig};
    use ballista_scheduler::cluster::BallistaCluster;
    use datafusion_proto::protobuf::{LogicalPlanNode, PhysicalPlanNode};
    let grpc = GrpcServerConfig::default();
    let incoming = create_grpc_server_incoming(bind, &grpc)
        .map_err(|e| config_err(format!("cannot bind the scheduler to {bind}: {e}")))?;
    let addr = incoming.local_addr().map_err(config_err)?;
    config.bind_host = addr.ip().to_string();
    config.external_host = addr.ip().to_string();
    config.bind_port = addr.port();
    let cluster = BallistaCluster::new_from_config(&config)
        .await
        .map_err(config_err)?;
    let (encoding, decoding) = (
        config.grpc_server_max_encoding_message_size as usize,
        config.grpc_server_max_decoding_message_size as usize,
    );
    let scheduler = ballista_scheduler::scheduler_process::create_scheduler::<
        LogicalPlanNode,
        PhysicalPlanNode,
    >(cluster, Arc::new(config))
    .await
    .map_err(config_err)?;
    tokio::spawn(revive_offers(scheduler.clone()));
    let service = SchedulerGrpcServer::new(scheduler)
        .max_encoding_message_size(encoding)
        .max_decoding_message_size(decoding);
    let server = create_grpc_server(&grpc)
        .add_service(service)
        .serve_with_incoming(incoming);
    Ok((
        addr,
        tokio::spawn(async move { server.await.map_err(config_err) }),
    ))
}

/// Offers the scheduler's pending tasks to its executors every second. Ballista offers tasks
/// when a job arrives or a task reports back, but not when it resets the tasks of an executor
/// it lost: a job whose only running task was on that executor would wait for the next job.
/// An empty status report in the name of a live executor makes it offer them.
async fn revive_offers<T, U>(scheduler: ballista_scheduler::scheduler_server::SchedulerServer<T, U>)
where
    T: 'static + datafusion_proto::logical_plan::AsLogicalPlan,
    U: 'static + datafusion_proto::physical_plan::AsExecutionPlan,
{
    use ballista_core::serde::protobuf::scheduler_grpc_server::SchedulerGrpc;
    use ballista_core::serde::protobuf::UpdateTaskStatusParams;
    loop {
        tokio::time::sleep(std::time::Duration::from_secs(1)).await;
        let Ok(executors) = scheduler.state.executor_manager.get_executors_state().await else {
            continue;
        };
        let Some((live, _, _)) = executors.first() else {
            continue;
        };
        let report = tonic::Request::new(UpdateTaskStatusParams {
            executor_id: live.id.clone(),
            task_status: vec![],
        });
        let _ = scheduler.update_task_status(report).await;
    }
}

/// Runs a scheduler on `bind` until the process ends (executors are pushed their tasks).
pub async fn run_scheduler(bind: SocketAddr) -> Result<()> {
    let config = scheduler_config(TaskSchedulingPolicy::PushStaged);
    let (_, server) = serve_scheduler(config, bind).await?;
    server
        .await
        .map_err(|e| DataFusionError::External(Box::new(e)))?
}

/// Runs an executor with `slots` concurrent tasks, listening on `port` (and `port + 1`),
/// registered with the scheduler at `scheduler` (`host:port`), until the process ends.
pub async fn run_executor(scheduler: &str, bind: SocketAddr, slots: usize) -> Result<()> {
    use ballista_executor::executor_process::{start_executor_process, ExecutorProcessConfig};
    let (host, port) = scheduler
        .rsplit_once(':')
        .and_then(|(h, p)| Some((h, p.parse::<u16>().ok()?)))
        .ok_or_else(|| config_err(format!("--scheduler {scheduler}: expected host:port")))?;
    let state = cluster_state(with_codecs(SessionConfig::new_with_ballista()))?;
    let config = ExecutorProcessConfig {
        bind_host: bind.ip().to_string(),
        external_host: Some(bind.ip().to_string()),
        port: bind.port(),
        grpc_port: bind.port().wrapping_add(1),
        scheduler_host: host.to_string(),
        scheduler_port: port,
        scheduler_connect_timeout_seconds: 30,
        concurrent_tasks: slots.max(1),
        executor_heartbeat_interval_seconds: HEARTBEAT_SECONDS,
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
pub async fn standalone(executors: usize, slots: usize) -> Result<String> {
    // Standalone executors poll the scheduler for tasks, and only while they have a free
    // slot: a poll is their heartbeat, so one whose slots are all busy for longer than the
    // timeout would be given up, its tasks run again and again and its shuffle output read
    // twice. Executors in this process live and end with it: none is ever lost.
    let mut config = scheduler_config(TaskSchedulingPolicy::PullStaged);
    config.executor_timeout_seconds = u64::MAX;
    let (addr, _) = serve_scheduler(config, SocketAddr::from(([127, 0, 0, 1], 0))).await?;
    // The listener is bound before `serve_scheduler` returns: no retries needed.
    let scheduler = SchedulerGrpcClient::connect(format!("http://{addr}"))
        .await
        .map_err(config_err)?;
    let executor_state = cluster_state(with_codecs(SessionConfig::new_with_ballista()))?;
    for _ in 0..executors {
        ballista_executor::new_standalone_executor_from_state(
            scheduler.clone(),
            slots,
            &executor_state,
        )
        .await
        .map_err(config_err)?;
    }
    Ok(format!("df://{addr}"))
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

/// A job a client started on a cluster: cancelled on the scheduler when the client stops
/// reading before its end (a time limit, a dropped stream), so that the cluster does not go on
/// with work no one waits for.
pub struct JobGuard {
    url: String,
    plan: Arc<dyn datafusion::physical_plan::ExecutionPlan>,
    done: bool,
}

impl JobGuard {
    /// A guard over the job `plan` (a cluster session's plan, started) runs at `url`.
    pub fn new(url: &str, plan: Arc<dyn datafusion::physical_plan::ExecutionPlan>) -> Self {
        Self {
            url: url.to_string(),
            plan,
            done: false,
        }
    }

    /// The job ended (its last batch, or an error it reported): nothing to cancel.
    pub fn finished(&mut self) {
        self.done = true;
    }

    pub fn url(&self) -> &str {
        &self.url
    }
}

impl Drop for JobGuard {
    fn drop(&mut self) {
        use ballista_core::execution_plans::DistributedQueryExec;
        use ballista_core::serde::protobuf::CancelJobParams;
        use datafusion_proto::protobuf::LogicalPlanNode;
        if self.done {
            return;
        }
        let Some(job) = self
            .plan
            .downcast_ref::<DistributedQueryExec<LogicalPlanNode>>()
            .and_then(|q| q.job_id())
        else {
            return;
        };
        let Ok(handle) = tokio::runtime::Handle::try_current() else {
            return;
        };
        let Some(addr) = url::Url::parse(&self.url)
            .ok()
            .and_then(|u| Some(format!("http://{}:{}", u.host_str()?, u.port()?)))
        else {
            return;
        };
        let job_id = job.to_string();
        handle.spawn(async move {
            if let Ok(mut scheduler) = SchedulerGrpcClient::connect(addr).await {
                let _ = scheduler.cancel_job(CancelJobParams { job_id }).await;
            }
        });
    }
}
