//! YAML documents as a tree whose every node knows its line and column.
//!
//! saphyr-parser gives events with their place; this module builds them into
//! [`Node`]s, because every importer must point an error or a note at the key
//! it came from (file:line:col and the key path). It also does what the
//! parser leaves to its user:
//!
//! - aliases are expanded, within a budget of [`MAX_NODES`] nodes for the
//!   whole file, so that a "billion laughs" file of nested aliases is one
//!   error and not an exhausted memory;
//! - merge keys (`<<: *base`, `<<: [*a, *b]`) are applied as the YAML merge
//!   type says (yaml.org/type/merge.html) and Compose documents: keys written
//!   in the mapping win, and among several merged mappings the first wins;
//! - a key written twice in one mapping is an error, as in YAML 1.2 (and in
//!   kubectl and Compose).
//!
//! Scalars keep their text and whether they were quoted; [`Node::as_bool`],
//! [`Node::as_int`] read them by the YAML 1.2 core schema, as Kubernetes and
//! Compose do (`true`/`false`, decimal, `0x`/`0o` integers, `null`, `~`).

use std::collections::HashMap;

use saphyr_parser::{Event, Parser, ScalarStyle, Span};

/// Most nodes a file may expand to, aliases included: 1,000,000 (the largest
/// real Kubernetes or Compose files have a few thousand).
pub const MAX_NODES: usize = 1_000_000;

/// A place in the text: 1-based line and column (in characters).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Pos {
    pub line: usize,
    pub col: usize,
}

/// A YAML node and where it was written (for an alias: where the anchored
/// node was written).
#[derive(Debug, Clone, PartialEq)]
pub struct Node {
    pub at: Pos,
    pub value: Value,
}

/// What a node holds.
#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    /// A scalar: its text, and whether it was quoted or a block scalar (then
    /// it is always a string, never a number, boolean or null).
    Scalar {
        text: String,
        quoted: bool,
    },
    Seq(Vec<Node>),
    /// A mapping in file order; keys are scalars (a complex key is refused).
    Map(Vec<(Key, Node)>),
}

/// A mapping key and its place.
#[derive(Debug, Clone, PartialEq)]
pub struct Key {
    pub at: Pos,
    pub name: String,
}

/// A YAML syntax error, or a file this reader refuses (too many nodes, a
/// duplicate key, a complex key).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Error {
    pub at: Pos,
    pub message: String,
}

impl Node {
    /// The scalar's text when this is a scalar that is not null.
    pub fn as_str(&self) -> Option<&str> {
        match &self.value {
            Value::Scalar { text, .. } if !self.is_null() => Some(text),
            _ => None,
        }
    }

    /// Whether this is `null`, `~`, `Null`, `NULL` or empty, unquoted.
    pub fn is_null(&self) -> bool {
        matches!(&self.value, Value::Scalar { text, quoted: false }
            if matches!(text.as_str(), "" | "~" | "null" | "Null" | "NULL"))
    }

    /// A boolean by the core schema: unquoted `true`/`false` (also `True`,
    /// `TRUE`, `False`, `FALSE`).
    pub fn as_bool(&self) -> Option<bool> {
        match &self.value {
            Value::Scalar { text, quoted: false } => match text.as_str() {
                "true" | "True" | "TRUE" => Some(true),
                "false" | "False" | "FALSE" => Some(false),
                _ => None,
            },
            _ => None,
        }
    }

    /// An integer by the core schema: unquoted decimal (with an optional
    /// sign), `0x` hex or `0o` octal.
    pub fn as_int(&self) -> Option<i64> {
        let Value::Scalar { text, quoted: false } = &self.value else { return None };
        let (neg, digits) = match text.strip_prefix('-') {
            Some(rest) => (true, rest),
            None => (false, text.strip_prefix('+').unwrap_or(text)),
        };
        let n = if let Some(hex) = digits.strip_prefix("0x") {
            i64::from_str_radix(hex, 16).ok()?
        } else if let Some(oct) = digits.strip_prefix("0o") {
            i64::from_str_radix(oct, 8).ok()?
        } else if !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit()) {
            digits.parse().ok()?
        } else {
            return None;
        };
        Some(if neg { -n } else { n })
    }

    /// A number by the core schema, integer or not (`1.5`, `.5`, `1e3`).
    pub fn as_f64(&self) -> Option<f64> {
        if let Some(n) = self.as_int() {
            return Some(n as f64);
        }
        match &self.value {
            Value::Scalar { text, quoted: false }
                if text.bytes().any(|b| b.is_ascii_digit())
                    && text.bytes().all(|b| b.is_ascii_digit() || b"+-.eE".contains(&b)) =>
            {
                text.parse().ok()
            }
            _ => None,
        }
    }

    /// The entries of a mapping.
    pub fn as_map(&self) -> Option<&[(Key, Node)]> {
        match &self.value {
            Value::Map(m) => Some(m),
            _ => None,
        }
    }

    /// The items of a sequence.
    pub fn as_seq(&self) -> Option<&[Node]> {
        match &self.value {
            Value::Seq(s) => Some(s),
            _ => None,
        }
    }

    /// The value under `key` in a mapping.
    pub fn get(&self, key: &str) -> Option<&Node> {
        self.as_map()?.iter().find(|(k, _)| k.name == key).map(|(_, v)| v)
    }

    /// What kind of node this is, for messages ("a mapping", "a string"...).
    pub fn kind(&self) -> &'static str {
        match &self.value {
            Value::Map(_) => "a mapping",
            Value::Seq(_) => "a list",
            Value::Scalar { .. } if self.is_null() => "null",
            Value::Scalar { quoted: true, .. } => "a string",
            Value::Scalar { .. } if self.as_bool().is_some() => "a boolean",
            Value::Scalar { .. } if self.as_f64().is_some() => "a number",
            Value::Scalar { .. } => "a string",
        }
    }
}

fn pos(span: &Span) -> Pos {
    Pos { line: span.start.line(), col: span.start.col() + 1 }
}

/// One collection being built.
enum Open {
    Seq { at: Pos, anchor: usize, items: Vec<Node> },
    Map { at: Pos, anchor: usize, entries: Vec<(Key, Node)>, merges: Vec<Node>, key: Option<Key> },
}

/// Builds the documents of a stream.
struct Builder {
    stack: Vec<Open>,
    anchors: HashMap<usize, Node>,
    docs: Vec<Node>,
    nodes: usize,
}

impl Builder {
    fn count(&mut self, node: &Node, at: Pos) -> Result<(), Error> {
        self.nodes += size(node);
        if self.nodes > MAX_NODES {
            return Err(Error {
                at,
                message: format!(
                    "the file expands to more than {MAX_NODES} YAML nodes (aliases of aliases?); refused"
                ),
            });
        }
        Ok(())
    }

    /// Puts a finished node where it belongs: into the open collection (as a
    /// key or a value) or as a whole document.
    fn place(&mut self, node: Node, anchor: usize) -> Result<(), Error> {
        if anchor != 0 {
            self.anchors.insert(anchor, node.clone());
        }
        match self.stack.last_mut() {
            None => self.docs.push(node),
            Some(Open::Seq { items, .. }) => items.push(node),
            Some(Open::Map { entries, merges, key, .. }) => match key.take() {
                None => {
                    let Value::Scalar { text, .. } = node.value else {
                        return Err(Error {
                            at: node.at,
                            message: "a mapping key must be a plain value, not a list or mapping".into(),
                        });
                    };
                    *key = Some(Key { at: node.at, name: text });
                }
                Some(k) if k.name == "<<" => merges.push(node),
                Some(k) => {
                    if let Some((first, _)) = entries.iter().find(|(e, _)| e.name == k.name) {
                        return Err(Error {
                            at: k.at,
                            message: format!(
                                "key {:?} is written twice in this mapping (first on line {})",
                                k.name, first.at.line
                            ),
                        });
                    }
                    entries.push((k, node));
                }
            },
        }
        Ok(())
    }
}

fn size(node: &Node) -> usize {
    match &node.value {
        Value::Scalar { .. } => 1,
        Value::Seq(items) => 1 + items.iter().map(size).sum::<usize>(),
        Value::Map(entries) => 1 + entries.iter().map(|(_, v)| 1 + size(v)).sum::<usize>(),
    }
}

/// Applies `<<` merges to `entries`: keys already there win, then the first
/// merged mapping that has a key.
fn merge(entries: &mut Vec<(Key, Node)>, merges: Vec<Node>) -> Result<(), Error> {
    for m in merges {
        let sources: Vec<Node> = match m.value {
            Value::Map(_) => vec![m],
            Value::Seq(items) => items,
            _ => {
                return Err(Error { at: m.at, message: "`<<` merges a mapping or a list of mappings".into() })
            }
        };
        for source in sources {
            let Value::Map(more) = source.value else {
                return Err(Error {
                    at: source.at,
                    message: "`<<` merges a mapping or a list of mappings".into(),
                });
            };
            for (k, v) in more {
                if !entries.iter().any(|(e, _)| e.name == k.name) {
                    entries.push((k, v));
                }
            }
        }
    }
    Ok(())
}

/// Parses every document of `text`.
///
/// # Errors
/// The first syntax error, an alias to an unknown anchor, a duplicate or
/// complex key, a bad merge, or a file that expands beyond [`MAX_NODES`];
/// each with its place.
pub fn parse(text: &str) -> Result<Vec<Node>, Error> {
    let mut text = std::borrow::Cow::Borrowed(text);
    for _ in 0..MAX_BRACKET_FIXES {
        match parse_once(&text) {
            Err(e) if e.message == "invalid indentation" => match reindent_bracket(&text, e.at.line) {
                Some(fixed) => text = std::borrow::Cow::Owned(fixed),
                None => return Err(e),
            },
            other => return other,
        }
    }
    parse_once(&text)
}

/// Most closing brackets [`parse`] re-indents in one file.
const MAX_BRACKET_FIXES: usize = 64;

/// YAML 1.2 wants the lines of a flow collection indented deeper than the
/// key it belongs to, so `key: [` ... `]` with the `]` under `key` is an
/// error for saphyr-parser; Go's and Python's YAML readers (those of
/// Kubernetes, Compose and supervisord's users) accept it, and real files
/// have it. When the line of an indentation error starts with `]` or `}`,
/// that bracket is moved under the line before it (which changes no value:
/// only a closing bracket moves) and the file is read again.
fn reindent_bracket(text: &str, line: usize) -> Option<String> {
    let lines: Vec<&str> = text.split('\n').collect();
    let i = line.checked_sub(1)?;
    let this = lines.get(i)?;
    let body = this.trim_start_matches(' ');
    if !body.starts_with([']', '}']) {
        return None;
    }
    let prev = lines[..i].iter().rev().find(|l| !l.trim().is_empty())?;
    let mut want = prev.len() - prev.trim_start_matches(' ').len();
    // An empty collection (`key: [` then `]`): under the key's content.
    if prev.trim_end().ends_with(['[', '{']) {
        want += 2;
    }
    let have = this.len() - body.len();
    if want <= have {
        return None;
    }
    let mut out = String::with_capacity(text.len() + want);
    for (j, l) in lines.iter().enumerate() {
        if j > 0 {
            out.push('\n');
        }
        if j == i {
            out.push_str(&" ".repeat(want));
            out.push_str(body);
        } else {
            out.push_str(l);
        }
    }
    Some(out)
}

fn parse_once(text: &str) -> Result<Vec<Node>, Error> {
    let mut b = Builder { stack: Vec::new(), anchors: HashMap::new(), docs: Vec::new(), nodes: 0 };
    for event in Parser::new_from_str(text) {
        let (event, span) = event.map_err(|e| Error {
            at: Pos { line: e.marker().line(), col: e.marker().col() + 1 },
            message: e.info().to_owned(),
        })?;
        let at = pos(&span);
        match event {
            Event::Scalar(text, style, anchor, _tag) => {
                let node = Node {
                    at,
                    value: Value::Scalar { text: text.into_owned(), quoted: style != ScalarStyle::Plain },
                };
                b.count(&node, at)?;
                b.place(node, anchor)?;
            }
            Event::Alias(id) => {
                let Some(node) = b.anchors.get(&id).cloned() else {
                    return Err(Error { at, message: "an alias to an anchor that is not defined".into() });
                };
                b.count(&node, at)?;
                b.place(node, 0)?;
            }
            Event::SequenceStart(anchor, _) => b.stack.push(Open::Seq { at, anchor, items: Vec::new() }),
            Event::MappingStart(anchor, _) => {
                b.stack.push(Open::Map { at, anchor, entries: Vec::new(), merges: Vec::new(), key: None })
            }
            Event::SequenceEnd | Event::MappingEnd => {
                let (node, anchor) = match b.stack.pop() {
                    Some(Open::Seq { at, anchor, items }) => (Node { at, value: Value::Seq(items) }, anchor),
                    Some(Open::Map { at, anchor, mut entries, merges, .. }) => {
                        merge(&mut entries, merges)?;
                        (Node { at, value: Value::Map(entries) }, anchor)
                    }
                    None => continue,
                };
                b.nodes += 1;
                b.place(node, anchor)?;
            }
            Event::DocumentEnd => b.anchors.clear(),
            Event::StreamStart | Event::StreamEnd | Event::DocumentStart(_) | Event::Nothing => {}
        }
    }
    Ok(b.docs)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn one(text: &str) -> Node {
        let mut docs = parse(text).unwrap();
        assert_eq!(docs.len(), 1);
        docs.remove(0)
    }

    #[test]
    fn nodes_know_their_line_and_column() {
        let doc = one("a: 1\nb:\n  - x\n  - \"y\"\n");
        let b = doc.get("b").unwrap();
        let items = b.as_seq().unwrap();
        assert_eq!(items[0].at, Pos { line: 3, col: 5 });
        assert_eq!(items[1].as_str(), Some("y"));
        assert_eq!(doc.as_map().unwrap()[1].0.at, Pos { line: 2, col: 1 });
    }

    #[test]
    fn scalars_follow_the_core_schema() {
        let doc = one("a: 10\nb: \"10\"\nc: true\nd: ~\ne: 0x1f\nf: 1.5\ng: yes\n");
        assert_eq!(doc.get("a").unwrap().as_int(), Some(10));
        assert_eq!(doc.get("b").unwrap().as_int(), None);
        assert_eq!(doc.get("c").unwrap().as_bool(), Some(true));
        assert!(doc.get("d").unwrap().is_null());
        assert_eq!(doc.get("e").unwrap().as_int(), Some(31));
        assert_eq!(doc.get("f").unwrap().as_f64(), Some(1.5));
        // YAML 1.2: `yes` is a string, not a boolean.
        assert_eq!(doc.get("g").unwrap().as_bool(), None);
    }

    #[test]
    fn merge_keys_let_written_keys_win_and_the_first_source_win() {
        let doc = one("a: &a {x: 1, y: 1}\nb: &b {y: 2, z: 2}\nc:\n  <<: [*a, *b]\n  x: 3\n");
        let c = doc.get("c").unwrap();
        assert_eq!(c.get("x").unwrap().as_int(), Some(3));
        assert_eq!(c.get("y").unwrap().as_int(), Some(1));
        assert_eq!(c.get("z").unwrap().as_int(), Some(2));
        assert!(c.get("<<").is_none());
    }

    #[test]
    fn a_duplicate_key_is_an_error_at_its_second_place() {
        let e = parse("a: 1\nb: 2\na: 3\n").unwrap_err();
        assert_eq!(e.at, Pos { line: 3, col: 1 });
        assert!(e.message.contains("twice"), "{}", e.message);
    }

    #[test]
    fn a_bomb_of_aliases_is_refused() {
        let mut text = String::from("a0: &a0 [x, x, x, x, x, x, x, x, x, x]\n");
        for i in 1..10 {
            let prev = i - 1;
            text.push_str(&format!(
                "a{i}: &a{i} [*a{prev}, *a{prev}, *a{prev}, *a{prev}, *a{prev}, *a{prev}, *a{prev}, *a{prev}, *a{prev}, *a{prev}]\n"
            ));
        }
        let e = parse(&text).unwrap_err();
        assert!(e.message.contains("more than"), "{}", e.message);
    }

    #[test]
    fn a_closing_bracket_under_its_key_reads_as_go_and_python_read_it() {
        let doc = one("a:\n  b: [\n    \"x\",\n  ]\n  c: {\n    d: 1\n  }\n  e: 2\n");
        let a = doc.get("a").unwrap();
        assert_eq!(a.get("b").unwrap().as_seq().unwrap()[0].as_str(), Some("x"));
        assert_eq!(a.get("c").unwrap().get("d").unwrap().as_int(), Some(1));
        assert_eq!(a.get("e").unwrap().at, Pos { line: 8, col: 6 });
        let doc = one("a:\n  b: [\n  ]\n  c: {\n  }\n");
        assert_eq!(doc.get("a").unwrap().get("b").unwrap().as_seq().map(<[Node]>::len), Some(0));
        assert_eq!(doc.get("a").unwrap().get("c").unwrap().as_map().map(<[(Key, Node)]>::len), Some(0));
        // A bracket in a block scalar is text: nothing is moved there.
        let doc = one("a: |\n  {\n  }\nb: 1\n");
        assert_eq!(doc.get("a").unwrap().as_str(), Some("{\n}\n"));
        assert!(parse("a: |\n    {\n  }\n").is_err());
    }

    #[test]
    fn syntax_errors_have_a_place() {
        let e = parse("a: [1, 2\nb: 3\n").unwrap_err();
        assert!(e.at.line >= 1 && e.at.col >= 1, "{e:?}");
    }

    #[test]
    fn documents_are_split_and_json_reads_too() {
        let docs = parse("---\na: 1\n---\n{\"b\": [1, \"two\"]}\n").unwrap();
        assert_eq!(docs.len(), 2);
        assert_eq!(docs[1].get("b").unwrap().as_seq().unwrap()[1].as_str(), Some("two"));
    }
}
