//! `fastcopy.bench_int_parser`: the fastcopy parser against the server's own `pg_strtoint*`,
//! in the same backend, on the same NUL-terminated strings (used by bench/parse.sh).

use crate::error::raise;
use crate::parse::SERVER_GRAMMAR;
use fastcopy_core::int;
use pgrx::prelude::*;
use std::ffi::c_char;
use std::hint::black_box;
use std::time::Instant;

// SAFETY: the declarations match utils/builtins.h of 15, 16 and 17
// (`int16 pg_strtoint16(const char *s)`, `int32 pg_strtoint32(...)`, `int64 pg_strtoint64(...)`,
// defined in numutils.c).
unsafe extern "C-unwind" {
    // numutils.c, same signatures in 15, 16 and 17. Declared here without pgrx's per-call
    // error guard so the comparison measures the parsers, not the guard; the inputs are
    // checked to be valid first, so these never raise.
    fn pg_strtoint16(s: *const c_char) -> i16;
    fn pg_strtoint32(s: *const c_char) -> i32;
    fn pg_strtoint64(s: *const c_char) -> i64;
}

/// ns per value for the server's parser (`server`) and fastcopy's, over `rounds` passes of
/// `inputs` parsed as `bits`-bit integers: `fastcopy` as the loader calls it (the field at the
/// start of the rest of its buffer), `fastcopy_slice` on the field alone (as the SQL functions
/// call it). `ns_per_value` is the best of the repetitions, `speedup` the median of the
/// server's time over this parser's in each repetition, `checksum` the sum of the values it
/// returned in one repetition (`rounds` / 41 passes, at least one). Every input must be valid
/// for the server.
#[pg_extern(volatile, parallel_unsafe)]
fn bench_int_parser(
    inputs: Vec<String>,
    bits: i32,
    rounds: i32,
) -> TableIterator<
    'static,
    (
        name!(parser, String),
        name!(ns_per_value, f64),
        name!(speedup, f64),
        name!(checksum, i64),
    ),
> {
    // Every input NUL-terminated, one after the other in one buffer: the server's function
    // gets a pointer into it, as COPY's input functions get fields in attribute_buf; fastcopy's
    // parser gets the same bytes as the loader hands them over, the field at the start of the
    // rest of its row buffer (`parse_iN_in`), and as a lone slice (`parse_iN`, as the SQL
    // functions get their argument).
    let mut buf = Vec::new();
    let mut spans = Vec::with_capacity(inputs.len());
    for s in &inputs {
        if s.contains('\0') {
            raise(
                PgSqlErrorCode::ERRCODE_INVALID_PARAMETER_VALUE,
                format!("input {s:?} contains NUL"),
            );
        }
        spans.push((buf.len(), s.len()));
        buf.extend_from_slice(s.as_bytes());
        buf.push(0);
    }
    let rounds = rounds.max(1) as usize;
    let lone = |(at, n): (usize, usize)| -> Option<i64> {
        let s = &buf[at..at + n];
        match bits {
            16 => int::parse_i16(s, SERVER_GRAMMAR).ok().map(i64::from),
            32 => int::parse_i32(s, SERVER_GRAMMAR).ok().map(i64::from),
            _ => int::parse_i64(s, SERVER_GRAMMAR).ok(),
        }
    };
    if let Some(bad) = spans.iter().position(|&sp| lone(sp).is_none()) {
        raise(
            PgSqlErrorCode::ERRCODE_INVALID_PARAMETER_VALUE,
            format!("input {:?} is not a valid integer", inputs[bad]),
        );
    }
    // Each side in a loop of its own, monomorphic, the result summed so nothing is skipped.
    fn time(
        spans: &[(usize, usize)],
        rounds: usize,
        f: impl Fn((usize, usize)) -> i64,
    ) -> (f64, i64) {
        let mut sum = 0i64;
        let t0 = Instant::now();
        for _ in 0..rounds {
            for &sp in spans {
                sum = sum.wrapping_add(f(black_box(sp)));
            }
        }
        (
            t0.elapsed().as_nanos() as f64 / (spans.len() * rounds) as f64,
            sum,
        )
    }
    let b = &buf;
    let server = |(at, _): (usize, usize)| -> i64 {
        let p = b[at..].as_ptr() as *const c_char;
        // SAFETY: `p` points into `buf`, borrowed for the closure's life, at the start of one
        // input followed by its NUL (pushed after each input, none of which contains a NUL), so
        // the C string the functions read lies inside `buf`. Every input was checked above to
        // be valid for this grammar, so the functions return without raising an ERROR (an
        // ERROR here would longjmp past these unguarded Rust frames). Called on the backend
        // thread, where the #[pg_extern] runs. The block stays around the whole match: this is
        // the timed loop.
        unsafe {
            match bits {
                16 => pg_strtoint16(p) as i64,
                32 => pg_strtoint32(p) as i64,
                _ => pg_strtoint64(p),
            }
        }
    };
    let in_buffer = |(at, n): (usize, usize)| -> i64 {
        let s = &b[at..];
        match bits {
            16 => int::parse_i16_in(s, n, SERVER_GRAMMAR).map_or(0, i64::from),
            32 => int::parse_i32_in(s, n, SERVER_GRAMMAR).map_or(0, i64::from),
            _ => int::parse_i64_in(s, n, SERVER_GRAMMAR).unwrap_or(0),
        }
    };
    // A closure of its own rather than `lone`, which the check above also calls: each timed
    // closure is used once, so each is inlined into its loop alike.
    let alone = |(at, n): (usize, usize)| -> i64 {
        let s = &b[at..at + n];
        match bits {
            16 => int::parse_i16(s, SERVER_GRAMMAR).map_or(0, i64::from),
            32 => int::parse_i32(s, SERVER_GRAMMAR).map_or(0, i64::from),
            _ => int::parse_i64(s, SERVER_GRAMMAR).unwrap_or(0),
        }
    };
    // The three alternate in REPS short repetitions, each repetition in a rotated order so
    // that every parser runs first, second and third equally often. Each reports its best
    // time, and its speed-up as the median over the repetitions of the server's time over its
    // own in the same repetition: the machine's speed drifts over seconds, and a ratio taken
    // within one repetition (milliseconds) cancels the drift.
    const REPS: usize = 41;
    let per = rounds.div_ceil(REPS).max(1);
    let mut ns = [[0f64; REPS]; 3];
    let mut sums = [0i64; 3];
    // (`rep` picks the order and indexes three arrays)
    #[allow(clippy::needless_range_loop)]
    for rep in 0..REPS {
        for k in 0..3 {
            let i = (rep + k) % 3;
            let (t, sum) = match i {
                0 => time(&spans, per, server),
                1 => time(&spans, per, in_buffer),
                _ => time(&spans, per, alone),
            };
            ns[i][rep] = t;
            sums[i] = sum;
        }
    }
    if sums.iter().any(|&s| s != sums[0]) {
        raise(
            PgSqlErrorCode::ERRCODE_INTERNAL_ERROR,
            format!("the parsers disagree: checksums {sums:?}"),
        );
    }
    let median = |mut v: Vec<f64>| {
        v.sort_by(f64::total_cmp);
        v[v.len() / 2]
    };
    let names = ["server", "fastcopy", "fastcopy_slice"];
    TableIterator::new(
        (0..3)
            .map(|i| {
                let best = ns[i].iter().copied().fold(f64::MAX, f64::min);
                let speedup = median((0..REPS).map(|r| ns[0][r] / ns[i][r]).collect());
                (names[i].to_string(), best, speedup, sums[i])
            })
            .collect::<Vec<_>>(),
    )
}
