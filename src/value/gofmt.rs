//! How Go's `fmt` prints a cty type, in the two forms function-hcl's messages carry: the
//! verb decides the text, so each message uses the function named for its verb.
//!
//! - [`go_syntax`]: `%#v` (cty's `GoString`): `cty.List(cty.String)`.
//! - [`go_struct_text`]: `%s`, which reaches no Stringer through cty.Type's unexported
//!   field and prints the struct itself: `{{{} %!s(cty.primitiveTypeKind=83)}}`.

use crate::text::quote::go_quote;
use crate::value::{Str, Type};

/// Go's `%#v` of a cty type (its `GoString`: `cty.Tuple([]cty.Type{cty.String,
/// cty.String})`), as function-hcl prints a non-object argument list of a user function.
pub fn go_syntax(t: &Type) -> String {
    match t {
        Type::Dynamic => "cty.DynamicPseudoType".into(),
        Type::Bool => "cty.Bool".into(),
        Type::Number => "cty.Number".into(),
        Type::String => "cty.String".into(),
        Type::List(e) => format!("cty.List({})", go_syntax(e)),
        Type::Set(e) => format!("cty.Set({})", go_syntax(e)),
        Type::Map(e) => format!("cty.Map({})", go_syntax(e)),
        Type::Tuple(ts) if ts.is_empty() => "cty.EmptyTuple".into(),
        Type::Tuple(ts) => format!(
            "cty.Tuple([]cty.Type{{{}}})",
            ts.iter().map(go_syntax).collect::<Vec<_>>().join(", ")
        ),
        Type::Object(fs) if fs.is_empty() => "cty.EmptyObject".into(),
        Type::Object(fs) => format!(
            "cty.Object(map[string]cty.Type{{{}}})",
            fs.iter()
                .map(|(k, t)| format!("{}:{}", go_quote(k), go_syntax(t)))
                .collect::<Vec<_>>()
                .join(", ")
        ),
    }
}

/// Go's `%s` of a cty type, as function-hcl prints it in a condition that is not a bool.
/// fmt prints the `Type{typeImpl}` struct field by field (no Stringer is reachable through
/// the unexported field): `{` + the impl struct (its empty `typeImplSigil` is `{}`) + `}`,
/// maps with sorted keys, and an object's nil `AttrOptional` map as `map[]`.
pub fn go_struct_text(t: &Type) -> String {
    let inner = match t {
        Type::String | Type::Number | Type::Bool => {
            let kind = match t {
                Type::String => 'S',
                Type::Number => 'N',
                _ => 'B',
            };
            format!("{{}} %!s(cty.primitiveTypeKind={})", kind as u32)
        }
        Type::Dynamic => "{}".to_string(),
        Type::List(e) | Type::Set(e) | Type::Map(e) => format!("{{}} {}", go_struct_text(e)),
        Type::Tuple(es) => {
            let items: Vec<String> = es.iter().map(go_struct_text).collect();
            format!("{{}} [{}]", items.join(" "))
        }
        Type::Object(attrs) => {
            let mut sorted: Vec<&(Str, Type)> = attrs.iter().collect();
            sorted.sort_by(|a, b| a.0.cmp(&b.0));
            let items: Vec<String> = sorted
                .iter()
                .map(|(k, t)| format!("{k}:{}", go_struct_text(t)))
                .collect();
            format!("{{}} map[{}] map[]", items.join(" "))
        }
    };
    format!("{{{{{inner}}}}}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn go_syntax_is_gostring() {
        let tuple = Type::tuple(vec![Type::String, Type::String]);
        assert_eq!(
            go_syntax(&tuple),
            "cty.Tuple([]cty.Type{cty.String, cty.String})"
        );
        assert_eq!(go_syntax(&Type::empty_tuple()), "cty.EmptyTuple");
        assert_eq!(go_syntax(&Type::list(Type::Number)), "cty.List(cty.Number)");
        assert_eq!(
            go_syntax(&Type::object(vec![
                (Str::from("a"), Type::Bool),
                (Str::from("b"), Type::Dynamic),
            ])),
            "cty.Object(map[string]cty.Type{\"a\":cty.Bool, \"b\":cty.DynamicPseudoType})"
        );
    }

    #[test]
    fn go_struct_text_walks_the_struct() {
        assert_eq!(
            go_struct_text(&Type::String),
            "{{{} %!s(cty.primitiveTypeKind=83)}}"
        );
        assert_eq!(
            go_struct_text(&Type::Bool),
            "{{{} %!s(cty.primitiveTypeKind=66)}}"
        );
        assert_eq!(go_struct_text(&Type::Dynamic), "{{{}}}");
        assert_eq!(
            go_struct_text(&Type::list(Type::String)),
            "{{{} {{{} %!s(cty.primitiveTypeKind=83)}}}}"
        );
        assert_eq!(
            go_struct_text(&Type::tuple(vec![Type::Number, Type::Bool])),
            "{{{} [{{{} %!s(cty.primitiveTypeKind=78)}} {{{} %!s(cty.primitiveTypeKind=66)}}]}}"
        );
        assert_eq!(go_struct_text(&Type::empty_object()), "{{{} map[] map[]}}");
        let obj = Type::object(vec![("a".into(), Type::Dynamic), ("z".into(), Type::Bool)]);
        assert_eq!(
            go_struct_text(&obj),
            "{{{} map[a:{{{}}} z:{{{} %!s(cty.primitiveTypeKind=66)}}] map[]}}"
        );
    }
}
