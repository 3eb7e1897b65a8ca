//! The blocked filter's lookup of an owned line against the same lookup of a shared
//! (atomic) line holding the same bits, in one process: `LocalKernel::contains` against
//! `LocalKernel::contains_shared` over two copies of one table, in the filter's lookup loop
//! (XXH3-64 of the key's 8 bytes, the block from the high half, the kernel on the low half).
//! Passes of 16 384 lookups in the order S O O S (each on a chunk of its own); a figure is the
//! median of the per-group ratios owned ÷ shared, with its interquartile range.
//!
//! ```sh
//! cargo run --release -p bloomlab-lab --example blocked_shared_lookups [-- k]
//! ```
//!
//! For `k ≤ 8` both paths run the same inline (`asm!`) kernel, so the ratio reads the
//! measurement's noise (it should be 1). For `9 ≤ k ≤ 16` a shared line is read by the
//! `asm!` two-round kernels (an `asm!` block may read memory other threads write atomically),
//! an owned one by the AVX-512 kernel in `#[target_feature]` intrinsics, and by the AVX2
//! `asm!` kernel: the ratio compares the two AVX-512 kernels, and reads noise for AVX2.
//! 9.92 bits/item (the 1 % target), half members. Needs AVX2.

use bloomlab_conformance::stream::{half_members, splitmix64 as splitmix};
use std::hint::black_box;
use std::time::Instant;

use bloomlab_core::simd::{LocalKernel, SharedLine, zeroed_lines};
use xxhash_rust::xxh3::xxh3_64;

const CHUNK: usize = 16_384;

fn main() {
    let k: u32 = std::env::args()
        .nth(1)
        .and_then(|a| a.parse().ok())
        .unwrap_or(10);
    if LocalKernel::avx2(k).name() != "avx2" {
        println!("this CPU lacks AVX2: nothing to compare");
        return;
    }
    for kernel in [LocalKernel::detect(k), LocalKernel::avx2(k)] {
        for n in [2_000u64, 100_000, 10_000_000] {
            let blocks = ((n as f64 * 9.92) / 512.0).ceil() as usize;
            let mut lines = zeroed_lines(blocks).expect("memory");
            let place = |h: u64| (((h >> 32) * blocks as u64) >> 32) as usize;
            let mut seed = n;
            let keys: Vec<u64> = (0..n).map(|_| splitmix(&mut seed)).collect();
            for key in &keys {
                let h = xxh3_64(&key.to_le_bytes());
                kernel.insert(&mut lines[place(h)].0, h as u32, k);
            }
            let shared = lines.clone().cast::<SharedLine>();
            let queries: Vec<u64> =
                half_members(&keys, (n as usize).clamp(1 << 18, 1 << 22), &mut seed);
            // ns per lookup and the members found, one pass.
            let pass = |q: &[u64], owned: bool| -> (u64, f64) {
                let t = Instant::now();
                let hits: u64 = q
                    .iter()
                    .map(|key| {
                        let h = xxh3_64(&black_box(*key).to_le_bytes());
                        let (b, x) = (place(h), h as u32);
                        u64::from(if owned {
                            kernel.contains(&lines[b].0, x, k)
                        } else {
                            kernel.contains_shared(&shared[b], x, k)
                        })
                    })
                    .sum();
                (
                    black_box(hits),
                    t.elapsed().as_nanos() as f64 / q.len() as f64,
                )
            };
            assert_eq!(
                pass(&queries, true).0,
                pass(&queries, false).0,
                "same answers"
            );
            let mut r = Vec::new();
            for _ in 0..(4_000_000 / queries.len()).max(2) {
                for q in queries.chunks_exact(4 * CHUNK) {
                    let a1 = pass(&q[..CHUNK], false).1;
                    let b1 = pass(&q[CHUNK..2 * CHUNK], true).1;
                    let b2 = pass(&q[2 * CHUNK..3 * CHUNK], true).1;
                    let a2 = pass(&q[3 * CHUNK..], false).1;
                    r.push((b1 + b2) / (a1 + a2));
                }
            }
            r.sort_by(f64::total_cmp);
            let at = |p: f64| r[((r.len() - 1) as f64 * p).round() as usize];
            println!(
                "{} k = {k}, n = {n}: lookup owned ÷ shared {:.3} [IQR {:.3}–{:.3}] ({} groups)",
                kernel.name(),
                at(0.5),
                at(0.25),
                at(0.75),
                r.len()
            );
        }
    }
}
