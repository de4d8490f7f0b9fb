//! Go's and hcl's text conventions every layer shares: strconv quoting, hcl's
//! "Did you mean" rule, base64 as Go decodes it. A leaf: it imports nothing of the crate.

pub mod base64;
pub mod quote;
pub mod suggest;
