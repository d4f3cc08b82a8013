//! The reader's typed conversions (fastcopy_core::float, uuid, boolean, datetime, numeric, bytea)
//! against the server's own input functions, the oracle: for a generated corpus per type
//! (random and edge values, valid and not), every value the core takes must be one the server
//! takes, stored with the same bytes (compared through the type's send function); every other
//! value goes to the server's input function in a load, so its error is the server's. Each
//! corpus must also be mostly taken where it is in the spelling the core reads, or a core that
//! took nothing would pass.

use pgrx::prelude::*;

#[pg_schema]
mod tests {
    #[allow(unused_imports)]
    use crate::suites::util::*;
    #[allow(unused_imports)]
    use pgrx::prelude::*;

    /// A small deterministic generator (xorshift64*), so that every run tests the same corpus.
    struct Gen(u64);

    impl Gen {
        fn next(&mut self) -> u64 {
            self.0 ^= self.0 >> 12;
            self.0 ^= self.0 << 25;
            self.0 ^= self.0 >> 27;
            self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
        }
        fn below(&mut self, n: u64) -> u64 {
            self.next() % n
        }
        fn pick<'a>(&mut self, v: &[&'a str]) -> &'a str {
            v[self.below(v.len() as u64) as usize]
        }
        fn digits(&mut self, n: usize) -> String {
            (0..n)
                .map(|_| (b'0' + self.below(10) as u8) as char)
                .collect()
        }
        /// 1 to `max` digits.
        fn some_digits(&mut self, max: u64) -> String {
            let n = 1 + self.below(max) as usize;
            self.digits(n)
        }
    }

    /// Compares the core's bytes (hex, in the send function's order) for each input with the
    /// server's `encode(<send>($1::<ty>), 'hex')`; an input `must_take` names that the server
    /// accepts must be taken by the core too. Returns (differences, values the core took).
    fn typed_differences(
        ty: &str,
        send: &str,
        inputs: &[String],
        core: &dyn Fn(&[u8]) -> Option<String>,
        must_take: &dyn Fn(&str) -> bool,
    ) -> (Vec<String>, usize) {
        make_outcome_functions();
        let sql = format!(
            "SELECT array_agg(pg_temp.fc_outcome_arg('SELECT encode({send}($1::{ty}), ''hex'')', s) \
         ORDER BY i) FROM unnest($1::text[]) WITH ORDINALITY AS u(s, i)"
        );
        let server = Spi::get_one_with_args::<Vec<String>>(&sql, &[inputs.to_vec().into()])
            .unwrap()
            .unwrap();
        let mut diffs = Vec::new();
        let mut taken = 0;
        for (input, server) in inputs.iter().zip(&server) {
            if let Some(ours) = core(input.as_bytes()) {
                taken += 1;
                if *server != format!("ok:{ours}") {
                    diffs.push(format!("{ty} {input:?}: server {server}, core {ours}"));
                }
            } else if server.starts_with("ok:") && must_take(input) {
                diffs.push(format!(
                    "{ty} {input:?}: server {server}, the core leaves it"
                ));
            }
        }
        (diffs, taken)
    }

    fn hex(bytes: &[u8]) -> String {
        bytes.iter().map(|b| format!("{b:02x}")).collect()
    }

    fn assert_typed(
        ty: &str,
        send: &str,
        inputs: &[String],
        core: &dyn Fn(&[u8]) -> Option<String>,
        min_taken: usize,
    ) {
        assert_typed_all(ty, send, inputs, core, min_taken, &|_| false);
    }

    fn assert_typed_all(
        ty: &str,
        send: &str,
        inputs: &[String],
        core: &dyn Fn(&[u8]) -> Option<String>,
        min_taken: usize,
        must_take: &dyn Fn(&str) -> bool,
    ) {
        let (diffs, taken) = typed_differences(ty, send, inputs, core, must_take);
        assert!(
            diffs.is_empty(),
            "{} differences of {} inputs:\n{}",
            diffs.len(),
            inputs.len(),
            diffs.join("\n")
        );
        assert!(
            taken >= min_taken,
            "{ty}: the core took {taken} of {} inputs, expected at least {min_taken}",
            inputs.len()
        );
    }

    /// Floats: plain decimals of every length, 17-digit values, the ends of both ranges,
    /// denormals, halfway points, values as the server writes them, NaN and the infinities in
    /// every spelling, whitespace, and what does not parse.
    fn float_corpus() -> Vec<String> {
        let mut g = Gen(0x9e37_79b9_7f4a_7c15);
        let mut v: Vec<String> = [
            "0",
            "-0",
            "0.0",
            "-0.0",
            "0e-9999",
            "1.7976931348623157e308",
            "1.7976931348623158e308",
            "1.797693134862316e308",
            "1e309",
            "-1e309",
            "2.2250738585072014e-308",
            "2.2250738585072011e-308",
            "4.9406564584124654e-324",
            "2.4703282292062328e-324",
            "2.4703282292062327e-324",
            "5e-324",
            "1e-400",
            "3.4028235e38",
            "3.4028236e38",
            "3.40282357e38",
            "1.17549435e-38",
            "1.4e-45",
            "7e-46",
            "0.1",
            "0.30000000000000004",
            "9007199254740993",
            "123456789012345678901234567890",
            "1e22",
            "1e23",
            "NaN",
            "nan",
            "NAN",
            "-NaN",
            "+NaN",
            "Infinity",
            "-Infinity",
            "+Infinity",
            "infinity",
            "inf",
            "-inf",
            "+inf",
            "INF",
            " 1.5",
            "1.5 ",
            "\t2",
            "1e",
            "1e+",
            "e5",
            ".",
            "-",
            "+",
            "",
            "1.2.3",
            "0x10",
            "1_000",
            "1,5",
            "abc",
            "1d5",
            "1.5f",
            "--1",
            "+-1",
            ".5",
            "5.",
            "-.5e-3",
            "1E5",
            "1e+05",
            "1e-05",
            "00001.5000",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        for _ in 0..1500 {
            let sign = g.pick(&["", "", "-", "+"]);
            let n = 1 + g.below(22) as usize;
            let d = g.digits(n);
            let at = g.below(n as u64 + 1) as usize;
            let mut s = format!(
                "{sign}{}",
                if g.below(3) == 0 {
                    d.clone()
                } else {
                    format!("{}.{}", &d[..at], &d[at..])
                }
            );
            match g.below(4) {
                0 => s.push_str(&format!("e{}", g.below(700) as i64 - 350)),
                1 => s.push_str(&format!("E{}", g.below(80) as i64 - 40)),
                _ => {}
            }
            v.push(s);
        }
        for _ in 0..600 {
            let b = g.next();
            let x = f64::from_bits(b);
            v.push(match g.below(4) {
                0 => format!("{x}"),
                1 => format!("{x:e}"),
                2 => format!("{x:.16e}"),
                _ => format!("{:e}", f32::from_bits(b as u32)),
            });
            // a denormal
            v.push(format!("{:e}", f64::from_bits(g.below(1 << 52))));
        }
        for _ in 0..300 {
            // halfway between two adjacent doubles: (2m+1)·2^(k-1), written exactly
            let m = (1u64 << 52) + g.below(1 << 52);
            let k = g.below(40) as i32 - 20;
            let odd = 2 * m as u128 + 1;
            v.push(if k >= 1 {
                format!("{}", odd << (k - 1))
            } else {
                let n = (1 - k) as u32;
                let digits = format!("{:0>width$}", odd * 5u128.pow(n), width = n as usize + 1);
                let cut = digits.len() - n as usize;
                format!("{}.{}", &digits[..cut], &digits[cut..])
            });
        }
        v
    }

    /// A plain decimal within the core's limits (64 bytes, 4 exponent digits): one the core must
    /// take where the server does.
    fn plain_decimal(s: &str) -> bool {
        let b = s.as_bytes();
        let mantissa_end = b
            .iter()
            .position(|&c| c == b'e' || c == b'E')
            .unwrap_or(b.len());
        let (m, e) = b.split_at(mantissa_end);
        let m = m
            .strip_prefix(b"-")
            .or_else(|| m.strip_prefix(b"+"))
            .unwrap_or(m);
        let exp_ok = e.is_empty() || {
            let d = &e[1..];
            let d = d
                .strip_prefix(b"-")
                .or_else(|| d.strip_prefix(b"+"))
                .unwrap_or(d);
            !d.is_empty() && d.len() <= 4 && d.iter().all(u8::is_ascii_digit)
        };
        b.len() <= 64
            && m.iter().any(u8::is_ascii_digit)
            && m.iter().all(|&c| c.is_ascii_digit() || c == b'.')
            && m.iter().filter(|&&c| c == b'.').count() <= 1
            && exp_ok
    }

    #[pg_test]
    fn float8_fast_path_matches_float8in() {
        let corpus = float_corpus();
        let core = |b: &[u8]| fastcopy_core::float::parse_float8(b).map(|v| hex(&v.to_be_bytes()));
        assert_typed_all("float8", "float8send", &corpus, &core, 2500, &plain_decimal);
        // extra_float_digits changes output only
        Spi::run("SET extra_float_digits = -15").unwrap();
        assert_typed("float8", "float8send", &corpus[..200], &core, 100);
        Spi::run("RESET extra_float_digits").unwrap();
    }

    #[pg_test]
    fn float4_fast_path_matches_float4in() {
        let corpus = float_corpus();
        let core = |b: &[u8]| fastcopy_core::float::parse_float4(b).map(|v| hex(&v.to_be_bytes()));
        assert_typed_all("float4", "float4send", &corpus, &core, 1500, &plain_decimal);
    }

    #[pg_test]
    fn uuid_fast_path_matches_uuid_in() {
        let mut g = Gen(7);
        let mut v = Vec::new();
        for _ in 0..1500 {
            let bytes: Vec<u8> = (0..16).map(|_| g.below(256) as u8).collect();
            let upper = g.below(2) == 0;
            let hyphens = g.below(4);
            let mut s = String::new();
            for (i, b) in bytes.iter().enumerate() {
                s.push_str(&if upper {
                    format!("{b:02X}")
                } else {
                    format!("{b:02x}")
                });
                let canonical = matches!(i, 3 | 5 | 7 | 9);
                let dash = match hyphens {
                    0 => canonical,
                    1 => false,
                    2 => i % 2 == 1 && i < 15,
                    _ => i % 2 == 1 && i < 15 && g.below(2) == 0,
                };
                if dash {
                    s.push('-');
                }
            }
            if g.below(5) == 0 {
                s = format!("{{{s}}}");
            }
            // one in four broken: a digit dropped or added, a hyphen misplaced, a space, a brace
            match g.below(16) {
                0 => {
                    s.pop();
                }
                1 => s.push('0'),
                2 => s.insert(g.below(s.len() as u64) as usize, '-'),
                3 => s.insert(0, ' '),
                _ => {}
            }
            v.push(s);
        }
        v.extend(
            [
                "",
                "{}",
                "-",
                "00000000-0000-0000-0000-00000000000g",
                "{a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11",
            ]
            .map(String::from),
        );
        let core = |b: &[u8]| fastcopy_core::uuid::parse_uuid(b).map(|u| hex(&u));
        let plain = |s: &str| !s.contains(' ');
        assert_typed_all("uuid", "uuid_send", &v, &core, 1000, &plain);
    }

    #[pg_test]
    fn bool_fast_path_matches_boolin() {
        let mut v = Vec::new();
        for word in [
            "true", "false", "yes", "no", "on", "off", "1", "0", "10", "o", "of", "onn", "truex",
            "x",
        ] {
            for n in 1..=word.len() {
                let p = &word[..n];
                v.push(p.to_string());
                v.push(p.to_uppercase());
                v.push(format!(" {p}"));
                v.push(format!("{p} "));
                // mixed case
                v.push(
                    p.chars()
                        .enumerate()
                        .map(|(i, c)| {
                            if i % 2 == 0 {
                                c.to_ascii_uppercase()
                            } else {
                                c
                            }
                        })
                        .collect(),
                );
            }
        }
        v.push(String::new());
        let core = |b: &[u8]| fastcopy_core::boolean::parse_bool(b).map(|x| hex(&[x as u8]));
        // every spelling boolin takes, but with whitespace around it
        let plain = |s: &str| !s.contains(' ');
        assert_typed_all("bool", "boolsend", &v, &core, 60, &plain);
    }

    /// Dates and timestamps: every spelling the core reads, with days the month lacks, leap days,
    /// 24:00, leap seconds, up to 7 fraction digits, `T`, `Z`, offsets up to and past 15:59,
    /// years 1 and 9999, BC, `infinity`, `epoch`.
    fn datetime_corpus(g: &mut Gen, zoned: bool) -> Vec<String> {
        let mut v: Vec<String> = [
            "2000-01-01",
            "2024-02-29",
            "2023-02-29",
            "1900-02-29",
            "2000-02-29",
            "0001-01-01",
            "9999-12-31",
            "2023-04-31",
            "2023-13-01",
            "0000-01-01",
            "infinity",
            "-infinity",
            "epoch",
            "2000-01-01 24:00:00",
            "2016-12-31 23:59:60",
            "2000-01-01 00:00:00.1234567",
            "2000-01-01 00:00:00.9999995",
            "2000-01-01T12:00:00",
            "2000-01-01t12:00:00",
            "2000-01-01 12:00:00Z",
            "2000-01-01 12:00:00z",
            "2000-01-01 12:00:00+00",
            "2000-01-01 12:00:00+15:59",
            "2000-01-01 12:00:00+16",
            "2000-01-01 12:00:00-05:30",
            "2000-01-01 12:00:00 BC",
            "0044-03-15 12:00:00 BC",
            "2000-01-01 12:00",
            "Jan 1 2000",
            "2000-01-01 12:00:00 UTC",
            "2000-01-01 12:00:00 America/New_York",
            " 2000-01-01",
            "2000-01-01 ",
            "20000101",
            "2000-1-1",
            "1999-12-31 23:59:59.999999+14",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        for _ in 0..1500 {
            let y = 1 + g.below(9999);
            let m = 1 + g.below(12);
            let d = 1 + g.below(31);
            let date = format!("{y:04}-{m:02}-{d:02}");
            if g.below(4) == 0 {
                v.push(date);
                continue;
            }
            let (h, mi, s) = (g.below(25), g.below(60), g.below(61));
            let frac = match g.below(3) {
                0 => String::new(),
                _ => format!(".{}", g.some_digits(7)),
            };
            let sep = if g.below(4) == 0 { "T" } else { " " };
            let mut t = format!("{date}{sep}{h:02}:{mi:02}:{s:02}{frac}");
            if zoned {
                match g.below(5) {
                    0 => {}
                    1 => t.push('Z'),
                    2 => t.push_str(&format!("{}{:02}", g.pick(&["+", "-"]), g.below(17))),
                    _ => t.push_str(&format!(
                        "{}{:02}:{:02}",
                        g.pick(&["+", "-"]),
                        g.below(16),
                        g.below(61)
                    )),
                }
            }
            v.push(t);
        }
        // around the DST transitions of 2021 in New York, Sydney and Berlin
        for (day, hour) in [
            ("2021-03-14", 2),
            ("2021-11-07", 1),
            ("2021-04-04", 2),
            ("2021-10-03", 2),
            ("2021-03-28", 2),
            ("2021-10-31", 2),
        ] {
            for mi in [0, 30, 59] {
                v.push(format!("{day} {hour:02}:{mi:02}:00"));
                v.push(format!("{day} {:02}:{mi:02}:00", hour + 1));
            }
        }
        v
    }

    #[pg_test]
    fn date_fast_path_matches_date_in() {
        let corpus = datetime_corpus(&mut Gen(11), false);
        let core = |b: &[u8]| fastcopy_core::datetime::parse_date(b).map(|d| hex(&d.to_be_bytes()));
        assert_typed("date", "date_send", &corpus, &core, 300);
    }

    #[pg_test]
    fn timestamp_fast_path_matches_timestamp_in() {
        let corpus = datetime_corpus(&mut Gen(12), false);
        let core =
            |b: &[u8]| fastcopy_core::datetime::parse_timestamp(b).map(|t| hex(&t.to_be_bytes()));
        assert_typed("timestamp", "timestamp_send", &corpus, &core, 500);
    }

    /// In several session time zones: values without an offset are taken only in a zone of one
    /// fixed offset, and then as the server reads them.
    #[pg_test]
    fn timestamptz_fast_path_matches_timestamptz_in() {
        let corpus = datetime_corpus(&mut Gen(13), true);
        for (zone, fixed) in [
            ("UTC", true),
            ("Etc/GMT+5", true),
            ("Etc/GMT-14", true),
            ("America/New_York", false),
            ("Australia/Sydney", false),
            ("Europe/Berlin", false),
            ("Asia/Kolkata", false),
        ] {
            Spi::run(&format!("SET TIME ZONE '{zone}'")).unwrap();
            let z = crate::load::datum::session_zone();
            let fixed_now = matches!(z, fastcopy_core::datetime::Zone::Fixed(_));
            assert_eq!(fixed_now, fixed, "{zone}: {z:?}");
            // a zone with transitions has its table of windows
            assert!(
                fixed || matches!(z, fastcopy_core::datetime::Zone::Table(_)),
                "{zone}: {z:?}"
            );
            let core = |b: &[u8]| {
                fastcopy_core::datetime::parse_timestamptz(b, z).map(|t| hex(&t.to_be_bytes()))
            };
            assert_typed("timestamptz", "timestamptz_send", &corpus, &core, 300);
            // without offsets: through 1900-2100 every few days, and every 37 minutes through
            // the months of the transitions of a few years; most are taken (all but those near a
            // transition), each as the server reads it
            let mut local = Vec::new();
            for y in 1900..2100 {
                for d in (0..365).step_by(3) {
                    let (m, day) = (1 + d / 31, 1 + d % 28);
                    local.push(format!(
                        "{y}-{m:02}-{day:02} {:02}:{:02}:{:02}",
                        d % 24,
                        (d * 7) % 60,
                        d % 60
                    ));
                }
            }
            for y in [1918, 1942, 1970, 2007, 2021, 2037, 2099] {
                for m in [3, 4, 10, 11] {
                    for k in 0..(28 * 24 * 60 / 37) {
                        let min = k * 37;
                        let (day, h, mi) = (1 + min / 1440, (min / 60) % 24, min % 60);
                        local.push(format!(
                            "{y}-{m:02}-{day:02} {h:02}:{mi:02}:{:02}.5",
                            k % 60
                        ));
                    }
                }
            }
            assert_typed(
                "timestamptz",
                "timestamptz_send",
                &local,
                &core,
                local.len() * 9 / 10,
            );
        }
        Spi::run("RESET TIME ZONE").unwrap();
    }

    /// numeric with and without typmods: rounding half away from zero at the scale, overflow,
    /// up to 45 digits, 1000 digits, NaN and Infinity (the server's), exponents, whitespace.
    #[pg_test]
    fn numeric_fast_path_matches_numeric_in() {
        use fastcopy_core::numeric::{MAX_BODY, Typmod, parse_numeric};
        let mut g = Gen(17);
        let mut v: Vec<String> = [
            "0",
            "-0",
            "0.000",
            "-0.004",
            "1.005",
            "99.995",
            "99.994",
            "-99.995",
            "NaN",
            "Infinity",
            "-Infinity",
            "1e5",
            " 1",
            "1 ",
            "",
            ".",
            "-",
            "+.5",
            "7.",
            "1_000",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        v.push("9".repeat(1000));
        v.push(format!("0.{}", "1".repeat(999)));
        for _ in 0..1500 {
            let n = 1 + g.below(45) as usize;
            let d = g.digits(n);
            let at = g.below(n as u64 + 1) as usize;
            let sign = g.pick(&["", "", "-", "+"]);
            v.push(if g.below(3) == 0 {
                format!("{sign}{d}")
            } else {
                format!("{sign}{}.{}", &d[..at], &d[at..])
            });
            // halfway at two places
            let (int, last) = (g.some_digits(8), g.digits(1));
            v.push(format!("{sign}{int}.{last}5"));
        }
        for typmod in [
            None,
            Some((12, 2)),
            Some((5, 5)),
            Some((15, 2)),
            Some((40, 0)),
            Some((50, 5)),
        ] {
            let ty = match typmod {
                None => "numeric".to_string(),
                Some((p, s)) => format!("numeric({p},{s})"),
            };
            let t = typmod.map(|(precision, scale)| Typmod { precision, scale });
            // the core's body (short header, base-10000 digits) as numeric_send writes it:
            // ndigits, weight, sign, dscale, then the digits, each a big-endian int16
            let core = |b: &[u8]| {
                let mut body = [0u8; MAX_BODY];
                let n = parse_numeric(b, t, &mut body)?;
                let word = |i: usize| u16::from_ne_bytes([body[2 * i], body[2 * i + 1]]);
                let h = word(0);
                let sign: u16 = if h & 0x2000 != 0 { 0x4000 } else { 0 };
                let dscale = (h >> 7) & 0x3f;
                let weight = if h & 0x40 != 0 {
                    (h & 0x3f) as i16 - 64
                } else {
                    (h & 0x3f) as i16
                };
                let mut out = Vec::new();
                out.extend_from_slice(&((n / 2 - 1) as u16).to_be_bytes());
                out.extend_from_slice(&weight.to_be_bytes());
                out.extend_from_slice(&sign.to_be_bytes());
                out.extend_from_slice(&dscale.to_be_bytes());
                for i in 1..n / 2 {
                    out.extend_from_slice(&word(i).to_be_bytes());
                }
                Some(hex(&out))
            };
            // (numeric(5,5) takes only values below 1 in magnitude)
            let min = if typmod == Some((5, 5)) { 100 } else { 300 };
            assert_typed(&ty, "numeric_send", &v, &core, min);
        }
    }

    /// bytea in the hex format: every length from none to 300 bytes and one of 100 kB, digits of
    /// either case, and what `byteain` reads otherwise or refuses: whitespace between and around
    /// the pairs, an odd count, a byte that is no digit, `\X`, the escape format.
    #[pg_test]
    fn bytea_fast_path_matches_byteain() {
        let mut g = Gen(29);
        let mut v: Vec<String> = [
            "\\x",
            "\\X00",
            "\\x0",
            "\\x 00",
            "\\x00 ",
            " \\x00",
            "\\x0 0",
            "\\x00\n01",
            "\\x0g",
            "\\xg0",
            "abc",
            "\\000",
            "\\\\",
            "\\x\\x",
            "\\x00é",
            "x00",
            "",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        let digits = |g: &mut Gen, n: usize| -> String {
            (0..2 * n)
                .map(|_| {
                    let d = g.below(16) as u32;
                    let c = char::from_digit(d, 16).unwrap();
                    if g.below(3) == 0 {
                        c.to_ascii_uppercase()
                    } else {
                        c
                    }
                })
                .collect()
        };
        for n in 0..=300 {
            v.push(format!("\\x{}", digits(&mut g, n)));
        }
        v.push(format!("\\x{}", digits(&mut g, 100_000)));
        for _ in 0..600 {
            let n = g.below(40) as usize;
            let mut s = format!("\\x{}", digits(&mut g, n));
            // one in two broken or spelled otherwise
            let at = 2 + g.below(s.len() as u64 - 1) as usize;
            match g.below(8) {
                0 => s.insert(at, ' '),
                1 => s.insert(at, '\t'),
                2 => s.insert(
                    at,
                    g.pick(&["g", "G", "/", ":", "@", "`", "-", "x"])
                        .chars()
                        .next()
                        .unwrap(),
                ),
                3 => {
                    s.pop();
                }
                _ => {}
            }
            v.push(s);
        }
        let core = |b: &[u8]| fastcopy_core::bytea::parse_bytea(b).map(|x| hex(&x));
        // (the hex format without whitespace; the escape format is the server's)
        let plain = |s: &str| s.starts_with("\\x") && !s.contains([' ', '\t', '\n']);
        assert_typed_all("bytea", "byteasend", &v, &core, 500, &plain);
    }

    /// Binary numerics: `numeric_from_binary` (the binary loader's fast path) against the
    /// server's own `numeric_recv`, called on the same bytes: random ndigits, weights, scales and
    /// signs, digits with leading and trailing zeros and digits past the scale (which the server
    /// truncates and the core leaves to it). Every value the core takes has the server's body.
    #[pg_test]
    fn numeric_binary_fast_path_matches_numeric_recv() {
        let mut g = Gen(23);
        let (mut taken, mut total) = (0, 0);
        for _ in 0..4000 {
            let n = g.below(9) as usize;
            let weight = g.below(30) as i16 - 15;
            let sign: u16 = if g.below(2) == 0 { 0 } else { 0x4000 };
            let dscale = g.below(40) as u16;
            let mut b = Vec::new();
            for w in [n as u16, weight as u16, sign, dscale] {
                b.extend_from_slice(&w.to_be_bytes());
            }
            for k in 0..n {
                let d = match g.below(5) {
                    0 if k == 0 || k + 1 == n => 0,
                    1 => g.below(10) as u16 * 1000,
                    _ => g.below(10_000) as u16,
                };
                b.extend_from_slice(&d.to_be_bytes());
            }
            total += 1;
            let mut ours = vec![0u8; b.len()];
            let Some(len) = fastcopy_core::numeric::numeric_from_binary(&b, &mut ours) else {
                continue;
            };
            taken += 1;
            let mut data = b.clone();
            let mut buf = pg_sys::StringInfoData {
                data: data.as_mut_ptr() as *mut std::ffi::c_char,
                len: b.len() as i32,
                maxlen: b.len() as i32,
                cursor: 0,
            };
            // SAFETY: numeric_recv reads the StringInfo (our bytes, which outlive the call) and
            // returns a palloc'd varlena with a 4-byte header; the typmod -1 is "none".
            let server = unsafe {
                let d = pg_sys::OidReceiveFunctionCall(
                    pg_sys::Oid::from(pg_sys::F_NUMERIC_RECV),
                    &mut buf,
                    pg_sys::InvalidOid,
                    -1,
                );
                let p = d.cast_mut_ptr::<u8>();
                let size = (p as *const u32).read_unaligned() as usize >> 2;
                std::slice::from_raw_parts(p.add(4), size - 4).to_vec()
            };
            assert_eq!(server, ours[..len].to_vec(), "numeric_recv of {b:02x?}");
        }
        assert!(taken * 3 > total, "the core took {taken} of {total}");
    }
}
