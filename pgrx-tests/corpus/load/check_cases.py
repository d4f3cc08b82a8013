#!/usr/bin/env python3
"""Checks the manifest cases.txt: every line parses, every referenced file exists (and every
data file is referenced), option keys and values are valid; prints the counts.

    python3 pgrx-tests/corpus/load/check_cases.py      exit 1 on any problem
"""
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
KEYS = {"format", "delimiter", "null", "header", "quote", "escape", "default", "columns",
        "min", "max", "expect", "expect18"}
ESCAPES = {"t": "\t", "s": " ", "e": "", "\\": "\\"}


def decode(value):
    """An option value with the manifest escapes \\t \\s \\e \\\\ applied."""
    if value == "\\e":
        return ""
    out, i = [], 0
    while i < len(value):
        c = value[i]
        if c != "\\":
            out.append(c)
            i += 1
            continue
        if i + 1 >= len(value) or value[i + 1] not in ESCAPES or value[i + 1] == "e":
            raise ValueError(f"bad escape in option value {value!r}")
        out.append(ESCAPES[value[i + 1]])
        i += 2
    return "".join(out)


def parse(path=os.path.join(HERE, "cases.txt")):
    """Returns (setup statements, cases); a case is a dict file, defs, opts (decoded), line."""
    setup, cases = [], []
    with open(path, encoding="utf-8") as f:
        for n, raw in enumerate(f, 1):
            line = raw.rstrip("\n")
            if not line.strip() or line.startswith("#"):
                continue
            if line.startswith("!"):
                setup.append(line[1:])
                continue
            parts = line.split("|")
            if len(parts) != 3:
                raise ValueError(f"line {n}: expected `file | defs | options`: {line!r}")
            name, defs, opts = (p.strip() for p in parts)
            if not (name.endswith(".txt") or name.endswith(".csv")) or "/" in name:
                raise ValueError(f"line {n}: bad file name {name!r}")
            o = {}
            for kv in opts.split():
                if "=" not in kv:
                    raise ValueError(f"line {n}: option without '=': {kv!r}")
                k, v = kv.split("=", 1)
                if k not in KEYS:
                    raise ValueError(f"line {n}: unknown option key {k!r}")
                if k in o:
                    raise ValueError(f"line {n}: option {k!r} twice")
                o[k] = decode(v)
            fmt = o.get("format", "text")
            if fmt not in ("text", "csv"):
                raise ValueError(f"line {n}: format {fmt!r}")
            if o.get("header", "true") not in ("true", "match"):
                raise ValueError(f"line {n}: header must be true or match when given")
            if o.get("expect", "ok") not in ("ok", "error"):
                raise ValueError(f"line {n}: expect must be ok or error")
            for k in ("min", "max"):
                if k in o and o[k] not in ("15", "16", "17", "18"):
                    raise ValueError(f"line {n}: {k}={o[k]!r}")
            if "default" in o and o.get("min") not in ("16", "17", "18"):
                raise ValueError(f"line {n}: default= needs min=16")
            for k in ("delimiter", "quote", "escape"):
                if k in o and len(o[k].encode()) != 1:
                    raise ValueError(f"line {n}: {k} must be one byte")
            if fmt == "text" and ("quote" in o or "escape" in o):
                raise ValueError(f"line {n}: quote/escape are CSV only")
            if "columns" in o and not all(c.isidentifier() for c in o["columns"].split(",")):
                raise ValueError(f"line {n}: columns= must be a comma list without spaces")
            if any(c["file"] == name for c in cases):
                raise ValueError(f"line {n}: {name} listed twice")
            cases.append({"file": name, "defs": defs, "opts": o, "line": n})
    return setup, cases


def main():
    try:
        setup, cases = parse()
    except ValueError as e:
        print("cases.txt:", e)
        return 1
    problems = []
    for c in cases:
        if not os.path.isfile(os.path.join(HERE, c["file"])):
            problems.append(f"line {c['line']}: missing file {c['file']}")
    listed = {c["file"] for c in cases}
    for f in sorted(os.listdir(HERE)):
        if (f.endswith(".txt") or f.endswith(".csv")) and f != "cases.txt" and f not in listed:
            problems.append(f"data file not in the manifest: {f}")
    for s in setup:
        for word in ("TYPE", "DOMAIN"):
            if f"CREATE {word} " in s.upper() and " FC_" not in s.upper():
                problems.append(f"setup type/domain without fc_ prefix: {s}")
    for p in problems:
        print(p)
    err = [c for c in cases if c["opts"].get("expect") == "error"]
    csv = [c for c in cases if c["opts"].get("format") == "csv"]
    ver = [c for c in cases if "min" in c["opts"] or "max" in c["opts"]]
    print(f"{len(setup)} setup statements, {len(cases)} cases: {len(err)} malformed, "
          f"{len(cases) - len(err)} ok; {len(cases) - len(csv)} text, {len(csv)} csv; "
          f"{len(ver)} version-limited")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
