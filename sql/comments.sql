-- Descriptions of the functions pgrx declared (found by name, so that their signatures stay
-- declared once, in src/api.rs).
DO $$
DECLARE
  f regprocedure;
BEGIN
  FOR f IN SELECT p.oid FROM pg_proc p
           WHERE p.pronamespace = 'fastcopy'::regnamespace AND p.proname = 'load' LOOP
    EXECUTE format('COMMENT ON FUNCTION %s IS %L', f,
      'Load a server file into a table like COPY target [(columns)] FROM path WITH (options), faster.');
  END LOOP;
  FOR f IN SELECT p.oid FROM pg_proc p
           WHERE p.pronamespace = 'fastcopy'::regnamespace AND p.proname = 'load_data' LOOP
    EXECUTE format('COMMENT ON FUNCTION %s IS %L', f,
      'Load the given data into a table like COPY target [(columns)] FROM STDIN WITH (options); needs only INSERT.');
  END LOOP;
END $$;
