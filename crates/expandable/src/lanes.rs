//! Matching a bucket's 4 slots a word at a time: the lane masks of a slot width and the
//! reads of a bucket's bits that they match.

use bloomlab_cuckoo::{BUCKET_SIZE, BucketTable};

use crate::SLOTS;

/// Masks for matching the slots of a bucket a word at a time, computed once per slot width:
/// for `W ≤ 16` the 4 slots in one 64-bit word; for `16 < W ≤ 32` the bucket's first 64 bits
/// (slots 0 and 1 at bits 0 and `W`) and its last 64 bits (slots 2 and 3 at bits `64 − 2W`
/// and `64 − W`), which keeps every operation on 64 bits and every read within the bucket.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Lanes {
    /// The masks of the (first) word.
    pub(crate) lo: LaneMasks,
    /// The masks of the last word (`16 < W` only).
    pub(crate) hi: LaneMasks,
    /// The code bits of one lane, `2^(W−1) − 1`.
    pub(crate) code: u64,
    /// Where the last word starts in the bucket: `4W − 64` (`16 < W` only).
    pub(crate) hi_from: u64,
}

/// Masks of the lanes of one word.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct LaneMasks {
    /// Bit 0 of every lane.
    lows: u64,
    /// The flag bit (top) of every lane.
    flags: u64,
    /// The code bits (all but the flag) of every lane.
    codes: u64,
}

impl LaneMasks {
    /// `n` lanes of `w` bits from bit `from` on.
    fn new(w: u32, from: u32, n: u32) -> LaneMasks {
        let lows: u64 = (0..n).map(|j| 1u64 << (from + j * w)).sum();
        LaneMasks {
            lows,
            flags: lows << (w - 1),
            codes: lows * ((1u64 << (w - 1)) - 1),
        }
    }

    /// The query's code bits `qc` in every lane.
    #[inline(always)]
    pub(crate) fn spread(&self, qc: u64) -> u64 {
        qc.wrapping_mul(self.lows)
    }

    /// The lanes of `raw` (flag bits set in the result) whose code is non-zero and a prefix of
    /// the query (`qs`, from [`spread`](Self::spread)), whatever their flag.
    ///
    /// Per lane, with `t = (code ^ q) | 2^(W−1)`: the code (marker at bit `r`) is a prefix of
    /// `q` when `t`'s low `r` bits are zero, that is when `t`'s lowest set bit exceeds
    /// `code >> 1` (which lies in `[2^(r−1), 2^r)`, or is 0 for `r = 0`); the forced top bit
    /// stands for "no code bit differs", so `t` is never 0. The lowest set bit is `t & −t`
    /// with the negation done per lane (`!t + 1`: the lane's top bit of `!t` is 0, so no carry
    /// leaves it); the comparison subtracts within a lane, whose value stays at least
    /// `2^(W−1)`, and reads its top bit; a non-zero code is one whose lane gains its top bit
    /// from adding `2^(W−1) − 1`. Bits outside the lanes are cleared first and take no part:
    /// no carry or borrow enters a lane from below. About a dozen word operations.
    #[inline(always)]
    fn prefix_lanes(&self, raw: u64, qs: u64) -> u64 {
        let (codes, lows, flags) = (self.codes, self.lows, self.flags);
        let code = raw & codes;
        let t = (code ^ qs) | flags;
        let lowest = t & (!t).wrapping_add(lows);
        let above = !(((code >> 1) | flags).wrapping_sub(lowest));
        above & code.wrapping_add(codes) & flags
    }

    /// Lanes of `raw` holding an unflagged code that is a prefix of the query `qs`.
    #[inline(always)]
    pub(crate) fn home(&self, raw: u64, qs: u64) -> u64 {
        self.prefix_lanes(raw, qs) & !raw
    }

    /// Lanes of `raw` holding a flagged code that is a prefix of the query `qs`.
    #[inline(always)]
    pub(crate) fn alt(&self, raw: u64, qs: u64) -> u64 {
        self.prefix_lanes(raw, qs) & raw
    }
}

impl Lanes {
    pub(crate) fn for_width(w: u32) -> Lanes {
        let wide = w > 16;
        Lanes {
            lo: LaneMasks::new(w, 0, if wide { 2 } else { BUCKET_SIZE }),
            hi: if wide {
                LaneMasks::new(w, 64 - 2 * w, 2)
            } else {
                LaneMasks::default()
            },
            code: (1u64 << (w - 1)) - 1,
            hi_from: if wide { u64::from(4 * w - 64) } else { 0 },
        }
    }

    /// Whether a lane of `raw` (the 4 slots of a bucket, `W ≤ 16`) holds a code that is a
    /// prefix of `q`, unflagged (`flagged = false`) or flagged.
    #[cfg(test)]
    pub(crate) fn hit(&self, raw: u64, flagged: bool, q: u64) -> bool {
        let qs = self.lo.spread(q & self.code);
        let m = if flagged {
            self.lo.alt(raw, qs)
        } else {
            self.lo.home(raw, qs)
        };
        m != 0
    }

    /// Lanes of a bucket of `16 < W ≤ 32`, given as its first and last 64 bits `(lo, hi)`,
    /// holding an unflagged code that is a prefix of the query's code bits `qc` (non-zero when
    /// one does). The two words' lanes can sit at the same bit (slots 0 and 2 at `W = 32`),
    /// so they are joined with `|`.
    #[inline(always)]
    pub(crate) fn home_wide(&self, (lo, hi): (u64, u64), qc: u64) -> u64 {
        self.lo.home(lo, self.lo.spread(qc)) | self.hi.home(hi, self.hi.spread(qc))
    }

    /// [`home_wide`](Self::home_wide) for flagged codes (entries at their alternate bucket).
    #[inline(always)]
    pub(crate) fn alt_wide(&self, (lo, hi): (u64, u64), qc: u64) -> u64 {
        self.lo.alt(lo, self.lo.spread(qc)) | self.hi.alt(hi, self.hi.spread(qc))
    }

    /// [`hit`](Self::hit) for a bucket of `16 < W ≤ 32`, given whole (slot `s` at bit `s·W`),
    /// matched as its first and last 64 bits.
    #[cfg(test)]
    pub(crate) fn hit_wide(&self, raw: u128, flagged: bool, q: u64) -> bool {
        let qc = q & self.code;
        let ends = (raw as u64, (raw >> self.hi_from) as u64);
        let m = if flagged {
            self.alt_wide(ends, qc)
        } else {
            self.home_wide(ends, qc)
        };
        m != 0
    }
}

/// The 4 slots of `bucket` in one read, slot `s` at bits `s·W..(s+1)·W` (for `4W ≤ 64`).
/// The next word is read only when the bucket reaches into it (never for `W = 16`, whose
/// buckets are words): that branch depends on the bucket's position alone, known long before
/// the read returns, and saves a second cache line where the next word starts one.
#[inline(always)]
pub(crate) fn bucket_bits(table: &BucketTable, bucket: u64) -> u64 {
    let span = SLOTS as u32 * table.fingerprint_bits();
    let pos = bucket * u64::from(span);
    let words = table.words();
    let (i, off) = ((pos / 64) as usize, (pos % 64) as u32);
    let low = words[i] >> off;
    if off + span > 64 {
        low | words[i + 1] << (64 - off)
    } else {
        low
    }
}

/// The first and the last 64 bits of `bucket` for `16 < W ≤ 32` (the words [`Lanes`]
/// matches), two reads of two table words each, within the bucket.
#[inline(always)]
pub(crate) fn bucket_ends(table: &BucketTable, bucket: u64, hi_from: u64) -> (u64, u64) {
    let pos = bucket * SLOTS * u64::from(table.fingerprint_bits());
    (table.bits_at(pos), table.bits_at(pos + hi_from))
}
