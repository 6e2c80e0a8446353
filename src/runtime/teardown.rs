//! The end of the pod: every process still below podinit is killed and
//! reaped, once the pod is done (or, as a last resort, after a panic).
//!
//! As PID 1 that is `kill(-1)`: every other process of the PID namespace.
//! Not as PID 1 that would reach every process the user may signal, so the
//! tree below podinit is read from /proc and each process is signalled only
//! once it is vouched for (`kill_tree`): a listing read from /proc can be
//! out of date by the time of the kill, and a pid reused by an unrelated
//! process must never get SIGKILL.

use std::collections::HashMap;
use std::time::Duration;

use crate::runtime::reaper::Reaper;

/// SIGKILLs and reaps every process still below podinit once the pod is
/// done. Nothing left is the common case: no sleep then. Otherwise SIGKILL,
/// reap, look again, for at most about 2 s (a process in uninterruptible
/// sleep may take a moment to die); the wait blocks the calling thread,
/// where nothing else is left to run.
pub(crate) fn kill_and_reap_leftovers(reaper: &Reaper) {
    for round in 0..50 {
        let left = kill_descendants();
        if left == 0 {
            // Nothing below podinit, not even a zombie: nothing to reap.
            break;
        }
        reaper.drain();
        std::thread::sleep(Duration::from_millis(if round < 10 { 2 } else { 40 }));
    }
}

/// Kills and reaps every process below podinit, for the last resort of a
/// panic: no output is drained, no order kept.
pub fn kill_everything_left() {
    for _ in 0..20 {
        let left = kill_descendants();
        Reaper::reap_any_now();
        if left == 0 {
            return;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Sends SIGKILL to every process below podinit; returns how many there were.
///
/// As PID 1, `kill(-1)` reaches every other process of the PID namespace. Not as
/// PID 1, that would reach every process the user may signal, so the tree below
/// podinit is read from /proc instead (orphans have been reparented to podinit,
/// the child subreaper, so they are in it) and each process is signalled only
/// once it is vouched for ([`kill_tree`]).
fn kill_descendants() -> usize {
    if !Reaper::has_children() {
        return 0;
    }
    let me = std::process::id();
    if me == 1 {
        let alive = count_children_of(1);
        if alive > 0 {
            let _ = crate::sys::process::kill(-1, libc::SIGKILL);
        }
        return alive;
    }
    // The kernel lists each task's children (CONFIG_PROC_CHILDREN); reading
    // those is far cheaper than all of /proc on a busy host. Without it, the
    // whole process table is read once.
    let mut table: Option<HashMap<u32, Vec<u32>>> = None;
    kill_tree(me, |p| {
        children_of(p).unwrap_or_else(|| {
            let table = table.get_or_insert_with(|| {
                let mut parents: HashMap<u32, Vec<u32>> = HashMap::new();
                for (pid, ppid) in proc_table() {
                    parents.entry(ppid).or_default().push(pid);
                }
                parents
            });
            table.get(&p).cloned().unwrap_or_default()
        })
    })
}

/// SIGKILLs the processes below `root` (podinit itself) as `children` lists
/// them, and returns how many were listed.
///
/// A listing read from /proc can be out of date by the time of the kill: the
/// process may have been reaped by its own parent and its pid given to an
/// unrelated process. So a listed pid is signalled only when it can be
/// vouched for. A child of `root`: once /proc gives `root` as its parent,
/// by its pid, since only podinit reaps its children (and not during this
/// walk), so that pid cannot be reused before the kill. Anything deeper:
/// through a pidfd opened first, once /proc gives as its parent the process
/// it was listed under, and that parent's own pidfd shows it still unreaped
/// (so the parent pid /proc gave was not a recycled one). A pidfd signals the
/// process it was opened on or, if that one has been reaped since, nothing.
/// The whole tree is walked before anything is killed: a process's children
/// are reparented the moment it dies, and could then no longer be vouched for
/// as its children. Without pidfds (Linux before 5.3) the deeper processes
/// are left for the next round: killing their parent makes them podinit's
/// children.
fn kill_tree(root: u32, mut children: impl FnMut(u32) -> Vec<u32>) -> usize {
    use crate::sys::process::Pidfd;
    let mut found = 0;
    // Every process vouched for: its pid, and its pidfd if one could be
    // opened (always for those deeper than podinit's children).
    let mut vouched: Vec<(u32, Option<Pidfd>)> = Vec::new();
    // Parents still to list: `None` for root, else an index into `vouched`.
    let mut stack: Vec<Option<usize>> = vec![None];
    while let Some(at) = stack.pop() {
        let parent = at.map_or(root, |i| vouched[i].0);
        if at.is_some_and(|i| vouched[i].1.is_none()) {
            continue;
        }
        for child in children(parent) {
            found += 1;
            let Ok(pid) = i32::try_from(child) else { continue };
            let fd = match at {
                None if crate::procfs::ppid(child) == Some(root) => Pidfd::open(pid).ok(),
                None => continue,
                Some(i) => {
                    let Ok(fd) = Pidfd::open(pid) else { continue };
                    let parent_unreaped = vouched[i].1.as_ref().is_some_and(|p| p.signal(0).is_ok());
                    if crate::procfs::ppid(child) != Some(parent) || !parent_unreaped {
                        continue;
                    }
                    Some(fd)
                }
            };
            vouched.push((child, fd));
            stack.push(Some(vouched.len() - 1));
        }
    }
    for (pid, fd) in &vouched {
        match fd {
            Some(fd) => {
                let _ = fd.signal(libc::SIGKILL);
            }
            // A child of podinit's without a pidfd: by its pid (see above).
            None => {
                if let Ok(pid) = i32::try_from(*pid) {
                    let _ = crate::sys::process::kill(pid, libc::SIGKILL);
                }
            }
        }
    }
    found
}

/// Children of `pid` from `/proc/PID/task/*/children`; `None` when the kernel
/// does not have these files.
fn children_of(pid: u32) -> Option<Vec<u32>> {
    let tasks = std::fs::read_dir(format!("/proc/{pid}/task")).ok()?;
    let mut children = Vec::new();
    let mut any = false;
    for task in tasks.flatten() {
        let Ok(text) = crate::procfs::read(task.path().join("children")) else { continue };
        any = true;
        children.extend(text.split_whitespace().filter_map(|c| c.parse::<u32>().ok()));
    }
    any.then_some(children)
}

fn count_children_of(parent: u32) -> usize {
    proc_table().filter(|&(pid, ppid)| ppid == parent && pid != parent).count()
}

/// `(pid, ppid)` of every process in /proc (threads are not listed there).
fn proc_table() -> impl Iterator<Item = (u32, u32)> {
    std::fs::read_dir("/proc").into_iter().flatten().flatten().filter_map(|d| {
        let pid: u32 = d.file_name().to_str()?.parse().ok()?;
        Some((pid, crate::procfs::ppid(pid)?))
    })
}

#[cfg(test)]
mod tests {
    // The test process waits for the processes it starts itself.
    #![allow(clippy::disallowed_methods)]

    use std::io::BufRead;
    use std::os::unix::process::ExitStatusExt;
    use std::process::{Command, Stdio};

    /// A listing that went out of date (a listed pid now belongs to a process
    /// that is not the one it was listed under) must not get that process
    /// killed; a true descendant listed deeper is killed through its pidfd.
    #[test]
    fn kill_tree_signals_only_what_it_can_vouch_for() {
        let me = std::process::id();
        // `child` has a real child of its own, `grandchild`.
        let mut child = Command::new("sh")
            .args(["-c", "sleep 60 & echo $!; wait"])
            .stdout(Stdio::piped())
            .spawn()
            .unwrap();
        let mut line = String::new();
        std::io::BufReader::new(child.stdout.take().unwrap()).read_line(&mut line).unwrap();
        let grandchild: u32 = line.trim().parse().unwrap();
        // `bystander` is not below `child`: the stale listing says it is, as
        // if `child`'s real child had been reaped and its pid reused.
        let mut bystander = Command::new("sleep").arg("60").spawn().unwrap();
        let listed = |p: u32| -> Vec<u32> {
            if p == me {
                vec![child.id()]
            } else if p == child.id() {
                vec![grandchild, bystander.id()]
            } else {
                Vec::new()
            }
        };
        assert_eq!(super::kill_tree(me, listed), 3);
        assert_eq!(child.wait().unwrap().signal(), Some(libc::SIGKILL));
        // The bystander got nothing: it dies of the SIGTERM sent now. Had it
        // been sent SIGKILL before, it would have died of that.
        let _ = crate::sys::process::kill(i32::try_from(bystander.id()).unwrap(), libc::SIGTERM);
        assert_eq!(bystander.wait().unwrap().signal(), Some(libc::SIGTERM));
        // The grandchild (reparented to init when `child` died) was killed:
        // gone, or a zombie waiting for its new parent.
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
        loop {
            let stat = crate::procfs::read(format!("/proc/{grandchild}/stat")).unwrap_or_default();
            let state = stat.rfind(')').and_then(|i| stat.get(i + 2..i + 3));
            if matches!(state, None | Some("Z" | "X")) {
                break;
            }
            assert!(std::time::Instant::now() < deadline, "grandchild {grandchild} still alive: {stat}");
            std::thread::yield_now();
        }
    }
}
