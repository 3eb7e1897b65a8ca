//! Single lookups at 10^7 keys: Ribbon behind a call per key, Ribbon inlined into its loop,
//! and xorf's BinaryFuse8 inlined into its loop — of the raw `u64` (which xorf takes as
//! already hashed) and of xxh3-64 of its 8 bytes (as the harness's adapter gives it; Ribbon
//! hashes the same bytes with XXH3-64 under its own seed) — four loops over the same chunks of 65 536 lookups (half members) in
//! rotating order. `called` Ribbon is how a caller that does not
//! inline the lookup runs it (how the harness ran it before `might_contain` was always
//! inlined); `inlined` is what every caller gets now.
//! Each loop has copies of its own (so none reads a copy another loop just brought into
//! cache), and each chunk reads one of `reps` of them in turn: with the default 10, about
//! 390 MiB of filters at 10^7 (280 MiB before the fourth loop), more than the L3 of any VM it
//! ran on (260 MiB shared with other guests on the Intel one, 32 MiB on the AMD ones), as in
//! the harness, which holds every filter of a run. In the inlined loops
//! the disassembly shows no call but panic and fallback paths. xorf's `contains` is not
//! marked `#[inline]`: the compiler inlines it here because this loop is its only caller (a
//! second caller — a called BinaryFuse8 loop — made it a call in both, as in the harness,
//! where several functions call it; so both BinaryFuse8 loops are one function, which the
//! compiler unswitches on its `hash` flag).
//! Prints the median and quartiles of the per-chunk ratios and of the ns per lookup.
//!
//! `cargo run --release -p bloomlab-lab --example ribbon_single_vs_fuse [-- n reps rounds]`
//! (defaults: 10^7 keys, 10 copies, 20 rounds of 8 chunks).
use bloomlab_conformance::stream::{half_members, splitmix64 as splitmix};
use std::hint::black_box;
use std::time::Instant;

use bloomlab_ribbon::RibbonFilter;
use xorf::{BinaryFuse8, Filter as _};
use xxhash_rust::xxh3::xxh3_64;

#[inline(never)]
fn ribbon_call(f: &RibbonFilter, k: &u64) -> bool {
    f.might_contain(k)
}

#[inline(never)]
fn ribbon_called(f: &RibbonFilter, ks: &[u64]) -> usize {
    ks.iter().filter(|k| ribbon_call(f, k)).count()
}

#[inline(never)]
fn ribbon_inlined(f: &RibbonFilter, ks: &[u64]) -> usize {
    ks.iter().filter(|k| f.might_contain(*k)).count()
}

/// BinaryFuse8 of the raw `u64` (`hash == false`) or of its xxh3-64 (of its 8 little-endian
/// bytes, as the harness's adapter gives it; that filter is built from the same hashes). One loop for both, so that `contains` keeps a
/// single caller and stays inlined; the compiler unswitches it on `hash`.
#[inline(never)]
fn fuse_inlined(f: &BinaryFuse8, ks: &[u64], hash: bool) -> usize {
    ks.iter()
        .filter(|&&k| f.contains(&if hash { xxh3_64(&k.to_le_bytes()) } else { k }))
        .count()
}

fn quartiles(v: &mut [f64]) -> String {
    v.sort_by(f64::total_cmp);
    format!(
        "{:.3} [{:.3}–{:.3}]",
        v[v.len() / 2],
        v[v.len() / 4],
        v[3 * v.len() / 4]
    )
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let n: u64 = args
        .get(1)
        .map_or(10_000_000, |s| s.parse::<f64>().unwrap() as u64);
    let reps: usize = args.get(2).map_or(10, |s| s.parse().unwrap());
    let rounds: usize = args.get(3).map_or(20, |s| s.parse().unwrap());
    let mut st = 42u64;
    let keys: Vec<u64> = (0..n).map(|_| splitmix(&mut st)).collect();
    let r0 = RibbonFilter::build(&keys, 0.01).unwrap();
    let f0 = BinaryFuse8::try_from(&keys[..]).unwrap();
    let hashed: Vec<u64> = keys.iter().map(|k| xxh3_64(&k.to_le_bytes())).collect();
    let f1 = BinaryFuse8::try_from(&hashed[..]).unwrap();
    // Copies per loop: ribbon called, ribbon inlined; fuse inlined, fuse of hashes inlined.
    let rs: [Vec<RibbonFilter>; 2] =
        std::array::from_fn(|_| (0..reps).map(|_| r0.clone()).collect());
    let fs: [Vec<BinaryFuse8>; 2] = [
        (0..reps).map(|_| f0.clone()).collect(),
        (0..reps).map(|_| f1.clone()).collect(),
    ];
    let chunk = 1 << 16;
    let lookups: Vec<u64> = half_members(&keys, chunk * 8, &mut st);
    const NAMES: [&str; 4] = [
        "ribbon called",
        "ribbon inlined",
        "fuse8 inlined",
        "fuse8 of xxh3 inlined",
    ];
    let mut ns: [Vec<f64>; 4] = Default::default();
    // (numerator, denominator) loop pairs, timed in the same chunk.
    const PAIRS: [(usize, usize); 4] = [(1, 3), (1, 2), (0, 2), (0, 1)];
    let mut ratios: [Vec<f64>; 4] = Default::default();
    for round in 0..rounds {
        for c in 0..8 {
            let ks = &lookups[c * chunk..(c + 1) * chunk];
            let i = (round * 8 + c) % reps;
            let mut t = [0f64; 4];
            // Rotate the order: each loop runs in each place equally often.
            for step in 0..4 {
                let w = (step + round + c) % 4;
                let s = Instant::now();
                let h = match w {
                    0 => ribbon_called(black_box(&rs[0][i]), black_box(ks)),
                    1 => ribbon_inlined(black_box(&rs[1][i]), black_box(ks)),
                    2 => fuse_inlined(black_box(&fs[0][i]), black_box(ks), false),
                    _ => fuse_inlined(black_box(&fs[1][i]), black_box(ks), true),
                };
                t[w] = s.elapsed().as_nanos() as f64 / chunk as f64;
                // Half the chunk are members: none may be missed.
                assert!(black_box(h) >= chunk / 2, "{}: a member missed", NAMES[w]);
            }
            for (w, v) in ns.iter_mut().enumerate() {
                v.push(t[w]);
            }
            for (p, &(a, b)) in PAIRS.iter().enumerate() {
                ratios[p].push(t[a] / t[b]);
            }
        }
    }
    println!("n = {n}, {reps} copies per loop, {} chunks:", rounds * 8);
    for (p, &(a, b)) in PAIRS.iter().enumerate() {
        println!(
            "  {} / {}: {}",
            NAMES[a],
            NAMES[b],
            quartiles(&mut ratios[p])
        );
    }
    for (w, v) in ns.iter_mut().enumerate() {
        println!("  ns per lookup, {}: {}", NAMES[w], quartiles(v));
    }
}
