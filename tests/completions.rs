//! `podinit completions bash|zsh|fish` and the man pages of
//! examples/dist-files.rs (README, "Install"; docs/development.md,
//! "Building a static binary"): both generated from the clap command of the
//! command line, so every subcommand is in them.
//!
//! The bash script is loaded and asked for completions in a real bash. zsh
//! and fish are not required: their scripts are checked for content, and for
//! syntax by `zsh -n` and `fish --no-execute` where those are installed. The
//! man pages are rendered by `man` where it is installed, else by
//! `groff -man`, else only their roff structure (`.TH`, `.SH NAME`,
//! `.SH SYNOPSIS`) is checked.

use std::path::Path;
use std::process::{Command, Output, Stdio};

use clap::CommandFactory;
use podinit::cli::{completion_script, Cli, Shell};

#[allow(dead_code)]
#[path = "../examples/dist-files.rs"]
mod dist_files;

/// Runs a program to its end, stdin closed. A helper process of the test,
/// not a child of podinit: the one-waiter rule of clippy.toml is about
/// podinit's own code.
fn run(program: impl AsRef<std::ffi::OsStr>, args: &[&str]) -> Output {
    let program = program.as_ref();
    #[allow(clippy::disallowed_methods)]
    Command::new(program)
        .args(args)
        .env_remove("PODINIT_CONFIG")
        .stdin(Stdio::null())
        .output()
        .unwrap_or_else(|e| panic!("cannot run {program:?}: {e}"))
}

fn podinit(args: &[&str]) -> Output {
    run(env!("CARGO_BIN_EXE_podinit"), args)
}

fn installed(program: &str) -> bool {
    std::env::var_os("PATH")
        .is_some_and(|path| std::env::split_paths(&path).any(|dir| dir.join(program).is_file()))
}

/// The subcommands of the command line, as clap has them (not `help`, which
/// clap adds when it builds the command).
fn subcommands() -> Vec<String> {
    let names: Vec<String> = Cli::command().get_subcommands().map(|s| s.get_name().to_owned()).collect();
    assert!(names.iter().any(|n| n == "completions"), "{names:?}");
    names
}

fn text(out: &Output) -> String {
    assert!(out.status.success(), "{:?}: {}", out.status, String::from_utf8_lossy(&out.stderr));
    String::from_utf8(out.stdout.clone()).expect("UTF-8")
}

/// What the binary prints is the script the dist files carry, for each shell.
#[test]
fn podinit_completions_prints_each_shells_script() {
    for shell in Shell::ALL {
        let name = format!("{shell:?}").to_lowercase();
        let out = podinit(&["completions", &name]);
        assert_eq!(out.stdout, completion_script(shell), "podinit completions {name}");
        assert!(out.stderr.is_empty(), "{}", String::from_utf8_lossy(&out.stderr));
    }
    let out = podinit(&["completions", "tcsh"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("bash"));
}

/// Loaded in bash, the script registers a completion for podinit, which
/// offers the subcommands a word begins (asked as bash asks it: the
/// function named by `complete -p`, with COMP_WORDS and COMP_CWORD set),
/// and a subcommand's values.
#[test]
fn bash_script_loads_and_completes_subcommands() {
    let bin = env!("CARGO_BIN_EXE_podinit");
    let loads = run(
        "bash",
        &["--norc", "--noprofile", "-c", "source <(\"$0\" completions bash) && complete -p podinit", bin],
    );
    assert!(text(&loads).contains("podinit"), "{}", text(&loads));

    let dir = tempfile::tempdir().expect("temp dir");
    let script = dir.path().join("podinit.bash");
    std::fs::write(&script, text(&podinit(&["completions", "bash"]))).expect("write the script");
    // $1: the script; then the words of the command line, the last one
    // being completed.
    let ask = r#"set -e
source "$1"; shift
spec=$(complete -p podinit)
function=${spec#*-F }; function=${function%% *}
COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1))
COMP_LINE="$*"; COMP_POINT=${#COMP_LINE}
previous=""; [ "$#" -lt 2 ] || previous=${COMP_WORDS[COMP_CWORD-1]}
"$function" podinit "${COMP_WORDS[COMP_CWORD]}" "$previous"
printf '%s\n' "${COMPREPLY[@]}""#;
    let complete = |words: &[&str]| -> Vec<String> {
        let mut args = vec!["--norc", "--noprofile", "-c", ask, "bash", script.to_str().expect("UTF-8 path")];
        args.extend_from_slice(words);
        text(&run("bash", &args)).lines().map(str::to_owned).collect()
    };

    let offered = complete(&["podinit", "st"]);
    let expected: Vec<String> = subcommands().into_iter().filter(|s| s.starts_with("st")).collect();
    assert!(expected.len() >= 3, "{expected:?}");
    for name in &expected {
        assert!(offered.contains(name), "`podinit st<TAB>` offers {offered:?}, not {name}");
    }
    assert!(!offered.iter().any(|o| o == "check"), "{offered:?}");

    let offered = complete(&["podinit", ""]);
    for name in subcommands() {
        assert!(offered.contains(&name), "`podinit <TAB>` offers {offered:?}, not {name}");
    }
    let offered = complete(&["podinit", "completions", ""]);
    for shell in ["bash", "zsh", "fish"] {
        assert!(offered.iter().any(|o| o == shell), "`podinit completions <TAB>` offers {offered:?}");
    }
}

/// zsh's and fish's scripts name the subcommands; where the shell is
/// installed it parses the script.
#[test]
fn zsh_and_fish_scripts_name_the_subcommands() {
    let dir = tempfile::tempdir().expect("temp dir");
    for (shell, checker, flag) in [("zsh", "zsh", "-n"), ("fish", "fish", "--no-execute")] {
        let script = text(&podinit(&["completions", shell]));
        for name in subcommands() {
            assert!(script.contains(&name), "the {shell} script does not name {name}");
        }
        if installed(checker) {
            let file = dir.path().join(shell);
            std::fs::write(&file, &script).expect("write the script");
            let out = run(checker, &[flag, file.to_str().expect("UTF-8 path")]);
            assert!(out.status.success(), "{checker} {flag}: {}", String::from_utf8_lossy(&out.stderr));
        }
    }
}

/// The dist files: podinit.1 names every subcommand, and a page for each
/// exists; each page is well-formed roff that man (or groff) renders; the
/// completion scripts are what `podinit completions` prints.
#[test]
fn dist_files_have_a_man_page_per_subcommand_and_the_scripts() {
    let dir = tempfile::tempdir().expect("temp dir");
    dist_files::write_all(dir.path()).expect("write the dist files");
    let man = dir.path().join("man1");
    let page = |name: &str| std::fs::read_to_string(man.join(name)).unwrap_or_else(|e| panic!("{name}: {e}"));

    let main_page = page("podinit.1");
    let mut pages = vec!["podinit.1".to_owned()];
    for name in subcommands() {
        assert!(main_page.contains(&format!("podinit\\-{name}(1)")), "podinit.1 does not name {name}");
        pages.push(format!("podinit-{name}.1"));
    }
    let mut written: Vec<String> = std::fs::read_dir(&man)
        .expect("man1")
        .map(|e| e.expect("entry").file_name().into_string().expect("UTF-8"))
        .collect();
    written.sort();
    pages.sort();
    assert_eq!(written, pages, "the pages are podinit.1 and one per subcommand");

    for name in &pages {
        let roff = page(name);
        let title = name.trim_end_matches(".1");
        assert!(roff.contains(&format!(".TH {title} 1 ")), "{name}: no .TH");
        for section in [".SH NAME", ".SH SYNOPSIS", ".SH DESCRIPTION"] {
            assert!(roff.lines().any(|l| l == section), "{name}: no {section}");
        }
        rendered(&man.join(name), title);
    }
    for shell in Shell::ALL {
        let file = dir.path().join("completions").join(shell.file_name());
        assert_eq!(
            std::fs::read(&file).expect("a completion script"),
            completion_script(shell),
            "{}",
            file.display()
        );
    }
}

/// The page as man renders it (groff -man without man), or nothing to check
/// when neither is installed.
fn rendered(page: &Path, title: &str) {
    let path = page.to_str().expect("UTF-8 path");
    let out = if installed("man") {
        #[allow(clippy::disallowed_methods)]
        Command::new("man")
            .args(["-l", path])
            .env("MANPAGER", "cat")
            .env("MANWIDTH", "100")
            .env("LC_ALL", "C.UTF-8")
            .stdin(Stdio::null())
            .output()
            .expect("run man")
    } else if installed("groff") {
        run("groff", &["-man", "-Tutf8", path])
    } else {
        return;
    };
    let shown = text(&out);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.trim().is_empty(), "{title}: {stderr}");
    for heading in ["NAME", "SYNOPSIS"] {
        assert!(shown.lines().any(|l| l.trim() == heading), "{title}: no {heading} in\n{shown}");
    }
    assert!(shown.contains(title), "{title}: not named in\n{shown}");
}
