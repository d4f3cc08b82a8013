//! One trait for COPY's data formats: a [`Decoder`] turns the bytes of a source into rows of
//! fields ([`Row`]), with the server's errors ([`InputError`]).
//!
//! Text and CSV are one decoder, [`RowReader`] (`input/`): they share the line scan and differ
//! in the splitter. Every decoder reads its bytes through the chunked buffer
//! [`Chunks`](crate::chunks::Chunks) (refill, the unfinished unit kept, verification as the
//! format needs it). A new format is one new decoder file implementing this trait (filling rows through [`Row::begin`], [`Row::push_value`],
//! [`Row::push_null`] and [`Row::end`]) and one arm where the loader picks the decoder for the format; the
//! block pipeline ([`crate::pipeline`]) and everything after it take any decoder.

use crate::input::{InputError, Row, RowReader};
use crate::plan::{FusedPlan, IntPlan, RowMark};
use std::io::Read;

/// Reads rows of one COPY data format from a byte source.
pub trait Decoder {
    /// Reads the next row into `row` (its buffers are reused); `Ok(false)` once the data has
    /// ended. After an error or the end, it only returns `Ok(false)`.
    fn next_row(&mut self, row: &mut Row) -> Result<bool, InputError>;

    /// Bytes read from the source so far (the progress view's `bytes_processed`).
    fn bytes_read(&self) -> u64;

    /// The next row can be read from what is buffered, without reading the source (or the
    /// data has ended). `true` when the decoder cannot tell: it is a hint for
    /// [`RowBlock::fill`](crate::pipeline::RowBlock::fill), which hands over the rows it has
    /// before the reader would wait for a stream (COPY loads every complete line it has
    /// before it reads more input).
    fn row_buffered(&self) -> bool {
        true
    }

    /// COPY's `cur_lineno`: the lines (binary: tuples) read so far, the end marker's (or the
    /// trailer's) included. What a CONTEXT names while the rest of a stream is read after
    /// the end marker.
    fn lines_read(&self) -> u64;

    /// The offset in the input of the next row's start (after a row is read: of the byte
    /// after it), if the decoder can tell.
    fn consumed(&self) -> Option<u64> {
        None
    }

    /// Whether [`next_int_row`](Self::next_int_row) may be tried with `plan` (by default it
    /// is never worth it).
    fn int_rows(&self, _plan: &IntPlan) -> bool {
        false
    }

    /// Reads the next row if the decoder can convert all of its fields by `plan` and form
    /// its tuple as it reads it: its columns' bytes into `tuple` (a slot that holds the plan's
    /// template) and, unless it is empty, into `kept` (the tuple's data bytes, which the block
    /// keeps beside the slots: [`FusedField::data_at`]), and into `row` what a CONTEXT line needs (its raw line, number and lengths;
    /// no fields: the loader reads only the tuple of such a row); returns its mark. None,
    /// nothing read, for any other row: [`next_row`](Self::next_row) then reads it.
    fn next_int_row(
        &mut self,
        _plan: &FusedPlan,
        _row: &mut Row,
        _tuple: &mut [u8],
        _kept: &mut [u8],
    ) -> Option<RowMark> {
        None
    }
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

    fn row_buffered(&self) -> bool {
        RowReader::row_buffered(self)
    }

    fn lines_read(&self) -> u64 {
        RowReader::lines_read(self)
    }

    #[inline]
    fn consumed(&self) -> Option<u64> {
        Some(RowReader::consumed(self))
    }

    fn int_rows(&self, plan: &IntPlan) -> bool {
        RowReader::int_rows(self, plan)
    }

    #[inline(always)]
    fn next_int_row(
        &mut self,
        plan: &FusedPlan,
        row: &mut Row,
        tuple: &mut [u8],
        kept: &mut [u8],
    ) -> Option<RowMark> {
        RowReader::next_int_row(self, plan, row, tuple, kept)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::chunks::{Chunks, Verify};
    use crate::input::{Field, Options};

    /// A decoder of its own: rows of length-prefixed fields (one byte: length, 255 = NULL),
    /// a row ending at a 0 length byte, read through the shared chunk buffer without
    /// verification (as the binary reader is, `crate::binary`). Shows that a format needs only `Decoder`, `Chunks`
    /// and the row builder, and that the block pipeline takes it.
    struct Prefixed<R: Read> {
        input: Chunks<R>,
        rows: u64,
    }

    impl<R: Read> Prefixed<R> {
        /// Makes sure `n` bytes after the row start `pos()` are loaded: Ok(false) if the
        /// input ends first.
        fn need(&mut self, n: usize) -> Result<bool, InputError> {
            while self.input.data().len() - self.input.pos() < n {
                if self.input.at_eof() {
                    return Ok(false);
                }
                self.input.fill().expect("a slice reads without error");
            }
            Ok(true)
        }
    }

    impl<R: Read> Decoder for Prefixed<R> {
        fn next_row(&mut self, row: &mut Row) -> Result<bool, InputError> {
            if !self.need(1)? {
                return Ok(false);
            }
            self.rows += 1;
            row.begin(self.rows);
            let mut at = 0; // relative to the row start: the buffer may move under a fill
            loop {
                assert!(self.need(at + 1)?, "truncated row");
                let n = self.input.data()[self.input.pos() + at];
                at += 1;
                match n {
                    0 => break,
                    255 => row.push_null(),
                    n => {
                        let n = n as usize;
                        assert!(self.need(at + n)?, "truncated field");
                        let p = self.input.pos() + at;
                        row.push_value(&self.input.data()[p..p + n]);
                        at += n;
                    }
                }
            }
            row.end(at);
            let next = self.input.pos() + at;
            self.input.consume_to(next);
            Ok(true)
        }

        fn bytes_read(&self) -> u64 {
            self.input.bytes_read()
        }

        fn lines_read(&self) -> u64 {
            self.rows
        }
    }

    #[test]
    fn another_format_fills_the_same_rows() {
        let data = [2, b'a', 0, 255, 1, b'x', 3, b'1', 0, b'2', 0];
        // 3-byte chunks: every row and field crosses a refill
        let mut d = Prefixed {
            input: Chunks::new(&data[..], 3, Verify::None),
            rows: 0,
        };
        let mut block = crate::pipeline::RowBlock::new(8);
        block.fill(&mut d, 1 << 20, None, None);
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
