//! Turns a byte offset in a TOML file into `line:col` and the dotted key path at
//! that place (`process[2].startup_probe.period`).
//!
//! toml reports where a value is but not under which key, and podinit wants every
//! config error to name file, line, column *and* key. A full second parse is not
//! possible when the first one failed, so this is a small lexical scan: it tracks
//! `[table]` / `[[array]]` headers up to the error's line, then walks that line
//! (keys, `{`, `}`, `,`, quoted strings) up to the column. It understands the
//! ordinary one-line layout of the README examples; on anything stranger it gives a shorter
//! path, never a wrong line or column.

/// Where in the file: 1-based line and column (in characters), and the key path.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Place {
    pub line: usize,
    pub col: usize,
    pub key: String,
}

/// The place of byte `offset` in `src` (clamped to the end of `src`).
pub fn locate(src: &str, offset: usize) -> Place {
    let mut offset = offset.min(src.len());
    while !src.is_char_boundary(offset) {
        offset -= 1;
    }
    let before = &src[..offset];
    let line_start = before.rfind('\n').map_or(0, |i| i + 1);
    let line = before.matches('\n').count() + 1;
    let col = before[line_start..].chars().count() + 1;
    let line_end = src[offset..].find('\n').map_or(src.len(), |i| offset + i);

    let mut header: Vec<String> = Vec::new();
    let mut arrays: Vec<(String, usize)> = Vec::new();
    for text in src[..line_start].lines() {
        let t = text.trim();
        if let Some(name) = t.strip_prefix("[[").and_then(|r| r.split("]]").next()) {
            let name = name.trim().to_owned();
            let n = match arrays.iter_mut().find(|(a, _)| *a == name) {
                Some((_, n)) => {
                    *n += 1;
                    *n
                }
                None => {
                    arrays.push((name.clone(), 1));
                    1
                }
            };
            header = vec![format!("{name}[{n}]")];
        } else if let Some(name) = t.strip_prefix('[').and_then(|r| r.split(']').next()) {
            // `[process.startup_probe]` continues the latest `[[process]]`.
            let name = name.trim();
            let (first, rest) = name.split_once('.').unwrap_or((name, ""));
            header = match arrays.iter().find(|(a, _)| a == first.trim()) {
                Some((a, n)) if !rest.is_empty() => vec![format!("{a}[{n}].{}", rest.trim())],
                _ => vec![name.to_owned()],
            };
        }
    }
    let this_line = &src[line_start..line_end];
    let t = this_line.trim_start();
    if t.starts_with('[') {
        let name = t.trim_start_matches('[').split(']').next().unwrap_or("").trim();
        return Place { line, col, key: name.to_owned() };
    }
    let upto = (offset - line_start).min(this_line.len());
    // Extend to the end of a bare key that the offset points into.
    let ext = this_line[upto..]
        .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == '-'))
        .map_or(this_line.len(), |i| upto + i);
    let mut path = header;
    path.extend(keys_on_line(&this_line[..ext]));
    Place { line, col, key: path.join(".") }
}

/// The keys of nested inline tables open at the end of `text`, innermost last.
fn keys_on_line(text: &str) -> Vec<String> {
    let mut stack: Vec<String> = Vec::new();
    let mut pending: Option<String> = None;
    let mut word = String::new();
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '"' | '\'' => {
                let mut s = String::new();
                for d in chars.by_ref() {
                    if d == c {
                        break;
                    }
                    s.push(d);
                }
                if pending.is_none() {
                    word = s;
                }
            }
            '#' => break,
            '=' => {
                pending = Some(std::mem::take(&mut word));
            }
            '{' => {
                if let Some(k) = pending.take() {
                    stack.push(k);
                }
                word.clear();
            }
            '}' => {
                stack.pop();
                pending = None;
                word.clear();
            }
            ',' => {
                pending = None;
                word.clear();
            }
            c if c.is_ascii_alphanumeric() || c == '_' || c == '-' || c == '.' => {
                if pending.is_none() {
                    word.push(c);
                }
            }
            _ => {
                if pending.is_none() && !word.is_empty() && !c.is_whitespace() {
                    word.clear();
                }
            }
        }
    }
    match pending {
        Some(k) if !k.is_empty() => stack.push(k),
        _ if !word.is_empty() => stack.push(word),
        _ => {}
    }
    stack
}

/// Where the lines of a TOML text that podinit wrote itself came from: an
/// imported file (a Kubernetes manifest read as the config). Errors in the
/// TOML are reported at the original file's place and key.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Origin {
    /// The original file, as named on the command line.
    pub file: String,
    /// Byte ranges of the TOML text and the places they were written from.
    pub spans: Vec<(std::ops::Range<usize>, Place)>,
}

impl Origin {
    /// The original place of TOML byte `offset`: that of the narrowest range
    /// holding it, else of the nearest range before it.
    pub fn place(&self, offset: usize) -> Option<&Place> {
        let holding = self.spans.iter().filter(|(r, _)| r.contains(&offset)).min_by_key(|(r, _)| r.len());
        holding
            .or_else(|| self.spans.iter().filter(|(r, _)| r.start <= offset).max_by_key(|(r, _)| r.start))
            .map(|(_, p)| p)
    }
}

impl Origin {
    /// The original place of the TOML line holding byte `offset` of `toml`,
    /// only when that line was written from a place of its own: `None` for a
    /// value the importer filled in (its tool's default) rather than read
    /// from the file.
    pub fn own_place(&self, toml: &str, offset: usize) -> Option<&Place> {
        let line_start = toml.get(..offset).and_then(|t| t.rfind('\n')).map_or(0, |i| i + 1);
        self.spans
            .iter()
            .filter(|(r, _)| r.contains(&offset) && r.start >= line_start)
            .min_by_key(|(r, _)| r.len())
            .map(|(_, p)| p)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SRC: &str = "[pod]\nrestart_policy = \"Never\"\n\n[[process]]\nname = \"a\"\n\n[[process]]\nname = \"b\"\nstartup_probe = { tcp_socket = { port = 1 }, perod = \"1s\" }\n";

    #[test]
    fn names_nested_key_in_second_process() {
        let off = SRC.find("perod").unwrap();
        let p = locate(SRC, off);
        assert_eq!((p.line, p.col), (9, 46));
        assert_eq!(p.key, "process[2].startup_probe.perod");
    }

    #[test]
    fn names_value_by_its_key() {
        let off = SRC.find("\"Never\"").unwrap();
        let p = locate(SRC, off);
        assert_eq!(p.line, 2);
        assert_eq!(p.key, "pod.restart_policy");
        let off = SRC.find("port = 1").unwrap() + 7;
        assert_eq!(locate(SRC, off).key, "process[2].startup_probe.tcp_socket.port");
    }

    #[test]
    fn sub_table_header_continues_the_latest_array_element() {
        let src =
            "[[process]]\nname = \"a\"\n[[process]]\nname = \"b\"\n[process.startup_probe]\nperod = \"1s\"\n";
        let p = locate(src, src.find("perod").unwrap());
        assert_eq!(p.key, "process[2].startup_probe.perod");
    }

    #[test]
    fn header_line_names_table() {
        let p = locate(SRC, SRC.find("[[process]]").unwrap());
        assert_eq!(p.key, "process");
        assert_eq!(p.col, 1);
    }
}
