//! `[include] files` (supervisord.org/configuration.html, "[include]
//! Section Values"): each pattern matched as Python's `glob` matches it,
//! relative to the imported file, and the files found read into the same
//! INI. The files are read as they are on this machine, and say so in a
//! note; it never follows the `[include]` of an included file, as
//! supervisord does not.

use std::path::{Path, PathBuf};

use super::expand;
use super::{section_names, Reader};
use crate::config::locate::Place;
use crate::import::{Ctx, NoteKind};

impl Reader {
    /// `[include] files`: each pattern relative to the imported file's
    /// directory, its matches read in sorted order (supervisord.org
    /// configuration.html, "[include] Section Values"). A pattern that
    /// matches nothing is reported, as supervisord warns and goes on.
    /// Returns where `files` is, when there is one.
    pub(super) fn include(&mut self, ctx: &mut Ctx, main_dir: &Path) -> Option<(usize, Place)> {
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
pub(super) fn fnmatch(pattern: &str, name: &str) -> bool {
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
