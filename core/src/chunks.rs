//! The chunked input buffer every data format reads from (`CopyLoadInputBuf` and
//! `CopyConvertBuf` in `copyfromparse.c`): bytes come from any [`Read`] a chunk at a time, into
//! one growable buffer that holds the unconsumed tail (the row being decoded) plus what was
//! read after it, never the whole input.
//!
//! A decoder sees the buffer as `data()[pos()..]`, looks for a complete unit there (a line, a
//! tuple), calls [`fill`](Chunks::fill) when it needs more, and [`consume_to`](Chunks::consume_to)
//! once a unit is done. What it sees is what [`Verify`] says it may assume:
//!
//! - [`Verify::Utf8`] (text and CSV: the input is in the server encoding, UTF-8): `data()` is
//!   the longest prefix known to be valid UTF-8 without NUL bytes. An invalid sequence stops
//!   the data where it starts; [`bad`](Chunks::bad) then says so, and
//!   [`invalid_bytes`](Chunks::invalid_bytes) gives the bytes the server's
//!   `report_invalid_encoding` prints. As in the server, the check runs on whole chunks, ahead
//!   of the rows, so a decoder reports the error only when its scan reaches the bad byte.
//! - [`Verify::NulFree`] (the input in SQL_ASCII or a single-byte encoding): `data()` is the
//!   longest prefix without a NUL byte, the only byte those encodings refuse.
//! - [`Verify::Mb`] (the input in EUC_JP, EUC_CN, EUC_KR, EUC_TW, EUC_JIS_2004,
//!   MULE_INTERNAL, or a client-only multibyte encoding, [`crate::mb`]): valid characters without NUL; a character cut by the end of
//!   what was read waits for the next read, as UTF-8 does, unless the input ended or a whole
//!   character's worth (`maxmblen` bytes) is there (`CopyConvertBuf`'s rule).
//! - [`Verify::None`] (binary: text fields are checked one by one, after their length is
//!   known; or input the server converted before it came): `data()` is everything read.
//!
//! After the data, [`PAD`] more bytes of the buffer are always readable (never filled from the
//! source), so a decoder may load fixed-size blocks that run past the end.

use std::io::{self, Read};

/// Bytes after the data that are always readable: block loads may run past the data.
pub const PAD: usize = 64;

/// Default chunk size: how much is asked of the source per read.
pub const DEFAULT_CHUNK_BYTES: usize = 256 * 1024;

/// What [`Chunks::data`] guarantees about the bytes it returns.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Verify {
    /// Valid UTF-8 without NUL bytes (`pg_verify_mbstr` of UTF-8).
    Utf8,
    /// No NUL byte: what `pg_verify_mbstr` checks in SQL_ASCII and the single-byte encodings
    /// (LATIN1 and the rest), where every other byte is a character.
    NulFree,
    /// Valid characters of a multibyte server encoding other than UTF-8 (EUC_*,
    /// MULE_INTERNAL), without NUL bytes.
    Mb(crate::mb::MbEncoding),
    /// Nothing: the format checks what needs checking itself, or the bytes were checked
    /// (converted by the server) before they came.
    None,
}

/// A source read in chunks into one buffer; see the module documentation.
pub struct Chunks<R: Read> {
    src: R,
    buf: Vec<u8>,
    /// Start of the unit being decoded (everything before it has been consumed).
    pos: usize,
    /// End of the data read so far.
    filled: usize,
    /// `buf[..verified]` is what `verify` guarantees.
    verified: usize,
    /// The bytes at `verified` are definitely invalid.
    bad: bool,
    /// The source reported end of file.
    eof: bool,
    chunk: usize,
    bytes_read: u64,
    verify: Verify,
}

impl<R: Read> Chunks<R> {
    /// `chunk_bytes` (at least 1) is how much is asked of the source per read; the buffer
    /// grows beyond it only to hold a unit longer than that.
    pub fn new(src: R, chunk_bytes: usize, verify: Verify) -> Self {
        let chunk = chunk_bytes.max(1);
        Chunks {
            src,
            buf: vec![0; chunk + PAD],
            pos: 0,
            filled: 0,
            verified: 0,
            bad: false,
            eof: false,
            chunk,
            bytes_read: 0,
            verify,
        }
    }

    /// The buffer up to the end of the usable data; indices are those of [`pos`](Self::pos).
    #[inline]
    pub fn data(&self) -> &[u8] {
        &self.buf[..self.verified]
    }

    /// The buffer with [`PAD`] readable bytes (or more) after [`data`](Self::data).
    #[inline]
    pub fn padded(&self) -> &[u8] {
        debug_assert!(self.verified + PAD <= self.buf.len());
        &self.buf
    }

    /// Where the unit being decoded starts in [`data`](Self::data).
    #[inline]
    pub fn pos(&self) -> usize {
        self.pos
    }

    /// The unit ended at `next` (an index into [`data`](Self::data)): the next one starts there.
    #[inline]
    pub fn consume_to(&mut self, next: usize) {
        debug_assert!(next >= self.pos && next <= self.verified);
        self.pos = next;
    }

    /// The offset in the source of [`pos`](Self::pos): bytes consumed so far.
    #[inline]
    pub fn consumed(&self) -> u64 {
        self.bytes_read - (self.filled - self.pos) as u64
    }

    /// All of the source has been read and is usable: nothing more will come.
    #[inline]
    pub fn at_eof(&self) -> bool {
        self.eof && !self.bad && self.verified == self.filled
    }

    /// The bytes right after [`data`](Self::data) are invalid (with [`Verify::Utf8`] or
    /// [`Verify::NulFree`]).
    #[inline]
    pub fn bad(&self) -> bool {
        self.bad
    }

    /// Bytes read from the source so far (like the server's `bytes_processed`, what was
    /// loaded, which runs ahead of the units decoded by up to one chunk).
    #[inline]
    pub fn bytes_read(&self) -> u64 {
        self.bytes_read
    }

    /// Loads more data: moves the unconsumed tail to the front, grows the buffer if the tail
    /// fills it, reads once, verifies what is new. At EOF it only records that the source
    /// ended (a decoder that still needs more then knows the input is truncated).
    pub fn fill(&mut self) -> io::Result<()> {
        if self.pos > 0 {
            self.buf.copy_within(self.pos..self.filled, 0);
            self.filled -= self.pos;
            self.verified -= self.pos;
            self.pos = 0;
        }
        let cap = self.buf.len() - PAD;
        if cap - self.filled < self.chunk.div_ceil(4) {
            let new_cap = (cap * 2).max(self.filled + self.chunk);
            self.buf.resize(new_cap + PAD, 0);
        }
        let cap = self.buf.len() - PAD;
        let n = loop {
            match self.src.read(&mut self.buf[self.filled..cap]) {
                Ok(n) => break n,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(e),
            }
        };
        if n == 0 {
            self.eof = true;
        }
        self.filled += n;
        self.bytes_read += n as u64;
        self.verify_new();
        Ok(())
    }

    /// Verifies what was read after `verified` (nothing once the input is bad).
    fn verify_new(&mut self) {
        match self.verify {
            Verify::None => self.verified = self.filled,
            Verify::Utf8 if !self.bad => {
                let (ok, definite) = verify_utf8(&self.buf[self.verified..self.filled]);
                self.verified += ok;
                if definite || (self.eof && self.verified < self.filled) {
                    self.bad = true;
                }
            }
            Verify::NulFree if !self.bad => {
                match memchr::memchr(0, &self.buf[self.verified..self.filled]) {
                    Some(k) => {
                        self.verified += k;
                        self.bad = true;
                    }
                    None => self.verified = self.filled,
                }
            }
            Verify::Mb(enc) if !self.bad => {
                self.verified += enc.verify(&self.buf[self.verified..self.filled]);
                // as CopyConvertBuf: invalid once the input ended, or once a whole character
                // could have been verified
                let rest = self.filled - self.verified;
                if rest > 0 && (self.eof || rest >= enc.max_length()) {
                    self.bad = true;
                }
            }
            Verify::Utf8 | Verify::NulFree | Verify::Mb(_) => {}
        }
    }

    /// With [`bad`](Self::bad) set: consumes the unit at `pos` up to the first line end
    /// (`\n`, `\r\n` or `\r`) at or after the invalid bytes, or to the end of the input, and
    /// verifies on from there. Returns the bytes consumed and how many of them are the line
    /// end.
    pub fn skip_invalid_line(&mut self) -> io::Result<(Vec<u8>, usize)> {
        debug_assert!(self.bad);
        loop {
            let from = self.verified;
            let found = memchr::memchr2(b'\n', b'\r', &self.buf[from..self.filled]);
            let end = match found {
                // a `\r` last in what is read: a `\n` may follow it
                Some(k)
                    if self.buf[from + k] == b'\r' && from + k + 1 == self.filled && !self.eof =>
                {
                    None
                }
                Some(k)
                    if self.buf[from + k] == b'\r'
                        && self.buf.get(from + k + 1) == Some(&b'\n')
                        && from + k + 1 < self.filled =>
                {
                    Some((from + k + 2, 2))
                }
                Some(k) => Some((from + k + 1, 1)),
                None if self.eof => Some((self.filled, 0)),
                None => None,
            };
            if let Some((next, eol)) = end {
                let raw = self.buf[self.pos..next].to_vec();
                self.pos = next;
                self.verified = next;
                self.bad = false;
                self.verify_new();
                return Ok((raw, eol));
            }
            self.fill()?;
        }
    }

    /// With [`bad`](Self::bad) set: the bytes the server prints for the invalid sequence,
    /// after loading up to 4 of them (or all that is left), as the server's raw buffer has
    /// them when it reports (`CopyConversionError`).
    pub fn invalid_bytes(&mut self) -> io::Result<Vec<u8>> {
        debug_assert!(self.bad);
        while self.filled - self.verified < 4 && !self.eof {
            self.fill()?;
        }
        Ok(invalid_bytes_in(
            self.verify,
            &self.buf[self.verified..self.filled],
        ))
    }
}

/// The server's `pg_utf_mblen`: the length a UTF-8 lead byte announces (1 for invalid leads).
#[inline]
fn utf8_mblen(b: u8) -> usize {
    if b & 0x80 == 0 {
        1
    } else if b & 0xe0 == 0xc0 {
        2
    } else if b & 0xf0 == 0xe0 {
        3
    } else if b & 0xf8 == 0xf0 {
        4
    } else {
        1
    }
}

/// Length of the longest prefix of `s` that is valid UTF-8 without NUL bytes
/// (`pg_utf8_verifystr`), and whether the rest is definitely invalid (as opposed to a
/// truncated but so far valid multibyte character at the very end).
pub(crate) fn verify_utf8(s: &[u8]) -> (usize, bool) {
    let (ok, definite) = match std::str::from_utf8(s) {
        Ok(_) => (s.len(), false),
        Err(e) => (e.valid_up_to(), e.error_len().is_some()),
    };
    match memchr::memchr(0, &s[..ok]) {
        Some(k) => (k, true),
        None => (ok, definite),
    }
}

/// Whether `s` is valid UTF-8 without NUL bytes (what `pg_verify_mbstr` of UTF-8 accepts).
pub fn is_utf8_text(s: &[u8]) -> bool {
    verify_utf8(s).0 == s.len()
}

/// The bytes `report_invalid_encoding` prints for an invalid UTF-8 sequence starting at
/// `s[0]` (in a single-byte encoding the one invalid byte, NUL, has length 1 there too).
pub(crate) fn invalid_bytes(s: &[u8]) -> Vec<u8> {
    let n = utf8_mblen(s[0]).min(s.len()).min(8);
    s[..n].to_vec()
}

/// The bytes `report_invalid_encoding` prints for an invalid sequence at `s[0]`, checked as
/// `verify` says: as many as the encoding's `mblen` of its first byte, at most what is left
/// and 8.
pub(crate) fn invalid_bytes_in(verify: Verify, s: &[u8]) -> Vec<u8> {
    match verify {
        Verify::Mb(enc) => s[..enc.mblen(s).min(s.len()).min(8)].to_vec(),
        _ => invalid_bytes(s),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A source that returns at most `step` bytes per read.
    struct Trickle<'a> {
        data: &'a [u8],
        step: usize,
    }

    impl Read for Trickle<'_> {
        fn read(&mut self, out: &mut [u8]) -> io::Result<usize> {
            let n = self.step.min(self.data.len()).min(out.len());
            out[..n].copy_from_slice(&self.data[..n]);
            self.data = &self.data[n..];
            Ok(n)
        }
    }

    #[test]
    fn keeps_the_unconsumed_tail_and_grows_for_long_units() {
        let input: Vec<u8> = (0..1000u32).map(|i| b'a' + (i % 26) as u8).collect();
        let mut c = Chunks::new(
            Trickle {
                data: &input,
                step: 7,
            },
            16,
            Verify::Utf8,
        );
        let mut got = Vec::new();
        // consume in units of 40 bytes, longer than a chunk
        loop {
            while c.data().len() - c.pos() < 40 && !c.at_eof() {
                c.fill().unwrap();
            }
            let end = (c.pos() + 40).min(c.data().len());
            if end == c.pos() {
                break;
            }
            got.extend_from_slice(&c.data()[c.pos()..end]);
            assert!(c.padded().len() >= c.data().len() + PAD);
            c.consume_to(end);
        }
        assert_eq!(got, input);
        assert_eq!(c.bytes_read(), input.len() as u64);
    }

    #[test]
    fn utf8_stops_at_the_first_invalid_byte_and_reports_the_servers_bytes() {
        // a 3-byte character split across reads, then an invalid lead with its tail
        let input = "ab€cd"
            .as_bytes()
            .iter()
            .copied()
            .chain([0xe9, b'x', b'y', b'z', b'w']);
        let input: Vec<u8> = input.collect();
        let mut c = Chunks::new(
            Trickle {
                data: &input,
                step: 3,
            },
            4,
            Verify::Utf8,
        );
        while !c.bad() && !c.at_eof() {
            c.fill().unwrap();
        }
        assert!(c.bad());
        assert_eq!(c.data(), "ab€cd".as_bytes());
        // 0xe9 announces 3 bytes: the server prints them
        assert_eq!(c.invalid_bytes().unwrap(), vec![0xe9, b'x', b'y']);
    }

    #[test]
    fn a_nul_byte_is_invalid_and_a_truncated_character_at_eof_too() {
        let mut c = Chunks::new(&b"ab\0c"[..], 64, Verify::Utf8);
        c.fill().unwrap();
        assert!(c.bad());
        assert_eq!(c.data(), b"ab");
        assert_eq!(c.invalid_bytes().unwrap(), vec![0]);

        let mut c = Chunks::new(&[b'a', 0xe2, 0x82][..], 64, Verify::Utf8);
        while !c.bad() && !c.at_eof() {
            c.fill().unwrap();
        }
        assert!(c.bad());
        assert_eq!(c.data(), b"a");
        assert_eq!(c.invalid_bytes().unwrap(), vec![0xe2, 0x82]);
    }

    #[test]
    fn unverified_data_is_all_usable() {
        let input = [0u8, 0xff, 0xfe, 1, 2];
        let mut c = Chunks::new(&input[..], 2, Verify::None);
        while !c.at_eof() {
            c.fill().unwrap();
        }
        assert!(!c.bad());
        assert_eq!(c.data(), &input);
    }

    #[test]
    fn read_errors_pass_through_and_interrupts_are_retried() {
        struct Flaky(u8);
        impl Read for Flaky {
            fn read(&mut self, out: &mut [u8]) -> io::Result<usize> {
                self.0 += 1;
                match self.0 {
                    1 => Err(io::ErrorKind::Interrupted.into()),
                    2 => {
                        out[0] = b'x';
                        Ok(1)
                    }
                    _ => Err(io::Error::from_raw_os_error(5)),
                }
            }
        }
        let mut c = Chunks::new(Flaky(0), 8, Verify::Utf8);
        c.fill().unwrap();
        assert_eq!(c.data(), b"x");
        let e = c.fill().unwrap_err();
        assert_eq!(e.raw_os_error(), Some(5));
    }

    #[test]
    fn multibyte_characters_wait_for_their_last_byte() {
        use crate::mb::MbEncoding;
        // 日本 in EUC_JP, read a byte at a time: a character becomes data once it is whole
        let input = b"a\xc6\xfc\xcb\xdc";
        let mut c = Chunks::new(
            Trickle {
                data: input,
                step: 1,
            },
            1,
            Verify::Mb(MbEncoding::EucJp),
        );
        let mut seen = Vec::new();
        while !c.at_eof() {
            c.fill().unwrap();
            seen.push(c.data().len());
        }
        assert_eq!(seen, vec![1, 1, 3, 3, 5, 5]);
        assert!(!c.bad());
        // an invalid second byte: bad once a whole character could have been read
        let mut c = Chunks::new(
            Trickle {
                data: b"a\xc6\x41xyz",
                step: 1,
            },
            1,
            Verify::Mb(MbEncoding::EucJp),
        );
        while !c.bad() {
            c.fill().unwrap();
        }
        assert_eq!(c.data(), b"a");
        assert_eq!(c.invalid_bytes().unwrap(), vec![0xc6, 0x41]);
        // cut short by the end of the input
        let mut c = Chunks::new(&b"ab\x8f\xb0"[..], 64, Verify::Mb(MbEncoding::EucJp));
        c.fill().unwrap();
        c.fill().unwrap();
        assert!(c.bad());
        assert_eq!(c.invalid_bytes().unwrap(), vec![0x8f, 0xb0]);
    }

    #[test]
    fn nul_free_stops_at_a_nul_only() {
        // LATIN1 / SQL_ASCII: every byte but NUL is a character, also what is invalid UTF-8
        let input = b"caf\xe9 \xff\x80ok\0rest";
        let mut c = Chunks::new(
            Trickle {
                data: input,
                step: 2,
            },
            3,
            Verify::NulFree,
        );
        while !c.bad() && !c.at_eof() {
            c.fill().unwrap();
        }
        assert!(c.bad());
        assert_eq!(c.data(), b"caf\xe9 \xff\x80ok");
        assert_eq!(c.invalid_bytes().unwrap(), vec![0]);
        let mut c = Chunks::new(&b"\xe9\xe9"[..], 1, Verify::NulFree);
        while !c.at_eof() {
            c.fill().unwrap();
        }
        assert_eq!(c.data(), b"\xe9\xe9");
    }
}
