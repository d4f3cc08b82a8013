//! Integer text input with the exact grammars of PostgreSQL 15 and PostgreSQL 16+.
//!
//! [`parse_i16`], [`parse_i32`] and [`parse_i64`] take one whole field (the slice end is the
//! string end; there is no NUL inside) and return what the server's `int2in`, `int4in` and
//! `int8in` would: the value, or which of the two errors the server would raise.
//! [`parse_i16_in`], [`parse_i32_in`] and [`parse_i64_in`] give the same answers for a field
//! that starts a longer buffer (the loader's row buffers), which they may read past the field.
//!
//! # The two grammars
//!
//! Both skip leading and trailing `isspace` bytes (space, `\t`, `\n`, `\v`, `\f`, `\r`; in the
//! server's C and UTF-8 locales no byte >= 0x80 is a space) and take one optional `+` or `-`.
//!
//! - [`Grammar::Pg15`]: then `[0-9]+` and nothing else. The magnitude is checked after every
//!   digit: once it exceeds `|MIN|` the result is [`IntError::OutOfRange`], even if junk follows
//!   (`"99999999999x"` is out of range for `int4`, `"2147483649x"` too, but `"2147483648x"` is
//!   invalid syntax). A positive value equal to `|MIN|` is out of range at the end.
//! - [`Grammar::Pg16`] (PostgreSQL 16 and later): then a prefix `0x`/`0X`, `0o`/`0O`, `0b`/`0B`
//!   or none (decimal; leading zeros stay decimal) and digits of that base. A single `_` may
//!   separate two digits, and after a prefix it may also come first (`"0x_1F"`); `"_1"`, `"1_"`,
//!   `"1__2"`, `"0x"`, `"0x_"` are invalid. Before each digit the accumulated magnitude is
//!   compared with `|MIN| / base` and, if above, the result is out of range at once, whatever
//!   follows (so `"2147483650x"` is out of range but `"2147483649x"` invalid for `int4`). A bad
//!   `_` or junk seen before that point is invalid syntax. At the end the value must lie in
//!   `MIN..=MAX` (`"-0x80000000"` is a valid `int4`).
//!
//! # Two paths
//!
//! 1. **Fast path** ([`fast`], [`magnitude`]), shared by both grammars: the canonical form the
//!    server itself writes, `-?[0-9]+` and nothing else, in up to 16 bytes (20 for `bigint`), on
//!    which the grammars agree (the value, or out of range). It returns the value and leaves out
//!    of range to the general path, so that the code after it, inlined into the caller's loop, has
//!    no error to merge. It is built for mixed data, whose length and sign change unpredictably
//!    from one field to the next: up to 8 bytes ([`right_digits`]) there is no branch before the
//!    one that accepts the field: the word is the OR of overlapping loads (the first and the last
//!    4 bytes, the first 2, the first and the last byte), and a load longer than the slice reads a
//!    static zero buffer instead, its pointer chosen with a conditional move. 9 to 16 bytes are the
//!    first and the last 8 bytes, 17 to 20 three words, one predictable branch away. Every load is
//!    at a fixed offset from the start or the end of the field, so none waits for the sign, which
//!    only turns a leading `'-'` into a 0 digit. All bytes are checked and converted at once with
//!    SWAR (subtract `'0'`, flag bytes outside `0..=9` with an add, an OR and a mask, combine with
//!    multiplies); at most 19 digits fit a `u64`, so one range check at the end replaces the
//!    per-digit overflow test, and up to 8 bytes none is needed for `integer` and `bigint`.
//!    When the field starts a buffer with at least 8 bytes left ([`fast_in`], the `_in`
//!    functions), up to 8 bytes are one load instead, the bytes after the field dropped by the
//!    same multiply that aligns the word. Short numbers go the same way as long ones: a separate
//!    branch for them is mispredicted on mixed data (measured: a 1-4 byte path in front made
//!    mixed `integer` fields about 1.5 times slower). On the x86 machine measured, time follows
//!    the instruction count more than latency, so up to 8 bytes the bytes are moved into place by
//!    multiplies with a constant from a table indexed by the length (instead of shifts by a
//!    variable count and more selects), and the `'0'`s to subtract come from a table too.
//!    `examples/int_bench.rs` measures this choice against a digit-at-a-time loop, other SWAR
//!    layouts and a length dispatch with branches.
//! 2. **General path** ([`general`]), out of line: spaces, `+`, prefixes, underscores, junk, longer
//!    numbers. A `+` before the canonical form is the fast path on the rest ([`fast`]), first
//!    thing. `ws* [+-]? [0-9]+ ws*` again means the same in both grammars and takes the fast
//!    digit code ([`magnitude`]) once spaces, sign and leading zeros are off. Under
//!    [`Grammar::Pg16`], a rest (after spaces and sign) that is one hex number (`0x` and up to 16
//!    hex digits) or decimal digits with single underscores (up to 16 bytes), then spaces, has only
//!    one possible error, out of range, and is converted with SWAR as well ([`hex_digits`],
//!    [`underscored_digits`]); without spaces or `+` (as clients write them) these two are tried
//!    first. Anything else goes through the chosen grammar step by step, in the
//!    server's order, so that the choice between the two errors is the server's.
//!
//! # Invariants
//!
//! - The fast path either returns the value or declines (`None`), out of range included; the
//!   SWAR shortcuts of the general path return the final answer or decline. Declining only costs
//!   time: the step-by-step code alone is a complete implementation of each grammar.
//! - Magnitudes are `u64`: below `10^19` from the decimal SWAR code, below `2^64` from at most 16
//!   hex digits, and at most `|MIN| + base - 1` step by step, where the range checks come before
//!   each multiply.
//! - The `_in` functions read at most 8 bytes from the field start and no byte after it
//!   reaches the result: the tests append digits, NULs and junk to every field.
//! - No allocation, no `unsafe`, no panic on any input: bytes are read through slice patterns,
//!   `get`, fixed-size chunks and selects between the slice and a static buffer; shift counts are
//!   masked; the property tests and the fuzz target run with overflow checks.
//!
//! The grammars were checked against PostgreSQL 15.19, 16.15 and 17.11 (`int2in`, `int4in`,
//! `int8in`) on half a million generated strings and all short ASCII strings, with no difference.

use std::hint::select_unpredictable;

/// Which server's integer input grammar to follow.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Grammar {
    /// PostgreSQL 15: optional spaces, optional sign, decimal digits, optional spaces.
    Pg15,
    /// PostgreSQL 16 and later: adds `0x`/`0o`/`0b` prefixes and `_` digit separators.
    Pg16,
}

/// Why a field is not a valid integer of the requested width; the server's two SQLSTATEs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum IntError {
    /// 22P02 `invalid_text_representation`.
    InvalidSyntax,
    /// 22003 `numeric_value_out_of_range`.
    OutOfRange,
}

/// `|i16::MIN|`, `|i32::MIN|`, `|i64::MIN|`: the width is carried by this const parameter.
const MAG16: u64 = 1 << 15;
const MAG32: u64 = 1 << 31;
const MAG64: u64 = 1 << 63;

/// Parses a `smallint` (`int2`) field. Always inlined, so that the fast path is part of the
/// caller's loop (whether a plain `#[inline]` is taken depends on the caller).
#[inline(always)]
pub fn parse_i16(s: &[u8], g: Grammar) -> Result<i16, IntError> {
    match fast::<MAG16>(s) {
        Some(v) => Ok(v as i16),
        None => general::<MAG16>(s, g).map(|v| v as i16),
    }
}

/// Parses an `integer` (`int4`) field; inlined like [`parse_i16`].
#[inline(always)]
pub fn parse_i32(s: &[u8], g: Grammar) -> Result<i32, IntError> {
    match fast::<MAG32>(s) {
        Some(v) => Ok(v as i32),
        None => general::<MAG32>(s, g).map(|v| v as i32),
    }
}

/// Parses a `bigint` (`int8`) field; inlined like [`parse_i16`].
#[inline(always)]
pub fn parse_i64(s: &[u8], g: Grammar) -> Result<i64, IntError> {
    match fast::<MAG64>(s) {
        Some(v) => Ok(v),
        None => general::<MAG64>(s, g),
    }
}

/// [`parse_i16`] of the field `s[..n]` that starts a longer buffer `s` (`n` above `s.len()` is
/// taken as `s.len()`): same result, but a field of at most 8 bytes with 8 bytes of `s` from
/// its start is read with one 8-byte load ([`fast_in`]). The loader's fields lie in row buffers
/// with room after them.
#[inline(always)]
pub fn parse_i16_in(s: &[u8], n: usize, g: Grammar) -> Result<i16, IntError> {
    match fast_in::<MAG16>(s, n) {
        Some(v) => Ok(v as i16),
        None => general::<MAG16>(field(s, n), g).map(|v| v as i16),
    }
}

/// [`parse_i32`] of `s[..n]`, as [`parse_i16_in`].
#[inline(always)]
pub fn parse_i32_in(s: &[u8], n: usize, g: Grammar) -> Result<i32, IntError> {
    match fast_in::<MAG32>(s, n) {
        Some(v) => Ok(v as i32),
        None => general::<MAG32>(field(s, n), g).map(|v| v as i32),
    }
}

/// [`parse_i64`] of `s[..n]`, as [`parse_i16_in`].
#[inline(always)]
pub fn parse_i64_in(s: &[u8], n: usize, g: Grammar) -> Result<i64, IntError> {
    match fast_in::<MAG64>(s, n) {
        Some(v) => Ok(v),
        None => general::<MAG64>(field(s, n), g),
    }
}

/// `s[..n]`, or all of `s` if `n` is beyond it.
#[inline(always)]
fn field(s: &[u8], n: usize) -> &[u8] {
    s.get(..n).unwrap_or(s)
}

/// `isspace` of the C library in the C and UTF-8 locales: space and `\t \n \v \f \r`.
#[inline(always)]
fn is_space(b: u8) -> bool {
    b == b' ' || b.wrapping_sub(b'\t') < 5
}

/// `s` without leading and trailing spaces.
#[inline(always)]
fn trim_spaces(mut s: &[u8]) -> &[u8] {
    while let [first, rest @ ..] = s {
        if !is_space(*first) {
            break;
        }
        s = rest;
    }
    while let [rest @ .., last] = s {
        if !is_space(*last) {
            break;
        }
        s = rest;
    }
    s
}

/// Index of the first byte at or after `i` that is not a space.
#[inline(always)]
fn skip_space(s: &[u8], mut i: usize) -> usize {
    while let Some(&b) = s.get(i) {
        if !is_space(b) {
            break;
        }
        i += 1;
    }
    i
}

/// The value of a magnitude and sign, or out of range: `-MAG..=MAG - 1`.
#[inline(always)]
fn finish<const MAG: u64>(neg: bool, mag: u64) -> Result<i64, IntError> {
    if mag > MAG - 1 + neg as u64 {
        return Err(IntError::OutOfRange);
    }
    // mag <= 2^63; `2^63 as i64` is i64::MIN, whose negation wraps to itself, as wanted.
    let v = mag as i64;
    Ok(if neg { v.wrapping_neg() } else { v })
}

/// Eight `'0'` bytes.
const ZEROS: u64 = 0x3030_3030_3030_3030;

/// `0x01` in every byte of a `u64` and of a `u128`.
pub(crate) const ONES: u64 = u64::MAX / 255;
const ONES128: u128 = u128::MAX / 255;

/// Flags the bytes of `y` (digit values, one per byte) that are not `0..=9`: the result is
/// nonzero iff one is, provided that borrows and carries in `y` only start at such bytes.
///
/// A byte that was below `'0'` before `'0'` was subtracted is `>= 0xD0` now, one above `'9'` is
/// `0x0A..=0xCF`: the top bit of the byte or of the byte `+ 0x76` is set. Carries and borrows only
/// start at such bytes and only move up, so the lowest of them is always flagged, which is all a
/// zero test needs.
#[inline(always)]
fn non_digit_flags(y: u64) -> u64 {
    (y | y.wrapping_add(0x76 * ONES)) & (0x80 * ONES)
}

/// The leading ASCII digits of the 8 bytes of `word` (little-endian: the first byte lowest):
/// how many there are (0 to 8) and, if at least one, their value.
#[inline(always)]
pub(crate) fn leading_digits(word: u64) -> (usize, u64) {
    // Borrows of the subtraction (and carries in the flags) start only at a byte that is not
    // a digit, and move up: the digits below the first such byte are exact.
    let y = word.wrapping_sub(ZEROS);
    let n = (non_digit_flags(y).trailing_zeros() / 8) as usize;
    // the n digits moved to the top bytes, zero bytes (leading zeros) below them
    let digits = y.checked_shl(64 - 8 * n as u32).unwrap_or(0);
    (n, swar_combine(digits))
}

/// The value of the `n` (1..=8) ASCII digits at the start of `word` (little-endian: the first
/// digit in the lowest byte); the bytes after them are not looked at (shifted out: a borrow of
/// the subtraction moves up from a byte below '0', and there is none among the digits).
#[inline(always)]
pub(crate) fn digits_value(word: u64, n: usize) -> u64 {
    debug_assert!((1..=8).contains(&n));
    swar_combine(word.wrapping_sub(ZEROS) << (64 - 8 * n))
}

/// The value of the `n` (8..=16) ASCII digits that start at the first byte of `first` and go
/// on into `second` (the 8 bytes after it; little-endian as [`digits_value`]): the first 8
/// digits' value scaled by the rest's power of ten, plus the rest's value. At most
/// 9,999,999,999,999,999 (below `i64::MAX`); the bytes after the digits are not looked at.
#[inline(always)]
pub(crate) fn long_digits_value(first: u64, second: u64, n: usize) -> u64 {
    debug_assert!((8..=16).contains(&n));
    let high = swar_combine(first.wrapping_sub(ZEROS));
    match n - 8 {
        0 => high,
        rest => high * 10u64.pow(rest as u32) + digits_value(second, rest),
    }
}

/// The value of 8 digit values (0..=9, one per byte, first digit in the lowest byte).
#[inline(always)]
fn swar_combine(v: u64) -> u64 {
    // Each 16-bit lane: 10 * first + second digit (low byte); the high byte is garbage.
    let v = v.wrapping_mul(10).wrapping_add(v >> 8);
    // 16-bit lanes 0 and 2: 100 * lane 0 + lane 1 and 100 * lane 2 + lane 3 (each below 10^4;
    // the multiply leaves them in lanes 1 and 3, the shift moves them down).
    let v = ((v & 0x00FF_00FF_00FF_00FF).wrapping_mul(1 + (100 << 16))) >> 16;
    // Bits 32..64: 10^4 * lane 0 + lane 2.
    (v & 0x0000_FFFF_0000_FFFF).wrapping_mul(1 + (10_000 << 32)) >> 32
}

/// Four zero bytes: where the loads of [`quads`], [`last_pair`] and [`right_digits`] read when the
/// slice is shorter.
static NO_QUAD: [u8; 4] = [0; 4];

/// The first and the last 4 bytes of `b` if it has 4, else zeros; without a branch: the loads
/// read [`NO_QUAD`] instead of a shorter `b` (a select of the pointer).
#[inline(always)]
fn quads(b: &[u8]) -> (u64, u64) {
    let quad: &[u8] = select_unpredictable(b.len() >= 4, b, &NO_QUAD);
    let word = |c: Option<&[u8; 4]>| c.map_or(0, |c| u32::from_le_bytes(*c)) as u64;
    (word(quad.first_chunk()), word(quad.last_chunk()))
}

/// `ALIGN[n]` (`n` = 1..=8) moves a word's low bytes up by `8 - n` bytes when multiplied by it:
/// one instruction, where a shift by a variable count takes more on x86 without BMI2.
static ALIGN: [u64; 16] = {
    let mut t = [0; 16];
    let mut n = 1;
    while n <= 8 {
        t[n] = 1 << (8 * (8 - n));
        n += 1;
    }
    t
};

/// `SHIFTED_ZEROS[n]` (`n` = 1..=8): `'0'` in the top `n` bytes, zeros below;
/// `SHIFTED_ZEROS[16 + n]`: the same with `'-'` first, except for `n = 1`: a lone `'-'` then keeps
/// a byte that is not a digit.
static SHIFTED_ZEROS: [u64; 32] = {
    let mut t = [0; 32];
    let mut n = 1;
    while n <= 8 {
        t[n] = ZEROS << (8 * (8 - n));
        if n > 1 {
            t[16 + n] = t[n] - (((b'0' - b'-') as u64) << (8 * (8 - n)));
        }
        n += 1;
    }
    t
};

/// The digit values of `b` (`1 <= b.len() <= 8`) at the top of a `u64` (last byte in the top
/// byte, zero bytes below: leading zeros), and its [`non_digit_flags`]. If `neg`, the first byte
/// is `'-'` and counts as a 0 digit, unless it is the only byte (then it is flagged).
///
/// No branch, and no read outside `b`: the length of mixed data is unpredictable. The word is
/// the OR of the last 4 bytes and the last byte at the top, and of the first 4 bytes, the first
/// 2 and the first byte moved up by [`ALIGN`] to where the first byte goes; the loads of 4 and 2
/// bytes read zeros when `b` is shorter ([`quads`]), and all the bytes that land on the same place
/// are the same byte of `b`, so OR is exact whatever the length. No load depends on the sign: the
/// sign only changes what is subtracted ([`SHIFTED_ZEROS`]). After the subtraction no borrow
/// starts at a digit byte.
#[inline(always)]
fn right_digits(b: &[u8], neg: bool) -> (u64, u64) {
    let n = b.len();
    let (lo, hi) = quads(b);
    let pair: &[u8] = select_unpredictable(n >= 2, b, &NO_QUAD);
    let pair = pair
        .first_chunk::<2>()
        .map_or(0, |c| u16::from_le_bytes(*c)) as u64;
    let first = b.first().copied().map_or(0, u64::from);
    let last = b.last().copied().map_or(0, u64::from);
    let raw = (lo | pair | first).wrapping_mul(ALIGN[n & 15]) | (hi | last << 24) << 32;
    let y = raw.wrapping_sub(SHIFTED_ZEROS[(n | (neg as usize) << 4) & 31]);
    (y, non_digit_flags(y))
}

/// The last 2 bytes of `b` if it has 2, else zeros; without a branch, like [`quads`].
#[inline(always)]
fn last_pair(b: &[u8]) -> u64 {
    let pair: &[u8] = select_unpredictable(b.len() >= 2, b, &NO_QUAD);
    pair.last_chunk::<2>().map_or(0, |c| u16::from_le_bytes(*c)) as u64
}

/// The digit values of the `n` (1..=8) low bytes of `raw` (first byte lowest) minus `zeros`
/// ([`ZEROS`], or [`signed_zeros`]) at the top of the word (the bytes above the `n` used ones,
/// garbage after the borrows, are shifted out; zero bytes come in below), and its
/// [`non_digit_flags`].
#[inline(always)]
fn digit_word(raw: u64, zeros: u64, n: usize) -> (u64, u64) {
    let y = raw.wrapping_sub(zeros) << (8 * (8usize.wrapping_sub(n) & 7));
    (y, non_digit_flags(y))
}

/// [`ZEROS`], but `'-'` in the first byte if `neg`, so that a leading `'-'` becomes a 0 digit.
/// Selected without a branch, like the sign of mixed data.
#[inline(always)]
fn signed_zeros(neg: bool) -> u64 {
    select_unpredictable(neg, ZEROS - (b'0' - b'-') as u64, ZEROS)
}

/// `b` (`1 <= b.len() <= 8`) in the low bytes of a `u64`, first byte lowest, the rest zero; put
/// together as in [`right_digits`], without a branch and without a read outside `b`.
#[inline(always)]
fn load_upto8(b: &[u8]) -> u64 {
    let n = b.len();
    let (lo, hi) = quads(b);
    let first = b.first().copied().map_or(0, u64::from);
    lo | first | last_pair(b) << (8 * (n.wrapping_sub(2) & 7)) | hi << (8 * (n.wrapping_sub(4) & 7))
}

/// The canonical-form fast path: the value of `-?[0-9]+` and nothing else, in at most 16 bytes
/// (20 for `bigint`, with at most 19 digits), in range. `None` means "ask the general path",
/// which also answers out of range.
#[inline(always)]
fn fast<const MAG: u64>(s: &[u8]) -> Option<i64> {
    if s.len().wrapping_sub(1) < 8 {
        // The sign after the length test, which rules out an empty `s`.
        let neg = s.first() == Some(&b'-');
        return upto8_value::<MAG>(right_digits(s, neg), neg);
    }
    let neg = s.first() == Some(&b'-');
    let mag = magnitude::<MAG>(s, neg)?;
    // Selects, not branches: the sign of mixed data is unpredictable.
    let v = mag as i64;
    let v = select_unpredictable(neg, v.wrapping_neg(), v);
    let in_range = match MAG {
        // mag < 10^16: `v` is exact, and in range if the narrowing keeps it.
        MAG16 => v as i16 as i64 == v,
        MAG32 => v as i32 as i64 == v,
        // mag < 10^19 < 2^64; `2^63 as i64` is i64::MIN, whose negation wraps to itself.
        _ => mag <= select_unpredictable(neg, MAG, MAG - 1),
    };
    in_range.then_some(v)
}

/// [`fast`] for the field `s[..n]` at the start of a longer buffer: if the field has at most 8
/// bytes and `s` at least 8, one 8-byte load from the field start, moved up by [`ALIGN`] so
/// that the bytes after the field fall off the top; the word is then the one [`right_digits`]
/// puts together from overlapping loads of the slice alone. Else [`fast`] on the field.
#[inline(always)]
fn fast_in<const MAG: u64>(s: &[u8], n: usize) -> Option<i64> {
    match s.first_chunk::<8>() {
        Some(word) if n.wrapping_sub(1) < 8 => {
            let neg = word[0] == b'-';
            let raw = u64::from_le_bytes(*word).wrapping_mul(ALIGN[n & 15]);
            let y = raw.wrapping_sub(SHIFTED_ZEROS[(n | (neg as usize) << 4) & 31]);
            upto8_value::<MAG>((y, non_digit_flags(y)), neg)
        }
        _ => fast::<MAG>(field(s, n)),
    }
}

/// The value of a field of 1 to 8 bytes from its [`right_digits`] word and flags, if it is
/// canonical (below 10^8: in range for `integer` and `bigint`, checked for `smallint`).
#[inline(always)]
fn upto8_value<const MAG: u64>((y, bad): (u64, u64), neg: bool) -> Option<i64> {
    if bad != 0 {
        return None;
    }
    let mag = swar_combine(y) as i64;
    let v = select_unpredictable(neg, mag.wrapping_neg(), mag);
    (MAG != MAG16 || v as i16 as i64 == v).then_some(v)
}

/// The value of `s` (`1 <= s.len() <= 8`), as [`magnitude`].
#[inline(always)]
fn upto8_magnitude(s: &[u8], neg: bool) -> Option<u64> {
    let (y, bad) = right_digits(s, neg);
    (bad == 0).then(|| swar_combine(y))
}

/// The value of `s`, `[0-9]+` (`-[0-9]+` if `neg`, the `'-'` counting as a 0 digit) in at most
/// 16 bytes (20 for `bigint`, with at most 19 digits), else `None`.
///
/// Up to 8 bytes, [`right_digits`] without a branch; 9 to 16 bytes, the first 8 bytes (whose
/// `len - 8` head bytes are kept) and the last 8; 17 to 20, three words. Every load is at a fixed
/// offset from the start or the end of `s`, so none waits for the sign, which only changes what
/// is subtracted from the first byte ([`signed_zeros`]). At most 19 digits fit a `u64`, and one
/// range check at the end replaces the server's per-digit overflow test.
#[inline(always)]
fn magnitude<const MAG: u64>(s: &[u8], neg: bool) -> Option<u64> {
    let len = s.len();
    if len.wrapping_sub(1) < 8 {
        upto8_magnitude(s, neg)
    } else if len <= 16 {
        let (first, last) = (s.first_chunk::<8>()?, s.last_chunk::<8>()?);
        let (yh, bh) = digit_word(u64::from_le_bytes(*first), signed_zeros(neg), len - 8);
        let (yt, bt) = digit_word(u64::from_le_bytes(*last), ZEROS, 8);
        if bh | bt != 0 {
            return None;
        }
        Some(swar_combine(yh) * 100_000_000 + swar_combine(yt))
    } else if MAG == MAG64 && len <= 19 + neg as usize {
        let (first, tail) = (s.first_chunk::<8>()?, s.last_chunk::<16>()?);
        let (mid, low) = tail.split_at(8);
        let (mid, low) = (mid.first_chunk::<8>()?, low.first_chunk::<8>()?);
        let (yh, bh) = digit_word(u64::from_le_bytes(*first), signed_zeros(neg), len - 16);
        let (ym, bm) = digit_word(u64::from_le_bytes(*mid), ZEROS, 8);
        let (yl, bl) = digit_word(u64::from_le_bytes(*low), ZEROS, 8);
        if bh | bm | bl != 0 {
            return None;
        }
        Some((swar_combine(yh) * 100_000_000 + swar_combine(ym)) * 100_000_000 + swar_combine(yl))
    } else {
        None
    }
}

/// `b` without its leading `'0'` bytes (8 at a time, then one at a time).
#[inline(never)]
fn strip_zeros(mut b: &[u8]) -> &[u8] {
    while let Some((chunk, rest)) = b.split_first_chunk::<8>() {
        if u64::from_le_bytes(*chunk) != ZEROS {
            break;
        }
        b = rest;
    }
    while let [b'0', rest @ ..] = b {
        b = rest;
    }
    b
}

/// The general path for a `MAG`-bit-wide integer (`MAG` = `|MIN|`): spaces, `+` or leading
/// zeros around a canonical number through the fast digit code, else the full grammar of `g`.
#[inline(never)]
fn general<const MAG: u64>(s: &[u8], g: Grammar) -> Result<i64, IntError> {
    // '+' and then the canonical form, as some clients write positive numbers: the fast path on
    // the rest. Both grammars take one optional sign before the digits, so this means what the
    // digits alone mean; a second sign ("+-1") is left to the code below.
    if let [b'+', rest @ ..] = s
        && rest.first() != Some(&b'-')
        && let Some(v) = fast::<MAG>(rest)
    {
        return Ok(v);
    }
    // 16+ literals without spaces, as a client writes them: a hex number or decimal digits
    // with underscores after an optional '-', straight to their SWAR code (which declines
    // anything else, such as "0x_1F", for the step-by-step code below).
    if g == Grammar::Pg16 {
        let neg = s.first() == Some(&b'-');
        let t = s.get(neg as usize..).unwrap_or_default();
        let quick = match t {
            [b'0', x, digits @ ..] if *x | 0x20 == b'x' => hex_digits(digits),
            [b'0'..=b'9', ..] => underscored_digits(t),
            _ => None,
        };
        if let Some(mag) = quick {
            return finish::<MAG>(neg, mag);
        }
    }
    // Canonical but for surrounding spaces, a '+' or leading zeros (the only way to be longer
    // than the fast path and in range): `ws* [+-]? [0-9]+ ws*` means the same in both grammars
    // (the value, or out of range), so it takes the fast digit code too.
    if let (Some(&first), Some(&last)) = (s.first(), s.last())
        && (is_space(first) || first == b'+' || is_space(last) || s.len() > 16)
    {
        let t = match trim_spaces(s) {
            [b'+', rest @ ..] if rest.first() != Some(&b'-') => rest,
            t => t,
        };
        // The sign as in the fast path, without a branch.
        let neg = t.first() == Some(&b'-');
        let mag = magnitude::<MAG>(t, neg).or_else(|| match t.get(neg as usize..)? {
            // Longer than the fast digit code takes, with leading zeros: without them.
            digits @ [b'0', ..] if digits.len() > 16 => match strip_zeros(digits) {
                [] => Some(0),
                significant => magnitude::<MAG>(significant, false),
            },
            _ => None,
        });
        if let Some(mag) = mag {
            return finish::<MAG>(neg, mag);
        }
    }
    let mut i = skip_space(s, 0);
    let neg = match s.get(i) {
        Some(b'-') => {
            i += 1;
            true
        }
        Some(b'+') => {
            i += 1;
            false
        }
        _ => false,
    };
    let (mag, end) = match g {
        Grammar::Pg15 => pg15_digits::<MAG>(s, i)?,
        Grammar::Pg16 => {
            // The rest is one hex number, or decimal digits with underscores, then spaces: the
            // value, or out of range, as step by step; computed without a loop over the bytes.
            let rest = trim_end_spaces(s.get(i..).unwrap_or_default());
            let quick = match rest {
                [b'0', x, digits @ ..] if *x | 0x20 == b'x' => hex_digits(digits),
                _ => underscored_digits(rest),
            };
            if let Some(mag) = quick {
                return finish::<MAG>(neg, mag);
            }
            // `| 0x20` folds exactly 'X' to 'x', 'O' to 'o' and 'B' to 'b' (and nothing else to
            // them).
            match (s.get(i), s.get(i + 1).map(|&c| c | 0x20)) {
                (Some(b'0'), Some(b'x')) => pg16_digits::<MAG, 16>(s, i + 2)?,
                (Some(b'0'), Some(b'o')) => pg16_digits::<MAG, 8>(s, i + 2)?,
                (Some(b'0'), Some(b'b')) => pg16_digits::<MAG, 2>(s, i + 2)?,
                _ => pg16_digits::<MAG, 10>(s, i)?,
            }
        }
    };
    if skip_space(s, end) != s.len() {
        return Err(IntError::InvalidSyntax);
    }
    finish::<MAG>(neg, mag)
}

/// `s` without trailing spaces.
#[inline(always)]
fn trim_end_spaces(mut s: &[u8]) -> &[u8] {
    while let [rest @ .., last] = s {
        if !is_space(*last) {
            break;
        }
        s = rest;
    }
    s
}

/// The value of `[0-9a-fA-F]{1,16}` (exactly: the whole of `t`), else `None`.
#[inline(always)]
fn hex_digits(t: &[u8]) -> Option<u64> {
    let m = t.len();
    if let Ok(word) = <[u8; 8]>::try_from(t) {
        hex_word(u64::from_le_bytes(word), 8)
    } else if m.wrapping_sub(1) < 8 {
        hex_word(load_upto8(t), m)
    } else if m <= 16 {
        let (first, last) = (t.first_chunk::<8>()?, t.last_chunk::<8>()?);
        Some(
            hex_word(u64::from_le_bytes(*first), m - 8)? << 32
                | hex_word(u64::from_le_bytes(*last), 8)?,
        )
    } else {
        None
    }
}

/// The value of the `n` (1..=8) low bytes of `raw` (first byte lowest) as hex digits, if they are.
#[inline(always)]
fn hex_word(raw: u64, n: usize) -> Option<u64> {
    let shift = 8 * (8usize.wrapping_sub(n) & 7);
    let nibbles = hex_nibbles(raw << shift, (0x80 * ONES) << shift)?;
    // the most significant digit is in the lowest byte: reversed, then packed two, four, eight
    // at a time
    let v = nibbles.swap_bytes();
    let v = (v | v >> 4) & 0x00FF_00FF_00FF_00FF;
    let v = (v | v >> 8) & 0x0000_FFFF_0000_FFFF;
    Some((v | v >> 16) & 0xFFFF_FFFF)
}

/// The digit values (one per byte, `'a'`/`'A'` = 10) of the bytes of `x` whose top bit is set
/// in `used`, if each of them is an ASCII hex digit (either case); the other bytes of `x`
/// must be zero, and are zero in the result.
#[inline(always)]
pub(crate) fn hex_nibbles(x: u64, used: u64) -> Option<u64> {
    // Range tests on the 7 low bits (no carry between bytes); bytes >= 0x80 are excluded at the
    // end. `| 0x20` folds 'A'..='F' to 'a'..='f' and leaves digits alone.
    let x7 = x & (0x7F * ONES);
    let lower = x7 | (0x20 * ONES);
    let digit = (x7 + 0x50 * ONES) & !(x7 + 0x46 * ONES);
    let letter = (lower + 0x1F * ONES) & !(lower + 0x19 * ONES);
    if (digit | letter) & !x & used != used {
        return None;
    }
    // the low nibble, plus 9 for a letter ('a' and 'A' are 0x_1)
    Some((x & (0x0F * ONES)) + (letter & used) / 0x80 * 9)
}

/// The value of `[0-9]+(_[0-9]+)*` (exactly: the whole of `t`), at most 16 bytes, else `None`.
///
/// The bytes are placed at the top of a `u128` (last byte highest); after the checks, `'0'` is
/// subtracted and each `'_'` byte is removed by moving the bytes below it up by one, from the
/// lowest `'_'` up (which leaves the positions of the others alone); the zero bytes that come in
/// below are leading zeros.
#[inline(always)]
fn underscored_digits(t: &[u8]) -> Option<u64> {
    // Junk after the digits is the usual reason to be here: leave at once.
    if !t.last()?.is_ascii_digit() {
        return None;
    }
    let m = t.len();
    let (lo, hi) = if m.wrapping_sub(1) < 8 {
        (0, load_upto8(t) << (8 * (8 - m)))
    } else if m <= 16 {
        let (first, last) = (t.first_chunk::<8>()?, t.last_chunk::<8>()?);
        (
            u64::from_le_bytes(*first) << (8 * (16 - m)),
            u64::from_le_bytes(*last),
        )
    } else {
        return None;
    };
    let r = (hi as u128) << 64 | lo as u128;
    let first_byte = 8 * (16 - m) as u32;
    let used = (0x80 * ONES128) << first_byte;
    // The '_' bytes exactly: the zero bytes of `r ^ '_'` (no carry between bytes).
    let z = r ^ (0x5F * ONES128);
    let underscores = !(((z & (0x7F * ONES128)) + 0x7F * ONES128) | z) & used;
    let x7 = r & (0x7F * ONES128);
    let digits = (x7 + 0x50 * ONES128) & !(x7 + 0x46 * ONES128) & !r & used;
    // Every byte a digit or '_'; no '_' after another, last or first.
    if digits | underscores != used
        || underscores & (underscores << 8 | 1 << 127 | 0x80 << first_byte) != 0
    {
        return None;
    }
    let mut v = r - (used >> 7) * 0x30;
    let mut u = underscores;
    while u != 0 {
        let at = u.trailing_zeros() - 7;
        let below = (1u128 << at) - 1;
        v = v & !(below | 0xFF << at) | (v & below) << 8;
        u &= u - 1;
    }
    Some(swar_combine(v as u64) * 100_000_000 + swar_combine((v >> 64) as u64))
}

/// PostgreSQL 15 digits from `i`: `[0-9]+`, out of range as soon as the magnitude exceeds
/// `MAG` (the server accumulates towards `MIN` with overflow checks). Returns the magnitude and
/// the index after the digits.
#[inline(always)]
fn pg15_digits<const MAG: u64>(s: &[u8], mut i: usize) -> Result<(u64, usize), IntError> {
    let first = i;
    let mut acc = 0u64;
    while let Some(&b) = s.get(i) {
        let d = b.wrapping_sub(b'0');
        if d >= 10 {
            break;
        }
        acc = match acc.checked_mul(10) {
            Some(a) if a <= MAG - d as u64 => a + d as u64,
            _ => return Err(IntError::OutOfRange),
        };
        i += 1;
    }
    if i == first {
        return Err(IntError::InvalidSyntax);
    }
    Ok((acc, i))
}

/// Digit values of every byte: `0..=9` for `'0'..='9'`, `10..=15` for `a-f` and `A-F`, 255 for
/// the rest; a byte is a digit of base `B` iff its entry is below `B`. A table, because digits and
/// letters alternate unpredictably in hex.
static DIGIT_VALUE: [u8; 256] = {
    let mut t = [255u8; 256];
    let mut i = 0;
    while i < 10 {
        t[b'0' as usize + i] = i as u8;
        i += 1;
    }
    let mut i = 0;
    while i < 6 {
        t[b'a' as usize + i] = 10 + i as u8;
        t[b'A' as usize + i] = 10 + i as u8;
        i += 1;
    }
    t
};

/// The value of `b` as a digit of `BASE`, if it is one.
#[inline(always)]
fn digit<const BASE: u64>(b: u8) -> Option<u64> {
    let d = if BASE <= 10 {
        b.wrapping_sub(b'0')
    } else {
        DIGIT_VALUE[b as usize]
    } as u64;
    (d < BASE).then_some(d)
}

/// PostgreSQL 16+ digits of `BASE` from `first` (just after the sign, or after the prefix):
/// digits with single `_` separators. Before each digit, a magnitude above `MAG / BASE` is out
/// of range. A `_` must be followed by a digit and, in decimal, must not come first. Returns the
/// magnitude and the index after the digits.
#[inline(always)]
fn pg16_digits<const MAG: u64, const BASE: u64>(
    s: &[u8],
    first: usize,
) -> Result<(u64, usize), IntError> {
    let mut i = first;
    let mut acc = 0u64;
    while let Some(&b) = s.get(i) {
        if let Some(d) = digit::<BASE>(b) {
            if acc > MAG / BASE {
                return Err(IntError::OutOfRange);
            }
            acc = acc * BASE + d;
            i += 1;
        } else if b == b'_' {
            if BASE == 10 && i == first {
                return Err(IntError::InvalidSyntax);
            }
            i += 1;
            match s.get(i) {
                Some(&n) if digit::<BASE>(n).is_some() => {}
                _ => return Err(IntError::InvalidSyntax),
            }
        } else {
            break;
        }
    }
    if i == first {
        return Err(IntError::InvalidSyntax);
    }
    Ok((acc, i))
}

#[cfg(test)]
mod tests {
    use super::Grammar::{Pg15, Pg16};
    use super::IntError::{InvalidSyntax as Syn, OutOfRange as Oor};
    use super::*;

    const BOTH: [Grammar; 2] = [Pg15, Pg16];

    fn p16(s: &str, g: Grammar) -> Result<i64, IntError> {
        parse_i16(s.as_bytes(), g).map(i64::from)
    }
    fn p32(s: &str, g: Grammar) -> Result<i64, IntError> {
        parse_i32(s.as_bytes(), g).map(i64::from)
    }
    fn p64(s: &str, g: Grammar) -> Result<i64, IntError> {
        parse_i64(s.as_bytes(), g)
    }

    /// Checks `s` in all three widths under `g`.
    #[track_caller]
    fn all(s: &str, g: Grammar, want: Result<i64, IntError>) {
        assert_eq!(p16(s, g), want, "i16 {s:?} {g:?}");
        assert_eq!(p32(s, g), want, "i32 {s:?} {g:?}");
        assert_eq!(p64(s, g), want, "i64 {s:?} {g:?}");
    }

    #[track_caller]
    fn both(s: &str, want: Result<i64, IntError>) {
        for g in BOTH {
            all(s, g, want);
        }
    }

    /// `load_upto8` + `digit_word` + `swar_combine` on `b` (1..=8 bytes).
    fn upto8_digits(b: &[u8]) -> Option<u64> {
        let (y, bad) = digit_word(load_upto8(b), ZEROS, b.len());
        (bad == 0).then(|| swar_combine(y))
    }

    /// `right_digits` + `swar_combine` on `b` (1..=8 bytes).
    fn right_value(b: &[u8], neg: bool) -> Option<u64> {
        let (y, bad) = right_digits(b, neg);
        (bad == 0).then(|| swar_combine(y))
    }

    /// The value of `b` as decimal digits, by the standard library.
    fn std_value(b: &[u8]) -> Option<u64> {
        std::str::from_utf8(b)
            .ok()?
            .parse()
            .ok()
            .filter(|_| b.iter().all(u8::is_ascii_digit))
    }

    #[test]
    fn swar_matches_scalar() {
        for s in [
            "00000000", "12345678", "99999999", "10000000", "87654321", "00000001",
        ] {
            let b: &[u8; 8] = s.as_bytes().try_into().unwrap();
            for n in 1..=8 {
                for part in [&b[8 - n..], &b[..n]] {
                    assert_eq!(upto8_digits(part), std_value(part));
                    assert_eq!(right_value(part, false), std_value(part));
                }
            }
        }
        // every byte value in every position of every length, with and without a '-' first
        for n in 1..=8usize {
            for pos in 0..n {
                for x in 0..=255u8 {
                    let mut b = *b"31415926";
                    b[pos] = x;
                    let want = std_value(&b[..n]);
                    assert_eq!(load_upto8(&b[..n]), {
                        let mut w = [0u8; 8];
                        w[..n].copy_from_slice(&b[..n]);
                        u64::from_le_bytes(w)
                    });
                    assert_eq!(upto8_digits(&b[..n]), want, "{n} {pos} {x}");
                    assert_eq!(right_value(&b[..n], false), want, "{n} {pos} {x}");
                    let mut m = b;
                    m[0] = b'-';
                    assert_eq!(
                        right_value(&m[..n], true),
                        std_value(&m[1..n]),
                        "-{n} {pos} {x}"
                    );
                }
            }
        }
        // two bad bytes: borrows and carries between them must not hide both
        for x in 0..=255u8 {
            for y in 0..=255u8 {
                let ok = x.is_ascii_digit() && y.is_ascii_digit();
                let b = [b'5', x, y, b'5', b'5', b'5', b'5', b'5'];
                for n in 3..=8 {
                    assert_eq!(upto8_digits(&b[..n]).is_some(), ok, "{x} {y}");
                    assert_eq!(right_value(&b[..n], false).is_some(), ok, "{x} {y}");
                }
                let b = [x, y, b'5', b'5', b'5', b'5', b'5', b'5'];
                for n in 2..=8 {
                    assert_eq!(upto8_digits(&b[..n]).is_some(), ok, "{x} {y}");
                    assert_eq!(right_value(&b[..n], false).is_some(), ok, "{x} {y}");
                }
                let b = [b'-', x, y, b'5', b'5', b'5', b'5', b'5'];
                for n in 3..=8 {
                    assert_eq!(right_value(&b[..n], true).is_some(), ok, "-{x} {y}");
                }
            }
        }
    }

    #[test]
    fn hex_and_underscore_words() {
        let hex = |b: &[u8]| -> Option<u64> {
            let t = std::str::from_utf8(b).ok()?;
            if t.is_empty() || t.len() > 16 || !t.bytes().all(|c| c.is_ascii_hexdigit()) {
                return None;
            }
            u64::from_str_radix(t, 16).ok()
        };
        let underscored = |b: &[u8]| -> Option<u64> {
            if b.len() > 16 || b.first() == Some(&b'_') || b.last() == Some(&b'_') {
                return None;
            }
            if b.windows(2).any(|w| w == b"__") {
                return None;
            }
            let digits: Vec<u8> = b.iter().copied().filter(|&c| c != b'_').collect();
            if digits.is_empty()
                || digits.len() + b.iter().filter(|&&c| c == b'_').count() != b.len()
            {
                return None;
            }
            std_value(&digits)
        };
        // every byte value in every position of every length
        for n in 0..=17usize {
            for pos in 0..n.max(1) {
                for x in 0..=255u8 {
                    let mut b = *b"7fA9c0E1d2B3f4a5F";
                    if pos < n {
                        b[pos] = x;
                    }
                    assert_eq!(hex_digits(&b[..n]), hex(&b[..n]), "{n} {pos} {x}");
                    let mut d = *b"31415926535897932";
                    if pos < n {
                        d[pos] = x;
                    }
                    assert_eq!(
                        underscored_digits(&d[..n]),
                        underscored(&d[..n]),
                        "{n} {pos} {x}"
                    );
                }
            }
        }
        // all strings of up to 7 bytes over digits, '_' and junk, alone and next to longer ones
        let alphabet = b"05_9x";
        for n in 0..=7u32 {
            for mut k in 0..5usize.pow(n) {
                let mut b = Vec::new();
                for _ in 0..n {
                    b.push(alphabet[k % 5]);
                    k /= 5;
                }
                assert_eq!(
                    underscored_digits(&b),
                    underscored(&b),
                    "{:?}",
                    String::from_utf8_lossy(&b)
                );
                for pad in [&b"1234567_8"[..], b"123456789", b"_1"] {
                    let mut long = b.clone();
                    long.extend_from_slice(pad);
                    assert_eq!(
                        underscored_digits(&long),
                        underscored(&long),
                        "{:?}",
                        String::from_utf8_lossy(&long)
                    );
                    let mut long2 = pad.to_vec();
                    long2.extend_from_slice(&b);
                    assert_eq!(
                        underscored_digits(&long2),
                        underscored(&long2),
                        "{:?}",
                        String::from_utf8_lossy(&long2)
                    );
                }
            }
        }
        assert_eq!(underscored_digits(b"1_234_567_890_12"), Some(123456789012));
        assert_eq!(underscored_digits(b"9_9_9_9_9_9_9_9_"), None);
        assert_eq!(underscored_digits(b"9_9_9_9_9_9_9_9_9"), None); // 17 bytes
        assert_eq!(hex_digits(b"ffffffffFFFFFFFF"), Some(u64::MAX));
    }

    #[test]
    fn boundaries_i16() {
        for g in BOTH {
            assert_eq!(p16("32767", g), Ok(32767));
            assert_eq!(p16("-32768", g), Ok(-32768));
            assert_eq!(p16("32768", g), Err(Oor));
            assert_eq!(p16("-32769", g), Err(Oor));
            assert_eq!(p16("99999", g), Err(Oor));
            assert_eq!(p16("100000", g), Err(Oor));
            assert_eq!(p16("-100000", g), Err(Oor));
            assert_eq!(p16("+32767", g), Ok(32767));
            assert_eq!(p16("+32768", g), Err(Oor));
            assert_eq!(p16(" -32768 ", g), Ok(-32768));
            assert_eq!(p16("000032767", g), Ok(32767));
            assert_eq!(p16("-000032768", g), Ok(-32768));
            assert_eq!(p16("-000032769", g), Err(Oor));
        }
    }

    #[test]
    fn boundaries_i32() {
        for g in BOTH {
            assert_eq!(p32("2147483647", g), Ok(2147483647));
            assert_eq!(p32("-2147483648", g), Ok(-2147483648));
            assert_eq!(p32("2147483648", g), Err(Oor));
            assert_eq!(p32("-2147483649", g), Err(Oor));
            assert_eq!(p32("4294967296", g), Err(Oor));
            assert_eq!(p32("9999999999", g), Err(Oor));
            assert_eq!(p32("-9999999999", g), Err(Oor));
            assert_eq!(p32("10000000000", g), Err(Oor));
            assert_eq!(p32("99999999999999999999", g), Err(Oor));
            assert_eq!(p32("+2147483647", g), Ok(2147483647));
            assert_eq!(p32(" 2147483648", g), Err(Oor));
            assert_eq!(p32("00000000002147483647", g), Ok(2147483647));
            assert_eq!(p32("-00000000002147483648", g), Ok(-2147483648));
            assert_eq!(p32("-00000000002147483649", g), Err(Oor));
        }
    }

    #[test]
    fn boundaries_i64() {
        for g in BOTH {
            assert_eq!(p64("9223372036854775807", g), Ok(i64::MAX));
            assert_eq!(p64("-9223372036854775808", g), Ok(i64::MIN));
            assert_eq!(p64("9223372036854775808", g), Err(Oor));
            assert_eq!(p64("-9223372036854775809", g), Err(Oor));
            assert_eq!(p64("9999999999999999999", g), Err(Oor));
            assert_eq!(p64("-9999999999999999999", g), Err(Oor));
            assert_eq!(p64("18446744073709551615", g), Err(Oor));
            assert_eq!(p64("18446744073709551616", g), Err(Oor));
            assert_eq!(p64("99999999999999999999", g), Err(Oor));
            assert_eq!(p64("184467440737095516160", g), Err(Oor));
            assert_eq!(p64(&"9".repeat(200), g), Err(Oor));
            assert_eq!(p64("+9223372036854775807", g), Ok(i64::MAX));
            assert_eq!(p64("\t-9223372036854775808\n", g), Ok(i64::MIN));
            assert_eq!(p64("0009223372036854775807", g), Ok(i64::MAX));
            assert_eq!(p64("-0009223372036854775808", g), Ok(i64::MIN));
        }
    }

    #[test]
    fn zeros_and_leading_zeros() {
        for s in [
            "0",
            "-0",
            "+0",
            "00",
            "-00",
            "000000000000000000000000000000000000000",
        ] {
            both(s, Ok(0));
        }
        both("007", Ok(7));
        both("-007", Ok(-7));
        both(&format!("{}1", "0".repeat(100)), Ok(1));
        both(&format!("-{}1", "0".repeat(100)), Ok(-1));
        both(&format!("  {}42  ", "0".repeat(30)), Ok(42));
        // 0 followed by more digits is never octal
        both("010", Ok(10));
        both("08", Ok(8));
    }

    #[test]
    fn whitespace() {
        for ws in [" ", "\t", "\n", "\u{b}", "\u{c}", "\r"] {
            both(&format!("{ws}12"), Ok(12));
            both(&format!("12{ws}"), Ok(12));
            both(&format!("{ws}{ws}-12{ws}{ws}"), Ok(-12));
            both(&format!("{ws}+12{ws}"), Ok(12));
            both(ws, Err(Syn));
            both(&format!("{ws}-"), Err(Syn));
            both(&format!("-{ws}12"), Err(Syn));
            both(&format!("+{ws}12"), Err(Syn));
            both(&format!("1{ws}2"), Err(Syn));
        }
        both(" \t\n\u{b}\u{c}\r7 \t\n\u{b}\u{c}\r", Ok(7));
        both("   ", Err(Syn));
        // not spaces for the server: NUL-free non-isspace bytes
        for s in [
            "\u{1c}1",
            "1\u{1c}",
            "\u{85}1",
            "\u{a0}1",
            "1\u{a0}",
            "\u{2003}1",
            "\u{feff}1",
        ] {
            both(s, Err(Syn));
        }
        assert_eq!(parse_i32(b"\xa01", Pg16), Err(Syn));
        assert_eq!(parse_i32(b"1\x85", Pg15), Err(Syn));
        assert_eq!(parse_i32(b"1\x00", Pg15), Err(Syn));
    }

    #[test]
    fn signs() {
        both("", Err(Syn));
        both("-", Err(Syn));
        both("+", Err(Syn));
        both("--1", Err(Syn));
        both("+-1", Err(Syn));
        both("-+1", Err(Syn));
        both("++1", Err(Syn));
        both("1-", Err(Syn));
        both("1+", Err(Syn));
        both("- ", Err(Syn));
        both(" - 1", Err(Syn));
        both("+5", Ok(5));
        both("-5", Ok(-5));
        both("\u{2212}5", Err(Syn)); // U+2212 MINUS SIGN
    }

    #[test]
    fn junk() {
        for s in [
            "1 2", "1x", "x1", "1.0", "1.", ".1", "1e3", "1e", "abc", "12abc", "١٢", "１２",
            "1\u{e9}", "\u{e9}1", "0x", "1,000", "(1)", "'1'", "1/", "1:", "/1", ":1", "inf",
            "NaN", "0.0",
        ] {
            all(s, Pg15, Err(Syn));
            all(s, Pg16, Err(Syn));
        }
    }

    #[test]
    fn pg15_has_no_prefix_or_underscore() {
        for s in [
            "0x10", "0X10", "0o10", "0O10", "0b10", "0B10", "1_000", "0x_1", "_1", "1_", "0x",
        ] {
            all(s, Pg15, Err(Syn));
        }
    }

    #[test]
    fn pg16_prefixes() {
        for (s, v) in [
            ("0x10", 16),
            ("0X10", 16),
            ("0xff", 255),
            ("0XFF", 255),
            ("0xAbC", 0xabc),
            ("0o17", 15),
            ("0O17", 15),
            ("0b101", 5),
            ("0B101", 5),
            ("-0x10", -16),
            ("+0x10", 16),
            ("  0x10  ", 16),
            ("\t-0b1\n", -1),
            ("0x0", 0),
            ("-0x0", 0),
            ("0x0000000000000000000000000000000001", 1),
            ("0o0", 0),
            ("0b0", 0),
            ("0x_1F", 31),
            ("0o_7", 7),
            ("0b_1", 1),
            ("0x1_F", 31),
            ("+0b1_0", 2),
            ("-0o7_7", -63),
        ] {
            all(s, Pg16, Ok(v));
        }
        for s in [
            "0x", "0X", "0o", "0b", "-0x", "+0b", "0x ", " 0o ", "0x_", "0o_", "0b_", "0x__1",
            "0x1__F", "0x1_", "0xg", "0xG", "0o8", "0o9", "0b2", "0ba", "0x1g", "0o18", "0b12",
            "0x-1", "0x+1", "0 x1", "00x1", "1x1", "0xx1", "x10", "0h10", "0d10", "0x1.0", "0x 1",
            "0b1 1", "0x1 _",
        ] {
            all(s, Pg16, Err(Syn));
        }
    }

    #[test]
    fn pg16_prefix_boundaries() {
        let g = Pg16;
        assert_eq!(p16("0x7FFF", g), Ok(32767));
        assert_eq!(p16("0x8000", g), Err(Oor));
        assert_eq!(p16("-0x8000", g), Ok(-32768));
        assert_eq!(p16("-0x8001", g), Err(Oor));
        assert_eq!(p16("0xFFFF", g), Err(Oor));
        assert_eq!(p16("0x10000", g), Err(Oor));
        assert_eq!(p16("0o77777", g), Ok(32767));
        assert_eq!(p16("-0o100000", g), Ok(-32768));
        assert_eq!(p16("0o100000", g), Err(Oor));
        assert_eq!(p16("0b111111111111111", g), Ok(32767));
        assert_eq!(p16("-0b1000000000000000", g), Ok(-32768));
        assert_eq!(p16("0b1000000000000000", g), Err(Oor));
        assert_eq!(p32("0x7FFFFFFF", g), Ok(i32::MAX as i64));
        assert_eq!(p32("-0x80000000", g), Ok(i32::MIN as i64));
        assert_eq!(p32("0x80000000", g), Err(Oor));
        assert_eq!(p32("-0x80000001", g), Err(Oor));
        assert_eq!(p32("0xFFFFFFFF", g), Err(Oor));
        assert_eq!(p32("0o17777777777", g), Ok(i32::MAX as i64));
        assert_eq!(p32("-0o20000000000", g), Ok(i32::MIN as i64));
        assert_eq!(
            p32("-0b10000000000000000000000000000000", g),
            Ok(i32::MIN as i64)
        );
        assert_eq!(p64("0x7FFFFFFFFFFFFFFF", g), Ok(i64::MAX));
        assert_eq!(p64("-0x8000000000000000", g), Ok(i64::MIN));
        assert_eq!(p64("0x8000000000000000", g), Err(Oor));
        assert_eq!(p64("-0x8000000000000001", g), Err(Oor));
        assert_eq!(p64("0xFFFFFFFFFFFFFFFF", g), Err(Oor));
        assert_eq!(p64("0x10000000000000000", g), Err(Oor));
        assert_eq!(p64("0o777777777777777777777", g), Ok(i64::MAX));
        assert_eq!(p64("-0o1000000000000000000000", g), Ok(i64::MIN));
        assert_eq!(p64("-0x8000_0000_0000_0000", g), Ok(i64::MIN));
        assert_eq!(p64(&format!("0b{}", "1".repeat(63)), g), Ok(i64::MAX));
        assert_eq!(p64(&format!("-0b1{}", "0".repeat(63)), g), Ok(i64::MIN));
        assert_eq!(p64(&format!("0b1{}", "0".repeat(63)), g), Err(Oor));
        assert_eq!(p64(&format!("0x{}", "F".repeat(40)), g), Err(Oor));
    }

    #[test]
    fn pg16_underscores_decimal() {
        for (s, v) in [
            ("1_000", 1000),
            ("1_2_3", 123),
            ("0_1", 1),
            ("-1_0", -10),
            ("+1_0", 10),
            (" 1_0 ", 10),
            ("0_0", 0),
        ] {
            all(s, Pg16, Ok(v));
            all(s, Pg15, Err(Syn));
        }
        for s in [
            "_", "_1", "1_", "1__2", "-_1", "+_1", " _1", "1_ ", "1_x", "1_-", "__1", "1_2_",
            "1_.", "_", "-_", "1 _2", "1_0x1",
        ] {
            all(s, Pg16, Err(Syn));
            all(s, Pg15, Err(Syn));
        }
        assert_eq!(p32("2_147_483_647", Pg16), Ok(2147483647));
        assert_eq!(p32("-2_147_483_648", Pg16), Ok(-2147483648));
        assert_eq!(p32("2_147_483_648", Pg16), Err(Oor));
    }

    #[test]
    fn overflow_then_junk_order() {
        // PG15: exact, the digit run's magnitude exceeds |MIN| before the junk is seen.
        assert_eq!(p16("32768x", Pg15), Err(Syn));
        assert_eq!(p16("32769x", Pg15), Err(Oor));
        assert_eq!(p16("-32768x", Pg15), Err(Syn));
        assert_eq!(p16("-32769x", Pg15), Err(Oor));
        assert_eq!(p32("2147483648x", Pg15), Err(Syn));
        assert_eq!(p32("2147483649x", Pg15), Err(Oor));
        assert_eq!(p32("99999999999 x", Pg15), Err(Oor));
        assert_eq!(p32("2147483648 ", Pg15), Err(Oor));
        assert_eq!(p64("9223372036854775808x", Pg15), Err(Syn));
        assert_eq!(p64("9223372036854775809x", Pg15), Err(Oor));
        assert_eq!(p64("-9223372036854775809 x", Pg15), Err(Oor));
        // PG16: the check `acc > |MIN| / base` comes before each digit.
        assert_eq!(p16("32769x", Pg16), Err(Syn));
        assert_eq!(p16("32770x", Pg16), Err(Oor));
        assert_eq!(p16("65535x", Pg16), Err(Oor));
        assert_eq!(p16("-32769x", Pg16), Err(Syn));
        assert_eq!(p32("2147483649x", Pg16), Err(Syn));
        assert_eq!(p32("2147483650x", Pg16), Err(Oor));
        assert_eq!(p32("-2147483649x", Pg16), Err(Syn));
        assert_eq!(p32("99999999999 x", Pg16), Err(Oor));
        assert_eq!(p64("9223372036854775809x", Pg16), Err(Syn));
        assert_eq!(p64("9223372036854775810x", Pg16), Err(Oor));
        assert_eq!(p64("18446744073709551615x", Pg16), Err(Oor));
        // ... and applies to every base.
        assert_eq!(p16("0x800Fx", Pg16), Err(Syn));
        assert_eq!(p16("0x8010x", Pg16), Err(Oor));
        assert_eq!(p16("0o100007x", Pg16), Err(Syn));
        assert_eq!(p16("0o100010x", Pg16), Err(Oor));
        assert_eq!(p16("0b10000000000000001x", Pg16), Err(Oor));
        assert_eq!(p16("0b1000000000000001x", Pg16), Err(Syn));
        assert_eq!(p32("0x8000000Fz", Pg16), Err(Syn));
        assert_eq!(p32("0x80000010z", Pg16), Err(Oor));
        assert_eq!(p64("0x800000000000000Fz", Pg16), Err(Syn));
        assert_eq!(p64("0x8000000000000010z", Pg16), Err(Oor));
        // bad underscores before the overflowing digit win, after it lose
        assert_eq!(p16("3__99999", Pg16), Err(Syn));
        assert_eq!(p16("99999__", Pg16), Err(Oor));
        assert_eq!(p16("9999_9_", Pg16), Err(Oor));
        assert_eq!(p16("3276_9_", Pg16), Err(Syn));
        assert_eq!(p16("0x_FFFFF_", Pg16), Err(Oor));
        assert_eq!(p16("0x__FFFFF", Pg16), Err(Syn));
        // and trailing spaces do not matter
        assert_eq!(p16("32768   ", Pg16), Err(Oor));
        assert_eq!(p16("   32767   ", Pg16), Ok(32767));
    }

    #[test]
    fn pg16_hex_letters_only_after_hex_prefix() {
        for s in ["1f", "f", "A", "0a", "0o1a", "0b1a", "ff"] {
            all(s, Pg16, Err(Syn));
        }
    }

    #[test]
    fn non_ascii() {
        for b in 0x80..=0xFFu8 {
            for bytes in [vec![b], vec![b, b'1'], vec![b'1', b], vec![b'-', b, b'1']] {
                for g in BOTH {
                    assert_eq!(parse_i16(&bytes, g), Err(Syn));
                    assert_eq!(parse_i32(&bytes, g), Err(Syn));
                    assert_eq!(parse_i64(&bytes, g), Err(Syn));
                }
            }
        }
    }

    #[test]
    fn fast_path_declines_exactly_non_canonical() {
        for s in [
            "", "-", "+1", " 1", "1 ", "1_0", "0x1", "1x", "--1", "-+1", "1-",
        ] {
            assert!(fast::<MAG32>(s.as_bytes()).is_none(), "{s:?}");
        }
        assert!(fast::<MAG32>(b"00000000000x").is_none());
        assert!(fast::<MAG32>(b"00000000000_1").is_none());
        assert!(fast::<MAG32>(b"12345678-01").is_none());
        assert!(fast::<MAG32>(b"00000000000000001").is_none()); // 17 bytes: longer than 16
        // out of range: the general path says so
        assert!(fast::<MAG32>(b"12345678901").is_none());
        assert!(fast::<MAG32>(b"2147483648").is_none());
        assert!(fast::<MAG32>(b"9999999999999999").is_none());
        assert!(fast::<MAG64>(b"-9223372036854775809").is_none());
        assert!(fast::<MAG16>(b"-32769").is_none());
        assert_eq!(fast::<MAG32>(b"00000000001"), Some(1));
        assert_eq!(fast::<MAG32>(b"-000000000000000"), Some(0));
        assert_eq!(fast::<MAG32>(b"-002147483648"), Some(i32::MIN as i64));
        assert_eq!(fast::<MAG32>(b"-2147483648"), Some(-2147483648));
        assert_eq!(fast::<MAG32>(b"2147483647"), Some(2147483647));
        assert_eq!(
            fast::<MAG64>(b"1234567890123456789"),
            Some(1234567890123456789)
        );
        assert_eq!(fast::<MAG64>(b"-9223372036854775808"), Some(i64::MIN));
        assert_eq!(fast::<MAG64>(b"99999999999999999999"), None); // 20 digits
        assert_eq!(fast::<MAG64>(b"12345678x0123456789"), None);
        assert_eq!(fast::<MAG64>(b"1234567890123456x89"), None);
        assert_eq!(fast::<MAG64>(b"-234567890123456-89"), None);
        assert_eq!(fast::<MAG16>(b"-0"), Some(0));
        assert_eq!(fast::<MAG16>(b"-32768"), Some(-32768));
        assert_eq!(fast::<MAG16>(b"-"), None);
    }

    #[test]
    fn every_length_every_width() {
        // canonical numbers of every length through both paths (fast up to D, general beyond)
        for len in 1..=25usize {
            let nines = "9".repeat(len);
            let ones = "1".repeat(len);
            for g in BOTH {
                for s in [&nines, &ones] {
                    let v: i128 = s.parse().unwrap();
                    let want = |lo: i128, hi: i128| {
                        if (lo..=hi).contains(&v) {
                            Ok(v as i64)
                        } else {
                            Err(Oor)
                        }
                    };
                    assert_eq!(p16(s, g), want(i16::MIN.into(), i16::MAX.into()), "{s}");
                    assert_eq!(p32(s, g), want(i32::MIN.into(), i32::MAX.into()), "{s}");
                    assert_eq!(p64(s, g), want(i64::MIN.into(), i64::MAX.into()), "{s}");
                    let m = format!("-{s}");
                    let want = |lo: i128| if -v >= lo { Ok(-v as i64) } else { Err(Oor) };
                    assert_eq!(p16(&m, g), want(i16::MIN.into()), "{m}");
                    assert_eq!(p32(&m, g), want(i32::MIN.into()), "{m}");
                    assert_eq!(p64(&m, g), want(i64::MIN.into()), "{m}");
                }
            }
        }
    }

    #[test]
    fn round_trip_samples() {
        for g in BOTH {
            for v in (i16::MIN..=i16::MAX).step_by(7) {
                assert_eq!(parse_i16(v.to_string().as_bytes(), g), Ok(v));
            }
            for v in [
                i32::MIN,
                i32::MIN + 1,
                -1,
                0,
                1,
                12345678,
                123456789,
                i32::MAX - 1,
                i32::MAX,
            ] {
                assert_eq!(parse_i32(v.to_string().as_bytes(), g), Ok(v));
            }
            let mut x: i64 = 1;
            for _ in 0..63 {
                for v in [x, -x, x - 1, 1 - x, x.wrapping_mul(3)] {
                    assert_eq!(parse_i64(v.to_string().as_bytes(), g), Ok(v));
                }
                x = x.wrapping_mul(2);
            }
            assert_eq!(parse_i64(i64::MIN.to_string().as_bytes(), g), Ok(i64::MIN));
        }
    }
}
