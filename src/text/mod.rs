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
