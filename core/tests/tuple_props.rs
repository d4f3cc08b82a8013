//! Property test of the tuples the reader forms ([`TuplePlan`]): random tables of int2, int4 and
//! int8 columns fed by the input's fields in a random order, random rows (values of every
//! width, out of range, NULL, not a number); a row is formed exactly when each of its fields
//! converted within its column's width, and then its bytes are the template with each value
//! little-endian at its column's offset.

use fastcopy_core::input::{Options, RowReader};
use fastcopy_core::int::Grammar;
use fastcopy_core::pipeline::{IntPlan, IntWidth, RowBlock, TuplePlan};
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
