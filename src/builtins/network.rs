//! Built-in functions: `cidrhost`, `cidrnetmask`, `cidrsubnet`, `cidrsubnets`, as
//! function-hcl's copy of Terraform's: addresses are parsed by Terraform's fork of Go's
//! `net` parser (which accepts leading zeros in IPv4 octets), the arithmetic is
//! go-cidr v1.1.0's (with its quirks for negative numbers), and results are printed the
//! way Go's `net.IP`/`net.IPNet` print.

use super::{FuncDef, FuncError, str_arg};
use crate::value::number::Number;
use crate::value::{Type, Value};
use num_bigint::{BigInt, Sign};
use num_traits::{One, Signed, ToPrimitive, Zero};
use smallvec::SmallVec;

/// The network functions.
pub static FUNCS: &[FuncDef] = funcs! {
    cidrhost(prefix: String, hostnum: Number),
    cidrnetmask(prefix: String),
    cidrsubnet(prefix: String, newbits: Number, netnum: Number),
    cidrsubnets(prefix: String, ..newbits: Number),
};

// ---------------------------------------------------------------------------------------
// Go's net.IP and net.IPNet, as byte vectors of length 4 or 16 (0 = nil).

/// An address or mask: 4 or 16 bytes, held inline (`cidrsubnet` in a `for` made a dozen
/// small heap vectors per call).
type Ip = SmallVec<[u8; 16]>;

const V4_IN_V6: [u8; 12] = [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff];
const BIG: u32 = 0xFF_FFFF;

#[derive(Clone, Debug)]
struct IpNet {
    ip: Ip,
    mask: Ip,
}

fn ipv4(a: u8, b: u8, c: u8, d: u8) -> Ip {
    let mut v = Ip::from_slice(&V4_IN_V6);
    v.extend_from_slice(&[a, b, c, d]);
    v
}

/// Go's `dtoi`: decimal prefix, `ok` only for at least one digit below 0xFFFFFF.
fn dtoi(s: &[u8]) -> (u32, usize, bool) {
    let mut n: u32 = 0;
    let mut i = 0;
    while i < s.len() && s[i].is_ascii_digit() {
        n = n * 10 + u32::from(s[i] - b'0');
        if n >= BIG {
            return (BIG, i, false);
        }
        i += 1;
    }
    if i == 0 {
        return (0, 0, false);
    }
    (n, i, true)
}

/// Go's `xtoi`: hexadecimal prefix.
fn xtoi(s: &[u8]) -> (u32, usize, bool) {
    let mut n: u32 = 0;
    let mut i = 0;
    while i < s.len() {
        let Some(d) = (s[i] as char).to_digit(16) else {
            break;
        };
        n = n * 16 + d;
        if n >= BIG {
            return (0, i, false);
        }
        i += 1;
    }
    if i == 0 {
        return (0, i, false);
    }
    (n, i, true)
}

/// Terraform's `parseIPv4`: leading zeros are accepted (and read as decimal).
fn parse_ipv4(mut s: &[u8]) -> Option<Ip> {
    let mut p = [0u8; 4];
    for (i, slot) in p.iter_mut().enumerate() {
        if s.is_empty() {
            return None;
        }
        if i > 0 {
            if s[0] != b'.' {
                return None;
            }
            s = &s[1..];
        }
        let (n, c, ok) = dtoi(s);
        if !ok || n > 0xFF {
            return None;
        }
        s = &s[c..];
        *slot = n as u8;
    }
    if !s.is_empty() {
        return None;
    }
    Some(ipv4(p[0], p[1], p[2], p[3]))
}

/// Go's `parseIPv6` (RFC 4291 text, optional trailing IPv4, no zone).
fn parse_ipv6(mut s: &[u8]) -> Option<Ip> {
    let mut ip = Ip::from_elem(0, 16);
    let mut ellipsis: Option<usize> = None;
    if s.len() >= 2 && s[0] == b':' && s[1] == b':' {
        ellipsis = Some(0);
        s = &s[2..];
        if s.is_empty() {
            return Some(ip);
        }
    }
    let mut i = 0usize;
    while i < 16 {
        let (n, c, ok) = xtoi(s);
        if !ok || n > 0xFFFF {
            return None;
        }
        if c < s.len() && s[c] == b'.' {
            if ellipsis.is_none() && i != 12 {
                return None;
            }
            if i + 4 > 16 {
                return None;
            }
            let ip4 = parse_ipv4(s)?;
            ip[i..i + 4].copy_from_slice(&ip4[12..16]);
            s = &[];
            i += 4;
            break;
        }
        ip[i] = (n >> 8) as u8;
        ip[i + 1] = n as u8;
        i += 2;
        s = &s[c..];
        if s.is_empty() {
            break;
        }
        if s[0] != b':' || s.len() == 1 {
            return None;
        }
        s = &s[1..];
        if s[0] == b':' {
            if ellipsis.is_some() {
                return None;
            }
            ellipsis = Some(i);
            s = &s[1..];
            if s.is_empty() {
                break;
            }
        }
    }
    if !s.is_empty() {
        return None;
    }
    if i < 16 {
        let e = ellipsis?;
        let n = 16 - i;
        for j in (e..i).rev() {
            ip[j + n] = ip[j];
        }
        for b in ip.iter_mut().skip(e).take(n) {
            *b = 0;
        }
    } else if ellipsis.is_some() {
        return None;
    }
    Some(ip)
}

/// Go's `net.CIDRMask` (None for Go's nil).
fn cidr_mask(ones: i64, bits: i64) -> Option<Ip> {
    if (bits != 32 && bits != 128) || ones < 0 || ones > bits {
        return None;
    }
    let mut m = Ip::from_elem(0, (bits / 8) as usize);
    let mut n = ones;
    for b in m.iter_mut() {
        if n >= 8 {
            *b = 0xff;
            n -= 8;
            continue;
        }
        *b = !(0xffu8.checked_shr(n as u32).unwrap_or(0));
        n = 0;
    }
    Some(m)
}

/// Go's `simpleMaskLength`.
fn simple_mask_length(mask: &[u8]) -> i64 {
    let mut n = 0i64;
    for (i, &v) in mask.iter().enumerate() {
        if v == 0xff {
            n += 8;
            continue;
        }
        let mut v = v;
        while v & 0x80 != 0 {
            n += 1;
            v <<= 1;
        }
        if v != 0 {
            return -1;
        }
        if mask[i + 1..].iter().any(|&b| b != 0) {
            return -1;
        }
        break;
    }
    n
}

/// Go's `IPMask.Size`.
fn mask_size(mask: &[u8]) -> (i64, i64) {
    let ones = simple_mask_length(mask);
    if ones == -1 {
        return (0, 0);
    }
    (ones, mask.len() as i64 * 8)
}

/// Go's `IP.To4`.
fn to4(ip: &[u8]) -> Option<&[u8]> {
    match ip.len() {
        4 => Some(ip),
        16 if ip[..12] == V4_IN_V6 => Some(&ip[12..]),
        _ => None,
    }
}

/// Go's `IP.Mask` (empty for Go's nil).
fn ip_mask(ip: &[u8], mask: &[u8]) -> Ip {
    let mut mask = mask;
    let mut ip = ip;
    if mask.len() == 16 && ip.len() == 4 && mask[..12].iter().all(|&b| b == 0xff) {
        mask = &mask[12..];
    }
    if mask.len() == 4 && ip.len() == 16 && ip[..12] == V4_IN_V6 {
        ip = &ip[12..];
    }
    if ip.len() != mask.len() {
        return Ip::new();
    }
    ip.iter().zip(mask).map(|(a, b)| a & b).collect()
}

/// Go's `IP.Equal`.
fn ip_equal(a: &[u8], b: &[u8]) -> bool {
    if a.len() == b.len() {
        return a == b;
    }
    if a.len() == 4 && b.len() == 16 {
        return b[..12] == V4_IN_V6 && a == &b[12..];
    }
    if a.len() == 16 && b.len() == 4 {
        return a[..12] == V4_IN_V6 && &a[12..] == b;
    }
    false
}

fn ipv4_zero() -> Ip {
    ipv4(0, 0, 0, 0)
}

/// Go's `IP.String`.
fn ip_string(ip: &[u8]) -> String {
    if ip.is_empty() {
        return "<nil>".into();
    }
    if ip.len() != 4 && ip.len() != 16 {
        return format!("?{}", hex(ip));
    }
    if let Some(p4) = to4(ip) {
        let mut out = String::with_capacity(18);
        push_ip4(&mut out, p4);
        return out;
    }
    let groups: Vec<u16> = ip
        .chunks(2)
        .map(|c| u16::from(c[0]) << 8 | u16::from(c[1]))
        .collect();
    let (mut zs, mut ze) = (usize::MAX, usize::MAX);
    let mut best = 0usize;
    let mut i = 0;
    while i < 8 {
        let mut j = i;
        while j < 8 && groups[j] == 0 {
            j += 1;
        }
        if j - i >= 2 && j - i > best {
            best = j - i;
            zs = i;
            ze = j;
        }
        i += 1;
    }
    let mut out = String::new();
    let mut i = 0;
    while i < 8 {
        if i == zs {
            out.push_str("::");
            i = ze;
            if i >= 8 {
                break;
            }
        } else if i > 0 {
            out.push(':');
        }
        out.push_str(&format!("{:x}", groups[i]));
        i += 1;
    }
    out
}

/// An address or mask as Go's `%x` prints it (at most 16 bytes).
fn hex(b: &[u8]) -> String {
    crate::text::hex::hex_into(b, &mut [0u8; 32]).to_string()
}

/// Go's `networkNumberAndMask`.
fn network_number_and_mask(n: &IpNet) -> Option<(Ip, Ip)> {
    let ip: Ip = match to4(&n.ip) {
        Some(v4) => Ip::from_slice(v4),
        None => {
            if n.ip.len() != 16 {
                return None;
            }
            n.ip.clone()
        }
    };
    let m = match n.mask.len() {
        4 => {
            if ip.len() != 4 {
                return None;
            }
            n.mask.clone()
        }
        16 => {
            if ip.len() == 4 {
                Ip::from_slice(&n.mask[12..])
            } else {
                n.mask.clone()
            }
        }
        _ => return None,
    };
    Some((ip, m))
}

/// Go's `IPNet.String`.
/// Dotted decimal, written without `format!` (`cidrsubnet` in a `for` over hundreds of
/// items spent half its time in the formatter).
fn push_ip4(out: &mut String, p4: &[u8]) {
    for (i, b) in p4.iter().enumerate() {
        if i > 0 {
            out.push('.');
        }
        push_u8(out, *b);
    }
}

/// An IPv4 network in CIDR notation (`10.1.0.0/16`): at most 18 bytes.
fn push_cidr4(out: &mut String, p4: &[u8], prefix: u8) {
    push_ip4(out, p4);
    out.push('/');
    push_u8(out, prefix);
}

fn push_u8(out: &mut String, b: u8) {
    if b >= 100 {
        out.push(char::from(b'0' + b / 100));
    }
    if b >= 10 {
        out.push(char::from(b'0' + b / 10 % 10));
    }
    out.push(char::from(b'0' + b % 10));
}

fn net_string(n: &IpNet) -> String {
    let Some((nn, m)) = network_number_and_mask(n) else {
        return "<nil>".into();
    };
    let l = simple_mask_length(&m);
    if let (Some(p4), 0..=32) = (to4(&nn).filter(|_| nn.len() == 4 || nn.len() == 16), l) {
        let mut out = String::with_capacity(18);
        push_cidr4(&mut out, p4, l as u8);
        return out;
    }
    if l == -1 {
        format!("{}/{}", ip_string(&nn), hex(&m))
    } else {
        format!("{}/{}", ip_string(&nn), l)
    }
}

/// Go's `IPNet.Contains`.
fn net_contains(n: &IpNet, ip: &[u8]) -> bool {
    let Some((nn, m)) = network_number_and_mask(n) else {
        return false;
    };
    let ip = to4(ip).unwrap_or(ip);
    if ip.len() != nn.len() {
        return false;
    }
    (0..ip.len()).all(|i| nn[i] & m[i] == ip[i] & m[i])
}

/// Terraform's `ipaddr.ParseCIDR` (the error is Go's `ParseError` text), the last network
/// parsed on this thread remembered: the network of a `cidrsubnet`/`cidrhost` call is
/// most often one constant for every member of a collection, and parsing it cost ~500
/// instructions a call. Errors are not remembered.
fn parse_cidr(s: &str) -> Result<IpNet, String> {
    /// Longer texts (an IPv6 address written out in full fits) are parsed every time.
    const KEPT: usize = 48;
    type Last = Option<([u8; KEPT], usize, IpNet)>;
    thread_local! {
        static LAST: std::cell::RefCell<Last> = const { std::cell::RefCell::new(None) };
    }
    let b = s.as_bytes();
    if b.len() > KEPT {
        return parse_cidr_text(s);
    }
    let found = LAST.with(|last| match &*last.borrow() {
        Some((text, n, net)) if text.get(..*n) == Some(b) => Some(net.clone()),
        _ => None,
    });
    if let Some(net) = found {
        return Ok(net);
    }
    let net = parse_cidr_text(s)?;
    let mut text = [0u8; KEPT];
    text[..b.len()].copy_from_slice(b);
    LAST.with(|last| *last.borrow_mut() = Some((text, b.len(), net.clone())));
    Ok(net)
}

/// [`parse_cidr`], parsing the text.
fn parse_cidr_text(s: &str) -> Result<IpNet, String> {
    let err = || format!("invalid CIDR address: {s}");
    let b = s.as_bytes();
    let Some(slash) = b.iter().position(|&c| c == b'/') else {
        return Err(err());
    };
    let (addr, mask) = (&b[..slash], &b[slash + 1..]);
    let (ip, iplen) = match parse_ipv4(addr) {
        Some(ip) => (ip, 4),
        None => (parse_ipv6(addr).ok_or_else(err)?, 16),
    };
    let (n, i, ok) = dtoi(mask);
    if !ok || i != mask.len() || i64::from(n) > 8 * iplen {
        return Err(err());
    }
    let m = cidr_mask(i64::from(n), 8 * iplen).ok_or_else(err)?;
    Ok(IpNet {
        ip: ip_mask(&ip, &m),
        mask: m,
    })
}

// ---------------------------------------------------------------------------------------
// go-cidr v1.1.0 arithmetic.

/// Go's `big.Int.Uint64` (low 64 bits of the magnitude) as a signed `int64` cast.
fn go_uint64_as_int64(x: &BigInt) -> i64 {
    let low = x.magnitude().iter_u64_digits().next().unwrap_or(0);
    low as i64
}

fn go_uint64(x: &BigInt) -> u64 {
    x.magnitude().iter_u64_digits().next().unwrap_or(0)
}

fn panic_err(msg: &str) -> FuncError {
    FuncError::general(format!("panic in function implementation: {msg}"))
}

/// go-cidr's `intToIP`: the magnitude's bytes, right-aligned.
fn int_to_ip(v: &BigInt, bits: i64) -> Result<Ip, FuncError> {
    let bytes = if v.is_zero() {
        Vec::new()
    } else {
        v.magnitude().to_bytes_be()
    };
    let len = (bits / 8) as usize;
    if bytes.len() > len {
        return Err(panic_err(&format!(
            "runtime error: index out of range [{}]",
            len as i64 - bytes.len() as i64
        )));
    }
    let mut ret = Ip::from_elem(0, len);
    ret[len - bytes.len()..].copy_from_slice(&bytes);
    Ok(ret)
}

/// [`insert_num_into_ip`] for a non-negative number that, shifted, still fits the address:
/// the same bits in u128 arithmetic (an address is at most 128 bits), without big integers.
fn insert_small_num(ip: &[u8], num: &BigInt, shift: u64, total_bits: i64) -> Option<Ip> {
    let n = num.to_u128()?;
    if shift >= 128 || u64::from(128 - n.leading_zeros()) + shift > total_bits as u64 {
        return None;
    }
    let mut ip_int = [0u8; 16];
    ip_int.get_mut(16 - ip.len()..)?.copy_from_slice(ip);
    let v = u128::from_be_bytes(ip_int) | (n << shift);
    Some(Ip::from_slice(v.to_be_bytes().get(16 - ip.len()..)?))
}

/// go-cidr's `insertNumIntoIP`.
fn insert_num_into_ip(ip: &[u8], num: &BigInt, prefix_len: i64) -> Result<Ip, FuncError> {
    let total_bits: i64 = match ip.len() {
        4 => 32,
        16 => 128,
        _ => {
            return Err(panic_err(
                "runtime error: invalid memory address or nil pointer dereference",
            ));
        }
    };
    let shift = total_bits.wrapping_sub(prefix_len) as u64;
    match insert_small_num(ip, num, shift, total_bits) {
        Some(ip) => Ok(ip),
        None => insert_big_num(ip, num, shift, total_bits),
    }
}

/// [`insert_num_into_ip`] in big integers, as go-cidr computes it.
fn insert_big_num(ip: &[u8], num: &BigInt, shift: u64, total_bits: i64) -> Result<Ip, FuncError> {
    let ip_int = BigInt::from_bytes_be(Sign::Plus, ip);
    let shifted = if num.is_zero() {
        BigInt::zero()
    } else if shift > 256 {
        // The result cannot fit an address; Go would panic in intToIP (or on allocation).
        return Err(panic_err("runtime error: index out of range [-1]"));
    } else {
        num << (shift as usize)
    };
    int_to_ip(&(ip_int | shifted), total_bits)
}

fn host_big(base: &IpNet, num: BigInt) -> Result<Ip, FuncError> {
    let (parent_len, addr_len) = mask_size(&base.mask);
    let host_len = (addr_len - parent_len) as usize;
    let max_host: BigInt = (BigInt::one() << host_len) - 1;
    let mut num = num;
    let mut num_u = BigInt::from(go_uint64_as_int64(&num));
    if num.is_negative() {
        num_u = -&num - 1;
        num = &max_host - &num_u;
    }
    if num_u > max_host {
        return Err(FuncError::general(format!(
            "prefix of {parent_len} does not accommodate a host numbered {num}"
        )));
    }
    let bitlength = if to4(&base.ip).is_some() { 32 } else { 128 };
    insert_num_into_ip(&base.ip, &num, bitlength)
}

fn subnet_big(base: &IpNet, new_bits: i64, num: &BigInt) -> Result<IpNet, FuncError> {
    let (parent_len, addr_len) = mask_size(&base.mask);
    let new_prefix_len = parent_len.wrapping_add(new_bits);
    if new_prefix_len > addr_len {
        return Err(FuncError::general(format!(
            "insufficient address space to extend prefix of {parent_len} by {new_bits}"
        )));
    }
    let shift = new_bits as u64;
    let max_net: u64 = if shift >= 64 { 0 } else { 1u64 << shift }.wrapping_sub(1);
    if go_uint64(num) > max_net {
        return Err(FuncError::general(format!(
            "prefix extension of {new_bits} does not accommodate a subnet numbered {num}"
        )));
    }
    Ok(IpNet {
        ip: insert_num_into_ip(&base.ip, num, new_prefix_len)?,
        mask: cidr_mask(new_prefix_len, addr_len).unwrap_or_default(),
    })
}

fn check_ipv4(ip: &[u8]) -> Ip {
    Ip::from_slice(to4(ip).unwrap_or(ip))
}

fn inc(ip: &[u8]) -> Ip {
    let mut v = check_ipv4(ip);
    for b in v.iter_mut().rev() {
        *b = b.wrapping_add(1);
        if *b > 0 {
            break;
        }
    }
    v
}

fn dec(ip: &[u8]) -> Ip {
    let mut v = check_ipv4(ip);
    for b in v.iter_mut().rev() {
        *b = b.wrapping_sub(1);
        if *b < 255 {
            break;
        }
    }
    v
}

/// go-cidr's `AddressRange` (v1.1.0: first address is the network's IP as given).
fn address_range(n: &IpNet) -> Result<(Ip, Ip), FuncError> {
    let first = n.ip.clone();
    let (prefix_len, bits) = mask_size(&n.mask);
    if prefix_len == bits {
        return Ok((first.clone(), first));
    }
    let first_int = BigInt::from_bytes_be(Sign::Plus, &first);
    let ip_bits: i64 = match first.len() {
        4 => 32,
        16 => 128,
        _ => {
            return Err(panic_err(
                "runtime error: invalid memory address or nil pointer dereference",
            ));
        }
    };
    let host_len = (ip_bits - prefix_len).max(0) as usize;
    let last: BigInt = ((BigInt::one() << host_len) - 1) | first_int;
    Ok((first, int_to_ip(&last, ip_bits)?))
}

fn previous_subnet(n: &IpNet, prefix_len: i64) -> IpNet {
    let start = check_ipv4(&n.ip);
    let c_mask = cidr_mask(prefix_len, 8 * start.len() as i64).unwrap_or_default();
    let prev = dec(&start);
    IpNet {
        ip: ip_mask(&prev, &c_mask),
        mask: c_mask,
    }
}

fn next_subnet(n: &IpNet, prefix_len: i64) -> Result<(IpNet, bool), FuncError> {
    let (_, current_last) = address_range(n)?;
    let mask = cidr_mask(prefix_len, 8 * current_last.len() as i64).unwrap_or_default();
    let current = IpNet {
        ip: ip_mask(&current_last, &mask),
        mask: mask.clone(),
    };
    let (_, last) = address_range(&current)?;
    let last = inc(&last);
    let next = IpNet {
        ip: ip_mask(&last, &mask),
        mask,
    };
    let rollover = ip_equal(&last, &ipv4_zero()) || ip_equal(&last, &[0u8; 16]);
    Ok((next, rollover))
}

// ---------------------------------------------------------------------------------------
// The functions.

fn num_arg(args: &[Value], i: usize) -> Result<&Number, FuncError> {
    args.get(i)
        .and_then(Value::as_number)
        .ok_or_else(|| FuncError::arg(i, "number required"))
}

/// gocty's conversion of a number to a Go `*big.Int`.
fn whole_big(n: &Number) -> Result<BigInt, String> {
    n.to_bigint()
        .ok_or_else(|| "value must be a whole number".to_string())
}

/// gocty's conversion of a number to a Go `int`.
fn whole_int(n: &Number) -> Result<i64, String> {
    n.to_i64().ok_or_else(|| {
        format!(
            "value must be a whole number, between {} and {}",
            i64::MIN,
            i64::MAX
        )
    })
}

fn invalid_cidr(e: String) -> String {
    format!("invalid CIDR expression: {e}")
}

fn cidrhost(args: &[Value]) -> Result<Value, FuncError> {
    let host_num = whole_big(num_arg(args, 1)?).map_err(FuncError::General)?;
    let network = parse_cidr(str_arg(args, 0)?).map_err(|e| FuncError::General(invalid_cidr(e)))?;
    let ip = host_big(&network, host_num)?;
    Ok(Value::string(ip_string(&ip)))
}

fn cidrnetmask(args: &[Value]) -> Result<Value, FuncError> {
    let prefix = str_arg(args, 0)?;
    let network = parse_cidr(prefix).map_err(|e| FuncError::General(invalid_cidr(e)))?;
    if to4(&network.ip).is_none() {
        return Err(FuncError::general(format!(
            "IPv6 addresses cannot have a netmask: {prefix}"
        )));
    }
    Ok(Value::string(ip_string(&network.mask)))
}

fn cidrsubnet(args: &[Value]) -> Result<Value, FuncError> {
    let new_bits = whole_int(num_arg(args, 1)?).map_err(FuncError::General)?;
    let num = num_arg(args, 2)?;
    // Parsed once; its errors are reported below, after the number's, as before the fast
    // path: whatever the fast path declines, errors included, the general path answers.
    let network = str_arg(args, 0).map(parse_cidr);
    if let (Some(n), Ok(Ok(net))) = (num.to_i64(), &network)
        && let Some(v) = subnet_v4(net, new_bits, n)
    {
        return Ok(v);
    }
    let net_num = whole_big(num).map_err(FuncError::General)?;
    let network = network?.map_err(|e| FuncError::General(invalid_cidr(e)))?;
    let subnet = subnet_big(&network, new_bits, &net_num)?;
    Ok(Value::string(net_string(&subnet)))
}

/// `cidrsubnet` of an IPv4 network whose new prefix fits and whose subnet number is in
/// range, in 32-bit arithmetic (the usual call: `cidrsubnet("10.0.0.0/8", 16, i)`); `None`
/// for anything else (IPv6, an error to report, a negative or huge number), which the
/// general path answers. Tested equal to it.
fn subnet_v4(net: &IpNet, new_bits: i64, num: i64) -> Option<Value> {
    let ip = to4(&net.ip)?;
    let mask = to4(&net.mask).filter(|_| net.mask.len() == 4)?;
    let parent = simple_mask_length(mask);
    if !(0..=32).contains(&parent) || !(0..=32).contains(&new_bits) {
        return None;
    }
    let prefix = parent + new_bits;
    if prefix > 32 || num < 0 || num >= 1i64 << new_bits {
        return None;
    }
    let base = u32::from_be_bytes(ip.try_into().ok()?);
    let host_bits = 32 - prefix;
    let sub = if host_bits == 32 {
        0
    } else {
        (num as u32) << host_bits
    };
    let addr = (base | sub).to_be_bytes();
    // Written in the builtins' reused buffer: the value is made from it at once.
    super::string_in_buffer(|out| {
        push_cidr4(out, &addr, prefix as u8);
        Ok::<(), std::convert::Infallible>(())
    })
    .ok()
}

fn cidrsubnets(args: &[Value]) -> Result<Value, FuncError> {
    let network = parse_cidr(str_arg(args, 0)?).map_err(|e| FuncError::arg(0, invalid_cidr(e)))?;
    let (start_len, _) = mask_size(&network.mask);
    let lengths = &args[1..];
    if lengths.is_empty() {
        return Ok(Value::list(Type::String, Vec::new()));
    }
    let first = whole_int(num_arg(args, 1)?).map_err(|e| FuncError::arg(1, e))?;
    let first_len = first.wrapping_add(start_len);
    let mut current = previous_subnet(&network, first_len);
    let addr_bits = network.ip.len() as i64 * 8;
    // One subnet for each length: the elements charged before the list is made, each
    // subnet's text (at most 43 bytes, made on its own) before it is added.
    crate::value::meter::elements("cidrsubnets", lengths.len() as u64)?;
    let mut out = Vec::with_capacity(lengths.len());
    for i in 0..lengths.len() {
        let mut length = whole_int(num_arg(args, i + 1)?).map_err(|e| FuncError::arg(i + 1, e))?;
        if length < 1 {
            return Err(FuncError::arg(
                i + 1,
                "must extend prefix by at least one bit",
            ));
        }
        if length > 32 {
            return Err(FuncError::arg(
                i + 1,
                "may not extend prefix by more than 32 bits",
            ));
        }
        length += start_len;
        if length > addr_bits {
            let protocol = match addr_bits {
                32 => "IPv4",
                128 => "IPv6",
                _ => "IP",
            };
            return Err(FuncError::arg(
                i + 1,
                format!(
                    "would extend prefix to {length} bits, which is too long for an {protocol} address"
                ),
            ));
        }
        let (next, rollover) = next_subnet(&current, length)?;
        if rollover || !net_contains(&network, &next.ip) {
            return Err(FuncError::arg(
                i + 1,
                format!(
                    "not enough remaining address space for a subnet with a prefix of {} bits after {}",
                    length,
                    net_string(&current)
                ),
            ));
        }
        current = next;
        let text = net_string(&current);
        crate::value::meter::bytes("cidrsubnets", text.len() as u64)?;
        crate::value::meter::tick("cidrsubnets")?;
        out.push(Value::string(text));
    }
    Ok(Value::list(Type::String, out))
}

#[cfg(test)]
mod tests {
    #[test]
    fn small_numbers_insert_as_big_integers_do() {
        let ips: [&[u8]; 4] = [
            &[10, 0, 0, 0],
            &[192, 168, 255, 17],
            &[0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0],
            &[0xff; 16],
        ];
        let nums = [
            0u128,
            1,
            2,
            255,
            256,
            65_535,
            1 << 20,
            (1 << 31) + 7,
            u64::MAX as u128,
        ]
        .map(BigInt::from);
        let mut fast = 0;
        for ip in ips {
            let total = 8 * ip.len() as i64;
            for num in &nums {
                for shift in [0u64, 1, 8, 12, 16, 24, 31, 32, 64, 100, 127, 128, 200] {
                    let big = insert_big_num(ip, num, shift, total).ok();
                    if let Some(small) = insert_small_num(ip, num, shift, total) {
                        fast += 1;
                        assert_eq!(Some(small), big, "{ip:?} {num} << {shift}");
                    }
                }
            }
        }
        assert!(fast > 100, "{fast}");
    }

    use super::*;
    use crate::builtins::test_util::{n, s, strs};

    fn ok(f: fn(&[Value]) -> Result<Value, FuncError>, args: &[Value]) -> String {
        f(args).unwrap().as_str().unwrap().to_string()
    }
    fn general(m: &str) -> FuncError {
        FuncError::general(m)
    }

    #[test]
    fn host() {
        assert_eq!(ok(cidrhost, &[s("10.0.0.0/8"), n(5)]), "10.0.0.5");
        assert_eq!(ok(cidrhost, &[s("10.12.112.0/20"), n(16)]), "10.12.112.16");
        assert_eq!(ok(cidrhost, &[s("10.12.112.0/20"), n(268)]), "10.12.113.12");
        assert_eq!(ok(cidrhost, &[s("10.0.0.0/24"), n(-1)]), "10.0.0.255");
        assert_eq!(ok(cidrhost, &[s("10.0.0.0/24"), n(0)]), "10.0.0.0");
        assert_eq!(ok(cidrhost, &[s("10.0.0.0/32"), n(0)]), "10.0.0.0");
        assert_eq!(
            cidrhost(&[s("10.0.0.0/24"), n(256)]).unwrap_err(),
            general("prefix of 24 does not accommodate a host numbered 256")
        );
        assert_eq!(
            cidrhost(&[s("10.0.0.0/24"), n(-257)]).unwrap_err(),
            general("prefix of 24 does not accommodate a host numbered -1")
        );
        assert_eq!(
            ok(cidrhost, &[s("fd00:fd12:3456:7890::/56"), n(16)]),
            "fd00:fd12:3456:7800::10"
        );
        assert_eq!(
            ok(cidrhost, &[s("fd00::/64"), n(-1)]),
            "fd00::ffff:ffff:ffff:ffff"
        );
        assert_eq!(
            cidrhost(&[s("not-a-cidr"), n(1)]).unwrap_err(),
            general("invalid CIDR expression: invalid CIDR address: not-a-cidr")
        );
        assert_eq!(
            cidrhost(&[s("10.0.0.0"), n(1)]).unwrap_err(),
            general("invalid CIDR expression: invalid CIDR address: 10.0.0.0")
        );
        assert_eq!(ok(cidrhost, &[s("010.0.0.0/8"), n(1)]), "10.0.0.1");
        assert_eq!(
            cidrhost(&[
                s("10.0.0.0/8"),
                Value::Number(Number::from_f64(1.5).unwrap())
            ])
            .unwrap_err(),
            general("value must be a whole number")
        );
        assert_eq!(
            cidrhost(&[s(""), n(1)]).unwrap_err(),
            general("invalid CIDR expression: invalid CIDR address: ")
        );
        assert_eq!(
            cidrhost(&[s("10.0.0.0/8"), n(i64::MAX)]).unwrap_err(),
            general("prefix of 8 does not accommodate a host numbered 9223372036854775807")
        );
        // A number past 2^64 wraps in go-cidr's check; the address overflows: Go panics.
        assert!(matches!(
            cidrhost(&[
                s("10.0.0.0/8"),
                Value::Number(Number::from_f64(18446744073709551616.0).unwrap())
            ]),
            Err(FuncError::General(m)) if m.starts_with("panic in function implementation")
        ));
    }

    #[test]
    fn netmask() {
        assert_eq!(ok(cidrnetmask, &[s("10.0.0.0/8")]), "255.0.0.0");
        assert_eq!(ok(cidrnetmask, &[s("172.16.0.0/12")]), "255.240.0.0");
        assert_eq!(ok(cidrnetmask, &[s("0.0.0.0/0")]), "0.0.0.0");
        assert_eq!(ok(cidrnetmask, &[s("192.168.1.5/32")]), "255.255.255.255");
        assert_eq!(ok(cidrnetmask, &[s("10.1.2.3/27")]), "255.255.255.224");
        assert_eq!(
            cidrnetmask(&[s("fd00::/64")]).unwrap_err(),
            general("IPv6 addresses cannot have a netmask: fd00::/64")
        );
        assert_eq!(
            cidrnetmask(&[s("10.0.0.0/33")]).unwrap_err(),
            general("invalid CIDR expression: invalid CIDR address: 10.0.0.0/33")
        );
        assert_eq!(ok(cidrnetmask, &[s("10.0.0.0/08")]), "255.0.0.0");
        // An IPv4-mapped IPv6 prefix prints as IPv4 with a 16-byte mask.
        assert_eq!(
            ok(cidrnetmask, &[s("::ffff:10.0.0.0/104")]),
            "ffff:ffff:ffff:ffff:ffff:ffff:ff00:0"
        );
    }

    #[test]
    fn subnet() {
        assert_eq!(
            ok(cidrsubnet, &[s("10.0.0.0/16"), n(8), n(2)]),
            "10.0.2.0/24"
        );
        assert_eq!(
            ok(cidrsubnet, &[s("172.16.0.0/12"), n(4), n(2)]),
            "172.18.0.0/16"
        );
        assert_eq!(
            ok(cidrsubnet, &[s("10.1.2.0/24"), n(4), n(15)]),
            "10.1.2.240/28"
        );
        assert_eq!(
            ok(cidrsubnet, &[s("10.0.0.0/16"), n(0), n(0)]),
            "10.0.0.0/16"
        );
        assert_eq!(
            ok(cidrsubnet, &[s("10.0.0.5/24"), n(8), n(1)]),
            "10.0.0.1/32"
        );
        assert_eq!(
            ok(cidrsubnet, &[s("fd00:fd12:3456:7890::/56"), n(16), n(162)]),
            "fd00:fd12:3456:7800:a200::/72"
        );
        assert_eq!(
            ok(cidrsubnet, &[s("fd00::/48"), n(16), n(1)]),
            "fd00:0:0:1::/64"
        );
        assert_eq!(
            cidrsubnet(&[s("10.0.0.0/16"), n(8), n(256)]).unwrap_err(),
            general("prefix extension of 8 does not accommodate a subnet numbered 256")
        );
        assert_eq!(
            cidrsubnet(&[s("10.0.0.0/30"), n(3), n(0)]).unwrap_err(),
            general("insufficient address space to extend prefix of 30 by 3")
        );
        assert_eq!(
            ok(cidrsubnet, &[s("10.0.0.0/16"), n(-1), n(0)]),
            "10.0.0.0/15"
        );
        assert_eq!(
            ok(cidrsubnet, &[s("10.0.0.0/16"), n(8), n(-1)]),
            "0.0.1.0/24"
        );
        assert_eq!(ok(cidrsubnet, &[s("10.0.0.0/8"), n(-9), n(0)]), "<nil>");
        assert_eq!(
            cidrsubnet(&[
                s("10.0.0.0/8"),
                Value::Number(Number::from_f64(0.5).unwrap()),
                n(0)
            ])
            .unwrap_err(),
            general(
                "value must be a whole number, between -9223372036854775808 and 9223372036854775807"
            )
        );
        assert_eq!(
            ok(cidrsubnet, &[s("::/0"), n(64), n(i64::MAX)]),
            "7fff:ffff:ffff:ffff::/64"
        );
    }

    /// The remembered network is the one parsing gives, whatever came before (the same
    /// text, another, an error, a text too long to remember).
    #[test]
    fn a_remembered_network_is_the_parsed_one() {
        let texts = [
            "10.0.0.0/8",
            "10.0.0.0/8",
            "10.0.0.1/8",
            "192.168.1.0/24",
            "10.0.0.0/8",
            "10.0.0.0/33",
            "10.0.0.0/33",
            "fd00::/8",
            "fd00::/8",
            "2001:0db8:0000:0000:0000:0000:0000:0000/32",
            "2001:0db8:0000:0000:0000:0000:0000:0000:0000/32",
            "not a cidr",
            "10.0.0.0/8",
        ];
        for t in texts.iter().chain(texts.iter().rev()) {
            assert_eq!(
                format!("{:?}", parse_cidr(t)),
                format!("{:?}", parse_cidr_text(t)),
                "{t}"
            );
        }
    }

    /// The IPv4 fast path answers exactly as the general path over networks (prefixes 0
    /// to 32, host bits set, IPv4-mapped IPv6, IPv6), extensions -2 to 34 and subnet
    /// numbers around every boundary, errors included.
    #[test]
    fn cidrsubnet_v4_fast_path_is_the_general_path() {
        let general_path = |args: &[Value]| -> Result<Value, FuncError> {
            let new_bits = whole_int(num_arg(args, 1)?).map_err(FuncError::General)?;
            let net_num = whole_big(num_arg(args, 2)?).map_err(FuncError::General)?;
            let network =
                parse_cidr(str_arg(args, 0)?).map_err(|e| FuncError::General(invalid_cidr(e)))?;
            let subnet = subnet_big(&network, new_bits, &net_num)?;
            Ok(Value::string(net_string(&subnet)))
        };
        let nets = [
            "10.0.0.0/8",
            "10.1.2.3/8",
            "0.0.0.0/0",
            "255.255.255.255/32",
            "192.168.1.0/24",
            "172.16.0.0/12",
            "10.0.0.0/31",
            "1.2.3.4/30",
            "::ffff:10.0.0.0/104",
            "fd00::/48",
            "bad",
            "10.0.0.0/33",
        ];
        let nums: [i64; 13] = [
            -1,
            0,
            1,
            2,
            3,
            255,
            256,
            65_535,
            65_536,
            (1 << 31) - 1,
            1 << 31,
            (1 << 32) - 1,
            i64::MAX,
        ];
        let mut fast = 0;
        for net in nets {
            for bits in -2..=34i64 {
                for &num in &nums {
                    let args = [s(net), n(bits), n(num)];
                    let got = cidrsubnet(&args);
                    let want = general_path(&args);
                    match (&got, &want) {
                        (Ok(a), Ok(b)) => assert!(a.raw_equals(b), "{net} {bits} {num}"),
                        (Err(a), Err(b)) => assert_eq!(a, b, "{net} {bits} {num}"),
                        _ => panic!("{net} {bits} {num}: {got:?} vs {want:?}"),
                    }
                    if let (Ok(nw), true) = (parse_cidr(net), got.is_ok()) {
                        fast += usize::from(subnet_v4(&nw, bits, num).is_some());
                    }
                }
            }
        }
        assert!(fast > 500, "the fast path answered only {fast} calls");
    }

    #[test]
    fn subnets() {
        assert_eq!(
            strs(&cidrsubnets(&[s("10.1.0.0/16"), n(4), n(4), n(8), n(4)]).unwrap()),
            [
                "10.1.0.0/20",
                "10.1.16.0/20",
                "10.1.32.0/24",
                "10.1.48.0/20"
            ]
        );
        assert_eq!(
            strs(
                &cidrsubnets(&[s("fd00:fd12:3456:7890::/56"), n(16), n(16), n(16), n(32)]).unwrap()
            ),
            [
                "fd00:fd12:3456:7800::/72",
                "fd00:fd12:3456:7800:100::/72",
                "fd00:fd12:3456:7800:200::/72",
                "fd00:fd12:3456:7800:300::/88"
            ]
        );
        assert_eq!(
            strs(&cidrsubnets(&[s("10.0.0.0/8"), n(8)]).unwrap()),
            ["10.0.0.0/16"]
        );
        let empty = cidrsubnets(&[s("10.0.0.0/24")]).unwrap();
        assert_eq!(empty.type_of(), Type::list(Type::String));
        assert!(strs(&empty).is_empty());
        assert_eq!(
            cidrsubnets(&[s("10.0.0.0/30"), n(1), n(1), n(1)]).unwrap_err(),
            FuncError::arg(
                3,
                "not enough remaining address space for a subnet with a prefix of 31 bits after 10.0.0.2/31"
            )
        );
        assert_eq!(
            cidrsubnets(&[s("10.0.0.0/16"), n(0)]).unwrap_err(),
            FuncError::arg(1, "must extend prefix by at least one bit")
        );
        assert_eq!(
            strs(&cidrsubnets(&[s("10.0.0.0/8"), n(16), n(8)]).unwrap()),
            ["10.0.0.0/24", "10.1.0.0/16"]
        );
        assert_eq!(
            cidrsubnets(&[s("10.0.0.0/8"), n(33)]).unwrap_err(),
            FuncError::arg(1, "may not extend prefix by more than 32 bits")
        );
        assert_eq!(
            cidrsubnets(&[s("10.0.0.0/30"), n(3)]).unwrap_err(),
            FuncError::arg(
                1,
                "would extend prefix to 33 bits, which is too long for an IPv4 address"
            )
        );
        assert_eq!(
            cidrsubnets(&[s("bad"), n(3)]).unwrap_err(),
            FuncError::arg(0, "invalid CIDR expression: invalid CIDR address: bad")
        );
        // go-cidr sees 0.0.0.0 as a roll-over.
        assert_eq!(
            cidrsubnets(&[s("0.0.0.0/8"), n(8)]).unwrap_err(),
            FuncError::arg(
                1,
                "not enough remaining address space for a subnet with a prefix of 16 bits after 255.255.0.0/16"
            )
        );
    }

    #[test]
    fn ipv6_printing() {
        let p = |t: &str| ip_string(&parse_ipv6(t.as_bytes()).unwrap());
        assert_eq!(p("2001:db8:0:0:1:0:0:1"), "2001:db8::1:0:0:1");
        assert_eq!(p("0:0:0:0:0:0:0:0"), "::");
        assert_eq!(p("1:0:2:3:4:5:6:7"), "1:0:2:3:4:5:6:7");
        assert_eq!(p("::ffff:1.2.3.4"), "1.2.3.4");
        assert!(parse_ipv6(b"1::2::3").is_none());
        assert!(parse_ipv6(b"12345::").is_none());
    }
}
