//! Blocks of rows: the unit in which the reader hands rows to the loader, on the same thread
//! or from a reader thread running ahead of it.
//!
//! A [`RowBlock`] holds up to a fixed number of [`Row`]s (their buffers are reused from block
//! to block) and, after its last row, how the input ended if it did: `Ok` at the end of the
//! data, or the error that stopped the reader. The loader processes every row of a block
//! before it looks at `end`, so errors surface in input order, exactly as with one row at a
//! time. [`produce`] is the reader thread's loop: fill an empty block, send it, repeat; it
//! stops at the end of the input, or as soon as the consumer has gone away.
//!
//! With an [`IntPlan`], filling a block also converts the integer fields it names with the int
//! core, so that on a reader thread that work too runs ahead of the loader. A field that is
//! not a value or does not convert is left to the loader, which converts it again and raises
//! the error in order.
//!
//! With a [`TuplePlan`] as well (a table whose every column is an integer field of the
//! input, or a `char(n)` field), it also forms each row's tuple: the bytes the loader would
//! form, from a template the extension made (the tuple's header and the memory in front of
//! it, which this crate does not interpret) with the row's integers written at their offsets
//! and its `char(n)` values over the template's spaces. A row it cannot form (a field that is
//! NULL or did not convert, a `char(n)` value that is not plain ASCII of at most n bytes, a
//! wrong number of fields) is left to the loader,
//! which forms it, or raises its error, as for any row. Where the decoder offers it
//! ([`Decoder::next_int_row`]), a line of plain integers is read, converted and formed in one
//! pass, and the two later passes skip it (its row keeps only its line, for a CONTEXT line);
//! every other row takes all three.
//!
//! A table with text, `date`, `timestamp(tz)` or `numeric` columns has a varying plan
//! ([`TuplePlan::varying`], [`crate::varying`]): each formed tuple is written at the end of the
//! block's tuple bytes, at its own length, and the loader finds it by the row's span.
//!
//! Beside the rows, each row's line number and length ([`RowBlock::mark`]): all the loader reads
//! of a row whose tuple was formed, without touching the row the reader thread just wrote.

use crate::decode::Decoder;
use crate::input::{Field, InputError, Row, prefetch_line};
use crate::int;
pub use crate::plan::{FusedField, FusedPlan, IntPlan, IntWidth, RowMark, TuplePlan};
use crate::stream::Readiness;
use crate::varying::{VaryingPlan, plain_ascii};
use std::sync::mpsc::{Receiver, SyncSender};

/// Forming a plan's tuples from rows (the plan itself is in [`crate::plan`]).
impl TuplePlan {
    /// The varying plan's tuple of `row` (its integer fields converted in `ints`) appended
    /// to `out`; its length, or `None` (and `out` as it was) when the loader must form it.
    #[inline]
    fn form_varying(
        &self,
        v: &VaryingPlan,
        ints: &[Option<i64>],
        row: &Row,
        out: &mut Vec<u8>,
    ) -> Option<usize> {
        if row.len() != self.nfields {
            return None;
        }
        v.form(ints, |f| row.field(f), out)
    }

    /// Writes the tuple of `row` into `out` (`len()` long), with its integer fields
    /// converted in `ints` (one per input field); false, leaving `out` in an unspecified
    /// state, when a column's field did not convert or does not fit its width, or a `char(n)`
    /// field is not a value of at most n ASCII bytes. `row` has `nfields` fields.
    #[inline]
    pub(crate) fn form(&self, ints: &[Option<i64>], row: &Row, out: &mut [u8]) -> bool {
        out.copy_from_slice(&self.template);
        for &(f, at, n) in &self.padded {
            let Field::Value(v) = row.field(f) else {
                return false;
            };
            // (a NUL byte too goes to the server's function: it ends the C string there)
            if v.len() > n || !plain_ascii(v) {
                return false;
            }
            // the template's spaces after it are the padding
            out[at..at + v.len()].copy_from_slice(v);
        }
        for &(f, at, w) in &self.columns {
            let Some(v) = ints[f] else { return false };
            let le = v.to_le_bytes();
            match w {
                2 if i16::try_from(v).is_ok() => out[at..at + 2].copy_from_slice(&le[..2]),
                4 if i32::try_from(v).is_ok() => out[at..at + 4].copy_from_slice(&le[..4]),
                8 => out[at..at + 8].copy_from_slice(&le),
                _ => return false,
            }
        }
        true
    }
}

/// Rows in a row that [`Decoder::next_int_row`] declines before a block stops trying it.
const FUSED_DECLINES: u32 = 32;
/// How many rows ahead [`RowBlock::convert`] asks for a row's fields (and twice that for the
/// row itself): as the loader does on the backend.
const CONVERT_AHEAD: usize = 8;

pub struct RowBlock {
    rows: Vec<Row>,
    len: usize,
    /// With an [`IntPlan`] of n fields: `ints[r * n + f]` is field f of row r, converted
    /// (stale for a row [`Decoder::next_int_row`] read: its tuple holds its values).
    ints: Vec<Option<i64>>,
    width: usize,
    /// With a [`TuplePlan`] of n bytes: `tuples[r * n..]` is row r's tuple if `formed[r]`;
    /// with a varying plan, `tuples[spans[r].0..]`, `spans[r].1` bytes long.
    tuples: Vec<u8>,
    tuple_len: usize,
    /// The block's tuples are of a varying plan.
    varying: bool,
    spans: Vec<(u32, u32)>,
    /// The template every tuple slot holds outside its columns' bytes (see `fill`).
    template: Vec<u8>,
    /// With a plan that has its data bytes (`TuplePlan::with_data`): `data[r * n..]`, n =
    /// `data_len` bytes, are the data bytes of row r's tuple if `formed[r]`, the same as in
    /// its slot from `data_at` on; `data_len` 0 without.
    data: Vec<u8>,
    data_at: usize,
    data_len: usize,
    /// Row r's tuple is formed (set as the row is read when the decoder formed it in one pass,
    /// [`Decoder::next_int_row`], else after the block is read).
    formed: Vec<bool>,
    /// Per row: its line number and input bytes, side by side for the loader (which, for a
    /// formed tuple, needs nothing else of the row: reading them from the rows themselves
    /// took a cache line the reader thread had just written for every row).
    marks: Vec<RowMark>,
    /// Bytes the reader had consumed from its source when the block was filled.
    pub bytes_read: u64,
    /// `Some` once the input ended: after the rows of this block there are no more.
    pub end: Option<Result<(), InputError>>,
    /// The decoder's [`lines_read`](Decoder::lines_read) when the block was filled.
    pub lines_read: u64,
    /// The offset in the input of the first row's start, if the decoder tells
    /// ([`Decoder::consumed`]); the rows after it follow one another ([`Row::raw_len`]).
    pub first_offset: Option<u64>,
    /// When the input ended with an error: the offset of the row the decoder could not read
    /// (after the block's last row; without rows, where the block began, unless that was the
    /// input's start, which header lines may follow).
    pub end_offset: Option<u64>,
}

impl RowBlock {
    pub fn new(capacity: usize) -> RowBlock {
        RowBlock {
            rows: (0..capacity.max(1)).map(|_| Row::new()).collect(),
            len: 0,
            ints: Vec::new(),
            width: 0,
            tuples: Vec::new(),
            tuple_len: 0,
            varying: false,
            spans: Vec::new(),
            template: Vec::new(),
            data: Vec::new(),
            data_at: 0,
            data_len: 0,
            formed: Vec::new(),
            marks: Vec::new(),
            bytes_read: 0,
            lines_read: 0,
            end: None,
            first_offset: None,
            end_offset: None,
        }
    }

    /// A block without room for rows: a place to keep the current block in before the first.
    pub fn placeholder() -> RowBlock {
        RowBlock {
            rows: Vec::new(),
            len: 0,
            ints: Vec::new(),
            width: 0,
            tuples: Vec::new(),
            tuple_len: 0,
            varying: false,
            spans: Vec::new(),
            template: Vec::new(),
            data: Vec::new(),
            data_at: 0,
            data_len: 0,
            formed: Vec::new(),
            marks: Vec::new(),
            bytes_read: 0,
            lines_read: 0,
            end: None,
            first_offset: None,
            end_offset: None,
        }
    }

    /// The offset in the input of row `r`'s start, if the decoder tells (the rows before it
    /// in the block added up: for the rare row that needs it).
    pub fn row_offset(&self, r: usize) -> Option<u64> {
        Some(self.row_offset_from(0, self.first_offset?, r))
    }

    /// The offset of row `r`, given row `from`'s (`at`, `from` at most `r`): the rows between
    /// added up (a caller that asks in row order adds each row once).
    pub fn row_offset_from(&self, from: usize, at: u64, r: usize) -> u64 {
        at + self.rows[from..r]
            .iter()
            .map(|row| row.raw_len() as u64)
            .sum::<u64>()
    }

    /// Whether this is a [`placeholder`](Self::placeholder) (never worth handing to a reader).
    pub fn is_placeholder(&self) -> bool {
        self.rows.is_empty()
    }

    /// The rows read into this block.
    #[inline]
    pub fn rows(&self) -> &[Row] {
        &self.rows[..self.len]
    }

    /// Integer fields of row `r` converted by the plan (empty without a plan); `None` where
    /// the loader must convert the field itself. Not for a row whose tuple
    /// [`Decoder::next_int_row`] formed (neither its fields nor these are kept: the loader
    /// reads only its tuple).
    #[inline]
    pub fn ints(&self, r: usize) -> &[Option<i64>] {
        &self.ints[r * self.width..(r + 1) * self.width]
    }

    /// Row `r`'s line number and input bytes.
    #[inline]
    pub fn mark(&self, r: usize) -> RowMark {
        self.marks[r]
    }

    /// For a loader at row `r`: starts loading the fields of row `r + ahead` into the cache
    /// ([`Row::prefetch`]) if the block has it and the loader will read it (its tuple was not
    /// formed), and the row itself (where its fields are) of row `r + 2 * ahead` (the same
    /// unless formed), which the hint for its fields will read.
    #[inline(always)]
    pub fn prefetch(&self, r: usize, ahead: usize) {
        let rows = &self.rows[..self.len];
        if let Some(row) = rows.get(r + ahead)
            && !self.is_formed(r + ahead)
        {
            row.prefetch();
        }
        if let Some(row) = rows.get(r + 2 * ahead)
            && !self.is_formed(r + 2 * ahead)
        {
            prefetch_line(std::ptr::from_ref(row).cast());
        }
    }

    /// Row `r`'s tuple, formed by the plan's [`TuplePlan`]; `None` where the loader must
    /// form it (or raise the row's error) itself.
    #[inline(always)]
    pub fn tuple(&self, r: usize) -> Option<&[u8]> {
        let n = self.tuple_len;
        if n > 0 {
            return self.formed[r].then(|| &self.tuples[r * n..(r + 1) * n]);
        }
        (self.varying && self.formed[r]).then(|| {
            let (at, len) = self.spans[r];
            &self.tuples[at as usize..(at + len) as usize]
        })
    }

    /// For a loader at row `r` of a run of formed tuples of a fixed plan: starts loading the
    /// tuple (both lines of a slot that spans two), mark and formed flag of row `r + ahead`
    /// into the cache (the reader thread wrote
    /// them on the other core; read one after the other, each line would stall the loop).
    #[inline(always)]
    pub fn prefetch_formed(&self, r: usize, ahead: usize) {
        let i = r + ahead;
        if i < self.len {
            // the slot's first and last bytes: a slot that does not start a line spans two
            // (the loader reads the data bytes at its end)
            let slot = self.tuples.as_ptr().wrapping_add(i * self.tuple_len);
            prefetch_line(slot);
            prefetch_line(slot.wrapping_add(self.tuple_len - 1));
            prefetch_line(self.marks.as_ptr().wrapping_add(i).cast());
            prefetch_line(self.formed.as_ptr().wrapping_add(i).cast());
        }
    }

    /// Whether the block's formed tuples are of a fixed plan: all of one length and layout,
    /// the values in their data bytes only (not a varying plan).
    #[inline]
    pub fn fixed_tuples(&self) -> bool {
        self.tuple_len > 0
    }

    /// Bytes of a formed tuple's data kept side by side ([`RowBlock::data_run`]); 0 when the
    /// block keeps none (a plan without them, a varying plan).
    #[inline]
    pub fn data_len(&self) -> usize {
        self.data_len
    }

    /// Where a tuple's data bytes start in its slot (see [`RowBlock::data_len`]).
    #[inline]
    pub fn data_at(&self) -> usize {
        self.data_at
    }

    /// The data bytes of the formed tuples of rows `from..to`, one after the other
    /// (`data_len` each): what `tuple(r)[data_at..data_at + data_len]` holds for each.
    #[inline(always)]
    pub fn data_run(&self, from: usize, to: usize) -> &[u8] {
        &self.data[from * self.data_len..to * self.data_len]
    }

    /// Whether row `r`'s tuple is formed (`tuple(r)` is `Some`).
    #[inline(always)]
    pub fn is_formed(&self, r: usize) -> bool {
        (self.tuple_len > 0 || self.varying) && self.formed[r]
    }

    /// Reads rows until the block is full, `max_bytes` of input are in it, or the input ends;
    /// converts the integer fields of `plan`. With `ready` (the decoder reads a stream), also
    /// when the next row would wait for the stream and the writer asks for the rows
    /// ([`Readiness::hold`]): they go to the loader first, as COPY loads every complete line
    /// it has before it reads more.
    pub fn fill<D: Decoder + ?Sized>(
        &mut self,
        reader: &mut D,
        max_bytes: usize,
        plan: Option<&IntPlan>,
        ready: Option<&Readiness>,
    ) {
        self.split(reader, max_bytes, plan, ready);
        self.convert(plan);
    }

    /// [`RowBlock::fill`]'s first half: the rows read and split (lines of plain integers
    /// formed on the way, where the plan fuses them), their integer fields not yet converted
    /// nor their tuples formed ([`RowBlock::convert`], with the same plan).
    pub fn split<D: Decoder + ?Sized>(
        &mut self,
        reader: &mut D,
        max_bytes: usize,
        plan: Option<&IntPlan>,
        ready: Option<&Readiness>,
    ) {
        self.len = 0;
        self.end = None;
        (self.first_offset, self.end_offset) = (None, None);
        self.width = plan.map_or(0, |p| p.fields.len());
        self.ints.resize(self.rows.len() * self.width, None);
        self.tuple_len = plan
            .and_then(|p| p.tuple.as_ref())
            .map_or(0, TuplePlan::len);
        self.varying = plan
            .and_then(|p| p.tuple.as_ref())
            .is_some_and(|tp| tp.varying.is_some());
        if self.varying {
            self.tuples.clear();
            self.spans.resize(self.rows.len(), (0, 0));
        } else {
            self.tuples.resize(self.rows.len() * self.tuple_len, 0);
        }
        let data = plan
            .and_then(|p| p.tuple.as_ref())
            .filter(|_| !self.varying)
            .and_then(|tp| tp.data);
        let (data_at, data_len) = data.map_or((0, 0), |(start, end)| (start, end - start));
        // Every slot holds the template, and every row's kept data bytes the template's: the
        // fused path writes only the columns' bytes (forming writes the whole template, which
        // leaves the other bytes as they are).
        if let Some(tp) = plan.and_then(|p| p.tuple.as_ref())
            && !self.varying
            && (self.template != tp.template
                || (self.data_at, self.data_len) != (data_at, data_len))
        {
            for slot in self.tuples.chunks_exact_mut(tp.len()) {
                slot.copy_from_slice(&tp.template);
            }
            self.template.clone_from(&tp.template);
            self.data.resize(self.rows.len() * data_len, 0);
            if data_len > 0 {
                let bytes = &tp.template[data_at..data_at + data_len];
                for row in self.data.chunks_exact_mut(data_len) {
                    row.copy_from_slice(bytes);
                }
            }
        }
        (self.data_at, self.data_len) = (data_at, data_len);
        self.formed.resize(self.rows.len(), false);
        self.marks.resize(self.rows.len(), RowMark::default());
        // Lines of plain integers are read, converted and formed in one pass where the
        // decoder can; after a run of rows it declined, the block stops trying.
        let mut fused = plan.filter(|p| reader.int_rows(p)).and_then(IntPlan::fused);
        let mut declined = 0;
        let mut bytes = 0;
        let start = reader.consumed();
        while self.len < self.rows.len() && bytes < max_bytes {
            if self.len > 0
                && let Some(r) = ready
                && !r.queued()
                && !reader.row_buffered()
                && r.hold()
            {
                break;
            }
            let r = self.len;
            if let Some(p) = &fused {
                let n = self.tuple_len;
                let tuple = &mut self.tuples[r * n..(r + 1) * n];
                let d = self.data_len;
                let kept = &mut self.data[r * d..(r + 1) * d];
                if let Some(mark) = reader.next_int_row(p, &mut self.rows[r], tuple, kept) {
                    self.formed[r] = true;
                    self.marks[r] = mark;
                    bytes += self.rows[r].raw_len();
                    if r == 0 {
                        self.first_offset = first_offset(reader, &self.rows[0]);
                    }
                    self.len += 1;
                    declined = 0;
                    continue;
                }
                declined += 1;
                if declined == FUSED_DECLINES {
                    fused = None;
                }
            }
            self.formed[r] = false;
            match reader.next_row(&mut self.rows[self.len]) {
                Ok(true) => {
                    self.marks[r] = self.rows[r].mark();
                    bytes += self.rows[self.len].raw_len();
                    if r == 0 {
                        self.first_offset = first_offset(reader, &self.rows[0]);
                    }
                    self.len += 1;
                }
                Ok(false) => {
                    self.end = Some(Ok(()));
                    break;
                }
                Err(e) => {
                    self.end = Some(Err(e));
                    self.end_offset = match self.len {
                        0 => start.filter(|&s| s > 0),
                        _ => self.first_offset.map(|f| f + bytes as u64),
                    };
                    break;
                }
            }
        }
        self.bytes_read = reader.bytes_read();
        self.lines_read = reader.lines_read();
    }

    /// [`RowBlock::fill`]'s second half: the integer fields of the split rows converted and,
    /// with a tuple plan, their tuples formed (`plan` is the one the block was split with).
    pub fn convert(&mut self, plan: Option<&IntPlan>) {
        // The integer fields of the whole block, once it is split: a field read right after its
        // row was split would load 8 bytes across the splitter's pending stores (the row copy
        // and the NUL after the field), which the CPU cannot forward, and wait for them.
        if let Some(plan) = plan.filter(|_| self.width > 0) {
            for r in 0..self.len {
                if self.formed[r] {
                    continue; // read in one pass
                }
                // the splitter wrote the rows on the other core, each in buffers of its own:
                // their first reads would wait for that core's cache one row at a time
                self.prefetch(r, CONVERT_AHEAD);
                let row = &self.rows[r];
                let out = &mut self.ints[r * self.width..(r + 1) * self.width];
                convert_ints(row, plan, out);
                if let Some(tp) = &plan.tuple
                    && let Some(v) = &tp.varying
                {
                    let at = self.tuples.len();
                    let formed = tp.form_varying(v, out, row, &mut self.tuples);
                    self.formed[r] = formed.is_some();
                    self.spans[r] = (at as u32, formed.unwrap_or(0) as u32);
                } else if let Some(tp) = &plan.tuple {
                    let tuple = &mut self.tuples[r * tp.len()..(r + 1) * tp.len()];
                    self.formed[r] = row.len() == tp.nfields && tp.form(out, row, tuple);
                    if self.formed[r] && self.data_len > 0 {
                        // (the fused path writes them as it writes the slot)
                        let (at, n) = (r * tp.len() + self.data_at, self.data_len);
                        self.data[r * n..(r + 1) * n].copy_from_slice(&self.tuples[at..at + n]);
                    }
                }
            }
        }
    }
}

#[inline]
/// Where `row`, just read by `reader`, started in the input.
#[cold]
fn first_offset<D: Decoder + ?Sized>(reader: &D, row: &Row) -> Option<u64> {
    Some(reader.consumed()? - row.raw_len() as u64)
}

fn convert_ints(row: &Row, plan: &IntPlan, out: &mut [Option<i64>]) {
    if plan.binary {
        return convert_binary_ints(row, plan, out);
    }
    for (f, (width, slot)) in plan.fields.iter().zip(out.iter_mut()).enumerate() {
        *slot = match (width, f < row.len()) {
            (Some(w), true) => row.value_in(f).and_then(|(b, n)| match w {
                IntWidth::I32 => int::parse_i32_in(b, n, plan.grammar).ok().map(i64::from),
                IntWidth::I64 => int::parse_i64_in(b, n, plan.grammar).ok(),
                IntWidth::I16 => int::parse_i16_in(b, n, plan.grammar).ok().map(i64::from),
            }),
            _ => None,
        };
    }
}

#[inline]
fn convert_binary_ints(row: &Row, plan: &IntPlan, out: &mut [Option<i64>]) {
    for (f, (width, slot)) in plan.fields.iter().zip(out.iter_mut()).enumerate() {
        let value = match width {
            Some(_) if f < row.len() => row.value_in(f),
            _ => None,
        };
        *slot = match (width, value) {
            (Some(w), Some((b, n))) => match (w, n) {
                (IntWidth::I16, 2) => Some(i16::from_be_bytes([b[0], b[1]]) as i64),
                (IntWidth::I32, 4) => Some(i32::from_be_bytes([b[0], b[1], b[2], b[3]]) as i64),
                (IntWidth::I64, 8) => Some(i64::from_be_bytes([
                    b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7],
                ])),
                _ => None,
            },
            _ => None,
        };
    }
}

/// The reader thread: fills the blocks that come back on `empty` and sends them on `full`
/// until the input ends. Returns early when the consumer hung up (it stopped with an error).
pub fn produce<D: Decoder>(
    mut reader: D,
    full: SyncSender<RowBlock>,
    empty: Receiver<RowBlock>,
    max_bytes: usize,
    plan: Option<IntPlan>,
    ready: Option<Readiness>,
) {
    while let Ok(mut block) = empty.recv() {
        block.fill(&mut reader, max_bytes, plan.as_ref(), ready.as_ref());
        let last = block.end.is_some();
        if full.send(block).is_err() || last {
            return;
        }
    }
}

/// Whether [`produce_split`] and [`produce_formed`] should share the reader's work: a plan
/// whose tuples the reader forms column by column (a varying plan: converting and forming
/// such rows costs as much as splitting them), so that a second thread converts and forms
/// one block while the first splits the next. Not in the binary format, whose split is a
/// walk over length words and one copy per tuple: there the second thread only moved the rows
/// to another core (the mixed table of `bench/types.sh` in binary on 17: 171 -> 162 ms a load,
/// the reader then as busy as the backend).
pub fn worth_two_stages(plan: Option<&IntPlan>) -> bool {
    plan.filter(|p| !p.binary)
        .and_then(|p| p.tuple.as_ref())
        .is_some_and(|tp| tp.varying.is_some())
}

/// The reader's first stage when it is two threads ([`worth_two_stages`]): fills the blocks
/// that come back on `empty` with split rows ([`RowBlock::split`]) and sends them on `mid` to
/// [`produce_formed`], until the input ends or the next stage hung up.
pub fn produce_split<D: Decoder>(
    mut reader: D,
    mid: SyncSender<RowBlock>,
    empty: Receiver<RowBlock>,
    max_bytes: usize,
    plan: Option<IntPlan>,
    ready: Option<Readiness>,
) {
    while let Ok(mut block) = empty.recv() {
        block.split(&mut reader, max_bytes, plan.as_ref(), ready.as_ref());
        let last = block.end.is_some();
        if mid.send(block).is_err() || last {
            return;
        }
    }
}

/// The reader's second stage: converts and forms the blocks from [`produce_split`]
/// ([`RowBlock::convert`], with the same plan) and sends them on `full`, in order, until the
/// last block or the consumer hung up.
pub fn produce_formed(mid: Receiver<RowBlock>, full: SyncSender<RowBlock>, plan: Option<IntPlan>) {
    while let Ok(mut block) = mid.recv() {
        block.convert(plan.as_ref());
        let last = block.end.is_some();
        if full.send(block).is_err() || last {
            return;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::input::{Field, Options, RowReader};
    use crate::int::Grammar;
    use std::sync::mpsc::sync_channel;

    fn collect(
        data: &[u8],
        block_rows: usize,
        threaded: bool,
    ) -> (Vec<Vec<Vec<u8>>>, Option<String>) {
        let reader = RowReader::with_capacity(data, Options::text(), 7);
        let mut out = Vec::new();
        let mut err = None;
        let mut consume = |block: &RowBlock| -> bool {
            for r in block.rows() {
                out.push(
                    (0..r.len())
                        .map(|i| match r.field(i) {
                            Field::Value(v) => v.to_vec(),
                            _ => b"<null>".to_vec(),
                        })
                        .collect(),
                );
            }
            match &block.end {
                Some(Err(e)) => {
                    err = Some(e.message());
                    true
                }
                Some(Ok(())) => true,
                None => false,
            }
        };
        if threaded {
            std::thread::scope(|s| {
                let (full_tx, full_rx) = sync_channel(2);
                let (empty_tx, empty_rx) = sync_channel(3);
                for _ in 0..3 {
                    empty_tx.send(RowBlock::new(block_rows)).unwrap();
                }
                s.spawn(move || produce(reader, full_tx, empty_rx, 1 << 20, None, None));
                while let Ok(block) = full_rx.recv() {
                    if consume(&block) {
                        break;
                    }
                    // the reader may already be done (it stops after the last block)
                    let _ = empty_tx.send(block);
                }
            });
        } else {
            let mut reader = reader;
            let mut block = RowBlock::new(block_rows);
            loop {
                block.fill(&mut reader, 1 << 20, None, None);
                if consume(&block) {
                    break;
                }
            }
        }
        (out, err)
    }

    #[test]
    fn blocks_keep_rows_and_errors_in_order() {
        let mut data = Vec::new();
        for i in 0..1000 {
            data.extend_from_slice(format!("{i}\tx{i}\n").as_bytes());
        }
        data.extend_from_slice(b"bad\rline\n");
        for rows in [1, 3, 64, 5000] {
            for threaded in [false, true] {
                let (out, err) = collect(&data, rows, threaded);
                assert_eq!(out.len(), 1000, "rows {rows} threaded {threaded}");
                assert_eq!(out[999], vec![b"999".to_vec(), b"x999".to_vec()]);
                assert_eq!(
                    err.as_deref(),
                    Some("literal carriage return found in data")
                );
            }
        }
    }

    #[test]
    fn binary_int_plan_takes_exact_widths_only() {
        use crate::binary::{BinaryReader, write};
        let mut data = Vec::new();
        write::header(&mut data, 0, b"");
        let (a, b, c) = (
            (-5i16).to_be_bytes(),
            i32::MIN.to_be_bytes(),
            (-1i64).to_be_bytes(),
        );
        write::tuple(&mut data, &[Some(&a), Some(&b), Some(&c)]);
        // a 4-byte int8 and a NULL: left to the backend (its receive function decides)
        write::tuple(&mut data, &[Some(&a), None, Some(&b)]);
        write::trailer(&mut data);
        let plan = IntPlan::binary(vec![
            Some(IntWidth::I16),
            Some(IntWidth::I32),
            Some(IntWidth::I64),
        ]);
        let mut reader = BinaryReader::new(&data[..], 3, 7, 18);
        let mut block = RowBlock::new(8);
        block.fill(&mut reader, 1 << 20, plan.as_ref(), None);
        assert_eq!(block.ints(0), &[Some(-5), Some(i32::MIN as i64), Some(-1)]);
        assert_eq!(block.ints(1), &[Some(-5), None, None]);
        assert!(IntPlan::binary(vec![None]).is_none());
    }

    #[test]
    fn int_plan_converts_the_named_fields() {
        let data = b"1\t-2\tx\n40000\t7\t9\n\\N\tabc\t3\n";
        let plan = IntPlan::new(
            vec![Some(IntWidth::I16), Some(IntWidth::I64), None],
            Grammar::Pg16,
        );
        let mut reader = RowReader::new(&data[..], Options::text());
        let mut block = RowBlock::new(8);
        block.fill(&mut reader, 1 << 20, plan.as_ref(), None);
        assert_eq!(block.rows().len(), 3);
        assert_eq!(block.ints(0), &[Some(1), Some(-2), None]);
        assert_eq!(block.ints(1), &[None, Some(7), None]); // 40000 is out of range for int2
        assert_eq!(block.ints(2), &[None, None, None]); // NULL, and not an integer
        assert!(IntPlan::new(vec![None, None], Grammar::Pg15).is_none());
    }

    /// Fields (int2, int4, int8) into a tuple plan over (int8, int2, int4) fed by fields 2, 0,
    /// 1, at offsets 8, 16 and 20 of `template` (32 bytes).
    fn int8_int2_int4_plan(template: Vec<u8>) -> IntPlan {
        let fields = vec![
            Some(IntWidth::I16),
            Some(IntWidth::I32),
            Some(IntWidth::I64),
        ];
        let mut plan = IntPlan::new(fields, Grammar::Pg16).unwrap();
        let columns = vec![(2, 8, 8), (0, 16, 2), (1, 20, 4)];
        plan.tuple = Some(TuplePlan::new(template, columns, 3).unwrap());
        plan
    }

    /// A tuple plan over (int8, int2, int4) fed by fields 2, 0, 1: the template's bytes with
    /// each value little-endian at its offset; rows with a NULL, a value that did not convert,
    /// too few or too many fields are left to the loader.
    #[test]
    fn tuple_plan_forms_the_rows_whose_fields_all_converted() {
        let data = b"1\t-2\t3\n-32768\t2147483647\t-9\n1\t\\N\t3\n1\tx\t3\n1\t2\n1\t2\t3\t4\n";
        let template: Vec<u8> = (0..32u8).map(|b| b | 0x80).collect();
        let plan = int8_int2_int4_plan(template.clone());
        let mut reader = RowReader::new(&data[..], Options::text());
        let mut block = RowBlock::new(8);
        block.fill(&mut reader, 1 << 20, Some(&plan), None);
        assert_eq!(block.rows().len(), 6);
        let expect = |a: i16, b: i32, c: i64| {
            let mut t = template.clone();
            t[8..16].copy_from_slice(&c.to_le_bytes());
            t[16..18].copy_from_slice(&a.to_le_bytes());
            t[20..24].copy_from_slice(&b.to_le_bytes());
            t
        };
        assert_eq!(block.tuple(0), Some(&expect(1, -2, 3)[..]));
        assert_eq!(block.tuple(1), Some(&expect(i16::MIN, i32::MAX, -9)[..]));
        for r in 2..6 {
            assert_eq!(block.tuple(r), None, "row {r}");
        }
        // a plan whose columns do not fit its template, or name no field, is no plan
        assert!(TuplePlan::new(vec![0; 8], vec![(0, 4, 8)], 1).is_none());
        assert!(TuplePlan::new(vec![0; 8], vec![(1, 0, 4)], 1).is_none());
        assert!(TuplePlan::new(vec![0; 8], vec![(0, 0, 3)], 1).is_none());
        assert!(TuplePlan::new(vec![0; 8], vec![], 1).is_none());
    }

    /// Each row's start in the input ([`RowBlock::row_offset`]), read in blocks of 3 rows by
    /// both paths (lines the one-pass decoder forms, lines it leaves), after 2 header lines;
    /// and where an unterminated CSV quote's row starts ([`RowBlock::end_offset`]).
    #[test]
    fn blocks_tell_where_each_row_starts() {
        let mut data = b"h1\th2\nheader two\n".to_vec();
        let mut starts = Vec::new();
        for i in 0..20u32 {
            starts.push(data.len() as u64);
            let line = match i % 4 {
                0 => format!("{i}\t{}\t7\n", i * 1000),
                1 => format!("{i}\t\\N\t-3\n"),
                2 => format!("{i}\tx\t12345678901\n"),
                _ => format!("{}\t{i}\t0\n", i64::MAX),
            };
            data.extend_from_slice(line.as_bytes());
        }
        let plan = int8_int2_int4_plan(vec![0u8; 32]);
        let options = Options {
            header: 2,
            ..Options::text()
        };
        let mut reader = RowReader::with_capacity(&data[..], options, 16);
        let mut block = RowBlock::new(3);
        let mut got = Vec::new();
        loop {
            block.fill(&mut reader, 1 << 20, Some(&plan), None);
            got.extend((0..block.rows().len()).map(|r| block.row_offset(r).unwrap()));
            if block.end.is_some() {
                break;
            }
        }
        assert_eq!(got, starts);
        // a CSV quote left open: the decoder stops at the start of its row
        let data = b"1,a\n2,\"b\n3,c\n";
        let mut reader = RowReader::new(&data[..], Options::csv());
        let mut block = RowBlock::new(8);
        block.fill(&mut reader, 1 << 20, None, None);
        assert!(matches!(block.end, Some(Err(_))));
        assert_eq!((block.rows().len(), block.end_offset), (1, Some(4)));
        // ... also as the first row of a block
        let mut reader = RowReader::new(&data[..], Options::csv());
        let mut block = RowBlock::new(1);
        block.fill(&mut reader, 1 << 20, None, None);
        assert_eq!(block.row_offset(0), Some(0));
        block.fill(&mut reader, 1 << 20, None, None);
        assert!(matches!(block.end, Some(Err(_))));
        assert_eq!((block.rows().len(), block.end_offset), (0, Some(4)));
    }

    /// A plan over (int4, char(5)): a value of at most 5 ASCII bytes is written over the
    /// template's spaces; NULL, a longer value, a non-ASCII one or a wrong number of fields
    /// leave the row to the loader. With a `char(n)` column the one-pass decoder is not used.
    #[test]
    fn tuple_plan_pads_char_values_with_the_templates_spaces() {
        let data = "1\tab\n2\t\n3\tabcdef\n4\t\\N\n5\té\n6\tabcde\n7\ta\tb\n8\t\\x41 \n".as_bytes();
        let mut plan = IntPlan::new(vec![Some(IntWidth::I32), None], Grammar::Pg16).unwrap();
        let mut template = vec![0xEEu8; 24];
        template[12..17].copy_from_slice(b"     ");
        let tp = TuplePlan::new(template.clone(), vec![(0, 4, 4)], 2).unwrap();
        plan.tuple = Some(tp.with_padded(vec![(1, 12, 5)]).unwrap());
        let mut reader = RowReader::new(data, Options::text());
        assert!(!reader.int_rows(&plan));
        let mut block = RowBlock::new(16);
        block.fill(&mut reader, 1 << 20, Some(&plan), None);
        assert_eq!(block.rows().len(), 8);
        let expect = |a: i32, c: &[u8; 5]| {
            let mut t = template.clone();
            t[4..8].copy_from_slice(&a.to_le_bytes());
            t[12..17].copy_from_slice(c);
            t
        };
        assert_eq!(block.tuple(0), Some(&expect(1, b"ab   ")[..]));
        assert_eq!(block.tuple(1), Some(&expect(2, b"     ")[..]));
        assert_eq!(block.tuple(5), Some(&expect(6, b"abcde")[..]));
        assert_eq!(block.tuple(7), Some(&expect(8, b"A    ")[..]));
        for r in [2, 3, 4, 6] {
            assert_eq!(block.tuple(r), None, "row {r}");
        }
        // char(n) columns must lie inside the template, with a field and at least one byte
        let tp = || TuplePlan::new(vec![0; 16], vec![(0, 0, 4)], 2).unwrap();
        assert!(tp().with_padded(vec![(1, 12, 5)]).is_none());
        assert!(tp().with_padded(vec![(2, 4, 4)]).is_none());
        assert!(tp().with_padded(vec![(1, 4, 0)]).is_none());
        assert!(tp().with_padded(vec![(1, 4, 12)]).is_some());
    }

    /// A varying plan over (int4, text): each formed row's tuple at its own place and length
    /// in the block (what `VaryingPlan::form` makes of it); NULL, a wrong number of fields or
    /// an int that does not convert leave the row to the loader.
    #[test]
    fn varying_tuples_have_their_own_lengths() {
        use crate::varying::{Limit, Piece, VaryingPlan};
        let data =
            "1\tab\n2\t\\N\n3\t\\x41\n4\n5\tlong value of many bytes\nx\ty\n6\t\n".as_bytes();
        let pieces = vec![
            Piece::Int {
                field: 0,
                width: 4,
                align: 4,
            },
            Piece::Text {
                field: 1,
                limit: Limit::Any,
                align: 4,
            },
        ];
        let vp = VaryingPlan::new(vec![0; 16], 8, vec![(0, 0)], pieces, 2032, 2).unwrap();
        let mut plan = IntPlan::new(vec![Some(IntWidth::I32), None], Grammar::Pg16).unwrap();
        plan.tuple = Some(TuplePlan::varying(vp.clone()));
        let mut reader = RowReader::new(data, Options::text());
        assert!(!reader.int_rows(&plan));
        let mut block = RowBlock::new(16);
        block.fill(&mut reader, 1 << 20, Some(&plan), None);
        assert_eq!(block.rows().len(), 7);
        let expect = |a: i64, t: &[u8]| {
            let mut out = Vec::new();
            vp.form(&[Some(a), None], |_| Field::Value(t), &mut out)
                .unwrap();
            out
        };
        assert_eq!(block.tuple(0), Some(&expect(1, b"ab")[..]));
        assert_eq!(block.tuple(2), Some(&expect(3, b"A")[..]));
        assert_eq!(
            block.tuple(4),
            Some(&expect(5, b"long value of many bytes")[..])
        );
        assert_eq!(block.tuple(6), Some(&expect(6, b"")[..]));
        for r in [1, 3, 5] {
            assert_eq!(block.tuple(r), None, "row {r}");
        }
        // the block is reused: a second fill starts its tuples afresh
        let mut reader = RowReader::new(&b"7\tq\n"[..], Options::text());
        block.fill(&mut reader, 1 << 20, Some(&plan), None);
        assert_eq!(block.tuple(0), Some(&expect(7, b"q")[..]));
    }

    /// Two stages (split, then convert and form, on two threads) hand over the same blocks
    /// as one: rows, integers, formed tuples, marks, counts and the error at the end, in order.
    #[test]
    fn two_stages_make_the_blocks_one_makes() {
        use crate::varying::{Limit, Piece, VaryingPlan};
        let mut data = Vec::new();
        for i in 0..20_000 {
            match i % 97 {
                0 => data.extend_from_slice(format!("{i}\t\\N\n").as_bytes()),
                1 => data.extend_from_slice(format!("x{i}\tbad int\n").as_bytes()),
                _ => data
                    .extend_from_slice(format!("{i}\tvalue {}\n", "v".repeat(i % 150)).as_bytes()),
            }
        }
        data.extend_from_slice(b"1\t2\t3\r\n");
        let pieces = vec![
            Piece::Int {
                field: 0,
                width: 4,
                align: 4,
            },
            Piece::Text {
                field: 1,
                limit: Limit::Any,
                align: 4,
            },
        ];
        let vp = VaryingPlan::new(vec![0; 16], 8, vec![(0, 0)], pieces, 2032, 2).unwrap();
        let mut plan = IntPlan::new(vec![Some(IntWidth::I32), None], Grammar::Pg16).unwrap();
        plan.tuple = Some(TuplePlan::varying(vp));
        assert!(worth_two_stages(Some(&plan)));
        // (rows, ints, tuple or not, line number) of every row, and the end
        type Seen = (
            Vec<(Vec<Vec<u8>>, Vec<Option<i64>>, Option<Vec<u8>>, u64)>,
            Option<String>,
            u64,
        );
        let record = |block: &RowBlock, seen: &mut Seen| {
            for (r, row) in block.rows().iter().enumerate() {
                let fields = (0..row.len())
                    .map(|i| match row.field(i) {
                        Field::Value(v) => v.to_vec(),
                        _ => b"<null>".to_vec(),
                    })
                    .collect();
                let tuple = block.tuple(r).map(<[u8]>::to_vec);
                seen.0
                    .push((fields, block.ints(r).to_vec(), tuple, block.mark(r).line_no));
            }
            seen.2 = block.lines_read;
            match &block.end {
                Some(Err(e)) => seen.1 = Some(e.message()),
                Some(Ok(())) => seen.1 = Some(String::new()),
                None => {}
            }
        };
        let mut one: Seen = (Vec::new(), None, 0);
        let mut reader = RowReader::with_capacity(&data[..], Options::text(), 4096);
        let mut block = RowBlock::new(300);
        while one.1.is_none() {
            block.fill(&mut reader, 1 << 16, Some(&plan), None);
            record(&block, &mut one);
        }
        let mut two: Seen = (Vec::new(), None, 0);
        std::thread::scope(|s| {
            let (mid_tx, mid_rx) = sync_channel(2);
            let (full_tx, full_rx) = sync_channel(2);
            let (empty_tx, empty_rx) = sync_channel(4);
            for _ in 0..4 {
                empty_tx.send(RowBlock::new(300)).unwrap();
            }
            let reader = RowReader::with_capacity(&data[..], Options::text(), 4096);
            let p = plan.clone();
            s.spawn(move || produce_split(reader, mid_tx, empty_rx, 1 << 16, Some(p), None));
            let p = plan.clone();
            s.spawn(move || produce_formed(mid_rx, full_tx, Some(p)));
            while let Ok(block) = full_rx.recv() {
                record(&block, &mut two);
                if two.1.is_some() {
                    break;
                }
                let _ = empty_tx.send(block);
            }
        });
        assert_eq!(one.0.len(), 20_000);
        assert!(one.0.iter().filter(|r| r.2.is_some()).count() > 19_000);
        assert_eq!(
            one.1.as_deref(),
            Some("literal carriage return found in data")
        );
        assert!(one == two, "the two stages' blocks differ");
    }

    #[test]
    fn consumer_hanging_up_stops_the_producer() {
        let data = [b'1', b'\n'].repeat(100_000);
        std::thread::scope(|s| {
            let (full_tx, full_rx) = sync_channel(1);
            let (empty_tx, empty_rx) = sync_channel(2);
            for _ in 0..2 {
                empty_tx.send(RowBlock::new(10)).unwrap();
            }
            let reader = RowReader::new(&data[..], Options::text());
            let h = s.spawn(move || produce(reader, full_tx, empty_rx, 1 << 20, None, None));
            let first = full_rx.recv().unwrap();
            assert_eq!(first.rows().len(), 10);
            drop(full_rx);
            drop(empty_tx);
            h.join().unwrap();
        });
    }

    type StreamRows = RowReader<crate::stream::StreamReader>;

    /// A stream with `first` sent, a text reader on it, and its readiness.
    fn stream_of(
        first: &[u8],
    ) -> (
        crate::stream::StreamWriter,
        StreamRows,
        crate::stream::Readiness,
    ) {
        let (mut w, r) = crate::stream::channel(4);
        let ready = r.readiness();
        w.try_send(first.to_vec()).unwrap();
        (w, RowReader::new(r, Options::text()), ready)
    }

    fn wait_for(w: &crate::stream::StreamWriter, state: crate::stream::ReaderState) {
        while w.reader_state() != state {
            std::thread::yield_now();
        }
    }

    fn finish(w: &mut crate::stream::StreamWriter) {
        use crate::stream::Refused;
        loop {
            match w.try_finish() {
                Ok(()) => break,
                Err(Refused::Full(_)) => std::thread::yield_now(),
                Err(Refused::Closed) => panic!("reader gone"),
            }
        }
    }

    /// On a stream, the reader holds its rows where the next row would wait for the writer;
    /// asked for them (the backend is about to wait for its client), it hands them over: the
    /// complete lines go to the loader before the reader waits (COPY loads them before it
    /// reads on). Then the writer sees it waiting with nothing queued.
    #[test]
    fn a_stream_hands_over_its_complete_lines_when_asked() {
        use crate::stream::ReaderState;
        let (mut w, mut reader, ready) = stream_of(b"1\n2\n3");
        std::thread::scope(|s| {
            let h = s.spawn(move || {
                let mut block = RowBlock::new(100);
                block.fill(&mut reader, 1 << 20, None, Some(&ready));
                let first = block.rows().len();
                let mut rest = 0;
                loop {
                    block.fill(&mut reader, 1 << 20, None, Some(&ready));
                    rest += block.rows().len();
                    if block.end.is_some() {
                        return (first, rest);
                    }
                }
            });
            wait_for(&w, ReaderState::Holding);
            w.request_rows();
            wait_for(&w, ReaderState::Waiting);
            w.try_send(b"3\n4\n".to_vec()).unwrap();
            finish(&mut w);
            // two rows before the wait; "33" and "4" after it
            assert_eq!(h.join().unwrap(), (2, 2));
        });
    }

    /// Data that comes while the reader holds its rows goes into the same block.
    #[test]
    fn a_holding_reader_fills_on_when_data_comes() {
        use crate::stream::ReaderState;
        let (mut w, mut reader, ready) = stream_of(b"1\n2\n3");
        std::thread::scope(|s| {
            let h = s.spawn(move || {
                let mut block = RowBlock::new(100);
                block.fill(&mut reader, 1 << 20, None, Some(&ready));
                (block.rows().len(), block.end.is_some())
            });
            wait_for(&w, ReaderState::Holding);
            w.try_send(b"3\n4\n".to_vec()).unwrap();
            finish(&mut w);
            assert_eq!(h.join().unwrap(), (4, true));
        });
    }

    /// A holding reader whose writer goes away (an ERROR on the backend) does not hang.
    #[test]
    fn a_holding_reader_ends_when_the_writer_goes() {
        use crate::stream::ReaderState;
        let (w, mut reader, ready) = stream_of(b"1\n2");
        std::thread::scope(|s| {
            let h = s.spawn(move || {
                let mut block = RowBlock::new(100);
                block.fill(&mut reader, 1 << 20, None, Some(&ready));
                let first = block.rows().len();
                block.fill(&mut reader, 1 << 20, None, Some(&ready));
                (first, block.end.as_ref().is_some_and(|e| e.is_err()))
            });
            wait_for(&w, ReaderState::Holding);
            drop(w);
            assert_eq!(h.join().unwrap(), (1, true));
        });
    }
}
