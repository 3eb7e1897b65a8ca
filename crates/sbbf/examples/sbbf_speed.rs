//! Lookup speed of our split-block filter against `sbbf-rs-safe` (AVX2 with run-time
//! dispatch), on identical tables: both are given the same pre-computed xxHash64 values
//! (seed 0, of the 8 little-endian key bytes, as the Parquet specification hashes an INT64)
//! and the same number of 256-bit blocks, so both set the same bits (checked) and answer the
//! same (checked); only the lookup code differs.
//!
//! Passes are interleaved in one process — ours, theirs, ours batched, then the next round,
//! with the order rotated each round — so machine noise hits all three alike; the report is the
//! median and interquartile range over rounds of the per-round ratio.
//!
//! `cargo run --release -p bloomlab-sbbf --example sbbf_speed [rounds]`

use std::hint::black_box;
use std::time::Instant;

use bloomlab_sbbf::{Sbbf, hash_i64};

const BITS_PER_KEY: usize = 10;

fn median(v: &mut [f64]) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn main() {
    let rounds: usize = std::env::args()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(301);
    println!("avx2: {}", std::arch::is_x86_feature_detected!("avx2"));
    for n in [1_000u64, 100_000, 10_000_000] {
        let theirs_probe = sbbf_rs_safe::Filter::new(BITS_PER_KEY, n as usize);
        let blocks = (theirs_probe.as_bytes().len() / 32) as u64;
        drop(theirs_probe);
        let mut ours = Sbbf::with_blocks(blocks).unwrap();
        let mut theirs = sbbf_rs_safe::Filter::new(BITS_PER_KEY, n as usize);
        for i in 0..n as i64 {
            let h = hash_i64(i);
            ours.insert_hash(h);
            theirs.insert_hash(h);
        }
        assert_eq!(ours.raw_bitset(), theirs.as_bytes(), "identical tables");
        // 10^6 lookups, half members, half non-members, in a fixed pseudo-random order.
        let lookups = 1_000_000u64;
        let hashes: Vec<u64> = (0..lookups)
            .map(|j| {
                let i = (j.wrapping_mul(0x9e37_79b9_7f4a_7c15) >> 11) % n;
                if j % 2 == 0 {
                    hash_i64(i as i64)
                } else {
                    hash_i64(-1 - i as i64)
                }
            })
            .collect();
        let mut out = vec![false; hashes.len()];
        let a: usize = hashes
            .iter()
            .filter(|&&h| ours.might_contain_hash(h))
            .count();
        let b: usize = hashes.iter().filter(|&&h| theirs.contains_hash(h)).count();
        assert_eq!(a, b, "same answers");

        let (mut t_ours, mut t_theirs, mut t_batch) = (Vec::new(), Vec::new(), Vec::new());
        // Short passes (10^5 lookups, a different window each round), many rounds: a pass is
        // shorter than a scheduler time slice, so most passes run undisturbed.
        let pass = 100_000usize;
        for round in 0..rounds {
            let at = (round * 7919 * pass) % (hashes.len() - pass);
            let window = &hashes[at..at + pass];
            let mut counts = [0usize; 3];
            for which in 0..3 {
                let which = (which + round) % 3;
                let start = Instant::now();
                counts[which] = match which {
                    0 => {
                        let f = black_box(&ours);
                        window.iter().filter(|&&h| f.might_contain_hash(h)).count()
                    }
                    1 => {
                        let f = black_box(&theirs);
                        window.iter().filter(|&&h| f.contains_hash(h)).count()
                    }
                    _ => {
                        black_box(&ours)
                            .might_contain_hashes(window, &mut out[..pass])
                            .unwrap();
                        out[..pass].iter().filter(|&&o| o).count()
                    }
                };
                let ns = start.elapsed().as_nanos() as f64 / pass as f64;
                [&mut t_ours, &mut t_theirs, &mut t_batch][which].push(ns);
            }
            assert!(counts[0] == counts[1] && counts[1] == counts[2]);
        }
        let mut ratio: Vec<f64> = t_ours.iter().zip(&t_theirs).map(|(o, t)| o / t).collect();
        let mut ratio_b: Vec<f64> = t_batch.iter().zip(&t_theirs).map(|(o, t)| o / t).collect();
        // Interquartile range of the per-round ratios (the extremes are rounds a scheduler
        // interrupted, tens of times slower, and say nothing about the code).
        let range = |v: &[f64]| {
            let mut v = v.to_vec();
            v.sort_by(f64::total_cmp);
            format!("{:.2}–{:.2}", v[v.len() / 4], v[3 * v.len() / 4])
        };
        let (r1, r2) = (range(&ratio), range(&ratio_b));
        println!(
            "n = {n:>10} ({:>9} B): ns/lookup ours {:.2}, sbbf-rs {:.2}, ours batched {:.2} | \
             ours/sbbf-rs median {:.3} (IQR {r1}), batched/sbbf-rs median {:.3} (IQR {r2})",
            ours.size_in_bytes(),
            median(&mut t_ours),
            median(&mut t_theirs),
            median(&mut t_batch),
            median(&mut ratio),
            median(&mut ratio_b),
        );
    }
}
