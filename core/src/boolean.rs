//! `bool` text input: what `boolin` stores, for the spellings without surrounding whitespace.
//!
//! `boolin` takes, in any case of ASCII letters, a non-empty prefix of `true`, `false`, `yes`
//! or `no`, at least two letters of `on` or `off` (`o` alone is refused), and `1` or `0`; it
//! first drops leading and trailing whitespace, which this module leaves to the server
//! (`None`), with every other input and its error.

/// The `bool` value of `b`, or `None` when the server's `boolin` must read it.
#[inline]
pub fn parse_bool(b: &[u8]) -> Option<bool> {
    // a non-empty prefix of `word`, ignoring the case of ASCII letters
    let prefix = |word: &[u8]| {
        !b.is_empty() && b.len() <= word.len() && b.eq_ignore_ascii_case(&word[..b.len()])
    };
    match b.first()? {
        b't' | b'T' if prefix(b"true") => Some(true),
        b'f' | b'F' if prefix(b"false") => Some(false),
        b'y' | b'Y' if prefix(b"yes") => Some(true),
        b'n' | b'N' if prefix(b"no") => Some(false),
        b'o' | b'O' if b.eq_ignore_ascii_case(b"on") => Some(true),
        b'o' | b'O' if b.len() >= 2 && prefix(b"off") => Some(false),
        b'1' if b.len() == 1 => Some(true),
        b'0' if b.len() == 1 => Some(false),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_spelling_boolin_takes() {
        for (s, v) in [
            ("t", true),
            ("tr", true),
            ("tru", true),
            ("true", true),
            ("TRUE", true),
            ("tRuE", true),
            ("f", false),
            ("fa", false),
            ("fals", false),
            ("false", false),
            ("FALSE", false),
            ("y", true),
            ("ye", true),
            ("yes", true),
            ("YES", true),
            ("n", false),
            ("no", false),
            ("NO", false),
            ("on", true),
            ("ON", true),
            ("oN", true),
            ("off", false),
            ("OFF", false),
            ("oFf", false),
            ("1", true),
            ("0", false),
        ] {
            assert_eq!(parse_bool(s.as_bytes()), Some(v), "{s}");
        }
    }

    #[test]
    fn the_rest_is_the_servers() {
        for s in [
            "", "o", "offf", "onn", "truee", "falsey", "yess", "noo", "10", "00", "2", "-1", " t",
            "t ", "\tfalse", "tx", "x", "yes!", "t\u{e9}",
        ] {
            assert_eq!(parse_bool(s.as_bytes()), None, "{s:?}");
        }
    }
}
