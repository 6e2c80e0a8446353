//! The command line (README, "Command line"). Every operational flag has a `PODINIT_*`
//! environment twin, friendly to Dockerfiles.

use std::ffi::OsString;
use std::path::PathBuf;

use clap::{Parser, Subcommand};

/// podinit: a pod in one container. Runs init tasks, sidecars and mains with the
/// lifecycle of Kubernetes native sidecars, as PID 1.
#[derive(Debug, Parser)]
#[command(name = "podinit", version, args_conflicts_with_subcommands = true, after_help = SIGNALS_HELP)]
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

/// What `--help` says about signals (docs/signals.md has the whole table).
/// A unit test checks that it names every signal of
/// [`crate::config::signal::NOT_FORWARDED`].
pub const SIGNALS_HELP: &str = "\
Signals: SIGTERM and SIGINT begin termination, SIGCHLD reaps. Every other
signal podinit can catch (SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2, SIGALRM, SIGWINCH,
SIGPWR, SIGRTMIN..SIGRTMAX, ...) is forwarded to the mains' process groups.
Not forwarded: job control (SIGTSTP, SIGTTIN, SIGTTOU, SIGCONT), synchronous
faults (SIGILL, SIGTRAP, SIGABRT, SIGBUS, SIGFPE, SIGSEGV, SIGSYS), SIGPIPE,
SIGXCPU and SIGXFSZ (podinit's own limits), SIGKILL and SIGSTOP, and the C
library's own 32, 33 (34 with musl).
A main killed by signal N makes podinit exit 128+N.";

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

#[cfg(test)]
mod tests {
    #[test]
    fn help_names_every_signal_that_is_not_forwarded() {
        for &(sig, _) in crate::config::signal::NOT_FORWARDED {
            let name = crate::config::signal::name(sig);
            assert!(super::SIGNALS_HELP.contains(&name), "--help does not name {name}");
        }
    }
}
