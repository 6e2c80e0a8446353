//! supervisord.conf (supervisord.org/configuration.html) as a podinit pod.
//!
//! - `ini`: the INI dialect, with the place of every key;
//! - `expand`: `%(name)s` expansions, `environment` lists, shell words.
//!
//! The whole mapping of a `[program:x]` is the one `match` in
//! [`Program::read`]; docs/import.md ("supervisord") has it as a table, and
//! says how the roles are chosen.

pub mod expand;
pub mod ini;

use std::path::{Path, PathBuf};

use super::draft::{Draft, Process, Table, Value};
use super::{split_words, Ctx, Note, NoteKind};
use crate::config::locate::Place;
use crate::config::ConfigIssue;
use expand::{Known, Piece};
use ini::{Entry, Ini, Section};

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

/// Reads a supervisord.conf, and the files its `[include]` names, into the
/// pod it describes.
pub fn read(text: &str, ctx: &mut Ctx) -> Draft {
    let mut r = Reader { ini: Ini::default(), dirs: Vec::new() };
    let main_dir = std::path::absolute(&ctx.dir).unwrap_or_else(|_| ctx.dir.clone());
    r.dirs.push(main_dir.clone());
    if let Err(errors) = r.ini.read(&ctx.file.clone(), text) {
        r.syntax_errors(ctx, errors);
        return Draft::default();
    }
    let include_at = r.include(ctx, &main_dir);
    let mut globals = Globals::default();
    let mut programs: Vec<Program> = Vec::new();
    let mut groups: Vec<(String, i64, Vec<String>)> = Vec::new();
    let mut seen_supervisord = false;
    for (i, sec) in r.ini.sections.iter().enumerate() {
        let (kind, name) = sec.name.split_once(':').map_or((sec.name.as_str(), ""), |(k, n)| (k, n));
        let at = r.sec_place(sec);
        match kind {
            "supervisord" => {
                seen_supervisord = true;
                globals.read(&r, ctx, sec);
            }
            "include" => {}
            "unix_http_server" | "inet_http_server" | "supervisorctl" | "rpcinterface" | "ctlplugin" => r.note(
                ctx,
                sec.file,
                Some(&at),
                NoteKind::Ignored,
                format!(
                    "[{}]: supervisord's control server and client; podinit has its own (`podinit status`, the status socket, docs/control.md)",
                    sec.name
                ),
            ),
            "program" => programs.push(Program { section: i, name: name.trim().to_owned(), ..Program::default() }),
            "group" => {
                let programs_entry = r.ini.get(sec, "programs");
                let list = programs_entry.map(|e| e.value.split(',').map(|p| p.trim().to_owned()).collect());
                let priority = r.ini.get(sec, "priority").and_then(|e| r.int(ctx, e, &sec.name)).unwrap_or(999);
                for e in sec.entries.iter().filter(|e| !matches!(e.key.as_str(), "programs" | "priority")) {
                    let p = r.place(e, &sec.name);
                    r.note(ctx, e.file, Some(&p), NoteKind::Ignored, "supervisord does not know this key of a [group:x]; it ignores it");
                }
                match list {
                    Some(list) => groups.push((name.trim().to_owned(), priority, list)),
                    None => r.error(ctx, sec.file, Some(&at), format!("[{}] has no `programs`", sec.name)),
                }
            }
            "eventlistener" => r.note(
                ctx,
                sec.file,
                Some(&at),
                NoteKind::Dropped,
                format!("[{}]: podinit has no event notification protocol for a listener to read", sec.name),
            ),
            "fcgi-program" => r.note(
                ctx,
                sec.file,
                Some(&at),
                NoteKind::Dropped,
                format!("[{}]: podinit does not open a FastCGI socket for a program to inherit", sec.name),
            ),
            _ => r.note(
                ctx,
                sec.file,
                Some(&at),
                NoteKind::Ignored,
                format!("[{}]: supervisord ignores a section it does not know", sec.name),
            ),
        }
    }
    if !seen_supervisord {
        ctx.note(
            NoteKind::Decision,
            None,
            "no [supervisord] section: supervisord refuses such a file on its own; read as a file an [include] would bring in",
        );
    }
    // Heterogeneous groups first, then each program its own group, both in
    // the order of the file (supervisord sorts them by priority, stably).
    for (gi, (gname, gprio, list)) in groups.iter().enumerate() {
        for (li, pname) in list.iter().enumerate() {
            match programs.iter_mut().find(|p| &p.name == pname) {
                Some(p) => {
                    p.group = Some((gname.clone(), *gprio, gi, li));
                }
                None => {
                    let sec = r.ini.section(&format!("group:{gname}"));
                    let e = sec.and_then(|s| s.get("programs"));
                    let at = e.map(|e| r.place(e, &format!("group:{gname}")));
                    r.error(
                        ctx,
                        e.map_or(0, |e| e.file),
                        at.as_ref(),
                        format!("[group:{gname}] names unknown program {pname:?}"),
                    );
                }
            }
        }
    }
    let mut procs: Vec<Proc> = Vec::new();
    let mut not_started = Vec::new();
    for (pi, p) in programs.iter_mut().enumerate() {
        if !p.read(&r, ctx, &globals, groups.len() + pi, &mut procs) {
            not_started.push(p.name.clone());
        }
    }
    if !not_started.is_empty() {
        globals.not_started = Some(not_started.join(", "));
    }
    if !ctx.errors.is_empty() {
        return Draft::default();
    }
    procs.sort_by_key(|p| p.order);
    if procs.is_empty() {
        let why = match &include_at {
            Some((file, at)) => {
                r.error(ctx, *file, Some(at), "nothing is left to run: no [program:x] here, nor in the files this [include] brings in, starts by itself");
                return Draft::default();
            }
            None => "nothing is left to run: no [program:x] of this file starts by itself",
        };
        ctx.error(None, why);
        return Draft::default();
    }
    r.draft(ctx, &globals, procs)
}

struct Reader {
    ini: Ini,
    /// The directory of each file read (absolute), for `%(here)s`.
    dirs: Vec<PathBuf>,
}

impl Reader {
    fn place(&self, e: &Entry, section: &str) -> Place {
        Place { line: e.line, col: e.col, key: format!("{section}.{}", e.key) }
    }

    fn sec_place(&self, s: &Section) -> Place {
        Place { line: s.line, col: s.col, key: format!("[{}]", s.name) }
    }

    /// A place to record in the draft: only for the file imported (the TOML's
    /// origin map names one file).
    fn from(&self, e: &Entry, section: &str) -> Option<Place> {
        (e.file == 0).then(|| self.place(e, section))
    }

    fn error(&self, ctx: &mut Ctx, file: usize, at: Option<&Place>, message: impl Into<String>) {
        if file == 0 {
            ctx.error(at, message);
        } else {
            let (line, col, key) = at.map_or((0, 0, String::new()), |p| (p.line, p.col, p.key.clone()));
            ctx.errors.push(ConfigIssue {
                file: self.ini.files[file].clone(),
                line,
                col,
                key,
                message: message.into(),
            });
        }
    }

    fn note(&self, ctx: &mut Ctx, file: usize, at: Option<&Place>, kind: NoteKind, text: impl Into<String>) {
        if file == 0 {
            ctx.note(kind, at, text);
        } else {
            ctx.notes.push(Note {
                kind,
                file: self.ini.files[file].clone(),
                at: at.cloned(),
                text: text.into(),
            });
        }
    }

    fn syntax_errors(&self, ctx: &mut Ctx, errors: Vec<ini::SyntaxError>) {
        for (file, line, col, message) in errors {
            let at = Place { line, col, key: String::new() };
            self.error(ctx, file, Some(&at), message);
        }
    }

    /// `[include] files`: each pattern relative to the imported file's
    /// directory, its matches read in sorted order (supervisord.org
    /// configuration.html, "[include] Section Values"). A pattern that
    /// matches nothing is reported, as supervisord warns and goes on.
    /// Returns where `files` is, when there is one.
    fn include(&mut self, ctx: &mut Ctx, main_dir: &Path) -> Option<(usize, Place)> {
        let sec = self.ini.section("include")?.clone();
        let Some(e) = sec.get("files") else {
            let at = self.sec_place(&sec);
            self.error(ctx, sec.file, Some(&at), "[include] has no `files`");
            return None;
        };
        let at = self.place(e, "include");
        if e.file != 0 {
            self.note(
                ctx,
                e.file,
                Some(&at),
                NoteKind::Ignored,
                "supervisord reads the [include] of the first file only",
            );
            return None;
        }
        let lookup = section_names(main_dir.display().to_string());
        let pieces = match expand::expand(&e.value, &lookup, "here, host_node_name, ENV_*") {
            Ok(p) => p,
            Err(bad) => {
                let (line, col) = e.place_of(bad.offset);
                self.error(ctx, 0, Some(&Place { line, col, key: at.key.clone() }), bad.message);
                return None;
            }
        };
        let files = self.now_value(ctx, e, &at, &pieces)?;
        for pattern in files.split_whitespace() {
            let full = main_dir.join(pattern);
            let found = glob(&full);
            if found.is_empty() {
                self.note(
                    ctx,
                    0,
                    Some(&at),
                    NoteKind::Ignored,
                    format!(
                        "no file matches {:?} on this machine (supervisord warns the same and goes on)",
                        full.display()
                    ),
                );
            }
            for f in found {
                let Ok(text) = std::fs::read_to_string(&f) else { continue };
                let name = f.display().to_string();
                self.dirs.push(f.parent().map(Path::to_path_buf).unwrap_or_default());
                self.note(
                    ctx,
                    0,
                    Some(&at),
                    NoteKind::Decision,
                    format!("included {name} (as read on this machine)"),
                );
                if let Err(errors) = self.ini.read(&name, &text) {
                    self.syntax_errors(ctx, errors);
                }
            }
        }
        Some((0, at))
    }

    /// A value that must be known now (a name, a number, a user): a
    /// `%(ENV_X)s` in it is read from this machine's environment, with a note.
    fn now_value(&self, ctx: &mut Ctx, e: &Entry, at: &Place, pieces: &[Piece]) -> Option<String> {
        let mut s = String::new();
        for p in pieces {
            match p {
                Piece::Text(t) => s.push_str(t),
                Piece::Env(v) => match std::env::var(v) {
                    Ok(val) => {
                        self.note(
                            ctx,
                            e.file,
                            Some(at),
                            NoteKind::Decision,
                            format!("%(ENV_{v})s is read from this machine's environment: the importer needs this value now"),
                        );
                        s.push_str(&val);
                    }
                    Err(_) => {
                        self.note(
                            ctx,
                            e.file,
                            Some(at),
                            NoteKind::Approximated,
                            format!("%(ENV_{v})s: {v} is not set on this machine, and this value is needed when importing: written as if the key were not there (supervisord's default); set {v} when importing to use its value"),
                        );
                        return None;
                    }
                },
            }
        }
        Some(s)
    }

    fn int(&self, ctx: &mut Ctx, e: &Entry, section: &str) -> Option<i64> {
        match e.value.trim().replace('_', "").parse::<i64>() {
            Ok(n) => Some(n),
            Err(_) => {
                let at = self.place(e, section);
                self.error(ctx, e.file, Some(&at), format!("{:?} is not an integer", e.value));
                None
            }
        }
    }

    fn draft(&self, ctx: &mut Ctx, globals: &Globals, mut procs: Vec<Proc>) -> Draft {
        let mut d = Draft::default();
        d.comment
            .push(format!("Imported from the supervisord configuration {} by `podinit import`.", ctx.file));
        d.comment.push(
            "Programs are in supervisord's start order (priority, lowest first). Sidecars start one".into(),
        );
        d.comment.push(
            "after another, then the mains; on SIGTERM the mains stop first, then the sidecars in".into(),
        );
        d.comment
            .push("reverse order, as supervisord stops the highest priority first (docs/import.md).".into());
        // Roles.
        if ctx.opts.mains.is_empty() {
            // A program supervisord restarts after every exit is a sidecar;
            // the others are mains with their own restart policy. The last
            // one restarted after every exit is a main too, so that the pod
            // runs until it is stopped, as supervisord does.
            let last_always = procs.iter().rposition(|p| p.restart == Restart::Always);
            for (i, p) in procs.iter_mut().enumerate() {
                p.main = p.restart != Restart::Always || Some(i) == last_always;
            }
        } else {
            for m in &ctx.opts.mains {
                let mut any = false;
                for p in procs.iter_mut().filter(|p| &p.name == m || &p.raw_name == m || &p.program == m) {
                    p.main = true;
                    any = true;
                }
                if !any {
                    ctx.error(None, format!("--main {m}: no program of this file has that name"));
                }
            }
        }
        // Termination: supervisord stops one group after another, each
        // given up to its stopwaitsecs; its worst case is their sum.
        let mut per_group: Vec<(usize, i64)> = Vec::new();
        for p in &procs {
            match per_group.iter_mut().find(|(g, _)| *g == p.group_seq) {
                Some((_, w)) => *w = (*w).max(p.stopwait),
                None => per_group.push((p.group_seq, p.stopwait)),
            }
        }
        let grace: i64 = per_group.iter().map(|(_, w)| *w).sum();
        d.pod
            .set("termination_grace_period", Value::Str(format!("{grace}s")), None)
            .note("supervisord stops one group after another, each up to its stopwaitsecs (10 s when")
            .note("not written); this is their sum, as one budget for the whole stop.");
        if let Some(names) = &globals.not_started {
            d.comment.push(String::new());
            d.comment.push(format!(
                "Not imported (autostart=false, started only by `supervisorctl start`): {names}."
            ));
        }
        for p in procs {
            let role = if p.main { "main" } else { "sidecar" };
            let mut proc = Process::new(&p.name, role, p.from.as_ref());
            proc.comment.push(format!(
                "[{}]{}: priority {}, autorestart={}",
                p.section,
                if p.num_of > 1 { format!(" process {}", p.num) } else { String::new() },
                p.priority,
                p.restart.word()
            ));
            proc.table.set("command", p.command, p.command_from.as_ref());
            if !p.env.is_empty() {
                proc.table.set("env", Value::Table(p.env), None);
            }
            if let Some((dir, from)) = p.dir {
                proc.table.set("working_dir", dir, from.as_ref());
            }
            if let Some((user, from)) = p.user {
                proc.table.set("user", user, from.as_ref());
            }
            if let Some((sig, from)) = p.stop_signal {
                proc.table.set("stop_signal", sig, from.as_ref());
            }
            if p.main {
                let from = p.restart_from.as_ref();
                match &p.restart {
                    Restart::Always => {
                        proc.table.set("restart_policy", "Always", from);
                    }
                    Restart::Never => {
                        proc.table.set("restart_policy", "Never", from);
                    }
                    Restart::Unexpected(codes) if codes.as_slice() == [0] => {
                        proc.table.set("restart_policy", "OnFailure", from);
                    }
                    Restart::Unexpected(codes) => {
                        proc.table.set("restart_policy", "Never", from);
                        let mut exit = Table::default();
                        exit.set("operator", "not_in", None);
                        exit.set("values", Value::List(codes.iter().map(|c| Value::Int(*c)).collect()), None);
                        let mut rule = Table::default();
                        rule.set("action", "restart", None);
                        rule.set("exit_codes", exit, None);
                        proc.table
                            .set(
                                "restart_rules",
                                Value::List(vec![Value::Table(rule)]),
                                p.exitcodes_from.as_ref(),
                            )
                            .note("autorestart=unexpected: restarted unless it exits with one of exitcodes");
                    }
                }
            } else if p.restart != Restart::Always {
                let at = p.restart_from.clone().or(p.from.clone());
                self.note(
                    ctx,
                    p.file,
                    at.as_ref(),
                    NoteKind::Approximated,
                    format!(
                        "{} is a sidecar (not named by --main): podinit restarts it after every exit, where supervisord's autorestart={} would not",
                        p.name,
                        p.restart.word()
                    ),
                );
            }
            d.processes.push(proc);
        }
        d
    }
}

/// What `[supervisord]` gives every program.
#[derive(Default)]
struct Globals {
    /// `environment`, already expanded (supervisord.org configuration.html,
    /// "[supervisord] Section Values": its variables reach every program, and
    /// are `%(ENV_X)s` names too).
    env: Vec<(String, Vec<Piece>, Option<Place>)>,
    /// `user`: supervisord switches to this user, so the programs run as it.
    user: Option<(String, Option<Place>)>,
    /// Programs with autostart=false, for the TOML's comment.
    not_started: Option<String>,
}

impl Globals {
    fn read(&mut self, r: &Reader, ctx: &mut Ctx, sec: &Section) {
        for e in &sec.entries {
            let at = r.place(e, "supervisord");
            match e.key.as_str() {
                "environment" => {
                    let lookup = section_names(r.dirs[e.file].display().to_string());
                    let pieces = match expand::expand(&e.value, &lookup, "here, host_node_name, ENV_*") {
                        Ok(p) => p,
                        Err(bad) => {
                            let (line, col) = e.place_of(bad.offset);
                            r.error(ctx, e.file, Some(&Place { line, col, key: at.key.clone() }), bad.message);
                            continue;
                        }
                    };
                    let (text, vars) = expand::marked(&pieces);
                    match expand::key_values(&text) {
                        Ok(kv) => self.env.extend(
                            kv.into_iter().map(|(k, v)| (k, expand::unmarked(&v, &vars), r.from(e, "supervisord"))),
                        ),
                        Err(m) => r.error(ctx, e.file, Some(&at), m),
                    }
                }
                "user" => {
                    let lookup = |name: &str| match name {
                        "here" => Some(Known::Str(r.dirs[e.file].display().to_string())),
                        n => n.strip_prefix("ENV_").map(|v| Known::Later(v.to_owned())),
                    };
                    if let Some(u) = expand_now(r, ctx, e, &at, &lookup, "here, ENV_*") {
                        r.note(ctx, e.file, Some(&at), NoteKind::Decision, "supervisord runs as this user, and so do its programs: it is the `user` of every program that has none");
                        self.user = Some((u, r.from(e, "supervisord")));
                    }
                }
                "nodaemon" | "silent" | "logfile" | "logfile_maxbytes" | "logfile_backups" | "loglevel" | "pidfile"
                | "umask" | "minfds" | "minprocs" | "nocleanup" | "childlogdir" | "directory" | "strip_ansi"
                | "identifier" => r.note(
                    ctx,
                    e.file,
                    Some(&at),
                    NoteKind::Ignored,
                    "a setting of the supervisord daemon itself; podinit runs in the foreground, writes its log on stderr and keeps no pidfile",
                ),
                _ => r.note(ctx, e.file, Some(&at), NoteKind::Ignored, "supervisord does not know this key of [supervisord]; it ignores it"),
            }
        }
    }
}

/// Expands `e` with `lookup` into a value needed now (see [`Reader::now_value`]).
fn expand_now(
    r: &Reader,
    ctx: &mut Ctx,
    e: &Entry,
    at: &Place,
    lookup: &dyn Fn(&str) -> Option<Known>,
    names: &str,
) -> Option<String> {
    match expand::expand(&e.value, lookup, names) {
        Ok(p) => r.now_value(ctx, e, at, &p),
        Err(bad) => {
            let (line, col) = e.place_of(bad.offset);
            r.error(ctx, e.file, Some(&Place { line, col, key: at.key.clone() }), bad.message);
            None
        }
    }
}

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

/// `autorestart` (supervisord.org configuration.html).
#[derive(Debug, Clone, PartialEq, Eq)]
enum Restart {
    /// `true`: after every exit.
    Always,
    /// `false`: never.
    Never,
    /// `unexpected` (the default): unless the exit code is one of `exitcodes`.
    Unexpected(Vec<i64>),
}

impl Restart {
    fn word(&self) -> &'static str {
        match self {
            Restart::Always => "true",
            Restart::Never => "false",
            Restart::Unexpected(_) => "unexpected",
        }
    }
}

/// One `[program:x]`.
#[derive(Default)]
struct Program {
    section: usize,
    name: String,
    /// Its `[group:x]`: name, priority, index among the groups, index in
    /// the group's `programs`.
    group: Option<(String, i64, usize, usize)>,
}

/// One process of a program, ready to be written.
struct Proc {
    order: (i64, usize, i64, usize, i64),
    group_seq: usize,
    name: String,
    raw_name: String,
    program: String,
    section: String,
    file: usize,
    num: i64,
    num_of: i64,
    priority: i64,
    from: Option<Place>,
    command: Value,
    command_from: Option<Place>,
    env: Table,
    dir: Option<(String, Option<Place>)>,
    user: Option<(String, Option<Place>)>,
    stop_signal: Option<(Value, Option<Place>)>,
    restart: Restart,
    restart_from: Option<Place>,
    exitcodes_from: Option<Place>,
    stopwait: i64,
    main: bool,
}

impl Program {
    /// Reads the program's keys (the mapping table: one row per key) and
    /// adds its processes to `procs`; false for a program with
    /// autostart=false, which is not imported.
    fn read(
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
                super::entry_name(&raw_name)
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
fn close(a: &str, b: &str) -> bool {
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

/// `%(host_node_name)s`: this machine's name (the container's would be
/// known only where it runs).
/// The names a `%(name)s` may use outside `[program:x]` (in `[include]`
/// and `[supervisord]`): `here` (the directory of the file, `here`),
/// `host_node_name`, and `ENV_X`, left to the container.
fn section_names(here: String) -> impl Fn(&str) -> Option<Known> {
    move |name: &str| match name {
        "here" => Some(Known::Str(here.clone())),
        "host_node_name" => Some(Known::Str(host_name())),
        n => n.strip_prefix("ENV_").map(|v| Known::Later(v.to_owned())),
    }
}

fn host_name() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname").map(|s| s.trim().to_owned()).unwrap_or_default()
}

/// The files that match `pattern` (`*`, `?`, `[...]` in any component, as
/// Python's `glob`; a name starting with `.` only by a pattern that does),
/// sorted.
fn glob(pattern: &Path) -> Vec<PathBuf> {
    let mut found = vec![PathBuf::new()];
    for comp in pattern.components() {
        let part = comp.as_os_str().to_string_lossy().into_owned();
        let wild = part.contains(['*', '?', '[']);
        let mut next = Vec::new();
        for base in &found {
            if !wild {
                next.push(base.join(&part));
                continue;
            }
            let dir = if base.as_os_str().is_empty() { Path::new(".") } else { base.as_path() };
            let Ok(rd) = std::fs::read_dir(dir) else { continue };
            for entry in rd.flatten() {
                let name = entry.file_name().to_string_lossy().into_owned();
                if (!name.starts_with('.') || part.starts_with('.')) && fnmatch(&part, &name) {
                    next.push(base.join(&name));
                }
            }
        }
        found = next;
    }
    let mut files: Vec<PathBuf> = found.into_iter().filter(|p| p.is_file()).collect();
    files.sort();
    files
}

/// Shell-style matching of one name: `*`, `?`, `[abc]`, `[a-z]`, `[!x]`.
fn fnmatch(pattern: &str, name: &str) -> bool {
    let p: Vec<char> = pattern.chars().collect();
    let n: Vec<char> = name.chars().collect();
    fn at(p: &[char], n: &[char]) -> bool {
        match p.first() {
            None => n.is_empty(),
            Some('*') => (0..=n.len()).any(|i| at(&p[1..], &n[i..])),
            Some('?') => !n.is_empty() && at(&p[1..], &n[1..]),
            Some('[') => {
                let Some(close) = p.iter().skip(2).position(|c| *c == ']').map(|i| i + 2) else {
                    return n.first() == Some(&'[') && at(&p[1..], &n[1..]);
                };
                let Some(c) = n.first() else { return false };
                let (neg, set) = match p[1] {
                    '!' => (true, &p[2..close]),
                    _ => (false, &p[1..close]),
                };
                let mut hit = false;
                let mut i = 0;
                while i < set.len() {
                    if i + 2 < set.len() && set[i + 1] == '-' {
                        hit |= (set[i]..=set[i + 2]).contains(c);
                        i += 3;
                    } else {
                        hit |= set[i] == *c;
                        i += 1;
                    }
                }
                hit != neg && at(&p[close + 1..], &n[1..])
            }
            Some(c) => n.first() == Some(c) && at(&p[1..], &n[1..]),
        }
    }
    at(&p, &n)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::import::{import, Format, ImportOptions, Imported};

    fn imp(text: &str, opts: &ImportOptions) -> Imported {
        import(Format::Supervisord, Path::new("t.conf"), text, opts).unwrap_or_else(|e| panic!("{e:?}"))
    }

    fn procs(i: &Imported) -> Vec<toml::Value> {
        let t: toml::Table = toml::from_str(&i.toml).unwrap_or_else(|e| panic!("{e}\n{}", i.toml));
        t["process"].as_array().unwrap().clone()
    }

    #[test]
    fn roles_and_restarts_follow_autorestart_in_priority_order() {
        let i = imp(
            "[program:d]\ncommand=d\nautorestart=true\npriority=4\n[program:c]\ncommand=c\nexitcodes=0,3\npriority=3\n\
             [program:b]\ncommand=b\nautorestart=false\npriority=2\n[program:a]\ncommand=a\nautorestart=true\npriority=1\n",
            &ImportOptions::default(),
        );
        let p = procs(&i);
        let got: Vec<(&str, &str, Option<&str>)> = p
            .iter()
            .map(|p| {
                (
                    p["name"].as_str().unwrap(),
                    p["role"].as_str().unwrap(),
                    p.get("restart_policy").and_then(|v| v.as_str()),
                )
            })
            .collect();
        assert_eq!(
            got,
            [
                ("a", "sidecar", None),
                ("b", "main", Some("Never")),
                ("c", "main", Some("Never")),
                ("d", "main", Some("Always"))
            ]
        );
        let rule = &p[2]["restart_rules"][0];
        assert_eq!(rule["exit_codes"]["operator"].as_str(), Some("not_in"));
        assert_eq!(rule["exit_codes"]["values"].as_array().unwrap().len(), 2);
        assert!(i.toml.contains("termination_grace_period = \"40s\""), "{}", i.toml);
    }

    #[test]
    fn a_group_orders_its_programs_by_its_own_priority() {
        let i = imp(
            "[program:x]\ncommand=x\npriority=5\n[program:y]\ncommand=y\npriority=5\n[program:z]\ncommand=z\npriority=2\n\
             [group:g]\nprograms=y,x\npriority=1\n",
            &ImportOptions::default(),
        );
        let names: Vec<String> = procs(&i).iter().map(|p| p["name"].as_str().unwrap().to_owned()).collect();
        assert_eq!(names, ["y", "x", "z"]);
    }

    #[test]
    fn environment_is_layered_and_unknown_variables_are_left_to_the_shell() {
        let i = imp(
            "[supervisord]\nenvironment=A=1,B=2\n[program:p]\ncommand=/bin/app --home %(ENV_HOME_XYZ_UNSET)s 'a b'\n\
             environment=B=3,C=\"x,y\",D=%(ENV_A)s\n",
            &ImportOptions::default(),
        );
        let p = &procs(&i)[0];
        let env = p["env"].as_table().unwrap();
        let env: Vec<(&str, &str)> = env.iter().map(|(k, v)| (k.as_str(), v.as_str().unwrap())).collect();
        assert_eq!(env, [("A", "1"), ("B", "3"), ("C", "x,y"), ("D", "1")]);
        assert_eq!(p["command"].as_str(), Some(r#"exec /bin/app --home "${HOME_XYZ_UNSET?}" 'a b'"#));
    }

    #[test]
    fn keys_and_sections_supervisord_ignores_are_reported() {
        let i = imp("[program:p]\ncommand=p\nautorestrt=true\n[foo]\nx=1\n", &ImportOptions::default());
        let notes: Vec<String> = i.notes.iter().map(ToString::to_string).collect();
        assert!(
            notes
                .iter()
                .any(|n| n.starts_with("t.conf:3:1: program:p.autorestrt: ignored:")
                    && n.contains("autorestart")),
            "{notes:#?}"
        );
        assert!(notes.iter().any(|n| n.starts_with("t.conf:4:1: [foo]: ignored")), "{notes:#?}");
    }

    #[test]
    fn a_program_without_a_command_is_an_error_at_its_section() {
        let e = import(
            Format::Supervisord,
            Path::new("t.conf"),
            "\n[program:p]\nuser=x\n",
            &ImportOptions::default(),
        )
        .unwrap_err();
        assert_eq!((e.0[0].line, e.0[0].col), (2, 1), "{e:?}");
    }

    #[test]
    fn names_match_as_glob_matches_them() {
        assert!(fnmatch("*.conf", "web.conf"));
        assert!(!fnmatch("*.conf", "web.ini"));
        assert!(fnmatch("w?b.[ch]onf", "web.conf"));
        assert!(fnmatch("[!x]*", "abc"));
        assert!(!fnmatch("[a-c]x", "dx"));
    }

    #[test]
    fn typos_are_one_edit_away() {
        assert!(close("autorestart", "autorestrt"));
        assert!(close("command", "comand"));
        assert!(close("priority", "priorty"));
        assert!(close("startsecs", "startsces"));
        assert!(!close("command", "directory"));
    }
}
