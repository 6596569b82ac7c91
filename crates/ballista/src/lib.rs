//! ragtime UDFs on a Ballista cluster: the session every node needs (the scheduler plans with
//! it, executors look UDFs up in it, the client registers them in it), and in-process
//! schedulers and executors for tests and single-machine clusters.
//!
//! A query that calls a ragtime UDF is planned by the client and the scheduler and run by the
//! executors; each of them must know the UDF by name. The natural way to ship a compiled function
//! is its graph file: every node loads the same UDF manifest
//! ([`ragtime_datafusion::load_manifest`]) and compiles the graph files itself, so no machine
//! code or Rust closure crosses the network. `tests/cluster.rs` starts a scheduler and two
//! executors on localhost and compares their results with single-node DataFusion; the guide's
//! "Ballista" section shows how to start the same nodes as processes on a real cluster.
#![forbid(unsafe_code)]
#![warn(missing_docs)]

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use ballista::prelude::SessionContextExt;
pub use ballista_core::error::{BallistaError, Result};
use ballista_core::extension::SessionConfigExt;
use ballista_core::registry::BallistaFunctionRegistry;
use ballista_core::serde::protobuf::scheduler_grpc_client::SchedulerGrpcClient;
use ballista_executor::executor_process::ExecutorProcessConfig;
use ballista_scheduler::cluster::BallistaCluster;
use ballista_scheduler::config::SchedulerConfig;
use datafusion::execution::{FunctionRegistry, SessionState, SessionStateBuilder};
use datafusion::logical_expr::ScalarUDF;
use datafusion::prelude::{SessionConfig, SessionContext};

/// A Ballista session (DataFusion's default functions and Ballista's settings) that also knows
/// `udfs`: what the scheduler plans with and what executors look functions up in.
pub fn session_state(udfs: &[ScalarUDF]) -> datafusion::error::Result<SessionState> {
    session_state_with(SessionConfig::new_with_ballista(), udfs)
}

/// [`session_state`] with the given configuration (a scheduler builds one per client session,
/// from the client's settings).
pub fn session_state_with(config: SessionConfig, udfs: &[ScalarUDF]) -> datafusion::error::Result<SessionState> {
    let mut state = SessionStateBuilder::new().with_config(config).with_default_features().build();
    for udf in udfs {
        state.register_udf(Arc::new(udf.clone()))?;
    }
    Ok(state)
}

/// Starts a scheduler in this process, on a free localhost port, whose sessions know `udfs`,
/// and returns its address. It runs on the current tokio runtime until the runtime stops.
pub async fn start_scheduler(udfs: &[ScalarUDF]) -> Result<SocketAddr> {
    let state = session_state(udfs)?;
    ballista_scheduler::standalone::new_standalone_scheduler_from_state(&state).await
}

/// Starts an executor in this process, on a free localhost port, that registers with the
/// scheduler at `scheduler`, runs up to `vcores` tasks at once and finds `udfs` by name.
pub async fn start_executor(scheduler: SocketAddr, udfs: &[ScalarUDF], vcores: usize) -> Result<()> {
    let state = session_state(udfs)?;
    // The scheduler's gRPC service may still be starting: retry for up to five seconds.
    let url = format!("http://{}:{}", scheduler.ip(), scheduler.port());
    let mut attempts = 0;
    let client = loop {
        match SchedulerGrpcClient::connect(url.clone()).await {
            Ok(client) => break client,
            Err(e) if attempts == 50 => {
                return Err(BallistaError::GrpcConnectionError(format!(
                    "cannot reach the Ballista scheduler at {url}: {e}"
                )));
            }
            Err(_) => attempts += 1,
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    ballista_executor::new_standalone_executor_from_state(client, vcores, &state).await
}

/// A client session on the cluster whose scheduler is at `scheduler`: queries planned here run
/// on the cluster's executors, and may call `udfs`.
pub async fn connect(scheduler: SocketAddr, udfs: &[ScalarUDF]) -> Result<SessionContext> {
    let state = session_state(udfs)?;
    let url = format!("df://{}:{}", scheduler.ip(), scheduler.port());
    let ctx = SessionContext::remote_with_state(&url, state).await?;
    // Ballista's client session replaces the scalar functions with its own list: register
    // ragtime's again.
    for udf in udfs {
        ctx.register_udf(udf.clone());
    }
    Ok(ctx)
}

/// Runs a scheduler node listening on `bind` until the process stops: what a cluster's
/// scheduler machine runs (`examples/ragtime_node.rs`). Every client session it builds knows
/// `udfs`. Cluster state is kept in memory, so this is one scheduler per cluster.
pub async fn run_scheduler(bind: SocketAddr, udfs: Vec<ScalarUDF>) -> Result<()> {
    let config = SchedulerConfig {
        bind_host: bind.ip().to_string(),
        bind_port: bind.port(),
        external_host: bind.ip().to_string(),
        ..SchedulerConfig::default()
    }
    .with_override_session_builder(Arc::new(move |config: SessionConfig| session_state_with(config, &udfs)));
    let cluster = BallistaCluster::new_from_config(&config).await?;
    ballista_scheduler::scheduler_process::start_server(cluster, bind, Arc::new(config)).await
}

/// Runs an executor node listening on `bind` (Arrow Flight; gRPC on the next port) that
/// registers with the scheduler at `scheduler_host:scheduler_port`, runs up to `vcores` tasks at
/// once and finds `udfs` by name, until the process stops: what a cluster's worker machines run.
pub async fn run_executor(
    bind: SocketAddr,
    scheduler_host: &str,
    scheduler_port: u16,
    udfs: &[ScalarUDF],
    vcores: usize,
) -> Result<()> {
    let state = session_state(udfs)?;
    let config = ExecutorProcessConfig {
        bind_host: bind.ip().to_string(),
        port: bind.port(),
        grpc_port: bind.port().checked_add(1).ok_or_else(|| {
            BallistaError::Configuration(format!("executor port {} leaves no port for gRPC", bind.port()))
        })?,
        scheduler_host: scheduler_host.to_string(),
        scheduler_port,
        vcores,
        override_function_registry: Some(Arc::new(BallistaFunctionRegistry::from(&state))),
        ..ExecutorProcessConfig::default()
    };
    ballista_executor::executor_process::start_executor_process(Arc::new(config)).await
}
