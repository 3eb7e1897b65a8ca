//! Instructions per lookup, for callgrind: builds a Ribbon filter (1 % target) and xorf's
//! BinaryFuse8 over the same `n` keys and runs the same 10^6 lookups (half members) through
//! each, in one non-inlined function per filter, so that
//!
//! `valgrind --tool=callgrind --toggle-collect='*lookups_*' target/release/examples/ribbon_lookup_cost`
//!
//! counts only the lookups (divide each function's inclusive count by 10^6).
//! `cargo run --release -p bloomlab-lab --example ribbon_lookup_cost [-- n]` (default 10^5).
use bloomlab_conformance::stream::{half_members, splitmix64 as splitmix};
use std::hint::black_box;

use bloomlab_ribbon::RibbonFilter;
use xorf::{BinaryFuse8, Filter as _};

#[inline(never)]
fn lookups_ribbon(f: &RibbonFilter, keys: &[u64]) -> usize {
    keys.iter().filter(|k| f.might_contain(*k)).count()
}

#[inline(never)]
fn lookups_ribbon_batch(f: &RibbonFilter, keys: &[u64]) -> usize {
    f.count_contained(keys)
}

#[inline(never)]
fn lookups_fuse8(f: &BinaryFuse8, keys: &[u64]) -> usize {
    keys.iter().filter(|k| f.contains(*k)).count()
}

fn main() {
    let n: u64 = std::env::args()
        .nth(1)
        .map_or(100_000, |s| s.parse::<f64>().unwrap() as u64);
    let mut st = 7u64;
    let keys: Vec<u64> = (0..n).map(|_| splitmix(&mut st)).collect();
    let probes: Vec<u64> = half_members(&keys, 1_000_000, &mut st);
    let ribbon = RibbonFilter::build(&keys, 0.01).unwrap();
    let fuse = BinaryFuse8::try_from(&keys[..]).unwrap();
    let a = black_box(lookups_ribbon(&ribbon, &probes));
    let b = black_box(lookups_ribbon_batch(&ribbon, &probes));
    let c = black_box(lookups_fuse8(&fuse, &probes));
    assert_eq!(a, b);
    println!("ribbon hits {a}, fuse8 hits {c} of {}", probes.len());
}
