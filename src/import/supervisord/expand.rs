//! supervisord's `%(name)s` expansions, its `KEY=val,KEY2=val2` lists, and
//! the shell words a command becomes when part of it is left to run time.
//!
//! supervisord expands a value with Python's `%` operator and a table of
//! names (supervisord.org/configuration.html, the "expansions" each key
//! lists; docs.python.org/3/library/stdtypes.html, "printf-style String
//! Formatting"): `%(here)s`, `%(program_name)s`, `%(process_num)02d`, `%%`
//! for a `%`. Any other `%` makes supervisord refuse the file, and so does a
//! name it does not know.

/// A piece of an expanded value: text, or `%(ENV_X)s` for a variable the
/// file does not set, left to the container's environment at run time.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Piece {
    Text(String),
    Env(String),
}

/// What a name expands to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Known {
    Str(String),
    Int(i64),
    /// `ENV_X` that the file does not set: resolved at run time.
    Later(String),
}

/// Why a value cannot be expanded, and the byte offset in it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BadFormat {
    pub offset: usize,
    pub message: String,
}

/// Expands `s` with `lookup` (a name to its value, `None` for a name
/// supervisord does not know here; `names` lists the known ones for the
/// message).
///
/// # Errors
/// A `%` that is not `%%` nor `%(name)` with a conversion, a name `lookup`
/// does not know, a number conversion of a string.
pub fn expand(s: &str, lookup: &dyn Fn(&str) -> Option<Known>, names: &str) -> Result<Vec<Piece>, BadFormat> {
    let mut out: Vec<Piece> = Vec::new();
    let mut text = String::new();
    let mut rest = s;
    let mut base = 0;
    while let Some(i) = rest.find('%') {
        text.push_str(&rest[..i]);
        let offset = base + i;
        let spec = &rest[i + 1..];
        let bad = |message: String| BadFormat { offset, message };
        if let Some(after) = spec.strip_prefix('%') {
            text.push('%');
            base += i + 2;
            rest = after;
            continue;
        }
        let Some(inner) = spec.strip_prefix('(') else {
            return Err(bad(format!(
                "a lone % ({:?}): supervisord takes %(name)s and %% only (write %% for a percent sign)",
                &rest[i..(i + 2).min(rest.len())]
            )));
        };
        let Some(close) = inner.find(')') else {
            return Err(bad("%( is not closed by )".to_owned()));
        };
        let name = &inner[..close];
        let tail = &inner[close + 1..];
        // Flags, width, precision, length, conversion.
        let flags_len = tail.find(|c: char| !"#0- +".contains(c)).unwrap_or(tail.len());
        let flags = &tail[..flags_len];
        let t = &tail[flags_len..];
        let width_len = t.find(|c: char| !c.is_ascii_digit()).unwrap_or(t.len());
        let width: usize = t[..width_len].parse().unwrap_or(0);
        let mut t = &t[width_len..];
        let mut precision = None;
        if let Some(p) = t.strip_prefix('.') {
            let n = p.find(|c: char| !c.is_ascii_digit()).unwrap_or(p.len());
            precision = Some(p[..n].parse::<usize>().unwrap_or(0));
            t = &p[n..];
        }
        t = t.strip_prefix(['h', 'l', 'L']).unwrap_or(t);
        let Some(conv) = t.chars().next() else {
            return Err(bad(format!("%({name}) has no conversion (write %({name})s)")));
        };
        let next = s.len() - t.len() + conv.len_utf8();
        let value = lookup(name)
            .ok_or_else(|| bad(format!("%({name}) names nothing supervisord knows here ({names})")))?;
        let formatted = match (value, conv) {
            (Known::Later(var), 's') if flags.is_empty() && width == 0 && precision.is_none() => {
                if !text.is_empty() {
                    out.push(Piece::Text(std::mem::take(&mut text)));
                }
                out.push(Piece::Env(var));
                base = next;
                rest = &s[base..];
                continue;
            }
            (Known::Later(_), _) => {
                return Err(bad(format!(
                    "%({name}) is left to the container's environment, where only a plain %({name})s can be written"
                )))
            }
            (Known::Str(v), 's' | 'r' | 'a') => {
                let v = if conv == 's' { v } else { format!("'{v}'") };
                let v: String = match precision {
                    Some(p) => v.chars().take(p).collect(),
                    None => v,
                };
                pad(&v, width, flags.contains('-'), false)
            }
            (Known::Int(n), 's' | 'r' | 'a' | 'd' | 'i' | 'u') => {
                let mut digits = n.unsigned_abs().to_string();
                if let Some(p) = precision.filter(|_| !matches!(conv, 's' | 'r' | 'a')) {
                    while digits.len() < p {
                        digits.insert(0, '0');
                    }
                }
                let sign = if n < 0 {
                    "-"
                } else if flags.contains('+') && !matches!(conv, 's' | 'r' | 'a') {
                    "+"
                } else if flags.contains(' ') && !matches!(conv, 's' | 'r' | 'a') {
                    " "
                } else {
                    ""
                };
                let zero = flags.contains('0') && !flags.contains('-') && !matches!(conv, 's' | 'r' | 'a');
                if zero {
                    let w = width.saturating_sub(sign.len());
                    format!("{sign}{}", pad(&digits, w, false, true))
                } else {
                    pad(&format!("{sign}{digits}"), width, flags.contains('-'), false)
                }
            }
            (Known::Str(_), 'd' | 'i' | 'u') => {
                return Err(bad(format!("%({name}){conv} needs a number, and {name} is a string (write %({name})s)")))
            }
            (_, c) => return Err(bad(format!("%({name}){c}: a conversion the importer does not take (use s or d)"))),
        };
        text.push_str(&formatted);
        base = next;
        rest = &s[base..];
    }
    text.push_str(rest);
    if !text.is_empty() || out.is_empty() {
        out.push(Piece::Text(text));
    }
    Ok(out)
}

fn pad(s: &str, width: usize, left: bool, zeros: bool) -> String {
    let n = s.chars().count();
    if n >= width {
        return s.to_owned();
    }
    let fill: String = std::iter::repeat_n(if zeros { '0' } else { ' ' }, width - n).collect();
    if left {
        format!("{s}{fill}")
    } else {
        format!("{fill}{s}")
    }
}

/// The text of `pieces` when nothing is left to run time.
pub fn plain(pieces: &[Piece]) -> Option<String> {
    let mut s = String::new();
    for p in pieces {
        match p {
            Piece::Text(t) => s.push_str(t),
            Piece::Env(_) => return None,
        }
    }
    Some(s)
}

/// A private character that stands for the `n`th run-time piece while a
/// value is split into words (the words are then cut at them again).
const MARK: char = '\u{E000}';

/// `pieces` as one string, each [`Piece::Env`] as `MARK` + its index.
pub fn marked(pieces: &[Piece]) -> (String, Vec<String>) {
    let mut s = String::new();
    let mut vars = Vec::new();
    for p in pieces {
        match p {
            Piece::Text(t) => s.push_str(t),
            Piece::Env(v) => {
                s.push(MARK);
                s.push(char::from_u32(0xE100 + vars.len() as u32).unwrap_or(MARK));
                vars.push(v.clone());
            }
        }
    }
    (s, vars)
}

/// A word of [`marked`] text back as pieces.
pub fn unmarked(word: &str, vars: &[String]) -> Vec<Piece> {
    let mut out = Vec::new();
    let mut text = String::new();
    let mut chars = word.chars();
    while let Some(c) = chars.next() {
        if c == MARK {
            let i = chars.next().map_or(0, |m| (m as u32).saturating_sub(0xE100) as usize);
            if !text.is_empty() {
                out.push(Piece::Text(std::mem::take(&mut text)));
            }
            out.push(Piece::Env(vars.get(i).cloned().unwrap_or_default()));
        } else {
            text.push(c);
        }
    }
    if !text.is_empty() || out.is_empty() {
        out.push(Piece::Text(text));
    }
    out
}

/// `KEY=val,KEY2="v,2"` as supervisord reads `environment`: Python's
/// `shlex` in its non-POSIX mode, with `/.+-():` as word characters; a
/// quoted token keeps its quotes, then loses them at both ends; every fourth
/// token (the `,`) is skipped (supervisord.org/configuration.html,
/// `environment`: "quote values that contain non-alphanumeric characters").
///
/// # Errors
/// An unclosed quote, or tokens that are not `KEY = value` triples.
pub fn key_values(s: &str) -> Result<Vec<(String, String)>, String> {
    let word = |c: char| {
        c.is_ascii_alphanumeric() || "_/.+-():".contains(c) || ('\u{E000}'..='\u{E1FF}').contains(&c)
    };
    let mut tokens: Vec<String> = Vec::new();
    let mut chars = s.chars().peekable();
    while let Some(c) = chars.next() {
        if c.is_whitespace() {
            continue;
        }
        if c == '#' {
            while chars.next_if(|c| *c != '\n').is_some() {}
            continue;
        }
        let mut t = String::from(c);
        if c == '"' || c == '\'' {
            loop {
                match chars.next() {
                    Some(q) if q == c => {
                        t.push(q);
                        break;
                    }
                    Some(o) => t.push(o),
                    None => return Err(format!("a {c} is not closed")),
                }
            }
        } else if word(c) {
            while let Some(n) = chars.next_if(|n| word(*n) || *n == '"' || *n == '\'') {
                t.push(n);
            }
        }
        tokens.push(t);
    }
    let mut out = Vec::new();
    let mut i = 0;
    while i < tokens.len() {
        match tokens.get(i..i + 3) {
            Some([k, eq, v]) if eq == "=" => out.push((k.clone(), v.trim_matches(['\'', '"']).to_owned())),
            _ => {
                return Err(format!(
                    "not KEY=value pairs separated by commas (near {:?}; quote a value with other characters than letters, digits and _/.+-():)",
                    tokens[i]
                ))
            }
        }
        i += 4;
    }
    Ok(out)
}

/// One word for `/bin/sh`: literal text single-quoted, each run-time
/// variable as `"${X?}"` (the shell refuses to run the command when X is
/// unset, as supervisord refuses the file).
pub fn shell_word(pieces: &[Piece]) -> String {
    let mut s = String::new();
    for p in pieces {
        match p {
            Piece::Text(t) if t.is_empty() => {}
            Piece::Text(t) if t.bytes().all(|b| b.is_ascii_alphanumeric() || b"_/.,:=+-@%".contains(&b)) => {
                s.push_str(t)
            }
            Piece::Text(t) => {
                s.push('\'');
                s.push_str(&t.replace('\'', r"'\''"));
                s.push('\'');
            }
            Piece::Env(v) => {
                s.push_str("\"${");
                s.push_str(v);
                s.push_str("?}\"");
            }
        }
    }
    if s.is_empty() {
        s.push_str("''");
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    fn look(name: &str) -> Option<Known> {
        match name {
            "program_name" => Some(Known::Str("web".into())),
            "process_num" => Some(Known::Int(3)),
            "ENV_HOME" => Some(Known::Later("HOME".into())),
            _ => None,
        }
    }

    fn text(s: &str) -> String {
        plain(&expand(s, &look, "").unwrap()).unwrap()
    }

    #[test]
    fn percent_formats_as_python_does() {
        assert_eq!(text("%(program_name)s_%(process_num)02d"), "web_03");
        assert_eq!(text("%(process_num)d %(process_num)s %(process_num)-3d| %%"), "3 3 3  | %");
        assert_eq!(text("%(process_num)+04d %(program_name)5s"), "+003   web");
        assert_eq!(text("no expansion"), "no expansion");
        let p = expand("a %(ENV_HOME)s/x", &look, "").unwrap();
        assert_eq!(p, vec![Piece::Text("a ".into()), Piece::Env("HOME".into()), Piece::Text("/x".into())]);
        let e = expand("date +%Y", &look, "").unwrap_err();
        assert_eq!(e.offset, 6);
        let e = expand("x %(nope)s", &look, "").unwrap_err();
        assert_eq!(e.offset, 2);
        assert!(e.message.contains("nope"));
        assert!(expand("%(program_name)d", &look, "").is_err());
        assert!(expand("%(program_name", &look, "").is_err());
    }

    #[test]
    fn key_values_read_as_supervisord_reads_them() {
        let kv = key_values("A=\"x,y\",B=2, C='/a:/b' ,D=http://h:80/p").unwrap();
        let want = [("A", "x,y"), ("B", "2"), ("C", "/a:/b"), ("D", "http://h:80/p")];
        assert_eq!(kv, want.map(|(k, v)| (k.to_owned(), v.to_owned())));
        assert!(key_values("A=a@b").is_err());
        assert!(key_values("A=\"x").is_err());
        assert_eq!(key_values("").unwrap(), vec![]);
    }

    #[test]
    fn shell_words_quote_all_but_the_variables() {
        let w = shell_word(&[
            Piece::Text("--home=".into()),
            Piece::Env("HOME".into()),
            Piece::Text(" it's".into()),
        ]);
        assert_eq!(w, r#"--home="${HOME?}"' it'\''s'"#);
        assert_eq!(shell_word(&[Piece::Text(String::new())]), "''");
    }
}
