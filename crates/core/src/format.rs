//! The checked, versioned byte format every filter shares, and helpers to read and write it.
//!
//! # Envelope layout (frozen; all integers little-endian)
//!
//! | offset | size | field |
//! |---|---|---|
//! | 0  | 4 | magic `b"BLAB"` |
//! | 4  | 2 | format version: [`FORMAT_VERSION`] = 1, or 2 / 3 for the blocked filter's second / third probe layout ([`BLOCKED_LOCAL32_VERSION`], [`BLOCKED_ONE_HASH_VERSION`]), 2 for the Ribbon filter's second equation layout ([`RIBBON_ONE_HASH_VERSION`]), 2 for the scalable filter's partitioned stages ([`SCALABLE_PARTITIONED_VERSION`]), 2 for the expandable filter's split-by-step table ([`EXPANDABLE_SPLIT_VERSION`]) |
//! | 6  | 1 | variant tag ([`Variant`]) |
//! | 7  | 1 | hash scheme id ([`hash::SchemeId`](crate::hash::SchemeId)) |
//! | 8  | 8 | key check value (0 for unkeyed schemes; never the secret itself) |
//! | 16 | 8 | payload length in bytes |
//! | 24 | 8 | checksum: xxh3-64 (seed [`CHECKSUM_SEED`]) of bytes 0..24 followed by the payload |
//! | 32 | … | payload, laid out by the variant |
//!
//! A reader refuses a wrong magic, an unknown version, another variant, another hash scheme
//! or key, a checksum mismatch, a truncated buffer and trailing bytes — in that order — and
//! the variant then validates every payload field. Decoding never panics.
//!
//! # Frozen layouts and their known-answer vectors
//!
//! Every variant's payload layout and probe layout (with the hash scheme it records) is pinned
//! by literal known-answer vectors in its crate's `tests/known_answers.rs`: exact bytes or a
//! digest of a filter after fixed inserts, where fixed keys land, and a literal encoded filter
//! decoded and queried. A layout change therefore requires changing a literal vector **and**
//! the format version (or the scheme id) together, in one commit, while the old version keeps
//! decoding and answering exactly as before.

use alloc::{format, string::ToString, vec::Vec};
use core::fmt;

use xxhash_rust::xxh3::Xxh3;

use crate::error::{DecodeError, Error, Result};
use crate::hash::{SchemeDescriptor, SchemeId};

/// Magic number of the checked envelope.
pub const MAGIC: [u8; 4] = *b"BLAB";
/// Current envelope version. Bump it (and keep reading the old one) for any layout change.
pub const FORMAT_VERSION: u16 = 1;
/// Envelope version 2, written only by the blocked filter for its second probe layout
/// (32-bit in-block probes, `bloomlab_core::simd::local_insert`); its version-1 files keep
/// the first layout and still load. Every variant but the blocked, Ribbon,
/// scalable and expandable filters writes and accepts only version 1.
pub const BLOCKED_LOCAL32_VERSION: u16 = 2;
/// Envelope version 3, written only by the blocked filter for its third probe layout: one
/// 64-bit hash per key ([`HashScheme::hash64`](crate::hash::HashScheme::hash64)), the block
/// from its high 32 bits and the version-2 in-block probes from its low 32 bits. Versions 1
/// and 2 keep loading as their own layouts.
pub const BLOCKED_ONE_HASH_VERSION: u16 = 3;
/// Envelope version 2 of the Ribbon filter (a variant's versions are its own): its second
/// equation layout, one 64-bit hash per key
/// ([`HashScheme::hash64`](crate::hash::HashScheme::hash64)) and a multiply per part of the
/// equation, where version 1 derives them with three finalisers from the 128-bit hash.
/// Version-1 files still load and answer as before.
pub const RIBBON_ONE_HASH_VERSION: u16 = 2;
/// Envelope version 2 of the scalable Bloom filter: its second probe layout, each stage split
/// into `k` equal partitions with one probe per partition, the probe value remixed by
/// murmur3's finaliser (version 1 probed the whole stage with the plain double-hashing
/// values). Version-1 files still load and answer as before.
pub const SCALABLE_PARTITIONED_VERSION: u16 = 2;
/// Envelope version 2 of the expandable filter: a table that grows by splitting buckets in
/// order (linear hashing), entries kept at alternates in level-`k` form. Version 1 (the
/// doubling table) is refused with [`DecodeError::UnsupportedVersion`].
pub const EXPANDABLE_SPLIT_VERSION: u16 = 2;
/// Newest envelope version any variant of this build reads.
pub const MAX_FORMAT_VERSION: u16 = BLOCKED_ONE_HASH_VERSION;
/// Envelope header length in bytes.
pub const HEADER_LEN: usize = 32;
/// Seed of the envelope checksum (ASCII "checksum" as a little-endian `u64`).
pub const CHECKSUM_SEED: u64 = u64::from_le_bytes(*b"checksum");

/// The enum of variants, [`Variant::ALL`], [`Variant::name`] and [`Variant::hashes`] from one
/// line per variant (tag byte, name, what its `hashes` parameter counts).
macro_rules! variants {
    ($($(#[doc = $doc:literal])* $tag:ident = $byte:literal, $name:literal, $hashes:ident;)*) => {
        /// The filter variants of the workspace; the tag byte of the envelope. Frozen once
        /// released.
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
        #[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
        #[repr(u8)]
        pub enum Variant {
            $($(#[doc = $doc])* $tag = $byte,)*
        }

        impl Variant {
            /// Every variant, in tag order.
            pub const ALL: [Variant; [$($byte),*].len()] = [$(Variant::$tag),*];

            /// Lower-case name used in reports and on the command line.
            pub fn name(self) -> &'static str {
                match self {
                    $(Variant::$tag => $name,)*
                }
            }

            /// What [`FilterParams::hashes`](crate::FilterParams::hashes) counts for this
            /// variant (read typed with [`FilterParams::per_key`](crate::FilterParams::per_key)).
            pub fn hashes(self) -> crate::declare::Hashes {
                match self {
                    $(Variant::$tag => crate::declare::Hashes::$hashes,)*
                }
            }
        }
    };
}

variants! {
    /// Classic Bloom filter: k probes anywhere in m bits.
    Classic = 1, "classic", Probes;
    /// Blocked Bloom filter: all k probes inside one 512-bit block.
    Blocked = 2, "blocked", Probes;
    /// Counting Bloom filter: 4-bit counters, supports removal.
    Counting = 3, "counting", Probes;
    /// Scalable Bloom filter: a chain of growing stages with tightening FPRs.
    Scalable = 4, "scalable", Probes;
    /// Cuckoo filter: fingerprints in 4-slot buckets, supports removal.
    Cuckoo = 5, "cuckoo", FingerprintBits;
    /// Split-block Bloom filter of the Parquet format: eight bits in one 256-bit block.
    Sbbf = 6, "sbbf", Probes;
    /// Standard Ribbon filter: static, built once from the whole key set.
    Ribbon = 7, "ribbon", ResultBits;
    /// Expandable filter: a bucket table that grows without a size hint by splitting its
    /// buckets one after another (linear hashing), each split moving one fingerprint bit of
    /// the bucket's entries into the bucket index.
    Expandable = 8, "expandable", FingerprintBits;
}

impl Variant {
    /// The variant with this tag byte, if any.
    pub fn from_tag(tag: u8) -> Option<Variant> {
        Variant::ALL.into_iter().find(|v| *v as u8 == tag)
    }
}

impl fmt::Display for Variant {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Writes an envelope: header first, payload appended by the variant, then
/// [`finish`](Self::finish) fills in the length and checksum.
#[derive(Debug)]
pub struct EnvelopeWriter {
    buf: Vec<u8>,
}

impl EnvelopeWriter {
    /// Start an envelope for `variant` hashed with `scheme`; `payload_hint` pre-allocates.
    pub fn new(variant: Variant, scheme: SchemeDescriptor, payload_hint: usize) -> Self {
        Self::with_version(variant, scheme, FORMAT_VERSION, payload_hint)
    }

    /// [`new`](Self::new) writing envelope version `version` (a variant with more than one
    /// payload layout names the one it writes; readers pass it to [`open_expecting_versions`]).
    pub fn with_version(
        variant: Variant,
        scheme: SchemeDescriptor,
        version: u16,
        payload_hint: usize,
    ) -> Self {
        let mut buf = Vec::with_capacity(HEADER_LEN + payload_hint);
        buf.extend_from_slice(&MAGIC);
        buf.extend_from_slice(&version.to_le_bytes());
        buf.push(variant as u8);
        buf.push(scheme.id as u8);
        buf.extend_from_slice(&scheme.key_check.to_le_bytes());
        buf.extend_from_slice(&[0u8; 16]); // length and checksum, patched in `finish`
        EnvelopeWriter { buf }
    }

    /// Append one byte.
    pub fn u8(&mut self, v: u8) -> &mut Self {
        self.buf.push(v);
        self
    }
    /// Append a little-endian `u32`.
    pub fn u32(&mut self, v: u32) -> &mut Self {
        self.buf.extend_from_slice(&v.to_le_bytes());
        self
    }
    /// Append a little-endian `u64`.
    pub fn u64(&mut self, v: u64) -> &mut Self {
        self.buf.extend_from_slice(&v.to_le_bytes());
        self
    }
    /// Append an `f64` as its little-endian IEEE-754 bits.
    pub fn f64(&mut self, v: f64) -> &mut Self {
        self.u64(v.to_bits())
    }
    /// Append raw bytes.
    pub fn bytes(&mut self, v: &[u8]) -> &mut Self {
        self.buf.extend_from_slice(v);
        self
    }
    /// Direct access for bulk writers (e.g. [`BitArray::write_le_bytes`](crate::bits::BitArray::write_le_bytes)).
    pub fn buffer(&mut self) -> &mut Vec<u8> {
        &mut self.buf
    }

    /// Patch length and checksum; return the finished bytes.
    pub fn finish(mut self) -> Vec<u8> {
        reseal(&mut self.buf);
        self.buf
    }
}

/// Recompute the length and checksum fields of an envelope whose header (first
/// [`HEADER_LEN`] bytes) and payload were edited by hand. For tests that need damaged payloads
/// to reach the variant's own validation, and for tools. Returns `false` (and changes nothing)
/// if the buffer is shorter than a header.
pub fn reseal(bytes: &mut [u8]) -> bool {
    if bytes.len() < HEADER_LEN {
        return false;
    }
    let payload_len = (bytes.len() - HEADER_LEN) as u64;
    bytes[16..24].copy_from_slice(&payload_len.to_le_bytes());
    let sum = checksum(&bytes[..24], &bytes[HEADER_LEN..]);
    bytes[24..32].copy_from_slice(&sum.to_le_bytes());
    true
}

/// Relabel an envelope as written with the public default scheme (id 1, no key check) and
/// reseal it, so tools can read a keyed filter's structure — sizes, count, fill — without the
/// secret. Queries on the relabelled filter are meaningless: they probe positions the secret's
/// holder does not. (An attacker can do exactly this; it is why keyed bytes reveal nothing
/// about *which* keys are members.)
pub fn relabel_as_unkeyed(bytes: &mut [u8]) {
    if bytes.len() >= HEADER_LEN {
        bytes[7] = SchemeId::Xxh3Km as u8;
        bytes[8..16].fill(0);
        reseal(bytes);
    }
}

fn checksum(header: &[u8], payload: &[u8]) -> u64 {
    let mut h = Xxh3::with_seed(CHECKSUM_SEED);
    h.update(header);
    h.update(payload);
    h.digest()
}

/// What an envelope header says, before the payload is interpreted.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct EnvelopeInfo {
    /// Format version.
    pub version: u16,
    /// Variant tag.
    pub variant: Variant,
    /// Hash scheme and key check value.
    pub scheme: SchemeDescriptor,
    /// Payload length in bytes.
    pub payload_len: u64,
}

/// Parse and verify an envelope: magic, version, known variant and scheme, exact length and
/// checksum. Returns the header and the payload.
pub fn open(bytes: &[u8]) -> Result<(EnvelopeInfo, &[u8]), DecodeError> {
    let mut r = Reader::new(bytes);
    let magic: [u8; 4] = r.array()?;
    if magic != MAGIC {
        return Err(DecodeError::BadMagic { found: magic });
    }
    let version = r.u16()?;
    if !(FORMAT_VERSION..=MAX_FORMAT_VERSION).contains(&version) {
        return Err(DecodeError::UnsupportedVersion(version));
    }
    let tag = r.u8()?;
    let variant = Variant::from_tag(tag)
        .ok_or_else(|| DecodeError::field("variant", format!("unknown variant tag {tag}")))?;
    let scheme = SchemeDescriptor {
        id: SchemeId::try_from(r.u8()?)?,
        key_check: r.u64()?,
    };
    let payload_len = r.u64()?;
    let stored = r.u64()?;
    let rest = r.remaining();
    if (rest as u64) < payload_len {
        return Err(DecodeError::Truncated {
            offset: HEADER_LEN,
            needed: usize::try_from(payload_len).unwrap_or(usize::MAX),
            available: rest,
        });
    }
    if rest as u64 > payload_len {
        return Err(DecodeError::TrailingBytes(rest - payload_len as usize));
    }
    let payload = &bytes[HEADER_LEN..];
    let computed = checksum(&bytes[..24], payload);
    if computed != stored {
        return Err(DecodeError::ChecksumMismatch { stored, computed });
    }
    Ok((
        EnvelopeInfo {
            version,
            variant,
            scheme,
            payload_len,
        },
        payload,
    ))
}

/// [`open`], then require the given variant and hash scheme, and envelope version
/// [`FORMAT_VERSION`] (every variant with a single layout).
pub fn open_expecting(
    bytes: &[u8],
    variant: Variant,
    scheme: SchemeDescriptor,
) -> Result<&[u8], DecodeError> {
    open_expecting_versions(bytes, variant, scheme, &[FORMAT_VERSION]).map(|(_, p)| p)
}

/// [`open`], then require the given variant and hash scheme and one of the envelope
/// `versions` this variant reads; returns the version found and the payload.
pub fn open_expecting_versions<'a>(
    bytes: &'a [u8],
    variant: Variant,
    scheme: SchemeDescriptor,
    versions: &[u16],
) -> Result<(u16, &'a [u8]), DecodeError> {
    let (info, payload) = open(bytes)?;
    if !versions.contains(&info.version) {
        return Err(DecodeError::UnsupportedVersion(info.version));
    }
    if info.variant != variant {
        return Err(DecodeError::WrongVariant {
            expected: variant.name(),
            found: info.variant as u8,
        });
    }
    if info.scheme != scheme {
        return Err(DecodeError::SchemeMismatch {
            expected: scheme.to_string(),
            found: info.scheme.to_string(),
        });
    }
    Ok((info.version, payload))
}

/// A bounds-checked little-endian cursor over a byte slice. Every read returns
/// [`DecodeError::Truncated`] instead of panicking.
#[derive(Debug, Clone)]
pub struct Reader<'a> {
    buf: &'a [u8],
    pos: usize,
}

impl<'a> Reader<'a> {
    /// Start at the beginning of `buf`.
    pub fn new(buf: &'a [u8]) -> Self {
        Reader { buf, pos: 0 }
    }

    /// Bytes not read yet.
    pub fn remaining(&self) -> usize {
        self.buf.len() - self.pos
    }

    /// Current offset.
    pub fn position(&self) -> usize {
        self.pos
    }

    /// Take the next `n` bytes.
    pub fn take(&mut self, n: usize) -> Result<&'a [u8], DecodeError> {
        if self.remaining() < n {
            return Err(DecodeError::Truncated {
                offset: self.pos,
                needed: n,
                available: self.remaining(),
            });
        }
        let s = &self.buf[self.pos..self.pos + n];
        self.pos += n;
        Ok(s)
    }

    /// Take `n` bytes where `n` came from the input as a `u64` (refuses sizes past `usize`).
    pub fn take_u64_len(&mut self, n: u64) -> Result<&'a [u8], DecodeError> {
        let n = usize::try_from(n).map_err(|_| DecodeError::Truncated {
            offset: self.pos,
            needed: usize::MAX,
            available: self.remaining(),
        })?;
        self.take(n)
    }

    /// Next `N` bytes as an array.
    pub fn array<const N: usize>(&mut self) -> Result<[u8; N], DecodeError> {
        let s = self.take(N)?;
        let mut a = [0u8; N];
        a.copy_from_slice(s);
        Ok(a)
    }
    /// One byte.
    pub fn u8(&mut self) -> Result<u8, DecodeError> {
        Ok(self.array::<1>()?[0])
    }
    /// Little-endian `u16`.
    pub fn u16(&mut self) -> Result<u16, DecodeError> {
        Ok(u16::from_le_bytes(self.array()?))
    }
    /// Little-endian `u32`.
    pub fn u32(&mut self) -> Result<u32, DecodeError> {
        Ok(u32::from_le_bytes(self.array()?))
    }
    /// Little-endian `u64`.
    pub fn u64(&mut self) -> Result<u64, DecodeError> {
        Ok(u64::from_le_bytes(self.array()?))
    }
    /// Big-endian `u32` (for the seed's BLM1 layout).
    pub fn u32_be(&mut self) -> Result<u32, DecodeError> {
        Ok(u32::from_be_bytes(self.array()?))
    }
    /// `f64` from little-endian IEEE-754 bits.
    pub fn f64(&mut self) -> Result<f64, DecodeError> {
        Ok(f64::from_bits(self.u64()?))
    }

    /// Require that everything was read.
    pub fn finish(self) -> Result<(), DecodeError> {
        match self.remaining() {
            0 => Ok(()),
            n => Err(DecodeError::TrailingBytes(n)),
        }
    }
}

/// Check a decoded probe count `k` (`1..=MAX_HASHES`, [`math::validate_hashes`](crate::math::validate_hashes)),
/// as a [`DecodeError`] naming the field `k`.
pub fn check_hashes(k: u32) -> core::result::Result<(), DecodeError> {
    crate::math::validate_hashes(k)
        .map(|_| ())
        .map_err(|e| DecodeError::field("k", e.to_string()))
}

/// The 40 bytes that open the classic, blocked and counting payloads: the table's size (bits,
/// blocks or counters, as the variant counts it), the probes `k`, a reserved `u32` that is
/// zero, the insert count, the design capacity and the optional target FPR
/// ([`encode_optional_fpr`]), all little-endian.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct BloomHeader {
    /// The table's size, in the variant's unit.
    pub size: u64,
    /// Probes per key.
    pub k: u32,
    /// Inserts recorded.
    pub count: u64,
    /// Design capacity.
    pub capacity: u64,
    /// The target FPR the filter was sized for, if any.
    pub target_fpr: Option<f64>,
}

impl BloomHeader {
    /// Its length in bytes.
    pub const LEN: usize = 40;

    /// Append it to `w`.
    pub fn write(&self, w: &mut EnvelopeWriter) {
        w.u64(self.size)
            .u32(self.k)
            .u32(0)
            .u64(self.count)
            .u64(self.capacity)
            .f64(encode_optional_fpr(self.target_fpr));
    }

    /// Read it from `r`, refusing a non-zero reserved word, a target outside (0, 1) and a `k`
    /// out of range ([`check_hashes`]), in that order. The size is the caller's to check.
    pub fn read(r: &mut Reader<'_>) -> Result<Self, DecodeError> {
        let size = r.u64()?;
        let k = r.u32()?;
        if r.u32()? != 0 {
            return Err(DecodeError::field("reserved", "must be zero"));
        }
        let count = r.u64()?;
        let capacity = r.u64()?;
        let target_fpr = decode_optional_fpr(r.f64()?)?;
        check_hashes(k)?;
        Ok(BloomHeader {
            size,
            k,
            count,
            capacity,
            target_fpr,
        })
    }
}

/// Encode an optional target FPR as `f64` bits (0.0 means "not given").
pub fn encode_optional_fpr(p: Option<f64>) -> f64 {
    p.unwrap_or(0.0)
}

/// Decode an optional target FPR written by [`encode_optional_fpr`], validating it.
pub fn decode_optional_fpr(v: f64) -> Result<Option<f64>, DecodeError> {
    if v == 0.0 && v.is_sign_positive() {
        Ok(None)
    } else if v.is_finite() && v > 0.0 && v < 1.0 {
        Ok(Some(v))
    } else {
        Err(DecodeError::field(
            "target_fpr",
            format!("{v} is not in (0, 1)"),
        ))
    }
}

/// Validate an optional target FPR held in memory (serde input, `from_parts`): `None`, or
/// `Some(p)` with `p` finite and strictly between 0 and 1.
pub fn validate_optional_fpr(p: Option<f64>) -> Result<Option<f64>, DecodeError> {
    match p {
        None => Ok(None),
        Some(v) if v.is_finite() && v > 0.0 && v < 1.0 => Ok(Some(v)),
        Some(v) => Err(DecodeError::field(
            "target_fpr",
            format!("{v} is not in (0, 1)"),
        )),
    }
}

/// Convert a decode error into the workspace error type (for `?` in constructors).
pub fn decode_err(e: DecodeError) -> Error {
    Error::Decode(e)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hash::{HashScheme, Xxh3Scheme};

    fn sample() -> Vec<u8> {
        let mut w = EnvelopeWriter::new(Variant::Classic, Xxh3Scheme.descriptor(), 12);
        w.u32(7).u64(99);
        w.finish()
    }

    #[test]
    fn round_trip() {
        let bytes = sample();
        assert_eq!(bytes.len(), HEADER_LEN + 12);
        let payload = open_expecting(&bytes, Variant::Classic, Xxh3Scheme.descriptor()).unwrap();
        let mut r = Reader::new(payload);
        assert_eq!(r.u32().unwrap(), 7);
        assert_eq!(r.u64().unwrap(), 99);
        r.finish().unwrap();
    }

    #[test]
    fn every_single_byte_change_is_refused() {
        let bytes = sample();
        for i in 0..bytes.len() {
            for flip in [1u8, 0x80, 0xff] {
                let mut b = bytes.clone();
                b[i] ^= flip;
                assert!(open(&b).is_err(), "byte {i} ^ {flip:#x} accepted");
            }
        }
        for cut in 0..bytes.len() {
            assert!(open(&bytes[..cut]).is_err());
        }
        // The error counts the bytes past the payload (12 bytes here, so a count taken as a
        // ratio or a bound would differ from 2 extra bytes on).
        for extra in 1..=40 {
            let mut longer = bytes.clone();
            longer.resize(bytes.len() + extra, 0);
            assert_eq!(
                open(&longer).unwrap_err(),
                DecodeError::TrailingBytes(extra),
                "{extra} bytes past the payload"
            );
        }
    }

    #[test]
    fn wrong_variant_and_scheme_are_refused() {
        let bytes = sample();
        assert!(matches!(
            open_expecting(&bytes, Variant::Blocked, Xxh3Scheme.descriptor()),
            Err(DecodeError::WrongVariant { .. })
        ));
        let keyed = SchemeDescriptor {
            id: SchemeId::SipHash24Km,
            key_check: 5,
        };
        assert!(matches!(
            open_expecting(&bytes, Variant::Classic, keyed),
            Err(DecodeError::SchemeMismatch { .. })
        ));
    }

    #[test]
    fn reader_never_panics() {
        let mut r = Reader::new(&[1, 2, 3]);
        assert!(r.u32().is_err());
        assert_eq!(r.u16().unwrap(), 0x0201);
        assert!(r.take_u64_len(u64::MAX).is_err());
        assert_eq!(r.u8().unwrap(), 3);
        assert!(r.u8().is_err());
    }

    #[test]
    fn each_reader_takes_its_bytes_in_its_order() {
        // The seed's BLM1 layout is big-endian, the envelope's little-endian.
        let bytes = [0x12, 0x34, 0x56, 0x78, 0x9a, 0xbc, 0xde, 0xf0, 0x01];
        let mut r = Reader::new(&bytes);
        assert_eq!(r.u32_be().unwrap(), 0x1234_5678);
        assert_eq!(r.u32().unwrap(), 0xf0de_bc9a);
        assert!(r.u32_be().is_err(), "one byte left");
        assert_eq!(r.u8().unwrap(), 1);
        r.finish().unwrap();
    }

    #[test]
    fn the_bloom_header_is_forty_little_endian_bytes_and_reads_back() {
        use crate::hash::{HashScheme, Xxh3Scheme};
        let h = BloomHeader {
            size: 0x0102_0304_0506_0708,
            k: 7,
            count: 3,
            capacity: 1_000,
            target_fpr: Some(0.25),
        };
        let mut w = EnvelopeWriter::new(Variant::Classic, Xxh3Scheme.descriptor(), 0);
        h.write(&mut w);
        let bytes = w.finish();
        let (_, payload) = open(&bytes).unwrap();
        // size, k, a zero reserved word, count, capacity, the target's f64 bits.
        let mut want = Vec::new();
        want.extend_from_slice(&0x0102_0304_0506_0708u64.to_le_bytes());
        want.extend_from_slice(&7u32.to_le_bytes());
        want.extend_from_slice(&0u32.to_le_bytes());
        want.extend_from_slice(&3u64.to_le_bytes());
        want.extend_from_slice(&1_000u64.to_le_bytes());
        want.extend_from_slice(&0.25f64.to_le_bytes());
        assert_eq!((payload, payload.len()), (&want[..], BloomHeader::LEN));
        let mut r = Reader::new(payload);
        assert_eq!(BloomHeader::read(&mut r), Ok(h));
        r.finish().unwrap();
        // A non-zero reserved word, a target outside (0, 1) and k = 0 are each refused.
        let refused = |at: usize, with: &[u8]| {
            let mut bad = want.clone();
            bad[at..at + with.len()].copy_from_slice(with);
            match BloomHeader::read(&mut Reader::new(&bad)) {
                Err(DecodeError::InvalidField { field, .. }) => field,
                other => panic!("{other:?}"),
            }
        };
        assert_eq!(refused(12, &1u32.to_le_bytes()), "reserved");
        assert_eq!(refused(32, &2.0f64.to_le_bytes()), "target_fpr");
        assert_eq!(refused(8, &0u32.to_le_bytes()), "k");
    }

    #[test]
    fn optional_fpr() {
        assert_eq!(decode_optional_fpr(encode_optional_fpr(None)), Ok(None));
        assert_eq!(validate_optional_fpr(None), Ok(None));
        assert_eq!(validate_optional_fpr(Some(0.5)), Ok(Some(0.5)));
        for bad in [0.0, -0.0, 1.0, f64::NAN, -1.0] {
            assert!(validate_optional_fpr(Some(bad)).is_err(), "{bad}");
        }
        assert_eq!(decode_optional_fpr(0.01), Ok(Some(0.01)));
        for bad in [-0.0, 1.0, f64::NAN, 2.0, -0.1] {
            assert!(decode_optional_fpr(bad).is_err(), "{bad}");
        }
    }
}
