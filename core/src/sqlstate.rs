//! SQLSTATEs as a typed value: the five-character codes PostgreSQL reports with an error
//! (`utils/errcodes.h`), for the errors this crate computes without a server.

use std::fmt;

/// A SQLSTATE such as `22P04`.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct SqlState([u8; 5]);

impl SqlState {
    /// 22P04 `bad_copy_file_format`: structure of COPY data (missing or extra columns, quotes,
    /// end marker, line endings).
    pub const BAD_COPY_FILE_FORMAT: SqlState = SqlState(*b"22P04");
    /// 22021 `character_not_in_repertoire`: bytes invalid in the encoding.
    pub const CHARACTER_NOT_IN_REPERTOIRE: SqlState = SqlState(*b"22021");
    /// 22P02 `invalid_text_representation`.
    pub const INVALID_TEXT_REPRESENTATION: SqlState = SqlState(*b"22P02");
    /// 22003 `numeric_value_out_of_range`.
    pub const NUMERIC_VALUE_OUT_OF_RANGE: SqlState = SqlState(*b"22003");
    /// 42501 `insufficient_privilege` (EPERM, EACCES, EROFS).
    pub const INSUFFICIENT_PRIVILEGE: SqlState = SqlState(*b"42501");
    /// 42809 `wrong_object_type` (ENOTDIR, EISDIR, ENOTEMPTY).
    pub const WRONG_OBJECT_TYPE: SqlState = SqlState(*b"42809");
    /// 54000 `program_limit_exceeded` (a binary field longer than the server can allocate).
    pub const PROGRAM_LIMIT_EXCEEDED: SqlState = SqlState(*b"54000");
    /// 53000 `insufficient_resources` (ENFILE, EMFILE).
    pub const INSUFFICIENT_RESOURCES: SqlState = SqlState(*b"53000");
    /// 53100 `disk_full` (ENOSPC).
    pub const DISK_FULL: SqlState = SqlState(*b"53100");
    /// 08P01 `protocol_violation` (an unexpected message type during COPY from stdin).
    pub const PROTOCOL_VIOLATION: SqlState = SqlState(*b"08P01");
    /// 08006 `connection_failure` (the client's connection ended during COPY from stdin).
    pub const CONNECTION_FAILURE: SqlState = SqlState(*b"08006");
    /// 57014 `query_canceled` (a client's CopyFail: "COPY from stdin failed: …").
    pub const QUERY_CANCELED: SqlState = SqlState(*b"57014");
    /// 58030 `io_error` (EIO, and read errors without an OS error number).
    pub const IO_ERROR: SqlState = SqlState(*b"58030");
    /// 58P01 `undefined_file` (ENOENT).
    pub const UNDEFINED_FILE: SqlState = SqlState(*b"58P01");
    /// 58P02 `duplicate_file` (EEXIST).
    pub const DUPLICATE_FILE: SqlState = SqlState(*b"58P02");
    /// XX000 `internal_error` (any other OS error, as `errcode_for_file_access`).
    pub const INTERNAL_ERROR: SqlState = SqlState(*b"XX000");

    /// A code the server reported (five ASCII characters), if it is one.
    pub fn parse(code: &str) -> Option<SqlState> {
        let b: [u8; 5] = code.as_bytes().try_into().ok()?;
        b.iter()
            .all(|c| c.is_ascii_digit() || c.is_ascii_uppercase())
            .then_some(SqlState(b))
    }

    /// The five characters.
    pub fn as_str(&self) -> &str {
        // the constants above are ASCII
        std::str::from_utf8(&self.0).unwrap_or("XX000")
    }

    /// From the packed form ([`packed`](Self::packed)), if it is a valid code.
    pub fn from_packed(packed: i32) -> Option<SqlState> {
        let chars: String = (0..5)
            .map(|i| ((((packed >> (6 * i)) & 0x3F) as u8) + b'0') as char)
            .collect();
        SqlState::parse(&chars)
    }

    /// The packed form PostgreSQL keeps in `ErrorData.sqlerrcode` (`MAKE_SQLSTATE`: six bits
    /// per character, the first character lowest).
    pub const fn packed(self) -> i32 {
        let mut out = 0i32;
        let mut i = 0;
        while i < 5 {
            out |= (((self.0[i].wrapping_sub(b'0')) & 0x3F) as i32) << (6 * i);
            i += 1;
        }
        out
    }
}

impl fmt::Debug for SqlState {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "SqlState({})", self.as_str())
    }
}

impl fmt::Display for SqlState {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn packed_as_make_sqlstate() {
        // errcodes.h: ERRCODE_BAD_COPY_FILE_FORMAT = MAKE_SQLSTATE('2','2','P','0','4')
        let sixbit = |c: u8| ((c - b'0') & 0x3F) as i32;
        let make = |s: &[u8; 5]| {
            sixbit(s[0])
                + (sixbit(s[1]) << 6)
                + (sixbit(s[2]) << 12)
                + (sixbit(s[3]) << 18)
                + (sixbit(s[4]) << 24)
        };
        for s in [
            SqlState::BAD_COPY_FILE_FORMAT,
            SqlState::CHARACTER_NOT_IN_REPERTOIRE,
            SqlState::IO_ERROR,
            SqlState::UNDEFINED_FILE,
            SqlState::INTERNAL_ERROR,
        ] {
            assert_eq!(s.packed(), make(&s.0), "{s}");
        }
        assert_eq!(
            SqlState::BAD_COPY_FILE_FORMAT.packed(),
            2 + (2 << 6) + (32 << 12) + (4 << 24)
        );
        assert_eq!(SqlState::INTERNAL_ERROR.as_str(), "XX000");
    }
}
