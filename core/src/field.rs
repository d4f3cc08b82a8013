//! One field of a row as the decoders give it ([`Field`]), the row types' first piece,
//! shared by the decoders (`input`, `binary`), the plans (`plan`, `varying`) and the blocks.
//! Depends on nothing else in the core.

/// One field of a row.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Field<'a> {
    /// The raw field equals the NULL marker (in CSV: and was not quoted).
    Null,
    /// The raw field equals the DEFAULT marker.
    Default,
    /// The de-escaped value; followed by a NUL byte in memory (see the module docs).
    Value(&'a [u8]),
}

impl<'a> Field<'a> {
    /// The value's bytes; `None` for the NULL and DEFAULT markers.
    #[inline]
    pub fn value(self) -> Option<&'a [u8]> {
        match self {
            Field::Value(b) => Some(b),
            Field::Null | Field::Default => None,
        }
    }
}
