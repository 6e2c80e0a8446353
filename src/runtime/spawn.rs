//! Starts processes: an entry's instance or an exec probe/hook.
//!
//! Each process gets its own process group, every signal at its default
//! disposition and an empty signal mask, its `user` (supplementary groups, then
//! gid, then uid: dropping the uid first would forbid the rest), and the entry's
//! environment and working directory. What runs in the child between fork and
//! exec is raw system calls only: no allocation, no locks, no logging.
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

/// Builds the command for `argv` with `entry`'s environment, directory and
/// user.
pub fn command<S: AsRef<OsStr>>(entry: &EntrySpec, argv: &Argv<S>, stdio: Stdio3) -> Command {
    let mut cmd = Command::new(argv.program());
    cmd.args(argv.args());
    cmd.envs(entry.env.iter().map(|(k, v)| (k, v)));
    if let Some(dir) = &entry.working_dir {
        cmd.current_dir(dir);
    }
    let (stdin, out_piped) = match stdio {
        Stdio3::Piped => (false, Some(true)),
        Stdio3::Inherit => (false, Some(false)),
        Stdio3::PipedWithStdin => (true, Some(true)),
        Stdio3::InheritWithStdin => (true, Some(false)),
        Stdio3::Null => (false, None),
        Stdio3::Terminal => (true, Some(false)),
    };
    let take_terminal = stdio == Stdio3::Terminal;
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
    let user = entry.user.clone();
    // Set before exec, so the program and whatever it forks at once never run
    // with the old value. Prepared here: the child must not allocate.
    let no_new_privs = entry.no_new_privileges;
    let oom_score_adj: Option<Vec<u8>> = entry.oom_score_adj.map(|v| v.to_string().into_bytes());
    // SAFETY: the closure runs between fork and exec and makes only raw,
    // async-signal-safe system calls on data prepared before the fork.
    unsafe {
        cmd.pre_exec(move || {
            if take_terminal {
                // In the child, not the parent: the program must not run (and
                // read the terminal) before its group is in the foreground, the
                // race tini's isolate_child() describes. SIGTTOU is still blocked
                // here (podinit's mask, emptied below), so a background group may
                // do it.
                // No terminal after all (ENOTTY, ENXIO: it went away) is no
                // reason to refuse the start, as tini's isolate_child().
                if libc::tcsetpgrp(libc::STDIN_FILENO, libc::getpid()) != 0 {
                    let e = io::Error::last_os_error();
                    if !matches!(e.raw_os_error(), Some(libc::ENOTTY | libc::ENXIO)) {
                        return Err(e);
                    }
                }
            }
            crate::runtime::signals::reset_for_child()?;
            if let Some(value) = &oom_score_adj {
                // Before the uid changes: lowering it needs CAP_SYS_RESOURCE.
                // A failure is left for the parent to notice and report.
                let fd = libc::open(c"/proc/self/oom_score_adj".as_ptr(), libc::O_WRONLY | libc::O_CLOEXEC);
                if fd >= 0 {
                    libc::write(fd, value.as_ptr().cast(), value.len());
                    libc::close(fd);
                }
            }
            if no_new_privs && libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 {
                return Err(io::Error::last_os_error());
            }
            if let Some(u) = &user {
                if libc::setgroups(u.groups.len(), u.groups.as_ptr()) != 0
                    || libc::setgid(u.gid) != 0
                    || libc::setuid(u.uid) != 0
                {
                    return Err(io::Error::last_os_error());
                }
            }
            Ok(())
        });
    }
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
pub fn spawn(
    reaper: &Reaper,
    mut cmd: Command,
    program: &OsStr,
    waiter: Waiter,
) -> Result<Child, SpawnError> {
    reaper.spawn(&mut cmd, waiter).map_err(|source| {
        let program = program.to_owned();
        match source.kind() {
            io::ErrorKind::NotFound => SpawnError::NotFound { program },
            io::ErrorKind::PermissionDenied => SpawnError::PermissionDenied { program },
            _ => SpawnError::Other { program, source },
        }
    })
}

/// Makes `source` (a descriptor of podinit's, close-on-exec) the child's
/// descriptor `target`, open across exec: the `fd` probe's notification
/// descriptor (s6's notification-fd). `source` must stay open until the
/// child is spawned.
pub fn pass_fd(cmd: &mut Command, source: std::os::fd::RawFd, target: i32) {
    // SAFETY: the closure runs between fork and exec and makes only raw,
    // async-signal-safe system calls on two integers.
    unsafe {
        cmd.pre_exec(move || {
            // dup2 onto itself would keep close-on-exec: clear it instead.
            let done = if source == target {
                libc::fcntl(target, libc::F_SETFD, 0)
            } else {
                libc::dup2(source, target)
            };
            if done < 0 {
                return Err(io::Error::last_os_error());
            }
            Ok(())
        });
    }
}
