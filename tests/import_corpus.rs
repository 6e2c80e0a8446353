//! Real files from well-known public projects (`tests/corpus/<format>/`, each
//! directory's SOURCES.md names where every file comes from and under which
//! licence): each one imports with exit 0 into TOML that `podinit check`
//! accepts, wherever its users and directories could exist. Only the
//! machine-dependent checks (a `user` or `working_dir` of the image, an
//! `env_file` beside the original) may fail here, and only those.

// This harness waits for the podinit it starts: it is not podinit, so the
// one-waiter rule of clippy.toml (for src/) does not apply here.
#![allow(clippy::disallowed_methods)]
#![cfg(feature = "import")]

use std::path::{Path, PathBuf};
use std::process::Command;

fn corpus() -> Vec<(String, PathBuf)> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/corpus");
    let mut files = Vec::new();
    for format in std::fs::read_dir(&root).unwrap() {
        let format = format.unwrap().path();
        let name = format.file_name().unwrap().to_string_lossy().into_owned();
        for f in std::fs::read_dir(&format).unwrap() {
            let f = f.unwrap().path();
            let base = f.file_name().unwrap().to_string_lossy().into_owned();
            // SOURCES.md, the `.env` files and the files that others include
            // (`*.inc`, a directory) are not imported on their own.
            if base == "SOURCES.md" || base.starts_with('.') || base.ends_with(".inc") || f.is_dir() {
                continue;
            }
            files.push((name.clone(), f));
        }
    }
    files.sort();
    files
}

/// The messages of `podinit check` that depend on the machine, not the file.
fn machine_dependent(line: &str) -> bool {
    ["user ", "`user` needs podinit to run as root", "working_dir ", "cannot read env_file"]
        .iter()
        .any(|m| line.contains(m))
}

#[test]
fn every_corpus_file_imports_and_passes_check() {
    let files = corpus();
    let mut failures = Vec::new();
    let tmp = tempfile::tempdir().unwrap();
    for (format, file) in &files {
        let out = Command::new(env!("CARGO_BIN_EXE_podinit"))
            .args(["import", "--from", format])
            .arg(file)
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        if !out.status.success() {
            failures.push(format!("{}: import exited {:?}:\n{stderr}", file.display(), out.status.code()));
            continue;
        }
        // The TOML beside the original, so that a relative env_file resolves.
        let toml = tmp.path().join(format!("{}.toml", file.file_name().unwrap().to_string_lossy()));
        std::fs::write(&toml, &out.stdout).unwrap();
        let check = Command::new(env!("CARGO_BIN_EXE_podinit")).arg("check").arg("--config").arg(&toml).output().unwrap();
        if !check.status.success() {
            let errors = String::from_utf8_lossy(&check.stderr);
            let real: Vec<&str> = errors.lines().filter(|l| !machine_dependent(l)).collect();
            if !real.is_empty() {
                failures.push(format!("{}: podinit check of the import fails:\n{}", file.display(), real.join("\n")));
            }
        }
    }
    assert!(failures.is_empty(), "{} of {} corpus files fail:\n\n{}", failures.len(), files.len(), failures.join("\n\n"));
}

#[test]
fn the_corpus_holds_at_least_twenty_files_each_with_its_source() {
    let files = corpus();
    assert!(files.len() >= 20, "only {} corpus files", files.len());
    for (format, file) in &files {
        let sources = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/corpus").join(format).join("SOURCES.md");
        let text = std::fs::read_to_string(&sources).unwrap_or_default();
        let base = file.file_name().unwrap().to_string_lossy();
        assert!(text.contains(&*base), "{} names no source for {base}", sources.display());
    }
}
