-- PostgreSQL 19's regression test of COPY ... FROM (HEADER n) (src/test/regress/sql/copy.sql,
-- master 2026), run through fastcopy's COPY hook on 15-18; header.out is its expected output there.
-- test multi-line header line feature

create temp table copytest5 (c1 int);

copy copytest5 from stdin (format csv, header 2);
this is a first header line.
this is a second header line.
1
2
\.
copy copytest5 to stdout (header);

truncate copytest5;
copy copytest5 from stdin (format csv, header 4);
this is a first header line.
this is a second header line.
1
2
\.
select count(*) from copytest5;

truncate copytest5;
copy copytest5 from stdin (format csv, header 5);
this is a first header line.
this is a second header line.
1
2
\.
select count(*) from copytest5;

-- test header line feature (given as strings)
truncate copytest5;
copy copytest5 from stdin (format csv, header '0');
1
2
\.
select * from copytest5 order by c1;

truncate copytest5;
copy copytest5 from stdin (format csv, header '1');
1
2
\.
select * from copytest5 order by c1;
