//! The observed state `crossplane render` builds from files: the XR, and the composed
//! resources keyed by their `crossplane.io/composition-resource-name` annotation. Used by
//! `fn-hcl render` and by the language server's sample request.

use crate::protocol::doc::Json;
use crate::protocol::proto::v1;
use crate::protocol::protojson::json_to_struct;

/// Annotation naming a composed resource within its composition.
pub const ANNOTATION_RESOURCE_NAME: &str = "crossplane.io/composition-resource-name";

/// A composed resource's name in its composition (`""` without the annotation, as
/// render keys it).
pub fn composition_resource_name(o: &Json) -> &str {
    o.get("metadata")
        .and_then(|m| m.get("annotations"))
        .and_then(|a| a.get(ANNOTATION_RESOURCE_NAME))
        .and_then(Json::as_str)
        .unwrap_or("")
}

/// The observed state of a request: the composite and the composed resources by name.
pub fn observed_state(xr: &Json, observed: &[Json]) -> Result<v1::State, String> {
    let mut resources = std::collections::HashMap::new();
    for o in observed {
        resources.insert(
            composition_resource_name(o).to_string(),
            v1::Resource {
                resource: Some(json_to_struct(o, "observed resource")?),
                ..Default::default()
            },
        );
    }
    Ok(v1::State {
        composite: Some(v1::Resource {
            resource: Some(json_to_struct(xr, "composite resource")?),
            ..Default::default()
        }),
        resources,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn observed_resources_are_keyed_by_their_annotation() {
        let docs = crate::protocol::yaml::load_documents(
            "apiVersion: v1\nkind: A\nmetadata:\n  annotations:\n    crossplane.io/composition-resource-name: a\n---\nkind: B\n",
        )
        .expect("yaml");
        let xr = crate::protocol::yaml::load_documents("kind: XR\n").expect("xr");
        let s = observed_state(&xr[0], &docs).expect("state");
        let mut names: Vec<&String> = s.resources.keys().collect();
        names.sort();
        assert_eq!(names, ["", "a"]);
        assert!(s.composite.is_some());
        assert_eq!(composition_resource_name(&docs[0]), "a");
    }
}
