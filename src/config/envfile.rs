//! Reads `env_file`: the format of Docker Compose's env files.
//!
//! `KEY=VALUE` per line; blank lines and lines starting with `#` are skipped; an
//! `export ` prefix is allowed; one pair of matching surrounding quotes (`"` or
//! `'`) is stripped from the value. No variable expansion is done (podinit never
//! interprets what a value says).

/// Parses env-file text into pairs in file order.
///
/// # Errors
/// `line N: ...` for a line without `=` or with an empty or invalid key.
pub fn parse(text: &str) -> Result<Vec<(String, String)>, String> {
    let mut pairs = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let t = line.trim();
        if t.is_empty() || t.starts_with('#') {
            continue;
        }
        let t = t.strip_prefix("export ").map_or(t, str::trim_start);
        let Some((key, value)) = t.split_once('=') else {
            return Err(format!("line {}: expected KEY=VALUE", i + 1));
        };
        let key = key.trim();
        if key.is_empty()
            || !key.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'.' || b == b'-')
        {
            return Err(format!("line {}: invalid variable name {key:?}", i + 1));
        }
        let value = value.trim();
        if value.contains('\0') {
            return Err(format!("line {}: the value of {key} has a NUL byte", i + 1));
        }
        let value = ['"', '\'']
            .iter()
            .find_map(|&q| value.strip_prefix(q).and_then(|v| v.strip_suffix(q)).filter(|_| value.len() >= 2))
            .unwrap_or(value);
        pairs.push((key.to_owned(), value.to_owned()));
    }
    Ok(pairs)
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_nul_byte_in_a_value_is_refused() {
        assert!(super::parse("A=x\0y\n").unwrap_err().contains("NUL"));
    }

    use super::parse;

    #[test]
    fn compose_style_lines() {
        let text =
            "# comment\n\nA=1\nexport B = two \nC=\"quoted value\"\nD='single'\nE=\"unbalanced\nF=\nG=a=b\n";
        let got = parse(text).unwrap();
        let want = [
            ("A", "1"),
            ("B", "two"),
            ("C", "quoted value"),
            ("D", "single"),
            ("E", "\"unbalanced"),
            ("F", ""),
            ("G", "a=b"),
        ];
        assert_eq!(got.len(), want.len());
        for ((k, v), (wk, wv)) in got.iter().zip(want) {
            assert_eq!((k.as_str(), v.as_str()), (wk, wv));
        }
    }

    #[test]
    fn bad_lines_are_named() {
        assert_eq!(parse("A=1\nnope\n").unwrap_err(), "line 2: expected KEY=VALUE");
        assert!(parse("=x\n").unwrap_err().contains("line 1"));
    }
}
