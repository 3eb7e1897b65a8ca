//! The exact baseline: a `std::collections::HashSet<u64>` of the same keys, measured the same
//! way. FPR 0; its memory is what exactness costs.

use std::collections::HashSet;

use super::{Adapter, Entry, Info, Kind, Spec};

/// `HashSet<u64>` with std's randomly keyed SipHash-1-3, built with capacity `n`.
#[derive(Debug)]
pub struct Exact(HashSet<u64>);

impl Adapter for Exact {
    fn new_empty(spec: &Spec) -> Option<Result<Self, String>> {
        Some(Ok(Exact(HashSet::with_capacity(
            usize::try_from(spec.n).unwrap_or(0),
        ))))
    }
    #[inline]
    fn insert(&mut self, key: u64) -> bool {
        self.0.insert(key);
        true
    }
    #[inline]
    fn contains(&self, key: u64) -> bool {
        self.0.contains(&key)
    }
    fn theoretical_fpr(&self) -> Option<f64> {
        Some(0.0)
    }
    fn describe(&self) -> String {
        format!(
            "HashSet<u64>, {} items, capacity {}",
            self.0.len(),
            self.0.capacity()
        )
    }
}

/// Registry entry for the exact set.
pub fn entry() -> Entry {
    Entry::new::<Exact>(Info {
        tunable: false,
        deletes: true,
        grows: true,
        keyed: true,
        note: "HashSet<u64>::with_capacity(n), std RandomState (keyed SipHash-1-3); never a false positive",
        ..Info::base("exact-hashset", "std", Kind::Exact)
    })
}
