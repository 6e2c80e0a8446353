//! The INI dialect supervisord reads, with the place of every key and value.
//!
//! supervisord reads its files with Python's `configparser.RawConfigParser`,
//! set up as Python 2's was: inline comments start with ` ;` or ` #`, and a
//! section or key written twice is allowed, the later value winning
//! (supervisord.org/configuration.html, "Configuration File Format"; the rules
//! of the reader are those of docs.python.org/3/library/configparser.html,
//! "Supported INI File Structure"):
//!
//! - `[name]` opens a section; `[DEFAULT]` holds defaults for every section;
//! - `key = value` or `key: value`, split at the first `=` or `:`; the key is
//!   lower-cased (ASCII: every key supervisord has is ASCII), both sides
//!   are trimmed;
//! - a line that starts with `;` or `#` (after blanks) is a comment; so is the
//!   rest of a line from a `;` or `#` that follows a blank (`'daemon off;'`
//!   keeps its `;`);
//! - a line indented deeper than its key's line continues the value (joined
//!   with newlines); an empty line inside a value is kept, trailing ones are
//!   not; a `\` at the end of a line is an ordinary character;
//! - any other line is an error.
//!
//! Why not a crate: rust-ini 0.21 (with `inline-comment`, quotes and escapes
//! off) joins a line ending in `\` with the next one, continues a value on
//! any indented line, and lost the first letter of a key that follows an
//! inline comment; configparser 3.3 cuts `nginx -g 'daemon off;'` at its `;`.
//! Neither gives the place of a key, which every note needs. This file is the
//! few rules above and nothing else.

/// One `key = value`, merged over every file read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    /// The key, lower-cased.
    pub key: String,
    /// The value, continuation lines joined with `\n`.
    pub value: String,
    /// Which file (index into [`Ini::files`]).
    pub file: usize,
    /// Line and column (1-based, in characters) of the key.
    pub line: usize,
    pub col: usize,
    /// Where each line of the value starts: (byte offset in `value`, line,
    /// column).
    pub spans: Vec<(usize, usize, usize)>,
}

impl Entry {
    /// Line and column of byte `offset` of the value.
    pub fn place_of(&self, offset: usize) -> (usize, usize) {
        let (start, line, col) = self
            .spans
            .iter()
            .rev()
            .find(|(s, _, _)| *s <= offset)
            .copied()
            .unwrap_or((0, self.line, self.col));
        let chars = self.value.get(start..offset.max(start)).map_or(0, |s| s.chars().count());
        (line, col + chars)
    }
}

/// One `[section]`, merged over its repetitions (the later key wins).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Section {
    pub name: String,
    pub file: usize,
    /// Line and column of the first `[`.
    pub line: usize,
    pub col: usize,
    pub entries: Vec<Entry>,
}

impl Section {
    /// The entry of `key` (lower case).
    pub fn get(&self, key: &str) -> Option<&Entry> {
        self.entries.iter().find(|e| e.key == key)
    }
}

/// Every section read, in the order each first appeared.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Ini {
    /// The files read, in order (the first is the one imported).
    pub files: Vec<String>,
    pub sections: Vec<Section>,
    /// `[DEFAULT]`: a key here is the default of that key in every section.
    pub defaults: Vec<Entry>,
}

/// A line that is not INI: (file, line, column, message).
pub type SyntaxError = (usize, usize, usize, String);

impl Ini {
    /// The section named `name`.
    pub fn section(&self, name: &str) -> Option<&Section> {
        self.sections.iter().find(|s| s.name == name)
    }

    /// The value of `key` in `section`, falling back to `[DEFAULT]`.
    pub fn get<'a>(&'a self, section: &'a Section, key: &str) -> Option<&'a Entry> {
        section.get(key).or_else(|| self.defaults.iter().find(|e| e.key == key))
    }

    /// Reads one more file's `text` (named `name`) into the sections read so
    /// far, as RawConfigParser's `read` does.
    ///
    /// # Errors
    /// Every line that is neither a section, a key, a comment nor a
    /// continuation, and a key before any section.
    pub fn read(&mut self, name: &str, text: &str) -> Result<(), Vec<SyntaxError>> {
        let file = self.files.len();
        self.files.push(name.to_owned());
        let mut errors = Vec::new();
        // The section being read (`None`: none yet; `Some(None)`: DEFAULT)
        // and the key whose value may continue.
        let mut current: Option<Option<usize>> = None;
        let mut key: Option<String> = None;
        let mut indent_level = 0;
        for (n, raw) in text.lines().enumerate() {
            let line = n + 1;
            let (content, comment) = strip_comment(raw);
            let value = content.trim();
            if value.is_empty() {
                if !comment {
                    if let (Some(sec), Some(k)) = (current, key.as_deref()) {
                        if let Some(e) = self.entry_mut(sec, k) {
                            e.spans.push((e.value.len() + 1, line, 1));
                            e.value.push('\n');
                        }
                    }
                }
                continue;
            }
            let indent = raw.chars().take_while(|c| c.is_whitespace()).count();
            let col = indent + 1;
            if let (Some(sec), Some(k), true) = (current, key.as_deref(), indent > indent_level) {
                if let Some(e) = self.entry_mut(sec, k) {
                    e.value.push('\n');
                    e.spans.push((e.value.len(), line, col));
                    e.value.push_str(value);
                }
                continue;
            }
            indent_level = indent;
            if let Some(header) =
                value.strip_prefix('[').and_then(|v| v.rfind(']').filter(|i| *i > 0).map(|i| &v[..i]))
            {
                key = None;
                if header == "DEFAULT" {
                    current = Some(None);
                    continue;
                }
                let i = match self.sections.iter().position(|s| s.name == header) {
                    Some(i) => i,
                    None => {
                        self.sections.push(Section {
                            name: header.to_owned(),
                            file,
                            line,
                            col,
                            entries: Vec::new(),
                        });
                        self.sections.len() - 1
                    }
                };
                current = Some(Some(i));
                continue;
            }
            let Some(sec) = current else {
                errors.push((file, line, col, "a key before any [section]".to_owned()));
                continue;
            };
            let Some(d) = value.find(['=', ':']) else {
                errors.push((
                    file,
                    line,
                    col,
                    format!("{value:?} is not `key = value` (nor a [section] or a comment)"),
                ));
                continue;
            };
            let k = value[..d].trim_end().to_ascii_lowercase();
            if k.is_empty() {
                errors.push((file, line, col, "a value without a key".to_owned()));
                continue;
            }
            let after = &value[d + 1..];
            let v = after.trim_start();
            // Column of the value: indent, then the characters before it.
            let vcol = col + value[..d + 1].chars().count() + (after.len() - v.len());
            let entry = Entry {
                key: k.clone(),
                value: v.trim_end().to_owned(),
                file,
                line,
                col,
                spans: vec![(0, line, vcol)],
            };
            let entries = match sec {
                Some(i) => &mut self.sections[i].entries,
                None => &mut self.defaults,
            };
            match entries.iter_mut().find(|e| e.key == k) {
                Some(old) => *old = entry,
                None => entries.push(entry),
            }
            key = Some(k);
        }
        for s in &mut self.sections {
            for e in s.entries.iter_mut().filter(|e| e.file == file) {
                trim_end(e);
            }
        }
        for e in self.defaults.iter_mut().filter(|e| e.file == file) {
            trim_end(e);
        }
        if errors.is_empty() {
            Ok(())
        } else {
            Err(errors)
        }
    }

    fn entry_mut(&mut self, sec: Option<usize>, key: &str) -> Option<&mut Entry> {
        let entries = match sec {
            Some(i) => &mut self.sections[i].entries,
            None => &mut self.defaults,
        };
        entries.iter_mut().find(|e| e.key == key)
    }
}

/// A value loses its trailing blanks and empty lines.
fn trim_end(e: &mut Entry) {
    let len = e.value.trim_end().len();
    e.value.truncate(len);
    e.spans.retain(|(s, _, _)| *s <= len || *s == 0);
}

/// The line without its comment, and whether it had one: `;` or `#` first on
/// the line (after blanks), or after a blank.
fn strip_comment(line: &str) -> (&str, bool) {
    let t = line.trim_start();
    if t.starts_with([';', '#']) {
        return ("", true);
    }
    let mut prev_blank = true;
    for (i, c) in line.char_indices() {
        if (c == ';' || c == '#') && prev_blank {
            return (&line[..i], true);
        }
        prev_blank = c.is_whitespace();
    }
    (line, false)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(text: &str) -> Ini {
        let mut ini = Ini::default();
        ini.read("t.conf", text).unwrap();
        ini
    }

    #[test]
    fn values_read_as_python_reads_them() {
        let ini = read(
            "[program:web]\ncommand=nginx -g 'daemon off;'   ; the server\nEnvironment = A=\"x;y\",B=2\n\
             directory: /srv\n  # comment\n[program:multi]\ncommand=/bin/sh -c\n    \"echo a;\n\n     echo b\"\n\n\
             stdout_logfile=/tmp/a\\\n[program:web]\npriority=5\n",
        );
        let web = ini.section("program:web").unwrap();
        assert_eq!(web.get("command").unwrap().value, "nginx -g 'daemon off;'");
        assert_eq!(web.get("environment").unwrap().value, "A=\"x;y\",B=2");
        assert_eq!(web.get("directory").unwrap().value, "/srv");
        assert_eq!(web.get("priority").unwrap().value, "5");
        let multi = ini.section("program:multi").unwrap();
        assert_eq!(multi.get("command").unwrap().value, "/bin/sh -c\n\"echo a;\n\necho b\"");
        assert_eq!(multi.get("stdout_logfile").unwrap().value, "/tmp/a\\");
        let e = multi.get("command").unwrap();
        let b = e.value.find("echo b").unwrap();
        assert_eq!(e.place_of(b), (10, 6));
        let d = web.get("directory").unwrap();
        assert_eq!((d.line, d.col, d.place_of(0)), (4, 1, (4, 12)));
    }

    #[test]
    fn a_line_without_a_key_is_an_error_with_its_place() {
        let mut ini = Ini::default();
        let errors = ini.read("t.conf", "x=1\n[a]\nok=1\n  \\\nb\n").unwrap_err();
        assert_eq!(errors.len(), 2, "{errors:?}");
        assert_eq!((errors[0].1, errors[0].2), (1, 1));
        assert_eq!((errors[1].1, errors[1].2), (5, 1));
    }
}
