//! What building only the probe pairs a key needs saves the AVX-512 insert: the kernel
//! [`LocalKernel::detect`] chooses (`⌈k/2⌉` pairs; three for `k ≤ 6`) against the same kernel
//! building every pair of its round ([`LocalKernel::detect_every_pair`]: four, or eight for
//! `9 ≤ k ≤ 16`), with sbbf-rs-safe's insert beside them. Each in the filter's insert loop —
//! XXH3-64 of the key's 8 bytes, the block from the high half, the kernel on the low half —
//! into fresh, pre-faulted tables at 9.92 bits/item (the 1 % target's size), the keys in chunks
//! of 16 384 taken by the three in turn (the first two swapping places every round; a round
//! inserts at least 65 536 keys, so at 2 000 the table takes 33× its design load — the
//! kernels' cost does not depend on how full the line is); a figure
//! is the median of the per-round ratios with its interquartile range. Both kernels build the
//! same bits (checked).
//!
//! ```sh
//! cargo run --release -p bloomlab-lab --example blocked_insert_pairs [-- k]   # default k = 6
//! ```
//!
//! Needs AVX-512F; prints why not otherwise.

use bloomlab_conformance::stream::splitmix64 as splitmix;
use std::hint::black_box;
use std::time::Instant;

use bloomlab_core::simd::{Line, LocalKernel, zeroed_lines};
use xxhash_rust::xxh3::xxh3_64;

const CHUNK: usize = 16_384;

fn show(v: &mut [f64]) -> String {
    v.sort_by(f64::total_cmp);
    let at = |p: f64| v[((v.len() - 1) as f64 * p).round() as usize];
    format!("{:.3} [IQR {:.3}–{:.3}]", at(0.5), at(0.25), at(0.75))
}

fn main() {
    let k: u32 = std::env::args()
        .nth(1)
        .and_then(|a| a.parse().ok())
        .unwrap_or(6);
    let (needed, every) = (LocalKernel::detect(k), LocalKernel::detect_every_pair(k));
    if needed.name() != "avx512" {
        println!("this CPU lacks AVX-512F (or k = {k} is past 16): nothing to compare");
        return;
    }
    for n in [2_000u64, 100_000, 10_000_000] {
        let blocks = ((n as f64 * 9.92) / 512.0).ceil() as usize;
        let place = |h: u64| (((h >> 32) * blocks as u64) >> 32) as usize;
        let mut seed = n;
        // At least four chunks, so that a round of the smallest table has groups to time.
        let keys: Vec<u64> = (0..n.max(4 * CHUNK as u64))
            .map(|_| splitmix(&mut seed))
            .collect();
        let (mut ta, mut tb) = (
            zeroed_lines(blocks).expect("memory"),
            zeroed_lines(blocks).expect("memory"),
        );
        let insert = |kernel: LocalKernel, t: &mut [Line], q: &[u64]| {
            let start = Instant::now();
            let new: u64 = q
                .iter()
                .map(|key| {
                    let h = xxh3_64(&black_box(*key).to_le_bytes());
                    u64::from(kernel.insert(&mut t[place(h)].0, h as u32, k))
                })
                .sum();
            black_box(new);
            start.elapsed().as_nanos() as f64
        };
        let (mut n_e, mut n_s, mut e_s) = (Vec::new(), Vec::new(), Vec::new());
        let rounds = if n > 1_000_000 { 5 } else { 41 };
        for round in 0..rounds {
            // Fresh tables each round (the lines stay mapped: no page faults in the timing).
            for t in [&mut ta, &mut tb] {
                t.iter_mut().for_each(|l| l.0 = [0; 8]);
            }
            let mut sbbf = sbbf_rs_safe::Filter::new(blocks * 512, 1);
            let (mut a, mut b, mut s) = (0.0, 0.0, 0.0);
            for c in keys.chunks(CHUNK) {
                if round % 2 == 0 {
                    a += insert(needed, &mut ta, c);
                    b += insert(every, &mut tb, c);
                } else {
                    b += insert(every, &mut tb, c);
                    a += insert(needed, &mut ta, c);
                }
                let start = Instant::now();
                let new: u64 = c
                    .iter()
                    .map(|key| u64::from(sbbf.insert_hash(xxh3_64(&black_box(*key).to_le_bytes()))))
                    .sum();
                black_box(new);
                s += start.elapsed().as_nanos() as f64;
            }
            n_e.push(a / b);
            n_s.push(a / s);
            e_s.push(b / s);
        }
        assert!(
            ta.iter().zip(tb.iter()).all(|(x, y)| x.0 == y.0),
            "same bits"
        );
        println!(
            "k = {k}, n = {n}: needed pairs ÷ every pair {}; ÷ sbbf-rs: needed {}, every {} ({rounds} rounds)",
            show(&mut n_e),
            show(&mut n_s),
            show(&mut e_s),
        );
    }
}
