//! One generic adapter for every bloomlab filter: anything implementing
//! `bloomlab_core::Filter` plus [`Construct`] (how to size it for `n` items at FPR `p`).

use bloomlab_core::Filter;

use super::{Adapter, Entry, Info, Spec};

/// How the harness sizes one of our filter types for a target. Implement it for a new
/// variant (one function) and register `entry::<TheType>(Info { .. })`.
pub trait Construct: Filter + Sized + Send + 'static {
    /// A filter for `n` items at target FPR `p`.
    fn with_target(n: u64, p: f64) -> bloomlab_core::Result<Self>;
}

impl Construct for bloomlab_classic::BloomFilter {
    fn with_target(n: u64, p: f64) -> bloomlab_core::Result<Self> {
        bloomlab_classic::BloomFilter::with_fpr(n, p)
    }
}

/// Adapter for one of our filters; keys are presented as 8 little-endian bytes.
#[derive(Debug)]
pub struct Ours<F>(pub F);

impl<F: Construct> Adapter for Ours<F> {
    fn new_empty(spec: &Spec) -> Option<Result<Self, String>> {
        Some(
            F::with_target(spec.n, spec.fpr)
                .map(Ours)
                .map_err(|e| e.to_string()),
        )
    }

    #[inline]
    fn insert(&mut self, key: u64) -> bool {
        self.0.insert_bytes(&key.to_le_bytes()).is_ok()
    }

    #[inline]
    fn contains(&self, key: u64) -> bool {
        self.0.might_contain_bytes(&key.to_le_bytes())
    }

    fn theoretical_fpr(&self) -> Option<f64> {
        Some(self.0.expected_fpr())
    }

    fn describe(&self) -> String {
        let p = self.0.params();
        format!(
            "table_bits={} k={} hash={}",
            p.table_bits,
            p.hashes,
            p.scheme.id.name()
        )
    }
}

/// Registry entry for our filter type `F`.
pub fn entry<F: Construct>(info: Info) -> Entry {
    Entry::new::<Ours<F>>(info)
}
