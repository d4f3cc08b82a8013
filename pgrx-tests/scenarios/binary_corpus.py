#!/usr/bin/env python3
"""Helpers of scenarios/binary.sh (COPY's binary format, differentially).

  binary_corpus.py corpus DIR
      Reads DIR/base.bin, a valid binary COPY file the server wrote (`COPY bin.mal_src TO ...
      WITH (FORMAT binary)`: columns a int, b text, c date, d numeric; three rows), and writes
      the malformed corpus built from it (and from fields made here, for the receive functions
      of other types) as DIR/mal/NAME.bin, and DIR/mal/cases.txt with one case a line:
      `NAME|TABLE COLUMNS|COLUMN LIST` (the table the case is loaded into, and the COPY column
      list, empty for all columns). Which cases COPY accepts and what it says about the others
      is not written down here: the server's COPY on the same file is the oracle.

  binary_corpus.py psycopg SOCKET-DIR PORT DIR
      psycopg 3's binary copy (`cur.copy("COPY ... FROM STDIN (FORMAT BINARY)")`, `set_types`,
      `write_row`) through the COPY hook: the same rows with fastcopy.copy_from off (the
      server's COPY) and require (fastcopy: a COPY it cannot take would be an ERROR) into twin
      tables, which must end equal; with `on` and DEBUG1 no hand-over message; a row the
      receive function rejects. Then files of DIR (the corpus, the round trip's rt.bin) written
      with `Copy.write` as many CopyData messages of 1 to 4093 bytes, off and require: the same
      table or the same error. Prints one ok/FAIL line per check; exit 1 on a failure.
"""
import os
import struct
import sys

SIG = b"PGCOPY\n\xff\r\n\x00"


def i16(v):
    return struct.pack(">h", v)


def i32(v):
    return struct.pack(">i", v)


def u32(v):
    return struct.pack(">I", v)


def i64(v):
    return struct.pack(">q", v)


def parse(data):
    """header bytes (signature, flags, extension) and the tuples: lists of fields (bytes or None)"""
    assert data[:11] == SIG, "base.bin: not a binary COPY file"
    ext = struct.unpack(">i", data[15:19])[0]
    at = 19 + ext
    header, tuples = data[:at], []
    while True:
        (n,) = struct.unpack(">h", data[at:at + 2])
        at += 2
        if n == -1:
            assert at == len(data), "base.bin: data after the trailer"
            return header, tuples
        fields = []
        for _ in range(n):
            (ln,) = struct.unpack(">i", data[at:at + 4])
            at += 4
            if ln == -1:
                fields.append(None)
            else:
                fields.append(data[at:at + ln])
                at += ln
        tuples.append(fields)


def tup(fields, count=None):
    """one tuple: its field count (COUNT if given) and each field (None: NULL, int: a raw
    length word with no data after it)"""
    out = i16(len(fields) if count is None else count)
    for f in fields:
        if f is None:
            out += i32(-1)
        elif isinstance(f, int):
            out += i32(f)
        else:
            out += i32(len(f)) + f
    return out


TRAILER = i16(-1)
HEADER = SIG + i32(0) + i32(0)


def file_of(*tuples, header=HEADER, trailer=TRAILER):
    return header + b"".join(tuples) + trailer


def numeric(ndigits, weight, sign, dscale, digits):
    return i16(ndigits) + i16(weight) + struct.pack(">H", sign) + i16(dscale) + b"".join(i16(d) for d in digits)


def array(ndim, flags, elemtype, dims, elems):
    out = i32(ndim) + i32(flags) + u32(elemtype)
    for n, lb in dims:
        out += i32(n) + i32(lb)
    for e in elems:
        out += i32(-1) if e is None else i32(len(e)) + e
    return out


def corpus(d):
    base = open(os.path.join(d, "base.bin"), "rb").read()
    header, rows = parse(base)
    assert len(rows) == 3 and all(len(r) == 4 for r in rows), "base.bin: expected 3 rows of 4 fields"
    r1, r2, r3 = (tup(r) for r in rows)
    body = r1 + r2 + r3
    flags_at, ext_at = 11, 15
    out = os.path.join(d, "mal")
    os.makedirs(out, exist_ok=True)
    cases = []
    mal = "a int, b text, c date, d numeric"

    def case(name, data, defs=mal, cols=""):
        with open(os.path.join(out, name + ".bin"), "wb") as f:
            f.write(data)
        cases.append(f"{name}|{defs}|{cols}")

    def with_flags(flags, rest=body + TRAILER):
        return SIG + u32(flags) + i32(0) + rest

    # -- the file as the server wrote it, and the header's defects
    case("valid", base)
    case("empty_file", b"")
    case("short_signature", SIG[:5])
    case("wrong_signature", b"PGCOPY\n\xff\r\n\x01" + base[11:])
    case("signature_lowercase", b"pgcopy\n\xff\r\n\x00" + base[11:])
    case("signature_only", SIG)
    case("flags_truncated", SIG + b"\x00\x00")
    case("flag_oids_bit16", with_flags(1 << 16))
    case("flag_critical_bit17", with_flags(1 << 17))
    case("flag_critical_bit31", with_flags(1 << 31))
    case("flag_noncritical_bit0", with_flags(1))             # accepted: bits 0-15 are not critical
    case("flag_noncritical_bit15_and_oids", with_flags((1 << 15) | (1 << 16)))
    case("missing_extension_length", SIG + i32(0))
    case("extension_length_truncated", SIG + i32(0) + b"\x00\x00")
    case("extension_length_negative", SIG + i32(0) + i32(-1) + body + TRAILER)
    case("extension_longer_than_data", SIG + i32(0) + i32(1000) + b"abc")
    case("extension_skipped", SIG + i32(0) + i32(8) + b"\x00\x00\x00\x01skip" + body + TRAILER)
    case("extension_holds_a_trailer", SIG + i32(0) + i32(2) + TRAILER + body + TRAILER)
    case("header_only", header)                              # no tuples, no trailer
    case("header_and_trailer", header + TRAILER)
    # -- tuples
    case("count_truncated_1_byte", header + r1 + b"\x00")    # the server: end of data
    case("count_truncated_at_start", header + b"\xff")
    case("count_3_of_4_row2", header + r1 + tup(rows[1], 3) + r3 + TRAILER)
    case("count_5_of_4_row1", header + tup(rows[0] + [None]) + TRAILER)
    case("count_0", header + r1 + i16(0) + TRAILER)
    case("count_minus_2", header + r1 + i16(-2) + TRAILER)
    case("field_length_minus_2", header + tup([rows[0][0], -2], 4))
    case("field_length_minus_1_is_null", header + tup([rows[0][0], None, None, None]) + TRAILER)
    case("field_longer_than_rest", header + r1 + tup([rows[1][0], 1000], 4) + b"two")
    case("field_length_huge", header + tup([rows[0][0], 0x7FFFFFFF], 4) + b"x" * 10)
    case("field_truncated", (header + body)[:-3])
    case("field_length_truncated", header + r1 + i16(4) + b"\x00\x00")
    case("ends_after_count", header + r1 + i16(4))
    case("no_trailer", header + body)                        # accepted by COPY
    case("junk_after_trailer", header + body + TRAILER + b"junk")
    case("one_byte_after_trailer", header + body + TRAILER + b"\x00")
    case("two_trailers", header + body + TRAILER + TRAILER)
    case("trailer_mid_file", header + r1 + TRAILER + r2 + TRAILER)
    # -- values the receive functions reject
    one = rows[0]
    case("int4_length_3", header + tup([b"\x00\x00\x01"] + one[1:]) + TRAILER)
    case("int4_length_8", header + tup([i64(1)] + one[1:]) + TRAILER)
    case("int4_length_0", header + tup([b""] + one[1:]) + TRAILER)
    case("int4_length_8_row2", header + r1 + tup([i64(2)] + rows[1][1:]) + r3 + TRAILER)
    case("date_out_of_range", header + tup(one[:2] + [i32(0x7FFFFFFE), one[3]]) + TRAILER)
    case("date_minus_infinity_ok", header + tup(one[:2] + [i32(-0x80000000), one[3]]) + TRAILER)
    case("text_invalid_utf8", header + tup([one[0], b"ab\xffcd"] + one[2:]) + TRAILER)
    case("text_nul_byte", header + r1 + tup([rows[1][0], b"a\x00b"] + rows[1][2:]) + TRAILER)
    case("text_truncated_utf8", header + tup([one[0], "ü".encode()[:1]] + one[2:]) + TRAILER)
    case("text_big_then_invalid", header + r1 + tup([rows[1][0], b"x" * 300000 + b"\xc3"] + rows[1][2:]) + TRAILER)
    case("numeric_bad_sign", header + tup(one[:3] + [numeric(1, 0, 0x1234, 0, [5])]) + TRAILER)
    case("numeric_bad_digit", header + tup(one[:3] + [numeric(1, 0, 0, 0, [10000])]) + TRAILER)
    case("numeric_short_digits", header + tup(one[:3] + [numeric(3, 0, 0, 0, [1])]) + TRAILER)
    case("numeric_bad_dscale", header + tup(one[:3] + [numeric(1, 0, 0, 0x4000, [1])]) + TRAILER)
    case("numeric_nan_ok", header + tup(one[:3] + [numeric(0, 0, 0xC000, 0, [])]) + TRAILER)
    case("numeric_trailing_byte", header + tup(one[:3] + [numeric(1, 0, 0, 0, [7]) + b"\x00"]) + TRAILER)
    case("error_in_row3_col4", header + r1 + r2 + tup(rows[2][:3] + [b"\x00"]) + TRAILER)
    case("column_list_count_mismatch", header + r1 + TRAILER, mal, "b, a")
    case("column_list_ok", file_of(tup([b"bee", i32(7)])), mal, "b, a")
    case("column_list_int_in_text_col", file_of(tup([i32(7), b"bee"])), mal, "b, a")
    # one of 100 000 rows, past several of the readers' chunks
    many = b"".join(tup([i32(i), b"row %d" % i, one[2], one[3]]) for i in range(1, 100001))
    case("error_at_row_100001", header + many + tup([b"\x00\x00"] + one[1:]) + TRAILER)
    case("count_wrong_at_row_100001", header + many + tup(one[:3]) + TRAILER)
    case("truncated_at_row_100001", header + many + tup(one)[:-2])
    # other types' receive functions (the table is one or two columns of that type)
    ok = i32(1)
    case("int2_length_4", file_of(tup([ok, i32(1)])), "id int, v int2")
    case("int8_length_4", file_of(tup([ok, i32(1)])), "id int, v int8")
    case("float8_length_4", file_of(tup([ok, i32(1)])), "id int, v float8")
    case("float4_length_8", file_of(tup([ok, i64(1)])), "id int, v float4")
    case("bool_length_2", file_of(tup([ok, b"\x01\x00"])), "id int, v bool")
    case("bool_byte_7_ok", file_of(tup([ok, b"\x07"])), "id int, v bool")
    case("uuid_length_15", file_of(tup([ok, b"u" * 15])), "id int, v uuid")
    case("timestamp_out_of_range", file_of(tup([ok, i64(0x7FFFFFFFFFFFFFFE)])), "id int, v timestamp")
    case("timestamptz_out_of_range", file_of(tup([ok, i64(-0x7FFFFFFFFFFFFFFE)])), "id int, v timestamptz")
    case("time_out_of_range", file_of(tup([ok, i64(86400 * 1000000 + 1)])), "id int, v time")
    case("interval_length_12", file_of(tup([ok, i64(1) + i32(1)])), "id int, v interval")
    case("varchar5_too_long", file_of(tup([ok, b"abcde"]), tup([i32(2), b"abcdef"])), "id int, v varchar(5)")
    case("varchar5_trailing_spaces_ok", file_of(tup([ok, b"abc      "])), "id int, v varchar(5)")
    case("char2_too_long", file_of(tup([ok, b"abc"])), "id int, v char(2)")
    case("enum_unknown_label", file_of(tup([ok, b"ok"]), tup([i32(2), b"nope"])), "id int, v bin.bin_mood")
    case("domain_check_violated", file_of(tup([ok, i32(5)]), tup([i32(2), i32(-5)])), "id int, v bin.bin_pos")
    case("domain_not_null_gets_null", file_of(tup([ok, b"x"]), tup([i32(2), None])), "id int, v bin.bin_nn")
    case("not_null_column_gets_null", file_of(tup([ok, b"x"]), tup([i32(2), None])), "id int, v text NOT NULL")
    case("check_constraint_violated", file_of(tup([ok, i32(5)]), tup([i32(2), i32(-5)])), "id int, v int CHECK (v > 0)")
    case("unique_violation", file_of(tup([ok, i32(5)]), tup([ok, i32(6)])), "id int PRIMARY KEY, v int")
    case("json_invalid", file_of(tup([ok, b'{"a": 1}']), tup([i32(2), b"{"])), "id int, v json")
    case("jsonb_version_2", file_of(tup([ok, b"\x02{}"])), "id int, v jsonb")
    case("jsonb_invalid_text", file_of(tup([ok, b"\x01{]"])), "id int, v jsonb")
    case("inet_bad_family", file_of(tup([ok, b"\x09\x20\x00\x04\x01\x02\x03\x04"])), "id int, v inet")
    case("cidr_bits_set_right_of_mask", file_of(tup([ok, b"\x02\x08\x01\x04\x0a\x01\x00\x00"])), "id int, v cidr")
    case("array_wrong_element_type", file_of(tup([ok, array(1, 0, 25, [(1, 1)], [b"x"])])), "id int, v int4[]")
    case("array_too_many_dims", file_of(tup([ok, array(7, 0, 23, [(1, 1)] * 7, [i32(1)])])), "id int, v int4[]")
    case("array_bad_flags", file_of(tup([ok, array(1, 2, 23, [(1, 1)], [i32(1)])])), "id int, v int4[]")
    case("array_element_length_3", file_of(tup([ok, array(1, 0, 23, [(1, 1)], [b"\x00\x00\x01"])])), "id int, v int4[]")
    case("array_ok_null_element_lbound_0", file_of(tup([ok, array(1, 1, 23, [(2, 0)], [None, i32(3)])])), "id int, v int4[]")
    case("record_wrong_column_count", file_of(tup([ok, i32(1) + u32(23) + i32(4) + i32(1)])), "id int, v bin.bin_pair")
    case("record_wrong_column_type", file_of(tup([ok, i32(2) + u32(25) + i32(1) + b"1" + u32(25) + i32(1) + b"y"])), "id int, v bin.bin_pair")
    case("bytea_any_bytes_ok", file_of(tup([ok, bytes(range(256))])), "id int, v bytea")
    with open(os.path.join(out, "cases.txt"), "w") as f:
        f.write("\n".join(cases) + "\n")
    print(len(cases))


def psycopg_checks(sockdir, port, d):
    import datetime
    import decimal
    import uuid

    import psycopg
    from psycopg.types.json import Jsonb

    fail = 0

    def check(label, ok, detail=""):
        nonlocal fail
        print(f"{'ok  ' if ok else 'FAIL'} psycopg binary: {label}" + ("" if ok else "\n       " + str(detail).replace("\n", " ⏎ ")))
        fail |= not ok

    def connect(mode):
        opts = "-c search_path=bin,public"
        if mode != "off":
            opts += f" -c session_preload_libraries=fastcopy -c fastcopy.copy_from={mode}"
        return psycopg.connect(host=sockdir, port=port, user="postgres", dbname="postgres",
                               options=opts, autocommit=True)

    cols = ("id int, i2 int2, i8 int8, n numeric, f8 float8, f4 float4, b bool, t text, by bytea, "
            "d date, ts timestamp, tz timestamptz, u uuid, jb jsonb, a int4[], ta text[]")
    types = ["int4", "int2", "int8", "numeric", "float8", "float4", "bool", "text", "bytea",
             "date", "timestamp", "timestamptz", "uuid", "jsonb", "int4[]", "text[]"]
    with connect("off") as c:
        for t in ("py_off", "py_on"):
            c.execute(f"DROP TABLE IF EXISTS {t}")
            c.execute(f"CREATE TABLE {t} ({cols})")
    utc = datetime.timezone.utc
    rows = []
    for i in range(1, 20001):
        nul = i % 11 == 0
        rows.append((
            i, (i % 65536) - 32768, i * 1000003 - 2**62, None if nul else decimal.Decimal(i) / 7,
            float("nan") if i == 3 else i / 3, float("inf") if i == 4 else i / 9.0, i % 2 == 0,
            None if nul else f"ünï\t{i}\n€" * (1 + i % 3), bytes([i % 256]) * (i % 50),
            datetime.date(2000, 1, 1) + datetime.timedelta(days=i), datetime.datetime(2024, 1, 1) + datetime.timedelta(seconds=i),
            datetime.datetime(2024, 1, 1, tzinfo=utc) + datetime.timedelta(microseconds=i * 1001), uuid.UUID(int=i * 7919),
            Jsonb({"i": i, "a": [i, None, "x"]}), [i, None, -i] if i % 5 else [], ["a", None, f"q\"{i}"]))
    rows.append((0, 32767, 2**63 - 1, decimal.Decimal("NaN"), float("-inf"), -0.0, None, "x" * 200000,
                 bytes(range(256)) * 500, datetime.date(9999, 12, 31), datetime.datetime(1, 1, 1),
                 datetime.datetime(9999, 12, 31, 23, 59, 59, 999999, tzinfo=utc), uuid.UUID(int=0), Jsonb([]), [], []))
    counts = {}
    for mode, table in (("off", "py_off"), ("require", "py_on")):
        try:
            with connect(mode) as c, c.cursor() as cur:
                with cur.copy(f"COPY {table} FROM STDIN (FORMAT BINARY)") as copy:
                    copy.set_types(types)
                    for r in rows:
                        copy.write_row(r)
                counts[mode] = cur.rowcount
        except psycopg.Error as e:
            counts[mode] = f"{e.sqlstate}: {e.diag.message_primary}"
    check(f"write_row with set_types, off: {counts['off']} rows, require: {counts['require']}",
          counts["off"] == counts["require"] == len(rows), f"{counts}")
    with connect("off") as c:
        a = c.execute("SELECT md5(string_agg(r__::text, E'\\n' ORDER BY id)), count(*) FROM py_off r__").fetchone()
        b = c.execute("SELECT md5(string_agg(r__::text, E'\\n' ORDER BY id)), count(*) FROM py_on r__").fetchone()
    check(f"the same table off and require ({b[1]} rows)", a == b and b[1] == len(rows), f"off {a} require {b}")

    # with `on` and DEBUG1: taken, so no hand-over message (COPY FROM PROGRAM would have one)
    msgs = []
    with connect("on") as c:
        c.add_notice_handler(lambda d: msgs.append(d.message_primary))
        c.execute("SET client_min_messages = debug1")
        c.execute("TRUNCATE py_on")
        with c.cursor() as cur:
            with cur.copy("COPY py_on FROM STDIN (FORMAT BINARY)") as copy:
                copy.set_types(types)
                for r in rows[:100]:
                    copy.write_row(r)
        handed = [m for m in msgs if m and "hands this COPY" in m]
        n = c.execute("SELECT count(*) FROM py_on").fetchone()[0]
    check(f"with on and DEBUG1: no hand-over message ({n} rows)", not handed and n == 100, f"{handed}")

    # a row the receive function rejects (an int4 column written as int8): the same error
    def bad(mode):
        with connect(mode) as c:
            c.execute("TRUNCATE py_on")
            try:
                with c.cursor() as cur, cur.copy("COPY py_on (id, t) FROM STDIN (FORMAT BINARY)") as copy:
                    copy.set_types(["int4", "text"])
                    copy.write_row((1, "ok"))
                    copy.set_types(["int8", "text"])
                    copy.write_row((2, "bad"))
                return "no error"
            except psycopg.Error as e:
                return f"{e.sqlstate}: {e.diag.message_primary} | {e.diag.context}"

    off, on = bad("off"), bad("require")
    check(f"an int8 sent for an int4 column: {off.splitlines()[0]}", off == on, f"off {off} require {on}")

    # files of the corpus (and the round trip's) written as many CopyData messages of 1 to
    # 4093 bytes: the header, counts and fields split across messages
    defs = {}
    for line in open(os.path.join(d, "mal", "cases.txt")):
        name, cols, _ = line.rstrip("\n").split("|")
        defs[name] = cols
    sizes = [1, 2, 3, 5, 7, 11, 13, 4093]

    def pieces(mode, table, prep, path):
        data = open(path, "rb").read()
        with connect(mode) as c:
            c.execute(prep)
            try:
                with c.cursor() as cur, cur.copy(f"COPY {table} FROM STDIN (FORMAT BINARY)") as copy:
                    at = i = 0
                    while at < len(data):
                        n = sizes[i % len(sizes)]
                        copy.write(data[at:at + n])
                        at += n
                        i += 1
            except psycopg.Error as e:
                dg = e.diag
                return f"{e.sqlstate}: {dg.message_primary} | {dg.message_detail} | {dg.context}"
            return "ok %s %s" % c.execute(f"SELECT count(*), coalesce(sum(hashtextextended(r__::text, 0)::numeric), 0) FROM {table} r__").fetchone()

    for name in ("valid", "extension_skipped", "flag_critical_bit17", "extension_longer_than_data",
                 "count_truncated_1_byte", "no_trailer", "junk_after_trailer", "one_byte_after_trailer",
                 "trailer_mid_file", "field_truncated", "field_longer_than_rest", "text_big_then_invalid",
                 "int4_length_8_row2", "error_at_row_100001", "json_invalid"):
        prep = f"DROP TABLE IF EXISTS mt; CREATE TABLE mt ({defs[name]})"
        off, on = (pieces(mode, "mt", prep, os.path.join(d, "mal", name + ".bin")) for mode in ("off", "require"))
        check(f"{name} in small CopyData messages: {off.splitlines()[0]}", off == on, f"off {off} | require {on}")
    off, on = (pieces(mode, "rt", "TRUNCATE rt", os.path.join(d, "rt.bin")) for mode in ("off", "require"))
    check(f"the round trip's file in small CopyData messages: {off}", off == on and off.startswith("ok 600 "), f"off {off} | require {on}")
    sys.exit(fail)


if __name__ == "__main__":
    if sys.argv[1] == "corpus":
        corpus(sys.argv[2])
    elif sys.argv[1] == "psycopg":
        psycopg_checks(sys.argv[2], sys.argv[3], sys.argv[4])
    else:
        sys.exit(f"usage: {sys.argv[0]} corpus DIR | psycopg SOCKET-DIR PORT DIR")
