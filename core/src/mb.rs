//! The server encodings with multibyte characters other than UTF-8: EUC_JP (and EUC_JIS_2004),
//! EUC_CN, EUC_KR, EUC_TW and MULE_INTERNAL, checked as the server checks them
//! (`pg_*_verifystr`, `pg_*_mblen` and the `maxmblen` column of `pg_wchar_table` in
//! `src/common/wchar.c`).
//!
//! In all of them every byte of a multibyte character has its high bit set (the verifiers
//! refuse anything else), so an ASCII byte is always a character of its own: the text and CSV
//! splitters find delimiters, quotes, backslashes and line endings in them exactly as in
//! UTF-8. Only the checks differ.

/// One of the multibyte server encodings of this module.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MbEncoding {
    /// EUC_JP and EUC_JIS_2004 (the server checks both alike).
    EucJp,
    EucCn,
    EucKr,
    EucTw,
    MuleInternal,
}

const SS2: u8 = 0x8e;
const SS3: u8 = 0x8f;

/// `IS_EUC_RANGE_VALID`.
#[inline]
fn euc_range(c: u8) -> bool {
    (0xa1..=0xfe).contains(&c)
}

impl MbEncoding {
    /// The longest character (`maxmblen`): with this many bytes left and none verified, the
    /// input is invalid rather than cut short (`CopyConvertBuf`).
    pub fn max_length(self) -> usize {
        match self {
            MbEncoding::EucTw | MbEncoding::MuleInternal => 4,
            _ => 3,
        }
    }

    /// The length a character starting with `b` has (`pg_*_mblen`): how many bytes an error
    /// about it shows.
    pub fn mblen(self, b: u8) -> usize {
        match self {
            MbEncoding::MuleInternal => match b {
                0x81..=0x8d => 2, // LC1
                0x9a | 0x9b => 3, // LCPRV1
                0x90..=0x99 => 3, // LC2
                0x9c | 0x9d => 4, // LCPRV2
                _ => 1,
            },
            _ if b & 0x80 == 0 => 1,
            MbEncoding::EucJp | MbEncoding::EucKr => match b {
                SS2 => 2,
                SS3 => 3,
                _ => 2,
            },
            MbEncoding::EucCn => match b {
                SS2 | SS3 => 3,
                _ => 2,
            },
            MbEncoding::EucTw => match b {
                SS2 => 4,
                SS3 => 3,
                _ => 2,
            },
        }
    }

    /// `pg_*_verifychar` on a character whose first byte has its high bit set: its length,
    /// or `None` if it is invalid or cut short by the end of `s`.
    fn verify_char(self, s: &[u8]) -> Option<usize> {
        let c1 = s[0];
        let need = |l: usize| (s.len() >= l).then_some(l);
        match self {
            MbEncoding::EucJp => match c1 {
                SS2 => need(2).filter(|_| (0xa1..=0xdf).contains(&s[1])),
                SS3 => need(3).filter(|_| euc_range(s[1]) && euc_range(s[2])),
                _ => need(2).filter(|_| euc_range(c1) && euc_range(s[1])),
            },
            // EUC_CN is checked as EUC_KR
            MbEncoding::EucKr | MbEncoding::EucCn => {
                need(2).filter(|_| euc_range(c1) && euc_range(s[1]))
            }
            MbEncoding::EucTw => match c1 {
                SS2 => need(4).filter(|_| {
                    (0xa1..=0xa7).contains(&s[1]) && euc_range(s[2]) && euc_range(s[3])
                }),
                SS3 => None,
                _ => need(2).filter(|_| euc_range(s[1])),
            },
            MbEncoding::MuleInternal => {
                let l = self.mblen(c1);
                need(l).filter(|_| s[1..l].iter().all(|b| b & 0x80 != 0))
            }
        }
    }

    /// `pg_*_verifystr`: the length of the longest prefix of `s` made of valid characters
    /// without a NUL byte.
    pub fn verify(self, s: &[u8]) -> usize {
        let mut i = 0;
        while i < s.len() {
            // runs of ASCII first: the common case
            let b = s[i];
            if b & 0x80 == 0 {
                if b == 0 {
                    break;
                }
                i += 1;
                continue;
            }
            match self.verify_char(&s[i..]) {
                Some(l) => i += l,
                None => break,
            }
        }
        i
    }
}

#[cfg(test)]
mod tests {
    use super::MbEncoding::*;
    use super::*;

    #[test]
    fn euc_jp() {
        // 日本 in EUC_JP, half-width katakana (SS2), JIS X 0212 (SS3)
        let s = b"a\xc6\xfc\xcb\xdc\x8e\xb1\x8f\xb0\xa1z";
        assert_eq!(EucJp.verify(s), s.len());
        assert_eq!(EucJp.verify(b"a\xc6"), 1); // cut short
        assert_eq!(EucJp.verify(b"a\xc6\x41"), 1); // second byte not in range
        assert_eq!(EucJp.verify(b"\x8e\xe0"), 0); // SS2 beyond half-width katakana
        assert_eq!(EucJp.verify(b"ab\0c"), 2);
        assert_eq!(EucJp.verify(b"\xa0\xa1"), 0);
        assert_eq!(
            (EucJp.mblen(SS3), EucJp.mblen(b'x'), EucJp.max_length()),
            (3, 1, 3)
        );
    }

    #[test]
    fn euc_kr_cn_tw() {
        assert_eq!(EucKr.verify(b"\xb0\xa1x"), 3);
        assert_eq!(EucKr.verify(b"\x8e\xa1"), 0); // no SS2 in EUC_KR's checks
        assert_eq!(EucCn.verify(b"\xb0\xa1"), 2);
        assert_eq!((EucCn.mblen(SS2), EucKr.mblen(SS2)), (3, 2));
        assert_eq!(EucTw.verify(b"\x8e\xa2\xa1\xa1x"), 5);
        assert_eq!(EucTw.verify(b"\x8e\xa8\xa1\xa1"), 0); // plane 8
        assert_eq!(EucTw.verify(b"\x8f\xa1\xa1"), 0); // SS3 unused
        // a lead byte outside the EUC range is taken in EUC_TW (only the second is checked)
        assert_eq!(EucTw.verify(b"\x80\xa1"), 2);
        assert_eq!((EucTw.mblen(SS2), EucTw.max_length()), (4, 4));
    }

    #[test]
    fn mule() {
        assert_eq!(MuleInternal.verify(b"\x81\xe9x"), 3);
        assert_eq!(MuleInternal.verify(b"\x9c\xf0\xa1\xa1"), 4);
        assert_eq!(MuleInternal.verify(b"\x81a"), 0);
        assert_eq!(MuleInternal.verify(b"\x9c\xf0\xa1"), 0);
        // a high byte that is no leading byte is a character of its own
        assert_eq!(MuleInternal.verify(b"\xa0x"), 2);
        assert_eq!(MuleInternal.mblen(0x9d), 4);
    }
}
