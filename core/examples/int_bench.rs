//! Micro-benchmark of `fastcopy_core::int`: ns per parsed value, per input class and width.
//!
//! ```text
//! cargo run --release -p fastcopy-core --example int_bench [-- N_VALUES [WIDTH [CLASS]]]
//! ```
//!
//! (`WIDTH` and `CLASS` are substrings that select rows, e.g. `i32 canonical`.) Rows are input
//! classes: canonical decimals of mixed lengths (digit count uniform over the width's range, a
//! quarter negative), of 1 to 4 digits, uniform in `0..=999` (mostly 3 digits, as the in-database
//! "1-3 digits" class) and in `-999..=999`, of the width's maximum length; leading and trailing
//! spaces; a '+' sign; underscores; hex; 20 leading zeros; junk after the digits. Columns:
//!
//! - `pg16`, `pg15`: the library, `parse_iNN(s, Grammar::Pg16 / Pg15)`, inlined as in the loader.
//! - `scalar`, `swar-pad`, `swar4`, `branchy`: other canonical fast paths (a digit-at-a-time loop;
//!   8-digit SWAR with the short tail copied into a '0'-padded buffer; 4-digit SWAR chunks and a
//!   scalar tail; the library's SWAR with a branch on the length, below or from 4 bytes, and the
//!   loads after the sign, as it was before its fast path became branch-free), each falling back
//!   to the library for non-canonical input, so that the library's choice is measured rather
//!   than assumed. Only the canonical rows tell them apart.
//! - `pg-style`: a stand-in for the server's `pg_strtointNN_safe`, written here: the same
//!   algorithm (a '-'? digit loop with an overflow test per digit over a NUL-terminated string,
//!   restarting in a general loop otherwise), out of line like a call through fmgr. It is only an
//!   estimate: the comparison against the server itself is done elsewhere.
//! - `harness`: the loop without parsing (the field's length as the value), the floor.
//! - `style/pg16`: `pg-style` time over `pg16` time.
//!
//! The fields (default 65536, about 1 MB, so that caches do not decide) are laid out as one
//! buffer of NUL-terminated fields, like a COPY buffer. Each pass is shaped like the loops of
//! `fastcopy.bench_int_parser` (src/bench.rs): a `Vec` of field slices (for `pg-style`, of
//! pointers to the NUL-terminated fields), each slice through `black_box`, the results summed. The
//! shape matters: the loop overlaps consecutive fields only as far as the core holds their
//! instructions, so latency counts along with instruction count and mispredictions. Each cell is
//! the best of 41 passes, the implementations interleaved so that a burst of noise on a shared
//! machine hits all alike. Every implementation's checksum must match the library's.

use fastcopy_core::int::{Grammar, IntError, parse_i16, parse_i32, parse_i64};
use std::hint::black_box;
use std::time::Instant;

// ---------------------------------------------------------------- data

struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        // xorshift64*
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

/// A random magnitude with a uniformly chosen number of digits in `1..=max_digits`, at most `max`.
fn mixed_len(r: &mut Rng, max_digits: u32, max: u64) -> u64 {
    let d = 1 + r.below(max_digits as u64) as u32;
    let lo = if d == 1 { 0 } else { 10u64.pow(d - 1) };
    let hi = 10u64.saturating_pow(d).min(max.saturating_add(1));
    lo + r.below(hi - lo)
}

fn signed(r: &mut Rng, mag: u64) -> String {
    if mag != 0 && r.below(4) == 0 {
        format!("-{mag}")
    } else {
        mag.to_string()
    }
}

fn with_underscores(digits: &str) -> String {
    let mut out = String::new();
    let n = digits.len();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (n - i).is_multiple_of(3) {
            out.push('_');
        }
        out.push(c);
    }
    out
}

#[derive(Clone, Copy, PartialEq)]
enum Width {
    W16,
    W32,
    W64,
}

impl Width {
    fn digits(self) -> u32 {
        match self {
            Width::W16 => 5,
            Width::W32 => 10,
            Width::W64 => 19,
        }
    }
    fn max(self) -> u64 {
        match self {
            Width::W16 => i16::MAX as u64,
            Width::W32 => i32::MAX as u64,
            Width::W64 => i64::MAX as u64,
        }
    }
    fn name(self) -> &'static str {
        match self {
            Width::W16 => "i16",
            Width::W32 => "i32",
            Width::W64 => "i64",
        }
    }
}

const CLASSES: [&str; 11] = [
    "canonical mixed-len",
    "canonical 1-4 digits",
    "canonical 0..=999",
    "canonical -999..=999",
    "canonical max-len",
    "leading/trailing sp",
    "'+' sign",
    "underscores (pg16)",
    "hex 0x (pg16)",
    "20 leading zeros",
    "junk (invalid)",
];

fn field(class: usize, w: Width, r: &mut Rng) -> String {
    let mag = mixed_len(r, w.digits(), w.max());
    match class {
        0 => signed(r, mag),
        1 => {
            let m = mixed_len(r, 4, w.max());
            signed(r, m)
        }
        2 => r.below(1000).to_string(),
        3 => (r.below(1999) as i64 - 999).to_string(),
        4 => {
            let lo = 10u64.pow(w.digits() - 1);
            let m = lo + r.below(w.max() - lo);
            signed(r, m)
        }
        5 => format!("  {}  ", signed(r, mag)),
        6 => format!("+{mag}"),
        7 => {
            let s = with_underscores(&mag.to_string());
            if r.below(4) == 0 { format!("-{s}") } else { s }
        }
        8 => format!("0x{mag:X}"),
        9 => format!("{}{}", "0".repeat(20), mag),
        10 => format!("{mag}x"),
        _ => unreachable!(),
    }
}

struct Data {
    buf: Vec<u8>,
    fields: Vec<(usize, usize)>,
}

fn data(class: usize, w: Width, n: usize, seed: u64) -> Data {
    let mut r = Rng(seed | 1);
    let mut buf = Vec::new();
    let mut fields = Vec::with_capacity(n);
    for _ in 0..n {
        let s = field(class, w, &mut r);
        fields.push((buf.len(), s.len()));
        buf.extend_from_slice(s.as_bytes());
        buf.push(0);
    }
    Data { buf, fields }
}

/// The fields of a [`Data`] as the timed loops see them: slices, and the same from their start to
/// the end of the buffer (for the NUL-terminated `pg-style`).
struct Views<'a> {
    fields: Vec<&'a [u8]>,
    tails: Vec<&'a [u8]>,
}

fn views(d: &Data) -> Views<'_> {
    Views {
        fields: d.fields.iter().map(|&(a, n)| &d.buf[a..a + n]).collect(),
        tails: d.fields.iter().map(|&(a, _)| &d.buf[a..]).collect(),
    }
}

// ---------------------------------------------------------------- alternative fast paths

/// Canonical `-?[0-9]{1,D}` only, one digit per step.
#[inline(always)]
fn alt_scalar<const D: usize>(s: &[u8]) -> Option<(bool, u64)> {
    let (neg, digits) = match s {
        [b'-', rest @ ..] => (true, rest),
        _ => (false, s),
    };
    if digits.is_empty() || digits.len() > D {
        return None;
    }
    let mut acc = 0u64;
    for &b in digits {
        let d = b.wrapping_sub(b'0');
        if d >= 10 {
            return None;
        }
        acc = acc * 10 + d as u64;
    }
    Some((neg, acc))
}

#[inline(always)]
fn all_digits8(v: u64) -> bool {
    const HI: u64 = 0xF0F0_F0F0_F0F0_F0F0;
    (v & HI) | ((v.wrapping_add(0x0606_0606_0606_0606) & HI) >> 4) == 0x3333_3333_3333_3333
}

#[inline(always)]
fn value8(v: u64) -> u64 {
    let v = v - 0x3030_3030_3030_3030;
    let v = v.wrapping_mul(10).wrapping_add(v >> 8);
    let a = (v & 0x0000_00FF_0000_00FF).wrapping_mul(100 + (1_000_000 << 32));
    let b = ((v >> 16) & 0x0000_00FF_0000_00FF).wrapping_mul(1 + (10_000 << 32));
    a.wrapping_add(b) >> 32
}

/// 8-digit SWAR chunks, and the short tail left-padded with '0' to 8 bytes for one more SWAR.
#[inline(always)]
fn alt_swar_pad<const D: usize>(s: &[u8]) -> Option<(bool, u64)> {
    let (neg, digits) = match s {
        [b'-', rest @ ..] => (true, rest),
        _ => (false, s),
    };
    if digits.is_empty() || digits.len() > D {
        return None;
    }
    let mut acc = 0u64;
    let mut rest = digits;
    while let Some((chunk, tail)) = rest.split_first_chunk::<8>() {
        let v = u64::from_le_bytes(*chunk);
        if !all_digits8(v) {
            return None;
        }
        acc = acc * 100_000_000 + value8(v);
        rest = tail;
    }
    if !rest.is_empty() {
        let mut b = [b'0'; 8];
        b[8 - rest.len()..].copy_from_slice(rest);
        let v = u64::from_le_bytes(b);
        if !all_digits8(v) {
            return None;
        }
        acc = acc * 10u64.pow(rest.len() as u32) + value8(v);
    }
    Some((neg, acc))
}

#[inline(always)]
fn all_digits4(v: u32) -> bool {
    const HI: u32 = 0xF0F0_F0F0;
    (v & HI) | ((v.wrapping_add(0x0606_0606) & HI) >> 4) == 0x3333_3333
}

#[inline(always)]
fn value4(v: u32) -> u64 {
    let v = v - 0x3030_3030;
    let v = v.wrapping_mul(10).wrapping_add(v >> 8); // lanes: d0d1 in byte 0, d2d3 in byte 2
    ((v & 0xFF) * 100 + ((v >> 16) & 0xFF)) as u64
}

/// 4-digit SWAR chunks (u32) then a scalar tail.
#[inline(always)]
fn alt_swar4<const D: usize>(s: &[u8]) -> Option<(bool, u64)> {
    let (neg, digits) = match s {
        [b'-', rest @ ..] => (true, rest),
        _ => (false, s),
    };
    if digits.is_empty() || digits.len() > D {
        return None;
    }
    let mut acc = 0u64;
    let mut rest = digits;
    while let Some((chunk, tail)) = rest.split_first_chunk::<4>() {
        let v = u32::from_le_bytes(*chunk);
        if !all_digits4(v) {
            return None;
        }
        acc = acc * 10_000 + value4(v);
        rest = tail;
    }
    for &b in rest {
        let d = b.wrapping_sub(b'0');
        if d >= 10 {
            return None;
        }
        acc = acc * 10 + d as u64;
    }
    Some((neg, acc))
}

/// 1 to 8 bytes, first byte lowest, zeros above; a branch on the length: from 4 bytes the first
/// and the last 4 (overlapping), below that the first, middle and last byte.
#[inline(always)]
fn load_branchy(b: &[u8]) -> u64 {
    let n = b.len();
    match (b.first_chunk::<4>(), b.last_chunk::<4>()) {
        (Some(lo), Some(hi)) => {
            u32::from_le_bytes(*lo) as u64 | (u32::from_le_bytes(*hi) as u64) << (8 * (n - 4))
        }
        _ => {
            let at = |i: usize| b.get(i).copied().unwrap_or(0) as u64;
            at(0)
                | at(n / 2) << (8 * (n / 2))
                | at(n.wrapping_sub(1)) << (8 * (n.wrapping_sub(1) & 7))
        }
    }
}

/// 1 to 8 digits, as one '0'-padded 8-byte SWAR word.
#[inline(always)]
fn upto8_branchy(b: &[u8]) -> Option<u64> {
    let n = b.len() as u32; // 1..=8
    let v =
        load_branchy(b) << (8 * (8 - n)) | 0x3030_3030_3030_3030u64.checked_shr(8 * n).unwrap_or(0);
    all_digits8(v).then(|| value8(v))
}

/// The library's SWAR with branches: the sign first, the loads after it, a branch on the digit
/// count (1 to 8, 9 to 16) and, below 8 digits, on 4 digits.
#[inline(always)]
fn alt_branchy<const D: usize>(s: &[u8]) -> Option<(bool, u64)> {
    let (neg, digits) = match s {
        [b'-', rest @ ..] => (true, rest),
        _ => (false, s),
    };
    let n = digits.len();
    if n == 0 || n > D.min(16) {
        return None;
    }
    let mag = if n <= 8 {
        upto8_branchy(digits)?
    } else {
        let (head, tail) = digits.split_last_chunk::<8>()?;
        let tail = u64::from_le_bytes(*tail);
        if !all_digits8(tail) {
            return None;
        }
        upto8_branchy(head)? * 100_000_000 + value8(tail)
    };
    Some((neg, mag))
}

#[inline(always)]
fn finish(neg: bool, mag: u64, max: u64) -> Result<i64, IntError> {
    if mag > max + neg as u64 {
        return Err(IntError::OutOfRange);
    }
    let v = mag as i64;
    Ok(if neg { v.wrapping_neg() } else { v })
}

// ---------------------------------------------------------------- server-style stand-in

/// The server's algorithm shape over a NUL-terminated string: '-'? then digits with an overflow
/// test per digit and a NUL at the end, else a restart through a general loop (spaces, sign,
/// prefix, underscores). Returns the value or an error; out of line like an fmgr call.
#[inline(never)]
fn pg_style(s: &[u8], mag: u64) -> Result<i64, IntError> {
    // `s` runs to the end of the buffer; the field ends at its NUL. Unchecked reads, as in C:
    // every field in the buffer is NUL-terminated, so no read passes the NUL.
    let p = s.as_ptr();
    let at = |i: usize| unsafe { *p.add(i) };
    let mut i = 0;
    let mut neg = false;
    let mut tmp: u64;
    if at(0) == b'-' {
        neg = true;
        i = 1;
    }
    let d = at(i).wrapping_sub(b'0');
    if d < 10 {
        tmp = d as u64;
        i += 1;
        loop {
            let d = at(i).wrapping_sub(b'0');
            if d >= 10 {
                break;
            }
            i += 1;
            if tmp > mag / 10 {
                return Err(IntError::OutOfRange);
            }
            tmp = tmp * 10 + d as u64;
        }
        if at(i) == 0 {
            return finish(neg, tmp, mag - 1);
        }
    }
    // slow path
    let sp = |b: u8| b == b' ' || (b'\t'..=b'\r').contains(&b);
    tmp = 0;
    i = 0;
    while sp(at(i)) {
        i += 1;
    }
    if at(i) == b'-' {
        neg = true;
        i += 1;
    } else if at(i) == b'+' {
        i += 1;
    }
    let base: u64 = match (at(i), at(i + 1)) {
        (b'0', b'x' | b'X') => 16,
        (b'0', b'o' | b'O') => 8,
        (b'0', b'b' | b'B') => 2,
        _ => 10,
    };
    if base != 10 {
        i += 2;
    }
    let first = i;
    let dig = |b: u8| -> Option<u64> {
        let d = (b as char).to_digit(16)? as u64;
        (d < base).then_some(d)
    };
    loop {
        let b = at(i);
        if let Some(d) = dig(b) {
            if tmp > mag / base {
                return Err(IntError::OutOfRange);
            }
            tmp = tmp * base + d;
            i += 1;
        } else if b == b'_' {
            if base == 10 && i == first {
                return Err(IntError::InvalidSyntax);
            }
            i += 1;
            if at(i) == 0 || dig(at(i)).is_none() {
                return Err(IntError::InvalidSyntax);
            }
        } else {
            break;
        }
    }
    if i == first {
        return Err(IntError::InvalidSyntax);
    }
    while sp(at(i)) {
        i += 1;
    }
    if at(i) != 0 {
        return Err(IntError::InvalidSyntax);
    }
    finish(neg, tmp, mag - 1)
}

// ---------------------------------------------------------------- harness

const IMPLS: [&str; 8] = [
    "pg16", "pg15", "scalar", "swar-pad", "swar4", "branchy", "pg-style", "harness",
];
/// The index of `pg-style` in [`IMPLS`].
const PG_STYLE: usize = 6;

fn fold(acc: u64, r: Result<i64, IntError>) -> u64 {
    acc.wrapping_add(match r {
        Ok(v) => v as u64,
        Err(IntError::InvalidSyntax) => 1,
        Err(IntError::OutOfRange) => 2,
    })
}

/// Runs `f` over every field once, as the loops of `fastcopy.bench_int_parser` do; returns a
/// checksum. Out of line: each implementation's loop is a function of its own, so that where the
/// rest of this program's code lands does not change it.
#[inline(never)]
fn pass(fields: &[&[u8]], f: impl Fn(&[u8]) -> Result<i64, IntError>) -> u64 {
    let mut acc = 0u64;
    for s in fields {
        acc = fold(acc, f(black_box(s)));
    }
    acc
}

macro_rules! via_alt {
    ($alt:ident, $d:literal, $parse:ident, $max:expr) => {
        |s: &[u8]| match $alt::<$d>(s) {
            Some((neg, mag)) => finish(neg, mag, $max),
            None => $parse(s, Grammar::Pg16).map(i64::from),
        }
    };
}

fn run(v: &Views, w: Width, imp: usize) -> u64 {
    let f = &v.fields[..];
    match (w, imp) {
        (Width::W16, 0) => pass(f, |s| parse_i16(s, Grammar::Pg16).map(i64::from)),
        (Width::W16, 1) => pass(f, |s| parse_i16(s, Grammar::Pg15).map(i64::from)),
        (Width::W16, 2) => pass(f, via_alt!(alt_scalar, 5, parse_i16, i16::MAX as u64)),
        (Width::W16, 3) => pass(f, via_alt!(alt_swar_pad, 5, parse_i16, i16::MAX as u64)),
        (Width::W16, 4) => pass(f, via_alt!(alt_swar4, 5, parse_i16, i16::MAX as u64)),
        (Width::W16, 5) => pass(f, via_alt!(alt_branchy, 5, parse_i16, i16::MAX as u64)),
        (_, 7) => pass(f, |s| Ok(s.len() as i64)),
        (Width::W16, _) => pass(&v.tails, |t| pg_style(t, 1 << 15)),
        (Width::W32, 0) => pass(f, |s| parse_i32(s, Grammar::Pg16).map(i64::from)),
        (Width::W32, 1) => pass(f, |s| parse_i32(s, Grammar::Pg15).map(i64::from)),
        (Width::W32, 2) => pass(f, via_alt!(alt_scalar, 10, parse_i32, i32::MAX as u64)),
        (Width::W32, 3) => pass(f, via_alt!(alt_swar_pad, 10, parse_i32, i32::MAX as u64)),
        (Width::W32, 4) => pass(f, via_alt!(alt_swar4, 10, parse_i32, i32::MAX as u64)),
        (Width::W32, 5) => pass(f, via_alt!(alt_branchy, 10, parse_i32, i32::MAX as u64)),
        (Width::W32, _) => pass(&v.tails, |t| pg_style(t, 1 << 31)),
        (Width::W64, 0) => pass(f, |s| parse_i64(s, Grammar::Pg16)),
        (Width::W64, 1) => pass(f, |s| parse_i64(s, Grammar::Pg15)),
        (Width::W64, 2) => pass(f, via_alt!(alt_scalar, 19, parse_i64, i64::MAX as u64)),
        (Width::W64, 3) => pass(f, via_alt!(alt_swar_pad, 19, parse_i64, i64::MAX as u64)),
        (Width::W64, 4) => pass(f, via_alt!(alt_swar4, 19, parse_i64, i64::MAX as u64)),
        (Width::W64, 5) => pass(f, via_alt!(alt_branchy, 19, parse_i64, i64::MAX as u64)),
        (Width::W64, _) => pass(&v.tails, |t| pg_style(t, 1 << 63)),
    }
}

fn main() {
    let n: usize = std::env::args()
        .nth(1)
        .and_then(|a| a.parse().ok())
        .unwrap_or(1 << 16);
    let width_filter = std::env::args().nth(2).unwrap_or_default();
    let class_filter = std::env::args().nth(3).unwrap_or_default();
    let reps = 41;
    println!("ns/value, best of {reps} passes over {n} values; lower is better");
    for w in [Width::W16, Width::W32, Width::W64] {
        if !w.name().contains(width_filter.as_str()) {
            continue;
        }
        println!();
        print!("{:<26}", w.name());
        for name in IMPLS {
            print!("{name:>10}");
        }
        println!("{:>11}", "style/pg16");
        for (c, cname) in CLASSES.iter().enumerate() {
            if !cname.contains(class_filter.as_str()) {
                continue;
            }
            let d = data(
                c,
                w,
                n,
                0x9E37_79B9_7F4A_7C15 ^ (c as u64) << 8 ^ w.digits() as u64,
            );
            let v = views(&d);
            print!("{cname:<26}");
            // Interleaved passes, best per implementation: a burst of noise hits all alike.
            let mut res = [f64::INFINITY; IMPLS.len()];
            let mut sums = [0u64; IMPLS.len()];
            for _ in 0..reps {
                for (k, r) in res.iter_mut().enumerate() {
                    let t = Instant::now();
                    sums[k] = black_box(run(&v, w, k));
                    *r = r.min(t.elapsed().as_secs_f64() * 1e9 / n as f64);
                }
            }
            for r in res {
                print!("{r:>10.2}");
            }
            println!("{:>9.2}x", res[PG_STYLE] / res[0]);
            // every implementation must agree with the library under the same grammar
            let pg15_differs = sums[1] != sums[0];
            for k in 2..=PG_STYLE {
                assert_eq!(
                    sums[k],
                    sums[0],
                    "{} disagrees on {cname} {}",
                    IMPLS[k],
                    w.name()
                );
            }
            if pg15_differs && !cname.contains("pg16") {
                panic!("pg15 disagrees with pg16 on {cname}");
            }
        }
    }
}
