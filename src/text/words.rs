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

#[cfg(test)]
mod tests {
    use super::*;

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
