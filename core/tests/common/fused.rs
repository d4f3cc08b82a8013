//! The fused path for lines of plain integers against the ordinary path: a decoder that does
//! not offer it, and every block a decoder fills, as values to compare (with the checks every
//! block must pass either way). Shared by `tuple_props.rs`, the `int_rows` fuzz target and the
//! `reader_speed` example.
#![allow(dead_code)]

use fastcopy_core::decode::Decoder;
use fastcopy_core::input::{Field, InputError, Row, RowReader};
use fastcopy_core::pipeline::{IntPlan, RowBlock};
use std::io::Read;

/// The reader without the fused path.
pub struct Plain<R: Read>(pub RowReader<R>);

impl<R: Read> Decoder for Plain<R> {
    fn next_row(&mut self, row: &mut Row) -> Result<bool, InputError> {
        self.0.next_row(row)
    }
    fn bytes_read(&self) -> u64 {
        self.0.bytes_read()
    }
    fn lines_read(&self) -> u64 {
        self.0.lines_read()
    }
}

pub type Seen = (
    Vec<(
        Vec<Option<Vec<u8>>>,
        u64,
        usize,
        usize,
        Vec<u8>,
        Vec<Option<i64>>,
        Option<Vec<u8>>,
    )>,
    Option<Result<(), (String, u64)>>,
    u64,
    u64,
);

/// Every block the decoder fills with `plan`, as comparable values; checks that every value
/// is followed by a NUL and that the marks are the rows' numbers and lengths. A row with a
/// formed tuple is its tuple, raw line, number and lengths: the loader reads nothing else of
/// it, and the fused path keeps nothing else (no fields, no converted integers).
pub fn blocks<D: Decoder>(mut d: D, plan: &IntPlan, rows: usize) -> Vec<Seen> {
    let mut out = Vec::new();
    let mut block = RowBlock::new(rows);
    loop {
        block.fill(&mut d, 1 << 20, Some(plan), None);
        let rows = (0..block.rows().len())
            .map(|r| {
                let row = &block.rows()[r];
                let tuple = block.tuple(r).map(<[u8]>::to_vec);
                let unformed = if tuple.is_some() { 0 } else { row.len() };
                let fields = (0..unformed)
                    .map(|i| match row.field(i) {
                        Field::Value(v) => {
                            // the NUL after every value (the input functions' C string)
                            let (buf, n) = row.value_in(i).unwrap();
                            assert_eq!(buf[n], 0, "line {}: no NUL after field {i}", row.line_no());
                            Some(v.to_vec())
                        }
                        Field::Null => None,
                        Field::Default => Some(b"<default>".to_vec()),
                    })
                    .collect();
                // the data bytes kept beside the slots are the slot's
                if let Some(t) = &tuple
                    && block.data_len() > 0
                {
                    let at = block.data_at();
                    assert_eq!(block.data_run(r, r + 1), &t[at..at + block.data_len()]);
                }
                let mark = block.mark(r);
                assert_eq!(
                    (mark.line_no, mark.line_len),
                    (row.line_no(), row.line_len())
                );
                (
                    fields,
                    row.line_no(),
                    row.raw_len(),
                    row.line_len(),
                    row.raw_line().into_owned(),
                    if tuple.is_some() {
                        Vec::new()
                    } else {
                        block.ints(r).to_vec()
                    },
                    tuple,
                )
            })
            .collect();
        let end = block
            .end
            .as_ref()
            .map(|e| e.as_ref().map(|_| ()).map_err(|e| (e.message(), e.line)));
        let done = end.is_some();
        out.push((rows, end, block.bytes_read, block.lines_read));
        if done {
            return out;
        }
    }
}
