//! What the reader is asked to do with a block's rows besides splitting them: the integer
//! fields to convert ([`IntPlan`]), the tuples to form ([`TuplePlan`], with
//! [`crate::varying`] for tables with text, date/time or numeric columns), the one-pass plan
//! of a line of plain integers ([`FusedPlan`]), and what the loader keeps of each row
//! ([`RowMark`]). Types only the planning needs: the blocks that carry them out are in
//! [`crate::pipeline`], the decoders in [`crate::input`] and [`crate::binary`].

use crate::int::Grammar;
use crate::varying::VaryingPlan;

/// Integer width of an input field the block converts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum IntWidth {
    I16,
    I32,
    I64,
}

/// Which input fields (by position) are integers, and the server's grammar.
#[derive(Clone, Debug)]
pub struct IntPlan {
    pub fields: Vec<Option<IntWidth>>,
    pub grammar: Grammar,
    /// The fields are binary COPY values (big-endian, exactly the width's bytes), not text.
    pub binary: bool,
    /// Tuples formed from the converted fields, when every column is one of them.
    pub tuple: Option<TuplePlan>,
}

/// What the fused path ([`Decoder::next_int_row`]) needs of an [`IntPlan`], gathered once per
/// block ([`IntPlan::fused`]): per input field, in order, one small record, so that the
/// per-field work is one range check and one store.
#[derive(Clone, Debug)]
pub struct FusedPlan {
    pub fields: Vec<FusedField>,
    pub grammar: Grammar,
}

/// One input field of a [`FusedPlan`].
#[derive(Clone, Copy, Debug)]
pub struct FusedField {
    /// The field's integer width in bytes (2, 4 or 8): which int core parser takes a long one.
    pub bytes: u8,
    /// The width of the column it fills (2, 4 or 8), 0 for none, and the column's offset in
    /// the tuple.
    pub width: u8,
    pub at: usize,
    /// The column's offset in the tuple's data bytes, where the block keeps them apart
    /// ([`TuplePlan::with_data`]; 0 where it does not).
    pub data_at: usize,
    /// The values both the field and its column take.
    pub min: i64,
    pub max: i64,
}

/// The range of `bytes`-byte integers (any other width: every i64).
fn int_range(bytes: usize) -> (i64, i64) {
    match bytes {
        2 => (i16::MIN.into(), i16::MAX.into()),
        4 => (i32::MIN.into(), i32::MAX.into()),
        _ => (i64::MIN, i64::MAX),
    }
}

impl IntPlan {
    /// The plan as the fused path reads it: `None` unless every field is an integer that fills
    /// at most one column, and the tuple plan says which (see [`TuplePlan`]'s
    /// `field_columns`).
    pub fn fused(&self) -> Option<FusedPlan> {
        let tuple = self.tuple.as_ref()?;
        let columns = tuple.field_columns.as_deref()?;
        let data_start = tuple.data.map_or(0, |(start, _)| start);
        if columns.len() != self.fields.len() {
            return None;
        }
        let fields = self
            .fields
            .iter()
            .zip(columns)
            .map(|(width, column)| {
                let bytes = match width.as_ref()? {
                    IntWidth::I16 => 2,
                    IntWidth::I32 => 4,
                    IntWidth::I64 => 8,
                };
                let (at, w) = column.unwrap_or((0, 0));
                let ((lo, hi), (clo, chi)) = (int_range(bytes), int_range(w));
                Some(FusedField {
                    bytes: bytes as u8,
                    width: w as u8,
                    at,
                    data_at: at.saturating_sub(data_start),
                    min: lo.max(clo),
                    max: hi.min(chi),
                })
            })
            .collect::<Option<Vec<_>>>()?;
        Some(FusedPlan {
            fields,
            grammar: self.grammar,
        })
    }
}

/// How a row whose fields all converted becomes a tuple: `template`'s bytes with, per column,
/// its field's integer stored little-endian in `width` bytes at `at`. Made by the extension,
/// which knows the layout; [`TuplePlan::new`] only checks that every value lies inside the
/// template.
#[derive(Clone, Debug)]
pub struct TuplePlan {
    pub(crate) template: Vec<u8>,
    /// Per column: (its input field, byte offset in the template, width in bytes).
    pub(crate) columns: Vec<(usize, usize, usize)>,
    /// A row must have exactly this many fields.
    pub(crate) nfields: usize,
    /// Per input field: the offset and width of the column it fills, if one does; `None`
    /// (for every field) when some field fills two columns, or the plan has `char(n)` columns.
    pub(crate) field_columns: Option<Vec<Option<(usize, usize)>>>,
    /// Per `char(n)` column: (its input field, the offset of its n value bytes, n). The
    /// template holds n spaces there (and the short varlena header before them, which a value
    /// of n bytes after padding never changes).
    pub(crate) padded: Vec<(usize, usize, usize)>,
    /// Tuples of a layout that varies from row to row (text values): then there is no
    /// template, and the block keeps each row's tuple at its own place and length.
    pub(crate) varying: Option<VaryingPlan>,
    /// The tuple's data bytes, `template[start..end]`, every column inside them: the block
    /// also keeps them of every formed row side by side ([`RowBlock::data_run`]).
    pub(crate) data: Option<(usize, usize)>,
}

impl TuplePlan {
    /// `None` unless every column lies inside `template` and names a field below `nfields`
    /// with a width of 2, 4 or 8 bytes.
    pub fn new(
        template: Vec<u8>,
        columns: Vec<(usize, usize, usize)>,
        nfields: usize,
    ) -> Option<TuplePlan> {
        let fits = |&(f, at, w): &(usize, usize, usize)| {
            f < nfields && matches!(w, 2 | 4 | 8) && at + w <= template.len()
        };
        if columns.is_empty() || !columns.iter().all(fits) {
            return None;
        }
        let mut by_field = vec![None; nfields];
        let mut once = true;
        for &(f, at, w) in &columns {
            once &= by_field[f].replace((at, w)).is_none();
        }
        Some(TuplePlan {
            template,
            columns,
            nfields,
            field_columns: once.then_some(by_field),
            padded: Vec::new(),
            varying: None,
            data: None,
        })
    }

    /// A plan of tuples whose layout varies from row to row ([`VaryingPlan`]).
    pub fn varying(plan: VaryingPlan) -> TuplePlan {
        TuplePlan {
            template: Vec::new(),
            columns: Vec::new(),
            nfields: plan.nfields,
            field_columns: None,
            padded: Vec::new(),
            varying: Some(plan),
            data: None,
        }
    }

    /// The plan with `char(n)` columns as well: per column (its input field, the offset of its
    /// n bytes in the template, n), where the template holds n spaces. A row's value there is
    /// `bpchar_input`'s when it is plain ASCII (bytes 1 to 127, one character each in every
    /// server encoding) of at most n bytes: the value, then the template's spaces. `None`
    /// unless every such column lies inside the template, names a field below `nfields` and
    /// holds at least one byte.
    pub fn with_padded(mut self, padded: Vec<(usize, usize, usize)>) -> Option<TuplePlan> {
        let fits = |&(f, at, n): &(usize, usize, usize)| {
            f < self.nfields && n > 0 && at + n <= self.template.len()
        };
        if !padded.iter().all(fits) {
            return None;
        }
        if !padded.is_empty() {
            // (the one-pass decoder forms rows of integers only)
            self.field_columns = None;
        }
        self.padded = padded;
        Some(self)
    }

    /// The plan whose tuples' data bytes are `template[start..end]`: the block keeps those of
    /// every formed row side by side as well, for a loader that takes only them (a run of
    /// rows in one copy). Only where the range lies inside the template and holds every
    /// column, and the plan has no `char(n)` columns (whose bytes only the ordinary forming
    /// writes); else the plan as it was.
    pub fn with_data(mut self, start: usize, end: usize) -> TuplePlan {
        let inside = |&(_, at, w): &(usize, usize, usize)| start <= at && at + w <= end;
        if start <= end
            && end <= self.template.len()
            && self.padded.is_empty()
            && self.columns.iter().all(inside)
        {
            self.data = Some((start, end));
        }
        self
    }

    /// Bytes per formed tuple (the template's); 0 for a varying plan.
    pub fn len(&self) -> usize {
        self.template.len()
    }

    /// Whether this is a varying plan (there is no template).
    pub fn is_empty(&self) -> bool {
        self.template.is_empty()
    }
}

impl IntPlan {
    /// A plan that converts nothing is no plan.
    pub fn new(fields: Vec<Option<IntWidth>>, grammar: Grammar) -> Option<IntPlan> {
        fields.iter().any(Option::is_some).then_some(IntPlan {
            fields,
            grammar,
            binary: false,
            tuple: None,
        })
    }

    /// The same for binary values: a field of the width's size is the integer it encodes
    /// (what `int2recv`/`int4recv`/`int8recv` return); any other is left to the backend.
    pub fn binary(fields: Vec<Option<IntWidth>>) -> Option<IntPlan> {
        let mut plan = IntPlan::new(fields, Grammar::Pg16)?;
        plan.binary = true;
        Some(plan)
    }
}

/// A row's line number ([`Row::line_no`]) and the length of its line as COPY counts it
/// ([`Row::line_len`]: what its batches of rows are measured in).
#[derive(Clone, Copy, Debug, Default)]
pub struct RowMark {
    pub line_no: u64,
    pub line_len: usize,
}
