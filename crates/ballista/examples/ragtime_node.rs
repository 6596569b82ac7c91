//! A Ballista node that knows the ragtime UDFs of a manifest: run one scheduler and any number of
//! executors, each with the same manifest and graph files, then connect clients to the
//! scheduler (`ragtime_ballista::connect`, or any Ballista client that registers the same UDFs).
//!
//! ```text
//! cargo run --release -p ragtime-ballista --example ragtime_node -- scheduler --manifest udfs.json --bind 0.0.0.0:50050
//! cargo run --release -p ragtime-ballista --example ragtime_node -- executor --manifest udfs.json \
//!     --bind 0.0.0.0:50051 --scheduler scheduler-host:50050 --vcores 8
//! ```

use std::net::SocketAddr;
use std::path::PathBuf;

use clap::{Parser, Subcommand};
use ragtime::CompileOptions;

#[derive(Parser, Debug)]
struct Args {
    #[command(subcommand)]
    node: Node,
}

#[derive(Subcommand, Debug)]
enum Node {
    /// The cluster's scheduler.
    Scheduler {
        /// The UDF manifest (`ragtime-udfs/1`); its graph files are compiled here.
        #[arg(long)]
        manifest: PathBuf,
        /// Address to listen on.
        #[arg(long, default_value = "0.0.0.0:50050")]
        bind: SocketAddr,
    },
    /// A worker: runs the tasks the scheduler hands out.
    Executor {
        /// The UDF manifest (`ragtime-udfs/1`); its graph files are compiled here.
        #[arg(long)]
        manifest: PathBuf,
        /// Address to listen on (Arrow Flight; gRPC uses the next port).
        #[arg(long, default_value = "0.0.0.0:50051")]
        bind: SocketAddr,
        /// The scheduler, `HOST:PORT`.
        #[arg(long)]
        scheduler: String,
        /// Tasks run at once.
        #[arg(long, default_value_t = 4)]
        vcores: usize,
    },
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args = Args::parse();
    let load = |manifest: &PathBuf| -> Result<Vec<_>, Box<dyn std::error::Error>> {
        let udfs = ragtime_datafusion::load_manifest(manifest, CompileOptions::default())?;
        Ok(udfs.into_iter().map(|u| u.build()).collect::<Result<Vec<_>, _>>()?)
    };
    match args.node {
        Node::Scheduler { manifest, bind } => ragtime_ballista::run_scheduler(bind, load(&manifest)?).await?,
        Node::Executor { manifest, bind, scheduler, vcores } => {
            let (host, port) = scheduler.rsplit_once(':').ok_or("--scheduler must be HOST:PORT")?;
            let port: u16 = port.parse().map_err(|_| format!("--scheduler: bad port in {scheduler:?}"))?;
            ragtime_ballista::run_executor(bind, host, port, &load(&manifest)?, vcores).await?
        }
    }
    Ok(())
}
