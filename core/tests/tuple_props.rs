//! Property test of the tuples the reader forms ([`TuplePlan`]): random tables of int2, int4 and
//! int8 columns fed by the input's fields in a random order, random rows (values of every
//! width, out of range, NULL, not a number); a row is formed exactly when each of its fields
//! converted within its column's width, and then its bytes are the template with each value
//! little-endian at its column's offset.

use fastcopy_core::input::{Options, RowReader};
use fastcopy_core::int::Grammar;
use fastcopy_core::pipeline::{FusedPlan, IntPlan, IntWidth, RowBlock, RowMark, TuplePlan};
use proptest::prelude::*;

#[derive(Clone, Debug)]
enum Value {
    Int(i64),
    Null,
    Junk,
}

fn value() -> impl Strategy<Value = Value> {
    prop_oneof![
        8 => any::<i16>().prop_map(|v| Value::Int(v as i64)),
        4 => any::<i32>().prop_map(|v| Value::Int(v as i64)),
        4 => any::<i64>().prop_map(Value::Int),
        1 => Just(Value::Null),
        1 => Just(Value::Junk),
    ]
}

fn width_bytes(w: IntWidth) -> usize {
    match w {
        IntWidth::I16 => 2,
        IntWidth::I32 => 4,
        IntWidth::I64 => 8,
    }
}

fn fits(v: i64, w: IntWidth) -> bool {
    match w {
        IntWidth::I16 => i16::try_from(v).is_ok(),
        IntWidth::I32 => i32::try_from(v).is_ok(),
        IntWidth::I64 => true,
    }
}

fn table() -> impl Strategy<Value = (Vec<IntWidth>, Vec<usize>)> {
    let width = prop_oneof![
        Just(IntWidth::I16),
        Just(IntWidth::I32),
        Just(IntWidth::I64)
    ];
    prop::collection::vec(width, 1..6).prop_flat_map(|widths| {
        let n = widths.len();
        (
            Just(widths),
            Just((0..n).collect::<Vec<_>>()).prop_shuffle(),
        )
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]
    #[test]
    fn formed_tuples_are_the_template_with_the_values(
        (widths, order) in table(),
        rows in prop::collection::vec(prop::collection::vec(value(), 6), 1..40),
        fill in any::<u8>(),
    ) {
        // column c comes from field order[c]; the fields' widths follow from it
        let n = widths.len();
        let mut field_width = vec![IntWidth::I64; n];
        for (c, &f) in order.iter().enumerate() {
            field_width[f] = widths[c];
        }
        let mut at = 0usize;
        let mut columns = Vec::new();
        for (c, &w) in widths.iter().enumerate() {
            let b = width_bytes(w);
            at = at.next_multiple_of(b);
            columns.push((order[c], 24 + at, b));
            at += b;
        }
        let template = vec![fill; 24 + at.next_multiple_of(8)];
        let mut plan = IntPlan::new(field_width.iter().map(|&w| Some(w)).collect(), Grammar::Pg16)
            .unwrap();
        plan.tuple = TuplePlan::new(template.clone(), columns.clone(), n);
        prop_assert!(plan.tuple.is_some());

        let mut data = Vec::new();
        for row in &rows {
            let fields: Vec<String> = row[..n].iter().map(|v| match v {
                Value::Int(i) => i.to_string(),
                Value::Null => "\\N".into(),
                Value::Junk => "1x".into(),
            }).collect();
            data.extend_from_slice(fields.join("\t").as_bytes());
            data.push(b'\n');
        }
        let mut reader = RowReader::new(&data[..], Options::text());
        let mut block = RowBlock::new(64);
        block.fill(&mut reader, 1 << 20, Some(&plan), None);
        prop_assert_eq!(block.rows().len(), rows.len());
        for (r, row) in rows.iter().enumerate() {
            let expect = (0..n).map(|f| match row[f] {
                Value::Int(v) if fits(v, field_width[f]) => Some(v),
                _ => None,
            }).collect::<Option<Vec<i64>>>().map(|vals| {
                let mut t = template.clone();
                for &(f, at, b) in &columns {
                    t[at..at + b].copy_from_slice(&vals[f].to_le_bytes()[..b]);
                }
                t
            });
            prop_assert_eq!(block.tuple(r).map(<[u8]>::to_vec), expect, "row {}", r);
        }
    }
}

#[path = "common/fused.rs"]
mod fused_common;

/// The fused path (`Decoder::next_int_row`, lines of plain integers read into their values and
/// tuple in one pass) against the ordinary one (the same reader behind a decoder that does
/// not offer it): every block the same, row for row (fields, markers, line numbers, lengths,
/// raw line), the same integers and tuples, the same end or error, the same counts; over
/// lines that are plain integers and lines that only nearly are (spaces, signs, prefixes,
/// underscores, markers, values out of range, long digit runs, wrong field counts, other line
/// endings), text and CSV, markers and delimiters that switch the path off, and small chunks
/// that cut lines at the buffer's end.
mod fused {
    use super::fused_common::{Plain, blocks};
    use super::*;
    use fastcopy_core::decode::Decoder;
    use fastcopy_core::input::{InputError, Row};
    use std::io::Read;

    /// The reader, counting the rows the fused path read.
    struct Counted<R: Read>(RowReader<R>, usize);

    impl<R: Read> Decoder for Counted<R> {
        fn next_row(&mut self, row: &mut Row) -> Result<bool, InputError> {
            self.0.next_row(row)
        }
        fn bytes_read(&self) -> u64 {
            self.0.bytes_read()
        }
        fn lines_read(&self) -> u64 {
            self.0.lines_read()
        }
        fn int_rows(&self, plan: &IntPlan) -> bool {
            self.0.int_rows(plan)
        }
        fn next_int_row(
            &mut self,
            plan: &FusedPlan,
            row: &mut Row,
            tuple: &mut [u8],
            kept: &mut [u8],
        ) -> Option<RowMark> {
            let taken = self.0.next_int_row(plan, row, tuple, kept);
            self.1 += taken.is_some() as usize;
            taken
        }
    }

    fn field() -> impl Strategy<Value = String> {
        prop_oneof![
            8 => any::<i16>().prop_map(|v| v.to_string()),
            6 => any::<i32>().prop_map(|v| v.to_string()),
            4 => any::<i64>().prop_map(|v| v.to_string()),
            3 => (0u32..100).prop_map(|v| v.to_string()),
            1 => "[0-9]{9,22}",
            1 => "-[0-9]{9,21}",
            // 8 to 17 digits with leading zeros (a value of few digits in a long field)
            1 => "-?0{1,12}[0-9]{1,6}",
            1 => prop::sample::select(vec![
                "", "-", "--1", "+5", " 1", "1 ", "1_000", "0x1F", "0o17", "007", "-0",
                "\\N", "N", "\"1\"", "1.5", "1e3", "\\.", "9223372036854775808", "-32769",
                "2147483648", "1\\t", "x",
            ]).prop_map(String::from),
        ]
    }

    #[derive(Clone, Debug)]
    struct Case {
        csv: bool,
        delim: u8,
        null: Option<&'static str>,
        widths: Vec<IntWidth>,
        lines: Vec<(Vec<String>, &'static str)>,
        chunk: usize,
        block: usize,
        pg15: bool,
    }

    fn case() -> impl Strategy<Value = Case> {
        let width = prop_oneof![
            Just(IntWidth::I16),
            Just(IntWidth::I32),
            Just(IntWidth::I64)
        ];
        (prop::collection::vec(width, 1..5), any::<bool>()).prop_flat_map(|(widths, csv)| {
            let n = widths.len();
            // mostly as many fields as columns; sometimes one fewer or one more
            let count =
                prop_oneof![8 => Just(n), 1 => Just(n.saturating_sub(1).max(1)), 1 => Just(n + 1)];
            let eol = prop_oneof![6 => Just("\n"), 1 => Just("\r\n"), 1 => Just("\r")];
            let line = (
                count.prop_flat_map(|c| prop::collection::vec(field(), c)),
                eol,
            );
            (
                Just(csv),
                prop::sample::select(vec![b'\t', b',', b'|', b'-', b'1']),
                prop::sample::select(vec![None, Some(""), Some("1"), Some("-"), Some("NUL")]),
                Just(widths),
                prop::collection::vec(line, 1..60),
                prop::sample::select(vec![7usize, 16, 33, 64, 1 << 16]),
                1usize..40,
                any::<bool>(),
            )
                .prop_map(|(csv, delim, null, widths, lines, chunk, block, pg15)| {
                    Case {
                        csv,
                        delim,
                        null,
                        widths,
                        lines,
                        chunk,
                        block,
                        pg15,
                    }
                })
        })
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(2000))]
        #[test]
        fn fused_rows_are_the_ordinary_rows(c in case()) {
            let mut opts = if c.csv { Options::csv() } else { Options::text() };
            if c.delim != opts.quote {
                opts.delimiter = c.delim;
            }
            if let Some(null) = c.null {
                opts.null = null.as_bytes().to_vec();
            }
            let n = c.widths.len();
            let grammar = if c.pg15 { Grammar::Pg15 } else { Grammar::Pg16 };
            let mut plan = IntPlan::new(c.widths.iter().map(|&w| Some(w)).collect(), grammar).unwrap();
            let mut at = 0usize;
            let mut columns = Vec::new();
            for (f, &w) in c.widths.iter().enumerate() {
                let b = width_bytes(w);
                at = at.next_multiple_of(b);
                columns.push((f, 24 + at, b));
                at += b;
            }
            // (the data bytes from the first column on, kept beside the slots as well)
            plan.tuple = TuplePlan::new(vec![0xA5; 24 + at.next_multiple_of(8)], columns, n)
                .map(|tp| tp.with_data(24, 24 + at));
            let mut data = Vec::new();
            for (fields, eol) in &c.lines {
                data.extend_from_slice(fields.join(&(c.delim as char).to_string()).as_bytes());
                data.extend_from_slice(eol.as_bytes());
            }
            let fused = blocks(RowReader::with_capacity(&data[..], opts.clone(), c.chunk), &plan, c.block);
            let plain = blocks(Plain(RowReader::with_capacity(&data[..], opts, c.chunk)), &plan, c.block);
            prop_assert_eq!(fused, plain);
        }
    }

    /// CSV looks one byte past a `\r` line ending before it returns the row: an invalid byte
    /// right after it is reported on that row. A line whose `\r` is the last verified byte is
    /// left to the ordinary path, which looks; at every chunk size, the same blocks.
    #[test]
    fn a_csv_carriage_return_at_the_verified_end_is_looked_past() {
        let plan = {
            let mut p = IntPlan::new(vec![Some(IntWidth::I32); 2], Grammar::Pg16).unwrap();
            p.tuple = TuplePlan::new(vec![0; 32], vec![(0, 24, 4), (1, 28, 4)], 2);
            p
        };
        for data in [&b"1,2\r3,4\r5,6\r\xff7,8\r"[..], b"1,2\r3,4\r\n5,6\r"] {
            for chunk in 1..20 {
                let fused = blocks(
                    RowReader::with_capacity(data, Options::csv(), chunk),
                    &plan,
                    8,
                );
                let plain = blocks(
                    Plain(RowReader::with_capacity(data, Options::csv(), chunk)),
                    &plan,
                    8,
                );
                assert_eq!(fused, plain, "chunk {chunk}");
            }
        }
    }

    /// The path is taken where it can be: a file of plain integer lines is read by it (each
    /// row formed), and its rows are those of the ordinary path.
    #[test]
    fn plain_integer_lines_take_the_fused_path() {
        let plan = {
            let mut p = IntPlan::new(vec![Some(IntWidth::I32); 3], Grammar::Pg16).unwrap();
            p.tuple = TuplePlan::new(vec![0; 40], vec![(0, 24, 4), (1, 28, 4), (2, 32, 4)], 3)
                .map(|tp| tp.with_data(24, 36));
            p
        };
        let mut data = Vec::new();
        for i in 0..500i32 {
            data.extend_from_slice(format!("{i}\t{}\t3243423\n", -i * 7).as_bytes());
        }
        // through a block: every line after the first is read by the path
        let mut counted = Counted(RowReader::new(&data[..], Options::text()), 0);
        let mut block = RowBlock::new(1000);
        block.fill(&mut counted, 1 << 20, Some(&plan), None);
        assert_eq!((block.rows().len(), counted.1), (500, 499));
        assert!((0..500).all(|r| block.tuple(r).is_some()));

        let mut reader = RowReader::new(&data[..], Options::text());
        assert!(reader.int_rows(&plan));
        let mut row = Row::new();
        let (mut tuple, mut kept) = (vec![0; 40], vec![0; 12]);
        let fused = plan.fused().unwrap();
        // the first line fixes the line ending: the ordinary path reads it
        assert!(
            reader
                .next_int_row(&fused, &mut row, &mut tuple, &mut kept)
                .is_none()
        );
        assert!(reader.next_row(&mut row).unwrap());
        assert_eq!(row.len(), 3);
        let mark = reader
            .next_int_row(&fused, &mut row, &mut tuple, &mut kept)
            .unwrap();
        assert_eq!((mark.line_no, mark.line_len), (2, 12));
        assert_eq!(
            (row.line_no(), row.mark().line_len, row.raw_len()),
            (2, 12, 13)
        );
        // the values are in the tuple only; the row keeps its line, without fields
        assert_eq!(row.len(), 0);
        assert_eq!(&tuple[24..28], &1i32.to_le_bytes());
        assert_eq!(&tuple[28..32], &(-7i32).to_le_bytes());
        assert_eq!(&tuple[32..36], &3243423i32.to_le_bytes());
        // and the data bytes kept apart are the tuple's
        assert_eq!(&kept[..], &tuple[24..36]);
        assert_eq!(row.line_no(), 2);
        assert_eq!(&*row.raw_line(), b"1\t-7\t3243423");
        // markers that could be integers switch it off
        let mut opts = Options::text();
        opts.null = b"-1".to_vec();
        assert!(!RowReader::new(&data[..], opts).int_rows(&plan));
        let mut opts = Options::csv();
        opts.delimiter = b'-';
        assert!(!RowReader::new(&data[..], opts).int_rows(&plan));
    }
}
