//! The blocked filter's byte layouts, each its own type (RocksDB's `util/bloom_impl.h`: one
//! class per layout).
//!
//! A layout is how a key's block and in-block probes follow from its hash, a frozen part of
//! the format recorded as the envelope version. [`Layout`] names it (a filter stores it, files
//! record it); each layout's rule — its hash, its block, its probes — is one type implementing
//! [`Rule`], and every operation that loops over keys picks the type once, with
//! [`by_layout!`](crate::layout::by_layout), and runs its loop monomorphised over it: no layout
//! is re-decided per key. Single operations of the current layout take the inline kernel chosen
//! at construction ([`bloomlab_simd::InlineKernel`]); every other single operation picks its
//! rule once per call, out of line.
//!
//! Where each probe rule lives: the first layout's 64-bit walk ([`PROBE_MULTIPLIER`]) here,
//! beside its type, which is its only user; the second and third layouts' 32-bit rule
//! (`h · 0x9e37_79b9^i mod 2^32`) in the SIMD crate ([`bloomlab_simd::LOCAL_MULTIPLIER`]),
//! beside the vector kernels and their portable twin that compute it.

use bloomlab_core::Key;
use bloomlab_core::format;
use bloomlab_core::hash::{self, HashScheme, KeyHash, fastrange};
use bloomlab_simd::{self as simd, LocalProbe};

use crate::Block;

/// How a key's block and probes are derived from its hash: a frozen part of the byte format,
/// recorded as the envelope version. New filters use [`Layout::OneHash`] (filters of more than
/// 2^32 blocks, 256 GiB, [`Layout::Local32`]); files of the earlier layouts load as
/// [`Layout::Wide64`] or [`Layout::Local32`] and keep it (an insert into them, a union, a
/// re-encoding all stay in that layout), so they answer exactly as when they were written.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub enum Layout {
    /// The first layout (envelope version 1): probe `i` is the top 9 bits of
    /// `h2 · PROBE_MULTIPLIER^i mod 2^64` (see [Probe positions](crate#probe-positions)).
    Wide64,
    /// The second layout (envelope version 2): probe `i` is the top 9 bits of
    /// `h · 0x9e37_79b9^i mod 2^32` with `h` the high 32 bits of `h2`
    /// ([`bloomlab_simd::local_insert`]; RocksDB's `FastLocalBloom` rule), eight
    /// probes per AVX2 vector; the block from `h1` by fastrange.
    Local32,
    /// The third layout (envelope version 3): one 64-bit hash `x` per key, the scheme's
    /// [`hash64`](HashScheme::hash64) (XXH3-64 for the default scheme); the block is
    /// `⌊(x >> 32) · blocks / 2^32⌋` and the in-block probes are the second layout's with
    /// `h = x mod 2^32` (RocksDB `FastLocalBloom`'s split of one 64-bit hash). For at most
    /// 2^32 blocks.
    #[default]
    OneHash,
}

impl Layout {
    /// The envelope version that records this layout.
    pub fn format_version(self) -> u16 {
        by_layout!(self, R => R::VERSION)
    }

    /// The layout of a new filter of `blocks` blocks: [`Layout::OneHash`] up to and including
    /// the 2^32 blocks ([`ONE_HASH_MAX_BLOCKS`]) it can address, [`Layout::Local32`] beyond.
    /// A pure function of the count, so the switch is tested at 2^32 − 1, 2^32 and 2^32 + 1
    /// blocks without a 256 GiB table.
    pub fn for_blocks(blocks: u64) -> Layout {
        if Layout::OneHash.addresses(blocks) {
            Layout::OneHash
        } else {
            Layout::Local32
        }
    }

    /// Whether a table of `blocks` blocks can have this layout: [`Layout::OneHash`] addresses
    /// at most 2^32 blocks (its block index is a 32-bit fastrange), the earlier layouts any
    /// number. The one rule behind [`for_blocks`](Self::for_blocks),
    /// [`with_layout`](crate::BlockedBloomFilter::with_layout) and the decoder's check.
    pub fn addresses(self, blocks: u64) -> bool {
        by_layout!(self, R => R::MAX_BLOCKS.is_none_or(|most| blocks <= most))
    }

    /// The layout an envelope version records, if any.
    pub fn from_format_version(v: u16) -> Option<Layout> {
        [Layout::Wide64, Layout::Local32, Layout::OneHash]
            .into_iter()
            .find(|l| l.format_version() == v)
    }
}

/// Most blocks a [`Layout::OneHash`] filter can address: its block index is a 32-bit
/// fastrange of the hash's high half.
pub const ONE_HASH_MAX_BLOCKS: u64 = 1 << 32;

/// Multiplier of the first layout's in-block probe sequence: `⌊2^64/φ⌋` rounded to odd (Knuth,
/// TAOCP vol. 3 §6.4), the 64-bit counterpart of RocksDB FastLocalBloom's `0x9e3779b9`. A
/// format constant.
pub const PROBE_MULTIPLIER: u64 = 0x9e37_79b9_7f4a_7c15;

/// `PROBE_POWERS[i] = PROBE_MULTIPLIER^i mod 2^64`: probe `i` of a key is the top 9 bits of
/// `h2 · PROBE_MULTIPLIER^i`, the same value as `i` steps of `h ← h · PROBE_MULTIPLIER` from
/// `h2`, but the `k` multiplications are independent (no serial dependency chain).
pub(crate) const PROBE_POWERS: [u64; bloomlab_core::math::MAX_HASHES as usize] = {
    let mut p = [1u64; bloomlab_core::math::MAX_HASHES as usize];
    let mut i = 1;
    while i < p.len() {
        p[i] = p[i - 1].wrapping_mul(PROBE_MULTIPLIER);
        i += 1;
    }
    p
};

/// One layout's rule: how a key is hashed, which block it lands in, which bits of that block
/// it sets. Implemented by one zero-sized type per [`Layout`]; picked once per operation by
/// [`by_layout!`](crate::layout::by_layout).
pub(crate) trait Rule {
    /// The layout this rule is.
    #[allow(dead_code)] // read by the tests, which check each type against its name
    const LAYOUT: Layout;
    /// The envelope version that records it.
    const VERSION: u16;
    /// The most blocks it can address (`None`: any number).
    const MAX_BLOCKS: Option<u64>;

    /// A key's hash: the scheme's 64-bit output in `h1` (`h2 = 0`) for the third layout, its
    /// 128-bit output for the earlier ones.
    fn hash<S: HashScheme, K: Key + ?Sized>(scheme: &S, key: &K) -> KeyHash;

    /// [`hash`](Self::hash) for up to [`simd::CHUNK`] keys (`out` as long as `keys`), in
    /// vector lanes where the scheme can ([`HashScheme::LANES`]).
    fn hash_chunk<S: HashScheme, K: Key>(scheme: &S, keys: &[K], out: &mut [KeyHash]);

    /// The block (among `n`) of a hash from [`hash`](Self::hash), and the in-block probe
    /// source: a `u64` whose high 32 bits are the probes' `h` (the second and third layouts)
    /// or the whole stride half (the first).
    fn place(h: KeyHash, n: u64) -> (usize, u64);

    /// Whether every probe of source `src` is set in `block` (`probe`: the local-block kernel,
    /// which the first layout does not use).
    fn contains<P: LocalProbe>(probe: P, block: &Block, src: u64, k: u32) -> bool;

    /// Set the probes of source `src` in `block`; `true` if some bit was new.
    fn insert<P: LocalProbe>(probe: P, block: &mut Block, src: u64, k: u32) -> bool;
}

/// Run `$body` with the type of `$layout`'s [`Rule`] bound to `$R`: the one place a layout
/// value becomes a type, so each operation's loop is compiled once per layout and chooses none
/// per key.
macro_rules! by_layout {
    ($layout:expr, $R:ident => $body:expr) => {
        match $layout {
            $crate::layout::Layout::Wide64 => {
                type $R = $crate::layout::Wide64;
                $body
            }
            $crate::layout::Layout::Local32 => {
                type $R = $crate::layout::Local32;
                $body
            }
            $crate::layout::Layout::OneHash => {
                type $R = $crate::layout::OneHash;
                $body
            }
        }
    };
}
pub(crate) use by_layout;

/// The first layout's rule ([`Layout::Wide64`]).
pub(crate) struct Wide64;
/// The second layout's rule ([`Layout::Local32`]).
pub(crate) struct Local32;
/// The third layout's rule ([`Layout::OneHash`]).
pub(crate) struct OneHash;

impl Rule for Wide64 {
    const LAYOUT: Layout = Layout::Wide64;
    const VERSION: u16 = format::FORMAT_VERSION;
    const MAX_BLOCKS: Option<u64> = None;

    #[inline(always)]
    fn hash<S: HashScheme, K: Key + ?Sized>(scheme: &S, key: &K) -> KeyHash {
        key.with_key_bytes(|b| scheme.hash(b))
    }

    #[inline(always)]
    fn hash_chunk<S: HashScheme, K: Key>(scheme: &S, keys: &[K], out: &mut [KeyHash]) {
        hash::hash_chunk(keys, out, |b| scheme.hash(b), |w| scheme.hash_words8(w))
    }

    #[inline(always)]
    fn place(h: KeyHash, n: u64) -> (usize, u64) {
        // `n` fits in usize, and fastrange's result is below it.
        (fastrange(h.h1, n) as usize, h.h2)
    }

    #[inline(always)]
    fn contains<P: LocalProbe>(_: P, block: &Block, src: u64, k: u32) -> bool {
        wide64_contains(block, src, k)
    }

    #[inline(always)]
    fn insert<P: LocalProbe>(_: P, block: &mut Block, src: u64, k: u32) -> bool {
        wide64_add(block, src, k)
    }
}

impl Rule for Local32 {
    const LAYOUT: Layout = Layout::Local32;
    const VERSION: u16 = format::BLOCKED_LOCAL32_VERSION;
    const MAX_BLOCKS: Option<u64> = None;

    #[inline(always)]
    fn hash<S: HashScheme, K: Key + ?Sized>(scheme: &S, key: &K) -> KeyHash {
        Wide64::hash(scheme, key)
    }

    #[inline(always)]
    fn hash_chunk<S: HashScheme, K: Key>(scheme: &S, keys: &[K], out: &mut [KeyHash]) {
        Wide64::hash_chunk(scheme, keys, out)
    }

    #[inline(always)]
    fn place(h: KeyHash, n: u64) -> (usize, u64) {
        Wide64::place(h, n)
    }

    #[inline(always)]
    fn contains<P: LocalProbe>(probe: P, block: &Block, src: u64, k: u32) -> bool {
        probe.contains(&block.0, (src >> 32) as u32, k)
    }

    #[inline(always)]
    fn insert<P: LocalProbe>(probe: P, block: &mut Block, src: u64, k: u32) -> bool {
        probe.insert(&mut block.0, (src >> 32) as u32, k)
    }
}

impl Rule for OneHash {
    const LAYOUT: Layout = Layout::OneHash;
    const VERSION: u16 = format::BLOCKED_ONE_HASH_VERSION;
    const MAX_BLOCKS: Option<u64> = Some(ONE_HASH_MAX_BLOCKS);

    #[inline(always)]
    fn hash<S: HashScheme, K: Key + ?Sized>(scheme: &S, key: &K) -> KeyHash {
        KeyHash::new(key.with_key_bytes(|b| scheme.hash64(b)), 0)
    }

    #[inline(always)]
    fn hash_chunk<S: HashScheme, K: Key>(scheme: &S, keys: &[K], out: &mut [KeyHash]) {
        hash::hash_chunk(
            keys,
            out,
            |b| KeyHash::new(scheme.hash64(b), 0),
            |w| scheme.hash64_words8(w).map(|x| KeyHash::new(x, 0)),
        )
    }

    #[inline(always)]
    fn place(h: KeyHash, n: u64) -> (usize, u64) {
        // `hash` put the 64-bit hash in `h1`; its low half feeds the probes. The block is
        // below n ≤ 2^32: it fits in usize.
        let (b, src) = simd::one_hash_place(h.h1, n);
        (b as usize, src)
    }

    #[inline(always)]
    fn contains<P: LocalProbe>(probe: P, block: &Block, src: u64, k: u32) -> bool {
        Local32::contains(probe, block, src, k)
    }

    #[inline(always)]
    fn insert<P: LocalProbe>(probe: P, block: &mut Block, src: u64, k: u32) -> bool {
        Local32::insert(probe, block, src, k)
    }
}

/// A key's hash under `layout` ([`Rule::hash`]). Shared by the owned filter, the atomic one
/// and the view, so that all three place a key alike.
#[inline(always)]
pub(crate) fn hash_in<S: HashScheme, K: Key + ?Sized>(
    layout: Layout,
    scheme: &S,
    key: &K,
) -> KeyHash {
    by_layout!(layout, R => R::hash(scheme, key))
}

/// A key's hash under `layout` when `x`, its hash under the current layout, is already known
/// (the inline paths compute it before they know whether they serve the filter): `x` itself
/// in the current layout, the key hashed again in an earlier one. What the out-of-line paths
/// of the owned and the atomic filter start from.
#[inline]
pub(crate) fn hash_again_in<S: HashScheme>(
    layout: Layout,
    scheme: &S,
    key: &[u8],
    x: u64,
) -> KeyHash {
    if layout == Layout::OneHash {
        KeyHash::new(x, 0)
    } else {
        hash_in(layout, scheme, key)
    }
}

/// A [`Layout::OneHash`] hash's two halves: the high one picks the block (by fastrange, as
/// [`OneHash::place`]; [`Lines::fastrange`](bloomlab_simd::Lines::fastrange) finds it with
/// no bounds test), the low one feeds the probes. The single operations of the owned and the
/// atomic filter use it.
#[inline(always)]
pub(crate) fn one_hash_split(h: KeyHash) -> (u32, u32) {
    ((h.h1 >> 32) as u32, h.h1 as u32)
}

/// All `k` first-layout probe bits of a key with stride half `h2` are set. Each probe reads
/// one word of the (already loaded) line; no branches, no stores. Out of line: kept apart
/// from the current layout's inlined fast path, whose registers it would otherwise claim.
#[inline(never)]
pub(crate) fn wide64_contains(block: &Block, h2: u64, k: u32) -> bool {
    let mut all = 1u64;
    for &mult in &PROBE_POWERS[..k as usize] {
        let bit = h2.wrapping_mul(mult) >> 55; // top 9 bits: 0..512
        all &= block.0[(bit >> 6) as usize] >> (bit & 63);
    }
    all & 1 != 0
}

/// Set the `k` first-layout probe bits; returns whether any was still zero.
#[inline(never)]
fn wide64_add(block: &mut Block, h2: u64, k: u32) -> bool {
    let mut new = 0u64;
    for &mult in &PROBE_POWERS[..k as usize] {
        let bit = h2.wrapping_mul(mult) >> 55;
        let (w, mask) = ((bit >> 6) as usize, 1u64 << (bit & 63));
        new |= mask & !block.0[w];
        block.0[w] |= mask;
    }
    new != 0
}

#[cfg(test)]
mod tests {
    use super::*;
    use bloomlab_simd::PortableProbe;

    #[test]
    fn each_rule_type_is_the_layout_it_is_picked_for() {
        for layout in [Layout::Wide64, Layout::Local32, Layout::OneHash] {
            assert_eq!(by_layout!(layout, R => R::LAYOUT), layout);
            assert_eq!(
                Layout::from_format_version(layout.format_version()),
                Some(layout)
            );
        }
        let versions = [Wide64::VERSION, Local32::VERSION, OneHash::VERSION];
        assert_eq!(versions, [1, 2, 3]);
        assert_eq!(Layout::from_format_version(0), None);
        assert_eq!(Layout::from_format_version(4), None);
    }

    #[test]
    fn the_first_layout_probes_follow_the_documented_sequence() {
        let add = |b: &mut Block, h2, k| Wide64::insert(PortableProbe, b, h2, k);
        let contains = |b: &Block, h2, k| Wide64::contains(PortableProbe, b, h2, k);
        // Frozen: the positions of every serialized filter depend on it. Sequential definition:
        // h_0 = h2, h_{i+1} = h_i · 0x9e37_79b9_7f4a_7c15, bit_i = h_i >> 55.
        let h2 = 0x0123_4567_89ab_cdefu64 | 1;
        let mut want = Block::default();
        let mut h = h2;
        for _ in 0..9 {
            let bit = h >> 55;
            want.0[(bit / 64) as usize] |= 1 << (bit % 64);
            h = h.wrapping_mul(0x9e37_79b9_7f4a_7c15);
        }
        let mut got = Block::default();
        assert!(add(&mut got, h2, 9));
        assert_eq!(got, want);
        assert!(contains(&got, h2, 9) && !add(&mut got, h2, 9));
        assert!(!contains(&Block::default(), h2, 1));
        assert_eq!(PROBE_POWERS[0], 1);
        assert_eq!(PROBE_POWERS[1], PROBE_MULTIPLIER);
        // The first probe is the top 9 bits of h2 itself: bit 256 = word 4, bit 0.
        let mut one = Block::default();
        add(&mut one, 1 << 63 | 1, 1);
        assert_eq!(one.0[4], 1);
        // A block with one bit missing answers no.
        let mut partial = want;
        let first = h2 >> 55;
        partial.0[(first / 64) as usize] &= !(1 << (first % 64));
        assert!(!contains(&partial, h2, 9));
    }
}
