//! Replays the `config` fuzz target's inputs in `cargo test` (stable, no fuzzer):
//! every file of `fuzz/seeds/config/` (the seed corpus: the examples and hand-written
//! edge cases) and of `fuzz/regressions/config/` (inputs the fuzzer found, minimised)
//! goes through the very checks the fuzz target runs (`fuzz/common/config_checks.rs`),
//! as root and as non-root. A panic inside podinit, or a broken invariant (an issue
//! pointing outside the file, a wrong `locate` place, an accepted config that breaks
//! The configuration (docs/configuration.md)), fails the test with the file's name and the panic message.
//!
//! As PID 1 a panic in config loading kills the container without a word, hence
//! "never a panic" for any text.

use std::cell::RefCell;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::{Path, PathBuf};
use std::sync::Once;

#[path = "../fuzz/common/config_checks.rs"]
mod config_checks;

/// Every regular file under `dir` (none if `dir` does not exist), sorted.
fn files(dir: &Path) -> Vec<PathBuf> {
    let Ok(rd) = std::fs::read_dir(dir) else { return Vec::new() };
    let mut out: Vec<PathBuf> = rd.filter_map(|e| e.ok()).map(|e| e.path()).filter(|p| p.is_file()).collect();
    out.sort();
    out
}

thread_local! {
    /// Where the last panic on this thread happened (`file:line:col`).
    static PANIC_AT: RefCell<Option<String>> = const { RefCell::new(None) };
}

/// Keeps the default report (message and backtrace on stderr) and also records
/// the panic's place, so the failure list says where podinit panicked.
fn record_panic_places() {
    static HOOK: Once = Once::new();
    HOOK.call_once(|| {
        let default = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            let at = info.location().map(|l| format!("{}:{}:{}", l.file(), l.line(), l.column()));
            PANIC_AT.with(|p| *p.borrow_mut() = at);
            default(info);
        }));
    });
}

fn panic_message(payload: &(dyn std::any::Any + Send)) -> String {
    let msg = payload
        .downcast_ref::<String>()
        .cloned()
        .or_else(|| payload.downcast_ref::<&str>().map(|s| (*s).to_owned()))
        .unwrap_or_else(|| "(non-string panic payload)".to_owned());
    match PANIC_AT.with(|p| p.borrow_mut().take()) {
        Some(at) => format!("panicked at {at}: {msg}"),
        None => msg,
    }
}

/// Runs every input of `dirs`; returns how many ran and the failures.
fn replay(dirs: &[&str]) -> (usize, Vec<String>) {
    record_panic_places();
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut ran = 0;
    let mut failures = Vec::new();
    for dir in dirs {
        for path in files(&root.join(dir)) {
            let data = std::fs::read(&path).unwrap();
            let name = path.strip_prefix(root).unwrap_or(&path).display().to_string();
            // Exactly what the fuzzer ran, then the text both as root and not.
            for is_root in [None, Some(false), Some(true)] {
                let run = || match (is_root, std::str::from_utf8(&data)) {
                    (None, _) => config_checks::check_bytes(&data),
                    (Some(root), Ok(text)) => config_checks::check_text(text, root),
                    (Some(_), Err(_)) => {}
                };
                ran += 1;
                if let Err(payload) = catch_unwind(AssertUnwindSafe(run)) {
                    let how = is_root.map_or("as fuzzed".to_owned(), |r| format!("is_root={r}"));
                    failures.push(format!("{name} ({how}): {}", panic_message(payload.as_ref())));
                }
            }
        }
    }
    (ran, failures)
}

#[test]
fn seed_corpus_never_panics_and_keeps_invariants() {
    let (ran, failures) = replay(&["fuzz/seeds/config"]);
    assert!(ran >= 3, "no seeds found under fuzz/seeds/config");
    assert!(failures.is_empty(), "{} of {ran} runs failed:\n{}", failures.len(), failures.join("\n"));
}

#[test]
fn fuzz_regressions_never_panic_and_keep_invariants() {
    let (ran, failures) = replay(&["fuzz/regressions/config"]);
    assert!(failures.is_empty(), "{} of {ran} runs failed:\n{}", failures.len(), failures.join("\n"));
}
