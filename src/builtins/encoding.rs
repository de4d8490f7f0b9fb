//! Built-in functions: encodings. `base64*`, `textencodebase64`/`textdecodebase64` and
//! `urlencode` are Terraform's; `csvdecode`, `jsonencode`/`jsondecode` are go-cty's;
//! `yamlencode`/`yamldecode` are go-cty-yaml's (see [`crate::yaml`]). Go's base64
//! decoder, gzip writer and CSV reader are reproduced where their output or messages show.

use super::{FuncDef, FuncError, Param, ParamType};
use crate::json::go_quote;
use crate::value::{Str, Type, Value};
use std::sync::Arc;

/// The encoding functions.
pub static FUNCS: &[FuncDef] = &[
    str_def("base64decode", base64decode),
    str_def("base64encode", base64encode),
    str_def("base64gzip", base64gzip),
    str_def("csvdecode", csvdecode),
    str_def("jsondecode", jsondecode),
    FuncDef {
        name: "jsonencode",
        params: &[Param::nullable("val", ParamType::Any)],
        var_param: None,
        imp: jsonencode,
    },
    FuncDef {
        name: "textdecodebase64",
        params: &[
            Param::new("source", ParamType::String),
            Param::new("encoding", ParamType::String),
        ],
        var_param: None,
        imp: textdecodebase64,
    },
    FuncDef {
        name: "textencodebase64",
        params: &[
            Param::new("string", ParamType::String),
            Param::new("encoding", ParamType::String),
        ],
        var_param: None,
        imp: textencodebase64,
    },
    str_def("urlencode", urlencode),
    FuncDef {
        name: "yamldecode",
        params: &[Param::new("src", ParamType::String)],
        var_param: None,
        imp: yamldecode,
    },
    FuncDef {
        name: "yamlencode",
        params: &[Param::nullable("value", ParamType::Any)],
        var_param: None,
        imp: yamlencode,
    },
];

const fn str_def(name: &'static str, imp: super::Impl) -> FuncDef {
    FuncDef {
        name,
        params: STR_PARAMS,
        var_param: None,
        imp,
    }
}

const STR_PARAMS: &[Param] = &[Param::new("str", ParamType::String)];

fn str_arg(args: &[Value], i: usize) -> Result<&str, FuncError> {
    args.get(i)
        .and_then(Value::as_str)
        .ok_or_else(|| FuncError::arg(i, "string required"))
}

// ---------------------------------------------------------------------------------------
// base64

const B64: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

/// Go's `base64.StdEncoding.EncodeToString`.
pub fn base64_encode(data: &[u8]) -> String {
    let mut out = String::with_capacity(data.len().div_ceil(3) * 4);
    for chunk in data.chunks(3) {
        let b = [
            chunk[0],
            chunk.get(1).copied().unwrap_or(0),
            chunk.get(2).copied().unwrap_or(0),
        ];
        let v = u32::from(b[0]) << 16 | u32::from(b[1]) << 8 | u32::from(b[2]);
        out.push(B64[(v >> 18) as usize & 63] as char);
        out.push(B64[(v >> 12) as usize & 63] as char);
        out.push(if chunk.len() > 1 {
            B64[(v >> 6) as usize & 63] as char
        } else {
            '='
        });
        out.push(if chunk.len() > 2 {
            B64[v as usize & 63] as char
        } else {
            '='
        });
    }
    out
}

fn b64_value(c: u8) -> Option<u8> {
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

fn base64decode(args: &[Value]) -> Result<Value, FuncError> {
    let s = str_arg(args, 0)?;
    let bytes = go_base64_decode(s.as_bytes())
        .map_err(|_| FuncError::general(format!("failed to decode base64 data {}", go_quote(s))))?;
    let text = String::from_utf8(bytes).map_err(|_| {
        FuncError::general("the result of decoding the provided string is not valid UTF-8")
    })?;
    Ok(Value::string(text))
}

fn base64encode(args: &[Value]) -> Result<Value, FuncError> {
    Ok(Value::string(base64_encode(str_arg(args, 0)?.as_bytes())))
}

/// What Go's `gzip.NewWriter` + `Write` + `Flush` + `Close` produce: a header with no
/// name or time, OS byte 255, a sync-flushed deflate stream ended by an empty final
/// stored block, then CRC-32 and size.
fn go_gzip(data: &[u8]) -> Vec<u8> {
    use flate2::{Compress, Compression, Crc, FlushCompress};
    let mut out = vec![0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 0xff];
    let mut c = Compress::new(Compression::new(6), false);
    let mut buf = Vec::with_capacity(data.len() + 64);
    let mut input = data;
    loop {
        if buf.capacity() - buf.len() < 64 {
            buf.reserve(buf.capacity().max(64));
        }
        let before_in = c.total_in();
        if c.compress_vec(input, &mut buf, FlushCompress::Sync)
            .is_err()
        {
            break;
        }
        let consumed = (c.total_in() - before_in) as usize;
        input = &input[consumed..];
        if input.is_empty() && buf.capacity() > buf.len() {
            break;
        }
    }
    if data.is_empty() && buf.is_empty() {
        buf.extend_from_slice(&[0, 0, 0, 0xff, 0xff]);
    }
    out.extend_from_slice(&buf);
    out.extend_from_slice(&[1, 0, 0, 0xff, 0xff]);
    let mut crc = Crc::new();
    crc.update(data);
    out.extend_from_slice(&crc.sum().to_le_bytes());
    out.extend_from_slice(&(data.len() as u32).to_le_bytes());
    out
}

fn base64gzip(args: &[Value]) -> Result<Value, FuncError> {
    Ok(Value::string(base64_encode(&go_gzip(
        str_arg(args, 0)?.as_bytes(),
    ))))
}

// ---------------------------------------------------------------------------------------
// urlencode

fn urlencode(args: &[Value]) -> Result<Value, FuncError> {
    let s = str_arg(args, 0)?;
    let mut out = String::with_capacity(s.len());
    for &b in s.as_bytes() {
        match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => {
                out.push(b as char)
            }
            b' ' => out.push('+'),
            _ => out.push_str(&format!("%{b:02X}")),
        }
    }
    Ok(Value::string(out))
}

// ---------------------------------------------------------------------------------------
// textencodebase64 / textdecodebase64

#[derive(Clone, Copy)]
enum Codec {
    Utf8,
    Utf16 { big_endian: bool, bom: bool },
    Ascii,
    Latin1,
    Rs(&'static encoding_rs::Encoding),
}

/// IANA names (as x/text's ianaindex reports them) with aliases and codec.
fn iana_lookup(name: &str) -> Option<(&'static str, Codec)> {
    use encoding_rs as e;
    let n = name.to_ascii_lowercase();
    let table: &[(&str, &[&str], Codec)] = &[
        ("UTF-8", &["utf-8", "csutf8"], Codec::Utf8),
        (
            "UTF-16BE",
            &["utf-16be", "csutf16be"],
            Codec::Utf16 {
                big_endian: true,
                bom: false,
            },
        ),
        (
            "UTF-16LE",
            &["utf-16le", "csutf16le"],
            Codec::Utf16 {
                big_endian: false,
                bom: false,
            },
        ),
        (
            "UTF-16",
            &["utf-16", "csutf16"],
            Codec::Utf16 {
                big_endian: true,
                bom: true,
            },
        ),
        (
            "US-ASCII",
            &[
                "us-ascii",
                "iso-ir-6",
                "ansi_x3.4-1968",
                "ansi_x3.4-1986",
                "iso_646.irv:1991",
                "iso646-us",
                "us",
                "ibm367",
                "cp367",
                "csascii",
            ],
            Codec::Ascii,
        ),
        (
            "ISO_8859-1:1987",
            &[
                "iso_8859-1:1987",
                "iso-ir-100",
                "iso_8859-1",
                "iso-8859-1",
                "latin1",
                "l1",
                "ibm819",
                "cp819",
                "csisolatin1",
            ],
            Codec::Latin1,
        ),
        (
            "ISO_8859-2:1987",
            &[
                "iso_8859-2:1987",
                "iso-ir-101",
                "iso_8859-2",
                "iso-8859-2",
                "latin2",
                "l2",
                "csisolatin2",
            ],
            Codec::Rs(e::ISO_8859_2),
        ),
        (
            "ISO_8859-3:1988",
            &[
                "iso_8859-3:1988",
                "iso-ir-109",
                "iso_8859-3",
                "iso-8859-3",
                "latin3",
                "l3",
                "csisolatin3",
            ],
            Codec::Rs(e::ISO_8859_3),
        ),
        (
            "ISO_8859-4:1988",
            &[
                "iso_8859-4:1988",
                "iso-ir-110",
                "iso_8859-4",
                "iso-8859-4",
                "latin4",
                "l4",
                "csisolatin4",
            ],
            Codec::Rs(e::ISO_8859_4),
        ),
        (
            "ISO_8859-5:1988",
            &[
                "iso_8859-5:1988",
                "iso-ir-144",
                "iso_8859-5",
                "iso-8859-5",
                "cyrillic",
                "csisolatincyrillic",
            ],
            Codec::Rs(e::ISO_8859_5),
        ),
        (
            "ISO_8859-6:1987",
            &[
                "iso_8859-6:1987",
                "iso-ir-127",
                "iso_8859-6",
                "iso-8859-6",
                "ecma-114",
                "asmo-708",
                "arabic",
                "csisolatinarabic",
            ],
            Codec::Rs(e::ISO_8859_6),
        ),
        (
            "ISO_8859-7:1987",
            &[
                "iso_8859-7:1987",
                "iso-ir-126",
                "iso_8859-7",
                "iso-8859-7",
                "elot_928",
                "ecma-118",
                "greek",
                "greek8",
                "csisolatingreek",
            ],
            Codec::Rs(e::ISO_8859_7),
        ),
        (
            "ISO_8859-8:1988",
            &[
                "iso_8859-8:1988",
                "iso-ir-138",
                "iso_8859-8",
                "iso-8859-8",
                "hebrew",
                "csisolatinhebrew",
            ],
            Codec::Rs(e::ISO_8859_8),
        ),
        (
            "ISO-8859-10",
            &[
                "iso-8859-10",
                "iso-ir-157",
                "l6",
                "iso_8859-10:1992",
                "csisolatin6",
                "latin6",
            ],
            Codec::Rs(e::ISO_8859_10),
        ),
        (
            "ISO-8859-13",
            &["iso-8859-13", "csiso885913"],
            Codec::Rs(e::ISO_8859_13),
        ),
        (
            "ISO-8859-14",
            &[
                "iso-8859-14",
                "iso-ir-199",
                "iso_8859-14:1998",
                "iso_8859-14",
                "latin8",
                "iso-celtic",
                "l8",
                "csiso885914",
            ],
            Codec::Rs(e::ISO_8859_14),
        ),
        (
            "ISO-8859-15",
            &["iso-8859-15", "iso_8859-15", "latin-9", "csiso885915"],
            Codec::Rs(e::ISO_8859_15),
        ),
        (
            "ISO-8859-16",
            &[
                "iso-8859-16",
                "iso-ir-226",
                "iso_8859-16:2001",
                "iso_8859-16",
                "latin10",
                "l10",
                "csiso885916",
            ],
            Codec::Rs(e::ISO_8859_16),
        ),
        ("KOI8-R", &["koi8-r", "cskoi8r"], Codec::Rs(e::KOI8_R)),
        ("KOI8-U", &["koi8-u", "cskoi8u"], Codec::Rs(e::KOI8_U)),
        (
            "macintosh",
            &["macintosh", "mac", "csmacintosh"],
            Codec::Rs(e::MACINTOSH),
        ),
        (
            "windows-1250",
            &["windows-1250", "cswindows1250"],
            Codec::Rs(e::WINDOWS_1250),
        ),
        (
            "windows-1251",
            &["windows-1251", "cswindows1251"],
            Codec::Rs(e::WINDOWS_1251),
        ),
        (
            "windows-1252",
            &["windows-1252", "cswindows1252"],
            Codec::Rs(e::WINDOWS_1252),
        ),
        (
            "windows-1253",
            &["windows-1253", "cswindows1253"],
            Codec::Rs(e::WINDOWS_1253),
        ),
        (
            "windows-1254",
            &["windows-1254", "cswindows1254"],
            Codec::Rs(e::WINDOWS_1254),
        ),
        (
            "windows-1255",
            &["windows-1255", "cswindows1255"],
            Codec::Rs(e::WINDOWS_1255),
        ),
        (
            "windows-1256",
            &["windows-1256", "cswindows1256"],
            Codec::Rs(e::WINDOWS_1256),
        ),
        (
            "windows-1257",
            &["windows-1257", "cswindows1257"],
            Codec::Rs(e::WINDOWS_1257),
        ),
        (
            "windows-1258",
            &["windows-1258", "cswindows1258"],
            Codec::Rs(e::WINDOWS_1258),
        ),
        (
            "windows-874",
            &["windows-874", "cswindows874"],
            Codec::Rs(e::WINDOWS_874),
        ),
        (
            "Shift_JIS",
            &["shift_jis", "ms_kanji", "csshiftjis"],
            Codec::Rs(e::SHIFT_JIS),
        ),
        (
            "EUC-JP",
            &[
                "euc-jp",
                "extended_unix_code_packed_format_for_japanese",
                "cseucpkdfmtjapanese",
            ],
            Codec::Rs(e::EUC_JP),
        ),
        (
            "ISO-2022-JP",
            &["iso-2022-jp", "csiso2022jp"],
            Codec::Rs(e::ISO_2022_JP),
        ),
        ("EUC-KR", &["euc-kr", "cseuckr"], Codec::Rs(e::EUC_KR)),
        (
            "GBK",
            &["gbk", "cp936", "ms936", "windows-936", "csgbk"],
            Codec::Rs(e::GBK),
        ),
        ("GB18030", &["gb18030", "csgb18030"], Codec::Rs(e::GB18030)),
        ("Big5", &["big5", "csbig5"], Codec::Rs(e::BIG5)),
    ];
    table
        .iter()
        .find(|(_, aliases, _)| aliases.contains(&n.as_str()))
        .map(|(canon, _, codec)| (*canon, *codec))
}

fn encode_text(s: &str, codec: Codec) -> Option<Vec<u8>> {
    match codec {
        Codec::Utf8 => Some(s.as_bytes().to_vec()),
        Codec::Utf16 { big_endian, bom } => {
            let mut out = Vec::with_capacity(s.len() * 2 + 2);
            let mut push = |u: u16| {
                if big_endian {
                    out.extend_from_slice(&u.to_be_bytes());
                } else {
                    out.extend_from_slice(&u.to_le_bytes());
                }
            };
            if bom {
                push(0xFEFF);
            }
            for u in s.encode_utf16() {
                push(u);
            }
            Some(out)
        }
        Codec::Ascii => s.is_ascii().then(|| s.as_bytes().to_vec()),
        Codec::Latin1 => s
            .chars()
            .map(|c| u8::try_from(c as u32).ok())
            .collect::<Option<Vec<u8>>>(),
        Codec::Rs(enc) => {
            let (bytes, _, unmappable) = enc.encode(s);
            (!unmappable).then(|| bytes.into_owned())
        }
    }
}

fn decode_text(b: &[u8], codec: Codec) -> Option<String> {
    let s = match codec {
        Codec::Utf8 => String::from_utf8_lossy(b).into_owned(),
        Codec::Utf16 { big_endian, bom } => {
            let mut be = big_endian;
            let mut b = b;
            if bom && b.len() >= 2 {
                if b[..2] == [0xFE, 0xFF] {
                    be = true;
                    b = &b[2..];
                } else if b[..2] == [0xFF, 0xFE] {
                    be = false;
                    b = &b[2..];
                }
            }
            let units: Vec<u16> = b
                .chunks(2)
                .map(|c| match (c.len(), be) {
                    (2, true) => u16::from_be_bytes([c[0], c[1]]),
                    (2, false) => u16::from_le_bytes([c[0], c[1]]),
                    _ => 0xFFFD,
                })
                .collect();
            String::from_utf16_lossy(&units)
        }
        Codec::Ascii => b
            .iter()
            .map(|&x| if x < 0x80 { x as char } else { '\u{fffd}' })
            .collect(),
        Codec::Latin1 => b.iter().map(|&x| x as char).collect(),
        Codec::Rs(enc) => enc.decode_without_bom_handling(b).0.into_owned(),
    };
    (!s.contains('\u{fffd}')).then_some(s)
}

fn unsupported_encoding(name: &str) -> FuncError {
    FuncError::arg(
        1,
        format!(
            "{} is not a supported IANA encoding name or alias in this Terraform version",
            go_quote(name)
        ),
    )
}

fn textencodebase64(args: &[Value]) -> Result<Value, FuncError> {
    let s = str_arg(args, 0)?;
    let name = str_arg(args, 1)?;
    let (canon, codec) = iana_lookup(name).ok_or_else(|| unsupported_encoding(name))?;
    let bytes = encode_text(s, codec).ok_or_else(|| {
        FuncError::arg(
            0,
            format!("the given string contains characters that cannot be represented in {canon}"),
        )
    })?;
    Ok(Value::string(base64_encode(&bytes)))
}

fn textdecodebase64(args: &[Value]) -> Result<Value, FuncError> {
    let s = str_arg(args, 0)?;
    let name = str_arg(args, 1)?;
    let (canon, codec) = iana_lookup(name).ok_or_else(|| unsupported_encoding(name))?;
    let bytes = go_base64_decode(s.as_bytes()).map_err(|off| {
        FuncError::arg(
            0,
            format!("the given value is has an invalid base64 symbol at offset {off}"),
        )
    })?;
    let text = decode_text(&bytes, codec).ok_or_else(|| {
        FuncError::arg(
            0,
            format!("the given string contains symbols that are not defined for {canon}"),
        )
    })?;
    Ok(Value::string(text))
}

// ---------------------------------------------------------------------------------------
// csvdecode: Go's encoding/csv reader (comma, no lazy quotes, no trimming).

#[derive(Debug, PartialEq)]
struct CsvError {
    line: usize,
    msg: &'static str,
}

const ERR_FIELD_COUNT: &str = "wrong number of fields";
const ERR_BARE_QUOTE: &str = "bare \" in non-quoted-field";
const ERR_QUOTE: &str = "extraneous or missing \" in quoted-field";

struct CsvReader<'a> {
    data: &'a [u8],
    pos: usize,
    num_line: usize,
    fields_per_record: usize,
}

impl<'a> CsvReader<'a> {
    fn new(data: &'a str) -> Self {
        CsvReader {
            data: data.as_bytes(),
            pos: 0,
            num_line: 0,
            fields_per_record: 0,
        }
    }

    /// Go's `readLine`: one line with `\r\n` normalised to `\n`; None at end of input.
    fn read_line(&mut self) -> Option<Vec<u8>> {
        if self.pos >= self.data.len() {
            return None;
        }
        let rest = &self.data[self.pos..];
        let (mut line, n) = match rest.iter().position(|&b| b == b'\n') {
            Some(i) => (rest[..=i].to_vec(), i + 1),
            None => {
                let mut l = rest.to_vec();
                if l.last() == Some(&b'\r') {
                    l.pop();
                }
                (l, rest.len())
            }
        };
        self.pos += n;
        self.num_line += 1;
        let len = line.len();
        if len >= 2 && line[len - 2] == b'\r' && line[len - 1] == b'\n' {
            line[len - 2] = b'\n';
            line.pop();
        }
        Some(line)
    }

    /// Go's `readRecord`; `Ok(None)` at end of input.
    fn read_record(&mut self) -> Result<Option<Vec<String>>, CsvError> {
        let mut line = loop {
            match self.read_line() {
                None => return Ok(None),
                Some(l) if l == b"\n" => continue,
                Some(l) => break l,
            }
        };
        let rec_line = self.num_line;
        let mut fields: Vec<Vec<u8>> = Vec::new();
        let mut at_eof = false;
        let strip_nl = |l: &[u8]| -> usize { l.len() - usize::from(l.last() == Some(&b'\n')) };
        'fields: loop {
            if line.first() != Some(&b'"') {
                let (field, next) = match line.iter().position(|&b| b == b',') {
                    Some(i) => (line[..i].to_vec(), Some(i + 1)),
                    None => (line[..strip_nl(&line)].to_vec(), None),
                };
                if field.contains(&b'"') {
                    return Err(CsvError {
                        line: self.num_line,
                        msg: ERR_BARE_QUOTE,
                    });
                }
                fields.push(field);
                match next {
                    Some(n) => {
                        line.drain(..n);
                        continue 'fields;
                    }
                    None => break 'fields,
                }
            }
            // Quoted field.
            line.remove(0);
            let mut field = Vec::new();
            loop {
                if let Some(i) = line.iter().position(|&b| b == b'"') {
                    field.extend_from_slice(&line[..i]);
                    line.drain(..=i);
                    match line.first() {
                        Some(b'"') => {
                            field.push(b'"');
                            line.remove(0);
                        }
                        Some(b',') => {
                            line.remove(0);
                            fields.push(field);
                            continue 'fields;
                        }
                        _ if strip_nl(&line) == 0 => {
                            fields.push(field);
                            break 'fields;
                        }
                        _ => {
                            return Err(CsvError {
                                line: self.num_line,
                                msg: ERR_QUOTE,
                            });
                        }
                    }
                } else if !line.is_empty() {
                    field.extend_from_slice(&line);
                    if at_eof {
                        fields.push(field);
                        break 'fields;
                    }
                    match self.read_line() {
                        Some(l) => line = l,
                        None => {
                            line = Vec::new();
                            at_eof = true;
                        }
                    }
                } else {
                    return Err(CsvError {
                        line: self.num_line,
                        msg: ERR_QUOTE,
                    });
                }
            }
        }
        let record: Vec<String> = fields
            .into_iter()
            .map(|f| String::from_utf8_lossy(&f).into_owned())
            .collect();
        if self.fields_per_record > 0 {
            if record.len() != self.fields_per_record {
                return Err(CsvError {
                    line: rec_line,
                    msg: ERR_FIELD_COUNT,
                });
            }
        } else {
            self.fields_per_record = record.len();
        }
        Ok(Some(record))
    }
}

fn csv_error(e: CsvError) -> FuncError {
    FuncError::general(format!("CSV parse error on line {}: {}", e.line, e.msg))
}

fn csvdecode(args: &[Value]) -> Result<Value, FuncError> {
    let s = str_arg(args, 0)?;
    let mut r = CsvReader::new(s);
    let headers = r
        .read_record()
        .map_err(csv_error)?
        .ok_or_else(|| FuncError::general("missing header line"))?;
    let mut sorted: Vec<(Str, usize)> = Vec::with_capacity(headers.len());
    for (i, h) in headers.iter().enumerate() {
        if sorted.iter().any(|(k, _)| &**k == h.as_str()) {
            return Err(FuncError::general(format!(
                "duplicate column name {}",
                go_quote(h)
            )));
        }
        sorted.push((Str::from(h.as_str()), i));
    }
    sorted.sort_by(|a, b| a.0.cmp(&b.0));
    let ety = Type::Object(
        sorted
            .iter()
            .map(|(k, _)| (k.clone(), Type::String))
            .collect::<Vec<_>>()
            .into(),
    );
    let mut rows = Vec::new();
    while let Some(cols) = r.read_record().map_err(csv_error)? {
        let entries = sorted
            .iter()
            .map(|(k, i)| (k.clone(), Value::string(cols[*i].as_str())))
            .collect();
        rows.push(Value::object_sorted(entries));
    }
    Ok(Value::List(Arc::new(crate::value::Seq {
        elem: ety,
        items: rows,
    })))
}

// ---------------------------------------------------------------------------------------
// JSON and YAML

fn jsonencode(args: &[Value]) -> Result<Value, FuncError> {
    let v = args.first().unwrap_or(&Value::NULL);
    if v.contains_unknown() {
        return Ok(Value::Unknown(Type::String));
    }
    crate::json::encode(v)
        .map(Value::string)
        .map_err(FuncError::General)
}

fn jsondecode(args: &[Value]) -> Result<Value, FuncError> {
    crate::json::decode(str_arg(args, 0)?).map_err(FuncError::General)
}

fn yamlencode(args: &[Value]) -> Result<Value, FuncError> {
    let v = args.first().unwrap_or(&Value::NULL);
    if v.contains_unknown() {
        return Ok(Value::Unknown(Type::String));
    }
    crate::yaml::encode(v)
        .map(Value::string)
        .map_err(FuncError::General)
}

fn yamldecode(args: &[Value]) -> Result<Value, FuncError> {
    crate::yaml::decode(str_arg(args, 0)?).map_err(FuncError::General)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(x: &str) -> Value {
        Value::string(x)
    }
    fn ok1(f: super::super::Impl, x: &str) -> String {
        f(&[s(x)]).unwrap().as_str().unwrap().to_string()
    }
    fn ok2(f: super::super::Impl, a: &str, b: &str) -> String {
        f(&[s(a), s(b)]).unwrap().as_str().unwrap().to_string()
    }

    #[test]
    fn base64_cases() {
        assert_eq!(ok1(base64decode, "aGVsbG8="), "hello");
        assert_eq!(ok1(base64decode, "aMOpbGxv"), "héllo");
        assert_eq!(ok1(base64decode, ""), "");
        assert_eq!(ok1(base64decode, "aGVs\r\nbG8="), "hello");
        assert_eq!(
            base64decode(&[s("aGVsbG8")]).unwrap_err(),
            FuncError::general("failed to decode base64 data \"aGVsbG8\"")
        );
        assert_eq!(
            base64decode(&[s("not base64!")]).unwrap_err(),
            FuncError::general("failed to decode base64 data \"not base64!\"")
        );
        assert_eq!(
            base64decode(&[s("/w==")]).unwrap_err(),
            FuncError::general("the result of decoding the provided string is not valid UTF-8")
        );
        assert_eq!(ok1(base64encode, ""), "");
        assert_eq!(ok1(base64encode, "hello"), "aGVsbG8=");
        assert_eq!(ok1(base64encode, "héllo ✓"), "aMOpbGxvIOKckw==");
        assert_eq!(ok1(base64encode, "1234"), "MTIzNA==");
        assert_eq!(go_base64_decode(b"***"), Err(0));
        assert_eq!(go_base64_decode(b"aGk=x"), Err(4));
        assert_eq!(go_base64_decode(b"a==="), Err(1));
        assert_eq!(go_base64_decode(b"aGk"), Err(0));
        // Non-zero trailing bits are accepted, as by Go's non-strict decoder.
        assert_eq!(go_base64_decode(b"aGl="), Ok(b"hi".to_vec()));
    }

    #[test]
    fn base64gzip_matches_go() {
        assert_eq!(
            ok1(base64gzip, "test"),
            "H4sIAAAAAAAA/ypJLS4BAAAA//8BAAD//wx+f9gEAAAA"
        );
        assert_eq!(
            ok1(base64gzip, ""),
            "H4sIAAAAAAAA/wAAAP//AQAA//8AAAAAAAAAAA=="
        );
        assert_eq!(
            ok1(base64gzip, "hello hello hello hello"),
            "H4sIAAAAAAAA/8pIzcnJV8AgAQAAAP//AQAA///jUT2NFwAAAA=="
        );
    }

    #[test]
    fn urlencode_cases() {
        assert_eq!(ok1(urlencode, "a b&c=d/é?"), "a+b%26c%3Dd%2F%C3%A9%3F");
        assert_eq!(ok1(urlencode, ""), "");
        assert_eq!(ok1(urlencode, "~-._ABCxyz019"), "~-._ABCxyz019");
        assert_eq!(ok1(urlencode, "100%"), "100%25");
    }

    #[test]
    fn text_encodings() {
        assert_eq!(
            ok2(textencodebase64, "hello", "UTF-16LE"),
            "aABlAGwAbABvAA=="
        );
        assert_eq!(ok2(textencodebase64, "héllo", "ISO-8859-1"), "aOlsbG8=");
        assert_eq!(ok2(textencodebase64, "✓", "UTF-8"), "4pyT");
        assert_eq!(ok2(textencodebase64, "", "utf-8"), "");
        assert_eq!(ok2(textencodebase64, "hi", "UTF-16"), "/v8AaABp");
        assert_eq!(ok2(textencodebase64, "€", "windows-1252"), "gA==");
        assert_eq!(
            textencodebase64(&[s("hi"), s("bogus-encoding")]).unwrap_err(),
            FuncError::arg(
                1,
                "\"bogus-encoding\" is not a supported IANA encoding name or alias in this Terraform version"
            )
        );
        assert_eq!(
            textencodebase64(&[s("✓"), s("ISO-8859-1")]).unwrap_err(),
            FuncError::arg(
                0,
                "the given string contains characters that cannot be represented in ISO_8859-1:1987"
            )
        );
        assert_eq!(
            ok2(textdecodebase64, "aABlAGwAbABvAA==", "UTF-16LE"),
            "hello"
        );
        assert_eq!(ok2(textdecodebase64, "aOlsbG8=", "ISO-8859-1"), "héllo");
        assert_eq!(ok2(textdecodebase64, "/v8AaABp", "utf-16"), "hi");
        assert_eq!(
            textdecodebase64(&[s("aGk="), s("nope")]).unwrap_err(),
            FuncError::arg(
                1,
                "\"nope\" is not a supported IANA encoding name or alias in this Terraform version"
            )
        );
        assert_eq!(
            textdecodebase64(&[s("***"), s("UTF-8")]).unwrap_err(),
            FuncError::arg(
                0,
                "the given value is has an invalid base64 symbol at offset 0"
            )
        );
        assert_eq!(
            textdecodebase64(&[s("/w=="), s("UTF-8")]).unwrap_err(),
            FuncError::arg(
                0,
                "the given string contains symbols that are not defined for UTF-8"
            )
        );
        assert_eq!(
            textdecodebase64(&[s("gA=="), s("us-ascii")]).unwrap_err(),
            FuncError::arg(
                0,
                "the given string contains symbols that are not defined for US-ASCII"
            )
        );
    }

    fn csv_rows(src: &str) -> Result<Vec<Vec<(String, String)>>, FuncError> {
        let v = csvdecode(&[s(src)])?;
        Ok(v.as_seq()
            .unwrap()
            .iter()
            .map(|row| {
                row.as_fields()
                    .unwrap()
                    .iter()
                    .map(|(k, v)| (k.to_string(), v.as_str().unwrap().to_string()))
                    .collect()
            })
            .collect())
    }

    fn kv(pairs: &[(&str, &str)]) -> Vec<(String, String)> {
        pairs
            .iter()
            .map(|(a, b)| (a.to_string(), b.to_string()))
            .collect()
    }

    #[test]
    fn csv_cases() {
        assert_eq!(
            csv_rows("a,b\n1,2\n3,4").unwrap(),
            vec![kv(&[("a", "1"), ("b", "2")]), kv(&[("a", "3"), ("b", "4")])]
        );
        assert_eq!(
            csv_rows("name,note\nx,\"hello, world\"\ny,\"say \"\"hi\"\"\"").unwrap(),
            vec![
                kv(&[("name", "x"), ("note", "hello, world")]),
                kv(&[("name", "y"), ("note", "say \"hi\"")])
            ]
        );
        assert_eq!(
            csv_rows("a,b\n1").unwrap_err(),
            FuncError::general("CSV parse error on line 2: wrong number of fields")
        );
        assert_eq!(
            csv_rows("").unwrap_err(),
            FuncError::general("missing header line")
        );
        let v = csvdecode(&[s("only,header")]).unwrap();
        assert_eq!(v.len(), Some(0));
        assert_eq!(
            v.type_of(),
            Type::list(Type::Object(
                vec![
                    (Str::from("header"), Type::String),
                    (Str::from("only"), Type::String)
                ]
                .into()
            ))
        );
        assert_eq!(
            csv_rows("a\r\n\r\n\"multi\nline\"\r\né\n").unwrap(),
            vec![kv(&[("a", "multi\nline")]), kv(&[("a", "é")])]
        );
        assert_eq!(
            csv_rows("a,a\n1,2").unwrap_err(),
            FuncError::general("duplicate column name \"a\"")
        );
        assert_eq!(
            csv_rows("a\nx\"y").unwrap_err(),
            FuncError::general("CSV parse error on line 2: bare \" in non-quoted-field")
        );
        assert_eq!(
            csv_rows("a\n\"x\"y").unwrap_err(),
            FuncError::general(
                "CSV parse error on line 2: extraneous or missing \" in quoted-field"
            )
        );
        assert_eq!(
            csv_rows("a\n\"open").unwrap_err(),
            FuncError::general(
                "CSV parse error on line 2: extraneous or missing \" in quoted-field"
            )
        );
    }

    #[test]
    fn json_functions() {
        let v = Value::object(vec![
            ("b".into(), Value::int(1)),
            (
                "a".into(),
                Value::tuple(vec![Value::int(1), s("x"), Value::NULL]),
            ),
        ]);
        assert_eq!(
            jsonencode(&[v]).unwrap().as_str(),
            Some(r#"{"a":[1,"x",null],"b":1}"#)
        );
        assert_eq!(jsonencode(&[Value::NULL]).unwrap().as_str(), Some("null"));
        assert!(
            jsonencode(&[Value::Unknown(Type::String)])
                .unwrap()
                .is_unknown()
        );
        assert_eq!(
            jsondecode(&[s("{bad")]).unwrap_err(),
            FuncError::general("invalid character 'b'")
        );
        assert_eq!(jsondecode(&[s("")]).unwrap_err(), FuncError::general("EOF"));
        let d = jsondecode(&[s("{\"a\":1}")]).unwrap();
        assert!(d.get_attr("a").unwrap().raw_equals(&Value::int(1)));
    }
}
