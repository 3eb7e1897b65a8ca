//! The bucket table: `num_buckets` buckets of [`BUCKET_SIZE`] slots, each slot an `f`-bit
//! fingerprint, bit-packed back to back in `u64` words (slot `j` of bucket `i` occupies bits
//! `(4·i + j)·f .. (4·i + j + 1)·f`, least significant bit first). Fingerprint 0 marks an
//! empty slot. One zero word of padding follows the last word, so a field or bucket is
//! always read from two adjacent words without a branch; it is never serialized. The table knows nothing about keys or hashing: it reads, writes and finds
//! fingerprints, and the filter decides where they go.

use alloc::{format, string::ToString, vec::Vec};
use bloomlab_core::bits::{words_for_bits, zeroed_words};
use bloomlab_core::error::{DecodeError, Error, Result};

/// Slots per bucket (Fan et al. 2014 recommend 4: ≈ 95 % load with short fingerprints).
pub const BUCKET_SIZE: u32 = 4;

/// Fingerprint value that marks an empty slot. Real fingerprints are `1..2^f`.
pub const EMPTY: u32 = 0;

/// Widest fingerprint the table stores.
pub const MAX_FINGERPRINT_BITS: u32 = 32;

/// Narrowest fingerprint the table stores (three non-zero values).
pub const MIN_FINGERPRINT_BITS: u32 = 2;

#[inline(always)]
fn mask(width: u32) -> u64 {
    if width >= 64 {
        u64::MAX
    } else {
        (1u64 << width) - 1
    }
}

/// Total table bits for `num_buckets` buckets of `f`-bit slots, or a size error.
pub(crate) fn table_bits(num_buckets: u64, fingerprint_bits: u32) -> Result<u64> {
    let bits =
        u128::from(num_buckets) * u128::from(BUCKET_SIZE) * u128::from(fingerprint_bits.max(1));
    u64::try_from(bits).map_err(|_| {
        Error::SizeOverflow(format!(
            "{num_buckets} buckets of {BUCKET_SIZE} × {fingerprint_bits}-bit slots exceed 2^64 bits"
        ))
    })
}

/// Bit-packed buckets of fingerprints. See the module docs for the layout.
#[derive(Clone, PartialEq, Eq, Hash)]
pub struct BucketTable {
    words: Vec<u64>,
    num_buckets: u64,
    f: u32,
    /// `4·f` when a whole bucket fits one 64-bit read (f ≤ 16), else 0.
    bucket_width: u32,
    /// Bit 0 of every field of a bucket: `Σ_j 2^(j·f)` (0 when `bucket_width` is 0).
    lows: u64,
    /// Top bit of every field of a bucket: `lows << (f − 1)`.
    highs: u64,
}

impl BucketTable {
    /// An empty table. Errors on a fingerprint width outside
    /// `MIN_FINGERPRINT_BITS..=MAX_FINGERPRINT_BITS`, zero buckets, or a size that overflows.
    pub fn new(num_buckets: u64, fingerprint_bits: u32) -> Result<Self> {
        let bits = Self::check_shape(num_buckets, fingerprint_bits)?;
        let padded = words_for_bits(bits)?
            .checked_add(1)
            .ok_or_else(|| Error::SizeOverflow(format!("{bits} bits")))?;
        Ok(Self::from_words_unchecked(
            zeroed_words(padded)?,
            num_buckets,
            fingerprint_bits,
        ))
    }

    fn check_shape(num_buckets: u64, fingerprint_bits: u32) -> Result<u64> {
        if num_buckets == 0 {
            return Err(Error::invalid("num_buckets", "must be at least 1"));
        }
        // Size first: an impossible size is reported as such even when f is also out of range.
        let bits = table_bits(num_buckets, fingerprint_bits)?;
        if !(MIN_FINGERPRINT_BITS..=MAX_FINGERPRINT_BITS).contains(&fingerprint_bits) {
            return Err(Error::invalid(
                "fingerprint_bits",
                format!(
                    "must be between {MIN_FINGERPRINT_BITS} and {MAX_FINGERPRINT_BITS} (got {fingerprint_bits})"
                ),
            ));
        }
        Ok(bits)
    }

    /// `words` must already end with the zero padding word.
    fn from_words_unchecked(words: Vec<u64>, num_buckets: u64, f: u32) -> Self {
        debug_assert_eq!(words.last(), Some(&0));
        let bucket_width = if BUCKET_SIZE * f <= 64 {
            BUCKET_SIZE * f
        } else {
            0
        };
        let lows = if bucket_width != 0 {
            (0..BUCKET_SIZE).map(|j| 1u64 << (j * f)).sum()
        } else {
            0
        };
        BucketTable {
            words,
            num_buckets,
            f,
            bucket_width,
            lows,
            highs: lows << (f - 1),
        }
    }

    /// Rebuild from `ceil(table_bits/8)` little-endian bytes; checks the length and that the
    /// bits past the last slot are zero.
    pub fn from_le_bytes(
        bytes: &[u8],
        num_buckets: u64,
        fingerprint_bits: u32,
    ) -> Result<Self, DecodeError> {
        let bits = Self::check_shape(num_buckets, fingerprint_bits)
            .map_err(|e| DecodeError::field("num_buckets/fingerprint_bits", e.to_string()))?;
        let words = bytes_to_words(bytes, bits)?;
        Ok(Self::from_words_unchecked(
            words,
            num_buckets,
            fingerprint_bits,
        ))
    }

    /// Rebuild from words (serde path); same checks as [`from_le_bytes`](Self::from_le_bytes).
    pub fn from_words(
        words: Vec<u64>,
        num_buckets: u64,
        fingerprint_bits: u32,
    ) -> Result<Self, DecodeError> {
        let bits = Self::check_shape(num_buckets, fingerprint_bits)
            .map_err(|e| DecodeError::field("num_buckets/fingerprint_bits", e.to_string()))?;
        if words.len() as u64 != bits.div_ceil(64) {
            return Err(DecodeError::field(
                "words",
                format!("{} words for {bits} bits", words.len()),
            ));
        }
        check_tail(&words, bits)?;
        let mut words = words;
        words.push(0);
        Ok(Self::from_words_unchecked(
            words,
            num_buckets,
            fingerprint_bits,
        ))
    }

    /// Grow in place to `num_buckets` (at least the current count): the new buckets are empty
    /// and every existing slot keeps its bits (the layout is linear in the bucket index). On
    /// error (a size that overflows or cannot be allocated) the table is unchanged.
    pub fn extend_to(&mut self, num_buckets: u64) -> Result<()> {
        if num_buckets < self.num_buckets {
            return Err(Error::invalid("num_buckets", "a table only grows"));
        }
        let bits = Self::check_shape(num_buckets, self.f)?;
        let padded = words_for_bits(bits)?
            .checked_add(1)
            .ok_or_else(|| Error::SizeOverflow(format!("{bits} bits")))?;
        self.words
            .try_reserve_exact(padded - self.words.len())
            .map_err(|e| Error::SizeOverflow(format!("{padded} words: {e}")))?;
        self.words.resize(padded, 0);
        self.num_buckets = num_buckets;
        Ok(())
    }

    /// Append `ceil(table_bits/8)` little-endian bytes.
    pub fn write_le_bytes(&self, out: &mut Vec<u8>) {
        let mut left = self.byte_len();
        out.reserve(left);
        for w in &self.words {
            let take = left.min(8);
            out.extend_from_slice(&w.to_le_bytes()[..take]);
            left -= take;
        }
    }

    /// Bytes [`write_le_bytes`](Self::write_le_bytes) writes.
    pub fn byte_len(&self) -> usize {
        self.bits().div_ceil(8) as usize
    }

    /// The words holding the slots, without the padding word (for serde).
    #[inline]
    pub fn words(&self) -> &[u64] {
        &self.words[..self.words.len() - 1]
    }

    /// The 64 bits from bit `pos` of the table on (`pos` below [`bits`](Self::bits)): bit
    /// `pos + j` is bit `j` of the answer. Past the last slot it reads the zero padding word
    /// (and the unused bits of the last word), so it needs no bounds check beyond one word's.
    #[inline(always)]
    pub fn bits_at(&self, pos: u64) -> u64 {
        let w = (pos / 64) as usize;
        let pair = u128::from(self.words[w]) | (u128::from(self.words[w + 1]) << 64);
        (pair >> (pos % 64)) as u64
    }

    /// Number of buckets.
    #[inline]
    pub fn num_buckets(&self) -> u64 {
        self.num_buckets
    }

    /// Fingerprint width `f`.
    #[inline]
    pub fn fingerprint_bits(&self) -> u32 {
        self.f
    }

    /// Number of slots, `4 · num_buckets`.
    pub fn slots(&self) -> u64 {
        self.num_buckets * u64::from(BUCKET_SIZE)
    }

    /// Bits the slots occupy, `slots · f` (the heap adds < 64 bits of word rounding).
    pub fn bits(&self) -> u64 {
        self.slots() * u64::from(self.f)
    }

    /// Heap bytes of the words, the padding word included.
    pub fn size_in_bytes(&self) -> usize {
        self.words.len() * 8
    }

    #[inline(always)]
    fn read(&self, pos: u64, width: u32) -> u64 {
        let w = (pos / 64) as usize;
        let off = (pos % 64) as u32;
        // Branch-free: the high word's contribution is `next << (64 − off)`, written as two
        // shifts so that `off = 0` contributes nothing instead of shifting by 64.
        let lo = self.words[w] >> off;
        let hi = (self.words[w + 1] << 1) << (63 - off);
        (lo | hi) & mask(width)
    }

    #[inline(always)]
    fn write(&mut self, pos: u64, width: u32, value: u64) {
        let w = (pos / 64) as usize;
        let off = (pos % 64) as u32;
        let m = mask(width);
        let value = value & m;
        self.words[w] = (self.words[w] & !(m << off)) | (value << off);
        if off + width > 64 {
            let spill = 64 - off; // bits already written into word w
            let hi_mask = m >> spill;
            self.words[w + 1] = (self.words[w + 1] & !hi_mask) | (value >> spill);
        }
    }

    #[inline(always)]
    fn slot_pos(&self, bucket: u64, slot: u32) -> u64 {
        (bucket * u64::from(BUCKET_SIZE) + u64::from(slot)) * u64::from(self.f)
    }

    /// The fingerprint in `slot` of `bucket` ([`EMPTY`] if none).
    #[inline]
    pub fn get(&self, bucket: u64, slot: u32) -> u32 {
        self.read(self.slot_pos(bucket, slot), self.f) as u32
    }

    /// Overwrite `slot` of `bucket`.
    #[inline]
    pub fn set(&mut self, bucket: u64, slot: u32, fp: u32) {
        self.write(self.slot_pos(bucket, slot), self.f, u64::from(fp));
    }

    /// The first slot of `bucket` holding `fp`, if any.
    #[inline(always)]
    pub fn find(&self, bucket: u64, fp: u32) -> Option<u32> {
        if self.bucket_width != 0 {
            // The whole bucket in one (possibly two-word) read.
            let b = self.read(self.slot_pos(bucket, 0), self.bucket_width);
            let m = mask(self.f);
            (0..BUCKET_SIZE).find(|&j| (b >> (j * self.f)) & m == u64::from(fp))
        } else {
            (0..BUCKET_SIZE).find(|&j| self.get(bucket, j) == fp)
        }
    }

    /// Whether `bucket` holds `fp`.
    ///
    /// For `f ≤ 16` without a branch per slot: XOR the bucket with `fp` copied into every
    /// field, then test for a zero field with `(x − lows) & !x & highs ≠ 0` (the classic
    /// "has a zero byte" test, Mycroft 1987, for `f`-bit fields: the lowest zero field always
    /// sets its top bit, and a non-zero field below every zero field never does).
    #[inline(always)]
    pub fn contains(&self, bucket: u64, fp: u32) -> bool {
        if self.bucket_width != 0 {
            let b = self.read(self.slot_pos(bucket, 0), self.bucket_width);
            let x = b ^ (u64::from(fp) * self.lows);
            (x.wrapping_sub(self.lows) & !x & self.highs) != 0
        } else {
            self.find(bucket, fp).is_some()
        }
    }

    /// Slots of `bucket` holding `fp` (0 to [`BUCKET_SIZE`]).
    #[inline]
    pub fn count(&self, bucket: u64, fp: u32) -> u32 {
        if self.bucket_width != 0 {
            let b = self.read(self.slot_pos(bucket, 0), self.bucket_width);
            let m = mask(self.f);
            (0..BUCKET_SIZE)
                .filter(|&j| (b >> (j * self.f)) & m == u64::from(fp))
                .count() as u32
        } else {
            (0..BUCKET_SIZE)
                .filter(|&j| self.get(bucket, j) == fp)
                .count() as u32
        }
    }

    /// Put `fp` in the first empty slot of `bucket`; `false` if the bucket is full.
    #[inline]
    pub fn insert_into_empty(&mut self, bucket: u64, fp: u32) -> bool {
        self.replace_first(bucket, EMPTY, fp)
    }

    /// Clear one slot of `bucket` holding `fp`; `false` if there is none.
    #[inline]
    pub fn remove(&mut self, bucket: u64, fp: u32) -> bool {
        self.replace_first(bucket, fp, EMPTY)
    }

    /// Write `new` into the first slot of `bucket` holding `old`; `false` if there is none.
    #[inline]
    fn replace_first(&mut self, bucket: u64, old: u32, new: u32) -> bool {
        let slot = self.find(bucket, old);
        if let Some(j) = slot {
            self.set(bucket, j, new);
        }
        slot.is_some()
    }

    /// Occupied slots in `bucket`.
    pub fn bucket_occupancy(&self, bucket: u64) -> u32 {
        (0..BUCKET_SIZE)
            .filter(|&j| self.get(bucket, j) != EMPTY)
            .count() as u32
    }

    /// Occupied slots in the whole table (a full scan; decoders use it to check the count).
    pub fn occupied(&self) -> u64 {
        (0..self.num_buckets)
            .map(|b| u64::from(self.bucket_occupancy(b)))
            .sum()
    }

    /// Every occupied slot as `(bucket, slot, fingerprint)`, in table order (a full scan, for
    /// tests and diagnostics).
    pub fn stored(&self) -> Vec<(u64, u32, u32)> {
        (0..self.num_buckets)
            .flat_map(|b| (0..BUCKET_SIZE).map(move |j| (b, j)))
            .map(|(b, j)| (b, j, self.get(b, j)))
            .filter(|&(_, _, fp)| fp != EMPTY)
            .collect()
    }

    /// Empty every slot.
    pub fn clear(&mut self) {
        self.words.fill(0);
    }
}

fn check_tail(words: &[u64], bits: u64) -> Result<(), DecodeError> {
    let used = (bits % 64) as u32;
    if used != 0
        && let Some(last) = words.last()
        && last >> used != 0
    {
        return Err(DecodeError::TrailingBitsSet);
    }
    Ok(())
}

fn bytes_to_words(bytes: &[u8], bits: u64) -> Result<Vec<u64>, DecodeError> {
    let need = bits.div_ceil(8);
    if bytes.len() as u64 != need {
        return Err(DecodeError::field(
            "table",
            format!("{} bytes for {bits} bits, expected {need}", bytes.len()),
        ));
    }
    let mut words: Vec<u64> = Vec::with_capacity(bytes.len().div_ceil(8) + 1);
    words.extend(bytes.chunks(8).map(|c| {
        let mut w = [0u8; 8];
        w[..c.len()].copy_from_slice(c);
        u64::from_le_bytes(w)
    }));
    check_tail(&words, bits)?;
    words.push(0); // the padding word
    Ok(words)
}

impl core::fmt::Debug for BucketTable {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("BucketTable")
            .field("num_buckets", &self.num_buckets)
            .field("fingerprint_bits", &self.f)
            .field("bytes", &self.size_in_bytes())
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bits_at_reads_64_bits_from_any_position() {
        for f in [2u32, 7, 13, 16, 17, 20, 32] {
            let mut t = BucketTable::new(3, f).unwrap();
            for (i, s) in (0..3)
                .flat_map(|b| (0..BUCKET_SIZE).map(move |s| (b, s)))
                .enumerate()
            {
                t.set(
                    s.0,
                    s.1,
                    (0x9e37_79b9u32.wrapping_mul(i as u32 + 1)) >> (32 - f),
                );
            }
            let bit = |p: u64| -> u64 {
                if p >= t.bits() {
                    return 0;
                }
                let (b, s) = (p / (4 * u64::from(f)), ((p / u64::from(f)) % 4) as u32);
                u64::from(t.get(b, s)) >> (p % u64::from(f)) & 1
            };
            for pos in 0..t.bits() {
                let want = (0..64).fold(0u64, |x, j| x | bit(pos + j) << j);
                assert_eq!(t.bits_at(pos), want, "f {f} pos {pos}");
            }
        }
    }

    #[test]
    fn extending_keeps_every_slot_and_adds_empty_buckets() {
        for f in [7u32, 13, 16, 17, 32] {
            let mut t = BucketTable::new(5, f).unwrap();
            for b in 0..5 {
                for s in 0..BUCKET_SIZE {
                    t.set(b, s, (b as u32 * 4 + s + 1) & ((1u64 << f) - 1) as u32);
                }
            }
            let before = t.clone();
            t.extend_to(23).unwrap();
            assert_eq!(t.num_buckets(), 23);
            assert_eq!(
                t.size_in_bytes(),
                BucketTable::new(23, f).unwrap().size_in_bytes()
            );
            for b in 0..23 {
                for s in 0..BUCKET_SIZE {
                    let want = if b < 5 { before.get(b, s) } else { 0 };
                    assert_eq!(t.get(b, s), want, "f {f} bucket {b} slot {s}");
                }
            }
            assert!(t.extend_to(22).is_err());
            let mut bytes = Vec::new();
            t.write_le_bytes(&mut bytes);
            assert_eq!(BucketTable::from_le_bytes(&bytes, 23, f).unwrap(), t);
        }
    }

    #[test]
    fn fields_do_not_bleed_into_neighbours() {
        for f in [2u32, 3, 7, 9, 10, 13, 16, 17, 31, 32] {
            let mut t = BucketTable::new(37, f).unwrap();
            let top = (1u64 << f) - 1;
            // Write a distinct pattern to every slot, then read it back.
            let val = |b: u64, j: u32| (((b * 4 + u64::from(j)) * 0x9e37_79b9) % top + 1) as u32;
            for b in 0..37 {
                for j in 0..BUCKET_SIZE {
                    t.set(b, j, val(b, j));
                }
            }
            for b in 0..37 {
                for j in 0..BUCKET_SIZE {
                    assert_eq!(t.get(b, j), val(b, j), "f={f} b={b} j={j}");
                    assert_eq!(t.find(b, val(b, j)).map(|s| t.get(b, s)), Some(val(b, j)));
                }
            }
            assert_eq!(t.occupied(), 37 * 4);
            // `count` agrees with the slots read one by one, with and without repeats.
            let by_slot = |t: &BucketTable, b: u64, v: u32| {
                (0..BUCKET_SIZE).filter(|&j| t.get(b, j) == v).count() as u32
            };
            for b in 0..37 {
                for j in 0..BUCKET_SIZE {
                    assert!(t.count(b, val(b, j)) >= 1);
                    assert_eq!(t.count(b, val(b, j)), by_slot(&t, b, val(b, j)), "f={f}");
                }
                assert_eq!(t.count(b, EMPTY), 0);
            }
            let twice = t.count(5, val(5, 1)) + u32::from(val(5, 3) != val(5, 1));
            t.set(5, 3, val(5, 1));
            assert_eq!(t.count(5, val(5, 1)), twice, "f={f}");
            t.set(5, 3, val(5, 3));
            // Clearing one slot leaves the others intact.
            t.set(5, 2, EMPTY);
            assert_eq!(t.get(5, 1), val(5, 1));
            assert_eq!(t.get(5, 3), val(5, 3));
            assert_eq!(t.occupied(), 37 * 4 - 1);
            assert!(t.insert_into_empty(5, 1));
            assert!(!t.insert_into_empty(5, 1));
            // Bits past the last slot stay zero.
            let mut bytes = Vec::new();
            t.write_le_bytes(&mut bytes);
            assert_eq!(BucketTable::from_le_bytes(&bytes, 37, f).unwrap(), t);
        }
    }

    #[test]
    fn branch_free_contains_agrees_with_find() {
        // Every bucket content over a small alphabet, including zeros, repeats and the
        // borrow cases of the zero-field test.
        for f in [2u32, 3, 4, 10, 16, 17] {
            let mut t = BucketTable::new(1, f).unwrap();
            let top = (1u32 << f) - 1;
            let alphabet = [0, 1, 2, top, top - 1, 1 << (f - 1), (1 << (f - 1)) + 1];
            for a in alphabet {
                for b in alphabet {
                    for c in alphabet {
                        for d in alphabet {
                            for (j, v) in [a, b, c, d].into_iter().enumerate() {
                                t.set(0, j as u32, v);
                            }
                            for fp in alphabet.into_iter().chain([3 & top]) {
                                assert_eq!(t.contains(0, fp), t.find(0, fp).is_some());
                            }
                        }
                    }
                }
            }
        }
    }

    #[test]
    fn shapes_are_checked() {
        let invalid = [(0, 10), (10, 1), (10, 33)];
        bloomlab_conformance::check_shape_errors(BucketTable::new, &invalid, 10);
        let t = BucketTable::new(3, 10).unwrap(); // 120 bits, 15 bytes
        let mut bytes = Vec::new();
        t.write_le_bytes(&mut bytes);
        assert_eq!(bytes.len(), 15);
        assert!(BucketTable::from_le_bytes(&bytes[..14], 3, 10).is_err());
        let mut tail = bytes.clone();
        tail[14] = 0x80; // bit 119 is the last slot's top bit: allowed
        assert!(BucketTable::from_le_bytes(&tail, 3, 10).is_ok());
        let t = BucketTable::new(3, 9).unwrap(); // 108 bits: bits 108..112 must be zero
        let mut bytes = Vec::new();
        t.write_le_bytes(&mut bytes);
        bytes[13] = 0x10;
        assert_eq!(
            BucketTable::from_le_bytes(&bytes, 3, 9),
            Err(DecodeError::TrailingBitsSet)
        );
    }
}
