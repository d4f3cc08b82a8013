//! Differential fuzzing of `fastcopy_core::int` against a slow reference: every input is
//! parsed in all three widths under both grammars, and the result (value, or which error) must
//! be the reference's. Also checks that no input panics. The `parse_iN_in` forms get the input
//! split at its first byte's value (mod the length): the field, then the rest of the buffer.

#![no_main]

use fastcopy_core::int::{
    Grammar, parse_i16, parse_i16_in, parse_i32, parse_i32_in, parse_i64, parse_i64_in,
};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let n = data.first().map_or(0, |&b| b as usize % (data.len() + 1));
    let field = &data[..n];
    for g in [Grammar::Pg15, Grammar::Pg16] {
        let (min, max) = (i16::MIN as i128, i16::MAX as i128);
        let got = parse_i16_in(data, n, g).map(i128::from);
        assert_eq!(
            got,
            reference(field, g, min, max),
            "i16_in {g:?} {data:?} {n}"
        );
        let (min, max) = (i32::MIN as i128, i32::MAX as i128);
        let got = parse_i32_in(data, n, g).map(i128::from);
        assert_eq!(
            got,
            reference(field, g, min, max),
            "i32_in {g:?} {data:?} {n}"
        );
        let (min, max) = (i64::MIN as i128, i64::MAX as i128);
        let got = parse_i64_in(data, n, g).map(i128::from);
        assert_eq!(
            got,
            reference(field, g, min, max),
            "i64_in {g:?} {data:?} {n}"
        );
        let (min, max) = (i16::MIN as i128, i16::MAX as i128);
        let got = parse_i16(data, g).map(i128::from);
        assert_eq!(got, reference(data, g, min, max), "i16 {g:?} {data:?}");
        let (min, max) = (i32::MIN as i128, i32::MAX as i128);
        let got = parse_i32(data, g).map(i128::from);
        assert_eq!(got, reference(data, g, min, max), "i32 {g:?} {data:?}");
        let (min, max) = (i64::MIN as i128, i64::MAX as i128);
        let got = parse_i64(data, g).map(i128::from);
        assert_eq!(got, reference(data, g, min, max), "i64 {g:?} {data:?}");
    }
});

#[path = "../../core/tests/common/int_reference.rs"]
mod int_reference;
use int_reference::reference;
