//! Templates: joining interpolated parts, and the results of a `%{for}` directive.

use super::{Step, Stop, Vm, err_diag};
use crate::bytecode::code::{JoinSite, Piece, SiteId};
use crate::syntax::diag::Diagnostic;
use crate::value::convert::convert;
use crate::value::{Kind, Str, Type, Value};

impl Vm<'_> {
    /// [`crate::bytecode::code::Op::Template`]
    pub(super) fn op_template(&mut self, n: u32, site: u32, diags: &mut Vec<Diagnostic>) -> Step {
        let at = self.top_n(n as usize)?;
        let v = self.template(at, site, diags);
        Value::truncate(&mut self.stack, at);
        self.push(v?)
    }

    /// Join the template's literal text and the values of its other parts at
    /// `self.stack[at..]` (the caller removes them).
    fn template(
        &mut self,
        at: usize,
        site: u32,
        diags: &mut Vec<Diagnostic>,
    ) -> Result<Value, Stop> {
        let prog = self.program;
        let ts = prog.templates.get(site as usize);
        let ts = ts.ok_or(Stop::Fault(&"missing template site"))?;
        // Strings and integers joined into a short ASCII string (a name, a label,
        // `"${k}=${v}"`, `"${cidr}/${index}"`): tried first where the literal text allows
        // one (`TemplateSite::may_be_short`), in one pass that gives up at the first part
        // that cannot be in one, and made on the stack, without the scratch buffer's
        // copies, a `memcpy` call per part or the normalization check. Its charge is its
        // length, as the join's below: the same refusal (`AllocBytes`) when it is over
        // what is left, and no number in it has a long text to charge ahead.
        if ts.may_be_short
            && let Some(s) = short_template(&ts.parts, &self.stack[at..])
        {
            return self.alloc(0, s.len() as u64).map(|()| Value::String(s));
        }
        // The string parts are checked against the budget before they are joined (a
        // template of ten copies of a large string must not be built first), and long
        // number texts charged before their digits are made (the join's charge is for
        // the rest).
        let (mut parts, mut ahead) = (ts.literal_len, 0usize);
        for v in &self.stack[at..] {
            match v {
                Value::String(s) => parts = parts.saturating_add(s.len() as u64),
                // A long number (1e39000's 39,001 digits) is charged its bound before
                // its digits are made.
                Value::Number(n) => ahead = ahead.saturating_add(n.long_text_bound(b'f', -1)),
                _ => {}
            }
        }
        if parts > self.left().bytes {
            return Err(Stop::Limit(super::LimitKind::AllocBytes));
        }
        if ahead > 0 {
            self.alloc(0, ahead as u64)?;
        }
        let mut known = true;
        let mut out = std::mem::take(&mut self.text);
        out.clear();
        // Room for the string parts and a number's digits at once: the buffer, kept
        // across templates, grows by what the longest needs, not once per doubling.
        out.reserve(usize::try_from(parts).unwrap_or(0).saturating_add(24));
        let mut values = self.stack[at..].iter();
        for piece in &ts.parts {
            let (v, span) = match piece {
                Piece::Text(text) => {
                    out.push_str(text);
                    continue;
                }
                Piece::Value(span) => match values.next() {
                    Some(v) => (v, *span),
                    None => return Err(Stop::Fault(&"a template with fewer values than parts")),
                },
            };
            // Strings, numbers and bools are written as they are (a number or bool as
            // `convert` to string writes it); the rest takes hcl's checks below.
            match v {
                Value::String(s) => {
                    out.push_str(s);
                    continue;
                }
                Value::Number(n) => {
                    n.push_cty_string(&mut out);
                    continue;
                }
                Value::Bool(b) => {
                    out.push_str(if *b { "true" } else { "false" });
                    continue;
                }
                _ => {}
            }
            if v.is_null() {
                diags.push(
                    err_diag(
                        "Invalid template interpolation value",
                        "The expression result is null. Cannot include a null value in a string template.",
                        span,
                    )
                    .with_context(ts.whole)
                    .with_expression(span),
                );
                continue;
            }
            if v.is_unknown() {
                known = false;
                continue;
            }
            match convert(v, &Type::String) {
                Ok(Value::String(s)) => out.push_str(&s),
                Ok(_) => known = false,
                Err(e) => diags.push(
                    err_diag(
                        "Invalid template interpolation value",
                        format!("Cannot include the given value in a string template: {e}."),
                        span,
                    )
                    .with_context(ts.whole)
                    .with_expression(span),
                ),
            }
        }
        let r = if known {
            self.alloc(0, out.len().saturating_sub(ahead) as u64)
                .map(|()| Value::string(out.as_str()))
        } else {
            Ok(Value::Unknown(Type::String))
        };
        self.text = out;
        r
    }

    /// [`crate::bytecode::code::Op::TemplateJoin`]
    pub(super) fn op_template_join(
        &mut self,
        site: SiteId<JoinSite>,
        diags: &mut Vec<Diagnostic>,
    ) -> Step {
        let t = self.pop()?;
        let v = self.template_join(t, site, diags)?;
        self.push(v)
    }

    fn template_join(
        &mut self,
        t: Value,
        site: SiteId<JoinSite>,
        diags: &mut Vec<Diagnostic>,
    ) -> Result<Value, Stop> {
        let s = self.site(site)?;
        let items = match &t {
            Value::Tuple(seq) => &seq.items,
            _ => return Ok(Value::Unknown(Type::String)),
        };
        let mut strs: Vec<Str> = Vec::with_capacity(items.len());
        for v in items {
            if v.is_null() {
                diags.push(
                    err_diag(
                        "Invalid template interpolation value",
                        "An iteration result is null. Cannot include a null value in a string template.",
                        s.directive,
                    )
                    .with_expression(s.directive),
                );
                continue;
            }
            if v.kind() == Kind::Dynamic {
                return Ok(Value::Unknown(Type::String));
            }
            match convert(v, &Type::String) {
                Ok(Value::String(x)) => strs.push(x),
                Ok(_) => return Ok(Value::Unknown(Type::String)),
                Err(e) => diags.push(
                    err_diag(
                        "Invalid template interpolation value",
                        format!("Cannot include one of the interpolation results into the string template: {e}."),
                        s.directive,
                    )
                    .with_expression(s.directive),
                ),
            }
        }
        let len: usize = strs.iter().map(|s| s.len()).sum();
        self.alloc(0, len as u64)?;
        Ok(Value::string(strs.concat()))
    }
}

/// The template of these pieces and string values as an inline string, when it is ASCII
/// of at most [`Str::INLINE`] bytes (None otherwise, or if a value is not a string). The
/// bytes are joined in one number ([`Str::inline_bits`]).
fn short_template(pieces: &[Piece], values: &[Value]) -> Option<Str> {
    let (mut bits, mut len) = (0u128, 0usize);
    let mut values = values.iter();
    for piece in pieces {
        let (b, n) = match piece {
            Piece::Text(t) => t.inline_bits()?,
            Piece::Value(_) => match values.next() {
                Some(Value::String(s)) => s.inline_bits()?,
                Some(Value::Number(x)) => int_bits(x.exact_i64()?)?,
                _ => return None,
            },
        };
        if len + n > Str::INLINE {
            return None;
        }
        // `len` is at most 15: the shift stays inside the number, and `b` is zero past
        // its `n` bytes, so nothing is lost.
        bits |= b << (8 * len);
        len += n;
    }
    Str::inline_ascii(bits, len)
}

/// An integer's decimal text (cty's, `-` for a negative one) as [`Str::inline_bits`]
/// gives a string's: its bytes as one number, the first lowest, with the length; `None`
/// past [`Str::INLINE`] bytes.
#[inline]
fn int_bits(v: i64) -> Option<(u128, usize)> {
    let mut u = v.unsigned_abs();
    let sign = usize::from(v < 0);
    let len = sign + u.checked_ilog10().unwrap_or(0) as usize + 1;
    if len > Str::INLINE {
        return None;
    }
    // Digits put in place from the last one, in a register (bytes written to memory and
    // read back whole would stall, as `Str::inline_bits` says).
    let mut bits = if v < 0 { u128::from(b'-') } else { 0 };
    let mut at = len;
    loop {
        at -= 1;
        bits |= u128::from(b'0' + (u % 10) as u8) << (8 * at);
        u /= 10;
        if u == 0 {
            return Some((bits, len));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::syntax::span::Span;

    /// Every way of splitting short and long, ASCII and not, strings into text and
    /// values: the short join is the joined string whenever it gives one, and gives one
    /// exactly when that string is ASCII and inline.
    #[test]
    fn a_short_template_is_the_joined_string_or_none() {
        let samples = [
            "",
            "a",
            "ab",
            "svc-007",
            "abcdefg",
            "abcdefgh",
            "é",
            "x\u{301}",
            "日本",
            "abcdefghijklmno",
            "abcdefghijklmnop",
            "🙂",
        ];
        let at = Span::default();
        for a in samples {
            for b in samples {
                for c in samples {
                    for shape in 0..4u8 {
                        // Which of the three parts are literal text, which values.
                        let kinds = [shape & 1 != 0, shape & 2 != 0, shape == 3];
                        let mut pieces = Vec::new();
                        let mut values = Vec::new();
                        for (s, text) in [a, b, c].into_iter().zip(kinds) {
                            if text {
                                pieces.push(Piece::Text(Str::from(s)));
                            } else {
                                pieces.push(Piece::Value(at));
                                values.push(Value::String(Str::from(s)));
                            }
                        }
                        let joined = format!("{a}{b}{c}");
                        let want = (joined.is_ascii() && joined.len() <= Str::INLINE)
                            .then(|| Str::from(joined.as_str()));
                        assert_eq!(short_template(&pieces, &values), want, "{a:?} {b:?} {c:?}");
                    }
                }
            }
        }
        // Integers are joined as their cty text; other values are left to the general join.
        let pieces = [Piece::Text(Str::from("p")), Piece::Value(at)];
        for n in [
            0,
            7,
            -7,
            10,
            99,
            -100,
            12_345,
            99_999_999_999_999,
            -9_999_999_999_999,
            100_000_000_000_000,
        ] {
            let text = format!("p{n}");
            let want = (text.len() <= Str::INLINE).then(|| Str::from(text.as_str()));
            assert_eq!(short_template(&pieces, &[Value::int(n)]), want, "{n}");
        }
        for v in [i64::MIN, i64::MAX] {
            assert_eq!(int_bits(v), None);
        }
        let half = crate::value::number::Number::parse("0.5").expect("0.5 is a number");
        let other = [Value::Number(half), Value::Bool(true), Value::NULL];
        for v in other {
            assert_eq!(
                short_template(&pieces, std::slice::from_ref(&v)),
                None,
                "{v:?}"
            );
        }
    }
}
