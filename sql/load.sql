-- What pgrx cannot declare for fastcopy.load / fastcopy.load_data (src/api.rs declares the
-- functions and their options): the result type they return.

CREATE TYPE fastcopy.load_result AS (
    rows_loaded     bigint,
    rows_skipped    bigint,
    rows_excluded   bigint,
    bytes_read      bigint,
    flushes         bigint,
    pages_extended  bigint,
    extend_calls    bigint,
    elapsed_ms      double precision,
    rows_set_null   bigint,
    load_id         bigint,
    rows_rejected   bigint
);
COMMENT ON TYPE fastcopy.load_result IS
  'What one fastcopy.load / load_data did: rows loaded, skipped (on_error ignore) and excluded (where_clause), input bytes, insert batches, pages fastcopy extended itself, time, rows with values set to NULL (on_error set_null), the load_id of its rows in the rejects table and how many rows it wrote there (NULL without one).';

-- The load ids of rejects tables (src/load/rejects.rs): every load that keeps rejects draws one.
CREATE SEQUENCE fastcopy.load_id;
GRANT USAGE ON SEQUENCE fastcopy.load_id TO PUBLIC;
COMMENT ON SEQUENCE fastcopy.load_id IS
  'The load_id of the rows a load keeps in its rejects table (one per load).';
