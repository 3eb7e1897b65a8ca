//! What building a Ribbon filter allocates: its working arrays are a few words per key (the
//! keys' hashes, their copy sorted by block, the band's rows and results, the solution), so
//! the total stays under 256 bytes per key; an array sized by slots × 128 instead of
//! slots / 128 (1 KiB per key) would not.

#![forbid(unsafe_code)]

use std::alloc::System;

use bloomlab_conformance::props::{INSTRUMENTED_SYSTEM, Region, StatsAlloc};
use bloomlab_ribbon::RibbonFilter;

#[global_allocator]
static GLOBAL: &StatsAlloc<System> = &INSTRUMENTED_SYSTEM;

#[test]
fn a_build_allocates_a_few_words_per_key() {
    let n = 100_000u64;
    let region = Region::new(GLOBAL);
    let f = RibbonFilter::build(0..n, 0.01).unwrap();
    let allocated = region.change().bytes_allocated;
    assert!(f.might_contain(&7u64));
    let per_key = allocated as f64 / n as f64;
    println!("{allocated} bytes allocated, {per_key:.1} per key");
    assert!(per_key < 256.0, "{per_key:.1} bytes per key");
}
