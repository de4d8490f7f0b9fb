//! Short byte strings read as machine words: two overlapping loads cover any string of 4
//! to 8 (or 9 to 16) bytes, so comparing or classifying a key needs no loop and no call
//! (`memcmp`, `from_utf8`), which cost more than the work for the short keys of a body or
//! an object.

/// The 4 bytes of `s` at `at`, native-endian; `None` out of range.
#[inline(always)]
pub fn word4(s: &[u8], at: usize) -> Option<u32> {
    s.get(at..at.checked_add(4)?)
        .and_then(|w| w.try_into().ok())
        .map(u32::from_ne_bytes)
}

/// The 8 bytes of `s` at `at`, native-endian; `None` out of range.
#[inline(always)]
pub fn word8(s: &[u8], at: usize) -> Option<u64> {
    s.get(at..at.checked_add(8)?)
        .and_then(|w| w.try_into().ok())
        .map(u64::from_ne_bytes)
}

/// Whether `b` is all ASCII, a short one (most keys and strings of a body) in two
/// overlapping words and no loop.
#[inline(always)]
pub fn is_ascii(b: &[u8]) -> bool {
    // Out of range (never, for the offsets below) reads as all high bits: not ASCII.
    let w4 = |at| word4(b, at).unwrap_or(u32::MAX);
    let w8 = |at| word8(b, at).unwrap_or(u64::MAX);
    let n = b.len();
    match n {
        0..=3 => b.iter().all(|&c| c < 0x80),
        4..=8 => (w4(0) | w4(n - 4)) & 0x8080_8080 == 0,
        9..=16 => (w8(0) | w8(n - 8)) & HIGH8 == 0,
        _ => is_ascii_long(b),
    }
}

const HIGH8: u64 = 0x8080_8080_8080_8080;

/// [`is_ascii`] of more than 16 bytes. The standard library checks whole 64-byte blocks
/// 16 bytes at a time but the rest byte by byte (up to 63 compares and branches: names,
/// API versions, the program's last line); here the rest is the OR of words, the last
/// one overlapping, a loop without exits the compiler vectorizes.
#[inline(never)]
fn is_ascii_long(b: &[u8]) -> bool {
    let n = b.len();
    if n < 8 {
        return b.is_ascii();
    }
    // The blocks, then what follows them: at least the last 8 bytes (a word already
    // checked twice is still ASCII).
    let bulk = n - n % 64;
    b[..bulk].is_ascii() && words_are_ascii(&b[bulk.min(n - 8)..])
}

/// Whether every byte of `b` (at least 8 bytes) is ASCII: its 8-byte words ORed.
#[inline(always)]
fn words_are_ascii(b: &[u8]) -> bool {
    let mut acc = 0u64;
    let chunks = b.chunks_exact(8);
    let last = word8(b, b.len().wrapping_sub(8)).unwrap_or(u64::MAX);
    for c in chunks {
        let w: [u8; 8] = c.try_into().unwrap_or([0xff; 8]);
        acc |= u64::from_ne_bytes(w);
    }
    (acc | last) & HIGH8 == 0
}

/// `b` as a str if it is UTF-8: short ASCII (most keys and strings of a request) is
/// recognised by [`is_ascii`] without the call to `from_utf8`, which cost ~50
/// instructions a string of a few bytes.
#[inline(always)]
pub fn str_of(b: &[u8]) -> Option<&str> {
    if is_ascii(b) {
        // SAFETY: every byte is ASCII (checked just above), and ASCII is UTF-8.
        return Some(unsafe { std::str::from_utf8_unchecked(b) });
    }
    std::str::from_utf8(b).ok()
}

/// Copies `src` to the start of `dst` (which must be as long), a string of up to 16
/// bytes in two overlapping loads and stores instead of a call to `memcpy`: the many
/// short keys and strings written into a response.
// Forced inline in release builds (measured: a call in some writers cost 1-3%); left to
// the compiler in debug builds, where forcing it grew the response writer's recursive
// frames until the 512-level nesting test overflowed its stack.
#[cfg_attr(not(debug_assertions), inline(always))]
#[cfg_attr(debug_assertions, inline)]
pub fn copy_short(dst: &mut [u8], src: &[u8]) {
    let n = src.len();
    let Some(dst) = dst.get_mut(..n) else {
        panic!("copy_short: {n} bytes into {}", dst.len());
    };
    match (n, word8(src, 0), word8(src, n.wrapping_sub(8))) {
        (8..=16, Some(a), Some(b)) => {
            dst[..8].copy_from_slice(&a.to_ne_bytes());
            dst[n - 8..].copy_from_slice(&b.to_ne_bytes());
        }
        (4..8, ..) => {
            let (a, b) = (word4(src, 0), word4(src, n - 4));
            if let (Some(a), Some(b)) = (a, b) {
                dst[..4].copy_from_slice(&a.to_ne_bytes());
                dst[n - 4..].copy_from_slice(&b.to_ne_bytes());
            }
        }
        (0..4, ..) => {
            for (d, c) in dst.iter_mut().zip(src) {
                *d = *c;
            }
        }
        _ => dst.copy_from_slice(src),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every length around the word sizes lands exactly, the rest of `dst` untouched.
    #[test]
    fn copy_short_copies_every_length() {
        let src: Vec<u8> = (1..=40).collect();
        for n in 0..=40 {
            let mut dst = [0xeeu8; 48];
            copy_short(&mut dst, &src[..n]);
            assert_eq!(&dst[..n], &src[..n], "{n}");
            assert!(dst[n..].iter().all(|&b| b == 0xee), "{n}");
        }
    }

    /// `str_of` is `from_utf8` for every length around the word sizes, with a non-ASCII
    /// or invalid byte at each position.
    #[test]
    fn str_of_is_from_utf8() {
        for n in 0..=40usize {
            let a: Vec<u8> = (0..n as u8).map(|i| b'a' + i % 26).collect();
            assert_eq!(str_of(&a), std::str::from_utf8(&a).ok(), "{n}");
            for i in 0..n {
                for bad in [0x80u8, 0xff, 0xc3] {
                    let mut b = a.clone();
                    b[i] = bad;
                    assert_eq!(str_of(&b), std::str::from_utf8(&b).ok(), "{n} at {i}");
                    assert!(!is_ascii(&b));
                }
                let mut b = a.clone();
                b.splice(i..i + 1, "\u{e9}".bytes());
                assert_eq!(str_of(&b), std::str::from_utf8(&b).ok(), "{n} at {i}");
            }
        }
    }

    /// `is_ascii` is the standard library's for every length to past two 64-byte
    /// blocks, with one non-ASCII byte at each position.
    #[test]
    fn is_ascii_is_the_standard_librarys() {
        for n in 0..=200usize {
            let a: Vec<u8> = (0..n).map(|i| b' ' + (i % 90) as u8).collect();
            assert!(is_ascii(&a), "{n}");
            for i in 0..n {
                let mut b = a.clone();
                b[i] = 0x80 | (i as u8);
                assert_eq!(is_ascii(&b), b.is_ascii(), "{n} at {i}");
            }
        }
    }

    #[test]
    fn words_are_the_bytes_in_range() {
        let s = b"abcdefghij";
        assert_eq!(word4(s, 0), Some(u32::from_ne_bytes(*b"abcd")));
        assert_eq!(word4(s, 6), Some(u32::from_ne_bytes(*b"ghij")));
        assert_eq!(word4(s, 7), None);
        assert_eq!(word8(s, 2), Some(u64::from_ne_bytes(*b"cdefghij")));
        assert_eq!(word8(s, 3), None);
        assert_eq!(word8(s, usize::MAX), None);
    }
}
