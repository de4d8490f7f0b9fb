//! The evaluation entry point the server calls: one request in, one response out.
//!
//! PROVISIONAL (server branch only): the real implementation (program cache, compile,
//! evaluate) comes from the protocol/evaluation branches and replaces this file at merge.
//! Until then every call answers with a Fatal result so the server can be built and tested.

use crate::proto::v1;

/// Runs the function for `req`. Never fails: errors are Fatal results in the response.
pub fn run_function(req: &v1::RunFunctionRequest) -> v1::RunFunctionResponse {
    crate::response::fatal_response(req, "evaluation not wired yet")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn answers_with_a_fatal_result_and_echoes_the_tag() {
        let req = v1::RunFunctionRequest {
            meta: Some(v1::RequestMeta {
                tag: "t".into(),
                ..Default::default()
            }),
            ..Default::default()
        };
        let rsp = run_function(&req);
        assert_eq!(rsp.meta.map(|m| m.tag), Some("t".to_string()));
        assert_eq!(rsp.results.len(), 1);
        assert_eq!(rsp.results[0].severity, v1::Severity::Fatal as i32);
    }
}
