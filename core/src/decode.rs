//! One trait for COPY's data formats: a [`Decoder`] turns the bytes of a source into rows of
//! fields ([`Row`]), with the server's errors ([`InputError`]).
//!
//! Text and CSV are one decoder, [`RowReader`] (`input/`): they share the line scan and the
//! chunked, verified buffer, and differ in the splitter. A new format is one new decoder file
//! implementing this trait (filling rows through [`Row::begin`], [`Row::push_value`],
//! [`Row::push_null`] and [`Row::end`]) and one arm where the loader picks the decoder for the format; the
//! block pipeline ([`crate::pipeline`]) and everything after it take any decoder.

use crate::input::{InputError, Row, RowReader};
use std::io::Read;

/// Reads rows of one COPY data format from a byte source.
pub trait Decoder {
    /// Reads the next row into `row` (its buffers are reused); `Ok(false)` once the data has
    /// ended. After an error or the end, it only returns `Ok(false)`.
    fn next_row(&mut self, row: &mut Row) -> Result<bool, InputError>;

    /// Bytes read from the source so far (the progress view's `bytes_processed`).
    fn bytes_read(&self) -> u64;
}

impl<R: Read> Decoder for RowReader<R> {
    #[inline]
    fn next_row(&mut self, row: &mut Row) -> Result<bool, InputError> {
        RowReader::next_row(self, row)
    }

    #[inline]
    fn bytes_read(&self) -> u64 {
        RowReader::bytes_read(self)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::input::{Field, Options};

    /// A decoder of its own: rows of length-prefixed fields (one byte: length, 255 = NULL),
    /// a row ending at a 0 length byte. Shows that a format needs only `Decoder` and the
    /// row builder, and that the block pipeline takes it.
    struct Prefixed<'a> {
        data: &'a [u8],
        at: usize,
        rows: u64,
    }

    impl Decoder for Prefixed<'_> {
        fn next_row(&mut self, row: &mut Row) -> Result<bool, InputError> {
            if self.at >= self.data.len() {
                return Ok(false);
            }
            self.rows += 1;
            let start = self.at;
            row.begin(self.rows);
            loop {
                let n = self.data[self.at];
                self.at += 1;
                match n {
                    0 => break,
                    255 => row.push_null(),
                    n => {
                        let n = n as usize;
                        row.push_value(&self.data[self.at..self.at + n]);
                        self.at += n;
                    }
                }
            }
            row.end(self.at - start);
            Ok(true)
        }

        fn bytes_read(&self) -> u64 {
            self.at as u64
        }
    }

    #[test]
    fn another_format_fills_the_same_rows() {
        let data = [2, b'a', 0, 255, 1, b'x', 3, b'1', 0, b'2', 0];
        let mut d = Prefixed {
            data: &data,
            at: 0,
            rows: 0,
        };
        let mut block = crate::pipeline::RowBlock::new(8);
        block.fill(&mut d, 1 << 20, None);
        let rows = block.rows();
        assert_eq!(rows.len(), 1);
        let r = &rows[0];
        assert_eq!(r.len(), 4);
        assert_eq!(r.field(0), Field::Value(b"a\0"));
        assert_eq!(r.field(1), Field::Null);
        assert_eq!(r.field(2), Field::Value(b"x"));
        // a value may hold a NUL; the byte after it is still a NUL
        assert_eq!(r.field(3), Field::Value(b"1\x002"));
        let (buf, n) = r.value_in(3).unwrap();
        assert_eq!((&buf[..n], buf[n]), (&b"1\x002"[..], 0));
        assert_eq!(r.line_no(), 1);
        assert_eq!(r.raw_len(), data.len());
        assert_eq!(block.bytes_read, data.len() as u64);
        assert!(matches!(block.end, Some(Ok(()))));
        // and the text reader is a Decoder too
        let mut text = RowReader::new(&b"1\t2\n"[..], Options::text());
        let mut row = Row::new();
        assert!(Decoder::next_row(&mut text, &mut row).unwrap());
        assert_eq!(row.field(1), Field::Value(b"2"));
    }
}
