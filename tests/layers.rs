//! One door to the kernel (`src/lib.rs`): `src/sys/` is the one module that
//! writes `unsafe` and calls `libc` or `nix` functions.
//!
//! The compiler enforces most of it: `unsafe_code` is denied at the crate
//! root and allowed on `mod sys` alone, and every libc function is
//! `unsafe`. This test covers what the lint does not: a safe `nix`
//! function called elsewhere, a second `allow(unsafe_code)`, the safe libc
//! functions. It reads the sources as text, not as Rust, so it is only as
//! good as these rules, outside `src/sys/`:
//!
//! - comments are left out (a line's code ends at its first `//`), and so
//!   is test code: an inline `#[cfg(test)] mod NAME {` to the end of its
//!   file (clippy's `items_after_test_module` keeps test modules last), and
//!   the file of a `#[cfg(test)] mod NAME;`;
//! - no code holds `unsafe` (as a word or in `unsafe_code`), except the
//!   crate roots' `#![deny(unsafe_code)]` and the `#[allow(unsafe_code)]`
//!   right above `pub mod sys;` in `src/lib.rs`;
//! - no code names a `nix::` path at all (nix is `sys`'s alone);
//! - no code calls `libc::NAME(...)`, but for `SIGRTMIN()` and `SIGRTMAX()`,
//!   which are functions only because glibc decides those numbers at run
//!   time (no system call). `libc` constants and types may be named.
//!
//! Not seen: a call through a `use libc::name` import (the `unsafe_code`
//! lint catches its call) or one written inside a macro of podinit's own.

use std::path::{Path, PathBuf};

/// Every `.rs` file under `dir`, sorted.
fn rust_files(dir: &Path) -> Vec<PathBuf> {
    let mut files = Vec::new();
    let mut dirs = vec![dir.to_path_buf()];
    while let Some(d) = dirs.pop() {
        for entry in std::fs::read_dir(&d).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                dirs.push(path);
            } else if path.extension().is_some_and(|e| e == "rs") {
                files.push(path);
            }
        }
    }
    files.sort();
    files
}

/// The file of each `#[cfg(test)] mod NAME;` declared in `file`.
fn test_module_files(file: &Path, text: &str) -> Vec<PathBuf> {
    // A module's children live beside `lib.rs`/`main.rs`/`mod.rs`, else in
    // the folder named after the file.
    let stem = file.file_stem().unwrap().to_str().unwrap();
    let dir = match stem {
        "lib" | "main" | "mod" => file.parent().unwrap().to_path_buf(),
        _ => file.with_extension(""),
    };
    let lines: Vec<&str> = text.lines().map(str::trim).collect();
    lines
        .windows(2)
        .filter(|w| w[0] == "#[cfg(test)]")
        .filter_map(|w| w[1].strip_prefix("mod ")?.strip_suffix(';'))
        .map(|name| dir.join(format!("{name}.rs")))
        .collect()
}

/// `(line number, code)` of every line of `text` that is not comment or
/// inline test module (see the module's rules).
fn code_lines(text: &str) -> Vec<(usize, String)> {
    let lines: Vec<&str> = text.lines().collect();
    let mut out = Vec::new();
    for (i, line) in lines.iter().enumerate() {
        let next = lines.get(i + 1).map_or("", |l| l.trim());
        if line.trim() == "#[cfg(test)]" && next.starts_with("mod ") && next.ends_with('{') {
            break;
        }
        let code = line.split("//").next().unwrap_or_default().trim();
        if !code.is_empty() {
            out.push((i + 1, code.to_owned()));
        }
    }
    out
}

/// The first name after each `KRATE::` in `code` that starts a path (not
/// the end of a longer one, as `unix::` is), with what follows it.
fn paths<'a>(code: &'a str, krate: &str) -> Vec<(&'a str, &'a str)> {
    let prefix = format!("{krate}::");
    let mut found = Vec::new();
    let mut rest = code;
    while let Some(at) = rest.find(&prefix) {
        let whole = !rest[..at].ends_with(|c: char| c.is_alphanumeric() || c == '_');
        rest = &rest[at + prefix.len()..];
        let len = rest.find(|c: char| !(c.is_alphanumeric() || c == '_')).unwrap_or(rest.len());
        if whole {
            found.push(rest.split_at(len));
        }
    }
    found
}

/// What `code` (one line) does that only `src/sys/` may do.
fn violations(code: &str) -> Vec<String> {
    let mut found = Vec::new();
    if code.contains("unsafe") {
        found.push("unsafe".to_owned());
    }
    if !paths(code, "nix").is_empty() {
        found.push("a nix path".to_owned());
    }
    for (name, after) in paths(code, "libc") {
        if after.trim_start().starts_with('(') && !matches!(name, "SIGRTMIN" | "SIGRTMAX") {
            found.push(format!("libc::{name}()"));
        }
    }
    found
}

fn src() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
}

#[test]
fn only_sys_writes_unsafe_or_calls_libc_and_nix() {
    let src = src();
    let sys = src.join("sys");
    let files: Vec<(PathBuf, String)> = rust_files(&src)
        .into_iter()
        .map(|f| {
            let text = std::fs::read_to_string(&f).unwrap();
            (f, text)
        })
        .collect();
    let skip: Vec<PathBuf> = files.iter().flat_map(|(f, t)| test_module_files(f, t)).collect();
    let mut bad = Vec::new();
    for (file, text) in &files {
        if file.starts_with(&sys) || skip.contains(file) {
            continue;
        }
        let rel = file.strip_prefix(&src).unwrap();
        let root = rel == Path::new("lib.rs") || rel == Path::new("main.rs");
        let lines = code_lines(text);
        for (k, (n, code)) in lines.iter().enumerate() {
            let allowed = root && code == "#![deny(unsafe_code)]"
                || rel == Path::new("lib.rs")
                    && code == "#[allow(unsafe_code)]"
                    && lines.get(k + 1).is_some_and(|(_, next)| next == "pub mod sys;");
            if allowed {
                continue;
            }
            for what in violations(code) {
                bad.push(format!("src/{}:{n}: {what}: {code}", rel.display()));
            }
        }
    }
    assert!(bad.is_empty(), "only src/sys/ may do these:\n{}", bad.join("\n"));
}

/// The rules see what they must: run on `src/sys/`, they find its unsafe
/// blocks and calls (else the test above would pass on anything).
#[test]
fn the_check_finds_what_sys_does() {
    let mut seen: Vec<String> = Vec::new();
    for file in rust_files(&src().join("sys")) {
        let text = std::fs::read_to_string(&file).unwrap();
        for (_, code) in code_lines(&text) {
            seen.extend(violations(&code));
        }
    }
    for want in ["unsafe", "a nix path", "libc::kill()", "libc::waitid()"] {
        assert!(seen.iter().any(|s| s == want), "{want} not found in src/sys: {seen:?}");
    }
    assert_eq!(violations("let n = libc::SIGRTMAX() - libc::SIGTERM;"), Vec::<String>::new());
    assert_eq!(violations("let x: libc::c_int = libc::c_int::from(3u8);"), Vec::<String>::new());
    assert_eq!(violations("unsafe { libc::kill (1, 9) }"), vec!["unsafe", "libc::kill()"]);
    assert_eq!(
        violations("use std::os::unix::fs::PermissionsExt; my_libc::kill(1, 9);"),
        Vec::<String>::new()
    );
    assert_eq!(violations("let me = nix::unistd::getpid();"), vec!["a nix path"]);
}
