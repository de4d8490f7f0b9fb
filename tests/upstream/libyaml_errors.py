#!/usr/bin/env python3
"""yamldecode's syntax errors as go-cty-yaml v1.1.0 words them, from libyaml itself.

usage: libyaml_errors.py < inputs.jsonl > libyaml-errors.jsonl

go-cty-yaml runs a Go port of libyaml's scanner and parser; PyYAML's C binding
(yaml.CLoader, libyaml 0.2.5 here) runs libyaml's own, with the same problem texts and
marks. Each input (a JSON string a line) is parsed by libyaml; its problem is then
placed as go-cty-yaml's error.go places it (parserErrorWrap):
  - a scanner error with a problem mark past the first line: "on line L+1, column 1"
    (libyaml's zero-based line, plus one; the column dropped),
  - a parser error with a problem mark past the first line: "on line L, column C+1"
    (the zero-based line as it is),
  - else the context mark likewise (zero-based line, column plus one), when it is past
    the first line,
  - else the bare problem (a problem on the first line has no position).
Inputs libyaml accepts are written with "error": null.
"""
import json
import sys

import yaml
from yaml.parser import ParserError
from yaml.scanner import ScannerError


def go_error(src):
    try:
        list(yaml.parse(src or "\n", Loader=yaml.CLoader))
        return None
    except (ScannerError, ParserError) as e:
        pm, cm = e.problem_mark, e.context_mark
        if pm is not None and pm.line != 0:
            if isinstance(e, ScannerError):
                return f"on line {pm.line + 1}, column 1: {e.problem}"
            return f"on line {pm.line}, column {pm.column + 1}: {e.problem}"
        if cm is not None and cm.line != 0:
            return f"on line {cm.line}, column {cm.column + 1}: {e.problem}"
        return e.problem


def main():
    assert yaml.__with_libyaml__, "PyYAML without its libyaml binding"
    lines = [line for line in sys.stdin if line.strip()]
    for n, line in enumerate(lines):
        src = json.loads(line)
        case = {"suite": "libyaml", "test": "errors", "n": n, "input": src,
                "error": go_error(src)}
        print(json.dumps(case, ensure_ascii=False, sort_keys=True))


if __name__ == "__main__":
    main()
