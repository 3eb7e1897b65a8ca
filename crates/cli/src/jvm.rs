//! Spark's and Guava's filter formats.

use crate::keys::TypedKey;
use crate::summary::Summary;
use crate::{BuildFormat, CliError};

/// A decoded Spark or Guava filter.
#[derive(Debug)]
pub enum JvmFilter {}

/// Whether the bytes start as a Spark (a big-endian version 1 or 2) or Guava (a strategy
/// ordinal 0 or 1) filter does.
pub fn sniff(_bytes: &[u8]) -> bool {
    false
}

/// Build a Spark or Guava filter sized as the JVM's `create(n, fpp)` does.
pub fn build(
    format: BuildFormat,
    _keys: &[TypedKey<'_>],
    _n: u64,
    _fpr: f64,
) -> Result<Vec<u8>, CliError> {
    Err(CliError::Invalid(format!(
        "{format} is not built into this binary"
    )))
}

/// Decode a Spark or Guava filter.
pub fn decode(_bytes: &[u8]) -> Result<JvmFilter, CliError> {
    Err(CliError::BadFile(
        "Spark and Guava filters are not built into this binary".into(),
    ))
}

impl JvmFilter {
    /// The JVM's `mightContain` for this key.
    pub fn might_contain(&self, _key: TypedKey<'_>) -> bool {
        match *self {}
    }

    /// What `inspect` prints.
    pub fn summary(&self) -> Summary {
        match *self {}
    }
}
