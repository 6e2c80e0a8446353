//! podinit's entry point: the only place that prints a fatal error and picks the
//! exit status (docs/signals.md, "Exit statuses": 2 for usage and configuration).

#![deny(clippy::unwrap_used, clippy::expect_used)]

use std::process::ExitCode;

use clap::Parser;
use podinit::cli::{Cli, Command};
use podinit::config::LoadOptions;
use podinit::lifecycle::exit_status::USAGE;

fn main() -> ExitCode {
    std::panic::set_hook(Box::new(|info| {
        // As PID 1 a silent death kills the container: say why, at least.
        // Queued like every log line: a stderr nobody reads must not block.
        let line = format!("podinit | error: internal error (a bug): {info}\n");
        podinit::output::write_log_line(line.as_bytes());
    }));
    // An empty PODINIT_* variable (common in container specs) counts as unset.
    for (key, value) in std::env::vars_os() {
        if key.to_str().is_some_and(|k| k.starts_with("PODINIT_")) && value.is_empty() {
            std::env::remove_var(key);
        }
    }
    let cli = Cli::parse();
    // A plain init (`podinit -- cmd`, no config) is as quiet as tini: warnings
    // and errors only, unless PODINIT_LOG says otherwise.
    let plain = cli.command.is_none() && cli.config.is_none() && !cli.argv.is_empty();
    let default_level = if plain { tracing::Level::WARN } else { tracing::Level::INFO };
    podinit::output::log::init(cli.log_format, default_level);
    let is_root = nix::unistd::geteuid().is_root();
    match cli.command {
        Some(Command::Check { config, argv }) => {
            let config = config.or(cli.config);
            match podinit::config::load(config.as_deref(), &LoadOptions { command: argv, is_root }) {
                Ok(spec) => {
                    let name =
                        config.map_or_else(|| "<command line>".to_owned(), |p| p.display().to_string());
                    print!("{name}: valid\n{}", podinit::config::plan::render(&spec));
                    ExitCode::SUCCESS
                }
                Err(e) => config_error(&e),
            }
        }
        Some(Command::Schema) => {
            print!("{}", podinit::config::SCHEMA);
            ExitCode::SUCCESS
        }
        Some(Command::Status { socket, config, json }) => {
            let config = config.or(cli.config);
            let socket = socket.or_else(|| crate_status_socket(config.as_deref()));
            ExitCode::from(u8::try_from(podinit::status::client(socket, json)).unwrap_or(2))
        }
        None => {
            if cli.config.is_none() && cli.argv.is_empty() {
                eprintln!("podinit: nothing to run: give --config FILE (or PODINIT_CONFIG), or a command after `--`\n\nUsage: podinit [--config FILE] [-- COMMAND [ARG...]]\n       podinit check --config FILE");
                return ExitCode::from(USAGE as u8);
            }
            let spec = match podinit::config::load(
                cli.config.as_deref(),
                &LoadOptions { command: cli.argv, is_root },
            ) {
                Ok(spec) => spec,
                Err(e) => return config_error(&e),
            };
            let status = run(spec);
            ExitCode::from(u8::try_from(status & 0xff).unwrap_or(1))
        }
    }
}

/// `PODINIT_STATUS_SOCKET`, else the `status_socket` of the config file, read
/// leniently (the client must not fail on a config it only looks into).
fn crate_status_socket(config: Option<&std::path::Path>) -> Option<std::path::PathBuf> {
    let from_config = config.and_then(|path| {
        let text = std::fs::read_to_string(path).ok()?;
        let value: toml::Table = toml::from_str(&text).ok()?;
        value.get("pod")?.get("status_socket")?.as_str().map(std::path::PathBuf::from)
    });
    podinit::status::configured_path(from_config.as_deref())
}

fn config_error(e: &podinit::config::ConfigError) -> ExitCode {
    for issue in &e.0 {
        eprintln!("podinit: config error: {issue}");
    }
    ExitCode::from(USAGE as u8)
}

fn run(spec: podinit::config::PodSpec) -> i32 {
    if std::process::id() != 1 {
        // Not PID 1 (e.g. under `docker run --init`), orphans must still
        // come to podinit to be reaped.
        if let Err(e) = nix::sys::prctl::set_child_subreaper(true) {
            tracing::warn!("cannot become child subreaper: {e}; orphans will not be reaped");
        }
    }
    podinit::runtime::signals::reset_inherited();
    podinit::runtime::signals::ignore_own_stops_and_limits();
    let runtime = match tokio::runtime::Builder::new_current_thread().enable_all().build() {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("podinit: error: cannot start the runtime: {e}");
            return 1;
        }
    };
    // Signals are registered before anything is spawned, so that no SIGCHLD or
    // SIGTERM is missed (their handlers need the runtime's reactor).
    let signals = {
        let _guard = runtime.enter();
        let own = podinit::runtime::supervisor::OWN_SIGNALS.map(podinit::config::Signal::number);
        let signals = match signal_hook_tokio::Signals::new(own) {
            Ok(s) => s,
            Err(e) => {
                eprintln!("podinit: error: cannot install signal handlers: {e}");
                return 1;
            }
        };
        // A signal that cannot be caught here (an emulator may keep some
        // real-time ones for itself) is only not forwarded: no reason to stop.
        let handle = signals.handle();
        for sig in podinit::config::Signal::forwarded() {
            if let Err(e) = handle.add_signal(sig.number()) {
                tracing::warn!("{sig} cannot be caught ({e}); it will not be forwarded");
            }
        }
        signals
    };
    let local = tokio::task::LocalSet::new();
    // Safety net: a bug that panics must not leave children behind (as PID 1,
    // podinit's death would kill the container without a word) nor exit with
    // Rust's 101. The panic hook has already said what happened.
    let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        local.block_on(&runtime, podinit::runtime::supervisor::run(spec, signals))
    }));
    match outcome {
        Ok(status) => status,
        Err(_) => {
            podinit::runtime::supervisor::kill_everything_left();
            podinit::output::flush_log(std::time::Instant::now() + std::time::Duration::from_millis(500));
            1
        }
    }
}
