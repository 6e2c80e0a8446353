//! podinit's entry point: the only place that prints a fatal error and picks the
//! exit status (docs/signals.md, "Exit statuses": 2 for usage and configuration).

#![deny(clippy::unwrap_used, clippy::expect_used)]
// System calls go through `podinit::sys`, the one module that writes `unsafe`.
#![deny(unsafe_code)]

use std::process::ExitCode;

use std::path::PathBuf;

use podinit::cli::{Cli, Command, Target};
use podinit::config::LoadOptions;
use podinit::lifecycle::exit_status::USAGE;
use podinit::status::Verb;

/// dlmalloc rather than the C library's allocator: musl's hands freed memory
/// back to the kernel at once, so `podinit -- true` made 205 system calls
/// with it against 150 with dlmalloc (the difference: mmap and munmap).
#[global_allocator]
static ALLOCATOR: dlmalloc::GlobalDlmalloc = dlmalloc::GlobalDlmalloc;

fn main() -> ExitCode {
    // The origin of `podinit status --timing`'s times: podinit's start.
    podinit::status::started_at();
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
    let cli = Cli::from_env();
    // A plain init (`podinit -- cmd`, no config) is as quiet as tini: warnings
    // and errors only, unless PODINIT_LOG says otherwise.
    let plain = cli.command.is_none() && cli.config.is_none() && !cli.argv.is_empty();
    let default_level = if plain { tracing::Level::WARN } else { tracing::Level::INFO };
    podinit::output::log::init(cli.log_format, default_level);
    let is_root = podinit::sys::process::euid() == 0;
    match cli.command {
        Some(Command::Check { config, pod, commands, allow, deny_warnings, argv }) => {
            let config = config.or(cli.config);
            let options = LoadOptions {
                command: argv,
                is_root,
                start_dir: None,
                pod: pod.or(cli.pod),
                commands: [commands, cli.commands].concat(),
                portable: false,
            };
            check(config.as_deref(), &options, allow, deny_warnings)
        }
        #[cfg(feature = "import")]
        Some(Command::Import { file, from, mains, commands, pod, profiles }) => {
            let opts = podinit::import::ImportOptions {
                from,
                mains,
                commands: [commands, cli.commands].concat(),
                pod: pod.or(cli.pod),
                profiles,
                for_run: false,
            };
            import(&file, &opts, is_root)
        }
        #[cfg(feature = "import")]
        Some(Command::Export { config, kind, image, name, argv }) => {
            if let Err(why) = podinit::config::validate::check_name(&name) {
                eprintln!("podinit export: --name {name:?}: {why} (Kubernetes names a Pod or Job so)");
                return ExitCode::from(USAGE as u8);
            }
            let config = config.or(cli.config);
            let options = LoadOptions {
                command: argv,
                is_root: true,
                pod: cli.pod,
                commands: cli.commands,
                ..Default::default()
            };
            match podinit::config::load(config.as_deref(), &options) {
                Ok(spec) => {
                    let (manifest, report) = podinit::import::export::export(&spec, kind, &image, &name);
                    print!("{manifest}");
                    if image == "IMAGE" {
                        eprintln!("podinit export: the image is a placeholder: give --image with the image that holds podinit and every command");
                    }
                    for line in report {
                        eprintln!("podinit export: {line}");
                    }
                    ExitCode::SUCCESS
                }
                Err(e) => config_error(&e),
            }
        }
        Some(Command::Schema) => {
            print!("{}", podinit::config::SCHEMA);
            ExitCode::SUCCESS
        }
        #[cfg(feature = "completions")]
        Some(Command::Completions { shell }) => {
            use std::io::Write;
            let script = podinit::cli::completion_script(shell);
            let mut stdout = std::io::stdout().lock();
            match stdout.write_all(&script).and_then(|()| stdout.flush()) {
                Ok(()) => ExitCode::SUCCESS,
                Err(e) => {
                    eprintln!("podinit completions: cannot write the script: {e}");
                    ExitCode::FAILURE
                }
            }
        }
        Some(Command::Status { target, json, timing, watch }) => {
            match socket_of(&target, cli.config.as_deref()) {
                Ok(socket) => {
                    let format = match (json, timing) {
                        (true, _) => podinit::status::Format::Json,
                        (false, true) => podinit::status::Format::Timing,
                        (false, false) => podinit::status::Format::Text,
                    };
                    if watch {
                        exit_code(podinit::status::watch_client(socket, format))
                    } else {
                        exit_code(podinit::status::client(socket, format))
                    }
                }
                Err(code) => code,
            }
        }
        Some(Command::Restart { name, target }) => ask(&target, cli.config.as_deref(), Verb::Restart(name)),
        Some(Command::Stop { name, target }) => ask(&target, cli.config.as_deref(), Verb::Stop(name)),
        Some(Command::Start { name, target }) => ask(&target, cli.config.as_deref(), Verb::Start(name)),
        Some(Command::Trigger { name, target }) => ask(&target, cli.config.as_deref(), Verb::Trigger(name)),
        Some(Command::Suspend { name, target }) => ask(&target, cli.config.as_deref(), Verb::Suspend(name)),
        Some(Command::Resume { name, target }) => ask(&target, cli.config.as_deref(), Verb::Resume(name)),
        Some(Command::Signal { name, signal, target }) => match podinit::config::Signal::parse(&signal) {
            Some(signal) => ask(&target, cli.config.as_deref(), Verb::Signal(name, signal)),
            None => {
                eprintln!("podinit signal: unknown signal {signal:?} (write e.g. SIGHUP, HUP, SIGRTMIN+1 or a number)");
                ExitCode::from(USAGE as u8)
            }
        },
        Some(Command::Shutdown { target }) => ask(&target, cli.config.as_deref(), Verb::Shutdown),
        Some(Command::Reload { target }) => ask(&target, cli.config.as_deref(), Verb::Reload),
        Some(Command::Events { target }) => match socket_of(&target, cli.config.as_deref()) {
            Ok(socket) => exit_code(podinit::status::events_client(socket)),
            Err(code) => code,
        },
        None => {
            if cli.config.is_none() && cli.argv.is_empty() {
                eprintln!("podinit: nothing to run: give --config FILE (or PODINIT_CONFIG), or a command after `--`\n\nUsage: podinit [--config FILE] [-- COMMAND [ARG...]]\n       podinit check --config FILE");
                return ExitCode::from(USAGE as u8);
            }
            let load_options = LoadOptions {
                command: cli.argv,
                is_root,
                start_dir: None,
                pod: cli.pod,
                commands: cli.commands,
                portable: false,
            };
            let spec = match podinit::config::load(cli.config.as_deref(), &load_options) {
                Ok(spec) => spec,
                Err(e) => return config_error(&e),
            };
            if let Err(e) = podinit::http::address(spec.http) {
                eprintln!("podinit: error: {e}");
                return ExitCode::from(USAGE as u8);
            }
            // Absolute, so that `podinit status` shows which file it is.
            let config = cli.config.as_ref().map(|c| {
                std::fs::canonicalize(c).or_else(|_| std::path::absolute(c)).unwrap_or_else(|_| c.clone())
            });
            let status = run(spec, config, load_options);
            ExitCode::from(u8::try_from(status & 0xff).unwrap_or(1))
        }
    }
}

/// The socket a client asks: `--socket`, else `PODINIT_STATUS_SOCKET`, else
/// the `status_socket` of the config file (`--config`, `PODINIT_CONFIG`), else
/// `None` (the default paths). A config that cannot be read or is not valid is
/// an error, printed as `podinit check` prints it (exit 2): a client must not
/// quietly ask some other podinit.
fn socket_of(target: &Target, global_config: Option<&std::path::Path>) -> Result<Option<PathBuf>, ExitCode> {
    if let Some(socket) = &target.socket {
        return Ok(Some(socket.clone()));
    }
    let config = target.config.as_deref().or(global_config);
    let from_config = match config {
        Some(path) => {
            match podinit::config::load(
                Some(path),
                &LoadOptions { command: Vec::new(), is_root: true, start_dir: None, ..Default::default() },
            ) {
                Ok(spec) => spec.status_socket,
                Err(e) => return Err(config_error(&e)),
            }
        }
        None => None,
    };
    Ok(podinit::status::configured_path(from_config.as_deref()))
}

/// Sends one control verb to the podinit of `target`. A name that cannot be
/// an entry's (a DNS label, docs/configuration.md) or an extra run's (`NAME#2`,
/// docs/configuration.md, "Scheduled entries") is a usage error here: it must
/// not reach the line-based protocol.
fn ask(target: &Target, global_config: Option<&std::path::Path>, verb: Verb) -> ExitCode {
    let name = match &verb {
        Verb::Restart(n)
        | Verb::Stop(n)
        | Verb::Start(n)
        | Verb::Signal(n, _)
        | Verb::Trigger(n)
        | Verb::Suspend(n)
        | Verb::Resume(n) => Some(n),
        Verb::Shutdown | Verb::Reload => None,
    };
    if let Some(name) = name {
        // An extra run: the entry's name, `#` and its number.
        let entry = match name.split_once('#') {
            Some((entry, n)) if !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()) => entry,
            _ => name.as_str(),
        };
        if let Err(why) = podinit::config::validate::check_name(entry) {
            let shown: String = name.chars().take(80).collect();
            eprintln!("podinit: {shown:?} is not an entry name: {why}");
            return ExitCode::from(USAGE as u8);
        }
    }
    match socket_of(target, global_config) {
        Ok(socket) => exit_code(podinit::status::control_client(socket, &verb)),
        Err(code) => code,
    }
}

/// `podinit check`: the plan on stdout, the warnings on stderr (exit 0);
/// the errors on stderr (exit 2); with `--deny-warnings`, a warning is
/// printed as one and the status is 2, without the plan.
fn check(
    config: Option<&std::path::Path>,
    options: &LoadOptions,
    allow: Vec<podinit::config::lint::Lint>,
    deny_warnings: bool,
) -> ExitCode {
    let source = match config.map(|path| podinit::config::validate::read_source(path, options)) {
        Some(Ok(source)) => source,
        Some(Err(e)) => return config_error(&e),
        None => podinit::config::Source::default(),
    };
    let spec = match podinit::config::from_source(&source, options) {
        Ok(spec) => spec,
        Err(e) => return config_error(&e),
    };
    let (compose, kubernetes) = imported_as(config);
    let lint_options = podinit::config::lint::LintOptions { allow, compose, kubernetes };
    let warnings = podinit::config::lint::lint(&source, &spec, &lint_options);
    if deny_warnings && !warnings.is_empty() {
        for w in &warnings {
            eprintln!("podinit: config error: {w} (a warning, and --deny-warnings)");
        }
        return ExitCode::from(USAGE as u8);
    }
    for w in &warnings {
        eprintln!("podinit: warning: {w}");
    }
    let name = config.map_or_else(|| "<command line>".to_owned(), |p| p.display().to_string());
    print!("{name}: valid\n{}", podinit::config::plan::render(&spec));
    #[cfg(feature = "import")]
    if let Some(path) = config {
        print!("{}", imported_notes(path, options));
    }
    ExitCode::SUCCESS
}

/// Whether the config file is read as a Compose file, and whether as a
/// Kubernetes manifest.
fn imported_as(config: Option<&std::path::Path>) -> (bool, bool) {
    #[cfg(feature = "import")]
    if let Some(path) = config {
        if let Ok(text) = podinit::config::validate::read_text(path) {
            let format = podinit::import::detect(path, &text);
            return (
                format == podinit::import::Format::Compose,
                format == podinit::import::Format::Kubernetes,
            );
        }
    }
    let _ = config;
    (false, false)
}

/// What `podinit check` adds for another tool's file: the fields it ignores
/// or approximates, one per line (nothing for podinit's own TOML).
#[cfg(feature = "import")]
fn imported_notes(path: &std::path::Path, options: &LoadOptions) -> String {
    let Ok(text) = podinit::config::validate::read_text(path) else { return String::new() };
    let format = podinit::import::detect(path, &text);
    if format == podinit::import::Format::Toml {
        return String::new();
    }
    let opts = podinit::import::ImportOptions {
        pod: options.pod.clone(),
        commands: options.commands.clone(),
        for_run: true,
        ..Default::default()
    };
    match podinit::import::import(format, path, &text, &opts) {
        Ok(imported) if !imported.notes.is_empty() => {
            let mut out = format!("read as {}; not carried over or changed:\n", format.name());
            for note in &imported.notes {
                out.push_str(&format!("  {note}\n"));
            }
            out
        }
        _ => String::new(),
    }
}

/// `podinit import`: the TOML on stdout, the report on stderr; then what
/// `podinit check` says of the TOML on this machine, as a warning (the file
/// is meant for the image, whose users and directories may differ).
#[cfg(feature = "import")]
fn import(file: &std::path::Path, opts: &podinit::import::ImportOptions, is_root: bool) -> ExitCode {
    let text = match podinit::config::validate::read_text(file) {
        Ok(text) => text,
        Err(e) => {
            eprintln!("podinit import: {}: cannot read: {e}", file.display());
            return ExitCode::from(USAGE as u8);
        }
    };
    let format = opts.from.unwrap_or_else(|| podinit::import::detect(file, &text));
    let imported = match podinit::import::import(format, file, &text, opts) {
        Ok(imported) => imported,
        Err(e) => {
            for issue in &e.0 {
                eprintln!("podinit import: error: {issue}");
            }
            return ExitCode::from(USAGE as u8);
        }
    };
    for note in &imported.notes {
        eprintln!("podinit import: {note}");
    }
    let source = podinit::config::Source {
        path: Some(file.to_owned()),
        text: imported.toml,
        origin: Some(imported.origin),
    };
    // What the file says must pass `podinit check` anywhere: else nothing is
    // written and the status is 2. What this machine lacks (a user, a
    // directory, an env file of the image) is a warning.
    if let Err(e) =
        podinit::config::from_source(&source, &LoadOptions { is_root, portable: true, ..Default::default() })
    {
        for issue in &e.0 {
            eprintln!("podinit import: error: {issue}");
        }
        return ExitCode::from(USAGE as u8);
    }
    print!("{}", source.text);
    if let Err(e) = podinit::config::from_source(&source, &LoadOptions { is_root, ..Default::default() }) {
        eprintln!("podinit import: warning: `podinit check` of this TOML fails on this machine (a user, directory or env file the image may have):");
        for issue in &e.0 {
            eprintln!("podinit import: warning: {issue}");
        }
    }
    ExitCode::SUCCESS
}

fn exit_code(status: i32) -> ExitCode {
    ExitCode::from(u8::try_from(status).unwrap_or(2))
}

fn config_error(e: &podinit::config::ConfigError) -> ExitCode {
    for issue in &e.0 {
        eprintln!("podinit: config error: {issue}");
    }
    ExitCode::from(USAGE as u8)
}

fn run(spec: podinit::config::PodSpec, config: Option<PathBuf>, load_options: LoadOptions) -> i32 {
    if podinit::runtime::spawn::own_pid() != 1 {
        // Not PID 1 (e.g. under `docker run --init`), orphans must still
        // come to podinit to be reaped.
        if let Err(e) = podinit::sys::process::set_child_subreaper() {
            tracing::warn!("cannot become child subreaper: {e}; orphans will not be reaped");
        }
    }
    podinit::runtime::signals::reset_inherited();
    // The signals podinit catches: its own, then the ones it forwards. Blocked
    // before the runtime or any other thread exists and taken by the signal
    // thread alone, or by a plain init's one thread (docs/signals.md, "How
    // podinit takes signals"), so that no SIGCHLD or SIGTERM is missed before
    // the loop runs.
    let own = podinit::runtime::supervisor::OWN_SIGNALS.map(podinit::config::Signal::number);
    let forwarded = podinit::config::signal::forwarded().map(podinit::config::Signal::number);
    let caught = own.into_iter().chain(forwarded);
    if podinit::runtime::plain::fits(&spec, config.is_some()) {
        // One command and nothing to serve: one thread, no runtime, as tini.
        let caught = podinit::runtime::signals::block_caught(caught);
        return safety_net(|| podinit::runtime::plain::run(spec, &caught));
    }
    let signals = match podinit::runtime::signals::take_on_signal_thread(caught) {
        Ok(signals) => signals,
        Err(e) => {
            eprintln!("podinit: error: cannot start the signal thread: {e}");
            return 1;
        }
    };
    let runtime = match tokio::runtime::Builder::new_current_thread().enable_all().build() {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("podinit: error: cannot start the runtime: {e}");
            return 1;
        }
    };
    let local = tokio::task::LocalSet::new();
    safety_net(|| {
        local.block_on(&runtime, podinit::runtime::supervisor::run(spec, config, load_options, signals))
    })
}

/// Runs the pod. A bug that panics must not leave children behind (as PID 1,
/// podinit's death would kill the container without a word) nor exit with
/// Rust's 101: every descendant is killed and reaped, and the status is 1.
/// The panic hook has already said what happened.
fn safety_net(pod: impl FnOnce() -> i32) -> i32 {
    let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(pod));
    match outcome {
        Ok(status) => status,
        Err(_) => {
            podinit::runtime::teardown::kill_everything_left();
            podinit::output::flush_log(std::time::Instant::now() + std::time::Duration::from_millis(500));
            1
        }
    }
}
