-- PostgreSQL 19's regression test of COPY ... (ON_ERROR set_null) (src/test/regress/sql/copy2.sql,
-- master 2026), run through fastcopy's COPY hook on 15-18; set_null.out is its expected output there.
\set SHOW_CONTEXT always
CREATE DOMAIN d_int_not_null AS integer NOT NULL CHECK (value > 0);
CREATE DOMAIN d_int_positive_maybe_null AS integer CHECK (value > 0);
CREATE TABLE t_on_error_null (a d_int_not_null, b d_int_positive_maybe_null, c integer);

\pset null NULL
COPY t_on_error_null FROM STDIN WITH (on_error set_null); -- fail
\N	11	13
\.

COPY t_on_error_null(c, a) FROM STDIN WITH (on_error set_null); -- fail
11	\N
\.

COPY t_on_error_null FROM STDIN WITH (on_error set_null); -- fail
ss	11	14
\.

COPY t_on_error_null FROM STDIN WITH (on_error set_null); -- fail
-1	11	13
\.

-- fail, less data.
COPY t_on_error_null FROM STDIN WITH (delimiter ',', on_error set_null);
1,1
\.
-- fail, extra data.
COPY t_on_error_null FROM STDIN WITH (delimiter ',', on_error set_null);
1,2,3,4
\.

COPY t_on_error_null FROM STDIN WITH (on_error set_null, log_verbosity verbose); -- ok
10	x1	yx
11	zx	12
13	14	ea
\.

SELECT * FROM t_on_error_null ORDER BY a;

\pset null ''
DROP TABLE t_on_error_null;
DROP DOMAIN d_int_not_null;
DROP DOMAIN d_int_positive_maybe_null;
