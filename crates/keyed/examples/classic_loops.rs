//! The classic filter's single-lookup loops side by side out of cache: the filter's own
//! `might_contain` (past 2 MiB of bits the textbook loop: stop at the first zero bit), the
//! loop it replaced (two probes read together, one branch, then the rest branch-free), every
//! probe read without a branch — the last two each over its own copy of the same bits, so
//! that no loop finds lines another fetched — the textbook loop over a table built with one
//! XXH3-64 per key and the stride derived from it by a multiply (another scheme, its own
//! table), and fastbloom 0.17 given foldhash (the same design, its own table of the same
//! size). Queries half members; each group of five chunks of 32 768 queries gives one chunk to
//! each of the five, in an order that rotates from group to group; a figure is the median of
//! the per-group ratios to fastbloom, with its interquartile range.
//!
//! ```sh
//! cargo run --release -p bloomlab-keyed --example classic_loops [-- n ...]   # default 10^7, 3·10^7
//! ```

use std::hint::black_box;
use std::time::Instant;

use bloomlab_classic::BloomFilter;
use bloomlab_core::bits::BitArray;
use bloomlab_core::hash::{HashScheme, KeyHash, Xxh3Scheme};

const CHUNK: usize = 32_768;

fn splitmix(x: &mut u64) -> u64 {
    *x = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
    let mut z = *x;
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// The textbook loop: the probes in order, stopping at the first zero bit.
#[inline(always)]
fn textbook(bits: &BitArray, h: KeyHash, k: u32) -> bool {
    h.positions(k, bits.len()).all(|i| bits.get(i))
}

/// The loop the filter used before past 2 MiB: two probes read together, one branch, then
/// the rest branch-free.
#[inline(always)]
fn two_then_rest(bits: &BitArray, h: KeyHash, k: u32) -> bool {
    let mut p = h.positions(k, bits.len());
    let first = p.next().is_none_or(|i| bits.get(i)) & p.next().is_none_or(|i| bits.get(i));
    first && p.fold(true, |all, i| all & bits.get(i))
}

/// Every probe read and ANDed, no branch.
#[inline(always)]
fn branch_free(bits: &BitArray, h: KeyHash, k: u32) -> bool {
    h.positions(k, bits.len())
        .fold(true, |all, i| all & bits.get(i))
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
        vec![10_000_000, 30_000_000]
    } else {
        ns
    };
    for n in ns {
        let mut seed = n;
        let keys: Vec<u64> = (0..n).map(|_| splitmix(&mut seed)).collect();
        let mut ours = BloomFilter::with_fpr(n, 0.01).expect("size");
        keys.iter().for_each(|key| {
            ours.insert(key);
        });
        let (m, k) = (ours.bit_array().len(), ours.hashes());
        let mut fb = fastbloom::BloomFilter::with_num_bits(m as usize)
            .hasher(foldhash::fast::FixedState::with_seed(7))
            .hashes(k);
        keys.iter().for_each(|key| {
            fb.insert(key);
        });
        // Two more copies of the same bits, one per loop written out here.
        let (copy_t, copy_b) = (ours.bit_array().clone(), ours.bit_array().clone());
        // The same bits' size and k, built with one XXH3-64 per key and the stride derived from
        // it by a multiply (an experiment: another scheme, so its own table).
        let cheap = |key: u64| {
            let x = Xxh3Scheme.hash64(&key.to_le_bytes());
            KeyHash::new(x, x.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1)
        };
        let mut copy_c = BitArray::new(m).expect("size");
        for key in &keys {
            for i in cheap(*key).positions(k, m) {
                copy_c.set(i);
            }
        }
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
        let scheme = Xxh3Scheme;
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
                    .map(|x| u64::from(two_then_rest(&copy_t, hash(black_box(*x)), k)))
                    .sum(),
                2 => q
                    .iter()
                    .map(|x| u64::from(branch_free(&copy_b, hash(black_box(*x)), k)))
                    .sum(),
                3 => q
                    .iter()
                    .map(|x| u64::from(textbook(&copy_c, cheap(black_box(*x)), k)))
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
        let mut ratios = vec![Vec::new(); 4];
        for (c, q) in queries.chunks_exact(5 * CHUNK).enumerate() {
            let mut t = [0.0; 5];
            for j in 0..5 {
                let which = (j + c) % 5;
                t[which] = time(&q[j * CHUNK..(j + 1) * CHUNK], which).0;
            }
            for (r, &x) in ratios.iter_mut().zip(&t[..4]) {
                r.push(x / t[4]);
            }
        }
        for (name, r) in ["this filter", "two-then-rest", "branch-free", "xxh3-64 tb"]
            .iter()
            .zip(&mut ratios)
        {
            println!(
                "n = {n}: {name:<12} ÷ fastbloom {} ({} groups)",
                show(r),
                r.len()
            );
        }
    }
}
