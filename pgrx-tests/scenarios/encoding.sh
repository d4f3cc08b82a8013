#!/usr/bin/env bash
# Encodings as COPY handles them, differentially: databases in UTF8, LATIN1 and
# SQL_ASCII; input in UTF8, LATIN1, WIN1252, SJIS (client-only) and EUC_JP, valid and invalid,
# with characters that have no equivalent, escapes that de-escape to high-bit bytes, and
# files large enough that the conversion's reads split characters. Each input is loaded by
# COPY and by fastcopy (the ENCODING option: fastcopy.load / load_data(bytea) with `encoding`;
# client_encoding: SET, then COPY / fastcopy.load; COPY FROM STDIN through the hook): the
# same table, or the same SQLSTATE, message and CONTEXT line. Databases in EUC_JP, EUC_KR and
# MULE_INTERNAL too, and input in the client-only encodings (SJIS, BIG5, GBK, UHC, GB18030,
# JOHAB) into a SQL_ASCII database, unconverted: checked in their encoding, scanned byte by
# byte (second bytes that are a backslash or a delimiter count as such, for COPY as for
# fastcopy).
#   pgrx-tests/scenarios/encoding.sh 17
set -uo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
cd "$here/../.."
m=${1:?major}
. scripts/scenario_lib.sh
scripts/cluster.sh start "$m" >/dev/null
bindir=$(dirname "$(pg_config_for "$m")")
dir="$FASTCOPY_RUN/enc-$m"
rm -rf "$dir"; mkdir -p "$dir"; chmod 755 "$dir"
python3 - "$dir" <<'PY'
import os, sys
d = sys.argv[1]
def w(name, data):
    with open(os.path.join(d, name), "wb") as f:
        f.write(data)
text = "1\tcafé\n2\tmüde\n3\t日本語\n4\tソース\\N\n5\t\\N\n"
w("utf8.txt", text.encode("utf-8"))
w("utf8_latin.txt", "1\tcafé\n2\tmüde\n3\tÀ la\n".encode("utf-8"))
w("latin1.txt", "1\tcafé\n2\tmüde\n3\tÀ la\n".encode("latin-1"))
w("win1252.txt", "1\t€uro\n2\t„quoted“\n".encode("cp1252"))
w("win1252_latin.txt", "1\tcafé\n2\tplain\n".encode("cp1252"))
# ソ is 0x83 0x5c in SJIS: its second byte is a backslash
w("sjis.txt", "1\t日本語\n2\tソース\n3\tカタカナ\n".encode("shift_jis"))
w("eucjp.txt", "1\t日本語\n2\tソース\n".encode("euc_jp"))
w("bad_utf8.txt", b"1\tok\n2\tab\xffcd\n3\tnever\n")
w("bad_eucjp.txt", b"1\tok\n2\t\xa4\n3\tnever\n")
w("bad_sjis.txt", b"1\tok\n2\t\x81\x20x\n")
w("nul.txt", b"1\tok\n2\ta\x00b\n")
w("escape_e9.txt", b"1\t\\xe9t\\xe9\n2\tplain\n")
w("escape_nul.txt", b"1\tab\\000c\n")
# large: the conversion reads 256 kB at a time, and these characters (2 and 3 bytes, with an
# odd row length) straddle every boundary
def big(chars, n):
    return "".join(f"{i}\t{chars * (i % 7 + 1)}x\n" for i in range(n))
w("big_eucjp.txt", big("日本語ソ", 60000).encode("euc_jp"))
w("big_sjis.txt", big("日本語ソ", 60000).encode("shift_jis"))
w("big_utf8_latin.txt", big("éüÀ", 80000).encode("utf-8"))
w("big_latin1.txt", big("éüÀ", 80000).encode("latin-1"))
# values an int column refuses, shown by the error and its CONTEXT as they are in the database
# encoding; one longer than the 100 bytes a CONTEXT shows, cut at a character boundary
w("badint_latin1.txt", "1\tok\né1\tx\n".encode("latin-1"))
w("badint_eucjp.txt", "1\tok\n日本\tx\n".encode("euc_jp"))
w("long_eucjp.txt", ("1\tok\n" + "日" * 51 + "\tx\n").encode("euc_jp"))
w("long_text_eucjp.txt", ("1\t" + "語" * 70 + "\textra\n").encode("euc_jp"))
w("korean.txt", "1\t한국어\n2\t\\N\n".encode("utf-8"))
w("bad_euckr.txt", b"1\tok\n2\t\xb0\x41\n")
# client-only encodings, unconverted into SQL_ASCII: second bytes that are ASCII (0x5c, a
# backslash, in SJIS ソ表能, BIG5 許功蓋, GBK/GB18030 乗; 0x7c '|' as a delimiter), a
# character before a line end whose second byte escapes the newline, four-byte GB18030,
# invalid and cut-short characters, and large files whose reads split characters
def cx(name, enc, text):
    w(name, text.encode(enc))
cx("sjis_bs.txt", "shift_jis", "1\tソ表能x\n2\t表\\N\n3\tｱｲｳ ソx\n4\tx\n")
cx("sjis_eol.txt", "shift_jis", "1\tok\n2\tソ\n3\tx\n")
cx("sjis_pipe.txt", "shift_jis", "1|ok\n2|倒\n")
cx("big5.txt", "big5", "1\t許功蓋x\n2\t中文\n3\t許\tx\n")
cx("gbk.txt", "gbk", "1\t乗丂中文\n2\t乗\\t\n")
cx("uhc.txt", "cp949", "1\t한국어갂\n2\t\\N\n")
cx("gb18030.txt", "gb18030", "1\t乗€😀\u0080中\n2\t\\N\n")
cx("johab.txt", "johab", "1\t갸갹갺\n2\tx\n")
cx("johab_bad.txt", "johab", "1\t갸\n2\t한국\n")
w("big5_pair.txt", b"1\tok\n2\t\x8d x\n")
w("big5_nul.txt", b"1\tok\n2\t\xa4\x00x\n")
w("sjis_cut.txt", b"1\tok\n2\tab\x95")
w("gb18030_cut.txt", b"1\tok\n2\t\x81\x30\x81\n3\tx\n")
w("gb18030_bad.txt", b"1\tok\n2\t\x81\x30\x81\x7f\n")
w("big_big5.txt", big("許功蓋中", 60000).encode("big5"))
w("big_gb18030.txt", big("乗€😀中", 50000).encode("gb18030"))
w("big_sjis_ascii.txt", big("ソ表能ｱ", 60000).encode("shift_jis"))
PY
chmod 644 "$dir"/*

for db in enc_utf8:UTF8 enc_latin1:LATIN1 enc_sqlascii:SQL_ASCII enc_eucjp:EUC_JP enc_euckr:EUC_KR enc_mule:MULE_INTERNAL; do
  psql -c "DROP DATABASE IF EXISTS ${db%%:*}" >/dev/null 2>&1
  psql -c "CREATE DATABASE ${db%%:*} TEMPLATE template0 ENCODING '${db##*:}' LC_COLLATE 'C' LC_CTYPE 'C'" >/dev/null \
    || { echo "FAIL creating database ${db%%:*}"; exit 1; }
  psql -d "${db%%:*}" -c "CREATE EXTENSION fastcopy" >/dev/null
done

# result DB SQL...: "ok N md5" (the table's rows, as bytes in the database encoding), or
# "SQLSTATE: message | CONTEXT" of the error (fastcopy's CONTEXT verb made COPY's)
result() {
  local db=$1 out; shift
  out=$(psql -d "$db" -v ON_ERROR_STOP=1 -v VERBOSITY=verbose -c "SET client_min_messages = warning" \
        -c "DROP TABLE IF EXISTS t" -c "CREATE TABLE t (id int, s text)" "$@" 2>&1 >/dev/null)
  if [ -n "$out" ]; then
    local msg ctx
    msg=$(sed -n 's/^.*ERROR:  //p' <<<"$out" | head -1)
    ctx=$(sed -n 's/^CONTEXT:  //p' <<<"$out" | head -1 | sed 's/^fastcopy\.load /COPY /')
    echo "$msg | $ctx"
  else
    psql -d "$db" -c "SELECT 'ok ' || count(*) || ' ' || md5(string_agg(id || ':' || coalesce(s, '<null>'), ',' ORDER BY id)) FROM t"
  fi
}
# stdin DB MODE ENCODING FILE: COPY t FROM STDIN by psql with PGCLIENTENCODING, the hook
# off or require
stdin() {
  local db=$1 mode=$2 enc=$3 file=$4 opts=""
  [ "$mode" != off ] && opts="-c session_preload_libraries=fastcopy -c fastcopy.copy_from=$mode"
  PGCLIENTENCODING=$enc PGOPTIONS="$opts" result "$db" -c "COPY t FROM STDIN" <"$file"
}
# case DB FILE ENCODING: every way of loading FILE as ENCODING into DB, against COPY
case_() {
  local db=$1 file="$dir/$2" enc=$3 c f d cc fc so sr
  c=$(result "$db" -c "COPY t FROM '$file' WITH (ENCODING '$enc')")
  f=$(result "$db" -c "SELECT fastcopy.load('t', '$file', encoding => '$enc')")
  d=$(result "$db" -c "SELECT fastcopy.load_data('t', pg_read_binary_file('$file'), encoding => '$enc')")
  cc=$(result "$db" -c "SET client_encoding = '$enc'" -c "COPY t FROM '$file'")
  fc=$(result "$db" -c "SET client_encoding = '$enc'" -c "SELECT fastcopy.load('t', '$file')")
  so=$(stdin "$db" off "$enc" "$file")
  sr=$(stdin "$db" require "$enc" "$file")
  check "$db <- $2 in $enc: ${c%% |*}" \
    '[ "$f" = "$c" ] && [ "$d" = "$c" ] && [ "$fc" = "$cc" ] && [ "$sr" = "$so" ] && [ -n "$so" ]' \
    "COPY: $c | load: $f | load_data: $d | client_encoding COPY: $cc, load: $fc | STDIN off: $so, require: $sr"
}
for x in utf8.txt:UTF8 latin1.txt:LATIN1 win1252.txt:WIN1252 sjis.txt:SJIS eucjp.txt:EUC_JP \
         bad_utf8.txt:UTF8 bad_eucjp.txt:EUC_JP bad_sjis.txt:SJIS nul.txt:LATIN1 escape_e9.txt:UTF8 \
         escape_e9.txt:LATIN1 escape_nul.txt:UTF8 big_eucjp.txt:EUC_JP big_sjis.txt:SJIS big_latin1.txt:LATIN1; do
  case_ enc_utf8 "${x%%:*}" "${x##*:}"
done
for x in latin1.txt:LATIN1 utf8.txt:UTF8 utf8_latin.txt:UTF8 win1252.txt:WIN1252 win1252_latin.txt:WIN1252 \
         bad_utf8.txt:UTF8 nul.txt:LATIN1 escape_e9.txt:LATIN1 escape_e9.txt:UTF8 escape_nul.txt:LATIN1 \
         big_utf8_latin.txt:UTF8 big_latin1.txt:LATIN1 eucjp.txt:EUC_JP badint_latin1.txt:LATIN1; do
  case_ enc_latin1 "${x%%:*}" "${x##*:}"
done
# multibyte databases other than UTF8: EUC_JP (read as it is, or converted into it), EUC_KR,
# MULE_INTERNAL
for x in eucjp.txt:EUC_JP utf8.txt:UTF8 sjis.txt:SJIS bad_eucjp.txt:EUC_JP big_eucjp.txt:EUC_JP \
         big_sjis.txt:SJIS nul.txt:EUC_JP escape_e9.txt:EUC_JP escape_nul.txt:EUC_JP latin1.txt:LATIN1 \
         badint_eucjp.txt:EUC_JP long_eucjp.txt:EUC_JP long_text_eucjp.txt:EUC_JP bad_utf8.txt:UTF8; do
  case_ enc_eucjp "${x%%:*}" "${x##*:}"
done
for x in korean.txt:UTF8 bad_euckr.txt:EUC_KR utf8.txt:UTF8; do
  case_ enc_euckr "${x%%:*}" "${x##*:}"
done
for x in latin1.txt:LATIN1 eucjp.txt:EUC_JP bad_eucjp.txt:EUC_JP; do
  case_ enc_mule "${x%%:*}" "${x##*:}"
done
for x in utf8.txt:UTF8 bad_utf8.txt:UTF8 latin1.txt:LATIN1 latin1.txt:SQL_ASCII nul.txt:SQL_ASCII \
         nul.txt:LATIN1 escape_e9.txt:UTF8 escape_nul.txt:SQL_ASCII utf8.txt:SQL_ASCII; do
  case_ enc_sqlascii "${x%%:*}" "${x##*:}"
done
# the client-only encodings, unconverted into SQL_ASCII
for x in sjis.txt:SJIS sjis_bs.txt:SJIS sjis_bs.txt:SHIFT_JIS_2004 sjis_eol.txt:SJIS big5.txt:BIG5 gbk.txt:GBK \
         uhc.txt:UHC gb18030.txt:GB18030 johab.txt:JOHAB johab_bad.txt:JOHAB bad_sjis.txt:SJIS \
         big5_pair.txt:BIG5 big5_pair.txt:GBK big5_pair.txt:UHC big5_nul.txt:BIG5 sjis_cut.txt:SJIS \
         gb18030_cut.txt:GB18030 gb18030_bad.txt:GB18030 big_sjis.txt:SJIS big_big5.txt:BIG5 \
         big_gb18030.txt:GB18030 big_sjis_ascii.txt:SJIS; do
  case_ enc_sqlascii "${x%%:*}" "${x##*:}"
done
c=$(result enc_sqlascii -c "COPY t FROM '$dir/sjis_pipe.txt' WITH (ENCODING 'SJIS', DELIMITER '|')")
f=$(result enc_sqlascii -c "SELECT fastcopy.load('t', '$dir/sjis_pipe.txt', encoding => 'SJIS', delimiter => '|')")
check "enc_sqlascii <- SJIS with DELIMITER '|' (a second byte 0x7c): ${c%% |*}" '[ "$f" = "$c" ]' "COPY: $c | load: $f"
# log_verbosity verbose (17+): the NOTICE about a skipped row shows the value's bytes as COPY's
if [ "$m" -ge 17 ]; then
  notice() {  # DB SQL: the NOTICE lines, as bytes
    psql -d "$1" -c "DROP TABLE IF EXISTS t" -c "CREATE TABLE t (id int, s text)" -c "$2" 2>&1 >/dev/null \
      | grep -a '^NOTICE' | od -An -c | tr -s ' \n' ' '
  }
  for x in enc_latin1:badint_latin1.txt:LATIN1 enc_eucjp:badint_eucjp.txt:EUC_JP enc_eucjp:long_eucjp.txt:EUC_JP; do
    IFS=: read -r db file enc <<<"$x"
    c=$(notice "$db" "COPY t FROM '$dir/$file' WITH (ENCODING '$enc', ON_ERROR ignore, LOG_VERBOSITY verbose)")
    f=$(notice "$db" "SELECT fastcopy.load('t', '$dir/$file', encoding => '$enc', on_error => 'ignore', log_verbosity => 'verbose')")
    check "$db <- $file: the skipped-row NOTICE has COPY's bytes" '[ "$f" = "$c" ] && [[ "$c" == *s*k*i*p* ]]' "COPY: $c | load: $f"
  done
fi
r=$(result enc_utf8 -c "SELECT fastcopy.load_data('t', 'x', encoding => 'LATIN1')")
check "load_data of text with an encoding is refused (text is in the database encoding): $r" \
  '[[ "$r" == "22023: encoding applies to bytea data"* ]]'
c=$(result enc_utf8 -c "COPY t FROM '$dir/utf8.txt' WITH (ENCODING 'NOSUCH')")
f=$(result enc_utf8 -c "SELECT fastcopy.load('t', '$dir/utf8.txt', encoding => 'NOSUCH')")
check "an unknown encoding name: $f" '[ "${f%% |*}" = "${c%% |*}" ]' "COPY: $c"

# the load corpus (UTF-8 files) through psql STDIN into the LATIN1 database, off vs require:
# converted by both, the same tables or the same errors (no equivalent in LATIN1, ...). On
# the newest major in `make test` (FASTCOPY_ENCODING_CORPUS=all: every major).
if [ "$m" = 18 ] || [ "${FASTCOPY_ENCODING_CORPUS:-}" = all ]; then
  python3 pgrx-tests/scenarios/copy_hook_corpus.py "$m" "$bindir/psql" -h "$FASTCOPY_RUN" -p "54$m" -U postgres -d enc_latin1 \
    | sed 's/hook corpus through psql STDIN/hook corpus through psql STDIN into a LATIN1 database/' || fail=1
fi

for db in enc_utf8 enc_latin1 enc_sqlascii enc_eucjp enc_euckr enc_mule; do psql -c "DROP DATABASE $db" >/dev/null; done
rm -rf "$dir"
exit $fail
