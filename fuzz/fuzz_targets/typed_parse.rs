//! `fastcopy_core::numeric` and `fastcopy_core::datetime` on arbitrary bytes: no input panics,
//! an accepted numeric's body is a short-format header word and at most the digits its input
//! could give, and an accepted timestamptz is its timestamp moved by at most 15:59 (or by the
//! zone's fixed offset when it has none).

#![no_main]

use fastcopy_core::datetime::{Zone, parse_date, parse_timestamp, parse_timestamptz};
use fastcopy_core::numeric::{MAX_BODY, Typmod, parse_numeric};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let typmods = [
        None,
        Some(Typmod { precision: 12, scale: 2 }),
        Some(Typmod { precision: 5, scale: 5 }),
        Some(Typmod { precision: 40, scale: 0 }),
    ];
    for t in typmods {
        let mut out = [0u8; MAX_BODY];
        if let Some(n) = parse_numeric(data, t, &mut out) {
            assert!(n >= 2 && n % 2 == 0 && n <= MAX_BODY, "{data:?}");
            let h = u16::from_ne_bytes([out[0], out[1]]);
            assert_eq!(h & 0xc000, 0x8000, "{data:?}");
        }
    }
    let _ = parse_date(data);
    let _ = parse_timestamp(data);
    if let Some(utc) = parse_timestamptz(data, Zone::Explicit) {
        if let Some(b'Z' | b'z') = data.last() {
            let local = parse_timestamp(&data[..data.len() - 1]).expect("a timestamp before Z");
            assert_eq!(utc, local, "{data:?}");
        } else {
            let zone = data.iter().rposition(|&b| b == b'+' || b == b'-').unwrap();
            let local = parse_timestamp(&data[..zone]).expect("a timestamp before the offset");
            assert!((utc - local).abs() <= (15 * 3600 + 59 * 60) * 1_000_000, "{data:?}");
        }
    }
    // without an offset, the zone's fixed one: the timestamp moved by it
    if let Some(local) = parse_timestamp(data) {
        assert_eq!(parse_timestamptz(data, Zone::Fixed(-3600)), Some(local + 3_600_000_000), "{data:?}");
    }
});
