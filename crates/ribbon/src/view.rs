//! A filter answered straight from its bytes: a file read from disk (or mapped) is queried
//! without copying or aligning the solution.

use core::fmt;

use bloomlab_core::Key;
use bloomlab_core::error::Result;
use bloomlab_core::format::Variant;
use bloomlab_core::hash::{HashScheme, KeyHash, Xxh3Scheme};
use bloomlab_core::meta::{FilterCore, FilterMeta, Meta, MetaView};

use crate::band::LeWords;
use crate::{HashLookup, Layout, Parsed, Probe, RibbonFilter, fpr_for_result_bits, hash_in};
use bloomlab_simd::{self as simd, Parity, ParityTask};

/// A read-only Ribbon filter borrowing the bytes [`RibbonFilter::to_bytes`] wrote. Opening it
/// runs every check [`RibbonFilter::from_bytes`] runs (checksum included); queries then read
/// the solution in place, as little-endian words at any alignment, and answer exactly as the
/// owned filter does.
///
/// ```
/// use bloomlab_ribbon::{RibbonFilter, RibbonView};
/// let f = RibbonFilter::build(0..1000u32, 0.01)?;
/// let bytes = f.to_bytes();
/// let view = RibbonView::new(&bytes)?;
/// assert!((0..1000u32).all(|i| view.might_contain(&i)));
/// // Any alignment: the same bytes one position into a larger buffer.
/// let mut shifted = vec![0u8];
/// shifted.extend_from_slice(&bytes);
/// let view = RibbonView::new(&shifted[1..])?;
/// assert_eq!(view.might_contain(&5000u32), f.might_contain(&5000u32));
/// # Ok::<(), bloomlab_core::Error>(())
/// ```
#[derive(Clone)]
pub struct RibbonView<'a, S: HashScheme = Xxh3Scheme> {
    solution: &'a [u8],
    num_slots: u64,
    /// `r`, the seed and the layout, as the owned filter keeps them.
    probe: Probe,
    meta: Meta<S>,
}

/// One lookup of a key in a view, as a [`ParityTask`].
struct ViewLookup<'v, 'a, S: HashScheme, K: ?Sized> {
    view: &'v RibbonView<'a, S>,
    key: &'v K,
}

impl<S: HashScheme, K: Key + ?Sized> ParityTask for ViewLookup<'_, '_, S, K> {
    type Output = bool;
    #[inline(always)]
    fn run<P: Parity>(self, p: P) -> bool {
        let v = self.view;
        let h = v.hash_key(self.key);
        v.probe.answer(p, &LeWords(v.solution), h)
    }
}

impl<'a> RibbonView<'a, Xxh3Scheme> {
    /// Open bytes written with the default scheme.
    pub fn new(bytes: &'a [u8]) -> Result<Self> {
        Self::with_scheme(bytes, Xxh3Scheme)
    }
}

impl<'a, S: HashScheme> RibbonView<'a, S> {
    /// Open bytes written with `scheme`; refuses exactly what the owned decoder refuses.
    pub fn with_scheme(bytes: &'a [u8], scheme: S) -> Result<Self> {
        let p = Parsed::open(bytes, &scheme)?;
        Ok(RibbonView {
            solution: p.solution,
            num_slots: p.num_slots,
            probe: Probe::new(p.layout, p.num_slots, p.result_bits, p.seed),
            meta: Meta::new(p.count, p.target_fpr, scheme).with_count(p.count),
        })
    }

    /// `false`: the key was definitely not in the set. `true`: maybe. Answers exactly as
    /// [`RibbonFilter::might_contain`] on the same bytes.
    #[inline]
    pub fn might_contain<K: Key + ?Sized>(&self, key: &K) -> bool {
        simd::run_parity(ViewLookup { view: self, key })
    }

    /// The layout recorded in the bytes.
    pub fn layout(&self) -> Layout {
        self.probe.layout
    }

    /// A key's hash as [`might_contain_hash`](Self::might_contain_hash) takes it
    /// ([`RibbonFilter::hash_key`]).
    #[inline(always)]
    pub fn hash_key<K: Key + ?Sized>(&self, key: &K) -> KeyHash {
        hash_in(self.probe.layout, self.meta.scheme(), key)
    }

    /// [`RibbonFilter::might_contain_hash`], reading the solution from the bytes.
    #[inline]
    pub fn might_contain_hash(&self, h: KeyHash) -> bool {
        simd::run_parity(HashLookup {
            words: &LeWords(self.solution),
            probe: self.probe,
            hash: h,
        })
    }

    /// Copy into an owned filter.
    pub fn to_owned_filter(&self) -> RibbonFilter<S> {
        let words = self
            .solution
            .chunks_exact(8)
            .map(|c| u64::from_le_bytes(c.try_into().expect("8 bytes")))
            .collect();
        RibbonFilter::from_parts_in(
            self.probe.layout,
            words,
            self.num_slots,
            self.probe.r,
            self.probe.seed,
            self.meta.count(),
            self.meta.target_fpr(),
            self.meta.scheme().clone(),
        )
        .expect("a view holds validated fields")
    }

    /// Slots `m`.
    pub fn num_slots(&self) -> u64 {
        self.num_slots
    }
    /// Result bits `r`.
    pub fn result_bits(&self) -> u32 {
        self.probe.r
    }
}

impl<S: HashScheme> FilterMeta for RibbonView<'_, S> {
    type Scheme = S;
    const VARIANT: Variant = Variant::Ribbon;
    const TYPE_NAME: &'static str = "RibbonView";

    fn meta(&self) -> MetaView<'_, S> {
        self.meta.view()
    }
}

impl<S: HashScheme> FilterCore for RibbonView<'_, S> {
    bloomlab_core::key_methods!(static);
    /// The view owns no heap; this is the borrowed solution's size.
    fn size_in_bytes(&self) -> usize {
        self.solution.len()
    }
    fn table_bits(&self) -> u64 {
        self.num_slots * u64::from(self.probe.r)
    }
    fn hashes(&self) -> u32 {
        self.probe.r
    }
    fn expected_fpr(&self) -> f64 {
        if self.num_slots == 0 {
            0.0
        } else {
            fpr_for_result_bits(self.probe.r)
        }
    }
    fn same_table(&self, other: &Self) -> bool {
        (
            self.probe.layout,
            self.num_slots,
            self.probe.r,
            self.probe.seed,
            self.solution,
        ) == (
            other.probe.layout,
            other.num_slots,
            other.probe.r,
            other.probe.seed,
            other.solution,
        )
    }
    fn debug_shape(&self, d: &mut fmt::DebugStruct<'_, '_>) {
        d.field("num_slots", &self.num_slots)
            .field("result_bits", &self.probe.r);
    }
    fn debug_state(&self, d: &mut fmt::DebugStruct<'_, '_>) {
        d.field("seed", &self.probe.seed)
            .field("layout", &self.probe.layout);
    }
}

impl<S: HashScheme> fmt::Debug for RibbonView<'_, S> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.fmt_debug(f)
    }
}
