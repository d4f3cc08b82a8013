//! `numeric` text input for plain decimal numbers: what `numeric_in` stores for them.
//!
//! A value is accepted in one spelling only: an optional sign, decimal digits with at most one
//! decimal point and at least one digit (`12`, `-0.50`, `+.5`, `7.`), at most
//! [`MAX_DIGITS`] digits. Everything else (whitespace, exponents, `NaN`, `Infinity`,
//! underscores, hexadecimal, longer numbers) is `None`: the server's `numeric_in` reads it.
//!
//! The value is what `numeric_in` makes of it:
//! - with a typmod (precision p, scale s; `0 <= s <= p`, and the integer digits written and s
//!   together at most [`MAX_DIGITS`]), it is rounded to s fraction digits,
//!   half away from zero (`round_var`), its display scale is s, and more than p - s integer
//!   digits after rounding is the server's overflow error (`None` here);
//! - without one, the display scale is the number of fraction digits written;
//! - then `make_result`: base-10000 digits grouped at the decimal point, leading and trailing
//!   zero groups dropped, a zero is positive with weight 0; stored in the short format
//!   (`NUMERIC_SHORT`: sign, display scale and weight in one 16-bit header word) where the
//!   scale and weight fit it, which they always do for numbers this short. The body (header
//!   word and digits, native-endian) is what follows the varlena header.

/// Longest number accepted, in digits (integer and fraction together).
pub const MAX_DIGITS: usize = 40;
/// Room for the longest body: the header word and the base-10000 digits (a rounding carry and
/// the grouping add at most two).
pub const MAX_BODY: usize = 2 + 2 * (MAX_DIGITS / 4 + 3);

const NBASE_DIGITS: usize = 4;
const NUMERIC_SHORT: u16 = 0x8000;
const SHORT_SIGN_NEG: u16 = 0x2000;
const SHORT_DSCALE_SHIFT: u16 = 7;
const SHORT_DSCALE_MAX: usize = 63;
const SHORT_WEIGHT_SIGN: u16 = 0x0040;
const SHORT_WEIGHT_MASK: u16 = 0x003f;
const SHORT_WEIGHT_MAX: i32 = 63;
const SHORT_WEIGHT_MIN: i32 = -64;

/// A numeric column's typmod: `numeric(precision, scale)`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Typmod {
    pub precision: u32,
    pub scale: u32,
}

/// The body of the numeric value `b` is written to the start of `out`; its length in bytes,
/// or `None` when the server's `numeric_in` must read `b` (see the module docs).
pub fn parse_numeric(b: &[u8], typmod: Option<Typmod>, out: &mut [u8; MAX_BODY]) -> Option<usize> {
    let (neg, rest) = match b.first()? {
        b'-' => (true, &b[1..]),
        b'+' => (false, &b[1..]),
        _ => (false, b),
    };
    let point = rest.iter().position(|&c| c == b'.');
    let (int, frac) = match point {
        Some(p) => (&rest[..p], &rest[p + 1..]),
        None => (rest, &rest[..0]),
    };
    if int.len() + frac.len() == 0
        || int.len() + frac.len() > MAX_DIGITS
        || !int.iter().chain(frac).all(u8::is_ascii_digit)
    {
        return None;
    }
    // no more fraction digits than the scale keeps: nothing to round
    match typmod {
        None => exact(neg, int, frac, frac.len(), None, out),
        Some(t)
            if frac.len() <= t.scale as usize
                && t.scale <= t.precision
                && int.len() + t.scale as usize <= MAX_DIGITS =>
        {
            exact(neg, int, frac, t.scale as usize, Some(t), out)
        }
        Some(t) => general(neg, int, frac, Some(t), out),
    }
}

/// [`parse_numeric`] of a value written with no more fraction digits than its display scale
/// `dscale` (checked digits; `typmod`'s scale is `dscale`, at most its precision): its
/// base-10000 groups read straight from the digits, the integer part's first group the
/// leftover digits, the last fraction group padded on the right.
#[inline]
fn exact(
    neg: bool,
    int: &[u8],
    frac: &[u8],
    dscale: usize,
    typmod: Option<Typmod>,
    out: &mut [u8; MAX_BODY],
) -> Option<usize> {
    let lead = int.iter().take_while(|&&c| c == b'0').count();
    let int = &int[lead..];
    if typmod.is_some_and(|t| int.len() > (t.precision - t.scale) as usize) {
        return None; // the server's "numeric field overflow"
    }
    // the integer part's groups (its first one the leftover digits), then the fraction's
    let (first, weight) = match int.len() {
        0 => (0, -1),
        n => ((n - 1) % NBASE_DIGITS + 1, ((n - 1) / NBASE_DIGITS) as i32),
    };
    let groups = (first > 0)
        .then(|| group(&int[..first]))
        .into_iter()
        .chain(int[first..].chunks_exact(NBASE_DIGITS).map(group))
        .chain(
            frac.chunks(NBASE_DIGITS)
                .map(|g| group(g) * [1000, 100, 10, 1][g.len() - 1]),
        );
    from_groups(neg, dscale, weight, groups, out)
}

/// The body of a value whose base-10000 groups, the first of weight `weight`, are `groups`
/// (`make_result`): leading zero groups dropped, each lowering the weight, and trailing
/// ones; a zero is positive with weight 0.
#[inline(always)]
fn from_groups(
    neg: bool,
    dscale: usize,
    mut weight: i32,
    groups: impl Iterator<Item = u16>,
    out: &mut [u8; MAX_BODY],
) -> Option<usize> {
    let mut digits = [0u16; MAX_BODY / 2];
    let mut count = 0;
    for g in groups {
        if count == 0 && g == 0 {
            weight -= 1; // a leading zero group
            continue;
        }
        *digits.get_mut(count)? = g;
        count += 1;
    }
    while count > 0 && digits[count - 1] == 0 {
        count -= 1;
    }
    if count == 0 {
        return write_short(false, dscale, 0, &[], out);
    }
    write_short(neg, dscale, weight, &digits[..count], out)
}

/// The value of up to four decimal digits.
#[inline(always)]
fn group(d: &[u8]) -> u16 {
    d.iter().fold(0u16, |v, &c| v * 10 + (c - b'0') as u16)
}

/// [`parse_numeric`] digit by digit, for any checked value (the rounding path, and the
/// oracle of [`exact`] in the tests).
fn general(
    neg: bool,
    int: &[u8],
    frac: &[u8],
    typmod: Option<Typmod>,
    out: &mut [u8; MAX_BODY],
) -> Option<usize> {
    // decimal digits of the value, integer part first (one leading slot for a carry)
    let mut dec = [0u8; MAX_DIGITS + 2];
    let mut n = 1;
    for &c in int {
        dec[n] = c - b'0';
        n += 1;
    }
    let mut int_len = int.len() + 1; // with the carry slot
    let dscale = match typmod {
        None => {
            for &c in frac {
                dec[n] = c - b'0';
                n += 1;
            }
            frac.len()
        }
        Some(t) => {
            let s = t.scale as usize;
            // (the digits kept, the integer ones and s of fraction, fit the same room)
            if s > t.precision as usize || int.len() + s > MAX_DIGITS {
                return None;
            }
            for i in 0..s {
                dec[n] = frac.get(i).map_or(0, |c| c - b'0');
                n += 1;
            }
            if frac.get(s).is_some_and(|&c| c >= b'5') {
                // half away from zero: one more in the last place kept, carried upwards
                let mut i = n - 1;
                loop {
                    if dec[i] == 9 {
                        dec[i] = 0;
                        i -= 1; // (slot 0 holds 0, so the carry stops there at the latest)
                    } else {
                        dec[i] += 1;
                        break;
                    }
                }
            }
            // integer digits beyond p - s: the server's "numeric field overflow"
            let significant = dec[..int_len].iter().skip_while(|&&d| d == 0).count();
            if significant > (t.precision - t.scale) as usize {
                return None;
            }
            s
        }
    };
    // base-10000 groups aligned at the decimal point: integer digits padded on the left,
    // fraction digits on the right
    let lead = (NBASE_DIGITS - int_len % NBASE_DIGITS) % NBASE_DIGITS;
    let mut padded = [0u8; MAX_DIGITS + 2 + 2 * NBASE_DIGITS];
    padded[lead..lead + n].copy_from_slice(&dec[..n]);
    int_len += lead;
    let total = (lead + n).next_multiple_of(NBASE_DIGITS);
    let groups = padded[..total]
        .chunks_exact(NBASE_DIGITS)
        .map(|g| g.iter().fold(0u16, |v, &d| v * 10 + d as u16));
    from_groups(
        neg,
        dscale,
        (int_len / NBASE_DIGITS) as i32 - 1,
        groups,
        out,
    )
}

/// The short-format body of a value (`make_result`'s `NUMERIC_SHORT` case) into `out`: its
/// length, or `None` where the scale or the weight does not fit the short header.
#[inline]
fn write_short(
    neg: bool,
    dscale: usize,
    weight: i32,
    digits: &[u16],
    out: &mut [u8],
) -> Option<usize> {
    if dscale > SHORT_DSCALE_MAX || !(SHORT_WEIGHT_MIN..=SHORT_WEIGHT_MAX).contains(&weight) {
        return None;
    }
    let header = NUMERIC_SHORT
        | if neg { SHORT_SIGN_NEG } else { 0 }
        | (dscale as u16) << SHORT_DSCALE_SHIFT
        | if weight < 0 { SHORT_WEIGHT_SIGN } else { 0 }
        | (weight as u16 & SHORT_WEIGHT_MASK);
    let out = out.get_mut(..2 + 2 * digits.len())?;
    out[..2].copy_from_slice(&header.to_ne_bytes());
    for (i, d) in digits.iter().enumerate() {
        out[2 + 2 * i..4 + 2 * i].copy_from_slice(&d.to_ne_bytes());
    }
    Some(2 + 2 * digits.len())
}

/// `numeric_recv` for a column without a typmod: the body it stores for the binary value `b`
/// (COPY's binary format, `numeric_send`'s: ndigits, weight, sign, dscale, then the base-10000
/// digits, each a big-endian 16-bit word) into `out` (at least `b.len()` bytes), its length;
/// or `None` for the receive function: a length that does not match ndigits, NaN or an
/// infinity or an invalid sign, a scale or digit out of range (its errors), digits beyond the
/// scale (which it truncates), and values whose scale or weight do not fit the short format.
/// As `make_result`: leading and trailing zero digits dropped (a leading one lowers the
/// weight), a zero positive with weight 0, the scale as given.
pub fn numeric_from_binary(b: &[u8], out: &mut [u8]) -> Option<usize> {
    let word = |i: usize| u16::from_be_bytes([b[2 * i], b[2 * i + 1]]);
    if b.len() < 8 {
        return None;
    }
    let ndigits = word(0) as usize;
    if b.len() != 8 + 2 * ndigits {
        return None;
    }
    let mut weight = word(1) as i16 as i32;
    let neg = match word(2) {
        0x0000 => false,
        0x4000 => true,
        _ => return None,
    };
    let dscale = word(3) as usize;
    if dscale > SHORT_DSCALE_MAX {
        return None;
    }
    let mut first = 4;
    let mut end = 4 + ndigits;
    if (first..end).any(|i| word(i) >= 10_000) {
        return None;
    }
    // (trailing zero digits change nothing: trunc_var cuts them as make_result drops them)
    while end > first && word(end - 1) == 0 {
        end -= 1;
    }
    // digits past the scale: trunc_var would cut them (a part of the last one is fine when
    // those decimal places are zero)
    let frac_groups = (end - 4) as i32 - weight - 1;
    let past = frac_groups * NBASE_DIGITS as i32 - dscale as i32;
    if past > 0 && (past >= NBASE_DIGITS as i32 || word(end - 1) % 10u16.pow(past as u32) != 0) {
        return None;
    }
    while first < end && word(first) == 0 {
        first += 1;
        weight -= 1;
    }
    let mut digits = [0u16; 64];
    let n = end - first;
    if n > digits.len() {
        return None;
    }
    for (k, i) in (first..end).enumerate() {
        digits[k] = word(i);
    }
    if n == 0 {
        return write_short(false, dscale, 0, &[], out);
    }
    write_short(neg, dscale, weight, &digits[..n], out)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// (header word, digits) of a value.
    fn parse(s: &str, typmod: Option<(u32, u32)>) -> Option<(u16, Vec<u16>)> {
        let mut out = [0u8; MAX_BODY];
        let t = typmod.map(|(precision, scale)| Typmod { precision, scale });
        let n = parse_numeric(s.as_bytes(), t, &mut out)?;
        let words: Vec<u16> = out[..n]
            .chunks_exact(2)
            .map(|w| u16::from_ne_bytes([w[0], w[1]]))
            .collect();
        Some((words[0], words[1..].to_vec()))
    }

    fn header(neg: bool, dscale: u16, weight: i32) -> u16 {
        NUMERIC_SHORT
            | if neg { SHORT_SIGN_NEG } else { 0 }
            | dscale << 7
            | if weight < 0 { SHORT_WEIGHT_SIGN } else { 0 }
            | (weight as u16 & SHORT_WEIGHT_MASK)
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(3000))]

        /// The groups read straight from the digits are the digit-by-digit path's, for
        /// values with and without a typmod (the typmods with scales above, at and below the
        /// fraction's length, and precisions that the integer digits overflow).
        #[test]
        fn exact_is_the_general_path(
            neg in proptest::prelude::any::<bool>(),
            int in "0{0,3}[0-9]{0,22}",
            frac in proptest::option::of("[0-9]{0,20}0{0,3}"),
            typmod in proptest::option::of((1u32..45, 0u32..45)),
        ) {
            let frac = frac.unwrap_or_default();
            proptest::prop_assume!(int.len() + frac.len() > 0 && int.len() + frac.len() <= MAX_DIGITS);
            let t = typmod.map(|(precision, scale)| Typmod { precision, scale });
            let text = format!("{}{int}.{frac}", if neg { "-" } else { "" });
            let mut got = [0u8; MAX_BODY];
            let mut want = [0u8; MAX_BODY];
            let g = parse_numeric(text.as_bytes(), t, &mut got);
            let w = general(neg, int.as_bytes(), frac.as_bytes(), t, &mut want);
            proptest::prop_assert_eq!(g, w, "{}", text);
            if let Some(n) = g {
                proptest::prop_assert_eq!(&got[..n], &want[..n], "{}", text);
            }
        }
    }

    #[test]
    fn groups_at_the_decimal_point() {
        assert_eq!(
            parse("123.45", None),
            Some((header(false, 2, 0), vec![123, 4500]))
        );
        assert_eq!(
            parse("-12345.6", None),
            Some((header(true, 1, 1), vec![1, 2345, 6000]))
        );
        assert_eq!(parse("0.0001", None), Some((header(false, 4, -1), vec![1])));
        assert_eq!(
            parse("0.00001", None),
            Some((header(false, 5, -2), vec![1000]))
        );
        assert_eq!(
            parse("100000000", None),
            Some((header(false, 0, 2), vec![1]))
        );
        assert_eq!(parse("+.5", None), Some((header(false, 1, -1), vec![5000])));
        assert_eq!(parse("7.", None), Some((header(false, 0, 0), vec![7])));
        assert_eq!(parse("00012", None), Some((header(false, 0, 0), vec![12])));
    }

    #[test]
    fn zero_is_positive_with_weight_zero() {
        assert_eq!(parse("0", None), Some((header(false, 0, 0), vec![])));
        assert_eq!(parse("-0.000", None), Some((header(false, 3, 0), vec![])));
        assert_eq!(
            parse("-0.004", Some((5, 2))),
            Some((header(false, 2, 0), vec![]))
        );
    }

    #[test]
    fn typmod_rounds_half_away_from_zero_and_checks_the_integer_digits() {
        assert_eq!(
            parse("1.005", Some((12, 2))),
            Some((header(false, 2, 0), vec![1, 100]))
        );
        assert_eq!(
            parse("-1.004", Some((12, 2))),
            Some((header(true, 2, 0), vec![1]))
        );
        assert_eq!(
            parse("9999.995", Some((12, 2))),
            Some((header(false, 2, 1), vec![1]))
        );
        assert_eq!(
            parse("5", Some((12, 2))),
            Some((header(false, 2, 0), vec![5]))
        );
        assert_eq!(
            parse("0.5", Some((2, 2))),
            Some((header(false, 2, -1), vec![5000]))
        );
        assert_eq!(
            parse("99.995", Some((4, 2))),
            None,
            "rounds to 100.00: overflow"
        );
        assert_eq!(
            parse("99.994", Some((4, 2))),
            Some((header(false, 2, 0), vec![99, 9900]))
        );
        assert_eq!(parse("1", Some((2, 2))), None);
        assert_eq!(parse("0.999", Some((2, 2))), None, "rounds to 1.00");
        assert_eq!(parse("12345678901", Some((12, 2))), None);
        assert_eq!(
            parse("1234567890", Some((12, 2))).unwrap().1,
            vec![12, 3456, 7890]
        );
    }

    /// numeric_send's form of a value: ndigits, weight, sign, dscale, digits.
    fn send(weight: i16, neg: bool, dscale: u16, digits: &[u16]) -> Vec<u8> {
        let mut b = Vec::new();
        for w in [
            digits.len() as u16,
            weight as u16,
            if neg { 0x4000 } else { 0 },
            dscale,
        ] {
            b.extend_from_slice(&w.to_be_bytes());
        }
        for d in digits {
            b.extend_from_slice(&d.to_be_bytes());
        }
        b
    }

    fn from_binary(b: &[u8]) -> Option<(u16, Vec<u16>)> {
        let mut out = vec![0u8; b.len()];
        let n = numeric_from_binary(b, &mut out)?;
        let words: Vec<u16> = out[..n]
            .chunks_exact(2)
            .map(|w| u16::from_ne_bytes([w[0], w[1]]))
            .collect();
        Some((words[0], words[1..].to_vec()))
    }

    /// The body of a value sent as numeric_send sends it equals the text input's.
    #[test]
    fn binary_values_as_numeric_recv_stores_them() {
        assert_eq!(
            from_binary(&send(0, false, 2, &[123, 4500])),
            parse("123.45", None)
        );
        assert_eq!(
            from_binary(&send(1, true, 1, &[1, 2345, 6000])),
            parse("-12345.6", None)
        );
        assert_eq!(
            from_binary(&send(-1, false, 4, &[1])),
            parse("0.0001", None)
        );
        assert_eq!(from_binary(&send(0, true, 3, &[])), parse("0.000", None));
        // leading and trailing zero digits dropped; zero is positive
        assert_eq!(
            from_binary(&send(1, false, 0, &[0, 7, 0])),
            parse("7", None)
        );
        assert_eq!(from_binary(&send(2, true, 0, &[0, 0])), parse("0", None));
        // digits past the scale: the receive function's (it truncates)
        assert_eq!(from_binary(&send(0, false, 1, &[1, 2500])), None);
        assert_eq!(
            from_binary(&send(0, false, 2, &[1, 2500])),
            parse("1.25", None)
        );
        assert_eq!(from_binary(&send(-1, false, 3, &[1, 5000])), None);
        // NaN, infinities, bad sign, digit, scale or length
        for b in [
            send(0, false, 0, &[10_000]),
            [
                &0u16.to_be_bytes()[..],
                &0u16.to_be_bytes(),
                &0xC000u16.to_be_bytes(),
                &0u16.to_be_bytes(),
            ]
            .concat(),
            [
                &0u16.to_be_bytes()[..],
                &0u16.to_be_bytes(),
                &0x1000u16.to_be_bytes(),
                &0u16.to_be_bytes(),
            ]
            .concat(),
            send(0, false, 64, &[1]),
            send(0, false, 0, &[1])[..9].to_vec(),
            send(64, false, 0, &[1]),
        ] {
            assert_eq!(from_binary(&b), None, "{b:?}");
        }
    }

    #[test]
    fn other_spellings_are_the_servers() {
        for s in [
            "", "-", ".", "1e5", " 1", "1 ", "NaN", "Infinity", "1_000", "0x1F", "1.2.3", "--1",
        ] {
            assert_eq!(parse(s, None), None, "{s}");
        }
        assert!(parse(&"9".repeat(MAX_DIGITS), None).is_some());
        assert!(parse(&"9".repeat(MAX_DIGITS + 1), None).is_none());
        // integer digits and the scale's fraction digits together: at most MAX_DIGITS (the
        // fuzzer's find: 37 integer digits at scale 5 ran past the digit buffer)
        let t = (MAX_DIGITS as u32 + 10, 5);
        assert!(parse(&"8".repeat(MAX_DIGITS - 5), Some(t)).is_some());
        assert!(parse(&"8".repeat(MAX_DIGITS - 4), Some(t)).is_none());
        assert!(parse(&format!("{}.99", "8".repeat(MAX_DIGITS - 4)), Some(t)).is_none());
        // the longest body fits
        let s = format!("9.{}", "9".repeat(MAX_DIGITS - 1));
        assert!(parse(&s, Some((MAX_DIGITS as u32, MAX_DIGITS as u32 - 2))).is_some());
    }
}
