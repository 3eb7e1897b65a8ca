//! Decode any serialized filter of ours without knowing its variant in advance.

use bloomlab_blocked::BlockedBloomFilter;
use bloomlab_classic::{BLM1_MAGIC, BloomFilter};
use bloomlab_core::format::{self, Variant};
use bloomlab_core::hash::SchemeId;
use bloomlab_core::{Filter, Result, SchemeDescriptor};
use bloomlab_counting::CountingBloomFilter;
use bloomlab_cuckoo::CuckooFilter;
use bloomlab_expandable::ExpandableFilter;
use bloomlab_ribbon::RibbonFilter;
use bloomlab_sbbf::Sbbf;
use bloomlab_scalable::ScalableBloomFilter;

/// Which byte layout a buffer uses.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Layout {
    /// The checked, versioned `BLAB` envelope, with its format version.
    Envelope(u16),
    /// The seed's `BLM1` layout (16-byte big-endian header, then the bits; classic only).
    Blm1,
}

impl std::fmt::Display for Layout {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Layout::Envelope(v) => write!(
                f,
                "BLAB envelope v{v} (checked: checksum and hash scheme verified)"
            ),
            Layout::Blm1 => f.write_str("BLM1 (seed layout: no checksum, no hash-scheme field)"),
        }
    }
}

/// A decoded filter of any variant this build knows.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum AnyFilter {
    /// A classic Bloom filter.
    Classic(BloomFilter),
    /// A blocked (512-bit) Bloom filter.
    Blocked(BlockedBloomFilter),
    /// A counting Bloom filter.
    Counting(CountingBloomFilter),
    /// A scalable Bloom filter (a chain of growing stages).
    Scalable(ScalableBloomFilter),
    /// A cuckoo filter.
    Cuckoo(CuckooFilter),
    /// A Ribbon filter (static).
    Ribbon(RibbonFilter),
    /// A split-block Bloom filter (the Parquet layout).
    Sbbf(Sbbf),
    /// An expandable filter (a table whose buckets split in order, fingerprints giving bits
    /// to the index).
    Expandable(Box<ExpandableFilter>),
}

/// What the header of a buffer says, read before (and independently of) decoding.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Header {
    /// Layout.
    pub layout: Layout,
    /// Variant.
    pub variant: Variant,
    /// Hash scheme recorded (BLM1 implies the default scheme).
    pub scheme: SchemeDescriptor,
}

/// Read and verify a buffer's header (for `BLAB`, the checksum too).
pub fn header(bytes: &[u8]) -> Result<Header> {
    if bytes.starts_with(&BLM1_MAGIC) {
        return Ok(Header {
            layout: Layout::Blm1,
            variant: Variant::Classic,
            scheme: SchemeDescriptor {
                id: SchemeId::Xxh3Km,
                key_check: 0,
            },
        });
    }
    let (info, _) = format::open(bytes)?;
    Ok(Header {
        layout: Layout::Envelope(info.version),
        variant: info.variant,
        scheme: info.scheme,
    })
}

impl AnyFilter {
    /// Decode an unkeyed filter of any known variant, from either layout.
    pub fn decode(bytes: &[u8]) -> Result<(AnyFilter, Header)> {
        let h = header(bytes)?;
        let f = match (h.layout, h.variant) {
            (Layout::Blm1, _) => AnyFilter::Classic(BloomFilter::from_blm1(bytes)?),
            (Layout::Envelope(_), Variant::Classic) => {
                AnyFilter::Classic(BloomFilter::from_bytes(bytes)?)
            }
            (Layout::Envelope(_), Variant::Blocked) => {
                AnyFilter::Blocked(BlockedBloomFilter::from_bytes(bytes)?)
            }
            (Layout::Envelope(_), Variant::Counting) => {
                AnyFilter::Counting(CountingBloomFilter::from_bytes(bytes)?)
            }
            (Layout::Envelope(_), Variant::Scalable) => {
                AnyFilter::Scalable(ScalableBloomFilter::from_bytes(bytes)?)
            }
            (Layout::Envelope(_), Variant::Cuckoo) => {
                AnyFilter::Cuckoo(CuckooFilter::from_bytes(bytes)?)
            }
            (Layout::Envelope(_), Variant::Ribbon) => {
                AnyFilter::Ribbon(RibbonFilter::from_bytes(bytes)?)
            }
            (Layout::Envelope(_), Variant::Sbbf) => AnyFilter::Sbbf(Sbbf::from_bytes(bytes)?),
            (Layout::Envelope(_), Variant::Expandable) => {
                AnyFilter::Expandable(Box::new(ExpandableFilter::from_bytes(bytes)?))
            }
        };
        Ok((f, h))
    }

    /// The filter behind the common trait.
    pub fn as_filter(&self) -> &dyn Filter {
        match self {
            AnyFilter::Classic(f) => f,
            AnyFilter::Blocked(f) => f,
            AnyFilter::Counting(f) => f,
            AnyFilter::Scalable(f) => f,
            AnyFilter::Cuckoo(f) => f,
            AnyFilter::Ribbon(f) => f,
            AnyFilter::Sbbf(f) => f,
            AnyFilter::Expandable(f) => &**f,
        }
    }

    /// Encode in the checked envelope.
    pub fn to_bytes(&self) -> Vec<u8> {
        match self {
            AnyFilter::Classic(f) => f.to_bytes(),
            AnyFilter::Blocked(f) => f.to_bytes(),
            AnyFilter::Counting(f) => f.to_bytes(),
            AnyFilter::Scalable(f) => f.to_bytes(),
            AnyFilter::Cuckoo(f) => f.to_bytes(),
            AnyFilter::Ribbon(f) => f.to_bytes(),
            AnyFilter::Sbbf(f) => f.to_bytes(),
            AnyFilter::Expandable(f) => f.to_bytes(),
        }
    }

    /// Fraction of bits (or slots) in use, where the variant defines one.
    pub fn fill_ratio(&self) -> Option<f64> {
        match self {
            AnyFilter::Classic(f) => Some(f.fill_ratio()),
            AnyFilter::Blocked(f) => Some(f.fill_ratio()),
            AnyFilter::Counting(f) => Some(f.fill_ratio()),
            // A chain has one fill per stage; its compound FPR comes from them.
            AnyFilter::Scalable(_) | AnyFilter::Ribbon(_) => None,
            // Occupied slots over all slots.
            AnyFilter::Cuckoo(f) => Some(f.load()),
            AnyFilter::Expandable(f) => Some(f.load()),
            AnyFilter::Sbbf(f) => Some(f.fill_ratio()),
        }
    }

    /// FPR implied by the actual fill, where the variant defines one.
    pub fn current_fpr(&self) -> Option<f64> {
        match self {
            AnyFilter::Classic(f) => Some(f.current_fpr()),
            AnyFilter::Blocked(f) => Some(f.current_fpr()),
            AnyFilter::Counting(f) => Some(f.current_fpr()),
            AnyFilter::Scalable(f) => Some(f.current_fpr()),
            // A cuckoo filter's FPR follows from its occupancy, which it knows exactly.
            AnyFilter::Cuckoo(f) => Some(f.expected_fpr()),
            // A Ribbon filter's FPR is 2^-r whatever its contents.
            AnyFilter::Ribbon(f) => Some(f.expected_fpr()),
            // The union bound of its entries, kept exactly.
            AnyFilter::Expandable(f) => Some(f.expected_fpr()),
            AnyFilter::Sbbf(f) => Some(f.current_fpr()),
        }
    }

    /// Distinct items estimated from the fill, where the variant supports it.
    pub fn estimated_len(&self) -> Option<f64> {
        match self {
            AnyFilter::Classic(f) => Some(f.estimated_len()),
            AnyFilter::Blocked(f) => Some(f.estimated_len()),
            AnyFilter::Counting(f) => Some(f.estimated_len()),
            AnyFilter::Sbbf(f) => Some(f.estimated_len()),
            // Neither estimates from a fill: the count is the answer.
            AnyFilter::Scalable(_)
            | AnyFilter::Cuckoo(_)
            | AnyFilter::Ribbon(_)
            | AnyFilter::Expandable(_) => None,
        }
    }

    /// Whether the variant supports removal.
    pub fn supports_removal(&self) -> bool {
        match self {
            AnyFilter::Classic(_)
            | AnyFilter::Blocked(_)
            | AnyFilter::Scalable(_)
            | AnyFilter::Ribbon(_) => false,
            AnyFilter::Sbbf(_) => false,
            AnyFilter::Counting(_) | AnyFilter::Cuckoo(_) | AnyFilter::Expandable(_) => true,
        }
    }
}
