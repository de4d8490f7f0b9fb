//! Errors the IR finds without a request that need more than a fixture (the fixtures are
//! tests/errors/lower/, run by error_fixtures.rs): the shape of what loads, several files,
//! static types.
//! Load-time errors are what Go refuses to load (`compile_files` fails); deferred ones
//! compile, are kept where Go raises them, and `analyze` reports them.

use fn_hcl::lower::ir::{Item, Program, compile_files};

fn files(src: &str) -> Vec<(String, String)> {
    vec![("main.hcl".to_string(), src.to_string())]
}

/// A program that loads, and what `analyze` reports for it.
fn loaded(src: &str) -> (Program, Vec<String>) {
    let p = compile_files(&files(src)).unwrap_or_else(|e| panic!("load failed: {}", e.message()));
    let d = fn_hcl::cli::analyze::analyze(&p)
        .iter()
        .map(|d| d.plain(&p.sources))
        .collect();
    (p, d)
}

fn analyzed(src: &str) -> Vec<String> {
    loaded(src).1
}

// ----- schema ---------------------------------------------------------------------

#[test]
fn unknown_attribute_is_deferred() {
    let (p, d) = loaded("resource x {\n  body  = {}\n  count = 2\n}\n");
    assert!(matches!(p.root.items[0], Item::Fatal(_)));
    assert_eq!(
        d,
        ["main.hcl:3,3-8: Unsupported argument; An argument named \"count\" is not expected here."]
    );
}

#[test]
fn unknown_attribute_in_nested_group_is_deferred() {
    let (p, d) = loaded("group {\n  resource x {\n    body = {}\n    lable = 1\n  }\n}\n");
    let Item::Group(g) = &p.root.items[0] else {
        panic!("group expected");
    };
    assert!(matches!(g.items[0], Item::Fatal(_)));
    assert_eq!(
        d,
        [
            "main.hcl:4,5-10: Unsupported argument; An argument named \"lable\" is not expected here."
        ]
    );
}

#[test]
fn invalid_composite_label() {
    let (p, d) = loaded("composite state {\n  body = { a = 1 }\n}\n");
    assert!(matches!(p.root.items[0], Item::Composite(_)));
    assert_eq!(
        d,
        [
            "main.hcl:1,11-16: invalid composite label: state; A composite block is either `composite status` or `composite connection`."
        ]
    );
}

#[test]
fn two_templates() {
    let (p, d) = loaded(
        "resources xs {\n  for_each = [1]\n  template {\n    body = {}\n  }\n  template {\n    body = {}\n  }\n}\n",
    );
    assert!(matches!(p.root.items[0], Item::Fatal(_)));
    assert_eq!(
        d,
        ["main.hcl:6,3-11: multiple template blocks for resource collection xs; "]
    );
}

// ----- scopes ---------------------------------------------------------------------

#[test]
fn duplicate_locals_across_blocks_and_files() {
    assert_eq!(
        analyzed("locals {\n  a = 1\n}\nlocals {\n  a = 2\n}\n"),
        ["main.hcl:5,3-8: local \"a\": duplicate local declaration; "]
    );
    let two = vec![
        ("a.hcl".to_string(), "locals {\n  a = 1\n}\n".to_string()),
        ("b.hcl".to_string(), "locals {\n  a = 2\n}\n".to_string()),
    ];
    let (d, sm) = fn_hcl::cli::analyze::diagnostics(&two);
    let d: Vec<String> = d.iter().map(|x| x.plain(&sm)).collect();
    assert_eq!(
        d,
        ["b.hcl:2,3-8: local \"a\": duplicate local declaration; "]
    );
}

#[test]
fn locals_across_files_are_one_scope_in_dependency_order() {
    let two = vec![
        (
            "a.hcl".to_string(),
            "locals {\n  b = a + 1\n}\n".to_string(),
        ),
        ("b.hcl".to_string(), "locals {\n  a = 1\n}\n".to_string()),
    ];
    let p = compile_files(&two).expect("loads");
    let names: Vec<&str> = p.root.locals.defs.iter().map(|d| &*d.name).collect();
    assert_eq!(names, ["a", "b"]);
    assert!(fn_hcl::cli::analyze::analyze(&p).is_empty());
}

#[test]
fn unknown_name_in_a_local_with_hint() {
    // Go's fatal text has no hint; analyze adds one.
    let (p, d) = loaded("locals {\n  params = {}\n  x      = parms.a\n}\n");
    assert_eq!(
        p.root.locals.error.as_ref().map(|e| e.plain(&p.sources)),
        Some("main.hcl:3,12-19: reference to non-existent variable; parms".to_string())
    );
    assert_eq!(
        d,
        ["main.hcl:3,12-19: reference to non-existent variable; parms. Did you mean \"params\"?"]
    );
}

#[test]
fn uses_of_a_broken_scope_are_not_reported_again() {
    // The duplicate makes the scope fatal; `a` and `b` still count as declared.
    assert_eq!(
        analyzed(
            "locals {\n  a = 1\n  b = a\n}\nlocals {\n  a = 2\n}\nresource x {\n  body = { v = b }\n}\n"
        ),
        ["main.hcl:6,3-8: local \"a\": duplicate local declaration; "]
    );
}

#[test]
fn each_and_self_where_they_exist() {
    let src = "resources xs {\n  for_each = [1]\n  name = \"${self.basename}-${each.key}\"\n  template {\n    locals {\n      v = each.value\n    }\n    body = { n = self.name, v = v, r = self.resource }\n  }\n}\nresource y {\n  body = { n = self.name }\n}\n";
    assert_eq!(analyzed(src), Vec::<String>::new());
}

// ----- invoke ---------------------------------------------------------------------

#[test]
fn invoke_with_bad_arguments() {
    let src = "function pair {\n  arg left {}\n  arg right { default = \"r\" }\n  body = left\n}\nresource x {\n  body = {\n    a = invoke(\"pair\", { right = 1 })\n    b = invoke(\"pair\", { left = 1, middle = 2 })\n    c = invoke(\"pair\", [1])\n    d = invoke(\"pair\", { left = 1 })\n  }\n}\n";
    assert_eq!(
        analyzed(src),
        [
            "main.hcl:8,9-16: Error in function call; Call to function \"invoke\" failed: function: pair, argument \"left\" expected but not supplied.",
            "main.hcl:9,9-16: Error in function call; Call to function \"invoke\" failed: function: pair, invalid argument \"middle\".",
            "main.hcl:10,9-16: Error in function call; Call to function \"invoke\" failed: arguments to user function 'pair' is not an object, found tuple [number].",
        ]
    );
}

// ----- static types ---------------------------------------------------------------

#[test]
fn certain_type_errors_warn() {
    let src = "resource x {\n  condition = \"yes\"\n  body = { a = upper([1]), b = \"a\" * 2 }\n  ready {\n    value = 1\n  }\n}\nresources xs {\n  for_each = true\n  template {\n    body = \"s\"\n  }\n}\ncomposite status {\n  body = [1]\n}\n";
    assert_eq!(
        analyzed(src),
        [
            "main.hcl:2,15-20: Invalid condition; The condition must be a bool, but this expression is always string.",
            "main.hcl:3,22-25: Invalid function argument; Invalid value for \"str\" parameter: string required, not tuple [number].",
            "main.hcl:3,32-35: Invalid operand; Unsuitable value for left operand: a number is required.",
            "main.hcl:5,13-14: Invalid ready value; The ready value must be a string, but this expression is always number.",
            "main.hcl:9,14-18: Invalid for_each; The for_each must be a collection, but this expression is always bool.",
            "main.hcl:11,12-15: Invalid body; The body must be an object, but this expression is always string.",
            "main.hcl:15,10-13: Invalid body; The body must be an object, but this expression is always tuple [number].",
        ]
    );
    // Warnings only: the program still loads and analyze has no errors.
    let p = compile_files(&files(src)).expect("loads");
    assert!(
        !fn_hcl::cli::analyze::analyze(&p)
            .iter()
            .any(|d| d.is_error())
    );
}

#[test]
fn types_flow_through_locals() {
    let src = "locals {\n  xs = [1, 2]\n  n  = length(xs)\n  s  = \"${n}\"\n  o  = { a = s }\n}\nresource x {\n  body = { v = upper(xs), w = o.b }\n}\n";
    assert_eq!(
        analyzed(src),
        [
            "main.hcl:8,22-24: Invalid function argument; Invalid value for \"str\" parameter: string required, not tuple [number, number].",
            "main.hcl:8,33-34: Unsupported attribute; This object does not have an attribute named \"b\". Did you mean \"a\"?",
        ]
    );
}

#[test]
fn request_data_is_never_a_certain_error() {
    let src = "resource x {\n  condition = req.composite.spec.enabled\n  body = req.composite.spec.template\n  ready {\n    value = req.composite.spec.ready\n  }\n}\n";
    assert_eq!(analyzed(src), Vec::<String>::new());
}

#[test]
fn analyze_run_reports_and_summarizes() {
    let (out, errors) =
        fn_hcl::cli::analyze::run(&files("resource x {\n  body = { n = nmae }\n}\n"));
    assert!(errors);
    assert!(out.contains("error: Unknown variable"), "{out}");
    assert!(out.contains("main.hcl:2,16-20"), "{out}");
    assert!(out.ends_with("1 error, 0 warnings\n"), "{out}");
    let (out, errors) = fn_hcl::cli::analyze::run(&files("resource x {\n  body = {}\n}\n"));
    assert!(!errors);
    assert_eq!(out, "no problems found\n");
}

#[test]
fn requirement_selectors_of_certain_wrong_types_warn() {
    let src = "requirement cfg {\n  select {\n    apiVersion = 1\n    kind       = \"ConfigMap\"\n    matchLabels = [\"a\"]\n  }\n}\n";
    assert_eq!(
        analyzed(src),
        [
            "main.hcl:3,18-19: Invalid selector apiVersion; The selector apiVersion must be a string, but this expression is always number.",
            "main.hcl:5,19-24: Invalid selector matchLabels; The selector matchLabels must be an object of strings, but this expression is always tuple [string].",
        ]
    );
}

#[test]
fn invoke_has_the_type_of_the_function_body() {
    let src = "function greet {\n  arg name {}\n  body = \"hello ${name}\"\n}\nresource x {\n  condition = invoke(\"greet\", { name = \"a\" })\n  body = {}\n}\n";
    assert_eq!(
        analyzed(src),
        [
            "main.hcl:6,15-46: Invalid condition; The condition must be a bool, but this expression is always string."
        ]
    );
}

#[test]
fn self_and_each_have_known_attributes() {
    let src = "resource x {\n  body = { n = self.nmae }\n}\nresources xs {\n  for_each = [1]\n  name = \"${self.basename}-${each.kye}\"\n  template {\n    body = { n = self.name, b = self.basename, r = self.resources }\n  }\n}\n";
    assert_eq!(
        analyzed(src),
        [
            "main.hcl:2,21-25: Unsupported attribute; This object does not have an attribute named \"nmae\". Did you mean \"name\"?",
            "main.hcl:6,35-38: Unsupported attribute; This object does not have an attribute named \"kye\". Did you mean \"key\"?",
        ]
    );
}

#[test]
fn collection_name_of_a_certain_wrong_type_warns() {
    let src = "resources xs {\n  for_each = [1]\n  name = 1\n  template {\n    body = {}\n  }\n}\n";
    assert_eq!(
        analyzed(src),
        [
            "main.hcl:3,10-11: Invalid collection name; The collection name must be a string, but this expression is always number."
        ]
    );
}
