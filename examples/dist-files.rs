//! Writes podinit's man pages and shell completion scripts into a directory,
//! generated from the clap command of the command line (`podinit::cli::Cli`):
//!
//! ```text
//! cargo run --locked --example dist-files -- OUT_DIR
//! ```
//!
//! - `OUT_DIR/man1/podinit.1`, and `podinit-SUBCOMMAND.1` for each
//!   subcommand, which podinit.1 refers to (roff, clap_mangen);
//! - `OUT_DIR/completions/podinit` (bash), `_podinit` (zsh) and
//!   `podinit.fish`: what `podinit completions SHELL` prints.
//!
//! `scripts/dist` puts them in the .deb and the release assets. An example,
//! not part of the podinit binary: clap_mangen is a dev-dependency, so the
//! man pages cost the binary nothing.

use std::path::Path;

use clap::CommandFactory;
use podinit::cli::{completion_script, Cli, Shell};

fn main() {
    let mut args = std::env::args_os().skip(1);
    let (Some(out), None) = (args.next(), args.next()) else {
        eprintln!("usage: cargo run --example dist-files -- OUT_DIR");
        std::process::exit(2);
    };
    if let Err(e) = write_all(Path::new(&out)) {
        eprintln!("dist-files: {}: {e}", Path::new(&out).display());
        std::process::exit(1);
    }
}

/// Writes `man1/` and `completions/` under `out`, creating them.
pub fn write_all(out: &Path) -> std::io::Result<()> {
    let man = out.join("man1");
    std::fs::create_dir_all(&man)?;
    write_man_pages(&man)?;
    let completions = out.join("completions");
    std::fs::create_dir_all(&completions)?;
    for shell in Shell::ALL {
        std::fs::write(completions.join(shell.file_name()), completion_script(shell))?;
    }
    Ok(())
}

/// podinit.1 (the options, and each subcommand named as
/// podinit-SUBCOMMAND(1)) and one page per subcommand, each with its
/// synopsis and options; no `help` subcommand, whose page would say nothing.
/// Every page's footer names podinit and its version; no page has a date,
/// so that the same sources give the same pages.
pub fn write_man_pages(dir: &Path) -> std::io::Result<()> {
    let mut command = Cli::command().disable_help_subcommand(true);
    // The NAME line reads "podinit - a pod in one container...", not
    // "podinit - podinit: a pod...".
    if let Some(about) = command.get_about().map(|a| a.to_string()) {
        command = command.about(about.trim_start_matches("podinit: ").to_owned());
    }
    command.build();
    let source = format!("podinit {}", command.get_version().unwrap_or_default());
    for page in std::iter::once(&command).chain(command.get_subcommands()) {
        clap_mangen::Man::new(page.clone()).source(&source).generate_to(dir)?;
    }
    Ok(())
}
