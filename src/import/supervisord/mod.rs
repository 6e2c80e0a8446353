//! supervisord.conf (supervisord.org/configuration.html) as a podinit pod.
//!
//! - `ini`: the INI dialect, with the place of every key;
//! - `expand`: `%(name)s` expansions, `environment` lists, shell words;
//! - `program`: one `[program:x]`, its keys read into processes;
//! - `pod`: the processes as the pod: roles, restart policies, the grace
//!   period;
//! - `include`: `[include]`, with the glob supervisord matches files by.
//!
//! This file reads the sections of the file in order (`[supervisord]`,
//! `[group:x]`, and those podinit drops or ignores: `[eventlistener:x]`,
//! `[fcgi-program:x]`, the control server) and holds the types and helpers
//! the others share. Like every reader of `import`, it reads files but
//! starts nothing, and never reads the environment for a value that can be
//! left to the container.
//!
//! The whole mapping of a `[program:x]` is the one `match` in
//! `Program::read`; docs/import.md ("supervisord") has it as a table, and
//! says how the roles are chosen.

pub mod expand;
mod include;
pub mod ini;
mod pod;
mod program;
#[cfg(test)]
mod tests;

use std::path::PathBuf;

use super::draft::{Draft, Table, Value};
use super::{Ctx, Note, NoteKind};
use crate::config::locate::Place;
use crate::config::ConfigIssue;
use expand::{Known, Piece};
use ini::{Entry, Ini, Section};

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
