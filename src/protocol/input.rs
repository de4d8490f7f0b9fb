//! The step's input (Go: `v1beta1.HclInput`), decoded as Go's `encoding/json` decodes it
//! into that struct, and the one decision whether a call prints the debug dump.
//!
//! Both are protocol facts read off the request: the handler asks them and only
//! orchestrates the call.

use crate::protocol::proto::{RequestRef, v1};
use crate::protocol::raw::{EntryKind, struct_entries};

/// The step's input object (Go: `v1beta1.HclInput`). `apiVersion`, `kind`, `source` and
/// `metadata` are read (and type-checked) but, as in Go, not otherwise validated.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct HclInput {
    pub api_version: String,
    pub kind: String,
    pub source: String,
    /// The program: one or more files in txtar form.
    pub hcl: String,
    /// Print request and response for every XR.
    pub debug: bool,
    /// Print request and response for XRs with no observed composed resources yet.
    pub debug_new: bool,
}

/// Go's prefix for an input that does not decode into an `HclInput`.
const INPUT_ERROR_PREFIX: &str = "unable to get input: cannot get function input *v1beta1.HclInput from \
     *v1.RunFunctionRequest: cannot unmarshal JSON from *structpb.Struct into *v1beta1.HclInput: ";

impl HclInput {
    /// Decodes the request's `input` as Go's `encoding/json` would decode it into an
    /// `HclInput`: field names match case-insensitively, unknown fields are ignored, `null`
    /// leaves a field unset, and a value of the wrong type is an error naming the field.
    pub fn from_request(req: &v1::RunFunctionRequest) -> Result<HclInput, String> {
        Input::from_request(req).map(|v| HclInput {
            api_version: v.api_version.to_string(),
            kind: v.kind.to_string(),
            source: v.source.to_string(),
            hcl: v.hcl.to_string(),
            debug: v.debug,
            debug_new: v.debug_new,
        })
    }

    /// [`Input::debug_requested`] for a decoded request, without the server's switch.
    pub fn debug_requested(&self, req: &v1::RunFunctionRequest) -> bool {
        let view = Input {
            debug: self.debug,
            debug_new: self.debug_new,
            ..Input::default()
        };
        view.debug_requested(RequestRef::Decoded(req), false)
    }
}

/// [`HclInput`] borrowed from the request (what one call reads: no copy of the program
/// text per request).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Input<'a> {
    pub api_version: &'a str,
    pub kind: &'a str,
    pub source: &'a str,
    /// The program: one or more files in txtar form.
    pub hcl: &'a str,
    pub debug: bool,
    pub debug_new: bool,
}

impl<'a> Input<'a> {
    /// The input of `req`, decoded or still bytes; an irregular input Struct is decoded
    /// into `decoded` first (a rare path), which the result then borrows.
    pub fn read(
        req: RequestRef<'a>,
        decoded: &'a mut Option<prost_types::Struct>,
    ) -> Result<Input<'a>, String> {
        match req {
            RequestRef::Decoded(full) => Self::from_request(full),
            RequestRef::Lazy(lazy) => Self::from_lazy(lazy, decoded),
        }
    }

    /// [`HclInput::from_request`], borrowing the strings.
    pub fn from_request(req: &'a v1::RunFunctionRequest) -> Result<Input<'a>, String> {
        match &req.input {
            Some(s) => {
                Self::from_entries(s.fields.iter().map(|(k, v)| (k.as_str(), EntryKind::of(v))))
            }
            None => Ok(Input::default()),
        }
    }

    /// [`HclInput::from_request`] for a lazily decoded request: read from the input's
    /// bytes (the Struct decoded into `decoded` first when its bytes are irregular).
    fn from_lazy(
        req: &'a crate::protocol::proto::LazyRequest,
        decoded: &'a mut Option<prost_types::Struct>,
    ) -> Result<Input<'a>, String> {
        let raw = &req.input;
        if !raw.is_present() {
            return Ok(Input::default());
        }
        match struct_entries(raw) {
            Some(mut entries) => {
                // As the decoded Struct iterates them: sorted by key, one entry per key
                // (the last one given, as prost's map keeps).
                entries.reverse();
                entries.sort_by(|a, b| a.0.cmp(b.0));
                entries.dedup_by(|later, first| later.0 == first.0);
                Self::from_entries(entries.into_iter())
            }
            None => {
                *decoded = raw.to_struct().ok().flatten();
                match decoded {
                    Some(s) => Self::from_entries(
                        s.fields.iter().map(|(k, v)| (k.as_str(), EntryKind::of(v))),
                    ),
                    None => Ok(Input::default()),
                }
            }
        }
    }

    /// Go's decoding of the input's entries, given in sorted key order, one per key.
    fn from_entries(
        entries: impl Iterator<Item = (&'a str, EntryKind<'a>)>,
    ) -> Result<Input<'a>, String> {
        let mut input = Input::default();
        let mut first_error: Option<String> = None;
        // Struct fields iterate in sorted key order, the order protojson marshals them in;
        // with two spellings of one field, the later one wins, as in Go.
        for (key, kind) in entries {
            // Spelled as the field is (every call), else in another case (Go's decoder
            // matches names case-insensitively).
            let field = FIELDS.iter().find(|f| **f == key);
            let field = field.or_else(|| FIELDS.iter().find(|f| f.eq_ignore_ascii_case(key)));
            let Some(&field) = field else {
                continue;
            };
            let result = match (field, kind) {
                (_, EntryKind::Null) => Ok(()),
                ("apiVersion", EntryKind::String(v)) => {
                    input.api_version = v;
                    Ok(())
                }
                ("kind", EntryKind::String(v)) => {
                    input.kind = v;
                    Ok(())
                }
                ("source", EntryKind::String(v)) => {
                    input.source = v;
                    Ok(())
                }
                ("hcl", EntryKind::String(v)) => {
                    input.hcl = v;
                    Ok(())
                }
                ("debug", EntryKind::Bool(b)) => {
                    input.debug = b;
                    Ok(())
                }
                ("debugNew", EntryKind::Bool(b)) => {
                    input.debug_new = b;
                    Ok(())
                }
                ("metadata", EntryKind::Struct) => Ok(()),
                (f, k) => Err(type_error(f, json_name(k))),
            };
            if let Err(e) = result {
                first_error.get_or_insert(e);
            }
        }
        match first_error {
            Some(e) => Err(format!("{INPUT_ERROR_PREFIX}{e}")),
            None => Ok(input),
        }
    }

    /// Whether this call prints the debug dump, the one place that decides it: the
    /// server runs with `--debug` (`always`), the input says `debug: true`, or
    /// `debugNew: true` while no composed resource is observed yet, or the observed XR
    /// carries the annotation `hcl.fn.crossplane.io/debug: "true"`.
    pub fn debug_requested(&self, req: RequestRef<'_>, always: bool) -> bool {
        let observed = req.envelope().observed.as_ref();
        let no_resources = observed.is_none_or(|o| o.resources.is_empty());
        always || self.debug || (self.debug_new && no_resources) || req.composite_debug_annotation()
    }
}

const FIELDS: [&str; 7] = [
    "apiVersion",
    "kind",
    "metadata",
    "source",
    "hcl",
    "debug",
    "debugNew",
];

/// The JSON type name Go's decoder reports for a value of this kind.
fn json_name(k: EntryKind<'_>) -> &'static str {
    match k {
        EntryKind::Null => "null",
        EntryKind::Number => "number",
        EntryKind::String(_) => "string",
        EntryKind::Bool(_) => "bool",
        EntryKind::Struct => "object",
        EntryKind::List => "array",
    }
}

/// Go's `json.UnmarshalTypeError` text for a field of the wrong type.
fn type_error(field: &str, value: &str) -> String {
    let go_type = match field {
        "debug" | "debugNew" => "bool",
        "source" => "v1beta1.ScriptSource",
        "metadata" => "v1.ObjectMeta",
        _ => "string",
    };
    format!(
        "json: cannot unmarshal {value} into Go struct field HclInput.{field} of type {go_type}"
    )
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::protocol::doc::parse_json;
    use crate::protocol::protojson::{json_to_struct, request_from_text};

    /// A request whose input is the JSON object `input`.
    pub(crate) fn with_input(input: &str) -> v1::RunFunctionRequest {
        v1::RunFunctionRequest {
            input: Some(json_to_struct(&parse_json(input).unwrap(), "input").unwrap()),
            ..Default::default()
        }
    }

    #[test]
    fn input_fields_case_insensitive_and_typed() {
        let req = with_input(
            r#"{"apiVersion":"function-hcl/v1","kind":"HclInput","source":"Inline",
                "HCL":"-- a --\n","debugnew":true,"extra":1,"metadata":{"name":"x"}}"#,
        );
        let i = HclInput::from_request(&req).unwrap();
        assert_eq!(i.hcl, "-- a --\n");
        assert!(i.debug_new && !i.debug);
        assert!(i.debug_requested(&req));
        let e = HclInput::from_request(&with_input(r#"{"hcl": 5}"#)).unwrap_err();
        assert!(
            e.ends_with(
                "json: cannot unmarshal number into Go struct field HclInput.hcl of type string"
            ),
            "{e}"
        );
        assert!(e.starts_with("unable to get input: "));
        let e = HclInput::from_request(&with_input(r#"{"debug": "yes"}"#)).unwrap_err();
        assert!(e.ends_with("HclInput.debug of type bool"), "{e}");
    }

    #[test]
    fn debug_switches() {
        let annotated = |v: &str| {
            request_from_text(&format!(
                "observed:\n  composite:\n    resource:\n      metadata:\n        annotations:\n          hcl.fn.crossplane.io/debug: \"{v}\"\n"
            ))
            .unwrap()
        };
        let plain = v1::RunFunctionRequest::default();
        assert!(HclInput::default().debug_requested(&annotated("true")));
        assert!(!HclInput::default().debug_requested(&annotated("yes")));
        assert!(!HclInput::default().debug_requested(&plain));
        let always = Input::default().debug_requested(RequestRef::Decoded(&plain), true);
        assert!(always, "the server's --debug");
        let debug = HclInput {
            debug: true,
            ..HclInput::default()
        };
        assert!(debug.debug_requested(&plain));
        // debugNew: only while nothing but the XR is observed.
        let new = HclInput {
            debug_new: true,
            ..HclInput::default()
        };
        assert!(new.debug_requested(&plain));
        let observed =
            request_from_text("observed:\n  resources:\n    a:\n      resource: {}\n").unwrap();
        assert!(!new.debug_requested(&observed));
    }
}
