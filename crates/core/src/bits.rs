//! A fixed-length bit array over `u64` words whose bits past the end are always zero
//! (invariant 2 of the design: decoders check it, so two equal arrays have equal bytes).

use alloc::{format, vec::Vec};
use core::fmt;

use crate::error::{DecodeError, Error, Result};

/// Number of `u64` words needed for `bits` bits, or an error if the allocation could not exist.
pub fn words_for_bits(bits: u64) -> Result<usize> {
    let words = bits.div_ceil(64);
    // A Vec may not exceed isize::MAX bytes.
    let max_words = (isize::MAX as u64) / 8;
    if words > max_words {
        return Err(Error::SizeOverflow(format!(
            "{bits} bits need {words} words, more than this platform can address"
        )));
    }
    Ok(words as usize)
}

/// A zeroed `Vec<u64>` of `n` words, or [`Error::SizeOverflow`] if the allocator refuses
/// (instead of aborting the process as `vec![0; n]` would).
pub fn zeroed_words(n: usize) -> Result<Vec<u64>> {
    let mut v: Vec<u64> = Vec::new();
    v.try_reserve_exact(n).map_err(|e| {
        Error::SizeOverflow(format!(
            "cannot allocate {n} words ({} bytes): {e}",
            n as u128 * 8
        ))
    })?;
    v.resize(n, 0);
    Ok(v)
}

/// A bit array of fixed length `len` backed by `u64` words, least significant bit first.
///
/// Serialized as `ceil(len/8)` bytes where bit `i` is `byte[i >> 3] >> (i & 7) & 1` — the byte
/// layout of seed 000 — which is the little-endian byte order of the words.
#[derive(Clone, PartialEq, Eq, Hash)]
pub struct BitArray {
    words: Vec<u64>,
    len: u64,
}

impl BitArray {
    /// An all-zero array of `len` bits. `len` must be at least 1.
    pub fn new(len: u64) -> Result<Self> {
        if len == 0 {
            return Err(Error::invalid("bits", "must be at least 1"));
        }
        Ok(BitArray {
            words: zeroed_words(words_for_bits(len)?)?,
            len,
        })
    }

    /// Wrap existing words; checks the word count and that no bit past `len` is set.
    pub fn from_words(words: Vec<u64>, len: u64) -> Result<Self, DecodeError> {
        check_units(len, words.len(), 64, "words", "words")?;
        let array = BitArray { words, len };
        array.check_tail()?;
        Ok(array)
    }

    /// Read `ceil(len/8)` bytes in the seed layout; checks the length and the tail bits.
    pub fn from_le_bytes(bytes: &[u8], len: u64) -> Result<Self, DecodeError> {
        check_units(len, bytes.len(), 8, "bit array", "bytes")?;
        let words = bytes
            .chunks(8)
            .map(|c| {
                let mut w = [0u8; 8];
                w[..c.len()].copy_from_slice(c);
                u64::from_le_bytes(w)
            })
            .collect();
        BitArray::from_words(words, len)
    }

    /// Append `ceil(len/8)` bytes in the seed layout.
    pub fn write_le_bytes(&self, out: &mut Vec<u8>) {
        let n = self.byte_len();
        out.reserve(n);
        let mut left = n;
        for w in &self.words {
            let b = w.to_le_bytes();
            let take = left.min(8);
            out.extend_from_slice(&b[..take]);
            left -= take;
        }
    }

    /// Number of bytes [`write_le_bytes`](Self::write_le_bytes) writes.
    pub fn byte_len(&self) -> usize {
        self.len.div_ceil(8) as usize
    }

    fn check_tail(&self) -> Result<(), DecodeError> {
        let used = (self.len % 64) as u32;
        if used != 0 {
            let last = *self.words.last().expect("len >= 1 means at least one word");
            if last >> used != 0 {
                return Err(DecodeError::TrailingBitsSet);
            }
        }
        Ok(())
    }

    /// Number of bits.
    #[inline]
    pub fn len(&self) -> u64 {
        self.len
    }

    /// Always false: an array has at least one bit.
    pub fn is_empty(&self) -> bool {
        false
    }

    /// Bit `i`. Panics if `i >= len` (callers reduce with fastrange first).
    #[inline(always)]
    pub fn get(&self, i: u64) -> bool {
        debug_assert!(i < self.len);
        self.words[(i >> 6) as usize] & (1u64 << (i & 63)) != 0
    }

    /// Set bit `i`; returns whether it was already set.
    #[inline(always)]
    pub fn set(&mut self, i: u64) -> bool {
        debug_assert!(i < self.len);
        let w = &mut self.words[(i >> 6) as usize];
        let mask = 1u64 << (i & 63);
        let was = *w & mask != 0;
        *w |= mask;
        was
    }

    /// Number of set bits.
    pub fn count_ones(&self) -> u64 {
        self.words.iter().map(|w| u64::from(w.count_ones())).sum()
    }

    /// Clear every bit.
    pub fn clear(&mut self) {
        self.words.fill(0);
    }

    /// Bitwise OR with an array of the same length.
    pub fn union_with(&mut self, other: &BitArray) -> Result<()> {
        if self.len != other.len {
            return Err(Error::Incompatible(format!(
                "bit arrays of {} and {} bits",
                self.len, other.len
            )));
        }
        or_into(&mut self.words, &other.words);
        Ok(())
    }

    /// Number of set bits in `self | other` without allocating; lengths must match.
    pub fn count_ones_union(&self, other: &BitArray) -> Result<u64> {
        if self.len != other.len {
            return Err(Error::Incompatible(format!(
                "bit arrays of {} and {} bits",
                self.len, other.len
            )));
        }
        Ok(self
            .words
            .iter()
            .zip(&other.words)
            .map(|(a, b)| u64::from((a | b).count_ones()))
            .sum())
    }

    /// The backing words.
    pub fn words(&self) -> &[u64] {
        &self.words
    }

    /// Run `f` on the backing words, to set many bits at once (a parallel build splits them
    /// among threads). Bits past the end that `f` sets are cleared again afterwards, so the
    /// array stays valid whatever `f` does.
    pub fn with_words_mut<R>(&mut self, f: impl FnOnce(&mut [u64]) -> R) -> R {
        let r = f(&mut self.words);
        let tail = self.len % 64;
        if tail != 0
            && let Some(last) = self.words.last_mut()
        {
            *last &= (1u64 << tail) - 1;
        }
        r
    }

    /// Heap bytes used by the words.
    pub fn size_in_bytes(&self) -> usize {
        self.words.len() * 8
    }
}

impl fmt::Debug for BitArray {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("BitArray")
            .field("len", &self.len)
            .field("ones", &self.count_ones())
            .finish()
    }
}

/// The length checks of both decoders: `len ≥ 1` bits held in exactly `⌈len / per⌉` units of
/// `per` bits (`have` given), else an error naming `field`.
fn check_units(
    len: u64,
    have: usize,
    per: u64,
    field: &'static str,
    unit: &str,
) -> Result<(), DecodeError> {
    if len == 0 {
        return Err(DecodeError::field("bits", "must be at least 1"));
    }
    let need = len.div_ceil(per);
    if have as u64 != need {
        return Err(DecodeError::field(
            field,
            format!("{have} {unit} for {len} bits, expected {need}"),
        ));
    }
    Ok(())
}

/// `dst |= src`, word by word, over the shorter of the two (the union of two tables of one
/// shape).
pub fn or_into<W: Copy + core::ops::BitOrAssign>(dst: &mut [W], src: &[W]) {
    for (a, &b) in dst.iter_mut().zip(src) {
        *a |= b;
    }
}

/// Read bit `i` from bytes in the seed layout (for borrowed, zero-copy views).
#[inline(always)]
pub fn get_le_bit(bytes: &[u8], i: u64) -> bool {
    bytes[(i >> 3) as usize] & (1u8 << (i & 7)) != 0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn set_get_count() {
        let mut b = BitArray::new(130).unwrap();
        assert!(!b.set(0));
        assert!(b.set(0));
        b.set(129);
        b.set(64);
        assert!(b.get(0) && b.get(64) && b.get(129) && !b.get(1));
        assert_eq!(b.count_ones(), 3);
        assert_eq!(b.size_in_bytes(), 24);
    }

    #[test]
    fn bytes_round_trip_in_seed_layout() {
        let mut b = BitArray::new(13).unwrap();
        b.set(0);
        b.set(9);
        b.set(12);
        let mut out = Vec::new();
        b.write_le_bytes(&mut out);
        assert_eq!(out, vec![0b0000_0001, 0b0001_0010]);
        assert_eq!(BitArray::from_le_bytes(&out, 13).unwrap(), b);
        assert!(get_le_bit(&out, 9) && !get_le_bit(&out, 8));
    }

    #[test]
    fn tail_bits_are_refused() {
        assert_eq!(
            BitArray::from_le_bytes(&[0, 0b0010_0000], 13),
            Err(DecodeError::TrailingBitsSet)
        );
        assert_eq!(
            BitArray::from_words(vec![1 << 5], 5),
            Err(DecodeError::TrailingBitsSet)
        );
        assert!(BitArray::from_le_bytes(&[0, 0, 0], 13).is_err());
        assert!(BitArray::from_words(vec![], 1).is_err());
        assert!(BitArray::from_words(vec![0], 0).is_err());
    }

    #[test]
    fn overflowing_sizes_are_errors() {
        assert!(matches!(
            BitArray::new(u64::MAX),
            Err(Error::SizeOverflow(_))
        ));
        assert!(BitArray::new(0).is_err());
    }

    #[test]
    fn with_words_mut_clears_what_it_set_past_the_end() {
        // Every word filled with ones: exactly the `len` bits of the array stay set, and the
        // bytes are those of an array with every bit set one at a time.
        for len in [1u64, 5, 63, 64, 65, 100, 127, 128, 130, 191] {
            let mut b = BitArray::new(len).unwrap();
            let words = b.with_words_mut(|w| {
                w.fill(u64::MAX);
                w.len()
            });
            assert_eq!(words as u64, len.div_ceil(64));
            assert_eq!(b.count_ones(), len, "len {len}");
            let mut want = BitArray::new(len).unwrap();
            (0..len).for_each(|i| {
                want.set(i);
            });
            assert_eq!(b, want, "len {len}");
            let mut bytes = Vec::new();
            b.write_le_bytes(&mut bytes);
            assert_eq!(BitArray::from_le_bytes(&bytes, len), Ok(want));
        }
    }

    #[test]
    fn union_requires_equal_lengths() {
        let mut a = BitArray::new(100).unwrap();
        let mut b = BitArray::new(100).unwrap();
        a.set(1);
        b.set(99);
        assert_eq!(a.count_ones_union(&b).unwrap(), 2);
        a.union_with(&b).unwrap();
        assert!(a.get(1) && a.get(99));
        assert!(a.union_with(&BitArray::new(101).unwrap()).is_err());
    }
}
