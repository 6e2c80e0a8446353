//! Starts processes: an entry's instance or an exec probe/hook.
//!
//! Each process gets its own process group, every signal at its default
//! disposition and an empty signal mask, its `user` (supplementary groups, then
//! gid, then uid: dropping the uid first would forbid the rest), and the entry's
//! environment and working directory. What runs in the child between fork and
//! exec is raw system calls only: no allocation, no locks, no logging
//! (`sys::child` makes them; this module decides what they are).
//!
//! Every process is started on the one fork-and-exec path, with the reset
//! done by podinit's own code in the child. std's cheaper posix_spawn path is
//! never taken, because glibc's and musl's posix_spawn leave the C library's
//! reserved signals (32, 33, and 34 on musl) *ignored* in the child, and an
//! ignored signal survives exec: programs would start with SIGRTMIN-range
//! signals ignored.

use std::ffi::{OsStr, OsString};
use std::io;
use std::os::unix::process::CommandExt;
use std::process::{Child, Command, Stdio};

use crate::config::{Argv, EntrySpec};
use crate::lifecycle::exit_status::{CANNOT_EXECUTE, NOT_FOUND};
use crate::runtime::reaper::{Reaper, Waiter};
pub use crate::sys::child::{pass_fd, FdHandoff};
use crate::sys::child::{ChildSetup, Credentials, HANDOFF_RACED};

/// Where a new process's stdio goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stdio3 {
    /// stdin /dev/null, stdout and stderr piped to podinit (prefixed, json).
    Piped,
    /// stdin /dev/null, stdout and stderr are podinit's own (raw).
    Inherit,
    /// stdin is podinit's own too (the first main), stdout and stderr piped.
    PipedWithStdin,
    /// stdin is podinit's own, stdout and stderr too.
    InheritWithStdin,
    /// Everything /dev/null (probes and hooks).
    Null,
    /// podinit's terminal on stdin, stdout and stderr, and the process group
    /// becomes the terminal's foreground group (the first main under `docker run
    /// -it`), so Ctrl-C and job control reach it as they would without podinit.
    Terminal,
}

impl Stdio3 {
    /// An entry's stdio: the first main (`with_stdin`) gets podinit's stdin,
    /// and its terminal as the foreground group when stdin is one
    /// (`terminal`); `raw` output writes to podinit's own descriptors, every
    /// other mode to pipes that podinit frames.
    pub fn for_entry(log: crate::config::LogMode, with_stdin: bool, terminal: bool) -> Stdio3 {
        use crate::config::LogMode;
        match (log, with_stdin) {
            (_, true) if terminal => Stdio3::Terminal,
            (LogMode::Raw, false) => Stdio3::Inherit,
            (LogMode::Raw, true) => Stdio3::InheritWithStdin,
            (_, false) => Stdio3::Piped,
            (_, true) => Stdio3::PipedWithStdin,
        }
    }
}

/// podinit's working directory when it started, once podinit has left it
/// for `/` ([`leave_start_dir`]).
static START_DIR: std::sync::OnceLock<std::path::PathBuf> = std::sync::OnceLock::new();

/// podinit's start directory once it has left it for `/` (and noted it,
/// [`leave_start_dir`]); `None` while it is still there.
pub fn start_dir() -> Option<&'static std::path::Path> {
    START_DIR.get().map(std::path::PathBuf::as_path)
}

/// Moves podinit itself to `/`, so that it no longer keeps the directory it
/// was started in busy (a mount there could not be unmounted while podinit
/// runs), as dumb-init does once it has started its child. With
/// `more_to_start`, every process started afterwards still starts in that
/// directory, or in its `working_dir` taken relative to it: nothing but
/// podinit's own working directory changes. Without it (a plain init whose
/// one command is never started again) the directory is not even looked up.
/// Call it once podinit needs the directory no more: config read, relative
/// paths resolved, its status socket bound, its first processes started.
/// Failing to read or leave it is no reason to stop: podinit then stays
/// where it is.
pub fn leave_start_dir(more_to_start: bool) {
    if more_to_start {
        let Ok(dir) = std::env::current_dir() else { return };
        if dir.as_os_str() == "/" || START_DIR.set(dir).is_err() {
            return;
        }
    }
    if let Err(e) = std::env::set_current_dir("/") {
        tracing::debug!("staying in the start directory: cannot change to /: {e}");
    }
}

/// Variables of podinit's own environment that no process it starts
/// inherits ([`withhold_inherited`]); none until that is called.
static WITHHELD: std::sync::OnceLock<&'static [&'static str]> = std::sync::OnceLock::new();

/// From now on, no process podinit starts inherits `vars` from podinit's
/// own environment; an entry's own `env` (and a push probe's
/// `NOTIFY_SOCKET`) may still set them. Only the event loop calls it, for
/// the service manager's variables (`runtime/service.rs`); the plain init
/// passes its environment on whole. The first call wins.
pub fn withhold_inherited(vars: &'static [&'static str]) {
    let _ = WITHHELD.set(vars);
}

/// podinit's own pid, read once (it never changes; musl does not cache it).
pub fn own_pid() -> u32 {
    static PID: std::sync::OnceLock<u32> = std::sync::OnceLock::new();
    *PID.get_or_init(std::process::id)
}

/// Builds the command for `argv` with `entry`'s environment, directory and
/// user.
///
/// Not as PID 1, each process podinit starts gets SIGKILL when podinit
/// dies (`PR_SET_PDEATHSIG`, prctl(2)): as PID 1 the kernel kills the whole
/// PID namespace with it, but a subreaper's death would otherwise leave what
/// it started running, orphaned and unsupervised. The kernel sends it when
/// the *thread* that forked exits; podinit forks only on its main thread,
/// which lives as long as podinit. It is set after the user and group change
/// (which would clear it) and checked against a death of podinit's between
/// fork and prctl. Only the processes podinit starts get it, not what they
/// start in turn: those are killed when podinit ends normally, and, should
/// podinit itself be killed, with their parent only if it passes the signal on.
pub fn command<S: AsRef<OsStr>>(entry: &EntrySpec, argv: &Argv<S>, stdio: Stdio3) -> Command {
    let mut cmd = Command::new(argv.program());
    cmd.args(argv.args());
    for var in WITHHELD.get().copied().unwrap_or_default() {
        cmd.env_remove(var);
    }
    cmd.envs(entry.env.iter().map(|(k, v)| (k, v)));
    match (&entry.working_dir, START_DIR.get()) {
        (Some(dir), Some(start)) => {
            cmd.current_dir(start.join(dir));
        }
        (Some(dir), None) => {
            cmd.current_dir(dir);
        }
        (None, Some(start)) => {
            cmd.current_dir(start);
        }
        (None, None) => {}
    }
    let (stdin, out_piped) = match stdio {
        Stdio3::Piped => (false, Some(true)),
        Stdio3::Inherit => (false, Some(false)),
        Stdio3::PipedWithStdin => (true, Some(true)),
        Stdio3::InheritWithStdin => (true, Some(false)),
        Stdio3::Null => (false, None),
        Stdio3::Terminal => (true, Some(false)),
    };
    cmd.stdin(if stdin { Stdio::inherit() } else { Stdio::null() });
    match out_piped {
        Some(true) => {
            cmd.stdout(Stdio::piped()).stderr(Stdio::piped());
        }
        Some(false) => {
            cmd.stdout(Stdio::inherit()).stderr(Stdio::inherit());
        }
        None => {
            cmd.stdout(Stdio::null()).stderr(Stdio::null());
        }
    }
    cmd.process_group(0);
    // Prepared here: the child must not allocate.
    let setup = ChildSetup {
        foreground: stdio == Stdio3::Terminal,
        reset_signals: crate::runtime::signals::child_resets(),
        oom_score_adj: entry.oom_score_adj.map(|v| v.to_string().into_bytes()),
        // Set before exec, so the program and whatever it forks at once never
        // run with the old value.
        no_new_privileges: entry.no_new_privileges,
        user: entry.user.as_ref().map(|u| Credentials::new(u.uid, u.gid, &u.groups)),
        // podinit's pid, for the child to tell whether podinit is still its
        // parent once the parent-death signal is set; 0: none (PID 1).
        parent_death: match own_pid() {
            1 => 0,
            pid => pid,
        },
    };
    crate::sys::child::prepare(&mut cmd, setup);
    cmd
}

/// Why a program could not be started.
#[derive(Debug, thiserror::Error)]
pub enum SpawnError {
    #[error("cannot run {program:?}: not found")]
    NotFound { program: OsString },
    #[error("cannot run {program:?}: permission denied (not executable?)")]
    PermissionDenied { program: OsString },
    #[error("cannot run {program:?}: {source}")]
    Other { program: OsString, source: io::Error },
}

impl SpawnError {
    /// The shell's status for it: 127 not found, 126 for anything else.
    pub fn status(&self) -> i32 {
        match self {
            SpawnError::NotFound { .. } => NOT_FOUND,
            _ => CANNOT_EXECUTE,
        }
    }
}

/// Spawns and registers a process.
///
/// # Errors
/// A [`SpawnError`]: not found (status 127), not executable or any other
/// reason (126); its message names the program.
pub fn spawn(reaper: &Reaper, cmd: Command, program: &OsStr, waiter: Waiter) -> Result<Child, SpawnError> {
    spawn_passing(reaper, cmd, program, waiter, None)
}

/// As [`spawn`], handing the child a descriptor ([`pass_fd`]).
///
/// # Errors
/// As [`spawn`].
pub fn spawn_passing(
    reaper: &Reaper,
    mut cmd: Command,
    program: &OsStr,
    waiter: Waiter,
    handoff: Option<&FdHandoff>,
) -> Result<Child, SpawnError> {
    let mut waiter = Some(waiter);
    let mut tries = 0;
    let result = loop {
        tries += 1;
        let held = handoff.map(FdHandoff::hold);
        let Some(w) = waiter.take() else { break Err(io::Error::from_raw_os_error(libc::EINVAL)) };
        let result = reaper.spawn(&mut cmd, w).map_err(|(e, w)| {
            waiter = Some(w);
            e
        });
        drop(held);
        match result {
            // The descriptor's number changed hands between the parent's look
            // and the fork (see `FdHandoff`): once more, with a fresh look.
            Err(e) if handoff.is_some() && e.raw_os_error() == Some(HANDOFF_RACED) && tries < 3 => {}
            other => break other,
        }
    };
    result.map_err(|source| {
        let program = program.to_owned();
        match source.kind() {
            io::ErrorKind::NotFound => SpawnError::NotFound { program },
            io::ErrorKind::PermissionDenied => SpawnError::PermissionDenied { program },
            _ => SpawnError::Other { program, source },
        }
    })
}
