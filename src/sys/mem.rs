//! The output hot path's two uses of `unsafe` that are no system call: a
//! short append done in place rather than by the C library's `memcpy`, and
//! a 16-byte SSE2 scan for what a JSON string must escape. Their caller is
//! `output/framing.rs`.

/// Appends `src` to `out`, with the copy of a short `src` (at most 128
/// bytes, `SHORT_COPY`: a prefix, a JSON head, a typical log line) done in
/// place rather than by the C library. musl's `memcpy` moves bytes one at a
/// time until the destination is aligned and then starts `rep movsq`, which
/// costs more than the copy itself at these sizes: with two or three short
/// copies per line it was a quarter of the CPU of a prefixed pipeline of
/// 100-byte lines (perf). Longer slices go to `memcpy`.
#[inline]
pub fn append(out: &mut Vec<u8>, src: &[u8]) {
    let n = src.len();
    if n > SHORT_COPY {
        out.extend_from_slice(src);
        return;
    }
    out.reserve(n);
    let len = out.len();
    let dst = &mut out.spare_capacity_mut()[..n];
    // Two copies of a fixed size that overlap in the middle cover any length
    // from that size to twice it; LLVM turns each into a few vector moves.
    match n {
        65.. => overlapping::<64>(dst, src),
        32..=64 => overlapping::<32>(dst, src),
        16..=31 => overlapping::<16>(dst, src),
        8..=15 => overlapping::<8>(dst, src),
        4..=7 => overlapping::<4>(dst, src),
        1..=3 => {
            dst[0].write(src[0]);
            dst[n / 2].write(src[n / 2]);
            dst[n - 1].write(src[n - 1]);
        }
        0 => {}
    }
    // SAFETY: the n bytes after `len` were reserved and have all been written.
    unsafe { out.set_len(len + n) };
}

/// Longest slice [`append`] copies itself (bytes).
const SHORT_COPY: usize = 128;

/// Copies `src` (N to 2N bytes) to `dst` (as long) as its first N and its last
/// N bytes.
#[inline(always)]
fn overlapping<const N: usize>(dst: &mut [std::mem::MaybeUninit<u8>], src: &[u8]) {
    let n = src.len();
    debug_assert!((N..=2 * N).contains(&n) && dst.len() == n);
    let (src_head, src_tail) = (&src[..N], &src[n - N..]);
    // SAFETY: each slice read or written here is N bytes long (the slicing
    // checks the bounds: n >= N and dst is n long), read and written as one
    // unaligned [u8; N]; MaybeUninit<u8> has the layout of u8.
    unsafe {
        let head = src_head.as_ptr().cast::<[u8; N]>().read_unaligned();
        let tail = src_tail.as_ptr().cast::<[u8; N]>().read_unaligned();
        dst[..N].as_mut_ptr().cast::<[u8; N]>().write_unaligned(head);
        dst[n - N..].as_mut_ptr().cast::<[u8; N]>().write_unaligned(tail);
    }
}

/// A bit (bit i for byte i) for each of the 16 bytes of `block` that a
/// JSON string cannot hold as it is: a control character (below 0x20), a
/// quote or a backslash, and with `ASCII_ONLY` any byte from 0x80 up. One
/// SSE2 comparison of each kind for the 16 (SSE2 is part of every x86_64).
#[cfg(target_arch = "x86_64")]
#[inline(always)]
pub fn json_escapes16<const ASCII_ONLY: bool>(block: &[u8; 16]) -> u32 {
    use std::arch::x86_64::{
        _mm_cmpeq_epi8, _mm_cmplt_epi8, _mm_loadu_si128, _mm_min_epu8, _mm_movemask_epi8, _mm_or_si128,
        _mm_set1_epi8,
    };
    // SAFETY: SSE2 is always there on x86_64; the load reads exactly the 16
    // bytes of `block`, and unaligned loads are allowed.
    unsafe {
        let x = _mm_loadu_si128(block.as_ptr().cast());
        let low = if ASCII_ONLY {
            // Signed: below 0x20, or 0x80 and above.
            _mm_cmplt_epi8(x, _mm_set1_epi8(0x20))
        } else {
            // Unsigned x <= 0x1f.
            _mm_cmpeq_epi8(_mm_min_epu8(x, _mm_set1_epi8(0x1f)), x)
        };
        let quote = _mm_cmpeq_epi8(x, _mm_set1_epi8(b'"' as i8));
        let backslash = _mm_cmpeq_epi8(x, _mm_set1_epi8(b'\\' as i8));
        _mm_movemask_epi8(_mm_or_si128(low, _mm_or_si128(quote, backslash))) as u32
    }
}
