//! Framing of child output: `NAME | ` before each line (prefixed mode), or one
//! JSON object per line (json mode). Pure: bytes in, bytes out.
//!
//! Memory is bounded: a line longer than [`MAX_LINE`] is emitted in pieces,
//! each framed, and an unfinished line is carried to the next read.

use crate::sys::mem::append;

/// Longest line written whole (bytes, without prefix); longer ones are split.
pub const MAX_LINE: usize = 64 * 1024;

/// How a pump frames each line.
#[derive(Debug, Clone)]
pub enum Framing {
    /// `NAME | line`.
    Prefixed(Vec<u8>),
    /// One JSON object per line: `time` (RFC 3339), `process`, `stream`, `line`.
    Json { process: String, stream: &'static str },
}

/// Appends one JSON object for `line` (without its newline) to `out`; bytes
/// that are not UTF-8 are replaced (U+FFFD).
pub fn json_line(process: &str, stream: &str, line: &[u8], out: &mut Vec<u8>) {
    let head = json_head(process, stream);
    json_body(&head, line, out);
}

/// `{"time":"…","process":"…","stream":"…","line":` for lines read now.
pub(crate) fn json_head(process: &str, stream: &str) -> Vec<u8> {
    let time = humantime::format_rfc3339_micros(std::time::SystemTime::now()).to_string();
    let mut head = Vec::with_capacity(64 + process.len());
    head.extend_from_slice(b"{\"time\":\"");
    head.extend_from_slice(time.as_bytes());
    head.extend_from_slice(b"\",\"process\":");
    json_string(process, &mut head);
    head.extend_from_slice(b",\"stream\":");
    json_string(stream, &mut head);
    head.extend_from_slice(b",\"line\":");
    head
}

pub(crate) fn json_body(head: &[u8], line: &[u8], out: &mut Vec<u8>) {
    append(out, head);
    out.reserve(line.len() + 2);
    out.push(b'"');
    // One pass for the usual line, plain ASCII: the scan for bytes to escape
    // also stops at the first byte that is not ASCII, and only from there is
    // the line checked as UTF-8 (and its invalid bytes replaced).
    let ascii = escape::<true>(line, out);
    if ascii < line.len() {
        escape::<false>(String::from_utf8_lossy(&line[ascii..]).as_bytes(), out);
    }
    out.push(b'"');
    append(out, b"}\n");
}

/// Appends `s` as a JSON string literal (quoted, escaped) to `out`. Runs of
/// bytes that need no escape are copied whole.
pub fn json_string(s: &str, out: &mut Vec<u8>) {
    out.reserve(s.len() + 2);
    out.push(b'"');
    escape::<false>(s.as_bytes(), out);
    out.push(b'"');
}

/// Appends `bytes` to `out` escaped for the inside of a JSON string, and
/// returns how many bytes it took: all of them, or with `ASCII_ONLY` those
/// before the first byte that is not ASCII (which the caller must check as
/// UTF-8 first). Without `ASCII_ONLY`, `bytes` must be UTF-8.
fn escape<const ASCII_ONLY: bool>(bytes: &[u8], out: &mut Vec<u8>) -> usize {
    let mut i = 0;
    loop {
        let run = i;
        i += plain_run::<ASCII_ONLY>(&bytes[i..]);
        append(out, &bytes[run..i]);
        let Some(&b) = bytes.get(i) else { return i };
        if b >= 0x80 {
            return i; // only with ASCII_ONLY
        }
        match b {
            b'"' => out.extend_from_slice(b"\\\""),
            b'\\' => out.extend_from_slice(b"\\\\"),
            b'\n' => out.extend_from_slice(b"\\n"),
            b'\r' => out.extend_from_slice(b"\\r"),
            b'\t' => out.extend_from_slice(b"\\t"),
            _ => {
                const HEX: &[u8; 16] = b"0123456789abcdef";
                out.extend_from_slice(b"\\u00");
                out.extend_from_slice(&[HEX[usize::from(b >> 4)], HEX[usize::from(b & 15)]]);
            }
        }
        i += 1;
    }
}

/// Whether `b` goes into a JSON string as it is: not a control character,
/// quote or backslash, and with `ASCII_ONLY` not above ASCII either.
fn is_plain<const ASCII_ONLY: bool>(b: u8) -> bool {
    b >= 0x20 && b != b'"' && b != b'\\' && (!ASCII_ONLY || b < 0x80)
}

#[cfg(target_arch = "x86_64")]
use plain_run_sse2 as plain_run;
#[cfg(not(target_arch = "x86_64"))]
use plain_run_words as plain_run;

/// How many bytes at the start of `bytes` are plain ([`is_plain`]), 16 at a
/// time: one SSE2 comparison of each kind per 16 bytes (SSE2 is part of every
/// x86_64), the last 16 loaded so that they end where `bytes` does.
#[cfg(target_arch = "x86_64")]
#[inline]
fn plain_run_sse2<const ASCII_ONLY: bool>(bytes: &[u8]) -> usize {
    const BLOCK: usize = 16;
    let n = bytes.len();
    if n < BLOCK {
        return bytes.iter().position(|&b| !is_plain::<ASCII_ONLY>(b)).unwrap_or(n);
    }
    // A bit for each of the 16 bytes of `block` that is not plain.
    let dirty = crate::sys::mem::json_escapes16::<ASCII_ONLY>;
    let (blocks, _) = bytes.as_chunks::<BLOCK>();
    let mut at = 0;
    for block in blocks {
        let mask = dirty(block);
        if mask != 0 {
            return at + mask.trailing_zeros() as usize;
        }
        at += BLOCK;
    }
    if at == n {
        return n;
    }
    // The last block overlaps the one before: its first bytes are known plain.
    let Some(last_block) = bytes.last_chunk::<BLOCK>() else {
        // Cannot happen (n >= BLOCK); the plain way, should it.
        return at + bytes[at..].iter().position(|&b| !is_plain::<ASCII_ONLY>(b)).unwrap_or(n - at);
    };
    let last = n - BLOCK;
    let mask = dirty(last_block) >> (at - last);
    if mask != 0 {
        at + mask.trailing_zeros() as usize
    } else {
        n
    }
}

/// How many bytes at the start of `bytes` are plain ([`is_plain`]), eight at
/// a time: each word tested whole with the "has a byte less than n" and "has
/// a zero byte" tricks, whose lowest flagged byte is always a true one.
#[cfg(any(test, not(target_arch = "x86_64")))]
#[inline]
fn plain_run_words<const ASCII_ONLY: bool>(bytes: &[u8]) -> usize {
    const ONES: u64 = u64::from_le_bytes([1; 8]);
    const HIGHS: u64 = u64::from_le_bytes([0x80; 8]);
    // A byte of `x` below `n` (n at most 128) sets its high bit here.
    let below = |x: u64, n: u8| x.wrapping_sub(ONES * u64::from(n)) & !x & HIGHS;
    let zero = |x: u64| x.wrapping_sub(ONES) & !x & HIGHS;
    let mut at = 0;
    for chunk in bytes.chunks_exact(8) {
        let mut word = [0u8; 8];
        word.copy_from_slice(chunk);
        let x = u64::from_le_bytes(word);
        let high = if ASCII_ONLY { x & HIGHS } else { 0 };
        let mask =
            below(x, 0x20) | zero(x ^ (ONES * u64::from(b'"'))) | zero(x ^ (ONES * u64::from(b'\\'))) | high;
        if mask != 0 {
            return at + (mask.trailing_zeros() / 8) as usize;
        }
        at += 8;
    }
    at + bytes[at..].iter().position(|&b| !is_plain::<ASCII_ONLY>(b)).unwrap_or(bytes.len() - at)
}

/// Splits `data` into lines framed by `framing`, appended to `out`, carrying an
/// unfinished line in `carry` (never longer than [`MAX_LINE`]).
pub fn frame(framing: &Framing, carry: &mut Vec<u8>, data: &[u8], out: &mut Vec<u8>) {
    match framing {
        Framing::Prefixed(prefix) => frame_lines(prefix, carry, data, out),
        Framing::Json { process, stream } => {
            // One time stamp for every line of one read: they arrived together.
            let head = json_head(process, stream);
            out.reserve(framed_room(data.len(), head.len() + 4));
            each_line(carry, data, |line| json_body(&head, line, out));
        }
    }
}

/// Calls `emit` with every complete line (without its newline) of what was
/// carried plus `data`, and keeps the unfinished rest in `carry`. A line
/// longer than [`MAX_LINE`] bytes goes out as pieces of MAX_LINE bytes and a
/// last piece of at most MAX_LINE: the same pieces however the line was cut
/// into reads.
fn each_line(carry: &mut Vec<u8>, mut data: &[u8], mut emit: impl FnMut(&[u8])) {
    let mut start = 0;
    for end in memchr::memchr_iter(b'\n', data) {
        let mut line = &data[start..end];
        start = end + 1;
        if !carry.is_empty() {
            if carry.len() + line.len() <= MAX_LINE {
                carry.extend_from_slice(line);
                emit(carry);
                carry.clear();
                continue;
            }
            // Topped up to a whole piece; the rest is split below.
            let take = MAX_LINE - carry.len();
            carry.extend_from_slice(&line[..take]);
            emit(carry);
            carry.clear();
            line = &line[take..];
        }
        while line.len() > MAX_LINE {
            emit(&line[..MAX_LINE]);
            line = &line[MAX_LINE..];
        }
        emit(line);
    }
    data = &data[start..];
    while carry.len() + data.len() > MAX_LINE {
        let take = MAX_LINE - carry.len();
        carry.extend_from_slice(&data[..take]);
        emit(carry);
        carry.clear();
        data = &data[take..];
    }
    carry.extend_from_slice(data);
}

/// Room (bytes) for `len` bytes of lines framed with `per_line` bytes each,
/// counting on lines of 32 bytes or more: shorter ones grow the buffer as
/// they go, which costs less than counting the lines first (a second pass
/// over the data).
fn framed_room(len: usize, per_line: usize) -> usize {
    len + (len / 32 + 1) * per_line
}

/// Splits `data` into prefixed lines appended to `out`, carrying an unfinished
/// line in `carry` (never longer than [`MAX_LINE`]).
pub fn frame_lines(prefix: &[u8], carry: &mut Vec<u8>, data: &[u8], out: &mut Vec<u8>) {
    out.reserve(carry.len() + framed_room(data.len(), prefix.len() + 1));
    each_line(carry, data, |line| {
        append(out, prefix);
        append(out, line);
        out.push(b'\n');
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn append_copies_every_length_to_every_offset() {
        let src: Vec<u8> = (0..300u32).map(|i| (i * 7 + 1) as u8).collect();
        for start in 0..20 {
            for n in 0..=src.len() {
                let mut out: Vec<u8> = (0..start).map(|i| i as u8 ^ 0xaa).collect();
                let mut expected = out.clone();
                expected.extend_from_slice(&src[..n]);
                append(&mut out, &src[..n]);
                assert_eq!(out, expected, "start {start}, length {n}");
            }
        }
    }

    #[test]
    fn lines_are_prefixed_and_partial_lines_carried() {
        let mut carry = Vec::new();
        let mut out = Vec::new();
        frame_lines(b"a | ", &mut carry, b"one\ntw", &mut out);
        assert_eq!(out, b"a | one\n");
        assert_eq!(carry, b"tw");
        out.clear();
        frame_lines(b"a | ", &mut carry, b"o\n\nthree", &mut out);
        assert_eq!(out, b"a | two\na | \n");
        assert_eq!(carry, b"three");
    }

    #[test]
    fn a_long_line_is_cut_into_the_same_pieces_however_it_is_read() {
        let mut line = vec![b'y'; 2 * MAX_LINE + 3];
        line.push(b'\n');
        let whole = {
            let (mut carry, mut out) = (Vec::new(), Vec::new());
            frame_lines(b"p | ", &mut carry, &line, &mut out);
            assert!(carry.is_empty());
            out
        };
        assert_eq!(whole.len(), 3 * 4 + 2 * MAX_LINE + 3 + 3);
        for cut in [1, 10, MAX_LINE - 1, MAX_LINE, MAX_LINE + 1, 2 * MAX_LINE + 3] {
            let (mut carry, mut out) = (Vec::new(), Vec::new());
            for piece in line.chunks(cut) {
                frame_lines(b"p | ", &mut carry, piece, &mut out);
                assert!(carry.len() <= MAX_LINE);
            }
            assert!(out == whole, "reads of {cut}");
        }
        // Exactly MAX_LINE bytes, then the newline in the next read: one line.
        let (mut carry, mut out) = (Vec::new(), Vec::new());
        frame_lines(b"", &mut carry, &vec![b'z'; MAX_LINE], &mut out);
        frame_lines(b"", &mut carry, b"\n", &mut out);
        assert_eq!(out.len(), MAX_LINE + 1);
    }

    #[test]
    fn long_lines_are_split_and_memory_bounded() {
        let mut carry = Vec::new();
        let mut out = Vec::new();
        let big = vec![b'x'; MAX_LINE * 2 + 10];
        frame_lines(b"p | ", &mut carry, &big, &mut out);
        assert_eq!(out.len(), 2 * (4 + MAX_LINE + 1));
        assert_eq!(carry.len(), 10);
        assert!(carry.len() < MAX_LINE);
    }

    #[test]
    fn json_lines_escape_and_replace_invalid_utf8() {
        let framing = Framing::Json { process: "app".into(), stream: "stderr" };
        let mut carry = Vec::new();
        let mut out = Vec::new();
        frame(&framing, &mut carry, b"say \"hi\"\t\\\x01\xff\nrest", &mut out);
        let text = String::from_utf8(out).unwrap();
        assert!(text.starts_with("{\"time\":\"20"), "{text}");
        assert!(text.ends_with(",\"process\":\"app\",\"stream\":\"stderr\",\"line\":\"say \\\"hi\\\"\\t\\\\\\u0001\u{fffd}\"}\n"), "{text}");
        assert_eq!(carry, b"rest");
    }

    /// One byte at a time, the plain way: what `json_string` must match.
    fn reference(s: &str) -> Vec<u8> {
        let mut out = vec![b'"'];
        for &b in s.as_bytes() {
            match b {
                b'"' => out.extend_from_slice(b"\\\""),
                b'\\' => out.extend_from_slice(b"\\\\"),
                b'\n' => out.extend_from_slice(b"\\n"),
                b'\r' => out.extend_from_slice(b"\\r"),
                b'\t' => out.extend_from_slice(b"\\t"),
                0..=0x1f => out.extend_from_slice(format!("\\u{b:04x}").as_bytes()),
                _ => out.push(b),
            }
        }
        out.push(b'"');
        out
    }

    #[test]
    fn json_strings_escape_exactly_as_one_byte_at_a_time_would() {
        let specials = ['"', '\\', '\n', '\r', '\t', '\u{1}', '\u{1f}', 'é', '€', 'a'];
        let mut seed: u64 = 1;
        for len in 0..200 {
            let text: String = (0..len)
                .map(|_| {
                    seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
                    // Mostly plain text, now and then a byte to escape.
                    if seed >> 60 == 0 {
                        specials[(seed >> 32) as usize % specials.len()]
                    } else {
                        'x'
                    }
                })
                .collect();
            let mut out = Vec::new();
            json_string(&text, &mut out);
            assert_eq!(String::from_utf8_lossy(&out), String::from_utf8_lossy(&reference(&text)), "{text:?}");
        }
    }

    #[test]
    fn json_lines_match_the_plain_way_for_any_bytes() {
        // Bytes to escape, UTF-8 sequences whole and cut, and bytes that are
        // never UTF-8, at every offset of lines shorter and longer than the
        // 16-byte blocks of the scan.
        let pieces: [&[u8]; 12] = [
            b"\"",
            b"\\",
            b"\t",
            b"\x01",
            b"\x1f",
            b"\x7f",
            "é".as_bytes(),
            "€".as_bytes(),
            b"\xe2\x82",
            b"\xff",
            b"\x80",
            b" ",
        ];
        let mut seed: u64 = 7;
        for len in 0..120 {
            for _ in 0..20 {
                let mut line = Vec::new();
                while line.len() < len {
                    seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
                    if seed >> 61 == 0 {
                        line.extend_from_slice(pieces[(seed >> 32) as usize % pieces.len()]);
                    } else {
                        line.push(b'a' + (seed >> 40) as u8 % 26);
                    }
                }
                let mut out = Vec::new();
                json_body(b"", &line, &mut out);
                let mut want = reference(&String::from_utf8_lossy(&line));
                want.extend_from_slice(b"}\n");
                assert!(
                    out == want,
                    "{:?}: {:?}",
                    String::from_utf8_lossy(&line),
                    String::from_utf8_lossy(&out)
                );
            }
        }
    }

    #[test]
    fn both_scans_stop_at_the_first_byte_that_is_not_plain() {
        let mut seed: u64 = 3;
        for len in 0..80 {
            for _ in 0..200 {
                let bytes: Vec<u8> = (0..len)
                    .map(|_| {
                        seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
                        // Mostly plain bytes; now and then any byte at all.
                        if seed >> 59 == 0 {
                            (seed >> 32) as u8
                        } else {
                            b'a'
                        }
                    })
                    .collect();
                let want = |ascii: bool| {
                    let plain = |b: u8| if ascii { is_plain::<true>(b) } else { is_plain::<false>(b) };
                    bytes.iter().position(|&b| !plain(b)).unwrap_or(len)
                };
                assert_eq!(plain_run_words::<true>(&bytes), want(true), "{bytes:?}");
                assert_eq!(plain_run_words::<false>(&bytes), want(false), "{bytes:?}");
                #[cfg(target_arch = "x86_64")]
                {
                    assert_eq!(plain_run_sse2::<true>(&bytes), want(true), "{bytes:?}");
                    assert_eq!(plain_run_sse2::<false>(&bytes), want(false), "{bytes:?}");
                }
            }
        }
    }

    #[test]
    fn bytes_that_are_not_utf8_pass_through() {
        let mut carry = Vec::new();
        let mut out = Vec::new();
        frame_lines(b"p | ", &mut carry, b"\xff\xfe\x00ok\n", &mut out);
        assert_eq!(out, b"p | \xff\xfe\x00ok\n");
    }
}
