//! Every Dockerfile of the repository uses only the build arguments it can
//! see, checked without a Docker engine or a registry (the engine the Docker
//! tests use has no registry access, so the top-level Dockerfile's registry
//! route cannot be built where the tests run).
//!
//! Docker's scoping rules (docs.docker.com, Dockerfile reference, "Understand
//! how ARG and FROM interact" and "Scope"): an `ARG` before the first `FROM`
//! is global and only `FROM` lines see it; an `ARG` after a `FROM` belongs to
//! that stage alone. So:
//!
//! - every variable of a `FROM` line must be a global `ARG`, with a non-empty
//!   default (else `docker build` without `--build-arg` fails with `base name
//!   (${NAME}) should not be blank`); the platform arguments
//!   (`BUILDPLATFORM`, `TARGETARCH`, ...) are predefined there;
//! - every variable that Docker itself expands in a stage's instruction
//!   (`ADD`, `COPY`, `ENV`, `EXPOSE`, `LABEL`, `STOPSIGNAL`, `USER`, `VOLUME`,
//!   `WORKDIR`) must be declared by an `ARG` or `ENV` of that stage, before
//!   it: a global `ARG` is blank there unless the stage names it again.
//!
//! `RUN`, `CMD` and the like are left alone: their variables are the shell's.
//! A variable with a fallback (`${NAME:-x}`, `${NAME-x}`) is never blank, so
//! it is not asked for.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// Platform arguments BuildKit predefines in the global scope.
const PLATFORM_ARGS: &[&str] = &[
    "BUILDPLATFORM",
    "BUILDOS",
    "BUILDARCH",
    "BUILDVARIANT",
    "TARGETPLATFORM",
    "TARGETOS",
    "TARGETARCH",
    "TARGETVARIANT",
];

/// Instructions whose arguments Docker expands variables in (besides `FROM`).
const EXPANDED: &[&str] =
    &["ADD", "COPY", "ENV", "EXPOSE", "LABEL", "STOPSIGNAL", "USER", "VOLUME", "WORKDIR"];

/// The instructions of a Dockerfile: (line number, keyword in capitals, the
/// rest), with continuation lines joined and comment lines dropped.
fn instructions(text: &str) -> Vec<(usize, String, String)> {
    let mut out = Vec::new();
    let mut current: Option<(usize, String)> = None;
    for (i, line) in text.lines().enumerate() {
        let trimmed = line.trim();
        // An empty line inside a continuation is skipped too, as Docker does.
        if trimmed.starts_with('#') || trimmed.is_empty() {
            continue;
        }
        let (joined, more) = match trimmed.strip_suffix('\\') {
            Some(head) => (head, true),
            None => (trimmed, false),
        };
        let (at, mut text) = current.take().unwrap_or((i + 1, String::new()));
        text.push_str(joined.trim_end());
        text.push(' ');
        if more {
            current = Some((at, text));
        } else {
            let text = text.trim();
            let (word, rest) = text.split_once(char::is_whitespace).unwrap_or((text, ""));
            out.push((at, word.to_ascii_uppercase(), rest.trim().to_owned()));
        }
    }
    if let Some((at, text)) = current {
        let text = text.trim();
        let (word, rest) = text.split_once(char::is_whitespace).unwrap_or((text, ""));
        out.push((at, word.to_ascii_uppercase(), rest.trim().to_owned()));
    }
    out
}

/// The variables `text` expands, without those that have a fallback
/// (`${A:-x}`, `${A-x}`); `\$` is a literal dollar.
fn variables(text: &str) -> Vec<String> {
    let b = text.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b'\\' => i += 2,
            b'$' if b.get(i + 1) == Some(&b'{') => {
                let body = &text[i + 2..];
                let end = body.find('}').unwrap_or(body.len());
                let body = &body[..end];
                let name_len =
                    body.find(|c: char| !(c.is_ascii_alphanumeric() || c == '_')).unwrap_or(body.len());
                let modifier = &body[name_len..];
                if !(modifier.starts_with(":-") || modifier.starts_with('-')) {
                    out.push(body[..name_len].to_owned());
                }
                i += 2 + end + 1;
            }
            b'$' => {
                let rest = &text[i + 1..];
                let len = rest.find(|c: char| !(c.is_ascii_alphanumeric() || c == '_')).unwrap_or(rest.len());
                if len > 0 {
                    out.push(rest[..len].to_owned());
                }
                i += 1 + len;
            }
            _ => i += 1,
        }
    }
    out
}

/// The names an `ARG` or `ENV` instruction declares, with the value it gives
/// each (`None`: an `ARG` without a default).
fn declared(keyword: &str, rest: &str) -> Vec<(String, Option<String>)> {
    let words: Vec<&str> = rest.split_whitespace().collect();
    // `ENV NAME value with spaces`, the old form: one name.
    if keyword == "ENV" && words.first().is_some_and(|w| !w.contains('=')) {
        return words.first().map(|w| ((*w).to_owned(), Some(words[1..].join(" ")))).into_iter().collect();
    }
    words
        .iter()
        .map(|w| match w.split_once('=') {
            Some((name, value)) => (name.to_owned(), Some(value.trim_matches('"').to_owned())),
            None => ((*w).to_owned(), None),
        })
        .collect()
}

/// What is wrong with the Dockerfile `text`, one line per finding.
fn check(text: &str) -> Vec<String> {
    let mut problems = Vec::new();
    let mut global: BTreeMap<String, Option<String>> = BTreeMap::new();
    // The current stage's declared names; `None` before the first FROM.
    let mut stage: Option<Vec<String>> = None;
    for (line, keyword, rest) in instructions(text) {
        match (keyword.as_str(), &mut stage) {
            ("FROM", _) => {
                for var in variables(&rest) {
                    if PLATFORM_ARGS.contains(&var.as_str()) {
                        continue;
                    }
                    match global.get(&var) {
                        None if stage.is_some() => problems.push(format!(
                            "line {line}: FROM uses ${{{var}}}, which no ARG before the first FROM declares \
                             (an ARG after a FROM belongs to that stage, and FROM sees it blank)"
                        )),
                        None => problems.push(format!(
                            "line {line}: FROM uses ${{{var}}}, which no ARG before it declares"
                        )),
                        Some(None) => problems.push(format!(
                            "line {line}: FROM uses ${{{var}}}, whose global ARG has no default \
                             (blank without --build-arg)"
                        )),
                        Some(Some(v)) if v.is_empty() => problems.push(format!(
                            "line {line}: FROM uses ${{{var}}}, whose global ARG defaults to nothing"
                        )),
                        Some(Some(_)) => {}
                    }
                }
                stage = Some(Vec::new());
            }
            ("ARG", None) => {
                global.extend(declared("ARG", &rest));
            }
            (_, None) => problems.push(format!("line {line}: {keyword} before the first FROM")),
            (kw, Some(names)) => {
                if EXPANDED.contains(&kw) {
                    for var in variables(&rest) {
                        if !names.contains(&var) {
                            let hint = if global.contains_key(&var) {
                                format!(" (a global ARG: the stage must name it again, `ARG {var}`)")
                            } else {
                                String::new()
                            };
                            problems.push(format!(
                                "line {line}: {kw} uses ${{{var}}}, which no ARG or ENV of its stage declares{hint}"
                            ));
                        }
                    }
                }
                if kw == "ARG" || kw == "ENV" {
                    names.extend(declared(kw, &rest).into_iter().map(|(name, _)| name));
                }
            }
        }
    }
    if stage.is_none() {
        problems.push("no FROM".to_owned());
    }
    problems
}

/// The repository's Dockerfiles (`Dockerfile` and `*.Dockerfile`, `Dockerfile.*`),
/// outside `.git` and build output (`target`, `dist`).
fn dockerfiles(dir: &Path, out: &mut Vec<PathBuf>) {
    for e in std::fs::read_dir(dir).unwrap() {
        let e = e.unwrap();
        let name = e.file_name().to_string_lossy().into_owned();
        let path = e.path();
        if e.file_type().unwrap().is_dir() {
            if ![".git", "target", "dist"].contains(&name.as_str()) {
                dockerfiles(&path, out);
            }
        } else if name == "Dockerfile" || name.starts_with("Dockerfile.") || name.ends_with(".Dockerfile") {
            out.push(path);
        }
    }
}

#[test]
fn every_dockerfile_uses_only_the_build_arguments_it_can_see() {
    let repo = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files = Vec::new();
    dockerfiles(repo, &mut files);
    files.sort();
    let names: Vec<String> =
        files.iter().map(|f| f.strip_prefix(repo).unwrap().display().to_string()).collect();
    // The two the README and the Docker tests use, and the release image's.
    for want in ["Dockerfile", "examples/docker/Dockerfile", ".github/release.Dockerfile"] {
        assert!(names.iter().any(|n| n == want), "{want} not found among {names:?}");
    }
    let mut problems = Vec::new();
    for (file, name) in files.iter().zip(&names) {
        let text = std::fs::read_to_string(file).unwrap();
        problems.extend(check(&text).into_iter().map(|p| format!("{name}: {p}")));
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

/// The top-level Dockerfile's registry route as it once stood: its builder's
/// base image in an ARG after the `local` stage's FROM, so `docker build .`
/// failed with `base name (${RUST_IMAGE}) should not be blank`.
#[test]
fn an_arg_after_the_first_from_is_not_seen_by_a_later_from() {
    let text = "\
FROM scratch AS local
ARG BINARY=Dockerfile
COPY ${BINARY} /podinit

ARG RUST_IMAGE=rust:1-alpine
FROM ${RUST_IMAGE} AS build
RUN cargo build --release
";
    assert_eq!(
        check(text),
        ["line 6: FROM uses ${RUST_IMAGE}, which no ARG before the first FROM declares (an ARG after a \
          FROM belongs to that stage, and FROM sees it blank)"]
    );
    let fixed = text
        .replace("ARG RUST_IMAGE=rust:1-alpine\n", "")
        .replace("FROM scratch AS local", "ARG RUST_IMAGE=rust:1-alpine\nFROM scratch AS local");
    assert_eq!(check(&fixed), Vec::<String>::new());
}

#[test]
fn a_global_arg_in_a_from_needs_a_default() {
    assert_eq!(
        check("ARG BASE\nFROM $BASE\n"),
        ["line 2: FROM uses ${BASE}, whose global ARG has no default (blank without --build-arg)"]
    );
    assert_eq!(check("ARG BASE=\nFROM ${BASE}\n").len(), 1);
    assert!(check("ARG BASE=debian\nFROM ${BASE} AS b\nFROM --platform=$BUILDPLATFORM ${BASE}\n").is_empty());
    assert!(check("FROM ${BASE:-debian}\n").is_empty(), "a fallback is never blank");
}

#[test]
fn a_stage_sees_only_its_own_args_and_envs() {
    let text = "\
ARG BINARY=podinit
FROM scratch
COPY ${BINARY} /podinit
ENV DIR=/app
WORKDIR $DIR
ARG USER_ID
USER ${USER_ID}
RUN echo $HOME \\
    $PATH
";
    assert_eq!(
        check(text),
        ["line 3: COPY uses ${BINARY}, which no ARG or ENV of its stage declares (a global ARG: the stage \
          must name it again, `ARG BINARY`)"]
    );
    assert!(check(&text.replace("FROM scratch\n", "FROM scratch\nARG BINARY\n")).is_empty());
    // A new stage starts with nothing declared.
    assert_eq!(check("FROM scratch\nARG A=1\nFROM scratch\nCOPY $A /a\n").len(), 1);
}

#[test]
fn instructions_join_continuations_and_skip_comments() {
    let text = "# a comment\nfrom scratch \\\n  # inside\n\n  AS x\nRUN a \\\n b\n";
    assert_eq!(
        instructions(text),
        [(2, "FROM".to_owned(), "scratch AS x".to_owned()), (6, "RUN".to_owned(), "a b".to_owned())]
    );
    assert_eq!(variables(r"a $A ${B} ${C:-x} ${D-y} ${E:+z} \$F $"), ["A", "B", "E"]);
}
