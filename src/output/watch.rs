//! A `log_line` probe's view of an entry's output (process-compose's
//! `ready_log_line`): the output pumps show each line to a [`LineWatch`] until
//! one matches, then stop looking, so that output costs nothing extra once
//! the entry is ready.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use crate::config::LineMatch;

/// A `log_line` probe's watch over one instance's output, shared by its
/// stdout and stderr pumps; it stops looking after the first match.
pub struct LineWatch {
    matcher: LineMatch,
    on_match: Box<dyn Fn() + Send + Sync>,
    matched: AtomicBool,
}

impl std::fmt::Debug for LineWatch {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LineWatch").field("matcher", &self.matcher).field("matched", &self.matched).finish()
    }
}

impl LineWatch {
    /// Watches for `matcher`; `on_match` runs once, from an output thread.
    pub fn new(matcher: LineMatch, on_match: impl Fn() + Send + Sync + 'static) -> LineWatch {
        LineWatch { matcher, on_match: Box::new(on_match), matched: AtomicBool::new(false) }
    }

    /// Whether a line has matched already (the pumps then stop looking).
    pub fn done(&self) -> bool {
        self.matched.load(Ordering::Relaxed)
    }

    /// Checks one line (without its newline; a trailing CR is ignored).
    pub fn check(&self, line: &[u8]) {
        let line = line.strip_suffix(b"\r").unwrap_or(line);
        if !self.done() && self.matcher.matches(line) {
            self.matched.store(true, Ordering::Relaxed);
            (self.on_match)();
        }
    }
}

/// Splits one pump's chunks into lines for a [`LineWatch`]; a line longer
/// than `max` is checked in pieces of `max` bytes.
#[derive(Debug)]
pub struct LineScan {
    watch: Arc<LineWatch>,
    partial: Vec<u8>,
    max: usize,
}

impl LineScan {
    pub fn new(watch: Arc<LineWatch>, max: usize) -> LineScan {
        LineScan { watch, partial: Vec::new(), max }
    }

    /// Whether it still looks at output.
    pub fn active(&self) -> bool {
        !self.watch.done()
    }

    /// Feeds the next chunk of output.
    pub fn feed(&mut self, mut chunk: &[u8]) {
        while !chunk.is_empty() && self.active() {
            match memchr::memchr(b'\n', chunk) {
                Some(i) => {
                    if self.partial.is_empty() {
                        self.watch.check(&chunk[..i]);
                    } else {
                        self.partial.extend_from_slice(&chunk[..i]);
                        self.watch.check(&self.partial);
                        self.partial.clear();
                    }
                    chunk = &chunk[i + 1..];
                }
                None => {
                    let room = self.max.saturating_sub(self.partial.len()).min(chunk.len());
                    self.partial.extend_from_slice(&chunk[..room]);
                    chunk = &chunk[room..];
                    if self.partial.len() >= self.max {
                        self.watch.check(&self.partial);
                        self.partial.clear();
                    }
                }
            }
        }
    }

    /// End of output: checks a last line without newline.
    pub fn finish(&mut self) {
        if !self.partial.is_empty() {
            self.watch.check(&std::mem::take(&mut self.partial));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::AtomicUsize;

    fn scan(matcher: LineMatch, chunks: &[&[u8]], max: usize) -> bool {
        let hits = Arc::new(AtomicUsize::new(0));
        let counter = Arc::clone(&hits);
        let mut s = LineScan::new(
            Arc::new(LineWatch::new(matcher, move || {
                counter.fetch_add(1, Ordering::Relaxed);
            })),
            max,
        );
        for c in chunks {
            s.feed(c);
        }
        s.finish();
        let hits = hits.load(Ordering::Relaxed);
        assert!(hits <= 1, "on_match runs once");
        hits == 1
    }

    #[test]
    fn lines_match_across_chunks_and_at_the_end() {
        let has = |t: &str| LineMatch::Contains(t.into());
        assert!(scan(has("listening"), &[b"boot\nlis", b"tening on 80\r\n"], 4096));
        assert!(scan(has("listening"), &[b"x\nlistening"], 4096), "a last line without newline");
        assert!(!scan(has("listening"), &[b"listen\ning\n"], 4096), "no match across a newline");
        assert!(!scan(has("abc"), &[b"xxab", b"cxx\n"], 4), "a long line is looked at in pieces");
        let re = LineMatch::Regex(crate::config::Pattern {
            source: "^ready on :[0-9]+$".into(),
            regex: regex_lite::Regex::new("^ready on :[0-9]+$").expect("valid"),
        });
        assert!(scan(re.clone(), &[b"ready on :8080\n"], 4096));
        assert!(!scan(re, &[b"not ready on :8080\n"], 4096));
    }
}
