//! The blanket `impl Filter for T: FilterCore` hands on what a variant's `FilterCore` and
//! `Meta` say: its count, heap bytes, FPR formula and parameters, for a toy variant whose
//! every answer is known.

#![forbid(unsafe_code)]

use std::fmt;

use bloomlab_core::format::Variant;
use bloomlab_core::meta::{FilterCore, Meta};
use bloomlab_core::{Filter, HashScheme, Result, Xxh3Scheme};

/// Remembers the low bit of every inserted key's hash (two "slots").
#[derive(Clone)]
struct OneBit<S: HashScheme = Xxh3Scheme> {
    bits: [bool; 2],
    meta: Meta<S>,
}

impl<S: HashScheme> FilterCore for OneBit<S> {
    fn insert_bytes(&mut self, key: &[u8]) -> Result<()> {
        self.bits[(self.meta.scheme().hash(key).h1 & 1) as usize] = true;
        self.meta.record_insert();
        Ok(())
    }
    fn might_contain_bytes(&self, key: &[u8]) -> bool {
        self.bits[(self.meta.scheme().hash(key).h1 & 1) as usize]
    }
    fn size_in_bytes(&self) -> usize {
        24
    }
    fn table_bits(&self) -> u64 {
        2
    }
    fn hashes(&self) -> u32 {
        1
    }
    fn expected_fpr(&self) -> f64 {
        self.bits.iter().filter(|b| **b).count() as f64 / 2.0
    }
    fn same_table(&self, other: &Self) -> bool {
        self.bits == other.bits
    }
    fn debug_shape(&self, d: &mut fmt::DebugStruct<'_, '_>) {
        d.field("bits", &self.bits);
    }
}
bloomlab_core::filter_glue!(OneBit, Classic, extend);

#[test]
fn the_filter_trait_reports_what_the_variant_says() {
    let mut f = OneBit {
        bits: [false; 2],
        meta: Meta::new(10, Some(0.25), Xxh3Scheme),
    };
    assert_eq!(Filter::len(&f), 0);
    assert_eq!(Filter::expected_fpr(&f), 0.0);
    Filter::insert_bytes(&mut f, b"a").unwrap();
    assert_eq!(Filter::len(&f), 1);
    assert_eq!(Filter::expected_fpr(&f), 0.5);
    assert!(Filter::might_contain_bytes(&f, b"a"));
    // A key whose hash has the other low bit: its slot is still empty.
    let other = (0u32..)
        .map(|i| i.to_le_bytes())
        .find(|k| (Xxh3Scheme.hash(k).h1 ^ Xxh3Scheme.hash(b"a").h1) & 1 == 1)
        .unwrap();
    assert!(!Filter::might_contain_bytes(&f, &other));
    assert_eq!(Filter::size_in_bytes(&f), 24);
    let p = f.params();
    assert_eq!(p.variant, Variant::Classic);
    assert_eq!((p.capacity, p.target_fpr), (10, Some(0.25)));
    assert_eq!((p.table_bits, p.hashes), (2, 1));
}
