//! Typed errors shared by every filter in the workspace.
//!
//! Nothing in the library panics on user input: invalid parameters, incompatible
//! operations and undecodable bytes all come back as one of these values.

use alloc::{format, string::String};
use thiserror::Error;

/// Everything that can go wrong when building, combining, filling or decoding a filter.
#[derive(Debug, Clone, PartialEq, Error)]
#[non_exhaustive]
pub enum Error {
    /// The expected number of items was zero; a filter must be sized for at least one item.
    #[error("expected items must be at least 1 (got 0)")]
    ZeroItems,

    /// The target false-positive rate was not a number strictly between 0 and 1.
    #[error(
        "target false-positive rate must be a finite number strictly between 0 and 1 (got {0})"
    )]
    InvalidFpr(f64),

    /// Some other parameter was outside its valid range.
    #[error("invalid parameter `{name}`: {reason}")]
    InvalidParameter {
        /// The parameter's name as the constructor spells it.
        name: &'static str,
        /// What was wrong with it.
        reason: String,
    },

    /// The requested size does not fit in memory on this platform (bits, words or bytes overflow).
    #[error("requested size overflows: {0}")]
    SizeOverflow(String),

    /// Two filters cannot be combined (union, intersection estimate) because they would probe differently.
    #[error("filters are incompatible: {0}")]
    Incompatible(String),

    /// The filter cannot accept another key without losing one it already holds.
    /// The filter is unchanged: every key accepted before still tests positive.
    #[error("filter is full: {0}")]
    Full(String),

    /// The filter already holds as many copies of this key as it keeps of one key (the
    /// variant's documented `MAX_COPIES`), so it refuses another rather than spend memory or
    /// time on it. The filter is unchanged and the key tests positive; every accepted copy can
    /// still be removed once. A caller that wants set semantics uses `insert_unique`, which
    /// never stores a second copy.
    #[error(
        "too many copies: the filter already holds {0} copies of this key, the most it keeps; the filter is unchanged and the key tests positive"
    )]
    TooManyCopies(u32),

    /// The filter is static: it is built once from the whole key set and cannot take inserts.
    #[error("{0} is a static filter: build it from the whole key set; it takes no inserts")]
    Static(&'static str),

    /// Every bit (or slot) is set, so an estimate that depends on the fill is undefined.
    #[error("filter is saturated: {0}")]
    Saturated(String),

    /// Bytes could not be decoded into a valid filter.
    #[error("cannot decode filter: {0}")]
    Decode(#[from] DecodeError),
}

/// Every way a byte buffer can fail to be a valid serialized filter.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[non_exhaustive]
pub enum DecodeError {
    /// The buffer ended before a field that must be there.
    #[error("truncated input: needed {needed} bytes at offset {offset}, {available} available")]
    Truncated {
        /// Offset at which the read started.
        offset: usize,
        /// Bytes the field needs.
        needed: usize,
        /// Bytes that were left.
        available: usize,
    },
    /// The first bytes are not a magic number this library writes.
    #[error("bad magic number {found:02x?}")]
    BadMagic {
        /// The bytes found where the magic should be.
        found: [u8; 4],
    },
    /// The format version is one this build cannot read.
    #[error("unsupported format version {0}")]
    UnsupportedVersion(u16),
    /// The header names a variant other than the one being decoded.
    #[error("wrong variant: expected {expected}, found tag {found}")]
    WrongVariant {
        /// Variant the caller asked for.
        expected: &'static str,
        /// Variant tag in the header.
        found: u8,
    },
    /// The header names a hash scheme this build does not know.
    #[error("unknown hash scheme id {0}")]
    UnknownScheme(u8),
    /// The header's hash scheme (or its key check value) differs from the one supplied:
    /// the filter would be probed at different positions and answer wrongly.
    #[error("hash scheme mismatch: filter was written with {found}, reader uses {expected}")]
    SchemeMismatch {
        /// Scheme the reader would probe with.
        expected: String,
        /// Scheme recorded in the bytes.
        found: String,
    },
    /// The payload's checksum does not match: the bytes were damaged.
    #[error("checksum mismatch: stored {stored:#018x}, computed {computed:#018x}")]
    ChecksumMismatch {
        /// Checksum stored in the header.
        stored: u64,
        /// Checksum of the bytes as read.
        computed: u64,
    },
    /// A field holds a value that no valid filter can have.
    #[error("invalid field `{field}`: {reason}")]
    InvalidField {
        /// Field name.
        field: &'static str,
        /// Why the value is invalid.
        reason: String,
    },
    /// Bits past the end of the bit array are set (invariant 2 of the design).
    #[error("bits past the end of the array are set")]
    TrailingBitsSet,
    /// Bytes remain after the filter's last field.
    #[error("{0} unexpected trailing bytes")]
    TrailingBytes(usize),
}

impl Error {
    /// Shorthand for [`Error::InvalidParameter`].
    pub fn invalid(name: &'static str, reason: impl Into<String>) -> Self {
        Error::InvalidParameter {
            name,
            reason: reason.into(),
        }
    }

    /// The check of every batched lookup: one answer slot per key (`out` has `slots`, there
    /// are `keys`), else [`Error::InvalidParameter`] naming `out`.
    pub fn check_out_len(keys: usize, slots: usize) -> Result<()> {
        if keys == slots {
            return Ok(());
        }
        Err(Error::invalid(
            "out",
            format!("has {slots} slots for {keys} keys; lengths must match"),
        ))
    }
}

impl DecodeError {
    /// Shorthand for [`DecodeError::InvalidField`].
    pub fn field(field: &'static str, reason: impl Into<String>) -> Self {
        DecodeError::InvalidField {
            field,
            reason: reason.into(),
        }
    }
}

/// Result alias used throughout the workspace.
pub type Result<T, E = Error> = core::result::Result<T, E>;
