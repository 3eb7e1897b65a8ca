//! The banded GF(2) system: on-the-fly banding, back-substitution into the interleaved
//! column-major solution, and the query that reads it.
//!
//! Generic over the coefficient width ([`CoeffRow`]: `u64` or `u128`) so the width can be
//! measured (`docs/design/ribbon.md`); [`RibbonFilter`](crate::RibbonFilter) uses `u128`.
//!
//! # Layout of a solution
//!
//! `m` slots (a multiple of `w`) each hold an `r`-bit value. Slots are grouped in blocks of
//! `w`; block `b` stores `r` columns, column `j` being the `w` bits `j` of the block's slots
//! (slot `b·w + t` at bit `t`), as `w/64` little-endian `u64` words, least significant first.
//! Word `i` of the solution is at index `(b·r + j)·(w/64) + q`. A query whose row starts at
//! slot `s = b·w + o` reads column `j` of blocks `b` and `b + 1` (one contiguous stretch of
//! `2·r·w` bits), shifts the `w`-bit window at `o` out of them and takes the parity of its
//! AND with the row: one bit of the `r`-bit answer per column. That is the byte format's
//! layout; in memory the owned filter keeps the same bits in blocks of 64 slots
//! ([`Blocks64`]), which a query reads less of.

use alloc::{format, vec, vec::Vec};
use core::ops::{BitAnd, BitOr, BitXor, Shl, Shr};

use bloomlab_core::error::{Error, Result};
use bloomlab_simd::{self as simd, ColumnQuery, Parity, ParityTask};

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
    + core::fmt::Debug
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
    /// One column of a query with parity `p`: the parity of `(l & ml) ^ (h & mh)`.
    fn column<P: Parity>(p: P, l: &Self, h: &Self, ml: Self, mh: Self) -> u32;
    /// [`column`](Self::column) over columns stored as `BITS / 8` little-endian bytes each.
    fn column_le<P: Parity>(p: P, l: &[u8], h: &[u8], ml: Self, mh: Self) -> u32;
    /// All `R` columns of a query: bit `j` is [`column`](Self::column)`(lo[j], hi[j])`.
    #[inline(always)]
    fn columns<P: Parity, const R: usize>(
        p: P,
        lo: &[Self; R],
        hi: &[Self; R],
        ml: Self,
        mh: Self,
    ) -> u32 {
        fold::<R>(R, |j| Self::column(p, &lo[j], &hi[j], ml, mh))
    }
    /// [`columns`](Self::columns) over `R` columns stored as little-endian bytes (`lo` and
    /// `hi` exactly `R · BITS / 8` bytes each).
    #[inline(always)]
    fn columns_le<P: Parity, const R: usize>(
        p: P,
        lo: &[u8],
        hi: &[u8],
        ml: Self,
        mh: Self,
    ) -> u32 {
        let b = (Self::BITS / 8) as usize;
        fold::<R>(R, |j| {
            Self::column_le(p, &lo[j * b..][..b], &hi[j * b..][..b], ml, mh)
        })
    }
}

// The two impls differ only in how two hash halves make a row and how the value folds to
// 64 bits; a local macro writes the shared rest once.
macro_rules! coeff_row {
    ($t:ty, |$lo:ident, $hi:ident| $from:expr, |$v:ident| $fold:expr,
     |$p:ident, $l:ident, $h:ident, $ml:ident, $mh:ident| $col:expr,
     |$pb:ident, $lb:ident, $hb:ident, $mlb:ident, $mhb:ident| $col_le:expr
     $(, { $($extra:tt)* })?) => {
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
            fn column<P: Parity>($p: P, $l: &Self, $h: &Self, $ml: Self, $mh: Self) -> u32 {
                $col
            }
            #[inline(always)]
            fn column_le<P: Parity>($pb: P, $lb: &[u8], $hb: &[u8], $mlb: Self, $mhb: Self) -> u32 {
                $col_le
            }
            $($($extra)*)?
        }
    };
}

coeff_row!(
    u64,
    |lo, _hi| lo,
    |v| v,
    |p, l, h, ml, mh| p.parity((*l & ml) ^ (*h & mh)),
    |p, l, h, ml, mh| p
        .parity((<u64 as CoeffRow>::from_le(l) & ml) ^ (<u64 as CoeffRow>::from_le(h) & mh))
);
// The width the filter uses: the column kernel of `bloomlab_simd` (SSE2 and `popcnt`
// on x86_64 when the CPU has it).
coeff_row!(
    u128,
    |lo, hi| (u128::from(hi) << 64) | u128::from(lo),
    |v| (v as u64) ^ ((v >> 64) as u64),
    |p, l, h, ml, mh| p.column(l, h, ml, mh),
    |p, l, h, ml, mh| p.column_le(
        l.try_into().expect("16 bytes"),
        h.try_into().expect("16 bytes"),
        ml,
        mh
    ),
    {
        #[inline(always)]
        fn columns<P: Parity, const R: usize>(
            p: P,
            lo: &[Self; R],
            hi: &[Self; R],
            ml: Self,
            mh: Self,
        ) -> u32 {
            p.columns(lo, hi, ml, mh)
        }
        #[inline(always)]
        fn columns_le<P: Parity, const R: usize>(
            p: P,
            lo: &[u8],
            hi: &[u8],
            ml: Self,
            mh: Self,
        ) -> u32 {
            p.columns_le::<R>(lo, hi, ml, mh)
        }
    }
);

/// Largest result width `r` (the FPR floor is `2^-32`).
pub const MAX_RESULT_BITS: u32 = crate::math::RIBBON_MAX_RESULT_BITS;

/// murmur3's 64-bit finaliser: the bijective mixer the row derivation and the free
/// variables use (the workspace's one copy, [`bloomlab_core::hash::fmix64`]).
pub use bloomlab_core::hash::fmix64;

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
        if !num_slots.is_multiple_of(W::BITS as usize) {
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
    /// Bit `j` is the parity of `(lo_j & ml) ^ (hi_j & mh)` over the `r` columns of block
    /// `b` (`lo`) and of block `b + 1` if `next`, else `b` again (`hi`); those blocks in
    /// range.
    fn parities<P: Parity>(&self, p: P, b: usize, next: bool, r: u32, ml: W, mh: W) -> u32;
}

/// The column loop for exactly `R` columns (unrolled into straight-line code), or for any
/// count `n` up to 32 (`R = 0`): bit `j` is `col(j)`.
#[inline(always)]
fn fold<const R: usize>(n: usize, col: impl Fn(usize) -> u32) -> u32 {
    let n = if R == 0 { n.min(32) } else { R };
    let mut acc = 0u32;
    for j in 0..n {
        acc |= col(j) << j;
    }
    acc
}

impl<W: CoeffRow> Words<W> for [W] {
    #[inline(always)]
    fn parities<P: Parity>(&self, p: P, b: usize, next: bool, r: u32, ml: W, mh: W) -> u32 {
        let n = r as usize;
        // One range check for the stretch of one or two blocks.
        let off = if next { n } else { 0 };
        let stretch = &self[b * n..b * n + off + n];
        let (lo, hi) = (&stretch[..n], &stretch[off..]);
        // One predictable jump per query (a filter's `r` never changes) to the loop unrolled
        // for the common `r`, bounds checked once; the plain loop for the rest.
        macro_rules! fixed {
            ($($r:literal)*) => {
                match n {
                    $($r => {
                        let (l, h): (&[W; $r], &[W; $r]) =
                            (lo.try_into().expect("r columns"), hi.try_into().expect("r columns"));
                        W::columns::<P, $r>(p, l, h, ml, mh)
                    })*
                    _ => fold::<0>(n, |j| W::column(p, &lo[j], &hi[j], ml, mh)),
                }
            };
        }
        fixed!(1 2 3 4 5 6 7 8 9 10 11 12)
    }
}

/// A solution read straight from little-endian bytes (column after column, as
/// [`Banding::solve`] orders them), with no alignment assumption.
#[derive(Clone, Copy, Debug)]
pub struct LeWords<'a>(pub &'a [u8]);

impl<W: CoeffRow> Words<W> for LeWords<'_> {
    #[inline(always)]
    fn parities<P: Parity>(&self, p: P, b: usize, next: bool, r: u32, ml: W, mh: W) -> u32 {
        let bytes = (W::BITS / 8) as usize;
        let n = r as usize * bytes;
        let off = if next { n } else { 0 };
        let stretch = &self.0[b * n..b * n + off + n];
        let (lo, hi) = (&stretch[..n], &stretch[off..]);
        macro_rules! fixed {
            ($($r:literal)*) => {
                match r {
                    $($r => W::columns_le::<P, $r>(p, lo, hi, ml, mh),)*
                    _ => {
                        fn col(s: &[u8], j: usize, bytes: usize) -> &[u8] {
                            &s[j * bytes..][..bytes]
                        }
                        fold::<0>(r as usize, |j| {
                            W::column_le(p, col(lo, j, bytes), col(hi, j, bytes), ml, mh)
                        })
                    }
                }
            };
        }
        fixed!(1 2 3 4 5 6 7 8 9 10 11 12)
    }
}

/// A `w = 128` solution kept in memory in blocks of **64** slots: block `k` is `r` words,
/// word `j` holding bit `j` of the block's slots (slot `64·k + t` at bit `t`). The same bits
/// as the byte format's 128-slot blocks (block `b`'s column `j` is blocks `2b` and `2b + 1`'s
/// word `j`, low half first), laid out so that a query reads less: a row starting at slot
/// `s = 64·k + t` meets blocks `k`, `k + 1` and (if `t > 0`) `k + 2`, one contiguous
/// stretch of `3·r·8` bytes (168 at `r = 7`, where the 128-slot layout's two blocks are 224),
/// and each column's three words are ANDed with the row shifted once into three 64-bit
/// masks. [`RibbonFilter`](crate::RibbonFilter) answers from it; the byte format and the
/// borrowed view keep the 128-slot layout.
///
/// Past the last block it keeps [`simd::COLUMN_PAD`] zero words (not part of the solution:
/// not counted by [`len`](Self::len), not written to bytes), so that the inline kernels read
/// whole groups of four (AVX2) or eight (AVX-512) columns of the last blocks with plain
/// loads.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Blocks64 {
    /// The blocks, then the padding.
    words: Vec<u64>,
    r: usize,
}

impl Default for Blocks64 {
    /// No slots (the padding only).
    fn default() -> Self {
        Blocks64::from_columns(&[], 0)
    }
}

impl Blocks64 {
    /// From 128-slot interleaved columns ([`Banding::solve`]) of `r`-bit slots.
    pub fn from_columns(columns: &[u128], r: u32) -> Self {
        let r = r as usize;
        let mut words = vec![0u64; 2 * columns.len() + simd::COLUMN_PAD];
        if r > 0 {
            for (b, block) in columns.chunks_exact(r).enumerate() {
                for (j, c) in block.iter().enumerate() {
                    words[2 * b * r + j] = *c as u64;
                    words[(2 * b + 1) * r + j] = (*c >> 64) as u64;
                }
            }
        }
        Blocks64 { words, r }
    }

    /// From the byte format's word order (128-slot blocks, each column low word first).
    pub fn from_format_words(format: &[u64], r: u32) -> Self {
        let columns: Vec<u128> = format
            .chunks_exact(2)
            .map(|c| u128::from(c[0]) | (u128::from(c[1]) << 64))
            .collect();
        Self::from_columns(&columns, r)
    }

    /// The blocks without the padding.
    #[inline(always)]
    fn body(&self) -> &[u64] {
        &self.words[..self.words.len() - simd::COLUMN_PAD]
    }

    /// Column `j` of 128-slot block `b` (the byte format's unit).
    #[inline(always)]
    fn column128(&self, b: usize, j: usize) -> u128 {
        u128::from(self.words[2 * b * self.r + j])
            | (u128::from(self.words[(2 * b + 1) * self.r + j]) << 64)
    }

    /// The words in the byte format's order: 128-slot blocks, each column low word first.
    pub fn format_words(&self) -> impl Iterator<Item = u64> + '_ {
        let (r, blocks) = (self.r, self.body().len() / (2 * self.r.max(1)));
        (0..blocks)
            .flat_map(move |b| (0..r).map(move |j| (b, j)))
            .flat_map(|(b, j)| {
                let c = self.column128(b, j);
                [c as u64, (c >> 64) as u64]
            })
    }

    /// Words held (`m · r / 64`).
    pub fn len(&self) -> usize {
        self.body().len()
    }

    /// No slots.
    pub fn is_empty(&self) -> bool {
        self.body().is_empty()
    }

    /// The stretch of words a row starting at `start` reads.
    #[inline(always)]
    pub fn stretch(&self, start: usize) -> &[u64] {
        let (k, r) = (start / 64, self.r);
        let body = self.body();
        let end = (k * r + 3 * r).min(body.len());
        &body[(k * r).min(end)..end]
    }

    /// The `r`-bit value of the row `coeff` starting at `start` (`start + 128 ≤ m`), with
    /// parity `p`: bit `j` is the parity of the row AND the 128 solution bits `j` from slot
    /// `start`, as [`query`] computes it on the 128-slot layout.
    #[inline(always)]
    pub fn query<P: Parity>(&self, p: P, start: usize, coeff: u128) -> u32 {
        let r = self.r;
        let (k, third, m) = Self::masks(r, start, coeff);
        let stretch = &self.words[k * r..];
        macro_rules! fixed {
            ($($n:literal)*) => {
                match r {
                    $($n => p.columns3::<$n>(stretch, third, m),)*
                    _ => {
                        let (a, b, c) = (&stretch[..r], &stretch[r..2 * r], &stretch[third..third + r]);
                        fold::<0>(r, |j| p.parity((a[j] & m[0]) ^ (b[j] & m[1]) ^ (c[j] & m[2])))
                    }
                }
            };
        }
        fixed!(1 2 3 4 5 6 7 8 9 10 11 12)
    }

    /// [`query`](Self::query) with an inline kernel bound to this solution's width
    /// ([`simd::ColumnKernel::for_width`], [`ColumnQuery::columns3`]): the same value, with no call
    /// and one range check; `None` if `query` was made for another width.
    #[inline(always)]
    pub fn query_inline(&self, query: ColumnQuery, start: usize, coeff: u128) -> Option<u32> {
        let r = self.r;
        if query.width() != r {
            return None;
        }
        let (k, _, m) = Self::masks(r, start, coeff);
        // `columns3` reads the third block at `2r` for every row (a row on a block boundary
        // has a zero third mask); at `r ≤ 8` the padding past the last block holds that
        // reach, and rows it does not take the called path.
        query.columns3(&self.words, k * r, m)
    }

    /// For a row `coeff` starting at `start`: its first block `k`, the offset of its third
    /// block's words from the first's, and the row shifted up by `start mod 64` across three
    /// words (`x >> (64 − t)` written so that `t = 0` gives 0). At `t = 0` the third mask is
    /// 0 and block `k + 1` stands in for block `k + 2`, which may not exist (a row starts at
    /// most 128 slots before the end).
    #[inline(always)]
    fn masks(r: usize, start: usize, coeff: u128) -> (usize, usize, [u64; 3]) {
        let (k, t) = (start / 64, (start % 64) as u32);
        let (c0, c1) = (coeff as u64, (coeff >> 64) as u64);
        let m = [
            c0 << t,
            (c1 << t) | ((c0 >> 1) >> (63 - t)),
            (c1 >> 1) >> (63 - t),
        ];
        (k, if t != 0 { 2 * r } else { r }, m)
    }
}

/// A solution a filter answers from: [`Blocks64`] in memory, or the byte format's 128-slot
/// columns read in place ([`LeWords`]).
pub trait Solution {
    /// The `r`-bit value of the row `coeff` starting at `start`, with parity `p`.
    fn query<P: Parity>(&self, p: P, r: u32, start: usize, coeff: u128) -> u32;
}

impl Solution for Blocks64 {
    #[inline(always)]
    fn query<P: Parity>(&self, p: P, r: u32, start: usize, coeff: u128) -> u32 {
        debug_assert_eq!(r as usize, self.r);
        Blocks64::query(self, p, start, coeff)
    }
}

impl Solution for LeWords<'_> {
    #[inline(always)]
    fn query<P: Parity>(&self, p: P, r: u32, start: usize, coeff: u128) -> u32 {
        let blocks = self.0.len() / (16 * r as usize).max(1);
        query_with(p, self, blocks, r, start, coeff)
    }
}

/// The 128-slot view of the same bits, so that [`query`] answers from a [`Blocks64`] exactly
/// as from the columns it was made from.
impl Words<u128> for Blocks64 {
    #[inline]
    fn parities<P: Parity>(&self, p: P, b: usize, next: bool, r: u32, ml: u128, mh: u128) -> u32 {
        let b1 = b + usize::from(next);
        fold::<0>(r as usize, |j| {
            u128::column(p, &self.column128(b, j), &self.column128(b1, j), ml, mh)
        })
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
    struct Query<'a, W, M: ?Sized>(&'a M, usize, u32, usize, W);
    impl<W: CoeffRow, M: Words<W> + ?Sized> ParityTask for Query<'_, W, M> {
        type Output = u32;
        #[inline(always)]
        fn run<P: Parity>(self, p: P) -> u32 {
            query_with(p, self.0, self.1, self.2, self.3, self.4)
        }
    }
    simd::run_parity(Query(words, blocks, r, start, coeff))
}

/// [`query`] with parity `p` (inside a [`simd::run_parity`] task: no feature test here).
#[inline(always)]
pub fn query_with<W: CoeffRow, P: Parity, M: Words<W> + ?Sized>(
    p: P,
    words: &M,
    blocks: usize,
    r: u32,
    start: usize,
    coeff: W,
) -> u32 {
    let w = W::BITS as usize;
    let (b, o) = (start / w, (start % w) as u32);
    // At o = 0 the row lies in block b alone (`mask_hi` is 0), so block b stands in for the
    // next one, which may not exist: a row starts at most w slots before the end.
    let next = o != 0;
    debug_assert!(
        b + usize::from(next) < blocks,
        "start {start} in {blocks} blocks"
    );
    let mask_lo = coeff << o;
    // coeff >> (w − o) without an overflowing shift: 0 when o = 0.
    let mask_hi = (coeff >> 1) >> (W::BITS - 1 - o);
    words.parities(p, b, next, r, mask_lo, mask_hi)
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
    fn blocks_of_64_answer_as_the_columns_they_come_from() {
        // Every start and both halves of every block, against the 128-slot query, with
        // every kernel the machine has; and the format's words back unchanged.
        let m = 4 * 128;
        for r in [1u32, 4, 7, 8, 9, 12, 13, 32] {
            let mut band = Banding::<u128>::new(m).unwrap();
            for s in (0..=(m - 128)).step_by(5) {
                let h = fmix64(s as u64 ^ u64::from(r) << 20);
                band.add(s, u128::from_halves(h, fmix64(h)), (h >> 9) as u32);
            }
            let sol = band.solve(r, 3);
            let b64 = Blocks64::from_columns(&sol, r);
            let words: Vec<u64> = sol
                .iter()
                .flat_map(|c| [*c as u64, (*c >> 64) as u64])
                .collect();
            assert_eq!(b64.format_words().collect::<Vec<_>>(), words);
            assert_eq!(Blocks64::from_format_words(&words, r), b64);
            for s in 0..=(m - 128) {
                let h = fmix64(s as u64 + 1000 * u64::from(r));
                let c = u128::from_halves(h, fmix64(h ^ 1));
                let want = query(&sol[..], m / 128, r, s, c);
                assert_eq!(query(&b64, m / 128, r, s, c), want);
                assert_eq!(Solution::query(&b64, simd::PortableParity, r, s, c), want);
                assert_eq!(Solution::query(&b64, simd::CountOnesParity, r, s, c), want);
                struct Q<'a>(&'a Blocks64, usize, u128);
                impl ParityTask for Q<'_> {
                    type Output = u32;
                    fn run<P: Parity>(self, p: P) -> u32 {
                        self.0.query(p, self.1, self.2)
                    }
                }
                assert_eq!(simd::run_parity(Q(&b64, s, c)), want, "r = {r}, s = {s}");
            }
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
