//! Property tests of `fastcopy_core::numeric` and `fastcopy_core::datetime` against slow
//! references written independently here: a numeric as a scaled `u128` cut into base-10000
//! digits by division (the parser works on decimal digit strings), a date by counting days
//! year by year and month by month (the parser uses era arithmetic).

use fastcopy_core::datetime::{Zone, parse_date, parse_timestamp, parse_timestamptz};
use fastcopy_core::numeric::{MAX_BODY, Typmod, parse_numeric};
use proptest::prelude::*;

/// (negative, header word fields, digits) the reference expects for `int.frac` with the
/// typmod, or `None` for the server's overflow.
fn numeric_reference(
    neg: bool,
    int: &str,
    frac: &str,
    typmod: Option<(u32, u32)>,
) -> Option<(bool, u16, i32, Vec<u16>)> {
    let digits = |s: &str| -> u128 { if s.is_empty() { 0 } else { s.parse().unwrap() } };
    let (scaled, dscale) = match typmod {
        None => (
            digits(int) * 10u128.pow(frac.len() as u32) + digits(frac),
            frac.len() as u32,
        ),
        Some((p, s)) => {
            // the value times 10^s, rounded half away from zero on the magnitude
            let all = digits(int) * 10u128.pow(frac.len() as u32) + digits(frac);
            let scaled = if frac.len() as u32 > s {
                let cut = 10u128.pow(frac.len() as u32 - s);
                let (q, r) = (all / cut, all % cut);
                if r * 2 >= cut { q + 1 } else { q }
            } else {
                all * 10u128.pow(s - frac.len() as u32)
            };
            let int_digits = (scaled / 10u128.pow(s))
                .to_string()
                .trim_start_matches('0')
                .len();
            if int_digits as u32 > p - s {
                return None;
            }
            (scaled, s)
        }
    };
    if scaled == 0 {
        return Some((false, dscale as u16, 0, vec![]));
    }
    let s4 = dscale.div_ceil(4) * 4;
    let mut m = scaled * 10u128.pow(s4 - dscale);
    let mut groups = Vec::new();
    while m > 0 {
        groups.push((m % 10_000) as u16);
        m /= 10_000;
    }
    groups.reverse();
    let weight = groups.len() as i32 - 1 - (s4 / 4) as i32;
    while groups.last() == Some(&0) {
        groups.pop();
    }
    Some((neg, dscale as u16, weight, groups))
}

fn decode(body: &[u8]) -> (bool, u16, i32, Vec<u16>) {
    let words: Vec<u16> = body
        .chunks_exact(2)
        .map(|w| u16::from_ne_bytes([w[0], w[1]]))
        .collect();
    let h = words[0];
    assert_eq!(h & 0xc000, 0x8000, "the short format");
    let weight = if h & 0x40 != 0 {
        (h & 0x3f) as i32 - 64
    } else {
        (h & 0x3f) as i32
    };
    (
        h & 0x2000 != 0,
        (h >> 7) & 0x3f,
        weight,
        words[1..].to_vec(),
    )
}

proptest! {
    #[test]
    fn numeric_matches_the_reference(
        sign in 0..3u8,
        int in "[0-9]{0,15}",
        frac in "[0-9]{0,15}",
        point in any::<bool>(),
        typmod in prop::option::of((1u32..=20).prop_flat_map(|p| (Just(p), 0..=p))),
    ) {
        let point = point || int.is_empty();
        prop_assume!(!(int.is_empty() && frac.is_empty()));
        let frac = if point { frac } else { String::new() };
        let text = format!("{}{}{}{}", ["", "+", "-"][sign as usize], int, if point { "." } else { "" }, frac);
        let neg = sign == 2;
        let mut out = [0u8; MAX_BODY];
        let t = typmod.map(|(precision, scale)| Typmod { precision, scale });
        let got = parse_numeric(text.as_bytes(), t, &mut out).map(|n| decode(&out[..n]));
        let want = numeric_reference(neg, &int, &frac, typmod).map(|(n, d, w, g)| (n && !g.is_empty(), d, w, g));
        prop_assert_eq!(got, want, "{}", text);
    }

    #[test]
    fn dates_match_day_counting(y in 1u32..=9999, m in 1u32..=12, d in 1u32..=31) {
        let text = format!("{y:04}-{m:02}-{d:02}");
        let leap = |y: u32| y % 4 == 0 && (y % 100 != 0 || y % 400 == 0);
        let month_days = |y: u32, m: u32| [31, if leap(y) { 29 } else { 28 }, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31][m as usize - 1];
        let want = (d <= month_days(y, m)).then(|| {
            let mut days: i64 = 0;
            if y >= 2000 {
                for yy in 2000..y { days += if leap(yy) { 366 } else { 365 }; }
            } else {
                for yy in y..2000 { days -= if leap(yy) { 366 } else { 365 }; }
            }
            for mm in 1..m { days += month_days(y, mm) as i64; }
            (days + d as i64 - 1) as i32
        });
        prop_assert_eq!(parse_date(text.as_bytes()), want, "{}", text);
    }

    #[test]
    fn timestamps_are_the_date_and_the_time(
        days in 0i64..3_000_000, h in 0u32..24, mi in 0u32..60, s in 0u32..60,
        frac in "[0-9]{0,6}", off_h in 0u32..16, off_m in prop::option::of(0u32..60), minus in any::<bool>(),
    ) {
        // a date from day 0001-01-01 on, printed by walking the calendar from there
        let date = parse_date(b"0001-01-01").unwrap() as i64 + days % 3_652_059;
        let text_date = {
            let leap = |y: u32| y % 4 == 0 && (y % 100 != 0 || y % 400 == 0);
            let (mut y, mut left) = (1u32, date - parse_date(b"0001-01-01").unwrap() as i64);
            while left >= if leap(y) { 366 } else { 365 } { left -= if leap(y) { 366 } else { 365 }; y += 1; }
            let mut m = 1;
            loop {
                let md = [31, if leap(y) { 29 } else { 28 }, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31][m - 1];
                if left < md { break; }
                left -= md; m += 1;
            }
            format!("{y:04}-{m:02}-{:02}", left + 1)
        };
        let time = format!("{h:02}:{mi:02}:{s:02}{}{frac}", if frac.is_empty() { "" } else { "." });
        let text = format!("{text_date} {time}");
        let usecs = if frac.is_empty() { 0 } else { format!("{frac:0<6}").parse::<i64>().unwrap() };
        let local = ((date * 86_400) + (h * 3600 + mi * 60 + s) as i64) * 1_000_000 + usecs;
        prop_assert_eq!(parse_timestamp(text.as_bytes()), Some(local), "{}", text);
        let zone = match off_m {
            Some(m) => format!("{}{off_h:02}:{m:02}", if minus { "-" } else { "+" }),
            None => format!("{}{off_h:02}", if minus { "-" } else { "+" }),
        };
        let offset = (off_h * 3600 + off_m.unwrap_or(0) * 60) as i64 * 1_000_000;
        let utc = if minus { local + offset } else { local - offset };
        prop_assert_eq!(parse_timestamptz(format!("{text}{zone}").as_bytes(), Zone::Explicit), Some(utc), "{}{}", text, zone);
        // ISO 8601's T and Z; without an offset, the zone's
        let iso = text.replacen(' ', "T", 1);
        prop_assert_eq!(parse_timestamp(iso.as_bytes()), Some(local), "{}", iso);
        prop_assert_eq!(parse_timestamptz(format!("{iso}Z").as_bytes(), Zone::Explicit), Some(local), "{}Z", iso);
        prop_assert_eq!(parse_timestamptz(text.as_bytes(), Zone::Explicit), None, "{}", text);
        let east = if minus { -(offset / 1_000_000) } else { offset / 1_000_000 } as i32;
        prop_assert_eq!(parse_timestamptz(text.as_bytes(), Zone::Fixed(east)), Some(utc), "{} at {}", text, east);
    }
}
