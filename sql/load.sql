-- fastcopy.load / fastcopy.load_data: hand-written so that every option is a named argument
-- with COPY's default (NULL = "as COPY would default it for the format").

CREATE TYPE fastcopy.load_result AS (
    rows_loaded     bigint,
    rows_skipped    bigint,
    bytes_read      bigint,
    flushes         bigint,
    pages_extended  bigint,
    extend_calls    bigint,
    elapsed_ms      double precision
);
COMMENT ON TYPE fastcopy.load_result IS
  'What one fastcopy.load / load_data did: rows, input bytes, insert batches, pages fastcopy extended itself, time.';

CREATE FUNCTION fastcopy.load(
    target          regclass,
    path            text,
    columns         text[]  DEFAULT NULL,
    format          text    DEFAULT 'text',
    delimiter       text    DEFAULT NULL,
    null_string     text    DEFAULT NULL,
    header          boolean DEFAULT false,
    quote           text    DEFAULT NULL,
    escape          text    DEFAULT NULL,
    default_string  text    DEFAULT NULL,
    freeze          boolean DEFAULT false,
    on_error        text    DEFAULT 'stop',
    force_not_null  text[]  DEFAULT NULL,
    force_null      text[]  DEFAULT NULL
) RETURNS fastcopy.load_result
LANGUAGE c VOLATILE
AS 'MODULE_PATHNAME', 'load_wrapper';
COMMENT ON FUNCTION fastcopy.load IS
  'Load a server file into a table like COPY target [(columns)] FROM path WITH (options), faster.';

CREATE FUNCTION fastcopy.load_data(
    target          regclass,
    data            bytea,
    columns         text[]  DEFAULT NULL,
    format          text    DEFAULT 'text',
    delimiter       text    DEFAULT NULL,
    null_string     text    DEFAULT NULL,
    header          boolean DEFAULT false,
    quote           text    DEFAULT NULL,
    escape          text    DEFAULT NULL,
    default_string  text    DEFAULT NULL,
    freeze          boolean DEFAULT false,
    on_error        text    DEFAULT 'stop',
    force_not_null  text[]  DEFAULT NULL,
    force_null      text[]  DEFAULT NULL
) RETURNS fastcopy.load_result
LANGUAGE c VOLATILE
AS 'MODULE_PATHNAME', 'load_data_wrapper';

CREATE FUNCTION fastcopy.load_data(
    target          regclass,
    data            text,
    columns         text[]  DEFAULT NULL,
    format          text    DEFAULT 'text',
    delimiter       text    DEFAULT NULL,
    null_string     text    DEFAULT NULL,
    header          boolean DEFAULT false,
    quote           text    DEFAULT NULL,
    escape          text    DEFAULT NULL,
    default_string  text    DEFAULT NULL,
    freeze          boolean DEFAULT false,
    on_error        text    DEFAULT 'stop',
    force_not_null  text[]  DEFAULT NULL,
    force_null      text[]  DEFAULT NULL
) RETURNS fastcopy.load_result
LANGUAGE c VOLATILE
AS 'MODULE_PATHNAME', 'load_data_wrapper';
COMMENT ON FUNCTION fastcopy.load_data(regclass, text, text[], text, text, text, boolean, text, text, text, boolean, text, text[], text[]) IS
  'Load the given text into a table like COPY target [(columns)] FROM STDIN WITH (options); needs only INSERT.';
