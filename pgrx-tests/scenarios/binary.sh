#!/usr/bin/env bash
# COPY's binary format, differentially: the server's COPY on the same input
# is the oracle of every check. Each input is loaded by COPY from the server file and from psql's
# \copy (COPY FROM STDIN), and by fastcopy: `fastcopy.load(..., format => 'binary')`,
# `fastcopy.load_data(..., bytea, format => 'binary')` and the COPY hook (fastcopy.copy_from =
# require: \copy, and COPY from the server file). All must end with the same table (its rows as
# text), or the same error: every line psql shows verbosely (SQLSTATE, message, DETAIL, HINT,
# CONTEXT with its line and column) but LOCATION, fastcopy's CONTEXT verb made COPY's.
#  1. a round trip of every built-in type users load (extremes, NaN/infinities, NULLs, empty and
#     non-ASCII strings, TOAST-size values, arrays, a composite, an enum, domains), written by
#     `COPY ... TO (FORMAT binary)`; a column list with defaults; 200 000 rows (many read chunks)
#  2. a malformed corpus built by binary_corpus.py from a file the server wrote: the header's
#     defects, tuples' (field counts, lengths, truncation, the trailer), values receive
#     functions reject, errors after many rows
#  3. the options binary refuses (SQLSTATE and message, as COPY's), and ENCODING /
#     client_encoding (text fields are converted by the receive functions, from client_encoding)
#  4. psycopg 3 writing binary rows (set_types, write_row) through the hook, and files of the
#     corpus written as many CopyData messages of 1 to 4093 bytes (binary_corpus.py psycopg)
#  5. a binary COPY through the hook in a transaction then prepared (PREPARE TRANSACTION;
#     max_prepared_transactions is set for the run with ALTER SYSTEM and a restart if it is 0)
# Runs against the build `cargo pgrx test pgNN` just installed, on the throwaway cluster.
#   pgrx-tests/scenarios/binary.sh 18
set -uo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
cd "$here/../.."
m=${1:?major}
. scripts/scenario_lib.sh
scripts/cluster.sh start "$m" >/dev/null
dir="$FASTCOPY_RUN/bin-$m"
rm -rf "$dir"; mkdir -p "$dir"; chmod 755 "$dir"
[ "$(id -u)" -eq 0 ] && chown "$FASTCOPY_USER" "$dir"   # the server writes the COPY TO files
export PGCLIENTENCODING=UTF8
base="-c search_path=bin,public -c client_min_messages=warning"
on="-c session_preload_libraries=fastcopy -c fastcopy.copy_from"
flat() { sed ':a;N;$!ba;s/\n/ ⏎ /g' <<<"$1"; }

# PREPARE TRANSACTION needs max_prepared_transactions > 0 (cluster.sh's initdb leaves it 0):
# set for this run, reset at the end (a restart each way)
mpt=$(psql -c "SHOW max_prepared_transactions")
if [ "$mpt" = 0 ]; then
  psql -c "ALTER SYSTEM SET max_prepared_transactions = 4" >/dev/null
  scripts/cluster.sh stop "$m"; scripts/cluster.sh start "$m" >/dev/null
  trap 'psql -c "ALTER SYSTEM RESET max_prepared_transactions" >/dev/null
        scripts/cluster.sh stop "$m"; scripts/cluster.sh start "$m" >/dev/null' EXIT
fi

psql -v ON_ERROR_STOP=1 >/dev/null <<'SQL' || { echo "FAIL setup"; exit 1; }
SET client_min_messages = warning;
SELECT format('ROLLBACK PREPARED %L', gid) FROM pg_prepared_xacts WHERE gid LIKE 'bin\_%' \gexec
DROP EXTENSION IF EXISTS fastcopy CASCADE;
CREATE EXTENSION fastcopy;
DROP SCHEMA IF EXISTS bin CASCADE;
CREATE SCHEMA bin;
CREATE TYPE bin.bin_pair AS (x int, y text);
CREATE TYPE bin.bin_mood AS ENUM ('sad', 'ok', 'happy');
CREATE DOMAIN bin.bin_pos AS int CHECK (VALUE > 0);
CREATE DOMAIN bin.bin_nn AS text NOT NULL;
-- the columns whose rows (ordered by id) differ between two tables of the same shape
CREATE FUNCTION bin.diffcols(a regclass, b regclass) RETURNS text LANGUAGE plpgsql AS $$
DECLARE col name; x text; y text; o text[] := '{}';
BEGIN
  FOR col IN SELECT attname FROM pg_attribute WHERE attrelid = a AND attnum > 0 AND NOT attisdropped ORDER BY attnum LOOP
    EXECUTE format('SELECT md5(string_agg(coalesce(%1$I::text, ''<null>''), E''\n'' ORDER BY id)) FROM %2$s', col, a) INTO x;
    EXECUTE format('SELECT md5(string_agg(coalesce(%1$I::text, ''<null>''), E''\n'' ORDER BY id)) FROM %2$s', col, b) INTO y;
    IF x IS DISTINCT FROM y THEN o := o || col::text; END IF;
  END LOOP;
  RETURN 'columns that differ: ' || coalesce(nullif(array_to_string(o, ', '), ''), 'none (row count?)');
END $$;
SQL

# outcome MODE PREP SQL TABLE: PREP (empties or creates TABLE), then SQL, in one session with
# fastcopy.copy_from = MODE (off: the library not loaded). Prints "ok ROWS SUM", SUM the sum of
# a 64-bit hash of each of TABLE's rows as text (no sort: cheap on 200 000 rows), or the error:
# every line psql shows verbosely but LOCATION, with fastcopy's CONTEXT verb (fastcopy.load)
# made COPY's.
outcome() {
  local mode=$1 prep=$2 sql=$3 tab=$4 opts=$base out err
  [ "$mode" = off ] || opts="$base $on=$mode"
  out=$(PGOPTIONS="$opts" psql -v ON_ERROR_STOP=1 -v VERBOSITY=verbose -c "$prep" -c '\echo prep-done' -c "$sql" \
        -c "SELECT 'ok ' || count(*) || ' ' || coalesce(sum(hashtextextended(r__::text, 0)::numeric), 0) FROM $tab r__" \
        2>"$dir/stderr")
  err=$(grep -v '^LOCATION:' "$dir/stderr" | sed -E 's/^psql:[^ ]* //; s/^(CONTEXT:  )?fastcopy\.load(_data)? /\1COPY /')
  if [[ "$out" != *prep-done* ]]; then echo "the script's own SQL failed: $(flat "$err")"
  elif [ -n "$err" ]; then printf '%s\n' "$err"; else printf '%s\n' "${out##*$'\n'}"; fi
}
# same LABEL TABLE PREP FILE [COPY-OPTIONS [FASTCOPY-ARGS [COLUMNS]]]: FILE into TABLE by COPY
# from the server file (the oracle) and by psql's \copy (COPY FROM STDIN), by fastcopy.load,
# load_data and the hook (require: \copy and the server file); each must end as COPY does from
# the same source. Sets c (COPY's outcome) for the caller.
same() {
  local label=$1 tab=$2 prep=$3 file=$4 copt=${5:+, $5} fopt=${6:+, $6} cols=${7:-} cl="" fc=""
  [ -n "$cols" ] && cl=" ($cols)" && fc=", columns => '{$cols}'"
  local cs fl fd hs hf diff=""
  c=$(outcome off "$prep" "COPY $tab$cl FROM '$file' WITH (FORMAT binary$copt)" "$tab")
  cs=$(outcome off "$prep" "\\copy $tab$cl FROM '$file' WITH (FORMAT binary$copt)" "$tab")
  fl=$(outcome off "$prep" "SELECT FROM fastcopy.load('$tab', '$file', format => 'binary'$fc$fopt)" "$tab")
  fd=$(outcome off "$prep" "SELECT FROM fastcopy.load_data('$tab', pg_read_binary_file('$file'), format => 'binary'$fc$fopt)" "$tab")
  hs=$(outcome require "$prep" "\\copy $tab$cl FROM '$file' WITH (FORMAT binary$copt)" "$tab")
  hf=$(outcome require "$prep" "COPY $tab$cl FROM '$file' WITH (FORMAT binary$copt)" "$tab")
  [ "$fl" = "$c" ] || diff+=" | fastcopy.load: $(flat "$fl")"
  [ "$fd" = "$c" ] || diff+=" | load_data: $(flat "$fd")"
  [ "$hs" = "$cs" ] || diff+=" | hook \\copy: $(flat "$hs") (COPY's \\copy: $(flat "$cs"))"
  [ "$hf" = "$c" ] || diff+=" | hook server file: $(flat "$hf")"
  check "$label: ${c%%$'\n'*}" '[ -z "$diff" ] && [ -n "$c" ] && [[ "$c" != "the script"* ]]' "COPY: $(flat "$c")$diff"
}

# ---- 1. the round trip of every type ----
if [ "$m" -ge 17 ]; then ivmax="'infinity'" ivmin="'-infinity'"; else ivmax="'178000000 years'" ivmin="'-178000000 years'"; fi
psql -v ON_ERROR_STOP=1 >/dev/null <<SQL || { echo "FAIL setup of the round trip"; exit 1; }
SET client_min_messages = warning;
SET search_path = bin, public;
CREATE TABLE src (id int, i2 int2, i4 int4, i8 int8, n numeric, n2 numeric(12,4), f4 float4, f8 float8,
  b bool, t text, vc varchar, vc5 varchar(5), ch char(4), by bytea, d date, tm time, ttz timetz,
  ts timestamp, tstz timestamptz, iv interval, u uuid, j json, jb jsonb, ip inet, cn cidr,
  ai int4[], at text[], cp bin_pair, e bin_mood, dp bin_pos, dn bin_nn);
CREATE TABLE rt (LIKE src);
INSERT INTO src VALUES
 (1, 1, 1, 1, 1.5, 1.2345, 1.5, 1.5, true, 'plain', 'vc', 'abcde', 'ab', '\x0102', '2024-02-29',
  '12:34:56.789', '12:34:56+05:30', '2024-02-29 12:34:56.123456', '2024-02-29 12:34:56.123456+00',
  '1 year 2 mons 3 days 04:05:06.7', 'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11', '{"a": [1, 2.50, "x"], "a": 2}',
  '{"b": {"c": [1, null, true]}}', '192.168.0.1/24', '10.0.0.0/8', '{1,2,3}', '{a,b,c}', '(1,x)', 'ok', 1, 'nn'),
 (2, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL,
  NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, 'all null'),
 (3, -32768, -2147483648, -9223372036854775808, 'NaN', -99999999.9999, 'NaN', 'NaN', false, '', '', '', '',
  '\x', '4714-11-24 BC', '00:00:00', '00:00:00+15:59', '4714-11-24 00:00:00 BC', '4714-11-24 00:00:00+00 BC',
  $ivmin, '00000000-0000-0000-0000-000000000000', '""', '""', '0.0.0.0/0', '0.0.0.0/0', '{}', '{}', '(,)',
  'sad', 2147483647, ''),
 (4, 32767, 2147483647, 9223372036854775807, 'Infinity', 99999999.9999, 'Infinity', 'Infinity', true, 'x', 'y',
  'z', 'abcd', '\xff', '5874897-12-31', '24:00:00', '24:00:00-15:59', '294276-12-31 23:59:59.999999',
  '294276-12-31 23:59:59.999999+00', $ivmax, 'ffffffff-ffff-ffff-ffff-ffffffffffff', '[]', '[]',
  '::ffff:1.2.3.4/128', '2001:db8::/32', '{{1,2},{3,NULL}}', '{{a,NULL},{"",c}}', '(2147483647,"")', 'happy',
  1, 'max'),
 (5, 0, 0, 0, '-Infinity', 0, '-Infinity', '-Infinity', false, ' ', ' ', ' ', ' ', '\x00', '-infinity',
  '23:59:59.999999', '23:59:59.999999+00', '-infinity', '-infinity', '-1 days +02:03', NULL, 'null', 'null',
  '2001:db8::1/64', '::/0', '{NULL,NULL}', '{NULL,"NULL",""}', '(-1,"a,b")', 'ok', 2, ' '),
 (6, -1, -1, -1, '1e-100', 0.0001, '1.4e-45', '4.9e-324', true, E'tab\there\nnew\\\\line', E'cr\r\n', 'ünïcö',
  'ü€', decode(repeat('00ff7f80', 64), 'hex'), 'infinity', '00:00:00.000001', '12:00:00-00:00:01', 'infinity',
  'infinity', '1 microsecond', '123e4567-e89b-12d3-a456-426614174000', '{"k": "\u00e9", "e": 1e400}',
  '{"k": "\u00e9", "n": 1.000}', '255.255.255.255', '255.255.255.255/32', '[0:1][-1:0]={{1,2},{3,4}}',
  '{{{a}},{{b}}}', '(0,"\\\\""")', 'happy', 3, E'\\\\N'),
 (7, 2, 2, 2, '-0.000', -0.0001, '-0', '-0', false, 'ünïcödé €日本語🎉', 'ünï', '日本語🎉x', '🎉', '\xc3bc',
  '2000-01-01', '12:00', '12:00+14', '2000-01-01 00:00', '2000-01-01 00:00+14', '-178000000 years',
  'A0EEBC99-9C0B-4EF8-BB6D-6BB9BD380A11', '"ü"', '"ü"', '10.1.2.3', '10.1.2.0/24', '{-2147483648,2147483647}',
  '{"ü","日本",NULL}', '(7,"ü")', 'sad', 4, '日本'),
 (8, 3, 3, 3, 1.7976931348623157e308::numeric * 10, 1, '3.4028235e38', '1.7976931348623157e308', true,
  repeat('x', 100000), repeat('ü', 50000), 'a', 'b', decode(repeat('ab', 100000), 'hex'), '1999-12-31',
  '01:02:03', '01:02:03-08', '1999-12-31 23:59:59', '1999-12-31 23:59:59-08', '100 years', NULL,
  (SELECT json_agg(g)::text FROM generate_series(1, 20000) g)::json,
  (SELECT jsonb_agg(g) FROM generate_series(1, 20000) g), NULL, NULL,
  (SELECT array_agg(g) FROM generate_series(1, 30000) g), (SELECT array_agg(md5(g::text)) FROM generate_series(1, 5000) g),
  ROW(8, repeat('p', 100000))::bin_pair, 'ok', 5, repeat('d', 100000)),
 (9, 4, 4, 4, ('0.' || repeat('9', 1000))::numeric, 12345678.1234, 1, 1, false,
  (SELECT string_agg(md5(g::text), '') FROM generate_series(1, 10000) g), NULL, NULL, NULL,
  (SELECT decode(string_agg(md5(g::text), ''), 'hex') FROM generate_series(1, 10000) g), NULL, NULL, NULL,
  NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, '{{{{{{1}}}}}}', NULL, NULL, NULL, NULL, 'big random');
INSERT INTO src SELECT g, g % 32768, g * 7919, g::int8 * 1000003, g / 7.0, g / 3.0, g / 9.0, g / 11.0, g % 2 = 0,
  'row ' || g, left(md5(g::text), g % 12), left(md5(g::text), 5), left(md5(g::text), 3),
  decode(md5(g::text), 'hex'), date '2000-01-01' + g, time '00:00' + g * interval '1 s',
  (time '00:00' + g * interval '1 s')::timetz, timestamp '2020-01-01' + g * interval '1 min',
  timestamptz '2020-01-01 00:00+02' + g * interval '1 h', g * interval '1 s 1 ms', md5(g::text)::uuid,
  json_build_object('g', g), jsonb_build_object('k', g, 'a', ARRAY[g, -g]), ('10.0.' || g % 256 || '.1')::inet,
  ('10.' || g % 256 || '.0.0/16')::cidr, ARRAY[g, NULL, -g], ARRAY['x', NULL, 'q"u\\o' || g],
  ROW(g, 'p' || g)::bin_pair, (ARRAY['sad', 'ok', 'happy'])[1 + g % 3]::bin_mood, g, 'n' || g
FROM generate_series(10, 600) g;
COPY src TO '$dir/rt.bin' WITH (FORMAT binary);
-- a column list: defaults (a constant, a domain's NOT NULL with a default, a generated column)
CREATE TABLE cs (a int, b text DEFAULT 'dflt', c date, d int DEFAULT 42, e bin_nn DEFAULT 'dn',
  g int GENERATED ALWAYS AS (a * 2) STORED);
COPY (SELECT g, date '2024-01-01' + g FROM generate_series(1, 1000) g) TO '$dir/cs_ac.bin' WITH (FORMAT binary);
COPY (SELECT date '2024-01-01' + g, g FROM generate_series(1, 1000) g) TO '$dir/cs_ca.bin' WITH (FORMAT binary);
COPY (SELECT g FROM generate_series(1, 10) g) TO '$dir/cs_a.bin' WITH (FORMAT binary);
CREATE TABLE csn (a int, v bin_nn);
-- more rows than several of the readers' chunks
CREATE TABLE big (id int, t text, n numeric, ts timestamptz, a int[]);
COPY (SELECT g, repeat('r', g % 37) || g, g / 13.0, timestamptz '2024-01-01 00:00+00' + g * interval '1 s',
             ARRAY[g, g % 7] FROM generate_series(1, 200000) g) TO '$dir/big.bin' WITH (FORMAT binary);
SQL
chmod 644 "$dir"/*.bin

s=$(outcome off "SELECT" "SELECT" src)
c=$(outcome off "TRUNCATE rt" "COPY rt FROM '$dir/rt.bin' WITH (FORMAT binary)" rt)
check "round trip: COPY TO / COPY FROM (FORMAT binary) gives the source back (${s%% *} ${s#* }, $(wc -c <"$dir/rt.bin") bytes)" \
  '[ "$c" = "$s" ] && [[ "$s" == "ok 600 "* ]]' "source: $s | COPY: $(flat "$c")"
rt_method() {  # LABEL MODE SQL: TABLE rt after SQL equals the source; which columns differ if not
  local r d=""; r=$(outcome "$2" "TRUNCATE rt" "$3" rt)
  [ "$r" = "$s" ] || d=$(PGOPTIONS="$base" psql -c "SELECT bin.diffcols('src', 'rt')" 2>&1)
  check "round trip of every type: $1 = COPY" '[ "$r" = "$s" ]' "$(flat "$r") | $d"
}
rt_method "fastcopy.load" off "SELECT FROM fastcopy.load('rt', '$dir/rt.bin', format => 'binary')"
rt_method "fastcopy.load_data" off "SELECT FROM fastcopy.load_data('rt', pg_read_binary_file('$dir/rt.bin'), format => 'binary')"
rt_method "the hook: \\copy (format binary)" require "\\copy rt FROM '$dir/rt.bin' (format binary)"
rt_method "the hook: COPY FROM a server file" require "COPY rt FROM '$dir/rt.bin' WITH (FORMAT binary)"
same "column list (a, c), defaults for b, d, e, generated g" cs "TRUNCATE cs" "$dir/cs_ac.bin" "" "" "a, c"
same "column list (c, a)" cs "TRUNCATE cs" "$dir/cs_ca.bin" "" "" "c, a"
same "column list leaving out a NOT NULL domain without a default" csn "TRUNCATE csn" "$dir/cs_a.bin" "" "" "a"
same "200 000 rows ($(( $(wc -c <"$dir/big.bin") / 1024 )) kB)" big "TRUNCATE big" "$dir/big.bin"

# ---- 2. the malformed corpus ----
psql -v ON_ERROR_STOP=1 >/dev/null <<SQL || { echo "FAIL setup of the corpus"; exit 1; }
SET search_path = bin, public;
CREATE TABLE mal_src (a int, b text, c date, d numeric);
INSERT INTO mal_src VALUES (1, 'one', '2024-01-01', 1.5), (2, 'two', NULL, -2), (3, 'ü', 'infinity', 'NaN');
COPY mal_src TO '$dir/base.bin' WITH (FORMAT binary);
SQL
n=$(python3 pgrx-tests/scenarios/binary_corpus.py corpus "$dir") || { echo "FAIL building the corpus"; exit 1; }
chmod 644 "$dir"/mal/*
check "the malformed corpus: $n cases" '[ "$n" -ge 30 ]'
while IFS='|' read -r name defs cols <&3; do
  same "malformed $name" mt "DROP TABLE IF EXISTS mt; CREATE TABLE mt ($defs)" "$dir/mal/$name.bin" "" "" "$cols"
done 3<"$dir/mal/cases.txt"

# ---- 3. options with binary ----
psql -v ON_ERROR_STOP=1 >/dev/null <<SQL || { echo "FAIL setup of the options"; exit 1; }
SET search_path = bin, public;
CREATE TABLE ot (a int, b text);
COPY (SELECT g, 'o' || g FROM generate_series(1, 10) g) TO '$dir/ot.bin' WITH (FORMAT binary);
SQL
chmod 644 "$dir/ot.bin"
# opt LABEL COPY-OPTIONS FASTCOPY-ARGS: COPY's first line (its ERROR with SQLSTATE and message,
# or ok and the table) and fastcopy.load's and load_data's with those options
opt() {
  local c f d
  c=$(outcome off "TRUNCATE ot" "COPY ot FROM '$dir/ot.bin' WITH (FORMAT binary, $2)" ot | head -1)
  f=$(outcome off "TRUNCATE ot" "SELECT FROM fastcopy.load('ot', '$dir/ot.bin', format => 'binary', $3)" ot | head -1)
  d=$(outcome off "TRUNCATE ot" "SELECT FROM fastcopy.load_data('ot', pg_read_binary_file('$dir/ot.bin'), format => 'binary', $3)" ot | head -1)
  check "option $1 with binary: $c" '[ "$f" = "$c" ] && [ "$d" = "$c" ] && [[ "$c" != "the script"* ]]' "COPY: $c | load: $f | load_data: $d"
}
opt DELIMITER "DELIMITER ','" "delimiter => ','"
opt NULL "NULL 'x'" "null_string => 'x'"
[ "$m" -ge 16 ] && opt DEFAULT "DEFAULT 'x'" "default_string => 'x'"
opt HEADER "HEADER" "header => true"
opt "HEADER false" "HEADER false" "header => false"
opt "HEADER MATCH" "HEADER match" "header_match => true"
opt QUOTE "QUOTE '\"'" "quote => '\"'"
opt ESCAPE "ESCAPE '\\'" "escape => '\\'"
opt FORCE_NOT_NULL "FORCE_NOT_NULL (b)" "force_not_null => '{b}'"
opt FORCE_NULL "FORCE_NULL (b)" "force_null => '{b}'"
opt "DELIMITER and HEADER (which is refused first)" "HEADER, DELIMITER ','" "header => true, delimiter => ','"
opt "QUOTE and NULL (which is refused first)" "QUOTE '\"', NULL 'x'" "quote => '\"', null_string => 'x'"
opt "HEADER and FORCE_NULL (which is refused first)" "HEADER, FORCE_NULL (b)" "header => true, force_null => '{b}'"
opt "FREEZE, the table not created in this transaction" "FREEZE" "freeze => true"
opt "ENCODING 'LATIN1'" "ENCODING 'LATIN1'" "encoding => 'LATIN1'"
if [ "$m" -ge 17 ]; then
  opt "ON_ERROR ignore" "ON_ERROR ignore" "on_error => 'ignore'"
  opt "ON_ERROR stop" "ON_ERROR stop" "on_error => 'stop'"
  opt "LOG_VERBOSITY verbose" "LOG_VERBOSITY verbose" "log_verbosity => 'verbose'"
else
  # COPY 15/16 has no ON_ERROR; fastcopy offers it there, and refuses it in binary as COPY 17 does
  f=$(outcome off "TRUNCATE ot" "SELECT FROM fastcopy.load('ot', '$dir/ot.bin', format => 'binary', on_error => 'ignore')" ot | head -1)
  check "on_error ignore with binary (no ON_ERROR in COPY $m): $f" '[ "$f" = "ERROR:  42601: only ON_ERROR STOP is allowed in BINARY mode" ]'
fi
[ "$m" -ge 18 ] && opt "REJECT_LIMIT without ON_ERROR ignore" "REJECT_LIMIT 1" "reject_limit => 1"
# FREEZE in the transaction that truncated the table: taken, rows frozen as COPY's
fz() {  # MODE SQL
  PGOPTIONS="$base${1:+ $on=$1}" psql -v ON_ERROR_STOP=1 -c "BEGIN" -c "TRUNCATE ot" -c "$2" -c "COMMIT" \
    -c "SELECT count(*) || ' ' || bool_and(t_infomask & 768 = 768) FROM heap_page_items(get_raw_page('ot', 0))" 2>&1 | tail -1
}
psql -c "CREATE EXTENSION IF NOT EXISTS pageinspect" >/dev/null 2>&1
c=$(fz "" "COPY ot FROM '$dir/ot.bin' WITH (FORMAT binary, FREEZE)")
f=$(fz "" "SELECT FROM fastcopy.load('ot', '$dir/ot.bin', format => 'binary', freeze => true)")
h=$(fz require "COPY ot FROM '$dir/ot.bin' WITH (FORMAT binary, FREEZE)")
check "FREEZE after TRUNCATE in the transaction: rows and frozen tuples as COPY's ($c)" '[ "$f" = "$c" ] && [ "$h" = "$c" ]' "COPY: $c | load: $f | hook: $h"

# client_encoding and ENCODING: binary data is not converted as a whole; text fields are, by the
# receive functions, from client_encoding (the ENCODING option plays no part)
psql -v ON_ERROR_STOP=1 >/dev/null <<SQL || { echo "FAIL setup of the encodings"; exit 1; }
SET search_path = bin, public;
CREATE TABLE et (id int, s text, v varchar(6), ch char(5), e bin_mood, j jsonb, ta text[], cp bin_pair);
INSERT INTO et VALUES (1, 'café', 'müde', 'À la', 'ok', '{"é": "ü"}', '{é,ü}', '(1,é)'), (2, 'plain', NULL, 'x', 'sad', '[]', '{}', NULL);
CREATE TABLE et_jp (id int, s text);
INSERT INTO et_jp VALUES (1, '日本語'), (2, 'ソース'), (3, 'カタカナ');
COPY et TO '$dir/et_utf8.bin' WITH (FORMAT binary);
SET client_encoding = LATIN1;
COPY et TO '$dir/et_latin1.bin' WITH (FORMAT binary);
SET client_encoding = EUC_JP;
COPY et_jp TO '$dir/et_eucjp.bin' WITH (FORMAT binary);
SQL
chmod 644 "$dir"/et_*.bin
enc() {  # LABEL CLIENT-ENCODING TABLE FILE [COPY-OPTION FASTCOPY-ARG]
  PGCLIENTENCODING=$2 same "$1" "$3" "TRUNCATE $3" "$dir/$4" "${5:-}" "${6:-}"
}
enc "LATIN1 text fields, client_encoding LATIN1 (converted)" LATIN1 et et_latin1.bin
enc "LATIN1 text fields, client_encoding UTF8 (invalid)" UTF8 et et_latin1.bin
enc "UTF8 text fields, client_encoding LATIN1 (converted twice)" LATIN1 et et_utf8.bin
enc "EUC_JP text fields, client_encoding EUC_JP" EUC_JP et_jp et_eucjp.bin
enc "EUC_JP text fields, client_encoding SJIS" SJIS et_jp et_eucjp.bin
enc "LATIN1 text fields, ENCODING 'LATIN1', client_encoding UTF8" UTF8 et et_latin1.bin "ENCODING 'LATIN1'" "encoding => 'LATIN1'"
enc "UTF8 text fields, ENCODING 'LATIN1', client_encoding UTF8" UTF8 et et_utf8.bin "ENCODING 'LATIN1'" "encoding => 'LATIN1'"
enc "UTF8 text fields, ENCODING 'UTF8', client_encoding LATIN1" LATIN1 et et_utf8.bin "ENCODING 'UTF8'" "encoding => 'UTF8'"

# ---- 4. a driver writing binary rows through the hook ----
PYTHONPATH="$FASTCOPY_PY" python3 pgrx-tests/scenarios/binary_corpus.py psycopg "$FASTCOPY_RUN" "54$m" "$dir" || fail=1

# ---- 5. in a transaction that is then prepared ----
psql -v ON_ERROR_STOP=1 -c "CREATE TABLE bin.pt (LIKE bin.src)" >/dev/null
pt() { PGOPTIONS="$base" psql -c "SELECT 'ok ' || count(*) || ' ' || coalesce(sum(hashtextextended(r__::text, 0)::numeric), 0) FROM pt r__"; }
prep() {  # MODE GID SQL: BEGIN, TRUNCATE, SQL, PREPARE TRANSACTION GID (errors on stdout)
  PGOPTIONS="$base${1:+ $on=$1}" psql -v ON_ERROR_STOP=1 -v VERBOSITY=verbose -c "BEGIN" -c "TRUNCATE pt" -c "$3" \
    -c "PREPARE TRANSACTION '$2'" 2>&1 | grep -v '^LOCATION:'
}
r=$(prep "" bin_off "\\copy pt FROM '$dir/rt.bin' (format binary)"); psql -c "COMMIT PREPARED 'bin_off'" >/dev/null 2>&1; a=$(pt)
r=$(prep require bin_hook "\\copy pt FROM '$dir/rt.bin' (format binary)")
p=$(psql -c "SELECT count(*) FROM pg_prepared_xacts WHERE gid = 'bin_hook'")
psql -c "COMMIT PREPARED 'bin_hook'" >/dev/null 2>&1; b=$(pt)
check "hook: BEGIN; COPY FROM STDIN (FORMAT binary); PREPARE TRANSACTION; COMMIT PREPARED from another session: the rows ($p prepared)" \
  '[ -z "$r" ] && [ "$p" = 1 ] && [ "$b" = "$a" ] && [[ "$a" == "ok 600 "* ]]' "COPY: $a | hook: $(flat "$r") $b"
r=$(prep require bin_hook2 "COPY pt FROM '$dir/rt.bin' WITH (FORMAT binary)")
psql -c "ROLLBACK PREPARED 'bin_hook2'" >/dev/null 2>&1; b=$(pt)
check "hook: a prepared binary COPY rolled back (ROLLBACK PREPARED): nothing loaded, the rows before stay" \
  '[ -z "$r" ] && [ "$b" = "$a" ]' "$(flat "$r") | before: $a | after: $b"
r=$(PGOPTIONS="$base $on=require" psql -v ON_ERROR_STOP=1 -c "BEGIN" -c "TRUNCATE pt" \
    -c "\\copy pt FROM '$dir/rt.bin' (format binary)" -c "PREPARE TRANSACTION 'bin_same'" -c "COMMIT PREPARED 'bin_same'" 2>&1); b=$(pt)
check "hook: prepared and committed in the same session" '[ -z "$r" ] && [ "$b" = "$a" ]' "$(flat "$r") | $b"
r=$(prep "" bin_load "SELECT FROM fastcopy.load('pt', '$dir/rt.bin', format => 'binary')")
psql -c "COMMIT PREPARED 'bin_load'" >/dev/null 2>&1; b=$(pt)
check "fastcopy.load in a prepared transaction, committed" '[ -z "$r" ] && [ "$b" = "$a" ]' "$(flat "$r") | $b"
left=$(psql -c "SELECT count(*) FROM pg_prepared_xacts WHERE gid LIKE 'bin\_%'")
psql <<<"SELECT format('ROLLBACK PREPARED %L', gid) FROM pg_prepared_xacts WHERE gid LIKE 'bin\_%' \gexec" >/dev/null 2>&1
check "no prepared transaction left behind ($left)" '[ "$left" = 0 ]'

psql -c "DROP SCHEMA bin CASCADE" >/dev/null 2>&1
rm -rf "$dir"
exit $fail
