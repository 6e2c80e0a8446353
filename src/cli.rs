//! The command line (README, "Command line"). Every operational flag has a `PODINIT_*`
//! environment twin, friendly to Dockerfiles.

use std::ffi::OsString;
use std::path::PathBuf;

use clap::{Args, Parser, Subcommand};

/// podinit: a pod in one container. Runs init tasks, sidecars and mains with the
/// lifecycle of Kubernetes native sidecars, as PID 1.
#[derive(Debug, Parser)]
#[command(name = "podinit", version, args_conflicts_with_subcommands = true, after_help = AFTER_HELP)]
pub struct Cli {
    /// The pod's configuration file (TOML).
    #[arg(long, short = 'c', env = "PODINIT_CONFIG", value_name = "FILE")]
    pub config: Option<PathBuf>,

    /// Format of podinit's own messages on stderr.
    #[arg(long, env = "PODINIT_LOG_FORMAT", value_enum, default_value_t = crate::output::log::LogFormat::Text)]
    pub log_format: crate::output::log::LogFormat,

    #[command(subcommand)]
    pub command: Option<Command>,

    /// A command to run as a main named "main" (Docker CMD). Without a config,
    /// podinit is a plain init for it, like `tini --`.
    #[arg(last = true, value_name = "COMMAND", value_parser = clap::value_parser!(OsString))]
    pub argv: Vec<OsString>,
}

/// What `--help` says after the options: signals (docs/signals.md has the
/// whole table; a unit test checks that it names every signal of
/// [`crate::config::signal::NOT_FORWARDED`]) and the HTTP endpoint
/// (docs/control.md).
pub const AFTER_HELP: &str = "\
Signals: SIGTERM and SIGINT begin termination, SIGCHLD reaps. Every other
signal podinit can catch (SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2, SIGALRM, SIGWINCH,
SIGPWR, SIGRTMIN..SIGRTMAX, ...) is forwarded to the mains' process groups.
Not forwarded: job control (SIGTSTP, SIGTTIN, SIGTTOU, SIGCONT), synchronous
faults (SIGILL, SIGTRAP, SIGABRT, SIGBUS, SIGFPE, SIGSEGV, SIGSYS), SIGPIPE,
SIGXCPU and SIGXFSZ (podinit's own limits), SIGKILL and SIGSTOP, and the C
library's own 32, 33 (34 with musl).
A main killed by signal N makes podinit exit 128+N.

HTTP (off unless PODINIT_HTTP or [pod] http gives an address, read-only):
GET /livez (200 while podinit runs), /readyz (200 ready, 503 not),
/status (JSON), /metrics (Prometheus).";

/// Subcommands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Validate the configuration and print the start plan.
    Check {
        /// The pod's configuration file (TOML).
        #[arg(long, short = 'c', env = "PODINIT_CONFIG", value_name = "FILE")]
        config: Option<PathBuf>,
        /// A command that would be added as a main named "main".
        #[arg(last = true, value_name = "COMMAND", value_parser = clap::value_parser!(OsString))]
        argv: Vec<OsString>,
    },
    /// Print the JSON Schema of the configuration file, for TOML editors
    /// (taplo, Even Better TOML: `#:schema` at the top of podinit.toml).
    Schema,
    /// Ask the running podinit for each entry's state. Exits 0 when the pod is
    /// ready, 1 when not, 2 when no podinit answers (for Docker HEALTHCHECK and
    /// Kubernetes exec probes).
    Status {
        #[command(flatten)]
        target: Target,
        /// Print JSON instead of a table.
        #[arg(long)]
        json: bool,
    },
    /// Restart one sidecar or main of the running pod: its stop path
    /// (pre_stop, stop signal, grace, SIGKILL), then a new instance at once,
    /// without backoff. Exits 0 when done, 1 when refused, 2 when no podinit
    /// answers.
    Restart {
        /// The entry's name.
        name: String,
        #[command(flatten)]
        target: Target,
    },
    /// Stop one sidecar or main through its stop path and keep it down until
    /// `podinit start NAME`. A stopped main counts as ended. Exits 0, 1
    /// (refused) or 2 (no podinit).
    Stop {
        /// The entry's name.
        name: String,
        #[command(flatten)]
        target: Target,
    },
    /// Start an entry that `podinit stop` stopped. Exits 0, 1 (refused) or 2
    /// (no podinit).
    Start {
        /// The entry's name.
        name: String,
        #[command(flatten)]
        target: Target,
    },
    /// Send a signal to one running entry's process group. Exits 0, 1
    /// (refused) or 2 (no podinit).
    Signal {
        /// The entry's name.
        name: String,
        /// The signal: a name (SIGHUP, HUP, SIGRTMIN+1) or a number.
        signal: String,
        #[command(flatten)]
        target: Target,
    },
    /// Terminate the pod, as SIGTERM to podinit does. Exits 0, 1 (refused:
    /// termination has begun) or 2 (no podinit).
    Shutdown {
        #[command(flatten)]
        target: Target,
    },
    /// Make the running pod read its config file again: changed sidecars and
    /// mains restart with their new settings, added ones start, removed ones
    /// stop, finished inits never run again. An invalid file changes nothing.
    /// Exits 0, 1 (refused, with the errors) or 2 (no podinit).
    Reload {
        #[command(flatten)]
        target: Target,
    },
    /// Print the running pod's lifecycle events, one JSON line each, until it
    /// exits (0) or drops this reader for being too slow (1); 2 when no
    /// podinit answers.
    Events {
        #[command(flatten)]
        target: Target,
    },
}

/// Which running podinit to ask.
#[derive(Debug, Clone, Args)]
pub struct Target {
    /// The status socket (default: PODINIT_STATUS_SOCKET, else the config's
    /// status_socket, else the default paths).
    #[arg(long, value_name = "PATH")]
    pub socket: Option<PathBuf>,
    /// The pod's configuration file, to find its status_socket. One that
    /// cannot be read or is not valid is an error (exit 2).
    #[arg(long, short = 'c', env = "PODINIT_CONFIG", value_name = "FILE")]
    pub config: Option<PathBuf>,
}

#[cfg(test)]
mod tests {
    #[test]
    fn help_names_every_signal_that_is_not_forwarded() {
        for &(sig, _) in crate::config::signal::NOT_FORWARDED {
            let name = crate::config::signal::name(sig);
            assert!(super::AFTER_HELP.contains(&name), "--help does not name {name}");
        }
    }
}
