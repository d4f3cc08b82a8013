//! The block pipeline as a load runs it: a reader thread fills row blocks (splitting and the
//! int conversion) and a consumer on another thread reads every row's converted ints and field
//! bytes, as the loader does; compared with the same work on one thread. Reports ns per row.
//!
//! `cargo run --release -p fastcopy-core --example pipeline_bench [rows]` (`TUPLES=1`: the
//! reader forms each row's tuple too, as for a table of int columns)

use fastcopy_core::input::{Options, RowReader};
use fastcopy_core::int::Grammar;
use fastcopy_core::pipeline::{IntPlan, IntWidth, RowBlock, TuplePlan, produce};
use std::sync::mpsc::sync_channel;
use std::time::Instant;

fn block_rows() -> usize {
    std::env::var("ROWS_PER_BLOCK")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(4096)
}
const BLOCK_BYTES: usize = 1 << 20;
const BLOCKS: usize = 4;

fn generate(rows: usize) -> Vec<u8> {
    let mut out = Vec::with_capacity(rows * 24);
    let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
    for i in 0..rows {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        let b = (x % 100_001) as i64 - 50_000;
        out.extend_from_slice(format!("{}\t{}\t3243423\n", i + 1, b).as_bytes());
    }
    out
}

/// The three int fields; with TUPLES=1 in the environment, the reader forms the tuples too (a
/// 64-byte chunk as the extension's template for three int4 columns: 24 bytes of
/// `HeapTupleData`, a 24-byte header, the values at 48, 52 and 56).
fn plan() -> IntPlan {
    let mut plan = IntPlan::new(vec![Some(IntWidth::I32); 3], Grammar::Pg16).unwrap();
    if std::env::var("TUPLES").is_ok_and(|v| v == "1") {
        let columns = vec![(0, 48, 4), (1, 52, 4), (2, 56, 4)];
        plan.tuple = TuplePlan::new(vec![0; 64], columns, 3);
    }
    plan
}

/// What the loader reads of a block: every row's ints and field count.
fn consume(block: &RowBlock) -> u64 {
    let mut sum = 0u64;
    for (r, row) in block.rows().iter().enumerate() {
        sum = sum.wrapping_add(row.len() as u64);
        match block.tuple(r) {
            Some(t) => sum = sum.wrapping_add(t[48] as u64),
            None => {
                for v in block.ints(r) {
                    sum = sum.wrapping_add(v.unwrap_or(0) as u64);
                }
            }
        }
    }
    sum
}

fn inline(data: &[u8]) -> (f64, u64) {
    let mut reader = RowReader::new(data, Options::text());
    let mut block = RowBlock::new(block_rows());
    let plan = plan();
    let (mut n, mut sum) = (0u64, 0u64);
    let t = Instant::now();
    loop {
        block.fill(&mut reader, BLOCK_BYTES, Some(&plan), None);
        n += block.rows().len() as u64;
        sum = sum.wrapping_add(consume(&block));
        if block.end.is_some() {
            break;
        }
    }
    std::hint::black_box(sum);
    (t.elapsed().as_nanos() as f64 / n as f64, n)
}

fn threaded(data: &[u8]) -> (f64, u64) {
    let t = Instant::now();
    let (full_tx, full) = sync_channel(BLOCKS);
    let (empty, empty_rx) = sync_channel(BLOCKS);
    for _ in 0..BLOCKS {
        empty.send(RowBlock::new(block_rows())).unwrap();
    }
    let (mut n, mut sum) = (0u64, 0u64);
    std::thread::scope(|s| {
        let reader = RowReader::new(data, Options::text());
        s.spawn(move || produce(reader, full_tx, empty_rx, BLOCK_BYTES, Some(plan()), None));
        while let Ok(block) = full.recv() {
            n += block.rows().len() as u64;
            sum = sum.wrapping_add(consume(&block));
            let last = block.end.is_some();
            let _ = empty.send(block);
            if last {
                break;
            }
        }
    });
    std::hint::black_box(sum);
    (t.elapsed().as_nanos() as f64 / n as f64, n)
}

fn main() {
    let rows: usize = std::env::args()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(2_000_000);
    let data = generate(rows);
    for (name, f) in [
        ("one thread", inline as fn(&[u8]) -> (f64, u64)),
        ("reader thread", threaded),
    ] {
        let mut all = Vec::new();
        let mut n = 0;
        for _ in 0..9 {
            let (ns, r) = f(&data);
            all.push(ns);
            n = r;
        }
        all.sort_by(f64::total_cmp);
        println!(
            "{name}: {n} rows: median {:.1} ns/row, best {:.1}",
            all[4], all[0]
        );
    }
}
