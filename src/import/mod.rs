//! Other tools' files as podinit pods (docs/import.md, docs/kubernetes.md).
//!
//! Every format is read into one [`draft::Draft`], the podinit.toml it means,
//! and that TOML goes through the same validator as a file written by hand:
//! one model, the same rules and messages. `podinit import` prints the TOML
//! with its comments and reports on stderr what was dropped or approximated;
//! `podinit --config pod.yaml` runs a Kubernetes manifest through the very
//! same reading, with errors placed in the manifest ([`crate::config::locate::Origin`]).
//!
//! - `yaml`: YAML documents as a tree of nodes that know their place;
//! - `draft`: the TOML being written, and where each line came from;
//! - one module per format, each holding its mapping table in one place.
//!
//! The layer reads files but starts nothing.

pub mod compose;
pub mod draft;
pub mod export;
pub mod kubernetes;
pub mod process_compose;
pub mod procfile;
pub mod supervisord;
pub mod yaml;

use std::fmt;
use std::path::{Path, PathBuf};

use crate::config::locate::Place;
use crate::config::{ConfigError, ConfigIssue};

/// A file format podinit reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    /// podinit's own podinit.toml (nothing to import).
    #[value(skip)]
    Toml,
    /// A Kubernetes manifest (YAML or JSON): a Pod or a workload's pod template.
    Kubernetes,
    /// A Compose file (the Compose Specification).
    Compose,
    /// A supervisord.conf.
    Supervisord,
    /// A Procfile (foreman, honcho, overmind, Heroku).
    Procfile,
    /// A process-compose.yaml.
    ProcessCompose,
    /// A YAML or JSON file that is none of the above (`.yaml`, `.yml`,
    /// `.json` without a key that tells).
    #[value(skip)]
    Unknown,
}

impl Format {
    /// The name used on the command line and in messages.
    pub fn name(self) -> &'static str {
        match self {
            Format::Toml => "toml",
            Format::Kubernetes => "kubernetes",
            Format::Compose => "compose",
            Format::Supervisord => "supervisord",
            Format::Procfile => "procfile",
            Format::ProcessCompose => "process-compose",
            Format::Unknown => "unknown",
        }
    }
}

/// The format of the file at `path` with this `text`: by its content first
/// (`apiVersion` and `kind` make a Kubernetes manifest, `services` a Compose
/// file, `processes` a process-compose file, `[program:x]` a
/// supervisord.conf), then by its name (`Procfile*`, `*.toml`). TOML when
/// nothing else fits.
pub fn detect(path: &Path, text: &str) -> Format {
    let name = path.file_name().and_then(|n| n.to_str()).unwrap_or_default().to_ascii_lowercase();
    if name.ends_with(".toml") {
        return Format::Toml;
    }
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let top_keys: Vec<&str> = text
        .lines()
        .filter(|l| !l.starts_with([' ', '\t', '#', '-']) && !l.trim().is_empty())
        .filter_map(|l| l.split_once(':').map(|(k, _)| k.trim().trim_matches('"')))
        .collect();
    let json_key = |k: &str| text.trim_start().starts_with('{') && text.contains(&format!("\"{k}\""));
    let has = |k: &str| top_keys.contains(&k) || json_key(k);
    if has("apiVersion") || has("kind") {
        return Format::Kubernetes;
    }
    let ini = text.lines().any(|l| {
        let t = l.trim();
        t.starts_with("[program:") || t == "[supervisord]" || t == "[include]" || t.starts_with("[group:")
    });
    if ini || name.ends_with(".conf") || name.ends_with(".ini") {
        return Format::Supervisord;
    }
    if name.starts_with("procfile") {
        return Format::Procfile;
    }
    if has("processes") || name.starts_with("process-compose") {
        return Format::ProcessCompose;
    }
    if has("services") || name.contains("compose") {
        return Format::Compose;
    }
    if [".yaml", ".yml", ".json"].iter().any(|ext| name.ends_with(ext)) {
        return Format::Unknown;
    }
    Format::Toml
}

/// What the command line adds to an import.
#[derive(Debug, Clone, Default)]
pub struct ImportOptions {
    /// The format, when the user names it (`--from`).
    pub from: Option<Format>,
    /// Entries that are the mains (`--main`); the others become sidecars.
    pub mains: Vec<String>,
    /// Commands for entries that have none of their own (`--command NAME=CMD`;
    /// CMD is run by `/bin/sh -c`).
    pub commands: Vec<(String, String)>,
    /// Which workload of a multi-document manifest (`--pod`, `PODINIT_POD`).
    pub pod: Option<String>,
    /// Compose profiles to activate (`--profile`).
    pub profiles: Vec<String>,
    /// The TOML is the config podinit runs (not printed for a person): an
    /// entry without a command is an error rather than a commented-out table.
    pub for_run: bool,
}

/// What kind of thing a [`Note`] reports.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NoteKind {
    /// Read, and deliberately without effect in one container (an image, a
    /// volume, a node selector): the reason is given.
    Ignored,
    /// Not carried over: podinit has no such thing.
    Dropped,
    /// Carried over as the closest thing podinit has; the note says how it
    /// differs.
    Approximated,
    /// A choice the importer made that a reader would want to know.
    Decision,
}

impl NoteKind {
    fn word(self) -> &'static str {
        match self {
            NoteKind::Ignored => "ignored",
            NoteKind::Dropped => "dropped",
            NoteKind::Approximated => "approximated",
            NoteKind::Decision => "note",
        }
    }
}

/// One line of an import's report.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Note {
    pub kind: NoteKind,
    pub file: String,
    pub at: Option<Place>,
    pub text: String,
}

impl fmt::Display for Note {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.at {
            Some(p) if p.key.is_empty() => write!(f, "{}:{}:{}: ", self.file, p.line, p.col)?,
            Some(p) => write!(f, "{}:{}:{}: {}: ", self.file, p.line, p.col, p.key)?,
            None => write!(f, "{}: ", self.file)?,
        }
        write!(f, "{}: {}", self.kind.word(), self.text)
    }
}

/// What one importer is given, and what it reports.
pub struct Ctx<'a> {
    /// The file as named on the command line, for messages.
    pub file: String,
    /// The file's directory (for `.env`, `env_file`, `[include]`).
    pub dir: PathBuf,
    pub opts: &'a ImportOptions,
    pub notes: Vec<Note>,
    pub errors: Vec<ConfigIssue>,
}

impl Ctx<'_> {
    /// Records an error at `at` (the import fails, nothing starts).
    pub fn error(&mut self, at: Option<&Place>, message: impl Into<String>) {
        let (line, col, key) = at.map_or((0, 0, String::new()), |p| (p.line, p.col, p.key.clone()));
        self.errors.push(ConfigIssue { file: self.file.clone(), line, col, key, message: message.into() });
    }

    /// Records a note for the report.
    pub fn note(&mut self, kind: NoteKind, at: Option<&Place>, text: impl Into<String>) {
        self.notes.push(Note { kind, file: self.file.clone(), at: at.cloned(), text: text.into() });
    }

    /// The command `--command NAME=CMD` gives `name`, if any.
    pub fn command_for(&self, name: &str) -> Option<&str> {
        self.opts.commands.iter().find(|(n, _)| n == name).map(|(_, c)| c.as_str())
    }
}

/// A file read as a podinit.toml.
#[derive(Debug, Clone)]
pub struct Imported {
    pub format: Format,
    /// The podinit.toml, with comments.
    pub toml: String,
    /// Where each part of `toml` came from.
    pub origin: crate::config::locate::Origin,
    /// What was ignored, dropped, approximated or decided.
    pub notes: Vec<Note>,
}

/// Reads `text` (the file at `path`) as `format` into a podinit.toml.
///
/// # Errors
/// Every error found, each with file:line:col and key: bad syntax, a key the
/// format does not have, a value of the wrong type, a field podinit refuses,
/// and (when `opts.for_run`) an entry with no command.
pub fn import(
    format: Format,
    path: &Path,
    text: &str,
    opts: &ImportOptions,
) -> Result<Imported, ConfigError> {
    let file = path.display().to_string();
    let dir = path.parent().filter(|d| !d.as_os_str().is_empty()).unwrap_or(Path::new(".")).to_owned();
    let mut ctx = Ctx { file: file.clone(), dir, opts, notes: Vec::new(), errors: Vec::new() };
    let draft = match format {
        Format::Kubernetes => kubernetes::read(text, &mut ctx),
        Format::Compose => compose::read(text, &mut ctx),
        Format::Procfile => procfile::read(text, &mut ctx),
        Format::ProcessCompose => process_compose::read(text, &mut ctx),
        Format::Supervisord => supervisord::read(text, &mut ctx),
        Format::Unknown => {
            ctx.error(None, "cannot tell this file's format: no `apiVersion` or `kind` (a Kubernetes manifest), `services` (Compose) or `processes` (process-compose) at its top level; name the format with --from");
            draft::Draft::default()
        }
        Format::Toml => {
            ctx.error(None, "this is podinit's own format already: nothing to import");
            draft::Draft::default()
        }
    };
    // The Compose reader checks `--command` itself: a service its profile
    // leaves out is a note there, not an error.
    if ctx.errors.is_empty() && format != Format::Compose {
        for (name, _) in &opts.commands {
            if !draft.processes.iter().any(|p| p.name() == name || p.name() == entry_name(name)) {
                ctx.error(None, format!("--command {name}=...: no entry of this file is named {name:?}"));
            }
        }
    }
    if ctx.errors.is_empty() {
        if opts.for_run {
            for p in draft.processes.iter().filter(|p| p.commented_out) {
                let why = p.comment.join(" ");
                ctx.error(p.from.as_ref(), why);
            }
        }
        if ctx.errors.is_empty() && draft.processes.iter().all(|p| p.commented_out) {
            ctx.error(None, "nothing is left to run: no entry of this file has a command podinit can start");
        }
    }
    if ctx.errors.is_empty() && matches!(format, Format::Compose | Format::Supervisord) {
        for p in &draft.processes {
            if runs_cron(p.table.get("command")) {
                ctx.note(
                    NoteKind::Decision,
                    p.from.as_ref(),
                    format!("{}: runs a cron daemon: it could be a scheduled entry (role = \"scheduled\"; docs/configuration.md, \"Scheduled entries\"), one per crontab line, each with its own schedule", p.name()),
                );
            }
        }
    }
    if !ctx.errors.is_empty() {
        ctx.errors.sort_by_key(|i| (i.line, i.col));
        return Err(ConfigError(ctx.errors));
    }
    let (toml, origin) = draft.render(&file);
    Ok(Imported { format, toml, origin, notes: ctx.notes })
}

/// The cron daemons an imported entry may run (`crond`, `cron`, BusyBox's
/// `crond` applet, supercronic, go-crond...).
const CRON_DAEMONS: &[&str] =
    &["cron", "crond", "supercronic", "go-crond", "dcron", "fcron", "cronie", "yacron"];

/// Whether a draft's `command` (a list, or a string run by `/bin/sh -c`)
/// starts a cron daemon: its program, after `exec`, `env`, `busybox`,
/// `tini --`, `dumb-init` and `sh -c`, is one of [`CRON_DAEMONS`].
fn runs_cron(command: Option<&draft::Value>) -> bool {
    let words: Vec<String> = match command {
        Some(draft::Value::Str(s)) => split_words(s).unwrap_or_default(),
        Some(draft::Value::List(l)) => l
            .iter()
            .filter_map(|v| if let draft::Value::Str(s) = v { Some(s.clone()) } else { None })
            .collect(),
        _ => return false,
    };
    let mut rest = words.as_slice();
    while let Some((first, tail)) = rest.split_first() {
        let program = first.rsplit('/').next().unwrap_or_default();
        match program {
            "exec" | "env" | "busybox" | "tini" | "dumb-init" | "--" => rest = tail,
            "sh" | "bash" | "ash" | "dash" if tail.first().map(String::as_str) == Some("-c") => {
                return tail.get(1).is_some_and(|script| runs_cron(Some(&draft::Value::Str(script.clone()))));
            }
            _ => return CRON_DAEMONS.contains(&program),
        }
    }
    false
}

/// A YAML scalar as text (numbers and booleans as written), or an error at
/// `at` for a null, a list or a mapping.
pub fn text(v: &yaml::Node, at: &Place, ctx: &mut Ctx) -> Option<String> {
    match &v.value {
        yaml::Value::Scalar { text, .. } if !v.is_null() => Some(text.clone()),
        _ => {
            ctx.error(Some(at), format!("expected a string, found {}", v.kind()));
            None
        }
    }
}

/// A place in an imported file: `at` from the YAML reader and the key path.
pub fn place(at: yaml::Pos, key: impl Into<String>) -> Place {
    Place { line: at.line, col: at.col, key: key.into() }
}

/// An entry name podinit accepts (a DNS label, docs/configuration.md) for a
/// name another tool accepts: lowercase, every other character than a letter,
/// digit or `-` as `-`, no `-` at either end, at most 63 characters; `entry`
/// for a name with nothing left.
pub fn entry_name(raw: &str) -> String {
    let mapped: String =
        raw.chars().map(|c| if c.is_ascii_alphanumeric() { c.to_ascii_lowercase() } else { '-' }).collect();
    let mut name: String = mapped.trim_matches('-').chars().take(63).collect();
    while name.ends_with('-') {
        name.pop();
    }
    if name.is_empty() {
        "entry".to_owned()
    } else {
        name
    }
}

impl Ctx<'_> {
    /// [`entry_name`] of `raw`, with a note when it differs from `raw`.
    pub fn name(&mut self, raw: &str, at: Option<&Place>) -> String {
        let name = entry_name(raw);
        if name != raw {
            self.note(
                NoteKind::Decision,
                at,
                format!("{raw:?} is named {name:?}: podinit names are DNS labels (lowercase letters, digits, '-')"),
            );
        }
        name
    }
}

/// Splits a command line into words as a POSIX shell does, without any
/// expansion (Python's `shlex.split`, which supervisord uses, and the
/// splitting Compose applies to a string `command`): blanks separate words,
/// `'...'` is literal, `"..."` keeps blanks and takes `\` before `"`, `\`, `$`
/// and `` ` ``, and `\` outside quotes keeps the next character.
///
/// # Errors
/// An unclosed quote, or a `\` at the very end.
pub fn split_words(s: &str) -> Result<Vec<String>, String> {
    let mut words = Vec::new();
    let mut word = String::new();
    let mut in_word = false;
    let mut chars = s.chars();
    while let Some(c) = chars.next() {
        match c {
            c if c.is_whitespace() => {
                if in_word {
                    words.push(std::mem::take(&mut word));
                    in_word = false;
                }
            }
            '\'' => {
                in_word = true;
                loop {
                    match chars.next() {
                        Some('\'') => break,
                        Some(c) => word.push(c),
                        None => return Err("a ' is not closed".into()),
                    }
                }
            }
            '"' => {
                in_word = true;
                loop {
                    match chars.next() {
                        Some('"') => break,
                        Some('\\') => match chars.next() {
                            Some(c @ ('"' | '\\' | '$' | '`')) => word.push(c),
                            Some('\n') => {}
                            Some(c) => {
                                word.push('\\');
                                word.push(c);
                            }
                            None => return Err("a \" is not closed".into()),
                        },
                        Some(c) => word.push(c),
                        None => return Err("a \" is not closed".into()),
                    }
                }
            }
            '\\' => {
                in_word = true;
                match chars.next() {
                    Some('\n') => {}
                    Some(c) => word.push(c),
                    None => return Err("a \\ ends the command".into()),
                }
            }
            c => {
                in_word = true;
                word.push(c);
            }
        }
    }
    if in_word {
        words.push(word);
    }
    Ok(words)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn words_split_as_shlex_splits_them() {
        let cases: &[(&str, &[&str])] = &[
            ("nginx -g 'daemon off;'", &["nginx", "-g", "daemon off;"]),
            (r#"sh -c "echo \"hi\" \$HOME""#, &["sh", "-c", r#"echo "hi" $HOME"#]),
            (r"a\ b c", &["a b", "c"]),
            ("  a   ''  b ", &["a", "", "b"]),
            (r#""a\nb""#, &[r"a\nb"]),
        ];
        for (line, want) in cases {
            assert_eq!(split_words(line).unwrap(), *want, "{line}");
        }
        assert!(split_words("echo 'x").is_err());
        assert!(split_words("echo \"x").is_err());
    }

    #[test]
    fn cron_daemons_are_told_by_their_program() {
        let cmd = |s: &str| runs_cron(Some(&draft::Value::Str(s.to_owned())));
        for yes in [
            "crond -f -l 2",
            "/usr/sbin/cron -f",
            "busybox crond -f",
            "exec supercronic /etc/crontab",
            "sh -c 'exec crond -f'",
            "tini -- go-crond",
        ] {
            assert!(cmd(yes), "{yes}");
        }
        for no in ["nginx -g 'daemon off;'", "crontab -l", "echo cron", "sh -c 'echo crond'", ""] {
            assert!(!cmd(no), "{no}");
        }
        let list = draft::Value::List(vec![
            draft::Value::Str("/bin/busybox".into()),
            draft::Value::Str("crond".into()),
        ]);
        assert!(runs_cron(Some(&list)));
    }

    #[test]
    fn names_become_dns_labels() {
        assert_eq!(entry_name("my_service"), "my-service");
        assert_eq!(entry_name("Web.1"), "web-1");
        assert_eq!(entry_name("__"), "entry");
        assert_eq!(entry_name(&"a".repeat(70)).len(), 63);
    }

    #[test]
    fn formats_are_told_by_content_first() {
        let p = Path::new("x.yaml");
        assert_eq!(detect(p, "apiVersion: v1\nkind: Pod\n"), Format::Kubernetes);
        assert_eq!(detect(p, "{\"apiVersion\": \"v1\", \"kind\": \"Pod\"}"), Format::Kubernetes);
        assert_eq!(detect(p, "services:\n  web:\n    image: x\n"), Format::Compose);
        assert_eq!(detect(p, "version: \"0.5\"\nprocesses:\n  a:\n    command: x\n"), Format::ProcessCompose);
        assert_eq!(detect(Path::new("etc/app.conf"), "[program:x]\ncommand=y\n"), Format::Supervisord);
        assert_eq!(detect(Path::new("Procfile"), "web: bundle exec puma\n"), Format::Procfile);
        assert_eq!(detect(Path::new("pod"), "[[process]]\nname = \"a\"\n"), Format::Toml);
        assert_eq!(detect(p, "\u{feff}apiVersion: v1\nkind: Pod\n"), Format::Kubernetes);
        assert_eq!(detect(p, "apiVersion: v1\nmetadata: {}\n"), Format::Kubernetes);
        assert_eq!(detect(p, "servics:\n  a: {}\n"), Format::Unknown);
        assert_eq!(detect(p, "---\n"), Format::Unknown);
    }
}
