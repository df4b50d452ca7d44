//! Strings as the web platform sees them: sequences of UTF-16 code units.
//!
//! IndexedDB compares string keys by code unit
//! (<https://www.w3.org/TR/IndexedDB-3/#compare-two-keys>, step 5), and a JavaScript string may
//! hold a lone surrogate, so keys and values store strings as code units rather than as Rust
//! `String`s (which must be valid UTF-8).

use std::fmt;

use smallvec::SmallVec;

/// Code units kept inline, without a heap allocation. Most property names and many values are
/// this short, and a record read back allocates one string per name and per string value.
const INLINE_UNITS: usize = 16;

type Units = SmallVec<[u16; INLINE_UNITS]>;

/// Up to 16 bytes (callers check) as two little-endian words (bytes 0–7, bytes 8–15), zero
/// past the end, read with a few overlapping loads instead of byte by byte.
fn short_le(bytes: &[u8]) -> (u64, u64) {
    let n = bytes.len();
    debug_assert!(n <= INLINE_UNITS);
    let u64_at = |i: usize| u64::from_le_bytes(bytes[i..i + 8].try_into().unwrap());
    let u32_at = |i: usize| u64::from(u32::from_le_bytes(bytes[i..i + 4].try_into().unwrap()));
    match n {
        0 => (0, 0),
        1..=3 => {
            let b = |i: usize| u64::from(bytes[i]) << (8 * i);
            (b(0) | b(n / 2) | b(n - 1), 0)
        }
        4..=7 => (u32_at(0) | (u32_at(n - 4) << (8 * (n - 4))), 0),
        8 => (u64_at(0), 0),
        _ => (u64_at(0), u64_at(n - 8) >> (8 * (16 - n))),
    }
}

/// Bytes 0–7 (`lo`) and 8–15 (`hi`), each widened to a code unit. Built from registers and
/// written whole, the units can be moved on at once: filled unit by unit in memory and then
/// copied as a block, they stalled the copy (its load waits for the small stores), which cost
/// a generic scan a sixth of its time.
#[cfg(all(target_arch = "x86_64", target_feature = "sse2"))]
fn widen(lo: u64, hi: u64) -> [u16; INLINE_UNITS] {
    use std::arch::x86_64::{
        _mm_set_epi64x, _mm_setzero_si128, _mm_storeu_si128, _mm_unpackhi_epi8, _mm_unpacklo_epi8,
    };
    let mut out = [0u16; INLINE_UNITS];
    // SAFETY: SSE2 is enabled (the cfg above); the two unaligned stores write the 16
    // bytes at `out` and the 16 after them, exactly `out`'s 32.
    unsafe {
        let bytes = _mm_set_epi64x(hi as i64, lo as i64);
        let zero = _mm_setzero_si128();
        _mm_storeu_si128(out.as_mut_ptr().cast(), _mm_unpacklo_epi8(bytes, zero));
        _mm_storeu_si128(
            out.as_mut_ptr().add(8).cast(),
            _mm_unpackhi_epi8(bytes, zero),
        );
    }
    out
}

/// [`widen`] where SSE2 is not at hand (with it, only for the test that compares the two).
#[cfg(any(not(all(target_arch = "x86_64", target_feature = "sse2")), test))]
fn widen_portable(lo: u64, hi: u64) -> [u16; INLINE_UNITS] {
    let bytes = ((u128::from(hi) << 64) | u128::from(lo)).to_le_bytes();
    bytes.map(u16::from)
}

#[cfg(not(all(target_arch = "x86_64", target_feature = "sse2")))]
use widen_portable as widen;

/// A sequence of UTF-16 code units, possibly with lone surrogates.
///
/// Ordering (`Ord`) is by code unit, as the spec requires: `"\u{1D11E}"` (code units
/// `D834 DD1E`) sorts before `"\u{FFFD}"`. Convert from Rust text with `From<&str>` /
/// `From<String>`; back with [`Utf16String::to_string_lossy`] or [`Utf16String::to_string`]
/// (`None` when a lone surrogate is present).
#[derive(Clone, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Utf16String(Units);

impl Utf16String {
    /// An empty string.
    pub fn new() -> Self {
        Utf16String(Units::new())
    }

    /// Wraps code units as they are (lone surrogates allowed).
    pub fn from_units(units: Vec<u16>) -> Self {
        if units.len() <= INLINE_UNITS {
            Utf16String(Units::from_slice(&units))
        } else {
            Utf16String(Units::from_vec(units))
        }
    }

    /// The string of `bytes` when they are all ASCII (below `0x80`), one code unit per byte;
    /// `None` when one is not. Cheaper than going through `&str` for text known to be ASCII.
    #[inline]
    pub fn from_ascii(bytes: &[u8]) -> Option<Self> {
        if bytes.len() <= INLINE_UNITS {
            let (lo, hi) = short_le(bytes);
            if (lo | hi) & 0x8080_8080_8080_8080 != 0 {
                return None;
            }
            Some(Utf16String(Units::from_buf_and_len(
                widen(lo, hi),
                bytes.len(),
            )))
        } else if bytes.is_ascii() {
            Some(Utf16String(Units::from_vec(
                bytes.iter().map(|&b| u16::from(b)).collect(),
            )))
        } else {
            None
        }
    }

    /// Appends code units (lone surrogates allowed).
    pub(crate) fn push_units(&mut self, units: impl IntoIterator<Item = u16>) {
        self.0.extend(units);
    }

    /// The string whose WTF-8 bytes (see [`Utf16String::to_wtf8`]) are `bytes`, as stored
    /// for names with a lone surrogate (`docs/format.md`); `None` when `bytes` are not WTF-8.
    pub fn from_wtf8(bytes: &[u8]) -> Option<Self> {
        crate::value_codec::wtf8_to_units(bytes)
    }

    /// The code units.
    pub fn units(&self) -> &[u16] {
        &self.0
    }

    /// Consumes the string, returning its code units.
    pub fn into_units(self) -> Vec<u16> {
        self.0.into_vec()
    }

    /// Number of code units (JavaScript's `length`).
    pub fn len(&self) -> usize {
        self.0.len()
    }

    /// True when there are no code units.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// True when `self` starts with the code units of `prefix`.
    pub fn starts_with(&self, prefix: &Utf16String) -> bool {
        self.0.starts_with(&prefix.0)
    }

    /// The text as a Rust `String`, or `None` if it holds a lone surrogate.
    #[allow(clippy::inherent_to_string_shadow_display)]
    pub fn to_string(&self) -> Option<String> {
        String::from_utf16(&self.0).ok()
    }

    /// The text as a Rust `String`, lone surrogates replaced by U+FFFD.
    pub fn to_string_lossy(&self) -> String {
        String::from_utf16_lossy(&self.0)
    }

    /// The WTF-8 bytes of the string: UTF-8, with each lone surrogate written as the
    /// three-byte sequence UTF-8 would use for its value (`U+D800` → `ED A0 80`). Distinct
    /// strings have distinct bytes, and a string without lone surrogates gets its UTF-8.
    pub fn to_wtf8(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(self.0.len());
        push_wtf8(&mut out, &self.0);
        out
    }

    /// True when the code units equal the UTF-16 encoding of `s` (no allocation).
    pub fn eq_str(&self, s: &str) -> bool {
        let mut units = self.0.iter();
        for u in s.encode_utf16() {
            if units.next() != Some(&u) {
                return false;
            }
        }
        units.next().is_none()
    }
}

/// Appends the WTF-8 bytes of `units` (see [`Utf16String::to_wtf8`]).
pub(crate) fn push_wtf8(out: &mut Vec<u8>, units: &[u16]) {
    for c in char::decode_utf16(units.iter().copied()) {
        match c {
            Ok(c) => {
                let mut buf = [0u8; 4];
                out.extend_from_slice(c.encode_utf8(&mut buf).as_bytes());
            }
            Err(e) => {
                let u = e.unpaired_surrogate();
                out.extend_from_slice(&[
                    0xE0 | (u >> 12) as u8,
                    0x80 | ((u >> 6) & 0x3F) as u8,
                    0x80 | (u & 0x3F) as u8,
                ]);
            }
        }
    }
}

impl From<&str> for Utf16String {
    fn from(s: &str) -> Self {
        Utf16String::from_ascii(s.as_bytes())
            .unwrap_or_else(|| Utf16String(s.encode_utf16().collect()))
    }
}

impl FromIterator<u16> for Utf16String {
    /// Collects code units as they are (lone surrogates allowed).
    fn from_iter<I: IntoIterator<Item = u16>>(units: I) -> Self {
        Utf16String(units.into_iter().collect())
    }
}

impl From<String> for Utf16String {
    fn from(s: String) -> Self {
        Utf16String::from(s.as_str())
    }
}

impl From<&Utf16String> for Utf16String {
    fn from(s: &Utf16String) -> Self {
        s.clone()
    }
}

impl From<&String> for Utf16String {
    fn from(s: &String) -> Self {
        Utf16String::from(s.as_str())
    }
}

impl PartialEq<str> for Utf16String {
    fn eq(&self, other: &str) -> bool {
        self.eq_str(other)
    }
}

impl AsRef<[u16]> for Utf16String {
    fn as_ref(&self) -> &[u16] {
        self.units()
    }
}

impl PartialEq<&str> for Utf16String {
    fn eq(&self, other: &&str) -> bool {
        self.eq_str(other)
    }
}

impl fmt::Debug for Utf16String {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.to_string() {
            Some(s) => write!(f, "{s:?}"),
            None => write!(f, "Utf16String({:04X?})", self.0),
        }
    }
}

impl fmt::Display for Utf16String {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.to_string_lossy())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wtf8_bytes_read_back_and_invalid_bytes_are_refused() {
        let lone = Utf16String::from_units(vec![0x61, 0xD800]);
        assert_eq!(lone.to_wtf8(), [0x61, 0xED, 0xA0, 0x80]);
        assert_eq!(Utf16String::from_wtf8(&lone.to_wtf8()), Some(lone));
        assert_eq!(
            Utf16String::from_wtf8("é".as_bytes()),
            Some(Utf16String::from("é"))
        );
        // A lead surrogate followed by a trail surrogate must be one 4-byte code point.
        assert_eq!(
            Utf16String::from_wtf8(&[0xED, 0xA0, 0x80, 0xED, 0xB0, 0x80]),
            None
        );
        assert_eq!(Utf16String::from_wtf8(&[0xFF]), None);
    }

    #[test]
    fn both_widenings_agree() {
        for (lo, hi) in [
            (0, 0),
            (0x7F7F_7F7F_7F7F_7F7F, 0x0102_0304_0506_0708),
            (0x0123_4567_89AB_CDEF, u64::MAX),
        ] {
            let want: Vec<u16> = ((u128::from(hi) << 64) | u128::from(lo))
                .to_le_bytes()
                .iter()
                .map(|&b| u16::from(b))
                .collect();
            assert_eq!(widen(lo, hi).to_vec(), want);
            assert_eq!(widen_portable(lo, hi).to_vec(), want);
        }
    }

    #[test]
    fn ascii_bytes_of_every_short_length_widen_and_others_are_refused() {
        let text = "The quick brown fox jumps over the lazy dog, twice.";
        for len in 0..=40 {
            let bytes = &text.as_bytes()[..len];
            let expected: Vec<u16> = text[..len].encode_utf16().collect();
            assert_eq!(
                Utf16String::from_ascii(bytes).map(|s| s.into_units()),
                Some(expected),
                "{len}"
            );
            for at in 0..len {
                for high in [0x80, 0xC3, 0xFF] {
                    let mut other = bytes.to_vec();
                    other[at] = high;
                    assert_eq!(
                        Utf16String::from_ascii(&other),
                        None,
                        "{len} {at} {high:#x}"
                    );
                }
            }
        }
        assert_eq!(
            Utf16String::from("héllo").units(),
            [0x68, 0xE9, 0x6C, 0x6C, 0x6F]
        );
    }

    #[test]
    fn inline_and_heap_strings_behave_alike() {
        for len in [0, 1, 15, 16, 17, 40] {
            let text: String = "abcdefghijklmnopqrstuvwxyz0123456789ABCD"[..len].to_owned();
            let from_str = Utf16String::from(text.as_str());
            let from_bytes = Utf16String::from_ascii(text.as_bytes()).unwrap();
            let units: Vec<u16> = text.encode_utf16().collect();
            let from_units = Utf16String::from_units(units.clone());
            assert_eq!(from_str, from_bytes, "{len}");
            assert_eq!(from_str, from_units, "{len}");
            assert_eq!(from_bytes.units(), units.as_slice(), "{len}");
            assert_eq!(from_units.clone().into_units(), units, "{len}");
            assert_eq!(
                from_bytes.to_string().as_deref(),
                Some(text.as_str()),
                "{len}"
            );
            let mut grown = Utf16String::from_ascii(text.as_bytes()).unwrap();
            grown.push_units([0xD800]);
            assert_eq!(grown.len(), len + 1);
            assert_eq!(grown.units()[len], 0xD800);
            assert!(grown.starts_with(&from_str));
        }
    }

    #[test]
    fn compares_by_code_unit_not_code_point() {
        // U+1D11E is D834 DD1E in UTF-16, below U+FFFD; by code point it would be above.
        let clef = Utf16String::from("\u{1D11E}");
        let replacement = Utf16String::from("\u{FFFD}");
        assert!(clef < replacement);
    }

    #[test]
    fn lone_surrogate_round_trips_as_units() {
        let s = Utf16String::from_units(vec![0x61, 0xD800]);
        assert_eq!(s.to_string(), None);
        assert_eq!(s.to_string_lossy(), "a\u{FFFD}");
        assert_eq!(s.units(), &[0x61, 0xD800]);
    }

    #[test]
    fn eq_str_compares_units() {
        assert!(Utf16String::from("héllo").eq_str("héllo"));
        assert!(!Utf16String::from("hél").eq_str("héllo"));
        assert!(!Utf16String::from("héllo").eq_str("hél"));
    }
}
