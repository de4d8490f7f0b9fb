//! Built-in functions: hashes (`md5`, `sha1`, `sha256`, `sha512`, `base64sha256`,
//! `base64sha512`, all over the string's UTF-8 bytes) and `rsadecrypt` (Terraform's:
//! PKCS #1 v1.5 with a PEM key in PKCS #1 or PKCS #8 form, as Go's
//! `ssh.ParseRawPrivateKey` reads it).

use super::{FuncDef, FuncError, str_arg};
use crate::text::base64::{base64_encode, go_base64_decode};
use crate::text::quote::go_quote;
use crate::value::{Str, Value};
use md5::Md5;
use sha1::Sha1;
use sha2::{Digest, Sha256, Sha512};

/// The crypto and hash functions.
pub static FUNCS: &[FuncDef] = funcs! {
    md5(str: String),
    sha1(str: String),
    sha256(str: String),
    sha512(str: String),
    base64sha256(str: String),
    base64sha512(str: String),
    rsadecrypt(ciphertext: String, privatekey: String),
};

/// Lowercase hex of a digest (at most 64 bytes: SHA-512), written on the stack so that
/// the string value is the one allocation.
fn hex(bytes: &[u8]) -> Str {
    Str::from(crate::text::hex::hex_into(bytes, &mut [0u8; 128]))
}

fn md5(args: &[Value]) -> Result<Value, FuncError> {
    Ok(Value::string(hex(&Md5::digest(
        str_arg(args, 0)?.as_bytes(),
    ))))
}

fn sha1(args: &[Value]) -> Result<Value, FuncError> {
    Ok(Value::string(hex(&Sha1::digest(
        str_arg(args, 0)?.as_bytes(),
    ))))
}

fn sha256(args: &[Value]) -> Result<Value, FuncError> {
    Ok(Value::string(hex(&Sha256::digest(
        str_arg(args, 0)?.as_bytes(),
    ))))
}

fn sha512(args: &[Value]) -> Result<Value, FuncError> {
    Ok(Value::string(hex(&Sha512::digest(
        str_arg(args, 0)?.as_bytes(),
    ))))
}

fn base64sha256(args: &[Value]) -> Result<Value, FuncError> {
    Ok(Value::string(base64_encode(&Sha256::digest(
        str_arg(args, 0)?.as_bytes(),
    ))))
}

fn base64sha512(args: &[Value]) -> Result<Value, FuncError> {
    Ok(Value::string(base64_encode(&Sha512::digest(
        str_arg(args, 0)?.as_bytes(),
    ))))
}

/// A PEM block as Go's `encoding/pem.Decode` finds it.
struct PemBlock {
    kind: String,
    headers: Vec<(String, String)>,
    bytes: Vec<u8>,
}

/// Go's `getLine`: the line without its end-of-line and trailing spaces/tabs, and the rest.
fn get_line(data: &[u8]) -> (&[u8], &[u8]) {
    let (mut i, j) = match data.iter().position(|&b| b == b'\n') {
        Some(i) => (i, i + 1),
        None => (data.len(), data.len()),
    };
    if j > i && i > 0 && data[i - 1] == b'\r' {
        i -= 1;
    }
    let mut line = &data[..i];
    while let Some((&last, rest)) = line.split_last() {
        if last == b' ' || last == b'\t' {
            line = rest;
        } else {
            break;
        }
    }
    (line, &data[j..])
}

fn find(hay: &[u8], needle: &[u8]) -> Option<usize> {
    hay.windows(needle.len()).position(|w| w == needle)
}

fn trim_ascii_space(b: &[u8]) -> &[u8] {
    b.trim_ascii()
}

/// Go's `pem.Decode` (first block only).
fn pem_decode(data: &[u8]) -> Option<PemBlock> {
    const START: &[u8] = b"\n-----BEGIN ";
    const END: &[u8] = b"\n-----END ";
    const EOL: &[u8] = b"-----";
    let mut rest = data;
    loop {
        if rest.starts_with(&START[1..]) {
            rest = &rest[START.len() - 1..];
        } else if let Some(i) = find(rest, START) {
            rest = &rest[i + START.len()..];
        } else {
            return None;
        }
        let (type_line, after) = get_line(rest);
        rest = after;
        let Some(kind) = type_line.strip_suffix(EOL) else {
            continue;
        };
        let mut headers = Vec::new();
        loop {
            if rest.is_empty() {
                return None;
            }
            let (line, next) = get_line(rest);
            let Some(colon) = line.iter().position(|&b| b == b':') else {
                break;
            };
            let key = trim_ascii_space(&line[..colon]);
            let val = trim_ascii_space(&line[colon + 1..]);
            headers.push((
                String::from_utf8_lossy(key).into_owned(),
                String::from_utf8_lossy(val).into_owned(),
            ));
            rest = next;
        }
        let (end_index, end_trailer_index) = if headers.is_empty() && rest.starts_with(&END[1..]) {
            (0usize, END.len() - 1)
        } else {
            match find(rest, END) {
                Some(i) => (i, i + END.len()),
                None => continue,
            }
        };
        let end_trailer = &rest[end_trailer_index..];
        let trailer_len = kind.len() + EOL.len();
        if end_trailer.len() < trailer_len {
            continue;
        }
        let rest_of_end_line = &end_trailer[trailer_len..];
        let trailer = &end_trailer[..trailer_len];
        if !trailer.starts_with(kind) || !trailer.ends_with(EOL) {
            continue;
        }
        if !get_line(rest_of_end_line).0.is_empty() {
            continue;
        }
        let b64: Vec<u8> = rest[..end_index]
            .iter()
            .copied()
            .filter(|&b| b != b' ' && b != b'\t')
            .collect();
        let Ok(bytes) = go_base64_decode(&b64) else {
            continue;
        };
        return Some(PemBlock {
            kind: String::from_utf8_lossy(kind).into_owned(),
            headers,
            bytes,
        });
    }
}

/// Go's `ssh.ParseRawPrivateKey`, for the RSA keys Terraform can use; other key kinds
/// report Terraform's "invalid private key type".
fn parse_rsa_key(pem: &str) -> Result<rsa::RsaPrivateKey, String> {
    use rsa::pkcs1::DecodeRsaPrivateKey;
    use rsa::pkcs8::DecodePrivateKey;
    let Some(block) = pem_decode(pem.as_bytes()) else {
        return Err("invalid private key: ssh: no key found".into());
    };
    let encrypted = block
        .headers
        .iter()
        .any(|(k, v)| k == "Proc-Type" && v.contains("ENCRYPTED"));
    if encrypted {
        return Err("invalid private key: ssh: this private key is passphrase protected".into());
    }
    match block.kind.as_str() {
        "RSA PRIVATE KEY" => rsa::RsaPrivateKey::from_pkcs1_der(&block.bytes).map_err(|_| {
            if rsa::pkcs8::PrivateKeyInfo::try_from(block.bytes.as_slice()).is_ok() {
                "invalid private key: x509: failed to parse private key (use ParsePKCS8PrivateKey instead for this key format)".to_string()
            } else {
                "invalid ASN1 data in the given private key: sequence truncated".to_string()
            }
        }),
        "PRIVATE KEY" => rsa::RsaPrivateKey::from_pkcs8_der(&block.bytes).map_err(|e| match e {
            rsa::pkcs8::Error::KeyMalformed | rsa::pkcs8::Error::Asn1(_) => {
                "invalid private key: x509: failed to parse private key".to_string()
            }
            _ => "invalid private key type".to_string(),
        }),
        "OPENSSH PRIVATE KEY" => parse_openssh_rsa(&block.bytes),
        "EC PRIVATE KEY" | "DSA PRIVATE KEY" => Err("invalid private key type".into()),
        other => Err(format!(
            "invalid private key: ssh: unsupported key type {}",
            go_quote(other)
        )),
    }
}

/// A reader of the SSH wire format (RFC 4251 strings and integers).
struct SshReader<'a>(&'a [u8]);

impl<'a> SshReader<'a> {
    fn u32(&mut self) -> Option<u32> {
        let (head, rest) = self.0.split_first_chunk::<4>()?;
        self.0 = rest;
        Some(u32::from_be_bytes(*head))
    }
    fn string(&mut self) -> Option<&'a [u8]> {
        let n = self.u32()? as usize;
        if n > self.0.len() {
            return None;
        }
        let (s, rest) = self.0.split_at(n);
        self.0 = rest;
        Some(s)
    }
    fn mpint(&mut self) -> Option<rsa::BigUint> {
        self.string().map(rsa::BigUint::from_bytes_be)
    }
}

/// An unencrypted `openssh-key-v1` RSA key, as Go's `parseOpenSSHPrivateKey` reads it.
fn parse_openssh_rsa(data: &[u8]) -> Result<rsa::RsaPrivateKey, String> {
    const MAGIC: &[u8] = b"openssh-key-v1\0";
    let malformed = || "invalid private key: ssh: malformed OpenSSH key".to_string();
    let Some(body) = data.strip_prefix(MAGIC) else {
        return Err("invalid private key: ssh: invalid openssh private key format".into());
    };
    let mut r = SshReader(body);
    let cipher = r.string().ok_or_else(malformed)?;
    let kdf = r.string().ok_or_else(malformed)?;
    let _kdf_opts = r.string().ok_or_else(malformed)?;
    let nkeys = r.u32().ok_or_else(malformed)?;
    let _pub_key = r.string().ok_or_else(malformed)?;
    let private = r.string().ok_or_else(malformed)?;
    if cipher != b"none" || kdf != b"none" {
        return Err("invalid private key: ssh: this private key is passphrase protected".into());
    }
    if nkeys != 1 {
        return Err("invalid private key: ssh: multi-key files are not supported".into());
    }
    let mut p = SshReader(private);
    let (c1, c2) = (
        p.u32().ok_or_else(malformed)?,
        p.u32().ok_or_else(malformed)?,
    );
    if c1 != c2 {
        return Err("invalid private key: ssh: malformed OpenSSH key".into());
    }
    let kind = p.string().ok_or_else(malformed)?;
    if kind != b"ssh-rsa" {
        return Err("invalid private key type".into());
    }
    let n = p.mpint().ok_or_else(malformed)?;
    let e = p.mpint().ok_or_else(malformed)?;
    let d = p.mpint().ok_or_else(malformed)?;
    let _iqmp = p.mpint().ok_or_else(malformed)?;
    let pp = p.mpint().ok_or_else(malformed)?;
    let q = p.mpint().ok_or_else(malformed)?;
    rsa::RsaPrivateKey::from_components(n, e, d, vec![pp, q])
        .map_err(|e| format!("invalid private key: {e}"))
}

fn rsadecrypt(args: &[Value]) -> Result<Value, FuncError> {
    let s = str_arg(args, 0)?;
    let key = str_arg(args, 1)?;
    let ct = go_base64_decode(s.as_bytes()).map_err(|_| {
        FuncError::arg(
            0,
            format!(
                "failed to decode input {}: cipher text must be base64-encoded",
                go_quote(s)
            ),
        )
    })?;
    let key = parse_rsa_key(key).map_err(|e| FuncError::arg(1, e))?;
    let out = key
        .decrypt(rsa::Pkcs1v15Encrypt, &ct)
        .map_err(|_| FuncError::general("failed to decrypt: crypto/rsa: decryption error"))?;
    Ok(Value::string(String::from_utf8_lossy(&out).into_owned()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::builtins::test_util::s;
    use crate::value::Type;

    fn h(f: super::super::Impl, x: &str) -> String {
        f(&[s(x)]).unwrap().as_str().unwrap().to_string()
    }

    #[test]
    fn hashes_recorded() {
        assert_eq!(h(md5, ""), "d41d8cd98f00b204e9800998ecf8427e");
        assert_eq!(h(md5, "hello"), "5d41402abc4b2a76b9719d911017c592");
        assert_eq!(h(md5, "héllo"), "be50e8478cf24ff3595bc7307fb91b50");
        assert_eq!(h(md5, "12"), "c20ad4d76fe97759aa27a0c99bff6710");
        assert_eq!(h(sha1, ""), "da39a3ee5e6b4b0d3255bfef95601890afd80709");
        assert_eq!(h(sha1, "hello"), "aaf4c61ddcc5e8a2dabede0f3b482cd9aea9434d");
        assert_eq!(h(sha1, "[1,2]"), "b874a9cb236fc88a636fad656a401e23b64300da");
        assert_eq!(
            h(sha256, ""),
            "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
        );
        assert_eq!(
            h(sha256, "hello"),
            "2cf24dba5fb0a30e26e83b2ac5b9e29e1b161e5c1fa7425e73043362938b9824"
        );
        assert_eq!(
            h(sha256, "héllo ✓"),
            "5657cdef8a85a584e0e961e6f8247cf5d3f8ed21496ed6fdbcfd43a761e94245"
        );
        assert_eq!(
            h(sha512, ""),
            "cf83e1357eefb8bdf1542850d66d8007d620e4050b5715dc83f4a921d36ce9ce47d0d13c5d85f2b0ff8318d2877eec2f63b931bd47417a81a538327af927da3e"
        );
        assert_eq!(
            h(sha512, "hello"),
            "9b71d224bd62f3785d96d46ad3ea3d73319bfbc2890caadae2dff72519673ca72323c3d99ba5c11d7c7acc6e14b8c5da0c4663475c2e5c3adef46f73bcdec043"
        );
        assert_eq!(
            h(base64sha256, ""),
            "47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU="
        );
        assert_eq!(
            h(base64sha256, "hello"),
            "LPJNul+wow4m6DsqxbninhsWHlwfp0JecwQzYpOLmCQ="
        );
        assert_eq!(
            h(base64sha256, "{\"a\":1}"),
            "AVq9f1zFei3ZS3WQ8ErYCEJzkF7jPsXOvq5iJ2qX+GI="
        );
        assert_eq!(
            h(base64sha512, "hello"),
            "m3HSJL1i83hdltRq0+o9czGb+8KJDKra4t/3JRlnPKcjI8PZm6XBHXx6zG4UuMXaDEZjR1wuXDre9G9zvN7AQw=="
        );
    }

    #[test]
    fn hash_arguments_are_checked_by_the_registry() {
        let id = super::super::lookup("md5").unwrap();
        assert_eq!(
            super::super::call(id, vec![Value::Null(Type::String)]).unwrap_err(),
            FuncError::arg(0, "argument must not be null")
        );
        let id = super::super::lookup("sha256").unwrap();
        assert!(matches!(
            super::super::call(id, vec![Value::tuple(vec![s("a")])]),
            Err(FuncError::Arg { index: 0, .. })
        ));
    }

    // A 1024-bit test key (PKCS #1) and "hello" encrypted to it with PKCS #1 v1.5.
    const KEY_PKCS1: &str = include_str!("testdata/rsa_pkcs1.pem");
    const KEY_PKCS8: &str = include_str!("testdata/rsa_pkcs8.pem");
    const KEY_OPENSSH: &str = include_str!("testdata/rsa_openssh.pem");
    const CIPHERTEXT: &str = include_str!("testdata/rsa_ciphertext.b64");

    fn dec(ct: &str, key: &str) -> Result<Value, FuncError> {
        rsadecrypt(&[s(ct), s(key)])
    }

    #[test]
    fn rsadecrypt_cases() {
        let ct = CIPHERTEXT.trim();
        assert_eq!(dec(ct, KEY_PKCS1).unwrap().as_str(), Some("hello"));
        assert_eq!(dec(ct, KEY_PKCS8).unwrap().as_str(), Some("hello"));
        assert_eq!(dec(ct, KEY_OPENSSH).unwrap().as_str(), Some("hello"));
        assert_eq!(
            dec("bm90LXJlYWxseQ==", "not a key").unwrap_err(),
            FuncError::arg(1, "invalid private key: ssh: no key found")
        );
        assert_eq!(
            dec("***", KEY_PKCS1).unwrap_err(),
            FuncError::arg(
                0,
                "failed to decode input \"***\": cipher text must be base64-encoded"
            )
        );
        assert_eq!(
            dec("aGVsbG8=", KEY_PKCS1).unwrap_err(),
            FuncError::general("failed to decrypt: crypto/rsa: decryption error")
        );
        assert_eq!(
            dec(ct, "-----BEGIN FOO KEY-----\naGk=\n-----END FOO KEY-----\n").unwrap_err(),
            FuncError::arg(
                1,
                "invalid private key: ssh: unsupported key type \"FOO KEY\""
            )
        );
        let encrypted = KEY_PKCS1.replacen(
            "-----\n",
            "-----\nProc-Type: 4,ENCRYPTED\nDEK-Info: AES-128-CBC,00\n\n",
            1,
        );
        assert_eq!(
            dec(ct, &encrypted).unwrap_err(),
            FuncError::arg(
                1,
                "invalid private key: ssh: this private key is passphrase protected"
            )
        );
    }
}
