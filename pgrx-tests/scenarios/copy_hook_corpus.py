#!/usr/bin/env python3
"""The load corpus (pgrx-tests/corpus/load/cases.txt) through `COPY ... FROM STDIN` fed by
psql, once with fastcopy.copy_from off (the server's COPY, into schema c) and once with it
`require` (fastcopy, into schema f; a statement fastcopy hands over is run again with `on`
and counted). The two tables must be equal, or both sessions fail with the same SQLSTATE,
message and CONTEXT line. Prints one line per difference and a summary line; exit 1 on any
difference.
  copy_hook_corpus.py MAJOR PSQL-COMMAND...
"""
import os
import re
import subprocess
import sys

major = int(sys.argv[1])
psql_cmd = sys.argv[2:]
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "corpus", "load"))
import manifest  # noqa: E402


def run(sql, data=None, options=""):
    env = dict(os.environ)
    env["PGOPTIONS"] = options
    p = subprocess.run(psql_cmd + ["-X", "-q", "-v", "ON_ERROR_STOP=1", "-v", "VERBOSITY=verbose",
                                   "-c", sql], input=data, capture_output=True, env=env)
    err = p.stderr.decode("utf-8", "replace")
    msg = re.search(r"^(?:psql:[^\n]*?)?ERROR:  (.*)$", err, re.M)
    ctx = re.search(r"^CONTEXT:  (.*)$", err, re.M)
    if msg:
        return f"{msg.group(1)} | {ctx.group(1) if ctx else ''}"
    return "ok" if p.returncode == 0 else f"psql rc={p.returncode}: {err.strip()}"


def table(schema):
    env = dict(os.environ)
    p = subprocess.run(psql_cmd + ["-X", "-qAt", "-c",
                                   f"SELECT coalesce(string_agg(t::text, E'\\n' ORDER BY t::text COLLATE \"C\"), '') FROM {schema}.t t"],
                       capture_output=True, env=env)
    return p.stdout.decode("utf-8", "replace")


setup, all_cases = manifest.cases(major)
run("; ".join(["SET client_min_messages = warning", "DROP SCHEMA IF EXISTS c CASCADE",
               "DROP SCHEMA IF EXISTS f CASCADE", "CREATE SCHEMA c", "CREATE SCHEMA f"]))
for s in setup:
    run(s)  # types and domains in public, shared by both schemas (may exist already)

on = "-c session_preload_libraries=fastcopy -c fastcopy.copy_from="
ran = taken = handed = 0
diffs = []
for name, defs, opts, _ in all_cases:
    data = manifest.data(name)
    for s in ("c", "f"):
        run(f"DROP TABLE IF EXISTS {s}.t; CREATE TABLE {s}.t ({defs})")
    sql = manifest.copy_statement("t", opts)
    ran += 1
    server = run(sql, data, "-c search_path=c,public")
    ours = run(sql, data, f"-c search_path=f,public {on}require")
    if ours.startswith("fastcopy cannot take this COPY"):
        handed += 1
        ours = run(sql, data, f"-c search_path=f,public {on}on")
    else:
        taken += 1
    if server != ours:
        diffs.append(f"{name}: COPY: {server}\n      fastcopy: {ours}")
    elif server == "ok" and table("c") != table("f"):
        diffs.append(f"{name}: the tables differ")

for d in diffs:
    print(f"FAIL {d}")
ok = not diffs and ran > 100 and taken > handed
print(f"{'ok  ' if ok else 'FAIL'} hook corpus through psql STDIN: {ran} cases, {taken} taken by fastcopy, "
      f"{handed} handed over, {len(diffs)} differences")
sys.exit(0 if ok else 1)
