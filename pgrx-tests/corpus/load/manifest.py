"""Reads the load corpus's manifest (cases.txt, written by make_corpus.py) for the scripts that
run it outside the pg_tests: the COPY hook corpus and the SQL-level fuzzer."""
import os

HERE = os.path.dirname(os.path.abspath(__file__))


def value(v):
    """An option's value as the manifest writes it: `\\e` empty, `\\t` TAB, `\\s` space."""
    if v == "\\e":
        return ""
    return v.replace("\\t", "\t").replace("\\s", " ").replace("\\\\", "\\")


def cases(major):
    """(setup statements, [(file, column definitions, options dict, options as written)]) for
    the cases that apply to `major` (the `min=`/`max=` options)."""
    setup, out = [], []
    for line in open(os.path.join(HERE, "cases.txt"), encoding="utf-8"):
        line = line.rstrip("\n")
        if not line.strip() or line.startswith("#"):
            continue
        if line.startswith("!"):
            setup.append(line[1:])
            continue
        parts = [p.strip() for p in line.split("|", 2)]
        optline = parts[2] if len(parts) > 2 else ""
        opts = {}
        for kv in optline.split():
            k, v = kv.split("=", 1)
            opts[k] = value(v)
        if int(opts.get("min", 0)) > major or int(opts.get("max", 99)) < major:
            continue
        out.append((parts[0], parts[1], opts, optline))
    return setup, out


def data(name):
    """A case's input bytes."""
    return open(os.path.join(HERE, name), "rb").read()


def literal(v):
    """A SQL string literal."""
    return "'" + v.replace("'", "''") + "'"


def copy_statement(table, opts):
    """`COPY table [(columns)] FROM STDIN [WITH (...)]` with a case's options."""
    cols = f" ({opts['columns']})" if "columns" in opts else ""
    w = []
    for k in ("format", "header", "delimiter", "null", "quote", "escape", "default"):
        if k in opts:
            v = opts[k]
            w.append(f"{k.upper()} {v}" if k in ("format", "header") else f"{k.upper()} {literal(v)}")
    return f"COPY {table}{cols} FROM STDIN" + (f" WITH ({', '.join(w)})" if w else "")
