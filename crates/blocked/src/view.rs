//! A read-only blocked filter answering straight from the bytes of its checked format.

use core::fmt;

use bloomlab_core::Key;
use bloomlab_core::error::Result;
use bloomlab_core::hash::{HashScheme, KeyHash, Xxh3Scheme};
use bloomlab_core::meta::Meta;
use bloomlab_simd::{self as simd, LocalProbe, LocalTask};

use crate::layout::{Rule, by_layout};
use crate::{
    BLOCK_BITS, BLOCK_BYTES, BlockedBloomFilter, Encoded, Layout, block_from_le_bytes, hash_in,
    validate_parts,
};

/// A read-only [`BlockedBloomFilter`] that answers queries straight from a byte slice holding
/// the checked format written by [`BlockedBloomFilter::to_bytes`] — a memory-mapped file, a
/// table file's filter block — without copying the blocks.
///
/// Construction validates exactly as [`BlockedBloomFilter::from_bytes`] does (the same
/// functions run: envelope, fields, lengths, and the count against the set bits), so a view
/// exists only for bytes the owning decoder accepts, and it answers every query as the
/// decoded filter would. The input needs no alignment: the block data sits 80 bytes into
/// the envelope, so it is generally not even 8-byte aligned, and each probed block is read
/// as eight little-endian words with `u64::from_le_bytes` (on x86-64 the copy compiles to
/// two unaligned 32-byte loads feeding the same probe kernel the owned filter runs).
///
/// ```
/// use bloomlab_blocked::{BlockedBloomFilter, BlockedBloomFilterView};
///
/// let mut f = BlockedBloomFilter::with_fpr(10_000, 0.01)?;
/// for i in 0..10_000u64 {
///     f.insert(&i);
/// }
/// let mut file = vec![0u8; 3]; // the filter at an odd offset inside a larger buffer
/// file.extend_from_slice(&f.to_bytes());
/// let view = BlockedBloomFilterView::new(&file[3..])?;
/// assert!((0..10_000u64).all(|i| view.might_contain(&i)));
/// assert!((1u64 << 40..(1 << 40) + 1000).all(|i| view.might_contain(&i) == f.might_contain(&i)));
/// assert!(BlockedBloomFilterView::new(&file[3..file.len() - 1]).is_err()); // damaged: refused
/// # Ok::<(), bloomlab_core::Error>(())
/// ```
#[derive(Clone)]
pub struct BlockedBloomFilterView<'a, S: HashScheme = Xxh3Scheme> {
    /// `blocks × 64` bytes, any alignment.
    data: &'a [u8],
    meta: ViewMeta<S>,
}

/// What a validated encoding says besides its block data.
#[derive(Clone)]
struct ViewMeta<S: HashScheme> {
    blocks: u64,
    k: u32,
    layout: Layout,
    /// Count, capacity, target and scheme.
    common: Meta<S>,
}

impl<S: HashScheme> ViewMeta<S> {
    /// Validate `bytes` exactly as [`BlockedBloomFilter::from_bytes_with_scheme`] does; the
    /// block data's range within `bytes` and the fields.
    fn validate(bytes: &[u8], scheme: S) -> Result<(core::ops::Range<usize>, Self)> {
        let e = Encoded::open(bytes, &scheme)?;
        validate_parts(e.k, e.block_ones(), e.count, e.capacity, e.target_fpr)?;
        // `e.data` is a subslice of `bytes`.
        let start = e.data.as_ptr() as usize - bytes.as_ptr() as usize;
        let meta = ViewMeta {
            blocks: e.num_blocks(),
            k: e.k,
            layout: e.layout,
            common: Meta::new(e.capacity, e.target_fpr, scheme).with_count(e.count),
        };
        Ok((start..start + e.data.len(), meta))
    }
}

impl<'a> BlockedBloomFilterView<'a, Xxh3Scheme> {
    /// View bytes in the checked format written by [`BlockedBloomFilter::to_bytes`] (either
    /// envelope version, as [`BlockedBloomFilter::from_bytes`] reads them).
    pub fn new(bytes: &'a [u8]) -> Result<Self> {
        Self::with_scheme(bytes, Xxh3Scheme)
    }
}

struct ViewContains<'v, 'a, S: HashScheme>(&'v BlockedBloomFilterView<'a, S>, KeyHash);

impl<S: HashScheme> LocalTask for ViewContains<'_, '_, S> {
    type Output = bool;
    #[inline(always)]
    fn run<P: LocalProbe>(self, probe: P) -> bool {
        let (v, h) = (self.0, self.1);
        // The layout's rule, chosen once for this lookup, on the block read from the bytes.
        by_layout!(v.meta.layout, R => {
            let (b, src) = R::place(h, v.meta.blocks);
            let block = block_from_le_bytes(&v.data[b * BLOCK_BYTES..(b + 1) * BLOCK_BYTES]);
            R::contains(probe, &simd::Line(block), src, v.meta.k)
        })
    }
}

impl<'a, S: HashScheme> BlockedBloomFilterView<'a, S> {
    /// View bytes in the checked format, probing with `scheme` (which must be the scheme the
    /// bytes record; a keyed scheme with the same secret).
    pub fn with_scheme(bytes: &'a [u8], scheme: S) -> Result<Self> {
        let (range, meta) = ViewMeta::validate(bytes, scheme)?;
        Ok(BlockedBloomFilterView {
            data: &bytes[range],
            meta,
        })
    }

    /// `false`: the key was definitely never inserted. `true`: it maybe was. The same answer
    /// as the owned filter's [`might_contain`](BlockedBloomFilter::might_contain).
    #[inline]
    pub fn might_contain<K: Key + ?Sized>(&self, key: &K) -> bool {
        self.might_contain_hash(hash_in(self.meta.layout, self.meta.common.scheme(), key))
    }

    /// Query with a hash computed by this view's scheme.
    #[inline]
    pub fn might_contain_hash(&self, h: KeyHash) -> bool {
        simd::run_local(ViewContains(self, h))
    }

    /// Copy into an owned filter (equal to [`BlockedBloomFilter::from_bytes`] of the bytes).
    pub fn to_owned_filter(&self) -> BlockedBloomFilter<S> {
        let mut blocks = crate::zeroed_blocks(self.meta.blocks)
            .expect("the blocks already fit in memory as bytes");
        for (b, chunk) in blocks.iter_mut().zip(self.data.chunks_exact(BLOCK_BYTES)) {
            b.0 = block_from_le_bytes(chunk);
        }
        BlockedBloomFilter::from_parts(
            blocks,
            self.meta.k,
            self.meta.common.count(),
            self.meta.common.capacity(),
            self.meta.common.target_fpr(),
            self.meta.layout,
            self.meta.common.scheme().clone(),
        )
        .expect("validated when the view was made")
    }

    /// Number of inserts recorded in the bytes.
    pub fn len(&self) -> u64 {
        self.meta.common.count()
    }

    /// No inserts recorded.
    pub fn is_empty(&self) -> bool {
        self.meta.common.count() == 0
    }

    /// Number of 512-bit blocks.
    pub fn blocks(&self) -> u64 {
        self.meta.blocks
    }

    /// `m`, the number of bits.
    pub fn bits(&self) -> u64 {
        self.meta.blocks * u64::from(BLOCK_BITS)
    }

    /// `k`, probes per key.
    pub fn hashes(&self) -> u32 {
        self.meta.k
    }

    /// The design capacity recorded in the bytes.
    pub fn capacity(&self) -> u64 {
        self.meta.common.capacity()
    }

    /// The target FPR recorded in the bytes, if any.
    pub fn target_fpr(&self) -> Option<f64> {
        self.meta.common.target_fpr()
    }

    /// The probe layout the bytes record.
    pub fn layout(&self) -> Layout {
        self.meta.layout
    }

    /// The hash scheme.
    pub fn scheme(&self) -> &S {
        self.meta.common.scheme()
    }

    /// FPR the blocked formula predicts from the recorded count (as
    /// [`BlockedBloomFilter::expected_fpr`]).
    pub fn expected_fpr(&self) -> f64 {
        if self.meta.common.count() == 0 {
            return 0.0;
        }
        crate::math::blocked_fpr_exact(
            self.bits() as f64 / self.meta.common.count() as f64,
            self.meta.k,
            BLOCK_BITS,
        )
    }
}

impl<S: HashScheme> fmt::Debug for BlockedBloomFilterView<'_, S> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("BlockedBloomFilterView")
            .field("blocks", &self.meta.blocks)
            .field("k", &self.meta.k)
            .field("count", &self.meta.common.count())
            .field("capacity", &self.meta.common.capacity())
            .field("target_fpr", &self.meta.common.target_fpr())
            .field("layout", &self.meta.layout)
            .field("scheme", &self.meta.common.descriptor())
            .finish()
    }
}

/// A buffer that owns (or shares) the checked format of a blocked filter — a `Vec<u8>` read
/// from a file, an `Arc<[u8]>` in a block cache — validated once, when it is made, and
/// queried in place: [`view`](Self::view) borrows it as a [`BlockedBloomFilterView`] without
/// validating again or copying, so a cache can keep the filter's bytes as they came from disk
/// and answer from them.
///
/// ```
/// use std::sync::Arc;
/// use bloomlab_blocked::{BlockedBloomFilter, BlockedFilterBytes};
///
/// let mut f = BlockedBloomFilter::with_fpr(1_000, 0.01)?;
/// f.insert("k");
/// let cached = BlockedFilterBytes::new(Arc::<[u8]>::from(f.to_bytes()))?;
/// assert!(cached.view().might_contain("k"));
/// assert!(BlockedFilterBytes::new(vec![0u8; 10]).is_err());
/// # Ok::<(), bloomlab_core::Error>(())
/// ```
#[derive(Clone)]
pub struct BlockedFilterBytes<B: AsRef<[u8]>, S: HashScheme = Xxh3Scheme> {
    bytes: B,
    data: core::ops::Range<usize>,
    meta: ViewMeta<S>,
}

impl<B: AsRef<[u8]>> BlockedFilterBytes<B, Xxh3Scheme> {
    /// Validate `bytes` (as [`BlockedBloomFilterView::new`]) and keep them.
    pub fn new(bytes: B) -> Result<Self> {
        Self::with_scheme(bytes, Xxh3Scheme)
    }
}

impl<B: AsRef<[u8]>, S: HashScheme> BlockedFilterBytes<B, S> {
    /// Validate `bytes` for `scheme` (as [`BlockedBloomFilterView::with_scheme`]) and keep them.
    pub fn with_scheme(bytes: B, scheme: S) -> Result<Self> {
        let (data, meta) = ViewMeta::validate(bytes.as_ref(), scheme)?;
        Ok(BlockedFilterBytes { bytes, data, meta })
    }

    /// The view of the kept bytes (no validation, no copy: the bytes were validated when
    /// `self` was made, and the buffer types this is meant for — `Vec<u8>`, `Box<[u8]>`,
    /// `Arc<[u8]>`, `&[u8]` — give them back unchanged; for an `as_ref` that returned other
    /// bytes the answers would be meaningless and a shorter slice would panic).
    #[inline]
    pub fn view(&self) -> BlockedBloomFilterView<'_, S> {
        BlockedBloomFilterView {
            data: &self.bytes.as_ref()[self.data.clone()],
            meta: self.meta.clone(),
        }
    }

    /// The kept bytes.
    pub fn as_bytes(&self) -> &[u8] {
        self.bytes.as_ref()
    }

    /// Give the bytes back.
    pub fn into_inner(self) -> B {
        self.bytes
    }
}

impl<B: AsRef<[u8]>, S: HashScheme> fmt::Debug for BlockedFilterBytes<B, S> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("BlockedFilterBytes")
            .field(&self.view())
            .finish()
    }
}
