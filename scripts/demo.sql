-- What fastcopy does, shown on the throwaway cluster (run by scripts/demo.sh).
\pset footer off
\echo '== The integer parser: the server''s grammar, the server''s errors'
SELECT fastcopy.parse_int4('  -2147483648 ') AS min_int4,
       fastcopy.parse_int8('9223372036854775807') AS max_int8,
       fastcopy.try_parse_int2('40000') AS out_of_range_is_null,
       fastcopy.try_parse_int4('0x1F') AS hex_16_plus;
\echo '== Settings'
SELECT name, setting, unit, short_desc FROM pg_settings WHERE name LIKE 'fastcopy.%' ORDER BY name;

\echo '== lotsaints: 2,000,000 rows of (a int, b int, c int), COPY vs fastcopy.load'
DROP TABLE IF EXISTS lotsaints_copy, lotsaints_fast;
CREATE UNLOGGED TABLE lotsaints_copy (a int, b int, c int);
CREATE UNLOGGED TABLE lotsaints_fast (a int, b int, c int);
COPY (SELECT g AS a, (random() * 100000 - 50000)::int AS b, 3243423 AS c
      FROM generate_series(1, 2000000) g) TO :'datafile';
\timing on
COPY lotsaints_copy FROM :'datafile';
SELECT * FROM fastcopy.load('lotsaints_fast', :'datafile');
\timing off
\echo '== Same rows?'
SELECT (SELECT count(*) FROM lotsaints_fast) AS rows,
       NOT EXISTS (SELECT * FROM lotsaints_copy EXCEPT ALL SELECT * FROM lotsaints_fast)
       AND NOT EXISTS (SELECT * FROM lotsaints_fast EXCEPT ALL SELECT * FROM lotsaints_copy) AS identical;
\echo '== Side by side, three rounds each (ms)'
CREATE OR REPLACE FUNCTION pg_temp.round_ms(fast boolean, path text) RETURNS double precision
LANGUAGE plpgsql AS $$
DECLARE t0 timestamptz;
BEGIN
  IF fast THEN
    TRUNCATE lotsaints_fast; t0 := clock_timestamp();
    PERFORM fastcopy.load('lotsaints_fast', path);
  ELSE
    TRUNCATE lotsaints_copy; t0 := clock_timestamp();
    EXECUTE format('COPY lotsaints_copy FROM %L', path);
  END IF;
  RETURN extract(epoch FROM clock_timestamp() - t0) * 1000;
END $$;
WITH r AS (
  SELECT i, pg_temp.round_ms(false, :'datafile') AS copy_ms, pg_temp.round_ms(true, :'datafile') AS fastcopy_ms
  FROM generate_series(1, 3) i
)
SELECT round(percentile_cont(0.5) WITHIN GROUP (ORDER BY copy_ms)::numeric, 1) AS copy_median_ms,
       round(percentile_cont(0.5) WITHIN GROUP (ORDER BY fastcopy_ms)::numeric, 1) AS fastcopy_median_ms,
       round((percentile_cont(0.5) WITHIN GROUP (ORDER BY copy_ms) /
              percentile_cont(0.5) WITHIN GROUP (ORDER BY fastcopy_ms))::numeric, 2) AS speedup
FROM r;
\echo '== A bad row: COPY''s SQLSTATE, line and column in the context'
\set ON_ERROR_STOP 0
SELECT * FROM fastcopy.load_data('lotsaints_fast', E'1\t2\t3\n4\tfive\t6\n');
\set ON_ERROR_STOP 1
