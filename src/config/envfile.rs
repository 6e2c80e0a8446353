//! Reads `env_file`: the syntax of Compose's env files, as documented in
//! docs.docker.com/compose/how-tos/environment-variables/variable-interpolation/#env-file-syntax
//! (the Compose importer reads a service's `env_file` and the `.env` beside a
//! Compose file with this same reader).
//!
//! - `KEY=VALUE` per line (spaces around `=` allowed, an `export ` prefix
//!   allowed); blank lines and lines starting with `#` are skipped.
//! - Unquoted values are trimmed; ` #` (a blank, then `#`) starts an inline
//!   comment; `${VAR}` and its forms are interpolated ([`interpolate`]).
//! - Single-quoted values are literal (`'$OTHER'` is `$OTHER`), except that
//!   `\'` is a quote.
//! - Double-quoted values take the escapes `\n`, `\r`, `\t`, `\\`, `\"` (and
//!   `\$` for a literal `$`; another `\x` stays `\x`), then are interpolated.
//! - A quoted value may span lines; after the closing quote only blanks and a
//!   `# comment` may follow.
//!
//! Interpolation looks a name up in the variables set earlier in the same file
//! first, then in the lookup given (for podinit's own `env_file`: podinit's
//! environment). An unset variable without a default is the empty string, as
//! in Compose.
//!
//! Differences from Compose: a line without `=` is an error (Compose takes
//! the variable from its own environment), and names are limited to letters,
//! digits, `_`, `.` and `-`.

/// Parses env-file text into pairs in file order, interpolating from earlier
/// lines and podinit's own environment.
///
/// # Errors
/// `line N: ...` for a line without `=`, an empty or invalid key, an unclosed
/// quote, text after a closing quote, a NUL byte, or a bad `${...}`.
pub fn parse(text: &str) -> Result<Vec<(String, String)>, String> {
    parse_with(text, &mut |name| std::env::var(name).ok())
}

/// [`parse`], looking up variables the file does not set with `lookup`.
///
/// # Errors
/// As [`parse`].
pub fn parse_with(
    text: &str,
    lookup: &mut dyn FnMut(&str) -> Option<String>,
) -> Result<Vec<(String, String)>, String> {
    parse_inner(text, Some(lookup))
}

/// [`parse`] without interpolation: `$` is kept as written. For the env file
/// an init writes (`PODINIT_ENV_FILE`): values a program wrote are data, and a
/// `$` in a password must not become an empty variable.
///
/// # Errors
/// As [`parse`], but for `${...}`, which is not read.
pub fn parse_literal(text: &str) -> Result<Vec<(String, String)>, String> {
    parse_inner(text, None)
}

/// Looks a variable up by name.
type Lookup<'a> = &'a mut dyn FnMut(&str) -> Option<String>;

fn parse_inner(text: &str, mut lookup: Option<Lookup>) -> Result<Vec<(String, String)>, String> {
    let mut pairs: Vec<(String, String)> = Vec::new();
    let mut rest = text.strip_prefix('\u{feff}').unwrap_or(text);
    let mut line_no = 0;
    while !rest.is_empty() {
        line_no += 1;
        let (line, after) = rest.split_once('\n').unwrap_or((rest, ""));
        rest = after;
        let t = line.trim();
        if t.is_empty() || t.starts_with('#') {
            continue;
        }
        let start = line_no;
        let t = t.strip_prefix("export ").map_or(t, str::trim_start);
        let Some((key, value)) = t.split_once('=') else {
            return Err(format!("line {start}: expected KEY=VALUE"));
        };
        let key = key.trim();
        if key.is_empty()
            || !key.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'.' || b == b'-')
        {
            return Err(format!("line {start}: invalid variable name {key:?}"));
        }
        let value = value.trim_start();
        let mut resolve = |s: &str, pairs: &[(String, String)]| {
            let Some(lookup) = lookup.as_mut() else { return Ok(s.to_owned()) };
            interpolate(s, &mut |name| {
                pairs.iter().rev().find(|(k, _)| k == name).map(|(_, v)| v.clone()).or_else(|| lookup(name))
            })
            .map_err(|e| format!("line {start}: {key}: {e}"))
        };
        let value = match value.chars().next() {
            Some(q @ ('"' | '\'')) => {
                // The quoted text may go on over the next lines.
                let mut body = String::new();
                let mut chars = value[1..].chars();
                let mut tail = None;
                loop {
                    match chars.next() {
                        Some(c) if c == q => {
                            tail = Some(chars.as_str().to_owned());
                            break;
                        }
                        Some('\\') => match (q, chars.next()) {
                            ('\'', Some('\'')) => body.push('\''),
                            ('"', Some('n')) => body.push('\n'),
                            ('"', Some('r')) => body.push('\r'),
                            ('"', Some('t')) => body.push('\t'),
                            ('"', Some('\\')) => body.push('\\'),
                            ('"', Some('"')) => body.push('"'),
                            // A `$` that interpolation keeps: `$$`.
                            ('"', Some('$')) => body.push_str("$$"),
                            (_, Some(c)) => {
                                body.push('\\');
                                body.push(c);
                            }
                            (_, None) => body.push('\\'),
                        },
                        Some(c) => body.push(c),
                        None => {
                            if rest.is_empty() {
                                break;
                            }
                            let (next, after) = rest.split_once('\n').unwrap_or((rest, ""));
                            rest = after;
                            line_no += 1;
                            body.push('\n');
                            chars = next.chars();
                        }
                    }
                }
                let Some(tail) = tail else {
                    return Err(format!("line {start}: the {q} that opens the value of {key} is not closed"));
                };
                let tail = tail.trim();
                if !tail.is_empty() && !tail.starts_with('#') {
                    return Err(format!(
                        "line {start}: text after the closing {q} of {key}'s value: {tail:?}"
                    ));
                }
                if q == '"' {
                    resolve(&body, &pairs)?
                } else {
                    body
                }
            }
            _ => {
                let value = match value.find(" #").or_else(|| value.find("\t#")) {
                    Some(i) => &value[..i],
                    None => value,
                };
                resolve(value.trim_end(), &pairs)?
            }
        };
        if value.contains('\0') {
            return Err(format!("line {start}: the value of {key} has a NUL byte"));
        }
        pairs.push((key.to_owned(), value));
    }
    Ok(pairs)
}

/// Interpolates `s` as Compose interpolates its files and env files
/// (docs.docker.com/reference/compose-file/interpolation/): `$VAR`,
/// `${VAR}`, `${VAR:-default}` (unset or empty), `${VAR-default}` (unset),
/// `${VAR:?error}`, `${VAR?error}`, `${VAR:+alternative}`,
/// `${VAR+alternative}`, nested in the default, error or alternative text;
/// `$$` is a `$`; a `$` before anything else stays as it is. An unset
/// variable without a default is the empty string (`lookup` sees every name
/// asked for, and can note the unset ones).
///
/// # Errors
/// A `${` without its `}`, a bad name or operator (`${VAR/a/b}`), or the
/// message of `${VAR:?message}` for an unset variable.
pub fn interpolate(s: &str, lookup: &mut dyn FnMut(&str) -> Option<String>) -> Result<String, String> {
    let mut out = String::with_capacity(s.len());
    let mut rest = s;
    while let Some(i) = rest.find('$') {
        out.push_str(&rest[..i]);
        let after = &rest[i + 1..];
        if let Some(a) = after.strip_prefix('$') {
            out.push('$');
            rest = a;
        } else if let Some(inner) = after.strip_prefix('{') {
            let end = closing_brace(inner)
                .ok_or_else(|| format!("invalid interpolation: {s:?} has a `${{` without its `}}`"))?;
            out.push_str(&braced(&inner[..end], lookup)?);
            rest = &inner[end + 1..];
        } else if after.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_') {
            let n = after.find(|c: char| !(c.is_ascii_alphanumeric() || c == '_')).unwrap_or(after.len());
            out.push_str(&lookup(&after[..n]).unwrap_or_default());
            rest = &after[n..];
        } else {
            out.push('$');
            rest = after;
        }
    }
    out.push_str(rest);
    Ok(out)
}

/// Where the `}` that closes a `${` is in `inner` (the text after `${`),
/// counting nested `${`...`}` and skipping `$$`.
fn closing_brace(inner: &str) -> Option<usize> {
    let b = inner.as_bytes();
    let (mut depth, mut i) = (0usize, 0);
    while i < b.len() {
        match b[i] {
            b'$' if b.get(i + 1) == Some(&b'$') => i += 1,
            b'$' if b.get(i + 1) == Some(&b'{') => {
                depth += 1;
                i += 1;
            }
            b'}' if depth == 0 => return Some(i),
            b'}' => depth -= 1,
            _ => {}
        }
        i += 1;
    }
    None
}

/// The value of one `${...}` (without `${` and `}`).
fn braced(expr: &str, lookup: &mut dyn FnMut(&str) -> Option<String>) -> Result<String, String> {
    let n = expr.find(|c: char| !(c.is_ascii_alphanumeric() || c == '_')).unwrap_or(expr.len());
    let (name, op) = expr.split_at(n);
    if name.is_empty() || name.starts_with(|c: char| c.is_ascii_digit()) {
        return Err(format!("invalid interpolation: ${{{expr}}} (a variable name is a letter or `_`, then letters, digits, `_`)"));
    }
    let value = lookup(name);
    let set = value.is_some();
    let non_empty = value.as_deref().is_some_and(|v| !v.is_empty());
    let (test, word) = match op {
        "" => return Ok(value.unwrap_or_default()),
        _ if op.starts_with(":-") => (non_empty, &op[2..]),
        _ if op.starts_with(":?") => (non_empty, &op[2..]),
        _ if op.starts_with(":+") => (non_empty, &op[2..]),
        _ if op.starts_with(['-', '?', '+']) => (set, &op[1..]),
        _ => {
            return Err(format!(
                "invalid interpolation: ${{{expr}}} (Compose has :- - :? ? :+ +, nothing else)"
            ))
        }
    };
    let kind = op.trim_start_matches(':').as_bytes()[0];
    match (kind, test) {
        (b'-', true) | (b'?', true) => Ok(value.unwrap_or_default()),
        (b'-', false) | (b'+', true) => interpolate(word, lookup),
        (b'+', false) => Ok(String::new()),
        _ => {
            let message = interpolate(word, lookup)?;
            Err(if message.is_empty() {
                format!("required variable {name} is missing a value")
            } else {
                format!("required variable {name} is missing a value: {message}")
            })
        }
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn an_init_env_file_is_read_literally() {
        let got = super::parse_literal("A=1\nB=x$A${A}\nC=\"q\\\"$A\"\n").unwrap();
        assert_eq!(got[1].1, "x$A${A}");
        assert_eq!(got[2].1, "q\"$A");
    }

    use super::{interpolate, parse, parse_with};

    fn env<'a>(pairs: &'a [(&'a str, &'a str)]) -> impl FnMut(&str) -> Option<String> + 'a {
        move |name| pairs.iter().find(|(k, _)| *k == name).map(|(_, v)| (*v).to_owned())
    }

    fn pairs(text: &str, vars: &[(&str, &str)]) -> Vec<(String, String)> {
        parse_with(text, &mut env(vars)).unwrap_or_else(|e| panic!("{e}\n{text}"))
    }

    #[test]
    fn a_nul_byte_in_a_value_is_refused() {
        assert!(super::parse("A=x\0y\n").unwrap_err().contains("NUL"));
    }

    #[test]
    fn compose_style_lines() {
        // `E="unbalanced` used to be read as the value `"unbalanced`; a quote
        // opens a value that may span lines in Compose, so an unclosed one is
        // an error now (bad_lines_are_named).
        let text = "# comment\n\nA=1\nexport B = two \nC=\"quoted value\"\nD='single'\nF=\nG=a=b\n";
        let got = parse(text).unwrap();
        let want =
            [("A", "1"), ("B", "two"), ("C", "quoted value"), ("D", "single"), ("F", ""), ("G", "a=b")];
        assert_eq!(got.len(), want.len());
        for ((k, v), (wk, wv)) in got.iter().zip(want) {
            assert_eq!((k.as_str(), v.as_str()), (wk, wv));
        }
    }

    #[test]
    fn bad_lines_are_named() {
        assert_eq!(parse("A=1\nnope\n").unwrap_err(), "line 2: expected KEY=VALUE");
        assert!(parse("=x\n").unwrap_err().contains("line 1"));
        assert!(parse("A=1\nE=\"unbalanced\n").unwrap_err().contains("line 2: the \" that opens"));
        assert!(parse("A='x' y\n").unwrap_err().contains("text after the closing"));
        assert!(parse("A=${B\n").unwrap_err().contains("line 1: A: invalid interpolation"));
    }

    /// The examples of the Compose documentation's "env file syntax".
    #[test]
    fn quoting_and_comments_as_compose_documents_them() {
        let text = r#"
VAL1=VAL # comment
VAL2=VAL# not a comment
VAL3="VAL # not a comment"
VAL4="VAL" # comment
SQ1='$OTHER'
SQ2='${OTHER}'
SQ3='Let\'s go!'
DQ1="{\"hello\": \"json\"}"
DQ2="some\tvalue"
SQ4='some\tvalue'
DQ3="q\"uote"
DQ4="a\\b\nc"
DQ5="cost \$5"
"#;
        let got = pairs(text, &[("OTHER", "other")]);
        let want = [
            ("VAL1", "VAL"),
            ("VAL2", "VAL# not a comment"),
            ("VAL3", "VAL # not a comment"),
            ("VAL4", "VAL"),
            ("SQ1", "$OTHER"),
            ("SQ2", "${OTHER}"),
            ("SQ3", "Let's go!"),
            ("DQ1", "{\"hello\": \"json\"}"),
            ("DQ2", "some\tvalue"),
            ("SQ4", "some\\tvalue"),
            ("DQ3", "q\"uote"),
            ("DQ4", "a\\b\nc"),
            ("DQ5", "cost $5"),
        ];
        let got: Vec<(&str, &str)> = got.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
        assert_eq!(got, want);
    }

    #[test]
    fn values_interpolate_from_earlier_lines_then_the_environment() {
        let text = "HOST=db\nURL=postgres://${HOST}:${PORT:-5432}/$NAME\nQ=\"${HOST}-x\"\nS='${HOST}'\nHOST=late\nME=${HOST}\n";
        let got = pairs(text, &[("NAME", "app"), ("HOST", "from-env")]);
        assert_eq!(got[1].1, "postgres://db:5432/app");
        assert_eq!(got[2].1, "db-x");
        assert_eq!(got[3].1, "${HOST}");
        assert_eq!(got[5].1, "late");
    }

    #[test]
    fn a_quoted_value_may_span_lines() {
        let got = pairs("KEY=\"line 1\nline 2\"\nNEXT=1\n", &[]);
        assert_eq!(got, [("KEY".into(), "line 1\nline 2".into()), ("NEXT".into(), "1".into())]);
        let e = parse("A=1\nB='x\ny\n").unwrap_err();
        assert!(e.starts_with("line 2:"), "{e}");
    }

    #[test]
    fn interpolation_has_every_form_compose_documents() {
        let vars = [("SET", "v"), ("EMPTY", "")];
        let cases = [
            ("$SET/${SET}", "v/v"),
            ("${UNSET}|$UNSET|", "||"),
            ("${UNSET:-d} ${EMPTY:-d} ${SET:-d}", "d d v"),
            ("${UNSET-d} ${EMPTY-d} ${SET-d}", "d  v"),
            ("${UNSET:+a} ${EMPTY:+a} ${SET:+a}", "  a"),
            ("${UNSET+a} ${EMPTY+a} ${SET+a}", " a a"),
            ("${UNSET:-${ALSO:-${SET}}}", "v"),
            ("$$SET $$ $ 5$ $1 ${SET}}", "$SET $ $ 5$ $1 v}"),
            ("${EMPTY?x}${SET:?x}", "v"),
        ];
        for (s, want) in cases {
            assert_eq!(interpolate(s, &mut env(&vars)).unwrap(), want, "{s}");
        }
        let e = interpolate("${UNSET:?give it}", &mut env(&vars)).unwrap_err();
        assert_eq!(e, "required variable UNSET is missing a value: give it");
        assert!(interpolate("${EMPTY:?}", &mut env(&vars)).is_err());
        assert!(interpolate("${SET/a/b}", &mut env(&vars)).is_err());
        assert!(interpolate("${}", &mut env(&vars)).is_err());
        assert!(interpolate("${SET", &mut env(&vars)).is_err());
    }
}
