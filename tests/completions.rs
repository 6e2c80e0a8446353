//! `podinit completions bash|zsh|fish` (README, "Install"): generated from
//! the clap command of the command line, so every subcommand is in them.
//!
//! The bash script is loaded and asked for completions in a real bash. zsh
//! and fish are not required: their scripts are checked for content, and for
//! syntax by `zsh -n` and `fish --no-execute` where those are installed.

use std::process::{Command, Output, Stdio};

use clap::CommandFactory;
use podinit::cli::{completion_script, Cli, Shell};

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

/// What the binary prints is [`completion_script`], for each shell.
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
