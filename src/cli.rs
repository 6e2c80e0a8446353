//! The command line (docs/reference.md, "Command line"). Every operational flag has a `PODINIT_*`
//! environment twin, friendly to Dockerfiles.

use std::ffi::OsString;
use std::path::PathBuf;

use clap::{Args, Parser, Subcommand};

/// podinit: a pod in one container. Runs init tasks, sidecars and mains with the
/// lifecycle of Kubernetes native sidecars, as PID 1.
#[derive(Debug, Parser)]
#[command(name = "podinit", version, args_conflicts_with_subcommands = true, after_help = AFTER_HELP)]
pub struct Cli {
    /// The pod's configuration file: podinit.toml, or a Kubernetes manifest,
    /// Compose file, supervisord.conf, Procfile or process-compose.yaml
    /// (docs/kubernetes.md, docs/import.md).
    #[arg(long, short = 'c', env = "PODINIT_CONFIG", value_name = "FILE")]
    pub config: Option<PathBuf>,

    /// Which workload of a multi-document Kubernetes manifest is the pod.
    #[arg(long, env = "PODINIT_POD", value_name = "NAME")]
    pub pod: Option<String>,

    /// A command for an entry of an imported file that has none of its own
    /// (run by /bin/sh -c); repeatable.
    #[arg(long = "command", value_name = "NAME=CMD", value_parser = name_and_command)]
    pub commands: Vec<(String, String)>,

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

impl Cli {
    /// The command line of this process, parsed.
    ///
    /// `podinit -- COMMAND [ARG...]` with neither `PODINIT_CONFIG` nor
    /// `PODINIT_LOG_FORMAT` set (a Dockerfile's `ENTRYPOINT ["/podinit",
    /// "--"]`) is read directly, to the very value clap gives (a unit test
    /// compares them): building clap's whole command tree, every subcommand
    /// with its help, was about 40 % of a plain init's own instructions at
    /// start-up. Everything else, errors included, goes through clap. Call it
    /// after empty `PODINIT_*` variables have been removed (they count as
    /// unset).
    pub fn from_env() -> Cli {
        let args: Vec<OsString> = std::env::args_os().collect();
        let unset = |name: &str| std::env::var_os(name).is_none();
        if unset("PODINIT_CONFIG") && unset("PODINIT_LOG_FORMAT") && unset("PODINIT_POD") {
            if let Some(cli) = Cli::plain_init(&args) {
                return cli;
            }
        }
        Cli::parse_from(args)
    }

    /// `podinit -- COMMAND [ARG...]` as clap reads it when no variable is
    /// set; `None` for any other shape.
    fn plain_init(args: &[OsString]) -> Option<Cli> {
        match args {
            [_, dashes, command @ ..] if dashes == "--" && !command.is_empty() => Some(Cli {
                config: None,
                pod: None,
                commands: Vec::new(),
                log_format: crate::output::log::LogFormat::Text,
                command: None,
                argv: command.to_vec(),
            }),
            _ => None,
        }
    }
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
    /// Validate the configuration and print the start plan (and, for another
    /// tool's file, what podinit ignores in it).
    ///
    /// Warns on stderr about what is valid but most likely a mistake
    /// (docs/configuration.md, "Warnings"). Exits 0, or 2 for an invalid
    /// file (or a warning, with --deny-warnings).
    Check {
        /// The pod's configuration file: podinit.toml, or a Kubernetes
        /// manifest, Compose file, supervisord.conf, Procfile or
        /// process-compose.yaml (docs/import.md).
        #[arg(long, short = 'c', env = "PODINIT_CONFIG", value_name = "FILE")]
        config: Option<PathBuf>,
        /// Which workload of a multi-document Kubernetes manifest is the pod.
        #[arg(long, env = "PODINIT_POD", value_name = "NAME")]
        pod: Option<String>,
        /// A command for an entry that has none of its own; repeatable.
        #[arg(long = "command", value_name = "NAME=CMD", value_parser = name_and_command)]
        commands: Vec<(String, String)>,
        /// Silence one warning (docs/configuration.md, "Warnings");
        /// repeatable.
        #[arg(long = "allow", value_name = "NAME", value_parser = lint_name)]
        allow: Vec<crate::config::lint::Lint>,
        /// Treat warnings as errors: print them and exit 2.
        #[arg(long)]
        deny_warnings: bool,
        /// A command that would be added as a main named "main".
        #[arg(last = true, value_name = "COMMAND", value_parser = clap::value_parser!(OsString))]
        argv: Vec<OsString>,
    },
    /// Write another tool's file as a podinit.toml on stdout, with a comment
    /// at each decision; on stderr, a report of what was dropped or
    /// approximated (docs/import.md). Exits 0, or 2 for a file that cannot
    /// be read.
    #[cfg(feature = "import")]
    Import {
        /// The file: a Kubernetes manifest, docker-compose.yml, supervisord.conf,
        /// Procfile or process-compose.yaml.
        file: PathBuf,
        /// Its format, when its content and name do not tell.
        #[arg(long, value_enum, value_name = "FORMAT")]
        from: Option<crate::import::Format>,
        /// An entry that is a main (the others become sidecars); repeatable.
        #[arg(long = "main", value_name = "NAME")]
        mains: Vec<String>,
        /// A command for an entry that has none of its own (run by
        /// /bin/sh -c); repeatable.
        #[arg(long = "command", value_name = "NAME=CMD", value_parser = name_and_command)]
        commands: Vec<(String, String)>,
        /// Which workload of a multi-document Kubernetes manifest is the pod.
        #[arg(long, env = "PODINIT_POD", value_name = "NAME")]
        pod: Option<String>,
        /// A Compose profile to activate; repeatable.
        #[arg(long = "profile", value_name = "NAME")]
        profiles: Vec<String>,
    },
    /// Write the pod as a Kubernetes manifest on stdout (inits as
    /// initContainers, sidecars as initContainers with restartPolicy: Always,
    /// mains as containers, one image); on stderr, what Kubernetes cannot
    /// express and was kept in podinit.io annotations (docs/kubernetes.md).
    #[cfg(feature = "import")]
    Export {
        /// The pod's configuration file, in any format podinit reads.
        #[arg(long, short = 'c', env = "PODINIT_CONFIG", value_name = "FILE")]
        config: Option<PathBuf>,
        /// A Pod, or a Job whose template is the pod.
        #[arg(long, value_enum, default_value = "job")]
        kind: crate::import::export::Kind,
        /// The image every container runs (it must hold every command).
        #[arg(long, value_name = "IMAGE", default_value = "IMAGE")]
        image: String,
        /// The name of the Pod or Job.
        #[arg(long, value_name = "NAME", default_value = "podinit")]
        name: String,
        /// A command that would be added as a main named "main".
        #[arg(last = true, value_name = "COMMAND", value_parser = clap::value_parser!(OsString))]
        argv: Vec<OsString>,
    },
    /// Print the JSON Schema of the configuration file, for TOML editors
    /// (taplo, Even Better TOML: `#:schema` at the top of podinit.toml).
    Schema,
    /// Print the completion script of a shell (bash, zsh or fish), e.g.
    /// `podinit completions bash > /etc/bash_completion.d/podinit`.
    #[cfg(feature = "completions")]
    Completions {
        /// The shell.
        #[arg(value_enum)]
        shell: Shell,
    },
    /// Ask the running podinit for each entry's state. Exits 0 when the pod is
    /// ready, 1 when not, 2 when no podinit answers (for Docker HEALTHCHECK and
    /// Kubernetes exec probes).
    Status {
        #[command(flatten)]
        target: Target,
        /// Print JSON instead of a table.
        #[arg(long)]
        json: bool,
        /// Print when each entry was asked for, started and ready, since
        /// podinit's start, how long it held the start sequence, and the
        /// critical chain to the last main ready.
        #[arg(long, conflicts_with = "json")]
        timing: bool,
        /// Ask again every second and redraw the table in place until
        /// Ctrl-C (when stdout is not a terminal: print each table after a
        /// blank line).
        #[arg(long, conflicts_with = "json")]
        watch: bool,
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
    /// Start one run of a scheduled entry now, as if it came due (its
    /// concurrency_policy applies). Exits 0, 1 (refused) or 2 (no podinit).
    Trigger {
        /// The scheduled entry's name.
        name: String,
        #[command(flatten)]
        target: Target,
    },
    /// Suspend a scheduled entry: no run starts until `podinit resume NAME`
    /// (a running one goes on). Exits 0, 1 (refused) or 2 (no podinit).
    Suspend {
        /// The scheduled entry's name.
        name: String,
        #[command(flatten)]
        target: Target,
    },
    /// Resume a scheduled entry that `suspend` (or the config) suspended.
    /// Exits 0, 1 (refused) or 2 (no podinit).
    Resume {
        /// The scheduled entry's name.
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

/// The shells `podinit completions` writes a script for.
#[cfg(feature = "completions")]
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Shell {
    Bash,
    Zsh,
    Fish,
}

#[cfg(feature = "completions")]
impl Shell {
    /// Every shell, in the order of `podinit completions --help`.
    pub const ALL: [Shell; 3] = [Shell::Bash, Shell::Zsh, Shell::Fish];

    /// The name of the script's file where the shell looks for it: Debian's
    /// /usr/share/bash-completion/completions/podinit,
    /// /usr/share/zsh/vendor-completions/_podinit,
    /// /usr/share/fish/vendor_completions.d/podinit.fish.
    pub fn file_name(self) -> &'static str {
        match self {
            Shell::Bash => "podinit",
            Shell::Zsh => "_podinit",
            Shell::Fish => "podinit.fish",
        }
    }
}

/// The completion script of `shell` for podinit's command line: generated
/// from the clap command of [`Cli`] itself, so it offers every subcommand and
/// option there is (those of the features this build has).
#[cfg(feature = "completions")]
pub fn completion_script(shell: Shell) -> Vec<u8> {
    use clap::CommandFactory;
    use clap_complete::shells::{Bash, Fish, Zsh};
    let mut command = Cli::command();
    // Written into memory, which cannot fail: the generators panic on a
    // failed write, and a closed stdout is the caller's to report.
    let mut script = Vec::new();
    match shell {
        Shell::Bash => clap_complete::generate(Bash, &mut command, "podinit", &mut script),
        Shell::Zsh => clap_complete::generate(Zsh, &mut command, "podinit", &mut script),
        Shell::Fish => clap_complete::generate(Fish, &mut command, "podinit", &mut script),
    }
    script
}

/// A warning's name, for `podinit check --allow`.
fn lint_name(s: &str) -> Result<crate::config::lint::Lint, String> {
    crate::config::lint::Lint::from_name(s)
        .ok_or_else(|| format!("unknown warning (the warnings are {})", crate::config::lint::Lint::names()))
}

/// `NAME=CMD` of `--command`.
fn name_and_command(s: &str) -> Result<(String, String), String> {
    match s.split_once('=') {
        Some((name, cmd)) if !name.is_empty() && !cmd.trim().is_empty() => {
            Ok((name.to_owned(), cmd.to_owned()))
        }
        _ => Err("expected NAME=COMMAND, e.g. web='nginx -g \"daemon off;\"'".into()),
    }
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
    use super::Cli;
    use clap::Parser;
    use std::ffi::OsString;

    /// The direct reading of `podinit -- COMMAND...` gives what clap gives,
    /// for every argument shape after the `--`, and declines every other
    /// shape.
    #[test]
    fn a_plain_init_command_line_reads_as_clap_reads_it() {
        let shapes: &[&[&str]] = &[
            &["podinit", "--", "sleep", "10"],
            &["podinit", "--", "sh", "-c", "exit 3"],
            &["podinit", "--", "--help"],
            &["podinit", "--", "-c", "x.toml", "--config", "--"],
            &["podinit", "--", "check", "status", ""],
        ];
        for shape in shapes {
            let args: Vec<OsString> = shape.iter().map(OsString::from).collect();
            let direct = Cli::plain_init(&args).unwrap_or_else(|| panic!("{shape:?} not read directly"));
            let clap = Cli::try_parse_from(&args).unwrap();
            assert_eq!(format!("{direct:?}"), format!("{clap:?}"), "{shape:?}");
        }
        let not_bytes = vec![OsString::from("podinit"), OsString::from("--"), {
            use std::os::unix::ffi::OsStringExt;
            OsString::from_vec(vec![0xff, 0xfe])
        }];
        let clap = Cli::try_parse_from(&not_bytes).unwrap();
        assert_eq!(format!("{:?}", Cli::plain_init(&not_bytes)), format!("{:?}", Some(clap)));
        let others: &[&[&str]] = &[
            &["podinit"],
            &["podinit", "--"],
            &["podinit", "--config", "x.toml"],
            &["podinit", "-c", "x.toml", "--", "sleep"],
            &["podinit", "--log-format", "json", "--", "sleep"],
            &["podinit", "status"],
            &["podinit", "--help"],
            &["podinit", "sleep", "--"],
        ];
        for shape in others {
            let args: Vec<OsString> = shape.iter().map(OsString::from).collect();
            assert!(Cli::plain_init(&args).is_none(), "{shape:?} read directly");
        }
    }

    #[test]
    fn help_names_every_signal_that_is_not_forwarded() {
        for &(sig, _) in crate::config::signal::NOT_FORWARDED {
            let name = crate::config::signal::name(sig);
            assert!(super::AFTER_HELP.contains(&name), "--help does not name {name}");
        }
    }
}
