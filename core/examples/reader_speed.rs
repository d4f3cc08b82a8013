//! The reader thread's work alone, in memory: a file of rows of three `integer` fields (text
//! format, e.g. bench's lotsaints.copy) read into blocks with the tuple plan of a table
//! (int4, int4, int4), through the fused path for integer lines and through the ordinary
//! path (split, convert, form), alternating, 31 rounds each; medians and the median of the
//! per-round ratios. Instruction counts, steadier on a shared VM than times:
//! `valgrind --tool=callgrind target/release/examples/reader_speed FILE fused` (or `plain`).
//!
//!     cargo run --release -p fastcopy-core --example reader_speed -- /tmp/fastcopy/lotsaints.copy
use fastcopy_core::decode::Decoder;
use fastcopy_core::input::{Options, RowReader};
use fastcopy_core::int::Grammar;
use fastcopy_core::pipeline::{IntPlan, IntWidth, RowBlock, TuplePlan};
use std::time::Instant;

#[path = "../tests/common/fused.rs"]
mod fused;
use fused::Plain;

/// Reads every block (1000 rows, as the loader's); the rows read.
fn read<D: Decoder>(mut d: D, plan: &IntPlan) -> usize {
    let mut block = RowBlock::new(1000);
    let mut n = 0;
    loop {
        block.fill(&mut d, 1 << 20, Some(plan), None);
        n += block.rows().len();
        if let Some(end) = &block.end {
            end.as_ref().expect("the file reads without error");
            return n;
        }
    }
}

fn median(v: &mut [f64]) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn main() {
    let mut args = std::env::args().skip(1);
    let path = args.next().expect("usage: reader_speed FILE [fused|plain]");
    let data = std::fs::read(path).expect("readable file");
    let mut plan = IntPlan::new(vec![Some(IntWidth::I32); 3], Grammar::Pg16).unwrap();
    plan.tuple = TuplePlan::new(vec![0; 40], vec![(0, 24, 4), (1, 28, 4), (2, 32, 4)], 3)
        .map(|tp| tp.with_data(24, 36));
    let fused = || read(RowReader::new(&data[..], Options::text()), &plan);
    let plain = || read(Plain(RowReader::new(&data[..], Options::text())), &plan);
    match args.next().as_deref() {
        Some("fused") => return println!("{} rows", fused()),
        Some("plain") => return println!("{} rows", plain()),
        _ => {}
    }
    let time = |f: &dyn Fn() -> usize| {
        let t = Instant::now();
        f();
        t.elapsed().as_secs_f64() * 1e3
    };
    let (mut a, mut b, mut r) = (vec![], vec![], vec![]);
    for _ in 0..31 {
        let (x, y) = (time(&fused), time(&plain));
        a.push(x);
        b.push(y);
        r.push(x / y);
    }
    println!(
        "fused {:.1} ms, plain {:.1} ms (medians of 31), fused/plain median per-round ratio {:.3}",
        median(&mut a),
        median(&mut b),
        median(&mut r)
    );
}
