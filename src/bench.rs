//! `fastcopy.bench_int_parser`: the fastcopy parser against the server's own `pg_strtoint*`,
//! in the same backend, on the same NUL-terminated strings (used by bench/parse.sh).

use crate::error::raise;
use crate::parse::SERVER_GRAMMAR;
use fastcopy_core::int;
use pgrx::prelude::*;
use std::ffi::{CString, c_char};
use std::hint::black_box;
use std::time::Instant;

unsafe extern "C-unwind" {
    // numutils.c, same signatures in 15, 16 and 17. Declared here without pgrx's per-call
    // error guard so the comparison measures the parsers, not the guard; the inputs are
    // checked to be valid first, so these never raise.
    fn pg_strtoint16(s: *const c_char) -> i16;
    fn pg_strtoint32(s: *const c_char) -> i32;
    fn pg_strtoint64(s: *const c_char) -> i64;
}

/// ns per value for the server's parser and fastcopy's, over `rounds` passes of `inputs`
/// parsed as `bits`-bit integers; every input must be valid for the server.
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
        name!(checksum, i64),
    ),
> {
    let cstrs: Vec<CString> = inputs
        .iter()
        .map(|s| CString::new(s.as_str()).unwrap())
        .collect();
    let slices: Vec<&[u8]> = cstrs.iter().map(|c| c.as_bytes()).collect();
    let rounds = rounds.max(1) as usize;
    let ours = |s: &[u8]| -> Option<i64> {
        match bits {
            16 => int::parse_i16(s, SERVER_GRAMMAR).ok().map(i64::from),
            32 => int::parse_i32(s, SERVER_GRAMMAR).ok().map(i64::from),
            _ => int::parse_i64(s, SERVER_GRAMMAR).ok(),
        }
    };
    if let Some(bad) = slices.iter().position(|s| ours(s).is_none()) {
        raise(
            PgSqlErrorCode::ERRCODE_INVALID_PARAMETER_VALUE,
            format!("input {:?} is not a valid integer", inputs[bad]),
        );
    }
    // Each side in a loop of its own, monomorphic, the result summed so nothing is skipped.
    fn time_server(
        cstrs: &[CString],
        rounds: usize,
        f: impl Fn(*const c_char) -> i64,
    ) -> (f64, i64) {
        let mut sum = 0i64;
        let t0 = Instant::now();
        for _ in 0..rounds {
            for c in cstrs {
                sum = sum.wrapping_add(f(black_box(c.as_ptr())));
            }
        }
        (
            t0.elapsed().as_nanos() as f64 / (cstrs.len() * rounds) as f64,
            sum,
        )
    }
    fn time_ours(slices: &[&[u8]], rounds: usize, f: impl Fn(&[u8]) -> i64) -> (f64, i64) {
        let mut sum = 0i64;
        let t0 = Instant::now();
        for _ in 0..rounds {
            for s in slices {
                sum = sum.wrapping_add(f(black_box(s)));
            }
        }
        (
            t0.elapsed().as_nanos() as f64 / (slices.len() * rounds) as f64,
            sum,
        )
    }
    // Alternate the two sides in 5 repetitions and keep each side's best, so that a burst of
    // other work on the machine does not land on one side only.
    let per = rounds.div_ceil(5).max(1);
    let (mut server_ns, mut ours_ns) = (f64::MAX, f64::MAX);
    let (mut server_sum, mut ours_sum) = (0i64, 0i64);
    for _ in 0..5 {
        let ((s_ns, s_sum), (o_ns, o_sum)) = match bits {
            16 => (
                time_server(&cstrs, per, |p| unsafe { pg_strtoint16(p) } as i64),
                time_ours(&slices, per, |s| {
                    int::parse_i16(s, SERVER_GRAMMAR).map_or(0, i64::from)
                }),
            ),
            32 => (
                time_server(&cstrs, per, |p| unsafe { pg_strtoint32(p) } as i64),
                time_ours(&slices, per, |s| {
                    int::parse_i32(s, SERVER_GRAMMAR).map_or(0, i64::from)
                }),
            ),
            _ => (
                time_server(&cstrs, per, |p| unsafe { pg_strtoint64(p) }),
                time_ours(&slices, per, |s| {
                    int::parse_i64(s, SERVER_GRAMMAR).unwrap_or(0)
                }),
            ),
        };
        server_ns = server_ns.min(s_ns);
        ours_ns = ours_ns.min(o_ns);
        server_sum = s_sum;
        ours_sum = o_sum;
    }
    TableIterator::new(vec![
        ("server".to_string(), server_ns, server_sum),
        ("fastcopy".to_string(), ours_ns, ours_sum),
    ])
}
