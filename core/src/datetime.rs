//! `date`, `timestamp` and `timestamptz` text input, for the one spelling whose meaning does not
//! depend on the session: ISO 8601 with a four-digit year first, as `pg_dump` writes them
//! (`DateStyle = ISO`).
//!
//! - `date`: `YYYY-MM-DD`, the days since 2000-01-01 (`date_in`'s `date2j(y, m, d) -
//!   POSTGRES_EPOCH_JDATE`). A four-digit year first is read year-month-day under every
//!   `DateStyle`.
//! - `timestamp`: `YYYY-MM-DD HH:MM:SS` (or ISO 8601's `T` for the space), optionally `.`
//!   and 1 to 6 digits of fraction: the microseconds since 2000-01-01 00:00:00.
//! - `timestamptz`: the same followed by an explicit UTC offset `+HH`, `-HH`, `+HH:MM` or
//!   `-HH:MM` (hours up to 15, as the server allows) or `Z`: the microseconds since
//!   2000-01-01 00:00:00 UTC, the offset subtracted. Without an offset the session's
//!   `TimeZone` decides ([`Zone`]): taken only when the caller knows that zone's one fixed
//!   offset, or its offsets by windows of local time ([`ZoneTable`]) and the value lies
//!   inside one, away from every transition.
//!
//! Everything else (other spellings, whitespace, `BC`, `24:00:00`, a leap second `:60`,
//! more than 6 fraction digits, the year 0, `infinity`, a day the month does not have) is
//! `None`: the server's input function reads it, and raises its error where there is one.
//! The calendar is the proleptic Gregorian one of `date2j`.

/// `POSTGRES_EPOCH_JDATE - UNIX_EPOCH_JDATE`: 2000-01-01 in days since 1970-01-01.
const EPOCH_DAYS: i64 = 10_957;
const USECS_PER_SEC: i64 = 1_000_000;
const SECS_PER_DAY: i64 = 86_400;
/// `MAX_TZDISP_HOUR`.
const MAX_OFFSET_HOURS: u32 = 15;

/// Days since 1970-01-01 of a proleptic Gregorian date (the civil-from-days inverse of
/// the usual era arithmetic: 400-year eras of 146097 days, years starting in March).
fn days_from_civil(y: i64, m: u32, d: u32) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400; // [0, 399]
    let mp = (m as i64 + 9) % 12; // March = 0
    let doy = (153 * mp + 2) / 5 + d as i64 - 1; // [0, 365]
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy; // [0, 146096]
    era * 146_097 + doe - 719_468
}

fn is_leap(y: u32) -> bool {
    y.is_multiple_of(4) && (!y.is_multiple_of(100) || y.is_multiple_of(400))
}

fn days_in_month(y: u32, m: u32) -> u32 {
    match m {
        2 if is_leap(y) => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    }
}

/// The value of `n` ASCII digits at the start of `b`, if they are digits.
#[inline]
fn digits(b: &[u8], n: usize) -> Option<u32> {
    let d = b.get(..n)?;
    let mut v = 0u32;
    for &c in d {
        if !c.is_ascii_digit() {
            return None;
        }
        v = v * 10 + (c - b'0') as u32;
    }
    Some(v)
}

/// `YYYY-MM-DD` at the start of `b` (exactly 10 bytes): days since 2000-01-01.
#[inline]
fn date_prefix(b: &[u8]) -> Option<i64> {
    if b.len() < 10 || b[4] != b'-' || b[7] != b'-' {
        return None;
    }
    let (y, m, d) = (digits(b, 4)?, digits(&b[5..], 2)?, digits(&b[8..], 2)?);
    if y == 0 || !(1..=12).contains(&m) || d == 0 || d > days_in_month(y, m) {
        return None;
    }
    Some(days_from_civil(y as i64, m, d) - EPOCH_DAYS)
}

/// A `date` value: `YYYY-MM-DD`, the days since 2000-01-01.
pub fn parse_date(b: &[u8]) -> Option<i32> {
    if b.len() != 10 {
        return None;
    }
    date_prefix(b).map(|d| d as i32)
}

/// `YYYY-MM-DD HH:MM:SS[.ffffff]` at the start of `b`: microseconds since 2000-01-01, and the
/// bytes read.
#[inline]
fn timestamp_prefix(b: &[u8]) -> Option<(i64, usize)> {
    let days = date_prefix(b)?;
    let t = b.get(10..19)?;
    if !matches!(t[0], b' ' | b'T') || t[3] != b':' || t[6] != b':' {
        return None;
    }
    let (h, mi, s) = (
        digits(&t[1..], 2)?,
        digits(&t[4..], 2)?,
        digits(&t[7..], 2)?,
    );
    if h > 23 || mi > 59 || s > 59 {
        return None;
    }
    let secs = days * SECS_PER_DAY + (h * 3600 + mi * 60 + s) as i64;
    let mut usecs = 0i64;
    let mut at = 19;
    if b.get(at) == Some(&b'.') {
        at += 1;
        let from = at;
        while at < b.len() && b[at].is_ascii_digit() {
            at += 1;
        }
        let n = at - from;
        if n == 0 || n > 6 {
            return None;
        }
        usecs = digits(&b[from..], n)? as i64 * 10i64.pow((6 - n) as u32);
    }
    Some((secs * USECS_PER_SEC + usecs, at))
}

/// `IS_VALID_DATE`: days from 2000-01-01 in date_in's range (`DATETIME_MIN_JULIAN` and
/// `DATE_END_JULIAN` less `POSTGRES_EPOCH_JDATE`).
const DATE_MIN: i32 = -2_451_545;
const DATE_END: i32 = 2_147_483_494 - 2_451_545;
/// `IS_VALID_TIMESTAMP`: microseconds from 2000-01-01 in timestamp_in's range.
const TIMESTAMP_MIN: i64 = -211_813_488_000_000_000;
const TIMESTAMP_END: i64 = 9_223_371_331_200_000_000;

/// `date_recv`: a COPY binary date (4 bytes, big-endian, days from 2000-01-01) that is finite
/// and in range, or ±infinity; `None` for the receive function's error.
#[inline]
pub fn date_from_binary(v: &[u8]) -> Option<i32> {
    let d = i32::from_be_bytes(v.try_into().ok()?);
    ((DATE_MIN..DATE_END).contains(&d) || d == i32::MIN || d == i32::MAX).then_some(d)
}

/// `timestamp_recv` / `timestamptz_recv` without a typmod (or 6, which rounds nothing): a
/// COPY binary timestamp (8 bytes, big-endian, microseconds from 2000-01-01) that is finite
/// and in range, or ±infinity.
#[inline]
pub fn timestamp_from_binary(v: &[u8]) -> Option<i64> {
    let t = i64::from_be_bytes(v.try_into().ok()?);
    ((TIMESTAMP_MIN..TIMESTAMP_END).contains(&t) || t == i64::MIN || t == i64::MAX).then_some(t)
}

/// A `timestamp` value: `YYYY-MM-DD HH:MM:SS[.ffffff]`, microseconds since 2000-01-01.
pub fn parse_timestamp(b: &[u8]) -> Option<i64> {
    match timestamp_prefix(b)? {
        (v, n) if n == b.len() => Some(v),
        _ => None,
    }
}

/// How a `timestamptz` value without an offset is read: in the session's `TimeZone`, which
/// the caller describes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Zone {
    /// Unknown here: only a value with an explicit offset is taken.
    Explicit,
    /// A zone of one fixed offset, in seconds east of UTC (`UTC`, `Etc/GMT+5`).
    Fixed(i32),
    /// A zone whose offsets change: its offsets by windows of local time.
    Table(&'static ZoneTable),
}

/// A time zone's UTC offsets by windows of local time, each a span in which the offset of
/// every local time is certain (the caller leaves out the days around each transition, where
/// a local time may be missing or ambiguous, and the years it did not look at).
#[derive(Debug, PartialEq, Eq)]
pub struct ZoneTable {
    /// (first local second, one past the last, offset in seconds east of UTC), local seconds
    /// counted from 1970-01-01 00:00:00 as if it were UTC; sorted, disjoint.
    windows: Vec<(i64, i64, i32)>,
}

impl ZoneTable {
    /// `None` unless the windows are non-empty, sorted and disjoint, with offsets below a day.
    pub fn new(windows: Vec<(i64, i64, i32)>) -> Option<ZoneTable> {
        let ok = windows
            .iter()
            .all(|&(a, b, off)| a < b && off.unsigned_abs() < SECS_PER_DAY as u32)
            && windows.windows(2).all(|w| w[0].1 <= w[1].0);
        ok.then_some(ZoneTable { windows })
    }

    /// The offset of local second `local` (from 1970-01-01 as if UTC), if a window holds it.
    #[inline]
    pub fn offset(&self, local: i64) -> Option<i32> {
        let i = self.windows.partition_point(|w| w.1 <= local);
        let &(a, _, off) = self.windows.get(i)?;
        (a <= local).then_some(off)
    }
}

/// A `timestamptz` value: a timestamp and `+HH`, `-HH`, `+HH:MM`, `-HH:MM` or `Z`, or a
/// timestamp alone in `zone`; microseconds since 2000-01-01 00:00:00 UTC.
pub fn parse_timestamptz(b: &[u8], zone: Zone) -> Option<i64> {
    let (local, at) = timestamp_prefix(b)?;
    let z = &b[at..];
    let sign = match z {
        [] => {
            let off = match zone {
                Zone::Explicit => return None,
                Zone::Fixed(off) => off,
                // (the whole seconds of the local time, as DetermineTimeZoneOffset reads it)
                Zone::Table(t) => {
                    t.offset(local.div_euclid(USECS_PER_SEC) + EPOCH_DAYS * SECS_PER_DAY)?
                }
            };
            return Some(local - off as i64 * USECS_PER_SEC);
        }
        [b'Z' | b'z'] => return Some(local),
        [b'+', ..] => 1,
        [b'-', ..] => -1,
        _ => return None,
    };
    let (h, m) = match z.len() {
        3 => (digits(&z[1..], 2)?, 0),
        6 if z[3] == b':' => (digits(&z[1..], 2)?, digits(&z[4..], 2)?),
        _ => return None,
    };
    if h > MAX_OFFSET_HOURS || m > 59 {
        return None;
    }
    Some(local - sign * (h * 3600 + m * 60) as i64 * USECS_PER_SEC)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dates_count_days_from_2000() {
        assert_eq!(parse_date(b"2000-01-01"), Some(0));
        assert_eq!(parse_date(b"1970-01-01"), Some(-10_957));
        assert_eq!(parse_date(b"2000-03-01"), Some(60)); // 2000 is a leap year
        assert_eq!(parse_date(b"2024-02-29"), Some(8_825));
        assert_eq!(parse_date(b"0001-01-01"), Some(-730_119));
        assert_eq!(parse_date(b"9999-12-31"), Some(2_921_939));
        assert_eq!(parse_date(b"1900-03-01"), Some(-36_465)); // 1900 is not
        for bad in [
            &b"2023-02-29"[..],
            b"1900-02-29",
            b"2023-04-31",
            b"2023-13-01",
            b"2023-00-10",
            b"2023-01-00",
            b"0000-01-01",
            b"2023-1-01",
            b" 2023-01-01",
            b"2023-01-01 ",
            b"20230101",
            b"2023/01/01",
            b"+023-01-01",
            b"",
        ] {
            assert_eq!(parse_date(bad), None, "{}", String::from_utf8_lossy(bad));
        }
    }

    /// Each day of 1600-2400 in turn: one day after the one before, and the right weekday.
    #[test]
    fn consecutive_days() {
        let mut prev = parse_date(b"1599-12-31").unwrap();
        for y in 1600..=2400 {
            for m in 1..=12 {
                for d in 1..=days_in_month(y, m) {
                    let s = format!("{y:04}-{m:02}-{d:02}");
                    let v = parse_date(s.as_bytes()).unwrap();
                    assert_eq!(v, prev + 1, "{s}");
                    prev = v;
                }
            }
        }
        // 2000-01-01 was a Saturday; 2026-12-04 is a Friday
        assert_eq!(parse_date(b"2026-12-04").unwrap().rem_euclid(7), 6);
    }

    #[test]
    fn timestamps() {
        assert_eq!(parse_timestamp(b"2000-01-01 00:00:00"), Some(0));
        assert_eq!(
            parse_timestamp(b"2000-01-02 00:00:01"),
            Some(86_401_000_000)
        );
        assert_eq!(parse_timestamp(b"1999-12-31 23:59:59.5"), Some(-500_000));
        assert_eq!(parse_timestamp(b"2000-01-01 00:00:00.000001"), Some(1));
        assert_eq!(parse_timestamp(b"2000-01-01 00:00:00.12"), Some(120_000));
        assert_eq!(parse_timestamp(b"2000-01-01T00:00:00.12"), Some(120_000));
        for bad in [
            &b"2000-01-01 24:00:00"[..],
            b"2000-01-01 23:60:00",
            b"2000-01-01 23:59:60",
            b"2000-01-01 00:00:00.1234567",
            b"2000-01-01 00:00:00.",
            b"2000-01-01 0:00:00",
            b"2000-01-01 00:00",
            b"2000-01-01 00:00:00+00",
            b"2000-01-01 00:00:00Z",
            b"2000-01-01t00:00:00",
            b"2000-01-01",
        ] {
            assert_eq!(
                parse_timestamp(bad),
                None,
                "{}",
                String::from_utf8_lossy(bad)
            );
        }
    }

    fn parse_timestamptz_explicit(b: &[u8]) -> Option<i64> {
        parse_timestamptz(b, Zone::Explicit)
    }

    /// Windows of local time: the offset inside, nothing in the gaps or outside.
    #[test]
    fn zone_tables_answer_inside_their_windows_only() {
        // 2000-01-01 00:00:00 local is second 946684800
        let t0 = 946_684_800;
        let table: &'static ZoneTable = Box::leak(Box::new(
            ZoneTable::new(vec![
                (t0 - 100, t0 + 3600, -18_000),
                (t0 + 7200, t0 + 9000, -14_400),
            ])
            .unwrap(),
        ));
        let z = Zone::Table(table);
        // 00:00 local at -05: 05:00 UTC
        assert_eq!(
            parse_timestamptz(b"2000-01-01 00:00:00", z),
            Some(18_000_000_000)
        );
        assert_eq!(
            parse_timestamptz(b"2000-01-01 00:59:59.9", z),
            Some(21_599_900_000)
        );
        assert_eq!(
            parse_timestamptz(b"2000-01-01 01:00:00", z),
            None,
            "in the gap"
        );
        assert_eq!(
            parse_timestamptz(b"2000-01-01 02:00:00", z),
            Some((7200 + 14_400) * 1_000_000)
        );
        assert_eq!(
            parse_timestamptz(b"2000-01-01 02:30:00", z),
            None,
            "after the last window"
        );
        assert_eq!(
            parse_timestamptz(b"1999-12-31 23:58:19", z),
            None,
            "before the first"
        );
        assert_eq!(
            parse_timestamptz(b"1999-12-31 23:58:20", z),
            Some((-100 + 18_000) * 1_000_000)
        );
        // an explicit offset wins
        assert_eq!(
            parse_timestamptz(b"2000-01-01 01:00:00+00", z),
            Some(3_600_000_000)
        );
        assert!(
            ZoneTable::new(vec![(0, 10, 0), (5, 20, 0)]).is_none(),
            "overlapping"
        );
        assert!(ZoneTable::new(vec![(10, 10, 0)]).is_none(), "empty");
        assert!(
            ZoneTable::new(vec![(0, 10, 86_400)]).is_none(),
            "a day's offset"
        );
    }

    #[test]
    fn timestamptz_subtracts_the_offset() {
        assert_eq!(
            parse_timestamptz_explicit(b"2000-01-01T01:00:00Z"),
            Some(3_600_000_000)
        );
        assert_eq!(
            parse_timestamptz_explicit(b"2000-01-01 01:00:00z"),
            Some(3_600_000_000)
        );
        // without an offset: the zone's, if known
        assert_eq!(
            parse_timestamptz(b"2000-01-01 01:00:00", Zone::Fixed(0)),
            Some(3_600_000_000)
        );
        assert_eq!(
            parse_timestamptz(b"2000-01-01 01:00:00", Zone::Fixed(3600)),
            Some(0)
        );
        assert_eq!(
            parse_timestamptz(b"2000-01-01 01:00:00", Zone::Fixed(-3600)),
            Some(7_200_000_000)
        );
        assert_eq!(
            parse_timestamptz(b"2000-01-01 01:00:00+01", Zone::Fixed(-3600)),
            Some(0)
        );
        assert_eq!(
            parse_timestamptz_explicit(b"2000-01-01 00:00:00+00"),
            Some(0)
        );
        assert_eq!(
            parse_timestamptz_explicit(b"2000-01-01 02:00:00+02"),
            Some(0)
        );
        assert_eq!(
            parse_timestamptz_explicit(b"1999-12-31 19:30:00-04:30"),
            Some(0)
        );
        assert_eq!(
            parse_timestamptz_explicit(b"2000-01-01 05:30:00.25+05:30"),
            Some(250_000)
        );
        assert_eq!(
            parse_timestamptz_explicit(b"2000-01-01 00:00:00+15:59"),
            Some(-57_540_000_000)
        );
        for bad in [
            &b"2000-01-01 00:00:00"[..],
            b"2000-01-01 00:00:00ZZ",
            b"2000-01-01 00:00:00 Z",
            b"2000-01-01 00:00:00+16",
            b"2000-01-01 00:00:00+01:60",
            b"2000-01-01 00:00:00+1",
            b"2000-01-01 00:00:00+0100",
            b"2000-01-01 00:00:00+01:00:00",
            b"2000-01-01 00:00:00 +00",
            b"2000-01-01 00:00:00 UTC",
            b"2000-01-01 00:00:00+00 ",
        ] {
            assert_eq!(
                parse_timestamptz(bad, Zone::Explicit),
                None,
                "{}",
                String::from_utf8_lossy(bad)
            );
        }
    }
}
