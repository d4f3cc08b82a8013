#!/usr/bin/env python3
"""SQL-level differential fuzzer (`make fuzz-sql`): mutations of the load corpus
(pgrx-tests/corpus/load) loaded with `fastcopy.load_data` and with the server's
`COPY ... FROM STDIN` (psycopg's copy, fastcopy.copy_from off) into twin tables. After each
case the two tables must hold the same rows, or both loads must fail with the same SQLSTATE,
message and first CONTEXT line. A connection lost (a crash) is a failure too.

Mutations, one to four per case, on a random corpus file: a byte flipped, bytes inserted or
deleted, the input cut at a random point or at a line end, lines duplicated or dropped, and
injections of what the parsers treat specially: quotes, escapes, delimiters, `\\N`, `\\.`, CR,
LF, NUL, backslash sequences, invalid or truncated UTF-8.

Every difference is saved as a new corpus case in OUT-DIR: the input file and a `cases.txt`
line in the corpus's format (file | columns | options), ready to be moved into the corpus.
Prints one summary line (cases tried, taken to the end, differences); exit 1 on any difference.
  fuzz_sql.py MAJOR SECONDS SOCKET-DIR PORT OUT-DIR [SEED]
"""
import hashlib
import os
import random
import sys
import time

import psycopg

major, seconds, sockdir, port, outdir = int(sys.argv[1]), float(sys.argv[2]), sys.argv[3], sys.argv[4], sys.argv[5]
seed = int(sys.argv[6]) if len(sys.argv) > 6 else int(time.time())
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "corpus", "load"))
import manifest  # noqa: E402


# Inputs over this size are left out: when COPY's error quotes a value of hundreds of KB, the
# server blocks sending it while psycopg blocks sending the rest of the data (a client's
# limit, not COPY's or fastcopy's; psql reads while it writes).
MAX_INPUT = 64 * 1024


def read_cases():
    setup, cases = manifest.cases(major)
    out = [(name, defs, opts, optline, manifest.data(name)) for name, defs, opts, optline in cases]
    return setup, [c for c in out if len(c[4]) <= MAX_INPUT]


def load_sql(opts):
    """fastcopy.load_data's call with the same options as manifest.copy_statement's."""
    args = ["'fz_f.t'", "%s"]
    if "columns" in opts:
        args.append("columns => " + manifest.literal("{" + opts["columns"] + "}"))
    if "format" in opts:
        args.append("format => " + manifest.literal(opts["format"]))
    if opts.get("header") == "match":
        args.append("header_match => true")
    elif "header" in opts:
        args.append("header => " + opts["header"])
    for k, p in (("delimiter", "delimiter"), ("null", "null_string"), ("quote", "quote"),
                 ("escape", "escape"), ("default", "default_string")):
        if k in opts:
            args.append(f"{p} => {manifest.literal(opts[k])}")
    return f"SELECT rows_loaded FROM fastcopy.load_data({', '.join(args)})"


SPECIAL = [b'"', b"'", b"\\", b",", b"\t", b";", b"|", b"\\N", b"\\.", b"\\.\n", b"\r", b"\n",
           b"\r\n", b"\x00", b"\\x", b"\\0", b"\\377", b"\\\n", b'""', b'"\n"', b"\xff", b"\xc3",
           b"\xe2\x82", b"\xed\xa0\x80", b"\xf4\x90\x80\x80", b"\xc0\xaf", b"\xc3\xa9",
           b"\xe2\x82\xac", b"-", b"+", b"9999999999", b"e", b".", b" ", b"NaN", b"{", b"}",
           b"\\\\", b"\\b", b"\\t", b"\\r", b"\\n"]


def mutate(rng, data):
    d = bytearray(data)
    for _ in range(rng.randint(1, 4)):
        op = rng.randrange(8)
        i = rng.randint(0, len(d))
        if op == 0 and d:  # flip a byte
            j = rng.randrange(len(d))
            d[j] ^= 1 << rng.randrange(8)
        elif op == 1:  # insert random bytes
            d[i:i] = bytes(rng.randrange(256) for _ in range(rng.randint(1, 4)))
        elif op == 2 and d:  # delete a run
            del d[i:i + rng.randint(1, 8)]
        elif op == 3:  # cut the input
            lines = [k + 1 for k, c in enumerate(d) if c == 10]
            d = d[:rng.choice(lines)] if lines and rng.random() < 0.5 else d[:i]
        elif op == 4:  # duplicate or drop a line
            lines = bytes(d).split(b"\n")
            k = rng.randrange(len(lines))
            if rng.random() < 0.5:
                lines.insert(k, lines[k])
            elif len(lines) > 1:
                del lines[k]
            d = bytearray(b"\n".join(lines))
        else:  # inject something the parsers treat specially
            d[i:i] = rng.choice(SPECIAL)
    return bytes(d)


def outcome(conn, run):
    """'ok' or (sqlstate, message, first CONTEXT line) of an error; the transaction is
    rolled back after an error."""
    try:
        with conn.transaction():
            run()
        return "ok"
    except psycopg.OperationalError as e:
        # a lost connection; psycopg also maps some server errors to OperationalError (class
        # 54, "array bound is out of integer range", say): those are outcomes like any other
        if conn.broken or conn.closed:
            raise
        return error_outcome(e)
    except psycopg.Error as e:
        return error_outcome(e)


def error_outcome(e):
    ctx = (e.diag.context or "").split("\n")[0]
    if ctx.startswith("fastcopy.load "):  # the functions' CONTEXT names them where COPY says COPY
        ctx = "COPY " + ctx[len("fastcopy.load "):]
    return (e.sqlstate, e.diag.message_primary, ctx)


def connect():
    c = psycopg.connect(host=sockdir, port=port, user="postgres", dbname="postgres", autocommit=True,
                        options="-c fastcopy.copy_from=off -c client_min_messages=warning")
    return c


def main():
    rng = random.Random(seed)
    setup, cases = read_cases()
    conn = connect()
    for s in setup:
        try:
            conn.execute(s)
        except psycopg.Error:
            pass  # types and domains that exist already
    conn.execute("DROP SCHEMA IF EXISTS fz_c CASCADE")
    conn.execute("DROP SCHEMA IF EXISTS fz_f CASCADE")
    conn.execute("CREATE SCHEMA fz_c")
    conn.execute("CREATE SCHEMA fz_f")
    os.makedirs(outdir, exist_ok=True)
    tried = loaded = failed_alike = 0
    diffs = []
    current = None
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        name, defs, opts, optline, data = rng.choice(cases)
        if current != defs:
            for s in ("fz_c", "fz_f"):
                conn.execute(f"DROP TABLE IF EXISTS {s}.t")
                conn.execute(f"CREATE TABLE {s}.t ({defs})")
            current = defs
        else:
            conn.execute("TRUNCATE fz_c.t, fz_f.t RESTART IDENTITY")
        case_seed = rng.randrange(1 << 32)
        mutated = mutate(random.Random(case_seed), data)
        tried += 1

        def server():
            with conn.cursor() as cur, cur.copy(manifest.copy_statement("fz_c.t", opts)) as cp:
                cp.write(mutated)

        def ours():
            conn.execute(load_sql(opts), [mutated])

        try:
            a = outcome(conn, server)
            b = outcome(conn, ours)
        except psycopg.OperationalError as e:
            diffs.append((name, defs, optline, mutated, f"connection lost: {e}"))
            conn = connect()
            current = None
            continue
        why = None
        if a != b:
            why = f"COPY: {a}; fastcopy: {b}"
        elif a == "ok":
            n = conn.execute("""SELECT (SELECT count(*) FROM (SELECT t::text FROM fz_c.t t EXCEPT ALL
                                                             SELECT t::text FROM fz_f.t t) x)
                                     + (SELECT count(*) FROM (SELECT t::text FROM fz_f.t t EXCEPT ALL
                                                             SELECT t::text FROM fz_c.t t) y)""").fetchone()[0]
            if n:
                why = f"the tables differ in {n} rows"
            loaded += 1
        else:
            failed_alike += 1
        if why:
            diffs.append((name, defs, optline, mutated, why))
    for name, defs, optline, mutated, why in diffs:
        h = hashlib.sha1(mutated).hexdigest()[:10]
        base, ext = os.path.splitext(name)
        f = f"fuzz_{base}_{h}{ext}"
        open(os.path.join(outdir, f), "wb").write(mutated)
        with open(os.path.join(outdir, "cases.txt"), "a", encoding="utf-8") as cf:
            cf.write(f"# {why}\n{f} | {defs} | {optline}\n")
        print(f"FAIL fuzz-sql {name} -> {f}: {why}")
    ok = not diffs and tried > 0
    print(f"{'ok  ' if ok else 'FAIL'} fuzz-sql {major}: {tried} mutated cases in {seconds:.0f} s (seed {seed}), "
          f"{loaded} loaded alike, {failed_alike} failed alike, {len(diffs)} differences"
          + (f" (saved in {outdir})" if diffs else ""))
    return 0 if ok else 1


sys.exit(main())
