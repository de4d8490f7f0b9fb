#!/usr/bin/env python3
"""Turns upstream Go test tables into data fixtures for tests/upstream.rs.

usage: extract.py MIRRORS_DIR OUT_DIR

MIRRORS_DIR holds bare git mirrors (owner+name/repo, as the project's `fetch` tool
leaves them); each suite is read at the version the Go implementation builds with.
Only facts are written: a call's arguments and its expected value or error, as JSON
lines (one case a line). Nothing of the Go code is copied.

Selection: a case is kept when its test calls a function the DSL has under a name
bound to that very implementation (function-hcl's function table, its api.go, decides:
e.g. stdlib.IndexFunc is not `index`, so its tests are not fn-hcl's). A case is
written with "skip" (and counted as not applicable) when its arguments or result
involve what a DSL program cannot produce: unknown values, marks, capsule types.
A case the extractor cannot read (Go computed in code) is written with "skip" too.
"""
import json
import os
import re
import subprocess
import sys

# ----------------------------------------------------------------------------------
# Go tokens and literals


class Tok:
    def __init__(self, kind, text, pos):
        self.kind, self.text, self.pos = kind, text, pos

    def __repr__(self):
        return f"{self.kind}:{self.text}"


TOKEN_RE = re.compile(r"""
    (?P<ws>[ \t\r\n]+)
  | (?P<comment>//[^\n]*|/\*.*?\*/)
  | (?P<raw>`[^`]*`)
  | (?P<str>"(?:\\.|[^"\\\n])*")
  | (?P<rune>'(?:\\.|[^'\\])+')
  | (?P<num>0[xX][0-9a-fA-F_]+|(?:\d[\d_]*\.?\d*|\.\d+)(?:[eE][+-]?\d+)?)
  | (?P<ident>[A-Za-z_][A-Za-z0-9_]*)
  | (?P<op>\.\.\.|:=|==|!=|&&|\|\||<-|<=|>=|[{}()\[\],:;.+\-*/&|!=<>%^])
""", re.S | re.X)


def tokenize(src):
    out, i = [], 0
    while i < len(src):
        m = TOKEN_RE.match(src, i)
        if not m:
            out.append(Tok("bad", src[i], i))
            i += 1
            continue
        k = m.lastgroup
        if k not in ("ws", "comment"):
            out.append(Tok(k, m.group(k), i))
        i = m.end()
    return out


def go_string(tok):
    if tok.kind == "raw":
        return tok.text[1:-1].replace("\r", "")
    body = tok.text[1:-1]
    out = bytearray()
    i = 0
    while i < len(body):
        c = body[i]
        if c != "\\":
            out += c.encode()
            i += 1
            continue
        e = body[i + 1]
        simple = {"n": b"\n", "t": b"\t", "r": b"\r", '"': b'"', "\\": b"\\", "'": b"'",
                  "a": b"\a", "b": b"\b", "f": b"\f", "v": b"\v"}
        if e in simple:
            out += simple[e]
            i += 2
        elif e == "x":
            out.append(int(body[i + 2:i + 4], 16))
            i += 4
        elif e in "01234567":
            out.append(int(body[i + 1:i + 4], 8))
            i += 4
        elif e == "u":
            out += chr(int(body[i + 2:i + 6], 16)).encode()
            i += 6
        elif e == "U":
            out += chr(int(body[i + 2:i + 10], 16)).encode()
            i += 10
        else:
            raise ValueError("escape " + e)
    try:
        return out.decode("utf-8")
    except UnicodeDecodeError:
        raise NA("a string that is not UTF-8 (HCL strings are)")


class Unreadable(Exception):
    pass


class NA(Exception):
    """A value a DSL program cannot produce (unknown, marked, capsule)."""


# ----------------------------------------------------------------------------------
# A parser of Go expressions, enough for test tables of cty values.

class P:
    def __init__(self, toks, i=0, env=None):
        self.t, self.i = toks, i
        self.env = env if env is not None else {}

    def peek(self, k=0):
        return self.t[self.i + k] if self.i + k < len(self.t) else Tok("eof", "", -1)

    def next(self):
        tok = self.peek()
        self.i += 1
        return tok

    def eat(self, text):
        if self.peek().text == text:
            self.i += 1
            return True
        return False

    def expect(self, text):
        if not self.eat(text):
            raise Unreadable(f"expected {text!r} at {self.peek()!r}")

    def skip_balanced(self):
        """Skips one expression (up to a top-level , or closing bracket)."""
        depth = 0
        while True:
            tok = self.peek()
            if tok.kind == "eof":
                return
            if tok.text in "([{":
                depth += 1
            elif tok.text in ")]}":
                if depth == 0:
                    return
                depth -= 1
            elif tok.text == "," and depth == 0:
                return
            self.i += 1

    # expressions -----------------------------------------------------------------
    def expr(self):
        v = self.unary()
        while self.peek().text in ("+", "-", "*", "/") and self.peek(1).text not in (")", ","):
            op = self.next().text
            r = self.unary()
            if op == "+" and isinstance(v, str) and isinstance(r, str):
                v = v + r
            elif isinstance(v, (int, float)) and isinstance(r, (int, float)) and not isinstance(v, bool):
                v = {"+": v + r, "-": v - r, "*": v * r, "/": v / r if isinstance(v, float) or isinstance(r, float) else v // r}[op]
            else:
                raise Unreadable("operator " + op)
        return v

    def unary(self):
        if self.eat("-"):
            v = self.unary()
            if isinstance(v, (int, float)):
                return -v
            raise Unreadable("negation")
        if self.eat("&"):
            return self.unary()
        return self.postfix(self.primary())

    def postfix(self, v):
        while True:
            if self.peek().text == "." and self.peek(1).kind == "ident":
                name = self.peek(1).text
                if isinstance(v, dict) and "go" in v:
                    break
                self.i += 2
                args = self.call_args() if self.peek().text == "(" else None
                v = self.method(v, name, args)
            else:
                return v
        return v

    def call_args(self):
        self.expect("(")
        args = []
        while not self.eat(")"):
            args.append(self.expr())
            if self.eat("..."):
                args[-1] = {"spread": args[-1]}
            self.eat(",")
        return args

    def method(self, v, name, args):
        if name in ("Mark", "WithMarks", "MarkWithPaths"):
            raise NA("marked value")
        if name in ("RefineNotNull", "NewValue"):
            return v
        if name in ("Refine", "StringPrefix", "StringPrefixFull", "NumberRangeInclusive",
                    "NumberRangeLowerBound", "NumberRangeUpperBound", "CollectionLengthLowerBound",
                    "CollectionLengthUpperBound", "CollectionLength", "NotNull"):
            if isinstance(v, dict) and v.get("k") == "unknown":
                return v
            raise NA("refined value")
        raise Unreadable("method " + name)

    def composite(self, elem):
        """`{...}` after a type: a list of elements or key: value pairs."""
        self.expect("{")
        items, keyed = [], []
        while not self.eat("}"):
            if self.peek().kind == "eof":
                raise Unreadable("unterminated composite literal")
            if self.peek().text == "{":
                items.append(self.guarded(lambda: self.composite(elem)))
            else:
                start = self.i
                k = self.guarded(self.expr)
                if self.eat(":"):
                    if self.peek().text == "{":
                        keyed.append((k, self.guarded(lambda: self.composite(elem))))
                    else:
                        keyed.append((k, self.guarded(self.expr)))
                else:
                    items.append(k)
            self.eat(",")
        return {"go": "composite", "items": items, "keyed": keyed}

    def guarded(self, f):
        """`f()`, or a marker of why it could not be read (the tokens skipped)."""
        start = self.i
        try:
            return f()
        except (NA, Unreadable, ValueError, IndexError, KeyError, TypeError) as e:
            self.i = start
            self.skip_balanced()
            if self.i == start and self.peek().kind != "eof":
                self.i += 1  # a stray token: never loop on it
            return {"go": "bad", "na": isinstance(e, NA), "why": str(e)[:80]}

    def go_type(self):
        """Skips a Go type, returning its text."""
        start = self.i
        if self.eat("["):
            self.eat("]")
            self.go_type()
        elif self.peek().text == "map":
            self.next()
            self.expect("[")
            self.go_type()
            self.expect("]")
            self.go_type()
        elif self.eat("*"):
            self.go_type()
        elif self.peek().text == "struct":
            self.next()
            self.expect("{")
            depth = 1
            while depth:
                tok = self.next()
                depth += {"{": 1, "}": -1}.get(tok.text, 0)
        elif self.peek().text == "interface":
            self.next()
            self.expect("{")
            self.expect("}")
        else:
            self.next()
            if self.eat("."):
                self.next()
        return " ".join(t.text for t in self.t[start:self.i])

    def primary(self):
        tok = self.peek()
        if tok.kind in ("str", "raw"):
            self.i += 1
            return go_string(tok)
        if tok.kind == "num":
            self.i += 1
            t = tok.text.replace("_", "")
            if re.fullmatch(r"0[xX][0-9a-fA-F]+", t):
                return int(t, 16)
            if re.fullmatch(r"\d+", t):
                return int(t)
            return float(t)
        if tok.kind == "rune":
            self.i += 1
            return {"go": "rune"}
        if tok.text == "(":
            self.i += 1
            v = self.expr()
            self.expect(")")
            return v
        if tok.text in ("[", "map"):
            ty = self.go_type()
            if ty == "[ ] byte" and self.peek().text == "(":
                args = self.call_args()
                if len(args) == 1 and isinstance(args[0], str):
                    return args[0]
                raise Unreadable("[]byte conversion")
            if self.peek().text == "{":
                c = self.composite(ty)
                c["type"] = ty
                return c
            return {"go": "type", "text": ty}
        if tok.kind == "ident":
            if tok.text in ("true", "false"):
                self.i += 1
                return tok.text == "true"
            if tok.text == "nil":
                self.i += 1
                return None
            if tok.text == "cty":
                self.i += 1
                self.expect(".")
                return self.cty(self.next().text)
            if tok.text == "big" or tok.text == "strings" or tok.text == "fmt" or tok.text == "math":
                raise Unreadable("computed value " + tok.text)
            # An identifier: a local constant or a struct literal (`Type{...}`).
            self.i += 1
            name = tok.text
            if self.eat("."):
                name += "." + self.next().text
            if self.peek().text == "(":
                args = self.call_args()
                return {"go": "call", "name": name, "args": args}
            if self.peek().text == "{" and name.split(".")[-1][:1].isupper():
                return self.composite(name)
            if name in self.env:
                return self.env[name]
            return {"go": "ident", "name": name}
        raise Unreadable(f"unexpected {tok!r}")

    # cty --------------------------------------------------------------------------
    def cty(self, name):
        consts = {
            "True": {"k": "bool", "v": True}, "False": {"k": "bool", "v": False},
            "Zero": {"k": "number", "v": "0"},
            "PositiveInfinity": {"k": "number", "v": "+Inf"},
            "NegativeInfinity": {"k": "number", "v": "-Inf"},
            "DynamicVal": {"k": "unknown", "t": "dynamic"},
            "EmptyObjectVal": {"k": "object", "v": {}},
            "EmptyTupleVal": {"k": "tuple", "v": []},
            "NilVal": {"k": "nil"},
            "String": "string", "Number": "number", "Bool": "bool",
            "DynamicPseudoType": "dynamic", "EmptyObject": ["object", {}],
            "EmptyTuple": ["tuple", []], "NilType": "nil",
        }
        if name in consts:
            return consts[name]
        args = self.call_args() if self.peek().text == "(" else None
        if args is None:
            raise Unreadable("cty." + name)
        a = args[0] if args else None
        if name == "StringVal":
            if not isinstance(a, str):
                raise Unreadable("StringVal of non-literal")
            return {"k": "string", "v": a}
        if name in ("NumberIntVal", "NumberUIntVal"):
            if not isinstance(a, int):
                raise Unreadable("int of non-literal")
            return {"k": "number", "v": str(a)}
        if name == "NumberFloatVal":
            if not isinstance(a, (int, float)):
                raise Unreadable("float of non-literal")
            # NumberFloatVal is the float64's exact binary value.
            return {"k": "number", "v": repr(float(a)), "float": True}
        if name == "MustParseNumberVal":
            return {"k": "number", "v": a}
        if name == "BoolVal":
            if not isinstance(a, bool):
                raise Unreadable("bool of non-literal")
            return {"k": "bool", "v": a}
        if name in ("NullVal",):
            return {"k": "null", "t": a}
        if name == "UnknownVal":
            return {"k": "unknown", "t": a}
        if name in ("ListVal", "SetVal", "TupleVal"):
            if not (isinstance(a, dict) and a.get("go") == "composite"):
                raise Unreadable(name + " of non-literal")
            return {"k": name[:-3].lower(), "v": a["items"]}
        if name in ("ListValEmpty", "SetValEmpty", "MapValEmpty"):
            return {"k": name[:-8].lower(), "v": [] if name != "MapValEmpty" else {}, "t": a}
        if name in ("MapVal", "ObjectVal"):
            if not (isinstance(a, dict) and a.get("go") == "composite"):
                raise Unreadable(name + " of non-literal")
            kv = {}
            for k, v in a["keyed"]:
                if not isinstance(k, str):
                    raise Unreadable("computed key")
                kv[k] = v
            return {"k": name[:-3].lower(), "v": kv}
        if name in ("List", "Set", "Map"):
            return [name.lower(), a]
        if name == "Object":
            kv = {}
            for k, v in a["keyed"]:
                kv[k] = v
            return ["object", kv]
        if name == "Tuple":
            return ["tuple", a["items"]]
        if name == "ObjectWithOptionalAttrs":
            raise NA("optional attributes")
        if name in ("CapsuleVal", "Capsule"):
            raise NA("capsule")
        raise Unreadable("cty." + name)


# ----------------------------------------------------------------------------------
# Values: checks and canonical JSON

def check_value(v, path="value"):
    """Raises NA for what a DSL program cannot pass; Unreadable for non-cty data."""
    if isinstance(v, dict) and v.get("go") == "bad":
        raise (NA if v["na"] else Unreadable)(v["why"])
    if not isinstance(v, dict) or "k" not in v:
        raise Unreadable(f"not a cty value at {path}: {str(v)[:60]}")
    k = v["k"]
    if k == "unknown":
        raise NA("unknown value")
    if k == "nil":
        raise NA("cty.NilVal (no DSL value is nil)")
    if k in ("list", "set", "tuple"):
        for i, x in enumerate(v["v"]):
            check_value(x, f"{path}[{i}]")
    if k in ("map", "object"):
        for kk, x in v["v"].items():
            check_value(x, f"{path}.{kk}")
    if "t" in v:
        check_type(v["t"])


def check_type(t):
    if isinstance(t, str):
        if t not in ("string", "number", "bool", "dynamic"):
            raise Unreadable("type " + t)
        return
    if isinstance(t, list):
        if t[0] in ("list", "set", "map"):
            check_type(t[1])
        elif t[0] == "object":
            for x in t[1].values():
                check_type(x)
        elif t[0] == "tuple":
            for x in t[1]:
                check_type(x)
        return
    raise Unreadable(f"type {t!r}")


# ----------------------------------------------------------------------------------
# Test functions

class _Funcs:
    """`finditer` over a file's test functions: (name, body) up to the next top-level
    `func` (a raw string in a table may hold a line that is just `}`)."""

    HEAD = re.compile(r"^func (Test\w+)\(t \*testing\.T\) \{\n", re.M)

    def finditer(self, src):
        heads = list(self.HEAD.finditer(src))
        for i, h in enumerate(heads):
            end = heads[i + 1].start() if i + 1 < len(heads) else len(src)
            nxt = re.search(r"^func ", src[h.end():end], re.M)
            if nxt:
                end = h.end() + nxt.start()
            yield _Match(h.group(1), src[h.end():end])


class _Match:
    def __init__(self, name, body):
        self._g = (None, name, body)

    def group(self, i):
        return self._g[i]


FUNC_RE = _Funcs()


def tables_of(body_toks):
    """Every test table: `NAME := []struct{...}{...}` or a map of structs, in order."""
    p = P(body_toks)
    found = []
    while p.peek().kind != "eof":
        # A local value the table refers to: `name := cty....` (or `name = ` in a var block).
        if p.peek().kind == "ident" and p.peek(1).text in (":=", "=") and p.peek(2).text == "cty":
            name = p.peek().text
            p.i += 2
            v = p.guarded(p.expr)
            if not (isinstance(v, dict) and v.get("go") == "bad"):
                p.env[name] = v
            continue
        if p.peek().kind == "ident" and p.peek(1).text == ":=" and p.peek(2).text in ("[", "map"):
            name = p.peek().text
            p.i += 2
            start = p.i
            ty = p.go_type()
            if "struct" not in ty:
                p.i = start
                continue
            fields = struct_fields(ty)
            c = p.composite(ty)
            found.append((name, fields, c))
            continue
        p.i += 1
    return found, p.env


def struct_fields(ty):
    inner = ty[ty.index("struct") + len("struct"):]
    inner = inner.strip()[1:-1]
    toks = tokenize(inner)
    fields, i = [], 0
    # `A, B cty.Value` or `A cty.Value` separated by newlines (tokens lost them): parse
    # greedily: names then a type.
    names = []
    while i < len(toks):
        t = toks[i]
        if t.kind == "ident" and (i + 1 < len(toks)) and toks[i + 1].text == ",":
            names.append(t.text)
            i += 2
            continue
        if t.kind == "ident":
            names.append(t.text)
            # type follows
            j = i + 1
            sub = P(toks, j)
            ty = sub.go_type()
            for n in names:
                fields.append((n, ty))
            names = []
            i = sub.i
            continue
        i += 1
    return fields


def rows(table, fields):
    """Each table element as {field: value}; map-keyed tables keep the key as name."""
    out = []
    entries = [(None, x) for x in table["items"]] + list(table["keyed"])
    for key, e in entries:
        if not (isinstance(e, dict) and e.get("go") == "composite"):
            continue
        row = {}
        if e["keyed"]:
            for k, v in e["keyed"]:
                if isinstance(k, dict) and k.get("go") == "ident":
                    row[k["name"]] = v
        else:
            for (n, _), v in zip(fields, e["items"]):
                row[n] = v
        out.append((key, row))
    return out


def value_fields(fields):
    return [n for n, t in fields if t in ("cty . Value", "[ ] cty . Value")]


WANT_NAMES = ("Want", "Expected", "Output", "Result", "Exp", "WantVal", "ExpectedVal", "Want_")
ERR_NAMES = ("Err", "WantErr", "ExpectedErr", "Error", "WantError", "ErrStr", "ExpErr",
             "WantErrStr", "ExpectedError", "Errors")


def field_named(fields, names):
    low = {n.lower(): n for n, _ in fields}
    for n in names:
        if n.lower() in low:
            return low[n.lower()]
    return None


def call_in(body, var, fields, known):
    """The function call on the table's fields: (go name, [field or literal args])."""
    fnames = {n for n, _ in fields}
    # XFunc.Call([]cty.Value{test.A, test.B})
    for m in re.finditer(r"(\w+(?:\.\w+)?)\.Call\(\[\]cty\.Value\{([^}]*)\}\)", body):
        fn = m.group(1).split(".")[-1]
        args = [a.strip() for a in m.group(2).split(",") if a.strip()]
        return fn, args
    arg = r"(?:" + var + r"\.\w+(?:\.\.\.)?|cty\.\w+\([^()]*\))"
    for m in re.finditer(r"(?<![\w.])(\w+)\(((?:" + arg + r"\s*,?\s*)+)\)", body):
        fn = m.group(1)
        if fn in ("Run", "Errorf", "Fatalf", "Sprintf", "Equal", "RawEquals", "Error", "Sprint"):
            continue
        if fn + "Func" in known or fn in known:
            args = [a.strip() for a in m.group(2).split(",") if a.strip()]
            return fn, args
    return None


TO_FUNCS = {"string": "tostring", "number": "tonumber", "bool": "tobool"}


def to_func_name(t):
    """Terraform's MakeToFunc target type to the DSL's function name."""
    if isinstance(t, str):
        return TO_FUNCS.get(t)
    if isinstance(t, list) and t[0] in ("list", "set", "map") and t[1] == "dynamic":
        return "to" + t[0]
    return None


def extract_file(src, table_map, suite, out, skipped):
    for fm in FUNC_RE.finditer(src):
        tname, body = fm.group(1), fm.group(2)
        toks = tokenize(body)
        try:
            tables, env = tables_of(toks)
        except (Unreadable, NA, ValueError, IndexError, KeyError) as e:
            skipped.append((suite, tname, "table not readable: " + str(e)[:80]))
            continue
        for ti, (tab_name, fields, table) in enumerate(tables):
            label = tname if ti == 0 else f"{tname}/{tab_name}"
            loop = re.search(r"for\s+(?:\w+\s*,\s*)?(\w+)\s*:=\s*range\s+" + tab_name + r"\b", body)
            if not loop:
                skipped.append((suite, label, "no loop over the table"))
                continue
            var = loop.group(1)
            seg = body[loop.end():]
            nxt = re.search(r"for\s+(?:\w+\s*,\s*)?\w+\s*:=\s*range\s+", seg)
            if nxt:
                seg = seg[:nxt.start()]
            extract_table(suite, label, var, seg, fields, table, env, table_map, out, skipped)


def extract_table(suite, tname, var, body, fields, table, env, table_map, out, skipped):
    to_func = re.search(r"MakeToFunc\(" + var + r"\.(\w+)\)", body)
    if to_func and "MakeToFunc" in table_map:
        call = ("MakeToFunc", None)
        m = re.search(r"\.Call\(\[\]cty\.Value\{([^}]*)\}\)", body)
        argspec = [a.strip() for a in m.group(1).split(",") if a.strip()] if m else []
    else:
        call = call_in(body, var, fields, table_map)
        if call is None:
            skipped.append((suite, tname, "calls no function the DSL binds to this implementation"))
            return
        argspec = call[1]
    gofn = call[0]
    if gofn == "MakeToFunc":
        hcl = None
    else:
        fnvar = gofn if gofn.endswith("Func") else gofn + "Func"
        hcl = table_map.get(fnvar)
        if hcl is None:
            skipped.append((suite, tname, f"{fnvar}: not the implementation any DSL name is bound to"))
            return
    want_f = field_named(fields, WANT_NAMES)
    err_f = field_named(fields, ERR_NAMES)
    for idx, (key, row) in enumerate(rows(table, fields)):
        case = {"suite": suite, "test": tname, "n": idx, "fn": hcl}
        if key is not None:
            case["name"] = key if isinstance(key, str) else str(key)
        try:
            if gofn == "MakeToFunc":
                target = row.get(to_func.group(1))
                if isinstance(target, dict) and target.get("go") == "bad":
                    check_value(target)
                case["fn"] = to_func_name(target)
                if case["fn"] is None:
                    raise NA(f"conversion to {target}: no DSL function converts to it")
            args = []
            for a in argspec:
                spread = a.endswith("...")
                f = a[:-3] if spread else a
                if f.startswith(var + "."):
                    f = f.split(".", 1)[1]
                    if f not in row:
                        raise Unreadable(f"argument {a}")
                    v = row[f]
                else:
                    v = P(tokenize(f), env=env).expr()
                if spread:
                    if not (isinstance(v, dict) and v.get("go") == "composite"):
                        raise Unreadable("spread of non-literal")
                    args.extend(v["items"])
                else:
                    args.append(v)
            for i, a in enumerate(args):
                check_value(a, f"arg {i}")
            case["args"] = args
            errv = row.get(err_f) if err_f else None
            if isinstance(errv, dict) and errv.get("go") == "bad":
                check_value(errv, "error")
            if isinstance(errv, str) and errv != "":
                case["error"] = errv
            elif errv is True:
                case["error"] = True
            elif isinstance(errv, dict) and errv.get("go") == "call" and errv["name"] in ("errors.New",):
                case["error"] = errv["args"][0]
            elif errv not in (None, False, ""):
                raise Unreadable(f"error field {str(errv)[:40]}")
            if "error" not in case:
                w = row.get(want_f) if want_f else None
                check_value(w, "want")
                case["want"] = w
        except NA as e:
            case["skip"] = "not applicable: " + str(e)
            case.pop("args", None)
        except (Unreadable, ValueError, KeyError, TypeError, IndexError) as e:
            case["skip"] = "not extracted: " + str(e)[:80]
            case.pop("args", None)
        out.append(case)


def yaml_rows(src, test):
    """The rows of one go-cty-yaml test function's (map-keyed) table."""
    for fm in FUNC_RE.finditer(src):
        if fm.group(1) != test:
            continue
        tables, _ = tables_of(tokenize(fm.group(2)))
        _, fields, table = tables[0]
        return [(key, row) for key, row in rows(table, fields)]
    return []


def extract_yaml(repo, rev, out):
    """go-cty-yaml's decoder, encoder and type tests as yamldecode/yamlencode calls."""
    suite = "go-cty-yaml"
    plan = [("decode_test.go", "TestUnmarshal"), ("encode_test.go", "TestMarshal"),
            ("implied_type_test.go", "TestImpliedType"), ("cty_funcs_test.go", "TestYAMLDecodeFunc")]
    for f, test in plan:
        src = git_show(repo, rev, f)
        for idx, (key, row) in enumerate(yaml_rows(src, test)):
            case = {"suite": f"{suite}/{f}", "test": test, "n": idx}
            if key is not None:
                case["name"] = key
            try:
                conv = row.get("converter", row.get("conv", {"go": "ident", "name": "Standard"}))
                if not (isinstance(conv, dict) and conv.get("name") == "Standard"):
                    raise NA("a converter other than Standard (yamldecode/yamlencode use Standard)")
                if test == "TestMarshal":
                    check_value(row["val"], "val")
                    case.update(fn="yamlencode", args=[row["val"]])
                    case["want"] = {"k": "string", "v": row["want"]}
                else:
                    text = row.get("src", row.get("input"))
                    if not isinstance(text, str):
                        raise Unreadable("source is not a literal")
                    case.update(fn="yamldecode", args=[{"k": "string", "v": text}])
                    err = row.get("wantErr", "")
                    if err:
                        case["error"] = err
                    elif test == "TestImpliedType":
                        check_type(row["want"])
                        case["want_type"] = row["want"]
                    else:
                        ty = row.get("ty", "dynamic")
                        if isinstance(ty, dict) and ty.get("go") == "bad":
                            check_value(ty)
                        check_type(ty)
                        check_value(row["want"], "want")
                        if ty != "dynamic":
                            case["convert_to"] = ty
                        case["want"] = row["want"]
            except NA as e:
                case["skip"] = "not applicable: " + str(e)
                case.pop("args", None)
            except (Unreadable, ValueError, KeyError, TypeError, IndexError) as e:
                case["skip"] = "not extracted: " + str(e)[:80]
                case.pop("args", None)
            out.append(case)


def extract_textseg(repo, rev, out):
    """go-textseg's grapheme tests (Unicode 15.0's GraphemeBreakTest): input and clusters."""
    src = git_show(repo, rev, "textseg/tables_test.go")
    src = src[src.index("var unicodeGraphemeTests"):]
    src = src[:src.index("\nvar ", 10)]
    byte_list = lambda t: bytes(int(x, 16) for x in re.findall(r"0x[0-9a-f]+", t))
    pat = r"input:\s*\[\]byte\{([^}]*)\},\s*output:\s*\[\]\[\]byte\{(.*?)\},\n\t\}"
    for n, m in enumerate(re.finditer(pat, src, re.S)):
        outs = re.findall(r"\[\]byte\{([^}]*)\}", m.group(2))
        out.append({"suite": "go-textseg/tables_test.go", "test": "TestScanGraphemeClusters", "n": n,
                    "input": byte_list(m.group(1)).decode(),
                    "clusters": [byte_list(o).decode() for o in outs]})


def extract_hclwrite(repo, rev, out):
    """hclwrite's TestFormat: input text and the formatted text."""
    src = git_show(repo, rev, "hclwrite/format_test.go")
    for idx, (key, row) in enumerate(yaml_rows(src, "TestFormat")):
        case = {"suite": "hcl/hclwrite/format_test.go", "test": "TestFormat", "n": idx}
        if isinstance(row.get("input"), str) and isinstance(row.get("want"), str):
            case.update(input=row["input"], want=row["want"])
        else:
            case["skip"] = "not extracted: computed strings"
        out.append(case)


CALL_RE = re.compile(r"(?<![\w.\"])([A-Za-z_][\w]*(?:::[\w]+)*)\s*\(")


def hcl_context(ctx, std):
    """An EvalContext literal as (variables, function names), or NA/Unreadable."""
    if ctx is None:
        return {}, None
    if isinstance(ctx, dict) and ctx.get("go") == "bad":
        check_value(ctx)
    if not (isinstance(ctx, dict) and ctx.get("go") == "composite"):
        raise Unreadable("context")
    variables, functions = {}, None
    for k, v in ctx["keyed"]:
        key = k.get("name") if isinstance(k, dict) else k
        if key == "Variables":
            for name, val in v["keyed"]:
                check_value(val, f"variable {name}")
                variables[name] = val
        elif key == "Functions":
            functions = {}
            for name, f in v["keyed"]:
                fname = f.get("name", "") if isinstance(f, dict) else ""
                impl = fname.split(".")[-1]
                if not fname.startswith("stdlib.") or std.get(impl) != name:
                    raise NA(f"a function of the test's own ({name}), not the DSL's")
                functions[name] = impl
        else:
            raise Unreadable("context field " + str(key))
    return variables, functions


def expr_case(case, text, ctx, std):
    """Fills an hcl expression case: the input, its variables; NA when it calls a function
    the test's context does not have (the DSL always has its whole library)."""
    variables, functions = hcl_context(ctx, std)
    called = set(CALL_RE.findall(text)) - {"for", "if"}
    if called and (functions is None or not called <= set(functions)):
        raise NA("calls functions the test's context does not have (the DSL has its library)")
    case["expr"] = text
    case["vars"] = variables


def skip_interp(t, i):
    """The index just past the `}` closing the template sequence whose `{` is at t[i-1];
    quoted strings inside (with their own sequences) are stepped over."""
    depth = 1
    while i < len(t):
        c = t[i]
        if c == '"':
            i += 1
            while i < len(t) and t[i] != '"':
                if t[i] == "\\":
                    i += 2
                elif t[i] in "$%" and t[i + 1:i + 2] == "{" and t[i - 1:i] != t[i]:
                    i = skip_interp(t, i + 2)
                else:
                    i += 1
        elif c == "{":
            depth += 1
        elif c == "}":
            depth -= 1
            if depth == 0:
                return i + 1
        i += 1
    raise Unreadable("unclosed template sequence")


def quote_template(t):
    """A bare template as the quoted string that means the same: its literal text escaped
    (a bare template takes backslashes and quotes literally), its ${...} and %{...}
    sequences kept as they are (a quoted template reads them the same way)."""
    out, i = ['"'], 0
    while i < len(t):
        c = t[i]
        if t.startswith("$${", i) or t.startswith("%%{", i):
            out.append(t[i:i + 3])
            i += 3
        elif c in "$%" and t[i + 1:i + 2] == "{":
            j = skip_interp(t, i + 2)
            out.append(t[i:j])
            i = j
        else:
            out.append({"\\": "\\\\", '"': '\\"', "\n": "\\n"}.get(c, c))
            i += 1
    return "".join(out) + '"'


def table_cases(src, suite, tests, fill, out):
    """One case per row of each named test's table: `fill(case, test, row)` adds the
    facts, or raises NA (not applicable) or Unreadable (not extracted): the case is then
    written with only its id and the reason as "skip"."""
    for test in tests:
        for idx, (_, row) in enumerate(yaml_rows(src, test)):
            case = {"suite": suite, "test": test, "n": idx}
            try:
                fill(case, test, row)
            except NA as e:
                case = {"suite": suite, "test": test, "n": idx,
                        "skip": "not applicable: " + str(e)}
            except (Unreadable, ValueError, KeyError, TypeError, IndexError, AttributeError) as e:
                case = {"suite": suite, "test": test, "n": idx,
                        "skip": "not extracted: " + str(e)[:80]}
            out.append(case)


def extract_hclsyntax(repo, rev, std, out):
    """hclsyntax's expression and template tests: expression text, variables, and the
    value and number of diagnostics (or the expected error's summary and detail)."""
    def fill(case, test, row):
        text = row.get("input")
        if not isinstance(text, str):
            raise Unreadable("input is not a literal")
        if test == "TestTemplateExprParseAndValue":
            if "\r" in text:
                raise NA("a bare template with CR (the quoted form differs)")
            text = quote_template(text)
        expr_case(case, text, row.get("ctx"), std)
        if test == "TestExpressionErrorMessages":
            case["summary"] = row["wantSummary"]
            case["detail"] = row["wantDetail"]
        else:
            case["diags"] = row["diagCount"]
            if row["diagCount"] == 0:
                check_value(row["want"], "want")
                case["want"] = row["want"]

    for f, tests in [("hclsyntax/expression_test.go",
                      ("TestExpressionParseAndValue", "TestExpressionErrorMessages")),
                     ("hclsyntax/expression_template_test.go",
                      ("TestTemplateExprParseAndValue",))]:
        table_cases(git_show(repo, rev, f), f"hcl/{f}", tests, fill, out)


def keyed(c):
    """A keyed composite literal's fields as {name: value}."""
    if not (isinstance(c, dict) and c.get("go") == "composite"):
        raise Unreadable("not a composite literal")
    out = {}
    for k, v in c["keyed"]:
        out[k["name"] if isinstance(k, dict) and "name" in k else k] = v
    return out


def pos(c):
    f = keyed(c)
    return [f.get("Byte", 0), f.get("Line", 0), f.get("Column", 0)]


def hcl_range(c):
    f = keyed(c)
    return [pos(f["Start"]), pos(f["End"])]


def bad(v):
    return isinstance(v, dict) and v.get("go") == "bad"


def body_shape(b):
    """A parsed body as the facts fn-hcl's tree can be compared on: attribute names
    (sorted: hcl keeps them in a map) and blocks in order (type, labels, body)."""
    f = keyed(b)
    attrs = sorted(k for k, _ in keyed(f["Attributes"]).items()) if "Attributes" in f else []
    blocks = []
    for blk in (f["Blocks"]["items"] if "Blocks" in f else []):
        if bad(blk):
            raise NA("a block the extractor cannot read") if blk["na"] else Unreadable(blk["why"])
        bf = keyed(blk)
        labels = bf.get("Labels") or {"items": []}
        if not all(isinstance(x, str) for x in labels["items"]):
            raise Unreadable("labels")
        blocks.append({"type": bf["Type"], "labels": labels["items"],
                       "body": body_shape(bf["Body"])})
    return {"attrs": attrs, "blocks": blocks}


def extract_hclsyntax_parser(repo, rev, out):
    """hclsyntax's scanner and parser tests: tokens (type, text, range) of normal-mode
    scanning; the shape and diagnostic count of TestParseConfig; the exact diagnostics
    of TestParseConfigDiagnostics."""
    def tokens(case, test, row):
        if test == "TestScanTokens_template":
            raise NA("bare template mode (hcl.ParseTemplate): a DSL file is scanned "
                     "in normal mode only")
        if not isinstance(row.get("input"), str):
            raise Unreadable("input is not a literal")
        toks = []
        for t in row["want"]["items"]:
            if bad(t):
                raise Unreadable(t["why"])
            f = keyed(t)
            b = f.get("Bytes")
            if isinstance(b, dict) and b.get("go") == "composite" and not b["items"]:
                b = ""
            if not isinstance(b, str):
                raise Unreadable("token bytes")
            toks.append([f["Type"]["name"], b] + hcl_range(f["Range"]))
        case.update(input=row["input"], tokens=toks)

    def parse(case, test, row):
        if test == "TestParseConfig_incompleteFunctionCall":
            raise NA("the tree hcl's recovery builds around an incomplete call "
                     "(the DSL refuses a file with errors)")
        if not isinstance(row.get("input"), str):
            raise Unreadable("input is not a literal")
        case["input"] = row["input"]
        if test == "TestParseConfig":
            case["diags"] = row["diagCount"]
            if row["diagCount"] == 0:
                case["shape"] = body_shape(row["want"])
        else:
            case["diagnostics"] = [
                [keyed(d)["Summary"], keyed(d)["Detail"]] + hcl_range(keyed(d)["Subject"])
                for d in row["want"]["items"]]

    f = "hclsyntax/scan_tokens_test.go"
    table_cases(git_show(repo, rev, f), f"hcl/{f}",
                ("TestScanTokens_normal", "TestScanTokens_template"), tokens, out)
    f = "hclsyntax/parser_test.go"
    table_cases(git_show(repo, rev, f), f"hcl/{f}",
                ("TestParseConfig", "TestParseConfig_incompleteFunctionCall",
                 "TestParseConfigDiagnostics"), parse, out)


def git_show(repo, rev, path):
    return subprocess.run(["git", "-C", repo, "show", f"{rev}:{path}"], capture_output=True,
                          text=True, check=True).stdout


def git_ls(repo, rev, path):
    r = subprocess.run(["git", "-C", repo, "ls-tree", "--name-only", f"{rev}:{path}"],
                       capture_output=True, text=True, check=True)
    return [x for x in r.stdout.split("\n") if x]


def function_table(mirrors):
    """function-hcl's names: {Go function variable: DSL name}, split by package."""
    repo = os.path.join(mirrors, "crossplane-contrib+function-hcl/repo")
    src = git_show(repo, "HEAD", "function/internal/evaluator/functions/internal/funcs/api.go")
    std, tf = {}, {}
    for name, pkg, var in re.findall(r'"(\w+)":\s+(stdlib\.|ctyyaml\.|tryfunc\.)?(\w+)', src):
        (std if pkg == "stdlib." else tf if pkg == "" else {})[var] = name
        if var == "MakeToFunc":
            tf["MakeToFunc"] = "to*"
    # hcl's operators call these stdlib functions (hclsyntax's binaryOps and unaryOps).
    std.update({"AddFunc": "+", "SubtractFunc": "-", "MultiplyFunc": "*", "DivideFunc": "/",
                "ModuloFunc": "%", "LessThanFunc": "<", "LessThanOrEqualToFunc": "<=",
                "GreaterThanFunc": ">", "GreaterThanOrEqualToFunc": ">=", "EqualFunc": "==",
                "NotEqualFunc": "!=", "AndFunc": "&&", "OrFunc": "||", "NegateFunc": "neg",
                "NotFunc": "!"})
    return std, tf


def write_suite(outdir, name, out, summary):
    """Writes one fixture file (a case a line) and its summary row."""
    with open(os.path.join(outdir, f"{name}.jsonl"), "w") as fh:
        for c in out:
            fh.write(json.dumps(c, ensure_ascii=False, sort_keys=True) + "\n")
    summary.append((name, len(out), sum(1 for c in out if "skip" not in c), 0))


def main():
    mirrors, outdir = sys.argv[1], sys.argv[2]
    std, tf = function_table(mirrors)
    suites = [
        ("go-cty", "zclconf+go-cty/repo", "v1.17.0", "cty/function/stdlib", std),
        ("terraform", "hashicorp+terraform/repo", "v1.5.7", "internal/lang/funcs", tf),
    ]
    summary = []
    for suite, repo, rev, d, table in suites:
        repo = os.path.join(mirrors, repo)
        out, skipped = [], []
        for f in git_ls(repo, rev, d):
            if not f.endswith("_test.go"):
                continue
            extract_file(git_show(repo, rev, f"{d}/{f}"), table, f"{suite}/{f}", out, skipped)
        path = os.path.join(outdir, f"{suite}.jsonl")
        with open(path, "w") as fh:
            for c in out:
                fh.write(json.dumps(c, ensure_ascii=False, sort_keys=True) + "\n")
        with open(os.path.join(outdir, f"{suite}.unread.tsv"), "w") as fh:
            for s, t, why in skipped:
                fh.write(f"{s}\t{t}\t{why}\n")
        summary.append((suite, len(out), sum(1 for c in out if "skip" not in c), len(skipped)))
    out = []
    extract_yaml(os.path.join(mirrors, "zclconf+go-cty-yaml/repo"), "v1.1.0", out)
    write_suite(outdir, "go-cty-yaml", out, summary)
    out = []
    extract_textseg(os.path.join(mirrors, "apparentlymart+go-textseg/repo"), "v15.0.0", out)
    write_suite(outdir, "go-textseg", out, summary)
    out = []
    extract_hclsyntax(os.path.join(mirrors, "hashicorp+hcl/repo"), "v2.24.0", std, out)
    write_suite(outdir, "hclsyntax-expressions", out, summary)
    out = []
    extract_hclsyntax_parser(os.path.join(mirrors, "hashicorp+hcl/repo"), "v2.24.0", out)
    write_suite(outdir, "hclsyntax-parser", out, summary)
    out = []
    extract_hclwrite(os.path.join(mirrors, "hashicorp+hcl/repo"), "v2.24.0", out)
    write_suite(outdir, "hclwrite-format", out, summary)
    for s in summary:
        print("%s: %d cases, %d runnable, %d test functions not read" % s)


if __name__ == "__main__":
    main()
