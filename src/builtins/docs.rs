//! One-line descriptions of the functions, for editors (hover, completion). The texts
//! are the table of the reference documentation's "Built-in functions" page.

/// A one-line description of a function (built-ins, `try`, `can` and `invoke`).
pub fn description(name: &str) -> Option<&'static str> {
    DESCRIPTIONS
        .binary_search_by(|(n, _)| n.cmp(&name))
        .ok()
        .map(|i| DESCRIPTIONS[i].1)
}

/// Sorted by name.
const DESCRIPTIONS: &[(&str, &str)] = &[
    ("abs", "Absolute value"),
    ("alltrue", "All elements are true"),
    ("anytrue", "Any element is true"),
    ("base64decode", "Decode base64"),
    ("base64encode", "Encode to base64"),
    ("base64gzip", "Gzip then base64 encode"),
    ("base64sha256", "Base64-encoded SHA256"),
    ("base64sha512", "Base64-encoded SHA512"),
    ("can", "Test if expression evaluates without error"),
    ("ceil", "Round up to nearest integer"),
    ("chomp", "Remove trailing newlines"),
    ("chunklist", "Split list into chunks"),
    ("cidrhost", "Calculate host IP"),
    ("cidrnetmask", "Network mask"),
    ("cidrsubnet", "Calculate subnet"),
    ("cidrsubnets", "Calculate multiple subnets"),
    ("coalesce", "First non-null, non-empty value"),
    ("coalescelist", "First non-empty list"),
    ("compact", "Remove empty strings"),
    ("concat", "Concatenate lists"),
    ("contains", "Check membership"),
    ("csvdecode", "Parse CSV"),
    ("distinct", "Remove duplicates"),
    ("element", "Get element by index (wraps)"),
    ("endswith", "Check suffix"),
    ("flatten", "Flatten nested lists"),
    ("floor", "Round down to nearest integer"),
    ("format", "String formatting (sprintf-style)"),
    ("formatdate", "Format a timestamp"),
    ("formatlist", "Format each element"),
    ("indent", "Indent all lines"),
    ("index", "Find index of value"),
    (
        "invoke",
        "Call a user function block with an object of arguments",
    ),
    ("join", "Join list elements"),
    ("jsondecode", "Parse JSON"),
    ("jsonencode", "Encode to JSON"),
    ("keys", "Map keys"),
    ("length", "Length of string, list, or map"),
    ("list", "Create a list"),
    ("log", "Logarithm"),
    ("lookup", "Safe map lookup"),
    ("lower", "Lowercase"),
    ("map", "Create a map"),
    ("matchkeys", "Filter by matching keys"),
    ("max", "Maximum value"),
    ("md5", "MD5 hash"),
    ("merge", "Merge maps"),
    ("min", "Minimum value"),
    ("nonsensitive", "Remove sensitive marking"),
    ("one", "Extract single element or null"),
    ("parseint", "Parse integer from string"),
    ("pow", "Exponentiation"),
    ("range", "Generate number sequence"),
    ("regex", "Regex match"),
    ("regexall", "All regex matches"),
    ("replace", "String replacement"),
    ("reverse", "Reverse list"),
    ("rsadecrypt", "Decrypt RSA-encrypted ciphertext"),
    ("sensitive", "Mark as sensitive"),
    ("setintersection", "Set intersection"),
    ("setproduct", "Cartesian product"),
    ("setsubtract", "Set difference"),
    ("setunion", "Set union"),
    ("sha1", "SHA1 hash"),
    ("sha256", "SHA256 hash"),
    ("sha512", "SHA512 hash"),
    ("signum", "Sign of number (-1, 0, 1)"),
    ("slice", "List slice"),
    ("sort", "Sort strings lexicographically"),
    ("split", "Split string"),
    ("startswith", "Check prefix"),
    ("strcontains", "Check substring"),
    ("strrev", "Reverse string"),
    ("substr", "Substring"),
    ("sum", "Sum numbers"),
    ("textdecodebase64", "Decode base64 with encoding"),
    ("textencodebase64", "Encode with encoding then base64"),
    ("timeadd", "Add a duration to a timestamp"),
    ("timecmp", "Compare two timestamps"),
    ("title", "Title case"),
    ("tobool", "Convert to bool"),
    ("tolist", "Convert to list"),
    ("tomap", "Convert to map"),
    ("tonumber", "Convert to number"),
    ("toset", "Convert to set"),
    ("tostring", "Convert to string"),
    ("transpose", "Transpose map of lists"),
    ("trim", "Trim characters"),
    ("trimprefix", "Trim prefix"),
    ("trimspace", "Trim whitespace"),
    ("trimsuffix", "Trim suffix"),
    ("try", "First expression that doesn't error"),
    ("type", "Get type of value"),
    ("upper", "Uppercase"),
    ("urlencode", "URL encode"),
    ("values", "Map values"),
    ("yamldecode", "Parse YAML"),
    ("yamlencode", "Encode to YAML"),
    ("zipmap", "Create map from key/value lists"),
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_function_has_a_description() {
        assert!(DESCRIPTIONS.windows(2).all(|w| w[0].0 < w[1].0), "sorted");
        for f in crate::builtins::all() {
            assert!(
                description(f.name).is_some(),
                "{} has no description",
                f.name
            );
        }
        for n in ["try", "can", "invoke"] {
            assert!(description(n).is_some(), "{n}");
        }
        assert_eq!(description("upper"), Some("Uppercase"));
        assert_eq!(description("nope"), None);
    }
}
