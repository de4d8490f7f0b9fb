//! Go's and hcl's text conventions every layer shares: strconv quoting, lowercase hex, hcl's
//! "Did you mean" rule, base64 as Go decodes it, Unicode 15.0 as Go and go-textseg see it,
//! and the crate's string type. A leaf: it imports nothing of the crate.

pub mod base64;
pub mod hex;
pub mod quote;
mod str;
pub mod suggest;
pub mod unicode;
mod unicode15;
pub mod words;

pub use self::str::Str;

/// The unit tests' generator of cases (xorshift64): a seed gives the same cases on every
/// run, in every layer's tests.
#[cfg(test)]
pub(crate) struct Xorshift(pub u64);

#[cfg(test)]
impl Xorshift {
    /// The next 64 bits.
    pub(crate) fn word(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        self.0 = x;
        x
    }

    /// A number below `n`.
    pub(crate) fn below(&mut self, n: u64) -> u64 {
        self.word() % n
    }
}
