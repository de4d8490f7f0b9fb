//! Lowercase hex, as Go's `hex.EncodeToString` and `%x` write bytes (digests, IP
//! addresses and masks in messages).

/// `bytes` in lowercase hex, written into `buf` (two bytes per byte; what does not fit is
/// left out): the text written. A caller's stack buffer keeps the result's string the
/// only allocation.
pub fn hex_into<'b>(bytes: &[u8], buf: &'b mut [u8]) -> &'b str {
    const H: &[u8; 16] = b"0123456789abcdef";
    let mut n = 0;
    for (b, out) in bytes.iter().zip(buf.chunks_exact_mut(2)) {
        out[0] = H[(b >> 4) as usize];
        out[1] = H[(b & 15) as usize];
        n += 2;
    }
    // Only ASCII hex digits were written.
    crate::text::words::str_of(&buf[..n]).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lowercase_two_digits_per_byte() {
        let mut buf = [0u8; 8];
        assert_eq!(hex_into(&[0x00, 0x0f, 0xa0, 0xff], &mut buf), "000fa0ff");
        assert_eq!(hex_into(&[], &mut buf), "");
        // A short buffer takes the bytes that fit.
        assert_eq!(hex_into(&[1, 2, 3], &mut [0u8; 4]), "0102");
    }
}
