//! The scalable filter's promises for arbitrary keys and bytes (generic halves in
//! `bloomlab_conformance::props`; `PROPTEST_CASES` sets the case count).

use bloomlab_conformance::props::proptest::prelude::*;
use bloomlab_conformance::{counting_allocator, props, variant_properties};
use bloomlab_core::error::Error;
use bloomlab_scalable::ScalableBloomFilter as F;

counting_allocator!();

/// A chain that starts small (16 items), so up to 300 keys grow it through several stages.
fn build(keys: &[Vec<u8>]) -> F {
    props::with_keys(F::with_fpr(16, 0.01).unwrap(), keys)
}

variant_properties! { standard: F, build: build }

proptest! {
    #![proptest_config(props::config())]

    /// A chain's union is not the chain built from both sets (each grew its own stages), so
    /// the promise is the documented one: either no false negatives for both sets, or
    /// `Error::Full` with `a` unchanged.
    #[test]
    fn union_keeps_both_sets_or_refuses_unchanged(a in props::key_lists(200), b in props::key_lists(200)) {
        let _g = props::serial();
        let (mut fa, fb) = (build(&a), build(&b));
        let before = fa.clone();
        match fa.union(&fb) {
            Ok(()) => {
                props::no_false_negatives(&fa, &a)?;
                props::no_false_negatives(&fa, &b)?;
            }
            Err(Error::Full(_)) => prop_assert!(fa == before, "a refused union changed the filter"),
            Err(e) => prop_assert!(false, "unexpected error {}", e),
        }
    }
}
