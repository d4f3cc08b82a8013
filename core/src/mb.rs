//! The multibyte encodings other than UTF-8, checked as the server checks them
//! (`pg_*_verifystr`, `pg_*_mblen` and the `maxmblen` column of `pg_wchar_table` in
//! `src/common/wchar.c`; my own code after those rules):
//! - the server encodings EUC_JP (and EUC_JIS_2004), EUC_CN, EUC_KR, EUC_TW and
//!   MULE_INTERNAL, as the database's encoding or as input that is not converted;
//! - the client-only encodings SJIS (and SHIFT_JIS_2004), BIG5, GBK, UHC, GB18030 and JOHAB,
//!   which reach the reader unconverted only on their way into a SQL_ASCII database.
//!
//! In the server encodings every byte of a multibyte character has its high bit set, so an
//! ASCII byte is always a character of its own. In the client-only ones a second byte may be
//! ASCII (SJIS `表` is `0x95 0x5c`, a backslash). COPY scans its input byte by byte all the
//! same (`CopyReadLineText`: the input is taken to be in the database's encoding, and
//! SQL_ASCII has no multibyte characters), so such a byte is a backslash, a delimiter or a
//! quote for COPY, and the splitters, which scan bytes too, treat it alike. Only the checks
//! differ from UTF-8's.

/// One of the multibyte encodings of this module.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MbEncoding {
    /// EUC_JP and EUC_JIS_2004 (the server checks both alike).
    EucJp,
    EucCn,
    EucKr,
    EucTw,
    MuleInternal,
    /// SJIS and SHIFT_JIS_2004 (checked alike).
    Sjis,
    Big5,
    Gbk,
    Uhc,
    Gb18030,
    Johab,
}

const SS2: u8 = 0x8e;
const SS3: u8 = 0x8f;

/// The pair the non-UTF-8 verifiers of BIG5, GBK and UHC refuse (`NONUTF8_INVALID_BYTE0/1`).
const NONUTF8_INVALID: (u8, u8) = (0x8d, b' ');

/// `ISSJISHEAD`.
fn sjis_head(c: u8) -> bool {
    (0x81..=0x9f).contains(&c) || (0xe0..=0xfc).contains(&c)
}

/// `ISSJISTAIL`.
fn sjis_tail(c: u8) -> bool {
    (0x40..=0x7e).contains(&c) || (0x80..=0xfc).contains(&c)
}

/// A GB18030 first byte, or third of four.
fn gb_byte(c: u8) -> bool {
    (0x81..=0xfe).contains(&c)
}

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
            MbEncoding::EucTw | MbEncoding::MuleInternal | MbEncoding::Gb18030 => 4,
            MbEncoding::Sjis | MbEncoding::Big5 | MbEncoding::Gbk | MbEncoding::Uhc => 2,
            MbEncoding::EucJp | MbEncoding::EucCn | MbEncoding::EucKr | MbEncoding::Johab => 3,
        }
    }

    /// The length the character at the start of `s` (not empty) has, as the server's
    /// `pg_encoding_mblen_or_incomplete` says (GB18030's looks at the second byte too; with
    /// none there, as many as there are): how many bytes an error about it shows.
    pub fn mblen(self, s: &[u8]) -> usize {
        let b = s[0];
        match self {
            MbEncoding::MuleInternal => match b {
                0x81..=0x8d => 2, // LC1
                0x9a | 0x9b => 3, // LCPRV1
                0x90..=0x99 => 3, // LC2
                0x9c | 0x9d => 4, // LCPRV2
                _ => 1,
            },
            _ if b & 0x80 == 0 => 1,
            // pg_euc_mblen
            MbEncoding::EucJp | MbEncoding::EucKr | MbEncoding::Johab => match b {
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
            MbEncoding::Sjis if (0xa1..=0xdf).contains(&b) => 1, // half-width katakana
            MbEncoding::Sjis | MbEncoding::Big5 | MbEncoding::Gbk | MbEncoding::Uhc => 2,
            MbEncoding::Gb18030 => match s.get(1) {
                None => usize::MAX,
                Some(b'0'..=b'9') => 4,
                Some(_) => 2,
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
                let l = self.mblen(s);
                need(l).filter(|_| s[1..l].iter().all(|b| b & 0x80 != 0))
            }
            MbEncoding::Johab => {
                let l = self.mblen(s);
                need(l).filter(|_| s[1..l].iter().all(|&b| euc_range(b)))
            }
            MbEncoding::Sjis => match self.mblen(s) {
                1 => Some(1),
                _ => need(2).filter(|_| sjis_head(c1) && sjis_tail(s[1])),
            },
            // any second byte but NUL, and not the one pair no conversion translates
            MbEncoding::Big5 | MbEncoding::Gbk | MbEncoding::Uhc => {
                need(2).filter(|_| s[1] != 0 && (c1, s[1]) != NONUTF8_INVALID)
            }
            MbEncoding::Gb18030 => {
                if s.len() >= 4 && s[1].is_ascii_digit() {
                    let ok = gb_byte(c1) && gb_byte(s[2]) && s[3].is_ascii_digit();
                    ok.then_some(4)
                } else if s.len() >= 2 && gb_byte(c1) {
                    let ok = (0x40..=0x7e).contains(&s[1]) || (0x80..=0xfe).contains(&s[1]);
                    ok.then_some(2)
                } else {
                    None
                }
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
            (EucJp.mblen(&[SS3]), EucJp.mblen(b"x"), EucJp.max_length()),
            (3, 1, 3)
        );
    }

    #[test]
    fn euc_kr_cn_tw() {
        assert_eq!(EucKr.verify(b"\xb0\xa1x"), 3);
        assert_eq!(EucKr.verify(b"\x8e\xa1"), 0); // no SS2 in EUC_KR's checks
        assert_eq!(EucCn.verify(b"\xb0\xa1"), 2);
        assert_eq!((EucCn.mblen(&[SS2]), EucKr.mblen(&[SS2])), (3, 2));
        assert_eq!(EucTw.verify(b"\x8e\xa2\xa1\xa1x"), 5);
        assert_eq!(EucTw.verify(b"\x8e\xa8\xa1\xa1"), 0); // plane 8
        assert_eq!(EucTw.verify(b"\x8f\xa1\xa1"), 0); // SS3 unused
        // a lead byte outside the EUC range is taken in EUC_TW (only the second is checked)
        assert_eq!(EucTw.verify(b"\x80\xa1"), 2);
        assert_eq!((EucTw.mblen(&[SS2]), EucTw.max_length()), (4, 4));
    }

    #[test]
    fn mule() {
        assert_eq!(MuleInternal.verify(b"\x81\xe9x"), 3);
        assert_eq!(MuleInternal.verify(b"\x9c\xf0\xa1\xa1"), 4);
        assert_eq!(MuleInternal.verify(b"\x81a"), 0);
        assert_eq!(MuleInternal.verify(b"\x9c\xf0\xa1"), 0);
        // a high byte that is no leading byte is a character of its own
        assert_eq!(MuleInternal.verify(b"\xa0x"), 2);
        assert_eq!(MuleInternal.mblen(&[0x9d]), 4);
    }

    #[test]
    fn sjis() {
        // 表 and ソ end in a backslash; ｱ (0xb1) is one byte; 0x81 0x40 is the ideographic space
        let s = b"\x95\x5c\x83\x5cx\xb1\x81\x40";
        assert_eq!(Sjis.verify(s), s.len());
        assert_eq!(Sjis.verify(b"a\x95"), 1); // cut short
        assert_eq!(Sjis.verify(b"\xa0\x40"), 0); // not a lead byte
        assert_eq!(Sjis.verify(b"\x95\x7f"), 0); // not a second byte
        assert_eq!(Sjis.verify(b"\xfd"), 0);
        assert_eq!(
            (Sjis.mblen(b"\xb1"), Sjis.mblen(b"\xfd"), Sjis.max_length()),
            (1, 2, 2)
        );
    }

    #[test]
    fn big5_gbk_uhc() {
        for e in [Big5, Gbk, Uhc] {
            assert_eq!(e.verify(b"\xa4\x5cx\xa4\xa4"), 5, "{e:?}");
            assert_eq!(e.verify(b"\xa4\x00"), 0, "{e:?}"); // NUL second byte
            assert_eq!(e.verify(b"\x8d "), 0, "{e:?}"); // the refused pair
            assert_eq!(e.verify(b"\x8d!"), 2, "{e:?}");
            assert_eq!(e.verify(b"x\xa4"), 1, "{e:?}");
            assert_eq!((e.mblen(b"\x80"), e.max_length()), (2, 2));
        }
    }

    #[test]
    fn gb18030() {
        // a two-byte character (second byte 0x5c) and a four-byte one
        let s = b"\x81\x5c\x81\x30\x81\x30z";
        assert_eq!(Gb18030.verify(s), s.len());
        assert_eq!(Gb18030.verify(b"\x81\x30\x81"), 0); // cut short: not a two-byte one either
        assert_eq!(Gb18030.verify(b"\x81\x30\x81\x7f"), 0);
        assert_eq!(Gb18030.verify(b"\x80\x40"), 0);
        assert_eq!(Gb18030.verify(b"\x81\x7f"), 0);
        assert_eq!(Gb18030.verify(b"\xfe\xfe"), 2);
        assert_eq!(Gb18030.mblen(b"\x81\x30"), 4);
        assert_eq!(Gb18030.mblen(b"\x81\x40"), 2);
        assert_eq!(Gb18030.mblen(b"\x81"), usize::MAX);
        assert_eq!(Gb18030.max_length(), 4);
    }

    #[test]
    fn johab() {
        assert_eq!(Johab.verify(b"\x88\xa1x"), 3);
        assert_eq!(Johab.verify(b"\x88\x61"), 0); // the verifier wants EUC-range second bytes
        assert_eq!(Johab.verify(b"\x8f\xa1\xa1"), 3);
        assert_eq!((Johab.mblen(b"\x8e"), Johab.max_length()), (2, 3));
    }
}
