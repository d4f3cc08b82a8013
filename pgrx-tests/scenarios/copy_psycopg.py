#!/usr/bin/env python3
"""A driver's copy API through the COPY hook: psycopg 3 (installed from PyPI by
scripts/setup.sh) streams rows as many small CopyData messages (`Copy.write` per row, and
`write_row`, which psycopg batches), with fastcopy.copy_from off and require into identical
tables, which must end equal; an exception inside the copy block makes psycopg send CopyFail,
which must fail the COPY as the server's does and leave the connection usable. Prints one
ok/FAIL line per check; exit 1 on a failure.
  copy_psycopg.py SOCKET-DIR PORT
"""
import datetime
import decimal
import sys

import psycopg

sockdir, port = sys.argv[1], sys.argv[2]
fail = 0


def connect(mode):
    opts = "" if mode == "off" else "-c session_preload_libraries=fastcopy -c fastcopy.copy_from=require"
    return psycopg.connect(host=sockdir, port=port, user="postgres", dbname="postgres",
                           options=opts, autocommit=True)


def check(label, ok, detail=""):
    global fail
    print(f"{'ok  ' if ok else 'FAIL'} psycopg: {label}" + ("" if ok else f"\n       {detail}"))
    fail |= not ok


with connect("off") as c:
    for t in ("py_off", "py_on"):
        c.execute(f"DROP TABLE IF EXISTS {t}")
        c.execute(f"CREATE TABLE {t} (id int PRIMARY KEY, n numeric, t text, d date, ts timestamptz, b bool, a int[])")

rows = [(i, decimal.Decimal(i) / 7, None if i % 5 == 0 else f"row\t{i}\n'\\", datetime.date(2000, 1, 1) + datetime.timedelta(days=i),
         datetime.datetime(2024, 1, 1, tzinfo=datetime.timezone.utc) + datetime.timedelta(seconds=i), i % 2 == 0, [i, -i])
        for i in range(1, 30001)]
for mode, table in (("off", "py_off"), ("require", "py_on")):
    with connect(mode) as c, c.cursor() as cur:
        with cur.copy(f"COPY {table} FROM STDIN") as copy:
            for r in rows[:15000]:
                copy.write_row(r)
        # one CopyData message per line
        with cur.copy(f"COPY {table} FROM STDIN (FORMAT csv)") as copy:
            for i in range(15001, 30001):
                copy.write(f"{i},{i / 3},\"csv \"\"{i}\"\"\",2001-02-03,2024-05-06 07:08:09+00,{'t' if i % 3 else 'f'},\"{{{i}}}\"\n")
        check(f"{mode}: the command's row count", cur.rowcount == 15000, f"rowcount {cur.rowcount}")

with connect("off") as c:
    a = c.execute("SELECT md5(string_agg(t::text, ',' ORDER BY id)), count(*) FROM py_off t").fetchone()
    b = c.execute("SELECT md5(string_agg(t::text, ',' ORDER BY id)), count(*) FROM py_on t").fetchone()
check(f"write_row and per-line writes: the same table off and require ({b[1]} rows)", a == b and b[1] == 30000, f"{a} {b}")


def copy_fail(mode):
    with connect(mode) as c:
        c.execute("TRUNCATE py_on")
        err = None
        try:
            with c.cursor() as cur, cur.copy("COPY py_on (id) FROM STDIN") as copy:
                for i in range(1, 5000):
                    copy.write(f"{i}\n")
                raise RuntimeError("the application gave up")
        except psycopg.Error as e:
            err = f"{e.sqlstate}: {e.diag.message_primary}"
        except RuntimeError as e:
            err = f"RuntimeError: {e}"
        n = c.execute("SELECT count(*) FROM py_on").fetchone()[0]
        return err, n


off, on = copy_fail("off"), copy_fail("require")
check(f"an exception in the copy block (CopyFail): {on}", off == on and on[1] == 0, f"off {off} require {on}")

# A rejects table through the hook (the COPY option REJECTS): rows with a value that does not
# convert, too few fields, a NULL in a NOT NULL column, a failed CHECK are kept, each at its
# line, and the rest loads as COPY (off) loads the good lines alone; the NOTICE names the table.
with connect("off") as c:
    for t in ("py_rj_off", "py_rj_on"):
        c.execute(f"DROP TABLE IF EXISTS {t}")
        c.execute(f"CREATE TABLE {t} (id int, v int NOT NULL CHECK (v >= 0), t text)")
    c.execute("DROP TABLE IF EXISTS py_rejects")
lines, bad = [], {}
for i in range(1, 2001):
    kind = i % 50
    if kind == 7:
        line, bad[i] = f"{i}\tx{i}\tbad int", "22P02"
    elif kind == 19:
        line, bad[i] = f"{i}\t{i}", "22P04"
    elif kind == 23:
        line, bad[i] = f"{i}\t\\N\tnull", "23502"
    elif kind == 31:
        line, bad[i] = f"{i}\t-{i}\tnegative", "23514"
    else:
        line = f"{i}\t{i}\trow {i}"
    lines.append(line + "\n")
with connect("off") as c, c.cursor() as cur:
    with cur.copy("COPY py_rj_off FROM STDIN") as copy:
        for n, line in enumerate(lines, 1):
            if n not in bad:
                copy.write(line)
notices = []
with connect("require") as c, c.cursor() as cur:
    c.add_notice_handler(lambda d: notices.append(d.message_primary))
    with cur.copy("COPY py_rj_on FROM STDIN WITH (REJECTS 'py_rejects')") as copy:
        for line in lines:
            copy.write(line)
    loaded = cur.rowcount
    kept = dict(c.execute("SELECT line, sqlstate FROM py_rejects").fetchall())
    same = c.execute("""SELECT NOT EXISTS ((TABLE py_rj_off EXCEPT ALL TABLE py_rj_on)
                                         UNION ALL (TABLE py_rj_on EXCEPT ALL TABLE py_rj_off))""").fetchone()[0]
check(f"REJECTS: {loaded} rows loaded, {len(kept)} kept at their lines with their SQLSTATEs",
      loaded == len(lines) - len(bad) and kept == bad and same, f"loaded {loaded} same {same} kept {sorted(kept.items())[:8]}")
want = f'{len(bad)} rows were rejected and kept in "py_rejects" with load_id '
check(f"REJECTS: the NOTICE ({notices[-1] if notices else None})", any(n.startswith(want) for n in notices), f"{notices}")
sys.exit(fail)
