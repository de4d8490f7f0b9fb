//! Go's `encoding/base64` standard encoding as cty, Terraform and Crossplane's connection
//! details see it: the decoder's rules (padding required, `\r`/`\n` skipped, trailing
//! bits tolerated) and its error offsets decide which inputs are valid and what messages say.

use base64::Engine as _;

/// Go's `base64.StdEncoding.EncodeToString` (the base64 crate's standard engine writes
/// the same: standard alphabet, `=` padding).
pub fn base64_encode(data: &[u8]) -> String {
    base64::engine::general_purpose::STANDARD.encode(data)
}

/// [`base64_encode`] written into `buf`, if it fits.
pub fn base64_encode_short<'b>(data: &[u8], buf: &'b mut [u8]) -> Option<&'b str> {
    let n = base64::engine::general_purpose::STANDARD
        .encode_slice(data, buf)
        .ok()?;
    // The alphabet and padding are ASCII.
    crate::text::words::str_of(buf.get(..n)?)
}

const fn b64_value(c: u8) -> Option<u8> {
    match c {
        b'A'..=b'Z' => Some(c - b'A'),
        b'a'..=b'z' => Some(c - b'a' + 26),
        b'0'..=b'9' => Some(c - b'0' + 52),
        b'+' => Some(62),
        b'/' => Some(63),
        _ => None,
    }
}

/// Go's `base64.StdEncoding.DecodeString`: padding required, `\r` and `\n` skipped,
/// trailing bits tolerated. The error is Go's `CorruptInputError` offset.
pub fn go_base64_decode(src: &[u8]) -> Result<Vec<u8>, usize> {
    match decode_plain(src) {
        Some(bytes) => Ok(bytes),
        None => decode_exact(src),
    }
}

/// Each byte's value in the standard alphabet; 0xff for any other byte.
static VALUES: [u8; 256] = {
    let mut t = [0xffu8; 256];
    let mut i = 0;
    while i < 256 {
        if let Some(v) = b64_value(i as u8) {
            t[i] = v;
        }
        i += 1;
    }
    t
};

/// Canonical input, the usual secret: whole quanta of the alphabet, the last padded with
/// at most two `=`, nothing else. Go's decoder reads it to these bytes (trailing bits
/// ignored); anything else is `None`, left to [`decode_exact`], which knows Go's skipped
/// `\r`/`\n` and its error offsets. A table and one check per quantum: the base64 crate's
/// engine, used before, took ~600 instructions for a 44-byte secret (`services-500`).
fn decode_plain(src: &[u8]) -> Option<Vec<u8>> {
    if !src.len().is_multiple_of(4) {
        return None;
    }
    let pad = match src {
        [.., b'=', b'='] => 2,
        [.., b'='] => 1,
        _ => 0,
    };
    let mut out = Vec::with_capacity(src.len() / 4 * 3 - pad);
    let quanta = src.chunks_exact(4);
    let last = quanta.len().wrapping_sub(1);
    for (i, q) in quanta.enumerate() {
        let keep = if i == last { 3 - pad } else { 3 };
        let v = |j: usize| {
            let b = if j > keep { b'A' } else { q[j] };
            u32::from(VALUES[b as usize])
        };
        let (a, b, c, d) = (v(0), v(1), v(2), v(3));
        if (a | b | c | d) & 0x80 != 0 {
            return None;
        }
        let val = a << 18 | b << 12 | c << 6 | d;
        let bytes = [(val >> 16) as u8, (val >> 8) as u8, val as u8];
        out.extend_from_slice(&bytes[..keep]);
    }
    Some(out)
}

/// [`go_base64_decode`] quantum by quantum, as Go's decoder reads: the path for line
/// breaks and for errors (whose offsets Go reports).
fn decode_exact(src: &[u8]) -> Result<Vec<u8>, usize> {
    let mut out = Vec::with_capacity(src.len() / 4 * 3);
    let mut si = 0usize;
    while si < src.len() {
        let mut dbuf = [0u8; 4];
        let mut dlen = 4;
        let mut j = 0usize;
        let mut trailing_err: Option<usize> = None;
        while j < 4 {
            if si == src.len() {
                if j == 0 {
                    return Ok(out);
                }
                // Padding is required: a short quantum is corrupt.
                return Err(si - j);
            }
            let c = src[si];
            si += 1;
            if let Some(v) = b64_value(c) {
                dbuf[j] = v;
                j += 1;
                continue;
            }
            if c == b'\n' || c == b'\r' {
                continue;
            }
            if c != b'=' {
                return Err(si - 1);
            }
            // Padding.
            match j {
                0 | 1 => return Err(si - 1),
                2 => {
                    while si < src.len() && (src[si] == b'\n' || src[si] == b'\r') {
                        si += 1;
                    }
                    if si == src.len() {
                        return Err(src.len());
                    }
                    if src[si] != b'=' {
                        return Err(si - 1);
                    }
                    si += 1;
                }
                _ => {}
            }
            while si < src.len() && (src[si] == b'\n' || src[si] == b'\r') {
                si += 1;
            }
            if si < src.len() {
                trailing_err = Some(si);
            }
            dlen = j;
            break;
        }
        let val = u32::from(dbuf[0]) << 18
            | u32::from(dbuf[1]) << 12
            | u32::from(dbuf[2]) << 6
            | u32::from(dbuf[3]);
        let bytes = [(val >> 16) as u8, (val >> 8) as u8, val as u8];
        out.extend_from_slice(&bytes[..dlen - 1]);
        if let Some(e) = trailing_err {
            return Err(e);
        }
        if dlen < 4 {
            break;
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decodes_like_go() {
        assert_eq!(go_base64_decode(b"***"), Err(0));
        assert_eq!(go_base64_decode(b"aGk=x"), Err(4));
        assert_eq!(go_base64_decode(b"a==="), Err(1));
        assert_eq!(go_base64_decode(b"aGk"), Err(0));
        // Non-zero trailing bits are accepted, as by Go's non-strict decoder.
        assert_eq!(go_base64_decode(b"aGl="), Ok(b"hi".to_vec()));
        assert_eq!(go_base64_decode(b"aG\r\nk="), Ok(b"hi".to_vec()));
        assert_eq!(base64_encode(b"hi"), "aGk=");
    }

    #[test]
    fn encodes_rfc4648_vectors() {
        for (plain, coded) in [
            ("", ""),
            ("f", "Zg=="),
            ("fo", "Zm8="),
            ("foo", "Zm9v"),
            ("foob", "Zm9vYg=="),
            ("fooba", "Zm9vYmE="),
            ("foobar", "Zm9vYmFy"),
        ] {
            assert_eq!(base64_encode(plain.as_bytes()), coded);
            let mut buf = [0u8; 8];
            assert_eq!(base64_encode_short(plain.as_bytes(), &mut buf), Some(coded));
        }
        assert_eq!(base64_encode(&[0xfb, 0xff, 0xbf]), "+/+/");
        // Too long for the buffer: none (the caller encodes into a string).
        assert_eq!(base64_encode_short(b"foobar", &mut [0u8; 7]), None);
    }

    /// Every string of up to 6 symbols over an alphabet with each class of byte Go's
    /// decoder tells apart, plus random longer ones: [`decode_plain`]'s answer where it
    /// accepts is always [`decode_exact`]'s, and every canonical encoding takes it.
    #[test]
    fn fast_decode_agrees_with_gos_rules() {
        const SYMS: &[u8] = b"ABQg/=\n\r*";
        let mut checked = 0;
        let mut agree = |b: &[u8]| {
            let lossy = String::from_utf8_lossy(b);
            assert_eq!(go_base64_decode(b), decode_exact(b), "{lossy:?}");
            checked += 1;
        };
        let mut buf = Vec::new();
        for len in 0..=6u32 {
            for mut code in 0..(SYMS.len() as u64).pow(len) {
                buf.clear();
                for _ in 0..len {
                    buf.push(SYMS[(code % SYMS.len() as u64) as usize]);
                    code /= SYMS.len() as u64;
                }
                agree(&buf);
            }
        }
        // Longer inputs: valid encodings with one byte changed, shortened or broken.
        let mut rng = crate::text::Xorshift(0x9e37_79b9_7f4a_7c15);
        for _ in 0..20_000 {
            let x = rng.word();
            let data: Vec<u8> = (0..(x % 40) as usize)
                .map(|i| (x >> (i % 8 * 8)) as u8 ^ i as u8)
                .collect();
            let mut coded = base64_encode(&data).into_bytes();
            assert_eq!(decode_plain(&coded).as_ref(), Some(&data));
            if !coded.is_empty() && !x.is_multiple_of(3) {
                let at = (x >> 20) as usize % coded.len();
                coded[at] = SYMS[(x >> 40) as usize % SYMS.len()];
            }
            if x.is_multiple_of(5) {
                coded.truncate(coded.len().saturating_sub(1));
            }
            agree(&coded);
        }
        assert!(checked > 100_000);
    }
}
