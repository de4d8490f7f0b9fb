//! Hostile input, one case per class (issue 13): each ends with a refusal that names the
//! limit and the construct, and what the evaluation charged shows that it stopped at its
//! budget (memory bounded) instead of after building the thing. No timing is asserted;
//! `benches/README.md` ("Hostile input") has the times.
//!
//! Classes: shared values that multiply (a chain of locals of ten copies; flatten,
//! jsonencode and a resource body over it; one shared local as the body of many
//! resources), a YAML "billion laughs" from the XR, strings built past the budget
//! (template, replace), a user-function call bomb, a front end fed a huge object and a
//! program over its token budget, and numbers beyond fn-hcl's range.

mod common;

use fn_hcl::bytecode::vm::{Limits, Usage};
use fn_hcl::cli::bench::{CountingAlloc, measure};
use fn_hcl::lower::ir::compile_txtar;
use fn_hcl::protocol::doc::parse_json;
use fn_hcl::protocol::protojson::request_from_json;
use fn_hcl::protocol::request::Request;
use fn_hcl::runtime::eval::{Inputs, Output, evaluate_metered};

// Counts what a case allocates ([`measure`]): a text refused before it is made is not.
#[global_allocator]
static ALLOC: CountingAlloc = CountingAlloc;

/// The program (one file) run against an XR whose spec is `spec` (JSON), with `limits`:
/// the Fatal message (or `None` when it succeeded) and what was charged.
fn run(hcl: &str, spec: &str, limits: Limits) -> (Option<String>, Usage) {
    let (out, usage) = run_output(hcl, spec, limits);
    (out.err(), usage)
}

/// [`run`] with the evaluation's output.
fn run_output(hcl: &str, spec: &str, limits: Limits) -> (Result<Output, String>, Usage) {
    let (out, usage, _) = run_counted(hcl, spec, limits);
    (out, usage)
}

/// [`run_output`] with the bytes the evaluation allocated (the program loaded, the
/// request decoded, before it: not counted).
fn run_counted(hcl: &str, spec: &str, limits: Limits) -> (Result<Output, String>, Usage, u64) {
    let program = compile_txtar(&format!("-- main.hcl --\n{hcl}"))
        .unwrap_or_else(|e| panic!("does not load: {}", e.message()));
    let req = parse_json(&format!(
        r#"{{"observed": {{"composite": {{"resource": {{"apiVersion": "example.org/v1", "kind": "XR", "metadata": {{"name": "x"}}, "spec": {spec}}}}}}}}}"#
    ))
    .expect("request json");
    let req = request_from_json(&req).expect("request");
    let inputs = Inputs::from_request(&Request::from_proto(&req).expect("request decodes"));
    let ((out, usage), _, allocated) = measure(|| evaluate_metered(&program, &inputs, limits));
    (out.map_err(|f| f.0), usage, allocated)
}

/// A chain of locals `l0` (a 10-byte string) to `l{n}`, each a tuple of ten copies of the
/// one before: `l{n}` describes 10^n strings in n tuples of ten.
fn chain(n: usize) -> String {
    chain_of("\"xxxxxxxxxx\"", n)
}

/// [`chain`] with `l0` the expression `leaf`: on lines 1 (`locals {`) to `n` + 3.
fn chain_of(leaf: &str, n: usize) -> String {
    let mut s = format!("locals {{\n  l0 = {leaf}\n");
    for i in 1..=n {
        let refs = vec![format!("l{}", i - 1); 10].join(", ");
        s.push_str(&format!("  l{i} = [{refs}]\n"));
    }
    s.push_str("}\n");
    s
}

fn resource(attr: &str) -> String {
    format!("resource r {{\n  body = {{ apiVersion = \"v1\", kind = \"C\", v = {attr} }}\n}}\n")
}

/// The default budgets, but the wall clock's: a debug build on a loaded machine may need
/// more than 1 s to reach the budget under test (the wall budget is tested in vm_userfn).
fn limits() -> Limits {
    Limits {
        max_wall: std::time::Duration::from_secs(600),
        ..Limits::default()
    }
}

#[track_caller]
fn fatal(m: Option<String>) -> String {
    m.expect("a Fatal result")
}

#[test]
fn shared_values_are_charged_by_their_expanded_size() {
    let limits = limits();
    // Nine levels: 10^9 strings. The chain itself stops at the level that crosses
    // the element budget (l7: 10^7 > 4,000,000), at the copy of l6 that crosses it: each
    // shared copy is charged whole, its size read from its summary (1,111,110 elements).
    let (m, u) = run(&chain(9), "{}", limits);
    let m = fatal(m);
    assert!(
        m.starts_with(
            "evaluate hcl: evaluation budget exceeded: more than 4000000 collection elements allocated (at main.hcl:9,"
        ),
        "{m}"
    );
    assert!(u.elements > limits.max_alloc_elements, "{u:?}");
    assert!(u.elements <= limits.max_alloc_elements + 1_111_110, "{u:?}");
    // Below the budget, materializing a level is charged for what it writes out.
    for (what, charged_at_least) in [
        ("flatten(l4)", 10_000),
        ("jsonencode(l4)", 0),
        ("l4", 10_000),
    ] {
        let (m, u) = run(&(chain(4) + &resource(what)), "{}", limits);
        assert_eq!(m, None, "{what}");
        assert!(u.elements >= charged_at_least, "{what}: {u:?}");
    }
    // jsonencode writes 10^4 strings of 12 bytes (quotes included): charged as written.
    let (_, u) = run(&(chain(4) + &resource("jsonencode(l4)")), "{}", limits);
    assert!(u.bytes >= 120_000, "{u:?}");
    // With a small budget each of them stops at it, inside the builtin.
    let small = Limits {
        max_alloc_elements: 50_000,
        max_alloc_bytes: 200_000,
        ..limits
    };
    let (m, u) = run(
        &(chain(4) + &resource("length(flatten(l4))")),
        "{}",
        Limits {
            max_alloc_elements: 20_000,
            ..limits
        },
    );
    let m = fatal(m);
    assert!(
        m.contains("more than 20000 collection elements allocated (at main.hcl:9,"),
        "{m}"
    );
    assert!(m.ends_with("(in flatten)"), "{m}");
    // Stopped one element past the budget, before the 10,000 of the result were all in.
    assert_eq!(u.elements, 20_001, "{u:?}");
    // A tuple of six copies of it is charged when it is made, before flatten runs.
    let (m, _) = run(
        &(chain(4) + &resource("length(flatten([l4, l4, l4, l4, l4, l4]))")),
        "{}",
        small,
    );
    let m = fatal(m);
    assert!(m.contains("allocated (at main.hcl:9,62-86)"), "{m}");
    assert!(!m.contains("(in flatten)"), "{m}");
    let (m, u) = run(&(chain(4) + &resource("jsonencode(l4)")), "{}", small);
    let m = fatal(m);
    assert!(m.contains("more than 200000 string bytes allocated"), "{m}");
    assert!(m.ends_with("(in jsonencode)"), "{m}");
    assert!(u.bytes <= 200_000 + 64, "{u:?}");
}

/// An object of constant keys is charged for the shared values it holds as it is made
/// (each copy whole, the last of duplicate keys included while the earlier is still on
/// the stack), before a builtin reads it; one fresh value is not a copy.
#[test]
fn shared_values_in_an_object_are_charged_when_it_is_made() {
    // The chain costs ~12,400 elements; each copy of `l4` 11,111.
    let small = Limits {
        max_alloc_elements: 70_000,
        ..limits()
    };
    for body in [
        "length({ a = l4, b = l4, c = l4, d = l4, e = l4, f = l4 })",
        "length({ a = l4, a = l4, b = l4, c = l4, d = l4, e = l4, f = l4 })",
    ] {
        let (m, _) = run(&(chain(4) + &resource(body)), "{}", small);
        let m = fatal(m);
        assert!(
            m.contains("more than 70000 collection elements allocated (at main.hcl:9,"),
            "{body}: {m}"
        );
        assert!(!m.contains("(in length)"), "{body}: {m}");
    }
    // Four copies are within it.
    let (m, u) = run(
        &(chain(4) + &resource("length({ a = l4, b = l4, c = l4, d = l4 })")),
        "{}",
        small,
    );
    assert_eq!(m, None);
    assert!(u.elements <= 70_000, "{u:?}");
    // A fresh tuple is no copy: the object around it costs its one element.
    let used = |body: &str| {
        let (m, u) = run(&(chain(4) + &resource(body)), "{}", limits());
        assert_eq!(m, None, "{body}");
        u.elements
    };
    assert_eq!(
        used("length({ a = [for x in l4 : x] })"),
        used("length([for x in l4 : x])") + 1
    );
}

#[test]
fn invoke_refusing_a_shared_value_charges_the_type_it_prints() {
    // `invoke` prints the whole type of arguments that are not an object: for l6, 10^6
    // element types (the chain itself costs ~1.1 million elements to make). The text is
    // charged first, and the element budget stops it.
    let f = "function f {\n  arg a {}\n  body = a\n}\n";
    let budget = Limits {
        max_alloc_elements: 2_000_000,
        ..limits()
    };
    let (m, u) = run(
        &(chain(6) + f + &resource("invoke(\"f\", l6)")),
        "{}",
        budget,
    );
    let m = fatal(m);
    assert!(
        m.contains("more than 2000000 collection elements allocated (at main.hcl:"),
        "{m}"
    );
    // The chain's 1,234,560 elements, then l6's 1,111,110 charged whole before the text.
    assert!(u.elements <= 1_234_560 + 1_111_110 + 100, "{u:?}");
    // Only the refusal that prints the type is charged: an unknown function is "not
    // found" whatever its argument.
    let (out, _) = run_output(
        &(chain(6) + f + &resource("invoke(\"g\", l6)")),
        "{}",
        budget,
    );
    let out = format!("{:?}", out.expect("no Fatal"));
    assert!(out.contains("user function 'g' not found"), "{out}");
    // Within the budget: Go's refusal, the type printed whole (the resource is discarded
    // with it).
    let (out, _) = run_output(
        &(chain(1) + f + &resource("invoke(\"f\", l1)")),
        "{}",
        limits(),
    );
    let out = format!("{:?}", out.expect("no Fatal"));
    assert!(
        out.contains("arguments to user function 'f' is not an object, found cty.Tuple([]cty.Type{cty.String,"),
        "{out}"
    );
}

#[test]
fn one_shared_local_as_many_bodies_is_charged_per_body() {
    // 1,000 resources whose body is one local of 10,000 elements: 10^7 written out.
    let hcl = "locals {\n  big = {for i in range(100) : \"k${i}\" => [for j in range(100) : \"x\"]}\n}\n\
               resources r {\n  for_each = range(1000)\n  template {\n    body = big\n  }\n}\n";
    let (m, u) = run(hcl, "{}", limits());
    let m = fatal(m);
    assert!(
        m.contains("more than 4000000 collection elements allocated (at main.hcl:7,12-15) (writing the response)"),
        "{m}"
    );
    assert!(u.elements <= 4_000_000 + 10_100, "{u:?}");
}

#[test]
fn a_collection_members_annotations_are_charged_however_its_body_is_written() {
    // 10,000 members whose bodies and names cost ~10 bytes each, each given the
    // collection's two annotations (86 bytes): 860,000 bytes written, charged whether the
    // annotations are compiled into a literal body or added by the evaluator to a body
    // that is not one. A 600,000-byte budget stops the evaluation (at whichever charge
    // comes next once the annotations have used it up); 2,000,000 bytes do not.
    let hcl = |body: &str| {
        format!(
            "resources r {{\n  for_each = flatten([for i in range(10) : range(1000)])\n  template {{\n    body = {body}\n  }}\n}}\n"
        )
    };
    for body in ["{ metadata = {} }", "merge({ metadata = {} })"] {
        let budget = |bytes| Limits {
            max_alloc_bytes: bytes,
            ..limits()
        };
        let (m, u) = run(&hcl(body), "{}", budget(600_000));
        let m = fatal(m);
        assert!(
            m.contains("more than 600000 string bytes allocated"),
            "{body}: {m}"
        );
        assert!(u.bytes <= 600_000 + 200, "{body}: {u:?}");
        let (m, u) = run(&hcl(body), "{}", budget(2_000_000));
        assert_eq!(m, None, "{body}");
        assert!(u.bytes > 860_000, "{body}: the annotations charged: {u:?}");
    }
}

#[test]
fn yaml_aliases_count_their_expansion() {
    // A "billion laughs" in the XR's spec, decoded by the program.
    let mut doc = "a0: &a0 \"lol\"\n".to_string();
    for i in 1..=9 {
        let refs = vec![format!("*a{}", i - 1); 10].join(", ");
        doc.push_str(&format!("a{i}: &a{i} [{refs}]\n"));
    }
    let spec = format!("{{\"doc\": {}}}", serde_json::to_string(&doc).unwrap());
    let (m, u) = run(
        &resource("length(yamldecode(req.composite.spec.doc))"),
        &spec,
        limits(),
    );
    let m = fatal(m);
    assert!(
        m.starts_with("evaluate hcl: evaluation budget exceeded: more than 4000000 collection elements allocated (at main.hcl:2,"),
        "{m}"
    );
    assert!(m.ends_with("(in yamldecode)"), "{m}");
    // Charged while expanding, before building: over the budget by at most the charge
    // that crossed it (one alias: the values of the anchor it copies).
    assert!(u.elements <= 4_000_000 + 1_000_000, "{u:?}");
}

/// A template of ten copies of local `x`.
fn t(x: &str) -> String {
    format!("\"{}\"", vec![format!("${{{x}}}"); 10].join(""))
}

/// Locals s0 (1 KB of "x") to s`n`, each ten copies of the one before (the block opened,
/// not closed): s4 is 10 MB, on lines 2 to `n` + 2.
fn tenfold(n: usize) -> String {
    let mut hcl = format!("locals {{\n  s0 = \"{}\"\n", "x".repeat(1000));
    for i in 1..=n {
        hcl.push_str(&format!("  s{i} = {}\n", t(&format!("s{}", i - 1))));
    }
    hcl
}

/// `lines` added to [`tenfold`]`(4)` (from line 7), the last local's length the output:
/// the refusal and what was charged.
#[track_caller]
fn over_tenfold(lines: &str, last: &str) -> (String, Usage) {
    let mut hcl = tenfold(4);
    hcl.push_str(lines);
    hcl.push_str("}\n");
    hcl.push_str(&resource(&format!("length({last})")));
    let (m, u) = run(&hcl, "{}", limits());
    (fatal(m), u)
}

#[test]
fn strings_are_charged_before_they_are_built() {
    // s4 is 10 MB; s5 would join ten of them (100 MB) and is refused before.
    let mut hcl = tenfold(5);
    hcl.push_str("}\n");
    hcl.push_str(&resource("length(s5)"));
    let (m, u) = run(&hcl, "{}", limits());
    let m = fatal(m);
    assert!(
        m.contains("more than 67108864 string bytes allocated (at main.hcl:7,"),
        "{m}"
    );
    assert!(u.bytes <= 64 << 20, "refused before the join: {u:?}");
    // replace of each of 100,000 characters by a 10 KB string: 1 GB, refused first.
    let hcl = format!(
        "locals {{\n  s0 = \"{}\"\n  s1 = {}\n  s2 = {}\n  t = replace(s2, \"a\", s1)\n}}\n{}",
        "a".repeat(1000),
        t("s0"),
        t("s1"),
        resource("length(t)")
    );
    let (m, u) = run(&hcl, "{}", limits());
    let m = fatal(m);
    assert!(m.contains("string bytes allocated (at main.hcl:5,"), "{m}");
    assert!(m.ends_with("(in replace)"), "{m}");
    // The whole result (1 GB) was charged, and refused, before any of it was built.
    assert!(u.bytes > 1_000_000_000, "{u:?}");
    // join of 100 short strings by a 1 MB separator (99 MB) in the builtins' shared
    // buffer: measured and refused before the buffer grows.
    let mut hcl = tenfold(3);
    hcl.push_str("  j = join(s3, [for i in range(100) : \"a\"])\n}\n");
    hcl.push_str(&resource("length(j)"));
    let (m, u) = run(&hcl, "{}", limits());
    let m = fatal(m);
    assert!(m.contains("string bytes allocated (at main.hcl:6,"), "{m}");
    assert!(m.ends_with("(in join)"), "{m}");
    assert!(u.bytes > 99_000_000, "the whole result charged: {u:?}");
    // base64 of base64 of a 10 MB string, four times (13, 18, 24, 32 MB): the fourth
    // crosses the budget, refused by its own charge (the error names it) before it is
    // encoded.
    let (m, u) = over_tenfold(
        "  b1 = base64encode(s4)\n  b2 = base64encode(b1)\n  b3 = base64encode(b2)\n  b4 = base64encode(b3)\n",
        "b4",
    );
    assert!(m.contains("string bytes allocated (at main.hcl:10,"), "{m}");
    assert!(m.ends_with("(in base64encode)"), "{m}");
    assert!(u.bytes > 64 << 20, "the whole result charged: {u:?}");
    // urlencode of urlencode of 10 MB of "/" (30 MB of "%2F", then 50 MB of "%252F"):
    // the second is refused by its own charge, measured before it is written.
    let (m, u) = over_tenfold(
        "  u0 = replace(s4, \"x\", \"/\")\n  u1 = urlencode(u0)\n  u2 = urlencode(u1)\n",
        "u2",
    );
    assert!(m.contains("string bytes allocated (at main.hcl:9,"), "{m}");
    assert!(m.ends_with("(in urlencode)"), "{m}");
    assert!(u.bytes > 100_000_000, "the whole result charged: {u:?}");
}

#[test]
fn expanding_builtins_charge_their_results_before_they_build_them() {
    // Each result is several times its input, past the budget: refused by the builtin's
    // own charge (the message names it), made before what it charges is written: the
    // whole result, or each piece as it is written (the builtins that write as they go).
    // Before, each was charged its input's length, and its result once it was built.
    let check = |lines: &str, last: &str, line: usize, name: &str, at_least: u64| {
        let (m, u) = over_tenfold(lines, last);
        assert!(
            m.contains(&format!("string bytes allocated (at main.hcl:{line},")),
            "{name}: {m}"
        );
        assert!(m.ends_with(&format!("(in {name})")), "{name}: {m}");
        assert!(
            u.bytes > at_least,
            "{name}: the whole result charged: {u:?}"
        );
    };
    // jsonencode of 10 MB of "<": 60 MB of "\u003c".
    check(
        "  j0 = replace(s4, \"x\", \"<\")\n  j1 = jsonencode(j0)\n",
        "j1",
        8,
        "jsonencode",
        80_000_000,
    );
    // yamlencode of 20 MB of U+0001: 80 MB of "\x01".
    check(
        "  y0 = replace(s4, \"x\", \"\\u0001\\u0001\")\n  y1 = yamlencode(y0)\n",
        "y1",
        8,
        "yamlencode",
        // (Charged as it is written: stopped at the budget.)
        64 << 20,
    );
    // format "%q" of 10 MB of "&": 60 MB.
    check(
        "  f0 = replace(s4, \"x\", \"&\")\n  f1 = format(\"%q\", f0)\n",
        "f1",
        8,
        "format",
        80_000_000,
    );
    // formatdate of 20 MB of "Z " at +05:30: 70 MB of "+05:30 ".
    check(
        "  d0 = replace(s4, \"x\", \"Z \")\n  d1 = formatdate(d0, \"2024-03-05T14:07:09+05:30\")\n",
        "d1",
        8,
        "formatdate",
        // (Charged a verb at a time: stopped at the budget.)
        64 << 20,
    );
}

#[test]
fn small_inputs_that_describe_large_results_are_charged_first() {
    let run_fatal = |hcl: &str| {
        let (m, u) = run(hcl, "{}", limits());
        (fatal(m), u)
    };
    // A precision of a million zeros, a hundred times, from 1,200 bytes of format.
    let (m, u) = run_fatal(&format!(
        "locals {{\n  f = join(\"\", [for i in range(100) : \"%.999999[1]d\"])\n  x = format(f, 1)\n}}\n{}",
        resource("length(x)")
    ));
    assert!(m.contains("string bytes allocated (at main.hcl:3,"), "{m}");
    assert!(m.ends_with("(in format)"), "{m}");
    assert!(u.bytes > 64 << 20, "{u:?}");
    // A number of 301 digits, shared a million times (1.1 million elements): 301 MB of
    // JSON or YAML.
    for f in ["jsonencode", "yamlencode"] {
        let (m, u) = run_fatal(&on_chain_of("1e300", 6, &format!("{f}(l6)")));
        assert!(
            m.contains("string bytes allocated (at main.hcl:11,"),
            "{f}: {m}"
        );
        assert!(m.ends_with(&format!("(in {f})")), "{f}: {m}");
        assert!(u.bytes > 64 << 20, "{f}: {u:?}");
    }
    // split of 10 MB by "": ten million strings, refused before the first.
    let (m, u) = over_tenfold("  p = split(\"\", s4)\n", "p");
    assert!(
        m.contains("more than 4000000 collection elements allocated (at main.hcl:7,"),
        "{m}"
    );
    assert!(m.ends_with("(in split)"), "{m}");
    assert!(u.elements >= 10_000_000, "the whole result charged: {u:?}");
    // A number of 1,001 digits, shared 5,000 times, converted to strings under a budget
    // of 4 MiB: 5 MB of text from a few hundred bytes, each number's text charged before
    // it is made. The conversion functions, and the conversion of a builtin's argument
    // (`join` takes a list of strings), stop at the budget; they converted every number
    // before (and `toset`, whose set is two strings, was not refused).
    let four = Limits {
        max_alloc_bytes: 4 << 20,
        ..limits()
    };
    let copies = "flatten([[\"a\"], l3, l3, l3, l3, l3])";
    for (e, site) in [
        (format!("tolist({copies})"), "tolist"),
        (format!("toset({copies})"), "toset"),
        (
            format!("tomap({{ for i, x in {copies} : \"k${{i}}\" => x }})"),
            "tomap",
        ),
        (format!("join(\",\", {copies})"), "type conversion"),
    ] {
        let (m, u) = run(&on_chain_of("1e1000", 3, &e), "{}", four);
        let m = m.unwrap_or_else(|| panic!("{e}: no Fatal ({u:?})"));
        assert!(
            m.contains("more than 4194304 string bytes allocated (at main.hcl:8,"),
            "{e}: {m}"
        );
        assert!(m.ends_with(&format!("(in {site})")), "{e}: {m}");
        assert!(u.bytes <= (4 << 20) + 1_001, "{e}: {u:?}");
    }
    // CSV rows of ten empty fields, a million of them in 10 MB: eleven million elements,
    // refused at the row that crosses the budget, not after the last.
    let (m, u) = over_tenfold(
        "  r = replace(s4, \"xxxxxxxxxx\", \",,,,,,,,,\\n\")\n  c = csvdecode(\"a,b,c,d,e,f,g,h,i,j\\n${r}\")\n",
        "c",
    );
    assert!(
        m.contains("more than 4000000 collection elements allocated (at main.hcl:8,"),
        "{m}"
    );
    assert!(m.ends_with("(in csvdecode)"), "{m}");
    assert!(u.elements <= 4_000_000 + 11, "stopped at the row: {u:?}");
    // The million characters of s3 as strings (a million elements; four million with the
    // `for` of as many numbers and its expansion), then a million chunks of one (two
    // million elements), or a million subnets: each charged before it is made.
    for (e, site, budget) in [
        ("chunklist(split(\"\", s3), 1)", "chunklist", 2_500_000),
        (
            "cidrsubnets(\"10.0.0.0/8\", [for x in split(\"\", s3) : 24]...)",
            "cidrsubnets",
            4_500_000,
        ),
    ] {
        let mut hcl = tenfold(3);
        hcl.push_str(&format!("  c = {e}\n}}\n"));
        hcl.push_str(&resource("length(c)"));
        let budget = Limits {
            max_alloc_elements: budget,
            ..limits()
        };
        let (m, u) = run(&hcl, "{}", budget);
        let m = m.unwrap_or_else(|| panic!("{e}: no Fatal ({u:?})"));
        assert!(
            m.contains(&format!(
                "more than {} collection elements allocated (at main.hcl:6,",
                budget.max_alloc_elements
            )),
            "{e}: {m}"
        );
        assert!(m.ends_with(&format!("(in {site})")), "{e}: {m} {u:?}");
        assert!(
            u.elements <= budget.max_alloc_elements + 2_000_000,
            "{e}: {u:?}"
        );
    }
}

/// [`chain_of`]`(leaf, n)`, then a local `c` (on line `n` + 5) of `expr`, and the resource
/// of its length.
fn on_chain_of(leaf: &str, n: usize, expr: &str) -> String {
    chain_of(leaf, n) + &format!("locals {{\n  c = {expr}\n}}\n") + &resource("length(c)")
}

#[test]
fn a_long_number_text_is_charged_before_it_is_made() {
    // Under a budget of 20 KB: `tostring` of 1e39000 (39,001 digits), and a format of a
    // million digits after the point (of 1, of 1e39000), or of 1e39000's 129,555 binary
    // digits.
    // Each is charged its text's length, refused, before it is made: nothing of its size
    // is allocated. Before, the text was made, then charged.
    let small = Limits {
        max_alloc_bytes: 20_000,
        ..limits()
    };
    for (e, site, text) in [
        ("tostring(1e39000)", "tostring", 39_001),
        ("format(\"%.999999f\", 1)", "format", 1_000_001),
        ("format(\"%.999999e\", 1e39000)", "format", 1_000_005),
        ("format(\"%.999999f\", 1e39000)", "format", 1_039_001),
        ("format(\"%b\", 1e39000)", "format", 129_000),
    ] {
        let (out, u, allocated) = run_counted(&resource(&format!("length({e})")), "{}", small);
        let m = fatal(out.err());
        assert!(
            m.contains("more than 20000 string bytes allocated (at main.hcl:2,"),
            "{e}: {m}"
        );
        assert!(m.ends_with(&format!("(in {site})")), "{e}: {m}");
        assert!(u.bytes >= text, "{e}: the whole text charged: {u:?}");
        assert!(allocated < text, "{e}: {allocated} bytes allocated");
    }
    // A template writes a number's text itself (no builtin): charged too, before it is made.
    let e = "length(\"n=${1e39000}\")";
    let (out, u, allocated) = run_counted(&resource(e), "{}", small);
    let m = fatal(out.err());
    assert!(
        m.contains("more than 20000 string bytes allocated (at main.hcl:2,"),
        "{e}: {m}"
    );
    assert!(u.bytes >= 39_001, "{e}: the whole text charged: {u:?}");
    assert!(allocated < 39_001, "{e}: {allocated} bytes allocated");
    // A conditional converts its result to the type both sides unify to (a tuple of
    // strings here): the VM meters that conversion as it does a builtin's.
    let e = "length(req.composite.spec.t ? [1e39000] : [\"a\"])";
    let (out, u, allocated) = run_counted(&resource(e), r#"{"t": true}"#, small);
    let m = fatal(out.err());
    assert!(
        m.contains("more than 20000 string bytes allocated (at main.hcl:2,")
            && m.ends_with("(in type conversion)"),
        "{e}: {m}"
    );
    assert!(u.bytes >= 39_001, "{e}: the whole text charged: {u:?}");
    assert!(allocated < 39_001, "{e}: {allocated} bytes allocated");
}

#[test]
fn a_call_bomb_ends_at_the_call_budget() {
    let hcl = "function bomb {\n  arg n {}\n  body = n == 0 ? 0 : invoke(\"bomb\", { n = n - 1 }) + invoke(\"bomb\", { n = n - 1 })\n}\n"
        .to_string()
        + &resource("invoke(\"bomb\", { n = 60 })");
    let (m, u) = run(&hcl, "{}", limits());
    let m = fatal(m);
    assert!(
        m.starts_with("evaluate hcl: evaluation budget exceeded: more than 50000 user function calls (at main.hcl:"),
        "{m}"
    );
    assert!(u.calls > 50_000 && u.calls <= 50_010, "{u:?}");
    // Far below the instruction budget: it did not run to the other limits.
    assert!(u.instructions < 20_000_000 / 2, "{u:?}");
}

#[test]
fn the_clock_is_read_after_an_instruction_that_walked_a_large_value() {
    // Comparing, typing or converting a shared value walks its expansion inside one
    // instruction, and builtins walk their arguments. The clock was read every 4,096
    // instructions only: 100 comparisons of two chains of a million strings each took
    // 43 s in a debug build, and 20 `coalesce` of them 2.7 s, with no Fatal (fewer than
    // 4,096 instructions). A wall budget already spent shows when the clock is read: now
    // within 64 instructions of the first such walk, long before the 4,096th.
    let mut locals = chain(6);
    locals.truncate(locals.len() - 2);
    locals += &chain(6)
        .replace("locals {\n", "")
        .replace(" l", " m")
        .replace("[l", "[m")
        .replace(", l", ", m");
    let spent = Limits {
        max_wall: std::time::Duration::ZERO,
        ..limits()
    };
    for e in [
        "l6 == m6",
        "length(i >= 0 ? l6 : m5)",
        "length(coalesce(l6, m6))",
        "contains([l5], m6)",
        "can(tostring(l6))",
    ] {
        let hcl = locals.clone() + &resource(&format!("length([for i in range(1000) : {e}])"));
        let (m, u) = run(&hcl, "{}", spent);
        let m = m.unwrap_or_else(|| panic!("{e}: no Fatal ({u:?})"));
        assert!(
            m.starts_with(
                "evaluate hcl: evaluation budget exceeded: evaluation took longer than 0 ms (at main.hcl:"
            ),
            "{e}: {m}"
        );
        assert!(u.instructions < 200, "{e}: {u:?}");
    }
    // Inside one builtin call: `contains` and `index` compare each element with `==`,
    // which walks the other argument whole (its million strings, for each of ten
    // elements here; a longer list multiplies it). Their loops look at the clock once
    // enough was walked, not only after the call.
    for (e, site) in [("contains(l2, l6)", "contains"), ("index(l2, l6)", "index")] {
        let (m, u) = run(
            &(locals.clone() + &resource(&format!("length([{e}])"))),
            "{}",
            spent,
        );
        let m = m.unwrap_or_else(|| panic!("{e}: no Fatal ({u:?})"));
        assert!(m.ends_with(&format!("(in {site})")), "{e}: {m}");
    }
}

#[test]
fn unifying_many_distinct_types_looks_at_the_clock() {
    // A tuple of 10,000 distinct object types and a number: unification compares every
    // pair of distinct types (as cty does, 50 million comparisons here), inside one
    // `tolist` call. A wall budget already spent ends it at the first look.
    let n = 10_000;
    let items: Vec<String> = (0..n).map(|i| format!("{{\"k{i}\": 1}}, 1")).collect();
    let spec = format!("{{\"distinct\": [{}]}}", items.join(","));
    let spent = Limits {
        max_wall: std::time::Duration::ZERO,
        ..limits()
    };
    let (m, u) = run(
        &resource("length(tolist(req.composite.spec.distinct))"),
        &spec,
        spent,
    );
    let m = m.unwrap_or_else(|| panic!("no Fatal ({u:?})"));
    assert!(
        m.starts_with("evaluate hcl: evaluation budget exceeded: evaluation took longer than 0 ms")
            && m.ends_with("(in tolist)"),
        "{m}"
    );
}

#[test]
fn the_clock_is_read_before_a_long_number_text_is_made() {
    // Expanding 1e39000 into decimal takes ~10 ms (release) and 8 MB of allocations, even
    // for `%v`'s short "1e+39000": one `format` of 200 of them (or a conversion of a
    // tuple of them to strings) expanded all 200 without a look at the clock. A spent
    // wall budget now ends it at the first.
    let big = vec!["1e39000"; 200].join(",");
    let spent = Limits {
        max_wall: std::time::Duration::ZERO,
        ..limits()
    };
    let (out, u, allocated) = run_counted(
        &resource(
            "length(format(req.composite.spec.verbs, jsondecode(req.composite.spec.big)...))",
        ),
        &format!(
            "{{\"big\": \"[{big}]\", \"verbs\": \"{}\"}}",
            "%v".repeat(200)
        ),
        spent,
    );
    let m = out.err().unwrap_or_else(|| panic!("no Fatal ({u:?})"));
    assert!(
        m.starts_with("evaluate hcl: evaluation budget exceeded: evaluation took longer than 0 ms")
            && m.ends_with("(in format)"),
        "{m}"
    );
    // Three expansions at most (one is 8 MB of allocations; all 200, 1.7 GB).
    assert!(allocated < 24 << 20, "{allocated} bytes allocated");
}

#[test]
fn the_front_end_is_linear_and_bounded() {
    // 50,000 attributes and 50,000 references to them: each reference used to copy the
    // object's type and scan it (quadratic: minutes); now this loads at once.
    let n = 50_000;
    let mut hcl = "locals {\n  big = {\n".to_string();
    for i in 0..n {
        hcl.push_str(&format!("    a{i} = {i}\n"));
    }
    hcl.push_str("  }\n");
    for i in 0..n {
        hcl.push_str(&format!("  x{i} = big.a{i}\n"));
    }
    hcl.push_str("}\n");
    let p = compile_txtar(&format!("-- main.hcl --\n{hcl}")).expect("loads");
    assert!(p.analysis.is_empty());
    // 50,000 top-level locals, each naming a part of the one before (`l1 = l0.a`): the
    // reads analysis follows such aliases of `req`, a bounded number of steps (each alias
    // copying its whole chain was quadratic: 8,000 took 1.8 s and 600 MB).
    let mut hcl = "locals {\n  l0 = req.composite\n".to_string();
    for i in 1..n {
        hcl.push_str(&format!("  l{i} = l{}.a\n", i - 1));
    }
    hcl.push_str("}\n");
    hcl.push_str(&resource(&format!("l{}", n - 1)));
    let p = compile_txtar(&format!("-- main.hcl --\n{hcl}")).expect("loads");
    assert!(p.analysis.is_empty());
    // A function of 50,000 arguments invoked with a literal naming every one: the call
    // binds each value to its argument by the literal's sorted keys (comparing every key
    // with every argument was quadratic: 60,000 took 2 s).
    let mut hcl = "function f {\n".to_string();
    for i in 0..n {
        hcl.push_str(&format!("  arg a{i} {{}}\n"));
    }
    hcl.push_str(&format!("  body = a0 + a{}\n}}\n", n - 1));
    let args: Vec<String> = (0..n).rev().map(|i| format!("a{i} = {i}")).collect();
    let call = format!("tostring(invoke(\"f\", {{ {} }}))", args.join(", "));
    hcl.push_str(&resource(&call));
    let (out, _) = run_output(&hcl, "{}", limits());
    let out = out.unwrap_or_else(|e| panic!("{e}"));
    let v = match out.resources.first() {
        Some((_, fn_hcl::value::Value::Object(body), _)) => body.get("v").cloned(),
        _ => None,
    };
    assert_eq!(v.as_ref().and_then(|v| v.as_str()), Some("49999"));
    // A tuple of 50,000 different objects converted to a list: the compiler's type of its
    // element unified every pair of them (cty's way: 4,000 took 2 s in a debug build, a
    // program of the token budget would take hours); now that is the run's work, where
    // it looks at the clock (`unifying_many_distinct_types_looks_at_the_clock`).
    let items: Vec<String> = (0..n).map(|i| format!("{{ a{i} = 1 }}")).collect();
    let hcl = resource(&format!("length(tolist([{}, 1]))", items.join(", ")));
    compile_txtar(&format!("-- main.hcl --\n{hcl}")).expect("loads");
    // Over the token budget: refused where the limit is reached.
    let over = format!(
        "-- main.hcl --\nlocals {{\n  t = [{}]\n}}\n",
        vec!["1"; 600_000].join(",")
    );
    let Err(e) = compile_txtar(&over) else {
        panic!("a program over the token budget loaded");
    };
    let m = e.message();
    assert!(m.starts_with("evaluate hcl: main.hcl:2,"), "{m}");
    assert!(
        m.contains("Program too large; This program has more than 1000000 tokens"),
        "{m}"
    );
}

#[test]
fn numbers_beyond_the_range_are_refused_not_inf() {
    let huge = format!("1{}", "0".repeat(100_000));
    let Err(e) = compile_txtar(&format!(
        "-- main.hcl --\n{}",
        resource(&format!("length(tostring({huge}))"))
    )) else {
        panic!("a literal beyond the range loaded");
    };
    let m = e.message();
    assert!(
        m.starts_with("evaluate hcl: main.hcl:2,63-100064: Number literal out of range; The number 100000000000000000000000… (100001 characters) is beyond the range fn-hcl holds exactly"),
        "{m}"
    );
    // From the XR at run time: the conversion fails and the block is discarded with the
    // reason; the number never becomes +Inf.
    let spec = format!("{{\"n\": \"{huge}\"}}");
    let (out, _) = run_output(&resource("tonumber(req.composite.spec.n)"), &spec, limits());
    let out = out.expect("evaluates");
    assert!(out.resources.is_empty());
    let why: Vec<&str> = out.results.iter().map(|r| &*r.message).collect();
    assert!(
        why.iter().any(|m| m.contains("discarded resource r")
            && m.contains(
                "number out of range: fn-hcl holds magnitudes between 2^-131072 and 2^131072"
            )),
        "{why:?}"
    );
}

/// An XR spec of large inputs: `keys` ("k0,k1,...", `n` of them), `json` (an object of
/// those keys), `csv` (a header of them), `ones` (a JSON array of 2n ones) and `text`
/// (n letters).
fn large_spec(n: usize) -> String {
    let keys: Vec<String> = (0..n).map(|i| format!("k{i}")).collect();
    let json = format!(
        "{{{}}}",
        keys.iter()
            .map(|k| format!("\"{k}\":1"))
            .collect::<Vec<_>>()
            .join(",")
    );
    let ones = format!("[{}]", vec!["1"; 2 * n].join(","));
    serde_json::json!({
        "keys": keys.join(","),
        "json": json,
        "csv": format!("{}\n{}\n", keys.join(","), vec!["1"; n].join(",")),
        "ones": ones,
        "mixed": format!("[{}]", vec!["1,\"a\""; n / 2].join(",")),
        "text": "a".repeat(n),
    })
    .to_string()
}

#[test]
fn builtins_are_linear_in_large_inputs() {
    // Each of these scanned what it had built so far for every item (transpose's values,
    // matchkeys' searchset, merge's arguments, jsondecode's keys, csvdecode's headers):
    // 100,000 items took minutes inside one call, where the wall budget is not looked at.
    // Unifying a tuple's element types compared every pair and kept the graph (tolist of
    // 50,000 numbers and 50,000 strings: 2.5 billion edges).
    let n = 100_000;
    let hcl = "locals {\n  l = split(\",\", req.composite.spec.keys)\n}\n".to_string()
        + &resource(
            "[length(transpose({ a = l })), length(matchkeys(l, l, l)), \
             length(merge([for k in l : { (k) = 1 }]...)), \
             length(jsondecode(req.composite.spec.json)), \
             length(csvdecode(req.composite.spec.csv)[0]), \
             length(tolist(jsondecode(req.composite.spec.mixed)))]",
        );
    let got = numbers(&hcl, &large_spec(n));
    let n = n as i64;
    assert_eq!(got, [n, n, n, n, n, n]);
}

/// The numbers of the tuple that the program's resource has as `v` (the program must
/// evaluate).
fn numbers(hcl: &str, spec: &str) -> Vec<i64> {
    let (out, _) = run_output(hcl, spec, limits());
    let out = out.expect("evaluates");
    let v = out.resources.first().and_then(|r| r.1.get_attr("v"));
    let v = v.unwrap_or_else(|| panic!("no resource: {:?}", out.results));
    v.as_seq()
        .expect("a tuple")
        .iter()
        .map(|x| x.as_number().and_then(|n| n.to_i64()).expect("a number"))
        .collect()
}

#[test]
fn text_without_ascii_is_split_into_clusters_in_linear_work() {
    // The structured fuzz target's timeout: each grapheme cluster classified the rest of
    // a run of non-ASCII characters, so `substr` of an XR's string of 65,536 "é" made 2^31
    // classifications (seconds in a release build, far past the wall budget: a builtin
    // does not look at it). `length`, `strrev` and `format`'s precision count clusters the
    // same way, and so do the lexer and parser for columns (a literal of the same text).
    let n = 65_536;
    let spec = serde_json::json!({ "wide": "é".repeat(n), "emoji": "\u{1F600}".repeat(n) });
    let literal = "日".repeat(n);
    let hcl = resource(&format!(
        "[length(req.composite.spec.wide), length(substr(req.composite.spec.wide, 21, 1000)), \
         length(strrev(req.composite.spec.emoji)), length(format(\"%.3s\", req.composite.spec.wide)), \
         length(\"{literal}\")]"
    ));
    let n = n as i64;
    assert_eq!(numbers(&hcl, &spec.to_string()), [n, 1000, n, 3, n]);
}

#[test]
fn builtins_charge_what_they_build_before_building_it() {
    let spec = large_spec(100_000);
    let small = Limits {
        max_alloc_elements: 150_000,
        max_alloc_bytes: 2_000_000,
        ..limits()
    };
    let cases = [
        // 200,000 elements of a JSON array.
        ("jsondecode", "length(jsondecode(req.composite.spec.ones))"),
        // 100 groups at each of 100,001 empty matches: 10^7 elements.
        (
            "regexall",
            &*format!(
                "length(regexall(\"{}\", req.composite.spec.text))",
                "()".repeat(100)
            ),
        ),
        // A 10 KB format over 100,000 items: 1 GB of strings.
        (
            "formatlist",
            &*format!(
                "length(formatlist(\"%s{}\", split(\",\", req.composite.spec.keys)))",
                "x".repeat(10_000)
            ),
        ),
    ];
    for (name, expr) in cases {
        let (m, u) = run(&resource(expr), &spec, small);
        let m = fatal(m);
        assert!(m.ends_with(&format!("(in {name})")), "{name}: {m}");
        // Stopped at the budget, having charged no more than one step past it.
        assert!(
            u.elements <= small.max_alloc_elements + 101,
            "{name}: {u:?}"
        );
        assert!(u.bytes <= small.max_alloc_bytes + 10_100, "{name}: {u:?}");
    }
}

#[test]
fn regex_patterns_are_checked_in_linear_time() {
    // Found by the structured fuzz target's inputs: Go's syntax check of a pattern copied
    // the rest of the pattern at every `(?` and `[:`, and looked for a repetition's `}`
    // to the end of it: a pattern from the XR of 300,000 characters took minutes, inside
    // one builtin call, where no budget is looked at. Each of these is one pass now.
    let n = 100_000;
    let spec = serde_json::json!({
        "classes": "[[:".repeat(n),
        "groups": "(?:".repeat(n),
        "flags": "(?i)".repeat(n),
        "braces": "a{1".repeat(n),
        "names": "[[:alpha:]".repeat(n) + "]",
    })
    .to_string();
    let hcl = resource(
        "[for p in [\"classes\", \"groups\", \"flags\", \"braces\", \"names\"] : \
         can(regex(req.composite.spec[p], \"a{1\"))]",
    );
    let (out, _) = run_output(&hcl, &spec, limits());
    let out = out.expect("evaluates");
    let v = out.resources.first().and_then(|r| r.1.get_attr("v"));
    let results: Vec<&str> = out.results.iter().map(|r| &*r.message).collect();
    let v = v.unwrap_or_else(|| panic!("no resource: {results:?}"));
    let got: Vec<bool> = v
        .as_seq()
        .expect("a tuple")
        .iter()
        .map(|x| x.as_bool().expect("a bool"))
        .collect();
    // An unclosed class, unclosed groups, flags only (matches the empty string), literal
    // braces (`a{1a{1...`, longer than the subject), letters (the subject has too few).
    assert_eq!(got, [false, false, true, false, false]);
}

#[test]
fn builtins_build_only_what_they_charged() {
    // Found by the structured fuzz target: `indent` of a text without a newline charged
    // nothing for its padding but built it anyway: 2^53 spaces aborted the process (a
    // failed allocation is no panic a server can catch). The padding of every line is
    // charged first; with no line to pad, none is built.
    let hcl = resource("length(indent(pow(2, 53), req.composite.spec.name))");
    let (out, u) = run_output(&hcl, r#"{"name": "single"}"#, limits());
    let out = out.expect("evaluates");
    let v = out.resources.first().and_then(|r| r.1.get_attr("v"));
    assert_eq!(v.and_then(|v| v.as_number()?.to_i64()), Some(6));
    assert!(u.bytes < 1 << 20, "{u:?}");
    // With a line to pad, the padding is charged, and refused, before it is built.
    let (m, u) = run(&resource("indent(pow(2, 53), \"a\\nb\")"), "{}", limits());
    let m = fatal(m);
    assert!(m.contains("string bytes allocated (at main.hcl:2,"), "{m}");
    assert!(m.ends_with("(in indent)"), "{m}");
    assert!(u.bytes > 1 << 53, "charged the whole padding: {u:?}");
}

/// [`common::nested_locals`] closed, with `v = l{n}`.
fn nested_chain(n: usize, per: usize) -> String {
    common::nested_locals(n, per) + &format!("  v = l{n}\n}}\n")
}

/// Runs `f` on a thread with the stack of the server's evaluation threads (2 MiB), in
/// this (debug) build, whose frames are larger than the release build's.
fn on_a_worker_stack<T: Send>(f: impl FnOnce() -> T + Send) -> T {
    std::thread::scope(|sc| {
        let t = std::thread::Builder::new()
            .stack_size(2 << 20)
            .spawn_scoped(sc, f)
            .expect("spawn");
        t.join().expect("no stack overflow")
    })
}

#[test]
fn a_value_nested_past_the_depth_limit_is_refused_where_it_is_made() {
    // 20,000 levels (100 locals of 200): every walk over such a value (comparing,
    // encoding, flattening, converting, dropping) recursed 20,000 frames and overflowed
    // the evaluating thread's stack, aborting the process. The level past 1,024 is
    // refused when it is made: here the sixth local's literal.
    let limit = |m: Option<String>| {
        let m = fatal(m);
        let want = "evaluate hcl: evaluation budget exceeded: a value nested more than 1024 levels deep (at main.hcl:";
        assert!(m.starts_with(want), "{m}");
        m[want.len()..].to_string()
    };
    let hcl = nested_chain(100, 200) + &resource("v == v");
    let (m, u) = on_a_worker_stack(|| run(&hcl, "{}", limits()));
    assert!(limit(m).starts_with("8,"));
    // Stopped at the level past the limit, not after the 20,000 (each local charged its
    // own levels and, shared, the one before it: 200 + 400 + ... + 1,000 + 1,025).
    assert!(u.elements <= 4_100, "{u:?}");
    // Values at the limit (`w`, and `o`, an object around 1,023 levels), each made one
    // level deeper by a literal, an object, a `for`, a splat and a builtin.
    let at_limit = nested_chain(5, 200).replace(
        "  v = l5\n",
        &format!(
            "  v = l5\n  w = {}v{}\n  o = {{ a = {}v{} }}\n",
            "[".repeat(24),
            "]".repeat(24),
            "[".repeat(23),
            "]".repeat(23)
        ),
    );
    for (what, at) in [
        ("length(w) + length(o)", None),
        ("length([w])", Some("13,54-57")),
        ("length({ b = w })", Some("13,54-63")),
        ("length([for x in [1] : w])", Some("13,54-72")),
        ("length(o[*])", Some("13,54-58")),
        ("length(chunklist(w, 1))", Some("13,54-69")),
        // A null of `w`'s type counts its type's levels: its type would otherwise grow
        // past the limit, each round typing the last one's null.
        ("length([true ? null : w])", Some("13,54-71")),
    ] {
        let hcl = at_limit.clone() + &resource(what);
        let (m, u) = on_a_worker_stack(|| run(&hcl, "{}", limits()));
        match at {
            None => assert_eq!(m, None, "{what}"),
            Some(at) => {
                let m = limit(m);
                assert!(m.starts_with(at), "{what}: {m}");
            }
        }
        // The chain's 3,000, `w`'s and `o`'s 1,024 each and the refused 1,025.
        assert!(u.elements <= 6_100, "{what}: {u:?}");
    }
}

#[test]
fn every_walk_over_a_value_at_the_depth_limit_fits_a_worker_stack() {
    // `v` nests 1,020 levels (a tuple of a tuple ... of 1), four below the limit; each of
    // these walks it whole (or builds on it) on a 2 MiB stack in a debug build.
    let ops = [
        ("v == v ? 1 : 0", 1),
        ("v != [v] ? 1 : 0", 1),
        ("contains([v], v) ? 1 : 0", 1),
        ("length(distinct([v, v]))", 1),
        ("length(flatten(v))", 1),
        ("length(tolist([v, v]))", 2),
        ("length(toset([v, v]))", 1),
        ("length(tolist(toset([v])))", 1),
        ("length(setunion([v], [v]))", 1),
        ("length(setintersection([v], [v]))", 1),
        ("length(setsubtract([v], [v]))", 0),
        ("length(setproduct([v], [v]))", 1),
        ("length(jsonencode(v))", 2041),
        ("length(format(\"%#v\", v))", 2041),
        ("length(yamlencode(v))", 2042),
        ("length(sha256(jsonencode([v])))", 64),
        // jsondecode refuses more than 1,000 levels; the program goes on.
        ("length(try(jsondecode(jsonencode(v)), [1, 2, 3]))", 3),
        ("length(merge({ a = v }, { b = v }))", 2),
        ("length(tomap({ a = v, b = v }))", 2),
        ("length(concat([v], [v]))", 2),
        ("length(reverse([v, v]))", 2),
        ("length(chunklist([v, v], 1))", 2),
        ("length(coalescelist([v], [v]))", 1),
        ("length(distinct([tolist([v]), tolist([v])]))", 1),
        ("length([for x in v : x])", 1),
        ("length(v[*])", 1),
        ("can(v[0][0][0].x) ? 1 : 0", 0),
    ];
    let list = ops.iter().map(|(op, _)| *op).collect::<Vec<_>>().join(", ");
    let hcl = nested_chain(5, 204) + &resource(&format!("[{list}]"));
    let got = on_a_worker_stack(|| numbers(&hcl, "{}"));
    let want: Vec<i64> = ops.iter().map(|(_, n)| *n).collect();
    assert_eq!(got, want);
}
