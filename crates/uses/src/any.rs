//! Decode any serialized filter of ours without knowing its variant in advance.
//!
//! [`AnyFilter`] and its methods are derived from the facade's one list of variants
//! (`bloomlab::for_each_variant!`) and each variant's [`Declared`] implementation: a new
//! variant appears here without an edit.

use bloomlab::Declared;
use bloomlab::declare::Declaration;
use bloomlab_classic::{BLM1_MAGIC, BloomFilter};
use bloomlab_core::format::{self, Variant};
use bloomlab_core::hash::SchemeId;
use bloomlab_core::{Filter, Result, SchemeDescriptor};

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

/// The declaration of `variant` ([`Declared::DECLARATION`] of its type).
pub fn declaration(variant: Variant) -> &'static Declaration {
    macro_rules! find {
        ($k:tt; $($tag:ident $ty:ident $scheme:ident;)*) => {
            match variant {
                $(Variant::$tag => &<$k::$ty as Declared>::DECLARATION,)*
            }
        };
    }
    bloomlab::for_each_variant!(find)
}

macro_rules! any_filter {
    ($k:tt; $($tag:ident $ty:ident $scheme:ident;)*) => {
        /// A decoded filter of any variant this build knows (one arm per variant of the
        /// facade's list, each boxed).
        #[derive(Clone, Debug, PartialEq)]
        #[non_exhaustive]
        pub enum AnyFilter {
            $(
                #[doc = concat!("A [`", stringify!($ty), "`](bloomlab::", stringify!($ty), ").")]
                $tag(Box<$k::$ty>),
            )*
        }

        /// Every arm's filter as `$f` (of its own type) in `$body`.
        macro_rules! each {
            ($self_:expr, $f:ident => $body:expr) => {
                match $self_ {
                    $(AnyFilter::$tag($f) => $body,)*
                }
            };
        }

        impl AnyFilter {
            /// Decode an unkeyed filter of any known variant, from either layout.
            pub fn decode(bytes: &[u8]) -> Result<(AnyFilter, Header)> {
                let h = header(bytes)?;
                if h.layout == Layout::Blm1 {
                    let f = BloomFilter::from_blm1(bytes)?;
                    return Ok((AnyFilter::Classic(Box::new(f)), h));
                }
                let f = match h.variant {
                    $(Variant::$tag => AnyFilter::$tag(Box::new(bloomlab::declare::from_bytes(bytes)?)),)*
                };
                Ok((f, h))
            }
        }
    };
}

bloomlab::for_each_variant!(any_filter);

impl AnyFilter {
    /// The filter behind the common trait.
    pub fn as_filter(&self) -> &dyn Filter {
        each!(self, f => &**f)
    }

    /// The filter behind the common trait, to insert into.
    pub fn as_filter_mut(&mut self) -> &mut dyn Filter {
        each!(self, f => &mut **f)
    }

    /// What its variant declares of itself.
    pub fn declaration(&self) -> &'static Declaration {
        fn of<F: Declared>(_: &F) -> &'static Declaration {
            &F::DECLARATION
        }
        each!(self, f => of(&**f))
    }

    /// Encode in the checked envelope.
    pub fn to_bytes(&self) -> Vec<u8> {
        each!(self, f => f.to_bytes())
    }

    /// Fraction of bits (or slots) in use, where the variant defines one.
    pub fn fill_ratio(&self) -> Option<f64> {
        each!(self, f => f.fill())
    }

    /// FPR implied by the actual fill (or the variant's exact record), where it defines one.
    pub fn current_fpr(&self) -> Option<f64> {
        each!(self, f => f.fill_fpr())
    }

    /// Distinct items estimated from the fill, where the variant supports it.
    pub fn estimated_len(&self) -> Option<f64> {
        each!(self, f => f.estimate())
    }

    /// Whether the variant supports removal.
    pub fn supports_removal(&self) -> bool {
        self.declaration().deletes
    }

    /// OR `other` into this filter: the same variant, shape and scheme, and a variant whose
    /// filters merge exactly; otherwise the reason, as [`Error::Incompatible`](bloomlab_core::Error::Incompatible).
    pub fn union_in(&mut self, other: &AnyFilter) -> Result<()> {
        macro_rules! same {
            ($k:tt; $($tag:ident $ty:ident $scheme:ident;)*) => {
                match (self, other) {
                    $((AnyFilter::$tag(a), AnyFilter::$tag(b)) => a.union_in(b),)*
                    (a, b) => Err(bloomlab_core::Error::Incompatible(format!(
                        "a {} filter and a {} filter",
                        a.as_filter().params().variant,
                        b.as_filter().params().variant
                    ))),
                }
            };
        }
        bloomlab::for_each_variant!(same)
    }
}
