//! The command line (SPEC §5). Every operational flag has a `PODINIT_*`
//! environment twin, friendly to Dockerfiles.

use std::path::PathBuf;

use clap::{Parser, Subcommand};

/// podinit: a pod in one container. Runs init tasks, sidecars and mains with the
/// lifecycle of Kubernetes native sidecars, as PID 1.
#[derive(Debug, Parser)]
#[command(name = "podinit", version, args_conflicts_with_subcommands = true)]
pub struct Cli {
    /// The pod's configuration file (TOML).
    #[arg(long, short = 'c', env = "PODINIT_CONFIG", value_name = "FILE")]
    pub config: Option<PathBuf>,

    /// Format of podinit's own messages on stderr.
    #[arg(long, env = "PODINIT_LOG_FORMAT", value_enum, default_value_t = crate::logging::LogFormat::Text)]
    pub log_format: crate::logging::LogFormat,

    #[command(subcommand)]
    pub command: Option<Command>,

    /// A command to run as a main named "main" (Docker CMD). Without a config,
    /// podinit is a plain init for it, like `tini --`.
    #[arg(last = true, value_name = "COMMAND")]
    pub argv: Vec<String>,
}

/// Subcommands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Validate the configuration and print the start plan.
    Check {
        /// The pod's configuration file (TOML).
        #[arg(long, short = 'c', env = "PODINIT_CONFIG", value_name = "FILE")]
        config: Option<PathBuf>,
        /// A command that would be added as a main named "main".
        #[arg(last = true, value_name = "COMMAND")]
        argv: Vec<String>,
    },
    /// Ask the running podinit for each entry's state. Exits 0 when the pod is
    /// ready, 1 when not, 2 when no podinit answers (for Docker HEALTHCHECK and
    /// Kubernetes exec probes).
    Status {
        /// The status socket (default: PODINIT_STATUS_SOCKET, else the config's
        /// status_socket, else the default paths).
        #[arg(long, value_name = "PATH")]
        socket: Option<PathBuf>,
        /// The pod's configuration file, to find its status_socket.
        #[arg(long, short = 'c', env = "PODINIT_CONFIG", value_name = "FILE")]
        config: Option<PathBuf>,
        /// Print JSON instead of a table.
        #[arg(long)]
        json: bool,
    },
}
