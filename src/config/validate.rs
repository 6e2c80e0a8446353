//! Validation: the TOML shapes of `raw.rs` into the model (the lifecycle
//! crate's `spec`, re-exported by `config`).
//!
//! Every rule that a TOML schema cannot say lives here (docs/reference.md, "Configuration"): names are DNS
//! labels and unique, probes only on sidecars and mains (KEP-753), a
//! `success_threshold` of 1 on liveness and startup probes (as the Kubernetes API
//! validation), non-empty commands, `user` only when podinit is root, exactly one
//! handler per probe or hook, at least one main. Every error of these rules is collected and
//! reported at once, each with file, line, column and key (a syntax
//! error stops the reading first and comes alone; of the shape errors, the
//! first of `[pod]` and of each `[[process]]` come together, as serde stops
//! at a table's first); nothing is started
//! when there is one. This module reads files (the config, `env_file`,
//! /etc/passwd) but starts nothing.
//!
//! This file holds the loading entry points ([`load`], [`read_source`],
//! [`from_source`]), the bounded text reader every config file goes through
//! ([`read_text`]), the error types, and the `Validator` that collects
//! issues; the rules themselves are in its submodules, each an
//! `impl Validator` of one concern:
//!
//! - `pod`: the `[pod]` table, duplicate names, the command after `--`, at
//!   least one main, and the sidecars' `oom_score_adj`;
//! - `entry`: one `[[process]]` (name, role, command, env, user, restarts);
//! - `probes`: probes and lifecycle hooks (handlers, thresholds, ports);
//! - `tests`: the unit tests of every rule.

mod entry;
mod pod;
mod probes;
#[cfg(test)]
mod tests;

pub use entry::check_name;
pub use pod::protect_sidecars_from_oom;
pub use probes::MAX_NOTIFICATION_FD;

use std::ffi::OsString;
use std::fmt;
use std::path::{Path, PathBuf};

use super::locate::locate;
use super::model::*;
use super::raw::RawConfig;

/// Where the start plan came from, for messages.
#[derive(Debug, Clone, Default)]
pub struct Source {
    /// The config file as named on the command line; `None` for a plain init.
    pub path: Option<PathBuf>,
    pub text: String,
    /// Set when `text` is TOML that podinit wrote from another format (a
    /// Kubernetes manifest): errors are placed in that file.
    pub origin: Option<super::locate::Origin>,
}

impl Source {
    /// The file messages name: the file the user wrote (an imported one
    /// itself, not its TOML), or `<command line>`.
    pub fn file_name(&self) -> String {
        match &self.origin {
            Some(o) => o.file.clone(),
            None => {
                self.path.as_ref().map_or_else(|| "<command line>".to_owned(), |p| p.display().to_string())
            }
        }
    }

    /// The place of TOML byte `offset`, in the file the user wrote.
    pub fn place(&self, offset: usize) -> super::locate::Place {
        match self.origin.as_ref().and_then(|o| o.place(offset)) {
            Some(p) => p.clone(),
            None => locate(&self.text, offset),
        }
    }
}

/// One problem in the configuration, with its place.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConfigIssue {
    pub file: String,
    pub line: usize,
    pub col: usize,
    pub key: String,
    pub message: String,
}

impl fmt::Display for ConfigIssue {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.line == 0 {
            write!(f, "{}: {}", self.file, self.message)
        } else if self.key.is_empty() {
            write!(f, "{}:{}:{}: {}", self.file, self.line, self.col, self.message)
        } else {
            write!(f, "{}:{}:{}: {}: {}", self.file, self.line, self.col, self.key, self.message)
        }
    }
}

/// Every problem found in one configuration; the pod was not started.
#[derive(Debug, Clone, thiserror::Error)]
#[error("{}", .0.iter().map(ToString::to_string).collect::<Vec<_>>().join("\n"))]
pub struct ConfigError(pub Vec<ConfigIssue>);

/// Settings that come from outside the file.
#[derive(Debug, Clone, Default)]
pub struct LoadOptions {
    /// The command after `--`, added as a main named `main` (bytes, as given).
    pub command: Vec<OsString>,
    /// Whether podinit runs as root (decides if `user` is allowed).
    pub is_root: bool,
    /// The directory a relative `working_dir` is taken from: podinit's start
    /// directory, once podinit has left it for `/` (a `podinit reload`);
    /// `None`: the current directory.
    pub start_dir: Option<PathBuf>,
    /// Which workload of a multi-document Kubernetes manifest is the pod
    /// (`--pod`, `PODINIT_POD`).
    pub pod: Option<String>,
    /// Commands for entries of an imported file that have none
    /// (`--command NAME=CMD`, run by `/bin/sh -c`).
    pub commands: Vec<(String, String)>,
    /// Check only what the file says, not what this machine has: a `user`,
    /// a `working_dir` or an `env_file` that may exist only in the image
    /// (`podinit import`, which writes a file for another machine).
    pub portable: bool,
}

/// Reads and validates the config file at `path` (if any) plus the command line.
///
/// # Errors
/// A [`ConfigError`] listing every problem: unreadable file, TOML syntax, unknown
/// key, bad value, or a broken rule (docs/reference.md, "Configuration").
pub fn load(path: Option<&Path>, opts: &LoadOptions) -> Result<PodSpec, ConfigError> {
    let source = match path {
        Some(p) => read_source(p, opts)?,
        None => Source::default(),
    };
    from_source(&source, opts)
}

/// The config file at `path` as podinit TOML: the file itself, or, for
/// another tool's file (a Kubernetes manifest, Compose, supervisord,
/// Procfile, process-compose: recognised by content, docs/import.md), the
/// TOML that `podinit import` would write for it, with its places.
///
/// # Errors
/// A [`ConfigError`]: the file cannot be read, or cannot be imported.
pub fn read_source(path: &Path, opts: &LoadOptions) -> Result<Source, ConfigError> {
    let text = read_config(path)?;
    #[cfg(feature = "import")]
    {
        let format = crate::import::detect(path, &text);
        if format != crate::import::Format::Toml {
            let import = crate::import::ImportOptions {
                pod: opts.pod.clone(),
                commands: opts.commands.clone(),
                for_run: true,
                ..Default::default()
            };
            let imported = crate::import::import(format, path, &text, &import)?;
            return Ok(Source {
                path: Some(path.to_owned()),
                text: imported.toml,
                origin: Some(imported.origin),
            });
        }
    }
    #[cfg(not(feature = "import"))]
    let _ = opts;
    Ok(Source { path: Some(path.to_owned()), text, origin: None })
}

/// Largest config file read (bytes); a larger one (or an endless one such as
/// /dev/zero) is refused rather than read into memory.
pub const MAX_CONFIG_BYTES: u64 = 4 << 20;

/// Why a file could not be read as text.
#[derive(Debug, thiserror::Error)]
pub enum ReadError {
    #[error("{0}")]
    Io(#[from] std::io::Error),
    #[error("larger than {} MiB", MAX_CONFIG_BYTES >> 20)]
    TooLarge,
    /// Not UTF-8; `line` and `col` (from 1) of the first bad byte.
    #[error("not UTF-8 text")]
    NotUtf8 { line: usize, col: usize },
}

/// Reads a UTF-8 text file of at most [`MAX_CONFIG_BYTES`]: the config, an
/// `env_file`, /etc/passwd. A larger one, or an endless one such as
/// /dev/zero, is refused after reading one byte past the limit.
///
/// # Errors
/// [`ReadError`]: the file cannot be read, is too large, or is not UTF-8.
pub fn read_text(path: &Path) -> Result<String, ReadError> {
    read_text_from(path, false)
}

/// As [`read_text`], for a file someone else wrote: a symbolic link is refused
/// (`O_NOFOLLOW`) instead of followed.
///
/// # Errors
/// As [`read_text`], and ELOOP for a symbolic link.
pub fn read_text_no_symlink(path: &Path) -> Result<String, ReadError> {
    read_text_from(path, true)
}

fn read_text_from(path: &Path, no_symlink: bool) -> Result<String, ReadError> {
    use std::io::Read as _;
    use std::os::unix::fs::{FileTypeExt, OpenOptionsExt};
    // O_NONBLOCK: opening a FIFO must not wait for a writer (it would hang
    // podinit); a read that would block fails at once instead of waiting.
    let flags = libc::O_NONBLOCK | if no_symlink { libc::O_NOFOLLOW } else { 0 };
    let file = std::fs::OpenOptions::new().read(true).custom_flags(flags).open(path)?;
    let kind = file.metadata()?.file_type();
    if kind.is_fifo() || kind.is_socket() {
        return Err(ReadError::Io(std::io::Error::other("a FIFO or socket, not a file")));
    }
    let mut bytes = Vec::new();
    file.take(MAX_CONFIG_BYTES + 1).read_to_end(&mut bytes)?;
    if bytes.len() as u64 > MAX_CONFIG_BYTES {
        return Err(ReadError::TooLarge);
    }
    String::from_utf8(bytes).map_err(|e| {
        let good = &e.as_bytes()[..e.utf8_error().valid_up_to()];
        let line = good.iter().filter(|&&b| b == b'\n').count() + 1;
        let start = good.iter().rposition(|&b| b == b'\n').map_or(0, |i| i + 1);
        let col = String::from_utf8_lossy(&good[start..]).chars().count() + 1;
        ReadError::NotUtf8 { line, col }
    })
}

fn read_config(path: &Path) -> Result<String, ConfigError> {
    let fail = |line: usize, col: usize, message: String| {
        ConfigError(vec![ConfigIssue {
            file: path.display().to_string(),
            line,
            col,
            key: String::new(),
            message,
        }])
    };
    read_text(path).map_err(|e| match e {
        ReadError::Io(e) => fail(0, 0, format!("cannot read config file: {e}")),
        ReadError::TooLarge => fail(0, 0, format!("config file is {e}")),
        ReadError::NotUtf8 { line, col } => {
            fail(line, col, "the config file is not UTF-8 text (TOML must be)".into())
        }
    })
}

/// Validates config text (already read) plus the command line.
///
/// # Errors
/// As [`load`].
pub fn from_source(source: &Source, opts: &LoadOptions) -> Result<PodSpec, ConfigError> {
    let file = source.file_name();
    let dir = source.path.as_deref().and_then(Path::parent).filter(|d| !d.as_os_str().is_empty());
    let mut v =
        Validator { src: &source.text, origin: source.origin.as_ref(), dir, file, issues: Vec::new(), opts };
    let raw: RawConfig = match toml::from_str(&source.text) {
        Ok(raw) => raw,
        Err(e) => {
            for e in shape_errors(&source.text).unwrap_or_else(|| vec![e]) {
                let offset = e.span().map_or(0, |s| s.start);
                v.at(offset, e.message().trim().to_owned());
            }
            v.issues.sort_by_key(|i| (i.line, i.col));
            return Err(ConfigError(v.issues));
        }
    };
    let spec = v.pod(raw);
    if v.issues.is_empty() {
        Ok(spec)
    } else {
        v.issues.sort_by_key(|i| (i.line, i.col));
        Err(ConfigError(v.issues))
    }
}

/// The shape errors of a file that has the right TOML syntax: the first of
/// `[pod]`, the first of each `[[process]]` table and one for each other
/// top-level key, each read on its own (serde stops at a table's first
/// error). `None` when the text is not TOML (the caller reports toml's own
/// error then, which is the first).
fn shape_errors(text: &str) -> Option<Vec<toml::de::Error>> {
    use serde::Deserialize as _;
    use toml::de::{DeTable, DeValue, ValueDeserializer};
    let root = DeTable::parse(text).ok()?.into_inner();
    let mut errors = Vec::new();
    for (key, value) in root {
        match (key.get_ref().as_ref(), value.get_ref()) {
            ("pod", _) => {
                if let Err(e) = super::raw::RawPod::deserialize(ValueDeserializer::from(value)) {
                    errors.push(e);
                }
            }
            ("process", DeValue::Array(_)) => {
                let DeValue::Array(tables) = value.into_inner() else { continue };
                for table in tables {
                    if let Err(e) = super::raw::RawProcess::deserialize(ValueDeserializer::from(table)) {
                        errors.push(e);
                    }
                }
            }
            _ => {
                // Any other key, or a `process` that is not an array: read
                // alone as the whole file, for serde's own message.
                let span = key.span().start..value.span().end;
                let mut alone = DeTable::new();
                alone.insert(key, value);
                let alone = toml::Spanned::new(span, alone);
                if let Err(e) = RawConfig::deserialize(toml::de::Deserializer::from(alone)) {
                    errors.push(e);
                }
            }
        }
    }
    (!errors.is_empty()).then_some(errors)
}

struct Validator<'a> {
    src: &'a str,
    origin: Option<&'a super::locate::Origin>,
    /// The config file's directory, for relative `env_file` paths.
    dir: Option<&'a Path>,
    file: String,
    issues: Vec<ConfigIssue>,
    opts: &'a LoadOptions,
}

impl Validator<'_> {
    fn at(&mut self, offset: usize, message: String) {
        let place = self.place(offset);
        self.issues.push(ConfigIssue {
            file: self.file.clone(),
            line: place.line,
            col: place.col,
            key: place.key,
            message,
        });
    }

    /// The place of TOML byte `offset`, in the file the user wrote.
    fn place(&self, offset: usize) -> super::locate::Place {
        match self.origin.and_then(|o| o.place(offset)) {
            Some(p) => p.clone(),
            None => locate(self.src, offset),
        }
    }

    fn nowhere(&mut self, message: String) {
        self.issues.push(ConfigIssue {
            file: self.file.clone(),
            line: 0,
            col: 0,
            key: String::new(),
            message,
        });
    }
}
