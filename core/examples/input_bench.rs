//! Row splitting throughput: 2,000,000 lines like `1234\t-4567\t3243423\n` (and the CSV
//! equivalent `1234,-4567,3243423\n`), generated in memory, read through `RowReader` with the
//! default chunk size; reports ns per row (best of several runs).
//!
//! `cargo run --release -p fastcopy-core --example input_bench [rows]`

use fastcopy_core::input::{Field, Options, Row, RowReader};
use std::time::Instant;

fn push_int(out: &mut Vec<u8>, v: i64) {
    if v < 0 {
        out.push(b'-');
    }
    let mut m = v.unsigned_abs();
    let mut tmp = [0u8; 20];
    let mut i = tmp.len();
    loop {
        i -= 1;
        tmp[i] = b'0' + (m % 10) as u8;
        m /= 10;
        if m == 0 {
            break;
        }
    }
    out.extend_from_slice(&tmp[i..]);
}

fn generate(rows: usize, delim: u8) -> Vec<u8> {
    let mut out = Vec::with_capacity(rows * 24);
    let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
    for _ in 0..rows {
        // xorshift: varied but deterministic numbers of the workload's widths
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        push_int(&mut out, 1000 + (x % 9000) as i64);
        out.push(delim);
        push_int(&mut out, -(1000 + ((x >> 16) % 9000) as i64));
        out.push(delim);
        push_int(&mut out, 1_000_000 + ((x >> 32) % 9_000_000) as i64);
        out.push(b'\n');
    }
    out
}

fn run(data: &[u8], opts: &Options) -> (f64, u64) {
    let mut reader = RowReader::new(data, opts.clone());
    let mut row = Row::new();
    let mut n = 0u64;
    let mut check = 0u64;
    let t = Instant::now();
    while reader.next_row(&mut row).expect("valid input") {
        n += 1;
        if let Field::Value(v) = row.field(row.len() - 1) {
            check = check.wrapping_add(v.len() as u64);
        }
    }
    let ns = t.elapsed().as_nanos() as f64 / n as f64;
    std::hint::black_box(check);
    (ns, n)
}

/// Wraps every field of `data` in quotes (CSV), or appends an escape to each first field (text).
fn variant(data: &[u8], csv: bool) -> Vec<u8> {
    let mut out = Vec::with_capacity(data.len() * 3 / 2);
    let mut first = true;
    if csv {
        out.push(b'"');
    }
    for &b in data {
        match b {
            b',' if csv => out.extend_from_slice(b"\",\""),
            b'\n' if csv => out.extend_from_slice(b"\"\n\""),
            b'\t' if !csv && first => {
                out.extend_from_slice(b"\\t\t");
                first = false;
            }
            b'\n' => {
                out.push(b);
                first = true;
            }
            _ => out.push(b),
        }
    }
    if csv {
        out.pop();
    }
    out
}

fn main() {
    let rows: usize = std::env::args()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(2_000_000);
    let cases = [
        ("text", Options::text(), b'\t', false),
        ("csv", Options::csv(), b',', false),
        ("text, a `\\t` escape per row", Options::text(), b'\t', true),
        ("csv, every field quoted", Options::csv(), b',', true),
    ];
    for (name, opts, delim, alt) in cases {
        let mut data = generate(rows, delim);
        if alt {
            data = variant(&data, opts.format == fastcopy_core::input::Format::Csv);
        }
        let mut best = f64::MAX;
        let mut n = 0;
        for _ in 0..10 {
            let (ns, rows_read) = run(&data, &opts);
            best = best.min(ns);
            n = rows_read;
        }
        let mb = data.len() as f64 / 1e6;
        println!(
            "{name}: {n} rows, {mb:.1} MB: {best:.1} ns/row ({:.0} MB/s)",
            data.len() as f64 / (best * n as f64 / 1e9) / 1e6
        );
    }
}
