//! One `[program:x]` (supervisord.org/configuration.html, "[program:x]
//! Section Values"): the mapping table, one row per key, in
//! [`Program::read`], and the processes it makes (`numprocs`, with each
//! one's `%(name)s` expansions). It records what it maps, drops or
//! approximates; it never decides roles (that is `pod`'s) and starts
//! nothing.

use super::expand::{self, Known, Piece};
use super::ini::Entry;
use super::{expand_now, host_name, Globals, Proc, Program, Reader, Restart};
use crate::config::locate::Place;
use crate::import::draft::{Table, Value};
use crate::import::{split_words, Ctx, NoteKind};

/// The keys of `[program:x]` (supervisord.org/configuration.html,
/// "[program:x] Section Values"), for the "did you mean" of a typo.
const PROGRAM_KEYS: &[&str] = &[
    "command",
    "process_name",
    "numprocs",
    "numprocs_start",
    "priority",
    "autostart",
    "startsecs",
    "startretries",
    "autorestart",
    "exitcodes",
    "stopsignal",
    "stopwaitsecs",
    "stopasgroup",
    "killasgroup",
    "user",
    "redirect_stderr",
    "stdout_logfile",
    "stdout_logfile_maxbytes",
    "stdout_logfile_backups",
    "stdout_capture_maxbytes",
    "stdout_events_enabled",
    "stdout_syslog",
    "stderr_logfile",
    "stderr_logfile_maxbytes",
    "stderr_logfile_backups",
    "stderr_capture_maxbytes",
    "stderr_events_enabled",
    "stderr_syslog",
    "environment",
    "directory",
    "umask",
    "serverurl",
];

/// The names a program's values may use (supervisord.org
/// configuration.html: each key of "[program:x] Section Values" lists its
/// expansions).
struct Names<'a> {
    /// The directory of the file the value is written in.
    here: String,
    program: &'a str,
    group: &'a str,
    /// `process_num` and `numprocs`, in the keys read per process.
    num: Option<(i64, i64)>,
    /// The program's `environment`, then `[supervisord]`'s: `%(ENV_X)s`
    /// names, expanded now; any other X is left to the container.
    penv: &'a [(String, Vec<Piece>)],
    genv: &'a [(String, Vec<Piece>, Option<Place>)],
}

impl Names<'_> {
    fn lookup(&self, name: &str) -> Option<Known> {
        match name {
            "here" => Some(Known::Str(self.here.clone())),
            "program_name" => Some(Known::Str(self.program.to_owned())),
            "group_name" => Some(Known::Str(self.group.to_owned())),
            "host_node_name" => Some(Known::Str(host_name())),
            "process_num" => self.num.map(|n| Known::Int(n.0)),
            "numprocs" => self.num.map(|n| Known::Int(n.1)),
            n => {
                let var = n.strip_prefix("ENV_")?;
                let set =
                    self.penv.iter().map(|(k, v)| (k, v)).chain(self.genv.iter().map(|(k, v, _)| (k, v)));
                let value = set.filter(|(k, _)| *k == var).find_map(|(_, v)| expand::plain(v));
                Some(value.map_or_else(|| Known::Later(var.to_owned()), Known::Str))
            }
        }
    }
}

impl Program {
    /// Reads the program's keys (the mapping table: one row per key) and
    /// adds its processes to `procs`; false for a program with
    /// autostart=false, which is not imported.
    pub(super) fn read(
        &mut self,
        r: &Reader,
        ctx: &mut Ctx,
        globals: &Globals,
        seq: usize,
        procs: &mut Vec<Proc>,
    ) -> bool {
        let sec = &r.ini.sections[self.section];
        let sname = sec.name.clone();
        let sec_at = r.sec_place(sec);
        if self.name.is_empty() || self.name.contains([' ', ':', '/']) {
            r.error(
                ctx,
                sec.file,
                Some(&sec_at),
                format!("{:?} is not a program name supervisord takes (no blank, : or /)", self.name),
            );
            return true;
        }
        let mut keys: Vec<&Entry> = sec.entries.iter().collect();
        keys.extend(r.ini.defaults.iter().filter(|d| sec.get(&d.key).is_none()));
        let (mut command, mut environment, mut directory, mut process_name) = (None, None, None, None);
        let mut user = None;
        let (mut numprocs, mut numprocs_start, mut priority) = (1, 0, 999);
        let mut autostart = true;
        let mut autorestart: Option<(String, &Entry)> = None;
        let mut exitcodes: Option<(Vec<i64>, &Entry)> = None;
        let mut stop_signal = None;
        let mut stopwait = 10;
        let (mut stopasgroup, mut killasgroup): (Option<(bool, &Entry)>, Option<bool>) = (None, None);
        let names = "here, program_name, group_name, host_node_name, process_num, numprocs, ENV_*";
        let group_name = self.group.as_ref().map_or(self.name.clone(), |g| g.0.clone());
        let simple = |e: &Entry| Names {
            here: r.dirs[e.file].display().to_string(),
            program: &self.name,
            group: &group_name,
            num: None,
            penv: &[],
            genv: &globals.env,
        };
        for e in keys {
            let at = r.place(e, &sname);
            if e.value.contains("%(here)") {
                let here = r.dirs[e.file].display();
                r.note(ctx, e.file, Some(&at), NoteKind::Decision, format!("%(here)s is {here}, where the file is on this machine; in the container it is where supervisord.conf is"));
            }
            let now = |ctx: &mut Ctx| expand_now(r, ctx, e, &at, &|n| simple(e).lookup(n), names);
            match e.key.as_str() {
                // Run as written, split as shlex splits it (no shell): an argv.
                "command" => command = Some(e),
                // Per process: expanded with process_num, then the entry's name.
                "process_name" => process_name = Some(e),
                // One entry per process.
                "numprocs" => numprocs = now(ctx).and_then(|v| int_of(r, ctx, e, &at, &v)).unwrap_or(1),
                "numprocs_start" => {
                    numprocs_start = now(ctx).and_then(|v| int_of(r, ctx, e, &at, &v)).unwrap_or(0)
                }
                // The order of the entries (lowest first).
                "priority" => priority = now(ctx).and_then(|v| int_of(r, ctx, e, &at, &v)).unwrap_or(999),
                // false: not imported (podinit has no `supervisorctl start`).
                "autostart" => autostart = now(ctx).and_then(|v| bool_of(r, ctx, e, &at, &v)).unwrap_or(true),
                // The role and restart_policy (see `Reader::draft`).
                "autorestart" => autorestart = now(ctx).map(|v| (v, e)),
                // restart_rules of an autorestart=unexpected main.
                "exitcodes" => {
                    let Some(v) = now(ctx) else { continue };
                    let codes: Result<Vec<i64>, _> = v.split(',').map(|c| c.trim().parse::<i64>()).collect();
                    match codes {
                        Ok(c) if !c.is_empty() && c.iter().all(|c| (0..=255).contains(c)) => {
                            exitcodes = Some((c, e))
                        }
                        _ => r.error(
                            ctx,
                            e.file,
                            Some(&at),
                            format!("{v:?} is not a list of exit codes (0 to 255, separated by commas)"),
                        ),
                    }
                }
                // podinit counts a process started once it runs.
                "startsecs" => {
                    if let Some(v) = now(ctx).and_then(|v| int_of(r, ctx, e, &at, &v)).filter(|v| *v != 0) {
                        r.note(ctx, e.file, Some(&at), NoteKind::Approximated, format!("startsecs={v}: supervisord counts a process started once it has run {v} s, and an earlier exit as a failed start; podinit counts it started when it runs, and every exit goes by the restart policy"));
                    }
                }
                // podinit's max_restarts counts every restart and then fails the pod.
                "startretries" => {
                    if let Some(v) = now(ctx).and_then(|v| int_of(r, ctx, e, &at, &v)) {
                        r.note(ctx, e.file, Some(&at), NoteKind::Dropped, format!("startretries={v}: supervisord gives up on a program (FATAL) after {v} failed starts in a row and the others go on; podinit's max_restarts counts every restart and then fails the whole pod, so none is set: podinit goes on restarting with backoff"));
                    }
                }
                // stop_signal.
                "stopsignal" => {
                    let Some(v) = now(ctx) else { continue };
                    let v = v.trim().to_owned();
                    let parsed = match v.parse::<i64>() {
                        Ok(n) => i32::try_from(n)
                            .ok()
                            .and_then(crate::config::signal::Signal::new)
                            .map(|_| Value::Int(n)),
                        Err(_) => {
                            let name = v.to_ascii_uppercase();
                            let name = if name.starts_with("SIG") { name } else { format!("SIG{name}") };
                            crate::config::signal::Signal::parse(&name).map(|_| Value::Str(name))
                        }
                    };
                    match parsed {
                        Some(s) => stop_signal = Some((s, r.from(e, &sname))),
                        None => r.error(
                            ctx,
                            e.file,
                            Some(&at),
                            format!("{v:?} is not a signal (write TERM, HUP, INT, QUIT, KILL, USR1 or USR2)"),
                        ),
                    }
                }
                // [pod] termination_grace_period (one budget).
                "stopwaitsecs" => stopwait = now(ctx).and_then(|v| int_of(r, ctx, e, &at, &v)).unwrap_or(10),
                // podinit always signals the process group.
                "stopasgroup" => {
                    stopasgroup = now(ctx).and_then(|v| bool_of(r, ctx, e, &at, &v)).map(|b| (b, e))
                }
                "killasgroup" => killasgroup = now(ctx).and_then(|v| bool_of(r, ctx, e, &at, &v)),
                // user.
                "user" => user = now(ctx).map(|u| (u, r.from(e, &sname))),
                // env (with [supervisord]'s environment under it).
                "environment" => environment = Some(e),
                // working_dir.
                "directory" => directory = Some(e),
                "umask" => r.note(
                    ctx,
                    e.file,
                    Some(&at),
                    NoteKind::Dropped,
                    "podinit does not set a umask: the program inherits podinit's",
                ),
                // Output: podinit writes every line on its own stdout/stderr.
                "redirect_stderr"
                | "stdout_logfile"
                | "stdout_logfile_maxbytes"
                | "stdout_logfile_backups"
                | "stdout_capture_maxbytes"
                | "stdout_events_enabled"
                | "stdout_syslog"
                | "stderr_logfile"
                | "stderr_logfile_maxbytes"
                | "stderr_logfile_backups"
                | "stderr_capture_maxbytes"
                | "stderr_events_enabled"
                | "stderr_syslog" => {
                    let to_console =
                        matches!(e.value.trim(), "/dev/stdout" | "/dev/stderr" | "/dev/fd/1" | "/dev/fd/2");
                    if !(to_console || e.key.ends_with("maxbytes") && e.value.trim() == "0") {
                        r.note(ctx, e.file, Some(&at), NoteKind::Dropped, "podinit writes a program's output on its own stdout and stderr, each line behind the entry's name (no log files, rotation or capture)");
                    }
                }
                "serverurl" => r.note(
                    ctx,
                    e.file,
                    Some(&at),
                    NoteKind::Ignored,
                    "the supervisord server a program may talk to; podinit has none",
                ),
                other => {
                    let hint = PROGRAM_KEYS
                        .iter()
                        .filter(|k| close(k, other))
                        .map(|k| format!(" (is it a typo of {k}?)"))
                        .next()
                        .unwrap_or_default();
                    r.note(
                        ctx,
                        e.file,
                        Some(&at),
                        NoteKind::Ignored,
                        format!("supervisord 4 ignores a key it does not know, without a word{hint}"),
                    );
                }
            }
        }
        let killasgroup = killasgroup.unwrap_or(stopasgroup.is_some_and(|s| s.0));
        if let Some((true, e)) = stopasgroup {
            if !killasgroup {
                let at = r.place(e, &sname);
                r.error(
                    ctx,
                    e.file,
                    Some(&at),
                    "stopasgroup=true needs killasgroup=true (supervisord refuses it otherwise)",
                );
            }
        }
        let restart = match &autorestart {
            None => Restart::Unexpected(exitcodes.as_ref().map_or(vec![0], |c| c.0.clone())),
            Some((v, e)) => match (truth(v), v.trim().to_ascii_lowercase().as_str()) {
                (Some(true), _) => Restart::Always,
                (Some(false), _) => Restart::Never,
                (None, "unexpected") => {
                    Restart::Unexpected(exitcodes.as_ref().map_or(vec![0], |c| c.0.clone()))
                }
                _ => {
                    let at = r.place(e, &sname);
                    r.error(
                        ctx,
                        e.file,
                        Some(&at),
                        format!("{v:?} is not an autorestart (true, false or unexpected)"),
                    );
                    return true;
                }
            },
        };
        if let (Some((_, e)), Restart::Always | Restart::Never) = (&exitcodes, &restart) {
            let at = r.place(e, &sname);
            r.note(
                ctx,
                e.file,
                Some(&at),
                NoteKind::Ignored,
                "exitcodes only matter with autorestart=unexpected",
            );
        }
        let Some(command) = command else {
            r.error(
                ctx,
                sec.file,
                Some(&sec_at),
                format!("[{sname}] has no command (supervisord refuses it)"),
            );
            return true;
        };
        if !autostart {
            r.note(ctx, sec.file, Some(&sec_at), NoteKind::Dropped, "autostart=false: supervisord starts it only when asked (`supervisorctl start`); podinit has no such command, so it is not imported");
            return false;
        }
        if numprocs > 1 && !process_name.is_some_and(|e| e.value.contains("%(process_num)")) {
            let e = process_name.unwrap_or(command);
            let at = r.place(e, &sname);
            r.error(ctx, e.file, Some(&at), "numprocs > 1 needs %(process_num) in process_name, so that each process has its own name (supervisord refuses it otherwise)");
            return true;
        }
        if numprocs == 0 {
            r.note(
                ctx,
                sec.file,
                Some(&sec_at),
                NoteKind::Decision,
                "numprocs=0: no process, as supervisord starts none",
            );
        }
        let user = user.or_else(|| globals.user.clone());
        let group = self.group.clone();
        let group_seq = group.as_ref().map_or(seq, |g| g.2);
        let group_prio = group.as_ref().map_or(priority, |g| g.1);
        for num in numprocs_start..numprocs_start.saturating_add(numprocs.max(0)) {
            // The expansions of this process: the program's, process_num,
            // numprocs, and (for command and directory) its environment.
            let first = num == numprocs_start;
            let pieces_of = |ctx: &mut Ctx, e: &Entry, penv: &[(String, Vec<Piece>)]| -> Option<Vec<Piece>> {
                let n = Names {
                    here: r.dirs[e.file].display().to_string(),
                    program: &self.name,
                    group: &group_name,
                    num: Some((num, numprocs)),
                    penv,
                    genv: &globals.env,
                };
                match expand::expand(&e.value, &|name| n.lookup(name), names) {
                    Ok(p) => Some(p),
                    Err(bad) => {
                        if first {
                            let (line, col) = e.place_of(bad.offset);
                            r.error(
                                ctx,
                                e.file,
                                Some(&Place { line, col, key: format!("{sname}.{}", e.key) }),
                                bad.message,
                            );
                        }
                        None
                    }
                }
            };
            // Name.
            let raw_name = match process_name {
                Some(e) => {
                    let Some(p) = pieces_of(ctx, e, &[]) else { return true };
                    let at = r.place(e, &sname);
                    match r.now_value(ctx, e, &at, &p) {
                        Some(n) => n.trim().to_owned(),
                        None => self.name.clone(),
                    }
                }
                None => self.name.clone(),
            };
            let name_at = process_name.map(|e| r.place(e, &sname)).unwrap_or(sec_at.clone());
            let name = if first || numprocs > 1 {
                ctx.name(&raw_name, Some(&name_at))
            } else {
                crate::import::entry_name(&raw_name)
            };
            // Environment.
            let mut penv: Vec<(String, Vec<Piece>, Option<Place>)> = Vec::new();
            if let Some(e) = environment {
                let Some(p) = pieces_of(ctx, e, &[]) else { return true };
                let (text, vars) = expand::marked(&p);
                match expand::key_values(&text) {
                    Ok(kv) => penv.extend(
                        kv.into_iter().map(|(k, v)| (k, expand::unmarked(&v, &vars), r.from(e, &sname))),
                    ),
                    Err(m) => {
                        if first {
                            let at = r.place(e, &sname);
                            r.error(ctx, e.file, Some(&at), m);
                        }
                        return true;
                    }
                }
            }
            let penv_pieces: Vec<(String, Vec<Piece>)> =
                penv.iter().map(|(k, v, _)| (k.clone(), v.clone())).collect();
            // Command.
            let Some(cmd) = pieces_of(ctx, command, &penv_pieces) else { return true };
            let (marked, vars) = expand::marked(&cmd);
            let words = match split_words(&marked) {
                Ok(w) if !w.is_empty() => w,
                Ok(_) => {
                    if first {
                        let at = r.place(command, &sname);
                        r.error(ctx, command.file, Some(&at), "the command is empty");
                    }
                    return true;
                }
                Err(m) => {
                    if first {
                        let at = r.place(command, &sname);
                        r.error(
                            ctx,
                            command.file,
                            Some(&at),
                            format!("the command cannot be split into words as supervisord splits it: {m}"),
                        );
                    }
                    return true;
                }
            };
            let words: Vec<Vec<Piece>> = words.iter().map(|w| expand::unmarked(w, &vars)).collect();
            let dir = match directory {
                Some(e) => match pieces_of(ctx, e, &penv_pieces) {
                    Some(p) => Some((p, r.from(e, &sname), e)),
                    None => return true,
                },
                None => None,
            };
            // [supervisord]'s environment under the program's own.
            let mut all_env: Vec<&(String, Vec<Piece>, Option<Place>)> =
                globals.env.iter().filter(|(k, _, _)| !penv.iter().any(|(pk, _, _)| pk == k)).collect();
            all_env.extend(penv.iter());
            let later = |p: &[Piece]| p.iter().any(|p| matches!(p, Piece::Env(_)));
            let shell = words.iter().any(|w| later(w))
                || all_env.iter().any(|(_, v, _)| later(v))
                || dir.as_ref().is_some_and(|(p, _, _)| later(p));
            let mut env = Table::default();
            let mut prefix = String::new();
            for (k, v, from) in all_env {
                match expand::plain(v) {
                    Some(t) => {
                        env.set(k, t, from.as_ref());
                    }
                    None => prefix.push_str(&format!("export {k}={}; ", expand::shell_word(v))),
                }
            }
            let mut working_dir = None;
            if let Some((p, from, _)) = &dir {
                match expand::plain(p) {
                    Some(t) => working_dir = Some((t, from.clone())),
                    None => prefix.push_str(&format!("cd {} && ", expand::shell_word(p))),
                }
            }
            if words
                .first()
                .is_some_and(|w| expand::plain(w).is_some_and(|t| t.rsplit('/').next() == Some("pidproxy")))
                && first
            {
                let at = r.place(command, &sname);
                r.note(ctx, command.file, Some(&at), NoteKind::Decision, "pidproxy is kept: it stays in the foreground for a program that daemonizes and passes signals on to it (podinit cannot follow a process that forks away)");
            }
            let command_value = if shell {
                if first {
                    let at = r.place(command, &sname);
                    r.note(ctx, command.file, Some(&at), NoteKind::Decision, "%(ENV_X)s of a variable this file does not set is left to the container: the command runs through /bin/sh -c, which expands ${X} when it starts (supervisord reads it from its own environment; an unset one stops the command, as supervisord refuses the file)");
                }
                let argv: Vec<String> = words.iter().map(|w| expand::shell_word(w)).collect();
                Value::Str(format!("{prefix}exec {}", argv.join(" ")))
            } else {
                Value::argv(&words.iter().map(|w| expand::plain(w).unwrap_or_default()).collect::<Vec<_>>())
            };
            procs.push(Proc {
                order: (group_prio, group_seq, priority, group.as_ref().map_or(self.section, |g| g.3), num),
                group_seq,
                name,
                raw_name,
                program: self.name.clone(),
                section: sname.clone(),
                file: sec.file,
                num,
                num_of: numprocs,
                priority,
                from: (sec.file == 0).then(|| sec_at.clone()),
                command: command_value,
                command_from: r.from(command, &sname),
                env,
                dir: working_dir,
                user: user.clone(),
                stop_signal: stop_signal.clone(),
                restart: restart.clone(),
                restart_from: autorestart.as_ref().and_then(|(_, e)| r.from(e, &sname)),
                exitcodes_from: exitcodes.as_ref().and_then(|(_, e)| r.from(e, &sname)),
                stopwait,
                main: false,
            });
        }
        if let Some((false, e)) = stopasgroup {
            let at = r.place(e, &sname);
            r.note(
                ctx,
                e.file,
                Some(&at),
                NoteKind::Approximated,
                "podinit always signals the whole process group (docs/lifecycle.md rule 17)",
            );
        }
        true
    }
}

fn int_of(r: &Reader, ctx: &mut Ctx, e: &Entry, at: &Place, v: &str) -> Option<i64> {
    match v.trim().replace('_', "").parse::<i64>() {
        Ok(n) if n >= 0 || e.key == "priority" => Some(n),
        _ => {
            r.error(ctx, e.file, Some(at), format!("{v:?} is not a whole number"));
            None
        }
    }
}

fn bool_of(r: &Reader, ctx: &mut Ctx, e: &Entry, at: &Place, v: &str) -> Option<bool> {
    let b = truth(v);
    if b.is_none() {
        r.error(ctx, e.file, Some(at), format!("{v:?} is not a boolean (true/false, yes/no, on/off, 1/0)"));
    }
    b
}

/// supervisord's booleans (any case).
fn truth(v: &str) -> Option<bool> {
    match v.trim().to_ascii_lowercase().as_str() {
        "yes" | "true" | "on" | "1" => Some(true),
        "no" | "false" | "off" | "0" => Some(false),
        _ => None,
    }
}

/// Whether `a` and `b` differ by one edit (a typo).
pub(super) fn close(a: &str, b: &str) -> bool {
    let (a, b): (Vec<char>, Vec<char>) = (a.chars().collect(), b.chars().collect());
    if a.len().abs_diff(b.len()) > 1 || a == b {
        return false;
    }
    // Common prefix and suffix: one insertion, deletion or change leaves at
    // most one character out of them; a swap of two neighbours, two.
    let p = a.iter().zip(&b).take_while(|(x, y)| x == y).count();
    let s = a.iter().rev().zip(b.iter().rev()).take_while(|(x, y)| x == y).count();
    let swapped = a.len() == b.len()
        && matches!((a.get(p..p + 2), b.get(p..p + 2)), (Some(x), Some(y)) if x[0] == y[1] && x[1] == y[0])
        && p + 2 + s >= a.len();
    p + s + 1 >= a.len().max(b.len()) || swapped
}
