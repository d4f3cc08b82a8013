#!/usr/bin/env bash
# Encodings as COPY handles them (issue 17), differentially: databases in UTF8, LATIN1 and
# SQL_ASCII; input in UTF8, LATIN1, WIN1252, SJIS (client-only) and EUC_JP, valid and invalid,
# with characters that have no equivalent, escapes that de-escape to high-bit bytes, and
# files large enough that the conversion's reads split characters. Each input is loaded by
# COPY and by fastcopy (the ENCODING option: fastcopy.load / load_data(bytea) with `encoding`;
# client_encoding: SET, then COPY / fastcopy.load; COPY FROM STDIN through the hook): the
# same table, or the same SQLSTATE, message and CONTEXT line. Databases in EUC_JP, EUC_KR and
# MULE_INTERNAL too; SJIS input into a SQL_ASCII database is refused by fastcopy (0A000) and
# handed to the server by the hook.
#   pgrx-tests/sessions/encoding_sessions.sh 17
set -uo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
cd "$here/../.."
m=${1:?major}
. scripts/session_lib.sh
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
    psql -d "$db" -c "SELECT 'ok ' || count(*) || ' ' || md5(string_agg(id || ':' || coalesce(s, '<null>'), ',' ORDER BY id)::bytea) FROM t"
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
# what fastcopy refuses: the load says why (0A000), the hook hands it to the server
refused() {  # DB FILE ENCODING
  local f so sr
  f=$(result "$1" -c "SELECT fastcopy.load('t', '$dir/$2', encoding => '$3')")
  so=$(stdin "$1" off "$3" "$dir/$2"); sr=$(PGOPTIONS="" stdin "$1" on "$3" "$dir/$2")
  check "$1 <- $2 in $3: fastcopy refuses ($f), the hook hands it over (on = off: $so)" \
    '[[ "$f" == "0A000: fastcopy does not support"* ]] && [ "$sr" = "$so" ] && [[ "$so" == ok* ]]'
}
refused enc_sqlascii sjis.txt SJIS
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
  python3 pgrx-tests/sessions/copy_hook_corpus.py "$m" "$bindir/psql" -h "$FASTCOPY_RUN" -p "54$m" -U postgres -d enc_latin1 \
    | sed 's/hook corpus through psql STDIN/hook corpus through psql STDIN into a LATIN1 database/' || fail=1
fi

for db in enc_utf8 enc_latin1 enc_sqlascii enc_eucjp enc_euckr enc_mule; do psql -c "DROP DATABASE $db" >/dev/null; done
rm -rf "$dir"
exit $fail
