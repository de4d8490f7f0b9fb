//! Built-in functions: encodings. `base64*`, `textencodebase64`/`textdecodebase64` and
//! `urlencode` are Terraform's; `csvdecode`, `jsonencode`/`jsondecode` are go-cty's;
//! `yamlencode`/`yamldecode` are go-cty-yaml's (see [`crate::value::yaml`]). Go's base64
//! decoder, gzip writer and CSV reader are reproduced where their output or messages show.

use super::{FuncDef, FuncError, str_arg};
use crate::text::base64::{base64_encode, go_base64_decode};
use crate::text::quote::go_quote;
use crate::value::{Str, Type, Value};

/// The encoding functions.
pub static FUNCS: &[FuncDef] = funcs! {
    base64decode(str: String),
    base64encode(str: String),
    base64gzip(str: String),
    csvdecode(str: String),
    jsondecode(str: String),
    jsonencode(val?: Any),
    textdecodebase64(source: String, encoding: String),
    textencodebase64(string: String, encoding: String),
    urlencode(str: String),
    yamldecode(src: String),
    yamlencode(value?: Any),
};

// ---------------------------------------------------------------------------------------
// base64

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
    base64_value("base64encode", str_arg(args, 0)?.as_bytes())
}

/// `data` in base64 as a string value (`base64encode`, `base64gzip`, `textencodebase64`):
/// its length, a third more than the data's, charged before it is written. A short one (a
/// name, an address) is encoded on the stack, the value allocated once at its size.
fn base64_value(site: &'static str, data: &[u8]) -> Result<Value, FuncError> {
    crate::value::meter::bytes(site, base64_len(data.len()))?;
    Ok(base64_string(data))
}

/// The length of `n` bytes in base64.
fn base64_len(n: usize) -> u64 {
    (n as u64).div_ceil(3).saturating_mul(4)
}

/// [`base64_value`] without the charge (the caller charged it).
fn base64_string(data: &[u8]) -> Value {
    let mut buf = [0u8; 128];
    if let Some(s) = crate::text::base64::base64_encode_short(data, &mut buf) {
        return Value::string(s);
    }
    Value::string(base64_encode(data))
}

/// What Go's `gzip.NewWriter` + `Write` + `Flush` + `Close` produce: a header with no
/// name or time and OS byte 255, Go's deflate stream, then CRC-32 and size.
fn go_gzip(data: &[u8]) -> Vec<u8> {
    let mut out = vec![0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 0xff];
    out.extend_from_slice(&go_deflate::deflate_write_flush_close(data));
    let mut crc = flate2::Crc::new();
    crc.update(data);
    out.extend_from_slice(&crc.sum().to_le_bytes());
    out.extend_from_slice(&(data.len() as u32).to_le_bytes());
    out
}

/// A port of Go's `compress/flate` compressor at the default level (6) as used by
/// `gzip.Writer`: hash-chain LZ77 with lazy matching, and per block the smallest of
/// stored, fixed-Huffman and dynamic-Huffman encodings with Go's code construction, so
/// that `base64gzip` output is byte-identical to Terraform's.
mod go_deflate {
    const WINDOW_SIZE: usize = 1 << 15;
    const WINDOW_MASK: usize = WINDOW_SIZE - 1;
    const MIN_MATCH: usize = 4;
    const MAX_MATCH: usize = 258;
    const MAX_FLATE_BLOCK_TOKENS: usize = 1 << 14;
    const MAX_STORE_BLOCK_SIZE: usize = 65535;
    const HASH_BITS: u32 = 17;
    const HASH_SIZE: usize = 1 << HASH_BITS;
    const HASH_MASK: u32 = (1 << HASH_BITS) - 1;
    const MAX_HASH_OFFSET: i64 = 1 << 24;
    const HASHMUL: u32 = 0x1e35_a7bd;
    // Level 6: good, lazy, nice, chain (no fast skipping).
    const GOOD: usize = 8;
    const LAZY: usize = 16;
    const NICE: usize = 128;
    const CHAIN: usize = 128;

    const MAX_NUM_LIT: usize = 286;
    const OFFSET_CODE_COUNT: usize = 30;
    const END_BLOCK: usize = 256;
    const LENGTH_CODES_START: usize = 257;
    const CODEGEN_CODE_COUNT: usize = 19;
    const BAD_CODE: u8 = 255;

    const LENGTH_EXTRA_BITS: [u8; 29] = [
        0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3, 4, 4, 4, 4, 5, 5, 5, 5, 0,
    ];
    const LENGTH_BASE: [u32; 29] = [
        0, 1, 2, 3, 4, 5, 6, 7, 8, 10, 12, 14, 16, 20, 24, 28, 32, 40, 48, 56, 64, 80, 96, 112,
        128, 160, 192, 224, 255,
    ];
    const OFFSET_EXTRA_BITS: [u8; 30] = [
        0, 0, 0, 0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5, 6, 6, 7, 7, 8, 8, 9, 9, 10, 10, 11, 11, 12, 12,
        13, 13,
    ];
    const OFFSET_BASE: [u32; 30] = [
        0x0000, 0x0001, 0x0002, 0x0003, 0x0004, 0x0006, 0x0008, 0x000c, 0x0010, 0x0018, 0x0020,
        0x0030, 0x0040, 0x0060, 0x0080, 0x00c0, 0x0100, 0x0180, 0x0200, 0x0300, 0x0400, 0x0600,
        0x0800, 0x0c00, 0x1000, 0x1800, 0x2000, 0x3000, 0x4000, 0x6000,
    ];
    const CODEGEN_ORDER: [usize; 19] = [
        16, 17, 18, 0, 8, 7, 9, 6, 10, 5, 11, 4, 12, 3, 13, 2, 14, 1, 15,
    ];

    #[derive(Clone, Copy)]
    enum Token {
        Lit(u8),
        /// Length minus 3, offset minus 1.
        Match(u32, u32),
        End,
    }

    fn length_code(l: u32) -> usize {
        LENGTH_BASE.iter().rposition(|&b| b <= l).unwrap_or(0)
    }

    fn offset_code(o: u32) -> usize {
        OFFSET_BASE.iter().rposition(|&b| b <= o).unwrap_or(0)
    }

    fn reverse_bits(code: u16, len: u16) -> u16 {
        if len == 0 {
            return 0;
        }
        code.reverse_bits() >> (16 - len)
    }

    #[derive(Clone)]
    struct Encoder {
        code: Vec<u16>,
        len: Vec<u16>,
    }

    impl Encoder {
        fn new(size: usize) -> Self {
            Encoder {
                code: vec![0; size],
                len: vec![0; size],
            }
        }

        fn fixed_literal() -> Self {
            let mut h = Encoder::new(MAX_NUM_LIT);
            for ch in 0..MAX_NUM_LIT as u16 {
                let (bits, size) = match ch {
                    0..=143 => (ch + 48, 8),
                    144..=255 => (ch + 400 - 144, 9),
                    256..=279 => (ch - 256, 7),
                    _ => (ch + 192 - 280, 8),
                };
                h.code[ch as usize] = reverse_bits(bits, size);
                h.len[ch as usize] = size;
            }
            h
        }

        fn fixed_offset() -> Self {
            let mut h = Encoder::new(OFFSET_CODE_COUNT);
            for i in 0..OFFSET_CODE_COUNT {
                h.code[i] = reverse_bits(i as u16, 5);
                h.len[i] = 5;
            }
            h
        }

        fn bit_length(&self, freq: &[i32]) -> i64 {
            freq.iter()
                .zip(&self.len)
                .filter(|(f, _)| **f != 0)
                .map(|(f, l)| i64::from(*f) * i64::from(*l))
                .sum()
        }

        /// Go's `huffmanEncoder.generate`.
        fn generate(&mut self, freq: &[i32], max_bits: i32) {
            let mut list: Vec<(u16, i32)> = Vec::with_capacity(freq.len() + 1);
            for (i, &f) in freq.iter().enumerate() {
                if f != 0 {
                    list.push((i as u16, f));
                } else {
                    self.len[i] = 0;
                }
            }
            if list.len() <= 2 {
                for (i, &(lit, _)) in list.iter().enumerate() {
                    self.code[lit as usize] = i as u16;
                    self.len[lit as usize] = 1;
                }
                return;
            }
            list.sort_by(|a, b| a.1.cmp(&b.1).then(a.0.cmp(&b.0)));
            let bit_count = bit_counts(&list, max_bits);
            // assignEncodingAndSize
            let mut code: u16 = 0;
            let mut rest = list.as_slice();
            for (n, &bits) in bit_count.iter().enumerate() {
                code <<= 1;
                if n == 0 || bits == 0 {
                    continue;
                }
                let split = rest.len() - bits as usize;
                let mut chunk = rest[split..].to_vec();
                chunk.sort_by_key(|c| c.0);
                for (lit, _) in chunk {
                    self.code[lit as usize] = reverse_bits(code, n as u16);
                    self.len[lit as usize] = n as u16;
                    code = code.wrapping_add(1);
                }
                rest = &rest[..split];
            }
        }
    }

    /// Go's `bitCounts`: how many literals get each code length (list sorted by freq).
    fn bit_counts(list: &[(u16, i32)], max_bits: i32) -> Vec<i32> {
        #[derive(Clone, Copy, Default)]
        struct Level {
            level: i32,
            last_freq: i32,
            next_char_freq: i32,
            next_pair_freq: i32,
            needed: i32,
        }
        let n = list.len() as i32;
        let freq_at = |i: i32| -> i32 { if i >= n { i32::MAX } else { list[i as usize].1 } };
        let max_bits = max_bits.min(n - 1);
        let mut levels = [Level::default(); 18];
        let mut leaf_counts = [[0i32; 18]; 18];
        for level in 1..=max_bits {
            let l = level as usize;
            levels[l] = Level {
                level,
                last_freq: freq_at(1),
                next_char_freq: freq_at(2),
                next_pair_freq: freq_at(0).wrapping_add(freq_at(1)),
                needed: 0,
            };
            leaf_counts[l][l] = 2;
            if level == 1 {
                levels[l].next_pair_freq = i32::MAX;
            }
        }
        levels[max_bits as usize].needed = 2 * n - 4;
        let mut level = max_bits as usize;
        loop {
            if levels[level].next_pair_freq == i32::MAX && levels[level].next_char_freq == i32::MAX
            {
                levels[level].needed = 0;
                levels[level + 1].next_pair_freq = i32::MAX;
                level += 1;
                continue;
            }
            let prev_freq = levels[level].last_freq;
            if levels[level].next_char_freq < levels[level].next_pair_freq {
                let c = leaf_counts[level][level] + 1;
                levels[level].last_freq = levels[level].next_char_freq;
                leaf_counts[level][level] = c;
                levels[level].next_char_freq = freq_at(c);
            } else {
                levels[level].last_freq = levels[level].next_pair_freq;
                let (lower, upper) = leaf_counts.split_at_mut(level);
                upper[0][..level].copy_from_slice(&lower[level - 1][..level]);
                levels[level - 1].needed = 2;
            }
            levels[level].needed -= 1;
            if levels[level].needed == 0 {
                if levels[level].level == max_bits {
                    break;
                }
                levels[level + 1].next_pair_freq = prev_freq.wrapping_add(levels[level].last_freq);
                level += 1;
            } else {
                while level > 1 && levels[level - 1].needed > 0 {
                    level -= 1;
                }
            }
        }
        let mut bit_count = vec![0i32; max_bits as usize + 1];
        let counts = &leaf_counts[max_bits as usize];
        for (bits, level) in (1..=max_bits as usize).rev().enumerate() {
            bit_count[bits + 1] = counts[level] - counts[level - 1];
        }
        bit_count
    }

    /// Go's `huffmanBitWriter`, writing into a byte vector.
    struct BitWriter {
        out: Vec<u8>,
        bits: u64,
        nbits: u32,
        literal_freq: Vec<i32>,
        offset_freq: Vec<i32>,
        codegen: Vec<u8>,
        codegen_freq: [i32; CODEGEN_CODE_COUNT],
        literal_enc: Encoder,
        offset_enc: Encoder,
        codegen_enc: Encoder,
        fixed_lit: Encoder,
        fixed_off: Encoder,
    }

    impl BitWriter {
        fn new() -> Self {
            BitWriter {
                out: Vec::new(),
                bits: 0,
                nbits: 0,
                literal_freq: vec![0; MAX_NUM_LIT],
                offset_freq: vec![0; OFFSET_CODE_COUNT],
                codegen: vec![0; MAX_NUM_LIT + OFFSET_CODE_COUNT + 1],
                codegen_freq: [0; CODEGEN_CODE_COUNT],
                literal_enc: Encoder::new(MAX_NUM_LIT),
                offset_enc: Encoder::new(OFFSET_CODE_COUNT),
                codegen_enc: Encoder::new(CODEGEN_CODE_COUNT),
                fixed_lit: Encoder::fixed_literal(),
                fixed_off: Encoder::fixed_offset(),
            }
        }

        fn write_bits(&mut self, b: u32, nb: u32) {
            self.bits |= u64::from(b) << self.nbits;
            self.nbits += nb;
            while self.nbits >= 8 {
                self.out.push(self.bits as u8);
                self.bits >>= 8;
                self.nbits -= 8;
            }
        }

        fn write_code(&mut self, code: u16, len: u16) {
            self.write_bits(u32::from(code), u32::from(len));
        }

        fn flush(&mut self) {
            if self.nbits > 0 {
                self.out.push(self.bits as u8);
            }
            self.bits = 0;
            self.nbits = 0;
        }

        fn write_stored_header(&mut self, length: usize, eof: bool) {
            self.write_bits(u32::from(eof), 3);
            self.flush();
            self.write_bits(length as u32 & 0xffff, 16);
            self.write_bits(!(length as u16) as u32, 16);
        }

        fn index_tokens(&mut self, tokens: &[Token]) -> (usize, usize) {
            self.literal_freq.iter_mut().for_each(|f| *f = 0);
            self.offset_freq.iter_mut().for_each(|f| *f = 0);
            for t in tokens {
                match *t {
                    Token::Lit(b) => self.literal_freq[b as usize] += 1,
                    Token::End => self.literal_freq[END_BLOCK] += 1,
                    Token::Match(l, o) => {
                        self.literal_freq[LENGTH_CODES_START + length_code(l)] += 1;
                        self.offset_freq[offset_code(o)] += 1;
                    }
                }
            }
            let mut num_literals = MAX_NUM_LIT;
            while num_literals > 0 && self.literal_freq[num_literals - 1] == 0 {
                num_literals -= 1;
            }
            let mut num_offsets = OFFSET_CODE_COUNT;
            while num_offsets > 0 && self.offset_freq[num_offsets - 1] == 0 {
                num_offsets -= 1;
            }
            if num_offsets == 0 {
                self.offset_freq[0] = 1;
                num_offsets = 1;
            }
            let lf = self.literal_freq.clone();
            self.literal_enc.generate(&lf, 15);
            let of = self.offset_freq.clone();
            self.offset_enc.generate(&of, 15);
            (num_literals, num_offsets)
        }

        fn generate_codegen(&mut self, num_literals: usize, num_offsets: usize) {
            self.codegen_freq = [0; CODEGEN_CODE_COUNT];
            let cg = &mut self.codegen;
            for (c, l) in cg.iter_mut().zip(&self.literal_enc.len[..num_literals]) {
                *c = *l as u8;
            }
            for (c, l) in cg[num_literals..]
                .iter_mut()
                .zip(&self.offset_enc.len[..num_offsets])
            {
                *c = *l as u8;
            }
            cg[num_literals + num_offsets] = BAD_CODE;
            let mut size = cg[0];
            let mut count: i32 = 1;
            let mut out = 0usize;
            let mut in_index = 1usize;
            while size != BAD_CODE {
                let next = cg[in_index];
                in_index += 1;
                if next == size {
                    count += 1;
                    continue;
                }
                if size != 0 {
                    cg[out] = size;
                    out += 1;
                    self.codegen_freq[size as usize] += 1;
                    count -= 1;
                    while count >= 3 {
                        let n = count.min(6);
                        cg[out] = 16;
                        cg[out + 1] = (n - 3) as u8;
                        out += 2;
                        self.codegen_freq[16] += 1;
                        count -= n;
                    }
                } else {
                    while count >= 11 {
                        let n = count.min(138);
                        cg[out] = 18;
                        cg[out + 1] = (n - 11) as u8;
                        out += 2;
                        self.codegen_freq[18] += 1;
                        count -= n;
                    }
                    if count >= 3 {
                        cg[out] = 17;
                        cg[out + 1] = (count - 3) as u8;
                        out += 2;
                        self.codegen_freq[17] += 1;
                        count = 0;
                    }
                }
                count -= 1;
                while count >= 0 {
                    cg[out] = size;
                    out += 1;
                    self.codegen_freq[size as usize] += 1;
                    count -= 1;
                }
                size = next;
                count = 1;
            }
            cg[out] = BAD_CODE;
        }

        fn write_block(&mut self, tokens: &mut Vec<Token>, input: Option<&[u8]>) {
            tokens.push(Token::End);
            let (num_literals, num_offsets) = self.index_tokens(tokens);
            let stored = input.filter(|i| i.len() <= MAX_STORE_BLOCK_SIZE);
            let mut extra: i64 = 0;
            if stored.is_some() {
                for lc in LENGTH_CODES_START + 8..num_literals {
                    extra += i64::from(self.literal_freq[lc])
                        * i64::from(LENGTH_EXTRA_BITS[lc - LENGTH_CODES_START]);
                }
                for (f, e) in self.offset_freq[..num_offsets]
                    .iter()
                    .zip(OFFSET_EXTRA_BITS)
                    .skip(4)
                {
                    extra += i64::from(*f) * i64::from(e);
                }
            }
            let mut size = 3
                + self.fixed_lit.bit_length(&self.literal_freq)
                + self.fixed_off.bit_length(&self.offset_freq)
                + extra;
            self.generate_codegen(num_literals, num_offsets);
            let cf = self.codegen_freq;
            self.codegen_enc.generate(&cf, 7);
            let mut num_codegens = CODEGEN_CODE_COUNT;
            while num_codegens > 4 && self.codegen_freq[CODEGEN_ORDER[num_codegens - 1]] == 0 {
                num_codegens -= 1;
            }
            let header = 3
                + 5
                + 5
                + 4
                + 3 * num_codegens as i64
                + self.codegen_enc.bit_length(&self.codegen_freq)
                + i64::from(self.codegen_freq[16]) * 2
                + i64::from(self.codegen_freq[17]) * 3
                + i64::from(self.codegen_freq[18]) * 7;
            let dynamic_size = header
                + self.literal_enc.bit_length(&self.literal_freq)
                + self.offset_enc.bit_length(&self.offset_freq)
                + extra;
            let mut dynamic = false;
            if dynamic_size < size {
                size = dynamic_size;
                dynamic = true;
            }
            if let Some(input) = stored
                && ((input.len() as i64) + 5) * 8 < size
            {
                self.write_stored_header(input.len(), false);
                self.out.extend_from_slice(input);
                return;
            }
            let (lit, off) = if dynamic {
                self.write_bits(4, 3);
                self.write_bits((num_literals - 257) as u32, 5);
                self.write_bits((num_offsets - 1) as u32, 5);
                self.write_bits((num_codegens - 4) as u32, 4);
                for &o in CODEGEN_ORDER.iter().take(num_codegens) {
                    let l = self.codegen_enc.len[o];
                    self.write_bits(u32::from(l), 3);
                }
                let mut i = 0;
                loop {
                    let cw = self.codegen[i];
                    i += 1;
                    if cw == BAD_CODE {
                        break;
                    }
                    let (c, l) = (
                        self.codegen_enc.code[cw as usize],
                        self.codegen_enc.len[cw as usize],
                    );
                    self.write_code(c, l);
                    let extra_bits = match cw {
                        16 => 2,
                        17 => 3,
                        18 => 7,
                        _ => 0,
                    };
                    if extra_bits > 0 {
                        let v = u32::from(self.codegen[i]);
                        self.write_bits(v, extra_bits);
                        i += 1;
                    }
                }
                (self.literal_enc.clone(), self.offset_enc.clone())
            } else {
                self.write_bits(2, 3);
                (self.fixed_lit.clone(), self.fixed_off.clone())
            };
            for t in tokens.iter() {
                match *t {
                    Token::Lit(b) => self.write_code(lit.code[b as usize], lit.len[b as usize]),
                    Token::End => self.write_code(lit.code[END_BLOCK], lit.len[END_BLOCK]),
                    Token::Match(l, o) => {
                        let lc = length_code(l);
                        let sym = lc + LENGTH_CODES_START;
                        self.write_code(lit.code[sym], lit.len[sym]);
                        let eb = u32::from(LENGTH_EXTRA_BITS[lc]);
                        if eb > 0 {
                            self.write_bits(l - LENGTH_BASE[lc], eb);
                        }
                        let oc = offset_code(o);
                        self.write_code(off.code[oc], off.len[oc]);
                        let eb = u32::from(OFFSET_EXTRA_BITS[oc]);
                        if eb > 0 {
                            self.write_bits(o - OFFSET_BASE[oc], eb);
                        }
                    }
                }
            }
        }
    }

    fn hash4(b: &[u8]) -> u32 {
        let v =
            u32::from(b[3]) | u32::from(b[2]) << 8 | u32::from(b[1]) << 16 | u32::from(b[0]) << 24;
        v.wrapping_mul(HASHMUL) >> (32 - HASH_BITS)
    }

    /// Go's level-6 `compressor`.
    struct Compressor {
        w: BitWriter,
        window: Vec<u8>,
        window_end: usize,
        index: usize,
        block_start: usize,
        byte_available: bool,
        sync: bool,
        tokens: Vec<Token>,
        length: usize,
        offset: usize,
        chain_head: i64,
        hash_head: Vec<u32>,
        hash_prev: Vec<u32>,
        hash_offset: i64,
        max_insert_index: i64,
    }

    impl Compressor {
        fn new() -> Self {
            Compressor {
                w: BitWriter::new(),
                window: vec![0; 2 * WINDOW_SIZE],
                window_end: 0,
                index: 0,
                block_start: 0,
                byte_available: false,
                sync: false,
                tokens: Vec::with_capacity(1024),
                length: MIN_MATCH - 1,
                offset: 0,
                chain_head: -1,
                hash_head: vec![0; HASH_SIZE],
                hash_prev: vec![0; WINDOW_SIZE],
                hash_offset: 1,
                max_insert_index: 0,
            }
        }

        fn fill(&mut self, b: &[u8]) -> usize {
            if self.index >= 2 * WINDOW_SIZE - (MIN_MATCH + MAX_MATCH) {
                self.window.copy_within(WINDOW_SIZE..2 * WINDOW_SIZE, 0);
                self.index -= WINDOW_SIZE;
                self.window_end -= WINDOW_SIZE;
                self.block_start = if self.block_start >= WINDOW_SIZE {
                    self.block_start - WINDOW_SIZE
                } else {
                    usize::MAX
                };
                self.hash_offset += WINDOW_SIZE as i64;
                if self.hash_offset > MAX_HASH_OFFSET {
                    let delta = self.hash_offset - 1;
                    self.hash_offset -= delta;
                    self.chain_head -= delta;
                    for v in self.hash_prev.iter_mut().chain(self.hash_head.iter_mut()) {
                        *v = if i64::from(*v) > delta {
                            (i64::from(*v) - delta) as u32
                        } else {
                            0
                        };
                    }
                }
            }
            let n = b.len().min(self.window.len() - self.window_end);
            self.window[self.window_end..self.window_end + n].copy_from_slice(&b[..n]);
            self.window_end += n;
            n
        }

        fn write_block(&mut self, index: usize) {
            if index > 0 {
                let input = if self.block_start <= index {
                    Some(self.window[self.block_start..index].to_vec())
                } else {
                    None
                };
                self.block_start = index;
                let mut tokens = std::mem::take(&mut self.tokens);
                self.w.write_block(&mut tokens, input.as_deref());
                tokens.clear();
                self.tokens = tokens;
            }
        }

        fn insert(&mut self, index: usize) {
            let h = hash4(&self.window[index..index + MIN_MATCH]);
            let hh = &mut self.hash_head[(h & HASH_MASK) as usize];
            self.hash_prev[index & WINDOW_MASK] = *hh;
            *hh = (index as i64 + self.hash_offset) as u32;
        }

        fn find_match(
            &self,
            pos: usize,
            prev_head: i64,
            prev_length: usize,
            lookahead: usize,
        ) -> Option<(usize, usize)> {
            let min_match_look = MAX_MATCH.min(lookahead);
            let win = &self.window[..pos + min_match_look];
            let nice = (win.len() - pos).min(NICE);
            let mut tries = CHAIN;
            let mut length = prev_length;
            if length >= GOOD {
                tries >>= 2;
            }
            let mut w_end = win[pos + length];
            let w_pos = &win[pos..];
            let min_index = pos as i64 - WINDOW_SIZE as i64;
            let mut found = None;
            let mut i = prev_head;
            while tries > 0 {
                let iu = i as usize;
                if iu >= pos {
                    // Not reachable with consistent chains; never index past the window.
                    break;
                }
                if w_end == win[iu + length] {
                    let a = &win[iu..iu + min_match_look];
                    let n = a
                        .iter()
                        .zip(&w_pos[..min_match_look])
                        .take_while(|(x, y)| x == y)
                        .count();
                    if n > length && (n > MIN_MATCH || pos - iu <= 4096) {
                        length = n;
                        found = Some((n, pos - iu));
                        if n >= nice {
                            break;
                        }
                        w_end = win[pos + n];
                    }
                }
                if i == min_index {
                    break;
                }
                i = i64::from(self.hash_prev[iu & WINDOW_MASK]) - self.hash_offset;
                if i < min_index || i < 0 {
                    break;
                }
                tries -= 1;
            }
            found
        }

        fn deflate(&mut self) {
            if self.window_end - self.index < MIN_MATCH + MAX_MATCH && !self.sync {
                return;
            }
            self.max_insert_index = self.window_end as i64 - (MIN_MATCH as i64 - 1);
            loop {
                let lookahead = self.window_end - self.index;
                if lookahead < MIN_MATCH + MAX_MATCH {
                    if !self.sync {
                        break;
                    }
                    if lookahead == 0 {
                        if self.byte_available {
                            let b = self.window[self.index - 1];
                            self.tokens.push(Token::Lit(b));
                            self.byte_available = false;
                        }
                        if !self.tokens.is_empty() {
                            self.write_block(self.index);
                        }
                        break;
                    }
                }
                if (self.index as i64) < self.max_insert_index {
                    let h = hash4(&self.window[self.index..self.index + MIN_MATCH]);
                    let hh = &mut self.hash_head[(h & HASH_MASK) as usize];
                    self.chain_head = i64::from(*hh);
                    self.hash_prev[self.index & WINDOW_MASK] = self.chain_head as u32;
                    *hh = (self.index as i64 + self.hash_offset) as u32;
                }
                let prev_length = self.length;
                let prev_offset = self.offset;
                self.length = MIN_MATCH - 1;
                self.offset = 0;
                let min_index = (self.index as i64 - WINDOW_SIZE as i64).max(0);
                if self.chain_head - self.hash_offset >= min_index
                    && lookahead > prev_length
                    && prev_length < LAZY
                    && let Some((l, o)) = self.find_match(
                        self.index,
                        self.chain_head - self.hash_offset,
                        MIN_MATCH - 1,
                        lookahead,
                    )
                {
                    self.length = l;
                    self.offset = o;
                }
                if prev_length >= MIN_MATCH && self.length <= prev_length {
                    self.tokens.push(Token::Match(
                        (prev_length - 3) as u32,
                        (prev_offset - 1) as u32,
                    ));
                    let new_index = self.index + prev_length - 1;
                    self.index += 1;
                    while self.index < new_index {
                        if (self.index as i64) < self.max_insert_index {
                            self.insert(self.index);
                        }
                        self.index += 1;
                    }
                    self.byte_available = false;
                    self.length = MIN_MATCH - 1;
                    if self.tokens.len() == MAX_FLATE_BLOCK_TOKENS {
                        self.write_block(self.index);
                    }
                } else {
                    if self.byte_available {
                        let i = self.index - 1;
                        self.tokens.push(Token::Lit(self.window[i]));
                        if self.tokens.len() == MAX_FLATE_BLOCK_TOKENS {
                            self.write_block(i + 1);
                        }
                    }
                    self.index += 1;
                    self.byte_available = true;
                }
            }
        }

        fn write(&mut self, mut b: &[u8]) {
            while !b.is_empty() {
                self.deflate();
                let n = self.fill(b);
                b = &b[n..];
            }
        }

        fn finish_block(&mut self, eof: bool) {
            self.sync = true;
            self.deflate();
            self.w.write_stored_header(0, eof);
            self.w.flush();
            self.sync = false;
        }
    }

    /// Raw deflate stream of `gzip.Writer`'s `Write(data)`, `Flush()`, `Close()`.
    pub fn deflate_write_flush_close(data: &[u8]) -> Vec<u8> {
        let mut c = Compressor::new();
        c.write(data);
        c.finish_block(false);
        c.finish_block(true);
        c.w.out
    }
}

fn base64gzip(args: &[Value]) -> Result<Value, FuncError> {
    base64_value("base64gzip", &go_gzip(str_arg(args, 0)?.as_bytes()))
}

// ---------------------------------------------------------------------------------------
// urlencode

fn urlencode(args: &[Value]) -> Result<Value, FuncError> {
    /// Bytes Go's `url.QueryEscape` writes as they are (a space becomes `+`).
    fn unreserved(b: u8) -> bool {
        b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.' | b'~')
    }
    let s = str_arg(args, 0)?;
    // The result (up to three times the input) is measured and charged before it is
    // written, and written at its size.
    let escaped = s.bytes().filter(|&b| b != b' ' && !unreserved(b)).count();
    let len = s.len() + 2 * escaped;
    crate::value::meter::bytes("urlencode", len as u64)?;
    const HEX: &[u8; 16] = b"0123456789ABCDEF";
    let mut out = String::with_capacity(len);
    for &b in s.as_bytes() {
        if unreserved(b) {
            out.push(char::from(b));
        } else if b == b' ' {
            out.push('+');
        } else {
            out.push('%');
            out.push(char::from(HEX[usize::from(b >> 4)]));
            out.push(char::from(HEX[usize::from(b & 15)]));
        }
    }
    Ok(Value::string(out))
}

// ---------------------------------------------------------------------------------------
// textencodebase64 / textdecodebase64

#[derive(Clone, Copy, Debug, PartialEq)]
enum Codec {
    Utf8,
    Utf16 { big_endian: bool, bom: bool },
    Ascii,
    Latin1,
    Rs(&'static encoding_rs::Encoding),
}

/// The IANA character sets and their aliases, as data: see the file's header.
static IANA_CHARSETS: &str = include_str!("iana_charsets.txt");

/// The canonical IANA name and the codec of a character set name or alias (any case), as
/// golang.org/x/text's ianaindex finds them.
fn iana_lookup(name: &str) -> Option<(&'static str, Codec)> {
    let n = name.to_ascii_lowercase();
    IANA_CHARSETS
        .lines()
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .find_map(|line| {
            let mut fields = line.split_whitespace();
            let (canon, codec) = (fields.next()?, fields.next()?);
            if fields.any(|alias| alias == n) {
                Some((canon, codec_named(codec)?))
            } else {
                None
            }
        })
}

/// A codec column of the character set table.
fn codec_named(name: &str) -> Option<Codec> {
    Some(match name {
        "utf-8" => Codec::Utf8,
        "utf-16be" => Codec::Utf16 {
            big_endian: true,
            bom: false,
        },
        "utf-16le" => Codec::Utf16 {
            big_endian: false,
            bom: false,
        },
        "utf-16" => Codec::Utf16 {
            big_endian: true,
            bom: true,
        },
        "us-ascii" => Codec::Ascii,
        "latin1" => Codec::Latin1,
        other => {
            let e = encoding_rs::Encoding::for_label_no_replacement(other.as_bytes())?;
            // The table names encodings exactly, never by a WHATWG alias.
            (e.name() == other).then_some(Codec::Rs(e))?
        }
    })
}

/// The length of [`encode_text`]'s bytes, counted without making them (None where it
/// fails): UTF-16 makes two bytes of each ASCII one, gb18030 four of some two-byte
/// characters, ISO-2022-JP adds escape sequences.
fn encoded_len(s: &str, codec: Codec) -> Option<usize> {
    match codec {
        Codec::Utf8 => Some(s.len()),
        Codec::Utf16 { bom, .. } => {
            // A UTF-16 unit for each character, two for one of four UTF-8 bytes.
            let units: usize = s
                .bytes()
                .map(|b| usize::from(b & 0xC0 != 0x80) + usize::from(b >= 0xF0))
                .sum();
            Some(2 * (units + usize::from(bom)))
        }
        Codec::Ascii => s.is_ascii().then_some(s.len()),
        Codec::Latin1 => s
            .chars()
            .map(|c| u8::try_from(c as u32).ok().map(|_| 1))
            .sum(),
        Codec::Rs(enc) => {
            use encoding_rs::EncoderResult;
            let mut encoder = enc.output_encoding().new_encoder();
            let (mut rest, mut len) = (s, 0usize);
            let mut buf = [0u8; 1024];
            loop {
                let (r, read, written) =
                    encoder.encode_from_utf8_without_replacement(rest, &mut buf, true);
                len += written;
                rest = rest.get(read..).unwrap_or("");
                match r {
                    EncoderResult::InputEmpty => return Some(len),
                    EncoderResult::OutputFull => {}
                    EncoderResult::Unmappable(_) => return None,
                }
            }
        }
    }
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
    let unrepresentable = || {
        FuncError::arg(
            0,
            format!("the given string contains characters that cannot be represented in {canon}"),
        )
    };
    // The result (up to 2.7 times the string in UTF-16) is measured and charged before
    // the encoded bytes, and then it, are made.
    let len = encoded_len(s, codec).ok_or_else(unrepresentable)?;
    crate::value::meter::bytes("textencodebase64", base64_len(len))?;
    let bytes = encode_text(s, codec).ok_or_else(unrepresentable)?;
    Ok(base64_string(&bytes))
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
    // Hashed: a scan per header was quadratic in their number.
    let mut seen: std::collections::HashSet<&str> = std::collections::HashSet::new();
    for (i, h) in headers.iter().enumerate() {
        if !seen.insert(h.as_str()) {
            return Err(FuncError::general(format!(
                "duplicate column name {}",
                go_quote(h)
            )));
        }
        sorted.push((Str::from(h.as_str()), i));
    }
    sorted.sort_by(|a, b| a.0.cmp(&b.0));
    let ety = Type::object(sorted.iter().map(|(k, _)| (k.clone(), Type::String)));
    // Each row is an object of every column: charged (the row, its entries, their keys
    // and values) before it is made. A row of empty fields is a byte a field, and a
    // hundred columns make each a hundred elements.
    let keys: usize = sorted.iter().map(|(k, _)| k.len()).sum();
    let mut rows = Vec::new();
    while let Some(cols) = r.read_record().map_err(csv_error)? {
        let values: usize = cols.iter().map(String::len).sum();
        crate::value::meter::elements("csvdecode", 1 + sorted.len() as u64)?;
        crate::value::meter::bytes("csvdecode", (keys + values) as u64)?;
        crate::value::meter::tick("csvdecode")?;
        let entries = sorted
            .iter()
            .map(|(k, i)| (k.clone(), Value::string(cols[*i].as_str())))
            .collect();
        rows.push(Value::object_sorted(entries));
    }
    Ok(Value::list(ety, rows))
}

// ---------------------------------------------------------------------------------------
// JSON and YAML

fn jsonencode(args: &[Value]) -> Result<Value, FuncError> {
    let v = args.first().unwrap_or(&Value::NULL);
    super::string_in_buffer(|out| crate::value::json::encode_into(out, v))
        .map_err(FuncError::General)
}

fn jsondecode(args: &[Value]) -> Result<Value, FuncError> {
    crate::value::json::decode(str_arg(args, 0)?).map_err(FuncError::General)
}

fn yamlencode(args: &[Value]) -> Result<Value, FuncError> {
    let v = args.first().unwrap_or(&Value::NULL);
    crate::value::yaml::encode(v)
        .map(Value::string)
        .map_err(FuncError::General)
}

fn yamldecode(args: &[Value]) -> Result<Value, FuncError> {
    crate::value::yaml::decode(str_arg(args, 0)?).map_err(FuncError::General)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::builtins::test_util::s;

    #[test]
    fn encoded_len_is_the_encoded_length() {
        let strings = [
            "",
            "abc",
            "é✓😀",
            "aアbイ",
            "\u{80}\u{7ff}\u{800}\u{ffff}\u{10000}",
            "ÿ",
            "€",
        ];
        for name in [
            "UTF-8",
            "UTF-16",
            "UTF-16LE",
            "UTF-16BE",
            "US-ASCII",
            "ISO-8859-1",
            "GB18030",
            "ISO-2022-JP",
            "Shift_JIS",
            "windows-1252",
            "Big5",
        ] {
            let (_, codec) = iana_lookup(name).unwrap();
            for s in strings {
                let want = encode_text(s, codec).map(|b| b.len());
                assert_eq!(encoded_len(s, codec), want, "{name} {s:?}");
            }
        }
    }

    fn ok1(f: super::super::Impl, x: &str) -> String {
        f(&[s(x)]).unwrap().as_str().unwrap().to_string()
    }
    fn ok2(f: super::super::Impl, a: &str, b: &str) -> String {
        f(&[s(a), s(b)]).unwrap().as_str().unwrap().to_string()
    }

    #[test]
    fn every_charset_row_resolves_and_names_are_case_insensitive() {
        let rows: Vec<&str> = IANA_CHARSETS
            .lines()
            .filter(|l| !l.is_empty() && !l.starts_with('#'))
            .collect();
        assert_eq!(rows.len(), 38);
        for row in rows {
            let f: Vec<&str> = row.split_whitespace().collect();
            assert!(f.len() >= 3, "{row}");
            assert!(codec_named(f[1]).is_some(), "codec of {row}");
            for alias in &f[2..] {
                assert_eq!(*alias, alias.to_ascii_lowercase(), "{row}");
                let (canon, _) = iana_lookup(&alias.to_ascii_uppercase()).expect(alias);
                assert_eq!(canon, f[0]);
            }
        }
        assert!(iana_lookup("utf8").is_none());
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
    fn go_gzip_round_trips() {
        use std::io::Read;
        let mut inputs: Vec<Vec<u8>> = vec![
            b"a".to_vec(),
            "héllo ✓ ".repeat(50).into_bytes(),
            b"abcabcabcabcabcabcabcabcabcabcabcabcabcabcabcabcabcabcabcabcabc".to_vec(),
        ];
        // Pseudo-random bytes (incompressible: a stored block), then a large text that
        // shifts the window and fills several blocks.
        let mut x: u32 = 12345;
        inputs.push(
            (0..5000)
                .map(|_| {
                    x = x.wrapping_mul(1_103_515_245).wrapping_add(12345);
                    (x >> 16) as u8
                })
                .collect(),
        );
        let mut big = Vec::new();
        for i in 0..40000u32 {
            big.extend_from_slice(format!("line {} of {}\n", i % 977, i / 13).as_bytes());
        }
        inputs.push(big);
        for input in inputs {
            let gz = go_gzip(&input);
            let mut d = flate2::read::GzDecoder::new(&gz[..]);
            let mut out = Vec::new();
            d.read_to_end(&mut out).unwrap();
            assert_eq!(out, input);
        }
    }

    #[test]
    fn urlencode_cases() {
        assert_eq!(ok1(urlencode, "a b&c=d/é?"), "a+b%26c%3Dd%2F%C3%A9%3F");
        assert_eq!(ok1(urlencode, ""), "");
        assert_eq!(ok1(urlencode, "~-._ABCxyz019"), "~-._ABCxyz019");
        assert_eq!(ok1(urlencode, "100%"), "100%25");
        // Every ASCII character and some multi-byte ones, against Go's rule written
        // plainly.
        let all: String = (0u8..0x80).map(char::from).chain("é✓😀".chars()).collect();
        let plain: String = all
            .bytes()
            .map(|b| match b {
                b' ' => "+".to_string(),
                b if b.is_ascii_alphanumeric() || b"-_.~".contains(&b) => char::from(b).to_string(),
                b => format!("%{b:02X}"),
            })
            .collect();
        assert_eq!(ok1(urlencode, &all), plain);
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
        assert_eq!(v.length(), Some(0));
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
        // An unknown is answered by the call (`unknown_result`), before the encoder.
        let inside = Value::tuple(vec![Value::Unknown(Type::String)]);
        let call = |v: Value| crate::builtins::test_util::run("jsonencode", vec![v]);
        assert!(call(Value::Unknown(Type::String)).unwrap().is_unknown());
        assert!(call(inside).unwrap().is_unknown());
        assert_eq!(
            jsondecode(&[s("{bad")]).unwrap_err(),
            FuncError::general("invalid character 'b'")
        );
        assert_eq!(jsondecode(&[s("")]).unwrap_err(), FuncError::general("EOF"));
        let d = jsondecode(&[s("{\"a\":1}")]).unwrap();
        assert!(d.get_attr("a").unwrap().raw_equals(&Value::int(1)));
    }
}

/// Golden outputs of `jsonencode`, `yamlencode` and `format`'s value verbs over a matrix
/// of values (insta snapshots under `src/builtins/snapshots/`).
#[cfg(test)]
mod golden {
    use crate::value::number::Number;
    use crate::value::{Str, Type, Value};

    fn num(s: &str) -> Value {
        Value::Number(Number::parse(s).unwrap_or(Number::from_i64(0)))
    }

    /// The matrix: values whose exact and f64 forms print the same.
    pub(crate) fn matrix() -> Vec<(&'static str, Value)> {
        let s = Value::string;
        vec![
            ("null", Value::NULL),
            ("typed null", Value::Null(Type::String)),
            ("true", Value::Bool(true)),
            ("false", Value::Bool(false)),
            ("zero", Value::int(0)),
            ("int", Value::int(42)),
            ("negative", Value::int(-17)),
            ("2^53", Value::int(9_007_199_254_740_992)),
            ("half", num("0.5")),
            ("neg fraction", num("-2.25")),
            ("1e21", num("1e21")),
            ("1e-7", num("1e-7")),
            ("empty string", s("")),
            ("plain", s("plain")),
            ("numeric string", s("123")),
            ("bool word", s("yes")),
            ("quotes", s("say \"hi\" \\ back")),
            ("html", s("<a href='x'>&</a>")),
            ("multi-line", s("multi\nline\n")),
            ("no final newline", s("a\nb")),
            ("tab", s("tab\there")),
            ("unicode", s("héllo ✓ 😀")),
            ("line separator", s("a\u{2028}b")),
            ("control", s("bell\u{7}")),
            ("leading space", s(" x")),
            (
                "long",
                s(
                    "the quick brown fox jumps over the lazy dog and keeps on running far away from here",
                ),
            ),
            ("empty tuple", Value::tuple(vec![])),
            ("empty object", Value::object(vec![])),
            ("list", Value::list(Type::String, vec![s("a"), s("b")])),
            (
                "set",
                Value::Set(crate::value::Seq::new(
                    Type::Number,
                    vec![Value::int(1), Value::int(2)],
                )),
            ),
            (
                "tuple",
                Value::tuple(vec![Value::int(1), s("a"), Value::NULL, Value::Bool(false)]),
            ),
            (
                "map",
                Value::map(
                    Type::String,
                    vec![(Str::from("b"), s("2")), (Str::from("a"), s("1"))],
                ),
            ),
            (
                "nested",
                Value::object(vec![
                    (
                        "list".into(),
                        Value::tuple(vec![
                            Value::object(vec![("k".into(), s("v")), ("n".into(), Value::int(1))]),
                            Value::tuple(vec![Value::int(1), Value::tuple(vec![])]),
                        ]),
                    ),
                    (
                        "obj".into(),
                        Value::object(vec![("deep".into(), s("x\ny\n"))]),
                    ),
                    ("odd key: ✓".into(), Value::NULL),
                    ("".into(), Value::Bool(true)),
                ]),
            ),
        ]
    }

    fn show(r: Result<String, String>) -> String {
        match r {
            Ok(s) => format!("{s:?}"),
            Err(e) => format!("error: {e}"),
        }
    }

    #[test]
    fn jsonencode_matrix() {
        let out: String = matrix()
            .iter()
            .map(|(label, v)| format!("{label}: {}\n", show(crate::value::json::encode(v))))
            .collect();
        insta::assert_snapshot!(out);
    }

    #[test]
    fn yamlencode_matrix() {
        let out: String = matrix()
            .iter()
            .map(|(label, v)| {
                format!(
                    "--- {label}\n{}\n",
                    match crate::value::yaml::encode(v) {
                        Ok(s) => s,
                        Err(e) => format!("error: {e}\n"),
                    }
                )
            })
            .collect();
        insta::assert_snapshot!(out);
    }

    #[test]
    fn format_matrix() {
        use crate::builtins::format::format_str;
        let mut out = String::new();
        for (label, v) in matrix() {
            // Each value with the verbs its type converts to (conversion failures are the
            // conversion module's messages and are tested there).
            let mut verbs = vec!["%v", "%#v", "%12v|", "%-12v|", "%012v"];
            match &v {
                Value::String(_) => verbs.extend(["%s", "%q", "%.3s|", "%-8q|"]),
                Value::Number(n) if n.is_integer() => {
                    verbs.extend(["%d", "%+06d", "%x", "%#o", "%b", "%.3f", "%e", "%G"])
                }
                Value::Number(_) => verbs.extend(["%.3f", "%e", "%g", "%+.1E", "%8.2f|"]),
                Value::Bool(_) => verbs.extend(["%t", "%s"]),
                _ => {}
            }
            out.push_str(&format!("{label}:\n"));
            for verb in verbs {
                let r = format_str(verb, std::slice::from_ref(&v)).map_err(|e| match e {
                    crate::builtins::FuncError::Arg { message, .. }
                    | crate::builtins::FuncError::General(message) => message,
                });
                out.push_str(&format!("  {verb:8} {}\n", show(r)));
            }
        }
        insta::assert_snapshot!(out);
    }
}
