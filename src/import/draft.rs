//! The podinit.toml an importer writes: tables of keys and values, each
//! remembering where in the original file it came from, rendered as TOML with
//! the importer's comments above the lines they explain.
//!
//! Rendering records, for every line it writes, the place in the original
//! file ([`Origin`]): when podinit's validator finds a problem in the TOML (a
//! name that is not a DNS label, a zero period), the error names the YAML or
//! INI line and key the user wrote, not a line of a file they never saw.

use std::fmt::Write as _;
use std::ops::Range;
use std::time::Duration;

use crate::config::locate::{Origin, Place};

/// A TOML value.
#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    Str(String),
    Int(i64),
    Bool(bool),
    List(Vec<Value>),
    Table(Table),
}

impl Value {
    /// A duration as podinit writes one: whole seconds as `"10s"`, else
    /// milliseconds (`"1500ms"`).
    pub fn duration(d: Duration) -> Value {
        if d.subsec_millis() == 0 {
            Value::Str(format!("{}s", d.as_secs()))
        } else {
            Value::Str(format!("{}ms", d.as_millis()))
        }
    }

    /// A list of strings (an argv).
    pub fn argv<S: AsRef<str>>(args: &[S]) -> Value {
        Value::List(args.iter().map(|a| Value::Str(a.as_ref().to_owned())).collect())
    }
}

impl From<&str> for Value {
    fn from(s: &str) -> Value {
        Value::Str(s.to_owned())
    }
}
impl From<String> for Value {
    fn from(s: String) -> Value {
        Value::Str(s)
    }
}
impl From<i64> for Value {
    fn from(n: i64) -> Value {
        Value::Int(n)
    }
}
impl From<bool> for Value {
    fn from(b: bool) -> Value {
        Value::Bool(b)
    }
}
impl From<Table> for Value {
    fn from(t: Table) -> Value {
        Value::Table(t)
    }
}

/// One `key = value`, where it came from, and the comment written above it.
#[derive(Debug, Clone, PartialEq)]
pub struct Item {
    pub key: String,
    pub value: Value,
    pub from: Option<Place>,
    pub comment: Vec<String>,
}

impl Item {
    /// Adds a comment line above this key.
    pub fn note(&mut self, text: impl Into<String>) -> &mut Item {
        self.comment.push(text.into());
        self
    }
}

/// A TOML table, keys in the order set.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Table(pub Vec<Item>);

impl Table {
    /// Sets `key` (replacing an earlier value of it) and returns the item, for
    /// a comment.
    pub fn set(&mut self, key: &str, value: impl Into<Value>, from: Option<&Place>) -> &mut Item {
        let value = value.into();
        let i = match self.0.iter().position(|i| i.key == key) {
            Some(i) => {
                self.0[i].value = value;
                self.0[i].from = from.cloned().or(self.0[i].from.take());
                i
            }
            None => {
                self.0.push(Item { key: key.to_owned(), value, from: from.cloned(), comment: Vec::new() });
                self.0.len() - 1
            }
        };
        &mut self.0[i]
    }

    /// The value of `key`.
    pub fn get(&self, key: &str) -> Option<&Value> {
        self.0.iter().find(|i| i.key == key).map(|i| &i.value)
    }

    /// The value of `key`, to change it.
    pub fn get_mut(&mut self, key: &str) -> Option<&mut Value> {
        self.0.iter_mut().find(|i| i.key == key).map(|i| &mut i.value)
    }

    /// Removes `key`.
    pub fn remove(&mut self, key: &str) -> Option<Item> {
        let i = self.0.iter().position(|i| i.key == key)?;
        Some(self.0.remove(i))
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

/// One `[[process]]`.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Process {
    /// Where the original file defines it (the program, service, container).
    pub from: Option<Place>,
    /// Comment lines above `[[process]]`.
    pub comment: Vec<String>,
    pub table: Table,
    /// Written with every line commented out: the entry cannot run as it is
    /// (it has no command of its own), and the comment says what to do.
    pub commented_out: bool,
}

impl Process {
    /// A process named `name` with its `role`, defined at `from`.
    pub fn new(name: &str, role: &str, from: Option<&Place>) -> Process {
        let mut p = Process { from: from.cloned(), ..Process::default() };
        p.table.set("name", name, from);
        p.table.set("role", role, from);
        p
    }

    pub fn name(&self) -> &str {
        match self.table.get("name") {
            Some(Value::Str(s)) => s,
            _ => "",
        }
    }
}

/// A whole podinit.toml.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Draft {
    /// Comment lines at the top of the file.
    pub comment: Vec<String>,
    pub pod: Table,
    pub processes: Vec<Process>,
}

impl Draft {
    /// The process named `name`.
    pub fn process_mut(&mut self, name: &str) -> Option<&mut Process> {
        self.processes.iter_mut().find(|p| p.name() == name)
    }

    /// The TOML text and, for each line range written, the original place.
    pub fn render(&self, file: &str) -> (String, Origin) {
        let mut w = Writer { out: String::new(), spans: Vec::new() };
        for line in &self.comment {
            w.comment(line);
        }
        if !self.pod.is_empty() {
            w.out.push_str(if self.comment.is_empty() { "" } else { "\n" });
            w.out.push_str("[pod]\n");
            w.items(&self.pod, "pod");
        }
        for p in &self.processes {
            w.out.push('\n');
            let start = w.out.len();
            for line in &p.comment {
                w.comment(line);
            }
            let body_start = w.out.len();
            w.out.push_str("[[process]]\n");
            w.record(body_start, p.from.as_ref());
            w.items(&p.table, "process");
            if p.commented_out {
                let body = w.out.split_off(body_start);
                w.spans.retain(|(r, _)| r.start < body_start);
                for line in body.lines() {
                    let _ = writeln!(w.out, "# {line}");
                }
            }
            if let Some(from) = &p.from {
                w.spans.push((start..w.out.len(), from.clone()));
            }
        }
        (w.out, Origin { file: file.to_owned(), spans: w.spans })
    }
}

struct Writer {
    out: String,
    spans: Vec<(Range<usize>, Place)>,
}

impl Writer {
    fn comment(&mut self, text: &str) {
        for line in text.lines() {
            let _ = writeln!(self.out, "# {line}");
        }
        if text.is_empty() {
            self.out.push_str("#\n");
        }
    }

    fn record(&mut self, start: usize, from: Option<&Place>) {
        if let Some(from) = from {
            self.spans.push((start..self.out.len(), from.clone()));
        }
    }

    /// A table's keys: plain values first, then each table value as its own
    /// `[section.key]` (TOML puts a table's own keys before its sub-tables).
    fn items(&mut self, table: &Table, section: &str) {
        for item in table.0.iter().filter(|i| !matches!(i.value, Value::Table(_))) {
            for line in &item.comment {
                self.comment(line);
            }
            let start = self.out.len();
            let _ = write!(self.out, "{} = ", key(&item.key));
            inline(&mut self.out, &item.value);
            self.out.push('\n');
            self.record(start, item.from.as_ref());
        }
        for item in &table.0 {
            let Value::Table(sub) = &item.value else { continue };
            for line in &item.comment {
                self.comment(line);
            }
            let start = self.out.len();
            let _ = writeln!(self.out, "[{section}.{}]", key(&item.key));
            self.record(start, item.from.as_ref());
            for sub_item in &sub.0 {
                for line in &sub_item.comment {
                    self.comment(line);
                }
                let start = self.out.len();
                let _ = write!(self.out, "{} = ", key(&sub_item.key));
                inline(&mut self.out, &sub_item.value);
                self.out.push('\n');
                self.record(start, sub_item.from.as_ref().or(item.from.as_ref()));
            }
        }
    }
}

/// A key, bare when TOML allows it, else quoted.
fn key(k: &str) -> String {
    if !k.is_empty() && k.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-') {
        k.to_owned()
    } else {
        let mut s = String::new();
        string(&mut s, k);
        s
    }
}

/// A TOML basic string, which is also a JSON string and a double-quoted
/// YAML string.
pub fn string(out: &mut String, s: &str) {
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            '\r' => out.push_str("\\r"),
            c if c.is_control() => {
                let _ = write!(out, "\\u{:04X}", c as u32);
            }
            c => out.push(c),
        }
    }
    out.push('"');
}

/// `v` as JSON (a table as an object): the form of podinit's annotations
/// on a Kubernetes manifest.
pub fn json(out: &mut String, v: &Value) {
    write_value(out, v, true);
}

/// `v` as an inline TOML value (a table as `{ k = v, ... }`).
fn inline(out: &mut String, v: &Value) {
    write_value(out, v, false);
}

/// `v` as JSON or as inline TOML: the two differ only in how a table's
/// keys are written (TOML's basic strings are valid JSON strings).
fn write_value(out: &mut String, v: &Value, json: bool) {
    match v {
        Value::Str(s) => string(out, s),
        Value::Int(n) => {
            let _ = write!(out, "{n}");
        }
        Value::Bool(b) => {
            let _ = write!(out, "{b}");
        }
        Value::List(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                write_value(out, item, json);
            }
            out.push(']');
        }
        Value::Table(t) => {
            out.push_str(if json { "{" } else { "{ " });
            for (i, item) in t.0.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                if json {
                    string(out, &item.key);
                    out.push_str(": ");
                } else {
                    let _ = write!(out, "{} = ", key(&item.key));
                }
                write_value(out, &item.value, json);
            }
            out.push_str(if json || t.0.is_empty() { "}" } else { " }" });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(line: usize) -> Place {
        Place { line, col: 3, key: format!("k{line}") }
    }

    #[test]
    fn a_draft_renders_as_toml_that_reads_back() {
        let mut d = Draft::default();
        d.comment.push("Imported.".into());
        d.pod.set("restart_policy", "Never", None);
        let mut p = Process::new("web", "main", Some(&at(4)));
        p.table.set("command", Value::argv(&["sh", "-c", "echo \"hi\"\n"]), Some(&at(5))).note("shell");
        let mut env = Table::default();
        env.set("A.B", "1", Some(&at(6)));
        p.table.set("env", env, None);
        let mut probe = Table::default();
        let mut http = Table::default();
        http.set("port", 8080, None);
        probe.set("http_get", http, None);
        probe.set("period", Value::duration(Duration::from_millis(1500)), Some(&at(7)));
        p.table.set("startup_probe", probe, Some(&at(8)));
        d.processes.push(p);
        let (text, origin) = d.render("pod.yaml");
        let parsed: toml::Table = toml::from_str(&text).unwrap_or_else(|e| panic!("{e}\n{text}"));
        let proc0 = &parsed["process"].as_array().unwrap()[0];
        assert_eq!(proc0["command"][2].as_str(), Some("echo \"hi\"\n"));
        assert_eq!(proc0["env"]["A.B"].as_str(), Some("1"));
        assert_eq!(proc0["startup_probe"]["period"].as_str(), Some("1500ms"));
        assert_eq!(proc0["startup_probe"]["http_get"]["port"].as_integer(), Some(8080));
        let period = text.find("period").unwrap();
        assert_eq!(origin.place(period).map(|p| p.line), Some(7));
        let env_key = text.find("\"A.B\"").unwrap();
        assert_eq!(origin.place(env_key).map(|p| p.line), Some(6));
    }

    #[test]
    fn a_commented_out_process_is_all_comment() {
        let mut d = Draft::default();
        let mut p = Process::new("db", "sidecar", None);
        p.comment.push("no command".into());
        p.commented_out = true;
        d.processes.push(p);
        d.processes.push(Process::new("app", "main", None));
        let (text, _) = d.render("x");
        let parsed: toml::Table = toml::from_str(&text).unwrap();
        assert_eq!(parsed["process"].as_array().unwrap().len(), 1);
        assert!(text.contains("# [[process]]\n# name = \"db\""), "{text}");
    }
}
