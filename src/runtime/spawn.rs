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
    // podinit's pid, for the child to tell whether podinit is still its
    // parent once the parent-death signal is set; 0: none (PID 1).
    let parent = match own_pid() {
        1 => 0,
        pid => pid,
    };
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
            if parent != 0 {
                // Cleared by a change of uid or gid: after them.
                if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL, 0, 0, 0) != 0 {
                    return Err(io::Error::last_os_error());
                }
                // podinit died before the prctl: no signal will come.
                if u32::try_from(libc::getppid()).ok() != Some(parent) {
                    return Err(io::Error::from_raw_os_error(libc::ESRCH));
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

/// What the child returns when the descriptor number it must fill is no
/// longer the one the parent saw (`FdHandoff`); the parent then tries again.
const HANDOFF_RACED: i32 = libc::EBUSY;

/// A descriptor handed to a child as its descriptor `target`, open across
/// exec: the `fd` probe's notification descriptor (s6's notification-fd).
///
/// The child cannot simply `dup2` onto `target` between fork and exec: the
/// standard library reports a failed exec through a close-on-exec pipe of its
/// own, opened just before the fork at the lowest free numbers, and when that
/// pipe is `target` the `dup2` closes it: the error is lost, and a program
/// that was not found looks started. So the number is settled in the parent,
/// right before each fork ([`FdHandoff::hold`]): if `target` is free, the
/// parent puts the descriptor there itself (close-on-exec, so nothing else
/// keeps it) and no pipe can take it; the child only clears close-on-exec.
/// If `target` is taken by a descriptor of podinit's, the parent notes which
/// open file it is (device and inode), and the child `dup2`s onto it only
/// after checking it is still that one: a descriptor closed by another
/// thread in between, its number taken by the pipe, makes the child give up
/// with [`HANDOFF_RACED`] (reported through that intact pipe), and the parent
/// tries again.
#[derive(Debug)]
pub struct FdHandoff {
    source: std::os::fd::RawFd,
    target: i32,
    /// What the parent saw at `target` before the fork, for the child.
    seen: std::sync::Arc<Seen>,
}

/// [`FdHandoff`]'s note from the parent to the child: atomics, which the
/// child may read between fork and exec (no lock).
#[derive(Debug, Default)]
struct Seen {
    /// The parent put the descriptor at `target` itself.
    placed: std::sync::atomic::AtomicBool,
    /// Otherwise the device and inode of the open file at `target`.
    dev: std::sync::atomic::AtomicU64,
    ino: std::sync::atomic::AtomicU64,
}

/// The parent's copy at `target` while a fork is under way; closed when
/// dropped, after it.
struct Held {
    _copy: Option<std::os::fd::OwnedFd>,
}

impl FdHandoff {
    /// Settles `target` for the next fork (see [`FdHandoff`]); what it
    /// returns is dropped once the fork is done.
    fn hold(&self) -> Held {
        use std::os::fd::FromRawFd;
        use std::sync::atomic::Ordering::SeqCst;
        // SAFETY: fcntl(2) F_DUPFD_CLOEXEC duplicates a descriptor we keep
        // open (the pipe's write end) onto the lowest free number >= target;
        // the new descriptor is ours alone.
        let fd = unsafe { libc::fcntl(self.source, libc::F_DUPFD_CLOEXEC, self.target) };
        // SAFETY: as above: a fresh descriptor that nothing else owns.
        let copy = (fd >= 0).then(|| unsafe { std::os::fd::OwnedFd::from_raw_fd(fd) });
        let placed = fd == self.target;
        self.seen.placed.store(placed, SeqCst);
        if placed {
            return Held { _copy: copy };
        }
        drop(copy);
        let (dev, ino) = identity(self.target).unwrap_or((0, 0));
        self.seen.dev.store(dev, SeqCst);
        self.seen.ino.store(ino, SeqCst);
        Held { _copy: None }
    }
}

/// The device and inode of the open file at `fd`; `None` when `fd` is not
/// open. Async-signal-safe (one `fstat`).
fn identity(fd: i32) -> Option<(u64, u64)> {
    // SAFETY: fstat(2) into a zeroed, locally owned struct.
    let mut st: libc::stat = unsafe { std::mem::zeroed() };
    // SAFETY: as above.
    if unsafe { libc::fstat(fd, &mut st) } != 0 {
        return None;
    }
    // `dev_t` and `ino_t` are 64-bit on Linux's 64-bit targets.
    #[allow(clippy::useless_conversion)]
    Some((u64::from(st.st_dev), u64::from(st.st_ino)))
}

/// Makes `source` (a descriptor of podinit's, close-on-exec) the child's
/// descriptor `target`, open across exec; spawn with [`spawn_passing`] and
/// the handoff returned, which settles `target` before the fork
/// ([`FdHandoff`]). `source` must stay open until the child is spawned.
pub fn pass_fd(cmd: &mut Command, source: std::os::fd::RawFd, target: i32) -> FdHandoff {
    let seen = std::sync::Arc::new(Seen::default());
    let in_child = std::sync::Arc::clone(&seen);
    // SAFETY: the closure runs between fork and exec and makes only raw,
    // async-signal-safe system calls (fstat, dup2, fcntl) and atomic loads.
    unsafe {
        cmd.pre_exec(move || {
            use std::sync::atomic::Ordering::SeqCst;
            let done = if in_child.placed.load(SeqCst) || source == target {
                // Already at `target`: open it across exec.
                libc::fcntl(target, libc::F_SETFD, 0)
            } else {
                let seen = (in_child.dev.load(SeqCst), in_child.ino.load(SeqCst));
                // Free now, or still the parent's descriptor: not the
                // standard library's error pipe, so it may be replaced.
                if identity(target).is_some_and(|now| now != seen) {
                    return Err(io::Error::from_raw_os_error(HANDOFF_RACED));
                }
                libc::dup2(source, target)
            };
            if done < 0 {
                return Err(io::Error::last_os_error());
            }
            Ok(())
        });
    }
    FdHandoff { source, target, seen }
}
