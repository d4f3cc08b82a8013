//! Arbitrary bytes through the fused path for lines of plain integers
//! (`RowReader::next_int_row`) against the ordinary path (the same reader behind a decoder
//! that does not offer it), block by block: the same rows (fields, markers, line numbers,
//! lengths, raw lines, the NUL after every value), integers, tuples, end or error and counts.
//!
//! The first byte picks the format, delimiter and NULL marker; the second the table (one to
//! four int2/int4/int8 columns), the third the chunk and block sizes; the rest is the input.
#![no_main]

use fastcopy_core::input::{Options, RowReader};
use fastcopy_core::int::Grammar;
use fastcopy_core::pipeline::{IntPlan, IntWidth, TuplePlan};
use libfuzzer_sys::fuzz_target;

#[path = "../../core/tests/common/fused.rs"]
mod fused;
use fused::{Plain, blocks};

fn options(sel: u8) -> Options {
    let mut o = if sel & 1 == 0 {
        Options::text()
    } else {
        Options::csv()
    };
    o.delimiter = [o.delimiter, b'|', b' ', b'-'][(sel as usize >> 1) % 4];
    match (sel >> 3) % 4 {
        1 => o.null = Vec::new(),
        2 => o.null = b"0".to_vec(),
        3 => o.default = Some(b"-".to_vec()),
        _ => {}
    }
    o.server_major = [15, 16, 17, 18][(sel as usize >> 5) % 4];
    o
}

fn plan(sel: u8) -> IntPlan {
    let n = 1 + (sel as usize & 3);
    let widths: Vec<IntWidth> = (0..n)
        .map(|i| {
            [IntWidth::I16, IntWidth::I32, IntWidth::I64, IntWidth::I32]
                [(sel as usize >> (2 + 2 * i)) % 4]
        })
        .collect();
    let grammar = if sel & 0x80 != 0 {
        Grammar::Pg15
    } else {
        Grammar::Pg16
    };
    let mut plan = IntPlan::new(widths.iter().map(|&w| Some(w)).collect(), grammar).unwrap();
    let (mut at, mut columns) = (24usize, Vec::new());
    for (f, &w) in widths.iter().enumerate().rev() {
        let b = match w {
            IntWidth::I16 => 2,
            IntWidth::I32 => 4,
            IntWidth::I64 => 8,
        };
        at = at.next_multiple_of(b);
        columns.push((f, at, b));
        at += b;
    }
    // (the data bytes, from 24 on, kept beside the slots as well)
    plan.tuple =
        TuplePlan::new(vec![0x5A; at.next_multiple_of(8)], columns, n).map(|tp| tp.with_data(24, at));
    plan
}

fuzz_target!(|data: &[u8]| {
    let [o, t, s, input @ ..] = data else { return };
    let opts = options(*o);
    let plan = plan(*t);
    let chunk = [7usize, 16, 64, 1 << 16][(*s as usize) % 4];
    let rows = 1 + (*s as usize >> 2);
    let fused = blocks(
        RowReader::with_capacity(input, opts.clone(), chunk),
        &plan,
        rows,
    );
    let plain = blocks(
        Plain(RowReader::with_capacity(input, opts, chunk)),
        &plan,
        rows,
    );
    assert_eq!(fused, plain);
});
