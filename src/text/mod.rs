//! Text helpers every layer words its messages with: Go's quoting and hcl's
//! "Did you mean" rule. A leaf: it imports nothing of the crate.

pub mod quote;
pub mod suggest;
