//! bloomlab's own formats and the bare Parquet bloom filter section: building them, reading
//! them back, and what `inspect` says of them.

use bloomlab::Declared;
use bloomlab::declare::{self, Changes, Hashes};
use bloomlab_core::format::Variant;
use bloomlab_core::hash::SchemeId;
use bloomlab_sbbf::Sbbf;
use bloomlab_uses::any::{AnyFilter, Layout, header};
use bloomlab_uses::inspect::inspect;

use crate::keys::TypedKey;
use crate::summary::{Count, Summary};
use crate::{BuildFormat, CliError};

/// Build one of our variants (or the Parquet section for `sbbf`) from `keys`.
pub fn build(
    format: BuildFormat,
    keys: &[TypedKey<'_>],
    n: u64,
    fpr: f64,
) -> Result<Vec<u8>, CliError> {
    let invalid = |e: bloomlab_core::Error| CliError::Invalid(e.to_string());
    match format {
        BuildFormat::Ours(variant) => {
            macro_rules! pick {
                ($k:tt; $($tag:ident $ty:ident $scheme:ident;)*) => {
                    match variant {
                        $(Variant::$tag => filled::<$k::$ty>(keys, n, fpr)?.to_bytes(),)*
                    }
                };
            }
            Ok(bloomlab::for_each_variant!(pick))
        }
        BuildFormat::Sbbf => {
            let mut f = Sbbf::with_ndv_fpp(n, fpr).map_err(invalid)?;
            for k in keys {
                k.with_bytes(|b| f.insert_bytes(b));
            }
            f.to_parquet_bytes().map_err(invalid)
        }
        jvm => crate::jvm::build(jvm, keys, n, fpr),
    }
}

/// A filter of type `F` holding every key of `keys`: sized for `n` (a growing variant starts
/// at `n`), then filled; a static variant built from the whole key set. A key that does not
/// fit (a full cuckoo table) is named with its line; a key the filter already holds as many
/// times as it keeps (`Error::TooManyCopies`: a value repeated in a column) is present, and
/// the filter goes on unchanged.
fn filled<F: Declared>(keys: &[TypedKey<'_>], n: u64, fpr: f64) -> Result<F, CliError>
where
    F::Scheme: Default,
{
    let invalid = |e: bloomlab_core::Error| CliError::Invalid(e.to_string());
    if F::DECLARATION.changes == Changes::Static {
        let owned: Vec<Vec<u8>> = keys.iter().map(|k| k.with_bytes(<[u8]>::to_vec)).collect();
        return declare::build(&owned, fpr).map_err(invalid);
    }
    let mut f: F = declare::with_fpr(n, fpr).map_err(invalid)?;
    for (i, k) in keys.iter().enumerate() {
        let inserted = match k.with_bytes(|b| f.insert_bytes(b)) {
            Err(bloomlab_core::Error::TooManyCopies(_)) => Ok(()),
            other => other,
        };
        inserted.map_err(|e| {
            CliError::Invalid(format!(
                "key {} of {} (line {}) did not fit: {e}; give a larger --n",
                i + 1,
                keys.len(),
                i + 1
            ))
        })?;
    }
    Ok(f)
}

/// Our envelope (`BLAB`) or the seed's `BLM1` layout.
pub fn is_ours(bytes: &[u8]) -> bool {
    bytes.starts_with(&bloomlab_core::format::MAGIC)
        || bytes.starts_with(&bloomlab_classic::BLM1_MAGIC)
}

/// A Parquet bloom filter section (Thrift `BloomFilterHeader`, then the bitset): the header
/// parses and announces exactly the bytes that follow.
pub fn is_parquet_section(bytes: &[u8]) -> bool {
    bloomlab_sbbf::parquet_header(bytes)
        .is_ok_and(|(len, header)| bytes.len() as u64 == header as u64 + len)
}

/// Decode one of our files for queries. A keyed file is refused: its answers need the secret.
pub fn decode(bytes: &[u8]) -> Result<AnyFilter, CliError> {
    let bad =
        |e: bloomlab_core::Error| CliError::BadFile(format!("not a valid bloomlab filter: {e}"));
    let h = header(bytes).map_err(bad)?;
    let unkeyed =
        matches!(h.scheme.id, SchemeId::Xxh3Km | SchemeId::ParquetXxh64) && h.scheme.key_check == 0;
    if !unkeyed {
        return Err(CliError::BadFile(format!(
            "a keyed bloomlab {} filter ({}): its answers need the secret, which this command does not take",
            h.variant, h.scheme
        )));
    }
    AnyFilter::decode(bytes).map(|(f, _)| f).map_err(bad)
}

/// Decode a Parquet bloom filter section.
pub fn decode_section(bytes: &[u8]) -> Result<Sbbf, CliError> {
    Sbbf::from_parquet_bytes(bytes)
        .map_err(|e| CliError::BadFile(format!("not a valid Parquet bloom filter section: {e}")))
}

/// Inspect one of our files: the summary, then the full inspection and audit.
pub fn summary(bytes: &[u8]) -> Result<Summary, CliError> {
    let i = inspect(bytes)
        .map_err(|e| CliError::BadFile(format!("not a valid bloomlab filter: {e}")))?;
    let version = match i.header.layout {
        Layout::Envelope(v) => format!("v{v}"),
        Layout::Blm1 => "BLM1".to_string(),
    };
    Ok(Summary {
        format: format!("bloomlab {} {version}", i.params.variant),
        k: i.params.hashes,
        k_meaning: match i.params.variant.hashes() {
            Hashes::Probes => "probes per key",
            Hashes::FingerprintBits => "fingerprint bits",
            Hashes::ResultBits => "result bits per key",
        },
        bits: i.params.table_bits,
        fill: i.fill_ratio,
        fpr: i.current_fpr.unwrap_or(i.expected_fpr),
        fpr_source: if i.current_fpr.is_some() && i.fill_ratio.is_some() {
            "from the fill"
        } else {
            "the variant's own formula"
        },
        count: Count::Recorded(i.count),
        details: Some(i.to_string()),
    })
}

/// Inspect a Parquet bloom filter section.
pub fn section_summary(f: &Sbbf) -> Summary {
    Summary {
        format: "parquet sbbf".into(),
        k: 8,
        k_meaning: "probes per key",
        bits: f.bits(),
        fill: Some(f.fill_ratio()),
        fpr: f.current_fpr(),
        fpr_source: "from the fill of each block",
        count: Count::Estimated(f.estimated_len()),
        details: None,
    }
}
