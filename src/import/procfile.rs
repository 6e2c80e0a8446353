//! Procfiles, as foreman, honcho and Heroku read them (docs/import.md,
//! "Procfile"), with the `.env` beside them.
//!
//! A Procfile is one `NAME: COMMAND` per line (devcenter.heroku.com/articles/procfile;
//! the line format of foreman's and honcho's READMEs: NAME is letters, digits,
//! `_` and `-`, starting at the beginning of the line). Both tools run every
//! command with `/bin/sh -c`, all at once, give each process type a `PORT`, and
//! stop everything as soon as the first process exits. The mapping:
//!
//! | Procfile | podinit |
//! |---|---|
//! | `NAME: COMMAND` | one `[[process]]`, `name` = NAME as a DNS label, `command` = COMMAND as a string (`/bin/sh -c`) |
//! | every process type | `role = "main"`, `[pod] completion = "any"` (the pod ends when the first exits) |
//! | `--main NAME` | those are the mains, the others `role = "sidecar"` |
//! | `release` (Heroku's release phase) | `role = "init"`: runs to completion before the others |
//! | `PORT` (5000, 5100, ... by place; from `PORT` of `.env` when it has one) | `env = { PORT = "..." }` |
//! | `.env` beside the Procfile | `env_file = ".env"` on every entry |
//! | the 5 s foreman and honcho wait before SIGKILL | `[pod] termination_grace_period = "5s"` |

use std::path::Path;

use super::draft::{Draft, Process, Table, Value};
use super::{Ctx, Note, NoteKind};
use crate::config::locate::Place;
use crate::config::ConfigIssue;

/// The name of Heroku's release phase process type
/// (devcenter.heroku.com/articles/release-phase).
pub const RELEASE: &str = "release";

/// The first `PORT` foreman and honcho give (their `--port` default), and the
/// step between process types.
pub const BASE_PORT: u16 = 5000;
/// See [`BASE_PORT`].
pub const PORT_STEP: u16 = 100;

/// Seconds foreman (`--timeout`) and honcho wait between SIGTERM and SIGKILL.
pub const KILL_WAIT_SECS: u64 = 5;

/// The environment file foreman and honcho read beside the Procfile.
pub const ENV_FILE: &str = ".env";

/// One `NAME: COMMAND` line.
struct Line {
    raw_name: String,
    command: String,
    /// Where the name is (col 1).
    at: Place,
    /// Where the command begins.
    command_at: Place,
}

/// Reads a Procfile into the pod it describes.
///
/// Errors (each at its line and column): a line that is neither a comment,
/// blank, nor `NAME: COMMAND` (foreman and honcho skip such a line without a
/// word, so a typo would lose a process), a process type without a command, a
/// name given twice (or two names that are one DNS label), a `--main` that
/// names no process type or names `release`, and a `.env` podinit cannot read.
pub fn read(text: &str, ctx: &mut Ctx) -> Draft {
    let lines = parse(text, ctx);
    let mut draft = Draft::default();
    if !ctx.errors.is_empty() {
        return draft;
    }
    let names: Vec<String> = lines.iter().map(|l| ctx.name(&l.raw_name, Some(&l.at))).collect();
    for (i, name) in names.iter().enumerate() {
        if let Some(j) = names[..i].iter().position(|n| n == name) {
            let msg = format!(
                "{:?} and {:?} (line {}) are both named {name:?} in podinit (names are DNS labels): rename one",
                lines[i].raw_name, lines[j].raw_name, lines[j].at.line
            );
            ctx.error(Some(&lines[i].at), msg);
        }
    }
    if let Some(release) = lines.iter().find(|l| l.raw_name == RELEASE) {
        if lines.len() == 1 {
            ctx.error(
                Some(&release.at),
                "only the release phase: nothing would run after it (release is an init task)",
            );
        }
    }
    let mains = mains(&lines, &names, ctx);
    let (env_file, base_port) = env_file(&ctx.dir.clone(), ctx);
    if !ctx.errors.is_empty() {
        return draft;
    }

    draft.comment.push(format!("Imported from the Procfile {} by `podinit import`.", ctx.file));
    draft.comment.push(if mains.is_none() {
        "Every process type is a main (release aside), and the pod ends when the first one exits, as foreman and honcho run them."
            .to_owned()
    } else {
        "The mains were named with --main: the others are sidecars, started first and restarted whenever they exit."
            .to_owned()
    });
    draft.comment.push(format!(
        "PORT is set as foreman and honcho set it: {base_port} ({}) + {PORT_STEP} x the process type's place in the Procfile; it wins over a PORT of podinit's environment.",
        if base_port == u64::from(BASE_PORT) { "their default" } else { "the PORT of .env" }
    ));
    if env_file.is_some() {
        draft.comment.push(format!(
            "{ENV_FILE} is read by every entry (env_file is relative to this file's directory: keep it beside the Procfile)."
        ));
    }
    draft
        .pod
        .set("completion", "any", None)
        .note("foreman and honcho stop every process once the first one exits");
    draft
        .pod
        .set(
            "termination_grace_period",
            Value::duration(std::time::Duration::from_secs(KILL_WAIT_SECS)),
            None,
        )
        .note("foreman and honcho send SIGKILL 5 s after SIGTERM");

    for (i, (line, name)) in lines.iter().zip(&names).enumerate() {
        let role = if line.raw_name == RELEASE {
            "init"
        } else if mains.as_ref().is_none_or(|m| m.contains(&i)) {
            "main"
        } else {
            "sidecar"
        };
        let mut p = Process::new(name, role, Some(&line.at));
        if role == "init" {
            p.comment.push(
                "Heroku's release phase: runs to completion before the others start (foreman and honcho would run it beside them, and stop them all when it exits)."
                    .to_owned(),
            );
            ctx.note(
                NoteKind::Decision,
                Some(&line.at),
                "release is Heroku's release phase: it runs first, as an init, and the others start once it exits 0",
            );
        }
        if ctx.command_for(&line.raw_name).is_some() || ctx.command_for(name).is_some() {
            ctx.note(
                NoteKind::Ignored,
                Some(&line.at),
                format!("--command {name}=...: {name} has a command of its own"),
            );
        }
        p.table.set("command", line.command.as_str(), Some(&line.command_at));
        if let Some(env_file) = &env_file {
            p.table.set("env_file", env_file.as_str(), Some(&line.at));
        }
        let port = base_port + u64::from(PORT_STEP) * i as u64;
        let mut env = Table::default();
        env.set("PORT", port.to_string(), Some(&line.at));
        p.table.set("env", env, Some(&line.at));
        draft.processes.push(p);
    }
    if env_file.is_some() {
        ctx.note(
            NoteKind::Decision,
            None,
            format!("{ENV_FILE} is read by every entry (env_file, relative to the TOML's directory: keep the TOML beside the Procfile); its values are not copied into the TOML"),
        );
    }
    draft
}

/// The `NAME: COMMAND` lines of `text`, in order; the errors in `ctx`.
fn parse(text: &str, ctx: &mut Ctx) -> Vec<Line> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let mut lines: Vec<Line> = Vec::new();
    for (i, raw) in text.split('\n').enumerate() {
        let line_no = i + 1;
        let line = raw.trim_end();
        let body = line.trim_start();
        if body.is_empty() || body.starts_with('#') {
            continue;
        }
        let here = |col: usize, key: &str| Place { line: line_no, col, key: key.to_owned() };
        if body.len() != line.len() {
            let col = line.chars().count() - body.chars().count() + 1;
            ctx.error(
                Some(&here(col, "")),
                "an indented line: foreman and honcho read an entry only at the start of a line (and skip this one); remove the indentation, or make it a comment with #",
            );
            continue;
        }
        let name_len =
            line.bytes().take_while(|b| b.is_ascii_alphanumeric() || *b == b'_' || *b == b'-').count();
        if name_len == 0 || line.as_bytes().get(name_len) != Some(&b':') {
            let col = line[..name_len].chars().count() + 1;
            ctx.error(
                Some(&here(col, "")),
                "expected NAME: COMMAND, with NAME made of letters, digits, '_' and '-' (foreman and honcho skip any other line, so a typo would lose a process; make a note a comment with #)",
            );
            continue;
        }
        let raw_name = &line[..name_len];
        let after = &line[name_len + 1..];
        let command = after.trim_start();
        let command_col = line.len() - command.len();
        let at = here(1, raw_name);
        if command.is_empty() {
            ctx.error(Some(&at), format!("{raw_name} has no command"));
            continue;
        }
        if let Some(first) = lines.iter().find(|l| l.raw_name == raw_name) {
            let msg =
                format!("{raw_name} is defined twice (first on line {}): honcho refuses this", first.at.line);
            ctx.error(Some(&at), msg);
            continue;
        }
        lines.push(Line {
            raw_name: raw_name.to_owned(),
            command: command.to_owned(),
            command_at: here(line[..command_col].chars().count() + 1, raw_name),
            at,
        });
    }
    lines
}

/// The places of the mains `--main` names (by their Procfile name or their
/// podinit name); `None` when it names none (every process is a main).
fn mains(lines: &[Line], names: &[String], ctx: &mut Ctx) -> Option<Vec<usize>> {
    if ctx.opts.mains.is_empty() {
        return None;
    }
    let mut found = Vec::new();
    for main in &ctx.opts.mains {
        match lines.iter().zip(names).position(|(l, n)| &l.raw_name == main || n == main) {
            Some(i) if lines[i].raw_name == RELEASE => ctx.error(
                Some(&lines[i].at),
                "--main release: release is Heroku's release phase, which runs before the others as an init; it cannot be a main",
            ),
            Some(i) => found.push(i),
            None => {
                let known: Vec<&str> = lines.iter().map(|l| l.raw_name.as_str()).collect();
                ctx.error(None, format!("--main {main}: the Procfile has no such process type (it has {})", known.join(", ")));
            }
        }
    }
    Some(found)
}

/// `env_file` for the entries when a `.env` is beside the Procfile: podinit
/// reads it (docs/configuration.md, `env_file`) as foreman and honcho load it
/// into every process. Its values are not copied into the TOML: a `.env` is
/// where secrets are kept, and it stays the one place to change them. A
/// `.env` podinit cannot read is an error in that file; a line honcho's
/// reading takes differently is a note. Also the first `PORT`: the `.env`'s
/// `PORT` (a number, or honcho refuses it), else [`BASE_PORT`].
fn env_file(dir: &Path, ctx: &mut Ctx) -> (Option<String>, u64) {
    let base = u64::from(BASE_PORT);
    let path = dir.join(ENV_FILE);
    let shown = if dir == Path::new(".") { ENV_FILE.to_owned() } else { path.display().to_string() };
    let text = match std::fs::read(&path) {
        Ok(bytes) => String::from_utf8_lossy(&bytes).into_owned(),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return (None, base),
        Err(e) => {
            ctx.errors.push(issue(&shown, 0, format!("cannot read the .env beside the Procfile: {e}")));
            return (None, base);
        }
    };
    let pairs = match crate::config::envfile::parse(&text) {
        Ok(pairs) => pairs,
        Err(e) => {
            let line = e
                .strip_prefix("line ")
                .and_then(|r| r.split_once(':'))
                .and_then(|(n, _)| n.parse().ok())
                .unwrap_or(0);
            ctx.errors.push(issue(&shown, line, format!("podinit cannot read this .env: {e}")));
            return (None, base);
        }
    };
    let base = match pairs.iter().rev().find(|(k, _)| k == "PORT") {
        None => base,
        Some((_, v)) => match v.parse::<u16>() {
            Ok(port) => u64::from(port),
            Err(_) => {
                let line = text.lines().position(|l| l.trim_start().starts_with("PORT")).map_or(0, |i| i + 1);
                ctx.errors.push(issue(
                    &shown,
                    line,
                    "PORT is not a port number (honcho refuses it too)".into(),
                ));
                base
            }
        },
    };
    for (i, line) in text.lines().enumerate() {
        if let Some(why) = read_differently(line) {
            ctx.notes.push(Note {
                kind: NoteKind::Approximated,
                file: shown.clone(),
                at: Some(Place { line: i + 1, col: 1, key: String::new() }),
                text: why,
            });
        }
    }
    (Some(ENV_FILE.to_owned()), base)
}

fn issue(file: &str, line: usize, message: String) -> ConfigIssue {
    ConfigIssue { file: file.to_owned(), line, col: usize::from(line > 0), key: String::new(), message }
}

/// Why podinit's reading of one `.env` line (Compose's, docs/configuration.md)
/// gives another value than honcho's, if it does. honcho reads each line as
/// shell words (Python's `shlex`): an unquoted `#` starts a comment, blanks
/// between unquoted words are dropped, an empty value sets nothing, quotes inside a value are removed, `\`
/// escapes (and `\n`, `\t` become a newline and a tab), and an `export` line
/// is skipped. Names the variable, never its value.
fn read_differently(line: &str) -> Option<String> {
    let t = line.trim();
    if t.is_empty() || t.starts_with('#') {
        return None;
    }
    if let Some(rest) = t.strip_prefix("export ") {
        let key = rest.split('=').next().unwrap_or_default().trim();
        return Some(format!("{key}: podinit reads an `export` line; honcho skips it"));
    }
    let (key, value) = t.split_once('=')?;
    let key = key.trim();
    let value = value.trim();
    let quoted_by = |q: char| value.len() >= 2 && value.starts_with(q) && value.ends_with(q);
    let why = if quoted_by('\'') {
        None
    } else if quoted_by('"') {
        value.contains('\\').then_some("podinit keeps each `\\` as written; honcho reads it as an escape")
    } else if value.is_empty() {
        Some("podinit sets it to an empty value; honcho leaves it unset")
    } else if value.contains('#') {
        Some("podinit keeps `#...` as part of the value; honcho reads it as a comment")
    } else if value.contains(char::is_whitespace) {
        Some("podinit keeps the blanks in this unquoted value; honcho drops them (quote the value)")
    } else if value.contains(['\\', '"', '\'']) {
        Some("podinit keeps quotes and `\\` inside the value as written; honcho removes them")
    } else {
        None
    };
    why.map(|w| format!("{key}: {w}"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::import::{import, Format, ImportOptions};

    fn run(text: &str, opts: &ImportOptions) -> Result<String, String> {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("Procfile");
        import(Format::Procfile, &path, text, opts).map(|i| i.toml).map_err(|e| e.to_string())
    }

    fn table(text: &str) -> toml::Table {
        toml::from_str(&run(text, &ImportOptions::default()).unwrap()).unwrap()
    }

    #[test]
    fn lines_comments_blanks_and_no_final_newline() {
        let t = table("# a comment\n\nweb: bundle exec puma -p $PORT   \n  # indented comment\r\nworker_1:RAILS_ENV=x sidekiq -q a && echo ok");
        let procs = t["process"].as_array().unwrap();
        assert_eq!(procs.len(), 2);
        assert_eq!(procs[0]["name"].as_str(), Some("web"));
        assert_eq!(procs[0]["command"].as_str(), Some("bundle exec puma -p $PORT"));
        assert_eq!(procs[0]["env"]["PORT"].as_str(), Some("5000"));
        assert_eq!(procs[1]["env"]["PORT"].as_str(), Some("5100"));
        assert_eq!(procs[1]["name"].as_str(), Some("worker-1"));
        assert_eq!(procs[1]["command"].as_str(), Some("RAILS_ENV=x sidekiq -q a && echo ok"));
        assert_eq!(t["pod"]["completion"].as_str(), Some("any"));
        assert!(procs.iter().all(|p| p["role"].as_str() == Some("main")));
    }

    #[test]
    fn release_is_an_init_and_main_names_the_mains() {
        let opts = ImportOptions { mains: vec!["web".into()], ..Default::default() };
        let text = run("web: a\nrelease: m\nclock: c\n", &opts).unwrap();
        let t: toml::Table = toml::from_str(&text).unwrap();
        let roles: Vec<&str> =
            t["process"].as_array().unwrap().iter().map(|p| p["role"].as_str().unwrap()).collect();
        assert_eq!(roles, ["main", "init", "sidecar"]);
    }

    #[test]
    fn bad_lines_are_errors_at_their_place() {
        let cases = [
            ("web: a\nweb.1: b\n", "Procfile:2:4: expected NAME: COMMAND"),
            ("web a\n", "Procfile:1:4: expected NAME: COMMAND"),
            ("  web: a\n", "Procfile:1:3: an indented line"),
            ("web:   \n", "Procfile:1:1: web: web has no command"),
            ("web: a\nweb: b\n", "Procfile:2:1: web: web is defined twice (first on line 1)"),
            ("web_x: a\nweb-x: b\n", "Procfile:2:1: web-x: \"web-x\" and \"web_x\" (line 1) are both named"),
        ];
        for (text, want) in cases {
            let err = run(text, &ImportOptions::default()).unwrap_err();
            assert!(err.contains(want), "{text:?}: {err}");
        }
        let opts = ImportOptions { mains: vec!["db".into()], ..Default::default() };
        assert!(run("web: a\n", &opts)
            .unwrap_err()
            .contains("--main db: the Procfile has no such process type"));
        let opts = ImportOptions { mains: vec!["release".into()], ..Default::default() };
        assert!(run("web: a\nrelease: b\n", &opts).unwrap_err().contains("cannot be a main"));
        assert!(run("# nothing\n\n", &ImportOptions::default())
            .unwrap_err()
            .contains("nothing is left to run"));
        assert!(run("release: m\n", &ImportOptions::default())
            .unwrap_err()
            .contains("Procfile:1:1: release: only the release phase"));
    }

    #[test]
    fn the_env_file_and_its_port() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("Procfile");
        let opts = ImportOptions::default();
        std::fs::write(dir.path().join(".env"), "# c\nPORT=3000\nA=1 # x\n").unwrap();
        let imported = import(Format::Procfile, &path, "web: a\nworker: b\n", &opts).unwrap();
        let t: toml::Table = toml::from_str(&imported.toml).unwrap();
        let procs = t["process"].as_array().unwrap();
        assert_eq!(procs[1]["env"]["PORT"].as_str(), Some("3100"));
        assert_eq!(procs[1]["env_file"].as_str(), Some(".env"));
        let note = imported.notes.iter().find(|n| n.kind == NoteKind::Approximated).unwrap();
        assert_eq!((note.at.as_ref().unwrap().line, note.file.ends_with(".env")), (3, true));
        std::fs::write(dir.path().join(".env"), "A=1\nPORT=web\n").unwrap();
        let err = import(Format::Procfile, &path, "web: a\n", &opts).unwrap_err().to_string();
        assert!(err.contains(".env:2:1: PORT is not a port number"), "{err}");
        std::fs::write(dir.path().join(".env"), "A=1\nnot a pair\n").unwrap();
        let err = import(Format::Procfile, &path, "web: a\n", &opts).unwrap_err().to_string();
        assert!(err.contains(".env:2:1: podinit cannot read this .env"), "{err}");
    }

    #[test]
    fn env_lines_read_differently_are_named() {
        assert!(read_differently("A=1 # one").unwrap().contains("A: podinit keeps"));
        assert!(read_differently("A=\"1 # one\"").is_none());
        assert!(read_differently("export B=2").unwrap().starts_with("B:"));
        assert!(read_differently("C=\"a\\nb\"").unwrap().starts_with("C: podinit keeps each"));
        assert!(read_differently("D=plain-value:1/x=${HOME}").is_none());
        assert!(read_differently("D=a#b").unwrap().contains("comment"));
        assert!(read_differently("D=").unwrap().contains("unset"));
        assert!(read_differently("E=a b").unwrap().contains("drops them"));
        assert!(read_differently("F='a \\ # b'").is_none());
        assert!(read_differently("G=a\"b\"").unwrap().contains("removes them"));
    }
}
