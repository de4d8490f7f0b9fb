#!/usr/bin/env python3
"""End-to-end test of function-hcl-ls with a client no one here wrote: pygls's
LanguageClient over stdio, on lsprotocol's types. Run by tests/lsp_python.rs (and so
by `cargo test` and CI):

    python3 tests/lsp/test_lsp.py --ls target/debug/function-hcl-ls --fn-hcl target/debug/fn-hcl

The malformed-input checks at the end write raw bytes (a client cannot be made to send
broken JSON-RPC). Prints `N passed, 0 failed` and exits 0 when every check passed.
"""

import argparse
import asyncio
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from lsprotocol import types as T
from pygls.lsp.client import BaseLanguageClient

TIMEOUT = 20

MAIN = """\
resource bucket {
  locals {
    full = "${prefix}-${self.name}"
  }
  body = {
    apiVersion = "s3.aws.upbound.io/v1beta1"
    kind       = "Bucket"
    metadata = {
      name = nmae
      tags = invoke("tags", { env = prefix })
    }
    spec = { region = upper(region), n = length(full) }
  }
}

resources queues {
  for_each = ["a", "b"]
  template {
    body = {
      kind = "Queue"
      ref  = req.resource.bucket
      v    = each.value
    }
  }
}
"""

LOCALS = """\
locals {
  prefix = "demo"
  region = "eu-west-1"
  name   = req.composite.metadata.name
}

function tags {
  arg env {
    default = "dev"
  }
  body = { env = env }
}
"""

UNFORMATTED = 'locals {\n a=1\n  bb = "x"\n}\n'

passed = 0
failures = []


def check(name, cond, detail=""):
    global passed
    if cond:
        passed += 1
    else:
        failures.append(f"{name}: {detail}")
        print(f"FAIL {name}: {detail}", file=sys.stderr)


def uri(p):
    return Path(p).resolve().as_uri()


def pos(text, needle, offset=0):
    """The LSP position of the first `needle` in `text` (+ offset characters)."""
    i = text.index(needle) + offset
    line = text.count("\n", 0, i)
    col = i - (text.rfind("\n", 0, i) + 1)
    return T.Position(line=line, character=col)


def analyze_expected(fn_hcl, directory):
    """(severity, summary, file, l1, c1, l2, c2) of each diagnostic `fn-hcl analyze` prints."""
    out = subprocess.run(
        [fn_hcl, "analyze", str(directory)], capture_output=True, text=True, timeout=TIMEOUT
    ).stdout
    got = []
    sev = summary = None
    for line in out.splitlines():
        m = re.match(r"^(error|warning): (.*)$", line)
        if m:
            sev, summary = m.group(1), m.group(2)
            continue
        m = re.search(r"\^+ (\S+):(\d+),(\d+)-(\d+)(?:,(\d+))?$", line)
        if m and summary is not None:
            f, l1, c1 = m.group(1), int(m.group(2)), int(m.group(3))
            if m.group(5):
                l2, c2 = int(m.group(4)), int(m.group(5))
            else:
                l2, c2 = l1, int(m.group(4))
            got.append((sev, summary, Path(f).name, l1 - 1, c1 - 1, l2 - 1, c2 - 1))
            summary = None
    return sorted(got)


class Client(BaseLanguageClient):
    def __init__(self):
        super().__init__("fn-hcl-e2e", "1")
        self.diagnostics = {}
        self.diag_event = asyncio.Event()


async def wait_for(pred, what):
    deadline = time.monotonic() + TIMEOUT
    while time.monotonic() < deadline:
        if pred():
            return True
        await asyncio.sleep(0.02)
    check(f"waiting for {what}", False, "timed out")
    return False


async def main_flow(ls, fn_hcl, tmp):
    d = Path(tmp) / "comp"
    d.mkdir()
    (d / "main.hcl").write_text(MAIN)
    (d / "locals.hcl").write_text(LOCALS)
    (d / "fmt.hcl").write_text(UNFORMATTED)
    # The sample request beside the program (as `fn-hcl render` takes it).
    (d / "xr.yaml").write_text("apiVersion: example.org/v1\nkind: XThing\nmetadata:\n  name: demo-xr\n")
    main_uri, locals_uri, fmt_uri = uri(d / "main.hcl"), uri(d / "locals.hcl"), uri(d / "fmt.hcl")

    client = Client()

    @client.feature(T.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
    def on_diagnostics(params):
        client.diagnostics[params.uri] = params.diagnostics

    await client.start_io(ls, "serve")
    init = await asyncio.wait_for(
        client.initialize_async(
            T.InitializeParams(
                capabilities=T.ClientCapabilities(),
                root_uri=uri(d),
                process_id=os.getpid(),
            )
        ),
        TIMEOUT,
    )
    caps = init.capabilities
    check("initialize: incremental sync", caps.text_document_sync.change == T.TextDocumentSyncKind.Incremental, caps.text_document_sync)
    for name in ["hover_provider", "completion_provider", "definition_provider", "references_provider",
                 "rename_provider", "document_formatting_provider", "document_symbol_provider",
                 "semantic_tokens_provider", "signature_help_provider", "code_lens_provider"]:
        check(f"initialize: {name}", getattr(caps, name) is not None, caps)
    client.initialized(T.InitializedParams())

    # --- diagnostics: a multi-file program, the same as `fn-hcl analyze DIR`
    client.text_document_did_open(T.DidOpenTextDocumentParams(
        text_document=T.TextDocumentItem(uri=main_uri, language_id="hcl", version=1, text=MAIN)))
    await wait_for(lambda: main_uri in client.diagnostics and locals_uri in client.diagnostics, "diagnostics")
    want = analyze_expected(fn_hcl, d)
    got = []
    names = {main_uri: "main.hcl", locals_uri: "locals.hcl", fmt_uri: "fmt.hcl"}
    for u, ds in client.diagnostics.items():
        for x in ds:
            sev = "error" if x.severity == T.DiagnosticSeverity.Error else "warning"
            got.append((sev, x.message.split("; ")[0], names.get(u, u), x.range.start.line,
                        x.range.start.character, x.range.end.line, x.range.end.character))
    check("diagnostics equal analyze's", sorted(got) == want and len(want) >= 1, f"got {sorted(got)} want {want}")
    check("diagnostic detail", any("Did you mean \"name\"" in x.message for x in client.diagnostics[main_uri]),
          client.diagnostics[main_uri])

    async def complete(text, needle, offset=0, u=main_uri):
        r = await client.text_document_completion_async(T.CompletionParams(
            text_document=T.TextDocumentIdentifier(uri=u), position=pos(text, needle, offset)))
        items = r if isinstance(r, list) else (r.items if r else [])
        return {i.label: i for i in items}

    # --- completion
    top = await complete(MAIN, "resources queues")
    check("completion: top-level blocks", {"resource <name>", "resources <baseName>", "group", "locals",
                                           "function <name>", "composite status", "requirement <name>"} <= set(top), sorted(top))
    names_in_expr = await complete(MAIN, "upper(region)", 6)
    check("completion: locals of every file and builtins",
          {"prefix", "region", "name", "full", "self", "req", "upper", "jsonencode"} <= set(names_in_expr), sorted(names_in_expr))
    check("completion: builtin signature", "upper(str string)" == names_in_expr["upper"].detail, names_in_expr["upper"].detail)
    check("completion: no each outside a template", "each" not in names_in_expr, sorted(names_in_expr))

    # Edit: type `req.` then `self.` then `req.resource.` (incremental changes).
    version = [1]

    async def edit(line, char, text_, end=None):
        version[0] += 1
        start = T.Position(line=line, character=char)
        client.text_document_did_change(T.DidChangeTextDocumentParams(
            text_document=T.VersionedTextDocumentIdentifier(uri=main_uri, version=version[0]),
            content_changes=[T.TextDocumentContentChangePartial(range=T.Range(start=start, end=end or start), text=text_)]))

    line_v = pos(MAIN, "v    = each.value").line
    doc = MAIN.splitlines(keepends=True)
    await edit(line_v + 1, 0, "      w = req.\n")
    r = await client.text_document_completion_async(T.CompletionParams(
        text_document=T.TextDocumentIdentifier(uri=main_uri), position=T.Position(line=line_v + 1, character=14)))
    labels = {i.label for i in (r if isinstance(r, list) else r.items)}
    check("completion: req fields", {"composite", "resource", "resources", "connection", "extra_resources", "context"} <= labels, labels)
    await edit(line_v + 1, 14, "resource.", T.Position(line=line_v + 1, character=14))
    r = await client.text_document_completion_async(T.CompletionParams(
        text_document=T.TextDocumentIdentifier(uri=main_uri), position=T.Position(line=line_v + 1, character=23)))
    labels = {i.label for i in (r if isinstance(r, list) else r.items)}
    check("completion: resource names after req.resource.", labels == {"bucket"}, labels)
    await edit(line_v + 1, 10, "self.", T.Position(line=line_v + 1, character=23))
    r = await client.text_document_completion_async(T.CompletionParams(
        text_document=T.TextDocumentIdentifier(uri=main_uri), position=T.Position(line=line_v + 1, character=15)))
    labels = {i.label for i in (r if isinstance(r, list) else r.items)}
    check("completion: self in a template", {"name", "basename", "resource", "connection"} <= labels, labels)
    await edit(line_v + 1, 10, "each.", T.Position(line=line_v + 1, character=15))
    r = await client.text_document_completion_async(T.CompletionParams(
        text_document=T.TextDocumentIdentifier(uri=main_uri), position=T.Position(line=line_v + 1, character=15)))
    labels = {i.label for i in (r if isinstance(r, list) else r.items)}
    check("completion: each", labels == {"key", "value"}, labels)
    # Back to the original text (one full-range change).
    version[0] += 1
    client.text_document_did_change(T.DidChangeTextDocumentParams(
        text_document=T.VersionedTextDocumentIdentifier(uri=main_uri, version=version[0]),
        content_changes=[T.TextDocumentContentChangeWholeDocument(text=MAIN)]))

    # --- hover
    async def hover(text, needle, offset=0, u=main_uri):
        h = await client.text_document_hover_async(T.HoverParams(
            text_document=T.TextDocumentIdentifier(uri=u), position=pos(text, needle, offset)))
        return h.contents.value if h else None

    h = await hover(MAIN, "upper(")
    check("hover: builtin signature and description", h and "upper(str string)" in h and "Uppercase" in h, h)
    h = await hover(MAIN, "prefix}")
    check("hover: local's expression and type", h and 'prefix = "demo"' in h and "string" in h, h)
    h = await hover(MAIN, 'tags", {', 1)
    check("hover: user function's args and defaults", h and 'function tags(env = "dev")' in h, h)
    h = await hover(MAIN, "req.resource", 5)
    check("hover: req field", h and "req.resource" in h, h)

    # --- the sample request: a local's value, deferred blocks as code lenses
    h = await hover(LOCALS, "name   =", 0, locals_uri)
    check("hover: a local's value with the sample request", h and "With the sample request" in h and '"demo-xr"' in h, h)
    lenses = await client.text_document_code_lens_async(T.CodeLensParams(
        text_document=T.TextDocumentIdentifier(uri=main_uri)))
    titles = [l.command.title for l in (lenses or [])]
    check("codeLens: the sample run's summary", any(t.startswith("sample request (xr.yaml)") for t in titles), titles)
    check("codeLens: a deferred block and why", any("queues" in t and "deferred: incomplete" in t for t in titles), titles)

    # --- definition and references across files
    loc = await client.text_document_definition_async(T.DefinitionParams(
        text_document=T.TextDocumentIdentifier(uri=main_uri), position=pos(MAIN, "region)")))
    loc = loc[0] if isinstance(loc, list) else loc
    check("definition: in another file", loc and loc.uri == locals_uri and loc.range.start == pos(LOCALS, "region ="), loc)
    loc = await client.text_document_definition_async(T.DefinitionParams(
        text_document=T.TextDocumentIdentifier(uri=main_uri), position=pos(MAIN, "req.resource.bucket", 14)))
    loc = loc[0] if isinstance(loc, list) else loc
    check("definition: req.resource.NAME", loc and loc.uri == main_uri and loc.range.start == pos(MAIN, "bucket {"), loc)
    refs = await client.text_document_references_async(T.ReferenceParams(
        text_document=T.TextDocumentIdentifier(uri=locals_uri), position=pos(LOCALS, "prefix ="),
        context=T.ReferenceContext(include_declaration=True)))
    check("references: definition and two uses", refs and len(refs) == 3 and {r.uri for r in refs} == {main_uri, locals_uri}, refs)

    # --- rename across files (prepare first)
    prep = await client.text_document_prepare_rename_async(T.PrepareRenameParams(
        text_document=T.TextDocumentIdentifier(uri=main_uri), position=pos(MAIN, "prefix}", 2)))
    check("prepareRename: the name's range", prep is not None, prep)
    edit_ = await client.text_document_rename_async(T.RenameParams(
        text_document=T.TextDocumentIdentifier(uri=main_uri), position=pos(MAIN, "prefix}"), new_name="stem"))
    changes = edit_.changes if edit_ else {}
    check("rename: both files", set(changes) == {main_uri, locals_uri} and sum(len(v) for v in changes.values()) == 3, changes)
    check("rename: new text", all(e.new_text == "stem" for v in changes.values() for e in v), changes)
    edit_ = await client.text_document_rename_async(T.RenameParams(
        text_document=T.TextDocumentIdentifier(uri=main_uri), position=pos(MAIN, 'tags", {', 1), new_name="labels"))
    changes = edit_.changes if edit_ else {}
    check("rename: a function and its invoke", set(changes) == {main_uri, locals_uri}, changes)
    try:
        await client.text_document_rename_async(T.RenameParams(
            text_document=T.TextDocumentIdentifier(uri=main_uri), position=pos(MAIN, "prefix}"), new_name="region"))
        check("rename: refuses a taken name", False, "no error")
    except Exception as e:  # noqa: BLE001 (the server's error response)
        check("rename: refuses a taken name", "already defined" in str(e), e)

    # --- formatting: fmt's output
    client.text_document_did_open(T.DidOpenTextDocumentParams(
        text_document=T.TextDocumentItem(uri=fmt_uri, language_id="hcl", version=1, text=UNFORMATTED)))
    edits = await client.text_document_formatting_async(T.DocumentFormattingParams(
        text_document=T.TextDocumentIdentifier(uri=fmt_uri), options=T.FormattingOptions(tab_size=2, insert_spaces=True)))
    want_fmt = subprocess.run([fn_hcl, "fmt", "-"], input=UNFORMATTED, capture_output=True, text=True).stdout
    # `fmt -` prints the result followed by a newline, as the Go tool does.
    check("formatting: fmt's output", edits and len(edits) == 1 and edits[0].new_text + "\n" == want_fmt, (edits, want_fmt))

    # --- document symbols
    syms = await client.text_document_document_symbol_async(T.DocumentSymbolParams(
        text_document=T.TextDocumentIdentifier(uri=main_uri)))
    outline = [s.name for s in syms]
    check("documentSymbol: blocks", outline == ["resource bucket", "resources queues"], outline)
    kids = [c.name for c in (syms[0].children or [])]
    check("documentSymbol: locals inside", "full" in kids, kids)

    # --- semantic tokens
    toks = await client.text_document_semantic_tokens_full_async(T.SemanticTokensParams(
        text_document=T.TextDocumentIdentifier(uri=main_uri)))
    data = toks.data
    legend = caps.semantic_tokens_provider.legend.token_types
    check("semanticTokens: 5 numbers a token", len(data) % 5 == 0 and len(data) > 50, len(data))
    first_type = legend[data[3]] if data else None
    check("semanticTokens: `resource` is a keyword", first_type == "keyword" and data[0] == 0 and data[1] == 0 and data[2] == 8, data[:5])

    # --- signature help
    sh = await client.text_document_signature_help_async(T.SignatureHelpParams(
        text_document=T.TextDocumentIdentifier(uri=main_uri), position=pos(MAIN, "upper(region)", 7)))
    check("signatureHelp: builtin", sh and sh.signatures[0].label.startswith("upper(") and sh.active_parameter == 0, sh)

    # --- bad input through a real client
    h = await client.text_document_hover_async(T.HoverParams(
        text_document=T.TextDocumentIdentifier(uri=main_uri), position=T.Position(line=9999, character=9999)))
    check("hover past the end: null", h is None, h)
    r = await client.text_document_completion_async(T.CompletionParams(
        text_document=T.TextDocumentIdentifier(uri=main_uri), position=T.Position(line=2, character=9999)))
    check("completion past a line's end answers", r is not None, r)
    for broken in ['locals {\n  s = "abc\n', 'locals {\n  h = <<EOT\nabc\n', 'resource x {\n  body = { a = "${x', '\x00\ufeff{{{']:
        client.diagnostics.pop(main_uri, None)
        version[0] += 1
        client.text_document_did_change(T.DidChangeTextDocumentParams(
            text_document=T.VersionedTextDocumentIdentifier(uri=main_uri, version=version[0]),
            content_changes=[T.TextDocumentContentChangeWholeDocument(text=broken)]))
        for line in range(0, 4):
            for ch in (0, 3, 9, 200):
                p = T.Position(line=line, character=ch)
                ident = T.TextDocumentIdentifier(uri=main_uri)
                await client.text_document_completion_async(T.CompletionParams(text_document=ident, position=p))
                await client.text_document_hover_async(T.HoverParams(text_document=ident, position=p))
                await client.text_document_signature_help_async(T.SignatureHelpParams(text_document=ident, position=p))
        await client.text_document_semantic_tokens_full_async(T.SemanticTokensParams(text_document=T.TextDocumentIdentifier(uri=main_uri)))
        await wait_for(lambda: bool(client.diagnostics.get(main_uri)), f"diagnostics of {broken!r}")
        check(f"broken text {broken!r}: error diagnostics", any(x.severity == T.DiagnosticSeverity.Error for x in client.diagnostics.get(main_uri, [])), client.diagnostics.get(main_uri))
    try:
        await client.protocol.send_request_async("fnhcl/noSuchMethod", {})
        check("unknown method: an error", False, "answered")
    except Exception as e:  # noqa: BLE001
        check("unknown method: MethodNotFound", "-32601" in str(e) or "not supported" in str(e), e)

    # --- shutdown / exit
    await asyncio.wait_for(client.shutdown_async(None), TIMEOUT)
    client.exit(None)
    server = client._server
    rc = await asyncio.wait_for(server.wait(), TIMEOUT)
    check("exit after shutdown: code 0", rc == 0, rc)
    await client.stop()


def frame(obj_or_bytes):
    body = obj_or_bytes if isinstance(obj_or_bytes, bytes) else json.dumps(obj_or_bytes).encode()
    return b"Content-Length: %d\r\n\r\n" % len(body) + body


def read_message(stream):
    size = None
    while True:
        line = stream.readline()
        if not line:
            return None
        if line == b"\r\n":
            break
        k, _, v = line.decode().partition(":")
        if k.lower() == "content-length":
            size = int(v.strip())
    return json.loads(stream.read(size))


def read_response(stream, id_):
    while True:
        m = read_message(stream)
        if m is None or m.get("id") == id_:
            return m


INIT = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"capabilities": {}}}


def raw_checks(ls):
    # Malformed JSON-RPC: answered (or logged), and the server reads on.
    p = subprocess.Popen([ls, "serve"], stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    p.stdin.write(frame({"jsonrpc": "2.0", "id": 9, "method": "textDocument/hover", "params": {}}))
    p.stdin.flush()
    r = read_response(p.stdout, 9)
    check("request before initialize: ServerNotInitialized", r and r["error"]["code"] == -32002, r)
    p.stdin.write(frame(INIT))
    p.stdin.flush()
    check("raw initialize", read_response(p.stdout, 1).get("result") is not None)
    p.stdin.write(frame(b"{this is not json"))
    p.stdin.write(frame({"jsonrpc": "2.0", "id": 2, "method": 17}))
    p.stdin.write(frame({"jsonrpc": "2.0", "id": 3, "method": "textDocument/hover", "params": {"bogus": True}}))
    p.stdin.write(frame({"jsonrpc": "2.0", "id": 4, "method": "textDocument/hover",
                         "params": {"textDocument": {"uri": "file:///nowhere.hcl"}, "position": {"line": 0, "character": 0}}}))
    p.stdin.flush()
    r = read_response(p.stdout, 2)
    check("a message with a bad method: InvalidRequest", r and r["error"]["code"] == -32600, r)
    r = read_response(p.stdout, 3)
    check("bad params: InvalidParams", r and r["error"]["code"] == -32602, r)
    r = read_response(p.stdout, 4)
    check("hover in an unknown document: null", r and "result" in r and r["result"] is None, r)
    # stdin EOF: the server exits by itself (code 1: no shutdown came).
    p.stdin.close()
    try:
        rc = p.wait(TIMEOUT)
    except subprocess.TimeoutExpired:
        p.kill()
        rc = "hung"
    check("stdin EOF: exits", rc == 1, rc)

    # A client that vanishes: nobody reads the answers any more.
    p = subprocess.Popen([ls, "serve"], stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    p.stdin.write(frame(INIT))
    p.stdin.flush()
    read_response(p.stdout, 1)
    p.stdout.close()
    try:
        for i in range(100, 400):
            p.stdin.write(frame({"jsonrpc": "2.0", "id": i, "method": "shutdown" if i == 100 else "fnhcl/x"}))
            p.stdin.flush()
    except (BrokenPipeError, OSError):
        pass
    try:
        rc = p.wait(TIMEOUT)
    except subprocess.TimeoutExpired:
        p.kill()
        rc = "hung"
    check("vanished client: the server exits", rc != "hung", rc)

    # Broken framing: the server stops reading and exits.
    p = subprocess.Popen([ls, "serve"], stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    try:
        p.stdin.write(b"GET / HTTP/1.1\r\n\r\n")
        p.stdin.flush()
    except (BrokenPipeError, OSError):
        pass
    try:
        rc = p.wait(TIMEOUT)
    except subprocess.TimeoutExpired:
        p.kill()
        rc = "hung"
    check("broken framing: exits", rc == 1, rc)

    # `version` and `fn-hcl lsp`'s sibling binary answer.
    v = subprocess.run([ls, "version"], capture_output=True, text=True, timeout=TIMEOUT)
    check("version", v.returncode == 0 and v.stdout.strip() != "", v)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--ls", required=True)
    ap.add_argument("--fn-hcl", required=True)
    a = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        asyncio.run(asyncio.wait_for(main_flow(a.ls, a.fn_hcl, tmp), 120))
    raw_checks(a.ls)
    print(f"{passed} passed, {len(failures)} failed")
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
