//! Malformed inputs: each must fail with hcl's diagnostic text and range.

use fn_hcl::diag::plain_all;
use fn_hcl::parser::parse_file;
use fn_hcl::span::SourceMap;

fn errors(src: &str) -> String {
    let mut sm = SourceMap::new();
    let f = sm.add("main.hcl", src);
    match parse_file(&sm, f) {
        Ok(_) => "OK".to_string(),
        Err(d) => plain_all(&d, &sm),
    }
}

#[test]
fn conformance_parse_error_cases() {
    assert_eq!(
        errors("locals {\n  name = req.composite.metadata.name\n}\n\nresource cm {\n  body = {\n    apiVersion = \"v1\"\n    kind       = \"ConfigMap\"\n    metadata   = { name = name\n  }\n}\n"),
        "main.hcl:5,13-14: Unclosed configuration block; There is no closing brace for this block before the end of the file. This may be caused by incorrect brace nesting elsewhere in this file."
    );
    assert_eq!(
        errors("locals {\n  broken = \"unterminated\n}\n"),
        "main.hcl:2,25-3,1: Invalid multi-line string; Quoted strings may not be split over multiple lines. To produce a multi-line string, either use the \\n escape to represent a newline character or use the \"heredoc\" multi-line template syntax., and 2 other diagnostic(s)"
    );
}
