//! The language server's memory stays flat while a document is edited: 1,000
//! one-character edits of a program through the real `function-hcl-ls` binary over stdio,
//! each followed by a request that needs the new analysis, with the server's resident
//! memory (Linux /proc) sampled along the way.

mod common;

use lsp_server::{Message, Notification, Request, RequestId};
use serde_json::json;
use std::io::BufReader;
use std::process::{Command, Stdio};

fn program() -> String {
    let mut s = String::from("locals {\n  base = { team = \"a\", env = \"prod\" }\n}\n\n");
    for i in 0..25 {
        s.push_str(&format!(
            "resource r{i} {{\n  locals {{\n    n = {i}\n  }}\n  body = {{\n    kind = \"Bucket\"\n    name = \"b-${{n}}\"\n    tags = merge(base, {{ n = tostring(n) }})\n  }}\n}}\n\n"
        ));
    }
    s
}

fn rss_kib(pid: u32) -> u64 {
    let s = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    s.lines()
        .find(|l| l.starts_with("VmRSS:"))
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|n| n.parse().ok())
        .unwrap_or(0)
}

#[test]
fn memory_is_flat_over_a_thousand_edits() {
    if !std::path::Path::new("/proc/self/status").exists() {
        common::missing("lsp_memory", "no /proc to read resident memory from");
        return;
    }
    let mut child = Command::new(env!("CARGO_BIN_EXE_function-hcl-ls"))
        .arg("serve")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("start function-hcl-ls");
    let pid = child.id();
    let mut stdin = child.stdin.take().expect("stdin");
    let mut stdout = BufReader::new(child.stdout.take().expect("stdout"));
    let mut send = |m: Message| m.write(&mut stdin).expect("write");
    let mut wait = |id: i32| loop {
        match Message::read(&mut stdout).expect("read") {
            Some(Message::Response(r)) if r.id == RequestId::from(id) => return r,
            Some(_) => {}
            None => panic!("the server closed its output"),
        }
    };
    send(Message::Request(Request::new(
        1.into(),
        "initialize".into(),
        json!({ "capabilities": {} }),
    )));
    wait(1);
    send(Message::Notification(Notification::new(
        "initialized".into(),
        json!({}),
    )));
    let uri = "untitled:memory.hcl";
    let text = program();
    send(Message::Notification(Notification::new(
        "textDocument/didOpen".into(),
        json!({ "textDocument": { "uri": uri, "languageId": "hcl", "version": 0, "text": text } }),
    )));
    let mut samples = Vec::new();
    for n in 1..=1000 {
        // Type an `x` into a local's name, then remove it.
        let (end, new) = if n % 2 == 1 { (4, "x") } else { (5, "") };
        send(Message::Notification(Notification::new(
            "textDocument/didChange".into(),
            json!({
                "textDocument": { "uri": uri, "version": n },
                "contentChanges": [{ "range": {
                    "start": { "line": 6, "character": 4 },
                    "end": { "line": 6, "character": end } }, "text": new }]
            }),
        )));
        send(Message::Request(Request::new(
            (n + 1).into(),
            "textDocument/documentSymbol".into(),
            json!({ "textDocument": { "uri": uri } }),
        )));
        let r = wait(n + 1);
        assert!(r.response_result.is_ok(), "{r:?}");
        if n % 100 == 0 {
            samples.push((n, rss_kib(pid)));
        }
    }
    send(Message::Request(Request::new(
        5000.into(),
        "shutdown".into(),
        json!(null),
    )));
    wait(5000);
    send(Message::Notification(Notification::new(
        "exit".into(),
        json!(null),
    )));
    let status = child.wait().expect("exit");
    eprintln!("server RSS (KiB) after N edits: {samples:?}");
    assert!(status.success(), "{status}");
    let after_100 = samples[0].1;
    let last = samples.last().map_or(0, |s| s.1);
    assert!(after_100 > 0, "{samples:?}");
    // Flat: the last 900 edits add less than 4 MiB.
    assert!(
        last <= after_100 + 4 * 1024,
        "resident memory grew from {after_100} KiB to {last} KiB: {samples:?}"
    );
}
