//! The language server end to end, driven by a client no one here wrote: PyPI's pygls
//! (its LanguageClient over stdio, on lsprotocol's types) runs `tests/lsp/test_lsp.py`
//! against the built `function-hcl-ls`. Outside CI the test skips (with a note) when
//! Python or pygls is missing; with `CI=true` a missing client is a failure (`.ci/run`
//! installs `tests/lsp/requirements.txt`).

mod common;

use std::process::Command;

fn pygls_available() -> bool {
    Command::new("python3")
        .args(["-c", "import pygls.lsp.client, lsprotocol.types"])
        .output()
        .is_ok_and(|o| o.status.success())
}

#[test]
fn pygls_client_drives_the_server() {
    if !pygls_available() {
        common::missing(
            "lsp_python",
            "python3 with pygls is not installed (pip install -r tests/lsp/requirements.txt)",
        );
        return;
    }
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/lsp/test_lsp.py");
    let out = Command::new("python3")
        .args([
            script,
            "--ls",
            env!("CARGO_BIN_EXE_function-hcl-ls"),
            "--fn-hcl",
            env!("CARGO_BIN_EXE_fn-hcl"),
        ])
        .output()
        .expect("run python3");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success(),
        "the pygls client found problems:\n{stdout}\n{stderr}"
    );
    assert!(stdout.contains(" passed, 0 failed"), "{stdout}\n{stderr}");
    let passed: u32 = stdout
        .split_whitespace()
        .next()
        .and_then(|n| n.parse().ok())
        .unwrap_or(0);
    assert!(passed >= 50, "only {passed} checks ran:\n{stdout}");
}
