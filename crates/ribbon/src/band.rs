//! The banded GF(2) system: on-the-fly banding, back-substitution into the interleaved
//! column-major solution, and the query that reads it.
//!
//! Generic over the coefficient width ([`CoeffRow`]: `u64` or `u128`) so the width can be
//! measured (`examples/width.rs`); [`RibbonFilter`](crate::RibbonFilter) uses `u128`.
//!
//! # Layout of a solution
//!
//! `m` slots (a multiple of `w`) each hold an `r`-bit value. Slots are grouped in blocks of
//! `w`; block `b` stores `r` columns, column `j` being the `w` bits `j` of the block's slots
//! (slot `b·w + t` at bit `t`), as `w/64` little-endian `u64` words, least significant first.
//! Word `i` of the solution is at index `(b·r + j)·(w/64) + q`. A query whose row starts at
//! slot `s = b·w + o` reads column `j` of blocks `b` and `b + 1` (one contiguous stretch of
//! `2·r·w` bits), shifts the `w`-bit window at `o` out of them and takes the parity of its
//! AND with the row: one bit of the `r`-bit answer per column.

use std::ops::{BitAnd, BitOr, BitXor, Shl, Shr};

use bloomlab_core::error::{Error, Result};
use bloomlab_core::simd;

/// A coefficient row of `w` bits: `u64` or `u128`.
pub trait CoeffRow:
    Copy
    + Eq
    + Default
    + BitAnd<Output = Self>
    + BitOr<Output = Self>
    + BitXor<Output = Self>
    + Shl<u32, Output = Self>
    + Shr<u32, Output = Self>
    + Send
    + Sync
    + std::fmt::Debug
    + 'static
{
    /// `w`, the band width in bits.
    const BITS: u32;
    /// `w / 64`: 64-bit words per column.
    const WORDS: usize = (Self::BITS / 64) as usize;
    /// The row from two 64-bit hash halves (`hi` is ignored for `u64`), bit 0 forced to 1.
    fn from_halves(lo: u64, hi: u64) -> Self;
    /// Word `q` of this value.
    fn word(self, q: usize) -> u64;
    /// From `BITS / 8` little-endian bytes (`bytes.len()` is exactly that).
    fn from_le(bytes: &[u8]) -> Self;
    /// XOR of the 64-bit words (same parity as the whole value).
    fn fold64(self) -> u64;
    /// Index of the lowest set bit (`BITS` for zero).
    fn trailing_zeros(self) -> u32;
    /// Parity of the set bits (0 or 1).
    fn parity(self) -> u32;
    /// The value 1.
    fn one() -> Self;
    /// Bit `j` is the parity of `(lo[j] & ml) ^ (hi[j] & mh)`, for the columns of both.
    fn parities(lo: &[Self], hi: &[Self], ml: Self, mh: Self) -> u32;
    /// [`parities`](Self::parities) over columns stored as little-endian bytes.
    fn parities_le(lo: &[u8], hi: &[u8], ml: Self, mh: Self) -> u32;
}

// The two impls differ only in how two hash halves make a row and how the value folds to
// 64 bits; a local macro writes the shared rest once.
macro_rules! coeff_row {
    ($t:ty, |$lo:ident, $hi:ident| $from:expr, |$v:ident| $fold:expr, $par:path, $par_le:path) => {
        impl CoeffRow for $t {
            const BITS: u32 = <$t>::BITS;
            #[inline(always)]
            fn from_halves($lo: u64, $hi: u64) -> Self {
                $from | 1
            }
            #[inline(always)]
            fn word(self, q: usize) -> u64 {
                (self >> (64 * q as u32)) as u64
            }
            #[inline(always)]
            fn from_le(bytes: &[u8]) -> Self {
                <$t>::from_le_bytes(bytes.try_into().expect("BITS / 8 bytes"))
            }
            #[inline(always)]
            fn fold64(self) -> u64 {
                let $v = self;
                $fold
            }
            #[inline(always)]
            fn trailing_zeros(self) -> u32 {
                <$t>::trailing_zeros(self)
            }
            #[inline(always)]
            fn parity(self) -> u32 {
                self.count_ones() & 1
            }
            #[inline(always)]
            fn one() -> Self {
                1
            }
            #[inline(always)]
            fn parities(lo: &[Self], hi: &[Self], ml: Self, mh: Self) -> u32 {
                $par(lo, hi, ml, mh)
            }
            #[inline(always)]
            fn parities_le(lo: &[u8], hi: &[u8], ml: Self, mh: Self) -> u32 {
                $par_le(lo, hi, ml, mh)
            }
        }
    };
}

coeff_row!(u64, |lo, _hi| lo, |v| v, parities_u64, parities_le_u64);
// The width the filter uses: the kernel in `bloomlab_core::simd` (run-time `popcnt`).
coeff_row!(
    u128,
    |lo, hi| (u128::from(hi) << 64) | u128::from(lo),
    |v| (v as u64) ^ ((v >> 64) as u64),
    simd::ribbon_parities,
    simd::ribbon_parities_le
);

/// [`CoeffRow::parities`] of `u64` rows (the width measured in `examples/width.rs` only).
#[inline(always)]
fn parities_u64(lo: &[u64], hi: &[u64], ml: u64, mh: u64) -> u32 {
    fold(lo.iter().copied(), hi.iter().copied(), ml, mh)
}

/// [`CoeffRow::parities_le`] of `u64` rows.
#[inline(always)]
fn parities_le_u64(lo: &[u8], hi: &[u8], ml: u64, mh: u64) -> u32 {
    fold(
        lo.chunks_exact(8).map(<u64 as CoeffRow>::from_le),
        hi.chunks_exact(8).map(<u64 as CoeffRow>::from_le),
        ml,
        mh,
    )
}

/// Largest result width `r` (the FPR floor is `2^-32`).
pub const MAX_RESULT_BITS: u32 = bloomlab_core::math::RIBBON_MAX_RESULT_BITS;

/// murmur3's 64-bit finaliser: the bijective mixer the row derivation and the free
/// variables use.
#[inline(always)]
pub fn fmix64(mut x: u64) -> u64 {
    x ^= x >> 33;
    x = x.wrapping_mul(0xff51_afd7_ed55_8ccd);
    x ^= x >> 33;
    x = x.wrapping_mul(0xc4ce_b9fe_1a85_ec53);
    x ^ (x >> 33)
}

/// The band under construction: slot `i` holds a row whose lowest set bit is slot `i`
/// (coefficient 0 = empty) and its `r`-bit right-hand side.
#[derive(Clone, Debug)]
pub struct Banding<W: CoeffRow> {
    coeffs: Vec<W>,
    results: Vec<u32>,
}

impl<W: CoeffRow> Banding<W> {
    /// An empty band of `num_slots` slots (0, or a multiple of `w`).
    pub fn new(num_slots: usize) -> Result<Self> {
        if num_slots % W::BITS as usize != 0 {
            return Err(Error::invalid(
                "num_slots",
                format!("{num_slots} is not a multiple of {}", W::BITS),
            ));
        }
        let oom = |e| Error::SizeOverflow(format!("cannot allocate {num_slots} band rows: {e}"));
        let mut coeffs = Vec::new();
        coeffs.try_reserve_exact(num_slots).map_err(oom)?;
        coeffs.resize(num_slots, W::default());
        let mut results = Vec::new();
        results.try_reserve_exact(num_slots).map_err(oom)?;
        results.resize(num_slots, 0);
        Ok(Banding { coeffs, results })
    }

    /// Slots in the band.
    pub fn num_slots(&self) -> usize {
        self.coeffs.len()
    }

    /// Empty every slot (for a retry with another seed).
    pub fn clear(&mut self) {
        self.coeffs.fill(W::default());
        self.results.fill(0);
    }

    /// Add the equation `row · x = result` whose row starts at slot `start`
    /// (`start + w ≤ num_slots`; bit 0 of `coeff` set). Incremental Gaussian elimination:
    /// while the slot of the row's lowest bit is taken, XOR the resident row in and move to
    /// the new lowest bit. Returns `false` if the equation contradicts the band (the row
    /// reduced to 0 with a non-zero right-hand side); a repeated equation reduces to `0 = 0`
    /// and returns `true`.
    #[inline]
    pub fn add(&mut self, start: usize, coeff: W, result: u32) -> bool {
        debug_assert!(start + W::BITS as usize <= self.coeffs.len());
        debug_assert!(coeff & W::one() == W::one());
        let (mut i, mut c, mut res) = (start, coeff, result);
        loop {
            let resident = self.coeffs[i];
            if resident == W::default() {
                self.coeffs[i] = c;
                self.results[i] = res;
                return true;
            }
            c = c ^ resident;
            res ^= self.results[i];
            if c == W::default() {
                return res == 0;
            }
            let tz = c.trailing_zeros();
            c = c >> tz;
            i += tz as usize;
        }
    }

    /// Back-substitution, from the last slot to the first, into the interleaved layout (see
    /// the module docs) for `r`-bit results. Slots no row claimed are free variables; they
    /// get pseudo-random values from `seed` so that every slot a non-member's row touches is
    /// a uniform bit.
    pub fn solve(&self, r: u32, seed: u64) -> Vec<W> {
        let m = self.coeffs.len();
        let w = W::BITS as usize;
        let r = r as usize;
        let blocks = m / w;
        let mut out = vec![W::default(); blocks * r];
        // state[j]: bits j of the solution at slots i..i+w, slot i at bit 0.
        let mut state = [W::default(); MAX_RESULT_BITS as usize];
        let state = &mut state[..r];
        for i in (0..m).rev() {
            let c = self.coeffs[i];
            let rhs = if c == W::default() {
                fmix64(i as u64 ^ seed) as u32
            } else {
                self.results[i]
            };
            for (j, st) in state.iter_mut().enumerate() {
                let shifted = *st << 1;
                let bit = (shifted & c).parity() ^ ((rhs >> j) & 1);
                *st = if bit == 1 {
                    shifted | W::one()
                } else {
                    shifted
                };
            }
            if i % w == 0 {
                out[(i / w) * r..][..r].copy_from_slice(state);
            }
        }
        out
    }
}

/// Read access to a solution of `W` columns: a `[W]` in memory or the little-endian bytes of
/// a file ([`LeWords`]).
pub trait Words<W: CoeffRow> {
    /// Bit `j` is the parity of `(lo_j & ml) ^ (hi_j & mh)` over the `r` columns of blocks
    /// `b` (`lo`) and `b1` (`hi`); both blocks in range.
    fn parities(&self, b: usize, b1: usize, r: u32, ml: W, mh: W) -> u32;
}

/// Parity of a word: fold to 8 bits, then the parity of a byte (one `setnp` on x86 without
/// `popcnt`, where `count_ones() & 1` would be a dozen instructions).
#[inline(always)]
fn parity(mut x: u64) -> u32 {
    x ^= x >> 32;
    x ^= x >> 16;
    x ^= x >> 8;
    (x as u8).count_ones() & 1
}

/// The column loop over two iterators of columns: no indexing, so no bounds checks past the
/// two slice splits.
#[inline(always)]
fn fold<W: CoeffRow>(
    lo: impl Iterator<Item = W>,
    hi: impl Iterator<Item = W>,
    ml: W,
    mh: W,
) -> u32 {
    let mut acc = 0u32;
    for (j, (l, h)) in lo.zip(hi).enumerate() {
        acc |= parity(((l & ml) ^ (h & mh)).fold64()) << j;
    }
    acc
}

impl<W: CoeffRow> Words<W> for [W] {
    #[inline(always)]
    fn parities(&self, b: usize, b1: usize, r: u32, ml: W, mh: W) -> u32 {
        let n = r as usize;
        W::parities(&self[b * n..][..n], &self[b1 * n..][..n], ml, mh)
    }
}

/// A solution read straight from little-endian bytes (column after column, as
/// [`Banding::solve`] orders them), with no alignment assumption.
#[derive(Clone, Copy, Debug)]
pub struct LeWords<'a>(pub &'a [u8]);

impl<W: CoeffRow> Words<W> for LeWords<'_> {
    #[inline(always)]
    fn parities(&self, b: usize, b1: usize, r: u32, ml: W, mh: W) -> u32 {
        let n = r as usize * (W::BITS / 8) as usize;
        W::parities_le(&self.0[b * n..][..n], &self.0[b1 * n..][..n], ml, mh)
    }
}

/// The `r`-bit value a row starting at `start` computes from a solution of `blocks` blocks:
/// bit `j` is the parity of `row AND (w solution bits j from slot start)`.
///
/// The window at offset `o` of column `j` is `(lo >> o) | (hi << (w − o))` over the column's
/// words in blocks `b` and `b + 1`; rather than shift each column, the row is shifted once
/// into the two masks `row << o` and `row >> (w − o)`, so that the parity of column `j` is the
/// parity of `(lo_j & mask_lo) ^ (hi_j & mask_hi)`: per column two ANDs, one XOR and one
/// parity.
#[inline(always)]
pub fn query<W: CoeffRow, M: Words<W> + ?Sized>(
    words: &M,
    blocks: usize,
    r: u32,
    start: usize,
    coeff: W,
) -> u32 {
    let w = W::BITS as usize;
    let (b, o) = (start / w, (start % w) as u32);
    // The block past the last is never needed (o = 0 there): clamp to stay in range.
    let b1 = if b + 1 < blocks { b + 1 } else { b };
    let mask_lo = coeff << o;
    // coeff >> (w − o) without an overflowing shift: 0 when o = 0.
    let mask_hi = (coeff >> 1) >> (W::BITS - 1 - o);
    words.parities(b, b1, r, mask_lo, mask_hi)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn solve_and_check<W: CoeffRow>(rows: &[(usize, W, u32)], m: usize, r: u32) {
        let mut band = Banding::<W>::new(m).unwrap();
        for &(s, c, v) in rows {
            assert!(band.add(s, c, v));
        }
        let sol = band.solve(r, 7);
        let blocks = m / W::BITS as usize;
        for &(s, c, v) in rows {
            assert_eq!(query(&sol[..], blocks, r, s, c), v, "row at {s}");
        }
        let bytes: Vec<u8> = sol
            .iter()
            .flat_map(|w| (0..W::WORDS).flat_map(move |q| w.word(q).to_le_bytes()))
            .collect();
        for &(s, c, v) in rows {
            assert_eq!(query::<W, _>(&LeWords(&bytes), blocks, r, s, c), v);
        }
    }

    #[test]
    fn rows_at_every_offset_are_solved() {
        // One row per start in a 3-block band, sparse enough to be solvable.
        let m = 3 * 128;
        let rows: Vec<(usize, u128, u32)> = (0..=(m - 128))
            .step_by(3)
            .map(|s| {
                let h = fmix64(s as u64);
                (s, u128::from_halves(h, fmix64(h)), (h >> 40) as u32 & 0x7f)
            })
            .collect();
        solve_and_check(&rows, m, 7);
        let m = 4 * 64;
        let rows: Vec<(usize, u64, u32)> = (0..=(m - 64))
            .step_by(2)
            .map(|s| {
                let h = fmix64(s as u64 + 99);
                (s, u64::from_halves(h, 0), (h >> 16) as u32)
            })
            .collect();
        solve_and_check(&rows, m, 32);
    }

    #[test]
    fn contradictions_are_detected_and_repeats_are_not() {
        let mut band = Banding::<u64>::new(128).unwrap();
        assert!(band.add(0, 0b1011, 5));
        assert!(band.add(0, 0b1011, 5)); // the same equation again
        assert!(band.add(0, 0b0001, 1));
        // 0b1010 at slot 1 is now implied: (0b1011 ^ 0b0001) → value 5 ^ 1 = 4.
        assert!(!band.add(1, 0b0101, 5));
        assert!(band.add(1, 0b0101, 4));
        assert!(Banding::<u128>::new(100).is_err());
    }
}
