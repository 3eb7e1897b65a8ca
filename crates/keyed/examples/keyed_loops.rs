//! The keyed classic filter's single-lookup loops side by side out of cache, against fastbloom
//! 0.17's default (SipHash-1-3 under a random key; the same design): the filter's own
//! `might_contain` (past 2 MiB of bits the textbook loop, stopping at the first zero bit),
//! every probe read without a branch, and two probes read together then one branch, then the
//! rest branch-free — each over its own copy of the same bits (so no loop finds lines
//! another fetched), all under [`Sip64Scheme`]. Queries half members; each group of four
//! chunks of 32 768 queries gives one chunk to each loop, in an order that rotates from group
//! to group; a figure is the median of the per-group ratios to fastbloom, with its
//! interquartile range.
//!
//! ```sh
//! cargo run --release -p bloomlab-keyed --example keyed_loops [-- n ...]   # default 10^6, 10^7
//! ```

use std::hint::black_box;
use std::time::Instant;

use bloomlab_classic::BloomFilter;
use bloomlab_core::bits::BitArray;
use bloomlab_core::hash::{HashScheme, KeyHash};
use bloomlab_keyed::Sip64Scheme;

const CHUNK: usize = 32_768;

fn splitmix(x: &mut u64) -> u64 {
    *x = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
    let mut z = *x;
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// Every probe read and ANDed, no branch.
#[inline(always)]
fn branch_free(bits: &BitArray, h: KeyHash, k: u32) -> bool {
    h.positions(k, bits.len())
        .fold(true, |all, i| all & bits.get(i))
}

/// Two probes read together, one branch, then the rest branch-free.
#[inline(always)]
fn two_then_rest(bits: &BitArray, h: KeyHash, k: u32) -> bool {
    let mut p = h.positions(k, bits.len());
    let first = p.next().is_none_or(|i| bits.get(i)) & p.next().is_none_or(|i| bits.get(i));
    first && p.fold(true, |all, i| all & bits.get(i))
}

fn show(v: &mut [f64]) -> String {
    v.sort_by(f64::total_cmp);
    let at = |p: f64| v[((v.len() - 1) as f64 * p).round() as usize];
    format!("{:.3} [IQR {:.3}–{:.3}]", at(0.5), at(0.25), at(0.75))
}

fn main() {
    let ns: Vec<u64> = std::env::args()
        .skip(1)
        .filter_map(|a| a.parse::<f64>().ok().map(|x| x as u64))
        .collect();
    let ns = if ns.is_empty() {
        vec![1_000_000, 10_000_000]
    } else {
        ns
    };
    for n in ns {
        let mut seed = n;
        let keys: Vec<u64> = (0..n).map(|_| splitmix(&mut seed)).collect();
        let scheme = Sip64Scheme::from_secret(*b"keyed loops 2026");
        let mut ours = BloomFilter::with_fpr_and_scheme(n, 0.01, scheme.clone()).expect("size");
        keys.iter().for_each(|key| {
            ours.insert(key);
        });
        let (m, k) = (ours.bit_array().len(), ours.hashes());
        let mut fb = fastbloom::BloomFilter::with_num_bits(m as usize).hashes(k);
        keys.iter().for_each(|key| {
            fb.insert(key);
        });
        // `SHARED=1`: the three loops read the filter's own bits (24 MiB with fastbloom's at
        // 10^7, which the 32 MiB L3 can hold, as after the harness's warm-up pass); else each
        // its own copy.
        let shared = std::env::var("SHARED").is_ok_and(|v| v == "1");
        let copies = (!shared).then(|| (ours.bit_array().clone(), ours.bit_array().clone()));
        let (copy_b, copy_t) = match &copies {
            Some((b, t)) => (b, t),
            None => (ours.bit_array(), ours.bit_array()),
        };
        let queries: Vec<u64> = (0..4_000_000usize)
            .map(|i| {
                let r = splitmix(&mut seed);
                if i % 2 == 0 {
                    keys[(r % n) as usize]
                } else {
                    r
                }
            })
            .collect();
        let hash = |key: u64| scheme.hash(&key.to_le_bytes());
        let time = |q: &[u64], which: usize| -> (f64, u64) {
            let t = Instant::now();
            let hits: u64 = match which {
                0 => q
                    .iter()
                    .map(|x| u64::from(ours.might_contain(&black_box(*x))))
                    .sum(),
                1 => q
                    .iter()
                    .map(|x| u64::from(branch_free(copy_b, hash(black_box(*x)), k)))
                    .sum(),
                2 => q
                    .iter()
                    .map(|x| u64::from(two_then_rest(copy_t, hash(black_box(*x)), k)))
                    .sum(),
                _ => q
                    .iter()
                    .map(|x| u64::from(fb.contains(&black_box(*x))))
                    .sum(),
            };
            (
                t.elapsed().as_nanos() as f64 / q.len() as f64,
                black_box(hits),
            )
        };
        let want = time(&queries[..CHUNK], 0).1;
        assert_eq!(time(&queries[..CHUNK], 1).1, want, "same answers");
        assert_eq!(time(&queries[..CHUNK], 2).1, want, "same answers");
        let mut ratios = vec![Vec::new(); 3];
        let mut abs = vec![Vec::new(); 4];
        for (c, q) in queries.chunks_exact(4 * CHUNK).enumerate() {
            let mut t = [0.0; 4];
            for j in 0..4 {
                let which = (j + c) % 4;
                t[which] = time(&q[j * CHUNK..(j + 1) * CHUNK], which).0;
            }
            for (r, &x) in ratios.iter_mut().zip(&t[..3]) {
                r.push(x / t[3]);
            }
            for (a, &x) in abs.iter_mut().zip(&t) {
                a.push(x);
            }
        }
        for (name, r) in ["this filter", "branch-free", "two-then-rest"]
            .iter()
            .zip(&mut ratios)
        {
            println!(
                "n = {n}: {name:<13} ÷ fastbloom-sip {} ({} groups)",
                show(r),
                r.len()
            );
        }
        for (name, a) in [
            "this filter",
            "branch-free",
            "two-then-rest",
            "fastbloom-sip",
        ]
        .iter()
        .zip(&mut abs)
        {
            println!("n = {n}: {name:<13} ns/lookup {}", show(a));
        }
    }
}
